/* The input line: libedit does the editing (emacs keys, kill/yank, word
   motion, history) on its own pseudo-terminal, fed key by key through
   EL_GETCFN; the UI draws the buffer from el_wline() itself, so libedit
   never writes to the real terminal. */
#ifndef EMBER_UI_INPUT_H
#define EMBER_UI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

typedef struct ui_input ui_input;

/* history_path may be NULL (no persistence).  NULL with err on failure. */
ui_input *ui_input_new(const char *history_path, char *err, size_t errcap);
/* Saves the history and frees. */
void ui_input_free(ui_input *in);

/* Feeds one character to libedit as if typed (control characters are
   editing commands: ^A ^E ^B ^F ^K ^U ^W ^Y ^T ^P ^N ...; ESC-prefixed
   pairs are meta commands). */
void ui_input_feed(ui_input *in, const wchar_t *keys, size_t n);
/* Inserts text literally at the cursor (pasted text, newlines). */
void ui_input_insert(ui_input *in, const wchar_t *s);
/* The buffer and the cursor offset, in wide characters. */
const wchar_t *ui_input_buf(ui_input *in, size_t *len, size_t *cursor);
/* The buffer as malloc'd UTF-8. */
char *ui_input_text(ui_input *in);
/* In a draft of several lines: moves the cursor to the line above (dir < 0)
   or below, at the same column where it can; false on the first / last line
   (the caller then walks the history instead). */
bool ui_input_line_move(ui_input *in, int dir);
/* Moves the cursor to the start (end == false) or end of its own line. */
void ui_input_line_edge(ui_input *in, bool end);
void ui_input_set_text(ui_input *in, const char *utf8);
void ui_input_clear(ui_input *in);
bool ui_input_empty(ui_input *in);
/* Adds a submitted line to the history (and the file on free). */
void ui_input_history_add(ui_input *in, const char *utf8);
/* Reverse search: the newest history entry older than *pos (start with
   *pos = -1) containing needle; returns it (UTF-8, static until the next
   call) or NULL, updating *pos. */
const char *ui_input_history_search(ui_input *in, const char *needle, int *pos);
/* Writes the history path for $XDG_STATE_HOME/ember/history (default
   ~/.local/state), creating the directory; 0 or -1. */
int ui_history_path(char *buf, size_t cap);

#endif
