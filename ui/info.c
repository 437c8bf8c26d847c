/* /info's text (info.h), shared by the full-screen UI and plain mode. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "info.h"

static const char *or_else(const char *s, const char *dflt) { return s && *s ? s : dflt; }

void ui_info_text(const ui_info *in, char *buf, size_t cap)
{
    char ctx[96];
    if (in->n_ctx <= 0) snprintf(ctx, sizeof ctx, "not known yet");
    else if (in->n_past < 0) snprintf(ctx, sizeof ctx, "%d tokens", in->n_ctx);
    else snprintf(ctx, sizeof ctx, "%d tokens, %d in use", in->n_ctx, in->n_past);
    snprintf(buf, cap,
             "model: %s\n"
             "architecture: %s\n"
             "template: %s\n"
             "reasoning: %s\n"
             "context: %s\n"
             "profile: %s\n"
             "plan: %s",
             or_else(in->model, "none loaded"), or_else(in->arch, "unknown"), or_else(in->tmpl, "not known yet"),
             !in->think || !strcmp(in->think, "auto") ? "auto (as the template decides; /set reasoning on|off)" : in->think,
             ctx,
             or_else(in->profile, "none (defaults)"), or_else(in->plan, "--"));
}
