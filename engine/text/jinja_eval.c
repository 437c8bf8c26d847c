/* Jinja evaluation: statements write to one output buffer, expressions
 * produce values.  Scoping follows jinja2: for-loop bodies, macros and
 * {% with %} get their own scope (a fresh one per loop iteration), {% if %}
 * does not, and a macro sees the scope it was defined in -- never its
 * caller's loop variables. */
#include "config.h"

#include "jinja_impl.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { FLOW_NORMAL, FLOW_BREAK, FLOW_CONTINUE } flow;

static flow exec_body(jx_ctx *c, jx_scope *s, jx_nodes body);
static jx_val eval(jx_ctx *c, jx_scope *s, const jx_node *x);

void jx_rt_fail(jx_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jx_fail(&c->fail, JINJA_ERR_RUNTIME, "%s", buf);
}

void jx_need_defined(jx_ctx *c, jx_val v)
{
    if (v.t == JT_UNDEF || v.t == JT_ABSENT)
        jx_rt_fail(c, "%s", v.u.s ? v.u.s->s : "value is undefined");
}

_Thread_local uint64_t jx_work;

void jx_step(jx_ctx *c, uint64_t n)
{
    c->steps += n + jx_work;
    jx_work = 0;
    if (c->steps > c->max_steps)
        jx_fail(&c->fail, JINJA_ERR_LIMIT, "template exceeded its step budget (%llu steps): an endless loop?",
                (unsigned long long)c->max_steps);
}

static void enter(jx_ctx *c)
{
    if (++c->depth > c->max_depth)
        jx_fail(&c->fail, JINJA_ERR_LIMIT, "template nested too deeply (recursion over %d levels)", c->max_depth);
}

static void out_add(jx_ctx *c, const char *s, size_t n)
{
    if (!n) return;
    if (n > c->out_max - c->out_len)
        jx_fail(&c->fail, JINJA_ERR_LIMIT, "template output too large (over %zu bytes)", c->out_max);
    if (c->out_cap - c->out_len < n) {
        size_t nc = c->out_cap ? c->out_cap : 4096;
        while (nc - c->out_len < n) nc *= 2;
        char *p = realloc(c->out, nc);
        if (!p) jx_fail(&c->fail, JINJA_ERR_LIMIT, "out of memory");
        c->out = p;
        c->out_cap = nc;
    }
    memcpy(c->out + c->out_len, s, n);
    c->out_len += n;
    jx_step(c, n >> 6);
}

static void out_val(jx_ctx *c, jx_val v)
{
    if (v.t == JT_STR) {
        out_add(c, v.u.s->s, v.u.s->len);
        return;
    }
    const jx_str *s = jx_to_str(c, v);
    out_add(c, s->s, s->len);
}

/* ---- scopes ---------------------------------------------------------------- */
static jx_scope *scope_new(jx_ctx *c, jx_scope *parent)
{
    jx_scope *s = jx_alloc(c->a, sizeof *s);
    s->parent = parent;
    return s;
}

static jx_val *scope_find(jx_scope *s, const jx_str *name)
{
    for (; s; s = s->parent) {
        jx_val *v = jx_dict_finds(&s->vars, name->s, name->len);
        if (v) return v;
    }
    return NULL;
}

static void scope_set(jx_ctx *c, jx_scope *s, const jx_str *name, jx_val v)
{
    jx_val *slot = jx_dict_finds(&s->vars, name->s, name->len);
    if (slot) *slot = v;
    else jx_dict_set(c->a, &s->vars, jv_strv(name), v);
}

jx_val jx_builtin_fn(jx_ctx *c, const char *name, jx_builtin fn, jx_val self)
{
    jx_func *f = jx_alloc(c->a, sizeof *f);
    f->kind = FN_BUILTIN;
    f->name = name;
    f->fn = fn;
    f->self = self;
    jx_val v = {JT_FUNC, {0}};
    v.u.fn = f;
    return v;
}

/* ---- attribute and item access ------------------------------------------- */
static const char *obj_desc(jx_val v)
{
    switch (v.t) {
    case JT_NONE: return "None";
    case JT_DICT: return "dict object";
    case JT_LIST: return v.u.l->tuple ? "tuple object" : "list object";
    case JT_STR: return "str object";
    case JT_INT: return "int object";
    case JT_FLOAT: return "float object";
    case JT_BOOL: return "bool object";
    case JT_NS: return "jinja2.utils.Namespace object";
    case JT_LOOP: return "jinja2.runtime.LoopContext object";
    case JT_FUNC:
        switch (v.u.fn->kind) {
        case FN_SELF: return "jinja2.runtime.TemplateReference object";
        case FN_BLOCK: return "jinja2.runtime.BlockReference object";
        case FN_MACRO: case FN_CALLER: return "jinja2.runtime.Macro object";
        case FN_BUILTIN: break;
        }
        /* Python's kind of callable: a loop's bound method, a global that
           is a class (dict, namespace, joiner) or a function, a joiner(),
           or a str, list or dict method */
        if (v.u.fn->self.t == JT_LOOP) return "method object";
        if (v.u.fn->self.t == JT_ABSENT) {
            static const char *const classes[] = {"dict", "namespace", "joiner", NULL};
            for (int i = 0; classes[i]; i++)
                if (!strcmp(v.u.fn->name, classes[i])) return "type object";
            return "function object";
        }
        if (!strcmp(v.u.fn->name, "joiner")) return "jinja2.utils.Joiner object";
        return "builtin_function_or_method object";
    default: return "object";
    }
}

static jx_val no_attr(jx_ctx *c, jx_val obj, const jx_str *name)
{
    return jv_undef_hint(c->a, "'%s' has no attribute '%.200s'", obj_desc(obj), name->s);
}

static jx_val loop_attr(jx_ctx *c, jx_loop *l, const jx_str *name, jx_val self);
static jx_val loop_item(const jx_loop *l, size_t i);
static jx_val make_func(jx_ctx *c, jx_fnkind kind, const jx_node *node, jx_scope *closure, const char *name);

static jx_val no_super(jx_ctx *c, const char *block)
{
    return jv_undef_hint(c->a, "there is no parent block called '%.100s'.", block);
}

/* self.name: the block of that name, wherever the template defines it. */
static jx_val self_block(jx_ctx *c, jx_val self, const jx_str *name)
{
    for (int i = 0; i < c->blocks.n; i++)
        if (!strcmp(c->blocks.v[i]->name->s, name->s))
            return make_func(c, FN_BLOCK, c->blocks.v[i], NULL, c->blocks.v[i]->name->s);
    return no_attr(c, self, name);
}
static void eval_args(jx_ctx *c, jx_scope *s, const jx_node *x, jx_args *a, jx_val extra_kw, const jx_str *extra_name);

jx_val jx_getattr(jx_ctx *c, jx_val obj, const jx_str *name)
{
    jx_need_defined(c, obj);
    switch (obj.t) {
    case JT_DICT: {
        jx_val m;
        if (jx_method(c, obj, name->s, &m)) return m;
        jx_val *v = jx_dict_finds(obj.u.d, name->s, name->len);
        return v ? *v : no_attr(c, obj, name);
    }
    case JT_NS: {
        jx_val *v = jx_dict_finds(obj.u.d, name->s, name->len);
        return v ? *v : no_attr(c, obj, name);
    }
    case JT_LIST:
        if (obj.u.l->group && obj.u.l->n == 2) {
            if (!strcmp(name->s, "grouper")) return obj.u.l->v[0];
            if (!strcmp(name->s, "list")) return obj.u.l->v[1];
        }
        /* fall through */
    case JT_STR: {
        jx_val m;
        if (jx_method(c, obj, name->s, &m)) return m;
        return no_attr(c, obj, name);
    }
    case JT_LOOP: return loop_attr(c, obj.u.loop, name, obj);
    case JT_FUNC: {
        /* a macro's (or call block's) name, parameters and what it catches */
        const jx_func *fn = obj.u.fn;
        if (fn->kind == FN_SELF) return self_block(c, obj, name);
        if (fn->kind == FN_BLOCK) {
            if (!strcmp(name->s, "name")) return jv_cstr(c->a, fn->name);
            /* there is no parent template, so no parent block */
            if (!strcmp(name->s, "super")) return no_super(c, fn->name);
        }
        if (fn->kind == FN_BUILTIN || fn->kind == FN_BLOCK) return no_attr(c, obj, name);
        const jx_node *m = fn->node;
        if (!strcmp(name->s, "name")) return fn->kind == FN_CALLER ? jv_none() : jv_cstr(c->a, fn->name);
        if (!strcmp(name->s, "arguments")) {
            jx_val t = jv_list(c->a, (size_t)m->args.n);
            t.u.l->tuple = true;
            for (int i = 0; i < m->args.n; i++) t.u.l->v[i] = jv_strv(m->args.v[i]->name);
            t.u.l->n = (size_t)m->args.n;
            return t;
        }
        if (!strcmp(name->s, "caller")) return jv_bool(m->uses & USES_CALLER);
        if (!strcmp(name->s, "catch_kwargs")) return jv_bool(m->uses & USES_KWARGS);
        if (!strcmp(name->s, "catch_varargs")) return jv_bool(m->uses & USES_VARARGS);
        return no_attr(c, obj, name);
    }
    default: return no_attr(c, obj, name);
    }
}

static bool index_of(jx_val key, size_t n, size_t *at)
{
    if (key.t != JT_INT && key.t != JT_BOOL) return false;
    int64_t i = key.t == JT_BOOL ? key.u.b : key.u.i;
    if (i < 0) i += (int64_t)n;
    if (i < 0 || (uint64_t)i >= n) return false;
    *at = (size_t)i;
    return true;
}

jx_val jx_getitem(jx_ctx *c, jx_val obj, jx_val key)
{
    jx_need_defined(c, obj);
    size_t at;
    switch (obj.t) {
    case JT_DICT: {
        jx_val *v = jx_dict_find(obj.u.d, key);
        if (v) return *v;
        break;
    }
    case JT_LIST:
        if (index_of(key, obj.u.l->n, &at)) return obj.u.l->v[at];
        break;
    case JT_STR:
        if (index_of(key, jx_utf8_count(obj.u.s->s, obj.u.s->len), &at)) {
            size_t i = 0;
            for (size_t k = 0; k < at; k++) jx_utf8_next(obj.u.s->s, obj.u.s->len, &i);
            size_t st = i;
            jx_utf8_next(obj.u.s->s, obj.u.s->len, &i);
            return jv_str(c->a, obj.u.s->s + st, i - st);
        }
        break;
    default: break;
    }
    if (key.t == JT_STR && obj.t != JT_DICT) return jx_getattr(c, obj, key.u.s);
    if (key.t == JT_STR) {
        jx_val m;
        if (jx_method(c, obj, key.u.s->s, &m)) return m;
        return no_attr(c, obj, key.u.s);
    }
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_repr_of(c, &b, key, 0);
    jx_sb_addc(&b, 0);
    return jv_undef_hint(c->a, "%s has no element %.200s", obj_desc(obj), b.p);
}

jx_val *jx_iterate(jx_ctx *c, jx_val v, size_t *n)
{
    switch (v.t) {
    case JT_UNDEF: case JT_ABSENT:
        *n = 0;
        return NULL;
    case JT_LIST:
        *n = v.u.l->n;
        jx_step(c, *n >> 4);          /* sum, join, select ... walk it all */
        return v.u.l->v;
    case JT_ITER: {
        jx_val *items = v.u.l->v;
        *n = v.u.l->n;
        jx_step(c, *n >> 4);
        jx_iter_drop(v, *n);          /* a second loop over a generator sees nothing */
        return items;
    }
    case JT_DICT: {
        jx_step(c, v.u.d->n >> 4);
        jx_val *k = v.u.d->n ? jx_alloc(c->a, v.u.d->n * sizeof *k) : NULL;
        if (v.u.d->n) memcpy(k, v.u.d->k, v.u.d->n * sizeof *k);
        *n = v.u.d->n;
        return k;
    }
    case JT_STR: {
        size_t cnt = jx_utf8_count(v.u.s->s, v.u.s->len);
        jx_val *chars = cnt ? jx_alloc(c->a, cnt * sizeof *chars) : NULL;
        size_t i = 0;
        for (size_t k = 0; k < cnt; k++) {
            size_t st = i;
            jx_utf8_next(v.u.s->s, v.u.s->len, &i);
            chars[k] = jv_str(c->a, v.u.s->s + st, i - st);
        }
        *n = cnt;
        return chars;
    }
    default:
        jx_rt_fail(c, "'%s' object is not iterable", jx_type_name(v));
    }
}

/* ---- loops ----------------------------------------------------------------- */
static jx_val loop_cycle(jx_ctx *c, jx_val self, const jx_args *a)
{
    if (!a->npos) jx_rt_fail(c, "no items for cycling given");
    return a->pos[self.u.loop->i % (size_t)a->npos];
}

/* loop.changed(*values): true on the first call and whenever the values
   differ from the previous call's (jinja2 keeps them per loop, so one
   call per iteration compares with the last iteration that called it). */
static jx_val loop_changed(jx_ctx *c, jx_val self, const jx_args *a)
{
    if (a->nkw) jx_rt_fail(c, "LoopContext.changed() got an unexpected keyword argument '%.100s'", a->kwname[0]->s);
    jx_loop *l = self.u.loop;
    jx_val now = jv_list(c->a, (size_t)a->npos);
    now.u.l->tuple = true;
    if (a->npos) memcpy(now.u.l->v, a->pos, (size_t)a->npos * sizeof *a->pos);
    now.u.l->n = (size_t)a->npos;
    if (l->changed.t != JT_ABSENT && jx_equal(l->changed, now)) return jv_bool(false);
    l->changed = now;
    return jv_bool(true);
}

static jx_val loop_attr(jx_ctx *c, jx_loop *l, const jx_str *name, jx_val self)
{
    const char *k = name->s;
    int64_t i = (int64_t)l->i, n = (int64_t)l->n;
    if (!strcmp(k, "index")) return jv_int(i + 1);
    if (!strcmp(k, "index0")) return jv_int(i);
    if (!strcmp(k, "revindex")) return jv_int(n - i);
    if (!strcmp(k, "revindex0")) return jv_int(n - i - 1);
    if (!strcmp(k, "first")) return jv_bool(i == 0);
    if (!strcmp(k, "last")) return jv_bool(i == n - 1);
    if (!strcmp(k, "length")) return jv_int(n);
    if (!strcmp(k, "depth")) return jv_int(l->depth);
    if (!strcmp(k, "depth0")) return jv_int(l->depth - 1);
    if (!strcmp(k, "previtem"))
        return i > 0 ? loop_item(l, (size_t)i - 1) : jv_undef_hint(c->a, "there is no previous item");
    if (!strcmp(k, "nextitem"))
        return i + 1 < n ? loop_item(l, (size_t)i + 1) : jv_undef_hint(c->a, "there is no next item");
    if (!strcmp(k, "cycle")) return jx_builtin_fn(c, "cycle", loop_cycle, self);
    if (!strcmp(k, "changed")) return jx_builtin_fn(c, "changed", loop_changed, self);
    return no_attr(c, self, name);
}

static void assign(jx_ctx *c, jx_scope *s, const jx_node *target, jx_val v)
{
    if (target->kind == N_NAME) {
        scope_set(c, s, target->name, v);
        return;
    }
    if (target->kind == N_ATTR) {
        jx_val *ns = scope_find(s, target->x->name);
        if (!ns || ns->t != JT_NS) jx_rt_fail(c, "cannot assign attribute on non-namespace object");
        jx_dict_set(c->a, ns->u.d, jv_strv(target->name), v);
        return;
    }
    size_t n;
    jx_val *items = jx_iterate(c, v, &n);
    if (n != (size_t)target->args.n)
        jx_rt_fail(c, n > (size_t)target->args.n ? "too many values to unpack (expected %d)"
                                                 : "not enough values to unpack (expected %d, got %zu)",
                   target->args.n, n);
    for (int i = 0; i < target->args.n; i++) assign(c, s, target->args.v[i], items[i]);
}

static jx_val loop_item(const jx_loop *l, size_t i)
{
    return l->items ? l->items[i] : jv_int(l->start + (int64_t)i * l->step);
}

/* `for i in range(...)` counts without building the list, so nested loops
   over big ranges meet the step budget rather than the memory cap. */
static bool counted_range(jx_ctx *c, jx_scope *s, const jx_node *it, jx_loop *l)
{
    if (it->kind != N_CALL || it->x->kind != N_NAME) return false;
    jx_val *fn = scope_find(s, it->x->name);
    if (!fn || fn->t != JT_FUNC || fn->u.fn->kind != FN_BUILTIN || fn->u.fn->fn != jx_range) return false;
    jx_args a;
    eval_args(c, s, it, &a, jv_none(), NULL);
    l->n = jx_range_len(c, &a, &l->start, &l->step);
    return true;
}

/* Runs for statement x over the items in l, in scope s: the items the
   `if` keeps, the body once per item, or the else branch when none is
   left.  A recursive loop's loop(items) comes back here one level deeper. */
static flow run_loop(jx_ctx *c, jx_scope *s, const jx_node *x, jx_loop *l)
{
    jx_scope *it = scope_new(c, s);
    if (x->z) {
        /* `for a in b if cond`: loop.length and friends count what passes */
        jx_val *kept = l->n ? jx_alloc(c->a, l->n * sizeof *kept) : NULL;
        size_t m = 0;
        for (size_t i = 0; i < l->n; i++) {
            jx_step(c, 1);
            it->vars.n = 0;
            jx_val v = loop_item(l, i);
            assign(c, it, x->x, v);
            if (jx_truthy(eval(c, it, x->z))) kept[m++] = v;
        }
        l->items = kept;
        l->n = m;
    }
    l->node = x;
    l->scope = s;
    l->changed = jv_absent();
    const jx_str *loop_name = jx_str_c(c->a, "loop");
    jx_val lv = {JT_LOOP, {0}};
    lv.u.loop = l;
    for (size_t i = 0; i < l->n; i++) {
        jx_step(c, 1);
        l->i = i;
        it->vars.n = 0;
        assign(c, it, x->x, loop_item(l, i));
        scope_set(c, it, loop_name, lv);
        if (exec_body(c, it, x->body) == FLOW_BREAK) break;
    }
    if (!l->n && x->orelse.n) return exec_body(c, s, x->orelse);
    return FLOW_NORMAL;
}

static flow exec_for(jx_ctx *c, jx_scope *s, const jx_node *x)
{
    jx_loop *l = jx_alloc(c->a, sizeof *l);
    if (!counted_range(c, s, x->y, l)) l->items = jx_iterate(c, eval(c, s, x->y), &l->n);
    l->depth = 1;
    return run_loop(c, s, x, l);
}

/* loop(items) in a recursive loop: the whole for statement (its if, body
   and else) over the new items, one level deeper, as a string.  Each
   level costs nesting depth, so a loop that recurses forever meets the
   depth cap rather than the C stack's end. */
static jx_val loop_call(jx_ctx *c, jx_loop *l, const jx_args *a)
{
    if (!l->node || !l->node->op)
        jx_rt_fail(c, "The loop must have the 'recursive' marker to be called recursively.");
    if (a->npos > 1)
        jx_rt_fail(c, "LoopContext.__call__() takes 2 positional arguments but %d were given", a->npos + 1);
    jx_val items = a->npos ? a->pos[0] : jv_absent();
    for (int k = 0; k < a->nkw; k++) {
        if (strcmp(a->kwname[k]->s, "iterable"))
            jx_rt_fail(c, "LoopContext.__call__() got an unexpected keyword argument '%.100s'", a->kwname[k]->s);
        if (items.t != JT_ABSENT)
            jx_rt_fail(c, "LoopContext.__call__() got multiple values for argument 'iterable'");
        items = a->kw[k];
    }
    if (items.t == JT_ABSENT)
        jx_rt_fail(c, "LoopContext.__call__() missing 1 required positional argument: 'iterable'");
    jx_loop *sub = jx_alloc(c->a, sizeof *sub);
    sub->items = jx_iterate(c, items, &sub->n);
    sub->depth = l->depth + 1;
    enter(c);
    size_t start = c->out_len;
    run_loop(c, l->scope, l->node, sub);
    const jx_str *r = jx_str_new(c->a, c->out ? c->out + start : "", c->out_len - start);
    c->out_len = start;
    c->depth--;
    return jv_strv(r);
}

/* ---- calls ----------------------------------------------------------------- */
static const jx_str *capture(jx_ctx *c, jx_scope *s, jx_nodes body)
{
    size_t start = c->out_len;
    exec_body(c, s, body);
    const jx_str *r = jx_str_new(c->a, c->out ? c->out + start : "", c->out_len - start);
    c->out_len = start;
    return r;
}

/* jinja2's Macro.__call__: positional arguments fill the parameters in
   order, keywords the ones left; what remains goes to varargs / kwargs
   when the body reads them (jx_node.uses) and is an error otherwise, and
   caller is the call block's body, or undefined when there is none. */
static jx_val invoke(jx_ctx *c, const jx_func *fn, const jx_args *a)
{
    const jx_node *m = fn->node;
    jx_scope *s = scope_new(c, fn->closure);
    int np = m->args.n, npos = a->npos < np ? a->npos : np;
    bool explicit_caller = false;
    for (int i = 0; i < np; i++) explicit_caller |= !strcmp(m->args.v[i]->name->s, "caller");
    bool *set = np ? jx_alloc(c->a, (size_t)np) : NULL;
    for (int i = 0; i < npos; i++) {
        scope_set(c, s, m->args.v[i]->name, a->pos[i]);
        set[i] = true;
    }
    jx_val kwargs = jv_dict(c->a), caller = jv_absent();
    const jx_str *stray = NULL;
    bool stray_caller = false;
    for (int k = 0; k < a->nkw; k++) {
        const jx_str *name = a->kwname[k];
        int i = npos;
        while (i < np && strcmp(m->args.v[i]->name->s, name->s)) i++;
        if (i < np && !set[i]) {
            scope_set(c, s, m->args.v[i]->name, a->kw[k]);
            set[i] = true;
        } else if ((m->uses & USES_CALLER) && !explicit_caller && !strcmp(name->s, "caller") && caller.t == JT_ABSENT) {
            caller = a->kw[k];
        } else {
            /* a keyword for a parameter that a positional argument filled
               also lands here, as in jinja2 */
            jx_dict_set(c->a, kwargs.u.d, jv_strv(name), a->kw[k]);
            if (!stray) stray = name;
            stray_caller |= !strcmp(name->s, "caller");
        }
    }
    /* jinja2 names the macro with repr(): a call block's has no name */
    char who[140];
    if (fn->kind == FN_CALLER) snprintf(who, sizeof who, "None");
    else snprintf(who, sizeof who, "'%.100s'", fn->name);
    if (stray && !(m->uses & USES_KWARGS)) {
        if (stray_caller)
            jx_rt_fail(c, "macro %s was invoked with two values for the special caller argument. This is most likely a bug.", who);
        jx_rt_fail(c, "macro %s takes no keyword argument '%.100s'", who, stray->s);
    }
    if (a->npos > np && !(m->uses & USES_VARARGS)) jx_rt_fail(c, "macro %s takes not more than %d argument(s)", who, np);
    for (int i = 0; i < np; i++) {
        if (set[i]) continue;
        jx_val v = m->kwargs.v[i] ? eval(c, s, m->kwargs.v[i])
                                  : jv_undef_hint(c->a, "parameter '%s' was not provided", m->args.v[i]->name->s);
        scope_set(c, s, m->args.v[i]->name, v);
    }
    if ((m->uses & USES_CALLER) && !explicit_caller)
        scope_set(c, s, jx_str_c(c->a, "caller"), caller.t != JT_ABSENT ? caller : jv_undef_hint(c->a, "No caller defined"));
    if (m->uses & USES_VARARGS) {
        jx_val vargs = jv_list(c->a, 0);
        vargs.u.l->tuple = true;
        for (int i = np; i < a->npos; i++) jx_list_push(c->a, vargs.u.l, a->pos[i]);
        scope_set(c, s, jx_str_c(c->a, "varargs"), vargs);
    }
    if (m->uses & USES_KWARGS) scope_set(c, s, jx_str_c(c->a, "kwargs"), kwargs);
    enter(c);
    const jx_str *out = capture(c, s, m->body);
    c->depth--;
    return jv_strv(out);
}

/* A named block renders in a scope of its own under the template's top
   level (or, scoped, under the scope it stands in), so it sees the
   render's variables and top-level sets but not the loop or macro around
   it, as jinja2's block functions see only the template's context; its
   `super` is undefined, for there is no parent template. */
static void render_block(jx_ctx *c, jx_scope *under, const jx_node *b)
{
    jx_scope *s = scope_new(c, under);
    scope_set(c, s, jx_str_c(c->a, "super"), no_super(c, b->name->s));
    enter(c);
    exec_body(c, s, b->body);
    c->depth--;
}

/* self.name(): the block again, under the top level whatever the block's
   own modifiers (jinja2 calls it with the template's context) */
static jx_val call_block(jx_ctx *c, const jx_func *fn, const jx_args *a)
{
    if (a->npos)
        jx_rt_fail(c, "BlockReference.__call__() takes 1 positional argument but %d were given", a->npos + 1);
    if (a->nkw) jx_rt_fail(c, "BlockReference.__call__() got an unexpected keyword argument '%.100s'", a->kwname[0]->s);
    size_t start = c->out_len;
    render_block(c, c->top, fn->node);
    const jx_str *r = jx_str_new(c->a, c->out ? c->out + start : "", c->out_len - start);
    c->out_len = start;
    return jv_strv(r);
}

jx_val jx_call(jx_ctx *c, jx_val fn, const jx_args *a)
{
    jx_need_defined(c, fn);
    if (fn.t == JT_LOOP) {
        jx_step(c, 1);
        return loop_call(c, fn.u.loop, a);
    }
    if (fn.t != JT_FUNC) jx_rt_fail(c, "'%s' object is not callable", jx_type_name(fn));
    jx_step(c, 1);
    if (fn.u.fn->kind == FN_BUILTIN) return fn.u.fn->fn(c, fn.u.fn->self, a);
    if (fn.u.fn->kind == FN_SELF) jx_rt_fail(c, "'TemplateReference' object is not callable");
    if (fn.u.fn->kind == FN_BLOCK) return call_block(c, fn.u.fn, a);
    return invoke(c, fn.u.fn, a);
}

static void eval_args(jx_ctx *c, jx_scope *s, const jx_node *x, jx_args *a, jx_val extra_kw, const jx_str *extra_name)
{
    /* f(*seq) and f(**map) (x->y, x->z) add to the call's own arguments,
       so the counts are known only once they are evaluated */
    size_t nstar = 0, nmap = 0;
    jx_val *star = NULL;
    jx_val map = jv_none();
    if (x->y) star = jx_iterate(c, eval(c, s, x->y), &nstar);
    if (x->z) {
        map = eval(c, s, x->z);
        if (map.t != JT_DICT) jx_rt_fail(c, "argument after ** must be a mapping, not %s", jx_type_name(map));
        nmap = map.u.d->n;
    }
    if (nstar > (size_t)INT_MAX - (size_t)x->args.n || nmap > (size_t)INT_MAX - (size_t)x->kwargs.n - 1)
        jx_rt_fail(c, "too many arguments");
    int nkw = x->kwargs.n + (int)nmap + (extra_name ? 1 : 0);
    a->npos = x->args.n + (int)nstar;
    a->nkw = nkw;
    a->pos = a->npos ? jx_alloc(c->a, (size_t)a->npos * sizeof(jx_val)) : NULL;
    a->kw = nkw ? jx_alloc(c->a, (size_t)nkw * sizeof(jx_val)) : NULL;
    a->kwname = nkw ? jx_alloc(c->a, (size_t)nkw * sizeof(jx_str *)) : NULL;
    for (int i = 0; i < x->args.n; i++) a->pos[i] = eval(c, s, x->args.v[i]);
    for (size_t i = 0; i < nstar; i++) a->pos[x->args.n + (int)i] = star[i];
    for (int i = 0; i < x->kwargs.n; i++) {
        a->kw[i] = eval(c, s, x->kwargs.v[i]);
        a->kwname[i] = x->kwnames[i];
    }
    for (size_t i = 0; i < nmap; i++) {
        jx_val k = map.u.d->k[i];
        if (k.t != JT_STR) jx_rt_fail(c, "keywords must be strings");
        for (int j = 0; j < x->kwargs.n; j++)
            if (!strcmp(x->kwnames[j]->s, k.u.s->s))
                jx_rt_fail(c, "got multiple values for keyword argument '%.100s'", k.u.s->s);
        a->kw[x->kwargs.n + (int)i] = map.u.d->v[i];
        a->kwname[x->kwargs.n + (int)i] = k.u.s;
    }
    if (extra_name) {
        a->kw[nkw - 1] = extra_kw;
        a->kwname[nkw - 1] = extra_name;
    }
}

static jx_val make_func(jx_ctx *c, jx_fnkind kind, const jx_node *node, jx_scope *closure, const char *name)
{
    jx_func *f = jx_alloc(c->a, sizeof *f);
    f->kind = kind;
    f->node = node;
    f->closure = closure;
    f->name = name;
    f->self = jv_absent();
    jx_val v = {JT_FUNC, {0}};
    v.u.fn = f;
    return v;
}

/* ---- operators ------------------------------------------------------------- */
static int64_t ival(jx_val v) { return v.t == JT_BOOL ? v.u.b : v.u.i; }
static double fval(jx_val v) { return v.t == JT_FLOAT ? v.u.f : (double)ival(v); }

static jx_val repeat(jx_ctx *c, jx_val seq, int64_t times)
{
    if (times < 0) times = 0;
    if (seq.t == JT_STR) {
        size_t len = seq.u.s->len;
        if (len && (uint64_t)times > (c->a->max ? c->a->max : SIZE_MAX) / len)
            jx_fail(&c->fail, JINJA_ERR_LIMIT, "string repetition too large");
        jx_sb b;
        jx_sb_init(&b, c->a);
        for (int64_t k = 0; k < times && len; k++) jx_sb_add(&b, seq.u.s->s, len);
        return jx_sb_val(&b);
    }
    size_t n = seq.u.l->n;
    if (n && (uint64_t)times > (c->a->max ? c->a->max : SIZE_MAX) / (n * sizeof(jx_val)))
        jx_fail(&c->fail, JINJA_ERR_LIMIT, "list repetition too large");
    jx_val r = jv_list(c->a, n * (size_t)times);
    r.u.l->tuple = seq.u.l->tuple;
    for (int64_t k = 0; k < times && n; k++) {
        memcpy(r.u.l->v + r.u.l->n, seq.u.l->v, n * sizeof(jx_val));
        r.u.l->n += n;
    }
    return r;
}

JX_NORETURN static void bad_operands(jx_ctx *c, const char *op, jx_val a, jx_val b)
{
    jx_need_defined(c, a);
    jx_need_defined(c, b);
    if (!strcmp(op, "+") && a.t == JT_STR)
        jx_rt_fail(c, "can only concatenate str (not \"%s\") to str", jx_type_name(b));
    jx_rt_fail(c, "unsupported operand type(s) for %s: '%s' and '%s'", op, jx_type_name(a), jx_type_name(b));
}

static jx_val binop(jx_ctx *c, jx_op op, jx_val a, jx_val b)
{
    bool nums = jv_is_num(a) && jv_is_num(b);
    bool ints = nums && a.t != JT_FLOAT && b.t != JT_FLOAT;
    int64_t r;
    switch (op) {
    case OP_ADD:
        if (ints) {
            if (__builtin_add_overflow(ival(a), ival(b), &r)) jx_rt_fail(c, "integer overflow");
            return jv_int(r);
        }
        if (nums) return jv_float(fval(a) + fval(b));
        if (a.t == JT_STR && b.t == JT_STR) {
            /* a safe string (Markup) escapes the other operand, either
               side, and the sum is safe: '...'|safe + name */
            const bool safe = a.u.s->safe || b.u.s->safe;
            const jx_str *x = safe && !a.u.s->safe ? jx_html_escape(c->a, a.u.s) : a.u.s;
            const jx_str *y = safe && !b.u.s->safe ? jx_html_escape(c->a, b.u.s) : b.u.s;
            jx_sb s;
            jx_sb_init(&s, c->a);
            jx_sb_add(&s, x->s, x->len);
            jx_sb_add(&s, y->s, y->len);
            jx_str *sum = (jx_str *)jx_sb_str(&s);   /* fresh: its flag is this sum's */
            sum->safe = safe;
            return jv_strv(sum);
        }
        if (a.t == JT_LIST && b.t == JT_LIST && a.u.l->tuple == b.u.l->tuple) {
            jx_val l = jv_list(c->a, a.u.l->n + b.u.l->n);
            l.u.l->tuple = a.u.l->tuple;
            if (a.u.l->n) memcpy(l.u.l->v, a.u.l->v, a.u.l->n * sizeof(jx_val));
            if (b.u.l->n) memcpy(l.u.l->v + a.u.l->n, b.u.l->v, b.u.l->n * sizeof(jx_val));
            l.u.l->n = a.u.l->n + b.u.l->n;
            return l;
        }
        bad_operands(c, "+", a, b);
    case OP_SUB:
        if (ints) {
            if (__builtin_sub_overflow(ival(a), ival(b), &r)) jx_rt_fail(c, "integer overflow");
            return jv_int(r);
        }
        if (nums) return jv_float(fval(a) - fval(b));
        bad_operands(c, "-", a, b);
    case OP_MUL:
        if (ints) {
            if (__builtin_mul_overflow(ival(a), ival(b), &r)) jx_rt_fail(c, "integer overflow");
            return jv_int(r);
        }
        if (nums) return jv_float(fval(a) * fval(b));
        if ((a.t == JT_STR || a.t == JT_LIST) && (b.t == JT_INT || b.t == JT_BOOL)) return repeat(c, a, ival(b));
        if ((b.t == JT_STR || b.t == JT_LIST) && (a.t == JT_INT || a.t == JT_BOOL)) return repeat(c, b, ival(a));
        bad_operands(c, "*", a, b);
    case OP_DIV:
        if (!nums) bad_operands(c, "/", a, b);
        if (fval(b) == 0) jx_rt_fail(c, "division by zero");
        return jv_float(fval(a) / fval(b));
    case OP_FLOORDIV:
        if (!nums) bad_operands(c, "//", a, b);
        if (fval(b) == 0) jx_rt_fail(c, "integer division or modulo by zero");
        if (ints) {
            int64_t x = ival(a), y = ival(b);
            if (x == INT64_MIN && y == -1) jx_rt_fail(c, "integer overflow");
            int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) q--;
            return jv_int(q);
        }
        return jv_float(floor(fval(a) / fval(b)));
    case OP_MOD:
        if (a.t == JT_STR) {
            jx_args fa = {0};
            if (b.t == JT_LIST && b.u.l->tuple) {
                fa.npos = (int)b.u.l->n;
                fa.pos = b.u.l->v;
            } else {
                fa.npos = 1;
                fa.pos = &b;
            }
            return jx_apply_filter(c, "format", a, &fa);
        }
        if (!nums) bad_operands(c, "%", a, b);
        if (fval(b) == 0) jx_rt_fail(c, "integer division or modulo by zero");
        if (ints) {
            int64_t x = ival(a), y = ival(b);
            if (y == -1) return jv_int(0);
            int64_t m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) m += y;
            return jv_int(m);
        } else {
            double x = fval(a), y = fval(b), m = fmod(x, y);
            if (m != 0 && ((m < 0) != (y < 0))) m += y;
            return jv_float(m);
        }
    case OP_POW:
        if (!nums) bad_operands(c, "**", a, b);
        if (ints && ival(b) >= 0) {
            int64_t base = ival(a), e = ival(b), acc = 1;
            while (e > 0) {
                if ((e & 1) && __builtin_mul_overflow(acc, base, &acc)) jx_rt_fail(c, "integer overflow");
                e >>= 1;
                if (e && __builtin_mul_overflow(base, base, &base)) jx_rt_fail(c, "integer overflow");
            }
            return jv_int(acc);
        }
        if (fval(a) == 0 && fval(b) < 0) jx_rt_fail(c, "0.0 cannot be raised to a negative power");
        return jv_float(pow(fval(a), fval(b)));
    case OP_TILDE: {
        jx_sb s;
        jx_sb_init(&s, c->a);
        jx_str_of(c, &s, a);
        jx_str_of(c, &s, b);
        return jx_sb_val(&s);
    }
    default:
        jx_rt_fail(c, "bad operator");
    }
}

static bool contains(jx_ctx *c, jx_val hay, jx_val needle)
{
    switch (hay.t) {
    case JT_STR:
        if (needle.t != JT_STR) {
            jx_need_defined(c, needle);
            jx_rt_fail(c, "'in <string>' requires string as left operand, not %s", jx_type_name(needle));
        }
        jx_step(c, hay.u.s->len >> 6);
        return needle.u.s->len == 0 || memmem(hay.u.s->s, hay.u.s->len, needle.u.s->s, needle.u.s->len);
    case JT_LIST: case JT_ITER: {
        size_t i = 0, n = hay.u.l->n;
        while (i < n && !jx_equal(hay.u.l->v[i], needle)) i++;
        if (i == n) jx_step(c, n >> 4);
        /* an iterator is used up to the item found, as Python's `in` */
        if (hay.t == JT_ITER) jx_iter_drop(hay, i < n ? i + 1 : n);
        return i < n;
    }
    case JT_DICT: case JT_NS:
        return jx_dict_find(hay.u.d, needle) != NULL;
    case JT_UNDEF: case JT_ABSENT:
        return false;
    default:
        jx_rt_fail(c, "argument of type '%s' is not iterable", jx_type_name(hay));
    }
}

static bool compare_op(jx_ctx *c, jx_op op, jx_val a, jx_val b)
{
    switch (op) {
    case OP_EQ: return jx_equal(a, b);
    case OP_NE: return !jx_equal(a, b);
    case OP_LT: return jx_compare(c, a, b) < 0;
    case OP_LE: return jx_compare(c, a, b) <= 0;
    case OP_GT: return jx_compare(c, a, b) > 0;
    case OP_GE: return jx_compare(c, a, b) >= 0;
    case OP_IN: return contains(c, b, a);
    case OP_NOTIN: return !contains(c, b, a);
    default: return false;
    }
}

/* Python slice indices over n elements. */
static size_t slice_indices(jx_ctx *c, jx_val vs, jx_val ve, jx_val vt, size_t n, int64_t *start, int64_t *step)
{
    int64_t len = (int64_t)n, st = 1, a, b;
    if (vt.t != JT_NONE) st = ival(vt);
    if (st == 0) jx_rt_fail(c, "slice step cannot be zero");
    if (vs.t == JT_NONE) a = st > 0 ? 0 : len - 1;
    else {
        a = ival(vs);
        if (a < 0) a += len;
        if (a < 0) a = st > 0 ? 0 : -1;
        if (a >= len) a = st > 0 ? len : len - 1;
    }
    if (ve.t == JT_NONE) b = st > 0 ? len : -1;
    else {
        b = ival(ve);
        if (b < 0) b += len;
        if (b < 0) b = st > 0 ? 0 : -1;
        if (b >= len) b = st > 0 ? len : len - 1;
    }
    *start = a;
    *step = st;
    if (st > 0) return a < b ? (size_t)((b - a + st - 1) / st) : 0;
    return a > b ? (size_t)((a - b - st - 1) / -st) : 0;
}

static jx_val eval_slice(jx_ctx *c, jx_scope *s, const jx_node *x)
{
    jx_val obj = eval(c, s, x->x);
    jx_val p[3];
    const jx_node *parts[3] = {x->y, x->z, x->w};
    for (int k = 0; k < 3; k++) {
        p[k] = parts[k] ? eval(c, s, parts[k]) : jv_none();
        jx_need_defined(c, p[k]);
        if (p[k].t != JT_NONE && p[k].t != JT_INT && p[k].t != JT_BOOL)
            jx_rt_fail(c, "slice indices must be integers or None");
    }
    jx_need_defined(c, obj);
    int64_t start, step;
    if (obj.t == JT_LIST) {
        size_t cnt = slice_indices(c, p[0], p[1], p[2], obj.u.l->n, &start, &step);
        jx_val r = jv_list(c->a, cnt);
        r.u.l->tuple = obj.u.l->tuple;
        for (size_t k = 0; k < cnt; k++) r.u.l->v[k] = obj.u.l->v[start + (int64_t)k * step];
        r.u.l->n = cnt;
        return r;
    }
    if (obj.t == JT_STR) {
        const jx_str *str = obj.u.s;
        size_t n = jx_utf8_count(str->s, str->len);
        size_t *off = jx_alloc(c->a, (n + 1) * sizeof *off);
        size_t i = 0;
        for (size_t k = 0; k < n; k++) {
            off[k] = i;
            jx_utf8_next(str->s, str->len, &i);
        }
        off[n] = str->len;
        size_t cnt = slice_indices(c, p[0], p[1], p[2], n, &start, &step);
        if (step == 1) return jv_str(c->a, str->s + off[start], cnt ? off[start + (int64_t)cnt] - off[start] : 0);
        jx_sb b;
        jx_sb_init(&b, c->a);
        for (size_t k = 0; k < cnt; k++) {
            size_t at = (size_t)(start + (int64_t)k * step);
            jx_sb_add(&b, str->s + off[at], off[at + 1] - off[at]);
        }
        return jx_sb_val(&b);
    }
    jx_rt_fail(c, "'%s' object is not subscriptable", jx_type_name(obj));
}

/* ---- expressions ----------------------------------------------------------- */
static jx_val eval_filter(jx_ctx *c, jx_scope *s, const jx_node *x, jx_val in)
{
    /* jinja_names.c refused unknown names outside an if at parse time; a
       name inside one, or a jinja2 filter we lack, fails only when reached,
       so the branches that do not use it still render */
    if (!x->filter_fn) jx_rt_fail(c, "No filter named '%.100s' found.", x->name->s);
    jx_args a;
    eval_args(c, s, x, &a, jv_none(), NULL);
    return x->filter_fn(c, in, &a);
}

static jx_val eval(jx_ctx *c, jx_scope *s, const jx_node *x)
{
    jx_val r;
    c->fail.line = x->line;
    jx_step(c, 1);
    enter(c);
    switch (x->kind) {
    case N_LIT: r = x->lit; break;
    case N_NAME: {
        jx_val *v = scope_find(s, x->name);
        r = v ? *v : jv_undef_hint(c->a, "'%.200s' is undefined", x->name->s);
        break;
    }
    case N_LIST: case N_TUPLE:
        r = jv_list(c->a, (size_t)x->args.n);
        r.u.l->tuple = x->kind == N_TUPLE;
        for (int i = 0; i < x->args.n; i++) r.u.l->v[i] = eval(c, s, x->args.v[i]);
        r.u.l->n = (size_t)x->args.n;
        break;
    case N_DICT:
        r = jv_dict(c->a);
        for (int i = 0; i < x->args.n; i++) {
            jx_val k = eval(c, s, x->args.v[i]);
            if (k.t == JT_LIST && !k.u.l->tuple) jx_rt_fail(c, "unhashable type: 'list'");
            if (k.t == JT_DICT) jx_rt_fail(c, "unhashable type: 'dict'");
            jx_dict_set(c->a, r.u.d, k, eval(c, s, x->kwargs.v[i]));
        }
        break;
    case N_ATTR: r = jx_getattr(c, eval(c, s, x->x), x->name); break;
    case N_ITEM: {
        jx_val o = eval(c, s, x->x);
        r = jx_getitem(c, o, eval(c, s, x->y));
        break;
    }
    case N_SLICE: r = eval_slice(c, s, x); break;
    case N_CALL: {
        jx_val fn = eval(c, s, x->x);
        jx_args a;
        eval_args(c, s, x, &a, jv_none(), NULL);
        c->fail.line = x->line;
        r = jx_call(c, fn, &a);
        break;
    }
    case N_FILTER: r = eval_filter(c, s, x, eval(c, s, x->x)); break;
    case N_TEST: {
        if (!x->test_fn) jx_rt_fail(c, "No test named '%.100s' found.", x->name->s);
        jx_val in = eval(c, s, x->x);
        jx_args a;
        eval_args(c, s, x, &a, jv_none(), NULL);
        bool t = x->test_fn(c, in, &a);
        r = jv_bool(x->op ? !t : t);
        break;
    }
    case N_UNARY: {
        jx_val v = eval(c, s, x->x);
        jx_need_defined(c, v);
        if (!jv_is_num(v)) jx_rt_fail(c, "bad operand type for unary %c: '%s'", x->op == OP_NEG ? '-' : '+', jx_type_name(v));
        if (x->op == OP_POS) r = v.t == JT_BOOL ? jv_int(v.u.b) : v;
        else if (v.t == JT_FLOAT) r = jv_float(-v.u.f);
        else {
            if (ival(v) == INT64_MIN) jx_rt_fail(c, "integer overflow");
            r = jv_int(-ival(v));
        }
        break;
    }
    case N_BIN: {
        jx_val a = eval(c, s, x->x);
        jx_val b = eval(c, s, x->y);
        c->fail.line = x->line;
        r = binop(c, x->op, a, b);
        break;
    }
    case N_AND: r = eval(c, s, x->x); if (jx_truthy(r)) r = eval(c, s, x->y); break;
    case N_OR: r = eval(c, s, x->x); if (!jx_truthy(r)) r = eval(c, s, x->y); break;
    case N_NOT: r = jv_bool(!jx_truthy(eval(c, s, x->x))); break;
    case N_CMP: {
        jx_val left = eval(c, s, x->x);
        r = jv_bool(true);
        for (int i = 0; i < x->args.n; i++) {
            jx_val right = eval(c, s, x->args.v[i]);
            c->fail.line = x->line;
            if (!compare_op(c, x->ops[i], left, right)) {
                r = jv_bool(false);
                break;
            }
            left = right;
        }
        break;
    }
    case N_COND:
        if (jx_truthy(eval(c, s, x->y))) r = eval(c, s, x->x);
        else r = x->z ? eval(c, s, x->z) : jv_undef_hint(c->a, "the inline if-expression evaluated to false and no else section was defined.");
        break;
    default:
        jx_rt_fail(c, "internal error: statement used as expression");
    }
    c->depth--;
    return r;
}

/* ---- statements ------------------------------------------------------------ */
static jx_val apply_chain(jx_ctx *c, jx_scope *s, const jx_node *f, jx_val in)
{
    if (!f) return in;
    return eval_filter(c, s, f, apply_chain(c, s, f->x, in));
}

static flow exec_stmt(jx_ctx *c, jx_scope *s, const jx_node *x)
{
    c->fail.line = x->line;
    jx_step(c, 1);
    switch (x->kind) {
    case S_TEXT: out_val(c, x->lit); return FLOW_NORMAL;
    case S_OUT: out_val(c, eval(c, s, x->x)); return FLOW_NORMAL;
    case S_IF:
        return exec_body(c, s, jx_truthy(eval(c, s, x->x)) ? x->body : x->orelse);
    case S_FOR: return exec_for(c, s, x);
    case S_SET: assign(c, s, x->x, eval(c, s, x->y)); return FLOW_NORMAL;
    case S_SETBLOCK: {
        jx_val v = jv_strv(capture(c, s, x->body));
        assign(c, s, x->x, apply_chain(c, s, x->z, v));
        return FLOW_NORMAL;
    }
    case S_FILTERBLOCK: {
        jx_val v = jv_strv(capture(c, s, x->body));
        out_val(c, apply_chain(c, s, x->x, v));
        return FLOW_NORMAL;
    }
    case S_MACRO:
        scope_set(c, s, x->name, make_func(c, FN_MACRO, x, s, x->name->s));
        return FLOW_NORMAL;
    case S_CALLBLOCK: {
        jx_val caller = make_func(c, FN_CALLER, x, s, "caller");
        jx_val fn = eval(c, s, x->x->x);
        jx_args a;
        eval_args(c, s, x->x, &a, caller, x->name);
        out_val(c, jx_call(c, fn, &a));
        return FLOW_NORMAL;
    }
    case S_WITH: {
        jx_scope *w = scope_new(c, s);
        for (int i = 0; i < x->args.n; i++) assign(c, w, x->args.v[i], eval(c, s, x->kwargs.v[i]));
        return exec_body(c, w, x->body);
    }
    case S_BLOCK:
        if (!x->name) return exec_body(c, s, x->body);      /* {% generation %} */
        /* without a child template to fill it, a required block is missing */
        if (x->uses & BLOCK_REQUIRED) jx_rt_fail(c, "Required block '%.100s' not found", x->name->s);
        render_block(c, x->uses & BLOCK_SCOPED ? s : c->top, x);
        return FLOW_NORMAL;
    case S_LOAD:
        eval(c, s, x->x);         /* jinja2 evaluates the name before it looks for a loader */
        jx_rt_fail(c, "no loader for this environment specified");
    case S_BREAK: return FLOW_BREAK;
    case S_CONTINUE: return FLOW_CONTINUE;
    default:
        out_val(c, eval(c, s, x));
        return FLOW_NORMAL;
    }
}

static flow exec_body(jx_ctx *c, jx_scope *s, jx_nodes body)
{
    enter(c);
    for (int i = 0; i < body.n; i++) {
        flow f = exec_stmt(c, s, body.v[i]);
        if (f != FLOW_NORMAL) {
            c->depth--;
            return f;
        }
    }
    c->depth--;
    return FLOW_NORMAL;
}

jx_val jx_binop_add(jx_ctx *c, jx_val a, jx_val b) { return binop(c, OP_ADD, a, b); }

void jx_render_body(jx_ctx *c, jx_nodes body, jx_nodes blocks, jx_dict *vars)
{
    jx_scope *g = scope_new(c, NULL);
    jx_install_globals(c, g);
    /* jinja2 gives every template `self`, a reference to its blocks */
    scope_set(c, g, jx_str_c(c->a, "self"), make_func(c, FN_SELF, NULL, NULL, "self"));
    c->globals = g;
    c->blocks = blocks;
    jx_scope *top = scope_new(c, g);
    c->top = top;
    for (size_t i = 0; vars && i < vars->n; i++) jx_dict_set(c->a, &top->vars, vars->k[i], vars->v[i]);
    exec_body(c, top, body);
}
