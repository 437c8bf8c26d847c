/* The delta rule of a gated delta-net head (run/deltanet.c) over a pass's
   tokens, one float order on every ISA (the scalar path with fmaf, the
   SIMD paths with their fused multiply-adds): the logits do not depend
   on the CPU. */
#ifndef EMBER_DELTARULE_H
#define EMBER_DELTARULE_H

#include <stddef.h>

typedef struct {
    float *S;                   /* the head's d x d state: column c (key dim c) at S + c d, one value per value dim */
    int d, n;                   /* head dim, tokens */
    const float *q, *k, *v;     /* token t's rows at + t * qkv_stride (q, k L2-normalised) */
    size_t qkv_stride;
    const float *b, *g;         /* token t's beta input and decay exponent at + t * bg_stride */
    size_t bg_stride;
    float *o;                   /* token t's output at + t * o_stride */
    size_t o_stride;
} ember_delta_args;

/* For each token in order, with beta = sigmoid(b), decay = exp(min(g, 50)),
   scale = 1 / sqrt(d):
     u = fma(v, beta, -(S^T k * (beta decay)))
     o = fma(u, (k . q) scale, S^T q * (decay scale))
     S = clamp(fma(k u^T, 1, S * decay), -1e6, 1e6)
   S^T k and S^T q summed over the key dims in order, k . q over 16 lanes
   then ember_ref_sum16's tree. */
void ember_delta_rule(const ember_delta_args *a);
/* The scalar path alone: the order the SIMD paths keep (tests) */
void ember_delta_rule_scalar(const ember_delta_args *a);

#endif
