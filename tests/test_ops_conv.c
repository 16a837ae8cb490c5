/*
 * test_ops_conv.c — matmul, gemm, conv, enlarge, the constant generators and
 * the private sgemm, each checked against hand-computed values or a naive
 * implementation written here (triple loop, 7-loop direct convolution), plus
 * the shape-inference errors and what their messages name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/sgemm_internal.h"
#include "testutil.h"

/* ------------------------------------------------------------------ helpers */

static xf_shape shp(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    int64_t d[4] = {d0, d1, d2, d3};
    return xf_shape_make(rank, d);
}

static xf_tensor make(xf_dtype dt, xf_shape s, uint64_t seed)
{
    xf_tensor t;
    ck_assert_int_eq(xf_tensor_alloc(&t, dt, &s, NULL), XF_OK);
    xf_test_fill(&t, seed, 5);
    return t;
}

static xf_tensor make_vals(xf_shape s, const float *vals)
{
    xf_tensor t = make(XF_F32, s, 0);
    memcpy(t.data, vals, sizeof(float) * (size_t)xf_shape_numel(&s));
    return t;
}

/* Infers and runs one single-output op; *out is allocated here. n entries of
 * in may be NULL (omitted optional input). */
static xf_status run_op(xf_op op, const xf_params *p, int n, const xf_tensor *const *in,
                        xf_tensor *out, xf_error *err)
{
    xf_dtype dt[4] = {XF_DTYPE_INVALID, XF_DTYPE_INVALID, XF_DTYPE_INVALID, XF_DTYPE_INVALID};
    xf_shape sh[4] = {{0}};
    for (int i = 0; i < n; i++) {
        dt[i] = in[i] ? in[i]->dtype : XF_DTYPE_INVALID;
        sh[i] = in[i] ? in[i]->shape : shp(0, 0, 0, 0, 0);
    }
    xf_dtype odt;
    xf_shape osh;
    xf_status st = xf_op_infer(op, p, n, dt, sh, 1, &odt, &osh, err);
    if (st != XF_OK) return st;
    ck_assert_int_eq(xf_tensor_alloc(out, odt, &osh, err), XF_OK);
    st = xf_op_run(op, p, n, in, 1, out, err);
    ck_assert_int_eq(st, XF_OK);
    return st;
}

/* Expects shape inference to fail with a message containing each needle. */
static void expect_infer_error(xf_op op, const xf_params *p, int n, const xf_dtype *dt,
                               const xf_shape *sh, const char *needle1, const char *needle2)
{
    xf_error err;
    xf_dtype odt;
    xf_shape osh;
    xf_error_clear(&err);
    xf_status st = xf_op_infer(op, p, n, dt, sh, 1, &odt, &osh, &err);
    ck_assert_int_eq(st, XF_ERR_SHAPE);
    ck_assert_msg(strstr(err.msg, needle1) != NULL, "'%s' not in '%s'", needle1, err.msg);
    if (needle2) ck_assert_msg(strstr(err.msg, needle2) != NULL, "'%s' not in '%s'", needle2, err.msg);
}

static void assert_close(const xf_tensor *got, const xf_tensor *want, double tol)
{
    double max_abs = 0, max_rel = 0;
    ck_assert_int_eq(xf_tensor_compare(got, want, &max_abs, &max_rel, NULL), XF_OK);
    ck_assert_msg(xf_tensor_close(got, want, tol, tol), "max abs diff %g, rel %g", max_abs, max_rel);
}

static void assert_values(const xf_tensor *t, const float *want, int64_t n)
{
    ck_assert_int_eq(xf_shape_numel(&t->shape), n);
    const float *d = t->data;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(d[i] == want[i], "element %lld: got %g want %g", (long long)i, (double)d[i],
                      (double)want[i]);
}

/* ------------------------------------------------------------------- matmul */

START_TEST(matmul_2d_and_vectors)
{
    const float a[6] = {1, 2, 3, 4, 5, 6};     /* [2,3] */
    const float b[6] = {7, 8, 9, 10, 11, 12};  /* [3,2] */
    const float v3[3] = {1, -1, 2};
    xf_tensor A = make_vals(shp(2, 2, 3, 0, 0), a), B = make_vals(shp(2, 3, 2, 0, 0), b);
    xf_tensor V = make_vals(shp(1, 3, 0, 0, 0), v3), Y;
    xf_params p = xf_params_default();

    const xf_tensor *in1[2] = {&A, &B};
    run_op(XF_OP_MATMUL, &p, 2, in1, &Y, NULL);
    ck_assert_int_eq(Y.shape.rank, 2);
    ck_assert_int_eq(Y.shape.dims[0], 2);
    ck_assert_int_eq(Y.shape.dims[1], 2);
    const float ab[4] = {58, 64, 139, 154};
    assert_values(&Y, ab, 4);
    xf_tensor_free(&Y);

    const xf_tensor *in2[2] = {&V, &B}; /* [3] x [3,2] -> [2] */
    run_op(XF_OP_MATMUL, &p, 2, in2, &Y, NULL);
    ck_assert_int_eq(Y.shape.rank, 1);
    ck_assert_int_eq(Y.shape.dims[0], 2);
    const float vb[2] = {7 - 9 + 22, 8 - 10 + 24};
    assert_values(&Y, vb, 2);
    xf_tensor_free(&Y);

    const xf_tensor *in3[2] = {&A, &V}; /* [2,3] x [3] -> [2] */
    run_op(XF_OP_MATMUL, &p, 2, in3, &Y, NULL);
    ck_assert_int_eq(Y.shape.rank, 1);
    ck_assert_int_eq(Y.shape.dims[0], 2);
    const float av[2] = {1 - 2 + 6, 4 - 5 + 12};
    assert_values(&Y, av, 2);
    xf_tensor_free(&Y);

    const xf_tensor *in4[2] = {&V, &V}; /* [3] x [3] -> scalar */
    run_op(XF_OP_MATMUL, &p, 2, in4, &Y, NULL);
    ck_assert_int_eq(Y.shape.rank, 0);
    const float vv[1] = {6};
    assert_values(&Y, vv, 1);
    xf_tensor_free(&Y);

    xf_tensor_free(&A);
    xf_tensor_free(&B);
    xf_tensor_free(&V);
}
END_TEST

/* Naive batched matmul of rank-3/4 operands with numpy broadcasting. */
static void naive_matmul(const xf_tensor *a, const xf_tensor *b, xf_tensor *y)
{
    int ra = a->shape.rank, rb = b->shape.rank, ry = y->shape.rank;
    int64_t M = a->shape.dims[ra - 2], K = a->shape.dims[ra - 1], N = b->shape.dims[rb - 1];
    int64_t nb = xf_shape_numel(&y->shape) / (M * N);
    const float *A = a->data, *B = b->data;
    float *Y = y->data;
    for (int64_t t = 0; t < nb; t++) {
        /* decompose t over y's batch dims, map onto a and b */
        int64_t rem = t, oa = 0, ob = 0, sa = M * K, sb = K * N;
        for (int i = ry - 3; i >= 0; i--) {
            int64_t idx = rem % y->shape.dims[i];
            rem /= y->shape.dims[i];
            int ka = i - (ry - ra), kb = i - (ry - rb);
            if (ka >= 0) {
                if (a->shape.dims[ka] != 1) oa += idx * sa;
                sa *= a->shape.dims[ka];
            }
            if (kb >= 0) {
                if (b->shape.dims[kb] != 1) ob += idx * sb;
                sb *= b->shape.dims[kb];
            }
        }
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)A[oa + i * K + k] * B[ob + k * N + j];
                Y[t * M * N + i * N + j] = (float)s;
            }
    }
}

static void check_batched(xf_shape sa, xf_shape sb, xf_shape want)
{
    xf_tensor A = make(XF_F32, sa, 11), B = make(XF_F32, sb, 12), Y, R;
    xf_params p = xf_params_default();
    const xf_tensor *in[2] = {&A, &B};
    run_op(XF_OP_MATMUL, &p, 2, in, &Y, NULL);
    ck_assert(xf_shape_equal(&Y.shape, &want));
    ck_assert_int_eq(xf_tensor_alloc(&R, XF_F32, &want, NULL), XF_OK);
    naive_matmul(&A, &B, &R);
    assert_close(&Y, &R, 1e-5);
    xf_tensor_free(&A);
    xf_tensor_free(&B);
    xf_tensor_free(&Y);
    xf_tensor_free(&R);
}

START_TEST(matmul_batched_broadcast)
{
    check_batched(shp(4, 2, 1, 3, 4), shp(3, 5, 4, 2, 0), shp(4, 2, 5, 3, 2));
    check_batched(shp(3, 5, 4, 2, 0), shp(4, 2, 1, 2, 3), shp(4, 2, 5, 4, 3));
    check_batched(shp(4, 2, 3, 17, 33), shp(2, 33, 19, 0, 0), shp(4, 2, 3, 17, 19));
    check_batched(shp(3, 3, 7, 9, 0), shp(4, 1, 1, 9, 5), shp(4, 1, 3, 7, 5));
    check_batched(shp(3, 1, 7, 9, 0), shp(3, 4, 9, 5, 0), shp(3, 4, 7, 5, 0));
}
END_TEST

START_TEST(matmul_errors)
{
    xf_params p = xf_params_default();
    xf_dtype f2[2] = {XF_F32, XF_F32};
    xf_shape s1[2] = {shp(2, 2, 3, 0, 0), shp(2, 4, 5, 0, 0)};
    expect_infer_error(XF_OP_MATMUL, &p, 2, f2, s1, "inner dimensions differ", "[2,3] x [4,5]");
    xf_shape s2[2] = {shp(3, 2, 3, 4, 0), shp(3, 3, 4, 5, 0)};
    expect_infer_error(XF_OP_MATMUL, &p, 2, f2, s2, "batch", "[2,3,4]");
    xf_shape s3[2] = {shp(0, 0, 0, 0, 0), shp(2, 4, 5, 0, 0)};
    expect_infer_error(XF_OP_MATMUL, &p, 2, f2, s3, "rank", NULL);
    xf_dtype fi[2] = {XF_F32, XF_I64};
    xf_shape s4[2] = {shp(2, 2, 3, 0, 0), shp(2, 3, 5, 0, 0)};
    expect_infer_error(XF_OP_MATMUL, &p, 2, fi, s4, "float32", "int64");
}
END_TEST

/* --------------------------------------------------------------------- gemm */

START_TEST(gemm_all_variants)
{
    const int64_t M = 5, N = 7, K = 6;
    const xf_shape cshapes[] = {shp(2, M, N, 0, 0), shp(1, N, 0, 0, 0), shp(2, M, 1, 0, 0),
                                shp(2, 1, N, 0, 0), shp(0, 0, 0, 0, 0), shp(1, 1, 0, 0, 0),
                                shp(2, 1, 1, 0, 0)};
    const int nc = (int)(sizeof cshapes / sizeof cshapes[0]);
    const float coef[][2] = {{1.0f, 1.0f}, {0.5f, -2.0f}, {-1.5f, 0.0f}, {0.0f, 3.0f}};
    int cases = 0;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int ci = -1; ci < nc; ci++)
                for (int ab = 0; ab < 4; ab++) {
                    xf_params p = xf_params_default();
                    p.trans_a = ta;
                    p.trans_b = tb;
                    p.alpha = coef[ab][0];
                    p.beta = coef[ab][1];
                    xf_tensor A = make(XF_F32, ta ? shp(2, K, M, 0, 0) : shp(2, M, K, 0, 0), 21);
                    xf_tensor B = make(XF_F32, tb ? shp(2, N, K, 0, 0) : shp(2, K, N, 0, 0), 22);
                    xf_tensor C = {0}, Y;
                    if (ci >= 0) C = make(XF_F32, cshapes[ci], 23);
                    const xf_tensor *in[3] = {&A, &B, ci >= 0 ? &C : NULL};
                    run_op(XF_OP_GEMM, &p, ci >= 0 ? 3 : 2, in, &Y, NULL);
                    ck_assert_int_eq(Y.shape.rank, 2);
                    ck_assert_int_eq(Y.shape.dims[0], M);
                    ck_assert_int_eq(Y.shape.dims[1], N);
                    const float *a = A.data, *b = B.data, *c = C.data, *y = Y.data;
                    for (int64_t i = 0; i < M; i++)
                        for (int64_t j = 0; j < N; j++) {
                            double s = 0;
                            for (int64_t k = 0; k < K; k++)
                                s += (double)(ta ? a[k * M + i] : a[i * K + k]) *
                                     (tb ? b[j * K + k] : b[k * N + j]);
                            double want = p.alpha * s;
                            if (ci >= 0) {
                                const xf_shape *cs = &C.shape;
                                int64_t d0 = cs->rank == 2 ? cs->dims[0] : 1;
                                int64_t d1 = cs->rank >= 1 ? cs->dims[cs->rank - 1] : 1;
                                want += p.beta * c[(d0 == 1 ? 0 : i) * d1 + (d1 == 1 ? 0 : j)];
                            }
                            ck_assert_msg(fabs(y[i * N + j] - want) <= 1e-5 * (1 + fabs(want)),
                                          "ta=%d tb=%d c=%d ab=%d (%lld,%lld): %g vs %g", ta, tb,
                                          ci, ab, (long long)i, (long long)j, (double)y[i * N + j],
                                          want);
                        }
                    xf_tensor_free(&A);
                    xf_tensor_free(&B);
                    xf_tensor_free(&C);
                    xf_tensor_free(&Y);
                    cases++;
                }
    ck_assert_int_eq(cases, 2 * 2 * 8 * 4);
}
END_TEST

START_TEST(gemm_hand_computed)
{
    /* alpha=2, beta=10, A^T given, C = [1,2] per row. */
    const float at[6] = {1, 4, 2, 5, 3, 6}; /* A = [[1,2,3],[4,5,6]] stored transposed [3,2] */
    const float b[6] = {1, 0, 0, 1, 1, 1};  /* [3,2] */
    const float c[2] = {1, 2};
    xf_tensor A = make_vals(shp(2, 3, 2, 0, 0), at), B = make_vals(shp(2, 3, 2, 0, 0), b);
    xf_tensor C = make_vals(shp(1, 2, 0, 0, 0), c), Y;
    xf_params p = xf_params_default();
    p.trans_a = 1;
    p.alpha = 2.0f;
    p.beta = 10.0f;
    const xf_tensor *in[3] = {&A, &B, &C};
    run_op(XF_OP_GEMM, &p, 3, in, &Y, NULL);
    /* A*B = [[4,5],[10,11]] */
    const float want[4] = {8 + 10, 10 + 20, 20 + 10, 22 + 20};
    assert_values(&Y, want, 4);
    xf_tensor_free(&Y);
    /* params literally zero: alpha 0, beta 0 gives zeros */
    p.alpha = 0.0f;
    p.beta = 0.0f;
    run_op(XF_OP_GEMM, &p, 3, in, &Y, NULL);
    const float zero[4] = {0, 0, 0, 0};
    assert_values(&Y, zero, 4);
    xf_tensor_free(&Y);
    xf_tensor_free(&A);
    xf_tensor_free(&B);
    xf_tensor_free(&C);
}
END_TEST

START_TEST(gemm_errors)
{
    xf_params p = xf_params_default();
    xf_dtype f3[3] = {XF_F32, XF_F32, XF_F32};
    xf_shape s1[3] = {shp(2, 2, 3, 0, 0), shp(2, 4, 5, 0, 0), shp(0, 0, 0, 0, 0)};
    expect_infer_error(XF_OP_GEMM, &p, 2, f3, s1, "inner dimensions differ", "[4,5]");
    p.trans_b = 1;
    xf_shape s2[3] = {shp(2, 2, 3, 0, 0), shp(2, 5, 3, 0, 0), shp(2, 3, 5, 0, 0)};
    expect_infer_error(XF_OP_GEMM, &p, 3, f3, s2, "does not broadcast", "[2,5]");
    xf_shape s3[3] = {shp(3, 1, 2, 3, 0), shp(2, 5, 3, 0, 0), shp(0, 0, 0, 0, 0)};
    expect_infer_error(XF_OP_GEMM, &p, 2, f3, s3, "2-D", NULL);
    xf_shape s4[3] = {shp(2, 2, 3, 0, 0), shp(2, 5, 3, 0, 0), shp(3, 1, 2, 5, 0)};
    expect_infer_error(XF_OP_GEMM, &p, 3, f3, s4, "does not broadcast", NULL);
}
END_TEST

/* -------------------------------------------------------------------- sgemm */

static void check_sgemm(int ta, int tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                        int64_t pad)
{
    int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
    int64_t arows = ta ? K : M, brows = tb ? N : K;
    float *A = malloc(sizeof(float) * (size_t)(arows * lda + 1));
    float *B = malloc(sizeof(float) * (size_t)(brows * ldb + 1));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    float *C0 = malloc(sizeof(float) * (size_t)(M * ldc + 1));
    float *work = malloc(sizeof(float) * (ir_sgemm_work_floats(M, N, K) + 1));
    ck_assert(A && B && C && C0 && work);
    xf_rng r;
    xf_rng_seed(&r, (uint64_t)(M * 1000003 + N * 1009 + K));
    for (int64_t i = 0; i < arows * lda; i++) A[i] = xf_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < brows * ldb; i++) B[i] = xf_rng_uniform(&r, -1, 1);
    for (int64_t i = 0; i < M * ldc; i++)
        C0[i] = beta == 0.0f ? NAN : xf_rng_uniform(&r, -1, 1); /* beta 0: C never read */
    memcpy(C, C0, sizeof(float) * (size_t)(M * ldc));
    ir_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, work);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
                     (tb ? B[j * ldb + k] : B[k * ldb + j]);
            double want = alpha * s + (beta == 0.0f ? 0.0 : beta * C0[i * ldc + j]);
            double got = C[i * ldc + j];
            ck_assert_msg(fabs(got - want) <= 1e-5 * (double)(K + 1),
                          "sgemm ta=%d tb=%d M=%lld N=%lld K=%lld at (%lld,%lld): %g vs %g", ta,
                          tb, (long long)M, (long long)N, (long long)K, (long long)i,
                          (long long)j, got, want);
        }
        for (int64_t j = N; j < ldc; j++) /* padding columns untouched */
            ck_assert(memcmp(&C[i * ldc + j], &C0[i * ldc + j], sizeof(float)) == 0);
    }
    free(A);
    free(B);
    free(C);
    free(C0);
    free(work);
}

START_TEST(sgemm_odd_sizes)
{
    const int64_t sizes[] = {1, 3, 17, 65, 130};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int i = 0; i < ns; i++)
                for (int j = 0; j < ns; j++)
                    for (int k = 0; k < ns; k++)
                        check_sgemm(ta, tb, sizes[i], sizes[j], sizes[k], 1.0f, 0.0f,
                                    (i + j + k) % 3);
}
END_TEST

START_TEST(sgemm_blocks_and_scaling)
{
    /* past every block boundary: K > 256 (KC), M > 128 (MC), N > 2048 (NC) */
    check_sgemm(0, 0, 3, 2100, 300, 1.0f, 0.0f, 0);
    check_sgemm(1, 1, 150, 40, 520, 0.5f, 2.0f, 3);
    check_sgemm(0, 1, 129, 9, 257, -1.0f, 1.0f, 1);
    check_sgemm(1, 0, 33, 2049, 5, 2.0f, -0.5f, 0);
    /* K == 0: C = beta * C */
    check_sgemm(0, 0, 4, 5, 0, 1.0f, 0.0f, 0);
    check_sgemm(0, 0, 4, 5, 0, 1.0f, 3.0f, 2);
}
END_TEST

/* --------------------------------------------------------------------- conv */

typedef struct conv_cfg {
    int64_t n, c, h, w, m, kh, kw;
    int group, sh, sw, dh, dw, pads[4], bias, act;
} conv_cfg;

static float act_ref(int act, double v)
{
    switch (act) {
    case XF_ACT_RELU: return v < 0 ? 0.0f : (float)v;
    case XF_ACT_SIGMOID: return (float)(1.0 / (1.0 + exp(-v)));
    case XF_ACT_TANH: return (float)tanh(v);
    default: return (float)v;
    }
}

/* The 7-loop direct convolution (n, m, oy, ox, c, ky, kx). Returns 0 when
 * the configuration has no valid output. */
static int naive_conv(const conv_cfg *f, const xf_tensor *x, const xf_tensor *w,
                      const xf_tensor *b, xf_tensor *y)
{
    int g = f->group ? f->group : 1;
    int sh = f->sh ? f->sh : 1, sw = f->sw ? f->sw : 1, dh = f->dh ? f->dh : 1,
        dw = f->dw ? f->dw : 1;
    int64_t cg = f->c / g, mg = f->m / g;
    int64_t oh = (f->h + f->pads[0] + f->pads[2] - (f->kh - 1) * dh - 1);
    int64_t ow = (f->w + f->pads[1] + f->pads[3] - (f->kw - 1) * dw - 1);
    if (oh < 0 || ow < 0) return 0;
    oh = oh / sh + 1;
    ow = ow / sw + 1;
    xf_shape s = shp(4, f->n, f->m, oh, ow);
    ck_assert_int_eq(xf_tensor_alloc(y, XF_F32, &s, NULL), XF_OK);
    const float *X = x->data, *W = w->data, *B = b ? b->data : NULL;
    float *Y = y->data;
    for (int64_t n = 0; n < f->n; n++)
        for (int64_t m = 0; m < f->m; m++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double acc = B ? B[m] : 0.0;
                    int64_t gi = m / mg;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ky = 0; ky < f->kh; ky++)
                            for (int64_t kx = 0; kx < f->kw; kx++) {
                                int64_t iy = oy * sh - f->pads[0] + ky * dh;
                                int64_t ix = ox * sw - f->pads[1] + kx * dw;
                                if (iy < 0 || iy >= f->h || ix < 0 || ix >= f->w) continue;
                                acc += (double)X[((n * f->c + gi * cg + c) * f->h + iy) * f->w + ix] *
                                       W[((m * cg + c) * f->kh + ky) * f->kw + kx];
                            }
                    Y[((n * f->m + m) * oh + oy) * ow + ox] = act_ref(f->act, acc);
                }
    return 1;
}

static xf_params conv_params(const conv_cfg *f)
{
    xf_params p = xf_params_default();
    p.kernel[0] = (int32_t)f->kh;
    p.kernel[1] = (int32_t)f->kw;
    p.stride[0] = f->sh;
    p.stride[1] = f->sw;
    p.dilation[0] = f->dh;
    p.dilation[1] = f->dw;
    for (int i = 0; i < 4; i++) p.pads[i] = f->pads[i];
    p.group = f->group;
    p.activation = f->act;
    return p;
}

/* Runs conv and the naive loop on one configuration; returns whether the
 * configuration was valid (both agree on that). */
static int check_conv(const conv_cfg *f, uint64_t seed)
{
    int g = f->group ? f->group : 1;
    xf_tensor X = make(XF_F32, shp(4, f->n, f->c, f->h, f->w), seed);
    xf_tensor W = make(XF_F32, shp(4, f->m, f->c / g, f->kh, f->kw), seed + 1);
    xf_tensor B = make(XF_F32, shp(1, f->m, 0, 0, 0), seed + 2);
    xf_tensor Y, R;
    xf_params p = conv_params(f);
    const xf_tensor *in[3] = {&X, &W, f->bias ? &B : NULL};
    int valid = naive_conv(f, &X, &W, f->bias ? &B : NULL, &R);
    xf_error err;
    xf_error_clear(&err);
    xf_status st = run_op(XF_OP_CONV, &p, f->bias ? 3 : (seed % 2 ? 2 : 3), in, &Y, &err);
    if (!valid) {
        ck_assert_int_eq(st, XF_ERR_SHAPE);
        ck_assert_msg(strstr(err.msg, "smaller than the dilated kernel") != NULL, "%s", err.msg);
    } else {
        ck_assert_msg(st == XF_OK, "%s", err.msg);
        ck_assert(xf_shape_equal(&Y.shape, &R.shape));
        assert_close(&Y, &R, 1e-4);
        xf_tensor_free(&Y);
        xf_tensor_free(&R);
    }
    xf_tensor_free(&X);
    xf_tensor_free(&W);
    xf_tensor_free(&B);
    return valid;
}

static int rnd(xf_rng *r, int lo, int hi) /* [lo, hi] */
{
    return lo + (int)(xf_rng_next(r) % (uint64_t)(hi - lo + 1));
}

START_TEST(conv_random_against_naive)
{
    xf_rng r;
    xf_rng_seed(&r, 2024);
    int valid = 0, depthwise = 0, grouped = 0, fast = 0;
    for (int it = 0; it < 400; it++) {
        conv_cfg f;
        memset(&f, 0, sizeof f);
        int kind = rnd(&r, 0, 3); /* 0 dense, 1 grouped, 2 depthwise, 3 1x1 fast path */
        int cg = rnd(&r, 1, 4), mg = rnd(&r, 1, 4);
        f.group = kind == 0 ? rnd(&r, 0, 1) : kind == 1 ? rnd(&r, 2, 3) : kind == 2 ? rnd(&r, 2, 6) : rnd(&r, 1, 2);
        int g = f.group ? f.group : 1;
        if (kind == 2) cg = 1, mg = rnd(&r, 1, 2);
        f.n = rnd(&r, 1, 2);
        f.c = cg * g;
        f.m = mg * g;
        f.h = rnd(&r, 1, 9);
        f.w = rnd(&r, 1, 9);
        f.kh = kind == 3 ? 1 : rnd(&r, 1, 4);
        f.kw = kind == 3 ? 1 : rnd(&r, 1, 4);
        f.sh = kind == 3 ? 1 : rnd(&r, 0, 3);
        f.sw = kind == 3 ? 1 : rnd(&r, 0, 3);
        f.dh = rnd(&r, 0, 3);
        f.dw = rnd(&r, 0, 3);
        for (int i = 0; i < 4; i++) f.pads[i] = kind == 3 ? 0 : rnd(&r, 0, 3);
        f.bias = rnd(&r, 0, 1);
        f.act = rnd(&r, 0, 3);
        int ok = check_conv(&f, (uint64_t)it * 7 + 1);
        valid += ok;
        depthwise += ok && kind == 2;
        grouped += ok && kind == 1;
        fast += ok && kind == 3;
    }
    ck_assert_int_gt(valid, 250);
    ck_assert_int_gt(depthwise, 30);
    ck_assert_int_gt(grouped, 30);
    ck_assert_int_gt(fast, 50);
}
END_TEST

START_TEST(conv_larger_layers)
{
    /* sizes that cross the sgemm block boundaries and the resnet shapes */
    conv_cfg a = {1, 16, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, 1, XF_ACT_RELU};
    conv_cfg b = {2, 40, 9, 9, 136, 3, 3, 2, 2, 2, 1, 1, {1, 0, 1, 0}, 1, XF_ACT_NONE};
    conv_cfg c = {1, 300, 5, 7, 20, 1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}, 0, XF_ACT_TANH};
    conv_cfg d = {1, 3, 30, 30, 8, 7, 7, 1, 2, 2, 1, 1, {3, 3, 3, 3}, 1, XF_ACT_SIGMOID};
    conv_cfg e = {1, 64, 14, 14, 64, 1, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}, 1, XF_ACT_NONE};
    ck_assert(check_conv(&a, 1));
    ck_assert(check_conv(&b, 2));
    ck_assert(check_conv(&c, 3));
    ck_assert(check_conv(&d, 4));
    ck_assert(check_conv(&e, 5));
}
END_TEST

START_TEST(conv_hand_computed)
{
    /* 1x1x3x3 input, 2x2 kernel of ones, pad 1 top/left only, stride 2:
     * output 2x2 with the top-left window mostly in the padding. */
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float w[4] = {1, 1, 1, 1};
    const float bias[1] = {-10};
    xf_tensor X = make_vals(shp(4, 1, 1, 3, 3), x), W = make_vals(shp(4, 1, 1, 2, 2), w);
    xf_tensor B = make_vals(shp(1, 1, 0, 0, 0), bias), Y;
    conv_cfg f = {1, 1, 3, 3, 1, 2, 2, 1, 2, 2, 1, 1, {1, 1, 0, 0}, 1, XF_ACT_RELU};
    xf_params p = conv_params(&f);
    const xf_tensor *in[3] = {&X, &W, &B};
    run_op(XF_OP_CONV, &p, 3, in, &Y, NULL);
    ck_assert_int_eq(Y.shape.dims[2], 2);
    ck_assert_int_eq(Y.shape.dims[3], 2);
    /* windows: {1}, {2,3}, {4,7}, {5,6,8,9}; minus 10, relu */
    const float want[4] = {0, 0, 1, 18};
    assert_values(&Y, want, 4);
    xf_tensor_free(&X);
    xf_tensor_free(&W);
    xf_tensor_free(&B);
    xf_tensor_free(&Y);
}
END_TEST

START_TEST(conv_shape_errors)
{
    xf_dtype f3[3] = {XF_F32, XF_F32, XF_F32};
    conv_cfg f = {1, 6, 8, 8, 4, 3, 3, 2, 1, 1, 1, 1, {0, 0, 0, 0}, 0, 0};
    xf_params p = conv_params(&f);
    xf_shape ok[3] = {shp(4, 1, 6, 8, 8), shp(4, 4, 3, 3, 3), shp(1, 4, 0, 0, 0)};
    xf_dtype odt;
    xf_shape osh;
    ck_assert_int_eq(xf_op_infer(XF_OP_CONV, &p, 3, f3, ok, 1, &odt, &osh, NULL), XF_OK);
    ck_assert(xf_shape_equal(&osh, &(xf_shape){4, {1, 4, 6, 6}}));

    xf_shape s[3];
    memcpy(s, ok, sizeof s);
    p.group = 4; /* 6 channels, group 4 */
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "input channels 6", "group 4");
    p.group = 3; /* channels ok, 4 output channels not divisible */
    s[1] = shp(4, 4, 2, 3, 3);
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "output channels 4", "group 3");
    p.group = 2;
    s[1] = shp(4, 4, 2, 3, 3); /* needs 3 input channels per group */
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "2 input channels per group", "needs 3");
    s[1] = ok[1];
    p.kernel[0] = 5;
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "kernel parameter 5x3", "3x3");
    p.kernel[0] = 3;
    s[2] = shp(1, 3, 0, 0, 0);
    expect_infer_error(XF_OP_CONV, &p, 3, f3, s, "bias must be [4]", "[3]");
    s[2] = ok[2];
    s[0] = shp(4, 1, 6, 2, 8);
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "smaller than the dilated kernel", NULL);
    s[0] = shp(3, 6, 8, 8, 0);
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "4-D NCHW", NULL);
    s[0] = ok[0];
    p.pads[2] = -1;
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "pads", "negative");
    p.pads[2] = 0;
    p.activation = 9;
    expect_infer_error(XF_OP_CONV, &p, 2, f3, s, "activation", NULL);
    p.activation = 0;
    xf_dtype bad[3] = {XF_F32, XF_I64, XF_F32};
    expect_infer_error(XF_OP_CONV, &p, 2, bad, s, "input 1 must be float32", NULL);
}
END_TEST

/* ------------------------------------------------------ enlarge, constants */

START_TEST(enlarge_centres_kernel)
{
    const float w[6] = {1, 2, 3, 4, 5, 6}; /* [2,1,1,3] */
    xf_tensor W = make_vals(shp(4, 2, 1, 1, 3), w), Y;
    xf_params p = xf_params_default();
    p.kernel[0] = 3;
    p.kernel[1] = 5;
    const xf_tensor *in[1] = {&W};
    run_op(XF_OP_ENLARGE, &p, 1, in, &Y, NULL);
    ck_assert(xf_shape_equal(&Y.shape, &(xf_shape){4, {2, 1, 3, 5}}));
    float want[30] = {0};
    for (int o = 0; o < 2; o++)
        for (int j = 0; j < 3; j++) want[o * 15 + 1 * 5 + 1 + j] = w[o * 3 + j];
    assert_values(&Y, want, 30);
    xf_tensor_free(&Y);
    /* same size is a copy */
    p.kernel[0] = 1;
    p.kernel[1] = 3;
    run_op(XF_OP_ENLARGE, &p, 1, in, &Y, NULL);
    assert_values(&Y, w, 6);
    xf_tensor_free(&Y);
    xf_tensor_free(&W);

    xf_dtype f1[1] = {XF_F32};
    xf_shape s1[1] = {shp(4, 2, 1, 3, 3)};
    p.kernel[0] = 1;
    p.kernel[1] = 3;
    expect_infer_error(XF_OP_ENLARGE, &p, 1, f1, s1, "smaller", "height");
    p.kernel[0] = 5;
    p.kernel[1] = 4;
    expect_infer_error(XF_OP_ENLARGE, &p, 1, f1, s1, "odd difference", "width");
    xf_shape s2[1] = {shp(2, 3, 3, 0, 0)};
    p.kernel[1] = 5;
    expect_infer_error(XF_OP_ENLARGE, &p, 1, f1, s2, "4-D", NULL);
}
END_TEST

static xf_tensor gen(xf_op op, xf_params p)
{
    xf_tensor y;
    ck_assert_int_eq(run_op(op, &p, 0, NULL, &y, NULL), XF_OK);
    return y;
}

static xf_params shape_params(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    xf_params p = xf_params_default();
    p.n_shape = rank;
    int64_t d[4] = {d0, d1, d2, d3};
    for (int i = 0; i < rank && i < 4; i++) p.shape[i] = d[i];
    return p;
}

START_TEST(constant_generators)
{
    xf_tensor y = gen(XF_OP_CONST_IDENTITY_CONV, shape_params(4, 2, 2, 3, 1));
    float want_ic[12] = {0};
    want_ic[(0 * 2 + 0) * 3 + 1] = 1; /* [0,0,1,0] */
    want_ic[(1 * 2 + 1) * 3 + 1] = 1; /* [1,1,1,0] */
    assert_values(&y, want_ic, 12);
    xf_tensor_free(&y);

    y = gen(XF_OP_CONST_IDENTITY_MATRIX, shape_params(2, 3, 3, 0, 0));
    const float want_im[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    assert_values(&y, want_im, 9);
    xf_tensor_free(&y);

    y = gen(XF_OP_CONST_ONES, shape_params(3, 2, 1, 3, 0));
    const float ones[6] = {1, 1, 1, 1, 1, 1};
    ck_assert(xf_shape_equal(&y.shape, &(xf_shape){3, {2, 1, 3}}));
    assert_values(&y, ones, 6);
    xf_tensor_free(&y);

    y = gen(XF_OP_CONST_POOL, shape_params(4, 2, 1, 2, 3));
    float sixth[12];
    for (int i = 0; i < 12; i++) sixth[i] = 1.0f / 6.0f;
    assert_values(&y, sixth, 12);
    xf_tensor_free(&y);

    /* the pool kernel as a depthwise conv is an average pool */
    {
        const float x[4] = {1, 2, 3, 6};
        xf_tensor X = make_vals(shp(4, 1, 1, 2, 2), x), Y;
        xf_tensor K = gen(XF_OP_CONST_POOL, shape_params(4, 1, 1, 2, 2));
        conv_cfg f = {1, 1, 2, 2, 1, 2, 2, 1, 1, 1, 1, 1, {0, 0, 0, 0}, 0, 0};
        xf_params p = conv_params(&f);
        const xf_tensor *in[2] = {&X, &K};
        run_op(XF_OP_CONV, &p, 2, in, &Y, NULL);
        const float avg[1] = {3};
        assert_values(&Y, avg, 1);
        xf_tensor_free(&X);
        xf_tensor_free(&Y);
        xf_tensor_free(&K);
    }

    xf_params p = shape_params(2, 2, 3, 0, 0);
    p.to = XF_I64;
    p.value = -7.0;
    y = gen(XF_OP_CONSTANT_OF_SHAPE, p);
    ck_assert_int_eq(y.dtype, XF_I64);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(((int64_t *)y.data)[i], -7);
    xf_tensor_free(&y);
    p.to = XF_I32;
    p.value = 123456.0;
    y = gen(XF_OP_CONSTANT_OF_SHAPE, p);
    ck_assert_int_eq(y.dtype, XF_I32);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(((int32_t *)y.data)[i], 123456);
    xf_tensor_free(&y);
    p.to = XF_BOOL;
    p.value = 1.0;
    y = gen(XF_OP_CONSTANT_OF_SHAPE, p);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(((uint8_t *)y.data)[i], 1);
    xf_tensor_free(&y);
    p.to = XF_F32;
    p.value = 0.25;
    y = gen(XF_OP_CONSTANT_OF_SHAPE, p);
    const float q[6] = {0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
    assert_values(&y, q, 6);
    xf_tensor_free(&y);
    p = shape_params(0, 0, 0, 0, 0); /* rank 0: one element */
    p.to = XF_F32;
    p.value = 3.5;
    y = gen(XF_OP_CONSTANT_OF_SHAPE, p);
    ck_assert_int_eq(y.shape.rank, 0);
    ck_assert(((float *)y.data)[0] == 3.5f);
    xf_tensor_free(&y);
}
END_TEST

START_TEST(constant_generator_errors)
{
    xf_params p = shape_params(4, 2, 2, 2, 3);
    expect_infer_error(XF_OP_CONST_IDENTITY_CONV, &p, 0, NULL, NULL, "odd", "[2,2,2,3]");
    p = shape_params(4, 2, 3, 3, 3);
    expect_infer_error(XF_OP_CONST_IDENTITY_CONV, &p, 0, NULL, NULL, "[C,C,kh,kw]", NULL);
    p = shape_params(2, 2, 3, 0, 0);
    expect_infer_error(XF_OP_CONST_IDENTITY_MATRIX, &p, 0, NULL, NULL, "square", "[2,3]");
    p = shape_params(3, 2, 3, 3, 0);
    expect_infer_error(XF_OP_CONST_IDENTITY_MATRIX, &p, 0, NULL, NULL, "2 dims", NULL);
    p = shape_params(4, 2, 2, 3, 3);
    expect_infer_error(XF_OP_CONST_POOL, &p, 0, NULL, NULL, "[C,1,kh,kw]", NULL);
    p = shape_params(2, 2, -1, 0, 0);
    expect_infer_error(XF_OP_CONST_ONES, &p, 0, NULL, NULL, "negative", NULL);
    p = shape_params(1, 4, 0, 0, 0);
    p.to = 0;
    expect_infer_error(XF_OP_CONSTANT_OF_SHAPE, &p, 0, NULL, NULL, "unsupported dtype", NULL);
    p.to = XF_I32;
    p.value = 3e9;
    expect_infer_error(XF_OP_CONSTANT_OF_SHAPE, &p, 0, NULL, NULL, "does not fit", "int32");
    p.to = XF_I64;
    p.value = NAN;
    expect_infer_error(XF_OP_CONSTANT_OF_SHAPE, &p, 0, NULL, NULL, "does not fit", "int64");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ops_conv");
    TCase *t = tcase_create("linalg_conv");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, matmul_2d_and_vectors);
    tcase_add_test(t, matmul_batched_broadcast);
    tcase_add_test(t, matmul_errors);
    tcase_add_test(t, gemm_all_variants);
    tcase_add_test(t, gemm_hand_computed);
    tcase_add_test(t, gemm_errors);
    tcase_add_test(t, sgemm_odd_sizes);
    tcase_add_test(t, sgemm_blocks_and_scaling);
    tcase_add_test(t, conv_random_against_naive);
    tcase_add_test(t, conv_larger_layers);
    tcase_add_test(t, conv_hand_computed);
    tcase_add_test(t, conv_shape_errors);
    tcase_add_test(t, enlarge_centres_kernel);
    tcase_add_test(t, constant_generators);
    tcase_add_test(t, constant_generator_errors);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
