/*
 * ops_movement_concat.c — concat and split along one axis.
 *
 * Both are the same block copy seen from two sides: with the tensor viewed
 * as [outer, dim(axis) * inner], each outer index owns one contiguous chunk
 * per piece, so the kernels are a memcpy per (outer index, piece).
 * Dtype-agnostic; every piece must have the same dtype and rank.
 */
#include "op_internal.h"

#include <string.h>

/* Product of dims[from..to). */
static int64_t dims_prod(const xf_shape *s, int from, int to)
{
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= s->dims[i];
    return n;
}

/* ------------------------------------------------------------------- concat */

XF_DECLARE_INFER(concat)
{
    (void)n_out;
    const xf_shape *s0 = &in_sh[0];
    char sa[96], sb[96];
    int axis = xf_norm_axis(p->axis, s0->rank);
    if (axis < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "concat: axis %d is out of range for input 0 %s",
                       p->axis, xf_shape_str(s0, sa, sizeof sa));
    xf_shape o = *s0;
    for (int i = 1; i < n_in; i++) {
        const xf_shape *s = &in_sh[i];
        if (in_dt[i] != in_dt[0])
            return XF_FAIL(err, XF_ERR_SHAPE, "concat: input %d is %s but input 0 is %s", i,
                           xf_dtype_name(in_dt[i]), xf_dtype_name(in_dt[0]));
        int same = s->rank == s0->rank;
        for (int k = 0; same && k < s->rank; k++) same = k == axis || s->dims[k] == s0->dims[k];
        if (!same)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "concat: input %d %s does not match input 0 %s outside axis %d", i,
                           xf_shape_str(s, sa, sizeof sa), xf_shape_str(s0, sb, sizeof sb), axis);
        o.dims[axis] += s->dims[axis];
    }
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(concat)
{
    (void)n_out;
    int rank = in[0]->shape.rank;
    int axis = xf_norm_axis(p->axis, rank);
    if (axis < 0) return XF_FAIL(err, XF_ERR_SHAPE, "concat: axis %d is out of range", p->axis);
    size_t es = xf_dtype_size(in[0]->dtype);
    int64_t outer = dims_prod(&in[0]->shape, 0, axis);
    char *d = out[0].data;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < n_in; i++) {
            size_t chunk = (size_t)dims_prod(&in[i]->shape, axis, rank) * es;
            if (!chunk) continue;
            memcpy(d, (const char *)in[i]->data + (size_t)o * chunk, chunk);
            d += chunk;
        }
    return XF_OK;
}

/* -------------------------------------------------------------------- split */

XF_DECLARE_INFER(split)
{
    (void)n_in;
    const xf_shape *s = &in_sh[0];
    char si[96];
    int axis = xf_norm_axis(p->axis, s->rank);
    if (axis < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "split: axis %d is out of range for input %s", p->axis,
                       xf_shape_str(s, si, sizeof si));
    if (p->n_split < 1 || p->n_split > XF_MAX_SPLIT)
        return XF_FAIL(err, XF_ERR_SHAPE, "split: %d split sizes given, need 1..%d", p->n_split,
                       XF_MAX_SPLIT);
    if (n_out != p->n_split)
        return XF_FAIL(err, XF_ERR_SHAPE, "split: %d split sizes but %d outputs", p->n_split,
                       n_out);
    int64_t sum = 0;
    for (int i = 0; i < p->n_split; i++) {
        if (p->split[i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "split: size %d is negative (%lld)", i,
                           (long long)p->split[i]);
        sum += p->split[i];
    }
    if (sum != s->dims[axis])
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "split: sizes add up to %lld but dim %d of input %s is %lld", (long long)sum,
                       axis, xf_shape_str(s, si, sizeof si), (long long)s->dims[axis]);
    for (int i = 0; i < n_out; i++) {
        out_dt[i] = in_dt[0];
        out_sh[i] = *s;
        out_sh[i].dims[axis] = p->split[i];
    }
    return XF_OK;
}

XF_DECLARE_RUN(split)
{
    (void)n_in;
    const xf_tensor *x = in[0];
    int rank = x->shape.rank;
    int axis = xf_norm_axis(p->axis, rank);
    if (axis < 0) return XF_FAIL(err, XF_ERR_SHAPE, "split: axis %d is out of range", p->axis);
    size_t es = xf_dtype_size(x->dtype);
    int64_t outer = dims_prod(&x->shape, 0, axis);
    const char *s = x->data;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < n_out; i++) {
            size_t chunk = (size_t)dims_prod(&out[i].shape, axis, rank) * es;
            if (!chunk) continue;
            memcpy((char *)out[i].data + (size_t)o * chunk, s, chunk);
            s += chunk;
        }
    return XF_OK;
}
