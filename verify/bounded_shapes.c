/*
 * bounded_shapes.c — the input shapes at which the bounded check runs a
 * rule, and the rule rebuilt at one of them (xf_verify_rule_at_shapes).
 *
 * Admissible: every rule input keeps its rank (scalars stay scalars) and
 * takes dims in 1..max_dim, and both sides pass shape inference (the
 * operator table's xf_op_infer) with equal output shapes. Parameters the
 * enumerator derives from the input shapes (enumerate/instantiate.c) are
 * re-derived the same way: a split whose sizes are the halves of its axis
 * (d/2, d-d/2) splits the new axis into halves and, as in the enumerator,
 * needs it even; a convolution whose group (> 1) equals its input channels
 * is depthwise and keeps group = channels. Every other parameter — kernel
 * sizes, strides, pads, axes, permutations, other split sizes, generator
 * shapes — is the rule's and stays fixed (conv's inference ties the
 * weight's spatial dims to its kernel parameter). Element-wise binary
 * operators whose operands have equal shapes in the rule keep them equal,
 * as the enumerator's non-broadcasting variants do.
 *
 * Search. The operators tie dims together (ewadd's operands, matmul's inner
 * dims, conv channels, the non-concatenated axes of a concat, the two
 * sides' shared inputs and their outputs...): a union-find over every dim
 * of every value, built once per rule, groups the input dims into classes,
 * and a class tied to a constant (a kernel size, a generator's shape) keeps
 * the rule's value. The free classes take values 1..max_dim: every
 * combination when there are at most XFB_SHAPE_TRIES, else the uniform ones
 * plus a fixed pseudo-random sample of that many. The ties only make the
 * search small; each candidate is decided by running shape inference over
 * both sides (no graph is built), so a tie missed here costs time, never
 * correctness. Sizes that are sums or halves (concat, split) stay
 * unconstrained classes and inference filters them.
 *
 * Choice (deterministic). The admissible assignments are sorted by total
 * input elements, then by dims. Checked are: the rule's own shapes; then
 * small ones — those with at most a quarter of the own input elements (or
 * XFB_SMALL_MIN), which is where degenerate and mixed dims (1s, 1x2 against
 * 2x1) live — all of them, or max_shapes - 2 picked evenly along that
 * order; last the largest assignment (the most input elements, dims of 4).
 * Assignments between small and largest are not checked: the cost of the
 * check grows steeply with the elements (a nested 3x3 conv at 4x4 images
 * costs ten times the same rule at 3x3), and measured on the taso 3-op
 * rules every refutation at other shapes showed at small ones. A rule whose
 * own shapes needed the solver (normal forms differ: max-pool against
 * relu, nested relus) gets the exact check (bounded.c, xfb_shape_plan_trim)
 * at its own shapes and a few small ones no larger than the own, not at
 * the largest, where every output element is a solver query of its own;
 * the float probe still runs at every planned shape.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XFB_SHAPE_TRIES 4096
#define XFB_SMALL_MIN 64 /* input elements an assignment may have and count as small */

/* ------------------------------------------------------ re-derived params */

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

static int is_ew_binary(xf_op op)
{
    return op == XF_OP_ADD || op == XF_OP_SUB || op == XF_OP_MUL || op == XF_OP_DIV ||
           op == XF_OP_POW || op == XF_OP_EQUAL;
}

/* A split into the two halves of its axis, at the rule's own shapes. */
static int split_halves(const xf_node *nd, const xf_shape *own_in)
{
    const xf_params *p = &nd->params;
    int a = norm_axis(p->axis, own_in->rank);
    if (nd->op != XF_OP_SPLIT || p->n_split != 2 || a < 0 || a >= own_in->rank) return 0;
    int64_t d = own_in->dims[a];
    return d >= 2 && d % 2 == 0 && p->split[0] == d / 2 && p->split[1] == d / 2;
}

static int depthwise(const xf_node *nd, const xf_shape *own_in)
{
    return nd->op == XF_OP_CONV && own_in->rank == 4 && nd->params.group > 1 &&
           nd->params.group == own_in->dims[1];
}

/* The parameters of node nd (of graph g, at the rule's own shapes) when its
 * inputs have shapes `in`; 0 when the node does not apply there. */
static int params_at(const xf_graph *g, const xf_node *nd, const xf_shape *in, xf_params *p)
{
    *p = nd->params;
    if (nd->n_inputs < 1 || nd->inputs[0] < 0) return 1;
    const xf_shape *own0 = &g->values[nd->inputs[0]].shape;
    if (is_ew_binary(nd->op) && nd->n_inputs == 2 &&
        xf_shape_equal(own0, &g->values[nd->inputs[1]].shape) && !xf_shape_equal(&in[0], &in[1]))
        return 0;
    if (split_halves(nd, own0)) {
        int a = norm_axis(p->axis, in[0].rank);
        int64_t d = in[0].dims[a];
        if (d < 2 || d % 2) return 0;
        p->split[0] = p->split[1] = d / 2;
    }
    if (depthwise(nd, own0)) p->group = (int32_t)in[0].dims[1];
    return 1;
}

/* ------------------------------------------------------------------ ties */

typedef struct ties {
    int *parent;
    unsigned char *fixed;
    int *base[2]; /* first slot of each value, per side */
} ties;

static int find(ties *t, int s)
{
    while (t->parent[s] != s) s = t->parent[s] = t->parent[t->parent[s]];
    return s;
}

static void join(ties *t, int a, int b)
{
    a = find(t, a), b = find(t, b);
    if (a == b) return;
    t->parent[b] = a;
    t->fixed[a] |= t->fixed[b];
}

/* One graph side while tying its nodes. */
typedef struct side {
    ties *t;
    const xf_graph *g;
    int k; /* 0 src, 1 dst */
} side;

static int rank_of(const side *s, int v) { return s->g->values[v].shape.rank; }

/* Slot of dim d of value v, d counted from the front (negative: from the back). */
static int slot(const side *s, int v, int d)
{
    return s->t->base[s->k][v] + (d < 0 ? d + rank_of(s, v) : d);
}

static void tie(const side *s, int v, int dv, int w, int dw)
{
    int rv = rank_of(s, v), rw = rank_of(s, w);
    int iv = dv < 0 ? dv + rv : dv, iw = dw < 0 ? dw + rw : dw;
    if (iv >= 0 && iv < rv && iw >= 0 && iw < rw) join(s->t, slot(s, v, iv), slot(s, w, iw));
}

static void fix(const side *s, int v, int d)
{
    int r = rank_of(s, v), i = d < 0 ? d + r : d;
    if (i >= 0 && i < r) s->t->fixed[find(s->t, slot(s, v, i))] = 1;
}

/* All dims of v and w equal (same rank). */
static void tie_all(const side *s, int v, int w)
{
    if (rank_of(s, v) != rank_of(s, w)) return;
    for (int d = 0; d < rank_of(s, v); d++) tie(s, v, d, w, d);
}

/* Every dim but `axis` equal between the node's inputs and outputs. */
static void tie_but_axis(const side *s, const xf_node *nd, int axis)
{
    int v0 = nd->inputs[0];
    for (int i = 0; i < nd->n_inputs + nd->n_outputs; i++) {
        int v = i < nd->n_inputs ? nd->inputs[i] : nd->outputs[i - nd->n_inputs];
        if (v < 0 || rank_of(s, v) != rank_of(s, v0)) continue;
        for (int d = 0; d < rank_of(s, v0); d++)
            if (d != axis) tie(s, v0, d, v, d);
    }
}

/* Output spatial dims equal the input's for a stride-1 'same' window. */
static void tie_window(const side *s, const xf_params *p, int kh, int kw, int x, int y)
{
    int k[2] = {kh, kw};
    for (int i = 0; i < 2; i++) {
        int stride = p->stride[i] ? p->stride[i] : 1, dil = p->dilation[i] ? p->dilation[i] : 1;
        if (stride == 1 && dil == 1 && p->pads[i] + p->pads[i + 2] == k[i] - 1 && !p->ceil_mode)
            tie(s, x, 2 + i, y, 2 + i);
    }
}

static void tie_node(const side *s, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    const xf_graph *g = s->g;
    int x = nd->n_inputs > 0 ? nd->inputs[0] : -1, y = nd->outputs[0];
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] < 0) return; /* omitted optional input: leave to inference */
    switch (nd->op) {
    case XF_OP_RELU: case XF_OP_SIGMOID: case XF_OP_TANH: case XF_OP_ERF: case XF_OP_GELU:
    case XF_OP_SQRT: case XF_OP_EXP: case XF_OP_LOG: case XF_OP_NEG: case XF_OP_ABS:
    case XF_OP_RECIPROCAL: case XF_OP_IDENTITY: case XF_OP_DROPOUT: case XF_OP_CAST:
    case XF_OP_SCALAR_MUL: case XF_OP_SOFTMAX:
        tie_all(s, x, y);
        break;
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_DIV: case XF_OP_POW:
    case XF_OP_EQUAL: case XF_OP_WHERE:
        for (int i = 0; i < nd->n_inputs; i++)
            if (xf_shape_equal(&g->values[nd->inputs[i]].shape, &g->values[y].shape))
                tie_all(s, nd->inputs[i], y);
        break;
    case XF_OP_MATMUL: {
        int w = nd->inputs[1], ry = rank_of(s, y);
        if (rank_of(s, x) < 2 || rank_of(s, w) < 2) break;
        tie(s, x, -1, w, -2);
        tie(s, y, -2, x, -2);
        tie(s, y, -1, w, -1);
        for (int d = 0; d < ry - 2; d++)
            for (int i = 0; i < 2; i++) {
                int v = nd->inputs[i], dv = d - ry + rank_of(s, v);
                if (dv >= 0 && g->values[v].shape.dims[dv] == g->values[y].shape.dims[d])
                    tie(s, y, d, v, dv);
            }
        break;
    }
    case XF_OP_CONV: {
        int w = nd->inputs[1];
        if (rank_of(s, x) != 4 || rank_of(s, w) != 4) break;
        tie(s, y, 0, x, 0);
        tie(s, y, 1, w, 0);
        fix(s, w, 2);
        fix(s, w, 3);
        if (!p->group || p->group == 1) tie(s, x, 1, w, 1);
        else if (depthwise(nd, &g->values[x].shape)) fix(s, w, 1);
        else fix(s, x, 1), fix(s, w, 1);
        if (nd->n_inputs > 2) tie(s, nd->inputs[2], 0, w, 0);
        tie_window(s, p, p->kernel[0], p->kernel[1], x, y);
        break;
    }
    case XF_OP_AVGPOOL: case XF_OP_MAXPOOL:
        if (rank_of(s, x) != 4) break;
        tie(s, y, 0, x, 0);
        tie(s, y, 1, x, 1);
        tie_window(s, p, p->kernel[0], p->kernel[1], x, y);
        break;
    case XF_OP_GLOBAL_AVGPOOL:
        tie(s, y, 0, x, 0);
        tie(s, y, 1, x, 1);
        fix(s, y, 2);
        fix(s, y, 3);
        break;
    case XF_OP_REDUCE_MEAN: {
        if (!p->keepdims) break;
        for (int d = 0; d < rank_of(s, x); d++) {
            int reduced = p->n_axes == 0;
            for (int i = 0; i < p->n_axes; i++) reduced |= norm_axis(p->axes[i], rank_of(s, x)) == d;
            if (reduced) fix(s, y, d);
            else tie(s, x, d, y, d);
        }
        break;
    }
    case XF_OP_LAYERNORM:
        tie_all(s, x, y);
        for (int i = 1; i < nd->n_inputs; i++)
            for (int d = 1; d <= rank_of(s, nd->inputs[i]); d++) tie(s, nd->inputs[i], -d, x, -d);
        break;
    case XF_OP_BATCHNORM:
        tie_all(s, x, y);
        for (int i = 1; i < nd->n_inputs; i++) tie(s, nd->inputs[i], 0, x, 1);
        break;
    case XF_OP_CONCAT:
        tie_but_axis(s, nd, norm_axis(p->axis, rank_of(s, x)));
        break;
    case XF_OP_SPLIT:
        tie_but_axis(s, nd, norm_axis(p->axis, rank_of(s, x)));
        if (split_halves(nd, &g->values[x].shape))
            tie(s, nd->outputs[0], p->axis, nd->outputs[1], p->axis);
        break;
    case XF_OP_TRANSPOSE:
        for (int d = 0; d < rank_of(s, y); d++)
            tie(s, y, d, x, p->n_axes ? (int)p->axes[d] : rank_of(s, y) - 1 - d);
        break;
    case XF_OP_ENLARGE:
        tie(s, y, 0, x, 0);
        tie(s, y, 1, x, 1);
        fix(s, y, 2);
        fix(s, y, 3);
        break;
    case XF_OP_CONSTANT_OF_SHAPE: case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX:
    case XF_OP_CONST_ONES: case XF_OP_CONST_POOL:
        for (int d = 0; d < rank_of(s, y); d++) fix(s, y, d);
        break;
    default: break; /* reshape, slice, pad...: output dims are left to inference */
    }
}

/* ----------------------------------------------------------------- search */

/* The search state of one rule. */
typedef struct search {
    const xf_rule *r;
    int max_dim, n_in;
    int k;            /* free classes */
    int *cls;         /* per input dim (flattened, rule input order): class, -1 fixed */
    int n_dims;
    int *order[2];    /* topological node order per side */
    xf_shape *sh[2];  /* scratch: a shape per value, per side */
    xf_shape *in_sh;  /* scratch: one node's input shapes */
    xf_dtype *in_dt;
    int max_node_in;
} search;

static void search_free(search *s)
{
    xf_free(s->cls);
    for (int k = 0; k < 2; k++) xf_free(s->order[k]), xf_free(s->sh[k]);
    xf_free(s->in_sh);
    xf_free(s->in_dt);
}

static const xf_graph *side_graph(const xf_rule *r, int k) { return k ? &r->dst : &r->src; }

/* Union-find over all dims; fills s->cls and s->k. */
static xf_status build_classes(search *s, xf_error *err)
{
    const xf_rule *r = s->r;
    ties t = {NULL, NULL, {NULL, NULL}};
    int n = 0;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = side_graph(r, k);
        t.base[k] = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
        if (!t.base[k]) goto nomem;
        for (int v = 0; v < g->n_values; v++) t.base[k][v] = n, n += g->values[v].shape.rank;
    }
    t.parent = xf_malloc(sizeof(int) * ((size_t)n + 1));
    t.fixed = xf_calloc((size_t)n + 1, 1);
    for (int i = 0; i < s->n_in; i++) s->n_dims += r->src.values[r->src.inputs[i]].shape.rank;
    s->cls = xf_malloc(sizeof(int) * ((size_t)s->n_dims + 1));
    int *root_cls = xf_malloc(sizeof(int) * ((size_t)n + 1));
    if (!t.parent || !t.fixed || !s->cls || !root_cls) {
        xf_free(root_cls);
        goto nomem;
    }
    for (int i = 0; i < n; i++) t.parent[i] = i, root_cls[i] = -1;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = side_graph(r, k);
        side sd = {&t, g, k};
        for (int v = 0; v < g->n_values; v++)
            if (g->values[v].kind == XF_VALUE_CONST)
                for (int d = 0; d < g->values[v].shape.rank; d++) fix(&sd, v, d);
        for (int i = 0; i < g->n_nodes; i++) tie_node(&sd, &g->nodes[i]);
    }
    for (int i = 0; i < s->n_in; i++) {
        int a = r->src.inputs[i], b = r->dst.inputs[i];
        for (int d = 0; d < r->src.values[a].shape.rank; d++)
            join(&t, t.base[0][a] + d, t.base[1][b] + d);
    }
    for (int o = 0; o < r->src.n_outputs; o++) {
        int a = r->src.outputs[o], b = r->dst.outputs[o];
        for (int d = 0; d < r->src.values[a].shape.rank; d++)
            join(&t, t.base[0][a] + d, t.base[1][b] + d);
    }
    s->k = 0;
    for (int i = 0, j = 0; i < s->n_in; i++) {
        int a = r->src.inputs[i];
        for (int d = 0; d < r->src.values[a].shape.rank; d++, j++) {
            int root = find(&t, t.base[0][a] + d);
            if (t.fixed[root]) {
                s->cls[j] = -1;
                continue;
            }
            if (root_cls[root] < 0) root_cls[root] = s->k++;
            s->cls[j] = root_cls[root];
        }
    }
    xf_free(root_cls);
    xf_free(t.parent);
    xf_free(t.fixed);
    xf_free(t.base[0]);
    xf_free(t.base[1]);
    return XF_OK;
nomem:
    xf_free(t.parent);
    xf_free(t.fixed);
    xf_free(t.base[0]);
    xf_free(t.base[1]);
    return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
}

static xf_status search_init(search *s, const xf_rule *r, int max_dim, xf_error *err)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->max_dim = max_dim;
    s->n_in = r->src.n_inputs;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = side_graph(r, k);
        s->order[k] = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
        s->sh[k] = xf_malloc(sizeof(xf_shape) * ((size_t)g->n_values + 1));
        if (!s->order[k] || !s->sh[k])
            return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
        xf_status st = xf_graph_topo_order(g, s->order[k], err);
        if (st != XF_OK) return st;
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[i];
            if (nd->op == XF_OP_OPAQUE)
                return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: rule has an opaque node");
            if (nd->n_inputs > s->max_node_in) s->max_node_in = nd->n_inputs;
        }
    }
    s->in_sh = xf_malloc(sizeof(xf_shape) * ((size_t)s->max_node_in + 1));
    s->in_dt = xf_malloc(sizeof(xf_dtype) * ((size_t)s->max_node_in + 1));
    if (!s->in_sh || !s->in_dt)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
    return build_classes(s, err);
}

/* Input shapes for class values `val` (fixed dims keep the rule's). */
static void compose(const search *s, const int *val, xf_shape *in)
{
    for (int i = 0, j = 0; i < s->n_in; i++) {
        in[i] = s->r->src.values[s->r->src.inputs[i]].shape;
        for (int d = 0; d < in[i].rank; d++, j++)
            if (s->cls[j] >= 0) in[i].dims[d] = val[s->cls[j]];
    }
}

/* Shape inference over one side with the inputs at `in`; 1 when every node
 * applies (s->sh[k] then holds every value's shape). */
static int infer_side(search *s, int k, const xf_shape *in)
{
    const xf_graph *g = side_graph(s->r, k);
    xf_shape *sh = s->sh[k];
    for (int v = 0; v < g->n_values; v++) sh[v] = g->values[v].shape;
    for (int i = 0; i < g->n_inputs; i++) sh[g->inputs[i]] = in[i];
    xf_shape out_sh[XF_MAX_SPLIT];
    xf_dtype out_dt[XF_MAX_SPLIT];
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[s->order[k][i]];
        if (nd->n_outputs > XF_MAX_SPLIT) return 0;
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            s->in_dt[j] = v < 0 ? XF_DTYPE_INVALID : g->values[v].dtype;
            if (v >= 0) s->in_sh[j] = sh[v];
            else memset(&s->in_sh[j], 0, sizeof s->in_sh[j]);
        }
        xf_params p;
        if (!params_at(g, nd, s->in_sh, &p)) return 0;
        if (xf_op_infer(nd->op, &p, nd->n_inputs, s->in_dt, s->in_sh, nd->n_outputs, out_dt,
                        out_sh, NULL) != XF_OK)
            return 0;
        for (int j = 0; j < nd->n_outputs; j++) sh[nd->outputs[j]] = out_sh[j];
    }
    return 1;
}

static int admissible(search *s, const xf_shape *in)
{
    if (!infer_side(s, 0, in) || !infer_side(s, 1, in)) return 0;
    for (int o = 0; o < s->r->src.n_outputs; o++)
        if (!xf_shape_equal(&s->sh[0][s->r->src.outputs[o]], &s->sh[1][s->r->dst.outputs[o]]))
            return 0;
    return 1;
}

/* One admissible assignment: total input elements and the k class values. */
typedef struct cand {
    int64_t numel;
    int k;
    int *val;
} cand;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->numel != b->numel) return a->numel < b->numel ? -1 : 1;
    for (int i = 0; i < a->k; i++)
        if (a->val[i] != b->val[i]) return a->val[i] < b->val[i] ? -1 : 1;
    return 0;
}

/* Next candidate of the exhaustive walk (mixed radix over 1..max_dim);
 * 0 after the last. */
static int next_all(int *val, int k, int max_dim)
{
    for (int i = k - 1; i >= 0; i--) {
        if (val[i] < max_dim) {
            val[i]++;
            return 1;
        }
        val[i] = 1;
    }
    return 0;
}

static int64_t total_numel(const xf_shape *sh, int n)
{
    int64_t t = 0;
    for (int i = 0; i < n; i++) t += xf_shape_numel(&sh[i]);
    return t;
}

xf_status xfb_shape_plan_trim(xfb_shape_plan *p, int keep, xf_error *err)
{
    if (keep < 2 || p->n <= keep || p->n_exact <= keep) return XF_OK;
    size_t w = (size_t)p->n_inputs;
    int64_t own = total_numel(p->shapes, p->n_inputs);
    int n_small = 0; /* small ones no larger than the own shapes (they come sorted) */
    while (n_small < p->n - 2 &&
           total_numel(p->shapes + (size_t)(n_small + 1) * w, p->n_inputs) <= own)
        n_small++;
    int take = keep - 1 < n_small ? keep - 1 : n_small;
    xf_shape *order = xf_malloc((size_t)p->n * w * sizeof *order);
    uint8_t *chosen = xf_calloc((size_t)p->n, 1);
    if (!order || !chosen) {
        xf_free(order);
        xf_free(chosen);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory planning shapes");
    }
    chosen[0] = 1;
    for (int i = 0; i < take; i++)
        chosen[1 + (take < 2 ? i : (int)((int64_t)i * (n_small - 1) / (take - 1)))] = 1;
    int k = 0;
    for (int pass = 1; pass >= 0; pass--) /* the chosen first, then the rest */
        for (int i = 0; i < p->n; i++)
            if (chosen[i] == pass) memcpy(order + (size_t)k++ * w, p->shapes + (size_t)i * w,
                                          sizeof *order * w);
    xf_free(p->shapes);
    xf_free(chosen);
    p->shapes = order;
    p->n_exact = 1 + take;
    return XF_OK;
}

void xfb_shape_plan_free(xfb_shape_plan *p)
{
    xf_free(p->shapes);
    memset(p, 0, sizeof *p);
}

/* Collects the admissible assignments other than the rule's own into
 * *cands (values in one block *vals). */
static xf_status collect(search *s, const xf_shape *own, cand **cands, int *n_cands, int **vals,
                         xf_error *err)
{
    int k = s->k, tries = 1, exhaustive = 1;
    for (int i = 0; i < k && exhaustive; i++) {
        if (tries > XFB_SHAPE_TRIES / s->max_dim) exhaustive = 0;
        tries *= s->max_dim;
    }
    if (!exhaustive) tries = XFB_SHAPE_TRIES;
    *cands = xf_malloc(sizeof **cands * (size_t)tries + 1);
    *vals = xf_malloc(sizeof **vals * ((size_t)tries * (size_t)k + 1));
    int *val = xf_malloc(sizeof *val * ((size_t)k + 1));
    xf_shape *in = xf_malloc(sizeof *in * ((size_t)s->n_in + 1));
    if (!*cands || !*vals || !val || !in) {
        xf_free(val);
        xf_free(in);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
    }
    xf_rng rng;
    xf_rng_seed(&rng, 1);
    *n_cands = 0;
    for (int i = 0; i < k; i++) val[i] = 1;
    for (int t = 0; t < tries; t++) {
        if (!exhaustive) { /* uniform assignments first, then a fixed sample */
            for (int i = 0; i < k; i++)
                val[i] = t < s->max_dim ? t + 1 : 1 + (int)(xf_rng_next(&rng) % (uint64_t)s->max_dim);
        } else if (t > 0 && !next_all(val, k, s->max_dim)) {
            break;
        }
        compose(s, val, in);
        int same = 1;
        for (int i = 0; i < s->n_in && same; i++) same = xf_shape_equal(&in[i], &own[i]);
        if (same || !admissible(s, in)) continue;
        cand *c = &(*cands)[(*n_cands)++];
        c->k = k;
        c->val = *vals + (size_t)(*n_cands - 1) * (size_t)k;
        memcpy(c->val, val, sizeof *val * (size_t)k);
        c->numel = 0;
        for (int i = 0; i < s->n_in; i++) c->numel += xf_shape_numel(&in[i]);
    }
    xf_free(val);
    xf_free(in);
    return XF_OK;
}


/* The plan from the sorted admissible assignments: own shapes, then up to
 * max_shapes - 2 small ones evenly spaced in ascending order, then the
 * largest. */
static xf_status choose(const search *s, const xf_shape *own, const cand *cands, int n_cands,
                        int max_shapes, xfb_shape_plan *p, xf_error *err)
{
    int64_t own_numel = total_numel(own, s->n_in);
    int64_t small_max = own_numel / 4 > XFB_SMALL_MIN ? own_numel / 4 : XFB_SMALL_MIN;
    int n_small = 0; /* candidates before the largest that count as small */
    while (n_small < n_cands - 1 && cands[n_small].numel <= small_max) n_small++;
    int largest = n_cands > 0 && max_shapes > 1;
    int take = max_shapes - 1 - largest < n_small ? max_shapes - 1 - largest : n_small;
    if (take < 0) take = 0;
    p->n = 1 + take + largest;
    p->cap = max_shapes;
    p->shapes = xf_malloc(sizeof *p->shapes * (size_t)p->n * (size_t)p->n_inputs + 1);
    if (!p->shapes) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    memcpy(p->shapes, own, sizeof *own * (size_t)p->n_inputs);
    for (int i = 0; i < take; i++) {
        int c = take < 2 ? i : (int)((int64_t)i * (n_small - 1) / (take - 1));
        compose(s, cands[c].val, p->shapes + (size_t)(i + 1) * (size_t)p->n_inputs);
    }
    if (largest)
        compose(s, cands[n_cands - 1].val, p->shapes + (size_t)(p->n - 1) * (size_t)p->n_inputs);
    return XF_OK;
}

xf_status xfb_shape_plan_make(const xf_rule *r, int max_dim, int max_shapes, xfb_shape_plan *p,
                              xf_error *err)
{
    memset(p, 0, sizeof *p);
    p->n_inputs = r->src.n_inputs;
    search s;
    cand *cands = NULL;
    int *vals = NULL, n_cands = 0;
    xf_status st = search_init(&s, r, max_dim, err);
    xf_shape *own = xf_malloc(sizeof *own * ((size_t)p->n_inputs + 1));
    if (st == XF_OK && !own) st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int i = 0; st == XF_OK && i < p->n_inputs; i++) own[i] = r->src.values[r->src.inputs[i]].shape;
    if (st == XF_OK && max_shapes > 1) st = collect(&s, own, &cands, &n_cands, &vals, err);
    if (st == XF_OK) {
        if (n_cands > 1) qsort(cands, (size_t)n_cands, sizeof *cands, cand_cmp);
        int u = 0; /* the sample may repeat an assignment */
        for (int i = 0; i < n_cands; i++)
            if (u == 0 || cand_cmp(&cands[u - 1], &cands[i]) != 0) cands[u++] = cands[i];
        n_cands = u;
        p->n_admissible = 1 + n_cands;
        st = choose(&s, own, cands, n_cands, max_shapes, p, err);
        p->n_exact = p->n;
    }
    if (st != XF_OK) xfb_shape_plan_free(p);
    xf_free(own);
    xf_free(cands);
    xf_free(vals);
    search_free(&s);
    return st;
}

/* --------------------------------------------------------- rebuilt rule */

static xf_status rebuild_side(const xf_graph *g, const xf_shape *inputs, xf_graph *out,
                              xf_error *err)
{
    xf_status st = XF_OK;
    int *map = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    int max_in = 1;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_inputs > max_in) max_in = g->nodes[i].n_inputs;
    int *ins = xf_malloc(sizeof(int) * (size_t)max_in);
    xf_shape *in_sh = xf_malloc(sizeof(xf_shape) * (size_t)max_in);
    if (!map || !order || !ins || !in_sh) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory rebuilding a rule");
        goto out;
    }
    for (int v = 0; v < g->n_values; v++) map[v] = -1;
    for (int i = 0; i < g->n_inputs && st == XF_OK; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        map[g->inputs[i]] = xf_graph_add_input(out, v->name, v->dtype, &inputs[i], err);
        if (map[g->inputs[i]] < 0) st = err ? err->code : XF_ERR_GRAPH;
    }
    for (int v = 0; v < g->n_values && st == XF_OK; v++) {
        const xf_value *c = &g->values[v];
        if (c->kind != XF_VALUE_CONST) continue;
        map[v] = xf_graph_add_const(out, c->name, c->dtype, &c->shape, c->data, err);
        if (map[v] < 0) st = err ? err->code : XF_ERR_GRAPH;
    }
    if (st == XF_OK) st = xf_graph_topo_order(g, order, err);
    for (int i = 0; i < g->n_nodes && st == XF_OK; i++) {
        const xf_node *nd = &g->nodes[order[i]];
        if (nd->op == XF_OP_OPAQUE) {
            st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: rule has an opaque node");
            break;
        }
        for (int j = 0; j < nd->n_inputs; j++) {
            ins[j] = nd->inputs[j] < 0 ? -1 : map[nd->inputs[j]];
            if (ins[j] >= 0) in_sh[j] = out->values[ins[j]].shape;
        }
        xf_params p;
        char d[128];
        if (!params_at(g, nd, in_sh, &p)) {
            st = XF_FAIL(err, XF_ERR_SHAPE,
                         "%s does not apply at these shapes (split of an odd axis into halves, "
                         "or element-wise operands of different shapes)",
                         xf_node_describe(g, order[i], d, sizeof d));
            break;
        }
        int n = xf_graph_add_node(out, nd->op, &p, ins, nd->n_inputs, nd->n_outputs, nd->name, err);
        if (n < 0) {
            st = err ? err->code : XF_ERR_SHAPE;
            break;
        }
        for (int j = 0; j < nd->n_outputs; j++) map[nd->outputs[j]] = out->nodes[n].outputs[j];
    }
    for (int o = 0; o < g->n_outputs && st == XF_OK; o++)
        st = xf_graph_mark_output(out, map[g->outputs[o]], err);
out:
    xf_free(map);
    xf_free(order);
    xf_free(ins);
    xf_free(in_sh);
    return st;
}

xf_status xf_verify_rule_at_shapes(const xf_rule *r, const xf_shape *inputs, xf_rule *out,
                                   xf_error *err)
{
    xf_rule_init(out);
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_shape *own = &r->src.values[r->src.inputs[i]].shape;
        if (inputs[i].rank != own->rank) {
            char a[96], b[96];
            return XF_FAIL(err, XF_ERR_SHAPE, "rule input %d is %s; %s has another rank", i,
                           xf_shape_str(own, a, sizeof a), xf_shape_str(&inputs[i], b, sizeof b));
        }
    }
    xf_status st = rebuild_side(&r->src, inputs, &out->src, err);
    if (st == XF_OK) st = rebuild_side(&r->dst, inputs, &out->dst, err);
    if (st == XF_OK) st = xf_rule_validate(out, err);
    out->fingerprint = r->fingerprint;
    return st;
}
