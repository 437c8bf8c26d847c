/* The compute ceiling: how many int8 multiply-adds per second this CPU does
   with the bench's threads, in the instruction the prefill kernels use
   (AVX-512 VNNI vpdpbusd; on AVX2 the vpmaddubsw + vpmaddwd + vpaddd triple
   that stands in for it).  Registers only, eight independent accumulators
   per thread (the instruction's latency hidden), so no memory is measured:
   prefill's fraction of this number is what the GEMM could still gain.
   It also measures the "ordered" peak: the same instruction with what the
   reference's float order adds to each of them for Q8_0 (each 4-input
   group of a block becomes a float, fma'd into its own accumulator), which
   is where a bit-identical Q8_0 GEMM tops out.  On Zen 4 vpdpbusd and the
   FMA share two ports, so that is about half the peak. */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "ember.h"
#include "kernels/kernels.h"
#include "kernels/simd.h"
#include "sys/clock.h"

typedef struct {
    int kind;                 /* 2 avx512-vnni, 1 avx2, 0 scalar */
    int ordered;              /* with a cvt + fma per instruction */
    double ms;                /* how long to run */
    uint64_t macs;
    uint32_t sink;
} probe_arg;

#define CHECK_EVERY 4096      /* iterations between clock reads */

#ifdef EMBER_SIMD
/* The sums only have to stay alive: their bits, never C arithmetic on the
   values (the int32 lanes wrap by design, and a float may not fit a
   uint32_t: both would be undefined). */
static uint32_t sink_bits(const void *v, size_t n)
{
    uint32_t w, h = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        memcpy(&w, (const uint8_t *)v + i, 4);
        h ^= w;
    }
    return h;
}

EMBER_TARGET_AVX512 static void run_vnni512(probe_arg *p)
{
    __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2), acc[8];
    for (int i = 0; i < 8; i++) acc[i] = _mm512_setzero_si512();
    double t0 = ember_now_ms();
    uint64_t it = 0;
    do {
        for (int r = 0; r < CHECK_EVERY; r++) {
            _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
            __asm__ volatile("" : "+v"(a));   /* keep the loop from being folded */
        }
        it += CHECK_EVERY;
    } while (ember_now_ms() - t0 < p->ms);
    __m512i s = acc[0];
    for (int i = 1; i < 8; i++) s = _mm512_add_epi32(s, acc[i]);
    p->sink = sink_bits(&s, sizeof s);
    p->macs = it * 8 * 64;
}

/* one vpdpbusd per 4-input group, its cvt and fma into a float sum: six
   independent chains, as a block's groups are in the Q8_0 kernels */
EMBER_TARGET_AVX512 static void run_vnni512_ordered(probe_arg *p)
{
    /* a different start per chain, or the compiler computes one product
       for all six */
    __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2), c[6];
    __m512 s = _mm512_set1_ps(1e-9f), f[6];
    for (int i = 0; i < 6; i++) {
        f[i] = _mm512_setzero_ps();
        c[i] = _mm512_set1_epi32(-384 - i);
    }
    double t0 = ember_now_ms();
    uint64_t it = 0;
    do {
        for (int r = 0; r < CHECK_EVERY; r++) {
            _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
                f[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(c[i], a, b)), s, f[i]);
            __asm__ volatile("" : "+v"(a));
        }
        it += CHECK_EVERY;
    } while (ember_now_ms() - t0 < p->ms);
    __m512 t = f[0];
    for (int i = 1; i < 6; i++) t = _mm512_add_ps(t, f[i]);
    p->sink = sink_bits(&t, sizeof t);
    p->macs = it * 6 * 64;
}

EMBER_TARGET_AVX2 static void run_avx2_ordered(probe_arg *p)
{
    __m256i a = _mm256_set1_epi8(3), b[6], ones = _mm256_set1_epi16(1);
    __m256 s = _mm256_set1_ps(1e-9f), f[6];
    for (int i = 0; i < 6; i++) {
        f[i] = _mm256_setzero_ps();
        b[i] = _mm256_set1_epi8((char)(-2 - i));
    }
    double t0 = ember_now_ms();
    uint64_t it = 0;
    do {
        for (int r = 0; r < CHECK_EVERY; r++) {
            _Pragma("GCC unroll 6") for (int i = 0; i < 6; i++)
                f[i] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(a, b[i]), ones)), s, f[i]);
            __asm__ volatile("" : "+x"(a));
        }
        it += CHECK_EVERY;
    } while (ember_now_ms() - t0 < p->ms);
    __m256 t = f[0];
    for (int i = 1; i < 6; i++) t = _mm256_add_ps(t, f[i]);
    p->sink = sink_bits(&t, sizeof t);
    p->macs = it * 6 * 32;
}

EMBER_TARGET_AVX2 static void run_avx2(probe_arg *p)
{
    __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1), acc[8];
    for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_si256();
    double t0 = ember_now_ms();
    uint64_t it = 0;
    do {
        for (int r = 0; r < CHECK_EVERY; r++) {
            _Pragma("GCC unroll 8") for (int i = 0; i < 8; i++)
                acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
            __asm__ volatile("" : "+x"(a));
        }
        it += CHECK_EVERY;
    } while (ember_now_ms() - t0 < p->ms);
    __m256i s = acc[0];
    for (int i = 1; i < 8; i++) s = _mm256_add_epi32(s, acc[i]);
    p->sink = sink_bits(&s, sizeof s);
    p->macs = it * 8 * 32;
}
#endif

static void run_scalar(probe_arg *p)
{
    volatile int8_t va = 3, vb = -2;
    int8_t a = va, b = vb;
    uint32_t acc[8] = {0};   /* wraps by design: unsigned, so defined */
    double t0 = ember_now_ms();
    uint64_t it = 0;
    do {
        for (int r = 0; r < CHECK_EVERY; r++) {
            for (int i = 0; i < 8; i++) acc[i] += (uint32_t)((int32_t)a * b);
            __asm__ volatile("" : "+r"(a));
        }
        it += CHECK_EVERY;
    } while (ember_now_ms() - t0 < p->ms);
    uint32_t s = 0;
    for (int i = 0; i < 8; i++) s += acc[i];
    p->sink = s;
    p->macs = it * 8;
}

static void *probe_thread(void *v)
{
    probe_arg *p = v;
#ifdef EMBER_SIMD
    if (p->kind == 2) p->ordered ? run_vnni512_ordered(p) : run_vnni512(p);
    else if (p->kind == 1) p->ordered ? run_avx2_ordered(p) : run_avx2(p);
    else
#endif
        run_scalar(p);
    return NULL;
}

/* The best of three 150 ms passes (a noisy VM's neighbours) of nth threads. */
static double probe_rate(int kind, int ordered, int nth)
{
    probe_arg args[64];
    pthread_t tid[64];
    if (nth > 64) nth = 64;
    double best = 0;
    for (int pass = 0; pass < 3; pass++) {
        memset(args, 0, sizeof args);
        double t0 = ember_now_ms();
        int started = 0;
        for (int i = 0; i < nth; i++) {
            args[i].kind = kind;
            args[i].ordered = ordered;
            args[i].ms = 150;
            if (i == 0 || pthread_create(&tid[i], NULL, probe_thread, &args[i]) == 0) started = i + 1;
            else break;
        }
        probe_thread(&args[0]);
        for (int i = 1; i < started; i++) pthread_join(tid[i], NULL);
        double ms = ember_now_ms() - t0;
        uint64_t macs = 0;
        for (int i = 0; i < started; i++) macs += args[i].macs;
        double g = ms > 0 ? (double)macs / (ms * 1e6) : 0;
        if (g > best) best = g;
    }
    return best;
}

double ember_compute_probe(int threads, const char **how, double *ordered)
{
    int nth = ember_probe_threads(threads);
    ember_isa isa = ember_cpu_isa();
    int kind = isa == EMBER_ISA_AVX512 && ember_cpu_has_vnni512() ? 2 : isa >= EMBER_ISA_AVX2 ? 1 : 0;
#ifndef EMBER_SIMD
    kind = 0;
#endif
    static const char *const names[] = {"scalar int8 multiply-add", "AVX2 vpmaddubsw+vpmaddwd",
                                        "AVX-512 VNNI vpdpbusd"};
    if (how) *how = names[kind];
    double peak = probe_rate(kind, 0, nth);
    /* the scalar path has no separate float step to measure */
    if (ordered) *ordered = kind ? probe_rate(kind, 1, nth) : peak;
    return peak;
}
