/* ember synth: writes a random-weight model with a real model's layout,
   metadata keys and quantized blocks, streamed to disk tensor by tensor so
   a multi-gigabyte file never sits in memory.  Every row's values come from
   a PRNG seeded by (seed, tensor, row): the output is the same for any
   thread count. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "ember.h"
#include "synth.h"
#include "synth_vocab.h"

typedef struct {
    const char *like, *arch;
    int n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    double rope_theta, eps;
    bool tied;                   /* output projection shared with token_embd */
    bool qkv_bias, rope_freqs;   /* qwen2 biases; llama3 rope factors */
    int head_dim, n_rot, swa;    /* 0: n_embd / n_head, head_dim, no sliding window */
    bool gemma;                  /* Q/K norms, post-attention / post-FFN norms */
    bool phi;                    /* fused attn_qkv and gate+up, LongRoPE factors */
    /* gemma4 (dense): every g4_period-th layer global with head_dim (the
       others head_dim_swa); the last g4_shared layers share KV and have an
       FFN of g4_ff_shared; per-layer inputs of g4_pl */
    int g4_period, head_dim_swa, g4_shared, g4_ff_shared, g4_pl;
    /* mixture of experts (qwen3moe): experts a layer has, runs a token,
       and their FFN width (0: dense) */
    int n_expert, n_expert_used, n_ff_exp;
    /* gpt-oss: Q/K/V/O biases, sinks, the FFN norm named
       post_attention_norm, biased router and experts (MXFP4 but in F16
       files), YaRN x32 from 4096 */
    bool oss;
} shape;

static const shape shapes[] = {
    /* n_vocab 0: shrink to the vocabulary in use */
    /* tiny is untied: a random tied embedding makes the model repeat its
       input token, and tests get to cover output.weight */
    {"tiny", "llama", 256, 2, 4, 2, 512, 0, 2048, 500000.0, 1e-5, false, false, true, 0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* rows of 384 and 1088 are not whole K-quant super-blocks: the
       reference's per-tensor fallbacks (Q5_1, IQ4_NL, Q5_0, Q8_0) at tiny size */
    {"tiny-qwen2", "qwen2", 384, 2, 6, 2, 1088, 0, 2048, 1000000.0, 1e-6, false, true, false, 0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* gemma3 at tiny size: 7 layers (6 sliding, 1 global), window 8, head
       dim 128 != n_embd / n_head */
    /* gemma2 at tiny size: 4 layers alternating sliding (window 8) and global */
    {"tiny-gemma2", "gemma2", 256, 4, 2, 1, 512, 0, 2048, 10000.0, 1e-6, true, false, false, 128, 0, 8, true, false, 0, 0,
     0, 0, 0, 0, 0, 0, false},
    {"tiny-gemma3", "gemma3", 256, 7, 2, 1, 512, 0, 2048, 1000000.0, 1e-6, true, false, false, 128, 0, 8, true, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* the same with a window of 160: wider than a chunk of keys (64 rows of
       128 dims), so a block of prompt tokens shares whole chunks inside
       every token's window (forward.c, att_tokens) */
    {"tiny-gemma3-w160", "gemma3", 256, 7, 2, 1, 512, 0, 2048, 1000000.0, 1e-6, true, false, false, 128, 0, 160, true,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* gemma4 at tiny size: 6 layers [S,S,F] x 2, the last 3 sharing KV,
       head dims 64 / 128, window 8, per-layer inputs of 32 */
    {"tiny-gemma4", "gemma4", 256, 6, 2, 1, 256, 0, 2048, 1000000.0, 1e-6, true, false, false, 128, 0, 8, true, false,
     3, 64, 3, 512, 32, 0, 0, 0, false},
    /* the same with Gemma 4 26B-A4B's experts beside every dense FFN: 8
       of 128, 2 a token; no per-layer inputs, no shared KV */
    {"tiny-gemma4moe", "gemma4", 256, 6, 2, 1, 256, 0, 2048, 1000000.0, 1e-6, true, false, false, 128, 0, 8, true, false,
     3, 64, 0, 0, 0, 8, 2, 128, false},
    /* mistral3 at tiny size: heads of 96 over a 256-wide model, Ministral
       3's YaRN and temperature keys */
    {"tiny-mistral3", "mistral3", 256, 2, 4, 2, 512, 0, 2048, 1000000.0, 1e-5, true, false, false, 96, 0, 0, false, false,
     0, 0, 0, 0, 0, 0, 0, 0, false},
    /* heads of 48 dims: not whole Q8_0 blocks (a q8_0 KV cache refuses them) */
    {"tiny-hd48", "llama", 192, 2, 4, 2, 512, 0, 2048, 500000.0, 1e-5, false, false, true, 0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* phi3 at tiny size: partial rotary (48 of 64 dims), as Phi-4-mini */
    /* the phi shapes carry sliding_window 262144, as the converter writes
       Phi-3.5/4-mini (the reference refuses a phi3 file without it) */
    {"tiny-phi3", "phi3", 256, 2, 4, 2, 512, 0, 2048, 10000.0, 1e-5, false, false, false, 0, 48, 262144, false, true, 0, 0, 0, 0, 0, 0, 0, 0, false},
    {"llama-3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0, 1e-5, true, false, true, 0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    {"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1000000.0, 1e-6, true, true, false, 0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* Gemma 2 2B: even layers slide (window 4096), soft-capped scores and
       logits, no Q/K norms */
    {"gemma-2-2b", "gemma2", 2304, 26, 8, 4, 9216, 256000, 8192, 10000.0, 1e-6, true, false, false, 256, 0, 4096, true,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    {"gemma-3-1b", "gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 1000000.0, 1e-6, true, false, false, 256, 0, 512, true, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* a small dense Gemma 4 after the E2B layout (per-layer inputs, KV
       sharing, wider global heads); sizes approximate the published model */
    {"gemma-4-e2b", "gemma4", 1536, 35, 8, 1, 6144, 262144, 32768, 1000000.0, 1e-6, true, false, false, 512, 0, 512,
     true, false, 5, 256, 20, 12288, 256, 0, 0, 0, false},
    /* Gemma 4 26B-A4B: 30 layers, five sliding (heads of 256) to one
       global (heads of 512), 16 heads over 8 KV heads, a dense FFN of 2112
       beside 128 experts of 704, 8 a token; sizes approximate the
       published model */
    {"gemma-4-26b-a4b", "gemma4", 2816, 30, 16, 8, 2112, 262144, 262144, 1000000.0, 1e-6, true, false, false, 512, 0,
     1024, true, false, 6, 256, 0, 0, 0, 128, 8, 704, false},
    /* Phi-3.5-mini: 32 heads of 96 dims (not whole 64-wide steps), no GQA,
       untied output, vocabulary of 32064 */
    {"phi-3.5-mini", "phi3", 3072, 32, 32, 32, 8192, 32064, 131072, 10000.0, 1e-5, false, false, false, 0, 0, 262144,
     false, true, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* Qwen3 MoE at tiny size: 8 experts of 256, 2 a token */
    {"tiny-qwen3moe", "qwen3moe", 256, 2, 4, 2, 512, 0, 2048, 1000000.0, 1e-6, false, false, false, 0, 0, 0, false, false,
     0, 0, 0, 0, 0, 8, 2, 256, false},
    /* Qwen3-30B-A3B: 128 experts of 768, 8 a token; heads of 128 over
       2048 / 32; untied */
    {"qwen3-30b-a3b", "qwen3moe", 2048, 48, 32, 4, 6144, 151936, 40960, 1000000.0, 1e-6, false, false, false, 128, 0, 0,
     false, false, 0, 0, 0, 0, 0, 128, 8, 768, false},
    /* Ministral 3 3B (text): heads of 128 over 3072 / 32, YaRN x16 from 16k */
    {"ministral-3-3b", "mistral3", 3072, 26, 32, 8, 9216, 131072, 262144, 1000000.0, 1e-5, true, false, false, 128, 0, 0,
     false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* gpt-oss at tiny size: 8 experts of 256, 4 a token, heads of 64,
       window 8 on even layers */
    {"tiny-gpt-oss", "gpt-oss", 256, 2, 4, 2, 256, 0, 2048, 150000.0, 1e-5, false, true, false, 64, 0, 8, false, false,
     0, 0, 0, 0, 0, 8, 4, 256, true},
    /* gpt-oss-20b: 24 layers of 64 heads of 64 over 2880 (not whole
       K-quant super-blocks), 32 experts of 2880, 4 a token, window 128 */
    {"gpt-oss-20b", "gpt-oss", 2880, 24, 64, 8, 2880, 201088, 131072, 150000.0, 1e-5, false, true, false, 64, 0, 128,
     false, false, 0, 0, 0, 0, 0, 32, 4, 2880, true},
    {"phi-4-mini", "phi3", 3072, 32, 24, 8, 8192, 200064, 131072, 10000.0, 1e-5, true, false, false, 0, 96, 262144, false, true, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* qwen35 at tiny size: [delta-net, attention] x 2, attention heads of
       128 with rope on 32 dims; the delta-net's below (dn_shapes) */
    {"tiny-qwen35", "qwen35", 256, 4, 2, 1, 512, 0, 2048, 10000000.0, 1e-6, true, false, false, 128, 32, 0, false,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* the same with one attention layer in 3: the last layer is a delta-net
       layer (its rows past the output ones dropped after the recurrence) */
    {"tiny-qwen35-dn", "qwen35", 256, 4, 2, 1, 512, 0, 2048, 10000000.0, 1e-6, true, false, false, 128, 32, 0, false,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* Qwen3.5-0.8B: three delta-net layers to one attention layer (8 heads
       of 256, 2 KV heads, rope on 64 dims); sizes approximate the
       published model */
    {"qwen3.5-0.8b", "qwen35", 1024, 24, 8, 2, 3584, 248320, 262144, 10000000.0, 1e-6, true, false, false, 256, 64, 0,
     false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* deepseek2 at tiny size: latent attention over a 512 latent (heads of
       32 + 64 rope, values of 32; attn_k_b / attn_v_b, one KV head, as
       converters write it since 2025), a dense first layer, then 8
       experts of 128, 2 a token, and a shared one */
    {"tiny-deepseek2", "deepseek2", 256, 3, 4, 1, 512, 0, 2048, 10000.0, 1e-6, false, false, false, 0, 64, 0, false,
     false, 0, 0, 0, 0, 0, 8, 2, 128, false},
    /* lfm2 at tiny size: 4 layers, short convolutions of width 3 but in
       layer 2 (attention, 4 heads over 2 KV heads, per-head Q/K norms) */
    {"tiny-lfm2", "lfm2", 256, 4, 4, 2, 512, 0, 2048, 1000000.0, 1e-5, true, false, false, 0, 0, 0, false, false, 0, 0,
     0, 0, 0, 0, 0, 0, false},
    /* LFM2-1.2B: 16 layers, 6 of them attention (32 heads of 64, 8 KV
       heads), the rest short convolutions of width 3; FFN 8192, vocabulary
       65536, tied */
    {"lfm2-1.2b", "lfm2", 2048, 16, 32, 8, 8192, 65536, 128000, 1000000.0, 1e-5, true, false, false, 0, 0, 0, false,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* gemma3n at tiny size: 22 layers (four sliding, one global; layers 20
       and 21 reading layer 18's KV), 2 heads of 128, window 8; its streams
       below (g3n_shapes) */
    {"tiny-gemma3n", "gemma3n", 256, 22, 2, 1, 512, 0, 2048, 1000000.0, 1e-6, true, false, false, 128, 0, 8, true,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* Gemma 3n E2B: 30 layers of 8 heads of 256 over 2 KV heads, FFN 8192,
       window 512, vocabulary 262144; sizes approximate the published model */
    {"gemma-3n-e2b", "gemma3n", 2048, 30, 8, 2, 8192, 262144, 32768, 1000000.0, 1e-6, true, false, false, 256, 0, 512,
     true, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* granitehybrid at tiny size: 5 layers, Mamba-2 but in layer 2
       (attention, 4 heads over 2 KV heads, no rope); its Mamba-2 below
       (m2_shapes) */
    {"tiny-granitehybrid", "granitehybrid", 256, 5, 4, 2, 512, 0, 2048, 10000.0, 1e-5, true, false, false, 0, 0, 0,
     false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* the same with 8 experts of 128, 2 a token, and a shared one of 256 */
    {"tiny-granitehybrid-moe", "granitehybrid", 256, 5, 4, 2, 512, 0, 2048, 10000.0, 1e-5, true, false, false, 0, 0, 0,
     false, false, 0, 0, 0, 0, 0, 8, 2, 128, false},
    /* Granite 4.0-H-Micro: 40 layers, 4 of them attention (32 heads of 64
       over 8 KV heads, no rope), the rest Mamba-2 (64 heads of 64, state
       128, one group); FFN 8192, vocabulary 100352, tied; sizes
       approximate the published model */
    {"granite-4.0-h-micro", "granitehybrid", 2048, 40, 32, 8, 8192, 100352, 131072, 10000.0, 1e-5, true, false, false,
     0, 0, 0, false, false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* falcon-h1 at tiny size: 4 layers of Mamba-2 beside attention (4 heads
       of 64 over 2 KV heads, NEOX rope) then the FFN; m2_shapes below */
    {"tiny-falcon-h1", "falcon-h1", 256, 4, 4, 2, 512, 0, 2048, 10000.0, 1e-5, true, false, false, 0, 0, 0, false,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* nemotron_h at tiny size: 7 layers of one block each (Mamba-2, FFN,
       attention with 4 heads of 64 over 2 KV heads, ...; nh_shapes), the
       FFN 512 of squared ReLU, untied */
    {"tiny-nemotron-h", "nemotron_h", 256, 7, 4, 2, 512, 0, 2048, 10000.0, 1e-5, false, false, false, 64, 0, 0, false,
     false, 0, 0, 0, 0, 0, 0, 0, 0, false},
    /* the same with 8 ungated experts of 128, 2 a token, and a shared one
       of 256 in the FFN layers (Nemotron 3 Nano's form) */
    {"tiny-nemotron-h-moe", "nemotron_h_moe", 256, 7, 4, 2, 512, 0, 2048, 10000.0, 1e-5, false, false, false, 64, 0, 0,
     false, false, 0, 0, 0, 0, 0, 8, 2, 128, false},
    /* DeepSeek-V2-Lite: 27 layers of 16 heads (128 + 64 rope, values of
       128) over a 512 latent, Q straight from attn_q; a dense first layer
       of 10944, then 64 experts of 1408, 6 a token, and 2 shared; YaRN x40
       from 4096 */
    {"deepseek-v2-lite", "deepseek2", 2048, 27, 16, 1, 10944, 102400, 163840, 10000.0, 1e-6, false, false, false, 0,
     64, 0, false, false, 0, 0, 0, 0, 0, 64, 6, 1408, false},
};

/* The gemma3n shapes: per-layer input width, streams, laurel's rank */
static const struct {
    const char *like;
    int n_pl, n_altup, rank;
} g3n_shapes[] = {
    {"tiny-gemma3n", 32, 4, 32},
    {"gemma-3n-e2b", 256, 4, 64},
};

/* The lfm2 shapes: the short convolution's width, and which layers attend
   (a bit a layer; the rest are short convolutions) */
static const struct {
    const char *like;
    int l_cache;
    unsigned attn;
} lfm2_shapes[] = {
    {"tiny-lfm2", 3, 1u << 2},
    {"lfm2-1.2b", 3, 1u << 2 | 1u << 5 | 1u << 8 | 1u << 10 | 1u << 12 | 1u << 14},
};

/* The granitehybrid shapes' Mamba-2 layers: which layers attend (a bit a
   layer; the rest are Mamba-2), the heads, their width, the state, the
   groups of B and C, the convolution's width, and the shared expert's FFN
   (MoE shapes); falcon-h1's every layer both (parallel) */
static const struct {
    const char *like;
    uint64_t attn;
    int n_head, head_dim, d_state, n_group, d_conv, ff_shared;
    bool parallel;
} m2_shapes[] = {
    {"tiny-granitehybrid", 1u << 2, 8, 64, 32, 2, 4, 0, false},
    {"tiny-granitehybrid-moe", 1u << 2, 8, 64, 32, 2, 4, 256, false},
    {"granite-4.0-h-micro", 1ull << 9 | 1ull << 17 | 1ull << 27 | 1ull << 35, 64, 64, 128, 1, 4, 0, false},
    {"tiny-falcon-h1", ~0ull, 8, 32, 16, 1, 4, 0, true},
};

/* The nemotron_h shapes: each layer's block (M Mamba-2, A attention, F
   FFN) and the Mamba-2 heads, their width, the state, the groups */
static const struct {
    const char *like, *blocks;
    int n_head, head_dim, d_state, n_group, ff_shared;
} nh_shapes[] = {
    {"tiny-nemotron-h", "MFAMFMF", 8, 32, 64, 4, 0},
    {"tiny-nemotron-h-moe", "MFAMFMF", 8, 32, 64, 4, 256},
};

/* The latent attention of the deepseek2 shapes: Q's low-rank width (0:
   attn_q), the latent, a head's no-rope and value widths (the rope part
   is the shape's n_rot), shared experts, leading dense layers, YaRN's
   factor (0: none) */
static const struct {
    const char *like;
    int q_lora, kv_lora, nope, v, shared, lead;
    float yarn;
} mla_shapes[] = {
    {"tiny-deepseek2", 96, 512, 32, 32, 1, 1, 0},
    {"deepseek-v2-lite", 0, 512, 128, 128, 2, 1, 40.0f},
};

/* The delta-net layers of the qwen35 shapes: head dim (keys and values),
   Q/K heads, V heads, and one attention layer in `interval` */
static const struct {
    const char *like;
    int hd, n_k, n_v, interval;
} dn_shapes[] = {
    {"tiny-qwen35", 64, 2, 4, 2},
    {"tiny-qwen35-dn", 64, 2, 4, 3},
    {"qwen3.5-0.8b", 128, 16, 16, 4},
};

typedef struct {
    const char *name;
    int ftype;        /* general.file_type, as the reference numbers it */
} file_dtype;

static const file_dtype file_dtypes[] = {
    {"F16", 1}, {"Q8_0", 7}, {"Q4_0", 2}, {"Q2_K", 10}, {"Q3_K_M", 12}, {"Q4_K_M", 15},
    {"Q5_K_M", 17}, {"Q6_K", 18}, {"IQ4_XS", 30}, {"IQ2_XXS", 19}, {"IQ2_XS", 20},
    {"IQ3_XXS", 23}, {"IQ1_S", 24}, {"IQ3_M", 27}, {"IQ2_M", 29}, {"IQ1_M", 31},
};

typedef enum { GEN_NORMAL, GEN_NORM, GEN_ROPE_FREQS, GEN_TOY_EMBD, GEN_PROP_ROPE, GEN_DECAY } gen_kind;

struct synth_ctx;

/* One tensor: how its values are made and stored. */
typedef struct {
    struct synth_ctx *sc;
    char name[64];
    int dtype, n_dims;
    int64_t ne[3];
    gen_kind kind;
    float std;
    uint64_t key;                /* PRNG stream of this tensor */
} tgen;

typedef struct synth_ctx {
    const shape *sh;
    uint64_t seed;
    ember_pool *pool;
    float **scratch;             /* one f32 row per thread */
    int n_scratch;
    int64_t max_ne0;
    int toy_words;               /* toy vocabulary: end of the merged pieces, else 0 */
    bool untied;                 /* --untied: an output.weight of its own */
    int n_tensors, done;
    bool verbose;
} synth_ctx;

/* ---- randomness ----------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Approximately standard normal values, cheaply: the sum of four 16-bit
   uniforms (Irwin-Hall) has the right mean and variance and a bell shape
   bounded at +-3.5 sigma, which is all random weights need. */
static void normal_row(uint64_t key, uint64_t row, float *out, int64_t n, float mean, float std)
{
    uint64_t s = key ^ (row * 0xd1b54a32d192ed03ull);
    splitmix64(&s);
    const float scale = std / (65536.0f * 0.57735027f);   /* sqrt(4/12) */
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&s);
        uint32_t sum = (uint32_t)(r & 0xffff) + (uint32_t)(r >> 16 & 0xffff) +
                       (uint32_t)(r >> 32 & 0xffff) + (uint32_t)(r >> 48);
        out[i] = mean + ((float)sum - 131070.0f) * scale;
    }
}

/* Llama 3.1/3.2 frequency factors (factor 32, low 1, high 4, original
   context 8192): long wavelengths are slowed down, short ones kept. */
static void rope_factors(const shape *sh, float *out, int64_t n)
{
    const double factor = 32.0, low = 1.0, high = 4.0, orig = 8192.0;
    int hd = sh->n_rot ? sh->n_rot : sh->head_dim ? sh->head_dim : sh->n_embd / sh->n_head;
    for (int64_t i = 0; i < n; i++) {
        double freq = pow(sh->rope_theta, -2.0 * (double)i / hd);
        double wavelen = 2.0 * M_PI / freq;
        double f;
        if (wavelen < orig / high) f = 1.0;
        else if (wavelen > orig / low) f = factor;
        else {
            double smooth = (orig / wavelen - low) / (high - low);
            f = 1.0 / ((1.0 - smooth) / factor + smooth);
        }
        out[i] = (float)f;
    }
}

/* With the toy vocabulary, logits grow with the norm of a row of the output
   projection (output.weight, or the tied embedding): longer rows for word pieces, shorter
   ones for raw non-ASCII bytes and control tokens make random weights
   babble in words instead of invalid UTF-8. */
static float toy_row_scale(const synth_ctx *sc, uint64_t row)
{
    if (row >= 256 && row < (uint64_t)sc->toy_words) return 1.6f;
    if (row < 94 || row == SYNTH_TOY_SPACE || row == SYNTH_TOY_NEWLINE) return 1.0f;
    return 0.5f;
}

/* ---- filling rows (called by the writer at save time) --------------------- */

typedef struct {
    tgen *g;
    uint64_t row0, nrows;
    uint8_t *dst;
    size_t row_bytes;
    int failed;                  /* written by workers: any non-zero is failure */
} fill_job;

static void fill_worker(void *arg, int ith, int nth)
{
    fill_job *j = arg;
    tgen *g = j->g;
    float *x = g->sc->scratch[ith < g->sc->n_scratch ? ith : 0];
    /* contiguous row ranges per thread keep writes to dst sequential */
    uint64_t per = (j->nrows + (uint64_t)nth - 1) / (uint64_t)nth;
    uint64_t a = per * (uint64_t)ith, b = a + per < j->nrows ? a + per : j->nrows;
    for (uint64_t r = a; r < b; r++) {
        uint64_t row = j->row0 + r;
        int64_t n = g->ne[0];
        switch (g->kind) {
        case GEN_ROPE_FREQS: rope_factors(g->sc->sh, x, n); break;
        /* gemma4's proportional rope: a quarter of the pairs rotate, the
           rest are held still by a huge divisor */
        case GEN_PROP_ROPE: for (int64_t i = 0; i < n; i++) x[i] = i < n / 4 ? 1.0f : 1e30f; break;
        case GEN_NORM: normal_row(g->key, row, x, n, 1.0f, g->std); break;
        /* a delta-net's A (= -exp(A_log)): negative, so every state decays */
        case GEN_DECAY: normal_row(g->key, row, x, n, -1.0f, g->std); break;
        case GEN_TOY_EMBD: normal_row(g->key, row, x, n, 0.0f, g->std * toy_row_scale(g->sc, row)); break;
        default: normal_row(g->key, row, x, n, 0.0f, g->std); break;
        }
        uint8_t *out = j->dst + r * j->row_bytes;
        if (ember_quantize_row(g->dtype, x, out, n) != 0) {
            j->failed = 1;
            return;
        }
    }
}

static int fill_rows(void *ctx, uint64_t row0, uint64_t nrows, void *dst, ember_err *err)
{
    tgen *g = ctx;
    synth_ctx *sc = g->sc;
    fill_job j = {g, row0, nrows, dst, ember_row_bytes(g->dtype, g->ne[0]), 0};
    if (sc->verbose && row0 == 0) {
        sc->done++;
        fprintf(stderr, "\rember synth: [%d/%d] %-28s %-5s", sc->done, sc->n_tensors, g->name,
                ember_dtype_name(g->dtype));
    }
    ember_pool_run(sc->pool, fill_worker, &j);
    if (j.failed)
        return ember_seterr(err, "%s: quantizing to %s failed (is the %s quantizer in this build?)",
                            g->name, ember_dtype_name(g->dtype), ember_dtype_name(g->dtype));
    return 0;
}

/* ---- layout and dtypes ----------------------------------------------------- */

/* The reference's rule for which layers get more bits in *_M files: the
   first and last eighth, and every third layer in between. */
static bool use_more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* A K-quant needs rows of whole 256-element super-blocks; otherwise the
   reference falls back to a 32-element format of similar size. */
static int fit_dtype(int dtype, int64_t ne0)
{
    if (ne0 % QK_K == 0) return dtype;
    switch (dtype) {
    case EMBER_Q2_K:
    case EMBER_Q3_K: return EMBER_IQ4_NL;
    case EMBER_Q4_K: return EMBER_Q5_0;
    case EMBER_Q5_K: return EMBER_Q5_1;
    case EMBER_Q6_K: return EMBER_Q8_0;
    case EMBER_IQ4_XS: return EMBER_IQ4_NL;
    default: return ember_iq_is_grid(dtype) ? EMBER_IQ4_NL : dtype;
    }
}

typedef enum { R_EMBD, R_OUTPUT, R_ATTN_V, R_ATTN_O, R_FFN_DOWN, R_OTHER } role;

/* The grid file types as the reference makes them without an importance
   matrix (simplified to the llama family's rules): the projections' type,
   attn_v's with 4+ query heads a KV head and with fewer, ffn_down's in the
   first eighth of the layers and in the rest, attn_output's, the output
   matrix's and an untied embedding's. */
static const struct {
    const char *name;
    int base, v_gqa, v, down_first, down, o, out, embd;
} IQ_FILES[] = {
    {"IQ2_XXS", EMBER_IQ2_XXS, EMBER_Q4_K, EMBER_Q2_K, EMBER_Q2_K, EMBER_IQ2_XXS, EMBER_IQ2_XXS, EMBER_Q5_K, EMBER_Q2_K},
    {"IQ2_XS", EMBER_IQ2_XS, EMBER_Q4_K, EMBER_Q2_K, EMBER_Q2_K, EMBER_IQ2_XS, EMBER_IQ2_XS, EMBER_Q5_K, EMBER_Q2_K},
    {"IQ2_M", EMBER_IQ2_S, EMBER_Q4_K, EMBER_IQ3_S, EMBER_IQ3_S, EMBER_IQ2_S, EMBER_IQ3_S, EMBER_Q5_K, EMBER_IQ3_S},
    {"IQ1_S", EMBER_IQ1_S, EMBER_Q4_K, EMBER_Q2_K, EMBER_Q2_K, EMBER_IQ1_S, EMBER_IQ1_S, EMBER_Q5_K, EMBER_Q2_K},
    {"IQ1_M", EMBER_IQ1_M, EMBER_Q4_K, EMBER_Q2_K, EMBER_Q2_K, EMBER_IQ1_M, EMBER_IQ1_M, EMBER_Q5_K, EMBER_Q2_K},
    {"IQ3_XXS", EMBER_IQ3_XXS, EMBER_Q4_K, EMBER_IQ3_S, EMBER_Q4_K, EMBER_Q3_K, EMBER_IQ3_XXS, EMBER_Q5_K, EMBER_IQ3_S},
    {"IQ3_M", EMBER_IQ3_S, EMBER_Q4_K, EMBER_Q4_K, EMBER_Q4_K, EMBER_IQ3_S, EMBER_Q4_K, EMBER_Q6_K, EMBER_IQ3_S},
};

static int pick_iq(int f, role r, int layer, int n_layer, bool tied, int n_gqa, int64_t ne0)
{
    int t = IQ_FILES[f].base;
    if (r == R_OUTPUT || (r == R_EMBD && tied)) return ne0 % QK_K ? EMBER_Q8_0 : IQ_FILES[f].out;
    if (r == R_EMBD) t = IQ_FILES[f].embd;
    if (r == R_ATTN_V) t = n_gqa >= 4 ? IQ_FILES[f].v_gqa : IQ_FILES[f].v;
    if (r == R_FFN_DOWN) t = layer < n_layer / 8 ? IQ_FILES[f].down_first : IQ_FILES[f].down;
    if (r == R_ATTN_O) t = IQ_FILES[f].o;
    return fit_dtype(t, ne0);
}

/* The reference's per-tensor choices for each file type (llama.cpp's
   llama_tensor_get_type, for the llama and qwen2 architectures): the
   output matrix (or a tied embedding, which serves as it) gets Q6_K in
   the quantized files; Q2_K and Q3_K_M give attn_v, attn_output and
   ffn_down more bits, the *_M files attn_v and ffn_down of the layers
   use_more_bits picks. */
static int pick_dtype(const char *fdt, role r, int layer, int n_layer, bool tied, int n_gqa, int64_t ne0)
{
    int t;
    bool out = r == R_OUTPUT || (r == R_EMBD && tied);
    if (!strcmp(fdt, "F16")) return EMBER_F16;
    if (!strcmp(fdt, "Q8_0")) return EMBER_Q8_0;
    if (!strcmp(fdt, "Q6_K")) return fit_dtype(EMBER_Q6_K, ne0);
    for (int f = 0; f < (int)(sizeof IQ_FILES / sizeof IQ_FILES[0]); f++)
        if (!strcmp(fdt, IQ_FILES[f].name)) return pick_iq(f, r, layer, n_layer, tied, n_gqa, ne0);
    if (!strcmp(fdt, "Q4_0")) {
        t = out ? EMBER_Q6_K : EMBER_Q4_0;
    } else if (!strcmp(fdt, "Q2_K")) {
        t = EMBER_Q2_K;
        if (r == R_ATTN_V) t = n_gqa >= 4 ? EMBER_Q4_K : EMBER_Q3_K;
        if (r == R_ATTN_O || r == R_FFN_DOWN) t = EMBER_Q3_K;
    } else if (!strcmp(fdt, "Q3_K_M")) {
        t = EMBER_Q3_K;
        if (r == R_ATTN_V) t = layer < 2 ? EMBER_Q5_K : EMBER_Q4_K;
        if (r == R_FFN_DOWN) t = layer < n_layer / 16 ? EMBER_Q5_K : EMBER_Q4_K;
        if (r == R_ATTN_O) t = EMBER_Q4_K;
    } else if (!strcmp(fdt, "IQ4_XS")) {
        /* Q5_K for attn_v with 4+ query heads a KV head, and for the first
           eighth's ffn_down (a file made without an importance matrix) */
        t = EMBER_IQ4_XS;
        if ((r == R_ATTN_V && n_gqa >= 4) || (r == R_FFN_DOWN && layer < n_layer / 8)) t = EMBER_Q5_K;
    } else {                                  /* Q4_K_M, Q5_K_M */
        t = !strcmp(fdt, "Q5_K_M") ? EMBER_Q5_K : EMBER_Q4_K;
        if ((r == R_ATTN_V || r == R_FFN_DOWN) && use_more_bits(layer, n_layer)) t = EMBER_Q6_K;
    }
    /* the output matrix's own fallback is Q8_0 */
    if (out) return ne0 % QK_K ? EMBER_Q8_0 : EMBER_Q6_K;
    return fit_dtype(t, ne0);
}

typedef struct {
    tgen *t;
    int n, cap;
} tlist;

static int add(tlist *l, synth_ctx *sc, const char *name, int dtype, int64_t ne0, int64_t ne1,
               gen_kind kind, float std, ember_err *err)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        tgen *nt = realloc(l->t, (size_t)cap * sizeof *nt);
        if (!nt) return ember_seterr(err, "out of memory");
        l->t = nt;
        l->cap = cap;
    }
    tgen *g = &l->t[l->n++];
    memset(g, 0, sizeof *g);
    g->sc = sc;
    snprintf(g->name, sizeof g->name, "%s", name);
    g->dtype = dtype;
    g->ne[0] = ne0;
    g->ne[1] = ne1;
    g->ne[2] = 1;
    g->n_dims = ne1 > 0 ? 2 : 1;
    g->kind = kind;
    g->std = std;
    g->key = hash_name(name) ^ (sc->seed * 0x9e3779b97f4a7c15ull) ^ 0x5eed;
    if (ne0 > sc->max_ne0) sc->max_ne0 = ne0;
    return 0;
}

/* n matrices of ne0 x ne1 in one 3-D tensor (an MoE layer's experts):
   rows are numbered through all of them */
static int add3(tlist *l, synth_ctx *sc, const char *name, int dtype, int64_t ne0, int64_t ne1, int64_t n, float std,
                ember_err *err)
{
    if (add(l, sc, name, dtype, ne0, ne1, GEN_NORMAL, std, err)) return -1;
    l->t[l->n - 1].ne[2] = n;
    l->t[l->n - 1].n_dims = 3;
    return 0;
}

static bool g4_swa(const shape *sh, int l) { return l % sh->g4_period != sh->g4_period - 1; }
static int g4_ff(const shape *sh, int l) { return l >= sh->n_layer - sh->g4_shared ? sh->g4_ff_shared : sh->n_ff; }

/* One tensor of a layer's table: its name after "blk.N.", role, columns
   (in) and rows (out, 0: a vector), n3 matrices of a 3-D slab (0: none),
   and how its values are drawn. */
typedef struct {
    const char *n;
    role r;
    int64_t in, out, n3;
    gen_kind k;
    float s;
} layer_part;

/* Layer i's tensor p, F32 where the converter keeps it so: a vector, a
   row of one value per head (A, D), or one of the names in f32
   (NULL-ended); else the file's dtype for its role. */
static int add_layer_part(tlist *l, synth_ctx *sc, const char *fdt, int i, bool tied, int gqa, const layer_part *p,
                          const char *const *f32, ember_err *err)
{
    char name[64];
    snprintf(name, sizeof name, "blk.%d.%s", i, p->n);
    bool keep = !p->out || p->in == 1;
    for (const char *const *f = f32; *f && !keep; f++) keep = !strcmp(p->n, *f);
    const int dt = keep ? EMBER_F32 : pick_dtype(fdt, p->r, i, sc->sh->n_layer, tied, gqa, p->in);
    return p->n3 ? add3(l, sc, name, dt, p->in, p->out, p->n3, p->s, err)
                 : add(l, sc, name, dt, p->in, p->out, p->k, p->s, err);
}

/* The matrices the converter keeps in F32: an MoE router's, and in the
   Mamba-2 layers (granitehybrid, nemotron_h, falcon-h1) also the
   convolution's taps and the grouped norm */
static const char *const router_f32[] = {"ffn_gate_inp.weight", NULL};
static const char *const m2_f32[] = {"ssm_conv1d.weight", "ssm_norm.weight", "ffn_gate_inp.weight", NULL};

/* gemma4's tensors: its layers differ in head dim, FFN width and whether
   they have K/V, so they are not the table of build_tensors. */
static int build_gemma4(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int E = sh->n_embd, L = sh->n_layer, NP = sh->g4_pl * L, gqa = sh->n_head / sh->n_head_kv;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    const bool pl = sh->g4_pl > 0;
    const int X = sh->n_expert, FX = sh->n_ff_exp;
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, true, gqa, E), E, n_vocab,
            sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err) ||
        add(l, sc, "rope_freqs.weight", EMBER_F32, sh->head_dim / 2, 0, GEN_PROP_ROPE, 0, err))
        return -1;
    if (pl && (add(l, sc, "per_layer_token_embd.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, NP), NP, n_vocab,
                   GEN_NORMAL, std, err) ||
               add(l, sc, "per_layer_model_proj.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, E), E, NP, GEN_NORMAL,
                   std, err) ||
               add(l, sc, "per_layer_proj_norm.weight", EMBER_F32, sh->g4_pl, 0, GEN_NORM, 0.02f, err)))
        return -1;
    for (int i = 0; i < L; i++) {
        const int hd = g4_swa(sh, i) ? sh->head_dim_swa : sh->head_dim, F = g4_ff(sh, i);
        const bool kv = i < L - sh->g4_shared;
        /* need: 1 a layer with its own KV, 2 per-layer inputs, 3 experts */
        struct { layer_part p; int need; } parts[] = {
            {{"attn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"attn_q.weight", R_OTHER, E, sh->n_head * hd, 0, GEN_NORMAL, std}, 0},
            {{"attn_k.weight", R_OTHER, E, sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 1},
            {{"attn_v.weight", R_ATTN_V, E, sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 1},
            {{"attn_q_norm.weight", R_OTHER, hd, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"attn_k_norm.weight", R_OTHER, hd, 0, 0, GEN_NORM, 0.02f}, 1},
            {{"attn_output.weight", R_ATTN_O, sh->n_head * hd, E, 0, GEN_NORMAL, res_std}, 0},
            {{"post_attention_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ffn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ffn_gate.weight", R_OTHER, E, F, 0, GEN_NORMAL, std}, 0},
            {{"ffn_up.weight", R_OTHER, E, F, 0, GEN_NORMAL, std}, 0},
            {{"ffn_down.weight", R_FFN_DOWN, F, E, 0, GEN_NORMAL, res_std}, 0},
            {{"post_ffw_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ffn_gate_inp.weight", R_OTHER, E, X, 0, GEN_NORMAL, 1.0f}, 3},
            {{"ffn_gate_inp.scale", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 3},
            {{"ffn_gate_up_exps.weight", R_OTHER, E, 2 * (int64_t)FX, X, GEN_NORMAL, std}, 3},
            {{"ffn_down_exps.weight", R_FFN_DOWN, FX, E, X, GEN_NORMAL, res_std}, 3},
            {{"ffn_down_exps.scale", R_OTHER, X, 0, 0, GEN_NORM, 0.02f}, 3},
            {{"pre_ffw_norm_2.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 3},
            {{"post_ffw_norm_1.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 3},
            {{"post_ffw_norm_2.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 3},
            {{"inp_gate.weight", R_OTHER, E, sh->g4_pl, 0, GEN_NORMAL, std}, 2},
            {{"proj.weight", R_OTHER, sh->g4_pl, E, 0, GEN_NORMAL, res_std}, 2},
            {{"post_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 2},
            {{"layer_output_scale.weight", R_OTHER, 1, 0, 0, GEN_NORM, 0.02f}, 0},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            const int need = parts[p].need;
            if ((need == 1 && !kv) || (need == 2 && !pl) || (need == 3 && !X)) continue;
            /* the norms, scales and the router stay F32 */
            if (add_layer_part(l, sc, fdt, i, true, gqa, &parts[p].p, router_f32, err))
                return -1;
        }
    }
    return add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err);
}

/* sh's row in a table of n rows (stride bytes apart) whose first field is
   the shape's name, or -1: the tables that add to a shape (dn_shapes,
   mla_shapes, lfm2_shapes) */
static int row_of(const void *table, size_t stride, size_t n, const shape *sh)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(*(const char *const *)(const void *)((const char *)table + i * stride), sh->like)) return (int)i;
    return -1;
}

static int dn_shape_of(const shape *sh) { return row_of(dn_shapes, sizeof dn_shapes[0], sizeof dn_shapes / sizeof dn_shapes[0], sh); }

static int lfm2_shape_of(const shape *sh) { return row_of(lfm2_shapes, sizeof lfm2_shapes[0], sizeof lfm2_shapes / sizeof lfm2_shapes[0], sh); }

/* lfm2's tensors: per layer its operator norm, a short convolution or
   attention with per-head Q/K norms, and the FFN under its norm; the
   output norm named token_embd_norm, the LM head tied. */
static int build_lfm2(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int li = lfm2_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, hd = E / sh->n_head, gqa = sh->n_head / sh->n_head_kv;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    char name[64];
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, true, gqa, E), E, n_vocab,
            sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        const bool attn = lfm2_shapes[li].attn >> i & 1;
        struct { const char *n; role r; int64_t in, out; gen_kind k; float s; bool conv, att; } parts[] = {
            {"attn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f, true, true},
            {"shortconv.in_proj.weight", R_OTHER, E, 3 * E, GEN_NORMAL, std, true, false},
            {"shortconv.conv.weight", R_OTHER, lfm2_shapes[li].l_cache, E, GEN_NORMAL, 0.3f, true, false},
            {"shortconv.out_proj.weight", R_ATTN_O, E, E, GEN_NORMAL, res_std, true, false},
            {"attn_q.weight", R_OTHER, E, (int64_t)sh->n_head * hd, GEN_NORMAL, std, false, true},
            {"attn_k.weight", R_OTHER, E, (int64_t)sh->n_head_kv * hd, GEN_NORMAL, std, false, true},
            {"attn_v.weight", R_ATTN_V, E, (int64_t)sh->n_head_kv * hd, GEN_NORMAL, std, false, true},
            {"attn_q_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f, false, true},
            {"attn_k_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f, false, true},
            {"attn_output.weight", R_ATTN_O, (int64_t)sh->n_head * hd, E, GEN_NORMAL, res_std, false, true},
            {"ffn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f, true, true},
            {"ffn_gate.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std, true, true},
            {"ffn_up.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std, true, true},
            {"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, GEN_NORMAL, res_std, true, true},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            if (attn ? !parts[p].att : !parts[p].conv) continue;
            snprintf(name, sizeof name, "blk.%d.%s", i, parts[p].n);
            /* the norms and the convolution's taps stay F32, as the converter keeps them */
            const bool f32 = !parts[p].out || !strcmp(parts[p].n, "shortconv.conv.weight");
            const int dt = f32 ? EMBER_F32 : pick_dtype(fdt, parts[p].r, i, L, true, gqa, parts[p].in);
            if (add(l, sc, name, dt, parts[p].in, parts[p].out, parts[p].k, parts[p].s, err)) return -1;
        }
    }
    return add(l, sc, "token_embd_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err);
}

static int m2_shape_of(const shape *sh) { return row_of(m2_shapes, sizeof m2_shapes[0], sizeof m2_shapes / sizeof m2_shapes[0], sh); }

/* granitehybrid's tensors: per layer its norm, Mamba-2 (ssm_in, the
   convolution with its bias, dt's bias, A, D, the grouped norm, ssm_out)
   or attention without biases, then the FFN under its norm: dense, or
   experts with a shared one; the LM head tied. */
static int build_granitehybrid(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int mi = m2_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, hd = E / sh->n_head, gqa = sh->n_head / sh->n_head_kv;
    const int H = m2_shapes[mi].n_head, DI = H * m2_shapes[mi].head_dim, N = m2_shapes[mi].d_state, G = m2_shapes[mi].n_group;
    const int CD = DI + 2 * G * N, X = sh->n_expert, FS = m2_shapes[mi].ff_shared;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, true, gqa, E), E, n_vocab,
            sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        const bool attn = m2_shapes[mi].attn >> i & 1, ssm = !attn || m2_shapes[mi].parallel;
        /* need: 0 every layer, 1 Mamba-2, 2 attention, 3 dense FFN, 4 experts */
        struct { layer_part p; int need; } parts[] = {
            {{"attn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ssm_in.weight", R_OTHER, E, 2 * DI + 2 * G * N + H, 0, GEN_NORMAL, std}, 1},
            {{"ssm_conv1d.weight", R_OTHER, m2_shapes[mi].d_conv, CD, 0, GEN_NORMAL, 0.3f}, 1},
            {{"ssm_conv1d.bias", R_OTHER, CD, 0, 0, GEN_NORMAL, 0.1f}, 1},
            {{"ssm_dt.bias", R_OTHER, H, 0, 0, GEN_NORMAL, 0.5f}, 1},
            {{"ssm_a", R_OTHER, 1, H, 0, GEN_DECAY, 0.3f}, 1},
            {{"ssm_d", R_OTHER, 1, H, 0, GEN_NORM, 0.3f}, 1},
            {{"ssm_norm.weight", R_OTHER, DI / G, G, 0, GEN_NORM, 0.02f}, 1},
            {{"ssm_out.weight", R_ATTN_O, DI, E, 0, GEN_NORMAL, res_std}, 1},
            {{"attn_q.weight", R_OTHER, E, (int64_t)sh->n_head * hd, 0, GEN_NORMAL, std}, 2},
            {{"attn_k.weight", R_OTHER, E, (int64_t)sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 2},
            {{"attn_v.weight", R_ATTN_V, E, (int64_t)sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 2},
            {{"attn_output.weight", R_ATTN_O, (int64_t)sh->n_head * hd, E, 0, GEN_NORMAL, res_std}, 2},
            {{"ffn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ffn_gate.weight", R_OTHER, E, sh->n_ff, 0, GEN_NORMAL, std}, 3},
            {{"ffn_up.weight", R_OTHER, E, sh->n_ff, 0, GEN_NORMAL, std}, 3},
            {{"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, 0, GEN_NORMAL, res_std}, 3},
            {{"ffn_gate_inp.weight", R_OTHER, E, X, 0, GEN_NORMAL, std}, 4},
            {{"ffn_gate_exps.weight", R_OTHER, E, sh->n_ff_exp, X, GEN_NORMAL, std}, 4},
            {{"ffn_up_exps.weight", R_OTHER, E, sh->n_ff_exp, X, GEN_NORMAL, std}, 4},
            {{"ffn_down_exps.weight", R_FFN_DOWN, sh->n_ff_exp, E, X, GEN_NORMAL, res_std}, 4},
            {{"ffn_gate_shexp.weight", R_OTHER, E, FS, 0, GEN_NORMAL, std}, 4},
            {{"ffn_up_shexp.weight", R_OTHER, E, FS, 0, GEN_NORMAL, std}, 4},
            {{"ffn_down_shexp.weight", R_FFN_DOWN, FS, E, 0, GEN_NORMAL, res_std}, 4},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            const int need = parts[p].need;
            if ((need == 1 && !ssm) || (need == 2 && !attn) || (need == 3 && X) || (need == 4 && !X)) continue;
            /* the norms, the convolution, A, D and the router stay F32 */
            if (add_layer_part(l, sc, fdt, i, true, gqa, &parts[p].p, m2_f32, err)) return -1;
        }
    }
    return add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err);
}

static int nh_shape_of(const shape *sh) { return row_of(nh_shapes, sizeof nh_shapes[0], sizeof nh_shapes / sizeof nh_shapes[0], sh); }

/* nemotron_h's tensors: per layer its norm and one block, Mamba-2 (as
   granitehybrid's), attention without biases, or an ungated FFN; the
   output norm and an untied LM head. */
static int build_nemotron_h(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int ni = nh_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, hd = sh->head_dim, gqa = sh->n_head / sh->n_head_kv;
    const int H = nh_shapes[ni].n_head, DI = H * nh_shapes[ni].head_dim, N = nh_shapes[ni].d_state, G = nh_shapes[ni].n_group;
    const int CD = DI + 2 * G * N, X = sh->n_expert, FS = nh_shapes[ni].ff_shared;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, false, gqa, E), E, n_vocab, GEN_NORMAL, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        /* X: the FFN layers' experts instead of the dense FFN */
        const char b = nh_shapes[ni].blocks[i] == 'F' && X ? 'X' : nh_shapes[ni].blocks[i];
        struct { layer_part p; char block; } parts[] = {
            {{"attn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, 0},
            {{"ssm_in.weight", R_OTHER, E, 2 * DI + 2 * G * N + H, 0, GEN_NORMAL, std}, 'M'},
            {{"ssm_conv1d.weight", R_OTHER, 4, CD, 0, GEN_NORMAL, 0.3f}, 'M'},
            {{"ssm_conv1d.bias", R_OTHER, CD, 0, 0, GEN_NORMAL, 0.1f}, 'M'},
            {{"ssm_dt.bias", R_OTHER, H, 0, 0, GEN_NORMAL, 0.5f}, 'M'},
            {{"ssm_a", R_OTHER, 1, H, 0, GEN_DECAY, 0.3f}, 'M'},
            {{"ssm_d", R_OTHER, 1, H, 0, GEN_NORM, 0.3f}, 'M'},
            {{"ssm_norm.weight", R_OTHER, DI / G, G, 0, GEN_NORM, 0.02f}, 'M'},
            {{"ssm_out.weight", R_ATTN_O, DI, E, 0, GEN_NORMAL, res_std}, 'M'},
            {{"attn_q.weight", R_OTHER, E, (int64_t)sh->n_head * hd, 0, GEN_NORMAL, std}, 'A'},
            {{"attn_k.weight", R_OTHER, E, (int64_t)sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 'A'},
            {{"attn_v.weight", R_ATTN_V, E, (int64_t)sh->n_head_kv * hd, 0, GEN_NORMAL, std}, 'A'},
            {{"attn_output.weight", R_ATTN_O, (int64_t)sh->n_head * hd, E, 0, GEN_NORMAL, res_std}, 'A'},
            {{"ffn_up.weight", R_OTHER, E, sh->n_ff, 0, GEN_NORMAL, std}, 'F'},
            {{"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, 0, GEN_NORMAL, res_std}, 'F'},
            {{"ffn_gate_inp.weight", R_OTHER, E, X, 0, GEN_NORMAL, std}, 'X'},
            {{"exp_probs_b.bias", R_OTHER, X, 0, 0, GEN_NORMAL, 0.1f}, 'X'},
            {{"ffn_up_exps.weight", R_OTHER, E, sh->n_ff_exp, X, GEN_NORMAL, std}, 'X'},
            {{"ffn_down_exps.weight", R_FFN_DOWN, sh->n_ff_exp, E, X, GEN_NORMAL, res_std}, 'X'},
            {{"ffn_up_shexp.weight", R_OTHER, E, FS, 0, GEN_NORMAL, std}, 'X'},
            {{"ffn_down_shexp.weight", R_FFN_DOWN, FS, E, 0, GEN_NORMAL, res_std}, 'X'},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            if (parts[p].block && parts[p].block != b) continue;
            /* the norms, the convolution, A, D and the router stay F32 */
            if (add_layer_part(l, sc, fdt, i, false, gqa, &parts[p].p, m2_f32, err)) return -1;
        }
    }
    if (add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err)) return -1;
    return add(l, sc, "output.weight", pick_dtype(fdt, R_OUTPUT, 0, L, false, gqa, E), E, n_vocab, GEN_NORMAL, std, err);
}

static int g3n_shape_of(const shape *sh) { return row_of(g3n_shapes, sizeof g3n_shapes[0], sizeof g3n_shapes / sizeof g3n_shapes[0], sh); }

/* gemma3n's tensors: the stream projections, per-layer inputs, and per
   layer attention (every layer has its K and V, read or not), the FFN,
   laurel and the streams' router and coefficients (F32, as the converter
   keeps them); the LM head tied. */
static int build_gemma3n(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int gi = g3n_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, hd = sh->head_dim, gqa = sh->n_head / sh->n_head_kv;
    const int NP = g3n_shapes[gi].n_pl, A = g3n_shapes[gi].n_altup, R = g3n_shapes[gi].rank;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    char name[64];
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, true, gqa, E), E, n_vocab,
            sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err) ||
        add(l, sc, "per_layer_token_embd.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, NP * L), (int64_t)NP * L,
            n_vocab, GEN_NORMAL, std, err) ||
        add(l, sc, "per_layer_model_proj.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, E), E, (int64_t)NP * L,
            GEN_NORMAL, std, err) ||
        add(l, sc, "per_layer_proj_norm.weight", EMBER_F32, NP, 0, GEN_NORM, 0.02f, err) ||
        add3(l, sc, "altup_proj.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, E), E, E, A - 1, std, err) ||
        add3(l, sc, "altup_unembd_proj.weight", pick_dtype(fdt, R_OTHER, 0, L, true, gqa, E), E, E, A - 1, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        struct { const char *n; role r; int64_t in, out; gen_kind k; float s; } parts[] = {
            {"attn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"attn_q.weight", R_OTHER, E, (int64_t)sh->n_head * hd, GEN_NORMAL, std},
            {"attn_k.weight", R_OTHER, E, (int64_t)sh->n_head_kv * hd, GEN_NORMAL, std},
            {"attn_v.weight", R_ATTN_V, E, (int64_t)sh->n_head_kv * hd, GEN_NORMAL, std},
            {"attn_q_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f},
            {"attn_k_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f},
            {"attn_output.weight", R_ATTN_O, (int64_t)sh->n_head * hd, E, GEN_NORMAL, res_std},
            {"post_attention_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"ffn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"ffn_gate.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std},
            {"ffn_up.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std},
            {"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, GEN_NORMAL, res_std},
            {"post_ffw_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"inp_gate.weight", R_OTHER, E, NP, GEN_NORMAL, std},
            {"proj.weight", R_OTHER, NP, E, GEN_NORMAL, res_std},
            {"post_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"laurel_l.weight", R_OTHER, E, R, GEN_NORMAL, std},
            {"laurel_r.weight", R_OTHER, R, E, GEN_NORMAL, res_std},
            {"laurel_post_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"altup_router.weight", R_OTHER, E, A, GEN_NORMAL, std},
            {"altup_router_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"altup_predict_coef.weight", R_OTHER, A, (int64_t)A * A, GEN_NORMAL, 0.1f},
            {"altup_correct_coef.weight", R_OTHER, A, A, GEN_NORMAL, 0.1f},
            {"altup_correct_scale.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            snprintf(name, sizeof name, "blk.%d.%s", i, parts[p].n);
            /* norms, the router and the coefficients stay F32 */
            const bool f32 = !parts[p].out || strstr(parts[p].n, "altup_");
            const int dt = f32 ? EMBER_F32 : pick_dtype(fdt, parts[p].r, i, L, true, gqa, parts[p].in);
            if (add(l, sc, name, dt, parts[p].in, parts[p].out, parts[p].k, parts[p].s, err)) return -1;
        }
    }
    return add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err);
}

static int mla_shape_of(const shape *sh) { return row_of(mla_shapes, sizeof mla_shapes[0], sizeof mla_shapes / sizeof mla_shapes[0], sh); }

/* deepseek2's tensors: latent attention (attn_q or the attn_q_a / _b
   pair, attn_kv_a_mqa, per-head attn_k_b and attn_v_b), then a dense FFN
   for the leading layers, experts and the shared ones after. */
static int build_deepseek2(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int mi = mla_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, H = sh->n_head, R = sh->n_rot, gqa = H;
    const int QL = mla_shapes[mi].q_lora, KL = mla_shapes[mi].kv_lora, NO = mla_shapes[mi].nope, VD = mla_shapes[mi].v;
    const int X = sh->n_expert, F = sh->n_ff_exp, FS = F * mla_shapes[mi].shared;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, false, gqa, E), E, n_vocab, GEN_NORMAL, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        const bool dense = i < mla_shapes[mi].lead;
        struct { layer_part p; bool on; } parts[] = {
            {{"attn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, true},
            {{"attn_q.weight", R_OTHER, E, (int64_t)H * (NO + R), 0, GEN_NORMAL, std}, !QL},
            {{"attn_q_a.weight", R_OTHER, E, QL, 0, GEN_NORMAL, std}, QL > 0},
            {{"attn_q_a_norm.weight", R_OTHER, QL, 0, 0, GEN_NORM, 0.02f}, QL > 0},
            {{"attn_q_b.weight", R_OTHER, QL, (int64_t)H * (NO + R), 0, GEN_NORMAL, std}, QL > 0},
            {{"attn_kv_a_mqa.weight", R_OTHER, E, KL + R, 0, GEN_NORMAL, std}, true},
            {{"attn_kv_a_norm.weight", R_OTHER, KL, 0, 0, GEN_NORM, 0.02f}, true},
            {{"attn_k_b.weight", R_OTHER, NO, KL, H, GEN_NORMAL, std}, true},
            {{"attn_v_b.weight", R_ATTN_V, KL, VD, H, GEN_NORMAL, std}, true},
            {{"attn_output.weight", R_ATTN_O, (int64_t)H * VD, E, 0, GEN_NORMAL, res_std}, true},
            {{"ffn_norm.weight", R_OTHER, E, 0, 0, GEN_NORM, 0.02f}, true},
            {{"ffn_gate.weight", R_OTHER, E, sh->n_ff, 0, GEN_NORMAL, std}, dense},
            {{"ffn_up.weight", R_OTHER, E, sh->n_ff, 0, GEN_NORMAL, std}, dense},
            {{"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, 0, GEN_NORMAL, res_std}, dense},
            {{"ffn_gate_inp.weight", R_OTHER, E, X, 0, GEN_NORMAL, std}, !dense},
            {{"ffn_gate_exps.weight", R_OTHER, E, F, X, GEN_NORMAL, std}, !dense},
            {{"ffn_up_exps.weight", R_OTHER, E, F, X, GEN_NORMAL, std}, !dense},
            {{"ffn_down_exps.weight", R_FFN_DOWN, F, E, X, GEN_NORMAL, res_std}, !dense},
            {{"ffn_gate_shexp.weight", R_OTHER, E, FS, 0, GEN_NORMAL, std}, !dense},
            {{"ffn_up_shexp.weight", R_OTHER, E, FS, 0, GEN_NORMAL, std}, !dense},
            {{"ffn_down_shexp.weight", R_FFN_DOWN, FS, E, 0, GEN_NORMAL, res_std}, !dense},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            if (!parts[p].on) continue;
            /* the norms and the router stay F32 */
            if (add_layer_part(l, sc, fdt, i, false, gqa, &parts[p].p, router_f32, err))
                return -1;
        }
    }
    if (add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err)) return -1;
    return add(l, sc, "output.weight", pick_dtype(fdt, R_OUTPUT, 0, L, false, gqa, E), E, n_vocab, GEN_NORMAL, std, err);
}

/* qwen35's tensors: delta-net layers and gated attention layers (whose
   Q rows hold each head's query, then its gate), a dense FFN after each
   under a norm named post_attention_norm. */
static int build_qwen35(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    const shape *sh = sc->sh;
    const int di = dn_shape_of(sh);
    const int E = sh->n_embd, L = sh->n_layer, hd = sh->head_dim, gqa = sh->n_head / sh->n_head_kv;
    const int D = dn_shapes[di].hd, KD = dn_shapes[di].n_k * D, VD = dn_shapes[di].n_v * D, NV = dn_shapes[di].n_v;
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    char name[64];
    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, true, gqa, E), E, n_vocab,
            sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err))
        return -1;
    for (int i = 0; i < L; i++) {
        const bool delta = (i + 1) % dn_shapes[di].interval != 0;
        struct { const char *n; role r; int64_t in, out; gen_kind k; float s; bool dn, att; } parts[] = {
            {"attn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f, true, true},
            {"attn_qkv.weight", R_OTHER, E, 2 * KD + VD, GEN_NORMAL, std, true, false},
            {"attn_gate.weight", R_OTHER, E, VD, GEN_NORMAL, std, true, false},
            {"ssm_beta.weight", R_OTHER, E, NV, GEN_NORMAL, std, true, false},
            {"ssm_alpha.weight", R_OTHER, E, NV, GEN_NORMAL, std, true, false},
            {"ssm_conv1d.weight", R_OTHER, 4, 2 * KD + VD, GEN_NORMAL, 0.3f, true, false},
            {"ssm_dt.bias", R_OTHER, NV, 0, GEN_NORMAL, 0.5f, true, false},
            {"ssm_a", R_OTHER, NV, 0, GEN_DECAY, 0.3f, true, false},
            {"ssm_norm.weight", R_OTHER, D, 0, GEN_NORM, 0.02f, true, false},
            {"ssm_out.weight", R_ATTN_O, VD, E, GEN_NORMAL, res_std, true, false},
            {"attn_q.weight", R_OTHER, E, 2 * sh->n_head * hd, GEN_NORMAL, std, false, true},
            {"attn_k.weight", R_OTHER, E, sh->n_head_kv * hd, GEN_NORMAL, std, false, true},
            {"attn_v.weight", R_ATTN_V, E, sh->n_head_kv * hd, GEN_NORMAL, std, false, true},
            {"attn_q_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f, false, true},
            {"attn_k_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f, false, true},
            {"attn_output.weight", R_ATTN_O, sh->n_head * hd, E, GEN_NORMAL, res_std, false, true},
            {"post_attention_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f, true, true},
            {"ffn_gate.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std, true, true},
            {"ffn_up.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std, true, true},
            {"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, GEN_NORMAL, res_std, true, true},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            if (delta ? !parts[p].dn : !parts[p].att) continue;
            snprintf(name, sizeof name, "blk.%d.%s", i, parts[p].n);
            /* the convolution's taps stay F32, as the converter keeps them */
            const bool f32 = !parts[p].out || !strcmp(parts[p].n, "ssm_conv1d.weight");
            int dt = f32 ? EMBER_F32 : pick_dtype(fdt, parts[p].r, i, L, true, gqa, parts[p].in);
            if (add(l, sc, name, dt, parts[p].in, parts[p].out, parts[p].k, parts[p].s, err)) return -1;
        }
    }
    return add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err);
}

static int build_tensors(tlist *l, synth_ctx *sc, const char *fdt, int n_vocab, ember_err *err)
{
    if (sc->sh->g4_period) return build_gemma4(l, sc, fdt, n_vocab, err);
    if (dn_shape_of(sc->sh) >= 0) return build_qwen35(l, sc, fdt, n_vocab, err);
    if (mla_shape_of(sc->sh) >= 0) return build_deepseek2(l, sc, fdt, n_vocab, err);
    if (lfm2_shape_of(sc->sh) >= 0) return build_lfm2(l, sc, fdt, n_vocab, err);
    if (g3n_shape_of(sc->sh) >= 0) return build_gemma3n(l, sc, fdt, n_vocab, err);
    if (m2_shape_of(sc->sh) >= 0) return build_granitehybrid(l, sc, fdt, n_vocab, err);
    if (nh_shape_of(sc->sh) >= 0) return build_nemotron_h(l, sc, fdt, n_vocab, err);
    const shape *sh = sc->sh;
    const int E = sh->n_embd, hd = sh->head_dim ? sh->head_dim : sh->n_embd / sh->n_head, L = sh->n_layer;
    const int n_rot = sh->n_rot ? sh->n_rot : hd;
    const int q_out = sh->n_head * hd, kv_out = sh->n_head_kv * hd;
    /* std 0.02 as in GPT-2 / Llama initialisation; the projections that add
       into the residual stream are scaled down with depth so the stream's
       magnitude stays O(1) across layers */
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)L);
    const bool tied = sh->tied && !sc->untied;
    const int gqa = sh->n_head / sh->n_head_kv;
    char name[64];

    if (add(l, sc, "token_embd.weight", pick_dtype(fdt, R_EMBD, 0, L, tied, gqa, E), E, n_vocab,
            sc->toy_words && tied ? GEN_TOY_EMBD : GEN_NORMAL, std, err)) return -1;
    if (sh->rope_freqs &&
        add(l, sc, "rope_freqs.weight", EMBER_F32, hd / 2, 0, GEN_ROPE_FREQS, 0, err)) return -1;
    /* LongRoPE: the same curve serves as both factor sets (values >= 1) */
    if (sh->phi && (add(l, sc, "rope_factors_long.weight", EMBER_F32, n_rot / 2, 0, GEN_ROPE_FREQS, 0, err) ||
                    add(l, sc, "rope_factors_short.weight", EMBER_F32, n_rot / 2, 0, GEN_ROPE_FREQS, 0, err)))
        return -1;
    for (int i = 0; i < L; i++) {
        struct { const char *n; role r; int64_t in, out; gen_kind k; float s; } parts[] = {
            {"attn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"attn_q.weight", R_OTHER, E, q_out, GEN_NORMAL, std},
            {"attn_q.bias", R_OTHER, q_out, 0, GEN_NORMAL, std},
            {"attn_k.weight", R_OTHER, E, kv_out, GEN_NORMAL, std},
            {"attn_k.bias", R_OTHER, kv_out, 0, GEN_NORMAL, std},
            {"attn_v.weight", R_ATTN_V, E, kv_out, GEN_NORMAL, std},
            {"attn_v.bias", R_OTHER, kv_out, 0, GEN_NORMAL, std},
            {"attn_qkv.weight", R_OTHER, E, q_out + 2 * kv_out, GEN_NORMAL, std},
            {"attn_q_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f},
            {"attn_k_norm.weight", R_OTHER, hd, 0, GEN_NORM, 0.02f},
            {"attn_output.weight", R_ATTN_O, q_out, E, GEN_NORMAL, res_std},
            {"attn_output.bias", R_OTHER, E, 0, GEN_NORMAL, std},
            {"attn_sinks.weight", R_OTHER, sh->n_head, 0, GEN_NORMAL, 1.0f},
            {"post_attention_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"ffn_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            {"ffn_gate.weight", R_OTHER, E, sh->n_ff, GEN_NORMAL, std},
            {"ffn_up.weight", R_OTHER, E, sh->n_ff * (sh->phi ? 2 : 1), GEN_NORMAL, std},
            {"ffn_down.weight", R_FFN_DOWN, sh->n_ff, E, GEN_NORMAL, res_std},
            {"post_ffw_norm.weight", R_OTHER, E, 0, GEN_NORM, 0.02f},
            /* MoE: the router, kept in F32 as the reference's quantizer does */
            {"ffn_gate_inp.weight", R_OTHER, E, sh->n_expert, GEN_NORMAL, std},
            {"ffn_gate_inp.bias", R_OTHER, sh->n_expert, 0, GEN_NORMAL, std},
        };
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
            const char *n = parts[p].n;
            bool bias = strstr(n, ".bias") != NULL;
            if (bias && !sh->qkv_bias) continue;
            /* gpt-oss's own: the output bias, the sinks, the router's bias;
               its FFN norm is named post_attention_norm, and no Q/K norms */
            const bool oss_only = !strcmp(n, "attn_output.bias") || !strcmp(n, "attn_sinks.weight") ||
                                  !strcmp(n, "ffn_gate_inp.bias");
            if (oss_only && !sh->oss) continue;
            if (sh->oss && (!strcmp(n, "ffn_norm.weight") || !strncmp(n, "attn_q_norm", 11) ||
                            !strncmp(n, "attn_k_norm", 11)))
                continue;
            /* phi: one attn_qkv instead of three, ffn_up holds the gate rows */
            bool fused = !strcmp(n, "attn_qkv.weight"), split = !strncmp(n, "attn_q.", 7) ||
                         !strncmp(n, "attn_k.", 7) || !strncmp(n, "attn_v.", 7) || !strcmp(n, "ffn_gate.weight");
            if ((fused && !sh->phi) || (split && sh->phi)) continue;
            /* MoE layers: a router and experts (below) in place of the FFN */
            const bool dense_ffn = !strncmp(n, "ffn_gate.", 9) || !strncmp(n, "ffn_up.", 7) || !strncmp(n, "ffn_down.", 9);
            if ((sh->n_expert && dense_ffn) || (!sh->n_expert && !strncmp(n, "ffn_gate_inp", 12))) continue;
            const bool qk_norm = !strncmp(n, "attn_q_norm", 11) || !strncmp(n, "attn_k_norm", 11);
            if (sh->n_expert && qk_norm) {   /* qwen3moe: Q/K norms, no post norms */
            } else if (sh->oss && !strcmp(n, "post_attention_norm.weight")) {
            } else if (!sh->gemma && (strstr(n, "_norm.") && strncmp(n, "attn_norm", 9) && strncmp(n, "ffn_norm", 8)))
                continue;
            /* Gemma 2 has the post norms but no Q/K norms */
            if (!strcmp(sh->arch, "gemma2") && (!strncmp(n, "attn_q_norm", 11) || !strncmp(n, "attn_k_norm", 11)))
                continue;
            snprintf(name, sizeof name, "blk.%d.%s", i, parts[p].n);
            int dt = parts[p].out && !strstr(n, "gate_inp") ? pick_dtype(fdt, parts[p].r, i, L, tied, gqa, parts[p].in)
                                                             : EMBER_F32;
            if (add(l, sc, name, dt, parts[p].in, parts[p].out, parts[p].k, parts[p].s, err)) return -1;
        }
        if (sh->n_expert) {
            const int F = sh->n_ff_exp, X = sh->n_expert;
            /* gpt-oss ships its experts in MXFP4 (F16 files keep F16) */
            const bool mx = sh->oss && strcmp(fdt, "F16");
            snprintf(name, sizeof name, "blk.%d.ffn_gate_exps.weight", i);
            if (add3(l, sc, name, mx ? EMBER_MXFP4 : pick_dtype(fdt, R_OTHER, i, L, tied, gqa, E), E, F, X, std, err))
                return -1;
            snprintf(name, sizeof name, "blk.%d.ffn_up_exps.weight", i);
            if (add3(l, sc, name, mx ? EMBER_MXFP4 : pick_dtype(fdt, R_OTHER, i, L, tied, gqa, E), E, F, X, std, err))
                return -1;
            snprintf(name, sizeof name, "blk.%d.ffn_down_exps.weight", i);
            if (add3(l, sc, name, mx ? EMBER_MXFP4 : pick_dtype(fdt, R_FFN_DOWN, i, L, tied, gqa, F), F, E, X, res_std,
                     err))
                return -1;
            const char *bn[3] = {"ffn_gate_exps.bias", "ffn_up_exps.bias", "ffn_down_exps.bias"};
            for (int b = 0; b < 3 && sh->oss; b++) {
                snprintf(name, sizeof name, "blk.%d.%s", i, bn[b]);
                if (add(l, sc, name, EMBER_F32, b < 2 ? F : E, X, GEN_NORMAL, std, err)) return -1;
            }
        }
    }
    if (add(l, sc, "output_norm.weight", EMBER_F32, E, 0, GEN_NORM, 0.02f, err)) return -1;
    if (!tied && add(l, sc, "output.weight", pick_dtype(fdt, R_OUTPUT, 0, L, tied, gqa, E), E, n_vocab,
                     sc->toy_words ? GEN_TOY_EMBD : GEN_NORMAL, std, err)) return -1;
    return 0;
}

/* ---- metadata ------------------------------------------------------------- */

/* A Mamba-2 model's ssm.* keys, as the converter writes them (granitehybrid,
   falcon-h1, nemotron_h): the convolution's width, the inner width (heads
   x head width), the state, one step per head, the groups of B and C */
static void write_ssm_keys(gguf_writer *w, const char *arch, int d_conv, int n_head, int head_dim, int d_state,
                           int n_group)
{
    char key[128];
#define SK(suffix) (snprintf(key, sizeof key, "%s.ssm.%s", arch, suffix), key)
    gguf_w_u32(w, SK("conv_kernel"), (uint32_t)d_conv);
    gguf_w_u32(w, SK("inner_size"), (uint32_t)(n_head * head_dim));
    gguf_w_u32(w, SK("state_size"), (uint32_t)d_state);
    gguf_w_u32(w, SK("time_step_rank"), (uint32_t)n_head);
    gguf_w_u32(w, SK("group_count"), (uint32_t)n_group);
#undef SK
}

static void write_hparams(gguf_writer *w, const shape *sh, int n_vocab, const file_dtype *fd,
                          const char *like)
{
    char key[96], name[96];
#define AK(suffix) (snprintf(key, sizeof key, "%s.%s", sh->arch, suffix), key)
    gguf_w_str(w, "general.architecture", sh->arch);
    snprintf(name, sizeof name, "ember-synth-%s-%s", like, fd->name);
    gguf_w_str(w, "general.name", name);
    gguf_w_u32(w, AK("context_length"), (uint32_t)sh->n_ctx);
    gguf_w_u32(w, AK("embedding_length"), (uint32_t)sh->n_embd);
    gguf_w_u32(w, AK("block_count"), (uint32_t)sh->n_layer);
    if (sh->g4_period) {   /* per-layer arrays, as the converter writes Gemma 4 */
        int32_t ff[256], kv[256];
        bool swa[256];
        for (int i = 0; i < sh->n_layer && i < 256; i++) {
            ff[i] = g4_ff(sh, i);
            kv[i] = sh->n_head_kv;
            swa[i] = g4_swa(sh, i);
        }
        gguf_w_arr(w, AK("feed_forward_length"), GGUF_T_I32, ff, (uint64_t)sh->n_layer);
        gguf_w_arr(w, AK("attention.head_count_kv"), GGUF_T_I32, kv, (uint64_t)sh->n_layer);
        gguf_w_arr(w, AK("attention.sliding_window_pattern"), GGUF_T_BOOL, swa, (uint64_t)sh->n_layer);
        gguf_w_u32(w, AK("attention.shared_kv_layers"), (uint32_t)sh->g4_shared);
        gguf_w_u32(w, AK("embedding_length_per_layer_input"), (uint32_t)sh->g4_pl);
        gguf_w_u32(w, AK("attention.key_length_swa"), (uint32_t)sh->head_dim_swa);
        gguf_w_u32(w, AK("attention.value_length_swa"), (uint32_t)sh->head_dim_swa);
        gguf_w_u32(w, AK("rope.dimension_count_swa"), (uint32_t)sh->head_dim_swa);
        gguf_w_f32(w, AK("rope.freq_base_swa"), 10000.0f);
    } else if (nh_shape_of(sh) >= 0) {   /* per-layer arrays: 0 where a layer has no FFN or no attention */
        const char *bl = nh_shapes[nh_shape_of(sh)].blocks;
        int32_t ff[64], kv[64];
        for (int i = 0; i < sh->n_layer && i < 64; i++) {
            ff[i] = bl[i] == 'F' ? sh->n_ff : 0;
            kv[i] = bl[i] == 'A' ? sh->n_head_kv : 0;
        }
        gguf_w_arr(w, AK("feed_forward_length"), GGUF_T_I32, ff, (uint64_t)sh->n_layer);
        gguf_w_arr(w, AK("attention.head_count_kv"), GGUF_T_I32, kv, (uint64_t)sh->n_layer);
    } else {
        gguf_w_u32(w, AK("feed_forward_length"), (uint32_t)sh->n_ff);
        const int li = lfm2_shape_of(sh), mi = m2_shape_of(sh);
        if (li >= 0 || (mi >= 0 && !m2_shapes[mi].parallel)) {   /* one KV head count a layer: 0 for the short convolutions or Mamba-2 */
            const uint64_t attn = li >= 0 ? lfm2_shapes[li].attn : m2_shapes[mi].attn;
            int32_t kv[64];
            for (int i = 0; i < sh->n_layer && i < 64; i++) kv[i] = attn >> i & 1 ? sh->n_head_kv : 0;
            gguf_w_arr(w, AK("attention.head_count_kv"), GGUF_T_I32, kv, (uint64_t)sh->n_layer);
            if (li >= 0) gguf_w_u32(w, AK("shortconv.l_cache"), (uint32_t)lfm2_shapes[li].l_cache);
        } else
            gguf_w_u32(w, AK("attention.head_count_kv"), (uint32_t)sh->n_head_kv);
    }
    gguf_w_u32(w, AK("attention.head_count"), (uint32_t)sh->n_head);
    gguf_w_f32(w, AK("rope.freq_base"), (float)sh->rope_theta);
    gguf_w_f32(w, AK("attention.layer_norm_rms_epsilon"), (float)sh->eps);
    const int hd = sh->head_dim ? sh->head_dim : sh->n_embd / sh->n_head;
    gguf_w_u32(w, AK("rope.dimension_count"), (uint32_t)(sh->n_rot ? sh->n_rot : hd));
    if (sh->head_dim) {
        gguf_w_u32(w, AK("attention.key_length"), (uint32_t)hd);
        gguf_w_u32(w, AK("attention.value_length"), (uint32_t)hd);
    }
    if (sh->swa) gguf_w_u32(w, AK("attention.sliding_window"), (uint32_t)sh->swa);
    if (!strcmp(sh->arch, "gemma2")) {   /* as the converter writes them */
        gguf_w_f32(w, AK("attn_logit_softcapping"), 50.0f);
        gguf_w_f32(w, AK("final_logit_softcapping"), 30.0f);
    }
    const int gi = g3n_shape_of(sh);
    if (gi >= 0) {   /* as the converter writes Gemma 3n (shared_kv_layers a float) */
        gguf_w_u32(w, AK("embedding_length_per_layer_input"), (uint32_t)g3n_shapes[gi].n_pl);
        gguf_w_u32(w, AK("altup.num_inputs"), (uint32_t)g3n_shapes[gi].n_altup);
        gguf_w_u32(w, AK("altup.active_idx"), 0);
        gguf_w_f32(w, AK("attention.shared_kv_layers"), (float)(sh->n_layer > 20 ? sh->n_layer - 20 : 0));
        gguf_w_f32(w, AK("final_logit_softcapping"), 30.0f);
    }
    if (sh->n_expert) {
        gguf_w_u32(w, AK("expert_count"), (uint32_t)sh->n_expert);
        gguf_w_u32(w, AK("expert_used_count"), (uint32_t)sh->n_expert_used);
        gguf_w_u32(w, AK("expert_feed_forward_length"), (uint32_t)sh->n_ff_exp);
    }
    if (!strcmp(sh->arch, "mistral3")) {   /* Ministral 3's config, as the converter writes it */
        gguf_w_str(w, AK("rope.scaling.type"), "yarn");
        gguf_w_f32(w, AK("rope.scaling.factor"), 16.0f);
        gguf_w_u32(w, AK("rope.scaling.original_context_length"), 16384);
        gguf_w_f32(w, AK("rope.scaling.yarn_beta_fast"), 32.0f);
        gguf_w_f32(w, AK("rope.scaling.yarn_beta_slow"), 1.0f);
        gguf_w_f32(w, AK("rope.scaling.yarn_log_multiplier"), 1.0f);
        gguf_w_f32(w, AK("attention.temperature_scale"), 0.1f);
    }
    if (sh->oss) {   /* gpt-oss's YaRN, as the converter writes it */
        gguf_w_str(w, AK("rope.scaling.type"), "yarn");
        gguf_w_f32(w, AK("rope.scaling.factor"), 32.0f);
        gguf_w_u32(w, AK("rope.scaling.original_context_length"), 4096);
    }
    const int di = dn_shape_of(sh);
    if (di >= 0) {   /* the delta-net layers, as the converter writes Qwen3.5 */
        const int D = dn_shapes[di].hd;
        gguf_w_u32(w, AK("ssm.conv_kernel"), 4);
        gguf_w_u32(w, AK("ssm.state_size"), (uint32_t)D);
        gguf_w_u32(w, AK("ssm.group_count"), (uint32_t)dn_shapes[di].n_k);
        gguf_w_u32(w, AK("ssm.time_step_rank"), (uint32_t)dn_shapes[di].n_v);
        gguf_w_u32(w, AK("ssm.inner_size"), (uint32_t)(dn_shapes[di].n_v * D));
        gguf_w_u32(w, AK("full_attention_interval"), (uint32_t)dn_shapes[di].interval);
        /* the rotated pairs in three position sections (a text token has one position in all) */
        const int pairs = sh->n_rot / 2;
        int32_t sec[4] = {pairs - 2 * (pairs / 3), pairs / 3, pairs / 3, 0};
        gguf_w_arr(w, AK("rope.dimension_sections"), GGUF_T_I32, sec, 4);
    }
    const int mi = mla_shape_of(sh);
    if (mi >= 0) {   /* the latent attention, as converters write it since 2025 */
        const int R = sh->n_rot, KL = mla_shapes[mi].kv_lora;
        gguf_w_u32(w, AK("attention.kv_lora_rank"), (uint32_t)KL);
        if (mla_shapes[mi].q_lora) gguf_w_u32(w, AK("attention.q_lora_rank"), (uint32_t)mla_shapes[mi].q_lora);
        gguf_w_u32(w, AK("attention.key_length"), (uint32_t)(KL + R));
        gguf_w_u32(w, AK("attention.value_length"), (uint32_t)KL);
        gguf_w_u32(w, AK("attention.key_length_mla"), (uint32_t)(mla_shapes[mi].nope + R));
        gguf_w_u32(w, AK("attention.value_length_mla"), (uint32_t)mla_shapes[mi].v);
        gguf_w_u32(w, AK("expert_shared_count"), (uint32_t)mla_shapes[mi].shared);
        gguf_w_u32(w, AK("leading_dense_block_count"), (uint32_t)mla_shapes[mi].lead);
        gguf_w_f32(w, AK("expert_weights_scale"), 1.0f);
        gguf_w_u32(w, AK("expert_gating_func"), 1);
        if (mla_shapes[mi].yarn > 0) {
            gguf_w_str(w, AK("rope.scaling.type"), "yarn");
            gguf_w_f32(w, AK("rope.scaling.factor"), mla_shapes[mi].yarn);
            gguf_w_u32(w, AK("rope.scaling.original_context_length"), 4096);
            gguf_w_f32(w, AK("rope.scaling.yarn_log_multiplier"), 0.0707f);
        }
    }
    const int nhi = nh_shape_of(sh);
    if (nhi >= 0) {   /* Nemotron-H's Mamba-2, as the converter writes it */
        write_ssm_keys(w, sh->arch, 4, nh_shapes[nhi].n_head, nh_shapes[nhi].head_dim, nh_shapes[nhi].d_state,
                       nh_shapes[nhi].n_group);
        if (nh_shapes[nhi].ff_shared) {
            gguf_w_u32(w, AK("expert_shared_feed_forward_length"), (uint32_t)nh_shapes[nhi].ff_shared);
            gguf_w_bool(w, AK("expert_weights_norm"), true);
            gguf_w_f32(w, AK("expert_weights_scale"), 2.5f);
        }
    }
    const int m2i = m2_shape_of(sh);
    if (m2i >= 0)
        write_ssm_keys(w, sh->arch, m2_shapes[m2i].d_conv, m2_shapes[m2i].n_head, m2_shapes[m2i].head_dim,
                       m2_shapes[m2i].d_state, m2_shapes[m2i].n_group);
    /* Granite 4.0-H, as the converter writes it: its multipliers, no rope
       (Falcon-H1: one KV head count, the multipliers in the weights, rope) */
    if (m2i >= 0 && !m2_shapes[m2i].parallel) {
        gguf_w_bool(w, AK("rope.scaling.finetuned"), false);
        gguf_w_f32(w, AK("embedding_scale"), 12.0f);
        gguf_w_f32(w, AK("residual_scale"), 0.22f);
        gguf_w_f32(w, AK("attention.scale"), 0.0078125f);
        gguf_w_f32(w, AK("logit_scale"), 8.0f);
        if (m2_shapes[m2i].ff_shared)
            gguf_w_u32(w, AK("expert_shared_feed_forward_length"), (uint32_t)m2_shapes[m2i].ff_shared);
    }
    if (sh->phi) {   /* Phi-4-mini's LongRoPE: 4k original context, attn_factor sqrt(1 + ln 32 / ln 4096) */
        gguf_w_u32(w, AK("rope.scaling.original_context_length"), 4096);
        gguf_w_f32(w, AK("rope.scaling.attn_factor"), 1.1902381f);
    }
    gguf_w_u32(w, AK("vocab_size"), (uint32_t)n_vocab);
#undef AK
    gguf_w_u32(w, "general.file_type", (uint32_t)fd->ftype);
    if (fd->ftype != 1) gguf_w_u32(w, "general.quantization_version", 2);
}

/* Copies every tokenizer.* key of a vocabulary file; returns its size. */
static int copy_vocab(gguf_writer *w, const char *path, int *n_vocab, ember_err *err)
{
    gguf_file *v = gguf_open(path, err);
    if (!v) return -1;
    const gguf_kv *tok = gguf_find(v, "tokenizer.ggml.tokens");
    if (!tok || tok->type != GGUF_T_ARRAY || tok->arr_type != GGUF_T_STRING || tok->arr_n == 0 ||
        tok->arr_n > (1u << 24)) {
        gguf_close(v);
        return ember_seterr(err, "%s: no usable tokenizer.ggml.tokens array (not a vocabulary file?)", path);
    }
    *n_vocab = (int)tok->arr_n;
    for (uint64_t i = 0; i < v->n_kv; i++)
        if (v->kv[i].key.len > 10 && !memcmp(v->kv[i].key.ptr, "tokenizer.", 10))
            gguf_w_copy_kv(w, &v->kv[i]);
    gguf_close(v);
    return 0;
}

/* ---- entry point ---------------------------------------------------------- */

/* Appends name to the comma-separated list in buf (cap bytes). */
static void list_add(char *buf, size_t cap, const char *name)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
}

int synth_write(const synth_opts *o, ember_err *err)
{
    const shape *sh = NULL;
    const file_dtype *fd = NULL;
    const char *dt = o->dtype ? o->dtype : "Q8_0";
    const char *like = o->like ? o->like : "tiny";
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!strcmp(like, shapes[i].like)) sh = &shapes[i];
    if (!sh) {
        char known[1024] = "";
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) list_add(known, sizeof known, shapes[i].like);
        return ember_seterr(err, "unknown shape '%s' (known: %s)", like, known);
    }
    for (size_t i = 0; i < sizeof file_dtypes / sizeof file_dtypes[0]; i++)
        if (!strcasecmp(dt, file_dtypes[i].name)) fd = &file_dtypes[i];
    if (!fd) {
        char known[256] = "";
        for (size_t i = 0; i < sizeof file_dtypes / sizeof file_dtypes[0]; i++)
            list_add(known, sizeof known, file_dtypes[i].name);
        return ember_seterr(err, "unknown dtype '%s' (known: %s)", dt, known);
    }
    if (!o->out || !*o->out) return ember_seterr(err, "no output file given");

    if (o->untied && (sh->g4_period || g3n_shape_of(sh) >= 0)) return ember_seterr(err, "--untied: the %s shape has no separate output projection", like);
    synth_ctx sc = {.sh = sh, .seed = o->seed, .verbose = o->verbose != 0, .untied = o->untied != 0};
    gguf_writer *w = gguf_writer_new();
    tlist l = {0};
    int rc = -1, n_vocab = 0;
    if (!w) {
        ember_seterr(err, "out of memory");
        goto out;
    }
    /* the tokenizer decides the vocabulary size: write the hyperparameters
       first to fix the key order, then again with the real size */
    write_hparams(w, sh, 0, fd, like);
    if (o->vocab) {
        if (copy_vocab(w, o->vocab, &n_vocab, err)) goto out;
    } else {
        n_vocab = sh->n_vocab;
        if (synth_toy_vocab(w, &n_vocab, &sc.toy_words, err)) goto out;
    }
    if (o->chat_template) gguf_w_str(w, "tokenizer.chat_template", o->chat_template);
    write_hparams(w, sh, n_vocab, fd, like);

    if (build_tensors(&l, &sc, fd->name, n_vocab, err)) goto out;
    sc.n_tensors = l.n;
    sc.pool = ember_pool_new(o->threads);
    if (!sc.pool) {
        ember_seterr(err, "cannot start worker threads");
        goto out;
    }
    sc.n_scratch = ember_pool_size(sc.pool);
    sc.scratch = calloc((size_t)sc.n_scratch, sizeof *sc.scratch);
    if (!sc.scratch) {
        ember_seterr(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < sc.n_scratch; i++) {
        sc.scratch[i] = malloc((size_t)sc.max_ne0 * sizeof(float));
        if (!sc.scratch[i]) {
            ember_seterr(err, "out of memory");
            goto out;
        }
    }
    for (int i = 0; i < l.n; i++) {
        tgen *g = &l.t[i];
        int64_t ne[3] = {g->ne[0], g->ne[1], g->ne[2]};
        uint64_t rows = g->n_dims >= 2 ? (uint64_t)g->ne[1] * (uint64_t)g->ne[2] : 1;
        gguf_w_tensor_cb(w, g->name, g->dtype, g->n_dims, ne, ember_row_bytes(g->dtype, g->ne[0]) * rows,
                         fill_rows, g);
    }
    rc = gguf_writer_save(w, o->out, err);
    if (sc.verbose) fputc('\n', stderr);
out:
    if (sc.scratch)
        for (int i = 0; i < sc.n_scratch; i++) free(sc.scratch[i]);
    free(sc.scratch);
    ember_pool_free(sc.pool);
    free(l.t);
    gguf_writer_free(w);
    return rc;
}
