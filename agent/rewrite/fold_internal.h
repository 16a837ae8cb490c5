/*
 * fold_internal.h — (private to agent/rewrite/) weight folding used by xf_agent_finish.
 */
#ifndef XF_AGENT_REWRITE_FOLD_INTERNAL_H
#define XF_AGENT_REWRITE_FOLD_INTERNAL_H

#include <stdint.h>

#include "ir/ir.h"

/* Evaluates every node of g computed from constants only (inputs all
 * constant or folded, or no inputs; never opaque) in topological order: its
 * output values become owned constants (named after the node when unnamed)
 * and node_dead[i] (g->n_nodes entries, zeroed by the caller) is set. The
 * caller compacts g afterwards. *n_folded counts the folded nodes. */
xf_status rw_fold_weights(xf_graph *g, uint8_t *node_dead, int *n_folded, xf_error *err);

#endif /* XF_AGENT_REWRITE_FOLD_INTERNAL_H */
