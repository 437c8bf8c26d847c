/* The one-line status bar: what runs (model, profile, strategy, packing)
   and what it costs (tok/s, TTFT, context, RSS, PSS and its file part),
   all from ember_stats. */
#ifndef EMBER_UI_STATUSBAR_H
#define EMBER_UI_STATUSBAR_H

#include <stdbool.h>
#include <stddef.h>

#include "ember.h"

typedef struct ui_status {
    const char *model;             /* NULL or "" before a model is loaded */
    const char *profile;           /* NULL or "" without a profile */
    const char *tmpl;              /* the chat template in use (worker's name), NULL: not shown */
    bool demo;                     /* random-weight demo model */
    bool have_stats;
    bool live;                     /* generating: tok/s is the running rate */
    bool have_turn;                /* a turn finished: TTFT and average exist */
    const char *progress;          /* shown first while loading, else NULL */
    ember_stats st;
} ui_status;

/* "1.21 GiB", "812 MiB", "96.4 MiB", "512 KiB" */
void ui_fmt_kb(long long kb, char *out, size_t cap);

/* Writes the bar for `width` columns (NUL-terminated UTF-8, never wider
   than width).  When it does not fit, parts go in this order: the
   template, model name (a demo keeps "DEMO"), packing detail, TTFT, context, RSS, the
   PSS file part, profile name; then the text is cut.  ascii: plain separators for terminals
   without UTF-8.  Returns the width used. */
int ui_status_format(const ui_status *s, int width, bool ascii, char *out, size_t cap);

#endif
