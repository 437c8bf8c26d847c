/* SentencePiece (tokenizer.ggml.model = "llama"): spaces become U+2581,
   characters merge pairwise by the score of the joined piece (highest
   first, left-most on ties), leftovers fall back to <0xXX> byte tokens. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"

typedef struct {
    int prev, next;
    uint32_t off, n;
} sym;

typedef struct {
    const struct ember_tokenizer *t;
    const char *text;
    sym *syms;
    tok_heap heap;
} spm_state;

static int try_bigram(spm_state *s, int l, int r)
{
    if (l < 0 || r < 0) return 0;
    const sym *a = &s->syms[l], *b = &s->syms[r];
    /* Symbols are always adjacent in the text, so the pair is one span. */
    int32_t id = tok_map_get(&s->t->by_text, s->text + a->off, (size_t)a->n + b->n);
    if (id < 0) return 0;
    /* highest score first: the heap takes the lowest cost */
    tok_bigram g = {l, r, -(double)s->t->tok[id].score, a->n + b->n};
    return tok_heap_push(&s->heap, g);
}

int tok_spm_encode(const struct ember_tokenizer *t, const char *text, size_t len,
                   bool space_prefix, tok_out *out, ember_err *err)
{
    if (len == 0) return 0;
    /* Escaped copy: optional leading space, then every ' ' as U+2581. */
    size_t spaces = space_prefix ? 1 : 0;
    for (size_t i = 0; i < len; i++) spaces += text[i] == ' ';
    size_t elen = len + (space_prefix ? 1 : 0) + spaces * 2;
    char *e = malloc(elen + 1);
    sym *syms = malloc((elen + 1) * sizeof *syms);
    if (!e || !syms) {
        free(e);
        free(syms);
        return ember_seterr(err, "tokenizer: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < len + (space_prefix ? 1 : 0); i++) {
        char c = space_prefix ? (i == 0 ? ' ' : text[i - 1]) : text[i];
        if (c == ' ') {
            memcpy(e + k, "\xE2\x96\x81", 3);
            k += 3;
        } else {
            e[k++] = c;
        }
    }
    spm_state s = {t, e, syms, {NULL, 0, 0}};
    int n = 0;
    for (size_t off = 0; off < k; n++) {
        size_t l = (size_t)tok_utf8_len((unsigned char)e[off]);
        if (l > k - off) l = k - off;
        syms[n] = (sym){n - 1, -1, (uint32_t)off, (uint32_t)l};
        if (n > 0) syms[n - 1].next = n;
        off += l;
    }
    int rc = 0;
    for (int i = 0; i + 1 < n && rc == 0; i++) rc = try_bigram(&s, i, i + 1);
    while (rc == 0 && s.heap.n > 0) {
        tok_bigram g = tok_heap_pop(&s.heap);
        sym *a = &syms[g.left], *b = &syms[g.right];
        if (a->n == 0 || b->n == 0 || a->n + b->n != g.size) continue;
        a->n += b->n;
        b->n = 0;
        a->next = b->next;
        if (b->next >= 0) syms[b->next].prev = g.left;
        rc = try_bigram(&s, a->prev, g.left);
        if (rc == 0) rc = try_bigram(&s, g.left, a->next);
    }
    /* A merged symbol is always a vocabulary piece; only unmerged single
       characters can miss the vocabulary and go out as bytes. */
    for (int i = 0; rc == 0 && n > 0 && i >= 0; i = syms[i].next) {
        int32_t id = tok_map_get(&t->by_text, e + syms[i].off, syms[i].n);
        if (id >= 0) {
            tok_out_push(out, id);
            continue;
        }
        for (uint32_t j = 0; j < syms[i].n; j++) {
            int32_t b = t->byte_tok[(unsigned char)e[syms[i].off + j]];
            if (b < 0) b = t->unk;
            if (b >= 0) tok_out_push(out, b);
        }
    }
    if (rc) ember_seterr(err, "tokenizer: out of memory");
    free(s.heap.v);
    free(syms);
    free(e);
    return rc;
}
