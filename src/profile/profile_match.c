/* Which rule of a profile fits a model, and what it asks of the engine. */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "profile.h"
#include "profile_yaml.h"

static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

void profile_target_from_info(profile_target *t, const ember_model_info *info,
                              const char *file_path)
{
    memset(t, 0, sizeof *t);
    copy_str(t->arch, sizeof t->arch, info->arch);
    copy_str(t->name, sizeof t->name, info->name);
    const char *dn = ember_dtype_get(info->dominant_dtype) ? ember_dtype_name(info->dominant_dtype) : "";
    copy_str(t->dtype, sizeof t->dtype, dn);
    copy_str(t->file_type, sizeof t->file_type, info->file_type);
    t->n_params = info->n_params;
    if (file_path) copy_str(t->file, sizeof t->file, base_name(file_path));
    copy_str(t->cpu, sizeof t->cpu, ember_cpu_vendor());
}

int profile_target_from_file(profile_target *t, const char *path, profile_err *err)
{
    memset(t, 0, sizeof *t);
    ember_model_info info;
    ember_err e;
    memset(&info, 0, sizeof info);
    if (ember_model_peek(path, &info, &e)) {
        /* peek's messages sometimes already start with the path */
        size_t pl = strlen(path);
        const char *m = e.msg;
        if (!strncmp(m, path, pl) && m[pl] == ':') m += pl + 1 + (m[pl + 1] == ' ');
        return profile_seterr(err, PROFILE_E_MODEL, path, 0, 0, "%s", m);
    }
    profile_target_from_info(t, &info, path);
    return 0;
}

static bool glob_ci(const char *pat, const char *s)
{
    return fnmatch(pat, s, FNM_CASEFOLD) == 0;
}

bool profile_rule_matches(const profile_rule *r, const profile_target *t, const char **why)
{
    const char *w = NULL;
    if (r->arch && !glob_ci(r->arch, t->arch)) w = "arch";
    else if (r->dtype && !glob_ci(r->dtype, t->dtype) &&
             !(t->file_type[0] && glob_ci(r->dtype, t->file_type)))
        w = "dtype";
    else if (r->name_glob && !glob_ci(r->name_glob, t->name)) w = "name";
    else if (r->file_glob && !glob_ci(r->file_glob, t->file)) w = "file";
    else if (r->cpu && !glob_ci(r->cpu, t->cpu)) w = "cpu";
    else if (r->has_min && t->n_params < r->min_params) w = "min_params";
    else if (r->has_max && t->n_params > r->max_params) w = "max_params";
    if (why) *why = w;
    return w == NULL;
}

static void rule_to_opts(const profile *p, const profile_rule *r, ember_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = r->strategy;
    if (r->strategy == EMBER_STRATEGY_PACKED) {
        o->projections = r->projections;
        o->pack_when = r->when;
        o->evict_source = r->evict_source;
        o->reevict_after_prefill = r->reevict_after_prefill;
        o->packed_prefill = r->prefill == PROFILE_PREFILL_PACKED;
    } else {
        o->projections = 0;
        o->pack_when = EMBER_PACK_AT_LOAD;
    }
    o->allow_fallback = p->allow_fallback;
    o->threads = p->vals.set & GEN_OPT_BIT(OPT_THREADS) ? p->vals.threads : 0;
    o->kv_cache = p->vals.set & GEN_OPT_BIT(OPT_KV_CACHE) ? (ember_kv_type)p->vals.kv_cache : EMBER_KV_F16;
    o->pack_cache = p->vals.set & GEN_OPT_BIT(OPT_PACK_CACHE) ? p->vals.pack_cache != 0 : true;
}

int profile_match(const profile *p, const profile_target *t, ember_plan_opts *out,
                  int *rule_index, profile_err *err)
{
    char tried[400];
    size_t used = 0;
    tried[0] = 0;
    for (int i = 0; i < p->n_rules; i++) {
        const char *why;
        if (profile_rule_matches(&p->rules[i], t, &why)) {
            if (out) rule_to_opts(p, &p->rules[i], out);
            if (rule_index) *rule_index = i;
            return 0;
        }
        if (used < sizeof tried) {
            int w = snprintf(tried + used, sizeof tried - used, "%srule %d (line %d) failed on %s",
                             i ? "; " : "", i + 1, p->rules[i].line, why);
            if (w > 0) used += (size_t)w;
        }
    }
    if (rule_index) *rule_index = -1;
    return profile_seterr(err, PROFILE_E_NO_MATCH, p->source, 0, 0,
                          "profile '%s' has no rule for %s (arch %s, dtype %s%s%s, %llu params): "
                          "%s; add a last rule with 'match: {}'",
                          p->name, t->file[0] ? t->file : "this model", t->arch, t->dtype,
                          t->file_type[0] ? ", file type " : "", t->file_type,
                          (unsigned long long)t->n_params, tried);
}

int profile_match_info(const profile *p, const ember_model_info *info, const char *file_path,
                       ember_plan_opts *out, int *rule_index, profile_err *err)
{
    profile_target t;
    profile_target_from_info(&t, info, file_path);
    return profile_match(p, &t, out, rule_index, err);
}
