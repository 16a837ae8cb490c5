/*
 * store.c — the two containers of an enumeration: per-level arrays of
 * compact graph records (24 bytes a graph, whatever its size) and the class
 * table, an open-addressing hash map from fingerprint to the class's
 * representative (its record and structural hash), and the set of the
 * representatives' structural hashes ("is this subgraph a representative?"),
 * and the advice that puts large tables on huge pages.
 */
#define _DEFAULT_SOURCE /* madvise */

#include "enumerate_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void en_advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t page = 4096, huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + n) & ~(page - 1);
    if (e >= a + huge) (void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* advice: may be refused */
#else
    (void)p;
    (void)n;
#endif
}

xf_status en_glevel_push(glevel *l, const grec *r, xf_error *err)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 1024;
        grec *v = xf_realloc(l->v, cap * sizeof *v);
        if (!v)
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory storing %zu graphs", cap);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *r;
    return XF_OK;
}

void en_glevel_free(glevel *l)
{
    xf_free(l->v);
    memset(l, 0, sizeof *l);
}

xf_status en_ctable_init(ctable *t, xf_error *err)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < CT_SEGMENTS; i++) {
        t->seg[i].cap = 256;
        t->seg[i].slots = xf_calloc(t->seg[i].cap, sizeof(centry));
        if (!t->seg[i].slots) {
            en_ctable_free(t);
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for the class table");
        }
    }
    return XF_OK;
}

void en_ctable_free(ctable *t)
{
    for (int i = 0; i < CT_SEGMENTS; i++) xf_free(t->seg[i].slots);
    memset(t, 0, sizeof *t);
}

size_t en_ctable_bytes(const ctable *t)
{
    size_t b = 0;
    for (int i = 0; i < CT_SEGMENTS; i++) b += t->seg[i].cap * sizeof(centry);
    return b;
}

static size_t slot_of(uint64_t fp, size_t cap)
{
    return (size_t)((fp * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

const centry *en_ctable_find(const ctable *t, uint64_t fp)
{
    const ctseg *s = &t->seg[fp >> 56];
    for (size_t i = slot_of(fp, s->cap);; i = (i + 1) & (s->cap - 1)) {
        const centry *e = &s->slots[i];
        if (e->fp == fp) return e;
        if (e->fp == 0) return NULL;
    }
}

void en_ctable_prefetch(const ctable *t, uint64_t fp)
{
    const ctseg *s = &t->seg[fp >> 56];
    __builtin_prefetch(&s->slots[slot_of(fp, s->cap)]);
}

static void place(centry *slots, size_t cap, const centry *e)
{
    size_t i = slot_of(e->fp, cap);
    while (slots[i].fp != 0) i = (i + 1) & (cap - 1);
    slots[i] = *e;
}

/* Segments grow at 3/4 load: between 3/8 and 3/4 full, 16 bytes a slot. */
xf_status en_ctable_insert(ctable *t, const centry *e, xf_error *err)
{
    ctseg *s = &t->seg[e->fp >> 56];
    if ((s->n + 1) * 4 > s->cap * 3) {
        size_t cap = s->cap * 2;
        centry *n = xf_calloc(cap, sizeof *n);
        if (!n)
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory growing the class table "
                           "(%zu classes)", t->n);
        en_advise_huge(n, cap * sizeof *n);
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i].fp) place(n, cap, &s->slots[i]);
        xf_free(s->slots);
        s->slots = n;
        s->cap = cap;
    }
    place(s->slots, s->cap, e);
    s->n++;
    t->n++;
    return XF_OK;
}

xf_status en_hset_init(hset *s, size_t cap, xf_error *err)
{
    size_t c = 1024;
    while (c < cap) c *= 2;
    s->slots = xf_calloc(c, sizeof *s->slots);
    if (s->slots) en_advise_huge(s->slots, c * sizeof *s->slots);
    s->cap = s->slots ? c : 0;
    s->n = 0;
    if (!s->slots)
        return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for a hash set of %zu", c);
    return XF_OK;
}

void en_hset_free(hset *s)
{
    xf_free(s->slots);
    memset(s, 0, sizeof *s);
}

static uint64_t nonzero(uint64_t h)
{
    return h ? h : 1;
}

int en_hset_has(const hset *s, uint64_t h)
{
    h = nonzero(h);
    for (size_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i] == h) return 1;
        if (s->slots[i] == 0) return 0;
    }
}

void en_hset_prefetch(const hset *s, uint64_t h)
{
    __builtin_prefetch(&s->slots[slot_of(nonzero(h), s->cap)]);
}

static void hplace(uint64_t *slots, size_t cap, uint64_t h)
{
    size_t i = slot_of(h, cap);
    while (slots[i] != 0 && slots[i] != h) i = (i + 1) & (cap - 1);
    slots[i] = h;
}

xf_status en_hset_add(hset *s, uint64_t h, xf_error *err)
{
    h = nonzero(h);
    if (en_hset_has(s, h)) return XF_OK;
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap * 2;
        uint64_t *n = xf_calloc(cap, sizeof *n);
        if (!n) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory growing a hash set to %zu", cap);
        en_advise_huge(n, cap * sizeof *n);
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i]) hplace(n, cap, s->slots[i]);
        xf_free(s->slots);
        s->slots = n;
        s->cap = cap;
    }
    hplace(s->slots, s->cap, h);
    s->n++;
    return XF_OK;
}
