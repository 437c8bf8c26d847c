/* Models a C test writes for itself with `ember synth`, in a temporary
   directory that goes away with everything in it (pack caches a test
   points XDG_CACHE_HOME at included).  Header-only, like tap.h.  The
   program is $EMBER_BIN, the build's ember (Makefile.am's
   AM_TESTS_ENVIRONMENT); without it the test is skipped, never passed. */
#ifndef EMBER_SYNTH_DIR_H
#define EMBER_SYNTH_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tap.h"

typedef struct {
    const char *bin;
    char dir[64];
} synth_dir;

/* TAG names the directory (/tmp/ember-TAG.XXXXXX) so a leftover one says
   which test left it. */
static inline void synth_dir_open(synth_dir *sd, const char *tag)
{
    sd->bin = getenv("EMBER_BIN");
    if (!sd->bin || access(sd->bin, X_OK)) tap_skip_all("EMBER_BIN (the ember program) not built");
    snprintf(sd->dir, sizeof sd->dir, "/tmp/ember-%s.XXXXXX", tag);
    if (!mkdtemp(sd->dir)) tap_skip_all("no temporary directory");
}

/* Writes a LIKE-shaped DTYPE model into the directory and its path into
   PATH.  SEED 0 is synth's own default.  A failure is a failed test line
   (synth is the build's own program: it must work), and false. */
static inline bool synth_model(const synth_dir *sd, const char *like, const char *dtype, unsigned seed, char *path,
                               size_t cap)
{
    char cmd[1024], opt[32] = "";
    if (seed) snprintf(opt, sizeof opt, " --seed %u", seed);
    snprintf(path, cap, "%s/%s-%s-s%u.gguf", sd->dir, like, dtype, seed);
    snprintf(cmd, sizeof cmd, "'%s' synth -q -o '%s' --like %s --dtype %s --threads 1%s", sd->bin, path, like, dtype,
             opt);
    if (system(cmd) == 0) return true;
    tap_ok(0, "%s %s (seed %u) synthesized", like, dtype, seed);
    return false;
}

/* The directory's name is mkdtemp's: no quote to escape. */
static inline void synth_dir_close(synth_dir *sd)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", sd->dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", sd->dir);
}

#endif
