/* The one checked number parser for every numeric option of every command,
   /set and the profile reader: the whole text must be the number, and the
   value must lie in the range.  The message for a refused value has one
   format everywhere: "expected an integer in -1..1048576, got 'abc'". */
#ifndef EMBER_NUMARG_H
#define EMBER_NUMARG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    NUMARG_OK = 0,
    NUMARG_SYNTAX,     /* not a number at all ("abc", "", "1x", "nan") */
    NUMARG_RANGE,      /* a number, outside the range (including overflow) */
} numarg_status;

/* A range: [lo, hi], or (lo, hi] when lo_open.  `extra`, when has_extra,
   is one more value allowed outside it (n_predict's -1 = no limit) and
   extra_help says what it means. */
typedef struct numarg_range {
    double lo, hi;
    bool lo_open;
    bool has_extra;
    long long extra;
    const char *extra_help;
} numarg_range;

/* Base-10 integers.  The message (when not OK) goes to msg. */
numarg_status numarg_int(const char *s, long long lo, long long hi, const numarg_range *r,
                         long long *out, char *msg, size_t cap);
/* The full unsigned 64-bit range (seeds); a leading '-' is a range error. */
numarg_status numarg_u64(const char *s, uint64_t *out, char *msg, size_t cap);
/* Finite decimal numbers. */
numarg_status numarg_float(const char *s, const numarg_range *r, double *out, char *msg, size_t cap);

/* Writes the range as the messages show it: "-1..1048576", "(0, 1]",
   "1..1048576 or -1 (no limit)". */
void numarg_range_text(const numarg_range *r, bool integer, char *buf, size_t cap);

/* For commands: parses an int option in lo..hi and on failure prints
   "ember CMD: OPT: expected ..." to stderr.  prog is "ember bench" etc.,
   opt the option as the user typed it.  0 or -1. */
int numarg_cli_int(const char *prog, const char *opt, const char *s, long long lo, long long hi,
                   int *out);
int numarg_cli_u64(const char *prog, const char *opt, const char *s, uint64_t *out);

#endif
