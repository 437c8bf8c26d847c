/* Gemma 4's thought channel (channel.h): a reply streamed token by token
   comes out in the <think> form the chat folds (ui/think.h), the
   channel's name not shown, whatever way the tokens cut the name and its
   newline; a reply without a channel, and the answer after one, pass
   through unchanged. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "channel.h"
#include "tap.h"
#include "think.h"

/* A reply as tokens: the two markers are marker tokens, the rest text
   pieces; returns what the chat shows. */
static void stream(const char *const *toks, int n, char *out, size_t cap)
{
    ember_channel c;
    ember_channel_init(&c);
    out[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        char buf[64];
        int k;
        if (ember_channel_marker(toks[i])) {
            k = ember_channel_step(&c, toks[i], NULL, 0, buf, sizeof buf);
        } else {
            snprintf(buf, sizeof buf, "%s", toks[i]);   /* in place, as the worker passes it */
            k = ember_channel_step(&c, NULL, buf, (int)strlen(buf), buf, sizeof buf);
        }
        if (len + (size_t)k < cap) {
            memcpy(out + len, buf, (size_t)k);
            len += (size_t)k;
            out[len] = '\0';
        }
    }
}

#define N(a) ((int)(sizeof(a) / sizeof(a)[0]))

/* s with its newlines as \n, for a TAP line (a raw newline would start
   a line the harness reads as a result) */
static const char *esc(const char *s)
{
    static char b[1024];
    size_t n = 0;
    for (; *s && n + 3 < sizeof b; s++) {
        if (*s == '\n') {
            b[n++] = '\\';
            b[n++] = 'n';
        } else
            b[n++] = *s;
    }
    b[n] = '\0';
    return b;
}

int main(void)
{
    char out[512];
    const char *a[] = {"<|channel>", "thought", "\n", "Two and ", "two.", "<channel|>", "It is ", "4."};
    stream(a, N(a), out, sizeof out);
    tap_ok(!strcmp(out, "<think>\nTwo and two.\n</think>\n\nIt is 4."), "a thought channel in the <think> form: '%s'",
           esc(out));
    ui_think th;
    ui_think_split(out, strlen(out), &th);
    tap_ok(th.has && !th.open && !strcmp(out + th.body, "It is 4."), "... which the chat folds, the answer after it");

    const char *b[] = {"<|channel>", "thou", "ght\nHm", "m", "<channel|>", "Yes"};
    stream(b, N(b), out, sizeof out);
    tap_ok(!strcmp(out, "<think>\nHmm\n</think>\n\nYes"), "the name cut across pieces, the newline inside one: '%s'",
           esc(out));

    const char *c[] = {"Just ", "an answer", "."};
    stream(c, N(c), out, sizeof out);
    tap_ok(!strcmp(out, "Just an answer."), "a reply without a channel passes unchanged");

    const char *d[] = {"<|channel>", "thought\n", "still thinking"};
    stream(d, N(d), out, sizeof out);
    ui_think_split(out, strlen(out), &th);
    tap_ok(!strcmp(out, "<think>\nstill thinking") && th.has && th.open,
           "a channel not closed yet is thinking that streams (folded, open)");

    /* no newline within 32 bytes: the rest is the channel's text */
    const char *e[] = {"<|channel>", "0123456789abcdefghij", "0123456789abcdefghij", "!", "<channel|>", "ok"};
    stream(e, N(e), out, sizeof out);
    tap_ok(!strcmp(out, "<think>\n0123456789abcdefghij!\n</think>\n\nok"),
           "a name past 32 bytes without its newline: the text after it is shown: '%s'", esc(out));

    const char *f[] = {"<channel|>", "plain", "<|channel>", "thought\n", "x", "<|channel>", "thought\n", "y",
                       "<channel|>", "z"};
    stream(f, N(f), out, sizeof out);
    tap_ok(!strcmp(out, "plain<think>\nxy\n</think>\n\nz"),
           "a stray close shows nothing, a second open inside the thinking opens nothing: '%s'", esc(out));

    tap_ok(ember_channel_marker("<|channel>") && ember_channel_marker("<channel|>") &&
               !ember_channel_marker("<|channel|>") && !ember_channel_marker(NULL),
           "the markers are Gemma 4's two, not harmony's <|channel|>");
    return tap_done();
}
