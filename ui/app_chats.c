/* The full-screen chat's saved conversation: the file written after every
   turn, reopening one (-c, --resume, /load), /new, /chats and the JSON
   form of /save.  The storage itself is chatlog.c's. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_impl.h"
#include "slash.h"

static app *host_app(ui_host *h) { return h->front; }

/* The conversation as the file holds it: the transcript's turns, the
   system prompt, and what it runs on now. */
static int fill(app *a, chatlog *c)
{
    chatlog_clear_msgs(c);
    chatlog_set(&c->system, a->system);
    chatlog_set(&c->profile, a->profile);
    for (size_t i = 0; i < a->tr.n; i++) {
        const tr_entry *e = &a->tr.e[i];
        if ((int)i == a->cur_assist || (e->role != TR_USER && e->role != TR_ASSISTANT)) continue;
        chatlog_stats st = {e->stats.set, e->stats.prompt_tokens, e->stats.generated_tokens,
                            e->stats.ttft_ms, e->stats.decode_tps};
        if (chatlog_add(c, e->role == TR_USER ? "user" : "assistant", e->text, e->cancelled, &st) < 0)
            return -1;
    }
    return 0;
}

static bool has_user(const app *a)
{
    for (size_t i = 0; i < a->tr.n; i++)
        if (a->tr.e[i].role == TR_USER) return true;
    return false;
}

void chats_turn_done(app *a)
{
    if (!has_user(a)) return;         /* nothing said yet: no file */
    ember_err e = {{0}};
    if (fill(a, &a->log) < 0) ember_seterr(&e, "out of memory");
    char was[CHATLOG_ID_MAX];
    snprintf(was, sizeof was, "%s", a->log.id);
    if (e.msg[0] || chatlog_save(&a->log, &e) < 0) {
        if (!a->save_failed) {
            char msg[1200];
            snprintf(msg, sizeof msg, "the conversation is not being saved: %s", e.msg);
            app_note(a, TR_ERROR, msg);
        }
        a->save_failed = true;
        snprintf(a->save_err, sizeof a->save_err, "%s", e.msg);
        return;
    }
    if (strcmp(was, a->log.id)) {
        char msg[200];
        snprintf(msg, sizeof msg, "conversation %s was opened by another Ember meanwhile: this one is saved as %s",
                 was, a->log.id);
        app_note(a, TR_NOTICE, msg);
    }
    if (a->save_failed) app_note(a, TR_NOTICE, "the conversation is saved again");
    a->save_failed = false;
    a->drop_unsaved = false;
}

int chats_save_json(app *a, const char *path, char *err, size_t cap)
{
    ember_err e = {{0}};
    char full[PATH_MAX + 16];
    const char *home = getenv("HOME");
    if (path[0] == '~' && path[1] == '/' && home && *home) {
        snprintf(full, sizeof full, "%s%s", home, path + 1);
        path = full;
    }
    if (fill(a, &a->log) < 0) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    if (chatlog_save_to(&a->log, path, &e) < 0) {
        snprintf(err, cap, "%s", e.msg);
        return -1;
    }
    return 0;
}

static void set_model(app *a);

/* The model (/model may have changed it) and the template in use, as the
   worker's TEMPLATE event names it ("gguf (jinja)", "chatml (fallback: ...)"). */
void chats_model_loaded(app *a)
{
    set_model(a);
    if (a->tmpl[0]) chatlog_set(&a->log.tmpl, a->tmpl);
}

static void set_model(app *a)
{
    /* absolute, so that ember -c from another directory finds the model */
    char full[PATH_MAX];
    const char *m = a->cfg->model_path;
    chatlog_set(&a->log.model, m && realpath(m, full) ? full : m);
}

/* Shows a saved conversation and hands it to the worker to prefill. */
static void reopen(app *a, chatlog *c)
{
    app_forget(a);
    app_set_system(a, c->system ? c->system : "", c->system ? strlen(c->system) : 0);
    for (size_t i = 0; i < c->n; i++) {
        const chatlog_msg *m = &c->msgs[i];
        int k = tr_add(&a->tr, !strcmp(m->role, "user") ? TR_USER : TR_ASSISTANT, m->content);
        if (k < 0) continue;
        a->tr.e[k].cancelled = m->cancelled;
        a->tr.e[k].stats = (tr_stats){m->stats.set, m->stats.prompt_tokens, m->stats.generated_tokens,
                                      m->stats.ttft_ms, m->stats.decode_tps};
    }
    char when[40], msg[2 * PATH_MAX];
    chatlog_fmt_time(c->updated, when, sizeof when);
    int turns = chatlog_turns(c);
    snprintf(msg, sizeof msg, "reopened conversation %s (%d turn%s, last %s)", c->id, turns,
             turns == 1 ? "" : "s", when);
    char was[PATH_MAX];
    snprintf(was, sizeof was, "%s", c->model ? c->model : "");
    chatlog_free(&a->log);
    a->log = *c;
    memset(c, 0, sizeof *c);
    a->save_failed = false;           /* the file holds this one */
    set_model(a);
    if (*was && a->log.model && strcmp(was, a->log.model)) {
        size_t k = strlen(msg);
        snprintf(msg + k, sizeof msg - k, "; it was saved with %s and now continues with this model", was);
    }
    app_note(a, TR_NOTICE, msg);
    size_t n;
    ember_chat_msg *m = app_conversation(a, &n);
    if (m && n) ember_worker_set_conversation(a->w, m, n);
    free(m);
    a->tr.scroll = 0;
    a->dirty = true;
}

void chats_begin(app *a)
{
    chatlog_init(&a->log);
    set_model(a);
    /* (a --system given has replaced the saved one already) */
    if (a->cfg->resume) reopen(a, a->cfg->resume);
    const char *n = a->cfg->resume_notes;
    if (n && *n) {
        /* a newer file skipped as damaged: the one reopened is not the last */
        char *t = strndup(n, strlen(n) - (n[strlen(n) - 1] == '\n'));
        if (t) app_note(a, TR_NOTICE, t);
        free(t);
    }
}

bool chats_settle(app *a)
{
    /* The file is written when a reply ends; one still running is kept
       as far as it got, marked stopped as Ctrl-C marks it, or the message
       it answers was lost with it (quit, a signal, /new mid-reply). */
    if (a->generating && a->cur_assist >= 0 && (size_t)a->cur_assist < a->tr.n) {
        tr_entry *e = &a->tr.e[a->cur_assist];
        e->cancelled = true;
        if (e->len == 0) tr_remove(&a->tr, a->cur_assist);
        a->cur_assist = -1;
        chats_turn_done(a);
    } else if (a->save_failed) {
        chats_turn_done(a);           /* room may have been made since */
    }
    return !a->save_failed;
}

void chats_end(app *a) { chatlog_free(&a->log); }

/* Whether /new, /clear or /load may put this conversation away: one the
   file does not hold is not dropped unasked; the first command says so,
   the same one again drops it. */
static bool may_leave(app *a)
{
    if (chats_settle(a) || a->drop_unsaved) {
        a->drop_unsaved = false;
        return true;
    }
    a->drop_unsaved = true;
    app_note(a, TR_ERROR, "this conversation is not saved (see above): /save FILE keeps a copy elsewhere; "
                          "the same command again drops it");
    return false;
}

void chats_cmd_new(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    if (!may_leave(a)) return;
    app_forget(a);
    chatlog_free(&a->log);
    chatlog_init(&a->log);
    set_model(a);
    a->save_failed = false;
    app_flash(a, "a new conversation (the last one is saved: /chats lists them)");
}

static void warn_note(void *ud, const char *msg) { app_note(ud, TR_NOTICE, msg); }

/* /load's notes (chatlog_warn_collect: a damaged file skipped, the
   conversation copied because another Ember has it), shown once it has
   reopened: reopening clears the transcript, and the notes with it. */
static void show_notes(app *a, const char *notes)
{
    for (const char *p = notes; p && *p;) {
        size_t n = strcspn(p, "\n");
        char *t = strndup(p, n);
        if (t) app_note(a, TR_NOTICE, t);
        free(t);
        p += n + (p[n] == '\n');
    }
}

void chats_cmd_load(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    if (a->generating) {
        app_flash(a, "a reply is running: press Esc first, then /load");
        return;
    }
    if (!may_leave(a)) return;
    char id[128];
    snprintf(id, sizeof id, "%.*s", (int)s->arg_len, s->arg);
    chatlog c;
    ember_err e = {{0}};
    char *notes = NULL;
    if (chatlog_open(id, &c, chatlog_warn_collect, &notes, &e) < 0) {
        show_notes(a, notes);
        free(notes);
        char msg[1200];
        snprintf(msg, sizeof msg, "/load: %s", e.msg);
        app_note(a, TR_ERROR, msg);
        return;
    }
    reopen(a, &c);
    show_notes(a, notes);
    free(notes);
    chatlog_free(&c);
}

void chats_cmd_list(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    ember_err e = {{0}};
    char *text = chatlog_list_text(a->log.id, 20, warn_note, a, &e);
    if (!text) {
        char msg[1200];
        snprintf(msg, sizeof msg, "/chats: %s", e.msg);
        app_note(a, TR_ERROR, msg);
        return;
    }
    app_note(a, TR_INFO, text);
    free(text);
}

int chats_ids(const char ***ids)
{
    *ids = NULL;
    chatlog_entry *v;
    ember_err e = {{0}};
    int n = chatlog_list(&v, NULL, NULL, &e);
    if (n <= 0) return 0;
    /* the pointers and the strings in one block */
    char **p = malloc((size_t)n * (sizeof *p + CHATLOG_ID_MAX));
    if (!p) {
        free(v);
        return 0;
    }
    char *s = (char *)(p + n);
    for (int i = 0; i < n; i++) {
        p[i] = s + (size_t)i * CHATLOG_ID_MAX;
        memcpy(p[i], v[n - 1 - i].id, CHATLOG_ID_MAX);
    }
    free(v);
    *ids = (const char **)p;
    return n;
}
