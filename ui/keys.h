/* The full-screen chat's key bindings: one table that on_key dispatches
   through and that prints /help's and --help's key list (the man page's
   KEYS section lists the same labels; tests/man_help.sh checks). */
#ifndef EMBER_UI_KEYS_H
#define EMBER_UI_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
    KA_EDIT = 0,       /* the input line (libedit) does it: listed, not dispatched */
    KA_ENTER, KA_ESCAPE, KA_CTRL_C, KA_CTRL_D, KA_HELP, KA_NEXT_PROFILE, KA_MEMPANEL,
    KA_PAGE_UP, KA_PAGE_DOWN, KA_SEARCH, KA_COMPLETE, KA_REDRAW, KA_SUSPEND, KA_RAW, KA_CTRL_X, KA_THINK,
    KA_COUNT
} ui_key_action;

typedef struct ui_key {
    const char *label;     /* "F2", "Ctrl-R": as --help, /help and ember(1) spell it */
    const char *help;
    int code;              /* the character, or the curses KEY_* code when fkey */
    bool fkey;
    ui_key_action action;
} ui_key;

/* Ended by a record with label NULL. */
extern const ui_key ui_keys[];

/* The action for a key read by wget_wch (fkey: it returned KEY_CODE_YES);
   KA_EDIT when the table has none. */
ui_key_action ui_key_lookup(int code, bool fkey);

/* One line per key, each starting with indent. */
void ui_keys_print(FILE *out, const char *indent);
void ui_keys_text(char *buf, size_t cap, const char *indent);

#endif
