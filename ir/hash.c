/*
 * hash.c — the byte hasher built on the 64-bit mixer. They define
 * the values stored in the rules database (the canonical graph hash column)
 * and the keys every hash table and graph hash uses, so they must never
 * change: a different mixer would change the database bytes.
 *
 * xf_hash_u64 (inline in ir.h) folds one word into a running hash;
 * xf_hash_bytes reads 16 bytes per round in two independent FNV-style lanes
 * and finishes with xf_hash_u64. The enumerator's
 * fingerprint arithmetic (enumerate/fpeval.c, field.c) has mixers of its
 * own on purpose: they define the fingerprints stored with every rule.
 */
#include "ir.h"

#include <string.h>

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
