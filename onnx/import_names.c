/*
 * import_names.c — the importer's string -> int hash map: entries appended
 * to two arrays, found through an xf_htab keyed by the string's hash. ONNX
 * graphs refer to every value by name, so resolving names must stay O(1)
 * for models with 10^4 nodes.
 */
#include "import_internal.h"

#include <stdlib.h>
#include <string.h>

void ox_map_init(imp_map *m)
{
    memset(m, 0, sizeof *m);
}

void ox_map_free(imp_map *m)
{
    xf_htab_free(&m->index);
    xf_free(m->keys);
    xf_free(m->vals);
    ox_map_init(m);
}

static uint64_t hash_str(const char *s)
{
    return xf_htab_key(xf_hash_bytes(0, s, strlen(s)));
}

/* Entry of key, or -1. */
static long find(const imp_map *m, const char *key, uint64_t h)
{
    size_t pos = XF_HTAB_START;
    for (const uint64_t *e; (e = xf_htab_next(&m->index, h, &pos));)
        if (strcmp(m->keys[*e], key) == 0) return (long)*e;
    return -1;
}

int ox_map_get(const imp_map *m, const char *key)
{
    long e = find(m, key, hash_str(key));
    return e < 0 ? -1 : m->vals[e];
}

xf_status ox_map_put(imp_map *m, const char *key, int val, xf_error *err)
{
    uint64_t h = hash_str(key);
    long e = find(m, key, h);
    if (e >= 0) {
        m->vals[e] = val;
        return XF_OK;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        const char **k = xf_realloc(m->keys, cap * sizeof *k);
        if (k) m->keys = k;
        int *v = xf_realloc(m->vals, cap * sizeof *v);
        if (v) m->vals = v;
        if (!k || !v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing value names");
        m->cap = cap;
    }
    if (xf_htab_add(&m->index, h, m->n, NULL) != XF_OK)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing value names");
    m->keys[m->n] = key;
    m->vals[m->n++] = val;
    return XF_OK;
}
