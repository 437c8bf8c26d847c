/* ember synth: random-weight models with real layouts and metadata. */
#ifndef EMBER_SYNTH_H
#define EMBER_SYNTH_H

#include <stdint.h>

#include "ember.h"

typedef struct {
    const char *out;      /* output path (written atomically) */
    const char *like;     /* "tiny", "llama-3.2-1b", "qwen2.5-0.5b" */
    const char *dtype;    /* "F16", "Q8_0", "Q4_K_M", "Q6_K"; NULL = Q8_0 */
    const char *vocab;    /* GGUF whose tokenizer.* keys are copied, or NULL */
    const char *chat_template; /* tokenizer.chat_template to write instead, or NULL */
    uint64_t seed;
    int threads;          /* <= 0: one per core */
    int verbose;          /* progress on stderr */
    int untied;           /* write output.weight even where the shape ties it to
                             token_embd (for programs that require one) */
} synth_opts;

/* Returns 0, or -1 with err filled (nothing is left at o->out on error). */
int synth_write(const synth_opts *o, ember_err *err);

#endif
