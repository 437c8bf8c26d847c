/* ember chat / ember -m MODEL / ember --demo: options, profiles, the demo
   model, and the choice between the full-screen UI and plain line mode. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "cli.h"
#include "ember.h"
#include "profile.h"
#include "sampler.h"
#include "synth.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember -m MODEL [options]\n"
        "       ember chat -m MODEL [options]\n"
        "       ember --demo [options]\n"
        "\n"
        "Opens the full-screen chat on a GGUF model (plain line mode when stdin or\n"
        "stdout is not a terminal, or TERM=dumb).\n"
        "\n"
        "  -m, --model FILE     GGUF model\n"
        "      --profile NAME   YAML profile (name or path; default 'auto' when it is\n"
        "                       found and no --strategy is given); F2 cycles the others\n"
        "      --system TEXT    system prompt\n"
        "  -t, --threads N      threads (default: the profile's, else one per core)\n"
        "      --ctx N          context size in tokens (default: the profile's, else 4096)\n"
        "      --strategy S     eager | compressed | packed, when no profile is given\n"
        "      --temp T         temperature, 0 = greedy (default 0.7)\n"
        "      --top-k K        (default 40; 0 = off)\n"
        "      --top-p P        (default 0.9)\n"
        "      --min-p P        (default 0.05)\n"
        "      --seed S         sampling seed (default 0)\n"
        "  -n, --n-predict N    at most N tokens per reply (default 1024; -1: until the\n"
        "                       model stops or the context is full)\n"
        "      --demo           synthesize a small random-weight model once (cached) and\n"
        "                       chat with it: shows the engine, produces no meaningful text\n"
        "  -h, --help           this help\n"
        "\n"
        "Keys: Enter send, Alt-Enter or trailing \\ new line, Esc/Ctrl-C stop the reply,\n"
        "Ctrl-D or /quit exit, F2/Ctrl-P next profile, F3 memory panel, PgUp/PgDn scroll,\n"
        "Ctrl-R history search, Tab completes /commands. /help lists the commands.\n"
        "See ember(1).\n");
}

typedef struct chat_ctx {
    const char *model;
    bool fake;
    int cli_threads, cli_ctx;
    int cli_strategy;              /* -1 unset */
    /* sampling values given on the command line override profiles */
    ember_sampler_opts cli_samp;
    bool has_temp, has_top_k, has_top_p, has_min_p, has_seed;
} chat_ctx;

static void cli_sampling(const chat_ctx *c, ember_sampler_opts *s)
{
    if (c->has_temp) s->temperature = c->cli_samp.temperature;
    if (c->has_top_k) s->top_k = c->cli_samp.top_k;
    if (c->has_top_p) s->top_p = c->cli_samp.top_p;
    if (c->has_min_p) s->min_p = c->cli_samp.min_p;
    if (c->has_seed) s->seed = c->cli_samp.seed;
}

static void base_load(const chat_ctx *c, ember_worker_load *l)
{
    memset(l, 0, sizeof *l);
    snprintf(l->model_path, sizeof l->model_path, "%s", c->model);
    ember_plan_opts_default(&l->plan);
    if (c->cli_strategy >= 0) l->plan.strategy = (ember_strategy)c->cli_strategy;
    if (l->plan.strategy == EMBER_STRATEGY_PACKED && !l->plan.projections) {
        l->plan.projections = EMBER_PROJ_ALL;
        l->plan.pack_when = EMBER_PACK_AT_LOAD;
        l->plan.evict_source = true;
        l->plan.reevict_after_prefill = true;
    }
    l->n_ctx = c->cli_ctx > 0 ? c->cli_ctx : 4096;
    l->threads = c->cli_threads;
    l->plan.threads = c->cli_threads;
}

static int resolve(void *ctx, const char *name, ember_worker_load *out, ember_sampler_opts *samp,
                   char *err, size_t cap)
{
    chat_ctx *c = ctx;
    base_load(c, out);
    snprintf(out->profile, sizeof out->profile, "%s", name);
    char path[1024];
    profile_err pe;
    memset(&pe, 0, sizeof pe);
    if (profile_find(name, path, sizeof path, &pe) < 0) {
        snprintf(err, cap, "%s", pe.msg);
        return -1;
    }
    profile *p = profile_load_file(path, &pe);
    if (!p) {
        snprintf(err, cap, "%s", pe.msg);
        return -1;
    }
    snprintf(out->profile, sizeof out->profile, "%s", p->name ? p->name : name);
    int rc = 0;
    if (c->fake) {
        /* The fake engine has no file to match: take the first rule. */
        if (p->n_rules) out->plan.strategy = p->rules[0].strategy;
    } else {
        ember_model_info info;
        ember_err ee = {{0}};
        int ri;
        if (ember_model_peek(c->model, &info, &ee) < 0) {
            snprintf(err, cap, "%s", ee.msg);
            rc = -1;
        } else if (profile_match_info(p, &info, c->model, &out->plan, &ri, &pe) < 0) {
            snprintf(err, cap, "%s", pe.msg);
            rc = -1;
        }
    }
    if (rc == 0) {
        if (c->cli_ctx <= 0 && p->has_context) out->n_ctx = p->context;
        if (c->cli_threads <= 0 && p->has_threads) out->threads = out->plan.threads = p->threads;
        if (c->cli_threads > 0) out->threads = out->plan.threads = c->cli_threads;
        if (samp) {
            profile_apply_sampling(p, samp);
            cli_sampling(c, samp);
        }
    }
    profile_free(p);
    return rc;
}

static int demo_path(char *buf, size_t cap)
{
    const char *xc = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[PATH_MAX];
    if (xc && *xc) snprintf(dir, sizeof dir, "%s/ember", xc);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache/ember", home);
    else return -1;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        mkdir(dir, 0755);
        *p = '/';
    }
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) return -1;
    int n = snprintf(buf, cap, "%s/demo-tiny.gguf", dir);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static bool parse_num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "ember: %s '%s': expected a number in %g..%g\n", opt, s, lo, hi);
        return false;
    }
    *out = v;
    return true;
}

int cmd_chat(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    chat_ctx c;
    memset(&c, 0, sizeof c);
    c.cli_strategy = -1;
    const char *profile_name = NULL, *system = NULL;
    bool demo = false;
    /* a bound by default: a model that never emits EOS (the demo's random
       weights) must not fill the context with one reply */
    int n_predict = 1024;
    static const struct option lo[] = {
        {"model", required_argument, 0, 'm'}, {"profile", required_argument, 0, 'P'},
        {"system", required_argument, 0, 'S'}, {"threads", required_argument, 0, 't'},
        {"ctx", required_argument, 0, 'x'}, {"strategy", required_argument, 0, 's'},
        {"temp", required_argument, 0, 'T'}, {"top-k", required_argument, 0, 'K'},
        {"top-p", required_argument, 0, 'p'}, {"min-p", required_argument, 0, 'M'},
        {"seed", required_argument, 0, 'e'}, {"n-predict", required_argument, 0, 'n'},
        {"demo", no_argument, 0, 'D'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int o;
    double v;
    optind = 1;
    while ((o = getopt_long(argc, argv, "m:t:n:h", lo, NULL)) != -1) {
        switch (o) {
        case 'm': c.model = optarg; break;
        case 'P': profile_name = optarg; break;
        case 'S': system = optarg; break;
        case 't':
            if (!parse_num("--threads", optarg, 1, 1024, &v)) return 2;
            c.cli_threads = (int)v;
            break;
        case 'x':
            if (!parse_num("--ctx", optarg, 16, 1 << 20, &v)) return 2;
            c.cli_ctx = (int)v;
            break;
        case 's':
            c.cli_strategy = ember_strategy_from_name(optarg);
            if (c.cli_strategy < 0) {
                fprintf(stderr, "ember: --strategy '%s': use eager, compressed or packed\n", optarg);
                return 2;
            }
            break;
        case 'T':
            if (!parse_num("--temp", optarg, 0, 100, &v)) return 2;
            c.cli_samp.temperature = (float)v, c.has_temp = true;
            break;
        case 'K':
            if (!parse_num("--top-k", optarg, 0, 1000000, &v)) return 2;
            c.cli_samp.top_k = (int)v, c.has_top_k = true;
            break;
        case 'p':
            if (!parse_num("--top-p", optarg, 0, 1, &v)) return 2;
            c.cli_samp.top_p = (float)v, c.has_top_p = true;
            break;
        case 'M':
            if (!parse_num("--min-p", optarg, 0, 1, &v)) return 2;
            c.cli_samp.min_p = (float)v, c.has_min_p = true;
            break;
        case 'e': {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(optarg, &end, 10);
            if (!*optarg || *end || errno || optarg[0] == '-') {
                fprintf(stderr, "ember: --seed '%s': expected a whole number >= 0\n", optarg);
                return 2;
            }
            c.cli_samp.seed = s, c.has_seed = true;
            break;
        }
        case 'n':
            if (!parse_num("--n-predict", optarg, -1, 1000000, &v)) return 2;
            n_predict = (int)v;
            break;
        case 'D': demo = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ember: unexpected argument '%s' (try ember chat --help)\n", argv[optind]);
        return 2;
    }
    const char *fk = getenv("EMBER_FAKE_ENGINE");
    c.fake = fk && *fk && strcmp(fk, "0");
    const char *fr = getenv("EMBER_FAKE_REPLY");   /* a file: the fake engine's every reply */
    if (c.fake && fr && *fr) {
        FILE *f = fopen(fr, "r");
        char text[4096];
        size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[n] = 0;
        ember_worker_fake_script(f ? text : NULL);
    }
    char demo_file[PATH_MAX];
    if (demo && !c.model) {
        if (demo_path(demo_file, sizeof demo_file) < 0) {
            fprintf(stderr, "ember: --demo: no cache directory (set XDG_CACHE_HOME or HOME)\n");
            return 1;
        }
        if (access(demo_file, R_OK) != 0 && !c.fake) {
            fprintf(stderr, "ember: synthesizing the demo model into %s (once)...\n", demo_file);
            synth_opts so = {.out = demo_file, .like = "tiny", .dtype = "Q8_0", .seed = 1};
            ember_err e = {{0}};
            if (synth_write(&so, &e) < 0) {
                fprintf(stderr, "ember: --demo: %s\n", e.msg);
                return 1;
            }
        }
        c.model = demo_file;
    }
    if (!c.model) {
        fprintf(stderr, "ember: no model: give -m MODEL.gguf, or try ember --demo\n");
        return 2;
    }
    if (!c.fake && access(c.model, R_OK) != 0) {
        fprintf(stderr, "ember: %s: %s\n", c.model, strerror(errno));
        return 1;
    }

    ui_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.backend = c.fake ? &ember_worker_fake_backend : &ember_worker_engine_backend;
    cfg.model_path = c.model;
    cfg.demo = demo;
    cfg.system = system;
    cfg.n_predict = n_predict;
    cfg.resolve = resolve;
    cfg.ctx = &c;
    cfg.cur_profile = -1;
    ember_sampler_opts_default(&cfg.samp);
    cli_sampling(&c, &cfg.samp);

    /* Profiles to cycle: every one found, user ones hiding shipped ones. */
    profile_entry *pl = NULL;
    int npl = profile_list(&pl);
    char **names = npl > 0 ? calloc((size_t)npl, sizeof *names) : NULL;
    for (int i = 0; names && i < npl; i++)
        if (!pl[i].shadowed) names[cfg.n_profiles++] = strdup(pl[i].name);
    cfg.profiles = names;
    free(pl);

    /* the shipped 'auto' profile is the default when nothing says otherwise */
    if (!profile_name && c.cli_strategy < 0 && !c.fake) {
        char ap[1024];
        profile_err pe;
        if (profile_find("auto", ap, sizeof ap, &pe) == 0) profile_name = "auto";
    }
    int status;
    if (profile_name) {
        char err[1024];
        if (resolve(&c, profile_name, &cfg.load, &cfg.samp, err, sizeof err) < 0) {
            fprintf(stderr, "ember: profile %s: %s\n", profile_name, err);
            status = 1;
            goto out;
        }
        for (int i = 0; i < cfg.n_profiles; i++)
            if (!strcmp(cfg.profiles[i], cfg.load.profile) || !strcmp(cfg.profiles[i], profile_name))
                cfg.cur_profile = i;
    } else {
        base_load(&c, &cfg.load);
    }
    const char *term = getenv("TERM");
    bool dumb = !term || !*term || !strcmp(term, "dumb");
    if (!isatty(0) || !isatty(1) || dumb) status = ui_plain_run(&cfg);
    else status = ui_app_run(&cfg);
out:
    for (int i = 0; i < cfg.n_profiles; i++) free(cfg.profiles[i]);
    free(cfg.profiles);
    return status;
}
