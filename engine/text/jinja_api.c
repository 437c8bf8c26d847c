/* The public jinja.h entry points: they own the arenas, catch the longjmp
 * of any failure, and set the limits a render runs under. */
#include "config.h"

#include "jinja_impl.h"

#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    DEFAULT_STEPS = 20 * 1000 * 1000,
    DEFAULT_DEPTH = 1000,
};
#define DEFAULT_OUTPUT ((size_t)16 << 20)
#define DEFAULT_MEMORY ((size_t)256 << 20)

/* Numbers print and parse with a decimal point and strftime_now() names
   months in English, as in Python, whatever locale the program set (the
   chat's setlocale(LC_ALL, "") may pick a decimal comma): each entry point
   switches its thread to the C locale for the duration of the call. */
static locale_t c_loc;
static pthread_once_t c_loc_once = PTHREAD_ONCE_INIT;
static void c_loc_init(void) { c_loc = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

static locale_t enter_c_locale(void)
{
    pthread_once(&c_loc_once, c_loc_init);
    return c_loc ? uselocale(c_loc) : (locale_t)0;
}

static void leave_c_locale(locale_t old)
{
    if (old) uselocale(old);
}

const char *jinja_status_name(jinja_status s)
{
    switch (s) {
    case JINJA_OK: return "OK";
    case JINJA_ERR_SYNTAX: return "TemplateSyntaxError";
    case JINJA_ERR_RAISED: return "TemplateError";
    case JINJA_ERR_RUNTIME: return "TemplateRuntimeError";
    case JINJA_ERR_LIMIT: return "SecurityError";
    case JINJA_ERR_INPUT: return "ValueError";
    }
    return "Error";
}

static void clear_err(jinja_error *err)
{
    if (!err) return;
    err->status = JINJA_OK;
    err->line = 0;
    err->msg[0] = 0;
}

/* ---- templates ------------------------------------------------------------------ */
/* setjmp lives in its own frame, whose locals are never changed after it */
static int parse_into(jinja_template *t, jx_fail_ctx *f, const char *src, size_t len)
{
    if (setjmp(f->jb)) return -1;
    jx_toks toks = {0};
    jx_lex(&t->arena, f, src, len, &toks);
    t->body = jx_parse_tokens(&t->arena, f, &toks, &t->blocks);
    jx_check_names(f, t->body);
    return 0;
}

jinja_template *jinja_parse(const char *src, size_t len, jinja_error *err)
{
    jinja_error scratch;
    if (!err) err = &scratch;
    clear_err(err);
    jinja_template *t = calloc(1, sizeof *t);
    jx_fail_ctx *f = calloc(1, sizeof *f);
    if (!t || !f) {
        free(t);
        free(f);
        err->status = JINJA_ERR_LIMIT;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    f->err = err;
    t->arena.fail = f;
    t->arena.max = DEFAULT_MEMORY;
    locale_t old = enter_c_locale();
    int rc = parse_into(t, f, src ? src : "", src ? len : 0);
    leave_c_locale(old);
    t->arena.fail = NULL;                     /* renders never allocate here */
    free(f);
    if (rc) {
        jx_arena_free(&t->arena);
        free(t);
        return NULL;
    }
    return t;
}

void jinja_template_free(jinja_template *t)
{
    if (!t) return;
    jx_arena_free(&t->arena);
    free(t);
}

/* ---- variables -------------------------------------------------------------------- */
struct jinja_vars {
    jx_arena arena;
    jx_dict vars;
};

jinja_vars *jinja_vars_new(void)
{
    jinja_vars *v = calloc(1, sizeof *v);
    if (v) v->arena.max = DEFAULT_MEMORY;
    return v;
}

void jinja_vars_free(jinja_vars *v)
{
    if (!v) return;
    jx_arena_free(&v->arena);
    free(v);
}

/* Each setter runs under its own failure context: a bad JSON text or a
   failed allocation leaves the variables as they were before. */
typedef enum { SET_STRING, SET_BOOL, SET_JSON, SET_UPDATE, SET_MESSAGES } set_kind;

typedef struct set_req {
    set_kind kind;
    const char *name;
    const char *text;
    size_t len;
    bool b;
    const jinja_msg *msgs;
} set_req;

static int vars_apply_c(jinja_vars *v, const set_req *q, jinja_error *err)
{
    jinja_error scratch;
    if (!err) err = &scratch;
    clear_err(err);
    if (!v) {
        err->status = JINJA_ERR_INPUT;
        snprintf(err->msg, sizeof err->msg, "no variables");
        return -1;
    }
    jx_fail_ctx *f = calloc(1, sizeof *f);
    if (!f) {
        err->status = JINJA_ERR_LIMIT;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    f->err = err;
    jx_arena *a = &v->arena;
    a->fail = f;
    jx_dict saved = v->vars;
    if (setjmp(f->jb)) {
        v->vars = saved;
        a->fail = NULL;
        free(f);
        return -1;
    }
    /* set into a copy of the table so a failure cannot leave it half-written */
    jx_dict d = {0};
    for (size_t i = 0; i < saved.n; i++) jx_dict_set(a, &d, saved.k[i], saved.v[i]);
    switch (q->kind) {
    case SET_STRING: jx_dict_set(a, &d, jv_cstr(a, q->name), jv_cstr(a, q->text ? q->text : "")); break;
    case SET_BOOL: jx_dict_set(a, &d, jv_cstr(a, q->name), jv_bool(q->b)); break;
    case SET_JSON: jx_dict_set(a, &d, jv_cstr(a, q->name), jx_json_parse(a, f, q->text, q->len)); break;
    case SET_UPDATE: {
        jx_val o = jx_json_parse(a, f, q->text, q->len);
        if (o.t != JT_DICT) jx_fail(f, JINJA_ERR_INPUT, "expected a JSON object of variables");
        for (size_t i = 0; i < o.u.d->n; i++) jx_dict_set(a, &d, o.u.d->k[i], o.u.d->v[i]);
        break;
    }
    case SET_MESSAGES: {
        jx_val l = jv_list(a, q->len);
        for (size_t i = 0; i < q->len; i++) {
            jx_val m = jv_dict(a);
            jx_dict_set(a, m.u.d, jv_cstr(a, "role"), jv_cstr(a, q->msgs[i].role ? q->msgs[i].role : ""));
            jx_dict_set(a, m.u.d, jv_cstr(a, "content"), jv_cstr(a, q->msgs[i].content ? q->msgs[i].content : ""));
            l.u.l->v[i] = m;
        }
        l.u.l->n = q->len;
        jx_dict_set(a, &d, jv_cstr(a, "messages"), l);
        break;
    }
    }
    v->vars = d;
    a->fail = NULL;
    free(f);
    return 0;
}

static int vars_apply(jinja_vars *v, const set_req *q, jinja_error *err)
{
    locale_t old = enter_c_locale();
    int rc = vars_apply_c(v, q, err);
    leave_c_locale(old);
    return rc;
}

int jinja_vars_set_string(jinja_vars *v, const char *name, const char *s, jinja_error *err)
{
    set_req q = {SET_STRING, name, s, 0, false, NULL};
    return vars_apply(v, &q, err);
}

int jinja_vars_set_bool(jinja_vars *v, const char *name, bool b, jinja_error *err)
{
    set_req q = {SET_BOOL, name, NULL, 0, b, NULL};
    return vars_apply(v, &q, err);
}

int jinja_vars_set_json(jinja_vars *v, const char *name, const char *json, size_t len, jinja_error *err)
{
    set_req q = {SET_JSON, name, json ? json : "", json ? len : 0, false, NULL};
    return vars_apply(v, &q, err);
}

int jinja_vars_update_json(jinja_vars *v, const char *json, size_t len, jinja_error *err)
{
    set_req q = {SET_UPDATE, NULL, json ? json : "", json ? len : 0, false, NULL};
    return vars_apply(v, &q, err);
}

int jinja_vars_set_messages(jinja_vars *v, const jinja_msg *msgs, size_t n, jinja_error *err)
{
    set_req q = {SET_MESSAGES, NULL, NULL, msgs ? n : 0, false, msgs};
    return vars_apply(v, &q, err);
}

/* ---- rendering --------------------------------------------------------------------- */
static char *render_c(const jinja_template *t, const jinja_vars *vars, const jinja_render_opts *opts,
                      size_t *len, jinja_error *err)
{
    jinja_error scratch;
    if (!err) err = &scratch;
    clear_err(err);
    if (len) *len = 0;
    if (!t) {
        err->status = JINJA_ERR_INPUT;
        snprintf(err->msg, sizeof err->msg, "no template");
        return NULL;
    }
    /* on the heap: the context is written after setjmp and read after longjmp */
    jx_ctx *c = calloc(1, sizeof *c);
    jx_arena *a = calloc(1, sizeof *a);
    if (!c || !a) {
        free(c);
        free(a);
        err->status = JINJA_ERR_LIMIT;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return NULL;
    }
    jinja_limits lim = opts ? opts->limits : (jinja_limits){0};
    c->fail.err = err;
    c->a = a;
    a->fail = &c->fail;
    a->charge = &c->steps;
    a->max = lim.max_memory ? lim.max_memory : DEFAULT_MEMORY;
    c->max_steps = lim.max_steps ? lim.max_steps : DEFAULT_STEPS;
    jx_work = 0;                  /* nothing a failed render left over */
    c->out_max = lim.max_output ? lim.max_output : DEFAULT_OUTPUT;
    c->max_depth = lim.max_depth > 0 ? lim.max_depth : DEFAULT_DEPTH;
    if (opts && opts->now) c->now = *opts->now;
    else {
        time_t now = time(NULL);
        localtime_r(&now, &c->now);
    }
    if (setjmp(c->fail.jb)) {
        free(c->out);
        jx_arena_free(a);
        free(a);
        free(c);
        return NULL;
    }
    jx_dict *copy = NULL;
    if (vars) {
        /* the render works on its own copy: nothing it does (namespace
           attributes) can reach the caller's variables */
        copy = jx_alloc(a, sizeof *copy);
        for (size_t i = 0; i < vars->vars.n; i++)
            jx_dict_set(a, copy, vars->vars.k[i], jx_deep_copy(a, vars->vars.v[i], 0, &c->fail));
    }
    jx_render_body(c, t->body, t->blocks, copy);
    jx_step(c, 0);                /* bills the last helper's work (a comparison that gave up) */
    char *out = realloc(c->out, c->out_len + 1);
    if (!out) jx_fail(&c->fail, JINJA_ERR_LIMIT, "out of memory");
    c->out = out;
    out[c->out_len] = 0;
    if (len) *len = c->out_len;
    jx_arena_free(a);
    free(a);
    free(c);
    return out;
}

char *jinja_render(const jinja_template *t, const jinja_vars *vars, const jinja_render_opts *opts,
                   size_t *len, jinja_error *err)
{
    locale_t old = enter_c_locale();
    char *out = render_c(t, vars, opts, len, err);
    leave_c_locale(old);
    return out;
}

char *jinja_render_chat(const char *tmpl, const jinja_msg *msgs, size_t n, bool add_generation_prompt,
                        const char *bos, const char *eos, const struct tm *now, const jinja_flag *flags,
                        size_t n_flags, size_t *len, jinja_error *err)
{
    jinja_error scratch;
    if (!err) err = &scratch;
    jinja_template *t = jinja_parse(tmpl, tmpl ? strlen(tmpl) : 0, err);
    if (!t) return NULL;
    char *out = NULL;
    jinja_vars *v = jinja_vars_new();
    if (!v) {
        err->status = JINJA_ERR_LIMIT;
        snprintf(err->msg, sizeof err->msg, "out of memory");
        goto done;
    }
    if (jinja_vars_set_messages(v, msgs, n, err) ||
        jinja_vars_set_bool(v, "add_generation_prompt", add_generation_prompt, err) ||
        (bos && jinja_vars_set_string(v, "bos_token", bos, err)) ||
        (eos && jinja_vars_set_string(v, "eos_token", eos, err)))
        goto done;
    for (size_t i = 0; i < n_flags; i++)
        if (flags[i].name && jinja_vars_set_bool(v, flags[i].name, flags[i].value, err)) goto done;
    jinja_render_opts opts = {now, {0}};
    out = jinja_render(t, v, &opts, len, err);
done:
    jinja_vars_free(v);
    jinja_template_free(t);
    return out;
}
