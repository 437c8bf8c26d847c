/* The last screen printed after the full-screen chat (ui/keepscreen.c):
   exactly the last rows lines, laid out as on screen, and nothing a reply
   could use to drive the shell's terminal. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keepscreen.h"
#include "tap.h"

static char *render(const transcript *t, int rows, int cols, bool raw, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ui_keep_screen(t, rows, cols, raw, false, f);
    fclose(f);
    return buf;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

int main(void)
{
    transcript t;
    tr_init(&t);
    size_t len;
    char *out = render(&t, 10, 80, false, &len);
    tap_ok(len == 0, "an empty conversation prints nothing");
    free(out);

    tr_add(&t, TR_USER, "first question");
    tr_add(&t, TR_ASSISTANT, "first answer");
    tr_add(&t, TR_USER, "second question");
    int a = tr_add(&t, TR_ASSISTANT, "## Heading\n\nsome **bold** text");
    out = render(&t, 100, 80, false, &len);
    tap_ok(!strncmp(out, "you\n  first question\n\nassistant\n  first answer\n\nyou\n", 50),
           "labels, then the text indented by two, a blank line between turns");
    tap_ok(strstr(out, "  ## Heading\n") && strstr(out, "some bold text") && !strstr(out, "**"),
           "replies are laid out as Markdown");
    tap_ok(out[len - 1] == '\n' && out[len - 2] != '\n', "no blank line after the last turn");
    int all = lines(out);
    free(out);
    out = render(&t, 3, 80, false, &len);
    tap_ok(lines(out) == 3, "rows bounds the lines printed (%d of %d)", lines(out), all);
    tap_ok(!strcmp(out, "  ## Heading\n\n  some bold text\n"), "and they are the last ones, blank ones not indented ('%s')",
           out);
    free(out);
    out = render(&t, 100, 80, true, &len);
    tap_ok(strstr(out, "some **bold** text") != NULL, "raw mode prints the text as written");
    free(out);

    /* a tab: the blanks to its stop, as on screen, not the shell's own stops */
    tr_clear(&t);
    tr_add(&t, TR_USER, "a\tbc\td");
    out = render(&t, 100, 80, false, &len);
    tap_ok(!strcmp(out, "you\n  a   bc  d\n"), "a user line's tabs laid out as on screen ('%s')", out);
    free(out);

    /* narrow: wrapped to the width minus the indent */
    tr_clear(&t);
    tr_add(&t, TR_USER, "aaaa bbbb cccc dddd");
    out = render(&t, 100, 11, false, &len);
    tap_ok(!strcmp(out, "you\n  aaaa bbbb\n  cccc dddd\n"), "wrapped to the window ('%s')", out);
    free(out);

    /* what a reply must not pass to the terminal */
    tr_clear(&t);
    a = tr_add(&t, TR_ASSISTANT, "");
    const char evil[] = "x\x1b]52;c;ZXZpbA==\x07y\x1b[2Jz\xc2\x9b" "31m\x9b" "0m\x7f" "end";
    tr_append(&t, a, evil, sizeof evil - 1);
    out = render(&t, 100, 80, true, &len);
    bool clean = true;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)out[i];
        if ((c < 0x20 && c != '\n') || c == 0x7f) clean = false;
        if (c == 0xc2 && i + 1 < len && (unsigned char)out[i + 1] >= 0x80 && (unsigned char)out[i + 1] < 0xa0)
            clean = false;
        if (c == 0x9b) clean = false;
    }
    tap_ok(clean && strstr(out, "end"), "no ESC, BEL, DEL or C1 control (raw CSI byte included) reaches the terminal");
    free(out);
    t.e[a].cancelled = true;
    out = render(&t, 100, 80, false, &len);
    tap_ok(strstr(out, "assistant (stopped)\n") && strstr(out, "  [stopped]"), "a stopped reply says so");
    free(out);
    tr_free(&t);
    return tap_done();
}
