/*
 * gnn_edge.c — the edge update φe(e, v_s, v_r, u) of the GNN encoder
 * (gnn.h), forward and backward, without building its [E, 4H] input.
 *
 * φe's first layer reads the concatenation of four H-wide vectors, so its
 * [4H, H] weight is four H x H row blocks W_e, W_s, W_r, W_u and
 *   pre = e·W_e + b + (v·W_s)[sender] + (v·W_r)[receiver] + (u·W_u)[graph].
 * The node and global products are taken once per node and per graph
 * instead of once per edge (a graph has more edges than nodes), which
 * roughly halves the encoder's largest matrix product and drops the copy of
 * the concatenation. The backward scatters the pre-activation gradient to
 * senders, receivers and graphs and multiplies once per block. The layers
 * after the first run as an MLP of their own on the same tensors.
 */
#include <string.h>

#include "agent/rl/gnn.h"

/* The MLP made of φe's layers after the first (n_layers 0 when there are none). */
static xf_nn_mlp edge_tail(const xf_nn_mlp *mlp)
{
    xf_nn_mlp t;
    memset(&t, 0, sizeof t);
    t.n_layers = mlp->n_layers - 1;
    for (int l = 0; l < t.n_layers; l++) t.layer[l] = mlp->layer[l + 1];
    for (int l = 0; l <= t.n_layers; l++) t.dims[l] = mlp->dims[l + 1];
    t.hidden = mlp->hidden;
    t.output = mlp->output;
    return t;
}

/* The first layer is followed by the hidden activation, or by the output
 * one when it is the only layer. */
static xf_nn_act first_act(const xf_nn_mlp *mlp)
{
    return mlp->n_layers == 1 ? mlp->output : mlp->hidden;
}

xf_status xf_gnn_edge_reserve(const xf_gnn *m, xf_nn_mlp_cache *mc, int rows, xf_error *err)
{
    xf_nn_mlp tail = edge_tail(&m->edge.mlp);
    return tail.n_layers > 0 ? xf_nn_mlp_cache_reserve(mc, &tail, rows, err) : XF_OK;
}

static void add_row(float *dst, const float *src, int H)
{
    for (int j = 0; j < H; j++) dst[j] += src[j];
}

const float *xf_gnn_edge_forward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                                 xf_gnn_cache *c, int k)
{
    int H = m->cfg.hidden, N = b->n_nodes, E = b->n_edges, G = b->n_graphs;
    size_t h = (size_t)H, hh = h * h;
    const float *ek = c->e + (size_t)k * (size_t)E * h, *vk = c->v + (size_t)k * (size_t)N * h;
    const float *uk = c->u + (size_t)k * (size_t)G * h;
    float *h1 = c->h1 + (size_t)k * (size_t)E * h;
    const xf_nn_linear *l0 = &m->edge.mlp.layer[0];
    const float *W = xf_nn_params_value(p, l0->w);
    xf_nn_linear_forward(h1, ek, W, xf_nn_params_value(p, l0->b), E, H, H);
    xf_nn_linear_forward(c->ps, vk, W + hh, NULL, N, H, H);
    xf_nn_linear_forward(c->pr, vk, W + 2 * hh, NULL, N, H, H);
    xf_nn_linear_forward(c->pu, uk, W + 3 * hh, NULL, G, H, H);
    for (int i = 0; i < E; i++) {
        float *row = h1 + (size_t)i * h;
        add_row(row, c->ps + (size_t)b->sender[i] * h, H);
        add_row(row, c->pr + (size_t)b->receiver[i] * h, H);
        add_row(row, c->pu + (size_t)b->edge_graph[i] * h, H);
    }
    xf_nn_act_forward(first_act(&m->edge.mlp), h1, h1, (size_t)E * h);
    xf_nn_mlp tail = edge_tail(&m->edge.mlp);
    return tail.n_layers > 0 ? xf_nn_mlp_forward(&tail, p, &c->mlp[3 + 3 * k], h1, E) : h1;
}

const float *xf_gnn_edge_output(const xf_gnn *m, const xf_gnn_cache *c, int E, int k)
{
    int tail_layers = m->edge.mlp.n_layers - 1;
    if (tail_layers > 0) return c->mlp[3 + 3 * k].act[tail_layers - 1];
    return c->h1 + (size_t)k * (size_t)E * (size_t)m->cfg.hidden;
}

void xf_gnn_edge_backward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                          xf_gnn_cache *c, int k, float *dy)
{
    int H = m->cfg.hidden, N = b->n_nodes, E = b->n_edges, G = b->n_graphs;
    size_t h = (size_t)H, hh = h * h, eh = (size_t)E * h;
    const float *ek = c->e + (size_t)k * eh, *vk = c->v + (size_t)k * (size_t)N * h;
    const float *uk = c->u + (size_t)k * (size_t)G * h;
    const float *h1 = c->h1 + (size_t)k * eh;
    xf_nn_mlp tail = edge_tail(&m->edge.mlp);
    /* dh1 = gradient at the first layer's output; dpre at its pre-activation */
    float *dh1 = dy, *dpre = c->dh;
    if (tail.n_layers > 0) {
        memset(c->dh, 0, sizeof(float) * eh);
        xf_nn_mlp_backward(&tail, p, &c->mlp[3 + 3 * k], c->dh, dy, h1, E);
        dh1 = c->dh;
        dpre = dy; /* dy is spent: reuse it */
    }
    memset(dpre, 0, sizeof(float) * eh);
    xf_nn_act_backward(first_act(&m->edge.mlp), dpre, dh1, h1, eh);

    const xf_nn_linear *l0 = &m->edge.mlp.layer[0];
    const float *W = xf_nn_params_value(p, l0->w);
    float *dW = xf_nn_params_grad(p, l0->w);
    xf_nn_linear_backward(c->de, dW, xf_nn_params_grad(p, l0->b), dpre, ek, W, E, H, H);
    memset(c->ps, 0, sizeof(float) * (size_t)N * h);
    memset(c->pr, 0, sizeof(float) * (size_t)N * h);
    memset(c->pu, 0, sizeof(float) * (size_t)G * h);
    for (int i = 0; i < E; i++) {
        const float *row = dpre + (size_t)i * h;
        add_row(c->ps + (size_t)b->sender[i] * h, row, H);
        add_row(c->pr + (size_t)b->receiver[i] * h, row, H);
        add_row(c->pu + (size_t)b->edge_graph[i] * h, row, H);
    }
    xf_nn_linear_backward(c->dv, dW + hh, NULL, c->ps, vk, W + hh, N, H, H);
    xf_nn_linear_backward(c->dv, dW + 2 * hh, NULL, c->pr, vk, W + 2 * hh, N, H, H);
    xf_nn_linear_backward(c->du, dW + 3 * hh, NULL, c->pu, uk, W + 3 * hh, G, H, H);
}
