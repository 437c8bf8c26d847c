/* Token sampling: greedy, temperature, top-k, top-p, min-p, repetition
   penalty, seeded RNG. */
#ifndef EMBER_SAMPLER_H
#define EMBER_SAMPLER_H

#include <stdint.h>

typedef struct ember_sampler_opts {
    float temperature;     /* <= 0: greedy */
    int top_k;             /* <= 0: off */
    float top_p;           /* >= 1: off */
    float min_p;           /* <= 0: off */
    float repeat_penalty;  /* 1: off */
    int repeat_last_n;     /* tokens considered for the penalty */
    uint64_t seed;
} ember_sampler_opts;

typedef struct ember_sampler ember_sampler;

void ember_sampler_opts_default(ember_sampler_opts *o); /* temp 0.7, top_p 0.9, seed 0 ... */
ember_sampler *ember_sampler_new(const ember_sampler_opts *o, int n_vocab);
void ember_sampler_free(ember_sampler *s);
void ember_sampler_reset(ember_sampler *s, uint64_t seed);
/* Picks a token from logits (modified in place) and records it for the
   repetition penalty. */
int32_t ember_sampler_sample(ember_sampler *s, float *logits);
void ember_sampler_accept(ember_sampler *s, int32_t token);  /* prompt tokens */

/* FNV-1a 64 over token ids (u32 LE bytes) - the run hash. */
uint64_t ember_hash_tokens(const int32_t *ids, int n);

#endif
