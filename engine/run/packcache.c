/* The pack cache (packcache.h).  One file per (model file, layout, set of
   packed tensors), named from the model's real path, the layout's name and
   the tensor set, so that a profile packing other tensors has a file of its
   own and a changed model overwrites its old file instead of leaving it
   behind.  The header holds everything the tiles depend on (the model's
   size, mtime, inode and a hash of its GGUF header; the layout's version;
   each tensor's name, shape, offset and size) under a checksum; it is read
   with pread and checked in full before anything is mapped, so a file that
   lies cannot make the kernels read past it.  The tiles are not hashed:
   checking 1 GB would cost what packing costs.  The file is the user's own
   (0600 in a 0700 directory), trusted like the model file itself. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "faultguard.h"
#include "packcache.h"
#include "pagecache.h"
#include "stopguard.h"

#define PC_MAGIC "EMBERPK\n"
#define PC_FORMAT 2   /* 2: layout names of several layouts, 48 bytes */
#define PC_SUFFIX ".pack"
#define PC_HEAD_MAX ((uint64_t)64 << 20)   /* no header is near this: a bound for corrupt ones */

typedef struct {
    char magic[8];
    uint32_t format, layout_version;   /* the first layout's version (all are in set_hash) */
    char layout[48];                   /* the layouts' names in order of first use, '+'-joined */
    uint64_t model_size, model_ino;
    int64_t mtime_s, mtime_ns;
    uint64_t header_hash;      /* of the model's GGUF header (metadata and tensor table) */
    uint64_t set_hash;         /* of the packed tensors' names and shapes */
    int64_t created;
    uint32_t n_tensors, page;  /* page: the sections' alignment */
    uint64_t data_offset, file_bytes;
    char model_path[1024];
} pc_head;

typedef struct {
    char name[96];
    uint64_t offset, bytes;
    int64_t rows, k;
} pc_entry;

/* What a file must say to serve these weights. */
struct ember_pack_key {
    pc_head h;
    char path[PATH_MAX];
};
typedef ember_pack_key pc_key;

/* A fast 64-bit hash (not a cryptographic one: it detects accidents, the
   file's mode keeps others out). */
static uint64_t mix(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (; n >= 8; b += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 31;
    }
    for (; n; n--) h = (h ^ *b++) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static size_t head_bytes(uint32_t n) { return sizeof(pc_head) + (size_t)n * sizeof(pc_entry) + sizeof(uint64_t); }

static uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

int ember_pack_cache_dir(char *buf, size_t cap) { return ember_place_path(EMBER_PLACE_PACKED, false, buf, cap); }

/* Hashing the GGUF header (megabytes for a large vocabulary) is the cost:
   one key serves the look-up and, on a miss, the write. */
static int make_key(const ember_model *m, ember_weight **ws, int n, pc_key *k)
{
    struct stat st;
    if (n <= 0 || m->f->fd < 0 || !m->f->path || fstat(m->f->fd, &st) != 0) return -1;
    const ember_layout *L = ws[0]->pack_kern->layout;
    memset(k, 0, sizeof *k);
    pc_head *h = &k->h;
    memcpy(h->magic, PC_MAGIC, 8);
    h->format = PC_FORMAT;
    h->layout_version = (uint32_t)L->version;
    h->model_size = (uint64_t)st.st_size;
    h->model_ino = (uint64_t)st.st_ino;
    h->mtime_s = (int64_t)st.st_mtim.tv_sec;
    h->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    h->header_hash = mix(0, m->f->map, (size_t)m->f->data_offset);
    uint64_t set = 0;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        /* a model may pack with several layouts (a Q4_K_M file's Q4_K and
           Q6_K): each tensor's layout and its version are in the key */
        const ember_layout *Li = ws[i]->pack_kern->layout;
        int32_t ver = Li->version;
        const char *nm = ws[i]->t->name_z;
        int64_t shape[2] = {ws[i]->out, ws[i]->in};
        set = mix(set, nm, strlen(nm) + 1);
        set = mix(set, shape, sizeof shape);
        set = mix(set, Li->name, strlen(Li->name) + 1);
        set = mix(set, &ver, sizeof ver);
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = !strcmp(ws[j]->pack_kern->layout->name, Li->name);
        if (seen) continue;
        size_t ln = strlen(Li->name) + (used ? 1 : 0);
        if (used + ln >= sizeof h->layout) return -1;   /* more layouts than the name holds: not cached */
        snprintf(h->layout + used, sizeof h->layout - used, "%s%s", used ? "+" : "", Li->name);
        used += ln;
    }
    h->set_hash = set;
    h->n_tensors = (uint32_t)n;
    h->page = (uint32_t)sysconf(_SC_PAGESIZE);
    h->data_offset = round_up(head_bytes(h->n_tensors), h->page);
    if (!realpath(m->f->path, h->model_path) && snprintf(h->model_path, sizeof h->model_path, "%s", m->f->path) < 0)
        return -1;
    char dir[PATH_MAX];
    if (ember_pack_cache_dir(dir, sizeof dir)) return -1;
    uint64_t name = mix(mix(set, h->model_path, strlen(h->model_path)), h->layout, sizeof h->layout);
    int w = snprintf(k->path, sizeof k->path, "%s/%016llx-%s%s", dir, (unsigned long long)name, h->layout, PC_SUFFIX);
    return w < 0 || (size_t)w >= sizeof k->path ? -1 : 0;
}

ember_pack_key *ember_pack_cache_key(const ember_model *m, ember_weight **ws, int n)
{
    pc_key *k = malloc(sizeof *k);
    if (k && make_key(m, ws, n, k)) {
        free(k);
        k = NULL;
    }
    return k;
}

void ember_pack_key_free(ember_pack_key *k) { free(k); }

static bool pread_all(int fd, void *buf, size_t n, off_t off)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = pread(fd, p, n, off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return true;
}

/* Reads and checks a file's header block (magic, format, bounds, checksum):
   a malloc'd block of data_offset bytes, or NULL. */
static uint8_t *read_head(int fd, uint64_t file_bytes)
{
    pc_head h;
    if (file_bytes < sizeof h || !pread_all(fd, &h, sizeof h, 0)) return NULL;
    if (memcmp(h.magic, PC_MAGIC, 8) || h.format != PC_FORMAT || !h.page || h.page & (h.page - 1) ||
        h.n_tensors > 65536 || h.data_offset > PC_HEAD_MAX || h.data_offset < head_bytes(h.n_tensors) ||
        h.data_offset % h.page || h.file_bytes != file_bytes)
        return NULL;
    uint8_t *b = malloc(h.data_offset);
    if (!b) return NULL;
    size_t hb = head_bytes(h.n_tensors);
    uint64_t sum;
    if (!pread_all(fd, b, h.data_offset, 0) || (memcpy(&sum, b + hb - sizeof sum, sizeof sum), sum != mix(0, b, hb - sizeof sum))) {
        free(b);
        return NULL;
    }
    return b;
}

/* The file's header block when the file at k->path is one for exactly
   these weights (its descriptor in *fd, to map it), else NULL. */
static uint8_t *matching(const pc_key *k, ember_weight **ws, int n, int *fd)
{
    *fd = open(k->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (*fd < 0) return NULL;
    struct stat st;
    uint8_t *b = fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) ? read_head(*fd, (uint64_t)st.st_size) : NULL;
    const pc_head *h = (const pc_head *)b;
    /* the key: every field but the creation time */
    bool ok = b && h->page == k->h.page && h->n_tensors == k->h.n_tensors && h->layout_version == k->h.layout_version &&
              !memcmp(h->layout, k->h.layout, sizeof h->layout) && h->model_size == k->h.model_size &&
              h->model_ino == k->h.model_ino && h->mtime_s == k->h.mtime_s && h->mtime_ns == k->h.mtime_ns &&
              h->header_hash == k->h.header_hash && h->set_hash == k->h.set_hash;
    const pc_entry *e = ok ? (const pc_entry *)(b + sizeof *h) : NULL;
    uint64_t end = ok ? h->data_offset : 0;
    for (int i = 0; ok && i < n; i++) {
        const ember_weight *w = ws[i];
        uint64_t want = w->pack_kern->layout->bytes((int)w->out, w->in);
        /* the sections in order, page-aligned, inside the file, each the
           size this layout gives this shape */
        ok = !strncmp(e[i].name, w->t->name_z, sizeof e[i].name) && e[i].rows == w->out && e[i].k == w->in &&
             e[i].bytes == want && e[i].offset % h->page == 0 && e[i].offset >= end &&
             e[i].offset <= h->file_bytes && e[i].bytes <= h->file_bytes - e[i].offset;
        if (ok) end = e[i].offset + e[i].bytes;
    }
    if (!ok) {
        free(b);
        close(*fd);
        *fd = -1;
        return NULL;
    }
    return b;
}

bool ember_pack_cache_load(ember_model *m, const ember_pack_key *k, ember_weight **ws, int n)
{
    int fd;
    uint8_t *b = k ? matching(k, ws, n, &fd) : NULL;
    if (!b) return false;
    const pc_head *h = (const pc_head *)b;
    const pc_entry *e = (const pc_entry *)(b + sizeof *h);
    void *map = ember_map_file(fd, (size_t)h->file_bytes);
    close(fd);
    if (map == MAP_FAILED) {
        free(b);
        return false;
    }
    ember_fault_guard_note_map(map, (size_t)h->file_bytes, "pack cache file");
    m->pack_map = map;
    m->pack_map_bytes = (size_t)h->file_bytes;
    for (int i = 0; i < n; i++) {
        ws[i]->packed = (uint8_t *)map + e[i].offset;
        ws[i]->packed_bytes = (size_t)e[i].bytes;
    }
    free(b);
    return true;
}

int ember_pack_cache_probe(const ember_model *m, char *path, size_t cap)
{
    int k;
    ember_weight **todo = ember_model_weights_to_pack(m, &k);
    if (!todo) return -1;
    pc_key *key = m->opts.pack_cache && m->opts.strategy == EMBER_STRATEGY_PACKED && k ? ember_pack_cache_key(m, todo, k)
                                                                                       : NULL;
    if (!key) {
        free(todo);
        return -1;
    }
    snprintf(path, cap, "%s", key->path);
    int fd;
    uint8_t *b = matching(key, todo, k, &fd);
    bool hit = b != NULL;
    if (hit) close(fd);
    free(b);
    free(key);
    free(todo);
    return hit;
}

static int write_zeros(ember_file *f, uint64_t n, ember_err *err)
{
    static const uint8_t z[4096];
    for (; n; n -= n < sizeof z ? n : sizeof z)
        if (ember_file_write(f, z, n < sizeof z ? (size_t)n : sizeof z, err)) return -1;
    return 0;
}

/* The write of a miss runs on a thread of its own, so the first prefill
   does not wait for hundreds of MiB and an fsync: it reads the tiles in
   the arenas, which nothing changes after packing, and the model waits
   for it before freeing them (ember_pack_cache_wait). */
struct ember_pack_writer {
    pthread_t thread;
    pthread_mutex_t mu;
    char path[PATH_MAX];
    uint8_t *head;              /* the header block: data_offset bytes */
    size_t head_bytes;
    int n;
    const uint8_t **tiles;      /* each section's tiles, bytes and padding after */
    size_t *bytes;
    uint64_t *pad;
    double t0;
    /* under mu: */
    bool done;
    int rc;
    double ms;
    ember_err err;
};

static void writer_free(ember_pack_writer *w)
{
    pthread_mutex_destroy(&w->mu);
    free(w->head);
    free(w->tiles);
    free(w);
}

/* Test-only: EMBER_TEST_PACK_WRITE_DELAY_MS holds the writer that long
   after the header (stopping early on a signal), so tests/pack_cache.sh can
   see a run's TTFT leave the write out and kill a process mid-write. */
static void test_delay(void)
{
    const char *d = getenv("EMBER_TEST_PACK_WRITE_DELAY_MS");
    long ms = d ? strtol(d, NULL, 10) : 0;
    for (long t = 0; t < ms && t < 60000 && !ember_stop_guard_stopped(); t += 10) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static int write_file(ember_pack_writer *w, ember_err *err)
{
    ember_file *f = ember_file_create(w->path, EMBER_MODE_PRIVATE, err);
    if (!f) return -1;
    /* a stop signal removes the temporary; a stopped writer never renames */
    int slot = ember_stop_guard_add(ember_file_temp(f));
    int rc = ember_file_write(f, w->head, w->head_bytes, err);
    if (!rc) test_delay();
    for (int i = 0; !rc && i < w->n; i++) {
        if (ember_stop_guard_stopped()) break;
        rc = ember_file_write(f, w->tiles[i], w->bytes[i], err) || write_zeros(f, w->pad[i], err);
    }
    if (!rc && ember_stop_guard_stopped()) rc = ember_seterr(err, "the program was stopped while writing it");
    if (rc) ember_file_abort(f);
    else rc = ember_file_commit(f, err);
    ember_stop_guard_remove(slot);
    return rc;
}

/* After the rename: the file just written sits in the page cache in
   folios the size of its writes, and a quarter of a 1 GiB file was then
   mapped 4 KiB at a time: the prefill GEMM streaming those tiles ran ~20%
   slower on one core of the Zen 5 VM (TLB misses) than over the same tiles
   re-read into 2 MiB folios.  The fsync has made every page clean, so
   ember_refold can drop them and read them back, before any process maps
   the file. */
static void *writer_run(void *arg)
{
    ember_pack_writer *w = arg;
    ember_err err = {{0}};
    int rc = write_file(w, &err);
    double ms = ember_now_ms() - w->t0;
    if (!rc && !ember_stop_guard_stopped()) (void)ember_refold_path(w->path);
    pthread_mutex_lock(&w->mu);
    w->rc = rc;
    w->err = err;
    w->ms = ms;
    w->done = true;
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Whether a cache file of `bytes` may be written in dir: only into half of
   what is free beyond 256 MiB, so that a big model's tiles (an MoE's are as
   large as the model) never fill the disk that the chats are saved on.
   EMBER_TEST_PACK_FREE_BYTES stands in for the free space in tests. */
static bool space_for(const char *dir, uint64_t bytes, ember_err *err)
{
    uint64_t avail;
    const char *t = getenv("EMBER_TEST_PACK_FREE_BYTES");
    struct statvfs v;
    if (t) avail = strtoull(t, NULL, 10);
    else if (statvfs(dir, &v) == 0) avail = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
    else return true;   /* unknown: the write itself will say */
    const uint64_t keep = (uint64_t)256 << 20;
    if (avail > keep && bytes <= (avail - keep) / 2) return true;
    const bool big = bytes >= (uint64_t)1 << 30, abig = avail >= (uint64_t)1 << 30;
    ember_seterr(err, "it would take %.1f %s of the %.1f %s free in %s; ember cache clear removes older files",
                 (double)bytes / (big ? 1 << 30 : 1 << 20), big ? "GiB" : "MiB",
                 (double)avail / (abig ? 1 << 30 : 1 << 20), abig ? "GiB" : "MiB", dir);
    return false;
}

/* The writer for these weights' file, its header block built; NULL with err. */
static ember_pack_writer *writer_new(const pc_key *k, ember_weight **ws, int n, ember_err *err)
{
    if (!k) {
        ember_seterr(err, "no cache directory (set XDG_CACHE_HOME or HOME)");
        return NULL;
    }
    char dir[PATH_MAX], base[PATH_MAX];
    /* "<cache>/ember" and "packed" under it, both 0700 */
    ember_pack_cache_dir(dir, sizeof dir);
    errno = 0;
    if (ember_xdg_path(EMBER_XDG_CACHE, NULL, true, base, sizeof base) || (mkdir(dir, 0700) != 0 && errno != EEXIST)) {
        ember_seterr(err, "cannot create the directory %s: %s", dir, strerror(errno ? errno : ENOTDIR));
        return NULL;
    }
    ember_pack_writer *w = calloc(1, sizeof *w);
    uint8_t *b = calloc(1, (size_t)k->h.data_offset);
    void *arr = malloc((size_t)n * (sizeof *w->tiles + sizeof *w->bytes + sizeof *w->pad));
    if (!w || !b || !arr) {
        free(w);
        free(b);
        free(arr);
        ember_seterr(err, "out of memory");
        return NULL;
    }
    size_t hb = head_bytes(k->h.n_tensors);
    pc_head *h = (pc_head *)b;
    *h = k->h;
    h->created = (int64_t)time(NULL);
    pc_entry *e = (pc_entry *)(b + sizeof *h);
    uint64_t off = h->data_offset;
    for (int i = 0; i < n; i++) {
        snprintf(e[i].name, sizeof e[i].name, "%s", ws[i]->t->name_z);
        e[i].rows = ws[i]->out;
        e[i].k = ws[i]->in;
        e[i].offset = off;
        e[i].bytes = ws[i]->packed_bytes;
        off = round_up(off + e[i].bytes, h->page);
    }
    /* the last section ends the file: no padding after it */
    h->file_bytes = n ? e[n - 1].offset + e[n - 1].bytes : off;
    if (!space_for(dir, h->file_bytes, err)) {
        free(w);
        free(b);
        free(arr);
        return NULL;
    }
    uint64_t sum = mix(0, b, hb - sizeof sum);
    memcpy(b + hb - sizeof sum, &sum, sizeof sum);
    w->tiles = arr;
    w->bytes = (size_t *)(w->tiles + n);
    w->pad = (uint64_t *)(w->bytes + n);
    for (int i = 0; i < n; i++) {
        w->tiles[i] = ws[i]->packed;
        w->bytes[i] = ws[i]->packed_bytes;
        w->pad[i] = i + 1 < n ? e[i + 1].offset - e[i].offset - e[i].bytes : 0;
    }
    snprintf(w->path, sizeof w->path, "%s", k->path);
    w->head = b;
    w->head_bytes = (size_t)h->data_offset;
    w->n = n;
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

static void unwritten(ember_model *m, const ember_err *err)
{
    m->pack_cache = EMBER_PACK_CACHE_UNWRITTEN;
    snprintf(m->pack_cache_note, sizeof m->pack_cache_note, "pack cache not written (%.180s); running packed from memory",
             err->msg);
}

void ember_pack_cache_store(ember_model *m, const ember_pack_key *k, ember_weight **ws, int n)
{
    ember_err err;
    ember_pack_cache_wait(m);   /* one writer per model */
    ember_pack_writer *w = writer_new(k, ws, n, &err);
    if (!w) {
        unwritten(m, &err);
        return;
    }
    w->t0 = ember_now_ms();
    m->pack_cache = EMBER_PACK_CACHE_WRITING;
    m->pack_writer = w;
    if (pthread_create(&w->thread, NULL, writer_run, w)) {
        m->pack_writer = NULL;
        writer_run(w);          /* no thread to be had: written here, as before */
        m->pack_cache = w->rc ? EMBER_PACK_CACHE_UNWRITTEN : EMBER_PACK_CACHE_WRITTEN;
        m->pack_cache_write_ms = w->ms;
        if (w->rc) unwritten(m, &w->err);
        writer_free(w);
    }
}

void ember_pack_cache_wait(ember_model *m)
{
    ember_pack_writer *w = m->pack_writer;
    if (!w) return;
    pthread_join(w->thread, NULL);
    m->pack_writer = NULL;
    m->pack_cache = w->rc ? EMBER_PACK_CACHE_UNWRITTEN : EMBER_PACK_CACHE_WRITTEN;
    m->pack_cache_write_ms = w->ms;
    if (w->rc) unwritten(m, &w->err);
    writer_free(w);
}

void ember_pack_cache_report(const ember_model *m, ember_stats *st)
{
    st->pack_cache = m->pack_cache;
    st->pack_cache_write_ms = m->pack_cache_write_ms;
    snprintf(st->pack_cache_note, sizeof st->pack_cache_note, "%s", m->pack_cache_note);
    ember_pack_writer *w = m->pack_writer;
    if (!w) return;
    /* "written" only once the file is renamed into place */
    pthread_mutex_lock(&w->mu);
    if (w->done) {
        st->pack_cache = w->rc ? EMBER_PACK_CACHE_UNWRITTEN : EMBER_PACK_CACHE_WRITTEN;
        st->pack_cache_write_ms = w->ms;
        if (w->rc)
            snprintf(st->pack_cache_note, sizeof st->pack_cache_note,
                     "pack cache not written (%.180s); running packed from memory", w->err.msg);
    }
    pthread_mutex_unlock(&w->mu);
}

void ember_pack_cache_close(ember_model *m)
{
    if (!m->pack_map) return;
    const uint8_t *lo = m->pack_map, *hi = lo + m->pack_map_bytes;
    int n;
    ember_weight *const *all = ember_model_weights(m, &n);
    for (int i = 0; i < n; i++)
        if ((const uint8_t *)all[i]->packed >= lo && (const uint8_t *)all[i]->packed < hi) all[i]->packed = NULL;
    ember_fault_guard_forget_map(m->pack_map);
    munmap(m->pack_map, m->pack_map_bytes);
    m->pack_map = NULL;
    m->pack_map_bytes = 0;
}

/* ---- the directory, for `ember cache` ------------------------------------ */

const char *ember_pack_cache_state_name(ember_pack_cache_state s)
{
    static const char *const names[] = {"off", "hit", "written", "unwritten", "writing"};
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "?";
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a > b && !strcmp(s + a - b, suf);
}

int ember_pack_cache_list(ember_pack_cache_file **out, int *n, ember_err *err)
{
    *out = NULL;
    *n = 0;
    char dir[PATH_MAX];
    if (ember_pack_cache_dir(dir, sizeof dir)) return 0;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT || errno == ENOTDIR ? 0 : ember_seterr(err, "%s: %s", dir, strerror(errno));
    struct dirent *de;
    int cap = 0;
    while ((de = readdir(d))) {
        if (!has_suffix(de->d_name, PC_SUFFIX)) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            ember_pack_cache_file *g = realloc(*out, (size_t)cap * sizeof *g);
            if (!g) {
                closedir(d);
                return ember_seterr(err, "out of memory");
            }
            *out = g;
        }
        ember_pack_cache_file *c = &(*out)[*n];
        memset(c, 0, sizeof *c);
        if (snprintf(c->path, sizeof c->path, "%.3800s/%.255s", dir, de->d_name) >= (int)sizeof c->path) continue;
        int fd = open(c->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0) close(fd);
            continue;
        }
        c->bytes = (uint64_t)st.st_size;
        c->created = (int64_t)st.st_mtime;
        uint8_t *b = read_head(fd, c->bytes);
        close(fd);
        if (b) {
            const pc_head *h = (const pc_head *)b;
            c->valid = true;
            snprintf(c->model, sizeof c->model, "%.*s", (int)sizeof h->model_path, h->model_path);
            snprintf(c->layout, sizeof c->layout, "%.*s", (int)sizeof h->layout, h->layout);
            c->layout_version = (int)h->layout_version;
            c->n_tensors = (int)h->n_tensors;
            c->created = h->created;
            free(b);
        }
        (*n)++;
    }
    closedir(d);
    return 0;
}

int ember_pack_cache_clear(uint64_t *bytes, int *files, ember_err *err)
{
    *bytes = 0;
    *files = 0;
    char dir[PATH_MAX], path[PATH_MAX + 512];
    if (ember_pack_cache_dir(dir, sizeof dir)) return 0;
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT || errno == ENOTDIR ? 0 : ember_seterr(err, "%s: %s", dir, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d))) {
        /* the files and the temporaries a killed writer left (NAME.pack.tmp.PID.X) */
        if (!has_suffix(de->d_name, PC_SUFFIX) && !strstr(de->d_name, PC_SUFFIX ".tmp.")) continue;
        struct stat st;
        if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path) continue;
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (unlink(path) != 0) {
            rc = ember_seterr(err, "cannot remove %s: %s", path, strerror(errno));
            break;
        }
        *bytes += (uint64_t)st.st_size;
        (*files)++;
    }
    closedir(d);
    return rc;
}
