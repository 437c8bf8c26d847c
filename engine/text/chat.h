/* Chat templates recognised from tokenizer.chat_template. */
#ifndef EMBER_CHAT_H
#define EMBER_CHAT_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    EMBER_CHAT_CHATML = 0,
    EMBER_CHAT_LLAMA3,
    EMBER_CHAT_LLAMA2,     /* Llama 2 / Mistral [INST] */
} ember_chat_kind;

typedef struct {
    const char *role;      /* "system", "user", "assistant" */
    const char *content;
} ember_chat_msg;

/* Picks the template family from the Jinja source (NULL -> ChatML).  *known
   is set to 0 when the source was not recognised (caller warns). */
ember_chat_kind ember_chat_detect(const char *jinja, int *known);
const char *ember_chat_kind_name(ember_chat_kind k);

/* Renders the conversation and, when add_generation_prompt, the assistant
   header.  Returns a malloc'd string (caller frees); BOS is not included:
   the tokenizer adds it. */
char *ember_chat_render(ember_chat_kind k, const ember_chat_msg *msgs, size_t n,
                        int add_generation_prompt);
/* The same, and *user_mask (malloc'd, one byte per byte of the text, the
   caller frees) says which bytes came from the messages' content: those
   are tokenized without control tokens (ember_tokenize_masked). */
char *ember_chat_render_masked(ember_chat_kind k, const ember_chat_msg *msgs, size_t n,
                               int add_generation_prompt, uint8_t **user_mask);

/* The system message a template inserts when the conversation has none
   (Qwen2/2.5: "You are Qwen, created by Alibaba Cloud. ..."), as a
   malloc'd string, or NULL when the template has no such default. */
char *ember_chat_default_system(const char *jinja);

#endif
