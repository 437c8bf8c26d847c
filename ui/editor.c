/* External editor (editor.h). */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "editor.h"

static const char *editor(void)
{
    const char *e = getenv("VISUAL");
    if (!e || !*e) e = getenv("EDITOR");
    return e && *e ? e : "vi";
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w, n -= (size_t)w;
    }
    return 0;
}

char *ui_edit_text(const char *text, char *err, size_t errcap)
{
    const char *tmpdir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ember-draft-XXXXXX.md", tmpdir && *tmpdir == '/' ? tmpdir : "/tmp");
    int fd = mkstemps(path, 3);   /* 0600, O_EXCL: nobody else's file */
    if (fd < 0) {
        snprintf(err, errcap, "cannot make a file for the editor: %s", strerror(errno));
        return NULL;
    }
    if (write_all(fd, text, strlen(text)) < 0 || close(fd) < 0) {
        snprintf(err, errcap, "cannot write %s: %s", path, strerror(errno));
        unlink(path);
        return NULL;
    }
    /* as system() does: the editor owns Ctrl-C and Ctrl-\ while it runs */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s \"$1\"", editor());
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, "sh", path, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (pid < 0) snprintf(err, errcap, "cannot start the editor: %s", strerror(errno));
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
            snprintf(err, errcap, "the editor '%.200s' was not found: the draft is unchanged", editor());
        else
            snprintf(err, errcap, "the editor '%.200s' failed (status %d): the draft is unchanged", editor(),
                     WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        unlink(path);
        return NULL;
    }
    /* read back with the attachment reader's checks: a text file, bounded */
    size_t n;
    char *out = ui_read_text_file(path, &n, err, errcap);
    unlink(path);
    if (out && n && out[n - 1] == '\n') out[n - 1] = 0;   /* the editor's final newline */
    return out;
}
