/* Token id lists in text form: whitespace-separated decimal ids. */
#ifndef EMBER_IDS_H
#define EMBER_IDS_H

#include <stdint.h>

#include "ember.h"

/* Reads ids from a file ("-" = stdin).  Returns a malloc'd array (count in
   *n; an empty file gives n = 0 and a non-NULL array), or NULL with err. */
int32_t *ids_read_file(const char *path, int *n, ember_err *err);
/* Parses ids from a string (same syntax). */
int32_t *ids_parse(const char *text, int *n, ember_err *err);

#endif
