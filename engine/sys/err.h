/* Errors a person can act on: every fallible engine call fills one. */
#ifndef EMBER_ERR_H
#define EMBER_ERR_H

#include <stddef.h>

typedef struct ember_err {
    char msg[1024];
} ember_err;

#if defined(__GNUC__)
#define EMBER_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define EMBER_PRINTF(a, b)
#endif

/* Sets the message (when err is non-NULL) and returns -1. */
int ember_seterr(ember_err *err, const char *fmt, ...) EMBER_PRINTF(2, 3);

/* Appends one warning line to buf (cap bytes, NUL-terminated, one line a
   warning): the formatted text cleaned of control bytes (a file's text
   cannot start an escape sequence or a second line), then '\n'.  A line
   that does not fit whole is dropped. */
void ember_warn_add(char *buf, size_t cap, const char *fmt, ...) EMBER_PRINTF(3, 4);

#endif
