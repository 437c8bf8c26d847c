/* The weight strategy's lifecycle (engine/run/lifecycle.c) on a tiny Q8_0
   model: each pack phase a profile names packs at its moment of the session
   (load = when the session opens, on its pool), takes the phase snapshots,
   re-evicts after a generic prefill only, and changes no logit against
   compressed; a second session on a packed model reports the packing's
   snapshots too; the pack cache written, then mapped, changes no logit. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtype.h"
#include "ember.h"
#include "kernels.h"
#include "synth_dir.h"
#include "tap.h"

enum { NP = 9, NG = 3, ROWS = NP + NG };

static int32_t toks[ROWS];

static void opts(ember_plan_opts *po, ember_strategy st, ember_pack_when when, bool packed_prefill)
{
    ember_plan_opts_default(po);
    po->strategy = st;
    po->projections = EMBER_PROJ_ALL;
    po->pack_when = when;
    po->evict_source = true;
    po->reevict_after_prefill = true;
    po->packed_prefill = packed_prefill;
    po->threads = 2;
}

/* Last prompt logits then teacher-forced decodes, with the stats after the
   session opened (st[0]), after the prefill (st[1]) and at the end (st[2]). */
static float *run(const char *model, const ember_plan_opts *po, ember_stats st[3], bool *pending_at_open)
{
    ember_err err;
    ember_model *m = ember_model_open(model, po, &err);
    if (!m) {
        tap_diag("open: %s", err.msg);
        return NULL;
    }
    int V = ember_model_get_info(m)->n_vocab;
    for (int i = 0; i < ROWS; i++) toks[i] = (int32_t)((i * 41 + 3) % V);
    ember_session_opts so = {.n_ctx = ROWS + 4, .threads = 2};
    ember_session *s = ember_session_new(m, &so, &err);
    float *y = s ? malloc((size_t)(NG + 1) * (size_t)V * sizeof *y) : NULL;
    int rc = -1;
    if (y) {
        ember_stats_get(s, &st[0]);
        *pending_at_open = ember_session_pack_pending(s);
        rc = ember_prefill(s, toks, NP, y, NULL, &err);
        if (!rc) ember_stats_get(s, &st[1]);
        for (int i = 0; i < NG && !rc; i++) rc = ember_decode(s, toks[NP + i], y + (size_t)(i + 1) * V, &err);
        if (!rc) {
            ember_session_mark_decode_done(s);
            ember_stats_get(s, &st[2]);
        }
    }
    if (rc) {
        tap_diag("run: %s", err.msg);
        free(y);
        y = NULL;
    }
    ember_session_free(s);
    ember_model_free(m);
    return y;
}

static bool seen(const ember_stats *st, ember_phase p) { return st->phase_seen[p]; }

int main(void)
{
    if (!ember_kernel_packed(EMBER_Q8_0, ember_cpu_isa())) tap_skip_all("no packed kernel on this CPU (AVX-512 VNNI)");
    synth_dir sd;
    char model[256];
    synth_dir_open(&sd, "life");
    if (!synth_model(&sd, "tiny", "Q8_0", 0, model, sizeof model)) return tap_done();

    ember_plan_opts po;
    ember_stats st[3];
    bool pend;
    opts(&po, EMBER_STRATEGY_COMPRESSED, EMBER_PACK_AT_LOAD, false);
    float *comp = run(model, &po, st, &pend);
    tap_ok(comp && st[2].packed == 0 && !seen(&st[2], EMBER_PHASE_PACKED), "compressed: nothing packed, no pack phase");
    ember_err err;
    ember_model *probe = ember_model_open(model, &po, &err);
    const size_t nbytes = probe ? (size_t)(NG + 1) * (size_t)ember_model_get_info(probe)->n_vocab * sizeof(float) : 0;
    ember_model_free(probe);

    /* at load: packed when the session opens, before its "opened" snapshot */
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_AT_LOAD, false);
    float *y = run(model, &po, st, &pend);
    tap_ok(y && st[0].packed > 0 && !pend && seen(&st[0], EMBER_PHASE_PACKED) &&
               seen(&st[0], EMBER_PHASE_EVICTED) && seen(&st[0], EMBER_PHASE_OPENED) && st[0].src_evicted,
           "at load: packed (%d of %d) and evicted when the session opens", y ? st[0].packed : 0, y ? st[0].packable : 0);
    tap_ok(y && seen(&st[1], EMBER_PHASE_REEVICTED) && seen(&st[2], EMBER_PHASE_DECODE_DONE),
           "at load, generic prefill: re-evicted after the prefill; decode snapshot at the end");
    tap_ok(y && comp && !memcmp(y, comp, nbytes), "at load: logits == compressed bit for bit");
    free(y);

    /* before prefill: pending at open, packed by the prefill */
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true);
    y = run(model, &po, st, &pend);
    tap_ok(y && pend && st[0].packed == 0 && !seen(&st[0], EMBER_PHASE_PACKED) && st[1].packed > 0 &&
               seen(&st[1], EMBER_PHASE_PACKED) && seen(&st[1], EMBER_PHASE_EVICTED),
           "before prefill: pending when the session opens, packed by the prefill");
    tap_ok(y && !seen(&st[1], EMBER_PHASE_REEVICTED), "prefill: packed reads the tiles: no re-eviction");
    tap_ok(y && comp && !memcmp(y, comp, nbytes), "before prefill, packed prefill: logits == compressed bit for bit");
    free(y);

    /* a weight packed in slices, each slice's source released once its
       tiles are written: one tile a slice (the test-only knob), the LM
       head too (tied: its embedding rows then read with pread) */
    setenv("EMBER_TEST_PACK_SLICE_BYTES", "1", 1);
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, true);
    po.projections |= EMBER_PROJ_OUTPUT;
    po.model_pages = true;
    y = run(model, &po, st, &pend);
    unsetenv("EMBER_TEST_PACK_SLICE_BYTES");
    tap_ok(y && st[1].packed == st[1].packable && st[1].src_evicted && comp && !memcmp(y, comp, nbytes),
           "packed a tile at a time with the LM head, sources released slice by slice: logits == compressed bit "
           "for bit (%d of %d packed)", y ? st[1].packed : 0, y ? st[1].packable : 0);
    /* every slice's first read maps back the whole page-cache folio around
       it (up to 2 MiB, Linux 6.18), the slice before's released pages
       included: the release must take them again, else each folio stays
       mapped up to its last slice's start (3.3 GiB of a 17 GiB file; here
       208 KiB of the tiny file before the fix, 4 KiB after).  64 KiB: the
       fault-around window of kernels that map less than a folio */
    {
        const int64_t kb = y ? st[1].phase_mem[EMBER_PHASE_EVICTED].model_rss_kb : -1;
        tap_diag("model file pages mapped after packing slice by slice: %lld KiB", (long long)kb);
        tap_ok(y && kb >= 0 && kb <= 64, "packed slice by slice: at most 64 KiB of the file still mapped (%lld KiB)",
               (long long)kb);
    }
    free(y);

    /* after prefill: the first decoded token packs */
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_AFTER_PREFILL, false);
    y = run(model, &po, st, &pend);
    tap_ok(y && !pend && st[1].packed == 0 && !seen(&st[1], EMBER_PHASE_PACKED) && st[2].packed > 0 &&
               seen(&st[2], EMBER_PHASE_PACKED),
           "after prefill: nothing packed by the prefill, packed by the first decode");
    tap_ok(y && comp && !memcmp(y, comp, nbytes), "after prefill: logits == compressed bit for bit");
    free(y);

    /* a second session on a model packed before prefill by the first one
       reports the packing's snapshots (they used to be zeros) */
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_BEFORE_PREFILL, false);
    ember_model *m = ember_model_open(model, &po, &err);
    ember_session_opts so = {.n_ctx = ROWS + 4, .threads = 2};
    ember_session *s1 = m ? ember_session_new(m, &so, &err) : NULL;
    int rc = s1 ? ember_session_pack_ahead(s1, &err) : -1;
    ember_session_free(s1);
    ember_session *s2 = rc == 0 ? ember_session_new(m, &so, &err) : NULL;
    ember_stats st2;
    ember_memstat now;
    if (s2) ember_stats_get(s2, &st2);
    bool rss = !ember_memstat_read(&now) || (s2 && st2.phase_mem[EMBER_PHASE_PACKED].rss_kb > 0);
    tap_ok(s2 && st2.packed > 0 && seen(&st2, EMBER_PHASE_PACKED) && rss && !ember_session_pack_pending(s2),
           "a second session on a packed model: nothing pending, the packed snapshot is the model's");
    ember_session_free(s2);
    ember_model_free(m);

    /* the pack cache: the first load packs and writes the file, the next
       maps it (no packing); both compute compressed's logits, and freeing a
       model whose tiles are the file's pages frees no arena (ASan) */
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", sd.dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    opts(&po, EMBER_STRATEGY_PACKED, EMBER_PACK_AT_LOAD, true);
    po.pack_cache = true;
    y = run(model, &po, st, &pend);
    /* written in the background: done by now or still under way */
    tap_ok(y && st[0].packed > 0 &&
               (st[0].pack_cache == EMBER_PACK_CACHE_WRITTEN || st[0].pack_cache == EMBER_PACK_CACHE_WRITING) &&
               !st[0].pack_cache_note[0],
           "pack cache: the first load packs and writes the file (%s%s)",
           y ? ember_pack_cache_state_name(st[0].pack_cache) : "-", y ? st[0].pack_cache_note : "");
    tap_ok(y && comp && !memcmp(y, comp, nbytes), "pack cache written: logits == compressed bit for bit");
    free(y);
    y = run(model, &po, st, &pend);
    tap_ok(y && st[0].packed > 0 && st[0].pack_cache == EMBER_PACK_CACHE_HIT && st[0].prefault_ms == 0,
           "pack cache: the second load maps the file, nothing faulted in for packing (%s, %.2f ms)",
           y ? ember_pack_cache_state_name(st[0].pack_cache) : "-", y ? st[0].pack_ms : 0);
    tap_ok(y && comp && !memcmp(y, comp, nbytes), "pack cache hit: logits == compressed bit for bit");
    free(y);
    /* two models on one cache file at once (processes share it the same way) */
    ember_model *m1 = ember_model_open(model, &po, &err), *m2 = ember_model_open(model, &po, &err);
    ember_session *a = m1 ? ember_session_new(m1, &so, &err) : NULL, *b = m2 ? ember_session_new(m2, &so, &err) : NULL;
    ember_stats sa, sb;
    if (a) ember_stats_get(a, &sa);
    if (b) ember_stats_get(b, &sb);
    tap_ok(a && b && sa.pack_cache == EMBER_PACK_CACHE_HIT && sb.pack_cache == EMBER_PACK_CACHE_HIT,
           "two models open at once both map the cache file");
    ember_session_free(a);
    ember_session_free(b);
    ember_model_free(m1);
    ember_model_free(m2);
    uint64_t freed = 0;
    int files = 0;
    int crc = ember_pack_cache_clear(&freed, &files, &err);
    tap_ok(crc == 0 && files == 1 && freed > 0,
           "ember_pack_cache_clear removes the one file (%d, %llu bytes)", files, (unsigned long long)freed);
    /* the write runs off the critical path: "writing" while it goes on
       (held 300 ms by the test-only delay), "written" once the model
       waited for it, with its time; freeing the model waits too */
    setenv("EMBER_TEST_PACK_WRITE_DELAY_MS", "300", 1);
    ember_model *m3 = ember_model_open(model, &po, &err);
    ember_session *s3 = m3 ? ember_session_new(m3, &so, &err) : NULL;
    ember_stats w0, w1;
    memset(&w0, 0, sizeof w0);
    memset(&w1, 0, sizeof w1);
    if (s3) ember_stats_get(s3, &w0);
    if (m3) ember_model_pack_cache_wait(m3);
    if (s3) ember_stats_get(s3, &w1);
    tap_ok(s3 && w0.pack_cache == EMBER_PACK_CACHE_WRITING && w0.pack_cache_write_ms == 0 &&
               w1.pack_cache == EMBER_PACK_CACHE_WRITTEN && w1.pack_cache_write_ms >= 300,
           "the write runs in the background: %s, then %s after %.0f ms", ember_pack_cache_state_name(w0.pack_cache),
           ember_pack_cache_state_name(w1.pack_cache), w1.pack_cache_write_ms);
    ember_session_free(s3);
    ember_model_free(m3);
    /* a model freed while its file is being written waits for the rename */
    ember_pack_cache_clear(&freed, &files, &err);
    m3 = ember_model_open(model, &po, &err);
    s3 = m3 ? ember_session_new(m3, &so, &err) : NULL;
    ember_session_free(s3);
    ember_model_free(m3);
    unsetenv("EMBER_TEST_PACK_WRITE_DELAY_MS");
    m3 = ember_model_open(model, &po, &err);
    s3 = m3 ? ember_session_new(m3, &so, &err) : NULL;
    if (s3) ember_stats_get(s3, &w0);
    tap_ok(s3 && w0.pack_cache == EMBER_PACK_CACHE_HIT, "freeing a model mid-write finished the file: the next load maps it (%s)",
           s3 ? ember_pack_cache_state_name(w0.pack_cache) : "-");
    ember_session_free(s3);
    ember_model_free(m3);
    ember_pack_cache_clear(&freed, &files, &err);

    free(comp);
    synth_dir_close(&sd);
    return tap_done();
}
