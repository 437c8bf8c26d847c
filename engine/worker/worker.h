/* The engine thread: owns the model and session, takes commands from a
   queue and reports events (token text, live stats, phases, errors) that a
   front end polls through a pipe together with its own input.

   The engine behind it is a backend table so that the queue, cancel and
   conversation logic can be tested without a model (worker_fake.c) and the
   real engine (worker_engine.c) plugs in unchanged. */
#ifndef EMBER_WORKER_H
#define EMBER_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/chat.h"
#include "ember.h"
#include "sys/err.h"
#include "text/sampler.h"

/* What to load: a model under a plan (the profile already resolved). */
typedef struct ember_worker_load {
    char model_path[1024];
    char profile[128];             /* label only ("" when none) */
    ember_plan_opts plan;
    int n_ctx;                     /* 0 = engine default */
    int threads;                   /* 0 = plan / auto */
} ember_worker_load;

/* ---- backend: the engine as the worker sees it ------------------------- */

typedef struct ember_worker_backend {
    const char *name;
    /* Opens model + session; returns a handle or NULL with err set. */
    void *(*open)(const ember_worker_load *l, ember_err *err);
    void (*close)(void *h);
    /* Display name and a one-line plan summary ("packed 6/7 proj ..."). */
    void (*describe)(void *h, char *name, size_t name_cap, char *plan, size_t plan_cap);
    int (*n_ctx)(void *h);
    /* The largest context the model allows (its trained length); NULL when
       there is no such limit. */
    int (*n_ctx_max)(void *h);
    /* The conversation rendered by the model's template, malloc'd; with
       add_gen the assistant header follows.  *user_mask (malloc'd, or
       NULL) marks the bytes that came from message contents. */
    char *(*render)(void *h, const ember_chat_msg *msgs, size_t n, bool add_gen,
                    uint8_t **user_mask);
    /* Token ids of text (BOS added as the model wants); count or -1.
       Control tokens are made only of bytes user_mask leaves unmarked. */
    int (*tokenize)(void *h, const char *text, const uint8_t *user_mask, int32_t **out,
                    ember_err *err);
    /* Drops cached positions >= n; returns how many it kept, which is
       fewer than n when the cache cannot go back there (a sliding-window
       ring that has overwritten what the next token needs). */
    int (*truncate)(void *h, int n);
    /* Returns EMBER_CANCELLED when stop(ud) said so part way (the cache
       then holds an unknown prefix: the worker truncates it). */
    int (*prefill)(void *h, const int32_t *toks, int n, ember_cancel_fn stop, void *ud,
                   ember_err *err);
    int (*decode)(void *h, int32_t tok, ember_err *err);
    /* Picks the next token from the last logits. */
    int32_t (*sample)(void *h);
    void (*set_sampling)(void *h, const ember_sampler_opts *o);
    bool (*is_eog)(void *h, int32_t tok);
    /* Printable text of tok, streaming-safe (whole UTF-8 characters). */
    int (*piece)(void *h, int32_t tok, char *out, int cap);
    void (*piece_reset)(void *h);
    void (*stats)(void *h, ember_stats *st);
    /* Optional: a generation ended (decode-done memory snapshot). */
    void (*turn_end)(void *h);
    /* Optional: one-off work the next prefill would start with (packing the
       weights); the worker runs it first, under its own progress message. */
    bool (*prepare_pending)(void *h);
    int (*prepare)(void *h, ember_err *err);
    /* Optional: the same work done ahead, right after a load with no
       conversation to re-prefill, while the user types (not in the TTFT). */
    int (*prepare_ahead)(void *h, ember_err *err);
    /* Optional: the chat template the last render used ("gguf (jinja)",
       or the built-in fallback and why) and the model's architecture. */
    const char *(*template_name)(void *h);
    const char *(*arch)(void *h);
    /* Optional: text the last rendered prompt already opened the reply with
       ("<think>\n" after a generation prompt that starts the thinking), or
       NULL: it is streamed and kept as the reply's start. */
    const char *(*reply_prefix)(void *h);
    /* Optional: true when the cache goes back only to where a prefill
       started or ended (a recurrent state, ember_model_info.n_recurrent):
       the worker then prefills a turn's history and its generation prompt
       apart, so that the next turn can go back to the history's end. */
    bool (*recurrent)(void *h);
    /* Optional: the template's reasoning switch (enable_thinking): -1
       undefined (the template's default), 0 off, 1 on.  Returns true when
       the template has such a switch. */
    bool (*set_thinking)(void *h, int mode);
} ember_worker_backend;

/* The real engine (worker_engine.c). */
extern const ember_worker_backend ember_worker_engine_backend;

extern const ember_worker_backend ember_worker_fake_backend;

/* Fake engine knobs (tests, UI development): milliseconds per decoded
   token, and a reply length (0 = echo the last user message). */
void ember_worker_fake_config(int delay_ms, int reply_tokens);
/* Milliseconds per prompt token in the fake prefill (0 = instant). */
void ember_worker_fake_prefill_delay(int ms_per_token);
/* Makes the next opened fake model report one-off preparation (as packing
   before the first prefill) taking ms milliseconds; 0 = none. */
void ember_worker_fake_prepare(int ms);
/* The fake engine's reply from now on, instead of echoing the user
   (NULL: echo again); at most 4095 bytes are kept. */
void ember_worker_fake_script(const char *text);

/* ---- events ------------------------------------------------------------ */

typedef enum {
    EMBER_EV_LOADED = 0,   /* text: model name; text2: plan summary */
    EMBER_EV_PROGRESS,     /* text: what the worker is doing */
    EMBER_EV_TOKEN,        /* text: decoded text; i: 1 when the prompt wrote it
                              (reply_prefix), not the model */
    EMBER_EV_STATS,        /* stats: live numbers */
    EMBER_EV_PHASE,        /* text: phase name; i: ember_phase; stats.phase_mem[i] */
    EMBER_EV_DONE,         /* stats: final; i: tokens generated; cancelled */
    EMBER_EV_ERROR,        /* text: message */
    EMBER_EV_NOTICE,       /* text: message (e.g. context full) */
    EMBER_EV_DROPPED,      /* i: leading non-system messages now dropped */
    EMBER_EV_TEMPLATE,     /* just before LOADED, and when it changes: text: the
                              chat template in use; text2: architecture; i: context */
    EMBER_EV_QUIT,         /* the worker has stopped */
} ember_event_kind;

typedef struct ember_event {
    ember_event_kind kind;
    char *text, *text2;            /* malloc'd or NULL; freed by ember_event_clear */
    int i;
    bool cancelled;
    uint64_t seq;                  /* the command that caused it */
    ember_stats stats;
} ember_event;

void ember_event_clear(ember_event *ev);

/* ---- the worker ---------------------------------------------------------- */

typedef struct ember_worker ember_worker;

typedef struct ember_worker_opts {
    int n_predict;                 /* per turn; <= 0: until EOG or context */
    int stats_interval_ms;         /* live stats cadence (default 200) */
    ember_sampler_opts sampling;
    int think;                     /* enable_thinking: -1 the template's default, 0 off, 1 on */
} ember_worker_opts;

void ember_worker_opts_default(ember_worker_opts *o);

ember_worker *ember_worker_start(const ember_worker_backend *be, const ember_worker_opts *o,
                                 ember_err *err);
/* Readable when events are pending (drain with ember_worker_poll). */
int ember_worker_fd(const ember_worker *w);
/* Pops one event; returns false when none is pending. */
bool ember_worker_poll(ember_worker *w, ember_event *ev);

/* Commands; each returns its sequence number. */
uint64_t ember_worker_load_model(ember_worker *w, const ember_worker_load *l);
/* Replies to the conversation (messages copied). */
uint64_t ember_worker_generate(ember_worker *w, const ember_chat_msg *msgs, size_t n);
uint64_t ember_worker_set_sampling(ember_worker *w, const ember_sampler_opts *o, int n_predict);
/* The reasoning switch for the next renders (ember_worker_opts.think); a
   NOTICE says so when the loaded model's template has none. */
uint64_t ember_worker_set_thinking(ember_worker *w, int mode);
/* Replaces the cached conversation with msgs (copied; a reopened chat,
   whose last message is the assistant's) and prefills it at once, so the
   next turn prefills only its new message; before a load, the load does. */
uint64_t ember_worker_set_conversation(ember_worker *w, const ember_chat_msg *msgs, size_t n);
/* Forgets the cached conversation (KV cache and dropped-turn count). */
uint64_t ember_worker_clear(ember_worker *w);
/* Stops the running generation and any queued before this call, within
   one token.  Loads and settings already queued still run. */
void ember_worker_cancel(ember_worker *w);
bool ember_worker_busy(ember_worker *w);
/* Stops the thread (cancelling work) and frees everything. */
void ember_worker_free(ember_worker *w);

/* Exposed for tests: how many leading tokens two sequences share. */
int ember_worker_common_prefix(const int32_t *a, int na, const int32_t *b, int nb);

#endif
