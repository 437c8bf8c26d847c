/* Reading the golden fixtures (../shared/fixtures/golden): prompt and
   forced ids as whitespace-separated integers, logits as raw f32 rows. */
#ifndef EMBER_TESTS_GOLDEN_IO_H
#define EMBER_TESTS_GOLDEN_IO_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Up to 4096 ids; NULL when the file cannot be read. */
static inline int32_t *read_ids(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    int32_t *v = malloc(4096 * sizeof *v);
    int k = 0, x;
    while (v && k < 4096 && fscanf(f, "%d", &x) == 1) v[k++] = x;
    fclose(f);
    *n = k;
    return v;
}

/* The whole file as floats (*n of them); NULL when unreadable or empty. */
static inline float *read_f32(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    float *v = sz > 0 ? malloc((size_t)sz) : NULL;
    if (v && fread(v, 1, (size_t)sz, f) != (size_t)sz) {
        free(v);
        v = NULL;
    }
    fclose(f);
    *n = sz > 0 ? (size_t)sz / 4 : 0;
    return v;
}

#endif
