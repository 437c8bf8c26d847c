/* STUB */
#include "config.h"
#include "gguf.h"
gguf_file *gguf_open(const char *path, ember_err *err) { (void)path; ember_seterr(err, "not yet"); return 0; }
