/*
 * field.c — arithmetic in the fingerprint field Z_p, p = 2^61 - 1 (a
 * Mersenne prime, so reduction is a shift and an add), and the keyed
 * pseudo-random function that stands in for non-linear element-wise
 * operators. Exact arithmetic is what lets fingerprints see linear and
 * polynomial identities (including division by constants, via inverses)
 * without the false positives of wrap-around integers.
 */
#include "enumerate.h"

#define P XF_ENUM_P

uint64_t xf_enum_fp_reduce(uint64_t a)
{
    uint64_t r = (a & P) + (a >> 61);
    return r >= P ? r - P : r;
}

uint64_t xf_enum_fp_add(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r >= P ? r - P : r;
}

uint64_t xf_enum_fp_sub(uint64_t a, uint64_t b)
{
    return a >= b ? a - b : a + P - b;
}

uint64_t xf_enum_fp_mul(uint64_t a, uint64_t b)
{
    unsigned __int128 z = (unsigned __int128)a * b;
    uint64_t lo = (uint64_t)z & P, hi = (uint64_t)(z >> 61);
    return xf_enum_fp_reduce(lo + hi);
}

uint64_t xf_enum_fp_pow(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    while (e) {
        if (e & 1) r = xf_enum_fp_mul(r, a);
        a = xf_enum_fp_mul(a, a);
        e >>= 1;
    }
    return r;
}

uint64_t xf_enum_fp_inv(uint64_t a)
{
    return xf_enum_fp_pow(a, P - 2); /* Fermat; 0 stays 0 */
}

uint64_t xf_enum_fp_prf(uint64_t key, uint64_t x)
{
    /* splitmix64 finaliser over key and argument: cheap, well mixed. */
    uint64_t z = x * 0x9E3779B97F4A7C15ull ^ key;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return xf_enum_fp_reduce(z);
}
