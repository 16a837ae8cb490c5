/*
 * ops_unary.c — element-wise unary operators: the float32 activations and
 * maths functions (relu, sigmoid, tanh, erf, exact gelu, sqrt, exp, log, neg,
 * abs, reciprocal), the parametrised clip, hardsigmoid, hardswish and
 * leakyrelu (params.alpha/beta), plus the dtype-agnostic identity, inference-mode dropout
 * and cast between every dtype (float16, float64, int8 and uint8 through a
 * double: exact for all of them but int64 beyond 2^53, which never meets them).
 *
 * Every output has the input's shape, so each kernel is one contiguous loop.
 * Casts follow numpy/ONNX: float to integer truncates toward zero (values
 * beyond the integer range saturate, NaN becomes 0, where C would be
 * undefined), int64 to int32 wraps, anything to bool is "nonzero".
 */
#include "op_internal.h"

#include <math.h>
#include <string.h>

#define INV_SQRT2 0.70710678118654752440

/* ------------------------------------------------------------ float maths */

XF_DECLARE_INFER(unary)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (in_dt[0] != XF_F32) {
        char s[96];
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "element-wise float op (relu, sigmoid, tanh, erf, gelu, sqrt, exp, log, "
                       "neg, abs, reciprocal): input is %s %s, only float32 is supported",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], s, sizeof s));
    }
    out_dt[0] = XF_F32;
    out_sh[0] = in_sh[0];
    return XF_OK;
}

/* Checks that input 0 and output 0 are float32 tensors of one size. */
static xf_status float_io(const char *op, const xf_tensor *const *in, const xf_tensor *out,
                          xf_error *err)
{
    if (in[0]->dtype != XF_F32 || out->dtype != XF_F32 ||
        xf_shape_numel(&in[0]->shape) != xf_shape_numel(&out->shape))
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: expects float32 input and output of one size",
                       op);
    return XF_OK;
}

/* Defines ir_run_<name>: out[i] = EXPR with `x` the input element. */
#define UNARY_KERNEL(name, EXPR)                                              \
    XF_DECLARE_RUN(name)                                                      \
    {                                                                         \
        (void)p;                                                              \
        (void)n_in;                                                           \
        (void)n_out;                                                          \
        xf_status st = float_io(#name, in, &out[0], err);                     \
        if (st != XF_OK) return st;                                           \
        const float *src = in[0]->data;                                       \
        float *dst = out[0].data;                                             \
        int64_t n = xf_shape_numel(&in[0]->shape);                            \
        for (int64_t i = 0; i < n; i++) {                                     \
            float x = src[i];                                                 \
            dst[i] = (EXPR);                                                  \
        }                                                                     \
        return XF_OK;                                                         \
    }

/* Logistic function without overflow for large |x|. */
static float sigmoidf(float x)
{
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

/* max(0, min(1, v)), NaN kept */
static float hard01(float v)
{
    return v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
}

static float geluf(float x)
{
    double d = x;
    return (float)(0.5 * d * (1.0 + erf(d * INV_SQRT2)));
}

UNARY_KERNEL(relu, x < 0.0f ? 0.0f : x) /* NaN passes through, as max(x, 0) */
UNARY_KERNEL(sigmoid, sigmoidf(x))
UNARY_KERNEL(tanh, tanhf(x))
UNARY_KERNEL(erf, erff(x))
UNARY_KERNEL(gelu, geluf(x))
UNARY_KERNEL(sqrt, sqrtf(x))
UNARY_KERNEL(exp, expf(x))
UNARY_KERNEL(log, logf(x))
UNARY_KERNEL(neg, -x)
UNARY_KERNEL(abs, fabsf(x))
UNARY_KERNEL(reciprocal, 1.0f / x)
/* NaN passes through the comparisons of clip and the activations below */
UNARY_KERNEL(clip, x < p->alpha ? p->alpha : x > p->beta ? p->beta : x)
UNARY_KERNEL(hardsigmoid, hard01(p->alpha * x + p->beta))
UNARY_KERNEL(hardswish, x * hard01(x / 6.0f + 0.5f))
UNARY_KERNEL(leakyrelu, x < 0.0f ? p->alpha * x : x)

/* --------------------------------------------------------------- identity */

static int known_dtype(xf_dtype t)
{
    return t > XF_DTYPE_INVALID && t < XF_DTYPE_COUNT;
}

static int computed_dtype(xf_dtype t)
{
    return t == XF_F32 || t == XF_I64 || t == XF_I32 || t == XF_BOOL;
}

static xf_status copy_tensor(const char *op, const xf_tensor *src, xf_tensor *dst, xf_error *err)
{
    size_t n = xf_tensor_bytes(src);
    if (src->dtype != dst->dtype || n != xf_tensor_bytes(dst))
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: output does not match the input's dtype/size",
                       op);
    if (n) memcpy(dst->data, src->data, n);
    return XF_OK;
}

XF_DECLARE_INFER(identity)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (!known_dtype(in_dt[0]))
        return XF_FAIL(err, XF_ERR_SHAPE, "identity: input has invalid dtype %d", (int)in_dt[0]);
    out_dt[0] = in_dt[0];
    out_sh[0] = in_sh[0];
    return XF_OK;
}

XF_DECLARE_RUN(identity)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return copy_tensor("identity", in[0], &out[0], err);
}

/* ---------------------------------------------------------------- dropout */

/* Inference mode: the ratio and training_mode inputs are ignored, the data
 * passes through and the optional mask says every element was kept. */
XF_DECLARE_INFER(dropout)
{
    (void)p;
    (void)n_in;
    if (!known_dtype(in_dt[0]))
        return XF_FAIL(err, XF_ERR_SHAPE, "dropout: input has invalid dtype %d", (int)in_dt[0]);
    out_dt[0] = in_dt[0];
    out_sh[0] = in_sh[0];
    if (n_out > 1) {
        out_dt[1] = XF_BOOL;
        out_sh[1] = in_sh[0];
    }
    return XF_OK;
}

XF_DECLARE_RUN(dropout)
{
    (void)p;
    (void)n_in;
    xf_status st = copy_tensor("dropout", in[0], &out[0], err);
    if (st != XF_OK) return st;
    if (n_out > 1) {
        if (out[1].dtype != XF_BOOL)
            return XF_FAIL(err, XF_ERR_INTERNAL, "dropout: mask output must be bool");
        memset(out[1].data, 1, xf_tensor_bytes(&out[1]));
    }
    return XF_OK;
}

/* ------------------------------------------------------------------- cast */

XF_DECLARE_INFER(cast)
{
    (void)n_in;
    (void)n_out;
    xf_dtype to = (xf_dtype)p->to;
    if (!known_dtype(to))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "cast: target dtype %d is not one rlflow knows", p->to);
    if (!known_dtype(in_dt[0]))
        return XF_FAIL(err, XF_ERR_SHAPE, "cast: input has invalid dtype %d", (int)in_dt[0]);
    out_dt[0] = to;
    out_sh[0] = in_sh[0];
    return XF_OK;
}

/* Saturating truncation toward zero; NaN gives 0. */
static int64_t float_to_i64(float v)
{
    if (isnan(v)) return 0;
    if (v >= 9223372036854775808.0f) return INT64_MAX;
    if (v < -9223372036854775808.0f) return INT64_MIN;
    return (int64_t)v;
}

static int32_t float_to_i32(float v)
{
    if (isnan(v)) return 0;
    if (v >= 2147483648.0f) return INT32_MAX;
    if (v < -2147483648.0f) return INT32_MIN;
    return (int32_t)v;
}

/* Loop converting n elements of type TI at `s` into TO at `d`. */
#define CONVERT(TI, TO, EXPR)                         \
    do {                                              \
        const TI *s_ = (const TI *)src;               \
        TO *d_ = (TO *)dst;                           \
        for (int64_t i = 0; i < n; i++) {             \
            TI x = s_[i];                             \
            d_[i] = (EXPR);                           \
        }                                             \
    } while (0)

static void cast_to_f32(xf_dtype from, const void *src, void *dst, int64_t n)
{
    switch (from) {
    case XF_F32: CONVERT(float, float, x); break;
    case XF_I64: CONVERT(int64_t, float, (float)x); break;
    case XF_I32: CONVERT(int32_t, float, (float)x); break;
    default: CONVERT(uint8_t, float, x ? 1.0f : 0.0f); break;
    }
}

static void cast_to_i64(xf_dtype from, const void *src, void *dst, int64_t n)
{
    switch (from) {
    case XF_F32: CONVERT(float, int64_t, float_to_i64(x)); break;
    case XF_I64: CONVERT(int64_t, int64_t, x); break;
    case XF_I32: CONVERT(int32_t, int64_t, x); break;
    default: CONVERT(uint8_t, int64_t, x ? 1 : 0); break;
    }
}

static void cast_to_i32(xf_dtype from, const void *src, void *dst, int64_t n)
{
    switch (from) {
    case XF_F32: CONVERT(float, int32_t, float_to_i32(x)); break;
    case XF_I64: CONVERT(int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)x); break;
    case XF_I32: CONVERT(int32_t, int32_t, x); break;
    default: CONVERT(uint8_t, int32_t, x ? 1 : 0); break;
    }
}

static void cast_to_bool(xf_dtype from, const void *src, void *dst, int64_t n)
{
    switch (from) {
    case XF_F32: CONVERT(float, uint8_t, x != 0.0f ? 1 : 0); break;
    case XF_I64: CONVERT(int64_t, uint8_t, x != 0 ? 1 : 0); break;
    case XF_I32: CONVERT(int32_t, uint8_t, x != 0 ? 1 : 0); break;
    default: CONVERT(uint8_t, uint8_t, x != 0 ? 1 : 0); break;
    }
}

/* Saturating store of v (already truncated for integers) as one element of t. */
static void store_elem(xf_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case XF_F32: ((float *)t->data)[i] = (float)v; break;
    case XF_F16: ((uint16_t *)t->data)[i] = xf_f32_to_f16((float)v); break;
    case XF_F64: ((double *)t->data)[i] = v; break;
    case XF_BOOL: ((uint8_t *)t->data)[i] = v != 0.0; break;
    case XF_I64:
        ((int64_t *)t->data)[i] = isnan(v)                    ? 0
                                  : v < -9223372036854775808.0 ? INT64_MIN
                                  : v >= 9223372036854775808.0 ? INT64_MAX
                                                               : (int64_t)v;
        break;
    case XF_I32:
        ((int32_t *)t->data)[i] = isnan(v)             ? 0
                                  : v < -2147483648.0 ? INT32_MIN
                                  : v > 2147483647.0  ? INT32_MAX
                                                      : (int32_t)v;
        break;
    case XF_I8: ((int8_t *)t->data)[i] = isnan(v) ? 0 : v < -128.0 ? -128 : v > 127.0 ? 127 : (int8_t)v; break;
    case XF_U8: ((uint8_t *)t->data)[i] = isnan(v) ? 0 : v < 0.0 ? 0 : v > 255.0 ? 255 : (uint8_t)v; break;
    default: break;
    }
}

XF_DECLARE_RUN(cast)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    xf_dtype from = in[0]->dtype, to = out[0].dtype;
    int64_t n = xf_shape_numel(&in[0]->shape);
    if (!known_dtype(from) || !known_dtype(to) || n != xf_shape_numel(&out[0].shape))
        return XF_FAIL(err, XF_ERR_INTERNAL, "cast: %s to %s with mismatched tensors",
                       xf_dtype_name(from), xf_dtype_name(to));
    if (!computed_dtype(from) || !computed_dtype(to)) {
        for (int64_t i = 0; i < n; i++) {
            store_elem(&out[0], i, ir_tensor_elem_f64(in[0], i));
        }
        return XF_OK;
    }
    switch (to) {
    case XF_F32: cast_to_f32(from, in[0]->data, out[0].data, n); break;
    case XF_I64: cast_to_i64(from, in[0]->data, out[0].data, n); break;
    case XF_I32: cast_to_i32(from, in[0]->data, out[0].data, n); break;
    default: cast_to_bool(from, in[0]->data, out[0].data, n); break;
    }
    return XF_OK;
}
