/* A causal depthwise convolution's row (kernels/conv1d.h) over a battery
   of widths (whole SIMD steps and tails) and tap counts: this CPU's path
   equals the scalar path bit for bit, and the scalar path is the chain
   of fused multiply-adds the reference's ssm_conv computes (a double
   oracle within rounding). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv1d.h"
#include "kernels.h"
#include "tap.h"

static unsigned seed = 5;
static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return ((int)(seed >> 9 & 0xffff) - 32768) / 32768.0f;
}

int main(void)
{
    if (!getenv("EMBER_ISA") && ember_cpu_isa() == EMBER_ISA_AVX512) {
        int rc = system("EMBER_ISA=avx2 /proc/self/exe > /dev/null");
        tap_ok(rc == 0, "the same battery with EMBER_ISA=avx2 passes (status %d)", rc);
    }
    static const int widths[] = {1, 7, 8, 16, 23, 64, 4352};
    static const int taps[] = {2, 3, 4};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t ki = 0; ki < sizeof taps / sizeof taps[0]; ki++) {
            const int C = widths[wi], K = taps[ki];
            float *rows = malloc((size_t)K * C * sizeof *rows), *w = malloc((size_t)K * C * sizeof *w);
            float *a = malloc((size_t)C * sizeof *a), *b = malloc((size_t)C * sizeof *b);
            const float *in[4];
            for (int i = 0; i < K * C; i++) rows[i] = 3 * rnd(), w[i] = rnd();
            for (int i = 0; i < K; i++) in[i] = rows + (size_t)(K - 1 - i) * C;   /* rows in any order */
            ember_conv1d_row_scalar(a, in, w, K, C);
            ember_conv1d_row(b, in, w, K, C);
            double worst = 0;
            for (int c = 0; c < C; c++) {
                double acc = 0, mag = 0;
                for (int i = 0; i < K; i++) acc += (double)in[i][c] * w[(size_t)i * C + c], mag += fabs((double)in[i][c] * w[(size_t)i * C + c]);
                worst = fmax(worst, fabs(a[c] - acc) / fmax(mag, 1e-30));
            }
            tap_ok(!memcmp(a, b, (size_t)C * sizeof *a) && worst < 1e-6,
                   "%d channels, %d taps: %s == the scalar path bit for bit; within %.1e of the double sum", C, K,
                   ember_isa_name(ember_cpu_isa()), worst);
            free(rows), free(w), free(a), free(b);
        }
    return tap_done();
}
