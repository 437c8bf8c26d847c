/* Tensor binding with shape checks (bind.c): what every layer kind's
   binder uses to take its tensors from the file. */
#ifndef EMBER_BIND_H
#define EMBER_BIND_H

#include "model.h"

/* t (NULL: none) counts as read by the graph, for load's note of the
   tensors no graph reads (model.c) */
void ember_bind_mark_used(ember_model *m, const gguf_tensor *t);

/* The named tensor, checked to be a vector of ne0 (ne1 0) or a matrix
   [ne0, ne1], and marked used; NULL when missing (*rc set only when
   required) or of another shape (*rc set). */
const gguf_tensor *ember_bind_tensor(ember_model *m, const char *name, int64_t ne0, int64_t ne1, bool required,
                                     ember_err *err, int *rc);

/* A tensor's values as one f32 array: a vector of ne0 (ne1 0), or a
   [ne0, ne1] matrix row by row (row r's ne0 values at r * ne0). */
float *ember_load_f32(ember_model *m, const char *name, int64_t ne0, int64_t ne1, bool required, ember_err *err,
                      int *rc);
float *ember_load_vec(ember_model *m, const char *name, int64_t n, bool required, ember_err *err, int *rc);

/* A depthwise convolution's taps, stored as C rows of K (a channel's taps
   in order), turned tap-major, K rows of C: a tap then runs along a
   token's row of channels, as the convolutions read it
   (kernels/conv1d.h, the delta-net's). Required. */
float *ember_load_taps(ember_model *m, const char *name, int64_t K, int64_t C, ember_err *err, int *rc);

/* w as the file's matrix name of out rows x in (not yet planned); proj:
   the EMBER_PROJ_* bits a profile names it by. */
void ember_bind_weight(ember_model *m, ember_weight *w, const char *name, int64_t in, int64_t out, int proj,
                       ember_err *err, int *rc);

/* The n slabs of one 3-D tensor [in, rows, n] as n matrices (*out, an
   array of n), each a view of its slab (not yet planned). */
int ember_bind_slabs(ember_model *m, ember_weight **out, const char *name, int64_t in, int64_t rows, int n, int proj,
                     ember_err *err);

#endif
