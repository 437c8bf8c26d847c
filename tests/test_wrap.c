/* Width and word wrap of UTF-8 text: ASCII, CJK, emoji, combining marks,
   invalid bytes, long words, hard newlines. */
#include "config.h"

#include <locale.h>
#include <string.h>

#include "tap.h"
#include "wrap.h"

/* Wraps and joins the lines with '|' for a compact comparison. */
static const char *wrapped(const char *s, int width)
{
    static char buf[1024];
    ui_line l[64];
    int n = ui_wrap(s, strlen(s), width, l, 64);
    buf[0] = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (i) strcat(buf, "|");
        strncat(buf, s + l[i].off, l[i].len);
    }
    return buf;
}

static int max_width(const char *s, int width)
{
    ui_line l[64];
    int n = ui_wrap(s, strlen(s), width, l, 64), m = 0;
    for (int i = 0; i < n && i < 64; i++) {
        if (l[i].width != ui_str_width(s + l[i].off, l[i].len)) return -1;
        if (l[i].width > m) m = l[i].width;
    }
    return m;
}

/* Lays s out as ui_cell_width places it when its text starts at screen
   column col0 (as the draft and draw_utf8 do): tabs become blanks. */
static const char *cells(const char *s, int col0)
{
    static char buf[256];
    size_t o = 0;
    int col = col0;
    for (size_t i = 0, n = strlen(s); i < n && o + 8 < sizeof buf;) {
        uint32_t cp;
        int k = ui_utf8_next(s + i, n - i, &cp);
        int w = ui_cell_width(cp, col - col0);
        if (cp == '\t') memset(buf + o, ' ', (size_t)w), o += (size_t)w;
        else memcpy(buf + o, s + i, (size_t)k), o += (size_t)k;
        col += w;
        i += (size_t)k;
    }
    buf[o] = 0;
    return buf;
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "en_US.UTF-8"))
        tap_skip_all("no UTF-8 locale");

    uint32_t cp;
    tap_ok(ui_utf8_next("\xc3\xa9", 2, &cp) == 2 && cp == 0xE9, "2-byte sequence");
    tap_ok(ui_utf8_next("\xf0\x9f\x98\x80", 4, &cp) == 4 && cp == 0x1F600, "4-byte emoji");
    tap_ok(ui_utf8_next("\xe4\xb8", 2, &cp) == 1 && cp == 0xFFFD, "truncated sequence: U+FFFD, 1 byte");
    tap_ok(ui_utf8_next("\xc0\x80", 2, &cp) == 1 && cp == 0xFFFD, "overlong encoding rejected");
    tap_ok(ui_utf8_next("\xed\xa0\x80", 3, &cp) == 1 && cp == 0xFFFD, "surrogate rejected");
    tap_ok(ui_utf8_next("\x80", 1, &cp) == 1 && cp == 0xFFFD, "lone continuation byte");

    tap_ok(ui_str_width("hello", 5) == 5, "ASCII width");
    tap_ok(ui_str_width("\xe4\xb8\xad\xe6\x96\x87", 6) == 4, "CJK: two columns each");
    tap_ok(ui_str_width("\xf0\x9f\x98\x80", 4) == 2, "emoji: two columns");
    tap_ok(ui_str_width("e\xcc\x81", 3) == 1, "combining acute: zero columns");
    tap_ok(ui_str_width("a\x01" "b\x7f", 4) == 2, "control characters take no column");
    tap_ok(ui_tab_width(0) == 4 && ui_tab_width(1) == 3 && ui_tab_width(3) == 1 && ui_tab_width(4) == 4,
           "a tab runs to the next 4-column stop");
    tap_ok(ui_str_width("a\tb", 3) == 5, "a tab after one column takes three (kept from a paste)");
    /* The one layout both the draft and the transcript use: "a\tbc\td"
       shows as "a   bc  d" wherever the line's text starts. */
    tap_ok(!strcmp(cells("a\tbc\td", 0), "a   bc  d"), "a line's tabs from its start: '%s'", cells("a\tbc\td", 0));
    tap_ok(!strcmp(cells("a\tbc\td", 2), "a   bc  d"),
           "the draft's layout (text after the 2-column prompt) is the same: '%s'", cells("a\tbc\td", 2));
    {
        ui_line l[4];
        int n = ui_wrap("a\tbc\td", 7, 80, l, 4);
        tap_ok(n == 1 && l[0].width == 9, "the transcript's wrap measures it 9 columns (%d)", n ? l[0].width : -1);
        n = ui_wrap("abc de\tf", 9, 5, l, 4);
        tap_ok(n == 2 && l[1].width == 5, "on a wrapped line the stops count from that line's start (%d)",
               n > 1 ? l[1].width : -1);
    }

    tap_ok(!strcmp(wrapped("the quick brown fox", 10), "the quick|brown fox"),
           "breaks at spaces: %s", wrapped("the quick brown fox", 10));
    tap_ok(!strcmp(wrapped("abcdefghijkl", 5), "abcde|fghij|kl"), "long word split at the width");
    tap_ok(!strcmp(wrapped("ab\n\ncd", 10), "ab||cd"), "hard newlines, empty line kept");
    tap_ok(!strcmp(wrapped("", 10), ""), "empty text is one empty line");
    tap_ok(!strcmp(wrapped("hello world", 5), "hello|world"), "space at the margin is dropped");
    tap_ok(!strcmp(wrapped("a  b", 10), "a  b"), "inner spaces kept when no break is needed");
    tap_ok(!strcmp(wrapped("aaa bbbbbbbbbbbb", 6), "aaa|bbbbbb|bbbbbb"),
           "word longer than the width after a break: %s", wrapped("aaa bbbbbbbbbbbb", 6));
    /* 5 CJK characters (10 columns) in width 5: 2 per line, never split a character */
    const char *cjk = "\xe4\xb8\x80\xe4\xba\x8c\xe4\xb8\x89\xe5\x9b\x9b\xe4\xba\x94";
    tap_ok(!strcmp(wrapped(cjk, 5), "\xe4\xb8\x80\xe4\xba\x8c|\xe4\xb8\x89\xe5\x9b\x9b|\xe4\xba\x94"),
           "CJK wraps at 2 characters in 5 columns");
    tap_ok(max_width(cjk, 5) == 4, "no CJK line exceeds the width");
    const char *emo = "hi \xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80 ok";
    tap_ok(max_width(emo, 4) <= 4 && max_width(emo, 4) >= 0, "emoji lines fit 4 columns");
    tap_ok(!strcmp(wrapped(emo, 4), "hi|\xf0\x9f\x98\x80\xf0\x9f\x98\x80|\xf0\x9f\x98\x80|ok"),
           "emoji wrap: %s", wrapped(emo, 4));
    /* combining marks stay on their base character's line */
    tap_ok(!strcmp(wrapped("abe\xcc\x81" "cd", 3), "abe\xcc\x81|cd"),
           "combining mark stays with its base");
    tap_ok(max_width("e\xcc\x81" "e\xcc\x81" "e\xcc\x81", 3) == 3, "accented letters one column each");
    /* invalid bytes still progress and count one column */
    tap_ok(!strcmp(wrapped("\xff\xff\xff\xff", 2), "\xff\xff|\xff\xff"), "invalid bytes wrap as one column");
    int used;
    tap_ok(ui_fit(cjk, strlen(cjk), 5, &used) == 6 && used == 4, "fit stops before a split wide char");
    tap_ok(ui_wrap("abc", 3, 0, NULL, 0) == 3, "width 0 treated as 1; count without storage");
    return tap_done();
}
