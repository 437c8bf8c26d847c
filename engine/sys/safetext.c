/* Text from files on its way to a terminal (ember.h: ember_text_clean).

   A model's metadata, a profile's description or a file name quoted in an
   error can hold escape sequences: printed as they are, they could retitle
   the window, clear the screen, remap keys or (OSC 52) write the
   clipboard.  What a terminal would act on is replaced by '?': C0 controls
   (tab and newline kept only when asked), DEL, C1 controls (U+0080 to
   U+009F, and the same bytes alone, which 8-bit terminals read as CSI
   and friends) and bytes that are not UTF-8. */
#include "config.h"

#include <stdint.h>

#include "ember.h"

size_t ember_text_clean(char *dst, size_t cap, const char *src, size_t n, unsigned flags)
{
    if (!cap) return 0;
    const unsigned char *s = (const unsigned char *)src;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap;) {
        uint32_t cp = 0;
        size_t l = (size_t)ember_utf8_decode(src + i, n - i, &cp);
        bool keep = l > 0;
        if (keep && (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)))
            keep = (flags & EMBER_CLEAN_KEEP_NL) && (cp == '\n' || cp == '\t');
        if (!keep) {
            dst[o++] = '?';
            i += l ? l : 1;
            continue;
        }
        if (o + l + 1 > cap) break;   /* whole characters only */
        for (size_t k = 0; k < l; k++) dst[o++] = (char)s[i + k];
        i += l;
    }
    dst[o] = 0;
    return o;
}
