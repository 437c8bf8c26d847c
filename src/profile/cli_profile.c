#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli_profile.h"
#include "profile.h"

int cli_resolve(const char *name, const char *strategy, const char *model, cli_resolved *r,
                ember_err *err)
{
    int threads = r->plan.threads;
    if (name) {
        char path[1024];
        profile_err pe;
        if (profile_find(name, path, sizeof path, &pe)) return ember_seterr(err, "%s", pe.msg);
        profile *p = profile_load_file(path, &pe);
        if (!p) return ember_seterr(err, "%s", pe.msg);
        profile_target t;
        int idx = -1;
        if (profile_target_from_file(&t, model, &pe) ||
            profile_match(p, &t, &r->plan, &idx, &pe)) {
            profile_free(p);
            return ember_seterr(err, "%s", pe.msg);
        }
        profile_apply_sampling(p, &r->samp);
        if (p->has_context) r->context = p->context;
        snprintf(r->matched, sizeof r->matched, "profile '%s' rule %d (line %d)", p->name, idx + 1,
                 idx >= 0 && idx < p->n_rules ? p->rules[idx].line : 0);
        profile_free(p);
        if (threads > 0) r->plan.threads = threads;   /* the command line wins */
    }
    if (strategy) {
        int s = ember_strategy_from_name(strategy);
        if (s < 0) return ember_seterr(err, "unknown strategy '%s' (eager, compressed, packed)", strategy);
        r->plan.strategy = (ember_strategy)s;
    }
    return 0;
}
