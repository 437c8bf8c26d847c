/* Translating Gemma 4's thought channel into the <think> form (channel.h). */
#include "config.h"

#include <string.h>

#include "channel.h"
#include "piece.h"

enum { CH_TEXT, CH_NAME, CH_THOUGHT };
static const char OPEN[] = "<|channel>", CLOSE[] = "<channel|>";
/* a name longer than this without its newline is taken as the channel's
   text: a model that skips the name loses nothing but these bytes */
enum { NAME_MAX = 32 };

bool ember_channel_vocab(const ember_tokenizer *t) { return ember_tok_find(t, OPEN) >= 0 && ember_tok_find(t, CLOSE) >= 0; }

bool ember_channel_marker(const char *text) { return text && (!strcmp(text, OPEN) || !strcmp(text, CLOSE)); }

void ember_channel_init(ember_channel *c) { memset(c, 0, sizeof *c); }

int ember_channel_step(ember_channel *c, const char *ctl, const char *piece, int n, char *out, int cap)
{
    if (ctl) {
        if (!strcmp(ctl, OPEN)) {
            c->state = CH_NAME;
            c->nname = 0;
            if (!c->thinking) {
                c->thinking = true;
                return ember_piece_put(out, cap, "<think>\n", 8);
            }
        } else if (!strcmp(ctl, CLOSE)) {
            c->state = CH_TEXT;
            if (c->thinking) {
                c->thinking = false;
                return ember_piece_put(out, cap, "\n</think>\n\n", 11);
            }
        }
        return ember_piece_put(out, cap, "", 0);
    }
    if (c->state == CH_NAME) {
        const char *nl = memchr(piece, '\n', (size_t)n);
        if (!nl && c->nname + n <= NAME_MAX) {
            c->nname += n;
            return ember_piece_put(out, cap, "", 0);
        }
        c->state = CH_THOUGHT;
        if (nl) return ember_piece_put(out, cap, nl + 1, n - (int)(nl + 1 - piece));
    }
    return ember_piece_put(out, cap, piece, n);
}
