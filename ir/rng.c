/*
 * rng.c — deterministic pseudo-random numbers (splitmix64). Same seed, same
 * stream, on every platform, so generated models and test inputs are
 * reproducible.
 */
#include "ir.h"

#include <math.h>

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
