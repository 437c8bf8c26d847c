/* A stand-in engine for the worker: byte tokens, a scripted reply, a KV
   cache that only counts.  Lets the worker's queue, cancel and context
   logic (and the UI, with EMBER_FAKE_ENGINE=1) run without a model. */
#include "config.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "worker.h"

enum { FAKE_BOS = 1, FAKE_EOS = 2, FAKE_BASE = 3 };

static _Atomic int fake_delay_ms, fake_reply_tokens, fake_prefill_ms, fake_prepare_ms;
/* set before a worker starts (chat's EMBER_FAKE_REPLY), read by it after */
static char fake_script[4096];
static _Atomic bool fake_scripted;

void ember_worker_fake_script(const char *text)
{
    atomic_store(&fake_scripted, false);
    if (!text) return;
    snprintf(fake_script, sizeof fake_script, "%s", text);
    atomic_store(&fake_scripted, true);
}

void ember_worker_fake_prepare(int ms)
{
    atomic_store(&fake_prepare_ms, ms);
}

void ember_worker_fake_prefill_delay(int ms_per_token)
{
    atomic_store(&fake_prefill_ms, ms_per_token);
}

static void sleep_ms(int d)
{
    if (d <= 0) return;
    struct timespec ts = {d / 1000, (long)(d % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

void ember_worker_fake_config(int delay_ms, int reply_tokens)
{
    atomic_store(&fake_delay_ms, delay_ms);
    atomic_store(&fake_reply_tokens, reply_tokens);
}

typedef struct fake {
    ember_worker_load load;
    int n_ctx, n_past;
    char reply[4096];
    size_t reply_len, reply_pos;
    int n_prompt, n_decoded;
    double t_prefill, t_decode, ttft;
    unsigned char pend[8];
    int n_pend;
    int prepare_ms;                /* pending one-off preparation, 0 = none */
    ember_stats st;
} fake;

static void *f_open(const ember_worker_load *l, ember_err *err)
{
    if (strstr(l->profile, "broken") || strstr(l->model_path, "missing")) {
        ember_seterr(err, "%s: cannot open (fake engine refuses it)", l->model_path);
        return NULL;
    }
    fake *f = calloc(1, sizeof *f);
    if (!f) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    f->load = *l;
    f->n_ctx = l->n_ctx > 0 ? l->n_ctx : 512;
    f->st.strategy = l->plan.strategy;
    f->prepare_ms = atomic_load(&fake_prepare_ms);
    f->st.phase_seen[EMBER_PHASE_OPENED] = true;
    ember_memstat_read(&f->st.phase_mem[EMBER_PHASE_OPENED]);
    return f;
}

static void f_close(void *h) { free(h); }

static void f_describe(void *h, char *name, size_t nc, char *plan, size_t pc)
{
    fake *f = h;
    snprintf(name, nc, "fake-echo");
    static const char *const sn[] = {"eager", "compressed", "packed"};
    unsigned s = (unsigned)f->load.plan.strategy;
    snprintf(plan, pc, "%s (fake engine)", s < 3 ? sn[s] : "?");
}

/* No model file: the fake's "template" is its own byte format. */
static const char *f_template_name(void *h) { (void)h; return "fake (echo)"; }
static const char *f_arch(void *h) { (void)h; return "fake"; }

static int f_n_ctx(void *h) { return ((fake *)h)->n_ctx; }

static bool f_prepare_pending(void *h) { return ((fake *)h)->prepare_ms > 0; }

static int f_prepare(void *h, ember_err *err)
{
    fake *f = h;
    (void)err;
    sleep_ms(f->prepare_ms);
    f->prepare_ms = 0;
    f->st.phase_seen[EMBER_PHASE_PACKED] = true;
    ember_memstat_read(&f->st.phase_mem[EMBER_PHASE_PACKED]);
    return 0;
}

static char *f_render(void *h, const ember_chat_msg *m, size_t n, bool add_gen, uint8_t **user_mask)
{
    fake *f = h;
    if (user_mask) *user_mask = NULL;   /* bytes map to ids one to one: no control tokens */
    size_t len = 32;
    for (size_t i = 0; i < n; i++) len += strlen(m[i].role) + strlen(m[i].content) + 8;
    char *s = malloc(len), *p = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i++) p += sprintf(p, "<%s>%s\n", m[i].role, m[i].content);
    if (add_gen) {
        p += sprintf(p, "<assistant>");
        const char *last = "";
        for (size_t i = 0; i < n; i++)
            if (!strcmp(m[i].role, "user")) last = m[i].content;
        int want = atomic_load(&fake_reply_tokens);
        if (atomic_load(&fake_scripted)) {
            f->reply_len = (size_t)snprintf(f->reply, sizeof f->reply, "%s", fake_script);
            if (f->reply_len >= sizeof f->reply) f->reply_len = sizeof f->reply - 1;
        } else if (want > 0) {
            size_t k = 0;
            static const char words[] = "lorem ipsum dolor sit amet ";
            while (k < (size_t)want && k + 1 < sizeof f->reply) {
                f->reply[k] = words[k % (sizeof words - 1)];
                k++;
            }
            f->reply_len = k;
        } else {
            f->reply_len = (size_t)snprintf(f->reply, sizeof f->reply, "You said: %s", last);
            if (f->reply_len >= sizeof f->reply) f->reply_len = sizeof f->reply - 1;
        }
        f->reply_pos = 0;
    }
    *p = 0;
    return s;
}

static int f_tokenize(void *h, const char *text, const uint8_t *user_mask, int32_t **out,
                      ember_err *err)
{
    size_t n = strlen(text);
    int32_t *t = malloc((n + 1) * sizeof *t);
    if (!t) return ember_seterr(err, "out of memory");
    t[0] = FAKE_BOS;
    for (size_t i = 0; i < n; i++) t[i + 1] = FAKE_BASE + (unsigned char)text[i];
    *out = t;
    return (int)n + 1;
}

static int f_truncate(void *h, int n)
{
    fake *f = h;
    if (n < f->n_past) f->n_past = n < 0 ? 0 : n;
    return f->n_past;
}

static int f_prefill(void *h, const int32_t *t, int n, ember_cancel_fn stop, void *ud,
                     ember_err *err)
{
    fake *f = h;
    (void)t;
    if (f->n_past + n > f->n_ctx)
        return ember_seterr(err, "prefill of %d tokens overflows the context (%d of %d used)",
                            n, f->n_past, f->n_ctx);
    double t0 = ember_now_ms();
    int d = atomic_load(&fake_prefill_ms);
    for (int i = 0; d > 0 && i < n; i++) {
        /* asked between "micro-batches" of 8 tokens, as the engine does every 64 */
        if (i > 0 && i % 8 == 0 && stop && stop(ud)) {
            f->n_past += i;
            ember_seterr(err, "prefill cancelled");
            return EMBER_CANCELLED;
        }
        sleep_ms(d);
    }
    f->n_past += n;
    f->n_prompt = n;
    f->n_decoded = 0;
    f->t_decode = 0;
    f->t_prefill = ember_now_ms() - t0;
    f->ttft = f->t_prefill;
    f->st.phase_seen[EMBER_PHASE_PREFILL_DONE] = true;
    ember_memstat_read(&f->st.phase_mem[EMBER_PHASE_PREFILL_DONE]);
    return 0;
}

static int f_decode(void *h, int32_t tok, ember_err *err)
{
    fake *f = h;
    (void)tok;
    if (f->n_past >= f->n_ctx) return ember_seterr(err, "context full (%d)", f->n_ctx);
    double t0 = ember_now_ms();
    sleep_ms(atomic_load(&fake_delay_ms));
    f->n_past++;
    f->n_decoded++;
    f->t_decode += ember_now_ms() - t0;
    return 0;
}

static int32_t f_sample(void *h)
{
    fake *f = h;
    if (f->reply_pos >= f->reply_len) return FAKE_EOS;
    return FAKE_BASE + (unsigned char)f->reply[f->reply_pos++];
}

static void f_set_sampling(void *h, const ember_sampler_opts *o) { (void)h; (void)o; }

static bool f_is_eog(void *h, int32_t t) { (void)h; return t == FAKE_EOS; }

static void f_piece_reset(void *h) { ((fake *)h)->n_pend = 0; }

/* Emits whole UTF-8 characters only, like the real detokenizer. */
static int f_piece(void *h, int32_t tok, char *out, int cap)
{
    fake *f = h;
    if (tok < 0) {
        int n = f->n_pend && cap > 3 ? 3 : 0;
        if (n) memcpy(out, "\xef\xbf\xbd", 3);
        f->n_pend = 0;
        if (cap > 0) out[n] = 0;
        return n;
    }
    if (tok < FAKE_BASE || f->n_pend >= (int)sizeof f->pend) return 0;
    f->pend[f->n_pend++] = (unsigned char)(tok - FAKE_BASE);
    unsigned char c = f->pend[0];
    int need = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (f->n_pend < need || f->n_pend + 1 > cap) return 0;
    int n = f->n_pend;
    memcpy(out, f->pend, (size_t)n);
    out[n] = 0;
    f->n_pend = 0;
    return n;
}

static void f_stats(void *h, ember_stats *st)
{
    fake *f = h;
    *st = f->st;
    st->n_ctx = f->n_ctx;
    st->n_past = f->n_past;
    st->n_prompt = f->n_prompt;
    st->n_decoded = f->n_decoded;
    st->prefill_ms = f->t_prefill;
    st->decode_ms = f->t_decode;
    st->ttft_ms = f->ttft;
    st->decode_tps = f->t_decode > 0 ? f->n_decoded * 1e3 / f->t_decode : 0;
    st->prefill_tps = f->t_prefill > 0 ? f->n_prompt * 1e3 / f->t_prefill : 0;
    ember_memstat_read(&st->mem);
}

const ember_worker_backend ember_worker_fake_backend = {
    .name = "fake",
    .open = f_open,
    .close = f_close,
    .describe = f_describe,
    .n_ctx = f_n_ctx,
    .render = f_render,
    .tokenize = f_tokenize,
    .truncate = f_truncate,
    .prefill = f_prefill,
    .decode = f_decode,
    .sample = f_sample,
    .set_sampling = f_set_sampling,
    .is_eog = f_is_eog,
    .piece = f_piece,
    .piece_reset = f_piece_reset,
    .stats = f_stats,
    .prepare_pending = f_prepare_pending,
    .prepare = f_prepare,
    .prepare_ahead = f_prepare,
    .template_name = f_template_name,
    .arch = f_arch,
};
