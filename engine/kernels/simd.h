/* Function-level ISA targets: one binary runs anywhere and picks the best
   path by cpuid (kernels.h).  Helpers called from a target function must
   carry the same target (or be static inline in a file of that ISA). */
#ifndef EMBER_SIMD_H
#define EMBER_SIMD_H

#if defined(EMBER_SIMD) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define EMBER_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define EMBER_TARGET_AVX512 \
    __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#endif

#endif
