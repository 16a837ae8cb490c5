/*
 * gnn.c — the graph-nets encoder of the learning agents (gnn.h): its
 * parameters, its cache and the forward pass over a batch of graphs.
 *
 * Input MLPs turn node, edge and global features into H-wide states; then
 * one shared graph-nets block runs K rounds, each with residual updates
 *   e' = e + φe(e, v_s, v_r, u)        per edge
 *   v' = v + φv(Σ_{r(e)=v} e', v, u)   per node (sum over incoming edges)
 *   u' = u + φu(Σ e', Σ v', u)         per graph
 * and z = W·u_K + b. Each φ is an MLP (agent/nn) followed by a layer norm,
 * which keeps states of graphs with hundreds of nodes at unit scale even
 * though the aggregations are sums; φe runs in gnn_edge.c, which avoids
 * building its concatenated input. Nodes, edges and globals of all graphs
 * of a batch go through each MLP as one matrix, so one forward serves a
 * whole batch; the graph of each row picks its global vector. Sums run in
 * row order, so the result is deterministic, and it does not depend on the
 * order of a graph's nodes beyond float rounding.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/rl/gnn.h"

xf_gnn_config xf_gnn_config_default(void)
{
    xf_gnn_config c;
    c.hidden = 64;
    c.latent = 64;
    c.rounds = 3;
    c.mlp_layers = 2;
    c.act = XF_NN_ACT_RELU;
    c.global_mean = 0;
    return c;
}

static xf_status block_add(xf_gnn_block *bk, xf_nn_params *p, const char *prefix, const char *what,
                           int in, const xf_gnn_config *cfg, xf_rng *rng, xf_error *err)
{
    int dims[XF_NN_MLP_MAX_LAYERS + 1];
    dims[0] = in;
    for (int l = 1; l <= cfg->mlp_layers; l++) dims[l] = cfg->hidden;
    char nm[XF_NN_MAX_NAME + 32];
    snprintf(nm, sizeof nm, "%s/%s", prefix, what);
    xf_status st =
        xf_nn_mlp_add(&bk->mlp, p, nm, cfg->mlp_layers, dims, cfg->act, XF_NN_ACT_NONE, rng, err);
    if (st != XF_OK) return st;
    snprintf(nm, sizeof nm, "%s/%s.ln", prefix, what);
    return xf_nn_layernorm_add(&bk->ln, p, nm, cfg->hidden, err);
}

xf_status xf_gnn_add(xf_gnn *m, xf_nn_params *p, const char *name, const xf_gnn_config *cfg,
                     xf_rng *rng, xf_error *err)
{
    memset(m, 0, sizeof *m);
    m->cfg = cfg ? *cfg : xf_gnn_config_default();
    const xf_gnn_config *c = &m->cfg;
    if (c->hidden < 1 || c->latent < 1 || c->rounds < 1 || c->mlp_layers < 1 ||
        c->mlp_layers > XF_NN_MLP_MAX_LAYERS)
        return XF_FAIL(
            err, XF_ERR_INVALID,
            "GNN '%s': hidden %d, latent %d, rounds %d, MLP layers %d (each must be >= 1, "
            "layers <= %d)",
            name, c->hidden, c->latent, c->rounds, c->mlp_layers, XF_NN_MLP_MAX_LAYERS);
    if (c->act != XF_NN_ACT_NONE && c->act != XF_NN_ACT_RELU && c->act != XF_NN_ACT_TANH &&
        c->act != XF_NN_ACT_SIGMOID)
        return XF_FAIL(err, XF_ERR_INVALID, "GNN '%s': unknown activation %d", name, (int)c->act);
    int H = c->hidden;
    xf_status st = block_add(&m->enc_edge, p, name, "enc_edge", XF_GNN_EDGE_DIM, c, rng, err);
    if (st == XF_OK)
        st = block_add(&m->enc_node, p, name, "enc_node", XF_GNN_NODE_DIM, c, rng, err);
    if (st == XF_OK)
        st = block_add(&m->enc_global, p, name, "enc_global", XF_GNN_GLOBAL_DIM, c, rng, err);
    if (st == XF_OK) st = block_add(&m->edge, p, name, "edge", 4 * H, c, rng, err);
    if (st == XF_OK) st = block_add(&m->node, p, name, "node", 3 * H, c, rng, err);
    if (st == XF_OK) st = block_add(&m->global, p, name, "global", 3 * H, c, rng, err);
    if (st == XF_OK) {
        char nm[XF_NN_MAX_NAME + 32];
        snprintf(nm, sizeof nm, "%s/out", name);
        st = xf_nn_linear_add(&m->out, p, nm, H, c->latent, 1, rng, err);
    }
    return st;
}

/* ------------------------------------------------------------------- cache */

void xf_gnn_cache_init(xf_gnn_cache *c)
{
    memset(c, 0, sizeof *c);
}

void xf_gnn_cache_free(xf_gnn_cache *c)
{
    for (int i = 0; i < c->n_mlp; i++) xf_nn_mlp_cache_free(&c->mlp[i]);
    xf_free(c->mlp);
    xf_free(c->mem);
    xf_gnn_cache_init(c);
}

static size_t max3(size_t a, size_t b, size_t d)
{
    size_t m = a > b ? a : b;
    return m > d ? m : d;
}

/* Points the views at consecutive slices of mem (mem NULL: only counts).
 * Returns the floats needed. */
static size_t layout(xf_gnn_cache *c, float *mem, size_t N, size_t E, size_t G, size_t H, size_t Z,
                     size_t K)
{
    size_t at = 0;
#define TAKE(ptr, n)                                                                               \
    do {                                                                                           \
        (ptr) = mem ? mem + at : NULL;                                                             \
        at += (n);                                                                                 \
    } while (0)
    TAKE(c->e, (K + 1) * E * H);
    TAKE(c->v, (K + 1) * N * H);
    TAKE(c->u, (K + 1) * G * H);
    TAKE(c->h1, K * E * H);
    TAKE(c->xv, K * N * 3 * H);
    TAKE(c->xu, K * G * 3 * H);
    TAKE(c->e_mean, (K + 1) * E);
    TAKE(c->e_rstd, (K + 1) * E);
    TAKE(c->v_mean, (K + 1) * N);
    TAKE(c->v_rstd, (K + 1) * N);
    TAKE(c->u_mean, (K + 1) * G);
    TAKE(c->u_rstd, (K + 1) * G);
    TAKE(c->z, G * Z);
    TAKE(c->ps, N * H);
    TAKE(c->pr, N * H);
    TAKE(c->pu, G * H);
    TAKE(c->de, E * H);
    TAKE(c->dv, N * H);
    TAKE(c->du, G * H);
    TAKE(c->dm, max3(E, N, G) * H);
    TAKE(c->dh, E * H);
    TAKE(c->dx, (N > G ? N : G) * 3 * H);
#undef TAKE
    return at;
}

static xf_status cache_reserve(const xf_gnn *m, xf_gnn_cache *c, const xf_gnn_batch *b,
                               xf_error *err)
{
    const xf_gnn_config *cfg = &m->cfg;
    int need_mlp = 3 + 3 * cfg->rounds;
    if (c->n_mlp < need_mlp) {
        xf_nn_mlp_cache *q = xf_realloc(c->mlp, sizeof *q * (size_t)need_mlp);
        if (!q) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the GNN cache");
        for (int i = c->n_mlp; i < need_mlp; i++) xf_nn_mlp_cache_init(&q[i]);
        c->mlp = q;
        c->n_mlp = need_mlp;
    }
    /* at least one row each, so an edgeless batch still gets buffers */
    int rows[3] = {b->n_edges > 0 ? b->n_edges : 1, b->n_nodes > 0 ? b->n_nodes : 1,
                   b->n_graphs > 0 ? b->n_graphs : 1};
    const xf_gnn_block *enc[3] = {&m->enc_edge, &m->enc_node, &m->enc_global};
    const xf_gnn_block *core[3] = {&m->edge, &m->node, &m->global};
    for (int i = 0; i < need_mlp; i++) {
        const xf_gnn_block *bk = i < 3 ? enc[i] : core[(i - 3) % 3];
        xf_status st = bk == &m->edge
                           ? xf_gnn_edge_reserve(m, &c->mlp[i], rows[0], err)
                           : xf_nn_mlp_cache_reserve(&c->mlp[i], &bk->mlp, rows[i % 3], err);
        if (st != XF_OK) return st;
    }
    size_t N = (size_t)b->n_nodes, E = (size_t)b->n_edges, G = (size_t)b->n_graphs;
    size_t H = (size_t)cfg->hidden, Z = (size_t)cfg->latent, K = (size_t)cfg->rounds;
    size_t need = layout(c, NULL, N, E, G, H, Z, K);
    if (need > c->cap) {
        float *q = xf_malloc(sizeof *q * need);
        if (!q)
            return XF_FAIL(err, XF_ERR_NOMEM,
                           "out of memory for the GNN cache (%d graphs, %d nodes, %d edges)",
                           b->n_graphs, b->n_nodes, b->n_edges);
        xf_free(c->mem);
        c->mem = q;
        c->cap = need;
    }
    layout(c, c->mem, N, E, G, H, Z, K);
    c->n_graphs = b->n_graphs;
    c->n_nodes = b->n_nodes;
    c->n_edges = b->n_edges;
    return XF_OK;
}

/* ----------------------------------------------------------------- forward */

/* out = LN(y) + residual (residual may be NULL) over `rows` rows. */
static void norm_forward(const xf_gnn_block *bk, const xf_nn_params *p, const float *y, int rows,
                         float *out, float *mean, float *rstd, const float *residual)
{
    int H = bk->ln.dim;
    xf_nn_layernorm_forward(out, mean, rstd, y, xf_nn_params_value(p, bk->ln.gamma),
                            xf_nn_params_value(p, bk->ln.beta), rows, H);
    if (residual)
        for (size_t i = 0; i < (size_t)rows * (size_t)H; i++) out[i] += residual[i];
}

/* out = LN(MLP(in)) (+ residual). */
static void block_forward(const xf_gnn_block *bk, const xf_nn_params *p, xf_nn_mlp_cache *mc,
                          const float *in, int rows, float *out, float *mean, float *rstd,
                          const float *residual)
{
    norm_forward(bk, p, xf_nn_mlp_forward(&bk->mlp, p, mc, in, rows), rows, out, mean, rstd,
                 residual);
}

static void copy_row(float *dst, const float *src, int H)
{
    memcpy(dst, src, sizeof(float) * (size_t)H);
}

static void add_row(float *dst, const float *src, int H)
{
    for (int j = 0; j < H; j++) dst[j] += src[j];
}

float xf_gnn_global_weight(const xf_gnn *m, const int *start, int g)
{
    int n = start[g + 1] - start[g];
    return m->cfg.global_mean && n > 0 ? 1.0f / (float)n : 1.0f;
}

/* One round k: states k -> k+1. */
static void round_forward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                          xf_gnn_cache *c, int k)
{
    int H = m->cfg.hidden, N = b->n_nodes, E = b->n_edges, G = b->n_graphs;
    size_t h = (size_t)H;
    float *ek = c->e + (size_t)k * (size_t)E * h, *ek1 = ek + (size_t)E * h;
    float *vk = c->v + (size_t)k * (size_t)N * h, *vk1 = vk + (size_t)N * h;
    float *uk = c->u + (size_t)k * (size_t)G * h, *uk1 = uk + (size_t)G * h;
    float *xv = c->xv + (size_t)k * (size_t)N * 3 * h;
    float *xu = c->xu + (size_t)k * (size_t)G * 3 * h;
    xf_nn_mlp_cache *mc = &c->mlp[3 + 3 * k];
    size_t s1 = (size_t)(k + 1);

    norm_forward(&m->edge, p, xf_gnn_edge_forward(m, p, b, c, k), E, ek1,
                 c->e_mean + s1 * (size_t)E, c->e_rstd + s1 * (size_t)E, ek);

    memset(xv, 0, sizeof(float) * (size_t)N * 3 * h);
    for (int i = 0; i < E; i++)
        add_row(xv + (size_t)b->receiver[i] * 3 * h, ek1 + (size_t)i * h, H);
    for (int n = 0; n < N; n++) {
        float *row = xv + (size_t)n * 3 * h;
        copy_row(row + h, vk + (size_t)n * h, H);
        copy_row(row + 2 * h, uk + (size_t)b->node_graph[n] * h, H);
    }
    block_forward(&m->node, p, &mc[1], xv, N, vk1, c->v_mean + s1 * (size_t)N,
                  c->v_rstd + s1 * (size_t)N, vk);

    memset(xu, 0, sizeof(float) * (size_t)G * 3 * h);
    for (int i = 0; i < E; i++)
        add_row(xu + (size_t)b->edge_graph[i] * 3 * h, ek1 + (size_t)i * h, H);
    for (int n = 0; n < N; n++)
        add_row(xu + (size_t)b->node_graph[n] * 3 * h + h, vk1 + (size_t)n * h, H);
    for (int g = 0; g < G; g++) {
        float *row = xu + (size_t)g * 3 * h;
        float we = xf_gnn_global_weight(m, b->edge_start, g),
              wv = xf_gnn_global_weight(m, b->node_start, g);
        for (int j = 0; j < H; j++) {
            row[j] *= we;
            row[h + (size_t)j] *= wv;
        }
        copy_row(row + 2 * h, uk + (size_t)g * h, H);
    }
    block_forward(&m->global, p, &mc[2], xu, G, uk1, c->u_mean + s1 * (size_t)G,
                  c->u_rstd + s1 * (size_t)G, uk);
}

xf_status xf_gnn_forward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                         xf_gnn_cache *c, const float **z, xf_error *err)
{
    if (z) *z = NULL;
    if (b->n_graphs < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "GNN forward: the batch holds no graph");
    xf_status st = cache_reserve(m, c, b, err);
    if (st != XF_OK) return st;
    block_forward(&m->enc_edge, p, &c->mlp[0], b->edge_x, b->n_edges, c->e, c->e_mean, c->e_rstd,
                  NULL);
    block_forward(&m->enc_node, p, &c->mlp[1], b->node_x, b->n_nodes, c->v, c->v_mean, c->v_rstd,
                  NULL);
    block_forward(&m->enc_global, p, &c->mlp[2], b->global_x, b->n_graphs, c->u, c->u_mean,
                  c->u_rstd, NULL);
    for (int k = 0; k < m->cfg.rounds; k++) round_forward(m, p, b, c, k);
    const float *uK = c->u + (size_t)m->cfg.rounds * (size_t)b->n_graphs * (size_t)m->cfg.hidden;
    xf_nn_linear_apply(&m->out, p, c->z, uK, b->n_graphs);
    if (z) *z = c->z;
    return XF_OK;
}
