/*
 * ops_linalg.c — shape inference and float32 kernels for matmul and gemm.
 *
 * matmul follows numpy/ONNX MatMul: a 1-D first operand is treated as a row
 * [1,K] and a 1-D second operand as a column [K,1], the added dimension is
 * removed from the result, and the leading (batch) dimensions broadcast.
 * gemm is ONNX Gemm: Y = alpha * op(A) * op(B) + beta * C with A and B 2-D,
 * op() an optional transpose and C (optional) unidirectionally broadcastable
 * to [M,N]. alpha and beta are taken literally (the importer fills ONNX's
 * defaults). Both run on the blocked product in sgemm.c.
 */
#include "op_internal.h"
#include "sgemm_internal.h"

#include <stdlib.h>
#include <string.h>

/* Both operands promoted to rank >= 2, plus the broadcast batch shape. */
typedef struct matmul_dims {
    xf_shape a, b;     /* promoted operand shapes */
    xf_shape batch;    /* broadcast leading dims */
    int a_vec, b_vec;  /* operand was 1-D */
    int64_t M, N, K;
} matmul_dims;

static xf_status matmul_dims_get(const xf_shape *a, const xf_shape *b, matmul_dims *d,
                                 xf_error *err)
{
    char sa[96], sb[96];
    memset(d, 0, sizeof *d);
    if (a->rank < 1 || b->rank < 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "matmul: operands must have rank >= 1, got %s x %s",
                       xf_shape_str(a, sa, sizeof sa), xf_shape_str(b, sb, sizeof sb));
    d->a = *a;
    d->b = *b;
    d->a_vec = a->rank == 1;
    d->b_vec = b->rank == 1;
    if (d->a_vec) {
        int64_t dims[2] = {1, a->dims[0]};
        d->a = xf_shape_make(2, dims);
    }
    if (d->b_vec) {
        int64_t dims[2] = {b->dims[0], 1};
        d->b = xf_shape_make(2, dims);
    }
    int ra = d->a.rank, rb = d->b.rank;
    d->M = d->a.dims[ra - 2];
    d->K = d->a.dims[ra - 1];
    d->N = d->b.dims[rb - 1];
    if (d->b.dims[rb - 2] != d->K)
        return XF_FAIL(err, XF_ERR_SHAPE, "matmul: inner dimensions differ: %s x %s (%lld vs %lld)",
                       xf_shape_str(a, sa, sizeof sa), xf_shape_str(b, sb, sizeof sb),
                       (long long)d->K, (long long)d->b.dims[rb - 2]);
    xf_shape ba = xf_shape_make(ra - 2, d->a.dims), bb = xf_shape_make(rb - 2, d->b.dims);
    if (xf_shape_broadcast(&ba, &bb, &d->batch, err) != XF_OK) {
        xf_error_prefix(err, "matmul %s x %s: batch dimensions", xf_shape_str(a, sa, sizeof sa),
                        xf_shape_str(b, sb, sizeof sb));
        return XF_ERR_SHAPE;
    }
    return XF_OK;
}

XF_DECLARE_INFER(matmul)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    if (in_dt[0] != XF_F32 || in_dt[1] != XF_F32)
        return XF_FAIL(err, XF_ERR_SHAPE, "matmul: operands must be float32, got %s and %s",
                       xf_dtype_name(in_dt[0]), xf_dtype_name(in_dt[1]));
    matmul_dims d;
    xf_status st = matmul_dims_get(&in_sh[0], &in_sh[1], &d, err);
    if (st != XF_OK) return st;
    xf_shape o = d.batch;
    if (!d.a_vec) o.dims[o.rank++] = d.M;
    if (!d.b_vec) o.dims[o.rank++] = d.N;
    out_dt[0] = XF_F32;
    out_sh[0] = o;
    return XF_OK;
}

/* Element strides of an operand's batch dims aligned to the broadcast batch
 * shape (0 where the operand has size 1 or lacks the dim). */
static void batch_strides(const xf_shape *op, const xf_shape *batch, int64_t mat_size,
                          int64_t *strides)
{
    int nb = op->rank - 2;
    int64_t st = mat_size;
    for (int i = batch->rank - 1; i >= 0; i--) {
        int k = i - (batch->rank - nb);
        if (k < 0 || op->dims[k] == 1) {
            strides[i] = 0;
        } else {
            strides[i] = st;
        }
        if (k >= 0) st *= op->dims[k];
    }
}

XF_DECLARE_RUN(matmul)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    matmul_dims d;
    xf_status st = matmul_dims_get(&in[0]->shape, &in[1]->shape, &d, err);
    if (st != XF_OK) return st;
    const float *A = in[0]->data, *B = in[1]->data;
    float *C = out[0].data;
    int64_t nbatch = xf_shape_numel(&d.batch);
    xf_shape bb = xf_shape_make(d.b.rank - 2, d.b.dims);
    /* B shared by every batch entry: fold A's batch into M (one product). */
    int64_t rows = xf_shape_numel(&bb) == 1 ? nbatch * d.M : d.M;
    int64_t nprod = xf_shape_numel(&bb) == 1 ? 1 : nbatch;
    size_t nwork = ir_sgemm_work_floats(rows, d.N, d.K);
    float *work = xf_malloc(sizeof(float) * (nwork ? nwork : 1));
    if (!work) return XF_FAIL(err, XF_ERR_NOMEM, "matmul: out of memory for %zu floats", nwork);
    int64_t sa[XF_MAX_DIMS], sb[XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0};
    batch_strides(&d.a, &d.batch, d.M * d.K, sa);
    batch_strides(&d.b, &d.batch, d.K * d.N, sb);
    for (int64_t t = 0; t < nprod; t++) {
        int64_t oa = 0, ob = 0;
        for (int i = 0; i < d.batch.rank; i++) {
            oa += idx[i] * sa[i];
            ob += idx[i] * sb[i];
        }
        ir_sgemm(0, 0, rows, d.N, d.K, 1.0f, A + oa, d.K, B + ob, d.N, 0.0f, C + t * rows * d.N,
                 d.N, work);
        for (int i = d.batch.rank - 1; i >= 0; i--) {
            if (++idx[i] < d.batch.dims[i]) break;
            idx[i] = 0;
        }
    }
    xf_free(work);
    return XF_OK;
}

/* op(A) is M x K, op(B) is K x N. */
typedef struct gemm_dims {
    int64_t M, N, K;
} gemm_dims;

static xf_status gemm_dims_get(const xf_params *p, int n_in, const xf_shape *a, const xf_shape *b,
                               const xf_shape *c, gemm_dims *d, xf_error *err)
{
    char s1[96], s2[96];
    if (a->rank != 2 || b->rank != 2)
        return XF_FAIL(err, XF_ERR_SHAPE, "gemm: A and B must be 2-D, got %s and %s",
                       xf_shape_str(a, s1, sizeof s1), xf_shape_str(b, s2, sizeof s2));
    d->M = p->trans_a ? a->dims[1] : a->dims[0];
    d->K = p->trans_a ? a->dims[0] : a->dims[1];
    int64_t kb = p->trans_b ? b->dims[1] : b->dims[0];
    d->N = p->trans_b ? b->dims[0] : b->dims[1];
    if (kb != d->K)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "gemm: inner dimensions differ: A %s (trans_a=%d) x B %s (trans_b=%d): "
                       "%lld vs %lld",
                       xf_shape_str(a, s1, sizeof s1), (int)p->trans_a,
                       xf_shape_str(b, s2, sizeof s2), (int)p->trans_b, (long long)d->K,
                       (long long)kb);
    if (n_in < 3 || !c) return XF_OK;
    int ok = c->rank <= 2;
    int64_t target[2] = {d->M, d->N};
    for (int i = 0; ok && i < c->rank; i++) {
        int64_t dim = c->dims[c->rank - 1 - i];
        ok = dim == 1 || dim == target[1 - i];
    }
    if (!ok)
        return XF_FAIL(err, XF_ERR_SHAPE, "gemm: C %s does not broadcast to the result [%lld,%lld]",
                       xf_shape_str(c, s1, sizeof s1), (long long)d->M, (long long)d->N);
    return XF_OK;
}

XF_DECLARE_INFER(gemm)
{
    (void)n_out;
    int has_c = n_in >= 3 && in_dt[2] != XF_DTYPE_INVALID;
    for (int i = 0; i < (has_c ? 3 : 2); i++)
        if (in_dt[i] != XF_F32)
            return XF_FAIL(err, XF_ERR_SHAPE, "gemm: input %d must be float32, got %s", i,
                           xf_dtype_name(in_dt[i]));
    gemm_dims d;
    xf_status st = gemm_dims_get(p, n_in, &in_sh[0], &in_sh[1], has_c ? &in_sh[2] : NULL, &d, err);
    if (st != XF_OK) return st;
    int64_t dims[2] = {d.M, d.N};
    out_dt[0] = XF_F32;
    out_sh[0] = xf_shape_make(2, dims);
    return XF_OK;
}

/* Y = beta * C broadcast to [M,N]. */
static void fill_beta_c(const xf_tensor *c, float beta, int64_t M, int64_t N, float *y)
{
    const float *cd = c->data;
    int64_t d0 = c->shape.rank == 2 ? c->shape.dims[0] : 1;
    int64_t d1 = c->shape.rank >= 1 ? c->shape.dims[c->shape.rank - 1] : 1;
    int64_t rs = d0 == 1 ? 0 : d1, cs = d1 == 1 ? 0 : 1;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) y[i * N + j] = beta * cd[i * rs + j * cs];
}

XF_DECLARE_RUN(gemm)
{
    (void)n_out;
    const xf_tensor *c = n_in >= 3 ? in[2] : NULL;
    gemm_dims d;
    xf_status st =
        gemm_dims_get(p, n_in, &in[0]->shape, &in[1]->shape, c ? &c->shape : NULL, &d, err);
    if (st != XF_OK) return st;
    size_t nwork = ir_sgemm_work_floats(d.M, d.N, d.K);
    float *work = xf_malloc(sizeof(float) * (nwork ? nwork : 1));
    if (!work) return XF_FAIL(err, XF_ERR_NOMEM, "gemm: out of memory for %zu floats", nwork);
    float *y = out[0].data;
    if (c) fill_beta_c(c, p->beta, d.M, d.N, y);
    const xf_shape *sa = &in[0]->shape, *sb = &in[1]->shape;
    ir_sgemm(p->trans_a != 0, p->trans_b != 0, d.M, d.N, d.K, p->alpha, in[0]->data, sa->dims[1],
             in[1]->data, sb->dims[1], c ? 1.0f : 0.0f, y, d.N, work);
    xf_free(work);
    return XF_OK;
}
