/*
 * keymap.c — an open-addressing hash map from int32 token sequences to a
 * long, used for canonical rule forms, generality buckets and interning.
 * Keys are copied into one pool; nothing is ever removed, so lookups stay
 * simple linear probes.
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
    xf_free(m->slots);
    pr_keymap_init(m);
}

static uint64_t key_hash(const int32_t *key, uint32_t len)
{
    uint64_t h = xf_hash_u64(0x6B65796Du, len);
    return xf_hash_bytes(h, key, (size_t)len * sizeof *key);
}

static long find_slot(const pr_keymap *m, uint64_t h, const int32_t *key, uint32_t len,
                      size_t *slot)
{
    size_t mask = m->n_slots - 1;
    for (size_t s = (size_t)h & mask;; s = (s + 1) & mask) {
        long e = m->slots[s];
        if (e < 0) {
            *slot = s;
            return -1;
        }
        const pr_keymap_ent *en = &m->ents[e];
        if (en->hash == h && en->len == len &&
            (len == 0 || memcmp(m->pool + en->off, key, (size_t)len * sizeof *key) == 0)) {
            *slot = s;
            return e;
        }
    }
}

long pr_keymap_get(const pr_keymap *m, const int32_t *key, uint32_t len)
{
    if (m->n_slots == 0) return -1;
    size_t slot;
    long e = find_slot(m, key_hash(key, len), key, len, &slot);
    return e < 0 ? -1 : m->ents[e].value;
}

static xf_status grow_slots(pr_keymap *m, xf_error *err)
{
    size_t n = m->n_slots ? m->n_slots * 2 : 1024;
    long *slots = xf_malloc(n * sizeof *slots);
    if (!slots) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (key map of %zu slots)", n);
    for (size_t i = 0; i < n; i++) slots[i] = -1;
    for (size_t e = 0; e < m->n_ents; e++) {
        size_t s = (size_t)m->ents[e].hash & (n - 1);
        while (slots[s] >= 0) s = (s + 1) & (n - 1);
        slots[s] = (long)e;
    }
    xf_free(m->slots);
    m->slots = slots;
    m->n_slots = n;
    return XF_OK;
}

xf_status pr_keymap_put(pr_keymap *m, const int32_t *key, uint32_t len, long value, long *old,
                        xf_error *err)
{
    *old = -1;
    if ((m->n_ents + 1) * 2 > m->n_slots) {
        xf_status st = grow_slots(m, err);
        if (st != XF_OK) return st;
    }
    uint64_t h = key_hash(key, len);
    size_t slot;
    long e = find_slot(m, h, key, len, &slot);
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
    if (len > 0) memcpy(m->pool + m->n_pool, key, (size_t)len * sizeof *key);
    m->ents[m->n_ents] = (pr_keymap_ent){h, m->n_pool, len, value};
    m->n_pool += len;
    m->slots[slot] = (long)m->n_ents++;
    return XF_OK;
}
