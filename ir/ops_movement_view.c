/*
 * ops_movement_view.c — operators that only relabel a tensor's shape:
 * reshape, flatten, squeeze, unsqueeze (the bytes are copied unchanged, in
 * row-major order) and shape (the input's dims as an int64 vector).
 *
 * All are dtype-agnostic. The interesting part is shape inference, which
 * validates the parameters the ONNX importer produced and says which one is
 * wrong; the kernels are a single memcpy.
 */
#include "op_internal.h"

#include <string.h>

/* Copy input 0 into output 0 byte for byte (same element count). */
static xf_status copy_bytes(const xf_tensor *in, xf_tensor *out, const char *op, xf_error *err)
{
    size_t n = xf_tensor_bytes(in);
    if (n != xf_tensor_bytes(out) || in->dtype != out->dtype) {
        char si[96], so[96];
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: output %s %s does not fit input %s %s", op,
                       xf_dtype_name(out->dtype), xf_shape_str(&out->shape, so, sizeof so),
                       xf_dtype_name(in->dtype), xf_shape_str(&in->shape, si, sizeof si));
    }
    if (n) memcpy(out->data, in->data, n);
    return XF_OK;
}

/* ------------------------------------------------------------------ reshape */

XF_DECLARE_INFER(reshape)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    char si[96], st[96];
    if (p->n_shape < 0 || p->n_shape > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_SHAPE, "reshape: target rank %d is outside 0..%d", p->n_shape,
                       XF_MAX_DIMS);
    xf_shape t = xf_shape_make(p->n_shape, p->shape);
    int unresolved = 0;
    for (int i = 0; i < t.rank; i++) unresolved |= t.dims[i] <= 0;
    for (int i = 0; i < t.rank; i++)
        if (t.dims[i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "reshape: target %s has negative dim %d (targets must be fully "
                           "resolved: no 0 or -1)",
                           xf_shape_str(&t, st, sizeof st), i);
    if (xf_shape_numel(&t) != xf_shape_numel(s))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "reshape: cannot reshape %s (%lld elements) to %s (%lld elements)%s",
                       xf_shape_str(s, si, sizeof si), (long long)xf_shape_numel(s),
                       xf_shape_str(&t, st, sizeof st), (long long)xf_shape_numel(&t),
                       unresolved ? "; targets must be fully resolved: no 0 or -1" : "");
    out_dt[0] = in_dt[0];
    out_sh[0] = t;
    return XF_OK;
}

XF_DECLARE_RUN(reshape)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return copy_bytes(in[0], &out[0], "reshape", err);
}

/* ------------------------------------------------------------------ flatten */

XF_DECLARE_INFER(flatten)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    int64_t axis = p->axis;
    if (axis < 0) axis += s->rank;
    if (axis < 0 || axis > s->rank) {
        char si[96];
        return XF_FAIL(err, XF_ERR_SHAPE, "flatten: axis %d is outside [%d, %d] for input %s",
                       p->axis, -s->rank, s->rank, xf_shape_str(s, si, sizeof si));
    }
    int64_t d[2] = {1, 1};
    for (int i = 0; i < s->rank; i++) d[i < axis ? 0 : 1] *= s->dims[i];
    out_dt[0] = in_dt[0];
    out_sh[0] = xf_shape_make(2, d);
    return XF_OK;
}

XF_DECLARE_RUN(flatten)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return copy_bytes(in[0], &out[0], "flatten", err);
}

/* ------------------------------------------------------------------ squeeze */

XF_DECLARE_INFER(squeeze)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    char si[96];
    int drop[XF_MAX_DIMS] = {0};
    if (p->n_axes < 0 || p->n_axes > s->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "squeeze: %d axes given for input %s", p->n_axes,
                       xf_shape_str(s, si, sizeof si));
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], s->rank);
        if (a < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "squeeze: axis %lld is out of range for input %s",
                           (long long)p->axes[i], xf_shape_str(s, si, sizeof si));
        if (drop[a])
            return XF_FAIL(err, XF_ERR_SHAPE, "squeeze: axis %lld is listed twice",
                           (long long)p->axes[i]);
        if (s->dims[a] != 1)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "squeeze: dim %d of input %s is %lld, only dims of size 1 can be "
                           "squeezed",
                           a, xf_shape_str(s, si, sizeof si), (long long)s->dims[a]);
        drop[a] = 1;
    }
    if (p->n_axes == 0)
        for (int i = 0; i < s->rank; i++) drop[i] = s->dims[i] == 1;
    xf_shape o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < s->rank; i++)
        if (!drop[i]) o.dims[o.rank++] = s->dims[i];
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(squeeze)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return copy_bytes(in[0], &out[0], "squeeze", err);
}

/* ---------------------------------------------------------------- unsqueeze */

XF_DECLARE_INFER(unsqueeze)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    char si[96];
    int rank = s->rank + p->n_axes;
    if (p->n_axes <= 0 || rank > XF_MAX_DIMS)
        return XF_FAIL(err, p->n_axes <= 0 ? XF_ERR_SHAPE : XF_ERR_UNSUPPORTED,
                       "unsqueeze: %d axes for input %s (need at least 1, at most rank %d in all)",
                       p->n_axes, xf_shape_str(s, si, sizeof si), XF_MAX_DIMS);
    int ins[XF_MAX_DIMS] = {0};
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], rank);
        if (a < 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "unsqueeze: axis %lld is out of range for output rank %d (input %s)",
                           (long long)p->axes[i], rank, xf_shape_str(s, si, sizeof si));
        if (ins[a])
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "unsqueeze: axis %lld is listed twice (output position %d)",
                           (long long)p->axes[i], a);
        ins[a] = 1;
    }
    xf_shape o;
    memset(&o, 0, sizeof o);
    o.rank = rank;
    for (int i = 0, k = 0; i < rank; i++) o.dims[i] = ins[i] ? 1 : s->dims[k++];
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(unsqueeze)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return copy_bytes(in[0], &out[0], "unsqueeze", err);
}

/* -------------------------------------------------------------------- shape */

XF_DECLARE_INFER(shape)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    (void)in_dt;
    (void)err;
    int64_t d = in_sh[0].rank;
    out_dt[0] = XF_I64;
    out_sh[0] = xf_shape_make(1, &d);
    return XF_OK;
}

XF_DECLARE_RUN(shape)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in[0]->shape;
    if (out[0].dtype != XF_I64 || xf_shape_numel(&out[0].shape) != s->rank)
        return XF_FAIL(err, XF_ERR_INTERNAL, "shape: output must be int64 [%d]", s->rank);
    int64_t *o = out[0].data;
    for (int i = 0; i < s->rank; i++) o[i] = s->dims[i];
    return XF_OK;
}
