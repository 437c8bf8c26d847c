/* The full-screen chat's keys: the key table is keys.c's; these are its
   actions, Esc sequences and bracketed paste, the history search and
   Tab completion. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "app_impl.h"
#include "keys.h"
#include "slash.h"
#include "terminal.h"

static void cancel_generation(app *a)
{
    if (!a->generating) return;
    ember_worker_cancel(a->w);
    app_flash(a, "stopping...");
}

/* Reads a key with a short wait (escape sequences). */
static int key_soon(app *a, wint_t *ch, int ms)
{
    wtimeout(a->wi, ms);
    int r = wget_wch(a->wi, ch);
    wtimeout(a->wi, 0);
    return r;
}

static void paste_mode(app *a)
{
    /* Bracketed paste: everything up to ESC [ 2 0 1 ~ is text, newlines kept. */
    wchar_t buf[4096];
    size_t n = 0;
    const wchar_t *end = L"\x1b[201~";
    size_t matched = 0;
    bool after_cr = false;              /* CRLF is one line end, not two */
    for (int guard = 0; guard < 1000000; guard++) {
        wint_t ch;
        int r = key_soon(a, &ch, 500);
        if (r == ERR) break;
        if (r == KEY_CODE_YES) continue;
        if ((wchar_t)ch == end[matched]) {
            if (++matched == 6) break;
            continue;
        }
        for (size_t i = 0; i < matched && n + 1 < 4096; i++) buf[n++] = end[i];
        matched = 0;
        bool lf_of_crlf = after_cr && ch == L'\n';
        after_cr = ch == L'\r';
        if (lf_of_crlf) continue;
        if (ch == L'\r') ch = L'\n';
        /* every byte of the text is kept (tabs matter in Makefiles, TSV, Go);
           other controls would reach the model as noise or the screen as escapes */
        if ((ch < 0x20 && ch != L'\n' && ch != L'\t') || ch == 0x7F) continue;
        buf[n++] = (wchar_t)ch;
        if (n + 8 >= 4096) {
            buf[n] = 0;
            ui_input_insert(a->in, buf);
            n = 0;
        }
    }
    buf[n] = 0;
    if (n) ui_input_insert(a->in, buf);
}

static void on_escape(app *a)
{
    wint_t ch;
    int r = key_soon(a, &ch, 30);
    if (r == ERR) {                      /* a lone Esc */
        if (a->searching) a->searching = false;
        else if (a->fetching) app_cancel_fetch(a);
        else cancel_generation(a);
        return;
    }
    if (r == OK && (ch == L'\r' || ch == L'\n')) {   /* Alt-Enter */
        ui_input_insert(a->in, L"\n");
        return;
    }
    if (r == OK && ch == L'[') {
        wchar_t seq[8];
        int n = 0;
        while (n < 5) {
            wint_t c2;
            if (key_soon(a, &c2, 30) != OK) break;
            seq[n++] = (wchar_t)c2;
            if (c2 == L'~' || (c2 >= L'A' && c2 <= L'Z') || (c2 >= L'a' && c2 <= L'z')) break;
        }
        if (n == 4 && !wcsncmp(seq, L"200~", 4)) {
            paste_mode(a);
            return;
        }
        return;                          /* an unknown sequence: ignore it */
    }
    if (r == OK) {                       /* Alt-key: a libedit meta command */
        wchar_t k[2] = {0x1b, (wchar_t)ch};
        ui_input_feed(a->in, k, 2);
    }
}

static void search_key(app *a, int r, wint_t ch)
{
    size_t n = strlen(a->search);
    if (r == OK && ch == 0x12) {            /* Ctrl-R again: older match */
        int pos = a->search_pos;
        if (ui_input_history_search(a->in, a->search, &pos)) {
            int p2 = pos;
            if (ui_input_history_search(a->in, a->search, &p2)) a->search_pos = pos;
        }
        return;
    }
    if (r == OK && (ch == L'\r' || ch == L'\n')) {
        int pos = a->search_pos;
        const char *m = ui_input_history_search(a->in, a->search, &pos);
        if (m) ui_input_set_text(a->in, m);
        a->searching = false;
        return;
    }
    if ((r == KEY_CODE_YES && ch == KEY_BACKSPACE) || (r == OK && (ch == 0x7F || ch == 8))) {
        while (n > 0 && ((unsigned char)a->search[n - 1] & 0xC0) == 0x80) n--;
        if (n > 0) n--;
        a->search[n] = 0;
        a->search_pos = -1;
        return;
    }
    if (r == OK && (ch == 7 || ch == 3)) {   /* Ctrl-G / Ctrl-C */
        a->searching = false;
        return;
    }
    if (r == OK && ch >= 0x20 && ch != 0x7F) {
        char mb[8];
        mbstate_t st;
        memset(&st, 0, sizeof st);
        size_t k = wcrtomb(mb, (wchar_t)ch, &st);
        if (k != (size_t)-1 && n + k + 1 < sizeof a->search) {
            memcpy(a->search + n, mb, k);
            a->search[n + k] = 0;
        }
        a->search_pos = -1;
        return;
    }
    /* Anything else ends the search, keeping the match. */
    int pos = a->search_pos;
    const char *m = a->search[0] ? ui_input_history_search(a->in, a->search, &pos) : NULL;
    if (m) ui_input_set_text(a->in, m);
    a->searching = false;
}

static void complete(app *a)
{
    char *t = ui_input_text(a->in);
    if (!t) return;
    char out[1024], list[1024];
    const char **ids = NULL;
    char **models = NULL;
    int nm = !strncmp(t, "/model ", 7) && a->cfg->model_names ? a->cfg->model_names(a->cfg->ctx, &models) : 0;
    if (nm > 0) ids = (const char **)models;
    int nid = nm > 0 ? nm : !strncmp(t, "/load ", 6) ? chats_ids(&ids) : 0;
    int n = nid ? ui_slash_complete(t, ids, nid, out, sizeof out, list, sizeof list)
                : ui_slash_complete(t, (const char *const *)a->cfg->profiles, a->cfg->n_profiles,
                                    out, sizeof out, list, sizeof list);
    for (int i = 0; i < nm; i++) free(models[i]);
    free(ids);
    if (n >= 1) ui_input_set_text(a->in, out);
    if (n > 1) app_flash(a, list);
    free(t);
}

/* ---- keys: the table is keys.c's; these are its actions ---------------- */

static void key_enter(app *a)
{
    size_t n, cur;
    const wchar_t *b = ui_input_buf(a->in, &n, &cur);
    if (n && b[n - 1] == L'\\' && cur == n) {   /* trailing backslash: new line */
        ui_input_feed(a->in, L"\x7f", 1);
        ui_input_insert(a->in, L"\n");
    } else {
        app_submit(a);
    }
}

static void key_ctrl_c(app *a)
{
    if (a->generating) cancel_generation(a);
    else if (!ui_input_empty(a->in)) ui_input_clear(a->in);
    else if (a->ctrl_c_was_armed) a->quit = true;
    else {
        a->ctrl_c_armed = true;
        app_flash(a, "press Ctrl-C again to quit");
    }
}

static void key_ctrl_d(app *a)
{
    if (ui_input_empty(a->in)) a->quit = true;
    else ui_input_feed(a->in, L"\x04", 1);
}

static void key_mempanel(app *a)
{
    a->show_mem = !a->show_mem;
    draw_layout(a);
}

static int page_rows(app *a)
{
    int rows = a->wt ? getmaxy(a->wt) : 10;
    return rows > 2 ? rows - 2 : 1;
}

static void key_page_up(app *a) { a->tr.scroll += page_rows(a); }

static void key_page_down(app *a)
{
    a->tr.scroll -= page_rows(a);
    if (a->tr.scroll < 0) a->tr.scroll = 0;
}

static void key_search(app *a)
{
    a->searching = true;
    a->search[0] = 0;
    a->search_pos = -1;
    draw_layout(a);
}

static void key_redraw(app *a) { clearok(curscr, TRUE); }

static void key_suspend(app *a)
{
    ui_term_suspend();                 /* returns after fg */
    draw_layout(a);
}

static void key_ctrl_x(app *a)
{
    wint_t ch;
    int r = key_soon(a, &ch, 2000);
    if (r == OK && ch == 0x05) {
        app_edit_draft(a);
        return;
    }
    wchar_t k[2] = {0x18, (wchar_t)ch};   /* not ours: libedit's Ctrl-X prefix */
    ui_input_feed(a->in, k, r == OK ? 2 : 1);
}

static void (*const key_actions[KA_COUNT])(app *) = {
    [KA_ENTER] = key_enter, [KA_ESCAPE] = on_escape, [KA_CTRL_C] = key_ctrl_c,
    [KA_CTRL_D] = key_ctrl_d, [KA_HELP] = app_show_help, [KA_NEXT_PROFILE] = app_cycle_profile,
    [KA_MEMPANEL] = key_mempanel, [KA_PAGE_UP] = key_page_up, [KA_PAGE_DOWN] = key_page_down,
    [KA_SEARCH] = key_search, [KA_COMPLETE] = complete, [KA_REDRAW] = key_redraw,
    [KA_SUSPEND] = key_suspend, [KA_RAW] = app_toggle_raw, [KA_CTRL_X] = key_ctrl_x,
    [KA_THINK] = app_toggle_think,
};

void app_on_key(app *a, int r, wint_t ch)
{
    if (r == KEY_CODE_YES && ch == KEY_RESIZE) {
        draw_layout(a);
        a->dirty = true;
        a->resized_ms = ember_now_ms();
        return;
    }
    a->flash[0] = 0;
    a->ctrl_c_was_armed = a->ctrl_c_armed;
    a->ctrl_c_armed = false;
    if (a->searching) {
        search_key(a, r, ch);
        a->dirty = true;
        return;
    }
    bool fkey = r == KEY_CODE_YES;
    ui_key_action act = ui_key_lookup((int)ch, fkey);
    if (fkey && ch == KEY_ENTER) act = KA_ENTER;
    if (act != KA_EDIT && key_actions[act]) {
        key_actions[act](a);
    } else if ((fkey && (ch == KEY_UP || ch == KEY_DOWN)) && ui_input_line_move(a->in, ch == KEY_UP ? -1 : 1)) {
        /* a draft of several lines: Up / Down move between its lines first */
    } else if ((fkey && (ch == KEY_HOME || ch == KEY_END)) || (!fkey && (ch == 0x01 || ch == 0x05))) {
        ui_input_line_edge(a->in, ch == KEY_END || ch == 0x05);   /* the line's start / end */
    } else if (fkey) {
        /* the editing keys curses decodes: fed to libedit as their control characters */
        static const struct { int key; wchar_t feed; } map[] = {
            {KEY_UP, 0x10}, {KEY_DOWN, 0x0e}, {KEY_LEFT, 0x02}, {KEY_RIGHT, 0x06},
            {KEY_HOME, 0x01}, {KEY_END, 0x05}, {KEY_BACKSPACE, 0x7f}};
        if (ch == KEY_DC) {
            if (!ui_input_empty(a->in)) ui_input_feed(a->in, L"\x04", 1);
        }
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (map[i].key == (int)ch) ui_input_feed(a->in, &map[i].feed, 1);
    } else {
        /* everything else, Ctrl-P / Ctrl-N (history) included, is the input line's */
        wchar_t c = (wchar_t)ch;
        ui_input_feed(a->in, &c, 1);
    }
    a->dirty = true;
}
