/* ember inspect: a GGUF file's model summary and tensor inventory, as text
   or as one JSON object. */
#include "config.h"

#include <getopt.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"
#include "model_arg.h"
#include "cli_profile.h"
#include "ember.h"
#include "plan_print.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember inspect FILE [--tensors] [--meta] [--json]\n"
        "       ember inspect FILE --plan [--strategy S | --profile P] [--kv-cache T]\n"
        "                     [--ctx N] [--json]\n"
        "\n"
        "Shows a GGUF file's architecture, sizes, tokenizer and tensor inventory by dtype.\n"
        "FILE may be hf:USER/REPO[:QUANT]: the cached file (ember pull), pulled if missing.\n"
        "\n"
        "  --tensors       list every tensor: name, dtype, shape, data offset, bytes\n"
        "  --meta          list every metadata key (arrays by type and length)\n"
        "  --json          print one JSON object instead of text\n"
        "  --plan          load the model and print the execution plan: per tensor the\n"
        "                  representation (eager-f32, compressed, packed), kernel,\n"
        "                  ISA, resident bytes and any fallback reason; totals by\n"
        "                  representation\n"
        "  --strategy S    eager | compressed | packed (with --plan)\n"
        "  --profile P     a profile name or file (with --plan; see ember-profile(5))\n"
        "  --kv-cache T    f16 | q8_0: the KV cache rows the plan reports (with --plan)\n"
        "  --ctx N         the context its KV size is for (with --plan; default: the\n"
        "                  profile's, else 4096 capped by the model's)\n"
        "  -h, --help      this help\n");
}

/* Per-dtype totals, indexed by ggml type number. */
#define N_TYPES 64

typedef struct {
    const gguf_file *f;
    char arch[64];
    uint64_t params;
    uint64_t tensor_bytes;
    uint64_t count[N_TYPES], bytes[N_TYPES];
} summary;

/* Looks up "<arch>.<suffix>" as an unsigned integer. */
static bool arch_u64(const summary *s, const char *suffix, uint64_t *v)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", s->arch, suffix);
    return gguf_get_u64(s->f, key, v);
}

/* A per-layer integer array (gemma4's, LFM2's head_count_kv): its
   smallest and largest values. */
static bool arch_range(const summary *s, const char *suffix, int64_t *lo, int64_t *hi)
{
    char key[160];
    snprintf(key, sizeof key, "%s.%s", s->arch, suffix);
    const gguf_kv *kv = gguf_find(s->f, key);
    if (!kv || kv->type != GGUF_T_ARRAY || kv->arr_n == 0) return false;
    for (uint64_t i = 0; i < kv->arr_n; i++) {
        int64_t v;
        if (!gguf_arr_i64(kv, i, &v)) return false;
        if (i == 0 || v < *lo) *lo = v;
        if (i == 0 || v > *hi) *hi = v;
    }
    return true;
}

/* The vocabulary size as the model would see it: the declared key, else the
   token list, else the embedding's rows. */
static bool vocab_size(const summary *s, uint64_t *v)
{
    if (arch_u64(s, "vocab_size", v)) return true;
    const gguf_kv *kv = gguf_find(s->f, "tokenizer.ggml.tokens");
    if (kv && kv->type == GGUF_T_ARRAY) {
        *v = kv->arr_n;
        return true;
    }
    const gguf_tensor *t = gguf_find_tensor(s->f, "token_embd.weight");
    if (t && t->n_dims >= 2) {
        *v = (uint64_t)t->ne[1];
        return true;
    }
    return false;
}

/* Metadata strings are arbitrary bytes: keep terminals safe. */
/* File text, at most max bytes of it, shown with newlines as \n and
   nothing a terminal would act on (ember_text_clean). */
static void print_clean(FILE *out, const char *p, uint64_t n, size_t max)
{
    size_t k = n < max ? (size_t)n : max;
    char buf[4 * 128 + 1];
    for (size_t i = 0; i < k;) {
        const char *nl = memchr(p + i, '\n', k - i);
        size_t seg = nl ? (size_t)(nl - (p + i)) : k - i;
        while (seg > 0) {   /* in pieces the buffer holds; a cut character shows as ? */
            size_t part = seg < 128 ? seg : 128;
            fputs((ember_text_clean(buf, sizeof buf, p + i, part, 0), buf), out);
            i += part;
            seg -= part;
        }
        if (nl) {
            fputs("\\n", out);
            i++;
        }
    }
    if (k < n) fputs("...", out);
}

static void summarise(summary *s, const gguf_file *f)
{
    memset(s, 0, sizeof *s);
    s->f = f;
    gguf_str a;
    if (gguf_get_str(f, "general.architecture", &a) && a.len < sizeof s->arch) {
        memcpy(s->arch, a.ptr, (size_t)a.len);
        s->arch[a.len] = 0;
    }
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        uint64_t n = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++) n *= (uint64_t)t->ne[d];
        s->params += n;
        s->tensor_bytes += t->nbytes;
        if (t->type >= 0 && t->type < N_TYPES) {
            s->count[t->type]++;
            s->bytes[t->type] += t->nbytes;
        }
    }
}

static void shape_str(const gguf_tensor *t, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t d = 0; d < t->n_dims && o < cap; d++)
        o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, d ? " x " : "", t->ne[d]);
}

static const char *human(uint64_t b, char *buf, size_t cap)
{
    if (b >= (1ull << 30)) snprintf(buf, cap, "%.2f GiB", (double)b / (1ull << 30));
    else if (b >= (1ull << 20)) snprintf(buf, cap, "%.2f MiB", (double)b / (1ull << 20));
    else if (b >= 1024) snprintf(buf, cap, "%.1f KiB", (double)b / 1024);
    else snprintf(buf, cap, "%" PRIu64 " B", b);
    return buf;
}

static void print_kv_value(FILE *out, const gguf_kv *kv)
{
    switch (kv->type) {
    case GGUF_T_STRING:
        fputc('"', out);
        print_clean(out, kv->v.s.ptr, kv->v.s.len, 60);
        fputc('"', out);
        break;
    case GGUF_T_ARRAY:
        fprintf(out, "[%s x %" PRIu64 "]", gguf_type_name(kv->arr_type), kv->arr_n);
        break;
    case GGUF_T_F32: case GGUF_T_F64: fprintf(out, "%g", kv->v.f); break;
    case GGUF_T_BOOL: fputs(kv->v.b ? "true" : "false", out); break;
    case GGUF_T_I8: case GGUF_T_I16: case GGUF_T_I32: case GGUF_T_I64:
        fprintf(out, "%" PRId64, kv->v.i);
        break;
    default: fprintf(out, "%" PRIu64, kv->v.u); break;
    }
}

static void text_field_u64(const char *label, const summary *s, const char *suffix)
{
    uint64_t v = 0;
    bool ok = suffix ? arch_u64(s, suffix, &v) : vocab_size(s, &v);
    if (ok) printf("%-18s%" PRIu64 "\n", label, v);
    else printf("%-18s?\n", label);
}

static void text_field_str(const summary *s, const char *label, const char *key)
{
    gguf_str v;
    printf("%-18s", label);
    if (gguf_get_str(s->f, key, &v)) print_clean(stdout, v.ptr, v.len, 80);
    else fputs("?", stdout);
    fputc('\n', stdout);
}

static void print_text(const summary *s, bool tensors, bool meta)
{
    const gguf_file *f = s->f;
    char b1[32], b2[32];
    uint64_t v, v2;
    printf("%-18s%s (%s, GGUF v%u)\n", "file:", f->path ? f->path : "-",
           human(f->size, b1, sizeof b1), f->version);
    printf("%-18s%s\n", "architecture:", s->arch[0] ? s->arch : "?");
    text_field_str(s, "name:", "general.name");
    if (s->params >= 1000000)
        printf("%-18s%.2f M (%" PRIu64 ")\n", "parameters:", (double)s->params / 1e6, s->params);
    else
        printf("%-18s%" PRIu64 "\n", "parameters:", s->params);
    text_field_u64("context length:", s, "context_length");
    text_field_u64("embedding size:", s, "embedding_length");
    text_field_u64("layers:", s, "block_count");
    bool h = arch_u64(s, "attention.head_count", &v), hk = arch_u64(s, "attention.head_count_kv", &v2);
    printf("%-18s", "heads / KV heads:");
    if (h) printf("%" PRIu64, v); else fputs("?", stdout);
    int64_t lo, hi;
    if (hk) printf(" / %" PRIu64 "\n", v2);
    else if (arch_range(s, "attention.head_count_kv", &lo, &hi))   /* one a layer */
        printf(lo == hi ? " / %lld a layer\n" : " / %lld-%lld a layer\n", (long long)lo, (long long)hi);
    else fputs(" / ?\n", stdout);
    if (arch_u64(s, "expert_count", &v) && v) {   /* a mixture of experts */
        printf("%-18s%" PRIu64, "experts:", v);
        if (arch_u64(s, "expert_used_count", &v2)) printf(", %" PRIu64 " a token", v2);
        if (arch_u64(s, "expert_feed_forward_length", &v2)) printf(", FFN %" PRIu64 " each", v2);
        putchar('\n');
    }
    text_field_u64("vocab size:", s, NULL);
    gguf_str tm, tp;
    printf("%-18s", "tokenizer:");
    if (gguf_get_str(f, "tokenizer.ggml.model", &tm)) print_clean(stdout, tm.ptr, tm.len, 40);
    else fputs("none", stdout);
    if (gguf_get_str(f, "tokenizer.ggml.pre", &tp)) {
        fputs(" (pre ", stdout);
        print_clean(stdout, tp.ptr, tp.len, 40);
        fputs(")", stdout);
    }
    fputc('\n', stdout);
    printf("%-18s%" PRIu64 "\n", "metadata keys:", f->n_kv);

    printf("\n%" PRIu64 " tensors, %s of %s\n", f->n_tensors,
           human(s->tensor_bytes, b1, sizeof b1), human(f->size, b2, sizeof b2));
    if (f->n_tensors) {
        printf("  %-8s %6s %14s %7s\n", "dtype", "count", "bytes", "share");
        for (int t = 0; t < N_TYPES; t++) {
            if (!s->count[t]) continue;
            printf("  %-8s %6" PRIu64 " %14" PRIu64 " %6.2f%%\n", ember_dtype_name(t), s->count[t],
                   s->bytes[t], f->size ? 100.0 * (double)s->bytes[t] / (double)f->size : 0.0);
        }
    }
    if (tensors && f->n_tensors) {
        printf("\n  %-32s %-6s %-22s %12s %12s\n", "name", "dtype", "shape", "offset", "bytes");
        for (uint64_t i = 0; i < f->n_tensors; i++) {
            const gguf_tensor *t = &f->tensors[i];
            char shape[96];
            shape_str(t, shape, sizeof shape);
            char name[160];
            ember_text_clean(name, sizeof name, t->name_z, strlen(t->name_z), 0);
            printf("  %-32s %-6s %-22s %#12" PRIx64 " %12" PRIu64 "\n", name,
                   ember_dtype_name(t->type), shape, t->file_offset, t->nbytes);
        }
    }
    if (meta) {
        printf("\nmetadata:\n");
        for (uint64_t i = 0; i < f->n_kv; i++) {
            const gguf_kv *kv = &f->kv[i];
            fputs("  ", stdout);
            print_clean(stdout, kv->key.ptr, kv->key.len, 120);
            printf(" (%s) = ", gguf_type_name(kv->type));
            print_kv_value(stdout, kv);
            fputc('\n', stdout);
        }
    }
}

static void json_opt_u64(json_w *j, const char *key, const summary *s, const char *suffix)
{
    uint64_t v = 0;
    bool ok = suffix ? arch_u64(s, suffix, &v) : vocab_size(s, &v);
    json_key(j, key);
    if (ok) json_u64(j, v);
    else json_null_value(j);
}

static void json_opt_str(json_w *j, const summary *s, const char *key, const char *gkey)
{
    gguf_str v;
    json_key(j, key);
    if (gguf_get_str(s->f, gkey, &v)) json_strn(j, v.ptr, (size_t)v.len);
    else json_null_value(j);
}

static void json_kv_value(json_w *j, const gguf_kv *kv)
{
    switch (kv->type) {
    case GGUF_T_STRING: json_strn(j, kv->v.s.ptr, (size_t)kv->v.s.len); break;
    case GGUF_T_ARRAY:
        json_obj_begin(j);
        json_kv_str(j, "array_of", gguf_type_name(kv->arr_type));
        json_kv_u64(j, "count", kv->arr_n);
        json_obj_end(j);
        break;
    case GGUF_T_F32: case GGUF_T_F64: json_f64(j, kv->v.f); break;
    case GGUF_T_BOOL: json_bool(j, kv->v.b); break;
    case GGUF_T_I8: case GGUF_T_I16: case GGUF_T_I32: case GGUF_T_I64: json_i64(j, kv->v.i); break;
    default: json_u64(j, kv->v.u); break;
    }
}

static int print_json(const summary *s, bool tensors, bool meta)
{
    const gguf_file *f = s->f;
    uint64_t v;
    json_w j;
    json_init(&j, stdout, true);
    json_obj_begin(&j);
    json_kv_str(&j, "file", f->path);
    json_kv_u64(&j, "file_bytes", f->size);
    json_kv_u64(&j, "gguf_version", f->version);
    json_kv_u64(&j, "alignment", f->alignment);
    json_key(&j, "architecture");
    if (s->arch[0]) json_str(&j, s->arch);
    else json_null_value(&j);
    json_opt_str(&j, s, "name", "general.name");
    json_kv_u64(&j, "parameters", s->params);
    json_opt_u64(&j, "context_length", s, "context_length");
    json_opt_u64(&j, "embedding_length", s, "embedding_length");
    json_opt_u64(&j, "block_count", s, "block_count");
    json_opt_u64(&j, "head_count", s, "attention.head_count");
    json_opt_u64(&j, "head_count_kv", s, "attention.head_count_kv");
    if (arch_u64(s, "expert_count", &v)) {   /* only a mixture of experts has them */
        json_opt_u64(&j, "expert_count", s, "expert_count");
        json_opt_u64(&j, "expert_used_count", s, "expert_used_count");
        json_opt_u64(&j, "expert_feed_forward_length", s, "expert_feed_forward_length");
    }
    json_opt_u64(&j, "vocab_size", s, NULL);
    json_opt_str(&j, s, "tokenizer_model", "tokenizer.ggml.model");
    json_opt_str(&j, s, "tokenizer_pre", "tokenizer.ggml.pre");
    json_key(&j, "file_type");
    if (gguf_get_u64(f, "general.file_type", &v)) json_u64(&j, v);
    else json_null_value(&j);
    json_kv_u64(&j, "kv_count", f->n_kv);
    json_kv_u64(&j, "tensor_count", f->n_tensors);
    json_kv_u64(&j, "tensor_bytes", s->tensor_bytes);
    json_key(&j, "dtypes");
    json_obj_begin(&j);
    for (int t = 0; t < N_TYPES; t++) {
        if (!s->count[t]) continue;
        json_key(&j, ember_dtype_name(t));
        json_obj_begin(&j);
        json_kv_u64(&j, "count", s->count[t]);
        json_kv_u64(&j, "bytes", s->bytes[t]);
        json_kv_fixed(&j, "share", f->size ? (double)s->bytes[t] / (double)f->size : 0.0, 6);
        json_obj_end(&j);
    }
    json_obj_end(&j);
    if (tensors) {
        json_key(&j, "tensors");
        json_arr_begin(&j);
        for (uint64_t i = 0; i < f->n_tensors; i++) {
            const gguf_tensor *t = &f->tensors[i];
            json_obj_begin(&j);
            json_kv_str(&j, "name", t->name_z);
            json_kv_str(&j, "dtype", ember_dtype_name(t->type));
            json_key(&j, "shape");
            json_arr_begin(&j);
            for (uint32_t d = 0; d < t->n_dims; d++) json_i64(&j, t->ne[d]);
            json_arr_end(&j);
            json_kv_u64(&j, "offset", t->offset);
            json_kv_u64(&j, "file_offset", t->file_offset);
            json_kv_u64(&j, "bytes", t->nbytes);
            json_obj_end(&j);
        }
        json_arr_end(&j);
    }
    if (meta) {
        json_key(&j, "metadata");
        json_obj_begin(&j);
        for (uint64_t i = 0; i < f->n_kv; i++) {
            const gguf_kv *kv = &f->kv[i];
            /* keys are validated UTF-8 without NUL by the reader */
            char *k = strndup(kv->key.ptr, (size_t)kv->key.len);
            if (!k) continue;
            json_key(&j, k);
            free(k);
            json_kv_value(&j, kv);
        }
        json_obj_end(&j);
    }
    json_obj_end(&j);
    return json_finish(&j);
}

/* One "warning: " line per line of the engine's metadata warnings. */
static void print_warnings(const char *w)
{
    while (w && *w) {
        size_t n = strcspn(w, "\n");
        printf("warning: %.*s\n", (int)n, w);
        w += n + (w[n] != 0);
    }
}

/* Vocabulary against the embedding (ember_vocab_check): what the tokenizer
   would refuse and what it accepts with a warning, so that a broken file is
   visible before chat or run trip over it. */
static void print_vocab_check(const char *path)
{
    char w[1024];
    ember_err err = {{0}};
    if (ember_vocab_check(path, w, sizeof w, &err)) printf("warning: vocabulary: %s\n", err.msg);
    else print_warnings(w);
}

/* --plan's pack cache line: whether the profile uses the cache and what a
   load would find there, looked up without packing. */
typedef struct {
    const char *state;       /* "unused", "off", "none", "valid", "missing" */
    char path[4096];
} pack_cache_view;

static void pack_cache_look(const ember_model *m, const ember_plan_opts *o, pack_cache_view *v)
{
    v->path[0] = 0;
    if (o->strategy != EMBER_STRATEGY_PACKED) v->state = "unused";
    else if (!o->pack_cache) v->state = "off";
    else {
        int r = ember_pack_cache_probe(m, v->path, sizeof v->path);
        v->state = r < 0 ? "none" : r ? "valid" : "missing";
    }
}

static void pack_cache_text(const pack_cache_view *v, const ember_plan_opts *o)
{
    if (!strcmp(v->state, "unused"))
        printf("pack cache: not used (strategy %s)\n", ember_strategy_name(o->strategy));
    else if (!strcmp(v->state, "off")) printf("pack cache: off (pack_cache: off or --pack-cache off)\n");
    else if (!strcmp(v->state, "none")) printf("pack cache: on, but no file can serve this plan (nothing packed, or no cache directory)\n");
    else if (!strcmp(v->state, "valid")) printf("pack cache: on; a valid file for this model and tensor set: %s\n", v->path);
    else printf("pack cache: on; no valid file for this model and tensor set yet: the first load writes %s\n", v->path);
}

/* --plan: open the model under the strategy or profile and print the
   execution plan the engine built (representation, kernel, bytes per tensor). */
static int inspect_plan(const char *path, const char *strategy, const char *profile_name, const gen_opts *cli,
                        bool json)
{
    cli_resolve_in in;
    memset(&in, 0, sizeof in);
    in.profile = profile_name;
    in.strategy = strategy;
    in.model = path;
    ember_plan_opts_default(&in.plan);
    gen_opts_default(&in.defaults);
    in.cli = *cli;
    cli_resolved r;
    ember_err err;
    if (cli_resolve(&in, &r, &err)) {
        fprintf(stderr, "ember inspect: %s\n", err.msg);
        return 1;
    }
    /* the KV cache a session of the resolved context would allocate */
    const int n_ctx = r.gen.set & GEN_OPT_BIT(OPT_CTX) ? r.gen.n_ctx : 0;
    ember_model *m = ember_model_open(path, &r.plan, &err);
    if (!m) {
        fprintf(stderr, "ember inspect: %s\n", err.msg);
        return 1;
    }
    const ember_plan *p = ember_model_plan(m);
    pack_cache_view pc;
    pack_cache_look(m, &r.plan, &pc);
    int rc = 0;
    if (json) {
        json_w j;
        json_init(&j, stdout, true);
        json_obj_begin(&j);
        json_kv_str(&j, "file", path);
        json_kv_str(&j, "architecture", ember_model_get_info(m)->arch);
        if (r.matched[0]) json_kv_str(&j, "profile", r.matched);
        json_kv_str(&j, "kv_cache", ember_kv_type_name(r.plan.kv_cache));
        json_kv_u64(&j, "kv_bytes", ember_kv_cache_bytes(m, n_ctx, r.plan.kv_cache, 0));
        json_key(&j, "pack_cache");
        json_obj_begin(&j);
        json_kv_bool(&j, "on", r.plan.strategy == EMBER_STRATEGY_PACKED && r.plan.pack_cache);
        json_kv_str(&j, "file_state", pc.state);
        if (pc.path[0]) json_kv_str(&j, "path", pc.path);
        json_obj_end(&j);
        plan_print_json(p, &r.plan, &j);
        json_obj_end(&j);
        rc = json_finish(&j) ? 1 : 0;
    } else {
        if (r.matched[0]) printf("%s\n", r.matched);
        plan_print_text(p, &r.plan, true, stdout);
        const int info_ctx = ember_model_get_info(m)->n_ctx_train;
        int shown = n_ctx > 0 ? n_ctx : info_ctx < 4096 ? info_ctx : 4096;
        if (shown > info_ctx) shown = info_ctx;
        printf("KV %s %.1f MiB at a %d-token context\n", ember_kv_type_name(r.plan.kv_cache),
               (double)ember_kv_cache_bytes(m, n_ctx, r.plan.kv_cache, 0) / 1048576, shown);
        pack_cache_text(&pc, &r.plan);
        print_warnings(ember_model_warnings(m));
        if (!ember_model_tokenizer(m)) printf("warning: no usable tokenizer: %s\n", ember_model_tokenizer_error(m));
    }
    ember_model_free(m);
    return rc;
}

int cmd_inspect(int argc, char **argv)
{
    const char *path = NULL;
    bool tensors = false, json = false, meta = false, plan = false;
    const char *strategy = NULL, *profile_name = NULL;
    gen_opts cli;   /* --kv-cache and --ctx: the option table's names and ranges */
    gen_opts_default(&cli);
    cli.set = 0;
    enum { O_TENSORS = 256, O_JSON, O_META, O_PLAN, O_STRATEGY, O_PROFILE, O_KV, O_CTX };
    static const struct option lo[] = {
        {"tensors", no_argument, 0, O_TENSORS}, {"json", no_argument, 0, O_JSON},
        {"meta", no_argument, 0, O_META}, {"plan", no_argument, 0, O_PLAN},
        {"strategy", required_argument, 0, O_STRATEGY}, {"profile", required_argument, 0, O_PROFILE},
        {"kv-cache", required_argument, 0, O_KV}, {"ctx", required_argument, 0, O_CTX},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (c) {
        case O_TENSORS: tensors = true; break;
        case O_JSON: json = true; break;
        case O_META: meta = true; break;
        case O_PLAN: plan = true; break;
        case O_STRATEGY: strategy = optarg; break;
        case O_PROFILE: profile_name = optarg; break;
        case O_KV:
        case O_CTX: {
            char msg[256];
            if (gen_opt_parse(c == O_KV ? OPT_KV_CACHE : OPT_CTX, optarg, &cli, msg, sizeof msg) != NUMARG_OK) {
                fprintf(stderr, "ember inspect: %s: %s\n", c == O_KV ? "--kv-cache" : "--ctx", msg);
                return 2;
            }
            break;
        }
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember inspect", argv, lo, c);
        }
    }
    if (optind + 1 < argc) {
        fprintf(stderr, "ember inspect: one FILE only ('%s' and '%s' given)\n", argv[optind], argv[optind + 1]);
        return 2;
    }
    if (optind < argc) path = argv[optind];
    if (!path) {
        usage(stderr);
        return 2;
    }
    if ((strategy || profile_name || cli.set) && !plan) {
        fprintf(stderr, "ember inspect: --strategy, --profile, --kv-cache and --ctx go with --plan\n");
        return 2;
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember inspect", &path, hf_path, sizeof hf_path)) return 1;
    if (plan) return inspect_plan(path, strategy, profile_name, &cli, json);   /* always per tensor */
    ember_err err = {{0}};
    gguf_file *f = gguf_open(path, &err);
    if (!f) {
        fprintf(stderr, "ember inspect: %s\n", err.msg);  /* the message names the file */
        return 1;
    }
    summary s;
    summarise(&s, f);
    int rc = 0;
    if (json) {
        if (print_json(&s, tensors, meta)) {
            fprintf(stderr, "ember inspect: writing JSON failed\n");
            rc = 1;
        }
    } else {
        print_text(&s, tensors, meta);
        print_vocab_check(path);
        if (ember_stdout_flush() != 0) rc = 1;   /* main says why */
    }
    gguf_close(f);
    return rc;
}
