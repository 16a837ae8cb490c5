/*
 * onednn_move.c — data movement on oneDNN: concat (the concat primitive,
 * in the inputs' own layouts when oneDNN accepts them, else plain),
 * transpose (a reorder from a strided view of the input onto the plain
 * output) and the view ops — reshape, flatten, squeeze, unsqueeze,
 * identity, inference-mode dropout — which move no data at all when their
 * input is plain (the output aliases the input's buffer) and are one
 * reorder to plain otherwise.
 */
#include <stdlib.h>

#include "onednn_internal.h"

/* One concat attempt; `keep_layout` lets inputs stay in their layouts. */
static xf_status concat(ox_kernel *k, int axis, int keep_layout, xf_error *err)
{
    int n = k->n_in;
    dnnl_memory_desc_t *mds = xf_malloc(sizeof *mds * (size_t)n);
    dnnl_exec_arg_t *args = xf_malloc(sizeof *args * (size_t)(n + 1));
    xf_status s = XF_OK;
    if (!mds || !args) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory building concat");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const dnnl_memory_desc_t *g = cm_onednn_input_md(k, i);
        if (keep_layout && g) mds[i] = *g;
        else cm_onednn_md_plain(&mds[i], &k->in[i].shape);
    }
    dnnl_memory_desc_t plain_out, *dst_md = NULL;
    if (!keep_layout) {
        cm_onednn_md_plain(&plain_out, &k->out_sh[0]);
        dst_md = &plain_out;
    }
    dnnl_primitive_desc_t pd;
    s = cm_onednn_check(dnnl_concat_primitive_desc_create(&pd, dst_md, n, axis, mds, NULL,
                                                   k->st->engine),
                 err, "onednn: concat");
    if (s != XF_OK) goto out;
    for (int i = 0; i < n && s == XF_OK; i++) {
        args[i].arg = DNNL_ARG_MULTIPLE_SRC + i;
        s = cm_onednn_input_layout(k, i, cm_onednn_pd_md(pd, dnnl_query_src_md, i), &args[i].memory, err);
    }
    args[n].arg = DNNL_ARG_DST;
    if (s == XF_OK)
        s = cm_onednn_output(k, 0, cm_onednn_pd_md(pd, dnnl_query_dst_md, 0), NULL, &args[n].memory, err);
    if (s == XF_OK) s = cm_onednn_add_step(k, pd, n + 1, args, err);
    else dnnl_primitive_desc_destroy(pd);
out:
    xf_free(mds);
    xf_free(args);
    return s;
}

xf_status cm_onednn_build_concat(ox_kernel *k, xf_error *err)
{
    int rank = k->out_sh[0].rank;
    if (rank == 0) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: concat of scalars");
    int axis = k->params.axis < 0 ? k->params.axis + rank : k->params.axis;
    xf_status s = concat(k, axis, 1, err);
    if (s == XF_ERR_UNSUPPORTED) {
        cm_onednn_kernel_reset(k);
        s = concat(k, axis, 0, err);
    }
    return s;
}

xf_status cm_onednn_build_transpose(ox_kernel *k, xf_error *err)
{
    const xf_shape *x = &k->in[0].shape, *y = &k->out_sh[0];
    int r = x->rank;
    if (r == 0) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: transpose of a scalar");
    int64_t perm[XF_MAX_DIMS], xs[XF_MAX_DIMS];
    for (int i = 0; i < r; i++) {
        int64_t a = k->params.n_axes ? k->params.axes[i] : r - 1 - i;
        perm[i] = a < 0 ? a + r : a;
    }
    xf_shape_strides(x, xs);
    dnnl_dims_t vd, vs;
    for (int i = 0; i < r; i++) {
        vd[i] = y->dims[i];
        vs[i] = xs[perm[i]];
    }
    dnnl_memory_desc_t view, out;
    OX_TRY(dnnl_memory_desc_init_by_strides(&view, r, vd, dnnl_f32, vs), err,
           "onednn: transpose view");
    cm_onednn_md_plain(&out, y);
    dnnl_memory_t src, dst;
    xf_status s = cm_onednn_input_view(k, 0, &view, &src, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out, NULL, &dst, err);
    if (s == XF_OK) s = cm_onednn_add_reorder(k, src, dst, err);
    return s;
}

xf_status cm_onednn_build_view(ox_kernel *k, xf_error *err)
{
    if (k->n_out != 1)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: dropout with a mask output");
    const dnnl_memory_desc_t *g = cm_onednn_input_md(k, 0);
    if (k->in[0].dtype != XF_F32 || !g || cm_onednn_md_is_plain(g)) {
        k->alias = 1;
        return XF_OK;
    }
    dnnl_memory_desc_t flat, out;
    cm_onednn_md_plain(&flat, &k->in[0].shape);
    cm_onednn_md_plain(&out, &k->out_sh[0]);
    dnnl_memory_t src, dst;
    xf_status s = cm_onednn_input_layout(k, 0, g, &src, err);
    if (s == XF_OK) s = cm_onednn_output(k, 0, &out, &flat, &dst, err);
    if (s == XF_OK) s = cm_onednn_add_reorder(k, src, dst, err);
    return s;
}
