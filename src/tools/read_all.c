/* One reader for `ember run -p -`, `ember tokenize -` and the chat's piped stdin. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "read_all.h"

char *read_all(FILE *f, size_t *len) { return read_all_max(f, SIZE_MAX - 1, len); }

char *read_all_max(FILE *f, size_t max, size_t *len)
{
    size_t cap = 4096, n = 0, r;
    char *b = malloc(cap);
    if (!b) return NULL;
    while ((r = fread(b + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n > max) {
            free(b);
            errno = EFBIG;
            return NULL;
        }
        if (n + 1 == cap) {            /* keep a byte for the NUL */
            char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                return NULL;
            }
            b = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        free(b);
        return NULL;
    }
    b[n] = '\0';
    if (len) *len = n;
    return b;
}
