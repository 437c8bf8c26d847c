/* Python's int(text, base) and float(text), for the int and float filters.
 *
 * strtoll and strtod accept other forms than Python does: they take hex
 * floats ("0x1p3"), "nan(...)", leading-zero octal ("010" in base 0) and
 * stop quietly at underscores, and know nothing of 0b / 0o prefixes or of
 * Python's underscores between digits.  A template that converts user or
 * tool text with |int or |float must get jinja2's answer, so the grammar is
 * checked here first and the C functions only do the arithmetic. */
#include "config.h"

#include "jinja_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* [*b, *e) without the white space Python's int() and float() ignore. */
static void trim(const jx_str *s, size_t *b, size_t *e)
{
    size_t i = 0, start = s->len, end = 0;
    while (i < s->len) {
        size_t at = i;
        uint32_t cp = jx_utf8_next(s->s, s->len, &i);
        if (jx_is_space(cp)) continue;
        if (start == s->len) start = at;
        end = i;
    }
    *b = start < end ? start : 0;
    *e = start < end ? end : 0;
}

static int digit_value(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'Z') return ch - 'A' + 10;
    return 99;
}

static bool lower_is(char ch, char want) { return ch == want || ch == want - 'a' + 'A'; }

jx_numparse jx_parse_int(const jx_str *s, int base, int64_t *out)
{
    jx_work += s->len >> 6;
    size_t b, e;
    trim(s, &b, &e);
    const char *p = s->s + b, *end = s->s + e;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    bool prefixed = false;
    if (end - p >= 2 && p[0] == '0') {
        int pb = lower_is(p[1], 'x') ? 16 : lower_is(p[1], 'o') ? 8 : lower_is(p[1], 'b') ? 2 : 0;
        if (pb && (base == 0 || base == pb)) {
            base = pb;
            p += 2;
            prefixed = true;
        }
    }
    bool decimal0 = base == 0;        /* base 0 without a prefix: no leading zeros */
    if (decimal0) base = 10;
    if (prefixed && p < end && *p == '_') p++;       /* 0x_1f */
    uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    bool overflow = false, any = false, nonzero = false, lead0 = p < end && *p == '0';
    for (; p < end; p++) {
        if (*p == '_') {              /* only between two digits */
            if (!any || p + 1 >= end || digit_value(p[1]) >= base) return JX_NUM_BAD;
            continue;
        }
        int d = digit_value(*p);
        if (d >= base) return JX_NUM_BAD;
        any = true;
        nonzero = nonzero || d;
        if (v > (limit - (uint64_t)d) / (uint64_t)base) overflow = true;
        else v = v * (uint64_t)base + (uint64_t)d;
    }
    if (!any || (decimal0 && lead0 && nonzero)) return JX_NUM_BAD;
    if (overflow) return JX_NUM_RANGE;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return JX_NUM_OK;
}

/* Digits with single underscores between them, copied without the
   underscores; the count of digits (0 when there are none or an underscore
   is misplaced, *bad set). */
static size_t digits(const char **pp, const char *end, char *buf, size_t *k, size_t cap, bool *bad)
{
    const char *p = *pp;
    size_t n = 0;
    while (p < end) {
        if (*p == '_') {
            if (!n || p + 1 >= end || p[1] < '0' || p[1] > '9') {
                *bad = true;
                return 0;
            }
            p++;
            continue;
        }
        if (*p < '0' || *p > '9') break;
        if (*k < cap - 1) buf[(*k)++] = *p;
        else *bad = true;                 /* longer than any double needs: refuse, not truncate */
        p++;
        n++;
    }
    *pp = p;
    return n;
}

static bool word_is(const char *p, const char *end, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (!lower_is(p[i], w[i])) return false;
    return true;
}

bool jx_parse_float(const jx_str *s, double *out)
{
    jx_work += s->len >> 6;
    size_t b, e;
    trim(s, &b, &e);
    const char *p = s->s + b, *end = s->s + e;
    bool neg = false;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    if (word_is(p, end, "inf") || word_is(p, end, "infinity")) {
        *out = neg ? -INFINITY : INFINITY;
        return true;
    }
    if (word_is(p, end, "nan")) {
        *out = NAN;
        return true;
    }
    char buf[512];
    size_t k = 0;
    bool bad = false;
    if (neg) buf[k++] = '-';
    size_t n = digits(&p, end, buf, &k, sizeof buf, &bad);
    if (p < end && *p == '.') {
        if (k < sizeof buf - 1) buf[k++] = '.';
        else bad = true;
        p++;
        n += digits(&p, end, buf, &k, sizeof buf, &bad);
    }
    if (!n || bad) return false;
    if (p < end && lower_is(*p, 'e')) {
        if (k < sizeof buf - 2) buf[k++] = 'e';
        else bad = true;
        p++;
        if (p < end && (*p == '+' || *p == '-')) {
            if (k < sizeof buf - 1) buf[k++] = *p;
            else bad = true;
            p++;
        }
        if (!digits(&p, end, buf, &k, sizeof buf, &bad) || bad) return false;
    }
    if (p != end) return false;
    buf[k] = 0;
    *out = strtod(buf, NULL);         /* the C locale: jinja_api.c sets it for the render */
    return true;
}
