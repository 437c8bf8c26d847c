/* KV cache rows: fp16 (the reference's cache, what the golden logits
   record) or Q8_0 (blocks of 32 int8 and an fp16 scale: 34 bytes where
   fp16 takes 64).  Attention reads a run of Q8_0 rows back as fp16 into a
   per-thread scratch and then takes the fp16 path unchanged (forward.c):
   one attention implementation, one float order, and the q8_0 cache costs
   only the rounding of its values, d * q rounded once to fp16. */
#include "config.h"

#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_simple.h"
#include "kv.h"
#include "refnum.h"
#include "session.h"
#include "simd.h"

static const char *const kv_names[EMBER_KV_TYPES] = {[EMBER_KV_F16] = "f16", [EMBER_KV_Q8_0] = "q8_0"};

const char *ember_kv_type_name(int t) { return t >= 0 && t < EMBER_KV_TYPES ? kv_names[t] : NULL; }

int ember_kv_type_from_name(const char *s)
{
    for (int i = 0; s && i < EMBER_KV_TYPES; i++)
        if (!strcmp(s, kv_names[i])) return i;
    return -1;
}

size_t ember_kv_row_bytes(ember_kv_type t, int hd)
{
    return t == EMBER_KV_Q8_0 ? (size_t)hd / 32 * sizeof(block_q8_0) : (size_t)hd * 2;
}

void ember_kv_store(ember_kv_type t, void *dst, const float *src, int hd)
{
    if (t != EMBER_KV_Q8_0) {
        ember_ref_to_f16(dst, src, hd);
        return;
    }
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        ember_q8_0_quantize_act_avx2(src, dst, hd);
        return;
    }
#endif
    ember_q8_0_quantize_act_scalar(src, dst, hd);
}

static void q8_to_f16_scalar(uint16_t *dst, const block_q8_0 *b, int nb)
{
    for (int i = 0; i < nb; i++) {
        const float d = ember_fp16_to_f32(b[i].d);
        for (int j = 0; j < 32; j++) dst[32 * i + j] = ember_f32_to_fp16(d * (float)b[i].qs[j]);
    }
}

#ifdef EMBER_SIMD
static EMBER_TARGET_AVX2 void q8_to_f16_avx2(uint16_t *dst, const block_q8_0 *b, int nb)
{
    for (int i = 0; i < nb; i++) {
        const __m256 d = _mm256_set1_ps(_cvtsh_ss(b[i].d));
        __m256i q = _mm256_loadu_si256((const __m256i *)b[i].qs);
        __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        __m128i part[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
        for (int j = 0; j < 4; j++) {
            __m256 f = _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(part[j])));
            /* d * q is finite: no NaN for the rounding to differ on */
            _mm_storeu_si128((__m128i *)(dst + 32 * i + 8 * j), _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
        }
    }
}

/* The read-back was a fifth of decode's time at 4096 positions of a 1B
   Llama (perf, Zen 5 VM): 8 lanes at a time and a call per block for the
   scale.  Here a block is two halves of 16 lanes. */
static EMBER_TARGET_AVX512 void q8_to_f16_avx512(uint16_t *dst, const block_q8_0 *b, int nb)
{
    for (int i = 0; i < nb; i++) {
        const __m512 d = _mm512_set1_ps(_cvtsh_ss(b[i].d));
        for (int j = 0; j < 2; j++) {
            const __m128i q = _mm_loadu_si128((const __m128i *)(b[i].qs + 16 * j));
            const __m512 f = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
            _mm256_storeu_si256((__m256i *)(dst + 32 * i + 16 * j), _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
        }
    }
}
#endif

void ember_kv_q8_to_f16(uint16_t *dst, const uint8_t *src, int nrows, int hd)
{
    const int nb = nrows * (hd / 32);   /* the rows are contiguous blocks */
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX512) {
        q8_to_f16_avx512(dst, (const block_q8_0 *)src, nb);
        return;
    }
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        q8_to_f16_avx2(dst, (const block_q8_0 *)src, nb);
        return;
    }
#endif
    q8_to_f16_scalar(dst, (const block_q8_0 *)src, nb);
}

/* The q8_0 rows of the chunk after [p0, p0 + EMBER_KV_CHUNK) asked for
   while this one is read back and used: the read-back is the rows' first
   touch, and chunk after chunk it waited on memory while the scores or
   sums of the last chunk ran with memory idle. */
static void q8_ask_next(const uint8_t *rows, int p0, int npos, size_t rb)
{
    const int p1 = p0 + EMBER_KV_CHUNK, n = npos - p1 < EMBER_KV_CHUNK ? npos - p1 : EMBER_KV_CHUNK;
    if (n <= 0) return;
    const char *c = (const char *)(rows + (size_t)p1 * rb);
    for (size_t o = 0; o < (size_t)n * rb; o += 64) __builtin_prefetch(c + o, 0, 2);
}

size_t ember_kv_q8_scratch(int group, int hd)
{
    /* a chunk's fp16 rows, then nh partial sums */
    return (size_t)EMBER_KV_CHUNK * (size_t)hd / 2 + (size_t)group * (size_t)hd + 16;
}

void ember_kv_q8_scores(float *sc, size_t sc_stride, const uint8_t *k, const uint16_t *q, int nh, int npos, int hd,
                        int gemm, float scale, float *mx, float *scratch)
{
    uint16_t *rows = (uint16_t *)scratch;
    const size_t rb = ember_kv_row_bytes(EMBER_KV_Q8_0, hd);
    float cmx[nh];
    for (int p0 = 0; p0 < npos; p0 += EMBER_KV_CHUNK) {
        const int n = npos - p0 < EMBER_KV_CHUNK ? npos - p0 : EMBER_KV_CHUNK;
        q8_ask_next(k, p0, npos, rb);
        ember_kv_q8_to_f16(rows, k + (size_t)p0 * rb, n, hd);
        ember_ref_scores_f16_heads(sc + p0, sc_stride, rows, (size_t)hd, q, (size_t)hd, nh, n, hd, gemm, scale,
                                   p0 ? cmx : mx);
        for (int i = 0; p0 && i < nh; i++)
            if (cmx[i] > mx[i]) mx[i] = cmx[i];
    }
}

/* 512 positions at a time, each chunk's V rows asked for into L2 first:
   the weighted sum reads them 64 rows apart (its lanes), a stride the
   prefetchers do not follow, and from memory ran at a third of the
   bandwidth (on the Zen 5 VM, one thread, 128 MiB of KV: the sum 11-15
   ms, prefetched 6.7-9.5).  Chunks of a multiple of 16 positions leave every
   score as one call gives it (each its own sum; only the tail past the
   last 16 is taken one by one, as there), and the maximum of the chunks'
   maxima is the maximum.  Rows past half of L2 (512 KiB) are not
   prefetched: they would be evicted before the sum reads them. */
#define VPF_CHUNK 512
#define VPF_MAX (512 * 1024)

void ember_kv_f16_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const uint16_t *q,
                             int nh, int npos, int hd, float scale, float *mx)
{
    if ((size_t)npos * (size_t)hd * 2 > VPF_MAX) {
        ember_ref_scores_f16_heads(sc, sc_stride, k, (size_t)hd, q, (size_t)hd, nh, npos, hd, 0, scale, mx);
        return;
    }
    float cmx[nh];
    for (int p0 = 0; p0 < npos; p0 += VPF_CHUNK) {
        const int n = npos - p0 < VPF_CHUNK ? npos - p0 : VPF_CHUNK;
        const char *vr = (const char *)(v + (size_t)p0 * (size_t)hd);
        for (size_t o = 0; o < (size_t)n * (size_t)hd * 2; o += 64) __builtin_prefetch(vr + o, 0, 2);
        ember_ref_scores_f16_heads(sc + p0, sc_stride, k + (size_t)p0 * (size_t)hd, (size_t)hd, q, (size_t)hd, nh, n,
                                   hd, 0, scale, p0 ? cmx : mx);
        for (int i = 0; p0 && i < nh; i++)
            if (cmx[i] > mx[i]) mx[i] = cmx[i];
    }
}

void ember_kv_q8_wsum(float *out, size_t out_stride, const float *w, size_t w_stride, int nh, const uint8_t *v,
                      int npos, int hd, int n_kv, int gemm, float *acc, float *scratch)
{
    uint16_t *rows = (uint16_t *)scratch;
    float *part = scratch + (size_t)EMBER_KV_CHUNK * (size_t)hd / 2 + 8;
    const size_t rb = ember_kv_row_bytes(EMBER_KV_Q8_0, hd);
    for (int p0 = 0; p0 < npos; p0 += EMBER_KV_CHUNK) {
        const int n = npos - p0 < EMBER_KV_CHUNK ? npos - p0 : EMBER_KV_CHUNK;
        /* a whole chunk is whole 64-position lanes; the last pads as the run would */
        const int nk = p0 + n < npos ? n : n_kv - p0;
        q8_ask_next(v, p0, npos, rb);
        ember_kv_q8_to_f16(rows, v + (size_t)p0 * rb, n, hd);
        ember_ref_wsum_f16_heads(p0 ? part : out, p0 ? (size_t)hd : out_stride, w + p0, w_stride, nh, rows,
                                 (size_t)hd, n, hd, nk, gemm, acc);
        for (int i = 0; p0 && i < nh; i++)
            for (int d = 0; d < hd; d++) out[(size_t)i * out_stride + (size_t)d] += part[(size_t)i * (size_t)hd + (size_t)d];
    }
}

int ember_kv_ring(const ember_model *m, int n_ctx, int ubatch)
{
    /* sliding layers in a ring where it is smaller than the context */
    return m->n_swa && 2 * ((size_t)m->n_swa + (size_t)ubatch) < (size_t)n_ctx ? m->n_swa + ubatch : 0;
}

int ember_kv_cap(const ember_model *m, int l, int ring, int n_ctx)
{
    const ember_layer *L = &m->layers[l];
    /* a layer that shares another's KV keeps none */
    return L->kv_src != l ? 0 : L->swa && ring ? 2 * ring : n_ctx;
}

int ember_ubatch(int requested)
{
    return requested >= 2 && requested < EMBER_UBATCH ? requested : EMBER_UBATCH;
}

size_t ember_kv_cache_bytes(const ember_model *m, int n_ctx, int kv_type, int ubatch)
{
    const int train = m->info.n_ctx_train;
    if (n_ctx <= 0) n_ctx = train < 4096 ? train : 4096;   /* as ember_session_new */
    if (n_ctx > train) n_ctx = train;
    const int ring = ember_kv_ring(m, n_ctx, ember_ubatch(ubatch));
    size_t n = 0;
    for (int l = 0; l < m->info.n_layer; l++) {
        const ember_layer *L = &m->layers[l];
        n += 2 * (size_t)L->n_head_kv * (size_t)ember_kv_cap(m, l, ring, n_ctx) *
             ember_kv_row_bytes((ember_kv_type)kv_type, L->head_dim);
    }
    return n;
}
