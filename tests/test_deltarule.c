/* The delta rule (kernels/deltarule.h) over a battery of head widths and
   token counts: this CPU's path equals the scalar path bit for bit, and
   the scalar path follows a double-precision oracle of the rule (the
   formula as the reference's delta-net operator states it). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deltarule.h"
#include "kernels.h"
#include "tap.h"

static unsigned seed = 7;
static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return ((int)(seed >> 9 & 0xffff) - 32768) / 32768.0f;
}

static void l2norm(float *x, int d)
{
    double ss = 0;
    for (int i = 0; i < d; i++) ss += (double)x[i] * x[i];
    for (int i = 0; i < d; i++) x[i] = (float)(x[i] / sqrt(ss));
}

/* the rule in double: S decays, u corrects v by beta, S takes k u^T, o = S^T q / sqrt(d) */
static void oracle(double *S, int d, int n, const float *q, const float *k, const float *v, size_t st, const float *b,
                   const float *g, size_t bs, double *o)
{
    double *kv = malloc((size_t)d * sizeof *kv);
    for (int t = 0; t < n; t++) {
        const float *qt = q + (size_t)t * st, *kt = k + (size_t)t * st, *vt = v + (size_t)t * st;
        const double beta = 1 / (1 + exp(-b[(size_t)t * bs])), decay = exp(fmin(g[(size_t)t * bs], 50));
        for (int i = 0; i < d * d; i++) S[i] *= decay;
        for (int r = 0; r < d; r++) {
            kv[r] = 0;
            for (int c = 0; c < d; c++) kv[r] += S[(size_t)c * d + r] * kt[c];
        }
        for (int r = 0; r < d; r++) {
            const double u = beta * (vt[r] - kv[r]);
            for (int c = 0; c < d; c++) S[(size_t)c * d + r] += kt[c] * u;
        }
        for (int r = 0; r < d; r++) {
            double acc = 0;
            for (int c = 0; c < d; c++) acc += S[(size_t)c * d + r] * qt[c];
            o[(size_t)t * d + r] = acc / sqrt((double)d);
        }
    }
    free(kv);
}

int main(void)
{
    /* on an AVX-512 CPU the AVX2 path too, in a child (the ISA is picked once a process) */
    if (!getenv("EMBER_ISA") && ember_cpu_isa() == EMBER_ISA_AVX512) {
        int rc = system("EMBER_ISA=avx2 /proc/self/exe > /dev/null");
        tap_ok(rc == 0, "the same battery with EMBER_ISA=avx2 passes (status %d)", rc);
    }
    static const int widths[] = {16, 32, 48, 64, 128, 256, 40};
    static const int counts[] = {1, 2, 5, 17};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const int d = widths[wi];
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            const int n = counts[ci];
            /* rows of q | k | v as the conv output holds them, the state
               starting from an earlier token's */
            const size_t st = 3 * (size_t)d + 5;
            float *rows = malloc((size_t)n * st * sizeof *rows), *b = malloc((size_t)n * 2 * sizeof *b);
            float *S0 = malloc((size_t)d * d * sizeof *S0), *S1 = malloc((size_t)d * d * sizeof *S1);
            float *S2 = malloc((size_t)d * d * sizeof *S2);
            float *o1 = malloc((size_t)n * d * sizeof *o1), *o2 = malloc((size_t)n * d * sizeof *o2);
            double *Sd = malloc((size_t)d * d * sizeof *Sd), *od = malloc((size_t)n * d * sizeof *od);
            for (int t = 0; t < n; t++) {
                float *r = rows + (size_t)t * st;
                for (size_t i = 0; i < st; i++) r[i] = rnd();
                l2norm(r, d);
                l2norm(r + d, d);
                b[2 * t] = 2 * rnd();
                b[2 * t + 1] = -1.5f + rnd();   /* decays exp(-0.5) .. exp(-2.5) */
            }
            for (int i = 0; i < d * d; i++) S0[i] = 0.3f * rnd();
            for (int i = 0; i < d * d; i++) Sd[i] = S0[i];
            memcpy(S1, S0, (size_t)d * d * sizeof *S0);
            memcpy(S2, S0, (size_t)d * d * sizeof *S0);
            ember_delta_args a = {S1, d, n, rows, rows + d, rows + 2 * d, st, b, b + 1, 2, o1, (size_t)d};
            ember_delta_rule_scalar(&a);
            a.S = S2;
            a.o = o2;
            ember_delta_rule(&a);
            oracle(Sd, d, n, rows, rows + d, rows + 2 * d, st, b, b + 1, 2, od);
            double worst = 0, scale = 0;
            for (int i = 0; i < n * d; i++) {
                worst = fmax(worst, fabs(o1[i] - od[i]));
                scale = fmax(scale, fabs(od[i]));
            }
            for (int i = 0; i < d * d; i++) worst = fmax(worst, fabs(S1[i] - Sd[i]) * scale / fmax(1, fabs(Sd[i])));
            tap_ok(!memcmp(o1, o2, (size_t)n * d * sizeof *o1) && !memcmp(S1, S2, (size_t)d * d * sizeof *S1),
                   "d %d, %d tokens: %s outputs and state == the scalar path's bit for bit", d, n,
                   ember_isa_name(ember_cpu_isa()));
            tap_ok(worst <= 1e-5 * fmax(scale, 1e-3), "d %d, %d tokens: scalar within %.2g of the double oracle (outputs up to %.3g)",
                   d, n, worst, scale);
            free(rows), free(b), free(S0), free(S1), free(S2), free(o1), free(o2), free(Sd), free(od);
        }
    }
    return tap_done();
}
