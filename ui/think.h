/* Reasoning models open a reply with <think> ... </think>: the UI shows
   that part folded as "thinking... (N tokens)" unless /think show (or the
   key) unfolds it.  Pure text logic, no curses. */
#ifndef EMBER_UI_THINK_H
#define EMBER_UI_THINK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ui_think {
    bool has;              /* the reply opens with <think> (or, streaming, a prefix of it) */
    bool open;             /* and has not closed it yet: still thinking */
    size_t body;           /* where the answer starts (after </think> and blank lines) */
} ui_think;

void ui_think_split(const char *text, size_t len, ui_think *out);
/* Whether the piece that grew a reply from `before` to `len` bytes is
   thinking (so the fold can count its tokens). */
bool ui_think_counts(const char *text, size_t before, size_t len);
/* The folded line: "thinking... (N tokens)" (an ellipsis unless ascii). */
void ui_think_label(int tokens, bool ascii, char *out, size_t cap);

#endif
