/* The full-screen chat: terminal setup, the poll loop over the terminal
   and the worker's event pipe, slash commands (keys: app_keys.c). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "app_impl.h"
#include "editor.h"
#include "info.h"
#include "markdown.h"
#include "osc52.h"
#include "keepscreen.h"
#include "keys.h"
#include "slash.h"
#include "terminal.h"
#include "think.h"
#include "wrap.h"

static void set_flash(app *a, const char *msg)
{
    size_t n = strlen(msg);
    if (n >= sizeof a->flash) n = sizeof a->flash - 1;
    memcpy(a->flash, msg, n);
    a->flash[n] = 0;
    a->dirty = true;
}

static void note(app *a, tr_role r, const char *msg)
{
    tr_add(&a->tr, r, msg);
    a->tr.scroll = 0;
    a->dirty = true;
}

/* The conversation as the model sees it. */
static ember_chat_msg *conversation(app *a, size_t *n)
{
    ember_chat_msg *m = calloc(a->tr.n + 2, sizeof *m);
    if (!m) return NULL;
    size_t k = 0;
    if (a->system && *a->system) m[k++] = (ember_chat_msg){"system", a->system};
    for (size_t i = 0; i < a->tr.n; i++) {
        tr_entry *e = &a->tr.e[i];
        if (e->role == TR_USER) m[k++] = (ember_chat_msg){"user", e->text};
        else if (e->role == TR_ASSISTANT && (int)i != a->cur_assist)
            m[k++] = (ember_chat_msg){"assistant", e->text};
    }
    *n = k;
    return m;
}

static void start_generation(app *a)
{
    size_t n;
    ember_chat_msg *m = conversation(a, &n);
    if (!m) {
        note(a, TR_ERROR, "out of memory");
        return;
    }
    a->cur_assist = tr_add(&a->tr, TR_ASSISTANT, "");
    a->gen_failed = false;
    a->gen_seq = ember_worker_generate(a->w, m, n);
    free(m);
    a->generating = true;
    a->tr.scroll = 0;
    a->dirty = true;
}

static void switch_profile(app *a, int idx, const char *name)
{
    ui_config *c = a->cfg;
    if (!c->resolve) {
        set_flash(a, "no profiles: start with --profile or put YAML files in ~/.config/ember/profiles");
        return;
    }
    if (a->generating) {
        /* stop the reply, then switch (the DONE event does it); said in the bar */
        a->switch_pending = true;
        a->pending_index = idx;
        snprintf(a->pending_profile, sizeof a->pending_profile, "%s", name);
        ember_worker_cancel(a->w);
        snprintf(a->progress, sizeof a->progress, "stopping the reply, then switching to %.60s...", name);
        a->dirty = true;
        return;
    }
    ember_worker_load l;
    char err[1024];
    gen_opts g = c->gen;
    if (c->resolve(c->ctx, name, &l, &g, err, sizeof err) < 0) {
        char msg[1200];
        snprintf(msg, sizeof msg, "profile %s: %s (still running %s)", name, err,
                 a->profile[0] ? a->profile : "the current plan");
        note(a, TR_ERROR, msg);
        return;
    }
    /* the new profile's sampling applies from the next reply (its reasoning
       switch only if it changes it: the worker says when a template has none) */
    const int before = gen_opts_reasoning_mode(&c->gen), after = gen_opts_reasoning_mode(&g);
    c->gen = g;
    ember_worker_set_sampling(a->w, &c->gen.samp, c->gen.n_predict);
    if (after != before) ember_worker_set_thinking(a->w, after);
    snprintf(a->load_profile, sizeof a->load_profile, "%s", name);
    a->load_index = idx;
    a->load_seq = ember_worker_load_model(a->w, &l);
    snprintf(a->progress, sizeof a->progress, "switching to %s...", name);
    a->dirty = true;
}

void app_cycle_profile(app *a)
{
    ui_config *c = a->cfg;
    if (c->n_profiles == 0) {
        switch_profile(a, -1, "");
        return;
    }
    int next = (c->cur_profile + 1) % c->n_profiles;
    switch_profile(a, next, c->profiles[next]);
}

void app_show_help(app *a)
{
    char buf[4096];
    ui_slash_help_text(false, buf, sizeof buf);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') buf[n - 1] = 0;
    note(a, TR_INFO, buf);
}

static void show_stats(app *a)
{
    char buf[2048], r[32], p[32], f[32], an[32], hwm[32], kv[32];
    if (!a->have_last) {
        snprintf(buf, sizeof buf, "no finished turn yet\nplan: %s", a->plan);
        note(a, TR_INFO, buf);
        return;
    }
    ember_stats *s = &a->last;
    ui_fmt_kb(s->mem.rss_kb, r, sizeof r);
    ui_fmt_kb(s->mem.pss_kb, p, sizeof p);
    ui_fmt_kb(s->mem.pss_file_kb, f, sizeof f);
    ui_fmt_kb(s->mem.pss_anon_kb, an, sizeof an);
    ui_fmt_kb(s->mem.hwm_kb, hwm, sizeof hwm);
    ui_fmt_kb((long long)(s->kv_bytes >> 10), kv, sizeof kv);
    snprintf(buf, sizeof buf,
             "last turn: %d prompt tokens prefilled in %.1f ms (%.1f tok/s), TTFT %.1f ms\n"
             "  %d tokens decoded in %.1f ms (%.2f tok/s); context %d/%d\n"
             "memory: RSS %s (peak %s), PSS %s = file %s + anon %s; KV %s %s\n"
             "packing: %d/%d tensors packed%s, pack time %.1f ms%s\n"
             "plan: %s",
             s->n_prompt, s->prefill_ms, s->prefill_tps, s->ttft_ms, s->n_decoded, s->decode_ms,
             s->decode_tps, s->n_past, s->n_ctx, r, hwm, p, f, an, ember_kv_type_name(s->kv_type), kv,
             s->packed, s->packable,
             s->src_evicted && s->pack_cache != EMBER_PACK_CACHE_HIT ? ", sources evicted" : "", s->pack_ms,
             s->pack_cache == EMBER_PACK_CACHE_HIT ? " (mapped from the pack cache: file-backed tiles)"
             : s->pack_cache == EMBER_PACK_CACHE_WRITTEN ? " (pack cache written)"
             : s->pack_cache == EMBER_PACK_CACHE_UNWRITTEN ? " (pack cache not written)"
             : s->pack_cache == EMBER_PACK_CACHE_WRITING ? " (pack cache being written in the background)" : "",
             a->plan);
    note(a, TR_INFO, buf);
}


static void set_system(app *a, const char *text, size_t n)
{
    char *copy = n ? strndup(text, n) : NULL;   /* text may be a->system itself */
    free(a->system);
    a->system = copy;
    /* Shown once at the top of the transcript. */
    for (size_t i = 0; i < a->tr.n; i++)
        if (a->tr.e[i].role == TR_SYSTEM) {
            tr_remove(&a->tr, (int)i);
            break;
        }
    if (a->system) {
        tr_add(&a->tr, TR_SYSTEM, a->system);
        /* move it to the front */
        tr_entry e = a->tr.e[a->tr.n - 1];
        memmove(&a->tr.e[1], &a->tr.e[0], (a->tr.n - 1) * sizeof e);
        a->tr.e[0] = e;
    }
    a->dirty = true;
}

/* The same, for the files beside this one (app_impl.h). */
void app_note(app *a, tr_role r, const char *msg) { note(a, r, msg); }
void app_flash(app *a, const char *msg) { set_flash(a, msg); }
void app_set_system(app *a, const char *text, size_t n) { set_system(a, text, n); }
ember_chat_msg *app_conversation(app *a, size_t *n) { return conversation(a, n); }

void app_toggle_raw(app *a)
{
    a->raw = !a->raw;
    set_flash(a, a->raw ? "replies shown as raw text (/raw or F4: Markdown again)"
                        : "replies shown as Markdown (/raw or F4: raw text)");
}

/* Writes all of s to the terminal, past curses (it never sees the
   sequence, which moves no cursor). */
static int write_tty(const char *s, size_t n)
{
    fflush(stdout);
    while (n) {
        ssize_t k = write(STDOUT_FILENO, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        s += k, n -= (size_t)k;
    }
    return 0;
}

/* /copy: what = 0 the last reply, N its N-th code block (as numbered on
   screen), -1 the whole conversation as /save writes it. */
static void copy_to_clipboard(app *a, long long what)
{
    const tr_entry *last = NULL;
    for (size_t i = a->tr.n; i-- > 0;)
        if (a->tr.e[i].role == TR_ASSISTANT && a->tr.e[i].len) {
            last = &a->tr.e[i];
            break;
        }
    char *all = NULL, msg[256];
    size_t n = 0;
    const char *src = NULL;
    md_block *blocks = NULL;
    int nb = 0;
    if (what < 0) {
        FILE *f = open_memstream(&all, &n);
        if (f) {
            tr_write_markdown(&a->tr, f, a->model);
            fclose(f);
        }
        src = all;
        snprintf(msg, sizeof msg, "the conversation");
    } else if (!last) {
        note(a, TR_ERROR, "/copy: there is no reply yet");
        return;
    } else if (what == 0) {
        src = last->text, n = last->len;
        snprintf(msg, sizeof msg, "the last reply");
    } else {
        nb = md_code_blocks(last->text, last->len, &blocks);
        if (nb >= 0 && what > nb) {
            snprintf(msg, sizeof msg, "/copy %lld: the last reply has %d code block%s", what, nb,
                     nb == 1 ? "" : "s");
            note(a, TR_ERROR, msg);
            md_blocks_free(blocks, nb);
            return;
        }
        if (nb > 0) src = blocks[what - 1].text, n = blocks[what - 1].len;
        snprintf(msg, sizeof msg, "code block %lld of the last reply", what);
    }
    size_t len = 0;
    char *seq = src ? ui_osc52(src, n, &len) : NULL;
    if (!seq) note(a, TR_ERROR, "/copy: out of memory");
    else if (write_tty(seq, len) < 0) note(a, TR_ERROR, "/copy: cannot write to the terminal");
    else {
        char done[400];
        snprintf(done, sizeof done, "copied %zu bytes (%s) to the clipboard with OSC 52 "
                 "(inside tmux: set -g set-clipboard on)", n, msg);
        note(a, TR_NOTICE, done);
    }
    free(seq);
    free(all);
    md_blocks_free(blocks, nb > 0 ? nb : 0);
}

/* ---- slash commands: the table is slash.c's; these are the handlers that
   act on the full-screen UI's own state. */

static app *host_app(ui_host *h) { return h->front; }

void app_forget(app *a)
{
    if (a->generating) ember_worker_cancel(a->w);
    tr_clear(&a->tr);
    if (a->system) set_system(a, a->system, strlen(a->system));
    ember_worker_clear(a->w);
    a->cur_assist = -1;
    a->fresh_user = -1;
    a->generating = false;
    a->dropped = 0;
}

/* /clear is /new keeping the system prompt: the saved file keeps what was
   said, and what follows goes to a new one (chats_cmd_new). */
static void cmd_clear(ui_host *h, const ui_slash *s)
{
    chats_cmd_new(h, s);
    if (host_app(h)->drop_unsaved) return;   /* refused: it is not saved */
    set_flash(host_app(h), "conversation cleared (the old one stays saved: /chats)");
}

static void cmd_system(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    if (!s->arg_len) {   /* said in the transcript, with the old text, so nothing is lost unseen */
        char msg[600];
        if (a->system)
            snprintf(msg, sizeof msg, "system prompt removed (it was: %.500s%s)", a->system,
                     strlen(a->system) > 500 ? "..." : "");
        else
            snprintf(msg, sizeof msg, "no system prompt is set (/system TEXT sets one)");
        set_system(a, "", 0);
        note(a, TR_NOTICE, msg);
        return;
    }
    char *t = strndup(s->arg, s->arg_len);
    set_system(a, t ? t : "", t ? s->arg_len : 0);
    free(t);
    set_flash(a, "system prompt set");
}

static void cmd_profile(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    ui_config *c = a->cfg;
    char msg[1200];
    if (!s->arg_len) {
        size_t k = (size_t)snprintf(msg, sizeof msg, "profiles:");
        for (int i = 0; i < c->n_profiles && k < sizeof msg; i++)
            k += (size_t)snprintf(msg + k, sizeof msg - k, " %s%s", c->profiles[i],
                                  i == c->cur_profile ? " (in use)" : "");
        if (!c->n_profiles) snprintf(msg, sizeof msg, "no profiles found (see ember profiles)");
        note(a, TR_INFO, msg);
        return;
    }
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)s->arg_len, s->arg);
    int idx = -1;
    for (int i = 0; i < c->n_profiles; i++)
        if (!strcmp(c->profiles[i], name)) idx = i;
    switch_profile(a, idx, name);
}

static void cmd_stats(ui_host *h, const ui_slash *s) { show_stats(host_app(h)); }

static void cmd_regen(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    if (a->generating) {
        set_flash(a, "a reply is running");
        return;
    }
    int last = (int)a->tr.n - 1;
    while (last >= 0 && a->tr.e[last].role != TR_USER && a->tr.e[last].role != TR_ASSISTANT) last--;
    if (last >= 0 && a->tr.e[last].role == TR_ASSISTANT) tr_remove(&a->tr, last);
    bool has_user = false;
    for (size_t i = 0; i < a->tr.n; i++) has_user |= a->tr.e[i].role == TR_USER;
    if (!has_user) {
        note(a, TR_ERROR, "/regen: nothing to answer yet");
        return;
    }
    a->fresh_user = -1;
    start_generation(a);
}

static void cmd_save(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    char path[4096], err[512];
    snprintf(path, sizeof path, "%.*s", (int)s->arg_len, s->arg);
    /* FILE.json: the conversation as its saved file holds it; else Markdown */
    size_t pl = strlen(path);
    bool json = pl > 5 && !strcasecmp(path + pl - 5, ".json");
    if ((json ? chats_save_json(a, path, err, sizeof err)
              : tr_save_markdown(&a->tr, path, a->model, err, sizeof err)) < 0) {
        note(a, TR_ERROR, err);
    } else {
        char done[4200];
        snprintf(done, sizeof done, "saved the transcript to %s%s", path, json ? " (JSON)" : "");
        note(a, TR_NOTICE, done);
    }
}

static void cmd_raw(ui_host *h, const ui_slash *s) { app_toggle_raw(host_app(h)); }

static void load_model(app *a);

/* /model NAME: the worker loads NAME under the profile in use; the
   conversation stays and is prefilled again in the new model's template. */
static void cmd_model(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    ui_config *c = a->cfg;
    if (!c->set_model || !c->model_names) {
        note(a, TR_ERROR, "/model: this chat cannot load other models");
        return;
    }
    if (!s->arg_len) {
        char **names = NULL, msg[4096];
        int n = c->model_names(c->ctx, &names);
        size_t k = (size_t)snprintf(msg, sizeof msg, n > 0 ? "models (ember models):" : "no models found: "
                                    "ember pull USER/REPO, or put GGUF files in a directory of $EMBER_MODELS");
        for (int i = 0; i < n; i++) {
            if (k < sizeof msg) k += (size_t)snprintf(msg + k, sizeof msg - k, " %s", names[i]);
            free(names[i]);
        }
        free(names);
        note(a, TR_INFO, msg);
        return;
    }
    if (a->generating) {
        set_flash(a, "a reply is running: press Esc first");
        return;
    }
    if (a->fetching) {
        set_flash(a, "a download is running: press Esc to cancel it first");
        return;
    }
    char name[4096], err[4200];
    snprintf(name, sizeof name, "%.*s", (int)s->arg_len, s->arg);
    int r = c->set_model(c->ctx, name, a->model_path, sizeof a->model_path, err, sizeof err);
    if (r == 1 && c->fetch_start) {
        /* not in the cache: fetched off this thread, loaded once it is in (fetch_check) */
        if (c->fetch_start(c->ctx, name, err, sizeof err) < 0) {
            note(a, TR_ERROR, err);
            return;
        }
        a->fetching = true;
        snprintf(a->fetch_name, sizeof a->fetch_name, "%s", name);
        snprintf(a->progress, sizeof a->progress, "downloading %.200s... (Esc cancels)", name);
        a->dirty = true;
        return;
    }
    if (r == 1) snprintf(err, sizeof err, "/model %s: not in the cache (ember pull downloads it)", name);
    if (r != 0) {
        note(a, TR_ERROR, err);
        return;
    }
    load_model(a);
}

/* The model set_model chose replaces the one in use, the profile kept. */
static void load_model(app *a)
{
    ui_config *c = a->cfg;
    c->model_path = a->model_path;
    a->model_switch = true;
    int cur = c->cur_profile;
    switch_profile(a, cur, cur >= 0 && cur < c->n_profiles ? c->profiles[cur] : "");
}

/* The download /model started: its progress in the status bar, then the
   model loaded as /model loads one, or what went wrong. */
static void fetch_check(app *a)
{
    ui_config *c = a->cfg;
    char status[256], err[1200], msg[1400];
    int r = c->fetch_poll(c->ctx, status, sizeof status, a->model_path, sizeof a->model_path, err, sizeof err);
    if (r == 0) {
        if (strcmp(status, a->progress)) {
            snprintf(a->progress, sizeof a->progress, "%s", status);
            a->dirty = true;
        }
        return;
    }
    a->fetching = false;
    a->progress[0] = 0;
    a->flash[0] = 0;              /* "cancelling...": the transcript says how it ended */
    a->dirty = true;
    if (r < 0) {
        snprintf(msg, sizeof msg, "/model %.200s: %.1100s", a->fetch_name, err);
        note(a, TR_ERROR, msg);
        return;
    }
    /* now cached: set_model reads its header as for any other name */
    char got[sizeof a->model_path];
    snprintf(got, sizeof got, "%s", a->model_path);
    if (c->set_model(c->ctx, got, a->model_path, sizeof a->model_path, err, sizeof err) != 0) {
        note(a, TR_ERROR, err);
        return;
    }
    snprintf(msg, sizeof msg, "downloaded %.200s to %.1100s", a->fetch_name, a->model_path);
    note(a, TR_NOTICE, msg);
    load_model(a);
}

void app_cancel_fetch(app *a)
{
    if (!a->fetching) return;
    a->cfg->fetch_cancel(a->cfg->ctx);
    set_flash(a, "cancelling the download...");
}

static void cmd_read(ui_host *h, const ui_slash *s)
{
    app *a = host_app(h);
    char path[4096], err[4200], msg[4300];
    snprintf(path, sizeof path, "%.*s", (int)s->arg_len, s->arg);
    long long n = ui_attach_file(&a->attach, path, err, sizeof err);
    if (n < 0) {
        note(a, TR_ERROR, err);
        return;
    }
    snprintf(msg, sizeof msg, "attached %s (%lld bytes): it goes with your next message%s", path, n,
             a->attach.n > 1 ? " (with the others)" : "");
    note(a, TR_NOTICE, msg);
}

/* Ctrl-X Ctrl-E and /edit: the terminal goes to the editor and comes back
   with its text as the draft. */
void app_edit_draft(app *a)
{
    char *draft = ui_input_text(a->in), err[600];
    ui_term_leave();
    char *t = ui_edit_text(draft ? draft : "", err, sizeof err);
    ui_term_return();
    draw_layout(a);
    if (t) ui_input_set_text(a->in, t);
    else note(a, TR_ERROR, err);
    free(t);
    free(draft);
    a->dirty = true;
}

static void cmd_edit(ui_host *h, const ui_slash *s) { app_edit_draft(host_app(h)); }


static void show_info(app *a)
{
    char buf[2048];
    ui_info in = {a->model, a->arch, a->tmpl, a->profile, a->plan, a->n_ctx,
                  a->st.have_stats ? a->st.st.n_past : -1, gen_opt_table[OPT_REASONING].names(a->cfg->gen.reasoning)};
    ui_info_text(&in, buf, sizeof buf);
    note(a, TR_INFO, buf);
}

static void set_think(app *a, int show)
{
    a->show_think = show < 0 ? !a->show_think : show != 0;
    /* the replies' layout starts at another byte now */
    for (size_t i = 0; i < a->tr.n; i++) {
        md_free(a->tr.e[i].md);
        a->tr.e[i].md = NULL;
    }
    set_flash(a, ui_think_said(a->show_think));
    a->dirty = true;
}

void app_toggle_think(app *a) { set_think(a, -1); }
static void cmd_info(ui_host *h, const ui_slash *s) { show_info(host_app(h)); }
static void cmd_think(ui_host *h, const ui_slash *s) { set_think(host_app(h), (int)s->ival); }
static void cmd_copy(ui_host *h, const ui_slash *s) { copy_to_clipboard(host_app(h), s->ival); }

static void (*const app_ops[SL_COUNT])(ui_host *, const ui_slash *) = {
    [SL_CLEAR] = cmd_clear, [SL_SYSTEM] = cmd_system, [SL_PROFILE] = cmd_profile,
    [SL_STATS] = cmd_stats, [SL_REGEN] = cmd_regen, [SL_SAVE] = cmd_save,
    [SL_RAW] = cmd_raw, [SL_COPY] = cmd_copy, [SL_NEW] = chats_cmd_new, [SL_LOAD] = chats_cmd_load,
    [SL_CHATS] = chats_cmd_list, [SL_MODEL] = cmd_model, [SL_READ] = cmd_read, [SL_EDIT] = cmd_edit,
    [SL_INFO] = cmd_info, [SL_THINK] = cmd_think,
};

static void app_say(ui_host *h, int level, const char *msg)
{
    static const tr_role roles[] = {TR_INFO, TR_NOTICE, TR_ERROR};
    note(host_app(h), roles[level < 0 || level > 2 ? 2 : level], msg);
}

static void run_command(app *a, const char *line)
{
    ui_slash s;
    ui_slash_parse(line, &s);
    if (s.kind == SL_NONE) {
        if (!s.arg_len) return;
        if (a->generating) {
            set_flash(a, "wait for the reply, or press Esc to stop it");
            return;
        }
        char *msg = a->attach.n ? ui_attach_take(&a->attach, s.arg) : NULL;
        a->fresh_user = tr_add(&a->tr, TR_USER, msg ? msg : s.arg);
        free(msg);
        start_generation(a);
        return;
    }
    ui_host h = {a->cfg, a->w, false, false, app_say, app_ops, a};
    ui_slash_run(&h, &s);
    if (h.quit) a->quit = true;
}

void app_submit(app *a)
{
    char *text = ui_input_text(a->in);
    if (!text) return;
    if (a->generating && text[0] != '/') {
        set_flash(a, "wait for the reply, or press Esc to stop it");
        free(text);
        return;
    }
    ui_input_history_add(a->in, text);
    ui_input_clear(a->in);
    run_command(a, text);
    free(text);
    a->dirty = true;
}

/* A reply that failed before its first token (the message longer than the
   context, say) leaves no turn behind: not in the transcript, not in what
   /save writes or the next reply sees, and no stats of a turn that never
   ran.  The message just typed comes back as the draft, to shorten. */
static void turn_failed(app *a)
{
    if (a->cur_assist >= 0) tr_remove(&a->tr, a->cur_assist);
    if (a->fresh_user >= 0 && (size_t)a->fresh_user < a->tr.n && a->tr.e[a->fresh_user].role == TR_USER) {
        size_t len;
        ui_input_buf(a->in, &len, NULL);
        if (len == 0) ui_input_set_text(a->in, a->tr.e[a->fresh_user].text);
        tr_remove(&a->tr, a->fresh_user);
    }
    a->fresh_user = -1;
    a->cur_assist = -1;
    a->generating = false;
    a->gen_failed = false;
    a->progress[0] = 0;
    a->flash[0] = 0;
}

static void switch_if_pending(app *a)
{
    if (!a->switch_pending || a->generating) return;
    a->switch_pending = false;
    char name[128];
    snprintf(name, sizeof name, "%s", a->pending_profile);
    switch_profile(a, a->pending_index, name);
}

static void on_event(app *a, ember_event *ev)
{
    switch (ev->kind) {
    case EMBER_EV_TOKEN:
        if (!strncmp(a->progress, "prefill", 7)) a->progress[0] = 0;
        if (a->cur_assist >= 0) {
            tr_entry *e = &a->tr.e[a->cur_assist];
            tr_append(&a->tr, a->cur_assist, ev->text, strlen(ev->text));
            /* the prompt's own opening (ev->i) is no token of the model's */
            bool thinking = ui_think_grow(&e->think_scan, e->text, e->len);
            if (!ev->i && thinking) e->think_tokens++;
        }
        break;
    case EMBER_EV_STATS:
        a->st.st = ev->stats;
        a->st.have_stats = true;
        mem_add(a, &ev->stats.mem);
        /* a pack cache that could not be written: said once, the chat runs on */
        if (ev->stats.pack_cache_note[0] && !a->pack_note_said) {
            a->pack_note_said = true;
            note(a, TR_INFO, ev->stats.pack_cache_note);
        }
        break;
    case EMBER_EV_PHASE: {
        /* One sample per phase, from the engine's own snapshot. */
        static const char marks[] = "OPEFRD";
        if (ev->i >= 0 && ev->i < EMBER_PHASE_COUNT && ev->i < 6) {
            a->pending_mark = marks[ev->i];
            mem_add(a, &ev->stats.phase_mem[ev->i]);
        }
        break;
    }
    case EMBER_EV_DONE:
        if (ev->seq == a->gen_seq && a->gen_failed) {
            turn_failed(a);
        } else if (ev->seq == a->gen_seq) {
            if (a->cur_assist >= 0) {
                tr_entry *e = &a->tr.e[a->cur_assist];
                e->cancelled = ev->cancelled;
                e->stats = (tr_stats){ev->stats.n_ctx > 0, ev->stats.n_prompt, ev->i, ev->stats.ttft_ms,
                                      ev->stats.decode_tps};
                if (ev->cancelled && e->len == 0) tr_remove(&a->tr, a->cur_assist);
            }
            a->cur_assist = -1;
            a->generating = false;
            chats_turn_done(a);
            a->last = ev->stats;
            a->st.st = ev->stats;
            a->st.have_stats = a->st.have_stats || ev->stats.n_ctx > 0;
            a->have_last = ev->stats.n_ctx > 0;
            mem_add(a, &ev->stats.mem);
            a->progress[0] = 0;
            a->flash[0] = 0;
        }
        switch_if_pending(a);
        break;
    case EMBER_EV_ERROR:
        if (ev->seq == a->gen_seq && a->generating && a->cur_assist >= 0 && a->tr.e[a->cur_assist].len == 0)
            a->gen_failed = true;
        note(a, TR_ERROR, ev->text ? ev->text : "error");
        if (ev->seq == a->load_seq) {
            a->progress[0] = 0;
            a->load_seq = 0;
        }
        break;
    case EMBER_EV_NOTICE: note(a, TR_NOTICE, ev->text ? ev->text : ""); break;
    case EMBER_EV_PROGRESS:
        snprintf(a->progress, sizeof a->progress, "%s", ev->text ? ev->text : "");
        /* "prefill N of M tokens" shows until the first token arrives. */
        break;
    case EMBER_EV_LOADED:
        snprintf(a->model, sizeof a->model, "%s", ev->text ? ev->text : "");
        snprintf(a->plan, sizeof a->plan, "%s", ev->text2 ? ev->text2 : "");
        chats_model_loaded(a);
        if (ev->seq == a->load_seq && a->load_seq) {
            snprintf(a->profile, sizeof a->profile, "%s", a->load_profile);
            a->cfg->cur_profile = a->load_index;
            char msg[1024];
            if (a->model_switch)
                snprintf(msg, sizeof msg, "model %s loaded (%s%s): %s", a->model, a->load_profile[0] ? "profile " : "",
                         a->load_profile[0] ? a->load_profile : "no profile", a->plan);
            else
                snprintf(msg, sizeof msg, "profile %s: %s", a->load_profile, a->plan);
            a->model_switch = false;
            note(a, TR_NOTICE, msg);
        }
        break;
    case EMBER_EV_DROPPED: {
        /* Mark the oldest ev->i user/assistant entries as out of context. */
        int k = 0;
        for (size_t i = 0; i < a->tr.n; i++) {
            tr_entry *e = &a->tr.e[i];
            if (e->role != TR_USER && e->role != TR_ASSISTANT) continue;
            e->dropped = k < ev->i;
            k++;
        }
        a->dropped = ev->i;
        break;
    }
    case EMBER_EV_TEMPLATE:
        snprintf(a->tmpl, sizeof a->tmpl, "%s", ev->text ? ev->text : "");
        snprintf(a->arch, sizeof a->arch, "%s", ev->text2 ? ev->text2 : "");
        a->n_ctx = ev->i;
        chats_model_loaded(a);   /* the saved conversation names the template */
        break;
    case EMBER_EV_QUIT: break;
    }
    a->dirty = true;
}

static volatile sig_atomic_t got_signal;
static void on_signal(int s) { got_signal = s; }

int ui_app_run(ui_config *cfg)
{
    app *a = calloc(1, sizeof *a);
    if (!a) return 1;
    a->cfg = cfg;
    a->cur_assist = -1;
    a->fresh_user = -1;
    tr_init(&a->tr);
    a->ascii = !ui_locale_utf8();   /* the terminal's charset, for the layout's marks */
    ui_locale_text_utf8();          /* before libedit and curses start */
    char err[512], hist[4096];
    a->in = ui_input_new(ui_history_path(hist, sizeof hist) == 0 ? hist : NULL, err, sizeof err);
    if (!a->in) {
        fprintf(stderr, "ember: %s\n", err);
        free(a);
        return 1;
    }
    ember_worker_opts wo;
    ember_worker_opts_default(&wo);
    wo.sampling = cfg->gen.samp;
    wo.n_predict = cfg->gen.n_predict;
    wo.think = gen_opts_reasoning_mode(&cfg->gen);
    ember_err eerr = {{0}};
    a->w = ember_worker_start(cfg->backend, &wo, &eerr);
    if (!a->w) {
        fprintf(stderr, "ember: %s\n", eerr.msg);
        ui_input_free(a->in);
        free(a);
        return 1;
    }
    if (cfg->cur_profile >= 0 && cfg->cur_profile < cfg->n_profiles)
        snprintf(a->profile, sizeof a->profile, "%s", cfg->profiles[cfg->cur_profile]);
    else if (cfg->load.profile[0])
        snprintf(a->profile, sizeof a->profile, "%s", cfg->load.profile);
    /* before the load, so that the stop handler of a pack cache file
       written in the background (engine/sys/stopguard.c) chains to ours:
       a signal then ends the write at once and we still exit cleanly */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);   /* kill -INT: raw mode makes Ctrl-C a key */
    ember_worker_load_model(a->w, &cfg->load);
    a->show_think = cfg->show_think;

    const char *nc = getenv("NO_COLOR");
    ui_term_save();
    if (!initscr()) {
        fprintf(stderr, "ember: cannot start the terminal UI (TERM=%s)\n", getenv("TERM"));
        ember_worker_free(a->w);
        ui_input_free(a->in);
        free(a);
        return 1;
    }
    raw();
    noecho();
    nonl();
    set_escdelay(25);
    a->color = has_colors() && !(nc && *nc);
    if (a->color) {
        start_color();
        use_default_colors();
        init_pair(CP_USER, COLOR_CYAN, -1);
        init_pair(CP_ASSIST, -1, -1);
        init_pair(CP_NOTICE, COLOR_YELLOW, -1);
        init_pair(CP_ERROR, COLOR_RED, -1);
        init_pair(CP_STATUS, COLOR_BLACK, COLOR_CYAN);
        init_pair(CP_RSS, COLOR_GREEN, -1);
        init_pair(CP_FILE, COLOR_BLUE, -1);
        init_pair(CP_ANON, COLOR_MAGENTA, -1);
        init_pair(CP_DIM, COLOR_WHITE, -1);
        draw_init_colors();
    }
    ui_term_arm();   /* bracketed paste on; the terminal back on any way out */

    if (cfg->demo)
        note(a, TR_NOTICE, "DEMO: this model was synthesized with random weights. It runs the real "
                           "engine (watch the status bar and F3) but its text means nothing.");
    if (cfg->system && *cfg->system) set_system(a, cfg->system, strlen(cfg->system));
    chats_begin(a);
    a->attach = cfg->attach;                 /* -f files: ours now */
    memset(&cfg->attach, 0, sizeof cfg->attach);
    if (a->attach.n) {
        char msg[160];
        snprintf(msg, sizeof msg, "%d file%s attached: %s with your first message", a->attach.n,
                 a->attach.n > 1 ? "s" : "", a->attach.n > 1 ? "they go" : "it goes");
        note(a, TR_NOTICE, msg);
    }
    draw_layout(a);
    a->dirty = true;
    while (!a->quit && !got_signal) {
        /* Resizes in quick succession (a window dragged, tmux re-attached)
           can leave a row stale until Ctrl-L: once the size has been still
           for 150 ms, the whole screen is laid out and painted again. */
        if (a->resized_ms && ember_now_ms() - a->resized_ms >= 150) {
            a->resized_ms = 0;
            draw_layout(a);
            a->dirty = true;
        }
        if (a->dirty) draw_all(a);
        struct pollfd p[2] = {{.fd = 0, .events = POLLIN}, {.fd = ember_worker_fd(a->w), .events = POLLIN}};
        int pr = poll(p, 2, a->resized_ms || a->fetching ? 50 : 250);
        if (pr < 0 && errno != EINTR) break;
        if (p[0].revents & (POLLHUP | POLLERR)) break;
        wtimeout(a->wi, 0);
        wint_t ch;
        int r;
        for (int i = 0; i < 256 && (r = wget_wch(a->wi, &ch)) != ERR && !a->quit; i++) app_on_key(a, r, ch);
        ember_event ev;
        for (int i = 0; i < 4096 && ember_worker_poll(a->w, &ev); i++) {
            on_event(a, &ev);
            ember_event_clear(&ev);
        }
        if (a->fetching) fetch_check(a);
    }
    /* before the screen is kept, so that a failed save's error is on it */
    bool saved = chats_settle(a);
    /* a first load's pack cache file is finished before the model goes
       (an MoE's is as large as the model: a minute on a slow disk), which
       the screen says rather than seeming to hang */
    if (a->st.have_stats && a->st.st.pack_cache == EMBER_PACK_CACHE_WRITING) {
        set_flash(a, "finishing the pack cache file for the next start...");
        draw_all(a);
    }
    ember_worker_free(a->w);
    ui_term_disarm();
    endwin();
    /* the alternate screen took the conversation away: its last screen
       stays in the shell (one row left for the prompt that follows) */
    if (cfg->keep_screen && ui_keep_screen(&a->tr, a->rows - 1, a->cols, a->raw, a->ascii, stdout) == 0)
        fflush(stdout);
    if (!saved) fprintf(stderr, "ember: the conversation's last turns are not saved: %s\n", a->save_err);
    chats_end(a);
    ui_input_free(a->in);
    tr_free(&a->tr);
    ui_attach_clear(&a->attach);
    free(a->system);
    free(a);
    /* Killed by SIGTERM / SIGHUP / SIGINT: say so in the status, as the
       default action would have. */
    return got_signal ? 128 + got_signal : 0;
}
