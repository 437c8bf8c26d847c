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
    m->model_rss_kb = -1;
    return m->valid;
}

/* One smaps entry's header: "start-end perms ...", both in hex. */
static bool vma_header(const char *line, uintptr_t *a, uintptr_t *b)
{
    char *end;
    unsigned long long x = strtoull(line, &end, 16);
    if (end == line || *end != '-') return false;
    const char *q = end + 1;
    unsigned long long y = strtoull(q, &end, 16);
    if (end == q || *end != ' ' || y < x) return false;
    *a = (uintptr_t)x;
    *b = (uintptr_t)y;
    return true;
}

/* Line by line, so the walk works on a text or a stream alike: in_range
   says whether the current entry lies in [lo, hi). */
static void range_line(const char *line, uintptr_t lo, uintptr_t hi, bool *in_range, bool *seen, int64_t *kb)
{
    uintptr_t a, b;
    if (vma_header(line, &a, &b)) {
        *in_range = a >= lo && b <= hi && a < b;
        *seen |= *in_range;
        return;
    }
    int64_t v;
    if (*in_range && field_kb(line, "Rss", &v)) *kb += v;
}

bool ember_memstat_parse_range_rss(const char *text, uintptr_t lo, uintptr_t hi, int64_t *kb)
{
    bool in = false, seen = false;
    *kb = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        char line[256];
        size_t n = strcspn(p, "\n");
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = 0;
        range_line(line, lo, hi, &in, &seen, kb);
    }
    return seen;
}

bool ember_memstat_read_model(ember_memstat *m, const void *base, size_t len)
{
    bool ok = ember_memstat_read(m);
    FILE *f = base && len ? fopen("/proc/self/smaps", "re") : NULL;
    if (!f) return ok;
    /* the mapping's last VMA ends on a page boundary */
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo = (uintptr_t)base, hi = (lo + len + pg - 1) & ~(pg - 1);
    bool in = false, seen = false;
    int64_t kb = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        range_line(line, lo, hi, &in, &seen, &kb);
        /* a path longer than the buffer: its header's start was parsed,
           the rest of the line is skipped */
        size_t n = strlen(line);
        if (n && line[n - 1] != '\n') {
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {}
        }
    }
    fclose(f);
    if (seen) m->model_rss_kb = kb;
    return ok;
}
