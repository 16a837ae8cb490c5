/*
 * tensor.c — dense tensors: allocation, and the numerical comparison used by
 * every correctness check (interpreter vs PyTorch, round trips, backends).
 * A tensor is allocated only when its shape passes xf_shape_check and its
 * bytes fit the memory limit.
 */
#include "ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xf_status xf_tensor_alloc(xf_tensor *t, xf_dtype dtype, const xf_shape *shape, xf_error *err)
{
    t->dtype = dtype;
    t->shape = *shape;
    t->data = NULL;
    size_t es = xf_dtype_size(dtype);
    if (!es) return XF_FAIL(err, XF_ERR_INVALID, "tensor of invalid dtype");
    int64_t n;
    size_t bytes;
    xf_status st = xf_shape_check(shape, dtype, &n, &bytes, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "tensor");
        return st;
    }
    if (bytes > xf_mem_limit()) { /* described only when it fails: this is the hot path */
        char s[160], what[192];
        snprintf(what, sizeof what, "tensor %s of %s", xf_shape_str(shape, s, sizeof s),
                 xf_dtype_name(dtype));
        return xf_mem_limit_check(bytes, what, err);
    }
    t->data = xf_calloc(n ? (size_t)n : 1, es);
    if (!t->data)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory allocating %lld-element tensor",
                       (long long)n);
    return XF_OK;
}

void xf_tensor_free(xf_tensor *t)
{
    if (!t) return;
    xf_free(t->data);
    t->data = NULL;
}

xf_tensor *xf_tensor_array_alloc(int n)
{
    return xf_calloc((size_t)(n > 0 ? n : 1), sizeof(xf_tensor));
}

void xf_tensor_array_free(xf_tensor *t, int n)
{
    if (!t) return;
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
    xf_free(t);
}

size_t xf_tensor_bytes(const xf_tensor *t)
{
    return (size_t)xf_shape_numel(&t->shape) * xf_dtype_size(t->dtype);
}

double ir_tensor_elem_f64(const xf_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case XF_F32: return ((const float *)t->data)[i];
    case XF_I64: return (double)((const int64_t *)t->data)[i];
    case XF_I32: return ((const int32_t *)t->data)[i];
    case XF_BOOL: return ((const uint8_t *)t->data)[i];
    case XF_F16: return xf_f16_to_f32(((const uint16_t *)t->data)[i]);
    case XF_F64: return ((const double *)t->data)[i];
    case XF_I8: return ((const int8_t *)t->data)[i];
    case XF_U8: return ((const uint8_t *)t->data)[i];
    default: return 0;
    }
}

xf_status xf_tensor_compare(const xf_tensor *a, const xf_tensor *b, double *max_abs,
                            double *max_rel, xf_error *err)
{
    *max_abs = 0;
    *max_rel = 0;
    char sa[96], sb[96];
    if (a->dtype != b->dtype)
        return XF_FAIL(err, XF_ERR_MISMATCH, "dtype %s vs %s", xf_dtype_name(a->dtype),
                       xf_dtype_name(b->dtype));
    if (!xf_shape_equal(&a->shape, &b->shape))
        return XF_FAIL(err, XF_ERR_MISMATCH, "shape %s vs %s", xf_shape_str(&a->shape, sa, sizeof sa),
                       xf_shape_str(&b->shape, sb, sizeof sb));
    int64_t n = xf_shape_numel(&a->shape);
    for (int64_t i = 0; i < n; i++) {
        double x = ir_tensor_elem_f64(a, i), y = ir_tensor_elem_f64(b, i);
        if (isnan(x) && isnan(y)) continue;
        double d = fabs(x - y);
        if (isnan(d)) d = INFINITY;
        if (x == y) d = 0; /* equal infinities */
        double rel = d / fmax(fabs(y), 1e-6);
        if (d > *max_abs) *max_abs = d;
        if (rel > *max_rel) *max_rel = rel;
    }
    return XF_OK;
}

int xf_value_agree(double a, double ref, xf_tolerance tol)
{
    if (isnan(a) || isnan(ref)) return isnan(a) && isnan(ref);
    return a == ref || fabs(a - ref) <= tol.atol + tol.rtol * fabs(ref);
}

static int float_dtype(xf_dtype t)
{
    return t == XF_F32 || t == XF_F16 || t == XF_F64;
}

int xf_tensor_close(const xf_tensor *a, const xf_tensor *b, double rtol, double atol)
{
    if (a->dtype != b->dtype || !xf_shape_equal(&a->shape, &b->shape)) return 0;
    int64_t n = xf_shape_numel(&a->shape);
    xf_tolerance tol = {rtol, atol};
    for (int64_t i = 0; i < n; i++) {
        double x = ir_tensor_elem_f64(a, i), y = ir_tensor_elem_f64(b, i);
        if (!float_dtype(a->dtype) ? x != y : !xf_value_agree(x, y, tol)) return 0;
    }
    return 1;
}
