/* Plain mode at a keyboard (stdin a terminal, stdout a pipe or TERM=dumb):
   lines read with libedit's editing and this session's history; the
   prompt and the editing go to stderr, so stdout carries only replies. */
#ifndef EMBER_UI_LINEREAD_H
#define EMBER_UI_LINEREAD_H

typedef struct ui_lineread ui_lineread;

/* NULL when libedit cannot start (the caller reads with getline). */
ui_lineread *ui_lineread_open(void);
/* The next line without its newline (valid until the next call), or NULL
   at end of input. */
const char *ui_lineread_get(ui_lineread *lr);
void ui_lineread_close(ui_lineread *lr);

#endif
