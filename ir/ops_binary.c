/*
 * ops_binary.c — element-wise operators with numpy multidirectional
 * broadcasting: add, sub, mul, div (float32, int64, int32), pow, equal
 * (-> bool), where (bool condition, any dtype), TASO's scalar_mul, min and
 * max (float32, int64, int32) and prelu (float32, slope broadcast to x).
 *
 * Every kernel walks the output row by row with the shared broadcast plan
 * (broadcast_internal.h); a row function handles one run of contiguous output
 * elements, with each operand either contiguous or repeated, so the hot
 * loops have no index arithmetic. Integer arithmetic wraps around like the
 * two's-complement hardware (computed in unsigned types, so it is never
 * undefined behaviour); integer division truncates toward zero like C, and
 * a zero divisor is reported as XF_ERR_INVALID instead of trapping.
 */
#include "broadcast_internal.h"
#include "op_internal.h"

#include <math.h>

/* ---------------------------------------------------------------- helpers */

static int known_dtype(xf_dtype t)
{
    return t == XF_F32 || t == XF_I64 || t == XF_I32 || t == XF_BOOL;
}

static int numeric_dtype(xf_dtype t)
{
    return t == XF_F32 || t == XF_I64 || t == XF_I32;
}

/* Broadcast shapes a and b into *out, naming the op when they do not fit. */
static xf_status broadcast2(const char *op, const xf_shape *a, const xf_shape *b, xf_shape *out,
                            xf_error *err)
{
    xf_status st = xf_shape_broadcast(a, b, out, err);
    if (st != XF_OK) xf_error_prefix(err, "%s", op);
    return st;
}

/* One row of a broadcast walk: n output elements at `o`; operand k starts at
 * src[k] and advances by stride[k] (0 or 1) elements per output element. */
typedef void (*row_fn)(void *o, const void *const *src, const int64_t *stride, int64_t n);

/* Apply `fn` over out's shape with n_ops broadcast operands. */
static void walk(xf_tensor *out, int n_ops, const xf_tensor *const *ops, row_fn fn)
{
    if (xf_shape_numel(&out->shape) == 0) return;
    xf_shape shapes[XF_BCAST_MAX_OPS];
    size_t esz[XF_BCAST_MAX_OPS];
    for (int k = 0; k < n_ops; k++) {
        shapes[k] = ops[k]->shape;
        esz[k] = xf_dtype_size(ops[k]->dtype);
    }
    xf_bcast b;
    ir_bcast_init(&b, &out->shape, n_ops, shapes);
    xf_bcast_iter it;
    ir_bcast_begin(&b, &it);
    size_t row_bytes = (size_t)b.inner * xf_dtype_size(out->dtype);
    char *dst = out->data;
    for (int64_t r = 0; r < b.rows; r++) {
        const void *src[XF_BCAST_MAX_OPS];
        for (int k = 0; k < n_ops; k++)
            src[k] = (const char *)ops[k]->data + (size_t)it.off[k] * esz[k];
        fn(dst, src, b.inner_stride, b.inner);
        dst += row_bytes;
        ir_bcast_next(&b, &it);
    }
}

/* Defines a row function computing EXPR from `x` (operand 0 of type TA) and
 * `y` (operand 1 of type TB) into TO, with the common stride patterns
 * specialised so the contiguous case vectorises. */
#define BINARY_ROW(fname, TA, TB, TO, EXPR)                                       \
    static void fname(void *o_, const void *const *s_, const int64_t *st, int64_t n) \
    {                                                                             \
        TO *o = o_;                                                               \
        const TA *a = s_[0];                                                      \
        const TB *b = s_[1];                                                      \
        if (st[0] == 1 && st[1] == 1) {                                           \
            for (int64_t i = 0; i < n; i++) {                                     \
                TA x = a[i];                                                      \
                TB y = b[i];                                                      \
                o[i] = (EXPR);                                                    \
            }                                                                     \
        } else if (st[0] == 0 && st[1] == 1) {                                    \
            TA x = a[0];                                                          \
            for (int64_t i = 0; i < n; i++) {                                     \
                TB y = b[i];                                                      \
                o[i] = (EXPR);                                                    \
            }                                                                     \
        } else if (st[0] == 1 && st[1] == 0) {                                    \
            TB y = b[0];                                                          \
            for (int64_t i = 0; i < n; i++) {                                     \
                TA x = a[i];                                                      \
                o[i] = (EXPR);                                                    \
            }                                                                     \
        } else {                                                                  \
            for (int64_t i = 0; i < n; i++) {                                     \
                TA x = a[i * st[0]];                                              \
                TB y = b[i * st[1]];                                              \
                o[i] = (EXPR);                                                    \
            }                                                                     \
        }                                                                         \
    }

/* ------------------------------------------------------- add/sub/mul/div */

/* Wrapping integer arithmetic through the unsigned type U. */
#define WRAP(T, U, x, OP, y) ((T)((U)(x)OP(U)(y)))
/* Truncating division; y != 0 is checked beforehand, MIN / -1 wraps. */
#define IDIV(T, U, x, y) ((y) == -1 ? (T)((U)0 - (U)(x)) : (T)((x) / (y)))

BINARY_ROW(add_f32, float, float, float, x + y)
BINARY_ROW(add_i64, int64_t, int64_t, int64_t, WRAP(int64_t, uint64_t, x, +, y))
BINARY_ROW(add_i32, int32_t, int32_t, int32_t, WRAP(int32_t, uint32_t, x, +, y))
BINARY_ROW(sub_f32, float, float, float, x - y)
BINARY_ROW(sub_i64, int64_t, int64_t, int64_t, WRAP(int64_t, uint64_t, x, -, y))
BINARY_ROW(sub_i32, int32_t, int32_t, int32_t, WRAP(int32_t, uint32_t, x, -, y))
BINARY_ROW(mul_f32, float, float, float, x * y)
BINARY_ROW(mul_i64, int64_t, int64_t, int64_t, WRAP(int64_t, uint64_t, x, *, y))
BINARY_ROW(mul_i32, int32_t, int32_t, int32_t, WRAP(int32_t, uint32_t, x, *, y))
BINARY_ROW(div_f32, float, float, float, x / y)
BINARY_ROW(div_i64, int64_t, int64_t, int64_t, IDIV(int64_t, uint64_t, x, y))
BINARY_ROW(div_i32, int32_t, int32_t, int32_t, IDIV(int32_t, uint32_t, x, y))

XF_DECLARE_INFER(arith)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sa[96], sb[96];
    if (!numeric_dtype(in_dt[0]) || in_dt[1] != in_dt[0])
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "ewadd/ewsub/ewmul/ewdiv: inputs are %s %s and %s %s; both must have "
                       "one dtype among float32, int64, int32",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sa, sizeof sa),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sb, sizeof sb));
    out_dt[0] = in_dt[0];
    return broadcast2("ewadd/ewsub/ewmul/ewdiv", &in_sh[0], &in_sh[1], &out_sh[0], err);
}

/* Runs one of add/sub/mul/div given its three row functions. */
static xf_status run_arith(const char *op, const xf_tensor *const *in, xf_tensor *out,
                           row_fn f32, row_fn i64, row_fn i32, xf_error *err)
{
    xf_dtype t = in[0]->dtype;
    if (in[1]->dtype != t || out->dtype != t)
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: operand dtypes %s, %s, output %s differ", op,
                       xf_dtype_name(t), xf_dtype_name(in[1]->dtype), xf_dtype_name(out->dtype));
    switch (t) {
    case XF_F32: walk(out, 2, in, f32); return XF_OK;
    case XF_I64: walk(out, 2, in, i64); return XF_OK;
    case XF_I32: walk(out, 2, in, i32); return XF_OK;
    default:
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: no kernel for dtype %s", op, xf_dtype_name(t));
    }
}

XF_DECLARE_RUN(add)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return run_arith("ewadd", in, &out[0], add_f32, add_i64, add_i32, err);
}

XF_DECLARE_RUN(sub)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return run_arith("ewsub", in, &out[0], sub_f32, sub_i64, sub_i32, err);
}

XF_DECLARE_RUN(mul)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return run_arith("ewmul", in, &out[0], mul_f32, mul_i64, mul_i32, err);
}

/* ------------------------------------------------------- min, max, prelu */

/* NaN in either operand gives NaN, as ONNX Runtime's Min/Max */
#define FMIN(x, y) ((x) != (x) || (y) != (y) ? (x) + (y) : (x) < (y) ? (x) : (y))
#define FMAX(x, y) ((x) != (x) || (y) != (y) ? (x) + (y) : (x) > (y) ? (x) : (y))
BINARY_ROW(min_f32, float, float, float, FMIN(x, y))
BINARY_ROW(min_i64, int64_t, int64_t, int64_t, x < y ? x : y)
BINARY_ROW(min_i32, int32_t, int32_t, int32_t, x < y ? x : y)
BINARY_ROW(max_f32, float, float, float, FMAX(x, y))
BINARY_ROW(max_i64, int64_t, int64_t, int64_t, x > y ? x : y)
BINARY_ROW(max_i32, int32_t, int32_t, int32_t, x > y ? x : y)
BINARY_ROW(prelu_f32, float, float, float, x < 0.0f ? x * y : x)

XF_DECLARE_RUN(min)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return run_arith("ewmin", in, &out[0], min_f32, min_i64, min_i32, err);
}

XF_DECLARE_RUN(max)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    return run_arith("ewmax", in, &out[0], max_f32, max_i64, max_i32, err);
}

/* ONNX PRelu: the slope broadcasts to x (unidirectionally). */
XF_DECLARE_INFER(prelu)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sa[96], sb[96];
    xf_shape o;
    if (in_dt[0] != XF_F32 || in_dt[1] != XF_F32 ||
        xf_shape_broadcast(&in_sh[0], &in_sh[1], &o, NULL) != XF_OK ||
        !xf_shape_equal(&o, &in_sh[0]))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "prelu: x %s %s and slope %s %s: both must be float32 and the slope "
                       "must broadcast to x",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sa, sizeof sa),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sb, sizeof sb));
    out_dt[0] = XF_F32;
    out_sh[0] = in_sh[0];
    return XF_OK;
}

XF_DECLARE_RUN(prelu)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (in[0]->dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL, "prelu: no kernel for dtype %s",
                       xf_dtype_name(in[0]->dtype));
    return run_arith("prelu", in, &out[0], prelu_f32, NULL, NULL, err);
}

/* Index of the first zero of an integer tensor, or -1. */
static int64_t find_int_zero(const xf_tensor *t)
{
    int64_t n = xf_shape_numel(&t->shape);
    if (t->dtype == XF_I64) {
        const int64_t *v = t->data;
        for (int64_t i = 0; i < n; i++)
            if (v[i] == 0) return i;
    } else if (t->dtype == XF_I32) {
        const int32_t *v = t->data;
        for (int64_t i = 0; i < n; i++)
            if (v[i] == 0) return i;
    }
    return -1;
}

XF_DECLARE_RUN(div)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (xf_shape_numel(&out[0].shape) > 0) {
        int64_t z = find_int_zero(in[1]);
        if (z >= 0) {
            char s[96];
            return XF_FAIL(err, XF_ERR_INVALID,
                           "ewdiv: integer division by zero (divisor %s %s is 0 at flat index "
                           "%lld)",
                           xf_dtype_name(in[1]->dtype), xf_shape_str(&in[1]->shape, s, sizeof s),
                           (long long)z);
        }
    }
    return run_arith("ewdiv", in, &out[0], div_f32, div_i64, div_i32, err);
}

/* -------------------------------------------------------------------- pow */

/* Saturating conversions of a double result to an integer (NaN -> 0). */
static int64_t double_to_i64(double v)
{
    if (isnan(v)) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v < -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

static int32_t double_to_i32(double v)
{
    if (isnan(v)) return 0;
    if (v >= 2147483648.0) return INT32_MAX;
    if (v < -2147483648.0) return INT32_MIN;
    return (int32_t)v;
}

/* Exact integer power (wrapping) for y >= 0; a negative exponent goes
 * through floating point and truncates (2^-1 -> 0, (-1)^-3 -> -1). */
static int64_t ipow(int64_t x, int64_t y)
{
    if (y < 0) return double_to_i64(pow((double)x, (double)y));
    uint64_t r = 1, b = (uint64_t)x;
    for (uint64_t e = (uint64_t)y; e; e >>= 1) {
        if (e & 1) r *= b;
        b *= b;
    }
    return (int64_t)r;
}

static float powf_exact2(float x, float y)
{
    return y == 2.0f ? x * x : powf(x, y);
}

#define FPOW(x, y) ((float)pow((double)(x), (double)(y)))
#define I32POW(x, y) ((int32_t)(uint32_t)(uint64_t)ipow((x), (y)))

BINARY_ROW(pow_f32_f32, float, float, float, powf_exact2(x, y))
BINARY_ROW(pow_f32_i64, float, int64_t, float, FPOW(x, y))
BINARY_ROW(pow_f32_i32, float, int32_t, float, FPOW(x, y))
BINARY_ROW(pow_i64_f32, int64_t, float, int64_t, double_to_i64(pow((double)x, (double)y)))
BINARY_ROW(pow_i64_i64, int64_t, int64_t, int64_t, ipow(x, y))
BINARY_ROW(pow_i64_i32, int64_t, int32_t, int64_t, ipow(x, y))
BINARY_ROW(pow_i32_f32, int32_t, float, int32_t, double_to_i32(pow((double)x, (double)y)))
BINARY_ROW(pow_i32_i64, int32_t, int64_t, int32_t, I32POW(x, y))
BINARY_ROW(pow_i32_i32, int32_t, int32_t, int32_t, I32POW(x, y))

/* Row function for base dtype b and exponent dtype e (both numeric). */
static row_fn pow_row(xf_dtype b, xf_dtype e)
{
    static const row_fn table[3][3] = {
        {pow_f32_f32, pow_f32_i64, pow_f32_i32},
        {pow_i64_f32, pow_i64_i64, pow_i64_i32},
        {pow_i32_f32, pow_i32_i64, pow_i32_i32},
    };
    /* XF_F32, XF_I64, XF_I32 are 1, 2, 3. */
    return table[(int)b - XF_F32][(int)e - XF_F32];
}

XF_DECLARE_INFER(pow)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sa[96], sb[96];
    if (!numeric_dtype(in_dt[0]) || !numeric_dtype(in_dt[1]))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "pow: base %s %s and exponent %s %s must each be float32, int64 or int32",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sa, sizeof sa),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sb, sizeof sb));
    out_dt[0] = in_dt[0];
    return broadcast2("pow", &in_sh[0], &in_sh[1], &out_sh[0], err);
}

XF_DECLARE_RUN(pow)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    xf_dtype b = in[0]->dtype, e = in[1]->dtype;
    if (!numeric_dtype(b) || !numeric_dtype(e) || out[0].dtype != b)
        return XF_FAIL(err, XF_ERR_INTERNAL, "pow: no kernel for %s ^ %s -> %s", xf_dtype_name(b),
                       xf_dtype_name(e), xf_dtype_name(out[0].dtype));
    walk(&out[0], 2, in, pow_row(b, e));
    return XF_OK;
}

/* ------------------------------------------------------------------ equal */

BINARY_ROW(eq_f32, float, float, uint8_t, (uint8_t)(x == y))
BINARY_ROW(eq_i64, int64_t, int64_t, uint8_t, (uint8_t)(x == y))
BINARY_ROW(eq_i32, int32_t, int32_t, uint8_t, (uint8_t)(x == y))
BINARY_ROW(eq_u8, uint8_t, uint8_t, uint8_t, (uint8_t)(x == y))

XF_DECLARE_INFER(equal)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sa[96], sb[96];
    if (!known_dtype(in_dt[0]) || in_dt[1] != in_dt[0])
        return XF_FAIL(err, XF_ERR_SHAPE, "equal: inputs %s %s and %s %s must have one dtype",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sa, sizeof sa),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sb, sizeof sb));
    out_dt[0] = XF_BOOL;
    return broadcast2("equal", &in_sh[0], &in_sh[1], &out_sh[0], err);
}

XF_DECLARE_RUN(equal)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    xf_dtype t = in[0]->dtype;
    if (in[1]->dtype != t || out[0].dtype != XF_BOOL)
        return XF_FAIL(err, XF_ERR_INTERNAL, "equal: operands %s, %s, output %s",
                       xf_dtype_name(t), xf_dtype_name(in[1]->dtype),
                       xf_dtype_name(out[0].dtype));
    switch (t) {
    case XF_F32: walk(&out[0], 2, in, eq_f32); return XF_OK;
    case XF_I64: walk(&out[0], 2, in, eq_i64); return XF_OK;
    case XF_I32: walk(&out[0], 2, in, eq_i32); return XF_OK;
    case XF_BOOL: walk(&out[0], 2, in, eq_u8); return XF_OK;
    default:
        return XF_FAIL(err, XF_ERR_INTERNAL, "equal: no kernel for %s", xf_dtype_name(t));
    }
}

/* ------------------------------------------------------------------ where */

/* out = cond ? x : y for one row; the condition is operand 0. */
#define WHERE_ROW(fname, T)                                                        \
    static void fname(void *o_, const void *const *s_, const int64_t *st, int64_t n) \
    {                                                                              \
        T *o = o_;                                                                 \
        const uint8_t *c = s_[0];                                                  \
        const T *x = s_[1], *y = s_[2];                                            \
        if (st[0] == 1 && st[1] == 1 && st[2] == 1) {                              \
            for (int64_t i = 0; i < n; i++) o[i] = c[i] ? x[i] : y[i];             \
        } else {                                                                   \
            for (int64_t i = 0; i < n; i++)                                        \
                o[i] = c[i * st[0]] ? x[i * st[1]] : y[i * st[2]];                 \
        }                                                                          \
    }

WHERE_ROW(where_f32, float)
WHERE_ROW(where_i64, int64_t)
WHERE_ROW(where_i32, int32_t)
WHERE_ROW(where_u8, uint8_t)

XF_DECLARE_INFER(where)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sc[96], sa[96], sb[96];
    if (in_dt[0] != XF_BOOL || !known_dtype(in_dt[1]) || in_dt[2] != in_dt[1])
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "where: condition %s %s must be bool and x %s %s, y %s %s one dtype",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sc, sizeof sc),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sa, sizeof sa),
                       xf_dtype_name(in_dt[2]), xf_shape_str(&in_sh[2], sb, sizeof sb));
    xf_shape t;
    xf_status st = broadcast2("where", &in_sh[0], &in_sh[1], &t, err);
    if (st != XF_OK) return st;
    st = broadcast2("where", &t, &in_sh[2], &out_sh[0], err);
    if (st != XF_OK) return st;
    out_dt[0] = in_dt[1];
    return XF_OK;
}

XF_DECLARE_RUN(where)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    xf_dtype t = in[1]->dtype;
    if (in[0]->dtype != XF_BOOL || in[2]->dtype != t || out[0].dtype != t)
        return XF_FAIL(err, XF_ERR_INTERNAL, "where: operands %s, %s, %s, output %s",
                       xf_dtype_name(in[0]->dtype), xf_dtype_name(t),
                       xf_dtype_name(in[2]->dtype), xf_dtype_name(out[0].dtype));
    switch (t) {
    case XF_F32: walk(&out[0], 3, in, where_f32); return XF_OK;
    case XF_I64: walk(&out[0], 3, in, where_i64); return XF_OK;
    case XF_I32: walk(&out[0], 3, in, where_i32); return XF_OK;
    case XF_BOOL: walk(&out[0], 3, in, where_u8); return XF_OK;
    default:
        return XF_FAIL(err, XF_ERR_INTERNAL, "where: no kernel for %s", xf_dtype_name(t));
    }
}

/* ------------------------------------------------------------- scalar_mul */

XF_DECLARE_INFER(scalar_mul)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sa[96], sb[96];
    if (in_dt[0] != XF_F32 || in_dt[1] != XF_F32 || in_sh[1].rank != 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "scalar_mul: needs a float32 tensor and a rank-0 float32 scalar, got %s "
                       "%s and %s %s",
                       xf_dtype_name(in_dt[0]), xf_shape_str(&in_sh[0], sa, sizeof sa),
                       xf_dtype_name(in_dt[1]), xf_shape_str(&in_sh[1], sb, sizeof sb));
    out_dt[0] = XF_F32;
    out_sh[0] = in_sh[0];
    return XF_OK;
}

XF_DECLARE_RUN(scalar_mul)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    int64_t n = xf_shape_numel(&in[0]->shape);
    if (in[0]->dtype != XF_F32 || in[1]->dtype != XF_F32 || out[0].dtype != XF_F32 ||
        xf_shape_numel(&in[1]->shape) != 1 || xf_shape_numel(&out[0].shape) != n)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "scalar_mul: operands do not match the inferred shapes");
    const float *x = in[0]->data;
    float s = *(const float *)in[1]->data, *o = out[0].data;
    for (int64_t i = 0; i < n; i++) o[i] = x[i] * s;
    return XF_OK;
}
