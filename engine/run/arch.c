/* The architecture table (arch.h).  Each row is what the reference's graph
   for that architecture does differently from the llama layout. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "arch.h"

static const ember_arch_desc archs[] = {
    /* llama, and Mixtral: llama files with expert_count */
    {"llama", ARCH_MOE_MAY, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"qwen2", ARCH_QKV_BIAS, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* The text models of Qwen2-VL / Qwen2.5-VL and Qwen3-VL: their
       multimodal rope gives every section of a text token's rotation the
       same position, which is the plain NEOX rope (the sections are read
       by the vision side); Qwen3-VL's deepstack inputs come only with
       images */
    {"qwen2vl", ARCH_QKV_BIAS, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3vl", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"qwen3vlmoe", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_MOE, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0,
     0, 0},
    /* Qwen1.5-MoE / Qwen2-MoE: qwen2's attention; experts weighed by their
       plain probabilities, a shared expert gated by sigmoid(x . g) */
    {"qwen2moe", ARCH_QKV_BIAS | ARCH_MOE | ARCH_MOE_RAW_WEIGHTS, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0,
     0, 0, 0},
    /* Qwen3 MoE (Qwen3-30B-A3B, ...): qwen3's attention; each FFN routes a
       token to expert_used_count of expert_count experts (softmax, top-k,
       the k weights renormalised to sum 1) */
    {"qwen3moe", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_MOE, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0,
     0},
    /* Qwen3.5 (dense, 0.8B-27B) and Qwen3.5 MoE: three gated delta-net
       layers (deltanet.c) to one attention layer, whose query rows carry
       an output gate per head; Q/K norms, partial NEOX rope (its
       multimodal sections give a text token one position), the FFN's
       norm named post_attention_norm.  MoE: softmax top-k renormalised,
       a shared expert gated by sigmoid(x . g). */
    {"qwen35", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_GATED_ATTN | ARCH_DELTANET | ARCH_FFN_NORM_POST, ROPE_NEOX,
     FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"qwen35moe", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_GATED_ATTN | ARCH_DELTANET | ARCH_FFN_NORM_POST | ARCH_MOE,
     ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* Qwen3-Next (80B-A3B): qwen35moe's layers, the delta-net's projections
       in their fused forms where the file has them (ssm_in, ssm_ba) */
    {"qwen3next", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_GATED_ATTN | ARCH_DELTANET | ARCH_FFN_NORM_POST | ARCH_MOE,
     ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* IBM Granite 3: the llama layout with four multipliers from the file:
       embeddings, each branch before its residual add, the scores (in
       place of 1/sqrt(head_dim)), and the logits (divided) */
    {"granite", ARCH_MULTIPLIERS, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* IBM Granite 3 MoE (1B-A400M, 3B-A800M): granite with a mixture of
       experts in every FFN */
    {"granitemoe", ARCH_MULTIPLIERS | ARCH_MOE, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* IBM Granite 4.0-H (350M to Small): granite's multipliers (optional
       here), Mamba-2 layers where head_count_kv is 0 and attention in the
       rest, rope only where rope.scaling.finetuned allows (their files:
       none), experts with a shared one in the MoE sizes */
    {"granitehybrid", ARCH_MULTIPLIERS | ARCH_MAMBA2 | ARCH_MOE_MAY, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0,
     0, 0, 0},
    /* NVIDIA Nemotron-H (Nemotron Nano 9B / 12B v2): each layer one block
       on its norm, added to the stream: Mamba-2 (head_count_kv and
       feed_forward_length 0), attention without rope (feed_forward_length
       0), or an ungated FFN of squared ReLU */
    {"nemotron_h", ARCH_MAMBA2 | ARCH_ONE_BLOCK | ARCH_FREE_HEAD_DIM, ROPE_NORM, FFN_RELU2, ATT_SCALE_SCORES, 0, 0, 0, 0, 0,
     0, 0},
    /* Nemotron-H MoE (Nemotron 3 Nano 30B-A3B): its FFN layers ungated
       experts of squared ReLU, routed by sigmoid plus exp_probs_b (whatever
       the file's gating key says, as the reference routes them), with an
       ungated shared expert */
    {"nemotron_h_moe", ARCH_MAMBA2 | ARCH_ONE_BLOCK | ARCH_FREE_HEAD_DIM | ARCH_MOE | ARCH_ROUTING_KEYS, ROPE_NORM, FFN_RELU2,
     ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* TII Falcon-H1 (0.5B to 34B): in every layer Mamba-2 beside attention
       (NEOX rope), on the same norm, then the FFN; the model's multipliers
       are in its weights (the converter folds them in) */
    {"falcon-h1", ARCH_MAMBA2 | ARCH_PARALLEL_SSM | ARCH_FREE_HEAD_DIM, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0,
     0, 0},
    /* Baidu ERNIE 4.5 (dense, 0.3B): the llama layout, head dim from the
       file (Q/K/V biases where the file has them) */
    {"ernie4_5", ARCH_FREE_HEAD_DIM, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* ERNIE 4.5 MoE (21B-A3B): ernie4_5's attention; after the leading
       dense layers every step-th FFN a mixture with a shared expert, the
       experts chosen by the probabilities plus exp_probs_b */
    {"ernie4_5-moe", ARCH_FREE_HEAD_DIM | ARCH_MOE, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* SmolLM3: the llama layout, every 4th layer without rope (NoPE) */
    {"smollm3", 0, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 4, 0},
    /* Ministral 3 (text): the llama layout with the file's head dim, YaRN
       with its betas and log multiplier, and the attention temperature
       past the original context (0.1 when the file has none, as the
       reference) */
    {"mistral3", ARCH_FREE_HEAD_DIM | ARCH_YARN_KEYS, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0,
     0.1f},
    /* text-only Gemma 3: every 6th layer global; local layers use rope
       base 10000 and no rope scaling whatever the file says (the reference
       hard-codes the pattern and both) */
    {"gemma3", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_POST_NORMS | ARCH_EMBD_SCALE | ARCH_SWA | ARCH_SWA_OWN_ROPE |
                   ARCH_ATT_F32Q,
     ROPE_NEOX, FFN_GEGLU_TANH, ATT_SCALE_Q_27B, 6, 10000.0f, 0, 62, 0, 0, 0},
    /* Gemma (1) and CodeGemma: embeddings times sqrt(n_embd), Q scaled by
       1/sqrt(head_dim) after rope, GeGLU, tied output; no post norms */
    /* Command R7B: LayerNorm, attention and FFN in parallel, three sliding
       layers with rope then a global one without */
    {"cohere2", ARCH_LAYERNORM | ARCH_PARALLEL | ARCH_SWA | ARCH_LOGIT_SCALE, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 4, 0,
     0, 0, 0, 4, 0},
    /* Command R and Aya (Expanse, 23): cohere2 without sliding layers,
       rope on every layer */
    {"command-r", ARCH_LAYERNORM | ARCH_PARALLEL | ARCH_LOGIT_SCALE, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0,
     0, 0},
    /* ByteDance Seed-OSS: the llama layout with NEOX rope, the file's head
       dim, Q/K/V biases where the file has them, the FFN's norm named
       post_attention_norm */
    {"seed_oss", ARCH_FREE_HEAD_DIM | ARCH_FFN_NORM_POST, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* InternLM2 / 2.5: the llama layout (the converter splits its
       interleaved wqkv into Q, K and V) */
    {"internlm2", 0, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* StableLM 2 (and 3B-4E1T): LayerNorm with biases, partial rotary,
       optional Q/K/V biases, parallel blocks where there is no ffn_norm */
    {"stablelm", ARCH_LAYERNORM | ARCH_PARALLEL_MAY, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* StarCoder 2 (and Granite code models of its layout): LayerNorm with
       biases, Q/K/V biases where the file has them, the output's bias, NEOX
       rope, an ungated GELU FFN with biases, the LM head tied when the
       file has none */
    {"starcoder2", ARCH_LAYERNORM | ARCH_O_BIAS, ROPE_NEOX, FFN_GELU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    {"gemma", ARCH_FREE_HEAD_DIM | ARCH_EMBD_SCALE, ROPE_NEOX, FFN_GEGLU_TANH, ATT_SCALE_Q, 0, 0, 0, 0, 0, 0, 0},
    /* Phi-2: LayerNorm with biases, attention and FFN in parallel on one
       norm, Q/K/V fused (or apart) with biases, partial NEOX rope, Q
       scaled by 1/sqrt(head_dim), an ungated GELU FFN with biases, and a
       biased LM head */
    {"phi2", ARCH_LAYERNORM | ARCH_PARALLEL | ARCH_FUSED_QKV | ARCH_O_BIAS, ROPE_NEOX, FFN_GELU, ATT_SCALE_Q, 0, 0, 0, 0,
     0, 0, 0},
    /* Gemma 2: every other layer slides (the even ones), one rope for all;
       no Q/K norms; scores soft-capped at 50 and logits at 30 unless the
       file says otherwise; 27B (46 layers) scales Q by n_embd / n_head */
    {"gemma2", ARCH_FREE_HEAD_DIM | ARCH_POST_NORMS | ARCH_EMBD_SCALE | ARCH_SWA, ROPE_NEOX, FFN_GEGLU_TANH,
     ATT_SCALE_Q_27B, 2, 0, 30.0f, 46, 50.0f, 0, 0},
    /* GLM-4.5 / 4.6 (and Air): Q/K/V biases, Q/K norms where the file has
       them, partial NEOX rope, the FFN norm named post_attention_norm,
       leading dense layers then experts routed by sigmoid with a selection
       bias and a shared expert; the MTP layer not run */
    {"glm4moe", ARCH_QKV_BIAS | ARCH_FREE_HEAD_DIM | ARCH_FFN_NORM_POST | ARCH_MOE | ARCH_ROUTING_KEYS, ROPE_NEOX, FFN_SWIGLU,
     ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* DeepSeek V2 / V2.5 / V3 / R1, Kimi K2, GLM-4.7-Flash (deepseek2):
       multi-head latent attention (Q straight or through a low-rank pair,
       K and V from one compressed latent), llama-pairing rope on the
       heads' rope part, leading dense layers then experts with shared
       ones, routed by the file's gating function, norm and scale */
    {"deepseek2", ARCH_FREE_HEAD_DIM | ARCH_MOE | ARCH_ROUTING_KEYS | ARCH_MLA, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES,
     0, 0, 0, 0, 0, 0, 0},
    /* Mistral Small 4 (mistral4): the deepseek2 layout under its own name,
       as the reference loads and runs it */
    {"mistral4", ARCH_FREE_HEAD_DIM | ARCH_MOE | ARCH_ROUTING_KEYS | ARCH_MLA, ROPE_NORM, FFN_SWIGLU, ATT_SCALE_SCORES,
     0, 0, 0, 0, 0, 0, 0},
    /* OLMo 2 and OLMo 3 (olmo2): no pre-norms, Q and K normed over their
       whole projection, post norms on both branches, NEOX rope; OLMo 3's
       sliding window on three layers of four when the file has one */
    {"olmo2", ARCH_QK_NORM | ARCH_QK_NORM_FULL | ARCH_NO_PRE_NORMS | ARCH_POST_NORMS | ARCH_SWA_MAY, ROPE_NEOX, FFN_SWIGLU,
     ATT_SCALE_SCORES, 4, 0, 0, 0, 0, 0, 0},
    /* LFM2 (Liquid): gated short convolutions in most layers, attention
       with per-head Q/K norms in the rest (those with KV heads), NEOX rope */
    {"lfm2", ARCH_QK_NORM | ARCH_SHORTCONV, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* LFM2's mixture (LFM2-8B-A1B): leading dense layers, then experts
       chosen by the file's gating function plus exp_probs_b, their weights
       always renormalised and never scaled, as the reference routes them */
    {"lfm2moe", ARCH_QK_NORM | ARCH_SHORTCONV | ARCH_MOE | ARCH_ROUTING_KEYS | ARCH_MOE_ALWAYS_NORM, ROPE_NEOX, FFN_SWIGLU,
     ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* Ling / Ring mini 2.0 (bailingmoe2): Q/K/V in one matrix, Q/K norms,
       partial NEOX rope, leading dense layers, then glm4moe's routing
       limited to the best expert groups (expert_group_count), as the model
       routes (ik_llama.cpp does so only with grouped_expert_routing on) */
    {"bailingmoe2", ARCH_QK_NORM | ARCH_FUSED_QKV | ARCH_MOE | ARCH_ROUTING_KEYS, ROPE_NEOX, FFN_SWIGLU, ATT_SCALE_SCORES,
     0, 0, 0, 0, 0, 0, 0},
    /* GLM-4 (0414) and GLM-Z1: Q/K/V biases where the file has them,
       partial rotary in the llama pairing, post norms on both branches,
       gate and up rows in one ffn_up */
    {"glm4", ARCH_FREE_HEAD_DIM | ARCH_FUSED_GATE_UP | ARCH_POST_NORMS, ROPE_NORM, FFN_SWIGLU,
     ATT_SCALE_SCORES, 0, 0, 0, 0, 0, 0, 0},
    /* Phi-3 / 3.5 / 4-mini: the file's sliding window masks every layer
       (Phi-3-mini-4k's 2047 in a 4096 context), with the global rope */
    {"phi3", ARCH_FUSED_QKV | ARCH_FUSED_GATE_UP | ARCH_LONGROPE | ARCH_SWA | ARCH_SWA_ALL | ARCH_ATT_F32Q, ROPE_NEOX,
     FFN_SWIGLU,
     ATT_SCALE_Q, 0, 0, 0, 0, 0, 0, 0},
    /* gpt-oss (20B, 120B): Q/K/V and output biases, a sink logit per
       head, every other layer (the even ones) sliding, YaRN from the file;
       each FFN a mixture whose router and experts have biases, the experts
       chosen by the router's logits and weighed by the softmax of those
       chosen, with the clamped SwiGLU (FFN_SWIGLU_OAI) */
    {"gpt-oss", ARCH_QKV_BIAS | ARCH_O_BIAS | ARCH_ATT_SINKS | ARCH_FREE_HEAD_DIM | ARCH_SWA | ARCH_MOE |
                    ARCH_MOE_TOPK_SOFTMAX | ARCH_EXPERT_BIAS | ARCH_FFN_NORM_POST,
     ROPE_NEOX, FFN_SWIGLU_OAI, ATT_SCALE_SCORES, 2, 0, 0, 0, 0, 0, 0},
    /* Gemma 3n (E2B, E4B): gemma3's attention with V normed, four layers
       sliding to one global (sliding_window_pattern where the file has
       one), the sliding layers at rope.freq_base_swa or 10000 unscaled;
       alternating updates, laurel, per-layer inputs (altup.c) */
    {"gemma3n", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_POST_NORMS | ARCH_EMBD_SCALE | ARCH_SWA | ARCH_SWA_OWN_ROPE |
                    ARCH_SWA_BASE_KEY | ARCH_PER_LAYER_EMBD | ARCH_V_NORM | ARCH_SHARED_KV | ARCH_ALTUP | ARCH_ATT_F32Q,
     ROPE_NEOX, FFN_GEGLU_TANH, ATT_SCALE_NONE, 5, 10000.0f, 30.0f, 0, 0, 0, 0},
    /* Gemma 4 (E2B/E4B, 31B, and the 26B-A4B's experts beside its dense
       FFNs): the layer pattern, head dims, KV heads and FFN widths come
       from per-layer keys; Q/K norms do the scaling; the reference
       soft-caps the logits at 30 when the file says nothing */
    {"gemma4", ARCH_QK_NORM | ARCH_FREE_HEAD_DIM | ARCH_POST_NORMS | ARCH_EMBD_SCALE | ARCH_SWA |
     ARCH_PER_LAYER_EMBD | ARCH_V_NORM | ARCH_SHARED_KV | ARCH_SWA_OWN_ROPE | ARCH_V_FROM_K | ARCH_MOE_MAY |
     ARCH_MOE_BESIDE_DENSE | ARCH_ATT_F32Q,
     ROPE_NEOX, FFN_GEGLU_TANH, ATT_SCALE_NONE, 0, 0, 30.0f, 0, 0, 0, 0},
};

const ember_arch_desc *ember_arch_find(const char *name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (!strcmp(archs[i].name, name)) return &archs[i];
    return NULL;
}

void ember_arch_list(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", archs[i].name);
}
