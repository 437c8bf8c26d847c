/* The OSC 52 clipboard sequence (see osc52.h for the tmux choice). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osc52.h"

size_t ui_base64(const void *src, size_t n, char *out, size_t cap)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t need = (n + 2) / 3 * 4;
    if (need + 1 > cap) return need;
    const unsigned char *s = src;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) v |= s[i + 2];
        out[k++] = tab[v >> 18 & 63];
        out[k++] = tab[v >> 12 & 63];
        out[k++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        out[k++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[k] = 0;
    return k;
}

char *ui_osc52(const void *s, size_t n, size_t *len)
{
    static const char head[] = "\033]52;c;";
    size_t b = (n + 2) / 3 * 4, hn = sizeof head - 1;
    char *out = malloc(hn + b + 2);
    if (!out) return NULL;
    memcpy(out, head, hn);
    ui_base64(s, n, out + hn, b + 1);
    out[hn + b] = '\a';
    out[hn + b + 1] = 0;
    *len = hn + b + 1;
    return out;
}
