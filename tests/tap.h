/* Minimal TAP producer for the automake TAP driver.  Header-only. */
#ifndef EMBER_TAP_H
#define EMBER_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline void tap_plan(int n) { printf("1..%d\n", n); fflush(stdout); }
/* Skips the whole test program (reported as SKIP, never PASS). */
static inline void tap_skip_all(const char *why)
{
    printf("1..0 # SKIP %s\n", why);
    exit(0);
}

__attribute__((format(printf, 2, 3)))
static inline int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++tap_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (!cond) tap_failed++;
    return cond;
}

__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static inline void tap_skip(const char *why) { printf("ok %d # SKIP %s\n", ++tap_n, why); }

/* Ends a program without a plan line up front. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

/* Path of a fixture in the optional fixtures folder (EMBER_SHARED;
   doc/DESIGN.md, "Fixtures"), or NULL when absent. */
#include <sys/stat.h>
static inline const char *tap_shared(const char *rel, char *buf, size_t cap)
{
    const char *root = getenv("EMBER_SHARED");
    struct stat st;
    if (!root) return NULL;
    snprintf(buf, cap, "%s/%s", root, rel);
    return stat(buf, &st) == 0 ? buf : NULL;
}

#endif
