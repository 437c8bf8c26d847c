/* Tokenizers from GGUF metadata: byte-level BPE (llama-bpe, qwen2 and
   other pre-tokenizers) and SentencePiece (llama). */
#ifndef EMBER_TOKENIZER_H
#define EMBER_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/err.h"
#include "format/gguf.h"

typedef struct ember_tokenizer ember_tokenizer;

/* Builds the tokenizer from a file's tokenizer.* keys. */
ember_tokenizer *ember_tokenizer_load(const gguf_file *f, ember_err *err);
void ember_tokenizer_free(ember_tokenizer *t);

/* Checks the vocabulary against the model's n_rows embedding rows
   (tokenizer_check.c): -1 with err when ids could index past the
   embedding; accepted oddities append one line each to warnings. */
int ember_tok_check(const ember_tokenizer *t, int n_rows, char *warnings, size_t cap, ember_err *err);

int ember_tok_n_vocab(const ember_tokenizer *t);
int32_t ember_tok_bos(const ember_tokenizer *t);   /* -1 if none */
int32_t ember_tok_eos(const ember_tokenizer *t);   /* -1 if none */
bool ember_tok_add_bos(const ember_tokenizer *t);
/* True for EOS, EOT (<|eot_id|>, <|im_end|>, <|end_of_text|> ...). */
bool ember_tok_is_eog(const ember_tokenizer *t, int32_t id);
/* Id of an exact token string (e.g. "<|im_start|>"), or -1. */
int32_t ember_tok_find(const ember_tokenizer *t, const char *piece);
/* True for a control (or unknown) token: one only a template may write. */
bool ember_tok_is_control(const ember_tokenizer *t, int32_t id);
/* The earliest control-token string in text (len bytes), the longest one
   there: its offset, with its length in *n and id in *id (either may be
   NULL); -1 when the text holds none.  Chat templates use it to keep
   message contents from making control tokens. */
long ember_tok_find_control(const ember_tokenizer *t, const char *text, size_t len, size_t *n,
                            int32_t *id);

/* Tokenizes text (len bytes).  add_bos: prepend BOS when the vocabulary has
   one and wants it; parse_special: recognise control token strings in the
   text (user-defined tokens are always recognised, as in the reference).
   Invalid UTF-8 is read as the reference reads it (BPE: overlong forms and
   surrogates decoded, any other invalid byte U+FFFD) or as byte tokens (SPM).
   Returns the count (may exceed cap: call again with a larger buffer), or
   -1 with err set.  Safe to call from several threads on one tokenizer. */
int ember_tokenize(const ember_tokenizer *t, const char *text, size_t len,
                   bool add_bos, bool parse_special,
                   int32_t *out, int cap, ember_err *err);
/* The same, where user (len bytes, or NULL) marks the bytes that came from
   the person rather than the template: a control token is not recognised
   where any of its bytes is marked, so typed "<|eot_id|>" is text. */
int ember_tokenize_masked(const ember_tokenizer *t, const char *text, size_t len,
                          bool add_bos, bool parse_special, const uint8_t *user,
                          int32_t *out, int cap, ember_err *err);

/* The raw bytes of one token's piece (byte-level BPE decoded, SentencePiece
   spaces restored, <0xXX> as the byte; control tokens give their text).
   Returns the length written (truncated to cap), the full length when buf
   is NULL, or -1 for an out-of-range id. */
int ember_token_bytes(const ember_tokenizer *t, int32_t id, char *buf, int cap);
/* The token's string as stored in the vocabulary (for `ember tokenize`). */
const char *ember_token_text(const ember_tokenizer *t, int32_t id);

/* Streaming detokenizer: emits only complete UTF-8 characters; invalid
   sequences become U+FFFD. */
typedef struct ember_detok {
    unsigned char pending[8];
    int n_pending;
} ember_detok;

void ember_detok_init(ember_detok *d);
/* Writes the printable text for `id` to out (NUL-terminated, at most cap-1
   bytes; characters that do not fit are dropped whole).  A cap of
   ember_tok_max_piece() is always enough; the longest Llama 3 / Qwen piece
   is 128 bytes, so 256 covers every valid-UTF-8 token there.  Control
   tokens produce nothing.  Returns bytes written. */
int ember_detok_push(ember_detok *d, const ember_tokenizer *t, int32_t id, char *out, int cap);
/* Buffer size that always suffices for one ember_detok_push. */
int ember_tok_max_piece(const ember_tokenizer *t);
/* Flushes a dangling partial character as U+FFFD. */
int ember_detok_flush(ember_detok *d, char *out, int cap);

#endif
