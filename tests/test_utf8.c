/* ember_utf8_decode, the decoder the tokenizer, the GGUF reader, the JSON
   writer and the UI share: well-formed sequences decode, every kind of
   ill-formed one is 0 (which each caller then maps its own way). */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include "ember.h"
#include "tap.h"

typedef int (*decoder)(const char *, size_t, uint32_t *);

static void check_with(decoder dec, const char *how, const char *s, size_t n, int want_len, uint32_t want_cp,
                       const char *what)
{
    uint32_t cp = 0xdeadbeef;
    int len = dec(s, n, &cp);
    tap_ok(len == want_len && (want_len == 0 || cp == want_cp), "%s%s: length %d (want %d), U+%04X", how, what, len,
           want_len, (unsigned)cp);
}

static void check(const char *s, size_t n, int want_len, uint32_t want_cp, const char *what)
{
    check_with(ember_utf8_decode, "", s, n, want_len, want_cp, what);
}

static void lenient(const char *s, size_t n, int want_len, uint32_t want_cp, const char *what)
{
    check_with(ember_utf8_decode_lenient, "lenient, ", s, n, want_len, want_cp, what);
}

/* Every code point up to U+10FFFF (surrogates too) encodes to its
   shortest form: the lenient decoder reads it back whole, the strict one
   too except for surrogates. */
static void round_trip(void)
{
    int bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        char b[4];
        uint32_t back = 0;
        int n = ember_utf8_encode(cp, b);
        int want = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        bool sur = cp >= 0xD800 && cp <= 0xDFFF;
        if (n != want || ember_utf8_decode_lenient(b, (size_t)n, &back) != n || back != cp ||
            ember_utf8_decode(b, (size_t)n, NULL) != (sur ? 0 : n))
            bad++;
    }
    tap_ok(bad == 0, "ember_utf8_encode: every code point in its shortest form, read back (%d wrong)", bad);
}

int main(void)
{
    lenient("\xc0\xaf", 2, 2, '/', "overlong '/' is '/'");
    lenient("\xc0\x80", 2, 2, 0, "overlong NUL");
    lenient("\xed\xa0\x80", 3, 3, 0xD800, "a surrogate");
    lenient("\xf4\x90\x80\x80", 4, 0, 0, "past U+10FFFF");
    lenient("\xf5\x80\x80\x80", 4, 0, 0, "F5 lead");
    lenient("\x80", 1, 0, 0, "a stray continuation byte");
    lenient("\xe2\x96", 2, 0, 0, "truncated");
    round_trip();
    check("A", 1, 1, 'A', "ASCII");
    check("\xc3\xa9", 2, 2, 0xE9, "2 bytes");
    check("\xe2\x96\x81", 3, 3, 0x2581, "3 bytes (SentencePiece space)");
    check("\xf0\x9f\x98\x80", 4, 4, 0x1F600, "4 bytes");
    check("\xf4\x8f\xbf\xbf", 4, 4, 0x10FFFF, "last code point");
    check("\xe2\x96", 2, 0, 0, "truncated by n");
    check("\xe2\x41\x81", 3, 0, 0, "continuation byte missing");
    check("\xc0\x80", 2, 0, 0, "overlong 2-byte NUL");
    check("\xe0\x80\x80", 3, 0, 0, "overlong 3-byte");
    check("\xf0\x80\x80\x80", 4, 0, 0, "overlong 4-byte");
    check("\xed\xa0\x80", 3, 0, 0, "UTF-16 surrogate");
    check("\xf4\x90\x80\x80", 4, 0, 0, "past U+10FFFF");
    check("\xf8\x88\x80\x80", 4, 0, 0, "5-byte lead");
    check("\x80", 1, 0, 0, "lone continuation byte");
    check("A", 0, 0, 0, "n = 0");
    tap_ok(ember_utf8_decode("\xc3\xa9", 2, NULL) == 2, "cp may be NULL");
    return tap_done();
}
