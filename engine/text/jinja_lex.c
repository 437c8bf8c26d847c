/* Jinja lexer: template source to tokens.
 *
 * Whitespace control is settled here, where jinja2 settles it too, so the
 * parser only sees text that is already trimmed:
 *   {%- / {{- / {#-   strip all whitespace before the tag;
 *   -%} / -}} / -#}   strip all whitespace after it;
 *   trim_blocks       drops the first newline after a block or comment tag;
 *   lstrip_blocks     drops spaces and tabs between a line's start and a
 *                     block or comment tag ({%+ opts out, +%} opts out of
 *                     trim_blocks).
 * Comments vanish; {% raw %} bodies become plain text. */
#include "config.h"

#include "jinja_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct lexer {
    jx_arena *a;
    jx_fail_ctx *f;
    const char *s;
    size_t n, i;
    int line;
    bool line_start;          /* the last tag's match ended a line (lstrip_blocks) */
    jx_toks *out;
} lexer;

static jx_tok *emit(lexer *L, jx_tokt t, int line)
{
    jx_toks *o = L->out;
    if (o->n == o->cap) {
        size_t nc = o->cap ? o->cap * 2 : 256;
        o->v = jx_grow(L->a, o->v, o->cap * sizeof(jx_tok), nc * sizeof(jx_tok));
        o->cap = nc;
    }
    jx_tok *k = &o->v[o->n++];
    memset(k, 0, sizeof *k);
    k->t = t;
    k->line = line;
    return k;
}

JX_NORETURN static void lex_fail(lexer *L, const char *msg)
{
    L->f->line = L->line;
    jx_fail(L->f, JINJA_ERR_SYNTAX, "%s", msg);
}

static bool ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static void count_lines(lexer *L, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++)
        if (L->s[k] == '\n') L->line++;
}

static void skip_ws(lexer *L)
{
    while (L->i < L->n && ws(L->s[L->i])) {
        if (L->s[L->i] == '\n') L->line++;
        L->i++;
    }
}

/* Text before a tag, trimmed by the tag's left-side whitespace rules. */
static void emit_text(lexer *L, size_t from, size_t to, char mod, bool lstrip_kind, int line)
{
    const char *s = L->s;
    if (mod == '-') {
        while (to > from && ws(s[to - 1])) to--;
    } else if (lstrip_kind && mod != '+') {
        size_t l = to;
        while (l > from && s[l - 1] != '\n') l--;
        if (l > from || L->line_start) {
            size_t k = l;
            while (k < to && (s[k] == ' ' || s[k] == '\t')) k++;
            if (k == to) to = l;
        }
    }
    if (to > from) emit(L, TK_TEXT, line)->s = jx_str_new(L->a, s + from, to - from);
}

/* After a tag's end marker: its right-side whitespace rule. */
static void after_tag(lexer *L, char mod, bool block)
{
    size_t st = L->i;
    if (mod == '-') skip_ws(L);
    else if (block && mod != '+' && L->i < L->n && L->s[L->i] == '\n') {
        L->i++;
        L->line++;
    }
    L->line_start = L->i > st && L->s[L->i - 1] == '\n';
}

/* At s[i] just after "{%": is this a {% raw %} or {% endraw %} tag?  On a
   match returns the end modifier and sets *end past the closing "%}". */
static bool match_word_tag(const lexer *L, size_t i, const char *word, char *mod_end, size_t *end)
{
    const char *s = L->s;
    size_t n = L->n, wl = strlen(word);
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    while (i < n && ws(s[i])) i++;
    if (i + wl > n || memcmp(s + i, word, wl)) return false;
    i += wl;
    if (i < n && (s[i] == '_' || ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z'))) return false;
    while (i < n && ws(s[i])) i++;
    char m = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) m = s[i++];
    if (i + 2 > n || s[i] != '%' || s[i + 1] != '}') return false;
    *mod_end = m;
    *end = i + 2;
    return true;
}

static void lex_raw(lexer *L, size_t tag_end, char mod_end)
{
    L->i = tag_end;
    /* jinja2 applies no trim_blocks after {% raw %}, only -%} */
    if (mod_end == '-') skip_ws(L);
    L->line_start = L->i > tag_end && L->s[L->i - 1] == '\n';
    size_t from = L->i;
    int line = L->line;
    for (size_t j = from; j + 1 < L->n; j++) {
        if (L->s[j] != '{' || L->s[j + 1] != '%') continue;
        char m2;
        size_t end;
        if (!match_word_tag(L, j + 2, "endraw", &m2, &end)) continue;
        char mod = L->s[j + 2] == '-' || L->s[j + 2] == '+' ? L->s[j + 2] : 0;
        emit_text(L, from, j, mod, true, line);
        count_lines(L, from, end);
        L->i = end;
        after_tag(L, m2, true);
        return;
    }
    lex_fail(L, "Missing end of raw directive");
}

/* Python string literal escapes (jinja2 decodes with unicode-escape). */
static void lex_string(lexer *L, int line)
{
    const char *s = L->s;
    char q = s[L->i++];
    jx_sb b;
    jx_sb_init(&b, L->a);
    for (;;) {
        if (L->i >= L->n) lex_fail(L, "unexpected end of string");
        char c = s[L->i++];
        if (c == q) break;
        if (c == '\n') L->line++;
        if (c != '\\') {
            jx_sb_addc(&b, c);
            continue;
        }
        if (L->i >= L->n) lex_fail(L, "unexpected end of string");
        char e = s[L->i++];
        int hex = 0;
        switch (e) {
        case '\n': L->line++; break;
        case '\\': case '\'': case '"': jx_sb_addc(&b, e); break;
        case 'a': jx_sb_addc(&b, '\a'); break;
        case 'b': jx_sb_addc(&b, '\b'); break;
        case 'f': jx_sb_addc(&b, '\f'); break;
        case 'n': jx_sb_addc(&b, '\n'); break;
        case 'r': jx_sb_addc(&b, '\r'); break;
        case 't': jx_sb_addc(&b, '\t'); break;
        case 'v': jx_sb_addc(&b, '\v'); break;
        case 'x': hex = 2; break;
        case 'u': hex = 4; break;
        case 'U': hex = 8; break;
        case 'N': lex_fail(L, "malformed \\N character escape");
        default:
            if (e >= '0' && e <= '7') {
                uint32_t v = (uint32_t)(e - '0');
                for (int k = 0; k < 2 && L->i < L->n && s[L->i] >= '0' && s[L->i] <= '7'; k++)
                    v = v * 8 + (uint32_t)(s[L->i++] - '0');
                jx_sb_addcp(&b, v);
            } else {
                jx_sb_addc(&b, '\\');
                L->i--;
            }
        }
        if (hex) {
            uint32_t v = 0;
            for (int k = 0; k < hex; k++) {
                char h = L->i < L->n ? s[L->i] : 0;
                int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'f' ? (h | 32) - 'a' + 10 : -1;
                if (d < 0) lex_fail(L, "truncated \\x, \\u or \\U escape in a string");
                v = v * 16 + (uint32_t)d;
                L->i++;
            }
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) v = 0xFFFD;
            jx_sb_addcp(&b, v);
        }
    }
    emit(L, TK_STRING, line)->s = jx_sb_str(&b);
}

/* \d+(_\d+)*: an underscore only between digits, as jinja2's number
   rules have it, so `10_` is 10 and a name */
static bool digit_at(const lexer *L, size_t i) { return i < L->n && L->s[i] >= '0' && L->s[i] <= '9'; }
static void lex_digits(lexer *L, char *digits, size_t *nd, size_t cap)
{
    while (digit_at(L, L->i) || (L->s[L->i] == '_' && L->i < L->n && digit_at(L, L->i + 1) && L->i > 0 &&
                                 digit_at(L, L->i - 1))) {
        if (L->s[L->i] != '_' && *nd < cap) digits[(*nd)++] = L->s[L->i];
        L->i++;
    }
}

static void lex_number(lexer *L, int line)
{
    const char *s = L->s;
    size_t st = L->i;
    bool after_dot = st > 0 && s[st - 1] == '.';
    char digits[80];
    size_t nd = 0;
    bool is_float = false;
    if (s[st] == '0' && st + 1 < L->n && strchr("xXoObB", s[st + 1]) && s[st + 1]) {
        int base = (s[st + 1] | 32) == 'x' ? 16 : (s[st + 1] | 32) == 'o' ? 8 : 2;
        L->i += 2;
        uint64_t v = 0;
        bool any = false;
        for (; L->i < L->n; L->i++) {
            char h = s[L->i];
            bool under = h == '_' && L->i + 1 < L->n;        /* (_?[digit])+ */
            if (under) h = s[L->i + 1];
            int d = h >= '0' && h <= '9' ? h - '0' : (h | 32) >= 'a' && (h | 32) <= 'z' ? (h | 32) - 'a' + 10 : -1;
            if (d < 0 || d >= base) break;
            L->i += under;
            if (v > (UINT64_MAX >> 4)) lex_fail(L, "integer literal too large");
            v = v * (uint64_t)base + (uint64_t)d;
            any = true;
        }
        if (!any || v > INT64_MAX) lex_fail(L, "invalid integer literal");
        emit(L, TK_INT, line)->i = (int64_t)v;
        return;
    }
    lex_digits(L, digits, &nd, sizeof digits - 8);
    if (!after_dot && L->i + 1 < L->n && s[L->i] == '.' && s[L->i + 1] >= '0' && s[L->i + 1] <= '9') {
        is_float = true;
        digits[nd++] = s[L->i++];
        lex_digits(L, digits, &nd, sizeof digits - 8);
    }
    if (!after_dot && L->i < L->n && (s[L->i] | 32) == 'e') {
        size_t k = L->i + 1;
        if (k < L->n && (s[k] == '+' || s[k] == '-')) k++;
        if (k < L->n && s[k] >= '0' && s[k] <= '9') {
            is_float = true;
            digits[nd++] = 'e';
            for (size_t m = L->i + 1; m < k; m++) digits[nd++] = s[m];
            L->i = k;
            lex_digits(L, digits, &nd, sizeof digits - 2);
        }
    }
    digits[nd] = 0;
    if (is_float) {
        emit(L, TK_FLOAT, line)->f = strtod(digits, NULL);
        return;
    }
    uint64_t v = 0;
    for (size_t k = 0; k < nd; k++) {
        uint64_t d = (uint64_t)(digits[k] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10) lex_fail(L, "integer literal too large");
        v = v * 10 + d;
    }
    emit(L, TK_INT, line)->i = (int64_t)v;
}

static const struct { const char *s; jx_op op; } ops[] = {
    {"//", OP_FLOORDIV}, {"**", OP_POW}, {"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
    {"+", OP_ADD}, {"-", OP_SUB}, {"*", OP_MUL}, {"/", OP_DIV}, {"%", OP_MOD}, {"~", OP_TILDE},
    {"(", OP_LPAREN}, {")", OP_RPAREN}, {"[", OP_LBRACKET}, {"]", OP_RBRACKET},
    {"{", OP_LBRACE}, {"}", OP_RBRACE}, {",", OP_COMMA}, {".", OP_DOT}, {":", OP_COLON},
    {"|", OP_PIPE}, {"=", OP_ASSIGN}, {"<", OP_LT}, {">", OP_GT},
};

/* Tokens of one {{ }} or {% %} up to its end marker; returns the end's
   modifier ('-', '+' or 0). */
static char lex_tag(lexer *L, bool block)
{
    const char *s = L->s;
    int balance = 0;          /* end markers inside brackets are braces */
    for (;;) {
        skip_ws(L);
        if (L->i >= L->n) lex_fail(L, block ? "unexpected end of template: missing '%}'"
                                            : "unexpected end of template: missing '}}'");
        size_t i = L->i;
        char c = s[i];
        if (balance == 0) {
            char endc = block ? '%' : '}';
            if ((c == '-' || (block && c == '+')) && i + 2 < L->n && s[i + 1] == endc && s[i + 2] == '}') {
                L->i = i + 3;
                return c;
            }
            if (c == endc && i + 1 < L->n && s[i + 1] == '}') {
                L->i = i + 2;
                return 0;
            }
        }
        int line = L->line;
        if (c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z')) {
            size_t k = i;
            while (k < L->n && (s[k] == '_' || ((s[k] | 32) >= 'a' && (s[k] | 32) <= 'z') ||
                                (s[k] >= '0' && s[k] <= '9')))
                k++;
            emit(L, TK_NAME, line)->s = jx_str_new(L->a, s + i, k - i);
            L->i = k;
            continue;
        }
        if (c >= '0' && c <= '9') {
            lex_number(L, line);
            continue;
        }
        if (c == '\'' || c == '"') {
            lex_string(L, line);
            continue;
        }
        size_t k;
        for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t ol = strlen(ops[k].s);
            if (i + ol <= L->n && !memcmp(s + i, ops[k].s, ol)) break;
        }
        if (k == sizeof ops / sizeof ops[0]) {
            L->f->line = line;
            jx_fail(L->f, JINJA_ERR_SYNTAX, "unexpected char '%c' in tag", c >= 0x20 && c < 0x7F ? c : '?');
        }
        jx_op op = ops[k].op;
        if (op == OP_LPAREN || op == OP_LBRACKET || op == OP_LBRACE) {
            if (++balance > 1000) lex_fail(L, "brackets nested too deeply");
        } else if (op == OP_RPAREN || op == OP_RBRACKET || op == OP_RBRACE) {
            if (balance == 0) {
                L->f->line = line;
                jx_fail(L->f, JINJA_ERR_SYNTAX, "unexpected '%c'", c);
            }
            balance--;
        }
        emit(L, TK_OP, line)->op = op;
        L->i = i + strlen(ops[k].s);
    }
}

void jx_lex(jx_arena *a, jx_fail_ctx *f, const char *src, size_t n, jx_toks *out)
{
    /* jinja2 reads "\r\n" and "\r" as "\n" and drops one trailing newline
       (keep_trailing_newline is off). */
    char *s = jx_alloc(a, n + 1);
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (src[k] == '\r') {
            s[m++] = '\n';
            if (k + 1 < n && src[k + 1] == '\n') k++;
        } else {
            s[m++] = src[k];
        }
    }
    if (m && s[m - 1] == '\n') m--;
    s[m] = 0;

    lexer L = {a, f, s, m, 0, 1, true, out};
    while (L.i < L.n) {
        size_t j = L.i;
        while (j + 1 < L.n && !(s[j] == '{' && (s[j + 1] == '{' || s[j + 1] == '%' || s[j + 1] == '#'))) j++;
        if (j + 1 >= L.n) {
            emit_text(&L, L.i, L.n, 0, false, L.line);
            count_lines(&L, L.i, L.n);
            break;
        }
        char kind = s[j + 1];
        /* {{+ takes the '+' as a modifier too (a no-op there), as jinja2's
           lexer does for every opening tag */
        char mod = j + 2 < L.n && (s[j + 2] == '-' || s[j + 2] == '+') ? s[j + 2] : 0;
        int line = L.line;
        char raw_mod;
        size_t raw_end;
        bool raw = kind == '%' && match_word_tag(&L, j + 2, "raw", &raw_mod, &raw_end);
        emit_text(&L, L.i, j, mod, kind != '{', line);
        count_lines(&L, L.i, j);
        L.i = j + 2 + (mod ? 1 : 0);
        if (raw) {
            lex_raw(&L, raw_end, raw_mod);
            continue;
        }
        if (kind == '#') {
            const char *e = NULL;
            for (size_t k = L.i; k + 1 < L.n; k++)
                if (s[k] == '#' && s[k + 1] == '}') {
                    e = s + k;
                    break;
                }
            if (!e) lex_fail(&L, "Missing end of comment tag");
            size_t at = (size_t)(e - s);
            char emod = at > L.i && (s[at - 1] == '-' || s[at - 1] == '+') ? s[at - 1] : 0;
            count_lines(&L, L.i, at);
            L.i = at + 2;
            after_tag(&L, emod, true);
            continue;
        }
        bool block = kind == '%';
        emit(&L, block ? TK_BLOCK_BEGIN : TK_VAR_BEGIN, line);
        char emod = lex_tag(&L, block);
        emit(&L, block ? TK_BLOCK_END : TK_VAR_END, L.line);
        after_tag(&L, emod, block);
    }
    emit(&L, TK_EOF, L.line);
}
