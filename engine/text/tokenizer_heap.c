/* The bigram queue both merging tokenizers run on: a binary min-heap of
   adjacent symbol pairs.  BPE ranks pairs by merge rank (lowest first),
   SentencePiece by piece score (highest first); both break ties by the
   left-most pair, so one order serves: smaller cost, then smaller left. */
#include "config.h"

#include <stdlib.h>

#include "tokenizer_impl.h"

static bool before(const tok_bigram *a, const tok_bigram *b)
{
    return a->cost < b->cost || (a->cost == b->cost && a->left < b->left);
}

int tok_heap_push(tok_heap *h, tok_bigram g)
{
    if (h->n == h->cap) {
        int nc = h->cap ? h->cap * 2 : 64;
        tok_bigram *v = realloc(h->v, (size_t)nc * sizeof *v);
        if (!v) return -1;
        h->v = v;
        h->cap = nc;
    }
    int i = h->n++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!before(&g, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = g;
    return 0;
}

tok_bigram tok_heap_pop(tok_heap *h)
{
    tok_bigram top = h->v[0], last = h->v[--h->n];
    int i = 0, n = h->n;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&h->v[c + 1], &h->v[c])) c++;
        if (!before(&h->v[c], &last)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (n > 0) h->v[i] = last;
    return top;
}
