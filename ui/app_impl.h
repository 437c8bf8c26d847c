/* State shared by the full-screen UI's files (app.c: events and keys,
   draw.c: painting, mempanel.c: the F3 panel). */
#ifndef EMBER_UI_APP_IMPL_H
#define EMBER_UI_APP_IMPL_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>

#include "app.h"
#include "chatlog.h"
#include "slash.h"
#include "input.h"
#include "statusbar.h"
#include "transcript.h"

#define MEM_SAMPLES 1024

typedef struct mem_sample {
    int64_t rss_kb, pss_file_kb, pss_anon_kb;
    char mark;                     /* phase letter or 0 */
} mem_sample;

enum { CP_USER = 1, CP_ASSIST, CP_NOTICE, CP_ERROR, CP_STATUS, CP_RSS, CP_FILE, CP_ANON, CP_DIM,
       /* replies' Markdown (draw.c's style table) */
       CP_MD_CODE, CP_MD_HEAD, CP_MD_MARK, CP_MD_LINK, CP_MD_CUT, CP_MD_BLOCK,
       CP_HL_KEYWORD, CP_HL_TYPE, CP_HL_STRING, CP_HL_COMMENT, CP_HL_NUMBER,
       CP_HL_ADDED, CP_HL_REMOVED, CP_HL_META };

typedef struct app {
    ui_config *cfg;
    ember_worker *w;
    ui_input *in;
    transcript tr;
    WINDOW *wt, *wm, *ws, *wi;     /* transcript, memory panel, status, input */
    int rows, cols;
    bool color, ascii, show_mem, dirty;
    bool raw;                      /* replies as plain text, not Markdown (/raw, F4) */
    bool show_think;               /* replies' <think> part unfolded (/think, F5) */
    /* conversation */
    char *system;
    int cur_assist;                /* entry receiving tokens, -1 when idle */
    ui_attach attach;              /* /read files waiting for the next message */
    double resized_ms;             /* last KEY_RESIZE (0: none pending): laid out again once settled */
    char model_path[4096];         /* the model /model loaded (cfg->model_path then points here) */
    bool model_switch;             /* the load under way is /model's */
    bool fetching;                 /* /model's download runs (cfg->fetch_poll) */
    char fetch_name[4096];         /* what /model was given for it */
    bool switch_pending;           /* F2 during a reply: switch once it has stopped */
    int pending_index;
    char pending_profile[128];
    int fresh_user;                /* the user entry this reply answers, if just typed (else -1) */
    bool gen_failed;               /* the running reply ended in an error before any token */
    bool generating;
    uint64_t gen_seq;
    int dropped;                   /* leading messages the worker dropped */
    chatlog log;                   /* the saved file's id and metadata (app_chats.c) */
    bool save_failed;              /* the last save failed (said once) */
    char save_err[1024];           /* why it failed */
    bool drop_unsaved;             /* /new, /clear or /load was told the conversation is unsaved */
    bool pack_note_said;           /* the pack cache's note was shown */
    /* status */
    char model[256], plan[512], profile[128], progress[256], flash[256];
    char tmpl[768], arch[32];      /* the chat template in use, the architecture (/info) */
    int n_ctx;                     /* the session's context */
    ui_status st;
    bool have_last;
    ember_stats last;              /* last finished turn */
    int last_tokens;
    /* profile switching */
    uint64_t load_seq;
    char load_profile[128];
    int load_index;
    /* memory panel */
    mem_sample mem[MEM_SAMPLES];
    int mem_n, mem_head;
    char pending_mark;
    /* keys */
    bool ctrl_c_armed, ctrl_c_was_armed;
    bool searching;
    char search[256];
    int search_pos;
    bool quit;
} app;

/* app.c's helpers for the files beside it */
void app_note(app *a, tr_role r, const char *msg);
void app_flash(app *a, const char *msg);
void app_set_system(app *a, const char *text, size_t n);
/* The conversation as the model sees it (pointers into the transcript). */
ember_chat_msg *app_conversation(app *a, size_t *n);
/* Forgets the conversation (the worker's too); keeps the system prompt. */
void app_forget(app *a);
/* What keys do (app_keys.c calls them): send the input line, /help, F2, F4. */
void app_submit(app *a);
void app_show_help(app *a);
void app_cycle_profile(app *a);
void app_toggle_raw(app *a);
/* Ctrl-X Ctrl-E and /edit: the draft through the external editor. */
void app_edit_draft(app *a);
/* F5 and /think: the replies' thinking folded or shown. */
void app_toggle_think(app *a);
/* Esc during /model's download: stop it (the partial file is kept). */
void app_cancel_fetch(app *a);
/* A key read from curses (app_keys.c). */
void app_on_key(app *a, int r, wint_t ch);

/* The saved conversation (app_chats.c): reopening, saving after each
   turn, /new, /load, /chats, /save FILE.json. */
void chats_begin(app *a);
void chats_model_loaded(app *a);
void chats_turn_done(app *a);
/* Saves a reply still running as far as it got (marked stopped), or
   tries again a save that failed; false when the file still does not
   hold the conversation (the error is in the transcript). */
bool chats_settle(app *a);
void chats_end(app *a);
void chats_cmd_new(ui_host *h, const ui_slash *s);
void chats_cmd_load(ui_host *h, const ui_slash *s);
void chats_cmd_list(ui_host *h, const ui_slash *s);
int chats_save_json(app *a, const char *path, char *err, size_t cap);
/* The saved conversations' ids, newest first, for /load's completion:
   *ids is one malloc'd block (free it alone); the count. */
int chats_ids(const char ***ids);

void draw_all(app *a);
/* The colour pairs draw.c's Markdown styles use (after start_color). */
void draw_init_colors(void);
void draw_layout(app *a);
void mem_add(app *a, const ember_memstat *m);
void mem_draw(app *a, WINDOW *w);
/* Draws n bytes of UTF-8 at the cursor, at most maxcols columns; s starts
   a line of text (its tabs stop from there, ui_tab_width).  Returns the
   columns drawn. */
int draw_utf8(WINDOW *w, const char *s, size_t n, int maxcols);

#endif
