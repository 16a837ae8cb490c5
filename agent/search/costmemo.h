/*
 * costmemo.h — (private to agent/) an in-memory memo of operator costs in
 * front of the cost model, for the environment and the searches.
 *
 * The cost model answers every query from its SQLite cache (after one
 * measurement), but a query still builds a text key and runs a statement:
 * microseconds per node, too slow to re-cost a 1,000-node graph on every
 * step. The memo keys a configuration (op, parameters, input dtypes and
 * shapes) by a 64-bit hash of its bytes, confirms a hit by comparing the
 * bytes, and asks the cost model only on a miss. Opaque nodes and operators
 * with more inputs than the memo stores go to the cost model directly.
 */
#ifndef XF_AGENT_COSTMEMO_H
#define XF_AGENT_COSTMEMO_H

#include "agent/agent.h"

typedef struct xf_costmemo xf_costmemo;

xf_status xf_costmemo_create(xf_cost_model *cm, xf_costmemo **out, xf_error *err);
void xf_costmemo_free(xf_costmemo *m); /* NULL is a no-op */

/* Cost of one configuration (xf_cost_op semantics). */
xf_status xf_costmemo_op(xf_costmemo *m, xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                         xf_error *err);
/* xf_agent_graph_cost through the memo; per_node (g->n_nodes entries, or
 * NULL) gets each node's cost, zero for weight-only nodes. */
xf_status xf_costmemo_graph(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                            xf_op_cost *per_node, xf_op_cost *total, xf_error *err);

/* xf_costmemo_graph for a graph made by xf_match_apply_from from pg (index
 * pix, per-node costs prev_cost): a node copied from pg's node from[i] that
 * was not weight-only there and is not now takes its cost over (the same
 * configuration costs the same); the others are costed. The total is
 * summed in node order as xf_costmemo_graph does, so both give the same
 * bits. */
xf_status xf_costmemo_graph_from(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                                 const xf_graph *pg, const xf_graph_index *pix,
                                 const xf_op_cost *prev_cost, const int *from,
                                 xf_op_cost *per_node, xf_op_cost *total, xf_error *err);

#endif /* XF_AGENT_COSTMEMO_H */
