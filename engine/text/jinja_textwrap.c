/* The wordwrap filter: Python's textwrap.wrap() as jinja2 calls it
 * (expand_tabs and replace_whitespace off, drop_whitespace on, no
 * indents), once per line of s.splitlines(), the lines and the pieces
 * joined by wrapstring.
 *
 * textwrap first splits a paragraph into chunks: runs of ASCII whitespace
 * and words, where with break_on_hyphens (only when it is the value True:
 * textwrap tests `is True`) a word also ends after a hyphen between
 * letters and before an em-dash ("--").  That is its wordsep_re, whose
 * alternatives and lookarounds split_hyphens follows one by one.  Lines
 * are then filled greedily; a chunk longer than a whole line is cut
 * (after its last hyphen that fits, with break_on_hyphens) or, without
 * break_long_words, put on a line of its own.  Lengths count code points,
 * as Python does. */
#include "config.h"

#include "jinja_impl.h"

#include <string.h>

typedef struct para {
    uint32_t *cp;             /* the paragraph's code points */
    size_t *off;              /* and their byte offsets (n + 1 of them) */
    size_t n;
    const char *s;
} para;

typedef struct chunk {
    size_t a, b;              /* code points a..b of the paragraph */
} chunk;

/* textwrap's whitespace is ASCII only: '\t\n\x0b\x0c\r ' */
static bool tw_space(uint32_t cp) { return cp == ' ' || (cp >= 9 && cp <= 13); }
/* \w, and [^\d\W] (a letter, or '_'), as Python's re reads them */
static bool word(uint32_t cp) { return cp == '_' || jx_is_digit(cp) || jx_is_alpha(cp); }
static bool letter(uint32_t cp) { return word(cp) && !jx_is_digit(cp); }
/* word_punct: [\w!"'&.,?] */
static bool word_punct(uint32_t cp) { return word(cp) || (cp < 0x80 && strchr("!\"'&.,?", (int)cp) && cp); }

static bool at(const para *p, size_t i, bool (*cls)(uint32_t)) { return i < p->n && cls(p->cp[i]); }
static bool dash_at(const para *p, size_t i) { return i < p->n && p->cp[i] == '-'; }

/* (?=-{2,}\w) at i: two or more dashes, then a word character */
static bool em_dash_at(const para *p, size_t i)
{
    size_t j = i;
    while (dash_at(p, j)) j++;
    return j - i >= 2 && at(p, j, word);
}

/* wordsep_re's third alternative, from i (not whitespace): the fewest
   non-space characters after which a hyphenated word breaks, the word
   ends, or an em-dash follows; returns where the chunk ends. */
static size_t word_end(const para *p, size_t i)
{
    for (size_t e = i + 1;; e++) {
        /* -(?: (?<=lt{2}-) | (?<=lt-lt-)) (?= lt -? lt) */
        if (dash_at(p, e)) {
            bool behind = (e >= 2 && letter(p->cp[e - 2]) && letter(p->cp[e - 1])) ||
                          (e >= 3 && letter(p->cp[e - 3]) && p->cp[e - 2] == '-' && letter(p->cp[e - 1]));
            bool ahead = at(p, e + 1, letter) && (at(p, e + 2, letter) || (dash_at(p, e + 2) && at(p, e + 3, letter)));
            if (behind && ahead) return e + 1;
        }
        if (e == p->n || tw_space(p->cp[e])) return e;          /* (?=ws|\Z) */
        if (word_punct(p->cp[e - 1]) && em_dash_at(p, e)) return e;
    }
}

static void push(jx_ctx *c, chunk **v, size_t *n, size_t *cap, size_t a, size_t b)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        *v = jx_grow(c->a, *v, *cap * sizeof **v, nc * sizeof **v);
        *cap = nc;
    }
    (*v)[(*n)++] = (chunk){a, b};
    jx_step(c, 1);
}

static chunk *split_chunks(jx_ctx *c, const para *p, bool hyphens, size_t *count)
{
    chunk *v = NULL;
    size_t n = 0, cap = 0, i = 0;
    while (i < p->n) {
        size_t j = i;
        if (tw_space(p->cp[i])) {
            while (j < p->n && tw_space(p->cp[j])) j++;
        } else if (!hyphens) {
            while (j < p->n && !tw_space(p->cp[j])) j++;
        } else if (i > 0 && word_punct(p->cp[i - 1]) && em_dash_at(p, i)) {
            while (dash_at(p, j)) j++;                          /* (?<=wp) -{2,} (?=\w) */
        } else {
            j = word_end(p, i);
        }
        push(c, &v, &n, &cap, i, j);
        i = j;
    }
    *count = n;
    return v;
}

/* chunk.strip() == '': Python's str.strip() takes any Unicode space */
static bool blank(const para *p, chunk k)
{
    for (size_t i = k.a; i < k.b; i++)
        if (!jx_is_space(p->cp[i])) return false;
    return true;
}

typedef struct wrap_opts {
    int64_t width;
    bool break_long, hyphens_split, hyphens;
    const jx_str *sep;
} wrap_opts;

/* textwrap's _wrap_chunks, appending the lines to out (each after sep but
   the very first); *any says whether out holds a line yet. */
static void wrap_para(jx_ctx *c, jx_sb *out, bool *any, const para *p, const wrap_opts *o)
{
    size_t n;
    chunk *ch = split_chunks(c, p, o->hyphens_split, &n);
    size_t next = 0;                  /* chunks before next are used up */
    bool lines = false;
    int64_t width = o->width;
    chunk *line = n ? jx_alloc(c->a, (n + 1) * sizeof *line) : NULL;
    while (next < n) {
        size_t nl = 0;
        int64_t len = 0;
        jx_step(c, 1);
        if (lines && blank(p, ch[next])) next++;
        while (next < n && len + (int64_t)(ch[next].b - ch[next].a) <= width) {
            len += (int64_t)(ch[next].b - ch[next].a);
            line[nl++] = ch[next++];
        }
        if (next < n && (int64_t)(ch[next].b - ch[next].a) > width) {
            /* _handle_long_word */
            int64_t room = width < 1 ? 1 : width - len;
            chunk k = ch[next];
            if (o->break_long) {
                size_t end = (size_t)room;
                if (o->hyphens && (int64_t)(k.b - k.a) > room) {
                    /* after the last hyphen that fits, if a non-hyphen precedes it */
                    size_t h = (size_t)room;
                    while (h > 0 && p->cp[k.a + h - 1] != '-') h--;
                    if (h > 1) {
                        size_t hy = h - 1;
                        bool word_before = false;
                        for (size_t q = 0; q < hy && !word_before; q++) word_before = p->cp[k.a + q] != '-';
                        if (word_before) end = hy + 1;
                    }
                }
                line[nl++] = (chunk){k.a, k.a + end};
                ch[next].a = k.a + end;
            } else if (!nl) {
                line[nl++] = k;
                next++;
            }
        }
        if (nl && blank(p, line[nl - 1])) nl--;
        if (nl) {
            if (*any) jx_sb_add(out, o->sep->s, o->sep->len);
            for (size_t k = 0; k < nl; k++)
                jx_sb_add(out, p->s + p->off[line[k].a], p->off[line[k].b] - p->off[line[k].a]);
            *any = lines = true;
        }
    }
}

jx_val jx_wordwrap(jx_ctx *c, const jx_str *s, int64_t width, bool break_long, const jx_str *wrapstring,
                   jx_val break_on_hyphens)
{
    wrap_opts o = {width, break_long, true, true, wrapstring};
    if (given(break_on_hyphens)) {
        o.hyphens_split = break_on_hyphens.t == JT_BOOL && break_on_hyphens.u.b;
        o.hyphens = jx_truthy(break_on_hyphens);
    }
    jx_sb out;
    jx_sb_init(&out, c->a);
    size_t i = 0;
    bool first = true;
    while (i < s->len) {
        size_t st = i, e = jx_line_end(s->s, s->len, &i);
        if (width <= 0) jx_rt_fail(c, "invalid width %lld (must be > 0)", (long long)width);
        /* paragraphs are joined by wrapstring even when one wraps to nothing */
        if (!first) jx_sb_add(&out, wrapstring->s, wrapstring->len);
        first = false;
        para p = {NULL, NULL, 0, s->s + st};
        size_t cnt = jx_utf8_count(s->s + st, e - st);
        p.cp = jx_alloc(c->a, (cnt + 1) * sizeof *p.cp);
        p.off = jx_alloc(c->a, (cnt + 1) * sizeof *p.off);
        size_t k = 0;
        while (p.n < cnt) {
            p.off[p.n] = k;
            p.cp[p.n++] = jx_utf8_next(s->s + st, e - st, &k);
        }
        p.off[p.n] = e - st;
        bool any = false;
        wrap_para(c, &out, &any, &p, &o);
    }
    return jx_sb_val(&out);
}
