/* Fatal signals and the mapped model file (faultguard.c). */
#ifndef EMBER_FAULTGUARD_H
#define EMBER_FAULTGUARD_H

#include <stddef.h>

/* Records [p, p + n) as a mapping of a model file: a SIGBUS inside it means
   the file shrank under us (truncated or replaced in place), which the
   guard reports as such instead of a bare "Bus error".  At most a few
   mappings are tracked; extra ones are simply not recognised.  what names
   the file in that message ("pack cache file"; NULL: "model file") and
   must outlive the mapping (a string literal). */
void ember_fault_guard_note_map(const void *p, size_t n, const char *what);
void ember_fault_guard_forget_map(const void *p);

#endif
