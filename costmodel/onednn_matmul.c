/*
 * onednn_matmul.c — matmul and gemm on oneDNN's matmul primitive.
 *
 * matmul: numpy semantics. 1-D operands are promoted ([K] -> [1,K] on the
 * left, [K,1] on the right), both operands are viewed with the same rank
 * (leading 1s), and oneDNN broadcasts batch dims of size 1 on either side.
 * gemm: Y = alpha*op(A)*op(B) + beta*C with the transposes expressed as
 * strides (no copy). C joins as the primitive's bias when alpha = beta = 1;
 * otherwise the product is scaled by alpha/beta (output scale), C added
 * (binary post-op, broadcast) and the sum scaled by beta (linear post-op),
 * which equals alpha*AB + beta*C.
 */
#include "onednn_internal.h"

static xf_status run_pd(ox_kernel *k, const dnnl_matmul_desc_t *md, dnnl_primitive_attr_t attr,
                        dnnl_primitive_desc_t *pd, xf_error *err)
{
    xf_status s = cm_onednn_make_pd(k, md, attr, pd, err);
    if (attr) dnnl_primitive_attr_destroy(attr);
    return s;
}

xf_status cm_onednn_build_matmul(ox_kernel *k, xf_error *err)
{
    xf_shape a = k->in[0].shape, b = k->in[1].shape;
    if (a.rank == 1) {
        int64_t d[2] = {1, a.dims[0]};
        a = xf_shape_make(2, d);
    }
    if (b.rank == 1) {
        int64_t d[2] = {b.dims[0], 1};
        b = xf_shape_make(2, d);
    }
    int r = a.rank > b.rank ? a.rank : b.rank;
    int64_t ad[XF_MAX_DIMS], bd[XF_MAX_DIMS], yd[XF_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a.rank), ib = i - (r - b.rank);
        ad[i] = ia >= 0 ? a.dims[ia] : 1;
        bd[i] = ib >= 0 ? b.dims[ib] : 1;
        yd[i] = ad[i] > bd[i] ? ad[i] : bd[i];
        if (i < r - 2 && ad[i] != bd[i] && ad[i] != 1 && bd[i] != 1)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: matmul batch dims do not broadcast");
    }
    yd[r - 2] = ad[r - 2];
    yd[r - 1] = bd[r - 1];
    dnnl_memory_desc_t av, bv, yv, y_plain;
    cm_onednn_md_plain_dims(&av, r, ad);
    cm_onednn_md_plain_dims(&bv, r, bd);
    cm_onednn_md_plain_dims(&yv, r, yd);
    cm_onednn_md_plain(&y_plain, &k->out_sh[0]);
    dnnl_matmul_desc_t md;
    OX_TRY(dnnl_matmul_desc_init(&md, &av, &bv, NULL, &yv), err, "onednn: matmul");
    dnnl_primitive_desc_t pd;
    xf_status s = run_pd(k, &md, NULL, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t src, wts, dst;
    s = cm_onednn_input_view(k, 0, &av, &src, err);
    if (s == XF_OK) s = cm_onednn_input_view(k, 1, &bv, &wts, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &y_plain, &yv, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst}};
    return cm_onednn_add_step(k, pd, 3, args, err);
}

/* Attributes for alpha*AB + beta*C when C is not the bias: output scale
 * alpha/beta, add C (broadcast), scale by beta (a linear post-op). Only one
 * linear post-op: oneDNN 2.6's JIT matmul gives a second one the first
 * one's alpha. *binary_idx gets the index of the binary add (-1 without C). */
static xf_status gemm_attr(float alpha, float beta, const dnnl_memory_desc_t *c,
                           dnnl_primitive_attr_t *attr, int *binary_idx, xf_error *err)
{
    *attr = NULL;
    *binary_idx = -1;
    float scale = c ? alpha / beta : alpha;
    dnnl_post_ops_t po = NULL;
    dnnl_status_t ds = dnnl_primitive_attr_create(attr);
    if (ds == dnnl_success && scale != 1.0f)
        ds = dnnl_primitive_attr_set_output_scales(*attr, 1, 0, &scale);
    if (ds == dnnl_success && c) {
        ds = dnnl_post_ops_create(&po);
        if (ds == dnnl_success) ds = dnnl_post_ops_append_binary(po, dnnl_binary_add, c);
        *binary_idx = 0;
        if (ds == dnnl_success && beta != 1.0f)
            ds = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, beta, 0.0f);
        if (ds == dnnl_success) ds = dnnl_primitive_attr_set_post_ops(*attr, po);
    }
    if (po) dnnl_post_ops_destroy(po);
    if (ds != dnnl_success && *attr) {
        dnnl_primitive_attr_destroy(*attr);
        *attr = NULL;
    }
    return cm_onednn_check(ds, err, "onednn: gemm attributes");
}

xf_status cm_onednn_build_gemm(ox_kernel *k, xf_error *err)
{
    const xf_params *p = &k->params;
    const xf_shape *ys = &k->out_sh[0];
    int64_t M = ys->dims[0], N = ys->dims[1];
    int64_t K = p->trans_a ? k->in[0].shape.dims[0] : k->in[0].shape.dims[1];
    dnnl_dims_t ad = {M, K}, bd = {K, N}, yd = {M, N};
    dnnl_dims_t as = {p->trans_a ? 1 : K, p->trans_a ? M : 1};
    dnnl_dims_t bs = {p->trans_b ? 1 : N, p->trans_b ? K : 1};
    dnnl_memory_desc_t av, bv, yv, cv;
    OX_TRY(dnnl_memory_desc_init_by_strides(&av, 2, ad, dnnl_f32, as), err, "onednn: gemm A");
    OX_TRY(dnnl_memory_desc_init_by_strides(&bv, 2, bd, dnnl_f32, bs), err, "onednn: gemm B");
    cm_onednn_md_plain_dims(&yv, 2, yd);
    int has_c = k->n_in > 2 && k->in[2].dtype != XF_DTYPE_INVALID && p->beta != 0.0f;
    if (has_c) {
        const xf_shape *c = &k->in[2].shape;
        int64_t cd[2] = {1, 1};
        for (int i = 0; i < c->rank; i++) cd[2 - c->rank + i] = c->dims[i];
        cm_onednn_md_plain_dims(&cv, 2, cd);
    }
    int c_is_bias = has_c && p->alpha == 1.0f && p->beta == 1.0f;
    dnnl_matmul_desc_t md;
    OX_TRY(dnnl_matmul_desc_init(&md, &av, &bv, c_is_bias ? &cv : NULL, &yv), err,
           "onednn: gemm");
    dnnl_primitive_attr_t attr = NULL;
    int bin = -1;
    xf_status s = XF_OK;
    if (!c_is_bias) s = gemm_attr(p->alpha, p->beta, has_c ? &cv : NULL, &attr, &bin, err);
    if (s != XF_OK) return s;
    dnnl_primitive_desc_t pd;
    s = run_pd(k, &md, attr, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t a, b, c = NULL, y;
    s = cm_onednn_input_view(k, 0, &av, &a, err);
    if (s == XF_OK) s = cm_onednn_input_view(k, 1, &bv, &b, err);
    if (s == XF_OK && has_c) s = cm_onednn_input_view(k, 2, &cv, &c, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &yv, NULL, &y, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, y}};
    int n = 3;
    if (c_is_bias) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, c};
    else if (bin >= 0)
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(bin) | DNNL_ARG_SRC_1, c};
    return cm_onednn_add_step(k, pd, n, args, err);
}
