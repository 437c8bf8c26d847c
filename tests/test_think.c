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

    char out[64];
    ui_think_label(12, false, out, sizeof out);
    tap_ok(!strcmp(out, "thinking\xe2\x80\xa6 (12 tokens)"), "label: '%s'", out);
    ui_think_label(1, true, out, sizeof out);
    tap_ok(!strcmp(out, "thinking... (1 token)"), "ASCII label, singular: '%s'", out);
    return tap_done();
}
