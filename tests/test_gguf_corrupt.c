/* The corruption battery: a small GGUF written by the test, then truncated
   at every length, byte-flipped, and with single fields set to hostile
   values.  Every case must fail cleanly (or parse, when the bytes happen to
   stay valid) and never read outside the image: each case gets its own
   exactly-sized heap copy so ASan sees any overread. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_sample.h"
#include "tap.h"

static const uint8_t *g_img;
static size_t g_n;
static sample_layout L;

/* Parses a copy of img[0..n) and touches everything the result points at.
   Returns 1 when parsed, 0 on a clean error (with a non-empty message). */
static int try_parse(const uint8_t *img, size_t n, char *msg, size_t cap)
{
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return -1;
    memcpy(copy, img, n);
    ember_err err = {{0}};
    gguf_file *f = gguf_open_mem(copy, n, &err);
    int rc;
    if (f) {
        volatile uint64_t sink = sample_touch(f);
        (void)sink;
        gguf_close(f);
        rc = 1;
    } else {
        rc = err.msg[0] ? 0 : -1;   /* an error without a message is a bug */
    }
    if (msg) snprintf(msg, cap, "%s", err.msg);
    free(copy);
    return rc;
}

/* A copy of the sample with one little-endian field replaced. */
static int try_patch(size_t off, uint64_t v, int width, char *msg, size_t cap)
{
    uint8_t *img = malloc(g_n);
    if (!img) return -1;
    memcpy(img, g_img, g_n);
    sample_wr(img + off, v, width);
    int rc = try_parse(img, g_n, msg, cap);
    free(img);
    return rc;
}

static void expect_error(size_t off, uint64_t v, int width, const char *what)
{
    char msg[1024] = "";
    int rc = try_patch(off, v, width, msg, sizeof msg);
    tap_ok(rc == 0, "%s -> error: %s", what, rc == 0 ? msg : rc > 0 ? "(parsed!)" : "(no message)");
}

static void test_truncation(void)
{
    /* below the end of the last tensor a file must be refused; inside the
       trailing padding it is still whole */
    int wrong = 0;
    size_t first_wrong = 0;
    for (size_t n = 0; n <= g_n; n++) {
        int rc = try_parse(g_img, n, NULL, 0);
        int want = n >= L.tensors_end ? 1 : 0;
        if (rc != want && !wrong++) first_wrong = n;
    }
    tap_ok(wrong == 0, "truncation at every length 0..%zu: error below %zu, parse from there (%d wrong, first at %zu)",
           g_n, L.tensors_end, wrong, first_wrong);
}

static uint64_t rng_state = 0x1234567887654321ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_flips(void)
{
    /* deterministic positions x values: single bytes in the header, then
       bursts of 1..8 bytes anywhere */
    uint8_t *img = malloc(g_n);
    int cases = 0, parsed = 0, bad = 0;
    for (int i = 0; i < 20000 && img; i++) {
        memcpy(img, g_img, g_n);
        int k = i < 12000 ? 1 : 1 + (int)(rnd() % 8);
        for (int j = 0; j < k; j++) {
            size_t pos = i < 12000 ? (size_t)(rnd() % L.header_end) : (size_t)(rnd() % g_n);
            uint64_t r = rnd();
            /* interesting values as often as random ones */
            static const uint8_t special[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x20, 0x09, 0x0c};
            img[pos] = (r & 1) ? special[(r >> 1) % 8] : (uint8_t)(r >> 8);
        }
        int rc = try_parse(img, g_n, NULL, 0);
        cases++;
        parsed += rc == 1;
        bad += rc < 0;
    }
    free(img);
    tap_ok(cases == 20000 && bad == 0, "%d byte-flip cases: %d still valid, the rest clean errors, none without a message",
           cases, parsed);
}

static void test_fields(void)
{
    static const uint64_t huge[] = {UINT64_MAX, 1ull << 63, 1ull << 32, 0x7fffffffffffffffull, 1ull << 40};
    char what[128];

    expect_error(0, 0x47475546, 4, "bad magic (GGUF reversed)");
    expect_error(4, 1, 4, "version 1");
    expect_error(4, 4, 4, "version 4");
    expect_error(4, 0xffffffff, 4, "version 0xffffffff");

    for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
        snprintf(what, sizeof what, "tensor count %#llx", (unsigned long long)huge[h]);
        expect_error(L.n_tensors, huge[h], 8, what);
        snprintf(what, sizeof what, "metadata count %#llx", (unsigned long long)huge[h]);
        expect_error(L.n_kv, huge[h], 8, what);
    }
    expect_error(L.n_tensors, (uint64_t)L.nt + 1, 8, "tensor count one too many");
    expect_error(L.n_kv, (uint64_t)L.nkv + 1, 8, "metadata count one too many");
    expect_error(L.n_kv, g_n / 13 + 1, 8, "metadata count just past what the file could hold");

    /* every length field of every key, string, array and tensor name */
    int inflated = 0, ok = 0;
    char msg[1024];
    for (int i = 0; i < L.nkv; i++) {
        const sample_kv_pos *k = &L.kv[i];
        size_t fields[3] = {k->key_len, 0, 0};
        int nf = 1;
        if (k->vtype == GGUF_T_STRING) fields[nf++] = k->val;
        if (k->vtype == GGUF_T_ARRAY) fields[nf++] = k->arr_n;
        if (k->vtype == GGUF_T_ARRAY && k->atype == GGUF_T_STRING) fields[nf++] = k->first_str;
        for (int j = 0; j < nf; j++)
            for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
                inflated++;
                ok += try_patch(fields[j], huge[h], 8, msg, sizeof msg) == 0;
            }
    }
    for (int i = 0; i < L.nt; i++)
        for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
            inflated++;
            ok += try_patch(L.t[i].name_len, huge[h], 8, msg, sizeof msg) == 0;
        }
    tap_ok(inflated > 0 && ok == inflated, "%d inflated key/string/array/name lengths: all errors (%d)", inflated, ok);

    /* value types */
    int k_u32 = -1, k_arr = -1, k_bool = -1, k_str = -1, k_sarr = -1;
    for (int i = 0; i < L.nkv; i++) {
        const sample_kv_pos *k = &L.kv[i];
        if (k->vtype == GGUF_T_U32 && k_u32 < 0) k_u32 = i;
        if (k->vtype == GGUF_T_ARRAY && k->atype == GGUF_T_U32 && k_arr < 0) k_arr = i;
        if (k->vtype == GGUF_T_ARRAY && k->atype == GGUF_T_STRING && k_sarr < 0) k_sarr = i;
        if (k->vtype == GGUF_T_BOOL && k_bool < 0) k_bool = i;
        if (k->vtype == GGUF_T_STRING && k_str < 0) k_str = i;
    }
    if (k_u32 < 0 || k_arr < 0 || k_bool < 0 || k_str < 0 || k_sarr < 0) {
        tap_ok(0, "sample layout has the expected keys");
        return;
    }
    expect_error(L.kv[k_u32].type, 13, 4, "metadata value type 13");
    expect_error(L.kv[k_u32].type, 0xffffffff, 4, "metadata value type 0xffffffff");
    expect_error(L.kv[k_arr].arr_type, GGUF_T_ARRAY, 4, "nested array (element type ARRAY)");
    expect_error(L.kv[k_arr].arr_type, 13, 4, "array element type 13");
    expect_error(L.kv[k_bool].val, 2, 1, "bool value 2");
    expect_error(L.kv[k_str].key, 0xff, 1, "key with an invalid UTF-8 byte");
    expect_error(L.kv[k_str].key, 0x00, 1, "key with a NUL byte");
    expect_error(L.kv[k_str].key_len, 0, 8, "empty key");
    /* the second key renamed onto the first: both are "test.u8"/"test.i8" */
    int k_u8 = -1, k_i8 = -1;
    for (int i = 0; i < L.nkv; i++) {
        if (L.kv[i].vtype == GGUF_T_U8) k_u8 = i;
        if (L.kv[i].vtype == GGUF_T_I8) k_i8 = i;
    }
    if (k_u8 >= 0 && k_i8 >= 0) expect_error(L.kv[k_i8].key + 5, 'u', 1, "duplicate metadata key");

    /* tensor infos */
    const sample_t_pos *t0 = &L.t[0], *t1 = &L.t[1], *tl = &L.t[L.nt - 1];
    expect_error(t1->n_dims, 0, 4, "tensor with 0 dimensions");
    expect_error(t1->n_dims, 5, 4, "tensor with 5 dimensions");
    expect_error(t1->n_dims, 0xffffffff, 4, "tensor with 0xffffffff dimensions");
    expect_error(t1->ne, 0, 8, "tensor dimension 0");
    expect_error(t1->ne + 8, 0, 8, "tensor second dimension 0");
    expect_error(t1->ne, 33, 8, "Q8_0 tensor with ne[0] = 33 (not a multiple of 32)");
    expect_error(t1->ne, 1ull << 62, 8, "tensor ne[0] = 2^62");
    expect_error(t1->ne + 8, 1ull << 62, 8, "tensor ne[1] = 2^62 (size overflows)");
    expect_error(t1->ne + 8, UINT64_MAX, 8, "tensor ne[1] = 2^64-1");
    static const uint32_t bad_types[] = {4, 5, 16, 17, 19, 31, 40, 99, 0xffffffff};   /* 39 is MXFP4 now */
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        snprintf(what, sizeof what, "unknown ggml type %u", bad_types[i]);
        expect_error(t1->type, bad_types[i], 4, what);
    }
    uint64_t last_off = sample_rd(g_img + tl->offset, 8);
    expect_error(tl->offset, last_off + 1, 8, "misaligned tensor offset (+1)");
    expect_error(tl->offset, last_off + 32, 8, "last tensor moved 32 bytes past the end");
    expect_error(tl->offset, g_n, 8, "tensor offset = file size");
    expect_error(tl->offset, UINT64_MAX - 31, 8, "tensor offset near 2^64 (wraps)");
    expect_error(t0->offset, 1ull << 40, 8, "tensor offset 2^40");
    uint8_t *dup = malloc(g_n);
    if (dup) {
        memcpy(dup, g_img, g_n);
        memcpy(dup + t1->name, g_img + t0->name, 5);       /* "w.q80" -> "w.f32" */
        char m[1024];
        int rc = try_parse(dup, g_n, m, sizeof m);
        tap_ok(rc == 0, "duplicate tensor name -> error: %s", m);
        free(dup);
    }
    expect_error(t1->name, 0xc3, 1, "tensor name with invalid UTF-8");
    expect_error(t1->name_len, 0, 8, "empty tensor name");
}

/* general.alignment values a reader must refuse (in a sample that has one). */
static void test_alignment(void)
{
    size_t n;
    uint8_t *img = sample_image(64, &n);
    if (!tap_ok(img != NULL, "sample with general.alignment")) return;
    sample_layout LA;
    sample_walk(img, n, &LA);
    const uint8_t *save_img = g_img;
    size_t save_n = g_n;
    g_img = img;
    g_n = n;
    size_t at = 0;
    for (int i = 0; i < LA.nkv; i++)
        if (sample_rd(img + LA.kv[i].key_len, 8) == 17 && !memcmp(img + LA.kv[i].key, "general.alignment", 17))
            at = LA.kv[i].val;
    if (tap_ok(at != 0, "found general.alignment")) {
        expect_error(at, 0, 4, "general.alignment 0");
        expect_error(at, 48, 4, "general.alignment 48 (not a power of two)");
        expect_error(at, 0x80000000u, 4, "general.alignment 2^31");
        /* 32 is legal but then the data section moves: the offsets no longer fit the bytes */
        char msg[1024];
        int rc = try_patch(at, 32, 4, msg, sizeof msg);
        tap_ok(rc >= 0, "general.alignment changed 64 -> 32: %s", rc == 1 ? "parses" : msg);
    }
    g_img = save_img;
    g_n = save_n;
    free(img);
}

int main(void)
{
    size_t n;
    uint8_t *img = sample_image(0, &n);
    if (!img) {
        tap_ok(0, "writer produces the sample image");
        return tap_done();
    }
    g_img = img;
    g_n = n;
    sample_walk(img, n, &L);
    char msg[1024];
    tap_ok(L.nt == 4 && L.nkv == 26 && try_parse(img, n, msg, sizeof msg) == 1,
           "the unmodified %zu-byte sample parses (header %zu bytes)", n, L.header_end);
    test_truncation();
    test_flips();
    test_fields();
    test_alignment();
    free(img);
    return tap_done();
}
