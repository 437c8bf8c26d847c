/* The JSON writer: separators and nesting, string escaping (control
   characters, quotes, invalid UTF-8), numbers, misuse detection. */
#include "config.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

typedef struct {
    char *buf;
    size_t len;
    FILE *f;
    json_w j;
} cap;

static void cap_open(cap *c, bool pretty)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    json_init(&c->j, c->f, pretty);
}

/* Closes the stream; returns json_finish's status. */
static int cap_close(cap *c)
{
    int rc = json_finish(&c->j);
    fclose(c->f);
    return rc;
}

static void check_string(const char *in, size_t n, const char *want, const char *what)
{
    cap c;
    cap_open(&c, false);
    json_strn(&c.j, in, n);
    cap_close(&c);
    char w[256];
    snprintf(w, sizeof w, "%s\n", want);
    bool same = c.buf && !strcmp(c.buf, w);
    if (c.buf && c.len) c.buf[c.len - 1] = 0;   /* keep the TAP line on one line */
    tap_ok(same, "string %s: %s", what, c.buf ? c.buf : "(null)");
    free(c.buf);
}

int main(void)
{
    cap c;
    cap_open(&c, false);
    json_obj_begin(&c.j);
    json_kv_str(&c.j, "a", "x");
    json_key(&c.j, "list");
    json_arr_begin(&c.j);
    json_i64(&c.j, -9223372036854775807 - 1);
    json_u64(&c.j, 18446744073709551615ull);
    json_bool(&c.j, true);
    json_null_value(&c.j);
    json_obj_begin(&c.j);
    json_obj_end(&c.j);
    json_arr_begin(&c.j);
    json_arr_end(&c.j);
    json_arr_end(&c.j);
    json_kv_bool(&c.j, "f", false);
    json_obj_end(&c.j);
    int rc = cap_close(&c);
    tap_ok(rc == 0 && !strcmp(c.buf, "{\"a\":\"x\",\"list\":[-9223372036854775808,18446744073709551615,true,null,{},[]],\"f\":false}\n"),
           "compact nesting and commas");
    free(c.buf);

    cap_open(&c, true);
    json_obj_begin(&c.j);
    json_kv_i64(&c.j, "n", 1);
    json_key(&c.j, "o");
    json_obj_begin(&c.j);
    json_kv_u64(&c.j, "m", 2);
    json_obj_end(&c.j);
    json_obj_end(&c.j);
    rc = cap_close(&c);
    tap_ok(rc == 0 && !strcmp(c.buf, "{\n  \"n\": 1,\n  \"o\": {\n    \"m\": 2\n  }\n}\n"), "pretty layout");
    free(c.buf);

    check_string("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"", "quote and backslash");
    check_string("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"", "short escapes");
    check_string("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"", "other control characters");
    check_string("x\0y", 3, "\"x\\u0000y\"", "embedded NUL");
    check_string("h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12, "\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "valid UTF-8 passes through");
    check_string("a\xff" "b", 3, "\"a\\ufffdb\"", "invalid byte -> U+FFFD");
    check_string("\xc3", 1, "\"\\ufffd\"", "truncated sequence at the end");
    check_string("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"", "overlong encoding");
    check_string("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"", "UTF-16 surrogate");
    check_string("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "code point past U+10FFFF");
    check_string("\xe2\x80\xa8", 3, "\"\\u2028\"", "U+2028 escaped");

    cap_open(&c, false);
    json_arr_begin(&c.j);
    json_f64(&c.j, 0.1);
    json_f64(&c.j, -1e300);
    json_f64(&c.j, NAN);
    json_f64(&c.j, INFINITY);
    json_fixed(&c.j, 3.14159, 2);
    json_fixed(&c.j, 2.0, 0);
    json_arr_end(&c.j);
    cap_close(&c);
    tap_ok(!strcmp(c.buf, "[0.10000000000000001,-1.0000000000000001e+300,null,null,3.14,2]\n"),
           "doubles round-trip, NaN/inf -> null, fixed precision");
    double back = c.buf ? strtod(c.buf + 1, NULL) : 0;
    tap_ok(back == 0.1, "%%.17g parses back to the same double");
    free(c.buf);

    /* a locale with a decimal comma must not leak into JSON */
    if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
        cap_open(&c, false);
        json_f64(&c.j, 1.5);
        cap_close(&c);
        tap_ok(!strcmp(c.buf, "1.5\n"), "decimal point under a comma locale");
        free(c.buf);
        setlocale(LC_NUMERIC, "C");
    } else {
        tap_skip("no decimal-comma locale installed");
    }

    cap_open(&c, false);
    json_obj_begin(&c.j);
    json_key(&c.j, "k");
    tap_ok(cap_close(&c) == -1, "unclosed object / dangling key reported as misuse");
    free(c.buf);
    cap_open(&c, false);
    json_arr_end(&c.j);
    tap_ok(cap_close(&c) == -1, "closing what was never opened reported as misuse");
    free(c.buf);
    cap_open(&c, false);
    for (int i = 0; i < JSON_MAX_DEPTH + 2; i++) json_arr_begin(&c.j);
    tap_ok(cap_close(&c) == -1, "nesting deeper than %d reported, no overflow", JSON_MAX_DEPTH);
    free(c.buf);
    return tap_done();
}
