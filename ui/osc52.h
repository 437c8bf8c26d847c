/* Copying to the terminal's clipboard with OSC 52: the bytes travel in
   the terminal stream, so it works over SSH.  Inside tmux the plain
   sequence is sent and tmux takes it when its set-clipboard option is
   on (tmux then keeps a paste buffer and forwards to the outer terminal);
   no DCS passthrough, which would need allow-passthrough as well. */
#ifndef EMBER_UI_OSC52_H
#define EMBER_UI_OSC52_H

#include <stddef.h>

/* Base64 (RFC 4648, with padding) of n bytes into out; returns its
   length, or what it would be when cap is too small (out untouched). */
size_t ui_base64(const void *s, size_t n, char *out, size_t cap);

/* ESC ] 52 ; c ; <base64> BEL for n bytes, NUL-terminated, malloc'd;
   *len gets its length.  NULL when out of memory. */
char *ui_osc52(const void *s, size_t n, size_t *len);

#endif
