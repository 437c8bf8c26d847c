/* Results of one computation on several ISA paths, for tests that compare
   them bit for bit: a growable byte buffer, and the computation run in a
   child process started with EMBER_ISA set before anything is chosen (a
   fork after this process picked its ISA would inherit it; EMBER_ISA only
   lowers the ISA).  Header-only: each test includes it once. */
#ifndef EMBER_TEST_ISA_CHILD_H
#define EMBER_TEST_ISA_CHILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    size_t n, cap;
    uint8_t *b;
} isa_buf;

static void put(isa_buf *o, const void *p, size_t n)
{
    if (o->n + n > o->cap) {
        o->cap = (o->n + n) * 2;
        o->b = realloc(o->b, o->cap);
        if (!o->b) abort();
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}

/* compute(o) in a child with EMBER_ISA=isa, its bytes appended to *o;
   1 when the child ran to the end and wrote something. */
static int child_compute(const char *isa, void (*compute)(isa_buf *o), isa_buf *o)
{
    int fd[2];
    if (pipe(fd) != 0) return 0;
    pid_t pid = fork();
    if (pid < 0) return 0;
    if (pid == 0) {
        close(fd[0]);
        setenv("EMBER_ISA", isa, 1);
        isa_buf c = {0};
        compute(&c);
        size_t off = 0;
        while (off < c.n) {
            ssize_t w = write(fd[1], c.b + off, c.n - off);
            if (w <= 0) _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(fd[1]);
    uint8_t chunk[65536];
    ssize_t r;
    while ((r = read(fd[0], chunk, sizeof chunk)) > 0) put(o, chunk, (size_t)r);
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && o->n > 0;
}

/* The first byte where got and ref differ (got->n when none and the sizes agree). */
static size_t first_difference(const isa_buf *got, const isa_buf *ref)
{
    for (size_t i = 0; i < got->n && i < ref->n; i++)
        if (got->b[i] != ref->b[i]) return i;
    return got->n == ref->n ? got->n : (got->n < ref->n ? got->n : ref->n);
}

#endif
