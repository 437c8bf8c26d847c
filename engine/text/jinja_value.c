/* Jinja values: the arena they live in, construction, Python's equality,
 * ordering, truthiness, str() and repr(), and the UTF-8 and case helpers
 * that make string operations count code points as Python does. */
#include "config.h"

#include "ember.h"
#include "jinja_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jx_fail(jx_fail_ctx *f, jinja_status st, const char *fmt, ...)
{
    jinja_error *e = f->err;
    e->status = st;
    e->line = f->line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    /* raise_exception('') and friends: a caller must always have words to
       show, so an empty message names the kind of failure instead */
    if (!e->msg[0]) snprintf(e->msg, sizeof e->msg, "%s with an empty message", jinja_status_name(st));
    longjmp(f->jb, 1);
}

/* ---- arena ---------------------------------------------------------------- */
struct jx_chunk {
    jx_chunk *next;
    size_t cap, used;
    size_t last;              /* offset of the newest allocation (jx_grow in place) */
    _Alignas(16) char data[];
};

enum { CHUNK = 64 * 1024 };

static jx_chunk *new_chunk(jx_arena *a, size_t cap)
{
    size_t bytes = sizeof(jx_chunk) + cap;
    if (a->max && (a->used + bytes > a->max || bytes > a->max))
        jx_fail(a->fail, JINJA_ERR_LIMIT, "template uses too much memory (over %zu MiB)",
                a->max >> 20);
    jx_chunk *c = malloc(bytes);
    if (!c) jx_fail(a->fail, JINJA_ERR_LIMIT, "out of memory");
    a->used += bytes;
    c->cap = cap;
    c->used = 0;
    c->last = 0;
    return c;
}

void *jx_alloc(jx_arena *a, size_t n)
{
    size_t need = (n + 15) & ~(size_t)15;
    if (need < n) jx_fail(a->fail, JINJA_ERR_LIMIT, "allocation too large");
    if (a->charge) *a->charge += n >> 6;
    jx_chunk *h = a->head;
    if (!h || h->cap - h->used < need) {
        if (need > CHUNK / 4) {
            /* Big blocks get a chunk of their own behind the head, so the
               head's free space stays usable for small ones. */
            jx_chunk *c = new_chunk(a, need);
            c->used = need;
            if (h) {
                c->next = h->next;
                h->next = c;
            } else {
                c->next = NULL;
                a->head = c;
            }
            memset(c->data, 0, need);
            return c->data;
        }
        jx_chunk *c = new_chunk(a, CHUNK);
        c->next = h;
        a->head = h = c;
    }
    void *p = h->data + h->used;
    h->last = h->used;
    h->used += need;
    memset(p, 0, need);
    return p;
}

void *jx_grow(jx_arena *a, void *p, size_t old, size_t n)
{
    jx_chunk *h = a->head;
    if (p && h && (char *)p == h->data + h->last) {
        size_t need = (n + 15) & ~(size_t)15;
        if (need >= n && h->last + need <= h->cap) {
            if (a->charge) *a->charge += (n - old) >> 6;
            if (n > old) memset((char *)p + old, 0, n - old);
            h->used = h->last + need;
            return p;
        }
    }
    void *q = jx_alloc(a, n);
    if (p && old) memcpy(q, p, old < n ? old : n);
    return q;
}

void jx_arena_free(jx_arena *a)
{
    jx_chunk *c = a->head;
    while (c) {
        jx_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

/* ---- construction --------------------------------------------------------- */
const jx_str *jx_str_new(jx_arena *a, const char *s, size_t n)
{
    if (n > SIZE_MAX / 2) jx_fail(a->fail, JINJA_ERR_LIMIT, "string too large");
    jx_str *r = jx_alloc(a, sizeof(jx_str) + n + 1);
    r->len = n;
    r->safe = false;
    if (n) memcpy(r->s, s, n);
    r->s[n] = 0;
    return r;
}

const jx_str *jx_str_safe(jx_arena *a, const jx_str *s)
{
    if (s->safe) return s;
    jx_str *r = (jx_str *)jx_str_new(a, s->s, s->len);
    r->safe = true;
    return r;
}

const jx_str *jx_html_escape(jx_arena *a, const jx_str *s)
{
    jx_sb b;
    jx_sb_init(&b, a);
    for (size_t i = 0; i < s->len; i++) {
        switch (s->s[i]) {
        case '&': jx_sb_add(&b, "&amp;", 5); break;
        case '<': jx_sb_add(&b, "&lt;", 4); break;
        case '>': jx_sb_add(&b, "&gt;", 4); break;
        case '"': jx_sb_add(&b, "&#34;", 5); break;
        case '\'': jx_sb_add(&b, "&#39;", 5); break;
        default: jx_sb_addc(&b, s->s[i]);
        }
    }
    jx_str *r = (jx_str *)jx_sb_str(&b);
    r->safe = true;
    return r;
}

const jx_str *jx_str_c(jx_arena *a, const char *s) { return jx_str_new(a, s, strlen(s)); }
jx_val jv_str(jx_arena *a, const char *s, size_t n) { return jv_strv(jx_str_new(a, s, n)); }
jx_val jv_cstr(jx_arena *a, const char *s) { return jv_strv(jx_str_c(a, s)); }

jx_val jv_undef_hint(jx_arena *a, const char *fmt, ...)
{
    char buf[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jx_val v = jv_undef();
    v.u.s = jx_str_c(a, buf);
    return v;
}

jx_val jv_list(jx_arena *a, size_t cap)
{
    jx_list *l = jx_alloc(a, sizeof *l);
    if (cap) {
        if (cap > SIZE_MAX / sizeof(jx_val)) jx_fail(a->fail, JINJA_ERR_LIMIT, "list too large");
        l->v = jx_alloc(a, cap * sizeof(jx_val));
        l->cap = cap;
    }
    jx_val v = {JT_LIST, {0}};
    v.u.l = l;
    return v;
}

jx_val jv_tuple2(jx_arena *a, jx_val x, jx_val y)
{
    jx_val t = jv_list(a, 2);
    t.u.l->tuple = true;
    t.u.l->v[0] = x;
    t.u.l->v[1] = y;
    t.u.l->n = 2;
    return t;
}

jx_val jx_dict_pairs(jx_arena *a, const jx_dict *d)
{
    jx_val r = jv_list(a, d->n);
    for (size_t i = 0; i < d->n; i++) r.u.l->v[i] = jv_tuple2(a, d->k[i], d->v[i]);
    r.u.l->n = d->n;
    return r;
}

jx_val jv_iter(jx_val l, const char *pytype, bool view)
{
    l.t = JT_ITER;
    l.u.l->iter = pytype;
    l.u.l->view = view;
    return l;
}

void jx_iter_drop(jx_val it, size_t k)
{
    jx_list *l = it.u.l;
    if (l->view) return;
    if (k > l->n) k = l->n;
    if (!k) return;   /* an empty list's v may be NULL, and NULL + 0 is undefined */
    /* the items stay where they are (callers may hold a pointer to them);
       the list just starts later, and cap shrinks with it so a push (there
       is none on iterators) could never write past the block */
    l->v += k;
    l->n -= k;
    l->cap = l->n;
}

jx_val jv_dict(jx_arena *a)
{
    jx_val v = {JT_DICT, {0}};
    v.u.d = jx_alloc(a, sizeof(jx_dict));
    return v;
}

void jx_list_push(jx_arena *a, jx_list *l, jx_val v)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 4;
        if (nc > SIZE_MAX / sizeof(jx_val)) jx_fail(a->fail, JINJA_ERR_LIMIT, "list too large");
        l->v = jx_grow(a, l->v, l->cap * sizeof(jx_val), nc * sizeof(jx_val));
        l->cap = nc;
    }
    l->v[l->n++] = v;
}

enum { DICT_INDEX_MIN = 32 };

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;            /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return mix64(h);
}

/* Equal values (jx_equal) hash alike: 1, 1.0 and True; a list and a
   tuple of equal items.  Other types only equal their own type, so their
   type is enough (dicts and the like are not keys in practice).  A
   sequence hashes its length and its first items, a few levels deep, so
   the cost stays bounded for tuples that share sub-tuples. */
static uint64_t hash_val(jx_val v, int depth)
{
    switch (v.t) {
    case JT_BOOL: return mix64((uint64_t)v.u.b);
    case JT_INT: return mix64((uint64_t)v.u.i);
    case JT_FLOAT: {
        double f = v.u.f;
        if (f >= -9223372036854775808.0 && f < 9223372036854775808.0 && f == (double)(int64_t)f)
            return mix64((uint64_t)(int64_t)f);
        uint64_t bits;
        memcpy(&bits, &f, sizeof bits);
        return mix64(bits ^ 0x5bd1e995ULL);
    }
    case JT_STR: return hash_bytes(v.u.s->s, v.u.s->len);
    case JT_LIST: {
        uint64_t h = mix64(v.u.l->n + 0x51ULL);
        if (depth < 4)
            for (size_t i = 0; i < v.u.l->n && i < 8; i++) h = mix64(h ^ hash_val(v.u.l->v[i], depth + 1));
        return h;
    }
    default: return mix64(0x1000u + (unsigned)v.t);
    }
}

static void index_put(jx_dict *d, uint64_t h, size_t at)
{
    size_t mask = d->ixcap - 1;
    size_t i = (size_t)h & mask;
    while (d->ix[i]) i = (i + 1) & mask;
    d->ix[i] = (uint32_t)(at + 1);
    d->ixused++;
}

static void index_build(jx_arena *a, jx_dict *d)
{
    size_t cap = 64;
    while (cap < 4 * d->n) cap *= 2;
    d->ix = jx_alloc(a, cap * sizeof *d->ix);
    d->ixcap = cap;
    d->ixused = 0;
    for (size_t i = 0; i < d->n; i++) index_put(d, hash_val(d->k[i], 0), i);
}

jx_val *jx_dict_find(jx_dict *d, jx_val key)
{
    if (d->ix) {
        size_t mask = d->ixcap - 1;
        for (size_t i = (size_t)hash_val(key, 0) & mask; d->ix[i]; i = (i + 1) & mask) {
            size_t at = d->ix[i] - 1;
            if (at < d->n && jx_equal(d->k[at], key)) return &d->v[at];
        }
        return NULL;
    }
    for (size_t i = 0; i < d->n; i++)
        if (jx_equal(d->k[i], key)) return &d->v[i];
    return NULL;
}

static bool key_is(jx_val k, const char *key, size_t n)
{
    return k.t == JT_STR && k.u.s->len == n && !memcmp(k.u.s->s, key, n);
}

jx_val *jx_dict_finds(jx_dict *d, const char *key, size_t n)
{
    if (d->ix) {
        size_t mask = d->ixcap - 1;
        for (size_t i = (size_t)hash_bytes(key, n) & mask; d->ix[i]; i = (i + 1) & mask) {
            size_t at = d->ix[i] - 1;
            if (at < d->n && key_is(d->k[at], key, n)) return &d->v[at];
        }
        return NULL;
    }
    for (size_t i = 0; i < d->n; i++)
        if (key_is(d->k[i], key, n)) return &d->v[i];
    return NULL;
}

void jx_dict_set(jx_arena *a, jx_dict *d, jx_val key, jx_val v)
{
    jx_val *slot = jx_dict_find(d, key);
    if (slot) {
        *slot = v;
        return;
    }
    if (d->n == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 4;
        if (nc > SIZE_MAX / sizeof(jx_val) || nc >= UINT32_MAX) jx_fail(a->fail, JINJA_ERR_LIMIT, "dict too large");
        d->k = jx_grow(a, d->k, d->cap * sizeof(jx_val), nc * sizeof(jx_val));
        d->v = jx_grow(a, d->v, d->cap * sizeof(jx_val), nc * sizeof(jx_val));
        d->cap = nc;
    }
    d->k[d->n] = key;
    d->v[d->n] = v;
    d->n++;
    if (d->ix && 2 * (d->ixused + 1) <= d->ixcap) index_put(d, hash_val(key, 0), d->n - 1);
    else if (d->n >= DICT_INDEX_MIN) index_build(a, d);
}

jx_val jx_deep_copy(jx_arena *a, jx_val v, int depth, jx_fail_ctx *f)
{
    if (depth > 512) jx_fail(f, JINJA_ERR_LIMIT, "variables nested too deeply");
    switch (v.t) {
    case JT_STR: return jv_str(a, v.u.s->s, v.u.s->len);
    case JT_LIST: {
        jx_val r = jv_list(a, v.u.l->n);
        r.u.l->tuple = v.u.l->tuple;
        for (size_t i = 0; i < v.u.l->n; i++) r.u.l->v[i] = jx_deep_copy(a, v.u.l->v[i], depth + 1, f);
        r.u.l->n = v.u.l->n;
        return r;
    }
    case JT_DICT: case JT_NS: {
        jx_val r = jv_dict(a);
        r.t = v.t;
        for (size_t i = 0; i < v.u.d->n; i++)
            jx_dict_set(a, r.u.d, jx_deep_copy(a, v.u.d->k[i], depth + 1, f),
                        jx_deep_copy(a, v.u.d->v[i], depth + 1, f));
        return r;
    }
    default: return v;
    }
}

bool jx_truthy(jx_val v)
{
    switch (v.t) {
    case JT_BOOL: return v.u.b;
    case JT_INT: return v.u.i != 0;
    case JT_FLOAT: return v.u.f != 0;
    case JT_STR: return v.u.s->len > 0;
    case JT_LIST: return v.u.l->n > 0;
    case JT_DICT: return v.u.d->n > 0;
    case JT_NS: case JT_FUNC: case JT_LOOP: return true;
    case JT_ITER: return !v.u.l->view || v.u.l->n > 0;    /* Python objects without __len__ are true */
    default: return false;
    }
}

const char *jx_type_name(jx_val v)
{
    switch (v.t) {
    case JT_UNDEF: case JT_ABSENT: return "Undefined";
    case JT_NONE: return "NoneType";
    case JT_BOOL: return "bool";
    case JT_INT: return "int";
    case JT_FLOAT: return "float";
    case JT_STR: return "str";
    case JT_LIST: return v.u.l->tuple ? "tuple" : "list";
    case JT_DICT: return "dict";
    case JT_NS: return "Namespace";
    case JT_FUNC:
        switch (v.u.fn->kind) {
        case FN_BUILTIN: return "builtin_function_or_method";
        case FN_SELF: return "TemplateReference";
        case FN_BLOCK: return "BlockReference";
        case FN_MACRO: case FN_CALLER: break;
        }
        return "Macro";
    case JT_LOOP: return "LoopContext";
    case JT_ITER: return v.u.l->iter;
    }
    return "object";
}

/* ---- equality and ordering ------------------------------------------------ */
static double num_of(jx_val v) { return v.t == JT_FLOAT ? v.u.f : v.t == JT_BOOL ? v.u.b : (double)v.u.i; }
static int64_t int_of(jx_val v) { return v.t == JT_BOOL ? v.u.b : v.u.i; }

/* Past this much work in one comparison (lists that share sublists can
   hold 2^60 paths in a few kB), equality gives up: it answers false and
   leaves jx_work so high that the render's next step fails the budget. */
enum { EQUAL_WORK_MAX = 1 << 26 };

static bool equal_depth(jx_val a, jx_val b, int depth)
{
    if (depth > 200) return false;
    if (jx_work > EQUAL_WORK_MAX) {
        jx_work = UINT64_MAX / 2;
        return false;
    }
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a.t != JT_FLOAT && b.t != JT_FLOAT) return int_of(a) == int_of(b);
        return num_of(a) == num_of(b);
    }
    if (a.t != b.t) return false;
    switch (a.t) {
    case JT_UNDEF: case JT_NONE: case JT_ABSENT: return true;
    case JT_STR:
        if (a.u.s == b.u.s) return true;
        if (a.u.s->len != b.u.s->len) return false;
        jx_work += a.u.s->len >> 6;
        return !memcmp(a.u.s->s, b.u.s->s, a.u.s->len);
    case JT_LIST:
        if (a.u.l == b.u.l) return true;
        if (a.u.l->tuple != b.u.l->tuple || a.u.l->n != b.u.l->n) return false;
        jx_work += 1 + (a.u.l->n >> 4);
        for (size_t i = 0; i < a.u.l->n; i++)
            if (!equal_depth(a.u.l->v[i], b.u.l->v[i], depth + 1)) return false;
        return true;
    case JT_DICT:
        if (a.u.d == b.u.d) return true;
        if (a.u.d->n != b.u.d->n) return false;
        for (size_t i = 0; i < a.u.d->n; i++) {
            jx_val *o = jx_dict_find(b.u.d, a.u.d->k[i]);
            if (!o || !equal_depth(a.u.d->v[i], *o, depth + 1)) return false;
        }
        return true;
    case JT_NS: return a.u.d == b.u.d;
    case JT_FUNC: return a.u.fn == b.u.fn;
    case JT_LOOP: return a.u.loop == b.u.loop;
    case JT_ITER: return a.u.l == b.u.l;            /* iterators compare by identity */
    default: return false;
    }
}

bool jx_equal(jx_val a, jx_val b) { return equal_depth(a, b, 0); }

int jx_compare(jx_ctx *c, jx_val a, jx_val b)
{
    jx_need_defined(c, a);
    jx_need_defined(c, b);
    if (jv_is_num(a) && jv_is_num(b)) {
        if (a.t != JT_FLOAT && b.t != JT_FLOAT) {
            int64_t x = int_of(a), y = int_of(b);
            return x < y ? -1 : x > y;
        }
        double x = num_of(a), y = num_of(b);
        return x < y ? -1 : x > y;
    }
    if (a.t == JT_STR && b.t == JT_STR) {
        size_t n = a.u.s->len < b.u.s->len ? a.u.s->len : b.u.s->len;
        jx_step(c, n >> 6);
        int r = memcmp(a.u.s->s, b.u.s->s, n);
        if (r) return r < 0 ? -1 : 1;
        return a.u.s->len < b.u.s->len ? -1 : a.u.s->len > b.u.s->len;
    }
    if (a.t == JT_LIST && b.t == JT_LIST && a.u.l->tuple == b.u.l->tuple) {
        if (++c->depth > c->max_depth) jx_rt_fail(c, "values nested too deeply to compare");
        size_t n = a.u.l->n < b.u.l->n ? a.u.l->n : b.u.l->n;
        jx_step(c, 1 + (n >> 4));
        for (size_t i = 0; i < n; i++) {
            if (jx_equal(a.u.l->v[i], b.u.l->v[i])) continue;
            int r = jx_compare(c, a.u.l->v[i], b.u.l->v[i]);
            c->depth--;
            return r;
        }
        c->depth--;
        return a.u.l->n < b.u.l->n ? -1 : a.u.l->n > b.u.l->n;
    }
    jx_rt_fail(c, "'<' not supported between instances of '%s' and '%s'", jx_type_name(a),
               jx_type_name(b));
}

/* ---- string building ------------------------------------------------------- */
void jx_sb_init(jx_sb *b, jx_arena *a)
{
    b->a = a;
    b->p = NULL;
    b->n = b->cap = 0;
}

void jx_sb_add(jx_sb *b, const char *s, size_t n)
{
    if (!n) return;
    if (b->cap - b->n <= n) {
        size_t nc = b->cap ? b->cap : 64;
        while (nc - b->n <= n) {
            if (nc > SIZE_MAX / 4) jx_fail(b->a->fail, JINJA_ERR_LIMIT, "string too large");
            nc *= 2;
        }
        b->p = jx_grow(b->a, b->p, b->cap, nc);
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

void jx_sb_addc(jx_sb *b, char ch) { jx_sb_add(b, &ch, 1); }

void jx_sb_addcp(jx_sb *b, uint32_t cp)
{
    char u[4];
    if (cp >= 0xDC80 && cp <= 0xDCFF) {      /* a raw byte that was not UTF-8 */
        u[0] = (char)(cp & 0xFF);
        jx_sb_add(b, u, 1);
    } else {
        jx_sb_add(b, u, (size_t)ember_utf8_encode(cp, u));
    }
}

void jx_sb_printf(jx_sb *b, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    jx_sb_add(b, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

const jx_str *jx_sb_str(jx_sb *b) { return jx_str_new(b->a, b->p ? b->p : "", b->n); }
jx_val jx_sb_val(jx_sb *b) { return jv_strv(jx_sb_str(b)); }

/* ---- str() and repr() ------------------------------------------------------ */
void jx_float_repr(char *buf, size_t cap, double f)
{
    if (isnan(f)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(f)) {
        snprintf(buf, cap, f < 0 ? "-inf" : "inf");
        return;
    }
    /* The shortest digits that read back as the same double, as Python's
       repr, then Python's layout: plain notation for exponents -4..15. */
    char e[40];
    int prec;
    for (prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, f);
        if (strtod(e, NULL) == f) break;
    }
    char digits[24];
    size_t nd = 0;
    const char *p = e;
    bool neg = *p == '-';
    if (neg) p++;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && nd < sizeof digits - 1) digits[nd++] = *p;
    digits[nd] = 0;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0') digits[--nd] = 0;
    char *o = buf;
    size_t left = cap;
#define PUT(...) do { int k_ = snprintf(o, left, __VA_ARGS__); if (k_ < 0 || (size_t)k_ >= left) return; o += k_; left -= (size_t)k_; } while (0)
    if (neg) PUT("-");
    if (exp10 < -4 || exp10 >= 16) {
        PUT("%c", digits[0]);
        if (nd > 1) PUT(".%s", digits + 1);
        PUT("e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        PUT("0.");
        for (int i = -1; i > exp10; i--) PUT("0");
        PUT("%s", digits);
    } else {
        for (int i = 0; i <= exp10; i++) PUT("%c", (size_t)i < nd ? digits[i] : '0');
        PUT(".");
        if ((size_t)exp10 + 1 < nd) PUT("%s", digits + exp10 + 1);
        else PUT("0");
    }
#undef PUT
}

/* Python's str.isprintable(), close enough for repr: controls, separators
   and format characters are escaped, other non-ASCII text is kept. */
static bool printable(uint32_t cp)
{
    if (cp < 0x20 || cp == 0x7F) return false;
    if (cp >= 0x80 && cp <= 0xA0) return false;
    if (cp == 0xAD || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F)) return false;
    if ((cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF) return false;
    if (cp >= 0xD800 && cp <= 0xDFFF) return false;
    return true;
}

static void repr_str_plain(jx_sb *b, const jx_str *s);

/* markupsafe's Markup (safe and escape results) prints as Markup('...') */
static void repr_str(jx_sb *b, const jx_str *s)
{
    if (!s->safe) {
        repr_str_plain(b, s);
        return;
    }
    jx_sb_add(b, "Markup(", 7);
    repr_str_plain(b, s);
    jx_sb_addc(b, ')');
}

static void repr_str_plain(jx_sb *b, const jx_str *s)
{
    bool has_sq = memchr(s->s, '\'', s->len) != NULL;
    bool has_dq = memchr(s->s, '"', s->len) != NULL;
    char q = has_sq && !has_dq ? '"' : '\'';
    jx_sb_addc(b, q);
    for (size_t i = 0; i < s->len;) {
        size_t at = i;
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        if (cp == (uint32_t)q || cp == '\\') {
            jx_sb_addc(b, '\\');
            jx_sb_addc(b, (char)cp);
        } else if (cp == '\n') jx_sb_add(b, "\\n", 2);
        else if (cp == '\r') jx_sb_add(b, "\\r", 2);
        else if (cp == '\t') jx_sb_add(b, "\\t", 2);
        else if (cp >= 0xDC80 && cp <= 0xDCFF) jx_sb_printf(b, "\\udc%02x", cp & 0xFF);
        else if (printable(cp)) jx_sb_add(b, s->s + at, i - at);
        else if (cp < 0x100) jx_sb_printf(b, "\\x%02x", cp);
        else if (cp < 0x10000) jx_sb_printf(b, "\\u%04x", cp);
        else jx_sb_printf(b, "\\U%08x", cp);
    }
    jx_sb_addc(b, q);
}

/* The lists and dicts being printed, innermost first: Python prints one
   met again inside itself as [...] or {...} (a namespace that holds a
   list holding itself: <Namespace {'l': [<Namespace {...}>]}>). */
typedef struct repr_frame {
    const void *obj;
    const struct repr_frame *up;
} repr_frame;

static bool repr_seen(const repr_frame *f, const void *obj)
{
    for (; f; f = f->up)
        if (f->obj == obj) return true;
    return false;
}

static void repr_in(jx_ctx *c, jx_sb *b, jx_val v, int depth, const repr_frame *up)
{
    if (depth > 200) jx_rt_fail(c, "maximum recursion depth exceeded while getting the repr of an object");
    jx_step(c, 1);
    switch (v.t) {
    case JT_STR: repr_str(b, v.u.s); return;
    case JT_UNDEF: case JT_ABSENT: jx_sb_add(b, "Undefined", 9); return;
    case JT_LIST: {
        jx_list *l = v.u.l;
        if (repr_seen(up, l)) {
            jx_sb_add(b, l->tuple ? "(...)" : "[...]", 5);
            return;
        }
        repr_frame here = {l, up};
        jx_sb_addc(b, l->tuple ? '(' : '[');
        for (size_t i = 0; i < l->n; i++) {
            if (i) jx_sb_add(b, ", ", 2);
            repr_in(c, b, l->v[i], depth + 1, &here);
        }
        if (l->tuple && l->n == 1) jx_sb_addc(b, ',');
        jx_sb_addc(b, l->tuple ? ')' : ']');
        return;
    }
    case JT_ITER: {
        jx_list *l = v.u.l;
        if (!l->view) {
            /* Python adds the object's address, which no one can match */
            jx_sb_printf(b, "<%s object>", l->iter);
            return;
        }
        jx_sb_add(b, l->iter, strlen(l->iter));       /* dict_keys(['a', 'b']) */
        jx_sb_add(b, "([", 2);
        for (size_t i = 0; i < l->n; i++) {
            if (i) jx_sb_add(b, ", ", 2);
            repr_in(c, b, l->v[i], depth + 1, up);
        }
        jx_sb_add(b, "])", 2);
        return;
    }
    case JT_DICT: case JT_NS: {
        jx_dict *d = v.u.d;
        if (v.t == JT_NS) jx_sb_add(b, "<Namespace ", 11);
        if (repr_seen(up, d)) {
            jx_sb_add(b, "{...}", 5);
        } else {
            repr_frame here = {d, up};
            jx_sb_addc(b, '{');
            for (size_t i = 0; i < d->n; i++) {
                if (i) jx_sb_add(b, ", ", 2);
                repr_in(c, b, d->k[i], depth + 1, &here);
                jx_sb_add(b, ": ", 2);
                repr_in(c, b, d->v[i], depth + 1, &here);
            }
            jx_sb_addc(b, '}');
        }
        if (v.t == JT_NS) jx_sb_addc(b, '>');
        return;
    }
    default: jx_str_of(c, b, v); return;
    }
}

void jx_repr_of(jx_ctx *c, jx_sb *b, jx_val v, int depth) { repr_in(c, b, v, depth, NULL); }

void jx_str_of(jx_ctx *c, jx_sb *b, jx_val v)
{
    char buf[64];
    switch (v.t) {
    case JT_UNDEF: case JT_ABSENT: return;
    case JT_NONE: jx_sb_add(b, "None", 4); return;
    case JT_BOOL: if (v.u.b) jx_sb_add(b, "True", 4); else jx_sb_add(b, "False", 5); return;
    case JT_INT: jx_sb_printf(b, "%lld", (long long)v.u.i); return;
    case JT_FLOAT: jx_float_repr(buf, sizeof buf, v.u.f); jx_sb_add(b, buf, strlen(buf)); return;
    case JT_STR: jx_sb_add(b, v.u.s->s, v.u.s->len); return;
    case JT_FUNC:
        if (v.u.fn->kind == FN_BUILTIN && v.u.fn->self.t == JT_LOOP)     /* loop.cycle, loop.changed */
            jx_sb_printf(b, "<bound method LoopContext.%s of <LoopContext %zu/%zu>>", v.u.fn->name,
                         v.u.fn->self.u.loop->i + 1, v.u.fn->self.u.loop->n);
        else if (v.u.fn->kind == FN_BUILTIN && v.u.fn->self.t != JT_ABSENT)
            jx_sb_printf(b, "<built-in method %s of %s object>", v.u.fn->name, jx_type_name(v.u.fn->self));
        else if (v.u.fn->kind == FN_BUILTIN) jx_sb_printf(b, "<built-in function %s>", v.u.fn->name);
        else if (v.u.fn->kind == FN_CALLER) jx_sb_add(b, "<Macro anonymous>", 17);   /* a call block has no name */
        else if (v.u.fn->kind == FN_SELF) jx_sb_add(b, "<TemplateReference None>", 24);   /* from_string: no name */
        /* Python adds the object's address, which no one can match */
        else if (v.u.fn->kind == FN_BLOCK) jx_sb_add(b, "<jinja2.runtime.BlockReference object>", 38);
        else jx_sb_printf(b, "<Macro '%s'>", v.u.fn->name);
        return;
    case JT_LOOP: jx_sb_printf(b, "<LoopContext %zu/%zu>", v.u.loop->i + 1, v.u.loop->n); return;
    default: jx_repr_of(c, b, v, 0); return;
    }
}

const jx_str *jx_to_str(jx_ctx *c, jx_val v)
{
    if (v.t == JT_STR) return v.u.s;
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_str_of(c, &b, v);
    return jx_sb_str(&b);
}

/* ---- UTF-8 and characters -------------------------------------------------- */
uint32_t jx_utf8_next(const char *s, size_t n, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = *i;
    unsigned char c0 = u[k];
    if (c0 < 0x80) {
        *i = k + 1;
        return c0;
    }
    int len = c0 >= 0xF0 ? 4 : c0 >= 0xE0 ? 3 : c0 >= 0xC2 ? 2 : 0;
    if (!len || c0 > 0xF4 || k + (size_t)len > n) goto bad;
    uint32_t cp = c0 & (0x3F >> (len - 1));
    for (int j = 1; j < len; j++) {
        if ((u[k + j] & 0xC0) != 0x80) goto bad;
        cp = (cp << 6) | (u[k + j] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        goto bad;
    *i = k + (size_t)len;
    return cp;
bad:
    /* Python's surrogateescape: the byte survives as U+DC80..U+DCFF. */
    *i = k + 1;
    return 0xDC00 | c0;
}

size_t jx_utf8_count(const char *s, size_t n)
{
    jx_work += n >> 6;
    size_t cnt = 0;
    for (size_t i = 0; i < n;) {
        if ((unsigned char)s[i] < 0x80) i++;
        else jx_utf8_next(s, n, &i);
        cnt++;
    }
    return cnt;
}

bool jx_is_space(uint32_t cp)
{
    return (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool jx_is_digit(uint32_t cp) { return cp >= '0' && cp <= '9'; }

size_t jx_line_end(const char *s, size_t n, size_t *i)
{
    size_t k = *i;
    while (k < n) {
        size_t at = k;
        uint32_t cp = jx_utf8_next(s, n, &k);
        if (cp == '\r' && k < n && s[k] == '\n') k++;
        if (cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 ||
            cp == 0x2028 || cp == 0x2029) {
            *i = k;
            return at;
        }
    }
    *i = n;
    return n;
}

/* Case mapping for the scripts chat text mostly holds: ASCII, Latin-1,
   Latin Extended-A, Greek and Cyrillic.  Other letters keep their case. */
uint32_t jx_upper(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'a' && cp <= 'z' ? cp - 32 : cp;
    if (cp == 0xB5) return 0x39C;
    if (cp == 0xFF) return 0x178;
    if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
    if (cp >= 0x100 && cp <= 0x17F) {
        if (cp == 0x131) return 'I';
        if (cp == 0x17F) return 'S';
        if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return (cp & 1) ? cp : cp - 1;
        if (cp == 0x130 || cp == 0x138 || cp == 0x149 || cp == 0x178) return cp;
        return (cp & 1) ? cp - 1 : cp;
    }
    if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
    if (cp == 0x3C2) return 0x3A3;
    if (cp == 0x3CA || cp == 0x3CB) return cp - 32;
    if (cp >= 0x3AC && cp <= 0x3CE) {
        if (cp == 0x3AC) return 0x386;
        if (cp >= 0x3AD && cp <= 0x3AF) return cp - 37;
        if (cp == 0x3CC) return 0x38C;
        if (cp == 0x3CD || cp == 0x3CE) return cp - 63;
    }
    if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
    if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
    if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 32;     /* fullwidth */
    if (cp >= 0x460 && cp <= 0x4FF && !(cp >= 0x482 && cp <= 0x489)) {
        if (cp >= 0x4C1 && cp <= 0x4CE) return (cp & 1) ? cp : cp - 1;
        if (cp == 0x4CF) return 0x4C0;
        return (cp & 1) ? cp - 1 : cp;
    }
    return cp;
}

uint32_t jx_lower(uint32_t cp)
{
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
    if (cp >= 0x100 && cp <= 0x17F) {
        if (cp == 0x130) return 'i';
        if (cp == 0x178) return 0xFF;
        if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return (cp & 1) ? cp + 1 : cp;
        if (cp == 0x131 || cp == 0x138 || cp == 0x149 || cp == 0x17F) return cp;
        return (cp & 1) ? cp : cp + 1;
    }
    if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 32;
    if (cp == 0x386) return 0x3AC;
    if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
    if (cp == 0x38C) return 0x3CC;
    if (cp == 0x38E || cp == 0x38F) return cp + 63;
    if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
    if (cp >= 0xFF21 && cp <= 0xFF3A) return cp + 32;
    if (cp >= 0x460 && cp <= 0x4FF && !(cp >= 0x482 && cp <= 0x489)) {
        if (cp >= 0x4C1 && cp <= 0x4CE) return (cp & 1) ? cp + 1 : cp;
        if (cp == 0x4C0) return 0x4CF;
        if (cp == 0x4CF) return cp;
        return (cp & 1) ? cp : cp + 1;
    }
    return cp;
}

bool jx_is_alpha(uint32_t cp)
{
    if (cp < 0x80) return (cp | 32) >= 'a' && (cp | 32) <= 'z';
    if (cp >= 0xDC80 && cp <= 0xDCFF) return false;
    if (cp == 0xD7 || cp == 0xF7) return false;
    if (cp < 0xC0) return cp == 0xAA || cp == 0xB5 || cp == 0xBA;
    /* Outside the punctuation and symbol blocks, treat text as letters:
       \w in Python's re matches every letter and digit of every script. */
    if ((cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x3000 && cp <= 0x303F) ||
        (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF00 && cp <= 0xFF0F) ||
        (cp >= 0x1F000 && cp <= 0x1FAFF))
        return false;
    return true;
}
