/* Tokenizer loading from GGUF metadata, special-token partitioning,
   encode dispatch (BPE / SentencePiece), token pieces and the streaming
   UTF-8-safe detokenizer. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"

/* Names that end a turn in the vocabularies we know, used when the file
   does not say (and always added to the end-of-generation set). */
static const char *const EOG_NAMES[] = {
    "<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end_of_text|>", "<|endoftext|>",
    "<end_of_turn>", "<|end|>",
};

void ember_tokenizer_free(ember_tokenizer *t)
{
    if (!t) return;
    tok_bpe_free(t);
    tok_map_free(&t->by_text);
    tok_map_free(&t->merges);
    free(t->tok);
    free(t->arena);
    free(t->special);
    free(t->eog);
    free(t);
}

static int get_id(const gguf_file *f, const char *key, int n_vocab, int32_t *out, ember_err *err)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv) return 0;
    int64_t v;
    if (!gguf_get_i64(f, key, &v))
        return ember_seterr(err, "%s: expected an integer, found %s", key, gguf_type_name(kv->type));
    /* Some converters write -1 (or 0xFFFFFFFF) for "none". */
    if (v == -1 || v == (int64_t)UINT32_MAX) {
        *out = -1;
        return 0;
    }
    if (v < 0 || v >= n_vocab)
        return ember_seterr(err, "%s = %lld is outside the vocabulary (%d tokens)", key, (long long)v,
                            n_vocab);
    *out = (int32_t)v;
    return 0;
}

static int sort_specials(ember_tokenizer *t)
{
    /* Stable bottom-up merge sort, longest text first (qsort has no
       context pointer and is not stable). */
    int n = t->n_special;
    int32_t *tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (!tmp) return -1;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                const tok_entry *a = &t->tok[t->special[i]], *b = &t->tok[t->special[j]];
                tmp[k++] = (b->len > a->len) ? t->special[j++] : t->special[i++];
            }
            while (i < mid) tmp[k++] = t->special[i++];
            while (j < hi) tmp[k++] = t->special[j++];
        }
        memcpy(t->special, tmp, (size_t)n * sizeof *tmp);
    }
    free(tmp);
    return 0;
}

static int load_arrays(ember_tokenizer *t, const gguf_file *f, ember_err *err)
{
    const gguf_kv *toks = gguf_find(f, "tokenizer.ggml.tokens");
    if (!toks) return ember_seterr(err, "tokenizer.ggml.tokens is missing: the file has no vocabulary");
    if (toks->type != GGUF_T_ARRAY || toks->arr_type != GGUF_T_STRING)
        return ember_seterr(err, "tokenizer.ggml.tokens must be an array of strings");
    if (toks->arr_n == 0 || toks->arr_n > (uint64_t)INT32_MAX / 2)
        return ember_seterr(err, "tokenizer.ggml.tokens has %llu entries (need 1 .. 2^30)",
                            (unsigned long long)toks->arr_n);
    int n = (int)toks->arr_n;
    const gguf_kv *scores = gguf_find(f, "tokenizer.ggml.scores");
    const gguf_kv *types = gguf_find(f, "tokenizer.ggml.token_type");
    const gguf_kv *merges = t->kind == TOK_KIND_BPE ? gguf_find(f, "tokenizer.ggml.merges") : NULL;
    if (scores && (scores->type != GGUF_T_ARRAY || scores->arr_n != toks->arr_n))
        return ember_seterr(err, "tokenizer.ggml.scores must be an array of %d numbers", n);
    if (types && (types->type != GGUF_T_ARRAY || types->arr_n != toks->arr_n))
        return ember_seterr(err, "tokenizer.ggml.token_type must be an array of %d integers", n);
    if (t->kind == TOK_KIND_BPE) {
        if (!merges) return ember_seterr(err, "tokenizer.ggml.merges is missing (required for BPE)");
        if (merges->type != GGUF_T_ARRAY || merges->arr_type != GGUF_T_STRING)
            return ember_seterr(err, "tokenizer.ggml.merges must be an array of strings");
        if (merges->arr_n > (uint64_t)INT32_MAX / 2)
            return ember_seterr(err, "tokenizer.ggml.merges is too large");
    }
    uint64_t n_merges = merges ? merges->arr_n : 0;

    size_t total = 0;
    gguf_str s;
    for (int i = 0; i < n; i++) {
        if (!gguf_arr_str(toks, (uint64_t)i, &s))
            return ember_seterr(err, "tokenizer.ggml.tokens[%d] cannot be read", i);
        if (s.len > (1u << 20))
            return ember_seterr(err, "tokenizer.ggml.tokens[%d] is %llu bytes long", i,
                                (unsigned long long)s.len);
        total += s.len + 1;
    }
    for (uint64_t i = 0; i < n_merges; i++) {
        if (!gguf_arr_str(merges, i, &s))
            return ember_seterr(err, "tokenizer.ggml.merges[%llu] cannot be read", (unsigned long long)i);
        if (s.len > (1u << 20))
            return ember_seterr(err, "tokenizer.ggml.merges[%llu] is too long", (unsigned long long)i);
        total += s.len + 1;
    }
    if (total >= UINT32_MAX)
        return ember_seterr(err, "tokenizer: the vocabulary's strings exceed 4 GiB");
    t->arena = malloc(total ? total : 1);
    t->tok = calloc((size_t)n, sizeof *t->tok);
    if (!t->arena || !t->tok || tok_map_init(&t->by_text, (size_t)n, t->arena) ||
        tok_map_init(&t->merges, (size_t)n_merges, t->arena))
        return ember_seterr(err, "tokenizer: out of memory for %d tokens", n);
    t->n_vocab = n;
    char *p = t->arena;
    for (int i = 0; i < n; i++) {
        gguf_arr_str(toks, (uint64_t)i, &s);
        memcpy(p, s.ptr, s.len);
        p[s.len] = 0;
        tok_entry *e = &t->tok[i];
        e->text = p;
        e->len = (uint32_t)s.len;
        e->type = TOK_NORMAL;
        double d;
        int64_t ty;
        if (scores) {
            if (!gguf_arr_f64(scores, (uint64_t)i, &d))
                return ember_seterr(err, "tokenizer.ggml.scores[%d] is not a number", i);
            e->score = (float)d;
        }
        if (types) {
            if (!gguf_arr_i64(types, (uint64_t)i, &ty))
                return ember_seterr(err, "tokenizer.ggml.token_type[%d] is not an integer", i);
            if (ty < 0 || ty > 6)
                return ember_seterr(err, "tokenizer.ggml.token_type[%d] = %lld is not a known type", i,
                                    (long long)ty);
            e->type = ty == 0 ? TOK_NORMAL : (uint8_t)ty;
        }
        tok_map_put(&t->by_text, p, e->len, i);
        p += s.len + 1;
    }
    for (uint64_t i = 0; i < n_merges; i++) {
        gguf_arr_str(merges, i, &s);
        memcpy(p, s.ptr, s.len);
        p[s.len] = 0;
        if (!memchr(p, ' ', s.len))
            return ember_seterr(err, "tokenizer.ggml.merges[%llu] ('%.40s') has no space separating the pair",
                                (unsigned long long)i, p);
        tok_map_put(&t->merges, p, (uint32_t)s.len, (int32_t)i);
        p += s.len + 1;
    }
    return 0;
}

static int load_specials(ember_tokenizer *t, const gguf_file *f, ember_err *err)
{
    int n = t->n_vocab;
    int32_t pad = -1;
    t->bos = t->eos = t->eot = t->unk = -1;
    if (t->kind == TOK_KIND_SPM) {
        /* SentencePiece conventions when the file does not say. */
        if (n > 2) { t->unk = 0; t->bos = 1; t->eos = 2; }
    }
    if (get_id(f, "tokenizer.ggml.bos_token_id", n, &t->bos, err) ||
        get_id(f, "tokenizer.ggml.eos_token_id", n, &t->eos, err) ||
        get_id(f, "tokenizer.ggml.eot_token_id", n, &t->eot, err) ||
        get_id(f, "tokenizer.ggml.unknown_token_id", n, &t->unk, err) ||
        get_id(f, "tokenizer.ggml.padding_token_id", n, &pad, err))   /* unused, but a wrong one means a broken file */
        return -1;
    if (t->eot < 0) {
        for (size_t i = 0; i < sizeof EOG_NAMES / sizeof EOG_NAMES[0] && t->eot < 0; i++) {
            int32_t id = ember_tok_find(t, EOG_NAMES[i]);
            if (id >= 0 && id != t->eos) t->eot = id;
        }
    }
    bool b;
    if (gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &b)) t->add_bos = b;
    /* Gemma 4 starts with BOS whatever the file says, as the reference
       does (some conversions wrote add_bos_token false) */
    if (t->spm_pieces) t->add_bos = true;
    if (gguf_get_bool(f, "tokenizer.ggml.add_space_prefix", &b)) t->add_space_prefix = b;

    tok_apply_attrs(t, f);
    t->special = malloc((size_t)n * sizeof *t->special);
    t->eog = malloc((sizeof EOG_NAMES / sizeof EOG_NAMES[0] + 4) * sizeof *t->eog);
    if (!t->special || !t->eog) return ember_seterr(err, "tokenizer: out of memory");
    for (int i = 0; i < n; i++) {
        uint8_t ty = t->tok[i].type;
        if ((ty == TOK_CONTROL || ty == TOK_USER || ty == TOK_UNKNOWN) && t->tok[i].len > 0)
            t->special[t->n_special++] = i;
    }
    if (sort_specials(t)) return ember_seterr(err, "tokenizer: out of memory");
    for (int si = 0; si < t->n_special; si++) {
        const tok_entry *e = &t->tok[t->special[si]];
        if (e->type == TOK_USER) continue;
        t->ctl_first[(unsigned char)e->text[0]] = true;
        if (t->n_ctl_lens && t->ctl_lens[t->n_ctl_lens - 1] == e->len) continue;
        if (t->n_ctl_lens == (int)(sizeof t->ctl_lens / sizeof t->ctl_lens[0])) t->ctl_slow = true;
        else t->ctl_lens[t->n_ctl_lens++] = e->len;
    }

    int32_t cand[2 + sizeof EOG_NAMES / sizeof EOG_NAMES[0]];
    int nc = 0;
    cand[nc++] = t->eos;
    cand[nc++] = t->eot;
    for (size_t i = 0; i < sizeof EOG_NAMES / sizeof EOG_NAMES[0]; i++) cand[nc++] = ember_tok_find(t, EOG_NAMES[i]);
    for (int i = 0; i < nc; i++) {
        if (cand[i] < 0) continue;
        bool dup = false;
        for (int j = 0; j < t->n_eog; j++) dup |= t->eog[j] == cand[i];
        if (!dup) t->eog[t->n_eog++] = cand[i];
    }
    /* gpt-oss (harmony.h): <|end|> closes one message of a reply, which
       ends at <|return|> or <|call|>; with all three in the vocabulary,
       as the reference has it, <|end|> does not end generation and the
       other two do */
    const int32_t h_end = ember_tok_find(t, "<|end|>"), h_ret = ember_tok_find(t, "<|return|>"),
                  h_call = ember_tok_find(t, "<|call|>");
    if (h_end >= 0 && h_ret >= 0 && h_call >= 0) {
        int k = 0;
        for (int j = 0; j < t->n_eog; j++)
            if (t->eog[j] != h_end) t->eog[k++] = t->eog[j];
        t->n_eog = k;
        for (int j = 0; j < 2; j++) {
            const int32_t id = j ? h_call : h_ret;
            bool dup = false;
            for (int i = 0; i < t->n_eog; i++) dup |= t->eog[i] == id;
            if (!dup) t->eog[t->n_eog++] = id;
        }
    }

    for (int b2 = 0; b2 < 256; b2++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b2);
        t->byte_tok[b2] = t->kind == TOK_KIND_SPM || t->spm_pieces ? ember_tok_find(t, name) : -1;
    }
    for (int i = 0; i < n; i++) {
        int l = ember_token_bytes(t, i, NULL, 0);
        if (l > t->max_piece) t->max_piece = l;
    }
    return 0;
}

ember_tokenizer *ember_tokenizer_load(const gguf_file *f, ember_err *err)
{
    ember_tokenizer *t = calloc(1, sizeof *t);
    char *model = NULL, *pre = NULL;
    if (!t) {
        ember_seterr(err, "tokenizer: out of memory");
        return NULL;
    }
    model = gguf_get_strdup(f, "tokenizer.ggml.model");
    if (!model) {
        ember_seterr(err, "tokenizer.ggml.model is missing: the file has no tokenizer");
        goto fail;
    }
    if (!strcmp(model, "gpt2")) {
        t->kind = TOK_KIND_BPE;
    } else if (!strcmp(model, "llama")) {
        t->kind = TOK_KIND_SPM;
    } else if (!strcmp(model, "gemma4")) {
        /* Gemma 4's converter stores its SentencePiece vocabulary as BPE
           with merges: the reference merges the raw text (spaces as U+2581)
           and always starts with BOS (load_specials) */
        t->kind = TOK_KIND_BPE;
        t->spm_pieces = true;
    } else {
        ember_seterr(err, "tokenizer.ggml.model '%.64s' is not supported (known: gpt2 = byte-level BPE, "
                          "llama = SentencePiece, gemma4 = BPE over SentencePiece pieces)", model);
        goto fail;
    }
    pre = gguf_get_strdup(f, "tokenizer.ggml.pre");
    if (t->kind == TOK_KIND_SPM) {
        t->add_bos = true;
        t->add_space_prefix = true;
    } else {
        /* Llama 3 prepends <|begin_of_text|>; Qwen and GPT-2 style do not. */
        t->add_bos = tok_bpe_pre_adds_bos(pre);
    }
    if (load_arrays(t, f, err)) goto fail;
    if (load_specials(t, f, err)) goto fail;
    if (t->kind == TOK_KIND_BPE && tok_bpe_init(t, pre, err)) goto fail;
    free(model);
    free(pre);
    return t;
fail:
    free(model);
    free(pre);
    ember_tokenizer_free(t);
    return NULL;
}

int ember_tok_n_vocab(const ember_tokenizer *t) { return t->n_vocab; }
int32_t ember_tok_bos(const ember_tokenizer *t) { return t->bos; }
int32_t ember_tok_eos(const ember_tokenizer *t) { return t->eos; }
bool ember_tok_add_bos(const ember_tokenizer *t) { return t->add_bos && t->bos >= 0; }
int ember_tok_max_piece(const ember_tokenizer *t) { return t->max_piece * 3 + 8; }

bool ember_tok_is_eog(const ember_tokenizer *t, int32_t id)
{
    if (id < 0) return false;
    for (int i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id) return true;
    return false;
}

int32_t ember_tok_find(const ember_tokenizer *t, const char *piece)
{
    return piece ? tok_map_get(&t->by_text, piece, strlen(piece)) : -1;
}

bool ember_tok_is_control(const ember_tokenizer *t, int32_t id)
{
    return id >= 0 && id < t->n_vocab && (t->tok[id].type == TOK_CONTROL || t->tok[id].type == TOK_UNKNOWN);
}

long ember_tok_find_control(const ember_tokenizer *t, const char *text, size_t len, size_t *n,
                            int32_t *id)
{
    if (!t->ctl_slow) {
        /* at each byte a control token may start with, the longest one there */
        for (size_t i = 0; i < len; i++) {
            if (!t->ctl_first[(unsigned char)text[i]]) continue;
            for (int k = 0; k < t->n_ctl_lens; k++) {
                if (t->ctl_lens[k] > len - i) continue;
                int32_t hit = tok_map_get(&t->by_text, text + i, t->ctl_lens[k]);
                if (!ember_tok_is_control(t, hit)) continue;
                if (n) *n = t->ctl_lens[k];
                if (id) *id = hit;
                return (long)i;
            }
        }
        return -1;
    }
    const char *best = NULL;
    int32_t best_id = -1;
    /* specials are sorted longest first: at equal offsets the first wins */
    for (int si = 0; si < t->n_special; si++) {
        const tok_entry *e = &t->tok[t->special[si]];
        if (e->type == TOK_USER || e->len == 0 || e->len > len) continue;
        size_t span = best ? (size_t)(best - text) + e->len - 1 : len;
        if (span > len) span = len;
        const char *hit = memmem(text, span, e->text, e->len);
        if (hit && (!best || hit < best)) {
            best = hit;
            best_id = t->special[si];
        }
    }
    if (!best) return -1;
    if (n) *n = t->tok[best_id].len;
    if (id) *id = best_id;
    return (long)(best - text);
}

const char *ember_token_text(const ember_tokenizer *t, int32_t id)
{
    return id >= 0 && id < t->n_vocab ? t->tok[id].text : NULL;
}

/* ---- encoding ------------------------------------------------------- */

typedef struct {
    size_t off, len;
    int32_t id; /* -1: raw text */
} frag;

/* True when one of bytes [off, off + n) came from the user (mask set). */
static bool any_masked(const uint8_t *user, size_t off, size_t n)
{
    if (!user) return false;
    for (size_t i = 0; i < n; i++)
        if (user[off + i]) return true;
    return false;
}

/* The first occurrence of the token in [base, base + n) that is allowed:
   control tokens never match over bytes the user wrote (user mask). */
static const char *find_allowed(const char *text, const char *base, size_t n, const tok_entry *e,
                                bool control, const uint8_t *user)
{
    const char *p = base, *end = base + n;
    while (p < end) {
        const char *hit = memmem(p, (size_t)(end - p), e->text, e->len);
        if (!hit) return NULL;
        if (!control || !any_masked(user, (size_t)(hit - text), e->len)) return hit;
        p = hit + 1;
    }
    return NULL;
}

/* Splits raw fragments at every occurrence of the special tokens, longest
   token first, as the reference does.  User-defined tokens are always
   matched; control and unknown ones only when parse_special, and never
   over bytes that the user mask marks (text the user typed: a typed
   "<|eot_id|>" stays text, only the template makes control tokens). */
static int partition(const ember_tokenizer *t, const char *text, size_t len, bool parse_special,
                     const uint8_t *user, frag **out, int *n_out)
{
    int cap = 16, n = 1;
    frag *fr = malloc((size_t)cap * sizeof *fr);
    if (!fr) return -1;
    fr[0] = (frag){0, len, -1};
    for (int si = 0; si < t->n_special; si++) {
        int32_t id = t->special[si];
        const tok_entry *e = &t->tok[id];
        if (!parse_special && e->type != TOK_USER) continue;
        if (e->len > len || !memmem(text, len, e->text, e->len)) continue;
        for (int k = 0; k < n; k++) {
            if (fr[k].id >= 0) continue;
            const char *base = text + fr[k].off;
            const char *hit = find_allowed(text, base, fr[k].len, e, e->type != TOK_USER, user);
            if (!hit) continue;
            /* Replace fragment k by [before][token][after...]; the
               remainder is re-examined as fragment k+2 on a later turn. */
            if (n + 2 > cap) {
                cap *= 2;
                frag *nf = realloc(fr, (size_t)cap * sizeof *nf);
                if (!nf) {
                    free(fr);
                    return -1;
                }
                fr = nf;
            }
            size_t pre = (size_t)(hit - base), end = fr[k].off + fr[k].len;
            frag before = {fr[k].off, pre, -1};
            frag tokf = {fr[k].off + pre, e->len, id};
            frag after = {fr[k].off + pre + e->len, end - (fr[k].off + pre + e->len), -1};
            /* rstrip tokens (Phi-3's) swallow the whitespace after them (the
               C locale's isspace set, spelled out: the UI sets a locale) */
            while (e->rstrip && after.len > 0 && text[after.off] && strchr(" \t\n\v\f\r", text[after.off])) {
                after.off++;
                after.len--;
            }
            memmove(&fr[k + 3], &fr[k + 1], (size_t)(n - k - 1) * sizeof *fr);
            n += 2;
            fr[k] = before;
            fr[k + 1] = tokf;
            fr[k + 2] = after;
            k += 1; /* continue with `after` */
        }
        /* Drop empty raw fragments so later scans stay short. */
        int w = 0;
        for (int k = 0; k < n; k++)
            if (fr[k].id >= 0 || fr[k].len > 0) fr[w++] = fr[k];
        n = w;
    }
    *out = fr;
    *n_out = n;
    return 0;
}

/* The text as the reference's BPE sees it: every sequence decoded as
   ember_utf8_decode_lenient reads it and written back in its shortest form (an
   overlong "\xC0\xAF" is "/"), each invalid byte as U+FFFD, and with
   `escape` each space as U+2581 (Gemma 4's SentencePiece pieces).  No form
   grows, so 3 bytes an input byte suffice.  PCRE2 must not see a surrogate:
   when there is one, *match gets a copy of the same length with U+E000 in
   its place (private use, a character of the same pre-tokenizer class as
   the reference gives a surrogate: neither letter, digit nor space), else
   NULL.  Returns NULL on OOM. */
static char *sanitize_utf8(const char *s, size_t len, bool escape, size_t *out_len, char **match)
{
    char *o = malloc(len * 3 + 1), *m = NULL;
    *match = NULL;
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        int l = ember_utf8_decode_lenient(s + i, len - i, &cp);
        size_t at = k;
        if (l == 0) {
            memcpy(o + k, "\xEF\xBF\xBD", 3);
            k += 3;
            i++;
        } else if (escape && s[i] == ' ') {
            memcpy(o + k, "\xE2\x96\x81", 3);
            k += 3;
            i++;
        } else {
            k += (size_t)ember_utf8_encode(cp, o + k);
            i += (size_t)l;
        }
        bool surrogate = l > 0 && cp >= 0xD800 && cp <= 0xDFFF;
        if (surrogate && !m) {
            m = malloc(len * 3 + 1);
            if (!m) {
                free(o);
                return NULL;
            }
            memcpy(m, o, at);
        }
        if (m) {
            if (surrogate) memcpy(m + at, "\xEE\x80\x80", 3);
            else memcpy(m + at, o + at, k - at);
        }
    }
    *out_len = k;
    *match = m;
    return o;
}

int ember_tokenize(const ember_tokenizer *t, const char *text, size_t len, bool add_bos,
                   bool parse_special, int32_t *out, int cap, ember_err *err)
{
    return ember_tokenize_masked(t, text, len, add_bos, parse_special, NULL, out, cap, err);
}

int ember_tokenize_masked(const ember_tokenizer *t, const char *text, size_t len, bool add_bos,
                          bool parse_special, const uint8_t *user, int32_t *out, int cap,
                          ember_err *err)
{
    if (!text && len) return ember_seterr(err, "tokenize: no text");
    if (len > (size_t)INT_MAX / 4) return ember_seterr(err, "tokenize: text of %zu bytes is too long", len);
    tok_out o = {out, cap < 0 ? 0 : cap, 0};
    if (add_bos && ember_tok_add_bos(t)) tok_out_push(&o, t->bos);
    if (len == 0) return o.n;
    frag *fr;
    int nf;
    if (partition(t, text, len, parse_special, user, &fr, &nf)) return ember_seterr(err, "tokenizer: out of memory");
    int rc = 0;
    bool prev_special = true; /* SentencePiece: a leading space at the start and after specials */
    for (int i = 0; i < nf && rc == 0; i++) {
        if (fr[i].id >= 0) {
            tok_out_push(&o, fr[i].id);
            prev_special = true;
            continue;
        }
        if (t->kind == TOK_KIND_SPM) {
            rc = tok_spm_encode(t, text + fr[i].off, fr[i].len, t->add_space_prefix && prev_special, &o, err);
        } else {
            size_t sl;
            char *m;
            char *s = sanitize_utf8(text + fr[i].off, fr[i].len, t->spm_pieces, &sl, &m);
            rc = s ? tok_bpe_encode(t, s, m ? m : s, sl, &o, err) : ember_seterr(err, "tokenizer: out of memory");
            free(s);
            free(m);
        }
        prev_special = false;
    }
    free(fr);
    return rc ? -1 : o.n;
}

/* ---- pieces --------------------------------------------------------- */

static int put(char *buf, int cap, int n, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++, n++)
        if (n < cap) buf[n] = s[i];
    return n;
}

int ember_token_bytes(const ember_tokenizer *t, int32_t id, char *buf, int cap)
{
    if (id < 0 || id >= t->n_vocab) return -1;
    if (!buf || cap < 0) cap = 0;
    const tok_entry *e = &t->tok[id];
    int n = 0;
    if (t->kind == TOK_KIND_BPE && !t->spm_pieces) {
        if (e->type == TOK_NORMAL || e->type == TOK_BYTE) n = tok_bpe_decode_piece(e->text, e->len, buf, cap);
        else n = put(buf, cap, 0, e->text, e->len);
    } else {
        unsigned v;
        if (e->type == TOK_BYTE && e->len == 6 && sscanf(e->text, "<0x%2X>", &v) == 1) {
            char c = (char)v;
            n = put(buf, cap, 0, &c, 1);
        } else if (e->type == TOK_NORMAL || e->type == TOK_USER) {
            for (uint32_t i = 0; i < e->len;) {
                if (i + 3 <= e->len && !memcmp(e->text + i, "\xE2\x96\x81", 3)) {
                    n = put(buf, cap, n, " ", 1);
                    i += 3;
                } else {
                    n = put(buf, cap, n, e->text + i, 1);
                    i++;
                }
            }
        } else {
            n = put(buf, cap, 0, e->text, e->len);
        }
    }
    return !buf ? n : n < cap ? n : cap;
}

/* ---- streaming detokenizer ----------------------------------------- */

void ember_detok_init(ember_detok *d) { memset(d, 0, sizeof *d); }

typedef struct {
    char *buf;
    int cap, n;
} sink;

static void sink_put(sink *s, const void *p, int len)
{
    /* Whole characters only: a character that does not fit is dropped
       rather than cut, so the output stays valid UTF-8. */
    if (s->n + len > s->cap - 1) return;
    memcpy(s->buf + s->n, p, (size_t)len);
    s->n += len;
}

static void feed_byte(ember_detok *d, sink *s, unsigned char b)
{
    for (;;) {
        if (d->n_pending == 0) {
            if (b < 0x80) {
                sink_put(s, &b, 1);
            } else if (b >= 0xC2 && b <= 0xF4) {
                d->pending[d->n_pending++] = b;
            } else {
                sink_put(s, "\xEF\xBF\xBD", 3);
            }
            return;
        }
        unsigned char lead = d->pending[0];
        int need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        unsigned char lo = 0x80, hi = 0xBF;
        if (d->n_pending == 1) {
            if (lead == 0xE0) lo = 0xA0;
            else if (lead == 0xED) hi = 0x9F;
            else if (lead == 0xF0) lo = 0x90;
            else if (lead == 0xF4) hi = 0x8F;
        }
        if (b >= lo && b <= hi) {
            d->pending[d->n_pending++] = b;
            if (d->n_pending == need) {
                sink_put(s, d->pending, need);
                d->n_pending = 0;
            }
            return;
        }
        /* The started sequence is broken: one U+FFFD for it, then look at
           this byte afresh. */
        sink_put(s, "\xEF\xBF\xBD", 3);
        d->n_pending = 0;
    }
}

int ember_detok_push(ember_detok *d, const ember_tokenizer *t, int32_t id, char *out, int cap)
{
    sink s = {out, cap, 0};
    if (out && cap > 0) out[0] = 0;
    if (!out || cap <= 0 || id < 0 || id >= t->n_vocab) return 0;
    uint8_t ty = t->tok[id].type;
    if (ty == TOK_CONTROL || ty == TOK_UNUSED) return 0;
    char stackbuf[512];
    char *bytes = stackbuf;
    int n = ember_token_bytes(t, id, NULL, 0);
    if (n > (int)sizeof stackbuf) {
        bytes = malloc((size_t)n);
        if (!bytes) return 0;
    }
    n = ember_token_bytes(t, id, bytes, n > (int)sizeof stackbuf ? n : (int)sizeof stackbuf);
    for (int i = 0; i < n; i++) feed_byte(d, &s, (unsigned char)bytes[i]);
    if (bytes != stackbuf) free(bytes);
    out[s.n] = 0;
    return s.n;
}

int ember_detok_flush(ember_detok *d, char *out, int cap)
{
    sink s = {out, cap, 0};
    if (!out || cap <= 0) {
        d->n_pending = 0;
        return 0;
    }
    if (d->n_pending) sink_put(&s, "\xEF\xBF\xBD", 3);
    d->n_pending = 0;
    out[s.n] = 0;
    return s.n;
}
