#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "cli_profile.h"
#include "json.h"
#include "run_report.h"

/* ---- lifecycle modes ------------------------------------------------------ */

typedef struct {
    const char *name;
    ember_strategy strategy;
    ember_pack_when when;
    bool evict, reevict, packed_prefill;
    unsigned proj;
} mode_def;

#define QKVO (EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V | EMBER_PROJ_O)
#define GU (EMBER_PROJ_GATE | EMBER_PROJ_UP)

static const mode_def modes[] = {
    {"control", EMBER_STRATEGY_COMPRESSED, EMBER_PACK_AT_LOAD, false, false, false, 0},
    {"pack-before-prefill", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, false, false, EMBER_PROJ_ALL},
    {"pack-after-prefill", EMBER_STRATEGY_PACKED, EMBER_PACK_AFTER_PREFILL, true, false, false, EMBER_PROJ_ALL},
    {"pack-before-prefill-reevict", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, EMBER_PROJ_ALL},
    {"duplicate", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, false, false, false, EMBER_PROJ_ALL},
    {"packed-prefill", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, false, true, EMBER_PROJ_ALL},
    {"gate-up", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, GU},
    {"mlp", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, GU | EMBER_PROJ_DOWN},
    {"attention", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, QKVO},
    {"attention-gate-up", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, QKVO | GU},
    {"all", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, EMBER_PROJ_ALL},
    /* beyond the published modes: the LM head packed too */
    {"all-output", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, true, false, EMBER_PROJ_ALL | EMBER_PROJ_OUTPUT},
    {"packed-prefill-output", EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true, false, true, EMBER_PROJ_ALL | EMBER_PROJ_OUTPUT},
};
#define N_MODES ((int)(sizeof modes / sizeof modes[0]))

static const mode_def *find_mode(const char *name)
{
    for (int i = 0; i < N_MODES; i++)
        if (!strcmp(modes[i].name, name)) return &modes[i];
    return NULL;
}

/* ---- the child ------------------------------------------------------------- */

int bench_child(const bench_opts *b)
{
    run_opts ro;
    run_opts_default(&ro);
    ro.model = b->model;
    ro.n_predict = b->tokens;
    ro.ignore_eos = true;
    ro.json = true;
    ro.plan.threads = b->threads;
    ro.n_ctx = b->n_ctx;
    ember_err err;
    /* the option table's parse, as the command line was checked with */
    gen_opts kv;
    gen_opts_default(&kv);
    char msg[256];
    if (b->kv_cache && gen_opt_parse(OPT_KV_CACHE, b->kv_cache, &kv, msg, sizeof msg) != NUMARG_OK) {
        fprintf(stderr, "ember bench: --kv-cache: %s\n", msg);
        return 2;
    }
    if (b->mode) {
        const mode_def *m = find_mode(b->mode);
        if (!m) {
            fprintf(stderr, "ember bench: unknown mode '%s'\n", b->mode);
            return 2;
        }
        ro.plan.strategy = m->strategy;
        ro.plan.pack_when = m->when;
        ro.plan.evict_source = m->evict;
        ro.plan.reevict_after_prefill = m->reevict;
        ro.plan.packed_prefill = m->packed_prefill;
        ro.plan.projections = m->proj;
        ro.plan.kv_cache = (ember_kv_type)kv.kv_cache;
    } else {
        cli_resolve_in in;
        memset(&in, 0, sizeof in);
        in.profile = b->profile;
        in.strategy = b->strategy;
        in.model = b->model;
        in.plan = ro.plan;
        gen_opts_default(&in.defaults);
        in.defaults.threads = b->threads;
        in.cli = in.defaults;
        in.cli.set = b->threads ? GEN_OPT_BIT(OPT_THREADS) : 0;
        in.cli.kv_cache = kv.kv_cache;
        if (b->kv_cache) in.cli.set |= GEN_OPT_BIT(OPT_KV_CACHE);
        cli_resolved r;
        if (cli_resolve(&in, &r, &err)) {
            fprintf(stderr, "ember bench: %s\n", err.msg);
            return 1;
        }
        /* only the plan: the bench's prompt, length and greedy sampling are its own */
        ro.plan = r.plan;
    }
    ro.samp.temperature = 0;   /* greedy: the hash must be comparable */
    ember_model_info info;
    if (ember_model_peek(b->model, &info, &err)) {
        fprintf(stderr, "ember bench: %s\n", err.msg);
        return 1;
    }
    /* A fixed pseudo-random prompt away from the special tokens at the ends. */
    int32_t *ids = malloc((size_t)b->prompt_tokens * sizeof *ids);
    if (!ids) return 1;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    int span = info.n_vocab > 512 ? info.n_vocab - 512 : info.n_vocab;
    for (int i = 0; i < b->prompt_tokens; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ids[i] = (int32_t)(x % (uint64_t)span) + (info.n_vocab > 512 ? 256 : 0);
    }
    ro.prompt_ids = ids;
    ro.n_prompt_ids = b->prompt_tokens;
    run_result r;
    int rc = run_generate(&ro, NULL, &r, &err);
    free(ids);
    if (rc) {
        fprintf(stderr, "ember bench: %s\n", err.msg);
        return 1;
    }
    const ember_stats *st = &r.st;
    if (st->pack_cache_note[0]) fprintf(stderr, "ember bench: note: %s\n", st->pack_cache_note);
    /* bytes a decode step reads: every matrix weight in its representation
       (of an MoE layer's experts, those a token runs) */
    ember_model *m = NULL;
    double bpt = 0;
    if (b->roofline && (m = ember_model_open(b->model, &ro.plan, &err))) {
        const ember_plan *pl = ember_model_plan(m);
        for (int i = 0; i < pl->n; i++)
            if (pl->e[i].kernel[0]) bpt += (double)pl->e[i].token_bytes;
        ember_model_free(m);
    }
    json_w j;
    json_init(&j, stdout, false);
    json_obj_begin(&j);
    json_kv_str(&j, "strategy", ember_strategy_name(st->strategy));
    json_kv_f64(&j, "prefill_tps", st->prefill_tps);
    json_kv_f64(&j, "decode_tps", st->decode_tps);
    json_kv_f64(&j, "ttft_ms", st->ttft_ms);
    run_report_pack_json(&j, ember_pack_cache_state_name(st->pack_cache), st->pack_ms, st->pack_cache_write_ms);
    json_kv_f64(&j, "load_ms", r.load_ms);
    json_kv_i64(&j, "peak_rss_kb", st->mem.hwm_kb);
    json_kv_str(&j, "kv_cache", ember_kv_type_name(st->kv_type));
    json_kv_i64(&j, "kv_bytes", (int64_t)st->kv_bytes);
    const ember_memstat *pf = &st->phase_mem[EMBER_PHASE_PREFILL_DONE];
    const ember_memstat *end = &st->phase_mem[EMBER_PHASE_DECODE_DONE];
    json_kv_i64(&j, "prefill_pss_file_kb", pf->pss_file_kb);
    json_kv_i64(&j, "prefill_pss_anon_kb", pf->pss_anon_kb);
    json_kv_i64(&j, "end_pss_file_kb", end->pss_file_kb);
    json_kv_i64(&j, "end_pss_anon_kb", end->pss_anon_kb);
    json_kv_i64(&j, "end_rss_kb", end->rss_kb);
    json_kv_i64(&j, "end_file_pmd_kb", end->file_pmd_kb);
    json_kv_i64(&j, "packed", st->packed);
    json_kv_i64(&j, "packable", st->packable);
    json_kv_f64(&j, "decode_bytes_per_token", bpt);
    char h[32];
    snprintf(h, sizeof h, "%016llx", (unsigned long long)r.hash);
    json_kv_str(&j, "hash", h);
    json_obj_end(&j);
    json_finish(&j);
    run_result_free(&r);
    return 0;
}

/* ---- running children --------------------------------------------------------- */

static bool num(const char *js, const char *key, double *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(js, pat);
    if (!p) return false;
    char *end;
    *out = strtod(p + strlen(pat), &end);
    return end != p + strlen(pat);
}

static void str(const char *js, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":\"", key);
    const char *p = strstr(js, pat);
    out[0] = '\0';
    if (!p) return;
    p += strlen(pat);
    size_t n = 0;
    while (p[n] && p[n] != '"' && n + 1 < cap) n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

int bench_spawn(const bench_opts *b, const char *const *extra, bench_sample *s)
{
    memset(s, 0, sizeof *s);
    char pt[16], nt[16], th[16], cx[16];
    snprintf(cx, sizeof cx, "%d", b->n_ctx);
    snprintf(pt, sizeof pt, "%d", b->prompt_tokens);
    snprintf(nt, sizeof nt, "%d", b->tokens);
    snprintf(th, sizeof th, "%d", b->threads);
    const char *argv[32];
    int k = 0;
    argv[k++] = "ember";
    argv[k++] = "bench";
    argv[k++] = "--child";
    argv[k++] = "-m";
    argv[k++] = b->model;
    argv[k++] = "-p";
    argv[k++] = pt;
    argv[k++] = "-n";
    argv[k++] = nt;
    argv[k++] = "-t";
    argv[k++] = th;
    if (b->roofline) argv[k++] = "--roofline";
    if (b->n_ctx) { argv[k++] = "--ctx"; argv[k++] = cx; }
    if (b->kv_cache) { argv[k++] = "--kv-cache"; argv[k++] = b->kv_cache; }
    for (int i = 0; extra && extra[i] && k < 30; i++) argv[k++] = extra[i];
    argv[k] = NULL;
    int pfd[2];
    if (pipe(pfd)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    char buf[8192];
    size_t len = 0;
    ssize_t r;
    while ((r = read(pfd[0], buf + len, sizeof buf - 1 - len)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0) len += (size_t)r;
    buf[len] = '\0';
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
    double v;
    s->ok = num(buf, "decode_tps", &s->decode_tps);
    num(buf, "prefill_tps", &s->prefill_tps);
    num(buf, "ttft_ms", &s->ttft_ms);
    num(buf, "pack_ms", &s->pack_ms);
    num(buf, "pack_cache_write_ms", &s->pack_cache_write_ms);
    num(buf, "load_ms", &s->load_ms);
    num(buf, "peak_rss_kb", &s->peak_rss_kb);
    num(buf, "prefill_pss_file_kb", &s->prefill_pss_file_kb);
    num(buf, "prefill_pss_anon_kb", &s->prefill_pss_anon_kb);
    num(buf, "end_pss_file_kb", &s->end_pss_file_kb);
    num(buf, "end_pss_anon_kb", &s->end_pss_anon_kb);
    num(buf, "end_rss_kb", &s->end_rss_kb);
    num(buf, "end_file_pmd_kb", &s->end_file_pmd_kb);
    num(buf, "decode_bytes_per_token", &s->decode_bytes_per_token);
    if (num(buf, "packed", &v)) s->packed = (int)v;
    if (num(buf, "packable", &v)) s->packable = (int)v;
    str(buf, "hash", s->hash, sizeof s->hash);
    str(buf, "strategy", s->strategy, sizeof s->strategy);
    str(buf, "pack_cache", s->pack_cache, sizeof s->pack_cache);
    str(buf, "kv_cache", s->kv_cache, sizeof s->kv_cache);
    num(buf, "kv_bytes", &s->kv_bytes);
    return s->ok ? 0 : -1;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *v, int n)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct {
    double med, min, max;
} trio;

static trio stats(const bench_sample *s, int n, size_t off)
{
    double v[256] = {0};
    int k = 0;
    for (int i = 0; i < n && k < 256; i++) v[k++] = *(const double *)((const char *)&s[i] + off);
    double med = bench_median(v, k);   /* sorts v */
    trio t = {med, v[0], v[k ? k - 1 : 0]};
    return t;
}

#define STAT(s, n, field) stats(s, n, offsetof(bench_sample, field))

static bool hashes_equal(const bench_sample *s, int n)
{
    for (int i = 1; i < n; i++)
        if (strcmp(s[i].hash, s[0].hash)) return false;
    return true;
}

/* ---- reports ---------------------------------------------------------------------- */

/* The simple bench's repetitions (the lifecycle runs its own, per mode). */
static int run_reps(const bench_opts *b, const char *const *extra, bench_sample *out)
{
    for (int i = 0; i < b->warmup; i++) {
        bench_sample w;
        if (bench_spawn(b, extra, &w)) {
            fprintf(stderr, "ember bench: warm-up run failed (see the message above)\n");
            return -1;
        }
    }
    for (int i = 0; i < b->reps; i++)
        if (bench_spawn(b, extra, &out[i])) {
            fprintf(stderr, "ember bench: repetition %d failed (see the message above)\n", i + 1);
            return -1;
        }
    return 0;
}

int bench_simple(const bench_opts *b)
{
    bench_sample *s = calloc((size_t)b->reps, sizeof *s);
    if (!s) return 1;
    const char *extra[6];
    int k = 0;
    if (b->strategy) { extra[k++] = "--strategy"; extra[k++] = b->strategy; }
    if (b->profile) { extra[k++] = "--profile"; extra[k++] = b->profile; }
    extra[k] = NULL;
    if (run_reps(b, extra, s)) {
        free(s);
        return 1;
    }
    trio pp = STAT(s, b->reps, prefill_tps), tg = STAT(s, b->reps, decode_tps),
         tt = STAT(s, b->reps, ttft_ms), rss = STAT(s, b->reps, peak_rss_kb);
    bool same = hashes_equal(s, b->reps);
    printf("model %s, strategy %s, threads %d, prompt %d, decode %d, reps %d (+%d warm-up)\n",
           b->model, s[0].strategy, b->threads, b->prompt_tokens, b->tokens, b->reps, b->warmup);
    printf("%-14s %10s %10s %10s\n", "", "median", "min", "max");
    printf("%-14s %10.2f %10.2f %10.2f\n", "prefill tok/s", pp.med, pp.min, pp.max);
    printf("%-14s %10.2f %10.2f %10.2f\n", "decode tok/s", tg.med, tg.min, tg.max);
    printf("%-14s %10.1f %10.1f %10.1f\n", "TTFT ms", tt.med, tt.min, tt.max);
    if (!strcmp(s[0].strategy, "packed")) {
        trio pk = STAT(s, b->reps, pack_ms);
        printf("%-14s %10.1f %10.1f %10.1f\n", "pack ms", pk.med, pk.min, pk.max);
        /* per repetition: a hit took its tiles from the cache file, not from packing */
        printf("pack cache");
        for (int i = 0; i < b->reps; i++) printf(" %s", s[i].pack_cache[0] ? s[i].pack_cache : "?");
        printf("\n");
    }
    printf("%-14s %10.1f %10.1f %10.1f\n", "peak RSS MiB", rss.med / 1024, rss.min / 1024, rss.max / 1024);
    printf("KV %s %.1f MiB (context %d)\n", s[0].kv_cache, s[0].kv_bytes / 1048576,
           b->n_ctx ? b->n_ctx : b->prompt_tokens + b->tokens + 1);
    printf("hash %s%s\n", s[0].hash, same ? " (equal across repetitions)" : "  WARNING: hashes differ across repetitions");
    /* how much of the file the weights were read through 2 MiB mappings (ember recache) */
    double pmd = STAT(s, b->reps, end_file_pmd_kb).med;
    printf("file pages mapped 2 MiB at a time (FilePmdMapped): %.0f MiB (median)\n", pmd / 1024);
    double bw = 0, frac = 0, bwf = 0, fracf = 0;
    if (b->roofline) {
        bw = ember_bandwidth(b->threads);
        bwf = ember_bandwidth_file(b->model, b->threads);
        double rate = tg.med * s[0].decode_bytes_per_token;
        frac = bw > 0 ? rate / (bw * 1e9) : 0;
        fracf = bwf > 0 ? rate / (bwf * 1e9) : 0;
        printf("roofline: read bandwidth %.2f GB/s from anonymous memory, %.2f GB/s through the\n"
               "          model file's mapping (%d threads); decode reads %.1f MiB/token;\n"
               "          %.2f tok/s x %.1f MiB = %.2f GB/s = %.0f%% of the first, %.0f%% of the second\n",
               bw, bwf, ember_probe_threads(b->threads), s[0].decode_bytes_per_token / 1048576, tg.med,
               s[0].decode_bytes_per_token / 1048576, rate / 1e9, 100 * frac, 100 * fracf);
    }
    double peak = 0, ordered = 0, mpt = 0, cfrac = 0, ofrac = 0;
    const char *how = "";
    if (b->compute) {
        /* multiply-adds per prompt token: every weight matrix once (an MoE
           layer's: the experts a token runs), the LM head aside (prefill
           needs its logits for the last token only) */
        ember_err err;
        ember_plan_opts po;
        ember_plan_opts_default(&po);
        ember_model *m = ember_model_open(b->model, &po, &err);
        if (m) {
            const ember_plan *pl = ember_model_plan(m);
            for (int i = 0; i < pl->n; i++)
                if (pl->e[i].kernel[0] && strcmp(pl->e[i].name, "output.weight") &&
                    strcmp(pl->e[i].name, "token_embd.weight"))
                    mpt += (double)pl->e[i].ne[0] * (double)pl->e[i].ne[1] * pl->e[i].token_mats;
            ember_model_free(m);
        }
        peak = ember_compute_probe(b->threads, &how, &ordered);
        cfrac = peak > 0 ? pp.med * mpt / (peak * 1e9) : 0;
        ofrac = ordered > 0 ? pp.med * mpt / (ordered * 1e9) : 0;
        printf("compute: %s peak %.1f GMAC/s (%d threads); prefill does %.0f M multiply-adds per\n"
               "         token (the LM head aside): %.2f tok/s x %.0f M = %.1f GMAC/s = %.0f%% of the peak\n"
               "         ordered peak %.1f GMAC/s (each instruction's float convert + FMA, as Q8_0's\n"
               "         reference order needs them): prefill at %.0f%% of it\n",
               how, peak, ember_probe_threads(b->threads), mpt / 1e6, pp.med, mpt / 1e6, pp.med * mpt / 1e9,
               100 * cfrac, ordered, 100 * ofrac);
    }
    if (b->json_out) {
        ember_err err;
        ember_file *f = ember_file_create(b->json_out, EMBER_MODE_PUBLIC, &err);
        if (!f) {
            fprintf(stderr, "ember: %s\n", err.msg);
            free(s);
            return 1;
        }
        json_w j;
        json_init(&j, ember_file_stream(f), true);
        json_obj_begin(&j);
        json_kv_str(&j, "model", b->model);
        json_kv_str(&j, "strategy", s[0].strategy);
        json_kv_str(&j, "kv_cache", s[0].kv_cache);
        json_kv_f64(&j, "kv_bytes", s[0].kv_bytes);
        json_kv_i64(&j, "threads", b->threads);
        json_kv_i64(&j, "prompt_tokens", b->prompt_tokens);
        json_kv_i64(&j, "tokens", b->tokens);
        json_kv_i64(&j, "reps", b->reps);
        struct { const char *k; trio t; } rows[] = {
            {"prefill_tps", pp}, {"decode_tps", tg}, {"ttft_ms", tt}, {"peak_rss_kb", rss}};
        for (size_t i = 0; i < 4; i++) {
            json_key(&j, rows[i].k);
            json_obj_begin(&j);
            json_kv_f64(&j, "median", rows[i].t.med);
            json_kv_f64(&j, "min", rows[i].t.min);
            json_kv_f64(&j, "max", rows[i].t.max);
            json_obj_end(&j);
        }
        /* per repetition: which one packed and wrote the file, which mapped it */
        json_key(&j, "runs");
        json_arr_begin(&j);
        for (int i = 0; i < b->reps; i++) {
            json_obj_begin(&j);
            run_report_pack_json(&j, s[i].pack_cache[0] ? s[i].pack_cache : "?", s[i].pack_ms,
                                 s[i].pack_cache_write_ms);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        json_kv_str(&j, "hash", s[0].hash);
        json_kv_bool(&j, "hash_equal", same);
        json_kv_f64(&j, "file_pmd_kb", pmd);
        if (b->compute) {
            json_kv_f64(&j, "compute_peak_gmacs", peak);
            json_kv_str(&j, "compute_instruction", how);
            json_kv_f64(&j, "prefill_macs_per_token", mpt);
            json_kv_f64(&j, "compute_fraction", cfrac);
            json_kv_f64(&j, "compute_ordered_gmacs", ordered);
            json_kv_f64(&j, "compute_ordered_fraction", ofrac);
        }
        if (b->roofline) {
            json_kv_f64(&j, "bandwidth_gbs", bw);
            json_kv_f64(&j, "decode_bytes_per_token", s[0].decode_bytes_per_token);
            json_kv_f64(&j, "roofline_fraction", frac);
            json_kv_f64(&j, "file_bandwidth_gbs", bwf);
            json_kv_f64(&j, "roofline_fraction_file", fracf);
        }
        json_obj_end(&j);
        json_finish(&j);
        if (ember_file_commit(f, &err)) {
            fprintf(stderr, "ember: %s\n", err.msg);
            free(s);
            return 1;
        }
    }
    free(s);
    return same ? 0 : 3;
}

int bench_lifecycle(const bench_opts *b)
{
    int sel[N_MODES], ns = 0;
    if (b->modes) {
        char *dup = strdup(b->modes), *save = NULL;
        for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            const mode_def *m = find_mode(t);
            if (!m) {
                fprintf(stderr, "ember bench: unknown mode '%s'; modes:", t);
                for (int i = 0; i < N_MODES; i++) fprintf(stderr, " %s", modes[i].name);
                fprintf(stderr, "\n");
                free(dup);
                return 2;
            }
            if (ns < N_MODES) sel[ns++] = (int)(m - modes);
        }
        free(dup);
        bool has_control = false;
        for (int i = 0; i < ns; i++) has_control |= sel[i] == 0;
        if (!has_control && ns < N_MODES) {
            memmove(sel + 1, sel, (size_t)ns * sizeof *sel);
            sel[0] = 0;
            ns++;
        }
    } else {
        for (int i = 0; i < N_MODES; i++) sel[ns++] = i;
    }
    /* (mode, rep) runs in an order shuffled with a fixed seed, so slow drift
       of the machine does not favour the modes that happen to run first */
    int total = ns * (b->reps + b->warmup);
    int *order = malloc((size_t)total * sizeof *order);
    bench_sample *all = calloc((size_t)ns * (size_t)b->reps, sizeof *all);
    int *got = calloc((size_t)ns, sizeof *got);
    if (!order || !all || !got) return 1;
    for (int i = 0; i < total; i++) order[i] = i % ns;
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (int i = total - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        int j = (int)(x % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int *warm = calloc((size_t)ns, sizeof *warm);
    int rc = 0;
    for (int i = 0; i < total && !rc; i++) {
        int m = order[i];
        const char *extra[] = {"--mode", modes[sel[m]].name, NULL};
        bench_sample s;
        if (bench_spawn(b, extra, &s)) {
            fprintf(stderr, "ember bench: mode %s failed\n", modes[sel[m]].name);
            rc = 1;
            break;
        }
        if (warm[m] < b->warmup) warm[m]++;
        else all[(size_t)m * b->reps + got[m]++] = s;
        fprintf(stderr, "\r[%d/%d] %-28s", i + 1, total, modes[sel[m]].name);
    }
    fprintf(stderr, "\n");
    if (!rc) {
        printf("lifecycle bench: %s, threads %d, prompt %d, decode %d, reps %d (+%d warm-up), shuffled (seed fixed)\n",
               b->model, b->threads, b->prompt_tokens, b->tokens, b->reps, b->warmup);
        printf("%-28s %8s %6s %8s %7s %8s %8s %8s %8s %8s %9s %-16s\n", "mode", "decode", "xctl", "TTFT",
               "pack", "peakRSS", "pf:File", "pf:Anon", "end:File", "end:Anon", "breakeven", "hash");
        printf("%-28s %8s %6s %8s %7s %8s %8s %8s %8s %8s %9s\n", "", "tok/s", "", "ms", "ms", "MiB",
               "MiB", "MiB", "MiB", "MiB", "tokens");
        ember_err err;
        ember_file *jf = b->json_out ? ember_file_create(b->json_out, EMBER_MODE_PUBLIC, &err) : NULL;
        if (b->json_out && !jf) {
            fprintf(stderr, "ember: %s\n", err.msg);
            rc = 1;
        }
        json_w j;
        if (jf) {
            json_init(&j, ember_file_stream(jf), true);
            json_obj_begin(&j);
            json_kv_str(&j, "model", b->model);
            json_kv_i64(&j, "threads", b->threads);
            json_kv_i64(&j, "prompt_tokens", b->prompt_tokens);
            json_kv_i64(&j, "tokens", b->tokens);
            json_kv_i64(&j, "reps", b->reps);
            json_key(&j, "modes");
            json_arr_begin(&j);
        }
        bench_sample *ctl = all;
        double ctl_dec = STAT(ctl, b->reps, decode_tps).med, ctl_ttft = STAT(ctl, b->reps, ttft_ms).med;
        for (int m = 0; m < ns; m++) {
            bench_sample *s = all + (size_t)m * b->reps;
            int n = b->reps;
            double dec = STAT(s, n, decode_tps).med, ttft = STAT(s, n, ttft_ms).med;
            double pack = STAT(s, n, pack_ms).med, rss = STAT(s, n, peak_rss_kb).med;
            double pff = STAT(s, n, prefill_pss_file_kb).med, pfa = STAT(s, n, prefill_pss_anon_kb).med;
            double ef = STAT(s, n, end_pss_file_kb).med, ea = STAT(s, n, end_pss_anon_kb).med;
            /* tokens after which the faster decode repays the extra TTFT */
            double gain = 1000.0 / ctl_dec - 1000.0 / dec, extra = ttft - ctl_ttft;
            double be = m == 0 ? 0 : gain > 0 ? (extra > 0 ? extra / gain : 0) : -1;
            bool same = hashes_equal(s, n) && !strcmp(s[0].hash, ctl[0].hash);
            char bes[16];
            if (be < 0) snprintf(bes, sizeof bes, "never");
            else snprintf(bes, sizeof bes, "%.0f", be);
            printf("%-28s %8.2f %6.2f %8.1f %7.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9s %-16s%s\n",
                   modes[sel[m]].name, dec, dec / ctl_dec, ttft, pack, rss / 1024, pff / 1024, pfa / 1024,
                   ef / 1024, ea / 1024, bes, s[0].hash, same ? "" : "  HASH DIFFERS FROM CONTROL");
            if (jf) {
                json_obj_begin(&j);
                json_kv_str(&j, "mode", modes[sel[m]].name);
                json_kv_f64(&j, "decode_tps", dec);
                json_kv_f64(&j, "decode_vs_control", dec / ctl_dec);
                json_kv_f64(&j, "ttft_ms", ttft);
                json_kv_f64(&j, "pack_ms", pack);
                json_kv_f64(&j, "peak_rss_kb", rss);
                json_kv_f64(&j, "prefill_pss_file_kb", pff);
                json_kv_f64(&j, "prefill_pss_anon_kb", pfa);
                json_kv_f64(&j, "end_pss_file_kb", ef);
                json_kv_f64(&j, "end_pss_anon_kb", ea);
                json_kv_f64(&j, "break_even_tokens", be);
                json_kv_i64(&j, "packed_tensors", s[0].packed);
                json_kv_str(&j, "hash", s[0].hash);
                json_kv_bool(&j, "hash_equals_control", same);
                json_obj_end(&j);
            }
            if (!same) rc = 3;
        }
        if (jf) {
            json_arr_end(&j);
            json_obj_end(&j);
            json_finish(&j);
            if (ember_file_commit(jf, &err)) {
                fprintf(stderr, "ember: %s\n", err.msg);
                rc = 1;
            }
        }
    }
    free(order);
    free(all);
    free(got);
    free(warm);
    return rc;
}
