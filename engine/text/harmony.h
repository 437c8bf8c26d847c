/* gpt-oss's replies come in channels (OpenAI's "harmony" format):
     <|channel|>analysis<|message|>the reasoning<|end|>
     <|start|>assistant<|channel|>final<|message|>the answer<|return|>
   The chat shows a reply in the <think> form every reasoning model gets
   (ui/think.h: folded while it streams), so a harmony reply's tokens are
   translated as they arrive: an analysis (or commentary) message opens
   "<think>\n", the final one closes it, and the headers themselves (the
   role after <|start|>, the channel name) are not shown. */
#ifndef EMBER_HARMONY_H
#define EMBER_HARMONY_H

#include <stdbool.h>

#include "tokenizer.h"

typedef struct {
    int state;          /* harmony.c: in a message's text, a role, a channel name */
    char chan[24];      /* the channel named so far (truncated) */
    int nchan;
    bool thinking;      /* "<think>\n" written, not closed yet */
} ember_harmony;

/* Whether the vocabulary speaks harmony (<|channel|>, <|message|>,
   <|start|> and <|return|> are all tokens of it). */
bool ember_harmony_vocab(const ember_tokenizer *t);
/* Whether a token's text is one of harmony's markers (<|start|>,
   <|channel|>, ...): a converter may have typed them user-defined rather
   than control, and they are steps of the format either way. */
bool ember_harmony_marker(const char *text);
/* A reply's start. */
void ember_harmony_init(ember_harmony *h);
/* One token of the reply: a control token's text in ctl (piece unused),
   else its detokenized piece of n bytes (ctl NULL).  Writes what the
   chat shows for it into out (cap bytes, NUL-terminated; 16 always
   suffice for a control token, n + 1 for a piece) and returns its
   length. */
int ember_harmony_step(ember_harmony *h, const char *ctl, const char *piece, int n, char *out, int cap);

#endif
