/* K-quant kernels (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS x Q8_K): every ISA this CPU runs must be
   bit-identical to the scalar oracle, and the oracle must agree with
   dequantize-then-dot (exactly up to float rounding against the quantized
   activation, within 1e-3 of norm against the original one).  Matrices mix
   ordinary quantized blocks with zero, saturated, negative-min and
   subnormal-scale blocks. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "tap.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static float frand(void) { return (float)(rnd() & 0xffffff) / 16777216.0f; }

static float gauss(void)
{
    float u = frand() + 1e-7f, v = frand();
    return sqrtf(-2 * logf(u)) * cosf(6.2831853f * v);
}

/* Overwrites block b of a row with one of the edge cases. */
static void special_block(int wt, uint8_t *blk, int kind)
{
    switch (wt) {
    case EMBER_Q4_K:
    case EMBER_Q5_K: {
        uint16_t d, dm;
        memcpy(&d, blk, 2);
        memcpy(&dm, blk + 2, 2);
        size_t bytes = wt == EMBER_Q4_K ? sizeof(block_q4_K) : sizeof(block_q5_K);
        if (kind == 0) {
            memset(blk, 0, bytes);
        } else if (kind == 1) {              /* every quant, scale and min at its top */
            memset(blk + 4, 0xff, bytes - 4);
            d = ember_f32_to_fp16(0.02f);
            dm = ember_f32_to_fp16(0.01f);
        } else if (kind == 2) {              /* negative mins: dmin < 0 */
            dm = (uint16_t)(dm | 0x8000);
        } else {                             /* subnormal fp16 scales */
            d = 0x0003;
            dm = 0x8201;
        }
        if (kind) {
            memcpy(blk, &d, 2);
            memcpy(blk + 2, &dm, 2);
        }
        break;
    }
    case EMBER_Q2_K: {
        block_q2_K *b = (block_q2_K *)(void *)blk;
        if (kind == 0) {
            memset(b, 0, sizeof *b);
        } else if (kind == 1) {              /* every quant, scale and min at its top */
            memset(b->scales, 0xff, sizeof b->scales);
            memset(b->qs, 0xff, sizeof b->qs);
            b->d = ember_f32_to_fp16(0.02f);
            b->dmin = ember_f32_to_fp16(0.01f);
        } else if (kind == 2) {              /* negative mins */
            b->dmin = (uint16_t)(b->dmin | 0x8000);
        } else {
            b->d = 0x0003;
            b->dmin = 0x8201;
        }
        break;
    }
    case EMBER_Q3_K: {
        block_q3_K *b = (block_q3_K *)(void *)blk;
        if (kind == 0) {                     /* all quants -4, all scales -32, d 0 */
            memset(b, 0, sizeof *b);
        } else if (kind == 1) {              /* quants 3, scales 31 */
            memset(b->hmask, 0xff, sizeof b->hmask);
            memset(b->qs, 0xff, sizeof b->qs);
            memset(b->scales, 0xff, sizeof b->scales);
            b->d = ember_f32_to_fp16(0.003f);
        } else if (kind == 2) {              /* quants -4 under the block's scales */
            memset(b->hmask, 0, sizeof b->hmask);
            memset(b->qs, 0, sizeof b->qs);
        } else {
            b->d = 0x83ff;
        }
        break;
    }
    case EMBER_Q6_K: {
        block_q6_K *b = (block_q6_K *)(void *)blk;
        if (kind == 0) {
            memset(b, 0, sizeof *b);
        } else if (kind == 1) {
            memset(b->ql, 0xff, sizeof b->ql);
            memset(b->qh, 0xff, sizeof b->qh);
            for (int g = 0; g < 16; g++) b->scales[g] = (int8_t)(g & 1 ? 127 : -128);
            b->d = ember_f32_to_fp16(0.003f);
        } else if (kind == 2) {              /* all quants at 0 (value -32) */
            memset(b->ql, 0, sizeof b->ql);
            memset(b->qh, 0, sizeof b->qh);
        } else {
            b->d = 0x83ff;
        }
        break;
    }
    case EMBER_IQ4_XS: {
        block_iq4_xs *b = (block_iq4_xs *)(void *)blk;
        if (kind == 0) {
            memset(b, 0, sizeof *b);
        } else if (kind == 1) {              /* every scale at 31, every value 113 */
            memset(b->qs, 0xff, sizeof b->qs);
            memset(b->scales_l, 0xff, sizeof b->scales_l);
            b->scales_h = 0xffff;
            b->d = ember_f32_to_fp16(0.003f);
        } else if (kind == 2) {              /* every scale at -32, every value -127, d < 0 */
            memset(b->qs, 0, sizeof b->qs);
            memset(b->scales_l, 0, sizeof b->scales_l);
            b->scales_h = 0;
            b->d = (uint16_t)(b->d | 0x8000);
        } else {                             /* a subnormal fp16 scale */
            b->d = 0x83ff;
        }
        break;
    }
    }
}

typedef struct {
    int wt, rows, nt;
    int64_t k;
    size_t row_bytes, xq_stride, y_stride;
    uint8_t *w;
    float *wf;        /* dequantized weights */
    float *x;         /* original activations, nt x k */
    uint8_t *xq;      /* quantized activations, rows xq_stride apart */
    float *xqf;       /* dequantized activations */
} problem;

static void problem_init(problem *p, int wt, int rows, int64_t k, int nt, int specials)
{
    const ember_kernel *ks = ember_kernels_kquant(wt, EMBER_ISA_SCALAR);
    p->wt = wt;
    p->rows = rows;
    p->k = k;
    p->nt = nt;
    p->row_bytes = ember_row_bytes(wt, k);
    p->xq_stride = ember_act_bytes(EMBER_Q8_K, k) + 40;
    p->y_stride = (size_t)rows + 3;
    p->w = malloc(p->row_bytes * (size_t)rows);
    p->wf = malloc(sizeof(float) * (size_t)(k * rows));
    p->x = malloc(sizeof(float) * (size_t)(k * nt));
    p->xq = calloc((size_t)nt, p->xq_stride);
    p->xqf = malloc(sizeof(float) * (size_t)(k * nt));
    float *tmp = malloc(sizeof(float) * (size_t)k);
    int bsz = ember_dtype_get(wt)->block_bytes;
    for (int r = 0; r < rows; r++) {
        float scale = 0.05f * (1 + (float)(r % 5)), shift = (r % 3 == 1) ? 0.04f : 0;
        for (int64_t i = 0; i < k; i++) {
            tmp[i] = scale * gauss() + shift;
            if (rnd() % 97 == 0) tmp[i] *= 8;   /* outliers stretch the scales */
        }
        uint8_t *row = p->w + (size_t)r * p->row_bytes;
        ember_quantize_row(wt, tmp, row, k);
        if (specials)
            for (int64_t b = 0; b < k / QK_K; b++) {
                uint32_t h = rnd() % 10;
                if (h < 4) special_block(wt, row + b * bsz, (int)h);
            }
        ember_dequantize_row(wt, row, p->wf + (size_t)r * (size_t)k, k);
    }
    for (int t = 0; t < nt; t++) {
        float *xt = p->x + (size_t)t * (size_t)k;
        for (int64_t i = 0; i < k; i++) xt[i] = gauss() * (t % 4 == 3 ? 10.0f : 1.0f);
        if (t % 5 == 4)   /* a saturated activation: every value at +-amax */
            for (int64_t i = 0; i < k; i++) xt[i] = (i & 1) ? 3.0f : -3.0f;
        uint8_t *q = p->xq + (size_t)t * p->xq_stride;
        ks->quantize_act(xt, q, k);
        ember_dequantize_row(EMBER_Q8_K, q, p->xqf + (size_t)t * (size_t)k, k);
    }
    free(tmp);
}

static void problem_free(problem *p)
{
    free(p->w);
    free(p->wf);
    free(p->x);
    free(p->xq);
    free(p->xqf);
}

/* Runs a kernel over rows [r0, r1) into a NaN-poisoned y; returns 0 when
   rows outside the range (and the stride padding) stayed untouched. */
static int run(const ember_kernel *kn, const problem *p, int r0, int r1, float *y)
{
    size_t n = p->y_stride * (size_t)p->nt;
    memset(y, 0xff, n * sizeof(float));
    kn->matmul(p->w, p->row_bytes, p->k, r0, r1, p->xq, p->xq_stride, p->nt, y, p->y_stride);
    uint32_t poison = 0xffffffffu;
    for (int t = 0; t < p->nt; t++)
        for (size_t r = 0; r < p->y_stride; r++) {
            uint32_t v;
            memcpy(&v, &y[(size_t)t * p->y_stride + r], 4);
            int inside = (int)r >= r0 && (int)r < r1;
            if (inside == (v == poison)) return -1;
        }
    return 0;
}

static double norm(const float *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)v[i] * v[i];
    return sqrt(s);
}

/* Worst |y - ref| / (|w_r| |x_t|) against the dequantized weights dotted
   with the quantized activations: only float rounding separates them. */
static double worst_rel(const problem *p, const float *y, int r0, int r1)
{
    double worst = 0;
    for (int r = r0; r < r1; r++) {
        const float *wr = p->wf + (size_t)r * (size_t)p->k;
        double nw = norm(wr, p->k);
        for (int t = 0; t < p->nt; t++) {
            const float *xt = p->xqf + (size_t)t * (size_t)p->k;
            double ref = 0;
            for (int64_t i = 0; i < p->k; i++) ref += (double)wr[i] * xt[i];
            double den = nw * norm(xt, p->k);
            double err = fabs((double)y[(size_t)t * p->y_stride + (size_t)r] - ref);
            double rel = den > 0 ? err / den : err;
            if (!(rel <= worst)) worst = rel;   /* NaN counts as worst */
        }
    }
    return worst;
}

/* Against the original f32 activations the error is the activation
   quantization's: each result must sit within the Cauchy-Schwarz bound
   |w_r| |x_t - xq_t| (plus rounding), and the RMS over all results of
   |y - ref| / (|w_r| |x_t|) must stay <= 1e-3.  (The worst single result
   can exceed 1e-3 at k = 256, where one Q8_K scale covers the whole row.) */
static int f32_check(const problem *p, const float *y, int r0, int r1, double *rms)
{
    int ok = 1;
    double sum = 0;
    int n = 0;
    for (int r = r0; r < r1; r++) {
        const float *wr = p->wf + (size_t)r * (size_t)p->k;
        double nw = norm(wr, p->k);
        for (int t = 0; t < p->nt; t++) {
            const float *xt = p->x + (size_t)t * (size_t)p->k;
            const float *xqt = p->xqf + (size_t)t * (size_t)p->k;
            double ref = 0, ne = 0;
            for (int64_t i = 0; i < p->k; i++) {
                ref += (double)wr[i] * xt[i];
                ne += ((double)xt[i] - xqt[i]) * ((double)xt[i] - xqt[i]);
            }
            double den = nw * norm(xt, p->k);
            double err = fabs((double)y[(size_t)t * p->y_stride + (size_t)r] - ref);
            if (!(err <= nw * sqrt(ne) * 1.001 + 1e-5 * den + 1e-30)) ok = 0;
            double rel = den > 0 ? err / den : err;
            sum += rel * rel;
            n++;
        }
    }
    *rms = n ? sqrt(sum / n) : 0;
    return ok && *rms <= 1e-3;
}

static void check_case(int wt, int rows, int64_t k, int nt, int specials)
{
    problem p;
    problem_init(&p, wt, rows, k, nt, specials);
    const char *name = ember_dtype_name(wt);
    float *ys = malloc(sizeof(float) * p.y_stride * (size_t)nt);
    float *yv = malloc(sizeof(float) * p.y_stride * (size_t)nt);
    const ember_kernel *ks = ember_kernels_kquant(wt, EMBER_ISA_SCALAR);
    int ranges[2][2] = {{0, rows}, {rows / 3, rows - rows / 4}};
    for (int ri = 0; ri < (rows > 2 ? 2 : 1); ri++) {
        int r0 = ranges[ri][0], r1 = ranges[ri][1];
        int untouched = run(ks, &p, r0, r1, ys) == 0;
        if (ri == 0) {
            double eq = worst_rel(&p, ys, r0, r1), rms;
            int fok = f32_check(&p, ys, r0, r1, &rms);
            tap_ok(untouched && eq <= 2e-6 && fok,
                   "%s scalar rows=%d k=%lld nt=%d%s: vs dequant(xq) max %.2e, vs f32 x rms %.2e",
                   name, rows, (long long)k, nt, specials ? " +special" : "", eq, rms);
        }
        for (int isa = EMBER_ISA_AVX2; isa <= EMBER_ISA_AVX512; isa++) {
            const ember_kernel *kv = ember_kernels_kquant(wt, (ember_isa)isa);
            if ((int)ember_cpu_isa() < isa || !kv) continue;
            int ok = run(kv, &p, r0, r1, yv) == 0;
            ok = ok && memcmp(ys, yv, sizeof(float) * p.y_stride * (size_t)nt) == 0;
            tap_ok(ok, "%s %s == scalar bitwise, rows [%d,%d) of %d, k=%lld nt=%d%s", name,
                   kv->name, r0, r1, rows, (long long)k, nt, specials ? " +special" : "");
        }
    }
    free(ys);
    free(yv);
    problem_free(&p);
}

static void check_registry(void)
{
    static const int wts[] = {EMBER_Q2_K, EMBER_Q3_K, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_IQ4_XS};
    int ok = 1;
    for (int i = 0; i < 6; i++) {
        const ember_kernel *kn = ember_kernels_kquant(wts[i], EMBER_ISA_SCALAR);
        ok = ok && kn && kn->wtype == wts[i] && kn->act_type == EMBER_Q8_K &&
             kn->isa == EMBER_ISA_SCALAR && kn->quantize_act && kn->matmul;
        for (int isa = EMBER_ISA_AVX2; isa <= EMBER_ISA_AVX512; isa++) {
            const ember_kernel *kv = ember_kernels_kquant(wts[i], (ember_isa)isa);
            if (kv) ok = ok && kv->isa == (ember_isa)isa && kv->wtype == wts[i];
        }
    }
    tap_ok(ok, "scalar kernels registered for Q2_K..Q6_K and IQ4_XS with Q8_K activations");
    tap_ok(!ember_kernels_kquant(EMBER_Q8_0, EMBER_ISA_SCALAR) &&
           !ember_kernels_kquant(EMBER_Q8_K, EMBER_ISA_SCALAR) &&
           !ember_kernels_kquant(EMBER_Q5_1, EMBER_ISA_AVX512),
           "no K-quant kernel for Q8_0, Q8_K, Q5_1");
#ifdef EMBER_SIMD
    tap_ok(ember_kernels_kquant(EMBER_Q2_K, EMBER_ISA_AVX2) && ember_kernels_kquant(EMBER_Q3_K, EMBER_ISA_AVX2) &&
           ember_kernels_kquant(EMBER_Q2_K, EMBER_ISA_AVX512) && ember_kernels_kquant(EMBER_Q3_K, EMBER_ISA_AVX512),
           "Q2_K / Q3_K have AVX2 and AVX-512 kernels");
#endif
    tap_ok(ember_act_bytes(EMBER_Q8_K, 4864) == 19 * 292, "Q8_K activation row bytes");
#ifdef EMBER_SIMD
    if (ember_cpu_isa() < EMBER_ISA_AVX2) tap_diag("SIMD paths not exercised: CPU/EMBER_ISA is scalar");
#else
    tap_diag("built without SIMD: only the scalar oracle is tested");
#endif
}

/* Every ISA's activation quantizer must produce the same bytes, including
   on ties for the largest magnitude, NaN, infinities, zeros and denormals. */
static void check_quantize_act(void)
{
    enum { NB = 10, K = NB * QK_K };
    static float x[K];
    for (int i = 0; i < K; i++) x[i] = gauss();
    for (int i = QK_K; i < 2 * QK_K; i++) x[i] = (i & 1) ? 3.0f : -3.0f;     /* tie: -3 first */
    for (int i = 2 * QK_K; i < 3 * QK_K; i += 7) x[i] = NAN;
    x[3 * QK_K + 17] = INFINITY;
    for (int i = 4 * QK_K; i < 5 * QK_K; i++) x[i] = (i & 2) ? -0.0f : 0.0f;
    for (int i = 5 * QK_K; i < 6 * QK_K; i++) x[i] = (float)(i % 5) * 1e-40f;  /* denormal */
    for (int i = 6 * QK_K; i < 7 * QK_K; i++) x[i] *= 1e30f;
    for (int i = 7 * QK_K; i < 8 * QK_K; i++) x[i] = (float)(i % 255) - 127.0f + 0.5f; /* .5 ties */
    size_t bytes = ember_act_bytes(EMBER_Q8_K, K);
    uint8_t *ref = calloc(1, bytes), *got = calloc(1, bytes);
    const ember_kernel *ks = ember_kernels_kquant(EMBER_Q4_K, EMBER_ISA_SCALAR);
    ks->quantize_act(x, ref, K);
    uint8_t direct[sizeof(block_q8_K)];
    ember_quantize_row(EMBER_Q8_K, x, direct, QK_K);
    tap_ok(memcmp(direct, ref, sizeof direct) == 0, "scalar quantize_act is the reference Q8_K quantizer");
    static const int wts[] = {EMBER_Q2_K, EMBER_Q3_K, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_IQ4_XS};
    for (int f = 0; f < 6; f++)
        for (int isa = EMBER_ISA_AVX2; isa <= EMBER_ISA_AVX512; isa++) {
            const ember_kernel *kv = ember_kernels_kquant(wts[f], (ember_isa)isa);
            if ((int)ember_cpu_isa() < isa || !kv) continue;
            memset(got, 0xa5, bytes);
            kv->quantize_act(x, got, K);
            tap_ok(memcmp(ref, got, bytes) == 0, "%s quantize_act == scalar bytes (NaN, inf, ties, denormals)",
                   kv->name);
        }
    free(ref);
    free(got);
}

int main(void)
{
    check_registry();
    check_quantize_act();
    static const int wts[] = {EMBER_Q2_K, EMBER_Q3_K, EMBER_Q4_K, EMBER_Q5_K, EMBER_Q6_K, EMBER_IQ4_XS};
    static const struct { int rows; int k; int nt; } cases[] = {
        {1, 256, 1},    {15, 512, 2},   {16, 1536, 3},  {17, 2048, 4},
        {64, 4864, 8},  {17, 8192, 17}, {16, 4864, 32}, {2048, 256, 1},
        {2048, 512, 3}, {64, 8192, 1},  {15, 256, 32},  {1, 8192, 8},
        {64, 1536, 1},  {17, 4864, 2},  {16, 4864, 1},  {3, 1792, 1},
        {17, 2048, 6},  {15, 512, 13}, {17, 1280, 1},
        {3, 257 * 256, 1},   /* decode past the AVX-512 pair layout's 256 blocks */
        {5, 129 * 256, 1},   /* and past Q3_K's kept activation pairs (128 blocks) */
        {16, 2048, 31},      /* Q6_K prefill: a full 16-token group, then 15 (odd) */
        {17, 33 * 256, 5},   /* past Q6_K prefill's kept unsigned activations (32 blocks) */
        {3, 130 * 256, 9},   /* past IQ4_XS prefill's kept activation scales (128 blocks) */
    };
    for (int f = 0; f < 6; f++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            check_case(wts[f], cases[c].rows, cases[c].k, cases[c].nt, c % 2 == 0);
    return tap_done();
}
