/* The attention steps of refnum.h (scores and weighted sums, one head or
   several over the same rows, fp16 rounding) and the gated activations
   (SiLU, tanh GELU) on each SIMD path against the scalar definitions, bit
   for bit, over head sizes, position counts around the 16-position blocks
   and the 64 lanes, both product orders, and special values.  The scalar
   results (and, on an AVX-512 CPU, the AVX2 ones) come from child processes
   started with EMBER_ISA set before anything is chosen. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtype.h"
#include "kernels/kernels.h"
#include "kernels/refnum.h"
#include "isa_child.h"
#include "tap.h"

#define MAXPOS 1100
#define MAXHD 576
#define KVH 3   /* heads side by side in a row: stride 3 * hd */
#define WH 7    /* the most heads of the weighted sums over the same rows */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}
static float unit(void) { return (float)((int)(next() % 20001) - 10000) / 10000.0f; }

static const int hds[] = {16, 48, 64, 80, 96, 128, 256, 512, 576};   /* 96: Phi-3; 512: Gemma 4 global heads; 576: past the SIMD rows */
static const int nposs[] = {1, 15, 16, 17, 31, 63, 64, 65, 127, 128, 129, 200, 1000};
#define NH (int)(sizeof hds / sizeof hds[0])
#define NP (int)(sizeof nposs / sizeof nposs[0])

/* Everything the forward pass does with these functions, in its order. */
static void compute(isa_buf *o)
{
    static uint16_t K[MAXPOS * KVH * MAXHD], V[MAXPOS * KVH * MAXHD], qh[MAXHD], q3[9 * MAXHD];
    static float s3[9 * (MAXPOS + 16)];
    static float q[MAXHD], sc[MAXPOS + 16], acc[WH * 64 * MAXHD], out[WH * MAXHD], w3[WH * (MAXPOS + 16)];
    rng = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
        K[i] = ember_f32_to_fp16(unit());
        V[i] = ember_f32_to_fp16(unit() * 4);
    }
    for (int hi = 0; hi < NH; hi++) {
        int hd = hds[hi];
        size_t stride = (size_t)KVH * hd;
        for (int d = 0; d < hd; d++) q[d] = unit() * 3;
        ember_ref_to_f16(qh, q, hd);
        put(o, qh, sizeof qh[0] * (size_t)hd);
        for (int i = 0; i < 9; i++) {
            for (int d = 0; d < hd; d++) q[d] = unit() * 3;
            ember_ref_to_f16(q3 + (size_t)i * MAXHD, q, hd);
        }
        for (int pi = 0; pi < NP; pi++)
            for (int gemm = 0; gemm < 2; gemm++) {
                int npos = nposs[pi];
                float mx = ember_ref_scores_f16(sc, K + hd, stride, qh, npos, hd, gemm, 1.0f / sqrtf((float)hd));
                put(o, &mx, sizeof mx);
                put(o, sc, sizeof sc[0] * (size_t)npos);
                double sum = ember_ref_softmax_exp(sc, sc, mx, npos);
                ember_ref_scale_f16r(sc, (float)(1.0 / sum), npos);
                put(o, sc, sizeof sc[0] * (size_t)npos);
                int n_kv = (npos + 31) / 32 * 32;
                ember_ref_wsum_f16(out, sc, V + 2 * hd, stride, npos, hd, n_kv, gemm && hd % 4 == 0, acc);
                put(o, out, sizeof out[0] * (size_t)hd);
                /* heads over the same rows, as attention's KV groups: two,
                   and seven (a group of four, the SIMD path's constant
                   case, and three) */
                for (int wh = 2; wh <= WH; wh += WH - 2) {
                    for (int i = 0; i < wh; i++) {
                        memcpy(w3 + (size_t)i * (MAXPOS + 16), sc, sizeof sc[0] * (size_t)npos);
                        ember_ref_scale_f16r(w3 + (size_t)i * (MAXPOS + 16), 0.5f + 0.25f * (float)i, npos);
                    }
                    ember_ref_wsum_f16_heads(out, (size_t)hd, w3, MAXPOS + 16, wh, V + 2 * hd, stride, npos, hd, n_kv,
                                             gemm && hd % 4 == 0, acc);
                    put(o, out, sizeof out[0] * (size_t)wh * (size_t)hd);
                }
                /* three queries over the same rows, as attention's KV groups
                   (nine: more than the SIMD path takes at once) */
                for (int nq3 = 3; nq3 <= 9; nq3 += 6) {
                    float m3[9];
                    ember_ref_scores_f16_heads(s3, MAXPOS + 16, K + hd, stride, q3, MAXHD, nq3, npos, hd, gemm,
                                               1.0f / sqrtf((float)hd), m3);
                    put(o, m3, sizeof m3[0] * (size_t)nq3);
                    for (int i = 0; i < nq3; i++) put(o, s3 + (size_t)i * (MAXPOS + 16), sizeof s3[0] * (size_t)npos);
                }
            }
    }
    /* rounding to fp16: ties, subnormals, overflow, infinities, NaN, -0 */
    float sp[37] = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -70000.0f, INFINITY, -INFINITY,
                    NAN, -NAN, 1e-8f, -1e-8f, 5.96e-8f, 2.98e-8f, 2.9802322e-8f, 6.1e-5f, 6.0975552e-5f,
                    1.0009765625f, 1.00048828125f, 1.00146484375f, 3.14159265f, -2.71828f, 1e-45f,
                    0.333333f, 1e30f, -1e-30f, 0.5f, 2049.0f, 2051.0f, 4097.0f, 1e-5f, 7e-6f, 3e-7f,
                    -3e-7f, 123.456f};
    uint16_t hs[37];
    ember_ref_to_f16(hs, sp, 37);
    put(o, hs, sizeof hs);
    float r[37];
    memcpy(r, sp, sizeof r);
    ember_ref_scale_f16r(r, 0.75f, 37);
    for (int i = 0; i < 37; i++)   /* NaN payloads aside, compare bits */
        if (isnan(r[i])) r[i] = NAN;
    put(o, r, sizeof r);
    /* the gated activations over a row of 16-wide chunks and a tail: the
       special values above, then inputs from -20 to 20 (GELU's exp leaves
       the fast path past |a| ~ 88, its ratio is 1 past a > 30) */
    enum { NG = 16 * 40 + 9 };
    static float g[NG], u[NG], g2[NG];
    for (int i = 0; i < NG; i++) {
        g[i] = i < 37 ? sp[i] : -20.0f + 40.0f * (float)i / NG + 0.01f * unit();
        u[i] = i % 7 == 3 ? -0.0f : 0.5f + unit();
    }
    memcpy(g2, g, sizeof g);
    ember_ref_gelu_tanh_mul(g, u, NG);
    ember_ref_silu_mul(g2, u, NG);
    for (int i = 0; i < NG; i++) {
        if (isnan(g[i])) g[i] = NAN;
        if (isnan(g2[i])) g2[i] = NAN;
    }
    put(o, g, sizeof g);
    put(o, g2, sizeof g2);
    /* soft-capping (Gemma 2's scores, the final logits): the same inputs
       and special values, caps 50 and 0.5 (exp's overflow past 2x/cap ~ 88) */
    static float c[NG];
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < NG; i++) c[i] = i < 37 ? sp[i] : -20.0f + 40.0f * (float)i / NG + 0.01f * unit();
        float cm = ember_ref_softcap_max(c, NG, k ? 0.5f : 50.0f);
        for (int i = 0; i < NG; i++)
            if (isnan(c[i])) c[i] = NAN;
        put(o, &cm, sizeof cm);
        put(o, c, sizeof c);
    }
    /* softmax rows on their own: lengths around the 16-wide chunks,
       scores down to -300 below the max (exp's slow path past |n| > 192)
       and -inf (a masked score); every padded value and the double sum */
    static const int sms[] = {1, 7, 15, 16, 17, 31, 32, 33, 100, 257};
    for (size_t si = 0; si < sizeof sms / sizeof sms[0]; si++) {
        const int n = sms[si];
        static float sx[272], sy[272];
        for (int i = 0; i < n; i++) sx[i] = i % 13 == 5 ? -INFINITY : -300.0f * (float)i / (float)n + 0.01f * unit();
        double sum = ember_ref_softmax_exp(sy, sx, 0.25f, n);
        put(o, &sum, sizeof sum);
        put(o, sy, sizeof sy[0] * (size_t)((n + 15) / 16 * 16));
    }
    /* A single token's scores whose double tail is inexact: big values in
       the first dims (the 64-wide steps, or the tail's first 16 where there
       are none) and fp16 subnormals after, so the partial sums span more
       than a double's 53 bits and the order of the tail's adds shows in the
       bits (heads of 48, 80 and 96: no step, 64 + 16, 64 + 32). */
    static const int tails[] = {48, 80, 96};
    for (size_t ti = 0; ti < sizeof tails / sizeof tails[0]; ti++) {
        const int hd = tails[ti], big = hd >= 64 ? (hd & ~63) : 16;
        static uint16_t tk[200 * 96], tq[96];
        static float tsc[200 + 16];
        for (int p = 0; p < 200; p++)
            for (int d = 0; d < hd; d++) tk[p * hd + d] = ember_f32_to_fp16(d < big ? 500.0f * unit() : 6e-6f * unit());
        for (int d = 0; d < hd; d++) tq[d] = ember_f32_to_fp16(d < big ? 700.0f * unit() : 6e-6f * unit());
        static const int tn[] = {7, 8, 17, 200};
        for (size_t ni = 0; ni < sizeof tn / sizeof tn[0]; ni++) {
            float mx = ember_ref_scores_f16(tsc, tk, (size_t)hd, tq, tn[ni], hd, 0, 1.0f);
            put(o, &mx, sizeof mx);
            put(o, tsc, sizeof tsc[0] * (size_t)tn[ni]);
        }
    }
    /* RoPE: both pair layouts, whole and partial rotary (n_rot / 2 of 24,
       48: a tail of a 16-lane chunk), heads of up to 512 dims, values with
       -0, large and tiny magnitudes */
    static const int ropes[][2] = {{64, 64}, {128, 128}, {256, 256}, {512, 512}, {64, 48}, {128, 96}, {48, 48}, {80, 34}};
    for (size_t ri = 0; ri < sizeof ropes / sizeof ropes[0]; ri++)
        for (int neox = 0; neox <= 1; neox++) {
            const int hd = ropes[ri][0], nr = ropes[ri][1], nh = 3;
            static float rv[3 * 512], rc[256], rs[256];
            for (int i = 0; i < nh * hd; i++) rv[i] = i < 37 && !isnan(sp[i]) && !isinf(sp[i]) ? sp[i] : 4.0f * unit() - 2.0f;
            for (int i = 0; i < nr / 2; i++) {
                rc[i] = cosf(0.37f * (float)(i + 1) * (float)ri);
                rs[i] = sinf(0.37f * (float)(i + 1) * (float)ri) * (i % 5 == 0 ? -1.0f : 1.0f);
            }
            ember_ref_rope(rv, nh, hd, nr, rc, rs, neox);
            put(o, rv, sizeof rv[0] * (size_t)(nh * hd));
        }
}

static void compare(const isa_buf *got, const isa_buf *ref, const char *name)
{
    tap_ok(got->n == ref->n, "%s path gives as many results (%zu vs %zu bytes)", name, got->n, ref->n);
    const size_t first = first_difference(got, ref);
    tap_ok(first == got->n, "%s attention steps and activations bit-identical to the scalar definitions "
           "(first difference at byte %zu)", name, first);
}

int main(void)
{
    /* children first: a fork after this process picked its ISA or table
       would inherit them.  (EMBER_ISA only lowers the ISA, so on a CPU
       without AVX2 the "avx2" child computes the scalar bytes.) */
    isa_buf ref = {0}, a2 = {0};
    int ok = child_compute("scalar", compute, &ref), ok2 = child_compute("avx2", compute, &a2);
    tap_ok(ok, "scalar child computed %zu bytes", ref.n);
    if (!ok) return tap_done();
    if (ember_cpu_isa() == EMBER_ISA_SCALAR) {
        tap_skip("this CPU or build has only the scalar path: nothing to compare");
        return tap_done();
    }
    const int avx2_too = ember_cpu_isa() > EMBER_ISA_AVX2;   /* the AVX2 table too, where this CPU runs it */
    if (avx2_too) tap_ok(ok2, "avx2 child computed %zu bytes", a2.n);
    isa_buf got = {0};
    compute(&got);
    compare(&got, &ref, ember_isa_name(ember_cpu_isa()));
    if (avx2_too) compare(&a2, &ref, "avx2");
    /* the soft-cap's tanh against libm's, and its max */
    {
        enum { N = 20001 };
        static float x[N];
        double worst = 0;
        float want_max = -INFINITY;
        for (int i = 0; i < N; i++) {
            x[i] = -120.0f + 240.0f * (float)i / (N - 1);
            float t = 50.0f * tanhf(x[i] / 50.0f);
            want_max = t > want_max ? t : want_max;
        }
        float mx = ember_ref_softcap_max(x, N, 50.0f);
        int mono = 1;
        for (int i = 0; i < N; i++) {
            double d = fabs((double)x[i] - 50.0 * tanh((-120.0 + 240.0 * i / (N - 1)) / 50.0));
            if (d > worst) worst = d;
            if (i && x[i] < x[i - 1]) mono = 0;
        }
        tap_ok(worst < 50 * 4e-7, "softcap 50: within %.2g of cap * tanh over [-120, 120] (< 2e-5)", worst);
        tap_ok(fabsf(mx - want_max) < 1e-5f && mx == x[N - 1], "softcap's max is the largest capped value (%.7g)", mx);
        tap_ok(mono, "softcap never decreases over the sweep");
    }
    free(a2.b);
    free(got.b);
    free(ref.b);
    return tap_done();
}
