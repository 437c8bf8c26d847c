/* A small streaming JSON writer for the --json outputs.
 *
 * Commas, nesting and escaping are handled here so callers only say what
 * comes next.  Strings are emitted as valid JSON whatever their bytes:
 * control characters are escaped and invalid UTF-8 becomes U+FFFD, because
 * token pieces and file metadata are arbitrary bytes. */
#ifndef EMBER_JSON_H
#define EMBER_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 64

typedef struct json_w {
    FILE *out;
    bool pretty;                    /* newlines + two-space indent */
    int depth;
    bool nonempty[JSON_MAX_DEPTH];  /* the container at this depth has a member */
    bool after_key;                 /* a key was written, its value comes next */
    bool misuse;                    /* nesting too deep or unbalanced: output is invalid */
} json_w;

void json_init(json_w *j, FILE *out, bool pretty);
/* Ends the document (a newline); returns 0, or -1 after misuse or an I/O error. */
int json_finish(json_w *j);

void json_obj_begin(json_w *j);
void json_obj_end(json_w *j);
void json_arr_begin(json_w *j);
void json_arr_end(json_w *j);
void json_key(json_w *j, const char *key);

void json_str(json_w *j, const char *s);          /* NULL writes null */
void json_strn(json_w *j, const char *s, size_t n);
void json_i64(json_w *j, int64_t v);
void json_u64(json_w *j, uint64_t v);
/* Round-trips exactly (%.17g); NaN and infinities, which JSON lacks, become null. */
void json_f64(json_w *j, double v);
/* Fixed number of digits after the point (for human-facing rates and times). */
void json_fixed(json_w *j, double v, int decimals);
void json_bool(json_w *j, bool v);
/* not json_null: jansson, linked beside this writer, has a function of that name */
void json_null_value(json_w *j);

/* key + value shorthands */
void json_kv_str(json_w *j, const char *key, const char *v);
void json_kv_i64(json_w *j, const char *key, int64_t v);
void json_kv_u64(json_w *j, const char *key, uint64_t v);
void json_kv_f64(json_w *j, const char *key, double v);
void json_kv_fixed(json_w *j, const char *key, double v, int decimals);
void json_kv_bool(json_w *j, const char *key, bool v);

/* Writes s as a quoted, escaped JSON string (no separators): usable on its own. */
void json_write_string(FILE *out, const char *s, size_t n);

#endif
