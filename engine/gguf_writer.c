/* STUB: the GGUF writer is being written. */
#include "config.h"
#include "gguf.h"
