/*
 * import_names.c — the importer's string -> int hash map (open addressing,
 * linear probing, power-of-two capacity). ONNX graphs refer to every value
 * by name, so resolving names must stay O(1) for models with 10^4 nodes.
 */
#include "import_internal.h"

#include <stdlib.h>
#include <string.h>

void imp_map_init(imp_map *m)
{
    memset(m, 0, sizeof *m);
}

void imp_map_free(imp_map *m)
{
    xf_free(m->keys);
    xf_free(m->vals);
    imp_map_init(m);
}

static size_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

static size_t slot_of(const imp_map *m, const char *key)
{
    size_t mask = m->cap - 1, i = hash_str(key) & mask;
    while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & mask;
    return i;
}

int imp_map_get(const imp_map *m, const char *key)
{
    if (!m->cap) return -1;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->vals[i] : -1;
}

static int rehash(imp_map *m, size_t cap)
{
    imp_map n;
    n.cap = cap;
    n.n = m->n;
    n.keys = xf_calloc(cap, sizeof *n.keys);
    n.vals = xf_calloc(cap, sizeof *n.vals);
    if (!n.keys || !n.vals) {
        xf_free(n.keys);
        xf_free(n.vals);
        return 0;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t j = slot_of(&n, m->keys[i]);
            n.keys[j] = m->keys[i];
            n.vals[j] = m->vals[i];
        }
    xf_free(m->keys);
    xf_free(m->vals);
    *m = n;
    return 1;
}

xf_status imp_map_put(imp_map *m, const char *key, int val, xf_error *err)
{
    if ((m->n + 1) * 2 > m->cap && !rehash(m, m->cap ? m->cap * 2 : 64))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing value names");
    size_t i = slot_of(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key;
        m->n++;
    }
    m->vals[i] = val;
    return XF_OK;
}
