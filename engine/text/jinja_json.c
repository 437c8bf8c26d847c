/* JSON for templates: reading variables (messages, tools) into values, and
 * the tojson filter, which must print exactly what Python's
 * json.dumps(x, ensure_ascii=False, ...) prints -- ", " and ": " between
 * items unless indenting, non-ASCII text left as is, floats as repr(). */
#include "config.h"

#include "jinja_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_JSON_DEPTH = 512 };

typedef struct jreader {
    jx_arena *a;
    jx_fail_ctx *f;
    const char *s;
    size_t n, i;
} jreader;

JX_NORETURN static void jfail(jreader *r, const char *what)
{
    size_t line = 1, col = 1;
    for (size_t k = 0; k < r->i && k < r->n; k++) {
        if (r->s[k] == '\n') {
            line++;
            col = 1;
        } else col++;
    }
    r->f->line = 0;
    jx_fail(r->f, JINJA_ERR_INPUT, "bad JSON at line %zu column %zu: %s", line, col, what);
}

static void jws(jreader *r)
{
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r')) r->i++;
}

static bool jword(jreader *r, const char *w)
{
    size_t n = strlen(w);
    if (r->n - r->i >= n && !memcmp(r->s + r->i, w, n)) {
        r->i += n;
        return true;
    }
    return false;
}

static int hex4(jreader *r)
{
    if (r->n - r->i < 4) jfail(r, "truncated \\u escape");
    int v = 0;
    for (int k = 0; k < 4; k++) {
        char h = r->s[r->i++];
        int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
        if (d < 0) jfail(r, "bad \\u escape");
        v = v * 16 + d;
    }
    return v;
}

static jx_val jstring(jreader *r)
{
    r->i++;                                   /* opening quote */
    jx_sb b;
    jx_sb_init(&b, r->a);
    for (;;) {
        if (r->i >= r->n) jfail(r, "unterminated string");
        unsigned char ch = (unsigned char)r->s[r->i++];
        if (ch == '"') break;
        if (ch < 0x20) jfail(r, "control character in string");
        if (ch != '\\') {
            jx_sb_addc(&b, (char)ch);
            continue;
        }
        if (r->i >= r->n) jfail(r, "unterminated string");
        char e = r->s[r->i++];
        switch (e) {
        case '"': case '\\': case '/': jx_sb_addc(&b, e); break;
        case 'b': jx_sb_addc(&b, '\b'); break;
        case 'f': jx_sb_addc(&b, '\f'); break;
        case 'n': jx_sb_addc(&b, '\n'); break;
        case 'r': jx_sb_addc(&b, '\r'); break;
        case 't': jx_sb_addc(&b, '\t'); break;
        case 'u': {
            uint32_t cp = (uint32_t)hex4(r);
            if (cp >= 0xD800 && cp <= 0xDBFF && r->n - r->i >= 6 && r->s[r->i] == '\\' && r->s[r->i + 1] == 'u') {
                size_t save = r->i;
                r->i += 2;
                uint32_t lo = (uint32_t)hex4(r);
                if (lo >= 0xDC00 && lo <= 0xDFFF) cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else r->i = save;
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;   /* a lone surrogate */
            jx_sb_addcp(&b, cp);
            break;
        }
        default: jfail(r, "bad escape in string");
        }
    }
    return jx_sb_val(&b);
}

static jx_val jnumber(jreader *r)
{
    size_t st = r->i;
    bool is_float = false;
    if (r->s[r->i] == '-') r->i++;
    if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9') jfail(r, "bad number");
    if (r->s[r->i] == '0') r->i++;
    else while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') r->i++;
    if (r->i < r->n && r->s[r->i] == '.') {
        is_float = true;
        r->i++;
        if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9') jfail(r, "bad number");
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') r->i++;
    }
    if (r->i < r->n && (r->s[r->i] | 32) == 'e') {
        is_float = true;
        r->i++;
        if (r->i < r->n && (r->s[r->i] == '+' || r->s[r->i] == '-')) r->i++;
        if (r->i >= r->n || r->s[r->i] < '0' || r->s[r->i] > '9') jfail(r, "bad number");
        while (r->i < r->n && r->s[r->i] >= '0' && r->s[r->i] <= '9') r->i++;
    }
    char buf[400];
    size_t len = r->i - st;
    if (len >= sizeof buf) jfail(r, "number too long");
    memcpy(buf, r->s + st, len);
    buf[len] = 0;
    if (!is_float) {
        char *e;
        errno = 0;
        long long v = strtoll(buf, &e, 10);
        if (errno != ERANGE) return jv_int(v);
        /* beyond 64 bits Python keeps an exact int; a float is our best */
    }
    return jv_float(strtod(buf, NULL));
}

static jx_val jvalue(jreader *r, int depth)
{
    if (depth > MAX_JSON_DEPTH) jfail(r, "nested too deeply");
    jws(r);
    if (r->i >= r->n) jfail(r, "unexpected end of input");
    char ch = r->s[r->i];
    if (ch == '"') return jstring(r);
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        if (jword(r, "-Infinity")) return jv_float(-INFINITY);
        return jnumber(r);
    }
    if (jword(r, "true")) return jv_bool(true);
    if (jword(r, "false")) return jv_bool(false);
    if (jword(r, "null")) return jv_none();
    if (jword(r, "NaN")) return jv_float(NAN);
    if (jword(r, "Infinity")) return jv_float(INFINITY);
    if (ch == '[') {
        r->i++;
        jx_val l = jv_list(r->a, 0);
        jws(r);
        if (r->i < r->n && r->s[r->i] == ']') {
            r->i++;
            return l;
        }
        for (;;) {
            jx_list_push(r->a, l.u.l, jvalue(r, depth + 1));
            jws(r);
            if (r->i < r->n && r->s[r->i] == ',') {
                r->i++;
                continue;
            }
            if (r->i < r->n && r->s[r->i] == ']') {
                r->i++;
                return l;
            }
            jfail(r, "expected ',' or ']'");
        }
    }
    if (ch == '{') {
        r->i++;
        jx_val d = jv_dict(r->a);
        jws(r);
        if (r->i < r->n && r->s[r->i] == '}') {
            r->i++;
            return d;
        }
        for (;;) {
            jws(r);
            if (r->i >= r->n || r->s[r->i] != '"') jfail(r, "expected a string key");
            jx_val k = jstring(r);
            jws(r);
            if (r->i >= r->n || r->s[r->i] != ':') jfail(r, "expected ':'");
            r->i++;
            jx_dict_set(r->a, d.u.d, k, jvalue(r, depth + 1));
            jws(r);
            if (r->i < r->n && r->s[r->i] == ',') {
                r->i++;
                continue;
            }
            if (r->i < r->n && r->s[r->i] == '}') {
                r->i++;
                return d;
            }
            jfail(r, "expected ',' or '}'");
        }
    }
    jfail(r, "unexpected character");
}

jx_val jx_json_parse(jx_arena *a, jx_fail_ctx *f, const char *s, size_t n)
{
    jreader r = {a, f, s, n, 0};
    if (n >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3)) r.i = 3;   /* a UTF-8 byte order mark */
    jx_val v = jvalue(&r, 0);
    jws(&r);
    if (r.i != r.n) jfail(&r, "extra data after the value");
    return v;
}

/* ---- json.dumps ---------------------------------------------------------------- */
static void dump_string(jx_sb *b, const char *s, size_t n, bool ascii)
{
    jx_sb_addc(b, '"');
    for (size_t i = 0; i < n;) {
        size_t st = i;
        uint32_t cp = jx_utf8_next(s, n, &i);
        switch (cp) {
        case '"': jx_sb_add(b, "\\\"", 2); continue;
        case '\\': jx_sb_add(b, "\\\\", 2); continue;
        case '\n': jx_sb_add(b, "\\n", 2); continue;
        case '\r': jx_sb_add(b, "\\r", 2); continue;
        case '\t': jx_sb_add(b, "\\t", 2); continue;
        case '\b': jx_sb_add(b, "\\b", 2); continue;
        case '\f': jx_sb_add(b, "\\f", 2); continue;
        default: break;
        }
        if (cp < 0x20) jx_sb_printf(b, "\\u%04x", cp);
        else if (cp < 0x80 || !ascii) jx_sb_add(b, s + st, i - st);
        else if (cp >= 0xDC80 && cp <= 0xDCFF) jx_sb_printf(b, "\\u%04x", cp);
        else if (cp < 0x10000) jx_sb_printf(b, "\\u%04x", cp);
        else {
            uint32_t v = cp - 0x10000;
            jx_sb_printf(b, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
    }
    jx_sb_addc(b, '"');
}

static void newline_indent(jx_sb *b, const jx_json_fmt *fmt, int level)
{
    jx_sb_addc(b, '\n');
    for (int k = 0; k < level; k++) {
        if (fmt->indent_str) jx_sb_add(b, fmt->indent_str, strlen(fmt->indent_str));
        else for (int s = 0; s < fmt->indent; s++) jx_sb_addc(b, ' ');
    }
}

static void dump_float(jx_sb *b, double f)
{
    if (isnan(f)) jx_sb_add(b, "NaN", 3);
    else if (isinf(f)) jx_sb_add(b, f < 0 ? "-Infinity" : "Infinity", f < 0 ? 9 : 8);
    else {
        char buf[64];
        jx_float_repr(buf, sizeof buf, f);
        jx_sb_add(b, buf, strlen(buf));
    }
}

static void dump_key(jx_ctx *c, jx_sb *b, jx_val k, const jx_json_fmt *fmt)
{
    switch (k.t) {
    case JT_STR: dump_string(b, k.u.s->s, k.u.s->len, fmt->ascii); return;
    case JT_INT: jx_sb_printf(b, "\"%lld\"", (long long)k.u.i); return;
    case JT_BOOL: jx_sb_add(b, k.u.b ? "\"true\"" : "\"false\"", k.u.b ? 6 : 7); return;
    case JT_NONE: jx_sb_add(b, "\"null\"", 6); return;
    case JT_FLOAT: jx_sb_addc(b, '"'); dump_float(b, k.u.f); jx_sb_addc(b, '"'); return;
    default: jx_rt_fail(c, "keys must be str, int, float, bool or None, not %s", jx_type_name(k));
    }
}

void jx_json_dump(jx_ctx *c, jx_sb *b, jx_val v, const jx_json_fmt *fmt, int depth)
{
    if (depth > 200) jx_rt_fail(c, "Circular reference detected");
    jx_step(c, 1);
    bool pretty = fmt->indent >= 0;
    switch (v.t) {
    case JT_NONE: jx_sb_add(b, "null", 4); return;
    case JT_BOOL: jx_sb_add(b, v.u.b ? "true" : "false", v.u.b ? 4 : 5); return;
    case JT_INT: jx_sb_printf(b, "%lld", (long long)v.u.i); return;
    case JT_FLOAT: dump_float(b, v.u.f); return;
    case JT_STR: dump_string(b, v.u.s->s, v.u.s->len, fmt->ascii); return;
    case JT_LIST: {
        jx_list *l = v.u.l;
        if (!l->n) {
            jx_sb_add(b, "[]", 2);
            return;
        }
        jx_sb_addc(b, '[');
        for (size_t i = 0; i < l->n; i++) {
            if (i) jx_sb_add(b, fmt->item_sep, strlen(fmt->item_sep));
            if (pretty) newline_indent(b, fmt, depth + 1);
            jx_json_dump(c, b, l->v[i], fmt, depth + 1);
        }
        if (pretty) newline_indent(b, fmt, depth);
        jx_sb_addc(b, ']');
        return;
    }
    case JT_DICT: {
        jx_dict *d = v.u.d;
        if (!d->n) {
            jx_sb_add(b, "{}", 2);
            return;
        }
        size_t *order = jx_alloc(c->a, d->n * sizeof *order);
        for (size_t i = 0; i < d->n; i++) order[i] = i;
        if (fmt->sort_keys)   /* insertion sort: stable, and key lists are short */
            for (size_t i = 1; i < d->n; i++)
                for (size_t j = i; j > 0 && jx_compare(c, d->k[order[j]], d->k[order[j - 1]]) < 0; j--) {
                    jx_step(c, 1);
                    size_t t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
        jx_sb_addc(b, '{');
        for (size_t i = 0; i < d->n; i++) {
            if (i) jx_sb_add(b, fmt->item_sep, strlen(fmt->item_sep));
            if (pretty) newline_indent(b, fmt, depth + 1);
            dump_key(c, b, d->k[order[i]], fmt);
            jx_sb_add(b, fmt->key_sep, strlen(fmt->key_sep));
            jx_json_dump(c, b, d->v[order[i]], fmt, depth + 1);
        }
        if (pretty) newline_indent(b, fmt, depth);
        jx_sb_addc(b, '}');
        return;
    }
    default:
        jx_rt_fail(c, "Object of type %s is not JSON serializable", jx_type_name(v));
    }
}
