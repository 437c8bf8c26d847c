/* The mixture-of-experts FFN (moe.h): routing (softmax, sigmoid, grouped
   and top-k-softmax choices), the experts' products gathered per expert
   (a prompt) or batched into two jobs (one token), the weighted sum. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>

#include "forward.h"
#include "matmul.h"
#include "moe.h"
#include "refnum.h"
#include "bind.h"
#include "dtype.h"
#include "plan.h"

/* Each token's experts from its router scores: softmax over the experts
   (the reference's exp and sums), the k largest probabilities in
   descending order (ties to the lower expert; plus the layer's selection
   bias where it has one), their weights divided by their sum unless the
   architecture weighs them as they are (ARCH_MOE_RAW_WEIGHTS). */
/* The k largest of v[0..n) (plus bias, where given) into sel, in
   descending order, ties to the lower index. */
static void top_k(const float *v, const float *bias, int n, int k, int *sel)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < n; e++) {
            if (best >= 0 && !(bias ? v[e] + bias[e] > v[best] + bias[best] : v[e] > v[best])) continue;
            bool taken = false;
            for (int i = 0; i < j && !taken; i++) taken = sel[i] == e;
            if (!taken) best = e;
        }
        sel[j] = best;
    }
}

/* The K best experts of the best groups (model.h, moe_groups): a group
   scored by its two best selection scores, their float sum; groups and
   experts ranked best first, a tie to the higher index, as the reference
   sorts its (score, index) pairs. */
static void group_top_k(const ember_model *m, const float *p, const float *bias, int *sel)
{
    const int NE = m->info.n_expert, K = m->info.n_expert_used, G = m->moe_groups, per = NE / G;
    float sc[EMBER_MAX_EXPERTS], gs[EMBER_MAX_EXPERTS];
    for (int e = 0; e < NE; e++) sc[e] = bias ? p[e] + bias[e] : p[e];
    for (int g = 0; g < G; g++) {
        float a = -INFINITY, b = -INFINITY;   /* the best two */
        for (int e = g * per; e < (g + 1) * per; e++)
            if (sc[e] > a) b = a, a = sc[e];
            else if (sc[e] > b) b = sc[e];
        gs[g] = per > 1 ? a + b : a;
    }
    bool keep[EMBER_MAX_EXPERTS] = {false};
    for (int n = 0; n < m->moe_groups_used; n++) {
        int best = -1;
        for (int g = 0; g < G; g++)
            if (!keep[g] && (best < 0 || gs[g] >= gs[best])) best = g;
        keep[best] = true;
    }
    for (int j = 0; j < K; j++) {
        int best = -1;
        for (int e = 0; e < NE; e++)
            if (keep[e / per] && (best < 0 || sc[e] >= sc[best])) best = e;
        sel[j] = best;
        sc[best] = -INFINITY;
    }
}

static void route_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const ember_moe *moe = ctx;
    const float *bias = moe->sel_bias;   /* the layer's selection bias, or NULL */
    const ember_model *m = s->m;
    const int NE = m->info.n_expert, K = m->info.n_expert_used;
    float p[EMBER_MAX_EXPERTS + 16];   /* padded for the 16-wide exp */
    float lb[EMBER_MAX_EXPERTS];
    for (int t = t0; t < t1; t++) {
        const float *lg = s->moe_logits + (size_t)t * NE;
        if (moe->router_b) {   /* the router's bias on its logits */
            for (int e = 0; e < NE; e++) lb[e] = lg[e] + moe->router_b[e];
            lg = lb;
        }
        int *sel = s->moe_sel + (size_t)t * K;
        float *w = s->moe_w + (size_t)t * K;
        if (m->arch->flags & ARCH_MOE_TOPK_SOFTMAX) {
            /* the k largest logits, weighed by the softmax over those k */
            float wk[EMBER_MAX_EXPERTS + 16];
            top_k(lg, NULL, NE, K, sel);
            for (int j = 0; j < K; j++) wk[j] = lg[sel[j]];
            for (int j = K; j < (K + 15) / 16 * 16; j++) wk[j] = 0;   /* the exp's padded chunk */
            const float inv = (float)(1.0 / ember_ref_softmax_exp(p, wk, wk[0], K));   /* wk[0] is the max */
            for (int j = 0; j < K; j++) w[j] = p[j] * inv;
            continue;
        }
        if (m->moe_sigmoid) {   /* each expert's own probability (GLM-4.5, DeepSeek V3) */
            for (int e = 0; e < NE; e++) p[e] = 1.0f / (1.0f + expf(-lg[e]));
        } else {
            float mx = -INFINITY;
            for (int e = 0; e < NE; e++) mx = lg[e] > mx ? lg[e] : mx;
            const float inv = (float)(1.0 / ember_ref_softmax_exp(p, lg, mx, NE));
            for (int e = 0; e < NE; e++) p[e] *= inv;
        }
        double sum = 0;
        /* chosen by the biased probability (exp_probs_b), weighed by the plain one */
        if (m->moe_groups_used < m->moe_groups) group_top_k(m, p, bias, sel);
        else top_k(p, bias, NE, K, sel);
        for (int j = 0; j < K; j++) {
            w[j] = p[sel[j]];
            sum += (double)w[j];
        }
        const float fs = (float)sum;
        if (m->moe_norm)
            for (int j = 0; j < K; j++) w[j] /= fs;
        /* the reference scales only a factor that is not 1 */
        if (fabsf(m->moe_scale - 1.0f) > 1e-5f)
            for (int j = 0; j < K; j++) w[j] *= m->moe_scale;
    }
}

/* The shared expert's rows of tokens [t0, t1) times sigmoid(x . g), x the
   normed input, formed as the reference does: silu(d) / d. */
static void shexp_gate_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const float *g = ctx;
    const int E = s->m->info.n_embd;
    for (int t = t0; t < t1; t++) {
        const float *x = s->xn + (size_t)t * E;
        float d = 0;
        for (int i = 0; i < E; i++) d += x[i] * g[i];
        const float sg = d != 0 ? d / (1.0f + ember_ref_expf(-d)) / d : 0.5f;
        float *y = s->moe_sh + (size_t)t * E;
        for (int i = 0; i < E; i++) y[i] *= sg;
    }
}

/* The branch of tokens [t0, t1) into s->xn: each slot's expert output
   times its weight, the products added in slot order. */
static void moe_sum_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const int E = s->m->info.n_embd, K = s->m->info.n_expert_used;
    const bool shared = ctx != NULL;   /* the shared expert's rows in s->moe_sh, added last */
    for (int t = t0; t < t1; t++) {
        float *y = s->xn + (size_t)t * E;
        for (int j = 0; j < K; j++) {
            const float w = s->moe_w[(size_t)t * K + j];
            const float *o = s->moe_out + (size_t)s->moe_place[(size_t)t * K + j] * E;
            if (j == 0)
                for (int i = 0; i < E; i++) y[i] = o[i] * w;
            else
                for (int i = 0; i < E; i++) {
                    const float v = o[i] * w;   /* rounded, then added: the reference's mul, then add */
                    y[i] += v;
                }
        }
        if (shared)
            for (int i = 0; i < E; i++) y[i] += s->moe_sh[(size_t)t * E + i];
    }
}

/* Rows [r0, r1) of a fused gate/up product in s->fused (2F a row): the
   gate halves into s->g (F a row), the up halves into s->u */
static void split_gate_up(ember_session *s, int r0, int r1, int F)
{
    for (int r = r0; r < r1; r++) {
        const float *f = s->fused + (size_t)r * 2 * F;
        memcpy(s->g + (size_t)r * F, f, (size_t)F * sizeof *f);
        memcpy(s->u + (size_t)r * F, f + F, (size_t)F * sizeof *f);
    }
}

/* n rows of w values times c (an expert's output scale: the reference's
   product, rounded, before the router's weight) */
static void scale_rows(float *y, float c, int w, int n)
{
    for (size_t i = 0; i < (size_t)w * (size_t)n; i++) y[i] *= c;
}

/* The router's input beside a dense FFN (Gemma 4): each row of the
   stream RMS-normed without a weight, times 1 / sqrt(n_embd), times the
   router's scale, each product rounded as the reference's ops are */
static void router_in_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ith;
    const float *rs = ctx;
    const int E = s->m->info.n_embd;
    const float c = 1.0f / sqrtf((float)E);
    ember_fw_rmsnorm_rows(s->xn, s->x, NULL, E, t0, t1, s->m->rms_eps);
    for (int t = t0; t < t1; t++) {
        float *y = s->xn + (size_t)t * E;
        for (int i = 0; i < E; i++) {
            const float v = y[i] * c;
            y[i] = v * rs[i];
        }
    }
}

/* The reference's expert products (mul_mat_id) take their input in the
   slabs' vec-dot type: F16 experts read fp16-rounded activations, in
   ik_llama.cpp as in mainline, where a plain F16 matrix here (and in
   ik's dense products) reads f32 ones.  Gemma 4 renormalises the
   experts' sum beside its dense FFN, so the rounding shows in its logits:
   tiny-gemma4moe F16 against ik, median cosine 0.999998 without it,
   0.9999995 with it (doc/PERFORMANCE.md).  The file's dtype decides, so
   eager (f32 copies of the slabs) rounds as compressed does. */
static void round_to_vec_dot(const ember_weight *w, float *x, size_t n)
{
    if (w->dtype == EMBER_F16) ember_ref_scale_f16r(x, 1.0f, (int)n);
}

/* The matrix expert e's input rows go into first: gate_up, gate, or (an
   ungated activation) up; the slabs of a layer share one dtype */
static const ember_weight *expert_in(const ember_moe *moe, int e)
{
    return moe->gate_up ? &moe->gate_up[e] : moe->gate ? &moe->gate[e] : &moe->up[e];
}

/* One token's MoE FFN after routing, in two jobs on the pool instead of
   three per expert: every chosen expert's gate and up products (one
   quantized input), then every down product, each on its own expert's
   activated row (the K rows quantized together). */
static void moe_one_token(ember_session *s, const ember_moe *moe, int F)
{
    const ember_model *m = s->m;
    const int K = m->info.n_expert_used;
    const int *sel = s->moe_sel;
    ember_mm_job j;
    ember_mm_start(&j, 1);
    /* gate and up (or gate_up) of each chosen expert; ungated: up alone, into g */
    const bool ungated = !moe->gate && !moe->gate_up;
    const int nw = moe->gate_up || ungated ? K : 2 * K;
    /* (the shared expert and the router have read s->xn already) */
    round_to_vec_dot(expert_in(moe, sel[0]), s->xn, (size_t)m->info.n_embd);
    for (int k = 0; k < nw; k++) {
        const ember_weight *w = moe->gate_up ? &moe->gate_up[sel[k]]
                                : ungated  ? &moe->up[sel[k]]
                                : k < K    ? &moe->gate[sel[k]]
                                           : &moe->up[sel[k - K]];
        size_t stride;
        const void *xq = ember_mm_act(s, w->one.kern, w->in, s->xn, 1, &stride);
        float *y = moe->gate_up ? s->fused + (size_t)k * 2 * F : (k < K ? s->g : s->u) + (size_t)(k % K) * F;
        ember_mm_add(&j, w, y, xq, stride);
    }
    ember_mm_finish(s, &j);
    if (moe->gate_up) split_gate_up(s, 0, K, F);
    for (int k = 0; k < K; k++) {
        if (moe->gate_b) {   /* each chosen expert's biases on its rows */
            ember_fw_add_into(s->g + (size_t)k * F, moe->gate_b + (size_t)sel[k] * F, F);
            ember_fw_add_into(s->u + (size_t)k * F, moe->up_b + (size_t)sel[k] * F, F);
        }
        ember_fw_ffn_act(m)(s->g + (size_t)k * F, s->u + (size_t)k * F, F);
    }
    round_to_vec_dot(&moe->down[sel[0]], s->g, (size_t)K * F);
    ember_mm_act_dirty(s);
    ember_mm_start(&j, 1);
    size_t stride;
    /* the K rows of g as K tokens: one quantization, row k for expert k
       (the down slabs of a layer share one dtype, so one activation type) */
    const uint8_t *xq = ember_mm_act(s, moe->down[sel[0]].one.kern, F, s->g, K, &stride);
    for (int k = 0; k < K; k++)
        ember_mm_add(&j, &moe->down[sel[k]], s->moe_out + (size_t)s->moe_place[k] * m->info.n_embd, xq + (size_t)k * stride,
               stride);
    ember_mm_finish(s, &j);
    const int E = m->info.n_embd;
    for (int k = 0; k < K && moe->down_b; k++)
        ember_fw_add_into(s->moe_out + (size_t)s->moe_place[k] * E, moe->down_b + (size_t)sel[k] * E, E);
    for (int k = 0; k < K && moe->down_s; k++)
        scale_rows(s->moe_out + (size_t)s->moe_place[k] * E, moe->down_s[sel[k]], E, 1);
    ember_mm_act_dirty(s);
}

/* A prompt's experts after routing: each expert once over the rows of
   the tokens that chose it (gathered from s->xn), its outputs into the
   grouped rows of s->moe_out */
static void moe_experts(ember_session *s, const ember_moe *moe, int F)
{
    const ember_model *m = s->m;
    const int E = m->info.n_embd, NE = m->info.n_expert, K = m->info.n_expert_used;
    const int *first = s->moe_first;
    for (int e = 0; e < NE; e++) {
        const int p0 = first[e], cnt = first[e + 1] - p0;
        if (!cnt) continue;
        for (int i = 0; i < cnt; i++)
            memcpy(s->moe_x + (size_t)i * E, s->xn + (size_t)(s->moe_pair[p0 + i] / K) * E, (size_t)E * sizeof(float));
        round_to_vec_dot(expert_in(moe, e), s->moe_x, (size_t)cnt * E);
        ember_mm_act_dirty(s);   /* moe_x holds another expert's rows than last time */
        if (moe->gate_up) {
            ember_mm(s, &moe->gate_up[e], s->fused, s->moe_x, cnt);
            split_gate_up(s, 0, cnt, F);
        } else if (!moe->gate) {   /* ungated: the up rows are the activation's input */
            ember_mm(s, &moe->up[e], s->g, s->moe_x, cnt);
        } else {
            const ember_weight *gu[2] = {&moe->gate[e], &moe->up[e]};
            float *gy[2] = {s->g, s->u};
            ember_mm_n(s, gu, gy, 2, s->moe_x, cnt);
        }
        if (moe->gate_b) {
            ember_fw_add_bias(s, s->g, moe->gate_b + (size_t)e * F, F, (size_t)F, cnt);
            ember_fw_add_bias(s, s->u, moe->up_b + (size_t)e * F, F, (size_t)F, cnt);
        }
        ember_fw_glu(s, s->g, s->u, F, (size_t)F, ember_fw_ffn_act(m), cnt);
        round_to_vec_dot(&moe->down[e], s->g, (size_t)cnt * F);
        ember_mm_act_dirty(s);
        ember_mm(s, &moe->down[e], s->moe_out + (size_t)p0 * E, s->g, cnt);
        if (moe->down_b) ember_fw_add_bias(s, s->moe_out + (size_t)p0 * E, moe->down_b + (size_t)e * E, E, (size_t)E, cnt);
        if (moe->down_s) scale_rows(s->moe_out + (size_t)p0 * E, moe->down_s[e], E, cnt);
    }
}

/* s->xn = the dense branch's rows (s->moe_sh) + the experts' normed sum
   in s->xn, the reference's order of the add */
static void add_shared_tokens(ember_session *s, const void *ctx, int t0, int t1, int ith)
{
    (void)ctx;
    (void)ith;
    const size_t E = (size_t)s->m->info.n_embd;
    for (size_t i = (size_t)t0 * E; i < (size_t)t1 * E; i++) s->xn[i] = s->moe_sh[i] + s->xn[i];
}

/* The FFN block of an MoE layer: the router, then each expert once over
   the rows of the tokens that chose it (gathered), its outputs into the
   grouped rows of s->moe_out, then the weighted sum into the residual;
   beside a dense FFN (Gemma 4) each branch normed before and after. */
void ember_moe_ffn(ember_session *s, int l, int n, const float *scale)
{
    const ember_model *m = s->m;
    const ember_layer *L = &m->layers[l];
    const ember_moe *moe = L->moe;
    const int F = L->n_ff, NE = m->info.n_expert, K = m->info.n_expert_used;
    ember_fw_norm_rows(s, s->xn, s->x, L->ffn_norm, n);
    ember_mm_act_dirty(s);
    /* beside a dense FFN the router reads rows of its own, after the
       shared (dense) branch has read the normed ones */
    const bool beside = moe->router_s != NULL;
    if (!beside) {
        ember_mm(s, &moe->router, s->moe_logits, s->xn, n);
        ember_fw_tokens(s, n, route_tokens, moe);
    }
    /* the shared expert on the normed rows, before the routed ones' sum
       takes their place */
    const bool shared = moe->sh_up.t != NULL;
    if (shared) {
        const int FS = (int)moe->sh_up.out;
        if (moe->sh_gate.t) {
            const ember_weight *gu[2] = {&moe->sh_gate, &moe->sh_up};
            float *gy[2] = {s->g, s->u};
            ember_mm_n(s, gu, gy, 2, s->xn, n);
        } else {   /* ungated: the up rows are the activation's input */
            ember_mm(s, &moe->sh_up, s->g, s->xn, n);
        }
        ember_fw_glu(s, s->g, s->u, FS, (size_t)FS, ember_fw_ffn_act(m), n);
        ember_mm_act_dirty(s);
        ember_mm(s, &moe->sh_down, s->moe_sh, s->g, n);
        if (moe->sh_gate_inp) ember_fw_tokens(s, n, shexp_gate_tokens, moe->sh_gate_inp);
        if (moe->post_norm_1) ember_fw_norm_rows(s, s->moe_sh, s->moe_sh, moe->post_norm_1, n);
    }
    if (beside) {
        ember_fw_tokens(s, n, router_in_tokens, moe->router_s);
        ember_mm_act_dirty(s);
        ember_mm(s, &moe->router, s->moe_logits, s->xn, n);
        ember_fw_tokens(s, n, route_tokens, moe);
        ember_fw_norm_rows(s, s->xn, s->x, moe->pre_norm_2, n);
        ember_mm_act_dirty(s);
    }
    /* (token, slot) pairs grouped by expert, in token order within one */
    int *first = s->moe_first;
    memset(first, 0, (size_t)(NE + 1) * sizeof *first);
    for (int i = 0; i < n * K; i++) first[s->moe_sel[i] + 1]++;
    for (int e = 0; e < NE; e++) first[e + 1] += first[e];
    for (int i = 0; i < n * K; i++) {
        const int p = first[s->moe_sel[i]]++;
        s->moe_pair[p] = i;
        s->moe_place[i] = p;
    }
    for (int e = NE; e > 0; e--) first[e] = first[e - 1];
    first[0] = 0;
    if (n == 1 && 2 * K <= EMBER_MM_ITEMS) {
        moe_one_token(s, moe, F);
    } else {
        moe_experts(s, moe, F);
    }
    /* beside a dense FFN: the experts' sum normed, then the dense branch
       added to it (the reference's order) */
    ember_fw_tokens(s, n, moe_sum_tokens, shared && !beside ? s : NULL);
    if (beside) {
        ember_fw_norm_rows(s, s->xn, s->xn, moe->post_norm_2, n);
        ember_fw_tokens(s, n, add_shared_tokens, NULL);
    }
    ember_mm_act_dirty(s);
    ember_fw_residual(s, n, L->post_ffn_norm, scale);
}

/* ---- binding: the layer kind's tensors from the file ---- */

/* Mixtral files converted before April 2024 keep each expert in its own
   2-D tensor, blk.N.ffn_gate.E.weight for blk.N.ffn_gate_exps.weight:
   bound as n matrices, one record of the plan as a 3-D tensor's. */
static int bind_expert_tensors(ember_model *m, ember_weight **out, const char *name, int64_t in, int64_t rows, int n,
                               int proj, ember_err *err)
{
    const char *suffix = strstr(name, "_exps.weight");
    if (!suffix || suffix[12]) return ember_seterr(err, "tensor '%s' is missing", name);
    ember_weight *ws = calloc((size_t)n, sizeof *ws);
    if (!ws) return ember_seterr(err, "out of memory");
    *out = ws;
    int rc = 0;
    char nm[128];
    for (int e = 0; e < n && !rc; e++) {
        snprintf(nm, sizeof nm, "%.*s.%d.weight", (int)(suffix - name), name, e);
        if (e == 0 && !gguf_find_tensor(m->f, nm)) return ember_seterr(err, "tensor '%s' is missing", name);
        ember_bind_weight(m, &ws[e], nm, in, rows, proj, err, &rc);
        if (!rc && ws[e].dtype != ws[0].dtype)
            rc = ember_seterr(err, "tensor '%s' is %s where expert 0's is %s", nm, ember_dtype_name(ws[e].dtype),
                              ember_dtype_name(ws[0].dtype));
    }
    return rc ? rc : ember_plan_experts(m, ws, n, err);
}

/* An MoE's n experts: one 3-D tensor's slabs, or (old Mixtral files) a
   2-D tensor each; one record of the plan. */
static int bind_experts(ember_model *m, ember_weight **out, const char *name, int64_t in, int64_t rows, int n,
                        int proj, ember_err *err)
{
    if (!gguf_find_tensor(m->f, name)) return bind_expert_tensors(m, out, name, in, rows, n, proj, err);
    int rc = ember_bind_slabs(m, out, name, in, rows, n, proj, err);
    return rc ? rc : ember_plan_experts(m, *out, n, err);
}

/* Layer l's mixture of experts (model.h, ember_moe): the router, then
   the experts' gate and up (or gate_up) and down slabs of L->n_ff rows. */
int ember_moe_bind(ember_model *m, ember_layer *L, int l, ember_err *err)
{
    const int64_t E = m->info.n_embd, F = L->n_ff;
    const int n = m->info.n_expert;
    char nm[96];
    int rc = 0;
    if (!(L->moe = calloc(1, sizeof *L->moe))) return ember_seterr(err, "out of memory");
    /* experts of an ungated activation (Nemotron-H's squared ReLU): up and down alone */
    const bool ungated = ember_ffn_ungated(m->arch->act);
    /* Nemotron 3 Super's experts in a latent of their own: not read */
    snprintf(nm, sizeof nm, "blk.%d.ffn_latent_down.weight", l);
    if (gguf_find_tensor(m->f, nm))
        return ember_seterr(err, "tensor '%s': experts in a latent projection (Nemotron 3 Super) are not supported", nm);
    snprintf(nm, sizeof nm, "blk.%d.ffn_gate_inp.weight", l);
    ember_bind_weight(m, &L->moe->router, nm, E, n, 0, err, &rc);
    if (!rc) rc = ember_plan_weight(m, &L->moe->router, err);
    /* gate and up in one slab (converters since 2026 for Gemma 4), or apart */
    snprintf(nm, sizeof nm, "blk.%d.ffn_gate_up_exps.weight", l);
    if (!rc && gguf_find_tensor(m->f, nm)) {
        if (m->arch->flags & ARCH_EXPERT_BIAS)
            return ember_seterr(err, "tensor '%s': experts with biases are read with gate and up apart", nm);
        rc = bind_experts(m, &L->moe->gate_up, nm, E, 2 * F, n, EMBER_PROJ_GATE | EMBER_PROJ_UP, err);
    } else {
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_exps.weight", l);
        if (!rc && !ungated) rc = bind_experts(m, &L->moe->gate, nm, E, F, n, EMBER_PROJ_GATE, err);
        snprintf(nm, sizeof nm, "blk.%d.ffn_up_exps.weight", l);
        if (!rc) rc = bind_experts(m, &L->moe->up, nm, E, F, n, EMBER_PROJ_UP, err);
    }
    snprintf(nm, sizeof nm, "blk.%d.ffn_down_exps.weight", l);
    if (!rc) rc = bind_experts(m, &L->moe->down, nm, F, E, n, EMBER_PROJ_DOWN, err);
    snprintf(nm, sizeof nm, "blk.%d.exp_probs_b.bias", l);
    if (!rc) L->moe->sel_bias = ember_load_vec(m, nm, n, false, err, &rc);
    if (!rc && m->arch->flags & ARCH_EXPERT_BIAS) {
        ember_moe *x = L->moe;
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_inp.bias", l);
        x->router_b = ember_load_vec(m, nm, n, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_exps.bias", l);
        if (!rc) x->gate_b = ember_load_f32(m, nm, F, n, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.ffn_up_exps.bias", l);
        if (!rc) x->up_b = ember_load_f32(m, nm, F, n, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.ffn_down_exps.bias", l);
        if (!rc) x->down_b = ember_load_f32(m, nm, E, n, true, err, &rc);
    }
    if (!rc) {
        snprintf(nm, sizeof nm, "blk.%d.ffn_down_exps.scale", l);
        L->moe->down_s = ember_load_vec(m, nm, n, false, err, &rc);
    }
    /* beside a dense FFN (Gemma 4): its norms, and the dense FFN is the
       shared expert */
    const bool beside = m->arch->flags & ARCH_MOE_BESIDE_DENSE;
    if (!rc && beside) {
        ember_moe *x = L->moe;
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_inp.scale", l);
        x->router_s = ember_load_vec(m, nm, E, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.pre_ffw_norm_2.weight", l);
        if (!rc) x->pre_norm_2 = ember_load_vec(m, nm, E, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.post_ffw_norm_1.weight", l);
        if (!rc) x->post_norm_1 = ember_load_vec(m, nm, E, true, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.post_ffw_norm_2.weight", l);
        if (!rc) x->post_norm_2 = ember_load_vec(m, nm, E, true, err, &rc);
    }
    /* a shared expert, as wide as its tensors say (its up's, ungated) */
    const char *sh = beside ? "" : "_shexp";
    snprintf(nm, sizeof nm, "blk.%d.ffn_%s%s.weight", l, ungated ? "up" : "gate", sh);
    const gguf_tensor *sg = rc ? NULL : gguf_find_tensor(m->f, nm);
    if (!rc && !sg && beside) return ember_seterr(err, "tensor '%s' is missing", nm);
    if (sg) {
        const int64_t FS = sg->n_dims == 2 ? sg->ne[1] : 0;
        if (FS < 1 || FS > (1 << 20)) return ember_seterr(err, "tensor '%s' is not a matrix of n_embd columns", nm);
        ember_moe *x = L->moe;
        if (!ungated) ember_bind_weight(m, &x->sh_gate, nm, E, FS, EMBER_PROJ_GATE, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.ffn_up%s.weight", l, sh);
        if (!rc) ember_bind_weight(m, &x->sh_up, nm, E, FS, EMBER_PROJ_UP, err, &rc);
        snprintf(nm, sizeof nm, "blk.%d.ffn_down%s.weight", l, sh);
        if (!rc) ember_bind_weight(m, &x->sh_down, nm, FS, E, EMBER_PROJ_DOWN, err, &rc);
        for (int i = ungated; i < 3 && !rc; i++)
            rc = ember_plan_weight(m, i == 0 ? &x->sh_gate : i == 1 ? &x->sh_up : &x->sh_down, err);
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_inp_shexp.weight", l);
        if (!rc) x->sh_gate_inp = ember_load_vec(m, nm, E, false, err, &rc);
        if (FS > m->max_ff) m->max_ff = (int)FS;
    }
    return rc;
}

void ember_moe_free(ember_moe *moe, int n)
{
    if (!moe) return;
    free(moe->router.f32);
    free(moe->sel_bias);
    free(moe->sh_gate_inp);
    free(moe->router_b);
    free(moe->gate_b);
    free(moe->up_b);
    free(moe->down_b);
    free(moe->sh_gate.f32);
    free(moe->sh_up.f32);
    free(moe->sh_down.f32);
    free(moe->down_s);
    free(moe->router_s);
    free(moe->pre_norm_2);
    free(moe->post_norm_1);
    free(moe->post_norm_2);
    ember_weight *sets[4] = {moe->gate, moe->up, moe->down, moe->gate_up};   /* NULL where absent */
    for (int i = 0; i < 4; i++) {
        for (int e = 0; sets[i] && e < n; e++) free(sets[i][e].f32);
        free(sets[i]);
    }
    free(moe);
}
