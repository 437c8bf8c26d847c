/* /info: what the chat runs on -- model, architecture, the chat template
   in use (the model's own or the named fallback), context, profile. */
#ifndef EMBER_UI_INFO_H
#define EMBER_UI_INFO_H

#include <stddef.h>

typedef struct ui_info {
    const char *model, *arch, *tmpl, *profile, *plan;   /* NULL or "": unknown / none */
    int n_ctx, n_past;                                  /* n_past < 0: not known yet */
    const char *think;                                  /* --think's word; NULL: auto */
} ui_info;

/* The lines /info prints (no trailing newline). */
void ui_info_text(const ui_info *in, char *buf, size_t cap);

#endif
