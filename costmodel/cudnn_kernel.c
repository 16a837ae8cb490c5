/*
 * cudnn_kernel.c — cuDNN/cuBLAS kernels for one operator configuration:
 * creation dispatch, running and freeing, tensor descriptors, and the
 * compute-heavy families: convolution (algorithm chosen by
 * cudnnFindConvolutionForwardAlgorithm, FMA math so results match the
 * float32 reference), matmul (cublasSgemmStridedBatched) and gemm.
 *
 * cuBLAS is column-major; a row-major product C[M,N] = op(A)[M,K] op(B)[K,N]
 * is computed as the column-major C^T = op(B)^T op(A)^T: a row-major matrix
 * read column-major is its own transpose, so B is passed first with op
 * N when it is stored [K,N] (ld N) and T when stored [N,K] (ld K), and A
 * second with N when stored [M,K] (ld K) and T when stored [K,M] (ld M).
 */
#include "cudnn_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

int cm_cudnn_all_f32(const xf_backend_op *op)
{
    for (int i = 0; i < op->n_inputs; i++)
        if (op->in_dtypes[i] != XF_DTYPE_INVALID && op->in_dtypes[i] != XF_F32) return 0;
    for (int i = 0; i < op->n_outputs; i++)
        if (op->out_dtypes[i] != XF_F32) return 0;
    return 1;
}

static int fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

xf_status cm_cudnn_desc(cx_kernel *k, int rank, const int64_t *dims, const int64_t *strides,
                  cudnnTensorDescriptor_t *out, xf_error *err)
{
    *out = NULL;
    int nb = rank < 4 ? 4 : rank, pad = nb - rank;
    int d[CUDNN_DIM_MAX], s[CUDNN_DIM_MAX];
    if (nb > CUDNN_DIM_MAX || k->n_desc == CX_MAX_DESC)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "tensor of rank %d is not supported by cuDNN",
                       rank);
    for (int i = 0; i < nb; i++) {
        int64_t v = i < pad ? 1 : dims[i - pad];
        if (!fits_int(v) || v == 0)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "dimension %lld does not suit cuDNN",
                           (long long)v);
        d[i] = (int)v;
    }
    /* real dims: the given strides (or dense); the leading 1-sized pad dims
     * get the extent of the whole tensor, as a dense layout would */
    int64_t acc = 1, extent = 1;
    for (int i = nb - 1; i >= pad; i--) {
        int64_t v = strides ? strides[i - pad] : acc;
        if (!fits_int(v)) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "stride too large for cuDNN");
        s[i] = (int)v;
        acc *= d[i];
        if (v * d[i] > extent) extent = v * d[i];
    }
    if (!fits_int(extent)) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "tensor too large for cuDNN");
    for (int i = 0; i < pad; i++) s[i] = (int)extent;
    cudnnTensorDescriptor_t t;
    xf_status st = cm_cudnn_cudnn(CX(cudnnCreateTensorDescriptor)(&t), err, "creating a tensor descriptor");
    if (st) return st;
    k->desc[k->n_desc++] = t;
    st = cm_cudnn_cudnn(CX(cudnnSetTensorNdDescriptor)(t, CUDNN_DATA_FLOAT, nb, d, s), err,
                  "describing a tensor");
    if (!st) *out = t;
    return st;
}

/* --------------------------------------------------------- convolution */

static xf_status run_conv(cx_state *st, const cx_kernel *k, const void *const *in,
                          void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    xf_status s = cm_cudnn_cudnn(CX(cudnnConvolutionForward)(st->cudnn, &one, k->desc[0], in[0], k->filter,
                                                   in[1], k->conv, k->algo, st->workspace,
                                                   k->workspace, &zero, k->desc[1], out[0]),
                           err, "cudnnConvolutionForward");
    if (!s && k->has_bias)
        s = cm_cudnn_cudnn(CX(cudnnAddTensor)(st->cudnn, &one, k->desc[2], in[2], &one, k->desc[1], out[0]),
                     err, "adding the convolution bias");
    if (!s && k->act)
        s = cm_cudnn_cudnn(CX(cudnnActivationForward)(st->cudnn, k->act, &one, k->desc[1], out[0], &zero,
                                            k->desc[1], out[0]),
                     err, "applying the fused activation");
    return s;
}

static xf_status make_activation(cx_kernel *k, int act, xf_error *err)
{
    cudnnActivationMode_t mode = act == XF_ACT_RELU      ? CUDNN_ACTIVATION_RELU
                                 : act == XF_ACT_SIGMOID ? CUDNN_ACTIVATION_SIGMOID
                                                         : CUDNN_ACTIVATION_TANH;
    xf_status s = cm_cudnn_cudnn(CX(cudnnCreateActivationDescriptor)(&k->act), err,
                           "creating an activation descriptor");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetActivationDescriptor)(k->act, mode, CUDNN_PROPAGATE_NAN, 0.0), err,
                     "describing an activation");
    return s;
}

static xf_status create_conv(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    const xf_params *p = op->params;
    const xf_shape *x = &op->in_shapes[0], *w = &op->in_shapes[1], *y = &op->out_shapes[0];
    if (!cm_cudnn_all_f32(op) || x->rank != 4 || p->pads[0] != p->pads[2] || p->pads[1] != p->pads[3])
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "conv: only 4-D float with symmetric pads");
    int has_bias = op->n_inputs > 2 && op->in_dtypes[2] != XF_DTYPE_INVALID;
    cudnnTensorDescriptor_t xd, yd, bd;
    xf_status s = cm_cudnn_desc(k, 4, x->dims, NULL, &xd, err);
    if (!s) s = cm_cudnn_desc(k, 4, y->dims, NULL, &yd, err);
    if (!s && has_bias) {
        int64_t bdims[4] = {1, w->dims[0], 1, 1};
        s = cm_cudnn_desc(k, 4, bdims, NULL, &bd, err);
    }
    if (s) return s;
    int wd[4];
    for (int i = 0; i < 4; i++) wd[i] = (int)w->dims[i];
    s = cm_cudnn_cudnn(CX(cudnnCreateFilterDescriptor)(&k->filter), err, "creating a filter descriptor");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetFilterNdDescriptor)(k->filter, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4,
                                                wd),
                     err, "describing the filter");
    if (!s) s = cm_cudnn_cudnn(CX(cudnnCreateConvolutionDescriptor)(&k->conv), err, "creating a conv");
    int sh = p->stride[0] ? p->stride[0] : 1, sw = p->stride[1] ? p->stride[1] : 1;
    int dh = p->dilation[0] ? p->dilation[0] : 1, dw = p->dilation[1] ? p->dilation[1] : 1;
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetConvolution2dDescriptor)(k->conv, p->pads[0], p->pads[1], sh, sw, dh,
                                                     dw, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                     err, "describing the convolution");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetConvolutionGroupCount)(k->conv, p->group > 0 ? p->group : 1), err,
                     "setting the group count");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetConvolutionMathType)(k->conv, CUDNN_FMA_MATH), err,
                     "setting FMA math");
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n_perf = 0;
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnFindConvolutionForwardAlgorithm)(st->cudnn, xd, k->filter, k->conv, yd,
                                                          CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                          &n_perf, perf),
                     err, "searching convolution algorithms");
    if (s) return s;
    int best = -1;
    for (int i = 0; i < n_perf && best < 0; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS) best = i; /* sorted fastest first */
    if (best < 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "conv: cuDNN found no working algorithm");
    k->algo = perf[best].algo;
    k->workspace = perf[best].memory;
    s = cm_cudnn_workspace(st, k->workspace, err);
    if (!s && p->activation != XF_ACT_NONE) s = make_activation(k, p->activation, err);
    if (s) return s;
    k->has_bias = has_bias;
    k->launches = 1 + has_bias + (p->activation != XF_ACT_NONE);
    k->run = run_conv;
    return XF_OK;
}

/* ------------------------------------------------------ matmul and gemm */

static xf_status run_gemm_batched(cx_state *st, const cx_kernel *k, const void *const *in,
                                  void *const *out, xf_error *err)
{
    /* in[0] = A, in[1] = B; column-major C^T = op(B)^T op(A)^T */
    return cm_cudnn_cublas(CX(cublasSgemmStridedBatched)(st->cublas, k->op_b, k->op_a, k->n, k->m, k->k,
                                               &k->alpha, in[1], k->ldb, k->stride_b, in[0],
                                               k->lda, k->stride_a, &k->beta, out[0], k->ldc,
                                               k->stride_c, k->batch),
                     err, "cublasSgemmStridedBatched");
}

/* Batch dims of t (all but the last two, right-aligned to `rank` - 2) are
 * either those of the output (stride = matrix size) or all 1 (stride 0). */
static int batch_stride(const xf_shape *t, const xf_shape *y, long long *stride)
{
    int nb = y->rank - 2, tb = t->rank - 2;
    int64_t tn = 1;
    for (int i = 0; i < tb; i++) tn *= t->dims[i];
    if (tn == 1) {
        *stride = 0;
        return 1;
    }
    if (tb != nb) return 0;
    for (int i = 0; i < nb; i++)
        if (t->dims[i] != y->dims[i]) return 0;
    *stride = (long long)(t->dims[tb] * t->dims[tb + 1]);
    return 1;
}

static xf_status create_matmul(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_shape *a = &op->in_shapes[0], *b = &op->in_shapes[1], *y = &op->out_shapes[0];
    if (!cm_cudnn_all_f32(op) || a->rank < 2 || b->rank < 2)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "matmul: only float matrices on the GPU");
    int64_t M = a->dims[a->rank - 2], K = a->dims[a->rank - 1], N = b->dims[b->rank - 1];
    int64_t batch = 1;
    for (int i = 0; i < y->rank - 2; i++) batch *= y->dims[i];
    if (!batch_stride(a, y, &k->stride_a) || !batch_stride(b, y, &k->stride_b) ||
        !fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(batch))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "matmul: broadcast not expressible as strides");
    k->op_a = k->op_b = CUBLAS_OP_N;
    k->m = (int)M, k->n = (int)N, k->k = (int)K;
    k->lda = (int)K, k->ldb = (int)N, k->ldc = (int)N;
    k->stride_c = (long long)(M * N);
    k->batch = (int)batch;
    k->alpha = 1.0f, k->beta = 0.0f;
    k->launches = 1;
    k->run = run_gemm_batched;
    return XF_OK;
}

static xf_status run_gemm(cx_state *st, const cx_kernel *k, const void *const *in,
                          void *const *out, xf_error *err)
{
    xf_status s = XF_OK;
    const float one = 1.0f, zero = 0.0f;
    if (k->copy_c)
        s = cm_cudnn_cuda(CX(cudaMemcpyAsync)(out[0], in[2], (size_t)k->m * (size_t)k->n * sizeof(float),
                                    cudaMemcpyDeviceToDevice, 0),
                    err, "copying gemm's C");
    else if (k->has_bias) /* Y = C broadcast to [M,N] */
        s = cm_cudnn_cudnn(CX(cudnnAddTensor)(st->cudnn, &one, k->desc[1], in[2], &zero, k->desc[0],
                                    out[0]),
                     err, "broadcasting gemm's C");
    if (s) return s;
    return cm_cudnn_cublas(CX(cublasSgemm)(st->cublas, k->op_b, k->op_a, k->n, k->m, k->k, &k->alpha, in[1],
                                 k->ldb, in[0], k->lda, &k->beta, out[0], k->ldc),
                     err, "cublasSgemm");
}

static xf_status create_gemm(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_params *p = op->params;
    const xf_shape *a = &op->in_shapes[0], *b = &op->in_shapes[1], *y = &op->out_shapes[0];
    if (!cm_cudnn_all_f32(op))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gemm: only float on the GPU");
    int64_t M = y->dims[0], N = y->dims[1], K = p->trans_a ? a->dims[0] : a->dims[1];
    if (!fits_int(M) || !fits_int(N) || !fits_int(K))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gemm: too large for cuBLAS");
    k->m = (int)M, k->n = (int)N, k->k = (int)K;
    k->op_a = p->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    k->op_b = p->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    k->lda = (int)a->dims[1]; /* row length of A as stored */
    k->ldb = (int)b->dims[1];
    k->ldc = (int)N;
    k->alpha = p->alpha;
    k->beta = 0.0f;
    k->launches = 1;
    if (op->n_inputs > 2 && op->in_dtypes[2] != XF_DTYPE_INVALID) {
        const xf_shape *c = &op->in_shapes[2];
        k->has_bias = 1;
        k->beta = p->beta;
        k->launches = 2;
        if (xf_shape_numel(c) == M * N) { /* valid broadcast of equal size: same layout */
            k->copy_c = 1;
        } else {
            cudnnTensorDescriptor_t yd, cd;
            int64_t c2[2] = {1, 1};
            for (int i = 0; i < c->rank; i++) c2[2 - c->rank + i] = c->dims[i];
            xf_status s = cm_cudnn_desc(k, 2, y->dims, NULL, &yd, err);
            if (!s) s = cm_cudnn_desc(k, 2, c2, NULL, &cd, err);
            if (s) return s;
        }
    }
    k->run = run_gemm;
    return XF_OK;
}

/* ----------------------------------------------------- dispatch and life */

xf_status cm_cudnn_kernel_create(cx_state *st, const xf_backend_op *op, cx_kernel **out,
                           xf_error *err)
{
    *out = NULL;
    cx_kernel *k = xf_calloc(1, sizeof *k);
    if (!k) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating a GPU kernel");
    k->op = op->op;
    xf_status s;
    switch (op->op) {
    case XF_OP_CONV: s = create_conv(st, op, k, err); break;
    case XF_OP_MATMUL: s = create_matmul(st, op, k, err); break;
    case XF_OP_GEMM: s = create_gemm(st, op, k, err); break;
    case XF_OP_ADD:
    case XF_OP_SUB:
    case XF_OP_MUL:
    case XF_OP_SCALAR_MUL: s = cm_cudnn_create_binary(st, op, k, err); break;
    case XF_OP_RELU:
    case XF_OP_SIGMOID:
    case XF_OP_TANH:
    case XF_OP_SQRT: s = cm_cudnn_create_unary(st, op, k, err); break;
    case XF_OP_IDENTITY:
    case XF_OP_DROPOUT:
    case XF_OP_RESHAPE:
    case XF_OP_FLATTEN:
    case XF_OP_SQUEEZE:
    case XF_OP_UNSQUEEZE: s = cm_cudnn_create_copy(st, op, k, err); break;
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL:
    case XF_OP_GLOBAL_AVGPOOL: s = cm_cudnn_create_pool(st, op, k, err); break;
    case XF_OP_SOFTMAX: s = cm_cudnn_create_softmax(st, op, k, err); break;
    case XF_OP_BATCHNORM: s = cm_cudnn_create_batchnorm(st, op, k, err); break;
    case XF_OP_TRANSPOSE: s = cm_cudnn_create_transpose(st, op, k, err); break;
    case XF_OP_CONCAT: s = cm_cudnn_create_concat(st, op, k, err); break;
    default:
        s = XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has no cuDNN/cuBLAS kernel",
                    xf_op_get(op->op)->name);
    }
    if (s) {
        cm_cudnn_kernel_free(k);
        return s;
    }
    *out = k;
    return XF_OK;
}

xf_status cm_cudnn_kernel_run(cx_state *st, const cx_kernel *k, const void *const *in,
                        void *const *out, xf_error *err)
{
    return k->run(st, k, in, out, err);
}

int cm_cudnn_kernel_launches(const cx_kernel *k)
{
    return k->launches;
}

void cm_cudnn_kernel_free(cx_kernel *k)
{
    if (!k) return;
    for (int i = 0; i < k->n_desc; i++) CX(cudnnDestroyTensorDescriptor)(k->desc[i]);
    for (int i = 0; k->parts && i < 2 * k->n_parts; i++)
        if (k->parts[i]) CX(cudnnDestroyTensorDescriptor)(k->parts[i]);
    if (k->filter) CX(cudnnDestroyFilterDescriptor)(k->filter);
    if (k->conv) CX(cudnnDestroyConvolutionDescriptor)(k->conv);
    if (k->act) CX(cudnnDestroyActivationDescriptor)(k->act);
    if (k->pool) CX(cudnnDestroyPoolingDescriptor)(k->pool);
    if (k->optensor) CX(cudnnDestroyOpTensorDescriptor)(k->optensor);
    xf_free(k->parts);
    xf_free(k->offsets);
    xf_free(k);
}
