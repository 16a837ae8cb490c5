/*
 * hashtab.c — the one hash table: open addressing with linear probing over
 * nonzero 64-bit keys, each slot holding a 64-bit value (a count, an index
 * into the caller's array, a bit pattern). Capacity is a power of two kept
 * at most half full, so probes are short; the slot of a key is its
 * Fibonacci hash (the key times 2^64/phi, high bits), which spreads keys
 * that are already hashes and small integers alike.
 *
 * A table keyed by the hash of a larger key (a string, a struct) uses
 * xf_htab_add and walks xf_htab_next: every entry with that hash comes back
 * in turn and the caller compares the real keys. A caller that knows the
 * next keys ahead (a polynomial product's monomials) prefetches their
 * slots (xf_htab_prefetch), so that its cache misses overlap.
 */
#include "ir.h"

#include <stdlib.h>

/* The slot a key starts probing from in a table of cap slots. */
static size_t home(size_t cap, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

void xf_htab_init(xf_htab *t)
{
    t->slot = NULL;
    t->cap = t->n = 0;
}

void xf_htab_free(xf_htab *t)
{
    xf_free(t->slot);
    xf_htab_init(t);
}

void xf_htab_clear(xf_htab *t)
{
    for (size_t i = 0; i < t->cap; i++) t->slot[i].key = 0;
    t->n = 0;
}

static void place(xf_htab_slot *slot, size_t cap, uint64_t key, uint64_t val)
{
    size_t i = home(cap, key);
    while (slot[i].key) i = (i + 1) & (cap - 1);
    slot[i].key = key;
    slot[i].val = val;
}

xf_status xf_htab_reserve(xf_htab *t, size_t n, xf_error *err)
{
    if (2 * n <= t->cap) return XF_OK;
    size_t cap = t->cap ? t->cap : 16;
    while (cap < 2 * n) cap *= 2;
    xf_htab_slot *slot = xf_calloc(cap, sizeof *slot);
    if (!slot) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing a hash table to %zu slots", cap);
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].key) place(slot, cap, t->slot[i].key, t->slot[i].val);
    xf_free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return XF_OK;
}

uint64_t *xf_htab_get(const xf_htab *t, uint64_t key)
{
    if (!t->n) return NULL;
    for (size_t i = home(t->cap, key);; i = (i + 1) & (t->cap - 1)) {
        if (t->slot[i].key == key) return &t->slot[i].val;
        if (!t->slot[i].key) return NULL;
    }
}

xf_status xf_htab_put(xf_htab *t, uint64_t key, uint64_t **val, int *added, xf_error *err)
{
    uint64_t *v = xf_htab_get(t, key);
    if (added) *added = !v;
    if (!v) {
        xf_status st = xf_htab_add(t, key, 0, err);
        if (st != XF_OK) {
            if (val) *val = NULL;
            return st;
        }
        v = xf_htab_get(t, key);
    }
    if (val) *val = v;
    return XF_OK;
}

xf_status xf_htab_add(xf_htab *t, uint64_t key, uint64_t val, xf_error *err)
{
    if (!key) return XF_FAIL(err, XF_ERR_INVALID, "hash table key 0 is reserved for empty slots");
    xf_status st = xf_htab_reserve(t, t->n + 1, err);
    if (st != XF_OK) return st;
    place(t->slot, t->cap, key, val);
    t->n++;
    return XF_OK;
}

uint64_t *xf_htab_next(const xf_htab *t, uint64_t key, size_t *pos)
{
    if (!t->n) return NULL;
    size_t i = *pos == XF_HTAB_START ? home(t->cap, key) : (*pos + 1) & (t->cap - 1);
    for (;; i = (i + 1) & (t->cap - 1)) {
        if (!t->slot[i].key) return NULL;
        if (t->slot[i].key == key) {
            *pos = i;
            return &t->slot[i].val;
        }
    }
}

void xf_htab_prefetch(const xf_htab *t, uint64_t key)
{
    if (t->cap) __builtin_prefetch(&t->slot[home(t->cap, key)]);
}
