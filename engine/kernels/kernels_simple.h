/* Internal: the simple-format kernels per ISA, registered by kernels_simple.c. */
#ifndef EMBER_KERNELS_SIMPLE_H
#define EMBER_KERNELS_SIMPLE_H

#include "kernels.h"

#define EMBER_MATMUL_ARGS const void *w, size_t row_bytes, int64_t k, int r0, int r1, \
    const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride

/* Q8_0 activation quantizers: every ISA writes the reference quantizer's
   bytes (ember_quantize_row(EMBER_Q8_0)), so results never depend on it. */
void ember_q8_0_quantize_act_scalar(const float *x, void *xq, int64_t k);
void ember_q8_0_quantize_act_avx2(const float *x, void *xq, int64_t k);
void ember_q8_0_quantize_act_avx512(const float *x, void *xq, int64_t k);
/* The same blocks as EMBER_ACT_Q8_0U rows (kernels.h), for the packed Q8_0
   AVX-512 kernel. */
void ember_q8_0u_quantize_act_avx512(const float *x, void *xq, int64_t k);
/* Q8_1 (Q4_1/Q5_1 activations): one quantizer for every ISA. */
void ember_q8_1_quantize_act(const float *x, void *xq, int64_t k);
void ember_f32_quantize_act(const float *x, void *xq, int64_t k);
/* EMBER_ACT_BF16R rows: f32 values rounded to bf16 (BF16 matrices). */
void ember_bf16r_quantize_act(const float *x, void *xq, int64_t k);

#define EMBER_DECLARE_SIMPLE(isa) \
    void ember_matmul_q8_0_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_q4_0_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_q4_0x8_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_q5_0_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_q4_1_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_q5_1_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_iq4_nl_##isa(EMBER_MATMUL_ARGS); \
    void ember_matmul_f32_##isa(EMBER_MATMUL_ARGS);  \
    void ember_matmul_f16_##isa(EMBER_MATMUL_ARGS);  \
    void ember_matmul_bf16_##isa(EMBER_MATMUL_ARGS);

EMBER_DECLARE_SIMPLE(scalar)
EMBER_DECLARE_SIMPLE(avx2)
EMBER_DECLARE_SIMPLE(avx512)

/* MXFP4: scalar and AVX2 (AVX-512 CPUs take the AVX2 kernel) */
void ember_matmul_mxfp4_scalar(EMBER_MATMUL_ARGS);
void ember_matmul_mxfp4_avx2(EMBER_MATMUL_ARGS);

#endif
