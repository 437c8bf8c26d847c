/* Display width and word wrapping of UTF-8 text for a terminal: wide
   (CJK, emoji) characters take two columns, combining marks none. */
#ifndef EMBER_UI_WRAP_H
#define EMBER_UI_WRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Decodes one character at s (n bytes available); returns the bytes used
   (>= 1 when n > 0).  Invalid or truncated sequences give U+FFFD and use
   one byte, so callers always make progress. */
int ui_utf8_next(const char *s, size_t n, uint32_t *cp);
/* Columns a character takes: 0 for combining marks and controls, 2 for
   wide ones, else 1; a tab, whose width depends on where it is, takes
   UI_TAB_STOP here (see ui_cell_width). */
int ui_cp_width(uint32_t cp);
/* Tabs stop every UI_TAB_STOP columns from the start of the line's text,
   in the draft and the transcript alike (the text keeps the tab; only the
   screen shows blanks): a tab at column col runs to the next stop. */
#define UI_TAB_STOP 4
int ui_tab_width(int col);
/* Columns cp takes at column col of its line: ui_tab_width for a tab,
   else ui_cp_width.  Every layout of text on screen goes through it. */
int ui_cell_width(uint32_t cp, int col);
/* Columns of s laid out from the start of a line. */
int ui_str_width(const char *s, size_t n);

typedef struct ui_line {
    size_t off, len;       /* bytes of the source text */
    int width;             /* columns */
} ui_line;

/* Wraps s into lines of at most `width` columns: at spaces when possible,
   inside a word longer than the width otherwise, and at every '\n'.
   Spaces where a line was broken are not part of either line.  Writes up
   to cap lines and returns how many there are (call again with more room
   when the result exceeds cap).  Empty text is one empty line. */
int ui_wrap(const char *s, size_t n, int width, ui_line *out, int cap);

/* Whether the locale's characters are UTF-8 (else the UI draws ASCII). */
bool ui_locale_utf8(void);
/* In an ASCII locale (C, POSIX), LC_CTYPE becomes C.UTF-8 where it exists,
   so that typed and shown characters go as UTF-8; called before curses
   or libedit starts (they read the locale once).  The UI still draws its
   own marks in ASCII when ui_locale_utf8 was false before. */
void ui_locale_text_utf8(void);

/* Bytes of s, laid out from the start of a line, that fit in `cols`
   columns (whole characters only). */
size_t ui_fit(const char *s, size_t n, int cols, int *used);

#endif
