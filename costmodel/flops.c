/*
 * flops.c — floating-point operations and bytes moved by one operator
 * configuration: the two numbers the analytic roofline turns into time, and
 * the columns xfcost prints next to measured times.
 *
 * Conventions (documented in docs/costmodel.md):
 *  - a multiply-add counts 2 flops: matmul 2*M*N*K per batch, conv
 *    2*N*M*OH*OW*(C/group)*kh*kw, plus one flop per output for a bias and for
 *    a fused activation; gemm adds 2*M*N when C is given;
 *  - element-wise ops count a fixed number of flops per output element
 *    (1 for add/mul/relu..., more for transcendental functions, see
 *    unary_flops); normalisations and softmax a fixed number per element;
 *    pooling kh*kw per output; movement, views and generators 0;
 *  - bytes = every input read once plus every output written once, except
 *    views (reshape, flatten, squeeze, unsqueeze, identity, dropout, shape),
 *    which move nothing, and gather/slice, which read only what they output.
 */
#include "costmodel.h"

static double numel(const xf_shape *s)
{
    return (double)xf_shape_numel(s);
}

static double tensor_bytes(xf_dtype t, const xf_shape *s)
{
    return t == XF_DTYPE_INVALID ? 0.0 : numel(s) * (double)xf_dtype_size(t);
}

/* Flops per output element of an element-wise operator (ir's operator
 * classes), counting exp/erf/tanh as a short polynomial evaluation:
 * arithmetic, comparisons, where and the other one-step operators 1;
 * identity, dropout and cast compute nothing. */
static double elementwise_flops(xf_op op)
{
    switch (op) {
    case XF_OP_IDENTITY:
    case XF_OP_DROPOUT:
    case XF_OP_CAST: return 0;
    case XF_OP_CLIP: return 2;
    case XF_OP_HARDSIGMOID: return 4; /* multiply-add, two comparisons */
    case XF_OP_HARDSWISH: return 5;
    case XF_OP_EXP:
    case XF_OP_LOG: return 4;
    case XF_OP_SIGMOID:
    case XF_OP_TANH: return 6;
    case XF_OP_ERF: return 8;
    case XF_OP_POW: return 8;
    case XF_OP_GELU: return 10;
    default: return 1;
    }
}

/* Views and the operators that read only a shape move no bytes. */
static int is_view(xf_op op)
{
    return xf_op_is(op, XF_OPC_VIEW) || xf_op_is(op, XF_OPC_SHAPE);
}

static double op_flops(xf_op op, const xf_params *p, int n_in, const xf_dtype *in_dt,
                       const xf_shape *in_sh, const xf_shape *out_sh)
{
    double out = numel(&out_sh[0]);
    if (xf_op_is(op, XF_OPC_ELEMENTWISE)) return out * elementwise_flops(op);
    switch (op) {
    case XF_OP_MATMUL: {
        /* K is the last dim of A (its only dim when A is a vector) */
        const xf_shape *a = &in_sh[0];
        double k = a->rank >= 1 ? (double)a->dims[a->rank - 1] : 1.0;
        return 2.0 * out * k;
    }
    case XF_OP_GEMM: {
        const xf_shape *a = &in_sh[0];
        double k = (double)(p->trans_a ? a->dims[0] : a->dims[1]);
        double f = 2.0 * out * k;
        if (n_in > 2 && in_dt[2] != XF_DTYPE_INVALID) f += 2.0 * out;
        return f;
    }
    case XF_OP_CONV: {
        const xf_shape *w = &in_sh[1];
        double taps = (double)w->dims[1] * (double)w->dims[2] * (double)w->dims[3];
        double f = 2.0 * out * taps;
        if (n_in > 2 && in_dt[2] != XF_DTYPE_INVALID) f += out;
        if (p->activation != XF_ACT_NONE) f += out;
        return f;
    }
    case XF_OP_BATCHNORM: return 2.0 * out; /* folded into one scale and shift */
    case XF_OP_LAYERNORM: return 8.0 * out; /* mean, variance, normalise, affine */
    case XF_OP_SOFTMAX: return 5.0 * out;   /* max, subtract, exp, sum, divide */
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL: return out * (double)p->kernel[0] * (double)p->kernel[1];
    case XF_OP_GLOBAL_AVGPOOL:
    case XF_OP_REDUCE_MEAN:
    case XF_OP_REDUCE_SUM:
    case XF_OP_REDUCE_MAX: return numel(&in_sh[0]);
    case XF_OP_RESIZE: /* nearest: a copy; linear: a weighted pair per interpolated dim */
        return p->kernel[0] == XF_RESIZE_LINEAR ? 4.0 * out : 0.0;
    case XF_OP_CONV_TRANSPOSE: {
        /* every input element times every tap of its M/group output channels */
        const xf_shape *w = &in_sh[1];
        double f = 2.0 * numel(&in_sh[0]) * (double)w->dims[1] * (double)w->dims[2] *
                   (double)w->dims[3];
        if (n_in > 2 && in_dt[2] != XF_DTYPE_INVALID) f += out;
        return f;
    }
    default: return 0; /* movement, views, generators, opaque */
    }
}

void xf_cost_flops_bytes(xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, int n_outputs,
                         const xf_dtype *out_dtypes, const xf_shape *out_shapes, double *flops,
                         double *bytes)
{
    xf_params def = xf_params_default();
    const xf_params *p = params ? params : &def;
    double out_bytes = 0, in_bytes = 0;
    for (int i = 0; i < n_outputs; i++) out_bytes += tensor_bytes(out_dtypes[i], &out_shapes[i]);
    for (int i = 0; i < n_inputs; i++) in_bytes += tensor_bytes(in_dtypes[i], &in_shapes[i]);

    *flops = n_outputs > 0 ? op_flops(op, p, n_inputs, in_dtypes, in_shapes, out_shapes) : 0.0;
    if (is_view(op))
        *bytes = 0;
    else if (op == XF_OP_GATHER)
        *bytes = 2.0 * out_bytes + tensor_bytes(in_dtypes[1], &in_shapes[1]);
    else if (op == XF_OP_SLICE)
        *bytes = 2.0 * out_bytes;
    else
        *bytes = in_bytes + out_bytes;
}
