/* Rendered chat text and, byte for byte, a mark of where each byte came
   from (1: a message's content, 0: the template): the tokenizer makes
   control tokens only of template bytes.  Built by the built-in renderers
   (chat.c) and the Jinja path (chat_template.c). */
#ifndef EMBER_MTEXT_H
#define EMBER_MTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *p;               /* NUL-terminated once anything was put */
    uint8_t *m;            /* p's marks */
    size_t n, cap;
    bool oom;              /* a growth failed: the text is incomplete */
} ember_mtext;

/* Appends s[0..n) marked `mark`; on failure sets oom and keeps what was there. */
void ember_mtext_put(ember_mtext *b, const char *s, size_t n, uint8_t mark);
void ember_mtext_free(ember_mtext *b);

#endif
