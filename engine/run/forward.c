/* The transformer forward pass over one preallocated workspace.  Matrix
   products go through the per-weight kernels on the persistent pool; the
   numerics follow the reference (doc/DESIGN.md, "Numerics contract"):
   activations quantized once per input and shared by Q/K/V and gate/up,
   fp16 KV cache, q and softmax weights rounded to fp16 as the reference's
   f16 products do. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "altup.h"
#include "att_f32.h"
#include "att_q8.h"
#include "deltanet.h"
#include "dtype.h"
#include "forward.h"
#include "matmul.h"
#include "mla.h"
#include "shortconv.h"
#include "mamba2.h"
#include "moe.h"
#include "perlayer.h"
#include "kv.h"
#include "refnum.h"
#include "session.h"
#include "simd.h"

/* ---- element-wise pieces ------------------------------------------------- */

/* out = x / rms * wt from the row's sum of squares ss (wt NULL: no
   weight, gemma4's V norm) */
static void rmsnorm_scale(float *out, const float *x, const float *wt, int n, double ss, float eps)
{
    float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    if (!wt)
        for (int i = 0; i < n; i++) out[i] = x[i] * scale;
    else
        for (int i = 0; i < n; i++) out[i] = x[i] * scale * wt[i];
}

static void rmsnorm(float *out, const float *x, const float *wt, int n, float eps)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)(x[i] * x[i]);  /* f32 product, f64 sum: as the reference */
    rmsnorm_scale(out, x, wt, n, ss, eps);
}

/* LayerNorm (ARCH_LAYERNORM), as the reference's norm then the weight, then
   the bias where the file has one: the mean of the f64 sum rounded to f32,
   the deviations' f32 squares summed in f64, their mean rounded, then
   1 / sqrt(var + eps). */
static void layernorm(float *out, const float *x, const float *wt, const float *b, int n, float eps)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += (double)x[i];
    const float mean = (float)(sum / n);
    double ss = 0;
    for (int i = 0; i < n; i++) {
        float v = x[i] - mean;
        out[i] = v;
        ss += (double)(v * v);
    }
    const float scale = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++) out[i] = wt ? out[i] * scale * wt[i] : out[i] * scale;
    if (b)
        for (int i = 0; i < n; i++) out[i] += b[i];
}

/* The model's input and output norm of one row of n (the bias: LayerNorm's). */
static void norm_row(const ember_model *m, float *out, const float *x, const float *wt, const float *b, int n)
{
    if (m->arch->flags & ARCH_LAYERNORM) layernorm(out, x, wt, b, n, m->rms_eps);
    else rmsnorm(out, x, wt, n, m->rms_eps);
}

/* The rotation of position pos in the reference's order: theta = (pos *
   scale^i / ff[i]) * freq_scale, cos and sin times mscale (a factor of 1
   changes no bit); under YaRN the angle is blended with the unscaled one,
   ramp 1 below pair corr_lo and 0 above corr_hi, and mscale grows by
   1 + 0.1 ln(1 / freq_scale). */
static void rope_row(const ember_rope_cfg *rc, int pos, float *cs, float *sn)
{
    const int nr = rc->n_rot;
    float theta_scale = powf(rc->base, -2.0f / (float)nr);
    float theta = (float)pos;
    float ms = rc->mscale;
    if (rc->ext_factor != 0) ms *= 1.0f + 0.1f * logf(1.0f / rc->freq_scale);
    for (int i = 0; i < nr / 2; i++) {
        float te = rc->ff ? theta / rc->ff[i] : theta;
        float t = te * rc->freq_scale;
        if (rc->ext_factor != 0) {
            float y = ((float)i - rc->corr_lo) / fmaxf(0.001f, rc->corr_hi - rc->corr_lo);
            float mix = (1 - fminf(1, fmaxf(0, y))) * rc->ext_factor;
            t = t * (1 - mix) + te * mix;
        }
        cs[i] = cosf(t) * ms;
        sn[i] = sinf(t) * ms;
        theta *= theta_scale;
    }
}

typedef struct {
    ember_session *s;
    int layer, nt, pos0;
} att_job;

/* KV head h's rows (kv_cap[l] of head_dim, as kv_type rows) in layer l
   of a cache laid out [layer][kv head][row] (session.h). */
static uint8_t *kv_rows(const ember_session *s, uint8_t *cache, int l, int h)
{
    l = s->m->layers[l].kv_src;   /* a shared-KV layer reads its source's rows */
    return cache + s->kv_off[l] +
           (size_t)h * (size_t)s->kv_cap[l] * ember_kv_row_bytes(s->kv_type, s->m->layers[l].head_dim);
}

/* Layer l's V rows of KV head h: the V cache's, or the K rows themselves
   where there is none (latent attention: the cached row is K and V). */
static uint8_t *v_rows(const ember_session *s, int l, int h)
{
    return kv_rows(s, s->vcache ? s->vcache : s->kcache, l, h);
}

/* The row of position pos: the position itself, or its slot in a sliding
   layer's ring (session.h; the slot's twin at slot + ring holds the same). */
static size_t kv_row(const ember_session *s, int l, int pos)
{
    return s->ring && s->m->layers[l].swa ? (size_t)(pos % s->ring) : (size_t)pos;
}

/* Stores position pos's K and V rows (head h) in the cache's row format. */
void ember_fw_kv_write(ember_session *s, int l, int h, int pos, const float *k, const float *v)
{
    const int hd = s->m->layers[l].head_dim;
    const size_t rb = ember_kv_row_bytes(s->kv_type, hd);
    size_t at = kv_row(s, l, pos) * rb;
    ember_kv_store(s->kv_type, kv_rows(s, s->kcache, l, h) + at, k, hd);
    if (s->vcache) ember_kv_store(s->kv_type, kv_rows(s, s->vcache, l, h) + at, v, hd);
    if (s->ring && s->m->layers[l].swa) {
        at += (size_t)s->ring * rb;
        ember_kv_store(s->kv_type, kv_rows(s, s->kcache, l, h) + at, k, hd);
        if (s->vcache) ember_kv_store(s->kv_type, kv_rows(s, s->vcache, l, h) + at, v, hd);
    }
}

/* Attention in the reference's float order (refnum.h): its batched prompt
   pass and its single-token step sum in different lane orders, and the
   single-token weighted sum depends on the KV length it pads to 32. */
typedef struct {
    ember_session *s;
    const ember_layer *L;
    int hd, nh, group;
    float scale;
    float softcap;              /* gemma2's score cap (0: none) */
    size_t scs;                 /* one head's scores (padded for softmax) */
    bool kq_gemm, kqv_gemm, q8;
    bool f32q;                  /* the flash-attention reference's numerics (att_f32.h) */
    int ctx_pad;
    float *sc, *acc;            /* this thread's scratch */
    uint16_t *qh;               /* the queries as fp16, or q8_0 (qb bytes a head), or f32 (f32q) */
    size_t qb;
} att_ctx;

/* The first position token t's query sees: a sliding layer sees the keys
   at pos_q - pos_k < window. */
static int att_first(const att_job *j, const ember_layer *L, int t)
{
    const int pos = j->pos0 + t;
    return L->swa && pos >= L->swa ? pos - L->swa + 1 : 0;
}

/* Query head i of the run at q (hd floats) in the form the scores take:
   fp16 (the reference's f16 product), q8_0 (att_q8.h) or f32 (att_f32.h). */
static void att_query(const att_ctx *c, int i, const float *q)
{
    if (c->f32q) memcpy((float *)c->qh + (size_t)i * c->hd, q, (size_t)c->hd * sizeof *q);
    else if (c->q8) ember_attq8_query((uint8_t *)c->qh + (size_t)i * c->qb, q, c->hd);
    else ember_ref_to_f16(c->qh + (size_t)i * c->hd, q, c->hd);
}

/* Softmax of token t's ng heads (scores at sc, scs apart, maxima mx) and
   their weighted sum of the V rows Vr into att. */
static void att_finish(const att_ctx *c, const att_job *j, int t, int h0, int ng, float *sc, const float *mx,
                       const uint8_t *Vr, int npos)
{
    for (int i = 0; i < ng; i++) {
        float *si = sc + i * c->scs;
        /* the reference's graph caps the scores (scale by 1 / cap, tanh,
           scale by cap) before the softmax, whose max is then taken again */
        float m = c->softcap > 0 ? ember_ref_softcap_max(si, (size_t)npos, c->softcap) : mx[i];
        /* a sink (gpt-oss) joins the max and the sum as one more score
           with no value row, as the reference's softmax takes it */
        const float *sk = c->L->sinks;
        if (sk && sk[h0 + i] > m) m = sk[h0 + i];
        double sum = ember_ref_softmax_exp(si, si, m, npos);
        if (sk) sum += (double)expf(sk[h0 + i] - m);
        if (c->f32q) {   /* the weights stay f32 */
            const float inv = (float)(1.0 / sum);
            for (int p = 0; p < npos; p++) si[p] *= inv;
        } else
            ember_ref_scale_f16r(si, (float)(1.0 / sum), npos);
    }
    int n_kv = (npos + 31) / 32 * 32;
    if (n_kv > c->ctx_pad) n_kv = c->ctx_pad;
    float *o = c->s->att + (size_t)t * c->nh * c->hd + (size_t)h0 * c->hd;
    if (c->f32q) ember_attf_wsum(o, (size_t)c->hd, sc, c->scs, ng, (const uint16_t *)Vr, (size_t)c->hd, npos, c->hd);
    else if (c->q8) ember_attq8_wsum(o, (size_t)c->hd, sc, c->scs, ng, Vr, npos, c->hd);
    else ember_ref_wsum_f16_heads(o, (size_t)c->hd, sc, c->scs, ng, (const uint16_t *)Vr, (size_t)c->hd, npos, c->hd,
                                  n_kv, c->kqv_gemm, c->acc);
}

/* One token's q heads [h0, h0 + ng) of KV head kvh: they share its K and
   V rows, read once for the run. */
static void att_token(const att_ctx *c, const att_job *j, int t, int kvh, int h0, int ng)
{
    ember_session *s = c->s;
    const int hd = c->hd, first = att_first(j, c->L, t), npos = j->pos0 + t - first + 1;
    size_t r0 = kv_row(s, j->layer, first) * ember_kv_row_bytes(s->kv_type, hd);
    const uint8_t *Kr = kv_rows(s, s->kcache, j->layer, kvh) + r0, *Vr = v_rows(s, j->layer, kvh) + r0;
    float mx[ng];
    /* the run's f32 queries are side by side in s->q already */
    const float *qf = s->q + ((size_t)t * c->nh + (size_t)h0) * hd;
    for (int i = 0; !c->f32q && i < ng; i++) att_query(c, i, qf + (size_t)i * hd);
    if (c->f32q && s->batched)
        ember_attf_scores(c->sc, c->scs, (const uint16_t *)Kr, (size_t)hd, qf, (size_t)hd, ng, npos, hd, c->scale, mx);
    else if (c->f32q)
        ember_kv_attf_scores_vpf(c->sc, c->scs, (const uint16_t *)Kr, (const uint16_t *)Vr, qf, ng, npos, hd, c->scale,
                                 mx);
    else if (c->q8) ember_attq8_scores(c->sc, c->scs, Kr, (const uint8_t *)c->qh, c->qb, ng, npos, hd, c->scale, mx);
    else if (s->batched) ember_ref_scores_f16_heads(c->sc, c->scs, (const uint16_t *)Kr, (size_t)hd, c->qh, (size_t)hd,
                                                    ng, npos, hd, c->kq_gemm, c->scale, mx);
    else ember_kv_f16_scores_vpf(c->sc, c->scs, (const uint16_t *)Kr, (const uint16_t *)Vr, c->qh, ng, npos, hd, c->scale, mx);
    att_finish(c, j, t, h0, ng, c->sc, mx, Vr, npos);
}

/* A block of prompt tokens [t0, t0 + tb), all q heads of KV head kvh:
   their scores are taken in one pass over the K rows from the first
   token's first position to the last token's own, a chunk of rows (~16
   KiB, in L1) against every query of the block, so a 4096-token prompt
   reads the keys once per block instead of once per token.  Each score is
   the same dot product a token's own call forms; rows outside a token's
   range (past its position, or before its window on a sliding layer) are
   computed and left out of its max, softmax and sum, and its maximum is
   the exact maximum over its own rows (chunk maxima where a chunk lies
   inside every token's range).  On a sliding layer the rows run from
   window + tb - 1 positions back, contiguous in the ring (session.h). */
static void att_tokens(const att_ctx *c, const att_job *j, int t0, int tb, int kvh)
{
    ember_session *s = c->s;
    const int hd = c->hd, g = c->group, nq = tb * g, h0 = kvh * g;
    /* rows relative to base, token 0's first: token i sees [lo[i], hi[i]) */
    const int base = att_first(j, c->L, t0);
    int lo[tb], hi[tb];
    for (int i = 0; i < tb; i++) {
        lo[i] = att_first(j, c->L, t0 + i) - base;
        hi[i] = j->pos0 + t0 + i + 1 - base;
    }
    const size_t rb = ember_kv_row_bytes(s->kv_type, hd), r0 = kv_row(s, j->layer, base) * rb;
    const uint8_t *K = kv_rows(s, s->kcache, j->layer, kvh) + r0, *Vr = v_rows(s, j->layer, kvh) + r0;
    for (int i = 0; i < tb; i++)
        for (int h = 0; h < g; h++) att_query(c, i * g + h, s->q + ((size_t)(t0 + i) * c->nh + (size_t)(h0 + h)) * hd);
    int chunk = (int)(16384 / rb) & ~15;
    if (chunk < 16) chunk = 16;
    /* the whole chunks every token of the block sees: [wlo, whi) */
    const int wlo = (lo[tb - 1] + chunk - 1) / chunk * chunk, whi = hi[0] / chunk * chunk;
    float mx[nq], cmx[nq];
    for (int q = 0; q < nq; q++) mx[q] = -INFINITY;
    for (int p0 = 0; p0 < hi[tb - 1]; p0 += chunk) {
        const int n = hi[tb - 1] - p0 < chunk ? hi[tb - 1] - p0 : chunk;
        const uint8_t *Kc = K + (size_t)p0 * rb;
        if (c->f32q)
            ember_attf_scores(c->sc + p0, c->scs, (const uint16_t *)Kc, (size_t)hd, (const float *)c->qh, (size_t)hd,
                              nq, n, hd, c->scale, cmx);
        else if (c->q8)
            ember_attq8_scores(c->sc + p0, c->scs, Kc, (const uint8_t *)c->qh, c->qb, nq, n, hd, c->scale, cmx);
        else
            ember_ref_scores_f16_heads(c->sc + p0, c->scs, (const uint16_t *)Kc, (size_t)hd, c->qh, (size_t)hd, nq, n,
                                       hd, c->kq_gemm, c->scale, cmx);
        if (p0 >= wlo && p0 + n <= whi)
            for (int q = 0; q < nq; q++)
                if (cmx[q] > mx[q]) mx[q] = cmx[q];
    }
    for (int i = 0; i < tb; i++) {
        float *sc = c->sc + (size_t)i * g * c->scs;
        /* the rows of token i outside the shared whole chunks */
        const int a = wlo < whi ? wlo : hi[i], b = wlo < whi ? whi : hi[i];
        for (int h = 0; h < g; h++) {
            const float *sh = sc + (size_t)h * c->scs;
            float m = mx[i * g + h];
            for (int p = lo[i]; p < a; p++)
                if (sh[p] > m) m = sh[p];
            for (int p = b; p < hi[i]; p++)
                if (sh[p] > m) m = sh[p];
            mx[i * g + h] = m;
        }
        att_finish(c, j, t0 + i, h0, g, sc + lo[i], mx + i * g, Vr + (size_t)lo[i] * rb, hi[i] - lo[i]);
    }
}

static void att_run(void *ctx, int ith, int nth)
{
    att_job *j = ctx;
    ember_session *s = j->s;
    const ember_model_info *I = &s->m->info;
    const ember_layer *L = &s->m->layers[j->layer];
    att_ctx c = {.s = s, .L = L, .hd = L->head_dim, .nh = I->n_head, .group = I->n_head / L->n_head_kv};
    const int hd = c.hd, nkv = L->n_head_kv, group = c.group;
    /* Q was scaled already where the reference scales Q (arch.h) */
    c.scale = s->m->arch->att_scale == ATT_SCALE_SCORES ? 1.0f / sqrtf((float)hd) : 1.0f;   /* NONE: 1 */
    if (s->m->att_mult > 0) c.scale = s->m->att_mult;   /* granite's attention.scale replaces it */
    c.softcap = s->m->att_softcap;
    c.scs = (size_t)s->n_ctx + 16;
    const int blk = s->att_block;
    c.sc = s->scratch + (size_t)ith * s->scratch_stride;
    c.acc = c.sc + (size_t)blk * group * c.scs;
    c.qh = (uint16_t *)(c.acc + (size_t)group * 64 * hd);
    c.kq_gemm = s->batched && hd % 16 == 0;
    c.kqv_gemm = s->batched && hd % 4 == 0;
    c.ctx_pad = (s->n_ctx + 31) / 32 * 32;
    c.q8 = s->kv_type == EMBER_KV_Q8_0;
    c.f32q = !c.q8 && (s->m->arch->flags & ARCH_ATT_F32Q);
    c.qb = c.q8 ? ember_attq8_query_bytes(hd) : (size_t)hd * (c.f32q ? 4 : 2);
    /* A prompt of fp16 rows, enough tokens for every thread's blocks: an
       item is a block of tokens for one KV head, the blocks of a head
       side by side so the threads share its rows in cache.  A q8_0 cache
       takes the same steps over its rows (att_q8.h). */
    if (s->batched && blk > 1 && j->nt >= 2 * blk * nth) {
        const int nblk = (j->nt + blk - 1) / blk;
        for (int w = ith; w < nblk * nkv; w += nth) {
            const int kvh = w / nblk, t0 = w % nblk * blk, tb = j->nt - t0 < blk ? j->nt - t0 : blk;
            att_tokens(&c, j, t0, tb, kvh);
        }
        return;
    }
    /* The q heads of a KV head share its K and V rows: an item is a run of
       them (for one token) and reads the rows once for the whole run.  Runs
       are split below the whole group only when there are fewer (token, KV
       head) pairs than threads.  Every head's arithmetic is unchanged. */
    int pairs = j->nt * nkv, parts = 1;
    if (pairs < nth) parts = (nth + pairs - 1) / pairs;
    if (parts > group) parts = group;
    const int run = (group + parts - 1) / parts;
    for (int w = ith; w < pairs * parts; w += nth) {
        int t = w / (nkv * parts), kvh = w % (nkv * parts) / parts, part = w % parts;
        int g0 = part * run, ng = group - g0 < run ? group - g0 : run;
        if (ng > 0) att_token(&c, j, t, kvh, kvh * group + g0, ng);
    }
}

int ember_fw_attend(ember_session *s, int l, int n, int pos0, int skip, int HQ)
{
    if (skip > 0) {
        ember_fw_drop_rows(s, HQ, n, skip);
        n -= skip;
        pos0 += skip;
        if (n == 0) return 0;
    }
    att_job aj = {s, l, n, pos0};
    ember_pool_run(s->pool, att_run, &aj);
    return n;
}

/* The gated FFN's activation by arch.h's ember_ffn_act: g = act(g) * u. */
/* FFN_GELU's activation: no gate (u unused) */
static void gelu_alone(float *g, const float *u, int n)
{
    (void)u;
    ember_ref_gelu(g, n);
}

/* FFN_RELU2's: relu, then the square (the reference's two ops) */
static void relu2_alone(float *g, const float *u, int n)
{
    (void)u;
    for (int i = 0; i < n; i++) {
        const float r = g[i] > 0.0f ? g[i] : 0.0f;
        g[i] = r * r;
    }
}

static const ember_glu_fn ffn_act[] = {
    [FFN_SWIGLU] = ember_ref_silu_mul,
    [FFN_GEGLU_TANH] = ember_ref_gelu_tanh_mul,
    [FFN_SWIGLU_OAI] = ember_ref_swiglu_oai_mul,
    [FFN_GELU] = gelu_alone,
    [FFN_RELU2] = relu2_alone,
};

ember_glu_fn ember_fw_ffn_act(const ember_model *m) { return ffn_act[m->arch->act]; }

/* ---- per-token steps on the pool ------------------------------------------ */

/* The steps between the matrix products work token by token (norms, RoPE,
   the KV rows, residual adds): a prompt pass splits its tokens into one
   contiguous run per thread (ith: the thread's index, for a scratch slot of
   its own), so they are not a serial stretch between two parallel
   products.  Each token's arithmetic is the same whichever thread runs it. */
typedef ember_tok_fn tok_fn;

typedef struct {
    ember_session *s;
    tok_fn fn;
    const void *ctx;
    int n;
} tok_job;

static void tok_run(void *c, int ith, int nth)
{
    const tok_job *j = c;
    int t0 = (int)((int64_t)j->n * ith / nth), t1 = (int)((int64_t)j->n * (ith + 1) / nth);
    if (t0 < t1) j->fn(j->s, j->ctx, t0, t1, ith);
}

void ember_fw_tokens(ember_session *s, int n, tok_fn fn, const void *ctx)
{
    if (n < 2) {
        fn(s, ctx, 0, n, 0);
        return;
    }
    tok_job j = {s, fn, ctx, n};
    ember_pool_run(s->pool, tok_run, &j);
}

static void rope_fill_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const struct ember_rope_table *rt = ctx;
    const int h = rt->cfg.n_rot / 2;
    for (int t = t0; t < t1; t++) rope_row(&rt->cfg, rt->pos0 + t, rt->cs + (size_t)t * h, rt->sn + (size_t)t * h);
}

/* The cos / sin table of rc's setting for this pass's n tokens at pos0:
   made once (on the pool) by the first layer of that setting, read by the
   rest.  The tables live for one pass (ember_forward clears them), so a
   table is found by its setting alone.  A pass has few settings (gemma:
   local and global); past EMBER_ROPE_TABLES the last slot is remade. */
const struct ember_rope_table *ember_fw_rope_table(ember_session *s, const ember_rope_cfg *rc, int pos0, int n)
{
    ember_rope_cfg want = *rc;
    if (!want.ff) want.ff = s->rope_ff;
    int i = 0;
    for (; i < EMBER_ROPE_TABLES; i++) {
        struct ember_rope_table *rt = &s->rope_tab[i];
        if (rt->n == 0) break;
        const ember_rope_cfg *c = &rt->cfg;
        if (c->base == want.base && c->freq_scale == want.freq_scale && c->mscale == want.mscale &&
            c->ext_factor == want.ext_factor && c->corr_lo == want.corr_lo && c->corr_hi == want.corr_hi &&
            c->ff == want.ff && c->n_rot == want.n_rot)
            return rt;
    }
    if (i == EMBER_ROPE_TABLES) i--;
    struct ember_rope_table *rt = &s->rope_tab[i];
    rt->cfg = want;
    rt->pos0 = pos0;
    rt->n = n;
    ember_fw_tokens(s, n, rope_fill_tokens, rt);
    return rt;
}

/* Forgets the tables: a new pass, new positions. */
static void rope_tables_clear(ember_session *s)
{
    for (int i = 0; i < EMBER_ROPE_TABLES; i++) s->rope_tab[i].n = 0;
}

/* out = norm(x) * wt (+ b), row by row (out may be x): RMSNorm, or
   LayerNorm under ARCH_LAYERNORM */
typedef struct {
    float *out;
    const float *x, *wt, *b;   /* b: a LayerNorm's bias, or NULL */
} norm_args;

/* Four rows' sums of squares side by side: each is the reference's
   sequential f64 sum (rmsnorm), but the four chains overlap, where one
   row alone waits on every add. */
static void rmsnorm4(float *out, const float *x, const float *wt, int n, float eps)
{
    const float *x0 = x, *x1 = x + n, *x2 = x + 2 * (size_t)n, *x3 = x + 3 * (size_t)n;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int i = 0; i < n; i++) {
        s0 += (double)(x0[i] * x0[i]);
        s1 += (double)(x1[i] * x1[i]);
        s2 += (double)(x2[i] * x2[i]);
        s3 += (double)(x3[i] * x3[i]);
    }
    const double ss[4] = {s0, s1, s2, s3};
    for (int r = 0; r < 4; r++) rmsnorm_scale(out + (size_t)r * n, x + (size_t)r * n, wt, n, ss[r], eps);
}

/* rows [t0, t1) of E values: four at a time, then one by one */
void ember_fw_rmsnorm_rows(float *out, const float *x, const float *wt, int E, int t0, int t1, float eps)
{
    int t = t0;
    for (; t + 4 <= t1; t += 4) rmsnorm4(out + (size_t)t * E, x + (size_t)t * E, wt, E, eps);
    for (; t < t1; t++) rmsnorm(out + (size_t)t * E, x + (size_t)t * E, wt, E, eps);
}

static void norm_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const norm_args *a = ctx;
    const int E = s->m->info.n_embd;
    if (s->m->arch->flags & ARCH_LAYERNORM)
        for (int t = t0; t < t1; t++) layernorm(a->out + (size_t)t * E, a->x + (size_t)t * E, a->wt, a->b, E, s->m->rms_eps);
    else
        ember_fw_rmsnorm_rows(a->out, a->x, a->wt, E, t0, t1, s->m->rms_eps);
}

static void norm_rows_b(ember_session *s, float *out, const float *x, const float *wt, const float *b, int n)
{
    norm_args a = {out, x, wt, b};
    ember_fw_tokens(s, n, norm_tokens, &a);
}

/* A branch's input rows into s->xn: the stream normed by wt (and b), or
   the stream itself where the architecture has no pre-norms (OLMo 2) */
static void branch_input(ember_session *s, const float *wt, const float *b, int n)
{
    if (s->m->arch->flags & ARCH_NO_PRE_NORMS)
        memcpy(s->xn, s->x, (size_t)n * (size_t)s->m->info.n_embd * sizeof *s->xn);
    else
        norm_rows_b(s, s->xn, s->x, wt, b, n);
}

void ember_fw_norm_rows(ember_session *s, float *out, const float *x, const float *wt, int n)
{
    norm_rows_b(s, out, x, wt, NULL, n);
}

/* x += post_norm(xn) (post NULL: x += xn), xn first times mult when it is
   not 0 (granite's residual_scale: a rounded product, then the add), then
   x *= scale when given */
typedef struct {
    const float *post;
    const float *scale;
    float mult;
} resid_args;

static void resid_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const resid_args *a = ctx;
    const int E = s->m->info.n_embd;
    if (a->post) ember_fw_rmsnorm_rows(s->xn, s->xn, a->post, E, t0, t1, s->m->rms_eps);
    for (int t = t0; t < t1; t++) {
        float *x = s->x + (size_t)t * E, *y = s->xn + (size_t)t * E;
        if (a->mult != 0)
            for (int i = 0; i < E; i++) y[i] *= a->mult;
        if (s->side)   /* the branch beside's output (Falcon-H1's Mamba-2), added first */
            for (int i = 0; i < E; i++) y[i] += s->side[(size_t)t * E + i];
        for (int i = 0; i < E; i++) x[i] += y[i];
        if (a->scale)
            for (int i = 0; i < E; i++) x[i] *= *a->scale;
    }
}

/* ember_fw_add_into for rows t of y (stride apart), w values, tokens [t0, t1) */
typedef struct {
    float *y;
    const float *b;
    int w;
    size_t stride;
} bias_args;

static void bias_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)s;
    (void)ith;
    const bias_args *a = ctx;
    for (int t = t0; t < t1; t++) ember_fw_add_into(a->y + (size_t)t * a->stride, a->b, a->w);
}

void ember_fw_add_bias(ember_session *s, float *y, const float *b, int w, size_t stride, int n)
{
    bias_args a = {y, b, w, stride};
    ember_fw_tokens(s, n, bias_tokens, &a);
}

void ember_fw_residual(ember_session *s, int n, const float *post, const float *scale)
{
    resid_args a = {post, scale, s->m->resid_mult};
    ember_fw_tokens(s, n, resid_tokens, &a);
}

typedef struct {
    float *g;
    const float *u;
    int n;
    size_t u_stride;
    ember_glu_fn fn;
} glu_args;

static void glu_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const glu_args *a = ctx;
    for (int t = t0; t < t1; t++) a->fn(a->g + (size_t)t * (size_t)a->n, a->u + (size_t)t * a->u_stride, a->n);
}

void ember_fw_glu(ember_session *s, float *g, const float *u, int width, size_t u_stride, ember_glu_fn fn, int n)
{
    glu_args a = {g, u, width, u_stride, fn};
    ember_fw_tokens(s, n, glu_tokens, &a);
}

static int embed(ember_session *s, const int32_t *tok, int n, ember_err *err)
{
    const ember_model *m = s->m;
    const int E = m->info.n_embd;
    for (int t = 0; t < n; t++) {
        if (tok[t] < 0 || tok[t] >= m->info.n_vocab)
            return ember_seterr(err, "token id %d is outside the vocabulary (0..%d)", tok[t], m->info.n_vocab - 1);
        float *dst = s->x + (size_t)t * E;
        const size_t rb = m->tok_embd.row_bytes;
        if (m->tok_embd.f32) {
            memcpy(dst, m->tok_embd.f32 + (size_t)tok[t] * E, (size_t)E * sizeof *dst);
        } else if (m->embd_released) {
            /* copied from the page cache, not mapped back (lifecycle.c) */
            off_t off = (off_t)(m->tok_embd.t->file_offset + (uint64_t)tok[t] * rb);
            if (pread(m->f->fd, s->embd_row, rb, off) != (ssize_t)rb)
                return ember_seterr(err, "reading embedding row %d: %s", tok[t], strerror(errno));
            ember_dequantize_row(m->tok_embd.dtype, s->embd_row, dst, E);
        } else {
            ember_dequantize_row(m->tok_embd.dtype, m->tok_embd.data + (size_t)tok[t] * rb, dst, E);
        }
    }
    return 0;
}

/* Copies the rows of a fused projection's output (row width = sum of the
   parts' widths, or more: `width`) into the parts, the tokens split over
   the pool (on one thread, phi-3.5-mini's copies held its other thread
   idle for ~2% of a prompt). */
typedef struct {
    const float *src;
    float *const *dst;
    const int *w;
    int nparts, width;
} split_args;

static void split_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)s;
    (void)ith;
    const split_args *a = ctx;
    for (int t = t0; t < t1; t++)
        for (int i = 0, off = 0; i < a->nparts; off += a->w[i], i++)
            memcpy(a->dst[i] + (size_t)t * a->w[i], a->src + (size_t)t * a->width + off, (size_t)a->w[i] * sizeof(float));
}

static void split_rows(ember_session *s, const float *src, int nt, float *const *dst, const int *w, int nparts,
                       int width)
{
    split_args a = {src, dst, w, nparts, width};
    ember_fw_tokens(s, nt, split_tokens, &a);
}

/* Layer l's Q (and, where the layer keeps its own KV, K and V) of tokens
   [t0, t1) after the projections: per-head norms, RoPE, Q's scale, then the
   K and V rows into the cache. */
typedef struct {
    int l, pos0;
    const struct ember_rope_table *rt;
} qk_args;

static void qk_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const qk_args *a = ctx;
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[a->l];
    const int hd = L->head_dim, nh = m->info.n_head, nkv = L->n_head_kv;
    const int HQ = nh * hd, HK = nkv * hd;
    const bool own_kv = L->kv_src == a->l;   /* else only Q: the KV is an earlier layer's */
    const bool qscale = m->arch->att_scale != ATT_SCALE_SCORES;
    const int neox = m->arch->rope != ROPE_NORM;
    for (int t = t0; t < t1; t++) {
        const int pos = a->pos0 + t;
        float *q = s->q + (size_t)t * HQ, *k = s->k + (size_t)t * HK;
        if (L->bq) ember_fw_add_into(q, L->bq, HQ);
        /* per head, or over the whole projection (ARCH_QK_NORM_FULL) */
        const bool full = m->arch->flags & ARCH_QK_NORM_FULL;
        if (L->q_norm) ember_fw_rmsnorm_rows(q, q, L->q_norm, full ? HQ : hd, 0, full ? 1 : nh, m->rms_eps);
        const int h2 = a->rt->cfg.n_rot / 2;
        const float *cs = a->rt->cs + (size_t)t * h2, *sn = a->rt->sn + (size_t)t * h2;
        ember_ref_rope(q, nh, hd, a->rt->cfg.n_rot, cs, sn, neox);
        if (qscale)
            for (int i = 0; i < HQ; i++) q[i] *= m->q_scale;
        if (m->attn_temp != 0) {
            /* in float, as the reference computes its scale input */
            const float f = logf(floorf(((float)pos + 1.0f) / (float)m->n_ctx_orig) + 1.0f) * m->attn_temp + 1.0f;
            if (f != 1.0f)
                for (int i = 0; i < HQ; i++) q[i] *= f;
        }
        if (!own_kv) continue;
        float *v = s->v + (size_t)t * HK;
        if (!L->wv.t && !L->wqkv.t) memcpy(v, k, (size_t)HK * sizeof *v);   /* V = K's projection, before its norm */
        if (L->bk) ember_fw_add_into(k, L->bk, HK);
        if (L->bv) ember_fw_add_into(v, L->bv, HK);
        if (L->k_norm) ember_fw_rmsnorm_rows(k, k, L->k_norm, full ? HK : hd, 0, full ? 1 : nkv, m->rms_eps);
        ember_ref_rope(k, nkv, hd, a->rt->cfg.n_rot, cs, sn, neox);
        if (m->arch->flags & ARCH_V_NORM) ember_fw_rmsnorm_rows(v, v, NULL, hd, 0, nkv, m->rms_eps);
        for (int h = 0; h < nkv; h++) ember_fw_kv_write(s, a->l, h, pos, k + (size_t)h * hd, v + (size_t)h * hd);
    }
}

/* Gated attention (ARCH_GATED_ATTN): Q's product holds each head's query
   rows, then its gate's; split into s->q and s->qgate, and after the
   attention each output row times sigmoid(its gate), as the reference's
   two separate operations round it. */
static void qgate_split_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_layer *L = ctx;
    const int hd = L->head_dim, nh = s->m->info.n_head, HQ = nh * hd;
    for (int t = t0; t < t1; t++) {
        const float *src = s->fused + (size_t)t * 2 * HQ;
        for (int h = 0; h < nh; h++) {
            memcpy(s->q + (size_t)t * HQ + (size_t)h * hd, src + (size_t)h * 2 * hd, (size_t)hd * sizeof(float));
            memcpy(s->qgate + (size_t)t * HQ + (size_t)h * hd, src + (size_t)h * 2 * hd + hd, (size_t)hd * sizeof(float));
        }
    }
}

static void qgate_apply_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const int HQ = *(const int *)ctx;
    for (size_t i = (size_t)t0 * HQ; i < (size_t)t1 * HQ; i++) {
        const float g = 1.0f / (1.0f + expf(-s->qgate[i]));
        s->att[i] *= g;
    }
}

/* Moves rows [skip, n) of everything a token carries past the attention's
   K/V writes (its query of HQ floats, its residual stream, gemma4's
   per-layer inputs) to rows [0, n - skip). */
void ember_fw_drop_rows(ember_session *s, int HQ, int n, int skip)
{
    const ember_model *m = s->m;
    const size_t E = (size_t)m->info.n_embd, W = (size_t)m->n_pl * (size_t)m->info.n_layer, k = (size_t)(n - skip);
    memmove(s->q, s->q + (size_t)skip * HQ, k * HQ * sizeof *s->q);
    if (s->qgate) memmove(s->qgate, s->qgate + (size_t)skip * HQ, k * HQ * sizeof *s->qgate);
    memmove(s->x, s->x + (size_t)skip * E, k * E * sizeof *s->x);
    if (W) memmove(s->pl, s->pl + (size_t)skip * W, k * W * sizeof *s->pl);
}

void ember_fw_block_out(ember_session *s, const ember_weight *out, float *y, int w, int n, int skip, float *side)
{
    const size_t E = (size_t)s->m->info.n_embd;
    if (skip > 0) {   /* the last layer of a prompt pass: only the output rows go on */
        memmove(y, y + (size_t)skip * w, (size_t)(n - skip) * w * sizeof *y);
        if (!side) memmove(s->x, s->x + (size_t)skip * E, (size_t)(n - skip) * E * sizeof *s->x);
        n -= skip;
        if (n == 0) return;
    }
    ember_mm_act_dirty(s);
    ember_mm(s, out, side ? side : s->xn, y, n);
    if (!side) ember_fw_residual(s, n, NULL, NULL);
}

/* The attention block of layer l for n tokens at pos0: s->x += attention(s->x).
   Every token's K and V go into the cache; past that only tokens [skip, n)
   go on, moved to rows [0, n - skip) of s->x: the last layer of a prompt
   pass, whose other rows' outputs nobody reads (the reference, too, keeps
   only its output rows there), none in a pass before the prompt's last. */
void ember_fw_attention(ember_session *s, int l, int n, int pos0, int skip)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const int hd = L->head_dim, nh = m->info.n_head, nkv = L->n_head_kv;
    const int HQ = nh * hd, HK = nkv * hd;
    branch_input(s, L->attn_norm, L->attn_norm_b, n);
    ember_mm_act_dirty(s);
    const bool own_kv = L->kv_src == l;   /* else only Q: the KV is an earlier layer's */
    if (L->wqkv.t) {
        ember_mm(s, &L->wqkv, s->fused, s->xn, n);
        if (L->bqkv) ember_fw_add_bias(s, s->fused, L->bqkv, HQ + 2 * HK, (size_t)(HQ + 2 * HK), n);
        split_rows(s, s->fused, n, (float *[]){s->q, s->k, s->v}, (int[]){HQ, HK, HK}, 3, HQ + 2 * HK);
    } else {
        const bool gated = m->arch->flags & ARCH_GATED_ATTN;
        const ember_weight *qkv[3] = {&L->wq, &L->wk, &L->wv};
        float *ys[3] = {gated ? s->fused : s->q, s->k, s->v};
        ember_mm_n(s, qkv, ys, own_kv ? (L->wv.t ? 3 : 2) : 1, s->xn, n);
        if (gated) ember_fw_tokens(s, n, qgate_split_tokens, L);
    }
    qk_args qa = {l, pos0, ember_fw_rope_table(s, &L->rope, pos0, n)};
    ember_fw_tokens(s, n, qk_tokens, &qa);
    if ((n = ember_fw_attend(s, l, n, pos0, skip, HQ)) == 0) return;
    if (s->qgate) ember_fw_tokens(s, n, qgate_apply_tokens, &HQ);
    ember_mm(s, &L->wo, s->xn, s->att, n);
    if (L->bo) ember_fw_add_bias(s, s->xn, L->bo, m->info.n_embd, (size_t)m->info.n_embd, n);
    if (m->parallel) {   /* kept for the FFN's add: x is its input too */
        memcpy(s->par, s->xn, (size_t)n * (size_t)m->info.n_embd * sizeof *s->par);
        return;
    }
    ember_fw_residual(s, n, L->post_attn_norm, NULL);
}

static void add_par_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    const size_t E = (size_t)s->m->info.n_embd;
    ember_fw_add_into(s->x + (size_t)t0 * E, s->par + (size_t)t0 * E, (t1 - t0) * (int)E);
}


/* The FFN block of layer l: s->x += down(act(gate x) * up x) on the normed
   x, then s->x *= *scale when given. */
void ember_fw_ffn(ember_session *s, int l, int n, const float *scale)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const int F = L->n_ff;
    if (L->moe) {
        ember_moe_ffn(s, l, n, scale);
        return;
    }
    const bool par = m->parallel;
    branch_input(s, par ? L->attn_norm : L->ffn_norm, par ? L->attn_norm_b : L->ffn_norm_b, n);
    ember_mm_act_dirty(s);
    /* a fused gate/up: the gate half copied out (the down projection reads
       whole rows of F), the up half read where the product left it */
    const float *u = s->u;
    size_t u_stride = (size_t)F;
    if (!L->gate.t && !L->gate_up.t) {   /* FFN_GELU, FFN_RELU2: the up rows are the activation's input */
        ember_mm(s, &L->up, s->g, s->xn, n);
        if (L->up_b) ember_fw_add_bias(s, s->g, L->up_b, F, (size_t)F, n);
        u = s->g;
    } else if (L->gate_up.t) {
        ember_mm(s, &L->gate_up, s->fused, s->xn, n);
        split_rows(s, s->fused, n, (float *[]){s->g}, (int[]){F}, 1, 2 * F);
        u = s->fused + F;
        u_stride = 2 * (size_t)F;
    } else {
        const ember_weight *gu[2] = {&L->gate, &L->up};
        float *gy[2] = {s->g, s->u};
        ember_mm_n(s, gu, gy, 2, s->xn, n);
    }
    if (L->sparsity > 0) ember_fw_tokens(s, n, ember_altup_gaussian_top, L);
    ember_fw_glu(s, s->g, u, F, u_stride, ffn_act[m->arch->act], n);
    ember_mm_act_dirty(s);
    ember_mm(s, &L->down, s->xn, s->g, n);
    if (L->down_b) ember_fw_add_bias(s, s->xn, L->down_b, m->info.n_embd, (size_t)m->info.n_embd, n);
    /* parallel: x + attn first, then + ffn, the reference's two adds */
    if (par) ember_fw_tokens(s, n, add_par_tokens, NULL);
    ember_fw_residual(s, n, L->post_ffn_norm, scale);
}

static const float *L_out_scale(const ember_model *m, int l) { return m->layers[l].out_scale; }

int ember_forward(ember_session *s, const int32_t *tok, int n, int out, ember_err *err)
{
    const ember_model *m = s->m;
    const ember_model_info *I = &m->info;
    const int E = I->n_embd;
    const int pos0 = s->n_past;
    rope_tables_clear(s);
    if (embed(s, tok, n, err)) return -1;
    if (m->arch->flags & ARCH_EMBD_SCALE || m->embd_mult > 0) {
        const float sc = m->embd_mult > 0 ? m->embd_mult : sqrtf((float)E);
        for (size_t i = 0; i < (size_t)n * E; i++) s->x[i] *= sc;
    }
    if (m->n_pl && ember_pl_inputs(s, tok, n, err)) return -1;
    if (m->n_altup) ember_altup_init(s, n);
    int nr = n;   /* rows still going on: the last layer keeps the output rows only */
    for (int l = 0; l < I->n_layer; l++) {
        const int skip = l == I->n_layer - 1 ? nr - out : 0;
        if (m->n_altup) {   /* Gemma 3n: the layer over its streams (altup.c) */
            ember_altup_layer(s, l, nr, pos0, skip);
            nr -= skip;
            continue;
        }
        /* the layer's output scale (gemma4) ends its last residual add */
        if (m->layers[l].dn)
            ember_dn_block(s, l, nr, skip);
        else if (m->layers[l].mla)
            ember_mla_block(s, l, nr, pos0, skip);
        else if (m->layers[l].sc)
            ember_sc_block(s, l, nr, skip);
        else if (m->layers[l].m2 && m->layers[l].wo.t) {   /* Falcon-H1: Mamba-2 beside attention */
            ember_m2_block(s, l, nr, skip, s->m2_side);
            s->side = s->m2_side;
            ember_fw_attention(s, l, nr, pos0, skip);
            s->side = NULL;
        } else if (m->layers[l].m2)
            ember_m2_block(s, l, nr, skip, NULL);
        else if (m->layers[l].wo.t)
            ember_fw_attention(s, l, nr, pos0, skip);
        else if (skip > 0)   /* an FFN alone (Nemotron-H): its output rows only from here */
            ember_fw_drop_rows(s, 0, nr, skip);
        nr -= skip;
        if (nr == 0) break;
        if (m->layers[l].n_ff) ember_fw_ffn(s, l, nr, m->n_pl ? NULL : L_out_scale(m, l));
        if (m->n_pl) ember_pl_block(s, l, nr, L_out_scale(m, l));
    }
    for (int t = 0; t < n && s->ring; t++) s->ring_pos[(pos0 + t) % s->ring] = pos0 + t;
    if (nr == 0) return 0;
    if (m->n_altup) ember_altup_merge(s, nr);   /* the streams back into s->x */
    for (int t = 0; t < nr; t++) norm_row(m, s->xn + (size_t)t * E, s->x + (size_t)t * E, m->output_norm, m->output_norm_b, E);
    if (m->logit_mul != 1.0f)
        for (size_t i = 0; i < (size_t)nr * (size_t)E; i++) s->xn[i] *= m->logit_mul;
    ember_mm_act_dirty(s);
    ember_mm(s, &m->output, s->logits, s->xn, nr);
    ember_mm_act_dirty(s);
    if (m->output_b) ember_fw_add_bias(s, s->logits, m->output_b, I->n_vocab, (size_t)I->n_vocab, nr);
    if (m->softcap > 0) ember_ref_softcap(s->logits, (size_t)nr * (size_t)I->n_vocab, m->softcap);
    if (m->logit_div > 0) {   /* the reference scales by 1 / logit_scale */
        const float inv = 1.0f / m->logit_div;
        for (size_t i = 0; i < (size_t)nr * (size_t)I->n_vocab; i++) s->logits[i] *= inv;
    }
    return 0;
}
