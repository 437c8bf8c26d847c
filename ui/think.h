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
/* What /think (or F5) says it did. */
const char *ui_think_said(bool show);

/* A reply printed as it streams (plain mode) with its thinking folded:
   the thinking is held back, the fold's line is due once it closes (or
   the reply ends inside it), then the answer follows.  It reads each byte
   once (and the few before it a split </think> can straddle), so a long
   thinking costs in proportion to its length, not to its square. */
typedef struct ui_think_stream {
    size_t shown;          /* bytes of the reply dealt with: printed or folded */
    int tokens;            /* thinking tokens so far */
    bool marked;           /* the fold's line was due already */
    /* the scan: ui_think_split of the bytes fed so far, found incrementally */
    ui_think th;
    int phase;             /* where the scan is (think.c) */
    size_t at;             /* the next byte the phase looks at */
} ui_think_stream;

/* The reply grew to `len` bytes by one token (model: false for the
   prompt's own opening, which is no token of the model's); text is the
   same reply each time, only longer.  Sets *from: the bytes [*from, len)
   to print now; returns true when the fold's line is due before them. */
bool ui_think_feed(ui_think_stream *s, const char *text, size_t len, bool model, size_t *from);
/* At the reply's end: true when the fold's line is still due (it never
   closed its thinking). */
bool ui_think_end(ui_think_stream *s, const char *text, size_t len);

#endif
