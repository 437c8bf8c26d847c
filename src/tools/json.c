/* Streaming JSON writer: separators, indentation and string escaping. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "ember.h"
#include "json.h"

void json_init(json_w *j, FILE *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
}

static void newline_indent(json_w *j)
{
    if (!j->pretty) return;
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++) fputs("  ", j->out);
}

/* Emits whatever must precede a value (or key): a comma between members and
   the indentation; nothing right after a key. */
static void before_value(json_w *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->nonempty[j->depth - 1]) fputc(',', j->out);
        j->nonempty[j->depth - 1] = true;
        newline_indent(j);
    }
}

static void open_container(json_w *j, char c)
{
    before_value(j);
    fputc(c, j->out);
    if (j->depth >= JSON_MAX_DEPTH) {
        j->misuse = true;
        return;
    }
    j->nonempty[j->depth++] = false;
}

static void close_container(json_w *j, char c)
{
    if (j->depth == 0 || j->after_key) {
        j->misuse = true;
        return;
    }
    j->depth--;
    if (j->nonempty[j->depth]) newline_indent(j);
    fputc(c, j->out);
}

void json_obj_begin(json_w *j) { open_container(j, '{'); }
void json_obj_end(json_w *j) { close_container(j, '}'); }
void json_arr_begin(json_w *j) { open_container(j, '['); }
void json_arr_end(json_w *j) { close_container(j, ']'); }

void json_write_string(FILE *out, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        uint32_t cp;
        size_t len = (size_t)ember_utf8_decode(str + i, n - i, &cp);
        if (len == 0) {
            fputs("\\ufffd", out);
            i++;
            continue;
        }
        if (len == 1) {
            switch (c) {
            case '"': fputs("\\\"", out); break;
            case '\\': fputs("\\\\", out); break;
            case '\n': fputs("\\n", out); break;
            case '\r': fputs("\\r", out); break;
            case '\t': fputs("\\t", out); break;
            case '\b': fputs("\\b", out); break;
            case '\f': fputs("\\f", out); break;
            default:
                if (c < 0x20 || c == 0x7f) fprintf(out, "\\u%04x", c);
                else fputc(c, out);
            }
        } else if (cp == 0x2028 || cp == 0x2029) {
            /* valid JSON, but they break JavaScript string literals */
            fprintf(out, "\\u%04x", (unsigned)cp);
        } else {
            fwrite(s + i, 1, len, out);
        }
        i += len;
    }
    fputc('"', out);
}

void json_key(json_w *j, const char *key)
{
    if (j->depth == 0 || j->after_key) j->misuse = true;
    before_value(j);
    json_write_string(j->out, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = true;
}

void json_strn(json_w *j, const char *s, size_t n)
{
    before_value(j);
    json_write_string(j->out, s, n);
}

void json_str(json_w *j, const char *s)
{
    if (!s) {
        json_null_value(j);
        return;
    }
    json_strn(j, s, strlen(s));
}

void json_i64(json_w *j, int64_t v)
{
    before_value(j);
    fprintf(j->out, "%" PRId64, v);
}

void json_u64(json_w *j, uint64_t v)
{
    before_value(j);
    fprintf(j->out, "%" PRIu64, v);
}

/* The UI calls setlocale() for wide characters, which may make printf use
   a decimal comma; JSON always wants a point. */
static void put_number(FILE *out, const char *fmt, int prec, double v)
{
    char buf[400];
    if (!isfinite(v)) {
        fputs("null", out);
        return;
    }
    snprintf(buf, sizeof buf, fmt, prec, v);
    for (char *p = buf; *p; p++)
        if (*p == ',') *p = '.';
    fputs(buf, out);
}

void json_f64(json_w *j, double v)
{
    before_value(j);
    put_number(j->out, "%.*g", 17, v);
}

void json_fixed(json_w *j, double v, int decimals)
{
    before_value(j);
    if (decimals < 0) decimals = 0;
    if (decimals > 17) decimals = 17;
    put_number(j->out, "%.*f", decimals, v);
}

void json_bool(json_w *j, bool v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null_value(json_w *j)
{
    before_value(j);
    fputs("null", j->out);
}

int json_finish(json_w *j)
{
    if (j->depth != 0 || j->after_key) j->misuse = true;
    fputc('\n', j->out);
    if (fflush(j->out) != 0 || ferror(j->out)) return -1;
    return j->misuse ? -1 : 0;
}

void json_kv_str(json_w *j, const char *k, const char *v) { json_key(j, k); json_str(j, v); }
void json_kv_i64(json_w *j, const char *k, int64_t v) { json_key(j, k); json_i64(j, v); }
void json_kv_u64(json_w *j, const char *k, uint64_t v) { json_key(j, k); json_u64(j, v); }
void json_kv_f64(json_w *j, const char *k, double v) { json_key(j, k); json_f64(j, v); }
void json_kv_fixed(json_w *j, const char *k, double v, int d) { json_key(j, k); json_fixed(j, v, d); }
void json_kv_bool(json_w *j, const char *k, bool v) { json_key(j, k); json_bool(j, v); }
