/* Page-cache placement of the model file, and huge-page allocations (pagecache.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "memstat.h"
#include "pagecache.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22   /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void ember_populate(void *p, size_t n, bool write)
{
    if (!p || !n) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(page - 1), end = (uintptr_t)p + n;
    if (madvise((void *)a, end - a, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) == 0) return;
    for (uintptr_t o = (uintptr_t)p; o < end; o = (o & ~(page - 1)) + page) {
        if (write) *(volatile uint8_t *)o = 0;
        else (void)*(volatile const uint8_t *)o;
    }
}

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

void *ember_alloc_huge(size_t n)
{
    const size_t page = 4096;
    const bool big = n >= EMBER_HUGE_PAGE;
    void *p = NULL;
    if (posix_memalign(&p, big ? EMBER_HUGE_PAGE : page, n ? n : 1) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    const long free2m = big ? free_huge_blocks() : -1;
    if (free2m >= 0 && (size_t)free2m * EMBER_HUGE_PAGE >= n + n / 4) madvise(p, n, MADV_HUGEPAGE);
#endif
    return p;
}

/* [off, off + size) of the file at a 2 MiB-aligned address (off itself a
   multiple of 2 MiB: a PMD maps a folio only where the address and the
   file offset agree modulo 2 MiB), advised for huge pages. */
static void *map_range(int fd, uint64_t off, size_t size)
{
    void *map = MAP_FAILED;
    if (size >= EMBER_HUGE_PAGE) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        uint8_t *res = mmap(NULL, size + EMBER_HUGE_PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (res != MAP_FAILED) {
            uint8_t *al = (uint8_t *)(((uintptr_t)res + EMBER_HUGE_PAGE - 1) & ~(uintptr_t)(EMBER_HUGE_PAGE - 1));
            map = mmap(al, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, (off_t)off);
            if (map == MAP_FAILED) {
                munmap(res, size + EMBER_HUGE_PAGE);
            } else {   /* the reservation's slack on both sides goes back */
                uint8_t *end = al + ((size + page - 1) & ~(page - 1));
                if (al > res) munmap(res, (size_t)(al - res));
                if (res + size + EMBER_HUGE_PAGE > end) munmap(end, (size_t)(res + size + EMBER_HUGE_PAGE - end));
            }
        }
    }
    if (map == MAP_FAILED) map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, (off_t)off);
#ifdef MADV_HUGEPAGE
    if (map != MAP_FAILED && size >= EMBER_HUGE_PAGE) madvise(map, size, MADV_HUGEPAGE);
#endif
    return map;
}

void *ember_map_file(int fd, size_t size)
{
    return map_range(fd, 0, size);
}

/* The read-back window: the process maps at most this much of the file at
   once, so a re-read adds no more than it to the resident set. */
#define REFOLD_WINDOW ((size_t)8 << 20)

int ember_refold(int fd, uint64_t size)
{
    int e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);   /* returns the error, errno untouched */
    if (e != 0) {
        errno = e;
        return -1;
    }
    for (uint64_t off = 0; off < size; off += REFOLD_WINDOW) {
        size_t n = size - off < REFOLD_WINDOW ? (size_t)(size - off) : REFOLD_WINDOW;
        void *map = map_range(fd, off, n);
        if (map == MAP_FAILED) return -1;
        ember_populate(map, n, false);
        munmap(map, n);
    }
    return 0;
}

int ember_refold_path(const char *path)
{
    uint64_t size;
    ember_err err;
    int fd = ember_open_regular(path, &size, &err);
    if (fd < 0) return -1;
    int rc = ember_refold(fd, size);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Maps the file, faults every page in (from the cache, or the disk) and
   returns how much of it the process then maps 2 MiB at a time. */
static int map_and_count(const char *path, int fd, size_t size, int64_t *pmd_kb, ember_err *err)
{
    ember_memstat m0, m1;
    ember_memstat_read(&m0);
    void *map = ember_map_file(fd, size);
    if (map == MAP_FAILED) return ember_seterr(err, "%s: mmap: %s", path, strerror(errno));
    ember_populate(map, size, false);
    ember_memstat_read(&m1);
    munmap(map, size);
    *pmd_kb = m1.file_pmd_kb - m0.file_pmd_kb;
    return 0;
}

int ember_open_regular(const char *path, uint64_t *size, ember_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return ember_seterr(err, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return ember_seterr(err, "%s: not a regular file", path);
    }
    /* regular files ignore O_NONBLOCK; cleared so reads behave as usual */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    *size = (uint64_t)sb.st_size;
    return fd;
}

int ember_recache(const char *path, ember_recache_stats *st, ember_err *err)
{
    memset(st, 0, sizeof *st);
    int fd = ember_open_regular(path, &st->file_bytes, err);
    if (fd < 0) return -1;
    size_t size = (size_t)st->file_bytes;
    int rc = 0;
    if (size > 0) {
        rc = map_and_count(path, fd, size, &st->pmd_before_kb, err);
        double t0 = ember_now_ms();
        if (!rc && ember_refold(fd, size) != 0) rc = ember_seterr(err, "%s: %s", path, strerror(errno));
        st->read_ms = ember_now_ms() - t0;
        if (!rc) rc = map_and_count(path, fd, size, &st->pmd_after_kb, err);
    }
    close(fd);
    return rc;
}
