/* Checked number parsing with one message format (numarg.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numarg.h"

void numarg_range_text(const numarg_range *r, bool integer, char *buf, size_t cap)
{
    int k;
    if (integer)
        k = snprintf(buf, cap, "%lld..%lld", (long long)r->lo, (long long)r->hi);
    else if (r->lo_open)
        k = snprintf(buf, cap, "(%g, %g]", r->lo, r->hi);
    else
        k = snprintf(buf, cap, "%g..%g", r->lo, r->hi);
    if (r->has_extra && k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, " or %lld%s%s%s", r->extra,
                 r->extra_help ? " (" : "", r->extra_help ? r->extra_help : "",
                 r->extra_help ? ")" : "");
}

static numarg_status refuse(numarg_status st, const char *what, const numarg_range *r, bool integer,
                            const char *s, char *msg, size_t cap)
{
    char range[96];
    numarg_range_text(r, integer, range, sizeof range);
    /* the value as typed, cut so one message stays one line */
    snprintf(msg, cap, "expected %s in %s, got '%.40s%s'", what, range, s, strlen(s) > 40 ? "..." : "");
    return st;
}

/* strtoll/strtod skip leading blanks; an option value must not have them. */
static bool starts_number(const char *s)
{
    return *s && !isspace((unsigned char)*s);
}

numarg_status numarg_int(const char *s, long long lo, long long hi, const numarg_range *rr,
                         long long *out, char *msg, size_t cap)
{
    numarg_range r = rr ? *rr : (numarg_range){0};
    r.lo = (double)lo;
    r.hi = (double)hi;
    if (!starts_number(s)) return refuse(NUMARG_SYNTAX, "an integer", &r, true, s, msg, cap);
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end) return refuse(NUMARG_SYNTAX, "an integer", &r, true, s, msg, cap);
    bool extra = r.has_extra && x == r.extra && errno == 0;
    if (!extra && (errno == ERANGE || x < lo || x > hi))
        return refuse(NUMARG_RANGE, "an integer", &r, true, s, msg, cap);
    *out = x;
    return NUMARG_OK;
}

numarg_status numarg_u64(const char *s, uint64_t *out, char *msg, size_t cap)
{
    char range[] = "0..18446744073709551615";
    if (!starts_number(s) || !(isdigit((unsigned char)*s) || *s == '+' || *s == '-')) {
        snprintf(msg, cap, "expected an integer in %s, got '%.40s'", range, s);
        return NUMARG_SYNTAX;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end) {
        snprintf(msg, cap, "expected an integer in %s, got '%.40s'", range, s);
        return NUMARG_SYNTAX;
    }
    if (errno == ERANGE || *s == '-') {   /* strtoull wraps "-1" silently */
        snprintf(msg, cap, "expected an integer in %s, got '%.40s'", range, s);
        return NUMARG_RANGE;
    }
    *out = x;
    return NUMARG_OK;
}

/* strtod also reads C99 hex floats ("0x10" is 16, "0x1p-2" 0.25): a value
   the integer options refuse and that nobody means as a temperature. */
static bool hex_float(const char *s)
{
    if (*s == '+' || *s == '-') s++;
    return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

numarg_status numarg_float(const char *s, const numarg_range *r, double *out, char *msg, size_t cap)
{
    if (!starts_number(s) || hex_float(s)) return refuse(NUMARG_SYNTAX, "a number", r, false, s, msg, cap);
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    /* nan compares false with everything: it would pass a naive range check */
    if (end == s || *end || isnan(x)) return refuse(NUMARG_SYNTAX, "a number", r, false, s, msg, cap);
    if (!(x >= r->lo && x <= r->hi) || (r->lo_open && x == r->lo))
        return refuse(NUMARG_RANGE, "a number", r, false, s, msg, cap);
    *out = x;
    return NUMARG_OK;
}

int numarg_cli_int(const char *prog, const char *opt, const char *s, long long lo, long long hi,
                   int *out)
{
    char msg[256];
    long long v = 0;
    if (numarg_int(s, lo, hi, NULL, &v, msg, sizeof msg) != NUMARG_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, opt, msg);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int numarg_cli_u64(const char *prog, const char *opt, const char *s, uint64_t *out)
{
    char msg[256];
    if (numarg_u64(s, out, msg, sizeof msg) != NUMARG_OK) {
        fprintf(stderr, "%s: %s: %s\n", prog, opt, msg);
        return -1;
    }
    return 0;
}
