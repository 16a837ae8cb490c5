/*
 * test_ops_math.c — the arithmetic operators of ir/: element-wise unary
 * (ops_unary.c), broadcasting binary/ternary (ops_binary.c), normalisations
 * and reductions (ops_norm.c) and pooling (ops_pool.c).
 *
 * Every kernel is compared with a direct per-element computation written
 * here in double precision, independent of the kernels' row/stride plans:
 * broadcasting is resolved by mapping each output multi-index to each
 * operand, pooling by visiting every kernel tap of every window over many
 * random (kernel, stride, dilation, pads, ceil_mode, count_include_pad)
 * configurations, reductions by summing over every index that maps to an
 * output. Hand-computed cases pin the ONNX corner rules (ceil_mode's last
 * window, count_include_pad with ceil padding, integer division and
 * wrap-around, casts), and the shape-inference errors are checked by
 * message text. One small graph runs through the interpreter.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* --------------------------------------------------------------- helpers */

static void mk(xf_tensor *t, xf_dtype dt, int rank, const int64_t *dims, const void *data)
{
    xf_shape s = xf_shape_make(rank, dims);
    ck_assert_int_eq(xf_tensor_alloc(t, dt, &s, NULL), XF_OK);
    if (data) memcpy(t->data, data, xf_tensor_bytes(t));
}

static void mk_rand(xf_tensor *t, xf_dtype dt, int rank, const int64_t *dims, uint64_t seed)
{
    mk(t, dt, rank, dims, NULL);
    xf_test_fill(t, seed, 1000);
}

/* Infer, allocate and run one op. On failure nothing is left allocated. */
static xf_status run_op(xf_op op, const xf_params *p, int n_in, const xf_tensor *ins, int n_out,
                        xf_tensor *outs, xf_error *err)
{
    xf_dtype idt[8], odt[8];
    xf_shape ish[8], osh[8];
    const xf_tensor *ip[8];
    for (int i = 0; i < n_in; i++) {
        idt[i] = ins[i].dtype;
        ish[i] = ins[i].shape;
        ip[i] = &ins[i];
    }
    xf_status st = xf_op_infer(op, p, n_in, idt, ish, n_out, odt, osh, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < n_out; i++)
        ck_assert_int_eq(xf_tensor_alloc(&outs[i], odt[i], &osh[i], err), XF_OK);
    st = xf_op_run(op, p, n_in, ip, n_out, outs, err);
    if (st != XF_OK)
        for (int i = 0; i < n_out; i++) xf_tensor_free(&outs[i]);
    return st;
}

/* Shape inference alone, expected to fail with XF_ERR_SHAPE and `needle`. */
static void expect_infer_error(xf_op op, const xf_params *p, int n_in, const xf_dtype *dt,
                               const xf_shape *sh, const char *needle)
{
    xf_dtype odt[2];
    xf_shape osh[2];
    xf_error err;
    xf_error_clear(&err);
    xf_status st = xf_op_infer(op, p, n_in, dt, sh, 1, odt, osh, &err);
    ck_assert_msg(st == XF_ERR_SHAPE, "%s: expected a shape error, got %s", xf_op_get(op)->name,
                  xf_status_name(st));
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
}

static void free_all(xf_tensor *t, int n)
{
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
}

static void expect_shape(const xf_tensor *t, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    char a[96], b[96];
    ck_assert_msg(xf_shape_equal(&t->shape, &s), "shape %s, expected %s",
                  xf_shape_str(&t->shape, a, sizeof a), xf_shape_str(&s, b, sizeof b));
}

/* got (float32) against want (double), |d| <= atol + rtol |want|; NaN must match NaN. */
static void expect_close(const char *what, const xf_tensor *got, const double *want, int64_t n,
                         double rtol, double atol)
{
    ck_assert_int_eq(got->dtype, XF_F32);
    ck_assert_int_eq(xf_shape_numel(&got->shape), n);
    const float *g = got->data;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i])) {
            ck_assert_msg(isnan(g[i]), "%s: element %lld is %g, expected NaN", what,
                          (long long)i, (double)g[i]);
            continue;
        }
        if (isinf(want[i])) {
            ck_assert_msg((double)g[i] == want[i], "%s: element %lld is %g, expected %g", what,
                          (long long)i, (double)g[i], want[i]);
            continue;
        }
        double d = fabs((double)g[i] - want[i]);
        ck_assert_msg(d <= atol + rtol * fabs(want[i]), "%s: element %lld is %.9g, expected %.9g",
                      what, (long long)i, (double)g[i], want[i]);
    }
}

static void expect_f32(const xf_tensor *t, const float *v, int64_t n)
{
    double w[64];
    ck_assert_int_le(n, 64);
    for (int64_t i = 0; i < n; i++) w[i] = v[i];
    expect_close("values", t, w, n, 1e-6, 1e-6);
}



/* Flat index into operand shape `op` of the element that numpy broadcasting
 * pairs with flat output index `flat` of shape `out`. */
static int64_t bcast_index(const xf_shape *out, const xf_shape *op, int64_t flat)
{
    int64_t idx[XF_MAX_DIMS];
    for (int i = out->rank - 1; i >= 0; i--) {
        idx[i] = flat % out->dims[i];
        flat /= out->dims[i];
    }
    int64_t r = 0;
    for (int j = 0; j < op->rank; j++) {
        int i = out->rank - op->rank + j;
        r = r * op->dims[j] + (op->dims[j] == 1 ? 0 : idx[i]);
    }
    return r;
}

static double elem(const xf_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case XF_F32: return ((const float *)t->data)[i];
    case XF_I64: return (double)((const int64_t *)t->data)[i];
    case XF_I32: return ((const int32_t *)t->data)[i];
    default: return ((const uint8_t *)t->data)[i];
    }
}

/* ---------------------------------------------------------------- unary */

typedef struct unary_case {
    xf_op op;
    double (*ref)(double);
    double lo; /* inputs are shifted into a valid domain: x in [lo, lo+2) */
} unary_case;

static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double r_neg(double x) { return -x; }
static double r_recip(double x) { return 1.0 / x; }

START_TEST(unary_vs_reference)
{
    const unary_case cases[] = {
        {XF_OP_RELU, r_relu, -1},    {XF_OP_SIGMOID, r_sigmoid, -1}, {XF_OP_TANH, tanh, -1},
        {XF_OP_ERF, erf, -1},        {XF_OP_GELU, r_gelu, -1},       {XF_OP_SQRT, sqrt, 0},
        {XF_OP_EXP, exp, -1},        {XF_OP_LOG, log, 0.05},         {XF_OP_NEG, r_neg, -1},
        {XF_OP_ABS, fabs, -1},       {XF_OP_RECIPROCAL, r_recip, 0.1},
    };
    int64_t dims[3] = {3, 4, 5};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        xf_tensor x, y;
        mk_rand(&x, XF_F32, 3, dims, 11 + c);
        float *xv = x.data;
        double want[60];
        for (int i = 0; i < 60; i++) {
            xv[i] = (float)(xv[i] + 1.0 + cases[c].lo); /* [-1,1) -> [lo, lo+2) */
            want[i] = cases[c].ref((double)xv[i]);
        }
        xf_params p = xf_params_default();
        xf_error err;
        ck_assert_int_eq(run_op(cases[c].op, &p, 1, &x, 1, &y, &err), XF_OK);
        expect_shape(&y, 3, dims);
        expect_close(xf_op_get(cases[c].op)->name, &y, want, 60, 2e-6, 1e-7);
        xf_tensor_free(&x);
        xf_tensor_free(&y);
    }
}
END_TEST

/* The activations added for models from the wild, with their parameters,
 * against hand values; NaN passes through every one of them. */
START_TEST(parametrised_activations)
{
    int64_t d = 6;
    float x[6] = {-8, -1, 0, 0.5f, 7, NAN};
    xf_tensor in, out;
    mk(&in, XF_F32, 1, &d, x);
    xf_params p = xf_params_default();
    p.alpha = 0.0f;
    p.beta = 6.0f;
    ck_assert_int_eq(run_op(XF_OP_CLIP, &p, 1, &in, 1, &out, NULL), XF_OK);
    double clip[6] = {0, 0, 0, 0.5, 6, NAN};
    expect_close("clip", &out, clip, 6, 0, 0);
    xf_tensor_free(&out);
    p.alpha = 0.2f;
    p.beta = 0.5f;
    ck_assert_int_eq(run_op(XF_OP_HARDSIGMOID, &p, 1, &in, 1, &out, NULL), XF_OK);
    double hs[6] = {0, 0.3, 0.5, 0.6, 1, NAN};
    expect_close("hardsigmoid", &out, hs, 6, 1e-6, 1e-7);
    xf_tensor_free(&out);
    ck_assert_int_eq(run_op(XF_OP_HARDSWISH, NULL, 1, &in, 1, &out, NULL), XF_OK);
    double hw[6] = {0, -1.0 / 3, 0, 0.5 * (0.5 / 6 + 0.5), 7, NAN};
    expect_close("hardswish", &out, hw, 6, 1e-6, 1e-7);
    xf_tensor_free(&out);
    p.alpha = 0.1f;
    ck_assert_int_eq(run_op(XF_OP_LEAKYRELU, &p, 1, &in, 1, &out, NULL), XF_OK);
    double lr[6] = {-0.8, -0.1, 0, 0.5, 7, NAN};
    expect_close("leakyrelu", &out, lr, 6, 1e-6, 1e-7);
    xf_tensor_free(&out);
    /* prelu: a slope per channel of [1,2,3]; min/max propagate NaN */
    int64_t xd[3] = {1, 2, 3}, sd[2] = {2, 1};
    float slope[2] = {0.5f, 2.0f};
    xf_tensor ops[2];
    mk(&ops[0], XF_F32, 3, xd, x);
    mk(&ops[1], XF_F32, 2, sd, slope);
    ck_assert_int_eq(run_op(XF_OP_PRELU, NULL, 2, ops, 1, &out, NULL), XF_OK);
    double pr[6] = {-4, -0.5, 0, 0.5, 7, NAN};
    expect_close("prelu", &out, pr, 6, 0, 0);
    xf_tensor_free(&out);
    ck_assert_int_eq(run_op(XF_OP_MAX, NULL, 2, ops, 1, &out, NULL), XF_OK);
    double mx[6] = {0.5, 0.5, 0.5, 2, 7, NAN};
    expect_close("ewmax", &out, mx, 6, 0, 0);
    xf_tensor_free(&out);
    ck_assert_int_eq(run_op(XF_OP_MIN, NULL, 2, ops, 1, &out, NULL), XF_OK);
    double mn[6] = {-8, -1, 0, 0.5, 2, NAN};
    expect_close("ewmin", &out, mn, 6, 0, 0);
    xf_tensor_free(&out);
    /* a slope that does not broadcast to x is a shape error */
    xf_dtype dt2[2] = {XF_F32, XF_F32};
    xf_shape sh2[2] = {xf_shape_make(1, &d), xf_shape_make(3, xd)};
    expect_infer_error(XF_OP_PRELU, NULL, 2, dt2, sh2, "slope must broadcast to x");
    free_all(ops, 2);
    xf_tensor_free(&in);
}
END_TEST

/* reduce_sum/reduce_max over inner and outer axes, size, not, tile. */
START_TEST(reductions_size_not_tile)
{
    int64_t d[2] = {2, 3};
    float x[6] = {1, -2, 3, 4, 5, -6};
    xf_tensor in, out;
    mk(&in, XF_F32, 2, d, x);
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = -1;
    ck_assert_int_eq(run_op(XF_OP_REDUCE_SUM, &p, 1, &in, 1, &out, NULL), XF_OK);
    int64_t two = 2;
    expect_shape(&out, 1, &two);
    float sum[2] = {2, 3};
    expect_f32(&out, sum, 2);
    xf_tensor_free(&out);
    p.axes[0] = 0;
    p.keepdims = 1;
    ck_assert_int_eq(run_op(XF_OP_REDUCE_MAX, &p, 1, &in, 1, &out, NULL), XF_OK);
    int64_t kd[2] = {1, 3};
    expect_shape(&out, 2, kd);
    float mx[3] = {4, 5, 3};
    expect_f32(&out, mx, 3);
    xf_tensor_free(&out);
    ck_assert_int_eq(run_op(XF_OP_SIZE, NULL, 1, &in, 1, &out, NULL), XF_OK);
    ck_assert_int_eq(out.shape.rank, 0);
    ck_assert_int_eq(*(int64_t *)out.data, 6);
    xf_tensor_free(&out);
    xf_params t = xf_params_default();
    t.n_shape = 2;
    t.shape[0] = 2;
    t.shape[1] = 2;
    ck_assert_int_eq(run_op(XF_OP_TILE, &t, 1, &in, 1, &out, NULL), XF_OK);
    int64_t td[2] = {4, 6};
    expect_shape(&out, 2, td);
    float tiled[24] = {1, -2, 3, 1, -2, 3, 4, 5, -6, 4, 5, -6,
                       1, -2, 3, 1, -2, 3, 4, 5, -6, 4, 5, -6};
    expect_f32(&out, tiled, 24);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
    uint8_t b[3] = {1, 0, 1}, nb[3] = {0, 1, 0};
    int64_t three = 3;
    mk(&in, XF_BOOL, 1, &three, b);
    ck_assert_int_eq(run_op(XF_OP_NOT, NULL, 1, &in, 1, &out, NULL), XF_OK);
    xf_test_expect_bool(&out, nb, 3);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
}
END_TEST

START_TEST(unary_edges)
{
    /* sigmoid saturates without NaN; relu passes NaN; exp overflows to inf. */
    float xs[6] = {-100.0f, 100.0f, NAN, -0.5f, 89.0f, 0.0f};
    int64_t d = 6;
    xf_tensor x, y;
    mk(&x, XF_F32, 1, &d, xs);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_SIGMOID, &p, 1, &x, 1, &y, NULL), XF_OK);
    const float *v = y.data;
    ck_assert(v[0] >= 0.0f && v[0] < 1e-40f);
    ck_assert(v[1] == 1.0f);
    ck_assert(isnan(v[2]));
    xf_tensor_free(&y);
    ck_assert_int_eq(run_op(XF_OP_RELU, &p, 1, &x, 1, &y, NULL), XF_OK);
    const double want_relu[6] = {0, 100, NAN, 0, 89, 0};
    expect_close("relu", &y, want_relu, 6, 0, 0);
    xf_tensor_free(&y);
    ck_assert_int_eq(run_op(XF_OP_EXP, &p, 1, &x, 1, &y, NULL), XF_OK);
    ck_assert(isinf(((float *)y.data)[4]));
    xf_tensor_free(&y);
    xf_tensor_free(&x);

    xf_dtype dt = XF_I64;
    int64_t dd[2] = {2, 3};
    xf_shape sh = xf_shape_make(2, dd);
    expect_infer_error(XF_OP_TANH, &p, 1, &dt, &sh, "input is int64 [2,3], only float32");
}
END_TEST

START_TEST(identity_dropout)
{
    int64_t d[2] = {2, 2};
    const int64_t iv[4] = {5, -6, 7, 1LL << 40};
    xf_tensor x, y[2];
    mk(&x, XF_I64, 2, d, iv);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_IDENTITY, &p, 1, &x, 1, y, NULL), XF_OK);
    xf_test_expect_i64(&y[0], iv, 4);
    xf_tensor_free(&y[0]);
    /* Dropout with ratio and training_mode inputs, and the mask output. */
    xf_tensor ins[3];
    float ratio = 0.5f;
    uint8_t train = 0;
    ins[0] = x;
    mk(&ins[1], XF_F32, 0, NULL, &ratio);
    mk(&ins[2], XF_BOOL, 0, NULL, &train);
    ck_assert_int_eq(run_op(XF_OP_DROPOUT, &p, 3, ins, 2, y, NULL), XF_OK);
    xf_test_expect_i64(&y[0], iv, 4);
    const uint8_t ones[4] = {1, 1, 1, 1};
    xf_test_expect_bool(&y[1], ones, 4);
    expect_shape(&y[1], 2, d);
    free_all(y, 2);
    xf_tensor_free(&ins[1]);
    xf_tensor_free(&ins[2]);
    xf_tensor_free(&x);
}
END_TEST

START_TEST(cast_values)
{
    int64_t d = 7;
    const float fv[7] = {-1.7f, 2.9f, NAN, 1e30f, -1e30f, 0.0f, -0.0f};
    xf_tensor x, y;
    mk(&x, XF_F32, 1, &d, fv);
    xf_params p = xf_params_default();
    p.to = XF_I64;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    const int64_t want_i64[7] = {-1, 2, 0, INT64_MAX, INT64_MIN, 0, 0};
    xf_test_expect_i64(&y, want_i64, 7);
    xf_tensor_free(&y);
    p.to = XF_BOOL;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    const uint8_t want_b[7] = {1, 1, 1, 1, 1, 0, 0};
    xf_test_expect_bool(&y, want_b, 7);
    xf_tensor_free(&y);
    p.to = XF_I32;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    const int32_t *i32 = y.data;
    ck_assert_int_eq(i32[0], -1);
    ck_assert_int_eq(i32[3], INT32_MAX);
    ck_assert_int_eq(i32[4], INT32_MIN);
    xf_tensor_free(&y);
    xf_tensor_free(&x);

    int64_t d3 = 3;
    const int64_t lv[3] = {(1LL << 32) + 5, -3, 1LL << 24};
    mk(&x, XF_I64, 1, &d3, lv);
    p.to = XF_I32;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    i32 = y.data;
    ck_assert_int_eq(i32[0], 5); /* wraps like numpy astype */
    ck_assert_int_eq(i32[1], -3);
    xf_tensor_free(&y);
    p.to = XF_F32;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    const float want_f[3] = {4294967301.0f, -3.0f, 16777216.0f};
    expect_f32(&y, want_f, 3);
    xf_tensor_free(&y);
    xf_tensor_free(&x);

    const uint8_t bv[3] = {1, 0, 1};
    mk(&x, XF_BOOL, 1, &d3, bv);
    p.to = XF_F32;
    ck_assert_int_eq(run_op(XF_OP_CAST, &p, 1, &x, 1, &y, NULL), XF_OK);
    const float want_bf[3] = {1, 0, 1};
    expect_f32(&y, want_bf, 3);
    xf_tensor_free(&y);
    xf_tensor_free(&x);

    xf_dtype dt = XF_F32;
    xf_shape sh = xf_shape_make(1, &d3);
    p.to = 99;
    expect_infer_error(XF_OP_CAST, &p, 1, &dt, &sh, "cast: target dtype 99");
}
END_TEST

/* --------------------------------------------------------------- binary */

typedef struct shape_pair {
    int ra;
    int64_t a[4];
    int rb;
    int64_t b[4];
} shape_pair;

static const shape_pair pairs[] = {
    {3, {2, 3, 4}, 1, {4}},       {3, {2, 1, 4}, 2, {3, 1}},   {1, {1}, 2, {2, 3}},
    {0, {0}, 2, {2, 2}},          {2, {4, 5}, 2, {4, 5}},      {4, {2, 3, 1, 5}, 4, {1, 3, 4, 1}},
    {2, {3, 1}, 0, {0}},          {3, {1, 1, 1}, 1, {6}},      {2, {0, 3}, 1, {3}},
};

static double ref_arith(xf_op op, double x, double y)
{
    switch (op) {
    case XF_OP_ADD: return x + y;
    case XF_OP_SUB: return x - y;
    case XF_OP_MUL: return x * y;
    case XF_OP_DIV: return x / y;
    case XF_OP_POW: return pow(x, y);
    default: return x == y;
    }
}

/* out (dtype as computed) against ref over broadcast operands a, b. */
static void check_binary(xf_op op, const xf_tensor *a, const xf_tensor *b, const xf_tensor *out)
{
    xf_shape bs;
    ck_assert_int_eq(xf_shape_broadcast(&a->shape, &b->shape, &bs, NULL), XF_OK);
    char s1[96], s2[96];
    ck_assert_msg(xf_shape_equal(&bs, &out->shape), "%s: shape %s, expected %s",
                  xf_op_get(op)->name, xf_shape_str(&out->shape, s1, sizeof s1),
                  xf_shape_str(&bs, s2, sizeof s2));
    int64_t n = xf_shape_numel(&bs);
    double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        want[i] = ref_arith(op, elem(a, bcast_index(&bs, &a->shape, i)),
                            elem(b, bcast_index(&bs, &b->shape, i)));
    if (out->dtype == XF_F32) {
        expect_close(xf_op_get(op)->name, out, want, n, 1e-6, 1e-7);
    } else {
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(elem(out, i) == want[i], "%s: element %lld is %g, expected %g",
                          xf_op_get(op)->name, (long long)i, elem(out, i), want[i]);
    }
    free(want);
}

START_TEST(binary_broadcast_vs_reference)
{
    const xf_op ops[5] = {XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW};
    xf_params p = xf_params_default();
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        for (int o = 0; o < 5; o++)
            for (int swap = 0; swap < 2; swap++) {
                const shape_pair *sp = &pairs[k];
                xf_tensor in[2], y;
                mk_rand(&in[swap], XF_F32, sp->ra, sp->a, 100 + k);
                mk_rand(&in[1 - swap], XF_F32, sp->rb, sp->b, 200 + k);
                /* keep divisors and pow bases away from 0 and negatives */
                for (int t = 0; t < 2; t++) {
                    float *v = in[t].data;
                    for (int64_t i = 0; i < xf_shape_numel(&in[t].shape); i++)
                        if (ops[o] == XF_OP_POW || (ops[o] == XF_OP_DIV && t == 1))
                            v[i] = 0.25f + fabsf(v[i]) * (t == 0 ? 3.0f : 1.0f);
                }
                ck_assert_int_eq(run_op(ops[o], &p, 2, in, 1, &y, NULL), XF_OK);
                check_binary(ops[o], &in[0], &in[1], &y);
                xf_tensor_free(&y);
                free_all(in, 2);
            }
}
END_TEST

START_TEST(binary_int64)
{
    const xf_op ops[4] = {XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV};
    xf_params p = xf_params_default();
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++)
        for (int o = 0; o < 4; o++) {
            const shape_pair *sp = &pairs[k];
            xf_tensor in[2], y;
            mk_rand(&in[0], XF_I64, sp->ra, sp->a, 300 + k);
            mk_rand(&in[1], XF_I64, sp->rb, sp->b, 400 + k);
            int64_t *av = in[0].data, *bv = in[1].data;
            for (int64_t i = 0; i < xf_shape_numel(&in[0].shape); i++) av[i] -= 500;
            for (int64_t i = 0; i < xf_shape_numel(&in[1].shape); i++) {
                bv[i] = bv[i] % 19 - 9;
                if (bv[i] == 0) bv[i] = 7;
            }
            ck_assert_int_eq(run_op(ops[o], &p, 2, in, 1, &y, NULL), XF_OK);
            ck_assert_int_eq(y.dtype, XF_I64);
            if (ops[o] != XF_OP_DIV) {
                check_binary(ops[o], &in[0], &in[1], &y);
            } else { /* truncation toward zero */
                int64_t n = xf_shape_numel(&y.shape);
                const int64_t *yv = y.data;
                for (int64_t i = 0; i < n; i++) {
                    int64_t a = av[bcast_index(&y.shape, &in[0].shape, i)];
                    int64_t b = bv[bcast_index(&y.shape, &in[1].shape, i)];
                    double q = (double)a / (double)b;
                    ck_assert_int_eq(yv[i], (int64_t)(q < 0 ? ceil(q) : floor(q)));
                }
            }
            xf_tensor_free(&y);
            free_all(in, 2);
        }

    /* hand cases: truncation, wrap-around, MIN / -1, shape arithmetic */
    int64_t d4 = 4;
    const int64_t a[4] = {-7, 7, INT64_MIN, INT64_MAX};
    const int64_t b[4] = {2, -2, -1, 1};
    xf_tensor in[2], y;
    mk(&in[0], XF_I64, 1, &d4, a);
    mk(&in[1], XF_I64, 1, &d4, b);
    ck_assert_int_eq(run_op(XF_OP_DIV, &p, 2, in, 1, &y, NULL), XF_OK);
    const int64_t q[4] = {-3, -3, INT64_MIN, INT64_MAX};
    xf_test_expect_i64(&y, q, 4);
    xf_tensor_free(&y);
    ck_assert_int_eq(run_op(XF_OP_ADD, &p, 2, in, 1, &y, NULL), XF_OK);
    const int64_t s[4] = {-5, 5, INT64_MAX, INT64_MIN};
    xf_test_expect_i64(&y, s, 4);
    xf_tensor_free(&y);
    /* division by zero is an error, not a trap */
    ((int64_t *)in[1].data)[2] = 0;
    xf_error err;
    ck_assert_int_eq(run_op(XF_OP_DIV, &p, 2, in, 1, &y, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "ewdiv: integer division by zero"));
    ck_assert_ptr_nonnull(strstr(err.msg, "flat index 2"));
    free_all(in, 2);

    /* int32 too */
    const int32_t a32[3] = {-9, 100000, 5}, b32[1] = {4};
    int64_t d3 = 3, d1 = 1;
    mk(&in[0], XF_I32, 1, &d3, a32);
    mk(&in[1], XF_I32, 1, &d1, b32);
    ck_assert_int_eq(run_op(XF_OP_DIV, &p, 2, in, 1, &y, NULL), XF_OK);
    ck_assert_int_eq(((int32_t *)y.data)[0], -2);
    ck_assert_int_eq(((int32_t *)y.data)[1], 25000);
    xf_tensor_free(&y);
    ck_assert_int_eq(run_op(XF_OP_MUL, &p, 2, in, 1, &y, NULL), XF_OK);
    ck_assert_int_eq(((int32_t *)y.data)[1], 400000);
    xf_tensor_free(&y);
    free_all(in, 2);
}
END_TEST

START_TEST(pow_mixed)
{
    xf_params p = xf_params_default();
    int64_t d4 = 4, d1 = 1;
    const float base[4] = {-3.0f, 2.0f, 0.5f, -1.5f};
    const int64_t e3[1] = {3};
    xf_tensor in[2], y;
    mk(&in[0], XF_F32, 1, &d4, base);
    mk(&in[1], XF_I64, 1, &d1, e3);
    ck_assert_int_eq(run_op(XF_OP_POW, &p, 2, in, 1, &y, NULL), XF_OK);
    const float w3[4] = {-27.0f, 8.0f, 0.125f, -3.375f};
    expect_f32(&y, w3, 4);
    xf_tensor_free(&y);
    xf_tensor_free(&in[1]);
    const float two = 2.0f;
    mk(&in[1], XF_F32, 0, NULL, &two);
    ck_assert_int_eq(run_op(XF_OP_POW, &p, 2, in, 1, &y, NULL), XF_OK);
    const float w2[4] = {9.0f, 4.0f, 0.25f, 2.25f};
    expect_f32(&y, w2, 4);
    xf_tensor_free(&y);
    free_all(in, 2);

    const int64_t ib[4] = {2, -3, 10, 0}, ie[4] = {10, 3, 0, 0};
    mk(&in[0], XF_I64, 1, &d4, ib);
    mk(&in[1], XF_I64, 1, &d4, ie);
    ck_assert_int_eq(run_op(XF_OP_POW, &p, 2, in, 1, &y, NULL), XF_OK);
    const int64_t wi[4] = {1024, -27, 1, 1};
    xf_test_expect_i64(&y, wi, 4);
    xf_tensor_free(&y);
    free_all(in, 2);
}
END_TEST

START_TEST(equal_where)
{
    xf_params p = xf_params_default();
    /* float equal with broadcasting; values drawn from a few integers so some match */
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const shape_pair *sp = &pairs[k];
        xf_tensor in[2], y;
        mk_rand(&in[0], XF_I64, sp->ra, sp->a, 500 + k);
        mk_rand(&in[1], XF_I64, sp->rb, sp->b, 600 + k);
        for (int t = 0; t < 2; t++) {
            int64_t *v = in[t].data;
            for (int64_t i = 0; i < xf_shape_numel(&in[t].shape); i++) v[i] %= 3;
        }
        ck_assert_int_eq(run_op(XF_OP_EQUAL, &p, 2, in, 1, &y, NULL), XF_OK);
        ck_assert_int_eq(y.dtype, XF_BOOL);
        check_binary(XF_OP_EQUAL, &in[0], &in[1], &y);
        xf_tensor_free(&y);
        /* the same through float32 */
        xf_tensor f[2];
        xf_params pc = xf_params_default();
        pc.to = XF_F32;
        for (int t = 0; t < 2; t++)
            ck_assert_int_eq(run_op(XF_OP_CAST, &pc, 1, &in[t], 1, &f[t], NULL), XF_OK);
        ck_assert_int_eq(run_op(XF_OP_EQUAL, &p, 2, f, 1, &y, NULL), XF_OK);
        check_binary(XF_OP_EQUAL, &f[0], &f[1], &y);
        xf_tensor_free(&y);
        free_all(f, 2);
        free_all(in, 2);
    }
    /* NaN is not equal to itself; bools compare */
    int64_t d2 = 2;
    const float nn[2] = {NAN, 1.0f};
    xf_tensor in[3], y;
    mk(&in[0], XF_F32, 1, &d2, nn);
    mk(&in[1], XF_F32, 1, &d2, nn);
    ck_assert_int_eq(run_op(XF_OP_EQUAL, &p, 2, in, 1, &y, NULL), XF_OK);
    const uint8_t w01[2] = {0, 1};
    xf_test_expect_bool(&y, w01, 2);
    xf_tensor_free(&y);
    free_all(in, 2);

    /* where: three-way broadcasting for float32, int64 and bool values */
    const xf_dtype vt[3] = {XF_F32, XF_I64, XF_BOOL};
    const int64_t cd[3] = {2, 1, 4}, xd[2] = {3, 1}, yd[1] = {4};
    for (int t = 0; t < 3; t++) {
        mk_rand(&in[0], XF_BOOL, 3, cd, 700 + (uint64_t)t);
        mk_rand(&in[1], vt[t], 2, xd, 800 + (uint64_t)t);
        mk_rand(&in[2], vt[t], 1, yd, 900 + (uint64_t)t);
        ck_assert_int_eq(run_op(XF_OP_WHERE, &p, 3, in, 1, &y, NULL), XF_OK);
        const int64_t od[3] = {2, 3, 4};
        expect_shape(&y, 3, od);
        ck_assert_int_eq(y.dtype, vt[t]);
        for (int64_t i = 0; i < 24; i++) {
            int c = ((uint8_t *)in[0].data)[bcast_index(&y.shape, &in[0].shape, i)];
            double w = c ? elem(&in[1], bcast_index(&y.shape, &in[1].shape, i))
                         : elem(&in[2], bcast_index(&y.shape, &in[2].shape, i));
            ck_assert_msg(elem(&y, i) == w, "where %s: element %lld", xf_dtype_name(vt[t]),
                          (long long)i);
        }
        xf_tensor_free(&y);
        free_all(in, 3);
    }
}
END_TEST

START_TEST(scalar_mul_values)
{
    int64_t d[2] = {2, 3};
    xf_tensor in[2], y;
    mk_rand(&in[0], XF_F32, 2, d, 42);
    const float s = -2.5f;
    mk(&in[1], XF_F32, 0, NULL, &s);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_SCALAR_MUL, &p, 2, in, 1, &y, NULL), XF_OK);
    double want[6];
    for (int i = 0; i < 6; i++) want[i] = -2.5 * ((float *)in[0].data)[i];
    expect_close("scalar_mul", &y, want, 6, 1e-7, 0);
    xf_tensor_free(&y);
    free_all(in, 2);
}
END_TEST

START_TEST(binary_errors)
{
    xf_params p = xf_params_default();
    const int64_t a[2] = {2, 3}, b[1] = {4}, one[1] = {1};
    xf_shape sh[3] = {xf_shape_make(2, a), xf_shape_make(1, b), xf_shape_make(1, one)};
    xf_dtype ff[3] = {XF_F32, XF_F32, XF_F32};
    expect_infer_error(XF_OP_ADD, &p, 2, ff, sh, "shapes [2,3] and [4] do not broadcast");
    expect_infer_error(XF_OP_EQUAL, &p, 2, ff, sh, "equal: shapes [2,3] and [4]");
    xf_dtype fi[2] = {XF_F32, XF_I64};
    xf_shape same[2] = {sh[0], sh[0]};
    expect_infer_error(XF_OP_MUL, &p, 2, fi, same, "inputs are float32 [2,3] and int64 [2,3]");
    expect_infer_error(XF_OP_EQUAL, &p, 2, fi, same, "must have one dtype");
    xf_shape w3[3] = {sh[0], sh[0], sh[0]};
    expect_infer_error(XF_OP_WHERE, &p, 3, ff, w3, "where: condition float32 [2,3] must be bool");
    xf_dtype bff[3] = {XF_BOOL, XF_F32, XF_F32};
    xf_shape wb[3] = {sh[0], sh[0], sh[1]};
    expect_infer_error(XF_OP_WHERE, &p, 3, bff, wb, "where: shapes [2,3] and [4] do not broadcast");
    xf_shape sm[2] = {sh[0], sh[2]};
    expect_infer_error(XF_OP_SCALAR_MUL, &p, 2, ff, sm,
                       "rank-0 float32 scalar, got float32 [2,3] and float32 [1]");
    xf_dtype bb[2] = {XF_BOOL, XF_BOOL};
    expect_infer_error(XF_OP_POW, &p, 2, bb, same, "pow: base bool [2,3]");
}
END_TEST

/* ----------------------------------------------------------------- norm */

START_TEST(batchnorm_vs_reference)
{
    const int64_t shapes[3][4] = {{2, 3, 4, 5}, {4, 3, 0, 0}, {1, 3, 7, 0}};
    const int ranks[3] = {4, 2, 3};
    for (int k = 0; k < 3; k++) {
        xf_tensor in[5], y;
        mk_rand(&in[0], XF_F32, ranks[k], shapes[k], 10 + (uint64_t)k);
        int64_t c = 3;
        for (int i = 1; i < 5; i++) mk_rand(&in[i], XF_F32, 1, &c, 20 + (uint64_t)i);
        float *var = in[4].data;
        for (int i = 0; i < 3; i++) var[i] = fabsf(var[i]) + 0.1f;
        xf_params p = xf_params_default();
        p.epsilon = 1e-3f;
        ck_assert_int_eq(run_op(XF_OP_BATCHNORM, &p, 5, in, 1, &y, NULL), XF_OK);
        int64_t n = xf_shape_numel(&in[0].shape), spatial = n / (shapes[k][0] * 3);
        double *want = malloc(sizeof(double) * (size_t)n);
        const float *x = in[0].data, *sc = in[1].data, *bi = in[2].data, *mu = in[3].data;
        for (int64_t i = 0; i < n; i++) {
            int64_t ch = (i / spatial) % 3;
            want[i] = ((double)x[i] - mu[ch]) / sqrt((double)var[ch] + 1e-3f) * sc[ch] + bi[ch];
        }
        expect_close("batchnorm", &y, want, n, 1e-5, 1e-6);
        free(want);
        xf_tensor_free(&y);
        free_all(in, 5);
    }
    xf_params p = xf_params_default();
    const int64_t xd[4] = {2, 3, 4, 5}, c4 = 4, c3 = 3;
    xf_shape sh[5] = {xf_shape_make(4, xd), xf_shape_make(1, &c4), xf_shape_make(1, &c3),
                      xf_shape_make(1, &c3), xf_shape_make(1, &c3)};
    xf_dtype dt[5] = {XF_F32, XF_F32, XF_F32, XF_F32, XF_F32};
    expect_infer_error(XF_OP_BATCHNORM, &p, 5, dt, sh,
                       "batchnorm: scale is [4] but X [2,3,4,5] needs [3]");
    sh[0] = xf_shape_make(1, &c3);
    sh[1] = sh[2];
    expect_infer_error(XF_OP_BATCHNORM, &p, 5, dt, sh, "must be [N,C,...] (rank >= 2)");
}
END_TEST

/* Naive layernorm over dims [axis, rank) of x with scale/bias broadcast. */
static void ref_layernorm(const xf_tensor *x, int axis, const xf_tensor *s, const xf_tensor *b,
                          float eps, double *out)
{
    xf_shape tail = xf_shape_make(x->shape.rank - axis, x->shape.dims + axis);
    int64_t inner = xf_shape_numel(&tail), outer = xf_shape_numel(&x->shape) / inner;
    const float *xv = x->data;
    for (int64_t o = 0; o < outer; o++) {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < inner; j++) mean += xv[o * inner + j];
        mean /= (double)inner;
        for (int64_t j = 0; j < inner; j++) var += pow(xv[o * inner + j] - mean, 2);
        var /= (double)inner;
        for (int64_t j = 0; j < inner; j++) {
            double v = (xv[o * inner + j] - mean) / sqrt(var + eps);
            v *= elem(s, bcast_index(&tail, &s->shape, j));
            if (b) v += elem(b, bcast_index(&tail, &b->shape, j));
            out[o * inner + j] = v;
        }
    }
}

START_TEST(layernorm_vs_reference)
{
    const int64_t xd[3] = {2, 3, 4};
    struct {
        int axis, rs;
        int64_t s[2];
        int rb;
        int64_t b[2];
    } cases[] = {
        {-1, 1, {4}, 1, {4}},   {1, 2, {3, 4}, 2, {3, 4}}, {-2, 1, {4}, 2, {1, 4}},
        {1, 2, {3, 1}, -1, {0}}, {0, 1, {1}, 1, {4}},       {2, 1, {1}, -1, {0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        xf_tensor in[3], y;
        mk_rand(&in[0], XF_F32, 3, xd, 31 + k);
        mk_rand(&in[1], XF_F32, cases[k].rs, cases[k].s, 41 + k);
        int has_b = cases[k].rb >= 0;
        if (has_b) mk_rand(&in[2], XF_F32, cases[k].rb, cases[k].b, 51 + k);
        xf_params p = xf_params_default();
        p.axis = cases[k].axis;
        p.epsilon = 1e-5f;
        ck_assert_int_eq(run_op(XF_OP_LAYERNORM, &p, has_b ? 3 : 2, in, 1, &y, NULL), XF_OK);
        expect_shape(&y, 3, xd);
        double want[24];
        ref_layernorm(&in[0], cases[k].axis < 0 ? cases[k].axis + 3 : cases[k].axis, &in[1],
                      has_b ? &in[2] : NULL, 1e-5f, want);
        expect_close("layernorm", &y, want, 24, 1e-5, 1e-5);
        xf_tensor_free(&y);
        free_all(in, has_b ? 3 : 2);
    }
    xf_params p = xf_params_default();
    p.axis = 3;
    const int64_t s5 = 5, s4 = 4;
    xf_shape sh[2] = {xf_shape_make(3, xd), xf_shape_make(1, &s4)};
    xf_dtype dt[2] = {XF_F32, XF_F32};
    expect_infer_error(XF_OP_LAYERNORM, &p, 2, dt, sh,
                       "layernorm: axis 3 is out of range for X [2,3,4]");
    p.axis = -1;
    sh[1] = xf_shape_make(1, &s5);
    expect_infer_error(XF_OP_LAYERNORM, &p, 2, dt, sh,
                       "scale [5] does not broadcast to the normalised dims [4] of X [2,3,4]");
}
END_TEST

START_TEST(reduce_mean_vs_reference)
{
    const int64_t xd[4] = {2, 3, 4, 5};
    xf_tensor x;
    mk_rand(&x, XF_F32, 4, xd, 77);
    const float *xv = x.data;
    /* every subset of axes (written with negative axes for odd masks), keepdims 0/1 */
    for (int mask = 0; mask < 16; mask++)
        for (int keep = 0; keep < 2; keep++) {
            xf_params p = xf_params_default();
            p.keepdims = keep;
            for (int a = 0; a < 4; a++)
                if (mask & (1 << a)) p.axes[p.n_axes++] = (mask & 1) ? a - 4 : a;
            xf_tensor y;
            ck_assert_int_eq(run_op(XF_OP_REDUCE_MEAN, &p, 1, &x, 1, &y, NULL), XF_OK);
            int all = mask == 0; /* no axes: reduce everything */
            xf_shape want_sh = xf_shape_make(0, NULL), kept = x.shape;
            for (int a = 0; a < 4; a++) {
                int red = all || (mask & (1 << a));
                if (red) kept.dims[a] = 1;
                if (!red) want_sh.dims[want_sh.rank++] = xd[a];
                else if (keep) want_sh.dims[want_sh.rank++] = 1;
            }
            char s1[96], s2[96];
            ck_assert_msg(xf_shape_equal(&y.shape, &want_sh), "mask %d keep %d: %s vs %s", mask,
                          keep, xf_shape_str(&y.shape, s1, sizeof s1),
                          xf_shape_str(&want_sh, s2, sizeof s2));
            int64_t no = xf_shape_numel(&kept);
            double want[120] = {0};
            for (int64_t i = 0; i < 120; i++) want[bcast_index(&x.shape, &kept, i)] += xv[i];
            for (int64_t i = 0; i < no; i++) want[i] /= (double)(120 / no);
            expect_close("reduce_mean", &y, want, no, 1e-5, 1e-6);
            xf_tensor_free(&y);
        }
    xf_tensor_free(&x);

    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    p.axes[1] = -3;
    xf_dtype dt = XF_F32;
    xf_shape sh = xf_shape_make(4, xd);
    expect_infer_error(XF_OP_REDUCE_MEAN, &p, 1, &dt, &sh, "reduce_mean: axis -3 is listed twice");
    p.axes[1] = 4;
    expect_infer_error(XF_OP_REDUCE_MEAN, &p, 1, &dt, &sh,
                       "reduce_mean: axis 4 is out of range for input [2,3,4,5]");
}
END_TEST

START_TEST(softmax_vs_reference)
{
    const int64_t xd[3] = {2, 3, 4};
    xf_tensor x;
    mk_rand(&x, XF_F32, 3, xd, 88);
    float *xv = x.data;
    xv[0] = 1000.0f; /* stability: exp(1000) would overflow without the max shift */
    xv[1] = 1001.0f;
    const int axes[5] = {-1, 0, 1, 2, -2};
    for (int k = 0; k < 5; k++) {
        int ax = axes[k] < 0 ? axes[k] + 3 : axes[k];
        xf_params p = xf_params_default();
        p.axis = axes[k];
        xf_tensor y;
        ck_assert_int_eq(run_op(XF_OP_SOFTMAX, &p, 1, &x, 1, &y, NULL), XF_OK);
        int64_t st[3] = {12, 4, 1};
        double want[24];
        for (int64_t i = 0; i < 24; i++) {
            int64_t pos = (i / st[ax]) % xd[ax], base = i - pos * st[ax];
            double m = -INFINITY, sum = 0;
            for (int64_t j = 0; j < xd[ax]; j++) m = fmax(m, xv[base + j * st[ax]]);
            for (int64_t j = 0; j < xd[ax]; j++) sum += exp(xv[base + j * st[ax]] - m);
            want[i] = exp(xv[i] - m) / sum;
        }
        expect_close("softmax", &y, want, 24, 1e-5, 1e-7);
        xf_tensor_free(&y);
    }
    xf_tensor_free(&x);
    xf_params p = xf_params_default();
    p.axis = -4;
    xf_dtype dt = XF_F32;
    xf_shape sh = xf_shape_make(3, xd);
    expect_infer_error(XF_OP_SOFTMAX, &p, 1, &dt, &sh,
                       "softmax: axis -4 is out of range for input [2,3,4]");
    dt = XF_I64;
    p.axis = 0;
    expect_infer_error(XF_OP_SOFTMAX, &p, 1, &dt, &sh,
                       "softmax: input is int64 [2,3,4], only float32");
}
END_TEST

/* ------------------------------------------------------------------ pool */

typedef struct pool_cfg {
    int k[2], s[2], d[2], pads[4], ceil, cip;
} pool_cfg;

/* ONNX output extent computed the way the spec states it, in floating point. */
static int64_t ref_extent(int64_t in, int k, int s, int d, int p0, int p1, int ceil_mode)
{
    double span = (k - 1) * d + 1;
    double q = ((double)(in + p0 + p1) - span) / s;
    if (q < 0) return -1;
    int64_t o = (int64_t)(ceil_mode ? ceil(q) : floor(q)) + 1;
    if (ceil_mode && (o - 1) * s >= in + p0) o--; /* last window starts past the input */
    return o;
}

/* Naive pooling: visit every tap of every window. */
static void ref_pool(const xf_tensor *x, const pool_cfg *c, int is_max, int64_t oh, int64_t ow,
                     double *out)
{
    int64_t n = x->shape.dims[0] * x->shape.dims[1], h = x->shape.dims[2], w = x->shape.dims[3];
    const float *xv = x->data;
    for (int64_t pl = 0; pl < n; pl++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                double acc = is_max ? -INFINITY : 0;
                int64_t cnt = 0, cnt_pad = 0;
                for (int ky = 0; ky < c->k[0]; ky++)
                    for (int kx = 0; kx < c->k[1]; kx++) {
                        int64_t iy = oy * c->s[0] - c->pads[0] + ky * c->d[0];
                        int64_t ix = ox * c->s[1] - c->pads[1] + kx * c->d[1];
                        if (iy < h + c->pads[2] && ix < w + c->pads[3]) cnt_pad++;
                        if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                        double v = xv[(pl * h + iy) * w + ix];
                        cnt++;
                        acc = is_max ? fmax(acc, v) : acc + v;
                    }
                double div = (double)(c->cip ? cnt_pad : cnt);
                out[(pl * oh + oy) * ow + ox] = is_max ? acc : acc / div;
            }
}

static xf_params pool_params(const pool_cfg *c)
{
    xf_params p = xf_params_default();
    for (int i = 0; i < 2; i++) {
        p.kernel[i] = c->k[i];
        p.stride[i] = c->s[i];
        p.dilation[i] = c->d[i];
    }
    for (int i = 0; i < 4; i++) p.pads[i] = c->pads[i];
    p.ceil_mode = c->ceil;
    p.count_include_pad = c->cip;
    return p;
}

START_TEST(pool_random_vs_reference)
{
    xf_rng r;
    xf_rng_seed(&r, 2024);
    int ran = 0, rejected = 0, ceil_trimmed = 0;
    for (int it = 0; it < 3000; it++) {
        pool_cfg c;
        memset(&c, 0, sizeof c);
        int is_max = (int)(xf_rng_next(&r) % 2);
        for (int i = 0; i < 2; i++) {
            c.k[i] = 1 + (int)(xf_rng_next(&r) % 4);
            c.s[i] = 1 + (int)(xf_rng_next(&r) % 3);
            c.d[i] = is_max ? 1 + (int)(xf_rng_next(&r) % 2) : 1;
        }
        for (int i = 0; i < 4; i++) c.pads[i] = (int)(xf_rng_next(&r) % (uint64_t)c.k[i % 2]);
        c.ceil = (int)(xf_rng_next(&r) % 2);
        c.cip = is_max ? 0 : (int)(xf_rng_next(&r) % 2);
        int64_t xd[4] = {1 + (int64_t)(xf_rng_next(&r) % 2), 1 + (int64_t)(xf_rng_next(&r) % 3),
                         1 + (int64_t)(xf_rng_next(&r) % 8), 1 + (int64_t)(xf_rng_next(&r) % 8)};
        int64_t oh = ref_extent(xd[2], c.k[0], c.s[0], c.d[0], c.pads[0], c.pads[2], c.ceil);
        int64_t ow = ref_extent(xd[3], c.k[1], c.s[1], c.d[1], c.pads[1], c.pads[3], c.ceil);
        if (c.ceil) {
            int64_t fh = ref_extent(xd[2], c.k[0], c.s[0], c.d[0], c.pads[0], c.pads[2], 0);
            double q = (double)(xd[2] + c.pads[0] + c.pads[2] - (c.k[0] - 1) * c.d[0] - 1) / c.s[0];
            if (fh >= 0 && oh == fh && ceil(q) != floor(q)) ceil_trimmed++;
        }
        xf_tensor x, y;
        mk_rand(&x, XF_F32, 4, xd, (uint64_t)it);
        xf_params p = pool_params(&c);
        xf_op op = is_max ? XF_OP_MAXPOOL : XF_OP_AVGPOOL;
        xf_error err;
        xf_status st = run_op(op, &p, 1, &x, 1, &y, &err);
        if (oh < 0 || ow < 0) {
            ck_assert_int_eq(st, XF_ERR_SHAPE);
            ck_assert_ptr_nonnull(strstr(err.msg, "larger than padded input"));
            rejected++;
            xf_tensor_free(&x);
            continue;
        }
        ck_assert_msg(st == XF_OK, "config %d: %s", it, err.msg);
        int64_t od[4] = {xd[0], xd[1], oh, ow};
        expect_shape(&y, 4, od);
        int64_t n = xf_shape_numel(&y.shape);
        double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
        ref_pool(&x, &c, is_max, oh, ow, want);
        expect_close(is_max ? "maxpool" : "avgpool", &y, want, n, 1e-6, 1e-6);
        free(want);
        xf_tensor_free(&y);
        xf_tensor_free(&x);
        ran++;
    }
    ck_assert_int_gt(ran, 2000);
    ck_assert_int_gt(rejected, 10);
    ck_assert_int_gt(ceil_trimmed, 10); /* the last-window rule was exercised */
}
END_TEST

/* 1x1xHxW input holding 1..H*W. */
static void iota_image(xf_tensor *x, int64_t h, int64_t w)
{
    int64_t d[4] = {1, 1, h, w};
    mk(x, XF_F32, 4, d, NULL);
    for (int64_t i = 0; i < h * w; i++) ((float *)x->data)[i] = (float)(i + 1);
}

static void run_pool_case(xf_op op, const pool_cfg *c, const xf_tensor *x, int64_t oh,
                          int64_t ow, const float *want)
{
    xf_params p = pool_params(c);
    xf_tensor y;
    xf_error err;
    ck_assert_msg(run_op(op, &p, 1, x, 1, &y, &err) == XF_OK, "%s", err.msg);
    int64_t od[4] = {1, 1, oh, ow};
    expect_shape(&y, 4, od);
    expect_f32(&y, want, oh * ow);
    xf_tensor_free(&y);
}

START_TEST(pool_onnx_cases)
{
    xf_tensor x;
    iota_image(&x, 4, 4);
    /* ONNX averagepool_2d_ceil / maxpool_2d_ceil: 4x4, kernel 3, stride 2 */
    pool_cfg c = {{3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, 0};
    const float avg_ceil[4] = {6.0f, 7.5f, 12.0f, 13.5f};
    run_pool_case(XF_OP_AVGPOOL, &c, &x, 2, 2, avg_ceil);
    const float max_ceil[4] = {11, 12, 15, 16};
    run_pool_case(XF_OP_MAXPOOL, &c, &x, 2, 2, max_ceil);
    /* ONNX maxpool_2d_dilations: kernel 2, dilation 2 */
    pool_cfg dil = {{2, 2}, {1, 1}, {2, 2}, {0, 0, 0, 0}, 0, 0};
    run_pool_case(XF_OP_MAXPOOL, &dil, &x, 2, 2, max_ceil);
    xf_tensor_free(&x);

    /* count_include_pad on a 2x2 image padded by 1 */
    iota_image(&x, 2, 2);
    pool_cfg pc = {{2, 2}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 1};
    const float incl[9] = {0.25f, 0.75f, 0.5f, 1.0f, 2.5f, 1.5f, 0.75f, 1.75f, 1.0f};
    run_pool_case(XF_OP_AVGPOOL, &pc, &x, 3, 3, incl);
    pc.cip = 0;
    const float excl[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
    run_pool_case(XF_OP_AVGPOOL, &pc, &x, 3, 3, excl);
    xf_tensor_free(&x);

    /* ceil_mode with pads: a row of 4, kernel 3, stride 2, pads 1: windows
     * start at -1, 1, 3; the last reaches one past the end pad, which
     * count_include_pad does not count. */
    iota_image(&x, 1, 4);
    pool_cfg cp = {{1, 3}, {1, 2}, {1, 1}, {0, 1, 0, 1}, 1, 1};
    const float ceil_incl[3] = {1.0f, 3.0f, 2.0f};
    run_pool_case(XF_OP_AVGPOOL, &cp, &x, 1, 3, ceil_incl);
    cp.cip = 0;
    const float ceil_excl[3] = {1.5f, 3.0f, 4.0f};
    run_pool_case(XF_OP_AVGPOOL, &cp, &x, 1, 3, ceil_excl);
    xf_tensor_free(&x);

    /* The last-window rule: 5 wide, kernel 2, stride 2, pads 1: ceil gives 4
     * windows by the formula, but the 4th would start at 5, wholly in the end
     * padding, so there are 3. */
    iota_image(&x, 1, 5);
    pool_cfg lw = {{1, 2}, {1, 2}, {1, 1}, {0, 1, 0, 1}, 1, 0};
    const float lw_max[3] = {1, 3, 5};
    run_pool_case(XF_OP_MAXPOOL, &lw, &x, 1, 3, lw_max);
    xf_tensor_free(&x);

    /* NaN propagates through maxpool */
    iota_image(&x, 2, 2);
    ((float *)x.data)[1] = NAN;
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 2;
    xf_tensor y;
    ck_assert_int_eq(run_op(XF_OP_MAXPOOL, &p, 1, &x, 1, &y, NULL), XF_OK);
    ck_assert(isnan(((float *)y.data)[0]));
    xf_tensor_free(&y);
    xf_tensor_free(&x);
}
END_TEST

START_TEST(pool_large_vs_reference)
{
    /* resnet18's stem pool and a strided average on a realistic plane size */
    const int64_t xd[4] = {1, 16, 112, 112};
    xf_tensor x, y;
    mk_rand(&x, XF_F32, 4, xd, 5);
    const pool_cfg cfgs[2] = {{{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 0, 0},
                              {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 1}};
    for (int k = 0; k < 2; k++) {
        xf_params p = pool_params(&cfgs[k]);
        xf_op op = k == 0 ? XF_OP_MAXPOOL : XF_OP_AVGPOOL;
        ck_assert_int_eq(run_op(op, &p, 1, &x, 1, &y, NULL), XF_OK);
        int64_t o = k == 0 ? 56 : 57; /* ceil_mode keeps the window starting at 111 */
        int64_t od[4] = {1, 16, o, o};
        expect_shape(&y, 4, od);
        int64_t n = xf_shape_numel(&y.shape);
        double *want = malloc(sizeof(double) * (size_t)n);
        ref_pool(&x, &cfgs[k], k == 0, o, o, want);
        expect_close("pool", &y, want, n, 1e-5, 1e-6);
        free(want);
        xf_tensor_free(&y);
    }
    xf_tensor_free(&x);
}
END_TEST

START_TEST(global_avgpool_vs_reference)
{
    const int64_t shapes[3][5] = {{2, 3, 4, 5, 0}, {2, 3, 7, 0, 0}, {1, 2, 2, 3, 2}};
    const int ranks[3] = {4, 3, 5};
    for (int k = 0; k < 3; k++) {
        xf_tensor x, y;
        mk_rand(&x, XF_F32, ranks[k], shapes[k], 60 + (uint64_t)k);
        xf_params p = xf_params_default();
        ck_assert_int_eq(run_op(XF_OP_GLOBAL_AVGPOOL, &p, 1, &x, 1, &y, NULL), XF_OK);
        int64_t od[5] = {shapes[k][0], shapes[k][1], 1, 1, 1};
        expect_shape(&y, ranks[k], od);
        int64_t planes = shapes[k][0] * shapes[k][1], area = xf_shape_numel(&x.shape) / planes;
        double want[6] = {0};
        for (int64_t i = 0; i < planes * area; i++) want[i / area] += ((float *)x.data)[i];
        for (int64_t i = 0; i < planes; i++) want[i] /= (double)area;
        expect_close("global_avgpool", &y, want, planes, 1e-6, 1e-7);
        xf_tensor_free(&y);
        xf_tensor_free(&x);
    }
    xf_params p = xf_params_default();
    const int64_t d2[2] = {2, 3};
    xf_shape sh = xf_shape_make(2, d2);
    xf_dtype dt = XF_F32;
    expect_infer_error(XF_OP_GLOBAL_AVGPOOL, &p, 1, &dt, &sh,
                       "global_avgpool: input X must be [N,C,D1,...] (rank >= 3), got [2,3]");
}
END_TEST

START_TEST(pool_errors)
{
    const int64_t d4[4] = {1, 1, 2, 2}, d3[3] = {1, 1, 8};
    xf_shape sh = xf_shape_make(4, d4);
    xf_dtype dt = XF_F32;
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    expect_infer_error(XF_OP_MAXPOOL, &p, 1, &dt, &sh,
                       "maxpool: kernel 3x3 larger than padded input 2x2 (X [1,1,2,2], pads "
                       "0,0,0,0)");
    p.kernel[0] = p.kernel[1] = 2;
    p.dilation[0] = p.dilation[1] = 2;
    expect_infer_error(XF_OP_MAXPOOL, &p, 1, &dt, &sh,
                       "maxpool: kernel 2x2 (dilation 2x2 spans 3x3) larger than padded input");
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[3] = 2;
    expect_infer_error(XF_OP_AVGPOOL, &p, 1, &dt, &sh,
                       "avgpool: pads (0,0,0,2) must each be smaller than the kernel 2x2");
    p.pads[3] = -1;
    expect_infer_error(XF_OP_AVGPOOL, &p, 1, &dt, &sh, "must not be negative");
    p.pads[3] = 0;
    p.kernel[1] = 0;
    expect_infer_error(XF_OP_AVGPOOL, &p, 1, &dt, &sh, "avgpool: kernel 2x0 must be at least 1x1");
    p.kernel[1] = 2;
    p.dilation[1] = 2;
    xf_dtype odt;
    xf_shape osh;
    xf_error err;
    ck_assert_int_eq(xf_op_infer(XF_OP_AVGPOOL, &p, 1, &dt, &sh, 1, &odt, &osh, &err),
                     XF_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "avgpool: dilation 1x2 is not supported"));
    p.dilation[1] = 0;
    p.stride[0] = -1;
    expect_infer_error(XF_OP_MAXPOOL, &p, 1, &dt, &sh,
                       "stride -1x1 and dilation 1x1 must be positive");
    p.stride[0] = 1;
    p.count_include_pad = 1;
    expect_infer_error(XF_OP_MAXPOOL, &p, 1, &dt, &sh, "count_include_pad is an avgpool parameter");
    p.count_include_pad = 0;
    p.ceil_mode = 2;
    expect_infer_error(XF_OP_AVGPOOL, &p, 1, &dt, &sh, "ceil_mode is 2, must be 0 or 1");
    p.ceil_mode = 0;
    xf_shape s3 = xf_shape_make(3, d3);
    expect_infer_error(XF_OP_MAXPOOL, &p, 1, &dt, &s3,
                       "maxpool: input X must be 4-D NCHW, got [1,1,8]");
    dt = XF_I64;
    expect_infer_error(XF_OP_AVGPOOL, &p, 1, &dt, &sh, "avgpool: input X is int64 [1,1,2,2]");
}
END_TEST

/* ------------------------------------------------------------ graph run */

START_TEST(graph_through_interpreter)
{
    /* x -> maxpool -> relu -> (+ bias) -> global_avgpool -> softmax(axis 1) */
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    const int64_t xd[4] = {2, 4, 9, 9}, bd[3] = {4, 1, 1};
    xf_shape xs = xf_shape_make(4, xd), bs = xf_shape_make(3, bd);
    float bias[4] = {0.5f, -0.25f, 1.0f, 0.0f};
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
    int b = xf_graph_add_const(&g, "b", XF_F32, &bs, bias, &err);
    ck_assert(x >= 0 && b >= 0);
    pool_cfg c = {{3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 1, 0};
    xf_params pp = pool_params(&c), p0 = xf_params_default(), ps = xf_params_default();
    ps.axis = 1;
    int v = xf_graph_op(&g, XF_OP_MAXPOOL, &pp, &x, 1, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    v = xf_graph_op(&g, XF_OP_RELU, &p0, &v, 1, &err);
    int ab[2] = {v, b};
    v = xf_graph_op(&g, XF_OP_ADD, &p0, ab, 2, &err);
    v = xf_graph_op(&g, XF_OP_GLOBAL_AVGPOOL, &p0, &v, 1, &err);
    v = xf_graph_op(&g, XF_OP_SOFTMAX, &ps, &v, 1, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    ck_assert_int_eq(xf_graph_mark_output(&g, v, &err), XF_OK);
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);

    xf_tensor in, out;
    mk_rand(&in, XF_F32, 4, xd, 99);
    ck_assert_msg(xf_interp_run(&g, &in, 1, &out, &err) == XF_OK, "%s", err.msg);
    const int64_t od[4] = {2, 4, 1, 1};
    expect_shape(&out, 4, od);
    /* naive: pooled 5x5 maps (ceil of (9+2-3)/2 + 1 = 5) */
    double pooled[2 * 4 * 25], want[8];
    ref_pool(&in, &c, 1, 5, 5, pooled);
    for (int n = 0; n < 2; n++) {
        double m[4], sum = 0;
        for (int ch = 0; ch < 4; ch++) {
            double s = 0;
            for (int i = 0; i < 25; i++) s += fmax(pooled[(n * 4 + ch) * 25 + i], 0) + bias[ch];
            m[ch] = s / 25;
            sum += exp(m[ch]);
        }
        for (int ch = 0; ch < 4; ch++) want[n * 4 + ch] = exp(m[ch]) / sum;
    }
    expect_close("graph", &out, want, 8, 1e-5, 1e-7);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
    xf_graph_free(&g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ops_math");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, unary_vs_reference);
    tcase_add_test(tc, unary_edges);
    tcase_add_test(tc, identity_dropout);
    tcase_add_test(tc, cast_values);
    tcase_add_test(tc, binary_broadcast_vs_reference);
    tcase_add_test(tc, binary_int64);
    tcase_add_test(tc, pow_mixed);
    tcase_add_test(tc, equal_where);
    tcase_add_test(tc, scalar_mul_values);
    tcase_add_test(tc, binary_errors);
    tcase_add_test(tc, batchnorm_vs_reference);
    tcase_add_test(tc, layernorm_vs_reference);
    tcase_add_test(tc, reduce_mean_vs_reference);
    tcase_add_test(tc, softmax_vs_reference);
    tcase_add_test(tc, pool_random_vs_reference);
    tcase_add_test(tc, pool_onnx_cases);
    tcase_add_test(tc, pool_large_vs_reference);
    tcase_add_test(tc, global_avgpool_vs_reference);
    tcase_add_test(tc, pool_errors);
    tcase_add_test(tc, graph_through_interpreter);
    tcase_add_test(tc, parametrised_activations);
    tcase_add_test(tc, reductions_size_not_tile);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
