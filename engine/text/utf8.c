/* The one UTF-8 decoder: the tokenizer, the GGUF reader, the JSON writer and
   the terminal UI must agree on which bytes are text.  Its lenient reading
   is the reference tokenizer's (BPE input), its encoder everyone's. */
#include "config.h"

#include <stdbool.h>

#include "ember.h"

static int decode(const char *s, size_t n, uint32_t *cp, bool strict)
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
    /* lenient: any lead byte with its continuation bytes (C0/C1 too) */
    if (c >= (strict ? 0xC2 : 0xC0) && c <= 0xDF) len = 2, v = c & 0x1F, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, v = c & 0x0F, min = 0x800;
    else if (c >= 0xF0 && c <= (strict ? 0xF4 : 0xF7)) len = 4, v = c & 0x07, min = 0x10000;
    else return 0;                       /* continuation byte, C0/C1, F5.. */
    if ((size_t)len > n) return 0;
    for (int i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (u[i] & 0x3F);
    }
    /* past U+10FFFF always; overlong forms and UTF-16 surrogates when strict */
    if (v > 0x10FFFF || (strict && (v < min || (v >= 0xD800 && v <= 0xDFFF)))) return 0;
    if (cp) *cp = v;
    return len;
}

int ember_utf8_decode(const char *s, size_t n, uint32_t *cp) { return decode(s, n, cp, true); }

int ember_utf8_decode_lenient(const char *s, size_t n, uint32_t *cp) { return decode(s, n, cp, false); }

int ember_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
