/* Where Ember keeps per-user files, per the XDG Base Directory
   specification: $XDG_CONFIG_HOME (profiles), $XDG_CACHE_HOME (the demo
   model), $XDG_STATE_HOME (the input history), each defaulting under $HOME.
   A relative value is ignored, as the specification says: it would make
   the file depend on the current directory. */
#ifndef EMBER_XDG_H
#define EMBER_XDG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { EMBER_XDG_CONFIG, EMBER_XDG_CACHE, EMBER_XDG_STATE } ember_xdg;

/* Writes "<base>/ember/<name>" (name NULL or "": "<base>/ember") to buf;
   with create, makes "<base>/ember" and its parents (mode 0700).  0, or -1
   when there is no base (neither an absolute variable nor $HOME), the path
   does not fit or the directory cannot be made. */
int ember_xdg_path(ember_xdg kind, const char *name, bool create, char *buf, size_t cap);

/* Ember's own per-user files and directories.  Their names live in one
   table (xdg.c) so that ember(1)'s FILES section can be checked against
   it (tests/man_help.sh reads the table). */
typedef enum { EMBER_PLACE_PROFILES, EMBER_PLACE_DEMO, EMBER_PLACE_CHATS, EMBER_PLACE_HISTORY, EMBER_PLACE_PACKED } ember_place;

/* ember_xdg_path for file f of the table. */
int ember_place_path(ember_place f, bool create, char *buf, size_t cap);

#endif
