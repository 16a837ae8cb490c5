/*
 * bounded_patterns.c — the operator patterns of the bounded check's
 * elaboration, kept per form (patterns_internal.h).
 *
 * Why: bounded_ops.c reads an operator's structure off its float kernel,
 * running it once per element of an operand (a 3x3 convolution of a
 * 2x4x4x4 image: 128 runs of the whole convolution). That was a quarter of
 * the elaboration's time in a size-4 worker, and the same forms come back
 * all the time: the enumerated rules' inputs have a few fixed shapes, both
 * sides of a rule hold the same operators, and so do its neighbours. The
 * kernel's answer depends only on the form (operator, parameters, the
 * operands' and results' shapes, all in the key), so a pattern found is the
 * pattern probing would read, and the Z3 terms built from it are the same
 * terms in the same order (the context, its term ids and so the verdicts do
 * not change).
 *
 * Two tables: `base`, what the forking process keeps from the workers
 * (inherited by every worker forked after, read only there), and `own`,
 * what this process read itself. A worker sends `own` from where it was
 * forked; each entry carries a checksum over its key and steps, checked
 * when the forking process merges it, so a worker that broke in the middle
 * of writing it hands on nothing. Each entry: a header, the key (padded to
 * 8 bytes) and the steps. Limits: a pattern over 4 MB is not kept, and
 * each table holds at most 64 MB.
 */
#include "patterns_internal.h"

#include <string.h>

#define PATTERN_MAX ((size_t)4 << 20)
#define TABLE_MAX ((size_t)64 << 20)
#define KEY_SEED 0x9a77e5ull

typedef struct entry_head {
    uint32_t key_len;
    uint32_t reserved;
    int64_t n;      /* steps */
    uint64_t check; /* hash of the key and the steps */
} entry_head;

typedef struct table {
    xf_htab index; /* hash of the key -> offset of the entry + 1 */
    uint8_t *blob;
    size_t len, cap;
} table;

struct vf_patterns {
    table base, own;
    size_t own_from; /* where this process's own entries begin (vf_patterns_forked) */
    int64_t reused;  /* patterns found in base */
};

static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static uint64_t key_hash(const void *key, size_t key_len)
{
    return xf_htab_key(xf_hash_bytes(KEY_SEED, key, key_len));
}

static uint64_t check_of(const void *key, size_t key_len, const vf_pattern_step *steps, int64_t n)
{
    return xf_hash_bytes(xf_hash_bytes(KEY_SEED, key, key_len), steps,
                         (size_t)n * sizeof *steps);
}

static size_t entry_size(size_t key_len, int64_t n)
{
    return sizeof(entry_head) + pad8(key_len) + (size_t)n * sizeof(vf_pattern_step);
}

vf_patterns *vf_patterns_new(void)
{
    return xf_calloc(1, sizeof(vf_patterns));
}

static void table_free(table *t)
{
    xf_htab_free(&t->index);
    xf_free(t->blob);
}

void vf_patterns_free(vf_patterns *p)
{
    if (!p) return;
    table_free(&p->base);
    table_free(&p->own);
    xf_free(p);
}

static const vf_pattern_step *table_find(const table *t, uint64_t h, const void *key,
                                         size_t key_len, int64_t *n)
{
    size_t pos = XF_HTAB_START;
    for (const uint64_t *v; (v = xf_htab_next(&t->index, h, &pos)) != NULL;) {
        const uint8_t *e = t->blob + (*v - 1);
        entry_head head;
        memcpy(&head, e, sizeof head);
        if (head.key_len != key_len || memcmp(e + sizeof head, key, key_len) != 0) continue;
        *n = head.n;
        return (const vf_pattern_step *)(const void *)(e + sizeof head + pad8(key_len));
    }
    return NULL;
}

const vf_pattern_step *vf_patterns_find(vf_patterns *p, const void *key, size_t key_len,
                                        int64_t *n)
{
    uint64_t h = key_hash(key, key_len);
    const vf_pattern_step *s = table_find(&p->base, h, key, key_len, n);
    if (s) {
        p->reused++;
        return s;
    }
    return table_find(&p->own, h, key, key_len, n);
}

/* Appends an entry (its check given) to t; best effort. */
static void table_add(table *t, uint64_t h, const void *key, size_t key_len,
                      const vf_pattern_step *steps, int64_t n, uint64_t check)
{
    size_t size = entry_size(key_len, n);
    if (size > PATTERN_MAX || t->len + size > TABLE_MAX) return;
    if (t->len + size > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : (size_t)64 << 10;
        while (cap < t->len + size) cap *= 2;
        uint8_t *b = xf_realloc(t->blob, cap);
        if (!b) return;
        t->blob = b, t->cap = cap;
    }
    if (xf_htab_add(&t->index, h, (uint64_t)t->len + 1, NULL) != XF_OK) return;
    entry_head head = {(uint32_t)key_len, 0, n, check};
    uint8_t *e = t->blob + t->len;
    memset(e, 0, size);
    memcpy(e, &head, sizeof head);
    memcpy(e + sizeof head, key, key_len);
    if (n) memcpy(e + sizeof head + pad8(key_len), steps, (size_t)n * sizeof *steps);
    t->len += size;
}

void vf_patterns_keep(vf_patterns *p, const void *key, size_t key_len,
                      const vf_pattern_step *steps, int64_t n)
{
    if (n < 0 || key_len > UINT32_MAX) return;
    table_add(&p->own, key_hash(key, key_len), key, key_len, steps, n,
              check_of(key, key_len, steps, n));
}

void vf_patterns_forked(vf_patterns *p)
{
    p->own_from = p->own.len;
    p->reused = 0;
}

const uint8_t *vf_patterns_own(const vf_patterns *p, size_t *len, int64_t *reused)
{
    *len = p->own.len - p->own_from;
    *reused = p->reused;
    return *len ? p->own.blob + p->own_from : NULL;
}

void vf_patterns_merge(vf_patterns *p, const uint8_t *bytes, size_t len)
{
    size_t at = 0;
    while (len - at >= sizeof(entry_head)) {
        entry_head head;
        memcpy(&head, bytes + at, sizeof head);
        size_t room = len - at - sizeof head;
        if (head.n < 0 || pad8(head.key_len) > room ||
            (uint64_t)head.n > (room - pad8(head.key_len)) / sizeof(vf_pattern_step))
            return; /* not an entry: nothing after it can be trusted either */
        const uint8_t *key = bytes + at + sizeof head;
        const uint8_t *raw = key + pad8(head.key_len);
        size_t size = entry_size(head.key_len, head.n);
        /* the steps, aligned for reading */
        vf_pattern_step *steps = head.n ? xf_malloc((size_t)head.n * sizeof *steps) : NULL;
        if (head.n && !steps) return;
        if (head.n) memcpy(steps, raw, (size_t)head.n * sizeof *steps);
        int64_t found = 0;
        uint64_t h = key_hash(key, head.key_len);
        if (check_of(key, head.key_len, steps, head.n) == head.check &&
            !table_find(&p->base, h, key, head.key_len, &found) &&
            !table_find(&p->own, h, key, head.key_len, &found))
            table_add(&p->base, h, key, head.key_len, steps, head.n, head.check);
        xf_free(steps);
        at += size;
    }
}

size_t vf_patterns_kept_bytes(const vf_patterns *p)
{
    return p->base.len;
}
