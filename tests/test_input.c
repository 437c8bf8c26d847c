/* The libedit input line without a terminal: emacs editing keys, literal
   inserts (new lines, wide characters), history navigation, search and
   persistence. */
#include "config.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input.h"
#include "tap.h"

static char text[1024];
static size_t cursor;

static const char *state(ui_input *in)
{
    char *t = ui_input_text(in);
    snprintf(text, sizeof text, "%s", t ? t : "(null)");
    free(t);
    ui_input_buf(in, NULL, &cursor);
    return text;
}

static void feed(ui_input *in, const wchar_t *k) { ui_input_feed(in, k, wcslen(k)); }

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) tap_skip_all("no C.UTF-8 locale");
    char hist[] = "/tmp/ember-test-input-XXXXXX";
    int fd = mkstemp(hist);
    if (fd < 0) tap_skip_all("no temp file");
    close(fd);
    unlink(hist);
    char err[256];
    ui_input *in = ui_input_new(hist, err, sizeof err);
    if (!in) {
        printf("1..0 # SKIP %s\n", err);
        return 0;
    }
    feed(in, L"hello world");
    tap_ok(!strcmp(state(in), "hello world") && cursor == 11, "typing inserts");
    feed(in, L"\x01");
    state(in);
    tap_ok(cursor == 0, "Ctrl-A: start of line");
    feed(in, L"\x1b" L"f");
    state(in);
    tap_ok(cursor == 5, "Alt-F: end of word (%zu)", cursor);
    feed(in, L"\x0b");
    tap_ok(!strcmp(state(in), "hello"), "Ctrl-K kills to the end");
    feed(in, L"\x05\x19");
    tap_ok(!strcmp(state(in), "hello world"), "Ctrl-E Ctrl-Y yanks back");
    feed(in, L"\x17");
    tap_ok(!strcmp(state(in), "hello "), "Ctrl-W deletes the word before");
    feed(in, L"\x7f");
    tap_ok(!strcmp(state(in), "hello"), "Backspace");
    feed(in, L"\x02\x02\x04");
    tap_ok(!strcmp(state(in), "helo") && cursor == 3, "Ctrl-B twice, Ctrl-D deletes under the cursor");
    ui_input_insert(in, L"\n\u4e2d\U0001F600");
    tap_ok(!strcmp(state(in), "hel\n\xe4\xb8\xad\xf0\x9f\x98\x80o"), "literal insert keeps new lines and wide characters");
    ui_input_set_text(in, "first entry");
    tap_ok(!strcmp(state(in), "first entry") && cursor == 11, "set text");
    ui_input_history_add(in, "first entry");
    ui_input_history_add(in, "line one\nline two");
    ui_input_clear(in);
    tap_ok(ui_input_empty(in) && !strcmp(state(in), ""), "clear empties the line");
    feed(in, L"\x10");
    tap_ok(!strcmp(state(in), "line one\nline two"), "previous history entry (multi-line)");
    feed(in, L"\x10");
    tap_ok(!strcmp(state(in), "first entry"), "and the one before");
    feed(in, L"\x0e");
    tap_ok(!strcmp(state(in), "line one\nline two"), "next history entry");
    int pos = -1;
    const char *m = ui_input_history_search(in, "first", &pos);
    tap_ok(m && !strcmp(m, "first entry") && pos == 1, "reverse search finds the older entry");
    m = ui_input_history_search(in, "first", &pos);
    tap_ok(m == NULL, "no older match after it");
    /* many keys in one feed, and a command wanting more keys than given */
    ui_input_clear(in);
    feed(in, L"abc\x1b");
    feed(in, L"x");
    tap_ok(strstr(state(in), "abc") != NULL, "a dangling ESC does not lose the line ('%s')", text);
    ui_input_free(in);

    in = ui_input_new(hist, err, sizeof err);
    tap_ok(in != NULL, "reopens");
    if (in) {
        feed(in, L"\x10");
        tap_ok(!strcmp(state(in), "line one\nline two"), "history persisted across sessions");
        ui_input_free(in);
    }
    unlink(hist);
    return tap_done();
}
