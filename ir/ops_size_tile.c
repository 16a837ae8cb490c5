/*
 * ops_size_tile.c — three small ONNX operators real models use around
 * their shape computations: not (bool -> bool), size (the element count
 * as an int64 scalar) and tile (any dtype; params.shape[] holds the
 * repeat count of each input dim).
 */
#include "op_internal.h"

#include <string.h>

XF_DECLARE_INFER(not)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char b[96];
    if (in_dt[0] != XF_BOOL)
        return XF_FAIL(err, XF_ERR_SHAPE, "not: input is %s %s, must be bool",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], b, sizeof b));
    out_dt[0] = XF_BOOL;
    out_sh[0] = in_sh[0];
    return XF_OK;
}

XF_DECLARE_RUN(not)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    int64_t n = xf_shape_numel(&in[0]->shape);
    if (in[0]->dtype != XF_BOOL || out[0].dtype != XF_BOOL || xf_shape_numel(&out[0].shape) != n)
        return XF_FAIL(err, XF_ERR_INTERNAL, "not: expects bool input and output of one size");
    const uint8_t *x = in[0]->data;
    uint8_t *y = out[0].data;
    for (int64_t i = 0; i < n; i++) y[i] = !x[i];
    return XF_OK;
}

XF_DECLARE_INFER(size)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    (void)in_dt;
    (void)in_sh;
    (void)err;
    out_dt[0] = XF_I64;
    out_sh[0] = xf_shape_make(0, NULL);
    return XF_OK;
}

XF_DECLARE_RUN(size)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (out[0].dtype != XF_I64 || xf_shape_numel(&out[0].shape) != 1)
        return XF_FAIL(err, XF_ERR_INTERNAL, "size: output must be one int64");
    *(int64_t *)out[0].data = xf_shape_numel(&in[0]->shape);
    return XF_OK;
}

XF_DECLARE_INFER(tile)
{
    (void)n_in;
    (void)n_out;
    char b[96];
    const xf_shape *x = &in_sh[0];
    if (p->n_shape != x->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "tile: %d repeats given for input %s (one per dim)",
                       p->n_shape, xf_shape_str(x, b, sizeof b));
    xf_shape o = *x;
    for (int i = 0; i < x->rank; i++) {
        if (p->shape[i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "tile: repeat %lld of dim %d is negative",
                           (long long)p->shape[i], i);
        if (p->shape[i] > 0 && x->dims[i] > INT64_MAX / p->shape[i])
            return XF_FAIL(err, XF_ERR_SHAPE, "tile: dim %d times %lld overflows", i,
                           (long long)p->shape[i]);
        o.dims[i] = x->dims[i] * p->shape[i];
    }
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    int64_t numel;
    size_t bytes;
    return xf_shape_check(&o, in_dt[0], &numel, &bytes, err);
}

/* Each output row (innermost dim) is the input row repeated; rows of the
 * output map to input rows by taking every outer index modulo the input
 * dim. */
XF_DECLARE_RUN(tile)
{
    (void)p;
    (void)err;
    (void)n_in;
    (void)n_out;
    const xf_shape *xs = &in[0]->shape, *os = &out[0].shape;
    size_t es = xf_dtype_size(in[0]->dtype);
    if (xf_shape_numel(&out[0].shape) == 0) return XF_OK;
    if (xs->rank == 0) {
        memcpy(out[0].data, in[0]->data, es);
        return XF_OK;
    }
    int r = xs->rank;
    int64_t in_row = xs->dims[r - 1], out_row = os->dims[r - 1];
    int64_t rows = xf_shape_numel(os) / out_row;
    int64_t xstr[XF_MAX_DIMS];
    xf_shape_strides(xs, xstr);
    int64_t idx[XF_MAX_DIMS] = {0};
    char *dst = out[0].data;
    const char *src = in[0]->data;
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0;
        for (int d = 0; d < r - 1; d++) off += (idx[d] % xs->dims[d]) * xstr[d];
        for (int64_t k = 0; k < out_row; k += in_row)
            memcpy(dst + (size_t)k * es, src + (size_t)off * es, (size_t)in_row * es);
        dst += (size_t)out_row * es;
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < os->dims[d]) break;
            idx[d] = 0;
        }
    }
    return XF_OK;
}
