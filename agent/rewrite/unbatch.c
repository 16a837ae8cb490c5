/*
 * unbatch.c — xf_agent_unbatch: a batch-1 model's activations computed
 * without their leading unit dimension, a layout a target may run faster.
 *
 * Why: transformers are exported with [1, S, H] activations. ONNX Runtime
 * turns every MatMul + bias Add on such a 3-D input into Reshape -> Gemm ->
 * Reshape (its MatMulAddFusion wants 2-D), so a GPT-like model of 61 nodes
 * as ORT runs it has 22 Reshapes, and at small sizes their per-node cost
 * shows. On [S, H] the same layers are plain Gemms. Other runtimes gain
 * nothing, so this is not a preparation step: it is a layout variant that
 * the arbiter (agent/search/arbiter.c) times in the target beside each
 * candidate, and the target decides.
 *
 * How: values of rank >= 3 with a leading dim of 1 are grouped by the
 * operators that keep them in step (a union-find over values): element-wise
 * ops and where (operands of the output's rank), matmul (ditto), layernorm,
 * softmax and reductions not along axis 0, transpose keeping axis 0 first, split and
 * concat not along axis 0, and Gather along axis 0 of a table (its indices
 * lose their leading 1 too). A group is computed without the leading dim
 * when that saves more Reshapes than it costs: it gains two per matmul by a
 * 2-D right operand, and costs one per adapter: a Reshape that drops the
 * dim after a graph input or an operator outside the group, and one that
 * restores it before a graph output or an outside reader. Reshapes at the
 * edge adapt at no cost (their target changes), as do constants (a Reshape of
 * a constant is weight-only: xf_agent_finish folds it). Axes change by one
 * where they were counted from the front; graph inputs and outputs keep
 * their names and shapes.
 */
#include "agent/rewrite/rewrite.h"

#include <stdio.h>
#include <string.h>

#define UNBATCH_MAX_LINKS (XF_MAX_SPLIT + 8)

static int unit_led(const xf_value *v)
{
    return v->shape.rank >= 3 && v->shape.dims[0] == 1;
}

static int find(int *parent, int v)
{
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
}

/* The values node n keeps in step, into links (outputs first); 0 when n
 * does not (its values keep their layout). */
static int links(const xf_graph *g, const xf_node *n, int *lk, int *n_lk)
{
    *n_lk = 0;
    if (n->op == XF_OP_OPAQUE || n->n_outputs < 1 || n->n_outputs + n->n_inputs > UNBATCH_MAX_LINKS)
        return 0;
    for (int k = 0; k < n->n_outputs; k++) {
        if (!unit_led(&g->values[n->outputs[k]])) return 0;
        lk[(*n_lk)++] = n->outputs[k];
    }
    int r = g->values[n->outputs[0]].shape.rank;
    /* element-wise ops and matmul: the operands of the output's rank (below) */
    if (!xf_op_is(n->op, XF_OPC_ELEMENTWISE) && n->op != XF_OP_MATMUL) switch (n->op) {
    case XF_OP_LAYERNORM:
    case XF_OP_SOFTMAX:
    case XF_OP_SPLIT:
    case XF_OP_CONCAT:
        if (xf_norm_axis(n->params.axis, r) < 1) return 0;
        break;
    case XF_OP_TRANSPOSE:
        if (n->params.n_axes != r || n->params.axes[0] != 0) return 0;
        break;
    case XF_OP_REDUCE_MEAN:
    case XF_OP_REDUCE_SUM:
    case XF_OP_REDUCE_MAX: {
        const xf_value *in = &g->values[n->inputs[0]];
        if (n->params.n_axes < 1 || !unit_led(in)) return 0;
        for (int k = 0; k < n->params.n_axes; k++)
            if (xf_norm_axis(n->params.axes[k], in->shape.rank) < 1) return 0;
        lk[(*n_lk)++] = n->inputs[0];
        return 1;
    }
    case XF_OP_GATHER: {
        if (n->inputs[1] < 0) return 0;
        const xf_value *d = &g->values[n->inputs[0]], *ix = &g->values[n->inputs[1]];
        /* a table the group could flatten would need the gather adapted */
        if (xf_norm_axis(n->params.axis, d->shape.rank) != 0 || !unit_led(ix) || unit_led(d))
            return 0;
        lk[(*n_lk)++] = n->inputs[1];
        return 1;
    }
    default:
        return 0;
    }
    for (int j = 0; j < n->n_inputs; j++) {
        int v = n->inputs[j];
        if (v < 0 || g->values[v].shape.rank != r) continue;
        if (!unit_led(&g->values[v])) return 0;
        lk[(*n_lk)++] = v;
    }
    return 1;
}

typedef struct unbatch_ctx {
    xf_graph *g;
    int *parent;      /* union-find over values */
    uint8_t *linking; /* per node: keeps its values in step (links() is 1) */
    int *gain, *cost; /* per group root */
    uint8_t *flat;    /* per value: its group drops the leading dim */
    int n_values;     /* values before any adapter was added */
    xf_error *err;
} unbatch_ctx;

/* Whether value v (of a dropped group) is made by its producer without the
 * leading dim (a linking node, or a Reshape whose target changes). */
static int made_flat(const unbatch_ctx *x, int v)
{
    const xf_value *val = &x->g->values[v];
    if (val->kind != XF_VALUE_NODE) return 0;
    return x->linking[val->producer] || x->g->nodes[val->producer].op == XF_OP_RESHAPE;
}

/* Whether reader node i needs v with its leading dim back. */
static int needs_restore(const unbatch_ctx *x, int i)
{
    return !x->linking[i] && x->g->nodes[i].op != XF_OP_RESHAPE;
}

/* Tallies gain and cost per group (readers[v]: bit 1 a linking reader,
 * bit 2 one that needs the leading dim back, bit 4 a graph output). */
static void weigh(unbatch_ctx *x, uint8_t *readers)
{
    xf_graph *g = x->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int j = 0; j < n->n_inputs; j++)
            if (n->inputs[j] >= 0)
                readers[n->inputs[j]] |= (uint8_t)(needs_restore(x, i) ? 2 : x->linking[i] ? 1 : 0);
        if (x->linking[i] && n->op == XF_OP_MATMUL && g->values[n->inputs[1]].shape.rank == 2)
            x->gain[find(x->parent, n->outputs[0])] += 2;
    }
    for (int i = 0; i < g->n_outputs; i++) readers[g->outputs[i]] |= 4;
    for (int v = 0; v < x->n_values; v++) {
        int root = find(x->parent, v);
        if (!unit_led(&g->values[v]) || x->gain[root] == 0) continue;
        if (made_flat(x, v)) x->cost[root] += (readers[v] & 6) != 0;
        else if (g->values[v].kind != XF_VALUE_CONST && (readers[v] & 1)) x->cost[root]++;
    }
}

static int add_reshape(unbatch_ctx *x, int v, const xf_shape *to, const char *suffix)
{
    xf_graph *g = x->g;
    xf_params p = xf_params_default();
    p.n_shape = to->rank;
    for (int k = 0; k < to->rank; k++) p.shape[k] = to->dims[k];
    char name[512];
    snprintf(name, sizeof name, "%s_%s", g->values[v].name ? g->values[v].name : "value", suffix);
    int idx = xf_graph_add_node(g, XF_OP_RESHAPE, &p, &v, 1, 1, name, x->err);
    return idx < 0 ? -1 : g->nodes[idx].outputs[0];
}

static xf_shape dropped(const xf_shape *s)
{
    return xf_shape_make(s->rank - 1, s->dims + 1);
}

/* Parameters of linking node n once its values lose their leading dim. */
static void shift_params(xf_node *n, int r)
{
    switch (n->op) {
    case XF_OP_LAYERNORM:
    case XF_OP_SOFTMAX:
    case XF_OP_SPLIT:
    case XF_OP_CONCAT:
        if (n->params.axis > 0) n->params.axis--;
        break;
    case XF_OP_REDUCE_MEAN:
    case XF_OP_REDUCE_SUM:
    case XF_OP_REDUCE_MAX:
        for (int k = 0; k < n->params.n_axes; k++)
            if (n->params.axes[k] > 0) n->params.axes[k]--;
        break;
    case XF_OP_TRANSPOSE:
        for (int k = 0; k + 1 < r; k++) n->params.axes[k] = n->params.axes[k + 1] - 1;
        n->params.axes[r - 1] = 0;
        n->params.n_axes = r - 1;
        break;
    default:
        break;
    }
}

/* The adapter Reshape of v in adapters[v], made on first use: restoring
 * the leading dim of a value that lost it, or dropping it. */
static int adapter(unbatch_ctx *x, int *adapters, int v, int restore)
{
    if (adapters[v] >= 0) return adapters[v];
    const xf_shape *s = &x->g->values[v].shape;
    xf_shape to = dropped(s);
    if (restore) {
        int64_t dims[XF_MAX_DIMS];
        dims[0] = 1;
        memcpy(dims + 1, s->dims, sizeof(int64_t) * (size_t)s->rank);
        to = xf_shape_make(s->rank + 1, dims);
    }
    adapters[v] = add_reshape(x, v, &to, restore ? "batched" : "unbatched");
    return adapters[v];
}

/* Drops the leading dim of every group worth it; *n_dropped: values that
 * lost it. adapters: 2 * n_values ints of scratch. */
static xf_status apply(unbatch_ctx *x, int *adapters, int *n_dropped)
{
    xf_graph *g = x->g;
    int nv = x->n_values, nn = g->n_nodes;
    for (int v = 0; v < nv; v++) {
        int root = find(x->parent, v);
        x->flat[v] = unit_led(&g->values[v]) && x->gain[root] > x->cost[root];
        adapters[v] = adapters[nv + v] = -1;
    }
    for (int v = 0; v < nv; v++) { /* made without the dim */
        if (!x->flat[v] || !made_flat(x, v)) continue;
        xf_shape full = g->values[v].shape;
        g->values[v].shape = dropped(&full);
        (*n_dropped)++;
        xf_node *p = &g->nodes[g->values[v].producer];
        if (p->op == XF_OP_RESHAPE) {
            p->params.n_shape = full.rank - 1;
            for (int k = 1; k < full.rank; k++) p->params.shape[k - 1] = full.dims[k];
            p->params.shape[full.rank - 1] = 0;
        }
    }
    for (int i = 0; i < nn; i++) { /* adapters where a reader and its value disagree */
        for (int j = 0; j < g->nodes[i].n_inputs; j++) {
            int v = g->nodes[i].inputs[j], a = -1;
            if (v < 0 || v >= nv || !x->flat[v]) continue;
            if (!made_flat(x, v) && x->linking[i]) a = adapter(x, adapters, v, 0);
            else if (made_flat(x, v) && needs_restore(x, i)) a = adapter(x, adapters + nv, v, 1);
            else continue;
            if (a < 0) return x->err ? x->err->code : XF_ERR_NOMEM;
            g->nodes[i].inputs[j] = a;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) { /* outputs keep their shape and name */
        int v = g->outputs[i];
        if (v >= nv || !x->flat[v] || !made_flat(x, v)) continue;
        int u = adapter(x, adapters + nv, v, 1);
        if (u < 0) return x->err ? x->err->code : XF_ERR_NOMEM;
        for (int k = 0; k < g->n_outputs; k++)
            if (g->outputs[k] == v) g->outputs[k] = u;
        char *keep = g->values[v].name;
        g->values[v].name = g->values[u].name;
        g->values[u].name = keep;
    }
    for (int i = 0; i < nn; i++) {
        xf_node *n = &g->nodes[i];
        if (x->linking[i] && x->flat[n->outputs[0]])
            shift_params(n, g->values[n->outputs[0]].shape.rank + 1);
    }
    return XF_OK;
}

xf_status xf_agent_unbatch(const xf_graph *model, xf_graph *out, int *n_dropped, xf_error *err)
{
    *n_dropped = 0;
    xf_status st = xf_graph_clone_shared(model, out, err);
    if (st != XF_OK) return st;
    xf_graph *g = out;
    unbatch_ctx x = {g, NULL, NULL, NULL, NULL, NULL, g->n_values, err};
    size_t nv = (size_t)g->n_values + 1, nn = (size_t)g->n_nodes + 1;
    x.parent = xf_malloc(nv * sizeof *x.parent);
    x.gain = xf_calloc(nv, sizeof *x.gain);
    x.cost = xf_calloc(nv, sizeof *x.cost);
    x.flat = xf_calloc(nv, 1);
    x.linking = xf_calloc(nn, 1);
    uint8_t *readers = xf_calloc(nv, 1);
    int *adapters = xf_malloc(2 * nv * sizeof *adapters);
    if (!x.parent || !x.gain || !x.cost || !x.flat || !x.linking || !readers || !adapters)
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory unbatching '%s'",
                     model->name ? model->name : "model");
    if (st == XF_OK) {
        for (int v = 0; v < g->n_values; v++) x.parent[v] = v;
        int lk[UNBATCH_MAX_LINKS], n_lk;
        for (int i = 0; i < g->n_nodes; i++) {
            if (!links(g, &g->nodes[i], lk, &n_lk)) continue;
            x.linking[i] = 1;
            for (int k = 1; k < n_lk; k++) {
                int a = find(x.parent, lk[0]), b = find(x.parent, lk[k]);
                if (a != b) x.parent[b] = a;
            }
        }
        weigh(&x, readers);
        st = apply(&x, adapters, n_dropped);
    }
    if (st == XF_OK && *n_dropped > 0) st = xf_graph_validate(g, err);
    xf_free(x.parent);
    xf_free(x.gain);
    xf_free(x.cost);
    xf_free(x.flat);
    xf_free(x.linking);
    xf_free(readers);
    xf_free(adapters);
    if (st != XF_OK) {
        xf_error_prefix(err, "unbatching '%s'", model->name ? model->name : "model");
        xf_graph_free(out);
    }
    return st;
}
