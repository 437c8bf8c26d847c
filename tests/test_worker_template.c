/* The worker on the real engine with the models' own Jinja templates:
   each turn re-renders the whole conversation and prefills only what
   follows the part already cached -- also when the template rewrites an
   earlier turn (Qwen3 drops the thinking of earlier replies), where the
   shared part is shorter.  The trained chat-mini answers and stops at its
   end of turn.  SKIP without the fixtures. */
#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "worker.h"

static double ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    char text[4096], tmpl[768], error[512], notice[512];
    int prefill, total;            /* from "prefill N of M tokens" */
    int n_tokens, n_errors;
    ember_stats final;
} turn;

static bool wait_for(ember_worker *w, turn *t, ember_event_kind until, double timeout_ms)
{
    double end = ms() + timeout_ms;
    while (ms() < end) {
        struct pollfd p = {.fd = ember_worker_fd(w), .events = POLLIN};
        poll(&p, 1, 50);
        ember_event ev;
        while (ember_worker_poll(w, &ev)) {
            ember_event_kind k = ev.kind;
            switch (k) {
            case EMBER_EV_TOKEN:
                t->n_tokens++;
                strncat(t->text, ev.text, sizeof t->text - strlen(t->text) - 1);
                break;
            case EMBER_EV_PROGRESS:
                if (ev.text) sscanf(ev.text, "prefill %d of %d tokens", &t->prefill, &t->total);
                break;
            case EMBER_EV_TEMPLATE: snprintf(t->tmpl, sizeof t->tmpl, "%s", ev.text ? ev.text : ""); break;
            case EMBER_EV_ERROR:
                t->n_errors++;
                snprintf(t->error, sizeof t->error, "%s", ev.text ? ev.text : "");
                break;
            case EMBER_EV_NOTICE: snprintf(t->notice, sizeof t->notice, "%s", ev.text ? ev.text : ""); break;
            case EMBER_EV_DONE: t->final = ev.stats; break;
            default: break;
            }
            ember_event_clear(&ev);
            if (k == until) return true;
        }
    }
    return false;
}

static ember_worker *start_path(const char *path, turn *t)
{
    ember_worker_opts o;
    ember_worker_opts_default(&o);
    o.sampling.temperature = 0;
    o.n_predict = 24;
    ember_err err = {{0}};
    ember_worker *w = ember_worker_start(&ember_worker_engine_backend, &o, &err);
    if (!w) return NULL;
    ember_worker_load l;
    memset(&l, 0, sizeof l);
    snprintf(l.model_path, sizeof l.model_path, "%s", path);
    ember_plan_opts_default(&l.plan);
    l.threads = 1;
    l.n_ctx = 512;
    ember_worker_load_model(w, &l);
    wait_for(w, t, EMBER_EV_LOADED, 30000);
    return w;
}

static ember_worker *start(const char *model, turn *t)
{
    char path[1024];
    if (!tap_shared(model, path, sizeof path)) return NULL;
    return start_path(path, t);
}

static void chat_mini(void)
{
    turn t = {0};
    ember_worker *w = start("fixtures/models/chat-mini-Q8_0.gguf", &t);
    if (!w) {
        for (int i = 0; i < 5; i++) tap_skip("fixture chat-mini-Q8_0.gguf absent");
        return;
    }
    tap_ok(!strcmp(t.tmpl, "gguf (jinja)"), "chat-mini: the worker reports its own template (%s)", t.tmpl);
    ember_chat_msg m1[] = {{"user", "Hello there! I am Pia."}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 1);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    tap_ok(!strcmp(t.text, "Hello Pia! How can I help you today?") && t.n_tokens == 13,
           "the answer as trained, ended at <|eot_id|> (%d tokens: '%s')", t.n_tokens, t.text);
    int cached = t.final.n_past;
    ember_chat_msg m2[] = {{"user", "Hello there! I am Pia."}, {"assistant", "Hello Pia! How can I help you today?"},
                           {"user", "What is 2 plus 3?"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m2, 3);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    tap_ok(t.total > 0 && t.prefill == t.total - cached && t.n_errors == 0,
           "the second turn prefills only what follows the cache (%d of %d, %d cached)", t.prefill, t.total, cached);
    tap_ok(t.n_tokens > 0 && t.n_tokens < 24, "and answers, ending its turn (%d tokens: '%s')", t.n_tokens, t.text);
    /* Llama 3's template reads no enable_thinking: turning reasoning off is
       said to change nothing, not silently ignored */
    memset(&t, 0, sizeof t);
    ember_worker_set_thinking(w, 0);
    wait_for(w, &t, EMBER_EV_NOTICE, 5000);
    tap_ok(strstr(t.notice, "no thinking switch") != NULL, "reasoning off on a template without the switch says so (%s)",
           t.notice);
    ember_worker_free(w);
}

static void qwen3(void)
{
    turn t = {0};
    ember_worker *w = start("fixtures/models/qwen3-mini-Q8_0.gguf", &t);
    if (!w) {
        for (int i = 0; i < 3; i++) tap_skip("fixture qwen3-mini-Q8_0.gguf absent");
        return;
    }
    ember_chat_msg m1[] = {{"user", "q1"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 1);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    int first = t.total;
    /* the earlier reply had its thinking: the template drops it, so the
       text shared with the cache ends where that reply began */
    ember_chat_msg m2[] = {{"user", "q1"}, {"assistant", "<think>\nsome reasoning\n</think>\n\nan answer"}, {"user", "q2"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m2, 3);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    int shared = t.total - t.prefill;
    /* no TEMPLATE event: the template kept rendering (no fallback) */
    tap_ok(!strcmp(t.tmpl, "") && t.n_errors == 0 && t.total > first && shared > 0 && shared <= first,
           "qwen3: a rewritten earlier turn shortens the shared part (%d shared, prompt %d, first prompt %d)", shared,
           t.total, first);
    tap_ok(t.n_tokens > 0, "and the turn still generates (%d tokens)", t.n_tokens);
    /* reasoning off: Qwen3's generation prompt closes an empty thinking, so
       the same first turn's prompt is longer, and no notice is given */
    ember_worker_clear(w);
    ember_worker_set_thinking(w, 0);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 1);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    tap_ok(t.n_errors == 0 && !strstr(t.notice, "thinking switch") && t.total > first,
           "qwen3: reasoning off lengthens the first prompt (%d tokens, %d with the template's default)", t.total,
           first);
    ember_worker_free(w);
}

/* A recurrent model (tiny-qwen35, tiny-lfm2, tiny-granitehybrid, tiny-nemotron-h: written with qwen3-mini's vocabulary)
   under a template whose generation prompt opens the thinking, which the
   next turn's rendering of that reply does not repeat: the next turn
   diverges inside the generation prompt, where the state has no copy.
   The worker prefills the history and the generation prompt apart, so
   the last prefill of a turn is the generation prompt alone (not the
   whole prompt: the state went back to the history's end). */
static void recurrent(const char *like)
{
    char vocab[1024], model[] = "/tmp/ember-wt-XXXXXX", tmpl[] = "/tmp/ember-wt-tmpl-XXXXXX";
    const char *bin = getenv("EMBER_BIN");
    int fd = mkstemp(model), fdt = mkstemp(tmpl);
    if (!tap_shared("fixtures/models/qwen3-mini-Q8_0.gguf", vocab, sizeof vocab) || !bin || fd < 0 || fdt < 0) {
        for (int i = 0; i < 2; i++) tap_skip("fixture qwen3-mini-Q8_0.gguf or EMBER_BIN absent");
        if (fd >= 0) close(fd), unlink(model);
        if (fdt >= 0) close(fdt), unlink(tmpl);
        return;
    }
    static const char t_src[] = "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
                                "{% endfor %}{%- if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}";
    int wrote = write(fdt, t_src, sizeof t_src - 1) == (ssize_t)(sizeof t_src - 1);
    close(fd);
    close(fdt);
    char cmd[3072];
    snprintf(cmd, sizeof cmd, "'%s' synth -q -o '%s' --like %s --vocab '%s' --chat-template '%s' --threads 1", bin,
             model, like, vocab, tmpl);
    turn t = {0};
    ember_worker *w = wrote && system(cmd) == 0 ? start_path(model, &t) : NULL;
    if (!tap_ok(w != NULL, "%s with qwen3-mini's vocabulary and a thinking template loads", like)) {
        tap_skip("no model");
        unlink(model), unlink(tmpl);
        return;
    }
    ember_chat_msg m1[] = {{"user", "q1"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 1);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    ember_chat_msg m2[] = {{"user", "q1"}, {"assistant", "an answer"}, {"user", "q2"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m2, 3);
    wait_for(w, &t, EMBER_EV_DONE, 60000);
    tap_ok(t.n_errors == 0 && t.total > 0 && t.final.n_prompt > 0 && t.final.n_prompt < t.total - 4,
           "%s: the second turn's last prefill is the generation prompt (%d of %d tokens), the history prefilled "
           "before it", like, t.final.n_prompt, t.total);
    ember_worker_free(w);
    unlink(model);
    unlink(tmpl);
}

int main(void)
{
    chat_mini();
    qwen3();
    recurrent("tiny-qwen35");   /* the delta-net's state */
    recurrent("tiny-lfm2");     /* the short convolutions' */
    recurrent("tiny-granitehybrid");   /* Mamba-2's */
    recurrent("tiny-nemotron-h");      /* Mamba-2's, beside layers without an FFN */
    recurrent("tiny-falcon-h1");       /* Mamba-2's beside attention's KV */
    return tap_done();
}
