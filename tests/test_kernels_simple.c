/* Simple-format kernels: every SIMD variant against the scalar oracle
   (bit for bit for the integer formats), and the oracle against a double
   dot of the dequantized weights with the unquantized activations, over a
   battery of shapes, sub-ranges and special blocks. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"
#include "kernels_simple.h"
#include "tap.h"

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static float frand(void) { return (float)((next() >> 11) * 0x1p-53) * 2.0f - 1.0f; }

typedef struct {
    int wtype;
    int is_int;
    int tiled;   /* the reference's 8-row tile order (ember_kernels_simple_tiled) */
} fmt_t;

static const fmt_t fmts[] = {
    {EMBER_Q8_0, 1, 0}, {EMBER_Q4_0, 1, 0}, {EMBER_Q4_0, 1, 1}, {EMBER_Q5_0, 1, 0},
    {EMBER_Q4_1, 1, 0}, {EMBER_Q5_1, 1, 0}, {EMBER_IQ4_NL, 1, 0}, {EMBER_MXFP4, 1, 0},
    {EMBER_F16, 0, 0},  {EMBER_BF16, 0, 0}, {EMBER_F32, 0, 0},
};

/* Overwrites some blocks with the edge cases the fast paths must agree on. */
static void special_weights(int wtype, uint8_t *w, size_t row_bytes, int rows, int64_t k)
{
    int64_t nb = k / QK;
    size_t bb = ember_row_bytes(wtype, QK);
    for (int r = 0; r < rows && r < 6; r++) {
        uint8_t *blk = w + (size_t)r * row_bytes + (size_t)((r * 7) % nb) * bb;
        switch (wtype) {
        case EMBER_Q8_0: {
            block_q8_0 *b = (block_q8_0 *)blk;
            for (int j = 0; j < QK; j++)
                b->qs[j] = r == 0 ? 0 : r == 1 ? (int8_t)(j & 1 ? 127 : -127)
                         : r == 2 ? (int8_t)-128 : r == 3 ? (int8_t)-(j * 4) : b->qs[j];
            if (r == 4) b->d = 0x0001;      /* smallest subnormal scale */
            if (r == 5) b->d = 0x83ff;      /* largest negative subnormal */
            if (r == 0) b->d = 0;
            break;
        }
        case EMBER_Q4_0: {
            block_q4_0 *b = (block_q4_0 *)blk;
            for (int j = 0; j < QK / 2; j++)
                b->qs[j] = r == 0 ? 0x88 : r == 1 ? 0xff : r == 2 ? 0x00 : r == 3 ? (uint8_t)(j % 8 * 0x11) : b->qs[j];
            if (r == 4) b->d = 0x0001;
            if (r == 5) b->d = 0x83ff;
            break;
        }
        case EMBER_Q5_0: {
            block_q5_0 *b = (block_q5_0 *)blk;
            uint8_t qh = r == 1 ? 0xff : r == 2 || r == 3 ? 0x00 : r == 0 ? 0xff : b->qh[0];
            for (int j = 0; j < 4; j++) b->qh[j] = r < 4 ? qh : b->qh[j];
            for (int j = 0; j < QK / 2; j++)
                b->qs[j] = r == 0 ? 0x00 : r == 1 ? 0xff : r == 2 ? 0x00 : r == 3 ? (uint8_t)(j % 16 * 0x11) : b->qs[j];
            if (r == 4) b->d = 0x0001;
            if (r == 5) b->d = 0x83ff;
            break;
        }
        case EMBER_Q4_1:
        case EMBER_Q5_1: {
            /* d, m, then Q4_0's or Q5_0's bytes */
            uint16_t d = r == 4 ? 0x0001 : r == 5 ? 0x83ff : ember_f32_to_fp16(0.05f);
            uint16_t m = r == 0 ? 0 : r == 1 ? 0xbc00 : r == 2 ? 0x3c00 : r == 3 ? 0x8001 : 0x7bff;
            size_t qsz = wtype == EMBER_Q4_1 ? QK / 2 : 4 + QK / 2;
            memset(blk + 4, r == 0 ? 0x00 : r == 1 ? 0xff : r == 2 ? 0xa5 : 0x5a, qsz);
            memcpy(blk, &d, 2);
            memcpy(blk + 2, &m, 2);
            break;
        }
        case EMBER_IQ4_NL: {
            block_iq4_nl *b = (block_iq4_nl *)blk;
            for (int j = 0; j < QK / 2; j++)   /* code 0 is -127, 15 is 113 */
                b->qs[j] = r == 0 ? 0x00 : r == 1 ? 0xff : r == 2 ? 0x0f : r == 3 ? (uint8_t)(j * 0x11) : b->qs[j];
            if (r == 4) b->d = 0x0001;
            if (r == 5) b->d = 0x83ff;
            break;
        }
        case EMBER_MXFP4: {
            block_mxfp4 *b = (block_mxfp4 *)blk;
            for (int j = 0; j < QK / 2; j++)   /* 7 is 12 (6 doubled), 15 is -12, 8 is -0 */
                b->qs[j] = r == 0 ? 0x88 : r == 1 ? 0x77 : r == 2 ? 0xff : r == 3 ? (uint8_t)(j * 0x11) : b->qs[j];
            if (r == 4) b->e = 0;      /* 2^-128 (halved), subnormal */
            if (r == 5) b->e = 1;      /* 2^-127, subnormal too */
            if (r == 0) b->e = 190;    /* 2^62: large products, still finite */
            break;
        }
        default: {
            for (int j = 0; j < QK; j++) {
                if (wtype == EMBER_F32) {
                    float v = r == 0 ? 0.0f : r == 1 ? -fabsf(frand()) : r == 2 ? 1e-40f : frand() * 1e4f;
                    memcpy(blk + 4 * j, &v, 4);
                } else {
                    uint16_t h = wtype == EMBER_F16 ? (r == 0 ? 0 : r == 1 ? 0xbc00 : r == 2 ? 0x0003 : 0x7bff)
                                                    : (r == 0 ? 0 : r == 1 ? 0xbf80 : r == 2 ? 0x0001 : 0x4f00);
                    memcpy(blk + 2 * j, &h, 2);
                }
            }
        }
        }
    }
}

/* Edge cases on the activation side (integer formats: raw Q8_0 / Q8_1
   codes; a Q8_1 block's s is left as it was, which the kernels must take
   as given). */
static void special_acts(int act_type, uint8_t *xq, size_t stride, int nt, int64_t k)
{
    int64_t nb = k / QK;
    size_t ab = ember_act_bytes(act_type, QK), qo = ab - QK;
    for (int t = 0; t < nt && t < 3; t++) {
        uint8_t *b = xq + (size_t)t * stride + (size_t)((t * 3) % nb) * ab;
        int8_t *qs = (int8_t *)(b + qo);
        for (int j = 0; j < QK; j++)
            qs[j] = t == 0 ? (int8_t)(j & 1 ? -128 : 127) : t == 1 ? (int8_t)-128 : qs[j];
        if (t == 2) { /* subnormal activation scale */
            uint16_t d = 0x0200;
            memcpy(b, &d, 2);
        }
    }
}

/* Activation t's values as the kernels see them: d * q per element; for
   Q8_1 also the gap between each block's s and d * sum(q), by which the
   min terms (m_w * s) may move the result, weighted by |m_w| of row wr. */
static double act_dequant(int act_type, const uint8_t *xq, int64_t k, float *xd, const uint8_t *wr, int wtype)
{
    size_t ab = ember_act_bytes(act_type, QK), qo = ab - QK, wb = ember_row_bytes(wtype, QK);
    double gap = 0;
    for (int64_t b = 0; b < k / QK; b++) {
        const uint8_t *blk = xq + (size_t)b * ab;
        uint16_t dh, sh;
        memcpy(&dh, blk, 2);
        memcpy(&sh, blk + 2, 2);
        float d = ember_fp16_to_f32(dh);
        double sum = 0;
        for (int j = 0; j < QK; j++) {
            xd[b * QK + j] = d * (float)((const int8_t *)(blk + qo))[j];
            sum += xd[b * QK + j];
        }
        if (act_type == EMBER_Q8_1 && wr) {
            uint16_t mh;
            memcpy(&mh, wr + (size_t)b * wb + 2, 2);
            gap += fabs((double)ember_fp16_to_f32(mh)) * fabs(sum - (double)ember_fp16_to_f32(sh));
        }
    }
    return gap;
}

typedef struct {
    int fails_simd[3], runs_simd[3];
    int fails_ref, runs_ref, fails_guard;
    double worst_simd[3];
} stats_t;

static void run_case(const fmt_t *f, const ember_kernel *ks[3], int rows, int64_t k, int nt, int r0, int r1,
                     stats_t *st)
{
    size_t row_bytes = ember_row_bytes(f->wtype, k);
    uint8_t *w = malloc(row_bytes * (size_t)rows);
    float *xf = malloc(sizeof(float) * (size_t)k * (size_t)nt);
    float *row = malloc(sizeof(float) * (size_t)k);
    float *xd = malloc(sizeof(float) * (size_t)k);
    size_t xq_stride = ember_act_bytes(ks[0]->act_type, k) + 12;
    uint8_t *xq = calloc((size_t)nt, xq_stride);
    size_t y_stride = (size_t)rows + 3;
    size_t ylen = y_stride * (size_t)nt;
    float *y0 = malloc(sizeof(float) * ylen), *y1 = malloc(sizeof(float) * ylen);

    for (int r = 0; r < rows; r++) {
        float scale = (float)(1 + r % 5) * (r % 3 ? 1.0f : 0.01f);
        for (int64_t i = 0; i < k; i++) row[i] = frand() * scale;
        ember_quantize_row(f->wtype, row, w + (size_t)r * row_bytes, k);
    }
    special_weights(f->wtype, w, row_bytes, rows, k);
    for (int t = 0; t < nt; t++) {
        for (int64_t i = 0; i < k; i++) xf[(size_t)t * k + i] = frand() * (float)(1 + t % 3);
        ks[0]->quantize_act(xf + (size_t)t * k, xq + (size_t)t * xq_stride, k);
    }
    if (f->is_int) special_acts(ks[0]->act_type, xq, xq_stride, nt, k);
    float *wd = malloc(sizeof(float) * (size_t)k * (size_t)rows);
    for (int r = 0; r < rows; r++) ember_dequantize_row(f->wtype, w + (size_t)r * row_bytes, wd + (size_t)r * k, k);

    for (size_t i = 0; i < ylen; i++) y0[i] = -7.0f;
    ks[0]->matmul(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y0, y_stride);

    for (size_t i = 0; i < ylen; i++) {
        size_t r = i % y_stride;
        if ((r < (size_t)r0 || r >= (size_t)r1) && y0[i] != -7.0f) {
            st->fails_guard++;
            break;
        }
    }

    /* oracle vs double dot: the only differences allowed are the
       activation quantization (bounded element by element) and f32
       rounding of one fma and one product per block */
    for (int t = 0; t < nt; t++) {
        const float *x = xf + (size_t)t * k;
        /* float rows as the quantizer left them (BF16's rounded to bf16) */
        if (!f->is_int) memcpy(xd, xq + (size_t)t * xq_stride, sizeof(float) * (size_t)k);
        for (int r = r0; r < r1; r++) {
            const float *wr = wd + (size_t)r * k;
            double ref = 0, qerr = 0, mag = 0, sgap = 0;
            if (f->is_int)
                sgap = act_dequant(ks[0]->act_type, xq + (size_t)t * xq_stride, k, xd, w + (size_t)r * row_bytes, f->wtype);
            for (int64_t i = 0; i < k; i++) {
                ref += (double)wr[i] * x[i];
                qerr += fabs((double)wr[i]) * fabs((double)x[i] - xd[i]);
                mag += fabs((double)wr[i] * xd[i]);
            }
            double got = y0[(size_t)t * y_stride + r];
            double tol = qerr * (1 + 1e-6) + sgap * (1 + 1e-6) + mag * (double)(k / QK + 4) * 0x1p-23 + 1e-37;
            st->runs_ref++;
            if (!(fabs(got - ref) <= tol)) {
                if (!st->fails_ref++)
                    tap_diag("%s rows=%d k=%lld nt=%d r=%d t=%d: oracle %.9g, double %.9g (tol %.3g)",
                             ember_dtype_name(f->wtype), rows, (long long)k, nt, r, t, got, ref, tol);
            }
        }
    }

    for (int isa = 1; isa < 3; isa++) {
        if (!ks[isa]) continue;
        for (size_t i = 0; i < ylen; i++) y1[i] = -7.0f;
        ks[isa]->matmul(w, row_bytes, k, r0, r1, xq, xq_stride, nt, y1, y_stride);
        st->runs_simd[isa]++;
        int bad = 0;
        if (f->is_int) {
            bad = memcmp(y0, y1, sizeof(float) * ylen) != 0;
        } else {
            for (int t = 0; t < nt && !bad; t++) {
                const float *x = xf + (size_t)t * k;
                for (int r = 0; r < (int)y_stride; r++) {
                    size_t i = (size_t)t * y_stride + (size_t)r;
                    if (r < r0 || r >= r1) {
                        bad |= y1[i] != -7.0f;
                        continue;
                    }
                    const float *wr = wd + (size_t)r * k;
                    double mag = 0;
                    for (int64_t j = 0; j < k; j++) mag += fabs((double)wr[j] * x[j]);
                    double e = fabs((double)y1[i] - y0[i]);
                    if (mag > 1e-30 && e / mag > st->worst_simd[isa]) st->worst_simd[isa] = e / mag;
                    if (e > 1e-5 * mag + 1e-37) bad = 1;
                }
            }
        }
        if (bad && !st->fails_simd[isa]++) {
            for (size_t i = 0; i < ylen; i++)
                if (memcmp(&y0[i], &y1[i], 4)) {
                    tap_diag("%s: rows=%d k=%lld nt=%d r0=%d r1=%d: y[%zu] scalar %.9g, %s %.9g", ks[isa]->name,
                             rows, (long long)k, nt, r0, r1, i, y0[i], ember_isa_name((ember_isa)isa), y1[i]);
                    break;
                }
        }
    }
    free(w);
    free(wd);
    free(xf);
    free(row);
    free(xd);
    free(xq);
    free(y0);
    free(y1);
}

/* Every ISA's activation quantizer writes the reference quantizer's bytes,
   including round-half-away-from-zero ties, zeros, tiny, huge and
   non-finite blocks. */
/* BF16 matrices read their activations rounded to bf16 (to nearest,
   ties to even), as the reference's vec-dot type: the BF16 kernels'
   quantizer, whatever the ISA */
static void test_bf16r_act(ember_isa have)
{
    static const float x[] = {1.00390625f, 1.01171875f, -1.00390625f, 3.0f, 1.0f + 0x1p-9f, 0.1f};
    static const float want[] = {1.0f, 1.015625f, -1.0f, 3.0f, 1.0f, 0.10009765625f};
    for (int isa = 0; isa <= (int)have; isa++) {
        const ember_kernel *k = ember_kernels_simple(EMBER_BF16, (ember_isa)isa);
        float y[6];
        if (k) k->quantize_act(x, y, 6);
        int ok = k && k->act_type == EMBER_ACT_BF16R;
        for (int i = 0; ok && i < 6; i++) ok = y[i] == want[i];
        tap_ok(ok, "BF16 activations rounded to bf16, ties to even (%s)", k ? k->name : "no kernel");
    }
}

static void test_quantize_act(ember_isa have)
{
    enum { NB = 24, K = NB * QK };
    static float x[K];
    for (int i = 0; i < K; i++) x[i] = frand() * (float)(1 + i / QK);
    static const float ties[] = {127.0f, -127.0f, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, 126.5f, -126.5f, -3.5f};
    memcpy(x, ties, sizeof ties);                                  /* block 0: d = 1, exact ties */
    for (int j = 0; j < QK; j++) x[QK + j] = 0.0f;                 /* block 1: zeros */
    for (int j = 0; j < QK; j++) x[2 * QK + j] = frand() * 1e-40f; /* block 2: subnormal input */
    for (int j = 0; j < QK; j++) x[3 * QK + j] = frand() * 1e30f;  /* block 3: scale overflows fp16 */
    x[4 * QK + 3] = INFINITY;                                      /* block 4: an infinity */
    x[5 * QK + 7] = NAN;                                           /* block 5: a NaN among numbers */
    for (int j = 0; j < QK; j++) x[6 * QK + j] = -fabsf(frand()) * 3.0f; /* block 6: all negative */
    for (int j = 0; j < QK; j++) x[7 * QK + j] = (float)(j - 16) * 1e-5f; /* block 7: subnormal fp16 d */
    static block_q8_0 want[NB], got[NB];
    ember_quantize_row(EMBER_Q8_0, x, want, K);
    tap_ok(want[0].d == 0x3c00 && want[0].qs[2] == 3 && want[0].qs[3] == -3 && want[0].qs[4] == 1 &&
           want[0].qs[5] == -1 && want[0].qs[6] == 2 && want[0].qs[7] == 127 && want[0].qs[9] == -4,
           "reference Q8_0 rounds ties away from zero (2.5 -> 3, -0.5 -> -1, 126.5 -> 127)");
    /* Activations follow the reference's x86 quantizer instead (127 / amax,
       ties to even); every ISA must produce the scalar version's bytes. */
    static block_q8_0 act[NB];
    ember_q8_0_quantize_act_scalar(x, act, K);
    tap_ok(act[0].d == 0x3c00 && act[0].qs[2] == 2 && act[0].qs[3] == -2 && act[0].qs[4] == 0 &&
           act[0].qs[5] == 0 && act[0].qs[6] == 2 && act[0].qs[7] == 126 && act[0].qs[8] == -126 &&
           act[0].qs[9] == -4,
           "Q8_0 activations round ties to even (2.5 -> 2, 1.5 -> 2, 126.5 -> 126, -3.5 -> -4)");
    int near = 1;
    for (int b = 0; b < NB; b++)
        for (int j = 0; j < QK; j++)
            if (abs(act[b].qs[j] - want[b].qs[j]) > 1) near = 0;
    tap_ok(near, "Q8_0 activation codes within one of the weight quantizer's");
    /* Q8_1: Q8_0's codes and d, and s = d * sum(codes) from the f32 d */
    static block_q8_1 a1[NB];
    ember_q8_1_quantize_act(x, a1, K);
    int same = 1;
    for (int b = 0; b < NB; b++) {
        float amax = 0.0f;
        int32_t sum = 0;
        for (int j = 0; j < QK; j++) {
            if (fabsf(x[b * QK + j]) > amax) amax = fabsf(x[b * QK + j]);
            sum += act[b].qs[j];
        }
        uint16_t s_want = ember_f32_to_fp16(amax / 127.0f * (float)sum);
        if (a1[b].d != act[b].d || memcmp(a1[b].qs, act[b].qs, QK) || memcmp(&a1[b].s, &s_want, 2)) {
            if (same) tap_diag("Q8_1 block %d differs", b);
            same = 0;
        }
    }
    tap_ok(same, "Q8_1 activations: Q8_0's codes and scale, s = fp16(d * sum(q))");
    int shared = 1;
    for (int isa = 0; isa <= (int)have; isa++) {
        const ember_kernel *k1 = ember_kernels_simple(EMBER_Q5_1, (ember_isa)isa);
        const ember_kernel *k4 = ember_kernels_simple(EMBER_Q4_1, (ember_isa)isa);
        shared &= k1 && k4 && k1->quantize_act == ember_q8_1_quantize_act && k4->quantize_act == k1->quantize_act;
    }
    tap_ok(shared, "Q4_1 / Q5_1 kernels of every ISA use the one Q8_1 quantizer");
    for (int isa = 0; isa <= (int)have; isa++) {
        const ember_kernel *kq = ember_kernels_simple(EMBER_Q8_0, (ember_isa)isa);
        if (!kq) continue;
        memset(got, 0x5a, sizeof got);
        kq->quantize_act(x, got, K);
        int diff = -1;
        for (int b = 0; b < NB && diff < 0; b++)
            if (memcmp(&got[b], &act[b], sizeof got[b])) diff = b;
        if (diff >= 0) tap_diag("%s: block %d differs", kq->name, diff);
        tap_ok(diff < 0, "%s quantize_act == scalar activation quantizer byte for byte", kq->name);
    }
}

int main(void)
{
    static const int64_t ks_list[] = {32, 64, 96, 256, 512, 896, 1056, 1536, 2048, 4864, 8192};
    static const int nts_small[] = {1, 2, 3, 4, 8, 17, 32};
    static const int nts_mid[] = {1, 4, 17};
    static const int nts_big[] = {1, 5};
    ember_isa have = ember_cpu_isa();
    test_quantize_act(have);
    test_bf16r_act(have);

    for (size_t fi = 0; fi < sizeof fmts / sizeof fmts[0]; fi++) {
        const fmt_t *f = &fmts[fi];
        const ember_kernel *ks[3] = {0};
        for (int isa = 0; isa <= (int)have; isa++)
            ks[isa] = f->tiled ? ember_kernels_simple_tiled(f->wtype, (ember_isa)isa)
                               : ember_kernels_simple(f->wtype, (ember_isa)isa);
        if (!tap_ok(ks[0] != NULL, "%s%s has a scalar kernel", ember_dtype_name(f->wtype),
                    f->tiled ? " (8-row tile order)" : "")) continue;
        int want_act = f->wtype == EMBER_BF16 ? EMBER_ACT_BF16R
                     : !f->is_int ? EMBER_F32
                     : f->wtype == EMBER_Q4_1 || f->wtype == EMBER_Q5_1 ? EMBER_Q8_1 : EMBER_Q8_0;
        tap_ok(ks[0]->act_type == want_act && ks[0]->wtype == f->wtype,
               "%s activations are %s", ember_dtype_name(f->wtype),
               want_act == EMBER_ACT_BF16R ? "f32 rounded to bf16" : ember_dtype_name(want_act));
        stats_t st = {0};
        for (size_t ki = 0; ki < sizeof ks_list / sizeof ks_list[0]; ki++) {
            int64_t k = ks_list[ki];
            const int *nts = k <= 512 ? nts_small : k <= 2048 ? nts_mid : nts_big;
            int nnt = k <= 512 ? 7 : k <= 2048 ? 3 : 2;
            for (int ni = 0; ni < nnt; ni++) {
                int nt = nts[ni];
                run_case(f, ks, 1, k, nt, 0, 1, &st);
                run_case(f, ks, 15, k, nt, 0, 15, &st);
                run_case(f, ks, 16, k, nt, 0, 16, &st);
                run_case(f, ks, 17, k, nt, 0, 17, &st);
                if (k <= 2048 || nt == 1) {
                    run_case(f, ks, 64, k, nt, 0, 64, &st);
                    run_case(f, ks, 64, k, nt, 3, 50, &st);  /* sub-range not at 0, odd length */
                    run_case(f, ks, 64, k, nt, 16, 33, &st); /* starts on a 16-row boundary */
                    run_case(f, ks, 17, k, nt, 16, 17, &st); /* the last row alone */
                }
                if (k <= 96 && nt <= 4) run_case(f, ks, 2048, k, nt, 0, 2048, &st);
            }
        }
        if (!f->is_int) /* float rows need not be whole blocks: vector tails */
            for (int nt = 1; nt <= 5; nt += 2) {
                run_case(f, ks, 19, 37, nt, 0, 19, &st);
                run_case(f, ks, 19, 1001, nt, 2, 19, &st);
                run_case(f, ks, 5, 45, nt, 1, 4, &st);
            }
        const char *fn = ks[0]->name;
        tap_ok(st.fails_ref == 0, "%s scalar oracle matches the double dot within rounding and activation "
               "quantization (%d of %d outputs off)", fn, st.fails_ref, st.runs_ref);
        tap_ok(st.fails_guard == 0, "%s scalar writes only rows r0..r1 (%d cases wrote outside)", fn, st.fails_guard);
        for (int isa = 1; isa < 3; isa++) {
            if (!ks[isa]) {
                if (isa <= (int)have) tap_ok(0, "%s has a %s kernel", fn, ember_isa_name((ember_isa)isa));
                else tap_skip("ISA not available (CPU, build or EMBER_ISA)");
                continue;
            }
            if (f->is_int)
                tap_ok(st.fails_simd[isa] == 0, "%s == scalar bit for bit (%d of %d cases differ)",
                       ks[isa]->name, st.fails_simd[isa], st.runs_simd[isa]);
            else
                tap_ok(st.fails_simd[isa] == 0, "%s within 1e-5 of scalar, relative to sum|w*x| "
                       "(%d of %d cases off, worst %.2g)", ks[isa]->name, st.fails_simd[isa],
                       st.runs_simd[isa], st.worst_simd[isa]);
        }
    }

    /* the kernel lookup walks down from the requested ISA */
    const ember_kernel *kq = ember_kernel_find(EMBER_Q8_0, have);
    tap_ok(kq && kq->isa == have, "ember_kernel_find(Q8_0, %s) picks that ISA", ember_isa_name(have));
    /* Q4_0 matrices the reference would repack take its tile order */
    const ember_kernel *t16 = ember_kernel_for_matrix(EMBER_Q4_0, have, 16, 0);
    const ember_kernel *t17 = ember_kernel_for_matrix(EMBER_Q4_0, have, 17, 0);
    const ember_kernel *te = ember_kernel_for_matrix(EMBER_Q4_0, have, 16, 1);
    const ember_kernel *t8 = ember_kernel_for_matrix(EMBER_Q8_0, have, 16, 0);
    tap_ok(t16 && t16 == ember_kernels_simple_tiled(EMBER_Q4_0, have) && t17 == ember_kernel_find(EMBER_Q4_0, have) &&
           te == t17 && t8 == kq && t16 != t17,
           "ember_kernel_for_matrix: tile order for Q4_0 of 8k rows only, not for 17 rows, an embedding or Q8_0");
    tap_ok(ember_kernels_simple(EMBER_Q4_K, EMBER_ISA_SCALAR) == NULL &&
           ember_kernels_simple(EMBER_Q8_1, EMBER_ISA_SCALAR) == NULL, "no simple kernel for Q4_K / Q8_1");
    tap_ok(ember_kernel_for_matrix(EMBER_Q5_1, have, 16, 0) == ember_kernel_find(EMBER_Q5_1, have) &&
           ember_kernel_for_matrix(EMBER_IQ4_NL, have, 16, 0) == ember_kernel_find(EMBER_IQ4_NL, have),
           "Q5_1 / IQ4_NL take no tile order");
    return tap_done();
}
