/* A pull (hf_pull) on a thread of its own, for the chat's /model: the UI
   thread keeps drawing and reading keys, looks at the progress now and
   then, and may cancel (the partial file stays, to be resumed as `ember
   pull` resumes it).  Nothing of it writes to the terminal. */
#ifndef EMBER_HF_FETCH_H
#define EMBER_HF_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "ember.h"
#include "hf.h"

typedef struct hf_fetch hf_fetch;

/* Starts pulling r; NULL with err when the thread cannot start. */
hf_fetch *hf_fetch_start(const hf_ref *r, ember_err *err);

typedef struct hf_fetch_state {
    char file[256];           /* "" until the file is known */
    uint64_t have, total;
    double bytes_per_s;
} hf_fetch_state;

enum { HF_FETCH_RUNNING = 0, HF_FETCH_DONE = 1, HF_FETCH_FAILED = -1 };
/* Where it is: running (st filled), done (the local path in path) or
   failed (err; a cancelled one too). */
int hf_fetch_poll(hf_fetch *f, hf_fetch_state *st, char *path, size_t cap, ember_err *err);
/* Asks the transfer to stop; the poll then says failed, with the reason. */
void hf_fetch_cancel(hf_fetch *f);
/* Cancels if still running, waits for the thread, frees. */
void hf_fetch_free(hf_fetch *f);

#endif
