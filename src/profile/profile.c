/* Profile schema: node tree -> struct profile, with strict checks.
   Format and defaults are documented in man/ember-profile.5; keep the two
   in step. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember.h"
#include "profile.h"
#include "profile_yaml.h"

typedef struct {
    const char *label;
    profile_err *err;
} ctx;

/* ---- typed values --------------------------------------------------------- */

static const char *kind_word(const ynode *n)
{
    if (n->kind == YN_MAP) return "a mapping";
    if (n->kind == YN_SEQ) return "a list";
    if (n->null) return "nothing";
    return n->plain ? "a word" : "a quoted string";
}

static int want_string(ctx *c, const ynode *v, const char *key, char **out)
{
    if (v->kind != YN_SCALAR || v->null)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects a string, got %s", key, kind_word(v));
    if (memchr(v->str, 0, v->len))
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "'%s' contains a NUL character", key);
    char *s = strdup(v->str);
    if (!s) return profile_seterr(c->err, PROFILE_E_IO, c->label, 0, 0, "out of memory");
    free(*out);
    *out = s;
    return 0;
}

/* A key of the option table (options.h): the value is checked, and the
   message worded, exactly as on the command line and in /set.  Numbers
   must be unquoted: "4" in quotes is a string in YAML. */
static int want_opt(ctx *c, const ynode *v, const char *key, int id, gen_opts *vals)
{
    const char *what = gen_opt_table[id].type == GEN_FLOAT ? "a number" : "an integer";
    if (v->kind != YN_SCALAR || !v->plain || v->null)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects %s, got %s", key, what, kind_word(v));
    char msg[256];
    switch (gen_opt_parse(id, v->str, vals, msg, sizeof msg)) {
    case NUMARG_OK: return 0;
    case NUMARG_SYNTAX:
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col, "'%s': %s", key, msg);
    case NUMARG_RANGE: break;
    }
    return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col, "'%s': %s", key, msg);
}

static int want_bool(ctx *c, const ynode *v, const char *key, bool *out)
{
    if (v->kind == YN_SCALAR && v->plain) {
        if (!strcmp(v->str, "true") || !strcmp(v->str, "True") || !strcmp(v->str, "TRUE")) {
            *out = true;
            return 0;
        }
        if (!strcmp(v->str, "false") || !strcmp(v->str, "False") || !strcmp(v->str, "FALSE")) {
            *out = false;
            return 0;
        }
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects true or false, got '%s'", key, v->str);
    }
    return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                          "'%s' expects true or false, got %s", key, kind_word(v));
}

/* One of `words` (exact, case-sensitive); returns the index. */
static int want_word(ctx *c, const ynode *v, const char *key, const char *what,
                     const char *const *words, int n, int *out)
{
    if (v->kind != YN_SCALAR || v->null)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects a word, got %s", key, kind_word(v));
    for (int i = 0; i < n; i++)
        if (!strcmp(v->str, words[i])) {
            *out = i;
            return 0;
        }
    char list[200], hint[96];
    profile_join_words(list, sizeof list, words, n);
    return profile_seterr(c->err, PROFILE_E_ENUM, c->label, v->line, v->col,
                          "unknown %s '%s'%s; expected one of: %s", what, v->str,
                          profile_dym(hint, sizeof hint, v->str, words, n), list);
}

/* A GEN_WORD option of the table (kv_cache, pack_cache, reasoning): one
   of its words, with want_word's messages, kept as the table keeps it. */
static int want_option_word(ctx *c, const ynode *v, const char *key, const char *what, int id, gen_opts *vals)
{
    const char *words[8];
    int n = 0;
    for (const char *w; n < 8 && (w = gen_opt_table[id].names(n)); n++) words[n] = w;
    int t = 0;
    if (want_word(c, v, key, what, words, n, &t)) return -1;
    char msg[128];
    return gen_opt_parse(id, words[t], vals, msg, sizeof msg) == NUMARG_OK ? 0 : -1;
}

/* Parameter counts: 7000000000, 7B, 1.5B, 500M, 135m, 2K, 1T. */
static int want_params(ctx *c, const ynode *v, const char *key, uint64_t *out)
{
    if (v->kind != YN_SCALAR || v->null)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects a parameter count like 500M or 1.5B, got %s", key,
                              kind_word(v));
    const char *s = v->str;
    if (*s == '-')
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "'%s' is negative (%s): parameter counts are >= 0", key, s);
    char *end;
    double x = strtod(s, &end);
    double mul = 1;
    if (end != s && *end && !end[1]) {
        switch (*end) {
        case 'k': case 'K': mul = 1e3; end++; break;
        case 'm': case 'M': mul = 1e6; end++; break;
        case 'b': case 'B': case 'g': case 'G': mul = 1e9; end++; break;
        case 't': case 'T': mul = 1e12; end++; break;
        default: break;
        }
    }
    if (end == s || *end || !isdigit((unsigned char)s[0]) || isnan(x) || isinf(x))
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'%s' expects a parameter count like 500M or 1.5B, got '%s'", key, s);
    x *= mul;
    if (x > 1e15)
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "'%s' is %s: more than 10^15 parameters", key, s);
    *out = (uint64_t)(x + 0.5);
    return 0;
}

/* ---- mappings -------------------------------------------------------------- */

/* Resolves the key of pair i of map m against keys[]: its index, or -1
   with an error (non-string key, unknown key, duplicate).  first[] holds
   each key's first line (0 = not yet seen). */
static int map_key(ctx *c, const ynode *m, int i, const char *section, const char *const *keys,
                   int nkeys, int *first_line, int *first_col)
{
    const ynode *k = m->kids[i];
    if (k->kind != YN_SCALAR || k->null)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, k->line, k->col,
                              "keys must be plain words, got %s", kind_word(k));
    for (int j = 0; j < nkeys; j++) {
        if (strcmp(k->str, keys[j])) continue;
        if (first_line[j])
            return profile_seterr(c->err, PROFILE_E_DUPLICATE_KEY, c->label, k->line, k->col,
                                  "duplicate key '%s' (first given at %d:%d)", k->str,
                                  first_line[j], first_col[j]);
        first_line[j] = k->line;
        first_col[j] = k->col;
        return j;
    }
    char list[300], hint[96];
    profile_join_words(list, sizeof list, keys, nkeys);
    return profile_seterr(c->err, PROFILE_E_UNKNOWN_KEY, c->label, k->line, k->col,
                          "unknown key '%s' in %s%s; known keys: %s", k->str, section,
                          profile_dym(hint, sizeof hint, k->str, keys, nkeys), list);
}

static int want_map(ctx *c, const ynode *v, const char *key)
{
    if (v->kind == YN_MAP) return 0;
    return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                          "'%s' expects a mapping (key: value lines or {...}), got %s", key,
                          kind_word(v));
}

#define NKEYS(a) (int)(sizeof a / sizeof a[0])

static int is_glob(const char *s) { return strpbrk(s, "*?[") != NULL; }

static int check_dtype_word(ctx *c, const ynode *v, const char *s)
{
    if (is_glob(s) || ember_dtype_from_name(s) >= 0) return 0;
    const char *words[80];
    int n = 0;
    for (int i = 0; i < EMBER_FILE_TYPE_MAX && n < 80; i++) {
        if (!strcasecmp(ember_file_type_name(i) ? ember_file_type_name(i) : "", s)) return 0;
        if (ember_file_type_name(i)) words[n++] = ember_file_type_name(i);
        const ember_dtype_info *d = ember_dtype_get(i);
        if (d && d->name && n < 80) words[n++] = d->name;
    }
    char hint[96];
    return profile_seterr(c->err, PROFILE_E_ENUM, c->label, v->line, v->col,
                          "unknown dtype '%s'%s; use a weight type such as Q8_0, Q4_K, F16 or a "
                          "file type such as Q4_K_M (globs like Q4_* are allowed)",
                          s, profile_dym(hint, sizeof hint, s, words, n));
}

/* cpu: one of the makers ember_cpu_vendor() names (a misspelt one would
   silently never match) */
static int check_cpu_word(ctx *c, const ynode *v, const char *s)
{
    static const char *const words[] = {"intel", "amd", "other"};
    for (size_t i = 0; i < NKEYS(words); i++)
        if (!strcasecmp(s, words[i])) return 0;
    char hint[96];
    return profile_seterr(c->err, PROFILE_E_ENUM, c->label, v->line, v->col, "unknown cpu '%s'%s; use intel, amd or other",
                          s, profile_dym(hint, sizeof hint, s, words, (int)NKEYS(words)));
}

static int parse_match(ctx *c, const ynode *m, profile_rule *r)
{
    static const char *const keys[] = {"arch", "dtype", "name", "file", "min_params", "max_params", "cpu"};
    int fl[NKEYS(keys)] = {0}, fc[NKEYS(keys)] = {0};
    if (m->kind == YN_SCALAR && m->null) return 0;        /* `match:` alone = anything */
    if (want_map(c, m, "match")) return -1;
    const ynode *maxv = NULL;
    for (int i = 0; i + 1 < m->n; i += 2) {
        int k = map_key(c, m, i, "match", keys, NKEYS(keys), fl, fc);
        if (k < 0) return -1;
        const ynode *v = m->kids[i + 1];
        int rc = 0;
        switch (k) {
        case 0: rc = want_string(c, v, keys[k], &r->arch); break;
        case 1:
            rc = want_string(c, v, keys[k], &r->dtype);
            if (!rc) rc = check_dtype_word(c, v, r->dtype);
            break;
        case 2: rc = want_string(c, v, keys[k], &r->name_glob); break;
        case 3: rc = want_string(c, v, keys[k], &r->file_glob); break;
        case 4: rc = want_params(c, v, keys[k], &r->min_params); r->has_min = true; break;
        case 5: rc = want_params(c, v, keys[k], &r->max_params); r->has_max = true; maxv = v; break;
        case 6:
            rc = want_string(c, v, keys[k], &r->cpu);
            if (!rc) rc = check_cpu_word(c, v, r->cpu);
            break;
        }
        if (rc) return -1;
    }
    if (r->has_min && r->has_max && r->min_params > r->max_params)
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, maxv->line, maxv->col,
                              "max_params is below min_params: no model can match this rule");
    return 0;
}

static int parse_projections(ctx *c, const ynode *v, unsigned *mask)
{
    if (v->kind == YN_SCALAR && !v->null) {
        if (!strcmp(v->str, "all")) {
            *mask = EMBER_PROJ_ALL;
            return 0;
        }
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'projections' expects a list like [q, k, v, o, gate, up, down] or "
                              "the word all, got '%s'", v->str);
    }
    if (v->kind != YN_SEQ)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'projections' expects a list like [q, k, v, o, gate, up, down] or "
                              "the word all, got %s", kind_word(v));
    if (v->n == 0)
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "'projections' is empty: list at least one, or use strategy compressed");
    unsigned m = 0;
    for (int i = 0; i < v->n; i++) {
        const ynode *e = v->kids[i];
        int idx = 0;
        if (e->kind == YN_SCALAR && !e->null && !strcmp(e->str, "all")) {
            m |= EMBER_PROJ_ALL;
            continue;
        }
        const char *proj_names[EMBER_PROJ_NAMES];
        for (int j = 0; j < EMBER_PROJ_NAMES; j++) proj_names[j] = ember_proj_name(j);
        if (want_word(c, e, "projections", "projection", proj_names, EMBER_PROJ_NAMES, &idx)) return -1;
        if (m & (1u << idx))
            return profile_seterr(c->err, PROFILE_E_VALUE, c->label, e->line, e->col,
                                  "projection '%s' is listed twice", e->str);
        m |= 1u << idx;
    }
    *mask = m;
    return 0;
}

static int parse_pack(ctx *c, const ynode *m, profile_rule *r)
{
    static const char *const keys[] = {"projections", "when", "evict_source",
                                       "reevict_after_prefill", "prefill"};
    int fl[NKEYS(keys)] = {0}, fc[NKEYS(keys)] = {0};
    if (want_map(c, m, "pack")) return -1;
    for (int i = 0; i + 1 < m->n; i += 2) {
        int k = map_key(c, m, i, "pack", keys, NKEYS(keys), fl, fc);
        if (k < 0) return -1;
        const ynode *v = m->kids[i + 1];
        int rc = 0, idx = 0;
        switch (k) {
        case 0: rc = parse_projections(c, v, &r->projections); break;
        case 1:
            rc = want_word(c, v, keys[k], "pack time", profile_when_names, 3, &idx);
            r->when = (ember_pack_when)idx;
            break;
        case 2: rc = want_bool(c, v, keys[k], &r->evict_source); break;
        case 3: rc = want_bool(c, v, keys[k], &r->reevict_after_prefill); break;
        case 4:
            rc = want_word(c, v, keys[k], "prefill path", profile_prefill_names, 2, &idx);
            r->prefill = (profile_prefill)idx;
            break;
        }
        if (rc) return -1;
    }
    return 0;
}

static void rule_defaults(profile_rule *r)
{
    memset(r, 0, sizeof *r);
    r->strategy = EMBER_STRATEGY_COMPRESSED;
    r->projections = EMBER_PROJ_ALL;
    r->when = EMBER_PACK_AT_LOAD;
    r->evict_source = true;
    r->reevict_after_prefill = true;
    r->prefill = PROFILE_PREFILL_GENERIC;
}

static int parse_rule(ctx *c, const ynode *m, profile_rule *r)
{
    static const char *const keys[] = {"match", "strategy", "pack"};
    int fl[NKEYS(keys)] = {0}, fc[NKEYS(keys)] = {0};
    rule_defaults(r);
    r->line = m->line;
    if (m->kind != YN_MAP)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, m->line, m->col,
                              "each rule must be a mapping with 'match:' and 'strategy:', got %s",
                              kind_word(m));
    const ynode *pack = NULL;
    for (int i = 0; i + 1 < m->n; i += 2) {
        int k = map_key(c, m, i, "a rule", keys, NKEYS(keys), fl, fc);
        if (k < 0) return -1;
        const ynode *v = m->kids[i + 1];
        if (k == 0 && parse_match(c, v, r)) return -1;
        if (k == 1) {
            if (v->kind != YN_SCALAR || v->null)
                return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                                      "'strategy' expects a word, got %s", kind_word(v));
            const char *names[MAX_STRATEGIES];
            int ns = profile_strategy_names(names);
            int found = ember_strategy_from_name(v->str);
            if (found < 0 || found >= ns) {
                char list[100], hint[96];
                profile_join_words(list, sizeof list, names, ns);
                return profile_seterr(c->err, PROFILE_E_ENUM, c->label, v->line, v->col,
                                      "strategy '%s' does not exist in this ember%s; it has: %s",
                                      v->str, profile_dym(hint, sizeof hint, v->str, names, ns),
                                      list);
            }
            r->strategy = (ember_strategy)found;
        }
        if (k == 2) {
            if (parse_pack(c, v, r)) return -1;
            pack = m->kids[i];
            r->has_pack = true;
        }
    }
    if (!fl[1])
        return profile_seterr(c->err, PROFILE_E_MISSING, c->label, m->line, m->col,
                              "this rule has no 'strategy:' (eager, compressed or packed)");
    if (pack && r->strategy != EMBER_STRATEGY_PACKED)
        return profile_seterr(c->err, PROFILE_E_PACK_NOT_PACKED, c->label, pack->line, pack->col,
                              "'pack:' only applies to strategy packed, this rule is %s",
                              profile_strategy_name(r->strategy));
    return 0;
}

/* The keys of `sampling:` are the option table's (options.h). */
static int parse_sampling(ctx *c, const ynode *m, profile *p)
{
    const char *keys[OPT_COUNT];
    int ids[OPT_COUNT], nk = 0;
    for (int i = 0; i < OPT_COUNT; i++)
        if (gen_opt_table[i].section == GEN_PROFILE_SAMPLING) {
            ids[nk] = i;
            keys[nk++] = gen_opt_table[i].profile_key;
        }
    int fl[OPT_COUNT] = {0}, fc[OPT_COUNT] = {0};
    if (want_map(c, m, "sampling")) return -1;
    for (int i = 0; i + 1 < m->n; i += 2) {
        int k = map_key(c, m, i, "sampling", keys, nk, fl, fc);
        if (k < 0 || want_opt(c, m->kids[i + 1], keys[k], ids[k], &p->vals)) return -1;
    }
    return 0;
}

static int parse_rules(ctx *c, const ynode *v, profile *p)
{
    if (v->kind != YN_SEQ)
        return profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                              "'rules' expects a list of '- match: ... strategy: ...' items, got %s",
                              kind_word(v));
    if (v->n == 0)
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "'rules' is empty: add at least one rule (match: {} fits any model)");
    if (v->n > PROFILE_MAX_RULES)
        return profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                              "%d rules: at most %d are allowed", v->n, PROFILE_MAX_RULES);
    p->rules = calloc((size_t)v->n, sizeof *p->rules);
    if (!p->rules) return profile_seterr(c->err, PROFILE_E_IO, c->label, 0, 0, "out of memory");
    for (int i = 0; i < v->n; i++) {
        p->n_rules = i + 1;              /* so profile_free sees partial rules */
        if (parse_rule(c, v->kids[i], &p->rules[i])) return -1;
    }
    return 0;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i])) return 0;
    return 1;
}

static int parse_top(ctx *c, const ynode *root, profile *p)
{
    static const char *const keys[] = {"name", "description", "rules", "threads", "context",
                                       "kv_cache", "sampling", "system", "allow_fallback",
                                       "pack_cache", "reasoning"};
    int fl[NKEYS(keys)] = {0}, fc[NKEYS(keys)] = {0};
    if (root->kind != YN_MAP)
        return profile_seterr(c->err, PROFILE_E_NOT_MAPPING, c->label, root->line, root->col,
                              "a profile is a mapping (name:, rules:, ...), but this document is %s",
                              kind_word(root));
    for (int i = 0; i + 1 < root->n; i += 2) {
        int k = map_key(c, root, i, "the profile", keys, NKEYS(keys), fl, fc);
        if (k < 0) return -1;
        const ynode *v = root->kids[i + 1];
        int rc = 0;
        switch (k) {
        case 0:
            rc = want_string(c, v, keys[k], &p->name);
            if (!rc && !valid_name(p->name))
                rc = profile_seterr(c->err, PROFILE_E_VALUE, c->label, v->line, v->col,
                                    "name '%s': use 1-64 letters, digits, '.', '_' or '-'", p->name);
            break;
        case 1: rc = want_string(c, v, keys[k], &p->description); break;
        case 2: rc = parse_rules(c, v, p); break;
        case 3:
            /* 'auto' is the profile's word for 0 (one per core) */
            if (v->kind == YN_SCALAR && v->plain && !strcmp(v->str, "auto")) {
                p->vals.threads = 0;
                p->vals.set |= GEN_OPT_BIT(OPT_THREADS);
                break;
            }
            rc = want_opt(c, v, keys[k], OPT_THREADS, &p->vals);
            if (rc && c->err->code == PROFILE_E_TYPE) {
                char range[64];
                numarg_range_text(&gen_opt_table[OPT_THREADS].range, true, range, sizeof range);
                rc = profile_seterr(c->err, PROFILE_E_TYPE, c->label, v->line, v->col,
                                    "'threads' expects auto or an integer in %s, got %s", range,
                                    v->kind == YN_SCALAR && !v->null ? v->str : kind_word(v));
            }
            break;
        case 4: rc = want_opt(c, v, keys[k], OPT_CTX, &p->vals); break;
        case 5: rc = want_option_word(c, v, keys[k], "kv_cache type", OPT_KV_CACHE, &p->vals); break;
        case 6: rc = parse_sampling(c, v, p); break;
        case 7: rc = want_string(c, v, keys[k], &p->system); break;
        case 8:
            rc = want_bool(c, v, keys[k], &p->allow_fallback);
            p->has_allow_fallback = true;
            break;
        case 9: rc = want_option_word(c, v, keys[k], "pack_cache value", OPT_PACK_CACHE, &p->vals); break;
        case 10: rc = want_option_word(c, v, keys[k], "reasoning value", OPT_REASONING, &p->vals); break;
        }
        if (rc) return -1;
    }
    if (!fl[2])
        return profile_seterr(c->err, PROFILE_E_MISSING, c->label, root->line, root->col,
                              "the profile has no 'rules:' list (add '- match: {}' with a strategy)");
    return 0;
}

void profile_free(profile *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_rules; i++) {
        free(p->rules[i].arch);
        free(p->rules[i].dtype);
        free(p->rules[i].name_glob);
        free(p->rules[i].file_glob);
        free(p->rules[i].cpu);
    }
    free(p->rules);
    free(p->name);
    free(p->description);
    free(p->source);
    free(p->system);
    free(p);
}

/* "dir/auto.yaml" -> "auto" */
static char *name_from_label(const char *label)
{
    const char *b = strrchr(label, '/');
    b = b ? b + 1 : label;
    size_t n = strlen(b);
    if (n > 5 && !strcmp(b + n - 5, ".yaml")) n -= 5;
    return strndup(b, n);
}

profile *profile_load_mem(const char *name, const char *buf, size_t len, profile_err *err)
{
    profile_err dummy;
    if (!err) err = &dummy;
    memset(err, 0, sizeof *err);
    ctx c = {name ? name : "<profile>", err};
    if (len > PROFILE_MAX_BYTES) {
        profile_seterr(err, PROFILE_E_TOO_LARGE, c.label, 0, 0,
                       "%zu bytes: profiles are limited to 1 MiB", len);
        return NULL;
    }
    ynode *root;
    if (ynode_parse(c.label, buf, len, &root, err)) return NULL;
    profile *p = calloc(1, sizeof *p);
    if (!p) {
        ynode_free(root);
        profile_seterr(err, PROFILE_E_IO, c.label, 0, 0, "out of memory");
        return NULL;
    }
    p->allow_fallback = true;
    int rc = parse_top(&c, root, p);
    ynode_free(root);
    if (!rc) {
        p->source = strdup(c.label);
        if (!p->name) p->name = name_from_label(c.label);
        if (!p->description) p->description = strdup("");
        if (!p->source || !p->name || !p->description)
            rc = profile_seterr(err, PROFILE_E_IO, c.label, 0, 0, "out of memory");
    }
    if (rc) {
        profile_free(p);
        return NULL;
    }
    return p;
}

profile *profile_load_file(const char *path, profile_err *err)
{
    profile_err dummy;
    if (!err) err = &dummy;
    memset(err, 0, sizeof *err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        profile_seterr(err, PROFILE_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        profile_seterr(err, PROFILE_E_IO, path, 0, 0, "not a regular file");
        return NULL;
    }
    if (st.st_size > (off_t)PROFILE_MAX_BYTES) {
        close(fd);
        profile_seterr(err, PROFILE_E_TOO_LARGE, path, 0, 0,
                       "%lld bytes: profiles are limited to 1 MiB", (long long)st.st_size);
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        profile_seterr(err, PROFILE_E_IO, path, 0, 0, "out of memory");
        return NULL;
    }
    for (;;) {
        if (len == cap) {
            /* the file grew since fstat: still enforce the limit */
            if (cap > PROFILE_MAX_BYTES) break;
            char *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            profile_seterr(err, PROFILE_E_IO, path, 0, 0, "read failed: %s", strerror(e));
            return NULL;
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    profile *p = profile_load_mem(path, buf, len, err);
    free(buf);
    return p;
}
