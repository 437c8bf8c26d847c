/* What the Hub's listing (hf.c) and downloads (hf_download.c) share: one
   configured curl handle, the response headers that matter, and the
   reading of an HTTP failure as something a person can act on. */
#ifndef EMBER_HF_HTTP_H
#define EMBER_HF_HTTP_H

#include <curl/curl.h>

#include "ember.h"

typedef struct hf_http {
    CURL *curl;
    struct curl_slist *headers;
    char repo_commit[64];     /* X-Repo-Commit */
    char error_code[64];      /* X-Error-Code: RepositoryNotFound, GatedRepo, ... */
    char next[2048];          /* Link: <URL>; rel="next" (a listing's next page) */
    char content_range[96];   /* Content-Range: bytes START-END/TOTAL */
    char error_body[512];     /* the start of an error response's body (hf_http_error quotes it) */
    size_t error_body_n;
    char curl_err[CURL_ERROR_SIZE];
} hf_http;

/* A handle for url with the token (when url is on $HF_ENDPOINT's scheme,
   host and port), redirects, timeouts and header capture
   set; -1 with err when curl cannot start. */
int hf_http_open(hf_http *h, const char *url, ember_err *err);
void hf_http_close(hf_http *h);

/* Keeps the start of an error response's body for hf_http_error. */
void hf_http_error_body(hf_http *h, const char *data, size_t n);

/* The message for a finished request on repo that failed: status >= 400
   (what: "listing", or the file's name) or a transport error rc. */
int hf_http_error(const hf_http *h, CURLcode rc, long status, const char *repo, const char *what, ember_err *err);

/* ref (a URL, or one relative to base: "/path", "?query") made absolute
   against base into buf; -1 when it does not parse or fit. */
int hf_http_resolve_url(const char *base, const char *ref, char *buf, size_t cap);

/* url-escapes each '/'-separated part of path into buf. */
int hf_http_escape_path(const char *path, char *buf, size_t cap);

#endif
