/* What stays in the shell after the full-screen chat ends: the alternate
   screen takes the conversation away with it, so its last screenful is
   printed again, as plain text, once the terminal is back. */
#ifndef EMBER_UI_KEEPSCREEN_H
#define EMBER_UI_KEEPSCREEN_H

#include <stdbool.h>
#include <stdio.h>

#include "transcript.h"

/* Writes the last rows lines of t laid out for cols columns as the
   transcript window lays them out (labels, indented text, replies as
   Markdown unless raw), without colours or control characters.  0, or -1
   when out of memory. */
int ui_keep_screen(const transcript *t, int rows, int cols, bool raw, bool ascii, FILE *out);

#endif
