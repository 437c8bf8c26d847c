/* Private to the packed Q4_K / Q5_K / IQ4_XS kernels (kernels_packed_q45_K.c, its
   AVX-512 kernels, and kernels_packed_q45_K_avx2.c): the record's byte
   offsets, as kernels_packed_q45_K.c's opening comment lays them out. */
#ifndef EMBER_KERNELS_PACKED_Q4_K_H
#define EMBER_KERNELS_PACKED_Q4_K_H

#include "kernels.h"

#define QS 0       /* 32 chunks of 64 bytes: lanes h and h + 4 of sub-block j at 4j + h */
#define SC 2048    /* scales, sub-block j of row r at 16j + r */
#define MN 2176    /* mins, min 2k + e of row r at 32k + 2r + e */
#define DW 2304    /* fp16 d of row r at 2r */
#define DM 2336    /* fp16 dmin of row r at 2r */
#define ROWS EMBER_PACK_ROWS
#define QH 2368    /* Q5_K: the fifth bits, lane l of sub-block j at bit l of chunk j */
#define REC EMBER_PACK_Q4_K_RECORD
#define REC5 EMBER_PACK_Q5_K_RECORD

/* IQ4_XS (iq4_xsx16): the same qs chunks of code-book indices, then */
#define SCI 2048   /* signed scales (ls - 32), sub-block j of row r at 16j + r */
#define DWI 2176   /* fp16 d of row r at 2r */
#define RECI EMBER_PACK_IQ4_XS_RECORD

_Static_assert(DM + 2 * ROWS == REC, "record size");
_Static_assert(DWI + 2 * ROWS == RECI, "IQ4_XS record size");
_Static_assert(QH + 8 * 64 == REC5, "Q5_K record size");

#endif
