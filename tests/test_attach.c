/* Attached files: the fenced block's exact bytes, the fence that outgrows
   the file's own backticks, refusals (binary, not UTF-8, a directory, a
   FIFO that must not block, too large, missing), ~ expansion, and the
   message assembled by ui_attach_take. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "tap.h"

static char dir[] = "/tmp/ember-attach-XXXXXX";

static const char *put(const char *name, const char *data, size_t n)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    ui_attach at = {0};
    char err[256];

    const char *p = put("notes.txt", "a\tb\nline two\n", 13);
    tap_ok(ui_attach_file(&at, p, err, sizeof err) == 13, "a text file is taken (%s)", err);
    char *m = ui_attach_take(&at, "summarize");
    tap_ok(m && !strcmp(m, "```notes.txt\na\tb\nline two\n```\n\nsummarize"), "block, blank line, message: '%s'", m);
    free(m);
    tap_ok(at.text == NULL && at.n == 0, "taking clears the pending blocks");

    p = put("code.md", "x\n````\ny", 8);
    ui_attach_file(&at, p, err, sizeof err);
    p = put("b.c", "int b;", 6);
    ui_attach_file(&at, p, err, sizeof err);
    tap_ok(at.n == 2, "two files pending");
    m = ui_attach_take(&at, "");
    tap_ok(m && !strcmp(m, "`````code.md\nx\n````\ny\n`````\n\n```b.c\nint b;\n```\n"),
           "the fence outgrows the file's own run of backticks; no message: blocks only: '%s'", m);
    free(m);

    p = put("bin", "a\0b", 3);
    tap_ok(ui_attach_file(&at, p, err, sizeof err) < 0 && strstr(err, "not a text file"), "NUL byte: %s", err);
    p = put("latin1", "caf\xe9", 4);
    tap_ok(ui_attach_file(&at, p, err, sizeof err) < 0 && strstr(err, "not a text file"), "not UTF-8: %s", err);
    tap_ok(ui_attach_file(&at, dir, err, sizeof err) < 0 && strstr(err, "not a regular file"), "a directory: %s", err);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    mkfifo(fifo, 0600);
    tap_ok(ui_attach_file(&at, fifo, err, sizeof err) < 0 && strstr(err, "not a regular file"),
           "a FIFO is refused at once: %s", err);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/none", dir);
    tap_ok(ui_attach_file(&at, missing, err, sizeof err) < 0 && strstr(err, "No such file"), "missing: %s", err);
    char big[600];
    snprintf(big, sizeof big, "%s/big", dir);
    FILE *f = fopen(big, "wb");
    fseek(f, UI_ATTACH_MAX + 1L, SEEK_SET);
    fputc('x', f);
    fclose(f);
    tap_ok(ui_attach_file(&at, big, err, sizeof err) < 0 && strstr(err, "larger than"), "too large: %s", err);
    tap_ok(at.n == 0 && at.len == 0, "refusals add nothing");
    /* read to its end, not to the size stat gives: /proc's files say 0 */
    long long got = ui_attach_file(&at, "/proc/self/status", err, sizeof err);
    tap_ok(got > 0 && at.text && strstr(at.text, "Name:"), "a file of /proc is read whole (%lld bytes) %s", got, err);
    ui_attach_clear(&at);

    setenv("HOME", dir, 1);
    put("home.txt", "hi", 2);
    tap_ok(ui_attach_file(&at, "~/home.txt", err, sizeof err) == 2, "~/ is the home directory (%s)", err);
    ui_attach_clear(&at);
    int rc = ui_attach_text(&at, "na`me\n", "t", 1);
    tap_ok(rc == 0 && !strcmp(at.text, "```na_me_\nt\n```\n"), "a name cannot break the fence: '%s'", at.text);
    ui_attach_clear(&at);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
    return tap_done();
}
