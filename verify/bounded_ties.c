/*
 * bounded_ties.c — what a rule's operators say about the dims of its
 * values: a union-find over every dim of every value of both sides that
 * ties the dims an operator forces equal (ewadd's operands, matmul's inner
 * dims, conv channels, the other axes of a concat, the two sides' shared
 * inputs and their outputs...), marks a class fixed when one of its dims is
 * set by the rule's parameters or constants (a kernel size, a generator's
 * shape, a mean's kept axis), marks a dim summed when a product sums over
 * it (a matmul's inner dim, a convolution's input channels) or, strict, a
 * keepdims mean reduces it (marked mixing as well), and mixing
 * when an operator combines elements at different indices along it in any
 * other way (a window, a softmax, layer norm or mean along it, a concat or
 * split along it unless it moves whole blocks of one class: the strict
 * build decides concat and split axes and matmul batch dims last, in
 * bounded_ties_blocks.c). Strict, a stride-1 window that keeps the size
 * and a slice of constant positions mark their axis `edge` instead of
 * mixing: read near its ends only, with the window's reach and the slice's
 * end recorded (bounded_domain.c, "near the ends").
 *
 * Two readers. The choice of input shapes (bounded_shapes.c) uses the ties
 * to make its search small (a generator is free there: it is sized from
 * its consumer, as the matcher sizes it); there a tie that only usually holds (matmul
 * batch dims equal at the rule's own shapes, a grouped convolution's
 * channels) costs nothing, since shape inference decides each candidate.
 * The domain argument (bounded_domain.c) uses them as facts about every
 * shape the rule applies to: built `strict`, only ties every application
 * satisfies are made, and the dims of the others are marked mixing
 * (matmul batch dims of two classes, which may broadcast; a grouped convolution's
 * channels; a layer norm's or batch norm's parameters, which may
 * broadcast; element-wise operands of different shapes; operators this
 * table does not know), and a generator's dims are fixed: a rule proved
 * that way holds at its generators' own sizes, which its recorded domain
 * says (worker.c). Strict, the rule's validity domain, where known, adds
 * its equalities (tie_domain): every admissible shape satisfies it.
 *
 * "Applies" is the bounded check's admissible set (docs/verify.md, "Which
 * input shapes"): ranks kept, parameters re-derived as the enumerator
 * derives them (equal parts of a split, depthwise group), element-wise
 * operands that are equal at the rule's own shapes stay equal.
 */
#include "bounded_internal.h"

#include <string.h>

/* The element-wise operators of the rule language (ir's operator classes). */
static int ew_rule_op(xf_op op)
{
    return xf_op_is(op, XF_OPC_ELEMENTWISE) && !xf_op_is(op, XF_OPC_IMPORTED);
}

int vf_bounded_ew_binary(xf_op op)
{
    return ew_rule_op(op) && op != XF_OP_SCALAR_MUL && xf_op_get(op)->max_inputs == 2;
}

int vf_bounded_split_parts(const xf_node *nd, const xf_shape *own_in)
{
    if (nd->op != XF_OP_SPLIT) return 0;
    int a = xf_norm_axis(nd->params.axis, own_in->rank);
    return a < 0 ? 0 : xf_split_equal_parts(&nd->params, own_in->dims[a]);
}

int vf_bounded_mean_reduces(const xf_node *nd, int rank, int d)
{
    int red[XF_MAX_DIMS];
    return xf_reduce_axes(&nd->params, rank, red) >= 0 && d >= 0 && d < rank && red[d];
}

int vf_bounded_depthwise(const xf_node *nd, const xf_shape *own_in)
{
    return nd->op == XF_OP_CONV && own_in->rank == 4 && nd->params.group > 1 &&
           nd->params.group == own_in->dims[1];
}

int vf_bounded_ties_find(xfb_ties *t, int s)
{
    while (t->parent[s] != s) s = t->parent[s] = t->parent[t->parent[s]];
    return s;
}

void vf_bounded_ties_join(xfb_ties *t, int a, int b)
{
    a = vf_bounded_ties_find(t, a), b = vf_bounded_ties_find(t, b);
    if (a == b) return;
    t->parent[b] = a;
    t->fixed[a] |= t->fixed[b];
    if (t->one) t->one[a] |= t->one[b];
}

/* One graph side while tying its nodes. */
typedef struct side {
    xfb_ties *t;
    const xf_graph *g;
    int k;    /* 0 src, 1 dst */
    xf_op op; /* the operator being tied: what mix() records */
} side;

static int rank_of(const side *s, int v) { return s->g->values[v].shape.rank; }

/* Slot of dim d of v (d counted from the front, negative from the back), -1 outside. */
static int slot(const side *s, int v, int d)
{
    int r = rank_of(s, v), i = d < 0 ? d + r : d;
    return i >= 0 && i < r ? s->t->base[s->k][v] + i : -1;
}

static void tie(const side *s, int v, int dv, int w, int dw)
{
    int a = slot(s, v, dv), b = slot(s, w, dw);
    if (a >= 0 && b >= 0) vf_bounded_ties_join(s->t, a, b);
}

static void fix(const side *s, int v, int d)
{
    int a = slot(s, v, d);
    if (a >= 0) s->t->fixed[vf_bounded_ties_find(s->t, a)] = 1;
}

static void mix(const side *s, int v, int d)
{
    int a = slot(s, v, d);
    if (a >= 0) s->t->mixing[a] |= vf_bounded_mix_bit(s->op);
}

static void sum(const side *s, int v, int d)
{
    int a = slot(s, v, d);
    if (a >= 0) s->t->summed[a] = 1;
}

/* Dim d of v: a constant along it is added to the value (t->bias). */
static void bias(const side *s, int v, int d)
{
    int a = slot(s, v, d);
    if (a >= 0) s->t->bias[a] = 1;
}

static void mix_all(const side *s, int v)
{
    for (int d = 0; d < rank_of(s, v); d++) mix(s, v, d);
}

/* Every dim of every operand and result of nd mixing. */
static void mix_node(const side *s, const xf_node *nd)
{
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] >= 0) mix_all(s, nd->inputs[i]);
    for (int i = 0; i < nd->n_outputs; i++) mix_all(s, nd->outputs[i]);
}

/* Axis `axis` (counted from the front) of every operand and result of nd mixing. */
static void mix_axis(const side *s, const xf_node *nd, int axis)
{
    for (int i = 0; i < nd->n_inputs + nd->n_outputs; i++) {
        int v = i < nd->n_inputs ? nd->inputs[i] : nd->outputs[i - nd->n_inputs];
        if (v >= 0) mix(s, v, axis);
    }
}

/* All dims of v and w equal (same rank). */
static void tie_all(const side *s, int v, int w)
{
    if (rank_of(s, v) != rank_of(s, w)) return;
    for (int d = 0; d < rank_of(s, v); d++) tie(s, v, d, w, d);
}

/* Every dim but `axis` equal between the node's inputs and outputs; `axis`
 * mixing, or, strict, left to bounded_ties_blocks.c (whole blocks). */
static void tie_but_axis(const side *s, const xf_node *nd, int axis)
{
    int v0 = nd->inputs[0];
    for (int i = 0; i < nd->n_inputs + nd->n_outputs; i++) {
        int v = i < nd->n_inputs ? nd->inputs[i] : nd->outputs[i - nd->n_inputs];
        if (v < 0 || rank_of(s, v) != rank_of(s, v0)) {
            if (v >= 0) mix_all(s, v);
            continue;
        }
        for (int d = 0; d < rank_of(s, v0); d++)
            if (d != axis) tie(s, v0, d, v, d);
    }
    if (!s->t->strict) mix_axis(s, nd, axis);
}

/* Dim d of v read near its ends only (strict): a window that keeps the
 * size, reaching `reach` positions, or a slice of constant positions
 * ending at `end` (bounded_domain.c, "near the ends"). */
static void edge(const side *s, int v, int d, int reach, int end)
{
    int a = slot(s, v, d);
    if (a < 0) return;
    s->t->edge[a] = 1;
    s->t->reach[a] += reach;
    if (end > s->t->slice_end[a]) s->t->slice_end[a] = end;
}

/* The spatial dims of x and y mixing; equal for a stride-1 'same' window,
 * which, strict, reads them near their ends only (its reach recorded once,
 * at y). */
static void tie_window(const side *s, const xf_params *p, int kh, int kw, int x, int y)
{
    int k[2] = {kh, kw};
    for (int i = 0; i < 2; i++) {
        int stride = p->stride[i] ? p->stride[i] : 1, dil = p->dilation[i] ? p->dilation[i] : 1;
        int lo = p->pads[i], hi = p->pads[i + 2];
        if (stride == 1 && dil == 1 && lo >= 0 && hi >= 0 && lo + hi == k[i] - 1 &&
            !p->ceil_mode) {
            tie(s, x, 2 + i, y, 2 + i);
            if (s->t->strict) {
                edge(s, x, 2 + i, 0, 0);
                edge(s, y, 2 + i, lo > hi ? lo : hi, 0);
                continue;
            }
        }
        mix(s, x, 2 + i);
        mix(s, y, 2 + i);
    }
}

/* A slice of one axis at constant positions [start, end), 0 <= start <
 * end <= the own size: the output's axis has end - start elements
 * wherever the rule applies (its validity domain says the input's axis is
 * at least end: ir/domain_infer.c), the other axes are kept, and, strict,
 * the input's axis is read near its start only. An end that is the own
 * size, [0, e) the whole axis at the own shapes, is that constant too: the
 * domain reads it so, and the matcher binds it to a model slice ending at
 * e only (match_slice_ends_agree), of an axis of any size >= e. Only an
 * end "to the end" (XF_SLICE_TO_THE_END, past the own size) follows the
 * axis; it mixes, as does any other slice. */
static void tie_slice(const side *s, const xf_rule *r, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], y = nd->outputs[0], rank = rank_of(s, x);
    int a = p->n_axes == 1 ? xf_norm_axis(p->axes[0], rank) : -1;
    int64_t own = a >= 0 ? s->g->values[x].shape.dims[a] : 0;
    if (!s->t->strict || !r->domain.known || a < 0 || rank_of(s, y) != rank ||
        (p->steps[0] != 1 && p->steps[0] != 0) || p->starts[0] < 0 ||
        p->ends[0] <= p->starts[0] || p->ends[0] > own) {
        mix_node(s, nd);
        return;
    }
    for (int d = 0; d < rank; d++)
        if (d != a) tie(s, x, d, y, d);
    fix(s, y, a);
    edge(s, x, a, 0, (int)p->ends[0]);
}

static void tie_matmul(const side *s, const xf_node *nd)
{
    const xf_graph *g = s->g;
    int x = nd->inputs[0], w = nd->inputs[1], y = nd->outputs[0], ry = rank_of(s, y);
    if (rank_of(s, x) < 2 || rank_of(s, w) < 2) {
        mix_node(s, nd);
        return;
    }
    tie(s, x, -1, w, -2);
    sum(s, x, -1);
    sum(s, w, -2);
    tie(s, y, -2, x, -2);
    tie(s, y, -1, w, -1);
    /* Batch dims broadcast: equal at the own shapes, one of them may be 1
     * at others. Strict: decided once every other tie is made
     * (bounded_ties_blocks.c): index-preserving where the operands' dims
     * are one class. */
    for (int d = 0; !s->t->strict && d < ry - 2; d++) {
        mix(s, y, d);
        for (int i = 0; i < 2; i++) {
            int v = nd->inputs[i], dv = d - ry + rank_of(s, v);
            if (dv < 0) continue;
            mix(s, v, dv);
            if (!s->t->strict && g->values[v].shape.dims[dv] == g->values[y].shape.dims[d])
                tie(s, y, d, v, dv);
        }
    }
}

static void tie_conv(const side *s, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], w = nd->inputs[1], y = nd->outputs[0];
    if (rank_of(s, x) != 4 || rank_of(s, w) != 4) {
        mix_node(s, nd);
        return;
    }
    tie(s, y, 0, x, 0);
    tie(s, y, 1, w, 0);
    fix(s, w, 2);
    fix(s, w, 3);
    mix(s, w, 2);
    mix(s, w, 3);
    if (!p->group || p->group == 1) {
        tie(s, x, 1, w, 1);
        sum(s, x, 1);
        sum(s, w, 1);
    } else {
        mix(s, x, 1);
        mix(s, w, 1);
        mix(s, w, 0);
        mix(s, y, 1);
        if (vf_bounded_depthwise(nd, &s->g->values[x].shape)) fix(s, w, 1);
        else if (!s->t->strict) fix(s, x, 1), fix(s, w, 1); /* channels: any multiple of group */
    }
    if (nd->n_inputs > 2) tie(s, nd->inputs[2], 0, w, 0), bias(s, y, 0);
    tie_window(s, p, p->kernel[0], p->kernel[1], x, y);
}

/* A layer norm's or batch norm's parameters: tied to the dims they scale
 * (search), or mixing, as they may broadcast (strict). */
static void tie_norm_params(const side *s, const xf_node *nd, int batchnorm)
{
    int x = nd->inputs[0];
    for (int i = 1; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (s->t->strict) {
            mix_all(s, v);
        } else if (batchnorm) {
            tie(s, v, 0, x, 1);
        } else {
            for (int d = 1; d <= rank_of(s, v); d++) tie(s, v, -d, x, -d);
        }
    }
}

/* Add, sub or mul of a rank-0 operand and another: the scalar is one
 * element at every admissible shape (ranks are kept; the matcher binds it
 * to a one-element value only: match/match.c, complete; a derived rule
 * keeps that condition: ir/domain_infer.c, scalars_bound), used whole at every
 * index, so the result keeps the other operand's dims, index for index,
 * as a one-operand operator does. Added or subtracted, it is a constant
 * along each of them (bias: the argument for summed classes needs every
 * term of a sum to hold its index; bounded_domain.c); multiplied, every
 * term keeps the other operand's entry. 0 when nd is not such a node. */
static int tie_scalar(const side *s, const xf_node *nd)
{
    if ((nd->op != XF_OP_ADD && nd->op != XF_OP_SUB && nd->op != XF_OP_MUL) || nd->n_inputs != 2)
        return 0;
    int i = rank_of(s, nd->inputs[0]) == 0 ? 1 : rank_of(s, nd->inputs[1]) == 0 ? 0 : -1;
    int y = nd->outputs[0];
    if (i < 0 || !xf_shape_equal(&s->g->values[nd->inputs[i]].shape, &s->g->values[y].shape))
        return 0;
    tie_all(s, nd->inputs[i], y);
    for (int d = 0; nd->op != XF_OP_MUL && d < rank_of(s, y); d++) bias(s, y, d);
    return 1;
}

/* An element-wise operator of two or three operands. Operands equal at the
 * own shapes stay equal at every admissible shape (bounded_shapes.c,
 * params_at) only for the two-operand operators; anything else may
 * broadcast, but for a rank-0 operand (tie_scalar). */
static void tie_broadcast(const side *s, const xf_node *nd)
{
    const xf_graph *g = s->g;
    if (tie_scalar(s, nd)) return;
    int x = nd->inputs[0], y = nd->outputs[0];
    int kept = vf_bounded_ew_binary(nd->op) && nd->n_inputs == 2 &&
               xf_shape_equal(&g->values[x].shape, &g->values[nd->inputs[1]].shape);
    if (!kept) mix_node(s, nd);
    if (kept || !s->t->strict)
        for (int i = 0; i < nd->n_inputs; i++)
            if (xf_shape_equal(&g->values[nd->inputs[i]].shape, &g->values[y].shape))
                tie_all(s, nd->inputs[i], y);
}

static void tie_node(const side *s, const xf_rule *r, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    const xf_graph *g = s->g;
    int x = nd->n_inputs > 0 ? nd->inputs[0] : -1, y = nd->outputs[0];
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] < 0) { /* omitted optional input: leave to inference */
            mix_node(s, nd);
            return;
        }
    /* element-wise: one operand (or a rank-0 scalar's) keeps the dims; more may
     * broadcast */
    if (ew_rule_op(nd->op) &&
        (xf_op_get(nd->op)->min_inputs == 1 || nd->op == XF_OP_SCALAR_MUL)) {
        tie_all(s, x, y);
        return;
    }
    if (ew_rule_op(nd->op)) {
        tie_broadcast(s, nd);
        return;
    }
    switch (nd->op) {
    case XF_OP_SOFTMAX: {
        tie_all(s, x, y);
        int a = xf_norm_axis(p->axis, rank_of(s, x));
        if (a >= 0) mix_axis(s, nd, a);
        else mix_node(s, nd);
        break;
    }
    case XF_OP_MATMUL:
        tie_matmul(s, nd);
        break;
    case XF_OP_CONV:
        tie_conv(s, nd);
        break;
    case XF_OP_AVGPOOL: case XF_OP_MAXPOOL:
        if (rank_of(s, x) != 4) {
            mix_node(s, nd);
            break;
        }
        tie(s, y, 0, x, 0);
        tie(s, y, 1, x, 1);
        tie_window(s, p, p->kernel[0], p->kernel[1], x, y);
        break;
    case XF_OP_GLOBAL_AVGPOOL: case XF_OP_ENLARGE: /* spatial dims set by the operator */
        tie(s, y, 0, x, 0);
        tie(s, y, 1, x, 1);
        fix(s, y, 2);
        fix(s, y, 3);
        for (int d = 2; d < 4; d++) mix(s, x, d), mix(s, y, d);
        break;
    case XF_OP_REDUCE_MEAN:
        if (!p->keepdims) {
            mix_node(s, nd);
            break;
        }
        for (int d = 0; d < rank_of(s, x); d++) {
            if (!vf_bounded_mean_reduces(nd, rank_of(s, x), d)) {
                tie(s, x, d, y, d);
                continue;
            }
            fix(s, y, d), mix(s, x, d), mix(s, y, d);
            /* strict: also a sum over the axis (scaled by one over its
             * size), which bounded_domain.c ("averaged") counts where
             * nothing but such means mixes the class */
            if (s->t->strict) sum(s, x, d);
        }
        break;
    case XF_OP_LAYERNORM: {
        tie_all(s, x, y);
        int a = xf_norm_axis(p->axis, rank_of(s, x));
        for (int d = a < 0 ? 0 : a; d < rank_of(s, x); d++) mix_axis(s, nd, d);
        tie_norm_params(s, nd, 0);
        break;
    }
    case XF_OP_BATCHNORM:
        tie_all(s, x, y);
        tie_norm_params(s, nd, 1);
        break;
    case XF_OP_CONCAT: {
        int a = xf_norm_axis(p->axis, rank_of(s, x));
        if (a < 0) mix_node(s, nd);
        else tie_but_axis(s, nd, a);
        break;
    }
    case XF_OP_SPLIT: {
        int a = xf_norm_axis(p->axis, rank_of(s, x));
        if (a < 0) {
            mix_node(s, nd);
            break;
        }
        tie_but_axis(s, nd, a);
        if (!s->t->strict && vf_bounded_split_parts(nd, &g->values[x].shape) &&
            !(s->k == 0 && xf_rule_split_cuts_freely(r, (int)(nd - g->nodes))))
            for (int o = 1; o < nd->n_outputs; o++) tie(s, nd->outputs[0], a, nd->outputs[o], a);
        break;
    }
    case XF_OP_TRANSPOSE:
        for (int d = 0; d < rank_of(s, y); d++)
            tie(s, y, d, x, p->n_axes ? (int)p->axes[d] : rank_of(s, y) - 1 - d);
        break;
    case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL:
        if (s->t->strict) { /* the domain argument: its size is the rule's */
            for (int d = 0; d < rank_of(s, y); d++) fix(s, y, d);
            /* an identity is square in every graph (its own shape rule,
             * which the validity domain states too): one class */
            if (nd->op != XF_OP_CONST_ONES && nd->op != XF_OP_CONST_POOL && rank_of(s, y) >= 2)
                tie(s, y, 0, y, 1);
            break;
        }
        /* the search: sized from its consumer (bounded_shapes.c), so free
         * but for what its shape keeps: square, a kernel's window */
        if (nd->op != XF_OP_CONST_ONES && rank_of(s, y) >= 2) tie(s, y, 0, y, 1);
        if (nd->op == XF_OP_CONST_POOL) fix(s, y, 1);
        for (int d = 2; rank_of(s, y) == 4 && nd->op != XF_OP_CONST_ONES && d < 4; d++)
            fix(s, y, d);
        break;
    case XF_OP_CONSTANT_OF_SHAPE:
        for (int d = 0; d < rank_of(s, y); d++) fix(s, y, d);
        break;
    case XF_OP_SLICE:
        tie_slice(s, r, nd);
        break;
    case XF_OP_RESHAPE: /* strict, of a kind matched by kind: bounded_ties_views.c */
        if (!vf_bounded_ties_view(s->t, g, s->k, nd)) mix_node(s, nd);
        break;
    default: /* pad, gather...: output dims are left to inference */
        mix_node(s, nd);
        break;
    }
}


/* Slot of dim `axis` (negative: from the end) of rule input `input`, -1 outside. */
static int input_slot(const xf_rule *r, const xfb_ties *t, xf_dim_ref ref)
{
    if (ref.input < 0 || ref.input >= r->src.n_inputs) return -1;
    int v = r->src.inputs[ref.input], rank = r->src.values[v].shape.rank;
    int d = ref.axis < 0 ? ref.axis + rank : ref.axis;
    return d >= 0 && d < rank ? t->base[0][v] + d : -1;
}

/* The rule's validity domain, where known (strict): the check and every
 * application of the rule stay inside it (docs/verify.md, "Validity
 * domains"), so its equalities are facts at every admissible shape. Two
 * input dims equal (`x[0] == y[0]`: matmul batch dims equal in the rule
 * stay equal) are joined; an input dim equal to a constant (`y[0] == 1`:
 * a dim the rule broadcasts stays 1; a pinned dim) keeps its own size. */
static void tie_domain(const xf_rule *r, xfb_ties *t)
{
    for (int i = 0; r->domain.known && i < r->domain.n; i++) {
        const xf_dom_atom *a = &r->domain.a[i];
        if (a->kind != XF_DOM_EQ) continue;
        int x = a->n >= 1 ? input_slot(r, t, a->dim[0]) : -1;
        if (x < 0) continue;
        if (a->n == 2 && a->c == 0 && a->coef[0] && a->coef[0] == -a->coef[1]) {
            int y = input_slot(r, t, a->dim[1]);
            if (y >= 0) vf_bounded_ties_join(t, x, y);
        } else if (a->n == 1 && a->coef[0]) {
            const xf_value *in = &r->src.values[r->src.inputs[a->dim[0].input]];
            int d = a->dim[0].axis < 0 ? a->dim[0].axis + in->shape.rank : a->dim[0].axis;
            if (a->coef[0] * in->shape.dims[d] + a->c == 0) /* holds at the own size */
                t->fixed[vf_bounded_ties_find(t, x)] = 1;
        }
    }
}

static xf_status build(const xf_rule *r, int strict, const xfb_case *cas, xfb_ties *t,
                       xf_error *err)
{
    memset(t, 0, sizeof *t);
    t->strict = strict;
    t->cas = cas;
    t->pair[0] = t->pair[1] = -1;
    int n = 0;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(r, k);
        t->base[k] = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
        if (!t->base[k]) goto nomem;
        for (int v = 0; v < g->n_values; v++) t->base[k][v] = n, n += g->values[v].shape.rank;
    }
    t->n = n;
    if (strict && xf_rule_has_views(r) && vf_bounded_ties_views_init(r, t, err) != XF_OK)
        goto nomem; /* bounded_ties_views.c */
    t->parent = xf_malloc(sizeof(int) * ((size_t)n + 1));
    t->fixed = xf_calloc((size_t)n + 1, 1);
    t->mixing = xf_calloc((size_t)n + 1, sizeof *t->mixing);
    t->summed = xf_calloc((size_t)n + 1, 1);
    t->edge = xf_calloc((size_t)n + 1, 1);
    t->reach = xf_calloc((size_t)n + 1, sizeof *t->reach);
    t->slice_end = xf_calloc((size_t)n + 1, sizeof *t->slice_end);
    t->one = xf_calloc((size_t)n + 1, 1);
    t->bias = xf_calloc((size_t)n + 1, 1);
    if (!t->parent || !t->fixed || !t->mixing || !t->summed || !t->edge || !t->reach ||
        !t->slice_end || !t->one || !t->bias)
        goto nomem;
    for (int i = 0; i < n; i++) t->parent[i] = i;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(r, k);
        side sd = {t, g, k, XF_OP_COUNT};
        for (int v = 0; v < g->n_values; v++)
            if (g->values[v].kind == XF_VALUE_CONST)
                for (int d = 0; d < g->values[v].shape.rank; d++) fix(&sd, v, d);
        for (int i = 0; i < g->n_nodes; i++) {
            sd.op = g->nodes[i].op;
            tie_node(&sd, r, &g->nodes[i]);
        }
    }
    for (int i = 0; i < r->src.n_inputs; i++) {
        int a = r->src.inputs[i], b = r->dst.inputs[i];
        for (int d = 0; d < r->src.values[a].shape.rank; d++)
            vf_bounded_ties_join(t, t->base[0][a] + d, t->base[1][b] + d);
    }
    for (int o = 0; o < r->src.n_outputs; o++) {
        int a = r->src.outputs[o], b = r->dst.outputs[o];
        for (int d = 0; d < r->src.values[a].shape.rank; d++)
            vf_bounded_ties_join(t, t->base[0][a] + d, t->base[1][b] + d);
    }
    if (!strict) return XF_OK;
    tie_domain(r, t);
    xf_status st = vf_bounded_ties_blocks(r, t, err);
    if (st == XF_OK) st = vf_bounded_ties_views_settle(t, err);
    if (st != XF_OK) vf_bounded_ties_free(t);
    return st;
nomem:
    vf_bounded_ties_free(t);
    return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
}

xf_status vf_bounded_ties_build(const xf_rule *r, int strict, xfb_ties *t, xf_error *err)
{
    return build(r, strict, NULL, t, err);
}

xf_status vf_bounded_ties_build_case(const xf_rule *r, const xfb_case *c, xfb_ties *t,
                                     xf_error *err)
{
    return build(r, 1, c, t, err);
}

int vf_bounded_ties_slot(const xfb_ties *t, int k, int value, int dim)
{
    return t->base[k][value] + dim;
}

void vf_bounded_ties_free(xfb_ties *t)
{
    xf_free(t->parent);
    xf_free(t->fixed);
    xf_free(t->mixing);
    xf_free(t->summed);
    xf_free(t->edge);
    xf_free(t->reach);
    xf_free(t->slice_end);
    xf_free(t->one);
    xf_free(t->bias);
    xf_free(t->views);
    xf_free(t->view_of);
    xf_free(t->size);
    xf_free(t->input_slot);
    xf_free(t->block_of);
    xf_free(t->blocks);
    xf_free(t->has_blocks);
    xf_free(t->n_parts);
    xf_free(t->parts);
    xf_free(t->base[0]);
    xf_free(t->base[1]);
    memset(t, 0, sizeof *t);
}
