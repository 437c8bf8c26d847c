/* STUB: replaced by the K-quant kernels. */
#include "config.h"
#include "kernels.h"
const ember_kernel *ember_kernels_kquant(int wtype, ember_isa isa) { (void)wtype; (void)isa; return NULL; }
