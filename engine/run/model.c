/* Model loading: hyper-parameters from metadata (strict) and tensor
   binding with shape checks; each matrix's representation is the plan's
   (plan.c), packing at a phase the lifecycle's (lifecycle.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "model.h"
#include "plan.h"
#include "tokenizer.h"

/* ---- metadata -------------------------------------------------------- */

static const char *ftype_name(uint64_t ft)
{
    static const struct { unsigned v; const char *n; } t[] = {
        {0, "F32"}, {1, "F16"}, {2, "Q4_0"}, {3, "Q4_1"}, {7, "Q8_0"}, {8, "Q5_0"},
        {9, "Q5_1"}, {10, "Q2_K"}, {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"},
        {14, "Q4_K_S"}, {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},
        {25, "IQ4_NL"}, {32, "BF16"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].v == ft) return t[i].n;
    return "";
}

typedef struct {
    const gguf_file *f;
    const char *arch;
    ember_err *err;
} meta;

static int req_u(meta *m, const char *suffix, int64_t lo, int64_t hi, int *out)
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

static int opt_u(meta *m, const char *suffix, int64_t lo, int64_t hi, int *out, int dflt)
{
    char key[128];
    snprintf(key, sizeof key, "%s.%s", m->arch, suffix);
    if (!gguf_find(m->f, key)) {
        *out = dflt;
        return 0;
    }
    return req_u(m, suffix, lo, hi, out);
}

static int opt_f(meta *m, const char *suffix, float *out, float dflt, bool required)
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
    if (!(v > 0) || v > 1e12) return ember_seterr(m->err, "metadata key '%s' = %g is not a positive number", key, v);
    *out = (float)v;
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

/* Fills info from the header; sets m->arch etc. when model is non-NULL. */
static int read_hparams(const gguf_file *f, ember_model_info *info, ember_model *m, ember_err *err)
{
    memset(info, 0, sizeof *info);
    gguf_str a;
    if (!gguf_get_str(f, "general.architecture", &a))
        return ember_seterr(err, "required metadata key 'general.architecture' is missing");
    snprintf(info->arch, sizeof info->arch, "%.*s", (int)(a.len < 31 ? a.len : 31), a.ptr);
    const ember_arch_desc *arch = ember_arch_find(info->arch);
    if (!arch) {
        char names[256];
        ember_arch_list(names, sizeof names);
        return ember_seterr(err, "architecture '%s' is not supported (supported: %s)", info->arch, names);
    }
    gguf_str nm;
    if (gguf_get_str(f, "general.name", &nm))
        ember_text_clean(info->name, sizeof info->name, nm.ptr, nm.len, 0);
    uint64_t ft;
    if (gguf_get_u64(f, "general.file_type", &ft))
        snprintf(info->file_type, sizeof info->file_type, "%s", ftype_name(ft));
    info->file_bytes = f->size;
    fill_dtypes(f, info);

    meta mt = {f, info->arch, err};
    if (req_u(&mt, "block_count", 1, 1024, &info->n_layer) ||
        req_u(&mt, "embedding_length", 1, 1 << 17, &info->n_embd) ||
        req_u(&mt, "feed_forward_length", 1, 1 << 20, &info->n_ff) ||
        req_u(&mt, "attention.head_count", 1, 4096, &info->n_head) ||
        req_u(&mt, "context_length", 1, 1 << 24, &info->n_ctx_train) ||
        opt_u(&mt, "attention.head_count_kv", 1, 4096, &info->n_head_kv, info->n_head))
        return -1;
    if (info->n_head % info->n_head_kv)
        return ember_seterr(err, "%s.attention.head_count %d is not a multiple of head_count_kv %d",
                            info->arch, info->n_head, info->n_head_kv);
    int dflt_hd = info->n_embd / info->n_head;
    if (opt_u(&mt, "attention.key_length", 1, 1 << 14, &info->head_dim, dflt_hd)) return -1;
    int vlen;
    if (opt_u(&mt, "attention.value_length", 1, 1 << 14, &vlen, info->head_dim)) return -1;
    if (vlen != info->head_dim)
        return ember_seterr(err, "%s.attention.value_length %d differs from key_length %d (not supported)",
                            info->arch, vlen, info->head_dim);
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
    if (opt_u(&mt, "vocab_size", 1, INT32_MAX, &vocab_size, info->n_vocab)) return -1;
    if (vocab_size != info->n_vocab)
        return ember_seterr(err, "%s.vocab_size %d differs from token_embd.weight's %d rows", info->arch, vocab_size,
                            info->n_vocab);
    if (m) {
        m->arch = arch;
        if (opt_u(&mt, "rope.dimension_count", 2, info->head_dim, &m->n_rot, info->head_dim) ||
            opt_f(&mt, "rope.freq_base", &m->rope_base, 10000.0f, false) ||
            opt_f(&mt, "attention.layer_norm_rms_epsilon", &m->rms_eps, 1e-5f, true))
            return -1;
        if (m->n_rot % 2) return ember_seterr(err, "%s.rope.dimension_count %d is odd", info->arch, m->n_rot);
        if (arch->swa_period && opt_u(&mt, "attention.sliding_window", 1, 1 << 24, &m->n_swa, 0)) return -1;
        if (arch->flags & ARCH_LONGROPE &&
            (opt_u(&mt, "rope.scaling.original_context_length", 1, 1 << 24, &m->n_ctx_orig, info->n_ctx_train) ||
             opt_f(&mt, "rope.scaling.attn_factor", &m->rope_attn_factor, 1.0f, false)))
            return -1;
        switch (arch->att_scale) {
        case ATT_SCALE_SCORES: m->q_scale = 1.0f; break;
        case ATT_SCALE_Q: m->q_scale = 1.0f / sqrtf((float)info->head_dim); break;
        case ATT_SCALE_Q_27B:   /* Gemma 3 27B (62 layers): query_pre_attn_scalar = n_embd / n_head */
            m->q_scale = 1.0f / sqrtf(info->n_layer == 62 ? (float)(info->n_embd / info->n_head) : (float)info->head_dim);
            break;
        }
    }
    return 0;
}

int ember_model_peek(const char *path, ember_model_info *info, ember_err *err)
{
    gguf_file *f = gguf_open(path, err);
    if (!f) return -1;
    ember_err e2;
    int rc = read_hparams(f, info, NULL, &e2);
    if (rc) ember_seterr(err, "%s: %s", path, e2.msg);
    gguf_close(f);
    return rc;
}

/* ---- tensors --------------------------------------------------------- */

static const gguf_tensor *tensor(ember_model *m, const char *name, int64_t ne0, int64_t ne1,
                                 bool required, ember_err *err, int *rc)
{
    const gguf_tensor *t = gguf_find_tensor(m->f, name);
    if (!t) {
        if (required) *rc = ember_seterr(err, "tensor '%s' is missing", name);
        return NULL;
    }
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

static float *load_vec(ember_model *m, const char *name, int64_t n, bool required, ember_err *err, int *rc)
{
    const gguf_tensor *t = tensor(m, name, n, 0, required, err, rc);
    if (!t) return NULL;
    float *v = malloc((size_t)n * sizeof *v);
    if (!v) {
        *rc = ember_seterr(err, "out of memory");
        return NULL;
    }
    if (ember_dequantize_row(t->type, t->data, v, n)) {
        *rc = ember_seterr(err, "tensor '%s': cannot read dtype %s", name, ember_dtype_name(t->type));
        free(v);
        return NULL;
    }
    return v;
}

static void bind_weight(ember_model *m, ember_weight *w, const char *name, int64_t in, int64_t out,
                        int proj, ember_err *err, int *rc)
{
    memset(w, 0, sizeof *w);
    w->t = tensor(m, name, in, out, true, err, rc);
    if (!w->t) return;
    w->dtype = w->t->type;
    w->in = in;
    w->out = out;
    w->data = w->t->data;
    w->row_bytes = ember_row_bytes(w->dtype, in);
    w->proj = proj;
}

int ember_model_weights(ember_model *m, ember_weight **out, int cap)
{
    int n = 0;
    for (int l = 0; l < m->info.n_layer; l++) {
        ember_layer *L = &m->layers[l];
        ember_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wqkv, &L->wo, &L->gate, &L->up, &L->gate_up, &L->down};
        for (int i = 0; i < 9; i++)
            if (n < cap && ws[i]->t) out[n++] = ws[i];
    }
    if (n < cap) out[n++] = &m->output;
    return n;
}

/* The rope of layer l: global layers use the file's base (and, where the
   architecture says so, its linear scaling); sliding layers their own base. */
static int layer_rope(ember_model *m, ember_layer *L, ember_err *err)
{
    const ember_arch_desc *a = m->arch;
    L->rope = (ember_rope_cfg){m->rope_base, 1.0f, 1.0f, m->rope_freqs, m->n_rot};
    if (a->flags & ARCH_LONGROPE && m->rope_long) {
        L->rope.ff = NULL;   /* the session picks long or short by its context */
        L->rope.mscale = m->rope_attn_factor;
    }
    meta mt = {m->f, a->name, err};
    if (L->swa) {
        if (opt_f(&mt, "rope.freq_base_swa", &L->rope.base, a->swa_rope_base, false)) return -1;
    } else if (a->flags & ARCH_ROPE_LINEAR_GLOBAL) {
        char key[128];
        gguf_str ty;
        snprintf(key, sizeof key, "%s.rope.scaling.type", a->name);
        if (gguf_get_str(m->f, key, &ty) && ty.len == 6 && !memcmp(ty.ptr, "linear", 6)) {
            float factor;
            if (opt_f(&mt, "rope.scaling.factor", &factor, 1.0f, false)) return -1;
            L->rope.freq_scale = 1.0f / factor;
        }
    }
    return 0;
}

static int bind_layers(ember_model *m, ember_err *err)
{
    const ember_model_info *I = &m->info;
    const unsigned fl = m->arch->flags;
    int rc = 0;
    m->layers = calloc((size_t)I->n_layer, sizeof *m->layers);
    if (!m->layers) return ember_seterr(err, "out of memory");
    char nm[96];
#define NAME(fmt) (snprintf(nm, sizeof nm, "blk.%d." fmt, l), nm)
    for (int l = 0; l < I->n_layer && !rc; l++) {
        ember_layer *L = &m->layers[l];
        L->n_head_kv = I->n_head_kv;
        L->head_dim = I->head_dim;
        L->n_ff = I->n_ff;
        int P = m->arch->swa_period;
        L->swa = m->n_swa && P && l % P != P - 1 ? m->n_swa : 0;
        int64_t E = I->n_embd, HQ = (int64_t)I->n_head * L->head_dim, HK = (int64_t)L->n_head_kv * L->head_dim;
        int64_t F = L->n_ff;
        rc = layer_rope(m, L, err);
        if (!rc) L->attn_norm = load_vec(m, NAME("attn_norm.weight"), E, true, err, &rc);
        if (!rc) L->ffn_norm = load_vec(m, NAME("ffn_norm.weight"), E, true, err, &rc);
        if (!rc && fl & ARCH_FUSED_QKV && gguf_find_tensor(m->f, NAME("attn_qkv.weight"))) {
            bind_weight(m, &L->wqkv, nm, E, HQ + 2 * HK, EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V, err, &rc);
        } else if (!rc) {
            bind_weight(m, &L->wq, NAME("attn_q.weight"), E, HQ, EMBER_PROJ_Q, err, &rc);
            if (!rc) bind_weight(m, &L->wk, NAME("attn_k.weight"), E, HK, EMBER_PROJ_K, err, &rc);
            if (!rc) bind_weight(m, &L->wv, NAME("attn_v.weight"), E, HK, EMBER_PROJ_V, err, &rc);
        }
        if (!rc) bind_weight(m, &L->wo, NAME("attn_output.weight"), HQ, E, EMBER_PROJ_O, err, &rc);
        if (!rc && fl & ARCH_FUSED_GATE_UP && !gguf_find_tensor(m->f, NAME("ffn_gate.weight"))) {
            bind_weight(m, &L->gate_up, NAME("ffn_up.weight"), E, 2 * F, EMBER_PROJ_GATE | EMBER_PROJ_UP, err, &rc);
        } else if (!rc) {
            bind_weight(m, &L->gate, NAME("ffn_gate.weight"), E, F, EMBER_PROJ_GATE, err, &rc);
            if (!rc) bind_weight(m, &L->up, NAME("ffn_up.weight"), E, F, EMBER_PROJ_UP, err, &rc);
        }
        if (!rc) bind_weight(m, &L->down, NAME("ffn_down.weight"), F, E, EMBER_PROJ_DOWN, err, &rc);
        bool bias = fl & ARCH_QKV_BIAS;
        if (!rc && !L->wqkv.t) {
            L->bq = load_vec(m, NAME("attn_q.bias"), HQ, bias, err, &rc);
            if (!rc) L->bk = load_vec(m, NAME("attn_k.bias"), HK, bias, err, &rc);
            if (!rc) L->bv = load_vec(m, NAME("attn_v.bias"), HK, bias, err, &rc);
        }
        if (!rc && fl & ARCH_QK_NORM) {
            L->q_norm = load_vec(m, NAME("attn_q_norm.weight"), L->head_dim, true, err, &rc);
            if (!rc) L->k_norm = load_vec(m, NAME("attn_k_norm.weight"), L->head_dim, true, err, &rc);
        }
        if (!rc && fl & ARCH_POST_NORMS) {
            L->post_attn_norm = load_vec(m, NAME("post_attention_norm.weight"), E, true, err, &rc);
            if (!rc) L->post_ffn_norm = load_vec(m, NAME("post_ffw_norm.weight"), E, true, err, &rc);
        }
        if (!rc) {
            struct { ember_weight *w; bool bias; } ws[] = {
                {&L->wq, L->bq != NULL}, {&L->wk, L->bk != NULL}, {&L->wv, L->bv != NULL}, {&L->wqkv, false},
                {&L->wo, false}, {&L->gate, false}, {&L->up, false}, {&L->gate_up, false}, {&L->down, false}};
            for (int i = 0; i < 9 && !rc; i++)
                if (ws[i].w->t) rc = ember_plan_weight(m, ws[i].w, ws[i].bias, err);
        }
        if (L->n_head_kv > m->max_head_kv) m->max_head_kv = L->n_head_kv;
        if (L->head_dim > m->max_head_dim) m->max_head_dim = L->head_dim;
        if (L->n_ff > m->max_ff) m->max_ff = L->n_ff;
    }
#undef NAME
    return rc;
}

static int bind_model(ember_model *m, ember_err *err)
{
    const ember_model_info *I = &m->info;
    int rc = 0;
    bind_weight(m, &m->tok_embd, "token_embd.weight", I->n_embd, I->n_vocab, 0, err, &rc);
    if (rc) return rc;
    float *probe = malloc((size_t)I->n_embd * sizeof *probe);
    int bad = !probe || ember_dequantize_row(m->tok_embd.dtype, m->tok_embd.data, probe, I->n_embd) != 0;
    free(probe);
    if (bad)
        return ember_seterr(err, "token_embd.weight: dtype %s cannot be dequantized",
                            ember_dtype_name(m->tok_embd.dtype));
    m->output_norm = load_vec(m, "output_norm.weight", I->n_embd, true, err, &rc);
    if (rc) return rc;
    const gguf_tensor *rf = gguf_find_tensor(m->f, "rope_freqs.weight");
    if (rf) {
        m->rope_freqs = load_vec(m, "rope_freqs.weight", m->n_rot / 2, true, err, &rc);
        if (rc) return rc;
        for (int i = 0; i < m->n_rot / 2; i++)
            if (!(m->rope_freqs[i] > 0)) return ember_seterr(err, "rope_freqs.weight[%d] = %g is not positive", i, m->rope_freqs[i]);
    }
    if (m->arch->flags & ARCH_LONGROPE && gguf_find_tensor(m->f, "rope_factors_long.weight")) {
        m->rope_long = load_vec(m, "rope_factors_long.weight", m->n_rot / 2, true, err, &rc);
        if (!rc) m->rope_short = load_vec(m, "rope_factors_short.weight", m->n_rot / 2, true, err, &rc);
        if (rc) return rc;
        for (int i = 0; i < m->n_rot / 2; i++)
            if (!(m->rope_long[i] > 0) || !(m->rope_short[i] > 0))
                return ember_seterr(err, "rope_factors_long/short.weight[%d] is not positive", i);
    }
    if (bind_layers(m, err)) return -1;
    /* The LM head: output.weight, or the tied embedding. */
    if (gguf_find_tensor(m->f, "output.weight"))
        bind_weight(m, &m->output, "output.weight", I->n_embd, I->n_vocab, EMBER_PROJ_OUTPUT, err, &rc);
    else
        bind_weight(m, &m->output, "token_embd.weight", I->n_embd, I->n_vocab, EMBER_PROJ_OUTPUT, err, &rc);
    if (rc) return rc;
    if (ember_plan_weight(m, &m->output, false, err) || ember_plan_finish(m, err)) return -1;
    return 0;
}

static void free_weight(ember_weight *w)
{
    free(w->f32);
    w->f32 = NULL;
    free(w->packed);
    w->packed = NULL;
}

void ember_model_free(ember_model *m)
{
    if (!m) return;
    if (m->layers) {
        for (int l = 0; l < m->info.n_layer; l++) {
            ember_layer *L = &m->layers[l];
            free(L->attn_norm); free(L->ffn_norm); free(L->bq); free(L->bk); free(L->bv);
            free(L->q_norm); free(L->k_norm);
            free(L->post_attn_norm); free(L->post_ffn_norm);
            ember_weight *ws[] = {&L->wq, &L->wk, &L->wv, &L->wqkv, &L->wo, &L->gate, &L->up, &L->gate_up, &L->down};
            for (int i = 0; i < 9; i++) free_weight(ws[i]);
        }
        free(m->layers);
    }
    if (m->tok_embd.f32 == m->output.f32) m->tok_embd.f32 = NULL;
    free_weight(&m->tok_embd);
    free_weight(&m->output);
    free(m->output_norm);
    free(m->rope_freqs);
    free(m->rope_long);
    free(m->rope_short);
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
    if (read_hparams(m->f, &m->info, m, &e2) || bind_model(m, &e2)) {
        ember_seterr(err, "%s: %s", path, e2.msg);
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
