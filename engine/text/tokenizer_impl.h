/* Private to the tokenizer modules (tokenizer.c, tokenizer_bpe.c,
   tokenizer_spm.c, tokenizer_heap.c): the vocabulary, string hash tables and the scratch
   output buffer they share. */
#ifndef EMBER_TOKENIZER_IMPL_H
#define EMBER_TOKENIZER_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "format/gguf.h"
#include "err.h"

/* GGUF token_type values (tokenizer.ggml.token_type). */
enum {
    TOK_NORMAL = 1, TOK_UNKNOWN = 2, TOK_CONTROL = 3,
    TOK_USER = 4, TOK_UNUSED = 5, TOK_BYTE = 6,
};

typedef enum { TOK_KIND_BPE, TOK_KIND_SPM } tok_kind;

/* The longest pre-tokenizer chain (DeepSeek LLM's has six patterns). */
enum { TOK_MAX_RE = 6 };

/* Open-addressing map from byte strings to int32 values.  Keys live in
   one arena (the tokenizer's) and are stored as offsets: 16 bytes a slot
   keeps Llama 3's 280k merges at ~8 MB. */
typedef struct {
    uint32_t off;       /* key offset from base + 1; 0: empty slot */
    uint32_t len;
    uint32_t hash;      /* compared before the bytes */
    int32_t val;
} tok_slot;

typedef struct {
    tok_slot *slots;
    const char *base;
    uint32_t mask;      /* capacity - 1, capacity a power of two */
    uint32_t n;
} tok_map;

/* Keys put later must lie within [base, base + 4 GiB). */
int tok_map_init(tok_map *m, size_t expected, const char *base);
void tok_map_free(tok_map *m);
/* Keeps the first value stored for a key (duplicates in a vocabulary
   resolve to the lowest id, as the reference does). */
void tok_map_put(tok_map *m, const char *key, uint32_t len, int32_t val);
int32_t tok_map_get(const tok_map *m, const char *key, size_t len); /* -1 if absent */

typedef struct {
    const char *text;   /* into the arena, NUL-terminated */
    uint32_t len;
    float score;
    uint8_t type;
    bool rstrip;        /* whitespace after the token is dropped (tokenizer_attr.c) */
} tok_entry;

struct pcre2_real_code_8;

struct ember_tokenizer {
    tok_kind kind;
    int n_vocab;
    tok_entry *tok;
    char *arena;                 /* all token and merge strings */
    tok_map by_text;
    tok_map merges;              /* "left right" -> rank (BPE) */
    struct pcre2_real_code_8 *re[TOK_MAX_RE]; /* pre-tokenizer chain (BPE): each splits the pieces of the one before */
    int n_re;
    bool ignore_merges;          /* llama-bpe: whole-word vocab hits skip merging */
    bool spm_pieces;             /* BPE over the raw text with SentencePiece's pieces (Gemma 4):
                                    spaces as U+2581, <0xXX> byte tokens, runs of newlines split off */
    char pre_unknown[48];        /* BPE: tokenizer.ggml.pre when Ember does not know it (GPT-2's pattern runs), else "" */
    bool add_space_prefix;       /* SPM */
    bool add_bos;
    int32_t bos, eos, eot, unk;
    int32_t byte_tok[256];       /* SPM <0xXX> tokens, -1 when absent */
    int32_t *special;            /* control/user/unknown ids, longest text first */
    int n_special;
    /* control/unknown tokens for ember_tok_find_control: the bytes they
       start with and their distinct lengths, longest first (more than
       fit: ctl_slow, every special is searched) */
    bool ctl_first[256];
    uint32_t ctl_lens[32];
    int n_ctl_lens;
    bool ctl_slow;
    int32_t *eog;
    int n_eog;
    int max_piece;               /* longest decoded piece, bytes */
};

/* Growable id output: counts every id, stores the first cap. */
typedef struct {
    int32_t *ids;
    int cap;
    int n;
} tok_out;

static inline void tok_out_push(tok_out *o, int32_t id)
{
    if (o->n < o->cap) o->ids[o->n] = id;
    o->n++;
}

/* Byte length of the UTF-8 sequence announced by a lead byte (1 for
   continuation or invalid bytes, as the reference's splitter does). */
static inline int tok_utf8_len(unsigned char c)
{
    static const uint8_t lut[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lut[c >> 4];
}


/* A candidate merge of adjacent symbols left and right (tokenizer_heap.c).
   cost orders the queue, lowest first: the BPE merge rank, or the negated
   SentencePiece score (a double holds both exactly, so the order and the
   ties are the ones each algorithm defines).  size is the pair's byte
   length when queued: a pair whose symbols changed since is stale. */
typedef struct {
    int left, right;
    double cost;
    uint32_t size;
} tok_bigram;

typedef struct {
    tok_bigram *v;
    int n, cap;
} tok_heap;

int tok_heap_push(tok_heap *h, tok_bigram g);   /* -1 when out of memory */
tok_bigram tok_heap_pop(tok_heap *h);          /* h->n must be > 0 */

/* tokenizer_attr.c: attributes the file does not store (marker tokens
   made control, Phi-3's rstrip); before the special-token lists are built */
void tok_apply_attrs(struct ember_tokenizer *t, const gguf_file *f);

/* tokenizer_bpe.c */
/* Whether the reference starts a tokenizer.ggml.pre's text with BOS when
   the file has no add_bos_token key (Llama 3's family, Tekken). */
bool tok_bpe_pre_adds_bos(const char *pre);
int tok_bpe_init(struct ember_tokenizer *t, const char *pre, ember_err *err);
void tok_bpe_free(struct ember_tokenizer *t);
/* match: the same len bytes as the pre-tokenizer patterns see them (text
   itself, or a copy with each surrogate replaced, tokenizer.c) */
int tok_bpe_encode(const struct ember_tokenizer *t, const char *text, const char *match, size_t len,
                   tok_out *out, ember_err *err);
/* Maps a vocabulary string through the GPT-2 unicode->byte table. */
int tok_bpe_decode_piece(const char *s, size_t len, char *buf, int cap);

/* tokenizer_spm.c */
int tok_spm_encode(const struct ember_tokenizer *t, const char *text, size_t len,
                   bool space_prefix, tok_out *out, ember_err *err);

#endif
