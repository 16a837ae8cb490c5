/*
 * bytes.c — the little byte codec the graph serialization is written in:
 * a growable output buffer and a bounds-checked reader, with LEB128
 * unsigned varints and zig-zag signed varints. Errors are sticky flags
 * (oom / bad) checked once by the caller, which keeps the codecs linear.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

static int bb_reserve(bytebuf *b, size_t more)
{
    if (b->oom) return 0;
    if (b->len + more <= b->cap) return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more) cap *= 2;
    uint8_t *d = xf_realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return 0;
    }
    b->data = d;
    b->cap = cap;
    return 1;
}

void db_put_bytes(bytebuf *b, const void *p, size_t n)
{
    if (!bb_reserve(b, n)) return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void db_put_byte(bytebuf *b, uint8_t v)
{
    db_put_bytes(b, &v, 1);
}

void db_put_uvarint(bytebuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t c = (uint8_t)(v & 0x7f);
        v >>= 7;
        tmp[n++] = (uint8_t)(c | (v ? 0x80 : 0));
    } while (v);
    db_put_bytes(b, tmp, n);
}

void db_put_svarint(bytebuf *b, int64_t v)
{
    uint64_t u = (uint64_t)v;
    db_put_uvarint(b, (u << 1) ^ (v < 0 ? ~(uint64_t)0 : 0));
}

uint8_t db_get_byte(bytereader *r)
{
    if (r->bad || r->pos >= r->len) {
        r->bad = 1;
        return 0;
    }
    return r->p[r->pos++];
}

void db_get_bytes(bytereader *r, void *out, size_t n)
{
    if (r->bad || r->len - r->pos < n) {
        r->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p + r->pos, n);
    r->pos += n;
}

uint64_t db_get_uvarint(bytereader *r)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        uint8_t c = db_get_byte(r);
        if (r->bad) return 0;
        if (shift == 63 && c > 1) break; /* would overflow 64 bits */
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) return v;
    }
    r->bad = 1;
    return 0;
}

int64_t db_get_svarint(bytereader *r)
{
    uint64_t u = db_get_uvarint(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}
