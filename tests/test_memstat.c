/* The /proc parsers behind every memory number Ember reports: the fields
   it needs, the optional FilePmdMapped, and the strictness about units. */
#include "config.h"

#include <string.h>

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
    return tap_done();
}
