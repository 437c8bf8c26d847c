/* Painting the full-screen UI.  Everything is drawn into windows with
   wnoutrefresh and shown with one doupdate per batch of events, so
   streaming text does not flicker. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "app_impl.h"
#include "wrap.h"

#define MEM_ROWS 5
#define INPUT_MAX_ROWS 8

void draw_utf8(WINDOW *w, const char *s, size_t n, int maxcols)
{
    int used = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = ui_utf8_next(s + i, n - i, &cp);
        i += (size_t)k;
        int cw = ui_cp_width(cp);
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) continue;   /* never send controls */
        if (used + cw > maxcols) break;
        wchar_t wc = (wchar_t)cp;
        waddnwstr(w, &wc, 1);
        used += cw;
    }
}

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
        int cw = ui_cp_width((uint32_t)b[i]);
        if (col + cw > cols) row++, col = 2;
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

typedef struct { int entry; int line; bool header; size_t off, len; } tline;

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
    int total_lines = 0;
    for (int e = (int)a->tr.n - 1; e >= 0 && nv < want; e--) {
        tr_entry *te = &a->tr.e[e];
        int n = ui_wrap(te->text, te->len, text_w, NULL, 0);
        ui_line *lines = n <= 256 ? tmp : malloc((size_t)n * sizeof *lines);
        if (!lines) break;
        ui_wrap(te->text, te->len, text_w, lines, n);
        bool header = te->role != TR_INFO;
        /* bottom-up: blank separator, [stopped] footer, lines reversed, header */
        if (nv < want) vl[nv++] = (tline){e, -1, false, 0, 0};
        if (te->cancelled && nv < want) vl[nv++] = (tline){e, -2, false, 0, 0};
        for (int i = n - 1; i >= 0 && nv < want; i--)
            vl[nv++] = (tline){e, i, false, lines[i].off, lines[i].len};
        if (header && nv < want) vl[nv++] = (tline){e, -1, true, 0, 0};
        total_lines += n + 1 + header + te->cancelled;
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
        if (v->line < 0) continue;
        wmove(w, row, 2);
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
    (void)total_lines;
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
        draw_utf8(w, head, strlen(head), wd);
        if (m) draw_utf8(w, m, strcspn(m, "\n"), wd - getcurx(w));
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
        int cw = ui_cp_width((uint32_t)b[i]);
        if (col + cw > wd) row++, col = 2;
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
