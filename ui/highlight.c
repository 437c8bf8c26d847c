/* The code-block tokenizer: one row of lang_table per language, one
   scanning loop for all of them.  It is deliberately small: keywords,
   types, strings, comments and numbers are what make a block readable at
   a glance; anything finer would need a real grammar per language. */
#include "config.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "highlight.h"

enum {
    HLF_TRIPLE = 1,      /* """ and ''' strings span lines (Python) */
    HLF_CHARLIT = 2,     /* ' opens a one-character literal, else it is plain (C, Rust, Go) */
    HLF_DIFF = 4,        /* classes by the line's first character */
    HLF_HASH_WORD = 8,   /* # starts a comment only at a word's start (shell) */
    HLF_BACKTICK = 16,   /* ` strings span lines (JavaScript templates, Go raw strings) */
};

struct hl_lang {
    const char *name;
    const char *const *keywords;
    const char *const *types;
    const char *line_comment;        /* NULL: none */
    const char *block_open, *block_close;
    const char *quotes;              /* characters that open a string */
    unsigned flags;
};

static const char *const c_kw[] = {
    "if", "else", "for", "while", "do", "switch", "case", "default", "break", "continue",
    "return", "goto", "sizeof", "typedef", "struct", "union", "enum", "static", "extern",
    "const", "volatile", "inline", "restrict", "register", "auto", "NULL", "true", "false",
    "#include", "#define", "#if", "#ifdef", "#ifndef", "#else", "#elif", "#endif", "#pragma",
    "class", "namespace", "template", "public", "private", "protected", "new", "delete",
    "nullptr", "using", "virtual", "this", NULL};
static const char *const c_ty[] = {
    "void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool",
    "size_t", "ssize_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "FILE", "_Bool", "std", "string", NULL};
static const char *const py_kw[] = {
    "def", "class", "return", "if", "elif", "else", "for", "while", "in", "not", "and", "or",
    "is", "import", "from", "as", "with", "try", "except", "finally", "raise", "pass", "break",
    "continue", "lambda", "yield", "global", "nonlocal", "assert", "del", "async", "await",
    "True", "False", "None", "self", NULL};
static const char *const py_ty[] = {
    "int", "float", "str", "bytes", "list", "dict", "set", "tuple", "bool", "object", "print",
    "len", "range", NULL};
static const char *const sh_kw[] = {
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "in", "function", "return", "exit", "export", "local", "readonly", "set", "unset", "echo",
    "cd", "sudo", "source", NULL};
static const char *const json_kw[] = {"true", "false", "null", NULL};
static const char *const js_kw[] = {
    "function", "return", "if", "else", "for", "while", "do", "switch", "case", "default",
    "break", "continue", "var", "let", "const", "new", "delete", "typeof", "instanceof", "in",
    "of", "class", "extends", "super", "this", "import", "export", "from", "as", "async",
    "await", "yield", "try", "catch", "finally", "throw", "true", "false", "null", "undefined",
    "interface", "type", NULL};
static const char *const js_ty[] = {
    "Array", "Object", "String", "Number", "Boolean", "Promise", "Map", "Set", "console",
    "string", "number", "boolean", "any", "void", NULL};
static const char *const rs_kw[] = {
    "fn", "let", "mut", "const", "static", "if", "else", "match", "for", "while", "loop", "in",
    "return", "break", "continue", "struct", "enum", "impl", "trait", "pub", "use", "mod",
    "crate", "self", "Self", "super", "where", "as", "ref", "move", "unsafe", "async", "await",
    "dyn", "type", "true", "false", "Some", "None", "Ok", "Err", NULL};
static const char *const rs_ty[] = {
    "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    "f32", "f64", "bool", "char", "str", "String", "Vec", "Option", "Result", "Box", NULL};
static const char *const go_kw[] = {
    "func", "package", "import", "return", "if", "else", "for", "range", "switch", "case",
    "default", "break", "continue", "go", "defer", "select", "chan", "map", "struct",
    "interface", "type", "var", "const", "fallthrough", "goto", "nil", "true", "false", NULL};
static const char *const go_ty[] = {
    "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "string", "byte", "rune", "bool", "error", "any", NULL};

static const hl_lang lang_table[] = {
    {"c", c_kw, c_ty, "//", "/*", "*/", "\"'", HLF_CHARLIT},
    {"python", py_kw, py_ty, "#", NULL, NULL, "\"'", HLF_TRIPLE},
    {"shell", sh_kw, NULL, "#", NULL, NULL, "\"'", HLF_HASH_WORD},
    {"json", json_kw, NULL, NULL, NULL, NULL, "\"", 0},
    {"javascript", js_kw, js_ty, "//", "/*", "*/", "\"'`", HLF_BACKTICK},
    {"rust", rs_kw, rs_ty, "//", "/*", "*/", "\"'", HLF_CHARLIT},
    {"go", go_kw, go_ty, "//", "/*", "*/", "\"'`", HLF_CHARLIT | HLF_BACKTICK},
    {"diff", NULL, NULL, NULL, NULL, NULL, "", HLF_DIFF},
};

/* What people write after the fence, mapped to a row above. */
static const struct { const char *alias; int lang; } alias_table[] = {
    {"c", 0}, {"h", 0}, {"cpp", 0}, {"c++", 0}, {"cc", 0}, {"cxx", 0}, {"hpp", 0},
    {"python", 1}, {"py", 1}, {"python3", 1},
    {"shell", 2}, {"sh", 2}, {"bash", 2}, {"zsh", 2}, {"console", 2}, {"shell-session", 2},
    {"json", 3}, {"jsonc", 3},
    {"javascript", 4}, {"js", 4}, {"jsx", 4}, {"mjs", 4}, {"typescript", 4}, {"ts", 4}, {"tsx", 4},
    {"rust", 5}, {"rs", 5},
    {"go", 6}, {"golang", 6},
    {"diff", 7}, {"patch", 7}, {"udiff", 7},
};

const hl_lang *hl_find(const char *name, size_t n)
{
    for (size_t i = 0; i < sizeof alias_table / sizeof alias_table[0]; i++) {
        const char *a = alias_table[i].alias;
        if (strlen(a) != n) continue;
        size_t k = 0;
        while (k < n && tolower((unsigned char)name[k]) == a[k]) k++;
        if (k == n) return &lang_table[alias_table[i].lang];
    }
    return NULL;
}

const char *hl_name(const hl_lang *l) { return l ? l->name : ""; }

/* Tokens are counted past cap so the caller can size a second call;
   `last` keeps merging right even then. */
typedef struct emitter { hl_token *out; int cap, n; hl_token last; } emitter;

static void emit(emitter *e, size_t off, size_t len, hl_class c)
{
    if (len == 0) return;
    if (e->n > 0 && e->last.cls == c && e->last.off + e->last.len == off) {
        e->last.len += len;
        if (e->n <= e->cap) e->out[e->n - 1].len = e->last.len;
        return;
    }
    e->last = (hl_token){off, len, c};
    if (e->n < e->cap) e->out[e->n] = e->last;
    e->n++;
}

static bool starts(const char *s, size_t n, size_t i, const char *w)
{
    size_t k = strlen(w);
    return k > 0 && i + k <= n && !memcmp(s + i, w, k);
}

static bool in_list(const char *const *list, const char *s, size_t n)
{
    for (int i = 0; list && list[i]; i++)
        if (strlen(list[i]) == n && !memcmp(list[i], s, n)) return true;
    return false;
}

static bool word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* Scans a string body from i to its closing delimiter; returns the end
   (after the delimiter) or n when the line ends first, with *closed. */
static size_t string_end(const char *s, size_t n, size_t i, const char *close, bool esc, bool *closed)
{
    size_t cl = strlen(close);
    while (i < n) {
        if (esc && s[i] == '\\') {
            i += 2;
            continue;
        }
        if (i + cl <= n && !memcmp(s + i, close, cl)) {
            *closed = true;
            return i + cl;
        }
        i++;
    }
    *closed = false;
    return n;
}

static hl_class diff_class(const char *s, size_t n)
{
    if (n == 0) return HL_PLAIN;
    if (starts(s, n, 0, "+++") || starts(s, n, 0, "---") || s[0] == '@' ||
        starts(s, n, 0, "diff ") || starts(s, n, 0, "index "))
        return HL_META;
    return s[0] == '+' ? HL_ADDED : s[0] == '-' ? HL_REMOVED : HL_PLAIN;
}

int hl_line(const hl_lang *l, hl_state *st, const char *s, size_t n, hl_token *out, int cap)
{
    emitter e = {out, cap, 0, {0, 0, HL_PLAIN}};
    if (!l) {
        emit(&e, 0, n, HL_PLAIN);
        return e.n;
    }
    if (l->flags & HLF_DIFF) {
        emit(&e, 0, n, diff_class(s, n));
        return e.n;
    }
    size_t i = 0;
    if (st->in) {                            /* continuing a comment or string */
        bool closed;
        size_t end = string_end(s, n, 0, st->close, st->in == 2, &closed);
        emit(&e, 0, end, st->in == 1 ? HL_COMMENT : HL_STRING);
        if (closed) st->in = 0;
        i = end;
    }
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        bool word_start = i == 0 || !word_char((unsigned char)s[i - 1]);
        if (l->line_comment && starts(s, n, i, l->line_comment) &&
            (!(l->flags & HLF_HASH_WORD) || i == 0 || isspace((unsigned char)s[i - 1]))) {
            emit(&e, i, n - i, HL_COMMENT);
            break;
        }
        if (l->block_open && starts(s, n, i, l->block_open)) {
            bool closed;
            size_t end = string_end(s, n, i + strlen(l->block_open), l->block_close, false, &closed);
            emit(&e, i, end - i, HL_COMMENT);
            if (!closed) {
                st->in = 1;
                snprintf(st->close, sizeof st->close, "%s", l->block_close);
            }
            i = end;
            continue;
        }
        if (c && strchr(l->quotes, c)) {
            char close[4] = {(char)c, 0};
            bool multi = (c == '`' && (l->flags & HLF_BACKTICK));
            if ((l->flags & HLF_TRIPLE) && i + 2 < n && s[i + 1] == (char)c && s[i + 2] == (char)c) {
                memset(close, c, 3);
                multi = true;
            }
            if (c == '\'' && (l->flags & HLF_CHARLIT)) {
                /* 'x', '\n', '\u{..}' are literals; a lone ' (a Rust lifetime) is not */
                size_t j = i + 1;
                if (j < n && s[j] == '\\') {
                    j += 2;
                    while (j < n && j < i + 12 && s[j] != '\'') j++;
                } else {
                    j++;
                    while (j < n && ((unsigned char)s[j] & 0xC0) == 0x80) j++;
                }
                if (j < n && s[j] == '\'') {
                    emit(&e, i, j + 1 - i, HL_STRING);
                    i = j + 1;
                } else {
                    emit(&e, i, 1, HL_PLAIN);
                    i++;
                }
                continue;
            }
            bool closed;
            size_t open = strlen(close);
            size_t end = string_end(s, n, i + open, close, c != '`' || !(l->flags & HLF_CHARLIT), &closed);
            emit(&e, i, end - i, HL_STRING);
            if (!closed && multi) {
                st->in = 2;
                memcpy(st->close, close, sizeof close);
            }
            i = end;
            continue;
        }
        if (word_start && (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1])))) {
            size_t j = i + 1;
            while (j < n && (word_char((unsigned char)s[j]) || s[j] == '.' ||
                             ((s[j] == '+' || s[j] == '-') && (s[j - 1] == 'e' || s[j - 1] == 'E') &&
                              !(s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')))))
                j++;
            emit(&e, i, j - i, HL_NUMBER);
            i = j;
            continue;
        }
        if (word_start && (word_char(c) || c == '#')) {
            size_t j = i + 1;
            while (j < n && word_char((unsigned char)s[j])) j++;
            hl_class k = in_list(l->keywords, s + i, j - i) ? HL_KEYWORD
                       : in_list(l->types, s + i, j - i) ? HL_TYPE : HL_PLAIN;
            emit(&e, i, j - i, k);
            i = j;
            continue;
        }
        emit(&e, i, 1, HL_PLAIN);
        i++;
    }
    return e.n;
}
