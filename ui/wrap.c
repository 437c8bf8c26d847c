/* UTF-8 width and wrapping.  Widths come from wcwidth() so they agree with
   what ncurses does on screen; a small table covers locales where wcwidth
   does not know the character. */
#include "config.h"

#include <langinfo.h>
#include <locale.h>
#include <string.h>
#include <wchar.h>

#include "ember.h"
#include "wrap.h"

int ui_utf8_next(const char *s, size_t n, uint32_t *cp)
{
    int len = ember_utf8_decode(s, n, cp);
    if (len > 0) return len;
    /* the screen shows a bad byte as U+FFFD and moves past it alone */
    *cp = n ? 0xFFFD : 0;
    return n ? 1 : 0;
}

static int in(uint32_t c, uint32_t a, uint32_t b) { return c >= a && c <= b; }

int ui_cp_width(uint32_t cp)
{
    if (cp == '\t') return UI_TAB_STOP;
    if (cp < 0x20 || in(cp, 0x7F, 0x9F)) return 0;
    if (cp < 0x7F) return 1;
    int w = wcwidth((wchar_t)cp);
    if (w >= 0) return w;
    /* Not known to the locale: the usual zero-width and wide ranges. */
    if (in(cp, 0x300, 0x36F) || in(cp, 0x200B, 0x200F) || in(cp, 0xFE00, 0xFE0F) ||
        in(cp, 0x1AB0, 0x1AFF) || in(cp, 0x20D0, 0x20FF) || in(cp, 0xE0100, 0xE01EF))
        return 0;
    if (in(cp, 0x1100, 0x115F) || in(cp, 0x2E80, 0x303E) || in(cp, 0x3041, 0x33FF) ||
        in(cp, 0x3400, 0x4DBF) || in(cp, 0x4E00, 0x9FFF) || in(cp, 0xA000, 0xA4CF) ||
        in(cp, 0xAC00, 0xD7A3) || in(cp, 0xF900, 0xFAFF) || in(cp, 0xFE30, 0xFE4F) ||
        in(cp, 0xFF00, 0xFF60) || in(cp, 0xFFE0, 0xFFE6) || in(cp, 0x1F300, 0x1F64F) ||
        in(cp, 0x1F900, 0x1F9FF) || in(cp, 0x20000, 0x3FFFD))
        return 2;
    return 1;
}

int ui_tab_width(int col) { return UI_TAB_STOP - (col < 0 ? 0 : col) % UI_TAB_STOP; }

int ui_cell_width(uint32_t cp, int col) { return cp == '\t' ? ui_tab_width(col) : ui_cp_width(cp); }

int ui_str_width(const char *s, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += (size_t)ui_utf8_next(s + i, n - i, &cp);
        w += ui_cell_width(cp, w);
    }
    return w;
}

size_t ui_fit(const char *s, size_t n, int cols, int *used)
{
    int w = 0;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int k = ui_utf8_next(s + i, n - i, &cp);
        int cw = ui_cell_width(cp, w);
        if (w + cw > cols) break;
        w += cw;
        i += (size_t)k;
    }
    if (used) *used = w;
    return i;
}

static void put(ui_line *out, int cap, int *n, size_t off, size_t len, int width)
{
    if (*n < cap) out[*n] = (ui_line){off, len, width};
    (*n)++;
}

int ui_wrap(const char *s, size_t n, int width, ui_line *out, int cap)
{
    int nl = 0;
    if (width < 1) width = 1;
    size_t start = 0, i = 0;
    int w = 0;
    /* Last break opportunity on this line: end of the text before a run of
       spaces, and where the next line would start. */
    size_t brk_end = 0, brk_next = 0;
    int brk_w = 0, has_brk = 0;
    while (i < n) {
        uint32_t cp;
        int k = ui_utf8_next(s + i, n - i, &cp);
        if (cp == '\n') {
            put(out, cap, &nl, start, i - start, w);
            i += (size_t)k;
            start = i, w = 0, has_brk = 0;
            continue;
        }
        int cw = ui_cell_width(cp, w);
        if (cp == ' ') {
            if (!has_brk || brk_next != i) {    /* a new run of spaces */
                brk_end = i;
                brk_w = w;
            }
            has_brk = 1;
            brk_next = i + 1;
            if (w + 1 > width) {
                /* Spaces at the right margin: break here, drop them. */
                put(out, cap, &nl, start, brk_end - start, brk_w);
                i += 1;
                while (i < n && s[i] == ' ') i++;
                start = i, w = 0, has_brk = 0;
                continue;
            }
            w += 1;
            i += 1;
            continue;
        }
        if (w + cw > width && w > 0) {
            if (has_brk && brk_end > start) {
                put(out, cap, &nl, start, brk_end - start, brk_w);
                start = brk_next;
                w = ui_str_width(s + start, i - start);
            } else if (has_brk && brk_end == start) {
                /* Only leading spaces before a long word: drop them. */
                start = brk_next;
                w = ui_str_width(s + start, i - start);
                if (w + cw > width && w > 0) {
                    put(out, cap, &nl, start, i - start, w);
                    start = i, w = 0;
                }
            } else {
                put(out, cap, &nl, start, i - start, w);
                start = i, w = 0;
            }
            has_brk = 0;
            continue;   /* re-examine this character on the new line */
        }
        w += cw;
        i += (size_t)k;
        /* Combining marks that follow stay with their base character. */
    }
    put(out, cap, &nl, start, n - start, w);
    return nl;
}

bool ui_locale_utf8(void)
{
    const char *cs = setlocale(LC_CTYPE, NULL);
    return cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8"));
}

void ui_locale_text_utf8(void)
{
    /* An ASCII locale (C, POSIX: LANG unset over ssh, say) says nothing
       of the terminal, and in it curses and libedit take no byte above
       0x7f: a typed "\xc3\xa9" swallowed the keys after it, Enter
       included, and a reply's non-ASCII text vanished from the screen,
       leaving its table out of line.  The text is UTF-8 throughout and so
       is nearly every terminal.  Another charset (ISO-8859-1, say) is the
       terminal's own and is left alone. */
    if (!ui_locale_utf8() && !strcmp(nl_langinfo(CODESET), "ANSI_X3.4-1968")) setlocale(LC_CTYPE, "C.UTF-8");
}
