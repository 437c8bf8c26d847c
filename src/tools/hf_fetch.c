/* A pull on its own thread (hf_fetch.h). */
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_fetch.h"

struct hf_fetch {
    pthread_t thread;
    pthread_mutex_t mu;
    hf_ref ref;
    /* under mu: */
    hf_fetch_state st;
    bool cancel, finished;
    int rc;
    char path[PATH_MAX];
    ember_err err;
};

static int watch(void *ctx, const char *file, uint64_t have, uint64_t total, double rate)
{
    hf_fetch *f = ctx;
    pthread_mutex_lock(&f->mu);
    snprintf(f->st.file, sizeof f->st.file, "%s", file);
    f->st.have = have, f->st.total = total, f->st.bytes_per_s = rate;
    bool stop = f->cancel;
    pthread_mutex_unlock(&f->mu);
    return stop;
}

static void *run(void *arg)
{
    hf_fetch *f = arg;
    hf_watch w = {watch, f};
    char path[PATH_MAX];
    ember_err err = {{0}};
    /* no bar, no summary: the terminal is the UI's */
    int rc = hf_pull(&f->ref, false, false, &w, path, sizeof path, &err);
    pthread_mutex_lock(&f->mu);
    f->rc = rc;
    snprintf(f->path, sizeof f->path, "%s", path);
    f->err = err;
    f->finished = true;
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

hf_fetch *hf_fetch_start(const hf_ref *r, ember_err *err)
{
    hf_fetch *f = calloc(1, sizeof *f);
    if (!f) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    f->ref = *r;
    pthread_mutex_init(&f->mu, NULL);
    if (pthread_create(&f->thread, NULL, run, f)) {
        pthread_mutex_destroy(&f->mu);
        free(f);
        ember_seterr(err, "cannot start the download's thread");
        return NULL;
    }
    return f;
}

int hf_fetch_poll(hf_fetch *f, hf_fetch_state *st, char *path, size_t cap, ember_err *err)
{
    pthread_mutex_lock(&f->mu);
    int r = !f->finished ? HF_FETCH_RUNNING : f->rc == 0 ? HF_FETCH_DONE : HF_FETCH_FAILED;
    if (st) *st = f->st;
    if (r == HF_FETCH_DONE) snprintf(path, cap, "%s", f->path);
    if (r == HF_FETCH_FAILED) *err = f->err;
    pthread_mutex_unlock(&f->mu);
    return r;
}

void hf_fetch_cancel(hf_fetch *f)
{
    pthread_mutex_lock(&f->mu);
    f->cancel = true;
    pthread_mutex_unlock(&f->mu);
}

void hf_fetch_free(hf_fetch *f)
{
    if (!f) return;
    hf_fetch_cancel(f);
    pthread_join(f->thread, NULL);
    pthread_mutex_destroy(&f->mu);
    free(f);
}
