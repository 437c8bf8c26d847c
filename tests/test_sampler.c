/* Sampler: greedy ties, seeded determinism, the support of top-k / top-p /
   min-p, repetition penalty, temperature frequencies, the run hash. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler.h"
#include "tap.h"

static ember_sampler_opts opts(float temp, int top_k, float top_p, float min_p, uint64_t seed)
{
    ember_sampler_opts o;
    ember_sampler_opts_default(&o);
    o.temperature = temp;
    o.top_k = top_k;
    o.top_p = top_p;
    o.min_p = min_p;
    o.repeat_penalty = 1.0f;
    o.seed = seed;
    return o;
}

/* Draws `n` samples from fresh copies of `base`; counts[id]++. */
static void draw(ember_sampler *s, const float *base, int nv, int n, int *counts)
{
    float *l = malloc((size_t)nv * sizeof *l);
    for (int i = 0; i < n; i++) {
        memcpy(l, base, (size_t)nv * sizeof *l);
        int32_t t = ember_sampler_sample(s, l);
        if (t >= 0 && t < nv) counts[t]++;
    }
    free(l);
}

static void test_hash(void)
{
    tap_ok(ember_hash_tokens(NULL, 0) == 0xcbf29ce484222325ull, "hash of no ids is the FNV offset basis");
    int32_t a[] = {0}, b[] = {1, 2, 128000}, c[] = {-1};
    tap_ok(ember_hash_tokens(a, 1) == 0x4d25767f9dce13f5ull, "hash of {0}");
    tap_ok(ember_hash_tokens(b, 3) == 0x4a5abd4c3a4388abull, "hash of {1,2,128000}");
    tap_ok(ember_hash_tokens(c, 1) == 0x994f76653e2a3951ull, "hash of {-1} uses the u32 bytes");
}

static void test_greedy(void)
{
    float l[8] = {0, 1, 2, 5, 1, 5, -3, 5};
    ember_sampler_opts o = opts(0.0f, 0, 1.0f, 0.0f, 1);
    ember_sampler *s = ember_sampler_new(&o, 8);
    tap_ok(ember_sampler_sample(s, l) == 3, "greedy picks the lowest id among exact ties");
    ember_sampler_free(s);
    float l2[8] = {0, 1, 2, 5, 1, 5, -3, 5};
    o = opts(1.5f, 1, 1.0f, 0.0f, 1);
    s = ember_sampler_new(&o, 8);
    tap_ok(ember_sampler_sample(s, l2) == 3, "top_k 1 is greedy");
    ember_sampler_free(s);
    float l3[4] = {NAN, 1, NAN, 0};
    o = opts(0.0f, 0, 1.0f, 0.0f, 1);
    s = ember_sampler_new(&o, 4);
    tap_ok(ember_sampler_sample(s, l3) == 1, "NaN logits never win");
    ember_sampler_free(s);
}

static void test_penalty(void)
{
    ember_sampler_opts o = opts(0.0f, 0, 1.0f, 0.0f, 1);
    o.repeat_penalty = 1.5f;
    o.repeat_last_n = 4;
    ember_sampler *s = ember_sampler_new(&o, 4);
    float l[4] = {2.0f, 1.9f, -1.0f, -2.0f};
    ember_sampler_accept(s, 0);
    ember_sampler_accept(s, 0);
    tap_ok(ember_sampler_sample(s, l) == 1, "repetition penalty demotes a recent token");
    tap_ok(fabsf(l[0] - 2.0f / 1.5f) < 1e-6f, "penalty divides a positive logit once per distinct token (%g)", l[0]);
    /* 1 was just sampled and recorded: now it is penalised too. */
    float l2[4] = {-1.0f, 1.9f, -1.2f, -2.0f};
    ember_sampler_accept(s, 2);
    ember_sampler_sample(s, l2);
    tap_ok(fabsf(l2[2] + 1.8f) < 1e-6f, "penalty multiplies a negative logit (%g)", l2[2]);
    /* Window of 4: after four other tokens, 0 is no longer penalised. */
    for (int i = 0; i < 4; i++) ember_sampler_accept(s, 3);
    float l3[4] = {2.0f, 1.9f, 0, 0};
    tap_ok(ember_sampler_sample(s, l3) == 0, "the penalty only looks at the last repeat_last_n tokens");
    ember_sampler_free(s);
}

static void test_determinism(void)
{
    enum { NV = 1000, N = 300 };
    float *base = malloc(NV * sizeof *base), *l = malloc(NV * sizeof *l);
    for (int i = 0; i < NV; i++) base[i] = (float)((i * 7919) % 1000) / 250.0f;
    int32_t a[N], b[N], c[N];
    for (int run = 0; run < 3; run++) {
        ember_sampler_opts o = opts(0.9f, 50, 0.95f, 0.01f, run == 2 ? 43 : 42);
        ember_sampler *s = ember_sampler_new(&o, NV);
        int32_t *dst = run == 0 ? a : run == 1 ? b : c;
        for (int i = 0; i < N; i++) {
            memcpy(l, base, NV * sizeof *l);
            dst[i] = ember_sampler_sample(s, l);
        }
        ember_sampler_free(s);
    }
    tap_ok(!memcmp(a, b, sizeof a), "same seed, same sequence");
    tap_ok(memcmp(a, c, sizeof a) != 0, "another seed, another sequence");
    ember_sampler_opts o = opts(0.9f, 50, 0.95f, 0.01f, 42);
    ember_sampler *s = ember_sampler_new(&o, NV);
    for (int i = 0; i < 10; i++) {
        memcpy(l, base, NV * sizeof *l);
        ember_sampler_sample(s, l);
    }
    ember_sampler_reset(s, 42);
    bool same = true;
    for (int i = 0; i < N; i++) {
        memcpy(l, base, NV * sizeof *l);
        same &= ember_sampler_sample(s, l) == a[i];
    }
    tap_ok(same, "reset(seed) restarts the sequence");
    ember_sampler_free(s);
    free(base);
    free(l);
}

static void test_support(void)
{
    /* probabilities 0.5, 0.3, 0.15, 0.05 */
    float base[4] = {logf(0.5f), logf(0.3f), logf(0.15f), logf(0.05f)};
    int cnt[4];
    ember_sampler_opts o;
    ember_sampler *s;

    memset(cnt, 0, sizeof cnt);
    o = opts(1.0f, 2, 1.0f, 0.0f, 7);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 4000, cnt);
    ember_sampler_free(s);
    tap_ok(cnt[0] > 0 && cnt[1] > 0 && cnt[2] == 0 && cnt[3] == 0, "top-k 2 keeps exactly the two best (%d %d %d %d)",
           cnt[0], cnt[1], cnt[2], cnt[3]);
    tap_ok(fabs(cnt[0] / 4000.0 - 0.625) < 0.03, "top-k renormalises (p0 %.3f, want 0.625)", cnt[0] / 4000.0);

    memset(cnt, 0, sizeof cnt);
    o = opts(1.0f, 0, 0.7f, 0.0f, 7);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 4000, cnt);
    ember_sampler_free(s);
    tap_ok(cnt[0] > 0 && cnt[1] > 0 && cnt[2] == 0 && cnt[3] == 0, "top-p 0.7 keeps {0,1} (%d %d %d %d)", cnt[0],
           cnt[1], cnt[2], cnt[3]);

    memset(cnt, 0, sizeof cnt);
    o = opts(1.0f, 0, 0.85f, 0.0f, 7);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 4000, cnt);
    ember_sampler_free(s);
    tap_ok(cnt[2] > 0 && cnt[3] == 0, "top-p 0.85 keeps {0,1,2} (%d %d %d %d)", cnt[0], cnt[1], cnt[2], cnt[3]);

    memset(cnt, 0, sizeof cnt);
    o = opts(1.0f, 0, 1.0f, 0.2f, 7);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 4000, cnt);
    ember_sampler_free(s);
    tap_ok(cnt[2] > 0 && cnt[3] == 0, "min-p 0.2 drops p < 0.1 (%d %d %d %d)", cnt[0], cnt[1], cnt[2], cnt[3]);

    memset(cnt, 0, sizeof cnt);
    o = opts(1.0f, 0, 1.0f, 0.0f, 7);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 20000, cnt);
    ember_sampler_free(s);
    bool close = true;
    const double p[4] = {0.5, 0.3, 0.15, 0.05};
    for (int i = 0; i < 4; i++) close &= fabs(cnt[i] / 20000.0 - p[i]) < 0.015;
    tap_ok(close, "plain sampling follows softmax (%d %d %d %d)", cnt[0], cnt[1], cnt[2], cnt[3]);

    /* Temperature 0.5 squares the odds: 0.25:0.09:... */
    memset(cnt, 0, sizeof cnt);
    o = opts(0.5f, 0, 1.0f, 0.0f, 9);
    s = ember_sampler_new(&o, 4);
    draw(s, base, 4, 20000, cnt);
    ember_sampler_free(s);
    double z = 0.25 + 0.09 + 0.0225 + 0.0025;
    tap_ok(fabs(cnt[0] / 20000.0 - 0.25 / z) < 0.015, "temperature 0.5 sharpens (p0 %.3f, want %.3f)", cnt[0] / 20000.0,
           0.25 / z);
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x > y ? -1 : x < y;
}

/* A 151936-token vocabulary with a flat tail: top-p without top-k has a
   nucleus of tens of thousands of tokens and must still cut exactly. */
static void test_large(void)
{
    enum { NV = 151936, N = 100 };
    float *base = malloc(NV * sizeof *base), *sorted = malloc(NV * sizeof *sorted);
    uint64_t x = 12345;
    for (int i = 0; i < NV; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        base[i] = (float)((x >> 33) % 100000) / 20000.0f; /* 0 .. 5: a flat-ish tail */
    }
    memcpy(sorted, base, NV * sizeof *sorted);
    qsort(sorted, NV, sizeof *sorted, cmp_desc);
    double zsum = 0;
    for (int i = 0; i < NV; i++) zsum += exp((double)sorted[i] - sorted[0]);
    double cum = 0;
    float thresh = sorted[0];
    for (int i = 0; i < NV; i++) {
        cum += exp((double)sorted[i] - sorted[0]);
        thresh = sorted[i];
        if (cum >= 0.5 * zsum) break;
    }
    int cnt_out = 0;
    ember_sampler_opts o = opts(1.0f, 0, 0.5f, 0.0f, 3);
    ember_sampler *s = ember_sampler_new(&o, NV);
    float *l = malloc(NV * sizeof *l);
    clock_t t0 = clock();
    for (int i = 0; i < N; i++) {
        memcpy(l, base, NV * sizeof *l);
        int32_t t = ember_sampler_sample(s, l);
        if (base[t] < thresh) cnt_out++;
    }
    double ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC / N;
    ember_sampler_free(s);
    tap_ok(cnt_out == 0, "top-p 0.5 on 151936 tokens stays inside the nucleus (%d outside)", cnt_out);
    tap_diag("top-p 0.5, 151936 vocab: %.3f ms per token", ms);

    o = opts(0.8f, 40, 0.9f, 0.05f, 3);
    s = ember_sampler_new(&o, NV);
    float kth = sorted[39];
    cnt_out = 0;
    t0 = clock();
    for (int i = 0; i < N; i++) {
        memcpy(l, base, NV * sizeof *l);
        int32_t t = ember_sampler_sample(s, l);
        if (base[t] < kth) cnt_out++;
    }
    ms = (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC / N;
    ember_sampler_free(s);
    tap_ok(cnt_out == 0, "top-k 40 on 151936 tokens stays in the best 40 (%d outside)", cnt_out);
    tap_diag("top-k 40 + top-p 0.9 + min-p 0.05, 151936 vocab: %.3f ms per token", ms);
    free(l);
    free(base);
    free(sorted);
}


/* Random small vocabularies against a brute-force nucleus (ranked by
   logit, then id): nothing outside it is drawn, and every member likely
   enough to show up does. */
static void test_nucleus_random(void)
{
    enum { NV = 30, DRAWS = 4000 };
    uint64_t x = 99;
    int bad_out = 0, missing = 0;
    for (int round = 0; round < 20; round++) {
        float base[NV];
        int rank[NV];
        for (int i = 0; i < NV; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            base[i] = (float)((x >> 33) % 4000) / 1000.0f; /* ties happen */
            rank[i] = i;
        }
        for (int i = 1; i < NV; i++) /* insertion sort: logit desc, id asc */
            for (int j = i; j > 0 && (base[rank[j]] > base[rank[j - 1]] ||
                                      (base[rank[j]] == base[rank[j - 1]] && rank[j] < rank[j - 1])); j--) {
                int t = rank[j];
                rank[j] = rank[j - 1];
                rank[j - 1] = t;
            }
        float p = 0.3f + 0.03f * (float)round;
        double z = 0, cum = 0;
        for (int i = 0; i < NV; i++) z += exp((double)base[i]);
        bool in[NV] = {false};
        for (int k = 0; k < NV;) {
            cum += exp((double)base[rank[k]]);
            in[rank[k++]] = true;
            if (cum >= p * z) break;
        }
        int cnt[NV] = {0};
        ember_sampler_opts o = opts(1.0f, 0, p, 0.0f, (uint64_t)round);
        ember_sampler *s = ember_sampler_new(&o, NV);
        draw(s, base, NV, DRAWS, cnt);
        ember_sampler_free(s);
        for (int i = 0; i < NV; i++) {
            if (!in[i] && cnt[i]) bad_out++;
            if (in[i] && exp((double)base[i]) / cum > 0.01 && !cnt[i]) missing++;
        }
    }
    tap_ok(bad_out == 0 && missing == 0, "top-p matches a brute-force nucleus on 20 random vocabularies (%d outside, %d missing)",
           bad_out, missing);
}

int main(void)
{
    test_nucleus_random();
    test_hash();
    test_greedy();
    test_penalty();
    test_determinism();
    test_support();
    test_large();
    tap_ok(ember_sampler_new(NULL, 0) == NULL, "a sampler needs a vocabulary");
    return tap_done();
}
