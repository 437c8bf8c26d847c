/* Saved conversations (src/tools/chatlog.c): a round trip, Unicode and
   stray bytes, damaged files and newer versions skipped with a reason,
   the safe writer (no temporaries, the old file kept on failure),
   permissions, id order, prefixes, removal. */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include "chatlog.h"
#include "tap.h"

static char base[64], chats[128];

static void put(const char *name, const char *s)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", chats, name);
    FILE *f = fopen(p, "w");
    fputs(s, f);
    fclose(f);
}

static int count_files(const char *needle)
{
    DIR *d = opendir(chats);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, needle)) n++;
    if (d) closedir(d);
    return n;
}

static int warnings;
static char last_warning[1024];
static void warn(void *ud, const char *msg)
{
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", msg);
}

int main(void)
{
    snprintf(base, sizeof base, "/tmp/ember-chatlog.XXXXXX");
    if (!mkdtemp(base)) tap_skip_all("no temp dir");
    setenv("XDG_STATE_HOME", base, 1);
    snprintf(chats, sizeof chats, "%s/ember/chats", base);
    ember_err e = {{0}};

    /* ids: sortable by creation, valid, distinct */
    char ids[50][CHATLOG_ID_MAX];
    bool ordered = true, valid = true;
    for (int i = 0; i < 50; i++) {
        chatlog_new_id(ids[i]);
        valid &= chatlog_id_valid(ids[i]);
        if (i) ordered &= strcmp(ids[i - 1], ids[i]) < 0;
    }
    tap_ok(valid && ordered, "50 ids made back to back are valid and sort in creation order (%s < %s)",
           ids[0], ids[49]);
    tap_ok(!chatlog_id_valid("../etc/passwd") && !chatlog_id_valid("") && !chatlog_id_valid("a/b"),
           "an id cannot name a path outside the directory");

    /* a round trip, with Unicode, a stray byte, quotes and a code fence */
    chatlog c;
    chatlog_init(&c);
    chatlog_set(&c.model, "/models/tiny.gguf");
    chatlog_set(&c.profile, "auto");
    chatlog_set(&c.tmpl, "chatml");
    chatlog_set(&c.system, "be \"brief\"\n");
    const char *u1 = "héllo — 日本語 🎉\nsecond line";
    const char *a1 = "```c\nint main(void) { return 0; }\n```\n\ttab \x01 ctrl";
    chatlog_stats st = {true, 42, 17, 123.5, 33.25};
    chatlog_add(&c, "user", u1, false, NULL);
    chatlog_add(&c, "assistant", a1, false, &st);
    chatlog_add(&c, "user", "bad \xff byte", false, NULL);
    chatlog_add(&c, "assistant", "cut", true, NULL);
    int rc = chatlog_save(&c, &e);
    tap_ok(rc == 0, "a conversation saves (%s)", e.msg);
    struct stat sd, sf;
    char path[512];
    snprintf(path, sizeof path, "%s/%s.json", chats, c.id);
    memset(&sd, 0, sizeof sd);
    memset(&sf, 0, sizeof sf);
    int rd = stat(chats, &sd), rf = stat(path, &sf);
    tap_ok(rd == 0 && (sd.st_mode & 0777) == 0700, "the directory is 0700 (%o)", (unsigned)sd.st_mode & 0777);
    tap_ok(rf == 0 && (sf.st_mode & 0777) == 0600, "the file is 0600 (%o)", (unsigned)sf.st_mode & 0777);
    tap_ok(count_files(".tmp.") == 0, "no temporary is left");

    chatlog r;
    rc = chatlog_load(path, &r, &e);
    tap_ok(rc == 0, "it loads back (%s)", e.msg);
    tap_ok(rc == 0 && !strcmp(r.id, c.id) && r.created == c.created && !strcmp(r.model, c.model) &&
               !strcmp(r.profile, "auto") && !strcmp(r.tmpl, "chatml") && !strcmp(r.system, c.system),
           "id, times, model, profile, template and system prompt survive");
    tap_ok(rc == 0 && r.n == 4 && !strcmp(r.msgs[0].content, u1) && !strcmp(r.msgs[1].content, a1) &&
               !strcmp(r.msgs[1].role, "assistant"),
           "messages survive byte for byte (Unicode, code fence, control characters)");
    tap_ok(rc == 0 && r.n == 4 && !strcmp(r.msgs[2].content, "bad \xEF\xBF\xBD byte"),
           "a stray byte becomes U+FFFD instead of losing the message ('%s')", rc == 0 ? r.msgs[2].content : "");
    tap_ok(rc == 0 && r.msgs[1].stats.set && r.msgs[1].stats.prompt_tokens == 42 &&
               r.msgs[1].stats.generated_tokens == 17 && r.msgs[1].stats.ttft_ms == 123.5 &&
               r.msgs[1].stats.decode_tps == 33.25 && !r.msgs[0].stats.set,
           "per-turn stats survive");
    tap_ok(rc == 0 && r.msgs[3].cancelled && !r.msgs[1].cancelled, "a stopped reply stays marked");
    tap_ok(chatlog_turns(&r) == 2, "two turns");
    chatlog_free(&r);

    /* the same text through chatlog_write / chatlog_parse */
    char *mem = NULL;
    size_t ml = 0;
    FILE *mf = open_memstream(&mem, &ml);
    chatlog_write(&c, mf);
    fclose(mf);
    rc = chatlog_parse(mem, ml, &r, &e);
    tap_ok(rc == 0 && r.n == 4 && strstr(mem, "\"version\": 1"), "the written text parses and carries the version");
    chatlog_free(&r);

    /* any damage to the text (bytes changed, cut short) is a clean error or
       a conversation, never a crash: run under ASan this also finds leaks */
    char *bad = malloc(ml + 1);
    unsigned seed = 12345;
    int parsed = 0, refused = 0;
    bool consistent = true;
    for (int i = 0; i < 3000; i++) {
        memcpy(bad, mem, ml + 1);
        size_t len = ml;
        for (int k = 0; k < 1 + i % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            static const char pick[] = "\"{}[]:,0\\\xff\x01 an-";
            bad[at] = pick[(seed >> 3) % (sizeof pick - 1)];
        }
        if (i % 5 == 0) len = (seed >> 4) % len;
        chatlog t;
        ember_err pe = {{0}};
        if (chatlog_parse(bad, len, &t, &pe) == 0) {
            parsed++;
            consistent &= chatlog_id_valid(t.id) && (t.n == 0 || t.msgs != NULL);
        } else {
            refused++;
            consistent &= pe.msg[0] != 0 && t.n == 0;
        }
        chatlog_free(&t);
    }
    tap_ok(consistent && parsed + refused == 3000,
           "3000 damaged texts: %d still read, %d refused with a reason, no crash", parsed, refused);
    free(bad);
    free(mem);

    /* a failed save keeps the old file */
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 1024;
    signal(SIGXFSZ, SIG_IGN);
    for (int i = 0; i < 40; i++) chatlog_add(&c, "user", "a long message to pass the size limit", false, NULL);
    setrlimit(RLIMIT_FSIZE, &lim);
    rc = chatlog_save(&c, &e);
    setrlimit(RLIMIT_FSIZE, &old);
    tap_ok(rc < 0 && strstr(e.msg, "cannot write"), "a write that fails is reported (%s)", e.msg);
    rc = chatlog_load(path, &r, &e);
    tap_ok(rc == 0 && r.n == 4 && count_files(".tmp.") == 0, "the old file is still whole, no temporary left");
    chatlog_free(&r);

    /* damaged and newer files are skipped with a reason; lists and finds go on */
    put("20200101-000000-000-aaaaaa.json", "{\"version\": 1, \"id\": \"20200101-000000-000-aaaaaa\", \"mess");
    put("20200101-000000-000-bbbbbb.json",
        "{\"version\": 99, \"id\": \"20200101-000000-000-bbbbbb\", \"created\": \"2020-01-01T00:00:00Z\","
        "\"messages\": []}");
    put("20200101-000000-000-cccccc.json", "[1, 2, 3]");
    put("20200101-000000-000-dddddd.json",
        "{\"version\": 1, \"id\": \"20200101-000000-000-dddddd\", \"created\": \"2020-01-01T00:00:00Z\","
        "\"messages\": [{\"role\": 7, \"content\": null}]}");
    put("notes.txt", "not a chat");
    chatlog_entry *v = NULL;
    warnings = 0;
    int n = chatlog_list(&v, warn, NULL, &e);
    tap_ok(n == 1 && v && !strcmp(v[0].id, c.id) && v[0].turns == 2 && !strcmp(v[0].model, "tiny.gguf"),
           "the list holds the one good conversation (%d)", n);
    tap_ok(n == 1 && !strcmp(v[0].first, "héllo — 日本語 🎉"), "with the first line of its first message ('%s')",
           n == 1 ? v[0].first : "");
    tap_ok(warnings == 4, "each bad file is reported (%d; last: %s)", warnings, last_warning);
    free(v);
    rc = chatlog_load("/nonexistent/x.json", &r, &e);
    tap_ok(rc < 0 && strstr(e.msg, "No such file"), "a missing file says so (%s)", e.msg);
    snprintf(path, sizeof path, "%s/20200101-000000-000-bbbbbb.json", chats);
    rc = chatlog_load(path, &r, &e);
    tap_ok(rc < 0 && strstr(e.msg, "newer"), "a newer version says so (%s)", e.msg);
    snprintf(path, sizeof path, "%s/20200101-000000-000-aaaaaa.json", chats);
    rc = chatlog_load(path, &r, &e);
    tap_ok(rc < 0 && strstr(e.msg, "not valid JSON"), "a truncated file says so (%s)", e.msg);

    /* finding: the last one, exact ids, unique prefixes, ambiguity */
    chatlog c2;
    chatlog_init(&c2);
    chatlog_add(&c2, "user", "later", false, NULL);
    chatlog_save(&c2, &e);
    char id[CHATLOG_ID_MAX];
    rc = chatlog_find(NULL, id, NULL, NULL, &e);
    tap_ok(rc == 0 && !strcmp(id, c2.id), "no id: the conversation updated last (%s)", id);
    sleep(1);                           /* times are in seconds */
    while (c.n > 4) {                   /* back to the four messages */
        c.n--;
        free(c.msgs[c.n].role);
        free(c.msgs[c.n].content);
    }
    chatlog_save(&c, &e);               /* now c was updated last */
    rc = chatlog_find("", id, NULL, NULL, &e);
    tap_ok(rc == 0 && !strcmp(id, c.id), "updating an older one makes it the last (%s)", id);
    rc = chatlog_find("2", id, NULL, NULL, &e);
    tap_ok(rc < 0 && strstr(e.msg, "matches 2"), "an ambiguous prefix is refused (%s)", e.msg);
    char pre[CHATLOG_ID_MAX];
    snprintf(pre, sizeof pre, "%s", c2.id);
    pre[strlen(pre) - 3] = 0;
    rc = chatlog_find(pre, id, NULL, NULL, &e);
    tap_ok(rc == 0 && !strcmp(id, c2.id), "a unique prefix finds its conversation");
    rc = chatlog_find("1999", id, NULL, NULL, &e);
    tap_ok(rc < 0 && strstr(e.msg, "no saved conversation"), "an unknown id says so (%s)", e.msg);
    rc = chatlog_open(c.id, &r, NULL, NULL, &e);
    tap_ok(rc == 0 && r.n == 4, "open by id");
    chatlog_free(&r);

    /* removal: by prefix, and a damaged file by its exact id */
    rc = chatlog_remove(pre, id, &e);
    tap_ok(rc == 0 && !strcmp(id, c2.id) && chatlog_find(pre, id, NULL, NULL, &e) < 0, "rm removes one");
    rc = chatlog_remove("20200101-000000-000-aaaaaa", id, &e);
    tap_ok(rc == 0 && count_files("aaaaaa") == 0, "rm removes a damaged file named exactly");
    rc = chatlog_remove("nothing", id, &e);
    tap_ok(rc < 0, "rm of an unknown id fails (%s)", e.msg);

    /* one writer per conversation: a conversation another process holds
       opens as a copy under a new id, cannot be removed, and is free
       again once that process is killed (flock dies with it) */
    chatlog h;
    chatlog_init(&h);
    chatlog_add(&h, "user", "held elsewhere", false, NULL);
    chatlog_save(&h, &e);
    char hid[CHATLOG_ID_MAX];
    snprintf(hid, sizeof hid, "%s", h.id);
    chatlog_free(&h);                   /* released: the child takes it */
    int ready[2];
    if (pipe(ready) != 0) tap_skip_all("no pipe");
    pid_t kid = fork();
    if (kid == 0) {
        chatlog k;
        char one = chatlog_open(hid, &k, NULL, NULL, &e) == 0 && k.lock ? 'y' : 'n';
        if (write(ready[1], &one, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char got = 0;
    if (read(ready[0], &got, 1) != 1) got = 0;
    tap_ok(got == 'y', "a child process opens and locks it");
    last_warning[0] = 0;                /* (the damaged files above warn too) */
    rc = chatlog_open(hid, &r, warn, NULL, &e);
    tap_ok(rc == 0 && strcmp(r.id, hid) && !strcmp(r.forked_from, hid) && r.n == 1 &&
               strstr(last_warning, "is open in another Ember (pid"),
           "opened while another process has it: a copy under a new id, said (%s)", last_warning);
    chatlog_free(&r);
    rc = chatlog_remove(hid, id, &e);
    snprintf(path, sizeof path, "%s/%s.json", chats, hid);
    tap_ok(rc < 0 && strstr(e.msg, "open in another Ember") && access(path, F_OK) == 0,
           "rm refuses while another process has it (%s)", e.msg);
    kill(kid, SIGKILL);
    waitpid(kid, NULL, 0);
    last_warning[0] = 0;
    rc = chatlog_open(hid, &r, warn, NULL, &e);
    tap_ok(rc == 0 && !strcmp(r.id, hid) && !strstr(last_warning, "open in another") && r.lock, "once that process is killed it opens itself");
    chatlog r2;
    rc = chatlog_open(hid, &r2, warn, NULL, &e);
    tap_ok(rc == 0 && !strcmp(r2.id, hid) && !strstr(last_warning, "open in another") && r2.lock == r.lock,
           "a second open in the same process shares the lock instead of finding it busy");
    chatlog_free(&r2);
    chatlog_free(&r);
    tap_ok(count_files(hid) == 1, "its lock file goes once released (the file alone stays)");

    /* size: a file beyond the limit is refused unread (a sparse one costs
       no disk), and Ember does not write what it would refuse to read */
    snprintf(path, sizeof path, "%s/20200101-000000-000-bigbig.json", chats);
    put("20200101-000000-000-bigbig.json", "{");
    rc = truncate(path, (off_t)CHATLOG_MAX_BYTES + 1);
    rc = rc == 0 ? chatlog_load(path, &r, &e) : 0;
    tap_ok(rc < 0 && strstr(e.msg, "too large"), "a file over the limit is refused unread (%s)", e.msg);
    chatlog big;
    chatlog_init(&big);
    char *huge = malloc(CHATLOG_MAX_BYTES + 1);
    if (huge) {
        memset(huge, 'x', CHATLOG_MAX_BYTES);
        huge[CHATLOG_MAX_BYTES] = 0;
        chatlog_add(&big, "user", huge, false, NULL);
        free(huge);
    }
    rc = chatlog_save(&big, &e);
    snprintf(path, sizeof path, "%s/%s.json", chats, big.id);
    tap_ok(rc < 0 && strstr(e.msg, "too large") && access(path, F_OK) != 0,
           "a conversation over the limit is not saved, and says why (%s)", e.msg);
    chatlog_free(&big);
    /* a FIFO named like a conversation is refused at once, not waited on */
    snprintf(path, sizeof path, "%s/20200101-000000-000-fifo00.json", chats);
    rc = mkfifo(path, 0600) == 0 ? chatlog_load(path, &r, &e) : 0;
    tap_ok(rc < 0 && strstr(e.msg, "a FIFO"), "a FIFO is refused without blocking (%s)", e.msg);

    /* no directory at all: an empty list, not an error */
    setenv("XDG_STATE_HOME", "/nonexistent-ember-test", 1);
    n = chatlog_list(&v, warn, NULL, &e);
    tap_ok(n == 0, "no directory is an empty list");
    free(v);

    chatlog_free(&c);
    chatlog_free(&c2);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) tap_diag("could not remove %s", base);
    return tap_done();
}
