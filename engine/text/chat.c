/* Chat templates: the three families recognised from the Jinja source are
   rendered by hand, character for character as their templates produce
   them (minus the leading BOS, which the tokenizer adds). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "mtext.h"

ember_chat_kind ember_chat_detect(const char *jinja, int *known)
{
    ember_chat_kind k = EMBER_CHAT_CHATML;
    int ok = 0;
    if (jinja) {
        if (strstr(jinja, "<|start_header_id|>")) {
            k = EMBER_CHAT_LLAMA3;
            ok = 1;
        } else if (strstr(jinja, "<|im_start|>")) {
            k = EMBER_CHAT_CHATML;
            ok = 1;
        } else if (strstr(jinja, "[INST]")) {
            k = EMBER_CHAT_LLAMA2;
            ok = 1;
        }
    }
    if (known) *known = ok;
    return k;
}

const char *ember_chat_kind_name(ember_chat_kind k)
{
    switch (k) {
    case EMBER_CHAT_CHATML: return "chatml";
    case EMBER_CHAT_LLAMA3: return "llama3";
    case EMBER_CHAT_LLAMA2: return "llama2";
    }
    return "unknown";
}

/* The rendered text with its marks (mtext.h) and what put_n marks the
   bytes it adds as. */
typedef struct {
    ember_mtext t;
    bool user;
} buf;

void ember_mtext_put(ember_mtext *b, const char *s, size_t n, uint8_t mark)
{
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->n + n + 1) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) {
            b->oom = true;
            return;
        }
        b->p = q;
        uint8_t *qm = realloc(b->m, nc);
        if (!qm) {
            b->oom = true;
            return;
        }
        b->m = qm;
        b->cap = nc;
    }
    memcpy(b->p + b->n, s, n);
    memset(b->m + b->n, mark, n);
    b->n += n;
    b->p[b->n] = 0;
}

void ember_mtext_free(ember_mtext *b)
{
    free(b->p);
    free(b->m);
    memset(b, 0, sizeof *b);
}

static void put_n(buf *b, const char *s, size_t n) { ember_mtext_put(&b->t, s, n, b->user); }

static void put(buf *b, const char *s) { put_n(b, s, strlen(s)); }

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Jinja's |trim and Python's str.strip() on ASCII whitespace. */
static void put_trimmed(buf *b, const char *s)
{
    size_t n = strlen(s), a = 0;
    while (a < n && is_space(s[a])) a++;
    while (n > a && is_space(s[n - 1])) n--;
    put_n(b, s + a, n - a);
}

/* A message's content: its bytes are the user's. */
static void put_content(buf *b, const char *s, bool trim)
{
    b->user = true;
    if (trim) put_trimmed(b, s);
    else put(b, s);
    b->user = false;
}

static const char *str_or_empty(const char *s) { return s ? s : ""; }

static void render_llama2(buf *b, const ember_chat_msg *msgs, size_t n)
{
    /* The Llama 2 template folds a leading system message into the first
       user turn; later system messages have no place in it and are left
       out (the template itself raises an error on them). */
    const char *sys = NULL;
    size_t start = 0;
    if (n > 0 && msgs[0].role && !strcmp(msgs[0].role, "system")) {
        sys = str_or_empty(msgs[0].content);
        start = 1;
    }
    for (size_t i = start; i < n; i++) {
        const char *role = str_or_empty(msgs[i].role), *content = str_or_empty(msgs[i].content);
        bool first = i == start;
        if (!strcmp(role, "user")) {
            if (!first) put(b, "<s>");
            put(b, "[INST] ");
            if (first && sys) {
                /* strip() applies to "<<SYS>>...content": only the user
                   text's trailing and the whole's leading space go. */
                buf tmp = {0};
                put(&tmp, "<<SYS>>\n");
                put(&tmp, sys);
                put(&tmp, "\n<</SYS>>\n\n");
                put(&tmp, content);
                /* <<SYS>> is plain text in this vocabulary, so the whole
                   block may count as the user's */
                if (tmp.t.oom) b->t.oom = true;
                else put_content(b, tmp.t.p, true);
                free(tmp.t.p);
                free(tmp.t.m);
            } else {
                put_content(b, content, true);
            }
            put(b, " [/INST]");
        } else if (!strcmp(role, "assistant")) {
            put(b, " ");
            put_content(b, content, true);
            put(b, " </s>");
        }
    }
}

char *ember_chat_render(ember_chat_kind k, const ember_chat_msg *msgs, size_t n,
                        int add_generation_prompt)
{
    return ember_chat_render_masked(k, msgs, n, add_generation_prompt, NULL);
}

char *ember_chat_render_masked(ember_chat_kind k, const ember_chat_msg *msgs, size_t n,
                               int add_generation_prompt, uint8_t **user_mask)
{
    buf b = {0};
    put(&b, "");
    switch (k) {
    case EMBER_CHAT_LLAMA3:
        for (size_t i = 0; i < n; i++) {
            put(&b, "<|start_header_id|>");
            put(&b, str_or_empty(msgs[i].role));
            put(&b, "<|end_header_id|>\n\n");
            put_content(&b, str_or_empty(msgs[i].content), true);
            put(&b, "<|eot_id|>");
        }
        if (add_generation_prompt) put(&b, "<|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case EMBER_CHAT_LLAMA2:
        render_llama2(&b, msgs, n);
        break;
    case EMBER_CHAT_CHATML:
    default:
        for (size_t i = 0; i < n; i++) {
            put(&b, "<|im_start|>");
            put(&b, str_or_empty(msgs[i].role));
            put(&b, "\n");
            put_content(&b, str_or_empty(msgs[i].content), false);
            put(&b, "<|im_end|>\n");
        }
        if (add_generation_prompt) put(&b, "<|im_start|>assistant\n");
        break;
    }
    if (b.t.oom) {
        free(b.t.p);
        free(b.t.m);
        return NULL;
    }
    if (user_mask) *user_mask = b.t.m;
    else free(b.t.m);
    return b.t.p;
}

char *ember_chat_default_system(const char *jinja)
{
    /* Qwen2/2.5 templates emit a fixed system turn when the conversation
       has none: '<|im_start|>system\nYou are ...<|im_end|>\n' as a Jinja
       string literal (escapes written as backslash-n). */
    static const char open[] = "<|im_start|>system\\n";
    if (!jinja) return NULL;
    for (const char *p = strstr(jinja, open); p; p = strstr(p + 1, open)) {
        const char *s = p + sizeof open - 1;
        const char *e = strstr(s, "<|im_end|>");
        if (!e || e == s) continue;
        size_t n = (size_t)(e - s);
        if (memchr(s, '\'', n) || memchr(s, '"', n) || memchr(s, '{', n) || memchr(s, '\n', n)) continue;
        char *out = malloc(n + 1);
        if (!out) return NULL;
        memcpy(out, s, n);
        out[n] = 0;
        return out;
    }
    return NULL;
}
