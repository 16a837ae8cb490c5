/*
 * rng.c — deterministic pseudo-random numbers (splitmix64) and the 64-bit
 * hash mixing used for canonical graph hashes. Same seed, same stream, on
 * every platform, so generated models and test inputs are reproducible.
 */
#include "ir.h"

#include <math.h>
#include <string.h>

void xf_rng_seed(xf_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t xf_rng_next(xf_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float xf_rng_uniform(xf_rng *r, float lo, float hi)
{
    double u = (double)(xf_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

float xf_rng_normal(xf_rng *r)
{
    double u1 = ((double)(xf_rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (double)(xf_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

uint64_t xf_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t a = h ^ 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) { /* two independent lanes, 8 bytes each */
        uint64_t w0, w1;
        memcpy(&w0, p + i, 8);
        memcpy(&w1, p + i + 8, 8);
        a = (a ^ w0) * 0x100000001b3ull;
        b = (b ^ w1) * 0x9E3779B97F4A7C15ull;
        a ^= a >> 29;
        b ^= b >> 31;
    }
    for (; i < n; i++) a = (a ^ p[i]) * 0x100000001b3ull;
    return xf_hash_u64(xf_hash_u64(a, b), n);
}

uint64_t xf_hash_u64(uint64_t h, uint64_t v)
{
    uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
