/* STUB: replaced by the simple-block family (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL). */
#include "config.h"
#include "dtype.h"
int ember_dequantize_row_simple(int type, const void *src, float *dst, int64_t n) { (void)type; (void)src; (void)dst; (void)n; return -1; }
int ember_quantize_row_simple(int type, const float *src, void *dst, int64_t n) { (void)type; (void)src; (void)dst; (void)n; return -1; }
