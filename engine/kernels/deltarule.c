/* The delta rule (deltarule.h): a scalar path that fixes the float order
   and AVX2 / AVX-512 paths that keep it.  The state is swept once a token:
   the update of token t and the products S^T k, S^T q of token t + 1 share
   the sweep (the same operations in the same order as two sweeps). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "deltarule.h"
#include "kernels.h"
#include "refnum.h"
#include "simd.h"

#define DR_MAX 4096   /* the widest head a stack row holds */

static inline float clampf(float y) { return y < -1e6f ? -1e6f : y > 1e6f ? 1e6f : y; }

/* k . q over 16 lanes (lane l takes the dims l, l + 16, ...), then the tree */
static float dot16(const float *k, const float *q, int d)
{
    float lane[16] = {0};
    for (int i = 0; i < d; i++) lane[i & 15] = fmaf(k[i], q[i], lane[i & 15]);
    return ember_ref_sum16(lane);
}

/* Token t's rows and gates: beta = sigmoid(b), decay = exp(min(g, 50)) */
typedef struct {
    const float *q, *k, *v;
    float *o;
    float beta, decay;
} dr_token;

static inline dr_token token_at(const ember_delta_args *a, int t)
{
    const size_t in = (size_t)t * a->qkv_stride;
    return (dr_token){a->q + in, a->k + in, a->v + in, a->o + (size_t)t * a->o_stride,
                      1.0f / (1.0f + expf(-a->b[(size_t)t * a->bg_stride])),
                      expf(fminf(a->g[(size_t)t * a->bg_stride], 50.0f))};
}

void ember_delta_rule_scalar(const ember_delta_args *a)
{
    const int d = a->d;
    const float scale = 1.0f / sqrtf((float)d);
    float vp[DR_MAX], ov[DR_MAX];
    for (int t = 0; t < a->n; t++) {
        const dr_token tk = token_at(a, t);
        const float *q = tk.q, *k = tk.k, *v = tk.v, beta = tk.beta, decay = tk.decay;
        float *o = tk.o;
        const float att = dot16(k, q, d) * scale;
        for (int r = 0; r < d; r++) vp[r] = ov[r] = 0.0f;
        for (int c = 0; c < d; c++) {
            const float *s = a->S + (size_t)c * d;
            for (int r = 0; r < d; r++) {
                vp[r] = fmaf(s[r], k[c], vp[r]);
                ov[r] = fmaf(s[r], q[c], ov[r]);
            }
        }
        const float c2 = beta * decay, c3 = decay * scale;
        for (int r = 0; r < d; r++) {
            vp[r] = fmaf(v[r], beta, -(vp[r] * c2));   /* u */
            o[r] = fmaf(vp[r], att, ov[r] * c3);
        }
        for (int c = 0; c < d; c++) {
            float *s = a->S + (size_t)c * d;
            for (int r = 0; r < d; r++) s[r] = clampf(fmaf(vp[r], k[c], s[r] * decay));
        }
    }
}

#ifdef EMBER_SIMD
/* AVX-512, d a multiple of 16 up to 128 (registers hold a row of u, S^T k
   and S^T q): the update of token t fused with the products of t + 1 */
static EMBER_TARGET_AVX512 void rule_avx512(const ember_delta_args *a)
{
    const int d = a->d, nv = d / 16;
    const float scale = 1.0f / sqrtf((float)d);
    __m512 vp[8], ov[8], u[8];
    const __m512 lo = _mm512_set1_ps(-1e6f), hi = _mm512_set1_ps(1e6f);
    /* token 0's products: a sweep of its own */
    for (int j = 0; j < nv; j++) vp[j] = ov[j] = _mm512_setzero_ps();
    for (int c = 0; c < d; c++) {
        const float *s = a->S + (size_t)c * d;
        const __m512 kc = _mm512_set1_ps(a->k[c]), qc = _mm512_set1_ps(a->q[c]);
        for (int j = 0; j < nv; j++) {
            const __m512 sv = _mm512_loadu_ps(s + 16 * j);
            vp[j] = _mm512_fmadd_ps(sv, kc, vp[j]);
            ov[j] = _mm512_fmadd_ps(sv, qc, ov[j]);
        }
    }
    for (int t = 0; t < a->n; t++) {
        const dr_token tk = token_at(a, t);
        const float *q = tk.q, *k = tk.k, *v = tk.v, beta = tk.beta, decay = tk.decay;
        float *o = tk.o;
        __m512 acc = _mm512_setzero_ps();
        for (int i = 0; i < d; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(k + i), _mm512_loadu_ps(q + i), acc);
        float lane[16];
        _mm512_storeu_ps(lane, acc);
        const float att = ember_ref_sum16(lane) * scale;
        const __m512 vb = _mm512_set1_ps(beta), c2 = _mm512_set1_ps(beta * decay), c3 = _mm512_set1_ps(decay * scale);
        const __m512 va = _mm512_set1_ps(att), vd = _mm512_set1_ps(decay);
        for (int j = 0; j < nv; j++) {
            u[j] = _mm512_fmsub_ps(_mm512_loadu_ps(v + 16 * j), vb, _mm512_mul_ps(vp[j], c2));
            _mm512_storeu_ps(o + 16 * j, _mm512_fmadd_ps(u[j], va, _mm512_mul_ps(ov[j], c3)));
        }
        const bool next = t + 1 < a->n;
        const float *kn = next ? k + a->qkv_stride : k, *qn = next ? q + a->qkv_stride : q;
        for (int j = 0; j < nv; j++) vp[j] = ov[j] = _mm512_setzero_ps();
        for (int c = 0; c < d; c++) {
            float *s = a->S + (size_t)c * d;
            const __m512 kc = _mm512_set1_ps(k[c]);
            const __m512 kn_c = _mm512_set1_ps(next ? kn[c] : 0.0f), qn_c = _mm512_set1_ps(next ? qn[c] : 0.0f);
            for (int j = 0; j < nv; j++) {
                __m512 sv = _mm512_fmadd_ps(u[j], kc, _mm512_mul_ps(_mm512_loadu_ps(s + 16 * j), vd));
                sv = _mm512_min_ps(_mm512_max_ps(sv, lo), hi);
                _mm512_storeu_ps(s + 16 * j, sv);
                vp[j] = _mm512_fmadd_ps(sv, kn_c, vp[j]);
                ov[j] = _mm512_fmadd_ps(sv, qn_c, ov[j]);
            }
        }
    }
}

/* AVX2, d a multiple of 16: value dims in chunks of 32 (4 registers each
   of u, S^T k, S^T q), each chunk its own sweep over the key dims */
static EMBER_TARGET_AVX2 void rule_avx2(const ember_delta_args *a)
{
    const int d = a->d;
    const float scale = 1.0f / sqrtf((float)d);
    const __m256 lo = _mm256_set1_ps(-1e6f), hi = _mm256_set1_ps(1e6f);
    float vpb[DR_MAX], ovb[DR_MAX];
    for (int t = 0; t < a->n; t++) {
        const dr_token tk = token_at(a, t);
        const float *q = tk.q, *k = tk.k, *v = tk.v, beta = tk.beta, decay = tk.decay;
        float *o = tk.o;
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (int i = 0; i < d; i += 16) {
            acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(k + i), _mm256_loadu_ps(q + i), acc0);
            acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(k + i + 8), _mm256_loadu_ps(q + i + 8), acc1);
        }
        float lane[16];
        _mm256_storeu_ps(lane, acc0);
        _mm256_storeu_ps(lane + 8, acc1);
        const float att = ember_ref_sum16(lane) * scale;
        for (int r0 = 0; r0 < d; r0 += 16) {
            __m256 vp0 = _mm256_setzero_ps(), vp1 = vp0, ov0 = vp0, ov1 = vp0;
            for (int c = 0; c < d; c++) {
                const float *s = a->S + (size_t)c * d + r0;
                const __m256 kc = _mm256_set1_ps(k[c]), qc = _mm256_set1_ps(q[c]);
                const __m256 s0 = _mm256_loadu_ps(s), s1 = _mm256_loadu_ps(s + 8);
                vp0 = _mm256_fmadd_ps(s0, kc, vp0);
                vp1 = _mm256_fmadd_ps(s1, kc, vp1);
                ov0 = _mm256_fmadd_ps(s0, qc, ov0);
                ov1 = _mm256_fmadd_ps(s1, qc, ov1);
            }
            _mm256_storeu_ps(vpb + r0, vp0);
            _mm256_storeu_ps(vpb + r0 + 8, vp1);
            _mm256_storeu_ps(ovb + r0, ov0);
            _mm256_storeu_ps(ovb + r0 + 8, ov1);
        }
        const __m256 vb = _mm256_set1_ps(beta), c2 = _mm256_set1_ps(beta * decay), c3 = _mm256_set1_ps(decay * scale);
        const __m256 va = _mm256_set1_ps(att), vd = _mm256_set1_ps(decay);
        for (int r = 0; r < d; r += 8) {
            const __m256 u = _mm256_fmsub_ps(_mm256_loadu_ps(v + r), vb, _mm256_mul_ps(_mm256_loadu_ps(vpb + r), c2));
            _mm256_storeu_ps(vpb + r, u);
            _mm256_storeu_ps(o + r, _mm256_fmadd_ps(u, va, _mm256_mul_ps(_mm256_loadu_ps(ovb + r), c3)));
        }
        for (int r0 = 0; r0 < d; r0 += 32) {
            const int w = d - r0 >= 32 ? 4 : (d - r0) / 8;
            __m256 u[4];
            for (int j = 0; j < w; j++) u[j] = _mm256_loadu_ps(vpb + r0 + 8 * j);
            for (int c = 0; c < d; c++) {
                float *s = a->S + (size_t)c * d + r0;
                const __m256 kc = _mm256_set1_ps(k[c]);
                for (int j = 0; j < w; j++) {
                    __m256 sv = _mm256_fmadd_ps(u[j], kc, _mm256_mul_ps(_mm256_loadu_ps(s + 8 * j), vd));
                    _mm256_storeu_ps(s + 8 * j, _mm256_min_ps(_mm256_max_ps(sv, lo), hi));
                }
            }
        }
    }
}
#endif

typedef void (*rule_fn)(const ember_delta_args *a);
static rule_fn rule_simd;   /* NULL: scalar only */
static int rule_max_d;      /* the widest head rule_simd takes */
static pthread_once_t rule_once = PTHREAD_ONCE_INIT;

static void rule_pick(void)
{
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) rule_simd = rule_avx512, rule_max_d = 128;
    else if (ember_cpu_isa() >= EMBER_ISA_AVX2) rule_simd = rule_avx2, rule_max_d = DR_MAX;
#endif
}

void ember_delta_rule(const ember_delta_args *a)
{
    pthread_once(&rule_once, rule_pick);
    /* the SIMD paths take heads of whole 16-wide steps (AVX-512 keeps a
       row of the state in registers: up to 128); the rest the scalar path,
       which computes the same bits */
    if (rule_simd && a->d % 16 == 0 && a->d <= rule_max_d) rule_simd(a);
    else if (a->d <= DR_MAX) ember_delta_rule_scalar(a);
}
