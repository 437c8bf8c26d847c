/* A reply's thinking: where <think> ... </think> ends, streaming prefixes,
   which pieces count as thinking tokens, the folded label. */
#include "config.h"

#include <string.h>

#include "tap.h"
#include "think.h"

static ui_think split(const char *s)
{
    ui_think t;
    ui_think_split(s, strlen(s), &t);
    return t;
}

/* Streams reply a byte per token through the fold (plain mode), the
   first `prompt` bytes as the prompt's own opening; returns what would be
   printed, with "[FOLD n]" where the fold's line is due. */
static const char *folded(const char *reply, size_t prompt)
{
    static char out[512];
    ui_think_stream s = {0, 0, false};
    size_t o = 0, n = strlen(reply);
    out[0] = 0;
    for (size_t len = 1; len <= n; len++) {
        size_t from;
        if (ui_think_feed(&s, reply, len - 1, len, len > prompt, &from))
            o += (size_t)snprintf(out + o, sizeof out - o, "[FOLD %d]", s.tokens);
        o += (size_t)snprintf(out + o, sizeof out - o, "%.*s", (int)(len - from), reply + from);
    }
    if (ui_think_end(&s, reply, n)) o += (size_t)snprintf(out + o, sizeof out - o, "[FOLD %d]", s.tokens);
    return out;
}

int main(void)
{
    ui_think t = split("<think>\nwhy\n</think>\n\nThe answer.");
    tap_ok(t.has && !t.open && t.body == strlen("<think>\nwhy\n</think>\n\n"), "closed: the answer starts after the blank lines");
    t = split("  \n<think>still going");
    tap_ok(t.has && t.open && t.body == strlen("  \n<think>still going"), "open: no answer yet");
    t = split("<thi");
    tap_ok(t.has && t.open, "a prefix of the tag while streaming is folded already");
    t = split("<the answer>");
    tap_ok(!t.has && t.body == 0, "another tag is no thinking");
    t = split("The answer <think>x</think>");
    tap_ok(!t.has, "<think> later in the reply is text");
    t = split("");
    tap_ok(!t.has, "empty reply: nothing");
    t = split("<think></think>");
    tap_ok(t.has && !t.open && t.body == 15, "empty thinking");

    const char *r = "<think>ab</think>\nok";
    size_t close_end = strlen("<think>ab</think>");
    tap_ok(ui_think_counts(r, 0, 7) && ui_think_counts(r, 7, 9), "the tag and the thinking count");
    tap_ok(ui_think_counts(r, 9, close_end), "the piece that closes it counts");
    tap_ok(!ui_think_counts(r, close_end, strlen(r)), "the answer does not");
    tap_ok(!ui_think_counts("Hello", 0, 5), "a reply without thinking never counts");

    const char *f = folded("<think>ab</think>\n\nThe answer.", 0);
    tap_ok(!strcmp(f, "[FOLD 17]The answer."), "folded stream: one fold line (tags counted), then the answer: '%s'", f);
    f = folded("Hello <b>", 0);
    tap_ok(!strcmp(f, "Hello <b>"), "a reply without thinking streams as it came: '%s'", f);
    f = folded("<thx>y", 0);
    tap_ok(!strcmp(f, "<thx>y"), "a tag that only began like <think> is printed once it is not: '%s'", f);
    f = folded("<think>\nstill", 8);
    tap_ok(!strcmp(f, "[FOLD 5]"), "a reply that ends thinking: the fold line at its end, the prompt's opening not counted: '%s'", f);
    f = folded("<think>x</think>ok <think>y</think>", 0);
    tap_ok(!strcmp(f, "[FOLD 16]ok <think>y</think>"), "a later <think> is the answer's text: '%s'", f);
    tap_ok(strstr(ui_think_said(true), "unfolded") && strstr(ui_think_said(false), "folded"), "what /think says");

    char out[64];
    ui_think_label(12, false, out, sizeof out);
    tap_ok(!strcmp(out, "thinking\xe2\x80\xa6 (12 tokens)"), "label: '%s'", out);
    ui_think_label(1, true, out, sizeof out);
    tap_ok(!strcmp(out, "thinking... (1 token)"), "ASCII label, singular: '%s'", out);
    return tap_done();
}
