/* Plain line mode for pipes and dumb terminals: each input line is a
   user message, the reply streams to stdout, the numbers go to stderr. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "info.h"
#include "slash.h"
#include "statusbar.h"

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

/* Waits for events until one of kind `until` for seq; streams tokens.
   Returns false when the worker reported an error for seq. */
static bool pump(ember_worker *w, uint64_t seq, ember_event_kind until, char **reply,
                 ember_stats *st, int *n_tok)
{
    bool ok = true;
    size_t len = 0;
    for (;;) {
        struct pollfd p = {.fd = ember_worker_fd(w), .events = POLLIN};
        poll(&p, 1, 1000);
        ember_event ev;
        while (ember_worker_poll(w, &ev)) {
            bool mine = ev.seq == seq;
            ember_event_kind k = ev.kind;
            switch (k) {
            case EMBER_EV_TOKEN:
                fputs(ev.text, stdout);
                ember_stdout_flush();   /* a failure is reported at exit (main) */
                reply_open = true;
                if (reply) {
                    size_t n = strlen(ev.text);
                    char *r = realloc(*reply, len + n + 1);
                    if (r) {
                        memcpy(r + len, ev.text, n + 1);
                        len += n;
                        *reply = r;
                    }
                }
                break;
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

static void plain_clear(ui_host *h, const ui_slash *s)
{
    conv_clear(h->front, true);
    ember_worker_clear(h->worker);
}

static void plain_info(ui_host *h, const ui_slash *s)
{
    char buf[2048];
    ui_info in = {shown.model, shown.arch, shown.tmpl, h->cfg->load.profile, shown.plan, shown.n_ctx,
                  shown.n_past};
    ui_info_text(&in, buf, sizeof buf);
    note(buf);
}

/* The commands plain mode handles itself (the table's `plain` ones that
   act on the conversation). */
static void (*const plain_ops[SL_COUNT])(ui_host *, const ui_slash *) = {[SL_CLEAR] = plain_clear,
                                                                          [SL_INFO] = plain_info};

int ui_plain_run(ui_config *cfg)
{
    ember_worker_opts wo;
    ember_worker_opts_default(&wo);
    wo.sampling = cfg->gen.samp;
    wo.n_predict = cfg->gen.n_predict;
    ember_err err = {{0}};
    ember_worker *w = ember_worker_start(cfg->backend, &wo, &err);
    if (!w) {
        fprintf(stderr, "ember: %s\n", err.msg);
        return 1;
    }
    uint64_t ls = ember_worker_load_model(w, &cfg->load);
    if (!pump(w, ls, EMBER_EV_LOADED, NULL, NULL, NULL)) {
        ember_worker_free(w);
        return 1;
    }
    if (cfg->demo)
        fprintf(stderr, "ember: DEMO model with random weights: the text means nothing\n");
    conv c = {0};
    int status = 0;
    bool failed = false;          /* some message got an error instead of a reply */
    if (cfg->system && *cfg->system && conv_add(&c, "system", cfg->system) < 0) status = 1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    bool prompt = isatty(0);      /* TERM=dumb at a keyboard: show where to type */
    for (;;) {
        if (prompt) {
            fputs("> ", stderr);
            fflush(stderr);
        }
        if (status || (n = getline(&line, &cap, stdin)) < 0) break;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = 0;
        if (!n) continue;
        ui_slash s;
        ui_slash_parse(line, &s);
        if (s.kind != SL_NONE) {
            ui_host h = {cfg, w, true, false, plain_say, plain_ops, &c};
            ui_slash_run(&h, &s);
            if (h.quit) break;
            continue;
        }
        if (conv_add(&c, "user", s.arg) < 0) {
            status = 1;
            break;
        }
        uint64_t gs = ember_worker_generate(w, c.m, c.n);
        char *reply = NULL;
        ember_stats st;
        memset(&st, 0, sizeof st);
        int nt = 0;
        reply_open = true;          /* the reply's line ends below */
        bool ok = pump(w, gs, EMBER_EV_DONE, &reply, &st, &nt);
        if (reply_open) fputc('\n', stdout);
        reply_open = false;
        ember_stdout_flush();
        if (st.n_ctx) print_stats(&st, nt);
        if (!ok) {
            /* one failed message (longer than the context, say) is reported
               and taken back; the rest of the input still gets its answers */
            c.n--;
            free((char *)c.m[c.n].role);
            free((char *)c.m[c.n].content);
            failed = true;
        } else if (conv_add(&c, "assistant", reply ? reply : "") < 0) {
            status = 1;
        }
        free(reply);
    }
    if (failed && !status) status = 1;
    free(line);
    conv_clear(&c, false);
    free(c.m);
    ember_worker_free(w);
    return status;
}
