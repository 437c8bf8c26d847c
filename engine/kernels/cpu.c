/* cpuid-based ISA selection, done once; kernel lookup by dtype and ISA. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#if defined(EMBER_SIMD) && defined(__x86_64__)

static int xgetbv_ok(uint64_t mask)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((((uint64_t)hi << 32) | lo) & mask) == mask;
}

static void detect(int *avx2, int *avx512)
{
    unsigned a, b, c, d;
    *avx2 = *avx512 = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int osxsave = (c >> 27) & 1, fma = (c >> 12) & 1, f16c = (c >> 29) & 1;
    if (!osxsave || !xgetbv_ok(0x6)) return;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    int has_avx2 = (b >> 5) & 1;
    *avx2 = has_avx2 && fma && f16c;
    int f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    int vnni = (c >> 11) & 1;
    *avx512 = *avx2 && f && dq && bw && vl && vnni && xgetbv_ok(0xe6);
}
#else
static void detect(int *avx2, int *avx512) { *avx2 = *avx512 = 0; }
#endif

static ember_isa cached = (ember_isa)-1;
static int cached_vnni = -1;

static void init(void)
{
    int avx2, avx512;
    detect(&avx2, &avx512);
    ember_isa isa = avx512 ? EMBER_ISA_AVX512 : avx2 ? EMBER_ISA_AVX2 : EMBER_ISA_SCALAR;
    cached_vnni = avx512;
    const char *env = getenv("EMBER_ISA");
    if (env) {
        ember_isa want = !strcmp(env, "scalar") ? EMBER_ISA_SCALAR
                       : !strcmp(env, "avx2") ? EMBER_ISA_AVX2 : EMBER_ISA_AVX512;
        if (want < isa) isa = want;
        if (want < EMBER_ISA_AVX512) cached_vnni = 0;
    }
    cached = isa;
}

/* The CPU's maker as profiles name it (cpuid leaf 0): where a layout's
   speed differs by maker, a profile rule can say so (`cpu:`). */
const char *ember_cpu_vendor(void)
{
#if defined(__x86_64__) || defined(__i386__)
    /* asked afresh each time (once per model a profile is matched for):
       nothing shared between threads */
    char v[13] = {0};
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return "other";
    memcpy(v, &b, 4), memcpy(v + 4, &d, 4), memcpy(v + 8, &c, 4);
    return !strcmp(v, "GenuineIntel") ? "intel" : !strcmp(v, "AuthenticAMD") ? "amd" : "other";
#else
    return "other";
#endif
}

ember_isa ember_cpu_isa(void)
{
    if ((int)cached < 0) init();
    return cached;
}

int ember_cpu_has_vnni512(void)
{
    if (cached_vnni < 0) init();
    return cached_vnni;
}

const char *ember_isa_name(ember_isa isa)
{
    switch (isa) {
    case EMBER_ISA_AVX2: return "avx2";
    case EMBER_ISA_AVX512: return "avx512";
    default: return "scalar";
    }
}

const ember_kernel *ember_kernel_find(int wtype, ember_isa isa)
{
    for (int i = (int)isa; i >= 0; i--) {
        const ember_kernel *k = ember_kernels_simple(wtype, (ember_isa)i);
        if (!k) k = ember_kernels_kquant(wtype, (ember_isa)i);
        if (!k) k = ember_kernels_iq(wtype, (ember_isa)i);
        if (k) return k;
    }
    return NULL;
}

const ember_kernel *ember_kernel_for_matrix(int wtype, ember_isa isa, int64_t rows, int embedding)
{
    if (rows % 8 == 0 && !embedding)
        for (int i = (int)isa; i >= 0; i--) {
            const ember_kernel *k = ember_kernels_simple_tiled(wtype, (ember_isa)i);
            if (k) return k;
        }
    return ember_kernel_find(wtype, isa);
}

const ember_kernel *ember_kernel_packed(int src_type, ember_isa isa)
{
    for (int i = (int)isa; i >= 0; i--) {
        const ember_kernel *k = ember_kernels_packed(src_type, (ember_isa)i);
        if (k) return k;
    }
    return NULL;
}

const ember_kernel *ember_kernel_packed_for_matrix(int src_type, ember_isa isa, int64_t rows, int embedding)
{
    const ember_kernel *p = ember_kernel_packed(src_type, isa);
    if (!p || !ember_kernels_simple_tiled(src_type, EMBER_ISA_SCALAR)) return p;
    const ember_kernel *c = ember_kernel_for_matrix(src_type, isa, rows, embedding);
    return c && c == ember_kernels_simple_tiled(src_type, c->isa) ? p : NULL;
}

size_t ember_act_bytes(int act_type, int64_t k)
{
    if (act_type == EMBER_ACT_Q8_0U) return (size_t)(k / 32) * sizeof(ember_block_q8_0u);
    if (act_type == EMBER_ACT_BF16R) return (size_t)k * sizeof(float);
    return ember_row_bytes(act_type, k);
}
