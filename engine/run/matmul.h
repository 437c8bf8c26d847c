/* Matrix products on the session's pool: one job runs a list of products
   (several weights on one input, or an MoE token's experts) over their
   16-row tiles, on activations quantized once per input and kernel type. */
#ifndef EMBER_MATMUL_H
#define EMBER_MATMUL_H

#include <stdatomic.h>

#include "session.h"

typedef struct {
    const ember_weight *w;
    const ember_wview *v;        /* w's kernel, data and stride for this product (model.h) */
    const void *xq;
    size_t xq_stride;
    float *y;
    int tile0, tiles;            /* this item's 16-row tiles in the job's sequence */
} ember_mm_item;

/* the most products one job runs: three sharing an input (Q, K, V), or
   an MoE token's gate and up products of up to 16 experts */
#define EMBER_MM_ITEMS 32

typedef struct {
    ember_mm_item it[EMBER_MM_ITEMS];
    int n_items, nt, total;
    atomic_int next;             /* next unclaimed tile */
} ember_mm_job;

/* An empty job of nt tokens */
void ember_mm_start(ember_mm_job *j, int nt);
/* Appends y = W x: w through the view for the job's token count, on its
   activations xq (rows xq_stride apart, from ember_mm_act) */
void ember_mm_add(ember_mm_job *j, const ember_weight *w, float *y, const void *xq, size_t xq_stride);
/* Runs the job's products on the pool */
void ember_mm_finish(ember_session *s, ember_mm_job *j);

/* x (nt rows of `in` floats) as kernel k's activations, rows *stride
   apart: quantized once per (input, activation type) and reused by the
   next weight on the same input until ember_mm_act_dirty. */
const void *ember_mm_act(ember_session *s, const ember_kernel *k, int64_t in, const float *x, int nt,
                         size_t *stride);
/* The quantized activations cached for the next product are stale: a
   buffer a product reads was rewritten in place. */
void ember_mm_act_dirty(ember_session *s);

/* y = W x for nt rows of x (w->in wide) into nt rows of y (w->out wide) */
void ember_mm(ember_session *s, const ember_weight *w, float *y, const float *x, int nt);
/* n products on the same input x, run as one job (its quantized rows made once) */
void ember_mm_n(ember_session *s, const ember_weight **ws, float **ys, int n, const float *x, int nt);

#endif
