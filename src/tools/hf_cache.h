/* The Hugging Face Hub's cache layout, shared with huggingface_hub and
   llama.cpp so that a file any of them fetched is found by the others:

     <root>/models--USER--REPO/blobs/<oid>            the content
     <root>/models--USER--REPO/snapshots/<rev>/FILE   -> ../../blobs/<oid>
     <root>/models--USER--REPO/refs/main              <rev>

   root: $HF_HUB_CACHE, else $HF_HOME/hub, else
   $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. */
#ifndef EMBER_HF_CACHE_H
#define EMBER_HF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember.h"

int hf_cache_root(char *buf, size_t cap, ember_err *err);
/* The token file `huggingface-cli login` writes: $HF_TOKEN_PATH, else
   $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else
   ~/.cache/huggingface/token.  0, or -1 when there is none. */
int hf_token_path(char *buf, size_t cap);
/* <root>/models--USER--REPO */
int hf_cache_repo_dir(const char *root, const char *repo, char *buf, size_t cap, ember_err *err);
/* The repository name of a "models--USER--REPO" directory entry; -1 if not one. */
int hf_cache_repo_name(const char *entry, char *repo, size_t cap);

/* mkdir -p (mode 0755). */
int hf_cache_mkdirs(const char *path, ember_err *err);

/* refs/main: 0 with the revision in rev, -1 when absent or unreadable. */
int hf_cache_ref_get(const char *repo_dir, char *rev, size_t cap);
int hf_cache_ref_set(const char *repo_dir, const char *rev, ember_err *err);

/* Makes snapshots/<rev>/<file> a relative link to blobs/<oid>, replacing
   any link there; its path goes to path. */
int hf_cache_link(const char *repo_dir, const char *rev, const char *file, const char *oid, char *path,
                  size_t cap, ember_err *err);

/* A GGUF file found in a repository's snapshots. */
typedef struct hf_cached {
    char *file;         /* path inside the repository */
    char *path;         /* the snapshot link */
    char *blob;         /* what it points to (realpath), NULL if dangling */
    char rev[64];
    uint64_t size;
} hf_cached;

/* The .gguf files under snapshots/<rev> (rev NULL: every snapshot), in a
   stable order.  Returns how many (in *out, free with hf_cached_free), or -1. */
int hf_cache_list(const char *repo_dir, const char *rev, hf_cached **out);
void hf_cached_free(hf_cached *c, int n);

/* Removes the snapshot links of file in every snapshot, the blob when no
   other link of the repository still uses it, and directories left empty
   (the whole repository's when nothing is left).  0 or -1 with err. */
int hf_cache_remove(const char *repo_dir, const char *file, ember_err *err);

#endif
