/* Jinja parser: tokens to an AST, following jinja2's grammar and operator
 * precedence (so `a ~ b + c` is `(a ~ b) + c` and `-x|abs` filters -x,
 * as there).
 *
 * Node fields by kind (see jinja_impl.h):
 *   N_ATTR x.name      N_ITEM x[y]        N_SLICE x[y:z:w]
 *   N_CALL x(args, kwnames=kwargs, *y, **z)   N_FILTER x|name(args ... *y, **z)
 *   N_TEST x is [not: op=1] name(args ... *y, **z)    N_UNARY op x   N_BIN x op y
 *   N_CMP x (ops[i] args[i])...           N_COND x if y else z
 *   S_IF if x: body else orelse           S_FOR for x in y if z [recursive: op=1]: body else orelse
 *   S_SET x = y       S_SETBLOCK x |z: body     S_MACRO name(args=kwargs): body
 *   S_CALLBLOCK call(args=kwargs) x: body     S_FILTERBLOCK x: body
 *   S_WITH args=kwargs: body
 *   S_BLOCK name [uses=BLOCK_*]: body        (name NULL: {% generation %})
 *   S_LOAD name x: {% extends x %}, {% include x %}, {% import x as ... %}, {% from x import ... %} */
#include "config.h"

#include "jinja_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MAX_NEST = 300 };   /* parser recursion: about 100 nested parentheses */

typedef struct nbuild {
    jx_node **v;
    int n, cap;
} nbuild;

typedef struct parser {
    jx_arena *a;
    jx_fail_ctx *f;
    const jx_tok *t;
    size_t i, n;
    int depth;
    int loops;                /* enclosing for loops (break/continue are valid) */
    nbuild *blocks;           /* named blocks so far */
} parser;

static void nb_push(parser *P, nbuild *b, jx_node *x)
{
    if (b->n == b->cap) {
        int nc = b->cap ? b->cap * 2 : 4;
        b->v = jx_grow(P->a, b->v, (size_t)b->cap * sizeof *b->v, (size_t)nc * sizeof *b->v);
        b->cap = nc;
    }
    b->v[b->n++] = x;
}

static jx_nodes nb_done(nbuild *b)
{
    jx_nodes r = {b->v, b->n};
    return r;
}

static const jx_tok *cur(parser *P) { return &P->t[P->i]; }
static const jx_tok *peek(parser *P, size_t k) { return &P->t[P->i + k < P->n ? P->i + k : P->n - 1]; }
static void next(parser *P) { if (P->i + 1 < P->n) P->i++; }

static bool is_op(parser *P, jx_op op) { return cur(P)->t == TK_OP && cur(P)->op == op; }
static bool tok_is_name(const jx_tok *t, const char *s)
{
    return t->t == TK_NAME && t->s->len == strlen(s) && !memcmp(t->s->s, s, t->s->len);
}
static bool is_name(parser *P, const char *s) { return tok_is_name(cur(P), s); }

static const char *tok_desc(const jx_tok *t)
{
    switch (t->t) {
    case TK_EOF: return "end of template";
    case TK_TEXT: return "template text";
    case TK_VAR_BEGIN: return "'{{'";
    case TK_VAR_END: return "'}}'";
    case TK_BLOCK_BEGIN: return "'{%'";
    case TK_BLOCK_END: return "'%}'";
    case TK_NAME: return "name";
    case TK_STRING: return "string";
    case TK_INT: return "integer";
    case TK_FLOAT: return "float";
    case TK_OP: return "operator";
    }
    return "token";
}

JX_NORETURN JX_PRINTF(2, 3) static void pfail(parser *P, const char *fmt, ...);
static void pfail(parser *P, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    P->f->line = cur(P)->line;
    jx_fail(P->f, JINJA_ERR_SYNTAX, "%s", buf);
}

JX_NORETURN static void unexpected(parser *P, const char *wanted)
{
    const jx_tok *t = cur(P);
    if (t->t == TK_NAME) pfail(P, "expected %s, got '%.*s'", wanted, (int)(t->s->len > 40 ? 40 : t->s->len), t->s->s);
    pfail(P, "expected %s, got %s", wanted, tok_desc(t));
}

static void expect_op(parser *P, jx_op op, const char *what)
{
    if (!is_op(P, op)) unexpected(P, what);
    next(P);
}

static void expect_block_end(parser *P)
{
    if (cur(P)->t != TK_BLOCK_END) unexpected(P, "end of statement block");
    next(P);
}

static jx_node *node(parser *P, jx_nkind k, int line)
{
    jx_node *x = jx_alloc(P->a, sizeof *x);
    x->kind = k;
    x->line = line;
    return x;
}

static void enter(parser *P)
{
    if (++P->depth > MAX_NEST) pfail(P, "template nested too deeply (over %d levels)", MAX_NEST);
}

/* ---- expressions ----------------------------------------------------------- */
static jx_node *parse_expression(parser *P, bool with_condexpr);
static jx_node *parse_unary(parser *P, bool with_filter);
static jx_node *parse_primary(parser *P);
static jx_node *parse_postfix(parser *P, jx_node *x);
static jx_node *parse_filter_expr(parser *P, jx_node *x);

typedef enum { END_NONE, END_IN, END_RECURSIVE } end_rule;

static bool tuple_end(parser *P, end_rule r)
{
    const jx_tok *t = cur(P);
    if (t->t == TK_VAR_END || t->t == TK_BLOCK_END || t->t == TK_EOF) return true;
    if (t->t == TK_OP && t->op == OP_RPAREN) return true;
    if (r == END_IN && tok_is_name(t, "in")) return true;
    if (r == END_RECURSIVE && tok_is_name(t, "recursive")) return true;
    return false;
}

/* Comma-separated expressions; a tuple when a comma appears. */
static jx_node *parse_tuple(parser *P, bool simplified, bool with_condexpr, end_rule r, bool explicit_parens)
{
    int line = cur(P)->line;
    nbuild items = {0};
    bool is_tuple = false;
    for (;;) {
        if (items.n) expect_op(P, OP_COMMA, "','");
        if (tuple_end(P, r)) break;
        nb_push(P, &items, simplified ? parse_primary(P) : parse_expression(P, with_condexpr));
        if (is_op(P, OP_COMMA)) is_tuple = true;
        else break;
    }
    if (!is_tuple) {
        if (items.n) return items.v[0];
        if (!explicit_parens) unexpected(P, "an expression");
    }
    jx_node *t = node(P, N_TUPLE, line);
    t->args = nb_done(&items);
    return t;
}

/* (args, name=value, *dyn_args, **dyn_kwargs) into x's args, kwnames and
   kwargs, and y and z for the starred ones, in the orders jinja2 accepts:
   no positional after a keyword or a star, no * after **, nothing after **
   but keywords (AI21 Jamba's template calls `macros[i](*params[i])`). */
static void parse_call_args(parser *P, jx_node *x)
{
    expect_op(P, OP_LPAREN, "'('");
    nbuild pos = {0}, kw = {0};
    const jx_str **names = NULL;
    int cap = 0;
    bool first = true;
    while (!is_op(P, OP_RPAREN)) {
        if (!first) {
            expect_op(P, OP_COMMA, "',' or ')'");
            if (is_op(P, OP_RPAREN)) break;
        }
        first = false;
        if (is_op(P, OP_MUL)) {
            if (x->y || x->z) pfail(P, "invalid syntax for function call expression");
            next(P);
            x->y = parse_expression(P, true);
            continue;
        }
        if (is_op(P, OP_POW)) {
            if (x->z) pfail(P, "invalid syntax for function call expression");
            next(P);
            x->z = parse_expression(P, true);
            continue;
        }
        if (cur(P)->t == TK_NAME && peek(P, 1)->t == TK_OP && peek(P, 1)->op == OP_ASSIGN) {
            if (x->z) pfail(P, "invalid syntax for function call expression");
            const jx_str *name = cur(P)->s;
            next(P);
            next(P);
            if (kw.n == cap) {
                int nc = cap ? cap * 2 : 4;
                names = jx_grow(P->a, names, (size_t)cap * sizeof *names, (size_t)nc * sizeof *names);
                cap = nc;
            }
            names[kw.n] = name;
            nb_push(P, &kw, parse_expression(P, true));
        } else {
            if (kw.n || x->y || x->z) pfail(P, "invalid syntax for function call expression");
            nb_push(P, &pos, parse_expression(P, true));
        }
    }
    next(P);
    x->args = nb_done(&pos);
    x->kwargs = nb_done(&kw);
    x->kwnames = names;
}

/* A filter or test name: NAME ('.' NAME)* */
static const jx_str *dotted_name(parser *P)
{
    if (cur(P)->t != TK_NAME) unexpected(P, "a filter or test name");
    const jx_str *name = cur(P)->s;
    next(P);
    while (is_op(P, OP_DOT) && peek(P, 1)->t == TK_NAME) {
        next(P);
        jx_sb b;
        jx_sb_init(&b, P->a);
        jx_sb_add(&b, name->s, name->len);
        jx_sb_addc(&b, '.');
        jx_sb_add(&b, cur(P)->s->s, cur(P)->s->len);
        name = jx_sb_str(&b);
        next(P);
    }
    return name;
}

/* x|f|g(...); x is NULL for a {% filter %} block, whose input is the body. */
static jx_node *parse_filter(parser *P, jx_node *x, bool start_inline)
{
    while (is_op(P, OP_PIPE) || start_inline) {
        if (!start_inline) next(P);
        start_inline = false;
        jx_node *f = node(P, N_FILTER, cur(P)->line);
        f->name = dotted_name(P);
        f->filter_fn = jx_find_filter(f->name->s);
        f->x = x;
        if (is_op(P, OP_LPAREN)) parse_call_args(P, f);
        x = f;
    }
    return x;
}

static jx_node *parse_test(parser *P, jx_node *x)
{
    jx_node *t = node(P, N_TEST, cur(P)->line);
    next(P);                                  /* 'is' */
    if (is_name(P, "not")) {
        next(P);
        t->op = 1;
    }
    t->name = dotted_name(P);
    t->test_fn = jx_find_test(t->name->s);
    t->x = x;
    const jx_tok *c = cur(P);
    if (is_op(P, OP_LPAREN)) {
        parse_call_args(P, t);
    } else if ((c->t == TK_NAME || c->t == TK_STRING || c->t == TK_INT || c->t == TK_FLOAT ||
                (c->t == TK_OP && (c->op == OP_LPAREN || c->op == OP_LBRACKET || c->op == OP_LBRACE))) &&
               !is_name(P, "else") && !is_name(P, "or") && !is_name(P, "and")) {
        if (is_name(P, "is")) pfail(P, "You cannot chain multiple tests with is");
        nbuild one = {0};
        nb_push(P, &one, parse_postfix(P, parse_primary(P)));
        t->args = nb_done(&one);
    }
    return t;
}

static jx_node *parse_filter_expr(parser *P, jx_node *x)
{
    for (;;) {
        if (is_op(P, OP_PIPE)) x = parse_filter(P, x, false);
        else if (is_name(P, "is")) x = parse_test(P, x);
        else if (is_op(P, OP_LPAREN)) {
            jx_node *c = node(P, N_CALL, cur(P)->line);
            c->x = x;
            parse_call_args(P, c);
            x = c;
        } else break;
    }
    return x;
}

static jx_node *parse_subscript(parser *P, jx_node *x)
{
    int line = cur(P)->line;
    if (is_op(P, OP_DOT)) {
        next(P);
        if (cur(P)->t == TK_NAME) {
            jx_node *a = node(P, N_ATTR, line);
            a->x = x;
            a->name = cur(P)->s;
            next(P);
            return a;
        }
        if (cur(P)->t != TK_INT) unexpected(P, "a name or number after '.'");
        jx_node *it = node(P, N_ITEM, line), *k = node(P, N_LIT, line);
        k->lit = jv_int(cur(P)->i);
        next(P);
        it->x = x;
        it->y = k;
        return it;
    }
    next(P);                                  /* '[' */
    nbuild parts = {0};
    while (!is_op(P, OP_RBRACKET)) {
        if (parts.n) {
            expect_op(P, OP_COMMA, "',' or ']'");
            if (is_op(P, OP_RBRACKET)) break;
        }
        jx_node *start = NULL, *stop = NULL, *step = NULL;
        if (!is_op(P, OP_COLON)) {
            start = parse_expression(P, true);
            if (!is_op(P, OP_COLON)) {
                nb_push(P, &parts, start);
                continue;
            }
        }
        next(P);                              /* ':' */
        if (!is_op(P, OP_RBRACKET) && !is_op(P, OP_COMMA) && !is_op(P, OP_COLON)) stop = parse_expression(P, true);
        if (is_op(P, OP_COLON)) {
            next(P);
            if (!is_op(P, OP_RBRACKET) && !is_op(P, OP_COMMA)) step = parse_expression(P, true);
        }
        jx_node *s = node(P, N_SLICE, line);
        s->y = start;
        s->z = stop;
        s->w = step;
        nb_push(P, &parts, s);
    }
    next(P);
    if (parts.n == 0) pfail(P, "expected a subscript");
    jx_node *idx = parts.v[0];
    if (parts.n > 1) {
        for (int k = 0; k < parts.n; k++)
            if (parts.v[k]->kind == N_SLICE) pfail(P, "a slice inside a tuple subscript is not supported");
        idx = node(P, N_TUPLE, line);
        idx->args = nb_done(&parts);
    }
    if (idx->kind == N_SLICE) {
        idx->x = x;
        return idx;
    }
    jx_node *it = node(P, N_ITEM, line);
    it->x = x;
    it->y = idx;
    return it;
}

static jx_node *parse_postfix(parser *P, jx_node *x)
{
    for (;;) {
        if (is_op(P, OP_DOT) || is_op(P, OP_LBRACKET)) x = parse_subscript(P, x);
        else if (is_op(P, OP_LPAREN)) {
            jx_node *c = node(P, N_CALL, cur(P)->line);
            c->x = x;
            parse_call_args(P, c);
            x = c;
        } else break;
    }
    return x;
}

static jx_node *parse_primary(parser *P)
{
    const jx_tok *t = cur(P);
    jx_node *x;
    enter(P);
    switch (t->t) {
    case TK_NAME:
        x = node(P, N_LIT, t->line);
        if (tok_is_name(t, "true") || tok_is_name(t, "True")) x->lit = jv_bool(true);
        else if (tok_is_name(t, "false") || tok_is_name(t, "False")) x->lit = jv_bool(false);
        else if (tok_is_name(t, "none") || tok_is_name(t, "None")) x->lit = jv_none();
        else {
            x->kind = N_NAME;
            x->name = t->s;
        }
        next(P);
        break;
    case TK_STRING: {
        /* adjacent literals join, as in Python */
        x = node(P, N_LIT, t->line);
        jx_sb b;
        jx_sb_init(&b, P->a);
        while (cur(P)->t == TK_STRING) {
            jx_sb_add(&b, cur(P)->s->s, cur(P)->s->len);
            next(P);
        }
        x->lit = jx_sb_val(&b);
        break;
    }
    case TK_INT: case TK_FLOAT:
        x = node(P, N_LIT, t->line);
        x->lit = t->t == TK_INT ? jv_int(t->i) : jv_float(t->f);
        next(P);
        break;
    case TK_OP:
        if (t->op == OP_LPAREN) {
            next(P);
            x = parse_tuple(P, false, true, END_NONE, true);
            expect_op(P, OP_RPAREN, "')'");
            break;
        }
        if (t->op == OP_LBRACKET || t->op == OP_LBRACE) {
            bool dict = t->op == OP_LBRACE;
            jx_op close = dict ? OP_RBRACE : OP_RBRACKET;
            x = node(P, dict ? N_DICT : N_LIST, t->line);
            next(P);
            nbuild items = {0}, vals = {0};
            while (!is_op(P, close)) {
                if (items.n) {
                    expect_op(P, OP_COMMA, dict ? "',' or '}'" : "',' or ']'");
                    if (is_op(P, close)) break;
                }
                nb_push(P, &items, parse_expression(P, true));
                if (dict) {
                    expect_op(P, OP_COLON, "':'");
                    nb_push(P, &vals, parse_expression(P, true));
                }
            }
            next(P);
            x->args = nb_done(&items);
            x->kwargs = nb_done(&vals);
            break;
        }
        /* fall through */
    default:
        unexpected(P, "an expression");
    }
    P->depth--;
    return x;
}

static jx_node *parse_unary(parser *P, bool with_filter)
{
    jx_node *x;
    enter(P);
    if (is_op(P, OP_SUB) || is_op(P, OP_ADD)) {
        x = node(P, N_UNARY, cur(P)->line);
        x->op = is_op(P, OP_SUB) ? OP_NEG : OP_POS;
        next(P);
        x->x = parse_unary(P, false);
    } else {
        x = parse_primary(P);
    }
    x = parse_postfix(P, x);
    if (with_filter) x = parse_filter_expr(P, x);
    P->depth--;
    return x;
}

static jx_node *binary(parser *P, jx_op op, jx_node *l, jx_node *r, int line)
{
    jx_node *b = node(P, N_BIN, line);
    b->op = op;
    b->x = l;
    b->y = r;
    return b;
}

/* The left-associative arithmetic levels, loosest first, as Jinja's parser
   has them (math1, concat, math2, pow); below the last level, a unary
   expression with its filters.  OP_NONE ends a level's list. */
static const jx_op arith_levels[][5] = {
    {OP_ADD, OP_SUB},
    {OP_TILDE},
    {OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD},
    {OP_POW},
};
enum { N_ARITH_LEVELS = sizeof arith_levels / sizeof arith_levels[0] };

static jx_node *parse_arith(parser *P, int level)
{
    if (level == N_ARITH_LEVELS) return parse_unary(P, true);
    jx_node *x = parse_arith(P, level + 1);
    for (;;) {
        const jx_op *op = arith_levels[level];
        while (*op != OP_NONE && !is_op(P, *op)) op++;
        if (*op == OP_NONE) return x;
        int line = cur(P)->line;
        next(P);
        x = binary(P, *op, x, parse_arith(P, level + 1), line);
    }
}

static jx_node *parse_math1(parser *P) { return parse_arith(P, 0); }

static jx_node *parse_compare(parser *P)
{
    jx_node *x = parse_math1(P);
    nbuild rhs = {0};
    jx_op *ops = NULL;
    int cap = 0;
    int line = cur(P)->line;
    for (;;) {
        jx_op op;
        const jx_tok *t = cur(P);
        if (t->t == TK_OP && t->op >= OP_EQ && t->op <= OP_GE) {
            op = t->op;
            next(P);
        } else if (tok_is_name(t, "in")) {
            op = OP_IN;
            next(P);
        } else if (tok_is_name(t, "not") && tok_is_name(peek(P, 1), "in")) {
            op = OP_NOTIN;
            next(P);
            next(P);
        } else break;
        if (rhs.n == cap) {
            int nc = cap ? cap * 2 : 2;
            ops = jx_grow(P->a, ops, (size_t)cap * sizeof *ops, (size_t)nc * sizeof *ops);
            cap = nc;
        }
        ops[rhs.n] = op;
        nb_push(P, &rhs, parse_math1(P));
    }
    if (!rhs.n) return x;
    jx_node *c = node(P, N_CMP, line);
    c->x = x;
    c->args = nb_done(&rhs);
    c->ops = ops;
    return c;
}

static jx_node *parse_not(parser *P)
{
    if (is_name(P, "not")) {
        jx_node *n = node(P, N_NOT, cur(P)->line);
        next(P);
        enter(P);
        n->x = parse_not(P);
        P->depth--;
        return n;
    }
    return parse_compare(P);
}

/* `and` binds tighter than `or`: level 0 is or, level 1 and, then not. */
static jx_node *parse_logic(parser *P, int level)
{
    static const struct { const char *word; jx_nkind kind; } logic[] = {{"or", N_OR}, {"and", N_AND}};
    if (level == 2) return parse_not(P);
    jx_node *x = parse_logic(P, level + 1);
    while (is_name(P, logic[level].word)) {
        jx_node *b = node(P, logic[level].kind, cur(P)->line);
        next(P);
        b->x = x;
        b->y = parse_logic(P, level + 1);
        x = b;
    }
    return x;
}

static jx_node *parse_or(parser *P) { return parse_logic(P, 0); }

static jx_node *parse_condexpr(parser *P)
{
    enter(P);
    jx_node *x = parse_or(P);
    while (is_name(P, "if")) {
        jx_node *c = node(P, N_COND, cur(P)->line);
        next(P);
        c->x = x;
        c->y = parse_or(P);
        if (is_name(P, "else")) {
            next(P);
            c->z = parse_condexpr(P);
        }
        x = c;
    }
    P->depth--;
    return x;
}

static jx_node *parse_expression(parser *P, bool with_condexpr)
{
    return with_condexpr ? parse_condexpr(P) : parse_or(P);
}

/* ---- statements ------------------------------------------------------------ */
static bool valid_target(const jx_node *t, bool allow_attr)
{
    if (t->kind == N_NAME) return true;
    if (allow_attr && t->kind == N_ATTR && t->x->kind == N_NAME) return true;
    if (t->kind != N_TUPLE) return false;
    for (int i = 0; i < t->args.n; i++)
        if (!valid_target(t->args.v[i], false)) return false;
    return true;
}

static jx_node *parse_assign_target(parser *P, bool with_namespace, end_rule r)
{
    jx_node *t;
    if (with_namespace && cur(P)->t == TK_NAME && peek(P, 1)->t == TK_OP && peek(P, 1)->op == OP_DOT &&
        peek(P, 2)->t == TK_NAME) {
        jx_node *base = node(P, N_NAME, cur(P)->line);
        base->name = cur(P)->s;
        next(P);
        next(P);
        t = node(P, N_ATTR, cur(P)->line);
        t->x = base;
        t->name = cur(P)->s;
        next(P);
        return t;
    }
    t = parse_tuple(P, true, true, r, false);
    if (!valid_target(t, false)) pfail(P, "can't assign to this expression");
    if (r == END_IN && t->kind == N_NAME && !strcmp(t->name->s, "loop"))
        pfail(P, "Can't assign to special loop variable in for-loop target");
    return t;
}

static jx_nodes parse_body(parser *P, const char *const *ends, const jx_str **which);

/* Macro and call-block parameters: (name[=default], ...) */
static void parse_params(parser *P, jx_node *m)
{
    expect_op(P, OP_LPAREN, "'('");
    nbuild names = {0}, defs = {0};
    bool seen_default = false;
    while (!is_op(P, OP_RPAREN)) {
        if (names.n) expect_op(P, OP_COMMA, "',' or ')'");
        if (is_op(P, OP_RPAREN)) break;
        if (cur(P)->t != TK_NAME) unexpected(P, "a parameter name");
        jx_node *n = node(P, N_NAME, cur(P)->line);
        n->name = cur(P)->s;
        next(P);
        jx_node *d = NULL;
        if (is_op(P, OP_ASSIGN)) {
            next(P);
            d = parse_expression(P, true);
            seen_default = true;
        } else if (seen_default) {
            pfail(P, "non-default argument follows default argument");
        }
        nb_push(P, &names, n);
        nb_push(P, &defs, d);
    }
    next(P);
    m->args = nb_done(&names);
    m->kwargs = nb_done(&defs);
}

/* jinja2 gives a macro a caller, kwargs or varargs parameter only when its
   body reads that name (find_undeclared): without it, extra positional or
   keyword arguments are an error.  Like jinja2's visitor this walks in
   source order, and a name assigned or taken as a parameter before it is
   read stops counting; it does not look into {% block %}s. */
typedef struct uses_walk {
    unsigned tracked, used;
} uses_walk;

static unsigned special_name(const jx_str *n)
{
    return !strcmp(n->s, "caller") ? USES_CALLER : !strcmp(n->s, "kwargs") ? USES_KWARGS
         : !strcmp(n->s, "varargs") ? USES_VARARGS : 0;
}

static void uses_load(uses_walk *w, const jx_node *x, int depth);

static void uses_load_all(uses_walk *w, jx_nodes v, int depth)
{
    for (int i = 0; i < v.n; i++) uses_load(w, v.v[i], depth);
}

static void uses_store(uses_walk *w, const jx_node *t, int depth)
{
    if (!t) return;
    if (t->kind == N_NAME) w->tracked &= ~special_name(t->name);
    else if (t->kind == N_TUPLE)
        for (int i = 0; i < t->args.n; i++) uses_store(w, t->args.v[i], depth);
    else uses_load(w, t, depth);                      /* ns.attr reads ns */
}

static void uses_load(uses_walk *w, const jx_node *x, int depth)
{
    if (!x || depth > MAX_NEST * 4) return;           /* deeper (long operator chains) fails at render */
    depth++;
    switch (x->kind) {
    case N_NAME: w->used |= special_name(x->name) & w->tracked; return;
    case S_BLOCK:
        if (x->name) return;                          /* a named block is a function of its own */
        uses_load_all(w, x->body, depth);
        return;
    case S_SET: uses_store(w, x->x, depth); uses_load(w, x->y, depth); return;
    case S_SETBLOCK: uses_store(w, x->x, depth); uses_load(w, x->z, depth); uses_load_all(w, x->body, depth); return;
    case S_FOR:
        uses_store(w, x->x, depth);
        uses_load(w, x->y, depth);
        uses_load_all(w, x->body, depth);
        uses_load_all(w, x->orelse, depth);
        uses_load(w, x->z, depth);
        return;
    case S_WITH:
        for (int i = 0; i < x->args.n; i++) uses_store(w, x->args.v[i], depth);
        uses_load_all(w, x->kwargs, depth);
        uses_load_all(w, x->body, depth);
        return;
    case S_MACRO: case S_CALLBLOCK:
        if (x->kind == S_CALLBLOCK) uses_load(w, x->x, depth);
        for (int i = 0; i < x->args.n; i++) uses_store(w, x->args.v[i], depth);
        uses_load_all(w, x->kwargs, depth);
        uses_load_all(w, x->body, depth);
        return;
    default:
        uses_load(w, x->x, depth);
        uses_load_all(w, x->args, depth);
        uses_load_all(w, x->kwargs, depth);
        uses_load(w, x->y, depth);
        uses_load(w, x->z, depth);
        uses_load(w, x->w, depth);
        uses_load_all(w, x->body, depth);
        uses_load_all(w, x->orelse, depth);
        return;
    }
}

static unsigned char body_uses(jx_nodes body)
{
    uses_walk w = {USES_CALLER | USES_KWARGS | USES_VARARGS, 0};
    uses_load_all(&w, body, 0);
    return (unsigned char)w.used;
}

static jx_node *parse_statement(parser *P)
{
    const jx_tok *t = cur(P);
    int line = t->line;
    const jx_str *name = t->s;
    const jx_str *which = NULL;
    next(P);
#define IS(w) (name->len == sizeof(w) - 1 && !memcmp(name->s, w, sizeof(w) - 1))
    if (IS("if") || IS("elif")) {
        jx_node *x = node(P, S_IF, line);
        x->x = parse_tuple(P, false, false, END_NONE, false);
        expect_block_end(P);
        static const char *const ends[] = {"elif", "else", "endif", NULL};
        x->body = parse_body(P, ends, &which);
        if (!strcmp(which->s, "elif")) {
            P->i--;                           /* re-read 'elif' as a nested if */
            nbuild one = {0};
            nb_push(P, &one, parse_statement(P));
            x->orelse = nb_done(&one);
            return x;
        }
        if (!strcmp(which->s, "else")) {
            expect_block_end(P);
            static const char *const end_if[] = {"endif", NULL};
            x->orelse = parse_body(P, end_if, &which);
        }
        expect_block_end(P);
        return x;
    }
    if (IS("for")) {
        jx_node *x = node(P, S_FOR, line);
        x->x = parse_assign_target(P, false, END_IN);
        if (!is_name(P, "in")) unexpected(P, "'in'");
        next(P);
        x->y = parse_tuple(P, false, false, END_RECURSIVE, false);
        if (is_name(P, "if")) {
            next(P);
            x->z = parse_expression(P, true);
        }
        if (is_name(P, "recursive")) {
            next(P);
            x->op = 1;
        }
        expect_block_end(P);
        static const char *const ends[] = {"endfor", "else", NULL};
        P->loops++;
        x->body = parse_body(P, ends, &which);
        P->loops--;
        if (!strcmp(which->s, "else")) {
            expect_block_end(P);
            static const char *const end_for[] = {"endfor", NULL};
            x->orelse = parse_body(P, end_for, &which);
        }
        expect_block_end(P);
        return x;
    }
    if (IS("set")) {
        jx_node *target = parse_assign_target(P, true, END_NONE);
        if (is_op(P, OP_ASSIGN)) {
            next(P);
            jx_node *x = node(P, S_SET, line);
            x->x = target;
            x->y = parse_tuple(P, false, true, END_NONE, false);
            expect_block_end(P);
            return x;
        }
        jx_node *x = node(P, S_SETBLOCK, line);
        x->x = target;
        x->z = parse_filter(P, NULL, false);
        expect_block_end(P);
        static const char *const ends[] = {"endset", NULL};
        x->body = parse_body(P, ends, &which);
        expect_block_end(P);
        return x;
    }
    if (IS("macro")) {
        jx_node *x = node(P, S_MACRO, line);
        if (cur(P)->t != TK_NAME) unexpected(P, "a macro name");
        x->name = cur(P)->s;
        next(P);
        parse_params(P, x);
        expect_block_end(P);
        static const char *const ends[] = {"endmacro", NULL};
        int loops = P->loops;
        P->loops = 0;
        x->body = parse_body(P, ends, &which);
        P->loops = loops;
        x->uses = body_uses(x->body);
        if (cur(P)->t == TK_NAME) next(P);    /* {% endmacro name %} */
        expect_block_end(P);
        return x;
    }
    if (IS("call")) {
        jx_node *x = node(P, S_CALLBLOCK, line);
        if (is_op(P, OP_LPAREN)) parse_params(P, x);
        x->x = parse_expression(P, true);
        if (x->x->kind != N_CALL) pfail(P, "expected a call after {%% call %%}");
        expect_block_end(P);
        static const char *const ends[] = {"endcall", NULL};
        int loops = P->loops;
        P->loops = 0;
        x->body = parse_body(P, ends, &which);
        P->loops = loops;
        x->uses = body_uses(x->body);
        expect_block_end(P);
        x->name = jx_str_c(P->a, "caller");
        return x;
    }
    if (IS("filter")) {
        jx_node *x = node(P, S_FILTERBLOCK, line);
        x->x = parse_filter(P, NULL, true);
        expect_block_end(P);
        static const char *const ends[] = {"endfilter", NULL};
        x->body = parse_body(P, ends, &which);
        expect_block_end(P);
        return x;
    }
    if (IS("with")) {
        jx_node *x = node(P, S_WITH, line);
        nbuild names = {0}, vals = {0};
        while (cur(P)->t != TK_BLOCK_END) {
            if (names.n) expect_op(P, OP_COMMA, "','");
            nb_push(P, &names, parse_assign_target(P, false, END_NONE));
            expect_op(P, OP_ASSIGN, "'='");
            nb_push(P, &vals, parse_expression(P, true));
        }
        x->args = nb_done(&names);
        x->kwargs = nb_done(&vals);
        expect_block_end(P);
        static const char *const ends[] = {"endwith", NULL};
        x->body = parse_body(P, ends, &which);
        expect_block_end(P);
        return x;
    }
    if (IS("break") || IS("continue")) {
        if (!P->loops) {
            P->i--;
            pfail(P, "'%s' outside of a for loop", name->s);
        }
        jx_node *x = node(P, IS("break") ? S_BREAK : S_CONTINUE, line);
        expect_block_end(P);
        return x;
    }
    if (IS("generation")) {
        /* Hugging Face's assistant-mask tag: its body, rendered in place */
        jx_node *x = node(P, S_BLOCK, line);
        expect_block_end(P);
        static const char *const ends[] = {"endgeneration", NULL};
        x->body = parse_body(P, ends, &which);
        expect_block_end(P);
        return x;
    }
    if (IS("extends") || IS("include") || IS("import") || IS("from")) {
        /* Hugging Face renders from a string, with no loader: jinja2 fails
           any of these once it runs, so they parse (a template may carry
           one in a branch it never takes) and fail when reached */
        jx_node *x = node(P, S_LOAD, line);
        x->name = name;
        x->x = parse_expression(P, true);
        if (IS("include") && is_name(P, "ignore") && tok_is_name(peek(P, 1), "missing")) {
            next(P);
            next(P);
        }
        bool names = IS("from");
        if (IS("import")) {
            if (!is_name(P, "as")) unexpected(P, "'as'");
            next(P);
            if (cur(P)->t != TK_NAME) unexpected(P, "a name");
            next(P);
        }
        if (names) {
            if (!is_name(P, "import")) unexpected(P, "'import'");
            next(P);
        }
        for (bool first = true; names; first = false) {
            /* jinja2's parse_from: names, each maybe `as alias`, up to an
               optional with/without context */
            if (!first) expect_op(P, OP_COMMA, "','");
            if ((is_name(P, "with") || is_name(P, "without")) && tok_is_name(peek(P, 1), "context")) break;
            if (cur(P)->t != TK_NAME) unexpected(P, "name");
            if (cur(P)->s->s[0] == '_') pfail(P, "names starting with an underline can not be imported");
            next(P);
            if (is_name(P, "as")) {
                next(P);
                if (cur(P)->t != TK_NAME) unexpected(P, "name");
                next(P);
            }
            if (!is_op(P, OP_COMMA)) break;
        }
        if (!IS("extends") && (is_name(P, "with") || is_name(P, "without")) && tok_is_name(peek(P, 1), "context")) {
            next(P);
            next(P);
        }
        expect_block_end(P);
        return x;
    }
    if (IS("block")) {
        /* jinja2's parse_block.  Without inheritance a block renders in
           place and self.name() renders it again (jinja_eval.c).  Its body
           is a function of its own in jinja2: no break or continue from
           an enclosing loop reaches into it. */
        jx_node *x = node(P, S_BLOCK, line);
        if (cur(P)->t != TK_NAME) unexpected(P, "a block name");
        x->name = cur(P)->s;
        next(P);
        if (is_name(P, "scoped")) {
            next(P);
            x->uses |= BLOCK_SCOPED;
        }
        if (is_name(P, "required")) {
            next(P);
            x->uses |= BLOCK_REQUIRED;
        }
        if (is_op(P, OP_SUB))
            pfail(P, "Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an "
                     "underscore instead.");
        expect_block_end(P);
        static const char *const ends[] = {"endblock", NULL};
        int loops = P->loops;
        P->loops = 0;
        x->body = parse_body(P, ends, &which);
        P->loops = loops;
        if (x->uses & BLOCK_REQUIRED) {
            /* jinja2 allows only whitespace (Python's isspace: not empty) */
            for (int i = 0; i < x->body.n; i++) {
                const jx_node *b = x->body.v[i];
                bool space = b->kind == S_TEXT && b->lit.u.s->len > 0;
                for (size_t k = 0; space && k < b->lit.u.s->len;)
                    space = jx_is_space(jx_utf8_next(b->lit.u.s->s, b->lit.u.s->len, &k));
                if (!space) pfail(P, "Required blocks can only contain comments or whitespace");
            }
        }
        if (cur(P)->t == TK_NAME && cur(P)->s->len == x->name->len && !memcmp(cur(P)->s->s, x->name->s, x->name->len))
            next(P);                          /* {% endblock name %} */
        expect_block_end(P);
        nb_push(P, P->blocks, x);
        return x;
    }
#undef IS
    P->i--;
    pfail(P, "Encountered unknown tag '%.*s'.", (int)(name->len > 40 ? 40 : name->len), name->s);
}

static jx_nodes parse_body(parser *P, const char *const *ends, const jx_str **which)
{
    nbuild body = {0};
    enter(P);
    for (;;) {
        const jx_tok *t = cur(P);
        if (t->t == TK_EOF) {
            if (!ends) break;
            char want[200] = "";
            for (int k = 0; ends[k]; k++) {
                size_t l = strlen(want);
                snprintf(want + l, sizeof want - l, "%s'%s'", k ? " or " : "", ends[k]);
            }
            pfail(P, "Unexpected end of template. Jinja was looking for the following tags: %s.", want);
        }
        if (t->t == TK_TEXT) {
            jx_node *x = node(P, S_TEXT, t->line);
            x->lit = jv_strv(t->s);
            nb_push(P, &body, x);
            next(P);
            continue;
        }
        if (t->t == TK_VAR_BEGIN) {
            next(P);
            jx_node *x = node(P, S_OUT, t->line);
            x->x = parse_tuple(P, false, true, END_NONE, false);
            if (cur(P)->t != TK_VAR_END) unexpected(P, "end of print statement");
            next(P);
            nb_push(P, &body, x);
            continue;
        }
        if (t->t != TK_BLOCK_BEGIN) unexpected(P, "template text or a tag");
        next(P);
        t = cur(P);
        if (t->t != TK_NAME) unexpected(P, "a tag name");
        if (ends)
            for (int k = 0; ends[k]; k++)
                if (tok_is_name(t, ends[k])) {
                    *which = t->s;
                    next(P);
                    P->depth--;
                    return nb_done(&body);
                }
        static const char *const stray[] = {"endif", "endfor", "endset", "endmacro", "endcall", "endfilter",
                                            "endwith", "endblock", "endgeneration", "elif", "else", "endraw", NULL};
        for (int k = 0; stray[k]; k++)
            if (tok_is_name(t, stray[k])) pfail(P, "Encountered unexpected tag '%s'.", stray[k]);
        nb_push(P, &body, parse_statement(P));
    }
    P->depth--;
    return nb_done(&body);
}

jx_nodes jx_parse_tokens(jx_arena *a, jx_fail_ctx *f, const jx_toks *toks, jx_nodes *blocks)
{
    nbuild named = {0};
    parser P = {a, f, toks->v, 0, toks->n, 0, 0, &named};
    jx_nodes body = parse_body(&P, NULL, NULL);
    /* jinja2's compiler checks this once the whole template has parsed */
    jx_dict seen = {0};
    for (int i = 0; i < named.n; i++) {
        const jx_str *name = named.v[i]->name;
        if (jx_dict_finds(&seen, name->s, name->len)) {
            f->line = named.v[i]->line;
            jx_fail(f, JINJA_ERR_SYNTAX, "block '%.100s' defined twice", name->s);
        }
        jx_dict_set(a, &seen, jv_strv(name), jv_none());
    }
    *blocks = nb_done(&named);
    return body;
}
