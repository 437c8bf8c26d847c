/* A causal depthwise convolution's row (conv1d.h): fmaf in the scalar
   path, the SIMD paths' fused multiply-adds, the same bits. */
#include "config.h"

#include <math.h>
#include <pthread.h>

#include "conv1d.h"
#include "kernels.h"
#include "simd.h"

void ember_conv1d_row_scalar(float *out, const float *const *in, const float *w, int k, int C)
{
    for (int c = 0; c < C; c++) {
        float acc = 0.0f;
        for (int i = 0; i < k; i++) acc = fmaf(in[i][c], w[(size_t)i * C + c], acc);
        out[c] = acc;
    }
}

#ifdef EMBER_SIMD
static EMBER_TARGET_AVX512 void row_avx512(float *out, const float *const *in, const float *w, int k, int C)
{
    int c = 0;
    for (; c + 16 <= C; c += 16) {
        __m512 acc = _mm512_setzero_ps();
        for (int i = 0; i < k; i++) acc = _mm512_fmadd_ps(_mm512_loadu_ps(in[i] + c), _mm512_loadu_ps(w + (size_t)i * C + c), acc);
        _mm512_storeu_ps(out + c, acc);
    }
    for (; c < C; c++) {
        float acc = 0.0f;
        for (int i = 0; i < k; i++) acc = fmaf(in[i][c], w[(size_t)i * C + c], acc);
        out[c] = acc;
    }
}

static EMBER_TARGET_AVX2 void row_avx2(float *out, const float *const *in, const float *w, int k, int C)
{
    int c = 0;
    for (; c + 8 <= C; c += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int i = 0; i < k; i++) acc = _mm256_fmadd_ps(_mm256_loadu_ps(in[i] + c), _mm256_loadu_ps(w + (size_t)i * C + c), acc);
        _mm256_storeu_ps(out + c, acc);
    }
    for (; c < C; c++) {
        float acc = 0.0f;
        for (int i = 0; i < k; i++) acc = fmaf(in[i][c], w[(size_t)i * C + c], acc);
        out[c] = acc;
    }
}
#endif

typedef void (*row_fn)(float *out, const float *const *in, const float *w, int k, int C);
static row_fn row_pick_fn = ember_conv1d_row_scalar;
static pthread_once_t row_once = PTHREAD_ONCE_INIT;

static void row_pick(void)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) row_pick_fn = row_avx512;
    else if (ember_cpu_isa() >= EMBER_ISA_AVX2) row_pick_fn = row_avx2;
#endif
}

void ember_conv1d_row(float *out, const float *const *in, const float *w, int k, int C)
{
    pthread_once(&row_once, row_pick);
    row_pick_fn(out, in, w, k, C);
}
