/* Gemma 4's replies carry their reasoning in a channel:
     <|channel>thought\nthe reasoning<channel|>the answer
   (its template opens one when enable_thinking is set, and closes an
   empty one in the generation prompt otherwise).  The chat shows a reply
   in the <think> form every reasoning model gets (ui/think.h: folded
   while it streams), so the two markers are translated as they arrive:
   <|channel> opens "<think>\n" and the channel's name up to its newline
   is not shown; <channel|> closes it.  The template drops earlier turns'
   channels (strip_thinking) as the chat drops their <think> part. */
#ifndef EMBER_CHANNEL_H
#define EMBER_CHANNEL_H

#include <stdbool.h>

#include "tokenizer.h"

typedef struct {
    int state;          /* channel.c: in the answer, the channel's name, its text */
    int nname;          /* bytes of the name dropped so far */
    bool thinking;      /* "<think>\n" written, not closed yet */
} ember_channel;

/* Whether the vocabulary has both markers as tokens. */
bool ember_channel_vocab(const ember_tokenizer *t);
/* Whether a token's text is one of the two markers. */
bool ember_channel_marker(const char *text);
/* A reply's start. */
void ember_channel_init(ember_channel *c);
/* One token of the reply: a marker's text in ctl (piece unused), else its
   detokenized piece of n bytes (ctl NULL).  Writes what the chat shows
   for it into out (cap bytes, NUL-terminated; 16 always suffice for a
   marker, n + 1 for a piece; out may be the piece) and returns its
   length. */
int ember_channel_step(ember_channel *c, const char *ctl, const char *piece, int n, char *out, int cap);

#endif
