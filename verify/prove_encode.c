/*
 * prove_encode.c — turns a rule side (an xf_graph) into Z3 terms of the
 * axiomatic encoding: graph input i becomes the tensor constant "in<i>"
 * (shared by both sides of a rule), each node an application of its
 * operator's uninterpreted function. Parameters become Int arguments in the
 * form the axioms expect: axes relative to the last dimension, concat with
 * the sizes of its parts along the axis (n-ary concat folded left), each
 * split output a slice (axis, offset, length, input size) — these sizes,
 * a zero tensor's shape and a head count as Int terms over the rule's dims
 * (vf_sizes: the forms of its domain, whose conditions the query assumes),
 * never as their numbers at the own shapes, so that `slice[2:4](concat(a,
 * b)) => b`, at a 2 wide, is not proved where the domain lets a be 3 —,
 * conv padding as
 * a mode (same/valid), depthwise groups as -1, a layer-norm with a scale
 * of ones and no bias as the unit-scale layer-norm lnorm. Shape facts are used
 * directly: enlarging a kernel to its own size, swapping two axes of size 1
 * and a mean over an axis of size 1 are the identity, a softmax over an
 * axis of size 1 is the ones constant, a stride along a
 * spatial axis of size 1 is 1, and every value whose last two axes have
 * size 1 is stated equal to its transpose (so transpose axioms match it)
 * and hw1 (the 1x1-convolution axioms' guard), every rank-0 value scalar,
 * a 'same' average pooling of a 1x1 image the image times the scalar
 * 1/(kh*kw); a value that is zero whatever the inputs (prove_zero.c) is
 * the zero tensor of its shape. A split's input is stated equal to the
 * concat of its parts. Each size-1 (or own-size) fact above is held
 * (vf_prove_hold): the rule's domain then asks for that size, so a proof
 * never covers the shapes where the fact fails (transpose[1,0,2](x) => x,
 * proved at x's own [1,1,4], holds where x[-3] == x[-2] == 1, not at
 * [3,3,4]).
 * Operators or parameter
 * settings the axioms do not model are XF_ERR_UNSUPPORTED naming the node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/prove_internal.h"

static Z3_ast mk_int(xf_verifier *v, int64_t x)
{
    return Z3_mk_int64(v->ctx, x, Z3_mk_int_sort(v->ctx));
}

/* f applied to the Int terms ints[0..n_int) and the tensors ts[0..n_t). */
static Z3_ast appz(xf_verifier *v, xf_ax_fn f, int n_int, const Z3_ast *ints, int n_t,
                   const Z3_ast *ts)
{
    Z3_ast args[1 + XF_MAX_DIMS + 2] = {0};
    int n = 0;
    for (int i = 0; i < n_int; i++) args[n++] = ints[i];
    for (int i = 0; i < n_t; i++) args[n++] = ts[i];
    return Z3_mk_app(v->ctx, v->fns[f], (unsigned)n, args);
}

static Z3_ast app(xf_verifier *v, xf_ax_fn f, int n_int, const int64_t *ints, int n_t,
                  const Z3_ast *ts)
{
    Z3_ast k[1 + XF_MAX_DIMS];
    for (int i = 0; i < n_int; i++) k[i] = mk_int(v, ints[i]);
    return appz(v, f, n_int, k, n_t, ts);
}

/* ------------------------------------------------------------ the sizes */

/* Dim `axis` of value `value` of the side being encoded, as a form. */
static const xf_dim_form *size_form(const vf_sizes *sz, int value, int axis)
{
    return &sz->forms->dims[sz->side][sz->forms->off[sz->side][value] + axis];
}

static Z3_ast size_at(xf_verifier *v, const vf_sizes *sz, int value, int axis)
{
    return vf_form_term(v, sz->var, size_form(sz, value, axis));
}

/* A running sum of sizes (a concat's or a split's offset): a form, or a
 * Z3 sum once the form would overflow. */
typedef struct size_sum {
    xf_dim_form f;
    Z3_ast t; /* NULL: f */
} size_sum;

static size_sum sum_zero(void)
{
    size_sum s;
    memset(&s, 0, sizeof s);
    s.f.den = 1;
    return s;
}

static Z3_ast sum_term(xf_verifier *v, const vf_sizes *sz, const size_sum *s)
{
    return s->t ? s->t : vf_form_term(v, sz->var, &s->f);
}

static void sum_add(xf_verifier *v, const vf_sizes *sz, size_sum *s, const xf_dim_form *f)
{
    if (!s->t && xf_dim_form_add(&s->f, f, &s->f) == 0) return;
    Z3_ast two[2] = {sum_term(v, sz, s), vf_form_term(v, sz->var, f)};
    s->t = Z3_mk_add(v->ctx, 2, two);
}

/* Part `value` (along axis a < 0) of a concat or split whose earlier parts
 * sum to *done, as (concat/slice a offset length ...)'s first Int terms;
 * *done grows by it. */
static void part_terms(xf_verifier *v, const vf_sizes *sz, const xf_graph *g, int value,
                       int64_t a, size_sum *done, Z3_ast *k)
{
    int axis = (int)(g->values[value].shape.rank + a);
    k[0] = mk_int(v, a);
    k[1] = sum_term(v, sz, done);
    k[2] = size_at(v, sz, value, axis);
    sum_add(v, sz, done, size_form(sz, value, axis));
}

static int64_t neg_axis(int64_t axis, int rank)
{
    return axis < 0 ? axis : axis - rank;
}

/* Padding mode of a conv/pool window: same ((k-1)/2 each side, odd k),
 * valid (none; a 1x1 window counts as same), -1 otherwise. */
static int pad_mode(const int32_t *pads, int64_t kh, int64_t kw)
{
    if (kh % 2 == 1 && kw % 2 == 1 && pads[0] == (kh - 1) / 2 && pads[2] == (kh - 1) / 2 &&
        pads[1] == (kw - 1) / 2 && pads[3] == (kw - 1) / 2)
        return XF_AX_PAD_SAME;
    if (pads[0] == 0 && pads[1] == 0 && pads[2] == 0 && pads[3] == 0) return XF_AX_PAD_VALID;
    return -1;
}

static int32_t or1(int32_t x)
{
    return x ? x : 1;
}

/* The stride along spatial axis `axis` of value x: where x has size 1 there,
 * any stride reads the one window at offset 0 and gives one output, so it
 * is stated as 1 (a stride-2 and a stride-1 convolution of a 1x1 image are
 * one term), and that size is held. */
static int64_t stride_at(vf_held *held, const xf_graph *g, int x, int axis, int32_t stride)
{
    if (or1(stride) == 1 || g->values[x].shape.dims[axis] != 1) return or1(stride);
    vf_prove_hold(held, g, x, axis);
    return 1;
}

static xf_status unsupported(const xf_graph *g, int node, const char *why, xf_error *err)
{
    char d[128];
    return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: %s",
                   xf_node_describe(g, node, d, sizeof d), why);
}

/* ------------------------------------------------------- reshape sizes */

#define FRESH_IDS 1000000 /* ids of opaque dims and shapes: each its own */

/* The id of monomial x (one per distinct monomial; an opaque one its own). */
static int64_t mono_id(xf_prove_dims *pd, const xf_dimx *x)
{
    if (x->den != 0)
        for (int i = 0; i < pd->n_mono; i++)
            if (xf_dimx_equal(&pd->mono[i], x)) return i;
    if (x->den == 0 || pd->n_mono == XF_PROVE_MAX_IDS) return FRESH_IDS + pd->n_fresh++;
    pd->mono[pd->n_mono] = *x;
    return pd->n_mono++;
}

/* The id of the shape whose dims are the monomials dims[0 .. rank). */
static int64_t shape_id_of(xf_prove_dims *pd, const xf_dimx *dims, int rank)
{
    int m[XF_MAX_DIMS];
    for (int i = 0; i < rank; i++) {
        int64_t id = mono_id(pd, &dims[i]);
        if (id >= FRESH_IDS) return FRESH_IDS + pd->n_fresh++;
        m[i] = (int)id;
    }
    for (int k = 0; k < pd->n_shape; k++) {
        if (pd->shape_rank[k] != rank) continue;
        int same = 1;
        for (int i = 0; i < rank && same; i++) same = pd->shape_mono[k][i] == m[i];
        if (same) return k;
    }
    if (pd->n_shape == XF_PROVE_MAX_IDS) return FRESH_IDS + pd->n_fresh++;
    pd->shape_rank[pd->n_shape] = rank;
    for (int i = 0; i < rank; i++) pd->shape_mono[pd->n_shape][i] = m[i];
    return pd->n_shape++;
}

/* The id of value `value`'s shape (rank `rank`) on the side being encoded. */
static int64_t shape_id(xf_prove_dims *pd, int value, int rank)
{
    return shape_id_of(pd, pd->dims->val[pd->side][value], rank);
}

/* 1 when monomial x is the constant 1 (a dim the rule's symbolic dims pin
 * to 1 wherever it applies: an unsqueezed axis, a squeezed input's). */
static int dimx_one(const xf_dimx *x)
{
    return x->den == 1 && x->num == 1 && x->n == 0;
}

/* A reshape node as the axioms see it: by kind (xf_view_classify), its sizes
 * as ids of the rule's symbolic dims. */
static xf_status encode_reshape(xf_verifier *v, const xf_graph *g, int ni, xf_prove_dims *pd,
                                Z3_ast *in, Z3_ast *r, xf_error *err)
{
    const xf_node *nd = &g->nodes[ni];
    if (!pd || !pd->dims)
        return unsupported(g, ni, "a reshape needs the rule's symbolic dims", err);
    int x = nd->inputs[0], y = nd->outputs[0], k;
    const xf_shape *sx = &g->values[x].shape, *sy = &g->values[y].shape;
    xf_view_kind kind = xf_view_classify(sx, sy, &k);
    int64_t id;
    if (kind == XF_VIEW_FLATTEN && k == 2) {
        *r = app(v, XF_AX_FLAT, 0, NULL, 1, in);
    } else if (kind == XF_VIEW_UNFLATTEN && k == 2) {
        id = mono_id(pd, &pd->dims->val[pd->side][y][0]);
        *r = app(v, XF_AX_UNFLAT, 1, &id, 1, in);
    } else if (kind == XF_VIEW_SPLIT_LAST) {
        id = mono_id(pd, &pd->dims->val[pd->side][y][sy->rank - 2]);
        *r = app(v, XF_AX_HSPLIT, 1, &id, 1, in);
    } else if (kind == XF_VIEW_MERGE_LAST) {
        *r = app(v, XF_AX_HMERGE, 0, NULL, 1, in);
    } else {
        id = shape_id(pd, y, sy->rank);
        *r = app(v, XF_AX_VIEW, 1, &id, 1, in);
    }
    return XF_OK;
}

/* A slice of one axis, step 1, as (slice axis offset length size x). */
static xf_status encode_slice(xf_verifier *v, const xf_graph *g, int ni, const vf_sizes *sz,
                              Z3_ast *in, Z3_ast *r, xf_error *err)
{
    const xf_node *nd = &g->nodes[ni];
    const xf_params *p = &nd->params;
    const xf_shape *sx = &g->values[nd->inputs[0]].shape, *sy = &g->values[nd->outputs[0]].shape;
    if (p->n_axes != 1 || (p->steps[0] != 1 && p->steps[0] != 0))
        return unsupported(g, ni, "only a slice of one axis with step 1 is modelled", err);
    int a = xf_norm_axis(p->axes[0], sx->rank);
    if (a < 0) return unsupported(g, ni, "slice axis out of range", err);
    int64_t o = p->starts[0] < 0 ? p->starts[0] + sx->dims[a] : p->starts[0];
    if (o < 0) o = 0;
    (void)sy;
    Z3_ast k[4] = {mk_int(v, a - sx->rank), mk_int(v, o), size_at(v, sz, nd->outputs[0], a),
                   size_at(v, sz, nd->inputs[0], a)};
    *r = appz(v, XF_AX_SLICE, 4, k, 1, in);
    return XF_OK;
}

/* A transpose as the adjacent swaps that sort its permutation (bubble
 * order, so a permutation always gives the same terms): a swap of the last
 * two axes is trans, one of two axes before them tswap k (k the first,
 * counted from the end), and a swap of two axes of size 1 moves no element
 * (both sizes held: [1,1,4] is its transpose, [3,3,4] is not).
 * A swap of an axis whose symbolic dim is the constant 1 (dims: the
 * input's monomials, NULL without reshapes) with another moves no element
 * either: it is a reshape, view(s) to the swapped shape (so [S,1,h,d] ->
 * [1,h,S,d], perm 1,2,0,3, is tswap(-3, view(s, .)) where s is [1,S,h,d]).
 * So attention's key transpose [B,S,h,d] -> [B,h,d,S] is trans(tswap -3),
 * and a single swap is what it was. 0 when perm is not a permutation. */
static int encode_transpose(xf_verifier *v, const xf_graph *g, int ni, Z3_ast x, xf_prove_dims *pd,
                            const xf_dimx *dims, vf_held *held, Z3_ast *r)
{
    const xf_params *p = &g->nodes[ni].params;
    int in = g->nodes[ni].inputs[0];
    const xf_shape *s0 = &g->values[in].shape;
    int rank = s0->rank, perm[XF_MAX_DIMS], cur[XF_MAX_DIMS];
    if (xf_transpose_perm(p, rank, perm) != 0) return 0; /* none: reversed */
    for (int i = 0; i < rank; i++) cur[i] = i;
    *r = x;
    for (int i = 0; i < rank; i++) {
        int j = i;
        while (cur[j] != perm[i]) j++;
        for (; j > i; j--) { /* swap axes j-1 and j of the current tensor */
            int a = cur[j - 1];
            cur[j - 1] = cur[j], cur[j] = a;
            if (s0->dims[cur[j - 1]] == 1 && s0->dims[cur[j]] == 1) {
                vf_prove_hold(held, g, in, cur[j - 1]);
                vf_prove_hold(held, g, in, cur[j]);
                continue;
            }
            if (dims && (dimx_one(&dims[cur[j - 1]]) || dimx_one(&dims[cur[j]]))) {
                for (int t = j - 1; t <= j; t++)
                    if (dimx_one(&dims[cur[t]])) vf_prove_hold(held, g, in, cur[t]);
                xf_dimx now[XF_MAX_DIMS];
                for (int t = 0; t < rank; t++) now[t] = dims[cur[t]];
                int64_t id = shape_id_of(pd, now, rank);
                *r = app(v, XF_AX_VIEW, 1, &id, 1, r);
                continue;
            }
            int64_t k = j - 1 - rank;
            *r = j == rank - 1 ? app(v, XF_AX_TRANS, 0, NULL, 1, r) : app(v, XF_AX_TSWAP, 1, &k, 1, r);
        }
    }
    return 1;
}

static xf_status encode_node(xf_verifier *v, const xf_graph *g, int ni, xf_prove_dims *pd,
                             vf_held *held, const vf_sizes *sz, Z3_ast *val, xf_error *err)
{
    const xf_node *nd = &g->nodes[ni];
    const xf_params *p = &nd->params;
    Z3_ast in[8] = {0};
    const xf_shape *s0 = nd->n_inputs > 0 && nd->inputs[0] >= 0 ? &g->values[nd->inputs[0]].shape : NULL;
    for (int i = 0; i < nd->n_inputs && i < 8; i++) in[i] = nd->inputs[i] >= 0 ? val[nd->inputs[i]] : NULL;
    Z3_ast r = NULL;
    int64_t k[6];
    switch (nd->op) {
    case XF_OP_ADD: r = app(v, XF_AX_EWADD, 0, NULL, 2, in); break;
    case XF_OP_MUL: r = app(v, XF_AX_EWMUL, 0, NULL, 2, in); break;
    case XF_OP_SCALAR_MUL: r = app(v, XF_AX_SMUL, 0, NULL, 2, in); break;
    case XF_OP_MATMUL: r = app(v, XF_AX_MATMUL, 0, NULL, 2, in); break;
    case XF_OP_RELU: r = app(v, XF_AX_RELU, 0, NULL, 1, in); break;
    case XF_OP_SIGMOID: r = app(v, XF_AX_SIGMOID, 0, NULL, 1, in); break;
    case XF_OP_TANH: r = app(v, XF_AX_TANH, 0, NULL, 1, in); break;
    case XF_OP_GELU: r = app(v, XF_AX_GELU, 0, NULL, 1, in); break;
    case XF_OP_ERF: r = app(v, XF_AX_ERF, 0, NULL, 1, in); break;
    case XF_OP_EXP: r = app(v, XF_AX_EXP, 0, NULL, 1, in); break;
    case XF_OP_POW:
        if (g->values[nd->inputs[1]].shape.rank != 0)
            return unsupported(g, ni, "only a power by a scalar is modelled", err);
        r = app(v, XF_AX_POW, 0, NULL, 2, in);
        break;
    case XF_OP_IDENTITY:
    case XF_OP_DROPOUT: r = in[0]; break;
    case XF_OP_CONV: {
        const xf_shape *ws = &g->values[nd->inputs[1]].shape;
        if (nd->n_inputs > 2 && nd->inputs[2] >= 0) return unsupported(g, ni, "conv bias is not modelled", err);
        if (or1(p->dilation[0]) != 1 || or1(p->dilation[1]) != 1)
            return unsupported(g, ni, "dilated conv is not modelled", err);
        int pm = pad_mode(p->pads, ws->dims[2], ws->dims[3]);
        if (pm < 0) return unsupported(g, ni, "padding is neither 'same' nor 'valid'", err);
        int64_t grp = or1(p->group);
        if (grp > 1 && grp == s0->dims[1]) grp = XF_AX_DEPTHWISE;
        k[0] = stride_at(held, g, nd->inputs[0], 2, p->stride[0]);
        k[1] = stride_at(held, g, nd->inputs[0], 3, p->stride[1]);
        k[2] = pm, k[3] = p->activation, k[4] = grp;
        r = app(v, XF_AX_CONV, 5, k, 2, in);
        break;
    }
    case XF_OP_AVGPOOL:
    case XF_OP_MAXPOOL: {
        int pm = pad_mode(p->pads, p->kernel[0], p->kernel[1]);
        if (pm < 0) return unsupported(g, ni, "padding is neither 'same' nor 'valid'", err);
        if (p->ceil_mode) return unsupported(g, ni, "ceil_mode is not modelled", err);
        if (nd->op == XF_OP_AVGPOOL && pm == XF_AX_PAD_SAME && p->kernel[0] * p->kernel[1] > 1 &&
            !p->count_include_pad)
            return unsupported(g, ni, "average pooling that excludes padding is not modelled", err);
        k[0] = p->kernel[0], k[1] = p->kernel[1], k[4] = pm;
        k[2] = stride_at(held, g, nd->inputs[0], 2, p->stride[0]);
        k[3] = stride_at(held, g, nd->inputs[0], 3, p->stride[1]);
        r = app(v, nd->op == XF_OP_AVGPOOL ? XF_AX_AVGPOOL : XF_AX_MAXPOOL, 5, k, 1, in);
        break;
    }
    case XF_OP_CONCAT: {
        int64_t a = neg_axis(p->axis, s0->rank);
        r = in[0];
        size_sum done = sum_zero();
        sum_add(v, sz, &done, size_form(sz, nd->inputs[0], (int)(s0->rank + a)));
        for (int i = 1; i < nd->n_inputs; i++) {
            Z3_ast two[2] = {r, val[nd->inputs[i]]}, kz[3];
            part_terms(v, sz, g, nd->inputs[i], a, &done, kz);
            r = appz(v, XF_AX_CONCAT, 3, kz, 2, two);
        }
        break;
    }
    case XF_OP_SPLIT: {
        int64_t a = neg_axis(p->axis, s0->rank);
        size_sum off = sum_zero();
        for (int o = 0; o < nd->n_outputs; o++) {
            Z3_ast kz[4];
            part_terms(v, sz, g, nd->outputs[o], a, &off, kz);
            kz[3] = size_at(v, sz, nd->inputs[0], (int)(s0->rank + a));
            val[nd->outputs[o]] = appz(v, XF_AX_SLICE, 4, kz, 1, in);
        }
        return XF_OK;
    }
    case XF_OP_TRANSPOSE:
        if (!encode_transpose(v, g, ni, in[0], pd,
                              pd && pd->dims ? pd->dims->val[pd->side][nd->inputs[0]] : NULL, held, &r))
            return unsupported(g, ni, "a permutation that is not one of its input's axes", err);
        break;
    case XF_OP_ENLARGE:
        if (s0->dims[2] == p->kernel[0] && s0->dims[3] == p->kernel[1]) {
            r = in[0]; /* already that size: nothing to pad */
            vf_prove_hold(held, g, nd->inputs[0], 2);
            vf_prove_hold(held, g, nd->inputs[0], 3);
            break;
        }
        k[0] = p->kernel[0], k[1] = p->kernel[1];
        r = app(v, XF_AX_ENLARGE, 2, k, 1, in);
        break;
    case XF_OP_CONST_IDENTITY_CONV:
        k[0] = p->shape[2], k[1] = p->shape[3];
        r = app(v, XF_AX_ICONV, 2, k, 0, NULL);
        break;
    case XF_OP_CONST_POOL:
        k[0] = p->shape[2], k[1] = p->shape[3];
        r = app(v, XF_AX_POOL, 2, k, 0, NULL);
        break;
    case XF_OP_CONST_IDENTITY_MATRIX: r = app(v, XF_AX_IMAT, 0, NULL, 0, NULL); break;
    case XF_OP_CONST_ONES: r = app(v, XF_AX_ONES, 0, NULL, 0, NULL); break;
    case XF_OP_SOFTMAX:
        k[0] = neg_axis(p->axis, s0->rank);
        /* over an axis of size 1 every element is exp(x) / exp(x) = 1 */
        if (s0->dims[s0->rank + k[0]] == 1) {
            vf_prove_hold(held, g, nd->inputs[0], (int)(s0->rank + k[0]));
            r = app(v, XF_AX_ONES, 0, NULL, 0, NULL);
        } else {
            r = app(v, XF_AX_SOFTMAX, 1, k, 1, in);
        }
        break;
    case XF_OP_LAYERNORM: {
        Z3_ast three[3] = {in[0], in[1], NULL};
        int bias = nd->n_inputs > 2 && nd->inputs[2] >= 0, scale = g->values[nd->inputs[1]].producer;
        three[2] = bias ? in[2] : app(v, XF_AX_ZEROS, 0, NULL, 0, NULL);
        k[0] = neg_axis(p->axis, s0->rank);
        /* a scale of ones and no bias: the unit-scale layer-norm */
        if (!bias && scale >= 0 && g->nodes[scale].op == XF_OP_CONST_ONES) r = app(v, XF_AX_LNORM, 1, k, 1, in);
        else r = app(v, XF_AX_LAYERNORM, 1, k, 3, three);
        break;
    }
    case XF_OP_REDUCE_MEAN:
        if (p->n_axes != 1 || !p->keepdims)
            return unsupported(g, ni, "only a mean over one axis keeping dims is modelled", err);
        k[0] = neg_axis(p->axes[0], s0->rank);
        /* the mean over an axis of size 1 is its input */
        if (s0->dims[s0->rank + k[0]] == 1) {
            vf_prove_hold(held, g, nd->inputs[0], (int)(s0->rank + k[0]));
            r = in[0];
        } else {
            r = app(v, XF_AX_MEAN, 1, k, 1, in);
        }
        break;
    case XF_OP_RESHAPE:
    case XF_OP_SQUEEZE:
    case XF_OP_UNSQUEEZE: { /* a squeeze or unsqueeze is a reshape too */
        xf_status st = encode_reshape(v, g, ni, pd, in, &r, err);
        if (st != XF_OK) return st;
        break;
    }
    case XF_OP_SLICE: {
        xf_status st = encode_slice(v, g, ni, sz, in, &r, err);
        if (st != XF_OK) return st;
        break;
    }
    default: return unsupported(g, ni, "operator has no axiomatic encoding", err);
    }
    val[nd->outputs[0]] = r;
    return XF_OK;
}

/* The zero tensor of value `value`'s shape, its last axis 1 with
 * last_one: (zt rank d0 .. d5), unused dims 0. */
static Z3_ast zero_tensor(xf_verifier *v, const vf_sizes *sz, const xf_graph *g, int value,
                          int last_one)
{
    int rank = g->values[value].shape.rank;
    Z3_ast k[1 + XF_MAX_DIMS];
    k[0] = mk_int(v, rank);
    for (int i = 0; i < XF_MAX_DIMS; i++)
        k[1 + i] = i >= rank ? mk_int(v, 0)
                   : last_one && i == rank - 1 ? mk_int(v, 1)
                                                : size_at(v, sz, value, i);
    return appz(v, XF_AX_ZT, 1 + XF_MAX_DIMS, k, 0, NULL);
}

/* After node ni is encoded: its outputs that are zero whatever the inputs
 * (prove_zero.c) become the zero tensor of their shape, and a sum with a
 * zero operand of the sum's own shape becomes the other operand. */
static void zero_fold(xf_verifier *v, const xf_graph *g, int ni, vf_held *held,
                      const vf_sizes *sz, Z3_ast *val, unsigned char *zero)
{
    const xf_node *nd = &g->nodes[ni];
    if (vf_prove_zero_output(g, ni, zero, held)) {
        for (int o = 0; o < nd->n_outputs; o++) {
            zero[nd->outputs[o]] = 1;
            val[nd->outputs[o]] = zero_tensor(v, sz, g, nd->outputs[o], 0);
        }
    } else if (nd->op == XF_OP_ADD && nd->n_inputs == 2) {
        const xf_shape *out = &g->values[nd->outputs[0]].shape;
        for (int i = 0; i < 2; i++) {
            int other = nd->inputs[1 - i];
            if (zero[nd->inputs[i]] && xf_shape_equal(&g->values[other].shape, out)) {
                val[nd->outputs[0]] = val[other];
                break;
            }
        }
    }
}

static Z3_ast and2(xf_verifier *v, Z3_ast a, Z3_ast b)
{
    Z3_ast two[2] = {a, b};
    return Z3_mk_and(v->ctx, 2, two);
}

/* Zero facts the fold cannot state because the axioms make the terms: the
 * mean over axis -1 of each centred layer-norm (prove_zero.c) is zero, and
 * when a side has zeros, a zero added to a value of the zero's own shape
 * (either way round) is the value — stated for the values whose last axis
 * has size 1, the shape of the zeros the axioms make (such means; the fold
 * already drops a graph's zero summands): stating it for every value let
 * `ewadd-assoc` chain sums of zeros without end on layer-norm rules. */
static Z3_ast zero_facts(xf_verifier *v, const xf_graph *g, vf_held *held, const vf_sizes *sz,
                         Z3_ast *val, const unsigned char *zero, Z3_ast facts)
{
    int any = 0;
    for (int i = 0; i < g->n_values; i++) {
        any |= zero[i];
        if (!val[i] || !vf_prove_centred_layernorm(g, i, zero, held)) continue;
        int64_t last = -1;
        Z3_ast mean = app(v, XF_AX_MEAN, 1, &last, 1, &val[i]);
        facts = and2(v, facts, Z3_mk_eq(v->ctx, mean, zero_tensor(v, sz, g, i, 1)));
        any = 1;
    }
    for (int i = 0; any && i < g->n_values; i++) {
        const xf_shape *s = &g->values[i].shape;
        if (!val[i] || s->rank < 1 || s->dims[s->rank - 1] != 1) continue;
        Z3_ast z = zero_tensor(v, sz, g, i, 0), zx[2] = {z, val[i]}, xz[2] = {val[i], z};
        facts = and2(v, facts, Z3_mk_eq(v->ctx, Z3_mk_app(v->ctx, v->fns[XF_AX_EWADD], 2, zx), val[i]));
        facts = and2(v, facts, Z3_mk_eq(v->ctx, Z3_mk_app(v->ctx, v->fns[XF_AX_EWADD], 2, xz), val[i]));
    }
    return facts;
}

/* For each value t whose last two axes have size 1: trans(t) = t and
 * hw1(t) (the guard of the 1x1-convolution axioms), guarded: both sizes are
 * held when a proof uses it; for each rank-0 value: scalar(t) (the guard
 * of `lnorm-scalar`). */
static Z3_ast unit_facts(xf_verifier *v, const xf_graph *g, vf_held *held, Z3_ast *val, Z3_ast facts)
{
    for (int i = 0; i < g->n_values; i++) {
        const xf_shape *s = &g->values[i].shape;
        if (val[i] && s->rank == 0) facts = and2(v, facts, app(v, XF_AX_SCALAR, 0, NULL, 1, &val[i]));
        if (!val[i] || s->rank < 2 || s->dims[s->rank - 1] != 1 || s->dims[s->rank - 2] != 1) continue;
        Z3_ast t = app(v, XF_AX_TRANS, 0, NULL, 1, &val[i]);
        Z3_ast two[2] = {Z3_mk_eq(v->ctx, t, val[i]), app(v, XF_AX_HW1, 0, NULL, 1, &val[i])};
        int axes[2] = {s->rank - 2, s->rank - 1};
        facts = and2(v, facts, vf_prove_guarded(v, held, g, i, axes, 2, Z3_mk_and(v->ctx, 2, two)));
    }
    return facts;
}

/* Facts of constant kernels and of pooling over a 1x1 image: an identity
 * kernel is the 1x1 one enlarged (`iconv-enlarge`), and that one is 1x1:
 * hw1(iconv 1 1); a 'same' average pooling (padding counted) of an image
 * whose spatial dims are 1x1 sees its one pixel in a window of kh*kw
 * elements: avgpool(x) = smul(x, pscale(kh, kw)), pscale the scalar
 * 1/(kh*kw) (scalar(pscale kh kw)), guarded by the image's 1x1. */
static Z3_ast kernel_facts(xf_verifier *v, const xf_graph *g, vf_held *held, Z3_ast *val, Z3_ast facts)
{
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const xf_node *nd = &g->nodes[ni];
        const xf_params *p = &nd->params;
        if (nd->op == XF_OP_CONST_IDENTITY_CONV) {
            int64_t one[2] = {1, 1};
            Z3_ast i11 = app(v, XF_AX_ICONV, 2, one, 0, NULL);
            facts = and2(v, facts, app(v, XF_AX_HW1, 0, NULL, 1, &i11));
            continue;
        }
        if (nd->op != XF_OP_AVGPOOL || nd->inputs[0] < 0) continue;
        const xf_shape *x = &g->values[nd->inputs[0]].shape;
        Z3_ast in = val[nd->inputs[0]], out = val[nd->outputs[0]];
        if (!in || !out || x->rank != 4 || x->dims[2] != 1 || x->dims[3] != 1 || p->ceil_mode ||
            pad_mode(p->pads, p->kernel[0], p->kernel[1]) != XF_AX_PAD_SAME ||
            (p->kernel[0] * p->kernel[1] > 1 && !p->count_include_pad))
            continue;
        int64_t k[2] = {p->kernel[0], p->kernel[1]};
        int axes[2] = {2, 3};
        Z3_ast ps = app(v, XF_AX_PSCALE, 2, k, 0, NULL), xs[2] = {in, ps};
        facts = and2(v, facts, app(v, XF_AX_SCALAR, 0, NULL, 1, &ps));
        facts = and2(v, facts, vf_prove_guarded(v, held, g, nd->inputs[0], axes, 2,
                                                Z3_mk_eq(v->ctx, out, app(v, XF_AX_SMUL, 0, NULL, 2, xs))));
    }
    return facts;
}

/* A split's parts, concatenated, are its input (the concat folded left as
 * the encoding folds concats): stated so that a rule using both a tensor
 * and its parts can rewrite the tensor as the concat, which no axiom's
 * trigger introduces (`matmul(b, concat(..))` with `b` split elsewhere
 * meets `matmul-concat-batch` only through it). */
static Z3_ast split_facts(xf_verifier *v, const xf_graph *g, const vf_sizes *sz, Z3_ast *val,
                          Z3_ast facts)
{
    for (int ni = 0; ni < g->n_nodes; ni++) {
        const xf_node *nd = &g->nodes[ni];
        if (nd->op != XF_OP_SPLIT || nd->n_outputs < 2 || !val[nd->inputs[0]]) continue;
        const xf_shape *s0 = &g->values[nd->inputs[0]].shape;
        int64_t a = neg_axis(nd->params.axis, s0->rank);
        size_sum done = sum_zero();
        Z3_ast r = NULL;
        for (int o = 0; o < nd->n_outputs; o++) {
            Z3_ast part = val[nd->outputs[o]], k[3];
            if (!part) break;
            part_terms(v, sz, g, nd->outputs[o], a, &done, k);
            if (o == 0) {
                r = part;
            } else {
                Z3_ast two[2] = {r, part};
                r = appz(v, XF_AX_CONCAT, 3, k, 2, two);
            }
            if (o == nd->n_outputs - 1) facts = and2(v, facts, Z3_mk_eq(v->ctx, val[nd->inputs[0]], r));
        }
    }
    return facts;
}

/* Every value's rank; with the rule's dims also its shape's id and that
 * shape's last dim (the guards of the reshape and bias axioms), and each
 * head split's count at the rule's own shapes (hnum: the guard of
 * hsplit-slice-last, which relates it to slice offsets, numbers at the
 * own shapes too). */
static Z3_ast shape_facts(xf_verifier *v, const xf_graph *g, xf_prove_dims *pd,
                          const vf_sizes *sz, Z3_ast *val, Z3_ast facts)
{
    Z3_context c = v->ctx;
    for (int ni = 0; pd && pd->dims && ni < g->n_nodes; ni++) {
        const xf_node *nd = &g->nodes[ni];
        if (nd->op != XF_OP_RESHAPE || !val[nd->outputs[0]]) continue;
        const xf_shape *sx = &g->values[nd->inputs[0]].shape, *sy = &g->values[nd->outputs[0]].shape;
        int k;
        if (xf_view_classify(sx, sy, &k) != XF_VIEW_SPLIT_LAST) continue;
        int64_t id = mono_id(pd, &pd->dims->val[pd->side][nd->outputs[0]][sy->rank - 2]);
        if (id >= FRESH_IDS) continue; /* an opaque count is no fact */
        Z3_ast ida = mk_int(v, id);
        Z3_ast num = Z3_mk_app(c, v->fns[XF_AX_HNUM], 1, &ida);
        facts = and2(v, facts, Z3_mk_eq(c, num, size_at(v, sz, nd->outputs[0], sy->rank - 2)));
    }
    for (int i = 0; i < g->n_values; i++) {
        if (!val[i]) continue;
        const xf_shape *s = &g->values[i].shape;
        Z3_ast rk = Z3_mk_app(c, v->fns[XF_AX_RNK], 1, &val[i]);
        facts = and2(v, facts, Z3_mk_eq(c, rk, mk_int(v, s->rank)));
        if (!pd || !pd->dims) continue;
        int64_t sid = shape_id(pd, i, s->rank);
        /* a fresh id is no fact: two of them may name one shape, which the
         * shape axioms (`gelu-shape`...) could then prove equal */
        if (sid >= FRESH_IDS) continue;
        Z3_ast sh = Z3_mk_app(c, v->fns[XF_AX_SHP], 1, &val[i]);
        facts = and2(v, facts, Z3_mk_eq(c, sh, mk_int(v, sid)));
        if (s->rank < 1) continue;
        Z3_ast sa = mk_int(v, sid);
        Z3_ast last = Z3_mk_app(c, v->fns[XF_AX_LASTD], 1, &sa);
        int64_t lid = mono_id(pd, &pd->dims->val[pd->side][i][s->rank - 1]);
        facts = and2(v, facts, Z3_mk_eq(c, last, mk_int(v, lid)));
    }
    return facts;
}

xf_status vf_prove_encode(xf_verifier *v, const xf_graph *g, xf_prove_dims *pd, vf_held *held,
                          const vf_sizes *sizes, Z3_ast *outs, Z3_ast *facts, xf_error *err)
{
    xf_status st = XF_OK;
    Z3_ast *val = xf_calloc((size_t)g->n_values + 1, sizeof *val);
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    unsigned char *zero = xf_calloc((size_t)g->n_values + 1, 1);
    if (!val || !order || !zero) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory encoding a graph");
        goto done;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        char name[32];
        snprintf(name, sizeof name, "in%d", i);
        val[g->inputs[i]] = Z3_mk_const(v->ctx, Z3_mk_string_symbol(v->ctx, name), v->tensor);
    }
    st = xf_graph_topo_order(g, order, err);
    for (int i = 0; st == XF_OK && i < g->n_nodes; i++) {
        st = encode_node(v, g, order[i], pd, held, sizes, val, err);
        if (st == XF_OK) zero_fold(v, g, order[i], held, sizes, val, zero);
    }
    if (st == XF_OK)
        *facts = shape_facts(
            v, g, pd, sizes, val,
            zero_facts(v, g, held, sizes, val, zero,
                       kernel_facts(v, g, held, val, split_facts(v, g, sizes, val, unit_facts(v, g, held, val, *facts)))));
    for (int i = 0; st == XF_OK && i < g->n_outputs; i++) {
        outs[i] = val[g->outputs[i]];
        if (!outs[i]) st = XF_FAIL(err, XF_ERR_GRAPH, "verify: output %d is not computed", i);
    }
    if (st == XF_OK && vf_verifier_z3_error(v, "encoding a graph", err)) st = err ? err->code : XF_ERR_INTERNAL;
done:
    xf_free(val);
    xf_free(order);
    xf_free(zero);
    return st;
}
