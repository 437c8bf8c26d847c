/* Terminal state around the full-screen UI (terminal.h). */
#include "config.h"

#include <curses.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include "ember.h"
#include "terminal.h"

#define PASTE_ON "\x1b[?2004h"
#define PASTE_OFF "\x1b[?2004l"

static struct termios saved;
static int have_saved;
/* Built before any signal can need it: the handler only writes it. */
static char restore_seq[256];
static size_t restore_len;
/* The terminal and /dev/null, opened while arming: a fatal signal often
   hits the worker thread while the UI thread goes on drawing, so the
   handler first points the UI's stdout at /dev/null, then writes the
   restore through its own descriptor (otherwise a frame drawn after it
   lands on the shell's screen). */
static int tty_fd = -1, null_fd = -1;

bool ui_term_known(void)
{
    int err = 0;
    if (setupterm(NULL, STDOUT_FILENO, &err) != OK) return false;
    del_curterm(cur_term);   /* initscr sets it up again */
    cur_term = NULL;
    return true;
}

void ui_term_save(void)
{
    have_saved = tcgetattr(0, &saved) == 0;
}

static void add_cap(const char *name)
{
    char *s = tigetstr((char *)name);
    if (!s || s == (char *)-1) return;
    size_t n = strlen(s);
    if (restore_len + n < sizeof restore_seq) {
        memcpy(restore_seq + restore_len, s, n);
        restore_len += n;
    }
}

/* Async-signal-safe: write(2) and tcsetattr(3) only. */
static void restore_now(void)
{
    int fd = 1;
    if (tty_fd >= 0 && null_fd >= 0 && dup2(null_fd, 1) >= 0) fd = tty_fd;
    if (restore_len) {
        ssize_t r = write(fd, restore_seq, restore_len);
        (void)r;
    }
    if (have_saved) tcsetattr(0, TCSANOW, &saved);
}

void ui_term_arm(void)
{
    restore_len = 0;
    memcpy(restore_seq, PASTE_OFF, sizeof PASTE_OFF - 1);
    restore_len = sizeof PASTE_OFF - 1;
    add_cap("sgr0");
    add_cap("cnorm");
    add_cap("rmkx");
    add_cap("rmcup");
    if (restore_len + 2 < sizeof restore_seq) {   /* the shell prompt on a fresh line */
        memcpy(restore_seq + restore_len, "\r\n", 2);
        restore_len += 2;
    }
    fputs(PASTE_ON, stdout);
    fflush(stdout);
    if (tty_fd < 0) tty_fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (null_fd < 0) null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    ember_fault_guard_install(restore_now);
}

void ui_term_disarm(void)
{
    ember_fault_guard_install(NULL);
    fputs(PASTE_OFF, stdout);
    fflush(stdout);
}

void ui_term_leave(void)
{
    fputs(PASTE_OFF, stdout);
    fflush(stdout);
    endwin();
}

void ui_term_return(void)
{
    reset_prog_mode();
    fputs(PASTE_ON, stdout);
    fflush(stdout);
    clearok(curscr, TRUE);
    refresh();
}

void ui_term_suspend(void)
{
    ui_term_leave();
    /* Raw mode turned the key into a character; stop as the tty driver
       would have (the default action, not ncurses' own SIGTSTP handler,
       since endwin has already been done here). */
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGTSTP, &dfl, &old);
    kill(0, SIGTSTP);
    sigaction(SIGTSTP, &old, NULL);
    ui_term_return();   /* continued: take the terminal back */
}
