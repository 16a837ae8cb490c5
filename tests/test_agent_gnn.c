/*
 * test_agent_gnn.c — the GNN encoder of the learning agents (agent/rl/gnn.h).
 * Features of a hand-built graph (transpose of a weight, matmul, relu, add)
 * are checked entry by entry: op one-hot positions, costs (weight-only
 * nodes free), element counts, ranks, input and consumer counts, the edge
 * list with self-loops for graph inputs and constants, the global row and
 * the per-graph offsets of a batch. The encoder's backward is checked
 * against finite differences on sampled entries of every parameter tensor
 * (loss accumulated in double) over a batch of three graphs: with tanh MLPs
 * of 1, 2 and 3 layers and with the global mean, every entry within 1e-2;
 * with ReLU (kinks everywhere) 95% of them. z is invariant to the order in
 * which a graph's nodes were built; a batched forward equals per-graph
 * forwards; the same seed gives the same z; an edgeless batch encodes and
 * backpropagates; a 12-layer BERT from modelzoo (~620 nodes) encodes, its
 * features and z finite. Bad configurations, empty graphs and empty batches
 * fail with a message.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/rl/rl.h"
#include "agent_fixture.h"
#include "testutil.h"

/* ------------------------------------------------------------ builders */

static xf_params perm2(void)
{
    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    p.axes[1] = 0;
    return p;
}

/* x[2,4], w[3,4]: t = transpose(w); m = matmul(x, t); r = relu(m); a = add(r, m). */
static void hand_graph(xf_graph *g)
{
    xf_graph_init(g);
    int64_t xd[2] = {2, 4}, wd[2] = {3, 4};
    int x = xf_fx_input(g, "x", xf_shape_make(2, xd));
    int w = xf_fx_weight(g, "w", xf_shape_make(2, wd), 1);
    xf_params p = perm2();
    int t = xf_fx_op(g, XF_OP_TRANSPOSE, &p, w, -1);
    int m = xf_fx_op(g, XF_OP_MATMUL, NULL, x, t);
    int r = xf_fx_op(g, XF_OP_RELU, NULL, m, -1);
    xf_fx_output(g, xf_fx_op(g, XF_OP_ADD, NULL, r, m));
}

/* A small graph whose independent branches are built in the order given by
 * `order` (a permutation of 0..3): four unary branches off x[3,5] (relu,
 * tanh, sigmoid, matmul by a weight), summed pairwise, then a final matmul
 * and softmax; `variant` changes sizes so graphs in a batch differ. */
static void branchy_graph(xf_graph *g, const int *order, int variant)
{
    xf_graph_init(g);
    int64_t c = 5 + variant;
    int64_t xd[2] = {3, c}, wd[2] = {c, c}, w2d[2] = {c, 4};
    int x = xf_fx_input(g, "x", xf_shape_make(2, xd));
    int w = xf_fx_weight(g, "w", xf_shape_make(2, wd), 7);
    int w2 = xf_fx_weight(g, "w2", xf_shape_make(2, w2d), 8);
    int br[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        switch (order[i]) {
        case 0: br[0] = xf_fx_op(g, XF_OP_RELU, NULL, x, -1); break;
        case 1: br[1] = xf_fx_op(g, XF_OP_TANH, NULL, x, -1); break;
        case 2: br[2] = xf_fx_op(g, XF_OP_SIGMOID, NULL, x, -1); break;
        default: br[3] = xf_fx_op(g, XF_OP_MATMUL, NULL, x, w); break;
        }
    }
    int s0, s1;
    if (order[0] < 2) {
        s0 = xf_fx_op(g, XF_OP_ADD, NULL, br[0], br[1]);
        s1 = xf_fx_op(g, XF_OP_MUL, NULL, br[2], br[3]);
    } else {
        s1 = xf_fx_op(g, XF_OP_MUL, NULL, br[2], br[3]);
        s0 = xf_fx_op(g, XF_OP_ADD, NULL, br[0], br[1]);
    }
    int s = xf_fx_op(g, XF_OP_SUB, NULL, s0, s1);
    int mm = xf_fx_op(g, XF_OP_MATMUL, NULL, s, w2);
    xf_params sp = xf_params_default();
    sp.axis = -1;
    xf_fx_output(g, xf_fx_op(g, XF_OP_SOFTMAX, &sp, mm, -1));
    if (variant > 0) xf_fx_output(g, br[0]);
}

static const float *nf(const xf_gnn_batch *b, int node)
{
    return b->node_x + (size_t)node * XF_GNN_NODE_DIM;
}

static const float *ef(const xf_gnn_batch *b, int edge)
{
    return b->edge_x + (size_t)edge * XF_GNN_EDGE_DIM;
}

/* ------------------------------------------------------------ features */

START_TEST(features_of_hand_built_graph)
{
    xf_graph g;
    hand_graph(&g);
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    xf_error err;
    double ms[4] = {0.5, 1.0, 2.0, 3.0};
    ck_assert_msg(xf_gnn_batch_add(&b, &g, NULL, ms, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(b.n_graphs, 1);
    ck_assert_int_eq(b.n_nodes, 4);
    ck_assert_int_eq(b.n_edges, 6);

    const xf_op ops[4] = {XF_OP_TRANSPOSE, XF_OP_MATMUL, XF_OP_RELU, XF_OP_ADD};
    const double cost_us[4] = {0, 1000, 2000, 3000}; /* the transpose is weight-only: free */
    const int64_t numel[4] = {12, 6, 6, 6};
    const float inputs[4] = {1, 2, 1, 2}, consumers[4] = {1, 2, 1, 0};
    const float weight_only[4] = {1, 0, 0, 0}, is_output[4] = {0, 0, 0, 1};
    for (int n = 0; n < 4; n++) {
        const float *f = nf(&b, n);
        for (int o = 0; o < XF_OP_COUNT; o++)
            ck_assert_msg(f[XF_GNN_N_OP + o] == (o == (int)ops[n] ? 1.0f : 0.0f),
                          "node %d: one-hot entry %d is %g", n, o, (double)f[XF_GNN_N_OP + o]);
        ck_assert_float_eq(f[XF_GNN_N_LOG_COST], (float)log1p(cost_us[n]));
        ck_assert_float_eq(f[XF_GNN_N_LOG_NUMEL], (float)log1p((double)numel[n]));
        ck_assert_float_eq(f[XF_GNN_N_RANK], 2.0f);
        ck_assert_float_eq(f[XF_GNN_N_INPUTS], inputs[n]);
        ck_assert_msg(f[XF_GNN_N_CONSUMERS] == consumers[n], "node %d: %g consumers, expected %g",
                      n, (double)f[XF_GNN_N_CONSUMERS], (double)consumers[n]);
        ck_assert_float_eq(f[XF_GNN_N_WEIGHT_ONLY], weight_only[n]);
        ck_assert_float_eq(f[XF_GNN_N_IS_OUTPUT], is_output[n]);
        ck_assert_int_eq(b.node_graph[n], 0);
    }

    /* edges in node order, one per input slot:
     * w -> t (self-loop, constant), x -> m (self-loop, input), t -> m,
     * m -> r, r -> a, m -> a */
    const int snd[6] = {0, 1, 0, 1, 2, 1}, rcv[6] = {0, 1, 1, 2, 3, 3};
    const int64_t enumel[6] = {12, 8, 12, 6, 6, 6};
    const float outside[6] = {1, 1, 0, 0, 0, 0}, ginput[6] = {0, 1, 0, 0, 0, 0};
    const float ewo[6] = {1, 0, 1, 0, 0, 0};
    for (int e = 0; e < 6; e++) {
        ck_assert_msg(b.sender[e] == snd[e] && b.receiver[e] == rcv[e], "edge %d: %d -> %d", e,
                      b.sender[e], b.receiver[e]);
        const float *f = ef(&b, e);
        ck_assert_float_eq(f[XF_GNN_E_LOG_NUMEL], (float)log1p((double)enumel[e]));
        ck_assert_float_eq(f[XF_GNN_E_RANK], 2.0f);
        ck_assert_float_eq(f[XF_GNN_E_WEIGHT_ONLY], ewo[e]);
        ck_assert_float_eq(f[XF_GNN_E_OUTSIDE], outside[e]);
        ck_assert_float_eq(f[XF_GNN_E_GRAPH_INPUT], ginput[e]);
        ck_assert_int_eq(b.edge_graph[e], 0);
    }
    ck_assert_float_eq(b.global_x[XF_GNN_G_LOG_COST], (float)log1p(6.0));
    ck_assert_float_eq(b.global_x[XF_GNN_G_LOG_NODES], (float)log1p(4.0));
    ck_assert_float_eq(b.global_x[XF_GNN_G_LOG_EDGES], (float)log1p(6.0));

    /* a second graph (no costs) is appended with offsets and graph ids */
    ck_assert_msg(xf_gnn_batch_add(&b, &g, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(b.n_graphs, 2);
    ck_assert_int_eq(b.node_start[1], 4);
    ck_assert_int_eq(b.node_start[2], 8);
    ck_assert_int_eq(b.edge_start[1], 6);
    ck_assert_int_eq(b.edge_start[2], 12);
    for (int e = 6; e < 12; e++) {
        ck_assert_int_eq(b.sender[e], snd[e - 6] + 4);
        ck_assert_int_eq(b.receiver[e], rcv[e - 6] + 4);
        ck_assert_int_eq(b.edge_graph[e], 1);
    }
    for (int n = 4; n < 8; n++) {
        ck_assert_int_eq(b.node_graph[n], 1);
        ck_assert_float_eq(nf(&b, n)[XF_GNN_N_LOG_COST], 0.0f);
    }
    ck_assert_float_eq(b.global_x[XF_GNN_GLOBAL_DIM + XF_GNN_G_LOG_COST], 0.0f);

    xf_gnn_batch_clear(&b);
    ck_assert_int_eq(b.n_graphs + b.n_nodes + b.n_edges, 0);
    xf_gnn_batch_free(&b);
    xf_graph_free(&g);
}
END_TEST

START_TEST(features_reject_empty_graph)
{
    xf_graph g;
    xf_graph_init(&g);
    int64_t d[1] = {3};
    xf_fx_output(&g, xf_fx_input(&g, "x", xf_shape_make(1, d)));
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    xf_error err;
    ck_assert_int_eq(xf_gnn_batch_add(&b, &g, NULL, NULL, &err), XF_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "no operator") != NULL, "%s", err.msg);
    ck_assert_int_eq(b.n_graphs, 0);
    xf_gnn_batch_free(&b);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------------ encoder */

typedef struct model {
    xf_nn_params p;
    xf_gnn gnn;
    xf_gnn_cache cache;
} model;

static void model_make(model *m, const xf_gnn_config *cfg, uint64_t seed)
{
    xf_nn_params_init(&m->p);
    xf_gnn_cache_init(&m->cache);
    xf_rng rng;
    xf_rng_seed(&rng, seed);
    xf_error err;
    ck_assert_msg(xf_gnn_add(&m->gnn, &m->p, "gnn", cfg, &rng, &err) == XF_OK, "%s", err.msg);
}

static void model_free(model *m)
{
    xf_gnn_cache_free(&m->cache);
    xf_nn_params_free(&m->p);
}

static const float *encode(model *m, const xf_gnn_batch *b)
{
    const float *z = NULL;
    xf_error err;
    ck_assert_msg(xf_gnn_forward(&m->gnn, &m->p, b, &m->cache, &z, &err) == XF_OK, "%s", err.msg);
    return z;
}

static void batch_of(xf_gnn_batch *b, xf_graph *const *graphs, int n)
{
    xf_error err;
    for (int i = 0; i < n; i++) {
        int nn = graphs[i]->n_nodes;
        double *ms = malloc(sizeof *ms * (size_t)nn);
        ck_assert_ptr_nonnull(ms);
        for (int k = 0; k < nn; k++) ms[k] = 0.01 * (k + 1) * (i + 1);
        ck_assert_msg(xf_gnn_batch_add(b, graphs[i], NULL, ms, &err) == XF_OK, "%s", err.msg);
        free(ms);
    }
}

/* loss = Σ z ⊙ r, accumulated in double */
static double loss_of(model *m, const xf_gnn_batch *b, const float *r)
{
    const float *z = encode(m, b);
    double s = 0;
    for (int i = 0; i < b->n_graphs * m->gnn.cfg.latent; i++) s += (double)z[i] * (double)r[i];
    return s;
}

static double loss_at(model *m, const xf_gnn_batch *b, const float *r, float *val, size_t i,
                      float x)
{
    val[i] = x;
    return loss_of(m, b, r);
}

/* Relative error of the analytic derivative a of entry i of val against
 * finite differences; *fd_out gets the difference it was compared with.
 * The floor compares gradients below 3e-2 absolutely (the loss's float
 * rounding, ~1e-6, divided by h is ~1e-4).
 * Smooth MLPs (kinks = 0): central differences at h and h/2 combined by
 * Richardson extrapolation (the h² error cancels), for h = 1e-2 and 4e-3;
 * the better one counts, as the larger h suffers from the curvature of deep
 * MLPs and the smaller from float rounding.
 * ReLU MLPs (kinks = 1): the central and both one-sided differences at h =
 * 1e-3; a ReLU switching within ±h bends the loss there, and then only the
 * side without the switch matches. */
static double fd_error(model *m, const xf_gnn_batch *b, const float *r, float *val, size_t i,
                       double a, int kinks, double *fd_out)
{
    const double floor = 3e-2;
    float x = val[i];
    double fd[3];
    int n_fd;
    if (kinks) {
        const float h = 1e-3f;
        double l0 = loss_at(m, b, r, val, i, x), lp = loss_at(m, b, r, val, i, x + h),
               lm = loss_at(m, b, r, val, i, x - h);
        fd[0] = (lp - lm) / (2.0 * (double)h);
        fd[1] = (lp - l0) / (double)h;
        fd[2] = (l0 - lm) / (double)h;
        n_fd = 3;
    } else {
        const float hs[2] = {1e-2f, 4e-3f};
        for (int k = 0; k < 2; k++) {
            float h = hs[k], h2 = hs[k] / 2;
            double d1 = (loss_at(m, b, r, val, i, x + h) - loss_at(m, b, r, val, i, x - h)) /
                        (2.0 * (double)h);
            double d2 = (loss_at(m, b, r, val, i, x + h2) - loss_at(m, b, r, val, i, x - h2)) /
                        (2.0 * (double)h2);
            fd[k] = (4.0 * d2 - d1) / 3.0;
        }
        n_fd = 2;
    }
    val[i] = x;
    double best = INFINITY;
    for (int k = 0; k < n_fd; k++) {
        double e = fabs(a - fd[k]) / fmax(fabs(a) + fabs(fd[k]), floor);
        if (e < best) {
            best = e;
            *fd_out = fd[k];
        }
    }
    return best;
}

/* Checks 6 entries (the first and 5 random ones) of every parameter tensor
 * of an encoder with activation `act` on a batch of three graphs: with a
 * smooth activation every entry within 1e-2; with ReLU, whose kinks are
 * dense (hundreds of units, so some switch within any useful h and a few
 * entries see several), 95% of the entries within 1e-2. */
static void gradcheck(xf_nn_act act, int mlp_layers, int global_mean)
{
    xf_gnn_config cfg = xf_gnn_config_default();
    cfg.hidden = 8;
    cfg.latent = 6;
    cfg.rounds = 2;
    cfg.act = act;
    cfg.mlp_layers = mlp_layers;
    cfg.global_mean = global_mean;
    model m;
    model_make(&m, &cfg, 11);
    xf_graph g0, g1, g2;
    const int o0[4] = {0, 1, 2, 3};
    hand_graph(&g0);
    branchy_graph(&g1, o0, 0);
    branchy_graph(&g2, o0, 1);
    xf_graph *gs[3] = {&g0, &g1, &g2};
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    batch_of(&b, gs, 3);

    int nz = b.n_graphs * cfg.latent;
    float *r = malloc(sizeof *r * (size_t)nz);
    ck_assert_ptr_nonnull(r);
    xf_rng rng;
    xf_rng_seed(&rng, 5);
    for (int i = 0; i < nz; i++) r[i] = xf_rng_uniform(&rng, -1, 1);

    xf_nn_params_zero_grad(&m.p);
    encode(&m, &b);
    xf_gnn_backward(&m.gnn, &m.p, &b, &m.cache, r);

    int kinks = act == XF_NN_ACT_RELU, checked = 0, loose = 0;
    double limit = kinks ? INFINITY : 1e-2;
    for (int t = 0; t < xf_nn_params_count(&m.p); t++) {
        float *val = xf_nn_params_value(&m.p, t);
        const float *grad = xf_nn_params_grad(&m.p, t);
        size_t n = xf_nn_params_size(&m.p, t);
        const char *name = xf_nn_params_info(&m.p, t)->name;
        double gmax = 0;
        for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs((double)grad[i]));
        ck_assert_msg(gmax > 0, "tensor %s gets no gradient", name);
        for (int s = 0; s < 6; s++) {
            size_t i = s == 0 ? 0 : (size_t)(xf_rng_next(&rng) % n);
            double fd = 0, a = (double)grad[i];
            double e = fd_error(&m, &b, r, val, i, a, kinks, &fd);
            ck_assert_msg(e < limit,
                          "%s, %s[%zu]: analytic %.6g, finite difference %.6g (rel %.3g)",
                          xf_nn_act_name(act), name, i, a, fd, e);
            loose += e >= 1e-2;
            checked++;
        }
    }
    /* 6 blocks x (linear layers x 2 + layer norm x 2) + output layer x 2 */
    int tensors = 6 * (2 * mlp_layers + 2) + 2;
    ck_assert_int_eq(xf_nn_params_count(&m.p), tensors);
    ck_assert_int_eq(checked, tensors * 6);
    ck_assert_msg(loose * 20 <= checked, "%s: %d of %d entries off by more than 1e-2",
                  xf_nn_act_name(act), loose, checked);

    free(r);
    xf_gnn_batch_free(&b);
    for (int i = 0; i < 3; i++) xf_graph_free(gs[i]);
    model_free(&m);
}

/* tanh: smooth, so central differences apply everywhere; MLPs of 1, 2 and
 * 3 layers (φe's first layer is special, gnn_edge.c); then 2 layers with
 * the global mean */
START_TEST(backward_matches_finite_differences_tanh)
{
    gradcheck(XF_NN_ACT_TANH, _i < 3 ? 1 + _i : 2, _i == 3);
}
END_TEST

/* ReLU, the default */
START_TEST(backward_matches_finite_differences_relu)
{
    gradcheck(XF_NN_ACT_RELU, 2, 0);
}
END_TEST

/* A graph whose only operator has no input: no edge in the whole batch. */
START_TEST(edgeless_batch_encodes)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_params p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 2;
    p.shape[1] = 3;
    xf_error err;
    int v = xf_graph_op(&g, XF_OP_CONST_ONES, &p, NULL, 0, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    xf_fx_output(&g, v);
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    ck_assert_msg(xf_gnn_batch_add(&b, &g, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(b.n_edges, 0);
    ck_assert_float_eq(b.node_x[XF_GNN_N_WEIGHT_ONLY], 1.0f);
    ck_assert_float_eq(b.node_x[XF_GNN_N_INPUTS], 0.0f);
    model m;
    model_make(&m, NULL, 2);
    const float *z = encode(&m, &b);
    for (int i = 0; i < m.gnn.cfg.latent; i++) ck_assert(isfinite(z[i]));
    float *dz = calloc((size_t)m.gnn.cfg.latent, sizeof *dz);
    ck_assert_ptr_nonnull(dz);
    dz[0] = 1;
    xf_nn_params_zero_grad(&m.p);
    xf_gnn_backward(&m.gnn, &m.p, &b, &m.cache, dz);
    /* the output layer's bias gets exactly dz */
    ck_assert_float_eq(xf_nn_params_grad(&m.p, m.gnn.out.b)[0], 1.0f);
    free(dz);
    model_free(&m);
    xf_gnn_batch_free(&b);
    xf_graph_free(&g);
}
END_TEST

static void expect_close(const float *a, const float *b, int n, double tol, const char *what)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs((double)a[i] - (double)b[i]) <= tol * fmax(1.0, fabs((double)b[i])),
                      "%s: entry %d differs: %.8g vs %.8g", what, i, (double)a[i], (double)b[i]);
}

START_TEST(z_invariant_to_node_order)
{
    model m;
    model_make(&m, NULL, 3);
    const int o0[4] = {0, 1, 2, 3}, o1[4] = {3, 2, 1, 0};
    xf_graph ga, gb;
    branchy_graph(&ga, o0, 1);
    branchy_graph(&gb, o1, 1);
    ck_assert_int_eq(ga.n_nodes, gb.n_nodes);
    ck_assert_int_ne(ga.nodes[0].op, gb.nodes[0].op); /* really built in another order */
    xf_gnn_batch ba, bb;
    xf_gnn_batch_init(&ba);
    xf_gnn_batch_init(&bb);
    xf_error err;
    ck_assert_msg(xf_gnn_batch_add(&ba, &ga, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_gnn_batch_add(&bb, &gb, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    int Z = m.gnn.cfg.latent;
    float *za = malloc(sizeof *za * (size_t)Z);
    ck_assert_ptr_nonnull(za);
    memcpy(za, encode(&m, &ba), sizeof *za * (size_t)Z);
    expect_close(encode(&m, &bb), za, Z, 1e-5, "z of the reordered graph");
    free(za);
    xf_gnn_batch_free(&ba);
    xf_gnn_batch_free(&bb);
    xf_graph_free(&ga);
    xf_graph_free(&gb);
    model_free(&m);
}
END_TEST

START_TEST(batched_equals_single_and_seed_determines_z)
{
    model m, m2;
    model_make(&m, NULL, 21);
    model_make(&m2, NULL, 21);
    const int o0[4] = {0, 1, 2, 3};
    xf_graph g0, g1, g2;
    hand_graph(&g0);
    branchy_graph(&g1, o0, 0);
    branchy_graph(&g2, o0, 2);
    xf_graph *gs[3] = {&g0, &g1, &g2};
    xf_gnn_batch all;
    xf_gnn_batch_init(&all);
    batch_of(&all, gs, 3);
    int Z = m.gnn.cfg.latent;
    float *zb = malloc(sizeof *zb * 3 * (size_t)Z);
    ck_assert_ptr_nonnull(zb);
    memcpy(zb, encode(&m, &all), sizeof *zb * 3 * (size_t)Z);
    /* same seed, other store: identical */
    const float *z2 = encode(&m2, &all);
    for (int i = 0; i < 3 * Z; i++)
        ck_assert_msg(z2[i] == zb[i], "z[%d] differs with the same seed", i);
    /* graphs differ, so their z do */
    double diff = 0;
    for (int i = 0; i < Z; i++) diff += fabs((double)zb[i] - (double)zb[Z + i]);
    ck_assert_msg(diff > 1e-3, "two different graphs encode alike (%g)", diff);

    for (int k = 0; k < 3; k++) {
        xf_gnn_batch one;
        xf_gnn_batch_init(&one);
        xf_error err;
        /* the same costs batch_of gave graph k */
        int nn = gs[k]->n_nodes;
        double *ms = malloc(sizeof *ms * (size_t)nn);
        ck_assert_ptr_nonnull(ms);
        for (int i = 0; i < nn; i++) ms[i] = 0.01 * (i + 1) * (k + 1);
        ck_assert_msg(xf_gnn_batch_add(&one, gs[k], NULL, ms, &err) == XF_OK, "%s", err.msg);
        free(ms);
        char what[64];
        snprintf(what, sizeof what, "graph %d alone vs in the batch", k);
        expect_close(encode(&m, &one), zb + (size_t)k * (size_t)Z, Z, 1e-5, what);
        xf_gnn_batch_free(&one);
    }
    free(zb);
    xf_gnn_batch_free(&all);
    for (int i = 0; i < 3; i++) xf_graph_free(gs[i]);
    model_free(&m);
    model_free(&m2);
}
END_TEST

START_TEST(bad_config_rejected)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    xf_rng rng;
    xf_rng_seed(&rng, 1);
    xf_gnn gnn;
    xf_gnn_config cfg = xf_gnn_config_default();
    cfg.rounds = 0;
    xf_error err;
    ck_assert_int_eq(xf_gnn_add(&gnn, &p, "gnn", &cfg, &rng, &err), XF_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "rounds 0") != NULL, "%s", err.msg);
    ck_assert_int_eq(xf_nn_params_count(&p), 0);
    cfg = xf_gnn_config_default();
    cfg.act = (xf_nn_act)9;
    ck_assert_int_eq(xf_gnn_add(&gnn, &p, "gnn", &cfg, &rng, &err), XF_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "activation 9") != NULL, "%s", err.msg);
    xf_nn_params_free(&p);

    /* a valid encoder refuses an empty batch */
    model m;
    model_make(&m, NULL, 1);
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    float dummy = 0;
    const float *z = &dummy; /* set to NULL on failure */
    ck_assert_int_eq(xf_gnn_forward(&m.gnn, &m.p, &b, &m.cache, &z, &err), XF_ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "no graph") != NULL, "%s", err.msg);
    ck_assert_ptr_null(z);
    xf_gnn_batch_free(&b);
    model_free(&m);
}
END_TEST

START_TEST(bert_12_layers_encodes)
{
    xf_graph g, work;
    xf_error err;
    xf_test_modelzoo("bert", "--layers 12 --hidden 64 --heads 4 --seq 16", "gnn_bert12", &g);
    ck_assert_msg(xf_agent_prepare(&g, NULL, &work, NULL, &err) == XF_OK, "%s", err.msg);
    /* 620 nodes, 25 layer norms and 12 GELUs fused into one node each: 397 */
    ck_assert_int_ge(work.n_nodes, 380);
    xf_gnn_batch b;
    xf_gnn_batch_init(&b);
    ck_assert_msg(xf_gnn_batch_add(&b, &work, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(b.n_nodes, work.n_nodes);
    ck_assert_int_gt(b.n_edges, work.n_nodes);
    for (size_t i = 0; i < (size_t)b.n_nodes * XF_GNN_NODE_DIM; i++)
        ck_assert(isfinite(b.node_x[i]));
    model m;
    model_make(&m, NULL, 1);
    const float *z = encode(&m, &b);
    for (int i = 0; i < m.gnn.cfg.latent; i++)
        ck_assert_msg(isfinite(z[i]), "z[%d] = %g", i, (double)z[i]);
    model_free(&m);
    xf_gnn_batch_free(&b);
    xf_graph_free(&work);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_gnn");
    TCase *t = tcase_create("gnn");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, features_of_hand_built_graph);
    tcase_add_test(t, features_reject_empty_graph);
    tcase_add_loop_test(t, backward_matches_finite_differences_tanh, 0, 4);
    tcase_add_test(t, backward_matches_finite_differences_relu);
    tcase_add_test(t, z_invariant_to_node_order);
    tcase_add_test(t, batched_equals_single_and_seed_determines_z);
    tcase_add_test(t, edgeless_batch_encodes);
    tcase_add_test(t, bad_config_rejected);
    tcase_add_test(t, bert_12_layers_encodes);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
