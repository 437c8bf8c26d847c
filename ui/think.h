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

/* The same found a piece at a time, as a reply streams in: each byte is
   looked at once (and the few before it that a </think> cut by a token
   boundary may start in), so a long thinking costs in proportion to its
   length, not to its square. */
typedef struct ui_think_scan {
    ui_think th;           /* ui_think_split of the bytes seen so far */
    int phase;             /* where the scan is (think.c) */
    size_t at;             /* the next byte the phase looks at */
} ui_think_scan;
/* The reply (the same text each time, only longer) grew to len bytes:
   brings s->th up to date and returns whether that piece is thinking (the
   tag, the thinking and the piece that closes it are), so the fold can
   count its tokens. */
bool ui_think_grow(ui_think_scan *s, const char *text, size_t len);
/* The folded line: "thinking... (N tokens)" (an ellipsis unless ascii). */
void ui_think_label(int tokens, bool ascii, char *out, size_t cap);
/* What /think (or F5) says it did. */
const char *ui_think_said(bool show);

/* A reply printed as it streams (plain mode) with its thinking folded:
   the thinking is held back, the fold's line is due once it closes (or
   the reply ends inside it), then the answer follows. */
typedef struct ui_think_stream {
    size_t shown;          /* bytes of the reply dealt with: printed or folded */
    int tokens;            /* thinking tokens so far */
    bool marked;           /* the fold's line was due already */
    ui_think_scan scan;
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
