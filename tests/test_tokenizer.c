/* Tokenizer: the reference's test vectors for the three fixture
   vocabularies, special tokens, pieces, and the streaming detokenizer on
   a tiny in-memory vocabulary. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gguf.h"
#include "tap.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap + 1);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap * 2 + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b) b[n] = 0;
    *len = n;
    return b;
}

static bool has_ids(const ember_tokenizer *t, const char *text, bool bos, const int32_t *want, int nw)
{
    int32_t ids[64];
    ember_err err;
    int n = ember_tokenize(t, text, strlen(text), bos, true, ids, 64, &err);
    if (n != nw || memcmp(ids, want, (size_t)nw * sizeof *ids)) {
        char line[512];
        int k = 0;
        for (int i = 0; i < n && i < 40 && k < 480; i++) k += snprintf(line + k, sizeof line - (size_t)k, " %d", ids[i]);
        line[k] = 0;
        tap_diag("'%s' gave%s", text, line);
        return false;
    }
    return true;
}

/* Special tokens, BOS and end-of-generation on the real vocabularies. */
static void check_specials(const char *name, const ember_tokenizer *t)
{
    if (!strcmp(name, "llama3-bpe")) {
        tap_ok(ember_tok_add_bos(t) && ember_tok_bos(t) == 128000, "llama3: adds BOS 128000");
        tap_ok(has_ids(t, "Hello<|eot_id|>", true, (int32_t[]){128000, 9906, 128009}, 3),
               "llama3: <|eot_id|> parsed as one token after BOS");
        tap_ok(ember_tok_is_eog(t, 128009) && ember_tok_is_eog(t, 128001) && !ember_tok_is_eog(t, 9906),
               "llama3: <|eot_id|> and <|end_of_text|> end generation");
        /* Typed by the user (masked): text, not the control token; the
           template's own marker right after it still is one. */
        const char typed[] = "Hi<|eot_id|><|eot_id|>";
        uint8_t user[sizeof typed - 1] = {0};
        memset(user, 1, 12);   /* "Hi<|eot_id|>" */
        int32_t ids[32];
        ember_err err;
        int n = ember_tokenize_masked(t, typed, sizeof typed - 1, false, true, user, ids, 32, &err);
        bool ctl_inside = false;
        for (int i = 0; i + 1 < n; i++) ctl_inside |= ids[i] == 128009;
        tap_ok(n > 3 && ids[n - 1] == 128009 && !ctl_inside,
               "llama3: <|eot_id|> typed by the user stays text (%d tokens), the template's is the token", n);
        int plain = ember_tokenize(t, "Hi<|eot_id|>", 12, false, false, ids, 32, &err);
        int masked = ember_tokenize_masked(t, typed, 12, false, true, user, ids + 16, 16, &err);
        tap_ok(plain == masked && !memcmp(ids, ids + 16, (size_t)plain * sizeof *ids),
               "llama3: masked text tokenizes as with special parsing off");
    } else if (!strcmp(name, "qwen2-bpe")) {
        tap_ok(!ember_tok_add_bos(t), "qwen2: no BOS");
        tap_ok(has_ids(t, "<|im_start|>user\nHi<|im_end|>", true, (int32_t[]){151644, 872, 198, 13048, 151645}, 5),
               "qwen2: ChatML markers parsed");
        tap_ok(ember_tok_is_eog(t, 151645) && ember_tok_is_eog(t, 151643), "qwen2: <|im_end|> and <|endoftext|> end generation");
    } else if (!strcmp(name, "gemma3-spm")) {
        tap_ok(ember_tok_add_bos(t) && ember_tok_bos(t) == 2 && ember_tok_eos(t) == 106, "gemma3: BOS 2, EOS 106");
        tap_ok(has_ids(t, "<start_of_turn>user\nHi<end_of_turn>", true, (int32_t[]){2, 105, 2364, 107, 10979, 106}, 6),
               "gemma3: turn markers parsed, no space prefix");
        tap_ok(ember_tok_is_eog(t, 106) && !ember_tok_is_eog(t, 105), "gemma3: <end_of_turn> ends generation");
    } else if (!strcmp(name, "gpt4o-bpe")) {
        tap_ok(!ember_tok_add_bos(t) && ember_tok_eos(t) == 199999, "gpt4o: no BOS, EOS 199999");
        tap_ok(has_ids(t, "Hello<|endoftext|>", true, (int32_t[]){13225, 199999}, 2),
               "gpt4o: <|endoftext|> parsed as one token");
        tap_ok(ember_tok_is_eog(t, 199999) && !ember_tok_is_eog(t, 13225), "gpt4o: <|endoftext|> ends generation");
    } else {
        tap_ok(ember_tok_add_bos(t) && ember_tok_bos(t) == 1 && ember_tok_eos(t) == 2, "spm: BOS 1, EOS 2");
        tap_ok(has_ids(t, "Hello</s>", true, (int32_t[]){1, 15043, 2}, 3), "spm: </s> parsed after a spaced word");
        tap_ok(ember_tok_is_eog(t, 2), "spm: </s> ends generation");
    }
}

/* Random texts from awkward fragments (invalid bytes, emoji, digits,
   whitespace runs, special-token text): tokenizing must not fail and
   detokenizing must give the text back, invalid bytes as U+FFFD. */
static void check_roundtrip(const char *name, const ember_tokenizer *t)
{
    static const char *const frag[] = {
        "Hello", " world", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\xC3\xA9", "\xF0\x9F\xA6\x99", "'s", "'LL",
        "12345", "\xE4\xBD\xA0\xE5\xA5\xBD", "<|eot_id|>", "<|im_start|>", "</s>", "<0x41>", "...", "\xFF", "\xC3", "x",
        "\xE2\x80\x8D", "\xEF\xBD\x9E",
    };
    enum { NF = sizeof frag / sizeof frag[0] };
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int bad = 0;
    /* gemma3's SentencePiece adds no space prefix */
    bool spm = !strcmp(name, "llama-spm") || !strcmp(name, "gemma3-spm"), prefix = !strcmp(name, "llama-spm");
    static int32_t ids[4096];
    for (int iter = 0; iter < 300; iter++) {
        char text[1024], want[2048];
        size_t tl = 0, wl = 0;
        if (prefix) want[wl++] = ' ';
        int nfr = 1 + iter % 24;
        for (int k = 0; k < nfr; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            const char *f = frag[x % NF];
            /* SentencePiece, like the reference, sizes a symbol by its
               lead byte (0xFF swallows the next three bytes) and can
               merge the text "<0x41>" into the byte token: neither
               round-trips, so the SentencePiece run leaves them out. */
            if (spm && (!strcmp(f, "\xFF") || !strcmp(f, "\xC3") || !strcmp(f, "<0x41>"))) f = "x";
            size_t fl = strlen(f);
            memcpy(text + tl, f, fl);
            tl += fl;
            if (!strcmp(f, "\xFF") || !strcmp(f, "\xC3")) {
                memcpy(want + wl, "\xEF\xBF\xBD", 3);
                wl += 3;
            } else {
                memcpy(want + wl, f, fl);
                wl += fl;
            }
        }
        ember_err err;
        int n = ember_tokenize(t, text, tl, false, false, ids, 4096, &err);
        char back[4096], piece[1024];
        size_t bl = 0;
        ember_detok d;
        ember_detok_init(&d);
        for (int i = 0; i < n && i < 4096; i++) {
            int pl = ember_detok_push(&d, t, ids[i], piece, sizeof piece);
            if (bl + (size_t)pl < sizeof back) memcpy(back + bl, piece, (size_t)pl), bl += (size_t)pl;
        }
        int pl = ember_detok_flush(&d, piece, sizeof piece);
        if (bl + (size_t)pl < sizeof back) memcpy(back + bl, piece, (size_t)pl), bl += (size_t)pl;
        if (n < 0 || bl != wl || memcmp(back, want, wl)) {
            if (bad++ < 3) {
                size_t at = 0;
                while (at < bl && at < wl && back[at] == want[at]) at++;
                tap_diag("%s: random text %d (%zu bytes) differs from byte %zu: got %02x, want %02x", name, iter,
                         tl, at, at < bl ? (unsigned char)back[at] : 0, at < wl ? (unsigned char)want[at] : 0);
            }
        }
    }
    tap_ok(bad == 0, "%s: 300 random texts detokenize back (%d differ)", name, bad);
}

/* Runs every case of NAME.inp/.out; cases are split on
   "\n__ggml_vocab_test__\n" exactly as the reference's test program does. */
static void run_vectors(const char *name)
{
    char rel[256], p_gguf[1024], p_inp[1024], p_out[1024];
    snprintf(rel, sizeof rel, "fixtures/tokenizers/%s.gguf", name);
    if (!tap_shared(rel, p_gguf, sizeof p_gguf)) {
        tap_skip("fixture tokenizers absent");
        return;
    }
    snprintf(p_inp, sizeof p_inp, "%.1000s", p_gguf);
    strcpy(p_inp + strlen(p_inp) - 5, ".inp");
    snprintf(p_out, sizeof p_out, "%.1000s", p_gguf);
    strcpy(p_out + strlen(p_out) - 5, ".out");
    ember_err err = {{0}};
    gguf_file *f = gguf_open(p_gguf, &err);
    if (!tap_ok(f != NULL, "%s: gguf_open (%s)", name, f ? "ok" : err.msg)) return;
    ember_tokenizer *t = ember_tokenizer_load(f, &err);
    if (!tap_ok(t != NULL, "%s: tokenizer loads (%s)", name, t ? "ok" : err.msg)) {
        gguf_close(f);
        return;
    }
    size_t li, lo;
    char *inp = slurp(p_inp, &li), *out = slurp(p_out, &lo);
    if (!inp || !out) {
        tap_ok(0, "%s: read .inp/.out", name);
        goto done;
    }
    static const char sep[] = "\n__ggml_vocab_test__\n";
    size_t pos = 0;
    char *oline = out;
    int cases = 0, passed = 0, roundtrip_bad = 0;
    int32_t ids[4096];
    while (pos < li) {
        char *next = strstr(inp + pos, sep);
        size_t clen = next ? (size_t)(next - (inp + pos)) : li - pos;
        char *eol = oline ? strchr(oline, '\n') : NULL;
        if (eol) *eol = 0;
        int32_t want[4096];
        int nw = 0;
        for (char *q = oline ? oline : ""; *q && nw < 4096;) {
            char *e;
            long v = strtol(q, &e, 10);
            if (e == q) break;
            want[nw++] = (int32_t)v;
            q = e;
        }
        int n = ember_tokenize(t, inp + pos, clen, false, false, ids, 4096, &err);
        bool same = n == nw && (n <= 0 || !memcmp(ids, want, (size_t)n * sizeof *ids));
        cases++;
        /* Detokenizing streams back the text (SentencePiece adds its
           leading space). */
        if (same && n > 0) {
            char back[8192], piece[1024];
            size_t bl = 0;
            ember_detok d;
            ember_detok_init(&d);
            for (int i = 0; i < n; i++) {
                int pl = ember_detok_push(&d, t, ids[i], piece, sizeof piece);
                if (bl + (size_t)pl < sizeof back) memcpy(back + bl, piece, (size_t)pl), bl += (size_t)pl;
            }
            int pl = ember_detok_flush(&d, piece, sizeof piece);
            if (bl + (size_t)pl < sizeof back) memcpy(back + bl, piece, (size_t)pl), bl += (size_t)pl;
            size_t skip = !strcmp(name, "llama-spm") ? 1 : 0;
            if (bl != clen + skip || memcmp(back + skip, inp + pos, clen)) {
                roundtrip_bad++;
                tap_diag("%s case %d does not detokenize back: '%.*s'", name, cases, (int)bl, back);
            }
        }
        if (same) {
            passed++;
        } else {
            tap_diag("%s case %d '%.*s': got %d ids, want %d", name, cases, (int)clen, inp + pos, n, nw);
            char line[2048];
            int k = 0;
            for (int i = 0; i < n && i < 64 && k < 1900; i++) k += snprintf(line + k, sizeof line - (size_t)k, " %d", ids[i]);
            line[k] = 0;
            tap_diag("  got:%s", line);
            tap_diag("  want: %s", oline ? oline : "");
        }
        oline = eol ? eol + 1 : NULL;
        pos = next ? (size_t)(next - inp) + sizeof sep - 1 : li;
    }
    tap_ok(cases == 46 && passed == cases, "%s: %d/%d reference cases", name, passed, cases);
    tap_ok(roundtrip_bad == 0, "%s: every case detokenizes back to its text (%d do not)", name, roundtrip_bad);
    check_specials(name, t);
    check_roundtrip(name, t);
done:
    free(inp);
    free(out);
    ember_tokenizer_free(t);
    gguf_close(f);
}


/* ---- a tiny in-memory vocabulary ------------------------------------ */

static int byte_direct(int b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); }

/* GPT-2's byte -> code point map, written out independently of the
   engine, as UTF-8. */
static void byte_str(int b, char out[3])
{
    unsigned cp = (unsigned)b;
    if (!byte_direct(b)) {
        cp = 256;
        for (int i = 0; i < b; i++) cp += !byte_direct(i);
    }
    if (cp < 0x80) {
        out[0] = (char)cp;
        out[1] = 0;
    } else {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        out[2] = 0;
    }
}

enum { T_BOS = 256, T_EOT, T_HE, T_LL, T_HELL, T_HELLO, T_TOOL, T_12, T_SPA, T_SPI, T_SPX, T_N };

static ember_tokenizer *tiny_bpe(uint8_t **mem, gguf_file **fp, const char *pre)
{
    static char bytes[256][3];
    const char *toks[T_N];
    int32_t types[T_N];
    for (int b = 0; b < 256; b++) {
        byte_str(b, bytes[b]);
        toks[b] = bytes[b];
        types[b] = 1;
    }
    toks[T_BOS] = "<|bos|>"; types[T_BOS] = 3;
    toks[T_EOT] = "<|eot|>"; types[T_EOT] = 3;
    toks[T_HE] = "he"; types[T_HE] = 1;
    toks[T_LL] = "ll"; types[T_LL] = 1;
    toks[T_HELL] = "hell"; types[T_HELL] = 1;
    toks[T_HELLO] = "hello"; types[T_HELLO] = 1;
    toks[T_TOOL] = "<tool>"; types[T_TOOL] = 4;
    toks[T_12] = "12"; types[T_12] = 1;
    /* " \xE1" and " \xED" byte-encoded: they merge only where the
       pre-tokenizer keeps the space with the character after it */
    toks[T_SPA] = "\xC4\xA0\xC3\xA1"; types[T_SPA] = 1;
    toks[T_SPI] = "\xC4\xA0\xC3\xAD"; types[T_SPI] = 1;
    toks[T_SPX] = "\xC4\xA0!"; types[T_SPX] = 1;
    const char *merges[] = {"h e", "l l", "he ll", "hell o", "1 2", "\xC4\xA0 \xC3\xA1", "\xC4\xA0 \xC3\xAD", "\xC4\xA0 !"};
    gguf_writer *w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "llama");
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", pre);
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, T_N);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, T_N);
    gguf_w_arr_str(w, "tokenizer.ggml.merges", merges, (int)(sizeof merges / sizeof merges[0]));
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", T_BOS);
    gguf_w_u32(w, "tokenizer.ggml.eot_token_id", T_EOT);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", true);
    size_t size;
    ember_err err;
    ember_tokenizer *t = NULL;
    *fp = NULL;
    if (gguf_writer_to_mem(w, mem, &size, &err) == 0) {
        *fp = gguf_open_mem(*mem, size, &err);
        if (*fp) t = ember_tokenizer_load(*fp, &err);
    }
    if (!t) tap_diag("tiny BPE vocabulary: %s", err.msg);
    gguf_writer_free(w);
    return t;
}

static int tok(ember_tokenizer *t, const char *s, bool bos, bool special, int32_t *ids)
{
    ember_err err;
    return ember_tokenize(t, s, strlen(s), bos, special, ids, 64, &err);
}

static bool ids_eq(const int32_t *a, int n, const int32_t *b, int m)
{
    return n == m && !memcmp(a, b, (size_t)n * sizeof *a);
}

/* A tiny vocabulary the way Gemma 4's converter stores it
   (tokenizer.ggml.model gemma4): SentencePiece pieces with merges, <0xXX>
   byte tokens.  Spaces become U+2581 and merge like any character, runs of
   newlines are split off (one token where the vocabulary has the run),
   a character with no piece falls back to its <0xXX> bytes, BOS always. */
static void test_tiny_gemma4(void)
{
    enum { G_PAD, G_EOS, G_BOS, G_SP, G_H, G_I, G_SPH, G_SPHI, G_HI, G_NL, G_NL2, G_X41, G_XC3, G_XA9, G_N };
    const char *toks[G_N] = {"<pad>", "<eos>", "<bos>", "\xE2\x96\x81", "h", "i", "\xE2\x96\x81h",
                             "\xE2\x96\x81hi", "hi", "\n", "\n\n", "<0x41>", "<0xC3>", "<0xA9>"};
    int32_t types[G_N] = {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6};
    const char *merges[] = {"\xE2\x96\x81 h", "\xE2\x96\x81h i", "h i"};
    gguf_writer *w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "gemma4");
    gguf_w_str(w, "tokenizer.ggml.model", "gemma4");
    gguf_w_str(w, "tokenizer.ggml.pre", "gemma4");
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, G_N);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, G_N);
    gguf_w_arr_str(w, "tokenizer.ggml.merges", merges, 3);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", G_BOS);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", G_EOS);
    gguf_w_bool(w, "tokenizer.ggml.add_bos_token", false);   /* as Gemma 4's converter wrote it */
    uint8_t *mem = NULL;
    size_t size;
    ember_err err = {{0}};
    gguf_file *f = gguf_writer_to_mem(w, &mem, &size, &err) == 0 ? gguf_open_mem(mem, size, &err) : NULL;
    ember_tokenizer *t = f ? ember_tokenizer_load(f, &err) : NULL;
    gguf_writer_free(w);
    if (tap_ok(t != NULL, "tiny gemma4 vocabulary loads (%s)", t ? "ok" : err.msg)) {
        int32_t ids[64];
        int n = tok(t, "hi hi", true, false, ids);
        tap_ok(ids_eq(ids, n, (int32_t[]){G_BOS, G_HI, G_SPHI}, 3),
               "gemma4: BOS, then spaces as U+2581 merged with the word after them (%d ids)", n);
        n = tok(t, "hi\n\nhi\nA\xC3\xA9", false, false, ids);
        tap_ok(ids_eq(ids, n, (int32_t[]){G_HI, G_NL2, G_HI, G_NL, G_X41, G_XC3, G_XA9}, 7),
               "gemma4: newline runs split off whole, missing characters as <0xXX> bytes (%d ids)", n);
        char b[64];
        int l = 0;
        ember_detok d;
        ember_detok_init(&d);
        const int32_t back[] = {G_HI, G_SPHI, G_NL2, G_X41, G_XC3, G_XA9};
        for (int i = 0; i < 6; i++) l += ember_detok_push(&d, t, back[i], b + l, (int)sizeof b - l);
        l += ember_detok_flush(&d, b + l, (int)sizeof b - l);
        tap_ok(l == 10 && !memcmp(b, "hi hi\n\nA\xC3\xA9", 10), "gemma4: pieces decode with U+2581 as a space, bytes as bytes");
    }
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);
}

static void test_tiny_bpe(void)
{
    uint8_t *mem = NULL;
    gguf_file *f;
    ember_tokenizer *t = tiny_bpe(&mem, &f, "default");
    if (!tap_ok(t != NULL, "tiny BPE vocabulary loads")) {
        if (f) gguf_close(f);
        free(mem);
        return;
    }
    int32_t ids[64];
    int n = tok(t, "hello", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){T_HELLO}, 1), "merges by rank: hello -> one token");
    n = tok(t, "hell", true, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){T_BOS, T_HELL}, 2), "add_bos prepends BOS");
    n = tok(t, "hello<|eot|>", false, true, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){T_HELLO, T_EOT}, 2), "parse_special matches a control token");
    n = tok(t, "<|eot|>", false, false, ids);
    tap_ok(n == 7 && ids[0] == '<' && ids[1] == '|', "without parse_special the control text is plain bytes (%d ids)", n);
    n = tok(t, "a<tool>b", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){'a', T_TOOL, 'b'}, 3), "user-defined tokens are always matched");
    n = tok(t, "a\xFF" "b", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){'a', 0xEF, 0xBF, 0xBD, 'b'}, 5), "invalid UTF-8 input becomes U+FFFD");
    /* UTF-8 as the reference reads it: an overlong form is its code point
       ("\xC0\xAF" is "/", so "a/b" splits in three), a sequence past
       U+10FFFF is four invalid bytes */
    n = tok(t, "a\xC0\xAF" "b", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){'a', '/', 'b'}, 3), "an overlong '/' is read as '/' (%d ids)", n);
    n = tok(t, "\xF4\x90\x80\x80", false, false, ids);
    tap_ok(n == 12 && ids[0] == 0xEF && ids[1] == 0xBF && ids[2] == 0xBD && ids[11] == 0xBD,
           "a code point past U+10FFFF is four U+FFFD (%d ids)", n);
    n = tok(t, "hello12", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){T_HELLO, T_12}, 2), "the default pre-tokenizer keeps a short digit run together");
    /* the reference's default chain ends by splitting digit runs into
       threes from the left: "4312" is "431" "2", so "1 2" cannot merge */
    n = tok(t, "x4312", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){'x', '4', '3', '1', '2'}, 5), "the default pre-tokenizer splits digits in threes (%d ids)", n);
    /* and begins by isolating runs of punctuation, so " !" is two pieces */
    n = tok(t, "x !", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){'x', ' ', '!'}, 3), "the default pre-tokenizer isolates punctuation first (%d ids)", n);
    ember_err err;
    ids[1] = -7;
    n = ember_tokenize(t, "hellohello", 10, false, false, ids, 1, &err);
    tap_ok(n == 2 && ids[0] == T_HELLO && ids[1] == -7, "a short buffer still reports the full count (%d)", n);
    tap_ok(ember_tok_is_eog(t, T_EOT) && !ember_tok_is_eog(t, T_HELLO), "EOT is end-of-generation");
    tap_ok(ember_tok_find(t, "hell") == T_HELL && ember_tok_find(t, "nope") == -1, "ember_tok_find");
    char b[16];
    tap_ok(ember_token_bytes(t, ' ', b, sizeof b) == 1 && b[0] == ' ', "byte token for ' ' decodes to a space");
    tap_ok(ember_token_bytes(t, 0xC3, b, sizeof b) == 1 && (unsigned char)b[0] == 0xC3, "byte token 0xC3 decodes");
    tap_ok(ember_token_bytes(t, T_N, b, sizeof b) == -1, "out-of-range id is -1");

    /* Streaming: U+1F999 split into its four bytes. */
    ember_detok d;
    ember_detok_init(&d);
    char out[64], all[256] = "";
    int lens[4];
    const int32_t llama[] = {0xF0, 0x9F, 0xA6, 0x99};
    for (int i = 0; i < 4; i++) {
        lens[i] = ember_detok_push(&d, t, llama[i], out, sizeof out);
        strcat(all, out);
    }
    tap_ok(lens[0] == 0 && lens[1] == 0 && lens[2] == 0 && lens[3] == 4 && !strcmp(all, "\xF0\x9F\xA6\x99"),
           "a 4-byte character is held back until complete");
    all[0] = 0;
    const int32_t seq[] = {T_HELLO, T_EOT, 0xC3, 'a', 0xFF, 0xE2, 0x82};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        ember_detok_push(&d, t, seq[i], out, sizeof out);
        strcat(all, out);
    }
    ember_detok_flush(&d, out, sizeof out);
    strcat(all, out);
    tap_ok(!strcmp(all, "hello\xEF\xBF\xBD" "a\xEF\xBF\xBD\xEF\xBF\xBD"),
           "control tokens print nothing; broken and dangling sequences become U+FFFD");
    ember_detok_init(&d);
    n = ember_detok_push(&d, t, T_HELLO, out, 4);
    tap_ok(n == 3 && !strcmp(out, "hel"), "output stops at cap - 1 bytes, never overruns (%d)", n);
    ember_tokenizer_free(t);
    gguf_close(f);
    free(mem);

    /* SmolLM / StarCoder vocabularies split digits apart before GPT-2's
       pattern runs. */
    t = tiny_bpe(&mem, &f, "smollm");
    n = t ? tok(t, "hello12 x", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){T_HELLO, '1', '2', ' ', 'x'}, 5),
           "smollm pre-tokenizer isolates each digit");
    char warn[1024] = "";
    ember_err err2;
    tap_ok(t && ember_tok_check(t, T_N, warn, sizeof warn, &err2) == 0 && !strstr(warn, "pre-tokenizer"),
           "a known pre-tokenizer gives no warning");
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);

    /* Whitespace is Unicode's White_Space, as the reference has it:
       U+180E (a format character since Unicode 6.3, which PCRE2's \s still
       takes) is not a space, so " \u180e" is one piece, as " !" is, and
       not a space piece followed by the word "\u180ea". */
    t = tiny_bpe(&mem, &f, "llama-bpe");
    n = t ? tok(t, " \xE1\xA0\x8E" "a", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){T_SPA, 0xA0, 0x8E, 'a'}, 4), "llama-bpe: U+180E is no space, the space before it joins it");
    /* a surrogate's bytes are kept, as the reference keeps them, and it is
       neither letter, digit nor space to the pre-tokenizer: the space
       before it joins it */
    n = t ? tok(t, " \xED\xA0\x80x", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){T_SPI, 0xA0, 0x80, 'x'}, 4), "llama-bpe: a UTF-8 surrogate is kept as its bytes (%d ids)", n);
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);

    /* "gpt-2" is GPT-2's pattern alone: the digit run stays whole */
    t = tiny_bpe(&mem, &f, "gpt-2");
    n = t ? tok(t, "x4312", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){'x', '4', '3', T_12}, 4), "gpt-2 pre-tokenizer keeps digit runs whole (%d ids)", n);
    n = t ? tok(t, "x !", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){'x', T_SPX}, 2), "gpt-2 pre-tokenizer keeps a space with the punctuation after it (%d ids)", n);
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);

    /* A pre-tokenizer Ember does not know runs GPT-2's pattern, and the
       vocabulary check says so (inspect prints it). */
    t = tiny_bpe(&mem, &f, "frobnicator-v2");
    warn[0] = 0;
    tap_ok(t && ember_tok_check(t, T_N, warn, sizeof warn, &err2) == 0 &&
               strstr(warn, "pre-tokenizer 'frobnicator-v2' is not one Ember knows"),
           "an unknown pre-tokenizer loads with a warning (%s)", warn);
    n = t ? tok(t, "hello12", false, false, ids) : -1;
    tap_ok(ids_eq(ids, n, (int32_t[]){T_HELLO, T_12}, 2), "and splits as GPT-2's pattern does");
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);
}

/* ---- pre-tokenizer splits, seen through a vocabulary ---------------- */

/* A vocabulary made for one text: the 256 bytes, every substring of the
   text as a token, and a merge for every way to cut each substring in two.
   Any run of the text's bytes then merges into one token, so each piece
   the pre-tokenizer cuts comes out as exactly one token, and the tokens
   spell the split.  No add_bos_token key: the name's own default holds. */
typedef struct {
    uint8_t *mem;
    gguf_file *f;
    ember_tokenizer *t;
} pre_vocab;

static bool pre_vocab_open(pre_vocab *v, const char *pre, const char *text)
{
    size_t n = strlen(text);
    char enc[256][3];
    for (int b = 0; b < 256; b++) byte_str(b, enc[b]);
    /* substrings byte-encoded, each kept once */
    size_t cap = 256 + n * (n + 1) / 2 + 1, nt = 0, nm = 0;
    char **toks = calloc(cap, sizeof *toks), **merges = NULL;
    int32_t *types = calloc(cap, sizeof *types);
    for (int b = 0; b < 256; b++) toks[nt++] = strdup(enc[b]);
    size_t first_sub = nt;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 2; j <= n; j++) {
            char w[512] = "";
            for (size_t k = i; k < j; k++) strcat(w, enc[(unsigned char)text[k]]);
            bool seen = false;
            for (size_t k = first_sub; k < nt && !seen; k++) seen = !strcmp(toks[k], w);
            if (!seen) toks[nt++] = strdup(w);
        }
    }
    /* merges: cut each substring after its k-th byte (spaces are never in
       the encoded text, so each merge is distinct) */
    size_t mcap = 1;
    for (size_t i = first_sub; i < nt; i++) mcap += strlen(toks[i]);
    merges = calloc(mcap, sizeof *merges);
    for (size_t i = first_sub; i < nt; i++) {
        const char *w = toks[i];
        size_t wl = strlen(w);
        for (size_t k = (size_t)tok_utf8_len((unsigned char)w[0]); k < wl; k += (size_t)tok_utf8_len((unsigned char)w[k])) {
            char *m = malloc(wl + 2);
            memcpy(m, w, k);
            m[k] = ' ';
            memcpy(m + k + 1, w + k, wl - k + 1);
            merges[nm++] = m;
        }
    }
    toks[nt] = strdup("<|bos|>");
    for (size_t i = 0; i <= nt; i++) types[i] = i == nt ? 3 : 1;
    gguf_writer *w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "llama");
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", pre);
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", (const char *const *)toks, nt + 1);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, nt + 1);
    gguf_w_arr_str(w, "tokenizer.ggml.merges", (const char *const *)merges, nm);
    gguf_w_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)nt);
    size_t size;
    ember_err err = {{0}};
    v->mem = NULL;
    v->f = NULL;
    v->t = NULL;
    if (gguf_writer_to_mem(w, &v->mem, &size, &err) == 0 && (v->f = gguf_open_mem(v->mem, size, &err)))
        v->t = ember_tokenizer_load(v->f, &err);
    if (!v->t) tap_diag("pre-tokenizer vocabulary for '%s': %s", pre, err.msg);
    gguf_writer_free(w);
    for (size_t i = 0; i <= nt; i++) free(toks[i]);
    for (size_t i = 0; i < nm; i++) free(merges[i]);
    free(toks);
    free(types);
    free(merges);
    return v->t != NULL;
}

static void pre_vocab_close(pre_vocab *v)
{
    ember_tokenizer_free(v->t);
    if (v->f) gguf_close(v->f);
    free(v->mem);
}

/* The pieces pre cuts text into, joined by '|' (test texts have no '|'). */
static void pre_split(const char *pre, const char *text, char *out, size_t cap)
{
    pre_vocab v;
    out[0] = 0;
    if (!pre_vocab_open(&v, pre, text)) {
        snprintf(out, cap, "(no vocabulary)");
        pre_vocab_close(&v);
        return;
    }
    int32_t ids[256];
    ember_err err;
    int n = ember_tokenize(v.t, text, strlen(text), false, false, ids, 256, &err);
    size_t l = 0;
    for (int i = 0; i < n && i < 256; i++) {
        char b[512];
        int k = ember_token_bytes(v.t, ids[i], b, sizeof b);
        if (k < 0 || l + (size_t)k + 2 > cap) break;
        if (i) out[l++] = '|';
        memcpy(out + l, b, (size_t)k);
        l += (size_t)k;
    }
    out[l] = 0;
    pre_vocab_close(&v);
}

static void check_split(const char *pre, const char *text, const char *want, const char *why)
{
    char got[1024];
    pre_split(pre, text, got, sizeof got);
    if (!tap_ok(!strcmp(got, want), "%s: %s", pre, why)) tap_diag("got '%s', want '%s'", got, want);
}

/* The pre-tokenizer names of the reference's table that Ember knows: each
   splits as its model's tokenizer.json does (the texts are chosen where
   GPT-2's pattern, the fallback for an unknown name, splits otherwise). */
static void test_pre_types(void)
{
    /* names that run a chain Ember had before: known, no warning */
    static const char *const known[] = {
        "falcon-h1", "pixtral", "laguna", "midm-2.0", "lfm2", "dbrx", "chatglm-bpe", "glm4", "llama4", "kanana2",
        "minimax-m2", "kormo", "openpangu", "f2llmv2", "hunyuan", "solar-open", "grok-2", "mellum2", "mpt", "olmo",
        "jais", "trillion", "granite-docling", "phi-2", "gigachat", "a.x-4.0", "mellum", "exaone4", "tekken",
        "qwen35", "seed-coder", "falcon", "deepseek-llm", "deepseek-coder", "deepseek-v3", "hunyuan-dense",
        "joyai-llm", "bloom", "poro-chat", "gpt3-finnish", "viking", "kimi-k2",
    };
    int unknown = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        pre_vocab v;
        char warn[1024] = "";
        ember_err err;
        if (!pre_vocab_open(&v, known[i], "ab") || ember_tok_check(v.t, ember_tok_n_vocab(v.t), warn, sizeof warn, &err) ||
            strstr(warn, "pre-tokenizer")) {
            tap_diag("'%s': %s", known[i], warn);
            unknown++;
        }
        pre_vocab_close(&v);
    }
    tap_ok(unknown == 0, "the reference's pre-tokenizer names load without a warning (%d do not)", unknown);

    /* BOS by default where the reference adds it without a key */
    static const struct { const char *pre; bool bos; } bos[] = {
        {"llama-bpe", true}, {"falcon3", true}, {"pixtral", true}, {"tekken", true}, {"qwen2", false},
        {"deepseek-llm", false}, {"falcon", false},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof bos / sizeof bos[0]; i++) {
        pre_vocab v;
        if (!pre_vocab_open(&v, bos[i].pre, "ab") || ember_tok_add_bos(v.t) != bos[i].bos) {
            tap_diag("'%s' should %sadd BOS", bos[i].pre, bos[i].bos ? "" : "not ");
            bad++;
        }
        pre_vocab_close(&v);
    }
    tap_ok(bad == 0, "BOS by default for Llama 3's names (falcon3, pixtral among them) and tekken only");

    check_split("", "x4312", "x|431|2", "an empty name is the reference's default chain");
    check_split("deepseek-llm", "Hi \xE4\xB8\xAD\xE6\x96\x87 12\n x  ", "Hi| |\xE4\xB8\xAD\xE6\x96\x87| |12|\n| x|  ",
                "line breaks, cased-letter words, CJK runs and digit runs apart, trailing spaces whole");
    /* its punctuation class spans ASCII's letters (":-~"), so that step
       cuts "caf" from "caf\xC3\xA9" (the reference and Hugging Face alike);
       its CJK class spans U+0800..U+4E00, so U+3002 leaves its space */
    check_split("deepseek-llm", "caf\xC3\xA9!? \xD0\x96\xD0\xB8 \xE3\x80\x82x", "caf|\xC3\xA9|!?| \xD0\x96\xD0\xB8| |\xE3\x80\x82|x",
                "Cyrillic words whole, ASCII runs cut from accented words, U+3002 alone");
    check_split("deepseek-coder", "ab12 (x)\n", "ab|1|2| (|x|)|\n", "words, punctuation runs with one space, single digits");
    check_split("deepseek-coder", "x\xED\x95\x9C\xEA\xB8\x80 y", "x|\xED\x95\x9C\xEA\xB8\x80| y", "a Hangul run leaves the word it ends");
    check_split("deepseek-v3", "x.Foo 1234", "x|.Foo| |123|4", "digits in threes first, a punctuation mark leads an ASCII word");
    check_split("falcon", "x 12 \xC2\xBD`", "x| |12| \xC2|\xBD|`",
                "digit runs split after the byte-level mapping (so within U+00BD), the backquote is punctuation");
    check_split("falcon", "a 1234", "a| |123|4", "digit runs in threes from the left");
    check_split("tekken", "camelCase 123 a!/\n", "camel|Case| |1|2|3| a|!/\n",
                "capitalised words apart, single digits, punctuation keeps slashes and newlines");
    check_split("seed-coder", "x123!!\n\ny", "x|1|2|3|!!|\n\n|y", "single digits, punctuation keeps no newline");
    check_split("qwen35", "e\xCC\x81x 12", "e\xCC\x81x| |1|2", "a combining mark belongs to its word");
    check_split("bloom", "a-b's 12x\xE3\x80\x82y", "a-b's| 12x|\xE3\x80\x82|y", "words run to whitespace or sentence punctuation");
    check_split("poro-chat", "it's(x) 3.5", "it's|(|x|)| 3|.|5", "brackets and full stops end words, apostrophes do not");
    check_split("viking", "a-b's 12x", "a-b's| |1|2|x", "BLOOM's words, then single digits");
    check_split("kimi-k2", "Hello\xE4\xB8\x96\xE7\x95\x8CWorld 12345", "Hello|\xE4\xB8\x96\xE7\x95\x8C|World| |123|45",
                "Han runs apart from the words around them, digits in threes");
    check_split("kimi-k2", "x\xE3\x81\x82y's a", "x\xE3\x81\x82y's| a", "kana stay in a word, a contraction keeps to it");
    check_split("kimi-k2", "camelCase", "camel|Case", "GPT-4o's word shapes");
}

static ember_tokenizer *tiny_spm(uint8_t **mem, gguf_file **fp)
{
    static char names[256][8];
    enum { N = 3 + 256 + 4 };
    const char *toks[N];
    float scores[N];
    int32_t types[N];
    toks[0] = "<unk>"; types[0] = 2;
    toks[1] = "<s>"; types[1] = 3;
    toks[2] = "</s>"; types[2] = 3;
    for (int b = 0; b < 256; b++) {
        snprintf(names[b], sizeof names[b], "<0x%02X>", b);
        toks[3 + b] = names[b];
        types[3 + b] = 6;
    }
    toks[259] = "\xE2\x96\x81"; /* U+2581 */
    toks[260] = "\xE2\x96\x81h";
    toks[261] = "\xE2\x96\x81hi";
    toks[262] = "h";
    for (int i = 0; i < N; i++) scores[i] = i >= 259 ? -(float)i : 0.0f;
    for (int i = 259; i < N; i++) types[i] = 1;
    gguf_writer *w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "llama");
    gguf_w_str(w, "tokenizer.ggml.model", "llama");
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, N);
    gguf_w_arr(w, "tokenizer.ggml.scores", GGUF_T_F32, scores, N);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, N);
    size_t size;
    ember_err err;
    ember_tokenizer *t = NULL;
    *fp = NULL;
    if (gguf_writer_to_mem(w, mem, &size, &err) == 0) {
        *fp = gguf_open_mem(*mem, size, &err);
        if (*fp) t = ember_tokenizer_load(*fp, &err);
    }
    if (!t) tap_diag("tiny SPM vocabulary: %s", err.msg);
    gguf_writer_free(w);
    return t;
}

static void test_tiny_spm(void)
{
    uint8_t *mem = NULL;
    gguf_file *f;
    ember_tokenizer *t = tiny_spm(&mem, &f);
    if (!tap_ok(t != NULL, "tiny SentencePiece vocabulary loads")) {
        if (f) gguf_close(f);
        free(mem);
        return;
    }
    int32_t ids[64];
    int n = tok(t, "hi", true, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){1, 261}, 2), "BOS, then a leading space merged into \xE2\x96\x81hi");
    n = tok(t, "h\xC3\xA9", false, false, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){260, 3 + 0xC3, 3 + 0xA9}, 3), "unknown characters fall back to <0xXX>");
    n = tok(t, "hi</s>hi", false, true, ids);
    tap_ok(ids_eq(ids, n, (int32_t[]){261, 2, 261}, 3), "a space prefix follows a special token, as in the reference");
    ember_detok d;
    ember_detok_init(&d);
    char out[64], all[64] = "";
    const int32_t seq[] = {1, 261, 3 + 0xC3, 3 + 0xA9, 2};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        ember_detok_push(&d, t, seq[i], out, sizeof out);
        strcat(all, out);
    }
    tap_ok(!strcmp(all, " hi\xC3\xA9"), "SentencePiece detokenizes spaces and byte pieces (%s)", all);
    ember_tokenizer_free(t);
    gguf_close(f);
    free(mem);
}

/* Malformed tokenizer metadata is an error with a message, not a crash. */
static void test_bad(void)
{
    static const struct { const char *what, *model; int bos; const char *merge; int32_t type1; } cases[] = {
        {"no tokenizer.ggml.model", NULL, -1, "a b", 1},
        {"unsupported model", "bert", -1, "a b", 1},
        {"BOS out of range", "gpt2", 99, "a b", 1},
        {"merge without a space", "gpt2", -1, "ab", 1},
        {"token type out of range", "gpt2", -1, "a b", 42},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *toks[] = {"a", "b", "ab"};
        int32_t types[] = {1, cases[i].type1, 1};
        gguf_writer *w = gguf_writer_new();
        if (cases[i].model) gguf_w_str(w, "tokenizer.ggml.model", cases[i].model);
        gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, 3);
        gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, 3);
        gguf_w_arr_str(w, "tokenizer.ggml.merges", &cases[i].merge, 1);
        if (cases[i].bos >= 0) gguf_w_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)cases[i].bos);
        uint8_t *mem = NULL;
        size_t size;
        ember_err err = {{0}};
        gguf_file *f = NULL;
        ember_tokenizer *t = NULL;
        if (gguf_writer_to_mem(w, &mem, &size, &err) == 0 && (f = gguf_open_mem(mem, size, &err)))
            t = ember_tokenizer_load(f, &err);
        tap_ok(f && !t && err.msg[0], "%s: rejected (%s)", cases[i].what, err.msg);
        ember_tokenizer_free(t);
        if (f) gguf_close(f);
        free(mem);
        gguf_writer_free(w);
    }
}

/* ---- ember tokenize ------------------------------------------------- */

static int run_status(const char *cmd)
{
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool run_output(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    if (!p) return false;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    return pclose(p) == 0;
}

static void test_cli(void)
{
    const char *bin = getenv("EMBER_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        tap_skip("EMBER_BIN not built");
        return;
    }
    char cmd[2048], out[4096], vocab[1024];
    snprintf(cmd, sizeof cmd, "'%s' tokenize >/dev/null 2>&1", bin);
    tap_ok(run_status(cmd) == 2, "tokenize without arguments: usage error (2)");
    snprintf(cmd, sizeof cmd, "'%s' tokenize --bogus -m x t >/dev/null 2>&1", bin);
    tap_ok(run_status(cmd) == 2, "unknown option: usage error (2)");
    snprintf(cmd, sizeof cmd, "'%s' tokenize --help 2>&1", bin);
    tap_ok(run_output(cmd, out, sizeof out) && strstr(out, "--no-bos"), "--help describes the options");
    snprintf(cmd, sizeof cmd, "'%s' tokenize -m /nonexistent/model.gguf hi 2>&1", bin);
    bool ok = !run_output(cmd, out, sizeof out) && strstr(out, "/nonexistent/model.gguf");
    snprintf(cmd, sizeof cmd, "'%s' tokenize -m /nonexistent/model.gguf hi >/dev/null 2>&1", bin);
    tap_ok(ok && run_status(cmd) == 1, "a missing model is an error naming it (1)");
    if (!tap_shared("fixtures/tokenizers/llama3-bpe.gguf", vocab, sizeof vocab)) {
        tap_skip("fixture tokenizers absent");
        return;
    }
    snprintf(cmd, sizeof cmd, "'%s' tokenize -m '%s' --ids 'Hello world'", bin, vocab);
    tap_ok(run_output(cmd, out, sizeof out) && !strcmp(out, "128000 9906 1917\n"), "--ids prints BOS and ids");
    snprintf(cmd, sizeof cmd, "printf 'Hello<|eot_id|>' | '%s' tokenize -m '%s' --ids --no-bos --special -", bin, vocab);
    tap_ok(run_output(cmd, out, sizeof out) && !strcmp(out, "9906 128009\n"), "stdin, --no-bos, --special");
    snprintf(cmd, sizeof cmd, "'%s' tokenize -m '%s' --no-bos ' world\n'", bin, vocab);
    tap_ok(run_output(cmd, out, sizeof out) && !strcmp(out, "1917\t world\n198\t\\n\n"),
           "id<TAB>piece lines with escapes");
}

/* The golden prompts were tokenized by the reference with its default
   BOS policy: detokenizing them and tokenizing the text again must give
   the same ids (BOS for Llama 3, none for Qwen). */
static void test_golden_prompts(void)
{
    static const char *const cases[][2] = {
        {"fixtures/models/llama-mini-f16.gguf", "fixtures/golden/llama-prompt.ids"},
        {"fixtures/models/qwen2-mini-Q8_0.gguf", "fixtures/golden/qwen2-prompt.ids"},
        {"fixtures/models/qwen3-mini-f16.gguf", "fixtures/golden/qwen3-prompt.ids"},
        {"fixtures/models/gemma3-mini-f16.gguf", "fixtures/golden/gemma3-prompt.ids"},
        /* tokenizer.ggml.model gemma4: BPE merges over SentencePiece pieces */
        {"fixtures/models/gemma4-mini-f16.gguf", "fixtures/golden/gemma4-prompt.ids"},
    };
    /* the sentence each one decodes to: Gemma 3's and Gemma 4's must agree */
    static char texts[8][8192];
    memset(texts, 0, sizeof texts);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char pm[1024], pi[1024];
        if (!tap_shared(cases[c][0], pm, sizeof pm) || !tap_shared(cases[c][1], pi, sizeof pi)) {
            tap_skip("fixture models absent");
            continue;
        }
        ember_err err = {{0}};
        gguf_file *f = gguf_open(pm, &err);
        ember_tokenizer *t = f ? ember_tokenizer_load(f, &err) : NULL;
        size_t len;
        char *txt = slurp(pi, &len);
        int32_t ids[512], back[512];
        int n = 0;
        for (char *q = txt; q && n < 512;) {
            char *e;
            long v = strtol(q, &e, 10);
            if (e == q) break;
            ids[n++] = (int32_t)v;
            q = e;
        }
        bool ok = false;
        if (t && n > 0) {
            char text[8192];
            int tl = 0;
            ember_detok d;
            ember_detok_init(&d);
            for (int i = 0; i < n && tl < 7000; i++) tl += ember_detok_push(&d, t, ids[i], text + tl, (int)sizeof text - tl);
            /* the sentence as typed: a U+2581 in it (SentencePiece
               vocabularies without a lone "\u2581" piece spell a space as
               its three bytes) was a space */
            int k = 0;
            for (int i = 0; i < tl; i++) {
                if (i + 3 <= tl && !memcmp(text + i, "\xE2\x96\x81", 3)) {
                    text[k++] = ' ';
                    i += 2;
                } else {
                    text[k++] = text[i];
                }
            }
            tl = k;
            int m = ember_tokenize(t, text, (size_t)tl, true, false, back, 512, &err);
            ok = m == n && !memcmp(ids, back, (size_t)n * sizeof *ids);
            snprintf(texts[c], sizeof texts[c], "%.*s", tl, text);
        }
        tap_ok(ok, "%s: the golden prompt's sentence tokenizes to the same %d ids%s%s", cases[c][1], n,
               t ? "" : ": ", t ? "" : err.msg);
        free(txt);
        ember_tokenizer_free(t);
        if (f) gguf_close(f);
    }
    if (texts[3][0] && texts[4][0] &&
        !tap_ok(!strcmp(texts[3], texts[4]), "gemma3's and gemma4's golden prompts decode to the same sentence ('%.40s...')",
                texts[4]))
        tap_diag("gemma3: '%s'\ngemma4: '%s'", texts[3], texts[4]);
}

/* The bigram queue both merging tokenizers share: lowest cost first, the
   left-most pair on ties (BPE: lowest rank; SPM: highest score, negated),
   whatever order the pairs were queued in. */
static void test_heap(void)
{
    static const double cost[] = {3, -1.5, 3, 0, -1.5, 7, 0, 3, -2, 3};
    static const int left[] = {9, 4, 2, 5, 1, 0, 3, 6, 8, 7};
    tok_heap h = {NULL, 0, 0};
    int n = (int)(sizeof cost / sizeof cost[0]), ok = 1;
    for (int i = 0; i < n; i++) ok &= tok_heap_push(&h, (tok_bigram){left[i], left[i] + 1, cost[i], 2}) == 0;
    tok_bigram prev = tok_heap_pop(&h);
    for (int i = 1; i < n; i++) {
        tok_bigram g = tok_heap_pop(&h);
        if (g.cost < prev.cost || (g.cost == prev.cost && g.left < prev.left)) ok = 0;
        prev = g;
    }
    tap_ok(ok && h.n == 0 && prev.cost == 7, "bigram heap pops by cost, then left-most, and empties");
    free(h.v);
}

int main(void)
{
    test_heap();
    test_golden_prompts();
    test_cli();
    test_tiny_bpe();
    test_pre_types();
    test_tiny_gemma4();
    test_tiny_spm();
    test_bad();
    run_vectors("llama3-bpe");
    run_vectors("qwen2-bpe");
    run_vectors("llama-spm");
    run_vectors("gemma3-spm");
    run_vectors("gpt4o-bpe");
    return tap_done();
}
