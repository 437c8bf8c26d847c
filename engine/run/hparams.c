/* A model's hyper-parameters from its GGUF metadata (hparams.h): strict,
   each key range-checked, the architecture's defaults where a key is
   optional. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dtype.h"
#include "hparams.h"


int ember_meta_req_u(ember_meta *m, const char *suffix, int64_t lo, int64_t hi, int *out)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    int64_t v;
    if (!gguf_find(m->f, key)) return ember_seterr(m->err, "required metadata key '%s' is missing", key);
    if (!gguf_get_i64(m->f, key, &v)) return ember_seterr(m->err, "metadata key '%s' is not an integer", key);
    if (v < lo || v > hi)
        return ember_seterr(m->err, "metadata key '%s' = %lld is outside %lld..%lld", key,
                            (long long)v, (long long)lo, (long long)hi);
    *out = (int)v;
    return 0;
}

int ember_meta_opt_u(ember_meta *m, const char *suffix, int64_t lo, int64_t hi, int *out, int dflt)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    if (!gguf_find(m->f, key)) {
        *out = dflt;
        return 0;
    }
    return ember_meta_req_u(m, suffix, lo, hi, out);
}

static int opt_f_min(ember_meta *m, const char *suffix, float *out, float dflt, bool required, bool zero_ok)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    double v;
    if (!gguf_find(m->f, key)) {
        if (required) return ember_seterr(m->err, "required metadata key '%s' is missing", key);
        *out = dflt;
        return 0;
    }
    if (!gguf_get_f64(m->f, key, &v)) return ember_seterr(m->err, "metadata key '%s' is not a number", key);
    if (!(v > 0 || (zero_ok && v == 0)) || v > 1e12)
        return ember_seterr(m->err, "metadata key '%s' = %g is not a %s number", key, v, zero_ok ? "non-negative" : "positive");
    *out = (float)v;
    return 0;
}

int ember_meta_opt_f(ember_meta *m, const char *suffix, float *out, float dflt, bool required)
{
    return opt_f_min(m, suffix, out, dflt, required, false);
}

/* a number where 0 means "off" (a temperature, a multiplier) */
static int opt_f0(ember_meta *m, const char *suffix, float *out, float dflt)
{
    return opt_f_min(m, suffix, out, dflt, false, true);
}

/* A per-layer value: the key holds one number for every layer, or an array
   of one per layer (gemma4's head_count_kv, feed_forward_length). */
int ember_meta_layer_u(ember_meta *m, const char *suffix, int l, int n_layer, int64_t lo, int64_t hi, int *out,
                       int dflt, bool required)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    const gguf_kv *kv = gguf_find(m->f, key);
    if (!kv || kv->type != GGUF_T_ARRAY)
        return required ? ember_meta_req_u(m, suffix, lo, hi, out) : ember_meta_opt_u(m, suffix, lo, hi, out, dflt);
    int64_t v;
    if (m->blocks) n_layer = m->blocks;
    if (kv->arr_n != (uint64_t)n_layer || !gguf_arr_i64(kv, (uint64_t)l, &v))
        return ember_seterr(m->err, "metadata key '%s' is not an integer array of %d (one per layer)", key, n_layer);
    if (v < lo || v > hi)
        return ember_seterr(m->err, "metadata key '%s'[%d] = %lld is outside %lld..%lld", key, l, (long long)v,
                            (long long)lo, (long long)hi);
    *out = (int)v;
    return 0;
}

static void fill_dtypes(const gguf_file *f, ember_model_info *info)
{
    uint64_t by[64] = {0};
    uint64_t params = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        uint64_t n = 1;
        for (int d = 0; d < GGUF_MAX_DIMS; d++) n *= (uint64_t)t->ne[d];
        params += n;
        if (t->n_dims >= 2 && t->type >= 0 && t->type < 64) by[t->type] += t->nbytes;
    }
    int best = EMBER_F32;
    for (int d = 0; d < 64; d++)
        if (by[d] > by[best]) best = d;
    info->dominant_dtype = best;
    info->n_params = params;
}

/* rope.scaling as the reference reads it for every architecture: the
   factor (or the older rope.scale_linear) divides the positions unless the
   type is none, the type defaulting to linear; yarn also blends by its
   ramp (ember_rope_cfg).  Sliding layers keep 1 / factor even for type
   none, as the reference's sliding-layer scale is the file's. */
static int rope_scaling(ember_meta *mt, ember_model *m)
{
    char key[128];
    gguf_str ty = {"linear", 6};
    snprintf(key, sizeof key, "%s.rope.scaling.type", mt->arch);
    if (gguf_find(mt->f, key) && !gguf_get_str(mt->f, key, &ty))
        return ember_seterr(mt->err, "metadata key '%s' is not a string", key);
    const bool none = ty.len == 4 && !memcmp(ty.ptr, "none", 4), yarn = ty.len == 4 && !memcmp(ty.ptr, "yarn", 4);
    /* newer converters may name Phi's LongRoPE, whose factors tensors do
       the scaling: that reads as linear (1 without a factor) */
    const bool longrope = m->arch->flags & ARCH_LONGROPE && ty.len == 8 && !memcmp(ty.ptr, "longrope", 8);
    if (!none && !yarn && !longrope && !(ty.len == 6 && !memcmp(ty.ptr, "linear", 6)))
        return ember_seterr(mt->err, "%s = '%.*s': rope scaling of that type is not supported (none, linear, yarn)",
                            key, (int)(ty.len < 64 ? ty.len : 64), ty.ptr);
    float factor = 1.0f;
    snprintf(key, sizeof key, "%s.rope.scaling.factor", mt->arch);
    const char *fkey = gguf_find(mt->f, key) ? "rope.scaling.factor" : "rope.scale_linear";
    if (ember_meta_opt_f(mt, fkey, &factor, 1.0f, false)) return -1;
    m->rope_freq_scale_swa = 1.0f / factor;
    m->rope_freq_scale = none ? 1.0f : 1.0f / factor;
    m->rope_ext_factor = yarn ? 1.0f : 0.0f;
    m->yarn_beta_fast = 32.0f;   /* the reference's defaults */
    m->yarn_beta_slow = 1.0f;
    if (m->arch->flags & ARCH_YARN_KEYS) {
        float log_mul = 0;
        if (ember_meta_opt_f(mt, "rope.scaling.yarn_beta_fast", &m->yarn_beta_fast, 32.0f, false) ||
            ember_meta_opt_f(mt, "rope.scaling.yarn_beta_slow", &m->yarn_beta_slow, 1.0f, false) ||
            opt_f0(mt, "rope.scaling.yarn_log_multiplier", &log_mul, 0))
            return -1;
        /* DeepSeek's mscale over mscale_all_dims (1 and the multiplier), as
           the reference derives its attention factor from them: a ratio
           on cos and sin, under the ramp's own 1 + 0.1 ln(factor) */
        if (log_mul != 0 && factor > 1.0f)
            m->rope_attn_factor *= (0.1f * logf(factor) + 1.0f) / (0.1f * log_mul * logf(factor) + 1.0f);
    }
    return 0;
}

/* The delta-net layers' shape (model.h, ember_dn_shape) from ssm.* and
   full_attention_interval (4 when the file has none, as the reference). */
static int read_dn_shape(ember_meta *mt, ember_model *m)
{
    ember_dn_shape *d = &m->dn;
    int inner;
    if (ember_meta_req_u(mt, "ssm.conv_kernel", 1, 64, &d->d_conv) || ember_meta_req_u(mt, "ssm.state_size", 1, 4096, &d->hd) ||
        ember_meta_req_u(mt, "ssm.group_count", 1, 4096, &d->n_k) || ember_meta_req_u(mt, "ssm.time_step_rank", 1, 4096, &d->n_v) ||
        ember_meta_req_u(mt, "ssm.inner_size", 1, 1 << 20, &inner) ||
        ember_meta_opt_u(mt, "full_attention_interval", 1, 1024, &d->interval, 4))
        return -1;
    if (d->n_v % d->n_k)
        return ember_seterr(mt->err, "%s.ssm.time_step_rank %d is not a multiple of ssm.group_count %d", mt->arch, d->n_v,
                            d->n_k);
    /* the reference's delta rule takes value heads as wide as the keys' */
    if (inner != d->n_v * d->hd)
        return ember_seterr(mt->err, "%s.ssm.inner_size %d is not ssm.time_step_rank x ssm.state_size (%d x %d): "
                            "value heads wider or narrower than the keys' are not supported", mt->arch, inner, d->n_v, d->hd);
    d->key_dim = d->n_k * d->hd;
    d->value_dim = d->n_v * d->hd;
    d->conv_dim = 2 * d->key_dim + d->value_dim;
    d->state_floats = (size_t)(d->d_conv - 1) * (size_t)d->conv_dim + (size_t)d->n_v * (size_t)d->hd * (size_t)d->hd;
    return 0;
}

/* The Mamba-2 layers' shape (model.h, ember_m2_shape) */
static int read_m2_shape(ember_meta *mt, ember_model *m)
{
    ember_m2_shape *d = &m->m2;
    if (ember_meta_req_u(mt, "ssm.conv_kernel", 1, 64, &d->d_conv) || ember_meta_req_u(mt, "ssm.inner_size", 1, 1 << 20, &d->d_inner) ||
        ember_meta_req_u(mt, "ssm.state_size", 1, 4096, &d->d_state) ||
        ember_meta_req_u(mt, "ssm.time_step_rank", 1, 1 << 16, &d->n_head) ||
        ember_meta_req_u(mt, "ssm.group_count", 1, 1 << 16, &d->n_group))
        return -1;
    if (d->d_inner % d->n_head)
        return ember_seterr(mt->err, "%s.ssm.inner_size %d is not a multiple of ssm.time_step_rank %d", mt->arch, d->d_inner,
                            d->n_head);
    if (d->n_head % d->n_group)
        return ember_seterr(mt->err, "%s.ssm.time_step_rank %d is not a multiple of ssm.group_count %d", mt->arch, d->n_head,
                            d->n_group);
    d->head_dim = d->d_inner / d->n_head;
    d->conv_dim = d->d_inner + 2 * d->n_group * d->d_state;
    d->in_dim = d->conv_dim + d->d_inner + d->n_head;
    d->state_floats = (size_t)(d->d_conv - 1) * (size_t)d->conv_dim + (size_t)d->d_inner * (size_t)d->d_state;
    return 0;
}

/* The latent attention's widths (model.h, ember_mla_shape).  Files from
   converters before mid 2025 give the heads' own widths in key_length
   and value_length (nope + rope, v) with attn_kv_b; later ones give the
   cache's (rope + kv_lora, kv_lora) there, one KV head, the heads' in
   key_length_mla and value_length_mla, with attn_k_b and attn_v_b.  The
   info's head_dim is the cached row, rope + kv_lora; one KV head. */
static int read_mla_shape(ember_meta *mt, ember_model_info *info, ember_mla_shape *sh)
{
    char key[128];
    int qk, v;
    if (ember_meta_req_u(mt, "attention.kv_lora_rank", 1, 1 << 14, &sh->kv_lora) ||
        ember_meta_opt_u(mt, "attention.q_lora_rank", 0, 1 << 16, &sh->q_lora, 0) ||
        ember_meta_req_u(mt, "rope.dimension_count", 2, 1 << 12, &sh->rope))
        return -1;
    snprintf(key, sizeof key, "%s.attention.key_length_mla", mt->arch);
    const bool split = gguf_find(mt->f, key) != NULL;
    if (ember_meta_req_u(mt, split ? "attention.key_length_mla" : "attention.key_length", 1, 1 << 14, &qk) ||
        ember_meta_req_u(mt, split ? "attention.value_length_mla" : "attention.value_length", 1, 1 << 14, &v))
        return -1;
    if (sh->rope % 2 || qk <= sh->rope)
        return ember_seterr(mt->err, "%s: a query head of %d with a rope part of %d (odd, or no part without rope)",
                            info->arch, qk, sh->rope);
    sh->nope = qk - sh->rope;
    sh->v = v;
    info->head_dim = sh->rope + sh->kv_lora;
    info->n_head_kv = 1;
    return 0;
}

/* Fills info from the header; sets m->arch etc. when model is non-NULL. */
int ember_read_hparams(const gguf_file *f, ember_model_info *info, ember_model *m, ember_err *err)
{
    memset(info, 0, sizeof *info);
    gguf_str a;
    if (!gguf_get_str(f, "general.architecture", &a))
        return ember_seterr(err, "required metadata key 'general.architecture' is missing");
    snprintf(info->arch, sizeof info->arch, "%.*s", (int)(a.len < 31 ? a.len : 31), a.ptr);
    const ember_arch_desc *arch = ember_arch_find(info->arch);
    if (!arch) {
        char names[800];   /* every name: the list is the answer to "which then?" */
        ember_arch_list(names, sizeof names);
        return ember_seterr(err, "architecture '%s' is not supported (supported: %s)", info->arch, names);
    }
    gguf_str nm;
    if (gguf_get_str(f, "general.name", &nm))
        ember_text_clean(info->name, sizeof info->name, nm.ptr, nm.len, 0);
    uint64_t ft;
    if (gguf_get_u64(f, "general.file_type", &ft)) {
        const char *fn = ft <= EMBER_FILE_TYPE_MAX ? ember_file_type_name((int64_t)ft) : NULL;
        snprintf(info->file_type, sizeof info->file_type, "%s", fn ? fn : "");
    }
    info->file_bytes = f->size;
    fill_dtypes(f, info);

    ember_meta mt = {f, info->arch, err, 0};
    if (ember_meta_req_u(&mt, "block_count", 1, 1024, &info->n_layer) ||
        ember_meta_req_u(&mt, "embedding_length", 1, 1 << 17, &info->n_embd) ||
        ember_meta_req_u(&mt, "attention.head_count", 1, 4096, &info->n_head) ||
        ember_meta_req_u(&mt, "context_length", 1, 1 << 24, &info->n_ctx_train))
        return -1;
    /* multi-token-prediction layers (Qwen3.5, GLM-4.5) come last in the
       file: the forward pass runs the others (as the reference does unless
       asked to draft with them), so n_layer counts those */
    {
        int nextn;
        if (ember_meta_opt_u(&mt, "nextn_predict_layers", 0, info->n_layer - 1, &nextn, 0)) return -1;
        if (nextn) mt.blocks = info->n_layer;
        info->n_layer -= nextn;
    }
    /* per-layer FFN widths and KV heads: the info shows the largest */
    for (int l = 0; l < info->n_layer; l++) {
        int ff, kv;
        /* a short-convolution or Mamba-2 layer has no KV heads (LFM2, Granite 4.0-H) */
        const int kv_lo = arch->flags & (ARCH_SHORTCONV | ARCH_MAMBA2) ? 0 : 1;
        /* a layer of one block may have no FFN (Nemotron-H) */
        if (ember_meta_layer_u(&mt, "feed_forward_length", l, info->n_layer, arch->flags & ARCH_ONE_BLOCK ? 0 : 1, 1 << 20,
                               &ff, 0, true) ||
            ember_meta_layer_u(&mt, "attention.head_count_kv", l, info->n_layer, kv_lo, 4096, &kv, info->n_head, false))
            return -1;
        if (kv && info->n_head % kv)
            return ember_seterr(err, "%s.attention.head_count %d is not a multiple of head_count_kv %d",
                                info->arch, info->n_head, kv);
        if (ff > info->n_ff) info->n_ff = ff;
        if (kv > info->n_head_kv) info->n_head_kv = kv;
    }
    int64_t experts;
    char ek[128];
    snprintf(ek, sizeof ek, "%s.expert_count", info->arch);
    const bool has_experts = gguf_get_i64(f, ek, &experts) && experts > 0;
    if (arch->flags & ARCH_MOE || (arch->flags & ARCH_MOE_MAY && has_experts)) {
        if (ember_meta_req_u(&mt, "expert_count", 1, EMBER_MAX_EXPERTS, &info->n_expert) ||
            ember_meta_req_u(&mt, "expert_used_count", 1, info->n_expert, &info->n_expert_used))
            return -1;
    } else if (has_experts)
        return ember_seterr(err, "%s: mixture-of-experts models (%s = %lld) are not supported for this "
                            "architecture (the MoE ones Ember runs: llama (Mixtral), granitemoe, granitehybrid, nemotron_h_moe, qwen2moe, qwen3moe, qwen3vlmoe, "
                            "ernie4_5-moe, gpt-oss, qwen35moe, qwen3next, glm4moe, bailingmoe2, deepseek2, lfm2moe, gemma4)",
                            info->arch, ek, (long long)experts);
    int dflt_hd = info->n_embd / info->n_head;
    ember_mla_shape mla = {0};
    if (arch->flags & ARCH_MLA) {
        if (read_mla_shape(&mt, info, &mla)) return -1;
    } else {
        if (ember_meta_opt_u(&mt, "attention.key_length", 1, 1 << 14, &info->head_dim, dflt_hd)) return -1;
        int vlen;
        if (ember_meta_opt_u(&mt, "attention.value_length", 1, 1 << 14, &vlen, info->head_dim)) return -1;
        if (vlen != info->head_dim)
            return ember_seterr(err, "%s.attention.value_length %d differs from key_length %d (not supported)",
                                info->arch, vlen, info->head_dim);
    }
    if (!(arch->flags & ARCH_FREE_HEAD_DIM) && info->n_embd % info->n_head)
        return ember_seterr(err, "embedding_length %d is not a multiple of head_count %d", info->n_embd, info->n_head);
    if (info->head_dim % 2)
        return ember_seterr(err, "head dimension %d is odd (rope needs pairs)", info->head_dim);
    const gguf_tensor *emb = gguf_find_tensor(f, "token_embd.weight");
    if (!emb) return ember_seterr(err, "tensor 'token_embd.weight' is missing");
    if (emb->n_dims != 2 || emb->ne[0] != info->n_embd)
        return ember_seterr(err, "tensor 'token_embd.weight' has shape [%lld, %lld], expected [%d, n_vocab]",
                            (long long)emb->ne[0], (long long)emb->ne[1], info->n_embd);
    if (emb->ne[1] > (1 << 22)) return ember_seterr(err, "vocabulary of %lld tokens is too large", (long long)emb->ne[1]);
    info->n_vocab = (int)emb->ne[1];
    int vocab_size;   /* optional; when given it must describe this embedding */
    if (ember_meta_opt_u(&mt, "vocab_size", 1, INT32_MAX, &vocab_size, info->n_vocab)) return -1;
    if (vocab_size != info->n_vocab)
        return ember_seterr(err, "%s.vocab_size %d differs from token_embd.weight's %d rows", info->arch, vocab_size,
                            info->n_vocab);
    if (m) {
        m->arch = arch;
        if (ember_meta_opt_u(&mt, "rope.dimension_count", 2, info->head_dim, &m->n_rot, info->head_dim) ||
            ember_meta_opt_f(&mt, "rope.freq_base", &m->rope_base, 10000.0f, false) ||
            ember_meta_opt_f(&mt, arch->flags & ARCH_LAYERNORM ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon",
                  &m->rms_eps, 1e-5f, true))
            return -1;
        m->parallel = arch->flags & ARCH_PARALLEL ||
                      (arch->flags & ARCH_PARALLEL_MAY && !gguf_find_tensor(f, "blk.0.ffn_norm.weight"));
        /* StableLM 2 12B's and Command R+'s per-head LayerNorm of Q and K:
           not read, so refused */
        if (arch->flags & ARCH_LAYERNORM && gguf_find_tensor(f, "blk.0.attn_q_norm.weight"))
            return ember_seterr(err, "%s: per-head Q/K LayerNorm (attn_q_norm: StableLM 2 12B, Command R+) is not supported",
                                info->arch);
        m->n_blocks = mt.blocks;
        if (arch->flags & ARCH_DELTANET && read_dn_shape(&mt, m)) return -1;
        if (arch->flags & ARCH_SHORTCONV && ember_meta_req_u(&mt, "shortconv.l_cache", 2, 64, &m->sc_lcache)) return -1;
        if (arch->flags & ARCH_MAMBA2) {
            if (read_m2_shape(&mt, m)) return -1;
            /* rope.scaling.finetuned switches the attention layers' rope
               (Granite 4.0-H's files say false: no position encoding) */
            char rk[128];
            bool finetuned = true;
            snprintf(rk, sizeof rk, "%s.rope.scaling.finetuned", info->arch);
            if (gguf_find(f, rk) && !gguf_get_bool(f, rk, &finetuned))
                return ember_seterr(err, "metadata key '%s' is not a bool", rk);
            m->no_rope = !finetuned || arch->flags & ARCH_ONE_BLOCK;   /* Nemotron-H: no rope at all */
        }
        m->logit_mul = 1.0f;
        if (arch->flags & ARCH_LOGIT_SCALE && ember_meta_opt_f(&mt, "logit_scale", &m->logit_mul, 1.0f, false)) return -1;
        if (m->n_rot % 2) return ember_seterr(err, "%s.rope.dimension_count %d is odd", info->arch, m->n_rot);
        /* gemma's sliding layers cannot run without their window (the
           reference refuses such a file too); phi3's is optional */
        if (arch->flags & ARCH_SWA &&
            (arch->flags & ARCH_SWA_ALL ? ember_meta_opt_u(&mt, "attention.sliding_window", 1, 1 << 24, &m->n_swa, 0)
                                        : ember_meta_req_u(&mt, "attention.sliding_window", 1, 1 << 24, &m->n_swa)))
            return -1;
        /* OLMo 3's window, which OLMo 2 files do not carry (0: none) */
        if (arch->flags & ARCH_SWA_MAY && ember_meta_opt_u(&mt, "attention.sliding_window", 0, 1 << 24, &m->n_swa, 0))
            return -1;
        /* Phi-3-mini-4k and -medium-4k files converted before the window
           was written (mid 2024) carry none: the reference gives those
           shapes (32 or 40 layers, a 4096 context) their config's 2047 */
        if (arch->flags & ARCH_SWA_ALL && !m->n_swa && (info->n_layer == 32 || info->n_layer == 40) &&
            info->n_ctx_train == 4096)
            m->n_swa = 2047;
        /* a window as long as the training context masks nothing (Phi-3.5's
           262144): every layer attends globally, on the faster path */
        if (arch->flags & ARCH_SWA_ALL && m->n_swa >= info->n_ctx_train) m->n_swa = 0;
        int shared = 0;
        /* Gemma 3n: the reference fixes the layers with KV at 20 (its
           files write shared_kv_layers as a float, which it ignores) */
        if (arch->flags & ARCH_ALTUP)
            shared = info->n_layer > 20 ? info->n_layer - 20 : 0;
        else if (arch->flags & ARCH_SHARED_KV &&
                 ember_meta_opt_u(&mt, "attention.shared_kv_layers", 0, info->n_layer - 1, &shared, 0))
            return -1;
        m->n_layer_kv = info->n_layer - shared;
        if (arch->flags & ARCH_PER_LAYER_EMBD &&
            ember_meta_opt_u(&mt, "embedding_length_per_layer_input", 0, 1 << 14, &m->n_pl, 0))   /* 0: none (31B) */
            return -1;
        if (arch->flags & ARCH_ALTUP) {   /* Gemma 3n's streams: 4, the first active, as its config */
            if (ember_meta_opt_u(&mt, "altup.num_inputs", 2, 16, &m->n_altup, 4) ||
                ember_meta_opt_u(&mt, "altup.active_idx", 0, m->n_altup - 1, &m->altup_act, 0))
                return -1;
            if (m->n_pl < 1)
                return ember_seterr(err, "%s: embedding_length_per_layer_input is missing or 0 (its per-layer inputs)",
                                    info->arch);
        }
        if (arch->softcap && ember_meta_opt_f(&mt, "final_logit_softcapping", &m->softcap, arch->softcap, false)) return -1;
        if (arch->att_softcap && ember_meta_opt_f(&mt, "attn_logit_softcapping", &m->att_softcap, arch->att_softcap, false))
            return -1;
        /* required, as the reference reads them (Granite 4.0-H's optional) */
        const bool req = !(arch->flags & ARCH_MAMBA2);
        if (arch->flags & ARCH_MULTIPLIERS &&
            (ember_meta_opt_f(&mt, "embedding_scale", &m->embd_mult, 0, req) ||
             ember_meta_opt_f(&mt, "residual_scale", &m->resid_mult, 0, req) ||
             ember_meta_opt_f(&mt, "attention.scale", &m->att_mult, 0, req) || ember_meta_opt_f(&mt, "logit_scale", &m->logit_div, 0, req)))
            return -1;
        if (ember_meta_opt_u(&mt, "rope.scaling.original_context_length", 1, 1 << 24, &m->n_ctx_orig, info->n_ctx_train) ||
            ember_meta_opt_f(&mt, "rope.scaling.attn_factor", &m->rope_attn_factor, 1.0f, false) || rope_scaling(&mt, m))
            return -1;
        if (arch->attn_temp && opt_f0(&mt, "attention.temperature_scale", &m->attn_temp, arch->attn_temp))
            return -1;
        if (arch->flags & ARCH_MLA) {
            /* the reference's DeepSeek YaRN: the scores scaled by mscale^2 /
               sqrt(nope + rope), mscale = attn_factor (1 + log_mul ln(factor)),
               cos and sin by 1 / (1 + 0.1 ln(factor)) (which the YaRN ramp's
               own factor cancels) */
            float log_mul = 0;
            if (opt_f0(&mt, "rope.scaling.yarn_log_multiplier", &log_mul, 0)) return -1;
            const float fs = m->rope_freq_scale;
            const float ms = m->rope_attn_factor * (1.0f + log_mul * logf(1.0f / fs));
            m->mla = mla;
            m->att_mult = 1.0f * ms * ms / sqrtf((float)(mla.nope + mla.rope));
            m->rope_attn_factor = 1.0f / (1.0f + 0.1f * logf(1.0f / fs));
        }
        /* which layers mix: after the leading dense ones, every step-th (0
           and 1 when the file says nothing: every layer) */
        if (info->n_expert && (ember_meta_opt_u(&mt, "leading_dense_block_count", 0, info->n_layer, &m->moe_lead, 0) ||
                               ember_meta_opt_u(&mt, "interleave_moe_layer_step", 1, info->n_layer, &m->moe_step, 1)))
            return -1;
        m->moe_norm = !(arch->flags & ARCH_MOE_RAW_WEIGHTS);
        m->moe_scale = 1.0f;
        m->moe_groups = m->moe_groups_used = 1;
        if (info->n_expert && arch->flags & ARCH_ROUTING_KEYS) {
            int gating;
            char nk[128];
            bool norm;
            /* without the key: softmax, as DeepSeek V2 routes, but sigmoid for
               GLM-4.7-Flash's deepseek2 files (47 layers, 48 with the MTP
               one), as the reference tells them apart */
            const int blocks = mt.blocks ? mt.blocks : info->n_layer;
            const int dflt_gating = arch->flags & ARCH_MLA && (blocks == 47 || blocks == 48) ? 2 : 1;
            if (ember_meta_opt_u(&mt, "expert_gating_func", 1, 2, &gating, dflt_gating) ||
                ember_meta_opt_f(&mt, "expert_weights_scale", &m->moe_scale, 1.0f, false))
                return -1;
            m->moe_sigmoid = gating == 2 || arch->flags & ARCH_ONE_BLOCK;   /* Nemotron-H MoE: sigmoid always */
            if (ember_meta_opt_u(&mt, "expert_group_count", 1, info->n_expert, &m->moe_groups, 1) ||
                ember_meta_opt_u(&mt, "expert_group_used_count", 1, m->moe_groups, &m->moe_groups_used, m->moe_groups))
                return -1;
            if (info->n_expert % m->moe_groups || (m->moe_groups_used < m->moe_groups &&
                                                    info->n_expert_used > info->n_expert / m->moe_groups * m->moe_groups_used))
                return ember_seterr(err, "%s: %d experts do not split into %d groups of which %d can hold the %d chosen",
                                    info->arch, info->n_expert, m->moe_groups, m->moe_groups_used, info->n_expert_used);
            snprintf(nk, sizeof nk, "%s.expert_weights_norm", info->arch);
            m->moe_norm = (gguf_get_bool(f, nk, &norm) && norm) ||   /* the reference's default: as they are */
                          arch->flags & ARCH_MOE_ALWAYS_NORM;
        }
        switch (arch->att_scale) {
        case ATT_SCALE_SCORES: case ATT_SCALE_NONE: m->q_scale = 1.0f; break;
        case ATT_SCALE_Q: m->q_scale = 1.0f / sqrtf((float)info->head_dim); break;
        case ATT_SCALE_Q_27B:   /* the 27B sizes: query_pre_attn_scalar = n_embd / n_head */
            m->q_scale = 1.0f / sqrtf(info->n_layer == arch->q_scale_layers ? (float)(info->n_embd / info->n_head)
                                                                            : (float)info->head_dim);
            break;
        }
    }
    return 0;
}
