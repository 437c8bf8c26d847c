/* Tokenizer against the reference (ik_llama.cpp 8337e4c) where a
   differential sweep found Ember apart from it: token attributes the GGUF
   does not store, which the reference derives from token text and model
   name.  Every expected id list below is the reference's output
   (llama_tokenize, add_special false). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "tap.h"
#include "tokenizer.h"

typedef struct {
    const char *text;
    bool special;       /* parse_special */
    int32_t want[24];
    int n;
} ref_case;

static void run_cases(const char *rel, const ref_case *c, int nc, const char *what)
{
    char path[1024];
    if (!tap_shared(rel, path, sizeof path)) {
        for (int i = 0; i < nc; i++) tap_skip("fixture absent");
        return;
    }
    ember_err err = {{0}};
    gguf_file *f = gguf_open(path, &err);
    ember_tokenizer *t = f ? ember_tokenizer_load(f, &err) : NULL;
    for (int i = 0; i < nc; i++) {
        int32_t ids[64];
        int n = t ? ember_tokenize(t, c[i].text, strlen(c[i].text), false, c[i].special, ids, 64, &err) : -1;
        bool ok = n == c[i].n && !memcmp(ids, c[i].want, (size_t)n * sizeof *ids);
        if (!tap_ok(ok, "%s: %s, special %s: '%s'", rel, what, c[i].special ? "on" : "off", c[i].text)) {
            char line[512];
            int k = 0;
            for (int j = 0; j < n && j < 60 && k < 480; j++) k += snprintf(line + k, sizeof line - (size_t)k, " %d", ids[j]);
            line[k] = 0;
            tap_diag("gave%s%s", line, t ? "" : err.msg);
        }
    }
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
}

/* Phi-3's added tokens strip the whitespace after them (rstrip in its
   tokenizer.json), except <unk>, <s> and <|endoftext|>: the chat
   template's "\n" after <|user|> and <|end|> never reaches the model. */
static void test_phi3_rstrip(void)
{
    static const ref_case c[] = {
        {"<|user|>\nhi<|end|>\n<|assistant|>", true, {4095, 298, 108, 4092, 4086}, 5},
        {"<|system|>\n  You are kind.<|end|>\n<|user|>\n\tHi there \n<|end|>\n<|assistant|>\n", true,
         {4091, 887, 526, 2924, 49, 4092, 4095, 379, 108, 727, 229, 153, 132, 13, 4092, 4086}, 16},
        {"</s> \t x", true, {2, 921}, 2},
        {"<s>\nx<|endoftext|>\ny", true, {1, 229, 153, 132, 13, 123, 4085, 229, 153, 132, 13, 124}, 12},
        /* special parsing off: the text is text, nothing is stripped */
        {"<|user|>\nhi", false, {529, 127, 1792, 127, 65, 13, 2918}, 7},
    };
    run_cases("fixtures/models/phi3-mini-Q8_0.gguf", c, (int)(sizeof c / sizeof c[0]), "rstrip after specials");
}

/* End-of-turn and fill-in-the-middle markers that a file stores as
   user-defined tokens are control tokens (the reference's name lists):
   with special parsing off they are plain text. */
static void test_marker_control(void)
{
    static const ref_case gemma[] = {
        {"</s> \t x", false, {954, 236751, 236813, 236743, 255968, 1123}, 6},
        {"</s> \t x", true, {212, 236743, 255968, 1123}, 4},
        {"Hello</s>", false, {9259, 954, 236751, 236813}, 4},
    };
    run_cases("fixtures/tokenizers/gemma3-spm.gguf", gemma, (int)(sizeof gemma / sizeof gemma[0]), "</s> is control");
    static const ref_case qwen[] = {
        {"<|fim_prefix|>def<|fim_suffix|>", false, {27, 91, 69, 318, 13974, 91, 29, 750, 27, 91, 69, 318, 37151, 91, 29}, 15},
        {"<|fim_prefix|>def<|fim_suffix|>", true, {151659, 750, 151661}, 3},
        {"<|file_sep|>a", false, {27, 91, 1192, 54775, 91, 29, 64}, 7},
        /* <tool_call> is user-defined and no marker: always one token */
        {"<tool_call>", false, {151657}, 1},
    };
    run_cases("fixtures/tokenizers/qwen2-bpe.gguf", qwen, (int)(sizeof qwen / sizeof qwen[0]), "FIM markers are control");
    static const ref_case phi[] = {
        {"</s> \t x", false, {1533, 118, 65, 229, 153, 132, 12, 921}, 8},
    };
    run_cases("fixtures/models/phi3-mini-Q8_0.gguf", phi, 1, "</s> is control");
}

/* The pre-tokenizers' \s is Unicode's White_Space: U+180E MONGOLIAN
   VOWEL SEPARATOR (a format character since Unicode 6.3) is not a space,
   so the space before it stays with it. */
static void test_white_space(void)
{
    static const ref_case llama3[] = {
        {" \xE1\xA0\x8E" "a", false, {87189, 254, 236, 64}, 4},
        {" \xE3\x80\x80\xE1\xA0\x8E ", false, {220, 23249, 157, 254, 236, 220}, 6},
    };
    run_cases("fixtures/tokenizers/llama3-bpe.gguf", llama3, 2, "U+180E is no space");
    static const ref_case qwen[] = {
        {" \xE1\xA0\x8E" "a", false, {86089, 254, 236, 64}, 4},
    };
    run_cases("fixtures/tokenizers/qwen2-bpe.gguf", qwen, 1, "U+180E is no space");
}

/* UTF-8 as the reference reads it: overlong forms are their code points
   ("\xC0\xAF" is "/", "\xC0\x80" a NUL), surrogates keep their bytes. */
static void test_lenient_utf8(void)
{
    static const ref_case llama3[] = {
        {"a\xC0\xAF" "b", false, {64, 3554}, 2},
        {"x\xC0\x80y", false, {87, 188, 88}, 3},
        {" \xED\xA0\x80 x", false, {10997, 64319, 865}, 3},
    };
    run_cases("fixtures/tokenizers/llama3-bpe.gguf", llama3, 3, "lenient UTF-8");
    static const ref_case gemma4[] = {
        {"a\xC0\xAF" "b", false, {335, 285, 336}, 3},
    };
    run_cases("fixtures/models/gemma4-mini-Q8_0.gguf", gemma4, 1, "lenient UTF-8");
}

int main(void)
{
    test_phi3_rstrip();
    test_marker_control();
    test_white_space();
    test_lenient_utf8();
    return tap_done();
}
