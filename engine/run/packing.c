/* The packed lifecycle: re-lay eligible Q8_0 projections into 16-row tiles
   (in parallel on the pool) and release their source pages. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "model.h"
#include "pagecache.h"

/* 2 MiB blocks the buddy allocator could hand out right now (orders 9
   and 10 of /proc/buddyinfo), or -1 when unknown. */
static long free_huge_blocks(void)
{
    FILE *f = fopen("/proc/buddyinfo", "r");
    if (!f) return -1;
    char line[512];
    long total = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "zone");
        if (!p) continue;
        p += 4;
        while (*p == ' ') p++;
        while (*p && *p != ' ') p++;   /* zone name */
        long v[11] = {0};
        int n = 0;
        char *end;
        while (n < 11) {
            long x = strtol(p, &end, 10);
            if (end == p) break;
            v[n++] = x;
            p = end;
        }
        if (n == 11) total += v[9] + 2 * v[10];
    }
    fclose(f);
    return total;
}

typedef struct {
    ember_weight **ws;
    int n;
} pack_job;

static void pack_run(void *ctx, int ith, int nth)
{
    pack_job *j = ctx;
    for (int i = 0; i < j->n; i++) {
        ember_weight *w = j->ws[i];
        int tiles = (int)((w->out + EMBER_PACK_ROWS - 1) / EMBER_PACK_ROWS);
        int t0 = (int)((int64_t)tiles * ith / nth), t1 = (int)((int64_t)tiles * (ith + 1) / nth);
        if (t1 > t0) ember_pack_q8_0(w->data, w->row_bytes, (int)w->out, w->in, w->packed, t0, t1);
    }
}

/* Allocates every wanted weight's tile arena. */
static int alloc_arenas(ember_model *m, ember_err *err)
{
    ember_weight *all[4096];
    int n = ember_model_weights(m, all, 4096);
    /* Huge pages shorten the tile streams' TLB walks, but when the kernel
       must compact memory to find them a fault can stall for seconds: ask
       for them only when enough 2 MiB blocks are free already. */
    size_t need = 0;
    for (int i = 0; i < n; i++)
        if (all[i]->want_pack) need += ember_pack_q8_0_bytes((int)all[i]->out, all[i]->in);
    if (!need) return 0;
    long free2m = free_huge_blocks();
    bool huge = free2m >= 0 && (size_t)free2m * (2u << 20) >= need + need / 4;
    for (int i = 0; i < n; i++) {
        ember_weight *w = all[i];
        if (!w->want_pack) continue;
        w->packed_bytes = ember_pack_q8_0_bytes((int)w->out, w->in);
        /* 2 MiB alignment lets the kernel back big tiles with huge pages */
        size_t align = w->packed_bytes >= (2u << 20) ? (2u << 20) : 64;
        size_t sz = (w->packed_bytes + align - 1) / align * align;
        if (posix_memalign(&w->packed, align, sz) != 0) {
            w->packed = NULL;
            return ember_seterr(err, "%s: cannot allocate %zu MiB for packed tiles", w->t->name_z, sz >> 20);
        }
#ifdef MADV_HUGEPAGE
        if (huge && align > 64) madvise(w->packed, sz, MADV_HUGEPAGE);
#endif
    }
    return 0;
}

/* Faults in this thread's share of every arena: the kernel's zeroing of
   fresh pages, measured apart from the re-layout (on a VM it also includes
   the host backing the guest's pages, and varies by 10x between runs). */
static void prefault_run(void *ctx, int ith, int nth)
{
    pack_job *j = ctx;
    for (int i = 0; i < j->n; i++) {
        ember_weight *w = j->ws[i];
        size_t a = (size_t)((uint64_t)w->packed_bytes * (uint64_t)ith / (uint64_t)nth);
        size_t b = (size_t)((uint64_t)w->packed_bytes * (uint64_t)(ith + 1) / (uint64_t)nth);
        if (b > a) ember_populate((uint8_t *)w->packed + a, b - a, true);
    }
}

/* The file is mapped 2 MiB at a time where its page cache holds 2 MiB
   folios (ember_map_file).  Releasing part of such a mapping unmaps the
   whole 2 MiB, and the next touch by a neighbour that stays compressed maps
   all of it again, released pages included: Pss_File would creep back
   during decode.  The 2 MiB blocks that a released range only partly covers
   are therefore mapped 4 KiB at a time (MADV_NOHUGEPAGE splits them off
   into their own mapping), so a neighbour's touch maps only its own pages. */
static void small_pages_at(const ember_model *m, uintptr_t x)
{
#ifdef MADV_NOHUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t lo = x & ~(huge - 1), hi = lo + huge;
    if (lo == x) return;   /* on a 2 MiB boundary: no block is split */
    uintptr_t map = (uintptr_t)m->f->map, end = map + (uintptr_t)m->f->size;
    if (lo < map) lo = map;
    if (hi > end) hi = end;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
#else
    (void)m;
    (void)x;
#endif
}

/* Releases a packed weight's source pages: only whole pages inside the
   tensor, since a page shared with a neighbour that stays compressed must
   remain mapped. */
static void evict_weight(ember_model *m, const ember_weight *w)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)w->t->data + page - 1) & ~(page - 1);
    uintptr_t b = ((uintptr_t)w->t->data + w->t->nbytes) & ~(page - 1);
    if (b <= a) return;
    small_pages_at(m, a);
    small_pages_at(m, b);
    madvise((void *)a, b - a, MADV_DONTNEED);
    /* a packed LM head tied to the embedding table: its rows are still
       looked up, one per token; read through the mapping, each lookup
       would map back the whole page-cache folio around it (up to 2 MiB) */
    if (m->tok_embd.t == w->t) m->embd_released = true;
}

void ember_model_evict_sources(ember_model *m)
{
    ember_weight *all[4096];
    int n = ember_model_weights(m, all, 4096);
    for (int i = 0; i < n; i++)
        if (all[i]->rep == EMBER_REP_PACKED_Q8X16 && all[i]->packed) evict_weight(m, all[i]);
    m->evicted = true;
}

int ember_model_pack(ember_model *m, ember_pool *pool, ember_err *err)
{
    if (m->packed_done) return 0;
    double t0 = ember_now_ms();
    if (alloc_arenas(m, err)) return -1;
    ember_weight *all[4096], *todo[4096];
    int n = ember_model_weights(m, all, 4096), k = 0;
    for (int i = 0; i < n; i++)
        if (all[i]->want_pack) todo[k++] = all[i];
    pack_job j = {todo, k};
    ember_pool_run(pool, prefault_run, &j);
    m->prefault_ms = ember_now_ms() - t0;
    if (m->opts.evict_source) {
        /* One weight at a time, its source released as soon as its tiles
           are written: the file pages and their packed copy are mapped
           together for one weight only, so the process never holds two
           copies of the weights (peak RSS about one copy, not two). */
        for (int i = 0; i < k; i++) {
            pack_job one = {todo + i, 1};
            ember_pool_run(pool, pack_run, &one);
            evict_weight(m, todo[i]);
        }
    } else {
        ember_pool_run(pool, pack_run, &j);
    }
    for (int i = 0; i < k; i++) {
        todo[i]->rep = EMBER_REP_PACKED_Q8X16;
        m->plan.e[todo[i]->plan_index].reason[0] = '\0';
    }
    m->pack_ms = ember_now_ms() - t0;
    m->packed_done = true;
    return 0;
}

