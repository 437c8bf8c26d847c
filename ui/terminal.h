/* The terminal's state around the full-screen UI: given back on every way
   out (normal exit, fatal signal, SIGTERM/SIGHUP/SIGINT, Ctrl-Z). */
#ifndef EMBER_UI_TERMINAL_H
#define EMBER_UI_TERMINAL_H

#include <stdbool.h>

/* Whether the terminal database describes $TERM (curses' initscr would
   end the program with "Error opening terminal" otherwise). */
bool ui_term_known(void);
/* Before initscr: remembers the shell's terminal modes. */
void ui_term_save(void);
/* After initscr: turns bracketed paste on and arms the fatal-signal
   restore (leave the alternate screen, keypad off, paste off, cursor on,
   the saved modes back). */
void ui_term_arm(void);
/* Before endwin on the normal way out: bracketed paste off, the fatal
   handlers no longer touch the terminal. */
void ui_term_disarm(void);
/* Ctrl-Z: gives the terminal back, stops the process (SIGTSTP) and, once
   continued (fg), takes the terminal again.  The caller redraws. */
void ui_term_suspend(void);
/* Gives the terminal to another program (the editor) and takes it back. */
void ui_term_leave(void);
void ui_term_return(void);

#endif
