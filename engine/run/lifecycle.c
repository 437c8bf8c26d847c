/* The weight strategy's lifecycle (lifecycle.h): at the phases the profile
   names, re-lay the weights the plan chose into their packed layout (in
   parallel on the session's pool), release their source pages, release
   them again after a prefill that read the sources, and take the memory
   snapshot of each phase. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "lifecycle.h"
#include "packcache.h"
#include "pagecache.h"

/* Weights ws[0..n), each its tiles [t0, t1) clipped to the weight's own
   (t1 INT_MAX: all), shared out among the threads. */
typedef struct {
    ember_weight **ws;
    int n, t0, t1;
} pack_job;

static int tiles_of(const ember_weight *w)
{
    const int tr = w->pack_kern->layout->tile_rows;
    return (int)((w->out + tr - 1) / tr);
}

static void pack_run(void *ctx, int ith, int nth)
{
    pack_job *j = ctx;
    for (int i = 0; i < j->n; i++) {
        ember_weight *w = j->ws[i];
        int lo = j->t0, hi = j->t1 < tiles_of(w) ? j->t1 : tiles_of(w);
        int t0 = lo + (int)((int64_t)(hi - lo) * ith / nth), t1 = lo + (int)((int64_t)(hi - lo) * (ith + 1) / nth);
        if (t1 > t0) w->pack_kern->layout->pack(w->data, w->row_bytes, (int)w->out, w->in, w->packed, t0, t1);
    }
}

/* Allocates one arena for every wanted weight's tiles, each weight's at a
   4 KiB boundary.  One block, not one per weight: with 2 MiB alignment per
   weight (for huge pages) every weight's last huge page was resident in
   full, 90 MiB more than the tiles on a 1B Q4_K_M model. */
static int alloc_arenas(ember_model *m, ember_err *err)
{
    int n;
    ember_weight *const *all = ember_model_weights(m, &n);
    const size_t page = 4096;
    size_t need = 0;
    for (int i = 0; i < n; i++)
        if (all[i]->pack_kern) {
            all[i]->packed_bytes = all[i]->pack_kern->layout->bytes((int)all[i]->out, all[i]->in);
            need += (all[i]->packed_bytes + page - 1) / page * page;
        }
    if (!need) return 0;
    /* huge pages shorten the tile streams' TLB walks (pagecache.h) */
    m->pack_arena = ember_alloc_huge(need);
    if (!m->pack_arena) return ember_seterr(err, "cannot allocate %zu MiB for packed tiles", need >> 20);
    m->pack_arena_bytes = need;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        ember_weight *w = all[i];
        if (!w->pack_kern) continue;
        w->packed = (uint8_t *)m->pack_arena + off;
        off += (w->packed_bytes + page - 1) / page * page;
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
#define HUGE_BLOCK ((uintptr_t)EMBER_HUGE_PAGE)

/* The 2 MiB blocks [a, b) touches mapped 4 KiB at a time. */
static void small_pages_over(const ember_model *m, uintptr_t a, uintptr_t b)
{
#ifdef MADV_NOHUGEPAGE
    uintptr_t lo = a & ~(HUGE_BLOCK - 1), hi = (b + HUGE_BLOCK - 1) & ~(HUGE_BLOCK - 1);
    uintptr_t map = (uintptr_t)m->f->map, end = map + (uintptr_t)m->f->size;
    if (lo < map) lo = map;
    if (hi > end) hi = end;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_NOHUGEPAGE);
#else
    (void)m;
    (void)a;
    (void)b;
#endif
}

/* The block around x, unless x is on a block boundary (no block is split). */
static void small_pages_at(const ember_model *m, uintptr_t x)
{
    if (x & (HUGE_BLOCK - 1)) small_pages_over(m, x, x + 1);
}

/* The whole pages of a packed weight's source from its start up to byte
   `end` of it: only pages inside the tensor, since a page shared with a
   neighbour that stays compressed must remain mapped. */
static uintptr_t source_pages_end(const ember_weight *w, uint64_t end)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    return ((uintptr_t)w->data + (uintptr_t)end) & ~(page - 1);
}

/* The end of all of a packed weight's source pages.  An expert's slab
   (model.h, ember_moe) that another slab of its tensor follows also takes
   the page it shares with that one, which is packed too (else each of a
   model's tens of thousands of slabs would keep a page mapped); the
   tensor's last page stays if it is shared with a neighbour. */
static uintptr_t source_pages_all(const ember_weight *w)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t end = (uintptr_t)w->data + (uintptr_t)(w->row_bytes * (uint64_t)w->out);
    const uintptr_t tend = ((uintptr_t)w->t->data + (uintptr_t)w->t->nbytes) & ~(page - 1);
    if (end >= (uintptr_t)w->t->data + (uintptr_t)w->t->nbytes) return end & ~(page - 1);
    const uintptr_t up = (end + page - 1) & ~(page - 1);
    return up < tend ? up : tend;
}

/* Releases the source pages [*done, b) of a packed weight and moves *done
   on; *done starts at the tensor's first whole page.
   The release starts at the 2 MiB block around *done, not at *done: a read
   fault maps the whole page-cache folio around the page it reads, even
   4 KiB at a time (Linux 6.18's fault-around), so the first read of a
   slice maps back what the slice before released in its folio.  Released
   only from *done, those pages stayed mapped to the end: 3.3 GiB of a
   17.3 GiB MoE file beside its 17.5 GiB of tiles, in 2 MiB blocks each
   mapped up to where its last slice began.  A neighbour's page released
   with them is harmless: the mapping is read-only, and its next read maps
   it again. */
static void evict_upto(ember_model *m, const ember_weight *w, uintptr_t *done, uintptr_t b)
{
    if (b > *done) {
        uintptr_t a = *done & ~(HUGE_BLOCK - 1);
        if (a < (uintptr_t)m->f->map) a = (uintptr_t)m->f->map;
        small_pages_at(m, a);
        small_pages_at(m, b);
        madvise((void *)a, b - a, MADV_DONTNEED);
        *done = b;
    }
    /* a packed LM head tied to the embedding table: its rows are still
       looked up, one per token; read through the mapping, each lookup
       would map back the whole page-cache folio around it (up to 2 MiB) */
    if (m->tok_embd.t == w->t) m->embd_released = true;
}

/* The first whole page of a weight's source; of an expert slab after the
   first, the page it shares with the slab before (source_pages_all). */
static uintptr_t source_pages_start(const ember_weight *w)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (w->data > w->t->data) return (uintptr_t)w->data & ~(page - 1);
    return ((uintptr_t)w->data + page - 1) & ~(page - 1);
}

/* Releases a packed weight's source pages. */
static void evict_weight(ember_model *m, const ember_weight *w)
{
    uintptr_t done = source_pages_start(w);
    evict_upto(m, w, &done, source_pages_all(w));
}

/* A weight is packed in slices of about this much source, each slice's
   pages released as soon as its tiles are written, so that a big weight
   (the 207 MB LM head of a 1B model with 128256 tokens) is not held twice
   while it is packed. */
#define PACK_SLICE_BYTES ((size_t)4 << 20)

/* Test-only: EMBER_TEST_PACK_SLICE_BYTES sets the slice (1: a tile at a
   time), so that a tiny model's weights are packed in many slices. */
static size_t pack_slice_bytes(void)
{
    const char *e = getenv("EMBER_TEST_PACK_SLICE_BYTES");
    long v = e ? atol(e) : 0;
    return v > 0 ? (size_t)v : PACK_SLICE_BYTES;
}

static void pack_and_evict(ember_model *m, ember_pool *pool, ember_weight **wp)
{
    ember_weight *w = *wp;   /* a one-weight job array for pack_run */
    const int tr = w->pack_kern->layout->tile_rows, tiles = tiles_of(w);
    size_t slice_rows = pack_slice_bytes() / w->row_bytes;
    int per = (int)(slice_rows / (size_t)tr);
    if (per < 1) per = 1;
    uintptr_t done = source_pages_start(w), end = source_pages_all(w);
    /* the weight's source mapped 4 KiB at a time before it is read: read
       through 2 MiB mappings, the block at each end of a weight or a slice
       maps back its neighbour's released pages (up to 2 MiB a boundary:
       72 MiB of a 1B model's file mapped again by the end of packing
       weight by weight, 144 MiB more with its LM head in 4 MiB slices) */
    small_pages_over(m, done, end);
    for (int t0 = 0; t0 < tiles; t0 += per) {
        const int t1 = tiles - t0 < per ? tiles : t0 + per;
        pack_job one = {wp, 1, t0, t1};
        ember_pool_run(pool, pack_run, &one);
        const int64_t rows = (int64_t)t1 * tr < w->out ? (int64_t)t1 * tr : w->out;
        evict_upto(m, w, &done, t1 == tiles ? end : source_pages_end(w, (uint64_t)rows * w->row_bytes));
    }
}

static void evict_sources(ember_model *m)
{
    int n;
    ember_weight *const *all = ember_model_weights(m, &n);
    for (int i = 0; i < n; i++)
        if (all[i]->rep == EMBER_REP_PACKED && all[i]->packed) evict_weight(m, all[i]);
    m->evicted = true;
}

/* From now on a weight's products of one token run on its tiles, and a
   batch's too when the profile says prefill: packed (else a prefill reads
   the sources, which AT_PREFILL_DONE releases again). */
static void use_tiles(ember_model *m, ember_weight *w)
{
    ember_wview tiles = {w->pack_kern, w->packed, w->pack_kern->layout->bytes(w->pack_kern->layout->tile_rows, w->in)};
    w->rep = EMBER_REP_PACKED;
    w->one = tiles;
    if (m->opts.packed_prefill) w->many = tiles;
    m->plan.e[w->plan_index].reason[0] = '\0';
}

static int pack_todo(ember_model *m, ember_pool *pool, ember_weight **todo, int k, double t0, ember_err *err);

/* Packs every weight the plan chose, and records the time. */
static int pack_weights(ember_model *m, ember_pool *pool, ember_err *err)
{
    double t0 = ember_now_ms();
    int k;
    ember_weight **todo = ember_model_weights_to_pack(m, &k);
    if (!todo) return ember_seterr(err, "out of memory");
    int rc = pack_todo(m, pool, todo, k, t0, err);
    free(todo);
    return rc;
}

static int pack_todo(ember_model *m, ember_pool *pool, ember_weight **todo, int k, double t0, ember_err *err)
{
    ember_pack_key *key = m->opts.pack_cache && k ? ember_pack_cache_key(m, todo, k) : NULL;
    /* The file pages mapped so far are the 2 MiB blocks around what the
       load read (the norms sit between the big tensors: ~70 MiB of a 1B
       file mapped 2 MiB at a time).  They would stay mapped beside every
       tile, so they are let go before the tiles are mapped or faulted in:
       the page cache keeps them, and a read maps them again (the mapping
       is read-only).  (Blocks that a packed tensor shares with a
       compressed one are mapped whole again by that one's reads: with 2
       MiB page-cache folios a read maps its whole folio even 4 KiB at a
       time, so MADV_NOHUGEPAGE on them saved nothing.) */
    if (m->opts.evict_source) madvise((void *)(uintptr_t)m->f->map, m->f->size, MADV_DONTNEED);
    /* a cache hit: the tiles are the file's pages, and the sources are
       never read */
    if (ember_pack_cache_load(m, key, todo, k)) {
        ember_pack_key_free(key);
        for (int i = 0; i < k; i++) {
            use_tiles(m, todo[i]);
            /* a packed LM head's embedding rows read with pread, as after
               a release (evict_upto): through the mapping each lookup maps
               the page-cache folio around its row */
            if (m->tok_embd.t == todo[i]->t) m->embd_released = true;
        }
        m->pack_cache = EMBER_PACK_CACHE_HIT;
        m->pack_ms = ember_now_ms() - t0;
        m->packed_done = true;
        return 0;
    }
    if (alloc_arenas(m, err)) {
        ember_pack_key_free(key);
        return -1;
    }
    pack_job j = {todo, k, 0, INT_MAX};
    ember_pool_run(pool, prefault_run, &j);
    m->prefault_ms = ember_now_ms() - t0;
    if (m->opts.evict_source) {
        /* One weight at a time, a slice of it at a time, its source
           released as soon as its tiles are written: the file pages and
           their packed copy are mapped together for one slice only, so
           the process never holds two copies of the weights (peak RSS
           about one copy, not two). */
        for (int i = 0; i < k; i++) pack_and_evict(m, pool, todo + i);
    } else {
        ember_pool_run(pool, pack_run, &j);
    }
    for (int i = 0; i < k; i++) use_tiles(m, todo[i]);
    m->pack_ms = ember_now_ms() - t0;
    m->packed_done = true;
    /* the write is the first load's price for the later ones: on a thread
       of its own, timed there, so neither pack_ms nor the first prefill
       waits for it */
    if (m->opts.pack_cache && k) ember_pack_cache_store(m, key, todo, k);
    ember_pack_key_free(key);
    return 0;
}


/* ---- the phases ------------------------------------------------------ */

/* What each moment of a session does: the profile phase that packs there
   (-1: none) and the snapshot it takes (-1: none). */
static const struct {
    int packs;
    int snap;
} moments[EMBER_AT_COUNT] = {
    [EMBER_AT_OPEN] = {EMBER_PACK_AT_LOAD, EMBER_PHASE_OPENED},
    [EMBER_AT_AHEAD] = {EMBER_PACK_BEFORE_PREFILL, -1},
    [EMBER_AT_PREFILL] = {EMBER_PACK_BEFORE_PREFILL, -1},
    [EMBER_AT_PREFILL_DONE] = {-1, EMBER_PHASE_PREFILL_DONE},
    [EMBER_AT_DECODE] = {EMBER_PACK_AFTER_PREFILL, -1},
    [EMBER_AT_DECODE_DONE] = {-1, EMBER_PHASE_DECODE_DONE},
};

/* A snapshot, with the model's own mapped pages where the opts ask. */
static void mem_read(const ember_model *m, ember_memstat *out)
{
    if (m->opts.model_pages) ember_memstat_read_model(out, m->f->map, m->f->size);
    else ember_memstat_read(out);
}

static void snap(ember_session *s, ember_phase p)
{
    mem_read(s->m, &s->st.phase_mem[p]);
    s->st.phase_seen[p] = true;
}

bool ember_lifecycle_packs(const ember_session *s, ember_moment at)
{
    const ember_model *m = s->m;
    if (m->opts.strategy != EMBER_STRATEGY_PACKED || m->packed_done || (int)m->opts.pack_when != moments[at].packs)
        return false;
    /* at load the packed and evicted phases are recorded even when no
       tensor is eligible; later phases skip a plan with nothing to pack */
    return at == EMBER_AT_OPEN || m->plan.packed;
}

/* Packs (and evicts the sources the profile releases); the model keeps the
   snapshots, which any session on it reports. */
static int pack(ember_session *s, ember_err *err)
{
    ember_model *m = s->m;
    if (pack_weights(m, s->pool, err)) return -1;
    mem_read(m, &m->mem_packed);
    if (m->opts.evict_source) {
        evict_sources(m);
        mem_read(m, &m->mem_evicted);
    }
    return 0;
}

int ember_lifecycle(ember_session *s, ember_moment at, ember_err *err)
{
    ember_model *m = s->m;
    const ember_plan_opts *o = &m->opts;
    if (ember_lifecycle_packs(s, at) && pack(s, err)) return -1;
    if (m->packed_done && !s->st.phase_seen[EMBER_PHASE_PACKED]) {
        s->st.phase_mem[EMBER_PHASE_PACKED] = m->mem_packed;
        s->st.phase_seen[EMBER_PHASE_PACKED] = true;
        if (m->evicted) {
            s->st.phase_mem[EMBER_PHASE_EVICTED] = m->mem_evicted;
            s->st.phase_seen[EMBER_PHASE_EVICTED] = true;
        }
    }
    if (moments[at].snap >= 0) snap(s, (ember_phase)moments[at].snap);
    /* a generic prefill read the packed weights' sources, faulting them
       back in: release them again */
    if (at == EMBER_AT_PREFILL_DONE && m->packed_done && o->evict_source && o->reevict_after_prefill &&
        !o->packed_prefill) {
        evict_sources(m);
        snap(s, EMBER_PHASE_REEVICTED);
    }
    return 0;
}

bool ember_session_pack_pending(const ember_session *s) { return ember_lifecycle_packs(s, EMBER_AT_PREFILL); }

int ember_session_pack(ember_session *s, ember_err *err)
{
    if (!ember_session_pack_pending(s)) return 0;
    double t0 = ember_now_ms();
    int rc = ember_lifecycle(s, EMBER_AT_PREFILL, err);
    s->prepack_ms += ember_now_ms() - t0;   /* the user waits for it before the first token too */
    return rc;
}

int ember_session_pack_ahead(ember_session *s, ember_err *err) { return ember_lifecycle(s, EMBER_AT_AHEAD, err); }

void ember_lifecycle_stats(const ember_session *s, ember_stats *st)
{
    const ember_model *m = s->m;
    st->pack_ms = m->pack_ms;
    st->prefault_ms = m->prefault_ms;
    st->packable = m->plan.packable;
    st->packed = 0;
    st->packed_proj_mask = 0;
    int n;
    ember_weight *const *all = ember_model_weights(m, &n);
    for (int i = 0; i < n; i++)
        /* an expert tensor's slabs count once, as the tensor */
        if (all[i]->rep == EMBER_REP_PACKED && all[i]->data == all[i]->t->data) {
            st->packed++;
            st->packed_proj_mask |= (unsigned)all[i]->proj;
        }
    st->src_evicted = m->evicted;
    ember_pack_cache_report(m, st);
}
