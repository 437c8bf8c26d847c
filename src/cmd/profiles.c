/* `ember profiles`: list the profiles found, show one resolved, and with
   -m which of its rules a model gets. */
#include "config.h"

#include <getopt.h>

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <limits.h>

#include "cli.h"
#include "profile.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember profiles [list]                 list the profiles found\n"
        "       ember profiles show NAME|FILE [-m MODEL]\n"
        "                                             print a profile as resolved; with -m,\n"
        "                                             the rule MODEL matches and what it asks\n"
        "\n"
        "Profiles are looked up in $XDG_CONFIG_HOME/ember/profiles (default ~/.config),\n"
        "then in the shipped directory ($EMBER_PROFILE_DIR, else the installed one).\n"
        "A NAME containing '/' or ending in .yaml is a file.  See ember-profile(5).\n");
}

static int cmd_list(void)
{
    profile_entry *v;
    int n = profile_list(&v);
    char dir[PATH_MAX];
    if (n == 0) {
        printf("no profiles found\n");
        if (profile_user_dir(dir, sizeof dir) == 0) printf("  user directory: %s\n", dir);
        if (profile_shipped_dir(dir, sizeof dir) == 0) printf("  shipped directory: %s\n", dir);
        else printf("  no shipped directory: set EMBER_PROFILE_DIR to the source tree's profiles/\n");
        free(v);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        profile_err err;
        profile *p = profile_load_file(v[i].path, &err);
        const char *mark = v[i].shadowing ? " (user, overrides shipped)"
                         : v[i].shadowed ? " (shipped, hidden by a user profile)"
                         : v[i].user ? " (user)" : "";
        printf("%-14s %s%s\n", v[i].name, v[i].path, mark);
        if (p) {
            printf("%-14s   %s\n", "", p->description[0] ? p->description : "(no description)");
        } else {
            printf("%-14s   INVALID: %s\n", "", err.msg);
            bad++;
        }
        profile_free(p);
    }
    free(v);
    return bad ? 1 : 0;
}

static void print_target(const profile_target *t)
{
    printf("model: %s\n", t->file);
    printf("  arch: %s\n  name: %s\n  dtype: %s%s%s%s\n  params: %llu\n", t->arch,
           t->name[0] ? t->name : "(none)", t->dtype, t->file_type[0] ? " (file type " : "",
           t->file_type, t->file_type[0] ? ")" : "", (unsigned long long)t->n_params);
}

/* Opens the model the way the profile asks and summarises the engine's
   per-tensor plan: how much of the request it could honour, and why not. */
static int print_plan(const char *model, const ember_plan_opts *o)
{
    ember_err e;
    ember_model *m = ember_model_open(model, o, &e);
    if (!m) {
        fprintf(stderr, "ember profiles: %s\n", e.msg);
        return 1;
    }
    const ember_plan *pl = ember_model_plan(m);
    printf("plan (%d tensors):\n", pl->n);
    for (int r = 0; r < 3; r++) {
        int cnt = 0;
        for (int i = 0; i < pl->n; i++) cnt += pl->e[i].rep == (ember_rep)r;
        if (cnt)
            printf("  %-13s %4d tensors %10.2f MiB\n", ember_rep_name((ember_rep)r), cnt,
                   (double)pl->bytes_by_rep[r] / (1024.0 * 1024.0));
    }
    if (o->strategy == EMBER_STRATEGY_PACKED)
        printf("  packed %d of %d packable projections\n", pl->packed, pl->packable);
    /* distinct reasons, with how many tensors each */
    for (int i = 0; i < pl->n; i++) {
        const char *why = pl->e[i].reason;
        if (!why[0]) continue;
        int seen = 0, cnt = 0;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(pl->e[j].reason, why);
        if (seen) continue;
        for (int j = i; j < pl->n; j++) cnt += !strcmp(pl->e[j].reason, why);
        printf("  %4d x %s (e.g. %s)\n", cnt, why, pl->e[i].name);
    }
    ember_model_free(m);
    return 0;
}

static int cmd_show(const char *what, const char *model)
{
    char path[PATH_MAX];
    profile_err err;
    if (profile_find(what, path, sizeof path, &err)) {
        fprintf(stderr, "ember profiles: %s\n", err.msg);
        return 1;
    }
    profile *p = profile_load_file(path, &err);
    if (!p) {
        fprintf(stderr, "ember profiles: %s\n", err.msg);
        return 1;
    }
    /* the model is read before anything is printed: an unreadable -m
       printed the whole profile, then failed */
    profile_target t;
    if (model && profile_target_from_file(&t, model, &err)) {
        fprintf(stderr, "ember profiles: %s\n", err.msg);
        profile_free(p);
        return 1;
    }
    profile_print(p, stdout);
    int rc = 0;
    if (model) {
        printf("\n");
        print_target(&t);
        ember_plan_opts o;
        int ri;
        if (profile_match(p, &t, &o, &ri, &err)) {
            printf("no rule matches:\n");
            fprintf(stderr, "ember profiles: %s\n", err.msg);
            rc = 1;
        } else {
            const profile_rule *r = &p->rules[ri];
            printf("matched: rule %d (line %d)\n", ri + 1, r->line);
            for (int i = 0; i < ri; i++) {
                const char *why;
                profile_rule_matches(&p->rules[i], &t, &why);
                printf("  rule %d (line %d) skipped: %s does not match\n", i + 1,
                       p->rules[i].line, why);
            }
            printf("plan request:\n  strategy: %s\n", profile_strategy_name(o.strategy));
            if (o.strategy == EMBER_STRATEGY_PACKED) {
                char pl[64];
                profile_proj_list(o.projections, pl, sizeof pl);
                printf("  projections: %s\n  when: %s\n  evict_source: %s\n"
                       "  reevict_after_prefill: %s\n  prefill: %s\n",
                       pl, profile_when_name(o.pack_when), o.evict_source ? "true" : "false",
                       o.reevict_after_prefill ? "true" : "false",
                       o.packed_prefill ? "packed" : "generic");
            }
            printf("  allow_fallback: %s\n", o.allow_fallback ? "true" : "false");
            if (o.threads) printf("  threads: %d\n", o.threads);
            else printf("  threads: auto\n");
            rc = print_plan(model, &o);
        }
    }
    profile_free(p);
    return rc;
}

int cmd_profiles(int argc, char **argv)
{
    const char *model = NULL, *sub = NULL, *name = NULL;
    static const struct option lo[] = {
        {"model", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:h", lo, NULL)) != -1) {
        switch (c) {
        case 'm': model = optarg; break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember profiles", argv, lo, c);
        }
    }
    if (optind < argc) sub = argv[optind++];
    if (optind < argc) name = argv[optind++];
    if (optind < argc) return cli_usage_error("ember profiles", "unexpected argument '%s'", argv[optind]);
    if (!sub || !strcmp(sub, "list")) {
        if (name || model) {
            fprintf(stderr, "ember profiles: 'list' takes no arguments (try show NAME -m MODEL)\n");
            return 2;
        }
        return cmd_list();
    }
    if (!strcmp(sub, "show")) {
        if (!name) {
            fprintf(stderr, "ember profiles: show needs a profile name or file\n");
            return 2;
        }
        return cmd_show(name, model);
    }
    fprintf(stderr, "ember profiles: unknown subcommand '%s' (list or show)\n", sub);
    return 2;
}
