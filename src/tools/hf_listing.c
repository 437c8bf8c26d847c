/* A repository's file listing, as the Hub's tree API gives it: only what
   can safely name a file in the cache is kept. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "hf.h"

bool hf_path_ok(const char *p)
{
    size_t len = strlen(p);
    if (!len || *p == '/' || p[len - 1] == '/' || len > 1000) return false;
    for (const char *s = p; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '\\') return false;
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.')) return false;
        s += n + (s[n] ? 1 : 0);
    }
    return true;
}

bool hf_hex_ok(const char *s, size_t want)
{
    if (strlen(s) != want) return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s)) return false;
    return true;
}

/* A folder to look into (hf_list), once; past a few thousand the rest are
   left out rather than compared with all the others */
static void add_dir(hf_listing *l, const char *path)
{
    if (l->ndirs >= 4096) return;
    for (int i = 0; i < l->ndirs; i++)
        if (!strcmp(l->dirs[i], path)) return;
    char **g = realloc(l->dirs, ((size_t)l->ndirs + 1) * sizeof *g);
    if (!g) return;
    l->dirs = g;
    if ((g[l->ndirs] = strdup(path))) l->ndirs++;
}

int hf_listing_add(const char *repo, hf_listing *l, const char *text, size_t len, ember_err *err)
{
    json_error_t je;
    json_t *arr = json_loadb(text, len, 0, &je);
    if (!arr) return ember_seterr(err, "%s: the Hub's file listing is not JSON (%s)", repo, len ? je.text : "empty");
    if (!json_is_array(arr)) {
        json_decref(arr);
        return ember_seterr(err, "%s: the Hub's file listing is not a JSON array", repo);
    }
    if (json_array_size(arr) > (size_t)(1 << 24) - (size_t)l->n) {
        json_decref(arr);
        return ember_seterr(err, "%s: the Hub's file listing is too long", repo);
    }
    hf_entry *g = realloc(l->e, ((size_t)l->n + json_array_size(arr) + 1) * sizeof *g);
    if (!g) {
        json_decref(arr);
        return ember_seterr(err, "out of memory");
    }
    l->e = g;
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it) {
        const char *type = json_string_value(json_object_get(it, "type"));
        const char *path = json_string_value(json_object_get(it, "path"));
        if (type && !strcmp(type, "directory") && path && hf_path_ok(path)) {
            add_dir(l, path);
            continue;
        }
        json_t *lfs = json_object_get(it, "lfs");
        if (json_is_null(lfs)) lfs = NULL;   /* a server's way of saying "not in LFS" */
        const char *oid = json_string_value(json_object_get(json_is_object(lfs) ? lfs : it, "oid"));
        json_t *size = json_object_get(json_is_object(lfs) ? lfs : it, "size");
        /* an lfs object without its size: the entry's is the content's
           too (the Hub gives both, equal) */
        if (json_is_object(lfs) && !size) size = json_object_get(it, "size");
        /* a hostile listing must not steer a write outside the cache */
        if ((lfs && !json_is_object(lfs)) || !type || strcmp(type, "file") || !path || !oid ||
            !json_is_integer(size) || !hf_path_ok(path) || !hf_hex_ok(oid, lfs ? 64 : 40) ||
            json_integer_value(size) < 0) {
            size_t pl = path ? strlen(path) : 0;
            /* said when no GGUF is left to choose (hf_pull) */
            if (pl > 5 && !strcasecmp(path + pl - 5, ".gguf")) l->unusable++;
            continue;
        }
        hf_entry *e = &l->e[l->n];
        e->path = strdup(path);
        if (!e->path) continue;
        e->size = (uint64_t)json_integer_value(size);
        e->lfs = lfs != NULL;
        snprintf(e->oid, sizeof e->oid, "%s", oid);
        l->n++;
    }
    json_decref(arr);
    return 0;
}

void hf_listing_free(hf_listing *l)
{
    for (int i = 0; i < l->n; i++) free(l->e[i].path);
    free(l->e);
    for (int i = 0; i < l->ndirs; i++) free(l->dirs[i]);
    free(l->dirs);
    memset(l, 0, sizeof *l);
}
