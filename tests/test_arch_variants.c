/* Settings of real downloads that the golden fixtures do not carry, on
   tiny models this test writes itself, against logits the reference
   (ik_llama.cpp 8337e4c, 1 thread, n_ctx 512, F16 KV cache, flash
   attention) computed on the same files (arch_variants_ref.h):
   rope.scaling on every architecture (linear without a type key, yarn),
   rope.scaling.attn_factor without LongRoPE factors, Phi-3's sliding
   window, gemma4 without per-layer inputs, with a layer whose V is its
   K projection and with no rope.freq_base_swa, gemma4 with experts beside
   the dense FFN (26B-A4B's form; gate and up apart give the one-slab
   file's logits bit for bit: gemma4_split_gate_up), and gemma2 (soft-capped
   scores and logits, caps small enough to bend every row; the 27B's
   query scale by n_embd / n_head; the reference knows gemma2 only at
   26, 42 and 46 layers), smollm3's layers without rope, granite's
   multipliers, mistral3's YaRN keys and attention temperature, and
   qwen35's gated delta-net and gated attention layers (with experts:
   qwen35moe; qwen3next with the fused ssm_in / ssm_ba), whose state's
   rewinds are checked as properties (dn_rewind),
   phi2 (biased LayerNorms and projections, fused or apart, an ungated
   GELU FFN in parallel with the attention, a biased LM head), command-r,
   internlm2, glm4moe (sigmoid routing with a selection bias, renormalised
   and scaled; its multi-token-prediction block skipped: mtp_skipped),
   bailingmoe2 (the same routing limited to the best groups of experts:
   its reference rows come from ik_llama.cpp with grouped_expert_routing
   on, which its default leaves off, choosing among all experts as the
   model does not), seed_oss, olmo2 (OLMo 2, and OLMo 3's sliding window),
   starcoder2 and lfm2 / lfm2moe (LFM2's short convolutions beside attention, their
   state carried across passes of 2; LFM2-8B-A1B's experts), granitehybrid (Granite
   4.0-H's Mamba-2 layers beside attention without rope, dense and with experts),
   nemotron_h (layers of one block: Mamba-2, attention or an ungated FFN) and
   falcon-h1 (Mamba-2 beside attention in every layer)
   against f64 numpy readings of llama.cpp's graphs (tests/ref/, as the reference
   has none of them),
   and deepseek2's latent attention in both
   file forms (attn_kv_b, and attn_k_b / attn_v_b with one KV head; the
   V2-Lite form's rows from the reference's plain attention, -mla 0, as
   its latent modes crash on heads of that width), mistral4 (Mistral Small
   4: that layout under its own name, its experts' gate and up in one slab).  The reference scales granite's residual stream where the
   model scales each branch before its add (Hugging Face's Granite, and
   llama.cpp), so residual_scale is checked as a property instead: x2 on
   the branches equals attn_output and ffn_down doubled, bit for bit
   (granite_residual).  Its llama graph's MoE branch (Mixtral, granitemoe)
   adds the normed FFN input rather than the residual stream, so those are
   checked as a property too: identical experts give the dense model's
   logits (moe_equals_dense).  Each row must agree at
   cosine >= 0.99999 with the same top-1, eager and compressed.  Phi-3-mini-4k
   files without a window key get the reference's default (a property:
   legacy_phi3_window).

   EMBER_ARCH_VARIANTS_DUMP=DIR writes the models and ids to DIR for the
   reference instead (a model per case, prompt and forced ids). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "ember.h"
#include "gguf.h"
#include "tap.h"

enum { V = 16, E = 64, NP = 12, NF = 4 };

static const int32_t prompt[NP] = {3, 14, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9};
static const int32_t forced[NF] = {7, 9, 3, 2};

typedef struct {
    const char *name, *arch;
    const char *what;
    int layers;                 /* 0: the architecture's default here */
    int window;                 /* phi3's sliding_window key: 0 the case's own, -1 none */
} vcase;

#include "arch_variants_ref.h"

static const vcase cases[] = {
    {"llama-linear4", "llama", "llama: rope.scaling.factor 4 with no type key (linear)", 0, 0},
    {"qwen3-yarn4", "qwen3", "qwen3: rope.scaling.type yarn, factor 4, original context 32", 0, 0},
    {"phi3-window6", "phi3", "phi3: sliding_window 6 over a 16-token run, attn_factor 1.25 without LongRoPE factors", 0, 0},
    {"gemma4-31b", "gemma4", "gemma4: no per-layer inputs, V from K on full layers, no freq_base_swa, linear 2", 0, 0},
    {"gemma2-2b", "gemma2", "gemma2 (26 layers): window 5 on even layers, scores capped at 1, logits at 2", 26, 0},
    {"gemma2-27b", "gemma2", "gemma2 (46 layers, the 27B): Q scaled by n_embd / n_head, not the head dim", 46, 0},
    {"smollm3-nope", "smollm3", "smollm3 (8 layers): layers 3 and 7 attend without rope", 8, 0},
    {"ernie-hd32", "ernie4_5", "ernie4_5 (dense): heads of 32 over a 64-wide model, rope base 500000", 0, 0},
    {"granite-mult", "granite", "granite: embedding x4, scores x0.1, logits / 3 (residual_scale 1)", 0, 0},
    {"qwen3moe-8x3", "qwen3moe", "qwen3moe: 8 experts of 40 rows, 3 chosen a token and renormalised, F32 router", 0, 0},
    {"qwen2vl-text", "qwen2vl", "qwen2vl (Qwen2.5-VL's text model): M-RoPE sections 4/2/2, Q/K/V biases", 0, 0},
    {"qwen3vl-text", "qwen3vl", "qwen3vl (Qwen3-VL's text model): interleaved M-RoPE sections 8/4/4, 2 deepstack layers", 0, 0},
    {"qwen3vlmoe-text", "qwen3vlmoe", "qwen3vlmoe: Qwen3-VL's MoE text model, 8 experts, 3 a token", 0, 0},
    {"ernie-moe", "ernie4_5-moe",
     "ernie4_5-moe: a dense first layer, then 8 experts (3 a token, chosen with exp_probs_b) and a shared expert", 3, 0},
    {"qwen2moe", "qwen2moe", "qwen2moe: 8 experts (3 a token, weights as they are) and a sigmoid-gated shared expert", 0, 0},
    {"glm4-9b", "glm4", "glm4: Q/K/V biases, gate and up rows in one ffn_up, post norms, rope on 8 of 16 dims", 0, 0},
    {"gemma1-hd32", "gemma", "gemma (1): heads of 32 over 64 / 4, embeddings x sqrt(64), Q / sqrt(32), GeGLU", 0, 0},
    {"mistral3-temp", "mistral3",
     "mistral3: yarn 4 from 8 positions with betas 0.5 / 0.25 and log multiplier 0.5, temperature 0.5 past 8", 0, 0},
    {"gpt-oss", "gpt-oss",
     "gpt-oss: sinks, Q/K/V/O biases, window 5 on layer 0, yarn 4; 8 biased experts, 3 by logit, softmax-weighed, "
     "clamped SwiGLU",
     0, 0},
    {"cohere2", "cohere2",
     "cohere2 (8 layers): LayerNorm (eps 0.05), attention and FFN in parallel on one norm, window 5 with rope on three "
     "layers of four, normed rows x0.5 before the tied LM head",
     8, 0},
    {"stablelm", "stablelm",
     "stablelm (StableLM 2 1.6B's layout): LayerNorms with biases, rope on 4 of 16 dims, Q/K/V biases", 0, 0},
    {"stablelm-par", "stablelm", "stablelm without ffn_norm: attention and FFN in parallel on the biased attention norm", 0,
     0},
    {"qwen35", "qwen35",
     "qwen35 (Qwen3.5's layout): gated delta-net layers (conv 4, 2 Q/K heads under 4 V heads of 64) between gated "
     "attention layers, rope on 16 of 32 dims",
     4, 0},
    {"qwen35moe", "qwen35moe", "qwen35moe: qwen35's layers, 8 experts (3 a token) and a sigmoid-gated shared expert", 4, 0},
    {"qwen3next", "qwen3next",
     "qwen3next: qwen35moe's layers, one attention layer in 4, Q/K/V/z and beta/alpha in their fused per-head forms "
     "(ssm_in, ssm_ba), V head h on Q/K head h / 2",
     4, 0},
    {"phi2", "phi2",
     "phi2: biased LayerNorms, fused Q/K/V with its bias, rope on 8 of 16 dims, attention and an ungated GELU FFN "
     "(biased) in parallel, a biased LM head",
     0, 0},
    {"phi2-split", "phi2", "phi2 with Q, K and V apart, each with its bias", 0, 0},
    {"command-r", "command-r",
     "command-r (Aya Expanse, Command R): LayerNorm (eps 0.05), attention and FFN in parallel, rope on every layer, "
     "logits x0.5",
     3, 0},
    {"internlm2", "internlm2", "internlm2: the llama layout under its own name", 0, 0},
    {"glm4moe", "glm4moe",
     "glm4moe (GLM-4.5): Q/K/V biases, rope on 16 of 32 dims, a dense first layer, then 8 experts chosen by "
     "sigmoid plus a selection bias (3 a token, renormalised, x2.5) and a shared expert",
     3, 0},
    {"bailingmoe2", "bailingmoe2",
     "bailingmoe2 (Ling mini 2.0): Q/K/V in one matrix, Q/K norms, rope on 8 of 16 dims, a dense first layer, then "
     "8 experts by sigmoid plus a selection bias, 3 a token from the best 2 of 4 groups, renormalised, x2.5, and a "
     "shared expert",
     3, 0},
    {"seed_oss", "seed_oss",
     "seed_oss (Seed-OSS): heads of 32 over 64 / 4, Q/K/V biases, NEOX rope, the FFN norm named post_attention_norm", 0, 0},
    {"olmo2", "olmo2",
     "olmo2 (OLMo 2): no pre-norms, Q and K RMS-normed over their whole projection, post norms on both branches, "
     "NEOX rope at 500000", 0, 0},
    {"olmo3-swa", "olmo2",
     "olmo2 (OLMo 3): window 5 on three layers of four (sliding_window_pattern 4), the global layers YaRN x4, the "
     "sliding ones plain", 4, 0},
    {"starcoder2", "starcoder2",
     "starcoder2 (StarCoder 2): LayerNorm with biases (eps 0.05), Q/K/V and output biases, NEOX rope, an ungated GELU "
     "FFN with biases, a biased output norm, the LM head tied", 0, 0},
    {"lfm2", "lfm2",
     "lfm2 (LFM2): short convolutions of width 3 in layers 0, 1, 3 and 4 (head_count_kv 0), attention with per-head "
     "Q/K norms in layer 2, the output norm named token_embd_norm, a tied LM head", 5, 0},
    {"lfm2moe", "lfm2moe",
     "lfm2moe (LFM2-8B-A1B's form): lfm2's layers, a dense first FFN, then 8 experts chosen by sigmoid plus exp_probs_b, "
     "always renormalised", 5, 0},
    {"deepseek2-lite", "deepseek2",
     "deepseek2 (V2-Lite's form, 27 layers): latent attention with Q straight and attn_kv_b (heads 32 + 64 rope, V 24, "
     "latent 512), YaRN x4 with its mscale, a dense first layer, then 8 experts softmax-routed (no gating key) x1.5, "
     "2 shared", 27, 0},
    {"deepseek2-v3", "deepseek2",
     "deepseek2 (V3 / GLM-4.7-Flash's form, split as converters since 2025 write it): Q through a normed low-rank pair, "
     "attn_k_b / attn_v_b over a 512 latent, one KV head, sigmoid routing with exp_probs_b, renormalised, x2.5", 3, 0},
    {"gemma4-moe", "gemma4",
     "gemma4 (26B-A4B's form): in layers 0 and 2, 8 experts (3 a token; gate and up in one slab, each expert's output "
     "scaled) beside the dense FFN, each branch normed before and after, routed on the stream's scaled RMS; layer 1 "
     "dense", 0, 0},
    {"gemma3n-5", "gemma3n",
     "gemma3n (Gemma 3n's form, 5 layers): 4 streams predicted and corrected around the active one, laurel beside "
     "attention, per-layer inputs into streams 1-3, the FFN gates cut at mean + 1.645 std, four sliding layers "
     "(window 5, rope base 10000) then a global one", 5, 0},
    {"gemma3n", "gemma3n",
     "gemma3n (22 layers): the first 10 FFN gates sparse, layers 20 and 21 (sliding) reading layer 18's KV", 22, 0},
    {"mistral4", "mistral4",
     "mistral4 (Mistral Small 4): deepseek2's V3 form under its own name over a 256 latent, the experts' gate and up "
     "in one slab", 3, 0},
    {"granitehybrid", "granitehybrid",
     "granitehybrid (Granite 4.0-H): Mamba-2 in layers 0, 1, 3 and 4 (4 heads of 16, state 16, 2 groups, conv 4 with "
     "its bias), attention without rope in layer 2, granite's four multipliers, a tied LM head", 5, 0},
    {"granitehybrid-moe", "granitehybrid",
     "granitehybrid (Granite 4.0-H-Tiny's form): those layers with 8 experts (3 a token, softmax, renormalised) and a "
     "shared expert in every FFN", 5, 0},
    {"nemotron_h", "nemotron_h",
     "nemotron_h (Nemotron-H): 7 layers of one block each, Mamba-2, FFN (squared ReLU, no gate), attention without "
     "rope, FFN, Mamba-2, FFN, Mamba-2; an untied LM head", 7, 0},
    {"nemotron_h_moe", "nemotron_h_moe",
     "nemotron_h_moe (Nemotron 3 Nano's form): those layers, the FFNs 8 ungated experts (3 a token by sigmoid plus "
     "exp_probs_b, renormalised, x2.5) and an ungated shared expert", 7, 0},
    {"falcon-h1", "falcon-h1",
     "falcon-h1 (Falcon-H1): 3 layers of Mamba-2 beside attention (NEOX rope) on one norm, summed, then the FFN; "
     "layer 1 without the grouped norm and its ffn_norm named without .weight", 3, 0},
};

/* Each row's cosine to the reference at least.  22 layers of Gemma 3n's
   four streams amplify the rounding of the F16 cache (which its numpy
   reading emulates for K, V and Q): rows move by 1e-4 with how it rounds,
   where the same files at 1, 2 and 5 layers agree to 1e-7, 1e-7 and 7e-6
   (the gemma3n-5 case holds the usual bar) */
static double case_min_cos(const vcase *c) { return !strcmp(c->name, "gemma3n") ? 0.9995 : 0.99999; }

/* The case named NAME */
static vcase find_case(const char *name)
{
    vcase c = cases[0];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(cases[i].name, name)) c = cases[i];
    return c;
}

static unsigned seed;
/* granite_residual: the residual_scale written, and a factor on the
   branch matrices' (attn_output, ffn_down) values */
static float g_resid = 1.0f, g_branch = 1.0f;
/* moe_equals_dense: the dense FFN matrices written as this many identical
   experts (3-D tensors), with a router of their own (0: a dense file) */
static int g_copies;
/* mtp_skipped: a multi-token-prediction block after the L layers */
static bool g_mtp;
/* groups_refused: bailingmoe2's expert groups (0: 4) */
static int g_groups;
/* mla_refusals: a broken deepseek2 file (1: key_length_mla 64, 2:
   attn_k_b a head short, 3: no kv_lora_rank; 0: none) */
static int g_ds_bad;
/* lfm2_refusals: a broken lfm2 file (1: no l_cache, 2: l_cache 1, 3: taps
   of width 4 for an l_cache of 3; 0: none) */
static int g_lfm2_bad;
/* gh_refusals: a broken granitehybrid file (1: no ssm.state_size, 2: an
   inner size of 62 for 4 heads, 3: 3 groups for 4 heads, 4: ssm_norm
   of one group; 0: none) */
static int g_gh_bad;
/* q35_refusals: a broken delta-net header (0: the good value) */
static int g_q35_inner, g_q35_rank, g_q35_no_conv;

static float rnd(void)
{
    seed = seed * 1664525u + 1013904223u;
    return ((int)(seed >> 9 & 0xffff) - 32768) / 32768.0f;
}

/* a matrix of `in` x `out` in F16, uniform with rms about 1/sqrt(in) */
static void mat(gguf_writer *w, const char *name, int in, int out)
{
    uint16_t *d = malloc((size_t)in * out * sizeof *d);
    const bool branch = g_branch != 1.0f && (strstr(name, "attn_output") || strstr(name, "ffn_down"));
    for (int i = 0; i < in * out; i++) {
        d[i] = ember_f32_to_fp16(rnd() * 1.7f / sqrtf((float)in));
        if (branch) d[i] = ember_f32_to_fp16(ember_fp16_to_f32(d[i]) * g_branch);   /* x2: exact in f16 */
    }
    int64_t ne[2] = {in, out};
    gguf_w_tensor(w, name, EMBER_F16, 2, ne, d, (uint64_t)in * out * 2);
    free(d);
}

/* legacy_experts: expert tensors written as old Mixtral files keep them,
   one 2-D tensor each (blk.N.ffn_gate.E.weight) */
static bool g_legacy;

/* f16_expert_inputs: the experts' tensors written in F32, the F16 values */
static bool g_experts_f32;

/* n F16 matrices of `in` x `out` as one 3-D tensor NAME, or (g_legacy)
   as n 2-D tensors named as old Mixtral files name them */
static void put3(gguf_writer *w, const char *name, const uint16_t *d, int in, int out, int n)
{
    const char *suffix = strstr(name, "_exps.weight");
    if (g_experts_f32 && suffix) {   /* the same values in F32 */
        const size_t cnt = (size_t)in * out * n;
        float *f = malloc(cnt * sizeof *f);
        for (size_t i = 0; i < cnt; i++) f[i] = ember_fp16_to_f32(d[i]);
        int64_t ne[3] = {in, out, n};
        gguf_w_tensor(w, name, EMBER_F32, 3, ne, f, (uint64_t)cnt * 4);
        free(f);
        return;
    }
    if (!g_legacy || !suffix) {
        int64_t ne[3] = {in, out, n};
        gguf_w_tensor(w, name, EMBER_F16, 3, ne, d, (uint64_t)in * out * n * 2);
        return;
    }
    for (int e = 0; e < n; e++) {
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s.%d.weight", (int)(suffix - name), name, e);
        int64_t ne[2] = {in, out};
        gguf_w_tensor(w, nm, EMBER_F16, 2, ne, d + (size_t)e * in * out, (uint64_t)in * out * 2);
    }
}

/* n experts' matrices of `in` x `out` in F16, one 3-D tensor */
static void mat3(gguf_writer *w, const char *name, int in, int out, int n)
{
    const size_t cnt = (size_t)in * out * n;
    uint16_t *d = malloc(cnt * sizeof *d);
    for (size_t i = 0; i < cnt; i++) d[i] = ember_f32_to_fp16(rnd() * 1.7f / sqrtf((float)in));
    put3(w, name, d, in, out, n);
    free(d);
}

/* mat()'s matrix, the same values, as g_copies identical experts of one
   3-D tensor (moe_equals_dense) */
static void mat_copies(gguf_writer *w, const char *name, int in, int out)
{
    const size_t one = (size_t)in * out;
    uint16_t *d = malloc(one * (size_t)g_copies * sizeof *d);
    for (size_t i = 0; i < one; i++) d[i] = ember_f32_to_fp16(rnd() * 1.7f / sqrtf((float)in));
    for (int c = 1; c < g_copies; c++) memcpy(d + (size_t)c * one, d, one * sizeof *d);
    put3(w, name, d, in, out, g_copies);
    free(d);
}

/* gemma4_split_gate_up: Gemma 4's experts written with gate and up in
   two tensors (ffn_gate_exps, ffn_up_exps) instead of one slab each */
static bool g_split_gu;
/* gemma4_moe_refusals: a broken experts layer (1: no ffn_gate_inp.scale,
   2: no pre_ffw_norm_2, 3: gate_up rows for experts of 48; 0: none) */
static int g_g4moe_bad;

/* n experts' gate then up rows (F each) over `in` columns, as one slab
   an expert (ffn_gate_up_exps) or (g_split_gu) the same values in two
   tensors */
static void gate_up3(gguf_writer *w, int l, int in, int F, int n)
{
    const size_t one = (size_t)in * F;
    uint16_t *d = malloc(2 * one * (size_t)n * sizeof *d), *g = malloc(one * (size_t)n * sizeof *g),
             *u = malloc(one * (size_t)n * sizeof *u);
    for (size_t i = 0; i < 2 * one * (size_t)n; i++) d[i] = ember_f32_to_fp16(rnd() * 1.7f / sqrtf((float)in));
    for (int e = 0; e < n; e++) {
        memcpy(g + e * one, d + 2 * e * one, one * sizeof *d);
        memcpy(u + e * one, d + (2 * e + 1) * one, one * sizeof *d);
    }
    char nm[96];
    if (g_split_gu) {
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_exps.weight", l);
        put3(w, nm, g, in, F, n);
        snprintf(nm, sizeof nm, "blk.%d.ffn_up_exps.weight", l);
        put3(w, nm, u, in, F, n);
    } else {
        snprintf(nm, sizeof nm, "blk.%d.ffn_gate_up_exps.weight", l);
        put3(w, nm, d, in, 2 * F, n);
    }
    free(d);
    free(g);
    free(u);
}

/* a vector of n around mean (norm weights), or all equal to mean (spread 0) */
static void vec(gguf_writer *w, const char *name, int n, float mean, float spread)
{
    float *d = malloc((size_t)n * sizeof *d);
    for (int i = 0; i < n; i++) d[i] = mean + spread * rnd();
    int64_t ne[1] = {n};
    gguf_w_tensor(w, name, EMBER_F32, 1, ne, d, (uint64_t)n * 4);
    free(d);
}

/* An F32 router of 8 experts over n_embd, values as the tests' routers have them */
static void router8(gguf_writer *w, const char *name)
{
    float r[E * 8];
    for (int i = 0; i < E * 8; i++) r[i] = rnd() * 3.0f / sqrtf((float)E);
    int64_t ne[2] = {E, 8};
    gguf_w_tensor(w, name, EMBER_F32, 2, ne, r, sizeof r);
}

/* Layer l's F32 router and 8 experts of 40 (gated: with ffn_gate_exps),
   in the order the cases write them */
static void experts8(gguf_writer *w, int l, bool gated)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    router8(w, T("ffn_gate_inp.weight"));
    if (gated) mat3(w, T("ffn_gate_exps.weight"), E, 40, 8);
    mat3(w, T("ffn_up_exps.weight"), E, 40, 8);
    mat3(w, T("ffn_down_exps.weight"), 40, E, 8);
#undef T
}

/* Layer l's shared expert of 56 (gated: with ffn_gate_shexp) */
static void shexp56(gguf_writer *w, int l, bool gated)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    if (gated) mat(w, T("ffn_gate_shexp.weight"), E, 56);
    mat(w, T("ffn_up_shexp.weight"), E, 56);
    mat(w, T("ffn_down_shexp.weight"), 56, E);
#undef T
}

/* One qwen35 layer: a delta-net or a gated attention block, then a
   dense FFN or experts with a gated shared expert, its norm named
   post_attention_norm */
static void q35_layer(gguf_writer *w, int l, bool delta, int H, int HKV, int d, int FF, bool moe, bool fused)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("post_attention_norm.weight"), E, 1.0f, 0.1f);
    if (delta) {
        if (fused) {   /* per Q/K head: q, k, then its two V heads' v and z; b then a */
            mat(w, T("ssm_in.weight"), E, 2 * 128 + 2 * 256);
            mat(w, T("ssm_ba.weight"), E, 8);
        } else {
            mat(w, T("attn_qkv.weight"), E, 2 * 128 + 256);
            mat(w, T("attn_gate.weight"), E, 256);
            mat(w, T("ssm_beta.weight"), E, 4);
            mat(w, T("ssm_alpha.weight"), E, 4);
        }
        mat(w, T("ssm_out.weight"), 256, E);
        /* taps around +-0.5, decays from exp(-0.2 softplus) to exp(-1.4 softplus) */
        float cv[4 * 512];
        for (int i = 0; i < 4 * 512; i++) cv[i] = rnd() * 0.5f;
        int64_t ne[2] = {4, 512};
        gguf_w_tensor(w, T("ssm_conv1d.weight"), EMBER_F32, 2, ne, cv, sizeof cv);
        vec(w, T("ssm_dt.bias"), 4, 0.0f, 0.5f);
        vec(w, T("ssm_a"), 4, -0.8f, 0.6f);
        vec(w, T("ssm_norm.weight"), 64, 1.0f, 0.1f);
    } else {
        mat(w, T("attn_q.weight"), E, 2 * H * d);
        mat(w, T("attn_k.weight"), E, HKV * d);
        mat(w, T("attn_v.weight"), E, HKV * d);
        mat(w, T("attn_output.weight"), H * d, E);
        vec(w, T("attn_q_norm.weight"), d, 1.0f, 0.1f);
        vec(w, T("attn_k_norm.weight"), d, 1.0f, 0.1f);
    }
    if (!moe) {
        mat(w, T("ffn_gate.weight"), E, FF);
        mat(w, T("ffn_up.weight"), E, FF);
        mat(w, T("ffn_down.weight"), FF, E);
    } else {
        experts8(w, l, true);
        shexp56(w, l, true);
        vec(w, T("ffn_gate_inp_shexp.weight"), E, 0.0f, 0.3f);
    }
#undef T
}

/* One phi2 layer: biased LayerNorm, Q/K/V fused or apart with biases,
   the output projection and an ungated FFN with biases; no ffn_norm (the
   FFN reads the attention norm's rows) */
static void phi2_layer(gguf_writer *w, int l, int H, int HKV, int d, int FF, bool split)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("attn_norm.bias"), E, 0.0f, 0.3f);
    if (split) {
        mat(w, T("attn_q.weight"), E, H * d);
        mat(w, T("attn_k.weight"), E, HKV * d);
        mat(w, T("attn_v.weight"), E, HKV * d);
        vec(w, T("attn_q.bias"), H * d, 0.0f, 0.5f);
        vec(w, T("attn_k.bias"), HKV * d, 0.0f, 0.5f);
        vec(w, T("attn_v.bias"), HKV * d, 0.0f, 0.5f);
    } else {
        mat(w, T("attn_qkv.weight"), E, (H + 2 * HKV) * d);
        vec(w, T("attn_qkv.bias"), (H + 2 * HKV) * d, 0.0f, 0.5f);
    }
    mat(w, T("attn_output.weight"), H * d, E);
    vec(w, T("attn_output.bias"), E, 0.0f, 0.5f);
    mat(w, T("ffn_up.weight"), E, FF);
    vec(w, T("ffn_up.bias"), FF, 0.0f, 0.5f);
    mat(w, T("ffn_down.weight"), FF, E);
    vec(w, T("ffn_down.bias"), E, 0.0f, 0.5f);
#undef T
}

/* One deepseek2 layer: latent attention (lite: attn_q and attn_kv_b;
   else attn_q_a / attn_q_b and attn_k_b / attn_v_b over a 512 latent),
   then a dense FFN (layer 0) or 8 experts and the shared ones */
/* lat: the latent's width; fused: the experts' gate and up in one slab */
static void ds2_layer(gguf_writer *w, int l, int H, int FF, bool lite, int lat, bool fused)
{
    char t[96];
    const int nope = 32, rope = 64, vd = lite ? 24 : 32, ql = 48;
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("ffn_norm.weight"), E, 1.0f, 0.1f);
    if (lite) {
        mat(w, T("attn_q.weight"), E, H * (nope + rope));
    } else {
        mat(w, T("attn_q_a.weight"), E, ql);
        vec(w, T("attn_q_a_norm.weight"), ql, 1.0f, 0.1f);
        mat(w, T("attn_q_b.weight"), ql, H * (nope + rope));
    }
    mat(w, T("attn_kv_a_mqa.weight"), E, lat + rope);
    vec(w, T("attn_kv_a_norm.weight"), lat, 1.0f, 0.1f);
    if (lite) {
        mat(w, T("attn_kv_b.weight"), lat, H * (nope + vd));
    } else {
        mat3(w, T("attn_k_b.weight"), nope, lat, g_ds_bad == 2 ? H - 1 : H);
        mat3(w, T("attn_v_b.weight"), lat, vd, H);
    }
    mat(w, T("attn_output.weight"), H * vd, E);
    if (l == 0) {
        mat(w, T("ffn_gate.weight"), E, FF);
        mat(w, T("ffn_up.weight"), E, FF);
        mat(w, T("ffn_down.weight"), FF, E);
    } else {
        float *r = malloc((size_t)E * 8 * sizeof *r);
        for (int i = 0; i < E * 8; i++) r[i] = rnd() * 3.0f / sqrtf((float)E);
        int64_t ne[2] = {E, 8};
        gguf_w_tensor(w, T("ffn_gate_inp.weight"), EMBER_F32, 2, ne, r, (uint64_t)E * 8 * 4);
        free(r);
        if (fused) {
            gate_up3(w, l, E, 40, 8);
        } else {
            mat3(w, T("ffn_gate_exps.weight"), E, 40, 8);
            mat3(w, T("ffn_up_exps.weight"), E, 40, 8);
        }
        mat3(w, T("ffn_down_exps.weight"), 40, E, 8);
        if (!lite) vec(w, T("exp_probs_b.bias"), 8, 0.0f, 0.3f);
        const int SH = lite ? 80 : 40;   /* expert_shared_count experts wide */
        mat(w, T("ffn_gate_shexp.weight"), E, SH);
        mat(w, T("ffn_up_shexp.weight"), E, SH);
        mat(w, T("ffn_down_shexp.weight"), SH, E);
    }
#undef T
}

/* An F32 matrix of `in` x `out` (Gemma 3n's stream coefficients, as
   converters keep them), values spread * uniform(-1, 1) */
static void f32mat(gguf_writer *w, const char *name, int in, int out, float spread)
{
    float *d = malloc((size_t)in * out * sizeof *d);
    for (int i = 0; i < in * out; i++) d[i] = spread * rnd();
    int64_t ne[2] = {in, out};
    gguf_w_tensor(w, name, EMBER_F32, 2, ne, d, (uint64_t)in * out * 4);
    free(d);
}

/* One gemma3n layer (4 streams, laurel of rank 8, per-layer inputs of 8):
   attention with Q/K norms (d^-1/4, keeping scores near 1 without a
   scale), post norms, the FFN, the stream router and coefficients */
static void gemma3n_layer(gguf_writer *w, int l, int H, int HKV, int d, int FF)
{
    char t[96];
    const float qk = 1.0f / sqrtf(sqrtf((float)d));
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("attn_q.weight"), E, H * d);
    mat(w, T("attn_k.weight"), E, HKV * d);
    mat(w, T("attn_v.weight"), E, HKV * d);
    vec(w, T("attn_q_norm.weight"), d, qk, 0.1f * qk);
    vec(w, T("attn_k_norm.weight"), d, qk, 0.1f * qk);
    mat(w, T("attn_output.weight"), H * d, E);
    vec(w, T("post_attention_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("ffn_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("ffn_gate.weight"), E, FF);
    mat(w, T("ffn_up.weight"), E, FF);
    mat(w, T("ffn_down.weight"), FF, E);
    vec(w, T("post_ffw_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("inp_gate.weight"), E, 8);
    mat(w, T("proj.weight"), 8, E);
    vec(w, T("post_norm.weight"), E, 1.0f, 0.1f);
    f32mat(w, T("altup_correct_coef.weight"), 4, 4, 0.2f);
    vec(w, T("altup_correct_scale.weight"), E, 1.0f, 0.2f);
    f32mat(w, T("altup_predict_coef.weight"), 4, 16, 0.2f);
    mat(w, T("altup_router.weight"), E, 4);
    vec(w, T("altup_router_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("laurel_l.weight"), E, 8);
    mat(w, T("laurel_r.weight"), 8, E);
    vec(w, T("laurel_post_norm.weight"), E, 1.0f, 0.1f);
#undef T
}

/* One lfm2 layer: its operator norm, then a short convolution (in_proj,
   its width-3 taps, out_proj) or attention with per-head Q/K norms, then
   the FFN under its norm */
static void lfm2_layer(gguf_writer *w, int l, bool conv, bool moe, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    if (conv) {
        mat(w, T("shortconv.in_proj.weight"), E, 3 * E);
        float taps[3 * E];   /* [channel][tap], the oldest input's tap first, as converters write it */
        for (int i = 0; i < 3 * E; i++) taps[i] = rnd() * 0.8f;
        int64_t ne[2] = {g_lfm2_bad == 3 ? 4 : 3, g_lfm2_bad == 3 ? 3 * E / 4 : E};
        gguf_w_tensor(w, T("shortconv.conv.weight"), EMBER_F32, 2, ne, taps, sizeof taps);
        mat(w, T("shortconv.out_proj.weight"), E, E);
    } else {
        mat(w, T("attn_q.weight"), E, H * d);
        mat(w, T("attn_k.weight"), E, HKV * d);
        mat(w, T("attn_v.weight"), E, HKV * d);
        vec(w, T("attn_q_norm.weight"), d, 1.0f, 0.1f);
        vec(w, T("attn_k_norm.weight"), d, 1.0f, 0.1f);
        mat(w, T("attn_output.weight"), H * d, E);
    }
    vec(w, T("ffn_norm.weight"), E, 1.0f, 0.1f);
    if (moe) {   /* an F32 router, 8 experts of 40, a selection bias */
        experts8(w, l, true);
        vec(w, T("exp_probs_b.bias"), 8, 0.0f, 0.3f);
    } else {
        mat(w, T("ffn_gate.weight"), E, FF);
        mat(w, T("ffn_up.weight"), E, FF);
        mat(w, T("ffn_down.weight"), FF, E);
    }
#undef T
}

/* One granitehybrid layer: its norm, then Mamba-2 (ssm_in's z, xBC and dt
   rows; the width-4 convolution over xBC's 128 channels with its bias;
   dt's bias, A < 0 and D per head; the norm of 2 groups; ssm_out) or
   attention, then the FFN under its norm: dense, or 8 experts of 40 and a
   shared one of 56 */
static void gh_mamba2(gguf_writer *w, int l, bool norm)
{
    enum { DI = 64, NS = 16, NG = 2, SH = 4, CD = DI + 2 * NG * NS };
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    {
        mat(w, T("ssm_in.weight"), E, 2 * DI + 2 * NG * NS + SH);
        float taps[4 * CD];   /* [channel][tap], the oldest input's tap first */
        for (int i = 0; i < 4 * CD; i++) taps[i] = rnd() * 0.8f;
        int64_t ne[2] = {4, CD};
        gguf_w_tensor(w, T("ssm_conv1d.weight"), EMBER_F32, 2, ne, taps, sizeof taps);
        vec(w, T("ssm_conv1d.bias"), CD, 0.0f, 0.3f);
        vec(w, T("ssm_dt.bias"), SH, 0.0f, 1.0f);
        float a[SH], dd[SH], nw[DI];
        for (int i = 0; i < SH; i++) a[i] = -0.2f - 1.5f * fabsf(rnd()), dd[i] = 1.0f + 0.5f * rnd();
        for (int i = 0; i < DI; i++) nw[i] = 1.0f + 0.1f * rnd();
        int64_t ha[2] = {1, SH}, gn[2] = {g_gh_bad == 4 ? DI : DI / NG, g_gh_bad == 4 ? 1 : NG};
        gguf_w_tensor(w, T("ssm_a"), EMBER_F32, 2, ha, a, sizeof a);
        gguf_w_tensor(w, T("ssm_d"), EMBER_F32, 2, ha, dd, sizeof dd);
        if (norm) gguf_w_tensor(w, T("ssm_norm.weight"), EMBER_F32, 2, gn, nw, sizeof nw);
        mat(w, T("ssm_out.weight"), DI, E);
    }
#undef T
}

static void gh_layer(gguf_writer *w, int l, bool ssm, bool moe, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    if (ssm) {
        gh_mamba2(w, l, true);
    } else {
        vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
        mat(w, T("attn_q.weight"), E, H * d);
        mat(w, T("attn_k.weight"), E, HKV * d);
        mat(w, T("attn_v.weight"), E, HKV * d);
        mat(w, T("attn_output.weight"), H * d, E);
    }
    vec(w, T("ffn_norm.weight"), E, 1.0f, 0.1f);
    if (moe) {   /* an F32 router */
        experts8(w, l, true);
        shexp56(w, l, true);
    } else {
        mat(w, T("ffn_gate.weight"), E, FF);
        mat(w, T("ffn_up.weight"), E, FF);
        mat(w, T("ffn_down.weight"), FF, E);
    }
#undef T
}

/* One nemotron_h layer: its norm and one block (kind M: gh_layer's
   Mamba-2; A: attention; F: an ungated FFN of FF) */
static void nh_layer(gguf_writer *w, int l, char kind, bool moe, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    if (kind == 'M') {
        gh_mamba2(w, l, true);
    } else if (kind == 'A') {
        vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
        mat(w, T("attn_q.weight"), E, H * d);
        mat(w, T("attn_k.weight"), E, HKV * d);
        mat(w, T("attn_v.weight"), E, HKV * d);
        mat(w, T("attn_output.weight"), H * d, E);
    } else if (moe) {   /* an F32 router, 8 ungated experts of 40, a selection bias, a shared expert of 56 */
        vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
        experts8(w, l, false);
        vec(w, T("exp_probs_b.bias"), 8, 0.0f, 0.3f);
        shexp56(w, l, false);
    } else {
        vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
        mat(w, T("ffn_up.weight"), E, FF);
        mat(w, T("ffn_down.weight"), FF, E);
    }
#undef T
}

/* One falcon-h1 layer: gh_mamba2's Mamba-2 (its grouped norm but in
   layer 1) beside attention, then the FFN under ffn_norm (layer 1's named
   without .weight, as the reference asks for it) */
static void fh1_layer(gguf_writer *w, int l, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    gh_mamba2(w, l, l != 1);
    mat(w, T("attn_q.weight"), E, H * d);
    mat(w, T("attn_k.weight"), E, HKV * d);
    mat(w, T("attn_v.weight"), E, HKV * d);
    mat(w, T("attn_output.weight"), H * d, E);
    vec(w, l == 1 ? T("ffn_norm") : T("ffn_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("ffn_gate.weight"), E, FF);
    mat(w, T("ffn_up.weight"), E, FF);
    mat(w, T("ffn_down.weight"), FF, E);
#undef T
}

/* One starcoder2 layer: biased LayerNorms, Q/K/V and output with biases,
   an ungated GELU FFN with biases */
static void starcoder2_layer(gguf_writer *w, int l, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    vec(w, T("attn_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("attn_norm.bias"), E, 0.0f, 0.3f);
    mat(w, T("attn_q.weight"), E, H * d);
    mat(w, T("attn_k.weight"), E, HKV * d);
    mat(w, T("attn_v.weight"), E, HKV * d);
    vec(w, T("attn_q.bias"), H * d, 0.0f, 0.5f);
    vec(w, T("attn_k.bias"), HKV * d, 0.0f, 0.5f);
    vec(w, T("attn_v.bias"), HKV * d, 0.0f, 0.5f);
    mat(w, T("attn_output.weight"), H * d, E);
    vec(w, T("attn_output.bias"), E, 0.0f, 0.5f);
    vec(w, T("ffn_norm.weight"), E, 1.0f, 0.1f);
    vec(w, T("ffn_norm.bias"), E, 0.0f, 0.3f);
    mat(w, T("ffn_up.weight"), E, FF);
    vec(w, T("ffn_up.bias"), FF, 0.0f, 0.5f);
    mat(w, T("ffn_down.weight"), FF, E);
    vec(w, T("ffn_down.bias"), E, 0.0f, 0.5f);
#undef T
}

/* One olmo2 layer: Q/K/V, Q and K norms as wide as their projections,
   the output and the FFN, the two post norms; no pre-norms */
static void olmo2_layer(gguf_writer *w, int l, int H, int HKV, int d, int FF)
{
    char t[96];
#define T(fmt) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    mat(w, T("attn_q.weight"), E, H * d);
    mat(w, T("attn_k.weight"), E, HKV * d);
    mat(w, T("attn_v.weight"), E, HKV * d);
    vec(w, T("attn_q_norm.weight"), H * d, 1.0f, 0.1f);
    vec(w, T("attn_k_norm.weight"), HKV * d, 1.0f, 0.1f);
    mat(w, T("attn_output.weight"), H * d, E);
    vec(w, T("post_attention_norm.weight"), E, 1.0f, 0.1f);
    mat(w, T("ffn_gate.weight"), E, FF);
    mat(w, T("ffn_up.weight"), E, FF);
    mat(w, T("ffn_down.weight"), FF, E);
    vec(w, T("post_ffw_norm.weight"), E, 1.0f, 0.1f);
#undef T
}

static int write_model(const vcase *c, const char *path)
{
    gguf_writer *w = gguf_writer_new();
    const char *a = c->arch;
    char k[128], t[96];
    const bool emoe = !strcmp(a, "ernie4_5-moe"), q2moe = !strcmp(a, "qwen2moe"), glm = !strcmp(a, "glm4");
    const bool g45 = !strcmp(a, "glm4moe"), bl = !strcmp(a, "bailingmoe2");
    const bool sig = g45 || bl, lead = emoe || sig;   /* sig: sigmoid routing; lead: a dense first layer */
    const bool oss = !strcmp(a, "gpt-oss"), st = !strcmp(a, "stablelm");
    const bool co2 = !strcmp(a, "cohere2"), co = co2 || !strcmp(a, "command-r"), sd = !strcmp(a, "seed_oss");
    const bool st_par = st && !strcmp(c->name, "stablelm-par");
    const bool q3n = !strcmp(a, "qwen3next"), q35 = !strncmp(a, "qwen35", 6) || q3n, q35moe = !strcmp(a, "qwen35moe") || q3n;
    const bool p2 = !strcmp(a, "phi2"), p2_split = p2 && !strcmp(c->name, "phi2-split");
    const bool m4 = !strcmp(a, "mistral4");   /* deepseek2's layout under its own name */
    const bool ds = !strcmp(a, "deepseek2") || m4, ds_lite = ds && !strcmp(c->name, "deepseek2-lite");
    const bool olmo = !strcmp(a, "olmo2"), olmo3 = olmo && !strcmp(c->name, "olmo3-swa");
    const bool lfm = !strncmp(a, "lfm2", 4), lfm_moe = !strcmp(a, "lfm2moe");
    const bool sc2 = !strcmp(a, "starcoder2"), g3n = !strcmp(a, "gemma3n");
    const bool gh = !strcmp(a, "granitehybrid"), gh_moe = gh && !strcmp(c->name, "granitehybrid-moe");
    const bool nh = !strncmp(a, "nemotron_h", 10), nh_moe = !strcmp(a, "nemotron_h_moe"), fh1 = !strcmp(a, "falcon-h1");
    static const char nh_blocks[] = "MFAFMFM";
    const bool moe = !strcmp(a, "qwen3moe") || !strcmp(a, "qwen3vlmoe") || emoe || q2moe || oss || q35moe || sig, q2vl = !strcmp(a, "qwen2vl");
    const bool vl = q2vl || !strncmp(a, "qwen3vl", 7);
    const bool phi = !strcmp(a, "phi3"), qwen = !strcmp(a, "qwen3") || (moe && !emoe && !q2moe && !oss && !q35moe && !sig) || !strcmp(a, "qwen3vl"), g4 = !strcmp(a, "gemma4"), g2 = !strcmp(a, "gemma2");
    const bool g4moe = g4 && !strcmp(c->name, "gemma4-moe");
    const int L = c->layers ? c->layers : g4 ? 3 : 2, H = g4 ? 2 : 4, HKV = g4 ? 1 : 2, FF = 96;
    /* gemma2: head dim 32 against n_embd / n_head 16, so the two query scales differ */
    const bool ernie = !strcmp(a, "ernie4_5") || emoe, mi3 = !strcmp(a, "mistral3"), g1 = !strcmp(a, "gemma");
    const int hd = qwen || g2 || ernie || mi3 || g1 || oss || q35 || sd || g45 ? 32 : 16, hd_full = 32, hd_swa = 16;   /* gemma4's full and sliding head dims */
    const bool swa_layer[3] = {true, true, false};
    /* deepseek2-lite: a seed whose 27 layers' routers hold no near tie
       (logit gaps >= 1.6e-3) for the two roundings of its attention (the
       reference's K and V rows, Ember's latent) to flip */
    seed = ds_lite ? 5 : 12345;
#define KEY(s) (snprintf(k, sizeof k, "%s." s, a), k)
#define T(fmt, l) (snprintf(t, sizeof t, "blk.%d." fmt, l), t)
    gguf_w_str(w, "general.architecture", a);
    gguf_w_str(w, "tokenizer.ggml.model", "none");   /* ids only: the reference takes vocab_size */
    gguf_w_u32(w, KEY("vocab_size"), V);
    gguf_w_u32(w, KEY("block_count"), (uint32_t)L + g_mtp);
    if (g_mtp) gguf_w_u32(w, KEY("nextn_predict_layers"), 1);
    gguf_w_u32(w, KEY("embedding_length"), E);
    if (nh) {   /* per layer: 0 where it has no FFN */
        int32_t ff[7];
        for (int i = 0; i < 7; i++) ff[i] = nh_blocks[i] == 'F' ? FF : 0;
        gguf_w_arr(w, KEY("feed_forward_length"), GGUF_T_I32, ff, 7);
    } else
        gguf_w_u32(w, KEY("feed_forward_length"), FF);
    gguf_w_u32(w, KEY("attention.head_count"), (uint32_t)H);
    if (fh1) {   /* Mamba-2 as granitehybrid's, beside attention in every layer */
        gguf_w_u32(w, KEY("attention.head_count_kv"), (uint32_t)HKV);
        gguf_w_u32(w, KEY("ssm.conv_kernel"), 4);
        gguf_w_u32(w, KEY("ssm.inner_size"), 64);
        gguf_w_u32(w, KEY("ssm.state_size"), 16);
        gguf_w_u32(w, KEY("ssm.time_step_rank"), 4);
        gguf_w_u32(w, KEY("ssm.group_count"), 2);
    } else if (nh) {   /* one KV head count a layer: 0 but for attention; Mamba-2 as granitehybrid's */
        int32_t kv[7];
        for (int i = 0; i < 7; i++) kv[i] = nh_blocks[i] == 'A' ? HKV : 0;
        gguf_w_arr(w, KEY("attention.head_count_kv"), GGUF_T_I32, kv, 7);
        gguf_w_u32(w, KEY("ssm.conv_kernel"), 4);
        gguf_w_u32(w, KEY("ssm.inner_size"), 64);
        gguf_w_u32(w, KEY("ssm.state_size"), 16);
        gguf_w_u32(w, KEY("ssm.time_step_rank"), 4);
        gguf_w_u32(w, KEY("ssm.group_count"), 2);
        if (nh_moe) {   /* no gating key: the reference routes these by sigmoid anyway */
            gguf_w_u32(w, KEY("expert_count"), 8);
            gguf_w_u32(w, KEY("expert_used_count"), 3);
            gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
            gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 56);
            gguf_w_f32(w, KEY("expert_weights_scale"), 2.5f);
            gguf_w_bool(w, KEY("expert_weights_norm"), true);
        }
    } else if (gh) {   /* one KV head count a layer: 0 for Mamba-2; granite's multipliers; no rope */
        int32_t kv[5] = {0, 0, HKV, 0, 0};
        gguf_w_arr(w, KEY("attention.head_count_kv"), GGUF_T_I32, kv, 5);
        gguf_w_u32(w, KEY("ssm.conv_kernel"), 4);
        gguf_w_u32(w, KEY("ssm.inner_size"), g_gh_bad == 2 ? 62 : 64);
        if (g_gh_bad != 1) gguf_w_u32(w, KEY("ssm.state_size"), 16);
        gguf_w_u32(w, KEY("ssm.time_step_rank"), 4);
        gguf_w_u32(w, KEY("ssm.group_count"), g_gh_bad == 3 ? 3 : 2);
        gguf_w_bool(w, KEY("rope.scaling.finetuned"), false);
        gguf_w_f32(w, KEY("embedding_scale"), 3.0f);
        gguf_w_f32(w, KEY("residual_scale"), 0.5f);
        gguf_w_f32(w, KEY("attention.scale"), 0.1f);
        gguf_w_f32(w, KEY("logit_scale"), 4.0f);
        if (gh_moe) {
            gguf_w_u32(w, KEY("expert_count"), 8);
            gguf_w_u32(w, KEY("expert_used_count"), 3);
            gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
            gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 56);
        }
    } else if (lfm) {   /* one KV head count a layer: 0 for the short convolutions */
        int32_t kv[5] = {0, 0, HKV, 0, 0};
        gguf_w_arr(w, KEY("attention.head_count_kv"), GGUF_T_I32, kv, 5);
        if (g_lfm2_bad != 1) gguf_w_u32(w, KEY("shortconv.l_cache"), g_lfm2_bad == 2 ? 1 : 3);
        if (lfm_moe) {
            gguf_w_u32(w, KEY("expert_count"), 8);
            gguf_w_u32(w, KEY("expert_used_count"), 3);
            gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
            gguf_w_u32(w, KEY("leading_dense_block_count"), 1);
            gguf_w_u32(w, KEY("expert_gating_func"), 2);
        }
    } else
        gguf_w_u32(w, KEY("attention.head_count_kv"), ds ? (ds_lite ? (uint32_t)H : 1) : (uint32_t)HKV);
    gguf_w_u32(w, KEY("context_length"), 4096);
    gguf_w_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    if (st) {
        gguf_w_f32(w, KEY("attention.layer_norm_epsilon"), 0.05f);
        gguf_w_u32(w, KEY("rope.dimension_count"), 4);
    }
    if (q35) {
        /* the delta-net layers: conv 4, Q/K heads of 64 (2 of them), V
           heads of 64 (4, each reading Q/K head h % 2); every 2nd layer
           attends, rope on 16 of its 32 dims in sections 3/3/2.  Heads of
           64: the reference's delta rule for other widths misreads a
           batch's V and gates (its fallback ignores their strides) */
        if (!g_q35_no_conv) gguf_w_u32(w, KEY("ssm.conv_kernel"), 4);
        gguf_w_u32(w, KEY("ssm.state_size"), 64);
        gguf_w_u32(w, KEY("ssm.group_count"), 2);
        gguf_w_u32(w, KEY("ssm.time_step_rank"), g_q35_rank ? (uint32_t)g_q35_rank : 4);
        gguf_w_u32(w, KEY("ssm.inner_size"), g_q35_inner ? (uint32_t)g_q35_inner : 256);
        gguf_w_u32(w, KEY("full_attention_interval"), q3n ? 4 : 2);   /* qwen3next: the reference's fixed 4 */
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("rope.dimension_count"), 16);
        int32_t sec[4] = {3, 3, 2, 0};
        gguf_w_arr(w, KEY("rope.dimension_sections"), GGUF_T_I32, sec, 4);
        if (q35moe) gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 56);
    }
    if (ds) {
        gguf_w_u32(w, KEY("expert_count"), 8);
        gguf_w_u32(w, KEY("expert_used_count"), 3);
        gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
        gguf_w_u32(w, KEY("leading_dense_block_count"), 1);
        gguf_w_u32(w, KEY("expert_shared_count"), ds_lite ? 2 : 1);
        if (g_ds_bad != 3) gguf_w_u32(w, KEY("attention.kv_lora_rank"), m4 ? 256 : 512);
        gguf_w_u32(w, KEY("rope.dimension_count"), 64);
        if (ds_lite) {   /* the heads' widths in key_length, value_length; YaRN as V2 has it */
            gguf_w_u32(w, KEY("attention.key_length"), 96);
            gguf_w_u32(w, KEY("attention.value_length"), 24);
            gguf_w_f32(w, KEY("expert_weights_scale"), 1.5f);
            gguf_w_str(w, KEY("rope.scaling.type"), "yarn");
            gguf_w_f32(w, KEY("rope.scaling.factor"), 4.0f);
            gguf_w_u32(w, KEY("rope.scaling.original_context_length"), 32);
            gguf_w_f32(w, KEY("rope.scaling.yarn_log_multiplier"), 0.1f);
        } else {   /* the cache's widths there, the heads' in the _mla keys */
            gguf_w_u32(w, KEY("attention.q_lora_rank"), 48);
            gguf_w_u32(w, KEY("attention.key_length"), m4 ? 320 : 576);
            gguf_w_u32(w, KEY("attention.value_length"), m4 ? 256 : 512);
            gguf_w_u32(w, KEY("attention.key_length_mla"), g_ds_bad == 1 ? 64 : 96);
            gguf_w_u32(w, KEY("attention.value_length_mla"), 32);
            gguf_w_u32(w, KEY("expert_gating_func"), 2);
            gguf_w_f32(w, KEY("expert_weights_scale"), 2.5f);
            gguf_w_bool(w, KEY("expert_weights_norm"), true);
        }
    }
    if (sc2) gguf_w_f32(w, KEY("attention.layer_norm_epsilon"), 0.05f);
    if (g3n) {   /* the period of 5 and the sliding base of 10000 by default, as the reference */
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_u32(w, KEY("embedding_length_per_layer_input"), 8);
        gguf_w_u32(w, KEY("altup.active_idx"), 0);
        gguf_w_u32(w, KEY("altup.num_inputs"), 4);
        gguf_w_f32(w, KEY("attention.shared_kv_layers"), 2.0f);   /* a float, as converters write it */
        gguf_w_f32(w, KEY("final_logit_softcapping"), 30.0f);
    }
    if (olmo3) {
        gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_u32(w, KEY("attention.sliding_window_pattern"), 4);
        gguf_w_str(w, KEY("rope.scaling.type"), "yarn");
        gguf_w_f32(w, KEY("rope.scaling.factor"), 4.0f);
        gguf_w_u32(w, KEY("rope.scaling.original_context_length"), 32);
    }
    if (p2) {
        gguf_w_f32(w, KEY("attention.layer_norm_epsilon"), 0.05f);
        gguf_w_u32(w, KEY("rope.dimension_count"), 8);
    }
    if (co) {   /* a LayerNorm eps large enough to move the logits if the wrong key were read */
        gguf_w_f32(w, KEY("attention.layer_norm_epsilon"), 0.05f);
        if (co2) gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_f32(w, KEY("logit_scale"), 0.5f);
    }
    gguf_w_f32(w, KEY("rope.freq_base"), qwen || g4 || mi3 ? 1e6f : ernie || olmo ? 5e5f : 10000.0f);   /* gemma4: its sliding layers too */
    if (!strcmp(a, "llama")) gguf_w_f32(w, KEY("rope.scaling.factor"), 4.0f);
    if (vl) {   /* the rotated pairs of a head (16 of 32 dims, 8 of qwen2vl's 16) in three sections */
        int32_t sec[4] = {8, 4, 4, 0};
        if (q2vl) sec[0] = 4, sec[1] = sec[2] = 2;
        gguf_w_arr(w, KEY("rope.dimension_sections"), GGUF_T_I32, sec, 4);
        if (!q2vl) gguf_w_u32(w, KEY("n_deepstack_layers"), 2);
    }
    if (moe) {
        gguf_w_u32(w, KEY("expert_count"), 8);
        gguf_w_u32(w, KEY("expert_used_count"), 3);
        gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
        if (q2moe) gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 56);
        if (sig) {
            gguf_w_u32(w, KEY("leading_dense_block_count"), 1);
            gguf_w_u32(w, KEY("expert_shared_count"), 1);
            gguf_w_u32(w, KEY("expert_gating_func"), 2);
            gguf_w_f32(w, KEY("expert_weights_scale"), 2.5f);
            gguf_w_bool(w, KEY("expert_weights_norm"), true);
        }
        if (g45) {
            gguf_w_u32(w, KEY("attention.key_length"), 32);
            gguf_w_u32(w, KEY("attention.value_length"), 32);
            gguf_w_u32(w, KEY("rope.dimension_count"), 16);
        }
        if (bl) {   /* 4 groups of 2 experts, the 3 chosen from the best 2 groups */
            gguf_w_u32(w, KEY("rope.dimension_count"), 8);
            gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 40);
            gguf_w_u32(w, KEY("expert_group_count"), g_groups ? (uint32_t)g_groups : 4);
            gguf_w_u32(w, KEY("expert_group_used_count"), 2);
        }
        if (emoe) {
            gguf_w_u32(w, KEY("leading_dense_block_count"), 1);
            gguf_w_u32(w, KEY("interleave_moe_layer_step"), 1);
            gguf_w_u32(w, KEY("expert_shared_feed_forward_length"), 56);
        }
    }
    if (oss) {
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_f32(w, KEY("rope.freq_base"), 150000.0f);
    }
    if ((qwen && !moe) || oss) {
        gguf_w_str(w, KEY("rope.scaling.type"), "yarn");
        gguf_w_f32(w, KEY("rope.scaling.factor"), 4.0f);
        gguf_w_u32(w, KEY("rope.scaling.original_context_length"), 32);
    }
    if (qwen) {
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
    }
    if (glm) gguf_w_u32(w, KEY("rope.dimension_count"), (uint32_t)hd / 2);   /* partial rotary */
    if (phi) {
        if (c->window >= 0) gguf_w_u32(w, KEY("attention.sliding_window"), c->window ? (uint32_t)c->window : 6);
        gguf_w_f32(w, KEY("rope.scaling.attn_factor"), 1.25f);
    }
    if (mi3) {
        /* the betas move YaRN's ramp to pairs 1..2 (0..1 by default) */
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
        gguf_w_str(w, KEY("rope.scaling.type"), "yarn");
        gguf_w_f32(w, KEY("rope.scaling.factor"), 4.0f);
        gguf_w_u32(w, KEY("rope.scaling.original_context_length"), 8);
        gguf_w_f32(w, KEY("rope.scaling.yarn_beta_fast"), 0.5f);
        gguf_w_f32(w, KEY("rope.scaling.yarn_beta_slow"), 0.25f);
        gguf_w_f32(w, KEY("rope.scaling.yarn_log_multiplier"), 0.5f);
        gguf_w_f32(w, KEY("attention.temperature_scale"), 0.5f);
    }
    if (ernie || g1 || sd) {
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
    }
    if (g_copies) {
        gguf_w_u32(w, KEY("expert_count"), (uint32_t)g_copies);
        gguf_w_u32(w, KEY("expert_used_count"), 2);
        gguf_w_u32(w, KEY("expert_feed_forward_length"), FF);
    }
    if (!strncmp(a, "granite", 7)) {
        gguf_w_f32(w, KEY("embedding_scale"), 4.0f);
        gguf_w_f32(w, KEY("residual_scale"), g_resid);
        gguf_w_f32(w, KEY("attention.scale"), 0.1f);
        gguf_w_f32(w, KEY("logit_scale"), 3.0f);
    }
    if (g2) {
        gguf_w_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.value_length"), (uint32_t)hd);
        gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_f32(w, KEY("attn_logit_softcapping"), 1.0f);
        gguf_w_f32(w, KEY("final_logit_softcapping"), 2.0f);
    }
    if (g4) {
        bool pat[3] = {true, true, false};
        gguf_w_arr(w, KEY("attention.sliding_window_pattern"), GGUF_T_BOOL, pat, 3);
        gguf_w_u32(w, KEY("attention.sliding_window"), 5);
        gguf_w_u32(w, KEY("attention.shared_kv_layers"), 0);
        gguf_w_u32(w, KEY("embedding_length_per_layer_input"), 0);
        gguf_w_u32(w, KEY("attention.key_length"), hd_full);
        gguf_w_u32(w, KEY("attention.value_length"), hd_full);
        gguf_w_u32(w, KEY("attention.key_length_swa"), hd_swa);
        gguf_w_u32(w, KEY("attention.value_length_swa"), hd_swa);
        gguf_w_u32(w, KEY("rope.dimension_count"), hd_full);
        gguf_w_u32(w, KEY("rope.dimension_count_swa"), hd_swa);
        gguf_w_str(w, KEY("rope.scaling.type"), "linear");
        gguf_w_f32(w, KEY("rope.scaling.factor"), 2.0f);
        if (g4moe) {
            gguf_w_u32(w, KEY("expert_count"), 8);
            gguf_w_u32(w, KEY("expert_used_count"), 3);
            gguf_w_u32(w, KEY("expert_feed_forward_length"), 40);
        }
    }
    mat(w, "token_embd.weight", E, V);
    vec(w, lfm ? "token_embd_norm.weight" : "output_norm.weight", E, 1.0f, 0.1f);
    if (st || sc2) vec(w, "output_norm.bias", E, 0.0f, 0.3f);
    /* the reference requires it for phi3, gpt-oss and internlm2 */
    if (phi || oss || st || p2 || bl || ds || olmo || nh || !strcmp(a, "internlm2")) mat(w, "output.weight", E, V);
    if (p2) {
        vec(w, "output_norm.bias", E, 0.0f, 0.3f);
        vec(w, "output.bias", V, 0.0f, 0.5f);
    }
    if (g4) vec(w, "rope_freqs.weight", hd_full / 2, 1.0f, 0.0f);   /* required by the reference; 1 changes nothing */
    if (g3n) {
        mat(w, "per_layer_token_embd.weight", 8 * L, V);
        mat(w, "per_layer_model_proj.weight", E, 8 * L);
        vec(w, "per_layer_proj_norm.weight", 8, 1.0f, 0.1f);
        mat3(w, "altup_proj.weight", E, E, 3);
        mat3(w, "altup_unembd_proj.weight", E, E, 3);
    }
    for (int l = 0; l < L; l++) {
        const int d = g4 ? (swa_layer[l] ? hd_swa : hd_full) : hd;
        if (q35) {
            q35_layer(w, l, (l + 1) % (q3n ? 4 : 2) != 0, H, HKV, d, FF, q35moe, q3n);
            continue;
        }
        if (p2) {
            phi2_layer(w, l, H, HKV, d, FF, p2_split);
            continue;
        }
        if (ds) {
            ds2_layer(w, l, H, FF, ds_lite, m4 ? 256 : 512, m4);
            continue;
        }
        if (olmo) {
            olmo2_layer(w, l, H, HKV, d, FF);
            continue;
        }
        if (sc2) {
            starcoder2_layer(w, l, H, HKV, d, FF);
            continue;
        }
        if (lfm) {
            lfm2_layer(w, l, l != 2, lfm_moe && l > 0, H, HKV, d, FF);
            continue;
        }
        if (gh) {
            gh_layer(w, l, l != 2, gh_moe, H, HKV, d, FF);
            continue;
        }
        if (nh) {
            nh_layer(w, l, nh_blocks[l], nh_moe, H, HKV, d, FF);
            continue;
        }
        if (fh1) {
            fh1_layer(w, l, H, HKV, d, FF);
            continue;
        }
        if (g3n) {
            gemma3n_layer(w, l, H, HKV, d, FF);
            continue;
        }
        vec(w, T("attn_norm.weight", l), E, 1.0f, 0.1f);
        /* gpt-oss names its FFN input norm post_attention_norm */
        if (!co && !st_par)
            vec(w, oss || sd || g45 ? T("post_attention_norm.weight", l) : T("ffn_norm.weight", l), E, 1.0f, 0.1f);
        if (st) {
            vec(w, T("attn_norm.bias", l), E, 0.0f, 0.3f);
            if (!st_par) vec(w, T("ffn_norm.bias", l), E, 0.0f, 0.3f);
        }
        if (glm) {
            mat(w, T("attn_q.weight", l), E, H * d);
            mat(w, T("attn_k.weight", l), E, HKV * d);
            mat(w, T("attn_v.weight", l), E, HKV * d);
            mat(w, T("ffn_up.weight", l), E, 2 * FF);
        } else if (phi) {
            mat(w, T("attn_qkv.weight", l), E, (H + 2 * HKV) * d);
            mat(w, T("ffn_up.weight", l), E, 2 * FF);
        } else {
            if (bl) {   /* Q, K and V in one matrix */
                mat(w, T("attn_qkv.weight", l), E, (H + 2 * HKV) * d);
            } else {
                mat(w, T("attn_q.weight", l), E, H * d);
                mat(w, T("attn_k.weight", l), E, HKV * d);
                if (!(g4 && !swa_layer[l])) mat(w, T("attn_v.weight", l), E, HKV * d);   /* 31B: full layers have none */
            }
            if (g_copies) {
                mat_copies(w, T("ffn_gate_exps.weight", l), E, FF);
                mat_copies(w, T("ffn_up_exps.weight", l), E, FF);
            } else if (!moe || (lead && l == 0)) {
                mat(w, T("ffn_gate.weight", l), E, FF);
                mat(w, T("ffn_up.weight", l), E, FF);
            }
        }
        mat(w, T("attn_output.weight", l), H * d, E);
        if (q2vl || q2moe || glm || oss || sd || g45 || (st && !st_par)) {
            vec(w, T("attn_q.bias", l), H * d, 0.0f, 0.5f);
            vec(w, T("attn_k.bias", l), HKV * d, 0.0f, 0.5f);
            vec(w, T("attn_v.bias", l), HKV * d, 0.0f, 0.5f);
        }
        if (oss) {
            vec(w, T("attn_output.bias", l), E, 0.0f, 0.5f);
            vec(w, T("attn_sinks.weight", l), H, 0.5f, 2.0f);   /* from well below to above the scores */
        }
        if (moe && !(lead && l == 0)) {
            /* the router in F32, as converters keep it, wide enough apart
               that no two experts tie */
            float *r = malloc((size_t)E * 8 * sizeof *r);
            for (int i = 0; i < E * 8; i++) r[i] = rnd() * 3.0f / sqrtf((float)E);
            int64_t ne[2] = {E, 8};
            gguf_w_tensor(w, T("ffn_gate_inp.weight", l), EMBER_F32, 2, ne, r, (uint64_t)E * 8 * 4);
            free(r);
            mat3(w, T("ffn_gate_exps.weight", l), E, 40, 8);
            mat3(w, T("ffn_up_exps.weight", l), E, 40, 8);
            mat3(w, T("ffn_down_exps.weight", l), 40, E, 8);
            /* a selection bias that moves the choice (ernie: among probabilities; glm4moe: sigmoids) */
            if (emoe || sig) vec(w, T("exp_probs_b.bias", l), 8, 0.0f, sig ? 0.3f : 0.1f);
            if (oss) {
                /* biases that move the choice, and gate / up biases wide
                   enough that the SwiGLU's clamps at 7 and -7 bite */
                vec(w, T("ffn_gate_inp.bias", l), 8, 0.0f, 0.5f);
                float *b = malloc(sizeof(float) * (size_t)E * 8);
                const char *nm[3] = {"ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias"};
                for (int i = 0; i < 3; i++) {
                    const int rows = i < 2 ? 40 : E;
                    for (int j = 0; j < rows * 8; j++) b[j] = rnd() * (i < 2 ? 9.0f : 0.5f);
                    int64_t nb2[2] = {rows, 8};
                    snprintf(t, sizeof t, "blk.%d.%s", l, nm[i]);
                    gguf_w_tensor(w, t, EMBER_F32, 2, nb2, b, (uint64_t)rows * 8 * 4);
                }
                free(b);
            }
            if (emoe || q2moe || sig) {   /* the shared expert; qwen2moe's with its gate; glm4moe's one expert wide */
                const int SH = sig ? 40 : 56;
                mat(w, T("ffn_gate_shexp.weight", l), E, SH);
                mat(w, T("ffn_up_shexp.weight", l), E, SH);
                mat(w, T("ffn_down_shexp.weight", l), SH, E);
                if (q2moe) vec(w, T("ffn_gate_inp_shexp.weight", l), E, 0.0f, 0.3f);
            }
        } else if (g_copies) {
            /* a router from its own generator: the other tensors keep the dense file's values */
            float *r = malloc((size_t)E * g_copies * sizeof *r);
            unsigned rs = 777u + (unsigned)l;
            for (int i = 0; i < E * g_copies; i++) {
                rs = rs * 1664525u + 1013904223u;
                r[i] = ((int)(rs >> 9 & 0xffff) - 32768) / 32768.0f * 3.0f / sqrtf((float)E);
            }
            int64_t ne[2] = {E, g_copies};
            gguf_w_tensor(w, T("ffn_gate_inp.weight", l), EMBER_F32, 2, ne, r, (uint64_t)E * g_copies * 4);
            free(r);
            mat_copies(w, T("ffn_down_exps.weight", l), FF, E);
        } else {
            mat(w, T("ffn_down.weight", l), FF, E);
        }
        if (qwen || g4 || bl) {
            /* gemma4 does not scale the scores: norms of d^-1/4 keep them near 1 */
            const float qk = g4 ? 1.0f / sqrtf(sqrtf((float)d)) : 1.0f;
            vec(w, T("attn_q_norm.weight", l), d, qk, 0.1f * qk);
            vec(w, T("attn_k_norm.weight", l), d, qk, 0.1f * qk);
        }
        if (g4 || g2 || glm) {
            vec(w, T("post_attention_norm.weight", l), E, 1.0f, 0.1f);
            vec(w, T("post_ffw_norm.weight", l), E, 1.0f, 0.1f);
        }
        if (g4) vec(w, T("layer_output_scale.weight", l), 1, 0.8f, 0.0f);
        if (g4moe && l != 1) {   /* experts beside the dense FFN */
            float *r = malloc((size_t)E * 8 * sizeof *r);
            for (int i = 0; i < E * 8; i++) r[i] = rnd() * 3.0f;   /* its input is scaled by 1 / sqrt(n_embd) */
            int64_t ne[2] = {E, 8};
            gguf_w_tensor(w, T("ffn_gate_inp.weight", l), EMBER_F32, 2, ne, r, (uint64_t)E * 8 * 4);
            free(r);
            if (g_g4moe_bad != 1) vec(w, T("ffn_gate_inp.scale", l), E, 1.0f, 0.3f);
            gate_up3(w, l, E, g_g4moe_bad == 3 ? 48 : 40, 8);
            mat3(w, T("ffn_down_exps.weight", l), 40, E, 8);
            vec(w, T("ffn_down_exps.scale", l), 8, 1.0f, 0.5f);
            if (g_g4moe_bad != 2) vec(w, T("pre_ffw_norm_2.weight", l), E, 1.0f, 0.1f);
            vec(w, T("post_ffw_norm_1.weight", l), E, 1.0f, 0.1f);
            vec(w, T("post_ffw_norm_2.weight", l), E, 1.0f, 0.1f);
        }
    }
    if (g_mtp) {   /* values from their own generator: the layers keep theirs */
        const unsigned keep = seed;
        seed = 99;
        vec(w, T("attn_norm.weight", L), E, 1.0f, 0.1f);
        mat(w, T("nextn.eh_proj.weight", L), 2 * E, E);
        vec(w, T("nextn.enorm.weight", L), E, 1.0f, 0.1f);
        seed = keep;
    }
#undef KEY
#undef T
    ember_err err;
    int rc = gguf_writer_save(w, path, &err);
    gguf_writer_free(w);
    if (rc) tap_diag("writer: %s", err.msg);
    return rc;
}

static int write_ids(const char *path, const int32_t *ids, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int i = 0; i < n; i++) fprintf(f, "%d%c", ids[i], i + 1 < n ? ' ' : '\n');
    return fclose(f);
}

/* The run's NP + NF rows of logits, as ember eval makes them: the prompt
   in one prefill, then each forced id. */
static int g_ubatch;   /* 0: the session's default */

static int run(const char *path, ember_strategy st, float *rows, ember_err *err)
{
    ember_plan_opts po;
    ember_plan_opts_default(&po);
    po.strategy = st;
    ember_model *m = ember_model_open(path, &po, err);
    if (!m) return -1;
    ember_session_opts so = {.n_ctx = NP + NF + 1, .threads = 2, .ubatch = g_ubatch};
    ember_session *s = ember_session_new(m, &so, err);
    int rc = s ? ember_prefill(s, prompt, NP, NULL, rows, err) : -1;
    for (int i = 0; !rc && i < NF; i++) rc = ember_decode(s, forced[i], rows + (size_t)(NP + i) * V, err);
    ember_session_free(s);
    ember_model_free(m);
    return rc;
}

/* Phi-3-mini-4k files converted before the window key existed: 32 layers
   and a 4096 context without the key run as with 2047, the reference's
   default for that shape; a window past the context masks nothing.  The
   last row of a 2060-token prompt tells (its first 13 keys fall outside). */
static void legacy_phi3_window(const char *path)
{
    enum { N = 2060 };
    static int32_t ids[N];
    static float last[3][V];
    for (int i = 0; i < N; i++) ids[i] = (int32_t)(i * 7 % V);
    const int windows[3] = {-1, 2047, 4096};
    for (int i = 0; i < 3; i++) {
        vcase c = {"phi3-legacy", "phi3", "", 32, windows[i]};
        ember_err err = {{0}};
        ember_model *m = write_model(&c, path) ? NULL : ember_model_open(path, NULL, &err);
        ember_session_opts so = {.n_ctx = N, .threads = 2};
        ember_session *s = m ? ember_session_new(m, &so, &err) : NULL;
        if (!s || ember_prefill(s, ids, N, last[i], NULL, &err)) tap_diag("window %d: %s", windows[i], err.msg);
        ember_session_free(s);
        ember_model_free(m);
    }
    tap_ok(!memcmp(last[0], last[1], sizeof last[0]),
           "phi3, 32 layers, context 4096, no sliding_window key: the logits of sliding_window 2047, bit for bit");
    tap_ok(memcmp(last[1], last[2], sizeof last[1]) != 0, "... and not those of a window past the context");
}

/* Two runs' (NP + NF) rows of V logits: the worst row's cosine, and in
   *same_top how many rows have the same top-1 */
static double rows_agree(const float *ra, const float *rb, int *same_top)
{
    double worst = 1;
    *same_top = 0;
    for (int r = 0; r < NP + NF; r++) {
        const float *a = ra + (size_t)r * V, *b = rb + (size_t)r * V;
        double ab = 0, aa = 0, bb = 0;
        int ia = 0, ib = 0;
        for (int i = 0; i < V; i++) {
            ab += (double)a[i] * b[i], aa += (double)a[i] * a[i], bb += (double)b[i] * b[i];
            if (a[i] > a[ia]) ia = i;
            if (b[i] > b[ib]) ib = i;
        }
        if (ab / sqrt(aa * bb) < worst) worst = ab / sqrt(aa * bb);
        *same_top += ia == ib;
    }
    return worst;
}

/* A mixture whose experts are all the dense FFN gives the dense model's
   logits (the k weights sum to 1): the MoE wiring of llama files
   (Mixtral) and granitemoe, which the reference cannot check (its llama
   graph's MoE branch adds the normed input, not the residual stream). */
static void moe_equals_dense(const char *path)
{
    static const struct { const char *dense, *moe; } cs[] = {{"llama", "llama"}, {"granite", "granitemoe"}};
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        static float rows[2][(NP + NF) * V];
        int ok = 1;
        for (int i = 0; i < 2; i++) {
            vcase v = {"moe-dense", i ? cs[c].moe : cs[c].dense, "", 0, 0};
            g_copies = i ? 4 : 0;
            ember_err err = {{0}};
            if (write_model(&v, path) || run(path, EMBER_STRATEGY_COMPRESSED, rows[i], &err)) {
                tap_diag("%s: %s", v.arch, err.msg);
                ok = 0;
            }
        }
        g_copies = 0;
        int top = 0;
        const double worst = ok ? rows_agree(rows[0], rows[1], &top) : 0;
        tap_ok(ok && worst >= 0.99999 && top == NP + NF,
               "%s with 4 identical experts, 2 a token: the logits of the dense %s (worst cosine %.7f, top-1 %d/%d)",
               cs[c].moe, cs[c].dense, worst, top, NP + NF);
    }
}

/* The case NAME written as it is and with *knob set (another form of
   the same tensors): the same logits, bit for bit, under each of the
   first n_st of eager, compressed and packed */
static void same_logits(const char *path, const char *name, bool *knob, int n_st, const char *what)
{
    const vcase c = find_case(name);
    static const struct { ember_strategy st; const char *name; } sts[] = {
        {EMBER_STRATEGY_EAGER, "eager"}, {EMBER_STRATEGY_COMPRESSED, "compressed"}, {EMBER_STRATEGY_PACKED, "packed"}};
    for (int s = 0; s < n_st; s++) {
        static float rows[2][(NP + NF) * V];
        ember_err err = {{0}};
        int ok = 1;
        for (int i = 0; i < 2 && ok; i++) {
            *knob = i == 1;
            ok = write_model(&c, path) == 0 && run(path, sts[s].st, rows[i], &err) == 0;
        }
        *knob = false;
        tap_ok(ok && !memcmp(rows[0], rows[1], sizeof rows[0]), "%s %s: the same logits bit for bit (%s)%s%s", c.arch,
               what, sts[s].name, err.msg[0] ? ": " : "", err.msg);
    }
}

/* Mixtral files from before April 2024 keep each expert in a 2-D tensor
   of its own (the qwen3moe case: distinct experts) */
static void legacy_experts(const char *path)
{
    same_logits(path, "qwen3moe-8x3", &g_legacy, 2,
                "with each expert in its own 2-D tensor (blk.N.ffn_gate.E.weight, old Mixtral files) as with 3-D ones");
}

/* Gemma 4's experts with gate and up in two tensors, as converters
   before the fused slab wrote them (the packed tiles of a slab split
   nowhere) */
static void gemma4_split_gate_up(const char *path)
{
    same_logits(path, "gemma4-moe", &g_split_gu, 3,
                "experts with gate and up apart (ffn_gate_exps, ffn_up_exps) as in one slab");
}

/* The reference's expert products (mul_mat_id) convert their input to the
   slabs' vec-dot type: F16 experts read fp16-rounded activations, F32
   ones f32 (moe.c, round_to_vec_dot), where a plain F16 matrix reads f32
   ones here as in ik_llama.cpp's dense products.  So the same expert
   values in F32 and in F16 give different logits, close to each other,
   both with the experts chosen alike (the top-1 of every row). */
static void f16_expert_inputs(const char *path, const char *name)
{
    const vcase c = find_case(name);
    static const struct { ember_strategy st; const char *name; } sts[] = {
        {EMBER_STRATEGY_EAGER, "eager"}, {EMBER_STRATEGY_COMPRESSED, "compressed"}};
    for (int s = 0; s < 2; s++) {
        static float rows[2][(NP + NF) * V];
        ember_err err = {{0}};
        int ok = 1;
        for (int i = 0; i < 2 && ok; i++) {
            g_experts_f32 = i == 1;
            ok = write_model(&c, path) == 0 && run(path, sts[s].st, rows[i], &err) == 0;
        }
        g_experts_f32 = false;
        int same_top = 0;
        const double worst = ok ? rows_agree(rows[0], rows[1], &same_top) : 0;
        tap_ok(ok && memcmp(rows[0], rows[1], sizeof rows[0]) && worst > 0.999 && same_top == NP + NF,
               "%s (%s): F16 experts read fp16-rounded inputs, F32 experts of the same values f32 ones: the logits "
               "differ (worst cosine %.7f), the top-1 of all %d rows the same%s%s",
               c.arch, sts[s].name, worst, NP + NF, err.msg[0] ? ": " : "", err.msg);
    }
}

/* The delta-net state cannot be cut back like a KV cache: a truncate goes
   back to the latest copy at or before the position asked (the end of a
   prefill or a generation), or to the start, and says where through
   n_past; what follows from there is what an uninterrupted run computes. */
static void dn_rewind(const char *path, const char *name)
{
    vcase c = find_case(name);
    ember_err err = {{0}};
    ember_plan_opts po;
    ember_plan_opts_default(&po);
    po.strategy = EMBER_STRATEGY_COMPRESSED;
    ember_model *m = write_model(&c, path) ? NULL : ember_model_open(path, &po, &err);
    ember_session_opts so = {.n_ctx = 64, .threads = 2};
    ember_session *s = m ? ember_session_new(m, &so, &err) : NULL;
    if (!tap_ok(s != NULL, "%s session for the rewinds%s%s", name, err.msg[0] ? ": " : "", err.msg)) {
        ember_model_free(m);
        return;
    }
    static float a[NF][V], b[NF][V], c0[V], c1[V];
    /* the straight run: the prompt, then the forced tokens one by one */
    int rc = ember_prefill(s, prompt, NP, NULL, NULL, &err);
    for (int i = 0; !rc && i < NF; i++) rc = ember_decode(s, forced[i], a[i], &err);
    ember_session_mark_decode_done(s);   /* a copy at NP + NF */
    /* back into the generation: to the prompt's end, the copy there */
    ember_session_truncate(s, NP + 2);
    const int back = ember_session_n_past(s);
    for (int i = 0; !rc && i < NF; i++) rc = ember_decode(s, forced[i], b[i], &err);
    tap_ok(!rc && back == NP && !memcmp(a, b, sizeof a),
           "%s: truncating into a generation goes back to the prompt's end (n_past %d) and decodes the same "
           "logits again, bit for bit", name, back);
    ember_session_mark_decode_done(s);   /* copies at NP and NP + NF */
    ember_session_truncate(s, NP + NF - 1);
    tap_ok(ember_session_n_past(s) == NP, "... a position between two copies goes to the earlier one");
    /* before every copy: the start */
    ember_session_truncate(s, NP - 3);
    tap_ok(ember_session_n_past(s) == 0, "... before the first copy, back to the start (n_past %d)", ember_session_n_past(s));
    /* from the start the state is the fresh one: the prompt again gives its logits */
    rc = ember_prefill(s, prompt, NP, c0, NULL, &err);
    ember_session_reset(s);
    if (!rc) rc = ember_prefill(s, prompt, NP, c1, NULL, &err);
    tap_ok(!rc && !memcmp(c0, c1, sizeof c0), "... and after a reset the prompt gives the same logits, bit for bit");
    /* a chat's next turn: the generation's copy, then the new tokens, as a
       run that never stopped (two passes against one: close, not equal) */
    ember_session_reset(s);
    rc = ember_prefill(s, prompt, NP, NULL, NULL, &err);
    for (int i = 0; !rc && i < 2; i++) rc = ember_decode(s, forced[i], NULL, &err);
    ember_session_mark_decode_done(s);
    if (!rc) rc = ember_prefill(s, forced + 2, NF - 2, c0, NULL, &err);
    double ab = 0, aa = 0, bb = 0;
    for (int i = 0; i < V; i++) ab += (double)c0[i] * a[NF - 1][i], aa += (double)c0[i] * c0[i], bb += (double)a[NF - 1][i] * a[NF - 1][i];
    tap_ok(!rc && ab / sqrt(aa * bb) > 0.99999, "... a prefill continuing after a generation agrees with the straight run "
                                                "(cosine %.7f)", ab / sqrt(aa * bb));
    ember_session_free(s);
    ember_model_free(m);
}

/* A file's multi-token-prediction block (nextn_predict_layers, after
   the layers: GLM-4.5's, Qwen3.5's) is not run and not warned about: the
   logits are those of the file without it, bit for bit. */
static void mtp_skipped(const char *path)
{
    vcase c = find_case("glm4moe");
    static float plain[(NP + NF) * V], with[(NP + NF) * V];
    ember_err err = {{0}};
    int rc = write_model(&c, path) || run(path, EMBER_STRATEGY_COMPRESSED, plain, &err);
    g_mtp = true;
    /* the block: a norm and a projection of the kind GLM-4.5 carries there */
    rc = rc || write_model(&c, path) || run(path, EMBER_STRATEGY_COMPRESSED, with, &err);
    ember_model *m = rc ? NULL : ember_model_open(path, NULL, &err);
    const char *warn = m ? ember_model_warnings(m) : "";
    tap_ok(!rc && m && !memcmp(plain, with, sizeof plain) && !strstr(warn, "not read"),
           "glm4moe with a multi-token-prediction block: not run, not warned about, the same logits bit for bit%s%s",
           err.msg[0] ? ": " : "", err.msg);
    ember_model_free(m);
    g_mtp = false;
}

/* Experts that do not split into the file's groups are refused */
static void groups_refused(const char *path)
{
    vcase c = find_case("bailingmoe2");
    g_groups = 3;
    ember_err err = {{0}};
    ember_model *m = write_model(&c, path) ? NULL : ember_model_open(path, NULL, &err);
    tap_ok(!m && strstr(err.msg, "do not split into 3 groups"), "bailingmoe2 with 8 experts in 3 groups is refused: %s",
           err.msg);
    ember_model_free(m);
    g_groups = 0;
}

/* A delta-net header that does not add up is refused, naming the key */
static void q35_refusals(const char *path)
{
    static const struct { int inner, rank, no_conv; const char *needle, *what; } bad[] = {
        {250, 0, 0, "ssm.inner_size 250", "an inner size that is not V heads x state size"},
        {0, 3, 0, "not a multiple of ssm.group_count", "V heads that do not repeat the Q/K heads"},
        {0, 0, 1, "ssm.conv_kernel' is missing", "no conv kernel width"},
    };
    vcase c = find_case("qwen35");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g_q35_inner = bad[i].inner;
        g_q35_rank = bad[i].rank;
        g_q35_no_conv = bad[i].no_conv;
        ember_err err = {{0}};
        ember_model *m = write_model(&c, path) ? NULL : ember_model_open(path, NULL, &err);
        tap_ok(!m && strstr(err.msg, bad[i].needle), "qwen35 with %s is refused: %s", bad[i].what, err.msg);
        ember_model_free(m);
    }
    g_q35_inner = g_q35_rank = g_q35_no_conv = 0;
}

/* A broken file of case NAME per row of bad: *knob set to the row's
   fault while the file is written, the open refused with a message
   naming it (needle), not read out of bounds */
typedef struct {
    int bad;
    const char *needle, *what;
} refusal;

static void refusals(const char *path, const char *name, int *knob, const refusal *bad, size_t n)
{
    const vcase c = find_case(name);
    for (size_t i = 0; i < n; i++) {
        *knob = bad[i].bad;
        ember_err err = {{0}};
        ember_model *m = write_model(&c, path) ? NULL : ember_model_open(path, NULL, &err);
        tap_ok(!m && strstr(err.msg, bad[i].needle), "%s with %s is refused: %s", c.arch, bad[i].what, err.msg);
        ember_model_free(m);
    }
    *knob = 0;
}

/* deepseek2 files whose latent attention cannot be run */
static void mla_refusals(const char *path)
{
    static const refusal bad[] = {
        {1, "no part without rope", "a query head no wider than its rope part (key_length_mla 64)"},
        {2, "blk.0.attn_k_b.weight' has shape", "an attn_k_b one head short"},
        {3, "kv_lora_rank' is missing", "no kv_lora_rank"},
    };
    refusals(path, "deepseek2-v3", &g_ds_bad, bad, sizeof bad / sizeof bad[0]);
}

/* granitehybrid files whose Mamba-2 layers cannot be run */
static void gh_refusals(const char *path)
{
    static const refusal bad[] = {
        {1, "ssm.state_size' is missing", "no state size"},
        {2, "inner_size 62 is not a multiple of ssm.time_step_rank 4", "an inner size of 62 for 4 heads"},
        {3, "time_step_rank 4 is not a multiple of ssm.group_count 3", "3 groups for 4 heads"},
        {4, "blk.0.ssm_norm.weight' has shape", "an ssm_norm of one group for two"},
    };
    refusals(path, "granitehybrid", &g_gh_bad, bad, sizeof bad / sizeof bad[0]);
}

/* gemma4 files whose experts cannot be run */
static void gemma4_moe_refusals(const char *path)
{
    static const refusal bad[] = {
        {1, "blk.0.ffn_gate_inp.scale' is missing", "no router scale"},
        {2, "blk.0.pre_ffw_norm_2.weight' is missing", "no norm before the experts"},
        {3, "blk.0.ffn_gate_up_exps.weight' has shape", "gate and up rows of another expert width"},
    };
    refusals(path, "gemma4-moe", &g_g4moe_bad, bad, sizeof bad / sizeof bad[0]);
}

/* lfm2 files whose short convolutions cannot be run */
static void lfm2_refusals(const char *path)
{
    static const refusal bad[] = {
        {1, "shortconv.l_cache' is missing", "no convolution width"},
        {2, "shortconv.l_cache' = 1 is outside", "a convolution of width 1"},
        {3, "blk.0.shortconv.conv.weight' has shape", "taps for a width other than the file's"},
    };
    refusals(path, "lfm2", &g_lfm2_bad, bad, sizeof bad / sizeof bad[0]);
}

/* Granite's residual_scale multiplies each branch before its add: on
   a file with residual_scale 2 the logits are those of residual_scale 1
   with the branch matrices doubled (a power of two: every product and sum
   scales exactly), and not those of residual_scale 1 alone. */
static void granite_residual(const char *path)
{
    static float rows[3][(NP + NF) * V];
    const float resid[3] = {2.0f, 1.0f, 1.0f}, branch[3] = {1.0f, 2.0f, 1.0f};
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        vcase c = {"granite-resid", "granite", "", 0, 0};
        g_resid = resid[i];
        g_branch = branch[i];
        ember_err err = {{0}};
        if (write_model(&c, path) || run(path, EMBER_STRATEGY_COMPRESSED, rows[i], &err)) {
            tap_diag("granite residual case %d: %s", i, err.msg);
            ok = 0;
        }
    }
    g_resid = g_branch = 1.0f;
    tap_ok(ok && !memcmp(rows[0], rows[1], sizeof rows[0]),
           "granite: residual_scale 2 gives the logits of its branch matrices doubled, bit for bit");
    tap_ok(ok && memcmp(rows[0], rows[2], sizeof rows[0]) != 0, "... and not those of residual_scale 1");
}

int main(void)
{
    const char *dump = getenv("EMBER_ARCH_VARIANTS_DUMP");
    const int nc = (int)(sizeof cases / sizeof cases[0]);
    if (dump) {
        char p[512];
        snprintf(p, sizeof p, "%s/prompt.ids", dump);
        int bad = write_ids(p, prompt, NP);
        snprintf(p, sizeof p, "%s/forced.ids", dump);
        bad |= write_ids(p, forced, NF);
        for (int c = 0; c < nc; c++) {
            snprintf(p, sizeof p, "%s/%s.gguf", dump, cases[c].name);
            bad |= write_model(&cases[c], p);
        }
        tap_ok(!bad, "models and ids written to %s", dump);
        return tap_done();
    }
    char path[] = "/tmp/ember-archvar-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) tap_skip_all("cannot create a temporary file");
    close(fd);
    static float rows[(NP + NF) * V];
    for (int c = 0; c < nc; c++) {
        if (!tap_ok(write_model(&cases[c], path) == 0, "%s: written", cases[c].name)) continue;
        const float *ref = arch_variants_ref[c];
        /* every mixture also in passes of 2 tokens: fewer rows than a token has
           experts (the session sizes the FFN rows for both); the delta-net
           layers too: their state carried from pass to pass */
        static const struct { ember_strategy st; int ubatch; const char *label; } passes[] = {
            {EMBER_STRATEGY_EAGER, 0, "eager"}, {EMBER_STRATEGY_COMPRESSED, 0, "compressed"},
            {EMBER_STRATEGY_COMPRESSED, 2, "compressed, passes of 2"}};
        const int np = strstr(cases[c].arch, "moe") || !strncmp(cases[c].arch, "qwen3", 5) ||
                               !strcmp(cases[c].arch, "deepseek2") || !strcmp(cases[c].arch, "mistral4") ||
                               !strncmp(cases[c].arch, "lfm2", 4) || !strcmp(cases[c].arch, "granitehybrid") || !strncmp(cases[c].arch, "nemotron_h", 10) || !strcmp(cases[c].arch, "falcon-h1") ||
                               strstr(cases[c].name, "moe") ? 3 : 2;
        for (int pi = 0; pi < np; pi++) {
            ember_err err = {{0}};
            const char *sn = passes[pi].label;
            g_ubatch = passes[pi].ubatch;
            if (!tap_ok(run(path, passes[pi].st, rows, &err) == 0, "%s (%s): runs%s%s", cases[c].what, sn,
                        err.msg[0] ? ": " : "", err.msg))
                continue;
            double worst = 1, worst_scale = 0;   /* |norm ratio - 1|: the cosine ignores a scale (granite's logits) */
            int worst_row = 0, top_ok = 0;
            for (int r = 0; r < NP + NF; r++) {
                const float *a = ref + (size_t)r * V, *b = rows + (size_t)r * V;
                double ab = 0, aa = 0, bb = 0;
                int ia = 0, ib = 0;
                for (int i = 0; i < V; i++) {
                    ab += (double)a[i] * b[i];
                    aa += (double)a[i] * a[i];
                    bb += (double)b[i] * b[i];
                    if (a[i] > a[ia]) ia = i;
                    if (b[i] > b[ib]) ib = i;
                }
                double cs = ab / sqrt(aa * bb), sc = fabs(sqrt(bb / aa) - 1);
                if (cs < worst) worst = cs, worst_row = r;
                if (sc > worst_scale) worst_scale = sc;
                top_ok += ia == ib;
            }
            const double want = case_min_cos(&cases[c]);
            tap_ok(worst >= want && top_ok == NP + NF && worst_scale < 3e-3,
                   "%s (%s): every row at cosine >= %g (worst %.7f, row %d) and norm within 3e-3 (%.1e), "
                   "top-1 %d/%d as the reference",
                   cases[c].what, sn, want, worst, worst_row, worst_scale, top_ok, NP + NF);
        }
    }
    legacy_phi3_window(path);
    granite_residual(path);
    dn_rewind(path, "qwen35");
    dn_rewind(path, "lfm2");   /* the short convolutions' state */
    dn_rewind(path, "granitehybrid");   /* Mamba-2's conv rows and heads' states */
    q35_refusals(path);
    mla_refusals(path);
    lfm2_refusals(path);
    gh_refusals(path);
    mtp_skipped(path);
    groups_refused(path);
    moe_equals_dense(path);
    legacy_experts(path);
    gemma4_split_gate_up(path);
    f16_expert_inputs(path, "gemma4-moe");
    f16_expert_inputs(path, "qwen3moe-8x3");
    gemma4_moe_refusals(path);
    unlink(path);
    return tap_done();
}
