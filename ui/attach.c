/* Attached files (attach.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "ember.h"
#include "read_all.h"

static void set_err(char *err, size_t cap, const char *fmt, const char *a, const char *b)
{
    if (cap) snprintf(err, cap, fmt, a, b);
}

/* A fence longer than any run of backticks in the text, so the block
   cannot be closed early by what it holds (Markdown's own rule). */
static int fence_len(const char *s, size_t n)
{
    int longest = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    return longest >= 3 ? longest + 1 : 3;
}

bool ui_attach_is_text(const char *s, size_t n)
{
    if (memchr(s, 0, n)) return false;
    for (size_t i = 0; i < n;) {
        int k = ember_utf8_decode(s + i, n - i, NULL);
        if (k <= 0) return false;
        i += (size_t)k;
    }
    return true;
}

int ui_attach_text(ui_attach *at, const char *name, const char *text, size_t len)
{
    size_t f = (size_t)fence_len(text, len), nm = strlen(name);
    bool nl = len && text[len - 1] == '\n';
    char *t = realloc(at->text, at->len + 1 + f + nm + 1 + len + 1 + f + 2);
    if (!t) return -1;
    at->text = t;
    char *p = t + at->len;
    if (at->len) *p++ = '\n';                 /* a blank line between blocks */
    memset(p, '`', f), p += f;
    for (size_t i = 0; i < nm; i++)           /* the info string: no backtick, no control */
        *p++ = name[i] == '`' || (unsigned char)name[i] < 0x20 ? '_' : name[i];
    *p++ = '\n';
    memcpy(p, text, len), p += len;
    if (!nl) *p++ = '\n';
    memset(p, '`', f), p += f;
    *p++ = '\n';
    *p = 0;                                   /* text stays a string */
    at->len = (size_t)(p - t);
    at->n++;
    return 0;
}

char *ui_read_text_file(const char *path, size_t *len, char *err, size_t errcap)
{
    char full[4096];
    const char *home = getenv("HOME");
    if (path[0] == '~' && path[1] == '/' && home && *home)
        snprintf(full, sizeof full, "%s%s", home, path + 1);
    else
        snprintf(full, sizeof full, "%s", path);
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);   /* a FIFO must not block */
    if (fd < 0) {
        set_err(err, errcap, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        set_err(err, errcap, "%s: %s", path, "not a regular file");
        close(fd);
        return NULL;
    }
    if ((unsigned long long)st.st_size > UI_ATTACH_MAX) {
        char lim[32];
        snprintf(lim, sizeof lim, "%u MiB", UI_ATTACH_MAX >> 20);
        set_err(err, errcap, "%s: larger than %s: too long for a message", path, lim);
        close(fd);
        return NULL;
    }
    /* read to the end, not to the size stat gave: a file of /proc says 0
       (/read /proc/cpuinfo attached nothing), a log grows as it is read */
    FILE *f = fdopen(fd, "r");
    if (!f) {
        set_err(err, errcap, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    size_t got = 0;
    errno = 0;
    char *buf = read_all_max(f, UI_ATTACH_MAX, &got);
    int e = errno;
    fclose(f);
    if (!buf) {
        char lim[32];
        snprintf(lim, sizeof lim, "%u MiB", UI_ATTACH_MAX >> 20);
        if (e == EFBIG) set_err(err, errcap, "%s: larger than %s: too long for a message", path, lim);
        else set_err(err, errcap, "%s: %s", path, e ? strerror(e) : "out of memory");
        return NULL;
    }
    if (!ui_attach_is_text(buf, got)) {
        set_err(err, errcap, "%s: %s", path, "not a text file (binary or not UTF-8)");
        free(buf);
        return NULL;
    }
    *len = got;
    return buf;
}

long long ui_attach_file(ui_attach *at, const char *path, char *err, size_t errcap)
{
    size_t got;
    char *buf = ui_read_text_file(path, &got, err, errcap);
    if (!buf) return -1;
    const char *base = strrchr(path, '/');
    base = base && base[1] ? base + 1 : path;
    int rc = ui_attach_text(at, base, buf, got);
    free(buf);
    if (rc < 0) {
        set_err(err, errcap, "%s: %s", path, "out of memory");
        return -1;
    }
    return (long long)got;
}

char *ui_attach_take(ui_attach *at, const char *message)
{
    size_t m = strlen(message);
    char *out = malloc(at->len + m + 2);
    if (!out) return NULL;
    size_t k = 0;
    if (at->len) {
        memcpy(out, at->text, at->len);
        k = at->len;
        if (m) out[k++] = '\n';
    }
    memcpy(out + k, message, m + 1);
    ui_attach_clear(at);
    return out;
}

void ui_attach_clear(ui_attach *at)
{
    free(at->text);
    at->text = NULL;
    at->len = 0;
    at->n = 0;
}
