/* The one way Ember writes a file (safefile.h says why it is done so). */
#include "config.h"   /* _GNU_SOURCE: fopencookie */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "safefile.h"

struct ember_file {
    FILE *s;
    int fd;
    char *path, *tmp;    /* tmp NULL: writing straight into a device or pipe */
    int err;             /* first errno seen, 0 while all is well */
};

static int fail(ember_err *err, const char *path, int e)
{
    return ember_seterr(err, "cannot write %s: %s", path, strerror(e ? e : EIO));
}

/* The stream writes through these so that the first failure's errno is
   kept (a FILE only remembers that something failed, and a later fflush
   may even succeed after the buffer was dropped). */
static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
    ember_file *f = c;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(f->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            if (!f->err) f->err = k < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
    }
    return (ssize_t)n;
}

static int cookie_close(void *c)
{
    ember_file *f = c;
    int r = close(f->fd);
    if (r != 0 && !f->err) f->err = errno;
    f->fd = -1;
    return r;
}

/* A name nobody else has chosen: O_EXCL below still decides. */
static void tmp_name(char *buf, size_t cap, const char *path, unsigned attempt)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint32_t r = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 12) ^ (++counter * 2654435761u) ^ attempt;
    snprintf(buf, cap, "%s.tmp.%ld.%08x", path, (long)getpid(), r);
}

ember_file *ember_file_create(const char *path, mode_t mode, ember_err *err)
{
    ember_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        fail(err, path, ENOMEM);
        return NULL;
    }
    int fd = -1;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        /* A device or a pipe (/dev/stdout, /dev/null, a FIFO): it cannot be
           replaced, and replacing it is not what was asked; write into it. */
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) goto fail_errno;
    } else {
        size_t cap = strlen(path) + 40;
        if (!(f->tmp = malloc(cap))) {
            errno = ENOMEM;
            goto fail_errno;
        }
        for (unsigned i = 0; fd < 0 && i < 100; i++) {
            tmp_name(f->tmp, cap, path, i);
            fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd < 0) goto fail_errno;
    }
    f->fd = fd;
    static const cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    if (!(f->s = fopencookie(f, "w", io))) {
        int e = errno;
        close(fd);
        errno = e;
        goto fail_errno;
    }
    return f;
fail_errno:;
    int e = errno;
    if (f->tmp && fd >= 0) unlink(f->tmp);
    fail(err, path, e);
    free(f->tmp);
    free(f->path);
    free(f);
    return NULL;
}

FILE *ember_file_stream(ember_file *f) { return f->s; }
int ember_file_fd(ember_file *f) { return f->fd; }
const char *ember_file_temp(const ember_file *f) { return f->tmp; }

int ember_file_write(ember_file *f, const void *data, size_t len, ember_err *err)
{
    if (!f->err && len && fwrite(data, 1, len, f->s) != len && !f->err) f->err = EIO;
    return f->err ? fail(err, f->path, f->err) : 0;
}

static void drop(ember_file *f)
{
    free(f->tmp);
    free(f->path);
    free(f);
}

void ember_file_abort(ember_file *f)
{
    if (!f) return;
    fclose(f->s);
    if (f->tmp) unlink(f->tmp);
    drop(f);
}

/* The rename is durable only once the directory entry is on disk. */
static int sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return ENOMEM;
    /* a directory we may write but not read cannot be opened to sync it:
       the file is in place all the same */
    int e = 0, fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && fsync(fd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    if (fd >= 0) close(fd);
    free(dir);
    return e;
}

int ember_file_commit(ember_file *f, ember_err *err)
{
    int e = 0;
    if (fflush(f->s) != 0 || ferror(f->s)) e = f->err ? f->err : EIO;
    e = e ? e : f->err;
    /* fsync fails with EINVAL on pipes and character devices: nothing to sync */
    if (!e && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS) e = errno;
    fclose(f->s);                              /* cookie_close notes a close error */
    if (!e) e = f->err;
    if (!e && f->tmp && rename(f->tmp, f->path) != 0) e = errno;
    if (e) {
        if (f->tmp) unlink(f->tmp);
        fail(err, f->path, e);
        drop(f);
        return -1;
    }
    if (f->tmp) e = sync_dir(f->path);
    int rc = e ? fail(err, f->path, e) : 0;
    drop(f);
    return rc;
}

int ember_write_file(const char *path, const void *data, size_t len, mode_t mode, ember_err *err)
{
    ember_file *f = ember_file_create(path, mode, err);
    if (!f) return -1;
    if (ember_file_write(f, data, len, err)) {
        ember_file_abort(f);
        return -1;
    }
    return ember_file_commit(f, err);
}

/* The first failure seen by ember_stdout_flush: stdout's FILE keeps only
   a flag, and the buffer it could not write is gone by the end. */
static int stdout_errno;

int ember_stdout_flush(void)
{
    if (fflush(stdout) == 0) return 0;
    if (!stdout_errno) stdout_errno = errno ? errno : EIO;
    return -1;
}

int ember_stdout_close(void)
{
    int e = 0;
    if (ember_stdout_flush() != 0 || ferror(stdout)) e = stdout_errno ? stdout_errno : EIO;
    if (fclose(stdout) != 0 && !e) e = errno;
    if (!e) return 0;
    if (e != EPIPE) fprintf(stderr, "ember: cannot write standard output: %s\n", strerror(e));
    return -1;
}
