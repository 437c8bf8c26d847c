/* Getting a model from the Hugging Face Hub: a reference USER/REPO[:QUANT],
   the repository's file list, the choice of one GGUF file, its download
   (resumable, checksummed) into the Hub's own cache layout (hf_cache.h),
   and the resolution of `-m hf:...` from that cache.

   The server is $HF_ENDPOINT (default https://huggingface.co); $HF_TOKEN
   (else the token file `huggingface-cli login` leaves) is sent as a bearer
   token; proxies come from the usual environment variables (libcurl). */
#ifndef EMBER_HF_H
#define EMBER_HF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

typedef struct hf_ref {
    char repo[200];     /* USER/REPO */
    char quant[64];     /* "" when not given */
} hf_ref;

/* "USER/REPO" or "USER/REPO:QUANT" (an "hf:" prefix is allowed).  Names
   are checked for the characters the Hub allows, so a name can never
   climb out of the cache directory. */
int hf_ref_parse(const char *s, hf_ref *r, ember_err *err);

/* One file of a repository's listing. */
typedef struct hf_entry {
    char *path;         /* inside the repository, '/'-separated */
    uint64_t size;
    char oid[72];       /* LFS: the content's sha256; else the git blob id */
    bool lfs;
} hf_entry;

typedef struct hf_listing {
    hf_entry *e;
    int n;
    char **dirs;        /* the folders listed ("directory" entries), once each */
    int ndirs;
    int unusable;       /* .gguf entries skipped: no id or size, or an unsafe path */
    char rev[64];       /* the commit the listing is of (X-Repo-Commit, else the model's
                           "sha"; "main" if unknown) */
} hf_listing;

/* Someone other than a terminal watching a download (the chat's status
   line): fn is called from the downloading thread every 100 ms or so with
   the file, the bytes there and in all, and the rate (while the listing is
   awaited: file "" and zeros, about once a second); a nonzero return stops
   the transfer, the partial kept as on Ctrl-C.  With a watch no
   signal handler is set: the signals are the caller's. */
typedef struct hf_watch {
    int (*fn)(void *ctx, const char *file, uint64_t have, uint64_t total, double bytes_per_s);
    void *ctx;
} hf_watch;

/* GET the listing of the main branch; -1 with a message that says which
   case it is (no such repository, gated or private), HF_UNREACHABLE when
   no answer came at all (no network, no such host, a refused connection).
   watch (or NULL): see above; it can stop a listing too. */
enum { HF_UNREACHABLE = -2 };
int hf_list(const char *repo, const hf_watch *watch, hf_listing *l, ember_err *err);
void hf_listing_free(hf_listing *l);
/* The commit $HF_ENDPOINT/REPO/resolve/main/PATH says it serves
   (X-Repo-Commit of a HEAD request, as huggingface_hub reads it), for a
   listing that named none: 0 with it in rev, -1 when there is none. */
int hf_resolve_commit(const char *repo, const char *path, const hf_watch *watch, char *rev, size_t cap);
/* Appends the files of one page of the tree API (a JSON array) to l,
   the folders to l->dirs (up to a few thousand), skipping every entry whose
   path could leave the repository (absolute, "." or "..", control
   characters) or whose id is not hex. */
int hf_listing_add(const char *repo, hf_listing *l, const char *json, size_t len, ember_err *err);
/* A repository path safe to become a path in the cache; a lower-case hex id of want digits. */
bool hf_path_ok(const char *p);
bool hf_hex_ok(const char *s, size_t want);

/* Picks one GGUF among names (repository paths) for quant ("" = the
   default: Q4_K_M, else Q8_0, else the only one; two Q4_K_M are ambiguous,
   not a reason to take Q8_0), matched in the file names, else in the
   paths (a folder Q4_K_M/; a quant with a '/' is matched in the paths).
   Split parts and mmproj projectors are not candidates.  Returns the
   index, or HF_CHOOSE_NONE / HF_CHOOSE_AMBIGUOUS with the message (listing
   the candidates) in err. */
enum { HF_CHOOSE_NONE = -1, HF_CHOOSE_AMBIGUOUS = -2 };
int hf_choose(const char *repo, char *const *names, int n, const char *quant, ember_err *err);

/* Downloads one file to dest (a ".incomplete" path), resuming what dest
   already holds, verifying size and checksum against e, then renames it
   to final (still holding the partial's lock).  progress: a bar
   on stderr while it runs; watch (or NULL): see above.  0, or -1 with err
   (the partial file kept when a rerun can resume it, removed when its
   checksum is wrong). */
typedef struct hf_dl_stats {
    uint64_t resumed_from;   /* bytes that were already there */
    uint64_t fetched;        /* bytes received this time */
    double seconds;
} hf_dl_stats;
int hf_download(const char *repo, const hf_entry *e, const char *dest, const char *final, bool progress,
                const hf_watch *watch, hf_dl_stats *st, ember_err *err);

/* The whole of `ember pull`: list, choose, reuse a cached blob or download
   it, link it into the snapshot, record the ref.  The local path (the
   snapshot link) goes to path.  progress: as for hf_download; summary: a
   one-line account on stderr at the end; watch: as for hf_download.  When
   the Hub cannot be reached (or $HF_HUB_OFFLINE is set) a clear choice
   among the cached files is taken instead, with a warning (with summary). */
int hf_pull(const hf_ref *r, bool progress, bool summary, const hf_watch *watch, char *path, size_t cap,
            ember_err *err);

/* The cached file for r, chosen as hf_choose chooses among the cached
   GGUF files of refs/main's snapshot (of every snapshot when it holds none,
   one per name): 0 with its path, else HF_CHOOSE_NONE or
   HF_CHOOSE_AMBIGUOUS with err.  Nothing is asked of the Hub. */
int hf_cache_pick(const hf_ref *r, char *path, size_t cap, ember_err *err);

/* `-m hf:...`: the cached file for r when the choice among the cached
   files is clear (hf_cache_pick), else hf_pull (unless $HF_HUB_OFFLINE is set). */
int hf_resolve(const hf_ref *r, char *path, size_t cap, ember_err *err);

/* $HF_ENDPOINT without a trailing slash, or the default. */
const char *hf_endpoint(void);

#endif
