/*
 * cudnn_kernel_misc.c — the lighter cuDNN kernels: element-wise binary ops
 * (cudnnOpTensor; the second operand may broadcast, so a broadcast first
 * operand is swapped to second), activations and sqrt, device copies for
 * view-like ops, pooling (symmetric pads, floor mode), softmax along one
 * axis (as channels of [outer, n, inner, 1]), inference batch-norm, and
 * transpose and concat as strided cudnnTransformTensor copies.
 */
#include "cudnn_internal.h"

#include <stdlib.h>
#include <string.h>

/* dims of s right-aligned to `rank` dims, leading 1s */
static void align(const xf_shape *s, int rank, int64_t *dims)
{
    for (int i = 0; i < rank; i++) dims[i] = 1;
    for (int i = 0; i < s->rank; i++) dims[rank - s->rank + i] = s->dims[i];
}

/* 1 when every dim of `small` equals the output's or is 1 */
static int broadcasts_to(const int64_t *small, const int64_t *full, int rank)
{
    for (int i = 0; i < rank; i++)
        if (small[i] != full[i] && small[i] != 1) return 0;
    return 1;
}

static int same_dims(const int64_t *a, const int64_t *b, int rank)
{
    return memcmp(a, b, (size_t)rank * sizeof *a) == 0;
}

/* --------------------------------------------------------- binary ops */

static xf_status run_binary(cx_state *st, const cx_kernel *k, const void *const *in,
                            void *const *out, xf_error *err)
{
    const float zero = 0.0f;
    const void *a = k->swap ? in[1] : in[0], *b = k->swap ? in[0] : in[1];
    return cm_cudnn_cudnn(CX(cudnnOpTensor)(st->cudnn, k->optensor, &k->alpha1, k->desc[0], a, &k->alpha2,
                                  k->desc[1], b, &zero, k->desc[2], out[0]),
                    err, "cudnnOpTensor");
}

static xf_status make_optensor(cx_kernel *k, cudnnOpTensorOp_t op, xf_error *err)
{
    xf_status s = cm_cudnn_cudnn(CX(cudnnCreateOpTensorDescriptor)(&k->optensor), err,
                           "creating an op-tensor descriptor");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetOpTensorDescriptor)(k->optensor, op, CUDNN_DATA_FLOAT,
                                                CUDNN_PROPAGATE_NAN),
                     err, "describing an op-tensor");
    return s;
}

xf_status cm_cudnn_create_binary(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_shape *y = &op->out_shapes[0];
    int rank = y->rank;
    int64_t da[XF_MAX_DIMS], db[XF_MAX_DIMS];
    if (!cm_cudnn_all_f32(op) || rank > 5)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "element-wise op: only float, rank <= 5");
    align(&op->in_shapes[0], rank, da);
    align(&op->in_shapes[1], rank, db);
    if (same_dims(da, y->dims, rank) && broadcasts_to(db, y->dims, rank))
        k->swap = 0;
    else if (same_dims(db, y->dims, rank) && broadcasts_to(da, y->dims, rank))
        k->swap = 1;
    else
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "element-wise op: both operands broadcast");
    /* first operand (after the swap) has the output's shape */
    k->alpha1 = k->alpha2 = 1.0f;
    if (op->op == XF_OP_SUB) { /* a - b as a + (-1) b, signs follow the swap */
        if (k->swap) k->alpha1 = -1.0f;
        else k->alpha2 = -1.0f;
    }
    cudnnTensorDescriptor_t d0, d1, d2;
    xf_status s = cm_cudnn_desc(k, rank, k->swap ? db : da, NULL, &d0, err);
    if (!s) s = cm_cudnn_desc(k, rank, k->swap ? da : db, NULL, &d1, err);
    if (!s) s = cm_cudnn_desc(k, rank, y->dims, NULL, &d2, err);
    if (!s)
        s = make_optensor(k, op->op == XF_OP_ADD || op->op == XF_OP_SUB ? CUDNN_OP_TENSOR_ADD
                                                                        : CUDNN_OP_TENSOR_MUL,
                          err);
    if (s) return s;
    k->launches = 1;
    k->run = run_binary;
    return XF_OK;
}

/* ------------------------------------------------- unary ops and copies */

static xf_status run_activation(cx_state *st, const cx_kernel *k, const void *const *in,
                                void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnActivationForward)(st->cudnn, k->act, &one, k->desc[0], in[0], &zero,
                                           k->desc[0], out[0]),
                    err, "cudnnActivationForward");
}

static xf_status run_sqrt(cx_state *st, const cx_kernel *k, const void *const *in,
                          void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnOpTensor)(st->cudnn, k->optensor, &one, k->desc[0], in[0], &one,
                                  k->desc[0], in[0], &zero, k->desc[0], out[0]),
                    err, "CX(cudnnOpTensor)(sqrt)");
}

xf_status cm_cudnn_create_unary(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_shape *x = &op->in_shapes[0];
    int64_t n = xf_shape_numel(x);
    int64_t flat[1] = {n};
    if (!cm_cudnn_all_f32(op))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "unary op: only float on the GPU");
    cudnnTensorDescriptor_t d;
    xf_status s = cm_cudnn_desc(k, 1, flat, NULL, &d, err);
    if (s) return s;
    k->launches = 1;
    if (op->op == XF_OP_SQRT) {
        k->run = run_sqrt;
        return make_optensor(k, CUDNN_OP_TENSOR_SQRT, err);
    }
    cudnnActivationMode_t mode = op->op == XF_OP_RELU      ? CUDNN_ACTIVATION_RELU
                                 : op->op == XF_OP_SIGMOID ? CUDNN_ACTIVATION_SIGMOID
                                                           : CUDNN_ACTIVATION_TANH;
    s = cm_cudnn_cudnn(CX(cudnnCreateActivationDescriptor)(&k->act), err, "creating an activation");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetActivationDescriptor)(k->act, mode, CUDNN_PROPAGATE_NAN, 0.0), err,
                     "describing an activation");
    k->run = run_activation;
    return s;
}

static xf_status run_copy(cx_state *st, const cx_kernel *k, const void *const *in,
                          void *const *out, xf_error *err)
{
    (void)st;
    return cm_cudnn_cuda(CX(cudaMemcpyAsync)(out[0], in[0], k->bytes, cudaMemcpyDeviceToDevice, 0), err,
                   "copying on the GPU");
}

xf_status cm_cudnn_create_copy(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    if (op->n_outputs != 1)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "dropout with a mask output runs on the host");
    k->bytes = (size_t)xf_shape_numel(&op->out_shapes[0]) * xf_dtype_size(op->out_dtypes[0]);
    k->launches = 1;
    k->run = run_copy;
    return XF_OK;
}

/* ------------------------------------------------------------- pooling */

static xf_status run_pool(cx_state *st, const cx_kernel *k, const void *const *in,
                          void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnPoolingForward)(st->cudnn, k->pool, &one, k->desc[0], in[0], &zero,
                                        k->desc[1], out[0]),
                    err, "cudnnPoolingForward");
}

xf_status cm_cudnn_create_pool(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_params *p = op->params;
    const xf_shape *x = &op->in_shapes[0];
    if (!cm_cudnn_all_f32(op) || x->rank != 4)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pooling: only 4-D float on the GPU");
    int win[2], pad[2] = {0, 0}, str[2] = {1, 1};
    cudnnPoolingMode_t mode = CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    if (op->op == XF_OP_GLOBAL_AVGPOOL) {
        if (x->dims[2] > 65535 || x->dims[3] > 65535)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pooling: window too large");
        win[0] = (int)x->dims[2], win[1] = (int)x->dims[3];
    } else {
        if (p->ceil_mode || p->pads[0] != p->pads[2] || p->pads[1] != p->pads[3] ||
            p->dilation[0] > 1 || p->dilation[1] > 1)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "pooling: ceil mode, dilation and asymmetric pads run on the host");
        win[0] = p->kernel[0], win[1] = p->kernel[1];
        pad[0] = p->pads[0], pad[1] = p->pads[1];
        str[0] = p->stride[0] ? p->stride[0] : 1, str[1] = p->stride[1] ? p->stride[1] : 1;
        if (op->op == XF_OP_MAXPOOL) mode = CUDNN_POOLING_MAX_DETERMINISTIC;
        else if (p->count_include_pad) mode = CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    }
    cudnnTensorDescriptor_t xd, yd;
    xf_status s = cm_cudnn_desc(k, 4, x->dims, NULL, &xd, err);
    if (!s) s = cm_cudnn_desc(k, 4, op->out_shapes[0].dims, NULL, &yd, err);
    if (!s) s = cm_cudnn_cudnn(CX(cudnnCreatePoolingDescriptor)(&k->pool), err, "creating a pooling");
    if (!s)
        s = cm_cudnn_cudnn(CX(cudnnSetPoolingNdDescriptor)(k->pool, mode, CUDNN_PROPAGATE_NAN, 2, win, pad,
                                                 str),
                     err, "describing the pooling");
    if (s) return s;
    k->launches = 1;
    k->run = run_pool;
    return XF_OK;
}

/* ------------------------------------------------------------- softmax */

static xf_status run_softmax(cx_state *st, const cx_kernel *k, const void *const *in,
                             void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnSoftmaxForward)(st->cudnn, CUDNN_SOFTMAX_ACCURATE,
                                        CUDNN_SOFTMAX_MODE_CHANNEL, &one, k->desc[0], in[0], &zero,
                                        k->desc[0], out[0]),
                    err, "cudnnSoftmaxForward");
}

xf_status cm_cudnn_create_softmax(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_shape *x = &op->in_shapes[0];
    int axis = op->params->axis < 0 ? op->params->axis + x->rank : op->params->axis;
    if (!cm_cudnn_all_f32(op) || axis < 0 || axis >= x->rank)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "softmax: only float on the GPU");
    int64_t d[4] = {1, x->dims[axis], 1, 1};
    for (int i = 0; i < axis; i++) d[0] *= x->dims[i];
    for (int i = axis + 1; i < x->rank; i++) d[2] *= x->dims[i];
    cudnnTensorDescriptor_t xd;
    xf_status s = cm_cudnn_desc(k, 4, d, NULL, &xd, err);
    if (s) return s;
    k->launches = 1;
    k->run = run_softmax;
    return XF_OK;
}

/* ----------------------------------------------------------- batchnorm */

static xf_status run_batchnorm(cx_state *st, const cx_kernel *k, const void *const *in,
                               void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnBatchNormalizationForwardInference)(
                        st->cudnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, k->desc[0], in[0],
                        k->desc[0], out[0], k->desc[1], in[1], in[2], in[3], in[4], k->epsilon),
                    err, "cudnnBatchNormalizationForwardInference");
}

xf_status cm_cudnn_create_batchnorm(cx_state *st, const xf_backend_op *op, cx_kernel *k,
                              xf_error *err)
{
    (void)st;
    const xf_shape *x = &op->in_shapes[0];
    if (!cm_cudnn_all_f32(op) || x->rank < 2 || x->rank > 4 ||
        op->params->epsilon < CUDNN_BN_MIN_EPSILON)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "batchnorm: only 2-D to 4-D float on the GPU");
    int64_t d[4] = {x->dims[0], x->dims[1], 1, 1}, c[4] = {1, x->dims[1], 1, 1};
    for (int i = 2; i < x->rank; i++) d[i] = x->dims[i];
    cudnnTensorDescriptor_t xd, cd;
    xf_status s = cm_cudnn_desc(k, 4, d, NULL, &xd, err);
    if (!s) s = cm_cudnn_desc(k, 4, c, NULL, &cd, err);
    if (s) return s;
    k->epsilon = op->params->epsilon;
    k->launches = 1;
    k->run = run_batchnorm;
    return XF_OK;
}

/* ----------------------------------------------- transpose and concat */

static xf_status run_transform(cx_state *st, const cx_kernel *k, const void *const *in,
                               void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    return cm_cudnn_cudnn(CX(cudnnTransformTensor)(st->cudnn, &one, k->desc[0], in[0], &zero, k->desc[1],
                                         out[0]),
                    err, "cudnnTransformTensor");
}

xf_status cm_cudnn_create_transpose(cx_state *st, const xf_backend_op *op, cx_kernel *k,
                              xf_error *err)
{
    (void)st;
    const xf_shape *x = &op->in_shapes[0], *y = &op->out_shapes[0];
    if (!cm_cudnn_all_f32(op))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "transpose: only float on the GPU");
    int64_t xs[XF_MAX_DIMS], src_strides[XF_MAX_DIMS];
    xf_shape_strides(x, xs);
    for (int i = 0; i < y->rank; i++) {
        int64_t a = op->params->n_axes ? op->params->axes[i] : y->rank - 1 - i;
        if (a < 0) a += x->rank;
        src_strides[i] = xs[a]; /* output dim i walks input dim perm[i] */
    }
    cudnnTensorDescriptor_t sd, dd;
    xf_status s = cm_cudnn_desc(k, y->rank, y->dims, src_strides, &sd, err);
    if (!s) s = cm_cudnn_desc(k, y->rank, y->dims, NULL, &dd, err);
    if (s) return s;
    k->launches = 1;
    k->run = run_transform;
    return XF_OK;
}

static xf_status run_concat(cx_state *st, const cx_kernel *k, const void *const *in,
                            void *const *out, xf_error *err)
{
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < k->n_parts; i++) {
        xf_status s = cm_cudnn_cudnn(CX(cudnnTransformTensor)(st->cudnn, &one, k->parts[2 * i], in[i], &zero,
                                                    k->parts[2 * i + 1],
                                                    (float *)out[0] + k->offsets[i]),
                               err, "CX(cudnnTransformTensor)(concat)");
        if (s) return s;
    }
    return XF_OK;
}

xf_status cm_cudnn_create_concat(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err)
{
    (void)st;
    const xf_shape *y = &op->out_shapes[0];
    int axis = op->params->axis < 0 ? op->params->axis + y->rank : op->params->axis;
    if (!cm_cudnn_all_f32(op) || axis < 0 || axis >= y->rank)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "concat: only float on the GPU");
    int64_t ys[XF_MAX_DIMS];
    xf_shape_strides(y, ys);
    k->n_parts = op->n_inputs;
    k->parts = xf_calloc((size_t)(2 * op->n_inputs), sizeof *k->parts);
    k->offsets = xf_calloc((size_t)op->n_inputs, sizeof *k->offsets);
    if (!k->parts || !k->offsets)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating a concat kernel");
    int64_t at = 0;
    for (int i = 0; i < op->n_inputs; i++) {
        const xf_shape *x = &op->in_shapes[i];
        /* borrow cm_cudnn_desc through a scratch kernel so the pair is owned here */
        cx_kernel tmp;
        memset(&tmp, 0, sizeof tmp);
        xf_status s = cm_cudnn_desc(&tmp, x->rank, x->dims, NULL, &k->parts[2 * i], err);
        if (!s) s = cm_cudnn_desc(&tmp, x->rank, x->dims, ys, &k->parts[2 * i + 1], err);
        if (s) {
            for (int d = 0; d < tmp.n_desc; d++) CX(cudnnDestroyTensorDescriptor)(tmp.desc[d]);
            k->parts[2 * i] = k->parts[2 * i + 1] = NULL;
            return s;
        }
        k->offsets[i] = (size_t)(at * ys[axis]);
        at += x->dims[axis];
    }
    k->launches = op->n_inputs;
    k->run = run_concat;
    return XF_OK;
}
