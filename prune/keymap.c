/*
 * keymap.c — a hash map from int32 token sequences to a long, used for
 * generality buckets and interning (canonical rule forms are indexed by
 * their hash alone, stage_common.c). Keys are copied
 * into one pool and entries into one array; an xf_htab maps each key's hash
 * to its entries. Nothing is ever removed.
 */
#include "prune/prune_internal.h"

#include <stdlib.h>
#include <string.h>

void pr_keymap_init(pr_keymap *m)
{
    memset(m, 0, sizeof *m);
}

void pr_keymap_free(pr_keymap *m)
{
    xf_free(m->pool);
    xf_free(m->ents);
    xf_htab_free(&m->index);
    pr_keymap_init(m);
}

static uint64_t key_hash(const int32_t *key, uint32_t len)
{
    uint64_t h = xf_hash_u64(0x6B65796Du, len);
    return xf_hash_bytes(h, key, (size_t)len * sizeof *key);
}

/* Entry index of key, or -1. */
static long find(const pr_keymap *m, uint64_t h, const int32_t *key, uint32_t len)
{
    size_t pos = XF_HTAB_START;
    for (const uint64_t *e; (e = xf_htab_next(&m->index, xf_htab_key(h), &pos));) {
        const pr_keymap_ent *en = &m->ents[*e];
        if (en->hash == h && en->len == len &&
            (len == 0 || memcmp(m->pool + en->off, key, (size_t)len * sizeof *key) == 0))
            return (long)*e;
    }
    return -1;
}

long pr_keymap_get(const pr_keymap *m, const int32_t *key, uint32_t len)
{
    long e = find(m, key_hash(key, len), key, len);
    return e < 0 ? -1 : m->ents[e].value;
}

xf_status pr_keymap_put(pr_keymap *m, const int32_t *key, uint32_t len, long value, long *old,
                        xf_error *err)
{
    *old = -1;
    uint64_t h = key_hash(key, len);
    long e = find(m, h, key, len);
    if (e >= 0) {
        *old = m->ents[e].value;
        return XF_OK;
    }
    if (m->n_pool + len > m->cap_pool) {
        size_t cap = m->cap_pool ? m->cap_pool * 2 : 4096;
        while (cap < m->n_pool + len) cap *= 2;
        int32_t *p = xf_realloc(m->pool, cap * sizeof *p);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (key pool)");
        m->pool = p;
        m->cap_pool = cap;
    }
    if (m->n_ents == m->cap_ents) {
        size_t cap = m->cap_ents ? m->cap_ents * 2 : 512;
        pr_keymap_ent *p = xf_realloc(m->ents, cap * sizeof *p);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (key entries)");
        m->ents = p;
        m->cap_ents = cap;
    }
    xf_status st = xf_htab_add(&m->index, xf_htab_key(h), m->n_ents, err);
    if (st != XF_OK) return st;
    if (len > 0) memcpy(m->pool + m->n_pool, key, (size_t)len * sizeof *key);
    m->ents[m->n_ents++] = (pr_keymap_ent){h, m->n_pool, len, value};
    m->n_pool += len;
    return XF_OK;
}
