/* Saved conversations: one JSON file per conversation under
   $XDG_STATE_HOME/ember/chats/ID.json, rewritten safely after every turn,
   listed and reopened by `ember chats`, `ember -c`, `--resume`, /load.

   The ID is the creation time in UTC (to the millisecond) plus a random
   suffix, so names sort in creation order and two programs starting in the
   same millisecond still pick different files.  The storage is here alone,
   so the subcommand and the chat UI read and write the same format.

   One conversation, one writer: a process that opens a conversation (or
   saves a new one) holds its lock (chatlog_lock.c) until it puts it
   away, so that two Embers never write the same file and the turns of
   one vanish under the other's.  Opening a conversation another process
   holds gives a copy of it under a new id ("forked"), said through the
   warn callback; removing one is refused. */
#ifndef EMBER_CHATLOG_H
#define EMBER_CHATLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ember.h"

/* The format written; a file with a larger "version" is from a newer
   Ember and is skipped rather than misread. */
#define CHATLOG_VERSION 1
#define CHATLOG_ID_MAX 40
/* The largest file read or written: a listing reads every file whole (a
   200 MB one took 6 s and 400 MB of memory on each `ember chats`, each
   /load Tab), and no model's context holds a fraction of it.  Ember
   refuses to write what it would not read back. */
#define CHATLOG_MAX_BYTES (64u << 20)

typedef struct chatlog_lock chatlog_lock;

/* What one reply cost (the assistant message's "stats"). */
typedef struct chatlog_stats {
    bool set;
    int prompt_tokens, generated_tokens;
    double ttft_ms, decode_tps;
} chatlog_stats;

typedef struct chatlog_msg {
    char *role, *content;          /* "user" or "assistant" */
    bool cancelled;                /* a reply stopped part way */
    chatlog_stats stats;           /* assistant messages */
} chatlog_msg;

typedef struct chatlog {
    char id[CHATLOG_ID_MAX];
    int64_t created, updated;      /* Unix seconds */
    char *model, *profile, *tmpl, *system;   /* NULL when unknown / none */
    chatlog_msg *msgs;
    size_t n, cap;
    /* copied from this id because another process had it open ("" none) */
    char forked_from[CHATLOG_ID_MAX];
    chatlog_lock *lock;            /* held by this struct; NULL: not yet */
} chatlog;

/* A fresh conversation with a new id, created now. */
void chatlog_init(chatlog *c);
void chatlog_free(chatlog *c);
/* Empties the messages (the metadata stays). */
void chatlog_clear_msgs(chatlog *c);
/* Sets one of the string fields (a copy; NULL or "" clears it). */
void chatlog_set(char **field, const char *value);
/* Appends a message (copied); st may be NULL.  0 or -1 (out of memory). */
int chatlog_add(chatlog *c, const char *role, const char *content, bool cancelled,
                const chatlog_stats *st);
/* Assistant messages: the turns shown in lists. */
int chatlog_turns(const chatlog *c);

/* Writes a new sortable id (see above) into id[CHATLOG_ID_MAX]. */
void chatlog_new_id(char *id);
/* Whether s has the shape of an id (also guards paths built from one). */
bool chatlog_id_valid(const char *s);

/* The directory ($XDG_STATE_HOME/ember/chats, made 0700 with create).
   0, or -1 with err. */
int chatlog_dir(char *buf, size_t cap, bool create, ember_err *err);

/* The conversation as JSON text (what the file holds), to f; 0 or -1. */
int chatlog_write(const chatlog *c, FILE *f);
/* Saves to path with the safe writer, mode 0600; 0, or -1 with err. */
int chatlog_save_to(const chatlog *c, const char *path, ember_err *err);
/* Saves to the directory as ID.json, stamping updated, taking the lock
   first when c does not hold it yet (a new conversation); 0 or -1 with err.
   Should another process hold it (c was opened while the lock could not
   be taken, a read-only directory since made writable), c becomes a fork
   under a new id: callers compare c->id before and after to say so. */
int chatlog_save(chatlog *c, ember_err *err);

/* Reads a file.  A corrupt file, one of a newer version, one too large,
   anything but a regular file (a directory, a FIFO: never waited on) is
   -1 with err saying which; *c is then empty (chatlog_free is still safe). */
int chatlog_load(const char *path, chatlog *c, ember_err *err);
/* Parses JSON text (the same checks). */
int chatlog_parse(const char *text, size_t n, chatlog *c, ember_err *err);

/* One saved conversation as lists show it. */
typedef struct chatlog_entry {
    char id[CHATLOG_ID_MAX];
    int64_t created, updated;
    char model[256];
    char first[128];               /* first line of the first user message */
    int turns;
    long open_pid;                 /* the process that has it open, 0: none (chatlog_lock_holder) */
} chatlog_entry;

/* Called for each file that is skipped (corrupt, newer version). */
typedef void (*chatlog_warn_fn)(void *ud, const char *msg);
/* A chatlog_warn_fn that keeps the notes for later, one a line, in the
   malloc'd string *(char **)ud (NULL to start; the caller frees it): the
   chat shows them once it has reopened, which clears the screen. */
void chatlog_warn_collect(void *ud, const char *msg);

/* Every readable conversation, oldest first by id; *out malloc'd.  Count,
   or -1 with err (no directory is 0 conversations, not an error). */
int chatlog_list(chatlog_entry **out, chatlog_warn_fn warn, void *ud, ember_err *err);
/* Resolves an id or a unique prefix of one (NULL or "": the conversation
   updated last) to its id.  0, or -1 with err (none, ambiguous). */
int chatlog_find(const char *prefix, char *id, chatlog_warn_fn warn, void *ud, ember_err *err);
/* Loads the conversation with this id (or unique prefix, NULL: the last)
   and takes its lock.  When another process holds it, *c is a copy under
   a new id (forked_from set, nothing written yet) and warn says so; when
   the lock cannot be taken at all (a read-only directory), c is loaded
   without it and chatlog_save tries again. */
int chatlog_open(const char *prefix, chatlog *c, chatlog_warn_fn warn, void *ud, ember_err *err);
/* Deletes the file of id (exact or a unique prefix); its id in removed.
   Refused while another process has the conversation open. */
int chatlog_remove(const char *prefix, char *removed, ember_err *err);

/* What /chats shows: a heading, then the `last` newest conversations one
   a line (date, model, turns, first line; `current` marked with *), or a
   line saying there are none.  malloc'd; NULL with err. */
char *chatlog_list_text(const char *current, int last, chatlog_warn_fn warn, void *ud, ember_err *err);

/* The lock of conversation id (see the top).  0: taken, *out to pass to
   chatlog_lock_drop (a conversation this process holds already is shared,
   counted); 1: another process holds it (its pid in *holder, 0 when
   unknown; holder may be NULL); -1 with err (the directory read-only...). */
int chatlog_lock_take(const char *id, chatlog_lock **out, long *holder, ember_err *err);
void chatlog_lock_drop(chatlog_lock *l);
/* The kernel's table of flock holders (/proc/locks), read once for a
   list of conversations; NULL when it cannot be read. */
typedef struct chatlog_locks chatlog_locks;
chatlog_locks *chatlog_locks_read(void);
void chatlog_locks_free(chatlog_locks *t);
/* The pid of the process that has conversation id open (this process's
   own when it holds it), 0 when none or unknown.  From the table, never
   by taking the lock: a probe's moment of holding it would send a process
   opening the conversation just then into a copy. */
long chatlog_lock_holder(const chatlog_locks *t, const char *id);
/* Tidies after a crashed process given a directory entry's name: a stale
   .ID.lock or an ID.json.tmp.* whose conversation nobody holds is removed;
   anything else is left alone. */
void chatlog_lock_sweep(const char *name);

/* "2026-12-03 16:15" in local time, for lists. */
void chatlog_fmt_time(int64_t t, char *buf, size_t cap);

#endif
