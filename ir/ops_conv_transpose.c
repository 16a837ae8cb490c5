/*
 * ops_conv_transpose.c — 2-D (NCHW) transposed convolution, the ONNX
 * ConvTranspose: weight [C, M/group, kh, kw], optional bias [M]. The output
 * shape is a parameter (params.shape), since ONNX lets output_padding or
 * output_shape make it larger than the window arithmetic alone gives; the
 * shape inference checks it against that arithmetic:
 *   out = stride*(in-1) + (k-1)*dilation + 1 - pad_begin - pad_end + extra,
 * with 0 <= extra < max(stride, dilation).
 *
 * The kernel scatters: each input pixel adds its products with the kernel
 * taps into the output window it spreads over. Accumulation in float32
 * like the reference convolution.
 */
#include "op_internal.h"

XF_DECLARE_INFER(conv_transpose)
{
    (void)n_out;
    char sx[96], sw[96];
    int has_bias = n_in >= 3 && in_dt[2] != XF_DTYPE_INVALID;
    for (int i = 0; i < (has_bias ? 3 : 2); i++)
        if (in_dt[i] != XF_F32)
            return XF_FAIL(err, XF_ERR_SHAPE, "conv_transpose: input %d must be float32, got %s",
                           i, xf_dtype_name(in_dt[i]));
    const xf_shape *x = &in_sh[0], *w = &in_sh[1];
    if (x->rank != 4 || w->rank != 4 || p->group < 1 || x->dims[1] != w->dims[0] ||
        w->dims[0] % p->group != 0 || w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1])
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv_transpose: input %s and weight %s (group %d, kernel %dx%d) do not "
                       "fit: weight must be [C, M/group, kh, kw] with C the input's channels",
                       xf_shape_str(x, sx, sizeof sx), xf_shape_str(w, sw, sizeof sw), p->group,
                       p->kernel[0], p->kernel[1]);
    int64_t m = w->dims[1] * p->group;
    if (has_bias && (in_sh[2].rank != 1 || in_sh[2].dims[0] != m))
        return XF_FAIL(err, XF_ERR_SHAPE, "conv_transpose: bias must be [%lld], got %s",
                       (long long)m, xf_shape_str(&in_sh[2], sx, sizeof sx));
    if (p->n_shape != 4 || p->shape[0] != x->dims[0] || p->shape[1] != m)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv_transpose: output shape must be [%lld,%lld,H,W] for input %s",
                       (long long)x->dims[0], (long long)m, xf_shape_str(x, sx, sizeof sx));
    for (int i = 0; i < 2; i++) {
        int64_t s = p->stride[i], d = p->dilation[i];
        if (s < 1 || d < 1 || p->pads[i] < 0 || p->pads[2 + i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "conv_transpose: stride, dilation must be positive, pads >= 0");
        int64_t base = s * (x->dims[2 + i] - 1) + (p->kernel[i] - 1) * d + 1 - p->pads[i] -
                       p->pads[2 + i];
        int64_t extra = p->shape[2 + i] - base;
        if (extra < 0 || extra >= (s > d ? s : d))
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "conv_transpose: output dim %d is %lld; input %s with this window "
                           "gives %lld plus an output padding below %lld",
                           2 + i, (long long)p->shape[2 + i], xf_shape_str(x, sx, sizeof sx),
                           (long long)base, (long long)(s > d ? s : d));
    }
    out_dt[0] = XF_F32;
    out_sh[0] = xf_shape_make(4, p->shape);
    int64_t numel;
    size_t bytes;
    return xf_shape_check(&out_sh[0], XF_F32, &numel, &bytes, err);
}

XF_DECLARE_RUN(conv_transpose)
{
    (void)n_out;
    (void)err;
    const xf_shape *xs = &in[0]->shape, *ws = &in[1]->shape, *os = &out[0].shape;
    const float *x = in[0]->data, *w = in[1]->data;
    const float *bias = n_in >= 3 && in[2] ? in[2]->data : NULL;
    float *y = out[0].data;
    int64_t n = xs->dims[0], c = xs->dims[1], h = xs->dims[2], wd = xs->dims[3];
    int64_t mg = ws->dims[1], kh = ws->dims[2], kw = ws->dims[3];
    int64_t oh = os->dims[2], ow = os->dims[3], m = os->dims[1];
    int64_t cg = c / p->group;
    int64_t plane = oh * ow;
    for (int64_t b = 0; b < n; b++)
        for (int64_t oc = 0; oc < m; oc++) {
            float *dst = y + (b * m + oc) * plane;
            float v = bias ? bias[oc] : 0.0f;
            for (int64_t i = 0; i < plane; i++) dst[i] = v;
        }
    for (int64_t b = 0; b < n; b++)
        for (int64_t ic = 0; ic < c; ic++) {
            int64_t g = ic / cg;
            const float *src = x + (b * c + ic) * h * wd;
            for (int64_t j = 0; j < mg; j++) {
                int64_t oc = g * mg + j;
                float *dst = y + (b * m + oc) * plane;
                const float *k = w + (ic * mg + j) * kh * kw;
                for (int64_t ky = 0; ky < kh; ky++)
                    for (int64_t iy = 0; iy < h; iy++) {
                        int64_t oy = iy * p->stride[0] + ky * p->dilation[0] - p->pads[0];
                        if (oy < 0 || oy >= oh) continue;
                        for (int64_t kx = 0; kx < kw; kx++) {
                            float kv = k[ky * kw + kx];
                            for (int64_t ix = 0; ix < wd; ix++) {
                                int64_t ox = ix * p->stride[1] + kx * p->dilation[1] - p->pads[1];
                                if (ox < 0 || ox >= ow) continue;
                                dst[oy * ow + ox] += src[iy * wd + ix] * kv;
                            }
                        }
                    }
            }
        }
    return XF_OK;
}
