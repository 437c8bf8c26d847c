/* The worker's backend on the real engine: model + session + tokenizer +
   chat template + sampler behind the ember_worker_backend table. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember.h"
#include "channel.h"
#include "harmony.h"
#include "sampler.h"
#include "tokenizer.h"
#include "worker.h"

typedef struct eng {
    ember_model *m;
    ember_session *s;
    ember_tokenizer *tok;
    ember_chat_template *tmpl;
    int32_t eot;                   /* the template's end of turn, -1 */
    ember_sampler *smp;
    ember_sampler_opts so;
    float *logits;
    int n_vocab;
    ember_detok dt;
    bool harmony;                  /* replies in channels (gpt-oss): shown in the <think> form */
    ember_harmony hm;
    bool channel;                  /* a thought channel (Gemma 4): shown in the <think> form too */
    ember_channel ch;
    char path[1024];
} eng;

static void e_close(void *h)
{
    eng *e = h;
    if (!e) return;
    ember_sampler_free(e->smp);
    ember_chat_template_free(e->tmpl);
    ember_session_free(e->s);
    ember_model_free(e->m);
    free(e->logits);
    free(e);
}

static void *e_open(const ember_worker_load *l, ember_err *err)
{
    eng *e = calloc(1, sizeof *e);
    if (!e) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    snprintf(e->path, sizeof e->path, "%s", l->model_path);
    ember_plan_opts po = l->plan;
    if (l->threads > 0) po.threads = l->threads;
    if (!(e->m = ember_model_open(l->model_path, &po, err))) goto fail;
    e->tok = ember_model_tokenizer(e->m);
    if (!e->tok) {
        ember_seterr(err, "%s: the tokenizer cannot be used: %s", l->model_path,
                     ember_model_tokenizer_error(e->m));
        goto fail;
    }
    e->harmony = ember_harmony_vocab(e->tok);
    ember_harmony_init(&e->hm);
    e->channel = !e->harmony && ember_channel_vocab(e->tok);
    ember_channel_init(&e->ch);
    ember_chat_template_opts to = {.jinja = ember_model_chat_template(e->m), .tok = e->tok};
    if (!(e->tmpl = ember_chat_template_new(&to))) {
        ember_seterr(err, "out of memory");
        goto fail;
    }
    e->eot = ember_chat_template_eot(e->tmpl, NULL);
    ember_session_opts so = {.n_ctx = l->n_ctx, .threads = po.threads};
    if (!(e->s = ember_session_new(e->m, &so, err))) goto fail;
    e->n_vocab = ember_model_get_info(e->m)->n_vocab;
    e->logits = calloc((size_t)e->n_vocab, sizeof *e->logits);
    ember_sampler_opts_default(&e->so);
    e->smp = ember_sampler_new(&e->so, e->n_vocab);
    if (!e->logits || !e->smp) {
        ember_seterr(err, "out of memory");
        goto fail;
    }
    ember_detok_init(&e->dt);
    return e;
fail:
    e_close(e);
    return NULL;
}

static void e_describe(void *h, char *name, size_t nc, char *plan, size_t pc)
{
    eng *e = h;
    const ember_model_info *in = ember_model_get_info(e->m);
    const char *base = strrchr(e->path, '/');
    base = base ? base + 1 : e->path;
    snprintf(name, nc, "%s", in->name[0] ? in->name : base);
    const ember_plan *p = ember_model_plan(e->m);
    ember_stats st;
    ember_stats_get(e->s, &st);
    if (p)
        snprintf(plan, pc, "%s, KV %s %.1f MiB, %d tensors: eager %.1f MiB, compressed %.1f MiB, packed %.1f MiB"
                 " (%d/%d packable packed)",
                 ember_strategy_name(st.strategy), ember_kv_type_name(st.kv_type), (double)st.kv_bytes / 1048576, p->n, p->bytes_by_rep[0] / 1048576.0,
                 p->bytes_by_rep[1] / 1048576.0, p->bytes_by_rep[2] / 1048576.0, p->packed,
                 p->packable);
    else
        snprintf(plan, pc, "%s", ember_strategy_name(st.strategy));
}

static int e_n_ctx(void *h) { return ember_session_n_ctx(((eng *)h)->s); }

static int e_n_ctx_max(void *h) { return ember_model_get_info(((eng *)h)->m)->n_ctx_train; }
static bool e_recurrent(void *h) { return ember_model_get_info(((eng *)h)->m)->n_recurrent > 0; }

static char *e_render(void *h, const ember_chat_msg *m, size_t n, bool add_gen, uint8_t **user_mask)
{
    return ember_chat_template_render(((eng *)h)->tmpl, m, n, add_gen, user_mask);
}

static int e_tokenize(void *h, const char *text, const uint8_t *user_mask, int32_t **out,
                      ember_err *err)
{
    eng *e = h;
    size_t len = strlen(text);
    int cap = (int)len + 16;
    for (int tries = 0; tries < 2; tries++) {
        int32_t *ids = malloc((size_t)cap * sizeof *ids);
        if (!ids) return ember_seterr(err, "out of memory");
        int k = ember_tokenize_masked(e->tok, text, len, true, true, user_mask, ids, cap, err);
        if (k < 0) {
            free(ids);
            return -1;
        }
        if (k <= cap) {
            *out = ids;
            return k;
        }
        free(ids);
        cap = k;
    }
    return ember_seterr(err, "tokenization did not converge");
}

static int e_truncate(void *h, int n)
{
    eng *e = h;
    int past = ember_session_n_past(e->s);
    if (n <= 0) ember_session_reset(e->s);
    else if (n < past) ember_session_truncate(e->s, n);
    return ember_session_n_past(e->s);
}

static int e_prefill(void *h, const int32_t *t, int n, ember_cancel_fn stop, void *ud,
                     ember_err *err)
{
    eng *e = h;
    for (int i = 0; i < n; i++) ember_sampler_accept(e->smp, t[i]);
    ember_session_set_cancel(e->s, stop, ud);
    int rc = ember_prefill(e->s, t, n, e->logits, NULL, err);
    ember_session_set_cancel(e->s, NULL, NULL);
    return rc;
}

static bool e_prepare_pending(void *h) { return ember_session_pack_pending(((eng *)h)->s); }
static int e_prepare(void *h, ember_err *err) { return ember_session_pack(((eng *)h)->s, err); }
static int e_prepare_ahead(void *h, ember_err *err) { return ember_session_pack_ahead(((eng *)h)->s, err); }

static int e_decode(void *h, int32_t tok, ember_err *err)
{
    eng *e = h;
    return ember_decode(e->s, tok, e->logits, err);
}

static int32_t e_sample(void *h)
{
    eng *e = h;
    return ember_sampler_sample(e->smp, e->logits);
}

static void e_set_sampling(void *h, const ember_sampler_opts *o)
{
    eng *e = h;
    ember_sampler *n = ember_sampler_new(o, e->n_vocab);
    if (!n) return;   /* keep the old settings rather than none */
    ember_sampler_free(e->smp);
    e->smp = n;
    e->so = *o;
}

static bool e_is_eog(void *h, int32_t t)
{
    eng *e = h;
    return ember_tok_is_eog(e->tok, t) || (e->eot >= 0 && t == e->eot);
}

static bool e_set_thinking(void *h, int mode) { return ember_chat_template_set_thinking(((eng *)h)->tmpl, mode); }
static const char *e_template_name(void *h) { return ember_chat_template_name(((eng *)h)->tmpl); }
static const char *e_arch(void *h) { return ember_model_get_info(((eng *)h)->m)->arch; }
static const char *e_reply_prefix(void *h) { return ember_chat_template_opens_think(((eng *)h)->tmpl) ? "<think>\n" : NULL; }

static int e_piece(void *h, int32_t t, char *out, int cap)
{
    eng *e = h;
    if (t < 0) return ember_detok_flush(&e->dt, out, cap);
    if (e->channel) {
        const char *tt = ember_token_text(e->tok, t);
        if (ember_channel_marker(tt)) return ember_channel_step(&e->ch, tt, NULL, 0, out, cap);
        int n = ember_detok_push(&e->dt, e->tok, t, out, cap);   /* in place, as below */
        return ember_channel_step(&e->ch, NULL, out, n, out, cap);
    }
    if (!e->harmony) return ember_detok_push(&e->dt, e->tok, t, out, cap);
    const char *tt = ember_token_text(e->tok, t);
    if (ember_tok_is_control(e->tok, t) || ember_harmony_marker(tt)) return ember_harmony_step(&e->hm, tt, NULL, 0, out, cap);
    int n = ember_detok_push(&e->dt, e->tok, t, out, cap);   /* in place: the step copies at most what it reads */
    return ember_harmony_step(&e->hm, NULL, out, n, out, cap);
}

static void e_piece_reset(void *h)
{
    eng *e = h;
    ember_detok_init(&e->dt);
    ember_harmony_init(&e->hm);
    ember_channel_init(&e->ch);
}

static void e_stats(void *h, ember_stats *st) { ember_stats_get(((eng *)h)->s, st); }

static void e_turn_end(void *h) { ember_session_mark_decode_done(((eng *)h)->s); }

const ember_worker_backend ember_worker_engine_backend = {
    .name = "engine",
    .open = e_open,
    .close = e_close,
    .describe = e_describe,
    .n_ctx = e_n_ctx,
    .n_ctx_max = e_n_ctx_max,
    .recurrent = e_recurrent,
    .render = e_render,
    .tokenize = e_tokenize,
    .truncate = e_truncate,
    .prefill = e_prefill,
    .prepare_pending = e_prepare_pending,
    .prepare = e_prepare,
    .prepare_ahead = e_prepare_ahead,
    .decode = e_decode,
    .sample = e_sample,
    .set_sampling = e_set_sampling,
    .is_eog = e_is_eog,
    .piece = e_piece,
    .piece_reset = e_piece_reset,
    .stats = e_stats,
    .turn_end = e_turn_end,
    .template_name = e_template_name,
    .set_thinking = e_set_thinking,
    .arch = e_arch,
    .reply_prefix = e_reply_prefix,
};
