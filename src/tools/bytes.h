/* Sizes for people: "872.5 KiB", "3.4 GiB" (binary units, one decimal). */
#ifndef EMBER_BYTES_H
#define EMBER_BYTES_H

#include <stddef.h>

void bytes_human(char *buf, size_t cap, double bytes);

#endif
