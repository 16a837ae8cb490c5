/*
 * fuse_layernorm.c — part of xf_agent_prepare: layer norms that an exporter
 * wrote out operator by operator become one layernorm node.
 *
 * PyTorch (and most exporters before opset 17) write LayerNorm over the last
 * axis as
 *     m = ReduceMean(x, [-1]);  d = Sub(x, m);  v = ReduceMean(Pow(d, 2), [-1])
 *     y = Div(d, Sqrt(Add(v, eps)));  [y = Mul(y, gamma)];  [y = Add(y, beta)]
 * (or Mul(d, d) for the square): nine operators, each a pass over the
 * activation. The rules know `layernorm` as one operator and the cost model
 * times it as one oneDNN primitive; ONNX runtimes fuse the chain too (ONNX
 * Runtime's LayerNormFusion), and the model is written back with a standard
 * LayerNormalization (export then declares opset 17).
 *
 * A chain is fused only when it is exactly that: both reductions over the
 * last axis with keepdims, the exponent a constant 2, eps a constant scalar,
 * gamma and beta constants of shape [C] (C the last dim), every intermediate
 * value used only inside the chain (d by the square and the divide) and not
 * a graph output. The fused node takes over the chain's last value, so its
 * name and graph-output positions stay; a missing gamma becomes a constant
 * of ones.
 */
#include "agent/rewrite/fuse_layernorm_internal.h"
#include "agent/rewrite/chain_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct ln_chain {
    int x, final;       /* input value, value the fused node takes over */
    int gamma, beta;    /* constant values, -1: absent */
    float eps;
    int nodes[9], n_nodes;
} ln_chain;

static int is_op(const xf_graph *g, int node, xf_op op, int n_inputs)
{
    return node >= 0 && g->nodes[node].op == op && g->nodes[node].n_inputs == n_inputs;
}

static int out0(const xf_graph *g, int node)
{
    return g->nodes[node].outputs[0];
}

/* A reduce_mean over the last axis of its input, keeping dims. */
static int mean_last(const xf_graph *g, int node)
{
    if (!is_op(g, node, XF_OP_REDUCE_MEAN, 1)) return 0;
    const xf_params *p = &g->nodes[node].params;
    int rank = g->values[g->nodes[node].inputs[0]].shape.rank;
    return p->keepdims && p->n_axes == 1 && rank >= 1 &&
           (p->axes[0] == -1 || p->axes[0] == rank - 1);
}

/* A float32 constant with one element; *value receives it. */
static int scalar_const(const xf_graph *g, int v, float *value)
{
    const xf_value *c = &g->values[v];
    if (c->kind != XF_VALUE_CONST || c->dtype != XF_F32 || xf_shape_numel(&c->shape) != 1)
        return 0;
    *value = *(const float *)c->data;
    return 1;
}

/* A float32 constant of shape [n]. */
static int vector_const(const xf_graph *g, int v, int64_t n)
{
    const xf_value *c = &g->values[v];
    return c->kind == XF_VALUE_CONST && c->dtype == XF_F32 && c->shape.rank == 1 &&
           c->shape.dims[0] == n;
}

/* Extends the chain by the sole reader of its last value when that is a
 * binary `op` with a float32 constant [C] (gamma for mul, beta for add),
 * stored in *slot. */
static int affine_step(const xf_graph *g, const xf_graph_index *ix, const int *uses, xf_op op,
                       int64_t C, ln_chain *ch, int *chain, int *n, int *slot)
{
    int node = rw_sole_reader(ix, uses, ch->final);
    if (!is_op(g, node, op, 2)) return 0;
    int k = rw_other_operand(g, node, ch->final);
    if (k < 0 || !vector_const(g, k, C)) return 0;
    *slot = k;
    ch->final = out0(g, node);
    chain[(*n)++] = node;
    return 1;
}

/* Recognises the chain whose first node is reduce_mean `m`. */
static int match_chain(const xf_graph *g, const xf_graph_index *ix, const int *uses, int m,
                       void *out)
{
    ln_chain *ch = out;
    if (!mean_last(g, m)) return 0;
    int x = g->nodes[m].inputs[0];
    const xf_value *xv = &g->values[x];
    if (xv->dtype != XF_F32 || xv->shape.rank < 1) return 0;
    int64_t C = xv->shape.dims[xv->shape.rank - 1];
    int sub = rw_sole_reader(ix, uses, out0(g, m));
    if (!is_op(g, sub, XF_OP_SUB, 2) || g->nodes[sub].inputs[0] != x ||
        g->nodes[sub].inputs[1] != out0(g, m))
        return 0;
    int d = out0(g, sub);
    /* d feeds the square (pow(d, 2) or mul(d, d)) and the divide, nothing
     * else: two distinct readers, two input slots (three for mul(d, d)) */
    int n_users;
    const int *users = xf_graph_index_users(ix, d, &n_users);
    if (n_users != 2) return 0;
    int sq = -1, div = -1;
    for (int k = 0; k < n_users; k++) {
        int n = users[k];
        float two;
        if (is_op(g, n, XF_OP_POW, 2) && g->nodes[n].inputs[0] == d &&
            scalar_const(g, g->nodes[n].inputs[1], &two) && two == 2.0f)
            sq = n;
        else if (is_op(g, n, XF_OP_MUL, 2) && g->nodes[n].inputs[0] == d &&
                 g->nodes[n].inputs[1] == d)
            sq = n;
        else if (is_op(g, n, XF_OP_DIV, 2) && g->nodes[n].inputs[0] == d)
            div = n;
    }
    if (sq < 0 || div < 0 || uses[d] != (g->nodes[sq].op == XF_OP_MUL ? 3 : 2)) return 0;
    int var = rw_sole_reader(ix, uses, out0(g, sq));
    if (!mean_last(g, var)) return 0;
    int add_eps = rw_sole_reader(ix, uses, out0(g, var));
    if (!is_op(g, add_eps, XF_OP_ADD, 2)) return 0;
    int eps_v = rw_other_operand(g, add_eps, out0(g, var));
    if (eps_v < 0 || !scalar_const(g, eps_v, &ch->eps) || !(ch->eps >= 0.0f)) return 0;
    int root = rw_sole_reader(ix, uses, out0(g, add_eps));
    if (!is_op(g, root, XF_OP_SQRT, 1) || rw_sole_reader(ix, uses, out0(g, root)) != div ||
        g->nodes[div].inputs[1] != out0(g, root))
        return 0;
    int chain[9] = {m, sub, sq, var, add_eps, root, div};
    int n = 7;
    ch->x = x;
    ch->final = out0(g, div);
    ch->gamma = ch->beta = -1;
    if (affine_step(g, ix, uses, XF_OP_MUL, C, ch, chain, &n, &ch->gamma))
        affine_step(g, ix, uses, XF_OP_ADD, C, ch, chain, &n, &ch->beta);
    memcpy(ch->nodes, chain, sizeof(int) * (size_t)n);
    ch->n_nodes = n;
    return 1;
}

/* Adds a constant of ones [C] for a chain without gamma. */
static int ones_const(xf_graph *g, int64_t C, const char *base, xf_error *err)
{
    float *one = xf_malloc(sizeof(float) * (size_t)(C > 0 ? C : 1));
    if (!one) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory fusing layer norms");
        return -1;
    }
    for (int64_t i = 0; i < C; i++) one[i] = 1.0f;
    char name[512];
    snprintf(name, sizeof name, "%s_scale", base);
    xf_shape s = xf_shape_make(1, &C);
    return xf_graph_add_const_owned(g, name, XF_F32, &s, one, err);
}

/* Adds the layernorm node for ch and makes it produce ch->final. */
static xf_status fuse(xf_graph *g, const void *chain, uint8_t *node_dead, uint8_t *value_dead,
                      xf_error *err)
{
    const ln_chain *ch = chain;
    const char *fname = g->nodes[ch->nodes[ch->n_nodes - 1]].name;
    char base[480];
    snprintf(base, sizeof base, "%s", fname ? fname : "layernorm");
    int64_t C = g->values[ch->x].shape.dims[g->values[ch->x].shape.rank - 1];
    int gamma = ch->gamma >= 0 ? ch->gamma : ones_const(g, C, base, err);
    if (gamma < 0) return err ? err->code : XF_ERR_NOMEM;
    xf_params p = xf_params_default();
    p.axis = -1;
    p.epsilon = ch->eps;
    int in[3] = {ch->x, gamma, ch->beta};
    char name[512];
    snprintf(name, sizeof name, "%s_layernorm", base);
    int ln = xf_graph_add_node(g, XF_OP_LAYERNORM, &p, in, ch->beta >= 0 ? 3 : 2, 1, name, err);
    if (ln < 0) return err ? err->code : XF_ERR_SHAPE;
    /* the new node takes the chain's last value over; its own output dies */
    value_dead[g->nodes[ln].outputs[0]] = 1;
    g->nodes[ln].outputs[0] = ch->final;
    g->values[ch->final].producer = ln;
    g->values[ch->final].producer_output = 0;
    for (int k = 0; k < ch->n_nodes; k++) {
        int n = ch->nodes[k];
        node_dead[n] = 1;
        if (out0(g, n) != ch->final) value_dead[out0(g, n)] = 1;
    }
    return XF_OK;
}

xf_status rw_fuse_layernorms(xf_graph *g, int *n_fused, xf_error *err)
{
    /* a chain has 7 nodes at least; a fused node may add a constant of ones */
    return rw_fuse_chains(g, "layer norms", sizeof(ln_chain), 7, 2, match_chain, fuse, n_fused,
                          err);
}
