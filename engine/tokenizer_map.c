/* String -> id hash map and UTF-8 validation shared by the tokenizers. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tokenizer_impl.h"

static uint64_t hash_bytes(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ull;
    }
    /* FNV's low bits are weak for short keys: fold the high half in. */
    return h ^ (h >> 29);
}

int tok_map_init(tok_map *m, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2) cap *= 2;
    memset(m, 0, sizeof *m);
    if (cap > (size_t)UINT32_MAX / 2) return -1;
    m->keys = calloc(cap, sizeof *m->keys);
    m->lens = calloc(cap, sizeof *m->lens);
    m->vals = calloc(cap, sizeof *m->vals);
    if (!m->keys || !m->lens || !m->vals) {
        tok_map_free(m);
        return -1;
    }
    m->mask = (uint32_t)(cap - 1);
    return 0;
}

void tok_map_free(tok_map *m)
{
    free(m->keys);
    free(m->lens);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void tok_map_put(tok_map *m, const char *key, uint32_t len, int32_t val)
{
    /* Capacity is fixed at twice the expected count, so this never fills. */
    if (!m->keys || m->n >= m->mask) return;
    uint32_t i = (uint32_t)hash_bytes(key, len) & m->mask;
    while (m->keys[i]) {
        if (m->lens[i] == len && !memcmp(m->keys[i], key, len)) return;
        i = (i + 1) & m->mask;
    }
    m->keys[i] = key;
    m->lens[i] = len;
    m->vals[i] = val;
    m->n++;
}

int32_t tok_map_get(const tok_map *m, const char *key, size_t len)
{
    if (!m->keys) return -1;
    uint32_t i = (uint32_t)hash_bytes(key, len) & m->mask;
    while (m->keys[i]) {
        if (m->lens[i] == len && !memcmp(m->keys[i], key, len)) return m->vals[i];
        i = (i + 1) & m->mask;
    }
    return -1;
}

int tok_utf8_valid(const unsigned char *s, size_t n)
{
    if (n == 0) return 0;
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    int len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if ((size_t)len > n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return len;
}
