/*
 * onednn_eltwise.c — element-wise operators on oneDNN.
 *
 * Unary ops use the eltwise primitive in whatever layout their input comes
 * in (blocked after a convolution is fine): relu, logistic, tanh, gelu_erf,
 * sqrt, exp, log, abs, neg as linear(-1, 0) and reciprocal as pow(1, -1).
 * erf has no oneDNN algorithm: the backend's own loop (onednn_erf.c).
 * Binary ops (add, sub, mul, div, scalar_mul) use the binary primitive,
 * which broadcasts its second source only: the operand with the output's
 * shape becomes source 0 (swapping the operands of add/mul when needed);
 * when neither has it (both broadcast) the reference kernel runs instead.
 * pow with a one-element exponent is eltwise pow(1, e); oneDNN bakes e into
 * the kernel, so the exponent must be a constant (a measurement uses 2,
 * the exponent real models square with).
 */
#include "onednn_internal.h"

/* Layout to run an element-wise op in: the input's own, or plain. */
static dnnl_memory_desc_t data_md(const ox_kernel *k, int i)
{
    const dnnl_memory_desc_t *g = cm_onednn_input_md(k, i);
    dnnl_memory_desc_t md;
    if (g) md = *g;
    else cm_onednn_md_plain(&md, &k->in[i].shape);
    return md;
}

static xf_status eltwise(ox_kernel *k, dnnl_alg_kind_t alg, float alpha, float beta,
                         xf_error *err)
{
    dnnl_memory_desc_t md = data_md(k, 0);
    dnnl_eltwise_desc_t ed;
    OX_TRY(dnnl_eltwise_forward_desc_init(&ed, dnnl_forward_inference, alg, &md, alpha, beta),
           err, "onednn: eltwise");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &ed, NULL, &pd, err);
    if (s != XF_OK) return s;
    return cm_onednn_add_src_dst_step(k, pd, err);
}

xf_status cm_onednn_build_unary(ox_kernel *k, xf_error *err)
{
    switch (k->op) {
    case XF_OP_RELU: return eltwise(k, dnnl_eltwise_relu, 0.0f, 0.0f, err);
    case XF_OP_SIGMOID: return eltwise(k, dnnl_eltwise_logistic, 0.0f, 0.0f, err);
    case XF_OP_TANH: return eltwise(k, dnnl_eltwise_tanh, 0.0f, 0.0f, err);
    case XF_OP_GELU: return eltwise(k, dnnl_eltwise_gelu_erf, 0.0f, 0.0f, err);
    case XF_OP_SQRT: return eltwise(k, dnnl_eltwise_sqrt, 0.0f, 0.0f, err);
    case XF_OP_EXP: return eltwise(k, dnnl_eltwise_exp, 0.0f, 0.0f, err);
    case XF_OP_LOG: return eltwise(k, dnnl_eltwise_log, 0.0f, 0.0f, err);
    case XF_OP_ABS: return eltwise(k, dnnl_eltwise_abs, 0.0f, 0.0f, err);
    case XF_OP_NEG: return eltwise(k, dnnl_eltwise_linear, -1.0f, 0.0f, err);
    case XF_OP_RECIPROCAL: return eltwise(k, dnnl_eltwise_pow, 1.0f, -1.0f, err);
    default:
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: no oneDNN kernel for %s",
                       xf_op_get(k->op)->name);
    }
}

xf_status cm_onednn_build_pow(ox_kernel *k, xf_error *err)
{
    const ox_io *e = &k->in[1];
    if (xf_shape_numel(&e->shape) != 1 || (!e->data && !k->measuring))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "onednn: pow needs a constant one-element exponent");
    float ex = e->data ? *(const float *)e->data : 2.0f;
    return eltwise(k, dnnl_eltwise_pow, 1.0f, ex, err);
}

/* Dims of shape s right-aligned to rank r (leading 1s). */
static void pad_dims(const xf_shape *s, int r, int64_t *d)
{
    for (int i = 0; i < r; i++) {
        int j = i - (r - s->rank);
        d[i] = j >= 0 ? s->dims[j] : 1;
    }
}

/* One attempt at the binary primitive; `keep_layout` lets source 0 stay in
 * the (possibly blocked) layout it arrives in. */
static xf_status binary(ox_kernel *k, dnnl_alg_kind_t alg, int i0, int i1, int keep_layout,
                        xf_error *err)
{
    const xf_shape *o = &k->out_sh[0];
    int r = o->rank ? o->rank : 1;
    int64_t d0[XF_MAX_DIMS], d1[XF_MAX_DIMS];
    pad_dims(&k->in[i0].shape, r, d0);
    pad_dims(&k->in[i1].shape, r, d1);
    const dnnl_memory_desc_t *g0 = cm_onednn_input_md(k, i0);
    int blocked0 = keep_layout && g0 && !cm_onednn_md_is_plain(g0) && k->in[i0].shape.rank == r;
    dnnl_memory_desc_t m0, m1, v1;
    if (blocked0) m0 = *g0;
    else cm_onednn_md_plain_dims(&m0, r, d0);
    int same = 1;
    for (int i = 0; i < r; i++) same &= d0[i] == d1[i];
    cm_onednn_md_plain_dims(&v1, r, d1);
    m1 = same && k->in[i1].shape.rank == r ? m0 : v1;
    dnnl_binary_desc_t bd;
    OX_TRY(dnnl_binary_desc_init(&bd, alg, &m0, &m1, &m0), err, "onednn: binary");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &bd, NULL, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t src0, src1, dst;
    dnnl_memory_desc_t out_layout;
    if (blocked0) out_layout = m0;
    else cm_onednn_md_plain(&out_layout, o);
    if (blocked0) s = cm_onednn_input_layout(k, i0, &m0, &src0, err);
    else s = cm_onednn_input_view(k, i0, &m0, &src0, err);
    if (s == XF_OK && blocked0 && same && k->in[i1].shape.rank == r)
        s = cm_onednn_input_layout(k, i1, &m1, &src1, err);
    else if (s == XF_OK) s = cm_onednn_input_view(k, i1, &v1, &src1, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out_layout, &m0, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, src1}, {DNNL_ARG_DST, dst}};
    return cm_onednn_add_step(k, pd, 3, args, err);
}

xf_status cm_onednn_build_binary(ox_kernel *k, xf_error *err)
{
    dnnl_alg_kind_t alg;
    int commutative = 1;
    switch (k->op) {
    case XF_OP_ADD: alg = dnnl_binary_add; break;
    case XF_OP_SUB: alg = dnnl_binary_sub, commutative = 0; break;
    case XF_OP_MUL:
    case XF_OP_SCALAR_MUL: alg = dnnl_binary_mul; break;
    case XF_OP_DIV: alg = dnnl_binary_div, commutative = 0; break;
    default:
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: no oneDNN kernel for %s",
                       xf_op_get(k->op)->name);
    }
    const xf_shape *o = &k->out_sh[0];
    int i0, i1;
    if (xf_shape_numel(&k->in[0].shape) == xf_shape_numel(o)) i0 = 0, i1 = 1;
    else if (commutative && xf_shape_numel(&k->in[1].shape) == xf_shape_numel(o)) i0 = 1, i1 = 0;
    else
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "onednn: %s broadcasts its first operand, which oneDNN's binary cannot",
                       xf_op_get(k->op)->name);
    xf_status s = binary(k, alg, i0, i1, 1, err);
    if (s == XF_ERR_UNSUPPORTED) {
        /* Perhaps only the blocked layout was refused: retry all plain. */
        cm_onednn_kernel_reset(k);
        s = binary(k, alg, i0, i1, 0, err);
    }
    return s;
}
