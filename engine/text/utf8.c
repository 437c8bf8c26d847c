/* The one UTF-8 decoder: the tokenizer, the GGUF reader, the JSON writer and
   the terminal UI must agree on which bytes are text. */
#include "config.h"

#include "ember.h"

int ember_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0) return 0;
    unsigned char c = u[0];
    int len;
    uint32_t v, min;
    if (c < 0x80) {
        if (cp) *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, v = c & 0x07, min = 0x10000;
    else return 0;                       /* continuation byte, C0/C1, F5.. */
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (u[i] & 0x3F);
    }
    /* overlong forms, UTF-16 surrogates and code points past U+10FFFF */
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    if (cp) *cp = v;
    return len;
}
