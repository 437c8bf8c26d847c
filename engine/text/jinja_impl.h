/* Internals shared by the jinja_*.c files.
 *
 * Memory: every value, AST node and temporary string lives in an arena that
 * is dropped whole at the end of a parse or render.  Values are never freed
 * one by one, so reference cycles (a list appended to itself), aliasing and
 * early exits cost nothing, and the arena's byte count is the memory cap.
 *
 * Errors: parse and render failures longjmp to the entry point (jx_fail).
 * That is safe because nothing between holds a resource the arena or the
 * context does not own; it keeps the hundreds of fallible operations from
 * each needing an error path. */
#ifndef EMBER_JINJA_IMPL_H
#define EMBER_JINJA_IMPL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "jinja.h"

#if defined(__GNUC__)
#define JX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define JX_NORETURN __attribute__((noreturn))
#else
#define JX_PRINTF(a, b)
#define JX_NORETURN
#endif

/* ---- failure -------------------------------------------------------------- */
typedef struct jx_fail_ctx {
    jmp_buf jb;
    jinja_error *err;
    int line;                 /* where evaluation or parsing is */
} jx_fail_ctx;

JX_NORETURN void jx_fail(jx_fail_ctx *f, jinja_status st, const char *fmt, ...) JX_PRINTF(3, 4);

/* ---- arena ---------------------------------------------------------------- */
typedef struct jx_chunk jx_chunk;
typedef struct jx_arena {
    jx_chunk *head;
    size_t used, max;         /* bytes handed out, cap (0: none) */
    jx_fail_ctx *fail;        /* where to go when the cap or malloc fails */
    uint64_t *charge;         /* step counter billed for bytes copied, or NULL */
} jx_arena;

void *jx_alloc(jx_arena *a, size_t n);            /* zeroed, 16-byte aligned */
void *jx_grow(jx_arena *a, void *p, size_t old, size_t n);
void jx_arena_free(jx_arena *a);

/* ---- values --------------------------------------------------------------- */
typedef enum {
    JT_UNDEF = 0, JT_NONE, JT_BOOL, JT_INT, JT_FLOAT, JT_STR,
    JT_LIST, JT_DICT, JT_NS, JT_FUNC, JT_LOOP,
    JT_ITER,                  /* an iterator or a dict view over a jx_list (see iter there) */
    JT_ABSENT,                /* internal: an argument nobody passed */
} jx_type;

typedef struct jx_str {
    size_t len;
    bool safe;                /* markupsafe's Markup (the safe and escape filters): + escapes the other operand */
    char s[];                 /* NUL terminated after len bytes */
} jx_str;

typedef struct jx_list jx_list;
typedef struct jx_dict jx_dict;
typedef struct jx_func jx_func;
typedef struct jx_loop jx_loop;

typedef struct jx_val {
    jx_type t;
    union {
        bool b;
        int64_t i;
        double f;
        const jx_str *s;      /* JT_STR; for JT_UNDEF the error hint or NULL */
        jx_list *l;
        jx_dict *d;           /* JT_DICT and JT_NS */
        jx_func *fn;
        jx_loop *loop;
    } u;
} jx_val;

struct jx_list {
    size_t n, cap;
    jx_val *v;
    bool tuple;
    bool group;               /* a groupby row: .grouper / .list */
    /* JT_ITER only.  jinja2's map, select, unique, reverse ... return Python
       iterators and dict.keys() ... return views, and templates can tell
       them from lists: an iterator is always true, has no len(), no index,
       no JSON, and iterating it uses it up; a view has a len() and stays.
       iter is Python's type name ("generator", "dict_keys"); n and v are
       the items still to come. */
    const char *iter;
    bool view;
};

struct jx_dict {
    size_t n, cap;
    jx_val *k, *v;
    /* From DICT_INDEX_MIN keys on, a hash table of positions + 1 (0: free
       slot), so a template that grows a dict or its variables to 100k
       entries is not quadratic.  Entries may be stale (the dict was cut
       short: a loop resets its scope): a lookup checks the key at the
       position, and the table is rebuilt when half full. */
    uint32_t *ix;
    size_t ixcap, ixused;
};

/* Argument lists: positional, then keyword. */
typedef struct jx_args {
    int npos, nkw;
    jx_val *pos;
    const jx_str **kwname;
    jx_val *kw;
} jx_args;

typedef struct jx_ctx jx_ctx;
typedef struct jx_node jx_node;
typedef struct jx_scope jx_scope;
typedef jx_val (*jx_builtin)(jx_ctx *c, jx_val self, const jx_args *a);

/* FN_SELF is jinja2's `self` (a TemplateReference: its attributes are the
   template's blocks, it is not callable); FN_BLOCK is one of those blocks
   (a BlockReference: calling it renders the block again). */
typedef enum { FN_BUILTIN, FN_MACRO, FN_CALLER, FN_SELF, FN_BLOCK } jx_fnkind;
struct jx_func {
    jx_fnkind kind;
    const char *name;
    jx_builtin fn;            /* FN_BUILTIN */
    jx_val self;              /* bound receiver of a method, or JT_ABSENT */
    const jx_node *node;      /* FN_MACRO: the macro; FN_CALLER: the call block; FN_BLOCK: the block */
    jx_scope *closure;
};

struct jx_loop {
    const jx_val *items;      /* NULL when counting a range */
    int64_t start, step;      /* the range: item i is start + i * step */
    size_t n, i;
    int depth;                /* 1, and one more per loop(...) of a recursive loop */
    const jx_node *node;      /* the for statement, which loop(items) runs again when recursive */
    jx_scope *scope;          /* the scope it runs in */
    jx_val changed;           /* loop.changed()'s last arguments; JT_ABSENT before its first call */
};

/* Constructors (strings are copied into the arena). */
static inline jx_val jv_undef(void) { jx_val v = {JT_UNDEF, {0}}; return v; }
static inline jx_val jv_none(void) { jx_val v = {JT_NONE, {0}}; v.u.i = 0; return v; }
static inline jx_val jv_absent(void) { jx_val v = {JT_ABSENT, {0}}; return v; }
static inline jx_val jv_bool(bool b) { jx_val v = {JT_BOOL, {0}}; v.u.b = b; return v; }
static inline jx_val jv_int(int64_t i) { jx_val v = {JT_INT, {0}}; v.u.i = i; return v; }
static inline jx_val jv_float(double f) { jx_val v = {JT_FLOAT, {0}}; v.u.f = f; return v; }
static inline jx_val jv_strv(const jx_str *s) { jx_val v = {JT_STR, {0}}; v.u.s = s; return v; }

const jx_str *jx_str_new(jx_arena *a, const char *s, size_t n);
/* s's text as a safe string (Markup), and s with & < > " ' escaped as
   markupsafe escapes them, safe */
const jx_str *jx_str_safe(jx_arena *a, const jx_str *s);
const jx_str *jx_html_escape(jx_arena *a, const jx_str *s);
const jx_str *jx_str_c(jx_arena *a, const char *s);
jx_val jv_str(jx_arena *a, const char *s, size_t n);
jx_val jv_cstr(jx_arena *a, const char *s);
jx_val jv_undef_hint(jx_arena *a, const char *fmt, ...) JX_PRINTF(2, 3);
jx_val jv_list(jx_arena *a, size_t cap);
jx_val jv_tuple2(jx_arena *a, jx_val x, jx_val y);
/* The (key, value) tuples of d, in order: a list (the items filter and
   dict.items() wrap it as their iterator or view). */
jx_val jx_dict_pairs(jx_arena *a, const jx_dict *d);
/* The list value l (not used elsewhere) as an iterator or, with view, a
   dict view, of Python type pytype. */
jx_val jv_iter(jx_val l, const char *pytype, bool view);
/* Uses up the first k of an iterator's items (no-op for a view). */
void jx_iter_drop(jx_val it, size_t k);
jx_val jv_dict(jx_arena *a);
void jx_list_push(jx_arena *a, jx_list *l, jx_val v);
/* NULL when absent. */
jx_val *jx_dict_find(jx_dict *d, jx_val key);
jx_val *jx_dict_finds(jx_dict *d, const char *key, size_t n);
void jx_dict_set(jx_arena *a, jx_dict *d, jx_val key, jx_val v);
/* A copy of the whole tree in another arena (render inputs). */
jx_val jx_deep_copy(jx_arena *a, jx_val v, int depth, jx_fail_ctx *f);

static inline bool jv_is_str(jx_val v) { return v.t == JT_STR; }
static inline bool jv_is_num(jx_val v) { return v.t == JT_INT || v.t == JT_FLOAT || v.t == JT_BOOL; }
static inline bool jv_is_seq(jx_val v) { return v.t == JT_LIST; }
bool jx_truthy(jx_val v);
const char *jx_type_name(jx_val v);     /* Python's name: 'str', 'dict', 'NoneType' */

/* Python equality and ordering (ordering fails the render on mismatched
   types, as Python raises TypeError). */
bool jx_equal(jx_val a, jx_val b);
int jx_compare(jx_ctx *c, jx_val a, jx_val b);

/* String building in the arena. */
typedef struct jx_sb {
    jx_arena *a;
    char *p;
    size_t n, cap;
} jx_sb;
void jx_sb_init(jx_sb *b, jx_arena *a);
void jx_sb_add(jx_sb *b, const char *s, size_t n);
void jx_sb_addc(jx_sb *b, char ch);
void jx_sb_addcp(jx_sb *b, uint32_t cp);         /* as UTF-8 */
void jx_sb_printf(jx_sb *b, const char *fmt, ...) JX_PRINTF(2, 3);
const jx_str *jx_sb_str(jx_sb *b);
jx_val jx_sb_val(jx_sb *b);

/* Python's str() and repr() of a value, appended to b; depth guards
   self-containing lists. */
void jx_str_of(jx_ctx *c, jx_sb *b, jx_val v);
void jx_repr_of(jx_ctx *c, jx_sb *b, jx_val v, int depth);
const jx_str *jx_to_str(jx_ctx *c, jx_val v);
void jx_float_repr(char *buf, size_t cap, double f);   /* Python repr(float) */

/* UTF-8: Python indexes strings by code point.  A byte that is not valid
   UTF-8 counts as one code point, so slicing never splits or loses bytes. */
uint32_t jx_utf8_next(const char *s, size_t n, size_t *i);
size_t jx_utf8_count(const char *s, size_t n);
bool jx_is_space(uint32_t cp);          /* Python str.isspace() */
uint32_t jx_upper(uint32_t cp);
uint32_t jx_lower(uint32_t cp);
bool jx_is_alpha(uint32_t cp);          /* a cased letter or a non-ASCII letter */
bool jx_is_digit(uint32_t cp);
/* Python's str.splitlines(): the line that starts at *i ends at the offset
   returned, and *i moves past its line break (\n, \r\n, \r, \v, \f,
   \x1c-\x1e, U+0085, U+2028, U+2029), or to n on the last line. */
size_t jx_line_end(const char *s, size_t n, size_t *i);

/* ---- tokens and AST -------------------------------------------------------- */
typedef enum {
    TK_EOF, TK_TEXT, TK_VAR_BEGIN, TK_VAR_END, TK_BLOCK_BEGIN, TK_BLOCK_END,
    TK_NAME, TK_STRING, TK_INT, TK_FLOAT, TK_OP,
} jx_tokt;

typedef enum {
    OP_NONE, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_TILDE,
    OP_LPAREN, OP_RPAREN, OP_LBRACKET, OP_RBRACKET, OP_LBRACE, OP_RBRACE,
    OP_COMMA, OP_DOT, OP_COLON, OP_PIPE, OP_ASSIGN,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE, OP_IN, OP_NOTIN,
    OP_NEG, OP_POS, OP_NOT,
} jx_op;

typedef struct jx_tok {
    jx_tokt t;
    jx_op op;
    int line;
    const jx_str *s;          /* TEXT, NAME, STRING (decoded) */
    int64_t i;
    double f;
} jx_tok;

typedef struct jx_toks {
    jx_tok *v;
    size_t n, cap;
} jx_toks;

/* Splits the (newline-normalised) source into tokens; fails via f. */
void jx_lex(jx_arena *a, jx_fail_ctx *f, const char *src, size_t n, jx_toks *out);

typedef enum {
    /* expressions */
    N_LIT, N_NAME, N_LIST, N_TUPLE, N_DICT, N_ATTR, N_ITEM, N_SLICE, N_CALL,
    N_FILTER, N_TEST, N_UNARY, N_BIN, N_AND, N_OR, N_NOT, N_CMP, N_COND,
    /* statements */
    S_TEXT, S_OUT, S_IF, S_FOR, S_SET, S_SETBLOCK, S_MACRO, S_CALLBLOCK,
    S_FILTERBLOCK, S_BREAK, S_CONTINUE, S_WITH, S_BLOCK,
    S_LOAD,                   /* extends, include, import, from: need a template loader */
} jx_nkind;

typedef jx_val (*jx_filter_fn)(jx_ctx *c, jx_val in, const jx_args *a);
typedef bool (*jx_test_fn)(jx_ctx *c, jx_val in, const jx_args *a);

typedef struct jx_nodes {
    jx_node **v;
    int n;
} jx_nodes;

/* jx_node.uses: the special names a macro or call block body reads */
enum { USES_CALLER = 1, USES_KWARGS = 2, USES_VARARGS = 4 };
/* and for an S_BLOCK with a name, its modifiers */
enum { BLOCK_SCOPED = 1, BLOCK_REQUIRED = 2 };

struct jx_node {
    jx_nkind kind;
    int line;
    jx_op op;                 /* N_UNARY, N_BIN; N_TEST: 1 when negated; S_FOR: 1 when recursive */
    unsigned char uses;       /* S_MACRO, S_CALLBLOCK: USES_*; S_BLOCK: BLOCK_* */
    jx_val lit;               /* N_LIT, S_TEXT */
    const jx_str *name;       /* names, attributes, filters, tests, macros */
    jx_node *x, *y, *z, *w;   /* operands; see jinja_parse.c per kind */
    jx_nodes args;            /* items, positional arguments, parameters */
    jx_nodes kwargs;          /* dict values, keyword values, parameter defaults */
    const jx_str **kwnames;   /* keyword argument names (kwargs.n of them) */
    jx_op *ops;               /* N_CMP: one per args item */
    jx_nodes body, orelse;
    jx_filter_fn filter_fn;   /* N_FILTER: looked up on first use */
    jx_test_fn test_fn;       /* N_TEST: likewise */
};

/* Parses the token list into the top-level statement list; *blocks gets
   the template's named {% block %}s, wherever they are. */
jx_nodes jx_parse_tokens(jx_arena *a, jx_fail_ctx *f, const jx_toks *toks, jx_nodes *blocks);
/* Fails, as jinja2's compiler, on an unknown filter or test name outside
   an if (jinja_names.c). */
void jx_check_names(jx_fail_ctx *f, jx_nodes body);

struct jinja_template {
    jx_arena arena;
    jx_nodes body;
    jx_nodes blocks;          /* named {% block %}s, for self.name() */
};

/* ---- evaluation ------------------------------------------------------------ */
struct jx_scope {
    jx_scope *parent;
    jx_dict vars;
};

struct jx_ctx {
    jx_fail_ctx fail;
    jx_arena *a;
    char *out;                /* rendered text (malloc'd, owned by the render) */
    size_t out_len, out_cap, out_max;
    uint64_t steps, max_steps;
    int depth, max_depth;
    struct tm now;
    jx_scope *globals;        /* builtins, under the render's variables */
    jx_scope *top;            /* the render's variables and top-level sets: what blocks see */
    jx_nodes blocks;          /* the template's named blocks */
};

JX_NORETURN void jx_rt_fail(jx_ctx *c, const char *fmt, ...) JX_PRINTF(2, 3);
/* Work done by helpers that have no context (UTF-8 counts, equality,
   number parsing: one unit per 64 bytes or 16 items), billed to the
   render's step budget at its next jx_step.  Without it a loop of 100k
   `s|length` or `l.index(x)` over big values ran for minutes: each
   costs one step but scans the whole value. */
extern _Thread_local uint64_t jx_work;
/* Fails unless v is defined: Python's operations on jinja2's Undefined. */
void jx_need_defined(jx_ctx *c, jx_val v);
void jx_step(jx_ctx *c, uint64_t n);

/* Calls any callable value (builtin, macro, caller). */
jx_val jx_call(jx_ctx *c, jx_val fn, const jx_args *a);
/* obj.name (attribute first, then item) and obj[key] (item first), as
   jinja2's getattr and getitem. */
jx_val jx_getattr(jx_ctx *c, jx_val obj, const jx_str *name);
jx_val jx_getitem(jx_ctx *c, jx_val obj, jx_val key);
/* The items a for loop visits: list items, dict keys, string characters. */
jx_val *jx_iterate(jx_ctx *c, jx_val v, size_t *n);
jx_val jx_builtin_fn(jx_ctx *c, const char *name, jx_builtin fn, jx_val self);

/* Filters, tests and methods are tables (jinja_filters.c, jinja_methods.c). */
jx_filter_fn jx_find_filter(const char *name);
jx_test_fn jx_find_test(const char *name);
/* self.name when it is a method of a str, list or dict: the bound method,
   or for one that changes a list or dict in place the undefined value that
   the immutable sandbox gives (it fails when called); false when the type
   has no method by that name. */
bool jx_method(jx_ctx *c, jx_val self, const char *name, jx_val *out);
void jx_install_globals(jx_ctx *c, jx_scope *s);
/* The range() global, and the count of range(start, stop, step) after the
   sandbox's size check (for loops count it without building the list). */
jx_val jx_range(jx_ctx *c, jx_val self, const jx_args *a);
size_t jx_range_len(jx_ctx *c, const jx_args *a, int64_t *start, int64_t *step);

/* Binds arguments to named parameters: out[i] is JT_ABSENT when not passed.
   Fails on unknown keywords or too many positionals. */
void jx_bind(jx_ctx *c, const char *fname, const jx_args *a, const char *const *names,
             int nnames, jx_val *out);

/* Binds a builtin's arguments by name into p[] (in the order named):
   BIND("filter", "arg1", "arg2") in a function with parameters c and a. */
#define BIND(fname, ...)                                                         \
    static const char *const names_[] = {__VA_ARGS__};                           \
    jx_val p[sizeof names_ / sizeof names_[0]];                                  \
    jx_bind(c, fname, a, names_, (int)(sizeof names_ / sizeof names_[0]), p)
#define NOARGS(fname) jx_bind(c, fname, a, NULL, 0, NULL)

/* An argument the call did not pass. */
static inline bool given(jx_val v) { return v.t != JT_ABSENT; }
/* Helpers for argument checks. */
const jx_str *jx_arg_str(jx_ctx *c, const char *fname, jx_val v);
int64_t jx_arg_int(jx_ctx *c, const char *fname, jx_val v);
/* Applies a filter or test by name (used by map, select and friends). */
jx_val jx_apply_filter(jx_ctx *c, const char *name, jx_val in, const jx_args *a);
bool jx_apply_test(jx_ctx *c, const char *name, jx_val in, const jx_args *a);

/* Python's int(text, base) (base 0 or 2..36) and float(text) (jinja_numparse.c). */
typedef enum { JX_NUM_OK, JX_NUM_BAD, JX_NUM_RANGE } jx_numparse;
jx_numparse jx_parse_int(const jx_str *s, int base, int64_t *out);
bool jx_parse_float(const jx_str *s, double *out);

/* Shared pieces of filters, methods and operators. */
jx_val jx_case_map(jx_ctx *c, jx_val in, bool up);
jx_val jx_percent_format(jx_ctx *c, const jx_str *fmt, const jx_args *a);   /* str % args */
jx_val jx_str_replace(jx_ctx *c, const jx_str *s, const jx_str *old, const jx_str *new_, int64_t count);
jx_val jx_strip(jx_ctx *c, const jx_str *s, jx_val chars, bool left, bool right);
jx_val jx_binop_add(jx_ctx *c, jx_val a, jx_val b);
jx_val jx_str_format(jx_ctx *c, jx_val self, const jx_args *a);            /* str.format */
/* The wordwrap filter: Python's textwrap as jinja2 calls it (jinja_textwrap.c). */
jx_val jx_wordwrap(jx_ctx *c, const jx_str *s, int64_t width, bool break_long, const jx_str *wrapstring,
                   jx_val break_on_hyphens);
/* The striptags filter: markupsafe's Markup.striptags() (jinja_striptags.c). */
jx_val jx_striptags(jx_ctx *c, const jx_str *s);
/* Runs a parsed template with vars as its top-level scope (jinja_eval.c). */
void jx_render_body(jx_ctx *c, jx_nodes body, jx_nodes blocks, jx_dict *vars);

/* JSON (jinja_json.c): parse into values, and Python's json.dumps. */
jx_val jx_json_parse(jx_arena *a, jx_fail_ctx *f, const char *s, size_t n);
typedef struct jx_json_fmt {
    int indent;               /* < 0: none */
    const char *indent_str;   /* when indent came as a string */
    const char *item_sep, *key_sep;
    bool sort_keys, ascii;
} jx_json_fmt;
void jx_json_dump(jx_ctx *c, jx_sb *b, jx_val v, const jx_json_fmt *fmt, int depth);

#endif
