/* ember_refold (engine/sys/pagecache.c): a file written in 4 KiB writes is
   read back whole and unchanged, into 2 MiB page-cache folios where this
   kernel and filesystem keep them, and the re-read adds no more than its
   window to the caller's resident set (a whole-file mapping would add the
   file). */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memstat.h"
#include "pagecache.h"
#include "tap.h"

#define FILE_MIB 48

static uint8_t byte_at(size_t i) { return (uint8_t)(i * 2654435761u >> 13); }

/* How much of the file one mapping of it maps 2 MiB at a time. */
static int64_t pmd_kb(int fd, size_t size)
{
    ember_memstat a, b;
    ember_memstat_read(&a);
    void *map = ember_map_file(fd, size);
    if (map == MAP_FAILED) return -1;
    ember_populate(map, size, false);
    ember_memstat_read(&b);
    munmap(map, size);
    return b.file_pmd_kb - a.file_pmd_kb;
}

/* Resets VmHWM to the current RSS (clear_refs 5); 0 when it could. */
static int reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return -1;
    int rc = fputs("5", f) < 0;
    return fclose(f) != 0 || rc ? -1 : 0;
}

int main(void)
{
    char path[] = "/var/tmp/ember-refold.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(path, sizeof path, "/tmp/ember-refold.XXXXXX");
        fd = mkstemp(path);
    }
    if (fd < 0) tap_skip_all("no temporary file");
    const size_t size = (size_t)FILE_MIB << 20;
    uint8_t page[4096];
    for (size_t off = 0; off < size; off += sizeof page) {
        for (size_t i = 0; i < sizeof page; i++) page[i] = byte_at(off + i);
        if (write(fd, page, sizeof page) != (ssize_t)sizeof page) {
            unlink(path);
            tap_skip_all("could not write the temporary file");
        }
    }
    fsync(fd);

    ember_memstat m0, m1;
    int peak = reset_peak() == 0;
    ember_memstat_read(&m0);
    int rc = ember_refold(fd, size);
    ember_memstat_read(&m1);
    tap_ok(rc == 0, "ember_refold of a %d MiB file", FILE_MIB);
    if (peak && m0.hwm_kb > 0)
        tap_ok(m1.hwm_kb - m0.rss_kb <= 12 * 1024, "the re-read raised the peak RSS by %lld KiB (its window is 8 MiB)",
               (long long)(m1.hwm_kb - m0.rss_kb));
    else
        tap_skip("no peak RSS reset here (/proc/self/clear_refs)");

    int same = 1;
    for (size_t off = 0; same && off < size; off += sizeof page) {
        if (pread(fd, page, sizeof page, (off_t)off) != (ssize_t)sizeof page) same = 0;
        for (size_t i = 0; same && i < sizeof page; i++) same = page[i] == byte_at(off + i);
    }
    tap_ok(same, "the file reads back unchanged");

    int64_t after = pmd_kb(fd, size);
    if (after <= 0)
        tap_skip("no 2 MiB page-cache folios for this file here");
    else
        tap_ok(after == (int64_t)FILE_MIB * 1024, "after it, %lld of %d MiB are mapped 2 MiB at a time",
               (long long)after / 1024, FILE_MIB);
    close(fd);
    unlink(path);
    return tap_done();
}
