/* gpt-oss's harmony replies (harmony.h): the <think> form the chat shows
   for a reply streamed token by token, and the vocabulary rules (which
   markers end generation: <|end|> does not where <|return|> and <|call|>
   exist; Phi's <|end|> still does). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "harmony.h"
#include "tap.h"
#include "tokenizer.h"

/* A reply as tokens: "<|...|>" items are control tokens, the rest text
   pieces; returns what the chat shows. */
static void stream(const char *const *toks, int n, char *out, size_t cap)
{
    ember_harmony h;
    ember_harmony_init(&h);
    out[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        char buf[64];
        int k;
        if (!strncmp(toks[i], "<|", 2)) {
            k = ember_harmony_step(&h, toks[i], NULL, 0, buf, sizeof buf);
        } else {
            /* in place, as the worker passes the detokenized piece */
            snprintf(buf, sizeof buf, "%s", toks[i]);
            k = ember_harmony_step(&h, NULL, buf, (int)strlen(buf), buf, sizeof buf);
        }
        if (len + (size_t)k < cap) {
            memcpy(out + len, buf, (size_t)k);
            len += (size_t)k;
            out[len] = '\0';
        }
    }
}

/* s with its newlines as \n, for one TAP line */
static const char *shown(const char *s)
{
    static char b[512];
    size_t j = 0;
    for (; *s && j + 3 < sizeof b; s++) {
        if (*s == '\n') b[j++] = '\\', b[j++] = 'n';
        else b[j++] = *s;
    }
    b[j] = '\0';
    return b;
}

static void test_stream(void)
{
    char got[256];
    const char *const full[] = {"<|channel|>", "analysis", "<|message|>", "The user", " greets.", "<|end|>",
                                "<|start|>", "assistant", "<|channel|>", "final", "<|message|>", "Hello", "!",
                                "<|return|>"};
    stream(full, 14, got, sizeof got);
    tap_ok(!strcmp(got, "<think>\nThe user greets.\n</think>\n\nHello!"),
           "analysis then final: the reasoning in <think>, the headers gone (%s)", shown(got));
    const char *const only_final[] = {"<|channel|>", "final", "<|message|>", "Hi", " there", "<|return|>"};
    stream(only_final, 6, got, sizeof got);
    tap_ok(!strcmp(got, "Hi there"), "a final message alone: just its text (%s)", shown(got));
    const char *const unclosed[] = {"<|channel|>", "analysis", "<|message|>", "Still", " thinking"};
    stream(unclosed, 5, got, sizeof got);
    tap_ok(!strcmp(got, "<think>\nStill thinking"), "a reply cut inside its analysis stays open thinking (%s)", shown(got));
    /* a tool call: commentary with a constraint is reasoning too, then the
       final answer; a channel name split over several tokens */
    const char *const tool[] = {"<|channel|>", "comment", "ary to=functions.get", "<|constrain|>", "json",
                                "<|message|>", "{\"x\":1}", "<|end|>", "<|start|>", "assistant", "<|channel|>",
                                "fin", "al", "<|message|>", "Done."};
    stream(tool, 15, got, sizeof got);
    tap_ok(!strcmp(got, "<think>\n{\"x\":1}\n</think>\n\nDone."),
           "commentary (a constraint in its header) is folded like analysis; a split channel name still reads final (%s)",
           shown(got));
    const char *const plain[] = {"Just", " text"};
    stream(plain, 2, got, sizeof got);
    tap_ok(!strcmp(got, "Just text"), "text before any header passes through (%s)", shown(got));
    const char *const two[] = {"<|channel|>", "analysis", "<|message|>", "a", "<|end|>", "<|start|>", "assistant",
                               "<|channel|>", "analysis", "<|message|>", "b", "<|end|>", "<|start|>", "assistant",
                               "<|channel|>", "final", "<|message|>", "c"};
    stream(two, 18, got, sizeof got);
    tap_ok(!strcmp(got, "<think>\nab\n</think>\n\nc"), "two analysis messages share one fold (%s)", shown(got));
}

/* A vocabulary of the 256 byte pieces and the given control tokens. */
static ember_tokenizer *vocab(const char *const *ctl, int nctl, uint8_t **mem, gguf_file **f)
{
    enum { NB = 256 };
    char bytes[NB][4];
    const char *toks[NB + 16];
    int32_t types[NB + 16];
    for (int b = 0; b < NB; b++) {
        /* the byte-level BPE alphabet: printable ASCII as itself, the rest
           mapped past 255 (only the count matters here) */
        unsigned cp = (unsigned)b >= 33 && b <= 126 ? (unsigned)b : 256u + (unsigned)b;
        if (cp < 0x80) bytes[b][0] = (char)cp, bytes[b][1] = 0;
        else bytes[b][0] = (char)(0xC0 | (cp >> 6)), bytes[b][1] = (char)(0x80 | (cp & 0x3F)), bytes[b][2] = 0;
        toks[b] = bytes[b];
        types[b] = 1;
    }
    for (int i = 0; i < nctl; i++) toks[NB + i] = ctl[i], types[NB + i] = 3;
    const char *merges[] = {"a b"};
    toks[NB + nctl] = "ab";
    types[NB + nctl] = 1;
    gguf_writer *w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "gpt-oss");
    gguf_w_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_w_str(w, "tokenizer.ggml.pre", "gpt-4o");
    gguf_w_arr_str(w, "tokenizer.ggml.tokens", toks, NB + nctl + 1);
    gguf_w_arr(w, "tokenizer.ggml.token_type", GGUF_T_I32, types, NB + nctl + 1);
    gguf_w_arr_str(w, "tokenizer.ggml.merges", merges, 1);
    gguf_w_u32(w, "tokenizer.ggml.eos_token_id", NB + nctl - 1);
    size_t size;
    ember_err err = {{0}};
    ember_tokenizer *t = NULL;
    *f = NULL;
    if (gguf_writer_to_mem(w, mem, &size, &err) == 0 && (*f = gguf_open_mem(*mem, size, &err)))
        t = ember_tokenizer_load(*f, &err);
    if (!t) tap_diag("vocabulary: %s", err.msg);
    gguf_writer_free(w);
    return t;
}

static void test_vocab(void)
{
    /* gpt-oss's markers; the last is the file's eos */
    const char *const oss[] = {"<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|call|>", "<|return|>"};
    uint8_t *mem = NULL;
    gguf_file *f = NULL;
    ember_tokenizer *t = vocab(oss, 6, &mem, &f);
    tap_ok(t && ember_harmony_vocab(t), "a vocabulary with <|channel|>, <|message|>, <|start|>, <|return|> speaks harmony");
    tap_ok(t && !ember_tok_is_eog(t, ember_tok_find(t, "<|end|>")) && ember_tok_is_eog(t, ember_tok_find(t, "<|return|>")) &&
               ember_tok_is_eog(t, ember_tok_find(t, "<|call|>")),
           "there <|end|> closes a message, not the reply: <|return|> and <|call|> end generation");
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);
    /* Phi-3's turn ends at <|end|> */
    const char *const phi[] = {"<|user|>", "<|assistant|>", "<|end|>", "<|endoftext|>"};
    t = vocab(phi, 4, &mem, &f);
    tap_ok(t && !ember_harmony_vocab(t) && ember_tok_is_eog(t, ember_tok_find(t, "<|end|>")),
           "without <|return|> and <|call|> (Phi-3), <|end|> still ends generation, and no harmony");
    ember_tokenizer_free(t);
    if (f) gguf_close(f);
    free(mem);
}

static void test_marker(void)
{
    tap_ok(ember_harmony_marker("<|channel|>") && ember_harmony_marker("<|message|>") && ember_harmony_marker("<|start|>") &&
               ember_harmony_marker("<|end|>") && ember_harmony_marker("<|constrain|>"),
           "harmony's markers are known by their text (whatever type the file gives them)");
    tap_ok(!ember_harmony_marker("<|im_start|>") && !ember_harmony_marker("channel") && !ember_harmony_marker(NULL),
           "other text is not a marker");
}

int main(void)
{
    test_stream();
    test_marker();
    test_vocab();
    return tap_done();
}
