/*
 * field_internal.h — private to enumerate/: the arithmetic of the fingerprint
 * field Z_p (p = 2^61 - 1) and the hash mixing step, as inline functions.
 *
 * The kernels (fpeval*.c), the tensor hash and the graph keys apply these
 * to every element of every node the enumerator evaluates, hundreds of
 * millions of times at four operators. As calls into another file they were
 * not inlined (the build has no link-time optimisation), and the call cost
 * more than the arithmetic. field.c's public xf_enum_fp_* are these same
 * functions, so there is one definition of each.
 */
#ifndef XF_ENUMERATE_FIELD_INTERNAL_H
#define XF_ENUMERATE_FIELD_INTERNAL_H

#include "enumerate.h"

/* Any 64-bit integer reduced into [0, p). */
static inline uint64_t en_fp_reduce(uint64_t a)
{
    uint64_t r = (a & XF_ENUM_P) + (a >> 61);
    return r >= XF_ENUM_P ? r - XF_ENUM_P : r;
}

static inline uint64_t en_fp_add(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r >= XF_ENUM_P ? r - XF_ENUM_P : r;
}

static inline uint64_t en_fp_sub(uint64_t a, uint64_t b)
{
    return a >= b ? a - b : a + XF_ENUM_P - b;
}

static inline uint64_t en_fp_mul(uint64_t a, uint64_t b)
{
    unsigned __int128 z = (unsigned __int128)a * b;
    uint64_t lo = (uint64_t)z & XF_ENUM_P, hi = (uint64_t)(z >> 61);
    return en_fp_reduce(lo + hi);
}

/* A sum of products z < 2^127 reduced into [0, p). */
static inline uint64_t en_fp_reduce128(unsigned __int128 z)
{
    uint64_t lo = (uint64_t)z & XF_ENUM_P, mid = (uint64_t)(z >> 61) & XF_ENUM_P;
    uint64_t hi = (uint64_t)(z >> 122);
    return en_fp_reduce(lo + mid + hi);
}

/* Keyed pseudo-random function Z_p -> Z_p: the splitmix64 finaliser over
 * key and argument (cheap, well mixed). */
static inline uint64_t en_fp_prf(uint64_t key, uint64_t x)
{
    uint64_t z = x * 0x9E3779B97F4A7C15ull ^ key;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return en_fp_reduce(z);
}

/* Mixing step for every hash built in enumerate/. */
static inline uint64_t en_fp_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

#endif /* XF_ENUMERATE_FIELD_INTERNAL_H */
