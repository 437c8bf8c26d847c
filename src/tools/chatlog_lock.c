/* Which process has a saved conversation open (chatlog.h): an advisory
   flock on DIR/.ID.lock, held from the moment a process opens or first
   saves a conversation until it puts it away.

   A lock file of its own, not the conversation's file: every save
   renames a new file over ID.json, and a lock on the old inode would be
   no lock on the new one.  flock, not fcntl locks: it belongs to the open
   file (fcntl locks drop when any descriptor of the file closes), and the
   kernel drops it when the process dies, so a crash never leaves a
   conversation locked (the file stays, and the next taker reuses it).

   The lock file is removed on release while still locked; a taker that
   opened the old file before that finds, once it holds the lock, that the
   path now names another file (or none) and tries again, so two takers
   can never each lock a different file of the same name. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chatlog.h"

struct chatlog_lock {
    char id[CHATLOG_ID_MAX];
    char *path;
    int fd, refs;
    struct chatlog_lock *next;
};

/* The locks this process holds.  A second open of a conversation this
   process already has (/load of the current one) shares the lock rather
   than finding it busy: a lock on a second descriptor of the same file
   would conflict with our own. */
static chatlog_lock *held;

/* The pid written in a busy lock file, 0 when it says none. */
static long holder_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    long p = strtol(buf, NULL, 10);
    return p > 0 ? p : 0;
}

/* Removes ID.json.tmp.* beside the lock: a save in progress holds the
   lock, so with the lock in hand any temporary is a dead writer's. */
static void drop_temporaries(const char *dir, const char *id)
{
    DIR *d = opendir(dir);
    if (!d) return;
    char pre[CHATLOG_ID_MAX + 16];
    int pl = snprintf(pre, sizeof pre, "%s.json.tmp.", id);
    struct dirent *de;
    while ((de = readdir(d)))
        if (!strncmp(de->d_name, pre, (size_t)pl)) unlinkat(dirfd(d), de->d_name, 0);
    closedir(d);
}

struct chatlog_locks {
    size_t n;
    struct { unsigned long long ino; long pid; } *row;
};

chatlog_locks *chatlog_locks_read(void)
{
    FILE *f = fopen("/proc/locks", "re");
    if (!f) return NULL;
    chatlog_locks *t = calloc(1, sizeof *t);
    size_t cap = 0;
    /* "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; a waiter's line
       reads "1: -> FLOCK ..." and is no holder.  Kept by inode alone: the
       device numbers /proc/locks prints are the underlying file system's,
       which under overlayfs are not what stat reports. */
    char line[256];
    while (t && fgets(line, sizeof line, f)) {
        long p;
        unsigned maj, mnr;
        unsigned long long ino;
        if (sscanf(line, "%*d: FLOCK %*s %*s %ld %x:%x:%llu", &p, &maj, &mnr, &ino) != 4 || p <= 0) continue;
        if (t->n == cap) {
            cap = cap ? 2 * cap : 32;
            void *r = realloc(t->row, cap * sizeof *t->row);
            if (!r) break;
            t->row = r;
        }
        t->row[t->n].ino = ino;
        t->row[t->n++].pid = p;
    }
    fclose(f);
    return t;
}

void chatlog_locks_free(chatlog_locks *t)
{
    if (!t) return;
    free(t->row);
    free(t);
}

long chatlog_lock_holder(const chatlog_locks *t, const char *id)
{
    for (chatlog_lock *l = held; l; l = l->next)
        if (!strcmp(l->id, id)) return (long)getpid();
    if (!t || !chatlog_id_valid(id)) return 0;
    char dir[4096], path[4200];
    ember_err e;
    if (chatlog_dir(dir, sizeof dir, false, &e) < 0) return 0;
    snprintf(path, sizeof path, "%s/.%s.lock", dir, id);
    struct stat st;
    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) return 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->row[i].ino == (unsigned long long)st.st_ino) return t->row[i].pid;
    return 0;
}

int chatlog_lock_take(const char *id, chatlog_lock **out, long *holder, ember_err *err)
{
    *out = NULL;
    if (holder) *holder = 0;
    for (chatlog_lock *l = held; l; l = l->next)
        if (!strcmp(l->id, id)) {
            l->refs++;
            *out = l;
            return 0;
        }
    if (!chatlog_id_valid(id)) return ember_seterr(err, "'%s' is not a conversation id", id);
    char dir[4096], path[4200];
    if (chatlog_dir(dir, sizeof dir, false, err) < 0) return -1;
    snprintf(path, sizeof path, "%s/.%s.lock", dir, id);
    for (int attempt = 0; attempt < 20; attempt++) {
        /* O_NOFOLLOW: a planted symlink is refused, not followed to truncate
           whatever it names */
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
        if (fd < 0) return ember_seterr(err, "cannot lock conversation %s (%s): %s", id, path, strerror(errno));
        int r;
        while ((r = flock(fd, LOCK_EX | LOCK_NB)) < 0 && errno == EINTR) {}
        if (r < 0) {
            int e = errno;
            if (e == EWOULDBLOCK) {
                if (holder) *holder = holder_pid(fd);
                close(fd);
                return 1;
            }
            close(fd);
            return ember_seterr(err, "cannot lock conversation %s (%s): %s", id, path, strerror(e));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && !S_ISREG(a.st_mode)) {
            close(fd);               /* a FIFO or device planted there: no lock of ours */
            return ember_seterr(err, "cannot lock conversation %s: %s is not a regular file", id, path);
        }
        if (fstat(fd, &a) < 0 || lstat(path, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
            close(fd);               /* released and removed while we waited: again */
            continue;
        }
        chatlog_lock *l = calloc(1, sizeof *l);
        if (!l || !(l->path = strdup(path))) {
            free(l);
            close(fd);
            return ember_seterr(err, "out of memory");
        }
        /* who has it, for the message another process shows */
        char pid[32];
        int pn = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)pn, 0) != pn) {
            /* only the message loses its pid: the lock holds */
        }
        snprintf(l->id, sizeof l->id, "%s", id);
        l->fd = fd;
        l->refs = 1;
        l->next = held;
        held = l;
        drop_temporaries(dir, id);
        *out = l;
        return 0;
    }
    return ember_seterr(err, "cannot lock conversation %s (%s): it keeps being replaced", id, path);
}

void chatlog_lock_drop(chatlog_lock *l)
{
    if (!l || --l->refs > 0) return;
    for (chatlog_lock **p = &held; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            break;
        }
    unlink(l->path);                 /* still locked: see the top */
    close(l->fd);
    free(l->path);
    free(l);
}

void chatlog_lock_sweep(const char *name)
{
    /* ".ID.lock" left by a process that died, or "ID.json.tmp.*" by one
       killed in the middle of a save: taking the lock removes the
       temporaries, releasing it the lock file.  Held ones stay. */
    char id[CHATLOG_ID_MAX];
    size_t n = strlen(name);
    if (name[0] == '.' && n > 6 && !strcmp(name + n - 5, ".lock") && n - 6 < sizeof id) {
        snprintf(id, sizeof id, "%.*s", (int)(n - 6), name + 1);
    } else {
        const char *t = strstr(name, ".json.tmp.");
        if (!t || (size_t)(t - name) >= sizeof id) return;
        snprintf(id, sizeof id, "%.*s", (int)(t - name), name);
    }
    if (!chatlog_id_valid(id)) return;
    chatlog_lock *l;
    if (chatlog_lock_take(id, &l, NULL, NULL) == 0) chatlog_lock_drop(l);
}
