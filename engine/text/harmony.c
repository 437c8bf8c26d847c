/* Translating a harmony reply into the <think> form (harmony.h). */
#include "config.h"

#include <string.h>

#include "harmony.h"
#include "piece.h"

enum { HM_TEXT, HM_ROLE, HM_CHANNEL };

bool ember_harmony_vocab(const ember_tokenizer *t)
{
    static const char *const need[] = {"<|channel|>", "<|message|>", "<|start|>", "<|return|>"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (ember_tok_find(t, need[i]) < 0) return false;
    return true;
}

bool ember_harmony_marker(const char *text)
{
    static const char *const markers[] = {"<|start|>", "<|end|>", "<|message|>", "<|channel|>",
                                          "<|constrain|>", "<|return|>", "<|call|>"};
    for (size_t i = 0; text && i < sizeof markers / sizeof markers[0]; i++)
        if (!strcmp(text, markers[i])) return true;
    return false;
}

void ember_harmony_init(ember_harmony *h) { memset(h, 0, sizeof *h); }

int ember_harmony_step(ember_harmony *h, const char *ctl, const char *piece, int n, char *out, int cap)
{
    if (!ctl) {
        if (h->state == HM_TEXT) return ember_piece_put(out, cap, piece, n);
        /* a header's words: the role is dropped, the channel name kept to
           decide what its message is */
        for (int i = 0; h->state == HM_CHANNEL && i < n && h->nchan < (int)sizeof h->chan - 1; i++)
            h->chan[h->nchan++] = piece[i];
        return ember_piece_put(out, cap, "", 0);
    }
    if (!strcmp(ctl, "<|start|>")) {
        h->state = HM_ROLE;
    } else if (!strcmp(ctl, "<|channel|>")) {
        h->state = HM_CHANNEL;
        h->nchan = 0;
    } else if (!strcmp(ctl, "<|message|>")) {
        /* a message without a channel, or the final one, is the answer;
           any other channel (analysis, commentary) is the reasoning */
        const bool final = h->nchan == 0 || !strncmp(h->chan, "final", 5);
        h->state = HM_TEXT;
        h->nchan = 0;
        if (final && h->thinking) {
            h->thinking = false;
            return ember_piece_put(out, cap, "\n</think>\n\n", 11);
        }
        if (!final && !h->thinking) {
            h->thinking = true;
            return ember_piece_put(out, cap, "<think>\n", 8);
        }
    }
    /* <|end|>, <|constrain|> and the rest: nothing shown (a constraint's
       words stay in the header) */
    return ember_piece_put(out, cap, "", 0);
}
