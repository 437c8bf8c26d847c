/* The chat's template: the model's own (tokenizer.chat_template, run by the
   Jinja interpreter) when it renders, else a built-in family (chat.h) that
   is named with the reason, so a user knows what the model is fed.  The
   worker and `ember run --chat` both render through here. */
#ifndef EMBER_CHAT_TEMPLATE_H
#define EMBER_CHAT_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "text/chat.h"
#include "text/jinja.h"
#include "text/tokenizer.h"

typedef struct ember_chat_template ember_chat_template;

typedef struct ember_chat_template_opts {
    const char *jinja;               /* the GGUF's template; NULL: none */
    /* The vocabulary: bos_token / eos_token, the BOS the tokenizer adds
       itself, the control tokens contents must not make, the end-of-turn
       token.  NULL (tests): the fields below stand in. */
    const ember_tokenizer *tok;
    const char *bos, *eos;           /* without tok */
    bool strip_bos;                  /* without tok: the tokenizer adds BOS */
    const char *const *controls;     /* without tok: control strings, NULL-ended */
    const struct tm *now;            /* strftime_now(); NULL: the clock */
    jinja_limits limits;             /* 0s: the interpreter's defaults */
} ember_chat_template_opts;

ember_chat_template *ember_chat_template_new(const ember_chat_template_opts *o);
void ember_chat_template_free(ember_chat_template *t);

/* The conversation as the model should see it, malloc'd, without the BOS
   the tokenizer adds; *user_mask (malloc'd, may be NULL) marks the bytes
   that came from message contents and must not make control tokens
   (ember_tokenize_masked).  The GGUF template is tried first on every
   render; when it fails the built-in family renders and the failure is
   what ember_chat_template_name says.  NULL only when out of memory. */
char *ember_chat_template_render(ember_chat_template *t, const ember_chat_msg *msgs, size_t n,
                                 bool add_generation_prompt, uint8_t **user_mask);

/* What the last render used (before any: what the probe at creation did),
   e.g. "gguf (jinja)", "chatml (fallback: the GGUF template failed: ...)",
   "llama3 (built-in: the file has no chat template)", or, for a template
   that refuses a system role, "gguf (jinja; the system prompt opens the
   first message: ...)" (it went into the first user message). */
const char *ember_chat_template_name(const ember_chat_template *t);
/* True when the last render was the GGUF template's own. */
bool ember_chat_template_is_jinja(const ember_chat_template *t);

/* True when the last render ended by opening the reply's thinking (a
   generation prompt ending in "<think>", as DeepSeek-R1's): the reply the
   model writes then starts inside it, and a front end shows it so. */
bool ember_chat_template_opens_think(const ember_chat_template *t);

/* The reasoning switch Hugging Face's apply_chat_template passes as
   enable_thinking (Qwen3, Gemma 4, SmolLM3, DeepSeek-V3.1, Nemotron read
   it): mode -1 leaves it undefined, so the template's own default holds;
   0 passes false, 1 true.  Returns true when the template reads the
   variable, false when setting it changes nothing. */
bool ember_chat_template_set_thinking(ember_chat_template *t, int mode);

/* The token the template writes after an assistant message (<|im_end|>,
   <end_of_turn>, <|eot_id|>, <|end|> ...), derived by rendering a reply;
   -1 without a tokenizer or when it writes none.  Its text in *text. */
int32_t ember_chat_template_eot(const ember_chat_template *t, const char **text);

#endif
