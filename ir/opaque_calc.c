/*
 * opaque_calc.c — kernels of the shape arithmetic exporters write around a
 * model's real work: Range (position ids from the sequence length),
 * ConstantOfShape of a run-time shape (token types, masks), Mod (Swin's
 * paddings to a multiple of the window) and ScatterND (Swin's shifted-
 * window mask). They are opaque operators (rules never match them) with a
 * kernel, so that the importer can compute them on values known at import
 * (sizes derived from shapes) and the interpreter can run them when the
 * model computes them at run time.
 *
 * Range's and ConstantOfShape's output sizes follow their inputs' values,
 * so inference takes the inputs' data, not only their shapes: the
 * interpreter checks the size it finds against the one recorded in the
 * graph, and a model whose sizes depend on data that changed is refused
 * by name rather than run on the wrong size.
 */
#include "broadcast_internal.h"
#include "op_internal.h"

#include <math.h>
#include <string.h>

int xf_opaque_calc_kernel(xf_opaque_kernel k)
{
    return k == XF_OPAQUE_RANGE || k == XF_OPAQUE_CONSTANT_OF_SHAPE || k == XF_OPAQUE_MOD ||
           k == XF_OPAQUE_SCATTER_ND || k == XF_OPAQUE_QUANTIZE || k == XF_OPAQUE_DEQUANTIZE;
}

/* Element i of an integer or float tensor as an int64. */
static int64_t elem_i(const xf_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case XF_F32: return (int64_t)((const float *)t->data)[i];
    case XF_I64: return ((const int64_t *)t->data)[i];
    case XF_I32: return ((const int32_t *)t->data)[i];
    case XF_BOOL: return ((const uint8_t *)t->data)[i];
    default: return (int64_t)ir_tensor_elem_f64(t, i);
    }
}

static int is_float(xf_dtype t)
{
    return t == XF_F32 || t == XF_F16 || t == XF_F64;
}

static void store(xf_tensor *t, int64_t i, double f, int64_t v)
{
    switch (t->dtype) {
    case XF_F32: ((float *)t->data)[i] = (float)f; break;
    case XF_I64: ((int64_t *)t->data)[i] = v; break;
    case XF_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case XF_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    case XF_F16: ((uint16_t *)t->data)[i] = xf_f32_to_f16((float)f); break;
    case XF_F64: ((double *)t->data)[i] = f; break;
    case XF_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    case XF_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    default: break;
    }
}

static xf_status need(int n_in, const xf_tensor *const *in, int lo, const char *op, xf_error *err)
{
    for (int i = 0; i < lo; i++)
        if (i >= n_in || !in[i] || !in[i]->data)
            return XF_FAIL(err, XF_ERR_INVALID, "%s: input %d is missing", op, i);
    return XF_OK;
}

/* ------------------------------------------------------------------ Range */

/* The element count of Range(start, limit, delta): max(ceil((limit -
 * start) / delta), 0), exactly for integers. */
static xf_status range_count(const xf_tensor *const *in, int64_t *n, xf_error *err)
{
    for (int i = 0; i < 3; i++)
        if (xf_shape_numel(&in[i]->shape) != 1 || in[i]->dtype != in[0]->dtype)
            return XF_FAIL(err, XF_ERR_SHAPE, "range: start, limit and delta must be scalars of "
                           "one dtype (input %d is %s with %lld elements)", i,
                           xf_dtype_name(in[i]->dtype), (long long)xf_shape_numel(&in[i]->shape));
    if (in[0]->dtype == XF_F32) {
        double s = ir_tensor_elem_f64(in[0], 0), l = ir_tensor_elem_f64(in[1], 0), d = ir_tensor_elem_f64(in[2], 0);
        if (d == 0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
            return XF_FAIL(err, XF_ERR_INVALID, "range: delta is 0 or a bound is not finite");
        double c = ceil((l - s) / d);
        if (c > (double)XF_SHAPE_MAX_ELEMS)
            return XF_FAIL(err, XF_ERR_SHAPE, "range: %g elements", c);
        *n = c > 0 ? (int64_t)c : 0;
        return XF_OK;
    }
    if (in[0]->dtype != XF_I64 && in[0]->dtype != XF_I32)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "range of %s", xf_dtype_name(in[0]->dtype));
    int64_t s = elem_i(in[0], 0), l = elem_i(in[1], 0), d = elem_i(in[2], 0);
    if (d == 0) return XF_FAIL(err, XF_ERR_INVALID, "range: delta is 0");
    /* |l - s| and |d| below 2^62 keep the arithmetic in range */
    const int64_t big = (int64_t)1 << 62;
    if (s > big || s < -big || l > big || l < -big || d > big || d < -big)
        return XF_FAIL(err, XF_ERR_SHAPE, "range: bounds beyond 2^62");
    int64_t span = l - s;
    int64_t c = d > 0 ? (span > 0 ? (span + d - 1) / d : 0) : (span < 0 ? (-span - d - 1) / -d : 0);
    *n = c;
    return XF_OK;
}

static xf_status range_run(const xf_tensor *const *in, xf_tensor *out)
{
    int64_t n = xf_shape_numel(&out->shape);
    if (in[0]->dtype == XF_F32) {
        double s = ir_tensor_elem_f64(in[0], 0), d = ir_tensor_elem_f64(in[2], 0);
        for (int64_t i = 0; i < n; i++) store(out, i, s + (double)i * d, 0);
    } else {
        int64_t s = elem_i(in[0], 0), d = elem_i(in[2], 0);
        for (int64_t i = 0; i < n; i++) store(out, i, 0, s + i * d);
    }
    return XF_OK;
}

/* -------------------------------------------------------- ConstantOfShape */

static xf_status cos_shape(const xf_tensor *s, xf_shape *sh, xf_error *err)
{
    int64_t n = xf_shape_numel(&s->shape);
    if (s->shape.rank != 1 || (s->dtype != XF_I64 && s->dtype != XF_I32) || n > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_SHAPE, "constant_of_shape: the shape must be a 1-D integer "
                       "tensor of at most %d dims", XF_MAX_DIMS);
    sh->rank = (int)n;
    for (int i = 0; i < sh->rank; i++) {
        sh->dims[i] = elem_i(s, i);
        if (sh->dims[i] < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "constant_of_shape: dim %d is %lld", i,
                           (long long)sh->dims[i]);
    }
    return XF_OK;
}

/* -------------------------------------------------------------------- Mod */

static xf_status mod_run(const xf_opaque *o, const xf_tensor *const *in, xf_tensor *out,
                         xf_error *err)
{
    xf_bcast b;
    xf_bcast_iter it;
    xf_shape ops[2] = {in[0]->shape, in[1]->shape};
    ir_bcast_init(&b, &out->shape, 2, ops);
    ir_bcast_begin(&b, &it);
    int64_t k = 0;
    for (int64_t r = 0; r < b.rows; r++, ir_bcast_next(&b, &it)) {
        for (int64_t j = 0; j < b.inner; j++, k++) {
            int64_t ia = it.off[0] + j * b.inner_stride[0], ib = it.off[1] + j * b.inner_stride[1];
            if (is_float(out->dtype)) {
                store(out, k, fmod(ir_tensor_elem_f64(in[0], ia), ir_tensor_elem_f64(in[1], ib)), 0);
                continue;
            }
            int64_t x = elem_i(in[0], ia), y = elem_i(in[1], ib);
            if (y == 0) return XF_FAIL(err, XF_ERR_INVALID, "mod: integer division by zero");
            int64_t m = y == -1 ? 0 : x % y;
            if (!o->calc.fmod && m != 0 && ((m < 0) != (y < 0))) m += y;
            store(out, k, 0, m);
        }
    }
    return XF_OK;
}

/* -------------------------------------------------------------- ScatterND */

/* indices [..., q] address q leading dims of data; each update is a block
 * of the remaining dims. */
static xf_status scatter_check(const xf_tensor *const *in, int64_t *n_upd, int64_t *block,
                               xf_error *err)
{
    const xf_shape *d = &in[0]->shape, *ix = &in[1]->shape, *u = &in[2]->shape;
    if (in[1]->dtype != XF_I64 && in[1]->dtype != XF_I32)
        return XF_FAIL(err, XF_ERR_SHAPE, "scatter_nd: indices must be integers");
    if (ix->rank < 1 || in[2]->dtype != in[0]->dtype)
        return XF_FAIL(err, XF_ERR_SHAPE, "scatter_nd: indices of rank 0 or updates of another "
                       "dtype than the data");
    int64_t q = ix->dims[ix->rank - 1];
    if (q < 0 || q > d->rank || u->rank != ix->rank - 1 + d->rank - (int)q)
        return XF_FAIL(err, XF_ERR_SHAPE, "scatter_nd: updates of rank %d do not match indices "
                       "of rank %d addressing %lld of %d data dims", u->rank, ix->rank,
                       (long long)q, d->rank);
    *n_upd = 1;
    for (int i = 0; i < ix->rank - 1; i++) {
        if (u->dims[i] != ix->dims[i])
            return XF_FAIL(err, XF_ERR_SHAPE, "scatter_nd: updates dim %d (%lld) differs from "
                           "the indices' (%lld)", i, (long long)u->dims[i],
                           (long long)ix->dims[i]);
        *n_upd *= ix->dims[i];
    }
    *block = 1;
    for (int i = (int)q; i < d->rank; i++) {
        if (u->dims[ix->rank - 1 + i - (int)q] != d->dims[i])
            return XF_FAIL(err, XF_ERR_SHAPE, "scatter_nd: an update's dims differ from the "
                           "data's trailing dims");
        *block *= d->dims[i];
    }
    return XF_OK;
}

static double reduce(int how, double a, double b)
{
    switch (how) {
    case 1: return a + b;
    case 2: return a * b;
    case 3: return a > b ? a : b;
    case 4: return a < b ? a : b;
    default: return b;
    }
}

static xf_status scatter_run(const xf_opaque *o, const xf_tensor *const *in, xf_tensor *out,
                             xf_error *err)
{
    int64_t n_upd, block;
    xf_status st = scatter_check(in, &n_upd, &block, err);
    if (st) return st;
    memcpy(out->data, in[0]->data, xf_tensor_bytes(out));
    const xf_shape *d = &in[0]->shape;
    int64_t q = in[1]->shape.dims[in[1]->shape.rank - 1], strides[XF_MAX_DIMS];
    xf_shape_strides(d, strides);
    size_t es = xf_dtype_size(out->dtype);
    for (int64_t u = 0; u < n_upd; u++) {
        int64_t at = 0;
        for (int64_t j = 0; j < q; j++) {
            int64_t v = elem_i(in[1], u * q + j), dim = d->dims[j];
            if (v < -dim || v >= dim)
                return XF_FAIL(err, XF_ERR_INVALID, "scatter_nd: index %lld out of range for a "
                               "dim of %lld", (long long)v, (long long)dim);
            at += (v < 0 ? v + dim : v) * strides[j];
        }
        if (o->calc.reduction == 0) {
            memcpy((char *)out->data + (size_t)at * es,
                   (const char *)in[2]->data + (size_t)(u * block) * es, (size_t)block * es);
            continue;
        }
        for (int64_t e = 0; e < block; e++) {
            double r = reduce(o->calc.reduction, ir_tensor_elem_f64(out, at + e), ir_tensor_elem_f64(in[2], u * block + e));
            int64_t ri = out->dtype == XF_F32 ? 0
                         : o->calc.reduction == 1 ? elem_i(out, at + e) + elem_i(in[2], u * block + e)
                         : o->calc.reduction == 2 ? elem_i(out, at + e) * elem_i(in[2], u * block + e)
                                                  : (int64_t)r;
            store(out, at + e, r, ri);
        }
    }
    return XF_OK;
}

/* ------------------------------------------------------------------ entry */

static const char *calc_name(xf_opaque_kernel k)
{
    switch (k) {
    case XF_OPAQUE_RANGE: return "range";
    case XF_OPAQUE_CONSTANT_OF_SHAPE: return "constant_of_shape";
    case XF_OPAQUE_MOD: return "mod";
    case XF_OPAQUE_QUANTIZE: return "quantize_linear";
    case XF_OPAQUE_DEQUANTIZE: return "dequantize_linear";
    default: return "scatter_nd";
    }
}

xf_status xf_opaque_calc_infer(const xf_opaque *o, int n_in, const xf_tensor *const *in,
                               xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    static const int arity[] = {[XF_OPAQUE_RANGE] = 3, [XF_OPAQUE_CONSTANT_OF_SHAPE] = 1,
                                [XF_OPAQUE_MOD] = 2, [XF_OPAQUE_SCATTER_ND] = 3,
                                [XF_OPAQUE_QUANTIZE] = 2, [XF_OPAQUE_DEQUANTIZE] = 2};
    if (!xf_opaque_calc_kernel(o->kernel))
        return XF_FAIL(err, XF_ERR_INTERNAL, "not a shape-arithmetic kernel (%d)", o->kernel);
    xf_status st = need(n_in, in, arity[o->kernel], calc_name(o->kernel), err);
    if (st) return st;
    memset(sh, 0, sizeof *sh);
    switch (o->kernel) {
    case XF_OPAQUE_QUANTIZE:
    case XF_OPAQUE_DEQUANTIZE: return ir_quant_infer(o, n_in, in, dt, sh, err);
    case XF_OPAQUE_RANGE: {
        int64_t n = 0;
        st = range_count(in, &n, err);
        *dt = in[0]->dtype;
        *sh = xf_shape_make(1, &n);
        return st;
    }
    case XF_OPAQUE_CONSTANT_OF_SHAPE:
        *dt = (xf_dtype)o->calc.value_dtype;
        return cos_shape(in[0], sh, err);
    case XF_OPAQUE_MOD:
        *dt = in[0]->dtype;
        if (in[1]->dtype != in[0]->dtype)
            return XF_FAIL(err, XF_ERR_SHAPE, "mod: operands of dtypes %s and %s",
                           xf_dtype_name(in[0]->dtype), xf_dtype_name(in[1]->dtype));
        if (is_float(*dt) && !o->calc.fmod)
            return XF_FAIL(err, XF_ERR_SHAPE, "mod: float operands need fmod=1");
        return xf_shape_broadcast(&in[0]->shape, &in[1]->shape, sh, err);
    default: {
        int64_t n_upd, block;
        *dt = in[0]->dtype;
        *sh = in[0]->shape;
        return scatter_check(in, &n_upd, &block, err);
    }
    }
}

xf_status xf_opaque_calc_run(const xf_opaque *o, int n_in, const xf_tensor *const *in,
                             xf_tensor *out, xf_error *err)
{
    xf_dtype dt;
    xf_shape sh;
    xf_status st = xf_opaque_calc_infer(o, n_in, in, &dt, &sh, err);
    if (st) return st;
    if (dt != out->dtype || !xf_shape_equal(&sh, &out->shape)) {
        char a[96], b[96];
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: its inputs give %s %s, the graph recorded %s %s at import (a size "
                       "that depends on data, not only on shapes)",
                       calc_name(o->kernel), xf_dtype_name(dt), xf_shape_str(&sh, a, sizeof a),
                       xf_dtype_name(out->dtype), xf_shape_str(&out->shape, b, sizeof b));
    }
    switch (o->kernel) {
    case XF_OPAQUE_RANGE: return range_run(in, out);
    case XF_OPAQUE_CONSTANT_OF_SHAPE: {
        int64_t n = xf_shape_numel(&out->shape);
        for (int64_t i = 0; i < n; i++) store(out, i, o->calc.value, (int64_t)o->calc.value);
        return XF_OK;
    }
    case XF_OPAQUE_MOD: return mod_run(o, in, out, err);
    case XF_OPAQUE_QUANTIZE:
    case XF_OPAQUE_DEQUANTIZE: return ir_quant_run(o, n_in, in, out, err);
    default: return scatter_run(o, in, out, err);
    }
}
