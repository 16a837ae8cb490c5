/*
 * elementwise.c — which operators are element-wise, for the layout passes
 * of agent/rewrite/ (see elementwise.h).
 */
#include "agent/rewrite/elementwise.h"

int xf_rw_elementwise(xf_op op)
{
    switch (op) {
    case XF_OP_RELU: case XF_OP_SIGMOID: case XF_OP_TANH: case XF_OP_ERF: case XF_OP_GELU:
    case XF_OP_SQRT: case XF_OP_EXP: case XF_OP_LOG: case XF_OP_NEG: case XF_OP_ABS:
    case XF_OP_RECIPROCAL: case XF_OP_IDENTITY: case XF_OP_DROPOUT: case XF_OP_CAST:
    case XF_OP_CLIP: case XF_OP_HARDSIGMOID: case XF_OP_HARDSWISH: case XF_OP_LEAKYRELU:
    case XF_OP_NOT: case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_DIV:
    case XF_OP_POW: case XF_OP_EQUAL: case XF_OP_WHERE: case XF_OP_SCALAR_MUL:
    case XF_OP_PRELU: case XF_OP_MIN: case XF_OP_MAX:
        return 1;
    default:
        return 0;
    }
}
