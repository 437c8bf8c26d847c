/* Attention over q8_0 KV rows (att_q8.h): each SIMD path's scores, maxima
   and weighted sums equal the scalar definitions bit for bit over head
   sizes 32..512, 1 to 12 heads, position counts around the 16- and
   8-row tiles, and stored values of every int8 (-128 too, which a stored
   row never holds but a corrupt one may) under scales from subnormal to
   large; the definitions agree with the dequantized values' products in
   double; a stored row is the reference's q8_0 blocks, scales first.  The
   AVX2 results on an AVX-512 CPU come from a child started with
   EMBER_ISA=avx2 before anything is chosen. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "att_q8.h"
#include "dtype.h"
#include "kernels.h"
#include "kernels_simple.h"
#include "isa_child.h"
#include "tap.h"

static uint32_t rng = 1;
static uint32_t next(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static const int HDS[] = {32, 64, 96, 128, 160, 256, 512};
static const int NHS[] = {1, 2, 3, 4, 5, 8, 9, 12};
static const int NPS[] = {1, 7, 8, 9, 15, 16, 17, 33, 100, 257};
enum { MAXHD = 512, MAXNH = 12, MAXP = 257 };

/* rows of random bytes: values over all of int8, scales of every size */
static void rows_random(uint8_t *r, int np, int hd)
{
    static const uint16_t ds[] = {0x0001, 0x03ff, 0x0400, 0x1000, 0x2e66, 0x3c00, 0x3555, 0x5bff, 0x8001, 0xbc00, 0x0000,
                                  0x2000};
    const int nb = hd / 32;
    const size_t rb = ember_attq8_row_bytes(hd);
    for (int p = 0; p < np; p++) {
        uint8_t *row = r + (size_t)p * rb;
        for (int b = 0; b < nb; b++) {
            const uint16_t d = ds[next() % (sizeof ds / sizeof ds[0])];
            memcpy(row + 2 * b, &d, 2);
        }
        for (int j = 0; j < hd; j++) row[2 * nb + j] = (uint8_t)next();
    }
}

/* every path's results for the battery into o (scalar: the definitions) */
static void compute_on(isa_buf *o, int scalar)
{
    static uint8_t K[MAXP * MAXHD / 32 * 34], V[MAXP * MAXHD / 32 * 34], Q[MAXNH * (MAXHD + MAXHD / 4)];
    static float q[MAXHD], sc[MAXNH * (MAXP + 16)], w[MAXNH * (MAXP + 16)], out[MAXNH * (MAXHD + 8)];
    rng = 7;
    for (size_t hi = 0; hi < sizeof HDS / sizeof HDS[0]; hi++)
        for (size_t ni = 0; ni < sizeof NHS / sizeof NHS[0]; ni++)
            for (size_t pi = 0; pi < sizeof NPS / sizeof NPS[0]; pi++) {
                const int hd = HDS[hi], nh = NHS[ni], np = NPS[pi];
                const size_t qb = ember_attq8_query_bytes(hd), ss = MAXP + 16, os = MAXHD + 8;
                rows_random(K, np, hd);
                rows_random(V, np, hd);
                for (int h = 0; h < nh; h++) {
                    const float amp = h % 3 == 0 ? 1e-3f : h % 3 == 1 ? 1.0f : 300.0f;
                    for (int d = 0; d < hd; d++) q[d] = amp * ((float)(next() % 20001) / 10000.0f - 1.0f);
                    ember_attq8_query(Q + (size_t)h * qb, q, hd);
                }
                for (int h = 0; h < nh; h++)
                    for (int p = 0; p < np; p++) w[(size_t)h * ss + (size_t)p] = (float)(next() % 65536) / 65536.0f;
                float mx[MAXNH];
                memset(sc, 0, sizeof sc);
                memset(out, 0, sizeof out);
                if (scalar) {
                    ember_attq8_scores_scalar(sc, ss, K, Q, qb, nh, np, hd, 0.125f, mx);
                    ember_attq8_wsum_scalar(out, os, w, ss, nh, V, np, hd);
                } else {
                    ember_attq8_scores(sc, ss, K, Q, qb, nh, np, hd, 0.125f, mx);
                    ember_attq8_wsum(out, os, w, ss, nh, V, np, hd);
                }
                for (int h = 0; h < nh; h++) {
                    put(o, sc + (size_t)h * ss, (size_t)np * sizeof(float));
                    put(o, out + (size_t)h * os, (size_t)hd * sizeof(float));
                }
                put(o, mx, (size_t)nh * sizeof(float));
            }
}

static void compute_simd(isa_buf *o) { compute_on(o, 0); }

static void compare(const isa_buf *got, const isa_buf *ref, const char *name)
{
    const size_t first = first_difference(got, ref);
    tap_ok(got->n == ref->n && first == got->n,
           "%s: q8_0 scores, maxima and weighted sums bit-identical to the definitions (%zu of %zu bytes, first "
           "difference at byte %zu)", name, got->n, ref->n, first);
}

/* The definitions against the dequantized values' products in double. */
static void semantics(void)
{
    enum { HD = 96, NP = 40, NH = 3 };
    const int nb = HD / 32;
    const size_t rb = ember_attq8_row_bytes(HD), qb = ember_attq8_query_bytes(HD);
    static uint8_t K[NP * HD / 32 * 34], V[NP * HD / 32 * 34], Q[NH * (HD + HD / 4)];
    float x[HD], sc[NH * NP], w[NH * NP], out[NH * HD], mx[NH];
    double worst_s = 0, worst_o = 0;
    rng = 99;
    for (int p = 0; p < NP; p++) {
        for (int d = 0; d < HD; d++) x[d] = (float)(next() % 2001) / 1000.0f - 1.0f;
        ember_attq8_store(K + (size_t)p * rb, x, HD);
        for (int d = 0; d < HD; d++) x[d] = (float)(next() % 2001) / 500.0f - 2.0f;
        ember_attq8_store(V + (size_t)p * rb, x, HD);
    }
    for (int h = 0; h < NH; h++) {
        for (int d = 0; d < HD; d++) x[d] = (float)(next() % 2001) / 1000.0f - 1.0f;
        ember_attq8_query(Q + (size_t)h * qb, x, HD);
        for (int p = 0; p < NP; p++) w[h * NP + p] = (float)(next() % 1000) / 1000.0f;
    }
    ember_attq8_scores_scalar(sc, NP, K, Q, qb, NH, NP, HD, 0.5f, mx);
    ember_attq8_wsum_scalar(out, HD, w, NP, NH, V, NP, HD);
    int mx_ok = 1;
    for (int h = 0; h < NH; h++) {
        const uint8_t *qh = Q + (size_t)h * qb;
        float m = -INFINITY;
        for (int p = 0; p < NP; p++) {
            const uint8_t *row = K + (size_t)p * rb;
            double s = 0;
            for (int d = 0; d < HD; d++) {
                uint16_t dk;
                float dq;
                memcpy(&dk, row + 2 * (d / 32), 2);
                memcpy(&dq, qh + 4 * (d / 32), 4);
                s += (double)ember_fp16_to_f32(dk) * (int8_t)row[2 * nb + d] * dq * (int8_t)qh[8 * nb + d];
            }
            s *= 0.5;
            const double e = fabs(s - sc[h * NP + p]) / (fabs(s) + 1e-3);
            if (e > worst_s) worst_s = e;
            if (sc[h * NP + p] > m) m = sc[h * NP + p];
        }
        mx_ok &= m == mx[h];
        for (int d = 0; d < HD; d++) {
            double o = 0, mag = 0;   /* the error of a float sum is relative to its terms' size */
            for (int p = 0; p < NP; p++) {
                const uint8_t *row = V + (size_t)p * rb;
                uint16_t dv;
                memcpy(&dv, row + 2 * (d / 32), 2);
                const double t = (double)w[h * NP + p] * ember_fp16_to_f32(dv) * (int8_t)row[2 * nb + d];
                o += t;
                mag += fabs(t);
            }
            const double e = fabs(o - out[h * HD + d]) / mag;
            if (e > worst_o) worst_o = e;
        }
    }
    tap_ok(worst_s < 1e-5 && mx_ok, "q8_0 scores = scale * the dequantized rows' dot products (worst relative "
           "difference %.2g), the maxima their maxima", worst_s);
    tap_ok(worst_o < 1e-5, "q8_0 weighted sums = sum of w * the dequantized values (worst difference %.2g of the "
           "terms' magnitude)",
           worst_o);

    /* a row is the reference's blocks, scales first, then the values */
    block_q8_0 ref[HD / 32];
    for (int d = 0; d < HD; d++) x[d] = (float)(d % 13) * 0.37f - 2.0f;
    uint8_t row[HD / 32 * 34];
    ember_attq8_store(row, x, HD);
    ember_q8_0_quantize_act_scalar(x, ref, HD);
    int same = 1;
    for (int b = 0; b < nb; b++)
        same &= !memcmp(row + 2 * b, &ref[b].d, 2) && !memcmp(row + 2 * nb + 32 * b, ref[b].qs, 32);
    tap_ok(same, "a stored q8_0 row holds the reference's q8_0 blocks: %d scales, then %d values", nb, HD);

    /* a query block as the reference's flash attention quantizes it (q8_2):
       the scale amax / 127 rounded to bf16 first, the values divided by
       that, to nearest even.  amax 1.1 gives a scale of 0.0086614 whose
       bf16 (0.0086670) moves 0.55 from 63.5 to 63.46 (-> 63, not 64) */
    float qx[32] = {1.1f, 0.55f, -1.1f, 0.3f};
    uint8_t qb1[32 + 8];
    ember_attq8_query(qb1, qx, 32);
    float dq;
    int32_t bias;
    memcpy(&dq, qb1, 4);
    memcpy(&bias, qb1 + 4, 4);
    const float dwant = ember_bf16_to_f32(ember_f32_to_bf16(1.1f / 127.f));
    const int8_t *qq = (const int8_t *)(qb1 + 8);
    int qok = dq == dwant && qq[1] == (int8_t)nearbyintf(0.55f / dwant) && qq[1] == 63 && qq[0] == 127 &&
              qq[2] == -127 && qq[3] == (int8_t)nearbyintf(0.3f / dwant) && qq[31] == 0 &&
              bias == -128 * (qq[0] + qq[1] + qq[2] + qq[3]);
    tap_ok(qok, "a query block: scale amax / 127 in bf16 (%.7g), values over it to nearest (0.55 -> %d), the "
           "correction -128 x their sum", dq, qq[1]);
}

int main(void)
{
    /* the child first: a fork after this process picked its ISA would
       inherit it (EMBER_ISA only lowers the ISA) */
    isa_buf a2 = {0};
    const int ok2 = child_compute("avx2", compute_simd, &a2);
    semantics();
    isa_buf ref = {0}, got = {0};
    compute_on(&ref, 1);
    if (ember_cpu_isa() == EMBER_ISA_SCALAR) {
        tap_skip("this CPU or build has only the scalar path: nothing to compare");
    } else {
        compute_simd(&got);
        compare(&got, &ref, ember_isa_name(ember_cpu_isa()));
        if (ember_cpu_isa() > EMBER_ISA_AVX2) {
            if (tap_ok(ok2, "avx2 child computed %zu bytes", a2.n)) compare(&a2, &ref, "avx2");
        }
    }
    free(a2.b);
    free(ref.b);
    free(got.b);
    return tap_done();
}
