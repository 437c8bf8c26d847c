/* Internal model structures shared by model.c (loading), the weight
   strategy (plan.c: each tensor's representation; lifecycle.c: packing and
   eviction at the profile's phases), forward.c and session.c. */
#ifndef EMBER_MODEL_H
#define EMBER_MODEL_H

#include "arch.h"
#include "ember.h"
#include "gguf.h"
#include "kernels.h"
#include "threads.h"

/* One layer's rotary embedding: theta_i = pos * base^(-2i/n_rot) / ff[i]
   * freq_scale over the n_rot leading dims, cos and sin times mscale.
   YaRN (ext_factor 1) blends the scaled angle with the unscaled one by a
   ramp over the pairs corr_lo..corr_hi and raises mscale by
   1 + 0.1 ln(1 / freq_scale), as the reference's rope does. */
typedef struct {
    float base, freq_scale, mscale;
    float ext_factor, corr_lo, corr_hi;
    const float *ff;            /* n_rot/2 divisors, or NULL (phi3: the session's) */
    int n_rot;
} ember_rope_cfg;

/* One way to run a weight: its kernel and the bytes that kernel reads,
   stride apart (the file's rows, f32 rows, or a packed layout's tiles). */
typedef struct {
    const ember_kernel *kern;
    const void *data;
    size_t stride;
} ember_wview;

/* A matrix [out x in]: rows of `in` elements in one representation. */
typedef struct ember_weight {
    const gguf_tensor *t;
    int dtype;                  /* GGUF dtype of the source */
    int64_t in, out;
    ember_rep rep;
    const uint8_t *data;        /* the file's rows in the mmap */
    size_t row_bytes;
    float *f32;                 /* eager: out x in floats */
    const ember_kernel *kern;   /* the rows' kernel (F32's for eager) */
    const ember_kernel *pack_kern;   /* the packed kernel the plan chose, or NULL */
    void *packed;               /* its tiles, once packed: anonymous memory, or
                                   the pack cache's read-only mapping (m->pack_map) */
    size_t packed_bytes;
    /* What a product runs for one token and for a batch: set by the plan,
       switched to the tiles by the lifecycle when it packs. */
    ember_wview one, many;
    int proj;                   /* EMBER_PROJ_* bit, 0 if not a projection */
    int plan_index;
} ember_weight;

/* The most experts a layer may have (a bound on the router's row) */
#define EMBER_MAX_EXPERTS 4096

/* A mixture-of-experts FFN (ARCH_MOE): the router scores every expert for
   a token; the n_used best run, each a gated FFN whose three matrices are
   one slab of a 3-D tensor [in, out, n_expert] (ffn_{gate,up,down}_exps),
   and their outputs are summed by the renormalised router weights. */
typedef struct {
    ember_weight router;        /* ffn_gate_inp: n_embd -> n_expert */
    ember_weight *gate, *up, *down;   /* n_expert views each, one block */
    float *sel_bias;            /* exp_probs_b: added to the probabilities to choose, not to weigh (or NULL) */
    /* a shared expert every token runs, its output added to the routed
       ones' (ffn_{gate,up,down}_shexp; unbound when the model has none) */
    ember_weight sh_gate, sh_up, sh_down;
    float *sh_gate_inp;         /* ffn_gate_inp_shexp: the shared output times sigmoid(x . this), or NULL */
    /* ARCH_EXPERT_BIAS: the router's bias (n_expert) and each expert's
       rows' biases, expert e's at e * rows (NULL otherwise) */
    float *router_b, *gate_b, *up_b, *down_b;
    /* ffn_gate_up_exps: each expert's gate rows then its up rows in one
       slab (gate and up unbound then) */
    ember_weight *gate_up;
    /* ffn_down_exps.scale: expert e's output times down_s[e] (or NULL) */
    float *down_s;
    /* ARCH_MOE_BESIDE_DENSE: the dense FFN is the shared expert (sh_*, on
       the ffn_norm rows), normed by post_norm_1; the experts read the
       pre_norm_2 rows, their sum normed by post_norm_2; the router reads
       rms(x) / sqrt(n_embd) x router_s */
    float *pre_norm_2, *post_norm_1, *post_norm_2, *router_s;
} ember_moe;

/* A gated delta-net layer (ARCH_DELTANET, deltanet.c) in place of
   attention: a causal convolution over the last d_conv projections of
   Q, K and V, then per value head a d x d state decayed and corrected by
   each token (the delta rule), read by the query; the heads' outputs
   RMS-normed, gated by silu(z) and projected back. */
typedef struct {
    ember_weight qkv;           /* attn_qkv: n_embd -> 2 key_dim + value_dim (Q, K, V) */
    ember_weight z;             /* attn_gate: n_embd -> value_dim, the output gate */
    ember_weight beta, alpha;   /* ssm_beta, ssm_alpha: n_embd -> n_v (the write strength, the decay's input) */
    /* Qwen3-Next's fused forms, in place of qkv and z, of beta and alpha
       (unbound otherwise): per Q/K head its q, k, v and z rows (ssm_in),
       its b and a rows (ssm_ba) */
    ember_weight in, ba;
    ember_weight out;           /* ssm_out: value_dim -> n_embd */
    float *conv;                /* ssm_conv1d's taps, tap-major: [d_conv][conv_dim], the oldest input's tap first */
    float *dt_bias, *a;         /* ssm_dt.bias, ssm_a (= -exp(A_log)): n_v each */
    float *norm;                /* ssm_norm: head_dim, shared by the heads */
    size_t state_off;           /* its state's first float in the session's recurrent state (recurrent.h) */
} ember_deltanet;

/* The delta-net layers' shape (the file's ssm.* keys), the same for all */
typedef struct {
    int d_conv;                 /* ssm.conv_kernel */
    int hd;                     /* ssm.state_size: key and value head dim */
    int n_k, n_v;               /* ssm.group_count (Q/K heads), ssm.time_step_rank (V heads) */
    int key_dim, value_dim, conv_dim;   /* n_k hd, n_v hd, 2 key_dim + value_dim */
    /* the layers' projections have Qwen3-Next's fused forms ssm_in, ssm_ba
       (the session's unfusing buffers).  V head h reads Q/K head h % n_k
       (Qwen3.5's tiling), or h / (n_v / n_k) with ssm_ba */
    bool fused_in, fused_ba;
    int interval;               /* full_attention_interval: layer l attends when (l + 1) % interval == 0 */
    int n_layers;               /* how many layers are delta-net layers */
    size_t state_floats;        /* one layer's state: (d_conv - 1) conv_dim + n_v hd^2 */
} ember_dn_shape;

/* A multi-head latent attention layer (ARCH_MLA, mla.c).  K and V come
   from one compressed latent c of kv_lora values a token (plus a rope
   part k_pe shared by the heads); the cache keeps [rope(k_pe), norm(c)],
   one row a token for all heads.  Each head's query is absorbed into the
   latent: its no-rope part times k_b (nope -> kv_lora), its rope part
   rotated; the head's output over the latent goes through v_b
   (kv_lora -> v) before attn_output. */
typedef struct {
    ember_weight q;             /* attn_q: n_embd -> n_head (nope + rope); unbound with the low-rank pair */
    ember_weight q_a, q_b;      /* attn_q_a: n_embd -> q_lora; attn_q_b: q_lora -> n_head (nope + rope) */
    float *q_a_norm;            /* attn_q_a_norm: q_lora */
    ember_weight kv_a;          /* attn_kv_a_mqa: n_embd -> kv_lora + rope */
    float *kv_a_norm;           /* attn_kv_a_norm: kv_lora */
    /* per head: k_b[h] nope -> kv_lora (attn_k_b's slab, or f32 rows
       transposed from attn_kv_b's K rows, owned: k_bt), v_b[h] kv_lora ->
       v (attn_v_b's slab, or attn_kv_b's V rows in the file) */
    ember_weight *k_b, *v_b;
    float *k_bt;
} ember_mla;

/* A gated short convolution (ARCH_SHORTCONV, shortconv.c) in place of
   attention: in_proj gives B, C and x; y = C * conv(B * x), a causal
   depthwise convolution over the last l_cache rows of B * x; out_proj y. */
typedef struct {
    ember_weight in;            /* shortconv.in_proj: n_embd -> 3 n_embd (B, C, x) */
    ember_weight out;           /* shortconv.out_proj: n_embd -> n_embd */
    float *conv;                /* the taps, tap-major [l_cache][n_embd], the oldest input's first */
    size_t state_off;           /* its last l_cache - 1 rows of B * x in the recurrent state (recurrent.h) */
} ember_shortconv;

/* A Mamba-2 selective state-space layer (ARCH_MAMBA2, mamba2.c) in place
   of attention: ssm_in gives z, the convolution's input xBC and dt; a
   causal depthwise convolution over xBC's last d_conv rows (plus its bias,
   then SiLU) gives x, B and C; each head's d_state x head_dim state decays
   by exp(softplus(dt + dt_bias) A) and takes in B x dt; y = C . state +
   D x, gated by silu(z), RMS-normed in n_group groups; ssm_out y. */
typedef struct {
    ember_weight in;            /* ssm_in: n_embd -> 2 d_inner + 2 n_group d_state + n_head */
    ember_weight out;           /* ssm_out: d_inner -> n_embd */
    float *conv;                /* ssm_conv1d's taps, tap-major [d_conv][conv_dim], the oldest input's first */
    float *conv_b;              /* ssm_conv1d.bias: conv_dim, or NULL */
    float *dt_b, *a, *d;        /* ssm_dt.bias, ssm_a (negative), ssm_d: n_head each */
    float *norm;                /* ssm_norm: d_inner, n_group groups of d_inner / n_group */
    size_t state_off;           /* its conv rows and heads' states in the recurrent state (recurrent.h) */
} ember_mamba2;

/* The Mamba-2 layers' shape (the file's ssm.* keys), the same for all */
typedef struct {
    int d_conv, d_inner, d_state;   /* ssm.conv_kernel, ssm.inner_size, ssm.state_size */
    int n_head, n_group, head_dim;  /* ssm.time_step_rank, ssm.group_count, d_inner / n_head */
    int conv_dim, in_dim;           /* d_inner + 2 n_group d_state; conv_dim + d_inner + n_head */
    int n_layers;
    size_t state_floats;            /* one layer's: (d_conv - 1) conv_dim + d_inner d_state */
} ember_m2_shape;

/* The latent attention's widths, the same for every layer */
typedef struct {
    int kv_lora, q_lora;        /* attention.kv_lora_rank, q_lora_rank (0: Q straight from attn_q) */
    int nope, rope, v;          /* a head's no-rope and rope query/key parts, its value width */
} ember_mla_shape;

/* A layer's part of Gemma 3n's alternating updates (ARCH_ALTUP, altup.c):
   the residual stream is n_altup streams; each layer predicts every stream
   from all of them, runs the active one through laurel, attention and the
   FFN, and corrects every stream by that one's innovation. */
typedef struct {
    ember_weight laurel_l, laurel_r;   /* laurel_l: n_embd -> rank; laurel_r: rank -> n_embd */
    float *laurel_post_norm;
    ember_weight router;               /* altup_router: n_embd -> n_altup */
    float *router_norm;                /* altup_router_norm: n_embd */
    float *predict_coef;               /* altup_predict_coef: n_altup^2 rows of n_altup */
    float *correct_coef;               /* altup_correct_coef: n_altup rows of n_altup */
    float *correct_scale;              /* altup_correct_scale: n_embd */
} ember_altup;

typedef struct {
    float *attn_norm, *ffn_norm;
    float *attn_norm_b, *ffn_norm_b;   /* ARCH_LAYERNORM: the norms' biases, where the file has them */
    float *bq, *bk, *bv;        /* qwen2 biases (NULL otherwise) */
    float *bo;                  /* attn_output.bias (ARCH_O_BIAS), or NULL */
    float *bqkv;                /* attn_qkv.bias, where a fused Q/K/V has one, or NULL */
    float *up_b, *down_b;       /* FFN_GELU: ffn_up.bias, ffn_down.bias where the file has them */
    float *sinks;               /* attn_sinks: one logit per q head (ARCH_ATT_SINKS), or NULL */
    float *q_norm, *k_norm;     /* qwen3 per-head norms */
    float *post_attn_norm, *post_ffn_norm;   /* gemma: on the branch outputs */
    ember_weight wq, wk, wv, wo, gate, up, down;
    ember_weight wqkv, gate_up; /* fused (phi3): wq..wv / gate, up unbound */
    int n_head_kv, head_dim, n_ff;
    int swa;                    /* sliding window in positions; 0: global attention */
    int kv_src;                 /* layer whose KV cache this one reads (itself unless shared) */
    ember_rope_cfg rope;
    /* per-layer input (gemma4): x += post_norm(proj(gelu(inp_gate x) * input_l)) */
    ember_weight pl_gate, pl_proj;
    float *pl_post_norm;
    float *out_scale;           /* layer_output_scale: the residual stream times this, or NULL */
    ember_moe *moe;             /* the FFN's experts (gate, up, down unbound), or NULL: dense */
    ember_deltanet *dn;         /* a delta-net layer (no attention, no KV), or NULL */
    ember_shortconv *sc;        /* a short convolution layer (no attention, no KV), or NULL */
    ember_mamba2 *m2;           /* a Mamba-2 layer (no attention, no KV), or NULL */
    ember_mla *mla;             /* a latent attention layer (wq..wv unbound; one KV head of rope + kv_lora), or NULL */
    ember_altup *alt;           /* ARCH_ALTUP: the layer's alternating updates and laurel, or NULL */
    /* the FFN's gate rows cut to their Gaussian top tail first (Gemma 3n):
       relu(g - mean - sparsity * std); 0: none */
    float sparsity;
} ember_layer;

struct ember_model {
    gguf_file *f;
    ember_model_info info;
    ember_plan_opts opts;
    const ember_arch_desc *arch;
    int n_rot;
    float rope_base, rms_eps;
    float *rope_freqs;          /* n_rot/2 divisors, or NULL */
    float *rope_long, *rope_short;   /* LongRoPE divisors (phi3), or NULL */
    int n_ctx_orig;             /* rope.scaling.original_context_length: LongRoPE's short
                                   factors serve contexts up to this; YaRN's ramp */
    float rope_attn_factor;     /* rope.scaling.attn_factor: multiplies cos and sin */
    float rope_freq_scale;      /* 1 / rope.scaling.factor where the scaling type applies it */
    float rope_freq_scale_swa;  /* the same for sliding layers whose rope is not hard-coded */
    float rope_ext_factor;      /* 1 for rope.scaling.type yarn, else 0 */
    float yarn_beta_fast, yarn_beta_slow;   /* YaRN's ramp ends (ARCH_YARN_KEYS: the file's) */
    float attn_temp;            /* arch.h's attention temperature (0: none) */
    int moe_lead, moe_step;     /* with experts: layer l mixes when l >= moe_lead and (l + 1) % moe_step == 0 */
    /* with experts, the file's routing where it says: probabilities by
       sigmoid instead of softmax (expert_gating_func 2), the chosen ones'
       weights renormalised or not (expert_weights_norm), then times
       expert_weights_scale */
    bool moe_sigmoid, moe_norm;
    float moe_scale;
    /* group-limited routing (expert_group_count, _used_count): the experts
       in moe_groups equal runs, a token's choice limited to the
       moe_groups_used runs whose two best scores sum highest (1, 1: none) */
    int moe_groups, moe_groups_used;
    int n_swa;                  /* sliding window of the local layers (0: none) */
    float q_scale;              /* ATT_SCALE_Q*: Q times this before attention */
    float softcap;              /* final logits cap * tanh(x / cap); 0: none */
    float att_softcap;          /* attention scores cap * tanh(s / cap) before the softmax; 0: none */
    /* ARCH_MULTIPLIERS (0: none): embeddings times embd_mult, each branch
       times resid_mult before its residual add, scores times att_mult,
       logits divided by logit_div */
    float embd_mult, resid_mult, att_mult, logit_div;
    float logit_mul;            /* ARCH_LOGIT_SCALE: the normed output rows times this (1: none) */
    int n_layer_kv;             /* layers with their own KV (the rest share) */
    ember_dn_shape dn;          /* ARCH_DELTANET: the delta-net layers' shape */
    size_t rec_floats;          /* every recurrent layer's state, floats (recurrent.h) */
    int sc_lcache;              /* ARCH_SHORTCONV: shortconv.l_cache, the convolution's width */
    ember_m2_shape m2;          /* ARCH_MAMBA2: the Mamba-2 layers' shape */
    bool no_rope;               /* ARCH_MAMBA2 with rope.scaling.finetuned false: no layer rotates */
    ember_mla_shape mla;        /* ARCH_MLA: the latent attention's widths */
    int n_blocks;               /* the file's block_count when it holds layers past n_layer (MTP), else 0 */
    int n_pl;                   /* per-layer input width (0: none) */
    /* ARCH_ALTUP: the streams, the active one, and the projections from
       the embedding to streams 1.. and back (n_altup - 1 slabs each) */
    int n_altup, altup_act, alt_rank;   /* alt_rank: the widest laurel */
    ember_weight *altup_proj, *altup_unembd;
    ember_weight pl_embd;       /* per_layer_token_embd: rows looked up per token */
    ember_weight pl_model_proj; /* n_embd -> n_layer * n_pl */
    float *pl_proj_norm;
    /* maxima over the layers, for workspace sizes */
    int max_head_kv, max_head_dim, max_ff;
    ember_layer *layers;
    ember_weight **all_w;       /* ember_model_weights: n_all_w of them */
    int n_all_w;
    ember_weight tok_embd;      /* rows looked up one at a time */
    ember_weight output;        /* may alias token_embd's data */
    float *output_norm, *output_norm_b;
    float *output_b;            /* output.bias (phi2), or NULL */
    bool parallel;              /* attention and FFN on one norm's rows (ARCH_PARALLEL, _MAY) */
    ember_tokenizer *tok;
    char tok_error[1024];       /* why tok is NULL */
    char warnings[1024];        /* accepted metadata oddities, one per line */
    uint8_t *used;              /* while loading: which of the file's tensors the graph reads */
    char *chat_template;
    ember_plan plan;
    ember_isa isa;
    /* the lifecycle's state (lifecycle.c): the weights are shared by every
       session on the model, packed once */
    bool packed_done, evicted;
    bool embd_released;   /* the embedding table's pages were released: rows are read with pread */
    double pack_ms;
    double prefault_ms;   /* of pack_ms: faulting the fresh tile memory in */
    ember_memstat mem_packed, mem_evicted;   /* snapshots taken when it packed */
    /* every packed weight's tiles when packed in memory (lifecycle.c):
       one block, each weight's tiles at a 4 KiB boundary in it */
    void *pack_arena;
    size_t pack_arena_bytes;
    /* the pack cache (packcache.c): on a hit every packed weight's tiles
       point into this one mapping, which no arena free may touch */
    void *pack_map;
    size_t pack_map_bytes;
    ember_pack_cache_state pack_cache;
    double pack_cache_write_ms;
    char pack_cache_note[256];
    /* the file of a miss being written (packcache.c), NULL when none: it
       reads the arenas, so the model waits for it before freeing them */
    struct ember_pack_writer *pack_writer;
};

/* Every matrix weight of the model that a strategy may pack (layers with
   their experts, then the LM head), listed once at load: *n of them. */
ember_weight *const *ember_model_weights(const ember_model *m, int *n);
/* Those of them the plan chose to pack, *k of them, in a malloc'd array
   (NULL: out of memory). */
ember_weight **ember_model_weights_to_pack(const ember_model *m, int *k);

#endif
