/* SHA-256 and git blob ids through libcrypto's EVP interface. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "digest.h"

struct digest {
    EVP_MD_CTX *ctx;
    bool git_blob;
    uint64_t size;
};

static int start(digest *d)
{
    if (!EVP_DigestInit_ex(d->ctx, d->git_blob ? EVP_sha1() : EVP_sha256(), NULL)) return -1;
    if (d->git_blob) {
        char hdr[40];
        int n = snprintf(hdr, sizeof hdr, "blob %" PRIu64, d->size);
        /* the NUL ends git's header: it is hashed too */
        if (!EVP_DigestUpdate(d->ctx, hdr, (size_t)n + 1)) return -1;
    }
    return 0;
}

digest *digest_new(bool git_blob, uint64_t size)
{
    digest *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->ctx = EVP_MD_CTX_new();
    d->git_blob = git_blob;
    d->size = size;
    if (!d->ctx || start(d)) {
        digest_free(d);
        return NULL;
    }
    return d;
}

int digest_reset(digest *d) { return start(d); }

int digest_update(digest *d, const void *data, size_t len)
{
    return EVP_DigestUpdate(d->ctx, data, len) ? 0 : -1;
}

int digest_hex(digest *d, char *hex)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (!EVP_DigestFinal_ex(d->ctx, md, &n)) return -1;
    for (unsigned i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    hex[2 * n] = 0;
    return 0;
}

void digest_free(digest *d)
{
    if (!d) return;
    EVP_MD_CTX_free(d->ctx);
    free(d);
}

int digest_fd(digest *d, int fd, uint64_t len)
{
    enum { CHUNK = 1 << 20 };
    unsigned char *buf = malloc(CHUNK);
    if (!buf) return -1;
    uint64_t off = 0;
    int rc = 0;
    while (off < len && !rc) {
        size_t want = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0 || digest_update(d, buf, (size_t)got)) rc = -1;
        else off += (uint64_t)got;
    }
    free(buf);
    return rc;
}
