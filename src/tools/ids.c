#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "read_all.h"

int32_t *ids_parse(const char *text, int *n, ember_err *err)
{
    size_t cap = 64, k = 0;
    int32_t *v = malloc(cap * sizeof *v);
    if (!v) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x > INT32_MAX ||
            (*end && !strchr(" \t\r\n,", *end))) {
            ember_seterr(err, "token id %zu: '%.20s' is not a non-negative integer", k + 1, p);
            free(v);
            return NULL;
        }
        if (k == cap) {
            int32_t *nv = realloc(v, (cap *= 2) * sizeof *v);
            if (!nv) {
                free(v);
                ember_seterr(err, "out of memory");
                return NULL;
            }
            v = nv;
        }
        v[k++] = (int32_t)x;
        p = end;
    }
    *n = (int)k;
    return v;
}

int32_t *ids_read_file(const char *path, int *n, ember_err *err)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        ember_seterr(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    /* read_all_max reports a read error (a directory opens but reads EISDIR):
       it is said as such, not read as a file without ids */
    errno = 0;
    char *buf = read_all_max(f, 64u << 20, NULL);
    int e = errno;
    if (f != stdin) fclose(f);
    if (!buf) {
        ember_seterr(err, "%s: %s", path, e == EFBIG ? "more than 64 MiB of ids" : e ? strerror(e) : "out of memory");
        return NULL;
    }
    ember_err e2;
    int32_t *v = ids_parse(buf, n, &e2);
    if (!v) ember_seterr(err, "%s: %s", path, e2.msg);
    free(buf);
    return v;
}
