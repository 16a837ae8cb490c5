/*
 * ops_reduce.c — reduce_sum and reduce_max over any set of axes (keepdims
 * or not), float32. Shapes follow reduce_mean (ops_norm.c), whose shape
 * inference they share: no axes means every axis (xf_reduce_axes).
 *
 * Each input element is added (or compared) into its output element; the
 * output index is kept incrementally with per-dim output strides that are 0
 * on reduced dims, so the walk is one pass without divisions. Sums
 * accumulate in double and are rounded once at the end.
 */
#include "op_internal.h"

#include <math.h>

typedef enum { RED_SUM, RED_MAX } red_kind;

static xf_status reduce(const char *op, red_kind kind, const xf_params *p,
                        const xf_tensor *x, xf_tensor *y, xf_error *err)
{
    const xf_shape *s = &x->shape;
    char b[96];
    if (x->dtype != XF_F32 || y->dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: expects float32", op);
    int red[XF_MAX_DIMS];
    if (xf_reduce_axes(p, s->rank, red) < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: axes out of range or repeated for input %s", op,
                       xf_shape_str(s, b, sizeof b));
    /* output strides in the input's rank; 0 on reduced dims */
    int64_t ostr[XF_MAX_DIMS], acc = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        ostr[i] = red[i] ? 0 : acc;
        if (!red[i]) acc *= s->dims[i];
    }
    int64_t n_out = xf_shape_numel(&y->shape), n_in = xf_shape_numel(s);
    if (n_out != acc)
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: output does not match the reduced shape", op);
    double *sum = NULL;
    float *o = y->data;
    if (kind == RED_SUM) {
        sum = xf_calloc((size_t)n_out + 1, sizeof *sum);
        if (!sum) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", op);
    } else {
        for (int64_t i = 0; i < n_out; i++) o[i] = -INFINITY;
    }
    const float *v = x->data;
    int64_t idx[XF_MAX_DIMS] = {0}, off = 0;
    for (int64_t k = 0; k < n_in; k++) {
        if (kind == RED_SUM)
            sum[off] += v[k];
        else if (v[k] > o[off] || v[k] != v[k])
            o[off] = v[k];
        for (int d = s->rank - 1; d >= 0; d--) {
            off += ostr[d];
            if (++idx[d] < s->dims[d]) break;
            off -= ostr[d] * s->dims[d];
            idx[d] = 0;
        }
    }
    if (kind == RED_SUM) {
        for (int64_t i = 0; i < n_out; i++) o[i] = (float)sum[i];
        xf_free(sum);
    }
    return XF_OK;
}

XF_DECLARE_RUN(reduce_sum)
{
    (void)n_in;
    (void)n_out;
    return reduce("reduce_sum", RED_SUM, p, in[0], &out[0], err);
}

XF_DECLARE_RUN(reduce_max)
{
    (void)n_in;
    (void)n_out;
    return reduce("reduce_max", RED_MAX, p, in[0], &out[0], err);
}
