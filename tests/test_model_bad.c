/* Models that are wrong in the ways real downloads are: missing keys,
   inconsistent shapes, head counts that do not divide, an architecture we
   do not run.  Each must fail at open with a message that names the
   problem; a good one must run, and refuse out-of-range ids and context
   overflow without writing past anything. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "ember.h"
#include "gguf.h"
#include "session.h"
#include "tap.h"

enum { E = 64, H = 4, HKV = 2, HD = 16, FF = 128, V = 48 };

typedef struct {
    const char *arch;
    bool no_block_count, bad_heads, bad_q_shape, no_down, bad_rope_freqs, no_eps;
    int head_count_kv, experts;
    bool kv_array_short;         /* head_count_kv as a per-layer array of the wrong length */
    const char *rope_scaling;    /* rope.scaling.type, when given */
    bool extra_bias;             /* an attn_output.bias, which no graph of Ember's reads */
    /* qwen3moe (experts set): experts a token uses, and what is wrong with
       the expert tensors (1: no ffn_down_exps, 2: ffn_gate_exps 2-D, 3:
       ffn_up_exps with one expert too few) */
    int used, bad_exps;
    /* gpt-oss: 1 no attn_sinks, 2 no ffn_down_exps.bias, 3 an
       ffn_gate_exps.bias one expert short, 4 no sliding_window */
    int oss_bad;
    bool qk_norm;                /* attn_q_norm / attn_k_norm, per head (StableLM 2 12B's layout) */
} variant;

/* n experts of in x out in F32, one 3-D tensor ([in, out] when flat) */
static void mat3(gguf_writer *w, const char *name, int in, int out, int n, bool flat)
{
    const size_t cnt = (size_t)in * out * n;
    float *d = malloc(cnt * sizeof *d);
    for (size_t i = 0; i < cnt; i++) d[i] = (float)(i % 7) * 0.01f - 0.03f;
    int64_t ne[3] = {in, flat ? out * n : out, n};
    gguf_w_tensor(w, name, EMBER_F32, flat ? 2 : 3, ne, d, (uint64_t)cnt * 4);
    free(d);
}

static void vec(gguf_writer *w, const char *name, int n, float val)
{
    float *d = malloc((size_t)n * sizeof *d);
    for (int i = 0; i < n; i++) d[i] = val;
    int64_t ne[1] = {n};
    gguf_w_tensor(w, name, EMBER_F32, 1, ne, d, (uint64_t)n * 4);
    free(d);
}

static void mat(gguf_writer *w, const char *name, int in, int out, unsigned seed)
{
    float *d = malloc((size_t)in * out * sizeof *d);
    for (int i = 0; i < in * out; i++) {
        seed = seed * 1664525u + 1013904223u;
        d[i] = ((int)(seed >> 9 & 0xffff) - 32768) / 32768.0f * 0.1f;
    }
    int64_t ne[2] = {in, out};
    gguf_w_tensor(w, name, EMBER_F32, 2, ne, d, (uint64_t)in * out * 4);
    free(d);
}

static const char *write_model(const variant *v, const char *path)
{
    gguf_writer *w = gguf_writer_new();
    const char *a = v->arch ? v->arch : "llama";
    char k[96];
#define KEY(s) (snprintf(k, sizeof k, "%s." s, a), k)
    gguf_w_str(w, "general.architecture", a);
    if (!v->no_block_count) gguf_w_u32(w, KEY("block_count"), 1);
    gguf_w_u32(w, KEY("embedding_length"), E);
    gguf_w_u32(w, KEY("feed_forward_length"), FF);
    gguf_w_u32(w, KEY("attention.head_count"), v->bad_heads ? 3 : H);
    if (v->kv_array_short) {
        int32_t kv[2] = {HKV, HKV};
        gguf_w_arr(w, KEY("attention.head_count_kv"), GGUF_T_I32, kv, 2);
    } else {
        gguf_w_u32(w, KEY("attention.head_count_kv"), v->head_count_kv ? (uint32_t)v->head_count_kv : HKV);
    }
    const bool oss = !strcmp(a, "gpt-oss");
    const bool moe = !strcmp(a, "qwen3moe") || oss;
    if (v->experts) gguf_w_u32(w, KEY("expert_count"), (uint32_t)v->experts);
    if (oss && v->oss_bad != 4) gguf_w_u32(w, KEY("attention.sliding_window"), 4);
    if (moe) {
        gguf_w_u32(w, KEY("expert_used_count"), (uint32_t)v->used);
        gguf_w_u32(w, KEY("expert_feed_forward_length"), FF);
    }
    gguf_w_u32(w, KEY("context_length"), 256);
    if (!v->no_eps) gguf_w_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    if (!v->no_eps && !strcmp(a, "stablelm")) gguf_w_f32(w, KEY("attention.layer_norm_epsilon"), 1e-5f);
    gguf_w_f32(w, KEY("rope.freq_base"), 10000.0f);
    if (v->rope_scaling) gguf_w_str(w, KEY("rope.scaling.type"), v->rope_scaling);
#undef KEY
    mat(w, "token_embd.weight", E, V, 1);
    vec(w, "output_norm.weight", E, 1.0f);
    if (v->bad_rope_freqs) vec(w, "rope_freqs.weight", HD / 2, -1.0f);
    vec(w, "blk.0.attn_norm.weight", E, 1.0f);
    vec(w, oss ? "blk.0.post_attention_norm.weight" : "blk.0.ffn_norm.weight", E, 1.0f);
    mat(w, "blk.0.attn_q.weight", E, v->bad_q_shape ? H * HD + 16 : H * HD, 2);
    mat(w, "blk.0.attn_k.weight", E, HKV * HD, 3);
    mat(w, "blk.0.attn_v.weight", E, HKV * HD, 4);
    mat(w, "blk.0.attn_output.weight", H * HD, E, 5);
    if (oss) {
        const int X = v->experts ? v->experts : 4;
        vec(w, "blk.0.attn_q.bias", H * HD, 0.1f);
        vec(w, "blk.0.attn_k.bias", HKV * HD, 0.1f);
        vec(w, "blk.0.attn_v.bias", HKV * HD, 0.1f);
        vec(w, "blk.0.attn_output.bias", E, 0.1f);
        if (v->oss_bad != 1) vec(w, "blk.0.attn_sinks.weight", H, 0.5f);
        vec(w, "blk.0.ffn_gate_inp.bias", X, 0.0f);
        mat(w, "blk.0.ffn_gate_exps.bias", FF, v->oss_bad == 3 ? X - 1 : X, 10);
        mat(w, "blk.0.ffn_up_exps.bias", FF, X, 11);
        if (v->oss_bad != 2) mat(w, "blk.0.ffn_down_exps.bias", E, X, 12);
    }
    if (moe) {
        const int X = v->experts ? v->experts : 4;
        if (!oss) {
            vec(w, "blk.0.attn_q_norm.weight", HD, 1.0f);
            vec(w, "blk.0.attn_k_norm.weight", HD, 1.0f);
        }
        mat(w, "blk.0.ffn_gate_inp.weight", E, X, 9);
        mat3(w, "blk.0.ffn_gate_exps.weight", E, FF, X, v->bad_exps == 2);
        mat3(w, "blk.0.ffn_up_exps.weight", E, FF, v->bad_exps == 3 ? X - 1 : X, false);
        if (v->bad_exps != 1) mat3(w, "blk.0.ffn_down_exps.weight", FF, E, X, false);
    } else {
        mat(w, "blk.0.ffn_gate.weight", E, FF, 6);
        mat(w, "blk.0.ffn_up.weight", E, FF, 7);
        if (!v->no_down) mat(w, "blk.0.ffn_down.weight", FF, E, 8);
    }
    if (v->extra_bias) vec(w, "blk.0.attn_output.bias", E, 0.5f);
    if (v->qk_norm) {
        int64_t ne[2] = {HD, H};
        float q[HD * H];
        for (int i = 0; i < HD * H; i++) q[i] = 1.0f;
        gguf_w_tensor(w, "blk.0.attn_q_norm.weight", EMBER_F32, 2, ne, q, sizeof q);
        ne[1] = HKV;
        gguf_w_tensor(w, "blk.0.attn_k_norm.weight", EMBER_F32, 2, ne, q, (uint64_t)HD * HKV * 4);
    }
    ember_err err;
    int rc = gguf_writer_save(w, path, &err);
    gguf_writer_free(w);
    if (rc) tap_diag("writer: %s", err.msg);
    return rc ? NULL : path;
}

static void expect_open_error(const char *what, const variant *v, const char *needle, const char *path)
{
    ember_err err = {{0}};
    if (!write_model(v, path)) {
        tap_ok(0, "%s: model written", what);
        return;
    }
    ember_plan_opts po;
    ember_plan_opts_default(&po);
    ember_model *m = ember_model_open(path, &po, &err);
    tap_ok(!m && strstr(err.msg, needle) != NULL, "%s: open fails naming '%s' (%s)", what, needle, err.msg);
    ember_model_free(m);
}

static bool count_and_stop(void *ud)
{
    ++*(int *)ud;
    return true;
}

int main(void)
{
    char path[] = "/tmp/ember-badmodel-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) tap_skip_all("cannot create a temporary file");
    close(fd);

    variant ok = {0};
    tap_ok(write_model(&ok, path) != NULL, "a small valid model is written");
    for (int s = 0; s < 3; s++) {
        ember_plan_opts po;
        ember_plan_opts_default(&po);
        po.strategy = (ember_strategy)s;
        ember_err err = {{0}};
        ember_model *m = ember_model_open(path, &po, &err);
        tap_ok(m != NULL, "valid model opens (%s)%s%s", ember_strategy_name(po.strategy), m ? "" : ": ", m ? "" : err.msg);
        if (!m) continue;
        ember_session_opts so = {.n_ctx = 8, .threads = 1};
        ember_session *sess = ember_session_new(m, &so, &err);
        float *logits = malloc(V * sizeof *logits);
        int32_t toks[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        tap_ok(sess && ember_prefill(sess, toks, 4, logits, NULL, &err) == 0, "prefill 4 tokens");
        int32_t bad = V;
        tap_ok(ember_decode(sess, bad, logits, &err) != 0 && strstr(err.msg, "outside the vocabulary"),
               "an id past the vocabulary is refused (%s)", err.msg);
        tap_ok(ember_decode(sess, -1, logits, &err) != 0, "a negative id is refused");
        tap_ok(ember_prefill(sess, toks, 5, logits, NULL, &err) != 0 && strstr(err.msg, "context"),
               "prefill past the context is refused (%s)", err.msg);
        tap_ok(ember_session_n_past(sess) == 4, "a refused call leaves the cache as it was");
        for (int i = 0; i < 4; i++) ember_decode(sess, 1, logits, &err);
        tap_ok(ember_decode(sess, 1, logits, &err) != 0 && strstr(err.msg, "context full"),
               "decode past the context is refused (%s)", err.msg);
        ember_session_free(sess);

        /* a cancel function stops a long prefill between micro-batches */
        ember_session_opts so2 = {.n_ctx = 2 * EMBER_UBATCH + 100, .threads = 1};
        sess = ember_session_new(m, &so2, &err);
        int32_t many[EMBER_UBATCH + 22];
        for (int i = 0; i < EMBER_UBATCH + 22; i++) many[i] = 1 + i % (V - 1);
        int asked = 0;
        ember_session_set_cancel(sess, count_and_stop, &asked);
        int rc = sess ? ember_prefill(sess, many, EMBER_UBATCH + 22, logits, NULL, &err) : 0;
        tap_ok(rc == EMBER_CANCELLED && asked == 1 && sess &&
                   ember_session_n_past(sess) == EMBER_UBATCH,
               "cancel stops prefill after one micro-batch (rc %d, asked %d, n_past %d)", rc, asked,
               sess ? ember_session_n_past(sess) : -1);
        ember_session_set_cancel(sess, NULL, NULL);
        tap_ok(sess && ember_prefill(sess, many, 100, logits, NULL, &err) == 0 &&
                   ember_session_n_past(sess) == EMBER_UBATCH + 100,
               "without it the next prefill runs to the end");
        free(logits);
        ember_session_free(sess);
        ember_model_free(m);
    }

    variant v;
    v = (variant){.no_block_count = true};
    expect_open_error("missing block_count", &v, "block_count", path);
    v = (variant){.no_eps = true};
    expect_open_error("missing rms epsilon", &v, "layer_norm_rms_epsilon", path);
    v = (variant){.bad_heads = true};
    expect_open_error("head_count 3 with 2 KV heads", &v, "head_count", path);
    v = (variant){.head_count_kv = 3};
    expect_open_error("4 heads over 3 KV heads", &v, "multiple of head_count_kv", path);
    v = (variant){.bad_q_shape = true};
    expect_open_error("attn_q of the wrong shape", &v, "blk.0.attn_q.weight", path);
    v = (variant){.no_down = true};
    expect_open_error("ffn_down missing", &v, "blk.0.ffn_down.weight", path);
    v = (variant){.arch = "gpt2"};
    expect_open_error("an unsupported architecture", &v, "gpt2", path);
    /* ... and the list of the supported ones is whole: it ends with the
       table's last row (it was cut at 256 bytes) */
    expect_open_error("an unsupported architecture, every supported one named", &v, ", gemma4)", path);
    /* an architecture whose reference has no experts refuses them by name */
    v = (variant){.arch = "gemma3", .experts = 128};
    expect_open_error("a mixture-of-experts gemma3", &v, "mixture-of-experts", path);
    /* gemma4 runs experts (26B-A4B), its keys read strictly */
    v = (variant){.arch = "gemma4", .experts = 128};
    expect_open_error("a gemma4 with experts and no expert_used_count", &v, "gemma4.expert_used_count", path);
    /* a mixture of experts: its keys and 3-D tensors read strictly */
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 2};
    {
        ember_err e = {{0}};
        ember_model *m = write_model(&v, path) ? ember_model_open(path, NULL, &e) : NULL;
        ember_session_opts so = {.n_ctx = 8, .threads = 2};
        ember_session *sess = m ? ember_session_new(m, &so, &e) : NULL;
        float lg[V];
        int32_t toks[3] = {1, 2, 3};
        tap_ok(sess && ember_prefill(sess, toks, 3, lg, NULL, &e) == 0 && ember_decode(sess, 4, lg, &e) == 0,
               "a qwen3moe of 4 experts, 2 a token, opens and runs%s%s", e.msg[0] ? ": " : "", e.msg);
        ember_session_free(sess);
        ember_model_free(m);
    }
    v = (variant){.arch = "qwen3moe", .used = 2};
    expect_open_error("qwen3moe without expert_count", &v, "qwen3moe.expert_count", path);
    /* gpt-oss: what its graph reads beyond qwen3moe's is required by name */
    v = (variant){.arch = "gpt-oss", .experts = 4, .used = 2};
    {
        ember_err e = {{0}};
        ember_model *m = write_model(&v, path) ? ember_model_open(path, NULL, &e) : NULL;
        ember_session_opts so = {.n_ctx = 8, .threads = 2};
        ember_session *s = m ? ember_session_new(m, &so, &e) : NULL;
        int32_t ids[3] = {1, 2, 3};
        float lg[V];
        tap_ok(s && ember_prefill(s, ids, 3, lg, NULL, &e) == 0 && isfinite(lg[0]),
               "a gpt-oss of 4 experts, 2 a token, opens and runs%s%s", e.msg[0] ? ": " : "", e.msg);
        ember_session_free(s);
        ember_model_free(m);
    }
    v.oss_bad = 1;
    expect_open_error("gpt-oss without attn_sinks", &v, "blk.0.attn_sinks.weight", path);
    v.oss_bad = 2;
    expect_open_error("gpt-oss without ffn_down_exps.bias", &v, "blk.0.ffn_down_exps.bias", path);
    v.oss_bad = 3;
    expect_open_error("gpt-oss with an ffn_gate_exps.bias one expert short", &v, "blk.0.ffn_gate_exps.bias' has shape", path);
    v.oss_bad = 4;
    expect_open_error("gpt-oss without a sliding window", &v, "gpt-oss.attention.sliding_window", path);
    /* stablelm: the 12B's per-head Q/K LayerNorm is refused by name, not ignored */
    v = (variant){.arch = "stablelm"};
    {
        ember_err e = {{0}};
        ember_model *m = write_model(&v, path) ? ember_model_open(path, NULL, &e) : NULL;
        tap_ok(m != NULL, "a stablelm with ffn_norm and no norm biases opens%s%s", e.msg[0] ? ": " : "", e.msg);
        ember_model_free(m);
    }
    v.qk_norm = true;
    expect_open_error("stablelm with per-head Q/K norms", &v, "per-head Q/K LayerNorm", path);
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 0};
    expect_open_error("qwen3moe with 0 experts a token", &v, "expert_used_count", path);
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 5};
    expect_open_error("qwen3moe with 5 of 4 experts a token", &v, "expert_used_count", path);
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 2, .bad_exps = 1};
    expect_open_error("qwen3moe without ffn_down_exps", &v, "blk.0.ffn_down_exps.weight", path);
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 2, .bad_exps = 2};
    expect_open_error("qwen3moe with a 2-D ffn_gate_exps", &v, "blk.0.ffn_gate_exps.weight' has shape", path);
    v = (variant){.arch = "qwen3moe", .experts = 4, .used = 2, .bad_exps = 3};
    expect_open_error("qwen3moe with 3 of 4 experts in ffn_up_exps", &v, "blk.0.ffn_up_exps.weight' has shape", path);
    v = (variant){.kv_array_short = true};
    expect_open_error("per-layer head_count_kv of 2 for 1 layer", &v, "one per layer", path);
    v = (variant){.bad_rope_freqs = true};
    expect_open_error("negative rope frequency factors", &v, "rope_freqs", path);
    v = (variant){.arch = "gemma3"};
    expect_open_error("gemma3 without its sliding window", &v, "gemma3.attention.sliding_window", path);
    v = (variant){.rope_scaling = "llama3"};
    expect_open_error("a rope scaling type the reference does not know", &v, "rope.scaling.type = 'llama3'", path);

    /* a tensor the graph does not read: the model opens, and says so */
    {
        v = (variant){.extra_bias = true};
        ember_err e = {{0}};
        ember_model *m = write_model(&v, path) ? ember_model_open(path, NULL, &e) : NULL;
        const char *wn = m ? ember_model_warnings(m) : "";
        tap_ok(m && strstr(wn, "1 tensor of the file is not read by Ember's llama graph (the first: "
                               "blk.0.attn_output.bias)"),
               "an attn_output.bias no graph reads: a warning naming it (%s%s)", m ? wn : "open failed: ", e.msg);
        ember_model_free(m);
        m = write_model(&ok, path) ? ember_model_open(path, NULL, &e) : NULL;
        tap_ok(m && !strstr(ember_model_warnings(m), "not read by"), "... and none for a file it reads whole");
        ember_model_free(m);
    }

    ember_err err = {{0}};
    ember_model_info info;
    tap_ok(ember_model_peek("/nonexistent/model.gguf", &info, &err) != 0 && strstr(err.msg, "/nonexistent"),
           "a missing file is an error naming it (%s)", err.msg);
    unlink(path);
    return tap_done();
}
