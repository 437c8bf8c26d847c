/* Model loading: hyper-parameters from metadata (hparams.c), tensor
   binding with shape checks; each matrix's representation is the plan's
   (plan.c), packing at a phase the lifecycle's (lifecycle.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "altup.h"
#include "bind.h"
#include "deltanet.h"
#include "dtype.h"
#include "hparams.h"
#include "mla.h"
#include "model.h"
#include "moe.h"
#include "packcache.h"
#include "plan.h"
#include "shortconv.h"
#include "mamba2.h"
#include "tokenizer.h"

int ember_model_peek(const char *path, ember_model_info *info, ember_err *err)
{
    gguf_file *f = gguf_open(path, err);
    if (!f) return -1;
    ember_err e2;
    int rc = ember_read_hparams(f, info, NULL, &e2);
    if (rc) ember_seterr(err, "%s: %s", path, e2.msg);
    gguf_close(f);
    return rc;
}

/* Lists every matrix weight once (ember_model_weights): with experts, a
   model has tens of thousands (48 layers x 3 x 128 in Qwen3-30B-A3B). */
static int list_weights(ember_model *m, ember_err *err)
{
    const int X = m->info.n_expert;
    const size_t NH = m->info.n_head;
    size_t cap = (size_t)m->info.n_layer * (22 + MLA_WEIGHTS + 3 * (size_t)X + 2 * NH) + 2 + 2 * (size_t)m->n_altup, n = 0;
    if (!(m->all_w = malloc(cap * sizeof *m->all_w))) return ember_seterr(err, "out of memory");
    for (int l = 0; l < m->info.n_layer; l++) {
        ember_layer *L = &m->layers[l];
        ember_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wqkv, &L->wo, &L->gate, &L->up, &L->gate_up, &L->down,
                              &L->pl_gate, &L->pl_proj};
        for (int i = 0; i < 11; i++)
            if (ws[i]->t) m->all_w[n++] = ws[i];
        for (int e = 0; L->moe && e < X; e++) {
            if (L->moe->gate_up) {
                m->all_w[n++] = &L->moe->gate_up[e];
            } else {
                if (L->moe->gate) m->all_w[n++] = &L->moe->gate[e];   /* none ungated */
                m->all_w[n++] = &L->moe->up[e];
            }
            m->all_w[n++] = &L->moe->down[e];
        }
        if (L->dn) {
            ember_weight *d[DN_WEIGHTS];
            for (int i = 0, nw = ember_dn_weights(L->dn, d); i < nw; i++)
                if (d[i]->t) m->all_w[n++] = d[i];
        }
        if (L->sc) {
            m->all_w[n++] = &L->sc->in;
            m->all_w[n++] = &L->sc->out;
        }
        if (L->m2) {
            m->all_w[n++] = &L->m2->in;
            m->all_w[n++] = &L->m2->out;
        }
        if (L->mla) {
            ember_weight *d[MLA_WEIGHTS];
            for (int i = 0, nw = ember_mla_weights(L->mla, d); i < nw; i++)
                if (d[i]->t) m->all_w[n++] = d[i];
            /* the file's per-head slabs (not k_bt's transposed rows) */
            for (size_t h = 0; h < NH; h++) {
                if (!L->mla->k_bt) m->all_w[n++] = &L->mla->k_b[h];
                m->all_w[n++] = &L->mla->v_b[h];
            }
        }
        if (L->alt) {
            m->all_w[n++] = &L->alt->laurel_l;
            m->all_w[n++] = &L->alt->laurel_r;
            m->all_w[n++] = &L->alt->router;
        }
        if (L->moe && L->moe->sh_up.t) {
            if (L->moe->sh_gate.t) m->all_w[n++] = &L->moe->sh_gate;   /* none ungated */
            m->all_w[n++] = &L->moe->sh_up;
            m->all_w[n++] = &L->moe->sh_down;
        }
    }
    if (m->pl_model_proj.t) m->all_w[n++] = &m->pl_model_proj;
    for (int i = 0; i + 1 < m->n_altup; i++) {
        m->all_w[n++] = &m->altup_proj[i];
        m->all_w[n++] = &m->altup_unembd[i];
    }
    m->all_w[n++] = &m->output;
    m->n_all_w = (int)n;
    return 0;
}

ember_weight *const *ember_model_weights(const ember_model *m, int *n)
{
    *n = m->n_all_w;
    return m->all_w;
}

ember_weight **ember_model_weights_to_pack(const ember_model *m, int *k)
{
    ember_weight **todo = malloc(((size_t)m->n_all_w + 1) * sizeof *todo);
    *k = 0;
    for (int i = 0; todo && i < m->n_all_w; i++)
        if (m->all_w[i]->pack_kern) todo[(*k)++] = m->all_w[i];
    return todo;
}

/* YaRN's correction range over the pairs of an n_rot rotation at base:
   the dims whose wavelength fits beta times into the original context,
   floored and ceiled as the reference does. */
static float yarn_corr_dim(int n_rot, int n_ctx_orig, float beta, float base)
{
    return (float)n_rot * logf((float)n_ctx_orig / (beta * 2 * (float)M_PI)) / (2 * logf(base));
}

/* The rope of layer l: global layers use the file's base, scaling and
   rope_freqs; sliding layers, where the architecture gives them their own
   rope, their own base and dims (arch.h). */
static int layer_rope(ember_model *m, ember_layer *L, ember_err *err)
{
    const ember_arch_desc *a = m->arch;
    L->rope = (ember_rope_cfg){m->rope_base, m->rope_freq_scale, m->rope_attn_factor, m->rope_ext_factor, 0, 0,
                               m->rope_freqs, m->n_rot};
    if (a->flags & ARCH_LONGROPE && m->rope_long) L->rope.ff = NULL;   /* the session's: long or short by its context */
    ember_meta mt = {m->f, a->name, err, 0};
    if (L->swa && a->flags & ARCH_SWA_OWN_ROPE) {
        /* sliding layers rotate their own head dim, without rope_freqs */
        L->rope.ff = NULL;
        if (ember_meta_opt_u(&mt, "rope.dimension_count_swa", 2, L->head_dim, &L->rope.n_rot,
                  m->n_rot < L->head_dim ? m->n_rot : L->head_dim))
            return -1;
        if (L->rope.n_rot % 2) return ember_seterr(err, "%s.rope.dimension_count_swa %d is odd", a->name, L->rope.n_rot);
        if (a->swa_rope_base > 0) {
            L->rope.base = a->swa_rope_base;
            if (a->flags & ARCH_SWA_BASE_KEY &&
                ember_meta_opt_f(&mt, "rope.freq_base_swa", &L->rope.base, a->swa_rope_base, false))
                return -1;
            L->rope.freq_scale = 1.0f;
            L->rope.ext_factor = 0.0f;
        } else {
            if (ember_meta_opt_f(&mt, "rope.freq_base_swa", &L->rope.base, m->rope_base, false)) return -1;
            L->rope.freq_scale = m->rope_freq_scale_swa;
        }
    }
    if (L->swa && a->flags & ARCH_SWA_MAY) {
        /* OLMo 3's sliding layers: the plain rotation at their base */
        if (ember_meta_opt_f(&mt, "rope.freq_base_swa", &L->rope.base, m->rope_base, false)) return -1;
        L->rope.freq_scale = L->rope.mscale = 1.0f;
        L->rope.ext_factor = 0.0f;
    }
    /* NoPE layers: no pair rotates (a table of zero dims, a no-op rope) */
    if (a->nope_period && (int)(L - m->layers + 1) % a->nope_period == 0) L->rope.n_rot = 0;
    if (m->no_rope) L->rope.n_rot = 0;
    if (L->rope.ext_factor != 0 && L->rope.n_rot) {
        float lo = floorf(yarn_corr_dim(L->rope.n_rot, m->n_ctx_orig, m->yarn_beta_fast, L->rope.base));
        float hi = ceilf(yarn_corr_dim(L->rope.n_rot, m->n_ctx_orig, m->yarn_beta_slow, L->rope.base));
        L->rope.corr_lo = lo > 0 ? lo : 0;
        L->rope.corr_hi = hi < (float)(L->rope.n_rot - 1) ? hi : (float)(L->rope.n_rot - 1);
    }
    return 0;
}

/* Whether layer l slides, and its window: every layer (phi3), the file's
   per-layer pattern (gemma4: true = sliding) or period (OLMo 3), else the
   architecture's period (gemma3). */
static int layer_swa(ember_model *m, int l, int *swa, ember_err *err)
{
    *swa = 0;
    if (!m->n_swa) return 0;
    if (m->arch->flags & ARCH_SWA_ALL) {
        *swa = m->n_swa;
        return 0;
    }
    char key[128];
    snprintf(key, sizeof key, "%s.attention.sliding_window_pattern", m->arch->name);
    const gguf_kv *kv = gguf_find(m->f, key);
    int P = m->arch->swa_period;
    int64_t period;
    if (kv && kv->type != GGUF_T_ARRAY && gguf_get_i64(m->f, key, &period)) {
        /* a period (OLMo 3's files): layer il slides unless il % P == P - 1 */
        if (period < 0 || period > 1 << 20) return ember_seterr(err, "metadata key '%s' = %lld is no layer period", key, (long long)period);
        P = (int)period;
    } else if (kv) {
        if (kv->type != GGUF_T_ARRAY || kv->arr_type != GGUF_T_BOOL || kv->arr_n != (uint64_t)m->info.n_layer)
            return ember_seterr(err, "metadata key '%s' is not a bool array of %d (one per layer)", key, m->info.n_layer);
        *swa = kv->arr_data[l] ? m->n_swa : 0;
        return 0;
    }
    *swa = P && l % P != P - 1 ? m->n_swa : 0;
    return 0;
}


static int bind_layers(ember_model *m, ember_err *err)
{
    const ember_model_info *I = &m->info;
    const uint64_t fl = m->arch->flags;
    int rc = 0;
    m->layers = calloc((size_t)I->n_layer, sizeof *m->layers);
    if (!m->layers) return ember_seterr(err, "out of memory");
    char nm[96];
#define NAME(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    for (int l = 0; l < I->n_layer && !rc; l++) {
        ember_layer *L = &m->layers[l];
        ember_meta mt = {m->f, m->arch->name, err, m->n_blocks};
        rc = ember_meta_layer_u(&mt, "feed_forward_length", l, I->n_layer, fl & ARCH_ONE_BLOCK ? 0 : 1, 1 << 20, &L->n_ff, 0,
                                true);
        if (!rc)
            rc = ember_meta_layer_u(&mt, "attention.head_count_kv", l, I->n_layer, fl & (ARCH_SHORTCONV | ARCH_MAMBA2) ? 0 : 1, 4096,
                                    &L->n_head_kv, I->n_head, false);
        /* an MoE layer's FFN width is its experts' (beside a dense FFN:
           the layers with a router) */
        const bool moe = I->n_expert && (fl & ARCH_MOE_BESIDE_DENSE
                                              ? gguf_find_tensor(m->f, NAME("ffn_gate_inp.weight")) != NULL
                                              : fl & ARCH_ONE_BLOCK   /* Nemotron-H: its FFN layers */
                                              ? L->n_ff > 0
                                              : l >= m->moe_lead && (l + 1) % m->moe_step == 0);
        if (!rc && moe) rc = ember_meta_req_u(&mt, "expert_feed_forward_length", 1, 1 << 20, &L->n_ff);
        if (!rc) rc = layer_swa(m, l, &L->swa, err);
        if (fl & ARCH_MLA) L->n_head_kv = 1;   /* the latent row, shared by every head */
        L->head_dim = I->head_dim;
        if (!rc && L->swa && ember_meta_opt_u(&mt, "attention.key_length_swa", 2, 1 << 14, &L->head_dim, I->head_dim)) rc = -1;
        if (!rc && L->head_dim % 2) rc = ember_seterr(err, "%s.attention.key_length_swa %d is odd", I->arch, L->head_dim);
        /* shared-KV layers read the last layer of their kind that has a KV cache */
        L->kv_src = l;
        for (int j = m->n_layer_kv - 1; l >= m->n_layer_kv && j >= 0; j--)
            if (!m->layers[j].swa == !L->swa) {
                L->kv_src = j;
                break;
            }
        if (!rc && L->kv_src == l && l >= m->n_layer_kv)
            rc = ember_seterr(err, "layer %d shares the KV of an earlier layer of its kind, and there is none", l);
        if (!rc && L->kv_src != l && (m->layers[L->kv_src].head_dim != L->head_dim ||
                                      m->layers[L->kv_src].n_head_kv != L->n_head_kv))
            rc = ember_seterr(err, "layer %d shares layer %d's KV but their head dims or KV heads differ", l, L->kv_src);
        const bool own_kv = L->kv_src == l;
        const bool dn = fl & ARCH_DELTANET && (l + 1) % m->dn.interval != 0;
        const bool sc = fl & ARCH_SHORTCONV && L->n_head_kv == 0;   /* a short convolution (LFM2) */
        /* a Mamba-2 layer (Granite 4.0-H; Nemotron-H's have no FFN either) */
        const bool par_ssm = fl & ARCH_PARALLEL_SSM;   /* Falcon-H1: Mamba-2 beside attention in every layer */
        const bool m2 = fl & ARCH_MAMBA2 && (par_ssm || (L->n_head_kv == 0 && (!(fl & ARCH_ONE_BLOCK) || L->n_ff == 0)));
        /* Nemotron-H: an FFN alone, on the layer's one norm */
        const bool ffn_only = fl & ARCH_ONE_BLOCK && L->n_ff > 0;
        const bool rec = dn || sc || (m2 && !par_ssm) || ffn_only;   /* no attention */
        int64_t E = I->n_embd, HQ = (int64_t)I->n_head * L->head_dim, HK = (int64_t)L->n_head_kv * L->head_dim;
        int64_t F = L->n_ff;
        if (!rc) rc = layer_rope(m, L, err);
        if (!rc && par_ssm) rc = ember_m2_bind(m, L, l, err);
        if (!rc && !(fl & ARCH_NO_PRE_NORMS)) L->attn_norm = ember_load_vec(m, NAME("attn_norm.weight"), E, true, err, &rc);
        if (!rc && ffn_only)
            L->ffn_norm = ember_load_vec(m, NAME("attn_norm.weight"), E, true, err, &rc);
        else if (!rc && !m->parallel && !(fl & ARCH_NO_PRE_NORMS) && !(fl & ARCH_ONE_BLOCK))   /* parallel: the FFN reads the attention norm's rows */
            L->ffn_norm = ember_load_vec(m, fl & ARCH_FFN_NORM_POST ? NAME("post_attention_norm.weight")
                                            : par_ssm && !gguf_find_tensor(m->f, NAME("ffn_norm.weight"))
                                            ? NAME("ffn_norm")   /* as the reference names Falcon-H1's */
                                            : NAME("ffn_norm.weight"),
                                   E, true, err, &rc);
        if (!rc && fl & ARCH_LAYERNORM) L->attn_norm_b = ember_load_vec(m, NAME("attn_norm.bias"), E, false, err, &rc);
        if (!rc && fl & ARCH_LAYERNORM && !m->parallel) L->ffn_norm_b = ember_load_vec(m, NAME("ffn_norm.bias"), E, false, err, &rc);
        if (!rc && dn) {
            rc = ember_dn_bind(m, L, l, err);
        } else if (!rc && sc) {
            rc = ember_sc_bind(m, L, l, err);
        } else if (!rc && m2 && !par_ssm) {
            rc = ember_m2_bind(m, L, l, err);
        } else if (!rc && fl & ARCH_MLA) {
            rc = ember_mla_bind(m, L, l, err);
        } else if (!rc && fl & ARCH_FUSED_QKV && gguf_find_tensor(m->f, NAME("attn_qkv.weight"))) {
            ember_bind_weight(m, &L->wqkv, nm, E, HQ + 2 * HK, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
            if (!rc) L->bqkv = ember_load_vec(m, NAME("attn_qkv.bias"), HQ + 2 * HK, false, err, &rc);
        } else if (!rc && !ffn_only) {
            /* gated attention: each head's query rows, then its gate's */
            ember_bind_weight(m, &L->wq, NAME("attn_q.weight"), E, fl & ARCH_GATED_ATTN ? 2 * HQ : HQ, EMBER_PROJ_Q, err, &rc);
            if (!rc && own_kv) ember_bind_weight(m, &L->wk, NAME("attn_k.weight"), E, HK, EMBER_PROJ_K, err, &rc);
            /* gemma4 31B's full layers have no attn_v: V is K's projection */
            const bool v_from_k = fl & ARCH_V_FROM_K && !gguf_find_tensor(m->f, NAME("attn_v.weight"));
            if (!rc && own_kv && !v_from_k)
                ember_bind_weight(m, &L->wv, NAME("attn_v.weight"), E, HK, EMBER_PROJ_V, err, &rc);
        }
        /* a latent attention's heads give v values each to attn_output */
        const int64_t HO = fl & ARCH_MLA ? (int64_t)I->n_head * m->mla.v : HQ;
        if (!rc && !rec) ember_bind_weight(m, &L->wo, NAME("attn_output.weight"), HO, E, EMBER_PROJ_O, err, &rc);
        if (!rc && F == 0) {
            /* no FFN (Nemotron-H's attention and Mamba-2 layers) */
        } else if (!rc && moe) {
            rc = ember_moe_bind(m, L, l, err);
        } else if (!rc && fl & ARCH_FUSED_GATE_UP && !gguf_find_tensor(m->f, NAME("ffn_gate.weight"))) {
            ember_bind_weight(m, &L->gate_up, NAME("ffn_up.weight"), E, 2 * F, EMBER_PROJ_GATE | EMBER_PROJ_UP, err, &rc);
        } else if (!rc && ember_ffn_ungated(m->arch->act)) {   /* no gate, biases where the file has them */
            ember_bind_weight(m, &L->up, NAME("ffn_up.weight"), E, F, EMBER_PROJ_UP, err, &rc);
            if (!rc) L->up_b = ember_load_vec(m, NAME("ffn_up.bias"), F, false, err, &rc);
            if (!rc) L->down_b = ember_load_vec(m, NAME("ffn_down.bias"), E, false, err, &rc);
        } else if (!rc) {
            ember_bind_weight(m, &L->gate, NAME("ffn_gate.weight"), E, F, EMBER_PROJ_GATE, err, &rc);
            if (!rc) ember_bind_weight(m, &L->up, NAME("ffn_up.weight"), E, F, EMBER_PROJ_UP, err, &rc);
        }
        if (!rc && !L->moe && F > 0) ember_bind_weight(m, &L->down, NAME("ffn_down.weight"), F, E, EMBER_PROJ_DOWN, err, &rc);
        bool bias = fl & ARCH_QKV_BIAS;
        if (!rc && !L->wqkv.t && own_kv && !rec && !L->mla) {
            L->bq = ember_load_vec(m, NAME("attn_q.bias"), HQ, bias, err, &rc);
            if (!rc) L->bk = ember_load_vec(m, NAME("attn_k.bias"), HK, bias, err, &rc);
            if (!rc) L->bv = ember_load_vec(m, NAME("attn_v.bias"), HK, bias, err, &rc);
        }
        if (!rc && fl & ARCH_O_BIAS) L->bo = ember_load_vec(m, NAME("attn_output.bias"), E, true, err, &rc);
        if (!rc && fl & ARCH_ATT_SINKS) L->sinks = ember_load_vec(m, NAME("attn_sinks.weight"), I->n_head, true, err, &rc);
        /* Q/K norms: required where the architecture has them, else where
           the file has them (GLM-4.5's use_qk_norm) */
        if (!rc && !rec && !L->mla) {
            const bool qk = fl & ARCH_QK_NORM, full = fl & ARCH_QK_NORM_FULL;
            L->q_norm = ember_load_vec(m, NAME("attn_q_norm.weight"), full ? HQ : L->head_dim, qk, err, &rc);
            if (!rc && own_kv) L->k_norm = ember_load_vec(m, NAME("attn_k_norm.weight"), full ? HK : L->head_dim, qk, err, &rc);
        }
        if (!rc && fl & ARCH_ALTUP) rc = ember_altup_bind(m, L, l, err);
        if (!rc && m->n_pl) {
            ember_bind_weight(m, &L->pl_gate, NAME("inp_gate.weight"), E, m->n_pl, EMBER_PROJ_PER_LAYER, err, &rc);
            if (!rc) ember_bind_weight(m, &L->pl_proj, NAME("proj.weight"), m->n_pl, E, EMBER_PROJ_PER_LAYER, err, &rc);
            if (!rc) L->pl_post_norm = ember_load_vec(m, NAME("post_norm.weight"), E, true, err, &rc);
        }
        if (!rc) L->out_scale = ember_load_vec(m, NAME("layer_output_scale.weight"), 1, false, err, &rc);
        if (!rc && fl & ARCH_POST_NORMS) {
            L->post_attn_norm = ember_load_vec(m, NAME("post_attention_norm.weight"), E, true, err, &rc);
            if (!rc) L->post_ffn_norm = ember_load_vec(m, NAME("post_ffw_norm.weight"), E, true, err, &rc);
        }
        if (!rc) {
            ember_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wqkv, &L->wo, &L->gate, &L->up, &L->gate_up, &L->down,
                                  &L->pl_gate, &L->pl_proj};
            for (int i = 0; i < 11 && !rc; i++)
                if (ws[i]->t) rc = ember_plan_weight(m, ws[i], err);
        }
        if (L->n_head_kv > m->max_head_kv) m->max_head_kv = L->n_head_kv;
        if (L->head_dim > m->max_head_dim) m->max_head_dim = L->head_dim;
        if (L->n_ff > m->max_ff) m->max_ff = L->n_ff;
    }
#undef NAME
    return rc;
}

/* A tensor the file carries and the architecture's graph never reads (a
   bias or norm Ember's row of arch.c has no place for) means the output
   may not be the model's: one warning line, for inspect and the plan.
   (The reference refuses such files outright; Ember runs them and says.) */
static void note_unused(ember_model *m)
{
    if (!m->used) return;
    uint64_t n = 0, first = 0;
    for (uint64_t i = 0; i < m->f->n_tensors; i++)
        if (!m->used[i] && n++ == 0) first = i;
    free(m->used);
    m->used = NULL;
    if (!n) return;
    ember_warn_add(m->warnings, sizeof m->warnings,
                   "%llu tensor%s of the file %s not read by Ember's %s graph (the first: %.64s): "
                   "the output may differ from the model's own",
                   (unsigned long long)n, n == 1 ? "" : "s", n == 1 ? "is" : "are", m->info.arch,
                   m->f->tensors[first].name_z);
}

static int bind_model(ember_model *m, ember_err *err)
{
    m->used = calloc(m->f->n_tensors ? m->f->n_tensors : 1, 1);   /* NULL: no note, nothing else lost */
    const ember_model_info *I = &m->info;
    int rc = 0;
    ember_bind_weight(m, &m->tok_embd, "token_embd.weight", I->n_embd, I->n_vocab, 0, err, &rc);
    if (rc) return rc;
    float *probe = malloc((size_t)I->n_embd * sizeof *probe);
    int bad = !probe || ember_dequantize_row(m->tok_embd.dtype, m->tok_embd.data, probe, I->n_embd) != 0;
    free(probe);
    if (bad)
        return ember_seterr(err, "token_embd.weight: dtype %s cannot be dequantized",
                            ember_dtype_name(m->tok_embd.dtype));
    /* LFM2's is named token_embd_norm (applied at the output all the same) */
    m->output_norm = ember_load_vec(m, m->arch->flags & ARCH_SHORTCONV ? "token_embd_norm.weight" : "output_norm.weight", I->n_embd,
                              true, err, &rc);
    if (!rc && m->arch->flags & ARCH_LAYERNORM) m->output_norm_b = ember_load_vec(m, "output_norm.bias", I->n_embd, false, err, &rc);
    if (rc) return rc;
    const gguf_tensor *rf = gguf_find_tensor(m->f, "rope_freqs.weight");
    if (rf) {
        m->rope_freqs = ember_load_vec(m, "rope_freqs.weight", m->n_rot / 2, true, err, &rc);
        if (rc) return rc;
        for (int i = 0; i < m->n_rot / 2; i++)
            if (!(m->rope_freqs[i] > 0)) return ember_seterr(err, "rope_freqs.weight[%d] = %g is not positive", i, m->rope_freqs[i]);
    }
    if (m->arch->flags & ARCH_LONGROPE && gguf_find_tensor(m->f, "rope_factors_long.weight")) {
        m->rope_long = ember_load_vec(m, "rope_factors_long.weight", m->n_rot / 2, true, err, &rc);
        if (!rc) m->rope_short = ember_load_vec(m, "rope_factors_short.weight", m->n_rot / 2, true, err, &rc);
        if (rc) return rc;
        for (int i = 0; i < m->n_rot / 2; i++)
            if (!(m->rope_long[i] > 0) || !(m->rope_short[i] > 0))
                return ember_seterr(err, "rope_factors_long/short.weight[%d] is not positive", i);
    }
    if (m->n_pl) {   /* gemma4's per-layer inputs: a second embedding table and its projection */
        const int64_t NP = (int64_t)m->n_pl * I->n_layer;
        ember_bind_weight(m, &m->pl_embd, "per_layer_token_embd.weight", NP, I->n_vocab, 0, err, &rc);
        if (!rc) ember_bind_weight(m, &m->pl_model_proj, "per_layer_model_proj.weight", I->n_embd, NP, EMBER_PROJ_PER_LAYER, err, &rc);
        if (!rc) m->pl_proj_norm = ember_load_vec(m, "per_layer_proj_norm.weight", m->n_pl, true, err, &rc);
        if (rc) return rc;
        float *row = malloc((size_t)NP * sizeof *row);
        int unreadable = !row || ember_dequantize_row(m->pl_embd.dtype, m->pl_embd.data, row, NP) != 0;
        free(row);
        if (unreadable)
            return ember_seterr(err, "per_layer_token_embd.weight: dtype %s cannot be dequantized",
                                ember_dtype_name(m->pl_embd.dtype));
        if (ember_plan_weight(m, &m->pl_model_proj, err)) return -1;
        m->pl_embd.rep = EMBER_REP_COMPRESSED;
        ember_plan_add(m, m->pl_embd.t, EMBER_REP_COMPRESSED, "", "", m->pl_embd.t->nbytes, "embedding rows dequantized per lookup");
    }
    if (m->n_altup && ember_altup_bind_model(m, err)) return -1;
    if (bind_layers(m, err)) return -1;
    m->info.n_recurrent = m->dn.n_layers;
    for (int l = 0; l < m->info.n_layer; l++) m->info.n_recurrent += m->layers[l].sc != NULL || m->layers[l].m2 != NULL;
    /* the multi-token-prediction layers past n_layer (read_hparams) are
       not run, knowingly: no oddity to note */
    for (uint64_t i = 0; m->used && m->n_blocks && i < m->f->n_tensors; i++) {
        int b;
        if (sscanf(m->f->tensors[i].name_z, "blk.%d.", &b) == 1 && b >= I->n_layer) ember_bind_mark_used(m, &m->f->tensors[i]);
    }
    /* The LM head: output.weight, or the tied embedding. */
    if (gguf_find_tensor(m->f, "output.weight"))
        ember_bind_weight(m, &m->output, "output.weight", I->n_embd, I->n_vocab, EMBER_PROJ_OUTPUT, err, &rc);
    else
        ember_bind_weight(m, &m->output, "token_embd.weight", I->n_embd, I->n_vocab, EMBER_PROJ_OUTPUT, err, &rc);
    if (rc) return rc;
    m->output_b = ember_load_vec(m, "output.bias", I->n_vocab, false, err, &rc);   /* phi2's */
    if (rc) return rc;
    if (ember_plan_weight(m, &m->output, err) || ember_plan_finish(m, err) || list_weights(m, err)) return -1;
    note_unused(m);
    return 0;
}

static void free_weight(ember_weight *w)
{
    free(w->f32);
    w->f32 = NULL;
    w->packed = NULL;   /* in the model's one arena, or the pack cache's mapping */
}

void ember_model_pack_cache_wait(ember_model *m) { ember_pack_cache_wait(m); }

void ember_model_free(ember_model *m)
{
    if (!m) return;
    free(m->used);   /* a load that failed part way */
    ember_pack_cache_wait(m);    /* the writer reads the arenas freed below */
    ember_pack_cache_close(m);   /* before free_weight: tiles in the mapping are no arena */
    if (m->layers) {
        for (int l = 0; l < m->info.n_layer; l++) {
            ember_layer *L = &m->layers[l];
            free(L->attn_norm); free(L->ffn_norm); free(L->attn_norm_b); free(L->ffn_norm_b); free(L->bq); free(L->bk); free(L->bv); free(L->bo); free(L->sinks);
            free(L->q_norm); free(L->k_norm); free(L->bqkv); free(L->up_b); free(L->down_b);
            free(L->post_attn_norm); free(L->post_ffn_norm); free(L->pl_post_norm); free(L->out_scale);
            ember_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wqkv, &L->wo, &L->gate, &L->up, &L->gate_up, &L->down,
                                  &L->pl_gate, &L->pl_proj};
            for (int i = 0; i < 11; i++) free_weight(ws[i]);
            ember_moe_free(L->moe, m->info.n_expert);
            ember_dn_free(L->dn);
            ember_mla_free(L->mla, m->info.n_head);
            ember_sc_free(L->sc);
            ember_m2_free(L->m2);
            ember_altup_free(L->alt);
        }
        free(m->layers);
    }
    ember_altup_free_model(m);
    if (m->tok_embd.f32 == m->output.f32) m->tok_embd.f32 = NULL;
    free_weight(&m->tok_embd);
    free_weight(&m->output);
    free(m->output_norm);
    free(m->output_norm_b);
    free(m->output_b);
    free(m->rope_freqs);
    free(m->rope_long);
    free(m->pl_proj_norm);
    free_weight(&m->pl_model_proj);
    free(m->rope_short);
    free(m->pack_arena);
    free(m->all_w);
    ember_tokenizer_free(m->tok);
    free(m->chat_template);
    free(m->plan.e);
    gguf_close(m->f);
    free(m);
}

ember_model *ember_model_open(const char *path, const ember_plan_opts *opts, ember_err *err)
{
    ember_model *m = calloc(1, sizeof *m);
    if (!m) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    if (opts) m->opts = *opts;
    else ember_plan_opts_default(&m->opts);
    m->f = gguf_open(path, err);
    if (!m->f) {
        free(m);
        return NULL;
    }
    ember_err e2;
    m->isa = ember_cpu_isa();
    if (ember_read_hparams(m->f, &m->info, m, &e2) || bind_model(m, &e2)) {
        ember_seterr(err, "%s: %s", path, e2.msg);
        ember_model_free(m);
        return NULL;
    }
    if ((unsigned)m->opts.kv_cache >= EMBER_KV_TYPES) {
        ember_seterr(err, "KV cache type %d is not one of f16, q8_0", (int)m->opts.kv_cache);
        ember_model_free(m);
        return NULL;
    }
    /* q8_0 rows are whole blocks of 32: refused, not silently f16, so the
       plan a user asked for is the plan that runs */
    for (int l = 0; m->opts.kv_cache == EMBER_KV_Q8_0 && l < m->info.n_layer; l++)
        if (m->layers[l].head_dim % 32) {
            ember_seterr(err, "%s: kv_cache q8_0 needs a head dimension that is a multiple of 32, and layer %d's "
                         "is %d: use kv_cache f16", path, l, m->layers[l].head_dim);
            ember_model_free(m);
            return NULL;
        }
    m->tok = ember_tokenizer_load(m->f, &e2);   /* optional: eval works on ids */
    if (m->tok && ember_tok_check(m->tok, m->info.n_vocab, m->warnings, sizeof m->warnings, &e2)) {
        ember_tokenizer_free(m->tok);
        m->tok = NULL;
    }
    if (!m->tok) snprintf(m->tok_error, sizeof m->tok_error, "%s", e2.msg);
    m->chat_template = gguf_get_strdup(m->f, "tokenizer.chat_template");
    return m;
}

const ember_model_info *ember_model_get_info(const ember_model *m) { return &m->info; }
ember_tokenizer *ember_model_tokenizer(ember_model *m) { return m->tok; }
const char *ember_model_warnings(const ember_model *m) { return m->warnings; }
const char *ember_model_tokenizer_error(const ember_model *m) { return m->tok_error; }
const char *ember_model_chat_template(const ember_model *m) { return m->chat_template; }
