/*
 * narrow.c — part of xf_agent_prepare: positions of a tensor that no output
 * reads are not computed.
 *
 * Classifiers over sequences read one position at the end: a ViT's head
 * takes the class token (Gather(x, 0, axis=1) after the last layer norm), a
 * BERT pooler the first token. Everything between the last mixing of
 * positions (attention's keys and values) and that Gather is computed for
 * all T positions and all but one are thrown away: in a 4-layer ViT on 197
 * tokens, the last block's MLP, its query and output projections and 196
 * of its attention rows, about a fifth of the model's multiply-adds. ONNX
 * Runtime has no pass that moves a Gather above a MatMul, so a runtime
 * does not remove it either.
 *
 * How. Each such Gather becomes Reshape(Slice(x, [i, i+1) on its axis)),
 * (without `move` that is all: the form in which proved slice rules move
 * it, issue 28), and a slice made here moves above the operator computing its input x
 * whenever x has no other reader (identical slices of x are merged first):
 * the operator then computes only the slice, and its operands are sliced
 * in turn where they carry the axis (an operand that broadcasts along it,
 * and a matmul operand the axis does not index, stay whole). Operators a
 * slice moves above: element-wise ops (broadcasting), where, scalar_mul,
 * matmul (rows, columns or a batch axis), gemm (rows or columns), layernorm and softmax along
 * another axis, transpose, and reshape when the dims up to the axis are
 * unchanged. A slice stops at anything else, at a value with other readers
 * (attention's keys and values need every position) and at graph inputs
 * and outputs. Each move keeps the values the outputs read (the same
 * arithmetic on fewer rows); a slice of a constant is a weight-only node
 * that finishing folds into an initializer.
 */
#include "agent/rewrite/narrow_internal.h"

#include <stdio.h>
#include <string.h>


#define NARROW_MAX_ARITY 8

/* A slice made here: [start, end) along one (non-negative) axis. */
typedef struct cut {
    int axis;
    int64_t start, end;
} cut;

typedef struct narrow_ctx {
    xf_graph *g;
    int move; /* 0: gathers become slices, nothing moves (the slice rules move them) */
    uint8_t *mine;  /* per node: a slice made here (only these move) */
    uint8_t *dead;  /* per node */
    uint8_t *vdead; /* per value */
    int node_cap, value_cap;
    int n_made; /* slices made, for unique names */
    xf_error *err;
} narrow_ctx;

static uint8_t *grow_flags(uint8_t *p, int old_n, int n)
{
    uint8_t *q = xf_realloc(p, (size_t)n);
    if (q) memset(q + old_n, 0, (size_t)(n - old_n));
    return q;
}

/* Flag arrays cover every node and value of g. */
static xf_status fit(narrow_ctx *x)
{
    const xf_graph *g = x->g;
    if (g->n_nodes > x->node_cap) {
        int n = g->n_nodes + 64;
        uint8_t *m = grow_flags(x->mine, x->node_cap, n);
        if (m) x->mine = m;
        uint8_t *d = m ? grow_flags(x->dead, x->node_cap, n) : NULL;
        if (!d) return XF_FAIL(x->err, XF_ERR_NOMEM, "out of memory narrowing selections");
        x->dead = d;
        x->node_cap = n;
    }
    if (g->n_values > x->value_cap) {
        int n = g->n_values + 64;
        uint8_t *v = grow_flags(x->vdead, x->value_cap, n);
        if (!v) return XF_FAIL(x->err, XF_ERR_NOMEM, "out of memory narrowing selections");
        x->vdead = v;
        x->value_cap = n;
    }
    return XF_OK;
}

static cut node_cut(const xf_node *n)
{
    cut c = {(int)n->params.axes[0], n->params.starts[0], n->params.ends[0]};
    return c;
}

static int same_cut(const xf_node *n, const cut *c)
{
    cut d = node_cut(n);
    return d.axis == c->axis && d.start == c->start && d.end == c->end;
}

static void replace_uses(xf_graph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++) {
        xf_node *n = &g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] == from) n->inputs[j] = to;
    }
}

/* Value id of value[c] along c.axis: an existing slice made here, or a new
 * one; -1 with x->err set when out of memory. */
static int slice_of(narrow_ctx *x, int value, cut c)
{
    xf_graph *g = x->g;
    for (int i = 0; i < g->n_nodes; i++)
        if (x->mine[i] && !x->dead[i] && g->nodes[i].inputs[0] == value &&
            same_cut(&g->nodes[i], &c))
            return g->nodes[i].outputs[0];
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = c.axis;
    p.starts[0] = c.start;
    p.ends[0] = c.end;
    p.steps[0] = 1;
    char name[512];
    const char *base = g->values[value].name ? g->values[value].name : "value";
    snprintf(name, sizeof name, "%s_narrow%d", base, x->n_made++);
    int idx = xf_graph_add_node(g, XF_OP_SLICE, &p, &value, 1, 1, name, x->err);
    if (idx < 0 || fit(x) != XF_OK) return -1;
    x->mine[idx] = 1;
    return g->nodes[idx].outputs[0];
}

/* Operands of an element-wise op (numpy broadcasting) for output axis k of
 * an output shaped o: ax[j] the operand's own axis to slice, -1 when it
 * broadcasts along k (dim 1 or no such axis). 0 when an operand's dim is
 * neither (not a broadcast the slice can follow). */
static int broadcast_axes(const xf_graph *g, const xf_node *n, int k, const xf_shape *o, int *ax)
{
    for (int j = 0; j < n->n_inputs; j++) {
        ax[j] = -1;
        if (n->inputs[j] < 0) continue;
        const xf_shape *s = &g->values[n->inputs[j]].shape;
        int a = k - (o->rank - s->rank);
        if (a < 0 || s->dims[a] == 1) continue;
        if (s->dims[a] != o->dims[k]) return 0;
        ax[j] = a;
    }
    return 1;
}

/* matmul [.., M, K] x [.., K, N]: rows slice A, columns slice B, a batch
 * axis slices the operands that carry it. */
static int matmul_axes(const xf_graph *g, const xf_node *n, int k, const xf_shape *o, int *ax)
{
    const xf_shape *a = &g->values[n->inputs[0]].shape, *b = &g->values[n->inputs[1]].shape;
    if (a->rank < 2 || b->rank < 2) return 0;
    ax[0] = ax[1] = -1;
    if (k == o->rank - 2) {
        ax[0] = a->rank - 2;
        return 1;
    }
    if (k == o->rank - 1) {
        ax[1] = b->rank - 1;
        return 1;
    }
    const xf_shape *s[2] = {a, b};
    for (int j = 0; j < 2; j++) {
        int aj = k - (o->rank - s[j]->rank);
        if (aj < 0 || s[j]->dims[aj] == 1) continue;
        if (s[j]->dims[aj] != o->dims[k]) return 0;
        ax[j] = aj;
    }
    return 1;
}

/* gemm alpha*op(A)*op(B) + beta*C, all 2-D: rows slice op(A), columns
 * op(B), and C where it carries the axis (it broadcasts to the output). */
static int gemm_axes(const xf_graph *g, const xf_node *n, int k, const xf_shape *o, int *ax)
{
    if (g->values[n->inputs[0]].shape.rank != 2 || g->values[n->inputs[1]].shape.rank != 2)
        return 0;
    if (k == 0) ax[0] = n->params.trans_a ? 1 : 0;
    else ax[1] = n->params.trans_b ? 0 : 1;
    if (n->n_inputs < 3 || n->inputs[2] < 0) return 1;
    const xf_shape *c = &g->values[n->inputs[2]].shape;
    int a = k - (2 - c->rank);
    if (a < 0 || c->dims[a] == 1) return 1;
    if (c->dims[a] != o->dims[k]) return 0;
    ax[2] = a;
    return 1;
}

/* Whether a slice c of node n's output (shaped o) can move above n: fills
 * ax (the axis to slice in each operand, -1: whole) and np (n's parameters
 * once it computes only the slice). */
static int plan(const xf_graph *g, const xf_node *n, const xf_shape *o, cut c, int *ax,
                xf_params *np)
{
    int k = c.axis;
    *np = n->params;
    if (n->n_inputs > NARROW_MAX_ARITY) return 0;
    for (int j = 0; j < n->n_inputs; j++) ax[j] = -1;
    if (xf_op_is(n->op, XF_OPC_ELEMENTWISE)) return broadcast_axes(g, n, k, o, ax);
    switch (n->op) {
    case XF_OP_MATMUL:
        return matmul_axes(g, n, k, o, ax);
    case XF_OP_GEMM:
        return gemm_axes(g, n, k, o, ax);
    case XF_OP_LAYERNORM: {
        int a = xf_norm_axis(n->params.axis, o->rank);
        if (a < 0 || k >= a) return 0;
        ax[0] = k;
        return 1;
    }
    case XF_OP_SOFTMAX: {
        int a = xf_norm_axis(n->params.axis, o->rank);
        if (a < 0 || k == a) return 0;
        ax[0] = k;
        return 1;
    }
    case XF_OP_TRANSPOSE: {
        int perm = n->params.n_axes == o->rank ? (int)n->params.axes[k] : o->rank - 1 - k;
        ax[0] = xf_norm_axis(perm, o->rank);
        return ax[0] >= 0;
    }
    case XF_OP_RESHAPE: {
        const xf_shape *in = &g->values[n->inputs[0]].shape;
        if (in->rank <= k || np->n_shape != o->rank) return 0;
        for (int i = 0; i <= k; i++)
            if (in->dims[i] != o->dims[i]) return 0;
        ax[0] = k;
        np->shape[k] = c.end - c.start;
        return 1;
    }
    default:
        return 0;
    }
}

/* Moves slice node s above the producer of its input when it can: 1 moved,
 * 0 not, -1 failed (x->err set). */
static int hoist(narrow_ctx *x, int s)
{
    xf_graph *g = x->g;
    int v = g->nodes[s].inputs[0], s_out = g->nodes[s].outputs[0];
    if (g->values[v].kind != XF_VALUE_NODE || xf_graph_is_output(g, v) ||
        xf_graph_is_output(g, s_out))
        return 0;
    int n = g->values[v].producer;
    if (x->dead[n] || g->nodes[n].n_outputs != 1) return 0;
    cut c = node_cut(&g->nodes[s]);
    for (int i = 0; i < g->n_nodes; i++) { /* every reader of v: s or an identical slice */
        if (x->dead[i] || i == s) continue;
        const xf_node *r = &g->nodes[i];
        for (int j = 0; j < r->n_inputs; j++)
            if (r->inputs[j] == v &&
                (!x->mine[i] || !same_cut(r, &c) || xf_graph_is_output(g, r->outputs[0])))
                return 0;
    }
    int ax[NARROW_MAX_ARITY];
    xf_params np;
    xf_shape full = g->values[v].shape;
    if (!plan(g, &g->nodes[n], &full, c, ax, &np)) return 0;
    for (int i = 0; i < g->n_nodes; i++) /* merge the identical slices into s */
        if (i != s && x->mine[i] && !x->dead[i] && g->nodes[i].inputs[0] == v) {
            replace_uses(g, g->nodes[i].outputs[0], s_out);
            x->dead[i] = 1;
            x->vdead[g->nodes[i].outputs[0]] = 1;
        }
    int in[NARROW_MAX_ARITY];
    int n_in = g->nodes[n].n_inputs;
    for (int j = 0; j < n_in; j++) {
        in[j] = g->nodes[n].inputs[j];
        if (ax[j] < 0) continue;
        cut cj = {ax[j], c.start, c.end};
        in[j] = slice_of(x, in[j], cj);
        if (in[j] < 0) return -1;
    }
    xf_node *nn = &g->nodes[n];
    xf_dtype dt[NARROW_MAX_ARITY];
    xf_shape sh[NARROW_MAX_ARITY];
    for (int j = 0; j < n_in; j++) {
        nn->inputs[j] = in[j];
        dt[j] = in[j] >= 0 ? g->values[in[j]].dtype : XF_DTYPE_INVALID;
        sh[j] = in[j] >= 0 ? g->values[in[j]].shape : xf_shape_make(0, NULL);
    }
    xf_params_canonical(nn->op, &np);
    nn->params = np;
    xf_dtype odt;
    xf_shape osh;
    char d[256];
    if (xf_op_infer(nn->op, &nn->params, n_in, dt, sh, 1, &odt, &osh, x->err) != XF_OK ||
        !xf_shape_equal(&osh, &g->values[s_out].shape)) {
        XF_FAIL(x->err, XF_ERR_INTERNAL, "narrowing %s did not give the slice's shape",
                xf_node_describe(g, n, d, sizeof d));
        return -1;
    }
    g->values[v].shape = osh;
    replace_uses(g, s_out, v);
    x->dead[s] = 1;
    x->vdead[s_out] = 1;
    return 1;
}

/* Gather node i with a constant scalar index on a computed tensor becomes
 * Reshape(slice), kept only when the slice moves above the gather's input:
 * 1 done, 0 not such a gather (or nothing to narrow), -1 failed. */
static int seed(narrow_ctx *x, int i)
{
    xf_graph *g = x->g;
    const xf_node *n = &g->nodes[i];
    if (n->op != XF_OP_GATHER || n->n_inputs != 2 || n->inputs[0] < 0 || n->inputs[1] < 0)
        return 0;
    const xf_value *d = &g->values[n->inputs[0]], *ix = &g->values[n->inputs[1]];
    if (d->kind == XF_VALUE_CONST || d->shape.rank < 2 || ix->kind != XF_VALUE_CONST ||
        ix->shape.rank != 0 || !ix->data || (ix->dtype != XF_I64 && ix->dtype != XF_I32))
        return 0;
    int a = xf_norm_axis(n->params.axis, d->shape.rank);
    if (a < 0) return 0;
    int64_t dim = d->shape.dims[a];
    int64_t at = ix->dtype == XF_I64 ? *(const int64_t *)ix->data : *(const int32_t *)ix->data;
    if (at < 0) at += dim;
    if (dim <= 1 || at < 0 || at >= dim) return 0;
    xf_shape out = g->values[n->outputs[0]].shape;
    cut c = {a, at, at + 1};
    int n_nodes = g->n_nodes;
    int sl = slice_of(x, n->inputs[0], c);
    if (sl < 0) return -1;
    int made = g->n_nodes > n_nodes; /* else a slice an earlier move made, still read */
    xf_node *r = &g->nodes[i];
    xf_node was = *r;
    int data = r->inputs[0];
    r->op = XF_OP_RESHAPE;
    r->params = xf_params_default();
    r->params.n_shape = out.rank;
    for (int k = 0; k < out.rank; k++) r->params.shape[k] = out.dims[k];
    xf_params_canonical(XF_OP_RESHAPE, &r->params);
    r->inputs[0] = sl;
    r->n_inputs = 1;
    int s = g->values[sl].producer;
    if (!x->move) return 1;
    int moved = hoist(x, s);
    if (moved != 0) return moved;
    r = &g->nodes[i]; /* nothing to narrow: the gather stays as it was */
    r->op = was.op;
    r->params = was.params;
    r->inputs[0] = data;
    r->n_inputs = was.n_inputs;
    if (made) {
        x->dead[s] = 1;
        x->vdead[sl] = 1;
    }
    return 0;
}

xf_status rw_narrow_selections(xf_graph *g, int move, int *n_selections, int *n_narrowed,
                               xf_error *err)
{
    *n_selections = *n_narrowed = 0;
    narrow_ctx x;
    memset(&x, 0, sizeof x);
    x.g = g;
    x.move = move;
    x.err = err;
    xf_status st = fit(&x);
    int n0 = g->n_nodes, failed = 0;
    for (int i = 0; i < n0 && st == XF_OK && !failed; i++) {
        int r = seed(&x, i);
        if (r < 0) failed = 1;
        else *n_selections += r, *n_narrowed += move ? r : 0;
    }
    for (int changed = move && *n_selections > 0; changed && st == XF_OK && !failed;) {
        changed = 0;
        for (int s = 0; s < g->n_nodes && !failed; s++) {
            if (!x.mine[s] || x.dead[s]) continue;
            int r = hoist(&x, s);
            if (r < 0) failed = 1;
            else if (r) changed = 1, (*n_narrowed)++;
        }
    }
    if (failed) st = err ? err->code : XF_ERR_NOMEM;
    int any_dead = 0;
    for (int i = 0; i < g->n_nodes && st == XF_OK; i++) any_dead |= x.dead[i];
    if (st == XF_OK && any_dead) st = xf_edit_compact(g, x.dead, x.vdead, err);
    xf_free(x.mine);
    xf_free(x.dead);
    xf_free(x.vdead);
    return st;
}
