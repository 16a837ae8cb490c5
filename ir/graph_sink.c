/*
 * graph_sink.c — xf_graph_feed and xf_rule_feed: an xf_graph (a rule's
 * two) handed to a sink (ir.h, "A graph handed over piece by piece") in
 * the numbering sinks read, so that a consumer written for a sink
 * (pruning's term view, which xfergen feeds straight from its stored
 * candidates) takes built graphs too, through the same code.
 */
#include "ir.h"

xf_status xf_graph_feed(const xf_graph *g, const xf_graph_sink *s, xf_error *err)
{
    int max_in = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_inputs > max_in) max_in = g->nodes[i].n_inputs;
    int *order = xf_malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    int *num = xf_malloc(((size_t)g->n_values + 1) * sizeof *num); /* value id -> number */
    int *ins = xf_malloc(((size_t)max_in + 1) * sizeof *ins);
    xf_status st = XF_OK;
    if (!order || !num || !ins) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory feeding a graph");
        goto out;
    }
    st = xf_graph_topo_order(g, order, err);
    if (st != XF_OK) goto out;
    for (int v = 0; v < g->n_values; v++) num[v] = -1;
    int next = 0;
    for (int i = 0; i < g->n_inputs && st == XF_OK; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        num[g->inputs[i]] = next++;
        st = s->input(s->user, v->name, v->dtype, &v->shape, err);
    }
    for (int k = 0; k < g->n_nodes && st == XF_OK; k++) {
        const xf_node *nd = &g->nodes[order[k]];
        if (nd->op == XF_OP_OPAQUE) {
            char d[160];
            st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s is opaque and cannot be part of a rule",
                         xf_node_describe(g, order[k], d, sizeof d));
            break;
        }
        for (int j = 0; j < nd->n_inputs && st == XF_OK; j++) {
            int v = nd->inputs[j];
            ins[j] = v < 0 ? -1 : num[v];
            if (v >= 0 && num[v] < 0)
                st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                             "node %d reads value %d, a constant initializer (rules take weights "
                             "as inputs and constants from generator ops)",
                             order[k], v);
        }
        if (st == XF_OK)
            st = s->node(s->user, nd->op, &nd->params, ins, nd->n_inputs, nd->n_outputs, err);
        for (int j = 0; j < nd->n_outputs; j++) num[nd->outputs[j]] = next++;
    }
    for (int i = 0; i < g->n_outputs && st == XF_OK; i++) {
        int v = g->outputs[i];
        if (num[v] < 0)
            st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "output %d is a constant initializer", i);
        else
            st = s->output(s->user, num[v], err);
    }
out:
    xf_free(order);
    xf_free(num);
    xf_free(ins);
    return st;
}

xf_status xf_rule_feed(const xf_rule *r, const xf_graph_sink *src, const xf_graph_sink *dst,
                       xf_error *err)
{
    xf_status st = xf_graph_feed(&r->src, src, err);
    if (st == XF_OK) st = xf_graph_feed(&r->dst, dst, err);
    return st;
}
