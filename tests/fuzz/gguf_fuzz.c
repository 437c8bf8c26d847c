/* Fuzz target for the GGUF reader (gguf_open_mem).
 *
 * With clang's libFuzzer (-fsanitize=fuzzer -DEMBER_LIBFUZZER) this file is
 * only the target; built by gcc (make check builds it) it has a main() that
 * runs the files or directories given on the command line, or writes the
 * seed corpus with --make-corpus DIR.  See tests/fuzz/README.md. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gguf.h"
#include "gguf_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ember_err err;
    gguf_file *f = gguf_open_mem(data, size, &err);
    if (f) {
        /* follow every pointer the parse produced: an escape is a bug */
        volatile uint64_t sink = sample_touch(f);
        (void)sink;
        gguf_close(f);
    }
    return 0;
}

#ifndef EMBER_LIBFUZZER

static int write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "gguf_fuzz: %s: %s\n", path, strerror(errno));
        if (f) fclose(f);
        return -1;
    }
    return 0;
}

/* Seeds: valid images exercising every metadata type and a few dtypes,
   with and without general.alignment, metadata-only, GGUF v2. */
static int make_corpus(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "gguf_fuzz: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    int rc = 0;
    size_t n;
    uint8_t *img = sample_image(0, &n);
    if (!img) return 1;
    rc |= write_file(dir, "sample.gguf", img, n);
    sample_layout L;
    sample_walk(img, n, &L);
    /* the same bytes declared as version 2 */
    sample_wr(img + 4, 2, 4);
    rc |= write_file(dir, "sample-v2.gguf", img, n);
    /* metadata only: tensor count 0, cut after the keys */
    sample_wr(img + 4, 3, 4);
    sample_wr(img + L.n_tensors, 0, 8);
    rc |= write_file(dir, "metadata-only.gguf", img, L.t[0].name_len);
    free(img);
    img = sample_image(64, &n);
    if (!img) return 1;
    rc |= write_file(dir, "sample-align64.gguf", img, n);
    free(img);

    gguf_writer *w = gguf_writer_new();
    static const char *const toks[] = {"a", "b", "ab", "<s>"};
    static const int32_t types[] = {1, 1, 1, 3};
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, 4);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, 4);
    static const char *const merges[] = {"a b"};
    gguf_w_arr_str(w, "tokenizer.ggml.merges", merges, 1);
    uint8_t *v = NULL;
    ember_err err;
    if (gguf_writer_to_mem(w, &v, &n, &err) == 0) rc |= write_file(dir, "vocab.gguf", v, n);
    else rc = 1;
    free(v);
    gguf_writer_free(w);
    return rc ? 1 : 0;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "gguf_fuzz: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) break;
    }
    fclose(f);
    /* an exactly-sized copy, so a sanitizer sees a one-byte overread */
    uint8_t *exact = malloc(n ? n : 1);
    if (exact) {
        memcpy(exact, buf, n);
        LLVMFuzzerTestOneInput(exact, n);
    }
    free(exact);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--make-corpus")) return make_corpus(argv[2]);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(argc < 2 ? stderr : stdout,
                "Usage: gguf_fuzz FILE|DIR...        parse each input (a crash is a bug)\n"
                "       gguf_fuzz --make-corpus DIR  write the seed corpus\n");
        return argc < 2 ? 2 : 0;
    }
    int runs = 0, errors = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            for (struct dirent *e; d && (e = readdir(d));) {
                if (e->d_name[0] == '.') continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
                if (run_file(path)) errors++;
                else runs++;
            }
            if (d) closedir(d);
        } else if (run_file(argv[i])) {
            errors++;
        } else {
            runs++;
        }
    }
    printf("gguf_fuzz: ran %d inputs, %d unreadable\n", runs, errors);
    return errors ? 1 : 0;
}

#endif
