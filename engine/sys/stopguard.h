/* Temporaries a stop signal must not leave behind.  The pack cache is
   written from a thread of its own while the program goes on (and may be
   stopped with Ctrl-C, kill, a closed terminal); while a temporary is
   registered here, SIGINT, SIGTERM and SIGHUP first remove it (unlink is
   async-signal-safe), then do what they did before: the default action
   (the process dies of the signal, as it would have), the program's own
   handler (the full-screen chat's clean exit, which then waits for the
   writer, who sees ember_stop_guard_stopped), or nothing when ignored. */
#ifndef EMBER_STOPGUARD_H
#define EMBER_STOPGUARD_H

#include <stdbool.h>

/* Registers path (copied); a slot for ember_stop_guard_remove, or -1 when
   every slot is taken (the file is then unguarded). */
int ember_stop_guard_add(const char *path);
/* Forgets the slot's path (-1: a no-op); with none left, gives the
   signals back to the handlers they had, unless the program has set its
   own since. */
void ember_stop_guard_remove(int slot);
/* Whether a stop signal came while a path was registered: a writer that
   sees it gives up instead of renaming its file into place. */
bool ember_stop_guard_stopped(void);

#endif
