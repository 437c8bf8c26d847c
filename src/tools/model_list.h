/* The GGUF files a person has: the Hugging Face cache (hf_cache.h) and the
   directories of $EMBER_MODELS, with each file's architecture and
   quantization from its header.  Used by `ember models` and the chat's
   /model (its names and their completion). */
#ifndef EMBER_MODEL_LIST_H
#define EMBER_MODEL_LIST_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

typedef struct model_row {
    char name[PATH_MAX];
    char path[PATH_MAX];
    char repo[200];          /* "" outside the cache */
    char rev[64];
    char arch[32], quant[16];
    char error[sizeof(ember_err)];
    uint64_t size;
} model_row;

typedef struct model_rows {
    model_row *r;
    int n, cap;
} model_rows;

/* Fills t (sorted by name); root receives the cache's root ("" without
   one).  Always 0: what cannot be read is left out or carries its error. */
int model_list_gather(model_rows *t, char *root, size_t cap);
void model_rows_free(model_rows *t);
/* The row NAME means: a row's exact name, else the one file of a cached
   USER/REPO[:QUANT] or a file name; NULL when none or (*ambiguous set)
   several. */
const model_row *model_list_find(const model_rows *t, const char *name, int *ambiguous);

#endif
