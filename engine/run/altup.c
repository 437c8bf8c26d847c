/* Gemma 3n's alternating updates (altup.h): the residual stream as
   n_altup streams (s->alt_s, stream a's rows at a * ubatch), of which the
   active one goes through the layer; laurel, a low-rank branch beside the
   attention; the per-layer input added to streams 1 to n_altup - 1.  Each step
   is the reference's graph op for op (llama.cpp's gemma3n), its float
   order where it shows: row sums in f64, products and adds rounded one by
   one. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "altup.h"
#include "bind.h"
#include "forward.h"
#include "matmul.h"
#include "plan.h"
#include "refnum.h"

/* Row t of stream a in a streams buffer */
static float *srow(const ember_session *s, float *buf, int a, int t)
{
    return buf + ((size_t)a * (size_t)s->ubatch + (size_t)t) * (size_t)s->m->info.n_embd;
}

/* sqrt of the row's sum of squares (f32 squares, an f64 sum rounded) */
static float magnitude(const float *x, int n)
{
    double ss = 0;
    for (int i = 0; i < n; i++) ss += (double)(x[i] * x[i]);
    return sqrtf((float)ss);
}

/* y = y * target / |y|, each product rounded */
static void rescale(float *y, float target, int n)
{
    const float mag = magnitude(y, n);
    for (int i = 0; i < n; i++) y[i] = y[i] * target / mag;
}

/* ---- the streams in and out ------------------------------------------ */

static void init_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx;
    (void)ith;
    const ember_model *m = s->m;
    const int E = m->info.n_embd;
    for (int t = t0; t < t1; t++) {
        const float *x = s->x + (size_t)t * E;
        memcpy(srow(s, s->alt_s, 0, t), x, (size_t)E * sizeof *x);
        const float tm = magnitude(x, E);
        for (int a = 1; a < m->n_altup; a++) rescale(srow(s, s->alt_s, a, t), tm, E);
    }
}

void ember_altup_init(ember_session *s, int n)
{
    const ember_model *m = s->m;
    ember_mm_act_dirty(s);
    for (int a = 1; a < m->n_altup; a++) ember_mm(s, &m->altup_proj[a - 1], srow(s, s->alt_s, a, 0), s->x, n);
    ember_fw_tokens(s, n, init_tokens, NULL);
}

static void merge_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx;
    (void)ith;
    const ember_model *m = s->m;
    const int E = m->info.n_embd, A = m->n_altup;
    const float inv = 1.0f / (float)A;
    for (int t = t0; t < t1; t++) {
        const float tm = magnitude(srow(s, s->alt_s, m->altup_act, t), E);
        float *x = s->x + (size_t)t * E;
        memcpy(x, srow(s, s->alt_s, 0, t), (size_t)E * sizeof *x);
        for (int a = 1; a < A; a++) {
            float *u = srow(s, s->alt_p, a, t);
            rescale(u, tm, E);
            for (int i = 0; i < E; i++) x[i] += u[i];
        }
        for (int i = 0; i < E; i++) x[i] *= inv;
    }
}

void ember_altup_merge(ember_session *s, int n)
{
    const ember_model *m = s->m;
    for (int a = 1; a < m->n_altup; a++) {
        ember_mm_act_dirty(s);   /* another stream's rows each time */
        ember_mm(s, &m->altup_unembd[a - 1], srow(s, s->alt_p, a, 0), srow(s, s->alt_s, a, 0), n);
    }
    ember_mm_act_dirty(s);
    ember_fw_tokens(s, n, merge_tokens, NULL);
}

/* ---- a layer --------------------------------------------------------- */

/* Gemma 3n's activation sparsity on the gate rows of tokens [t0, t1):
   g = relu(g - (mean + k std)), the std over F - 1, its sums in f64 as
   the reference's row sums */
void ember_altup_gaussian_top(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_layer *L = ctx;
    const int F = L->n_ff;
    for (int t = t0; t < t1; t++) {
        float *g = s->g + (size_t)t * F;
        double sum = 0;
        for (int i = 0; i < F; i++) sum += (double)g[i];
        const float mean = (float)sum / (float)F;
        double ss = 0;
        for (int i = 0; i < F; i++) {
            const float d = g[i] - mean;
            ss += (double)(d * d);
        }
        const float sd = sqrtf((float)ss * (1.0f / (float)(F - 1)));
        const float cut = mean + sd * L->sparsity;
        for (int i = 0; i < F; i++) {
            const float v = g[i] - cut;
            g[i] = v > 0 ? v : 0;
        }
    }
}


/* The router's input from rows of src into s->xn: RMS-normed by the
   router's norm, then times 1 / n_embd */
static void router_in_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const float *const *a = ctx;   /* {src, router_norm} */
    const int E = s->m->info.n_embd;
    ember_fw_rmsnorm_rows(s->xn, a[0], a[1], E, t0, t1, s->m->rms_eps);
    const float c = 1.0f / (float)E;
    for (size_t i = (size_t)t0 * E; i < (size_t)t1 * E; i++) s->xn[i] *= c;
}

/* tanh of the router's scores of rows in src (n tokens) into s->alt_mod */
static void modalities(ember_session *s, const ember_altup *x, const float *src, int n)
{
    const int A = s->m->n_altup;
    const float *args[2] = {src, x->router_norm};
    ember_fw_tokens(s, n, router_in_tokens, args);
    ember_mm_act_dirty(s);
    ember_mm(s, &x->router, s->alt_mod, s->xn, n);
    ember_mm_act_dirty(s);
    for (size_t i = 0; i < (size_t)n * A; i++) s->alt_mod[i] = tanhf(s->alt_mod[i]);
}

/* rows of a tiny f32 matrix (rows x A) times one token's modalities */
static float coef(const float *w, int r, const float *mod, int A)
{
    float v = 0;
    for (int k = 0; k < A; k++) v += w[(size_t)r * A + k] * mod[k];
    return v;
}

/* Predictions: stream j = stream j + sum_k stream k * c[j A + k], the
   coefficients from the active stream's modalities */
static void predict_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_altup *x = ctx;
    const ember_model *m = s->m;
    const int E = m->info.n_embd, A = m->n_altup;
    float c[16 * 16];
    for (int t = t0; t < t1; t++) {
        const float *mod = s->alt_mod + (size_t)t * A;
        for (int r = 0; r < A * A; r++) c[r] = coef(x->predict_coef, r, mod, A);
        const float *sk[16];
        for (int k = 0; k < A; k++) sk[k] = srow(s, s->alt_s, k, t);
        for (int j = 0; j < A; j++) {
            float *p = srow(s, s->alt_p, j, t);
            const float *cj = c + j * A;
            for (int i = 0; i < E; i++) {
                float v = 0;
                for (int k = 0; k < A; k++) v += sk[k][i] * cj[k];
                p[i] = v + sk[j][i];
            }
        }
    }
}

/* laurel's output rows into s->alt_lo: norm(r(l(xn))) + xn, xn the
   attention's normed input */
static void laurel_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_altup *x = ctx;
    const int E = s->m->info.n_embd;
    ember_fw_rmsnorm_rows(s->alt_lo, s->alt_lo, x->laurel_post_norm, E, t0, t1, s->m->rms_eps);
    for (size_t i = (size_t)t0 * E; i < (size_t)t1 * E; i++) s->alt_lo[i] = s->alt_lo[i] + s->xn[i];
}

/* (attention's output + laurel's) / sqrt(2), the FFN's input */
static void attn_laurel_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx;
    (void)ith;
    const int E = s->m->info.n_embd;
    const float c = 1.0f / sqrtf(2.0f);
    for (size_t i = (size_t)t0 * E; i < (size_t)t1 * E; i++) s->x[i] = (s->x[i] + s->alt_lo[i]) * c;
}

/* Correction: stream j = (activated - prediction act) * (c_j + 1) +
   prediction j; then the active stream times the correction scale into
   s->x, the per-layer input's input */
static void correct_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_altup *x = ctx;
    const ember_model *m = s->m;
    const int E = m->info.n_embd, A = m->n_altup;
    for (int t = t0; t < t1; t++) {
        const float *mod = s->alt_mod + (size_t)t * A;
        float *act = s->x + (size_t)t * E;
        const float *pa = srow(s, s->alt_p, m->altup_act, t);
        for (int i = 0; i < E; i++) act[i] = act[i] - pa[i];   /* the innovation */
        for (int j = 0; j < A; j++) {
            const float cj = coef(x->correct_coef, j, mod, A) * 1.0f + 1.0f;
            float *sj = srow(s, s->alt_s, j, t);
            const float *pj = srow(s, s->alt_p, j, t);
            for (int i = 0; i < E; i++) sj[i] = act[i] * cj + pj[i];
        }
        const float *sa = srow(s, s->alt_s, m->altup_act, t);
        for (int i = 0; i < E; i++) act[i] = sa[i] * x->correct_scale[i];
    }
}

/* streams 1.. += the per-layer input's normed projection in s->xn */
static void add_pl_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const float *post = ctx;
    const ember_model *m = s->m;
    const int E = m->info.n_embd;
    ember_fw_rmsnorm_rows(s->xn, s->xn, post, E, t0, t1, m->rms_eps);
    for (int t = t0; t < t1; t++)
        for (int a = 1; a < m->n_altup; a++) {
            float *sa = srow(s, s->alt_s, a, t);
            const float *f = s->xn + (size_t)t * E;
            for (int i = 0; i < E; i++) sa[i] = sa[i] + f[i];
        }
}

void ember_altup_layer(ember_session *s, int l, int n, int pos0, int skip)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_altup *x = L->alt;
    const int E = m->info.n_embd, A = m->n_altup, np = m->n_pl;
    modalities(s, x, srow(s, s->alt_s, m->altup_act, 0), n);
    ember_fw_tokens(s, n, predict_tokens, x);
    memcpy(s->x, srow(s, s->alt_p, m->altup_act, 0), (size_t)n * E * sizeof *s->x);
    /* laurel on the attention's normed input */
    ember_fw_norm_rows(s, s->xn, s->x, L->attn_norm, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &x->laurel_l, s->alt_lr, s->xn, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &x->laurel_r, s->alt_lo, s->alt_lr, n);
    ember_fw_tokens(s, n, laurel_tokens, x);
    ember_fw_attention(s, l, n, pos0, 0);   /* x = active + post_norm(attention) */
    ember_fw_tokens(s, n, attn_laurel_tokens, NULL);
    ember_fw_ffn(s, l, n, NULL);             /* x += post_norm(ffn(norm(x))) */
    modalities(s, x, s->x, n);
    ember_fw_tokens(s, n, correct_tokens, x);
    /* the per-layer input: proj(gelu(inp_gate x) * input_l), normed */
    ember_mm_act_dirty(s);
    ember_mm(s, &L->pl_gate, s->plg, s->x, n);
    ember_fw_glu(s, s->plg, s->pl + (size_t)l * np, np, (size_t)np * m->info.n_layer, ember_ref_gelu_tanh_mul, n);
    ember_mm_act_dirty(s);
    ember_mm(s, &L->pl_proj, s->xn, s->plg, n);
    ember_mm_act_dirty(s);
    ember_fw_tokens(s, n, add_pl_tokens, L->pl_post_norm);
    if (skip > 0)   /* the last layer: the output rows go on */
        for (int a = 0; a < A; a++)
            memmove(srow(s, s->alt_s, a, 0), srow(s, s->alt_s, a, skip), (size_t)(n - skip) * E * sizeof(float));
}

/* ---- binding --------------------------------------------------------- */

int ember_altup_bind_model(ember_model *m, ember_err *err)
{
    const int64_t E = m->info.n_embd;
    int rc = ember_bind_slabs(m, &m->altup_proj, "altup_proj.weight", E, E, m->n_altup - 1, 0, err);
    if (!rc) rc = ember_plan_heads(m, m->altup_proj, m->n_altup - 1, err);
    if (!rc) rc = ember_bind_slabs(m, &m->altup_unembd, "altup_unembd_proj.weight", E, E, m->n_altup - 1, 0, err);
    if (!rc) rc = ember_plan_heads(m, m->altup_unembd, m->n_altup - 1, err);
    return rc;
}

int ember_altup_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    const int64_t E = m->info.n_embd, A = m->n_altup;
    char nm[96];
    int rc = 0;
    ember_altup *x = calloc(1, sizeof *x);
    if (!(L->alt = x)) return ember_seterr(err, "out of memory");
#define AN(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    /* laurel's rank: its tensors' */
    const gguf_tensor *lt = gguf_find_tensor(m->f, AN("laurel_l.weight"));
    const int64_t R = lt && lt->n_dims == 2 ? lt->ne[1] : 0;
    if (!lt) return ember_seterr(err, "tensor '%s' is missing", nm);
    if (R < 1 || R > E) return ember_seterr(err, "tensor '%s' is no matrix of n_embd columns and at most n_embd rows", nm);
    ember_bind_weight(m, &x->laurel_l, nm, E, R, 0, err, &rc);
    if (!rc) ember_bind_weight(m, &x->laurel_r, AN("laurel_r.weight"), R, E, 0, err, &rc);
    if (!rc) x->laurel_post_norm = ember_load_vec(m, AN("laurel_post_norm.weight"), E, true, err, &rc);
    if (!rc) ember_bind_weight(m, &x->router, AN("altup_router.weight"), E, A, 0, err, &rc);
    if (!rc) x->router_norm = ember_load_vec(m, AN("altup_router_norm.weight"), E, true, err, &rc);
    if (!rc) x->predict_coef = ember_load_f32(m, AN("altup_predict_coef.weight"), A, A * A, true, err, &rc);
    if (!rc) x->correct_coef = ember_load_f32(m, AN("altup_correct_coef.weight"), A, A, true, err, &rc);
    if (!rc) x->correct_scale = ember_load_vec(m, AN("altup_correct_scale.weight"), E, true, err, &rc);
#undef AN
    if (!rc) rc = ember_plan_weight(m, &x->laurel_l, err);
    if (!rc) rc = ember_plan_weight(m, &x->laurel_r, err);
    if (!rc) rc = ember_plan_weight(m, &x->router, err);
    if (!rc && R > m->alt_rank) m->alt_rank = (int)R;
    /* the reference's fixed activation sparsity: the first 10 layers'
       gates cut at the 95th percentile of a normal (its icdf) */
    L->sparsity = l < 10 ? 1.6448533535003662f : 0.0f;
    /* a layer reading an earlier one's KV still carries its own K and V
       matrices, which the reference loads and never reads */
    static const char *const kv_parts[3] = {"attn_k.weight", "attn_v.weight", "attn_k_norm.weight"};
    for (int i = 0; i < 3 && L->kv_src != l; i++) {
        snprintf(nm, sizeof nm, "blk.%d.%s", l, kv_parts[i]);
        ember_bind_mark_used(m, gguf_find_tensor(m->f, nm));
    }
    return rc;
}

void ember_altup_free_model(ember_model *m)
{
    for (int i = 0; i + 1 < m->n_altup; i++) {
        if (m->altup_proj) free(m->altup_proj[i].f32);
        if (m->altup_unembd) free(m->altup_unembd[i].f32);
    }
    free(m->altup_proj);
    free(m->altup_unembd);
}

void ember_altup_free(ember_altup *x)
{
    if (!x) return;
    free(x->laurel_l.f32);
    free(x->laurel_r.f32);
    free(x->router.f32);
    free(x->laurel_post_norm);
    free(x->router_norm);
    free(x->predict_coef);
    free(x->correct_coef);
    free(x->correct_scale);
    free(x);
}
