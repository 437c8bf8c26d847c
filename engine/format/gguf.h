/* GGUF v2/v3 reader (read-only mmap, bounds-checked) and writer. */
#ifndef EMBER_GGUF_H
#define EMBER_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/err.h"

/* Metadata value types, numbered as in the GGUF specification. */
typedef enum {
    GGUF_T_U8 = 0, GGUF_T_I8 = 1, GGUF_T_U16 = 2, GGUF_T_I16 = 3,
    GGUF_T_U32 = 4, GGUF_T_I32 = 5, GGUF_T_F32 = 6, GGUF_T_BOOL = 7,
    GGUF_T_STRING = 8, GGUF_T_ARRAY = 9, GGUF_T_U64 = 10, GGUF_T_I64 = 11,
    GGUF_T_F64 = 12,
    GGUF_T_COUNT
} gguf_type;

/* A string inside the mapped file: not NUL-terminated. */
typedef struct {
    const char *ptr;
    uint64_t len;
} gguf_str;

typedef struct {
    gguf_str key;
    gguf_type type;
    /* Scalars are decoded into `v`; strings point into the map. */
    union {
        uint64_t u;
        int64_t i;
        double f;
        bool b;
        gguf_str s;
    } v;
    /* Arrays: element type, count and a pointer to the first element in
       the map.  Scalar elements are little-endian and tightly packed;
       string arrays are walked with gguf_arr_str(). */
    gguf_type arr_type;
    uint64_t arr_n;
    const uint8_t *arr_data;
    /* String arrays: offsets are computed once at parse time. */
    gguf_str *arr_strs;
} gguf_kv;

#define GGUF_MAX_DIMS 4

typedef struct {
    gguf_str name;
    char *name_z;            /* NUL-terminated copy */
    uint32_t n_dims;
    int64_t ne[GGUF_MAX_DIMS]; /* unused dims are 1 */
    int type;                /* ember_dtype numbering (ggml) */
    uint64_t offset;         /* relative to the data section */
    uint64_t nbytes;
    const uint8_t *data;     /* into the map */
    uint64_t file_offset;    /* absolute offset in the file */
} gguf_tensor;

typedef struct gguf_file {
    char *path;
    int fd;
    const uint8_t *map;
    uint64_t size;
    uint32_t version;
    uint64_t alignment;
    uint64_t data_offset;    /* absolute offset of the data section */
    uint64_t n_kv;
    gguf_kv *kv;
    uint64_t n_tensors;
    gguf_tensor *tensors;
} gguf_file;

/* Opens and validates the whole header; returns NULL and fills err on any
   malformed input. */
gguf_file *gguf_open(const char *path, ember_err *err);
/* Parses an in-memory image (no copy; buf must outlive the result). */
gguf_file *gguf_open_mem(const void *buf, uint64_t size, ember_err *err);
void gguf_close(gguf_file *f);

const gguf_kv *gguf_find(const gguf_file *f, const char *key);
const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name);
const char *gguf_type_name(gguf_type t);

/* Typed getters: return false if the key is missing or of an incompatible
   type (integers of any width convert when the value fits). */
bool gguf_get_u64(const gguf_file *f, const char *key, uint64_t *out);
bool gguf_get_i64(const gguf_file *f, const char *key, int64_t *out);
bool gguf_get_f64(const gguf_file *f, const char *key, double *out);
bool gguf_get_bool(const gguf_file *f, const char *key, bool *out);
/* Returns a freshly malloc'd NUL-terminated copy, or NULL. */
char *gguf_get_strdup(const gguf_file *f, const char *key);
bool gguf_get_str(const gguf_file *f, const char *key, gguf_str *out);
/* Array element access (bounds-checked; false when out of range or of the
   wrong type). */
bool gguf_arr_i64(const gguf_kv *kv, uint64_t i, int64_t *out);
bool gguf_arr_f64(const gguf_kv *kv, uint64_t i, double *out);
bool gguf_arr_str(const gguf_kv *kv, uint64_t i, gguf_str *out);

/* ---- writer ---------------------------------------------------------- */

typedef struct gguf_writer gguf_writer;

gguf_writer *gguf_writer_new(void);
void gguf_writer_free(gguf_writer *w);
void gguf_w_u32(gguf_writer *w, const char *key, uint32_t v);
void gguf_w_i32(gguf_writer *w, const char *key, int32_t v);
void gguf_w_u64(gguf_writer *w, const char *key, uint64_t v);
void gguf_w_f32(gguf_writer *w, const char *key, float v);
void gguf_w_bool(gguf_writer *w, const char *key, bool v);
void gguf_w_str(gguf_writer *w, const char *key, const char *v);
/* Arrays: elements of `type` (scalar), tightly packed little-endian. */
void gguf_w_arr(gguf_writer *w, const char *key, gguf_type type, const void *data, uint64_t n);
void gguf_w_arr_str(gguf_writer *w, const char *key, const char *const *strs, uint64_t n);
/* Copies all metadata from another file (used to graft a real tokenizer). */
void gguf_w_copy_kv(gguf_writer *w, const gguf_kv *kv);
/* Adds a tensor; data (nbytes, already in the dtype's block format) is copied. */
void gguf_w_tensor(gguf_writer *w, const char *name, int dtype, int n_dims,
                   const int64_t *ne, const void *data, uint64_t nbytes);
/* Any scalar type (u8..f64, bool): *v is a value of that C type
   (uint8_t, int16_t, float, double, bool, ...). */
void gguf_w_scalar(gguf_writer *w, const char *key, gguf_type type, const void *v);
/* A tensor whose bytes are produced at save time, so a model larger than
   memory can be streamed to disk: fill() is called with consecutive whole
   rows [row0, row0 + nrows) (a row = ne[0] elements in the dtype's block
   format) and writes them to dst; it returns 0, or -1 after filling err.
   nbytes must equal the tensor's size. */
typedef int (*gguf_fill_fn)(void *ctx, uint64_t row0, uint64_t nrows, void *dst, ember_err *err);
void gguf_w_tensor_cb(gguf_writer *w, const char *name, int dtype, int n_dims,
                      const int64_t *ne, uint64_t nbytes, gguf_fill_fn fill, void *ctx);
/* Writes atomically (tmp + rename).  Errors recorded by the calls above
   (bad dtype or shape, duplicate tensor, out of memory) are reported here. */
int gguf_writer_save(gguf_writer *w, const char *path, ember_err *err);
/* Serialises into a malloc'd buffer (tests and fuzz seeds). */
int gguf_writer_to_mem(gguf_writer *w, uint8_t **buf, size_t *size, ember_err *err);

#endif
