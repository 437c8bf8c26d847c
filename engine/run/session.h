/* Internal session state: KV cache, workspace, pool, phase stats. */
#ifndef EMBER_SESSION_H
#define EMBER_SESSION_H

#include "model.h"

/* prompt tokens per forward pass: 128 measured 1.07-1.09x the prefill of
   64 on a Zen 5 VM (the weights streamed once per 128 tokens), 256 no more */
#define EMBER_UBATCH 128
/* prompt tokens whose attention reads a KV head's rows in one pass */
#define ATT_BLOCK_MAX 8

/* One activation type's quantized rows, and the input and shape they were
   made from (reused by the next weight on the same input). */
typedef struct {
    int type;                   /* EMBER_Q8_0, EMBER_Q8_K or EMBER_Q8_1 */
    uint8_t *buf;
    const float *src;
    int k, nt;
} ember_act_cache;
#define EMBER_ACT_TYPES 5
#define EMBER_ROPE_TABLES 4    /* rotary settings cached per pass (a model has 1 or 2) */
/* copies of the recurrent state kept (recurrent.c): the ends of the last
   prefills and generations, where a chat's next turn or a regenerate
   goes back to */
#define EMBER_REC_CKPTS 3

struct ember_session {
    ember_model *m;
    ember_pool *pool;
    int n_ctx, n_past;
    /* [layer][kv head][rows] of head_dim values as kv_type rows (kv.h):
       a head's rows are one stream */
    uint8_t *kcache, *vcache;
    ember_kv_type kv_type;
    size_t kv_bytes;            /* K and V */
    size_t *kv_off;             /* per layer: the byte where its rows start in kcache / vcache */
    int *kv_cap;                /* per layer: rows per KV head (n_ctx, or 2 * ring) */
    int ubatch;                 /* prompt tokens per forward pass (ember_session_opts) */
    /* Sliding-window layers keep a ring of `ring` = window + ubatch
       slots, each row stored twice (at slot and slot + ring) so that any
       window reads as one contiguous run of rows (forward.c, kv_row). */
    int ring;                   /* 0: every layer keeps all n_ctx positions */
    int *ring_pos;              /* position each slot holds (-1: none) */
    const float *rope_ff;       /* LongRoPE divisors for this context (phi3), or NULL */
    /* RoPE's cos and sin of this forward pass's positions, one table per
       distinct rotary setting (forward.c, rope_table): every layer of that
       setting reads them instead of recomputing them */
    struct ember_rope_table {
        ember_rope_cfg cfg;     /* its ff: the divisors in force (cfg's or the session's) */
        int pos0, n;            /* n 0: empty */
        float *cs, *sn;         /* [token][n_rot / 2] */
    } rope_tab[EMBER_ROPE_TABLES];
    /* workspace, sized for ubatch tokens */
    float *x, *xn, *q, *k, *v, *att, *g, *u, *logits;
    float *par;   /* ARCH_PARALLEL: the attention branch's rows, added with the FFN's */
    float *fused;               /* output of a fused projection (qkv, gate+up) before the split */
    float *pl, *plg;            /* per-layer inputs [token][layer][n_pl] and their gated rows (gemma4) */
    float *pl_row;              /* one per_layer_token_embd row per pool thread */
    float *all_logits;          /* ubatch rows, only for eval */
    /* mixture of experts (forward.c, moe_ffn): router scores [token][expert];
       each token's chosen experts and weights [token][slot]; the (token,
       slot) pairs grouped by expert (moe_pair, moe_first[n_expert + 1])
       and each pair's place there (moe_place); an expert's gathered input
       rows; the experts' output rows in the grouped order */
    float *moe_logits, *moe_w, *moe_x, *moe_out;
    float *moe_sh;              /* the shared expert's output rows */
    /* ARCH_ALTUP (altup.c): the streams and their predictions (n_altup
       blocks of ubatch rows), laurel's output and low-rank rows, the
       router's modalities (n_altup a token) */
    float *alt_s, *alt_p, *alt_lo, *alt_lr, *alt_mod;
    int *moe_sel, *moe_pair, *moe_place, *moe_first;
    /* the recurrent layers' state (recurrent.h), and copies of it at
       rec_ck_pos (-1: empty) */
    float *rec_state, *rec_ck[EMBER_REC_CKPTS];
    int rec_ck_pos[EMBER_REC_CKPTS];
    /* delta-net layers (deltanet.c): a pass's projections, conv output and
       head outputs */
    float *dn_qkv, *dn_conv, *dn_z, *dn_b, *dn_a, *dn_o;
    float *dn_in, *dn_ba;       /* Qwen3-Next's fused products before they are taken apart */
    float *qgate;               /* ARCH_GATED_ATTN: the heads' output gates [token][HQ] */
    /* latent attention (mla.c): the queries' projection [token][n_head
       (nope + rope)], Q's low-rank rows [token][q_lora], the latent and
       rope rows [token][kv_lora + rope], per-head rows head-major
       [head][token][...] into and out of the per-head products, and the
       heads' values [token][n_head v] */
    float *mla_q, *mla_qa, *mla_kv, *mla_hx, *mla_hy, *mla_o;
    /* short convolutions (shortconv.c): in_proj's rows [token][3 n_embd],
       B * x, the gated output */
    float *sc_bcx, *sc_bx, *sc_y;
    /* Mamba-2 layers (mamba2.c): ssm_in's rows, the convolution's input
       and output rows, and y */
    float *m2_in, *m2_xbc, *m2_conv, *m2_y;
    float *m2_dt, *m2_da;       /* per token and head: the step and the decay */
    float *m2_side;             /* Falcon-H1: the Mamba-2 block's output beside attention */
    const float *side;          /* rows the residual add adds to a branch's output first (NULL: none) */
    ember_act_cache act[EMBER_ACT_TYPES];
    uint8_t *embd_row;          /* one embedding row read with pread (model.h, embd_released) */
    float *scratch;             /* per thread, for the q heads of one KV head: scores, lane sums, queries (fp16 or q8_0) */
    size_t scratch_stride;
    int att_block;              /* prompt tokens whose attention shares one pass over
                                   the keys (forward.c, att_run); the scratch holds
                                   that many tokens' scores */
    ember_stats st;
    bool prefilled_once;
    double prepack_ms;             /* ember_session_pack's time, counted in the next TTFT */
    bool batched;               /* this forward is part of a 2+ token prompt (refnum.h orders) */
    ember_cancel_fn cancel;
    void *cancel_ud;
};

/* Tokens in the prefill pass that starts at token i of an n-token prompt:
   at most ub, and never a pass of one token when n >= 2. */
int ember_prefill_pass(int n, int i, int ub);
/* Runs n (<= the session's ubatch) tokens at positions n_past.. ; writes the
   logits of the last `out` tokens (0, 1 or n) into s->logits.  With 0 (a
   prompt pass before the last) the pass only fills the KV cache. */
int ember_forward(ember_session *s, const int32_t *tok, int n, int out, ember_err *err);

#endif
