/* STUB: replaced by the simple-format kernels. */
#include "config.h"
#include "kernels.h"
const ember_kernel *ember_kernels_simple(int wtype, ember_isa isa) { (void)wtype; (void)isa; return NULL; }
