/*
 * normalize.c — one spelling per graph for the search's hash. The
 * enumerator writes axes counted from the end (concat[axis=-4]), the
 * rewriter instantiates a rule's target with axes counted from the start
 * (concat[axis=0] on a rank-4 input): the same operation, which the
 * structural hash would tell apart, so two sides that met would not be
 * seen to. Every graph the search makes and every graph a replay makes
 * goes through derive_normalize, which writes the axis of concat, split and
 * softmax counted from the end. The IR reads a negative axis as axis + rank
 * (xf_norm_axis), so the graph computes exactly what it did: this is a
 * re-spelling, not a rewrite.
 */
#include "derive_internal.h"

void derive_normalize(xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        xf_node *n = &g->nodes[i];
        if (n->op != XF_OP_CONCAT && n->op != XF_OP_SPLIT && n->op != XF_OP_SOFTMAX) continue;
        if (n->n_inputs < 1 || n->inputs[0] < 0) continue;
        int rank = g->values[n->inputs[0]].shape.rank;
        if (n->params.axis >= 0 && n->params.axis < rank) n->params.axis -= rank;
    }
}
