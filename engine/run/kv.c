/* KV cache rows: fp16 (the reference's cache, what the golden logits
   record) or Q8_0 (34 bytes per 32 values where fp16 takes 64; the row
   layout and attention over it: att_q8.h).  The q8_0 cache computes
   attention as the reference does over a quantized cache (integer block
   dot products with a q8_0 query), not the fp16 cache's float order:
   reading its rows back as fp16 for that order cost twice the fp16
   cache's time, and the halved bytes are the point of it. */
#include "config.h"

#include <string.h>

#include "att_f32.h"
#include "att_q8.h"
#include "kv.h"
#include "recurrent.h"
#include "refnum.h"
#include "session.h"

static const char *const kv_names[EMBER_KV_TYPES] = {[EMBER_KV_F16] = "f16", [EMBER_KV_Q8_0] = "q8_0"};

const char *ember_kv_type_name(int t) { return t >= 0 && t < EMBER_KV_TYPES ? kv_names[t] : NULL; }

int ember_kv_type_from_name(const char *s)
{
    for (int i = 0; s && i < EMBER_KV_TYPES; i++)
        if (!strcmp(s, kv_names[i])) return i;
    return -1;
}

size_t ember_kv_row_bytes(ember_kv_type t, int hd)
{
    return t == EMBER_KV_Q8_0 ? ember_attq8_row_bytes(hd) : (size_t)hd * 2;
}

void ember_kv_store(ember_kv_type t, void *dst, const float *src, int hd)
{
    if (t == EMBER_KV_Q8_0) ember_attq8_store(dst, src, hd);
    else ember_ref_to_f16(dst, src, hd);
}

/* 512 positions at a time, each chunk's V rows asked for into L2 first:
   the weighted sum reads them 64 rows apart (its lanes), a stride the
   prefetchers do not follow, and from memory ran at a third of the
   bandwidth (on the Zen 5 VM, one thread, 128 MiB of KV: the sum 11-15
   ms, prefetched 6.7-9.5).  Chunks of a multiple of 16 positions leave every
   score as one call gives it (each its own sum; only the tail past the
   last 16 is taken one by one, as there), and the maximum of the chunks'
   maxima is the maximum.  Rows past half of L2 (512 KiB) are not
   prefetched: they would be evicted before the sum reads them. */
#define VPF_CHUNK 512
#define VPF_MAX (512 * 1024)

/* The scores of one chunk of positions [p0, p0 + n), in either query form. */
typedef struct {
    const uint16_t *k, *qh;
    const float *qf;
    int nh, hd;
    float scale;
} vpf_args;

static void vpf_chunk(const vpf_args *a, float *sc, size_t sc_stride, int p0, int n, float *mx)
{
    const uint16_t *k = a->k + (size_t)p0 * (size_t)a->hd;
    if (a->qf) ember_attf_scores(sc + p0, sc_stride, k, (size_t)a->hd, a->qf, (size_t)a->hd, a->nh, n, a->hd, a->scale, mx);
    else ember_ref_scores_f16_heads(sc + p0, sc_stride, k, (size_t)a->hd, a->qh, (size_t)a->hd, a->nh, n, a->hd, 0,
                                    a->scale, mx);
}

static void scores_vpf(const vpf_args *a, float *sc, size_t sc_stride, const uint16_t *v, int npos, float *mx)
{
    if ((size_t)npos * (size_t)a->hd * 2 > VPF_MAX) {
        vpf_chunk(a, sc, sc_stride, 0, npos, mx);
        return;
    }
    float cmx[a->nh];
    for (int p0 = 0; p0 < npos; p0 += VPF_CHUNK) {
        const int n = npos - p0 < VPF_CHUNK ? npos - p0 : VPF_CHUNK;
        const char *vr = (const char *)(v + (size_t)p0 * (size_t)a->hd);
        for (size_t o = 0; o < (size_t)n * (size_t)a->hd * 2; o += 64) __builtin_prefetch(vr + o, 0, 2);
        vpf_chunk(a, sc, sc_stride, p0, n, p0 ? cmx : mx);
        for (int i = 0; p0 && i < a->nh; i++)
            if (cmx[i] > mx[i]) mx[i] = cmx[i];
    }
}

void ember_kv_f16_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const uint16_t *q,
                             int nh, int npos, int hd, float scale, float *mx)
{
    scores_vpf(&(vpf_args){k, q, NULL, nh, hd, scale}, sc, sc_stride, v, npos, mx);
}

void ember_kv_attf_scores_vpf(float *sc, size_t sc_stride, const uint16_t *k, const uint16_t *v, const float *q,
                              int nh, int npos, int hd, float scale, float *mx)
{
    scores_vpf(&(vpf_args){k, NULL, q, nh, hd, scale}, sc, sc_stride, v, npos, mx);
}

int ember_kv_ring(const ember_model *m, int n_ctx, int ubatch)
{
    /* sliding layers in a ring where it is smaller than the context */
    return m->n_swa && 2 * ((size_t)m->n_swa + (size_t)ubatch) < (size_t)n_ctx ? m->n_swa + ubatch : 0;
}

int ember_kv_cap(const ember_model *m, int l, int ring, int n_ctx)
{
    const ember_layer *L = &m->layers[l];
    /* a layer that shares another's KV keeps none, nor a recurrent layer or
       an FFN alone (Nemotron-H) */
    return L->kv_src != l || L->dn || L->sc || (L->m2 && !L->wo.t) || !L->n_head_kv ? 0 : L->swa && ring ? 2 * ring : n_ctx;
}

int ember_ubatch(int requested)
{
    return requested >= 2 && requested < EMBER_UBATCH ? requested : EMBER_UBATCH;
}

size_t ember_kv_cache_bytes(const ember_model *m, int n_ctx, int kv_type, int ubatch)
{
    const int train = m->info.n_ctx_train;
    if (n_ctx <= 0) n_ctx = train < 4096 ? train : 4096;   /* as ember_session_new */
    if (n_ctx > train) n_ctx = train;
    const int ring = ember_kv_ring(m, n_ctx, ember_ubatch(ubatch));
    size_t n = 0;
    for (int l = 0; l < m->info.n_layer; l++) {
        const ember_layer *L = &m->layers[l];
        /* a latent attention layer's row is its K and its V (mla.c) */
        n += (L->mla ? 1 : 2) * (size_t)L->n_head_kv * (size_t)ember_kv_cap(m, l, ring, n_ctx) *
             ember_kv_row_bytes((ember_kv_type)kv_type, L->head_dim);
    }
    return n + ember_rec_session_bytes(m);
}
