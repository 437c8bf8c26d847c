/* How the model file sits in the page cache, re-reading it into 2 MiB
   folios, memory on huge pages, and faulting memory in ahead of use.  Streaming weights through
   4 KiB mappings costs a TLB miss (and a page walk, far dearer under nested
   paging) per 4 KiB; 2 MiB folios are mapped by one PMD each. */
#ifndef EMBER_PAGECACHE_H
#define EMBER_PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/err.h"

/* The huge page (one PMD) of x86-64 and arm64 with 4 KiB pages. */
#define EMBER_HUGE_PAGE ((size_t)2 << 20)

/* n bytes (not zeroed; free() them) at a 2 MiB boundary when n is at
   least 2 MiB, else at 4 KiB, and advised for huge pages only when the
   buddy allocator has 2 MiB blocks free for all of it and a quarter more:
   where the kernel must compact memory first, a fault can stall for
   seconds.  NULL on failure. */
void *ember_alloc_huge(size_t n);

/* Opens a model file for reading: O_NONBLOCK, so that a FIFO, a socket or
   a device given as a model is refused at once (a plain open would wait on
   a FIFO for a writer forever), then fstat.  The descriptor, size in
   *size; -1 with "PATH: not a regular file" or the open error. */
int ember_open_regular(const char *path, uint64_t *size, ember_err *err);

/* The file read-only and shared, at a 2 MiB-aligned address, advised for
   huge pages (where the filesystem keeps large folios, cache fills through
   it come in 2 MiB folios).  MAP_FAILED on failure, errno set. */
void *ember_map_file(int fd, size_t size);

/* Faults [p, p + n) in now (MADV_POPULATE_WRITE, or _READ when !write).
   Kernels before 5.14 lack those: every page is touched instead, a write
   storing 0, so with write only for memory that is zero or about to be
   overwritten. */
void ember_populate(void *p, size_t n, bool write);

typedef struct {
    uint64_t file_bytes;
    int64_t pmd_before_kb;   /* of the file, mapped 2 MiB at a time, before */
    int64_t pmd_after_kb;    /* the same after the re-read */
    double read_ms;          /* the drop and the re-read */
} ember_recache_stats;

/* Drops the file's clean page-cache pages that no process maps
   (posix_fadvise DONTNEED) and reads it back through huge-page-advised
   mappings of 8 MiB windows (so the re-read adds at most that to the
   caller's resident set): where the filesystem keeps large folios, the
   cache then holds the file in 2 MiB folios.  A file written with write()
   lands in the cache in folios of the writes' sizes, and stays so until
   evicted.  Nothing of the file changes; pages another process maps stay
   as they are.  0, or -1 with errno. */
int ember_refold(int fd, uint64_t size);

/* ember_refold on the regular file at path (the pack cache writer and
   ember pull, on what they have just written and synced). */
int ember_refold_path(const char *path);

/* ember_refold on the file at path, with how much of it one mapping of
   the whole file maps 2 MiB at a time before and after. */
int ember_recache(const char *path, ember_recache_stats *st, ember_err *err);

#endif
