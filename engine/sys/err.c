#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ember.h"

#include "err.h"

int ember_seterr(ember_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* Messages quote file names and file contents and end up on the
           terminal: nothing in them may act as an escape sequence. */
        ember_text_clean(err->msg, sizeof err->msg, err->msg, strlen(err->msg), EMBER_CLEAN_KEEP_NL);
    }
    return -1;
}

void ember_warn_add(char *buf, size_t cap, const char *fmt, ...)
{
    char line[512], clean[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = ember_text_clean(clean, sizeof clean, line, strlen(line), 0);
    size_t have = strlen(buf);
    if (have + n + 2 <= cap) {
        memcpy(buf + have, clean, n);
        buf[have + n] = '\n';
        buf[have + n + 1] = '\0';
    }
}
