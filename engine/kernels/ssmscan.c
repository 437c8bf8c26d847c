/* The Mamba-2 selective scan (ssmscan.h): a scalar path that fixes the
   float order and AVX2 / AVX-512 paths that keep it.  A row of the state
   stays in registers while the pass's tokens go by (prefill reads the
   state once, not once a token). */
#include "config.h"

#include <math.h>
#include <pthread.h>

#include "ssmscan.h"
#include "kernels.h"
#include "refnum.h"
#include "simd.h"

void ember_ssm_scan_scalar(const ember_ssm_args *a)
{
    for (int p = 0; p < a->P; p++) {
        float *s = a->S + (size_t)p * a->N;
        for (int t = 0; t < a->n; t++) {
            const float *B = a->B + (size_t)t * a->stride, *C = a->C + (size_t)t * a->stride;
            const float dA = a->dA[(size_t)t * a->dt_stride];
            const float xdt = a->x[(size_t)t * a->stride + p] * a->dt[(size_t)t * a->dt_stride];
            float lane[16] = {0};
            for (int j = 0; j < a->N; j++) {
                s[j] = fmaf(B[j], xdt, s[j] * dA);
                lane[j & 15] = fmaf(s[j], C[j], lane[j & 15]);
            }
            a->y[(size_t)t * a->y_stride + p] = ember_ref_sum16(lane);
        }
    }
}

#ifdef EMBER_SIMD
/* ember_ref_sum16's tree of 8 lanes t (lanes 8-15 added to 0-7 before):
   t[i + 4] + t[i], then (u0 + u2) + (u1 + u3) */
static EMBER_TARGET_AVX2 inline float tree8(__m256 t)
{
    const __m128 u = _mm_add_ps(_mm256_extractf128_ps(t, 1), _mm256_castps256_ps128(t));
    const __m128 w = _mm_add_ps(u, _mm_movehl_ps(u, u));
    return _mm_cvtss_f32(_mm_add_ss(w, _mm_shuffle_ps(w, w, 1)));
}

static EMBER_TARGET_AVX512 inline float sum16_512(__m512 v)
{
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return tree8(_mm256_add_ps(hi, _mm512_castps512_ps256(v)));
}

/* AVX-512, d_state a multiple of 16 up to 256: a row in 16 registers at most */
static EMBER_TARGET_AVX512 void scan_avx512(const ember_ssm_args *a)
{
    const int nv = a->N / 16;
    __m512 s[16];
    for (int p = 0; p < a->P; p++) {
        float *row = a->S + (size_t)p * a->N;
        for (int j = 0; j < nv; j++) s[j] = _mm512_loadu_ps(row + 16 * j);
        for (int t = 0; t < a->n; t++) {
            const float *B = a->B + (size_t)t * a->stride, *C = a->C + (size_t)t * a->stride;
            const __m512 dA = _mm512_set1_ps(a->dA[(size_t)t * a->dt_stride]);
            const __m512 xdt = _mm512_set1_ps(a->x[(size_t)t * a->stride + p] * a->dt[(size_t)t * a->dt_stride]);
            __m512 acc = _mm512_setzero_ps();
            for (int j = 0; j < nv; j++) {
                s[j] = _mm512_fmadd_ps(_mm512_loadu_ps(B + 16 * j), xdt, _mm512_mul_ps(s[j], dA));
                acc = _mm512_fmadd_ps(s[j], _mm512_loadu_ps(C + 16 * j), acc);
            }
            a->y[(size_t)t * a->y_stride + p] = sum16_512(acc);
        }
        for (int j = 0; j < nv; j++) _mm512_storeu_ps(row + 16 * j, s[j]);
    }
}

/* AVX2, d_state a multiple of 16 up to 96: a row in 12 registers at most,
   lanes 0-7 and 8-15 in two accumulators */
static EMBER_TARGET_AVX2 void scan_avx2(const ember_ssm_args *a)
{
    const int nv = a->N / 8;
    __m256 s[12];
    for (int p = 0; p < a->P; p++) {
        float *row = a->S + (size_t)p * a->N;
        for (int j = 0; j < nv; j++) s[j] = _mm256_loadu_ps(row + 8 * j);
        for (int t = 0; t < a->n; t++) {
            const float *B = a->B + (size_t)t * a->stride, *C = a->C + (size_t)t * a->stride;
            const __m256 dA = _mm256_set1_ps(a->dA[(size_t)t * a->dt_stride]);
            const __m256 xdt = _mm256_set1_ps(a->x[(size_t)t * a->stride + p] * a->dt[(size_t)t * a->dt_stride]);
            __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int j = 0; j < nv; j++) {
                s[j] = _mm256_fmadd_ps(_mm256_loadu_ps(B + 8 * j), xdt, _mm256_mul_ps(s[j], dA));
                acc[j & 1] = _mm256_fmadd_ps(s[j], _mm256_loadu_ps(C + 8 * j), acc[j & 1]);
            }
            a->y[(size_t)t * a->y_stride + p] = tree8(_mm256_add_ps(acc[1], acc[0]));
        }
        for (int j = 0; j < nv; j++) _mm256_storeu_ps(row + 8 * j, s[j]);
    }
}

/* AVX2 for wider states (d_state a multiple of 16): the row through memory */
static EMBER_TARGET_AVX2 void scan_avx2_wide(const ember_ssm_args *a)
{
    for (int p = 0; p < a->P; p++) {
        float *row = a->S + (size_t)p * a->N;
        for (int t = 0; t < a->n; t++) {
            const float *B = a->B + (size_t)t * a->stride, *C = a->C + (size_t)t * a->stride;
            const __m256 dA = _mm256_set1_ps(a->dA[(size_t)t * a->dt_stride]);
            const __m256 xdt = _mm256_set1_ps(a->x[(size_t)t * a->stride + p] * a->dt[(size_t)t * a->dt_stride]);
            __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
            for (int j = 0; j < a->N / 8; j++) {
                const __m256 sv = _mm256_fmadd_ps(_mm256_loadu_ps(B + 8 * j), xdt, _mm256_mul_ps(_mm256_loadu_ps(row + 8 * j), dA));
                _mm256_storeu_ps(row + 8 * j, sv);
                acc[j & 1] = _mm256_fmadd_ps(sv, _mm256_loadu_ps(C + 8 * j), acc[j & 1]);
            }
            a->y[(size_t)t * a->y_stride + p] = tree8(_mm256_add_ps(acc[1], acc[0]));
        }
    }
}
#endif

typedef void (*scan_fn)(const ember_ssm_args *a);
static scan_fn scan_reg, scan_mem;   /* NULL: scalar only */
static int scan_reg_max;             /* the widest state scan_reg holds in registers */
static pthread_once_t scan_once = PTHREAD_ONCE_INIT;

static void scan_pick(void)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) scan_reg = scan_avx512, scan_reg_max = 256, scan_mem = scan_avx2_wide;
    else if (ember_cpu_isa() >= EMBER_ISA_AVX2) scan_reg = scan_avx2, scan_reg_max = 96, scan_mem = scan_avx2_wide;
#endif
}

void ember_ssm_scan(const ember_ssm_args *a)
{
    pthread_once(&scan_once, scan_pick);
    /* the SIMD paths take states of whole 16-wide steps; the rest the
       scalar path, which computes the same bits */
    if (scan_reg && a->N % 16 == 0 && a->N <= scan_reg_max) scan_reg(a);
    else if (scan_mem && a->N % 16 == 0) scan_mem(a);
    else ember_ssm_scan_scalar(a);
}
