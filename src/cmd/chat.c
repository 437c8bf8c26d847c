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
#include "chatlog.h"
#include "cli_profile.h"
#include "bytes.h"
#include "hf_fetch.h"
#include "keys.h"
#include "model_list.h"
#include "model_arg.h"
#include "options.h"
#include "cli.h"
#include "ember.h"
#include "profile.h"
#include "read_all.h"
#include "synth.h"
#include "terminal.h"

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
        "       ember -c | --resume [ID] [options]\n"
        "\n"
        "Opens the full-screen chat on a GGUF model (plain line mode when stdin or\n"
        "stdout is not a terminal, or TERM=dumb).\n"
        "\n"
        "  -m, --model FILE       GGUF model, or hf:USER/REPO[:QUANT] (ember pull)\n"
        "      --hf USER/REPO[:QUANT]  the same as -m hf:USER/REPO[:QUANT]\n"
        "      --profile NAME     YAML profile (name or path; default 'auto' when it is\n"
        "                         found and no --strategy is given); F2 cycles the others\n"
        "      --system TEXT      system prompt\n"
        "      --strategy S       eager | compressed | packed: instead of a profile, or\n"
        "                         with --profile overriding its rule's strategy at start\n"
        "  -p, --prompt TEXT      one-shot: send TEXT (after stdin's text when stdin is not\n"
        "                         a terminal), print the reply, exit\n"
        "  -f, --file FILE        add a text file to the first message (fenced, with its\n"
        "                         name); may be repeated\n");
    gen_opts_usage(out, GEN_OPT_ALL, &d, dflt_text);
    fprintf(out,
        "      --demo             synthesize a small random-weight model once (cached) and\n"
        "                         chat with it: shows the engine, produces no meaningful text\n"
        "  -c, --continue         reopen the last saved conversation (its model unless -m)\n"
        "      --resume [ID]      reopen a saved conversation (a unique start of its id;\n"
        "                         none: the last); ember chats lists them\n"
        "      --think show|hide  a reply's <think> part shown as it came, or folded to\n"
        "                         'thinking... (N tokens)' (on stderr in plain mode)\n"
        "                         [default hide; /think switches it]\n"
        "      --no-keep-screen   on leaving, do not print the conversation's last screen\n"
        "  -h, --help             this help\n"
        "\n"
        "Keys:\n");
    ui_keys_print(out, "  ");
    fprintf(out, "/help lists the commands. See ember(1).\n");
}

typedef struct chat_ctx {
    const char *model;
    char model_buf[PATH_MAX];      /* the model /model chose (model then points here) */
    bool fake;
    ember_model_info info;         /* the model's header, read once */
    const char *strategy;          /* --strategy: applies to the first load only */
    gen_opts cli;                  /* the command line's values (cli.set says which) */
    char profile_system[4096];     /* the last resolved profile's system: prompt ("" none) */
    hf_fetch *fetch;               /* /model's download under way, or NULL */
} chat_ctx;

/* ui_config.set_model: a path, a name `ember models` lists, or hf:NAME of
   a cached model (one not cached: 1, and the chat fetches it with
   fetch_start).  The header is read here, so a file that is not a model
   is refused before anything unloads. */
static int set_model(void *ctx, const char *name, char *path, size_t pathcap, char *err, size_t errcap)
{
    chat_ctx *c = ctx;
    const char *want = !strncmp(name, "hf:", 3) ? name + 3 : name;
    char found[PATH_MAX];
    struct stat st;
    if (want == name && stat(name, &st) == 0) {
        snprintf(found, sizeof found, "%s", name);
    } else if (want != name) {
        /* hf:USER/REPO[:QUANT] means what -m hf: means (hf_cache_pick):
           refs/main's file, mmproj projectors and split parts aside */
        hf_ref ref;
        ember_err e = {{0}};
        if (hf_ref_parse(want, &ref, &e) < 0) {
            snprintf(err, errcap, "/model %s: %s", name, e.msg);
            return -1;
        }
        int k = hf_cache_pick(&ref, found, sizeof found, &e);
        if (k == HF_CHOOSE_NONE) return 1;
        if (k < 0) {
            snprintf(err, errcap, "/model %s: %s", name, e.msg);
            return -1;
        }
    } else {
        model_rows t = {0};
        char root[PATH_MAX];
        model_list_gather(&t, root, sizeof root);
        int amb = 0;
        const model_row *r = model_list_find(&t, want, &amb);
        if (r) snprintf(found, sizeof found, "%s", r->path);
        model_rows_free(&t);
        if (!r) {
            if (amb) snprintf(err, errcap, "/model %s: %d models match; Tab lists them", name, amb);
            else snprintf(err, errcap, "/model %s: no such file or model (ember models lists them; "
                          "ember pull USER/REPO downloads one)", name);
            return -1;
        }
    }
    ember_model_info info;
    ember_err e = {{0}};
    if (ember_model_peek(found, &info, &e) < 0) {
        snprintf(err, errcap, "/model %s: %s", name, e.msg);
        return -1;
    }
    snprintf(c->model_buf, sizeof c->model_buf, "%s", found);
    c->model = c->model_buf;
    c->info = info;
    snprintf(path, pathcap, "%s", found);
    return 0;
}

/* ui_config.fetch_*: one download at a time, hf_fetch's thread doing it */
static int fetch_start(void *ctx, const char *name, char *err, size_t errcap)
{
    chat_ctx *c = ctx;
    hf_ref ref;
    ember_err e = {{0}};
    hf_fetch_free(c->fetch);
    c->fetch = NULL;
    if (hf_ref_parse(!strncmp(name, "hf:", 3) ? name + 3 : name, &ref, &e) < 0 ||
        !(c->fetch = hf_fetch_start(&ref, &e))) {
        snprintf(err, errcap, "/model %s: %s", name, e.msg);
        return -1;
    }
    return 0;
}

static int fetch_poll(void *ctx, char *status, size_t scap, char *path, size_t pcap, char *err, size_t ecap)
{
    chat_ctx *c = ctx;
    if (!c->fetch) return -1;
    hf_fetch_state st;
    ember_err e = {{0}};
    int r = hf_fetch_poll(c->fetch, &st, path, pcap, &e);
    if (r == HF_FETCH_RUNNING) {
        char have[32], total[32], rate[32];
        bytes_human(have, sizeof have, (double)st.have);
        bytes_human(total, sizeof total, (double)st.total);
        bytes_human(rate, sizeof rate, st.bytes_per_s);
        if (!st.file[0]) snprintf(status, scap, "downloading: asking the Hub... (Esc cancels)");
        else snprintf(status, scap, "downloading %.120s: %d%% %s / %s, %s/s (Esc cancels)", st.file,
                      st.total ? (int)(100.0 * (double)st.have / (double)st.total) : 0, have, total, rate);
        return 0;
    }
    if (r == HF_FETCH_FAILED) snprintf(err, ecap, "%s", e.msg);
    hf_fetch_free(c->fetch);
    c->fetch = NULL;
    return r == HF_FETCH_DONE ? 1 : -1;
}

static void fetch_cancel(void *ctx)
{
    chat_ctx *c = ctx;
    if (c->fetch) hf_fetch_cancel(c->fetch);
}

static int model_names(void *ctx, char ***names)
{
    model_rows t = {0};
    char root[PATH_MAX];
    model_list_gather(&t, root, sizeof root);
    *names = t.n ? calloc((size_t)t.n, sizeof **names) : NULL;
    int n = 0;
    for (int i = 0; *names && i < t.n; i++)
        if (!t.r[i].error[0] && ((*names)[n] = strdup(t.r[i].name))) n++;
    model_rows_free(&t);
    return n;
}

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
    snprintf(c->profile_system, sizeof c->profile_system, "%s", r.system);
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

/* -f files, and with -p the text piped to stdin, become fenced blocks
   before the first message.  -1 after saying why. */
static int attach_inputs(ui_config *cfg, const char *const *files, int n, bool oneshot)
{
    char err[4200];
    if (oneshot && !isatty(0)) {   /* cat notes.txt | ember -m M -p "summarize" */
        size_t len = 0;
        char *buf = read_all_max(stdin, UI_ATTACH_MAX, &len);
        if (!buf) {
            if (errno == EFBIG)
                fprintf(stderr, "ember: stdin: more than %u MiB: too long for a message\n", UI_ATTACH_MAX >> 20);
            else
                fprintf(stderr, "ember: stdin: %s\n", errno ? strerror(errno) : "out of memory");
            return -1;
        }
        if (!ui_attach_is_text(buf, len)) {
            fprintf(stderr, "ember: stdin is not text (binary or not UTF-8)\n");
            free(buf);
            return -1;
        }
        int rc = len ? ui_attach_text(&cfg->attach, "stdin", buf, len) : 0;
        free(buf);
        if (rc < 0) {
            fprintf(stderr, "ember: stdin: out of memory\n");
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        if (ui_attach_file(&cfg->attach, files[i], err, sizeof err) < 0) {
            fprintf(stderr, "ember: -f %s\n", err);
            ui_attach_clear(&cfg->attach);
            return -1;
        }
    return 0;
}

/* -c's notes (chatlog_warn_collect: a damaged file skipped, the
   conversation copied because another Ember has it), for the front end:
   the full-screen chat shows them in its transcript, where stderr would be
   hidden behind it; plain mode prints them. */
static void notes_to_stderr(const char *notes)
{
    for (const char *p = notes; p && *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(stderr, "ember: %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/* -c / --resume: the saved conversation, and what it ran on where the
   command line does not say (its model, its profile when still there;
   a --system given replaces the saved one). */
static int resume_from(const char *opt, const char *id, chatlog *saved, const char **model,
                       const char **profile_name, const char **system, char **owned, char **notes)
{
    ember_err e = {{0}};
    if (chatlog_open(id, saved, chatlog_warn_collect, notes, &e) < 0) {
        notes_to_stderr(*notes);
        fprintf(stderr, "ember: %s: %s\n", opt, e.msg);
        return -1;
    }
    /* copies: the chat takes the saved conversation over and may free
       its strings while these are still in use */
    if (!*model && saved->model) *model = owned[0] = strdup(saved->model);
    if (!*model) {
        fprintf(stderr, "ember: conversation %s names no model: give -m MODEL\n", saved->id);
        return -1;
    }
    char path[1024];
    profile_err pe;
    if (!*profile_name && saved->profile && profile_find(saved->profile, path, sizeof path, &pe) == 0)
        *profile_name = owned[1] = strdup(saved->profile);
    if (*system) chatlog_set(&saved->system, *system);
    else if (saved->system) *system = owned[2] = strdup(saved->system);
    return 0;
}

int cmd_chat(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    /* the user's locale for characters, dates and messages, but numbers stay
       C: under a decimal-comma locale (de_DE) strtod refused --temp 0.7 and
       a profile's temperature: 0.7, which ember run, the man page and the
       profiles spell with a point */
    setlocale(LC_NUMERIC, "C");
    chat_ctx c;
    memset(&c, 0, sizeof c);
    gen_opts_default(&c.cli);
    c.cli.set = 0;
    const char *profile_name = NULL, *system = NULL;
    bool demo = false, resume = false, keep_screen = true, show_think = false;
    const char *resume_id = NULL;
    const char *resume_opt = "-c";   /* as typed, for the messages: --resume without an ID is not -c */
    const char *oneshot = NULL;
    enum { MAX_FILES = 64 };
    const char *files[MAX_FILES];
    int n_files = 0;
    struct option lo[15 + OPT_COUNT + 1] = {
        {"model", required_argument, 0, 'm'}, {"profile", required_argument, 0, 'P'},
        {"system", required_argument, 0, 'S'}, {"strategy", required_argument, 0, 's'},
        {"demo", no_argument, 0, 'D'}, {"help", no_argument, 0, 'h'},
        {"continue", no_argument, 0, 'c'}, {"resume", optional_argument, 0, 'R'},
        {"no-keep-screen", no_argument, 0, 'K'}, {"think", required_argument, 0, 'T'},
        {"prompt", required_argument, 0, 'p'}, {"file", required_argument, 0, 'f'},
        {"hf", required_argument, 0, 'H'}};
    char shorts[40] = ":m:hcp:f:";
    gen_opts_getopt(lo, 13, GEN_OPT_ALL, shorts, sizeof shorts);
    int o;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        int t = gen_opts_getopt_handle(o, "ember", argc, argv, optarg, &c.cli);
        if (t < 0) return 2;
        if (t > 0) continue;
        switch (o) {
        case 'm': c.model = optarg; break;
        case 'H': c.model = model_arg_hf(optarg); break;
        case 'P': profile_name = optarg; break;
        case 'S': system = optarg; break;
        case 's':
            if (cli_strategy_arg("ember", optarg) < 0) return 2;
            c.strategy = optarg;
            break;
        case 'D': demo = true; break;
        case 'p': oneshot = optarg; break;
        case 'f':
            if (n_files == MAX_FILES) {
                fprintf(stderr, "ember: at most %d -f files\n", MAX_FILES);
                return 2;
            }
            files[n_files++] = optarg;
            break;
        case 'c':
            resume = true;
            resume_opt = !strcmp(argv[optind - 1], "--continue") ? "--continue" : "-c";
            break;
        case 'R':
            resume = true;
            resume_opt = "--resume";
            /* "--resume ID" as well as "--resume=ID" */
            if (!optarg && optind < argc && argv[optind][0] != '-') optarg = argv[optind++];
            resume_id = optarg;
            break;
        case 'K': keep_screen = false; break;
        case 'T':
            if (strcmp(optarg, "show") && strcmp(optarg, "hide")) {
                fprintf(stderr, "ember: --think takes show or hide, not '%s'\n", optarg);
                return 2;
            }
            show_think = !strcmp(optarg, "show");
            break;
        case 'h': usage(stdout); return 0;
        default: return cli_getopt_error("ember", argv, lo, o);
        }
    }
    if (optind < argc) {
        return cli_usage_error("ember", "unexpected argument '%s'", argv[optind]);
    }
    if (profile_name && !*profile_name) {
        /* "" is the screen's "no profile" (F2); on the command line it is a
           mistake that ran without one, while run and bench refuse it */
        char path[8];
        profile_err pe;
        profile_find(profile_name, path, sizeof path, &pe);
        fprintf(stderr, "ember: %s\n", pe.msg);
        return 1;
    }
    if (demo && c.model) {
        fprintf(stderr, "ember: --demo chats with its own synthesized model: give -m MODEL or --demo, "
                        "not both\n");
        return 2;
    }
    chatlog saved;
    memset(&saved, 0, sizeof saved);
    char *owned[3] = {NULL, NULL, NULL};
    char *resume_notes = NULL;
    int status = 0;
    if (resume) {
        if (demo) {
            fprintf(stderr, "ember: --demo starts afresh: not with -c / --resume\n");
            return 2;
        }
        if (resume_from(resume_opt, resume_id, &saved, &c.model, &profile_name, &system, owned, &resume_notes) < 0) {
            status = 1;
            goto done;
        }
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
        if (ember_place_path(EMBER_PLACE_DEMO, false, demo_file, sizeof demo_file) < 0) {
            fprintf(stderr, "ember: --demo: no cache directory (set XDG_CACHE_HOME or HOME)\n");
            return 1;
        }
        /* a cache base that is set but cannot hold the directory (a file)
           is said as such, not as if nothing were set */
        errno = 0;
        if (ember_place_path(EMBER_PLACE_DEMO, true, demo_file, sizeof demo_file) < 0) {
            fprintf(stderr, "ember: --demo: cannot create the directory of %s: %s\n", demo_file,
                    strerror(errno ? errno : ENOTDIR));
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
        status = 2;
        goto done;
    }
    char hf_path[PATH_MAX];
    if (model_arg_resolve("ember", &c.model, hf_path, sizeof hf_path)) return 1;
    if (!c.fake) {
        /* The model's own problems are reported as the model's, before any
           profile is looked at; its header is read here once. */
        ember_err e = {{0}};
        if (access(c.model, R_OK) != 0) {
            fprintf(stderr, "ember: %s: %s\n", c.model, strerror(errno));
            /* the model named by the saved conversation, not by the user:
               say how to go on with it */
            if (resume && owned[0] && c.model == owned[0])
                fprintf(stderr, "ember: conversation %s was saved with that model: -c -m MODEL goes on with another\n",
                        saved.id);
            status = 1;
            goto done;
        }
        if (ember_model_peek(c.model, &c.info, &e) < 0) {
            size_t pl = strlen(c.model);
            bool named = !strncmp(e.msg, c.model, pl) && e.msg[pl] == ':';
            fprintf(stderr, "ember: %s%s%s\n", named ? "" : c.model, named ? "" : ": ", e.msg);
            status = 1;
            goto done;
        }
    }

    ui_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.backend = c.fake ? &ember_worker_fake_backend : &ember_worker_engine_backend;
    cfg.model_path = c.model;
    cfg.demo = demo;
    cfg.system = system;
    cfg.resolve = resolve;
    if (!c.fake) {
        cfg.set_model = set_model;
        cfg.model_names = model_names;
        cfg.fetch_start = fetch_start;
        cfg.fetch_poll = fetch_poll;
        cfg.fetch_cancel = fetch_cancel;
    }
    cfg.ctx = &c;
    cfg.cur_profile = -1;
    cfg.resume = resume ? &saved : NULL;
    cfg.keep_screen = keep_screen;
    cfg.show_think = show_think;
    gen_opts_default(&cfg.gen);
    cfg.oneshot = oneshot;
    if (attach_inputs(&cfg, files, n_files, oneshot != NULL) < 0) {
        status = 1;
        goto done;
    }

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
    char err[1200];
    if (resolve(&c, profile_name, &cfg.load, &cfg.gen, err, sizeof err) < 0) {
        fprintf(stderr, "ember: %s\n", err);
        status = 1;
        goto out;
    }
    /* the first profile's system: prompt, unless --system (or the resumed
       conversation) gave one; a profile switch later keeps the chat's */
    char first_system[sizeof c.profile_system];   /* later resolves (F2, /model) rewrite c's */
    snprintf(first_system, sizeof first_system, "%s", c.profile_system);
    if (!cfg.system && first_system[0]) cfg.system = first_system;
    for (int i = 0; profile_name && i < cfg.n_profiles; i++)
        if (!strcmp(cfg.profiles[i], cfg.load.profile) || !strcmp(cfg.profiles[i], profile_name))
            cfg.cur_profile = i;
    const char *term = getenv("TERM");
    bool dumb = !term || !*term || !strcmp(term, "dumb");
    /* a TERM this machine has no terminfo entry for (a new terminal's own
       name over ssh) would end the chat at once in curses' initscr */
    if (!dumb && !oneshot && isatty(0) && isatty(1) && !ui_term_known()) {
        fprintf(stderr, "ember: TERM=%s is not in this machine's terminal database: plain line mode "
                        "(TERM=xterm-256color gives the full-screen chat)\n", term);
        dumb = true;
    }
    if (oneshot || !isatty(0) || !isatty(1) || dumb) {
        notes_to_stderr(resume_notes);
        status = ui_plain_run(&cfg);
    } else {
        cfg.resume_notes = resume_notes;
        status = ui_app_run(&cfg);
    }
out:
    hf_fetch_free(c.fetch);   /* left during a download: stopped, its partial kept */
    ui_attach_clear(&cfg.attach);
    for (int i = 0; i < cfg.n_profiles; i++) free(cfg.profiles[i]);
    free(cfg.profiles);
done:
    chatlog_free(&saved);
    for (int i = 0; i < 3; i++) free(owned[i]);
    free(resume_notes);
    return status;
}
