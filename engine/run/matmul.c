/* Matrix products on the pool (matmul.h). */
#include "config.h"

#include <stdatomic.h>

#include "matmul.h"


/* Guided self-scheduling over the 16-row tiles of all items: each claim
   takes a share of what is left (1/(2 nth)), so claims start large (few
   atomics) and end one tile long, and no thread waits at the barrier for
   more than a tile's work of the other's.  A claim stops at its item's end;
   rows are independent, so the split never changes a result. */
static void mm_run(void *ctx, int ith, int nth)
{
    (void)ith;
    ember_mm_job *j = ctx;
    for (;;) {
        int c = atomic_load_explicit(&j->next, memory_order_relaxed), g, i;
        do {
            if (c >= j->total) return;
            i = 0;
            while (c >= j->it[i].tile0 + j->it[i].tiles) i++;
            g = (j->total - c) / (2 * nth);
            if (g < 1) g = 1;
            int end = j->it[i].tile0 + j->it[i].tiles;
            if (c + g > end) g = end - c;
        } while (!atomic_compare_exchange_weak_explicit(&j->next, &c, c + g, memory_order_relaxed,
                                                        memory_order_relaxed));
        const ember_mm_item *m = &j->it[i];
        int t1 = c + g;
        int r0 = (c - m->tile0) * 16, r1 = (t1 - m->tile0) * 16;
        if (r1 > m->w->out) r1 = (int)m->w->out;
        m->v->kern->matmul(m->v->data, m->v->stride, m->w->in, r0, r1, m->xq, m->xq_stride, j->nt, m->y,
                           (size_t)m->w->out);
    }
}

typedef struct {
    ember_session *s;
    const float *x;
    int nt, k;
    int act_type;
    ember_quantize_act_fn fn;
    uint8_t *out;
    size_t stride;
} q_job;

static void q_run(void *ctx, int ith, int nth)
{
    q_job *j = ctx;
    for (int t = ith; t < j->nt; t += nth)
        j->fn(j->x + (size_t)t * j->k, j->out + (size_t)t * j->stride, j->k);
}

/* Activations for kernel k from x (nt rows of `in` floats); quantized once
   per (input, activation type) and reused by the next weight on the same input. */
const void *ember_mm_act(ember_session *s, const ember_kernel *k, int64_t in, const float *x, int nt,
                         size_t *stride)
{
    if (k->act_type == EMBER_F32) {
        *stride = (size_t)in * 4;
        return x;
    }
    int i = 0;   /* every kernel's act type has its cache (session.c) */
    while (i < EMBER_ACT_TYPES - 1 && s->act[i].type != k->act_type) i++;
    ember_act_cache *c = &s->act[i];
    *stride = ember_act_bytes(k->act_type, in);
    if (c->src != x || c->k != in || c->nt != nt) {
        q_job j = {s, x, nt, (int)in, k->act_type, k->quantize_act, c->buf, *stride};
        if (nt >= 4) ember_pool_run(s->pool, q_run, &j);
        else q_run(&j, 0, 1);
        c->src = x;
        c->k = (int)in;
        c->nt = nt;
    }
    return c->buf;
}

/* Invalidates cached activations (their source buffer was overwritten). */
void ember_mm_act_dirty(ember_session *s)
{
    for (int i = 0; i < EMBER_ACT_TYPES; i++) s->act[i].src = NULL;
}

/* Appends y = W x to a job: w through the view for the job's token
   count, on its activations xq (rows xq_stride apart). */
void ember_mm_add(ember_mm_job *j, const ember_weight *w, float *y, const void *xq, size_t xq_stride)
{
    ember_mm_item *it = &j->it[j->n_items++];
    it->w = w;
    it->v = j->nt == 1 ? &w->one : &w->many;
    it->y = y;
    it->xq = xq;
    it->xq_stride = xq_stride;
    it->tile0 = j->total;
    it->tiles = (int)((w->out + 15) / 16);
    j->total += it->tiles;
}

/* An empty job of nt tokens (mm_add writes each item whole: no memset of
   all EMBER_MM_ITEMS on every product) */
void ember_mm_start(ember_mm_job *j, int nt)
{
    j->n_items = j->total = 0;
    j->nt = nt;
}

void ember_mm_finish(ember_session *s, ember_mm_job *j)
{
    atomic_init(&j->next, 0);
    ember_pool_run(s->pool, mm_run, j);
}

void ember_mm_n(ember_session *s, const ember_weight **ws, float **ys, int n, const float *x, int nt)
{
    ember_mm_job j;
    ember_mm_start(&j, nt);
    for (int i = 0; i < n; i++) {
        size_t stride;
        const void *xq = ember_mm_act(s, (nt == 1 ? &ws[i]->one : &ws[i]->many)->kern, ws[i]->in, x, nt, &stride);
        ember_mm_add(&j, ws[i], ys[i], xq, stride);
    }
    ember_mm_finish(s, &j);
}

void ember_mm(ember_session *s, const ember_weight *w, float *y, const float *x, int nt)
{
    ember_mm_n(s, &w, &y, 1, x, nt);
}
