/* Persistent pool: workers spin briefly, then sleep on a condition
   variable, so a decode step costs no thread creation and little latency. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "threads.h"

struct ember_pool {
    int n;
    pthread_t *tids;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ember_pool_fn fn;
    void *ctx;
    atomic_uint gen;          /* bumped for every job */
    atomic_int pending;       /* workers still running the job */
    atomic_int quit;
};

typedef struct { ember_pool *p; int ith; } worker_arg;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    ember_pool *p = wa->p;
    int ith = wa->ith;
    free(wa);
    unsigned seen = 0;
    for (;;) {
        unsigned g;
        int spins = 0;
        while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen &&
               !atomic_load(&p->quit) && spins < 20000) {
            cpu_relax();
            spins++;
        }
        if (g == seen && !atomic_load(&p->quit)) {
            pthread_mutex_lock(&p->mu);
            while ((g = atomic_load(&p->gen)) == seen && !atomic_load(&p->quit))
                pthread_cond_wait(&p->cv, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->quit)) return NULL;
        seen = g;
        p->fn(p->ctx, ith, p->n);
        atomic_fetch_sub_explicit(&p->pending, 1, memory_order_release);
    }
}

int ember_ncpu(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

ember_pool *ember_pool_new(int n)
{
    if (n <= 0) n = ember_ncpu();
    if (n > 256) n = 256;
    ember_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->tids = calloc((size_t)n, sizeof *p->tids);
    for (int i = 1; i < n; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        wa->p = p;
        wa->ith = i;
        if (pthread_create(&p->tids[i], NULL, worker_main, wa) != 0) {
            free(wa);
            p->n = i;             /* run with the threads we got */
            break;
        }
    }
    return p;
}

void ember_pool_free(ember_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++) pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->tids);
    free(p);
}

int ember_pool_size(const ember_pool *p) { return p ? p->n : 1; }

void ember_pool_run(ember_pool *p, ember_pool_fn fn, void *ctx)
{
    if (!p || p->n == 1) {
        fn(ctx, 0, 1);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->pending, p->n - 1);
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add_explicit(&p->gen, 1, memory_order_release);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    fn(ctx, 0, p->n);
    while (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) cpu_relax();
}
