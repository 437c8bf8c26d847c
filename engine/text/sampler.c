/* Token sampling.  Order of the chain: repetition penalty, then greedy
   (temperature <= 0 or top_k == 1) or temperature -> min-p -> top-k ->
   top-p -> a draw from the renormalised survivors.  min-p is relative to
   the best token, so it commutes with top-k; top-p is measured on what
   top-k and min-p left.  Nothing sorts the whole vocabulary: top-k keeps a
   k-sized heap, top-p is a mass-tracking quickselect. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"

typedef struct {
    float l;
    int32_t id;
    double w; /* exp(l - max), filled once the set is small or needed */
} cand;

struct ember_sampler {
    ember_sampler_opts o;
    int n_vocab;
    uint64_t rng[4];
    int32_t *hist;      /* ring of the last repeat_last_n tokens */
    int hist_cap, hist_n, hist_pos;
    uint8_t *seen;
    cand *c;
};

void ember_sampler_opts_default(ember_sampler_opts *o)
{
    o->temperature = 0.7f;
    o->top_k = 40;
    o->top_p = 0.9f;
    o->min_p = 0.05f;
    o->repeat_penalty = 1.0f;
    o->repeat_last_n = 64;
    o->seed = 0;
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

void ember_sampler_reset(ember_sampler *s, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) s->rng[i] = splitmix64(&x);
    s->hist_n = s->hist_pos = 0;
}

ember_sampler *ember_sampler_new(const ember_sampler_opts *o, int n_vocab)
{
    if (n_vocab <= 0) return NULL;
    ember_sampler *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (o) s->o = *o;
    else ember_sampler_opts_default(&s->o);
    s->n_vocab = n_vocab;
    s->hist_cap = s->o.repeat_last_n > 0 ? s->o.repeat_last_n : 0;
    if (s->hist_cap > (1 << 20)) s->hist_cap = 1 << 20;
    s->hist = malloc((size_t)(s->hist_cap ? s->hist_cap : 1) * sizeof *s->hist);
    s->seen = calloc((size_t)n_vocab, 1);
    s->c = malloc((size_t)n_vocab * sizeof *s->c);
    if (!s->hist || !s->seen || !s->c) {
        ember_sampler_free(s);
        return NULL;
    }
    ember_sampler_reset(s, s->o.seed);
    return s;
}

void ember_sampler_free(ember_sampler *s)
{
    if (!s) return;
    free(s->hist);
    free(s->seen);
    free(s->c);
    free(s);
}

void ember_sampler_accept(ember_sampler *s, int32_t token)
{
    if (!s || token < 0 || token >= s->n_vocab || s->hist_cap == 0) return;
    s->hist[s->hist_pos] = token;
    s->hist_pos = (s->hist_pos + 1) % s->hist_cap;
    if (s->hist_n < s->hist_cap) s->hist_n++;
}

static void apply_penalty(ember_sampler *s, float *logits)
{
    float p = s->o.repeat_penalty;
    if (!(p > 0.0f) || p == 1.0f || s->hist_n == 0) return;
    /* Once per distinct token, however often it occurred. */
    for (int i = 0; i < s->hist_n; i++) {
        int32_t id = s->hist[i];
        if (s->seen[id]) continue;
        s->seen[id] = 1;
        logits[id] = logits[id] > 0.0f ? logits[id] / p : logits[id] * p;
    }
    for (int i = 0; i < s->hist_n; i++) s->seen[s->hist[i]] = 0;
}

/* a ranks before b: higher logit, then lower id (a total order, so the
   result never depends on the scan order). */
static inline int better(const cand *a, const cand *b)
{
    return a->l > b->l || (a->l == b->l && a->id < b->id);
}

static void sift_down_min(cand *h, int n, int i)
{
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && better(&h[c], &h[c + 1])) c++; /* the worse child */
        if (!better(&h[i], &h[c])) return;
        cand t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

static int cmp_cand(const void *a, const void *b)
{
    return better(a, b) ? -1 : better(b, a) ? 1 : 0;
}

/* Moves the k best of c[0..n) to the front, sorted best first. */
static void select_top(cand *c, int n, int k)
{
    if (k >= n) {
        qsort(c, (size_t)n, sizeof *c, cmp_cand);
        return;
    }
    for (int i = k / 2 - 1; i >= 0; i--) sift_down_min(c, k, i);
    for (int i = k; i < n; i++) {
        if (better(&c[i], &c[0])) {
            cand t = c[0];
            c[0] = c[i];
            c[i] = t;
            sift_down_min(c, k, 0);
        }
    }
    qsort(c, (size_t)k, sizeof *c, cmp_cand);
}

static void swap_cand(cand *a, cand *b)
{
    cand t = *a;
    *a = *b;
    *b = t;
}

/* Top-p without sorting: a quickselect that partitions by rank and tracks
   the mass of the better side, so it finds the smallest best-ranked set
   whose mass reaches target in expected O(n).  Leaves that set (in no
   particular but deterministic order) in c[0..k) and returns k >= 1. */
static int nucleus(cand *c, int n, double target)
{
    int lo = 0, hi = n;
    double acc = 0; /* mass of c[0..lo), all better than c[lo..n) */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, last = hi - 1;
        /* median of three as the pivot, parked at c[last] */
        if (better(&c[mid], &c[lo])) swap_cand(&c[mid], &c[lo]);
        if (better(&c[last], &c[lo])) swap_cand(&c[last], &c[lo]);
        if (better(&c[mid], &c[last])) swap_cand(&c[mid], &c[last]);
        int store = lo;
        double mb = 0;
        for (int i = lo; i < last; i++) {
            if (better(&c[i], &c[last])) {
                swap_cand(&c[i], &c[store]);
                mb += c[store].w;
                store++;
            }
        }
        swap_cand(&c[store], &c[last]);
        if (acc + mb >= target && store > lo) {
            hi = store;
            continue;
        }
        acc += mb;
        if (acc + c[store].w >= target) return store + 1;
        acc += c[store].w;
        lo = store + 1;
    }
    return lo > 0 ? lo : 1;
}

static int32_t argmax(const float *l, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (l[i] > l[best]) best = i; /* strict: the lowest id wins ties */
    return best;
}

int32_t ember_sampler_sample(ember_sampler *s, float *logits)
{
    int n = s->n_vocab;
    for (int i = 0; i < n; i++)
        if (logits[i] != logits[i]) logits[i] = -INFINITY;
    apply_penalty(s, logits);
    int32_t tok;
    if (!(s->o.temperature > 0.0f) || s->o.top_k == 1) {
        tok = argmax(logits, n);
        goto out;
    }
    float inv_t = 1.0f / s->o.temperature;
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = logits[i] > m ? logits[i] : m;
    if (m == -INFINITY || isinf(m * inv_t)) {
        tok = argmax(logits, n);
        goto out;
    }
    m *= inv_t;
    /* temperature + min-p in one pass; the best token always survives. */
    float floor_l = s->o.min_p > 0.0f ? m + logf(s->o.min_p < 1.0f ? s->o.min_p : 1.0f) : -INFINITY;
    cand *c = s->c;
    int nc = 0;
    for (int i = 0; i < n; i++) {
        float l = logits[i] * inv_t;
        if (l == -INFINITY || l < floor_l) continue;
        c[nc].l = l;
        c[nc].id = i;
        nc++;
    }
    if (s->o.top_k > 0 && s->o.top_k < nc) {
        select_top(c, nc, s->o.top_k);
        nc = s->o.top_k;
    }
    double z = 0;
    for (int i = 0; i < nc; i++) z += c[i].w = exp((double)(c[i].l - m));
    if (s->o.top_p < 1.0f) {
        double p = s->o.top_p > 0.0f ? s->o.top_p : 0.0;
        nc = nucleus(c, nc, p * z);
        z = 0;
        for (int i = 0; i < nc; i++) z += c[i].w;
    }
    double u = rng_uniform(s->rng) * z, acc = 0;
    tok = c[nc - 1].id;
    for (int i = 0; i < nc; i++) {
        acc += c[i].w;
        if (u < acc) {
            tok = c[i].id;
            break;
        }
    }
out:
    ember_sampler_accept(s, tok);
    return tok;
}

uint64_t ember_hash_tokens(const int32_t *ids, int n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++) {
        uint32_t v = (uint32_t)ids[i];
        for (int b = 0; b < 4; b++) {
            h ^= (v >> (8 * b)) & 0xFF;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}
