/*
 * params_codec.c — xf_params in the graph serialization. Every field has a
 * fixed tag (never reused, so old files stay readable when fields are
 * added); only fields whose bytes are not all zero are written, because a
 * zero struct is every op's default. Integers are zig-zag varints; arrays
 * give their length up to the last non-zero entry; floats are stored as
 * their IEEE bit patterns, so decoding reproduces the struct byte for byte
 * (and the canonical hash with it).
 */
#include "db_internal.h"

#include <stddef.h>
#include <string.h>

typedef enum field_kind { F_I32, F_I64, F_F32, F_F64 } field_kind;

typedef struct field {
    uint8_t tag;
    field_kind kind;
    size_t offset;
    int count; /* array length; 1 for scalars */
} field;

#define FIELD(tag, kind, member, count) {tag, kind, offsetof(xf_params, member), count}

static const field fields[] = {
    FIELD(1, F_I32, axis, 1),
    FIELD(2, F_I32, n_axes, 1),
    FIELD(3, F_I64, axes, XF_MAX_DIMS),
    FIELD(4, F_I64, starts, XF_MAX_DIMS),
    FIELD(5, F_I64, ends, XF_MAX_DIMS),
    FIELD(6, F_I64, steps, XF_MAX_DIMS),
    FIELD(7, F_I32, kernel, 2),
    FIELD(8, F_I32, stride, 2),
    FIELD(9, F_I32, pads, 4),
    FIELD(10, F_I32, dilation, 2),
    FIELD(11, F_I32, group, 1),
    FIELD(12, F_I32, activation, 1),
    FIELD(13, F_I32, keepdims, 1),
    FIELD(14, F_I32, trans_a, 1),
    FIELD(15, F_I32, trans_b, 1),
    FIELD(16, F_I32, count_include_pad, 1),
    FIELD(17, F_I32, ceil_mode, 1),
    FIELD(18, F_I32, to, 1),
    FIELD(19, F_I32, pad_mode, 1),
    FIELD(20, F_I32, n_shape, 1),
    FIELD(21, F_I32, n_split, 1),
    FIELD(22, F_F32, alpha, 1),
    FIELD(23, F_F32, beta, 1),
    FIELD(24, F_F32, epsilon, 1),
    FIELD(25, F_F64, value, 1),
    FIELD(26, F_I64, shape, XF_MAX_DIMS),
    FIELD(27, F_I64, split, XF_MAX_SPLIT),
};

#define N_FIELDS ((int)(sizeof fields / sizeof fields[0]))

static size_t kind_size(field_kind k)
{
    return k == F_I32 || k == F_F32 ? 4 : 8;
}

static int elem_zero(const uint8_t *p, size_t es)
{
    if (es == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v == 0;
    }
    uint64_t v;
    memcpy(&v, p, 8);
    return v == 0;
}

/* Entries up to and including the last non-zero one. */
static int used_count(const uint8_t *base, const field *f)
{
    size_t es = kind_size(f->kind);
    int n = f->count;
    while (n > 0 && elem_zero(base + (size_t)(n - 1) * es, es)) n--;
    return n;
}

static void put_elem(bytebuf *b, field_kind k, const uint8_t *p)
{
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    uint64_t u64;
    uint8_t le[8];
    switch (k) {
    case F_I32:
        memcpy(&i32, p, 4);
        db_put_svarint(b, i32);
        break;
    case F_I64:
        memcpy(&i64, p, 8);
        db_put_svarint(b, i64);
        break;
    case F_F32:
        memcpy(&u32, p, 4);
        for (int i = 0; i < 4; i++) le[i] = (uint8_t)(u32 >> (8 * i));
        db_put_bytes(b, le, 4);
        break;
    case F_F64:
        memcpy(&u64, p, 8);
        for (int i = 0; i < 8; i++) le[i] = (uint8_t)(u64 >> (8 * i));
        db_put_bytes(b, le, 8);
        break;
    }
}

void db_params_encode(bytebuf *b, const xf_params *p)
{
    const uint8_t *base = (const uint8_t *)p;
    int n = 0, used_of[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) {
        used_of[i] = used_count(base + fields[i].offset, &fields[i]);
        if (used_of[i] > 0) n++;
    }
    db_put_uvarint(b, (uint64_t)n);
    for (int i = 0; i < N_FIELDS; i++) {
        const field *f = &fields[i];
        const uint8_t *fp = base + f->offset;
        int used = used_of[i];
        if (used == 0) continue;
        db_put_uvarint(b, f->tag);
        if (f->count > 1) db_put_uvarint(b, (uint64_t)used);
        for (int k = 0; k < used; k++) put_elem(b, f->kind, fp + (size_t)k * kind_size(f->kind));
    }
}

static xf_status get_elem(bytereader *r, field_kind k, uint8_t *p, xf_error *err)
{
    int64_t v;
    uint8_t le[8];
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    switch (k) {
    case F_I32:
        v = db_get_svarint(r);
        if (v < INT32_MIN || v > INT32_MAX)
            return XF_FAIL(err, XF_ERR_PARSE, "parameter value %lld does not fit 32 bits",
                           (long long)v);
        int32_t i32 = (int32_t)v;
        memcpy(p, &i32, 4);
        break;
    case F_I64:
        v = db_get_svarint(r);
        memcpy(p, &v, 8);
        break;
    case F_F32:
        db_get_bytes(r, le, 4);
        for (int i = 0; i < 4; i++) u32 |= (uint32_t)le[i] << (8 * i);
        memcpy(p, &u32, 4);
        break;
    case F_F64:
        db_get_bytes(r, le, 8);
        for (int i = 0; i < 8; i++) u64 |= (uint64_t)le[i] << (8 * i);
        memcpy(p, &u64, 8);
        break;
    }
    return XF_OK;
}

xf_status db_params_decode(bytereader *r, xf_params *p, xf_error *err)
{
    *p = xf_params_default();
    uint8_t *base = (uint8_t *)p;
    uint64_t n = db_get_uvarint(r);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        uint64_t tag = db_get_uvarint(r);
        const field *f = NULL;
        for (int k = 0; k < N_FIELDS; k++)
            if (fields[k].tag == tag) f = &fields[k];
        if (!f)
            return XF_FAIL(err, XF_ERR_PARSE,
                           "unknown parameter field %llu (written by a newer rlflow?)",
                           (unsigned long long)tag);
        uint64_t used = f->count > 1 ? db_get_uvarint(r) : 1;
        if (used > (uint64_t)f->count)
            return XF_FAIL(err, XF_ERR_PARSE, "parameter field %d has %llu entries, at most %d",
                           (int)f->tag, (unsigned long long)used, f->count);
        for (uint64_t k = 0; k < used; k++) {
            xf_status st = get_elem(r, f->kind, base + f->offset + k * kind_size(f->kind), err);
            if (st != XF_OK) return st;
        }
    }
    if (r->bad) return XF_FAIL(err, XF_ERR_PARSE, "parameters are truncated");
    return XF_OK;
}
