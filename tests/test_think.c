/* A reply's thinking: where <think> ... </think> ends, streaming prefixes,
   which pieces count as thinking tokens, the folded label. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "think.h"

static ui_think split(const char *s)
{
    ui_think t;
    ui_think_split(s, strlen(s), &t);
    return t;
}

/* Streams reply through the fold (plain mode) in pieces ending at the
   offsets cuts[0] < cuts[1] < ... (the last is the reply's length), the
   first `prompt` bytes as the prompt's own opening; returns what would be
   printed, with "[FOLD n]" where the fold's line is due. */
static char *fold_pieces(const char *reply, const size_t *cuts, int ncuts, size_t prompt)
{
    size_t n = strlen(reply), cap = n + 64, o = 0;
    char *out = malloc(cap);
    ui_think_stream s = {0};
    out[0] = 0;
    for (int k = 0; k < ncuts; k++) {
        size_t from, len = cuts[k];
        if (ui_think_feed(&s, reply, len, len > prompt, &from))
            o += (size_t)snprintf(out + o, cap - o, "[FOLD %d]", s.tokens);
        o += (size_t)snprintf(out + o, cap - o, "%.*s", (int)(len - from), reply + from);
    }
    if (ui_think_end(&s, reply, n)) o += (size_t)snprintf(out + o, cap - o, "[FOLD %d]", s.tokens);
    return out;
}

/* The same, a byte per token. */
static const char *folded(const char *reply, size_t prompt)
{
    static char out[512];
    size_t n = strlen(reply), cuts[256];
    for (size_t i = 0; i < n; i++) cuts[i] = i + 1;
    char *f = fold_pieces(reply, cuts, (int)n, prompt);
    snprintf(out, sizeof out, "%s", f);
    free(f);
    return out;
}

/* Every way of cutting r into three pieces (so each tag is cut at each of
   its points, and one piece may hold both): the answer alone after one
   fold line, which counts the pieces that held thinking.  Returns how
   many cuttings went wrong. */
static int every_split(const char *r, size_t close_end, const char *answer)
{
    size_t n = strlen(r);
    int bad = 0;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j < n; j++) {
            size_t cuts[3] = {i, j, n};
            int nc = 0;
            size_t c2[3];
            for (int k = 0; k < 3; k++)
                if (!nc || cuts[k] > c2[nc - 1]) c2[nc++] = cuts[k];
            /* a piece counts when it ends inside or at the close, or is the one that closed it */
            int want = 0;
            for (int k = 0; k < nc; k++)
                if (k == 0 || c2[k - 1] < close_end) want++;
            char expect[256];
            snprintf(expect, sizeof expect, "[FOLD %d]%s", want, answer);
            char *f = fold_pieces(r, c2, nc, 0);
            if (strcmp(f, expect)) {
                if (bad++ < 3) tap_diag("cut at %zu,%zu: '%s', want '%s'", i, j, f, expect);
            }
            free(f);
        }
    return bad;
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
    ui_think_scan sc = {0};
    bool tag = ui_think_grow(&sc, r, 7), think = ui_think_grow(&sc, r, 9);
    tap_ok(tag && think, "the tag and the thinking count");
    tap_ok(ui_think_grow(&sc, r, close_end), "the piece that closes it counts");
    tap_ok(!ui_think_grow(&sc, r, strlen(r)) && sc.th.has && !sc.th.open && sc.th.body == close_end + 1,
           "the answer does not; the scan ends where ui_think_split does");
    ui_think_scan hs = {0};
    tap_ok(!ui_think_grow(&hs, "Hello", 5), "a reply without thinking never counts");

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

    /* tags cut across tokens at every point */
    const char *cut = "<think>a<b</think>\n\nThe </think> answer.";
    int bad = every_split(cut, strlen("<think>a<b</think>"), "The </think> answer.");
    tap_ok(bad == 0, "<think> and </think> cut at every point into 2 or 3 pieces fold the same (%d wrong)", bad);
    bad = every_split("<think></think>x", strlen("<think></think>"), "x");
    tap_ok(bad == 0, "an empty thinking cut at every point (%d wrong)", bad);

    /* a long thinking: 20000 tokens, each scanned once */
    enum { LONG = 20000 };
    const char *word = "word ", *tail = "</think>\nThe answer.";
    size_t wl = strlen(word), total = 7 + LONG * wl + strlen(tail);
    char *big = malloc(total + 1);
    size_t *cuts = malloc((LONG + 3) * sizeof *cuts);
    int nc = 0;
    memcpy(big, "<think>", 7);
    cuts[nc++] = 7;
    for (int i = 0; i < LONG; i++) {
        memcpy(big + 7 + (size_t)i * wl, word, wl);
        cuts[nc++] = 7 + (size_t)(i + 1) * wl;
    }
    strcpy(big + 7 + LONG * wl, tail);
    cuts[nc++] = 7 + LONG * wl + 8;
    cuts[nc++] = total;
    char *f2 = fold_pieces(big, cuts, nc, 0);
    char want[64];
    snprintf(want, sizeof want, "[FOLD %d]The answer.", LONG + 2);
    tap_ok(!strcmp(f2, want), "20000 tokens of thinking fold to one line and the answer: '%.60s'", f2);
    free(f2);
    free(big);
    free(cuts);

    tap_ok(strstr(ui_think_said(true), "unfolded") && strstr(ui_think_said(false), "folded"), "what /think says");

    char out[64];
    ui_think_label(12, false, out, sizeof out);
    tap_ok(!strcmp(out, "thinking\xe2\x80\xa6 (12 tokens)"), "label: '%s'", out);
    ui_think_label(1, true, out, sizeof out);
    tap_ok(!strcmp(out, "thinking... (1 token)"), "ASCII label, singular: '%s'", out);
    return tap_done();
}
