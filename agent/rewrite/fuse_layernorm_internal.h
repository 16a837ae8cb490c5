/*
 * fuse_layernorm_internal.h — (private to agent/rewrite/) the layer-norm fusion that
 * xf_agent_prepare applies: decomposed LayerNorm chains (ReduceMean, Sub,
 * Pow, ReduceMean, Add eps, Sqrt, Div, optional Mul gamma and Add beta over
 * the last axis) become one layernorm node. See fuse_layernorm.c.
 */
#ifndef XF_AGENT_REWRITE_FUSE_LAYERNORM_INTERNAL_H
#define XF_AGENT_REWRITE_FUSE_LAYERNORM_INTERNAL_H

#include "ir/ir.h"

/* Fuses every such chain of g in place (nodes renumbered); *n_fused
 * receives how many. Fails only when out of memory or when the fused node
 * does not infer (g is then unusable and must be freed). */
xf_status rw_fuse_layernorms(xf_graph *g, int *n_fused, xf_error *err);

#endif /* XF_AGENT_REWRITE_FUSE_LAYERNORM_INTERNAL_H */
