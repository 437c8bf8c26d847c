/* The conversation's last screenful, printed after leaving the alternate
   screen (keepscreen.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "keepscreen.h"
#include "markdown.h"
#include "wrap.h"

typedef struct {
    char **v;
    size_t n, cap;
} lines;

/* Keeps a copy of s (n bytes) with every control character (C0, DEL,
   C1) dropped and stray bytes shown as U+FFFD: a reply's ESC must not
   reach the shell's terminal, nor a lone 0x9B (CSI) one that reads it so.
   A tab becomes the blanks to its stop, as on screen (ui_tab_width): the
   shell's terminal would put its own stops elsewhere. */
static int push(lines *l, const char *prefix, const char *s, size_t n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    size_t pl = n ? strlen(prefix) : 0;   /* an empty line stays empty: no trailing blanks */
    char *d = malloc(pl + 4 * n + 1);   /* a byte becomes at most 4: U+FFFD, or a tab's blanks */
    if (!d) return -1;
    memcpy(d, prefix, pl);
    size_t k = pl;
    int col = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int u = ui_utf8_next(s + i, n - i, &cp);
        if (u < 1) u = 1;
        int w = ui_cell_width(cp, col);
        col += w;
        if (cp == '\t') {
            memset(d + k, ' ', (size_t)w), k += (size_t)w;
            i += (size_t)u;
            continue;
        }
        bool ctl = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
        bool bad = cp == 0xFFFD && (u != 3 || memcmp(s + i, "\xEF\xBF\xBD", 3));
        if (bad) memcpy(d + k, "\xEF\xBF\xBD", 3), k += 3;
        else if (!ctl) memcpy(d + k, s + i, (size_t)u), k += (size_t)u;
        i += (size_t)u;
    }
    d[k] = 0;
    l->v[l->n++] = d;
    return 0;
}

static int entry_lines(const tr_entry *e, int width, bool raw, bool ascii, lines *l)
{
    if (e->role != TR_INFO) {
        char head[96];
        snprintf(head, sizeof head, "%s%s%s", tr_label(e->role),
                 e->role == TR_ASSISTANT && e->cancelled ? " (stopped)" : "",
                 e->dropped ? " (out of context)" : "");
        if (push(l, "", head, strlen(head)) < 0) return -1;
    }
    if (e->role == TR_ASSISTANT && !raw) {
        md_opts o = {width, ascii, true};
        md_doc *d = md_render(e->text, e->len, &o);
        if (!d) return -1;
        char buf[4096];
        for (int i = 0; i < d->n; i++) {
            size_t n = md_line_text(d, i, buf, sizeof buf);
            if (push(l, "  ", buf, n) < 0) {
                md_free(d);
                return -1;
            }
        }
        md_free(d);
    } else {
        int n = ui_wrap(e->text, e->len, width, NULL, 0);
        ui_line *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
        if (!w) return -1;
        ui_wrap(e->text, e->len, width, w, n);
        for (int i = 0; i < n; i++)
            if (push(l, "  ", e->text + w[i].off, w[i].len) < 0) {
                free(w);
                return -1;
            }
        free(w);
    }
    if (e->cancelled && push(l, "  ", "[stopped]", 9) < 0) return -1;
    return push(l, "", "", 0);
}

int ui_keep_screen(const transcript *t, int rows, int cols, bool raw, bool ascii, FILE *out)
{
    if (rows < 1 || t->n == 0) return 0;
    int width = cols - 2 > 1 ? cols - 2 : 1;
    lines l = {0};
    int rc = 0;
    /* from the newest entry back, only as far as a screenful reaches */
    size_t first = t->n;
    size_t have = 0;
    while (first > 0 && have < (size_t)rows) {
        first--;
        lines one = {0};
        if (entry_lines(&t->e[first], width, raw, ascii, &one) < 0) rc = -1;
        have += one.n;
        for (size_t i = 0; i < one.n; i++) free(one.v[i]);
        free(one.v);
        if (rc) return -1;
    }
    for (size_t i = first; i < t->n && rc == 0; i++) rc = entry_lines(&t->e[i], width, raw, ascii, &l);
    /* the separator after the last entry is no line of the screen */
    size_t n = l.n && l.v[l.n - 1][0] == 0 ? l.n - 1 : l.n;
    size_t from = n > (size_t)rows ? n - (size_t)rows : 0;
    for (size_t i = from; rc == 0 && i < n; i++) fprintf(out, "%s\n", l.v[i]);
    for (size_t i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    return rc;
}
