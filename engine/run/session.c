/* Sessions: KV cache and workspace allocated once, prefill in batches,
   decode one token at a time, phase timing; at each phase boundary the
   weight strategy's lifecycle (lifecycle.c) packs, evicts and takes its
   snapshots. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "recurrent.h"
#include "dtype.h"
#include "kv.h"
#include "lifecycle.h"
#include "pagecache.h"

static void *zalloc(size_t n, bool *ok)
{
    void *p = calloc(1, n ? n : 1);
    if (!p) *ok = false;
    return p;
}

/* Memory a session writes, zeroed and resident from the start, on 2 MiB
   pages where the kernel gives them (pagecache.h).  The KV cache and the
   attention scratch grow with the context: left lazy, decode would take a
   page fault every few tokens (8 per token for a 1B Llama's KV cache), so
   like llama.cpp's cleared KV buffer the whole context is resident, on huge
   pages since a prompt pass writes a row of every KV head per position and
   attention walks each head's rows.  The working buffers too: left lazy, a
   fresh process's first prompt faulted them in a page at a time, and on the
   2-vCPU VMs a first touch of a 4 KiB page costs 11-17 us (the host backs
   the page too): ~5000 faults inside the matrix products of the first
   128-token gemma-4-e2b prefill.  Resident from the start they add 8 MiB
   (llama-3.2-1b) to 24 MiB (gemma-4-e2b) while the prompts stay short; a
   prompt of one whole pass (128 tokens) touches them all anyway. */
static void *resident(size_t n, bool *ok)
{
    void *p = ember_alloc_huge(n);
    if (p) memset(p, 0, n);
    else *ok = false;
    return p;
}

/* Whether a matrix of m runs a BF16 kernel (whose activations are
   EMBER_ACT_BF16R rows), not an f32 copy of its values (eager) */
static bool runs_bf16(const ember_model *m)
{
    for (int i = 0; i < m->plan.n; i++) {
        const ember_plan_entry *e = &m->plan.e[i];
        if (e->dtype == EMBER_BF16 && e->kernel[0] && e->rep != EMBER_REP_EAGER_F32) return true;
    }
    return false;
}

/* What executes: a packed plan that packs nothing (no packed kernel on
   this CPU, no Q8_0 projection) runs the compressed kernels. */
static ember_strategy running_strategy(const ember_model *m)
{
    return m->opts.strategy == EMBER_STRATEGY_PACKED && m->plan.packed == 0 ? EMBER_STRATEGY_COMPRESSED
                                                                            : m->opts.strategy;
}

ember_session *ember_session_new(ember_model *m, const ember_session_opts *o, ember_err *err)
{
    const ember_model_info *I = &m->info;
    ember_session *s = calloc(1, sizeof *s);
    if (!s) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    s->m = m;
    int n_ctx = o && o->n_ctx > 0 ? o->n_ctx : (I->n_ctx_train < 4096 ? I->n_ctx_train : 4096);
    if (n_ctx > I->n_ctx_train) n_ctx = I->n_ctx_train;
    s->n_ctx = n_ctx;
    int threads = o && o->threads > 0 ? o->threads : m->opts.threads;
    s->pool = ember_pool_new(threads);
    const size_t hdm = (size_t)m->max_head_dim, kv_dim = (size_t)m->max_head_kv * hdm, F = (size_t)m->max_ff;
    s->ubatch = ember_ubatch(o ? o->ubatch : 0);
    size_t B = (size_t)s->ubatch, E = (size_t)I->n_embd, HQ = (size_t)I->n_head * hdm;
    bool ok = s->pool != NULL;
    /* the KV layout (session.h, kv.c): sliding layers in a ring where it
       is smaller than the context */
    s->kv_type = m->opts.kv_cache;
    s->ring = ember_kv_ring(m, n_ctx, s->ubatch);
    s->kv_off = zalloc((size_t)I->n_layer * sizeof *s->kv_off, &ok);
    s->kv_cap = zalloc((size_t)I->n_layer * sizeof *s->kv_cap, &ok);
    s->ring_pos = zalloc((size_t)(s->ring ? s->ring : 1) * sizeof *s->ring_pos, &ok);
    size_t kvn = 0;   /* bytes of K (and of V) */
    for (int l = 0; ok && l < I->n_layer; l++) {
        const ember_layer *L = &m->layers[l];
        s->kv_cap[l] = ember_kv_cap(m, l, s->ring, n_ctx);
        s->kv_off[l] = kvn;
        kvn += (size_t)L->n_head_kv * (size_t)s->kv_cap[l] * ember_kv_row_bytes(s->kv_type, L->head_dim);
    }
    for (int i = 0; ok && i < s->ring; i++) s->ring_pos[i] = -1;
    size_t maxk = HQ > E ? HQ : E;
    if (F > maxk) maxk = F;
    const ember_dn_shape *dn = &m->dn;
    if ((size_t)dn->value_dim > maxk) maxk = (size_t)dn->value_dim;   /* ssm_out's input */
    if ((size_t)m->m2.d_inner > maxk) maxk = (size_t)m->m2.d_inner;   /* Mamba-2's ssm_out's input */
    if ((size_t)m->mla.q_lora > maxk) maxk = (size_t)m->mla.q_lora;   /* attn_q_b's input */
    s->kcache = resident(kvn, &ok);
    /* latent attention reads its V from the K rows (mla.c): no V cache */
    if (!(m->arch->flags & ARCH_MLA)) s->vcache = resident(kvn, &ok);
    s->x = resident(B * E * 4, &ok);
    s->xn = resident(B * (E > HQ ? E : HQ) * 4, &ok);
    s->q = resident(B * HQ * 4, &ok);
    s->k = resident(B * kv_dim * 4, &ok);
    s->v = resident(B * kv_dim * 4, &ok);
    s->att = resident(B * HQ * 4, &ok);
    if (m->parallel) s->par = resident(B * E * 4, &ok);
    /* rows of the FFN's activations: a pass's tokens, or one token's
       experts (forward.c, moe_one_token), whichever is more */
    size_t BF = (size_t)I->n_expert_used > B ? (size_t)I->n_expert_used : B;
    /* one token's latent attention heads, quantized together (mla.c) */
    if (m->arch->flags & ARCH_MLA && (size_t)I->n_head > BF) BF = (size_t)I->n_head;
    s->g = resident(BF * F * 4, &ok);
    s->u = resident(BF * F * 4, &ok);
    /* a fused product's rows before the split: Q/K/V, gate+up, or gated
       attention's queries and gates, as wide as the widest of them */
    size_t fw = 0;
    if (m->arch->flags & (ARCH_FUSED_QKV | ARCH_FUSED_GATE_UP)) fw = HQ + 2 * kv_dim > 2 * F ? HQ + 2 * kv_dim : 2 * F;
    if (m->arch->flags & ARCH_GATED_ATTN && 2 * HQ > fw) fw = 2 * HQ;
    size_t fused = B * fw;
    for (int l = 0; l < I->n_layer; l++)   /* experts' gate and up in one slab: a pass's or a token's rows */
        if (m->layers[l].moe && m->layers[l].moe->gate_up && BF * 2 * (size_t)m->layers[l].n_ff > fused)
            fused = BF * 2 * (size_t)m->layers[l].n_ff;
    if (fused) s->fused = resident(fused * 4, &ok);
    if (m->arch->flags & ARCH_GATED_ATTN) s->qgate = resident(B * HQ * 4, &ok);
    if (m->sc_lcache) {   /* short convolutions (shortconv.c) */
        s->sc_bcx = resident(B * 3 * E * 4, &ok);
        s->sc_bx = resident(B * E * 4, &ok);
        s->sc_y = resident(B * E * 4, &ok);
    }
    if (m->m2.n_layers) {   /* Mamba-2 layers (mamba2.c) */
        const ember_m2_shape *d = &m->m2;
        s->m2_in = resident(B * (size_t)d->in_dim * 4, &ok);
        s->m2_xbc = resident(B * (size_t)d->conv_dim * 4, &ok);
        s->m2_conv = resident(B * (size_t)d->conv_dim * 4, &ok);
        s->m2_y = resident(B * (size_t)d->d_inner * 4, &ok);
        s->m2_dt = resident(B * (size_t)d->n_head * 4, &ok);
        s->m2_da = resident(B * (size_t)d->n_head * 4, &ok);
        if (m->arch->flags & ARCH_PARALLEL_SSM) s->m2_side = resident(B * E * 4, &ok);
    }
    if (m->arch->flags & ARCH_MLA) {
        const ember_mla_shape *d = &m->mla;
        const size_t nh = (size_t)I->n_head, lat = (size_t)d->kv_lora;
        const size_t hx = (size_t)d->nope > lat ? (size_t)d->nope : lat, hy = (size_t)d->v > lat ? (size_t)d->v : lat;
        s->mla_q = resident(B * nh * (size_t)(d->nope + d->rope) * 4, &ok);
        if (d->q_lora) s->mla_qa = resident(B * (size_t)d->q_lora * 4, &ok);
        s->mla_kv = resident(B * (lat + (size_t)d->rope) * 4, &ok);
        s->mla_hx = resident(B * nh * hx * 4, &ok);
        s->mla_hy = resident(B * nh * hy * 4, &ok);
        s->mla_o = resident(B * nh * (size_t)d->v * 4, &ok);
    }
    if (ember_rec_state_bytes(m)) {
        const size_t sb = ember_rec_state_bytes(m);
        s->rec_state = resident(sb, &ok);
        for (int i = 0; i < EMBER_REC_CKPTS; i++) {
            s->rec_ck[i] = zalloc(sb, &ok);   /* written before read: left lazy */
            s->rec_ck_pos[i] = -1;
        }
    }
    if (dn->n_layers) {
        s->dn_qkv = resident(B * (size_t)dn->conv_dim * 4, &ok);
        s->dn_conv = resident(B * (size_t)dn->conv_dim * 4, &ok);
        s->dn_z = resident(B * (size_t)dn->value_dim * 4, &ok);
        s->dn_o = resident(B * (size_t)dn->value_dim * 4, &ok);
        s->dn_b = resident(B * (size_t)dn->n_v * 4, &ok);
        s->dn_a = resident(B * (size_t)dn->n_v * 4, &ok);
        if (dn->fused_in) s->dn_in = resident(B * (size_t)(dn->conv_dim + dn->value_dim) * 4, &ok);
        if (dn->fused_ba) s->dn_ba = resident(B * 2 * (size_t)dn->n_v * 4, &ok);
    }
    if (I->n_expert) {
        const size_t NE = (size_t)I->n_expert, K = (size_t)I->n_expert_used;
        s->moe_logits = resident(B * NE * 4, &ok);
        s->moe_w = resident(B * K * 4, &ok);
        s->moe_sel = resident(B * K * sizeof(int), &ok);
        s->moe_pair = resident(B * K * sizeof(int), &ok);
        s->moe_place = resident(B * K * sizeof(int), &ok);
        s->moe_first = resident((NE + 1) * sizeof(int), &ok);
        s->moe_x = resident(B * E * 4, &ok);
        s->moe_out = resident(B * K * E * 4, &ok);
        s->moe_sh = resident(B * E * 4, &ok);
    }
    if (m->n_altup) {
        const size_t A = (size_t)m->n_altup;
        s->alt_s = resident(A * B * E * 4, &ok);
        s->alt_p = resident(A * B * E * 4, &ok);
        s->alt_lo = resident(B * E * 4, &ok);
        s->alt_lr = resident(B * (size_t)m->alt_rank * 4, &ok);
        s->alt_mod = resident(B * A * 4, &ok);
    }
    if (m->n_pl) {
        s->pl = resident(B * (size_t)m->n_pl * (size_t)I->n_layer * 4, &ok);
        s->plg = resident(B * (size_t)m->n_pl * 4, &ok);
        /* one per_layer_token_embd row per thread (forward.c, pl_tokens) */
        s->pl_row = resident((size_t)ember_pool_size(s->pool) * (size_t)m->n_pl * (size_t)I->n_layer * 4, &ok);
    }
    if (m->rope_long) s->rope_ff = n_ctx > m->n_ctx_orig ? m->rope_long : m->rope_short;
    for (int i = 0; i < EMBER_ROPE_TABLES; i++) {
        s->rope_tab[i].cs = resident(B * hdm / 2 * 4 + 4, &ok);
        s->rope_tab[i].sn = resident(B * hdm / 2 * 4 + 4, &ok);
    }
    s->logits = resident((size_t)I->n_vocab * 4, &ok);
    s->embd_row = resident(m->tok_embd.row_bytes, &ok);
    static const int act_types[EMBER_ACT_TYPES] = {EMBER_Q8_0, EMBER_Q8_K, EMBER_Q8_1, EMBER_ACT_Q8_0U, EMBER_ACT_BF16R};
    for (int i = 0; i < EMBER_ACT_TYPES; i++) {
        int64_t blk = act_types[i] == EMBER_Q8_K ? 256 : 32;
        s->act[i].type = act_types[i];
        /* BF16's rows are 4 bytes a value (4 MiB at 128 tokens of 8192):
           only for a model with a BF16 kernel */
        if (act_types[i] == EMBER_ACT_BF16R && !runs_bf16(m)) continue;
        s->act[i].buf = resident(BF * (ember_act_bytes(act_types[i], (int64_t)(maxk + blk - 1) / blk * blk) + 64), &ok);
    }
    /* per thread, for the q heads of one KV head: scores, lane
       accumulators, the queries as fp16, q8_0 or f32 (forward.c, att_run) */
    size_t group = 1;
    for (int l = 0; l < I->n_layer; l++)
        if (m->layers[l].n_head_kv && (size_t)(I->n_head / m->layers[l].n_head_kv) > group)   /* 0: no attention */
            group = (size_t)(I->n_head / m->layers[l].n_head_kv);
    /* a block of prompt tokens' scores, up to 4 MiB a thread */
    s->att_block = (int)((4u << 20) / (4 * group * ((size_t)n_ctx + 16)));
    if (s->att_block > ATT_BLOCK_MAX) s->att_block = ATT_BLOCK_MAX;
    if (s->att_block < 1) s->att_block = 1;
    if (o && o->att_block > 0 && o->att_block < s->att_block) s->att_block = o->att_block;
    const size_t blk = (size_t)s->att_block;
    s->scratch_stride = blk * group * ((size_t)n_ctx + 16) + group * 64 * hdm + blk * group * hdm + 16;
    s->scratch = resident((size_t)ember_pool_size(s->pool) * s->scratch_stride * 4, &ok);
    if (!ok) {
        ember_seterr(err, "out of memory for a %d-token context (KV cache %s %zu MiB)", n_ctx,
                     ember_kv_type_name(s->kv_type), kvn * 2 >> 20);
        ember_session_free(s);
        return NULL;
    }
    /* the recurrent state and its copies stand where a KV cache would */
    s->kv_bytes = (s->vcache ? 2 : 1) * kvn + ember_rec_session_bytes(m);
    s->st.strategy = running_strategy(m);
    s->st.n_ctx = n_ctx;
    if (ember_lifecycle(s, EMBER_AT_OPEN, err)) {
        ember_session_free(s);
        return NULL;
    }
    return s;
}

void ember_session_free(ember_session *s)
{
    if (!s) return;
    ember_pool_free(s->pool);
    free(s->kcache); free(s->vcache); free(s->embd_row); free(s->x); free(s->xn); free(s->q); free(s->k);
    free(s->v); free(s->att); free(s->par); free(s->g); free(s->u); free(s->logits); free(s->fused);
    free(s->kv_off); free(s->kv_cap); free(s->ring_pos); free(s->pl); free(s->plg); free(s->pl_row);
    for (int i = 0; i < EMBER_ROPE_TABLES; i++) free(s->rope_tab[i].cs), free(s->rope_tab[i].sn);
    for (int i = 0; i < EMBER_ACT_TYPES; i++) free(s->act[i].buf);
    free(s->scratch); free(s->all_logits);
    free(s->moe_logits); free(s->moe_w); free(s->moe_sel); free(s->moe_pair); free(s->moe_place); free(s->moe_first);
    free(s->moe_x); free(s->moe_out); free(s->moe_sh);
    free(s->alt_s); free(s->alt_p); free(s->alt_lo); free(s->alt_lr); free(s->alt_mod);
    free(s->dn_in); free(s->dn_ba);
    free(s->sc_bcx); free(s->sc_bx); free(s->sc_y);
    free(s->m2_in); free(s->m2_xbc); free(s->m2_conv); free(s->m2_y); free(s->m2_dt); free(s->m2_da); free(s->m2_side);
    free(s->mla_q); free(s->mla_qa); free(s->mla_kv); free(s->mla_hx); free(s->mla_hy); free(s->mla_o);
    free(s->rec_state); free(s->dn_qkv); free(s->dn_conv); free(s->dn_z); free(s->dn_o); free(s->dn_b); free(s->dn_a);
    for (int i = 0; i < EMBER_REC_CKPTS; i++) free(s->rec_ck[i]);
    free(s->qgate);
    free(s);
}

void ember_session_reset(ember_session *s)
{
    s->n_past = 0;
    for (int i = 0; i < s->ring; i++) s->ring_pos[i] = -1;
    ember_rec_reset(s);
}

void ember_session_truncate(ember_session *s, int n)
{
    if (n < 0 || n >= s->n_past) return;
    /* a recurrent state goes back only to a copy of it (deltanet.c) */
    if (s->rec_state && (n = ember_rec_rewind(s, n)) == 0) {
        ember_session_reset(s);
        return;
    }
    /* A ring keeps the last window of positions: the next token at n needs
       n - window + 1 .. n - 1, which later tokens may have overwritten.
       Then nothing is reusable and the cache starts over. */
    for (int p = n - s->m->n_swa + 1; s->ring && p < n; p++)
        if (p >= 0 && s->ring_pos[p % s->ring] != p) {
            ember_session_reset(s);
            return;
        }
    s->n_past = n;
}

int ember_session_n_past(const ember_session *s) { return s->n_past; }
int ember_session_n_ctx(const ember_session *s) { return s->n_ctx; }

void ember_session_set_cancel(ember_session *s, ember_cancel_fn fn, void *ud)
{
    s->cancel = fn;
    s->cancel_ud = ud;
}

int ember_prefill_pass(int n, int i, int ub)
{
    int nb = n - i < ub ? n - i : ub;
    /* no pass of one token in a batched prompt: some formats' kernels
       (IQ4_NL) take the reference's single-token order for one token, where
       the reference ran the whole prompt as one batch */
    if (n - i - nb == 1) nb--;
    return nb;
}

int ember_prefill(ember_session *s, const int32_t *tokens, int n, float *last_logits,
                  float *all_logits, ember_err *err)
{
    ember_model *m = s->m;
    if (n <= 0) return ember_seterr(err, "prefill of %d tokens", n);
    if (n > s->n_ctx - s->n_past)
        return ember_seterr(err, "context full: %d cached + %d new tokens exceed the %d-token context",
                            s->n_past, n, s->n_ctx);
    /* packing done here or by the caller just before (ember_session_pack)
       is in prepack_ms, counted in the TTFT */
    if (ember_session_pack(s, err)) return -1;
    double t1 = ember_now_ms();
    ember_rec_checkpoint(s);   /* where a regenerate of this prompt goes back to */
    s->batched = n >= 2;   /* the reference runs a prompt of 2+ tokens as one batch */
    const int V = m->info.n_vocab;
    for (int i = 0, nb; i < n; i += nb) {
        nb = ember_prefill_pass(n, i, s->ubatch);
        if (i > 0 && s->cancel && s->cancel(s->cancel_ud)) {
            ember_seterr(err, "prefill cancelled after %d of %d tokens", i, n);
            return EMBER_CANCELLED;
        }
        bool all = all_logits != NULL;
        if (all && !s->all_logits) {
            s->all_logits = malloc((size_t)s->ubatch * V * sizeof(float));
            if (!s->all_logits)
                return ember_seterr(err, "out of memory for logits");
        }
        if (all) {
            float *keep = s->logits;
            s->logits = s->all_logits;
            int rc = ember_forward(s, tokens + i, nb, nb, err);
            s->logits = keep;
            if (rc) return -1;
            memcpy(all_logits + (size_t)i * V, s->all_logits, (size_t)nb * V * sizeof(float));
            memcpy(s->logits, s->all_logits + (size_t)(nb - 1) * V, (size_t)V * sizeof(float));
        } else if (ember_forward(s, tokens + i, nb, i + nb == n, err)) {   /* logits of the last pass only */
            return -1;
        }
        s->n_past += nb;
    }
    if (last_logits) memcpy(last_logits, s->logits, (size_t)V * sizeof(float));
    ember_rec_checkpoint(s);
    double t2 = ember_now_ms();
    s->st.n_prompt = n;
    s->st.n_decoded = 0;
    s->st.decode_ms = 0;
    s->st.decode_tps = 0;
    s->st.prefill_ms = t2 - t1;
    s->st.ttft_ms = t2 - t1 + s->prepack_ms;
    s->prepack_ms = 0;
    s->st.prefill_tps = n / ((t2 - t1) / 1e3);
    if (ember_lifecycle(s, EMBER_AT_PREFILL_DONE, err)) return -1;
    s->prefilled_once = true;
    return 0;
}

int ember_decode(ember_session *s, int32_t token, float *logits, ember_err *err)
{
    ember_model *m = s->m;
    if (s->n_past >= s->n_ctx)
        return ember_seterr(err, "context full: all %d positions are used", s->n_ctx);
    if (ember_lifecycle(s, EMBER_AT_DECODE, err)) return -1;
    double t0 = ember_now_ms();
    s->batched = false;
    if (ember_forward(s, &token, 1, 1, err)) return -1;
    s->n_past++;
    if (logits) memcpy(logits, s->logits, (size_t)m->info.n_vocab * sizeof(float));
    s->st.decode_ms += ember_now_ms() - t0;
    s->st.n_decoded++;
    s->st.decode_tps = s->st.n_decoded / (s->st.decode_ms / 1e3);
    return 0;
}

void ember_stats_get(const ember_session *s, ember_stats *st)
{
    *st = s->st;
    const ember_model *m = s->m;
    st->n_past = s->n_past;
    st->n_ctx = s->n_ctx;
    st->kv_type = s->kv_type;
    st->kv_bytes = s->kv_bytes;
    st->strategy = running_strategy(m);
    ember_lifecycle_stats(s, st);
    ember_memstat_read(&st->mem);
}

/* Snapshot at the end of a generation (the caller says when decoding is done). */
void ember_session_mark_decode_done(ember_session *s)
{
    ember_lifecycle(s, EMBER_AT_DECODE_DONE, NULL);
    ember_rec_checkpoint(s);   /* the next turn starts from the reply */
}
