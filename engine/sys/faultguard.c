/* What a dying process still owes the person at the terminal.

   SIGBUS, SIGSEGV, SIGABRT, SIGQUIT, SIGFPE and SIGILL end the process, but
   a full-screen front end has put the terminal in raw mode on the alternate
   screen: dying as is leaves a shell that neither echoes nor shows what is
   typed.  The handler first runs the front end's restore function (which
   must be async-signal-safe: a write of a precomputed sequence and
   tcsetattr), then either explains a SIGBUS on the model mapping and exits,
   or re-raises the signal with its default action so cores and exit
   statuses stay what they would have been. */
#include "config.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ember.h"
#include "faultguard.h"

#define MAX_MAPS 8

/* Written by the loading thread, read by the handler in any thread:
   lock-free atomics, no locks in a signal handler. */
static _Atomic uintptr_t map_lo[MAX_MAPS], map_hi[MAX_MAPS];
static const char *_Atomic map_msg[MAX_MAPS];   /* NULL: the model file's */
static void (*_Atomic restore_fn)(void);

void ember_fault_guard_note_map(const void *p, size_t n, const char *what)
{
    if (!p || !n) return;
    for (int i = 0; i < MAX_MAPS; i++) {
        uintptr_t expect = 0;
        if (atomic_compare_exchange_strong(&map_lo[i], &expect, (uintptr_t)p)) {
            atomic_store(&map_msg[i], what);
            atomic_store(&map_hi[i], (uintptr_t)p + n);
            return;
        }
    }
}

void ember_fault_guard_forget_map(const void *p)
{
    for (int i = 0; i < MAX_MAPS; i++)
        if (atomic_load(&map_lo[i]) == (uintptr_t)p) {
            atomic_store(&map_hi[i], 0);
            atomic_store(&map_lo[i], 0);
        }
}

/* The slot of the noted mapping holding a, or -1. */
static int noted_map(uintptr_t a)
{
    for (int i = 0; i < MAX_MAPS; i++) {
        uintptr_t lo = atomic_load(&map_lo[i]), hi = atomic_load(&map_hi[i]);
        if (lo && a >= lo && a < hi) return i;
    }
    return -1;
}

static void say(const char *s) { ssize_t r = write(2, s, strlen(s)); (void)r; }

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    void (*restore)(void) = atomic_load(&restore_fn);
    if (restore) restore();
    int slot = sig == SIGBUS && si ? noted_map((uintptr_t)si->si_addr) : -1;
    if (slot >= 0) {
        const char *what = atomic_load(&map_msg[slot]);
        say("ember: the ");
        say(what ? what : "model file");
        say(" changed on disk while in use (truncated or rewritten in place); stopped\n");
        _exit(128 + SIGBUS);
    }
    /* SA_RESETHAND put the default action back; the signal is blocked
       until we return, then delivered again with it. */
    raise(sig);
}

static const int fatal_signals[] = {SIGBUS, SIGSEGV, SIGABRT, SIGQUIT, SIGFPE, SIGILL};

void ember_fault_guard_install(void (*restore)(void))
{
    atomic_store(&restore_fn, restore);
    /* A stack overflow's SIGSEGV needs a stack of its own to run on. */
    static char alt[64 * 1024];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        sigaction(fatal_signals[i], &sa, NULL);
}
