/* A small GGUF image with every metadata type and a few tensor dtypes,
   built with the writer, plus a walker that records where each field of a
   valid image lies so tests can corrupt exactly one field.  Shared by
   test_gguf, test_gguf_corrupt and the fuzz corpus generator. */
#ifndef EMBER_GGUF_SAMPLE_H
#define EMBER_GGUF_SAMPLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "gguf.h"

#define SAMPLE_MAX_KV 40
#define SAMPLE_MAX_T 8

/* Offsets of the fields of one metadata pair / tensor info in the image. */
typedef struct {
    size_t key_len, key, type;       /* u64 length, bytes, u32 type */
    size_t val;                      /* scalar value or string length */
    size_t arr_type, arr_n;          /* arrays: u32 element type, u64 count */
    size_t first_str;                /* string arrays: first element's length */
    int vtype, atype;
} sample_kv_pos;

typedef struct {
    size_t name_len, name, n_dims, ne, type, offset;
} sample_t_pos;

typedef struct {
    size_t n_tensors, n_kv;          /* header count fields */
    int nkv, nt;
    sample_kv_pos kv[SAMPLE_MAX_KV];
    sample_t_pos t[SAMPLE_MAX_T];
    size_t header_end;               /* end of the tensor infos */
    size_t data;                     /* start of the data section */
    size_t tensors_end;              /* end of the last tensor's bytes */
} sample_layout;

static inline uint64_t sample_rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline void sample_wr(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Walks a VALID image (no checks beyond what the test images need). */
static inline void sample_walk(const uint8_t *b, size_t size, sample_layout *L)
{
    static const int sz[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    memset(L, 0, sizeof *L);
    size_t p = 8;
    L->n_tensors = p;
    uint64_t nt = sample_rd(b + p, 8);
    p += 8;
    L->n_kv = p;
    uint64_t nkv = sample_rd(b + p, 8);
    p += 8;
    uint64_t align = 32;
    for (uint64_t i = 0; i < nkv && i < SAMPLE_MAX_KV; i++) {
        sample_kv_pos *k = &L->kv[L->nkv++];
        k->key_len = p;
        uint64_t kl = sample_rd(b + p, 8);
        k->key = p + 8;
        p += 8 + kl;
        k->type = p;
        k->vtype = (int)sample_rd(b + p, 4);
        p += 4;
        k->val = p;
        if (k->vtype == GGUF_T_STRING) {
            p += 8 + sample_rd(b + p, 8);
        } else if (k->vtype == GGUF_T_ARRAY) {
            k->arr_type = p;
            k->atype = (int)sample_rd(b + p, 4);
            k->arr_n = p + 4;
            uint64_t n = sample_rd(b + p + 4, 8);
            p += 12;
            k->first_str = p;
            for (uint64_t e = 0; e < n; e++)
                p += k->atype == GGUF_T_STRING ? 8 + sample_rd(b + p, 8) : (size_t)sz[k->atype];
        } else {
            if (kl == 17 && !memcmp(b + k->key, "general.alignment", 17)) align = sample_rd(b + p, 4);
            p += (size_t)sz[k->vtype];
        }
    }
    uint64_t end = 0;
    for (uint64_t i = 0; i < nt && i < SAMPLE_MAX_T; i++) {
        sample_t_pos *t = &L->t[L->nt++];
        t->name_len = p;
        t->name = p + 8;
        p += 8 + sample_rd(b + p, 8);
        t->n_dims = p;
        uint32_t nd = (uint32_t)sample_rd(b + p, 4);
        p += 4;
        t->ne = p;
        uint64_t nel = 1;
        for (uint32_t d = 0; d < nd; d++) nel *= sample_rd(b + p + 8 * d, 8);
        p += 8 * nd;
        t->type = p;
        int type = (int)sample_rd(b + p, 4);
        p += 4;
        t->offset = p;
        uint64_t off = sample_rd(b + p, 8);
        p += 8;
        const ember_dtype_info *di = ember_dtype_get(type);
        uint64_t nb = di ? nel / (uint64_t)di->block_elems * (uint64_t)di->block_bytes : 0;
        if (off + nb > end) end = off + nb;
    }
    L->header_end = p;
    L->data = (p + align - 1) / align * align;
    L->tensors_end = nt ? L->data + end : p;
    (void)size;
}

/* Tensor names all have the same length so one can be renamed onto another. */
static inline gguf_writer *sample_writer(uint32_t alignment)
{
    gguf_writer *w = gguf_writer_new();
    uint8_t u8 = 200; int8_t i8 = -100; uint16_t u16 = 60000; int16_t i16 = -30000;
    uint32_t u32 = 4000000000u; int32_t i32 = -2000000000; uint64_t u64 = 0xfedcba9876543210ull;
    int64_t i64 = INT64_MIN + 1; float f32 = 1.5f; double f64 = -2.25e-300; bool bo = true;
    gguf_w_str(w, "general.architecture", "llama");
    if (alignment) gguf_w_u32(w, "general.alignment", alignment);
    gguf_w_scalar(w, "test.u8", GGUF_T_U8, &u8);
    gguf_w_scalar(w, "test.i8", GGUF_T_I8, &i8);
    gguf_w_scalar(w, "test.u16", GGUF_T_U16, &u16);
    gguf_w_scalar(w, "test.i16", GGUF_T_I16, &i16);
    gguf_w_scalar(w, "test.u32", GGUF_T_U32, &u32);
    gguf_w_scalar(w, "test.i32", GGUF_T_I32, &i32);
    gguf_w_scalar(w, "test.u64", GGUF_T_U64, &u64);
    gguf_w_scalar(w, "test.i64", GGUF_T_I64, &i64);
    gguf_w_scalar(w, "test.f32", GGUF_T_F32, &f32);
    gguf_w_scalar(w, "test.f64", GGUF_T_F64, &f64);
    gguf_w_scalar(w, "test.bool", GGUF_T_BOOL, &bo);
    gguf_w_str(w, "test.str", "h\xc3\xa9llo");
    static const uint8_t au8[] = {0, 1, 255};
    static const int8_t ai8[] = {-128, 0, 127};
    static const uint16_t au16[] = {0, 1, 65535};
    static const int16_t ai16[] = {-32768, 0, 32767};
    static const uint32_t au32[] = {0, 1, 4294967295u};
    static const int32_t ai32[] = {INT32_MIN, 0, INT32_MAX};
    static const uint64_t au64[] = {0, 1, UINT64_MAX};
    static const int64_t ai64[] = {INT64_MIN, 0, INT64_MAX};
    static const float af32[] = {-1.0f, 0.0f, 3.25f};
    static const double af64[] = {-1e300, 0.0, 0.1};
    static const bool abo[] = {true, false, true};
    static const char *const astr[] = {"a", "", "\xce\xb2\xce\xb3"};
    gguf_w_arr(w, "arr.u8", GGUF_T_U8, au8, 3);
    gguf_w_arr(w, "arr.i8", GGUF_T_I8, ai8, 3);
    gguf_w_arr(w, "arr.u16", GGUF_T_U16, au16, 3);
    gguf_w_arr(w, "arr.i16", GGUF_T_I16, ai16, 3);
    gguf_w_arr(w, "arr.u32", GGUF_T_U32, au32, 3);
    gguf_w_arr(w, "arr.i32", GGUF_T_I32, ai32, 3);
    gguf_w_arr(w, "arr.u64", GGUF_T_U64, au64, 3);
    gguf_w_arr(w, "arr.i64", GGUF_T_I64, ai64, 3);
    gguf_w_arr(w, "arr.f32", GGUF_T_F32, af32, 3);
    gguf_w_arr(w, "arr.f64", GGUF_T_F64, af64, 3);
    gguf_w_arr(w, "arr.bool", GGUF_T_BOOL, abo, 3);
    gguf_w_arr_str(w, "arr.str", astr, 3);
    gguf_w_arr(w, "arr.empty", GGUF_T_U32, au32, 0);

    /* tensor bytes: a recognisable pattern (the reader does not interpret them) */
    uint8_t data[2 * 144];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 1);
    int64_t ne_f32[1] = {8}, ne_q8[2] = {32, 2}, ne_f16[4] = {2, 2, 2, 2}, ne_q4k[2] = {256, 2};
    gguf_w_tensor(w, "w.f32", EMBER_F32, 1, ne_f32, data, 32);
    gguf_w_tensor(w, "w.q80", EMBER_Q8_0, 2, ne_q8, data, 68);
    gguf_w_tensor(w, "w.f16", EMBER_F16, 4, ne_f16, data, 32);
    gguf_w_tensor(w, "w.q4k", EMBER_Q4_K, 2, ne_q4k, data, 288);
    return w;
}

/* The serialised sample (malloc'd), or NULL. */
static inline uint8_t *sample_image(uint32_t alignment, size_t *size)
{
    gguf_writer *w = sample_writer(alignment);
    uint8_t *img = NULL;
    ember_err err;
    if (!w || gguf_writer_to_mem(w, &img, size, &err)) img = NULL;
    gguf_writer_free(w);
    return img;
}

/* Touches everything a parsed file points at, so ASan sees any pointer
   that escapes the image. Returns a checksum to keep the reads alive. */
static inline uint64_t sample_touch(const gguf_file *f)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < f->n_kv; i++) {
        const gguf_kv *kv = &f->kv[i];
        for (uint64_t j = 0; j < kv->key.len; j++) sum += (uint8_t)kv->key.ptr[j];
        if (kv->type == GGUF_T_STRING)
            for (uint64_t j = 0; j < kv->v.s.len; j++) sum += (uint8_t)kv->v.s.ptr[j];
        if (kv->type == GGUF_T_ARRAY)
            for (uint64_t j = 0; j < kv->arr_n; j++) {
                gguf_str s;
                int64_t iv;
                double dv;
                if (gguf_arr_str(kv, j, &s)) {
                    if (s.len) sum += (uint8_t)s.ptr[0] + (uint8_t)s.ptr[s.len - 1];
                } else if (gguf_arr_i64(kv, j, &iv)) {
                    sum += (uint64_t)iv;
                } else if (gguf_arr_f64(kv, j, &dv)) {
                    sum += (uint64_t)(dv != 0);
                }
            }
    }
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        sum += strlen(t->name_z);
        if (t->nbytes) sum += t->data[0] + t->data[t->nbytes - 1];
    }
    return sum;
}

#endif
