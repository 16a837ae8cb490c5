/*
 * params_canon.c — which xf_params fields each operator reads, and
 * xf_params_canonical(), which zeroes every other field.
 *
 * Why: nodes are compared and hashed byte by byte (canonical graph hash,
 * rule matching, the rules database). A field an operator ignores — say an
 * epsilon left on a softmax by a caller that reused a params struct — would
 * otherwise make two identical operations look different, and would not
 * survive an ONNX round trip. xf_graph_add_node canonicalises after shape
 * inference has accepted the parameters, so invalid values (count_include_pad
 * on a max-pool) are still reported rather than silently dropped.
 */
#include "op_internal.h"

#include <string.h>

enum {
    F_AXIS = 1 << 0,     /* axis */
    F_AXES = 1 << 1,     /* n_axes, axes[] */
    F_SLICE = 1 << 2,    /* starts[], ends[], steps[] */
    F_PADS_SE = 1 << 3,  /* starts[] and ends[] as pad widths */
    F_WINDOW = 1 << 4,   /* kernel, stride, pads, dilation */
    F_GROUP = 1 << 5,    /* group */
    F_ACT = 1 << 6,      /* activation */
    F_KEEPDIMS = 1 << 7, /* keepdims */
    F_TRANS = 1 << 8,    /* trans_a, trans_b, alpha, beta */
    F_POOLMODE = 1 << 9, /* count_include_pad, ceil_mode */
    F_TO = 1 << 10,      /* to */
    F_PADMODE = 1 << 11, /* pad_mode */
    F_SHAPE = 1 << 12,   /* n_shape, shape[] */
    F_SPLIT = 1 << 13,   /* n_split, split[] */
    F_EPS = 1 << 14,     /* epsilon */
    F_VALUE = 1 << 15,   /* value */
    F_KERNEL = 1 << 16,  /* kernel only (enlarge's target size) */
    F_ALPHA = 1 << 17,   /* alpha */
    F_BETA = 1 << 18     /* beta */
};

static unsigned fields_of(xf_op op)
{
    switch (op) {
    case XF_OP_CAST: return F_TO;
    case XF_OP_GEMM: return F_TRANS;
    case XF_OP_CONV: return F_WINDOW | F_GROUP | F_ACT;
    case XF_OP_BATCHNORM: return F_EPS;
    case XF_OP_LAYERNORM: return F_AXIS | F_EPS;
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL: return F_WINDOW | F_POOLMODE;
    case XF_OP_REDUCE_MEAN: return F_AXES | F_KEEPDIMS;
    case XF_OP_SOFTMAX:
    case XF_OP_CONCAT:
    case XF_OP_GATHER:
    case XF_OP_FLATTEN: return F_AXIS;
    case XF_OP_SPLIT: return F_AXIS | F_SPLIT;
    case XF_OP_TRANSPOSE:
    case XF_OP_SQUEEZE:
    case XF_OP_UNSQUEEZE: return F_AXES;
    case XF_OP_SLICE: return F_AXES | F_SLICE;
    case XF_OP_PAD: return F_PADS_SE | F_PADMODE | F_VALUE;
    case XF_OP_RESHAPE:
    case XF_OP_EXPAND:
    case XF_OP_CONST_IDENTITY_CONV:
    case XF_OP_CONST_IDENTITY_MATRIX:
    case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL: return F_SHAPE;
    case XF_OP_CONSTANT_OF_SHAPE: return F_SHAPE | F_TO | F_VALUE;
    case XF_OP_ENLARGE: return F_KERNEL;
    case XF_OP_CLIP:
    case XF_OP_HARDSIGMOID: return F_ALPHA | F_BETA;
    case XF_OP_LEAKYRELU: return F_ALPHA;
    case XF_OP_REDUCE_SUM:
    case XF_OP_REDUCE_MAX: return F_AXES | F_KEEPDIMS;
    case XF_OP_RESIZE: return F_SHAPE | F_KERNEL | F_GROUP;
    case XF_OP_CONV_TRANSPOSE: return F_WINDOW | F_GROUP | F_SHAPE;
    case XF_OP_TILE: return F_SHAPE;
    case XF_OP_OPAQUE: return ~0u; /* opaque parameters live in its attributes: keep all */
    default: return 0;             /* element-wise, matmul, shape, pooling without window */
    }
}

void xf_params_canonical(xf_op op, xf_params *p)
{
    unsigned f = fields_of(op);
    if (f == ~0u) return;
    xf_params c = xf_params_default();
    if (f & F_AXIS) c.axis = p->axis;
    if (f & F_AXES) {
        c.n_axes = p->n_axes;
        memcpy(c.axes, p->axes, sizeof c.axes);
    }
    if (f & (F_SLICE | F_PADS_SE)) {
        memcpy(c.starts, p->starts, sizeof c.starts);
        memcpy(c.ends, p->ends, sizeof c.ends);
    }
    if (f & F_SLICE) memcpy(c.steps, p->steps, sizeof c.steps);
    if (f & (F_WINDOW | F_KERNEL)) memcpy(c.kernel, p->kernel, sizeof c.kernel);
    if (f & F_WINDOW) {
        memcpy(c.stride, p->stride, sizeof c.stride);
        memcpy(c.pads, p->pads, sizeof c.pads);
        memcpy(c.dilation, p->dilation, sizeof c.dilation);
    }
    if (f & F_GROUP) c.group = p->group;
    if (f & F_ACT) c.activation = p->activation;
    if (f & F_KEEPDIMS) c.keepdims = p->keepdims;
    if (f & F_TRANS) {
        c.trans_a = p->trans_a;
        c.trans_b = p->trans_b;
        c.alpha = p->alpha;
        c.beta = p->beta;
    }
    if (f & F_POOLMODE) {
        c.count_include_pad = p->count_include_pad;
        c.ceil_mode = p->ceil_mode;
    }
    if (f & F_TO) c.to = p->to;
    if (f & F_PADMODE) c.pad_mode = p->pad_mode;
    if (f & F_SHAPE) {
        c.n_shape = p->n_shape;
        memcpy(c.shape, p->shape, sizeof c.shape);
    }
    if (f & F_SPLIT) {
        c.n_split = p->n_split;
        memcpy(c.split, p->split, sizeof c.split);
    }
    if (f & F_EPS) c.epsilon = p->epsilon;
    if (f & F_VALUE) c.value = p->value;
    if (f & F_ALPHA) c.alpha = p->alpha;
    if (f & F_BETA) c.beta = p->beta;
    *p = c;
}
