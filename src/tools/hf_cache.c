/* The Hugging Face cache layout on disk (hf_cache.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf_cache.h"

static int fits(int n, size_t cap) { return n >= 0 && (size_t)n < cap ? 0 : -1; }

/* Where huggingface_hub keeps its cache and its token: the first variable
   set to an absolute path, plus the suffix.  man/ember.1 FILES names every
   row (tests/man_help.sh reads these tables). */
typedef struct { const char *var, *suffix; } hf_place;
static const hf_place hub_places[] = {
    {"HF_HUB_CACHE", ""},
    {"HUGGINGFACE_HUB_CACHE", ""},
    {"HF_HOME", "/hub"},
    {"XDG_CACHE_HOME", "/huggingface/hub"},
    {"HOME", "/.cache/huggingface/hub"},
    {NULL, NULL},
};
static const hf_place token_places[] = {
    {"HF_TOKEN_PATH", ""},
    {"HF_HOME", "/token"},
    {"XDG_CACHE_HOME", "/huggingface/token"},
    {"HOME", "/.cache/huggingface/token"},
    {NULL, NULL},
};

/* 1 with the path, 0 when no variable is set, -1 when it does not fit.
   huggingface_hub's own variables (HF_*, HUGGINGFACE_*) are read as it
   reads them, "~" expanded and a relative path taken from the working
   directory, so that both find one cache; XDG_CACHE_HOME and HOME count
   only when absolute, as the XDG Base Directory specification says. */
static int place_path(const hf_place *p, char *buf, size_t cap)
{
    for (; p->var; p++) {
        const char *v = getenv(p->var);
        if (!v || !*v) continue;
        if (v[0] == '/') return fits(snprintf(buf, cap, "%s%s", v, p->suffix), cap) ? -1 : 1;
        if (strncmp(p->var, "HF_", 3) && strncmp(p->var, "HUGGINGFACE_", 12)) continue;
        const char *home = getenv("HOME");
        char cwd[PATH_MAX];
        if (v[0] == '~' && (!v[1] || v[1] == '/') && home && home[0] == '/')
            return fits(snprintf(buf, cap, "%s%s%s", home, v + 1, p->suffix), cap) ? -1 : 1;
        if (v[0] != '~' && getcwd(cwd, sizeof cwd))
            return fits(snprintf(buf, cap, "%s/%s%s", cwd, v, p->suffix), cap) ? -1 : 1;
    }
    return 0;
}

int hf_cache_root(char *buf, size_t cap, ember_err *err)
{
    int r = place_path(hub_places, buf, cap);
    if (r == 0) return ember_seterr(err, "no cache directory: set HF_HOME or HOME");
    if (r < 0) return ember_seterr(err, "the cache directory's path is too long");
    return 0;
}

int hf_token_path(char *buf, size_t cap) { return place_path(token_places, buf, cap) == 1 ? 0 : -1; }

int hf_cache_repo_dir(const char *root, const char *repo, char *buf, size_t cap, ember_err *err)
{
    const char *slash = strchr(repo, '/');
    if (!slash) return ember_seterr(err, "'%s' is not USER/REPO", repo);
    int n = snprintf(buf, cap, "%s/models--%.*s--%s", root, (int)(slash - repo), repo, slash + 1);
    if (fits(n, cap)) return ember_seterr(err, "the cache path for %s is too long", repo);
    return 0;
}

int hf_cache_repo_name(const char *entry, char *repo, size_t cap)
{
    if (strncmp(entry, "models--", 8)) return -1;
    const char *u = entry + 8, *sep = strstr(u, "--");
    if (!sep || sep == u || !sep[2]) return -1;
    return fits(snprintf(repo, cap, "%.*s/%s", (int)(sep - u), u, sep + 2), cap);
}

int hf_cache_mkdirs(const char *path, ember_err *err)
{
    char p[PATH_MAX];
    if (fits(snprintf(p, sizeof p, "%s", path), sizeof p)) return ember_seterr(err, "path too long: %s", path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) && errno != EEXIST) return ember_seterr(err, "cannot create %s: %s", p, strerror(errno));
        *s = c;
        if (!c) break;
    }
    struct stat st;
    if (stat(path, &st) || !S_ISDIR(st.st_mode)) return ember_seterr(err, "%s is not a directory", path);
    return 0;
}

int hf_cache_ref_get(const char *repo_dir, char *rev, size_t cap)
{
    char p[PATH_MAX];
    if (fits(snprintf(p, sizeof p, "%s/refs/main", repo_dir), sizeof p)) return -1;
    FILE *f = fopen(p, "r");
    if (!f) return -1;
    size_t n = fread(rev, 1, cap - 1, f);
    fclose(f);
    rev[n] = 0;
    rev[strcspn(rev, "\r\n")] = 0;
    /* a revision becomes a directory name: nothing that could leave snapshots/ */
    if (!rev[0] || strchr(rev, '/') || !strcmp(rev, ".") || !strcmp(rev, "..")) return -1;
    return 0;
}

int hf_cache_ref_set(const char *repo_dir, const char *rev, ember_err *err)
{
    char p[PATH_MAX];
    if (fits(snprintf(p, sizeof p, "%s/refs", repo_dir), sizeof p)) return ember_seterr(err, "path too long");
    if (hf_cache_mkdirs(p, err)) return -1;
    strcat(p, "/main");
    /* already so: nothing written, so that a read-only cache (a shared or
       mounted one) still serves what it holds */
    char cur[128];
    if (hf_cache_ref_get(repo_dir, cur, sizeof cur) == 0 && !strcmp(cur, rev)) return 0;
    /* huggingface_hub writes the bare commit id, no newline */
    return ember_write_file(p, rev, strlen(rev), EMBER_MODE_PUBLIC, err);
}

int hf_cache_link(const char *repo_dir, const char *rev, const char *file, const char *oid, char *path,
                  size_t cap, ember_err *err)
{
    char dir[PATH_MAX], target[PATH_MAX], tmp[PATH_MAX + 32];
    if (fits(snprintf(path, cap, "%s/snapshots/%s/%s", repo_dir, rev, file), cap))
        return ember_seterr(err, "the cache path for %s is too long", file);
    /* a link that already leads to the blob (ours, or another tool's
       absolute one) is left alone: nothing written in a read-only cache */
    char blob[PATH_MAX], *want = NULL, *have = NULL;
    struct stat st;
    bool same = false;
    if (!fits(snprintf(blob, sizeof blob, "%s/blobs/%s", repo_dir, oid), sizeof blob) && lstat(path, &st) == 0 &&
        S_ISLNK(st.st_mode) && (want = realpath(blob, NULL)) && (have = realpath(path, NULL)))
        same = !strcmp(want, have);
    free(want);
    free(have);
    if (same) return 0;
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    if (hf_cache_mkdirs(dir, err)) return -1;
    /* relative, so that the cache can be moved or mounted elsewhere */
    size_t off = (size_t)snprintf(target, sizeof target, "../../");
    for (const char *s = file; (s = strchr(s, '/')); s++) off += (size_t)snprintf(target + off, sizeof target - off, "../");
    if (fits(snprintf(target + off, sizeof target - off, "blobs/%s", oid), sizeof target - off))
        return ember_seterr(err, "path too long");
    snprintf(tmp, sizeof tmp, "%s.ember-link-%ld", path, (long)getpid());
    unlink(tmp);
    if (symlink(target, tmp)) return ember_seterr(err, "cannot create %s: %s", tmp, strerror(errno));
    if (rename(tmp, path)) {
        int e = errno;
        unlink(tmp);
        return ember_seterr(err, "cannot create %s: %s", path, strerror(e));
    }
    return 0;
}

static bool is_gguf(const char *name)
{
    size_t n = strlen(name);
    return n > 5 && !strcasecmp(name + n - 5, ".gguf");
}

typedef struct walk {
    hf_cached *c;
    int n, cap;
    bool gguf_only;
    bool failed;
} walk;

static void add(walk *w, const char *file, const char *path, const char *rev)
{
    if (w->n == w->cap) {
        int nc = w->cap ? 2 * w->cap : 16;
        hf_cached *g = realloc(w->c, (size_t)nc * sizeof *g);
        if (!g) {
            w->failed = true;
            return;
        }
        w->c = g;
        w->cap = nc;
    }
    hf_cached *c = &w->c[w->n];
    memset(c, 0, sizeof *c);
    c->file = strdup(file);
    c->path = strdup(path);
    c->blob = realpath(path, NULL);
    snprintf(c->rev, sizeof c->rev, "%s", rev);
    struct stat st;
    if (c->blob && stat(c->blob, &st) == 0) c->size = (uint64_t)st.st_size;
    if (!c->file || !c->path) {
        free(c->file);
        free(c->path);
        free(c->blob);
        w->failed = true;
        return;
    }
    w->n++;
}

/* rel: the path inside the repository so far ("" at the snapshot's top) */
static void walk_dir(walk *w, const char *dir, const char *rel, const char *rev, int depth)
{
    if (depth > 16) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2]))) continue;
        char path[PATH_MAX], file[PATH_MAX];
        if (fits(snprintf(path, sizeof path, "%s/%s", dir, de->d_name), sizeof path) ||
            fits(snprintf(file, sizeof file, "%s%s%s", rel, *rel ? "/" : "", de->d_name), sizeof file))
            continue;
        struct stat st;
        if (lstat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) walk_dir(w, path, file, rev, depth + 1);
        else if ((S_ISLNK(st.st_mode) || S_ISREG(st.st_mode)) && (!w->gguf_only || is_gguf(de->d_name)))
            add(w, file, path, rev);
    }
    closedir(d);
}

static int by_file(const void *a, const void *b)
{
    const hf_cached *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    return c ? c : strcmp(x->rev, y->rev);
}

static int list(const char *repo_dir, const char *rev, bool gguf_only, hf_cached **out)
{
    walk w = {.gguf_only = gguf_only};
    char snaps[PATH_MAX];
    *out = NULL;
    if (fits(snprintf(snaps, sizeof snaps, "%s/snapshots", repo_dir), sizeof snaps)) return -1;
    DIR *d = opendir(snaps);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        if (rev && strcmp(rev, de->d_name)) continue;
        char p[PATH_MAX];
        if (fits(snprintf(p, sizeof p, "%s/%s", snaps, de->d_name), sizeof p)) continue;
        walk_dir(&w, p, "", de->d_name, 0);
    }
    closedir(d);
    if (w.failed) {
        hf_cached_free(w.c, w.n);
        return -1;
    }
    if (w.n) qsort(w.c, (size_t)w.n, sizeof *w.c, by_file);
    *out = w.c;
    return w.n;
}

int hf_cache_list(const char *repo_dir, const char *rev, hf_cached **out)
{
    return list(repo_dir, rev, true, out);
}

void hf_cached_free(hf_cached *c, int n)
{
    for (int i = 0; i < n; i++) {
        free(c[i].file);
        free(c[i].path);
        free(c[i].blob);
    }
    free(c);
}

/* Removes path's parents up to (not including) stop while they are empty. */
static void prune(const char *path, const char *stop)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    size_t sl = strlen(stop);
    for (char *s; (s = strrchr(p, '/')) && (size_t)(s - p) > sl;) {
        *s = 0;
        if (rmdir(p)) break;
    }
}

/* Empties dir (files and subdirectories, never following a link), then removes it. */
static void remove_tree(const char *dir, int depth)
{
    DIR *d = depth < 16 ? opendir(dir) : NULL;
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char p[PATH_MAX];
            if (fits(snprintf(p, sizeof p, "%s/%s", dir, de->d_name), sizeof p)) continue;
            struct stat st;
            if (lstat(p, &st)) continue;
            if (S_ISDIR(st.st_mode)) remove_tree(p, depth + 1);
            else unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

int hf_cache_remove(const char *repo_dir, const char *file, ember_err *err)
{
    hf_cached *c;
    int n = list(repo_dir, NULL, false, &c);
    if (n < 0) return ember_seterr(err, "cannot read %s/snapshots", repo_dir);
    char snaps[PATH_MAX];
    snprintf(snaps, sizeof snaps, "%s/snapshots", repo_dir);
    int removed = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(c[i].file, file)) continue;
        if (unlink(c[i].path)) {
            rc = ember_seterr(err, "cannot remove %s: %s", c[i].path, strerror(errno));
            continue;
        }
        removed++;
        prune(c[i].path, snaps);
    }
    /* a blob goes when no link left in any snapshot points at it, and only
       a blob of this cache: a link someone pointed at their own file
       outside it loses the link, never the file */
    char *real = realpath(repo_dir, NULL);
    char blobs[PATH_MAX];
    snprintf(blobs, sizeof blobs, "%s/blobs/", real ? real : repo_dir);
    free(real);
    for (int i = 0; i < n && !rc; i++) {
        if (strcmp(c[i].file, file) || !c[i].blob) continue;
        if (strncmp(c[i].blob, blobs, strlen(blobs))) continue;
        bool used = false;
        for (int k = 0; k < n; k++)
            if (strcmp(c[k].file, file) && c[k].blob && !strcmp(c[k].blob, c[i].blob)) used = true;
        for (int k = 0; k < i; k++)   /* the same blob under two revisions: once */
            if (!strcmp(c[k].file, file) && c[k].blob && !strcmp(c[k].blob, c[i].blob)) used = true;
        if (!used && unlink(c[i].blob) && errno != ENOENT)
            rc = ember_seterr(err, "cannot remove %s: %s", c[i].blob, strerror(errno));
    }
    hf_cached_free(c, n);
    if (rc) return rc;
    if (!removed) return ember_seterr(err, "%s is not in %s", file, repo_dir);
    /* nothing reachable is left: the repository's directory goes too */
    if (rmdir(snaps) == 0 || errno == ENOENT) remove_tree(repo_dir, 0);
    return 0;
}
