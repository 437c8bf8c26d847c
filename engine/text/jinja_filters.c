/* Jinja filters and tests, as tables from name to function.  Each follows
 * jinja2 3.1's definition (argument names, defaults and odd corners such as
 * sort and unique ignoring case by default).  Where jinja2 returns a
 * generator (map, select, unique, batch, items) or reverse an iterator, we
 * return a JT_ITER: templates see the difference (always true, no length,
 * no JSON, used up by a loop), and must see it as jinja2 shows it. */
#include "config.h"

#include "jinja_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool flag(jx_val v, bool dflt) { return given(v) ? jx_truthy(v) : dflt; }

static jx_val list_of(jx_ctx *c, jx_val v)
{
    size_t n;
    jx_val *it = jx_iterate(c, v, &n);
    jx_val r = jv_list(c->a, n);
    if (n) memcpy(r.u.l->v, it, n * sizeof *it);
    r.u.l->n = n;
    return r;
}

/* jinja2's make_attrgetter: "a.b.0" walks items, digits become indices. */
static jx_val attr_path(jx_ctx *c, jx_val item, const jx_str *path, jx_val dflt)
{
    const char *s = path->s, *end = s + path->len;
    while (s <= end) {
        const char *dot = memchr(s, '.', (size_t)(end - s));
        if (!dot) dot = end;
        size_t n = (size_t)(dot - s);
        bool digits = n > 0;
        for (size_t k = 0; k < n; k++) digits = digits && s[k] >= '0' && s[k] <= '9';
        jx_val key = digits ? jv_int(strtoll(s, NULL, 10)) : jv_str(c->a, s, n);
        item = jx_getitem(c, item, key);
        if (dot == end) break;
        s = dot + 1;
    }
    if (item.t == JT_UNDEF && given(dflt)) return dflt;
    return item;
}

static jx_val lower_key(jx_ctx *c, jx_val v)
{
    if (v.t != JT_STR) return v;
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < v.u.s->len;) jx_sb_addcp(&b, jx_lower(jx_utf8_next(v.u.s->s, v.u.s->len, &i)));
    return jx_sb_val(&b);
}

/* Stable merge sort of items by keys (Python's sorted(); reverse keeps
   equal items in their order, as Python does).  eq_first: the sort
   filter's keys are one-item lists in jinja2 (make_multi_attrgetter), and
   Python compares lists with == before <, so equal keys never meet <:
   [none, none]|sort works where dictsort and groupby raise TypeError. */
static void sort_by(jx_ctx *c, jx_val *items, jx_val *keys, size_t n, bool reverse, bool eq_first)
{
    if (n < 2) return;
    jx_val *ti = jx_alloc(c->a, n * sizeof *ti), *tk = jx_alloc(c->a, n * sizeof *tk);
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                jx_step(c, 1);
                int r = eq_first && jx_equal(keys[j], keys[i]) ? 0 : jx_compare(c, keys[j], keys[i]);
                bool take_right = reverse ? r > 0 : r < 0;
                if (take_right) { ti[o] = items[j]; tk[o++] = keys[j++]; }
                else { ti[o] = items[i]; tk[o++] = keys[i++]; }
            }
            while (i < mid) { ti[o] = items[i]; tk[o++] = keys[i++]; }
            while (j < hi) { ti[o] = items[j]; tk[o++] = keys[j++]; }
        }
        memcpy(items, ti, n * sizeof *ti);
        memcpy(keys, tk, n * sizeof *tk);
    }
}

/* Sort keys of items: attribute (comma-separated paths) or the item. */
static jx_val *sort_keys(jx_ctx *c, jx_val *items, size_t n, jx_val attribute, bool case_sensitive)
{
    jx_val *keys = jx_alloc(c->a, (n ? n : 1) * sizeof *keys);
    const jx_str *attr = given(attribute) && attribute.t != JT_NONE ? jx_to_str(c, attribute) : NULL;
    for (size_t i = 0; i < n; i++) {
        jx_val k = items[i];
        if (attr && memchr(attr->s, ',', attr->len)) {
            k = jv_list(c->a, 2);
            k.u.l->tuple = true;
            const char *s = attr->s, *end = s + attr->len;
            while (s <= end) {
                const char *comma = memchr(s, ',', (size_t)(end - s));
                if (!comma) comma = end;
                jx_val part = attr_path(c, items[i], jx_str_new(c->a, s, (size_t)(comma - s)), jv_absent());
                jx_list_push(c->a, k.u.l, case_sensitive ? part : lower_key(c, part));
                s = comma + 1;
            }
        } else {
            if (attr) k = attr_path(c, items[i], attr, jv_absent());
            if (!case_sensitive) k = lower_key(c, k);
        }
        keys[i] = k;
    }
    return keys;
}

/* ---- filters ----------------------------------------------------------------- */
static jx_val f_abs(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("abs");
    jx_need_defined(c, in);
    if (in.t == JT_FLOAT) return jv_float(fabs(in.u.f));
    if (in.t == JT_INT) {
        if (in.u.i == INT64_MIN) jx_rt_fail(c, "integer overflow");
        return jv_int(in.u.i < 0 ? -in.u.i : in.u.i);
    }
    if (in.t == JT_BOOL) return jv_int(in.u.b);
    jx_rt_fail(c, "bad operand type for abs(): '%s'", jx_type_name(in));
}

static jx_val f_attr(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("attr", "name");
    const jx_str *name = jx_arg_str(c, "attr", p[0]);
    if (in.t == JT_DICT) {
        /* attr() reads attributes only, never dict items */
        jx_val m;
        return jx_method(c, in, name->s, &m) ? m : jv_undef_hint(c->a, "'dict object' has no attribute '%.200s'", name->s);
    }
    return jx_getattr(c, in, name);
}

static jx_val f_batch(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("batch", "linecount", "fill_with");
    /* as jinja2's loop: a row is full when its length equals linecount,
       so 0 yields an empty row first and a negative count never fills */
    int64_t n = jx_arg_int(c, "batch", p[0]);
    size_t cnt;
    jx_val *it = jx_iterate(c, in, &cnt);
    jx_val r = jv_list(c->a, 0), row = jv_list(c->a, 0);
    for (size_t i = 0; i < cnt; i++) {
        if ((int64_t)row.u.l->n == n) {
            jx_list_push(c->a, r.u.l, row);
            row = jv_list(c->a, 0);
        }
        jx_list_push(c->a, row.u.l, it[i]);
    }
    if (row.u.l->n) {
        if (given(p[1]) && p[1].t != JT_NONE)
            while ((int64_t)row.u.l->n < n) jx_list_push(c->a, row.u.l, p[1]);
        jx_list_push(c->a, r.u.l, row);
    }
    return jv_iter(r, "generator", false);
}

static jx_val f_capitalize(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("capitalize");
    const jx_str *s = jx_to_str(c, in);
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < s->len;) {
        bool first = i == 0;
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        if (first && cp == 0xDF) jx_sb_add(&b, "Ss", 2);
        else jx_sb_addcp(&b, first ? jx_upper(cp) : jx_lower(cp));
    }
    return jx_sb_val(&b);
}

static jx_val f_center(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("center", "width");
    const jx_str *s = jx_to_str(c, in);
    int64_t w = given(p[0]) ? jx_arg_int(c, "center", p[0]) : 80;
    int64_t len = (int64_t)jx_utf8_count(s->s, s->len);
    if (w > (int64_t)(c->out_max)) jx_fail(&c->fail, JINJA_ERR_LIMIT, "center(): width too large");
    if (w <= len) return jv_strv(s);
    int64_t marg = w - len, left = marg / 2 + (marg & w & 1);
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (int64_t k = 0; k < left; k++) jx_sb_addc(&b, ' ');
    jx_sb_add(&b, s->s, s->len);
    for (int64_t k = 0; k < marg - left; k++) jx_sb_addc(&b, ' ');
    return jx_sb_val(&b);
}

static jx_val f_default(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("default", "default_value", "boolean");
    jx_val dflt = given(p[0]) ? p[0] : jv_str(c->a, "", 0);
    if (in.t == JT_UNDEF || (flag(p[1], false) && !jx_truthy(in))) return dflt;
    return in;
}

static jx_val f_dictsort(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("dictsort", "case_sensitive", "by", "reverse");
    jx_need_defined(c, in);
    if (in.t != JT_DICT) jx_rt_fail(c, "dictsort(): expected a mapping, got '%s'", jx_type_name(in));
    bool by_value = false;
    if (given(p[1])) {
        const jx_str *by = jx_arg_str(c, "dictsort", p[1]);
        if (!strcmp(by->s, "value")) by_value = true;
        else if (strcmp(by->s, "key")) jx_rt_fail(c, "You can only sort by either \"key\" or \"value\"");
    }
    size_t n = in.u.d->n;
    jx_val *items = jx_alloc(c->a, (n ? n : 1) * sizeof *items), *keys = jx_alloc(c->a, (n ? n : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        items[i] = jv_tuple2(c->a, in.u.d->k[i], in.u.d->v[i]);
        jx_val k = by_value ? in.u.d->v[i] : in.u.d->k[i];
        keys[i] = flag(p[0], false) ? k : lower_key(c, k);
    }
    sort_by(c, items, keys, n, flag(p[2], false), false);
    jx_val r = jv_list(c->a, 0);
    r.u.l->v = items;
    r.u.l->n = r.u.l->cap = n;
    return r;
}

/* escape (e) leaves a safe string as it is; forceescape escapes its text
   again (markupsafe.escape and jinja2's do_forceescape) */
static jx_val f_escape(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("escape");
    if (in.t == JT_STR && in.u.s->safe) return in;
    return jv_strv(jx_html_escape(c->a, jx_to_str(c, in)));
}

static jx_val f_forceescape(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("forceescape");
    return jv_strv(jx_html_escape(c->a, jx_to_str(c, in)));
}

/* jinja2's do_filesizeformat: float(value) in decimal (kB) or binary (KiB)
   units, one decimal past a kilobyte */
static jx_val f_filesizeformat(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("filesizeformat", "binary");
    double x;
    jx_need_defined(c, in);
    if (in.t == JT_FLOAT) x = in.u.f;
    else if (in.t == JT_INT || in.t == JT_BOOL) x = in.t == JT_INT ? (double)in.u.i : in.u.b;
    else if (in.t == JT_STR) {
        if (!jx_parse_float(in.u.s, &x)) {
            jx_sb b;
            jx_sb_init(&b, c->a);
            jx_repr_of(c, &b, in, 0);
            jx_rt_fail(c, "could not convert string to float: %.200s", jx_sb_str(&b)->s);
        }
    } else {
        jx_rt_fail(c, "float() argument must be a string or a real number, not '%s'", jx_type_name(in));
    }
    bool bin = flag(p[0], false);
    double base = bin ? 1024 : 1000;
    static const char *const dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char *const two[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    /* base ** (i + 2) as Python turns the exact integer into a float */
    static const double dec_unit[] = {1e6, 1e9, 1e12, 1e15, 1e18, 1e21, 1e24, 1e27};
    jx_sb b;
    jx_sb_init(&b, c->a);
    if (x == 1) return jv_cstr(c->a, "1 Byte");
    if (x < base) {
        if (isinf(x)) jx_rt_fail(c, "cannot convert float infinity to integer");
        jx_sb_printf(&b, "%.0f Bytes", trunc(x) == 0 ? 0.0 : trunc(x));    /* int(): no "-0" */
        return jx_sb_val(&b);
    }
    int i = 0;
    double unit = 0;
    for (; i < 8; i++) {
        unit = bin ? ldexp(1.0, 10 * (i + 2)) : dec_unit[i];
        if (x < unit) break;
    }
    if (i == 8) i = 7;
    double v = base * x / unit;
    if (isnan(v)) jx_sb_add(&b, "nan", 3);            /* C may print "-nan" */
    else jx_sb_printf(&b, "%.1f", v);
    jx_sb_printf(&b, " %s", bin ? two[i] : dec[i]);
    return jx_sb_val(&b);
}

static jx_val f_first(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("first");
    if (in.t == JT_ITER) {              /* next(): only the first item is used up */
        if (!in.u.l->n) return jv_undef_hint(c->a, "No first item, sequence was empty.");
        jx_val v = in.u.l->v[0];
        jx_iter_drop(in, 1);
        return v;
    }
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    return n ? it[0] : jv_undef_hint(c->a, "No first item, sequence was empty.");
}

static jx_val f_last(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("last");
    /* jinja2 takes the first of reversed(): iterators are not reversible */
    if (in.t == JT_ITER && !in.u.l->view) jx_rt_fail(c, "'%s' object is not reversible", in.u.l->iter);
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    return n ? it[n - 1] : jv_undef_hint(c->a, "No last item, sequence was empty.");
}

/* Python's int(x) of a float: toward zero; jinja2 gives the default for
   nan (ValueError) and lets inf fail (OverflowError). */
static jx_val float_to_int(jx_ctx *c, double f, jx_val dflt, bool inf_fails)
{
    if (isnan(f)) return dflt;
    if (isinf(f) && !inf_fails) return dflt;
    if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
        jx_rt_fail(c, "int(): %g does not fit in 64 bits", f);
    return jv_int((int64_t)f);
}

/* jinja2's do_int: int(text, base), else int(float(text)), else the
   default; a bad base is one more way for int(text, base) to fail. */
static jx_val f_int(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("int", "default", "base");
    jx_val dflt = given(p[0]) ? p[0] : jv_int(0);
    jx_need_defined(c, in);             /* Undefined.__int__ raises */
    switch (in.t) {
    case JT_INT: return in;
    case JT_BOOL: return jv_int(in.u.b);
    case JT_FLOAT: return float_to_int(c, in.u.f, dflt, true);
    case JT_STR: {
        int64_t base = 10;
        if (given(p[1])) base = p[1].t == JT_INT ? p[1].u.i : p[1].t == JT_BOOL ? p[1].u.b : -1;
        if (base == 0 || (base >= 2 && base <= 36)) {
            int64_t iv;
            jx_numparse r = jx_parse_int(in.u.s, (int)base, &iv);
            if (r == JX_NUM_OK) return jv_int(iv);
            if (r == JX_NUM_RANGE) jx_rt_fail(c, "int(): '%.60s' does not fit in 64 bits", in.u.s->s);
        }
        double fv;
        return jx_parse_float(in.u.s, &fv) ? float_to_int(c, fv, dflt, false) : dflt;
    }
    default: return dflt;
    }
}

static jx_val f_float(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("float", "default");
    jx_val dflt = given(p[0]) ? p[0] : jv_float(0);
    jx_need_defined(c, in);             /* Undefined.__float__ raises */
    if (in.t == JT_FLOAT) return in;
    if (in.t == JT_INT || in.t == JT_BOOL) return jv_float(in.t == JT_INT ? (double)in.u.i : in.u.b);
    double fv;
    if (in.t == JT_STR && jx_parse_float(in.u.s, &fv)) return jv_float(fv);
    return dflt;
}

static jx_val f_format(jx_ctx *c, jx_val in, const jx_args *a)
{
    return jx_percent_format(c, jx_to_str(c, in), a);
}

static jx_val f_groupby(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("groupby", "attribute", "default", "case_sensitive");
    if (!given(p[0])) jx_rt_fail(c, "groupby() missing required argument 'attribute'");
    jx_val l = list_of(c, in);
    size_t n = l.u.l->n;
    bool cs = flag(p[2], false);
    const jx_str *attr = jx_to_str(c, p[0]);
    jx_val *keys = jx_alloc(c->a, (n ? n : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        jx_val k = attr_path(c, l.u.l->v[i], attr, p[1]);
        keys[i] = cs ? k : lower_key(c, k);
    }
    sort_by(c, l.u.l->v, keys, n, false, false);
    jx_val r = jv_list(c->a, 0);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && jx_equal(keys[j], keys[i])) j++;
        jx_val members = jv_list(c->a, j - i);
        memcpy(members.u.l->v, l.u.l->v + i, (j - i) * sizeof(jx_val));
        members.u.l->n = j - i;
        jx_val g = jv_tuple2(c->a, cs ? keys[i] : attr_path(c, l.u.l->v[i], attr, p[1]), members);
        g.u.l->group = true;
        jx_list_push(c->a, r.u.l, g);
        i = j;
    }
    return r;
}

static jx_val f_indent(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("indent", "width", "first", "blank");
    /* jinja2 does s += "\n" and s.splitlines(): only a string has both */
    jx_need_defined(c, in);
    if (in.t == JT_LIST && in.u.l->tuple) jx_rt_fail(c, "can only concatenate tuple (not \"str\") to tuple");
    if (in.t == JT_LIST) jx_rt_fail(c, "'list' object has no attribute 'splitlines'");
    if (in.t != JT_STR) jx_rt_fail(c, "unsupported operand type(s) for +=: '%s' and 'str'", jx_type_name(in));
    const jx_str *s = in.u.s;
    jx_sb ind;
    jx_sb_init(&ind, c->a);
    if (given(p[0]) && p[0].t == JT_STR) jx_sb_add(&ind, p[0].u.s->s, p[0].u.s->len);
    else {
        int64_t w = given(p[0]) ? jx_arg_int(c, "indent", p[0]) : 4;
        if (w > 4096) w = 4096;
        for (int64_t k = 0; k < w; k++) jx_sb_addc(&ind, ' ');
    }
    bool first = flag(p[1], false), blank = flag(p[2], false);
    /* jinja2 appends a newline, then rejoins s.splitlines(): a line is
       indented unless it is blank (and blank is false), the first only
       with first */
    jx_sb t;
    jx_sb_init(&t, c->a);
    jx_sb_add(&t, s->s, s->len);
    jx_sb_addc(&t, '\n');
    jx_sb b;
    jx_sb_init(&b, c->a);
    if (first) jx_sb_add(&b, ind.p, ind.n);
    size_t i = 0;
    for (int line = 0; i < t.n; line++) {
        size_t st = i, e = jx_line_end(t.p, t.n, &i);
        if (line) {
            jx_sb_addc(&b, '\n');
            if (blank || e > st) jx_sb_add(&b, ind.p, ind.n);
        }
        jx_sb_add(&b, t.p + st, e - st);
    }
    jx_str *r = (jx_str *)jx_sb_str(&b);
    r->safe = s->safe;                /* Markup in, Markup out */
    return jv_strv(r);
}

static jx_val f_items(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("items");
    if (in.t == JT_UNDEF) return jv_iter(jv_list(c->a, 0), "generator", false);
    if (in.t != JT_DICT && in.t != JT_NS) jx_rt_fail(c, "Can only get item pairs from a mapping.");
    return jv_iter(jx_dict_pairs(c->a, in.u.d), "generator", false);
}

static jx_val f_join(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("join", "d", "attribute");
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    const jx_str *sep = given(p[0]) ? jx_to_str(c, p[0]) : NULL;
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < n; i++) {
        if (i && sep) jx_sb_add(&b, sep->s, sep->len);
        jx_val v = it[i];
        if (given(p[1]) && p[1].t != JT_NONE) v = attr_path(c, v, jx_to_str(c, p[1]), jv_absent());
        jx_str_of(c, &b, v);
    }
    return jx_sb_val(&b);
}

static jx_val f_length(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("length");
    switch (in.t) {
    case JT_UNDEF: return jv_int(0);
    case JT_STR: return jv_int((int64_t)jx_utf8_count(in.u.s->s, in.u.s->len));
    case JT_LIST: return jv_int((int64_t)in.u.l->n);
    case JT_DICT: return jv_int((int64_t)in.u.d->n);
    case JT_LOOP: return jv_int((int64_t)in.u.loop->n);
    case JT_ITER:             /* a view has a len(), an iterator none */
        if (in.u.l->view) return jv_int((int64_t)in.u.l->n);
        /* fall through */
    default: jx_rt_fail(c, "object of type '%s' has no len()", jx_type_name(in));
    }
}

static jx_val f_list(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("list");
    return list_of(c, in);
}

static jx_val case_map(jx_ctx *c, jx_val in, bool up)
{
    const jx_str *s = jx_to_str(c, in);
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        if (up && cp == 0xDF) jx_sb_add(&b, "SS", 2);
        else jx_sb_addcp(&b, up ? jx_upper(cp) : jx_lower(cp));
    }
    return jx_sb_val(&b);
}

static jx_val f_lower(jx_ctx *c, jx_val in, const jx_args *a) { NOARGS("lower"); return case_map(c, in, false); }
static jx_val f_upper(jx_ctx *c, jx_val in, const jx_args *a) { NOARGS("upper"); return case_map(c, in, true); }
jx_val jx_case_map(jx_ctx *c, jx_val in, bool up) { return case_map(c, in, up); }

/* Arguments after the first n positionals, for passing on to a filter or test. */
static jx_args rest_args(const jx_args *a, int n)
{
    jx_args r = *a;
    r.npos = a->npos > n ? a->npos - n : 0;
    r.pos = a->npos > n ? a->pos + n : NULL;
    return r;
}

static jx_val f_map(jx_ctx *c, jx_val in, const jx_args *a)
{
    if (!jx_truthy(in)) return jv_iter(jv_list(c->a, 0), "generator", false);   /* as select_common */
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    jx_val r = jv_list(c->a, n);
    r.u.l->n = n;
    jx_val g = jv_iter(r, "generator", false);
    const jx_str *attr = NULL;
    jx_val dflt = jv_absent();
    for (int k = 0; k < a->nkw; k++) {
        if (!strcmp(a->kwname[k]->s, "attribute")) attr = jx_to_str(c, a->kw[k]);
        else if (!strcmp(a->kwname[k]->s, "default")) dflt = a->kw[k];
    }
    if (attr) {
        for (size_t i = 0; i < n; i++) r.u.l->v[i] = attr_path(c, it[i], attr, dflt);
        return g;
    }
    if (!a->npos) jx_rt_fail(c, "map requires a filter argument");
    const jx_str *fname = jx_arg_str(c, "map", a->pos[0]);
    jx_args rest = rest_args(a, 1);
    for (size_t i = 0; i < n; i++) r.u.l->v[i] = jx_apply_filter(c, fname->s, it[i], &rest);
    return g;
}

static jx_val min_max(jx_ctx *c, jx_val in, const jx_args *a, bool want_max)
{
    BIND(want_max ? "max" : "min", "case_sensitive", "attribute");
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    if (!n) return jv_undef_hint(c->a, "No aggregated item, sequence was empty.");
    jx_val *keys = sort_keys(c, it, n, p[1], flag(p[0], false));
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        int r = jx_compare(c, keys[i], keys[best]);
        if (want_max ? r > 0 : r < 0) best = i;
    }
    return it[best];
}

static jx_val f_max(jx_ctx *c, jx_val in, const jx_args *a) { return min_max(c, in, a, true); }
static jx_val f_min(jx_ctx *c, jx_val in, const jx_args *a) { return min_max(c, in, a, false); }

static jx_val f_pprint(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("pprint");
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_repr_of(c, &b, in, 0);
    return jx_sb_val(&b);
}

/* jinja2's select/reject/selectattr/rejectattr and map run only on a
   true value: none, 0, '' or undefined give an empty sequence, and their
   arguments go unchecked (tools | selectattr(...) with tools none). */
static jx_val select_common(jx_ctx *c, jx_val in, const jx_args *a, bool by_attr, bool keep)
{
    if (!jx_truthy(in)) return jv_iter(jv_list(c->a, 0), "generator", false);
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    int skip = by_attr ? 1 : 0;
    const jx_str *attr = NULL;
    if (by_attr) {
        if (!a->npos) jx_rt_fail(c, "selectattr/rejectattr need an attribute name");
        attr = jx_arg_str(c, "selectattr", a->pos[0]);
    }
    const char *test = a->npos > skip ? jx_arg_str(c, "select", a->pos[skip])->s : NULL;
    jx_args rest = rest_args(a, skip + 1);
    jx_val r = jv_list(c->a, 0);
    for (size_t i = 0; i < n; i++) {
        jx_val v = attr ? attr_path(c, it[i], attr, jv_absent()) : it[i];
        bool t = test ? jx_apply_test(c, test, v, &rest) : jx_truthy(v);
        if (t == keep) jx_list_push(c->a, r.u.l, it[i]);
    }
    return jv_iter(r, "generator", false);
}

static jx_val f_select(jx_ctx *c, jx_val in, const jx_args *a) { return select_common(c, in, a, false, true); }
static jx_val f_reject(jx_ctx *c, jx_val in, const jx_args *a) { return select_common(c, in, a, false, false); }
static jx_val f_selectattr(jx_ctx *c, jx_val in, const jx_args *a) { return select_common(c, in, a, true, true); }
static jx_val f_rejectattr(jx_ctx *c, jx_val in, const jx_args *a) { return select_common(c, in, a, true, false); }

/* random.choice(): any item of a sequence (a dict is indexed by position
   as Python does, which finds a key only when the keys are 0, 1, ...).
   The pick comes from the render's step count: no state, no clock. */
static jx_val f_random(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("random");
    size_t n;
    switch (in.t) {
    case JT_UNDEF: n = 0; break;
    case JT_STR: n = jx_utf8_count(in.u.s->s, in.u.s->len); break;
    case JT_LIST: n = in.u.l->n; break;
    case JT_DICT: n = in.u.d->n; break;
    default:                  /* of the iterators, only a view has a len() */
        if (in.t != JT_ITER || !in.u.l->view) jx_rt_fail(c, "object of type '%s' has no len()", jx_type_name(in));
        n = in.u.l->n;
    }
    if (!n) return jv_undef_hint(c->a, "No random item, sequence was empty.");
    uint64_t z = c->steps + 0x9E3779B97F4A7C15ull;    /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    size_t i = (size_t)(z % n);
    switch (in.t) {
    case JT_STR: return jx_getitem(c, in, jv_int((int64_t)i));
    case JT_DICT: {
        jx_val *v = jx_dict_find(in.u.d, jv_int((int64_t)i));
        if (!v) jx_rt_fail(c, "%zu", i);          /* Python's KeyError */
        return *v;
    }
    case JT_ITER: jx_rt_fail(c, "'%s' object is not subscriptable", in.u.l->iter);
    default: return in.u.l->v[i];
    }
}

static jx_val f_replace(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("replace", "old", "new", "count");
    int64_t count = given(p[2]) && p[2].t != JT_NONE ? jx_arg_int(c, "replace", p[2]) : -1;
    return jx_str_replace(c, jx_to_str(c, in), jx_to_str(c, p[0]), jx_to_str(c, p[1]), count);
}

static jx_val f_reverse(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("reverse");
    if (in.t == JT_STR) {
        size_t n = in.u.s->len, i = 0;
        char *o = jx_alloc(c->a, n + 1);
        while (i < n) {
            size_t st = i;
            jx_utf8_next(in.u.s->s, n, &i);
            memcpy(o + n - i, in.u.s->s + st, i - st);
        }
        return jv_str(c->a, o, n);
    }
    /* reversed() where Python has it, else a reversed list (a generator) */
    const char *rev = NULL;
    if (in.t == JT_LIST) rev = in.u.l->tuple ? "reversed" : "list_reverseiterator";
    else if (in.t == JT_DICT) rev = "dict_reversekeyiterator";
    else if (in.t == JT_UNDEF) rev = "reversed";
    else if (in.t == JT_ITER && in.u.l->view)
        rev = !strcmp(in.u.l->iter, "dict_items") ? "dict_reverseitemiterator"
            : !strcmp(in.u.l->iter, "dict_values") ? "dict_reversevalueiterator" : "dict_reversekeyiterator";
    else if (in.t != JT_ITER) jx_rt_fail(c, "argument must be iterable");
    jx_val l = list_of(c, in);
    for (size_t i = 0, j = l.u.l->n; j > 0 && i < j - 1; i++, j--) {
        jx_val t = l.u.l->v[i];
        l.u.l->v[i] = l.u.l->v[j - 1];
        l.u.l->v[j - 1] = t;
    }
    return rev ? jv_iter(l, rev, false) : l;
}

static jx_val f_round(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("round", "precision", "method");
    int64_t prec = given(p[0]) ? jx_arg_int(c, "round", p[0]) : 0;
    const char *method = given(p[1]) ? jx_arg_str(c, "round", p[1])->s : "common";
    jx_need_defined(c, in);
    if (!jv_is_num(in)) jx_rt_fail(c, "type %s doesn't define __round__ method", jx_type_name(in));
    if (prec > 300) prec = 300;
    if (prec < -300) prec = -300;
    double scale = pow(10, (double)prec), x = in.t == JT_FLOAT ? in.u.f : in.t == JT_BOOL ? in.u.b : (double)in.u.i;
    if (!strcmp(method, "common")) {
        if (in.t != JT_FLOAT && prec >= 0) return in.t == JT_BOOL ? jv_int(in.u.b) : in;
        double r;
        if (prec > 0 && prec < 40 && isfinite(x)) {
            /* Python rounds the exact binary value (2.675 -> 2.67), and so
               does printf */
            char buf[400];
            snprintf(buf, sizeof buf, "%.*f", (int)prec, x);
            r = strtod(buf, NULL);
        } else {
            r = rint(x * scale) / scale;
        }
        if (!isfinite(r)) r = x;
        if (in.t != JT_FLOAT) return jv_int((int64_t)r);
        return jv_float(r);
    }
    if (!strcmp(method, "ceil")) return jv_float(ceil(x * scale) / scale);
    if (!strcmp(method, "floor")) return jv_float(floor(x * scale) / scale);
    jx_rt_fail(c, "method must be common, ceil or floor");
}

static jx_val f_safe(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("safe");
    return jv_strv(jx_str_safe(c->a, jx_to_str(c, in)));
}

/* jinja2's do_slice: the items in `slices` columns, the first
   len % slices of them one longer; fill_with pads the others */
static jx_val f_slice(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("slice", "slices", "fill_with");
    int64_t k = jx_arg_int(c, "slice", p[0]);
    jx_val l = list_of(c, in);
    int64_t len = (int64_t)l.u.l->n;
    if (k == 0) jx_rt_fail(c, "integer division or modulo by zero");
    jx_val r = jv_list(c->a, 0);
    bool fill = given(p[1]) && p[1].t != JT_NONE;
    /* k > 0 here (range(k) is empty otherwise), so / and % are Python's */
    int64_t per = k > 0 ? len / k : 0, extra = k > 0 ? len % k : 0, offset = 0;
    for (int64_t n = 0; n < k; n++) {
        jx_step(c, 1);
        int64_t start = offset + n * per;
        if (n < extra) offset++;
        int64_t end = offset + (n + 1) * per;
        jx_val col = jv_list(c->a, (size_t)(end - start) + 1);
        if (end > start) memcpy(col.u.l->v, l.u.l->v + start, (size_t)(end - start) * sizeof(jx_val));
        col.u.l->n = (size_t)(end - start);
        if (fill && n >= extra) jx_list_push(c->a, col.u.l, p[1]);
        jx_list_push(c->a, r.u.l, col);
    }
    return jv_iter(r, "generator", false);
}

static jx_val f_sort(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("sort", "reverse", "case_sensitive", "attribute");
    jx_val l = list_of(c, in);
    jx_val *keys = sort_keys(c, l.u.l->v, l.u.l->n, p[2], flag(p[1], false));
    sort_by(c, l.u.l->v, keys, l.u.l->n, flag(p[0], false), true);
    return l;
}

static jx_val f_string(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("string");
    return jv_strv(jx_to_str(c, in));
}

static jx_val f_striptags(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("striptags");
    return jx_striptags(c, jx_to_str(c, in));
}

static jx_val f_sum(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("sum", "attribute", "start");
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    jx_val acc = given(p[1]) ? p[1] : jv_int(0);
    const jx_str *attr = given(p[0]) && p[0].t != JT_NONE ? jx_to_str(c, p[0]) : NULL;
    for (size_t i = 0; i < n; i++)
        acc = jx_binop_add(c, acc, attr ? attr_path(c, it[i], attr, jv_absent()) : it[i]);
    return acc;
}

static jx_val f_title(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("title");
    /* jinja2 splits on runs of '-', whitespace, '(', '{', '[', '<' and
       capitalizes each piece, so "they're" stays "They're". */
    const jx_str *s = jx_to_str(c, in);
    jx_sb b;
    jx_sb_init(&b, c->a);
    bool start = true, prev_delim = false;
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        bool delim = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || jx_is_space(cp);
        if (delim != prev_delim) start = true;
        if (start && cp == 0xDF) jx_sb_add(&b, "SS", 2);
        else jx_sb_addcp(&b, start ? jx_upper(cp) : jx_lower(cp));
        start = false;
        prev_delim = delim;
    }
    return jx_sb_val(&b);
}

/* Hugging Face replaces jinja2's tojson with
   tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
   calling json.dumps, so a positional argument is ensure_ascii, not
   jinja2's indent: x|tojson(4) escapes non-ASCII and does not indent. */
static jx_val f_tojson(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("tojson", "ensure_ascii", "indent", "separators", "sort_keys");
    jx_json_fmt fmt = {-1, NULL, ", ", ": ", flag(p[3], false), flag(p[0], false)};
    if (given(p[1]) && p[1].t != JT_NONE) {
        if (p[1].t == JT_STR) fmt.indent_str = p[1].u.s->s, fmt.indent = 0;
        else {
            int64_t ind = jx_arg_int(c, "tojson", p[1]);
            fmt.indent = ind < 0 ? 0 : ind > 64 ? 64 : (int)ind;
        }
        fmt.item_sep = ",";
    }
    if (given(p[2]) && p[2].t != JT_NONE) {
        if (p[2].t != JT_LIST || p[2].u.l->n != 2) jx_rt_fail(c, "tojson(): separators must be a pair of strings");
        fmt.item_sep = jx_arg_str(c, "tojson", p[2].u.l->v[0])->s;
        fmt.key_sep = jx_arg_str(c, "tojson", p[2].u.l->v[1])->s;
    }
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_json_dump(c, &b, in, &fmt, 0);
    return jx_sb_val(&b);
}

static jx_val f_trim(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("trim", "chars");
    return jx_strip(c, jx_to_str(c, in), given(p[0]) ? p[0] : jv_none(), true, true);
}

static jx_val f_truncate(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("truncate", "length", "killwords", "end", "leeway");
    const jx_str *s = jx_to_str(c, in);
    int64_t length = given(p[0]) ? jx_arg_int(c, "truncate", p[0]) : 255;
    const jx_str *end = given(p[2]) ? jx_to_str(c, p[2]) : jx_str_c(c->a, "...");
    int64_t leeway = given(p[3]) && p[3].t != JT_NONE ? jx_arg_int(c, "truncate", p[3]) : 5;
    int64_t endlen = (int64_t)jx_utf8_count(end->s, end->len), len = (int64_t)jx_utf8_count(s->s, s->len);
    if (length < endlen) jx_rt_fail(c, "expected length >= %lld, got %lld", (long long)endlen, (long long)length);
    if (leeway < 0) jx_rt_fail(c, "expected leeway >= 0, got %lld", (long long)leeway);
    if (len <= length + leeway) return jv_strv(s);
    size_t cut = 0;
    for (int64_t k = 0; k < length - endlen; k++) jx_utf8_next(s->s, s->len, &cut);
    if (!flag(p[1], false)) {
        const char *sp = NULL;
        for (size_t k = cut; k > 0; k--)
            if (s->s[k - 1] == ' ') {
                sp = s->s + k - 1;
                break;
            }
        if (sp) cut = (size_t)(sp - s->s);
    }
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_sb_add(&b, s->s, cut);
    jx_sb_add(&b, end->s, end->len);
    return jx_sb_val(&b);
}

static jx_val f_unique(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("unique", "case_sensitive", "attribute");
    size_t n;
    jx_val *it = jx_iterate(c, in, &n);
    jx_val *keys = sort_keys(c, it, n, p[1], flag(p[0], false));
    jx_val r = jv_list(c->a, 0);
    jx_val seen = jv_list(c->a, 0);
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t k = 0; k < seen.u.l->n && !dup; k++) dup = jx_equal(seen.u.l->v[k], keys[i]);
        jx_step(c, seen.u.l->n >> 4);
        if (dup) continue;
        jx_list_push(c->a, seen.u.l, keys[i]);
        jx_list_push(c->a, r.u.l, it[i]);
    }
    return jv_iter(r, "generator", false);
}

/* urllib's quote: UTF-8 bytes, letters, digits and _.-~ kept (and / in a
   path); in a query string (for_qs) / is quoted and a space is '+' */
static void url_quote(jx_ctx *c, jx_sb *b, jx_val v, bool for_qs)
{
    static const char hex[] = "0123456789ABCDEF";
    const jx_str *s = jx_to_str(c, v);
    for (size_t i = 0; i < s->len; i++) {
        unsigned char ch = (unsigned char)s->s[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
            ch == '.' || ch == '-' || ch == '~' || (ch == '/' && !for_qs)) {
            jx_sb_addc(b, (char)ch);
        } else if (ch == ' ' && for_qs) {
            jx_sb_addc(b, '+');
        } else {
            jx_sb_addc(b, '%');
            jx_sb_addc(b, hex[ch >> 4]);
            jx_sb_addc(b, hex[ch & 15]);
        }
    }
}

/* jinja2's do_urlencode: a string (or anything not iterable) is quoted as
   a path; a dict or a sequence of pairs becomes a query string */
static jx_val f_urlencode(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("urlencode");
    jx_sb b;
    jx_sb_init(&b, c->a);
    if (in.t != JT_DICT && in.t != JT_LIST && in.t != JT_ITER && in.t != JT_UNDEF) {
        url_quote(c, &b, in, false);
        return jx_sb_val(&b);
    }
    size_t n;
    jx_val pairs = in.t == JT_DICT ? jx_dict_pairs(c->a, in.u.d) : in;
    jx_val *it = jx_iterate(c, pairs, &n);
    for (size_t i = 0; i < n; i++) {
        if (it[i].t != JT_STR && it[i].t != JT_LIST && it[i].t != JT_ITER && it[i].t != JT_DICT)
            jx_rt_fail(c, "cannot unpack non-iterable %s object", jx_type_name(it[i]));
        size_t m;
        jx_val *kv = jx_iterate(c, it[i], &m);
        if (m != 2)
            jx_rt_fail(c, m > 2 ? "too many values to unpack (expected 2)" : "not enough values to unpack (expected 2, got %zu)", m);
        if (i) jx_sb_addc(&b, '&');
        url_quote(c, &b, kv[0], true);
        jx_sb_addc(&b, '=');
        url_quote(c, &b, kv[1], true);
    }
    return jx_sb_val(&b);
}

static jx_val f_wordcount(jx_ctx *c, jx_val in, const jx_args *a)
{
    NOARGS("wordcount");
    const jx_str *s = jx_to_str(c, in);
    jx_step(c, s->len >> 4);          /* a class lookup per character */
    int64_t words = 0;
    bool inword = false;
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        bool w = cp == '_' || jx_is_digit(cp) || jx_is_alpha(cp);
        if (w && !inword) words++;
        inword = w;
    }
    return jv_int(words);
}

static jx_val f_wordwrap(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("wordwrap", "width", "break_long_words", "wrapstring", "break_on_hyphens");
    const jx_str *s = jx_to_str(c, in);
    int64_t width = given(p[0]) ? jx_arg_int(c, "wordwrap", p[0]) : 79;
    const jx_str *sep = given(p[2]) && p[2].t != JT_NONE ? jx_arg_str(c, "wordwrap", p[2]) : jx_str_c(c->a, "\n");
    return jx_wordwrap(c, s, width, flag(p[1], true), sep, p[3]);
}

/* jinja2's do_xmlattr: ' key="value"' for each item whose value is not
   none or undefined, both escaped; a key with a space, '/', '>' or '='
   is refused */
static jx_val f_xmlattr(jx_ctx *c, jx_val in, const jx_args *a)
{
    BIND("xmlattr", "autospace");
    jx_need_defined(c, in);
    if (in.t != JT_DICT) jx_rt_fail(c, "'%s' object has no attribute 'items'", jx_type_name(in));
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < in.u.d->n; i++) {
        jx_val k = in.u.d->k[i], v = in.u.d->v[i];
        if (v.t == JT_NONE || v.t == JT_UNDEF) continue;
        if (k.t != JT_STR) jx_rt_fail(c, "expected string or bytes-like object, got '%s'", jx_type_name(k));
        for (size_t j = 0; j < k.u.s->len; j++)
            if (strchr(" \t\n\r\f\v/>=", k.u.s->s[j]) && k.u.s->s[j]) {
                jx_sb r;
                jx_sb_init(&r, c->a);
                jx_repr_of(c, &r, k, 0);
                jx_rt_fail(c, "Invalid character in attribute name: %.200s", jx_sb_str(&r)->s);
            }
        const jx_str *ek = jx_html_escape(c->a, k.u.s);
        const jx_str *ev = v.t == JT_STR && v.u.s->safe ? v.u.s : jx_html_escape(c->a, jx_to_str(c, v));
        jx_sb_addc(&b, ' ');
        jx_sb_add(&b, ek->s, ek->len);
        jx_sb_add(&b, "=\"", 2);
        jx_sb_add(&b, ev->s, ev->len);
        jx_sb_addc(&b, '"');
    }
    /* the items are joined by spaces; autospace keeps the leading one */
    if (b.n && !flag(p[0], true)) return jv_str(c->a, b.p + 1, b.n - 1);
    return jx_sb_val(&b);
}

static const struct {
    const char *name;
    jx_filter_fn fn;
} filters[] = {
    {"abs", f_abs}, {"attr", f_attr}, {"batch", f_batch}, {"capitalize", f_capitalize},
    {"center", f_center}, {"count", f_length}, {"d", f_default}, {"default", f_default},
    {"dictsort", f_dictsort}, {"e", f_escape}, {"escape", f_escape}, {"filesizeformat", f_filesizeformat},
    {"first", f_first},
    {"float", f_float}, {"forceescape", f_forceescape}, {"format", f_format}, {"groupby", f_groupby},
    {"indent", f_indent}, {"int", f_int}, {"items", f_items}, {"join", f_join}, {"last", f_last},
    {"length", f_length}, {"list", f_list}, {"lower", f_lower}, {"map", f_map}, {"max", f_max},
    {"min", f_min}, {"pprint", f_pprint}, {"random", f_random}, {"reject", f_reject}, {"rejectattr", f_rejectattr},
    {"replace", f_replace}, {"reverse", f_reverse}, {"round", f_round}, {"safe", f_safe},
    {"select", f_select}, {"selectattr", f_selectattr}, {"slice", f_slice}, {"sort", f_sort}, {"string", f_string},
    {"striptags", f_striptags}, {"sum", f_sum}, {"title", f_title}, {"tojson", f_tojson},
    {"trim", f_trim}, {"truncate", f_truncate}, {"unique", f_unique}, {"upper", f_upper},
    {"urlencode", f_urlencode}, {"wordcount", f_wordcount}, {"wordwrap", f_wordwrap}, {"xmlattr", f_xmlattr},
};

jx_filter_fn jx_find_filter(const char *name)
{
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
        if (!strcmp(filters[i].name, name)) return filters[i].fn;
    return NULL;
}

jx_val jx_apply_filter(jx_ctx *c, const char *name, jx_val in, const jx_args *a)
{
    jx_filter_fn fn = jx_find_filter(name);
    if (!fn) jx_rt_fail(c, "No filter named '%.100s'.", name);
    return fn(c, in, a);
}
