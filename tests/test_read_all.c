/* read_all (src/tools/read_all.c): the whole stream across buffer growth,
   NUL-terminated, and NULL (not a truncated text) when the stream fails. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_all.h"
#include "tap.h"

int main(void)
{
    FILE *f = tmpfile();
    if (!f) {
        tap_ok(0, "tmpfile");
        return tap_done();
    }
    for (int i = 0; i < 10000; i++) fputc('a' + i % 26, f);
    rewind(f);
    size_t len = 0;
    char *s = read_all(f, &len);
    int ok = s && len == 10000 && s[10000] == '\0' && s[4095] == 'a' + 4095 % 26 && s[9999] == 'a' + 9999 % 26;
    tap_ok(ok, "10000 bytes read whole through two growths, NUL-terminated");
    free(s);
    rewind(f);
    fputs("abc", f);
    fflush(f);
    fseek(f, 4095 - 3, SEEK_SET);
    s = read_all(f, NULL);
    tap_ok(s && strlen(s) == 10000 - 4092, "len may be NULL; reading starts where the stream is");
    free(s);
    rewind(f);
    s = read_all_max(f, 10000, &len);
    tap_ok(s && len == 10000, "read_all_max: a stream of exactly max bytes is read whole");
    free(s);
    rewind(f);
    errno = 0;
    s = read_all_max(f, 9999, &len);
    tap_ok(!s && errno == EFBIG, "read_all_max: one byte more than max gives NULL with EFBIG");
    fclose(f);
    /* A directory opens for reading on Linux, but reading it fails (EISDIR). */
    FILE *d = fopen("/", "r");
    if (d) {
        tap_ok(read_all(d, &len) == NULL, "a stream that reports a read error gives NULL");
        fclose(d);
    } else {
        tap_skip("cannot open / as a stream here");
    }
    return tap_done();
}
