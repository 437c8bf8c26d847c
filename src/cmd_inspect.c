/* STUB: ember inspect is being written. */
#include "config.h"
#include <stdio.h>
#include "cli.h"
int cmd_inspect(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "ember inspect: not yet\n"); return 1; }
