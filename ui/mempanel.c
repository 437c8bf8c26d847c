/* F3 memory panel: sparklines of RSS, Pss_File and Pss_Anon over the
   session on one shared scale, with the engine's phase marks under them,
   so file-backed memory falling after an eviction is visible. */
#include "config.h"

#include <string.h>

#include "app_impl.h"

void mem_add(app *a, const ember_memstat *m)
{
    if (!m->valid) return;
    int i = (a->mem_head + a->mem_n) % MEM_SAMPLES;
    if (a->mem_n == MEM_SAMPLES) a->mem_head = (a->mem_head + 1) % MEM_SAMPLES;
    else a->mem_n++;
    a->mem[i] = (mem_sample){m->rss_kb, m->pss_file_kb, m->pss_anon_kb, a->pending_mark};
    a->pending_mark = 0;
}

static int64_t field(const mem_sample *s, int k)
{
    return k == 0 ? s->rss_kb : k == 1 ? s->pss_file_kb : s->pss_anon_kb;
}

void mem_draw(app *a, WINDOW *w)
{
    static const char *const bars[] = {" ", "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
                                       "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii_bars[] = " .:-=+*#@";
    static const char *const names[] = {"RSS     ", "Pss_File", "Pss_Anon"};
    static const int pairs[] = {CP_RSS, CP_FILE, CP_ANON};
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    const int label = 21;          /* "Pss_File 1.23 GiB  " */
    int cols = wd - label;
    if (cols < 4 || h < 2) return;
    int n = a->mem_n < cols ? a->mem_n : cols;
    int first = a->mem_n - n;
    int64_t max = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            int64_t v = field(&a->mem[(a->mem_head + first + i) % MEM_SAMPLES], k);
            if (v > max) max = v;
        }
    for (int k = 0; k < 3 && k < h - 1; k++) {
        char num[32];
        int64_t cur = n ? field(&a->mem[(a->mem_head + a->mem_n - 1) % MEM_SAMPLES], k) : -1;
        ui_fmt_kb(cur, num, sizeof num);
        mvwprintw(w, k, 0, "%s %-10s ", names[k], num);
        if (a->color) wattron(w, COLOR_PAIR(pairs[k]));
        for (int i = 0; i < n; i++) {
            int64_t v = field(&a->mem[(a->mem_head + first + i) % MEM_SAMPLES], k);
            int lvl = (int)((v * 8 + max - 1) / max);
            if (lvl < 0) lvl = 0;
            if (lvl > 8) lvl = 8;
            if (a->ascii) waddch(w, (chtype)ascii_bars[lvl]);
            else waddstr(w, bars[lvl]);
        }
        if (a->color) wattroff(w, COLOR_PAIR(pairs[k]));
    }
    if (h >= 4) {
        wattron(w, A_DIM);
        mvwprintw(w, 3, 0, "%-*s", label, "phases");
        for (int i = 0; i < n; i++) {
            char m = a->mem[(a->mem_head + first + i) % MEM_SAMPLES].mark;
            waddch(w, (chtype)(m ? m : ' '));
        }
        wattroff(w, A_DIM);
    }
    if (h >= 5) {
        char top[32], line[256];
        ui_fmt_kb(max, top, sizeof top);
        /* where the packed tiles are counted: tiles mapped from the pack
           cache are file pages (in Pss_File, reclaimable, shared), packed
           ones anonymous memory (in Pss_Anon) */
        const ember_stats *st = &a->st.st;
        const char *tiles = !a->st.have_stats || !st->packed ? ""
                            : st->pack_cache == EMBER_PACK_CACHE_HIT ? "tiles: file-backed (pack cache)   "
                                                                     : "tiles: anonymous   ";
        snprintf(line, sizeof line, "full bar = %s   %sO opened  P packed  E evicted  F prefill  "
                 "R re-evicted  D decode done", top, tiles);
        mvwprintw(w, 4, 0, "%.*s", wd > 1 ? wd - 1 : 0, line);
    }
}
