/* The engine thread.  Commands go in through a mutex/condvar queue; events
   come out through an in-memory queue plus a non-blocking wake-up pipe, so
   the worker never blocks on a slow (or exiting) front end and the front
   end can poll() the pipe together with its terminal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "worker.h"

typedef enum { CMD_LOAD, CMD_GEN, CMD_SAMPLING, CMD_THINK, CMD_CLEAR, CMD_SET_CONV, CMD_QUIT } cmd_kind;

typedef struct cmd {
    cmd_kind kind;
    uint64_t seq;
    ember_worker_load load;
    ember_chat_msg *msgs;          /* deep copies */
    size_t n_msgs;
    ember_sampler_opts samp;
    int n_predict;
    int think;
    double queued_ms;              /* when it was sent */
    struct cmd *next;
} cmd;

struct ember_worker {
    const ember_worker_backend *be;
    pthread_t th;
    pthread_mutex_t mu;            /* command queue, busy */
    pthread_cond_t cv;
    cmd *head, *tail;
    uint64_t next_seq;
    bool busy;
    _Atomic uint64_t cancel_upto;  /* generations with seq <= this stop */
    _Atomic bool quitting;
    double ahead_from, ahead_to;   /* the last packing done ahead (ms) */
    double ttft_wait_ms;           /* of it, what this turn waited: in its TTFT */

    pthread_mutex_t ev_mu;         /* event queue */
    ember_event *evs;
    size_t ev_head, ev_n, ev_cap;
    int pipe_r, pipe_w;

    /* Worker-thread state. */
    void *h;
    char label[128];
    int32_t *cache;                /* tokens whose K/V the session holds */
    int n_cache, cap_cache;
    ember_chat_msg *conv;          /* last conversation incl. the reply */
    size_t n_conv;
    int dropped;                   /* leading non-system messages dropped */
    ember_worker_opts opts;
    ember_stats last_stats;
    bool have_stats;
    char tmpl[768];                /* the template name last reported */
};

static char *xstrdup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void ember_event_clear(ember_event *ev)
{
    free(ev->text);
    free(ev->text2);
    memset(ev, 0, sizeof *ev);
}

void ember_worker_opts_default(ember_worker_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n_predict = -1;
    o->think = -1;
    o->stats_interval_ms = 200;
    o->sampling.temperature = 0.7f;
    o->sampling.top_p = 0.9f;
    o->sampling.repeat_penalty = 1.0f;
    o->sampling.repeat_last_n = 64;
}

int ember_worker_common_prefix(const int32_t *a, int na, const int32_t *b, int nb)
{
    int n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i]) i++;
    return i;
}

/* ---- events ---------------------------------------------------------- */

static void emit(ember_worker *w, ember_event *ev)
{
    pthread_mutex_lock(&w->ev_mu);
    if (w->ev_n == w->ev_cap) {
        size_t cap = w->ev_cap ? w->ev_cap * 2 : 64;
        ember_event *n = malloc(cap * sizeof *n);
        if (!n) {                  /* out of memory: drop the event */
            pthread_mutex_unlock(&w->ev_mu);
            ember_event_clear(ev);
            return;
        }
        for (size_t i = 0; i < w->ev_n; i++) n[i] = w->evs[(w->ev_head + i) % w->ev_cap];
        free(w->evs);
        w->evs = n;
        w->ev_head = 0;
        w->ev_cap = cap;
    }
    w->evs[(w->ev_head + w->ev_n) % w->ev_cap] = *ev;
    w->ev_n++;
    pthread_mutex_unlock(&w->ev_mu);
    /* A full pipe already means "wake up": EAGAIN is fine. */
    char b = 1;
    ssize_t r = write(w->pipe_w, &b, 1);
    (void)r;
}

static void emit_text(ember_worker *w, ember_event_kind k, uint64_t seq, const char *t,
                      const char *t2)
{
    ember_event ev = {.kind = k, .seq = seq};
    ev.text = xstrdup(t);
    ev.text2 = xstrdup(t2);
    emit(w, &ev);
}

static void emit_stats(ember_worker *w, ember_event_kind k, uint64_t seq, int n, bool cancelled)
{
    ember_event ev = {.kind = k, .seq = seq, .i = n, .cancelled = cancelled};
    if (w->h) w->be->stats(w->h, &ev.stats);
    if (w->ttft_wait_ms > 0 && ev.stats.ttft_ms > 0) ev.stats.ttft_ms += w->ttft_wait_ms;
    /* Phase marks for the memory panel: a phase whose snapshot changed. */
    for (int p = 0; p < EMBER_PHASE_COUNT && w->h; p++) {
        if (!ev.stats.phase_seen[p]) continue;
        if (w->have_stats && w->last_stats.phase_seen[p] &&
            !memcmp(&w->last_stats.phase_mem[p], &ev.stats.phase_mem[p], sizeof(ember_memstat)))
            continue;
        ember_event pe = {.kind = EMBER_EV_PHASE, .seq = seq, .i = p, .stats = ev.stats};
        pe.text = xstrdup(ember_phase_name((ember_phase)p));
        emit(w, &pe);
    }
    if (w->h) {
        w->last_stats = ev.stats;
        w->have_stats = true;
    }
    emit(w, &ev);
}

int ember_worker_fd(const ember_worker *w) { return w->pipe_r; }

bool ember_worker_poll(ember_worker *w, ember_event *ev)
{
    char buf[256];
    while (read(w->pipe_r, buf, sizeof buf) > 0) {}
    pthread_mutex_lock(&w->ev_mu);
    bool got = w->ev_n > 0;
    if (got) {
        *ev = w->evs[w->ev_head];
        w->ev_head = (w->ev_head + 1) % w->ev_cap;
        w->ev_n--;
    }
    pthread_mutex_unlock(&w->ev_mu);
    return got;
}

/* ---- commands -------------------------------------------------------- */

static void free_msgs(ember_chat_msg *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)m[i].role);
        free((char *)m[i].content);
    }
    free(m);
}

static ember_chat_msg *copy_msgs(const ember_chat_msg *m, size_t n, size_t extra)
{
    ember_chat_msg *c = calloc(n + extra + 1, sizeof *c);
    if (!c) return NULL;
    for (size_t i = 0; i < n; i++) {
        c[i].role = xstrdup(m[i].role ? m[i].role : "user");
        c[i].content = xstrdup(m[i].content ? m[i].content : "");
        if (!c[i].role || !c[i].content) {
            free_msgs(c, i + 1);
            return NULL;
        }
    }
    return c;
}

static void free_cmd(cmd *c)
{
    if (!c) return;
    free_msgs(c->msgs, c->n_msgs);
    free(c);
}

static uint64_t push(ember_worker *w, cmd *c)
{
    pthread_mutex_lock(&w->mu);
    c->seq = ++w->next_seq;
    if (c->kind == CMD_QUIT) {     /* quit jumps the queue */
        c->next = w->head;
        w->head = c;
        if (!w->tail) w->tail = c;
    } else {
        if (w->tail) w->tail->next = c;
        else w->head = c;
        w->tail = c;
    }
    uint64_t s = c->seq;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return s;
}

static bool cancelled(ember_worker *w, uint64_t seq)
{
    return atomic_load(&w->cancel_upto) >= seq || atomic_load(&w->quitting);
}

/* A prefill's view of cancel: this generation's, or the worker quitting. */
typedef struct { ember_worker *w; uint64_t seq; } stop_ctx;

static bool stop_requested(void *ud)
{
    const stop_ctx *sc = ud;
    return cancelled(sc->w, sc->seq);
}

/* ---- generation ------------------------------------------------------- */

static int cache_set(ember_worker *w, const int32_t *t, int n)
{
    if (n > w->cap_cache) {
        int32_t *c = realloc(w->cache, (size_t)n * sizeof *c);
        if (!c) return -1;
        w->cache = c;
        w->cap_cache = n;
    }
    memmove(w->cache, t, (size_t)n * sizeof *t);
    w->n_cache = n;
    return 0;
}

static int cache_push(ember_worker *w, int32_t t)
{
    if (w->n_cache == w->cap_cache) {
        int cap = w->cap_cache ? w->cap_cache * 2 : 256;
        int32_t *c = realloc(w->cache, (size_t)cap * sizeof *c);
        if (!c) return -1;
        w->cache = c;
        w->cap_cache = cap;
    }
    w->cache[w->n_cache++] = t;
    return 0;
}

/* The messages actually sent to the model: the system prompt (if first)
   and everything after the dropped ones. */
static size_t visible(const ember_chat_msg *m, size_t n, int dropped, ember_chat_msg *out)
{
    size_t k = 0, i = 0;
    if (n && m[0].role && !strcmp(m[0].role, "system")) out[k++] = m[i++];
    for (i += (size_t)dropped; i < n; i++) out[k++] = m[i];
    return k;
}

/* Tokenizes the conversation, dropping the oldest turns until the prompt
   plus `reserve` tokens fits the context.  Returns the token count, or -1
   with err set. */
static int fit_prompt(ember_worker *w, const ember_chat_msg *m, size_t n, bool add_gen,
                      int reserve, int32_t **toks, ember_err *err)
{
    int n_ctx = w->be->n_ctx(w->h);
    size_t first = (n && m[0].role && !strcmp(m[0].role, "system")) ? 1 : 0;
    ember_chat_msg *vis = calloc(n + 1, sizeof *vis);
    if (!vis) return ember_seterr(err, "out of memory");
    if (reserve > n_ctx / 2) reserve = n_ctx / 2;
    /* Counted afresh each turn: the conversation may have shrunk (/regen,
       /system); the caller compares with the previous count for notices. */
    w->dropped = 0;
    for (;;) {
        if (w->dropped > (int)(n - first)) w->dropped = (int)(n - first);
        size_t k = visible(m, n, w->dropped, vis);
        uint8_t *mask = NULL;
        char *text = w->be->render(w->h, vis, k, add_gen, &mask);
        if (!text) {
            free(vis);
            return ember_seterr(err, "cannot render the conversation with the chat template");
        }
        free(*toks);
        *toks = NULL;
        int nt = w->be->tokenize(w->h, text, mask, toks, err);
        free(text);
        free(mask);
        if (nt < 0) {
            free(vis);
            return -1;
        }
        if (nt + reserve <= n_ctx) {
            free(vis);
            return nt;
        }
        /* Keep at least the newest message; drop a whole user+assistant
           pair when there is one. */
        size_t left = n - first - (size_t)w->dropped;
        if (left <= 1) {
            free(vis);
            if (nt < n_ctx) return nt;
            /* "raise --ctx" is no advice once the context is the model's
               trained length, which bounds it */
            int max = w->be->n_ctx_max ? w->be->n_ctx_max(w->h) : 0;
            if (max > 0 && n_ctx >= max)
                return ember_seterr(err, "the message needs %d tokens but the context holds %d, "
                                    "the model's maximum: shorten it", nt, n_ctx);
            if (max > 0)
                return ember_seterr(err, "the message needs %d tokens but the context holds %d: "
                                    "shorten it or raise --ctx (up to %d for this model)", nt, n_ctx, max);
            return ember_seterr(err, "the message needs %d tokens but the context holds %d: "
                                "shorten it or raise --ctx", nt, n_ctx);
        }
        w->dropped += left >= 3 ? 2 : 1;
    }
}

/* Brings the session to hold exactly toks[0..n): keeps the shared prefix,
   prefills the rest.  need_logits: at least the last token is fed again. */
static int sync_cache(ember_worker *w, const int32_t *toks, int n, bool need_logits,
                      ember_cancel_fn stop, void *ud, ember_err *err)
{
    int common = ember_worker_common_prefix(w->cache, w->n_cache, toks, n);
    if (need_logits && common >= n) common = n - 1;
    if (common < 0) common = 0;
    common = w->be->truncate(w->h, common);   /* may keep less (worker.h) */
    w->n_cache = common;
    int rc = n > common ? w->be->prefill(w->h, toks + common, n - common, stop, ud, err) : 0;
    if (rc == EMBER_CANCELLED) {
        /* what was cached before still is (unless a KV ring wrapped over
           it); the partial rest is dropped */
        w->n_cache = w->be->truncate(w->h, common);
        return EMBER_CANCELLED;
    }
    if (rc < 0) {
        /* The cache content is unknown after a failure: start over next time. */
        w->be->truncate(w->h, 0);
        w->n_cache = 0;
        return -1;
    }
    return cache_set(w, toks, n) < 0 ? ember_seterr(err, "out of memory") : 0;
}

static void remember_conv(ember_worker *w, const ember_chat_msg *m, size_t n, const char *reply)
{
    free_msgs(w->conv, w->n_conv);
    w->conv = copy_msgs(m, n, 1);
    w->n_conv = w->conv ? n : 0;
    if (w->conv && reply) {
        w->conv[n].role = xstrdup("assistant");
        w->conv[n].content = xstrdup(reply);
        if (w->conv[n].role && w->conv[n].content) w->n_conv = n + 1;
    }
}

typedef struct { char *p; size_t n, cap; } sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) return;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

/* Reports the chat template in use when it is not what was last said
   (after a load, or when a render fell back to the built-in one or came
   back from it); a fallback is also a note in the transcript. */
static void report_template(ember_worker *w, uint64_t seq, bool loaded)
{
    if (!w->be->template_name) return;
    const char *name = w->be->template_name(w->h);
    if (!name || (!loaded && !strcmp(name, w->tmpl))) return;
    bool changed = strcmp(name, w->tmpl) != 0;
    snprintf(w->tmpl, sizeof w->tmpl, "%s", name);
    ember_event ev = {.kind = EMBER_EV_TEMPLATE, .seq = seq, .i = w->be->n_ctx(w->h)};
    ev.text = xstrdup(name);
    ev.text2 = xstrdup(w->be->arch ? w->be->arch(w->h) : "");
    emit(w, &ev);
    if (strstr(name, "(fallback:") || strstr(name, "(built-in:") || (changed && !loaded)) {
        char msg[800];
        snprintf(msg, sizeof msg, "template: %s", name);
        emit_text(w, EMBER_EV_NOTICE, seq, msg, NULL);
    }
}

/* The one-off work a first prefill would start with (packing the weights)
   runs as a step of its own, so the front end shows it as what it is.
   ahead: right after a load, while the user types; its span is kept so a
   message sent meanwhile can count its wait. */
static int prepare(ember_worker *w, uint64_t seq, bool ahead, ember_err *err)
{
    int (*fn)(void *h, ember_err *err) = ahead ? w->be->prepare_ahead : w->be->prepare;
    if (!w->be->prepare_pending || !fn || !w->be->prepare_pending(w->h)) return 0;
    emit_text(w, EMBER_EV_PROGRESS, seq,
              ahead ? "packing the weights (once, while you type)"
                    : "packing the weights (once, before the first prefill)", NULL);
    double t0 = ember_now_ms();
    int rc = fn(w->h, err);
    if (ahead) {
        w->ahead_from = t0;
        w->ahead_to = ember_now_ms();
    }
    emit_stats(w, EMBER_EV_STATS, seq, 0, false);
    return rc < 0 ? -1 : 0;
}

/* Where the history ends in toks (the prompt of the visible messages with
   the generation prompt after them): the same messages rendered without
   it, when their tokens are toks' first ones; 0 otherwise. */
static int history_len(ember_worker *w, const ember_chat_msg *m, size_t n, const int32_t *toks, int nt)
{
    ember_chat_msg *vis = calloc(n + 1, sizeof *vis);
    if (!vis) return 0;
    size_t k = visible(m, n, w->dropped, vis);
    uint8_t *mask = NULL;
    char *text = w->be->render(w->h, vis, k, false, &mask);
    free(vis);
    int32_t *h = NULL;
    ember_err err;
    int nh = text ? w->be->tokenize(w->h, text, mask, &h, &err) : -1;
    free(text);
    free(mask);
    if (nh <= 0 || nh >= nt || memcmp(h, toks, (size_t)nh * sizeof *h)) nh = 0;
    free(h);
    return nh;
}

static void do_generate(ember_worker *w, cmd *c)
{
    ember_err err = {{0}};
    if (cancelled(w, c->seq)) {
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    if (!w->h) {
        emit_text(w, EMBER_EV_ERROR, c->seq, "no model is loaded", NULL);
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    /* a message sent while the packing ran ahead waited for it: that wait
       is part of its time to first token, as when the turn packs itself */
    double from = c->queued_ms > w->ahead_from ? c->queued_ms : w->ahead_from;
    w->ttft_wait_ms = w->ahead_to > from ? w->ahead_to - from : 0;
    w->ahead_from = w->ahead_to = 0;
    int n_predict = w->opts.n_predict;
    int reserve = n_predict > 0 ? n_predict : 256;
    int32_t *toks = NULL;
    int before = w->dropped;
    int nt = fit_prompt(w, c->msgs, c->n_msgs, true, reserve, &toks, &err);
    if (nt < 0) {
        free(toks);
        emit_text(w, EMBER_EV_ERROR, c->seq, err.msg, NULL);
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    report_template(w, c->seq, false);
    if (w->dropped != before) {
        /* fewer: a conversation that fits now, where nothing was dropped
           ("dropped the 0 oldest messages" said so) */
        if (w->dropped > before) {
            char msg[160];
            snprintf(msg, sizeof msg, "context full: dropped the %d oldest message%s "
                     "(the system prompt is kept)", w->dropped, w->dropped == 1 ? "" : "s");
            emit_text(w, EMBER_EV_NOTICE, c->seq, msg, NULL);
        }
        ember_event ev = {.kind = EMBER_EV_DROPPED, .seq = c->seq, .i = w->dropped};
        emit(w, &ev);
    }
    if (prepare(w, c->seq, false, &err) < 0) {
        free(toks);
        emit_text(w, EMBER_EV_ERROR, c->seq, err.msg, NULL);
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    {
        int common = ember_worker_common_prefix(w->cache, w->n_cache, toks, nt);
        char msg[96];
        snprintf(msg, sizeof msg, "prefill %d of %d tokens", nt - (common < nt ? common : nt - 1), nt);
        emit_text(w, EMBER_EV_PROGRESS, c->seq, msg, NULL);
    }
    stop_ctx sc = {w, c->seq};
    /* A recurrent state goes back only to where a prefill started or ended.
       A template that rewrites the last reply (Qwen3.5's drops its
       thinking) makes the next turn diverge inside this turn's generation
       prompt: the history prefilled first leaves a copy at its end, where
       the next turn continues, instead of the whole conversation again. */
    int rc = 0;
    const int hist = w->be->recurrent && w->be->recurrent(w->h) ? history_len(w, c->msgs, c->n_msgs, toks, nt) : 0;
    if (hist > ember_worker_common_prefix(w->cache, w->n_cache, toks, nt))
        rc = sync_cache(w, toks, hist, false, stop_requested, &sc, &err);
    if (rc == 0) rc = sync_cache(w, toks, nt, true, stop_requested, &sc, &err);
    free(toks);
    if (rc == EMBER_CANCELLED) {
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    if (rc < 0) {
        emit_text(w, EMBER_EV_ERROR, c->seq, err.msg, NULL);
        emit_stats(w, EMBER_EV_DONE, c->seq, 0, true);
        return;
    }
    emit_stats(w, EMBER_EV_STATS, c->seq, 0, false);

    sbuf reply = {0};
    int n_gen = 0, n_ctx = w->be->n_ctx(w->h);
    bool stop = false;
    double last = ember_now_ms();
    w->be->piece_reset(w->h);
    const char *pre = w->be->reply_prefix ? w->be->reply_prefix(w->h) : NULL;
    if (pre && *pre) {
        /* the reply starts inside what the prompt opened: kept so the
           transcript and the next turn's conversation hold it whole */
        sb_add(&reply, pre, strlen(pre));
        ember_event pe = {.kind = EMBER_EV_TOKEN, .seq = c->seq, .i = 1};
        pe.text = xstrdup(pre);
        emit(w, &pe);
    }
    char piece[512];   /* >= ember_tok_max_piece() of every real vocabulary (longest: 128 bytes) */
    bool ended = false;   /* by the model (end of turn), the context, an error: not the limit */
    while (!stop && (n_predict <= 0 || n_gen < n_predict)) {
        if (cancelled(w, c->seq)) {
            stop = true;
            break;
        }
        int32_t t = w->be->sample(w->h);
        if (w->be->is_eog(w->h, t)) {
            ended = true;
            break;
        }
        int k = w->be->piece(w->h, t, piece, sizeof piece);
        if (k > 0) {
            sb_add(&reply, piece, (size_t)k);
            emit_text(w, EMBER_EV_TOKEN, c->seq, piece, NULL);
        }
        n_gen++;
        if (w->n_cache >= n_ctx) {
            emit_text(w, EMBER_EV_NOTICE, c->seq,
                      "context full: the reply was cut; the next turn drops the oldest messages",
                      NULL);
            ended = true;
            break;
        }
        /* The last token is decoded too, so the cache matches the reply. */
        if (w->be->decode(w->h, t, &err) < 0) {
            emit_text(w, EMBER_EV_ERROR, c->seq, err.msg, NULL);
            w->be->truncate(w->h, 0);
            w->n_cache = 0;
            ended = true;
            break;
        }
        cache_push(w, t);
        double now = ember_now_ms();
        if (now - last >= w->opts.stats_interval_ms) {
            emit_stats(w, EMBER_EV_STATS, c->seq, n_gen, false);
            last = now;
        }
    }
    int k = w->be->piece(w->h, -1, piece, sizeof piece);   /* flush */
    if (k > 0) {
        sb_add(&reply, piece, (size_t)k);
        emit_text(w, EMBER_EV_TOKEN, c->seq, piece, NULL);
    }
    if (!stop && !ended && n_predict > 0 && n_gen >= n_predict) {
        /* a reply cut here looked finished: nothing said it stopped */
        char msg[160];
        snprintf(msg, sizeof msg,
                 "the reply reached its limit of %d tokens and was cut (--n-predict or /set n_predict raises it)",
                 n_predict);
        emit_text(w, EMBER_EV_NOTICE, c->seq, msg, NULL);
    }
    if (w->be->turn_end) w->be->turn_end(w->h);
    remember_conv(w, c->msgs, c->n_msgs, reply.p ? reply.p : "");
    free(reply.p);
    emit_stats(w, EMBER_EV_DONE, c->seq, n_gen, stop);
}

/* Brings the session to hold w->conv (kept across a load, or set by
   CMD_SET_CONV), so the next turn prefills only its new message. */
static void reprefill(ember_worker *w, uint64_t seq)
{
    ember_err err = {{0}};
    int32_t *toks = NULL;
    int nt = -1;
    if (prepare(w, seq, false, &err) == 0) {
        emit_text(w, EMBER_EV_PROGRESS, seq, "re-prefilling the conversation", NULL);
        nt = fit_prompt(w, w->conv, w->n_conv, false, 256, &toks, &err);
    }
    if (nt >= 0 && w->dropped > 0) {
        /* the front end marks what the model no longer sees */
        ember_event ev = {.kind = EMBER_EV_DROPPED, .seq = seq, .i = w->dropped};
        emit(w, &ev);
    }
    stop_ctx qc = {w, UINT64_MAX};   /* only quitting stops this one */
    int rc = nt < 0 ? -1 : sync_cache(w, toks, nt, false, stop_requested, &qc, &err);
    if (rc == -1) emit_text(w, EMBER_EV_ERROR, seq, err.msg, NULL);
    free(toks);
    emit_stats(w, EMBER_EV_STATS, seq, 0, false);
}

/* A reopened conversation replaces the cached one.  Without a model yet
   it is kept for the load to prefill. */
static void do_set_conv(ember_worker *w, cmd *c)
{
    free_msgs(w->conv, w->n_conv);
    w->conv = c->msgs;
    w->n_conv = c->n_msgs;
    c->msgs = NULL;
    c->n_msgs = 0;
    w->dropped = 0;
    if (!w->h) return;
    if (w->n_conv) {
        reprefill(w, c->seq);
        if (w->dropped > 0) {
            char msg[160];
            snprintf(msg, sizeof msg, "the conversation is longer than the context: the model sees it "
                     "without its %d oldest message%s", w->dropped, w->dropped == 1 ? "" : "s");
            emit_text(w, EMBER_EV_NOTICE, c->seq, msg, NULL);
        }
    } else {
        w->be->truncate(w->h, 0);
        w->n_cache = 0;
        emit_stats(w, EMBER_EV_STATS, c->seq, 0, false);
    }
    emit_text(w, EMBER_EV_PROGRESS, c->seq, "", NULL);
}

static void do_load(ember_worker *w, cmd *c)
{
    ember_err err = {{0}};
    w->ttft_wait_ms = 0;
    char msg[1400];
    snprintf(msg, sizeof msg, "loading %s%s%s", c->load.model_path,
             c->load.profile[0] ? " with profile " : "", c->load.profile);
    emit_text(w, EMBER_EV_PROGRESS, c->seq, msg, NULL);
    void *h = w->be->open(&c->load, &err);
    if (!h) {
        char full[2048];
        if (w->h)
            snprintf(full, sizeof full, "%s -- %s%s%snot loaded; still running %s", err.msg,
                     c->load.profile[0] ? "profile " : "", c->load.profile,
                     c->load.profile[0] ? " " : "", w->label);
        else
            snprintf(full, sizeof full, "%s", err.msg);
        emit_text(w, EMBER_EV_ERROR, c->seq, full, NULL);
        return;
    }
    if (w->h) w->be->close(w->h);
    w->h = h;
    w->have_stats = false;
    w->n_cache = 0;
    snprintf(w->label, sizeof w->label, "%s", c->load.profile[0] ? c->load.profile : "the model");
    w->be->set_sampling(h, &w->opts.sampling);
    if (w->be->set_thinking) w->be->set_thinking(h, w->opts.think);
    char name[256], plan[512];
    w->be->describe(h, name, sizeof name, plan, sizeof plan);
    /* before LOADED: a front end that waits for it knows the template too */
    w->tmpl[0] = 0;
    report_template(w, c->seq, true);
    emit_text(w, EMBER_EV_LOADED, c->seq, name, plan);
    emit_stats(w, EMBER_EV_STATS, c->seq, 0, false);
    if (w->n_conv) {
        /* Keep the conversation: bring the new session up to date now so the
           next turn only prefills the new message. */
        reprefill(w, c->seq);
    } else {
        /* nothing to re-prefill: pack now, while the user types the first
           message, rather than in its TTFT (a message sent meanwhile waits) */
        if (prepare(w, c->seq, true, &err) < 0) emit_text(w, EMBER_EV_ERROR, c->seq, err.msg, NULL);
    }
    emit_text(w, EMBER_EV_PROGRESS, c->seq, "", NULL);
}

/* The switch applies from the next render; a template without one is
   said to have none, so "/set reasoning off" on it is not a silent no-op. */
static void do_think(ember_worker *w, const cmd *c)
{
    w->opts.think = c->think;
    if (!w->h) return;
    bool has = w->be->set_thinking && w->be->set_thinking(w->h, c->think);
    if (!has && c->think >= 0)
        emit_text(w, EMBER_EV_NOTICE, c->seq,
                  "this model's chat template has no thinking switch (enable_thinking): its replies are "
                  "unchanged; the setting holds for models whose template has one", NULL);
}

static void *worker_main(void *arg)
{
    ember_worker *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        w->busy = false;
        while (!w->head) pthread_cond_wait(&w->cv, &w->mu);
        cmd *c = w->head;
        w->head = c->next;
        if (!w->head) w->tail = NULL;
        w->busy = true;
        pthread_mutex_unlock(&w->mu);

        bool quit = false;
        switch (c->kind) {
        case CMD_LOAD: do_load(w, c); break;
        case CMD_GEN: do_generate(w, c); break;
        case CMD_SAMPLING:
            w->opts.sampling = c->samp;
            w->opts.n_predict = c->n_predict;
            if (w->h) w->be->set_sampling(w->h, &c->samp);
            break;
        case CMD_THINK: do_think(w, c); break;
        case CMD_CLEAR:
            if (w->h) w->be->truncate(w->h, 0);
            w->n_cache = 0;
            w->dropped = 0;
            free_msgs(w->conv, w->n_conv);
            w->conv = NULL;
            w->n_conv = 0;
            if (w->h) emit_stats(w, EMBER_EV_STATS, c->seq, 0, false);
            break;
        case CMD_SET_CONV: do_set_conv(w, c); break;
        case CMD_QUIT: quit = true; break;
        }
        uint64_t seq = c->seq;
        free_cmd(c);
        if (quit) {
            ember_event ev = {.kind = EMBER_EV_QUIT, .seq = seq};
            emit(w, &ev);
            break;
        }
    }
    return NULL;
}

/* ---- API ---------------------------------------------------------------- */

ember_worker *ember_worker_start(const ember_worker_backend *be, const ember_worker_opts *o,
                                 ember_err *err)
{
    ember_worker *w = calloc(1, sizeof *w);
    if (!w) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    w->be = be;
    if (o) w->opts = *o;
    else ember_worker_opts_default(&w->opts);
    if (w->opts.stats_interval_ms <= 0) w->opts.stats_interval_ms = 200;
    int p[2];
    if (pipe(p) < 0) {
        ember_seterr(err, "pipe: %s", strerror(errno));
        free(w);
        return NULL;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(p[i], F_SETFL, fcntl(p[i], F_GETFL) | O_NONBLOCK);
        fcntl(p[i], F_SETFD, FD_CLOEXEC);
    }
    w->pipe_r = p[0];
    w->pipe_w = p[1];
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->ev_mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    int rc = pthread_create(&w->th, NULL, worker_main, w);
    if (rc) {
        ember_seterr(err, "cannot start the engine thread: %s", strerror(rc));
        close(p[0]);
        close(p[1]);
        free(w);
        return NULL;
    }
    return w;
}

static cmd *new_cmd(cmd_kind k)
{
    cmd *c = calloc(1, sizeof *c);
    if (c) {
        c->kind = k;
        c->queued_ms = ember_now_ms();
    }
    return c;
}

uint64_t ember_worker_load_model(ember_worker *w, const ember_worker_load *l)
{
    cmd *c = new_cmd(CMD_LOAD);
    if (!c) return 0;
    c->load = *l;
    return push(w, c);
}

/* A command that carries a copy of the conversation. */
static uint64_t push_conv(ember_worker *w, cmd_kind kind, const ember_chat_msg *msgs, size_t n)
{
    cmd *c = new_cmd(kind);
    if (!c) return 0;
    c->msgs = copy_msgs(msgs, n, 0);
    if (!c->msgs) {
        free(c);
        return 0;
    }
    c->n_msgs = n;
    return push(w, c);
}

uint64_t ember_worker_generate(ember_worker *w, const ember_chat_msg *msgs, size_t n)
{
    return push_conv(w, CMD_GEN, msgs, n);
}

uint64_t ember_worker_set_sampling(ember_worker *w, const ember_sampler_opts *o, int n_predict)
{
    cmd *c = new_cmd(CMD_SAMPLING);
    if (!c) return 0;
    c->samp = *o;
    c->n_predict = n_predict;
    return push(w, c);
}

uint64_t ember_worker_set_thinking(ember_worker *w, int mode)
{
    cmd *c = new_cmd(CMD_THINK);
    if (!c) return 0;
    c->think = mode < 0 ? -1 : mode > 0;
    return push(w, c);
}

uint64_t ember_worker_set_conversation(ember_worker *w, const ember_chat_msg *msgs, size_t n)
{
    return push_conv(w, CMD_SET_CONV, msgs, n);
}

uint64_t ember_worker_clear(ember_worker *w)
{
    cmd *c = new_cmd(CMD_CLEAR);
    return c ? push(w, c) : 0;
}

void ember_worker_cancel(ember_worker *w)
{
    pthread_mutex_lock(&w->mu);
    atomic_store(&w->cancel_upto, w->next_seq);
    pthread_mutex_unlock(&w->mu);
}

bool ember_worker_busy(ember_worker *w)
{
    pthread_mutex_lock(&w->mu);
    bool b = w->busy || w->head;
    pthread_mutex_unlock(&w->mu);
    return b;
}

void ember_worker_free(ember_worker *w)
{
    if (!w) return;
    atomic_store(&w->quitting, true);
    cmd *q = new_cmd(CMD_QUIT);
    if (q) push(w, q);
    else {
        /* Without memory for the command, a flag still ends generation;
           nothing else is safe, so the thread is left to finish its queue. */
        return;
    }
    pthread_join(w->th, NULL);
    for (cmd *c = w->head; c;) {
        cmd *n = c->next;
        free_cmd(c);
        c = n;
    }
    if (w->h) w->be->close(w->h);
    ember_event ev;
    while (ember_worker_poll(w, &ev)) ember_event_clear(&ev);
    free(w->evs);
    free(w->cache);
    free_msgs(w->conv, w->n_conv);
    close(w->pipe_r);
    close(w->pipe_w);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->ev_mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}
