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
