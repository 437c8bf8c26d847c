/* The chat's template choice: the GGUF's Jinja template when it renders,
   the named built-in fallback when it is absent or fails, the mask that
   keeps message contents from making control tokens, and the end-of-turn
   token derived from the template. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "chat_template.h"
#include "gguf.h"
#include "tap.h"
#include "tokenizer.h"

static const char *const CONTROLS[] = {"<|im_start|>", "<|im_end|>", "<s>", NULL};

static const char CHATML[] =
    "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

static ember_chat_template *make(const char *jinja, const char *bos, bool strip_bos)
{
    ember_chat_template_opts o = {.jinja = jinja, .bos = bos, .eos = "</s>", .strip_bos = strip_bos,
                                  .controls = CONTROLS};
    return ember_chat_template_new(&o);
}

/* The mask is 1 exactly over [a, a + n) of s (and 0 elsewhere). */
static bool mask_is(const char *s, const uint8_t *m, const char *marked)
{
    size_t len = strlen(s);
    const char *at = marked ? strstr(s, marked) : NULL;
    size_t a = at ? (size_t)(at - s) : len, n = at ? strlen(marked) : 0;
    for (size_t i = 0; i < len; i++)
        if ((m ? m[i] : 0) != (i >= a && i < a + n)) return false;
    return true;
}

static void test_jinja_used(void)
{
    ember_chat_template *t = make(CHATML, NULL, false);
    tap_ok(!strcmp(ember_chat_template_name(t), "gguf (jinja)") && ember_chat_template_is_jinja(t),
           "a template that renders is used: %s", ember_chat_template_name(t));
    ember_chat_msg m[] = {{"system", "Be brief."}, {"user", "Hi"}};
    uint8_t *mask = NULL;
    char *s = ember_chat_template_render(t, m, 2, true, &mask);
    tap_ok(s && !strcmp(s, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                           "<|im_start|>assistant\n"),
           "system, user and the generation prompt rendered by the template");
    tap_ok(s && mask_is(s, mask, NULL), "no control string in the contents: nothing masked");
    free(s);
    free(mask);
    ember_chat_template_free(t);
}

static void test_mask(void)
{
    ember_chat_template *t = make(CHATML, NULL, false);
    ember_chat_msg m[] = {{"user", "a<|im_end|>b"}};
    uint8_t *mask = NULL;
    char *s = ember_chat_template_render(t, m, 1, true, &mask);
    const char *want = "<|im_start|>user\na<|im_end|>b<|im_end|>\n<|im_start|>assistant\n";
    tap_ok(s && !strcmp(s, want), "a typed <|im_end|> comes out as typed");
    const char *typed = s ? strstr(s, "a<|im_end|>") : NULL;
    bool ok = typed && mask;
    for (size_t i = 0; ok && s[i]; i++) {
        bool in = s + i >= typed + 1 && s + i < typed + 11;
        ok = mask[i] == in;
    }
    tap_ok(ok, "the mask covers the typed control token and nothing of the template's");
    free(s);
    free(mask);

    /* the template may transform contents: the placeholder survives |trim
       and split(), so the text stays the user's */
    static const char split[] =
        "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content.split('</think>')[-1] | trim"
        " + '<|im_end|>\\n' }}{% endfor %}";
    ember_chat_template *t2 = make(split, NULL, false);
    ember_chat_msg m2[] = {{"assistant", "<think>why<|im_start|></think>\n  x <|im_start|> y  "}};
    s = ember_chat_template_render(t2, m2, 1, false, &mask);
    tap_ok(s && !strcmp(s, "<|im_start|>assistant\nx <|im_start|> y<|im_end|>\n") && mask &&
               !memchr(mask, 1, 23) && mask_is(s + 23, mask + 23, "<|im_start|>"),
           "split('</think>') and trim see the text; the typed token stays masked");
    free(s);
    free(mask);
    ember_chat_template_free(t2);

    /* text that looks like a placeholder is the user's too */
    ember_chat_msg m3[] = {{"user", "\xEF\xB7\x90" "0" "\xEF\xB7\x91" " \xEF\xB7\x90" "99"}};
    s = ember_chat_template_render(t, m3, 1, false, &mask);
    tap_ok(s && !strcmp(s, "<|im_start|>user\n\xEF\xB7\x90" "0" "\xEF\xB7\x91 \xEF\xB7\x90" "99<|im_end|>\n"),
           "placeholder look-alikes in a message come out unchanged");
    free(s);
    free(mask);
    ember_chat_template_free(t);
}

/* Random contents built from control strings, placeholder bytes and text:
   every render gives back each content verbatim, and only the control
   strings typed inside it are masked. */
static void test_random_contents(void)
{
    static const char *const parts[] = {"<|im_end|>", "<|im_start|>", "<s>", "\xEF\xB7\x90", "\xEF\xB7\x91",
                                        "7", "<|im_", "end|>", "x", " ", "\n", "\xFF"};
    ember_chat_template *t = make("{% for m in messages %}[{{ m.content }}]{% endfor %}", NULL, false);
    uint64_t seed = 12345;
    bool ok = true;
    int round;
    for (round = 0; round < 500 && ok; round++) {
        char content[256] = "";
        int k = (int)((seed >> 33) % 12);
        for (int i = 0; i < k; i++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            strcat(content, parts[(seed >> 33) % (sizeof parts / sizeof parts[0])]);
        }
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        ember_chat_msg m[] = {{"user", content}};
        uint8_t *mask = NULL;
        char *out = ember_chat_template_render(t, m, 1, false, &mask);
        size_t n = strlen(content);
        ok = out && strlen(out) == n + 2 && out[0] == '[' && !memcmp(out + 1, content, n) && out[n + 1] == ']';
        /* masked exactly where a control string starts inside the content */
        for (size_t i = 1; ok && i <= n;) {
            size_t cl = 0;
            for (const char *const *c = CONTROLS; *c; c++)
                if (!strncmp(out + i, *c, strlen(*c)) && strlen(*c) > cl) cl = strlen(*c);
            if (!cl) {
                ok = !mask || !mask[i] || !memcmp(out + i, "\xEF\xB7\x90", 3);
                i += ok && mask && mask[i] ? 3 : 1;
                continue;
            }
            for (size_t j = 0; j < cl; j++) ok = ok && mask && mask[i + j];
            i += cl;
        }
        ok = ok && (!mask || (!mask[0] && !mask[n + 1]));
        if (!ok) tap_diag("round %d: content '%s' -> '%s'", round, content, out ? out : "(null)");
        free(out);
        free(mask);
    }
    tap_ok(ok, "500 random contents come back verbatim, their control strings (only) masked");
    ember_chat_template_free(t);
}

static void test_fallback(void)
{
    ember_chat_msg m[] = {{"user", "Hi"}};
    char *want = ember_chat_render(EMBER_CHAT_CHATML, m, 1, 1);

    ember_chat_template *t = make(NULL, NULL, false);
    char *s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(s && want && !strcmp(s, want) &&
               !strcmp(ember_chat_template_name(t), "chatml (built-in: the file has no chat template)"),
           "no template: the built-in ChatML, named so (%s)", ember_chat_template_name(t));
    free(s);
    ember_chat_template_free(t);

    t = make("{{ raise_exception('roles must alternate') }}<|im_start|>", NULL, false);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(s && want && !strcmp(s, want) && !ember_chat_template_is_jinja(t) &&
               !strcmp(ember_chat_template_name(t),
                       "chatml (fallback: the GGUF template failed: roles must alternate)"),
           "raise_exception: the fallback is named with the message (%s)", ember_chat_template_name(t));
    free(s);
    ember_chat_template_free(t);

    t = make("{{ '<|start_header_id|>' }}\n{% for m in messages %}{{ m.content }", NULL, false);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    char *want3 = ember_chat_render(EMBER_CHAT_LLAMA3, m, 1, 1);
    const char *name = ember_chat_template_name(t);
    tap_ok(s && want3 && !strcmp(s, want3) && !strncmp(name, "llama3 (fallback: the GGUF template failed: TemplateSyntaxError at line 2", 73),
           "a syntax error: the recognised family renders, the error is named (%s)", name);
    free(s);
    free(want3);
    ember_chat_template_free(t);

    ember_chat_template_opts o = {.jinja = "{% for i in range(100000) %}{{ i }}{% endfor %}<|im_start|>",
                                  .controls = CONTROLS, .limits = {.max_steps = 1000}};
    t = ember_chat_template_new(&o);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    name = ember_chat_template_name(t);
    tap_ok(s && want && !strcmp(s, want) && strstr(name, "chatml (fallback: the GGUF template failed: SecurityError"),
           "the step budget: fallback named (%s)", name);
    free(s);
    ember_chat_template_free(t);

    /* a template that fails only on some conversations falls back for
       those and is used again when it renders */
    t = make("{% if messages|length > 1 %}{{ raise_exception('one message only') }}{% endif %}" "x{{ messages[0].content }}",
             NULL, false);
    ember_chat_msg two[] = {{"user", "Hi"}, {"assistant", "Yo"}};
    s = ember_chat_template_render(t, two, 2, true, NULL);
    bool fell = s && strstr(ember_chat_template_name(t), "one message only");
    free(s);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(fell && s && !strcmp(s, "xHi") && ember_chat_template_is_jinja(t),
           "a failure is per render: the next one uses the template again");
    free(s);
    ember_chat_template_free(t);
    free(want);
}

/* Gemma 2's kind: a template that refuses a system role gets the system
   prompt at the start of the first user message, and still renders. */
static void test_system_folded(void)
{
    ember_chat_template *t =
        make("{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
             "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}", NULL, false);
    ember_chat_msg m[] = {{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Yo"}, {"user", "Again"}};
    char *s = ember_chat_template_render(t, m, 4, true, NULL);
    const char *name = ember_chat_template_name(t);
    tap_ok(s && !strcmp(s, "<user>Be brief.\n\nHi<assistant>Yo<user>Again") && ember_chat_template_is_jinja(t) &&
               !strcmp(name, "gguf (jinja; the system prompt opens the first message: System role not supported)"),
           "a refused system role opens the first user message (%s)", name);
    free(s);
    s = ember_chat_template_render(t, m + 1, 3, true, NULL);
    tap_ok(s && !strcmp(s, "<user>Hi<assistant>Yo<user>Again") && !strcmp(ember_chat_template_name(t), "gguf (jinja)"),
           "without a system prompt the template renders as it is");
    free(s);
    ember_chat_template_free(t);
}

static void test_bos(void)
{
    static const char tmpl[] = "{{ bos_token }}{% for m in messages %}[{{ m.content }}]{% endfor %}";
    ember_chat_msg m[] = {{"user", "Hi"}};
    ember_chat_template *t = make(tmpl, "<s>", true);
    char *s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(s && !strcmp(s, "[Hi]"), "the template's BOS is dropped when the tokenizer adds one ('%s')", s ? s : "");
    free(s);
    ember_chat_template_free(t);
    t = make(tmpl, "<s>", false);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(s && !strcmp(s, "<s>[Hi]"), "and kept when it does not ('%s')", s ? s : "");
    free(s);
    ember_chat_template_free(t);
}

/* The fixture vocabularies: their own templates render, and the
   end-of-turn token is the one each writes after a reply. */
static void test_fixtures(void)
{
    static const struct { const char *file, *eot; } fx[] = {
        {"fixtures/tokenizers/llama3-bpe.gguf", "<|eot_id|>"},
        {"fixtures/tokenizers/qwen2-bpe.gguf", "<|im_end|>"},
        {"fixtures/tokenizers/gemma3-spm.gguf", "<end_of_turn>"},
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        char path[1024];
        if (!tap_shared(fx[i].file, path, sizeof path)) {
            for (int k = 0; k < 3; k++) tap_skip("fixture tokenizers absent");
            continue;
        }
        ember_err err;
        gguf_file *f = gguf_open(path, &err);
        ember_tokenizer *tok = f ? ember_tokenizer_load(f, &err) : NULL;
        char *tmpl = f ? gguf_get_strdup(f, "tokenizer.chat_template") : NULL;
        /* the search the placeholders rest on: earliest, whole token */
        char probe[128];
        snprintf(probe, sizeof probe, "ab <x> %s c %s", fx[i].eot, fx[i].eot);
        size_t fl = 0;
        int32_t fid = -1;
        long at = tok ? ember_tok_find_control(tok, probe, strlen(probe), &fl, &fid) : -2;
        tap_ok(at == 7 && fl == strlen(fx[i].eot) && fid == ember_tok_find(tok, fx[i].eot) &&
                   tok && ember_tok_find_control(tok, "plain text", 10, NULL, NULL) == -1,
               "%s: find_control finds the first %s (at %ld) and nothing in plain text", fx[i].file, fx[i].eot, at);
        ember_chat_template_opts o = {.jinja = tmpl, .tok = tok};
        ember_chat_template *t = tok ? ember_chat_template_new(&o) : NULL;
        const char *eot = NULL;
        int32_t id = t ? ember_chat_template_eot(t, &eot) : -1;
        tap_ok(t && ember_chat_template_is_jinja(t) && id >= 0 && id == ember_tok_find(tok, fx[i].eot) &&
                   eot && !strcmp(eot, fx[i].eot),
               "%s: the GGUF template is used, end of turn %s", fx[i].file, eot ? eot : "(none)");
        /* the typed token is masked: it tokenizes as text */
        ember_chat_msg m[] = {{"user", fx[i].eot}};
        uint8_t *mask = NULL;
        char *s = t ? ember_chat_template_render(t, m, 1, true, &mask) : NULL;
        /* as many as the template writes for a plain "x" */
        ember_chat_msg plain[] = {{"user", "x"}};
        char *s0 = t ? ember_chat_template_render(t, plain, 1, true, NULL) : NULL;
        int32_t ids[256];
        int n = s ? ember_tokenize_masked(tok, s, strlen(s), true, true, mask, ids, 256, &err) : -1;
        int count = 0, count0 = 0;
        for (int k = 0; k < n && k < 256; k++) count += ids[k] == id;
        int n0 = s0 ? ember_tokenize(tok, s0, strlen(s0), true, true, ids, 256, &err) : -1;
        for (int k = 0; k < n0 && k < 256; k++) count0 += ids[k] == id;
        tap_ok(n > 0 && n0 > 0 && count == count0, "%s: a typed %s is not the control token (%d of them, as for 'x')",
               fx[i].file, fx[i].eot, count);
        free(s);
        free(s0);
        free(mask);
        ember_chat_template_free(t);
        free(tmpl);
        ember_tokenizer_free(tok);
        if (f) gguf_close(f);
    }
}

/* Qwen3's template drops the thinking of earlier turns: re-rendering the
   conversation does so, and the common prefix with the cache is shorter. */
static void test_qwen3_thinking(void)
{
    char path[1024];
    if (!tap_shared("fixtures/templates/Qwen-Qwen3-0.6B.jinja", path, sizeof path)) {
        tap_skip("fixture templates absent");
        return;
    }
    FILE *f = fopen(path, "rb");
    char *src = calloc(1, 1 << 16);
    size_t n = f && src ? fread(src, 1, (1 << 16) - 1, f) : 0;
    if (f) fclose(f);
    ember_chat_template_opts o = {.jinja = n ? src : NULL, .controls = CONTROLS};
    ember_chat_template *t = ember_chat_template_new(&o);
    ember_chat_msg m[] = {{"user", "q1"}, {"assistant", "<think>\nreason one\n</think>\n\nanswer one"}, {"user", "q2"}};
    char *s = ember_chat_template_render(t, m, 3, true, NULL);
    tap_ok(s && ember_chat_template_is_jinja(t) && strstr(s, "answer one") && !strstr(s, "reason one"),
           "Qwen3: an earlier turn's thinking is dropped by the template");
    free(s);
    ember_chat_template_free(t);
    free(src);
}

/* A generation prompt that opens the thinking (DeepSeek-R1's "<think>\n"):
   the reply starts in it.  The R1-Distill fixture closes it again unless
   enable_thinking is set, which the chat does not. */
static void test_opens_think(void)
{
    ember_chat_template *t = make("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
                                  "{% if add_generation_prompt %}<assistant><think>\n{% endif %}", NULL, false);
    ember_chat_msg m[] = {{"user", "Hi"}};
    char *s = ember_chat_template_render(t, m, 1, true, NULL);
    bool opens = ember_chat_template_opens_think(t);
    free(s);
    s = ember_chat_template_render(t, m, 1, false, NULL);
    bool closed = !ember_chat_template_opens_think(t);
    free(s);
    ember_chat_template_free(t);
    ember_chat_template *c = make(CHATML, NULL, false);
    s = ember_chat_template_render(c, m, 1, true, NULL);
    tap_ok(opens && closed && !ember_chat_template_opens_think(c),
           "a generation prompt ending in <think> opens the thinking (without it, and for ChatML, nothing is open)");
    free(s);
    ember_chat_template_free(c);

    char path[1024];
    if (!tap_shared("fixtures/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", path, sizeof path)) {
        tap_skip("fixture templates absent");
        return;
    }
    FILE *f = fopen(path, "rb");
    char *src = calloc(1, 1 << 16);
    size_t n = f && src ? fread(src, 1, (1 << 16) - 1, f) : 0;
    if (f) fclose(f);
    ember_chat_template_opts o = {.jinja = n ? src : NULL, .controls = CONTROLS};
    t = ember_chat_template_new(&o);
    s = ember_chat_template_render(t, m, 1, true, NULL);
    tap_ok(s && strstr(s, "<think>\n</think>") && !ember_chat_template_opens_think(t),
           "R1-Distill: its prompt closes the thinking it opens (enable_thinking unset): nothing is open");
    free(s);
    ember_chat_template_free(t);
    free(src);
}

static char *read_fixture(const char *rel)
{
    char path[1024];
    if (!tap_shared(rel, path, sizeof path)) return NULL;
    FILE *f = fopen(path, "rb");
    char *src = f ? calloc(1, 1 << 16) : NULL;
    size_t n = src ? fread(src, 1, (1 << 16) - 1, f) : 0;
    if (f) fclose(f);
    if (!n) free(src), src = NULL;
    return src;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t a = s ? strlen(s) : 0, b = strlen(tail);
    return a >= b && !memcmp(s + a - b, tail, b);
}

/* A fixture template rendered for one user message with the switch left
   alone and then set to mode: the switch exists, and the set render holds
   `has` where the default one does not, or ends in `tail` where the
   default one does not. */
static void fixture_switch(const char *rel, int mode, const char *has, const char *tail, const char *what)
{
    char *src = read_fixture(rel);
    if (!src) {
        tap_skip("fixture templates absent");
        return;
    }
    ember_chat_template_opts o = {.jinja = src, .controls = CONTROLS};
    ember_chat_template *t = ember_chat_template_new(&o);
    ember_chat_msg m[] = {{"user", "Hi"}};
    char *dflt = ember_chat_template_render(t, m, 1, true, NULL);
    bool sw = ember_chat_template_set_thinking(t, mode);
    char *set = ember_chat_template_render(t, m, 1, true, NULL);
    bool ok = sw && dflt && set;
    if (ok && has) ok = !strstr(dflt, has) && strstr(set, has);
    if (ok && tail) ok = !ends_with(dflt, tail) && ends_with(set, tail);
    tap_ok(ok, "%s", what);
    free(dflt);
    free(set);
    ember_chat_template_free(t);
    free(src);
}

/* The reasoning switch (--reasoning, /set reasoning): enable_thinking is
   passed only when set, so "auto" keeps the template's own default; a
   template that never reads it says it has no switch. */
static void test_set_thinking(void)
{
    ember_chat_template *t = make("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
                                  "{% if add_generation_prompt %}<assistant>"
                                  "{% if enable_thinking is not defined %}[default]"
                                  "{% elif enable_thinking %}[on]{% else %}[off]{% endif %}{% endif %}",
                                  NULL, false);
    ember_chat_msg m[] = {{"user", "Hi"}};
    const char *want[] = {"<assistant>[default]", "<assistant>[off]", "<assistant>[on]", "<assistant>[default]"};
    int modes[] = {-1, 0, 1, -1};
    bool ok = true, has = true;
    for (int i = 0; i < 4; i++) {
        has = ember_chat_template_set_thinking(t, modes[i]) && has;
        char *s = ember_chat_template_render(t, m, 1, true, NULL);
        ok = ok && ends_with(s, want[i]);
        free(s);
    }
    ember_chat_template_free(t);
    tap_ok(ok && has, "enable_thinking: undefined (auto), false, true, and undefined again; the template has a switch");
    ember_chat_template *c = make(CHATML, NULL, false);
    tap_ok(!ember_chat_template_set_thinking(c, 0), "ChatML reads no enable_thinking: no switch");
    ember_chat_template_free(c);

    /* Qwen3 closes an empty thinking when it is off; Gemma 4 asks for its
       thought channel in the system turn when it is on */
    fixture_switch("fixtures/templates/Qwen-Qwen3-0.6B.jinja", 0, NULL, "<|im_start|>assistant\n<think>\n\n</think>\n\n",
                   "Qwen3: reasoning off closes an empty thinking in the generation prompt, as its template does");
    fixture_switch("fixtures/templates/google-gemma-4-31B-it.jinja", 1, "<|think|>", NULL,
                   "Gemma 4: reasoning on puts <|think|> in the system turn; by default it thinks not");
}

/* A reply kept in the <think> form (Qwen3's, or gpt-oss's translated,
   harmony.h) goes to a template that does not know that form as its
   answer only: the reasoning never reaches the prompt as text.  One that
   splits on </think> itself gets the reply whole. */
static void test_answer_only(void)
{
    ember_chat_msg m[] = {{"user", "q1"}, {"assistant", "<think>\nreason one\n</think>\n\nanswer one"},
                          {"user", "q2"}, {"assistant", "<think>\nnever closed"}, {"user", "q3"}};
    ember_chat_template *t = make(CHATML, NULL, false);
    char *s = ember_chat_template_render(t, m, 5, true, NULL);
    tap_ok(s && strstr(s, "<|im_start|>assistant\nanswer one<|im_end|>") && !strstr(s, "reason one") &&
               strstr(s, "<|im_start|>assistant\n<|im_end|>") && !strstr(s, "never closed"),
           "a template without </think>: an earlier reply's thinking is left out, an unclosed one leaves nothing");
    free(s);
    ember_chat_template_free(t);
    t = make("{% for m in messages %}{{ m.role }}:{{ m.content.split('</think>')[-1] }}|{{ m.content }};{% endfor %}", NULL,
             false);
    s = ember_chat_template_render(t, m, 2, false, NULL);
    tap_ok(s && strstr(s, "reason one"), "a template that splits on </think> gets the whole reply");
    free(s);
    ember_chat_template_free(t);
    ember_chat_template *b = make(NULL, NULL, false);
    s = ember_chat_template_render(b, m, 3, true, NULL);
    tap_ok(s && !strstr(s, "reason one") && strstr(s, "answer one"), "the built-in fallback gets the answer only");
    free(s);
    ember_chat_template_free(b);
}

int main(void)
{
    test_jinja_used();
    test_mask();
    test_random_contents();
    test_fallback();
    test_system_folded();
    test_bos();
    test_fixtures();
    test_qwen3_thinking();
    test_opens_think();
    test_set_thinking();
    test_answer_only();
    return tap_done();
}
