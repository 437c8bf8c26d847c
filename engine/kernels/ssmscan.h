/* The selective scan of a Mamba-2 head (run/mamba2.c) over a pass's
   tokens, one float order on every ISA (the scalar path with fmaf, the
   SIMD paths with their fused multiply-adds): the logits do not depend on
   the CPU. */
#ifndef EMBER_SSMSCAN_H
#define EMBER_SSMSCAN_H

#include <stddef.h>

typedef struct {
    float *S;                   /* the head's state: head_dim rows of d_state, row p at S + p d_state */
    int P, N, n;                /* head_dim, d_state, tokens */
    const float *x;             /* token t's head_dim inputs at + t * stride */
    const float *B, *C;         /* token t's d_state values of its group at + t * stride */
    size_t stride;
    const float *dt, *dA;       /* token t's step softplus(dt + bias) and decay exp(step A) at + t * dt_stride */
    size_t dt_stride;
    float *y;                   /* token t's head_dim outputs at + t * y_stride */
    size_t y_stride;
} ember_ssm_args;

/* For each token in order, per row p of the state:
     S[p][j] = fma(B[j], x[p] dt, S[p][j] dA)
     y[p] = sum_j S[p][j] C[j]: 16 lanes (lane l takes j = l, l + 16, ...,
            each a chain of fused multiply-adds), then ember_ref_sum16's tree */
void ember_ssm_scan(const ember_ssm_args *a);
/* The scalar path alone: the order the SIMD paths keep (tests) */
void ember_ssm_scan_scalar(const ember_ssm_args *a);

#endif
