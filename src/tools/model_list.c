/* The models a person has (model_list.h). */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/stat.h>

#include "hf_cache.h"
#include "model_list.h"

static model_row *push(model_rows *t)
{
    if (t->n == t->cap) {
        int nc = t->cap ? 2 * t->cap : 16;
        model_row *g = realloc(t->r, (size_t)nc * sizeof *g);
        if (!g) return NULL;
        t->r = g;
        t->cap = nc;
    }
    model_row *w = &t->r[t->n++];
    memset(w, 0, sizeof *w);
    return w;
}

/* architecture and quantization from the header alone */
static void peek(model_row *w)
{
    ember_model_info info;
    ember_err err = {{0}};
    struct stat st;
    if (stat(w->path, &st) == 0) w->size = (uint64_t)st.st_size;
    if (ember_model_peek(w->path, &info, &err)) {
        snprintf(w->error, sizeof w->error, "%s", err.msg);
        snprintf(w->arch, sizeof w->arch, "?");
        snprintf(w->quant, sizeof w->quant, "?");
        return;
    }
    snprintf(w->arch, sizeof w->arch, "%s", info.arch);
    snprintf(w->quant, sizeof w->quant, "%s", info.file_type[0] ? info.file_type : ember_dtype_name(info.dominant_dtype));
}

/* Whether c[k] stands for c[i] in the list: the same file and blob, and
   c[k] of refs/main's revision or, neither being it, found first */
static bool stands_for(const hf_cached *c, int k, int i, const char *ref)
{
    if (k == i || !c[k].blob || strcmp(c[k].file, c[i].file) || strcmp(c[k].blob, c[i].blob)) return false;
    bool kr = ref && !strcmp(c[k].rev, ref), ir = ref && !strcmp(c[i].rev, ref);
    return kr || (!ir && k < i);
}

static void scan_cache(model_rows *t, const char *root)
{
    DIR *d = opendir(root);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        char repo[200], dir[PATH_MAX];
        if (hf_cache_repo_name(de->d_name, repo, sizeof repo)) continue;
        if (snprintf(dir, sizeof dir, "%s/%s", root, de->d_name) >= (int)sizeof dir) continue;
        hf_cached *c;
        int n = hf_cache_list(dir, NULL, &c);
        char ref[64];
        bool has_ref = hf_cache_ref_get(dir, ref, sizeof ref) == 0;
        for (int i = 0; i < n; i++) {
            if (!c[i].blob) continue;   /* a link whose blob is gone is nothing to open */
            /* one file under several revisions (a pull after a commit that
               changed something else links the same blob again): one row,
               refs/main's; a different blob under an older revision stays */
            bool dup = false;
            for (int k = 0; k < n && !dup; k++) dup = stands_for(c, k, i, has_ref ? ref : NULL);
            if (dup) continue;
            model_row *w = push(t);
            if (!w) break;
            snprintf(w->repo, sizeof w->repo, "%s", repo);
            snprintf(w->rev, sizeof w->rev, "%s", c[i].rev);
            snprintf(w->name, sizeof w->name, "%s:%s", repo, c[i].file);
            snprintf(w->path, sizeof w->path, "%s", c[i].path);
            peek(w);
        }
        if (n > 0) hf_cached_free(c, n);
    }
    closedir(d);
}

static void scan_dir(model_rows *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == '.' || n <= 5 || strcasecmp(de->d_name + n - 5, ".gguf")) continue;
        char path[PATH_MAX];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
        if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
        model_row *w = push(t);
        if (!w) break;
        snprintf(w->name, sizeof w->name, "%s", de->d_name);
        snprintf(w->path, sizeof w->path, "%s", path);
        peek(w);
    }
    closedir(d);
}

static int by_name(const void *a, const void *b)
{
    const model_row *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

int model_list_gather(model_rows *t, char *root, size_t cap)
{
    ember_err err = {{0}};
    if (hf_cache_root(root, cap, &err) == 0) scan_cache(t, root);
    else root[0] = 0;
    const char *em = getenv("EMBER_MODELS");
    if (em && *em) {
        char *copy = strdup(em), *save = NULL;
        for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save))
            scan_dir(t, dir);
        free(copy);
    }
    if (t->n) qsort(t->r, (size_t)t->n, sizeof *t->r, by_name);
    return 0;
}

void model_rows_free(model_rows *t)
{
    free(t->r);
    memset(t, 0, sizeof *t);
}

const model_row *model_list_find(const model_rows *t, const char *name, int *ambiguous)
{
    *ambiguous = 0;
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->r[i].name, name)) return &t->r[i];
    /* USER/REPO or USER/REPO:QUANT (the QUANT a part of the file's name),
       or a bare file name */
    const char *colon = strchr(name, ':');
    size_t rl = colon ? (size_t)(colon - name) : strlen(name);
    const model_row *hit = NULL;
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        const model_row *r = &t->r[i];
        const char *file = strrchr(r->path, '/');
        file = file ? file + 1 : r->path;
        bool match;
        if (r->repo[0] && strlen(r->repo) == rl && !strncmp(r->repo, name, rl))
            match = !colon || strcasestr(file, colon + 1) != NULL;
        else
            match = !strcmp(file, name);
        if (match) hit = r, n++;
    }
    if (n > 1) *ambiguous = n;
    return n == 1 ? hit : NULL;
}
