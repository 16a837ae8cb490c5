/*
 * interp.c — the float32 reference interpreter: runs a whole graph node by
 * node in topological order with the operator table's kernels (opaque If
 * and LSTM nodes through opaque_run.c). Buffers of
 * intermediate values are freed as soon as their last consumer has run, so
 * peak memory stays near the widest cut of the graph, not its sum.
 */
#include "op_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    xf_tensor t;
    int owned;     /* buffer belongs to the interpreter */
    int remaining; /* consumers still to run (+1 per graph-output use) */
} slot;

static void release(slot *s)
{
    if (s->owned) xf_tensor_free(&s->t);
    s->owned = 0;
    s->t.data = NULL;
}

static xf_status copy_tensor(const xf_tensor *src, xf_tensor *dst, xf_error *err)
{
    xf_status st = xf_tensor_alloc(dst, src->dtype, &src->shape, err);
    if (st == XF_OK) memcpy(dst->data, src->data, xf_tensor_bytes(src));
    return st;
}

static xf_status run_node(const xf_graph *g, int ni, slot *slots, xf_error *err)
{
    const xf_node *n = &g->nodes[ni];
    char d[256];
    if (n->op == XF_OP_OPAQUE && (!n->opaque || n->opaque->kernel == XF_OPAQUE_NO_KERNEL))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has no reference kernel (opaque op)%s%s",
                       xf_node_describe(g, ni, d, sizeof d),
                       n->opaque && n->opaque->no_kernel ? ": " : "",
                       n->opaque && n->opaque->no_kernel ? n->opaque->no_kernel : "");
    const xf_tensor *in[2 * XF_MAX_SPLIT + 8];
    const xf_tensor **inp = in;
    xf_tensor *out = xf_calloc((size_t)n->n_outputs + 1, sizeof *out);
    if (n->n_inputs > (int)(sizeof in / sizeof in[0]))
        inp = xf_malloc(sizeof *inp * (size_t)n->n_inputs);
    xf_status st = XF_OK;
    if (!out || !inp) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory running %s",
                     xf_node_describe(g, ni, d, sizeof d));
        goto out;
    }
    for (int k = 0; k < n->n_inputs; k++)
        inp[k] = n->inputs[k] >= 0 ? &slots[n->inputs[k]].t : NULL;
    int k_alloc = 0;
    for (; k_alloc < n->n_outputs; k_alloc++) {
        const xf_value *v = &g->values[n->outputs[k_alloc]];
        st = xf_tensor_alloc(&out[k_alloc], v->dtype, &v->shape, err);
        if (st != XF_OK) break;
    }
    if (st == XF_OK && n->op == XF_OP_OPAQUE)
        st = ir_opaque_run(g, ni, inp, out, err);
    else if (st == XF_OK)
        st = xf_op_run(n->op, &n->params, n->n_inputs, inp, n->n_outputs, out, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "running %s", xf_node_describe(g, ni, d, sizeof d));
        for (int k = 0; k < k_alloc && k < n->n_outputs; k++) xf_tensor_free(&out[k]);
        goto out;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        slot *s = &slots[n->outputs[k]];
        s->t = out[k];
        s->owned = 1;
        if (s->remaining == 0) release(s); /* an unused output */
    }
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v >= 0 && --slots[v].remaining == 0) release(&slots[v]);
    }
out:
    if (inp != in) xf_free(inp);
    xf_free(out);
    return st;
}

xf_status xf_interp_run(const xf_graph *g, const xf_tensor *inputs, int n_inputs,
                        xf_tensor *outputs, xf_error *err)
{
    xf_status st = XF_OK;
    char a[96], b[96];
    for (int i = 0; i < g->n_outputs; i++) memset(&outputs[i], 0, sizeof outputs[i]);
    if (n_inputs != g->n_inputs)
        return XF_FAIL(err, XF_ERR_INVALID, "graph takes %d inputs, %d given", g->n_inputs, n_inputs);
    st = xf_graph_mem_check(g, err);
    if (st != XF_OK) return st;
    slot *slots = xf_calloc((size_t)g->n_values + 1, sizeof *slots);
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (!slots || !order) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory starting the interpreter");
        goto out;
    }
    st = xf_graph_topo_order(g, order, err);
    if (st != XF_OK) goto out;
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        if (inputs[i].dtype != v->dtype || !xf_shape_equal(&inputs[i].shape, &v->shape)) {
            st = XF_FAIL(err, XF_ERR_INVALID, "input %d '%s' expects %s %s, got %s %s", i,
                         v->name ? v->name : "", xf_dtype_name(v->dtype),
                         xf_shape_str(&v->shape, a, sizeof a), xf_dtype_name(inputs[i].dtype),
                         xf_shape_str(&inputs[i].shape, b, sizeof b));
            goto out;
        }
        slots[g->inputs[i]].t = inputs[i];
    }
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        if (v->kind == XF_VALUE_CONST) {
            slots[i].t.dtype = v->dtype;
            slots[i].t.shape = v->shape;
            slots[i].t.data = v->data;
        }
    }
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] >= 0) slots[g->nodes[i].inputs[k]].remaining++;
    for (int i = 0; i < g->n_outputs; i++) slots[g->outputs[i]].remaining++;
    for (int k = 0; k < g->n_nodes; k++) {
        st = run_node(g, order[k], slots, err);
        if (st != XF_OK) goto out;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        slot *s = &slots[g->outputs[i]];
        st = copy_tensor(&s->t, &outputs[i], err);
        if (st != XF_OK) {
            for (int j = 0; j < i; j++) xf_tensor_free(&outputs[j]);
            goto out;
        }
    }
out:
    if (slots)
        for (int i = 0; i < g->n_values; i++) release(&slots[i]);
    xf_free(slots);
    xf_free(order);
    return st;
}
