/* One file from the Hub to disk: resumed with a Range request, checksummed
   as it arrives, with a progress bar on a terminal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bytes.h"
#include "digest.h"
#include "hf.h"
#include "hf_http.h"

typedef struct dl {
    hf_http *h;
    int fd;
    digest *d;
    uint64_t have;          /* bytes on disk (and hashed) */
    uint64_t start;         /* bytes there when this transfer began */
    uint64_t total;
    bool checked;           /* the response's status was looked at */
    bool restarted;         /* the server ignored the Range: begun again */
    int64_t wrong_length;   /* the answer's announced length, when it is not this file's (else -1) */
    int64_t wrong_start;    /* a 206's first byte, when not the one asked for (else -1) */
    long status;
    int write_errno;
    bool progress;
    double t0, last_draw, last_watch;
    const char *label;
    const hf_watch *watch;
    bool watch_stop;        /* the watcher asked to stop */
} dl;

static void clock_text(char *buf, size_t cap, double s)
{
    if (s < 0 || s > 359999) {
        snprintf(buf, cap, "--:--");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

static int columns(void)
{
    struct winsize ws;
    return ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20 ? ws.ws_col : 80;
}

/* Bytes per second so far; the first fraction of a second says little
   about the rate, so 0 then (unless force, for the last line). */
static double rate_at(const dl *s, double now, bool force)
{
    double secs = (now - s->t0) / 1e3;
    return secs > 0.2 || (force && secs > 0) ? (double)(s->have - s->start) / secs : 0;
}

static void draw(dl *s, bool force)
{
    double now = ember_now_ms();
    if (!s->progress || (!force && now - s->last_draw < 100)) return;
    s->last_draw = now;
    double rate = rate_at(s, now, force);
    char a[32], b[32], r[32], eta[32], stats[160];
    bytes_human(a, sizeof a, (double)s->have);
    bytes_human(b, sizeof b, (double)s->total);
    bytes_human(r, sizeof r, rate);
    clock_text(eta, sizeof eta, rate > 0 ? (double)(s->total - s->have) / rate : -1);
    int pct = s->total ? (int)(100.0 * (double)s->have / (double)s->total) : 0;
    int sl = snprintf(stats, sizeof stats, " %3d%% %s / %s  %s/s  ETA %s", pct, a, b, r, eta);
    /* one line that fits, or the carriage return cannot redraw it */
    int room = columns() - 1 - sl, lw = (int)strlen(s->label), bw = 30;
    if (lw + 3 + bw > room) bw = room - lw - 3 < 10 ? 10 : room - lw - 3;
    if (lw + 3 + bw > room) lw = room - 3 - bw < 0 ? 0 : room - 3 - bw;
    char bar[31];
    int fill = pct * bw / 100;
    for (int i = 0; i < bw && i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[bw < 30 ? bw : 30] = 0;
    fprintf(stderr, "\r\033[K%.*s [%s]%s", lw, s->label, bar, stats);
    fflush(stderr);
}

/* Ctrl-C or a TERM ends the transfer through curl, so the partial is
   synced and kept and the terminal line finished, not cut mid-write. */
static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

static void catch_stops(struct sigaction *old)
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    stop_sig = 0;
    for (int i = 0; i < 2; i++) {
        sigaction(sigs[i], NULL, &old[i]);
        /* a signal the caller chose to ignore (nohup, a background job) stays ignored */
        if (old[i].sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL);
    }
}

static void restore_stops(const struct sigaction *old)
{
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    dl *s = ud;
    draw(s, false);
    double now = ember_now_ms();
    if (s->watch && now - s->last_watch >= 100) {
        s->last_watch = now;
        if (s->watch->fn(s->watch->ctx, s->label, s->have, s->total, rate_at(s, now, false))) s->watch_stop = true;
    }
    return (stop_sig && !s->watch) || s->watch_stop ? 1 : 0;
}

/* Looks at the status once, before the first byte is kept: a 200 to a
   Range request is the whole file again; an error page is not content,
   nor is an answer whose length or range says it is not the file (a
   proxy's page served with 200, a server that starts a 206 elsewhere). */
static bool check(dl *s)
{
    if (s->checked) return s->status < 300 && s->wrong_length < 0 && s->wrong_start < 0;
    s->checked = true;
    curl_easy_getinfo(s->h->curl, CURLINFO_RESPONSE_CODE, &s->status);
    if (s->status >= 300) return false;
    uint64_t from = 0, total = 0, to = 0;
    if (s->status == 206) {
        const char *cr = s->h->content_range;
        int k = sscanf(cr, "bytes %" SCNu64 "-%" SCNu64 "/%" SCNu64, &from, &to, &total);
        if (k >= 1 && from == 0 && s->have) s->status = 200;   /* the whole file after all */
        else if (k >= 1 && from != s->have) {
            s->wrong_start = (int64_t)from;
            return false;
        }
        if (k == 3 && total != s->total) {
            s->wrong_length = (int64_t)total;
            return false;
        }
    }
    curl_off_t cl = -1;
    uint64_t want = s->status == 206 ? s->total - s->have : s->total;
    if (curl_easy_getinfo(s->h->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl >= 0 &&
        (uint64_t)cl != want) {
        s->wrong_length = (int64_t)cl + (s->status == 206 ? (int64_t)s->have : 0);
        return false;
    }
    if (s->have && s->status == 200) {
        if (ftruncate(s->fd, 0) || lseek(s->fd, 0, SEEK_SET) < 0 || digest_reset(s->d)) {
            s->write_errno = errno ? errno : EIO;
            return false;
        }
        s->have = s->start = 0;
        s->restarted = true;
    }
    return true;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
    dl *s = ud;
    size_t n = size * nmemb;
    if (!check(s)) {
        if (s->status < 300) return 0;
        hf_http_error_body(s->h, data, n);   /* an error body is read, its start kept for the message */
        return n;
    }
    if (s->have + n > s->total) {
        s->write_errno = EOVERFLOW;   /* more than the listing said: not this file */
        return 0;
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(s->fd, data + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            s->write_errno = w < 0 ? errno : ENOSPC;
            /* what did reach the disk stays hashed, so a resume is exact */
            return 0;
        }
        if (digest_update(s->d, data + off, (size_t)w)) {
            s->write_errno = ENOMEM;
            return 0;
        }
        off += (size_t)w;
        s->have += (uint64_t)w;
    }
    return n;
}

static void done_line(dl *s)
{
    if (s->progress) {
        draw(s, true);
        fputc('\n', stderr);
    }
}

int hf_download(const char *repo, const hf_entry *e, const char *dest, const char *final, bool progress,
                const hf_watch *watch, hf_dl_stats *st, ember_err *err)
{
    memset(st, 0, sizeof *st);
    int fd = open(dest, O_RDWR | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return ember_seterr(err, "cannot write %s: %s", dest, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ember_seterr(err, "cannot write %s: not a regular file", dest);
    }
    /* two pulls appending to one partial would make neither file */
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        close(fd);
        return ember_seterr(err, "%s: %s is being downloaded by another process (%s)", repo, e->path, dest);
    }
    dl s = {.fd = fd, .total = e->size, .progress = progress, .label = e->path, .watch = watch,
            .wrong_length = -1, .wrong_start = -1};
    s.d = digest_new(!e->lfs, e->size);
    if (!s.d) {
        close(fd);
        return ember_seterr(err, "cannot start SHA-256 (libcrypto)");
    }
    s.have = (uint64_t)sb.st_size;
    /* a partial longer than the file is not a prefix of it */
    if (s.have > e->size && ftruncate(fd, 0) == 0) s.have = 0;
    if (s.have && digest_fd(s.d, fd, s.have)) {
        if (ftruncate(fd, 0) == 0) s.have = 0;
        digest_reset(s.d);
    }
    s.start = st->resumed_from = s.have;
    /* say so before the transfer rather than after hours of it */
    struct statvfs vfs;
    if (s.have < e->size && fstatvfs(fd, &vfs) == 0 && vfs.f_frsize &&
        (uint64_t)vfs.f_bavail * vfs.f_frsize < e->size - s.have) {
        char need[32], avail[32];
        bytes_human(need, sizeof need, (double)(e->size - s.have));
        bytes_human(avail, sizeof avail, (double)vfs.f_bavail * (double)vfs.f_frsize);
        digest_free(s.d);
        if (!s.have) unlink(dest);   /* under the lock, as below: no empty partial left */
        close(fd);
        return ember_seterr(err, "disk full: %s needs %s more and %s is free where the cache is (%s)%s", e->path,
                            need, avail, dest, s.have ? "; the partial download is kept" : "");
    }
    hf_http h = {0};
    int rc = 0;
    if (s.have < e->size) {
        char url[4096], esc[3072];
        if (hf_http_escape_path(e->path, esc, sizeof esc)) {
            rc = ember_seterr(err, "%s: file name too long", e->path);
            goto out;
        }
        snprintf(url, sizeof url, "%s/%s/resolve/main/%s", hf_endpoint(), repo, esc);
        if (hf_http_open(&h, url, err)) {
            rc = -1;
            goto out;
        }
        s.h = &h;
        curl_easy_setopt(h.curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h.curl, CURLOPT_WRITEDATA, &s);
        curl_easy_setopt(h.curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFODATA, &s);
        /* a Range of our own, not CURLOPT_RESUME_FROM: that one fails when the
           server sends the whole file, which check() takes in stride */
        char range[32];
        snprintf(range, sizeof range, "%" PRIu64 "-", s.have);
        if (s.have) curl_easy_setopt(h.curl, CURLOPT_RANGE, range);
        s.t0 = ember_now_ms();
        if (progress) draw(&s, true);
        struct sigaction old[2];
        if (!watch) catch_stops(old);
        CURLcode cr = curl_easy_perform(h.curl);
        if (!watch) restore_stops(old);
        long status = 0;
        curl_easy_getinfo(h.curl, CURLINFO_RESPONSE_CODE, &status);
        done_line(&s);
        st->fetched = s.have - s.start;
        st->seconds = (ember_now_ms() - s.t0) / 1e3;
        if (s.restarted) st->resumed_from = 0;
        char a[32], b[32];
        bytes_human(a, sizeof a, (double)s.have);
        bytes_human(b, sizeof b, (double)e->size);
        if (s.watch_stop) {
            rc = ember_seterr(err, "%s: %s: cancelled after %s of %s%s", repo, e->path, a, b,
                              s.have ? "; the partial download is kept and the next try resumes it" : "");
            goto out;
        } else if (stop_sig && !watch) {
            rc = ember_seterr(err, "%s: %s: interrupted after %s of %s%s", repo, e->path, a, b,
                              s.have ? ". The partial download is kept: run the same command again to resume" : "");
            goto out;
        } else if (s.wrong_length >= 0 || s.wrong_start >= 0) {
            char *type = NULL, what[96] = "";
            curl_easy_getinfo(h.curl, CURLINFO_CONTENT_TYPE, &type);
            if (type && *type) snprintf(what, sizeof what, ", %.60s", type);
            if (s.wrong_start >= 0)
                rc = ember_seterr(err, "%s: %s: asked for the bytes from %" PRIu64 " on, the server sent them from "
                                       "%" PRId64 ": nothing of it was kept%s", repo, e->path, s.have, s.wrong_start,
                                  s.have ? "; the partial download is kept" : "");
            else
                rc = ember_seterr(err, "%s: %s: the server's answer (HTTP %ld%s) is for a file of %" PRId64 " bytes, "
                                       "the listing's has %" PRIu64 ": not this file, nothing of it was kept%s", repo,
                                  e->path, status, what, s.wrong_length, e->size,
                                  s.have ? "; the partial download is kept" : "");
            goto out;
        } else if (status == 416 && s.have) {
            /* nothing past what we hold: the checksum below says whether it is whole */
        } else if (s.write_errno == ENOSPC || s.write_errno == EDQUOT || s.write_errno == EFBIG) {
            rc = ember_seterr(err, "%s writing %s after %s of %s: %s. The partial download is kept: make room "
                                   "and run the same command again to resume",
                              s.write_errno == EFBIG ? "file size limit reached" : "disk full", dest, a, b,
                              strerror(s.write_errno));
            goto out;
        } else if (s.write_errno == EOVERFLOW) {
            unlink(dest);
            rc = ember_seterr(err, "%s: %s: the server sent more than the file's size (%s), so not this file; the "
                                   "download was removed", repo, e->path, b);
            goto out;
        } else if (s.write_errno) {
            rc = ember_seterr(err, "cannot write %s: %s", dest, strerror(s.write_errno));
            goto out;
        } else if (status >= 500) {
            rc = ember_seterr(err, "%s: %s: the server failed (HTTP %ld)%s: try again later", repo, e->path, status,
                              s.have ? "; the partial download is kept and will be resumed" : "");
            goto out;
        } else if (status == 404 && !h.error_code[0]) {
            /* the listing just named it: not "no such repository" */
            rc = ember_seterr(err, "%s: %s: the server has no such file (HTTP 404) though its listing names it: "
                                   "the repository may have changed meanwhile; try again", repo, e->path);
            goto out;
        } else if (status >= 400) {
            rc = hf_http_error(&h, cr, status, repo, e->path, err);
            goto out;
        } else if (cr != CURLE_OK && s.have == s.start && !s.restarted) {
            /* no byte came (no connection, a redirect loop, a timeout): no
               "dropped" connection, and a partial only if one was there */
            rc = ember_seterr(err, "%s: %s: the download did not start (%s)%s", repo, e->path,
                              h.curl_err[0] ? h.curl_err : curl_easy_strerror(cr),
                              s.have ? ". The partial download is kept: run the same command again to resume" : "");
            goto out;
        } else if (cr != CURLE_OK) {
            rc = ember_seterr(err, "%s: %s: the connection dropped after %s of %s (%s). The partial download "
                                   "is kept: run the same command again to resume", repo, e->path, a, b,
                              h.curl_err[0] ? h.curl_err : curl_easy_strerror(cr));
            goto out;
        } else if (s.have < e->size) {
            /* a whole answer, only shorter than the listing says (no
               Content-Length to tell before): a resume says which is right */
            rc = ember_seterr(err, "%s: %s: the server's answer ended after %" PRIu64 " of the listing's %" PRIu64
                                   " bytes. The partial download is kept: run the same command again to resume",
                              repo, e->path, s.have, e->size);
            goto out;
        }
    }
    char hex[72];
    if (digest_hex(s.d, hex)) {
        rc = ember_seterr(err, "cannot finish the checksum (libcrypto)");
        goto out;
    }
    if (s.have != e->size) {
        /* only after a 416: the server's file ends before the listing's size */
        unlink(dest);
        rc = ember_seterr(err, "%s: %s: size mismatch: the server's file ends after %" PRIu64 " bytes, the listing "
                               "says %" PRIu64 ". The download was removed; run the command again to download it "
                               "afresh", repo, e->path, s.have, e->size);
        goto out;
    }
    if (strcmp(hex, e->oid)) {
        unlink(dest);
        rc = ember_seterr(err, "%s: %s: checksum mismatch: the download's %s is %s, the Hub's is %s. The file "
                               "was removed; run the command again to download it afresh", repo, e->path,
                          e->lfs ? "sha256" : "git blob id", hex, e->oid);
        goto out;
    }
    if (fsync(fd)) rc = ember_seterr(err, "cannot write %s: %s", dest, strerror(errno));
    /* under the lock: a second pull never starts a fresh partial of a file
       that is about to appear */
    else if (rename(dest, final)) rc = ember_seterr(err, "cannot write %s: %s", final, strerror(errno));
out:
    if (rc) fsync(fd);   /* a kept partial is on disk before we say so */
    /* an empty partial resumes nothing: not left behind (still under the lock) */
    if (rc && fstat(fd, &sb) == 0 && sb.st_size == 0) unlink(dest);
    hf_http_close(&h);
    digest_free(s.d);
    if (close(fd) && !rc) rc = ember_seterr(err, "cannot write %s: %s", dest, strerror(errno));
    return rc;
}
