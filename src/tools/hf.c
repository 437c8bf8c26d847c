/* The Hub over HTTP: the endpoint, the token, a configured handle, errors,
   and fetching a repository's file listing (parsed by hf_listing.c). */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "hf.h"
#include "hf_cache.h"
#include "hf_http.h"

const char *hf_endpoint(void)
{
    static char buf[1024];
    const char *e = getenv("HF_ENDPOINT");
    if (!e || !*e) return "https://huggingface.co";
    snprintf(buf, sizeof buf, "%s", e);
    for (size_t n = strlen(buf); n && buf[n - 1] == '/'; n--) buf[n - 1] = 0;
    return buf;
}

/* $HF_TOKEN, else the file `huggingface-cli login` writes */
static const char *token(void)
{
    static char buf[512];
    const char *t = getenv("HF_TOKEN");
    if (!t || !*t) t = getenv("HUGGING_FACE_HUB_TOKEN");
    if (t && *t) {
        /* it goes into a header line: a line break would start another */
        snprintf(buf, sizeof buf, "%s", t);
        buf[strcspn(buf, "\r\n")] = 0;
        return buf;
    }
    char path[PATH_MAX];
    if (hf_token_path(path, sizeof path) < 0) return NULL;
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n \t")] = 0;
    return buf[0] ? buf : NULL;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) || line[k] != ':') return;
    const char *v = line + k + 1;
    size_t vl = n - k - 1;
    while (vl && (*v == ' ' || *v == '\t')) v++, vl--;
    while (vl && isspace((unsigned char)v[vl - 1])) vl--;
    if (vl >= cap) vl = cap - 1;
    memcpy(out, v, vl);
    out[vl] = 0;
}

/* The target of the rel="next" link of a Link header ("" if none): a
   header may hold several links (rel="prev", rel="first"...), and rel's
   value may be a token or a quoted list ("next last"). */
static void link_next(const char *v, char *out, size_t cap)
{
    out[0] = 0;
    while ((v = strchr(v, '<'))) {
        const char *gt = strchr(v, '>');
        if (!gt) return;
        /* this link's parameters run to the next link-value */
        const char *end = strchr(gt, '<');
        if (!end) end = gt + strlen(gt);
        for (const char *r = gt; (r = strcasestr(r, "rel=")) && r < end; r += 4) {
            const char *p = r + 4;
            bool quoted = *p == '"';
            p += quoted;
            while (p < end) {
                size_t wl = strcspn(p, quoted ? "\" " : "; ,");
                if (wl == 4 && !strncasecmp(p, "next", 4)) {
                    snprintf(out, cap, "%.*s", (int)(gt - v - 1), v + 1);
                    return;
                }
                if (!quoted || p[wl] != ' ') break;
                p += wl + 1;
            }
        }
        v = gt + 1;
    }
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ud)
{
    hf_http *h = ud;
    size_t n = size * nitems;
    /* a redirect's headers come first: only the final response's count */
    if (n >= 5 && !strncmp(line, "HTTP/", 5)) h->error_code[0] = h->next[0] = h->content_range[0] = 0;
    header_value(line, n, "Content-Range", h->content_range, sizeof h->content_range);
    header_value(line, n, "X-Repo-Commit", h->repo_commit, sizeof h->repo_commit);
    header_value(line, n, "X-Error-Code", h->error_code, sizeof h->error_code);
    char link[4096] = "";
    header_value(line, n, "Link", link, sizeof link);
    if (link[0]) link_next(link, h->next, sizeof h->next);
    return n;
}

/* scheme://host:port of url, lower-cased, with the default port spelled
   out; -1 if url does not parse */
static int origin(const char *url, char *buf, size_t cap)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int rc = -1;
    if (u && !curl_url_set(u, CURLUPART_URL, url, CURLU_GUESS_SCHEME) &&
        !curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) && !curl_url_get(u, CURLUPART_HOST, &host, 0) &&
        !curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT)) {
        snprintf(buf, cap, "%s://%s:%s", scheme, host, port);
        for (char *s = buf; *s; s++) *s = (char)tolower((unsigned char)*s);
        rc = 0;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

/* Whether url is on $HF_ENDPOINT's scheme, host and port: the token goes
   there and nowhere else */
static bool on_endpoint(const char *url)
{
    char a[1200], b[1200];
    return !origin(url, a, sizeof a) && !origin(hf_endpoint(), b, sizeof b) && !strcmp(a, b);
}

int hf_http_resolve_url(const char *base, const char *ref, char *buf, size_t cap)
{
    CURLU *u = curl_url();
    char *out = NULL;
    int rc = -1;
    /* a relative reference (a path, a query) is resolved against base as
       a browser would, per RFC 3986 */
    if (u && !curl_url_set(u, CURLUPART_URL, base, CURLU_GUESS_SCHEME) && !curl_url_set(u, CURLUPART_URL, ref, 0) &&
        !curl_url_get(u, CURLUPART_URL, &out, 0) && strlen(out) < cap) {
        snprintf(buf, cap, "%s", out);
        rc = 0;
    }
    curl_free(out);
    curl_url_cleanup(u);
    return rc;
}

int hf_http_open(hf_http *h, const char *url, ember_err *err)
{
    static bool inited;
    memset(h, 0, sizeof *h);
    if (!inited && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return ember_seterr(err, "cannot start libcurl");
    inited = true;
    h->curl = curl_easy_init();
    if (!h->curl) return ember_seterr(err, "cannot start libcurl");
    const char *t = on_endpoint(url) ? token() : NULL;
    if (t) {
        char auth[600];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", t);
        h->headers = curl_slist_append(NULL, auth);
    }
    CURL *c = h->curl;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h->headers);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "ember/" PACKAGE_VERSION);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
    /* the file lives on a CDN behind a signed redirect: the token is for
       the Hub alone (libcurl keeps our Authorization off a redirect to
       another host, port or scheme; on_endpoint keeps it off a listing
       page elsewhere) */
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
    /* a connection that goes silent is dropped, not waited on forever */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->curl_err);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    return 0;
}

void hf_http_close(hf_http *h)
{
    if (h->curl) curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->headers);
    h->curl = NULL;
    h->headers = NULL;
}

void hf_http_error_body(hf_http *h, const char *data, size_t n)
{
    size_t room = sizeof h->error_body - 1 - h->error_body_n;
    if (n > room) n = room;
    memcpy(h->error_body + h->error_body_n, data, n);
    h->error_body_n += n;
    h->error_body[h->error_body_n] = 0;
}

/* What the server said in an error body, for the message: the Hub's
   {"error": "..."}, or a short line of text (not an HTML page); "" else. */
static void server_says(const hf_http *h, char *out, size_t cap)
{
    out[0] = 0;
    json_t *j = json_loadb(h->error_body, h->error_body_n, 0, NULL);
    const char *e = json_string_value(json_object_get(j, "error"));
    const char *b = h->error_body;
    while (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\n') b++;
    if (e) snprintf(out, cap, "%.160s", e);
    else if (!j && *b && *b != '<') snprintf(out, cap, "%.160s", b);
    json_decref(j);
    for (char *s = out; *s; s++)   /* one line, nothing a terminal would act on */
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = ' ';
}

int hf_http_error(const hf_http *h, CURLcode rc, long status, const char *repo, const char *what, ember_err *err)
{
    const char *ep = hf_endpoint();
    bool tok = token() != NULL;
    if (rc != CURLE_OK && status < 400) {
        ember_seterr(err, "cannot reach %s (%s): %s", ep, what, h->curl_err[0] ? h->curl_err : curl_easy_strerror(rc));
        return status ? -1 : HF_UNREACHABLE;
    }
    char says[200], tail[240] = "";
    server_says(h, says, sizeof says);
    if (says[0]) snprintf(tail, sizeof tail, " (the server says: %s)", says);
    /* The Hub answers 401 for a repository that does not exist as for one
       that is private, and says which in X-Error-Code. */
    if (!strcmp(h->error_code, "RevisionNotFound"))
        return ember_seterr(err, "%s has no branch main on %s (HTTP %ld)%s", repo, ep, status, tail);
    if (!strcmp(h->error_code, "EntryNotFound"))
        return ember_seterr(err, "%s: %s is not in the repository (HTTP %ld)%s", repo, what, status, tail);
    if (status == 404 || !strcmp(h->error_code, "RepositoryNotFound"))
        return ember_seterr(err, "%s: no such repository on %s (HTTP %ld)%s%s", repo, ep, status,
                            tok ? "" : "; a private one needs HF_TOKEN", tail);
    if (status == 401 || status == 403) {
        bool gated = !strcmp(h->error_code, "GatedRepo");
        if (!tok)
            return ember_seterr(err, "%s is %s (HTTP %ld): accept its terms at %s/%s and set HF_TOKEN to an "
                                     "access token (%s/settings/tokens)%s", repo,
                                gated ? "gated" : "gated or private", status, ep, repo, ep, tail);
        return ember_seterr(err, "%s: access refused with the HF_TOKEN given (HTTP %ld): accept the model's "
                                 "terms at %s/%s, or use a token that can read it%s", repo, status, ep, repo, tail);
    }
    if (status == 429)
        return ember_seterr(err, "%s: the Hub is rate-limiting requests (HTTP 429): try again later%s", repo, tail);
    return ember_seterr(err, "%s: the Hub answered HTTP %ld for %s%s", repo, status, what, tail);
}

int hf_http_escape_path(const char *path, char *buf, size_t cap)
{
    size_t off = 0;
    for (const char *s = path; *s;) {
        size_t n = strcspn(s, "/");
        char *e = curl_easy_escape(NULL, s, (int)n);
        if (!e) return -1;
        int w = snprintf(buf + off, cap - off, "%s%s", e, s[n] ? "/" : "");
        curl_free(e);
        if (w < 0 || (size_t)w >= cap - off) return -1;
        off += (size_t)w;
        s += n + (s[n] ? 1 : 0);
    }
    return 0;
}

/* ---- GET into memory ---------------------------------------------------- */

typedef struct membuf {
    char *p;
    size_t n, cap;
    bool too_big;
    const hf_watch *watch;
    bool stopped;           /* the watcher asked to stop */
} membuf;

/* The chat's Esc (or its leaving) must not wait on a Hub that is slow to
   answer: the watcher is asked as a download asks it, with no file yet. */
static int on_wait(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
    membuf *b = ud;
    if (b->watch->fn(b->watch->ctx, "", 0, 0, 0)) b->stopped = true;
    return b->stopped;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    membuf *b = ud;
    size_t n = size * nmemb;
    if (b->n + n + 1 > (64u << 20)) {   /* a listing is kilobytes: this is not one */
        b->too_big = true;
        return 0;
    }
    if (b->n + n + 1 > b->cap) {
        size_t nc = (b->n + n + 1) * 2;
        char *g = realloc(b->p, nc);
        if (!g) return 0;
        b->p = g;
        b->cap = nc;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* 0 with the body in *b (NUL-terminated, free b->p); -1 with err. */
static int get_body(const char *repo, const char *url, const char *what, const hf_watch *watch, membuf *b,
                    char *commit, size_t ccap, char *next, size_t ncap, ember_err *err)
{
    hf_http h;
    memset(b, 0, sizeof *b);
    b->watch = watch;
    if (hf_http_open(&h, url, err)) return -1;
    /* a listing compresses well; a model file is fetched as stored (its size and Range count bytes) */
    curl_easy_setopt(h.curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h.curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h.curl, CURLOPT_WRITEDATA, b);
    if (watch) {
        curl_easy_setopt(h.curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFOFUNCTION, on_wait);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFODATA, b);
    }
    CURLcode rc = curl_easy_perform(h.curl);
    long status = 0;
    curl_easy_getinfo(h.curl, CURLINFO_RESPONSE_CODE, &status);
    int r = 0;
    if (b->stopped) {
        r = ember_seterr(err, "%s: cancelled while waiting for the Hub's %s", repo, what);
    } else if (b->too_big) {
        r = ember_seterr(err, "%s: the Hub's %s is over 64 MiB: not a listing", repo, what);
    } else if (rc != CURLE_OK || status >= 400) {
        if (b->p) hf_http_error_body(&h, b->p, b->n);
        r = hf_http_error(&h, rc, status, repo, what, err);
    } else {
        if (commit && h.repo_commit[0]) snprintf(commit, ccap, "%s", h.repo_commit);
        if (next) snprintf(next, ncap, "%s", h.next);
    }
    if (r) {
        free(b->p);
        b->p = NULL;
    }
    hf_http_close(&h);
    return r;
}

enum { MAX_PAGES = 1000 };

/* Every page of one listing (url, then the pages its Link: rel="next"
   headers name) into l; *pages counts the requests of the whole listing. */
static int list_pages(const char *repo, const char *first, const hf_watch *watch, hf_listing *l, int *pages,
                      ember_err *err)
{
    char url[4200], next[2048], abs[4200];
    snprintf(url, sizeof url, "%s", first);
    for (;;) {
        if (++*pages > MAX_PAGES)
            return ember_seterr(err, "%s: the Hub's file listing goes on past %d pages", repo, MAX_PAGES);
        membuf b;
        int rc = get_body(repo, url, "file listing", watch, &b, l->rev, sizeof l->rev, next, sizeof next, err);
        if (!rc && hf_listing_add(repo, l, b.p ? b.p : "", b.n, err)) rc = -1;
        free(b.p);
        if (rc || !next[0]) return rc;
        /* the next page may be named relative to this one, or on another
           host (a mirror's pages on the Hub itself): followed either way,
           without the token off the endpoint (hf_http_open) */
        if (hf_http_resolve_url(url, next, abs, sizeof abs) || !strcmp(abs, url))
            return ember_seterr(err, "%s: the Hub's file listing names a next page that cannot be followed (%.200s)",
                                repo, next);
        snprintf(url, sizeof url, "%s", abs);
    }
}

static int by_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Whether any of the n paths in sorted (strcmp order) is under dir/ */
static bool has_files_under(char *const *sorted, int n, const char *dir)
{
    size_t dl = strlen(dir);
    int lo = 0, hi = n;
    while (lo < hi) {   /* the first path not below dir + "/" */
        int mid = lo + (hi - lo) / 2;
        int c = strncmp(sorted[mid], dir, dl);
        if (c < 0 || (c == 0 && (unsigned char)sorted[mid][dl] < '/')) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && !strncmp(sorted[lo], dir, dl) && sorted[lo][dl] == '/';
}

static int by_entry_path(const void *a, const void *b)
{
    const hf_entry *const *x = a, *const *y = b;
    int c = strcmp((*x)->path, (*y)->path);
    return c ? c : (*x < *y ? -1 : *x > *y);
}

/* A path listed twice (pages that overlap: a server that ignores the
   cursor) is one file, not two candidates of one name: the first stays. */
static int drop_repeats(hf_listing *l, ember_err *err)
{
    if (l->n < 2) return 0;
    hf_entry **p = malloc((size_t)l->n * sizeof *p);
    bool *drop = calloc((size_t)l->n, sizeof *drop);
    if (!p || !drop) {
        free(p);
        free(drop);
        return ember_seterr(err, "out of memory");
    }
    for (int i = 0; i < l->n; i++) p[i] = &l->e[i];
    qsort(p, (size_t)l->n, sizeof *p, by_entry_path);   /* a path's copies in listing order */
    for (int i = 1; i < l->n; i++)
        if (!strcmp(p[i]->path, p[i - 1]->path)) drop[p[i] - l->e] = true;
    int m = 0;
    for (int i = 0; i < l->n; i++) {
        if (drop[i]) free(l->e[i].path);
        else l->e[m++] = l->e[i];
    }
    l->n = m;
    free(p);
    free(drop);
    return 0;
}

int hf_list(const char *repo, const hf_watch *watch, hf_listing *l, ember_err *err)
{
    memset(l, 0, sizeof *l);
    char url[4200];
    int pages = 0;
    snprintf(url, sizeof url, "%s/api/models/%s/tree/main?recursive=true", hf_endpoint(), repo);
    int rc = list_pages(repo, url, watch, l, &pages, err);
    /* A server that ignores ?recursive=true lists one level, its folders as
       "directory" entries; real repositories keep quantizations in
       folders (Q4_K_M/...), so each folder nothing was listed under is
       asked for by itself (tree/main/FOLDER). */
    char **sorted = NULL;
    int nsorted = -1;
    for (int i = 0; !rc && i < l->ndirs; i++) {
        if (nsorted != l->n) {
            char **g = realloc(sorted, ((size_t)l->n + 1) * sizeof *g);
            if (!g) {
                rc = ember_seterr(err, "out of memory");
                break;
            }
            sorted = g;
            for (int k = 0; k < l->n; k++) sorted[k] = l->e[k].path;
            qsort(sorted, (size_t)l->n, sizeof *sorted, by_str);
            nsorted = l->n;
        }
        char esc[3072];
        if (has_files_under(sorted, nsorted, l->dirs[i]) || hf_http_escape_path(l->dirs[i], esc, sizeof esc)) continue;
        snprintf(url, sizeof url, "%s/api/models/%s/tree/main/%s?recursive=true", hf_endpoint(), repo, esc);
        int n0 = l->n;
        rc = list_pages(repo, url, watch, l, &pages, err);
        /* only what is in the folder: a server that answers every folder
           with the top level again must not list its files twice */
        size_t dl = strlen(l->dirs[i]);
        int m = n0;
        for (int k = n0; k < l->n; k++) {
            if (!strncmp(l->e[k].path, l->dirs[i], dl) && l->e[k].path[dl] == '/') l->e[m++] = l->e[k];
            else free(l->e[k].path);
        }
        l->n = m;
    }
    free(sorted);
    if (!rc) rc = drop_repeats(l, err);
    if (rc) {
        hf_listing_free(l);
        return rc;
    }
    /* the commit names the snapshot; without the header, ask the model's page */
    if (!l->rev[0]) {
        snprintf(url, sizeof url, "%s/api/models/%s", hf_endpoint(), repo);
        membuf b;
        ember_err ignored;
        if (get_body(repo, url, "model info", watch, &b, NULL, 0, NULL, 0, &ignored) == 0 && b.p) {
            json_t *info = json_loadb(b.p, b.n, 0, NULL);
            const char *sha = json_string_value(json_object_get(info, "sha"));
            if (sha && hf_hex_ok(sha, 40)) snprintf(l->rev, sizeof l->rev, "%s", sha);
            json_decref(info);
        }
        free(b.p);
    }
    if (!l->rev[0] || !hf_path_ok(l->rev) || strchr(l->rev, '/')) snprintf(l->rev, sizeof l->rev, "main");
    return 0;
}

int hf_resolve_commit(const char *repo, const char *path, const hf_watch *watch, char *rev, size_t cap)
{
    char url[4200], esc[3072];
    if (hf_http_escape_path(path, esc, sizeof esc)) return -1;
    snprintf(url, sizeof url, "%s/%s/resolve/main/%s", hf_endpoint(), repo, esc);
    hf_http h;
    ember_err ignored;
    if (hf_http_open(&h, url, &ignored)) return -1;
    membuf b = {.watch = watch};
    /* the headers alone (X-Repo-Commit is the Hub's, kept over the
       redirect's answers that lack it) */
    curl_easy_setopt(h.curl, CURLOPT_NOBODY, 1L);
    if (watch) {
        curl_easy_setopt(h.curl, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFOFUNCTION, on_wait);
        curl_easy_setopt(h.curl, CURLOPT_XFERINFODATA, &b);
    }
    CURLcode rc = curl_easy_perform(h.curl);
    long status = 0;
    curl_easy_getinfo(h.curl, CURLINFO_RESPONSE_CODE, &status);
    int r = -1;
    if (rc == CURLE_OK && status < 400 && hf_hex_ok(h.repo_commit, 40)) {
        snprintf(rev, cap, "%s", h.repo_commit);
        r = 0;
    }
    hf_http_close(&h);
    return r;
}
