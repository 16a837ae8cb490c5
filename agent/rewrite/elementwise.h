/*
 * elementwise.h — (private to agent/rewrite/) what the layout passes
 * (narrow.c, unbatch.c) need to know of an operator: whether it is
 * element-wise, i.e. output element i reads element i of each operand
 * after numpy broadcasting, so a slice or a leading unit dim of the output
 * maps onto the operands that carry the axis.
 */
#ifndef XF_AGENT_ELEMENTWISE_H
#define XF_AGENT_ELEMENTWISE_H

#include "ir/ir.h"

/* 1 for the unary, binary and ternary element-wise ops (where, scalar_mul,
 * prelu, clip and the activations included). */
int xf_rw_elementwise(xf_op op);

#endif /* XF_AGENT_ELEMENTWISE_H */
