/* GGUF reader and writer: the fixtures' inventories, a writer round trip of
   every metadata type and several tensor dtypes, atomic saves, streamed
   tensors and the writer's own refusals.  (Corrupted input:
   test_gguf_corrupt.c.) */
#include "config.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "gguf.h"
#include "gguf_sample.h"
#include "tap.h"

/* ---- fixtures ------------------------------------------------------------- */

typedef struct { const char *dtype; int count; } dcount;

typedef struct {
    const char *path;
    uint64_t size, n_tensors, n_kv, n_tokens;
    const char *arch;
    dcount d[4];
} fixture;

/* Counted once with an independent Python reader. */
static const fixture fixtures[] = {
    {"fixtures/models/llama-mini-Q4_0.gguf", 4408160, 21, 24, 4096, "llama", {{"F32", 6}, {"Q4_0", 14}, {"Q6_K", 1}}},
    {"fixtures/models/llama-mini-Q4_K_M.gguf", 4560224, 21, 24, 4096, "llama", {{"F32", 6}, {"Q4_K", 12}, {"Q6_K", 3}}},
    {"fixtures/models/llama-mini-Q5_K_M.gguf", 5043552, 21, 24, 4096, "llama", {{"F32", 6}, {"Q5_K", 12}, {"Q6_K", 3}}},
    {"fixtures/models/llama-mini-Q6_K.gguf", 5557088, 21, 24, 4096, "llama", {{"F32", 6}, {"Q6_K", 15}}},
    {"fixtures/models/llama-mini-Q8_0.gguf", 7144288, 21, 24, 4096, "llama", {{"F32", 6}, {"Q8_0", 15}}},
    {"fixtures/models/llama-mini-f16.gguf", 13288256, 21, 23, 4096, "llama", {{"F32", 6}, {"F16", 15}}},
    {"fixtures/models/qwen2-mini-Q4_K_M.gguf", 5703680, 27, 23, 4096, "qwen2", {{"F32", 11}, {"Q4_K", 13}, {"Q6_K", 3}}},
    {"fixtures/models/qwen2-mini-Q8_0.gguf", 9336320, 27, 23, 4096, "qwen2", {{"F32", 11}, {"Q8_0", 16}}},
    {"fixtures/models/qwen3-mini-f16.gguf", 16917920, 24, 24, 4096, "qwen3", {{"F32", 9}, {"F16", 15}}},
    {"fixtures/tokenizers/llama-spm.gguf", 723869, 0, 22, 32000, "llama", {{0, 0}}},
    {"fixtures/tokenizers/llama3-bpe.gguf", 7818208, 0, 12, 128256, "llama", {{0, 0}}},
    {"fixtures/tokenizers/qwen2-bpe.gguf", 5926048, 0, 11, 151669, "llama", {{0, 0}}},
};

static void test_fixture(const fixture *fx)
{
    char buf[1024];
    const char *path = tap_shared(fx->path, buf, sizeof buf);
    if (!path) {
        tap_skip("fixture absent (no ../shared)");
        return;
    }
    ember_err err = {{0}};
    gguf_file *f = gguf_open(path, &err);
    if (!tap_ok(f != NULL, "%s opens%s%s", fx->path, f ? "" : ": ", f ? "" : err.msg)) return;
    bool ok = f->size == fx->size && f->n_tensors == fx->n_tensors && f->n_kv == fx->n_kv &&
              f->version == 3 && f->alignment == 32;
    char *arch = gguf_get_strdup(f, "general.architecture");
    ok = ok && arch && !strcmp(arch, fx->arch);
    free(arch);
    const gguf_kv *tok = gguf_find(f, "tokenizer.ggml.tokens");
    ok = ok && tok && tok->type == GGUF_T_ARRAY && tok->arr_type == GGUF_T_STRING && tok->arr_n == fx->n_tokens;
    /* dtype inventory: every tensor is accounted for by the expected counts */
    int seen = 0;
    for (int k = 0; k < 4 && fx->d[k].dtype; k++) {
        int want = ember_dtype_from_name(fx->d[k].dtype), n = 0;
        for (uint64_t i = 0; i < f->n_tensors; i++) n += f->tensors[i].type == want;
        ok = ok && n == fx->d[k].count;
        seen += n;
    }
    ok = ok && (uint64_t)seen == f->n_tensors;
    /* tensor ranges: aligned, inside the file, after the header */
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const gguf_tensor *t = &f->tensors[i];
        ok = ok && t->file_offset % 32 == 0 && t->file_offset >= f->data_offset &&
             t->file_offset + t->nbytes <= f->size && t->data == f->map + t->file_offset;
    }
    tap_ok(ok, "%s: %llu tensors, %llu keys, %llu tokens, dtype counts", fx->path,
           (unsigned long long)f->n_tensors, (unsigned long long)f->n_kv, (unsigned long long)fx->n_tokens);
    gguf_close(f);
}

/* Spot values worked out from the bytes with the Python reader. */
static void test_fixture_values(void)
{
    char buf[1024];
    const char *path = tap_shared("fixtures/models/llama-mini-Q8_0.gguf", buf, sizeof buf);
    if (!path) {
        tap_skip("fixture absent (no ../shared)");
        return;
    }
    ember_err err;
    gguf_file *f = gguf_open(path, &err);
    if (!tap_ok(f != NULL, "llama-mini-Q8_0 opens")) return;
    const gguf_tensor *e = gguf_find_tensor(f, "token_embd.weight");
    const gguf_tensor *v = gguf_find_tensor(f, "blk.1.attn_v.weight");
    uint64_t u;
    double d;
    gguf_str s;
    tap_ok(f->data_offset == 170720 && e && e->n_dims == 2 && e->ne[0] == 512 && e->ne[1] == 4096 &&
           e->type == EMBER_Q8_0 && e->offset == 2176 && e->nbytes == 512 / 32 * 34 * 4096 &&
           v && v->ne[1] == 128 && v->offset == 5230720,
           "llama-mini-Q8_0: data section and tensor offsets");
    tap_ok(gguf_get_u64(f, "llama.context_length", &u) && u == 8192 &&
           gguf_get_u64(f, "tokenizer.ggml.eot_token_id", &u) && u == 4095 &&
           gguf_get_f64(f, "llama.rope.freq_base", &d) && d == 500000.0 &&
           gguf_get_f64(f, "llama.attention.layer_norm_rms_epsilon", &d) && fabs(d - 1e-5) < 1e-12 &&
           gguf_get_str(f, "general.name", &s) && s.len == 21 && !memcmp(s.ptr, "synthetic-llama-512x2", 21),
           "llama-mini-Q8_0: metadata values");
    const gguf_kv *m = gguf_find(f, "tokenizer.ggml.merges");
    tap_ok(m && m->arr_n == 6389 && gguf_arr_str(m, 4, &s) && s.len == 3 && !memcmp(s.ptr, "i n", 3) &&
           !gguf_arr_str(m, 6389, &s),
           "llama-mini-Q8_0: string array elements, bounds-checked");
    gguf_close(f);
}

/* ---- writer round trip ---------------------------------------------------- */

static bool kv_int(const gguf_file *f, const char *key, gguf_type t, int64_t want_i, uint64_t want_u, bool is_signed)
{
    const gguf_kv *kv = gguf_find(f, key);
    if (!kv || kv->type != t) return false;
    return is_signed ? kv->v.i == want_i : kv->v.u == want_u;
}

static bool arr_bytes(const gguf_file *f, const char *key, gguf_type t, const void *want, size_t esz)
{
    const gguf_kv *kv = gguf_find(f, key);
    return kv && kv->type == GGUF_T_ARRAY && kv->arr_type == t && kv->arr_n == 3 &&
           !memcmp(kv->arr_data, want, 3 * esz);
}

static void check_sample(const gguf_file *f, uint64_t align, const char *what)
{
    bool ok = true;
    ok = ok && kv_int(f, "test.u8", GGUF_T_U8, 0, 200, false);
    ok = ok && kv_int(f, "test.i8", GGUF_T_I8, -100, 0, true);
    ok = ok && kv_int(f, "test.u16", GGUF_T_U16, 0, 60000, false);
    ok = ok && kv_int(f, "test.i16", GGUF_T_I16, -30000, 0, true);
    ok = ok && kv_int(f, "test.u32", GGUF_T_U32, 0, 4000000000u, false);
    ok = ok && kv_int(f, "test.i32", GGUF_T_I32, -2000000000, 0, true);
    ok = ok && kv_int(f, "test.u64", GGUF_T_U64, 0, 0xfedcba9876543210ull, false);
    ok = ok && kv_int(f, "test.i64", GGUF_T_I64, INT64_MIN + 1, 0, true);
    tap_ok(ok, "%s: integer scalars of every width and sign", what);
    const gguf_kv *a = gguf_find(f, "test.f32"), *b = gguf_find(f, "test.f64"), *c = gguf_find(f, "test.bool");
    gguf_str s;
    tap_ok(a && a->type == GGUF_T_F32 && a->v.f == 1.5 && b && b->type == GGUF_T_F64 && b->v.f == -2.25e-300 &&
           c && c->type == GGUF_T_BOOL && c->v.b && gguf_get_str(f, "test.str", &s) && s.len == 6 &&
           !memcmp(s.ptr, "h\xc3\xa9llo", 6),
           "%s: f32, f64, bool, string", what);
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
    static const uint8_t abo[] = {1, 0, 1};
    ok = arr_bytes(f, "arr.u8", GGUF_T_U8, au8, 1) && arr_bytes(f, "arr.i8", GGUF_T_I8, ai8, 1) &&
         arr_bytes(f, "arr.u16", GGUF_T_U16, au16, 2) && arr_bytes(f, "arr.i16", GGUF_T_I16, ai16, 2) &&
         arr_bytes(f, "arr.u32", GGUF_T_U32, au32, 4) && arr_bytes(f, "arr.i32", GGUF_T_I32, ai32, 4) &&
         arr_bytes(f, "arr.u64", GGUF_T_U64, au64, 8) && arr_bytes(f, "arr.i64", GGUF_T_I64, ai64, 8) &&
         arr_bytes(f, "arr.f32", GGUF_T_F32, af32, 4) && arr_bytes(f, "arr.f64", GGUF_T_F64, af64, 8) &&
         arr_bytes(f, "arr.bool", GGUF_T_BOOL, abo, 1);
    tap_ok(ok, "%s: arrays of every scalar type, bytes intact", what);
    const gguf_kv *ai = gguf_find(f, "arr.i64"), *af = gguf_find(f, "arr.f64"), *as = gguf_find(f, "arr.str");
    const gguf_kv *ae = gguf_find(f, "arr.empty");
    int64_t iv = 0;
    double dv = 0;
    gguf_str s0, s1, s2;
    tap_ok(ai && gguf_arr_i64(ai, 0, &iv) && iv == INT64_MIN && !gguf_arr_i64(ai, 3, &iv) && af &&
           gguf_arr_f64(af, 2, &dv) && dv == 0.1 && as && as->arr_type == GGUF_T_STRING && as->arr_n == 3 &&
           gguf_arr_str(as, 0, &s0) && s0.len == 1 && s0.ptr[0] == 'a' && gguf_arr_str(as, 1, &s1) &&
           s1.len == 0 && gguf_arr_str(as, 2, &s2) && s2.len == 4 && !memcmp(s2.ptr, "\xce\xb2\xce\xb3", 4) &&
           ae && ae->arr_n == 0 && ae->arr_type == GGUF_T_U32,
           "%s: array element getters, string arrays, empty array", what);

    uint8_t data[2 * 144];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + 1);
    static const struct { const char *n; int type, nd; int64_t ne[4]; uint64_t nb; } want[] = {
        {"w.f32", EMBER_F32, 1, {8, 1, 1, 1}, 32}, {"w.q80", EMBER_Q8_0, 2, {32, 2, 1, 1}, 68},
        {"w.f16", EMBER_F16, 4, {2, 2, 2, 2}, 32}, {"w.q4k", EMBER_Q4_K, 2, {256, 2, 1, 1}, 288},
    };
    ok = f->n_tensors >= 4 && f->alignment == align && f->data_offset % align == 0;
    for (int i = 0; i < 4 && ok; i++) {
        const gguf_tensor *t = gguf_find_tensor(f, want[i].n);
        ok = t && t == &f->tensors[i] && t->type == want[i].type && (int)t->n_dims == want[i].nd &&
             !memcmp(t->ne, want[i].ne, sizeof t->ne) && t->nbytes == want[i].nb &&
             t->file_offset % align == 0 && !memcmp(t->data, data, (size_t)t->nbytes);
    }
    tap_ok(ok, "%s: 4 tensors (F32, Q8_0, F16 4-D, Q4_K): shape, dtype, %llu-aligned bytes", what,
           (unsigned long long)align);
}

static void test_roundtrip(void)
{
    size_t n;
    uint8_t *img = sample_image(0, &n);
    ember_err err = {{0}};
    if (!tap_ok(img != NULL, "writer serialises the sample to memory")) return;
    gguf_file *f = gguf_open_mem(img, n, &err);
    if (tap_ok(f != NULL, "reader accepts the writer's output%s%s", f ? "" : ": ", f ? "" : err.msg)) {
        tap_ok(f->version == 3 && f->n_kv == 26 && n % 32 == 0, "GGUF v3, 26 keys, file padded to alignment");
        check_sample(f, 32, "round trip");

        /* copying every key into a fresh writer reproduces the metadata bytes */
        gguf_writer *w = gguf_writer_new();
        for (uint64_t i = 0; i < f->n_kv; i++) gguf_w_copy_kv(w, &f->kv[i]);
        int64_t ne[1] = {8};
        uint8_t d[32];
        memcpy(d, f->tensors[0].data, 32);
        gguf_w_tensor(w, "w.f32", EMBER_F32, 1, ne, d, 32);
        uint8_t *img2 = NULL;
        size_t n2 = 0;
        sample_layout L;
        sample_walk(img, n, &L);
        size_t kv_end = L.t[0].name_len;
        tap_ok(gguf_writer_to_mem(w, &img2, &n2, &err) == 0 && n2 > kv_end &&
               !memcmp(img + 16, img2 + 16, kv_end - 16),
               "gguf_w_copy_kv reproduces every key byte for byte");
        free(img2);
        gguf_writer_free(w);
        gguf_close(f);
    }
    free(img);

    img = sample_image(64, &n);
    f = img ? gguf_open_mem(img, n, &err) : NULL;
    if (tap_ok(f != NULL, "sample with general.alignment = 64 parses")) {
        check_sample(f, 64, "alignment 64");
        gguf_close(f);
    }
    free(img);
}

/* ---- saving to disk ------------------------------------------------------------ */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n;
}

typedef struct {
    uint64_t next_row, calls;
    bool ordered;
    int fail_at;     /* fail on this call (-1: never) */
} cb_state;

/* Row r, column c of the streamed F32 tensor. */
static float pattern(uint64_t r, uint64_t c) { return (float)(r * 4099 + c % 4099); }

static int fill_pattern(void *ctx, uint64_t row0, uint64_t nrows, void *dst, ember_err *err)
{
    cb_state *s = ctx;
    if (row0 != s->next_row) s->ordered = false;
    s->next_row = row0 + nrows;
    if ((int)s->calls++ == s->fail_at) return ember_seterr(err, "callback failure on purpose");
    float *out = dst;
    for (uint64_t r = 0; r < nrows; r++)
        for (uint64_t c = 0; c < 4096; c++) out[r * 4096 + c] = pattern(row0 + r, c);
    return 0;
}

static void test_save(void)
{
    char dir[] = "/tmp/ember-test-gguf-XXXXXX";
    if (!mkdtemp(dir)) {
        tap_ok(0, "mkdtemp");
        return;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/model.gguf", dir);
    ember_err err = {{0}};

    /* an 18 MB tensor streamed in whole-row chunks through the callback */
    gguf_writer *w = sample_writer(0);
    cb_state st = {0, 0, true, -1};
    int64_t ne[2] = {4096, 1100};
    gguf_w_tensor_cb(w, "big", EMBER_F32, 2, ne, 4096ull * 1100 * 4, fill_pattern, &st);
    int rc = gguf_writer_save(w, path, &err);
    gguf_writer_free(w);
    tap_ok(rc == 0 && count_entries(dir) == 1, "save writes the file and leaves no temporary behind%s%s",
           rc ? ": " : "", rc ? err.msg : "");
    tap_ok(st.calls >= 2 && st.ordered && st.next_row == 1100,
           "the callback is called %llu times with consecutive row ranges", (unsigned long long)st.calls);
    gguf_file *f = gguf_open(path, &err);
    if (tap_ok(f != NULL, "saved file opens")) {
        check_sample(f, 32, "saved file");
        const gguf_tensor *t = f->n_tensors == 5 ? &f->tensors[4] : NULL;
        bool ok = t && !strcmp(t->name_z, "big") && t->nbytes == 4096ull * 1100 * 4;
        for (uint64_t r = 0; ok && r < 1100; r += 7)
            for (uint64_t c = 0; ok && c < 4096; c += 13) {
                float v;
                memcpy(&v, t->data + (r * 4096 + c) * 4, 4);
                ok = v == pattern(r, c);
            }
        tap_ok(ok, "streamed tensor holds the callback's rows in order");
        gguf_close(f);
    }

    /* a failing callback: error reported, the old file untouched, no temporary */
    struct stat before, after;
    stat(path, &before);
    w = sample_writer(0);
    cb_state st2 = {0, 0, true, 1};
    gguf_w_tensor_cb(w, "big", EMBER_F32, 2, ne, 4096ull * 1100 * 4, fill_pattern, &st2);
    rc = gguf_writer_save(w, path, &err);
    gguf_writer_free(w);
    stat(path, &after);
    tap_ok(rc == -1 && strstr(err.msg, "on purpose") && count_entries(dir) == 1 &&
           before.st_ino == after.st_ino && before.st_size == after.st_size,
           "a failing callback fails the save and keeps the previous file (%s)", err.msg);

    /* unwritable destination */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.gguf", dir);
    w = gguf_writer_new();
    gguf_w_str(w, "general.architecture", "llama");
    rc = gguf_writer_save(w, bad, &err);
    gguf_writer_free(w);
    tap_ok(rc == -1 && strstr(err.msg, "x.gguf"), "unwritable path: error naming it (%s)", err.msg);

    unlink(path);
    rmdir(dir);
}

/* ---- the writer refuses what a reader would reject -------------------------------- */

static void expect_refusal(gguf_writer *w, const char *needle, const char *what)
{
    uint8_t *img = NULL;
    size_t n = 0;
    ember_err err = {{0}};
    int rc = gguf_writer_to_mem(w, &img, &n, &err);
    tap_ok(rc == -1 && img == NULL && strstr(err.msg, needle), "writer refuses %s (%s)", what, err.msg);
    free(img);
    gguf_writer_free(w);
}

static void test_writer_refusals(void)
{
    uint8_t d[1024] = {0};
    int64_t ne[5] = {32, 2, 1, 1, 1}, bad0[1] = {33}, zero[2] = {32, 0};
    gguf_writer *w;

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", EMBER_Q8_0, 2, ne, d, 68);
    gguf_w_tensor(w, "a", EMBER_Q8_0, 2, ne, d, 68);
    expect_refusal(w, "twice", "a duplicate tensor name");

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", 4, 2, ne, d, 68);
    expect_refusal(w, "dtype", "an unknown dtype");

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", EMBER_Q8_0, 1, bad0, d, 34);
    expect_refusal(w, "multiple", "ne[0] not a multiple of the block size");

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", EMBER_Q8_0, 5, ne, d, 68);
    expect_refusal(w, "dimensions", "5 dimensions");

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", EMBER_Q8_0, 2, zero, d, 0);
    expect_refusal(w, "zero", "a zero dimension");

    w = gguf_writer_new();
    gguf_w_tensor(w, "a", EMBER_Q8_0, 2, ne, d, 67);
    expect_refusal(w, "byte count", "a byte count that does not match the shape");

    w = gguf_writer_new();
    gguf_w_u32(w, "general.alignment", 48);
    expect_refusal(w, "alignment", "a non-power-of-two alignment");

    w = gguf_writer_new();
    gguf_w_arr(w, "x", GGUF_T_ARRAY, d, 1);
    expect_refusal(w, "array", "nested arrays");

    /* setting a key twice keeps one key with the last value */
    w = gguf_writer_new();
    gguf_w_u32(w, "k", 1);
    gguf_w_str(w, "other", "x");
    gguf_w_u32(w, "k", 2);
    uint8_t *img = NULL;
    size_t n = 0;
    ember_err err;
    gguf_file *f = gguf_writer_to_mem(w, &img, &n, &err) == 0 ? gguf_open_mem(img, n, &err) : NULL;
    uint64_t v = 0;
    tap_ok(f && f->n_kv == 2 && gguf_get_u64(f, "k", &v) && v == 2 && f->kv[0].key.len == 1,
           "a key set twice keeps its place and takes the last value");
    gguf_close(f);
    free(img);
    gguf_writer_free(w);
}

int main(void)
{
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) test_fixture(&fixtures[i]);
    test_fixture_values();
    test_roundtrip();
    test_save();
    test_writer_refusals();
    return tap_done();
}
