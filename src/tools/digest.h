/* Checksums of downloaded files, as the Hugging Face Hub names them: the
   SHA-256 of the content for LFS files, the git blob SHA-1 ("blob N\0"
   then the content) for files kept in git itself. */
#ifndef EMBER_DIGEST_H
#define EMBER_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct digest digest;

/* git_blob: the git object id of a file of size bytes; else SHA-256.
   NULL when libcrypto cannot make the context. */
digest *digest_new(bool git_blob, uint64_t size);
int digest_update(digest *d, const void *data, size_t len);   /* 0 or -1 */
/* Starts again (a resumed download the server sent whole). */
int digest_reset(digest *d);
/* Lower-case hex into hex (at least 65 bytes); the digest is then spent. */
int digest_hex(digest *d, char *hex);
void digest_free(digest *d);

/* Feeds the first len bytes of the file at fd (from offset 0) into d:
   a partial download's bytes before the transfer resumes.  0 or -1. */
int digest_fd(digest *d, int fd, uint64_t len);

#endif
