/*
 * memory.c — what a graph holds in memory when it runs: its weights, and
 * the most activation bytes alive at once when its nodes run one at a time
 * in topological order (xf_graph_topo_order: the order the ONNX exporter
 * writes them, so the order a runtime reading the file meets them).
 *
 * A liveness pass: a graph input is alive from the start, a node's output
 * from the step its node runs; either until the last step that reads it,
 * or to the end when it is a graph output. At each step the node's outputs
 * are allocated while its inputs are still alive, so the step's live bytes
 * are everything defined so far and still needed at or after it. Every
 * value counts its own bytes: a runtime that aliases a Reshape's output
 * with its input, or reuses a buffer in place, needs less (the figure is an
 * upper bound of that kind, and the same kind before and after a rewrite).
 */
#include "ir.h"

static uint64_t value_bytes(const xf_value *v)
{
    int64_t n = xf_shape_numel(&v->shape);
    return n > 0 ? (uint64_t)n * xf_dtype_size(v->dtype) : 0;
}

xf_status xf_graph_memory_use(const xf_graph *g, xf_graph_memory *m, xf_error *err)
{
    m->weight_bytes = xf_graph_param_bytes(g);
    m->peak_activation_bytes = 0;
    m->peak_node = -1;
    int n = g->n_nodes;
    int *order = xf_malloc(sizeof(int) * ((size_t)n + 1));
    int *last = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    int *step_of = xf_malloc(sizeof(int) * ((size_t)n + 1));
    int64_t *freed = xf_calloc((size_t)n + 1, sizeof *freed); /* bytes whose last use is step k */
    xf_status st = XF_OK;
    if (!order || !last || !step_of || !freed) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory computing the graph's memory use");
        goto out;
    }
    if ((st = xf_graph_topo_order(g, order, err)) != XF_OK) goto out;
    /* last[v]: the last step reading v; n for a graph output (alive to the end) */
    for (int k = 0; k < n; k++) step_of[order[k]] = k;
    for (int v = 0; v < g->n_values; v++)
        last[v] = g->values[v].kind == XF_VALUE_NODE ? step_of[g->values[v].producer] : 0;
    for (int k = 0; k < n; k++) {
        const xf_node *nd = &g->nodes[order[k]];
        for (int i = 0; i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0 && last[nd->inputs[i]] < k) last[nd->inputs[i]] = k;
    }
    for (int i = 0; i < g->n_outputs; i++) last[g->outputs[i]] = n;
    uint64_t live = 0;
    for (int v = 0; v < g->n_values; v++) {
        const xf_value *val = &g->values[v];
        if (val->kind == XF_VALUE_CONST) continue;
        if (val->kind == XF_VALUE_INPUT) live += value_bytes(val);
        if (last[v] < n) freed[last[v]] += (int64_t)value_bytes(val);
    }
    m->peak_activation_bytes = live; /* the inputs alone, before the first node */
    for (int k = 0; k < n; k++) {
        const xf_node *nd = &g->nodes[order[k]];
        for (int o = 0; o < nd->n_outputs; o++) live += value_bytes(&g->values[nd->outputs[o]]);
        if (live > m->peak_activation_bytes) {
            m->peak_activation_bytes = live;
            m->peak_node = order[k];
        }
        live -= (uint64_t)freed[k];
    }
out:
    xf_free(order);
    xf_free(last);
    xf_free(step_of);
    xf_free(freed);
    return st;
}
