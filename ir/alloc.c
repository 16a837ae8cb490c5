/*
 * alloc.c — the allocation hook: xf_malloc and friends, through which every
 * allocation of the library passes (xf_grow, an array's doubling, too), so
 * that one xf_set_allocator call can count, pool or fail them (the
 * out-of-memory tests fail the N-th one).
 * Without a hook they are the C library's own calls (calloc stays calloc:
 * large zeroed blocks come straight from fresh pages), and xf_heap_trim
 * hands the C library's free heap pages back between phases;
 * xf_heap_huge_pages backs the next part of the heap by huge pages in a
 * worker that will fill it at once, and xf_heap_collapse_huge remaps what
 * a process holds onto huge pages before it forks many times.
 */
#define _DEFAULT_SOURCE /* sbrk, madvise's MADV_HUGEPAGE */
#include "ir.h"

#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

void xf_heap_huge_pages(size_t bytes)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (hooked || bytes < 2 * huge || bytes > (size_t)1 << 30) return;
    /* Blocks up to the largest mmap threshold come from the heap, which is
     * grown by `bytes` at once and never trimmed: the table a solver fills
     * lands in the huge pages set aside here, as does what follows it. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, INT32_MAX);
    mallopt(M_TOP_PAD, (int)bytes);
    uintptr_t lo = (uintptr_t)sbrk(0);
    void *p = malloc(huge); /* grows the heap by huge + bytes, untouched */
    uintptr_t hi = (uintptr_t)sbrk(0);
    int grown = p != NULL;
    free(p);
    if (!grown || lo == (uintptr_t)-1 || hi == (uintptr_t)-1 || hi <= lo) return;
    lo = (lo + huge - 1) & ~(huge - 1);
    hi &= ~(huge - 1);
    if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)bytes;
#endif
}

#if defined(__linux__) && defined(MADV_HUGEPAGE)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1's synchronous collapse; older kernels refuse it */
#endif
/* Collapses the mostly resident 2 MB ranges of [lo, hi). */
static void collapse_range(uintptr_t lo, uintptr_t hi)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    unsigned char resident[512]; /* one byte per 4 KB page of a 2 MB range */
    lo = (lo + huge - 1) & ~(huge - 1);
    hi &= ~(huge - 1);
    for (uintptr_t at = lo; at < hi; at += huge) {
        if (mincore((void *)at, huge, resident) != 0) continue;
        int n = 0;
        for (int i = 0; i < 512; i++) n += resident[i] & 1;
        /* a range mostly in use: one entry instead of 512; a sparse one
         * would be filled with zeros */
        if (n >= 256 && madvise((void *)at, huge, MADV_HUGEPAGE) == 0)
            (void)madvise((void *)at, huge, MADV_COLLAPSE);
    }
}
#endif

void xf_heap_collapse_huge(void)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (hooked || sysconf(_SC_PAGESIZE) != 4096) return;
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return;
    /* the heap and anonymous private mappings (malloc's large blocks), read
     * whole before any is changed */
    uintptr_t lo[256], hi[256];
    int n = 0;
    char line[512];
    while (n < 256 && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        char perms[8] = "", path[256] = "";
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, perms, path) < 3) continue;
        if (strcmp(perms, "rw-p") == 0 && (!path[0] || strcmp(path, "[heap]") == 0) &&
            b - a <= ((unsigned long)1 << 36)) /* not a sanitizer's shadow, terabytes */
            lo[n] = a, hi[n++] = b;
    }
    fclose(f);
    for (int i = 0; i < n; i++) collapse_range(lo[i], hi[i]);
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

int xf_grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 1;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *p = xf_realloc(*arr, (size_t)nc * elem);
    if (!p) return 0;
    *arr = p;
    *cap = nc;
    return 1;
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
