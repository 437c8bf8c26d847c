/* Status-bar text.  Pure formatting (no curses) so it can be tested to
   the byte at any width. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "statusbar.h"
#include "wrap.h"

void ui_fmt_kb(long long kb, char *out, size_t cap)
{
    if (kb < 0) snprintf(out, cap, "--");
    else if (kb < 1024) snprintf(out, cap, "%lld KiB", kb);
    else if (kb < 100 * 1024) snprintf(out, cap, "%.1f MiB", kb / 1024.0);
    else if (kb < 1024 * 1024) snprintf(out, cap, "%.0f MiB", kb / 1024.0);
    else snprintf(out, cap, "%.2f GiB", kb / (1024.0 * 1024.0));
}

static const char *strategy_name(ember_strategy s)
{
    static const char *const n[] = {"eager", "compressed", "packed"};
    return (unsigned)s < 3 ? n[s] : "?";
}

enum { SEG_PROGRESS, SEG_MODEL, SEG_TMPL, SEG_STRAT, SEG_TPS, SEG_TTFT, SEG_CTX, SEG_RSS, SEG_PSS, SEG_N };

typedef struct {
    char full[256], shrt[128];
    bool use_short, hidden;
} seg;

static int render(seg *sg, const char *sep, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < SEG_N; i++) {
        if (sg[i].hidden) continue;
        const char *t = sg[i].use_short ? sg[i].shrt : sg[i].full;
        if (!*t) continue;
        int k = snprintf(out + n, cap - n, "%s%s", n ? sep : "", t);
        if (k < 0 || (size_t)k >= cap - n) break;
        n += (size_t)k;
    }
    return ui_str_width(out, n);
}

/* The model's name is what tells two open chats apart: on a narrow bar it
   is shortened (cut with an ellipsis), and given up only last. */
enum { MODEL_SHORT_COLS = 24, MODEL_TINY_COLS = 12 };

static void shorten(const char *in, int cols, bool ascii, char *out, size_t cap)
{
    size_t n = strlen(in);
    int used;
    if (ui_str_width(in, n) <= cols) {
        snprintf(out, cap, "%s", in);
        return;
    }
    size_t k = ui_fit(in, n, cols - 1, &used);
    snprintf(out, cap, "%.*s%s", (int)k, in, ascii ? "~" : "\xe2\x80\xa6");
}

int ui_status_format(const ui_status *s, int width, bool ascii, char *out, size_t cap)
{
    if (cap == 0) return 0;
    out[0] = 0;
    if (width <= 0) return 0;
    const char *sep = ascii ? " | " : " \xe2\x94\x82 ";
    const char *dot = ascii ? ", " : " \xc2\xb7 ";
    seg sg[SEG_N];
    memset(sg, 0, sizeof sg);
    const ember_stats *st = &s->st;
    char a[32], b[32];

    if (s->progress && *s->progress) snprintf(sg[SEG_PROGRESS].full, sizeof sg[0].full, "%s", s->progress);
    if (s->model && *s->model)
        snprintf(sg[SEG_MODEL].full, sizeof sg[0].full, "%s%s", s->model,
                 s->demo ? " [DEMO: random weights]" : "");
    else
        snprintf(sg[SEG_MODEL].full, sizeof sg[0].full, "no model");
    if (s->demo) snprintf(sg[SEG_MODEL].shrt, sizeof sg[0].shrt, "DEMO");
    else shorten(sg[SEG_MODEL].full, MODEL_SHORT_COLS, ascii, sg[SEG_MODEL].shrt, sizeof sg[0].shrt);
    if (s->tmpl && *s->tmpl) {
        /* the family, and whether it is the model's own or a stand-in */
        const char *how = strstr(s->tmpl, "(fallback") ? " fallback" : strstr(s->tmpl, "(built-in") ? " built-in" : "";
        snprintf(sg[SEG_TMPL].full, sizeof sg[0].full, "tmpl %.*s%s", (int)strcspn(s->tmpl, " "), s->tmpl, how);
    }

    /* profile + strategy (+ packing state) */
    const char *prof = s->profile && *s->profile ? s->profile : NULL;
    char strat[16] = "", detail[48] = "";
    if (s->have_stats) {
        snprintf(strat, sizeof strat, "%s", strategy_name(st->strategy));
        if (st->strategy == EMBER_STRATEGY_PACKED) {
            int np = __builtin_popcount(st->packed_proj_mask & EMBER_PROJ_SEVEN);
            snprintf(detail, sizeof detail, " %d/7 proj%s%s%s", np,
                     st->packed_proj_mask & EMBER_PROJ_OUTPUT ? " + head" : "", dot,
                     /* tiles mapped from the pack cache: file pages, and the
                        sources were never read (not "evicted") */
                     st->pack_cache == EMBER_PACK_CACHE_HIT ? "tiles file-backed"
                     : st->src_evicted ? "src evicted" : "src resident");
        }
    }
    if (prof && *strat)
        snprintf(sg[SEG_STRAT].full, sizeof sg[0].full, "%.120s: %s%s", prof, strat, detail);
    else if (prof)
        snprintf(sg[SEG_STRAT].full, sizeof sg[0].full, "%s", prof);
    else
        snprintf(sg[SEG_STRAT].full, sizeof sg[0].full, "%s%s", strat, detail);
    snprintf(sg[SEG_STRAT].shrt, sizeof sg[0].shrt, "%.120s", *strat ? strat : (prof ? prof : ""));

    if (s->have_stats && (s->live || s->have_turn) && st->decode_tps > 0)
        snprintf(sg[SEG_TPS].full, sizeof sg[0].full, "%.1f tok/s%s", st->decode_tps,
                 s->live ? "" : " avg");
    else
        snprintf(sg[SEG_TPS].full, sizeof sg[0].full, "-- tok/s");
    if (s->have_stats && s->have_turn)
        snprintf(sg[SEG_TTFT].full, sizeof sg[0].full, "TTFT %.0f ms", st->ttft_ms);
    else
        snprintf(sg[SEG_TTFT].full, sizeof sg[0].full, "TTFT --");
    if (s->have_stats)
        snprintf(sg[SEG_CTX].full, sizeof sg[0].full, "ctx %d/%d", st->n_past, st->n_ctx);
    if (s->have_stats && st->mem.valid) {
        ui_fmt_kb(st->mem.rss_kb, a, sizeof a);
        snprintf(sg[SEG_RSS].full, sizeof sg[0].full, "RSS %s", a);
        ui_fmt_kb(st->mem.pss_kb, a, sizeof a);
        ui_fmt_kb(st->mem.pss_file_kb, b, sizeof b);
        snprintf(sg[SEG_PSS].full, sizeof sg[0].full, "PSS %s (file %s)", a, b);
        snprintf(sg[SEG_PSS].shrt, sizeof sg[0].shrt, "PSS %s", a);
    } else if (s->have_stats) {
        snprintf(sg[SEG_PSS].full, sizeof sg[0].full, "PSS n/a");
    }

    char buf[1024];
    /* Each step gives up one thing, least useful first. */
    int w = render(sg, sep, buf, sizeof buf);
    for (int step = 0; w > width && step < 10; step++) {
        switch (step) {
        case 0: sg[SEG_TMPL].hidden = true; break;   /* /info still says it */
        case 1: /* packing detail */
            if (*detail) {
                if (prof) snprintf(sg[SEG_STRAT].full, sizeof sg[0].full, "%.120s: %s", prof, strat);
                else snprintf(sg[SEG_STRAT].full, sizeof sg[0].full, "%s", strat);
            }
            break;
        case 2: sg[SEG_MODEL].use_short = true; break;
        case 3: if (*sg[SEG_PSS].shrt) sg[SEG_PSS].use_short = true; break;
        case 4: sg[SEG_CTX].hidden = true; break;
        case 5: sg[SEG_TTFT].hidden = true; break;
        case 6: sg[SEG_RSS].hidden = true; break;
        case 7: sg[SEG_STRAT].use_short = true; break;
        case 8:
            if (!s->demo) shorten(sg[SEG_MODEL].full, MODEL_TINY_COLS, ascii, sg[SEG_MODEL].shrt, sizeof sg[0].shrt);
            break;
        case 9: sg[SEG_MODEL].hidden = true; break;
        }
        w = render(sg, sep, buf, sizeof buf);
    }
    int used;
    size_t k = ui_fit(buf, strlen(buf), width, &used);
    if (k + 1 > cap) k = ui_fit(buf, cap - 1 < k ? cap - 1 : k, width, &used);
    memcpy(out, buf, k);
    out[k] = 0;
    return used;
}
