/* bytes_human (bytes.h). */
#include "config.h"

#include <stdio.h>

#include "bytes.h"

void bytes_human(char *buf, size_t cap, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) b /= 1024, u++;
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}
