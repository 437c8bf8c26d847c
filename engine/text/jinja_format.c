/* Python's two string formatting languages: printf-style `fmt % args`
 * (also jinja2's `format` filter) and str.format() with its format-spec
 * mini-language.  Templates use them for dates, numbers and padding; the
 * common conversions are exact, rare corners (locale 'n', '#' on octal)
 * follow C's printf. */
#include "config.h"

#include "jinja_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pads text to width (in code points) on the left or right. */
static void pad_add(jx_sb *b, const char *s, size_t n, int64_t width, char align, const char *fill, size_t fill_len)
{
    int64_t len = (int64_t)jx_utf8_count(s, n), marg = width > len ? width - len : 0;
    int64_t left = align == '<' ? 0 : align == '^' ? marg / 2 : marg;
    if (width > 1 << 20) left = marg = 0;
    for (int64_t k = 0; k < left; k++) jx_sb_add(b, fill, fill_len);
    jx_sb_add(b, s, n);
    for (int64_t k = 0; k < marg - left; k++) jx_sb_add(b, fill, fill_len);
}

static double num(jx_val v) { return v.t == JT_FLOAT ? v.u.f : v.t == JT_BOOL ? v.u.b : (double)v.u.i; }

/* ---- fmt % args ------------------------------------------------------------------ */
jx_val jx_percent_format(jx_ctx *c, const jx_str *fmt, const jx_args *a)
{
    if (a->npos && a->nkw) jx_rt_fail(c, "can't handle positional and keyword arguments at the same time");
    jx_val map = jv_none();
    if (a->nkw) {
        map = jv_dict(c->a);
        for (int k = 0; k < a->nkw; k++) jx_dict_set(c->a, map.u.d, jv_strv(a->kwname[k]), a->kw[k]);
    } else if (a->npos == 1 && a->pos[0].t == JT_DICT && memmem(fmt->s, fmt->len, "%(", 2)) {
        map = a->pos[0];
    }
    jx_sb b;
    jx_sb_init(&b, c->a);
    int idx = 0;
    const char *s = fmt->s, *end = s + fmt->len;
    while (s < end) {
        const char *pct = memchr(s, '%', (size_t)(end - s));
        if (!pct) {
            jx_sb_add(&b, s, (size_t)(end - s));
            break;
        }
        jx_sb_add(&b, s, (size_t)(pct - s));
        s = pct + 1;
        if (s < end && *s == '%') {
            jx_sb_addc(&b, '%');
            s++;
            continue;
        }
        jx_val arg = jv_absent();
        if (s < end && *s == '(') {
            const char *close = memchr(s, ')', (size_t)(end - s));
            if (!close) jx_rt_fail(c, "incomplete format key");
            if (map.t != JT_DICT) jx_rt_fail(c, "format requires a mapping");
            jx_val *v = jx_dict_finds(map.u.d, s + 1, (size_t)(close - s - 1));
            if (!v) jx_rt_fail(c, "KeyError: '%.*s'", (int)(close - s - 1 > 100 ? 100 : close - s - 1), s + 1);
            arg = *v;
            s = close + 1;
        }
        char flags[8];
        size_t nf = 0;
        while (s < end && strchr("-+ #0", *s) && *s && nf < sizeof flags - 1) flags[nf++] = *s++;
        flags[nf] = 0;
#define NEXT_ARG() (idx < a->npos ? a->pos[idx++] : (jx_rt_fail(c, "not enough arguments for format string"), jv_none()))
        int64_t width = -1, prec = -1;
        if (s < end && *s == '*') {
            width = jx_arg_int(c, "format", NEXT_ARG());
            s++;
        } else if (s < end && *s >= '0' && *s <= '9') {
            width = 0;
            while (s < end && *s >= '0' && *s <= '9' && width < 100000) width = width * 10 + (*s++ - '0');
        }
        if (s < end && *s == '.') {
            s++;
            prec = 0;
            if (s < end && *s == '*') {
                prec = jx_arg_int(c, "format", NEXT_ARG());
                s++;
            } else
                while (s < end && *s >= '0' && *s <= '9' && prec < 1000) prec = prec * 10 + (*s++ - '0');
        }
        while (s < end && (*s == 'h' || *s == 'l' || *s == 'L')) s++;
        if (s >= end) jx_rt_fail(c, "incomplete format");
        char conv = *s++;
        if (arg.t == JT_ABSENT) {
            if (map.t == JT_DICT) jx_rt_fail(c, "format requires a mapping");
            arg = NEXT_ARG();
        }
#undef NEXT_ARG
        if (width > 100000) width = 100000;
        if (prec > 1000) prec = 1000;
        bool left = strchr(flags, '-') != NULL;
        if (conv == 's' || conv == 'r' || conv == 'a' || conv == 'c') {
            jx_sb t;
            jx_sb_init(&t, c->a);
            if (conv == 's') jx_str_of(c, &t, arg);
            else if (conv == 'c') {
                if (arg.t == JT_STR && jx_utf8_count(arg.u.s->s, arg.u.s->len) == 1) jx_sb_add(&t, arg.u.s->s, arg.u.s->len);
                else if (arg.t == JT_INT && arg.u.i >= 0 && arg.u.i <= 0x10FFFF) jx_sb_addcp(&t, (uint32_t)arg.u.i);
                else jx_rt_fail(c, "%%c requires an int or a unicode character");
            } else jx_repr_of(c, &t, arg, 0);
            size_t n = t.n;
            if (prec >= 0 && conv != 'c') {
                size_t i = 0;
                for (int64_t k = 0; k < prec && i < t.n; k++) jx_utf8_next(t.p, t.n, &i);
                n = i;
            }
            pad_add(&b, t.p ? t.p : "", n, width, left ? '<' : '>', " ", 1);
            continue;
        }
        if (!strchr("diouxXeEfFgG", conv)) jx_rt_fail(c, "unsupported format character '%c'", conv);
        jx_need_defined(c, arg);
        if (!jv_is_num(arg))
            jx_rt_fail(c, "%%%c format: a real number is required, not %s", conv, jx_type_name(arg));
        char spec[40], out[1200];
        if (strchr("diouxX", conv)) {
            if (arg.t == JT_FLOAT && strchr("oxX", conv))
                jx_rt_fail(c, "%%%c format: an integer is required, not float", conv);
            long long v = arg.t == JT_FLOAT ? (isfinite(arg.u.f) && fabs(arg.u.f) < 9.2e18 ? (long long)arg.u.f : 0)
                                            : (long long)(arg.t == JT_BOOL ? arg.u.b : arg.u.i);
            snprintf(spec, sizeof spec, "%%%s%s%s%s%s%sll%c", flags, width >= 0 ? "*" : "", prec >= 0 ? "." : "",
                     prec >= 0 ? "*" : "", "", "", conv == 'i' || conv == 'u' ? 'd' : conv);
            if (width >= 0 && prec >= 0) snprintf(out, sizeof out, spec, (int)width, (int)prec, v);
            else if (width >= 0) snprintf(out, sizeof out, spec, (int)width, v);
            else if (prec >= 0) snprintf(out, sizeof out, spec, (int)prec, v);
            else snprintf(out, sizeof out, spec, v);
        } else {
            snprintf(spec, sizeof spec, "%%%s%s%s%s%c", flags, width >= 0 ? "*" : "", prec >= 0 ? "." : "",
                     prec >= 0 ? "*" : "", conv);
            double v = num(arg);
            if (width >= 0 && prec >= 0) snprintf(out, sizeof out, spec, (int)width, (int)prec, v);
            else if (width >= 0) snprintf(out, sizeof out, spec, (int)width, v);
            else if (prec >= 0) snprintf(out, sizeof out, spec, (int)prec, v);
            else snprintf(out, sizeof out, spec, v);
        }
        jx_sb_add(&b, out, strlen(out));
    }
    if (map.t != JT_DICT && idx < a->npos) jx_rt_fail(c, "not all arguments converted during string formatting");
    return jx_sb_val(&b);
}

/* ---- str.format -------------------------------------------------------------------- */
typedef struct spec {
    const char *fill;
    size_t fill_len;
    char align, sign, group, type;
    bool alt, zero;
    int64_t width, prec;
} spec;

static void parse_spec(jx_ctx *c, const char *s, size_t n, spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->fill = " ";
    sp->fill_len = 1;
    sp->width = sp->prec = -1;
    size_t i = 0;
    size_t k = 0;
    if (n) jx_utf8_next(s, n, &k);               /* one character of fill? */
    if (k < n && strchr("<>=^", s[k]) && s[k]) {
        sp->fill = s;
        sp->fill_len = k;
        sp->align = s[k];
        i = k + 1;
    } else if (i < n && strchr("<>=^", s[i]) && s[i]) {
        sp->align = s[i++];
    }
    if (i < n && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) sp->sign = s[i++];
    if (i < n && s[i] == 'z') i++;
    if (i < n && s[i] == '#') sp->alt = true, i++;
    if (i < n && s[i] == '0') {
        sp->zero = true;
        i++;
    }
    if (i < n && s[i] >= '0' && s[i] <= '9') {
        sp->width = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && sp->width < 100000) sp->width = sp->width * 10 + (s[i++] - '0');
    }
    if (i < n && (s[i] == ',' || s[i] == '_')) sp->group = s[i++];
    if (i < n && s[i] == '.') {
        i++;
        sp->prec = 0;
        if (i >= n || s[i] < '0' || s[i] > '9') jx_rt_fail(c, "Format specifier missing precision");
        while (i < n && s[i] >= '0' && s[i] <= '9' && sp->prec < 1000) sp->prec = sp->prec * 10 + (s[i++] - '0');
    }
    if (i < n) sp->type = s[i++];
    if (i < n) jx_rt_fail(c, "Invalid format specifier");
    if (sp->width > 100000) sp->width = 100000;
}

/* Digits of a number, with grouping, sign and padding applied. */
static void put_number(jx_sb *b, const spec *sp, bool neg, const char *digits, const char *prefix)
{
    char grouped[1400];
    size_t g = 0, n = strlen(digits);
    size_t intlen = strcspn(digits, ".eE%");
    for (size_t i = 0; i < n && g < sizeof grouped - 2; i++) {
        if (sp->group && i < intlen && i > 0 && (intlen - i) % 3 == 0) grouped[g++] = sp->group;
        grouped[g++] = digits[i];
    }
    grouped[g] = 0;
    char signs[2] = {0, 0};
    if (neg) signs[0] = '-';
    else if (sp->sign == '+') signs[0] = '+';
    else if (sp->sign == ' ') signs[0] = ' ';
    char align = sp->align ? sp->align : '>';
    const char *fill = sp->fill;
    size_t fill_len = sp->fill_len;
    if (sp->zero && !sp->align) {
        align = '=';
        fill = "0";
        fill_len = 1;
    }
    int64_t body = (int64_t)(strlen(signs) + strlen(prefix) + g);
    if (align == '=') {
        jx_sb_add(b, signs, strlen(signs));
        jx_sb_add(b, prefix, strlen(prefix));
        for (int64_t k = body; k < sp->width; k++) jx_sb_add(b, fill, fill_len);
        jx_sb_add(b, grouped, g);
        return;
    }
    char all[1500];
    snprintf(all, sizeof all, "%s%s%s", signs, prefix, grouped);
    pad_add(b, all, strlen(all), sp->width, align, fill, fill_len);
}

static void format_value(jx_ctx *c, jx_sb *b, jx_val v, const char *s, size_t n)
{
    if (!n || (v.t != JT_STR && v.t != JT_INT && v.t != JT_FLOAT && v.t != JT_BOOL)) {
        if (n) jx_rt_fail(c, "unsupported format string passed to %s.__format__", jx_type_name(v));
        jx_str_of(c, b, v);
        return;
    }
    spec sp;
    parse_spec(c, s, n, &sp);
    if (v.t == JT_STR) {
        if (sp.type && sp.type != 's') jx_rt_fail(c, "Unknown format code '%c' for object of type 'str'", sp.type);
        size_t len = v.u.s->len;
        if (sp.prec >= 0) {
            size_t i = 0;
            for (int64_t k = 0; k < sp.prec && i < len; k++) jx_utf8_next(v.u.s->s, len, &i);
            len = i;
        }
        pad_add(b, v.u.s->s, len, sp.width, sp.align ? sp.align : '<', sp.fill, sp.fill_len);
        return;
    }
    char digits[1300];
    char t = sp.type;
    if (v.t != JT_FLOAT && (!t || strchr("dnbcoxX", t))) {
        long long x = v.t == JT_BOOL ? v.u.b : v.u.i;
        unsigned long long ax = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
        const char *prefix = "";
        if (t == 'c') {
            jx_sb ch;
            jx_sb_init(&ch, c->a);
            if (x < 0 || x > 0x10FFFF) jx_rt_fail(c, "%%c arg not in range(0x110000)");
            jx_sb_addcp(&ch, (uint32_t)x);
            pad_add(b, ch.p, ch.n, sp.width, sp.align ? sp.align : '<', sp.fill, sp.fill_len);
            return;
        }
        if (t == 'x' || t == 'X') {
            snprintf(digits, sizeof digits, t == 'x' ? "%llx" : "%llX", ax);
            if (sp.alt) prefix = t == 'x' ? "0x" : "0X";
        } else if (t == 'o') {
            snprintf(digits, sizeof digits, "%llo", ax);
            if (sp.alt) prefix = "0o";
        } else if (t == 'b') {
            size_t k = 0;
            char rev[70];
            do rev[k++] = (char)('0' + (ax & 1)); while ((ax >>= 1) && k < sizeof rev);
            for (size_t i = 0; i < k; i++) digits[i] = rev[k - 1 - i];
            digits[k] = 0;
            if (sp.alt) prefix = "0b";
        } else {
            snprintf(digits, sizeof digits, "%llu", ax);
        }
        put_number(b, &sp, x < 0, digits, prefix);
        return;
    }
    if (t && !strchr("eEfFgG%n", t)) jx_rt_fail(c, "Unknown format code '%c' for object of type 'float'", t);
    double x = num(v);
    bool neg = signbit(x) && !isnan(x);
    double ax = fabs(x);
    int prec = sp.prec >= 0 ? (int)sp.prec : 6;
    if (!t && sp.prec < 0) jx_float_repr(digits, sizeof digits, ax);
    else if (t == '%') {
        snprintf(digits, sizeof digits, "%.*f%%", prec, ax * 100);
    } else {
        char f = !t || t == 'n' ? 'g' : t;
        char cf[8];
        snprintf(cf, sizeof cf, "%%%s.*%c", sp.alt ? "#" : "", f);
        snprintf(digits, sizeof digits, cf, prec, ax);
    }
    put_number(b, &sp, neg, digits, "");
}

/* One replacement field's value: name, then .attr and [key] parts. */
static jx_val field_value(jx_ctx *c, const char *s, size_t n, const jx_args *a, int *auto_idx)
{
    size_t i = 0;
    while (i < n && s[i] != '.' && s[i] != '[') i++;
    jx_val v;
    if (i == 0) {
        if (*auto_idx < 0) jx_rt_fail(c, "cannot switch from manual field specification to automatic field numbering");
        int k = (*auto_idx)++;
        if (k >= a->npos) jx_rt_fail(c, "Replacement index %d out of range for positional args tuple", k);
        v = a->pos[k];
    } else if (s[0] >= '0' && s[0] <= '9') {
        if (*auto_idx > 0) jx_rt_fail(c, "cannot switch from automatic field numbering to manual field specification");
        *auto_idx = -1;
        long k = strtol(s, NULL, 10);
        if (k < 0 || k >= a->npos) jx_rt_fail(c, "Replacement index %ld out of range for positional args tuple", k);
        v = a->pos[k];
    } else {
        int k;
        for (k = 0; k < a->nkw; k++)
            if (a->kwname[k]->len == i && !memcmp(a->kwname[k]->s, s, i)) break;
        if (k == a->nkw) jx_rt_fail(c, "KeyError: '%.*s'", (int)(i > 100 ? 100 : i), s);
        v = a->kw[k];
    }
    while (i < n) {
        if (s[i] == '.') {
            size_t st = ++i;
            while (i < n && s[i] != '.' && s[i] != '[') i++;
            v = jx_getattr(c, v, jx_str_new(c->a, s + st, i - st));
        } else {
            size_t st = ++i;
            while (i < n && s[i] != ']') i++;
            if (i >= n) jx_rt_fail(c, "Missing ']' in format string");
            bool digits = i > st;
            for (size_t k = st; k < i; k++) digits = digits && s[k] >= '0' && s[k] <= '9';
            v = jx_getitem(c, v, digits ? jv_int(strtoll(s + st, NULL, 10)) : jv_str(c->a, s + st, i - st));
            i++;
        }
    }
    return v;
}

static void format_into(jx_ctx *c, jx_sb *b, const char *s, size_t n, const jx_args *a, int *auto_idx, int depth)
{
    if (depth > 2) jx_rt_fail(c, "Max string recursion exceeded");
    size_t i = 0;
    while (i < n) {
        char ch = s[i];
        if (ch == '}') {
            if (i + 1 < n && s[i + 1] == '}') {
                jx_sb_addc(b, '}');
                i += 2;
                continue;
            }
            jx_rt_fail(c, "Single '}' encountered in format string");
        }
        if (ch != '{') {
            jx_sb_addc(b, ch);
            i++;
            continue;
        }
        if (i + 1 < n && s[i + 1] == '{') {
            jx_sb_addc(b, '{');
            i += 2;
            continue;
        }
        size_t st = ++i, level = 1;
        while (i < n && level) {
            if (s[i] == '{') level++;
            else if (s[i] == '}') level--;
            if (level) i++;
        }
        if (i >= n) jx_rt_fail(c, "Single '{' encountered in format string");
        size_t e = i++, name_end = st;
        while (name_end < e && s[name_end] != '!' && s[name_end] != ':') {
            if (s[name_end] == '[')
                while (name_end < e && s[name_end] != ']') name_end++;
            if (name_end < e) name_end++;
        }
        jx_val v = field_value(c, s + st, name_end - st, a, auto_idx);
        size_t k = name_end;
        if (k < e && s[k] == '!') {
            if (k + 1 >= e) jx_rt_fail(c, "end of string while looking for conversion specifier");
            char conv = s[k + 1];
            jx_sb t;
            jx_sb_init(&t, c->a);
            if (conv == 'r' || conv == 'a') jx_repr_of(c, &t, v, 0);
            else if (conv == 's') jx_str_of(c, &t, v);
            else jx_rt_fail(c, "Unknown conversion specifier %c", conv);
            v = jx_sb_val(&t);
            k += 2;
        }
        jx_sb specb;
        jx_sb_init(&specb, c->a);
        if (k < e && s[k] == ':') format_into(c, &specb, s + k + 1, e - k - 1, a, auto_idx, depth + 1);
        else if (k < e) jx_rt_fail(c, "expected ':' after conversion specifier");
        format_value(c, b, v, specb.p ? specb.p : "", specb.n);
    }
}

jx_val jx_str_format(jx_ctx *c, jx_val self, const jx_args *a)
{
    jx_sb b;
    jx_sb_init(&b, c->a);
    int auto_idx = 0;
    format_into(c, &b, self.u.s->s, self.u.s->len, a, &auto_idx, 0);
    return jx_sb_val(&b);
}
