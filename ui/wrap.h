/* Display width and word wrapping of UTF-8 text for a terminal: wide
   (CJK, emoji) characters take two columns, combining marks none. */
#ifndef EMBER_UI_WRAP_H
#define EMBER_UI_WRAP_H

#include <stddef.h>
#include <stdint.h>

/* Decodes one character at s (n bytes available); returns the bytes used
   (>= 1 when n > 0).  Invalid or truncated sequences give U+FFFD and use
   one byte, so callers always make progress. */
int ui_utf8_next(const char *s, size_t n, uint32_t *cp);
/* Columns a character takes: 0 for combining marks and controls, 2 for
   wide ones, else 1. */
/* Columns a tab takes where text is shown (draw_utf8 writes blanks). */
#define UI_TAB_COLS 4
int ui_cp_width(uint32_t cp);
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

/* Bytes of s that fit in `cols` columns (whole characters only). */
size_t ui_fit(const char *s, size_t n, int cols, int *used);

#endif
