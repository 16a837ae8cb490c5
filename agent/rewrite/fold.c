/*
 * fold.c — weight folding for xf_agent_finish: every node computed from
 * constants alone (all inputs constant or themselves folded, or a constant
 * generator with no inputs; opaque nodes never) is evaluated once with the
 * reference kernels and its outputs become owned initializers. Rules create
 * such subgraphs (concat of two weights, an identity kernel enlarged and
 * added to another), and a runtime should see one initializer instead.
 * An Expand is kept (foldable()).
 */
#include "agent/rewrite/fold_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names an unnamed folded value after its node ("<node>" or "<node>:k"). */
static xf_status name_folded(xf_graph *g, int node, int k, xf_error *err)
{
    const xf_node *n = &g->nodes[node];
    xf_value *v = &g->values[n->outputs[k]];
    if (v->name) return XF_OK;
    char buf[512];
    if (n->name && n->name[0])
        snprintf(buf, sizeof buf, n->n_outputs == 1 ? "%s" : "%s:%d", n->name, k);
    else
        snprintf(buf, sizeof buf, "folded_%d:%d", node, k);
    size_t len = strlen(buf) + 1;
    v->name = xf_malloc(len);
    if (!v->name) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory folding weights");
    memcpy(v->name, buf, len);
    return XF_OK;
}

/* An Expand of a constant stays: the importer folds those with a constant
 * target, so one left in the graph has its target read from run-time
 * shapes (a class token broadcast over the batch), and a model written with
 * a symbolic batch needs the node to follow it (onnx/export_dyn.c), at
 * batch 1 too where it copies its input. */
static int foldable(const xf_graph *g, const xf_node *n)
{
    if (n->op == XF_OP_OPAQUE || n->op == XF_OP_EXPAND) return 0;
    for (int k = 0; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0 && g->values[n->inputs[k]].kind != XF_VALUE_CONST) return 0;
    return 1;
}

/* Evaluates node i (all inputs constant) and turns its outputs into owned
 * constants. */
static xf_status fold_node(xf_graph *g, int i, xf_error *err)
{
    const xf_node *n = &g->nodes[i];
    char d[256];
    xf_tensor in_t[XF_MAX_SPLIT + 8];
    const xf_tensor *in[XF_MAX_SPLIT + 8];
    xf_tensor out_t[XF_MAX_SPLIT + 8];
    if (n->n_inputs > XF_MAX_SPLIT + 8 || n->n_outputs > XF_MAX_SPLIT + 8)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has too many inputs or outputs to fold",
                       xf_node_describe(g, i, d, sizeof d));
    for (int k = 0; k < n->n_inputs; k++) {
        in[k] = NULL;
        if (n->inputs[k] < 0) continue;
        const xf_value *v = &g->values[n->inputs[k]];
        in_t[k].dtype = v->dtype;
        in_t[k].shape = v->shape;
        in_t[k].data = v->data;
        in[k] = &in_t[k];
    }
    xf_status st = XF_OK;
    int n_alloc = 0;
    while (n_alloc < n->n_outputs && st == XF_OK) {
        const xf_value *v = &g->values[n->outputs[n_alloc]];
        st = xf_tensor_alloc(&out_t[n_alloc], v->dtype, &v->shape, err);
        if (st == XF_OK) n_alloc++;
    }
    if (st == XF_OK) st = xf_op_run(n->op, &n->params, n->n_inputs, in, n->n_outputs, out_t, err);
    for (int k = 0; k < n->n_outputs && st == XF_OK; k++) st = name_folded(g, i, k, err);
    if (st != XF_OK) {
        for (int k = 0; k < n_alloc; k++) xf_tensor_free(&out_t[k]);
        xf_error_prefix(err, "folding %s", xf_node_describe(g, i, d, sizeof d));
        return st;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        xf_value *v = &g->values[n->outputs[k]];
        v->kind = XF_VALUE_CONST;
        v->producer = -1;
        v->producer_output = 0;
        v->data = out_t[k].data;
        v->borrowed = 0;
    }
    return XF_OK;
}

xf_status rw_fold_weights(xf_graph *g, uint8_t *node_dead, int *n_folded, xf_error *err)
{
    *n_folded = 0;
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory folding weights");
    xf_status st = xf_graph_topo_order(g, order, err);
    for (int k = 0; k < g->n_nodes && st == XF_OK; k++) {
        int i = order[k];
        if (!foldable(g, &g->nodes[i])) continue;
        st = fold_node(g, i, err);
        if (st != XF_OK) break;
        node_dead[i] = 1;
        (*n_folded)++;
    }
    xf_free(order);
    return st;
}
