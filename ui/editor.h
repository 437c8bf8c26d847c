/* The draft in the person's own editor (Ctrl-X Ctrl-E, /edit). */
#ifndef EMBER_UI_EDITOR_H
#define EMBER_UI_EDITOR_H

#include <stddef.h>

/* Writes TEXT to a private temporary file, runs $VISUAL, else $EDITOR, else
   vi on it (through sh, so "code -w" works), and returns what the file then
   holds (one final newline dropped), malloc'd.  The caller has given the
   terminal up.  NULL with err when the editor cannot run, exits non-zero
   (the draft stays as it was) or leaves a file that is not text. */
char *ui_edit_text(const char *text, char *err, size_t errcap);

#endif
