/* Profiles: shipped files validate, malformed documents fail with the
   right class at the right line:column, rules match the right models,
   and the search path finds user profiles before shipped ones. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "tap.h"

#define R "rules:\n  - match: {}\n    strategy: compressed\n"

static const struct bad {
    const char *doc;
    profile_errc code;
    int line, col;
    const char *needle;      /* must appear in the message (NULL: no check) */
} bad[] = {
    {"", PROFILE_E_EMPTY, 1, 1, "empty"},
    {"# only a comment\n\n", PROFILE_E_EMPTY, 1, 1, NULL},
    {"---\n...\n", PROFILE_E_EMPTY, 1, 1, NULL},
    {"- a\n- b\n", PROFILE_E_NOT_MAPPING, 1, 1, "a list"},
    {"just words\n", PROFILE_E_NOT_MAPPING, 1, 1, NULL},
    {R "---\n" R, PROFILE_E_MULTI_DOC, 4, 1, "second YAML document"},
    {"name: x\n\trules: []\n", PROFILE_E_TAB, 2, 1, "tab"},
    {"rules:\n\t- match: {}\n", PROFILE_E_TAB, 2, 1, "spaces"},
    {"rules:\n  - match: {}\n    stratgy: compressed\n", PROFILE_E_UNKNOWN_KEY, 3, 5,
     "did you mean 'strategy'?"},
    {"rulez: []\n", PROFILE_E_UNKNOWN_KEY, 1, 1, "did you mean 'rules'?"},
    {R "sampling: {temprature: 0.5}\n", PROFILE_E_UNKNOWN_KEY, 4, 12, "did you mean 'temperature'?"},
    {R "colour: red\n", PROFILE_E_UNKNOWN_KEY, 4, 1, "known keys:"},
    {"name: a\n" R "name: b\n", PROFILE_E_DUPLICATE_KEY, 5, 1, "first given at 1:1"},
    {"rules:\n  - match: {arch: llama, arch: qwen2}\n    strategy: eager\n",
     PROFILE_E_DUPLICATE_KEY, 2, 26, NULL},
    {R "threads: -2\n", PROFILE_E_VALUE, 4, 10, "threads"},
    {R "threads: many\n", PROFILE_E_TYPE, 4, 10, "auto"},
    {R "threads: 1.5\n", PROFILE_E_TYPE, 4, 10, NULL},
    {R "context: 0\n", PROFILE_E_VALUE, 4, 10, NULL},
    {R "context: \"4096\"\n", PROFILE_E_TYPE, 4, 10, "quoted"},
    {R "context: [1]\n", PROFILE_E_TYPE, 4, 10, "a list"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {projections: [q, x]}\n",
     PROFILE_E_ENUM, 4, 29, "unknown projection 'x'"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {projections: [q, q]}\n",
     PROFILE_E_VALUE, 4, 29, "twice"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {projections: []}\n",
     PROFILE_E_VALUE, 4, 25, "empty"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {projections: some}\n",
     PROFILE_E_TYPE, 4, 25, NULL},
    {"rules:\n  - match: {}\n    strategy: turbo\n", PROFILE_E_ENUM, 3, 15,
     "eager, compressed, packed"},
    {"rules:\n  - match: {}\n    strategy: pakced\n", PROFILE_E_ENUM, 3, 15,
     "did you mean 'packed'?"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {when: later}\n",
     PROFILE_E_ENUM, 4, 18, "load, before-prefill, after-prefill"},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {prefill: fast}\n",
     PROFILE_E_ENUM, 4, 21, NULL},
    {"rules:\n  - match: {}\n    strategy: packed\n    pack: {evict_source: yes}\n",
     PROFILE_E_TYPE, 4, 26, "true or false"},
    {"rules:\n  - match: {}\n    strategy: compressed\n    pack: {when: load}\n",
     PROFILE_E_PACK_NOT_PACKED, 4, 5, "only applies to strategy packed"},
    {"rules:\n  - match: {arch: llama}\n", PROFILE_E_MISSING, 2, 5, "strategy"},
    {"name: x\ndescription: y\n", PROFILE_E_MISSING, 1, 1, "rules"},
    {"rules: []\n", PROFILE_E_VALUE, 1, 8, "empty"},
    {"rules: [5]\n", PROFILE_E_TYPE, 1, 9, NULL},
    {"rules: {a: b}\n", PROFILE_E_TYPE, 1, 8, NULL},
    {R "kv_cache: q4\n", PROFILE_E_ENUM, 4, 11, "f16, q8_0"},
    {R "kv_cache: [f16]\n", PROFILE_E_TYPE, 4, 11, "word"},
    {R "reasoning: maybe\n", PROFILE_E_ENUM, 4, 12, "auto, on, off"},
    {R "reasoning: [on]\n", PROFILE_E_TYPE, 4, 12, "word"},
    {R "allow_fallback: 1\n", PROFILE_E_TYPE, 4, 17, NULL},
    {"base: &b {arch: llama}\n" R, PROFILE_E_ALIAS, 1, 7, "anchor"},
    {"rules:\n  - match: *m\n    strategy: eager\n", PROFILE_E_ALIAS, 2, 12, "alias"},
    {"name: !!str x\n" R, PROFILE_E_UNSUPPORTED, 1, 7, "tag"},
    {"rules: [\n", PROFILE_E_SYNTAX, 2, 1, NULL},
    {"name: x\n  bad: indent\n", PROFILE_E_SYNTAX, 2, 6, NULL},
    {"name: \"x\n", PROFILE_E_SYNTAX, 2, 1, NULL},
    {"name: \xff\xfe\n", PROFILE_E_SYNTAX, 1, 7, "UTF-8"},
    {"? [a, b]\n: c\n", PROFILE_E_TYPE, 1, 3, "keys"},
    {R "sampling: {temperature: -1}\n", PROFILE_E_VALUE, 4, 25, NULL},
    {R "sampling: {top_p: 0}\n", PROFILE_E_VALUE, 4, 19, NULL},
    {R "sampling: {seed: -1}\n", PROFILE_E_VALUE, 4, 18, NULL},
    {R "sampling: 5\n", PROFILE_E_TYPE, 4, 11, "mapping"},
    {"rules:\n  - match: {min_params: 2B, max_params: 1B}\n    strategy: eager\n",
     PROFILE_E_VALUE, 2, 41, "below min_params"},
    {"rules:\n  - match: {max_params: lots}\n    strategy: eager\n", PROFILE_E_TYPE, 2, 25,
     "1.5B"},
    {"rules:\n  - match: {min_params: -1B}\n    strategy: eager\n", PROFILE_E_VALUE, 2, 25, NULL},
    {"rules:\n  - match: {dtype: Q8_O}\n    strategy: eager\n", PROFILE_E_ENUM, 2, 20,
     "did you mean 'Q8_0'?"},
    {"rules:\n  - match: [arch, llama]\n    strategy: eager\n", PROFILE_E_TYPE, 2, 12, NULL},
    {"name: \"bad name!\"\n" R, PROFILE_E_VALUE, 1, 7, NULL},
    {"description:\n" R, PROFILE_E_TYPE, 1, 13, "string"},
    {"rules: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     PROFILE_E_TOO_DEEP, 1, 39, "nested"},
};

static void test_malformed(void)
{
    int n = (int)(sizeof bad / sizeof bad[0]);
    tap_diag("%d malformed documents", n);
    for (int i = 0; i < n; i++) {
        profile_err err;
        profile *p = profile_load_mem("t.yaml", bad[i].doc, strlen(bad[i].doc), &err);
        int ok = !p && err.code == bad[i].code && err.line == bad[i].line &&
                 err.col == bad[i].col && (!bad[i].needle || strstr(err.msg, bad[i].needle));
        tap_ok(ok, "bad[%d] -> %s at %d:%d", i, profile_errc_name(bad[i].code), bad[i].line,
               bad[i].col);
        if (!ok) {
            tap_diag("got %s at %d:%d: %s", p ? "a profile" : profile_errc_name(err.code),
                     err.line, err.col, p ? "" : err.msg);
        }
        profile_free(p);
    }
}

/* reasoning: the option table's words, kept as a value the chat passes on */
static void test_reasoning(void)
{
    static const char doc[] = "rules:\n  - match: {}\n    strategy: compressed\nreasoning: off\n";
    profile_err err;
    profile *p = profile_load_mem("t.yaml", doc, strlen(doc), &err);
    gen_opts g;
    gen_opts_default(&g);
    if (p) gen_opts_overlay(&g, &p->vals);
    tap_ok(p && (p->vals.set & GEN_OPT_BIT(OPT_REASONING)) && gen_opts_reasoning_mode(&g) == 0,
           "reasoning: off is kept (enable_thinking false)");
    profile_free(p);
    gen_opts_default(&g);
    tap_ok(gen_opts_reasoning_mode(&g) == -1, "without it, the template decides (enable_thinking undefined)");
}

static void test_sizes(void)
{
    size_t n = PROFILE_MAX_BYTES + 1;
    char *big = malloc(n);
    if (!big) return;
    memset(big, '#', n);
    profile_err err;
    profile *p = profile_load_mem("big.yaml", big, n, &err);
    tap_ok(!p && err.code == PROFILE_E_TOO_LARGE && err.line == 0, "1 MiB + 1 byte refused: %s",
           err.msg);

    char dir[] = "/tmp/ember-prof-XXXXXX";
    if (!mkdtemp(dir)) {
        free(big);
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fwrite(big, 1, n, f);
        fclose(f);
    }
    p = profile_load_file(path, &err);
    tap_ok(!p && err.code == PROFILE_E_TOO_LARGE, "big file refused by size");
    unlink(path);
    p = profile_load_file(path, &err);
    tap_ok(!p && err.code == PROFILE_E_IO && strstr(err.msg, path), "missing file: %s", err.msg);
    rmdir(dir);
    free(big);
}

static profile *load_shipped(const char *name)
{
    const char *src = getenv("EMBER_SRCDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/profiles/%s.yaml", src ? src : "..", name);
    profile_err err;
    profile *p = profile_load_file(path, &err);
    if (!p) tap_diag("%s", err.msg);
    return p;
}

static void test_shipped(void)
{
    static const char *const names[] = {"auto", "eager", "compressed", "packed", "packed-lean",
                                        "low-memory"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        profile *p = load_shipped(names[i]);
        tap_ok(p && !strcmp(p->name, names[i]) && p->description[0] && p->n_rules >= 1,
               "shipped profile %s parses (name, description, rules)", names[i]);
        profile_free(p);
    }
    const unsigned no_down = EMBER_PROJ_SEVEN & ~(unsigned)EMBER_PROJ_DOWN;
    profile *p = load_shipped("auto");
    if (p) {
        const profile_rule *r = &p->rules[0];
        const profile_rule *r2 = &p->rules[1];
        const profile_rule *r3 = &p->rules[2];
        const profile_rule *r4 = &p->rules[3];
        const profile_rule *r5 = &p->rules[4];
        tap_ok(p->n_rules == 6 && r->strategy == EMBER_STRATEGY_PACKED &&
               r->projections == EMBER_PROJ_ALL && r->when == EMBER_PACK_BEFORE_PREFILL &&
               r->evict_source && r->reevict_after_prefill && !r->arch && !strcmp(r->dtype, "Q8_0") &&
               r2->strategy == EMBER_STRATEGY_PACKED && r2->projections == (EMBER_PROJ_ALL | EMBER_PROJ_OUTPUT) &&
               r2->when == EMBER_PACK_BEFORE_PREFILL && r2->evict_source && !r2->arch &&
               !strcmp(r2->dtype, "Q[456]_K*") && r3->strategy == EMBER_STRATEGY_PACKED &&
               r3->projections == (EMBER_PROJ_ALL | EMBER_PROJ_OUTPUT) && !strcmp(r3->dtype, "IQ4_XS") &&
               r4->strategy == EMBER_STRATEGY_PACKED && r4->projections == EMBER_PROJ_ALL &&
               !strcmp(r4->dtype, "MXFP4*") &&
               r5->strategy == EMBER_STRATEGY_PACKED && r5->projections == EMBER_PROJ_ALL && !strcmp(r5->dtype, "Q4_0") &&
               r5->cpu && !strcmp(r5->cpu, "intel") && !r->cpu && !r2->cpu &&
               p->rules[5].strategy == EMBER_STRATEGY_COMPRESSED && !p->rules[5].arch && !p->rules[5].dtype,
               "auto: Q8_0, Q[456]_K*, IQ4_XS and MXFP4* (any arch) -> packed projections before-prefill (the K-quant and "
               "IQ4_XS files' LM head too), Q4_0 on Intel, else compressed");
    }
    profile_free(p);
    p = load_shipped("packed");
    tap_ok(p && p->rules[0].projections == EMBER_PROJ_ALL, "packed: all projections");
    profile_free(p);
    p = load_shipped("packed-lean");
    tap_ok(p && p->rules[0].strategy == EMBER_STRATEGY_PACKED &&
           p->rules[0].projections == no_down, "packed-lean: everything but down");
    profile_free(p);
    p = load_shipped("low-memory");
    tap_ok(p && (p->vals.set & GEN_OPT_BIT(OPT_CTX)) && p->vals.n_ctx == 1024 && p->n_rules == 2 &&
           p->rules[0].prefill == PROFILE_PREFILL_PACKED &&
           p->rules[1].strategy == EMBER_STRATEGY_COMPRESSED,
           "low-memory: context 1024, packed only with packed prefill");
    profile_free(p);
    p = load_shipped("eager");
    tap_ok(p && p->rules[0].strategy == EMBER_STRATEGY_EAGER, "eager: eager");
    profile_free(p);
}

static const char match_doc[] =
    "name: m\n"
    "rules:\n"
    "  - match: {arch: llama, dtype: Q8_0}\n"
    "    strategy: packed\n"
    "    pack: {projections: [q, k, v, o, gate, up], when: before-prefill,\n"
    "           evict_source: true, reevict_after_prefill: true}\n"
    "  - match: {name: '*Instruct*', max_params: 1.5B}\n"
    "    strategy: eager\n"
    "  - match: {file: 'big-*.gguf', min_params: 500M}\n"
    "    strategy: packed\n"
    "  - match: {dtype: Q4_K_M}\n"
    "    strategy: eager\n"
    "  - match: {arch: qwen2}\n"
    "    strategy: compressed\n"
    "threads: 3\n"
    "allow_fallback: false\n"
    "sampling: {temperature: 0, top_k: 40, seed: 7}\n";

static profile_target tgt(const char *arch, const char *dtype, const char *ftype,
                          const char *name, uint64_t params, const char *file)
{
    profile_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.arch, sizeof t.arch, "%s", arch);
    snprintf(t.dtype, sizeof t.dtype, "%s", dtype);
    snprintf(t.file_type, sizeof t.file_type, "%s", ftype);
    snprintf(t.name, sizeof t.name, "%s", name);
    snprintf(t.file, sizeof t.file, "%s", file);
    t.n_params = params;
    return t;
}

static void test_match(void)
{
    profile_err err;
    profile *p = profile_load_mem("m.yaml", match_doc, strlen(match_doc), &err);
    if (!tap_ok(p != NULL, "match profile loads")) {
        tap_diag("%s", err.msg);
        return;
    }
    ember_plan_opts o;
    int ri = -9;
    profile_target t = tgt("llama", "Q8_0", "Q8_0", "Llama Mini", 1000000, "llama-mini-Q8_0.gguf");
    int rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 0 && o.strategy == EMBER_STRATEGY_PACKED &&
           o.projections == (EMBER_PROJ_SEVEN & ~(unsigned)EMBER_PROJ_DOWN) &&
           o.pack_when == EMBER_PACK_BEFORE_PREFILL && o.evict_source &&
           o.reevict_after_prefill && !o.packed_prefill && !o.allow_fallback && o.threads == 3,
           "llama Q8_0 -> rule 1, packed, plan opts filled");

    t = tgt("LLaMA", "q8_0", "", "x", 1, "a.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 0, "arch and dtype compare case-insensitively");

    /* cpu: the maker as the target carries it */
    {
        static const char cpu_doc[] = "name: c\nrules:\n  - match: {dtype: Q4_0, cpu: Intel}\n    strategy: packed\n"
                                      "  - match: {cpu: amd}\n    strategy: eager\n  - match: {}\n    strategy: compressed\n";
        profile *pc = profile_load_mem("c.yaml", cpu_doc, strlen(cpu_doc), &err);
        int ok = pc != NULL;
        static const struct { const char *cpu, *dtype; int rule; } cc[] = {
            {"intel", "Q4_0", 0}, {"amd", "Q4_0", 1}, {"other", "Q4_0", 2}, {"intel", "Q8_0", 2}, {"amd", "Q8_0", 1},
        };
        for (size_t i = 0; ok && i < sizeof cc / sizeof cc[0]; i++) {
            profile_target tc = tgt("llama", cc[i].dtype, "", "x", 1, "a.gguf");
            snprintf(tc.cpu, sizeof tc.cpu, "%s", cc[i].cpu);
            const char *why = NULL;
            int rci = -1;
            ok = profile_match(pc, &tc, NULL, &rci, &err) == 0 && rci == cc[i].rule &&
                 (cc[i].rule != 2 || (profile_rule_matches(&pc->rules[0], &tc, &why), why && (!strcmp(why, "cpu") || !strcmp(why, "dtype"))));
        }
        tap_ok(ok, "cpu: rules fit the target's maker (intel, amd, other), case-insensitively");
        profile_free(pc);
        profile_target th;
        memset(&th, 0, sizeof th);
        ember_model_info info;
        memset(&info, 0, sizeof info);
        profile_target_from_info(&th, &info, NULL);
        tap_ok(!strcmp(th.cpu, ember_cpu_vendor()) && (!strcmp(th.cpu, "intel") || !strcmp(th.cpu, "amd") || !strcmp(th.cpu, "other")),
               "a model's target carries this CPU's maker (%s)", th.cpu);
        static const char bad_doc[] = "name: b\nrules:\n  - match: {cpu: intell}\n    strategy: packed\n";
        profile *pb = profile_load_mem("b.yaml", bad_doc, strlen(bad_doc), &err);
        tap_ok(!pb && err.code == PROFILE_E_ENUM && strstr(err.msg, "unknown cpu 'intell'") && strstr(err.msg, "intel") &&
                   err.line == 3,
               "cpu: a misspelt maker is an error at its line (%s)", pb ? "loaded" : err.msg);
        profile_free(pb);
    }

    t = tgt("qwen2", "Q8_0", "Q8_0", "Qwen2 Instruct", 2000000000ull, "q.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 4 && o.strategy == EMBER_STRATEGY_COMPRESSED && o.projections == 0,
           "qwen2 Q8_0 2B Instruct: name glob fits but max_params does not -> rule 5");

    t = tgt("qwen2", "Q8_0", "Q8_0", "Qwen2 0.5B Instruct", 500000000ull, "q.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 1 && o.strategy == EMBER_STRATEGY_EAGER,
           "name glob *Instruct* with params <= 1.5B -> rule 2");

    t = tgt("qwen3", "F16", "F16", "Q3", 600000000ull, "big-q3.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 2 && o.strategy == EMBER_STRATEGY_PACKED &&
           o.projections == EMBER_PROJ_ALL && o.pack_when == EMBER_PACK_AT_LOAD,
           "file glob big-*.gguf with min_params 500M -> rule 3 (pack defaults)");

    t = tgt("qwen3", "F16", "F16", "Q3", 400000000ull, "big-q3.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc != 0 && err.code == PROFILE_E_NO_MATCH && ri == -1 &&
           strstr(err.msg, "rule 3 (line 9) failed on min_params") &&
           strstr(err.msg, "rule 1 (line 3) failed on arch"),
           "below min_params and nothing else fits -> no-match listing the rules");
    tap_diag("%s", err.msg);

    t = tgt("qwen2", "Q4_K", "Q4_K_M", "x", 1, "x.gguf");
    rc = profile_match(p, &t, &o, &ri, &err);
    tap_ok(rc == 0 && ri == 3 && o.strategy == EMBER_STRATEGY_EAGER,
           "dtype matches the file type name (Q4_K_M)");

    gen_opts so;
    gen_opts_default(&so);
    so.samp.top_k = 0;
    ember_model_info mi;
    memset(&mi, 0, sizeof mi);
    snprintf(mi.arch, sizeof mi.arch, "qwen2");
    snprintf(mi.file_type, sizeof mi.file_type, "Q4_K_M");
    mi.dominant_dtype = 12;   /* Q4_K */
    rc = profile_match_info(p, &mi, "/x/y/model.gguf", &o, &ri, &err);
    tap_ok(rc == 0 && ri == 3, "model info's file_type is matched by dtype: Q4_K_M");
    char *txt = NULL;
    size_t tlen = 0;
    FILE *mf = open_memstream(&txt, &tlen);
    if (mf) {
        profile_print(p, mf);
        fclose(mf);
    }
    tap_ok(txt && strstr(txt, "  temperature: 0\n") && strstr(txt, "  seed: 7\n") &&
           strstr(txt, "top_p: 0.9    # default") && strstr(txt, "threads: 3\n") &&
           strstr(txt, "allow_fallback: false") &&
           strstr(txt, "pack: {projections: [q, k, v, o, gate, up], when: before-prefill"),
           "profile_print shows set values and marks defaults");
    free(txt);
    gen_opts_overlay(&so, &p->vals);
    tap_ok(so.samp.temperature == 0 && so.samp.top_k == 40 && so.samp.seed == 7 && so.samp.top_p == 0.9f &&
           so.samp.repeat_last_n == 64 && so.threads == 3 && so.n_predict == 1024,
           "sampling: only the keys set are applied");
    profile_free(p);

    /* the shipped auto profile on hand-made infos */
    p = load_shipped("auto");
    if (p) {
        ember_model_info info;
        memset(&info, 0, sizeof info);
        snprintf(info.arch, sizeof info.arch, "llama");
        info.dominant_dtype = 8;  /* Q8_0 */
        info.n_params = 1000;
        rc = profile_match_info(p, &info, "/m/llama.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 0 && o.strategy == EMBER_STRATEGY_PACKED && o.allow_fallback,
               "auto: llama Q8_0 info -> packed");
        snprintf(info.arch, sizeof info.arch, "qwen2");
        rc = profile_match_info(p, &info, "/m/qwen.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 0 && o.strategy == EMBER_STRATEGY_PACKED,
               "auto: qwen2 Q8_0 info -> packed");
        info.dominant_dtype = 12; /* Q4_K */
        rc = profile_match_info(p, &info, "/m/qwen.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 1 && o.strategy == EMBER_STRATEGY_PACKED,
               "auto: qwen2 Q4_K info -> packed (rule 2)");
        snprintf(info.arch, sizeof info.arch, "llama");
        info.dominant_dtype = 14; /* Q6_K */
        rc = profile_match_info(p, &info, "/m/llama-q6k.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 1 && o.strategy == EMBER_STRATEGY_PACKED, "auto: llama Q6_K info -> packed (rule 2)");
        info.dominant_dtype = 23; /* IQ4_XS */
        rc = profile_match_info(p, &info, "/m/llama-iq4xs.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 2 && o.strategy == EMBER_STRATEGY_PACKED, "auto: llama IQ4_XS info -> packed (rule 3)");
        info.dominant_dtype = 39; /* MXFP4 (gpt-oss) */
        rc = profile_match_info(p, &info, "/m/gpt-oss.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 3 && o.strategy == EMBER_STRATEGY_PACKED, "auto: MXFP4 info -> packed (rule 4)");
        info.dominant_dtype = 11; /* Q3_K */
        rc = profile_match_info(p, &info, "/m/llama-q3k.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 5 && o.strategy == EMBER_STRATEGY_COMPRESSED, "auto: llama Q3_K info -> compressed");
        info.dominant_dtype = 10; /* Q2_K */
        rc = profile_match_info(p, &info, "/m/llama-q2k.gguf", &o, &ri, &err);
        tap_ok(rc == 0 && ri == 5 && o.strategy == EMBER_STRATEGY_COMPRESSED, "auto: llama Q2_K info -> compressed");
    }
    profile_free(p);

    const char *params =
        "rules:\n  - match: {min_params: 1.5B, max_params: 2k}\n    strategy: eager\n";
    p = profile_load_mem("p.yaml", params, strlen(params), &err);
    tap_ok(!p && err.code == PROFILE_E_VALUE, "1.5B > 2k rejected");
    params = "rules:\n  - match: {min_params: 1.5B, max_params: 7000000000}\n    strategy: eager\n";
    p = profile_load_mem("p.yaml", params, strlen(params), &err);
    tap_ok(p && p->rules[0].min_params == 1500000000ull &&
           p->rules[0].max_params == 7000000000ull, "param suffixes parse (1.5B, plain)");
    profile_free(p);
}

static void test_fixtures(void)
{
    char buf[PATH_MAX];
    if (!tap_shared("fixtures/models/llama-mini-Q8_0.gguf", buf, sizeof buf)) {
        tap_skip("fixtures absent: ../shared not available");
        return;
    }
    profile *p = load_shipped("auto");
    profile *lm = load_shipped("low-memory");
    if (!p || !lm) {
        profile_free(p);
        profile_free(lm);
        tap_ok(0, "shipped profiles load");
        return;
    }
    /* files no fixture has, by their header's words alone: Q3_K_M and Q2_K
       files stay compressed (packing their K-quant tensors measured past
       the peak-RSS bound, or no faster: auto.yaml) */
    static const struct { const char *dtype, *ftype; int rule; } by_type[] = {
        {"Q3_K", "Q3_K_M", 5}, {"Q3_K", "Q3_K_L", 5}, {"Q2_K", "Q2_K", 5}, {"Q2_K", "Q2_K_S", 5},
    };
    for (size_t i = 0; i < sizeof by_type / sizeof by_type[0]; i++) {
        profile_target t = {.arch = "llama", .n_params = 1};
        snprintf(t.dtype, sizeof t.dtype, "%s", by_type[i].dtype);
        snprintf(t.file_type, sizeof t.file_type, "%s", by_type[i].ftype);
        profile_err err;
        int ri = -1, rc = profile_match(p, &t, NULL, &ri, &err);
        tap_ok(rc == 0 && ri == by_type[i].rule, "auto: a %s file (dominant %s) -> rule %d (got %d)", by_type[i].ftype,
               by_type[i].dtype, by_type[i].rule + 1, ri + 1);
    }
    /* the rule of auto, then of low-memory (Q8_0 or not) */
    static const struct { const char *file; const char *arch, *dtype, *ftype; int rule, lm_rule; } fx[] = {
        {"llama-mini-Q8_0.gguf", "llama", "Q8_0", "Q8_0", 0, 0},
        {"llama-mini-Q4_0.gguf", "llama", "Q4_0", "Q4_0", -4, 1},   /* -4: 4 on Intel, else 5 */
        /* dominant dtype Q6_K in so small a model (its embedding): the
           file type Q4_K_M matches Q[456]_K* */
        {"llama-mini-Q4_K_M.gguf", "llama", NULL, "Q4_K_M", 1, 1},
        {"llama-mini-Q5_K_M.gguf", "llama", NULL, "Q5_K_M", 1, 1},
        {"llama-mini-Q6_K.gguf", "llama", "Q6_K", "Q6_K", 1, 1},
        {"llama-mini-f16.gguf", "llama", "F16", "F16", 5, 1},
        {"qwen2-mini-Q8_0.gguf", "qwen2", "Q8_0", "Q8_0", 0, 0},
        {"qwen2-mini-Q4_K_M.gguf", "qwen2", NULL, "Q4_K_M", 1, 1},
        {"qwen3-mini-f16.gguf", "qwen3", "F16", "F16", 5, 1},
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "fixtures/models/%s", fx[i].file);
        if (!tap_shared(rel, buf, sizeof buf)) {
            tap_skip(fx[i].file);
            continue;
        }
        profile_target t;
        profile_err err;
        if (profile_target_from_file(&t, buf, &err)) {
            tap_ok(0, "%s: %s", fx[i].file, err.msg);
            continue;
        }
        ember_plan_opts o;
        int ri = -1, ri2 = -1;
        int rc = profile_match(p, &t, &o, &ri, &err);
        int rc2 = profile_match(lm, &t, NULL, &ri2, &err);
        const int want = fx[i].rule >= 0 ? fx[i].rule : strcmp(ember_cpu_vendor(), "intel") ? 5 : 4;
        tap_ok(rc == 0 && rc2 == 0 && ri == want && ri2 == fx[i].lm_rule &&
               !strcmp(t.arch, fx[i].arch) && (!fx[i].dtype || !strcmp(t.dtype, fx[i].dtype)) &&
               !strcmp(t.file_type, fx[i].ftype) && t.n_params > 0 && !strcmp(t.file, fx[i].file),
               "%s: arch %s dtype %s ftype %s, %llu params -> auto rule %d", fx[i].file, t.arch,
               t.dtype, t.file_type, (unsigned long long)t.n_params, ri + 1);
    }
    profile_free(p);
    profile_free(lm);
    profile_target t;
    profile_err err;
    if (tap_shared("fixtures/tokenizers/llama3-bpe.gguf", buf, sizeof buf)) {
        int rc = profile_target_from_file(&t, buf, &err);
        tap_ok(rc != 0 || t.dtype[0] == 0, "vocab-only file: no weights to match on");
    }
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

static void test_search(void)
{
    const char *src = getenv("EMBER_SRCDIR");
    char shipped[PATH_MAX];
    snprintf(shipped, sizeof shipped, "%s/profiles", src ? src : "..");
    char dir[] = "/tmp/ember-xdg-XXXXXX";
    if (!mkdtemp(dir)) {
        tap_ok(0, "mkdtemp");
        return;
    }
    char a[PATH_MAX], b[PATH_MAX + 32], c[PATH_MAX + 32], user[PATH_MAX];
    snprintf(a, sizeof a, "%s/ember", dir);
    snprintf(user, sizeof user, "%s/ember/profiles", dir);
    mkdir(a, 0700);
    mkdir(user, 0700);
    snprintf(b, sizeof b, "%s/auto.yaml", user);
    snprintf(c, sizeof c, "%s/mine.yaml", user);
    write_file(b, "description: my auto\n" R);
    write_file(c, "description: mine\n" R);
    setenv("XDG_CONFIG_HOME", dir, 1);
    setenv("EMBER_PROFILE_DIR", shipped, 1);

    char out[PATH_MAX];
    profile_err err;
    tap_ok(profile_find("auto", out, sizeof out, &err) == 0 && !strcmp(out, b),
           "a user profile shadows the shipped one");
    char want[PATH_MAX + 16];
    snprintf(want, sizeof want, "%s/eager.yaml", shipped);
    tap_ok(profile_find("eager", out, sizeof out, &err) == 0 && !strcmp(out, want),
           "a name not in the user dir comes from EMBER_PROFILE_DIR");
    tap_ok(profile_find("nope", out, sizeof out, &err) != 0 && err.code == PROFILE_E_NOT_FOUND &&
           strstr(err.msg, user) && strstr(err.msg, shipped),
           "unknown name -> not-found naming both places: %s", err.msg);
    tap_ok(profile_find(c, out, sizeof out, &err) == 0 && !strcmp(out, c), "a path is a path");
    tap_ok(profile_find("missing.yaml", out, sizeof out, &err) != 0 &&
           err.code == PROFILE_E_NOT_FOUND, "NAME.yaml is taken as a path");

    profile_entry *v;
    int n = profile_list(&v);
    int user_auto = -1, ship_auto = -1, mine = -1, ship_n = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(v[i].name, "auto") && v[i].user) user_auto = i;
        if (!strcmp(v[i].name, "auto") && !v[i].user) ship_auto = i;
        if (!strcmp(v[i].name, "mine")) mine = i;
        ship_n += !v[i].user;
    }
    tap_ok(n == 8 && ship_n == 6 && user_auto >= 0 && ship_auto == user_auto + 1 &&
           v[user_auto].shadowing && v[ship_auto].shadowed && mine >= 0 &&
           !v[mine].shadowing && v[mine].user,
           "profile_list: 6 shipped + 2 user, shadowing marked (%d found)", n);
    free(v);

    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", dir, 1);                       /* ~/.config/ember/profiles */
    char home_user[PATH_MAX + 32];
    snprintf(home_user, sizeof home_user, "%s/.config/ember/profiles", dir);
    tap_ok(profile_find("mine", out, sizeof out, &err) != 0 && strstr(err.msg, home_user),
           "without XDG_CONFIG_HOME, ~/.config/ember/profiles is searched");
    unlink(b);
    unlink(c);
    rmdir(user);
    rmdir(a);
    rmdir(dir);
}

/* The man page's examples are real profiles: keeps ember-profile(5) and
   the loader in step. */
static void test_man_examples(void)
{
    const char *src = getenv("EMBER_SRCDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/man/ember-profile.5", src ? src : "..");
    FILE *f = fopen(path, "r");
    if (!f) {
        tap_skip("man/ember-profile.5 not found");
        return;
    }
    char line[512], doc[8192];
    size_t used = 0;
    int in = 0, n = 0, good = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, ".EX", 3)) { in = 1; used = 0; doc[0] = 0; continue; }
        if (!strncmp(line, ".EE", 3)) {
            in = 0;
            if (!strstr(doc, "rules:")) continue;
            n++;
            profile_err err;
            profile *p = profile_load_mem("man-example", doc, used, &err);
            if (p) good++;
            else tap_diag("man example %d: %s", n, err.msg);
            profile_free(p);
            continue;
        }
        if (!in) continue;
        for (char *c = line; *c && used + 1 < sizeof doc; c++) {
            if (c[0] == '\\' && c[1] == '-') continue;   /* roff \- is a plain '-' */
            doc[used++] = *c;
        }
        doc[used] = 0;
    }
    fclose(f);
    tap_ok(n >= 2 && good == n, "the %d profile examples in ember-profile(5) load", n);
}

int main(void)
{
    test_malformed();
    test_reasoning();
    test_sizes();
    test_shipped();
    test_match();
    test_fixtures();
    test_search();
    test_man_examples();
    return tap_done();
}
