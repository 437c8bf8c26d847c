/* Matrix kernels per weight format and ISA, chosen once at start by cpuid.
 *
 * All weight kernels share one shape:
 *   y[t * y_stride + r] = dot(W row r, activation t)  for r in [r0, r1), t in [0, nt)
 * W rows are `row_bytes` apart, each holding k elements in the weight dtype.
 * Activations are quantized once per operation into the kernel's act_type
 * (Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL, Q8_1 for Q4_1/Q5_1, Q8_K for the
 * K-quants Q2_K..Q6_K, IQ4_XS and the grid formats IQ1_S..IQ3_S, F32 for
 * float formats) by quantize_act; activation t
 * starts at xq + t * xq_stride bytes.
 *
 * Numerics: integer formats compute each block's (or sub-block's) integer
 * dots exactly in int32 and fold them into f32 with fmaf() in block order.
 * They follow the reference x86 build's 8-lane order (lane g: inputs
 * 4g..4g+3 of every 32, its own f32 sum, ember_sum8 at the end), with its
 * per-format extras: Q4_1/Q5_1 add the blocks' m_w * s_x in one more f32
 * sum, IQ4_NL sums even and odd blocks in two lane sets for one token
 * (kernels_simple.c),
 * kernels_kquant_impl.h has the K-quant details.  So their results match
 * the reference's x86 vec_dot kernels bit for bit (Q4_0 not where the
 * reference repacks it into 8-row interleaved tiles).  SIMD variants keep
 * the scalar oracle's order, so they are bit-identical to it (and packed ==
 * compressed for Q8_0).
 */
#ifndef EMBER_KERNELS_H
#define EMBER_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum { EMBER_ISA_SCALAR = 0, EMBER_ISA_AVX2 = 1, EMBER_ISA_AVX512 = 2 } ember_isa;

/* Highest ISA this CPU (and build) supports; EMBER_ISA=scalar|avx2|avx512 in
   the environment lowers it (tests use that to compare paths). */
ember_isa ember_cpu_isa(void);
const char *ember_isa_name(ember_isa isa);
/* True when the CPU has AVX-512 F/BW/VL and VNNI (packed Q8_0 needs it). */
int ember_cpu_has_vnni512(void);

/* The reference's horizontal sum of 8 lanes: ((a0+a4)+(a2+a6))+((a1+a5)+(a3+a7)). */
static inline float ember_sum8(const float a[8])
{
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* The lane of a block's element e in that order: its place among the 4
   elements of each 8th of every 32. */
#define EMBER_LANE(e) (((e) % 32) / 4)

/* 4 bytes as one int32 (an activation dword for a broadcast, a block's
   packed index word), in the machine's byte order. */
static inline int32_t ember_rd32(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}
/* 8 bytes as one uint64 (64 sign bits read as a mask) */
static inline uint64_t ember_rd64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

typedef void (*ember_quantize_act_fn)(const float *x, void *xq, int64_t k);
typedef void (*ember_matmul_fn)(const void *w, size_t row_bytes, int64_t k,
                                int r0, int r1,
                                const void *xq, size_t xq_stride, int nt,
                                float *y, size_t y_stride);

/* A packed layout: the source rows re-laid into tiles of tile_rows rows,
   one record of record_bytes per block of the source dtype, so that a
   kernel streams a tile's rows together.  Its kernels read a tile where a
   row kernel reads a row: row_bytes is then the tile's size,
   bytes(tile_rows, k), and r0 need not be a multiple of tile_rows. */
typedef struct ember_layout {
    const char *name;        /* e.g. "q8_0x16" */
    /* bumped whenever the bytes pack() writes change: the pack cache
       (packcache.c) keys its files on name and version, so a file of an
       older layout is never read as this one */
    int version;
    int src_type;            /* the dtype whose rows it packs */
    int tile_rows;
    size_t record_bytes;     /* one tile's share of one source block */
    /* bytes of a whole rows x k matrix (rows rounded up to tile_rows) */
    size_t (*bytes)(int rows, int64_t k);
    /* tiles [t0, t1) of the rows (row_bytes apart) into dst; may need the
       ISA of the kernel whose entry names the layout */
    void (*pack)(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
} ember_layout;

typedef struct {
    const char *name;        /* e.g. "q8_0_avx512vnni" */
    ember_isa isa;
    int wtype;               /* weight dtype (a packed layout's source dtype) */
    int act_type;            /* EMBER_Q8_0, EMBER_Q8_1, EMBER_Q8_K or EMBER_F32 */
    ember_quantize_act_fn quantize_act;
    ember_matmul_fn matmul;  /* handles any nt >= 1 (GEMV when nt == 1) */
    const ember_layout *layout;   /* NULL: the file's rows; else the tiles it reads */
} ember_kernel;

/* The entry of table t (n entries) for this weight dtype at exactly this
   ISA, or NULL: how each family's registration table is searched. */
static inline const ember_kernel *ember_kernel_in(const ember_kernel *t, size_t n, int wtype, ember_isa isa)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].wtype == wtype && t[i].isa == isa) return &t[i];
    return NULL;
}
#define EMBER_KERNEL_IN(table, wtype, isa) ember_kernel_in(table, sizeof table / sizeof table[0], wtype, isa)

/* Best kernel for this weight dtype at or below `isa`; NULL if the dtype has
   no native kernel (the plan then falls back to eager). */
const ember_kernel *ember_kernel_find(int wtype, ember_isa isa);
/* Bytes of one quantized activation row of k elements in act_type. */
size_t ember_act_bytes(int act_type, int64_t k);

/* The packed Q8_0 kernel's activations (kernels_packed.c): each block of a
   Q8_0 row as its scale widened to f32 and its 32 codes + 128 (x ^ 0x80,
   unsigned), so that the prefill reads them as they are, once quantized
   for all threads, instead of each kernel call reworking its tokens' rows. */
#define EMBER_ACT_Q8_0U 100
/* BF16 matrices' activations: f32 rows whose values are rounded to bf16
   (the reference's vec-dot type for BF16; F16 and F32 matrices read f32
   rows as they are: EMBER_F32) */
#define EMBER_ACT_BF16R 101
typedef struct {
    float d;                   /* the Q8_0 block's fp16 d, widened */
    uint8_t xu[32];
} ember_block_q8_0u;           /* 36 */
/* A Q8_0 row of k elements (block_q8_0) in that form (tests; the kernel's
   quantize_act makes it from floats). */
void ember_q8_0u_from_q8_0(const void *q8, void *out, int64_t k);

/* The kernel for a weight matrix of `rows` rows: ember_kernel_find's,
   except where the reference would repack the matrix into 8-row tiles and
   so sum in another order (Q4_0 with rows % 8 == 0, not also an embedding
   table, which the reference keeps unpacked for its row lookups). */
const ember_kernel *ember_kernel_for_matrix(int wtype, ember_isa isa, int64_t rows, int embedding);

/* Per-family registration (kernels_simple*.c, kernels_kquant*.c,
   kernels_packed.c). Each returns its kernel for (wtype, exact isa) or NULL. */
const ember_kernel *ember_kernels_simple(int wtype, ember_isa isa);
const ember_kernel *ember_kernels_kquant(int wtype, ember_isa isa);
/* The grid formats IQ1_S ... IQ3_S (kernels_iq.c). */
const ember_kernel *ember_kernels_iq(int wtype, ember_isa isa);
const ember_kernel *ember_kernels_packed(int src_type, ember_isa isa);
/* The 8-row tile order variants (ember_kernel_for_matrix). */
const ember_kernel *ember_kernels_simple_tiled(int wtype, ember_isa isa);

/* The packed kernel for weights of dtype src_type at or below `isa`, or
   NULL when none runs here (kernels_packed.c: Q8_0 in 16-row tiles needs
   AVX-512 VNNI). */
const ember_kernel *ember_kernel_packed(int src_type, ember_isa isa);
/* The packed kernel for one matrix: ember_kernel_packed's where its
   numerics are those of the compressed kernel the matrix runs
   (ember_kernel_for_matrix), else NULL.  A layout reproduces one order: for
   a dtype with an 8-row tile order (Q4_0), that order, so a matrix that
   runs the plain order (rows % 8 != 0, an embedding table) is not packed. */
const ember_kernel *ember_kernel_packed_for_matrix(int src_type, ember_isa isa, int64_t rows, int embedding);
/* The AVX2 kernel of the Q8_0 tiles (kernels_packed_avx2.c), an ember_matmul_fn over tiles. */
void ember_packed_matmul_avx2(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                              const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
/* True when some CPU has a packed kernel for src_type (the plan says why
   a tensor is not packed). */
int ember_layout_exists(int src_type);

/* ---- packed Q8_0: 16-row tiles (doc/DESIGN.md, "Packed Q8_0 layout") ------- */

#define EMBER_PACK_ROWS 16
#define EMBER_PACK_RECORD 544
#define EMBER_PACK_Q8_0X16_VERSION 1

/* Bytes of the packed form of a rows x k Q8_0 matrix (rows rounded up to 16). */
size_t ember_pack_q8_0_bytes(int rows, int64_t k);
/* Packs tiles [t0, t1) of a Q8_0 matrix (row stride row_bytes) into dst,
   byte by byte: the oracle the packer of the kernel's entry
   (ember_kernel_packed(EMBER_Q8_0, ..)->layout->pack) is tested against. */
void ember_pack_q8_0_ref(const void *src, size_t row_bytes, int rows, int64_t k,
                         void *dst, int t0, int t1);
/* Q5_0 rows packed as the same q8_0x16 tiles (each code q - 16 as int8):
   the packer of the Q5_0 layout, which shares the Q8_0 tile kernels */
void ember_pack_q5_0_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle of the packed kernel (an ember_matmul_fn over tiles
   tile_bytes apart), for tests on any CPU; bit-identical to the compressed
   Q8_0 kernel. */
void ember_packed_matmul_ref(const void *packed, size_t tile_bytes, int64_t k,
                             int r0, int r1,
                             const void *xq, size_t xq_stride, int nt,
                             float *y, size_t y_stride);

/* ---- packed Q4_K, Q5_K and IQ4_XS: 16-row tiles (kernels_packed_q45_K.c) -- */

#define EMBER_PACK_Q4_K_RECORD 2368
#define EMBER_PACK_Q4_KX16_VERSION 1
#define EMBER_PACK_Q5_K_RECORD 2880
#define EMBER_PACK_Q5_KX16_VERSION 1
#define EMBER_PACK_IQ4_XS_RECORD 2208
#define EMBER_PACK_IQ4_XSX16_VERSION 1

size_t ember_pack_iq4_xs_bytes(int rows, int64_t k);
void ember_pack_iq4_xs_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle over the tiles; bit-identical to the compressed IQ4_XS kernels. */
void ember_packed_iq4_xs_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                    const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
extern const ember_layout ember_layout_iq4_xsx16;
void ember_packed_iq4_xs_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                       const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

size_t ember_pack_q5_K_bytes(int rows, int64_t k);
void ember_pack_q5_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
void ember_packed_q5_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
extern const ember_layout ember_layout_q5_Kx16;
void ember_packed_q5_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                     const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

size_t ember_pack_q4_K_bytes(int rows, int64_t k);
/* The byte-by-byte packer the layout's packer is tested against. */
void ember_pack_q4_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle over the tiles; bit-identical to the compressed Q4_K kernels. */
void ember_packed_q4_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
/* The layout and its AVX-512 kernel, registered in kernels_packed.c's table. */
extern const ember_layout ember_layout_q4_Kx16;
void ember_packed_q4_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                     const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
void ember_packed_q4_K_matmul_avx2(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                   const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

/* ---- packed Q4_0: 16-row tiles (kernels_packed_q4_0.c) -------------------- */

#define EMBER_PACK_Q4_0_RECORD 288    /* the 16 rows' 18-byte blocks */
#define EMBER_PACK_Q4_0X16_VERSION 1

size_t ember_pack_q4_0_bytes(int rows, int64_t k);
/* The nibble-by-nibble packer the layout's packer is tested against. */
void ember_pack_q4_0_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle over the tiles; bit-identical to the compressed Q4_0
   kernels of the 8-row tile order (ember_kernels_simple_tiled). */
void ember_packed_q4_0_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
/* The layout and its AVX-512 kernel, registered in kernels_packed.c's table. */
extern const ember_layout ember_layout_q4_0x16;
void ember_packed_q4_0_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                     const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

/* ---- packed MXFP4: Q4_0's 16-row tiles with exponent bytes (kernels_packed_q4_0.c) */

#define EMBER_PACK_MXFP4_RECORD 272   /* the 16 rows' 17-byte blocks */
#define EMBER_PACK_MXFP4X16_VERSION 1

size_t ember_pack_mxfp4_bytes(int rows, int64_t k);
void ember_pack_mxfp4_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle over the tiles; bit-identical to the compressed MXFP4 kernels. */
void ember_packed_mxfp4_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                   const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
extern const ember_layout ember_layout_mxfp4x16;
void ember_packed_mxfp4_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                      const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

/* ---- packed Q6_K: 16-row tiles (kernels_packed_q6_K.c) -------------------- */

#define EMBER_PACK_Q6_K_RECORD 3392   /* 16 rows x 210 bytes + 32 to a cache line */
#define EMBER_PACK_Q6_KX16_VERSION 1

size_t ember_pack_q6_K_bytes(int rows, int64_t k);
/* The element-by-element packer the layout's packer is tested against. */
void ember_pack_q6_K_ref(const void *src, size_t row_bytes, int rows, int64_t k, void *dst, int t0, int t1);
/* The scalar oracle over the tiles; bit-identical to the compressed Q6_K kernels. */
void ember_packed_q6_K_matmul_ref(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                  const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);
/* The layout and its AVX-512 kernel, registered in kernels_packed.c's table. */
extern const ember_layout ember_layout_q6_Kx16;
void ember_packed_q6_K_matmul_avx512(const void *packed, size_t tile_bytes, int64_t k, int r0, int r1,
                                     const void *xq, size_t xq_stride, int nt, float *y, size_t y_stride);

#endif
