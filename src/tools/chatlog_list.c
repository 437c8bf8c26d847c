/* The saved conversations as a set (chatlog.h): listing, finding by id
   prefix or "the last one", removing. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chatlog.h"

/* The first line of text, at most cap-1 bytes, cut between characters. */
static void first_line(const char *text, char *out, size_t cap)
{
    while (*text == ' ' || *text == '\n' || *text == '\t' || *text == '\r') text++;
    size_t n = strcspn(text, "\r\n"), k = 0;
    while (k < n) {
        int l = ember_utf8_decode(text + k, n - k, NULL);
        if (l <= 0) l = 1;
        if (k + (size_t)l >= cap) break;
        k += (size_t)l;
    }
    memcpy(out, text, k);
    out[k] = 0;
    /* a control character in a list would move the terminal's cursor */
    for (size_t i = 0; i < k; i++)
        if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f) out[i] = ' ';
}

static void entry_of(const chatlog *c, chatlog_entry *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", c->id);
    e->created = c->created;
    e->updated = c->updated;
    const char *m = c->model ? c->model : "";
    const char *base = strrchr(m, '/');
    first_line(base ? base + 1 : m, e->model, sizeof e->model);
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->msgs[i].role, "user")) {
            first_line(c->msgs[i].content, e->first, sizeof e->first);
            break;
        }
    e->turns = chatlog_turns(c);
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const chatlog_entry *)a)->id, ((const chatlog_entry *)b)->id);
}

static void warnf(chatlog_warn_fn warn, void *ud, const char *fmt, const char *a, const char *b)
{
    if (!warn) return;
    char msg[8600];
    snprintf(msg, sizeof msg, fmt, a, b);
    warn(ud, msg);
}

int chatlog_list(chatlog_entry **out, chatlog_warn_fn warn, void *ud, ember_err *err)
{
    *out = NULL;
    char dir[4096];
    if (chatlog_dir(dir, sizeof dir, false, err) < 0) return -1;
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT) return 0;
        return ember_seterr(err, "cannot read %s: %s", dir, strerror(errno));
    }
    chatlog_entry *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    chatlog_locks *locks = chatlog_locks_read();   /* once for all the entries */
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        chatlog_lock_sweep(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.') continue;
        char id[CHATLOG_ID_MAX + 8];
        snprintf(id, sizeof id, "%.*s", (int)(l - 5), de->d_name);
        if (!chatlog_id_valid(id)) continue;
        char path[4096 + 260];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        chatlog c;
        ember_err e = {{0}};
        if (chatlog_load(path, &c, &e) < 0) {
            warnf(warn, ud, "skipping %s%s", e.msg, "");
            continue;
        }
        if (strcmp(c.id, id)) {
            /* a copy under another name would make one id mean two files */
            warnf(warn, ud, "skipping %s: it holds conversation %s", path, c.id);
            chatlog_free(&c);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            chatlog_entry *nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                chatlog_free(&c);
                free(v);
                closedir(d);
                chatlog_locks_free(locks);
                return ember_seterr(err, "out of memory");
            }
            v = nv;
        }
        entry_of(&c, &v[n]);
        v[n++].open_pid = chatlog_lock_holder(locks, c.id);
        chatlog_free(&c);
    }
    closedir(d);
    chatlog_locks_free(locks);
    if (n) qsort(v, n, sizeof *v, by_id);
    *out = v;
    return (int)n;
}

int chatlog_find(const char *prefix, char *id, chatlog_warn_fn warn, void *ud, ember_err *err)
{
    if (prefix && *prefix && !chatlog_id_valid(prefix))
        return ember_seterr(err, "'%s' is not a conversation id (see ember chats)", prefix);
    chatlog_entry *v;
    int n = chatlog_list(&v, warn, ud, err);
    if (n < 0) return -1;
    int hit = -1, hits = 0;
    size_t pl = prefix ? strlen(prefix) : 0;
    for (int i = 0; i < n; i++) {
        if (pl) {
            if (!strcmp(v[i].id, prefix)) {       /* an exact id wins over longer ones */
                hit = i, hits = 1;
                break;
            }
            if (!strncmp(v[i].id, prefix, pl)) hit = i, hits++;
        } else if (hit < 0 || v[i].updated > v[hit].updated ||
                   (v[i].updated == v[hit].updated && strcmp(v[i].id, v[hit].id) > 0)) {
            hit = i, hits = 1;
        }
    }
    int rc = 0;
    if (hits == 1) snprintf(id, CHATLOG_ID_MAX, "%s", v[hit].id);
    else if (!pl) rc = ember_seterr(err, "there are no saved conversations yet");
    else if (!hits) rc = ember_seterr(err, "no saved conversation %s (see ember chats)", prefix);
    else rc = ember_seterr(err, "'%s' matches %d conversations: give more of the id", prefix, hits);
    free(v);
    return rc;
}

int chatlog_open(const char *prefix, chatlog *c, chatlog_warn_fn warn, void *ud, ember_err *err)
{
    memset(c, 0, sizeof *c);
    char id[CHATLOG_ID_MAX], dir[4096], path[4200];
    if (chatlog_find(prefix, id, warn, ud, err) < 0) return -1;
    if (chatlog_dir(dir, sizeof dir, false, err) < 0) return -1;
    snprintf(path, sizeof path, "%s/%s.json", dir, id);
    if (chatlog_load(path, c, err) < 0) return -1;
    long pid = 0;
    ember_err le = {{0}};
    int r = chatlog_lock_take(c->id, &c->lock, &pid, &le);
    if (r == 1) {
        /* two writers of one file would each drop the other's turns: this
           one goes on in a copy, and the file stays the other process's */
        snprintf(c->forked_from, sizeof c->forked_from, "%s", c->id);
        chatlog_new_id(c->id);
        c->created = c->updated = (int64_t)time(NULL);
        char by[40] = "";
        if (pid) snprintf(by, sizeof by, " (pid %ld)", pid);
        char msg[400];
        snprintf(msg, sizeof msg,
                 "conversation %s is open in another Ember%s: continuing here in a copy of it, "
                 "a new conversation %s",
                 c->forked_from, by, c->id);
        if (warn) warn(ud, msg);
    }
    /* r < 0 (a read-only directory): read without the lock; a save tries again */
    return 0;
}

int chatlog_remove(const char *prefix, char *removed, ember_err *err)
{
    if (!prefix || !*prefix) return ember_seterr(err, "give the id of the conversation to remove");
    char id[CHATLOG_ID_MAX], dir[4096], path[4200];
    if (chatlog_dir(dir, sizeof dir, false, err) < 0) return -1;
    /* a file named exactly goes even when it no longer reads (corrupt, or
       from a newer Ember): lists skip it, so this is the way to be rid of it */
    snprintf(path, sizeof path, "%s/%s.json", dir, prefix);
    struct stat st;        /* lstat: a symbolic link to nothing is removable too */
    if (chatlog_id_valid(prefix) && lstat(path, &st) == 0) {
        snprintf(id, sizeof id, "%s", prefix);
    } else {
        if (chatlog_find(prefix, id, NULL, NULL, err) < 0) return -1;
        snprintf(path, sizeof path, "%s/%s.json", dir, id);
    }
    /* not from under a process that has it open: its next save would
       bring it back, or it would go on believing it saved */
    chatlog_lock *lk = NULL;
    long pid = 0;
    if (chatlog_lock_take(id, &lk, &pid, NULL) == 1) {
        if (pid) return ember_seterr(err, "conversation %s is open in another Ember (pid %ld): quit it there first", id, pid);
        return ember_seterr(err, "conversation %s is open in another Ember: quit it there first", id);
    }
    /* (a lock that cannot be taken at all, a read-only directory, stops nothing: unlink says why) */
    if (unlink(path) < 0) {
        int e = errno;
        chatlog_lock_drop(lk);
        return ember_seterr(err, "cannot remove %s: %s", path, strerror(e));
    }
    chatlog_lock_drop(lk);
    if (removed) snprintf(removed, CHATLOG_ID_MAX, "%s", id);
    return 0;
}

char *chatlog_list_text(const char *current, int last, chatlog_warn_fn warn, void *ud, ember_err *err)
{
    chatlog_entry *v;
    int n = chatlog_list(&v, warn, ud, err);
    if (n < 0) return NULL;
    if (n == 0) {
        free(v);
        char *none = strdup("no saved conversations yet (each one is saved after its first reply)");
        if (!none) ember_seterr(err, "out of memory");
        return none;
    }
    int from = n > last ? n - last : 0;
    size_t cap = 512 + (size_t)(n - from) * 400, k = 0;
    char *buf = malloc(cap);
    if (!buf) {
        free(v);
        ember_seterr(err, "out of memory");
        return NULL;
    }
    k += (size_t)snprintf(buf, cap, "saved conversations (newest last; /load ID reopens one):");
    for (int i = from; i < n && k < cap; i++) {
        char when[40];
        chatlog_fmt_time(v[i].updated, when, sizeof when);
        const bool cur = current && !strcmp(v[i].id, current);
        k += (size_t)snprintf(buf + k, cap - k, "\n%s %s  %s  %.40s  %d turn%s  %s%s",
                              cur ? "*" : " ", v[i].id, when, v[i].model[0] ? v[i].model : "?", v[i].turns,
                              v[i].turns == 1 ? "" : "s",
                              /* /load of it would give a copy */
                              !cur && v[i].open_pid && v[i].open_pid != (long)getpid() ? "(open in another Ember) " : "",
                              v[i].first);
    }
    if (from > 0 && k < cap) snprintf(buf + k, cap - k, "\n(%d older: ember chats lists them all)", from);
    free(v);
    return buf;
}
