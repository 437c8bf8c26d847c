/* Files given to the next message (/read FILE, ember -f FILE) and text
   read from a pipe: each becomes a fenced block named after the file, put
   before what the person types.  No curses here. */
#ifndef EMBER_UI_ATTACH_H
#define EMBER_UI_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

/* The largest file taken (the context would not hold more anyway). */
#define UI_ATTACH_MAX (4u << 20)

typedef struct {
    char *text;        /* the pending blocks (a string), NULL when none */
    size_t len;
    int n;             /* how many files */
} ui_attach;

/* Reads PATH ("~/" expanded) and adds it as a block.  Refuses what is not a
   regular file, larger than UI_ATTACH_MAX, or not text (a NUL byte or
   invalid UTF-8).  Returns the file's size, or -1 with err. */
long long ui_attach_file(ui_attach *at, const char *path, char *err, size_t errcap);
/* Text a message may carry: no NUL byte, well-formed UTF-8. */
bool ui_attach_is_text(const char *s, size_t n);
/* The reading and the checks of ui_attach_file: the file's text (a string
   of *len bytes, malloc'd), or NULL with err. */
char *ui_read_text_file(const char *path, size_t *len, char *err, size_t errcap);
/* Adds TEXT under NAME (stdin's text, say). 0, or -1 when out of memory. */
int ui_attach_text(ui_attach *at, const char *name, const char *text, size_t len);
/* The message to send: the blocks, a blank line, then MESSAGE (which may be
   empty).  Clears the pending blocks.  NULL when out of memory. */
char *ui_attach_take(ui_attach *at, const char *message);
void ui_attach_clear(ui_attach *at);

#endif
