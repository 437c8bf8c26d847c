/* ember_text_clean: what a terminal would act on becomes '?', text stays. */
#include "config.h"

#include <string.h>

#include "ember.h"
#include "tap.h"

static void check(const char *in, size_t n, unsigned flags, size_t cap, const char *want, const char *what)
{
    char out[64];
    size_t k = ember_text_clean(out, cap, in, n, flags);
    tap_ok(k == strlen(want) && !strcmp(out, want), "%s ('%s')", what, out);
}

int main(void)
{
    check("plain text", 10, 0, 64, "plain text", "ASCII text unchanged");
    check("caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80", 13, 0, 64, "caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x98\x80", "UTF-8 unchanged");
    check("\x1b]0;x\x07", 6, 0, 64, "?]0;x?", "OSC title: ESC and BEL replaced");
    check("a\x9b" "1m", 4, 0, 64, "a?1m", "8-bit CSI byte replaced");
    check("a\xc2\x9b" "1m", 5, 0, 64, "a?1m", "C1 CSI as UTF-8 replaced by one ?");
    check("a\x7f" "b", 3, 0, 64, "a?b", "DEL replaced");
    check("a\nb\tc", 5, 0, 64, "a?b?c", "newline and tab replaced by default");
    check("a\nb\tc", 5, EMBER_CLEAN_KEEP_NL, 64, "a\nb\tc", "newline and tab kept when asked");
    check("\xed\xa0\x80x", 4, 0, 64, "???x", "a UTF-16 surrogate is not UTF-8");
    check("\xc0\xaf", 2, 0, 64, "??", "an overlong encoding is not UTF-8");
    check("\xe6\x97", 2, 0, 64, "??", "a cut sequence is not UTF-8");
    check("ab\xe6\x97\xa5", 5, 0, 4, "ab", "a character that does not fit is left out whole");
    check("a\0b", 3, 0, 64, "a?b", "NUL replaced");
    char buf[16] = "x\x1by";
    ember_text_clean(buf, sizeof buf, buf, 3, 0);
    tap_ok(!strcmp(buf, "x?y"), "in place");
    return tap_done();
}
