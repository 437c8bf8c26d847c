/* ember models: the GGUF files in the Hugging Face cache and in
   $EMBER_MODELS, and removing a cached one. */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "ember.h"
#include "bytes.h"
#include "hf.h"
#include "hf_cache.h"
#include "json.h"
#include "model_list.h"

static void usage(FILE *out)
{
    fprintf(out,
        "Usage: ember models [list] [--json]\n"
        "       ember models rm NAME\n"
        "\n"
        "Lists the GGUF files in the Hugging Face cache (what ember pull and other\n"
        "tools downloaded) and in each directory of $EMBER_MODELS (colon-separated):\n"
        "name (USER/REPO:FILE for the cache, the file name otherwise), architecture,\n"
        "quantization, size and path, read from each file's header.\n"
        "\n"
        "  --json      one JSON array of objects instead of the table\n"
        "  rm NAME     remove a cached model: its snapshot link, and its blob when no\n"
        "              other link uses it. NAME is USER/REPO:FILE, USER/REPO:QUANT or\n"
        "              USER/REPO when the choice is unambiguous\n"
        "  -h, --help  this help\n");
}

static int list(bool json)
{
    model_rows t = {0};
    char root[PATH_MAX];
    model_list_gather(&t, root, sizeof root);
    int rc = 0;
    if (json) {
        json_w j;
        json_init(&j, stdout, true);
        json_arr_begin(&j);
        for (int i = 0; i < t.n; i++) {
            model_row *w = &t.r[i];
            json_obj_begin(&j);
            json_kv_str(&j, "name", w->name);
            json_kv_str(&j, "repo", w->repo[0] ? w->repo : NULL);
            json_kv_str(&j, "revision", w->rev[0] ? w->rev : NULL);
            json_kv_str(&j, "architecture", w->error[0] ? NULL : w->arch);
            json_kv_str(&j, "quantization", w->error[0] ? NULL : w->quant);
            json_kv_u64(&j, "size", w->size);
            json_kv_str(&j, "path", w->path);
            if (w->error[0]) json_kv_str(&j, "error", w->error);
            json_obj_end(&j);
        }
        json_arr_end(&j);
        if (json_finish(&j)) rc = 1;
    } else if (!t.n) {
        fprintf(stderr, "ember models: no GGUF files in %s%s (ember pull USER/REPO fetches one)\n",
                root[0] ? root : "the Hugging Face cache", getenv("EMBER_MODELS") ? " or $EMBER_MODELS" : "");
    } else {
        int wn = 4, wa = 4, wq = 5;
        for (int i = 0; i < t.n; i++) {
            int l = (int)strlen(t.r[i].name);
            if (l > wn) wn = l < 72 ? l : 72;
            if ((int)strlen(t.r[i].arch) > wa) wa = (int)strlen(t.r[i].arch);
            if ((int)strlen(t.r[i].quant) > wq) wq = (int)strlen(t.r[i].quant);
        }
        printf("%-*s  %-*s  %-*s  %10s  %s\n", wn, "NAME", wa, "ARCH", wq, "QUANT", "SIZE", "PATH");
        for (int i = 0; i < t.n; i++) {
            char sz[32];
            bytes_human(sz, sizeof sz, (double)t.r[i].size);
            printf("%-*s  %-*s  %-*s  %10s  %s\n", wn, t.r[i].name, wa, t.r[i].arch, wq, t.r[i].quant, sz,
                   t.r[i].path);
        }
    }
    model_rows_free(&t);
    return rc;
}

/* NAME -> the one cached file it means, or a refusal that lists the choices */
static int remove_model(const char *name)
{
    if (!strncmp(name, "hf:", 3)) name += 3;
    const char *colon = strchr(name, ':');
    char repo_s[256];
    snprintf(repo_s, sizeof repo_s, "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
    const char *rest = colon ? colon + 1 : "";
    hf_ref r;
    ember_err err = {{0}};
    if (!strchr(repo_s, '/') || hf_ref_parse(repo_s, &r, &err)) {
        model_rows t = {0};
        char root[PATH_MAX];
        model_list_gather(&t, root, sizeof root);
        bool outside = false;
        for (int i = 0; i < t.n; i++)
            if (!t.r[i].repo[0] && !strcmp(t.r[i].name, name)) outside = true;
        model_rows_free(&t);
        if (outside)
            fprintf(stderr, "ember models: %s is in $EMBER_MODELS, not in the cache: ember removes only what "
                            "is cached; delete the file yourself\n", name);
        else
            fprintf(stderr, "ember models: '%s' is not a cached model: give USER/REPO[:FILE] as ember models "
                            "lists it\n", name);
        return 1;
    }
    char root[PATH_MAX], dir[PATH_MAX];
    if (hf_cache_root(root, sizeof root, &err) || hf_cache_repo_dir(root, r.repo, dir, sizeof dir, &err)) {
        fprintf(stderr, "ember models: %s\n", err.msg);
        return 1;
    }
    hf_cached *c;
    int n = hf_cache_list(dir, NULL, &c);
    if (n <= 0) {
        fprintf(stderr, "ember models: %s is not in the cache (%s)\n", r.repo, root);
        return 1;
    }
    /* one name per file, whatever revisions hold it */
    char **names = calloc((size_t)n, sizeof *names);
    int nu = 0, k = -1;
    if (!names) fprintf(stderr, "ember models: out of memory\n");
    for (int i = 0; names && i < n; i++)
        if (!nu || strcmp(names[nu - 1], c[i].file)) names[nu++] = c[i].file;
    for (int i = 0; i < nu; i++)
        if (!strcmp(names[i], rest)) k = i;
    if (names && k < 0 && !*rest && nu == 1) k = 0;
    if (names && k < 0 && !*rest) {
        fprintf(stderr, "ember models: %s has %d cached files; name one:", r.repo, nu);
        for (int i = 0; i < nu; i++) fprintf(stderr, " %s:%s", r.repo, names[i]);
        fputc('\n', stderr);
    } else if (names && k < 0) {
        k = hf_choose(r.repo, names, nu, rest, &err);
        if (k < 0) fprintf(stderr, "ember models: %s (in the cache)\n", err.msg);
    }
    int rc = 1;
    if (k >= 0) {
        char file[PATH_MAX];
        snprintf(file, sizeof file, "%s", names[k]);
        if (hf_cache_remove(dir, file, &err)) {
            fprintf(stderr, "ember models: %s\n", err.msg);
        } else {
            printf("removed %s:%s\n", r.repo, file);
            rc = 0;
        }
    }
    free(names);
    hf_cached_free(c, n);
    return rc;
}

int cmd_models(int argc, char **argv)
{
    bool json = false;
    int i = 1;
    if (i < argc && !strcmp(argv[i], "list")) i++;
    else if (i < argc && !strcmp(argv[i], "rm")) {
        if (argc == 3 && strcmp(argv[2], "-h") && strcmp(argv[2], "--help")) return remove_model(argv[2]);
        if (argc == 3) {
            usage(stdout);
            return 0;
        }
        return cli_usage_error("ember models", "rm takes one NAME");
    }
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            return cli_usage_error("ember models", "unknown argument '%s'", argv[i]);
        }
    }
    return list(json);
}
