/* Fuzz harness for the profile loader (libyaml + schema checks).
 *
 * With libFuzzer (clang), from a configured build directory B (for
 * config.h and engine/libember.a) and the source tree S:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DEMBER_LIBFUZZER \
 *     -I$B -I$S/engine -I$S/engine/sys -I$S/engine/format -I$S/src/profile $(pkg-config --cflags yaml-0.1) \
 *     $S/tests/fuzz/profile_fuzz.c $S/src/profile/profile.c $S/src/profile/profile_yaml.c \
 *     $S/src/profile/profile_words.c $S/src/profile/profile_print.c $S/src/profile/profile_match.c \
 *     $S/src/profile/profile_path.c $B/engine/libember.a \
 *     $(pkg-config --libs yaml-0.1) -lpcre2-8 -lm -lpthread -o profile_fuzz
 *   cp -r $S/tests/fuzz/profile_corpus /tmp/pcorp    (libFuzzer writes into it)
 *   ./profile_fuzz -max_total_time=60 -max_len=2048 /tmp/pcorp
 * 90 s of this found nothing on 2026-11-29 (1.7M runs).
 *
 * Without -DEMBER_LIBFUZZER, main() runs each file (or every file of each
 * directory) named on the command line through the loader, or with no
 * arguments every file in
 * $EMBER_SRCDIR/tests/fuzz/profile_corpus, printing TAP; so gcc builds it
 * and `make check` replays the corpus under the sanitizers.
 */
#include "config.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    profile_err err;
    profile *p = profile_load_mem("fuzz.yaml", (const char *)data, size, &err);
    if (p) {
        /* exercise matching too: every rule against a fixed target */
        profile_target t;
        memset(&t, 0, sizeof t);
        strcpy(t.arch, "llama");
        strcpy(t.dtype, "Q8_0");
        strcpy(t.file_type, "Q8_0");
        strcpy(t.name, "Fuzz Model");
        strcpy(t.file, "fuzz.gguf");
        t.n_params = 1000000;
        ember_plan_opts o;
        int ri;
        profile_match(p, &t, &o, &ri, &err);
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            profile_print(p, null);
            fclose(null);
        }
        profile_free(p);
    } else if (err.code <= PROFILE_OK || err.code >= PROFILE_E_COUNT || !err.msg[0]) {
        abort();   /* every failure must carry a class and a message */
    }
    return 0;
}

#ifndef EMBER_LIBFUZZER
static int run_file(const char *path, int n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("not ok %d - %s: cannot open\n", n, path);
        return 1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) break;
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) return 1;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    printf("ok %d - %s\n", n, path);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file in dir, in name order (so TAP numbering is stable). */
static int run_dir(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    char *names[1024];
    int k = 0, bad = 0;
    struct dirent *de;
    while ((de = readdir(d)) && k < 1024)
        if (de->d_name[0] != '.') names[k++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)k, sizeof names[0], cmp_str);
    for (int i = 0; i < k; i++) {
        char path[8192];
        if (names[i]) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            bad += run_file(path, ++*n);
        }
        free(names[i]);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int n = 0, bad = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            struct stat st;
            if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) bad += run_dir(argv[i], &n) != 0;
            else bad += run_file(argv[i], ++n);
        }
        printf("1..%d\n", n);
        return bad != 0;
    }
    const char *src = getenv("EMBER_SRCDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/profile_corpus", src ? src : "..");
    bad = run_dir(dir, &n);
    if (bad < 0) {
        printf("1..0 # SKIP no corpus at %s\n", dir);
        return 0;
    }
    printf("1..%d\n", n);
    return bad != 0;
}
#endif
