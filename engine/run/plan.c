/* The weight strategy's plan: per tensor, the representation the profile's
   strategy asks for and the CPU allows (eager f32, the file's compressed
   rows, or a packed layout from the kernel table), the kernel that runs it,
   its resident bytes and why; the names and defaults of the strategy's
   options.  This is what `ember inspect --plan` prints.  Packing itself
   happens later, at the phase the profile names (lifecycle.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "plan.h"

static const char *const strategy_names[] = {"eager", "compressed", "packed"};
static const char *const proj_names[EMBER_PROJ_NAMES] = {"q", "k", "v", "o", "gate", "up", "down", "output",
                                                           "per_layer"};
static const char *const rep_names[] = {"eager-f32", "compressed", "packed"};

const char *ember_strategy_name(ember_strategy s)
{
    return (unsigned)s < 3 ? strategy_names[s] : "?";
}

int ember_strategy_from_name(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, strategy_names[i])) return i;
    return -1;
}

const char *ember_proj_name(int i) { return (unsigned)i < EMBER_PROJ_NAMES ? proj_names[i] : "?"; }

int ember_proj_from_name(const char *name)
{
    for (int i = 0; i < EMBER_PROJ_NAMES; i++)
        if (!strcmp(name, proj_names[i])) return 1 << i;
    return 0;
}

const char *ember_rep_name(ember_rep r) { return (unsigned)r < 3 ? rep_names[r] : "?"; }

void ember_plan_opts_default(ember_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = EMBER_STRATEGY_COMPRESSED;
    o->projections = EMBER_PROJ_Q | EMBER_PROJ_K | EMBER_PROJ_V | EMBER_PROJ_O |
                     EMBER_PROJ_GATE | EMBER_PROJ_UP;
    o->pack_when = EMBER_PACK_BEFORE_PREFILL;
    o->evict_source = true;
    o->reevict_after_prefill = true;
    o->allow_fallback = true;
}

const ember_plan *ember_model_plan(const ember_model *m) { return &m->plan; }

int ember_plan_add(ember_model *m, const gguf_tensor *t, ember_rep rep, const char *kernel,
                   const char *isa, uint64_t bytes, const char *reason)
{
    ember_plan *p = &m->plan;
    ember_plan_entry *e = realloc(p->e, (size_t)(p->n + 1) * sizeof *e);
    if (!e) return -1;
    p->e = e;
    e = &p->e[p->n];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", t->name_z);
    e->dtype = t->type;
    e->ne[0] = t->ne[0];
    e->ne[1] = t->ne[1];
    e->n_mats = t->n_dims == 3 ? t->ne[2] : 1;
    e->rep = rep;
    snprintf(e->kernel, sizeof e->kernel, "%s", kernel ? kernel : "");
    snprintf(e->isa, sizeof e->isa, "%s", isa ? isa : "");
    e->resident_bytes = bytes;
    e->token_bytes = bytes;
    e->token_mats = 1;
    snprintf(e->reason, sizeof e->reason, "%s", reason ? reason : "");
    p->bytes_by_rep[rep] += bytes;
    return p->n++;
}

static int make_eager(ember_weight *w, ember_err *err)
{
    const ember_kernel *k = ember_kernel_find(EMBER_F32, ember_cpu_isa());
    if (!k) return ember_seterr(err, "no F32 kernel available");
    size_t n = (size_t)w->in * (size_t)w->out;
    w->f32 = malloc(n * sizeof(float));
    if (!w->f32) return ember_seterr(err, "%s: out of memory for %zu MiB of f32 weights", w->t->name_z, n * 4 >> 20);
    for (int64_t r = 0; r < w->out; r++)
        if (ember_dequantize_row(w->dtype, w->data + (size_t)r * w->row_bytes, w->f32 + (size_t)r * (size_t)w->in, w->in))
            return ember_seterr(err, "%s: dtype %s cannot be dequantized", w->t->name_z, ember_dtype_name(w->dtype));
    w->rep = EMBER_REP_EAGER_F32;
    w->kern = k;
    return 0;
}

/* Why a projection the packed strategy names is not packed, or "" when it
   will be: w->pack_kern is then the kernel of its layout. */
static void choose_pack(ember_model *m, ember_weight *w, char *reason, size_t cap)
{
    const ember_plan_opts *o = &m->opts;
    int L = ember_layout_exists(w->dtype);
    const char *env = getenv("EMBER_LLAMA_PACKED_Q8");
    m->plan.packable += L;
    if (!(o->projections & (unsigned)w->proj))
        snprintf(reason, cap, "projection '%s' not selected for packing", ember_proj_name(__builtin_ctz((unsigned)w->proj)));
    else if (!L)
        snprintf(reason, cap, "no packed layout for %s (packed: Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4)", ember_dtype_name(w->dtype));
    else if (env && !strcmp(env, "0"))
        snprintf(reason, cap, "EMBER_LLAMA_PACKED_Q8=0 disables packing");
    else if (!ember_kernel_packed(w->dtype, m->isa))
        snprintf(reason, cap, "no packed %s kernel on this CPU (Q8_0 and Q4_K need AVX2 or AVX-512, Q4_0, Q5_0, Q5_K, Q6_K, IQ4_XS and MXFP4 AVX-512)", ember_dtype_name(w->dtype));
    else if (!(w->pack_kern = ember_kernel_packed_for_matrix(w->dtype, m->isa, w->out, w->t == m->tok_embd.t)))
        snprintf(reason, cap, "%s tiles keep the 8-row order, which this matrix does not run (%lld rows%s)",
                 ember_dtype_name(w->dtype), (long long)w->out, w->t == m->tok_embd.t ? ", the embedding table" : "");
}

/* The representation of n matrices of one tensor, alike: a dense weight
   (n 1) or an MoE tensor's expert slabs, which share one record of the
   plan (prefixed "N experts", what a token reads being n_used of them). */
static int plan_slabs(ember_model *m, ember_weight *ws, int n, bool heads, ember_err *err)
{
    const ember_plan_opts *o = &m->opts;
    ember_weight *w0 = &ws[0];
    char why[160] = "";
    bool eager = o->strategy == EMBER_STRATEGY_EAGER;
    const ember_kernel *k = NULL;
    if (!eager && !(k = ember_kernel_for_matrix(w0->dtype, m->isa, w0->out, w0->t == m->tok_embd.t))) {
        if (!o->allow_fallback)
            return ember_seterr(err, "%s: dtype %s has no kernel; eager fallback disabled by the profile (allow_fallback: false)",
                                w0->t->name_z, ember_dtype_name(w0->dtype));
        snprintf(why, sizeof why, "dtype %s has no native kernel: eager fallback", ember_dtype_name(w0->dtype));
        eager = true;
    }
    for (int i = 0; i < n; i++) {
        ember_weight *w = &ws[i];
        if (eager) {
            if (make_eager(w, err)) return -1;
            w->one = w->many = (ember_wview){w->kern, w->f32, (size_t)w->in * sizeof(float)};
        } else {
            w->kern = k;
            w->rep = EMBER_REP_COMPRESSED;
            w->one = w->many = (ember_wview){k, w->data, w->row_bytes};
        }
    }
    if (!eager && o->strategy == EMBER_STRATEGY_PACKED && w0->proj) {
        choose_pack(m, w0, why, sizeof why);
        for (int i = 1; i < n; i++) ws[i].pack_kern = w0->pack_kern;
    } else if (!eager && o->strategy == EMBER_STRATEGY_PACKED && !why[0]) {
        /* an MoE router, a delta-net's beta and alpha: a few rows each */
        snprintf(why, sizeof why, "not a layer projection (a router or a per-head gate): not packed");
    }
    if (w0->pack_kern && o->pack_when != EMBER_PACK_AT_LOAD) snprintf(why, sizeof why, "packed at the phase the profile sets");
    const ember_kernel *kr = w0->pack_kern ? w0->pack_kern : w0->kern;
    /* the slabs of one tensor, or (legacy Mixtral) one tensor each */
    uint64_t file_bytes = w0->t->nbytes;
    for (int i = 1; i < n; i++)
        if (ws[i].t != ws[i - 1].t) file_bytes += ws[i].t->nbytes;
    const uint64_t bytes = eager ? (uint64_t)w0->in * (uint64_t)w0->out * 4 * (uint64_t)n
                           : w0->pack_kern ? kr->layout->bytes((int)w0->out, w0->in) * (uint64_t)n
                                           : file_bytes;
    const ember_rep rep = eager ? EMBER_REP_EAGER_F32 : w0->pack_kern ? EMBER_REP_PACKED : EMBER_REP_COMPRESSED;
    char reason[160];
    if (n > 1) snprintf(reason, sizeof reason, "%d %s%s%.130s", n, heads ? "heads" : "experts", why[0] ? "; " : "", why);
    else snprintf(reason, sizeof reason, "%s", why);
    if (w0->pack_kern) m->plan.packed++;
    const int idx = ember_plan_add(m, w0->t, rep, kr->name, ember_isa_name(kr->isa), bytes, reason);
    if (idx < 0) return ember_seterr(err, "out of memory");
    for (int i = 0; i < n; i++) ws[i].plan_index = idx;
    if (n > 1 && !heads) {
        m->plan.e[idx].token_bytes = bytes / (uint64_t)n * (uint64_t)m->info.n_expert_used;
        m->plan.e[idx].token_mats = m->info.n_expert_used;
    }
    return 0;
}

int ember_plan_weight(ember_model *m, ember_weight *w, ember_err *err)
{
    return plan_slabs(m, w, 1, false, err);
}

int ember_plan_experts(ember_model *m, ember_weight *ws, int n, ember_err *err)
{
    return plan_slabs(m, ws, n, false, err);
}

int ember_plan_heads(ember_model *m, ember_weight *ws, int n, ember_err *err)
{
    return plan_slabs(m, ws, n, true, err);
}

int ember_plan_finish(ember_model *m, ember_err *err)
{
    const ember_model_info *I = &m->info;
    bool tied = m->output.t == m->tok_embd.t;
    if (m->output.rep == EMBER_REP_EAGER_F32 && tied) {
        m->tok_embd.f32 = m->output.f32;   /* one f32 table serves both */
        m->tok_embd.rep = EMBER_REP_EAGER_F32;
    } else if (m->opts.strategy == EMBER_STRATEGY_EAGER) {
        if (make_eager(&m->tok_embd, err)) return -1;
    } else {
        /* rows read from the file per lookup; without this the plan
           showed the zeroed rep (eager-f32) and 4 bytes a weight */
        m->tok_embd.rep = EMBER_REP_COMPRESSED;
    }
    if (!tied)
        ember_plan_add(m, m->tok_embd.t, m->tok_embd.rep, "", "",
                 m->tok_embd.rep == EMBER_REP_EAGER_F32 ? (uint64_t)I->n_embd * I->n_vocab * 4 : m->tok_embd.t->nbytes,
                 m->tok_embd.rep == EMBER_REP_EAGER_F32 ? "" : "embedding rows dequantized per lookup");
    /* Small tensors (norms, biases, rope factors) live as f32. */
    for (uint64_t i = 0; i < m->f->n_tensors; i++) {
        const gguf_tensor *t = &m->f->tensors[i];
        if (t->n_dims == 1)
            ember_plan_add(m, t, EMBER_REP_EAGER_F32, "", "", (uint64_t)t->ne[0] * 4, "");
    }
    return 0;
}
