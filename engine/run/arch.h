/* What distinguishes one transformer architecture from another, as data:
   loading (model.c) reads which tensors a layer has and which metadata to
   expect from here, and the forward pass (forward.c) reads flags instead
   of asking which architecture it runs. */
#ifndef EMBER_ARCH_H
#define EMBER_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { ROPE_NORM, ROPE_NEOX } ember_rope;
/* FFN_GELU: no gate, down(gelu(up x + up_b)) + down_b (phi2), the
   biases where the file has them; FFN_RELU2: no gate, down(relu(up x)^2)
   (Nemotron-H) */
typedef enum { FFN_SWIGLU, FFN_GEGLU_TANH, FFN_SWIGLU_OAI, FFN_GELU, FFN_RELU2 } ember_ffn_act;
/* An activation of the up rows alone: no gate matrix */
static inline bool ember_ffn_ungated(ember_ffn_act a) { return a == FFN_GELU || a == FFN_RELU2; }
/* How attention scores are scaled: 1/sqrt(head_dim) on the scores (the
   llama family), Q scaled by 1/sqrt(head_dim) before the f16 products
   (gemma3, phi3: the reference scales Q), or by 1/sqrt(n_embd/n_head)
   when the layer count says so (gemma3 27B's query_pre_attn_scalar). */
typedef enum { ATT_SCALE_SCORES, ATT_SCALE_Q, ATT_SCALE_Q_27B, ATT_SCALE_NONE } ember_att_scale;

enum {
    ARCH_QKV_BIAS = 1 << 0,        /* attn_{q,k,v}.bias required */
    ARCH_QK_NORM = 1 << 1,         /* attn_{q,k}_norm: RMSNorm per head */
    ARCH_FREE_HEAD_DIM = 1 << 2,   /* key_length need not be n_embd / n_head */
    ARCH_POST_NORMS = 1 << 3,      /* post_attention_norm, post_ffw_norm on the branch outputs */
    ARCH_EMBD_SCALE = 1 << 4,      /* token embedding times sqrt(n_embd) */
    ARCH_FUSED_QKV = 1 << 5,       /* attn_qkv: Q, K, V rows in one matrix */
    ARCH_FUSED_GATE_UP = 1 << 6,   /* ffn_up holds gate rows, then up rows */
    ARCH_LONGROPE = 1 << 7,        /* rope_factors_long/short by context size */
    ARCH_SWA_OWN_ROPE = 1 << 8,    /* sliding layers rotate with their own base and dims, no rope_freqs */
    ARCH_SWA = 1 << 9,             /* sliding-window layers (attention.sliding_window) */
    ARCH_PER_LAYER_EMBD = 1 << 10, /* per-layer input embeddings (gemma4 E2B/E4B) */
    ARCH_V_NORM = 1 << 11,         /* V RMS-normalised per head, without weight */
    ARCH_SHARED_KV = 1 << 12,      /* the last shared_kv_layers layers reuse earlier layers' KV */
    ARCH_SWA_ALL = 1 << 13,        /* with a sliding window, every layer slides (phi3) */
    ARCH_V_FROM_K = 1 << 14,       /* a layer without attn_v takes V from its K projection (gemma4 31B) */
    ARCH_MULTIPLIERS = 1 << 15,    /* the file's embedding, residual, attention and logit scales (granite) */
    ARCH_YARN_KEYS = 1 << 16,      /* rope.scaling.yarn_{beta_fast,beta_slow,log_multiplier} from the file (mistral3) */
    ARCH_MOE = 1 << 17,            /* FFNs are softmax-routed mixtures of experts, weights renormalised (model.h, ember_moe) */
    ARCH_MOE_MAY = 1 << 18,        /* the same when the file has expert_count (llama: Mixtral) */
    ARCH_MOE_RAW_WEIGHTS = 1 << 19,/* the chosen experts weighed by their probabilities as they are, not renormalised (qwen2moe) */
    ARCH_O_BIAS = 1 << 20,         /* attn_output.bias required */
    ARCH_ATT_SINKS = 1 << 21,      /* attn_sinks: a logit per head that joins each softmax's sum, not its values */
    ARCH_MOE_TOPK_SOFTMAX = 1 << 22,/* experts chosen by the router's logits, weighed by the softmax of the chosen ones */
    ARCH_EXPERT_BIAS = 1 << 23,    /* the router and every expert matrix have biases (ffn_*_exps.bias) */
    ARCH_FFN_NORM_POST = 1 << 24,  /* the FFN's input norm is named post_attention_norm (gpt-oss) */
    ARCH_LAYERNORM = 1 << 25,      /* norms subtract the mean (LayerNorm, with the file's biases if any), eps layer_norm_epsilon */
    ARCH_PARALLEL = 1 << 26,       /* attention and FFN both read the attention norm's output; x += attn + ffn */
    ARCH_LOGIT_SCALE = 1 << 27,    /* the output norm's rows times the file's logit_scale before the LM head */
    ARCH_PARALLEL_MAY = 1 << 28,   /* ARCH_PARALLEL when the file has no ffn_norm (stablelm) */
    ARCH_GATED_ATTN = 1 << 29,     /* attn_q gives each head's query, then its gate: output x sigmoid(gate) */
    ARCH_DELTANET = 1 << 30,       /* all but every full_attention_interval-th layer are gated delta-net layers (deltanet.c) */
};
/* the file's expert_gating_func (sigmoid), expert_weights_norm and
   expert_weights_scale decide the routing (glm4moe); other architectures'
   references fix theirs, whatever a file says (the last bit: unsigned) */
#define ARCH_ROUTING_KEYS (1u << 31)
/* attention through a compressed latent (DeepSeek's multi-head latent
   attention, mla.c): one cached row per token, [rope(k_pe), norm(c)], read
   by every query head; the flags past bit 31 need the 64-bit field */
#define ARCH_MLA (1ull << 32)
/* no norm before attention or the FFN: each reads the residual stream
   itself, and the branch's output is normed after (ARCH_POST_NORMS; OLMo 2) */
#define ARCH_NO_PRE_NORMS (1ull << 33)
/* the Q and K norms span the whole projection (n_head x head_dim), not a
   head (OLMo 2) */
#define ARCH_QK_NORM_FULL (1ull << 34)
/* a sliding window only when the file gives one (attention.sliding_window),
   its layers by the file's sliding_window_pattern (a period or one bool a
   layer) or the architecture's period; they rotate without the file's
   rope scaling, at rope.freq_base_swa or the global base (OLMo 3) */
#define ARCH_SWA_MAY (1ull << 35)
/* layers whose head_count_kv is 0 are gated short convolutions instead
   of attention (shortconv.c); the output norm is named token_embd_norm (LFM2) */
#define ARCH_SHORTCONV (1ull << 36)
/* with ARCH_ROUTING_KEYS: the chosen experts' weights renormalised
   whatever expert_weights_norm says (LFM2's MoE) */
#define ARCH_MOE_ALWAYS_NORM (1ull << 37)
/* with ARCH_MOE_MAY: a layer with a router (ffn_gate_inp) runs its experts
   beside the layer's dense FFN, each branch normed before and after, the
   router reading the residual stream RMS-normed and scaled (Gemma 4's
   26B-A4B; moe.c) */
#define ARCH_MOE_BESIDE_DENSE (1ull << 38)
/* Gemma 3n: n_altup residual streams with laurel beside attention
   (altup.c); the first 10 layers' FFN gates cut to their Gaussian top
   tail; the layers past the 20th read the KV of the last of their kind
   before it, as the reference fixes both */
#define ARCH_ALTUP (1ull << 39)
/* with ARCH_SWA_OWN_ROPE and a hard-coded sliding base: the file's
   rope.freq_base_swa where it has one (Gemma 3n) */
#define ARCH_SWA_BASE_KEY (1ull << 40)
/* layers whose head_count_kv is 0 are Mamba-2 selective state-space
   layers instead of attention (mamba2.c); the file's optional
   multipliers; rope only while rope.scaling.finetuned (default true) says
   so, as the reference reads IBM Granite 4.0's hybrid files */
#define ARCH_MAMBA2 (1ull << 41)
/* with ARCH_MAMBA2: each layer is one block on its norm's rows, added to
   the stream: Mamba-2 where head_count_kv and feed_forward_length are 0,
   attention (no rope, no FFN) where only feed_forward_length is, else an
   FFN alone (NVIDIA Nemotron-H) */
#define ARCH_ONE_BLOCK (1ull << 42)
/* with ARCH_MAMBA2: every layer runs Mamba-2 and attention side by side on
   the same normed rows, their outputs summed into the stream, then the
   FFN (TII Falcon-H1) */
#define ARCH_PARALLEL_SSM (1ull << 43)
/* attention with f32 queries and softmax weights over the f16 cache
   (att_f32.h): the references of these architectures run flash attention
   (fixtures/README.md), and with scores of tens (Gemma's normed Q and K)
   the mainline f16 rounding of Q and of each weight moves the logits far
   past the goldens' bound (doc/PERFORMANCE.md, "Attention numerics") */
#define ARCH_ATT_F32Q (1ull << 44)

typedef struct {
    const char *name;              /* general.architecture and the key prefix */
    uint64_t flags;
    ember_rope rope;
    ember_ffn_act act;
    ember_att_scale att_scale;
    /* Sliding-window layers when the file carries no pattern: layer il is
       global when il % swa_period == swa_period - 1 (0: no sliding layers). */
    int swa_period;
    /* Rope base of sliding layers (ARCH_SWA_OWN_ROPE): > 0, hard-coded
       with no scaling (gemma3: the reference ignores the file there);
       0, the file's rope.freq_base_swa, else the global base, scaled as
       the global layers (gemma4). */
    float swa_rope_base;
    float softcap;                 /* final logit soft-cap when the file has none (0: none) */
    /* ATT_SCALE_Q_27B: the layer count of the size whose query scale is
       1 / sqrt(n_embd / n_head) instead of 1 / sqrt(head_dim) (27B) */
    int q_scale_layers;
    /* Attention scores soft-capped before the softmax, cap * tanh(s / cap),
       when the file has no attn_logit_softcapping (0: none; gemma2) */
    float att_softcap;
    /* Layers l with (l + 1) % nope_period == 0 attend without rope (0:
       none; smollm3: every 4th) */
    int nope_period;
    /* Llama-4-style attention temperature (mistral3): Q times
       1 + t * ln(floor((pos + 1) / n_ctx_orig) + 1) after rope, t being
       attention.temperature_scale, this when the file has none (0: none) */
    float attn_temp;
} ember_arch_desc;

/* The architecture named NAME, or NULL. */
const ember_arch_desc *ember_arch_find(const char *name);
/* "llama, qwen2, ..." for messages, into buf of cap bytes. */
void ember_arch_list(char *buf, size_t cap);

#endif
