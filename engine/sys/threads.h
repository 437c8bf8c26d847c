/* A persistent worker pool: no thread creation per operation. */
#ifndef EMBER_THREADS_H
#define EMBER_THREADS_H

typedef struct ember_pool ember_pool;

/* fn(ctx, ith, nth): every thread (the caller is thread 0) runs it once. */
typedef void (*ember_pool_fn)(void *ctx, int ith, int nth);

ember_pool *ember_pool_new(int n_threads);   /* n <= 0: one per online core */
void ember_pool_free(ember_pool *p);
int ember_pool_size(const ember_pool *p);
/* Runs fn on all threads and returns when all have finished. */
void ember_pool_run(ember_pool *p, ember_pool_fn fn, void *ctx);
int ember_ncpu(void);

#endif
