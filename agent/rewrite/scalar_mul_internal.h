/*
 * scalar_mul_internal.h — (private to agent/rewrite/) the scalar canonicalisation that
 * xf_agent_prepare applies: a multiplication or division by a float32
 * rank-0 constant becomes scalar_mul (by the constant, or by its
 * reciprocal), the form the rules' scalar axioms are written for. See
 * scalar_mul.c.
 */
#ifndef XF_AGENT_REWRITE_SCALAR_MUL_INTERNAL_H
#define XF_AGENT_REWRITE_SCALAR_MUL_INTERNAL_H

#include "ir/ir.h"

/* Rewrites every such mul/div of g in place; *n_rewritten receives how
 * many. Fails only when out of memory. */
xf_status rw_scalar_mul_canonicalise(xf_graph *g, int *n_rewritten, xf_error *err);

#endif /* XF_AGENT_REWRITE_SCALAR_MUL_INTERNAL_H */
