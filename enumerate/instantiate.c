/*
 * instantiate.c — from a vocabulary variant and the shapes of the values it
 * is applied to, the concrete operator parameters and output shapes, or the
 * verdict that the variant does not apply. Variants whose parameters follow
 * the input (split into equal parts, swap the last two dims, depthwise conv) are
 * resolved here; the shape rule itself is the operator table's
 * (xf_op_infer), plus the enumerator's own limits: rank restrictions, equal
 * shapes for element-wise operators unless broadcasting is allowed, and the
 * config's largest dim and element count.
 */
#include "enumerate_internal.h"

#include <string.h>

int en_var_arity(const xf_enum_opvar *v)
{
    switch (v->op) {
    case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL:
        return 0;
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_DIV: case XF_OP_SCALAR_MUL:
    case XF_OP_POW: case XF_OP_MATMUL: case XF_OP_CONV: case XF_OP_CONCAT: case XF_OP_LAYERNORM:
        return 2;
    default:
        return 1;
    }
}

int en_var_outputs(const xf_enum_opvar *v)
{
    return v->op == XF_OP_SPLIT ? v->params.n_split : 1;
}

/* The arithmetic operators (ir's classes) and pow: two operands of one
 * shape unless the variant broadcasts. */
static int is_elementwise_binary(xf_op op)
{
    return xf_op_is(op, XF_OPC_ARITHMETIC) || op == XF_OP_POW;
}

/* The target shape of a reshape variant on input s (n_shape 0 when it does
 * not apply: rank too small, a size that does not divide). */
static void view_shape(xf_enum_pmode mode, int32_t size, const xf_shape *s, xf_params *p)
{
    int r = s->rank, n = 0;
    int64_t *d = p->shape;
    memset(p->shape, 0, sizeof p->shape);
    p->n_shape = 0;
    switch (mode) {
    case XF_ENUM_VIEW_FLATTEN:
        if (r < 3) return;
        d[n++] = s->dims[0] * s->dims[1];
        for (int i = 2; i < r; i++) d[n++] = s->dims[i];
        break;
    case XF_ENUM_VIEW_UNFLATTEN:
        if (r < 1 || r + 1 > XF_MAX_DIMS || size < 2 || s->dims[0] % size || s->dims[0] == size) return;
        d[n++] = size;
        d[n++] = s->dims[0] / size;
        for (int i = 1; i < r; i++) d[n++] = s->dims[i];
        break;
    case XF_ENUM_VIEW_SPLIT:
        if (r < 1 || r + 1 > XF_MAX_DIMS || size < 2 || s->dims[r - 1] % size || s->dims[r - 1] == size)
            return;
        for (int i = 0; i < r - 1; i++) d[n++] = s->dims[i];
        d[n++] = size;
        d[n++] = s->dims[r - 1] / size;
        break;
    default: /* merge the last two */
        if (r < 3) return;
        for (int i = 0; i < r - 2; i++) d[n++] = s->dims[i];
        d[n++] = s->dims[r - 2] * s->dims[r - 1];
        break;
    }
    p->n_shape = n;
}

void en_var_params(const xf_enum_opvar *v, const xf_shape *in_shapes, xf_params *p)
{
    *p = v->params;
    const xf_shape *s = &in_shapes[0];
    switch (v->mode) {
    case XF_ENUM_SPLIT_HALF: { /* n_split equal parts (2 unless parts=N) */
        int a = p->axis < 0 ? p->axis + s->rank : p->axis;
        int64_t d = a >= 0 && a < s->rank ? s->dims[a] : 0;
        int k = p->n_split >= 2 ? p->n_split : 2;
        p->n_split = k;
        for (int o = 0; o < k; o++) p->split[o] = d / k;
        break;
    }
    case XF_ENUM_SWAP_LAST2:
        p->n_axes = s->rank;
        for (int i = 0; i < s->rank; i++) p->axes[i] = i;
        if (s->rank >= 2) {
            p->axes[s->rank - 2] = s->rank - 1;
            p->axes[s->rank - 1] = s->rank - 2;
        }
        break;
    case XF_ENUM_DEPTHWISE:
        p->group = s->rank == 4 ? (int32_t)s->dims[1] : 1;
        break;
    case XF_ENUM_VIEW_FLATTEN:
    case XF_ENUM_VIEW_UNFLATTEN:
    case XF_ENUM_VIEW_SPLIT:
    case XF_ENUM_VIEW_MERGE:
        view_shape(v->mode, p->group, s, p);
        p->group = 0;
        break;
    default: break;
    }
}

int en_instantiate(const xf_enum_config *c, const xf_enum_opvar *v, int n_in,
                     const xf_shape *in_shapes, xf_params *params, int *n_out, xf_shape *out_shapes)
{
    for (int i = 0; i < n_in; i++) {
        if (v->rank > 0 && in_shapes[i].rank != v->rank) return 0;
        if (i < 2 && v->in_ranks[i] && !(v->in_ranks[i] & (1 << in_shapes[i].rank))) return 0;
    }
    if (is_elementwise_binary(v->op) && !v->broadcast && !xf_shape_equal(&in_shapes[0], &in_shapes[1]))
        return 0;
    if (v->mode == XF_ENUM_SPLIT_HALF) {
        const xf_shape *s = &in_shapes[0];
        int a = v->params.axis < 0 ? v->params.axis + s->rank : v->params.axis;
        int k = v->params.n_split >= 2 ? v->params.n_split : 2;
        if (a < 0 || a >= s->rank || s->dims[a] < k || s->dims[a] % k) return 0;
    }
    if (v->mode == XF_ENUM_SWAP_LAST2 && in_shapes[0].rank < 2) return 0;
    if (v->mode == XF_ENUM_DEPTHWISE && in_shapes[0].rank != 4) return 0;
    en_var_params(v, in_shapes, params);
    if (v->op == XF_OP_RESHAPE) {
        int k;
        /* each view variant makes the reshape of its kind, never one a unit
         * dim would make another kind (the kind is how rules match it) */
        xf_shape to = xf_shape_make(params->n_shape, params->shape);
        static const xf_view_kind want[] = {XF_VIEW_FLATTEN, XF_VIEW_UNFLATTEN, XF_VIEW_SPLIT_LAST,
                                            XF_VIEW_MERGE_LAST};
        if (params->n_shape == 0 ||
            xf_view_classify(&in_shapes[0], &to, &k) != want[v->mode - XF_ENUM_VIEW_FLATTEN])
            return 0;
    }
    xf_dtype dt[MAX_NODE_INPUTS] = {XF_F32, XF_F32}, odt[NODE_OUTS];
    int no = en_var_outputs(v);
    if (xf_op_infer(v->op, params, n_in, dt, in_shapes, no, odt, out_shapes, NULL) != XF_OK)
        return 0;
    for (int k = 0; k < no; k++) {
        int64_t numel = xf_shape_numel(&out_shapes[k]);
        if (numel < 1 || numel > c->max_numel) return 0;
        for (int d = 0; d < out_shapes[k].rank; d++)
            if (out_shapes[k].dims[d] > c->max_dim) return 0;
    }
    *n_out = no;
    return 1;
}
