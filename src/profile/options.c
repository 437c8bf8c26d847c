/* The sampling and generation option table (options.h). */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "options.h"

#define AT(field) offsetof(gen_opts, field)
#define RANGE(lo, hi) {(lo), (hi), false, false, 0, NULL}

/* The words of an on/off option, by value. */
static const char *onoff_name(int v) { return v == 0 ? "off" : v == 1 ? "on" : NULL; }
static const char *reasoning_name(int v)
{
    return v == GEN_REASONING_AUTO ? "auto" : v == GEN_REASONING_ON ? "on" : v == GEN_REASONING_OFF ? "off" : NULL;
}

int gen_opts_reasoning_mode(const gen_opts *g) { return g->reasoning == GEN_REASONING_ON ? 1 : g->reasoning == GEN_REASONING_OFF ? 0 : -1; }

/* Ranges: what the sampler and the engine can honour, and small enough
   that no arithmetic on them overflows (n_predict + prompt fits an int;
   1024 threads is already far beyond any machine this runs on). */
const gen_opt gen_opt_table[OPT_COUNT] = {
    [OPT_TEMP] = {"--temp", 0, "T", GEN_PROFILE_SAMPLING, "temperature", "temp", GEN_FLOAT,
                  RANGE(0, 100), 0.7, AT(samp.temperature), "temperature; 0 = greedy"},
    [OPT_TOP_K] = {"--top-k", 0, "K", GEN_PROFILE_SAMPLING, "top_k", "top_k", GEN_INT,
                   RANGE(0, 1000000), 40, AT(samp.top_k), "keep the K most likely tokens; 0 = off"},
    [OPT_TOP_P] = {"--top-p", 0, "P", GEN_PROFILE_SAMPLING, "top_p", "top_p", GEN_FLOAT,
                   {0, 1, true, false, 0, NULL}, 0.9, AT(samp.top_p), "nucleus threshold; 1 = off"},
    [OPT_MIN_P] = {"--min-p", 0, "P", GEN_PROFILE_SAMPLING, "min_p", "min_p", GEN_FLOAT,
                   RANGE(0, 1), 0.05, AT(samp.min_p), "drop tokens below P x the best; 0 = off"},
    [OPT_REPEAT_PENALTY] = {"--repeat-penalty", 0, "R", GEN_PROFILE_SAMPLING, "repeat_penalty",
                            "repeat_penalty", GEN_FLOAT, {0, 100, true, false, 0, NULL}, 1.0,
                            AT(samp.repeat_penalty), "repetition penalty; 1 = off"},
    [OPT_REPEAT_LAST_N] = {"--repeat-last-n", 0, "N", GEN_PROFILE_SAMPLING, "repeat_last_n",
                           "repeat_last_n", GEN_INT, RANGE(0, 1000000), 64, AT(samp.repeat_last_n),
                           "recent tokens the penalty looks at"},
    [OPT_SEED] = {"--seed", 0, "S", GEN_PROFILE_SAMPLING, "seed", "seed", GEN_U64,
                  RANGE(0, 0), 0, AT(samp.seed), "sampling seed"},
    [OPT_N_PREDICT] = {"--n-predict", 'n', "N", GEN_PROFILE_NONE, NULL, "n_predict", GEN_INT,
                       {1, 1048576, false, true, -1, "no limit"}, 1024, AT(n_predict),
                       "at most N tokens per reply (run: in total)"},
    [OPT_CTX] = {"--ctx", 0, "N", GEN_PROFILE_TOP, "context", NULL, GEN_INT, RANGE(16, 1048576), 4096,
                 AT(n_ctx), "context size in tokens"},
    [OPT_THREADS] = {"--threads", 't', "N", GEN_PROFILE_TOP, "threads", NULL, GEN_INT, RANGE(0, 1024), 0,
                     AT(threads), "threads; 0 = one per core"},
    [OPT_KV_CACHE] = {"--kv-cache", 0, "TYPE", GEN_PROFILE_TOP, "kv_cache", NULL, GEN_WORD,
                      RANGE(0, EMBER_KV_TYPES - 1), EMBER_KV_F16, AT(kv_cache),
                      "KV cache rows; q8_0 takes 34/64 of f16's memory", ember_kv_type_name},
    [OPT_PACK_CACHE] = {"--pack-cache", 0, "on|off", GEN_PROFILE_TOP, "pack_cache", NULL, GEN_WORD, RANGE(0, 1), 1,
                        AT(pack_cache), "keep packed tiles in a cache file and map them on the next load",
                        onoff_name},
    [OPT_REASONING] = {"--reasoning", 0, "auto|on|off", GEN_PROFILE_TOP, "reasoning", "reasoning", GEN_WORD,
                   RANGE(0, 2), GEN_REASONING_AUTO, AT(reasoning),
                   "think first (the template's enable_thinking; auto: as it decides)",
                   reasoning_name},
};

/* "f16, q8_0": the names of a GEN_WORD option */
static void word_list(const gen_opt *o, char *buf, size_t cap)
{
    size_t k = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; o->names(i) && k < cap; i++) {
        int w = snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", o->names(i));
        if (w < 0) break;
        k += (size_t)w;
    }
}

static void *field(gen_opts *g, int id) { return (char *)g + gen_opt_table[id].offset; }
static const void *cfield(const gen_opts *g, int id) { return (const char *)g + gen_opt_table[id].offset; }

void gen_opts_default(gen_opts *g)
{
    memset(g, 0, sizeof *g);
    for (int i = 0; i < OPT_COUNT; i++) {
        const gen_opt *o = &gen_opt_table[i];
        switch (o->type) {
        case GEN_INT:
        case GEN_WORD: *(int *)field(g, i) = (int)o->dflt; break;
        case GEN_FLOAT: *(float *)field(g, i) = (float)o->dflt; break;
        case GEN_U64: *(uint64_t *)field(g, i) = (uint64_t)o->dflt; break;
        }
    }
}

numarg_status gen_opt_parse(int id, const char *text, gen_opts *g, char *msg, size_t cap)
{
    const gen_opt *o = &gen_opt_table[id];
    numarg_status st = NUMARG_OK;
    switch (o->type) {
    case GEN_INT: {
        long long v;
        st = numarg_int(text, (long long)o->range.lo, (long long)o->range.hi, &o->range, &v, msg, cap);
        if (st == NUMARG_OK) *(int *)field(g, id) = (int)v;
        break;
    }
    case GEN_FLOAT: {
        double v;
        st = numarg_float(text, &o->range, &v, msg, cap);
        if (st == NUMARG_OK) *(float *)field(g, id) = (float)v;
        break;
    }
    case GEN_U64: {
        uint64_t v;
        st = numarg_u64(text, &v, msg, cap);
        if (st == NUMARG_OK) *(uint64_t *)field(g, id) = v;
        break;
    }
    case GEN_WORD: {
        int v = -1;
        for (int i = 0; o->names(i); i++)
            if (!strcmp(text, o->names(i))) v = i;
        if (v < 0) {
            char names[128];
            word_list(o, names, sizeof names);
            snprintf(msg, cap, "expected one of %s, got '%s'", names, text);
            st = NUMARG_RANGE;
        } else {
            *(int *)field(g, id) = v;
        }
        break;
    }
    }
    if (st == NUMARG_OK) g->set |= GEN_OPT_BIT(id);
    return st;
}

void gen_opts_overlay(gen_opts *dst, const gen_opts *src)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(src->set & GEN_OPT_BIT(i))) continue;
        size_t n = gen_opt_table[i].type == GEN_U64 ? sizeof(uint64_t)
                 : gen_opt_table[i].type == GEN_FLOAT ? sizeof(float) : sizeof(int);
        memcpy(field(dst, i), cfield(src, i), n);
        dst->set |= GEN_OPT_BIT(i);
    }
}

int gen_opt_by_set_key(const char *key, size_t len)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        const char *k = gen_opt_table[i].set_key;
        if (k && strlen(k) == len && !strncmp(k, key, len)) return i;
    }
    return -1;
}

int gen_opt_by_profile_key(gen_opt_section section, const char *key)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        const gen_opt *o = &gen_opt_table[i];
        if (o->section == section && o->profile_key && !strcmp(o->profile_key, key)) return i;
    }
    return -1;
}

void gen_opt_format(int id, const gen_opts *g, char *buf, size_t cap)
{
    switch (gen_opt_table[id].type) {
    case GEN_INT: snprintf(buf, cap, "%d", *(const int *)cfield(g, id)); break;
    case GEN_FLOAT: snprintf(buf, cap, "%g", (double)*(const float *)cfield(g, id)); break;
    case GEN_U64: snprintf(buf, cap, "%llu", (unsigned long long)*(const uint64_t *)cfield(g, id)); break;
    case GEN_WORD: {
        const char *n = gen_opt_table[id].names(*(const int *)cfield(g, id));
        snprintf(buf, cap, "%s", n ? n : "?");
        break;
    }
    }
}

void gen_opts_set_summary(const gen_opts *g, char *buf, size_t cap)
{
    size_t k = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < OPT_COUNT && k < cap; i++) {
        if (!gen_opt_table[i].set_key) continue;
        char v[48];
        gen_opt_format(i, g, v, sizeof v);
        int w = snprintf(buf + k, cap - k, "%s%s %s", k ? ", " : "", gen_opt_table[i].set_key, v);
        if (w < 0) break;
        k += (size_t)w;
    }
}

void gen_opts_set_keys(char *buf, size_t cap)
{
    size_t k = 0;
    if (cap) buf[0] = 0;
    for (int i = 0; i < OPT_COUNT && k < cap; i++) {
        if (!gen_opt_table[i].set_key) continue;
        int w = snprintf(buf + k, cap - k, "%s%s", k ? ", " : "", gen_opt_table[i].set_key);
        if (w < 0) break;
        k += (size_t)w;
    }
}

/* ---- command lines ---------------------------------------------------------- */

int gen_opts_getopt(struct option *lo, int n, uint32_t mask, char *shorts, size_t shorts_cap)
{
    size_t sl = strlen(shorts);
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(mask & GEN_OPT_BIT(i))) continue;
        const gen_opt *o = &gen_opt_table[i];
        lo[n++] = (struct option){o->cli + 2, required_argument, 0, GEN_OPT_GETOPT + i};
        if (o->short_opt && sl + 3 < shorts_cap) {
            shorts[sl++] = o->short_opt;
            shorts[sl++] = ':';
            shorts[sl] = 0;
        }
    }
    lo[n] = (struct option){0, 0, 0, 0};
    return n;
}

const char *gen_opts_typed(int argc, char **argv, const char *optarg, char *buf, size_t cap)
{
    snprintf(buf, cap, "?");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (optarg == a) {                     /* "-n abc": the option is the word before */
            snprintf(buf, cap, "%s", argv[i - 1]);
            break;
        }
        if (optarg > a && optarg <= a + strlen(a)) {   /* "--ctx=5", "-n5" */
            size_t n = (size_t)(optarg - a);
            if (n && a[n - 1] == '=') n--;
            snprintf(buf, cap, "%.*s", (int)n, a);
            break;
        }
    }
    return buf;
}

int gen_opts_getopt_handle(int c, const char *prog, int argc, char **argv, const char *optarg,
                           gen_opts *g)
{
    int id = c - GEN_OPT_GETOPT;
    if (c < 'z' + 1 && c > 0) {                /* a short letter of the table */
        id = -1;
        for (int i = 0; i < OPT_COUNT; i++)
            if (gen_opt_table[i].short_opt == c) id = i;
    }
    if (id < 0 || id >= OPT_COUNT) return 0;
    char msg[256], typed[64];
    if (gen_opt_parse(id, optarg, g, msg, sizeof msg) != NUMARG_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, gen_opts_typed(argc, argv, optarg, typed, sizeof typed), msg);
        return -1;
    }
    return 1;
}

void gen_opts_usage(FILE *out, uint32_t mask, const gen_opts *dflt, const char *const *dflt_text)
{
    for (int i = 0; i < OPT_COUNT; i++) {
        if (!(mask & GEN_OPT_BIT(i))) continue;
        const gen_opt *o = &gen_opt_table[i];
        char head[64], v[64], range[96], tail[200];
        if (o->short_opt) snprintf(head, sizeof head, "-%c, %s %s", o->short_opt, o->cli, o->metavar);
        else snprintf(head, sizeof head, "    %s %s", o->cli, o->metavar);
        if (dflt_text && dflt_text[i]) snprintf(v, sizeof v, ": %s", dflt_text[i]);
        else {
            v[0] = ' ';
            gen_opt_format(i, dflt, v + 1, sizeof v - 1);
        }
        if (o->type == GEN_U64) snprintf(range, sizeof range, "0..18446744073709551615");
        else if (o->type == GEN_WORD) word_list(o, range, sizeof range);
        else numarg_range_text(&o->range, o->type == GEN_INT, range, sizeof range);
        snprintf(tail, sizeof tail, "[%s; default%s]", range, v);
        /* the range and default on the same line when it fits 80 columns;
           a head too wide for its column has the help on the next line */
        if (strlen(head) > 22) fprintf(out, "  %s\n", head);
        int used = fprintf(out, "  %-22s %s", strlen(head) > 22 ? "" : head, o->help);
        if (used + 1 + (int)strlen(tail) < 80) fprintf(out, " %s\n", tail);
        else fprintf(out, "\n  %-22s %s\n", "", tail);
    }
}
