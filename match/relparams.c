/*
 * relparams.c — conversion of axis, axes and permutation parameters between
 * the absolute form stored on nodes and the rank-relative form used to match
 * rules across ranks (see relparams_internal.h for the why).
 */
#include "match/relparams_internal.h"

#include <stdlib.h>
#include <string.h>

int match_relparams_rank_polymorphic(xf_op op)
{
    switch (op) {
    case XF_OP_RESHAPE:
    case XF_OP_EXPAND:
    case XF_OP_FLATTEN:
    case XF_OP_SLICE:
    case XF_OP_PAD:
    case XF_OP_CONSTANT_OF_SHAPE:
    case XF_OP_CONV: /* NCHW only */
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL:
    case XF_OP_GLOBAL_AVGPOOL:
    case XF_OP_BATCHNORM:
    case XF_OP_ENLARGE:
    case XF_OP_OPAQUE: return 0;
    default: return 1;
    }
}

int match_relparams_is_generator(xf_op op)
{
    return op == XF_OP_CONST_IDENTITY_CONV || op == XF_OP_CONST_IDENTITY_MATRIX ||
           op == XF_OP_CONST_ONES || op == XF_OP_CONST_POOL;
}

static int uses_axis(xf_op op)
{
    return op == XF_OP_CONCAT || op == XF_OP_SPLIT || op == XF_OP_SOFTMAX ||
           op == XF_OP_GATHER || op == XF_OP_LAYERNORM;
}

static int uses_axes_set(xf_op op)
{
    return op == XF_OP_REDUCE_MEAN || op == XF_OP_SQUEEZE || op == XF_OP_UNSQUEEZE;
}

int match_relparams_axis_rank(xf_op op, const xf_params *p, int first_input_rank)
{
    if (op == XF_OP_UNSQUEEZE) return first_input_rank + p->n_axes;
    return first_input_rank;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int match_relparams_to_relative(xf_op op, const xf_params *p, int rank, xf_params *rel)
{
    *rel = *p;
    if (!match_relparams_rank_polymorphic(op)) return 1;
    if (match_relparams_is_generator(op)) {
        rel->n_shape = 0;
        memset(rel->shape, 0, sizeof rel->shape);
        return 1;
    }
    if (uses_axis(op)) {
        int64_t a = p->axis < 0 ? p->axis + rank : p->axis;
        if (a < 0 || a >= rank) return 0;
        rel->axis = (int32_t)(a - rank);
    } else if (uses_axes_set(op)) {
        if (p->n_axes < 0 || p->n_axes > XF_MAX_DIMS) return 0;
        for (int i = 0; i < p->n_axes; i++) {
            int64_t a = p->axes[i] < 0 ? p->axes[i] + rank : p->axes[i];
            if (a < 0 || a >= rank) return 0;
            rel->axes[i] = a - rank;
        }
        qsort(rel->axes, (size_t)p->n_axes, sizeof rel->axes[0], cmp_i64);
    } else if (op == XF_OP_TRANSPOSE) {
        if (p->n_axes != rank) return 0;
        int lead = 0;
        while (lead < rank && p->axes[lead] == lead) lead++;
        memset(rel->axes, 0, sizeof rel->axes);
        rel->n_axes = rank - lead;
        for (int i = lead; i < rank; i++) {
            if (p->axes[i] < lead || p->axes[i] >= rank) return 0;
            rel->axes[i - lead] = p->axes[i] - rank;
        }
    }
    return 1;
}

int match_relparams_to_absolute(xf_op op, const xf_params *rel, int rank, xf_params *abs)
{
    *abs = *rel;
    if (!match_relparams_rank_polymorphic(op) || match_relparams_is_generator(op)) return 1;
    if (uses_axis(op)) {
        if (rel->axis >= 0 || -rel->axis > rank) return 0;
        abs->axis = rel->axis + rank;
    } else if (uses_axes_set(op)) {
        for (int i = 0; i < rel->n_axes; i++) {
            if (rel->axes[i] >= 0 || -rel->axes[i] > rank) return 0;
            abs->axes[i] = rel->axes[i] + rank;
        }
    } else if (op == XF_OP_TRANSPOSE) {
        if (rel->n_axes > rank) return 0;
        int lead = rank - rel->n_axes;
        memset(abs->axes, 0, sizeof abs->axes);
        abs->n_axes = rank;
        for (int i = 0; i < lead; i++) abs->axes[i] = i;
        for (int i = 0; i < rel->n_axes; i++) abs->axes[lead + i] = rel->axes[i] + rank;
    }
    return 1;
}
