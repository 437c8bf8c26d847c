/* Writing what a reply-format translation (harmony.h, channel.h) shows
   for one token. */
#ifndef EMBER_PIECE_H
#define EMBER_PIECE_H

#include <string.h>

/* s (n bytes) into out (cap bytes, NUL-terminated, cut to fit); out may
   be s itself.  Returns the bytes written. */
static inline int ember_piece_put(char *out, int cap, const char *s, int n)
{
    if (cap <= 0) return 0;
    if (n > cap - 1) n = cap - 1;
    memmove(out, s, (size_t)n);
    out[n] = '\0';
    return n;
}

#endif
