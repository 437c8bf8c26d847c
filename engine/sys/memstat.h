/* Process memory from /proc/self: RSS, PSS split, peak, faults. */
#ifndef EMBER_MEMSTAT_H
#define EMBER_MEMSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ember_memstat {
    bool valid;                    /* smaps_rollup could be read */
    int64_t rss_kb, pss_kb, pss_anon_kb, pss_file_kb;
    int64_t hwm_kb;                /* VmHWM */
    int64_t minflt, majflt;
    int64_t file_pmd_kb;           /* FilePmdMapped: file pages mapped 2 MiB at a
                                      time (0 where the kernel does not say) */
    int64_t model_rss_kb;          /* this process's pages of the model file's
                                      mapping (its VMAs' Rss in /proc/self/smaps);
                                      -1 where not measured.  Pss_File also holds
                                      shares of the binary and its libraries, which
                                      jump when another process mapping them exits */
} ember_memstat;

/* Reads the numbers now; returns false (valid=false) where /proc lacks them. */
bool ember_memstat_read(ember_memstat *m);
/* The same, plus model_rss_kb for the mapping [base, base + len): a walk of
   /proc/self/smaps, so for the lifecycle's snapshots, not the live bar. */
bool ember_memstat_read_model(ember_memstat *m, const void *base, size_t len);
/* Sums the Rss of the smaps entries (text of /proc/PID/smaps) that lie in
   [lo, hi); false when the text has no entry there.  Exposed for tests. */
bool ember_memstat_parse_range_rss(const char *text, uintptr_t lo, uintptr_t hi, int64_t *kb);
/* Parsers, exposed for tests: strict, units must be kB. */
bool ember_memstat_parse_smaps(const char *text, ember_memstat *m);
bool ember_memstat_parse_status(const char *text, ember_memstat *m);

#endif
