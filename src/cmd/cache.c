/* ember cache: the pack cache's files (engine/run/packcache.c), listed and
   cleared.  The files are made by loading a model with the packed
   strategy; nothing here writes one. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ember.h"
#include "bytes.h"
#include "json.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember cache [list] [--json]\n"
        "       ember cache clear\n"
        "\n"
        "The pack cache: the packed strategy writes a model's packed tiles to a file\n"
        "in $XDG_CACHE_HOME/ember/packed (else ~/.cache/ember/packed) and later loads\n"
        "map that file instead of packing again (profile key pack_cache, --pack-cache).\n"
        "A file is kept per model file and set of packed tensors; it is ignored and\n"
        "rewritten when the model or the packed layout changes.\n"
        "\n"
        "  list        the files: model each was made from, size, date, tensor count,\n"
        "              layout (\"invalid\" for one no load would use)\n"
        "  --json      list as one JSON array of objects\n"
        "  clear       remove every pack cache file; prints the bytes freed\n"
        "  -h, --help  this help\n");
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const ember_pack_cache_file *)a)->path, ((const ember_pack_cache_file *)b)->path);
}

static int list(bool json)
{
    ember_pack_cache_file *f;
    int n;
    ember_err err;
    if (ember_pack_cache_list(&f, &n, &err)) {
        fprintf(stderr, "ember cache: %s\n", err.msg);
        return 1;
    }
    if (n) qsort(f, (size_t)n, sizeof *f, by_path);
    int rc = 0;
    if (json) {
        json_w j;
        json_init(&j, stdout, true);
        json_arr_begin(&j);
        for (int i = 0; i < n; i++) {
            json_obj_begin(&j);
            json_kv_str(&j, "file", f[i].path);
            json_kv_bool(&j, "valid", f[i].valid);
            json_kv_str(&j, "model", f[i].valid ? f[i].model : NULL);
            json_kv_u64(&j, "size", f[i].bytes);
            json_kv_i64(&j, "created", f[i].created);
            json_kv_i64(&j, "tensors", f[i].n_tensors);
            json_kv_str(&j, "layout", f[i].valid ? f[i].layout : NULL);
            json_kv_i64(&j, "layout_version", f[i].layout_version);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        if (json_finish(&j)) rc = 1;
    } else if (!n) {
        char dir[PATH_MAX];
        fprintf(stderr, "ember cache: no pack cache files in %s\n",
                ember_pack_cache_dir(dir, sizeof dir) ? "the cache (no XDG_CACHE_HOME or HOME)" : dir);
    } else {
        printf("%-10s  %-16s  %7s  %-12s  %s\n", "SIZE", "DATE", "TENSORS", "LAYOUT", "MODEL / FILE");
        for (int i = 0; i < n; i++) {
            char sz[32], date[32] = "?", lay[64];
            bytes_human(sz, sizeof sz, (double)f[i].bytes);
            time_t t = (time_t)f[i].created;
            struct tm tm;
            if (localtime_r(&t, &tm)) strftime(date, sizeof date, "%Y-%m-%d %H:%M", &tm);
            if (f[i].valid) snprintf(lay, sizeof lay, "%s v%d", f[i].layout, f[i].layout_version);
            else snprintf(lay, sizeof lay, "invalid");
            char model[1024];
            ember_text_clean(model, sizeof model, f[i].model, strlen(f[i].model), 0);
            printf("%-10s  %-16s  %7d  %-12s  %s\n%44s%s\n", sz, date, f[i].n_tensors, lay,
                   f[i].valid ? model : "-", "", f[i].path);
        }
    }
    free(f);
    return rc;
}

static int clear(void)
{
    uint64_t bytes;
    int files;
    ember_err err;
    int rc = ember_pack_cache_clear(&bytes, &files, &err);
    char sz[32];
    bytes_human(sz, sizeof sz, (double)bytes);
    printf("removed %d pack cache file%s, %s freed\n", files, files == 1 ? "" : "s", sz);
    if (rc) fprintf(stderr, "ember cache: %s\n", err.msg);
    return rc ? 1 : 0;
}

int cmd_cache(int argc, char **argv)
{
    bool json = false, do_clear = false;
    int i = 1;
    if (i < argc && !strcmp(argv[i], "list")) i++;
    else if (i < argc && !strcmp(argv[i], "clear")) i++, do_clear = true;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json") && !do_clear) {
            json = true;
        } else {
            return cli_usage_error("ember cache", "unknown argument '%s'", argv[i]);
        }
    }
    return do_clear ? clear() : list(json);
}
