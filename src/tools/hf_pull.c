/* ember pull and -m hf:: list, choose, reuse or download, link. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "hf.h"
#include "hf_cache.h"

static void sync_dir(const char *path)
{
    char dir[PATH_MAX + 256];
    snprintf(dir, sizeof dir, "%s", path);
    char *s = strrchr(dir, '/');
    if (!s) return;
    *s = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* The lock huggingface_hub takes on a blob while it downloads it
   (<root>/.locks/models--U--R/<oid>.lock, flock'ed by its filelock), so
   that ember and it never append to one .incomplete at once.  The fd,
   -2 when another process holds it, -1 when it cannot be had (a
   read-only cache: the .incomplete's own lock still keeps pulls apart). */
static int lock_like_hub(const char *root, const char *repo_dir, const char *oid)
{
    char dir[PATH_MAX], p[PATH_MAX + 80];
    const char *name = strrchr(repo_dir, '/');
    ember_err ignored;
    if (!name || snprintf(dir, sizeof dir, "%s/.locks/%s", root, name + 1) >= (int)sizeof dir ||
        hf_cache_mkdirs(dir, &ignored))
        return -1;
    snprintf(p, sizeof p, "%s/%s.lock", dir, oid);
    int fd = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    int busy = errno == EWOULDBLOCK;
    close(fd);
    return busy ? -2 : -1;
}

/* huggingface_hub's reading of the variable: 1, ON, YES or TRUE in any
   case; anything else (0, false, no, off) leaves the Hub in reach */
static bool offline(void)
{
    static const char *const yes[] = {"1", "on", "yes", "true"};
    const char *off = getenv("HF_HUB_OFFLINE");
    for (size_t i = 0; off && i < sizeof yes / sizeof yes[0]; i++)
        if (!strcasecmp(off, yes[i])) return true;
    return false;
}

static void cached_free_one(hf_cached *c)
{
    free(c->file);
    free(c->path);
    free(c->blob);
}

static double mtime_of(const char *path)
{
    struct stat st;
    return lstat(path, &st) ? 0 : (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* The cached GGUF files of repo_dir that can be opened, one per name:
   those of the revision refs/main names; when it holds none (no
   refs/main, or a newer commit of which another tool fetched only the
   README), those of every snapshot, a file in several taken from the
   newest link.  How many (in *out, hf_cached_free), or -1. */
static int cached_files(const char *repo_dir, hf_cached **out)
{
    char rev[64];
    bool ref = hf_cache_ref_get(repo_dir, rev, sizeof rev) == 0;
    hf_cached *c = NULL;
    int usable = 0;
    for (int pass = ref ? 0 : 1; pass < 2 && !usable; pass++) {
        free(c);
        int n = hf_cache_list(repo_dir, pass ? NULL : rev, &c);
        for (int i = 0; i < n; i++)
            if (c[i].blob) c[usable++] = c[i];
            else cached_free_one(&c[i]);
    }
    /* hf_cache_list sorts by name: the copies of one name are together */
    int m = 0;
    for (int i = 0; i < usable; i++) {
        if (m && !strcmp(c[m - 1].file, c[i].file)) {
            hf_cached *keep = &c[m - 1];
            bool newer = !(ref && !strcmp(keep->rev, rev)) &&
                         ((ref && !strcmp(c[i].rev, rev)) || mtime_of(c[i].path) > mtime_of(keep->path));
            if (newer) {
                cached_free_one(keep);
                *keep = c[i];
            } else {
                cached_free_one(&c[i]);
            }
            continue;
        }
        c[m++] = c[i];
    }
    *out = c;
    return m;
}

/* The cached file r means, when the choice among the cached ones is clear:
   0, else HF_CHOOSE_NONE or HF_CHOOSE_AMBIGUOUS with err. */
static int cache_pick(const hf_ref *r, const char *repo_dir, char *path, size_t cap, ember_err *err)
{
    hf_cached *c = NULL;
    int usable = cached_files(repo_dir, &c);
    char **names = calloc((size_t)(usable > 0 ? usable : 0) + 1, sizeof *names);
    int k = HF_CHOOSE_NONE;
    ember_seterr(err, "no file of %s is in the cache", r->repo);
    if (names && usable > 0) {
        for (int i = 0; i < usable; i++) names[i] = c[i].file;
        ember_err why;
        k = hf_choose(r->repo, names, usable, r->quant, &why);
        if (k < 0) ember_seterr(err, "in the cache, %s", why.msg);
    }
    if (k >= 0) snprintf(path, cap, "%s", c[k].path);
    free(names);
    hf_cached_free(c, usable > 0 ? usable : 0);
    return k >= 0 ? 0 : k;
}

int hf_cache_pick(const hf_ref *r, char *path, size_t cap, ember_err *err)
{
    char root[PATH_MAX], repo_dir[PATH_MAX];
    if (hf_cache_root(root, sizeof root, err) || hf_cache_repo_dir(root, r->repo, repo_dir, sizeof repo_dir, err))
        return HF_CHOOSE_NONE;
    return cache_pick(r, repo_dir, path, cap, err);
}

int hf_pull(const hf_ref *r, bool progress, bool summary, const hf_watch *watch, char *path, size_t cap,
            ember_err *err)
{
    char root[PATH_MAX], repo_dir[PATH_MAX], blob[PATH_MAX + 80], part[PATH_MAX + 96];
    if (hf_cache_root(root, sizeof root, err) || hf_cache_repo_dir(root, r->repo, repo_dir, sizeof repo_dir, err))
        return -1;
    hf_listing l;
    int lr = offline() ? HF_UNREACHABLE : hf_list(r->repo, watch, &l, err);
    if (lr) {
        ember_err why = *err;
        if (offline()) snprintf(why.msg, sizeof why.msg, "HF_HUB_OFFLINE is set");
        if (lr != HF_UNREACHABLE || cache_pick(r, repo_dir, path, cap, err)) {
            if (lr == HF_UNREACHABLE) {
                ember_err miss = *err;
                ember_seterr(err, "%s; and %s", why.msg, miss.msg);
            }
            else *err = why;
            return -1;
        }
        if (summary) fprintf(stderr, "ember pull: %s: using the cached file\n", why.msg);
        return 0;
    }
    char **names = calloc((size_t)l.n + 1, sizeof *names);
    if (!names) {
        hf_listing_free(&l);
        return ember_seterr(err, "out of memory");
    }
    for (int i = 0; i < l.n; i++) names[i] = l.e[i].path;
    int k = hf_choose(r->repo, names, l.n, r->quant, err);
    free(names);
    if (k == HF_CHOOSE_NONE && l.unusable) {
        ember_err why = *err;
        ember_seterr(err, "%s (%d .gguf entries of the listing were left out: without a usable id or size, or "
                          "with a path that would leave the repository)", why.msg, l.unusable);
    }
    if (k < 0) {
        hf_listing_free(&l);
        return -1;
    }
    const hf_entry *e = &l.e[k];
    int rc = -1;
    /* a server that names no commit on its listing nor on the model's page
       may still say it where huggingface_hub looks (the resolve's
       headers); else the snapshot is called "main", which huggingface_hub
       also finds through refs/main */
    if (!strcmp(l.rev, "main")) (void)hf_resolve_commit(r->repo, e->path, watch, l.rev, sizeof l.rev);
    snprintf(blob, sizeof blob, "%s/blobs/%s", repo_dir, e->oid);
    snprintf(part, sizeof part, "%s.incomplete", blob);
    struct stat st;
    char size[32];
    bytes_human(size, sizeof size, (double)e->size);
    /* a blob is named by its checksum: one of the right size, whoever
       fetched it (huggingface_hub, llama.cpp, an earlier pull), is the file */
    bool cached = stat(blob, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == e->size;
    /* where links cannot be made huggingface_hub keeps the file itself in
       the snapshot: that is the file too */
    char snap[PATH_MAX + 256];
    snprintf(snap, sizeof snap, "%s/snapshots/%s/%s", repo_dir, l.rev, e->path);
    if (!cached && lstat(snap, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == e->size) {
        if (summary) fprintf(stderr, "ember pull: %s: %s (%s) is already in the cache\n", r->repo, e->path, size);
        snprintf(path, cap, "%s", snap);
        rc = hf_cache_ref_set(repo_dir, l.rev, err);
        goto out;
    }
    if (!cached) {
        snprintf(path, cap, "%s/blobs", repo_dir);
        if (hf_cache_mkdirs(path, err)) goto out;
        hf_dl_stats ds;
        int hub_lock = lock_like_hub(root, repo_dir, e->oid);
        if (hub_lock == -2) {
            rc = ember_seterr(err, "%s: %s is being downloaded by another process (huggingface_hub's lock in "
                                   "%s/.locks)", r->repo, e->path, root);
            goto out;
        }
        int dr = hf_download(r->repo, e, part, blob, progress, watch, &ds, err);
        if (hub_lock >= 0) close(hub_lock);
        if (dr) goto out;
        sync_dir(blob);
        /* A downloaded file sits in the page cache in folios the size of
           curl's writes, mapped 4 KiB at a time: read it back once into 2
           MiB folios (ember recache), which the weights then stream
           through with far fewer TLB misses.  Its pages are clean (the
           download synced them); a failure here costs only that. */
        double t0 = ember_now_ms();
        (void)ember_refold_path(blob);
        double refold_s = (ember_now_ms() - t0) / 1000.0;
        if (summary) {
            char got[32], rate[32], before[64] = "";
            bytes_human(got, sizeof got, (double)ds.fetched);
            bytes_human(rate, sizeof rate, ds.seconds > 0 ? (double)ds.fetched / ds.seconds : 0);
            if (ds.resumed_from) {
                char had[32];
                bytes_human(had, sizeof had, (double)ds.resumed_from);
                snprintf(before, sizeof before, ", resumed after %s", had);
            }
            fprintf(stderr, "ember pull: %s: %s: %s in %.1f s (%s/s)%s, %s verified, read into 2 MiB page-cache "
                            "folios in %.1f s\n", r->repo, e->path, got, ds.seconds, rate, before,
                    e->lfs ? "sha256" : "git blob id", refold_s);
        }
    } else if (summary) {
        fprintf(stderr, "ember pull: %s: %s (%s) is already in the cache\n", r->repo, e->path, size);
    }
    if (hf_cache_link(repo_dir, l.rev, e->path, e->oid, path, cap, err)) goto out;
    if (hf_cache_ref_set(repo_dir, l.rev, err)) goto out;
    rc = 0;
out:
    hf_listing_free(&l);
    return rc;
}

int hf_resolve(const hf_ref *r, char *path, size_t cap, ember_err *err)
{
    char root[PATH_MAX], repo_dir[PATH_MAX];
    if (hf_cache_root(root, sizeof root, err) || hf_cache_repo_dir(root, r->repo, repo_dir, sizeof repo_dir, err))
        return -1;
    ember_err cerr = {{0}};
    int k = cache_pick(r, repo_dir, path, cap, &cerr);
    if (k == 0) return 0;
    if (k == HF_CHOOSE_AMBIGUOUS) return ember_seterr(err, "%s", cerr.msg);
    if (offline()) return ember_seterr(err, "HF_HUB_OFFLINE is set and %s (%s)", cerr.msg, root);
    return hf_pull(r, isatty(2), true, NULL, path, cap, err);
}
