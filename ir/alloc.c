/*
 * alloc.c — the allocation hook: xf_malloc and friends, through which every
 * allocation of the library passes, so that one xf_set_allocator call can
 * count, pool or fail them (the out-of-memory tests fail the N-th one).
 * Without a hook they are the C library's own calls (calloc stays calloc:
 * large zeroed blocks come straight from fresh pages), and xf_heap_trim
 * hands the C library's free heap pages back between phases.
 */
#include "ir.h"

#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>

static xf_allocator hook;
static int hooked;

void xf_set_allocator(const xf_allocator *a)
{
    if (a) hook = *a;
    hooked = a != NULL;
}

void xf_heap_trim(void)
{
#ifdef __GLIBC__
    if (!hooked) malloc_trim(0);
#endif
}

void *xf_malloc(size_t size)
{
    return hooked ? hook.malloc(hook.user, size) : malloc(size);
}

void *xf_calloc(size_t n, size_t size)
{
    if (!hooked) return calloc(n, size);
    if (size && n > SIZE_MAX / size) return NULL;
    void *p = hook.malloc(hook.user, n * size);
    if (p) memset(p, 0, n * size);
    return p;
}

void *xf_realloc(void *p, size_t size)
{
    return hooked ? hook.realloc(hook.user, p, size) : realloc(p, size);
}

void xf_free(void *p)
{
    if (hooked)
        hook.free(hook.user, p);
    else
        free(p);
}

char *xf_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xf_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The block from xf_malloc is stored just below the aligned pointer, so
 * that aligned memory goes through the hook like any other. */
void *xf_aligned_alloc(size_t align, size_t size)
{
    if (size > SIZE_MAX - align - sizeof(void *)) return NULL;
    unsigned char *raw = xf_malloc(size + align + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t at = ((uintptr_t)(raw + sizeof(void *)) + align - 1) & ~(uintptr_t)(align - 1);
    void **p = (void **)at;
    p[-1] = raw;
    return p;
}

void xf_aligned_free(void *p)
{
    if (p) xf_free(((void **)p)[-1]);
}
