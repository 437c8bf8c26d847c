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
    /* FNV's low bits only depend on the low bits of the input, and the
       table indexes by low bits: finish with murmur3's avalanche. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

int tok_map_init(tok_map *m, size_t expected, const char *base)
{
    size_t cap = 16;
    while (cap < expected + expected / 2) cap *= 2;
    memset(m, 0, sizeof *m);
    if (cap > (size_t)UINT32_MAX / 2) return -1;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) return -1;
    m->base = base;
    m->mask = (uint32_t)(cap - 1);
    return 0;
}

void tok_map_free(tok_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void tok_map_put(tok_map *m, const char *key, uint32_t len, int32_t val)
{
    /* Capacity is 1.5x the expected count or more, so this never fills. */
    if (!m->slots || m->n >= m->mask || key < m->base || (uint64_t)(key - m->base) >= UINT32_MAX) return;
    uint64_t h = hash_bytes(key, len);
    uint32_t i = (uint32_t)h & m->mask, tag = (uint32_t)(h >> 32);
    for (tok_slot *s; (s = &m->slots[i])->off; i = (i + 1) & m->mask)
        if (s->hash == tag && s->len == len && !memcmp(m->base + s->off - 1, key, len)) return;
    m->slots[i] = (tok_slot){(uint32_t)(key - m->base) + 1, len, tag, val};
    m->n++;
}

int32_t tok_map_get(const tok_map *m, const char *key, size_t len)
{
    if (!m->slots) return -1;
    uint64_t h = hash_bytes(key, len);
    uint32_t i = (uint32_t)h & m->mask, tag = (uint32_t)(h >> 32);
    for (const tok_slot *s; (s = &m->slots[i])->off; i = (i + 1) & m->mask)
        if (s->hash == tag && s->len == len && !memcmp(m->base + s->off - 1, key, len)) return s->val;
    return -1;
}
