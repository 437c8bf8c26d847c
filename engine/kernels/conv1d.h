/* One token's row of a causal depthwise convolution (the short
   convolutions and Mamba-2's, run/shortconv.c and run/mamba2.c): each
   channel's taps summed oldest first in a chain of fused multiply-adds
   from 0, as the reference's ssm_conv computes them, the same bits on
   every ISA. */
#ifndef EMBER_CONV1D_H
#define EMBER_CONV1D_H

/* out[c] = fma(in[k-1][c], w[(k-1) C + c], ... fma(in[0][c], w[c], 0)) for c < C */
void ember_conv1d_row(float *out, const float *const *in, const float *w, int k, int C);
/* The scalar path alone (tests) */
void ember_conv1d_row_scalar(float *out, const float *const *in, const float *w, int k, int C);

#endif
