/* The /proc parsers behind every memory number Ember reports: the fields
   it needs, the optional FilePmdMapped, and the strictness about units. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memstat.h"
#include "tap.h"

static const char rollup[] =
    "55d0c0a00000-7ffd3b5f3000 ---p 00000000 00:00 0                          [rollup]\n"
    "Rss:             1325028 kB\n"
    "Pss:             1323571 kB\n"
    "Pss_Anon:          38610 kB\n"
    "Pss_File:        1284961 kB\n"
    "Pss_Shmem:             0 kB\n"
    "FilePmdMapped:   1286144 kB\n"
    "Swap:                  0 kB\n";

/* The model's mapping split in two VMAs (madvise does that), a library
   after it, and a VMA that only starts inside the range. */
static const char smaps[] =
    "7f0000000000-7f0000010000 r--s 00000000 08:01 42    /models/m.gguf\n"
    "Size:                 64 kB\n"
    "Rss:                  16 kB\n"
    "Pss:                  16 kB\n"
    "7f0000010000-7f0000020000 r--s 00010000 08:01 42    /models/m.gguf\n"
    "Size:                 64 kB\n"
    "Rss:                   8 kB\n"
    "7f0000020000-7f0000030000 r-xp 00000000 08:01 43    /usr/lib/libc.so.6\n"
    "Rss:                  60 kB\n"
    "7efffffff000-7f0000001000 rw-p 00000000 00:00 0\n"
    "Rss:                   4 kB\n";

int main(void)
{
    ember_memstat m;
    memset(&m, 0x55, sizeof m);
    tap_ok(ember_memstat_parse_smaps(rollup, &m) && m.rss_kb == 1325028 && m.pss_kb == 1323571 &&
               m.pss_anon_kb == 38610 && m.pss_file_kb == 1284961 && m.file_pmd_kb == 1286144,
           "smaps_rollup: Rss, Pss, Pss_Anon, Pss_File and FilePmdMapped read");

    char no_pmd[sizeof rollup];
    strcpy(no_pmd, rollup);
    char *p = strstr(no_pmd, "FilePmdMapped");
    memcpy(p, "XilePmdMapped", 13);   /* a kernel without THP has no such line */
    memset(&m, 0x55, sizeof m);
    tap_ok(ember_memstat_parse_smaps(no_pmd, &m) && m.file_pmd_kb == 0 && m.pss_file_kb == 1284961,
           "no FilePmdMapped line: 0, the rest still read");

    char bad[sizeof rollup];
    strcpy(bad, rollup);
    p = strstr(bad, "1286144 kB");
    memcpy(p + 8, "MB", 2);
    tap_ok(!ember_memstat_parse_smaps(bad, &m), "FilePmdMapped in another unit than kB is rejected");

    strcpy(bad, rollup);
    p = strstr(bad, "Pss_Anon");
    memcpy(p, "Pss_Xnon", 8);
    tap_ok(!ember_memstat_parse_smaps(bad, &m), "a missing required field (Pss_Anon) fails the parse");

    tap_ok(ember_memstat_parse_status("Name:\tember\nVmHWM:\t  2144108 kB\nVmRSS:\t 1000 kB\n", &m) &&
               m.hwm_kb == 2144108,
           "status: VmHWM read");
    tap_ok(!ember_memstat_parse_status("VmHWM:\t  12 pages\n", &m), "status: VmHWM not in kB is rejected");

    int64_t kb = -1;
    bool seen = ember_memstat_parse_range_rss(smaps, 0x7f0000000000, 0x7f0000020000, &kb);
    tap_ok(seen && kb == 24,
           "the model's range: its two VMAs' Rss summed, the library and a straddling VMA left out (%lld kB)",
           (long long)kb);
    tap_ok(!ember_memstat_parse_range_rss(smaps, 0x7f1000000000, 0x7f1000020000, &kb),
           "a range with no VMA: not measured");

    /* a real mapping: its touched pages counted, released pages gone */
    char path[] = "/tmp/ember-memstat-XXXXXX";
    int fd = mkstemp(path);
    long pg = sysconf(_SC_PAGESIZE);
    size_t len = 64 * (size_t)pg - 100;   /* not a page multiple */
    bool made = fd >= 0 && ftruncate(fd, (off_t)len) == 0;
    uint8_t *map = made ? mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0) close(fd);
    unlink(path);
    if (map == MAP_FAILED) {
        tap_skip("cannot map a temporary file");
        tap_skip("cannot map a temporary file");
    } else {
        ember_memstat_read_model(&m, map, len);
        int64_t before = m.model_rss_kb;
        volatile uint8_t sink = 0;
        for (int i = 0; i < 8; i++) sink ^= map[(size_t)i * (size_t)pg];
        for (int i = 0; i < 64; i++) sink ^= map[len - 1];   /* the last, partial page */
        (void)sink;
        ember_memstat_read_model(&m, map, len);
        /* the kernel maps cached neighbours of a faulting page too
           (fault-around), so the touched pages are a floor */
        tap_ok(before == 0 && m.model_rss_kb >= 9 * pg / 1024 && m.model_rss_kb <= 64 * pg / 1024,
               "a mapping's pages: none before a touch, >= the 9 touched after (%lld -> %lld kB)",
               (long long)before, (long long)m.model_rss_kb);
        madvise(map, len, MADV_DONTNEED);
        ember_memstat_read_model(&m, map, len);
        tap_ok(m.model_rss_kb == 0, "released: %lld kB", (long long)m.model_rss_kb);
        munmap(map, len);
    }
    ember_memstat_read(&m);
    tap_ok(m.model_rss_kb == -1, "the plain reader does not measure a model's mapping");
    return tap_done();
}
