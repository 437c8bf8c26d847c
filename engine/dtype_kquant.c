/* STUB: replaced by the K-quant family (Q2_K..Q6_K, Q8_K). */
#include "config.h"
#include "dtype.h"
int ember_dequantize_row_kquant(int type, const void *src, float *dst, int64_t n) { (void)type; (void)src; (void)dst; (void)n; return -1; }
int ember_quantize_row_kquant(int type, const float *src, void *dst, int64_t n) { (void)type; (void)src; (void)dst; (void)n; return -1; }
