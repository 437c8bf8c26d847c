/* /proc/self readers.  Strict: a field whose unit is not kB is rejected. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember.h"
#include "memstat.h"

/* The memory snapshots' names (ember_stats.phase_mem).  Here, with the
   readers, so the worker names phases without linking the session (the
   TSan build of test_worker links only worker, memstat and err). */
static const char *const phase_names[EMBER_PHASE_COUNT] = {
    "opened", "packed", "evicted", "prefill", "re-evicted", "decode"};

const char *ember_phase_name(ember_phase p) { return (unsigned)p < EMBER_PHASE_COUNT ? phase_names[p] : "?"; }

static bool field_kb(const char *text, const char *key, int64_t *out)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, kl) != 0 || p[kl] != ':') continue;
        const char *q = p + kl + 1;
        while (*q == ' ' || *q == '\t') q++;
        char *end;
        long long v = strtoll(q, &end, 10);
        if (end == q || v < 0) return false;
        while (*end == ' ') end++;
        if (strncmp(end, "kB", 2) != 0 || (end[2] != '\n' && end[2] != '\0')) return false;
        *out = v;
        return true;
    }
    return false;
}

bool ember_memstat_parse_smaps(const char *text, ember_memstat *m)
{
    m->file_pmd_kb = 0;
    if (strstr(text, "FilePmdMapped:") && !field_kb(text, "FilePmdMapped", &m->file_pmd_kb)) return false;
    return field_kb(text, "Rss", &m->rss_kb) && field_kb(text, "Pss", &m->pss_kb) &&
           field_kb(text, "Pss_Anon", &m->pss_anon_kb) &&
           field_kb(text, "Pss_File", &m->pss_file_kb);
}

bool ember_memstat_parse_status(const char *text, ember_memstat *m)
{
    return field_kb(text, "VmHWM", &m->hwm_kb);
}

static bool slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    size_t n = 0;
    ssize_t r;
    while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0) n += (size_t)r;
    close(fd);
    buf[n] = '\0';
    return n > 0;
}

bool ember_memstat_read(ember_memstat *m)
{
    char buf[4096];
    memset(m, 0, sizeof *m);
    if (slurp("/proc/self/status", buf, sizeof buf)) ember_memstat_parse_status(buf, m);
    if (slurp("/proc/self/stat", buf, sizeof buf)) {
        /* fields after the ")" of comm: state(3) ... minflt(10) cminflt majflt(12) */
        const char *p = strrchr(buf, ')');
        unsigned long minflt = 0, majflt = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lu %*u %lu", &minflt, &majflt) == 2) {
            m->minflt = (int64_t)minflt;
            m->majflt = (int64_t)majflt;
        }
    }
    m->valid = slurp("/proc/self/smaps_rollup", buf, sizeof buf) &&
               ember_memstat_parse_smaps(buf, m);
    return m->valid;
}
