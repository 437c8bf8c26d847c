/* The whole of a stream (a prompt or text piped on stdin) in memory. */
#ifndef EMBER_READ_ALL_H
#define EMBER_READ_ALL_H

#include <stddef.h>
#include <stdio.h>

/* A malloc'd, NUL-terminated copy of everything left in f, its length in
   *len (len may be NULL: the text then ends at its first NUL).  NULL when
   memory runs out or the stream reports an error: a prompt cut short by a
   read error is not the prompt. */
char *read_all(FILE *f, size_t *len);
/* The same, refusing a stream of more than max bytes: NULL with errno
   EFBIG once more arrive (the rest is not read, so `yes | ember -p x`
   cannot fill the memory). */
char *read_all_max(FILE *f, size_t max, size_t *len);

#endif
