/* The slash-command table, parsing, the shared handlers and completion. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "keys.h"
#include "slash.h"

static void run_help(ui_host *h, const ui_slash *s);
static void run_set(ui_host *h, const ui_slash *s);
static void run_quit(ui_host *h, const ui_slash *s);
static void run_front(ui_host *h, const ui_slash *s);

const ui_command ui_commands[] = {
    {"/help", "", "this list (keys: F1)", SL_HELP, UI_ARG_NONE, true, run_help},
    {"/clear", "", "forget the conversation (the system prompt stays)", SL_CLEAR, UI_ARG_NONE, true,
     run_front},
    {"/system", "TEXT", "set the system prompt (empty: remove it) and restart", SL_SYSTEM,
     UI_ARG_OPTIONAL, false, run_front},
    {"/set", "KEY VALUE", "change a sampling value or reasoning (auto, on, off); alone: list them", SL_SET, UI_ARG_OPTIONAL, true,
     run_set},
    {"/profile", "[NAME]", "switch profile (no name: list them; F2 cycles)", SL_PROFILE,
     UI_ARG_OPTIONAL, false, run_front},
    {"/stats", "", "last turn's numbers and the execution plan summary", SL_STATS, UI_ARG_NONE, false,
     run_front},
    {"/regen", "", "answer the last message again", SL_REGEN, UI_ARG_NONE, false, run_front},
    {"/save", "FILE", "write the transcript as Markdown (FILE.json: as JSON, like saved chats)", SL_SAVE,
     UI_ARG_REQUIRED, false, run_front},
    {"/new", "", "start a new conversation (this one stays saved)", SL_NEW, UI_ARG_NONE, true, run_front},
    {"/load", "ID", "reopen a saved conversation (a unique start of its id will do)", SL_LOAD,
     UI_ARG_REQUIRED, true, run_front},
    {"/chats", "", "list the saved conversations", SL_CHATS, UI_ARG_NONE, true, run_front},
    {"/model", "[NAME]", "load another model, keeping the conversation (no name: list them)", SL_MODEL,
     UI_ARG_OPTIONAL, false, run_front},
    {"/quit", "", "leave (also Ctrl-D)", SL_QUIT, UI_ARG_NONE, true, run_quit},
    {"/raw", "", "replies as raw text / as Markdown (also F4)", SL_RAW, UI_ARG_NONE, false, run_front},
    {"/copy", "[N|all]", "copy the last reply, its N-th code block, or the whole chat (OSC 52)", SL_COPY,
     UI_ARG_OPTIONAL, false, run_front},
    {"/read", "FILE", "add a text file to the next message (fenced, with its name)", SL_READ,
     UI_ARG_REQUIRED, true, run_front},
    {"/edit", "", "edit the draft in $VISUAL or $EDITOR (also Ctrl-X Ctrl-E)", SL_EDIT, UI_ARG_NONE, false,
     run_front},
    {"/info", "", "model, architecture, chat template, context and profile", SL_INFO, UI_ARG_NONE, true,
     run_front},
    {"/think", "[show|hide]", "unfold or fold the replies' thinking (alone: toggle; also F5)", SL_THINK,
     UI_ARG_OPTIONAL, true, run_front},
    {NULL, NULL, NULL, SL_NONE, UI_ARG_NONE, false, NULL},
};

static const ui_command *by_kind(ui_slash_kind k)
{
    for (const ui_command *c = ui_commands; c->name; c++)
        if (c->kind == k) return c;
    return NULL;
}

static int error(ui_slash *o, const char *msg, const char *a, size_t n)
{
    o->kind = SL_ERROR;
    snprintf(o->err, sizeof o->err, msg, (int)n, a);
    return 0;
}

/* /set KEY VALUE: the keys, ranges and messages are the option table's. */
static void parse_set(const char *a, size_t n, ui_slash *o)
{
    size_t k = 0;
    while (k < n && !isspace((unsigned char)a[k])) k++;
    const char *v = a + k;
    size_t vn = n - k;
    while (vn && isspace((unsigned char)*v)) v++, vn--;
    o->kind = SL_SET;
    o->set_opt = -1;
    if (k == 0) return;                          /* /set alone: list the values */
    char keys[200];
    gen_opts_set_keys(keys, sizeof keys);
    int id = gen_opt_by_set_key(a, k);
    if (id < 0) {
        o->kind = SL_ERROR;
        snprintf(o->err, sizeof o->err, "/set: unknown key '%.*s' (%s)", (int)k, a, keys);
        return;
    }
    if (vn == 0) {
        error(o, "/set %.*s: give a value, e.g. /set temp 0.7", a, k);
        return;
    }
    char buf[64], msg[200];
    snprintf(buf, sizeof buf, "%.*s", (int)(vn < 60 ? vn : 60), v);
    gen_opts_default(&o->set_val);
    o->set_val.set = 0;
    if (gen_opt_parse(id, buf, &o->set_val, msg, sizeof msg) != NUMARG_OK) {
        o->kind = SL_ERROR;
        snprintf(o->err, sizeof o->err, "/set %.*s: %s", (int)k, a, msg);
        return;
    }
    o->set_opt = id;
}

void ui_slash_parse(const char *line, ui_slash *o)
{
    memset(o, 0, sizeof *o);
    const char *p = line;
    if (p[0] != '/' || p[1] == '/') {
        o->kind = SL_NONE;
        o->arg = p[0] == '/' ? p + 1 : p;
        o->arg_len = strlen(o->arg);
        return;
    }
    size_t k = 1;
    while (p[k] && !isspace((unsigned char)p[k])) k++;
    const char *a = p + k;
    while (*a && isspace((unsigned char)*a)) a++;
    size_t n = strlen(a);
    while (n && isspace((unsigned char)a[n - 1])) n--;
    o->arg = a;
    o->arg_len = n;
    for (const ui_command *c = ui_commands; c->name; c++) {
        if (strlen(c->name) != k || strncmp(p, c->name, k)) continue;
        o->kind = c->kind;
        if (c->arg == UI_ARG_NONE && n) error(o, "this command takes no argument (got '%.*s')", a, n);
        else if (c->arg == UI_ARG_REQUIRED && !n)
            snprintf(o->err, sizeof o->err, "%s needs %s", c->name, c->args), o->kind = SL_ERROR;
        else if (c->kind == SL_SET) parse_set(a, n, o);
        else if (c->kind == SL_COPY) {
            char *end;
            long v = n ? strtol(a, &end, 10) : 0;
            if (n == 3 && !strncmp(a, "all", 3)) o->ival = -1;
            else if (n && (end != a + n || v < 1 || v > 1000000))
                error(o, "/copy takes nothing, a code block number (1, 2, ...) or 'all', not '%.*s'", a, n);
            else o->ival = v;
        } else if (c->kind == SL_THINK) {
            if (!n) o->ival = -1;
            else if (n == 4 && !strncmp(a, "show", 4)) o->ival = 1;
            else if (n == 4 && !strncmp(a, "hide", 4)) o->ival = 0;
            else error(o, "/think takes show, hide or nothing (toggle), not '%.*s'", a, n);
        }
        return;
    }
    error(o, "unknown command '%.*s' (try /help; start with // to send a line beginning with /)", p, k);
}

void ui_slash_run(ui_host *h, const ui_slash *s)
{
    if (s->kind == SL_ERROR) {
        h->say(h, 2, s->err);
        return;
    }
    const ui_command *c = by_kind(s->kind);
    if (!c) return;
    if (h->plain && !c->plain) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s is only available in the full-screen chat", c->name);
        h->say(h, 2, msg);
        return;
    }
    c->run(h, s);
}

void ui_slash_help_text(bool plain, char *buf, size_t cap)
{
    size_t used = (size_t)snprintf(buf, cap, "Commands:\n");
    for (const ui_command *c = ui_commands; c->name && used < cap; c++) {
        char head[40];
        snprintf(head, sizeof head, "%s %s", c->name, c->args);
        int w = snprintf(buf + used, cap - used, "  %-19s %s%s\n", head, c->help,
                         plain && !c->plain ? " (full-screen only)" : "");
        if (w < 0) return;
        used += (size_t)w;
    }
    if (!plain && used < cap) {
        int w = snprintf(buf + used, cap - used, "Keys:\n");
        if (w > 0 && (size_t)w < cap - used) ui_keys_text(buf + used + w, cap - used - (size_t)w, "  ");
    }
}

/* ---- the handlers all front ends share ------------------------------------ */

static void run_help(ui_host *h, const ui_slash *s)
{
    char buf[4096];
    ui_slash_help_text(h->plain, buf, sizeof buf);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '\n') buf[n - 1] = 0;
    h->say(h, 0, buf);
}

static void run_set(ui_host *h, const ui_slash *s)
{
    ui_config *c = h->cfg;
    if (s->set_opt >= 0) {
        gen_opts_overlay(&c->gen, &s->set_val);
        ember_worker_set_sampling(h->worker, &c->gen.samp, c->gen.n_predict);
        if (s->set_opt == OPT_REASONING) ember_worker_set_thinking(h->worker, gen_opts_reasoning_mode(&c->gen));
    }
    char msg[400];
    gen_opts_set_summary(&c->gen, msg, sizeof msg);
    h->say(h, s->set_opt >= 0 ? 1 : 0, msg);
}

static void run_quit(ui_host *h, const ui_slash *s) { h->quit = true; }

/* Commands that act on the front end's own state (its transcript, its
   plan): the front end's handler for the command. */
static void run_front(ui_host *h, const ui_slash *s)
{
    if (h->ops && h->ops[s->kind]) h->ops[s->kind](h, s);
}

/* Adds the candidates among words[] that start with pre; returns count. */
static int gather(const char *pre, size_t pn, const char *const *words, int nw, const char **c, int cap)
{
    int n = 0;
    for (int i = 0; (nw < 0 ? words[i] != NULL : i < nw); i++)
        if (!strncmp(words[i], pre, pn) && n < cap) c[n++] = words[i];
    return n;
}

int ui_slash_complete(const char *line, const char *const *words, int n_words,
                      char *out, size_t cap, char *list, size_t list_cap)
{
    const char *cand[64];
    int n = 0;
    size_t head;                       /* bytes of line kept before the word */
    const char *word;
    snprintf(out, cap, "%s", line);
    if (list_cap) list[0] = 0;
    if (line[0] != '/') return 0;
    const char *sp = strchr(line, ' ');
    if (!sp) {
        head = 0;
        word = line;
        const char *names[SL_COUNT];
        int nn = 0;
        for (const ui_command *c = ui_commands; c->name && nn < SL_COUNT; c++) names[nn++] = c->name;
        n = gather(word, strlen(word), names, nn, cand, 64);
    } else {
        const char *a = sp;
        while (*a == ' ') a++;
        if (strchr(a, ' ')) return 0;  /* only the first argument completes */
        head = (size_t)(a - line);
        word = a;
        size_t cmd = (size_t)(sp - line);
        if (cmd == 4 && !strncmp(line, "/set", 4)) {
            const char *keys[OPT_COUNT];
            int nk = 0;
            for (int i = 0; i < OPT_COUNT; i++)
                if (gen_opt_table[i].set_key) keys[nk++] = gen_opt_table[i].set_key;
            n = gather(word, strlen(word), keys, nk, cand, 64);
        }
        else if (((cmd == 8 && !strncmp(line, "/profile", 8)) || (cmd == 5 && !strncmp(line, "/load", 5)) ||
                  (cmd == 6 && !strncmp(line, "/model", 6))) &&
                 words)
            n = gather(word, strlen(word), words, n_words, cand, 64);
        else
            return 0;
    }
    if (n == 0) return 0;
    size_t common = strlen(cand[0]);
    for (int i = 1; i < n; i++) {
        size_t j = 0;
        while (j < common && cand[i][j] == cand[0][j]) j++;
        common = j;
    }
    snprintf(out, cap, "%.*s%.*s%s", (int)head, line, (int)common, cand[0], n == 1 ? " " : "");
    size_t used = 0;
    for (int i = 0; i < n && list_cap; i++) {
        int k = snprintf(list + used, list_cap - used, "%s%s", i ? " " : "", cand[i]);
        if (k < 0 || (size_t)k >= list_cap - used) break;
        used += (size_t)k;
    }
    return n;
}
