/* Saved conversations (chatlog.h): the JSON format, the directory, ids. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chatlog.h"

void chatlog_warn_collect(void *ud, const char *msg)
{
    char **notes = ud;
    size_t had = *notes ? strlen(*notes) : 0, n = strlen(msg);
    char *t = realloc(*notes, had + n + 2);
    if (!t) return;
    memcpy(t + had, msg, n);
    memcpy(t + had + n, "\n", 2);
    *notes = t;
}

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

void chatlog_set(char **field, const char *value)
{
    char *v = dup_or_null(value);
    free(*field);
    *field = v;
}

void chatlog_init(chatlog *c)
{
    memset(c, 0, sizeof *c);
    chatlog_new_id(c->id);
    c->created = c->updated = (int64_t)time(NULL);
}

void chatlog_clear_msgs(chatlog *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->msgs[i].role);
        free(c->msgs[i].content);
    }
    c->n = 0;
}

void chatlog_free(chatlog *c)
{
    chatlog_lock_drop(c->lock);
    chatlog_clear_msgs(c);
    free(c->msgs);
    free(c->model);
    free(c->profile);
    free(c->tmpl);
    free(c->system);
    memset(c, 0, sizeof *c);
}

int chatlog_add(chatlog *c, const char *role, const char *content, bool cancelled,
                const chatlog_stats *st)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        chatlog_msg *m = realloc(c->msgs, cap * sizeof *m);
        if (!m) return -1;
        c->msgs = m;
        c->cap = cap;
    }
    chatlog_msg *m = &c->msgs[c->n];
    memset(m, 0, sizeof *m);
    m->role = strdup(role);
    m->content = strdup(content ? content : "");
    if (!m->role || !m->content) {
        free(m->role);
        free(m->content);
        return -1;
    }
    m->cancelled = cancelled;
    if (st) m->stats = *st;
    c->n++;
    return 0;
}

int chatlog_turns(const chatlog *c)
{
    int k = 0;
    for (size_t i = 0; i < c->n; i++) k += !strcmp(c->msgs[i].role, "assistant");
    return k;
}

/* ---- ids ----------------------------------------------------------------- */

void chatlog_new_id(char *id)
{
    /* within one process ids never repeat a millisecond, so they sort in
       the order they were made even when made back to back */
    static int64_t last_ms;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (ms <= last_ms) ms = last_ms + 1;
    last_ms = ms;
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid() * 2654435761u;
    /* the fields' ranges spelled out: the id's length is then fixed */
    snprintf(id, CHATLOG_ID_MAX, "%04u%02u%02u-%02u%02u%02u-%03u-%06x",
             (unsigned)(tm.tm_year + 1900) % 10000u, (unsigned)(tm.tm_mon + 1) % 100u,
             (unsigned)tm.tm_mday % 100u, (unsigned)tm.tm_hour % 100u, (unsigned)tm.tm_min % 100u,
             (unsigned)tm.tm_sec % 100u, (unsigned)(ms % 1000), (unsigned)(r & 0xFFFFFF));
}

bool chatlog_id_valid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= CHATLOG_ID_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              ch == '-' || ch == '_'))
            return false;
    }
    return true;
}

/* ---- times ----------------------------------------------------------------- */

static void iso_time(int64_t t, char *buf, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int parse_iso(const char *s, int64_t *t)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!end || *end) return -1;
    *t = (int64_t)timegm(&tm);
    return 0;
}

void chatlog_fmt_time(int64_t t, char *buf, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M", &tm)) snprintf(buf, cap, "?");
}

/* ---- the directory ----------------------------------------------------------- */

int chatlog_dir(char *buf, size_t cap, bool create, ember_err *err)
{
    if (ember_place_path(EMBER_PLACE_CHATS, false, buf, cap) < 0)
        return ember_seterr(err, "no place for saved conversations (set XDG_STATE_HOME or HOME)");
    /* a base that is set but cannot hold the directory (XDG_STATE_HOME a
       file) is said as such, not as if nothing were set */
    errno = 0;
    if (create && ember_place_path(EMBER_PLACE_CHATS, true, buf, cap) < 0)
        return ember_seterr(err, "cannot create %s: %s", buf, strerror(errno ? errno : ENOTDIR));
    if (create && mkdir(buf, 0700) < 0 && errno != EEXIST)
        return ember_seterr(err, "cannot create %s: %s", buf, strerror(errno));
    return 0;
}

static int path_of(const char *id, char *buf, size_t cap, bool create, ember_err *err)
{
    char dir[4096];
    if (chatlog_dir(dir, sizeof dir, create, err) < 0) return -1;
    int n = snprintf(buf, cap, "%s/%s.json", dir, id);
    if (n < 0 || (size_t)n >= cap) return ember_seterr(err, "the path of conversation %s is too long", id);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------- */

/* jansson takes only valid UTF-8: a stray byte (a pasted binary, a
   mis-encoded file) becomes U+FFFD instead of losing the whole message. */
static json_t *jstr(const char *s)
{
    size_t n = strlen(s);
    json_t *j = json_stringn(s, n);
    if (j) return j;
    char *fixed = malloc(n * 3 + 1);
    if (!fixed) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int l = ember_utf8_decode(s + i, n - i, NULL);
        if (l > 0) {
            memcpy(fixed + k, s + i, (size_t)l);
            k += (size_t)l, i += (size_t)l;
        } else {
            memcpy(fixed + k, "\xEF\xBF\xBD", 3);
            k += 3, i++;
        }
    }
    j = json_stringn(fixed, k);
    free(fixed);
    return j;
}

static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, v ? jstr(v) : json_null());
}

static json_t *to_json(const chatlog *c)
{
    json_t *o = json_object();
    char t[40];
    json_object_set_new(o, "version", json_integer(CHATLOG_VERSION));
    json_object_set_new(o, "id", json_string(c->id));
    iso_time(c->created, t, sizeof t);
    json_object_set_new(o, "created", json_string(t));
    iso_time(c->updated, t, sizeof t);
    json_object_set_new(o, "updated", json_string(t));
    set_str(o, "model", c->model);
    set_str(o, "profile", c->profile);
    set_str(o, "template", c->tmpl);
    set_str(o, "system", c->system);
    if (c->forked_from[0]) json_object_set_new(o, "forked_from", json_string(c->forked_from));
    json_t *ms = json_array();
    for (size_t i = 0; i < c->n; i++) {
        const chatlog_msg *m = &c->msgs[i];
        json_t *jm = json_object();
        json_object_set_new(jm, "role", jstr(m->role));
        json_object_set_new(jm, "content", jstr(m->content));
        if (m->cancelled) json_object_set_new(jm, "cancelled", json_true());
        if (m->stats.set) {
            json_t *s = json_object();
            json_object_set_new(s, "prompt_tokens", json_integer(m->stats.prompt_tokens));
            json_object_set_new(s, "generated_tokens", json_integer(m->stats.generated_tokens));
            json_object_set_new(s, "ttft_ms", json_real(m->stats.ttft_ms));
            json_object_set_new(s, "decode_tps", json_real(m->stats.decode_tps));
            json_object_set_new(jm, "stats", s);
        }
        json_array_append_new(ms, jm);
    }
    json_object_set_new(o, "messages", ms);
    return o;
}

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))

int chatlog_write(const chatlog *c, FILE *f)
{
    json_t *o = to_json(c);
    if (!o) return -1;
    int rc = json_dumpf(o, f, DUMP_FLAGS);
    json_decref(o);
    if (rc == 0 && fputc('\n', f) == EOF) rc = -1;
    return rc < 0 ? -1 : 0;
}

int chatlog_save_to(const chatlog *c, const char *path, ember_err *err)
{
    json_t *o = to_json(c);
    size_t need = o ? json_dumpb(o, NULL, 0, DUMP_FLAGS) : 0;
    json_decref(o);
    if (need + 1 > CHATLOG_MAX_BYTES)
        return ember_seterr(err, "cannot write %s: the conversation is too large (%.1f MiB; at most %u MiB: "
                                 "/new starts another)", path, (double)need / (1 << 20), CHATLOG_MAX_BYTES >> 20);
    /* a conversation is the user's private data: 0600 */
    ember_file *ef = ember_file_create(path, EMBER_MODE_PRIVATE, err);
    if (!ef) return -1;
    errno = 0;
    if (chatlog_write(c, ember_file_stream(ef)) < 0) {
        /* the text is incomplete: it must not replace the file */
        int e = errno;
        ember_file_abort(ef);
        return ember_seterr(err, "cannot write %s: %s", path, e ? strerror(e) : "out of memory");
    }
    return ember_file_commit(ef, err);
}

int chatlog_save(chatlog *c, ember_err *err)
{
    char path[4200];
    if (path_of(c->id, path, sizeof path, true, err) < 0) return -1;
    if (!c->lock) {
        /* a new conversation (nobody else can know its id yet), or one
           opened when its lock could not be taken */
        int r = chatlog_lock_take(c->id, &c->lock, NULL, err);
        if (r < 0) return -1;
        if (r == 1) {
            /* someone else has it now: their turns stay theirs, ours go to a copy */
            snprintf(c->forked_from, sizeof c->forked_from, "%s", c->id);
            chatlog_new_id(c->id);
            c->created = (int64_t)time(NULL);
            if (path_of(c->id, path, sizeof path, true, err) < 0 || chatlog_lock_take(c->id, &c->lock, NULL, err) != 0)
                return -1;
        }
    }
    c->updated = (int64_t)time(NULL);
    return chatlog_save_to(c, path, err);
}

static const char *get_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int bad(chatlog *c, ember_err *err, const char *what)
{
    chatlog_free(c);
    return ember_seterr(err, "%s", what);
}

static int from_json(json_t *o, chatlog *c, ember_err *err)
{
    memset(c, 0, sizeof *c);
    if (!json_is_object(o)) return bad(c, err, "not a conversation (no JSON object)");
    json_t *v = json_object_get(o, "version");
    if (!json_is_integer(v)) return bad(c, err, "not a conversation (no format version)");
    json_int_t ver = json_integer_value(v);
    if (ver > CHATLOG_VERSION || ver < 1)
        return ember_seterr(err, "format version %lld (this Ember reads version %d%s)",
                            (long long)ver, CHATLOG_VERSION, ver > CHATLOG_VERSION ? ": saved by a newer Ember" : "");
    const char *id = get_str(o, "id");
    if (!id || !chatlog_id_valid(id)) return bad(c, err, "no valid id");
    snprintf(c->id, sizeof c->id, "%s", id);
    const char *t = get_str(o, "created");
    if (!t || parse_iso(t, &c->created) < 0) return bad(c, err, "no valid creation time");
    t = get_str(o, "updated");
    if (!t || parse_iso(t, &c->updated) < 0) c->updated = c->created;
    chatlog_set(&c->model, get_str(o, "model"));
    chatlog_set(&c->profile, get_str(o, "profile"));
    chatlog_set(&c->tmpl, get_str(o, "template"));
    chatlog_set(&c->system, get_str(o, "system"));
    const char *from = get_str(o, "forked_from");
    if (from && chatlog_id_valid(from)) snprintf(c->forked_from, sizeof c->forked_from, "%s", from);
    json_t *ms = json_object_get(o, "messages");
    if (!json_is_array(ms)) return bad(c, err, "no message list");
    size_t i;
    json_t *m;
    json_array_foreach(ms, i, m) {
        const char *role = get_str(m, "role"), *content = get_str(m, "content");
        if (!role || !content || (strcmp(role, "user") && strcmp(role, "assistant")))
            return bad(c, err, "a message without a user/assistant role and a text");
        chatlog_stats st = {0};
        json_t *s = json_object_get(m, "stats");
        if (json_is_object(s)) {
            st.set = true;
            st.prompt_tokens = (int)json_integer_value(json_object_get(s, "prompt_tokens"));
            st.generated_tokens = (int)json_integer_value(json_object_get(s, "generated_tokens"));
            st.ttft_ms = json_number_value(json_object_get(s, "ttft_ms"));
            st.decode_tps = json_number_value(json_object_get(s, "decode_tps"));
        }
        if (chatlog_add(c, role, content, json_is_true(json_object_get(m, "cancelled")), &st) < 0)
            return bad(c, err, "out of memory");
    }
    return 0;
}

int chatlog_parse(const char *text, size_t n, chatlog *c, ember_err *err)
{
    json_error_t je;
    memset(c, 0, sizeof *c);
    json_t *o = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    if (!o) return ember_seterr(err, "not valid JSON (line %d: %s)", je.line, je.text);
    int rc = from_json(o, c, err);
    json_decref(o);
    return rc;
}

/* The file's text, NUL-terminated, in *text: -1 with err when it is no
   regular file, too large or unreadable. */
static int read_text(const char *path, char **text, size_t *len, ember_err *err)
{
    *text = NULL;
    /* O_NONBLOCK: a FIFO named like a conversation must not hang a listing */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat ls;
        if (e == ENOENT && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
            return ember_seterr(err, "%s: a symbolic link to nothing", path);
        return ember_seterr(err, "%s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return ember_seterr(err, "%s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ember_seterr(err, "%s: %s, not a conversation file", path,
                            S_ISDIR(st.st_mode)                             ? "a directory"
                            : S_ISFIFO(st.st_mode)                          ? "a FIFO"
                            : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)    ? "a device"
                                                                            : "a socket");
    }
    if ((unsigned long long)st.st_size > CHATLOG_MAX_BYTES) {
        close(fd);
        return ember_seterr(err, "%s: too large (%.1f MiB; a conversation file is at most %u MiB)", path,
                            (double)st.st_size / (1 << 20), CHATLOG_MAX_BYTES >> 20);
    }
    /* the size may change under us: read to the end, up to the limit */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            close(fd);
            return ember_seterr(err, "%s: out of memory", path);
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ember_seterr(err, "%s: %s", path, strerror(e));
        }
        if (k == 0) break;
        n += (size_t)k;
        if (n > CHATLOG_MAX_BYTES) {
            free(buf);
            close(fd);
            return ember_seterr(err, "%s: too large (a conversation file is at most %u MiB)", path,
                                CHATLOG_MAX_BYTES >> 20);
        }
        if (n == cap) {
            cap *= 2;
            char *g = realloc(buf, cap + 1);
            if (!g) free(buf);
            buf = g;
        }
    }
    close(fd);
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}

int chatlog_load(const char *path, chatlog *c, ember_err *err)
{
    memset(c, 0, sizeof *c);
    char *text;
    size_t n = 0;
    if (read_text(path, &text, &n, err) < 0) return -1;
    ember_err e = {{0}};
    int rc = chatlog_parse(text, n, c, &e);
    free(text);
    if (rc < 0) return ember_seterr(err, "%s: %s", path, e.msg);
    return 0;
}
