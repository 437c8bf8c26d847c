/* The safe file writer (engine/sys/safefile.c) and the XDG paths
   (engine/sys/xdg.c): what a caller sees on success, on failure, with a
   planted symlink, a device, and relative XDG variables. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember.h"
#include "tap.h"

static char dir[64];

static char *path_in(const char *name)
{
    static char buf[4][256];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 256, "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    fputs(s, f);
    fclose(f);
}

static int same(const char *path, const char *s)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(s) && !memcmp(buf, s, n);
}

/* Files in dir other than the ones the test made: leftover temporaries. */
static int leftovers(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/ember-safefile-XXXXXX");
    if (!mkdtemp(dir)) tap_skip_all("no temporary directory");
    ember_err err = {{0}};

    /* a new file, private mode */
    const char *a = path_in("a.txt");
    tap_ok(ember_write_file(a, "hello\n", 6, EMBER_MODE_PRIVATE, &err) == 0, "new file written");
    tap_ok(same(a, "hello\n"), "new file has the content");
    struct stat st;
    int r = stat(a, &st);
    tap_ok(r == 0 && (st.st_mode & 0777) == 0600, "private mode is 0600 (%o)", (unsigned)(st.st_mode & 0777));

    /* replacing keeps nothing of the old one */
    tap_ok(ember_write_file(a, "bye\n", 4, EMBER_MODE_PUBLIC, &err) == 0 && same(a, "bye\n"), "existing file replaced");

    /* a planted symlink at the target: the link is replaced, its target untouched */
    const char *victim = path_in("victim"), *link = path_in("out.json");
    put(victim, "precious\n");
    tap_ok(symlink(victim, link) == 0, "symlink planted");
    tap_ok(ember_write_file(link, "data\n", 5, EMBER_MODE_PUBLIC, &err) == 0, "write over a symlink succeeds");
    tap_ok(same(victim, "precious\n"), "the symlink's target keeps its content");
    tap_ok(lstat(link, &st) == 0 && S_ISREG(st.st_mode) && same(link, "data\n"), "the symlink became the regular file");

    /* failure: the directory does not exist; the message names the path */
    const char *missing = path_in("no/such/file");
    err.msg[0] = 0;
    tap_ok(ember_write_file(missing, "x", 1, EMBER_MODE_PUBLIC, &err) < 0, "write into a missing directory fails");
    char want[300];
    snprintf(want, sizeof want, "cannot write %s: %s", missing, strerror(ENOENT));
    tap_ok(!strcmp(err.msg, want), "message is '%s'", err.msg);

    /* abort leaves the old file and no temporary */
    ember_file *f = ember_file_create(a, EMBER_MODE_PUBLIC, &err);
    tap_ok(f != NULL, "create");
    fprintf(ember_file_stream(f), "half a file");
    ember_file_abort(f);
    tap_ok(same(a, "bye\n"), "abort keeps the old content");

    /* a full disk, played by a file size limit: the write fails, commit
       refuses, the old file stays and no temporary is left */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old_lim, lim;
    getrlimit(RLIMIT_FSIZE, &old_lim);
    lim = old_lim;
    lim.rlim_cur = 1024;
    setrlimit(RLIMIT_FSIZE, &lim);
    static char big[65536];
    memset(big, 'x', sizeof big);
    tap_ok(ember_write_file(a, big, sizeof big, EMBER_MODE_PUBLIC, &err) < 0, "a write past the limit fails");
    snprintf(want, sizeof want, "cannot write %s: %s", a, strerror(EFBIG));
    tap_ok(!strcmp(err.msg, want), "message is '%s'", err.msg);
    f = ember_file_create(a, EMBER_MODE_PUBLIC, &err);
    for (int i = 0; i < 100; i++) fprintf(ember_file_stream(f), "%s", "a line through the stream\n");
    tap_ok(ember_file_commit(f, &err) < 0, "stream writes past the limit: commit fails");
    setrlimit(RLIMIT_FSIZE, &old_lim);
    tap_ok(same(a, "bye\n"), "the old file is untouched");
    tap_ok(leftovers() == 0, "no temporary left after the failures");

    /* a device is written into, not replaced: /dev/full reports ENOSPC at
       commit.  Through links in the test's directory, so that a regression
       (run as root) replaces a link, never the system's devices. */
    const char *full = path_in("full"), *null = path_in("null");
    if (access("/dev/full", W_OK) == 0 && symlink("/dev/full", full) == 0) {
        f = ember_file_create(full, EMBER_MODE_PUBLIC, &err);
        tap_ok(f != NULL, "/dev/full opened for writing");
        if (f) {
            fprintf(ember_file_stream(f), "some bytes");
            tap_ok(ember_file_commit(f, &err) < 0, "commit to /dev/full fails");
            snprintf(want, sizeof want, "cannot write %s: %s", full, strerror(ENOSPC));
            tap_ok(!strcmp(err.msg, want), "message is '%s'", err.msg);
        }
        tap_ok(lstat(full, &st) == 0 && S_ISLNK(st.st_mode), "the link to /dev/full is still a link");
    } else {
        tap_skip("no /dev/full");
    }
    tap_ok(symlink("/dev/null", null) == 0 && ember_write_file(null, "x", 1, EMBER_MODE_PUBLIC, &err) == 0 &&
           lstat(null, &st) == 0 && S_ISLNK(st.st_mode), "/dev/null takes the write through its link");
    tap_ok(leftovers() == 0, "no temporaries left behind");

    /* XDG: absolute values are used, relative ones ignored for $HOME's default */
    char buf[512];
    setenv("HOME", "/home/someone", 1);
    setenv("XDG_STATE_HOME", "/var/st", 1);
    tap_ok(ember_xdg_path(EMBER_XDG_STATE, "history", false, buf, sizeof buf) == 0 &&
           !strcmp(buf, "/var/st/ember/history"), "absolute XDG_STATE_HOME used: %s", buf);
    setenv("XDG_STATE_HOME", "rel/st", 1);
    tap_ok(ember_xdg_path(EMBER_XDG_STATE, "history", false, buf, sizeof buf) == 0 &&
           !strcmp(buf, "/home/someone/.local/state/ember/history"), "relative XDG_STATE_HOME ignored: %s", buf);
    setenv("XDG_CACHE_HOME", "cache", 1);
    tap_ok(ember_xdg_path(EMBER_XDG_CACHE, "demo-tiny.gguf", false, buf, sizeof buf) == 0 &&
           !strcmp(buf, "/home/someone/.cache/ember/demo-tiny.gguf"), "relative XDG_CACHE_HOME ignored: %s", buf);
    setenv("XDG_CONFIG_HOME", "./c", 1);
    tap_ok(ember_xdg_path(EMBER_XDG_CONFIG, "profiles", false, buf, sizeof buf) == 0 &&
           !strcmp(buf, "/home/someone/.config/ember/profiles"), "relative XDG_CONFIG_HOME ignored: %s", buf);
    setenv("XDG_STATE_HOME", "/var/st", 1);
    tap_ok(ember_place_path(EMBER_PLACE_CHATS, false, buf, sizeof buf) == 0 && !strcmp(buf, "/var/st/ember/chats"),
           "the file table: chats under XDG_STATE_HOME: %s", buf);
    tap_ok(ember_place_path(EMBER_PLACE_PROFILES, false, buf, sizeof buf) == 0 &&
           !strcmp(buf, "/home/someone/.config/ember/profiles"), "the file table: profiles under the config base: %s", buf);
    tap_ok(ember_place_path((ember_place)99, false, buf, sizeof buf) < 0, "a file not in the table: no path");
    unsetenv("HOME");
    tap_ok(ember_xdg_path(EMBER_XDG_CONFIG, "profiles", false, buf, sizeof buf) < 0, "no HOME, relative XDG: no path");
    setenv("XDG_CACHE_HOME", dir, 1);
    tap_ok(ember_xdg_path(EMBER_XDG_CACHE, "x", true, buf, sizeof buf) == 0 &&
           stat(path_in("ember"), &st) == 0 && S_ISDIR(st.st_mode), "create makes the ember directory");

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
    return tap_done();
}
