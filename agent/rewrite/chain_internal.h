/*
 * chain_internal.h — (private to agent/rewrite/) what the preparation's
 * fusions share: a chain of nodes an exporter wrote for one operator
 * (a layer norm, a GELU) is recognised from its first node and replaced by
 * one node that takes the chain's last value over. See chain.c.
 */
#ifndef XF_AGENT_REWRITE_CHAIN_INTERNAL_H
#define XF_AGENT_REWRITE_CHAIN_INTERNAL_H

#include "ir/ir.h"
#include "match/match.h"

/* The node reading v when v has exactly one use (one input slot of one
 * node) and is not a graph output; -1 otherwise. uses counts input slots
 * and graph outputs (xf_edit_use_counts); ix lists distinct readers. */
int rw_sole_reader(const xf_graph_index *ix, const int *uses, int v);

/* The operand of binary node `node` other than value v, or -1 when v is not
 * one of its operands (both: the second). */
int rw_other_operand(const xf_graph *g, int node, int v);

/* Whether the chain whose first node is `node` matches; fills *chain. */
typedef int (*rw_chain_match)(const xf_graph *g, const xf_graph_index *ix, const int *uses,
                              int node, void *chain);
/* Adds the fused node for *chain and marks what it replaces dead. */
typedef xf_status (*rw_chain_fuse)(xf_graph *g, const void *chain, uint8_t *node_dead,
                                   uint8_t *value_dead, xf_error *err);

/* Matches every node of g as a chain's first (chains of at least min_nodes
 * nodes, chain_size bytes each), then fuses them all (each adding at most
 * new_values values and one node) and compacts g; *n_fused receives how
 * many. `what` names the fusion in out-of-memory messages. */
xf_status rw_fuse_chains(xf_graph *g, const char *what, size_t chain_size, int min_nodes,
                         int new_values, rw_chain_match match, rw_chain_fuse fuse,
                         int *n_fused, xf_error *err);

#endif /* XF_AGENT_REWRITE_CHAIN_INTERNAL_H */
