/*
 * gnn_backward.c — the backward pass of the graph-nets encoder (gnn.c),
 * from dz to the gradients of every MLP, layer-norm and output tensor.
 *
 * Runs the rounds in reverse with three running gradients: de, dv, du with
 * respect to the edge, node and global states after the round being undone.
 * Each update x' = x + LN(MLP(in)) passes dx' straight through (residual)
 * and back through the layer norm and MLP into d(in); the concatenated
 * input's slices then go where they came from: a gathered state (v_s, v_r,
 * u of a row's graph) scatters its gradient back to the source row, and a
 * scatter-sum (edges into receivers, rows into their graph) gathers the
 * gradient of the sum to every summand. Block order is global, node, edge,
 * so each state's gradient is complete before the block that produced it
 * is undone.
 */
#include <assert.h>
#include <string.h>

#include "agent/rl/gnn.h"

/* dm = d(LN(y))/dy · dout (overwritten), layer-norm gradients accumulated. */
static void norm_backward(const xf_gnn_block *bk, const xf_nn_params *p, const float *y, int rows,
                          const float *mean, const float *rstd, const float *dout, float *dm)
{
    int H = bk->ln.dim;
    memset(dm, 0, sizeof(float) * (size_t)rows * (size_t)H);
    xf_nn_layernorm_backward(dm, xf_nn_params_grad(p, bk->ln.gamma),
                             xf_nn_params_grad(p, bk->ln.beta), dout, y, mean, rstd,
                             xf_nn_params_value(p, bk->ln.gamma), rows, H);
}

/* din += d(LN(MLP(in)))/d(in) · dout, parameters' gradients accumulated;
 * dm is scratch of rows x H. */
static void block_backward(const xf_gnn_block *bk, const xf_nn_params *p, xf_nn_mlp_cache *mc,
                           const float *in, int rows, const float *mean, const float *rstd,
                           const float *dout, float *dm, float *din)
{
    /* the MLP's output, the norm's input */
    norm_backward(bk, p, mc->act[bk->mlp.n_layers - 1], rows, mean, rstd, dout, dm);
    xf_nn_mlp_backward(&bk->mlp, p, mc, din, dm, in, rows);
}

static void add_row(float *dst, const float *src, int H)
{
    for (int j = 0; j < H; j++) dst[j] += src[j];
}

static void round_backward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                           xf_gnn_cache *c, int k)
{
    int H = m->cfg.hidden, N = b->n_nodes, E = b->n_edges, G = b->n_graphs;
    size_t h = (size_t)H, s1 = (size_t)(k + 1);
    const float *xv = c->xv + (size_t)k * (size_t)N * 3 * h;
    const float *xu = c->xu + (size_t)k * (size_t)G * 3 * h;
    xf_nn_mlp_cache *mc = &c->mlp[3 + 3 * k];
    float *dx = c->dx;

    /* u' = u + φu(Σe', Σv', u) (sums optionally weighted into means) */
    memset(dx, 0, sizeof(float) * (size_t)G * 3 * h);
    block_backward(&m->global, p, &mc[2], xu, G, c->u_mean + s1 * (size_t)G,
                   c->u_rstd + s1 * (size_t)G, c->du, c->dm, dx);
    for (int g = 0; g < G; g++) {
        float *row = dx + (size_t)g * 3 * h;
        float we = xf_gnn_global_weight(m, b->edge_start, g),
              wv = xf_gnn_global_weight(m, b->node_start, g);
        for (int j = 0; j < H; j++) {
            row[j] *= we;
            row[h + (size_t)j] *= wv;
        }
        add_row(c->du + (size_t)g * h, row + 2 * h, H);
    }
    for (int i = 0; i < E; i++)
        add_row(c->de + (size_t)i * h, dx + (size_t)b->edge_graph[i] * 3 * h, H);
    for (int n = 0; n < N; n++)
        add_row(c->dv + (size_t)n * h, dx + (size_t)b->node_graph[n] * 3 * h + h, H);

    /* v' = v + φv(Σ_{r(e)=v} e', v, u) */
    memset(dx, 0, sizeof(float) * (size_t)N * 3 * h);
    block_backward(&m->node, p, &mc[1], xv, N, c->v_mean + s1 * (size_t)N,
                   c->v_rstd + s1 * (size_t)N, c->dv, c->dm, dx);
    for (int i = 0; i < E; i++)
        add_row(c->de + (size_t)i * h, dx + (size_t)b->receiver[i] * 3 * h, H);
    for (int n = 0; n < N; n++) {
        const float *row = dx + (size_t)n * 3 * h;
        add_row(c->dv + (size_t)n * h, row + h, H);
        add_row(c->du + (size_t)b->node_graph[n] * h, row + 2 * h, H);
    }

    /* e' = e + φe(e, v_s, v_r, u) */
    norm_backward(&m->edge, p, xf_gnn_edge_output(m, c, E, k), E, c->e_mean + s1 * (size_t)E,
                  c->e_rstd + s1 * (size_t)E, c->de, c->dm);
    xf_gnn_edge_backward(m, p, b, c, k, c->dm);
}

void xf_gnn_backward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b, xf_gnn_cache *c,
                     const float *dz)
{
    int H = m->cfg.hidden, K = m->cfg.rounds, N = b->n_nodes, E = b->n_edges, G = b->n_graphs;
    size_t h = (size_t)H;
    assert(c->n_nodes == N && c->n_edges == E && c->n_graphs == G);
    memset(c->de, 0, sizeof(float) * (size_t)E * h);
    memset(c->dv, 0, sizeof(float) * (size_t)N * h);
    memset(c->du, 0, sizeof(float) * (size_t)G * h);
    const float *uK = c->u + (size_t)K * (size_t)G * h;
    xf_nn_linear_apply_backward(&m->out, p, c->du, dz, uK, G);
    for (int k = K - 1; k >= 0; k--) round_backward(m, p, b, c, k);
    /* input encoders: no gradient to the features */
    block_backward(&m->enc_edge, p, &c->mlp[0], b->edge_x, E, c->e_mean, c->e_rstd, c->de, c->dm,
                   NULL);
    block_backward(&m->enc_node, p, &c->mlp[1], b->node_x, N, c->v_mean, c->v_rstd, c->dv, c->dm,
                   NULL);
    block_backward(&m->enc_global, p, &c->mlp[2], b->global_x, G, c->u_mean, c->u_rstd, c->du,
                   c->dm, NULL);
}
