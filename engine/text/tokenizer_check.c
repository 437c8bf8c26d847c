/* Whether a file's vocabulary agrees with its model: the tokenizer's token
   count against the embedding rows, duplicate token texts, merges naming
   tokens the vocabulary lacks.  What would let an id read past the
   embedding is an error; what the reference accepts and real downloads
   contain (padded embeddings, duplicate texts, dead merges) is one line of
   warning each, for inspect and the plan. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ember.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"

int ember_tok_check(const ember_tokenizer *t, int n_rows, char *warnings, size_t cap, ember_err *err)
{
    if (t->n_vocab > n_rows)
        return ember_seterr(err, "the tokenizer has %d tokens but token_embd.weight only %d rows "
                            "(ids from %d would read past the embedding)", t->n_vocab, n_rows, n_rows);
    if (t->pre_unknown[0]) {
        ember_warn_add(warnings, cap, "pre-tokenizer '%.40s' is not one Ember knows: GPT-2's pattern splits the text, "
                 "so some texts may tokenize differently from the model's own tokenizer", t->pre_unknown);
    }
    if (t->n_vocab < n_rows) {
        ember_warn_add(warnings, cap, "token_embd.weight has %d rows, the tokenizer %d tokens: ids from %d have no text",
                 n_rows, t->n_vocab, t->n_vocab);
    }
    /* the map keeps the lowest id of a text: any other id with it is a duplicate */
    int dups = 0, first = -1;
    for (int i = 0; i < t->n_vocab; i++) {
        const tok_entry *e = &t->tok[i];
        if (e->len && tok_map_get(&t->by_text, e->text, e->len) != i && dups++ == 0) first = i;
    }
    if (dups) {
        ember_warn_add(warnings, cap, "%d token%s repeat%s an earlier token's text (first: id %d '%.40s'); the lowest id is used",
                 dups, dups == 1 ? "" : "s", dups == 1 ? "s" : "", first, t->tok[first].text);
    }
    int dead = 0;
    char example[96] = "";
    for (uint32_t i = 0; t->merges.slots && i <= t->merges.mask; i++) {
        const tok_slot *s = &t->merges.slots[i];
        if (!s->off) continue;
        const char *m = t->merges.base + s->off - 1, *sp = memchr(m, ' ', s->len);
        if (!sp) continue;
        size_t l = (size_t)(sp - m), r = s->len - l - 1;
        char joined[512];
        bool whole = l + r < sizeof joined;
        if (whole) {
            memcpy(joined, m, l);
            memcpy(joined + l, sp + 1, r);
        }
        if (tok_map_get(&t->by_text, m, l) < 0 || tok_map_get(&t->by_text, sp + 1, r) < 0 ||
            (whole && tok_map_get(&t->by_text, joined, l + r) < 0)) {
            if (dead++ == 0) snprintf(example, sizeof example, "%.*s", s->len < 60 ? (int)s->len : 60, m);
        }
    }
    if (dead) {
        ember_warn_add(warnings, cap, "%d merge%s name%s tokens missing from the vocabulary (first: '%s'); they never apply",
                 dead, dead == 1 ? "" : "s", dead == 1 ? "s" : "", example);
    }
    return 0;
}

int ember_vocab_check(const char *path, char *warnings, size_t cap, ember_err *err)
{
    if (cap) warnings[0] = 0;
    gguf_file *f = gguf_open(path, err);
    if (!f) return -1;
    const gguf_tensor *emb = gguf_find_tensor(f, "token_embd.weight");
    int rc = 0;
    gguf_str arch;
    char key[96];
    int64_t vs;
    if (emb && emb->n_dims == 2 && gguf_get_str(f, "general.architecture", &arch) && arch.len < 64) {
        snprintf(key, sizeof key, "%.*s.vocab_size", (int)arch.len, arch.ptr);
        if (gguf_get_i64(f, key, &vs) && vs != emb->ne[1])
            rc = ember_seterr(err, "%s %lld differs from token_embd.weight's %lld rows", key, (long long)vs,
                              (long long)emb->ne[1]);
    }
    if (!rc && gguf_find(f, "tokenizer.ggml.tokens") && emb && emb->n_dims == 2 && emb->ne[1] <= INT32_MAX) {
        ember_tokenizer *t = ember_tokenizer_load(f, err);
        rc = !t ? -1 : ember_tok_check(t, (int)emb->ne[1], warnings, cap, err);
        ember_tokenizer_free(t);
    }
    gguf_close(f);
    return rc;
}
