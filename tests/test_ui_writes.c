/* The files the chat writes for the user, the input history and /save's
   Markdown, against a symlink planted at their path (it used to be
   followed and its target overwritten), with "~/" in /save's path, and
   with private modes. */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "tap.h"
#include "transcript.h"

static char dir[64];

static const char *in_dir(const char *name)
{
    static char buf[4][256];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 256, "%s/%s", dir, name);
    return b;
}

static int holds(const char *path, const char *needle)
{
    char buf[4096] = {0};
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

static void put(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    fputs(s, f);
    fclose(f);
}

static int regular_private(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600;
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8")) tap_skip_all("no C.UTF-8 locale");
    snprintf(dir, sizeof dir, "/tmp/ember-uiwrites-XXXXXX");
    if (!mkdtemp(dir)) tap_skip_all("no temporary directory");
    char err[512];

    /* history: a symlink planted where the history goes */
    const char *victim = in_dir("victim"), *hist = in_dir("history");
    put(victim, "precious\n");
    tap_ok(symlink(victim, hist) == 0, "symlink planted at the history path");
    ui_input *in = ui_input_new(hist, err, sizeof err);
    if (!in) {
        printf("1..0 # SKIP %s\n", err);
        return 0;
    }
    ui_input_history_add(in, "alinetyped");
    ui_input_free(in);
    tap_ok(holds(victim, "precious\n") && !holds(victim, "alinetyped"), "the symlink's target is untouched");
    tap_ok(regular_private(hist), "the history is now a regular file, mode 0600");
    tap_ok(holds(hist, "alinetyped"), "and holds the line");
    in = ui_input_new(hist, err, sizeof err);
    ui_input_history_add(in, "secondsession");
    ui_input_free(in);
    tap_ok(holds(hist, "alinetyped") && holds(hist, "secondsession"), "the next session keeps the old lines");

    /* /save: symlink at the target, "~/" expansion, mode 0600 */
    transcript t;
    tr_init(&t);
    tr_add(&t, TR_USER, "hello there");
    tr_add(&t, TR_ASSISTANT, "general kenobi");
    const char *md = in_dir("chat.md");
    tap_ok(symlink(victim, md) == 0, "symlink planted at the /save path");
    tap_ok(tr_save_markdown(&t, md, "m", err, sizeof err) == 0, "/save over the symlink succeeds");
    tap_ok(holds(victim, "precious\n") && !holds(victim, "kenobi"), "the symlink's target is untouched");
    tap_ok(regular_private(md) && holds(md, "general kenobi"), "the transcript is a regular file, mode 0600");
    setenv("HOME", dir, 1);
    tap_ok(tr_save_markdown(&t, "~/home.md", "m", err, sizeof err) == 0, "/save ~/home.md");
    tap_ok(holds(in_dir("home.md"), "hello there"), "~ is the home directory");
    tap_ok(access("~", F_OK) != 0, "no directory named ~ appears");
    tap_ok(tr_save_markdown(&t, in_dir("missing/x.md"), "m", err, sizeof err) < 0 &&
           !strncmp(err, "cannot write ", 13), "a failure says 'cannot write PATH: REASON' (%s)", err);
    tr_free(&t);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
    return tap_done();
}
