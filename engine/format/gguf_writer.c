/* GGUF v3 writer.  Metadata is serialised as it is set (so a copied key does
   not depend on its source file staying open); tensor bytes are either
   copied or produced by a callback at save time, so a multi-gigabyte model
   is never held in memory. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "gguf.h"
#include "safefile.h"

typedef struct {
    char *key;
    uint8_t *val;          /* type tag + value, as in the file */
    size_t len;
} wkv;

typedef struct {
    char *name;
    int dtype, n_dims;
    int64_t ne[GGUF_MAX_DIMS];
    uint64_t nbytes;
    uint8_t *data;         /* owned copy, or NULL with fill */
    gguf_fill_fn fill;
    void *ctx;
} wtensor;

struct gguf_writer {
    wkv *kv;
    size_t n_kv, cap_kv;
    wtensor *t;
    size_t n_t, cap_t;
    ember_err first_err;   /* the first error from a void setter */
    bool failed;
};

/* Rows of a fill callback buffer: big enough to amortise the call, small
   enough to stay out of the way of other memory. */
#define FILL_CHUNK_BYTES (16u << 20)

static const uint8_t scalar_size[GGUF_T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

static void fail(gguf_writer *w, const char *fmt, ...) EMBER_PRINTF(2, 3);
static void fail(gguf_writer *w, const char *fmt, ...)
{
    if (w->failed) return;
    w->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->first_err.msg, sizeof w->first_err.msg, fmt, ap);
    va_end(ap);
}

/* ---- byte buffer ---------------------------------------------------------- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} buf;

static void put(buf *b, const void *src, size_t n)
{
    if (b->oom || n == 0) return;
    if (n > SIZE_MAX - b->len) { b->oom = true; return; }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n) {
            if (cap > SIZE_MAX / 2) { cap = b->len + n; break; }
            cap *= 2;
        }
        uint8_t *np = realloc(b->p, cap);
        if (!np) { b->oom = true; return; }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void put_le(buf *b, uint64_t v, int n)
{
    uint8_t tmp[8];
    for (int i = 0; i < n; i++) tmp[i] = (uint8_t)(v >> (8 * i));
    put(b, tmp, (size_t)n);
}

static void put_str(buf *b, const char *s, uint64_t n)
{
    put_le(b, n, 8);
    put(b, s, (size_t)n);
}

/* ---- metadata --------------------------------------------------------- */

gguf_writer *gguf_writer_new(void)
{
    return calloc(1, sizeof(gguf_writer));
}

void gguf_writer_free(gguf_writer *w)
{
    if (!w) return;
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].val);
    }
    for (size_t i = 0; i < w->n_t; i++) {
        free(w->t[i].name);
        free(w->t[i].data);
    }
    free(w->kv);
    free(w->t);
    free(w);
}

/* Takes ownership of b's bytes; a key set twice keeps its first position
   and its last value (copying a tokenizer, then overriding one key). */
static void set_kv(gguf_writer *w, const char *key, buf *b)
{
    size_t kl = strlen(key);
    if (kl == 0 || kl > 65535) {
        free(b->p);
        fail(w, "metadata key '%.64s': must be 1 to 65535 bytes long", key);
        return;
    }
    if (b->oom) {
        free(b->p);
        fail(w, "out of memory writing key '%s'", key);
        return;
    }
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, key) == 0) {
            free(w->kv[i].val);
            w->kv[i].val = b->p;
            w->kv[i].len = b->len;
            return;
        }
    }
    if (w->n_kv == w->cap_kv) {
        size_t cap = w->cap_kv ? 2 * w->cap_kv : 32;
        wkv *nk = realloc(w->kv, cap * sizeof *nk);
        if (!nk) {
            free(b->p);
            fail(w, "out of memory adding key '%s'", key);
            return;
        }
        w->kv = nk;
        w->cap_kv = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(b->p);
        fail(w, "out of memory adding key '%s'", key);
        return;
    }
    w->kv[w->n_kv++] = (wkv){k, b->p, b->len};
}

static void put_scalar(buf *b, gguf_type type, const void *v)
{
    uint64_t raw = 0;
    switch (type) {
    case GGUF_T_U8: raw = *(const uint8_t *)v; break;
    case GGUF_T_I8: raw = (uint8_t)*(const int8_t *)v; break;
    case GGUF_T_U16: raw = *(const uint16_t *)v; break;
    case GGUF_T_I16: raw = (uint16_t)*(const int16_t *)v; break;
    case GGUF_T_U32: raw = *(const uint32_t *)v; break;
    case GGUF_T_I32: raw = (uint32_t)*(const int32_t *)v; break;
    case GGUF_T_U64: raw = *(const uint64_t *)v; break;
    case GGUF_T_I64: raw = (uint64_t)*(const int64_t *)v; break;
    case GGUF_T_F32: { uint32_t x; memcpy(&x, v, 4); raw = x; break; }
    case GGUF_T_F64: memcpy(&raw, v, 8); break;
    case GGUF_T_BOOL: raw = *(const bool *)v ? 1 : 0; break;
    default: break;
    }
    put_le(b, raw, scalar_size[type]);
}

static bool is_scalar(gguf_type t)
{
    return (unsigned)t < GGUF_T_COUNT && t != GGUF_T_STRING && t != GGUF_T_ARRAY;
}

void gguf_w_scalar(gguf_writer *w, const char *key, gguf_type type, const void *v)
{
    if (!is_scalar(type)) {
        fail(w, "key '%s': %s is not a scalar type", key, gguf_type_name(type));
        return;
    }
    buf b = {0};
    put_le(&b, (uint64_t)type, 4);
    put_scalar(&b, type, v);
    set_kv(w, key, &b);
}

void gguf_w_u32(gguf_writer *w, const char *key, uint32_t v) { gguf_w_scalar(w, key, GGUF_T_U32, &v); }
void gguf_w_i32(gguf_writer *w, const char *key, int32_t v) { gguf_w_scalar(w, key, GGUF_T_I32, &v); }
void gguf_w_u64(gguf_writer *w, const char *key, uint64_t v) { gguf_w_scalar(w, key, GGUF_T_U64, &v); }
void gguf_w_f32(gguf_writer *w, const char *key, float v) { gguf_w_scalar(w, key, GGUF_T_F32, &v); }
void gguf_w_bool(gguf_writer *w, const char *key, bool v) { gguf_w_scalar(w, key, GGUF_T_BOOL, &v); }

void gguf_w_str(gguf_writer *w, const char *key, const char *v)
{
    buf b = {0};
    if (!v) v = "";
    put_le(&b, GGUF_T_STRING, 4);
    put_str(&b, v, strlen(v));
    set_kv(w, key, &b);
}

void gguf_w_arr(gguf_writer *w, const char *key, gguf_type type, const void *data, uint64_t n)
{
    if (!is_scalar(type)) {
        fail(w, "key '%s': arrays of %s are not written by gguf_w_arr", key, gguf_type_name(type));
        return;
    }
    if (n > SIZE_MAX / 8) {
        fail(w, "key '%s': array too large", key);
        return;
    }
    buf b = {0};
    put_le(&b, GGUF_T_ARRAY, 4);
    put_le(&b, (uint64_t)type, 4);
    put_le(&b, n, 8);
    if (type == GGUF_T_BOOL) {      /* normalise to 0/1 bytes */
        for (uint64_t i = 0; i < n; i++) put_le(&b, ((const bool *)data)[i] ? 1 : 0, 1);
    } else {
        /* little-endian host assumed, as everywhere in the engine */
        put(&b, data, (size_t)n * scalar_size[type]);
    }
    set_kv(w, key, &b);
}

void gguf_w_arr_str(gguf_writer *w, const char *key, const char *const *strs, uint64_t n)
{
    buf b = {0};
    put_le(&b, GGUF_T_ARRAY, 4);
    put_le(&b, GGUF_T_STRING, 4);
    put_le(&b, n, 8);
    for (uint64_t i = 0; i < n; i++) {
        const char *e = strs[i] ? strs[i] : "";
        put_str(&b, e, strlen(e));
    }
    set_kv(w, key, &b);
}

void gguf_w_copy_kv(gguf_writer *w, const gguf_kv *kv)
{
    char key[1024];
    size_t kl = kv->key.len < sizeof key - 1 ? (size_t)kv->key.len : sizeof key - 1;
    memcpy(key, kv->key.ptr, kl);
    key[kl] = 0;
    if (kl != kv->key.len || memchr(key, 0, kl)) {
        fail(w, "key '%s...': too long or contains NUL, not copied", key);
        return;
    }
    buf b = {0};
    put_le(&b, (uint64_t)kv->type, 4);
    if (kv->type == GGUF_T_STRING) {
        put_str(&b, kv->v.s.ptr, kv->v.s.len);
    } else if (kv->type == GGUF_T_ARRAY) {
        put_le(&b, (uint64_t)kv->arr_type, 4);
        put_le(&b, kv->arr_n, 8);
        if (kv->arr_type == GGUF_T_STRING) {
            for (uint64_t i = 0; i < kv->arr_n; i++) {
                gguf_str s;
                if (!gguf_arr_str(kv, i, &s)) {
                    free(b.p);
                    fail(w, "key '%s': unreadable string array element", key);
                    return;
                }
                put_str(&b, s.ptr, s.len);
            }
        } else if (is_scalar(kv->arr_type)) {
            if (kv->arr_n > SIZE_MAX / 8) b.oom = true;
            else put(&b, kv->arr_data, (size_t)kv->arr_n * scalar_size[kv->arr_type]);
        } else {
            free(b.p);
            fail(w, "key '%s': arrays of %s cannot be copied", key, gguf_type_name(kv->arr_type));
            return;
        }
    } else if (is_scalar(kv->type)) {
        /* the reader widened the value: narrow it back to its own type */
        union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
                uint64_t u64; int64_t i64; float f32; double f64; bool b; } x;
        switch (kv->type) {
        case GGUF_T_U8: x.u8 = (uint8_t)kv->v.u; break;
        case GGUF_T_I8: x.i8 = (int8_t)kv->v.i; break;
        case GGUF_T_U16: x.u16 = (uint16_t)kv->v.u; break;
        case GGUF_T_I16: x.i16 = (int16_t)kv->v.i; break;
        case GGUF_T_U32: x.u32 = (uint32_t)kv->v.u; break;
        case GGUF_T_I32: x.i32 = (int32_t)kv->v.i; break;
        case GGUF_T_U64: x.u64 = kv->v.u; break;
        case GGUF_T_I64: x.i64 = kv->v.i; break;
        case GGUF_T_F32: x.f32 = (float)kv->v.f; break;
        case GGUF_T_F64: x.f64 = kv->v.f; break;
        default: x.b = kv->v.b; break;
        }
        put_scalar(&b, kv->type, &x);
    } else {
        free(b.p);
        fail(w, "key '%s': unknown value type", key);
        return;
    }
    set_kv(w, key, &b);
}

/* ---- tensors ------------------------------------------------------------ */

static wtensor *add_tensor(gguf_writer *w, const char *name, int dtype, int n_dims,
                           const int64_t *ne, uint64_t nbytes)
{
    if (w->failed) return NULL;
    size_t nl = strlen(name);
    if (nl == 0 || nl > 255) {
        /* readers keep names in fixed buffers (the reference: 64 bytes) */
        fail(w, "tensor '%.64s': name must be 1 to 255 bytes long", name);
        return NULL;
    }
    if (!ember_dtype_get(dtype)) {
        fail(w, "tensor '%s': unknown dtype %d", name, dtype);
        return NULL;
    }
    if (n_dims < 1 || n_dims > GGUF_MAX_DIMS) {
        fail(w, "tensor '%s': %d dimensions (1 to 4 allowed)", name, n_dims);
        return NULL;
    }
    const ember_dtype_info *di = ember_dtype_get(dtype);
    uint64_t nel = 1;
    for (int d = 0; d < n_dims; d++) {
        if (ne[d] <= 0 || (uint64_t)ne[d] > (UINT64_MAX >> 8) / nel) {
            fail(w, "tensor '%s': dimension is zero, negative or too large", name);
            return NULL;
        }
        nel *= (uint64_t)ne[d];
    }
    if (ne[0] % di->block_elems) {
        fail(w, "tensor '%s': ne[0] is not a multiple of the %s block size", name, di->name);
        return NULL;
    }
    if (nel / (uint64_t)di->block_elems * (uint64_t)di->block_bytes != nbytes) {
        fail(w, "tensor '%s': byte count does not match shape and dtype %s", name, di->name);
        return NULL;
    }
    for (size_t i = 0; i < w->n_t; i++) {
        if (strcmp(w->t[i].name, name) == 0) {
            fail(w, "tensor '%s' added twice", name);
            return NULL;
        }
    }
    if (w->n_t == w->cap_t) {
        size_t cap = w->cap_t ? 2 * w->cap_t : 64;
        wtensor *nt = realloc(w->t, cap * sizeof *nt);
        if (!nt) {
            fail(w, "out of memory adding tensor '%s'", name);
            return NULL;
        }
        w->t = nt;
        w->cap_t = cap;
    }
    wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    if (!t->name) {
        fail(w, "out of memory adding tensor '%s'", name);
        return NULL;
    }
    t->dtype = dtype;
    t->n_dims = n_dims;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->nbytes = nbytes;
    w->n_t++;
    return t;
}

void gguf_w_tensor(gguf_writer *w, const char *name, int dtype, int n_dims,
                   const int64_t *ne, const void *data, uint64_t nbytes)
{
    wtensor *t = add_tensor(w, name, dtype, n_dims, ne, nbytes);
    if (!t) return;
    t->data = malloc(nbytes ? (size_t)nbytes : 1);
    if (!t->data || nbytes > SIZE_MAX) {
        fail(w, "out of memory copying tensor '%s'", name);
        return;
    }
    memcpy(t->data, data, (size_t)nbytes);
}

void gguf_w_tensor_cb(gguf_writer *w, const char *name, int dtype, int n_dims,
                      const int64_t *ne, uint64_t nbytes, gguf_fill_fn fill, void *ctx)
{
    wtensor *t = add_tensor(w, name, dtype, n_dims, ne, nbytes);
    if (!t) return;
    t->fill = fill;
    t->ctx = ctx;
}

/* ---- serialisation -------------------------------------------------------- */

static uint64_t get_alignment(const gguf_writer *w, ember_err *err)
{
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, "general.alignment")) continue;
        const uint8_t *v = w->kv[i].val;
        uint32_t type = (uint32_t)v[0] | (uint32_t)v[1] << 8 | (uint32_t)v[2] << 16 | (uint32_t)v[3] << 24;
        uint64_t a = 0;
        if (type == GGUF_T_U32 && w->kv[i].len == 8)
            a = (uint64_t)v[4] | (uint64_t)v[5] << 8 | (uint64_t)v[6] << 16 | (uint64_t)v[7] << 24;
        if (a == 0 || (a & (a - 1)) || a > (1u << 20)) {
            ember_seterr(err, "general.alignment must be a u32 power of two up to 1 MiB");
            return 0;
        }
        return a;
    }
    return 32;
}

static uint64_t pad_to(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

/* Header up to (not including) the alignment padding before the data. */
static int build_header(const gguf_writer *w, uint64_t align, buf *h, ember_err *err)
{
    put(h, "GGUF", 4);
    put_le(h, 3, 4);
    put_le(h, w->n_t, 8);
    put_le(h, w->n_kv, 8);
    for (size_t i = 0; i < w->n_kv; i++) {
        put_str(h, w->kv[i].key, strlen(w->kv[i].key));
        put(h, w->kv[i].val, w->kv[i].len);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        put_str(h, t->name, strlen(t->name));
        put_le(h, (uint64_t)t->n_dims, 4);
        for (int d = 0; d < t->n_dims; d++) put_le(h, (uint64_t)t->ne[d], 8);
        put_le(h, (uint64_t)t->dtype, 4);
        put_le(h, off, 8);
        off = pad_to(off + t->nbytes, align);
    }
    if (h->oom) return ember_seterr(err, "out of memory building the GGUF header");
    return 0;
}

static int write_all(FILE *f, const void *p, size_t n, const char *what, ember_err *err)
{
    if (n && fwrite(p, 1, n, f) != n)
        return ember_seterr(err, "cannot write %s: %s", what, strerror(errno ? errno : EIO));
    return 0;
}

static int write_zeros(FILE *f, uint64_t n, const char *what, ember_err *err)
{
    static const uint8_t z[64];
    while (n) {
        size_t k = n < sizeof z ? (size_t)n : sizeof z;
        if (write_all(f, z, k, what, err)) return -1;
        n -= k;
    }
    return 0;
}

static int write_tensor(FILE *f, const wtensor *t, const char *what, ember_err *err)
{
    if (t->data) return write_all(f, t->data, (size_t)t->nbytes, what, err);
    if (!t->fill) return ember_seterr(err, "tensor '%s' has no data", t->name);
    uint64_t row_bytes = ember_row_bytes(t->dtype, t->ne[0]);
    uint64_t rows = t->nbytes / row_bytes;
    uint64_t per = FILL_CHUNK_BYTES / row_bytes;
    if (per == 0) per = 1;
    if (per > rows) per = rows;
    uint8_t *chunk = malloc((size_t)(per * row_bytes));
    if (!chunk) return ember_seterr(err, "tensor '%s': out of memory for a %llu-byte chunk",
                                    t->name, (unsigned long long)(per * row_bytes));
    int rc = 0;
    for (uint64_t r = 0; r < rows && rc == 0; r += per) {
        uint64_t n = rows - r < per ? rows - r : per;
        rc = t->fill(t->ctx, r, n, chunk, err);
        if (rc == 0) rc = write_all(f, chunk, (size_t)(n * row_bytes), what, err);
    }
    free(chunk);
    return rc ? -1 : 0;
}

static int write_file(gguf_writer *w, FILE *f, const char *what, ember_err *err)
{
    if (w->failed) {
        if (err) *err = w->first_err;
        return -1;
    }
    uint64_t align = get_alignment(w, err);
    if (!align) return -1;
    buf h = {0};
    if (build_header(w, align, &h, err)) {
        free(h.p);
        return -1;
    }
    int rc = write_all(f, h.p, h.len, what, err);
    uint64_t pos = h.len;
    free(h.p);
    if (rc) return -1;
    if (write_zeros(f, pad_to(pos, align) - pos, what, err)) return -1;
    for (size_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        if (write_tensor(f, t, what, err)) return -1;
        /* pad every tensor, the last one too: readers that mmap whole
           aligned blocks stay inside the file */
        if (write_zeros(f, pad_to(t->nbytes, align) - t->nbytes, what, err)) return -1;
    }
    return 0;
}

int gguf_writer_save(gguf_writer *w, const char *path, ember_err *err)
{
    if (w->failed) {
        if (err) *err = w->first_err;
        return -1;
    }
    /* a model file is as readable as any other */
    ember_file *f = ember_file_create(path, EMBER_MODE_PUBLIC, err);
    if (!f) return -1;
    if (write_file(w, ember_file_stream(f), path, err)) {
        ember_file_abort(f);
        return -1;
    }
    return ember_file_commit(f, err);
}

int gguf_writer_to_mem(gguf_writer *w, uint8_t **out, size_t *size, ember_err *err)
{
    char *p = NULL;
    size_t len = 0;
    *out = NULL;
    *size = 0;
    FILE *f = open_memstream(&p, &len);
    if (!f) return ember_seterr(err, "out of memory serialising GGUF");
    int rc = write_file(w, f, "GGUF image", err);
    if (fclose(f) != 0 && rc == 0) rc = ember_seterr(err, "out of memory serialising GGUF");
    if (rc) {
        free(p);
        return -1;
    }
    *out = (uint8_t *)p;
    *size = len;
    return 0;
}
