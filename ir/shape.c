/*
 * shape.c — static tensor shapes (rank <= XF_MAX_DIMS), numpy broadcasting,
 * strides, element types, and the one check that a shape's element and byte
 * counts fit (xf_shape_check). Shapes are values, copied freely.
 */
#include "ir.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

xf_shape xf_shape_make(int rank, const int64_t *dims)
{
    xf_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int i = 0; i < rank && i < XF_MAX_DIMS; i++) s.dims[i] = dims[i];
    return s;
}

int64_t xf_shape_numel(const xf_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->dims[i];
    return n;
}

int xf_shape_equal(const xf_shape *a, const xf_shape *b)
{
    if (a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

char *xf_shape_str(const xf_shape *s, char *buf, size_t n)
{
    size_t off = 0;
    if (n == 0) return buf;
    buf[0] = '\0';
    off += (size_t)snprintf(buf + off, n - off, "[");
    for (int i = 0; i < s->rank && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%lld", i ? "," : "", (long long)s->dims[i]);
    if (off < n) snprintf(buf + off, n - off, "]");
    return buf;
}

xf_status xf_shape_broadcast(const xf_shape *a, const xf_shape *b, xf_shape *out, xf_error *err)
{
    xf_shape r;
    memset(&r, 0, sizeof r);
    r.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r.rank; i++) {
        int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            char sa[96], sb[96];
            return XF_FAIL(err, XF_ERR_SHAPE, "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)",
                           xf_shape_str(a, sa, sizeof sa), xf_shape_str(b, sb, sizeof sb), i,
                           (long long)da, (long long)db);
        }
        r.dims[i] = da == 1 ? db : da;
    }
    *out = r;
    return XF_OK;
}

void xf_shape_strides(const xf_shape *s, int64_t *strides)
{
    int64_t st = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
}

xf_status xf_shape_check(const xf_shape *s, xf_dtype dtype, int64_t *numel, size_t *bytes,
                         xf_error *err)
{
    char buf[160];
    if (s->rank < 0 || s->rank > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_SHAPE, "rank %d is not in 0..%d", s->rank, XF_MAX_DIMS);
    int64_t n = 1, span = 1; /* span: product with zero dims counted as 1 */
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->dims[i];
        if (d < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "shape %s has a negative dimension (dim %d)",
                           xf_shape_str(s, buf, sizeof buf), i);
        if (d > 1 && span > XF_SHAPE_MAX_ELEMS / d)
            return XF_FAIL(err, XF_ERR_SHAPE, "shape %s has more than 2^62 elements",
                           xf_shape_str(s, buf, sizeof buf));
        if (d > 1) span *= d;
        n *= d;
    }
    size_t es = xf_dtype_size(dtype);
    if (es > 1 && (span > XF_SHAPE_MAX_ELEMS / (int64_t)es ||
                   (uint64_t)span > (uint64_t)(SIZE_MAX / es)))
        return XF_FAIL(err, XF_ERR_SHAPE, "shape %s of %s takes more than 2^62 bytes",
                       xf_shape_str(s, buf, sizeof buf), xf_dtype_name(dtype));
    if (numel) *numel = n;
    if (bytes) *bytes = (size_t)n * es;
    return XF_OK;
}

size_t xf_dtype_size(xf_dtype t)
{
    switch (t) {
    case XF_F32: return 4;
    case XF_I64: return 8;
    case XF_I32: return 4;
    case XF_BOOL: return 1;
    case XF_F16: return 2;
    case XF_F64: return 8;
    case XF_I8: return 1;
    case XF_U8: return 1;
    default: return 0;
    }
}

const char *xf_dtype_name(xf_dtype t)
{
    switch (t) {
    case XF_F32: return "float32";
    case XF_I64: return "int64";
    case XF_I32: return "int32";
    case XF_BOOL: return "bool";
    case XF_F16: return "float16";
    case XF_F64: return "float64";
    case XF_I8: return "int8";
    case XF_U8: return "uint8";
    default: return "invalid";
    }
}
