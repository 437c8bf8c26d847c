/* GGUF v2/v3 reader.  The file is mapped read-only and parsed with a cursor
   that checks every read against the end of the map; counts are bounded by
   what the remaining bytes could hold before anything is allocated. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "faultguard.h"
#include "ember.h"
#include "pagecache.h"
#include "gguf.h"

typedef struct {
    const uint8_t *base;
    uint64_t size, pos;
    ember_err *err;
} cursor;

static const char *const type_names[GGUF_T_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array",
    "u64", "i64", "f64",
};
static const uint8_t type_size[GGUF_T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_type_name(gguf_type t)
{
    return (unsigned)t < GGUF_T_COUNT ? type_names[t] : "?";
}

static int need(cursor *c, uint64_t n, const char *what)
{
    if (n > c->size - c->pos)
        return ember_seterr(c->err, "%s at offset 0x%llx: needs %llu bytes, only %llu left in the file",
                            what, (unsigned long long)c->pos, (unsigned long long)n,
                            (unsigned long long)(c->size - c->pos));
    return 0;
}

static uint64_t rd_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static int rd_u32(cursor *c, uint32_t *v, const char *what)
{
    if (need(c, 4, what)) return -1;
    *v = (uint32_t)rd_le(c->base + c->pos, 4);
    c->pos += 4;
    return 0;
}

static int rd_u64(cursor *c, uint64_t *v, const char *what)
{
    if (need(c, 8, what)) return -1;
    *v = rd_le(c->base + c->pos, 8);
    c->pos += 8;
    return 0;
}

static int rd_str(cursor *c, gguf_str *s, const char *what)
{
    uint64_t len;
    if (rd_u64(c, &len, what)) return -1;
    if (need(c, len, what)) return -1;
    s->ptr = (const char *)c->base + c->pos;
    s->len = len;
    c->pos += len;
    return 0;
}

/* Keys and tensor names: well-formed UTF-8 without NUL. */
static bool utf8_valid(const char *s, uint64_t n)
{
    for (uint64_t i = 0; i < n;) {
        size_t left = n - i > 4 ? 4 : (size_t)(n - i);
        int k = ember_utf8_decode(s + i, left, NULL);
        if (k == 0 || s[i] == 0) return false;
        i += (uint64_t)k;
    }
    return true;
}

static void print_str(char *buf, size_t cap, gguf_str s)
{
    size_t n = s.len < cap - 1 ? (size_t)s.len : cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s.ptr[i];
        buf[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    buf[n] = '\0';
}

/* Reads one value of type t into kv (t is never ARRAY inside an array). */
static int rd_scalar(cursor *c, gguf_type t, gguf_kv *kv, const char *key)
{
    if (t == GGUF_T_STRING) return rd_str(c, &kv->v.s, key);
    if (need(c, type_size[t], key)) return -1;
    uint64_t raw = rd_le(c->base + c->pos, type_size[t]);
    c->pos += type_size[t];
    switch (t) {
    case GGUF_T_U8: case GGUF_T_U16: case GGUF_T_U32: case GGUF_T_U64:
        kv->v.u = raw;
        break;
    case GGUF_T_I8: kv->v.i = (int8_t)raw; break;
    case GGUF_T_I16: kv->v.i = (int16_t)raw; break;
    case GGUF_T_I32: kv->v.i = (int32_t)raw; break;
    case GGUF_T_I64: kv->v.i = (int64_t)raw; break;
    case GGUF_T_F32: { uint32_t b = (uint32_t)raw; float f; memcpy(&f, &b, 4); kv->v.f = f; break; }
    case GGUF_T_F64: memcpy(&kv->v.f, &raw, 8); break;
    case GGUF_T_BOOL:
        if (raw > 1) return ember_seterr(c->err, "key '%s': bool value %llu is neither 0 nor 1", key, (unsigned long long)raw);
        kv->v.b = raw != 0;
        break;
    default:
        return ember_seterr(c->err, "key '%s': bad value type %d", key, (int)t);
    }
    return 0;
}

static int rd_kv(cursor *c, gguf_kv *kv, uint64_t index)
{
    char what[64];
    snprintf(what, sizeof what, "metadata key %llu", (unsigned long long)index);
    if (rd_str(c, &kv->key, what)) return -1;
    if (kv->key.len == 0 || kv->key.len > 65535 || !utf8_valid(kv->key.ptr, kv->key.len))
        return ember_seterr(c->err, "metadata key %llu at offset 0x%llx: empty, too long or not valid UTF-8",
                            (unsigned long long)index, (unsigned long long)(c->pos - kv->key.len));
    char key[128];
    print_str(key, sizeof key, kv->key);
    uint32_t t;
    if (rd_u32(c, &t, key)) return -1;
    if (t >= GGUF_T_COUNT)
        return ember_seterr(c->err, "key '%s': unknown value type %u", key, t);
    kv->type = (gguf_type)t;
    if (t != GGUF_T_ARRAY) return rd_scalar(c, kv->type, kv, key);

    uint32_t et;
    uint64_t n;
    if (rd_u32(c, &et, key) || rd_u64(c, &n, key)) return -1;
    if (et >= GGUF_T_COUNT)
        return ember_seterr(c->err, "key '%s': unknown array element type %u", key, et);
    if (et == GGUF_T_ARRAY)
        return ember_seterr(c->err, "key '%s': nested arrays are not supported", key);
    kv->arr_type = (gguf_type)et;
    kv->arr_n = n;
    kv->arr_data = c->base + c->pos;
    if (et != GGUF_T_STRING) {
        uint64_t sz = type_size[et];
        if (n > (c->size - c->pos) / sz)
            return ember_seterr(c->err, "key '%s': array of %llu %s elements exceeds the file (%llu bytes left)",
                                key, (unsigned long long)n, type_names[et],
                                (unsigned long long)(c->size - c->pos));
        if (et == GGUF_T_BOOL)
            for (uint64_t i = 0; i < n; i++)
                if (kv->arr_data[i] > 1)
                    return ember_seterr(c->err, "key '%s': bool element %llu is %u", key,
                                        (unsigned long long)i, kv->arr_data[i]);
        c->pos += n * sz;
        return 0;
    }
    if (n > (c->size - c->pos) / 8)
        return ember_seterr(c->err, "key '%s': array of %llu strings exceeds the file", key,
                            (unsigned long long)n);
    kv->arr_strs = malloc((size_t)(n ? n : 1) * sizeof *kv->arr_strs);
    if (!kv->arr_strs) return ember_seterr(c->err, "key '%s': out of memory for %llu strings", key, (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++)
        if (rd_str(c, &kv->arr_strs[i], key)) return -1;
    return 0;
}

/* Open-addressing set for the duplicate checks (keys and tensor names):
   linear time, so a hostile file with many keys cannot stall the parse. */
static uint64_t hash_str(const char *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* Returns the index of an earlier equal string, -1 when all are distinct,
   -2 when out of memory. */
static int64_t first_duplicate(const gguf_str *(*get)(const gguf_file *, uint64_t), const gguf_file *f,
                               uint64_t n, uint64_t *dup_of)
{
    uint64_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    int64_t *slot = malloc(cap * sizeof *slot);
    if (!slot) return -2;
    for (uint64_t i = 0; i < cap; i++) slot[i] = -1;
    int64_t found = -1;
    for (uint64_t t = 0; t < n && found < 0; t++) {
        const gguf_str *s = get(f, t);
        uint64_t h = hash_str(s->ptr, s->len) & (cap - 1);
        while (slot[h] >= 0) {
            const gguf_str *o = get(f, (uint64_t)slot[h]);
            if (o->len == s->len && memcmp(o->ptr, s->ptr, s->len) == 0) {
                found = (int64_t)t;
                *dup_of = (uint64_t)slot[h];
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        slot[h] = (int64_t)t;
    }
    free(slot);
    return found;
}

static const gguf_str *tensor_name(const gguf_file *f, uint64_t i) { return &f->tensors[i].name; }
static const gguf_str *kv_key(const gguf_file *f, uint64_t i) { return &f->kv[i].key; }

static int check_duplicates(gguf_file *f, ember_err *err)
{
    uint64_t other = 0;
    int64_t t = first_duplicate(tensor_name, f, f->n_tensors, &other);
    if (t == -2) return ember_seterr(err, "out of memory");
    if (t >= 0)
        return ember_seterr(err, "tensor %lld '%s': duplicate name (also tensor %llu)", (long long)t,
                            f->tensors[t].name_z, (unsigned long long)other);
    return 0;
}

static int rd_tensor(cursor *c, gguf_tensor *t, uint64_t index)
{
    char what[64];
    snprintf(what, sizeof what, "tensor info %llu", (unsigned long long)index);
    if (rd_str(c, &t->name, what)) return -1;
    if (t->name.len == 0 || t->name.len > 255 || !utf8_valid(t->name.ptr, t->name.len))
        return ember_seterr(c->err, "tensor %llu: name is empty, longer than 255 bytes or not UTF-8",
                            (unsigned long long)index);
    t->name_z = malloc(t->name.len + 1);
    if (!t->name_z) return ember_seterr(c->err, "out of memory");
    memcpy(t->name_z, t->name.ptr, t->name.len);
    t->name_z[t->name.len] = '\0';
    if (rd_u32(c, &t->n_dims, t->name_z)) return -1;
    if (t->n_dims < 1 || t->n_dims > GGUF_MAX_DIMS)
        return ember_seterr(c->err, "tensor %llu '%s': %u dimensions (must be 1..4)",
                            (unsigned long long)index, t->name_z, t->n_dims);
    for (int d = 0; d < GGUF_MAX_DIMS; d++) t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        uint64_t v;
        if (rd_u64(c, &v, t->name_z)) return -1;
        if (v == 0 || v > (uint64_t)INT64_MAX / 2)
            return ember_seterr(c->err, "tensor %llu '%s': dimension %u is %llu",
                                (unsigned long long)index, t->name_z, d, (unsigned long long)v);
        t->ne[d] = (int64_t)v;
    }
    uint32_t type;
    if (rd_u32(c, &type, t->name_z) || rd_u64(c, &t->offset, t->name_z)) return -1;
    const ember_dtype_info *di = ember_dtype_get((int)type);
    if (!di)
        return ember_seterr(c->err, "tensor %llu '%s': unknown ggml type %u",
                            (unsigned long long)index, t->name_z, type);
    t->type = (int)type;
    if (t->ne[0] % di->block_elems)
        return ember_seterr(c->err, "tensor %llu '%s': ne[0] = %lld is not a multiple of the %s block size %d",
                            (unsigned long long)index, t->name_z, (long long)t->ne[0], di->name, di->block_elems);
    /* nbytes = ne0/blk*bytes * ne1*ne2*ne3, refusing overflow at each step */
    uint64_t n = (uint64_t)(t->ne[0] / di->block_elems) * (uint64_t)di->block_bytes;
    for (int d = 1; d < GGUF_MAX_DIMS; d++) {
        if ((uint64_t)t->ne[d] > UINT64_MAX / n)
            return ember_seterr(c->err, "tensor %llu '%s': size overflows", (unsigned long long)index, t->name_z);
        n *= (uint64_t)t->ne[d];
    }
    t->nbytes = n;
    return 0;
}

static void free_parts(gguf_file *f)
{
    if (f->kv)
        for (uint64_t i = 0; i < f->n_kv; i++) free(f->kv[i].arr_strs);
    if (f->tensors)
        for (uint64_t i = 0; i < f->n_tensors; i++) free(f->tensors[i].name_z);
    free(f->kv);
    free(f->tensors);
}

static int parse(gguf_file *f, ember_err *err)
{
    cursor c = {f->map, f->size, 0, err};
    if (f->size < 4 || memcmp(f->map, "GGUF", 4) != 0)
        return ember_seterr(err, "not a GGUF file (bad magic)");
    c.pos = 4;
    if (rd_u32(&c, &f->version, "header version")) return -1;
    if (f->version != 2 && f->version != 3)
        return ember_seterr(err, "GGUF version %u is not supported (only 2 and 3)", f->version);
    uint64_t nt, nkv;
    if (rd_u64(&c, &nt, "tensor count") || rd_u64(&c, &nkv, "metadata count")) return -1;
    /* each kv needs >= 13 bytes, each tensor info >= 29 */
    if (nkv > (f->size - c.pos) / 13)
        return ember_seterr(err, "metadata count %llu cannot fit in a %llu-byte file",
                            (unsigned long long)nkv, (unsigned long long)f->size);
    if (nt > (f->size - c.pos) / 29)
        return ember_seterr(err, "tensor count %llu cannot fit in a %llu-byte file",
                            (unsigned long long)nt, (unsigned long long)f->size);
    f->kv = calloc(nkv ? nkv : 1, sizeof *f->kv);
    f->tensors = calloc(nt ? nt : 1, sizeof *f->tensors);
    if (!f->kv || !f->tensors) return ember_seterr(err, "out of memory");
    f->n_kv = nkv;
    f->n_tensors = nt;
    for (uint64_t i = 0; i < nkv; i++)
        if (rd_kv(&c, &f->kv[i], i)) {
            f->n_kv = i + 1;
            return -1;
        }
    uint64_t other = 0;
    int64_t dup = first_duplicate(kv_key, f, nkv, &other);
    if (dup == -2) return ember_seterr(err, "out of memory");
    if (dup >= 0) {
        char key[128];
        print_str(key, sizeof key, f->kv[dup].key);
        return ember_seterr(err, "metadata key '%s' appears twice (entries %llu and %lld)", key,
                            (unsigned long long)other, (long long)dup);
    }
    f->alignment = 32;
    const gguf_kv *al = gguf_find(f, "general.alignment");
    if (al) {
        if (al->type != GGUF_T_U32)
            return ember_seterr(err, "general.alignment must be a u32 (got type %s)", gguf_type_name(al->type));
        if (al->v.u == 0 || (al->v.u & (al->v.u - 1)) || al->v.u > (1u << 20))
            return ember_seterr(err, "general.alignment %llu is not a power of two up to 1 MiB",
                                (unsigned long long)al->v.u);
        f->alignment = al->v.u;
    }
    for (uint64_t i = 0; i < nt; i++)
        if (rd_tensor(&c, &f->tensors[i], i)) {
            f->n_tensors = i + 1;
            return -1;
        }
    if (nt && check_duplicates(f, err)) return -1;
    uint64_t data = c.pos + (f->alignment - c.pos % f->alignment) % f->alignment;
    if (nt && data > f->size)
        return ember_seterr(err, "data section at 0x%llx starts past the end of the file (%llu bytes)",
                            (unsigned long long)data, (unsigned long long)f->size);
    f->data_offset = data;
    uint64_t avail = f->size > data ? f->size - data : 0;
    for (uint64_t i = 0; i < nt; i++) {
        gguf_tensor *t = &f->tensors[i];
        if (t->offset % f->alignment)
            return ember_seterr(err, "tensor %llu '%s': data offset 0x%llx is not aligned to %llu",
                                (unsigned long long)i, t->name_z, (unsigned long long)t->offset,
                                (unsigned long long)f->alignment);
        if (t->offset > avail || t->nbytes > avail - t->offset)
            return ember_seterr(err, "tensor %llu '%s': data range at data+0x%llx (+%llu bytes) exceeds file size %llu",
                                (unsigned long long)i, t->name_z, (unsigned long long)t->offset,
                                (unsigned long long)t->nbytes, (unsigned long long)f->size);
        t->file_offset = data + t->offset;
        t->data = f->map + t->file_offset;
    }
    return 0;
}

gguf_file *gguf_open_mem(const void *buf, uint64_t size, ember_err *err)
{
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) {
        ember_seterr(err, "out of memory");
        return NULL;
    }
    f->fd = -1;
    f->map = buf;
    f->size = size;
    if (parse(f, err)) {
        free_parts(f);
        free(f);
        return NULL;
    }
    return f;
}

gguf_file *gguf_open(const char *path, ember_err *err)
{
    uint64_t fsize;
    int fd = ember_open_regular(path, &fsize, err);
    if (fd < 0) return NULL;
    if (fsize < 24) {
        ember_seterr(err, "%s: %lld bytes is too small for a GGUF file", path, (long long)fsize);
        close(fd);
        return NULL;
    }
    void *map = ember_map_file(fd, (size_t)fsize);
    if (map == MAP_FAILED) {
        ember_seterr(err, "%s: mmap: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    ember_err e2;
    gguf_file *f = gguf_open_mem(map, fsize, &e2);
    if (!f) {
        ember_seterr(err, "%s: %s", path, e2.msg);
        munmap(map, (size_t)fsize);
        close(fd);
        return NULL;
    }
    f->fd = fd;
    f->path = strdup(path);
    ember_fault_guard_note_map(map, (size_t)fsize, NULL);
    return f;
}

void gguf_close(gguf_file *f)
{
    if (!f) return;
    free_parts(f);
    if (f->fd >= 0) {
        ember_fault_guard_forget_map(f->map);
        munmap((void *)f->map, (size_t)f->size);
        close(f->fd);
    }
    free(f->path);
    free(f);
}

const gguf_kv *gguf_find(const gguf_file *f, const char *key)
{
    size_t kl = strlen(key);
    for (uint64_t i = 0; i < f->n_kv; i++)
        if (f->kv[i].key.len == kl && memcmp(f->kv[i].key.ptr, key, kl) == 0) return &f->kv[i];
    return NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name)
{
    for (uint64_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name_z, name) == 0) return &f->tensors[i];
    return NULL;
}

static bool is_int(gguf_type t)
{
    return t == GGUF_T_U8 || t == GGUF_T_I8 || t == GGUF_T_U16 || t == GGUF_T_I16 ||
           t == GGUF_T_U32 || t == GGUF_T_I32 || t == GGUF_T_U64 || t == GGUF_T_I64;
}

static bool is_signed(gguf_type t)
{
    return t == GGUF_T_I8 || t == GGUF_T_I16 || t == GGUF_T_I32 || t == GGUF_T_I64;
}

bool gguf_get_u64(const gguf_file *f, const char *key, uint64_t *out)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv || !is_int(kv->type)) return false;
    if (is_signed(kv->type)) {
        if (kv->v.i < 0) return false;
        *out = (uint64_t)kv->v.i;
    } else {
        *out = kv->v.u;
    }
    return true;
}

bool gguf_get_i64(const gguf_file *f, const char *key, int64_t *out)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv || !is_int(kv->type)) return false;
    if (is_signed(kv->type)) {
        *out = kv->v.i;
    } else {
        if (kv->v.u > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)kv->v.u;
    }
    return true;
}

bool gguf_get_f64(const gguf_file *f, const char *key, double *out)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv) return false;
    if (kv->type == GGUF_T_F32 || kv->type == GGUF_T_F64) {
        *out = kv->v.f;
        return true;
    }
    int64_t i;
    if (gguf_get_i64(f, key, &i)) {
        *out = (double)i;
        return true;
    }
    return false;
}

bool gguf_get_bool(const gguf_file *f, const char *key, bool *out)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv || kv->type != GGUF_T_BOOL) return false;
    *out = kv->v.b;
    return true;
}

bool gguf_get_str(const gguf_file *f, const char *key, gguf_str *out)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv || kv->type != GGUF_T_STRING) return false;
    *out = kv->v.s;
    return true;
}

char *gguf_get_strdup(const gguf_file *f, const char *key)
{
    gguf_str s;
    if (!gguf_get_str(f, key, &s)) return NULL;
    char *r = malloc(s.len + 1);
    if (!r) return NULL;
    memcpy(r, s.ptr, s.len);
    r[s.len] = '\0';
    return r;
}

bool gguf_arr_i64(const gguf_kv *kv, uint64_t i, int64_t *out)
{
    if (kv->type != GGUF_T_ARRAY || i >= kv->arr_n || !is_int(kv->arr_type)) return false;
    int sz = type_size[kv->arr_type];
    uint64_t raw = rd_le(kv->arr_data + i * (uint64_t)sz, sz);
    switch (kv->arr_type) {
    case GGUF_T_I8: *out = (int8_t)raw; break;
    case GGUF_T_I16: *out = (int16_t)raw; break;
    case GGUF_T_I32: *out = (int32_t)raw; break;
    case GGUF_T_I64: *out = (int64_t)raw; break;
    default:
        if (raw > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)raw;
    }
    return true;
}

bool gguf_arr_f64(const gguf_kv *kv, uint64_t i, double *out)
{
    if (kv->type != GGUF_T_ARRAY || i >= kv->arr_n) return false;
    if (kv->arr_type == GGUF_T_F32) {
        uint32_t b = (uint32_t)rd_le(kv->arr_data + i * 4, 4);
        float f;
        memcpy(&f, &b, 4);
        *out = f;
        return true;
    }
    if (kv->arr_type == GGUF_T_F64) {
        uint64_t b = rd_le(kv->arr_data + i * 8, 8);
        memcpy(out, &b, 8);
        return true;
    }
    int64_t v;
    if (!gguf_arr_i64(kv, i, &v)) return false;
    *out = (double)v;
    return true;
}

bool gguf_arr_str(const gguf_kv *kv, uint64_t i, gguf_str *out)
{
    if (kv->type != GGUF_T_ARRAY || kv->arr_type != GGUF_T_STRING || i >= kv->arr_n) return false;
    *out = kv->arr_strs[i];
    return true;
}
