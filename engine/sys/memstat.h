/* Process memory from /proc/self: RSS, PSS split, peak, faults. */
#ifndef EMBER_MEMSTAT_H
#define EMBER_MEMSTAT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ember_memstat {
    bool valid;                    /* smaps_rollup could be read */
    int64_t rss_kb, pss_kb, pss_anon_kb, pss_file_kb;
    int64_t hwm_kb;                /* VmHWM */
    int64_t minflt, majflt;
    int64_t file_pmd_kb;           /* FilePmdMapped: file pages mapped 2 MiB at a
                                      time (0 where the kernel does not say) */
} ember_memstat;

/* Reads the numbers now; returns false (valid=false) where /proc lacks them. */
bool ember_memstat_read(ember_memstat *m);
/* Parsers, exposed for tests: strict, units must be kB. */
bool ember_memstat_parse_smaps(const char *text, ember_memstat *m);
bool ember_memstat_parse_status(const char *text, ember_memstat *m);

#endif
