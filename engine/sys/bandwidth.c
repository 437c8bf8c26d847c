/* The roofline's denominator: how fast this machine reads memory with the
   bench's threads.  One sequential stream per thread under-reads on CPUs
   whose per-core bandwidth is bound by outstanding misses rather than by
   DRAM (measured on a 2-vCPU Xeon VM: 23 GB/s with one stream, 32 GB/s with
   8 streams and software prefetch), which put decode above 100% of the
   "roofline"; the kernels' own pattern (a far L2 prefetch beside the L1
   one) is among them.  So several read patterns are timed and the best one is the
   ceiling: the fraction is then of what a plain read loop can reach. */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember.h"
#include "sys/clock.h"
#include "kernels/kernels.h"
#include "sys/pagecache.h"
#include "kernels/simd.h"

typedef struct {
    const uint8_t *buf;
    size_t bytes;
    int ith, nth, streams;
    size_t prefetch;          /* bytes ahead of each stream into L1; 0 = none */
    size_t prefetch_l2;       /* bytes ahead into L2 as well; 0 = none */
    uint64_t sum;
} bw_arg;

/* The thread's slice, cut into `streams` equal runs read side by side, 64
   bytes from each per step. */
#ifdef EMBER_SIMD
/* Vector loads: a scalar loop is instruction-bound here, not memory-bound. */
EMBER_TARGET_AVX2 static uint64_t read_avx2(const uint8_t *p, size_t run, int streams, size_t pf,
                                            size_t pf2)
{
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;
    for (size_t o = 0; o < run; o += 64)
        for (int s = 0; s < streams; s++) {
            const uint8_t *q = p + (size_t)s * run + o;
            if (pf) _mm_prefetch((const char *)q + pf, _MM_HINT_T0);
            if (pf2) _mm_prefetch((const char *)q + pf2, _MM_HINT_T1);
            s0 = _mm256_xor_si256(s0, _mm256_load_si256((const __m256i *)q));
            s1 = _mm256_xor_si256(s1, _mm256_load_si256((const __m256i *)(q + 32)));
        }
    __m256i x = _mm256_xor_si256(s0, s1);
    return (uint64_t)_mm256_extract_epi64(x, 0) ^ (uint64_t)_mm256_extract_epi64(x, 3);
}
#endif

static uint64_t read_scalar(const uint8_t *p, size_t run, int streams)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t o = 0; o < run; o += 32)
        for (int s = 0; s < streams; s++) {
            const uint64_t *q = (const uint64_t *)(p + (size_t)s * run + o);
            s0 += q[0];
            s1 += q[1];
            s2 += q[2];
            s3 += q[3];
        }
    return s0 ^ s1 ^ s2 ^ s3;
}

static void *bw_run(void *p)
{
    bw_arg *a = p;
    size_t slice = a->bytes / (size_t)a->nth / 4096 * 4096;
    size_t run = slice / (size_t)a->streams / 64 * 64;
    const uint8_t *base = a->buf + slice * (size_t)a->ith;
#ifdef EMBER_SIMD
    if (ember_cpu_isa() >= EMBER_ISA_AVX2) {
        a->sum = read_avx2(base, run, a->streams, a->prefetch, a->prefetch_l2);
        return NULL;
    }
#endif
    a->sum = read_scalar(base, run, a->streams);
    return NULL;
}

/* One timed read of buf with the threads in one pattern, in GB/s. */
static double read_once(const uint8_t *buf, size_t bytes, int threads, int streams, size_t pf,
                        size_t pf2)
{
    pthread_t t[64];
    bw_arg a[64];
    size_t slice = bytes / (size_t)threads / 4096 * 4096;
    size_t nread = slice / (size_t)streams / 64 * 64 * (size_t)streams * (size_t)threads;
    double t0 = ember_now_ms();
    int started = 0;
    for (int i = 0; i < threads; i++) {
        a[i] = (bw_arg){buf, bytes, i, threads, streams, pf, pf2, 0};
        if (i > 0 && pthread_create(&t[i], NULL, bw_run, &a[i]) != 0) break;
        started = i + 1;
    }
    bw_run(&a[0]);
    for (int i = 1; i < started; i++) pthread_join(t[i], NULL);
    double s = (ember_now_ms() - t0) / 1e3;
    if (started < threads) return 0;   /* not the threads asked for: no figure */
    return s > 0 ? (double)nread / s / 1e9 : 0;
}

/* Best over the read patterns, `passes` timed reads of each. */
static double read_rate(const uint8_t *buf, size_t bytes, int threads, int passes)
{
    /* the last two also prefetch into L2 far ahead, as the decode kernels do */
    static const struct { int streams; size_t pf, pf2; } pat[] = {
        {1, 0, 0}, {2, 0, 0}, {4, 0, 0}, {8, 0, 0}, {1, 2048, 0}, {2, 2048, 0}, {4, 1024, 0},
        {8, 512, 0}, {1, 1024, 4096}, {2, 1024, 4096},
    };
    double best = 0;
    for (int pass = 0; pass < passes; pass++)
        for (size_t i = 0; i < sizeof pat / sizeof pat[0]; i++) {
            double g = read_once(buf, bytes, threads, pat[i].streams, pat[i].pf, pat[i].pf2);
            if (g > best) best = g;
        }
    return best;
}

static int clamp_threads(int threads)
{
    if (threads <= 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return threads > 64 ? 64 : threads < 1 ? 1 : threads;
}

int ember_probe_threads(int threads) { return clamp_threads(threads); }

double ember_bandwidth(int threads)
{
    threads = clamp_threads(threads);
    size_t bytes = (size_t)1 << 30;
    uint64_t *buf = aligned_alloc(64, bytes);
    if (!buf) return 0;
    for (size_t i = 0; i < bytes / 8; i++) buf[i] = i;
    double best = read_rate((const uint8_t *)buf, bytes, threads, 3);
    free(buf);
    return best;
}

double ember_bandwidth_file(const char *path, int threads)
{
    threads = clamp_threads(threads);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    struct stat st;
    /* mapped as the engine maps a model (pagecache.h), so the rate is the one its weights see */
    void *map = fstat(fd, &st) == 0 && st.st_size > 0 ? ember_map_file(fd, (size_t)st.st_size) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return 0;
    read_once(map, (size_t)st.st_size, threads, 1, 0, 0);   /* maps the pages in, as a model's first token does */
    double best = read_rate(map, (size_t)st.st_size, threads, 2);
    munmap(map, (size_t)st.st_size);
    return best;
}
