/* Tensor binding with shape checks: a named tensor of the file as a
   matrix (ember_weight), a vector or rows of f32, or a 3-D tensor's slabs;
   every layer kind's binder (model.c, moe.c, mla.c, deltanet.c,
   shortconv.c) goes through these, so a file's shapes are checked in one
   place and every tensor read is marked used. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "bind.h"
#include "dtype.h"

void ember_bind_mark_used(ember_model *m, const gguf_tensor *t)
{
    if (m->used && t) m->used[t - m->f->tensors] = 1;
}

const gguf_tensor *ember_bind_tensor(ember_model *m, const char *name, int64_t ne0, int64_t ne1,
                                     bool required, ember_err *err, int *rc)
{
    const gguf_tensor *t = gguf_find_tensor(m->f, name);
    if (!t) {
        if (required) *rc = ember_seterr(err, "tensor '%s' is missing", name);
        return NULL;
    }
    ember_bind_mark_used(m, t);
    bool ok = ne1 ? (t->n_dims == 2 && t->ne[0] == ne0 && t->ne[1] == ne1)
                  : (t->n_dims == 1 && t->ne[0] == ne0);
    if (!ok) {
        *rc = ember_seterr(err, "tensor '%s' has shape [%lld, %lld] (%u dims), expected [%lld%s%lld]",
                           name, (long long)t->ne[0], (long long)t->ne[1], t->n_dims, (long long)ne0,
                           ne1 ? ", " : "", (long long)ne1);
        return NULL;
    }
    return t;
}

/* A tensor's values as one f32 array: a vector of ne0 (ne1 0), or a
   [ne0, ne1] matrix row by row (an MoE's per-expert biases, expert e's
   ne0 values at e * ne0). */
float *ember_load_f32(ember_model *m, const char *name, int64_t ne0, int64_t ne1, bool required, ember_err *err,
                      int *rc)
{
    const gguf_tensor *t = ember_bind_tensor(m, name, ne0, ne1, required, err, rc);
    if (!t) return NULL;
    const int64_t rows = ne1 ? ne1 : 1;
    float *v = malloc((size_t)(ne0 * rows) * sizeof *v);
    if (!v) {
        *rc = ember_seterr(err, "out of memory");
        return NULL;
    }
    for (int64_t r = 0; r < rows; r++)
        if (ember_dequantize_row(t->type, t->data + (size_t)r * ember_row_bytes(t->type, ne0), v + r * ne0, ne0)) {
            *rc = ember_seterr(err, "tensor '%s': cannot read dtype %s", name, ember_dtype_name(t->type));
            free(v);
            return NULL;
        }
    return v;
}

float *ember_load_vec(ember_model *m, const char *name, int64_t n, bool required, ember_err *err, int *rc)
{
    return ember_load_f32(m, name, n, 0, required, err, rc);
}

float *ember_load_taps(ember_model *m, const char *name, int64_t K, int64_t C, ember_err *err, int *rc)
{
    float *taps = ember_load_f32(m, name, K, C, true, err, rc);
    if (!taps) return NULL;
    float *tm = malloc((size_t)K * (size_t)C * sizeof *tm);
    if (!tm) *rc = ember_seterr(err, "out of memory");
    for (int64_t c = 0; c < C && tm; c++)
        for (int64_t i = 0; i < K; i++) tm[i * C + c] = taps[c * K + i];
    free(taps);
    return tm;
}

void ember_bind_weight(ember_model *m, ember_weight *w, const char *name, int64_t in, int64_t out,
                       int proj, ember_err *err, int *rc)
{
    memset(w, 0, sizeof *w);
    w->t = ember_bind_tensor(m, name, in, out, true, err, rc);
    if (!w->t) return;
    w->dtype = w->t->type;
    w->in = in;
    w->out = out;
    w->data = w->t->data;
    w->row_bytes = ember_row_bytes(w->dtype, in);
    w->proj = proj;
}

/* The n slabs of one 3-D tensor [in, rows, n] as n matrices of rows x
   in, each a view of its slab of the file's rows (not yet planned). */
int ember_bind_slabs(ember_model *m, ember_weight **out, const char *name, int64_t in, int64_t rows, int n,
                     int proj, ember_err *err)
{
    const gguf_tensor *t = gguf_find_tensor(m->f, name);
    if (!t) return ember_seterr(err, "tensor '%s' is missing", name);
    ember_bind_mark_used(m, t);
    if (t->n_dims != 3 || t->ne[0] != in || t->ne[1] != rows || t->ne[2] != n)
        return ember_seterr(err, "tensor '%s' has shape [%lld, %lld, %lld] (%u dims), expected [%lld, %lld, %d]", name,
                            (long long)t->ne[0], (long long)t->ne[1], (long long)t->ne[2], t->n_dims, (long long)in,
                            (long long)rows, n);
    ember_weight *ws = calloc((size_t)n, sizeof *ws);
    if (!ws) return ember_seterr(err, "out of memory");
    *out = ws;
    const size_t rb = ember_row_bytes(t->type, in);
    for (int e = 0; e < n; e++)
        ws[e] = (ember_weight){.t = t, .dtype = t->type, .in = in, .out = rows,
                               .data = t->data + (size_t)e * (size_t)rows * rb, .row_bytes = rb, .proj = proj};
    return 0;
}
