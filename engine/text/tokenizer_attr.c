/* Token attributes a GGUF file does not store, derived from token text and
   the model's name as the reference tokenizer derives them:

   - End-of-turn and fill-in-the-middle markers that a converter wrote as
     user-defined tokens are control tokens.  User-defined tokens are
     recognised in any text, control tokens only where special parsing is
     on, so this keeps "</s>" or "<|fim_prefix|>" in plain text plain.
     Only user-defined tokens change: a normal vocabulary piece with such a
     name (Qwen's "</s>") stays text, as in the Hugging Face tokenizer the
     model was trained with.

   - Phi-3's added tokens strip the whitespace that follows them (rstrip in
     its tokenizer.json), except <unk>, <s> and <|endoftext|>, so the "\n"
     its chat template writes after <|user|> and <|end|> never reaches the
     model.  Like the reference, recognised by general.name. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"

/* The marker names the reference turns into control tokens (its end-of-
   generation, end-of-turn and fill-in-the-middle lists). */
static const char *const MARKERS[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
    "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
    "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81" "of\xE2\x96\x81" "sentence\xEF\xBD\x9C>",
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
    "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>",
    "<|file_sep|>",
};

/* Gemma 4 (and PaddleOCR) have "</s>" as an ordinary piece of text: the
   reference makes it a normal token there, recognising the vocabulary by
   "<|tool_response>". */
static bool keeps_eos_text(const ember_tokenizer *t)
{
    return ember_tok_find(t, "<|tool_response>") >= 0;
}

static bool is_phi3(const gguf_file *f)
{
    char *name = gguf_get_strdup(f, "general.name");
    if (!name) return false;
    bool yes = strcasestr(name, "phi-3") || strcasestr(name, "phi3");
    free(name);
    return yes;
}

void tok_apply_attrs(ember_tokenizer *t, const gguf_file *f)
{
    bool keep_s = keeps_eos_text(t);
    for (size_t i = 0; i < sizeof MARKERS / sizeof MARKERS[0]; i++) {
        int32_t id = ember_tok_find(t, MARKERS[i]);
        if (keep_s && !strcmp(MARKERS[i], "</s>")) {
            if (id >= 0 && (t->tok[id].type == TOK_USER || t->tok[id].type == TOK_CONTROL)) t->tok[id].type = TOK_NORMAL;
            continue;
        }
        if (id >= 0 && t->tok[id].type == TOK_USER) t->tok[id].type = TOK_CONTROL;
    }
    if (!is_phi3(f)) return;
    for (int i = 0; i < t->n_vocab; i++) {
        tok_entry *e = &t->tok[i];
        e->rstrip = e->type == TOK_CONTROL || e->type == TOK_USER || e->type == TOK_UNKNOWN;
    }
    static const char *const keep[] = {"<unk>", "<s>", "<|endoftext|>"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        int32_t id = ember_tok_find(t, keep[i]);
        if (id >= 0) t->tok[id].rstrip = false;
    }
}
