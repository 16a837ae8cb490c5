/*
 * ops_resize.c — resize (ONNX Resize-11 and later, and Upsample, which the
 * importer maps onto it): nearest and n-linear interpolation of a tensor
 * of any rank to params.shape[].
 *
 * The scale of a dim is output/input (the importer keeps a Resize whose
 * scales do not give whole output sizes opaque, so this is the scale ONNX
 * uses). For each output dim a table gives, per output index, the two
 * input indices and the weight of the second (nearest: one index, weight
 * 0); the kernel then sums over the corners of the dims that interpolate.
 * Coordinates follow the ONNX specification: half_pixel, asymmetric,
 * align_corners, pytorch_half_pixel and tf_half_pixel_for_nn, and the four
 * nearest roundings; linear clamps coordinates to the input (edge values).
 */
#include "op_internal.h"

#include <math.h>

XF_DECLARE_INFER(resize)
{
    (void)n_in;
    (void)n_out;
    char b[96];
    const xf_shape *x = &in_sh[0];
    if (in_dt[0] != XF_F32)
        return XF_FAIL(err, XF_ERR_SHAPE, "resize: input is %s %s, only float32 is supported",
                       xf_dtype_name(in_dt[0]), xf_shape_str(x, b, sizeof b));
    if (p->n_shape != x->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "resize: output shape has %d dims for input %s",
                       p->n_shape, xf_shape_str(x, b, sizeof b));
    if (p->kernel[0] < XF_RESIZE_NEAREST || p->kernel[0] > XF_RESIZE_LINEAR ||
        p->kernel[1] < XF_RESIZE_HALF_PIXEL || p->kernel[1] > XF_RESIZE_TF_HALF_PIXEL_FOR_NN ||
        p->group < XF_RESIZE_ROUND_PREFER_FLOOR || p->group > XF_RESIZE_CEIL)
        return XF_FAIL(err, XF_ERR_SHAPE, "resize: mode %d, coordinates %d, rounding %d unknown",
                       p->kernel[0], p->kernel[1], p->group);
    xf_shape o = xf_shape_make(x->rank, p->shape);
    for (int i = 0; i < x->rank; i++)
        if (o.dims[i] < 0 || (o.dims[i] > 0 && x->dims[i] == 0))
            return XF_FAIL(err, XF_ERR_SHAPE, "resize: cannot resize dim %d of %s to %lld", i,
                           xf_shape_str(x, b, sizeof b), (long long)o.dims[i]);
    out_dt[0] = XF_F32;
    out_sh[0] = o;
    int64_t numel;
    size_t bytes;
    return xf_shape_check(&o, XF_F32, &numel, &bytes, err);
}

/* The input coordinate of output index `x` of a dim resized in -> out. */
static double source_coord(xf_resize_coord mode, int64_t x, int64_t in, int64_t out)
{
    double scale = (double)out / (double)in;
    switch (mode) {
    case XF_RESIZE_ASYMMETRIC: return (double)x / scale;
    case XF_RESIZE_ALIGN_CORNERS:
        return out == 1 ? 0.0 : (double)x * (double)(in - 1) / (double)(out - 1);
    case XF_RESIZE_PYTORCH_HALF_PIXEL: return out > 1 ? ((double)x + 0.5) / scale - 0.5 : 0.0;
    case XF_RESIZE_TF_HALF_PIXEL_FOR_NN: return ((double)x + 0.5) / scale;
    case XF_RESIZE_HALF_PIXEL:
    default: return ((double)x + 0.5) / scale - 0.5;
    }
}

static int64_t round_nearest(xf_resize_round r, double c)
{
    double f = floor(c);
    switch (r) {
    case XF_RESIZE_FLOOR: return (int64_t)f;
    case XF_RESIZE_CEIL: return (int64_t)ceil(c);
    case XF_RESIZE_ROUND_PREFER_CEIL: return (int64_t)(c - f >= 0.5 ? f + 1 : f);
    case XF_RESIZE_ROUND_PREFER_FLOOR:
    default: return (int64_t)(c - f > 0.5 ? f + 1 : f);
    }
}

typedef struct tap {
    int64_t i0, i1; /* input indices */
    float w;        /* weight of i1 */
} tap;

XF_DECLARE_RUN(resize)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *xs = &in[0]->shape, *os = &out[0].shape;
    int r = xs->rank;
    int64_t n = xf_shape_numel(os);
    if (n == 0) return XF_OK;
    tap *taps[XF_MAX_DIMS] = {NULL};
    int64_t xstr[XF_MAX_DIMS];
    xf_shape_strides(xs, xstr);
    xf_status st = XF_OK;
    for (int d = 0; d < r; d++) {
        taps[d] = xf_malloc(sizeof(tap) * (size_t)os->dims[d]);
        if (!taps[d]) {
            st = XF_FAIL(err, XF_ERR_NOMEM, "resize: out of memory");
            goto out;
        }
        int64_t in_d = xs->dims[d], out_d = os->dims[d];
        for (int64_t k = 0; k < out_d; k++) {
            tap *t = &taps[d][k];
            double c = source_coord((xf_resize_coord)p->kernel[1], k, in_d, out_d);
            if (p->kernel[0] == XF_RESIZE_NEAREST) {
                int64_t i = round_nearest((xf_resize_round)p->group, c);
                t->i0 = t->i1 = i < 0 ? 0 : i >= in_d ? in_d - 1 : i;
                t->w = 0.0f;
            } else {
                if (c < 0) c = 0;
                if (c > (double)(in_d - 1)) c = (double)(in_d - 1);
                t->i0 = (int64_t)floor(c);
                t->i1 = t->i0 + 1 < in_d ? t->i0 + 1 : t->i0;
                t->w = (float)(c - (double)t->i0);
            }
        }
    }
    const float *x = in[0]->data;
    float *y = out[0].data;
    int64_t idx[XF_MAX_DIMS] = {0};
    for (int64_t o = 0; o < n; o++) {
        /* sum over the 2^k corners of the k dims with a non-zero weight */
        int live[XF_MAX_DIMS], n_live = 0;
        int64_t base = 0;
        for (int d = 0; d < r; d++) {
            const tap *t = &taps[d][idx[d]];
            base += t->i0 * xstr[d];
            if (t->w != 0.0f && t->i1 != t->i0) live[n_live++] = d;
        }
        double acc = 0.0;
        for (int corner = 0; corner < (1 << n_live); corner++) {
            double w = 1.0;
            int64_t off = base;
            for (int j = 0; j < n_live; j++) {
                const tap *t = &taps[live[j]][idx[live[j]]];
                if (corner >> j & 1) {
                    w *= t->w;
                    off += (t->i1 - t->i0) * xstr[live[j]];
                } else {
                    w *= 1.0 - t->w;
                }
            }
            acc += w * x[off];
        }
        y[o] = (float)acc;
        for (int d = r - 1; d >= 0; d--) {
            if (++idx[d] < os->dims[d]) break;
            idx[d] = 0;
        }
    }
out:
    for (int d = 0; d < r; d++) xf_free(taps[d]);
    return st;
}
