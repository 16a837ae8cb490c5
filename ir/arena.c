/*
 * arena.c — a bump allocator: many small allocations, one free. Used for
 * per-phase scratch (interpreter bookkeeping, importer temporaries).
 */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

struct xf_arena_block {
    xf_arena_block *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void xf_arena_init(xf_arena *a, size_t block_size)
{
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
    a->bytes_used = 0;
}

void *xf_arena_alloc(xf_arena *a, size_t bytes)
{
    size_t need = (bytes + 15) & ~(size_t)15;
    xf_arena_block *b = a->head;
    if (!b || b->size - b->used < need) {
        size_t size = need > a->block_size ? need : a->block_size;
        b = xf_malloc(sizeof *b + size);
        if (!b) return NULL;
        b->size = size;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    a->bytes_used += need;
    memset(p, 0, bytes);
    return p;
}

char *xf_arena_strdup(xf_arena *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xf_arena_alloc(a, n);
    if (p) memcpy(p, s, n);
    return p;
}

void xf_arena_free(xf_arena *a)
{
    xf_arena_block *b = a->head;
    while (b) {
        xf_arena_block *next = b->next;
        xf_free(b);
        b = next;
    }
    a->head = NULL;
    a->bytes_used = 0;
}
