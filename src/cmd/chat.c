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
#include "cli_profile.h"
#include "keys.h"
#include "options.h"
#include "cli.h"
#include "ember.h"
#include "profile.h"
#include "synth.h"

static void usage(FILE *out)
{
    gen_opts d;
    gen_opts_default(&d);
    const char *dflt_text[OPT_COUNT] = {[OPT_CTX] = "the profile's, else 4096",
                                        [OPT_THREADS] = "the profile's, else 0"};
    fprintf(out,
        "Usage: ember -m MODEL [options]\n"
        "       ember chat -m MODEL [options]\n"
        "       ember --demo [options]\n"
        "\n"
        "Opens the full-screen chat on a GGUF model (plain line mode when stdin or\n"
        "stdout is not a terminal, or TERM=dumb).\n"
        "\n"
        "  -m, --model FILE       GGUF model\n"
        "      --profile NAME     YAML profile (name or path; default 'auto' when it is\n"
        "                         found and no --strategy is given); F2 cycles the others\n"
        "      --system TEXT      system prompt\n"
        "      --strategy S       eager | compressed | packed: instead of a profile, or\n"
        "                         with --profile overriding its rule's strategy at start\n");
    gen_opts_usage(out, GEN_OPT_ALL, &d, dflt_text);
    fprintf(out,
        "      --demo             synthesize a small random-weight model once (cached) and\n"
        "                         chat with it: shows the engine, produces no meaningful text\n"
        "  -h, --help             this help\n"
        "\n"
        "Keys:\n");
    ui_keys_print(out, "  ");
    fprintf(out, "/help lists the commands. See ember(1).\n");
}

typedef struct chat_ctx {
    const char *model;
    bool fake;
    ember_model_info info;         /* the model's header, read once */
    const char *strategy;          /* --strategy: applies to the first load only */
    gen_opts cli;                  /* the command line's values (cli.set says which) */
} chat_ctx;

/* ui_config.resolve: the one resolution path (cli_profile.h) for the
   first load and every profile switch.  *gen holds the values in use (so
   /set changes survive a switch unless the profile or command line sets
   the same key) and receives the resolved ones. */
static int resolve(void *ctx, const char *name, ember_worker_load *out, gen_opts *gen, char *err,
                   size_t cap)
{
    chat_ctx *c = ctx;
    cli_resolve_in in;
    memset(&in, 0, sizeof in);
    in.profile = name && *name ? name : NULL;
    in.strategy = c->strategy;
    in.model = c->model;
    in.info = c->fake ? NULL : &c->info;
    in.first_rule = c->fake;        /* the fake engine has no file to match */
    ember_plan_opts_default(&in.plan);
    in.defaults = *gen;
    in.cli = c->cli;
    cli_resolved r;
    ember_err e = {{0}};
    if (cli_resolve(&in, &r, &e)) {
        snprintf(err, cap, "%s", e.msg);
        return -1;
    }
    c->strategy = NULL;
    memset(out, 0, sizeof *out);
    snprintf(out->model_path, sizeof out->model_path, "%s", c->model);
    snprintf(out->profile, sizeof out->profile, "%s", r.label);
    out->plan = r.plan;
    out->n_ctx = r.gen.n_ctx;
    out->threads = r.plan.threads;
    *gen = r.gen;
    return 0;
}

int cmd_chat(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    chat_ctx c;
    memset(&c, 0, sizeof c);
    gen_opts_default(&c.cli);
    c.cli.set = 0;
    const char *profile_name = NULL, *system = NULL;
    bool demo = false;
    struct option lo[8 + OPT_COUNT + 1] = {
        {"model", required_argument, 0, 'm'}, {"profile", required_argument, 0, 'P'},
        {"system", required_argument, 0, 'S'}, {"strategy", required_argument, 0, 's'},
        {"demo", no_argument, 0, 'D'}, {"help", no_argument, 0, 'h'}};
    char shorts[32] = "m:h";
    gen_opts_getopt(lo, 6, GEN_OPT_ALL, shorts, sizeof shorts);
    int o;
    optind = 1;
    while ((o = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        int t = gen_opts_getopt_handle(o, "ember", argc, argv, optarg, &c.cli);
        if (t < 0) return 2;
        if (t > 0) continue;
        switch (o) {
        case 'm': c.model = optarg; break;
        case 'P': profile_name = optarg; break;
        case 'S': system = optarg; break;
        case 's':
            if (ember_strategy_from_name(optarg) < 0) {
                fprintf(stderr, "ember: --strategy '%s': use eager, compressed or packed\n", optarg);
                return 2;
            }
            c.strategy = optarg;
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
    if (demo && c.model) {
        fprintf(stderr, "ember: --demo chats with its own synthesized model: give -m MODEL or --demo, "
                        "not both\n");
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
    const char *fd = getenv("EMBER_FAKE_DELAY_MS");   /* per token: a reply that visibly streams */
    if (c.fake && fd && *fd) ember_worker_fake_config(atoi(fd), 0);
    char demo_file[PATH_MAX];
    if (demo) {
        if (ember_xdg_path(EMBER_XDG_CACHE, "demo-tiny.gguf", true, demo_file, sizeof demo_file) < 0) {
            fprintf(stderr, "ember: --demo: no cache directory (set XDG_CACHE_HOME or HOME)\n");
            return 1;
        }
        /* a cache that does not read as a model (truncated, overwritten) is
           made again rather than failing every --demo from now on */
        ember_model_info info;
        bool usable = access(demo_file, R_OK) == 0 && ember_model_peek(demo_file, &info, NULL) == 0;
        if (!usable && !c.fake) {
            fprintf(stderr, "ember: synthesizing the demo model into %s (%s)...\n", demo_file,
                    access(demo_file, F_OK) == 0 ? "the cached one is damaged" : "once");
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
    if (!c.fake) {
        /* The model's own problems are reported as the model's, before any
           profile is looked at; its header is read here once. */
        ember_err e = {{0}};
        if (access(c.model, R_OK) != 0) {
            fprintf(stderr, "ember: %s: %s\n", c.model, strerror(errno));
            return 1;
        }
        if (ember_model_peek(c.model, &c.info, &e) < 0) {
            size_t pl = strlen(c.model);
            bool named = !strncmp(e.msg, c.model, pl) && e.msg[pl] == ':';
            fprintf(stderr, "ember: %s%s%s\n", named ? "" : c.model, named ? "" : ": ", e.msg);
            return 1;
        }
    }

    ui_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.backend = c.fake ? &ember_worker_fake_backend : &ember_worker_engine_backend;
    cfg.model_path = c.model;
    cfg.demo = demo;
    cfg.system = system;
    cfg.resolve = resolve;
    cfg.ctx = &c;
    cfg.cur_profile = -1;
    gen_opts_default(&cfg.gen);

    /* Profiles to cycle: every one found, user ones hiding shipped ones. */
    profile_entry *pl = NULL;
    int npl = profile_list(&pl);
    char **names = npl > 0 ? calloc((size_t)npl, sizeof *names) : NULL;
    for (int i = 0; names && i < npl; i++)
        if (!pl[i].shadowed) names[cfg.n_profiles++] = strdup(pl[i].name);
    cfg.profiles = names;
    free(pl);

    /* the shipped 'auto' profile is the default when nothing says otherwise */
    if (!profile_name && !c.strategy && !c.fake) {
        char ap[1024];
        profile_err pe;
        if (profile_find("auto", ap, sizeof ap, &pe) == 0) profile_name = "auto";
    }
    int status;
    char err[1200];
    if (resolve(&c, profile_name, &cfg.load, &cfg.gen, err, sizeof err) < 0) {
        fprintf(stderr, "ember: %s\n", err);
        status = 1;
        goto out;
    }
    for (int i = 0; profile_name && i < cfg.n_profiles; i++)
        if (!strcmp(cfg.profiles[i], cfg.load.profile) || !strcmp(cfg.profiles[i], profile_name))
            cfg.cur_profile = i;
    const char *term = getenv("TERM");
    bool dumb = !term || !*term || !strcmp(term, "dumb");
    if (!isatty(0) || !isatty(1) || dumb) status = ui_plain_run(&cfg);
    else status = ui_app_run(&cfg);
out:
    for (int i = 0; i < cfg.n_profiles; i++) free(cfg.profiles[i]);
    free(cfg.profiles);
    return status;
}
