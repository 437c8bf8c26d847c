/* Python methods of str, dict and list that templates call
 * (message.content.strip(), tools.items(), ...), the global functions
 * (range, namespace, dict, raise_exception, strftime_now, joiner), the two
 * string formatting languages (str % args and str.format) and argument
 * binding.  Like the filters, these are tables from name to function.
 *
 * Mutating methods (list.append, dict.update ...) are refused as Hugging
 * Face's ImmutableSandboxedEnvironment refuses them (an unsafe, undefined
 * attribute that fails when called), so a template that relies on them
 * fails here as it fails in transformers, though llama.cpp accepts it. */
#include "config.h"

#include "jinja_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jx_bind(jx_ctx *c, const char *fname, const jx_args *a, const char *const *names, int nnames, jx_val *out)
{
    for (int i = 0; i < nnames; i++) out[i] = jv_absent();
    if (a->npos > nnames)
        jx_rt_fail(c, "%s() takes at most %d argument%s (%d given)", fname, nnames, nnames == 1 ? "" : "s", a->npos);
    for (int i = 0; i < a->npos; i++) out[i] = a->pos[i];
    for (int k = 0; k < a->nkw; k++) {
        int i;
        for (i = 0; i < nnames; i++)
            if (!strcmp(names[i], a->kwname[k]->s)) break;
        if (i == nnames) jx_rt_fail(c, "%s() got an unexpected keyword argument '%.100s'", fname, a->kwname[k]->s);
        if (out[i].t != JT_ABSENT) jx_rt_fail(c, "%s() got multiple values for argument '%s'", fname, names[i]);
        out[i] = a->kw[k];
    }
}

const jx_str *jx_arg_str(jx_ctx *c, const char *fname, jx_val v)
{
    jx_need_defined(c, v);
    if (v.t != JT_STR) jx_rt_fail(c, "%s(): expected a string, got '%s'", fname, jx_type_name(v));
    return v.u.s;
}

int64_t jx_arg_int(jx_ctx *c, const char *fname, jx_val v)
{
    jx_need_defined(c, v);
    if (v.t == JT_BOOL) return v.u.b;
    if (v.t != JT_INT) jx_rt_fail(c, "%s(): expected an integer, got '%s'", fname, jx_type_name(v));
    return v.u.i;
}


/* ---- string helpers ---------------------------------------------------------- */
static bool set_has(const jx_str *set, uint32_t cp)
{
    for (size_t i = 0; i < set->len;)
        if (jx_utf8_next(set->s, set->len, &i) == cp) return true;
    return false;
}

static bool strip_char(const jx_str *set, uint32_t cp) { return set ? set_has(set, cp) : jx_is_space(cp); }

jx_val jx_strip(jx_ctx *c, const jx_str *s, jx_val chars, bool left, bool right)
{
    const jx_str *set = chars.t == JT_STR ? chars.u.s : NULL;
    if (chars.t != JT_STR && chars.t != JT_NONE && chars.t != JT_ABSENT)
        jx_rt_fail(c, "strip arg must be None or str");
    size_t b = 0, e = s->len;
    if (left)
        while (b < e) {
            size_t k = b;
            if (!strip_char(set, jx_utf8_next(s->s, e, &k))) break;
            b = k;
        }
    if (right)
        while (e > b) {
            /* the last character: back over continuation bytes, and if they
               do not decode as one character, the last byte alone */
            size_t st = e - 1;
            while (st > b && ((unsigned char)s->s[st] & 0xC0) == 0x80 && e - st < 4) st--;
            size_t k = st;
            uint32_t cp = jx_utf8_next(s->s, e, &k);
            if (k != e) {
                st = e - 1;
                k = st;
                cp = jx_utf8_next(s->s, e, &k);
            }
            if (!strip_char(set, cp)) break;
            e = st;
        }
    if (b == 0 && e == s->len) return jv_strv(s);
    return jv_str(c->a, s->s + b, e - b);
}

jx_val jx_str_replace(jx_ctx *c, const jx_str *s, const jx_str *old, const jx_str *new_, int64_t count)
{
    jx_sb b;
    jx_sb_init(&b, c->a);
    jx_step(c, s->len >> 6);
    if (!old->len) {
        size_t i = 0;
        int64_t done = 0;
        while (true) {
            if (count < 0 || done < count) {
                jx_sb_add(&b, new_->s, new_->len);
                done++;
            }
            if (i >= s->len) break;
            size_t st = i;
            jx_utf8_next(s->s, s->len, &i);
            jx_sb_add(&b, s->s + st, i - st);
        }
        return jx_sb_val(&b);
    }
    size_t i = 0;
    int64_t done = 0;
    while (i < s->len) {
        const char *hit = count >= 0 && done >= count ? NULL : memmem(s->s + i, s->len - i, old->s, old->len);
        if (!hit) break;
        size_t at = (size_t)(hit - s->s);
        jx_sb_add(&b, s->s + i, at - i);
        jx_sb_add(&b, new_->s, new_->len);
        i = at + old->len;
        done++;
    }
    jx_sb_add(&b, s->s + i, s->len - i);
    return jx_sb_val(&b);
}

static size_t cp_index(const jx_str *s, size_t byte_off) { return jx_utf8_count(s->s, byte_off); }

/* Python's optional start/end arguments, as byte offsets. */
static void str_range(jx_ctx *c, const jx_str *s, jx_val vs, jx_val ve, size_t *b, size_t *e)
{
    int64_t n = (int64_t)jx_utf8_count(s->s, s->len);
    int64_t st = given(vs) && vs.t != JT_NONE ? jx_arg_int(c, "str", vs) : 0;
    int64_t en = given(ve) && ve.t != JT_NONE ? jx_arg_int(c, "str", ve) : n;
    if (st < 0) st += n;
    if (en < 0) en += n;
    if (st < 0) st = 0;
    if (en > n) en = n;
    if (st > n) st = n;
    if (en < st) en = st;
    size_t i = 0, k = 0;
    *b = *e = s->len;
    for (; k <= (size_t)n; k++) {
        if ((int64_t)k == st) *b = i;
        if ((int64_t)k == en) {
            *e = i;
            break;
        }
        if (i < s->len) jx_utf8_next(s->s, s->len, &i);
    }
}

/* ---- str methods -------------------------------------------------------------- */
static jx_val m_strip(jx_ctx *c, jx_val self, const jx_args *a) { BIND("strip", "chars"); return jx_strip(c, self.u.s, p[0], true, true); }
static jx_val m_lstrip(jx_ctx *c, jx_val self, const jx_args *a) { BIND("lstrip", "chars"); return jx_strip(c, self.u.s, p[0], true, false); }
static jx_val m_rstrip(jx_ctx *c, jx_val self, const jx_args *a) { BIND("rstrip", "chars"); return jx_strip(c, self.u.s, p[0], false, true); }
static jx_val m_upper(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("upper"); return jx_case_map(c, self, true); }
static jx_val m_lower(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("lower"); return jx_case_map(c, self, false); }

static jx_val fix_ends(jx_ctx *c, jx_val self, const jx_args *a, bool start)
{
    BIND(start ? "startswith" : "endswith", "prefix", "start", "end");
    const jx_str *s = self.u.s;
    size_t b, e;
    str_range(c, s, p[1], p[2], &b, &e);
    jx_val want = p[0];
    size_t n = 1;
    const jx_val *opts = &want;
    if (want.t == JT_LIST && want.u.l->tuple) {
        n = want.u.l->n;
        opts = want.u.l->v;
    }
    for (size_t k = 0; k < n; k++) {
        const jx_str *x = jx_arg_str(c, start ? "startswith" : "endswith", opts[k]);
        if (x->len > e - b) continue;
        if (!memcmp(start ? s->s + b : s->s + e - x->len, x->s, x->len)) return jv_bool(true);
    }
    return jv_bool(false);
}
static jx_val m_startswith(jx_ctx *c, jx_val self, const jx_args *a) { return fix_ends(c, self, a, true); }
static jx_val m_endswith(jx_ctx *c, jx_val self, const jx_args *a) { return fix_ends(c, self, a, false); }

static jx_val split_common(jx_ctx *c, jx_val self, const jx_args *a, bool from_right)
{
    BIND(from_right ? "rsplit" : "split", "sep", "maxsplit");
    const jx_str *s = self.u.s;
    int64_t max = given(p[1]) ? jx_arg_int(c, "split", p[1]) : -1;
    jx_val r = jv_list(c->a, 0);
    jx_step(c, s->len >> 6);
    if (!given(p[0]) || p[0].t == JT_NONE) {
        /* runs of whitespace; leading and trailing ones make no empty items */
        size_t n = jx_utf8_count(s->s, s->len);
        size_t *off = jx_alloc(c->a, (n + 1) * sizeof *off);
        bool *sp = jx_alloc(c->a, n + 1);
        size_t i = 0;
        for (size_t k = 0; k < n; k++) {
            off[k] = i;
            sp[k] = jx_is_space(jx_utf8_next(s->s, s->len, &i));
        }
        off[n] = s->len;
        jx_val parts = jv_list(c->a, 0);
        int64_t done = 0;
        if (!from_right) {
            size_t k = 0;
            while (k < n) {
                while (k < n && sp[k]) k++;
                if (k == n) break;
                size_t st = k;
                if (max >= 0 && done >= max) {
                    /* the rest, trailing whitespace and all */
                    jx_list_push(c->a, parts.u.l, jv_str(c->a, s->s + off[st], s->len - off[st]));
                    break;
                }
                while (k < n && !sp[k]) k++;
                jx_list_push(c->a, parts.u.l, jv_str(c->a, s->s + off[st], off[k] - off[st]));
                done++;
            }
            return parts;
        }
        size_t k = n;
        while (k > 0) {
            while (k > 0 && sp[k - 1]) k--;
            if (k == 0) break;
            size_t e = k;
            if (max >= 0 && done >= max) {
                jx_list_push(c->a, parts.u.l, jv_str(c->a, s->s, off[e]));
                break;
            }
            while (k > 0 && !sp[k - 1]) k--;
            jx_list_push(c->a, parts.u.l, jv_str(c->a, s->s + off[k], off[e] - off[k]));
            done++;
        }
        for (size_t x = 0, y = parts.u.l->n; y > 0 && x < y - 1; x++, y--) {
            jx_val t = parts.u.l->v[x];
            parts.u.l->v[x] = parts.u.l->v[y - 1];
            parts.u.l->v[y - 1] = t;
        }
        return parts;
    }
    const jx_str *sep = jx_arg_str(c, "split", p[0]);
    if (!sep->len) jx_rt_fail(c, "empty separator");
    if (!from_right) {
        size_t i = 0;
        int64_t done = 0;
        for (;;) {
            const char *hit = max >= 0 && done >= max ? NULL : memmem(s->s + i, s->len - i, sep->s, sep->len);
            if (!hit) break;
            size_t at = (size_t)(hit - s->s);
            jx_list_push(c->a, r.u.l, jv_str(c->a, s->s + i, at - i));
            i = at + sep->len;
            done++;
        }
        jx_list_push(c->a, r.u.l, jv_str(c->a, s->s + i, s->len - i));
        return r;
    }
    size_t e = s->len;
    int64_t done = 0;
    jx_val rev = jv_list(c->a, 0);
    while (!(max >= 0 && done >= max) && e >= sep->len) {
        size_t at = e - sep->len;
        bool found = false;
        for (;; at--) {
            if (!memcmp(s->s + at, sep->s, sep->len)) {
                found = true;
                break;
            }
            if (at == 0) break;
        }
        if (!found) break;
        jx_list_push(c->a, rev.u.l, jv_str(c->a, s->s + at + sep->len, e - at - sep->len));
        e = at;
        done++;
    }
    jx_list_push(c->a, r.u.l, jv_str(c->a, s->s, e));
    for (size_t k = rev.u.l->n; k > 0; k--) jx_list_push(c->a, r.u.l, rev.u.l->v[k - 1]);
    return r;
}
static jx_val m_split(jx_ctx *c, jx_val self, const jx_args *a) { return split_common(c, self, a, false); }
static jx_val m_rsplit(jx_ctx *c, jx_val self, const jx_args *a) { return split_common(c, self, a, true); }

static jx_val m_splitlines(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("splitlines", "keepends");
    bool keep = given(p[0]) && jx_truthy(p[0]);
    const jx_str *s = self.u.s;
    jx_val r = jv_list(c->a, 0);
    size_t i = 0;
    while (i < s->len) {
        size_t st = i, e = jx_line_end(s->s, s->len, &i);
        jx_list_push(c->a, r.u.l, jv_str(c->a, s->s + st, (keep ? i : e) - st));
    }
    return r;
}

static jx_val m_replace(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("replace", "old", "new", "count");
    int64_t count = given(p[2]) ? jx_arg_int(c, "replace", p[2]) : -1;
    return jx_str_replace(c, self.u.s, jx_arg_str(c, "replace", p[0]), jx_arg_str(c, "replace", p[1]), count);
}

static jx_val m_title(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("title");
    const jx_str *s = self.u.s;
    jx_sb b;
    jx_sb_init(&b, c->a);
    bool prev_cased = false;
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        bool cased = jx_upper(cp) != jx_lower(cp) || cp == 0xDF;
        if (cp == 0xDF && !prev_cased) jx_sb_add(&b, "Ss", 2);   /* no one-letter title case */
        else jx_sb_addcp(&b, cased ? (prev_cased ? jx_lower(cp) : jx_upper(cp)) : cp);
        prev_cased = cased;
    }
    return jx_sb_val(&b);
}

static jx_val m_capitalize(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("capitalize");
    return jx_apply_filter(c, "capitalize", self, a);
}

static jx_val m_swapcase(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("swapcase");
    const jx_str *s = self.u.s;
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        jx_sb_addcp(&b, jx_upper(cp) != cp ? jx_upper(cp) : jx_lower(cp));
    }
    return jx_sb_val(&b);
}

static int64_t find_common(jx_ctx *c, jx_val self, const jx_args *a, bool from_right, const char *fname)
{
    BIND(fname, "sub", "start", "end");
    const jx_str *s = self.u.s, *sub = jx_arg_str(c, fname, p[0]);
    size_t b, e;
    str_range(c, s, p[1], p[2], &b, &e);
    jx_step(c, (e - b) >> 6);
    if (sub->len > e - b) return -1;
    if (!from_right) {
        const char *hit = sub->len ? memmem(s->s + b, e - b, sub->s, sub->len) : s->s + b;
        return hit ? (int64_t)cp_index(s, (size_t)(hit - s->s)) : -1;
    }
    for (size_t at = e - sub->len + 1; at-- > b;)
        if (!memcmp(s->s + at, sub->s, sub->len)) return (int64_t)cp_index(s, at);
    return -1;
}
static jx_val m_find(jx_ctx *c, jx_val self, const jx_args *a) { return jv_int(find_common(c, self, a, false, "find")); }
static jx_val m_rfind(jx_ctx *c, jx_val self, const jx_args *a) { return jv_int(find_common(c, self, a, true, "rfind")); }
static jx_val m_index(jx_ctx *c, jx_val self, const jx_args *a)
{
    int64_t r = find_common(c, self, a, false, "index");
    if (r < 0) jx_rt_fail(c, "substring not found");
    return jv_int(r);
}
static jx_val m_rindex(jx_ctx *c, jx_val self, const jx_args *a)
{
    int64_t r = find_common(c, self, a, true, "rindex");
    if (r < 0) jx_rt_fail(c, "substring not found");
    return jv_int(r);
}

static jx_val m_count(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("count", "sub", "start", "end");
    const jx_str *s = self.u.s, *sub = jx_arg_str(c, "count", p[0]);
    size_t b, e;
    str_range(c, s, p[1], p[2], &b, &e);
    if (!sub->len) return jv_int((int64_t)jx_utf8_count(s->s + b, e - b) + 1);
    jx_step(c, (e - b) >> 6);
    int64_t n = 0;
    for (size_t i = b; i + sub->len <= e;) {
        const char *hit = memmem(s->s + i, e - i, sub->s, sub->len);
        if (!hit) break;
        n++;
        i = (size_t)(hit - s->s) + sub->len;
    }
    return jv_int(n);
}

static jx_val m_join(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("join", "iterable");
    size_t n;
    jx_val *it = jx_iterate(c, p[0], &n);
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (size_t i = 0; i < n; i++) {
        if (it[i].t != JT_STR)
            jx_rt_fail(c, "sequence item %zu: expected str instance, %s found", i, jx_type_name(it[i]));
        if (i) jx_sb_add(&b, self.u.s->s, self.u.s->len);
        jx_sb_add(&b, it[i].u.s->s, it[i].u.s->len);
    }
    return jx_sb_val(&b);
}

static jx_val char_class(jx_ctx *c, jx_val self, int cls)
{
    const jx_str *s = self.u.s;
    if (!s->len) return jv_bool(false);
    jx_step(c, s->len >> 4);          /* a class lookup per character */
    for (size_t i = 0; i < s->len;) {
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        bool ok = cls == 0 ? jx_is_digit(cp) : cls == 1 ? jx_is_alpha(cp) && !jx_is_digit(cp)
                : cls == 2 ? jx_is_alpha(cp) || jx_is_digit(cp) : jx_is_space(cp);
        if (!ok) return jv_bool(false);
    }
    return jv_bool(true);
}
static jx_val m_isdigit(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("isdigit"); return char_class(c, self, 0); }
static jx_val m_isalpha(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("isalpha"); return char_class(c, self, 1); }
static jx_val m_isalnum(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("isalnum"); return char_class(c, self, 2); }
static jx_val m_isspace(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("isspace"); return char_class(c, self, 3); }
static jx_val m_islower(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("islower"); return jv_bool(jx_apply_test(c, "lower", self, a)); }
static jx_val m_isupper(jx_ctx *c, jx_val self, const jx_args *a) { NOARGS("isupper"); return jv_bool(jx_apply_test(c, "upper", self, a)); }

static jx_val pad(jx_ctx *c, jx_val self, const jx_args *a, int align, const char *fname)
{
    BIND(fname, "width", "fillchar");
    int64_t w = jx_arg_int(c, fname, p[0]);
    const jx_str *fill = given(p[1]) ? jx_arg_str(c, fname, p[1]) : NULL;
    if (fill && jx_utf8_count(fill->s, fill->len) != 1)
        jx_rt_fail(c, "The fill character must be exactly one character long");
    const jx_str *s = self.u.s;
    int64_t len = (int64_t)jx_utf8_count(s->s, s->len);
    if (w > (int64_t)c->out_max) jx_fail(&c->fail, JINJA_ERR_LIMIT, "%s(): width too large", fname);
    if (w <= len) return self;
    int64_t marg = w - len, left = align < 0 ? 0 : align > 0 ? marg : marg / 2 + (marg & w & 1);
    jx_sb b;
    jx_sb_init(&b, c->a);
    for (int64_t k = 0; k < left; k++) fill ? jx_sb_add(&b, fill->s, fill->len) : jx_sb_addc(&b, ' ');
    jx_sb_add(&b, s->s, s->len);
    for (int64_t k = 0; k < marg - left; k++) fill ? jx_sb_add(&b, fill->s, fill->len) : jx_sb_addc(&b, ' ');
    return jx_sb_val(&b);
}
static jx_val m_ljust(jx_ctx *c, jx_val self, const jx_args *a) { return pad(c, self, a, -1, "ljust"); }
static jx_val m_rjust(jx_ctx *c, jx_val self, const jx_args *a) { return pad(c, self, a, 1, "rjust"); }
static jx_val m_center(jx_ctx *c, jx_val self, const jx_args *a) { return pad(c, self, a, 0, "center"); }

static jx_val m_zfill(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("zfill", "width");
    int64_t w = jx_arg_int(c, "zfill", p[0]);
    const jx_str *s = self.u.s;
    int64_t len = (int64_t)jx_utf8_count(s->s, s->len);
    if (w > (int64_t)c->out_max) jx_fail(&c->fail, JINJA_ERR_LIMIT, "zfill(): width too large");
    if (w <= len) return self;
    jx_sb b;
    jx_sb_init(&b, c->a);
    size_t sign = s->len && (s->s[0] == '-' || s->s[0] == '+');
    jx_sb_add(&b, s->s, sign);
    for (int64_t k = 0; k < w - len; k++) jx_sb_addc(&b, '0');
    jx_sb_add(&b, s->s + sign, s->len - sign);
    return jx_sb_val(&b);
}

static jx_val partition(jx_ctx *c, jx_val self, const jx_args *a, bool from_right)
{
    BIND(from_right ? "rpartition" : "partition", "sep");
    const jx_str *s = self.u.s, *sep = jx_arg_str(c, "partition", p[0]);
    if (!sep->len) jx_rt_fail(c, "empty separator");
    const char *hit = NULL;
    if (!from_right) hit = memmem(s->s, s->len, sep->s, sep->len);
    else
        for (size_t at = s->len >= sep->len ? s->len - sep->len + 1 : 0; at-- > 0 && !hit;)
            if (!memcmp(s->s + at, sep->s, sep->len)) hit = s->s + at;
    jx_val r = jv_list(c->a, 3);
    r.u.l->tuple = true;
    r.u.l->n = 3;
    jx_val empty = jv_str(c->a, "", 0);
    if (!hit) {
        r.u.l->v[0] = from_right ? empty : self;
        r.u.l->v[1] = empty;
        r.u.l->v[2] = from_right ? self : empty;
        return r;
    }
    size_t at = (size_t)(hit - s->s);
    r.u.l->v[0] = jv_str(c->a, s->s, at);
    r.u.l->v[1] = jv_strv(sep);
    r.u.l->v[2] = jv_str(c->a, s->s + at + sep->len, s->len - at - sep->len);
    return r;
}
static jx_val m_partition(jx_ctx *c, jx_val self, const jx_args *a) { return partition(c, self, a, false); }
static jx_val m_rpartition(jx_ctx *c, jx_val self, const jx_args *a) { return partition(c, self, a, true); }

static jx_val affix(jx_ctx *c, jx_val self, const jx_args *a, bool prefix)
{
    BIND(prefix ? "removeprefix" : "removesuffix", "affix");
    const jx_str *s = self.u.s, *x = jx_arg_str(c, "removeprefix", p[0]);
    if (x->len > s->len) return self;
    if (prefix && !memcmp(s->s, x->s, x->len)) return jv_str(c->a, s->s + x->len, s->len - x->len);
    if (!prefix && !memcmp(s->s + s->len - x->len, x->s, x->len)) return jv_str(c->a, s->s, s->len - x->len);
    return self;
}
static jx_val m_removeprefix(jx_ctx *c, jx_val self, const jx_args *a) { return affix(c, self, a, true); }
static jx_val m_removesuffix(jx_ctx *c, jx_val self, const jx_args *a) { return affix(c, self, a, false); }

/* ---- dict methods ------------------------------------------------------------ */
/* dict.items(), keys() and values() are views: sized, reusable, but not
   lists (no index, no JSON, printed as dict_keys([...])) */
static jx_val m_items(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("items");
    return jv_iter(jx_dict_pairs(c->a, self.u.d), "dict_items", true);
}

static jx_val m_keys(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("keys");
    jx_val r = jv_list(c->a, self.u.d->n);
    if (self.u.d->n) memcpy(r.u.l->v, self.u.d->k, self.u.d->n * sizeof(jx_val));
    r.u.l->n = self.u.d->n;
    return jv_iter(r, "dict_keys", true);
}

static jx_val m_values(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("values");
    jx_val r = jv_list(c->a, self.u.d->n);
    if (self.u.d->n) memcpy(r.u.l->v, self.u.d->v, self.u.d->n * sizeof(jx_val));
    r.u.l->n = self.u.d->n;
    return jv_iter(r, "dict_values", true);
}

static jx_val m_get(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("get", "key", "default");
    if (!given(p[0])) jx_rt_fail(c, "get expected at least 1 argument, got 0");
    jx_val *v = jx_dict_find(self.u.d, p[0]);
    return v ? *v : given(p[1]) ? p[1] : jv_none();
}

static jx_val m_dict_copy(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("copy");
    jx_val r = jv_dict(c->a);
    for (size_t i = 0; i < self.u.d->n; i++) jx_dict_set(c->a, r.u.d, self.u.d->k[i], self.u.d->v[i]);
    return r;
}

/* ---- list methods ------------------------------------------------------------ */
static jx_val m_list_index(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("index", "value");
    jx_step(c, self.u.l->n >> 4);
    for (size_t i = 0; i < self.u.l->n; i++)
        if (jx_equal(self.u.l->v[i], p[0])) return jv_int((int64_t)i);
    jx_rt_fail(c, "value is not in list");
}

static jx_val m_list_count(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("count", "value");
    jx_step(c, self.u.l->n >> 4);
    int64_t n = 0;
    for (size_t i = 0; i < self.u.l->n; i++) n += jx_equal(self.u.l->v[i], p[0]);
    return jv_int(n);
}

/* pop and clear change the list in place, and the immutable sandbox
   allows them: its list of unsafe list methods (_mutable_spec) leaves
   them out, so templates can use them */
static jx_val m_list_pop(jx_ctx *c, jx_val self, const jx_args *a)
{
    if (a->nkw) jx_rt_fail(c, "list.pop() takes no keyword arguments");
    if (a->npos > 1) jx_rt_fail(c, "pop expected at most 1 argument, got %d", a->npos);
    jx_list *l = self.u.l;
    int64_t i = -1;
    if (a->npos) {
        jx_val k = a->pos[0];
        jx_need_defined(c, k);
        if (k.t != JT_INT && k.t != JT_BOOL)
            jx_rt_fail(c, "'%s' object cannot be interpreted as an integer", jx_type_name(k));
        i = k.t == JT_BOOL ? k.u.b : k.u.i;
    }
    if (!l->n) jx_rt_fail(c, "pop from empty list");
    if (i < 0) i += (int64_t)l->n;
    if (i < 0 || (uint64_t)i >= l->n) jx_rt_fail(c, "pop index out of range");
    jx_val v = l->v[i];
    jx_step(c, (l->n - (size_t)i) >> 4);
    memmove(l->v + i, l->v + i + 1, (l->n - (size_t)i - 1) * sizeof *l->v);
    l->n--;
    return v;
}

static jx_val m_list_clear(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("clear");
    self.u.l->n = 0;
    return jv_none();
}

static jx_val m_list_copy(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("copy");
    jx_val r = jv_list(c->a, self.u.l->n);
    if (self.u.l->n) memcpy(r.u.l->v, self.u.l->v, self.u.l->n * sizeof(jx_val));
    r.u.l->n = self.u.l->n;
    return r;
}

typedef struct method {
    const char *name;
    jx_builtin fn;            /* NULL: a method that changes the list or dict in place */
} method;

static const method str_methods[] = {
    {"capitalize", m_capitalize}, {"center", m_center}, {"count", m_count},
    {"endswith", m_endswith}, {"find", m_find}, {"format", jx_str_format},
    {"index", m_index}, {"isalnum", m_isalnum}, {"isalpha", m_isalpha},
    {"isdigit", m_isdigit}, {"islower", m_islower}, {"isspace", m_isspace},
    {"isupper", m_isupper}, {"join", m_join}, {"ljust", m_ljust}, {"lower", m_lower},
    {"lstrip", m_lstrip}, {"partition", m_partition}, {"removeprefix", m_removeprefix},
    {"removesuffix", m_removesuffix}, {"replace", m_replace}, {"rfind", m_rfind},
    {"rindex", m_rindex}, {"rjust", m_rjust}, {"rpartition", m_rpartition},
    {"rsplit", m_rsplit}, {"rstrip", m_rstrip}, {"split", m_split},
    {"splitlines", m_splitlines}, {"startswith", m_startswith}, {"strip", m_strip},
    {"swapcase", m_swapcase}, {"title", m_title}, {"upper", m_upper}, {"zfill", m_zfill},
    {NULL, NULL},
};

/* The NULL ones are in jinja2's sandbox list (_mutable_spec): the
   immutable sandbox that Hugging Face uses refuses them. */
static const method dict_methods[] = {
    {"clear", NULL}, {"copy", m_dict_copy}, {"get", m_get}, {"items", m_items},
    {"keys", m_keys}, {"pop", NULL}, {"popitem", NULL}, {"setdefault", NULL},
    {"update", NULL}, {"values", m_values},
    {NULL, NULL},
};

static const method list_methods[] = {
    {"append", NULL}, {"clear", m_list_clear}, {"copy", m_list_copy}, {"count", m_list_count},
    {"extend", NULL}, {"index", m_list_index}, {"insert", NULL}, {"pop", m_list_pop},
    {"remove", NULL}, {"reverse", NULL}, {"sort", NULL},
    {NULL, NULL},
};

bool jx_method(jx_ctx *c, jx_val self, const char *name, jx_val *out)
{
    const method *t = self.t == JT_STR ? str_methods : self.t == JT_DICT ? dict_methods
                    : self.t == JT_LIST ? list_methods : NULL;
    bool tuple = self.t == JT_LIST && self.u.l->tuple;
    for (; t && t->name; t++) {
        if (strcmp(t->name, name)) continue;
        if (tuple && t->fn != m_list_index && t->fn != m_list_count) return false;   /* a tuple has only these */
        if (t->fn) {
            *out = jx_builtin_fn(c, t->name, t->fn, self);
            return true;
        }
        /* Hugging Face renders in jinja2's ImmutableSandboxedEnvironment:
           list.append, dict.update and the other methods that change a
           list or dict in place are unsafe attributes, an undefined value
           that fails when called, so a template that collects items with
           `{% set _ = l.append(x) %}` fails there (Kimi K2 with tool calls) */
        *out = jv_undef_hint(c->a, "access to attribute '%s' of '%s' object is unsafe.", name, jx_type_name(self));
        return true;
    }
    return false;
}

/* ---- globals ----------------------------------------------------------------- */
enum { MAX_RANGE = 100000 };      /* jinja2's sandbox refuses larger ranges */

size_t jx_range_len(jx_ctx *c, const jx_args *a, int64_t *start, int64_t *step)
{
    if (a->nkw) jx_rt_fail(c, "range() takes no keyword arguments");
    if (a->npos < 1 || a->npos > 3) jx_rt_fail(c, "range expected 1 to 3 arguments, got %d", a->npos);
    int64_t b = 0, e, st = 1;
    if (a->npos == 1) e = jx_arg_int(c, "range", a->pos[0]);
    else {
        b = jx_arg_int(c, "range", a->pos[0]);
        e = jx_arg_int(c, "range", a->pos[1]);
        if (a->npos == 3) st = jx_arg_int(c, "range", a->pos[2]);
    }
    if (st == 0) jx_rt_fail(c, "range() arg 3 must not be zero");
    double span = ((double)e - (double)b) / (double)st;
    if (span > MAX_RANGE)
        jx_rt_fail(c, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", MAX_RANGE);
    *start = b;
    *step = st;
    if (span <= 0) return 0;
    int64_t n = st > 0 ? (e - b + st - 1) / st : (b - e - st - 1) / -st;
    return n > 0 ? (size_t)n : 0;
}

jx_val jx_range(jx_ctx *c, jx_val self, const jx_args *a)
{
    int64_t start, step;
    size_t n = jx_range_len(c, a, &start, &step);
    jx_val r = jv_list(c->a, n);
    for (size_t i = 0; i < n; i++) r.u.l->v[i] = jv_int(start + (int64_t)i * step);
    r.u.l->n = n;
    return r;
}

static jx_val mapping_from(jx_ctx *c, const jx_args *a, jx_type t)
{
    jx_val r = jv_dict(c->a);
    r.t = t;
    if (a->npos > 1) jx_rt_fail(c, "expected at most 1 positional argument, got %d", a->npos);
    if (a->npos) {
        jx_val o = a->pos[0];
        if (o.t == JT_DICT || o.t == JT_NS) {
            for (size_t i = 0; i < o.u.d->n; i++) jx_dict_set(c->a, r.u.d, o.u.d->k[i], o.u.d->v[i]);
        } else {
            size_t n;
            jx_val *it = jx_iterate(c, o, &n);
            for (size_t i = 0; i < n; i++) {
                size_t m;
                jx_val *kv = jx_iterate(c, it[i], &m);
                if (m != 2) jx_rt_fail(c, "dictionary update sequence element #%zu has length %zu; 2 is required", i, m);
                jx_dict_set(c->a, r.u.d, kv[0], kv[1]);
            }
        }
    }
    for (int k = 0; k < a->nkw; k++) jx_dict_set(c->a, r.u.d, jv_strv(a->kwname[k]), a->kw[k]);
    return r;
}

static jx_val g_dict(jx_ctx *c, jx_val self, const jx_args *a) { return mapping_from(c, a, JT_DICT); }
static jx_val g_namespace(jx_ctx *c, jx_val self, const jx_args *a) { return mapping_from(c, a, JT_NS); }

static jx_val g_raise(jx_ctx *c, jx_val self, const jx_args *a)
{
    const jx_str *msg = a->npos ? jx_to_str(c, a->pos[0]) : jx_str_c(c->a, "");
    jx_fail(&c->fail, JINJA_ERR_RAISED, "%s", msg->s);
}

static jx_val g_strftime_now(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("strftime_now", "format");
    const jx_str *fmt = jx_arg_str(c, "strftime_now", p[0]);
    char buf[512];
    if (!fmt->len || fmt->len > 200) return jv_str(c->a, "", 0);
    size_t n = strftime(buf, sizeof buf, fmt->s, &c->now);
    return jv_str(c->a, buf, n);
}

static jx_val joiner_call(jx_ctx *c, jx_val self, const jx_args *a)
{
    NOARGS("joiner");
    jx_val *used = jx_dict_finds(self.u.d, "used", 4), *sep = jx_dict_finds(self.u.d, "sep", 3);
    if (!jx_truthy(*used)) {
        *used = jv_bool(true);
        return jv_str(c->a, "", 0);
    }
    return *sep;
}

static jx_val g_joiner(jx_ctx *c, jx_val self, const jx_args *a)
{
    BIND("joiner", "sep");
    jx_val st = jv_dict(c->a);
    jx_dict_set(c->a, st.u.d, jv_cstr(c->a, "used"), jv_bool(false));
    jx_dict_set(c->a, st.u.d, jv_cstr(c->a, "sep"), given(p[0]) ? p[0] : jv_cstr(c->a, ", "));
    return jx_builtin_fn(c, "joiner", joiner_call, st);
}

void jx_install_globals(jx_ctx *c, jx_scope *s)
{
    static const struct { const char *name; jx_builtin fn; } g[] = {
        {"range", jx_range}, {"dict", g_dict}, {"namespace", g_namespace},
        {"raise_exception", g_raise}, {"strftime_now", g_strftime_now}, {"joiner", g_joiner},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        jx_dict_set(c->a, &s->vars, jv_cstr(c->a, g[i].name), jx_builtin_fn(c, g[i].name, g[i].fn, jv_absent()));
}
