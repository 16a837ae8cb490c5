/*
 * onednn_pool.c — pooling and mean reductions on oneDNN.
 *
 * maxpool/avgpool use pooling_v2 (dilation counted from 0). ONNX's
 * ceil_mode is expressed by the end padding: oneDNN always rounds down, so
 * the end pad is chosen to give exactly the output extent shape inference
 * computed. avgpool excluding padding divides by the in-range taps, as the
 * reference does; including padding oneDNN divides by the full kernel,
 * which matches the reference only while no window reaches beyond the
 * explicit end pad — otherwise (ceil_mode overhang) the reference kernel
 * runs. global_avgpool is an average pooling over the whole spatial
 * extent (keeps a blocked layout), reduce_mean the reduction primitive.
 */
#include "onednn_internal.h"

static int64_t or_one(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* End padding that makes floor((in + p0 + p1 - span) / s) + 1 == out. */
static int64_t end_pad(int64_t in, int64_t out, int64_t span, int64_t s, int64_t p0)
{
    int64_t p1 = (out - 1) * s + span - in - p0;
    return p1 < 0 ? 0 : p1;
}

/* Pooling of input 0 into output 0 with the given geometry (2 or 3 spatial
 * dims), in the layout the input arrives in. */
static xf_status pooling(ox_kernel *k, dnnl_alg_kind_t alg, const dnnl_dims_t kernel,
                         const dnnl_dims_t strides, const dnnl_dims_t dil,
                         const dnnl_dims_t pad_l, const dnnl_dims_t pad_r, xf_error *err)
{
    const dnnl_memory_desc_t *g = cm_onednn_input_md(k, 0);
    dnnl_memory_desc_t src, dst;
    if (g) src = *g;
    else cm_onednn_md_plain(&src, &k->in[0].shape);
    const xf_shape *y = &k->out_sh[0];
    cm_onednn_md_any(&dst, y);
    dnnl_pooling_v2_desc_t pdsc;
    OX_TRY(dnnl_pooling_v2_forward_desc_init(&pdsc, dnnl_forward_inference, alg, &src, &dst,
                                             strides, kernel, dil, pad_l, pad_r),
           err, "onednn: pooling");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &pdsc, NULL, &pd, err);
    if (s != XF_OK) return s;
    return cm_onednn_add_src_dst_step(k, pd, err);
}

xf_status cm_onednn_build_pool(ox_kernel *k, xf_error *err)
{
    const xf_params *p = &k->params;
    const xf_shape *x = &k->in[0].shape, *y = &k->out_sh[0];
    int is_max = k->op == XF_OP_MAXPOOL;
    int64_t kh = p->kernel[0], kw = p->kernel[1];
    int64_t sh = or_one(p->stride[0]), sw = or_one(p->stride[1]);
    int64_t dh = is_max ? or_one(p->dilation[0]) : 1, dw = is_max ? or_one(p->dilation[1]) : 1;
    int64_t pb = end_pad(x->dims[2], y->dims[2], (kh - 1) * dh + 1, sh, p->pads[0]);
    int64_t pr = end_pad(x->dims[3], y->dims[3], (kw - 1) * dw + 1, sw, p->pads[1]);
    dnnl_alg_kind_t alg = dnnl_pooling_max;
    if (!is_max) {
        if (p->count_include_pad && (pb > p->pads[2] || pr > p->pads[3]))
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "onednn: avgpool counting padding with ceil_mode overhang");
        alg = p->count_include_pad ? dnnl_pooling_avg_include_padding
                                   : dnnl_pooling_avg_exclude_padding;
    }
    dnnl_dims_t kernel = {kh, kw}, strides = {sh, sw}, dil = {dh - 1, dw - 1};
    dnnl_dims_t pad_l = {p->pads[0], p->pads[1]}, pad_r = {pb, pr};
    return pooling(k, alg, kernel, strides, dil, pad_l, pad_r, err);
}

static xf_status reduce_mean(ox_kernel *k, const int *reduced, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape;
    int64_t kd[XF_MAX_DIMS];
    for (int i = 0; i < x->rank; i++) kd[i] = reduced[i] ? 1 : x->dims[i];
    dnnl_memory_desc_t src, dst, out;
    cm_onednn_md_plain(&src, x);
    cm_onednn_md_plain_dims(&dst, x->rank, kd);
    cm_onednn_md_plain(&out, &k->out_sh[0]);
    dnnl_reduction_desc_t rd;
    OX_TRY(dnnl_reduction_desc_init(&rd, dnnl_reduction_mean, &src, &dst, 0.0f, 0.0f), err,
           "onednn: reduce_mean");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &rd, NULL, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t sm, dm;
    s = cm_onednn_input_view(k, 0, &src, &sm, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out, &dst, &dm, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, dm}};
    return cm_onednn_add_step(k, pd, 2, args, err);
}

xf_status cm_onednn_build_global_pool(ox_kernel *k, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape;
    int nsp = x->rank - 2;
    if (nsp >= 1 && nsp <= 3) {
        dnnl_dims_t kernel, strides, dil, pad;
        for (int i = 0; i < nsp; i++) {
            kernel[i] = x->dims[2 + i];
            strides[i] = 1;
            dil[i] = 0;
            pad[i] = 0;
        }
        return pooling(k, dnnl_pooling_avg_exclude_padding, kernel, strides, dil, pad, pad, err);
    }
    int reduced[XF_MAX_DIMS] = {0};
    for (int i = 2; i < x->rank; i++) reduced[i] = 1;
    return reduce_mean(k, reduced, err);
}

xf_status cm_onednn_build_reduce_mean(ox_kernel *k, xf_error *err)
{
    const xf_params *p = &k->params;
    const xf_shape *x = &k->in[0].shape;
    int reduced[XF_MAX_DIMS];
    if (xf_reduce_axes(p, x->rank, reduced) < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "onednn: reduce_mean axes do not fit the input");
    if (x->rank == 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: reduce_mean of a scalar");
    return reduce_mean(k, reduced, err);
}
