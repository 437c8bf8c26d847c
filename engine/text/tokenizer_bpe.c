/* Byte-level BPE: PCRE2 pre-tokenizer, GPT-2 byte<->unicode mapping and
   rank-ordered merging with a binary heap. */
#include "config.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"

/* Pre-tokenizer patterns, as the published tokenizer.json files define
   them (case-insensitive contractions spelled out so no flag is needed).

   \s and \S are spelled out as Unicode's White_Space set, the reference's
   whitespace (and the Rust regex's \s of the Hugging Face tokenizers):
   PCRE2's own \s also takes U+180E MONGOLIAN VOWEL SEPARATOR (a format
   character since Unicode 6.3), which moved the pieces around it: " \u180ea"
   was " " and "\u180ea" where the reference has " \u180e" and "a". */
#define WS "\\t\\n\\x0B\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
#define SP "[" WS "]"
#define NSP "[^" WS "]"
static const char RE_LLAMA3[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*"
    "|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
static const char RE_QWEN2[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*"
    "|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* GPT-4o's o200k vocabulary (Phi-4-mini, gpt-oss): a word is an optional
   non-letter, capitals, then lower case (so "camelCase" is two words),
   combining marks counted as letters, and its contraction; digits in
   threes; punctuation runs keep trailing newlines and slashes. */
static const char RE_GPT4O[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n/]*|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* Kimi K2 (tokenization_kimi.py): GPT-4o's word shapes with Han runs
   split off first and no Han character in a word (its classes subtract
   \p{Han}, a class intersection PCRE2 spells as a lookahead) */
#define NOT_HAN "(?!\\p{Han})"
static const char RE_KIMI_K2[] =
    "\\p{Han}+"
    "|[^\\r\\n\\p{L}\\p{N}]?(?:" NOT_HAN "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}])*(?:" NOT_HAN "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}])+"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|[^\\r\\n\\p{L}\\p{N}]?(?:" NOT_HAN "[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}])+(?:" NOT_HAN "[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}])*"
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
    "|\\p{N}{1,3}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* Gemma 4 (SentencePiece pieces): no word splitting, only runs of
   newlines apart from the rest, as the reference's gemma4 pre-tokenizer. */
static const char RE_NEWLINES[] = "[^\\n]+|[\\n]+";
static const char RE_GPT2[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" WS "\\p{L}\\p{N}]+|" SP "+(?!" NSP ")";

/* Tekken (Mistral Nemo, Mistral Small, Pixtral): GPT-4o's word shapes
   without the contractions, every digit alone. */
static const char RE_TEKKEN[] =
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*"
    "|\\p{N}| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n/]*|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* Seed-Coder: Qwen2's pattern, but a punctuation run keeps no newlines */
static const char RE_SEED_CODER[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^" WS "\\p{L}\\p{N}\\r\\n]+"
    "|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* Qwen 3.5: Qwen2's pattern with combining marks counted as letters */
static const char RE_QWEN35[] =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^" WS "\\p{L}\\p{M}\\p{N}]+[\\r\\n]*"
    "|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";
/* BLOOM, Poro, GPT-3 Finnish: a word is everything up to whitespace, a
   bracket, a bar or sentence punctuation (Latin, CJK, Devanagari's danda,
   Urdu's full stop, the Arabic comma), with one space before it. */
static const char RE_BLOOM[] =
    " ?[^(" WS "|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+";
/* DeepSeek's CJK runs: CJK ideographs U+4E00..U+9FA5, everything from
   U+0800 up to them, and Hangul syllables through U+D7FF (sic: one class
   of their tokenizer.json). */
#define DS_CJK "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+"
/* DeepSeek LLM's letters: the cased letters (Lu, Ll, Lt) of its
   tokenizer.json, as code point ranges; other letters (CJK, Hangul, Arabic,
   Devanagari ...) are not in it. */
#define DS_LLM_LETTERS                                                                                            \
    "A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}"   \
    "\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}"      \
    "\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"        \
    "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}" \
    "\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}"          \
    "\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"           \
    "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}" \
    "\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"   \
    "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}"  \
    "\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}" \
    "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}" \
    "\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}"          \
    "\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}"
/* ... and its punctuation: ASCII's (with the letters, already split off),
   the full-width forms, curly quotes, U+3000..U+3002 */
#define DS_LLM_PUNCT "!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}"
/* DeepSeek V3's last step: an ASCII punctuation mark may lead an ASCII
   word, letters take their combining marks, punctuation and symbols run
   together with their newlines */
static const char RE_DEEPSEEK3[] =
    "[!-/:-@\\[-`{-~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*"
    "|" SP "*[\\r\\n]+|" SP "+(?!" NSP ")|" SP "+";

/* GPT-2's reversible byte -> code point map: printable Latin-1 bytes stand
   for themselves, the rest are shifted to U+0100.. in byte order. */
static int byte_is_direct(int b)
{
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
}

static uint32_t byte_to_cp(int b)
{
    if (byte_is_direct(b)) return (uint32_t)b;
    int k = 0;
    for (int i = 0; i < b; i++)
        if (!byte_is_direct(i)) k++;
    return 256u + (uint32_t)k;
}

static int cp_to_byte(uint32_t cp)
{
    if (cp < 256) return byte_is_direct((int)cp) ? (int)cp : -1;
    if (cp >= 256 + 68) return -1;
    int k = (int)(cp - 256);
    for (int b = 0; b < 256; b++)
        if (!byte_is_direct(b) && k-- == 0) return b;
    return -1;
}

/* Encoded forms of all 256 bytes (at most 2 UTF-8 bytes each). */
static struct { char s[2]; uint8_t n; } g_benc[256];
static int16_t g_bdec_hi[0x200]; /* code point -> byte, -1 when unmapped */
static pthread_once_t g_tables_once = PTHREAD_ONCE_INIT;

static void tables_build(void)
{
    for (int b = 0; b < 256; b++) {
        uint32_t cp = byte_to_cp(b);
        if (cp < 0x80) {
            g_benc[b].s[0] = (char)cp;
            g_benc[b].n = 1;
        } else {
            g_benc[b].s[0] = (char)(0xC0 | (cp >> 6));
            g_benc[b].s[1] = (char)(0x80 | (cp & 0x3F));
            g_benc[b].n = 2;
        }
    }
    for (uint32_t cp = 0; cp < 0x200; cp++) g_bdec_hi[cp] = (int16_t)cp_to_byte(cp);
}

static void tables_init(void) { pthread_once(&g_tables_once, tables_build); }

int tok_bpe_decode_piece(const char *s, size_t len, char *buf, int cap)
{
    const unsigned char *u = (const unsigned char *)s;
    int n = 0;
    size_t i = 0;
    while (i < len) {
        int l = ember_utf8_decode(s + i, len - i, NULL);
        uint32_t cp = 0xFFFFFFFFu;
        if (l == 1) cp = u[i];
        else if (l == 2) cp = ((uint32_t)(u[i] & 0x1F) << 6) | (u[i + 1] & 0x3F);
        if (l == 0) l = 1;
        if (cp < 0x200 && g_bdec_hi[cp] != -1) {
            if (n < cap) buf[n] = (char)(uint8_t)g_bdec_hi[cp];
            n++;
        } else {
            /* Not a mapped code point: keep the original bytes. */
            for (int k = 0; k < l; k++) {
                if (n < cap) buf[n] = s[i + k];
                n++;
            }
        }
        i += (size_t)l;
    }
    return n;
}

/* What each tokenizer.ggml.pre name runs, as the reference maps names to
   pre-tokenizer types: the chain of patterns (each splits the pieces of
   the one before; matches and the gaps between them are both pieces) and
   the type's flags.  One row per chain, its names separated by spaces. */
enum {
    PRE_IGNORE_MERGES = 1, /* a whole piece that is a token is that token, unmerged */
    PRE_ADD_BOS = 2,       /* BOS first when the file has no add_bos_token key */
};
/* In flags: the patterns from the i-th on (i > 0) match bytes, not UTF-8
   characters: steps Hugging Face runs after the byte-level mapping, and
   those after them (their pieces need not be whole characters). */
#define PRE_BYTES_FROM(i) ((i) << 4)
typedef struct {
    const char *names;
    uint8_t flags;
    const char *pats[TOK_MAX_RE];
} pre_type;

static const pre_type PRE_TYPES[] = {
    {"llama-bpe llama3 llama-v3 falcon3 falcon-h1 pixtral laguna midm-2.0 lfm2", PRE_IGNORE_MERGES | PRE_ADD_BOS,
     {RE_LLAMA3}},
    {"smaug-bpe dbrx chatglm-bpe glm4", 0, {RE_LLAMA3}},
    {"gpt-4o llama4 kanana2 minimax-m2", 0, {RE_GPT4O}},
    {"tekken", PRE_IGNORE_MERGES | PRE_ADD_BOS, {RE_TEKKEN}},
    {"kimi-k2", 0, {RE_KIMI_K2}},
    /* grok-2's pattern is Qwen2's */
    {"qwen2 deepseek-r1-qwen stablelm2 megrez kormo openpangu f2llmv2 hunyuan solar-open grok-2", 0, {RE_QWEN2}},
    {"qwen35", 0, {RE_QWEN35}},
    {"seed-coder", 0, {RE_SEED_CODER}},
    /* StarCoder-family vocabularies (SmolLM among them) split every digit
       off first, then apply GPT-2's pattern to what is left. */
    {"smollm starcoder refact command-r codeshell exaone minerva-7b mellum2", 0, {"\\p{N}", RE_GPT2}},
    {"gpt-2 gpt2 mpt olmo jais trillion granite-docling phi-2 gigachat a.x-4.0 mellum exaone4", 0, {RE_GPT2}},
    /* No name, or "default": the reference's default chain isolates runs
       of punctuation first (so "we're" is "we", "'", "re"), then applies
       GPT-2's pattern, then splits digit runs off and into threes from the
       left */
    {"default", 0, {"[\\p{P}\\$\\+<=>\\^~\\|]+", RE_GPT2, "\\p{N}+", "[0-9][0-9][0-9]"}},
    /* Falcon's tokenizer.json: the same, but ASCII's backquote is
       punctuation too, and its digit steps come after the byte-level
       mapping: they see one character per byte, of which 0-9 and the
       Latin-1 numbers (superscripts 1-3, the fractions) are digits.  So
       " \xC2\xBD" (" ½") splits before its second byte, and " 12" in two.
       The reference has no digit-run step here; on Falcon's own vocabulary
       both give the same ids (no merge joins a space and a digit). */
    {"falcon", PRE_BYTES_FROM(2),
     {"[\\p{P}\\$\\+<=>\\^~\\|`]+", RE_GPT2, "[0-9\\xB2\\xB3\\xB9\\xBC-\\xBE]+", "[0-9][0-9][0-9]"}},
    /* DeepSeek LLM and Coder split a sequence of patterns in turn: line
       breaks one by one, words with at most one space before them,
       punctuation likewise, (LLM: trailing whitespace,) CJK runs, digits
       (LLM: runs, Coder: one by one).  "$" of their tokenizer.json is the
       end of the piece: \z here, as PCRE2's "$" also matches before a
       final newline */
    {"deepseek-llm", 0,
     {"[\\r\\n]", SP "?[" DS_LLM_LETTERS "]+", SP "?[" DS_LLM_PUNCT "]+", SP "+\\z", DS_CJK, "\\p{N}+"}},
    {"deepseek-coder", 0, {"[\\r\\n]", SP "?\\p{L}+", SP "?\\p{P}+", DS_CJK, "\\p{N}"}},
    {"deepseek-v3 hunyuan-dense joyai-llm", 0,
     {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+", RE_DEEPSEEK3}},
    {"bloom poro-chat gpt3-finnish", 0, {RE_BLOOM}},
    /* Viking: BLOOM's words, then every digit alone */
    {"viking", 0, {RE_BLOOM, "\\p{N}"}},
};

/* The row naming pre; NULL for a name not in the table. */
static const pre_type *pre_find(const char *pre)
{
    if (!pre || !*pre) pre = "default";   /* the reference: an empty name is the default */
    size_t n = strlen(pre);
    for (size_t i = 0; i < sizeof PRE_TYPES / sizeof PRE_TYPES[0]; i++) {
        for (const char *s = PRE_TYPES[i].names; *s;) {
            size_t l = strcspn(s, " ");
            if (l == n && !memcmp(s, pre, n)) return &PRE_TYPES[i];
            s += l;
            s += *s == ' ';
        }
    }
    return NULL;
}

bool tok_bpe_pre_adds_bos(const char *pre)
{
    const pre_type *p = pre ? pre_find(pre) : NULL;
    return p && (p->flags & PRE_ADD_BOS);
}

int tok_bpe_init(struct ember_tokenizer *t, const char *pre, ember_err *err)
{
    tables_init();
    static const pre_type newlines = {"", 0, {RE_NEWLINES}};
    const pre_type *p = t->spm_pieces ? &newlines : pre_find(pre);
    if (!p) {
        /* a vocabulary whose pattern Ember does not know: GPT-2's
           (tokenizer_check.c says so) */
        snprintf(t->pre_unknown, sizeof t->pre_unknown, "%s", pre);
        p = pre_find("gpt-2");
    }
    t->ignore_merges = p->flags & PRE_IGNORE_MERGES;
    int n = 0;
    while (n < TOK_MAX_RE && p->pats[n]) n++;
    for (int i = 0; i < n; i++) {
        int ec;
        PCRE2_SIZE eoff;
        int from = p->flags >> 4;
        uint32_t opt = from && i >= from ? 0 : PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)p->pats[i], PCRE2_ZERO_TERMINATED, opt, &ec, &eoff, NULL);
        if (!re) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(ec, msg, sizeof msg);
            return ember_seterr(err, "tokenizer: cannot compile the pre-tokenizer pattern: %s", (char *)msg);
        }
        /* JIT is an optimisation only; the interpreter is used if it fails. */
        (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
        t->re[t->n_re++] = re;
    }
    return 0;
}

void tok_bpe_free(struct ember_tokenizer *t)
{
    for (int i = 0; i < t->n_re; i++) pcre2_code_free(t->re[i]);
    t->n_re = 0;
}

/* ---- merging -------------------------------------------------------- */

typedef struct {
    int prev, next;
    uint32_t off, n;   /* into the word */
} sym;

typedef struct {
    sym *syms;
    int cap_syms;
    tok_heap heap;
    char *key;
    size_t cap_key;
    char *word;      /* byte-encoded word */
    size_t cap_word;
} bpe_scratch;

static int ensure(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int try_bigram(const struct ember_tokenizer *t, bpe_scratch *s, int l, int r)
{
    if (l < 0 || r < 0) return 0;
    const sym *a = &s->syms[l], *b = &s->syms[r];
    size_t klen = (size_t)a->n + 1 + b->n;
    if (ensure((void **)&s->key, &s->cap_key, klen, 1)) return -1;
    memcpy(s->key, s->word + a->off, a->n);
    s->key[a->n] = ' ';
    memcpy(s->key + a->n + 1, s->word + b->off, b->n);
    int32_t rank = tok_map_get(&t->merges, s->key, klen);
    if (rank < 0) return 0;
    tok_bigram g = {l, r, rank, a->n + b->n};
    return tok_heap_push(&s->heap, g);
}

static int bpe_word(const struct ember_tokenizer *t, bpe_scratch *s, size_t wlen, tok_out *out)
{
    const char *w = s->word;
    /* Gemma 4: a run of newlines is one token where the vocabulary has it */
    if (t->ignore_merges || (t->spm_pieces && wlen && strspn(w, "\n") >= wlen)) {
        int32_t id = tok_map_get(&t->by_text, w, wlen);
        if (id >= 0) {
            tok_out_push(out, id);
            return 0;
        }
    }
    size_t need = wlen + 1, cap = (size_t)s->cap_syms;
    if (ensure((void **)&s->syms, &cap, need, sizeof(sym))) return -1;
    s->cap_syms = (int)cap;
    int n = 0;
    for (size_t off = 0; off < wlen; n++) {
        size_t l = (size_t)tok_utf8_len((unsigned char)w[off]);
        if (l > wlen - off) l = wlen - off;
        s->syms[n] = (sym){n - 1, -1, (uint32_t)off, (uint32_t)l};
        if (n > 0) s->syms[n - 1].next = n;
        off += l;
    }
    s->heap.n = 0;
    for (int i = 0; i + 1 < n; i++)
        if (try_bigram(t, s, i, i + 1)) return -1;
    while (s->heap.n > 0) {
        tok_bigram g = tok_heap_pop(&s->heap);
        sym *a = &s->syms[g.left], *b = &s->syms[g.right];
        /* Stale entries: one side was merged away or grew since. */
        if (a->n == 0 || b->n == 0 || a->n + b->n != g.size) continue;
        a->n += b->n;
        b->n = 0;
        a->next = b->next;
        if (b->next >= 0) s->syms[b->next].prev = g.left;
        if (try_bigram(t, s, a->prev, g.left)) return -1;
        if (try_bigram(t, s, g.left, a->next)) return -1;
    }
    for (int i = 0; i >= 0 && n > 0; i = s->syms[i].next) {
        const sym *a = &s->syms[i];
        int32_t id = tok_map_get(&t->by_text, w + a->off, a->n);
        if (id >= 0) {
            tok_out_push(out, id);
            continue;
        }
        /* No token for the symbol: fall back to single bytes that are
           (SentencePiece pieces: the <0xXX> tokens). */
        for (uint32_t k = 0; k < a->n; k++) {
            int32_t bid = t->spm_pieces ? t->byte_tok[(unsigned char)w[a->off + k]]
                                        : tok_map_get(&t->by_text, w + a->off + k, 1);
            if (bid >= 0) tok_out_push(out, bid);
        }
    }
    return 0;
}

typedef struct {
    const struct ember_tokenizer *t;
    bpe_scratch s;
    pcre2_match_data *md[TOK_MAX_RE];
    const char *base, *match; /* the text and the copy the patterns see, same offsets */
    tok_out *out;
    ember_err *err;
} bpe_run;

static int emit_word(bpe_run *r, const char *text, size_t a, size_t b)
{
    size_t wl = 0;
    if (ensure((void **)&r->s.word, &r->s.cap_word, (b - a) * 2 + 1, 1))
        return ember_seterr(r->err, "tokenizer: out of memory");
    if (r->t->spm_pieces) {   /* the raw text, not byte-encoded */
        memcpy(r->s.word, text + a, b - a);
        wl = b - a;
    } else {
        for (size_t i = a; i < b; i++) {
            unsigned char c = (unsigned char)text[i];
            memcpy(r->s.word + wl, g_benc[c].s, g_benc[c].n);
            wl += g_benc[c].n;
        }
    }
    r->s.word[wl] = 0;
    if (bpe_word(r->t, &r->s, wl, r->out)) return ember_seterr(r->err, "tokenizer: out of memory");
    return 0;
}

/* Splits text[0..len) with pattern `level`: matches and the gaps between
   them are pieces, each split further by the next pattern (which sees only
   that piece, as in the reference) or merged when none is left. */
static int split(bpe_run *r, int level, const char *text, size_t len)
{
    /* the second bound is n_re's own limit, spelt out for the optimiser */
    if (level >= r->t->n_re || level >= (int)(sizeof r->md / sizeof r->md[0]))
        return emit_word(r, text, 0, len);
    const pcre2_code *re = r->t->re[level];
    pcre2_match_data *md = r->md[level];
    const char *seen = r->match + (text - r->base);
    size_t pos = 0;
    while (pos < len) {
        size_t ms, me;
        int m = pcre2_match(re, (PCRE2_SPTR)seen, len, pos, PCRE2_NO_UTF_CHECK, md, NULL);
        if (m == PCRE2_ERROR_NOMATCH) {
            ms = me = len;
        } else if (m < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(m, msg, sizeof msg);
            return ember_seterr(r->err, "tokenizer: pre-tokenizer match failed: %s", (char *)msg);
        } else {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            ms = ov[0];
            me = ov[1];
            if (me == ms) { /* never with these patterns; step one character */
                me = ms + (size_t)tok_utf8_len((unsigned char)text[ms]);
                if (me > len) me = len;
            }
        }
        if (ms > pos && split(r, level + 1, text + pos, ms - pos)) return -1;
        if (me > ms && split(r, level + 1, text + ms, me - ms)) return -1;
        pos = me;
    }
    return 0;
}

int tok_bpe_encode(const struct ember_tokenizer *t, const char *text, const char *match, size_t len,
                   tok_out *out, ember_err *err)
{
    if (len == 0) return 0;
    bpe_run r = {.t = t, .base = text, .match = match, .out = out, .err = err};
    int rc = 0;
    for (int i = 0; i < t->n_re && rc == 0; i++) {
        r.md[i] = pcre2_match_data_create_from_pattern(t->re[i], NULL);
        if (!r.md[i]) rc = ember_seterr(err, "tokenizer: out of memory");
    }
    if (rc == 0) rc = split(&r, 0, text, len);
    for (int i = 0; i < t->n_re; i++)
        if (r.md[i]) pcre2_match_data_free(r.md[i]);
    free(r.s.syms);
    free(r.s.heap.v);
    free(r.s.key);
    free(r.s.word);
    return rc;
}
