/* The built-in toy vocabulary of `ember synth`: byte-level BPE in the
   Llama 3 style (GPT-2 byte alphabet, English merges, Llama 3 headers). */
#ifndef EMBER_SYNTH_VOCAB_H
#define EMBER_SYNTH_VOCAB_H

#include "ember.h"

/* Writes the tokenizer.* keys.  *n_vocab in: the wanted size (0 = the toy
   vocabulary's own size), padded with reserved control tokens; out: the
   size written.  Fails when the wanted size is smaller than the toy's.
   Ids 0..255 are the byte tokens in GPT-2 order (0..93 printable ASCII,
   198 newline, 220 space), 256..*first_special-1 the merged pieces. */
int synth_toy_vocab(gguf_writer *w, int *n_vocab, int *first_special, ember_err *err);
#define SYNTH_TOY_NEWLINE 198
#define SYNTH_TOY_SPACE 220

#endif
