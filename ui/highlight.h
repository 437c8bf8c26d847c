/* Syntax colours for code blocks in replies: a small tokenizer driven by
   one table row per language (keywords, types, comment and string
   syntax).  It classifies bytes; it never changes them.  No curses. */
#ifndef EMBER_UI_HIGHLIGHT_H
#define EMBER_UI_HIGHLIGHT_H

#include <stddef.h>

typedef enum {
    HL_PLAIN, HL_KEYWORD, HL_TYPE, HL_STRING, HL_COMMENT, HL_NUMBER,
    HL_ADDED, HL_REMOVED, HL_META,        /* diff lines; HL_META also hunk headers */
    HL_N_CLASSES
} hl_class;

typedef struct hl_lang hl_lang;

/* The language for a fence's info word ("c", "py", "sh", "json", ...),
   through the alias table; NULL when unknown (the block stays plain). */
const hl_lang *hl_find(const char *name, size_t n);
/* The language's canonical name ("c", "python", ...). */
const char *hl_name(const hl_lang *l);

/* What carries over from one line to the next: inside a block comment
   or a multi-line string.  Start each block with {0}. */
typedef struct hl_state { int in; char close[4]; } hl_state;

typedef struct hl_token { size_t off, len; hl_class cls; } hl_token;

/* Splits one line (without its '\n') into tokens covering every byte in
   order, adjacent tokens of one class merged.  Writes up to cap tokens
   and returns how many there are (call again with more room when the
   result exceeds cap).  With l == NULL the whole line is HL_PLAIN. */
int hl_line(const hl_lang *l, hl_state *st, const char *s, size_t n, hl_token *out, int cap);

#endif
