/* STUB: replaced by the packed Q8_0 layout and kernels. */
#include "config.h"
#include "kernels.h"
size_t ember_pack_q8_0_bytes(int rows, int64_t k) { return (size_t)((rows + 15) / 16) * (size_t)(k / 32) * EMBER_PACK_RECORD; }
void ember_pack_q8_0(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1) { (void)src; (void)row_bytes; (void)rows; (void)k; (void)dst; (void)t0; (void)t1; }
ember_packed_matmul_fn ember_packed_matmul_get(void) { return NULL; }
void ember_packed_matmul_ref(const void *packed, int rows, int64_t k, int r0, int r1, const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride) { (void)packed; (void)rows; (void)k; (void)r0; (void)r1; (void)xq; (void)xq_stride; (void)nt; (void)y; (void)y_stride; }
