/* A model's hyper-parameters from its GGUF metadata: the readers of the
   architecture's keys (each range-checked, with a message naming the key)
   and the whole set read at once for ember_model_open and ember_model_peek. */
#ifndef EMBER_HPARAMS_H
#define EMBER_HPARAMS_H

#include "model.h"

/* the keys of one architecture ("ARCH.suffix") in one file */
typedef struct {
    const gguf_file *f;
    const char *arch;
    ember_err *err;
    int blocks;                 /* the file's block_count where per-layer arrays cover more layers than run (0: n_layer) */
} ember_meta;

/* an integer key in [lo, hi]: required, or dflt where absent */
int ember_meta_req_u(ember_meta *m, const char *suffix, int64_t lo, int64_t hi, int *out);
int ember_meta_opt_u(ember_meta *m, const char *suffix, int64_t lo, int64_t hi, int *out, int dflt);
/* a positive number, dflt where absent unless required */
int ember_meta_opt_f(ember_meta *m, const char *suffix, float *out, float dflt, bool required);
/* layer l's value of a key that holds one number for every layer, or an
   array of one per layer (gemma4's head_count_kv, feed_forward_length) */
int ember_meta_layer_u(ember_meta *m, const char *suffix, int l, int n_layer, int64_t lo, int64_t hi, int *out,
                       int dflt, bool required);

/* info (and, where m is given, the model's own fields) from f's metadata */
int ember_read_hparams(const gguf_file *f, ember_model_info *info, ember_model *m, ember_err *err);

#endif
