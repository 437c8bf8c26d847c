/* Writing a file safely: every file Ember writes (logits, JSON reports,
   synthesized models, transcripts, the input history, the demo cache) goes
   through here, so that a full disk, a planted symlink or a crash never
   leaves a truncated or redirected file behind.

   The data goes to a fresh temporary file beside the target (created with
   O_CREAT|O_EXCL|O_NOFOLLOW, so it can be neither an existing file nor a
   symlink), every write, flush, fsync and close is checked, the temporary
   is renamed over the target and the directory is fsync'd.  On any error
   the temporary is removed and the old target is left as it was.  rename()
   replaces a symlink at the target itself, never the file it points to. */
#ifndef EMBER_SAFEFILE_H
#define EMBER_SAFEFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "sys/err.h"

typedef struct ember_file ember_file;

/* Modes: user data (history, transcripts) is private; reports and models
   are as readable as any other file (the umask still applies). */
#define EMBER_MODE_PRIVATE 0600
#define EMBER_MODE_PUBLIC 0666

/* Starts writing PATH; NULL with "cannot write PATH: REASON" in err. */
ember_file *ember_file_create(const char *path, mode_t mode, ember_err *err);
/* The stream to write through (fprintf, fwrite, a JSON writer...); errors
   on it are noticed by ember_file_commit. */
FILE *ember_file_stream(ember_file *f);
/* The temporary's descriptor, for a library that insists on a FILE of
   its own (libedit fchmods fileno(), which the stream above lacks): write
   through a dup and check that stream's errors yourself. */
int ember_file_fd(ember_file *f);
/* The temporary's path (to remove it from a signal handler:
   stopguard.h); NULL when writing straight into a device or pipe. */
const char *ember_file_temp(const ember_file *f);
/* Checked write; -1 (and the file remembers the failure) on error. */
int ember_file_write(ember_file *f, const void *data, size_t len, ember_err *err);
/* Flushes, syncs, closes and renames into place, then frees f.  On any
   error (including an earlier failed write) nothing replaces the target;
   returns -1 with "cannot write PATH: REASON". */
int ember_file_commit(ember_file *f, ember_err *err);
/* Drops the temporary, leaving the target untouched; frees f (NULL ok). */
void ember_file_abort(ember_file *f);
/* The whole dance in one call. */
int ember_write_file(const char *path, const void *data, size_t len, mode_t mode, ember_err *err);

/* fflush(stdout) for output streamed as it is made (tokens): the first
   failure's reason is kept for ember_stdout_close.  0 or -1. */
int ember_stdout_flush(void);
/* Writes out stdout and reports whether everything printed reached it: 0,
   or -1 after printing "ember: cannot write standard output: REASON" (a
   closed pipe, EPIPE, stays quiet but still fails).  main() calls it last. */
int ember_stdout_close(void);

#endif
