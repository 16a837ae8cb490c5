/*
 * onednn_native.c — tells whether the oneDNN backend builds a graph node
 * with its own primitives or falls back to the reference call, from what
 * the executor gives it (plain layouts, constant data): the public window
 * (xf_cost_onednn_native in costmodel.h) through which the tests check the
 * backend's coverage without reaching into its kernels.
 */
#include <string.h>

#include "model_internal.h"
#include "onednn_internal.h"

xf_status xf_cost_onednn_native(xf_cost_model *cm, const xf_graph *g, int node, int *native,
                                xf_error *err)
{
    *native = 0;
    if (cm->kind != XF_COST_ONEDNN)
        return XF_FAIL(err, XF_ERR_INVALID, "onednn: the cost model's backend is %s",
                       cm->be->name);
    const xf_node *n = &g->nodes[node];
    if (n->n_inputs > 8 || n->n_outputs > 8)
        return XF_FAIL(err, XF_ERR_INVALID, "onednn: node %d has more than 8 inputs or outputs",
                       node);
    ox_io io[8];
    dnnl_memory_desc_t md[8];
    xf_dtype odt[8];
    xf_shape osh[8];
    for (int i = 0; i < n->n_inputs; i++) {
        memset(&io[i], 0, sizeof io[i]);
        if (n->inputs[i] < 0) continue;
        const xf_value *v = &g->values[n->inputs[i]];
        cm_onednn_md_plain(&md[i], &v->shape);
        io[i] = (ox_io){v->dtype, v->shape, v->dtype == XF_F32 ? &md[i] : NULL,
                        v->kind == XF_VALUE_CONST ? v->data : NULL};
    }
    for (int j = 0; j < n->n_outputs; j++) {
        odt[j] = g->values[n->outputs[j]].dtype;
        osh[j] = g->values[n->outputs[j]].shape;
    }
    ox_kernel k;
    xf_status s = cm_onednn_kernel_init(&k, cm->state, n->op, &n->params, n->n_inputs, io,
                                 n->n_outputs, odt, osh, 0, err);
    if (s != XF_OK) return s;
    s = cm_onednn_kernel_build_native(&k, err);
    cm_onednn_kernel_free(&k);
    if (s == XF_ERR_UNSUPPORTED) return XF_OK;
    *native = s == XF_OK;
    return s;
}
