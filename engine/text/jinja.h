/* A sandboxed interpreter for the Jinja2 subset that chat templates use
 * (a GGUF's tokenizer.chat_template), configured like Hugging Face's
 * apply_chat_template: trim_blocks and lstrip_blocks on, break/continue,
 * a tojson that leaves non-ASCII alone, raise_exception() and
 * strftime_now() as globals.
 *
 * A template may come from any downloaded file, so nothing here trusts it:
 * it cannot reach files or the environment, every render runs under a step
 * budget, a memory cap, an output cap and a nesting cap, and any input --
 * malformed template or hostile data -- ends in either text or an error,
 * never a crash or a hang.
 *
 * The engine reads JSON itself (jinja_vars_set_json) instead of linking a
 * JSON library: the library must not pull UI-side dependencies, and its own
 * reader keeps what the template sees exactly what Python's json.loads would
 * give (integers stay integers, object keys keep their order). */
#ifndef EMBER_JINJA_H
#define EMBER_JINJA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef enum {
    JINJA_OK = 0,
    JINJA_ERR_SYNTAX,    /* the template does not parse */
    JINJA_ERR_RAISED,    /* the template called raise_exception(msg) */
    JINJA_ERR_RUNTIME,   /* type errors, undefined values used, bad calls */
    JINJA_ERR_LIMIT,     /* step budget, output, memory or nesting cap */
    JINJA_ERR_INPUT,     /* bad JSON or bad arguments from the caller */
} jinja_status;

typedef struct jinja_error {
    jinja_status status;
    int line;            /* template line (1-based), 0 when not tied to one */
    char msg[512];       /* for JINJA_ERR_RAISED: the template's own message */
} jinja_error;

/* The Python exception class jinja2 would raise for this kind of error
   ("TemplateSyntaxError", "TemplateError", ...), for messages and tests. */
const char *jinja_status_name(jinja_status s);

/* ---- templates ---------------------------------------------------------- */
typedef struct jinja_template jinja_template;

/* Parses len bytes of template source.  NULL with err filled on a syntax
   error (err->line says where) or when memory runs out. */
jinja_template *jinja_parse(const char *src, size_t len, jinja_error *err);
void jinja_template_free(jinja_template *t);

/* ---- variables ------------------------------------------------------------ */
/* The top-level names a render sees.  Values are copied in; a render works
   on its own copy, so one jinja_vars can serve many renders. */
typedef struct jinja_vars jinja_vars;

jinja_vars *jinja_vars_new(void);
void jinja_vars_free(jinja_vars *v);
/* Each returns 0, or -1 with err filled (bad JSON, out of memory). */
int jinja_vars_set_string(jinja_vars *v, const char *name, const char *s, jinja_error *err);
int jinja_vars_set_bool(jinja_vars *v, const char *name, bool b, jinja_error *err);
/* Any JSON value (object keys keep their order; integers stay integers). */
int jinja_vars_set_json(jinja_vars *v, const char *name, const char *json, size_t len,
                        jinja_error *err);
/* Every member of a JSON object becomes a variable. */
int jinja_vars_update_json(jinja_vars *v, const char *json, size_t len, jinja_error *err);

typedef struct jinja_msg {
    const char *role;     /* "system", "user", "assistant", "tool" ... */
    const char *content;
} jinja_msg;
/* `messages` as a list of {role, content} dicts. */
int jinja_vars_set_messages(jinja_vars *v, const jinja_msg *msgs, size_t n, jinja_error *err);

/* ---- rendering ------------------------------------------------------------ */
typedef struct jinja_limits {
    uint64_t max_steps;   /* evaluation steps (0: default, about a second of work) */
    size_t max_output;    /* bytes of rendered text (0: default 16 MiB) */
    size_t max_memory;    /* bytes of values alive during a render (0: default 256 MiB) */
    int max_depth;        /* nested evaluation: macros, expressions (0: default) */
} jinja_limits;

typedef struct jinja_render_opts {
    /* What strftime_now() formats; NULL takes the local time at the call. */
    const struct tm *now;
    jinja_limits limits;
} jinja_render_opts;

/* Renders t with vars (NULL: none).  Returns the malloc'd text, NUL
   terminated (the text itself may hold NULs: *len is its length), or NULL
   with err filled. */
char *jinja_render(const jinja_template *t, const jinja_vars *vars,
                   const jinja_render_opts *opts, size_t *len, jinja_error *err);

/* The chat's call: parse + render in one go with the variables that
   Hugging Face's apply_chat_template passes (messages, add_generation_prompt,
   bos_token, eos_token) plus named boolean switches such as
   enable_thinking.  bos/eos may be NULL (then undefined). */
typedef struct jinja_flag {
    const char *name;
    bool value;
} jinja_flag;

char *jinja_render_chat(const char *tmpl, const jinja_msg *msgs, size_t n,
                        bool add_generation_prompt, const char *bos, const char *eos,
                        const struct tm *now, const jinja_flag *flags, size_t n_flags,
                        size_t *len, jinja_error *err);

#endif
