/*
 * onednn_dispatch.c — which operators run on oneDNN primitives, and the
 * checks every native builder relies on: oneDNN computes in f32 here (it
 * has no 64-bit integer type), so arithmetic ops with any non-f32 operand,
 * and tensors with no elements, go to the reference kernel. The view ops
 * (reshape and friends) move no data and accept any dtype.
 */
#include "onednn_internal.h"

static int all_f32_nonempty(const ox_kernel *k)
{
    for (int i = 0; i < k->n_in; i++) {
        if (k->in[i].dtype == XF_DTYPE_INVALID) continue;
        if (k->in[i].dtype != XF_F32 || xf_shape_numel(&k->in[i].shape) == 0) return 0;
    }
    for (int j = 0; j < k->n_out; j++)
        if (k->out_dt[j] != XF_F32 || xf_shape_numel(&k->out_sh[j]) == 0) return 0;
    return 1;
}

static xf_status dispatch(ox_kernel *k, xf_error *err)
{
    if (xf_op_is(k->op, XF_OPC_VIEW)) return cm_onednn_build_view(k, err);
    if (!all_f32_nonempty(k))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "onednn: %s runs on the reference kernel (non-f32 or empty tensor)",
                       xf_op_get(k->op)->name);
    switch (k->op) {
    case XF_OP_CONV: return cm_onednn_build_conv(k, err);
    case XF_OP_MATMUL: return cm_onednn_build_matmul(k, err);
    case XF_OP_GEMM: return cm_onednn_build_gemm(k, err);
    case XF_OP_POW: return cm_onednn_build_pow(k, err);
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL:
        return cm_onednn_build_pool(k, err);
    case XF_OP_GLOBAL_AVGPOOL: return cm_onednn_build_global_pool(k, err);
    case XF_OP_REDUCE_MEAN: return cm_onednn_build_reduce_mean(k, err);
    case XF_OP_SOFTMAX: return cm_onednn_build_softmax(k, err);
    case XF_OP_BATCHNORM: return cm_onednn_build_batchnorm(k, err);
    case XF_OP_LAYERNORM: return cm_onednn_build_layernorm(k, err);
    case XF_OP_CONCAT: return cm_onednn_build_concat(k, err);
    case XF_OP_TRANSPOSE: return cm_onednn_build_transpose(k, err);
    case XF_OP_ERF: return cm_onednn_build_erf(k, err);
    default:
        /* the other element-wise operators: the eltwise primitive (one
         * operand) or the binary one, each refusing what it lacks */
        if (xf_op_is(k->op, XF_OPC_ELEMENTWISE))
            return xf_op_get(k->op)->min_inputs == 1 ? cm_onednn_build_unary(k, err)
                                                     : cm_onednn_build_binary(k, err);
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: no oneDNN kernel for %s",
                       xf_op_get(k->op)->name);
    }
}

xf_status cm_onednn_kernel_build_native(ox_kernel *k, xf_error *err)
{
    cm_onednn_kernel_reset(k);
    xf_status s = dispatch(k, err);
    if (s != XF_OK) cm_onednn_kernel_reset(k);
    return s;
}
