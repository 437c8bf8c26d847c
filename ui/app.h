/* The chat front ends: full-screen ncurses (ui_app_run) and the plain
   line mode for pipes (ui_plain_run).  Both drive an ember_worker. */
#ifndef EMBER_UI_APP_H
#define EMBER_UI_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "attach.h"
#include "options.h"
#include "ember.h"

typedef struct ui_config {
    const ember_worker_backend *backend;
    const char *model_path;
    bool demo;                     /* random-weight demo model: say so */
    const char *system;            /* initial system prompt or NULL */
    gen_opts gen;                  /* sampling and n_predict in use (-1: no limit) */
    /* Profiles to cycle (F2); cur is the index in use, -1 none. */
    char **profiles;
    int n_profiles, cur_profile;
    /* Resolves a profile name for this model into what to load; *gen
       holds the values in use and receives the resolved ones.  0, or -1
       with err.  NULL: no profiles. */
    int (*resolve)(void *ctx, const char *profile, ember_worker_load *out, gen_opts *gen,
                   char *err, size_t errcap);
    void *ctx;
    ember_worker_load load;        /* the first load (profile already applied) */
    /* /model NAME: makes NAME (a path, a name `ember models` lists, hf:USER/REPO
       already cached) the model the next resolve loads; its path into path.
       0, 1 when NAME is an hf: reference the cache lacks (fetch_start gets
       it), or -1 with err.  NULL: no other models (the fake engine). */
    int (*set_model)(void *ctx, const char *name, char *path, size_t pathcap, char *err, size_t errcap);
    /* The names /model knows (for the list and Tab), malloc'd array of
       malloc'd strings; the count. */
    int (*model_names)(void *ctx, char ***names);
    /* /model hf:USER/REPO[:QUANT] not in the cache (set_model returned 1):
       its download, on a thread of its own.  fetch_start: 0, or -1 with
       err.  fetch_poll: 0 while it runs (status: a line for the status
       bar), 1 done (the file's path), -1 failed or cancelled (err).
       fetch_cancel: stop it (the partial file is kept for a resume).
       NULL: no downloads. */
    int (*fetch_start)(void *ctx, const char *name, char *err, size_t errcap);
    int (*fetch_poll)(void *ctx, char *status, size_t scap, char *path, size_t pcap, char *err, size_t ecap);
    void (*fetch_cancel)(void *ctx);
    ui_attach attach;              /* files (-f) for the first message; the front end takes them */
    const char *oneshot;           /* plain mode: send this one message, print the reply, exit */
    struct chatlog *resume;        /* a saved conversation to reopen (-c, --resume), or NULL */
    const char *resume_notes;      /* what finding it said (damaged files skipped), a line each, or NULL */
    bool keep_screen;              /* print the last screenful on leaving (--no-keep-screen) */
    bool show_think;               /* replies' <think> part shown, not folded (--think show) */
} ui_config;

/* Full-screen chat; returns the exit status. */
int ui_app_run(ui_config *cfg);
/* Plain mode: a line in, the reply streamed to stdout, stats to stderr. */
int ui_plain_run(ui_config *cfg);

#endif
