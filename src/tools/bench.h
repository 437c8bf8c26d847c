/* ember bench internals: the child (one measured run, one JSON line on
   stdout), the process runner, statistics and the lifecycle modes. */
#ifndef EMBER_BENCH_H
#define EMBER_BENCH_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *model, *profile, *strategy, *json_out, *modes, *mode;
    const char *kv_cache;        /* --kv-cache as typed (checked), or NULL */
    int prompt_tokens, tokens, reps, warmup, threads;
    int n_ctx;                   /* --ctx; 0: prompt + tokens + 1 */
    bool roofline, lifecycle;
    bool compute;              /* --compute: prefill against the int8 multiply-add peak */
} bench_opts;

/* One child's numbers. */
typedef struct {
    bool ok;
    double prefill_tps, decode_tps, ttft_ms, pack_ms, load_ms;
    double pack_cache_write_ms;
    double peak_rss_kb, prefill_pss_file_kb, prefill_pss_anon_kb, end_pss_file_kb,
           end_pss_anon_kb, end_rss_kb, decode_bytes_per_token;
    double end_file_pmd_kb;   /* FilePmdMapped at the end: the 2 MiB-mapped share */
    int packed, packable;
    char hash[32];
    char strategy[16];
    char pack_cache[16];         /* ember_pack_cache_state_name */
    char kv_cache[16];
    double kv_bytes;
} bench_sample;

int bench_child(const bench_opts *b);
int bench_simple(const bench_opts *b);
int bench_lifecycle(const bench_opts *b);
/* Runs `ember bench --child` with extra args; fills s. */
int bench_spawn(const bench_opts *b, const char *const *extra, bench_sample *s);
double bench_median(double *v, int n);

#endif
