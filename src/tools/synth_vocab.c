/* Toy byte-level BPE vocabulary: the 256 GPT-2 byte tokens, merges built
   deterministically from common English words (with and without the
   leading-space marker), Llama 3's special tokens and chat template. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth_vocab.h"

static const char *const words[] = {
    "the", "of", "and", "to", "in", "is", "you", "that", "it", "he", "was", "for", "on",
    "are", "as", "with", "his", "they", "at", "be", "this", "have", "from", "or", "one",
    "had", "by", "word", "but", "not", "what", "all", "were", "we", "when", "your", "can",
    "said", "there", "use", "an", "each", "which", "she", "do", "how", "their", "if",
    "will", "up", "other", "about", "out", "many", "then", "them", "these", "so", "some",
    "her", "would", "make", "like", "him", "into", "time", "has", "look", "two", "more",
    "write", "go", "see", "number", "no", "way", "could", "people", "my", "than", "first",
    "water", "been", "call", "who", "oil", "its", "now", "find", "long", "down", "day",
    "did", "get", "come", "made", "may", "part", "hello", "world", "model", "memory",
    "token", "chat", "help", "thank", "yes", "please", "question", "answer", "good",
    "new", "know", "think", "here", "where", "why", "because", "work", "just", "also",
    "well", "only", "very", "over", "after", "before", "through", "back", "much", "should",
    "user", "assistant", "system", "ing", "ed", "er", "ly", "tion", "ment", "ness", "est",
    "able", "ous", "ive", "al", "en", "re", "th", "st", "ch", "sh", "ou", "an", "in", "on",
};

static const char *const specials[] = {
    "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|eot_id|>",
};

/* The Llama 3 instruct template (as published with the model). */
static const char chat_template[] =
    "{% set loop_messages = messages %}{% for message in loop_messages %}"
    "{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
    "+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}"
    "{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

typedef struct {
    char **s;
    int n, cap;
    bool oom;
} strv;

static int sv_find(const strv *v, const char *s)
{
    for (int i = 0; i < v->n; i++)
        if (!strcmp(v->s[i], s)) return i;
    return -1;
}

static void sv_push(strv *v, const char *s)
{
    if (v->oom) return;
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 512;
        char **ns = realloc(v->s, (size_t)cap * sizeof *ns);
        if (!ns) { v->oom = true; return; }
        v->s = ns;
        v->cap = cap;
    }
    char *d = strdup(s);
    if (!d) { v->oom = true; return; }
    v->s[v->n++] = d;
}

static void sv_free(strv *v)
{
    for (int i = 0; i < v->n; i++) free(v->s[i]);
    free(v->s);
}

/* GPT-2's reversible byte -> printable code point map. */
static int byte_cp(int b)
{
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255)) return b;
    int n = 0;
    for (int c = 0; c < b; c++)
        if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255))) n++;
    return 256 + n;
}

static void put_utf8(char *out, int cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else {                      /* every byte code point is below U+0800 */
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        out[2] = 0;
    }
}

/* A merge candidate: left + right (both tokens), result length in symbols. */
typedef struct {
    char left[48], right[8];
    int len, order;
} merge;

static int merge_cmp(const void *a, const void *b)
{
    const merge *x = a, *y = b;
    if (x->len != y->len) return x->len - y->len;
    return x->order - y->order;
}

int synth_toy_vocab(gguf_writer *w, int *n_vocab, int *first_special_out, ember_err *err)
{
    strv tok = {0}, mer = {0};
    int rc = -1;
    int32_t *types = NULL;
    char buf[64];

    /* byte tokens in GPT-2 order: printable bytes first, then the rest */
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < 256; b++) {
            bool printable = byte_cp(b) == b;
            if (printable != (pass == 0)) continue;
            put_utf8(buf, byte_cp(b));
            sv_push(&tok, buf);
        }

    /* left-to-right merge chains of each word, bare and after a space
       ("Ġ", GPT-2's byte 0x20); shorter results get lower ranks so the
       common pairs win, as a trained BPE would have it */
    size_t nw = sizeof words / sizeof words[0];
    merge *cand = calloc(nw * 2 * 16, sizeof *cand);
    int nc = 0;
    if (!cand) {
        ember_seterr(err, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nw; i++)
        for (int space = 0; space < 2; space++) {
            char cur[48];
            snprintf(cur, sizeof cur, "%s%c", space ? "\xc4\xa0" : "", space ? '\0' : words[i][0]);
            const char *rest = words[i] + (space ? 0 : 1);
            int len = 1;
            for (; *rest && nc < (int)(nw * 2 * 16); rest++) {
                merge *m = &cand[nc++];
                snprintf(m->left, sizeof m->left, "%s", cur);
                snprintf(m->right, sizeof m->right, "%c", *rest);
                m->len = ++len;
                m->order = nc;
                size_t cl = strlen(cur);
                if (cl + 2 > sizeof cur) break;
                cur[cl] = *rest;
                cur[cl + 1] = 0;
            }
        }
    qsort(cand, (size_t)nc, sizeof *cand, merge_cmp);
    for (int i = 0; i < nc; i++) {
        char joined[64];
        snprintf(joined, sizeof joined, "%s%s", cand[i].left, cand[i].right);
        /* a merge is valid only if both sides already are tokens */
        if (sv_find(&tok, joined) >= 0 || sv_find(&tok, cand[i].left) < 0) continue;
        char line[72];
        snprintf(line, sizeof line, "%s %s", cand[i].left, cand[i].right);
        sv_push(&mer, line);
        sv_push(&tok, joined);
    }
    free(cand);

    int first_special = tok.n;
    *first_special_out = first_special;
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) sv_push(&tok, specials[i]);
    int natural = tok.n;
    if (*n_vocab == 0) *n_vocab = natural;
    if (*n_vocab < natural) {
        ember_seterr(err, "vocabulary size %d is smaller than the toy vocabulary (%d tokens)",
                     *n_vocab, natural);
        goto out;
    }
    for (int i = 0; tok.n < *n_vocab; i++) {
        snprintf(buf, sizeof buf, "<|reserved_special_token_%d|>", i);
        sv_push(&tok, buf);
    }
    if (tok.oom || mer.oom) {
        ember_seterr(err, "out of memory building the toy vocabulary");
        goto out;
    }
    types = malloc((size_t)tok.n * sizeof *types);
    if (!types) {
        ember_seterr(err, "out of memory");
        goto out;
    }
    for (int i = 0; i < tok.n; i++) types[i] = i < first_special ? 1 : 3;   /* normal / control */

    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", "llama-bpe");
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)tok.s, (uint64_t)tok.n);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, (uint64_t)tok.n);
    gguf_w_arr_str(w, "tokenizer.ggml.merges", (const char *const *)mer.s, (uint64_t)mer.n);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)first_special);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)first_special + 1);
    gguf_w_u32(w, "tokenizer.ggml.eot_token_id", (uint32_t)first_special + 4);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", true);
    gguf_w_str(w, "tokenizer.chat_template", chat_template);
    rc = 0;
out:
    free(types);
    sv_free(&tok);
    sv_free(&mer);
    return rc;
}
