/* Chat templates: family detection from Jinja text and the exact strings
   each family renders. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "chat.h"
#include "gguf.h"
#include "tap.h"

static void check(ember_chat_kind k, const ember_chat_msg *m, size_t n, int gen, const char *want, const char *what)
{
    char *got = ember_chat_render(k, m, n, gen);
    int ok = got && !strcmp(got, want);
    tap_ok(ok, "%s", what);
    if (!ok) {
        tap_diag("got:  [%s]", got ? got : "(null)");
        tap_diag("want: [%s]", want);
    }
    free(got);
}

static void test_detect(void)
{
    int known = -1;
    tap_ok(ember_chat_detect("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}", &known) ==
               EMBER_CHAT_LLAMA3 && known == 1, "Llama 3 headers detected");
    tap_ok(ember_chat_detect("{{'<|im_start|>' + message['role'] + '\\n'}}", &known) == EMBER_CHAT_CHATML && known == 1,
           "ChatML detected");
    tap_ok(ember_chat_detect("{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}", &known) ==
               EMBER_CHAT_LLAMA2 && known == 1, "[INST] detected");
    tap_ok(ember_chat_detect("{{ '### Human: ' + m }}", &known) == EMBER_CHAT_CHATML && known == 0,
           "unknown template falls back to ChatML, known = 0");
    known = -1;
    tap_ok(ember_chat_detect(NULL, &known) == EMBER_CHAT_CHATML && known == 0, "no template: ChatML, known = 0");
    tap_ok(!strcmp(ember_chat_kind_name(EMBER_CHAT_LLAMA3), "llama3") &&
               !strcmp(ember_chat_kind_name(EMBER_CHAT_CHATML), "chatml") &&
               !strcmp(ember_chat_kind_name(EMBER_CHAT_LLAMA2), "llama2"), "kind names");
}

static void test_render(void)
{
    const ember_chat_msg conv[] = {
        {"system", "You are terse."},
        {"user", "  Hi there\n"},
        {"assistant", "Hello."},
        {"user", "Bye"},
    };
    check(EMBER_CHAT_LLAMA3, conv, 4, 1,
          "<|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
          "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
          "<|start_header_id|>assistant<|end_header_id|>\n\n",
          "Llama 3: trimmed content, assistant header as generation prompt");
    check(EMBER_CHAT_LLAMA3, conv + 1, 1, 0, "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>",
          "Llama 3 without generation prompt");
    check(EMBER_CHAT_CHATML, conv, 4, 1,
          "<|im_start|>system\nYou are terse.<|im_end|>\n"
          "<|im_start|>user\n  Hi there\n<|im_end|>\n"
          "<|im_start|>assistant\nHello.<|im_end|>\n"
          "<|im_start|>user\nBye<|im_end|>\n"
          "<|im_start|>assistant\n",
          "ChatML: content verbatim, assistant prompt");
    check(EMBER_CHAT_LLAMA2, conv, 4, 1,
          "[INST] <<SYS>>\nYou are terse.\n<</SYS>>\n\n  Hi there [/INST] Hello. </s><s>[INST] Bye [/INST]",
          "Llama 2: system folded into the first [INST], later turns start with <s>");
    check(EMBER_CHAT_LLAMA2, conv + 1, 1, 1, "[INST] Hi there [/INST]", "Llama 2 without a system message");
    check(EMBER_CHAT_CHATML, NULL, 0, 1, "<|im_start|>assistant\n", "empty conversation: only the prompt");
    check(EMBER_CHAT_CHATML, NULL, 0, 0, "", "empty conversation, no prompt: empty string");
}

/* The mask marks exactly the content bytes, so a control token typed in a
   message cannot become one. */
static void test_mask(void)
{
    static const ember_chat_kind kinds[] = {EMBER_CHAT_LLAMA3, EMBER_CHAT_CHATML, EMBER_CHAT_LLAMA2};
    const ember_chat_msg conv[] = {
        {"user", "a<|eot_id|><|im_end|>[/INST]b"},
        {"assistant", "ok"},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        uint8_t *mask = NULL;
        char *s = ember_chat_render_masked(kinds[i], conv, 2, 1, &mask);
        bool ok = s && mask;
        if (ok) {
            const char *c = strstr(s, conv[0].content);
            size_t off = c ? (size_t)(c - s) : 0, n = strlen(conv[0].content), len = strlen(s);
            ok = c != NULL;
            for (size_t k = 0; ok && k < n; k++) ok = mask[off + k] == 1;
            /* every template byte outside the two contents is unmarked */
            const char *r = strstr(s + off + n, "ok");
            for (size_t k = 0; ok && k < len; k++) {
                bool in_content = (k >= off && k < off + n) || (r && k >= (size_t)(r - s) && k < (size_t)(r - s) + 2);
                if (!in_content && kinds[i] != EMBER_CHAT_LLAMA2) ok = mask[k] == 0;
            }
            if (kinds[i] == EMBER_CHAT_LLAMA2) ok = ok && strncmp(s, "[INST] ", 7) == 0 && mask[0] == 0;
        }
        tap_ok(ok, "%s: the user mask covers the content and nothing of the template",
               ember_chat_kind_name(kinds[i]));
        free(s);
        free(mask);
    }
}

static void test_default_system(void)
{
    const char *qwen25 = "{%- else %}\n{{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a "
                         "helpful assistant.<|im_end|>\\n' }}\n{%- endif %}";
    char *s = ember_chat_default_system(qwen25);
    tap_ok(s && !strcmp(s, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."),
           "Qwen2.5 default system message found (%s)", s ? s : "null");
    free(s);
    s = ember_chat_default_system("{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}");
    tap_ok(s == NULL, "a template that only copies the system message has no default");
    free(s);
}

/* The fixture vocabularies carry real templates: check they are detected. */
static void test_fixture_templates(void)
{
    static const struct { const char *file; ember_chat_kind want; } fx[] = {
        {"fixtures/tokenizers/llama3-bpe.gguf", EMBER_CHAT_LLAMA3},
        {"fixtures/tokenizers/qwen2-bpe.gguf", EMBER_CHAT_CHATML},
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        char path[1024];
        if (!tap_shared(fx[i].file, path, sizeof path)) {
            tap_skip("fixture tokenizers absent");
            continue;
        }
        ember_err err;
        gguf_file *f = gguf_open(path, &err);
        char *tmpl = f ? gguf_get_strdup(f, "tokenizer.chat_template") : NULL;
        int known = 0;
        ember_chat_kind k = ember_chat_detect(tmpl, &known);
        tap_ok(tmpl && known && k == fx[i].want, "%s: template detected as %s", fx[i].file, ember_chat_kind_name(k));
        free(tmpl);
        if (f) gguf_close(f);
    }
}

int main(void)
{
    test_detect();
    test_render();
    test_mask();
    test_default_system();
    test_fixture_templates();
    return tap_done();
}
