/* The Mamba-2 selective scan (kernels/ssmscan.h) over a battery of head
   widths, state sizes and token counts: this CPU's path equals the scalar
   path bit for bit (outputs and state), and the scalar path follows a
   double-precision oracle of the scan (the formula of the reference's
   ssm_scan for Mamba-2). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels.h"
#include "ssmscan.h"
#include "tap.h"

static unsigned seed = 11;
static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return ((int)(seed >> 9 & 0xffff) - 32768) / 32768.0f;
}

int main(void)
{
    /* on an AVX-512 CPU the AVX2 path too, in a child (the ISA is picked once a process) */
    if (!getenv("EMBER_ISA") && ember_cpu_isa() == EMBER_ISA_AVX512) {
        int rc = system("EMBER_ISA=avx2 /proc/self/exe > /dev/null");
        tap_ok(rc == 0, "the same battery with EMBER_ISA=avx2 passes (status %d)", rc);
    }
    /* states held in registers (16..256 on AVX-512, ..96 on AVX2), through
       memory (128, 512 on AVX2), and not whole 16-wide steps (the scalar path) */
    static const struct { int P, N; } shapes[] = {{8, 16}, {16, 64}, {64, 128}, {4, 96}, {2, 256}, {3, 512}, {5, 24}, {1, 7}};
    static const int counts[] = {1, 2, 5, 33};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int P = shapes[si].P, N = shapes[si].N;
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            const int n = counts[ci];
            /* rows of x | B | C as the convolution's output holds them */
            const size_t st = (size_t)P + 2 * (size_t)N + 3;
            float *rows = malloc((size_t)n * st * sizeof *rows), *dt = malloc((size_t)n * 2 * sizeof *dt);
            float *S0 = malloc((size_t)P * N * sizeof *S0), *S1 = malloc((size_t)P * N * sizeof *S1);
            float *S2 = malloc((size_t)P * N * sizeof *S2);
            float *y1 = malloc((size_t)n * P * sizeof *y1), *y2 = malloc((size_t)n * P * sizeof *y2);
            double *Sd = malloc((size_t)P * N * sizeof *Sd), *yd = malloc((size_t)n * P * sizeof *yd);
            for (int t = 0; t < n; t++) {
                for (size_t i = 0; i < st; i++) rows[(size_t)t * st + i] = rnd();
                dt[2 * t] = 0.6f + 0.5f * rnd();                  /* the step */
                dt[2 * t + 1] = expf(-dt[2 * t] * (1.0f + rnd() * 0.5f + 0.5f));   /* its decay */
            }
            for (int i = 0; i < P * N; i++) S0[i] = 0.3f * rnd(), Sd[i] = S0[i];
            memcpy(S1, S0, (size_t)P * N * sizeof *S0);
            memcpy(S2, S0, (size_t)P * N * sizeof *S0);
            ember_ssm_args a = {S1, P, N, n, rows, rows + P, rows + P + N, st, dt, dt + 1, 2, y1, (size_t)P};
            ember_ssm_scan_scalar(&a);
            a.S = S2;
            a.y = y2;
            ember_ssm_scan(&a);
            double worst = 0, scale = 0;
            for (int t = 0; t < n; t++) {
                const float *x = rows + (size_t)t * st, *B = x + P, *C = x + P + N;
                for (int p = 0; p < P; p++) {
                    double acc = 0;
                    for (int j = 0; j < N; j++) {
                        double *s = Sd + (size_t)p * N + j;
                        *s = *s * dt[2 * t + 1] + (double)B[j] * x[p] * dt[2 * t];
                        acc += *s * C[j];
                    }
                    yd[(size_t)t * P + p] = acc;
                }
            }
            for (int i = 0; i < n * P; i++) {
                worst = fmax(worst, fabs(y1[i] - yd[i]));
                scale = fmax(scale, fabs(yd[i]));
            }
            for (int i = 0; i < P * N; i++) worst = fmax(worst, fabs(S1[i] - Sd[i]));
            tap_ok(!memcmp(y1, y2, (size_t)n * P * sizeof *y1) && !memcmp(S1, S2, (size_t)P * N * sizeof *S1),
                   "head %d, state %d, %d tokens: %s outputs and state == the scalar path's bit for bit", P, N, n,
                   ember_isa_name(ember_cpu_isa()));
            tap_ok(worst <= 2e-5 * fmax(scale, 1), "head %d, state %d, %d tokens: scalar within %.2g of the double oracle (outputs up to %.3g)",
                   P, N, n, worst, scale);
            free(rows), free(dt), free(S0), free(S1), free(S2), free(y1), free(y2), free(Sd), free(yd);
        }
    }
    return tap_done();
}
