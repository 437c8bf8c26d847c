/* Removing registered temporaries on a stop signal (stopguard.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stopguard.h"

#define SLOTS 8

static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction old[3];
static char paths[SLOTS][PATH_MAX];
static volatile sig_atomic_t armed[SLOTS], stopped;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int in_use;           /* slots taken, under mu */
static bool installed;       /* our handler is set, under mu */

static void on_stop(int sig)
{
    int e = errno;
    stopped = 1;
    for (int i = 0; i < SLOTS; i++)
        if (armed[i]) unlink(paths[i]);
    int k = sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2;
    const struct sigaction *o = &old[k];
    if (!(o->sa_flags & SA_SIGINFO) && o->sa_handler == SIG_DFL) {
        /* die of it, as without us: blocked while we run, delivered on return */
        signal(sig, SIG_DFL);
        raise(sig);
    } else if (o->sa_flags & SA_SIGINFO) {
        if (o->sa_sigaction) o->sa_sigaction(sig, NULL, NULL);
    } else if (o->sa_handler != SIG_IGN) {
        o->sa_handler(sig);
    }
    errno = e;
}

int ember_stop_guard_add(const char *path)
{
    if (!path || strlen(path) >= PATH_MAX) return -1;
    pthread_mutex_lock(&mu);
    int slot = -1;
    for (int i = 0; i < SLOTS && slot < 0; i++)
        if (!armed[i]) slot = i;
    if (slot >= 0) {
        snprintf(paths[slot], sizeof paths[slot], "%s", path);
        /* the path before the flag: the handler reads it once armed (the
           compiler may not move the path's stores past this) */
        atomic_signal_fence(memory_order_seq_cst);
        armed[slot] = 1;
        if (in_use++ == 0 && !installed) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_stop;
            sigemptyset(&sa.sa_mask);
            for (int i = 0; i < 3; i++) sigaddset(&sa.sa_mask, sigs[i]);
            for (int i = 0; i < 3; i++) sigaction(sigs[i], &sa, &old[i]);
            installed = true;
        }
    }
    pthread_mutex_unlock(&mu);
    return slot;
}

void ember_stop_guard_remove(int slot)
{
    if (slot < 0 || slot >= SLOTS) return;
    pthread_mutex_lock(&mu);
    if (armed[slot]) {
        armed[slot] = 0;
        if (--in_use == 0 && installed) {
            /* a handler the program set after ours is its own: left alone */
            for (int i = 0; i < 3; i++) {
                struct sigaction cur;
                sigaction(sigs[i], NULL, &cur);
                if (!(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == on_stop) sigaction(sigs[i], &old[i], NULL);
            }
            installed = false;
        }
    }
    pthread_mutex_unlock(&mu);
}

bool ember_stop_guard_stopped(void) { return stopped != 0; }
