/* The chat's template: the GGUF's Jinja template first, the built-in
   family as the named fallback (chat_template.h).

   Control tokens come only from the template's own text.  Before a render
   every control-token string inside a message's content (and any byte
   sequence that looks like our placeholder) is swapped for a placeholder,
   U+FDD0 <index> U+FDD1: noncharacters no template or tokenizer gives a
   meaning, so the template's string methods (trim, split on </think>,
   replace) still see the real text around them.  After the render the
   placeholders turn back into the user's bytes, marked in the mask, so the
   tokenizer reads them as plain text. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "mtext.h"
#include "ember.h"

#define PH_OPEN "\xEF\xB7\x90"    /* U+FDD0 */
#define PH_CLOSE "\xEF\xB7\x91"   /* U+FDD1 */
#define PH_LEN 3
#define REPLY_MARK "EmberReplyMark"

struct ember_chat_template {
    jinja_template *parsed;        /* NULL: no template, or it does not parse */
    char *jinja;
    ember_chat_kind kind;          /* the fallback */
    char *default_system;          /* the fallback's, as the template would add */
    const ember_tokenizer *tok;
    const char *const *controls;
    char *bos, *eos;
    bool strip_bos;
    bool has_now;
    struct tm now;
    jinja_limits limits;
    char parse_fail[600];          /* why the template never renders ("" when it may) */
    char name[768];
    bool is_jinja;
    bool opens_think;
    int think;                     /* enable_thinking: -1 undefined, 0 false, 1 true */
    int32_t eot;
    char eot_text[64];
};

/* ---- placeholders ------------------------------------------------------ */

typedef struct {
    const char *p;                 /* into a message's content */
    size_t n;
} span;

typedef struct {
    span *s;
    size_t n, cap;
    bool oom;
} spans;

/* The earliest control string in s[0..len): offset and length, -1 when none. */
static long find_control(const ember_chat_template *t, const char *s, size_t len, size_t *n)
{
    long best = -1;
    if (t->tok) {
        best = ember_tok_find_control(t->tok, s, len, n, NULL);
    } else if (t->controls) {
        for (const char *const *c = t->controls; *c; c++) {
            size_t cl = strlen(*c);
            if (!cl) continue;
            const char *hit = memmem(s, len, *c, cl);
            if (hit && (best < 0 || hit - s < best || (hit - s == best && cl > *n))) {
                best = hit - s;
                *n = cl;
            }
        }
    }
    const char *ph = memmem(s, len, PH_OPEN, PH_LEN);
    if (ph && (best < 0 || ph - s < best)) {
        best = ph - s;
        *n = PH_LEN;
    }
    return best;
}

/* content with its control strings as placeholders (malloc'd). */
static char *escape(const ember_chat_template *t, const char *content, spans *sp)
{
    ember_mtext b = {0};
    size_t len = strlen(content), at = 0;
    ember_mtext_put(&b, "", 0, 0);
    while (at < len && !b.oom) {
        size_t n = 0;
        long off = find_control(t, content + at, len - at, &n);
        if (off < 0) {
            ember_mtext_put(&b, content + at, len - at, 0);
            break;
        }
        ember_mtext_put(&b, content + at, (size_t)off, 0);
        if (sp->n == sp->cap) {
            size_t nc = sp->cap ? sp->cap * 2 : 16;
            span *ns = realloc(sp->s, nc * sizeof *ns);
            if (!ns) {
                sp->oom = true;
                break;
            }
            sp->s = ns;
            sp->cap = nc;
        }
        sp->s[sp->n] = (span){content + at + off, n};
        char ph[32];
        int k = snprintf(ph, sizeof ph, PH_OPEN "%zu" PH_CLOSE, sp->n);
        sp->n++;
        ember_mtext_put(&b, ph, (size_t)k, 0);
        at += (size_t)off + n;
    }
    free(b.m);
    if (b.oom || sp->oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* The rendered text with the placeholders turned back into the user's
   bytes (marked); whatever else looks like one is the template's. */
static bool unescape(const char *r, size_t len, const spans *sp, ember_mtext *out)
{
    size_t at = 0;
    while (at < len) {
        const char *ph = memmem(r + at, len - at, PH_OPEN, PH_LEN);
        if (!ph) {
            ember_mtext_put(out, r + at, len - at, 0);
            break;
        }
        ember_mtext_put(out, r + at, (size_t)(ph - (r + at)), 0);
        const char *d = ph + PH_LEN, *end = r + len;
        size_t idx = 0, nd = 0;
        while (d < end && *d >= '0' && *d <= '9' && nd < 12) idx = idx * 10 + (size_t)(*d++ - '0'), nd++;
        if (nd && (size_t)(end - d) >= PH_LEN && !memcmp(d, PH_CLOSE, PH_LEN) && idx < sp->n) {
            ember_mtext_put(out, sp->s[idx].p, sp->s[idx].n, 1);
            at = (size_t)(d + PH_LEN - r);
        } else {
            ember_mtext_put(out, ph, PH_LEN, 0);
            at = (size_t)(ph + PH_LEN - r);
        }
    }
    return !out->oom;
}

/* ---- rendering ---------------------------------------------------------- */

static void set_reason(char *dst, size_t cap, const jinja_error *e)
{
    char raw[640];
    if (e->status == JINJA_ERR_RAISED)
        snprintf(raw, sizeof raw, "%s", e->msg[0] ? e->msg : "raise_exception");
    else if (e->line > 0)
        snprintf(raw, sizeof raw, "%s at line %d: %s", jinja_status_name(e->status), e->line, e->msg);
    else
        snprintf(raw, sizeof raw, "%s: %s", jinja_status_name(e->status), e->msg);
    /* a template's message goes to a terminal: one clean line */
    ember_text_clean(dst, cap, raw, strlen(raw), 0);
}

/* Renders with the GGUF template; NULL with *why set when it fails. */
static char *render_jinja(ember_chat_template *t, const ember_chat_msg *msgs, size_t n, bool gen,
                          uint8_t **mask, char *why, size_t why_cap)
{
    jinja_error e = {0};
    spans sp = {0};
    char *out = NULL, *text = NULL;
    ember_mtext b = {0};
    jinja_msg *jm = calloc(n + 1, sizeof *jm);
    char **esc = calloc(n + 1, sizeof *esc);
    jinja_vars *v = jinja_vars_new();
    if (!jm || !esc || !v) goto oom;
    for (size_t i = 0; i < n; i++) {
        esc[i] = escape(t, msgs[i].content ? msgs[i].content : "", &sp);
        if (!esc[i]) goto oom;
        jm[i].role = msgs[i].role ? msgs[i].role : "user";
        jm[i].content = esc[i];
    }
    if (jinja_vars_set_messages(v, jm, n, &e) || jinja_vars_set_bool(v, "add_generation_prompt", gen, &e) ||
        (t->bos && jinja_vars_set_string(v, "bos_token", t->bos, &e)) ||
        (t->eos && jinja_vars_set_string(v, "eos_token", t->eos, &e)) ||
        (t->think >= 0 && jinja_vars_set_bool(v, "enable_thinking", t->think > 0, &e))) {
        set_reason(why, why_cap, &e);
        goto done;
    }
    jinja_render_opts ro = {t->has_now ? &t->now : NULL, t->limits};
    size_t len = 0;
    text = jinja_render(t->parsed, v, &ro, &len, &e);
    if (!text) {
        set_reason(why, why_cap, &e);
        goto done;
    }
    const char *start = text;
    /* the tokenizer adds BOS itself: a template's own would double it */
    size_t bl = t->bos ? strlen(t->bos) : 0;
    if (t->strip_bos && bl && len >= bl && !memcmp(text, t->bos, bl)) start += bl, len -= bl;
    ember_mtext_put(&b, "", 0, 0);
    if (!unescape(start, len, &sp, &b)) goto oom;
    out = b.p;
    if (mask) *mask = b.m;
    else free(b.m);
    b.p = NULL;
    b.m = NULL;
    goto done;
oom:
    snprintf(why, why_cap, "out of memory");
done:
    ember_mtext_free(&b);
    free(text);
    for (size_t i = 0; esc && i < n; i++) free(esc[i]);
    free(esc);
    free(jm);
    free(sp.s);
    jinja_vars_free(v);
    return out;
}

static char *render_builtin(ember_chat_template *t, const ember_chat_msg *msgs, size_t n, bool gen,
                            uint8_t **mask)
{
    if (!t->default_system || (n && msgs[0].role && !strcmp(msgs[0].role, "system")))
        return ember_chat_render_masked(t->kind, msgs, n, gen, mask);
    /* as the model's own template would: some (Qwen2.5) insert a default
       system message when the conversation has none */
    ember_chat_msg *m = calloc(n + 1, sizeof *m);
    if (!m) return NULL;
    m[0] = (ember_chat_msg){"system", t->default_system};
    if (n) memcpy(m + 1, msgs, n * sizeof *m);
    char *s = ember_chat_render_masked(t->kind, m, n + 1, gen, mask);
    free(m);
    return s;
}

/* Templates that refuse a system role (Gemma 2: "System role not
   supported") get it as the start of the first user message, as their
   model cards advise: still the model's own format. */
static char *render_folded(ember_chat_template *t, const ember_chat_msg *msgs, size_t n, bool gen,
                           uint8_t **mask)
{
    if (n < 2 || !msgs[0].role || strcmp(msgs[0].role, "system") || !msgs[1].role || strcmp(msgs[1].role, "user"))
        return NULL;
    const char *sys = msgs[0].content ? msgs[0].content : "", *u = msgs[1].content ? msgs[1].content : "";
    size_t ls = strlen(sys), lu = strlen(u);
    char *merged = malloc(ls + lu + 3);
    ember_chat_msg *m = calloc(n - 1, sizeof *m);
    char *s = NULL, why[600];
    if (merged && m) {
        memcpy(merged, sys, ls);
        memcpy(merged + ls, "\n\n", 2);
        memcpy(merged + ls + 2, u, lu + 1);
        m[0] = (ember_chat_msg){"user", merged};
        if (n > 2) memcpy(m + 1, msgs + 2, (n - 2) * sizeof *m);
        s = render_jinja(t, m, n - 1, gen, mask, why, sizeof why);
    }
    free(m);
    free(merged);
    return s;
}

static bool ends_in_think(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\r' || s[n - 1] == '\t')) n--;
    return n >= 7 && !memcmp(s + n - 7, "<think>", 7);
}

static char *render_any(ember_chat_template *t, const ember_chat_msg *msgs, size_t n,
                        bool add_generation_prompt, uint8_t **user_mask);

/* The answer of a reply the chat keeps in the <think> form: past the
   closing </think> and the blanks after it ("" while the thinking never
   closed); the whole reply when it does not open with <think>. */
static const char *answer_of(const char *c)
{
    const char *p = c;
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    if (strncmp(p, "<think>", 7)) return c;
    const char *e = strstr(p + 7, "</think>");
    if (!e) return "";
    e += 8;
    while (*e == ' ' || *e == '\n' || *e == '\r' || *e == '\t') e++;
    return e;
}

char *ember_chat_template_render(ember_chat_template *t, const ember_chat_msg *msgs, size_t n,
                                 bool add_generation_prompt, uint8_t **user_mask)
{
    /* A reply's reasoning is the model's scratch: templates that know the
       <think> form (Qwen3, DeepSeek-R1: they split on </think>) get the
       whole reply, any other the answer only (gpt-oss's drops its
       analysis from earlier turns the same way, from its own field), as a
       chat server passes reasoning apart from the content. */
    ember_chat_msg *own = NULL;
    if (!(t->jinja && strstr(t->jinja, "</think>")) && n) {
        own = malloc(n * sizeof *own);
        if (!own) return NULL;
        for (size_t i = 0; i < n; i++) {
            own[i] = msgs[i];
            if (msgs[i].role && !strcmp(msgs[i].role, "assistant") && msgs[i].content)
                own[i].content = answer_of(msgs[i].content);
        }
        msgs = own;
    }
    char *s = render_any(t, msgs, n, add_generation_prompt, user_mask);
    free(own);
    t->opens_think = add_generation_prompt && ends_in_think(s);
    return s;
}

bool ember_chat_template_opens_think(const ember_chat_template *t) { return t->opens_think; }

bool ember_chat_template_set_thinking(ember_chat_template *t, int mode)
{
    t->think = mode < 0 ? -1 : mode > 0;
    /* the switch is a variable the template reads: one that never names it
       (or that does not parse, so a built-in family renders) has none */
    return t->parsed && t->jinja && strstr(t->jinja, "enable_thinking");
}

static char *render_any(ember_chat_template *t, const ember_chat_msg *msgs, size_t n,
                        bool add_generation_prompt, uint8_t **user_mask)
{
    if (user_mask) *user_mask = NULL;
    const char *fam = ember_chat_kind_name(t->kind);
    if (t->parsed) {
        char why[600] = "";
        char *s = render_jinja(t, msgs, n, add_generation_prompt, user_mask, why, sizeof why);
        if (s) {
            t->is_jinja = true;
            snprintf(t->name, sizeof t->name, "gguf (jinja)");
            return s;
        }
        if ((s = render_folded(t, msgs, n, add_generation_prompt, user_mask))) {
            t->is_jinja = true;
            snprintf(t->name, sizeof t->name, "gguf (jinja; the system prompt opens the first message: %s)", why);
            return s;
        }
        snprintf(t->name, sizeof t->name, "%s (fallback: the GGUF template failed: %s)", fam, why);
    } else if (t->parse_fail[0]) {
        snprintf(t->name, sizeof t->name, "%s (fallback: the GGUF template failed: %s)", fam, t->parse_fail);
    } else {
        snprintf(t->name, sizeof t->name, "%s (built-in: the file has no chat template)", fam);
    }
    t->is_jinja = false;
    return render_builtin(t, msgs, n, add_generation_prompt, user_mask);
}

const char *ember_chat_template_name(const ember_chat_template *t) { return t->name; }
bool ember_chat_template_is_jinja(const ember_chat_template *t) { return t->is_jinja; }

int32_t ember_chat_template_eot(const ember_chat_template *t, const char **text)
{
    if (text) *text = t->eot >= 0 ? t->eot_text : NULL;
    return t->eot;
}

/* The control token right after a rendered assistant reply (whitespace
   skipped): what the model writes to end its turn. */
static void derive_eot(ember_chat_template *t, const char *s)
{
    const char *p = s ? strstr(s, REPLY_MARK) : NULL;
    if (!p || !t->tok) return;
    p += sizeof REPLY_MARK - 1;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    size_t n = 0;
    int32_t id = -1;
    if (ember_tok_find_control(t->tok, p, strlen(p), &n, &id) != 0) return;
    t->eot = id;
    snprintf(t->eot_text, sizeof t->eot_text, "%.*s", (int)(n < 60 ? n : 60), p);
}

/* A first render at creation names the template in use before the first
   turn and finds the end-of-turn token. */
static void probe(ember_chat_template *t)
{
    static const ember_chat_msg conv[] = {{"user", "Hi"}, {"assistant", REPLY_MARK}};
    static const ember_chat_msg conv_sys[] = {{"system", "S"}, {"user", "Hi"}, {"assistant", REPLY_MARK}};
    char *s = ember_chat_template_render(t, conv, 2, false, NULL);
    if (!t->is_jinja && t->parsed) {
        /* some templates want a system message first */
        free(s);
        s = ember_chat_template_render(t, conv_sys, 3, false, NULL);
    }
    derive_eot(t, s);
    free(s);
}

static char *dup_or_null(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

ember_chat_template *ember_chat_template_new(const ember_chat_template_opts *o)
{
    ember_chat_template *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->eot = -1;
    t->tok = o->tok;
    t->controls = o->controls;
    t->limits = o->limits;
    t->think = -1;
    if (o->now) {
        t->now = *o->now;
        t->has_now = true;
    }
    if (o->tok) {
        int32_t b = ember_tok_bos(o->tok), e = ember_tok_eos(o->tok);
        t->bos = dup_or_null(b >= 0 ? ember_token_text(o->tok, b) : NULL);
        t->eos = dup_or_null(e >= 0 ? ember_token_text(o->tok, e) : NULL);
        t->strip_bos = ember_tok_add_bos(o->tok);
    } else {
        t->bos = dup_or_null(o->bos);
        t->eos = dup_or_null(o->eos);
        t->strip_bos = o->strip_bos;
    }
    int known = 0;
    t->kind = ember_chat_detect(o->jinja, &known);
    if (!known && o->tok) {
        /* a template we cannot read: the vocabulary's markers tell the family */
        if (ember_tok_find(o->tok, "<|start_header_id|>") >= 0) t->kind = EMBER_CHAT_LLAMA3;
        else if (ember_tok_find(o->tok, "<|im_start|>") >= 0) t->kind = EMBER_CHAT_CHATML;
        else if (ember_tok_find(o->tok, "[INST]") >= 0) t->kind = EMBER_CHAT_LLAMA2;
    }
    if (o->jinja) {
        t->jinja = dup_or_null(o->jinja);
        t->default_system = ember_chat_default_system(o->jinja);
        jinja_error e = {0};
        t->parsed = t->jinja ? jinja_parse(t->jinja, strlen(t->jinja), &e) : NULL;
        if (!t->parsed) set_reason(t->parse_fail, sizeof t->parse_fail, &e);
        if (!t->parse_fail[0] && !t->parsed) snprintf(t->parse_fail, sizeof t->parse_fail, "out of memory");
    }
    probe(t);
    return t;
}

void ember_chat_template_free(ember_chat_template *t)
{
    if (!t) return;
    jinja_template_free(t->parsed);
    free(t->jinja);
    free(t->default_system);
    free(t->bos);
    free(t->eos);
    free(t);
}
