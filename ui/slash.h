/* Slash commands typed at the chat prompt: parsing, validation and tab
   completion.  No curses here. */
#ifndef EMBER_UI_SLASH_H
#define EMBER_UI_SLASH_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SL_NONE = 0,       /* not a command: a message to send (arg = text) */
    SL_HELP, SL_CLEAR, SL_SYSTEM, SL_SET, SL_PROFILE, SL_STATS, SL_REGEN, SL_SAVE, SL_QUIT,
    SL_RAW, SL_COPY,   /* SL_COPY: ival = 0 last reply, N its N-th code block, -1 all */
    SL_ERROR,          /* err says what is wrong */
} ui_slash_kind;

typedef enum { SET_TEMP, SET_TOP_P, SET_TOP_K, SET_MIN_P, SET_SEED, SET_N_PREDICT } ui_set_key;

typedef struct ui_slash {
    ui_slash_kind kind;
    const char *arg;   /* points into the parsed line: text after the command, trimmed */
    size_t arg_len;
    ui_set_key key;    /* SL_SET */
    double fval;       /* temp, top_p, min_p */
    long long ival;    /* top_k, n_predict */
    uint64_t uval;     /* seed */
    char err[256];
} ui_slash;

/* Parses one input line.  "//text" sends "/text" as a message. */
void ui_slash_parse(const char *line, ui_slash *out);

/* The command names, for /help and completion ("/help", ...). */
extern const char *const ui_slash_names[];
/* One line per command for /help. */
extern const char *const ui_slash_help[];

/* Tab completion of `line` (a command being typed).  Fills out with the
   line extended by the candidates' common prefix (plus a space when
   there is exactly one) and list with the candidates separated by
   spaces.  Returns the number of candidates. */
int ui_slash_complete(const char *line, const char *const *profiles, int n_profiles,
                      char *out, size_t cap, char *list, size_t list_cap);

#endif
