/* Plain line mode for pipes and dumb terminals: each input line is a
   user message, the reply streams to stdout, the numbers go to stderr. */
#include "config.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "lineread.h"
#include "chatlog.h"
#include "info.h"
#include "slash.h"
#include "statusbar.h"
#include "think.h"
#include "wrap.h"

typedef struct {
    ember_chat_msg *m;
    size_t n, cap;
} conv;

static int conv_add(conv *c, const char *role, const char *text)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        ember_chat_msg *m = realloc(c->m, cap * sizeof *m);
        if (!m) return -1;
        c->m = m;
        c->cap = cap;
    }
    char *r = strdup(role), *t = strdup(text);
    if (!r || !t) {
        free(r);
        free(t);
        return -1;
    }
    c->m[c->n++] = (ember_chat_msg){r, t};
    return 0;
}

static void conv_clear(conv *c, bool keep_system)
{
    size_t k = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (keep_system && i == 0 && !strcmp(c->m[i].role, "system")) {
            k = 1;
            continue;
        }
        free((char *)c->m[i].role);
        free((char *)c->m[i].content);
    }
    c->n = k;
}

/* Whether the reply streamed to stdout has an unfinished line: a note for
   stderr then ends it first, so the note is not glued to the reply when
   both go to one terminal or file ("...lo wordember: context full"). */
static bool reply_open;

/* What /info reports, as the worker said it. */
static struct {
    char model[256], plan[512], tmpl[768], arch[32];
    int n_ctx, n_past;
} shown = {.n_past = -1};

static void note(const char *text)
{
    if (reply_open) {
        fputc('\n', stdout);
        fflush(stdout);
        reply_open = false;
    }
    fprintf(stderr, "ember: %s\n", text);
}

/* Whether replies' thinking is printed as it came (--think show, /think). */
static bool show_think;
static bool ascii;   /* the terminal's charset as the locale had it (ui_lineread_open may change it) */

/* The fold's line goes where the numbers go, stderr: a reply piped on
   (ember -p ... | less) is the answer alone, on a terminal the line stands
   where the thinking was. */
static void fold_line(int tokens)
{
    char label[64];
    ui_think_label(tokens, ascii, label, sizeof label);
    fflush(stdout);
    fprintf(stderr, "%s\n", label);
}

/* A signal that came while a reply ran (turn); 0 when none. */
static volatile sig_atomic_t turn_signal;
static void on_turn_signal(int sig) { turn_signal = sig; }

/* Waits for events until one of kind `until` for seq; streams tokens
   (with fold, the reply's thinking folded: it needs reply).  Returns
   false when the worker reported an error for seq. */
static bool pump(ember_worker *w, uint64_t seq, ember_event_kind until, char **reply,
                 ember_stats *st, int *n_tok, ui_think_stream *fold)
{
    bool ok = true, stopping = false;
    size_t len = 0;
    for (;;) {
        if (turn_signal && until == EMBER_EV_DONE && !stopping) {
            ember_worker_cancel(w);   /* the reply ends here; turn saves it */
            stopping = true;
        }
        struct pollfd p = {.fd = ember_worker_fd(w), .events = POLLIN};
        poll(&p, 1, 1000);
        ember_event ev;
        while (ember_worker_poll(w, &ev)) {
            bool mine = ev.seq == seq;
            ember_event_kind k = ev.kind;
            switch (k) {
            case EMBER_EV_TOKEN: {
                size_t n = strlen(ev.text);
                char *r = reply ? realloc(*reply, len + n + 1) : NULL;
                if (r) {
                    memcpy(r + len, ev.text, n + 1);
                    len += n;
                    *reply = r;
                }
                if (fold && r) {
                    size_t from;
                    /* the prompt's own opening (ev.i) is no token of the model's */
                    if (ui_think_feed(fold, r, len, !ev.i, &from)) fold_line(fold->tokens);
                    fwrite(r + from, 1, len - from, stdout);
                } else {
                    fputs(ev.text, stdout);
                }
                ember_stdout_flush();   /* a failure is reported at exit (main) */
                reply_open = true;
                break;
            }
            case EMBER_EV_ERROR:
                note(ev.text);
                if (mine) ok = false;
                break;
            case EMBER_EV_NOTICE: note(ev.text); break;
            case EMBER_EV_LOADED:
                snprintf(shown.model, sizeof shown.model, "%s", ev.text ? ev.text : "");
                snprintf(shown.plan, sizeof shown.plan, "%s", ev.text2 ? ev.text2 : "");
                break;
            case EMBER_EV_TEMPLATE:
                snprintf(shown.tmpl, sizeof shown.tmpl, "%s", ev.text ? ev.text : "");
                snprintf(shown.arch, sizeof shown.arch, "%s", ev.text2 ? ev.text2 : "");
                shown.n_ctx = ev.i;
                break;
            case EMBER_EV_DONE:
                if (ev.stats.n_ctx) shown.n_past = ev.stats.n_past;
                if (st) *st = ev.stats;
                if (n_tok) *n_tok = ev.i;
                break;
            default: break;
            }
            ember_event_clear(&ev);
            if (mine && (k == until || (k == EMBER_EV_ERROR && until == EMBER_EV_LOADED))) return ok;
        }
    }
}

static void print_stats(const ember_stats *s, int n)
{
    char r[32], p[32], f[32];
    static const char *const sn[] = {"eager", "compressed", "packed"};
    ui_fmt_kb(s->mem.rss_kb, r, sizeof r);
    ui_fmt_kb(s->mem.pss_kb, p, sizeof p);
    ui_fmt_kb(s->mem.pss_file_kb, f, sizeof f);
    fprintf(stderr, "[%d tokens, %.1f tok/s, TTFT %.0f ms, ctx %d/%d, RSS %s, PSS %s (file %s), %s]\n",
            n, s->decode_tps, s->ttft_ms, s->n_past, s->n_ctx, r, p, f,
            (unsigned)s->strategy < 3 ? sn[s->strategy] : "?");
}

static void plain_say(ui_host *h, int level, const char *msg)
{
    note(msg);
}

/* The conversation and its saved file, as the command handlers see them. */
typedef struct {
    conv c;
    chatlog log;
    bool save_failed;
    ui_attach at;     /* /read and -f files for the next message */
} plain_chat;

/* A finished turn goes to the file (chatlog.h), as in the full-screen chat. */
static void save_turn(plain_chat *p, const char *user, const char *reply, bool stopped, const ember_stats *st,
                      int nt)
{
    chatlog_stats cs = {st->n_ctx > 0, st->n_prompt, nt, st->ttft_ms, st->decode_tps};
    ember_err e = {{0}};
    if (shown.tmpl[0]) chatlog_set(&p->log.tmpl, shown.tmpl);   /* the template the turn ran in */
    if (chatlog_add(&p->log, "user", user, false, NULL) < 0 ||
        chatlog_add(&p->log, "assistant", reply, stopped, &cs) < 0)
        ember_seterr(&e, "out of memory");
    char was[CHATLOG_ID_MAX];
    snprintf(was, sizeof was, "%s", p->log.id);
    if (e.msg[0] || chatlog_save(&p->log, &e) < 0) {
        if (!p->save_failed) {
            char msg[1200];
            snprintf(msg, sizeof msg, "the conversation is not being saved: %s", e.msg);
            note(msg);
        }
        p->save_failed = true;
        return;
    }
    if (strcmp(was, p->log.id)) {
        char msg[200];
        snprintf(msg, sizeof msg, "conversation %s was opened by another Ember meanwhile: this one is saved as %s",
                 was, p->log.id);
        note(msg);
    }
    p->save_failed = false;
}

/* A new file for what follows; the old one stays saved. */
static void new_log(plain_chat *p, const ui_config *cfg)
{
    char *model = p->log.model ? strdup(p->log.model) : NULL;
    chatlog_free(&p->log);
    chatlog_init(&p->log);
    chatlog_set(&p->log.model, model);
    chatlog_set(&p->log.profile, cfg->load.profile);
    chatlog_set(&p->log.system, cfg->system);
    free(model);
}

static void plain_clear(ui_host *h, const ui_slash *s)
{
    plain_chat *p = h->front;
    conv_clear(&p->c, true);
    ember_worker_clear(h->worker);
    new_log(p, h->cfg);
}

/* Makes r (taken over, emptied) the conversation: its turns are the
   model's context from the next line on. */
static int adopt(plain_chat *p, ember_worker *w, chatlog *r)
{
    conv_clear(&p->c, false);
    if (r->system && conv_add(&p->c, "system", r->system) < 0) return -1;
    for (size_t i = 0; i < r->n; i++)
        if (conv_add(&p->c, r->msgs[i].role, r->msgs[i].content) < 0) return -1;
    char *model = p->log.model ? strdup(p->log.model) : NULL;
    chatlog_free(&p->log);
    p->log = *r;
    memset(r, 0, sizeof *r);
    if (model) chatlog_set(&p->log.model, model);
    free(model);
    ember_worker_set_conversation(w, p->c.m, p->c.n);
    char msg[200];
    int turns = chatlog_turns(&p->log);
    snprintf(msg, sizeof msg, "reopened conversation %s (%d turn%s)", p->log.id, turns, turns == 1 ? "" : "s");
    note(msg);
    return 0;
}

/* What the store says while finding one (a damaged file skipped, a
   conversation open elsewhere copied). */
static void warn_note(void *ud, const char *msg) { note(msg); }

static void plain_load(ui_host *h, const ui_slash *s)
{
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)s->arg_len, s->arg);
    chatlog r;
    ember_err e = {{0}};
    if (chatlog_open(id, &r, warn_note, NULL, &e) < 0 || adopt(h->front, h->worker, &r) < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "/load: %s", e.msg[0] ? e.msg : "out of memory");
        note(msg);
    }
    chatlog_free(&r);
}

static void plain_read(ui_host *h, const ui_slash *s)
{
    plain_chat *p = h->front;
    char path[4096], err[4200];
    snprintf(path, sizeof path, "%.*s", (int)s->arg_len, s->arg);
    long long n = ui_attach_file(&p->at, path, err, sizeof err);
    if (n < 0) note(err);
    else fprintf(stderr, "ember: attached %s (%lld bytes): it goes with the next message\n", path, n);
}

static void plain_list(ui_host *h, const ui_slash *s)
{
    plain_chat *p = h->front;
    ember_err e = {{0}};
    char *text = chatlog_list_text(p->log.id, 20, warn_note, NULL, &e);
    note(text ? text : e.msg);
    free(text);
}

static void plain_think(ui_host *h, const ui_slash *s)
{
    show_think = s->ival < 0 ? !show_think : s->ival != 0;
    note(ui_think_said(show_think));
}

static void plain_info(ui_host *h, const ui_slash *s)
{
    char buf[2048];
    ui_info in = {shown.model, shown.arch, shown.tmpl, h->cfg->load.profile, shown.plan, shown.n_ctx,
                  shown.n_past, gen_opt_table[OPT_REASONING].names(h->cfg->gen.reasoning)};
    ui_info_text(&in, buf, sizeof buf);
    note(buf);
}

/* The commands plain mode handles itself (the table's `plain` ones that
   act on the conversation). */
static void (*const plain_ops[SL_COUNT])(ui_host *, const ui_slash *) = {
    [SL_CLEAR] = plain_clear, [SL_NEW] = plain_clear, [SL_LOAD] = plain_load, [SL_CHATS] = plain_list,
    [SL_READ] = plain_read, [SL_INFO] = plain_info, [SL_THINK] = plain_think};

/* One message and its reply, saved; 1, or 0 when it got an error instead
   (it is then taken back out of the conversation), -1 out of memory. */
static int turn(plain_chat *pc, ember_worker *w, const char *text)
{
    conv *cv = &pc->c;
    if (conv_add(cv, "user", text) < 0) return -1;
    /* Ctrl-C, a kill or a hangup while the reply runs stops it and saves
       the turn, marked stopped, before the signal does what it did: it
       used to end ember at once and the turn was lost.  Whatever handled
       the signal before (the pack cache's writer) gets it after. */
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_turn_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &sa, &old[i]);
    uint64_t gs = ember_worker_generate(w, cv->m, cv->n);
    char *reply = NULL;
    ember_stats st;
    memset(&st, 0, sizeof st);
    int nt = 0, rc = 1;
    reply_open = true;          /* the reply's line ends below */
    ui_think_stream fold = {0};
    bool ok = pump(w, gs, EMBER_EV_DONE, &reply, &st, &nt, show_think ? NULL : &fold);
    if (!show_think && reply && ui_think_end(&fold, reply, strlen(reply))) fold_line(fold.tokens);
    if (reply_open) fputc('\n', stdout);
    reply_open = false;
    ember_stdout_flush();
    if (!ok) {
        /* one failed message (longer than the context, say) is reported
           and taken back; the rest of the input still gets its answers */
        cv->n--;
        free((char *)cv->m[cv->n].role);
        free((char *)cv->m[cv->n].content);
        rc = 0;
    } else if (conv_add(cv, "assistant", reply ? reply : "") < 0) {
        rc = -1;
    } else {
        /* saved before the numbers are printed: a reader that stops at
           the reply (head -1) ends ember on the next write */
        save_turn(pc, text, reply ? reply : "", turn_signal != 0, &st, nt);
    }
    for (int i = 0; i < 3; i++) sigaction(sigs[i], &old[i], NULL);
    if (turn_signal) {
        free(reply);
        raise(turn_signal);   /* what it did before; ui_plain_run ends if it returns */
        return rc;
    }
    if (st.n_ctx) print_stats(&st, nt);
    free(reply);
    return rc;
}

int ui_plain_run(ui_config *cfg)
{
    ember_worker_opts wo;
    ember_worker_opts_default(&wo);
    wo.sampling = cfg->gen.samp;
    wo.n_predict = cfg->gen.n_predict;
    wo.think = gen_opts_reasoning_mode(&cfg->gen);
    ember_err err = {{0}};
    ember_worker *w = ember_worker_start(cfg->backend, &wo, &err);
    if (!w) {
        fprintf(stderr, "ember: %s\n", err.msg);
        return 1;
    }
    uint64_t ls = ember_worker_load_model(w, &cfg->load);
    show_think = cfg->show_think;
    if (!pump(w, ls, EMBER_EV_LOADED, NULL, NULL, NULL, NULL)) {
        ember_worker_free(w);
        return 1;
    }
    if (cfg->demo)
        fprintf(stderr, "ember: DEMO model with random weights: the text means nothing\n");
    plain_chat pc;
    memset(&pc, 0, sizeof pc);
    conv *cv = &pc.c;
    int status = 0;
    bool failed = false;          /* some message got an error instead of a reply */
    ascii = !ui_locale_utf8();
    if (cfg->system && *cfg->system && conv_add(cv, "system", cfg->system) < 0) status = 1;
    char model[4096];
    if (!cfg->model_path || !realpath(cfg->model_path, model))
        snprintf(model, sizeof model, "%s", cfg->model_path ? cfg->model_path : "");
    new_log(&pc, cfg);
    chatlog_set(&pc.log.model, model);
    if (cfg->resume && adopt(&pc, w, cfg->resume) < 0) status = 1;
    pc.at = cfg->attach;                     /* -f files (and stdin with -p): ours now */
    memset(&cfg->attach, 0, sizeof cfg->attach);
    char *line = NULL;
    size_t cap = 0;
    if (cfg->oneshot && !status) {   /* ember -p: one message (stdin and -f files before it) */
        char *msg = ui_attach_take(&pc.at, cfg->oneshot);
        int rc = msg ? turn(&pc, w, msg) : -1;
        free(msg);
        status = turn_signal ? 128 + turn_signal : rc == 1 ? 0 : 1;
        goto done;
    }
    ssize_t n;
    /* at a keyboard (stdout piped, or TERM=dumb): line editing and history */
    ui_lineread *lr = isatty(0) ? ui_lineread_open() : NULL;
    bool prompt = isatty(0) && !lr;   /* without libedit: still show where to type */
    for (;;) {
        if (prompt) {
            fputs("> ", stderr);
            fflush(stderr);
        }
        if (status) break;
        if (lr) {
            const char *l = ui_lineread_get(lr);
            if (!l) break;
            n = (ssize_t)strlen(l);
            if ((size_t)n + 1 > cap) {
                char *g = realloc(line, (size_t)n + 1);
                if (!g) break;
                line = g;
                cap = (size_t)n + 1;
            }
            memcpy(line, l, (size_t)n + 1);
        } else if ((n = getline(&line, &cap, stdin)) < 0) {
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n) continue;
        ui_slash s;
        ui_slash_parse(line, &s);
        if (s.kind != SL_NONE) {
            ui_host h = {cfg, w, true, false, plain_say, plain_ops, &pc};
            ui_slash_run(&h, &s);
            if (h.quit) break;
            continue;
        }
        char *msg = pc.at.n ? ui_attach_take(&pc.at, s.arg) : NULL;
        int rc = turn(&pc, w, msg ? msg : s.arg);
        free(msg);
        if (rc < 0) status = 1;
        if (rc == 0) failed = true;
        if (turn_signal) {            /* a signal handled, not fatal: end as it asked */
            status = 128 + turn_signal;
            break;
        }
    }
    if (failed && !status) status = 1;
    ui_lineread_close(lr);
done:
    free(line);
    ui_attach_clear(&pc.at);
    conv_clear(cv, false);
    free(cv->m);
    chatlog_free(&pc.log);
    ember_worker_free(w);
    return status;
}
