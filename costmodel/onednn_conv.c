/*
 * onednn_conv.c — conv2d on oneDNN's convolution primitive: groups (5-D
 * goihw weights), stride, asymmetric pads, dilation (oneDNN counts it from
 * 0), optional bias, and the fused activation as an eltwise post-op.
 *
 * Source, weights and destination layouts are left to oneDNN (format
 * "any"), so it picks its fastest blocked layouts; the input is reordered
 * when it arrives in another layout, constant weights are reordered once
 * when the kernel is built, and the output stays in the chosen layout for
 * the next kernel. Direct convolution only: Winograd would trade accuracy
 * the 1e-4 agreement with the reference kernel cannot afford.
 */
#include "onednn_internal.h"

static int64_t or_one(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* Post-ops attribute for the fused activation; *attr stays NULL for none. */
static xf_status activation_attr(int act, dnnl_primitive_attr_t *attr, xf_error *err)
{
    *attr = NULL;
    dnnl_alg_kind_t alg;
    switch (act) {
    case XF_ACT_NONE: return XF_OK;
    case XF_ACT_RELU: alg = dnnl_eltwise_relu; break;
    case XF_ACT_SIGMOID: alg = dnnl_eltwise_logistic; break;
    case XF_ACT_TANH: alg = dnnl_eltwise_tanh; break;
    default:
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: conv activation %d has no post-op", act);
    }
    dnnl_post_ops_t po = NULL;
    dnnl_status_t ds = dnnl_post_ops_create(&po);
    if (ds == dnnl_success) ds = dnnl_post_ops_append_eltwise(po, 1.0f, alg, 0.0f, 0.0f);
    if (ds == dnnl_success) ds = dnnl_primitive_attr_create(attr);
    if (ds == dnnl_success) ds = dnnl_primitive_attr_set_post_ops(*attr, po);
    if (po) dnnl_post_ops_destroy(po);
    if (ds != dnnl_success && *attr) {
        dnnl_primitive_attr_destroy(*attr);
        *attr = NULL;
    }
    return cm_onednn_check(ds, err, "onednn: conv2d activation post-op");
}

xf_status cm_onednn_build_conv(ox_kernel *k, xf_error *err)
{
    const xf_params *p = &k->params;
    const xf_shape *x = &k->in[0].shape, *w = &k->in[1].shape, *y = &k->out_sh[0];
    int has_b = k->n_in > 2 && k->in[2].dtype != XF_DTYPE_INVALID;
    int64_t g = or_one(p->group);
    int64_t m = w->dims[0], cg = w->dims[1], kh = w->dims[2], kw = w->dims[3];
    dnnl_memory_desc_t src_any, dst_any, w_any, w_plain, b_md;
    dnnl_dims_t wd;
    int wnd = g == 1 ? 4 : 5;
    if (g == 1) {
        wd[0] = m, wd[1] = cg, wd[2] = kh, wd[3] = kw;
    } else {
        wd[0] = g, wd[1] = m / g, wd[2] = cg, wd[3] = kh, wd[4] = kw;
    }
    cm_onednn_md_any(&src_any, x);
    cm_onednn_md_any(&dst_any, y);
    OX_TRY(dnnl_memory_desc_init_by_tag(&w_any, wnd, wd, dnnl_f32, dnnl_format_tag_any), err,
           "onednn: conv2d weights");
    cm_onednn_md_plain_dims(&w_plain, wnd, wd);
    if (has_b) cm_onednn_md_plain(&b_md, &k->in[2].shape);
    dnnl_dims_t strides = {or_one(p->stride[0]), or_one(p->stride[1])};
    dnnl_dims_t dil = {or_one(p->dilation[0]) - 1, or_one(p->dilation[1]) - 1};
    dnnl_dims_t pad_l = {p->pads[0], p->pads[1]}, pad_r = {p->pads[2], p->pads[3]};
    dnnl_convolution_desc_t cd;
    OX_TRY(dnnl_dilated_convolution_forward_desc_init(
               &cd, dnnl_forward_inference, dnnl_convolution_direct, &src_any, &w_any,
               has_b ? &b_md : NULL, &dst_any, strides, dil, pad_l, pad_r),
           err, "onednn: conv2d");
    dnnl_primitive_attr_t attr;
    xf_status s = activation_attr(p->activation, &attr, err);
    if (s != XF_OK) return s;
    dnnl_primitive_desc_t pd;
    s = cm_onednn_make_pd(k, &cd, attr, &pd, err);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (s != XF_OK) return s;
    dnnl_memory_t src, wts, bias = NULL, dst;
    s = cm_onednn_input_layout(k, 0, cm_onednn_pd_md(pd, dnnl_query_src_md, 0), &src, err);
    if (s == XF_OK)
        s = cm_onednn_input_relayout(k, 1, &w_plain, cm_onednn_pd_md(pd, dnnl_query_weights_md, 0), &wts, err);
    if (s == XF_OK && has_b)
        s = cm_onednn_input_layout(k, 2, cm_onednn_pd_md(pd, dnnl_query_weights_md, 1), &bias, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, cm_onednn_pd_md(pd, dnnl_query_dst_md, 0), NULL, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst},
                               {DNNL_ARG_BIAS, bias}};
    return cm_onednn_add_step(k, pd, has_b ? 4 : 3, args, err);
}
