/* The KV cache's row formats (ember.h, ember_kv_type): how a row of
   head_dim values is stored, and read back as fp16 for attention. */
#ifndef EMBER_KV_H
#define EMBER_KV_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Bytes of one stored row of hd values (hd % 32 == 0 for q8_0). */
size_t ember_kv_row_bytes(ember_kv_type t, int hd);
/* Stores src (hd floats) as one row of type t at dst. */
void ember_kv_store(ember_kv_type t, void *dst, const float *src, int hd);
/* nrows q8_0 rows of hd (row_bytes apart) as fp16, hd per row, into dst. */
void ember_kv_q8_to_f16(uint16_t *dst, const uint8_t *src, int nrows, int hd);
/* The layout session.c allocates and forward.c reads (session.h): the
   ring of the sliding layers for an n_ctx-token context (0: none), and
   layer l's rows per KV head under it. */
int ember_kv_ring(const ember_model *m, int n_ctx);
int ember_kv_cap(const ember_model *m, int l, int ring, int n_ctx);

#endif
