/* The pack cache: a model's packed tiles kept in a file, so that a later
   load maps them instead of packing (doc/DESIGN.md, "The pack cache").
   The lifecycle asks it before packing and hands it the tiles after. */
#ifndef EMBER_PACKCACHE_H
#define EMBER_PACKCACHE_H

#include "model.h"

/* What a cache file must say to serve n weights of m (and the file's
   path): built once when packing starts, for the look-up and for the
   write a miss leads to.  NULL when there is none (no cache directory,
   a plan mixing tile layouts); free with ember_pack_key_free. */
typedef struct ember_pack_key ember_pack_key;
typedef struct ember_pack_writer ember_pack_writer;
ember_pack_key *ember_pack_cache_key(const ember_model *m, ember_weight **ws, int n);
void ember_pack_key_free(ember_pack_key *k);

/* Points the n weights' tiles (ws[i]->packed, packed_bytes) into the cache
   file made for exactly these weights of this model file, mapped read-only;
   true on a hit.  A missing, stale, foreign, truncated or corrupt file is a
   miss and leaves the weights untouched (so is a NULL key). */
bool ember_pack_cache_load(ember_model *m, const ember_pack_key *k, ember_weight **ws, int n);
/* Starts writing the n weights' freshly packed tiles to the cache file
   (temporary beside it, fsync, rename) on a thread of its own, and
   returns: m->pack_cache is "writing" until it is done.  The tiles must
   stay as they are until ember_pack_cache_wait.  When it cannot start (no
   directory, no memory) m->pack_cache_note says why. */
void ember_pack_cache_store(ember_model *m, const ember_pack_key *k, ember_weight **ws, int n);
/* Waits for that write (a no-op without one) and records how it ended:
   "written" (after the rename) or "unwritten" with the note, and its time. */
void ember_pack_cache_wait(ember_model *m);
/* The model's pack cache state, write time and note into st, a write
   still running read as it stands now (without waiting). */
void ember_pack_cache_report(const ember_model *m, ember_stats *st);
/* Unmaps the cache file and clears the weights' pointers into it, so the
   arena frees that follow see NULL; a no-op without a mapping. */
void ember_pack_cache_close(ember_model *m);

#endif
