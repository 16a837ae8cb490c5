/*
 * test_ops_movement.c — the data-movement operators of ir/: concat, split,
 * transpose, reshape, flatten, squeeze, unsqueeze, slice, gather, pad,
 * expand and shape. Each op is checked against hand-computed results on int
 * and float tensors (negative axes, slice with negative steps, clamping and
 * INT64 sentinels, gather with negative and rank-0 indices, the three pad
 * modes and cropping), the error cases return the right status with a
 * useful message, and transpose matches a naive per-element reference for
 * random permutations of rank 1..6 (including shapes large enough for the
 * tiled path). One graph runs through the interpreter.
 */
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
    for (int i = 0; i < n_out; i++) ck_assert_int_eq(xf_tensor_alloc(&outs[i], odt[i], &osh[i], err), XF_OK);
    st = xf_op_run(op, p, n_in, ip, n_out, outs, err);
    if (st != XF_OK)
        for (int i = 0; i < n_out; i++) xf_tensor_free(&outs[i]);
    return st;
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



static void expect_f32(const xf_tensor *t, const float *v, int64_t n)
{
    ck_assert_int_eq(t->dtype, XF_F32);
    ck_assert_int_eq(xf_shape_numel(&t->shape), n);
    const float *d = t->data;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(d[i] == v[i], "element %lld is %g, expected %g", (long long)i, (double)d[i],
                      (double)v[i]);
}

/* Expect shape inference (or the kernel) to fail with `code` and a message
 * containing `needle`. */
static void expect_fail(xf_op op, const xf_params *p, int n_in, const xf_tensor *ins, int n_out,
                        xf_status code, const char *needle)
{
    xf_tensor outs[8];
    xf_error err;
    xf_error_clear(&err);
    xf_status st = run_op(op, p, n_in, ins, n_out, outs, &err);
    ck_assert_int_eq(st, code);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
}

static xf_params perm_params(int n, const int64_t *axes)
{
    xf_params p = xf_params_default();
    p.n_axes = n;
    for (int i = 0; i < n; i++) p.axes[i] = axes[i];
    return p;
}

/* ------------------------------------------------------------- concat/split */

START_TEST(concat_values)
{
    int64_t a[] = {1, 2, 3, 4}, b[] = {5, 6}, d22[] = {2, 2}, d21[] = {2, 1}, d12[] = {1, 2};
    xf_tensor in[3], out;
    xf_params p = xf_params_default();
    mk(&in[0], XF_I64, 2, d22, a);
    mk(&in[1], XF_I64, 2, d21, b);
    p.axis = -1; /* [[1,2],[3,4]] ++ [[5],[6]] along the last axis */
    ck_assert_int_eq(run_op(XF_OP_CONCAT, &p, 2, in, 1, &out, NULL), XF_OK);
    int64_t e1[] = {1, 2, 5, 3, 4, 6}, s23[] = {2, 3};
    expect_shape(&out, 2, s23);
    xf_test_expect_i64(&out, e1, 6);
    xf_tensor_free(&out);
    xf_tensor_free(&in[1]);
    mk(&in[1], XF_I64, 2, d12, b);
    mk(&in[2], XF_I64, 2, d12, b);
    p.axis = 0;
    ck_assert_int_eq(run_op(XF_OP_CONCAT, &p, 3, in, 1, &out, NULL), XF_OK);
    int64_t e0[] = {1, 2, 3, 4, 5, 6, 5, 6}, s42[] = {4, 2};
    expect_shape(&out, 2, s42);
    xf_test_expect_i64(&out, e0, 8);
    xf_tensor_free(&out);
    free_all(in, 3);

    /* floats, rank 3, axis -2: [1,2,2] ++ [1,1,2] -> [1,3,2] */
    float fa[] = {0.5f, 1.5f, 2.5f, 3.5f}, fb[] = {-1.f, -2.f};
    int64_t f1[] = {1, 2, 2}, f2[] = {1, 1, 2}, fo[] = {1, 3, 2};
    mk(&in[0], XF_F32, 3, f1, fa);
    mk(&in[1], XF_F32, 3, f2, fb);
    p.axis = -2;
    ck_assert_int_eq(run_op(XF_OP_CONCAT, &p, 2, in, 1, &out, NULL), XF_OK);
    float ef[] = {0.5f, 1.5f, 2.5f, 3.5f, -1.f, -2.f};
    expect_shape(&out, 3, fo);
    expect_f32(&out, ef, 6);
    xf_tensor_free(&out);
    free_all(in, 2);
}
END_TEST

START_TEST(concat_errors)
{
    int64_t d22[] = {2, 2}, d33[] = {3, 3};
    xf_tensor in[2];
    xf_params p = xf_params_default();
    mk(&in[0], XF_F32, 2, d22, NULL);
    mk(&in[1], XF_I64, 2, d22, NULL);
    expect_fail(XF_OP_CONCAT, &p, 2, in, 1, XF_ERR_SHAPE, "int64");
    xf_tensor_free(&in[1]);
    mk(&in[1], XF_F32, 2, d33, NULL);
    p.axis = 1; /* dim 0 differs: 2 vs 3 */
    expect_fail(XF_OP_CONCAT, &p, 2, in, 1, XF_ERR_SHAPE, "[3,3]");
    p.axis = 2;
    expect_fail(XF_OP_CONCAT, &p, 2, in, 1, XF_ERR_SHAPE, "axis 2");
    free_all(in, 2);
}
END_TEST

START_TEST(split_values)
{
    int32_t v[10];
    for (int i = 0; i < 10; i++) v[i] = i;
    int64_t d25[] = {2, 5};
    xf_tensor x, outs[3];
    mk(&x, XF_I32, 2, d25, v);
    xf_params p = xf_params_default();
    p.axis = -1;
    p.n_split = 3;
    p.split[0] = 2;
    p.split[1] = 0;
    p.split[2] = 3;
    ck_assert_int_eq(run_op(XF_OP_SPLIT, &p, 1, &x, 3, outs, NULL), XF_OK);
    int64_t s0[] = {2, 2}, s1[] = {2, 0}, s2[] = {2, 3};
    int32_t e0[] = {0, 1, 5, 6}, e2[] = {2, 3, 4, 7, 8, 9};
    expect_shape(&outs[0], 2, s0);
    expect_shape(&outs[1], 2, s1);
    expect_shape(&outs[2], 2, s2);
    xf_test_expect_i32(&outs[0], e0, 4);
    xf_test_expect_i32(&outs[2], e2, 6);
    free_all(outs, 3);

    /* floats along axis 0: [2,5] -> [1,5] + [1,5] */
    float f[10];
    for (int i = 0; i < 10; i++) f[i] = (float)i * 0.25f;
    xf_tensor xf;
    mk(&xf, XF_F32, 2, d25, f);
    p.axis = 0;
    p.n_split = 2;
    p.split[0] = 1;
    p.split[1] = 1;
    ck_assert_int_eq(run_op(XF_OP_SPLIT, &p, 1, &xf, 2, outs, NULL), XF_OK);
    expect_f32(&outs[0], f, 5);
    expect_f32(&outs[1], f + 5, 5);
    free_all(outs, 2);
    xf_tensor_free(&xf);

    /* errors: sizes not summing, outputs not matching n_split */
    p.axis = 1;
    p.n_split = 2;
    p.split[0] = 2;
    p.split[1] = 2;
    expect_fail(XF_OP_SPLIT, &p, 1, &x, 2, XF_ERR_SHAPE, "add up to 4");
    p.split[1] = 3;
    expect_fail(XF_OP_SPLIT, &p, 1, &x, 3, XF_ERR_SHAPE, "3 outputs");
    xf_tensor_free(&x);
}
END_TEST

/* ---------------------------------------------------------------- transpose */

START_TEST(transpose_values)
{
    int64_t d23[] = {2, 3}, v[] = {1, 2, 3, 4, 5, 6};
    xf_tensor x, out;
    mk(&x, XF_I64, 2, d23, v);
    int64_t perm[] = {-1, 0};
    xf_params p = perm_params(2, perm);
    ck_assert_int_eq(run_op(XF_OP_TRANSPOSE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e[] = {1, 4, 2, 5, 3, 6}, s32[] = {3, 2};
    expect_shape(&out, 2, s32);
    xf_test_expect_i64(&out, e, 6);
    xf_tensor_free(&out);
    xf_tensor_free(&x);

    /* default perm reverses: [2,3,2] -> [2,3,2] with out[k][j][i] = in[i][j][k] */
    float f[12];
    for (int i = 0; i < 12; i++) f[i] = (float)i;
    int64_t d232[] = {2, 3, 2};
    mk(&x, XF_F32, 3, d232, f);
    p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_TRANSPOSE, &p, 1, &x, 1, &out, NULL), XF_OK);
    float ef[] = {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11};
    expect_shape(&out, 3, d232);
    expect_f32(&out, ef, 12);
    xf_tensor_free(&out);

    /* errors: duplicate entry, out of range, wrong length */
    int64_t dup[] = {0, 0, 1}, big[] = {0, 3, 1}, shortp[] = {1, 0};
    p = perm_params(3, dup);
    expect_fail(XF_OP_TRANSPOSE, &p, 1, &x, 1, XF_ERR_SHAPE, "permutation");
    p = perm_params(3, big);
    expect_fail(XF_OP_TRANSPOSE, &p, 1, &x, 1, XF_ERR_SHAPE, "permutation");
    p = perm_params(2, shortp);
    expect_fail(XF_OP_TRANSPOSE, &p, 1, &x, 1, XF_ERR_SHAPE, "rank 3");
    xf_tensor_free(&x);
}
END_TEST

/* Naive reference: per output element, decompose the index and gather. */
static void naive_transpose(const xf_tensor *x, const int *perm, xf_tensor *y)
{
    int r = x->shape.rank;
    int64_t ist[XF_MAX_DIMS], ost[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    xf_shape_strides(&y->shape, ost);
    size_t es = xf_dtype_size(x->dtype);
    int64_t n = xf_shape_numel(&y->shape);
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, src = 0;
        for (int i = 0; i < r; i++) {
            int64_t c = rem / ost[i];
            rem %= ost[i];
            src += c * ist[perm[i]];
        }
        memcpy((char *)y->data + (size_t)o * es, (const char *)x->data + (size_t)src * es, es);
    }
}

static void check_transpose(xf_dtype dt, int rank, const int64_t *dims, const int *perm)
{
    xf_tensor x, out, ref;
    mk(&x, dt, rank, dims, NULL);
    xf_test_fill(&x, (uint64_t)(rank * 977 + perm[0]), 1000);
    int64_t pa[XF_MAX_DIMS];
    for (int i = 0; i < rank; i++) pa[i] = (i % 2) ? perm[i] - rank : perm[i]; /* mix signs */
    xf_params p = perm_params(rank, pa);
    xf_error err;
    ck_assert_msg(run_op(XF_OP_TRANSPOSE, &p, 1, &x, 1, &out, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_tensor_alloc(&ref, dt, &out.shape, NULL), XF_OK);
    naive_transpose(&x, perm, &ref);
    for (int i = 0; i < rank; i++) ck_assert_int_eq(out.shape.dims[i], dims[perm[i]]);
    ck_assert_msg(memcmp(out.data, ref.data, xf_tensor_bytes(&ref)) == 0,
                  "transpose differs from the reference (rank %d, dtype %s)", rank,
                  xf_dtype_name(dt));
    xf_tensor_free(&x);
    xf_tensor_free(&out);
    xf_tensor_free(&ref);
}

START_TEST(transpose_random_vs_naive)
{
    xf_rng r;
    xf_rng_seed(&r, 42);
    const xf_dtype dts[] = {XF_F32, XF_I64, XF_I32, XF_BOOL};
    for (int rank = 1; rank <= XF_MAX_DIMS; rank++)
        for (int trial = 0; trial < 12; trial++) {
            int64_t dims[XF_MAX_DIMS];
            int perm[XF_MAX_DIMS];
            for (int i = 0; i < rank; i++) {
                dims[i] = 1 + (int64_t)(xf_rng_next(&r) % (rank <= 3 ? 9 : 5));
                perm[i] = i;
            }
            for (int i = rank - 1; i > 0; i--) { /* Fisher-Yates */
                int j = (int)(xf_rng_next(&r) % (uint64_t)(i + 1));
                int t = perm[i];
                perm[i] = perm[j];
                perm[j] = t;
            }
            check_transpose(dts[trial % 4], rank, dims, perm);
        }
    /* shapes from attention and ViT blocks, and ones large enough to be tiled */
    int64_t att[] = {1, 128, 4, 64}, vit[] = {1, 197, 192}, big[] = {130, 3, 257};
    int64_t big2[] = {2, 200, 150}, mixed[] = {3, 140, 5, 133};
    int pa[] = {0, 2, 1, 3}, pk[] = {0, 2, 3, 1}, pv[] = {0, 2, 1}, pb[] = {2, 1, 0};
    int pm[] = {3, 0, 1, 2};
    check_transpose(XF_F32, 4, att, pa);
    check_transpose(XF_F32, 4, att, pk);
    check_transpose(XF_F32, 3, vit, pv);
    check_transpose(XF_I64, 3, big, pb);
    check_transpose(XF_BOOL, 3, big2, pv);
    check_transpose(XF_I32, 4, mixed, pm);
}
END_TEST

/* ------------------------------------------------------- reshape and friends */

START_TEST(reshape_flatten)
{
    float f[24];
    for (int i = 0; i < 24; i++) f[i] = (float)i - 3.5f;
    int64_t d234[] = {2, 3, 4};
    xf_tensor x, out;
    mk(&x, XF_F32, 3, d234, f);
    xf_params p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 4;
    p.shape[1] = 6;
    ck_assert_int_eq(run_op(XF_OP_RESHAPE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s46[] = {4, 6};
    expect_shape(&out, 2, s46);
    expect_f32(&out, f, 24);
    xf_tensor_free(&out);
    p.shape[1] = 5;
    expect_fail(XF_OP_RESHAPE, &p, 1, &x, 1, XF_ERR_SHAPE, "[2,3,4] (24 elements) to [4,5]");
    p.shape[1] = -1;
    expect_fail(XF_OP_RESHAPE, &p, 1, &x, 1, XF_ERR_SHAPE, "no 0 or -1");

    const struct {
        int axis;
        int64_t d0, d1;
    } fl[] = {{0, 1, 24}, {1, 2, 12}, {2, 6, 4}, {3, 24, 1}, {-1, 6, 4}, {-3, 1, 24}};
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        p = xf_params_default();
        p.axis = fl[i].axis;
        ck_assert_int_eq(run_op(XF_OP_FLATTEN, &p, 1, &x, 1, &out, NULL), XF_OK);
        int64_t e[] = {fl[i].d0, fl[i].d1};
        expect_shape(&out, 2, e);
        expect_f32(&out, f, 24);
        xf_tensor_free(&out);
    }
    p.axis = 4;
    expect_fail(XF_OP_FLATTEN, &p, 1, &x, 1, XF_ERR_SHAPE, "axis 4");
    p.axis = -4;
    expect_fail(XF_OP_FLATTEN, &p, 1, &x, 1, XF_ERR_SHAPE, "axis -4");
    xf_tensor_free(&x);
}
END_TEST

START_TEST(squeeze_unsqueeze)
{
    int64_t v[6] = {10, 11, 12, 13, 14, 15};
    int64_t d[] = {1, 3, 1, 2};
    xf_tensor x, out;
    mk(&x, XF_I64, 4, d, v);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_SQUEEZE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e32[] = {3, 2};
    expect_shape(&out, 2, e32);
    xf_test_expect_i64(&out, v, 6);
    xf_tensor_free(&out);
    int64_t ax[] = {-2};
    p = perm_params(1, ax);
    ck_assert_int_eq(run_op(XF_OP_SQUEEZE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e132[] = {1, 3, 2};
    expect_shape(&out, 3, e132);
    xf_tensor_free(&out);
    int64_t bad[] = {1};
    p = perm_params(1, bad);
    expect_fail(XF_OP_SQUEEZE, &p, 1, &x, 1, XF_ERR_SHAPE, "is 3");
    int64_t twice[] = {0, -4};
    p = perm_params(2, twice);
    expect_fail(XF_OP_SQUEEZE, &p, 1, &x, 1, XF_ERR_SHAPE, "twice");
    xf_tensor_free(&x);

    int64_t d34[] = {3, 4};
    float f[12];
    for (int i = 0; i < 12; i++) f[i] = (float)i * 2.0f;
    mk(&x, XF_F32, 2, d34, f);
    int64_t ua[] = {-1, 0};
    p = perm_params(2, ua);
    ck_assert_int_eq(run_op(XF_OP_UNSQUEEZE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e1341[] = {1, 3, 4, 1};
    expect_shape(&out, 4, e1341);
    expect_f32(&out, f, 12);
    xf_tensor_free(&out);
    int64_t ub[] = {1};
    p = perm_params(1, ub);
    ck_assert_int_eq(run_op(XF_OP_UNSQUEEZE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e314[] = {3, 1, 4};
    expect_shape(&out, 3, e314);
    xf_tensor_free(&out);
    int64_t dupa[] = {1, -3}; /* output rank 4: -3 is position 1 again */
    p = perm_params(2, dupa);
    expect_fail(XF_OP_UNSQUEEZE, &p, 1, &x, 1, XF_ERR_SHAPE, "twice");
    int64_t far[] = {4};
    p = perm_params(1, far);
    expect_fail(XF_OP_UNSQUEEZE, &p, 1, &x, 1, XF_ERR_SHAPE, "out of range");
    xf_tensor_free(&x);
}
END_TEST

START_TEST(shape_op)
{
    int64_t d[] = {2, 3, 4};
    xf_tensor x, out;
    mk(&x, XF_BOOL, 3, d, NULL);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_SHAPE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e3[] = {3};
    expect_shape(&out, 1, e3);
    xf_test_expect_i64(&out, d, 3);
    xf_tensor_free(&out);
    xf_tensor_free(&x);
    mk(&x, XF_F32, 0, NULL, NULL);
    ck_assert_int_eq(run_op(XF_OP_SHAPE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t e0[] = {0};
    expect_shape(&out, 1, e0);
    xf_tensor_free(&out);
    xf_tensor_free(&x);
}
END_TEST

/* -------------------------------------------------------------------- slice */

static xf_params slice1(int64_t axis, int64_t start, int64_t end, int64_t step)
{
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = axis;
    p.starts[0] = start;
    p.ends[0] = end;
    p.steps[0] = step;
    return p;
}

START_TEST(slice_1d)
{
    int64_t v[10];
    for (int i = 0; i < 10; i++) v[i] = i * 10;
    int64_t d10[] = {10};
    xf_tensor x, out;
    mk(&x, XF_I64, 1, d10, v);
    const struct {
        int64_t start, end, step;
        int n;
        int64_t e[10];
    } cases[] = {
        {2, INT64_MAX, 3, 3, {20, 50, 80}},
        {8, INT64_MIN, -3, 3, {80, 50, 20}},
        {-1, INT64_MIN, -1, 10, {90, 80, 70, 60, 50, 40, 30, 20, 10, 0}},
        {100, 0, -1, 9, {90, 80, 70, 60, 50, 40, 30, 20, 10}},
        {-100, 3, 1, 3, {0, 10, 20}},
        {-3, -1, 1, 2, {70, 80}},
        {-2, -20, -4, 3, {80, 40, 0}},
        {5, 2, 1, 0, {0}},
        {-20, INT64_MIN, -1, 0, {0}},
        {-20, 2, 1, 2, {0, 10}},
        {2, 5, -1, 0, {0}},
        {1, 9, INT64_MAX, 1, {10}},
        {9, 0, INT64_MIN, 1, {90}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        xf_params p = slice1(-1, cases[i].start, cases[i].end, cases[i].step);
        xf_error err;
        ck_assert_msg(run_op(XF_OP_SLICE, &p, 1, &x, 1, &out, &err) == XF_OK, "%s", err.msg);
        int64_t n = cases[i].n;
        expect_shape(&out, 1, &n);
        xf_test_expect_i64(&out, cases[i].e, n);
        xf_tensor_free(&out);
    }
    xf_params p = slice1(0, 0, 5, 0);
    expect_fail(XF_OP_SLICE, &p, 1, &x, 1, XF_ERR_SHAPE, "step");
    p = slice1(1, 0, 5, 1);
    expect_fail(XF_OP_SLICE, &p, 1, &x, 1, XF_ERR_SHAPE, "axis 1");
    xf_tensor_free(&x);
}
END_TEST

START_TEST(slice_2d)
{
    float f[12];
    for (int i = 0; i < 12; i++) f[i] = (float)i + 0.5f;
    int64_t d34[] = {3, 4};
    xf_tensor x, out;
    mk(&x, XF_F32, 2, d34, f);
    /* only the last axis listed: columns 1..3 of every row */
    xf_params p = slice1(-1, -3, INT64_MAX, 1);
    ck_assert_int_eq(run_op(XF_OP_SLICE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s33[] = {3, 3};
    float e1[] = {1.5f, 2.5f, 3.5f, 5.5f, 6.5f, 7.5f, 9.5f, 10.5f, 11.5f};
    expect_shape(&out, 2, s33);
    expect_f32(&out, e1, 9);
    xf_tensor_free(&out);
    /* both axes reversed, listed in the other order: rows 2,1,0 / cols 3,1 */
    p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    p.starts[0] = -1;
    p.ends[0] = INT64_MIN;
    p.steps[0] = -2;
    p.axes[1] = -2;
    p.starts[1] = 7;
    p.ends[1] = -4;
    p.steps[1] = -1;
    ck_assert_int_eq(run_op(XF_OP_SLICE, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s32[] = {3, 2};
    float e2[] = {11.5f, 9.5f, 7.5f, 5.5f, 3.5f, 1.5f};
    expect_shape(&out, 2, s32);
    expect_f32(&out, e2, 6);
    xf_tensor_free(&out);
    p.axes[1] = -1; /* same axis twice */
    expect_fail(XF_OP_SLICE, &p, 1, &x, 1, XF_ERR_SHAPE, "twice");
    xf_tensor_free(&x);
}
END_TEST

/* ------------------------------------------------------------------- gather */

START_TEST(gather_values)
{
    float f[] = {1.f, 2.f, 3.f, 4.f, 5.f, 6.f};
    int64_t d32[] = {3, 2};
    xf_tensor in[2], out;
    mk(&in[0], XF_F32, 2, d32, f);
    int64_t idx[] = {0, -1, 2, 1}, d22[] = {2, 2};
    mk(&in[1], XF_I64, 2, d22, idx);
    xf_params p = xf_params_default();
    ck_assert_int_eq(run_op(XF_OP_GATHER, &p, 2, in, 1, &out, NULL), XF_OK);
    int64_t s222[] = {2, 2, 2};
    float e0[] = {1.f, 2.f, 5.f, 6.f, 5.f, 6.f, 3.f, 4.f};
    expect_shape(&out, 3, s222);
    expect_f32(&out, e0, 8);
    xf_tensor_free(&out);
    xf_tensor_free(&in[1]);

    /* rank-0 int32 index -1 on axis 0: the last row, shape [2] */
    int32_t last = -1;
    mk(&in[1], XF_I32, 0, NULL, &last);
    ck_assert_int_eq(run_op(XF_OP_GATHER, &p, 2, in, 1, &out, NULL), XF_OK);
    int64_t s2[] = {2};
    expect_shape(&out, 1, s2);
    expect_f32(&out, f + 4, 2);
    xf_tensor_free(&out);
    /* axis -1 with a rank-0 index: column 1, shape [3] */
    int32_t one = 1;
    memcpy(in[1].data, &one, sizeof one);
    p.axis = -1;
    ck_assert_int_eq(run_op(XF_OP_GATHER, &p, 2, in, 1, &out, NULL), XF_OK);
    int64_t s3[] = {3};
    float e1[] = {2.f, 4.f, 6.f};
    expect_shape(&out, 1, s3);
    expect_f32(&out, e1, 3);
    xf_tensor_free(&out);
    xf_tensor_free(&in[1]);

    /* int64 data, axis 1, indices [1] = {-2} -> [3,1] */
    int64_t iv[] = {7, 8, 9, 10, 11, 12}, neg2 = -2, d1[] = {1};
    xf_tensor_free(&in[0]);
    mk(&in[0], XF_I64, 2, d32, iv);
    mk(&in[1], XF_I64, 1, d1, &neg2);
    p.axis = 1;
    ck_assert_int_eq(run_op(XF_OP_GATHER, &p, 2, in, 1, &out, NULL), XF_OK);
    int64_t s31[] = {3, 1}, e2[] = {7, 9, 11};
    expect_shape(&out, 2, s31);
    xf_test_expect_i64(&out, e2, 3);
    xf_tensor_free(&out);

    /* out of range: an error naming the index, not a crash */
    int64_t bad = 2;
    memcpy(in[1].data, &bad, sizeof bad);
    expect_fail(XF_OP_GATHER, &p, 2, in, 1, XF_ERR_INVALID, "index 2");
    bad = -3;
    memcpy(in[1].data, &bad, sizeof bad);
    expect_fail(XF_OP_GATHER, &p, 2, in, 1, XF_ERR_INVALID, "index -3");
    xf_tensor_free(&in[1]);
    float fi = 0.f;
    mk(&in[1], XF_F32, 0, NULL, &fi);
    expect_fail(XF_OP_GATHER, &p, 2, in, 1, XF_ERR_SHAPE, "int64 or int32");
    free_all(in, 2);
}
END_TEST

/* ---------------------------------------------------------------------- pad */

static xf_params pad_params(int mode, int rank, const int64_t *b, const int64_t *e, double value)
{
    xf_params p = xf_params_default();
    p.pad_mode = mode;
    p.value = value;
    for (int i = 0; i < rank; i++) {
        p.starts[i] = b[i];
        p.ends[i] = e[i];
    }
    return p;
}

START_TEST(pad_modes)
{
    int32_t v[] = {1, 2, 3, 4, 5, 6};
    int64_t d23[] = {2, 3};
    xf_tensor x, out;
    mk(&x, XF_I32, 2, d23, v);
    int64_t b[] = {1, 0}, e[] = {0, 2};
    xf_params p = pad_params(XF_PAD_CONSTANT, 2, b, e, 9.0);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s35[] = {3, 5};
    int32_t ec[] = {9, 9, 9, 9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9};
    expect_shape(&out, 2, s35);
    xf_test_expect_i32(&out, ec, 15);
    xf_tensor_free(&out);

    /* edge: begin {1,2}, end {1,1} -> [4,6] */
    int64_t be[] = {1, 2}, ee[] = {1, 1};
    p = pad_params(XF_PAD_EDGE, 2, be, ee, 0.0);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s46[] = {4, 6};
    int32_t eg[] = {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6};
    expect_shape(&out, 2, s46);
    xf_test_expect_i32(&out, eg, 24);
    xf_tensor_free(&out);

    /* reflect: begin {1,2}, end {0,2} -> [3,7] */
    int64_t er[] = {0, 2};
    p = pad_params(XF_PAD_REFLECT, 2, be, er, 0.0);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s37[] = {3, 7};
    int32_t erf[] = {6, 5, 4, 5, 6, 5, 4, 3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4};
    expect_shape(&out, 2, s37);
    xf_test_expect_i32(&out, erf, 21);
    xf_tensor_free(&out);

    /* negative pads crop: drop column 0, add one column of 7 on the right */
    int64_t bc[] = {0, -1}, ec2[] = {-1, 1};
    p = pad_params(XF_PAD_CONSTANT, 2, bc, ec2, 7.0);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s13[] = {1, 3};
    int32_t ecr[] = {2, 3, 7};
    expect_shape(&out, 2, s13);
    xf_test_expect_i32(&out, ecr, 3);
    xf_tensor_free(&out);

    int64_t bb[] = {0, -2}, eb[] = {0, -2};
    p = pad_params(XF_PAD_CONSTANT, 2, bb, eb, 0.0);
    expect_fail(XF_OP_PAD, &p, 1, &x, 1, XF_ERR_SHAPE, "crop");
    xf_tensor_free(&x);

    /* float constant value and a reflect wider than the input on [3] */
    float f[] = {1.f, 2.f, 3.f};
    int64_t d3[] = {3};
    mk(&x, XF_F32, 1, d3, f);
    int64_t b1[] = {2}, e1[] = {1};
    p = pad_params(XF_PAD_CONSTANT, 1, b1, e1, -1.5);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    float efc[] = {-1.5f, -1.5f, 1.f, 2.f, 3.f, -1.5f};
    expect_f32(&out, efc, 6);
    xf_tensor_free(&out);
    int64_t b5[] = {5}, e5[] = {4};
    p = pad_params(XF_PAD_REFLECT, 1, b5, e5, 0.0);
    ck_assert_int_eq(run_op(XF_OP_PAD, &p, 1, &x, 1, &out, NULL), XF_OK);
    float efr[] = {2.f, 1.f, 2.f, 3.f, 2.f, 1.f, 2.f, 3.f, 2.f, 1.f, 2.f, 3.f};
    expect_f32(&out, efr, 12);
    xf_tensor_free(&out);
    xf_tensor_free(&x);
}
END_TEST

/* ------------------------------------------------------------------- expand */

START_TEST(expand_values)
{
    int64_t v[] = {1, 2, 3}, d31[] = {3, 1};
    xf_tensor x, out;
    mk(&x, XF_I64, 2, d31, v);
    xf_params p = xf_params_default();
    p.n_shape = 3;
    p.shape[0] = 2;
    p.shape[1] = 1; /* 1 keeps the input's 3 */
    p.shape[2] = 4;
    ck_assert_int_eq(run_op(XF_OP_EXPAND, &p, 1, &x, 1, &out, NULL), XF_OK);
    int64_t s234[] = {2, 3, 4};
    int64_t e[24];
    for (int i = 0; i < 24; i++) e[i] = 1 + (i / 4) % 3;
    expect_shape(&out, 3, s234);
    xf_test_expect_i64(&out, e, 24);
    xf_tensor_free(&out);
    xf_tensor_free(&x);

    /* broadcast in the middle: [2,1,2] -> [2,3,2] */
    int64_t vm[] = {1, 2, 3, 4}, d212[] = {2, 1, 2}, s232[] = {2, 3, 2};
    int64_t em[] = {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4};
    mk(&x, XF_I64, 3, d212, vm);
    p.shape[0] = 2;
    p.shape[1] = 3;
    p.shape[2] = 1;
    ck_assert_int_eq(run_op(XF_OP_EXPAND, &p, 1, &x, 1, &out, NULL), XF_OK);
    expect_shape(&out, 3, s232);
    xf_test_expect_i64(&out, em, 12);
    xf_tensor_free(&out);
    xf_tensor_free(&x);

    /* target of lower rank: [2,3] expanded by [3] stays [2,3] */
    float f[] = {1, 2, 3, 4, 5, 6};
    int64_t d23[] = {2, 3};
    mk(&x, XF_F32, 2, d23, f);
    p = xf_params_default();
    p.n_shape = 1;
    p.shape[0] = 3;
    ck_assert_int_eq(run_op(XF_OP_EXPAND, &p, 1, &x, 1, &out, NULL), XF_OK);
    expect_shape(&out, 2, d23);
    expect_f32(&out, f, 6);
    xf_tensor_free(&out);
    p.shape[0] = 4;
    expect_fail(XF_OP_EXPAND, &p, 1, &x, 1, XF_ERR_SHAPE, "expand");
    xf_tensor_free(&x);

    /* rank 0 to [2,2] */
    float s = 2.5f;
    mk(&x, XF_F32, 0, NULL, &s);
    p.n_shape = 2;
    p.shape[0] = 2;
    p.shape[1] = 2;
    ck_assert_int_eq(run_op(XF_OP_EXPAND, &p, 1, &x, 1, &out, NULL), XF_OK);
    float e4[] = {2.5f, 2.5f, 2.5f, 2.5f};
    expect_f32(&out, e4, 4);
    xf_tensor_free(&out);
    xf_tensor_free(&x);
}
END_TEST

/* ------------------------------------------------------------ interpreter */

/* x[2,3,4] -> transpose(2,0,1) -> slice last axis step -1 -> reshape [4,6]:
 * checked against indices computed by hand. */
START_TEST(graph_chain)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    int64_t d[] = {2, 3, 4};
    xf_shape s = xf_shape_make(3, d);
    int x = xf_graph_add_input(&g, "x", XF_F32, &s, &err);
    int64_t perm[] = {2, 0, 1};
    xf_params pt = perm_params(3, perm);
    int t = xf_graph_op(&g, XF_OP_TRANSPOSE, &pt, &x, 1, &err); /* [4,2,3] */
    ck_assert_int_ge(t, 0);
    xf_params ps = slice1(-1, -1, INT64_MIN, -1);
    int sl = xf_graph_op(&g, XF_OP_SLICE, &ps, &t, 1, &err);
    ck_assert_int_ge(sl, 0);
    xf_params pr = xf_params_default();
    pr.n_shape = 2;
    pr.shape[0] = 4;
    pr.shape[1] = 6;
    int r = xf_graph_op(&g, XF_OP_RESHAPE, &pr, &sl, 1, &err);
    ck_assert_int_ge(r, 0);
    ck_assert_int_eq(xf_graph_mark_output(&g, r, &err), XF_OK);
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
    xf_tensor in, out;
    mk(&in, XF_F32, 3, d, NULL);
    for (int i = 0; i < 24; i++) ((float *)in.data)[i] = (float)i;
    ck_assert_msg(xf_interp_run(&g, &in, 1, &out, &err) == XF_OK, "%s", err.msg);
    /* out[k][a*3 + b] = x[a][2-b][k] = a*12 + (2-b)*4 + k */
    float e[24];
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 3; b++) e[k * 6 + a * 3 + b] = (float)(a * 12 + (2 - b) * 4 + k);
    int64_t s46[] = {4, 6};
    expect_shape(&out, 2, s46);
    expect_f32(&out, e, 24);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
    xf_graph_free(&g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ops_movement");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, concat_values);
    tcase_add_test(tc, concat_errors);
    tcase_add_test(tc, split_values);
    tcase_add_test(tc, transpose_values);
    tcase_add_test(tc, transpose_random_vs_naive);
    tcase_add_test(tc, reshape_flatten);
    tcase_add_test(tc, squeeze_unsqueeze);
    tcase_add_test(tc, shape_op);
    tcase_add_test(tc, slice_1d);
    tcase_add_test(tc, slice_2d);
    tcase_add_test(tc, gather_values);
    tcase_add_test(tc, pad_modes);
    tcase_add_test(tc, expand_values);
    tcase_add_test(tc, graph_chain);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
