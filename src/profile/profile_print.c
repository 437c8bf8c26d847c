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
        if (r->cpu) { fprintf(out, "%scpu: ", n++ ? ", " : ""); print_str(out, r->cpu); }
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
    bool has_threads = p->vals.set & GEN_OPT_BIT(OPT_THREADS);
    if (has_threads && p->vals.threads) fprintf(out, "threads: %d\n", p->vals.threads);
    else fprintf(out, "threads: auto\n");
    if (p->vals.set & GEN_OPT_BIT(OPT_CTX)) fprintf(out, "context: %d\n", p->vals.n_ctx);
    else fprintf(out, "context: 4096    # default (capped by the model's training context)\n");
    if (p->vals.set & GEN_OPT_BIT(OPT_KV_CACHE)) fprintf(out, "kv_cache: %s\n", ember_kv_type_name(p->vals.kv_cache));
    else fprintf(out, "kv_cache: f16    # default\n");
    if (p->vals.set & GEN_OPT_BIT(OPT_PACK_CACHE)) fprintf(out, "pack_cache: %s\n", p->vals.pack_cache ? "on" : "off");
    else fprintf(out, "pack_cache: on    # default\n");
    if (p->vals.set & GEN_OPT_BIT(OPT_REASONING)) fprintf(out, "reasoning: %s\n", gen_opt_table[OPT_REASONING].names(p->vals.reasoning));
    fprintf(out, "allow_fallback: %s\n", p->allow_fallback ? "true" : "false");
    /* unset sampling keys show the defaults of the option table, marked as such */
    gen_opts g;
    gen_opts_default(&g);
    gen_opts_overlay(&g, &p->vals);
    fprintf(out, "sampling:\n");
    for (int i = 0; i < OPT_COUNT; i++) {
        const gen_opt *o = &gen_opt_table[i];
        if (o->section != GEN_PROFILE_SAMPLING) continue;
        char v[48];
        gen_opt_format(i, &g, v, sizeof v);
        fprintf(out, "  %s: %s%s\n", o->profile_key, v, p->vals.set & GEN_OPT_BIT(i) ? "" : "    # default");
    }
    if (p->system) {
        fprintf(out, "system: ");
        print_str(out, p->system);
        fputc('\n', out);
    }
}
