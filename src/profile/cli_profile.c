/* The one profile-resolution path (cli_profile.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli_profile.h"
#include "profile.h"

static int apply_profile(const cli_resolve_in *in, const ember_model_info *info, cli_resolved *r,
                         ember_err *err)
{
    char path[1024];
    profile_err pe;
    memset(&pe, 0, sizeof pe);
    if (profile_find(in->profile, path, sizeof path, &pe))   /* names the profile already */
        return ember_seterr(err, "%s", pe.msg);
    profile *p = profile_load_file(path, &pe);
    if (!p) return ember_seterr(err, "profile %s: %s", in->profile, pe.msg);
    int idx = -1, rc = 0;
    if (in->first_rule) {
        if (p->n_rules) r->plan.strategy = p->rules[0].strategy;
        idx = 0;
    } else {
        profile_target t;
        profile_target_from_info(&t, info, in->model);
        if (profile_match(p, &t, &r->plan, &idx, &pe))
            rc = ember_seterr(err, "profile %s: %s", in->profile, pe.msg);
    }
    if (!rc) {
        gen_opts_overlay(&r->gen, &p->vals);
        if (p->system) snprintf(r->system, sizeof r->system, "%s", p->system);
        snprintf(r->label, sizeof r->label, "%s", p->name ? p->name : in->profile);
        snprintf(r->matched, sizeof r->matched, "profile '%s' rule %d (line %d)", p->name, idx + 1,
                 idx >= 0 && idx < p->n_rules ? p->rules[idx].line : 0);
    }
    profile_free(p);
    return rc;
}

int cli_resolve(const cli_resolve_in *in, cli_resolved *r, ember_err *err)
{
    memset(r, 0, sizeof *r);
    r->plan = in->plan;
    r->gen = in->defaults;
    r->gen.set = 0;
    ember_model_info own;
    const ember_model_info *info = in->info;
    if (in->profile && !in->first_rule && !info) {
        if (ember_model_peek(in->model, &own, err)) return -1;
        info = &own;
    }
    if (in->profile && apply_profile(in, info, r, err)) return -1;
    if (in->strategy) {
        int s = ember_strategy_from_name(in->strategy);
        if (s < 0) return ember_seterr(err, "unknown strategy '%s' (eager, compressed, packed)", in->strategy);
        r->plan.strategy = (ember_strategy)s;
    }
    gen_opts_overlay(&r->gen, &in->cli);
    /* The thread count, decided here only: the command line, else the
       profile, else 0 (one per core). */
    r->plan.threads = r->gen.threads;
    /* the KV row type likewise: the command line, else the profile, else f16 */
    r->plan.kv_cache = (ember_kv_type)r->gen.kv_cache;
    /* and the pack cache: the command line, else the profile, else on */
    r->plan.pack_cache = r->gen.pack_cache != 0;
    return 0;
}

int cli_strategy_arg(const char *prog, const char *arg)
{
    int s = ember_strategy_from_name(arg);
    if (s < 0)
        fprintf(stderr, "%s: unknown strategy '%s' (eager, compressed, packed)\n", prog, arg);
    return s;
}
