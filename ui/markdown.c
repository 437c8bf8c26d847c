/* Markdown layout over md4c's SAX events.  Inline text collects into a
   run (bytes + styled spans) until its block ends, then is wrapped under
   the prefix of the open containers (quote bars, list indents).  Tables
   collect their cells and are laid out when the table closes; code
   blocks collect their bytes and come out one source line per display
   line.  md4c already does what streaming needs: an unclosed fence is a
   code block to the end, unclosed emphasis stays literal text. */
#include "config.h"

#include <md4c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "markdown.h"
#include "wrap.h"

#define MAX_NEST 32          /* containers drawn; deeper ones are parsed but not indented */

enum { C_QUOTE, C_LIST, C_ITEM };

typedef struct container {
    int kind;
    bool ordered;            /* C_LIST */
    unsigned next;           /* C_LIST: the next item's number */
    char mark[16];           /* C_ITEM: "• ", "12. " */
    int mark_w;
    bool mark_pending;       /* C_ITEM: its first line has not been drawn */
} container;

typedef struct cell { size_t t0, t1; int row, col, align; bool head; int width; } cell;

typedef struct run_span { size_t off, len; uint8_t style, flags; } run_span;

typedef struct render {
    md_doc *d;
    md_opts o;
    bool oom;
    container c[MAX_NEST];
    int depth;               /* may exceed MAX_NEST */
    bool pending_blank;
    int text_col;            /* the current line's column where its text starts (after the prefix) */
    /* inline run */
    char *rt;
    size_t rlen, rcap;
    run_span *rs;
    size_t nrs, rscap;
    int bold, italic, strike, link, head;
    size_t link_start;
    char href[1024];
    /* code block */
    bool in_code;
    char *code;
    size_t clen, ccap;
    size_t pad, pad_at;      /* indentation md4c made up (see code_text) */
    const char *src;
    size_t srclen;
    char lang[32];
    /* table */
    bool in_table;
    cell *cells;
    int ncells, cellcap;
    int cols, cur_col;
    bool cur_head;
    int row;                 /* table row being read, from -1 */
} render;

static void *grow(render *r, void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    if (!q) {
        r->oom = true;
        return p;
    }
    *cap = c;
    return q;
}

/* False once memory ran out (the buffer is kept; md_render then fails). */
#define GROW(r, ptr, cap, need) \
    (!(r)->oom && ((ptr) = grow((r), (ptr), &(cap), (need), sizeof *(ptr)), !(r)->oom))

/* ---- output lines ------------------------------------------------------- */

static void line_begin(render *r, int block)
{
    md_doc *d = r->d;
    size_t cap = (size_t)d->cap;
    if (!GROW(r, d->lines, cap, (size_t)d->n + 1)) return;
    d->cap = (int)cap;
    d->lines[d->n++] = (md_line){d->nspans, 0, 0, block};
    r->text_col = 0;
}

static void put_bytes(render *r, const char *s, size_t n, int style, int flags);

/* A tab becomes blanks to its stop, counted from where the line's text
   starts, as ui_wrap laid it out: the rendered text holds no tab, so a
   span drawn on its own cannot put one elsewhere. */
static void put(render *r, const char *s, size_t n, int style, int flags)
{
    const char *tab;
    while (n && (tab = memchr(s, '\t', n))) {
        put_bytes(r, s, (size_t)(tab - s), style, flags);
        int col = r->d->n ? r->d->lines[r->d->n - 1].width - r->text_col : 0;
        put_bytes(r, "    ", (size_t)ui_tab_width(col), style, flags);
        n -= (size_t)(tab - s) + 1;
        s = tab + 1;
    }
    put_bytes(r, s, n, style, flags);
}

static void put_bytes(render *r, const char *s, size_t n, int style, int flags)
{
    md_doc *d = r->d;
    if (n == 0 || d->n == 0 || r->oom) return;
    if (!GROW(r, d->text, d->tcap, d->tlen + n + 1)) return;
    md_line *l = &d->lines[d->n - 1];
    memcpy(d->text + d->tlen, s, n);
    md_span *last = l->nspan ? &d->spans[d->nspans - 1] : NULL;
    if (last && last->style == style && last->flags == flags && last->off + last->len == d->tlen &&
        last->len + n < UINT32_MAX) {
        last->len += (uint32_t)n;
    } else {
        if (!GROW(r, d->spans, d->spcap, d->nspans + 1)) return;
        d->spans[d->nspans++] = (md_span){d->tlen, (uint32_t)n, (uint8_t)style, (uint8_t)flags};
        l->nspan++;
    }
    d->tlen += n;
    l->width += ui_str_width(s, n);
}

static void put_str(render *r, const char *s, int style) { put(r, s, strlen(s), style, 0); }

static void put_repeat(render *r, const char *s, int times, int style)
{
    for (int i = 0; i < times; i++) put_str(r, s, style);
}

/* The containers' prefix for a new line; list marks only on an item's
   first line.  Stops growing at half the width so deep nesting still
   leaves room for the text. */
static void prefix(render *r, bool blank)
{
    int used = 0, lim = r->o.width / 2;
    int depth = r->depth < MAX_NEST ? r->depth : MAX_NEST;
    for (int i = 0; i < depth; i++) {
        container *c = &r->c[i];
        if (c->kind == C_QUOTE && used + 2 <= lim) {
            put_str(r, r->o.ascii ? "| " : "\xe2\x94\x82 ", MDS_QUOTE);
            used += 2;
        } else if (c->kind == C_ITEM && !blank) {
            if (used + c->mark_w > lim) {
                c->mark_pending = false;
                continue;
            }
            if (c->mark_pending) put_str(r, c->mark, MDS_BULLET);
            else put_repeat(r, " ", c->mark_w, MDS_TEXT);
            c->mark_pending = false;
            used += c->mark_w;
        }
    }
}

static int prefix_width(render *r)
{
    int used = 0, lim = r->o.width / 2;
    int depth = r->depth < MAX_NEST ? r->depth : MAX_NEST;
    for (int i = 0; i < depth; i++) {
        int w = r->c[i].kind == C_QUOTE ? 2 : r->c[i].kind == C_ITEM ? r->c[i].mark_w : 0;
        if (used + w <= lim) used += w;
    }
    return used;
}

static void block_start(render *r)
{
    if (r->pending_blank && r->d->n > 0) {
        line_begin(r, -1);
        prefix(r, true);
    }
    r->pending_blank = false;
}

/* ---- inline runs ---------------------------------------------------------- */

static int run_style(render *r)
{
    if (r->head) return r->head == 1 ? MDS_H1 : r->head == 2 ? MDS_H2 : MDS_H3;
    if (r->link) return MDS_LINK;
    return MDS_TEXT;
}

static int run_flags(render *r)
{
    int f = (r->bold ? MDF_BOLD : 0) | (r->italic ? MDF_ITALIC : 0) | (r->strike ? MDF_STRIKE : 0);
    for (int i = 0; i < r->depth && i < MAX_NEST; i++)
        if (r->c[i].kind == C_QUOTE) f |= MDF_QUOTED;
    if (r->cur_head && r->in_table) f |= MDF_HEAD;
    return f;
}

static void run_add(render *r, const char *s, size_t n, int style, int flags)
{
    if (n == 0 || r->oom) return;
    if (!GROW(r, r->rt, r->rcap, r->rlen + n + 1)) return;
    memcpy(r->rt + r->rlen, s, n);
    run_span *last = r->nrs ? &r->rs[r->nrs - 1] : NULL;
    if (last && last->style == style && last->flags == flags && last->off + last->len == r->rlen) {
        last->len += n;
    } else {
        if (!GROW(r, r->rs, r->rscap, r->nrs + 1)) return;
        r->rs[r->nrs++] = (run_span){r->rlen, n, (uint8_t)style, (uint8_t)flags};
    }
    r->rlen += n;
}

/* Puts bytes [a, b) of the run, with their styles, on the current line.
   Calls come in increasing order of a; *cur remembers the first span
   that may still matter, so a long run is not rescanned per line. */
static void put_run_range(render *r, size_t a, size_t b, size_t *cur)
{
    while (*cur < r->nrs && r->rs[*cur].off + r->rs[*cur].len <= a) (*cur)++;
    for (size_t i = *cur; i < r->nrs && r->rs[i].off < b; i++) {
        run_span *s = &r->rs[i];
        size_t x = s->off > a ? s->off : a, y = s->off + s->len < b ? s->off + s->len : b;
        if (x < y) put(r, r->rt + x, y - x, s->style, s->flags);
    }
}

/* Wraps the collected run under the current prefix. */
static void flush_run(render *r)
{
    if (r->in_table || r->rlen == 0) {
        if (!r->in_table) r->rlen = r->nrs = 0;
        return;
    }
    block_start(r);
    int avail = r->o.width - prefix_width(r);
    if (avail < 1) avail = 1;
    int n = ui_wrap(r->rt, r->rlen, avail, NULL, 0);
    ui_line *wl = malloc((size_t)n * sizeof *wl);
    if (!wl) {
        r->oom = true;
        return;
    }
    ui_wrap(r->rt, r->rlen, avail, wl, n);
    size_t cur = 0;
    for (int i = 0; i < n && !r->oom; i++) {
        line_begin(r, -1);
        prefix(r, false);
        r->text_col = r->d->n ? r->d->lines[r->d->n - 1].width : 0;
        put_run_range(r, wl[i].off, wl[i].off + wl[i].len, &cur);
    }
    free(wl);
    r->rlen = r->nrs = 0;
}

static size_t utf8_put(char *b, unsigned long cp)
{
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
    return (size_t)ember_utf8_encode((uint32_t)cp, b);
}

/* "&amp;", "&#955;", "&#x3bb;" as text; unknown names stay literal. */
static size_t entity(const char *s, size_t n, char *out)
{
    static const struct { const char *name, *text; } names[] = {
        {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"},
        {"&nbsp;", " "}, {"&copy;", "\xc2\xa9"}, {"&mdash;", "\xe2\x80\x94"},
        {"&ndash;", "\xe2\x80\x93"}, {"&hellip;", "\xe2\x80\xa6"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && !memcmp(s, names[i].name, n))
            return (size_t)sprintf(out, "%s", names[i].text);
    if (n >= 4 && s[1] == '#' && n < 16) {
        char num[16];
        memcpy(num, s, n);
        num[n - 1] = 0;
        bool hex = num[2] == 'x' || num[2] == 'X';
        return utf8_put(out, strtoul(num + (hex ? 3 : 2), NULL, hex ? 16 : 10));
    }
    if (n > 15) n = 15;
    memcpy(out, s, n);
    return n;
}

/* ---- code blocks ---------------------------------------------------------- */

/* Columns of a code line with its tabs expanded. */
static int code_width(const char *s, size_t n)
{
    int col = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '\t') {
            col += ui_tab_width(col);
            i++;
            continue;
        }
        size_t seg = i;
        while (seg < n && s[seg] != '\t') seg++;
        col += ui_str_width(s + i, seg - i);
        i = seg;
    }
    return col;
}

/* Puts code bytes up to column `limit`, tabs as spaces; false once cut. */
static bool code_put(render *r, const char *p, size_t n, int style, int *col, int limit)
{
    while (n) {
        if (*p == '\t') {
            int sp = ui_tab_width(*col);
            if (*col + sp > limit) return false;
            put_repeat(r, " ", sp, style);
            *col += sp;
            p++, n--;
            continue;
        }
        size_t seg = 0;
        while (seg < n && p[seg] != '\t') seg++;
        int used;
        size_t fit = ui_fit(p, seg, limit - *col, &used);
        put(r, p, fit, style, 0);
        *col += used;
        if (fit < seg) return false;
        p += seg, n -= seg;
    }
    return true;
}

/* The marker where a line or a table cell was cut at the width. */
static void put_cut(render *r) { put_str(r, r->o.ascii ? ">" : "\xe2\x86\x92", MDS_CUT); }

static void code_line(render *r, const hl_lang *lang, hl_state *st, const char *s, size_t n, int block)
{
    hl_token tk[64];
    hl_state st0 = *st;
    int nt = hl_line(lang, st, s, n, tk, 64);
    hl_token *t = tk;
    if (nt > 64) {
        t = malloc((size_t)nt * sizeof *t);
        if (!t) {
            r->oom = true;
            return;
        }
        *st = st0;
        hl_line(lang, st, s, n, t, nt);
    }
    line_begin(r, block);
    prefix(r, false);
    int avail = r->o.width - prefix_width(r);
    /* never wrapped: a line too wide keeps what fits and ends in a marker */
    bool fits = code_width(s, n) <= avail;
    int limit = fits ? avail : avail - 1, col = 0;
    bool whole = true;
    for (int k = 0; k < nt && whole; k++)
        whole = code_put(r, s + t[k].off, t[k].len, MDS_BLOCK + (int)t[k].cls, &col, limit);
    if (!whole) put_cut(r);
    if (t != tk) free(t);
}

static void flush_code(render *r)
{
    md_doc *d = r->d;
    size_t bcap = (size_t)d->bcap;
    if (!GROW(r, d->blocks, bcap, (size_t)d->nblocks + 1)) return;
    d->bcap = (int)bcap;
    int b = d->nblocks++;
    md_block *mb = &d->blocks[b];
    mb->text = malloc(r->clen + 1);
    if (!mb->text) {
        d->nblocks--;
        r->oom = true;
        return;
    }
    if (r->clen) memcpy(mb->text, r->code, r->clen);
    mb->text[r->clen] = 0;
    mb->len = r->clen;
    snprintf(mb->lang, sizeof mb->lang, "%s", r->lang);
    block_start(r);
    char label[80];
    snprintf(label, sizeof label, "[code %d%s%s]", b + 1, r->lang[0] ? ": " : "", r->lang);
    line_begin(r, b);
    prefix(r, false);
    put_str(r, label, MDS_BLOCK_LABEL);
    const hl_lang *lang = hl_find(r->lang, strlen(r->lang));
    hl_state st = {0};
    size_t i = 0;
    while (i < r->clen && !r->oom) {
        const char *nl = memchr(r->code + i, '\n', r->clen - i);
        size_t e = nl ? (size_t)(nl - r->code) : r->clen;
        code_line(r, lang, &st, r->code + i, e - i, b);
        i = e + 1;
    }
    r->clen = 0;
    r->pending_blank = true;
}

/* ---- tables --------------------------------------------------------------- */

/* One border row: left, fill, joint, right pieces in box drawing or ASCII. */
static void table_rule(render *r, const int *w, int cols, const char *const pieces[4])
{
    line_begin(r, -1);
    prefix(r, false);
    put_str(r, pieces[0], MDS_BORDER);
    for (int c = 0; c < cols; c++) {
        put_repeat(r, pieces[1], w[c] + 2, MDS_BORDER);
        put_str(r, c + 1 < cols ? pieces[2] : pieces[3], MDS_BORDER);
    }
}

static void flush_table(render *r, int rows)
{
    int cols = r->cols;
    if (cols <= 0 || rows <= 0) return;
    int *w = calloc((size_t)cols, sizeof *w);
    if (!w) {
        r->oom = true;
        return;
    }
    for (int i = 0; i < r->ncells; i++) {
        cell *c = &r->cells[i];
        if (c->col < cols && c->width > w[c->col]) w[c->col] = c->width;
    }
    for (int c = 0; c < cols; c++)
        if (w[c] < 1) w[c] = 1;
    /* Too wide: cap every column at the largest width that fits (binary
       search; the table's own numbers are unbounded). */
    int avail = r->o.width - prefix_width(r), lo = 1, hi = 1;
    for (int c = 0; c < cols; c++)
        if (w[c] > hi) hi = w[c];
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        long total = 1;
        for (int c = 0; c < cols; c++) total += (w[c] < mid ? w[c] : mid) + 3;
        if (total <= avail) lo = mid;
        else hi = mid - 1;
    }
    for (int c = 0; c < cols; c++)
        if (w[c] > lo) w[c] = lo;
    bool a = r->o.ascii;
    static const char *const top_u[4] = {"\xe2\x94\x8c", "\xe2\x94\x80", "\xe2\x94\xac", "\xe2\x94\x90"};
    static const char *const mid_u[4] = {"\xe2\x94\x9c", "\xe2\x94\x80", "\xe2\x94\xbc", "\xe2\x94\xa4"};
    static const char *const bot_u[4] = {"\xe2\x94\x94", "\xe2\x94\x80", "\xe2\x94\xb4", "\xe2\x94\x98"};
    static const char *const rule_a[4] = {"+", "-", "+", "+"};
    const char *bar = a ? "|" : "\xe2\x94\x82";
    block_start(r);
    table_rule(r, w, cols, a ? rule_a : top_u);
    int k = 0;                       /* cells are in row-major order */
    size_t cur = 0;
    const char *base = r->rt ? r->rt : "";
    for (int row = 0; row < rows && !r->oom; row++) {
        line_begin(r, -1);
        prefix(r, false);
        put_str(r, bar, MDS_BORDER);
        bool head = false;
        for (int col = 0; col < cols; col++) {
            cell *c = NULL;
            if (k < r->ncells && r->cells[k].row == row && r->cells[k].col == col) c = &r->cells[k++];
            size_t t0 = c ? c->t0 : 0, t1 = c ? c->t1 : 0;
            int used = 0;
            size_t fit = ui_fit(base + t0, t1 - t0, w[col], &used);
            /* a cell cut to fit a narrow window ends in the cut marker, as
               a code line does, instead of losing its end unseen */
            bool cut = fit < t1 - t0;
            if (cut) fit = ui_fit(base + t0, t1 - t0, w[col] - 1, &used), used++;
            int pad = w[col] - used, left = 0;
            if (c && c->align == MD_ALIGN_RIGHT) left = pad;
            else if (c && c->align == MD_ALIGN_CENTER) left = pad / 2;
            if (c && c->head) head = true;
            put_str(r, " ", MDS_TEXT);
            put_repeat(r, " ", left, MDS_TEXT);
            if (fit) put_run_range(r, t0, t0 + fit, &cur);
            if (cut) put_cut(r);
            put_repeat(r, " ", pad - left, MDS_TEXT);
            put_str(r, " ", MDS_TEXT);
            put_str(r, bar, MDS_BORDER);
        }
        while (k < r->ncells && r->cells[k].row == row) k++;
        if (head && row + 1 < rows) table_rule(r, w, cols, a ? rule_a : mid_u);
    }
    table_rule(r, w, cols, a ? rule_a : bot_u);
    free(w);
    r->pending_blank = true;
}

/* ---- md4c callbacks ------------------------------------------------------- */

static container *push(render *r, int kind)
{
    r->depth++;
    if (r->depth > MAX_NEST) return NULL;
    container *c = &r->c[r->depth - 1];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    return c;
}

static container *parent_list(render *r)
{
    if (r->depth < 1 || r->depth > MAX_NEST) return NULL;
    container *c = &r->c[r->depth - 1];
    return c->kind == C_LIST ? c : NULL;
}

static int enter_block(MD_BLOCKTYPE t, void *detail, void *ud)
{
    render *r = ud;
    if (t != MD_BLOCK_TD && t != MD_BLOCK_TH && t != MD_BLOCK_TR && t != MD_BLOCK_THEAD &&
        t != MD_BLOCK_TBODY)
        flush_run(r);
    switch (t) {
    case MD_BLOCK_QUOTE:
        block_start(r);          /* the blank before a quote has no bar */
        push(r, C_QUOTE);
        break;
    case MD_BLOCK_UL: case MD_BLOCK_OL: {
        block_start(r);
        container *c = push(r, C_LIST);
        if (c) {
            c->ordered = t == MD_BLOCK_OL;
            c->next = c->ordered ? ((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
        }
        break;
    }
    case MD_BLOCK_LI: {
        container *l = parent_list(r);
        MD_BLOCK_LI_DETAIL *li = detail;
        container *c = push(r, C_ITEM);
        if (!c) break;
        const char *bullet = r->o.ascii ? "* " : "\xe2\x80\xa2 ";
        if (l && l->ordered) snprintf(c->mark, sizeof c->mark, "%u. ", l->next++ % 1000000000u);
        else snprintf(c->mark, sizeof c->mark, "%s", bullet);
        if (li && li->is_task) {
            size_t k = strlen(c->mark);
            snprintf(c->mark + k, sizeof c->mark - k, "[%c] ", li->task_mark == ' ' ? ' ' : 'x');
        }
        c->mark_w = ui_str_width(c->mark, strlen(c->mark));
        c->mark_pending = true;
        break;
    }
    case MD_BLOCK_H: r->head = (int)((MD_BLOCK_H_DETAIL *)detail)->level; {
        char marks[8];
        int lv = r->head < 1 ? 1 : r->head > 6 ? 6 : r->head;
        memset(marks, '#', (size_t)lv);
        marks[lv] = ' ';
        run_add(r, marks, (size_t)lv + 1, run_style(r), MDF_BOLD);
        break;
    }
    case MD_BLOCK_CODE: {
        MD_BLOCK_CODE_DETAIL *cd = detail;
        r->in_code = true;
        r->clen = 0;
        size_t n = cd->lang.size < sizeof r->lang - 1 ? cd->lang.size : sizeof r->lang - 1;
        if (n) memcpy(r->lang, cd->lang.text, n);
        r->lang[n] = 0;
        break;
    }
    case MD_BLOCK_HR: {
        block_start(r);
        line_begin(r, -1);
        prefix(r, false);
        int n = r->o.width - prefix_width(r);
        put_repeat(r, r->o.ascii ? "-" : "\xe2\x94\x80", n < 40 ? n : 40, MDS_BORDER);
        r->pending_blank = true;
        break;
    }
    case MD_BLOCK_TABLE:
        r->in_table = true;
        r->cols = (int)((MD_BLOCK_TABLE_DETAIL *)detail)->col_count;
        r->ncells = 0;
        r->cur_col = 0;
        r->rlen = r->nrs = 0;
        r->row = -1;
        break;
    case MD_BLOCK_TR: r->row++; r->cur_col = 0; break;
    case MD_BLOCK_TH: case MD_BLOCK_TD: {
        size_t cap = (size_t)r->cellcap;
        if (!GROW(r, r->cells, cap, (size_t)r->ncells + 1)) break;
        r->cellcap = (int)cap;
        r->cur_head = t == MD_BLOCK_TH;
        r->cells[r->ncells++] = (cell){r->rlen, r->rlen, r->row, r->cur_col,
                                       (int)((MD_BLOCK_TD_DETAIL *)detail)->align, r->cur_head, 0};
        r->cur_col++;
        break;
    }
    default: break;
    }
    return 0;
}

static int leave_block(MD_BLOCKTYPE t, void *detail, void *ud)
{
    render *r = ud;
    (void)detail;
    switch (t) {
    case MD_BLOCK_TH: case MD_BLOCK_TD:
        if (r->ncells) {
            cell *c = &r->cells[r->ncells - 1];
            c->t1 = r->rlen;
            c->width = c->t1 > c->t0 ? ui_str_width(r->rt + c->t0, c->t1 - c->t0) : 0;
        }
        r->cur_head = false;
        return 0;
    case MD_BLOCK_TABLE:
        flush_table(r, r->row + 1);
        r->in_table = false;
        r->rlen = r->nrs = 0;
        return 0;
    case MD_BLOCK_TR: case MD_BLOCK_THEAD: case MD_BLOCK_TBODY: return 0;
    default: break;
    }
    flush_run(r);
    switch (t) {
    case MD_BLOCK_QUOTE: case MD_BLOCK_UL: case MD_BLOCK_OL: case MD_BLOCK_LI:
        if (r->depth > 0) r->depth--;
        /* a list nested in an item runs on; at the outer level a blank follows */
        if (t == MD_BLOCK_QUOTE || ((t == MD_BLOCK_UL || t == MD_BLOCK_OL) &&
                                    !(r->depth > 0 && r->depth <= MAX_NEST && r->c[r->depth - 1].kind == C_ITEM)))
            r->pending_blank = true;
        break;
    case MD_BLOCK_H: r->head = 0; r->pending_blank = true; break;
    case MD_BLOCK_P: case MD_BLOCK_HTML: r->pending_blank = true; break;
    case MD_BLOCK_CODE:
        flush_code(r);
        r->in_code = false;
        break;
    default: break;
    }
    return 0;
}

static int enter_span(MD_SPANTYPE t, void *detail, void *ud)
{
    render *r = ud;
    switch (t) {
    case MD_SPAN_EM: r->italic++; break;
    case MD_SPAN_STRONG: r->bold++; break;
    case MD_SPAN_DEL: r->strike++; break;
    case MD_SPAN_A: case MD_SPAN_IMG: {
        const MD_ATTRIBUTE *h = t == MD_SPAN_A ? &((MD_SPAN_A_DETAIL *)detail)->href
                                               : &((MD_SPAN_IMG_DETAIL *)detail)->src;
        if (!r->link++) {
            size_t n = h->size < sizeof r->href - 1 ? h->size : sizeof r->href - 1;
            if (n) memcpy(r->href, h->text, n);
            r->href[n] = 0;
            r->link_start = r->rlen;
        }
        break;
    }
    case MD_SPAN_CODE:
        if (r->o.plain) run_add(r, "`", 1, MDS_CODE, run_flags(r));
        break;
    default: break;
    }
    return 0;
}

static int leave_span(MD_SPANTYPE t, void *detail, void *ud)
{
    render *r = ud;
    (void)detail;
    switch (t) {
    case MD_SPAN_EM: r->italic--; break;
    case MD_SPAN_STRONG: r->bold--; break;
    case MD_SPAN_DEL: r->strike--; break;
    case MD_SPAN_A: case MD_SPAN_IMG:
        if (--r->link == 0) {
            size_t hn = strlen(r->href), tn = r->rlen - r->link_start;
            /* an autolink's text is its address: say it once */
            bool same = hn == tn && tn && !memcmp(r->rt + r->link_start, r->href, hn);
            bool mail = tn + 7 == hn && !strncmp(r->href, "mailto:", 7);
            bool www = tn + 7 == hn && !strncmp(r->href, "http://", 7) &&
                       !memcmp(r->rt + r->link_start, r->href + 7, tn);   /* www.x gets http:// */
            if (hn && !same && !mail && !www) {
                run_add(r, " (", 2, MDS_URL, run_flags(r));
                run_add(r, r->href, hn, MDS_URL, run_flags(r));
                run_add(r, ")", 1, MDS_URL, run_flags(r));
            }
        }
        break;
    case MD_SPAN_CODE:
        if (r->o.plain) run_add(r, "`", 1, MDS_CODE, run_flags(r));
        break;
    default: break;
    }
    return 0;
}

static void code_add(render *r, const char *s, size_t n)
{
    if (n && GROW(r, r->code, r->ccap, r->clen + n + 1)) {
        memcpy(r->code + r->clen, s, n);
        r->clen += n;
    }
}

/* md4c hands a code line's indentation over as spaces from a string of
   its own (tabs expanded at CommonMark's stop of 4), then the rest of the
   line from the source.  A copied block must be the bytes the model
   wrote, so the indentation is taken back from the source: the
   whitespace just before the line's text whose columns add up to the
   spaces given.  When no such split exists (a tab half eaten by a
   container's mark) the spaces stay. */
static void code_text(render *r, const char *s, size_t n)
{
    uintptr_t a = (uintptr_t)s, lo = (uintptr_t)r->src, hi = lo + r->srclen;
    bool from_src = a >= lo && a + n <= hi && lo != 0;
    if (!from_src && strspn(s, " ") >= n) {
        if (!r->pad) r->pad_at = r->clen;
        r->pad += n;
        code_add(r, s, n);
        return;
    }
    if (from_src && r->pad) {
        const char *p = s, *ls = s, *ws = s;
        while (ls > r->src && ls[-1] != '\n') ls--;
        while (ws > ls && (ws[-1] == ' ' || ws[-1] == '\t')) ws--;
        size_t col = 0;
        for (const char *q = ls; q < ws; q++) col = *q == '\t' ? col + 4 - col % 4 : col + 1;
        size_t cp = col;                       /* column of p */
        for (const char *q = ws; q < p; q++) cp = *q == '\t' ? cp + 4 - cp % 4 : cp + 1;
        for (const char *q = ws; q < p; q++) {
            if (cp - col == r->pad) {
                r->clen = r->pad_at;
                code_add(r, q, (size_t)(p - q));
                break;
            }
            col = *q == '\t' ? col + 4 - col % 4 : col + 1;
        }
    }
    r->pad = 0;
    code_add(r, s, n);
}

static int text(MD_TEXTTYPE t, const MD_CHAR *s, MD_SIZE n, void *ud)
{
    render *r = ud;
    if (r->in_code) {
        code_text(r, s, n);
        return 0;
    }
    int st = run_style(r), fl = run_flags(r);
    switch (t) {
    case MD_TEXT_NULLCHAR: run_add(r, "\xef\xbf\xbd", 3, st, fl); break;
    case MD_TEXT_BR: run_add(r, r->in_table ? " " : "\n", 1, st, fl); break;
    case MD_TEXT_SOFTBR: run_add(r, " ", 1, st, fl); break;
    case MD_TEXT_ENTITY: {
        char b[16];
        run_add(r, b, entity(s, n, b), st, fl);
        break;
    }
    case MD_TEXT_CODE: run_add(r, s, n, MDS_CODE, fl); break;
    default: run_add(r, s, n, st, fl); break;
    }
    return 0;
}

md_doc *md_render(const char *s, size_t n, const md_opts *o)
{
    md_doc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    /* md4c 0.4.8 can look at the byte after the end (a link cut off as
       "[l](u" with a ')' right after the given size gave a text callback
       of size -1); a copy ending in NULs keeps it within what we own. */
    char *copy = n < SIZE_MAX - 8 ? malloc(n + 8) : NULL;
    if (!copy) {
        free(d);
        return NULL;
    }
    if (n) memcpy(copy, s, n);
    memset(copy + n, 0, 8);
    render r = {.d = d, .o = *o, .src = copy, .srclen = n};
    if (r.o.width < 1) r.o.width = 1;
    d->width = r.o.width;
    MD_PARSER p = {0};
    p.flags = MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | MD_FLAG_TASKLISTS | MD_FLAG_NOHTML |
              MD_FLAG_PERMISSIVEURLAUTOLINKS | MD_FLAG_PERMISSIVEWWWAUTOLINKS;
    p.enter_block = enter_block;
    p.leave_block = leave_block;
    p.enter_span = enter_span;
    p.leave_span = leave_span;
    p.text = text;
    int rc = n > UINT32_MAX ? -1 : md_parse(copy, (MD_SIZE)n, &p, &r);
    free(copy);
    free(r.rt);
    free(r.rs);
    free(r.code);
    free(r.cells);
    if (rc != 0 || r.oom) {
        md_free(d);
        return NULL;
    }
    return d;
}

void md_free(md_doc *d)
{
    if (!d) return;
    for (int i = 0; i < d->nblocks; i++) free(d->blocks[i].text);
    free(d->blocks);
    free(d->text);
    free(d->spans);
    free(d->lines);
    free(d);
}

int md_code_blocks(const char *s, size_t n, md_block **out)
{
    md_opts o = {80, true, false};     /* numbering does not depend on the layout */
    md_doc *d = md_render(s, n, &o);
    *out = NULL;
    if (!d) return -1;
    int k = d->nblocks;
    *out = d->blocks;
    d->blocks = NULL;
    d->nblocks = 0;
    md_free(d);
    return k;
}

void md_blocks_free(md_block *b, int n)
{
    for (int i = 0; i < n; i++) free(b[i].text);
    free(b);
}

size_t md_line_text(const md_doc *d, int i, char *buf, size_t cap)
{
    size_t k = 0;
    if (cap == 0) return 0;
    if (i >= 0 && i < d->n) {
        const md_line *l = &d->lines[i];
        for (uint32_t j = 0; j < l->nspan; j++) {
            const md_span *s = &d->spans[l->span0 + j];
            size_t m = s->len < cap - 1 - k ? s->len : cap - 1 - k;
            memcpy(buf + k, d->text + s->off, m);
            k += m;
        }
    }
    buf[k] = 0;
    return k;
}
