/* libedit on a private pty.  Each key the UI receives is queued and
   el_wgets() runs in EL_UNBUFFERED mode, so it returns after every
   editing command; EL_GETCFN hands it the queued keys and reports "no
   input" when the queue is empty, so libedit never blocks.  Whatever
   libedit writes goes to the pty and is read back and discarded. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <histedit.h>
#include <limits.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember.h"
#include "input.h"

#define QCAP 4096

struct ui_input {
    EditLine *el;
    HistoryW *hist;
    int master, slave;
    FILE *fin, *fout;
    wchar_t q[QCAP];
    size_t qh, qn;
    char *hpath;
    char *found;          /* last history search result */
};

static int getcfn(EditLine *el, wchar_t *c)
{
    ui_input *in = NULL;
    el_get(el, EL_CLIENTDATA, &in);
    if (!in || in->qn == 0) return 0;
    *c = in->q[in->qh];
    in->qh = (in->qh + 1) % QCAP;
    in->qn--;
    return 1;
}

static wchar_t *empty_prompt(EditLine *el)
{
    (void)el;
    return (wchar_t *)L"";
}

static void drain(ui_input *in)
{
    char buf[4096];
    while (read(in->master, buf, sizeof buf) > 0) {}
}

int ui_history_path(char *buf, size_t cap)
{
    return ember_place_path(EMBER_PLACE_HISTORY, true, buf, cap);
}

/* Through the safe writer, private: H_SAVE would rewrite the file in place
   (a crash or full disk loses it) and follow a symlink planted at its path. */
static int save_history(ui_input *in, ember_err *err)
{
    ember_file *f = ember_file_create(in->hpath, EMBER_MODE_PRIVATE, err);
    if (!f) return -1;
    /* libedit fchmods the FILE's descriptor: it gets a stdio FILE of its own */
    int fd = dup(ember_file_fd(f)), e = 0;
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    HistEventW ev;
    errno = fp ? 0 : errno;
    if (!fp) e = errno;
    else if (history_w(in->hist, &ev, H_SAVE_FP, fp) < 0 || fflush(fp) != 0 || ferror(fp)) e = errno ? errno : EIO;
    if (fp) fclose(fp);
    else if (fd >= 0) close(fd);
    if (e) {
        ember_file_abort(f);
        return ember_seterr(err, "cannot write %s: %s", in->hpath, strerror(e));
    }
    return ember_file_commit(f, err);
}

ui_input *ui_input_new(const char *history_path, char *err, size_t errcap)
{
    ui_input *in = calloc(1, sizeof *in);
    if (!in) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    in->master = in->slave = -1;
    struct winsize ws = {.ws_row = 24, .ws_col = 200};
    if (openpty(&in->master, &in->slave, NULL, NULL, &ws) < 0) {
        snprintf(err, errcap, "openpty: %s (the input line needs a pseudo-terminal)", strerror(errno));
        free(in);
        return NULL;
    }
    fcntl(in->master, F_SETFL, fcntl(in->master, F_GETFL) | O_NONBLOCK);
    fcntl(in->master, F_SETFD, FD_CLOEXEC);
    fcntl(in->slave, F_SETFD, FD_CLOEXEC);
    int out_fd = dup(in->slave);
    in->fin = fdopen(in->slave, "r");
    in->fout = out_fd >= 0 ? fdopen(out_fd, "w") : NULL;
    if (!in->fin || !in->fout) {
        snprintf(err, errcap, "cannot open the input pty: %s", strerror(errno));
        goto fail;
    }
    in->el = el_init_fd("ember", in->fin, in->fout, in->fout, in->slave, out_fd, out_fd);
    if (!in->el) {
        snprintf(err, errcap, "libedit could not start");
        goto fail;
    }
    el_wset(in->el, EL_CLIENTDATA, in);
    el_wset(in->el, EL_EDITOR, L"emacs");
    el_wset(in->el, EL_SIGNAL, 0);
    el_wset(in->el, EL_PROMPT, empty_prompt);
    el_wset(in->el, EL_GETCFN, getcfn);
    el_wset(in->el, EL_UNBUFFERED, 1);
    in->hist = history_winit();
    if (in->hist) {
        HistEventW ev;
        history_w(in->hist, &ev, H_SETSIZE, 1000);
        history_w(in->hist, &ev, H_SETUNIQUE, 1);
        if (history_path) {
            in->hpath = strdup(history_path);
            history_w(in->hist, &ev, H_LOAD, history_path);
        }
        el_wset(in->el, EL_HIST, history_w, in->hist);
    }
    drain(in);
    return in;
fail:
    if (in->fin) fclose(in->fin);
    else if (in->slave >= 0) close(in->slave);
    if (in->fout) fclose(in->fout);
    else if (out_fd >= 0) close(out_fd);
    close(in->master);
    free(in);
    return NULL;
}

void ui_input_free(ui_input *in)
{
    if (!in) return;
    if (in->hist) {
        ember_err err;
        /* the screen is back to normal by now: say so if it failed */
        if (in->hpath && save_history(in, &err)) fprintf(stderr, "ember: %s\n", err.msg);
        history_wend(in->hist);
    }
    el_end(in->el);
    fclose(in->fin);
    fclose(in->fout);
    close(in->master);
    free(in->hpath);
    free(in->found);
    free(in);
}

void ui_input_feed(ui_input *in, const wchar_t *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (in->qn == QCAP) break;
        in->q[(in->qh + in->qn) % QCAP] = keys[i];
        in->qn++;
    }
    /* Each call runs one editing command; a command that wants more keys
       than are queued sees "no input" and ends. */
    for (int guard = 0; in->qn && guard < QCAP; guard++) {
        int count;
        el_wgets(in->el, &count);
        drain(in);
    }
    in->qn = 0;
}

void ui_input_insert(ui_input *in, const wchar_t *s)
{
    el_winsertstr(in->el, s);
}

const wchar_t *ui_input_buf(ui_input *in, size_t *len, size_t *cursor)
{
    const LineInfoW *li = el_wline(in->el);
    if (len) *len = (size_t)(li->lastchar - li->buffer);
    if (cursor) *cursor = (size_t)(li->cursor - li->buffer);
    return li->buffer;
}

static void cursor_to(ui_input *in, size_t to)
{
    size_t cur;
    ui_input_buf(in, NULL, &cur);
    el_cursor(in->el, (int)to - (int)cur);   /* counts characters of the wide buffer */
}

bool ui_input_line_move(ui_input *in, int dir)
{
    size_t n, cur;
    const wchar_t *b = ui_input_buf(in, &n, &cur);
    size_t start = cur;
    while (start > 0 && b[start - 1] != L'\n') start--;
    size_t col = cur - start, to;
    if (dir < 0) {
        if (start == 0) return false;
        size_t pstart = start - 1;          /* the previous line ends at start - 1 */
        while (pstart > 0 && b[pstart - 1] != L'\n') pstart--;
        to = pstart + (col < start - 1 - pstart ? col : start - 1 - pstart);
    } else {
        size_t end = cur;
        while (end < n && b[end] != L'\n') end++;
        if (end == n) return false;
        size_t nstart = end + 1, nend = nstart;
        while (nend < n && b[nend] != L'\n') nend++;
        to = nstart + (col < nend - nstart ? col : nend - nstart);
    }
    cursor_to(in, to);
    return true;
}

void ui_input_line_edge(ui_input *in, bool end)
{
    size_t n, cur;
    const wchar_t *b = ui_input_buf(in, &n, &cur);
    size_t to = cur;
    if (end) while (to < n && b[to] != L'\n') to++;
    else while (to > 0 && b[to - 1] != L'\n') to--;
    cursor_to(in, to);
}

static char *to_utf8(const wchar_t *w, size_t n)
{
    char *s = malloc(n * MB_LEN_MAX + 1), *p = s;
    if (!s) return NULL;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    for (size_t i = 0; i < n; i++) {
        size_t k = wcrtomb(p, w[i], &st);
        if (k == (size_t)-1) {
            *p++ = '?';
            memset(&st, 0, sizeof st);
        } else {
            p += k;
        }
    }
    *p = 0;
    return s;
}

static wchar_t *from_utf8(const char *s)
{
    size_t n = strlen(s);
    wchar_t *w = malloc((n + 1) * sizeof *w), *p = w;
    if (!w) return NULL;
    mbstate_t st;
    memset(&st, 0, sizeof st);
    while (*s) {
        size_t k = mbrtowc(p, s, n, &st);
        if (k == (size_t)-1 || k == (size_t)-2) {
            *p++ = 0xFFFD;
            s++, n--;
            memset(&st, 0, sizeof st);
            continue;
        }
        if (k == 0) break;
        p++;
        s += k, n -= k;
    }
    *p = 0;
    return w;
}

char *ui_input_text(ui_input *in)
{
    size_t n;
    const wchar_t *b = ui_input_buf(in, &n, NULL);
    return to_utf8(b, n);
}

void ui_input_clear(ui_input *in)
{
    size_t n, cur;
    ui_input_buf(in, &n, &cur);
    el_cursor(in->el, (int)(n - cur));
    ui_input_buf(in, &n, &cur);
    if (cur) el_wdeletestr(in->el, (int)cur);
}

void ui_input_set_text(ui_input *in, const char *utf8)
{
    ui_input_clear(in);
    wchar_t *w = from_utf8(utf8);
    if (w && *w) el_winsertstr(in->el, w);
    free(w);
}

bool ui_input_empty(ui_input *in)
{
    size_t n;
    ui_input_buf(in, &n, NULL);
    return n == 0;
}

void ui_input_history_add(ui_input *in, const char *utf8)
{
    if (!in->hist || !*utf8) return;
    wchar_t *w = from_utf8(utf8);
    if (!w) return;
    HistEventW ev;
    history_w(in->hist, &ev, H_ENTER, w);
    free(w);
    /* Saved now too, so a crash or kill keeps what was typed. */
    ember_err err;
    if (in->hpath) save_history(in, &err);   /* quiet: the screen is in use; the save at the end reports */
}

const char *ui_input_history_search(ui_input *in, const char *needle, int *pos)
{
    if (!in->hist) return NULL;
    HistEventW ev;
    int i = 0;
    for (int r = history_w(in->hist, &ev, H_FIRST); r != -1;
         r = history_w(in->hist, &ev, H_NEXT), i++) {
        if (i <= *pos) continue;
        char *s = to_utf8(ev.str, wcslen(ev.str));
        if (!s) return NULL;
        size_t n = strlen(s);
        if (n && s[n - 1] == '\n') s[n - 1] = 0;
        if (strstr(s, needle)) {
            free(in->found);
            in->found = s;
            *pos = i;
            return s;
        }
        free(s);
    }
    return NULL;
}
