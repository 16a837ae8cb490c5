/*
 * fuse_gelu_internal.h — (private to agent/rewrite/) the GELU fusion that
 * xf_agent_prepare applies: the exported erf form x * 0.5 * (1 + erf(x / √2))
 * becomes one gelu node. See fuse_gelu.c.
 */
#ifndef XF_AGENT_REWRITE_FUSE_GELU_INTERNAL_H
#define XF_AGENT_REWRITE_FUSE_GELU_INTERNAL_H

#include "ir/ir.h"

/* Fuses every such chain of g in place (nodes renumbered); *n_fused
 * receives how many. Fails only when out of memory or when the fused node
 * does not infer (g is then unusable and must be freed). */
xf_status rw_fuse_gelus(xf_graph *g, int *n_fused, xf_error *err);

#endif /* XF_AGENT_REWRITE_FUSE_GELU_INTERNAL_H */
