/* State shared by the full-screen UI's files (app.c: events and keys,
   draw.c: painting, mempanel.c: the F3 panel). */
#ifndef EMBER_UI_APP_IMPL_H
#define EMBER_UI_APP_IMPL_H

#include <curses.h>
#include <stdbool.h>
#include <stdint.h>

#include "app.h"
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
    bool generating;
    uint64_t gen_seq;
    int dropped;                   /* leading messages the worker dropped */
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

void draw_all(app *a);
/* The colour pairs draw.c's Markdown styles use (after start_color). */
void draw_init_colors(void);
void draw_layout(app *a);
void mem_add(app *a, const ember_memstat *m);
void mem_draw(app *a, WINDOW *w);
/* Draws n bytes of UTF-8 at the cursor, at most maxcols columns. */
void draw_utf8(WINDOW *w, const char *s, size_t n, int maxcols);

#endif
