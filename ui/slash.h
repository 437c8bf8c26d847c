/* Slash commands typed at the chat prompt: the command table (one record
   per command, used by the full-screen UI and plain mode alike), parsing,
   validation and tab completion.  No curses here. */
#ifndef EMBER_UI_SLASH_H
#define EMBER_UI_SLASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

typedef enum {
    SL_NONE = 0,       /* not a command: a message to send (arg = text) */
    SL_HELP, SL_CLEAR, SL_SYSTEM, SL_SET, SL_PROFILE, SL_STATS, SL_REGEN, SL_SAVE, SL_QUIT,
    SL_RAW, SL_COPY,   /* SL_COPY: ival = 0 last reply, N its N-th code block, -1 all */
    SL_READ, SL_EDIT,
    SL_NEW, SL_LOAD, SL_CHATS, SL_MODEL,
    SL_INFO, SL_THINK, /* SL_THINK: ival = 1 show, 0 hide, -1 toggle */
    SL_ERROR,          /* err says what is wrong */
    SL_COUNT
} ui_slash_kind;

typedef enum { UI_ARG_NONE, UI_ARG_OPTIONAL, UI_ARG_REQUIRED } ui_arg_rule;

typedef struct ui_slash {
    ui_slash_kind kind;
    const char *arg;   /* points into the parsed line: text after the command, trimmed */
    size_t arg_len;
    int set_opt;       /* SL_SET: the option table's id; -1: /set alone (list the values) */
    gen_opts set_val;  /* SL_SET: the value, in its field (set_val.set has the bit) */
    long long ival;    /* SL_COPY: which block (see above) */
    char err[256];
} ui_slash;

struct ui_host;
/* What a front end offers the command handlers. */
typedef struct ui_host {
    struct ui_config *cfg;
    void *worker;                       /* ember_worker * */
    bool plain;                         /* plain line mode */
    bool quit;                          /* set by /quit */
    /* messages: level 0 info, 1 notice, 2 error */
    void (*say)(struct ui_host *h, int level, const char *msg);
    /* the front end's own handlers, by command; NULL where it has none */
    void (*const *ops)(struct ui_host *h, const struct ui_slash *s);
    void *front;                        /* the front end's state */
} ui_host;

typedef struct ui_command {
    const char *name;      /* "/set" */
    const char *args;      /* "KEY VALUE", "" */
    const char *help;
    ui_slash_kind kind;
    ui_arg_rule arg;
    bool plain;            /* also works in plain line mode */
    void (*run)(ui_host *h, const ui_slash *s);
} ui_command;

/* The commands, ended by a record with name NULL. */
extern const ui_command ui_commands[];

/* Parses one input line.  "//text" sends "/text" as a message. */
void ui_slash_parse(const char *line, ui_slash *out);
/* Parses and runs a command line (not a message) on host h. */
void ui_slash_run(ui_host *h, const ui_slash *s);

/* /help's text: the commands (in plain mode marking the full-screen
   ones), then, in the full-screen UI, the keys. */
void ui_slash_help_text(bool plain, char *buf, size_t cap);

/* Tab completion of `line` (a command being typed).  Fills out with the
   line extended by the candidates' common prefix (plus a space when
   there is exactly one) and list with the candidates separated by
   spaces.  words are what the argument being typed may be: profile names
   for /profile, saved conversation ids for /load (the caller knows which
   line it completes).  Returns the number of candidates. */
int ui_slash_complete(const char *line, const char *const *words, int n_words,
                      char *out, size_t cap, char *list, size_t list_cap);

#endif
