/* Attention with f32 queries over fp16 rows (att_f32.h): each SIMD path's
   scores, maxima and weighted sums equal the scalar definitions bit for
   bit over head sizes 16..512 (also 48, 72, 80 and 200, which leave part
   of a 16-lane chunk or, for 72 and 200, of an 8-lane one), 1 to 9 heads
   (the 4-head groups and their remainders), position counts from 1 to
   257, query sizes from 1e-3 to 300 and strides wider than a head; the
   definitions agree with the values' products in double, and keep the
   query's f32 precision, which the mainline fp16 rounding of the query
   does not (the reason these exist).  The AVX2 results on an AVX-512 CPU
   come from a child started with EMBER_ISA=avx2. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "att_f32.h"
#include "dtype.h"
#include "kernels.h"
#include "isa_child.h"
#include "tap.h"

static uint32_t rng = 1;
static uint32_t next(void)
{
    rng = rng * 1103515245u + 12345u;
    return rng >> 8;
}

static const int HDS[] = {16, 48, 64, 72, 80, 96, 128, 200, 256, 512};
static const int NHS[] = {1, 2, 3, 4, 5, 8, 9};
static const int NPS[] = {1, 7, 16, 17, 100, 257};
enum { MAXHD = 512, MAXNH = 9, MAXP = 257, KS = MAXHD + 8, QS = MAXHD + 4 };

static float unit(void) { return (float)(next() % 20001) / 10000.0f - 1.0f; }

static void compute_on(isa_buf *o, int scalar)
{
    static uint16_t K[MAXP * KS], V[MAXP * KS];
    static float q[MAXNH * QS], sc[MAXNH * (MAXP + 16)], w[MAXNH * (MAXP + 16)], out[MAXNH * (MAXHD + 8)];
    rng = 7;
    for (size_t hi = 0; hi < sizeof HDS / sizeof HDS[0]; hi++)
        for (size_t ni = 0; ni < sizeof NHS / sizeof NHS[0]; ni++)
            for (size_t pi = 0; pi < sizeof NPS / sizeof NPS[0]; pi++) {
                const int hd = HDS[hi], nh = NHS[ni], np = NPS[pi];
                const size_t ss = MAXP + 16, os = MAXHD + 8;
                for (int i = 0; i < np * KS; i++) {
                    K[i] = ember_f32_to_fp16(4.0f * unit());
                    V[i] = ember_f32_to_fp16(2.0f * unit());
                }
                for (int h = 0; h < nh; h++) {
                    const float amp = h % 3 == 0 ? 1e-3f : h % 3 == 1 ? 1.0f : 300.0f;
                    for (int d = 0; d < QS; d++) q[h * QS + d] = amp * unit();
                    for (int p = 0; p < np; p++) w[(size_t)h * ss + (size_t)p] = (float)(next() % 65536) / 65536.0f;
                }
                float mx[MAXNH];
                memset(sc, 0, sizeof sc);
                memset(out, 0, sizeof out);
                if (scalar) {
                    ember_attf_scores_scalar(sc, ss, K, KS, q, QS, nh, np, hd, 0.125f, mx);
                    ember_attf_wsum_scalar(out, os, w, ss, nh, V, KS, np, hd);
                } else {
                    ember_attf_scores(sc, ss, K, KS, q, QS, nh, np, hd, 0.125f, mx);
                    ember_attf_wsum(out, os, w, ss, nh, V, KS, np, hd);
                }
                for (int h = 0; h < nh; h++) {
                    put(o, sc + (size_t)h * ss, (size_t)np * sizeof(float));
                    put(o, out + (size_t)h * os, (size_t)(hd + 8) * sizeof(float));   /* and nothing past hd */
                }
                put(o, mx, (size_t)nh * sizeof(float));
            }
}

static void compute_simd(isa_buf *o) { compute_on(o, 0); }

static void compare(const isa_buf *got, const isa_buf *ref, const char *name)
{
    const size_t first = first_difference(got, ref);
    tap_ok(got->n == ref->n && first == got->n,
           "%s: f32-query scores, maxima and weighted sums bit-identical to the definitions (%zu of %zu bytes, "
           "first difference at byte %zu)", name, got->n, ref->n, first);
}

/* The definitions against double, and the point of them: a query that
   fp16 cannot hold keeps its precision in the scores. */
static void semantics(void)
{
    enum { HD = 80, NP = 40, NH = 3 };
    static uint16_t K[NP * HD], V[NP * HD];
    float q[NH * HD], sc[NH * NP], w[NH * NP], out[NH * HD], mx[NH];
    double worst_s = 0, worst_o = 0;
    rng = 99;
    for (int i = 0; i < NP * HD; i++) {
        K[i] = ember_f32_to_fp16(unit());
        V[i] = ember_f32_to_fp16(2.0f * unit());
    }
    for (int i = 0; i < NH * HD; i++) q[i] = 8.0f * unit();
    for (int i = 0; i < NH * NP; i++) w[i] = (float)(next() % 1000) / 1000.0f;
    ember_attf_scores_scalar(sc, NP, K, HD, q, HD, NH, NP, HD, 0.5f, mx);
    ember_attf_wsum_scalar(out, HD, w, NP, NH, V, HD, NP, HD);
    int mx_ok = 1;
    double worst_f16 = 0;
    for (int h = 0; h < NH; h++) {
        float m = -INFINITY;
        for (int p = 0; p < NP; p++) {
            double s = 0, s16 = 0, mag = 0;
            for (int d = 0; d < HD; d++) {
                const double k = ember_fp16_to_f32(K[p * HD + d]);
                s += k * q[h * HD + d];
                s16 += k * ember_fp16_to_f32(ember_f32_to_fp16(q[h * HD + d]));
                mag += fabs(k * q[h * HD + d]);
            }
            s *= 0.5;
            s16 *= 0.5;
            mag *= 0.5;
            const double e = fabs(s - sc[h * NP + p]) / mag, e16 = fabs(s - s16) / mag;
            if (e > worst_s) worst_s = e;
            if (e16 > worst_f16) worst_f16 = e16;
            if (sc[h * NP + p] > m) m = sc[h * NP + p];
        }
        mx_ok &= m == mx[h];
        for (int d = 0; d < HD; d++) {
            double o = 0, mag = 0;
            for (int p = 0; p < NP; p++) {
                const double t = (double)w[h * NP + p] * ember_fp16_to_f32(V[p * HD + d]);
                o += t;
                mag += fabs(t);
            }
            const double e = fabs(o - out[h * HD + d]) / mag;
            if (e > worst_o) worst_o = e;
        }
    }
    tap_ok(worst_s < 1e-6 && mx_ok, "scores = scale * dot(f32 query, fp16 row) (worst difference %.2g of the terms' "
           "magnitude), the maxima their maxima", worst_s);
    tap_ok(worst_s * 20 < worst_f16, "... 20 times nearer than with the query rounded to fp16 (%.2g against %.2g)",
           worst_s, worst_f16);
    tap_ok(worst_o < 1e-6, "weighted sums = sum of w * the fp16 values (worst difference %.2g of the terms' "
           "magnitude)", worst_o);
}

int main(void)
{
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
