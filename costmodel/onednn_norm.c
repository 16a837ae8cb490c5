/*
 * onednn_norm.c — softmax, batch-norm and layer-norm on oneDNN.
 *
 * softmax: softmax_v2 (accurate) along any axis, in the input's layout.
 * batchnorm: inference with the given statistics (use_global_stats) and
 * separate scale and shift tensors; 3-D..5-D inputs keep their layout
 * (blocked after a convolution), others are viewed plain as [N, C, rest].
 * layernorm: oneDNN normalises over the last dim only, so X is viewed as
 * [outer, inner] with inner = the product of dims from the axis on; scale
 * and bias must then hold `inner` values: a smaller constant one that
 * broadcasts is expanded once when the kernel is built, a dynamic one
 * sends the op to the reference kernel.
 */
#include <string.h>

#include "onednn_internal.h"

xf_status cm_onednn_build_softmax(ox_kernel *k, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape;
    if (x->rank == 0) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: softmax of a scalar");
    int axis = k->params.axis < 0 ? k->params.axis + x->rank : k->params.axis;
    const dnnl_memory_desc_t *g = cm_onednn_input_md(k, 0);
    dnnl_memory_desc_t md;
    if (g) md = *g;
    else cm_onednn_md_plain(&md, x);
    dnnl_softmax_v2_desc_t sd;
    OX_TRY(dnnl_softmax_v2_forward_desc_init(&sd, dnnl_forward_inference, dnnl_softmax_accurate,
                                             &md, &md, axis),
           err, "onednn: softmax");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &sd, NULL, &pd, err);
    if (s != XF_OK) return s;
    return cm_onednn_add_src_dst_step(k, pd, err);
}

xf_status cm_onednn_build_batchnorm(ox_kernel *k, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape;
    const dnnl_memory_desc_t *g = cm_onednn_input_md(k, 0);
    dnnl_memory_desc_t data;
    int keep = g && x->rank >= 3 && x->rank <= 5;
    if (keep) {
        data = *g;
    } else if (x->rank <= 5) {
        cm_onednn_md_plain(&data, x);
    } else {
        int64_t d[3] = {x->dims[0], x->dims[1], 1};
        for (int i = 2; i < x->rank; i++) d[2] *= x->dims[i];
        cm_onednn_md_plain_dims(&data, 3, d);
    }
    dnnl_batch_normalization_desc_t bd;
    OX_TRY(dnnl_batch_normalization_forward_desc_init(
               &bd, dnnl_forward_inference, &data, k->params.epsilon,
               dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift),
           err, "onednn: batchnorm");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &bd, NULL, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t src, dst, prm[4];
    dnnl_memory_desc_t out, vec;
    cm_onednn_md_plain_dims(&vec, 1, &x->dims[1]);
    if (keep) {
        s = cm_onednn_input_layout(k, 0, cm_onednn_pd_md(pd, dnnl_query_src_md, 0), &src, err);
        out = *cm_onednn_pd_md(pd, dnnl_query_dst_md, 0);
    } else {
        s = cm_onednn_input_view(k, 0, &data, &src, err);
        cm_onednn_md_plain(&out, x);
    }
    for (int i = 0; i < 4 && s == XF_OK; i++) s = cm_onednn_input_view(k, 1 + i, &vec, &prm[i], err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out, keep ? NULL : &data, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[6] = {{DNNL_ARG_SRC, src},       {DNNL_ARG_SCALE, prm[0]},
                               {DNNL_ARG_SHIFT, prm[1]},  {DNNL_ARG_MEAN, prm[2]},
                               {DNNL_ARG_VARIANCE, prm[3]}, {DNNL_ARG_DST, dst}};
    return cm_onednn_add_step(k, pd, 6, args, err);
}

/* Writes src (of shape s, unidirectionally broadcastable to `tail`)
 * expanded to numel(tail) floats at dst. */
static void expand(const float *src, const xf_shape *s, const xf_shape *tail, float *dst)
{
    int64_t n = xf_shape_numel(tail), idx[XF_MAX_DIMS] = {0};
    int off = tail->rank - s->rank;
    for (int64_t e = 0; e < n; e++) {
        int64_t si = 0;
        for (int i = 0; i < s->rank; i++) si = si * s->dims[i] + (s->dims[i] == 1 ? 0 : idx[off + i]);
        dst[e] = src[si];
        for (int i = tail->rank - 1; i >= 0; i--) {
            if (++idx[i] < tail->dims[i]) break;
            idx[i] = 0;
        }
    }
}

/* Scale or bias (input i) as `inner` contiguous floats. */
static xf_status ln_param(ox_kernel *k, int i, const xf_shape *tail, dnnl_memory_t *mem,
                          xf_error *err)
{
    dnnl_memory_desc_t vec;
    int64_t inner = xf_shape_numel(tail);
    cm_onednn_md_plain_dims(&vec, 1, &inner);
    const ox_io *io = &k->in[i];
    if (xf_shape_numel(&io->shape) == inner) return cm_onednn_input_view(k, i, &vec, mem, err);
    if (!io->data && !k->measuring)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "onednn: layernorm with a broadcast scale/bias that is not constant");
    xf_status s = cm_onednn_scratch(k, &vec, mem, err);
    if (s != XF_OK) return s;
    void *h = NULL;
    dnnl_memory_get_data_handle(*mem, &h);
    if (io->data) expand(io->data, &io->shape, tail, h);
    else memset(h, 0, sizeof(float) * (size_t)inner);
    return XF_OK;
}

xf_status cm_onednn_build_layernorm(ox_kernel *k, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape;
    int axis = k->params.axis < 0 ? k->params.axis + x->rank : k->params.axis;
    xf_shape tail = xf_shape_make(x->rank - axis, x->dims + axis);
    int64_t d[2] = {1, xf_shape_numel(&tail)};
    for (int i = 0; i < axis; i++) d[0] *= x->dims[i];
    int has_b = k->n_in > 2 && k->in[2].dtype != XF_DTYPE_INVALID;
    dnnl_memory_desc_t data, out;
    cm_onednn_md_plain_dims(&data, 2, d);
    cm_onednn_md_plain(&out, x);
    dnnl_layer_normalization_desc_t ld;
    OX_TRY(dnnl_layer_normalization_forward_desc_init(
               &ld, dnnl_forward_inference, &data, NULL, k->params.epsilon,
               dnnl_use_scale | (has_b ? dnnl_use_shift : 0)),
           err, "onednn: layernorm");
    dnnl_primitive_desc_t pd;
    xf_status s = cm_onednn_make_pd(k, &ld, NULL, &pd, err);
    if (s != XF_OK) return s;
    dnnl_memory_t src, dst, scale, shift = NULL;
    s = cm_onednn_input_view(k, 0, &data, &src, err);
    if (s == XF_OK) s = ln_param(k, 1, &tail, &scale, err);
    if (s == XF_OK && has_b) s = ln_param(k, 2, &tail, &shift, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out, &data, &dst, err);
    if (s != XF_OK) {
        dnnl_primitive_desc_destroy(pd);
        return s;
    }
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst},
                               {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
    return cm_onednn_add_step(k, pd, has_b ? 4 : 3, args, err);
}
