/*
 * narrow_internal.h — (private to agent/rewrite/) the row narrowing that
 * xf_agent_prepare applies: a model that reads one position of a tensor
 * (Gather with a constant scalar index, e.g. a ViT's class token) stops
 * computing the positions nobody reads. See narrow.c.
 */
#ifndef XF_AGENT_REWRITE_NARROW_INTERNAL_H
#define XF_AGENT_REWRITE_NARROW_INTERNAL_H

#include "ir/ir.h"

/* Narrows g in place (nodes renumbered). *n_selections receives how many
 * single-position Gathers became slices, *n_narrowed how many operators
 * now compute only the selected positions. With move 0 every such Gather
 * becomes Reshape(Slice) and nothing moves (proved rules can move the
 * slice then). Fails only when out of memory or on a broken invariant (g
 * is then unusable and must be freed). */
xf_status rw_narrow_selections(xf_graph *g, int move, int *n_selections, int *n_narrowed,
                               xf_error *err);

#endif /* XF_AGENT_REWRITE_NARROW_INTERNAL_H */
