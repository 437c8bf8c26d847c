/* Painting the full-screen UI.  Everything is drawn into windows with
   wnoutrefresh and shown with one doupdate per batch of events, so
   streaming text does not flicker. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "app_impl.h"
#include "markdown.h"
#include "think.h"
#include "wrap.h"

#define MEM_ROWS 5
#define INPUT_MAX_ROWS 8

int draw_utf8(WINDOW *w, const char *s, size_t n, int maxcols)
{
    int used = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = ui_utf8_next(s + i, n - i, &cp);
        i += (size_t)k;
        int cw = ui_cell_width(cp, used);
        if (cp == '\t') {
            if (used + cw > maxcols) break;
            waddnstr(w, "        ", cw);
            used += cw;
            continue;
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) continue;   /* never send controls */
        if (used + cw > maxcols) break;
        wchar_t wc = (wchar_t)cp;
        waddnwstr(w, &wc, 1);
        used += cw;
    }
    return used;
}

/* A draft cell's width at screen column col: the row's text starts after
   the 2-column prompt, where the tab stops count from. */
static int draft_width(wchar_t c, int col) { return ui_cell_width((uint32_t)c, col - 2); }

/* Rows the input needs: the buffer wrapped at cols with the 2-column
   prompt; also where the cursor lands. */
static int input_layout(app *a, int cols, int *cur_row, int *cur_col)
{
    size_t n, cur;
    const wchar_t *b = ui_input_buf(a->in, &n, &cur);
    int row = 0, col = 2;
    *cur_row = 0, *cur_col = 2;
    for (size_t i = 0; i <= n; i++) {
        if (i == cur) *cur_row = row, *cur_col = col;
        if (i == n) break;
        if (b[i] == L'\n') {
            row++, col = 2;
            continue;
        }
        int cw = draft_width(b[i], col);
        if (col + cw > cols) row++, col = 2, cw = draft_width(b[i], col);
        col += cw;
    }
    if (*cur_col >= cols) (*cur_row)++, *cur_col = 2;
    return (*cur_row > row ? *cur_row : row) + 1;
}

void draw_layout(app *a)
{
    getmaxyx(stdscr, a->rows, a->cols);
    int cr, cc;
    int in_rows = input_layout(a, a->cols > 4 ? a->cols : 4, &cr, &cc);
    if (in_rows > INPUT_MAX_ROWS) in_rows = INPUT_MAX_ROWS;
    if (a->searching) in_rows = 1;
    int mem_rows = a->show_mem ? MEM_ROWS : 0;
    int avail = a->rows - 1 - in_rows;
    if (mem_rows > avail - 2) mem_rows = 0;
    int tr_rows = avail - mem_rows;
    if (tr_rows < 1) tr_rows = 1;
    if (a->wt) delwin(a->wt);
    if (a->wm) delwin(a->wm);
    if (a->ws) delwin(a->ws);
    if (a->wi) delwin(a->wi);
    a->wm = NULL;
    int y = 0;
    a->wt = newwin(tr_rows, a->cols, y, 0);
    y += tr_rows;
    if (mem_rows) {
        a->wm = newwin(mem_rows, a->cols, y, 0);
        y += mem_rows;
    }
    a->ws = newwin(1, a->cols, y < a->rows ? y : a->rows - 1, 0);
    y += 1;
    a->wi = newwin(in_rows, a->cols, y < a->rows ? y : a->rows - 1, 0);
    if (!a->wt || !a->ws || !a->wi) return;
    keypad(a->wi, TRUE);
    wtimeout(a->wi, 0);   /* the loop polls; a new window would block */
    clearok(curscr, TRUE);
}

static int entry_attr(app *a, tr_role r)
{
    if (!a->color) return r == TR_USER ? A_BOLD : (r == TR_NOTICE || r == TR_INFO) ? A_DIM : 0;
    switch (r) {
    case TR_USER: return COLOR_PAIR(CP_USER) | A_BOLD;
    case TR_ASSISTANT: return COLOR_PAIR(CP_ASSIST);
    case TR_SYSTEM: return COLOR_PAIR(CP_DIM);
    case TR_NOTICE: return COLOR_PAIR(CP_NOTICE);
    case TR_ERROR: return COLOR_PAIR(CP_ERROR) | A_BOLD;
    case TR_INFO: return 0;
    }
    return 0;
}

/* How each Markdown style looks: a colour pair and attributes with
   colour, attributes alone without (NO_COLOR), where the layout's own
   structure (marks, bars, borders, labels) carries the rest. */
static const struct { short pair; attr_t color, mono; } md_look[MDS_N_STYLES] = {
    [MDS_TEXT] = {0, 0, 0},
    [MDS_CODE] = {CP_MD_CODE, 0, 0},
    [MDS_H1] = {CP_MD_HEAD, A_BOLD | A_UNDERLINE, A_BOLD | A_UNDERLINE},
    [MDS_H2] = {CP_MD_HEAD, A_BOLD, A_BOLD},
    [MDS_H3] = {CP_MD_HEAD, A_BOLD, A_BOLD},
    [MDS_BULLET] = {CP_MD_MARK, A_BOLD, A_BOLD},
    [MDS_QUOTE] = {CP_MD_MARK, 0, 0},
    [MDS_LINK] = {CP_MD_LINK, A_UNDERLINE, A_UNDERLINE},
    [MDS_URL] = {CP_DIM, A_DIM, A_DIM},
    [MDS_BORDER] = {CP_MD_MARK, 0, 0},
    [MDS_BLOCK_LABEL] = {CP_DIM, A_DIM, A_DIM},
    [MDS_CUT] = {CP_MD_CUT, A_BOLD, A_BOLD},
    [MDS_BLOCK] = {CP_MD_BLOCK, 0, 0},
    [MDS_BLOCK_KEYWORD] = {CP_HL_KEYWORD, A_BOLD, A_BOLD},
    [MDS_BLOCK_TYPE] = {CP_HL_TYPE, 0, 0},
    [MDS_BLOCK_STRING] = {CP_HL_STRING, 0, 0},
    [MDS_BLOCK_COMMENT] = {CP_HL_COMMENT, 0, A_DIM},
    [MDS_BLOCK_NUMBER] = {CP_HL_NUMBER, 0, 0},
    [MDS_BLOCK_ADDED] = {CP_HL_ADDED, 0, 0},
    [MDS_BLOCK_REMOVED] = {CP_HL_REMOVED, 0, 0},
    [MDS_BLOCK_META] = {CP_HL_META, A_BOLD, A_BOLD},
};

void draw_init_colors(void)
{
    /* code blocks on a background of their own where the terminal has one to spare */
    short bg = COLORS >= 256 ? 236 : -1;
    static const struct { short pair, fg; bool block; } pairs[] = {
        {CP_MD_CODE, COLOR_YELLOW, false}, {CP_MD_HEAD, COLOR_MAGENTA, false},
        {CP_MD_MARK, COLOR_CYAN, false}, {CP_MD_LINK, COLOR_BLUE, false},
        {CP_MD_CUT, COLOR_RED, true}, {CP_MD_BLOCK, COLOR_WHITE, true},
        {CP_HL_KEYWORD, COLOR_MAGENTA, true}, {CP_HL_TYPE, COLOR_CYAN, true},
        {CP_HL_STRING, COLOR_GREEN, true}, {CP_HL_COMMENT, COLOR_BLUE, true},
        {CP_HL_NUMBER, COLOR_YELLOW, true}, {CP_HL_ADDED, COLOR_GREEN, true},
        {CP_HL_REMOVED, COLOR_RED, true}, {CP_HL_META, COLOR_CYAN, true}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        init_pair(pairs[i].pair, pairs[i].fg, pairs[i].block ? bg : -1);
}

static attr_t span_attr(app *a, const md_span *s, attr_t base)
{
    unsigned st = s->style < MDS_N_STYLES ? s->style : MDS_TEXT;
    attr_t at = a->color ? md_look[st].color : md_look[st].mono;
    if (a->color) at |= md_look[st].pair ? (attr_t)COLOR_PAIR(md_look[st].pair) : base;
    if (s->flags & (MDF_BOLD | MDF_HEAD)) at |= A_BOLD;
#ifdef A_ITALIC
    if (s->flags & MDF_ITALIC) at |= A_ITALIC;
#else
    if (s->flags & MDF_ITALIC) at |= A_UNDERLINE;
#endif
    if (s->flags & (MDF_STRIKE | MDF_QUOTED)) at |= A_DIM;
    return at;
}

/* The reply laid out for this width; laid out again only when its text
   grew (streaming) or the width changed, so finished replies cost
   nothing per frame. */
static md_doc *entry_md(app *a, tr_entry *te, size_t off, int width)
{
    if (te->md && te->md->width == width && te->md_len == te->len) return te->md;
    md_free(te->md);
    md_opts o = {width, a->ascii, !a->color};
    te->md = md_render(te->text + off, te->len - off, &o);
    te->md_len = te->len;
    return te->md;
}

static void draw_md_line(app *a, WINDOW *w, const md_doc *d, int i, int maxcols, attr_t base)
{
    const md_line *l = &d->lines[i];
    /* counted, not read back with getcurx: a span that ends in the last
       column leaves the cursor at the start of the next row, and the
       line's next spans went there, over the line drawn below (a table
       wider than a narrow window) */
    int used = 0;
    for (uint32_t k = 0; k < l->nspan && used < maxcols; k++) {
        const md_span *s = &d->spans[l->span0 + k];
        wattrset(w, span_attr(a, s, base));
        used += draw_utf8(w, d->text + s->off, s->len, maxcols - used);
    }
    wattrset(w, 0);
}

typedef struct { int entry; int line; bool header, md; size_t off, len; } tline;

static void draw_transcript(app *a)
{
    WINDOW *w = a->wt;
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    int text_w = wd - 2 > 1 ? wd - 2 : 1;
    int want = h + a->tr.scroll;
    tline *vl = malloc((size_t)want * sizeof *vl);
    if (!vl) return;
    int nv = 0;                     /* collected bottom-up */
    ui_line tmp[256];
    for (int e = (int)a->tr.n - 1; e >= 0 && nv < want; e--) {
        tr_entry *te = &a->tr.e[e];
        /* a reply's thinking, folded: one line stands for it */
        ui_think th = {false, false, 0};
        if (te->role == TR_ASSISTANT && !a->show_think) ui_think_split(te->text, te->len, &th);
        size_t off = th.has ? th.body : 0;
        md_doc *md = te->role == TR_ASSISTANT && !a->raw ? entry_md(a, te, off, text_w) : NULL;
        int n = md ? md->n : ui_wrap(te->text + off, te->len - off, text_w, NULL, 0);
        ui_line *lines = md || n <= 256 ? tmp : malloc((size_t)n * sizeof *lines);
        if (!lines) break;
        if (!md) ui_wrap(te->text + off, te->len - off, text_w, lines, n);
        bool header = te->role != TR_INFO;
        /* bottom-up: blank separator, [stopped] footer, lines reversed, header */
        if (nv < want) vl[nv++] = (tline){e, -1, false, false, 0, 0};
        if (te->cancelled && nv < want) vl[nv++] = (tline){e, -2, false, false, 0, 0};
        for (int i = n - 1; i >= 0 && nv < want; i--)
            vl[nv++] = md ? (tline){e, i, false, true, 0, 0}
                          : (tline){e, i, false, false, off + lines[i].off, lines[i].len};
        if (th.has && nv < want) vl[nv++] = (tline){e, -3, false, false, 0, 0};
        if (header && nv < want) vl[nv++] = (tline){e, -1, true, false, 0, 0};
        if (lines != tmp) free(lines);
    }
    /* Clamp scrolling at the top of the conversation. */
    if (nv < want && a->tr.scroll > 0) {
        int over = want - nv;
        a->tr.scroll = a->tr.scroll > over ? a->tr.scroll - over : 0;
    }
    int skip = a->tr.scroll;         /* lines hidden below the window */
    int row = h - 1;
    for (int i = skip; i < nv && row >= 0; i++, row--) {
        tline *v = &vl[i];
        tr_entry *te = &a->tr.e[v->entry];
        wmove(w, row, 0);
        int attr = entry_attr(a, te->role);
        if (v->header) {
            wattron(w, attr | A_BOLD);
            waddstr(w, tr_label(te->role));
            if (te->role == TR_ASSISTANT && te->cancelled) waddstr(w, " (stopped)");
            if (te->dropped) waddstr(w, " (out of context)");
            wattroff(w, attr | A_BOLD);
            continue;
        }
        if (v->line == -2) {
            wmove(w, row, 2);
            wattron(w, A_DIM);
            waddstr(w, "[stopped]");
            wattroff(w, A_DIM);
            continue;
        }
        if (v->line == -3) {
            char fold[64];
            ui_think_label(te->think_tokens, a->ascii, fold, sizeof fold);
            wmove(w, row, 2);
            wattron(w, A_DIM);
            draw_utf8(w, fold, strlen(fold), text_w);
            wattroff(w, A_DIM);
            continue;
        }
        if (v->line < 0) continue;
        wmove(w, row, 2);
        if (v->md && te->md && v->line < te->md->n) {
            draw_md_line(a, w, te->md, v->line, text_w, (attr_t)attr);
            continue;
        }
        wattron(w, attr);
        draw_utf8(w, te->text + v->off, v->len, text_w);
        wattroff(w, attr);
    }
    if (a->tr.scroll > 0) {
        char m[64];
        snprintf(m, sizeof m, " -- %d more lines below (PgDn) -- ", a->tr.scroll);
        mvwaddstr(w, h - 1, wd - (int)strlen(m) > 0 ? wd - (int)strlen(m) : 0, m);
    }
    free(vl);
    wnoutrefresh(w);
}

static void draw_status(app *a)
{
    WINDOW *w = a->ws;
    werase(w);
    char buf[1024];
    ui_status s = a->st;
    s.model = a->model;
    s.profile = a->profile;
    s.tmpl = a->tmpl;
    s.demo = a->cfg->demo;
    s.progress = a->flash[0] ? a->flash : a->progress[0] ? a->progress : NULL;
    s.live = a->generating;
    s.have_turn = a->have_last || a->generating;
    ui_status_format(&s, a->cols, a->ascii, buf, sizeof buf);
    int attr = a->color ? COLOR_PAIR(CP_STATUS) : A_REVERSE;
    wbkgdset(w, (chtype)attr | ' ');
    werase(w);
    wattron(w, attr);
    wmove(w, 0, 0);
    draw_utf8(w, buf, strlen(buf), a->cols);
    wattroff(w, attr);
    wnoutrefresh(w);
}

static void draw_input(app *a)
{
    WINDOW *w = a->wi;
    int h, wd;
    getmaxyx(w, h, wd);
    werase(w);
    if (a->searching) {
        int pos = a->search_pos;
        const char *m = a->search[0] ? ui_input_history_search(a->in, a->search, &pos) : NULL;
        wmove(w, 0, 0);
        char head[300];
        snprintf(head, sizeof head, "(search)`%s': ", a->search);
        int used = draw_utf8(w, head, strlen(head), wd);
        if (m) draw_utf8(w, m, strcspn(m, "\n"), wd - used);
        wnoutrefresh(w);
        return;
    }
    int cur_row, cur_col;
    input_layout(a, wd, &cur_row, &cur_col);
    int top = cur_row >= h ? cur_row - h + 1 : 0;
    size_t n, cur;
    const wchar_t *b = ui_input_buf(a->in, &n, &cur);
    int row = 0, col = 2;
    int pattr = a->color ? COLOR_PAIR(CP_USER) | A_BOLD : A_BOLD;
    wattron(w, pattr);
    if (top == 0) mvwaddstr(w, 0, 0, a->generating ? "\xe2\x80\xa6 " : "> ");
    if (a->ascii && top == 0) mvwaddstr(w, 0, 0, a->generating ? ". " : "> ");
    wattroff(w, pattr);
    for (size_t i = 0; i < n; i++) {
        if (b[i] == L'\n') {
            row++, col = 2;
            continue;
        }
        int cw = draft_width(b[i], col);
        if (col + cw > wd) row++, col = 2, cw = draft_width(b[i], col);
        if (b[i] == L'\t') {          /* blank cells: werase cleared them */
            col += cw;
            continue;
        }
        if (row - top >= 0 && row - top < h && cw > 0) {
            wmove(w, row - top, col);
            waddnwstr(w, &b[i], 1);
        } else if (row - top >= 0 && row - top < h && cw == 0 && b[i] >= 0x300) {
            waddnwstr(w, &b[i], 1);    /* combining mark onto the previous cell */
        }
        col += cw;
    }
    if (n == 0 && !a->generating) {
        wattron(w, A_DIM);
        mvwaddstr(w, 0, 2, "type a message; /help for commands, F2 profile, F3 memory, Ctrl-D quit");
        wattroff(w, A_DIM);
    }
    wmove(w, cur_row - top, cur_col < wd ? cur_col : wd - 1);
    wnoutrefresh(w);
}

void draw_all(app *a)
{
    if (!a->wt || !a->ws || !a->wi) return;
    /* The input may have grown or shrunk a row. */
    int cr, cc;
    int need = input_layout(a, a->cols > 4 ? a->cols : 4, &cr, &cc);
    if (need > INPUT_MAX_ROWS) need = INPUT_MAX_ROWS;
    if (a->searching) need = 1;
    if (need != getmaxy(a->wi)) draw_layout(a);
    draw_transcript(a);
    if (a->wm) {
        mem_draw(a, a->wm);
        wnoutrefresh(a->wm);
    }
    draw_status(a);
    draw_input(a);   /* last: it leaves the cursor in the input */
    doupdate();
    a->dirty = false;
}
