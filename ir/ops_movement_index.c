/*
 * ops_movement_index.c — gather and pad: copies driven by index maps.
 *
 * gather picks whole slabs of `data` along one axis by run-time indices
 * (int64 or int32, negative ones count from the end); an index out of range
 * is a user error naming the index, checked before anything is written.
 *
 * pad is separable: output index k of dim d reads input index map_d(k)
 * (k - begin, then reflected, clamped or marked "constant" when it falls
 * outside). Negative pads crop. The kernel walks output rows with an
 * odometer, fills rows whose outer index is padding with the constant, and
 * copies the unpadded middle of every other row with one memcpy.
 */
#include "op_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------- gather */

XF_DECLARE_INFER(gather)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *d = &in_sh[0], *ix = &in_sh[1];
    char sd[96];
    int axis = xf_norm_axis(p->axis, d->rank);
    if (axis < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "gather: axis %d is out of range for data %s", p->axis,
                       xf_shape_str(d, sd, sizeof sd));
    if (in_dt[1] != XF_I64 && in_dt[1] != XF_I32)
        return XF_FAIL(err, XF_ERR_SHAPE, "gather: indices must be int64 or int32, not %s",
                       xf_dtype_name(in_dt[1]));
    int rank = d->rank - 1 + ix->rank;
    if (rank > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "gather: output rank %d (data %s, indices rank %d) exceeds %d", rank,
                       xf_shape_str(d, sd, sizeof sd), ix->rank, XF_MAX_DIMS);
    xf_shape o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < axis; i++) o.dims[o.rank++] = d->dims[i];
    for (int i = 0; i < ix->rank; i++) o.dims[o.rank++] = ix->dims[i];
    for (int i = axis + 1; i < d->rank; i++) o.dims[o.rank++] = d->dims[i];
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    return XF_OK;
}

static int64_t index_at(const xf_tensor *t, int64_t i)
{
    return t->dtype == XF_I64 ? ((const int64_t *)t->data)[i]
                              : (int64_t)((const int32_t *)t->data)[i];
}

XF_DECLARE_RUN(gather)
{
    (void)n_in;
    (void)n_out;
    const xf_tensor *x = in[0], *ix = in[1];
    int axis = xf_norm_axis(p->axis, x->shape.rank);
    if (axis < 0) return XF_FAIL(err, XF_ERR_SHAPE, "gather: axis %d is out of range", p->axis);
    if (ix->dtype != XF_I64 && ix->dtype != XF_I32)
        return XF_FAIL(err, XF_ERR_SHAPE, "gather: indices must be int64 or int32");
    int64_t dim = x->shape.dims[axis], n_idx = xf_shape_numel(&ix->shape);
    for (int64_t k = 0; k < n_idx; k++) {
        int64_t v = index_at(ix, k);
        if (v < -dim || v >= dim) {
            char sd[96];
            return XF_FAIL(err, XF_ERR_INVALID,
                           "gather: index %lld (at position %lld of the indices) is out of range "
                           "for axis %d of data %s",
                           (long long)v, (long long)k, axis, xf_shape_str(&x->shape, sd, sizeof sd));
        }
    }
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) outer *= x->shape.dims[i];
    for (int i = axis + 1; i < x->shape.rank; i++) inner *= x->shape.dims[i];
    size_t chunk = (size_t)inner * xf_dtype_size(x->dtype);
    if (!chunk) return XF_OK;
    const char *s = x->data;
    char *d = out[0].data;
    for (int64_t o = 0; o < outer; o++, s += (size_t)dim * chunk)
        for (int64_t k = 0; k < n_idx; k++, d += chunk) {
            int64_t v = index_at(ix, k);
            if (v < 0) v += dim;
            memcpy(d, s + (size_t)v * chunk, chunk);
        }
    return XF_OK;
}

/* ---------------------------------------------------------------------- pad */

/* Pads beyond this magnitude cannot describe a real tensor (and would
 * overflow the shape arithmetic). */
#define PAD_LIMIT ((int64_t)1 << 40)

static xf_status pad_shape(const xf_params *p, const xf_shape *s, xf_shape *o, xf_error *err)
{
    char si[96];
    if (p->pad_mode != XF_PAD_CONSTANT && p->pad_mode != XF_PAD_REFLECT &&
        p->pad_mode != XF_PAD_EDGE)
        return XF_FAIL(err, XF_ERR_SHAPE, "pad: unknown mode %d", p->pad_mode);
    *o = *s;
    for (int i = 0; i < s->rank; i++) {
        int64_t b = p->starts[i], e = p->ends[i];
        if (b < -PAD_LIMIT || b > PAD_LIMIT || e < -PAD_LIMIT || e > PAD_LIMIT)
            return XF_FAIL(err, XF_ERR_SHAPE, "pad: pads %lld,%lld on dim %d are implausibly large",
                           (long long)b, (long long)e, i);
        o->dims[i] = s->dims[i] + b + e;
        if (o->dims[i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "pad: pads %lld,%lld on dim %d of input %s crop more than the dim",
                           (long long)b, (long long)e, i, xf_shape_str(s, si, sizeof si));
        if (p->pad_mode != XF_PAD_CONSTANT && s->dims[i] == 0 && o->dims[i] > 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "pad: %s padding needs data, but dim %d of input %s is empty",
                           p->pad_mode == XF_PAD_EDGE ? "edge" : "reflect", i,
                           xf_shape_str(s, si, sizeof si));
    }
    return XF_OK;
}

XF_DECLARE_INFER(pad)
{
    (void)n_in;
    (void)n_out;
    xf_status st = pad_shape(p, &in_sh[0], &out_sh[0], err);
    if (st != XF_OK) return st;
    out_dt[0] = in_dt[0];
    return XF_OK;
}

/* Input index that output index k of a dim reads (k - begin moved inside
 * [0, n) by the mode), or -1 for the constant. */
static int64_t pad_source(int64_t k, int64_t begin, int64_t n, int mode)
{
    int64_t i = k - begin;
    if (i >= 0 && i < n) return i;
    if (mode == XF_PAD_CONSTANT) return -1;
    if (mode == XF_PAD_EDGE) return i < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1); /* reflect without repeating the edge */
    i %= period;
    if (i < 0) i += period;
    return i < n ? i : period - i;
}

/* `value` as one element of dtype t, in `bytes`. */
static void pad_value_bytes(double value, xf_dtype t, unsigned char *bytes)
{
    double v = isnan(value) ? 0.0 : value;
    if (t == XF_F32) {
        float f = (float)value;
        memcpy(bytes, &f, sizeof f);
    } else if (t == XF_I64) {
        int64_t i = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)v;
        memcpy(bytes, &i, sizeof i);
    } else if (t == XF_I32) {
        int32_t i = v >= 2147483647.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)v;
        memcpy(bytes, &i, sizeof i);
    } else if (t == XF_F16) {
        uint16_t h = xf_f32_to_f16((float)value);
        memcpy(bytes, &h, sizeof h);
    } else if (t == XF_F64) {
        memcpy(bytes, &value, sizeof value);
    } else if (t == XF_I8) {
        int8_t i = v >= 127.0 ? 127 : v <= -128.0 ? -128 : (int8_t)v;
        memcpy(bytes, &i, sizeof i);
    } else if (t == XF_U8) {
        bytes[0] = v >= 255.0 ? 255 : v <= 0.0 ? 0 : (uint8_t)v;
    } else {
        bytes[0] = value != 0.0;
    }
}

XF_DECLARE_RUN(pad)
{
    (void)n_in;
    (void)n_out;
    const xf_tensor *x = in[0];
    xf_shape o;
    xf_status st = pad_shape(p, &x->shape, &o, err);
    if (st != XF_OK) return st;
    int64_t numel = xf_shape_numel(&o);
    size_t es = xf_dtype_size(x->dtype);
    unsigned char fill[8];
    pad_value_bytes(p->value, x->dtype, fill);
    char *d = out[0].data;
    const char *s = x->data;
    if (numel == 0) return XF_OK;
    int rank = o.rank;
    if (rank == 0) {
        memcpy(d, s, es);
        return XF_OK;
    }
    /* maps[off[i] + k]: source index for output index k of dim i */
    int64_t off[XF_MAX_DIMS + 1];
    off[0] = 0;
    for (int i = 0; i < rank; i++) off[i + 1] = off[i] + o.dims[i];
    int64_t *maps = xf_malloc(sizeof *maps * (size_t)off[rank]);
    if (!maps) return XF_FAIL(err, XF_ERR_NOMEM, "pad: out of memory");
    for (int i = 0; i < rank; i++)
        for (int64_t k = 0; k < o.dims[i]; k++)
            maps[off[i] + k] = pad_source(k, p->starts[i], x->shape.dims[i], p->pad_mode);
    int64_t ist[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    int inner = rank - 1;
    int64_t w = o.dims[inner], begin = p->starts[inner], n = x->shape.dims[inner];
    int64_t mid0 = begin > 0 ? begin : 0, mid1 = begin + n < w ? begin + n : w;
    const int64_t *imap = maps + off[inner];
    int64_t idx[XF_MAX_DIMS] = {0};
    for (int64_t row = 0; row < numel / w; row++, d += (size_t)w * es) {
        int64_t base = 0;
        int constant = 0;
        for (int i = 0; i < inner; i++) {
            int64_t m = maps[off[i] + idx[i]];
            if (m < 0) constant = 1;
            base += m * ist[i];
        }
        if (constant) {
            for (int64_t k = 0; k < w; k++) memcpy(d + (size_t)k * es, fill, es);
        } else {
            const char *srow = s + (size_t)base * es;
            for (int64_t k = 0; k < w; k++) {
                if (k == mid0 && mid1 > mid0) {
                    memcpy(d + (size_t)k * es, srow + (size_t)(k - begin) * es,
                           (size_t)(mid1 - mid0) * es);
                    k = mid1 - 1;
                    continue;
                }
                int64_t m = imap[k];
                memcpy(d + (size_t)k * es, m < 0 ? (const char *)fill : srow + (size_t)m * es, es);
            }
        }
        for (int i = inner - 1; i >= 0; i--) {
            if (++idx[i] < o.dims[i]) break;
            idx[i] = 0;
        }
    }
    xf_free(maps);
    return XF_OK;
}
