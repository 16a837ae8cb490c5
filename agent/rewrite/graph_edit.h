/*
 * graph_edit.h — (private to agent/rewrite/) in-place surgery on an xf_graph that
 * the ir/ builders do not offer: counting the uses of every value and
 * deleting a set of nodes and values with the survivors renumbered. Rule
 * application, preparation and finishing all rewrite a shared clone of a
 * graph with these instead of rebuilding it node by node.
 */
#ifndef XF_AGENT_GRAPH_EDIT_H
#define XF_AGENT_GRAPH_EDIT_H

#include <stdint.h>

#include "ir/ir.h"

/* uses[v] = how often value v is a node input plus how often it is a graph
 * output. `uses` has g->n_values entries. */
void xf_edit_use_counts(const xf_graph *g, int *uses);

/* Deletes every node i with node_dead[i] and every value v with
 * value_dead[v] (either array may be NULL: nothing of that kind dies),
 * keeping the relative order of the rest and renumbering node inputs and
 * outputs, value producers, graph inputs and graph outputs. The caller
 * guarantees that every output of a dead node is dead and that no surviving
 * node or graph input/output refers to a dead value. Owned constant data of
 * dead values is freed. Fails only when out of memory (g unchanged then). */
xf_status xf_edit_compact(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                          xf_error *err);

/* Same contract as xf_edit_compact, but each hole is filled with the last
 * surviving node (value) instead of shifting everything after it: only as
 * many nodes and values move as are deleted, which matters because a node
 * is about a kilobyte (its xf_params). Node order is not kept. node_map
 * (g->n_nodes entries before the call; NULL: not wanted) receives each
 * node's new index, -1 for a deleted one. */
xf_status xf_edit_compact_fill(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                               int *node_map, xf_error *err);

#endif /* XF_AGENT_GRAPH_EDIT_H */
