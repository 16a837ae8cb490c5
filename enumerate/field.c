/*
 * field.c — arithmetic in the fingerprint field Z_p, p = 2^61 - 1 (a
 * Mersenne prime, so reduction is a shift and an add), and the keyed
 * pseudo-random function that stands in for non-linear element-wise
 * operators. Exact arithmetic is what lets fingerprints see linear and
 * polynomial identities (including division by constants, via inverses)
 * without the false positives of wrap-around integers. The operations
 * themselves are inline in field_internal.h, where the kernels use them;
 * these are the public entry points.
 */
#include "field_internal.h"

#define P XF_ENUM_P

uint64_t xf_enum_fp_reduce(uint64_t a)
{
    return en_fp_reduce(a);
}

uint64_t xf_enum_fp_add(uint64_t a, uint64_t b)
{
    return en_fp_add(a, b);
}

uint64_t xf_enum_fp_sub(uint64_t a, uint64_t b)
{
    return en_fp_sub(a, b);
}

uint64_t xf_enum_fp_mul(uint64_t a, uint64_t b)
{
    return en_fp_mul(a, b);
}

uint64_t xf_enum_fp_pow(uint64_t a, uint64_t e)
{
    uint64_t r = 1;
    while (e) {
        if (e & 1) r = en_fp_mul(r, a);
        a = en_fp_mul(a, a);
        e >>= 1;
    }
    return r;
}

/* The inverse of a small nonzero a by the extended Euclidean algorithm on
 * (p, a): after the first step the numbers are below a, so it takes a few
 * steps where Fermat's power takes some 90 multiplications. The kernels
 * divide by window sizes and element counts (pooling, means, norms). */
static uint64_t inv_small(uint64_t a)
{
    int64_t r0 = (int64_t)P, r1 = (int64_t)a, t0 = 0, t1 = 1; /* |t| stays below p */
    while (r1 != 0) {
        int64_t q = r0 / r1, r = r0 - q * r1, t = t0 - q * t1;
        r0 = r1, r1 = r;
        t0 = t1, t1 = t;
    }
    return t0 < 0 ? (uint64_t)(t0 + (int64_t)P) : (uint64_t)t0; /* r0 == 1: p is prime */
}

uint64_t xf_enum_fp_inv(uint64_t a)
{
    if (a != 0 && a < ((uint64_t)1 << 32)) return inv_small(a);
    return xf_enum_fp_pow(a, P - 2); /* Fermat; 0 stays 0 */
}

uint64_t xf_enum_fp_prf(uint64_t key, uint64_t x)
{
    return en_fp_prf(key, x);
}
