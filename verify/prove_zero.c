/*
 * prove_zero.c — which values of a rule side are the zero tensor whatever
 * the inputs, read off the operators and the rule's shapes. The encoder
 * (prove_encode.c) states such a value as the shape-indexed constant
 * (zt rank d0 .. d5), so two sides that both vanish are one term and a zero
 * operand of a sum drops out; the axioms, which know no shapes, could not
 * see these facts. The source of zeros is layer-norm: a layer-norm whose
 * normalised axes hold one element is its bias (x minus its own mean is 0),
 * and a mean over the one normalised axis of a layer-norm with a one-element
 * scale is 0 (the normalised values sum to 0); both only with epsilon > 0
 * (with 0 a zero variance makes them 0/0). Zeros then propagate through
 * every operator that maps 0 to 0 (products, linear maps, relu, tanh, erf,
 * gelu, pooling, data movement); sigmoid, exp and softmax do not. The
 * one-element axes and scales these facts read are own sizes: they are
 * recorded (vf_prove_hold) so that the proof holds only where they stay.
 */
#include "verify/prove_internal.h"

/* Elements of the axes of s from `axis` (any sign) to the last. */
static int64_t tail_numel(const xf_shape *s, int64_t axis)
{
    int64_t n = 1;
    for (int64_t i = axis < 0 ? s->rank + axis : axis; i < s->rank; i++) n *= s->dims[i];
    return n;
}

static int in_zero(const xf_node *nd, int i, const unsigned char *zero)
{
    return i < nd->n_inputs && nd->inputs[i] >= 0 && zero[nd->inputs[i]];
}

int vf_prove_centred_layernorm(const xf_graph *g, int value, const unsigned char *zero,
                               vf_held *held)
{
    int ni = g->values[value].producer;
    if (ni < 0) return 0;
    const xf_node *ln = &g->nodes[ni];
    if (ln->op != XF_OP_LAYERNORM || !(ln->params.epsilon > 0) ||
        (ln->n_inputs > 2 && ln->inputs[2] >= 0 && !zero[ln->inputs[2]]))
        return 0;
    const xf_shape *x = &g->values[ln->inputs[0]].shape;
    int64_t axis = ln->params.axis < 0 ? ln->params.axis + x->rank : ln->params.axis;
    int scale = ln->inputs[1];
    if (axis != x->rank - 1 || xf_shape_numel(&g->values[scale].shape) != 1) return 0;
    for (int d = 0; d < g->values[scale].shape.rank; d++) vf_prove_hold(held, g, scale, d);
    return 1;
}

int vf_prove_zero_output(const xf_graph *g, int ni, const unsigned char *zero, vf_held *held)
{
    const xf_node *nd = &g->nodes[ni];
    const xf_params *p = &nd->params;
    int z0 = in_zero(nd, 0, zero), z1 = in_zero(nd, 1, zero);
    switch (nd->op) {
    case XF_OP_ADD: return z0 && z1;
    case XF_OP_MUL:
    case XF_OP_SCALAR_MUL:
    case XF_OP_MATMUL: return z0 || z1;
    case XF_OP_RELU:
    case XF_OP_TANH:
    case XF_OP_ERF:
    case XF_OP_GELU:
    case XF_OP_IDENTITY:
    case XF_OP_TRANSPOSE:
    case XF_OP_ENLARGE:
    case XF_OP_SPLIT:
    case XF_OP_AVGPOOL:
    case XF_OP_MAXPOOL: return z0;
    case XF_OP_DROPOUT: return z0 && nd->n_outputs == 1; /* its mask output is ones */
    case XF_OP_CONV:
        return (z0 || z1) && !(nd->n_inputs > 2 && nd->inputs[2] >= 0) && p->activation != XF_ACT_SIGMOID;
    case XF_OP_CONCAT:
        for (int i = 0; i < nd->n_inputs; i++)
            if (!in_zero(nd, i, zero)) return 0;
        return nd->n_inputs > 0;
    case XF_OP_LAYERNORM: {
        /* zero variance over epsilon 0 is 0/0, not 0 */
        if (!(p->epsilon > 0) || (nd->n_inputs > 2 && nd->inputs[2] >= 0 && !zero[nd->inputs[2]]))
            return 0;
        const xf_shape *x = &g->values[nd->inputs[0]].shape;
        if (z0 || z1) return 1;
        if (tail_numel(x, p->axis) != 1) return 0;
        for (int64_t d = p->axis < 0 ? x->rank + p->axis : p->axis; d < x->rank; d++)
            vf_prove_hold(held, g, nd->inputs[0], (int)d);
        return 1;
    }
    case XF_OP_REDUCE_MEAN: {
        if (z0) return 1;
        const xf_shape *x = &g->values[nd->inputs[0]].shape;
        int64_t axis = p->n_axes == 1 ? (p->axes[0] < 0 ? p->axes[0] + x->rank : p->axes[0]) : -1;
        return axis == x->rank - 1 && vf_prove_centred_layernorm(g, nd->inputs[0], zero, held);
    }
    default: return 0;
    }
}
