/* profile_print: the resolved profile as YAML-ish text. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "profile_yaml.h"

/* ---- printing ---------------------------------------------------------------- */

static void print_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else if (*s == '\n') fputs("\\n", out);
        else if ((unsigned char)*s < 0x20) fprintf(out, "\\x%02x", (unsigned char)*s);
        else fputc(*s, out);
    }
    fputc('"', out);
}

void profile_print(const profile *p, FILE *out)
{
    fprintf(out, "name: %s\n", p->name);
    fprintf(out, "description: ");
    print_str(out, p->description);
    fprintf(out, "\n# source: %s\n", p->source);
    fprintf(out, "rules:\n");
    for (int i = 0; i < p->n_rules; i++) {
        const profile_rule *r = &p->rules[i];
        fprintf(out, "  - match: {");
        int n = 0;
        if (r->arch) { fprintf(out, "%sarch: ", n++ ? ", " : ""); print_str(out, r->arch); }
        if (r->dtype) { fprintf(out, "%sdtype: ", n++ ? ", " : ""); print_str(out, r->dtype); }
        if (r->name_glob) { fprintf(out, "%sname: ", n++ ? ", " : ""); print_str(out, r->name_glob); }
        if (r->file_glob) { fprintf(out, "%sfile: ", n++ ? ", " : ""); print_str(out, r->file_glob); }
        if (r->has_min) fprintf(out, "%smin_params: %llu", n++ ? ", " : "", (unsigned long long)r->min_params);
        if (r->has_max) fprintf(out, "%smax_params: %llu", n++ ? ", " : "", (unsigned long long)r->max_params);
        fprintf(out, "}    # rule %d, line %d\n", i + 1, r->line);
        fprintf(out, "    strategy: %s\n", profile_strategy_name(r->strategy));
        if (r->strategy == EMBER_STRATEGY_PACKED) {
            char pl[64];
            profile_proj_list(r->projections, pl, sizeof pl);
            fprintf(out, "    pack: {projections: %s%s%s, when: %s, evict_source: %s,\n"
                         "           reevict_after_prefill: %s, prefill: %s}%s\n",
                    strcmp(pl, "all") ? "[" : "", pl, strcmp(pl, "all") ? "]" : "",
                    profile_when_name(r->when), r->evict_source ? "true" : "false",
                    r->reevict_after_prefill ? "true" : "false", profile_prefill_names[r->prefill],
                    r->has_pack ? "" : "    # defaults");
        }
    }
    if (p->has_threads && p->threads) fprintf(out, "threads: %d\n", p->threads);
    else fprintf(out, "threads: auto\n");
    if (p->has_context) fprintf(out, "context: %d\n", p->context);
    else fprintf(out, "context: 4096    # default (capped by the model's training context)\n");
    fprintf(out, "kv_cache: f16\n");
    fprintf(out, "allow_fallback: %s\n", p->allow_fallback ? "true" : "false");
    /* unset sampling keys show the engine's defaults, marked as such */
    ember_sampler_opts so;
    ember_sampler_opts_default(&so);
    profile_apply_sampling(p, &so);
    const char *dflt = "    # default";
    fprintf(out, "sampling:\n");
    fprintf(out, "  temperature: %g%s\n", so.temperature, p->sampling.has_temperature ? "" : dflt);
    fprintf(out, "  top_k: %d%s\n", so.top_k, p->sampling.has_top_k ? "" : dflt);
    fprintf(out, "  top_p: %g%s\n", so.top_p, p->sampling.has_top_p ? "" : dflt);
    fprintf(out, "  min_p: %g%s\n", so.min_p, p->sampling.has_min_p ? "" : dflt);
    fprintf(out, "  repeat_penalty: %g%s\n", so.repeat_penalty,
            p->sampling.has_repeat_penalty ? "" : dflt);
    fprintf(out, "  repeat_last_n: %d%s\n", so.repeat_last_n,
            p->sampling.has_repeat_last_n ? "" : dflt);
    fprintf(out, "  seed: %llu%s\n", (unsigned long long)so.seed, p->sampling.has_seed ? "" : dflt);
    if (p->system) {
        fprintf(out, "system: ");
        print_str(out, p->system);
        fputc('\n', out);
    }
}
