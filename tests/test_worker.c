/* The engine thread on the fake engine: command order, events, cancel
   within a token, KV reuse across turns, context dropping, failed reloads
   and quit. */
#include "config.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"
#include "worker.h"

static double ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
    char text[8192];
    int n_tokens, n_stats, n_errors, n_notice, n_loaded, dropped;
    bool done, cancelled;
    int done_n;
    char progress[8][128];         /* PROGRESS texts in order */
    int n_progress;
    bool saw_packed;               /* a PHASE event for "packed" */
    ember_stats final;
    char error[1024], loaded[256], plan[512], notice[256];
    uint64_t done_seq;
} turn;

/* Collects events until a DONE (or LOADED/ERROR when want_load) arrives or
   the time runs out. */
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
            case EMBER_EV_STATS: t->n_stats++; break;
            case EMBER_EV_ERROR:
                t->n_errors++;
                snprintf(t->error, sizeof t->error, "%s", ev.text);
                break;
            case EMBER_EV_NOTICE:
                t->n_notice++;
                snprintf(t->notice, sizeof t->notice, "%s", ev.text);
                break;
            case EMBER_EV_PROGRESS:
                if (t->n_progress < 8) snprintf(t->progress[t->n_progress++], sizeof t->progress[0], "%s", ev.text);
                break;
            case EMBER_EV_PHASE:
                if (ev.i == EMBER_PHASE_PACKED) t->saw_packed = true;
                break;
            case EMBER_EV_DROPPED: t->dropped = ev.i; break;
            case EMBER_EV_LOADED:
                t->n_loaded++;
                snprintf(t->loaded, sizeof t->loaded, "%s", ev.text);
                snprintf(t->plan, sizeof t->plan, "%s", ev.text2);
                break;
            case EMBER_EV_DONE:
                t->done = true;
                t->cancelled = ev.cancelled;
                t->done_n = ev.i;
                t->final = ev.stats;
                t->done_seq = ev.seq;
                break;
            default: break;
            }
            ember_event_clear(&ev);
            if (k == until) return true;
        }
    }
    return false;
}

static void load_opts(ember_worker_load *l, const char *profile, int n_ctx)
{
    memset(l, 0, sizeof *l);
    snprintf(l->model_path, sizeof l->model_path, "fake.gguf");
    snprintf(l->profile, sizeof l->profile, "%s", profile);
    l->plan.strategy = EMBER_STRATEGY_COMPRESSED;
    l->n_ctx = n_ctx;
}

int main(void)
{
    ember_err err = {{0}};
    bool ok;
    tap_ok(ember_worker_common_prefix((const int32_t[]){1, 2, 3}, 3, (const int32_t[]){1, 2, 4}, 3) == 2,
           "common prefix stops at the first difference");
    tap_ok(ember_worker_common_prefix((const int32_t[]){1, 2}, 2, (const int32_t[]){1, 2, 4}, 3) == 2,
           "common prefix bounded by the shorter sequence");

    ember_worker_fake_config(0, 0);
    ember_worker_opts o;
    ember_worker_opts_default(&o);
    ember_worker *w = ember_worker_start(&ember_worker_fake_backend, &o, &err);
    if (!tap_ok(w != NULL, "worker starts")) return tap_done();

    /* generate before load: an error, and the turn still ends */
    ember_chat_msg m1[] = {{"system", "be brief"}, {"user", "hello"}};
    turn t = {0};
    ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && t.n_errors == 1 && strstr(t.error, "no model"),
           "generating without a model reports an error and ends the turn (%s)", t.error);

    ember_worker_load l;
    load_opts(&l, "first", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    ok = wait_for(w, &t, EMBER_EV_LOADED, 2000);
    tap_ok(ok && !strcmp(t.loaded, "fake-echo") &&
           strstr(t.plan, "compressed"), "load reports the model and plan (%s / %s)", t.loaded, t.plan);

    /* queue order: two turns queued back to back answer in order */
    memset(&t, 0, sizeof t);
    uint64_t s1 = ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && t.done_seq == s1 && !t.cancelled,
           "first turn completes");
    tap_ok(!strcmp(t.text, "You said: hello"), "streamed text is the reply ('%s')", t.text);
    tap_ok(t.n_tokens == (int)strlen("You said: hello") && t.done_n == t.n_tokens,
           "one token event per token (%d) and DONE counts them (%d)", t.n_tokens, t.done_n);
    int first_prompt = t.final.n_prompt;

    /* second turn: only the new suffix is prefilled */
    ember_chat_msg m2[] = {{"system", "be brief"}, {"user", "hello"},
                           {"assistant", "You said: hello"}, {"user", "again"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m2, 4);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You said: again"),
           "second turn replies to the new message");
    /* cached: "...<assistant>You said: hello"; new: "\n<user>again\n<assistant>" */
    int want = (int)strlen("\n<user>again\n<assistant>");
    tap_ok(t.final.n_prompt == want, "KV cache kept: second prefill %d tokens (want %d, first %d)",
           t.final.n_prompt, want, first_prompt);

    /* cancel mid-generation, within one token */
    ember_worker_fake_config(20, 400);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 2);
    double t0 = ms();
    while (t.n_tokens < 3 && ms() - t0 < 3000) wait_for(w, &t, EMBER_EV_TOKEN, 100);
    ember_worker_cancel(w);
    double tc = ms();
    int at_cancel = t.n_tokens;
    ok = wait_for(w, &t, EMBER_EV_DONE, 3000);
    double took = ms() - tc;
    tap_ok(ok && t.cancelled, "cancel ends the turn marked cancelled");
    tap_ok(t.n_tokens <= at_cancel + 2 && took < 500,
           "cancel takes effect within one token (%d -> %d tokens, %.0f ms)", at_cancel,
           t.n_tokens, took);

    /* cancel during a long prefill: stops between micro-batches, no
       token is produced, and the next turn still works from the cache */
    {
        char longmsg[151];
        memset(longmsg, 'x', 150);
        longmsg[150] = 0;
        ember_chat_msg ml[] = {{"system", "be brief"}, {"user", longmsg}};
        ember_worker_fake_config(0, 0);
        ember_worker_fake_prefill_delay(20);   /* ~3.5 s of prefill */
        memset(&t, 0, sizeof t);
        ember_worker_generate(w, ml, 2);
        wait_for(w, &t, EMBER_EV_PROGRESS, 1000);   /* "prefill N of M tokens" */
        double tp = ms();
        while (ms() - tp < 150) wait_for(w, &t, EMBER_EV_TOKEN, 20);
        ember_worker_cancel(w);
        double tc2 = ms();
        ok = wait_for(w, &t, EMBER_EV_DONE, 5000);
        double took2 = ms() - tc2;
        tap_ok(ok && t.cancelled && t.n_tokens == 0 && took2 < 500,
               "cancel stops a long prefill within a micro-batch (%.0f ms, %d tokens, done %d, error '%s')",
               took2, t.n_tokens, t.done, t.error);
        ember_worker_fake_prefill_delay(0);
        memset(&t, 0, sizeof t);
        ember_worker_generate(w, m1, 2);
        ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
        tap_ok(ok && !t.cancelled && !strcmp(t.text, "You said: hello"),
               "the turn after a cancelled prefill answers normally");
    }

    /* cancel also drops generations queued before it, not those after: A
       runs (slowly), B waits behind it, cancel, then C */
    ember_worker_fake_config(20, 400);
    uint64_t sa = ember_worker_generate(w, m1, 2);
    memset(&t, 0, sizeof t);
    wait_for(w, &t, EMBER_EV_TOKEN, 2000);      /* A is running */
    uint64_t sb = ember_worker_generate(w, m1, 2);
    ember_worker_cancel(w);
    ember_worker_fake_config(0, 0);
    uint64_t sc = ember_worker_generate(w, m1, 2);
    bool a_cancelled = false, b_cancelled = false, c_ok = false;
    int b_tokens = 0;
    char c_text[256] = "";
    double end = ms() + 5000;
    while (ms() < end && !c_ok) {
        struct pollfd p = {.fd = ember_worker_fd(w), .events = POLLIN};
        poll(&p, 1, 50);
        ember_event ev;
        while (ember_worker_poll(w, &ev)) {
            if (ev.kind == EMBER_EV_TOKEN && ev.seq == sb) b_tokens++;
            if (ev.kind == EMBER_EV_TOKEN && ev.seq == sc)
                strncat(c_text, ev.text, sizeof c_text - strlen(c_text) - 1);
            if (ev.kind == EMBER_EV_DONE && ev.seq == sa) a_cancelled = ev.cancelled;
            if (ev.kind == EMBER_EV_DONE && ev.seq == sb) b_cancelled = ev.cancelled;
            if (ev.kind == EMBER_EV_DONE && ev.seq == sc) c_ok = !ev.cancelled;
            ember_event_clear(&ev);
        }
    }
    tap_ok(a_cancelled, "running turn before cancel is stopped");
    tap_ok(b_cancelled && b_tokens == 0, "queued turn before cancel is skipped (%d tokens)", b_tokens);
    tap_ok(c_ok && !strcmp(c_text, "You said: hello"), "turn queued after cancel runs ('%s')", c_text);

    /* context full: oldest messages dropped, system kept, with a notice */
    ember_worker_clear(w);
    load_opts(&l, "small", 200);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    wait_for(w, &t, EMBER_EV_LOADED, 2000);
    char big[80];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    ember_chat_msg m3[] = {{"system", "sys"}, {"user", big}, {"assistant", big},
                           {"user", big}, {"assistant", big}, {"user", "last"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m3, 6);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && t.n_notice >= 1 && t.dropped >= 2 &&
           t.dropped % 2 == 0 && !strcmp(t.text, "You said: last"),
           "context full drops whole turns with a notice (dropped %d)", t.dropped);

    /* a conversation that fits after one that did not drops nothing, and
       says nothing (it said "dropped the 0 oldest messages") */
    ember_chat_msg mcut[] = {{"user", "cut"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, mcut, 1);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You said: cut") && t.n_notice == 0,
           "a conversation that fits after a full one: no notice (%d: %s)", t.n_notice, t.notice);

    /* a reply cut at n_predict says so (it looked finished); one that
       ends by itself within the limit says nothing */
    ember_sampler_opts so;   /* the fake engine does not sample (and worker_tsan.sh builds no sampler) */
    memset(&so, 0, sizeof so);
    ember_worker_set_sampling(w, &so, 4);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, mcut, 1);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You ") && t.n_notice == 1 && strstr(t.notice, "limit of 4 tokens"),
           "a reply cut at n_predict says so (%s: %d notices, the last: %s)", t.text, t.n_notice, t.notice);
    ember_worker_set_sampling(w, &so, 64);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, mcut, 1);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You said: cut") && t.n_notice == 0, "one that ends within it says nothing");
    ember_worker_set_sampling(w, &so, -1);

    /* a profile that cannot load leaves the old one running */
    load_opts(&l, "broken", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    wait_for(w, &t, EMBER_EV_ERROR, 2000);
    tap_ok(t.n_errors == 1 && strstr(t.error, "still running small") && strstr(t.error, "refuses"),
           "failed reload reports why and keeps the old model (%s)", t.error);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You said: hello"),
           "old model still answers");

    /* a successful switch keeps the conversation: re-prefilled at load */
    load_opts(&l, "second", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    wait_for(w, &t, EMBER_EV_LOADED, 2000);
    int after_load = t.n_stats;
    wait_for(w, &t, EMBER_EV_STATS, 2000);
    wait_for(w, &t, EMBER_EV_STATS, 2000);
    tap_ok(t.n_stats >= after_load + 2 && t.n_errors == 0, "switch re-prefills the conversation");
    memset(&t, 0, sizeof t);
    ember_chat_msg m4[] = {{"system", "be brief"}, {"user", "hello"},
                           {"assistant", "You said: hello"}, {"user", "more"}};
    ember_worker_generate(w, m4, 4);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && t.final.n_prompt == (int)strlen("<user>more\n<assistant>"),
           "after a switch only the new message is prefilled (%d tokens)", t.final.n_prompt);

    /* packing before the first prefill is its own step, announced as such:
       after a load with no conversation it runs at once, while the user
       types, and the first turn then has nothing to pack */
    ember_worker_clear(w);                      /* no conversation to re-prefill at load */
    ember_worker_fake_prepare(150);
    load_opts(&l, "packs", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    while (wait_for(w, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}  /* load ends on "" */
    ember_worker_fake_prepare(0);
    int ip = -1, ipf = -1;
    for (int i = 0; i < t.n_progress; i++)
        if (ip < 0 && strstr(t.progress[i], "packing the weights (once, while you type)")) ip = i;
    tap_ok(ip > 0 && t.saw_packed && t.n_errors == 0,
           "a load with no conversation packs right away, announced as packing (progress %d), and reports the phase", ip);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 3000);
    ip = -1;
    for (int i = 0; i < t.n_progress; i++) {
        if (ip < 0 && strstr(t.progress[i], "packing the weights")) ip = i;
        if (ipf < 0 && strstr(t.progress[i], "prefill ")) ipf = i;
    }
    tap_ok(ok && ip < 0 && ipf == 0 && t.n_errors == 0 && t.final.ttft_ms < 100,
           "the first turn then starts with its prefill (progress %d), nothing to pack (%d), TTFT %.0f ms",
           ipf, ip, t.final.ttft_ms);
    /* a message sent while that packing runs waits for it, and its TTFT says so */
    ember_worker_clear(w);
    ember_worker_fake_prepare(300);
    load_opts(&l, "packs-queued", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 3000);
    ember_worker_fake_prepare(0);
    tap_ok(ok && t.saw_packed && t.final.ttft_ms >= 250 && t.n_errors == 0,
           "a message sent during the packing counts the wait in its TTFT (%.0f ms, packing 300)", t.final.ttft_ms);
    /* with a conversation kept across a switch, the load's re-prefill packs first */
    ember_worker_fake_prepare(150);
    load_opts(&l, "packs-again", 256);
    memset(&t, 0, sizeof t);
    ember_worker_load_model(w, &l);
    while (wait_for(w, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}
    ember_worker_fake_prepare(0);
    ip = ipf = -1;
    for (int i = 0; i < t.n_progress; i++) {
        if (ip < 0 && strstr(t.progress[i], "packing the weights")) ip = i;
        if (ipf < 0 && strstr(t.progress[i], "re-prefilling")) ipf = i;
    }
    tap_ok(ip >= 0 && ipf > ip && t.saw_packed, "a switch packs before re-prefilling (progress %d, re-prefill %d)",
           ip, ipf);
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, m1, 2);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    ip = -1;
    for (int i = 0; i < t.n_progress; i++)
        if (strstr(t.progress[i], "packing the weights")) ip = i;
    tap_ok(ok && ip < 0 && t.n_progress >= 1, "the next turn packs nothing (%d progress events)", t.n_progress);

    /* a reopened conversation: set, prefilled at once, then only the new
       message is prefilled (the reply is to it, not to an older one) */
    ember_chat_msg old[] = {{"system", "be brief"}, {"user", "saved question"},
                            {"assistant", "saved answer"}};
    memset(&t, 0, sizeof t);
    ember_worker_set_conversation(w, old, 3);
    while (wait_for(w, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}
    ipf = -1;
    for (int i = 0; i < t.n_progress; i++)
        if (strstr(t.progress[i], "re-prefilling")) ipf = i;
    tap_ok(ipf >= 0 && t.n_errors == 0, "setting a conversation re-prefills it (progress %d, error '%s')",
           ipf, t.error);
    ember_chat_msg cont[] = {{"system", "be brief"}, {"user", "saved question"},
                             {"assistant", "saved answer"}, {"user", "next"}};
    memset(&t, 0, sizeof t);
    ember_worker_generate(w, cont, 4);
    ok = wait_for(w, &t, EMBER_EV_DONE, 2000);
    tap_ok(ok && !strcmp(t.text, "You said: next") &&
           t.final.n_prompt == (int)strlen("<user>next\n<assistant>"),
           "the turn after it prefills only the new message (%d tokens, '%s')", t.final.n_prompt, t.text);
    /* before any load the conversation waits for the model */
    {
        ember_worker *w2 = ember_worker_start(&ember_worker_fake_backend, &o, &err);
        memset(&t, 0, sizeof t);
        ember_worker_set_conversation(w2, old, 3);
        load_opts(&l, "later", 256);
        ember_worker_load_model(w2, &l);
        while (wait_for(w2, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}
        memset(&t, 0, sizeof t);
        ember_worker_generate(w2, cont, 4);
        ok = wait_for(w2, &t, EMBER_EV_DONE, 2000);
        tap_ok(ok && t.final.n_prompt == (int)strlen("<user>next\n<assistant>"),
               "a conversation set before the load is prefilled by it (%d tokens)", t.final.n_prompt);
        ember_worker_free(w2);
    }
    /* a reopened conversation longer than the context: the oldest turns
       are dropped, and the front end is told which */
    {
        ember_worker *w3 = ember_worker_start(&ember_worker_fake_backend, &o, &err);
        load_opts(&l, "small", 128);
        memset(&t, 0, sizeof t);
        ember_worker_load_model(w3, &l);
        while (wait_for(w3, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}  /* load ends on "" */
        ember_chat_msg longc[] = {{"user", "an old question that takes room"},
                                  {"assistant", "an old answer that takes room too"},
                                  {"user", "a newer question"}, {"assistant", "a newer answer"}};
        memset(&t, 0, sizeof t);
        ember_worker_set_conversation(w3, longc, 4);
        while (wait_for(w3, &t, EMBER_EV_PROGRESS, 2000) && t.progress[t.n_progress - 1][0]) {}
        tap_ok(t.dropped == 2 && t.n_notice == 1 && t.n_errors == 0,
               "a reopened conversation too long for the context drops its oldest turn (%d dropped, %d notices)",
               t.dropped, t.n_notice);
        ember_worker_free(w3);
    }

    /* quit while generating returns promptly */
    ember_worker_fake_config(50, 1000);
    ember_worker_generate(w, m1, 2);
    double tq = ms();
    ember_worker_free(w);
    tap_ok(ms() - tq < 1000, "quit during a generation returns in %.0f ms", ms() - tq);
    return tap_done();
}
