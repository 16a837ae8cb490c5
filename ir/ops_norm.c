/*
 * ops_norm.c — normalisations and reductions on float32 tensors:
 * batchnorm (inference form, per channel of an [N,C,...] tensor), layernorm
 * (over the trailing dims from params.axis, with broadcast scale/bias),
 * reduce_mean (any set of axes, keepdims) and softmax (along one axis, the
 * opset-13 meaning).
 *
 * All of them are linear in the input size: statistics are gathered in one
 * or two contiguous passes with double accumulators, and axes that are not
 * innermost are handled by sweeping whole rows (the reduction accumulates
 * into a vector) rather than by strided per-element loops.
 */
#include "broadcast_internal.h"
#include "op_internal.h"

#include <math.h>
#include <stdlib.h>

static xf_status need_f32(const char *op, const char *what, xf_dtype t, const xf_shape *s,
                          xf_error *err)
{
    if (t == XF_F32) return XF_OK;
    char b[96];
    return XF_FAIL(err, XF_ERR_SHAPE, "%s: %s is %s %s, only float32 is supported", op, what,
                   xf_dtype_name(t), xf_shape_str(s, b, sizeof b));
}

/* ------------------------------------------------------------- batchnorm */

XF_DECLARE_INFER(batchnorm)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    static const char *names[5] = {"X", "scale", "B", "mean", "var"};
    char sx[96], sv[96];
    for (int i = 0; i < 5; i++) {
        xf_status st = need_f32("batchnorm", names[i], in_dt[i], &in_sh[i], err);
        if (st != XF_OK) return st;
    }
    const xf_shape *x = &in_sh[0];
    if (x->rank < 2)
        return XF_FAIL(err, XF_ERR_SHAPE, "batchnorm: X %s must be [N,C,...] (rank >= 2)",
                       xf_shape_str(x, sx, sizeof sx));
    for (int i = 1; i < 5; i++)
        if (in_sh[i].rank != 1 || in_sh[i].dims[0] != x->dims[1])
            return XF_FAIL(err, XF_ERR_SHAPE, "batchnorm: %s is %s but X %s needs [%lld]",
                           names[i], xf_shape_str(&in_sh[i], sv, sizeof sv),
                           xf_shape_str(x, sx, sizeof sx), (long long)x->dims[1]);
    out_dt[0] = XF_F32;
    out_sh[0] = *x;
    return XF_OK;
}

XF_DECLARE_RUN(batchnorm)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in[0]->shape;
    if (s->rank < 2 || in[0]->dtype != XF_F32 || out[0].dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL, "batchnorm: input does not match the inferred shape");
    int64_t n = s->dims[0], c = s->dims[1], spatial = 1;
    for (int i = 2; i < s->rank; i++) spatial *= s->dims[i];
    const float *x = in[0]->data, *scale = in[1]->data, *bias = in[2]->data,
                *mean = in[3]->data, *var = in[4]->data;
    float *y = out[0].data;
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++) {
            float a = (float)((double)scale[ch] / sqrt((double)var[ch] + (double)p->epsilon));
            float m = mean[ch], off = bias[ch];
            const float *xs = x + (b * c + ch) * spatial;
            float *ys = y + (b * c + ch) * spatial;
            for (int64_t i = 0; i < spatial; i++) ys[i] = (xs[i] - m) * a + off;
        }
    return XF_OK;
}

/* ------------------------------------------------------------- layernorm */

/* Does `s` broadcast one way to `t` (t keeps its shape)? */
static int unidirectional(const xf_shape *s, const xf_shape *t)
{
    if (s->rank > t->rank) return 0;
    for (int i = 0; i < s->rank; i++) {
        int64_t d = s->dims[s->rank - 1 - i], e = t->dims[t->rank - 1 - i];
        if (d != e && d != 1) return 0;
    }
    return 1;
}

/* Dims [axis, rank) of s. */
static xf_shape tail_shape(const xf_shape *s, int axis)
{
    return xf_shape_make(s->rank - axis, s->dims + axis);
}

XF_DECLARE_INFER(layernorm)
{
    (void)n_out;
    char sx[96], ss[96], st_buf[96];
    const xf_shape *x = &in_sh[0];
    xf_status st = need_f32("layernorm", "X", in_dt[0], x, err);
    if (st == XF_OK) st = need_f32("layernorm", "scale", in_dt[1], &in_sh[1], err);
    int has_b = n_in > 2 && in_dt[2] != XF_DTYPE_INVALID;
    if (st == XF_OK && has_b) st = need_f32("layernorm", "B", in_dt[2], &in_sh[2], err);
    if (st != XF_OK) return st;
    int axis = xf_norm_axis(p->axis, x->rank);
    if (axis < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "layernorm: axis %d is out of range for X %s",
                       p->axis, xf_shape_str(x, sx, sizeof sx));
    xf_shape tail = tail_shape(x, axis);
    for (int i = 1; i < (has_b ? 3 : 2); i++)
        if (!unidirectional(&in_sh[i], &tail))
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "layernorm: %s %s does not broadcast to the normalised dims %s of X %s",
                           i == 1 ? "scale" : "B", xf_shape_str(&in_sh[i], ss, sizeof ss),
                           xf_shape_str(&tail, st_buf, sizeof st_buf),
                           xf_shape_str(x, sx, sizeof sx));
    out_dt[0] = XF_F32;
    out_sh[0] = *x;
    return XF_OK;
}

/* A float32 parameter of shape `t->shape`, broadcast to `target` as a dense
 * row-major vector: the tensor itself when it already has target's element
 * count, else a xf_malloc'd copy in *owned (caller xf_frees). */
static const float *expand_param(const xf_tensor *t, const xf_shape *target, float **owned)
{
    *owned = NULL;
    int64_t n = xf_shape_numel(target);
    if (xf_shape_numel(&t->shape) == n) return t->data;
    float *buf = xf_malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!buf) return NULL;
    xf_bcast b;
    ir_bcast_init(&b, target, 1, &t->shape);
    xf_bcast_iter it;
    ir_bcast_begin(&b, &it);
    const float *src = t->data;
    float *dst = buf;
    for (int64_t r = 0; r < b.rows && n > 0; r++) {
        const float *s = src + it.off[0];
        for (int64_t j = 0; j < b.inner; j++) dst[j] = s[j * b.inner_stride[0]];
        dst += b.inner;
        ir_bcast_next(&b, &it);
    }
    *owned = buf;
    return buf;
}

XF_DECLARE_RUN(layernorm)
{
    (void)n_out;
    const xf_tensor *xt = in[0], *bt = n_in > 2 ? in[2] : NULL;
    int axis = xf_norm_axis(p->axis, xt->shape.rank);
    if (axis < 0 || xt->dtype != XF_F32 || out[0].dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL, "layernorm: input does not match the inferred shape");
    xf_shape tail = tail_shape(&xt->shape, axis);
    int64_t inner = xf_shape_numel(&tail);
    int64_t outer = inner ? xf_shape_numel(&xt->shape) / inner : 0;
    float *own_s = NULL, *own_b = NULL;
    const float *scale = expand_param(in[1], &tail, &own_s);
    const float *bias = bt ? expand_param(bt, &tail, &own_b) : NULL;
    xf_status st = XF_OK;
    if (!scale || (bt && !bias)) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "layernorm: out of memory broadcasting scale/bias");
        goto out;
    }
    const float *x = xt->data;
    float *y = out[0].data;
    for (int64_t o = 0; o < outer; o++) {
        const float *xr = x + o * inner;
        float *yr = y + o * inner;
        double sum = 0;
        for (int64_t j = 0; j < inner; j++) sum += xr[j];
        double mean = sum / (double)inner, ss = 0;
        for (int64_t j = 0; j < inner; j++) {
            double d = xr[j] - mean;
            ss += d * d;
        }
        double inv = 1.0 / sqrt(ss / (double)inner + (double)p->epsilon);
        for (int64_t j = 0; j < inner; j++) {
            double v = (xr[j] - mean) * inv * scale[j];
            yr[j] = (float)(bias ? v + bias[j] : v);
        }
    }
out:
    xf_free(own_s);
    xf_free(own_b);
    return st;
}

/* ----------------------------------------------------------- reduce_mean */

/* Marks the reduced axes of input s in red[] (xf_reduce_axes); fails on bad axes. */
static xf_status reduced_axes(const xf_params *p, const xf_shape *s, int *red, xf_error *err)
{
    char b[96];
    if (p->n_axes < 0 || p->n_axes > s->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "reduce_mean: %d axes given for input %s", p->n_axes,
                       xf_shape_str(s, b, sizeof b));
    int n = xf_reduce_axes(p, s->rank, red);
    if (n >= 0) return XF_OK;
    int64_t bad = p->axes[-1 - n];
    if (xf_norm_axis(bad, s->rank) < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "reduce_mean: axis %lld is out of range for input %s",
                       (long long)bad, xf_shape_str(s, b, sizeof b));
    return XF_FAIL(err, XF_ERR_SHAPE, "reduce_mean: axis %lld is listed twice", (long long)bad);
}

XF_DECLARE_INFER(reduce_mean)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    xf_status st = need_f32("reduce_mean", "input", in_dt[0], s, err);
    if (st != XF_OK) return st;
    if (p->keepdims != 0 && p->keepdims != 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "reduce_mean: keepdims is %d, must be 0 or 1",
                       p->keepdims);
    int red[XF_MAX_DIMS];
    st = reduced_axes(p, s, red, err);
    if (st != XF_OK) return st;
    xf_shape o = xf_shape_make(0, NULL);
    for (int i = 0; i < s->rank; i++) {
        if (!red[i]) o.dims[o.rank++] = s->dims[i];
        else if (p->keepdims) o.dims[o.rank++] = 1;
    }
    out_dt[0] = XF_F32;
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(reduce_mean)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in[0]->shape;
    int red[XF_MAX_DIMS];
    xf_status st = reduced_axes(p, s, red, err);
    if (st != XF_OK) return st;
    int64_t n_out_el = xf_shape_numel(&out[0].shape), n_in_el = xf_shape_numel(s);
    /* The output seen with the input's rank (reduced dims of size 1): the
     * accumulator is a broadcast operand over the input's shape. */
    xf_shape kept = *s;
    for (int i = 0; i < s->rank; i++)
        if (red[i]) kept.dims[i] = 1;
    if (xf_shape_numel(&kept) != n_out_el || in[0]->dtype != XF_F32 || out[0].dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "reduce_mean: output does not match the inferred shape");
    double *acc = xf_calloc((size_t)(n_out_el ? n_out_el : 1), sizeof *acc);
    if (!acc) return XF_FAIL(err, XF_ERR_NOMEM, "reduce_mean: out of memory");
    if (n_in_el > 0) {
        xf_shape ops[2] = {*s, kept};
        xf_bcast b;
        ir_bcast_init(&b, s, 2, ops);
        xf_bcast_iter it;
        ir_bcast_begin(&b, &it);
        const float *x = in[0]->data;
        for (int64_t r = 0; r < b.rows; r++) {
            const float *xr = x + it.off[0];
            double *ar = acc + it.off[1];
            if (b.inner_stride[1] == 0) {
                double sum = 0;
                for (int64_t j = 0; j < b.inner; j++) sum += xr[j];
                ar[0] += sum;
            } else {
                for (int64_t j = 0; j < b.inner; j++) ar[j] += xr[j];
            }
            ir_bcast_next(&b, &it);
        }
    }
    /* An empty reduction (a reduced dim of size 0) gives 0/0 = NaN, as numpy. */
    double count = n_out_el ? (double)(n_in_el / n_out_el) : 0;
    float *y = out[0].data;
    for (int64_t i = 0; i < n_out_el; i++) y[i] = (float)(acc[i] / count);
    xf_free(acc);
    return XF_OK;
}

/* --------------------------------------------------------------- softmax */

XF_DECLARE_INFER(softmax)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    xf_status st = need_f32("softmax", "input", in_dt[0], s, err);
    if (st != XF_OK) return st;
    if (xf_norm_axis(p->axis, s->rank) < 0) {
        char b[96];
        return XF_FAIL(err, XF_ERR_SHAPE, "softmax: axis %d is out of range for input %s",
                       p->axis, xf_shape_str(s, b, sizeof b));
    }
    out_dt[0] = XF_F32;
    out_sh[0] = *s;
    return XF_OK;
}

/* Softmax of each contiguous row of length n (axis innermost). */
static void softmax_rows(const float *x, float *y, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++, x += n, y += n) {
        float m = x[0];
        for (int64_t k = 1; k < n; k++) m = x[k] > m ? x[k] : m;
        double sum = 0;
        for (int64_t k = 0; k < n; k++) {
            y[k] = expf(x[k] - m);
            sum += y[k];
        }
        float inv = (float)(1.0 / sum);
        for (int64_t k = 0; k < n; k++) y[k] *= inv;
    }
}

/* Softmax over the middle axis of [outer, n, inner] with inner > 1: each
 * step along the axis is a contiguous vector of `inner` independent lanes. */
static void softmax_lanes(const float *x, float *y, int64_t outer, int64_t n, int64_t inner,
                          float *mx, double *sum)
{
    for (int64_t o = 0; o < outer; o++, x += n * inner, y += n * inner) {
        for (int64_t j = 0; j < inner; j++) {
            mx[j] = x[j];
            sum[j] = 0;
        }
        for (int64_t k = 1; k < n; k++) {
            const float *xk = x + k * inner;
            for (int64_t j = 0; j < inner; j++) mx[j] = xk[j] > mx[j] ? xk[j] : mx[j];
        }
        for (int64_t k = 0; k < n; k++) {
            const float *xk = x + k * inner;
            float *yk = y + k * inner;
            for (int64_t j = 0; j < inner; j++) {
                yk[j] = expf(xk[j] - mx[j]);
                sum[j] += yk[j];
            }
        }
        for (int64_t j = 0; j < inner; j++) sum[j] = 1.0 / sum[j];
        for (int64_t k = 0; k < n; k++) {
            float *yk = y + k * inner;
            for (int64_t j = 0; j < inner; j++) yk[j] *= (float)sum[j];
        }
    }
}

XF_DECLARE_RUN(softmax)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in[0]->shape;
    int axis = xf_norm_axis(p->axis, s->rank);
    if (axis < 0 || in[0]->dtype != XF_F32 || out[0].dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL, "softmax: input does not match the inferred shape");
    int64_t outer = 1, inner = 1, n = s->dims[axis];
    for (int i = 0; i < axis; i++) outer *= s->dims[i];
    for (int i = axis + 1; i < s->rank; i++) inner *= s->dims[i];
    if (outer * n * inner == 0) return XF_OK;
    if (inner == 1) {
        softmax_rows(in[0]->data, out[0].data, outer, n);
        return XF_OK;
    }
    float *mx = xf_malloc(sizeof(float) * (size_t)inner);
    double *sum = xf_malloc(sizeof(double) * (size_t)inner);
    xf_status st = XF_OK;
    if (!mx || !sum) st = XF_FAIL(err, XF_ERR_NOMEM, "softmax: out of memory");
    else softmax_lanes(in[0]->data, out[0].data, outer, n, inner, mx, sum);
    xf_free(mx);
    xf_free(sum);
    return st;
}
