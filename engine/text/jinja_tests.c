/* Jinja tests (`x is defined`, `n is divisibleby 3`, ...), as a table from
 * name to function, following jinja2 3.1: `is sequence` and `is iterable`
 * hold for undefined values too, `is number` for booleans. */
#include "config.h"

#include "jinja_impl.h"

#include <math.h>
#include <string.h>


#define TEST1(fname) BIND(fname, "other"); if (!given(p[0])) jx_rt_fail(c, fname "() missing an argument")

static bool t_defined(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("defined"); return v.t != JT_UNDEF; }
static bool t_undefined(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("undefined"); return v.t == JT_UNDEF; }
static bool t_none(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("none"); return v.t == JT_NONE; }
static bool t_boolean(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("boolean"); return v.t == JT_BOOL; }
static bool t_true(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("true"); return v.t == JT_BOOL && v.u.b; }
static bool t_false(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("false"); return v.t == JT_BOOL && !v.u.b; }
static bool t_string(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("string"); return v.t == JT_STR; }
static bool t_number(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("number"); return jv_is_num(v); }
static bool t_integer(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("integer"); return v.t == JT_INT; }
static bool t_float(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("float"); return v.t == JT_FLOAT; }
static bool t_mapping(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("mapping"); return v.t == JT_DICT; }
/* jinja2's Undefined has a __call__ (that raises), so Python's callable()
   holds for it: `x is callable` is true for a missing x or attribute.  So
   does a loop's LoopContext, recursive or not; `self` is not. */
static bool t_callable(jx_ctx *c, jx_val v, const jx_args *a)
{
    NOARGS("callable");
    return (v.t == JT_FUNC && v.u.fn->kind != FN_SELF) || v.t == JT_UNDEF || v.t == JT_LOOP;
}
/* markupsafe's Markup (escape and safe filter results) has __html__ */
static bool t_escaped(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("escaped"); return v.t == JT_STR && v.u.s->safe; }

static bool t_iterable(jx_ctx *c, jx_val v, const jx_args *a)
{
    NOARGS("iterable");
    return v.t == JT_STR || v.t == JT_LIST || v.t == JT_DICT || v.t == JT_UNDEF || v.t == JT_ITER;
}

static bool t_sequence(jx_ctx *c, jx_val v, const jx_args *a)
{
    NOARGS("sequence");
    return v.t == JT_STR || v.t == JT_LIST || v.t == JT_DICT || v.t == JT_UNDEF;
}

/* jinja2 tests value % 2 == 1 (or 0), which a float passes too when it is
   whole (3.0 is odd, 2.5 neither); Python's % takes the divisor's sign. */
static bool parity(jx_ctx *c, jx_val v, int want)
{
    jx_need_defined(c, v);
    if (v.t == JT_FLOAT) {
        double r = fmod(v.u.f, 2.0);
        if (r < 0) r += 2.0;
        return r == want;
    }
    if (v.t != JT_INT && v.t != JT_BOOL) jx_rt_fail(c, "odd/even need an integer, got '%s'", jx_type_name(v));
    int64_t i = v.t == JT_BOOL ? v.u.b : v.u.i;
    return (i & 1) == want;
}
static bool t_odd(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("odd"); return parity(c, v, 1); }
static bool t_even(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("even"); return parity(c, v, 0); }

static bool t_divisibleby(jx_ctx *c, jx_val v, const jx_args *a)
{
    BIND("divisibleby", "num");
    if (v.t == JT_FLOAT || p[0].t == JT_FLOAT) {         /* value % num == 0, in floats */
        jx_need_defined(c, v);
        jx_need_defined(c, p[0]);
        if (!jv_is_num(v) || !jv_is_num(p[0])) jx_rt_fail(c, "divisibleby(): expected numbers");
        double x = v.t == JT_FLOAT ? v.u.f : (double)jx_arg_int(c, "divisibleby", v);
        double y = p[0].t == JT_FLOAT ? p[0].u.f : (double)jx_arg_int(c, "divisibleby", p[0]);
        if (y == 0) jx_rt_fail(c, "float modulo");
        return fmod(x, y) == 0;
    }
    int64_t d = jx_arg_int(c, "divisibleby", p[0]), x = jx_arg_int(c, "divisibleby", v);
    if (d == 0) jx_rt_fail(c, "integer division or modulo by zero");
    return d == -1 || x % d == 0;
}

static bool t_eq(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("eq"); return jx_equal(v, p[0]); }
static bool t_ne(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("ne"); return !jx_equal(v, p[0]); }
static bool t_lt(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("lt"); return jx_compare(c, v, p[0]) < 0; }
static bool t_le(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("le"); return jx_compare(c, v, p[0]) <= 0; }
static bool t_gt(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("gt"); return jx_compare(c, v, p[0]) > 0; }
static bool t_ge(jx_ctx *c, jx_val v, const jx_args *a) { TEST1("ge"); return jx_compare(c, v, p[0]) >= 0; }

static bool t_in(jx_ctx *c, jx_val v, const jx_args *a)
{
    BIND("in", "seq");
    jx_val seq = p[0];
    if (seq.t == JT_STR) {
        if (v.t != JT_STR) jx_rt_fail(c, "'in <string>' requires string as left operand, not %s", jx_type_name(v));
        return !v.u.s->len || memmem(seq.u.s->s, seq.u.s->len, v.u.s->s, v.u.s->len);
    }
    if (seq.t == JT_DICT) return jx_dict_find(seq.u.d, v) != NULL;
    size_t n;
    jx_val *it = jx_iterate(c, seq, &n);
    for (size_t i = 0; i < n; i++)
        if (jx_equal(it[i], v)) return true;
    return false;
}

/* jinja2 tests str(value).islower(): a list or dict prints its letters */
static bool case_test(jx_ctx *c, jx_val v, bool up)
{
    v = jv_strv(jx_to_str(c, v));
    jx_step(c, v.u.s->len >> 4);      /* a case lookup per character */
    bool cased = false;
    for (size_t i = 0; i < v.u.s->len;) {
        uint32_t cp = jx_utf8_next(v.u.s->s, v.u.s->len, &i);
        if (jx_upper(cp) != jx_lower(cp)) {
            if ((up ? jx_upper(cp) : jx_lower(cp)) != cp) return false;
            cased = true;
        }
    }
    return cased;
}
static bool t_lower(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("lower"); return case_test(c, v, false); }
static bool t_upper(jx_ctx *c, jx_val v, const jx_args *a) { NOARGS("upper"); return case_test(c, v, true); }

static bool t_sameas(jx_ctx *c, jx_val v, const jx_args *a)
{
    TEST1("sameas");
    jx_val o = p[0];
    if (v.t != o.t) return false;
    switch (v.t) {
    case JT_NONE: case JT_UNDEF: return true;
    case JT_BOOL: return v.u.b == o.u.b;
    case JT_INT: return v.u.i == o.u.i && v.u.i >= -5 && v.u.i <= 256;   /* CPython's small ints */
    case JT_STR: return v.u.s == o.u.s;
    case JT_LIST: case JT_ITER: return v.u.l == o.u.l;
    case JT_DICT: case JT_NS: return v.u.d == o.u.d;
    case JT_FUNC: return v.u.fn == o.u.fn;
    default: return false;
    }
}

static bool t_filter(jx_ctx *c, jx_val v, const jx_args *a)
{
    NOARGS("filter");
    return v.t == JT_STR && jx_find_filter(v.u.s->s);
}

static bool t_test(jx_ctx *c, jx_val v, const jx_args *a)
{
    NOARGS("test");
    return v.t == JT_STR && jx_find_test(v.u.s->s);
}

static const struct {
    const char *name;
    jx_test_fn fn;
} tests[] = {
    {"boolean", t_boolean}, {"callable", t_callable}, {"defined", t_defined},
    {"divisibleby", t_divisibleby}, {"eq", t_eq}, {"equalto", t_eq}, {"escaped", t_escaped},
    {"even", t_even}, {"false", t_false}, {"filter", t_filter}, {"float", t_float}, {"ge", t_ge},
    {"greaterthan", t_gt}, {"gt", t_gt}, {"in", t_in}, {"integer", t_integer},
    {"iterable", t_iterable}, {"le", t_le}, {"lessthan", t_lt}, {"lower", t_lower}, {"lt", t_lt},
    {"mapping", t_mapping}, {"ne", t_ne}, {"none", t_none}, {"number", t_number}, {"odd", t_odd},
    {"sameas", t_sameas}, {"sequence", t_sequence}, {"string", t_string}, {"test", t_test},
    {"true", t_true}, {"undefined", t_undefined}, {"upper", t_upper},
};

jx_test_fn jx_find_test(const char *name)
{
    static const struct { const char *alias, *name; } ops[] = {
        {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"<=", "le"}, {">", "gt"}, {">=", "ge"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].alias, name)) name = ops[i].name;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        if (!strcmp(tests[i].name, name)) return tests[i].fn;
    return NULL;
}

bool jx_apply_test(jx_ctx *c, const char *name, jx_val in, const jx_args *a)
{
    jx_test_fn fn = jx_find_test(name);
    if (!fn) jx_rt_fail(c, "No test named '%.100s'.", name);
    return fn(c, in, a);
}
