/*
 * gnn.h — (part of agent/rl/rl.h) the graph encoder of the learning agents: a
 * working graph becomes a latent vector z through a graph-nets encoder
 * (Battaglia et al. 2018).
 *
 * Two halves:
 *  - features (gnn_features.c): graphs packed into one batch of float
 *    arrays: a row per operator node, an edge per value use (sender node →
 *    receiver node), a global row per graph, and per-graph offsets;
 *  - the encoder (gnn.c, gnn_edge.c, gnn_backward.c): input MLPs for nodes, edges and
 *    globals, then K message-passing rounds of one shared graph-nets block
 *    with residual connections (edge update φe(e, v_s, v_r, u), sum of edges
 *    into their receivers, node update φv(ē, v, u), global update
 *    φu(Σe, Σv, u)), and a last linear layer from the global vector to z.
 *    Forward keeps what the backward needs; backward accumulates gradients
 *    into the parameter store of agent/nn/nn.h, where the weights live under
 *    "gnn/..." names so checkpoints carry them.
 */
#ifndef XF_AGENT_GNN_H
#define XF_AGENT_GNN_H

#include "agent/search/search.h"
#include "agent/nn/nn.h"

/* ----------------------------------------------------------------- features */

/* Node feature layout: an op one-hot over every xf_op (opaque included),
 * then the scalar features. */
enum {
    XF_GNN_N_OP = 0,                 /* one-hot, XF_OP_COUNT entries */
    XF_GNN_N_LOG_COST = XF_OP_COUNT, /* log1p(cost in µs); 0 without costs or weight-only */
    XF_GNN_N_LOG_NUMEL,              /* log1p(elements of all outputs) */
    XF_GNN_N_RANK,                   /* rank of output 0 */
    XF_GNN_N_INPUTS,                 /* inputs read (omitted optional ones not counted) */
    XF_GNN_N_CONSUMERS,              /* uses of its outputs by other nodes */
    XF_GNN_N_WEIGHT_ONLY,            /* computed from constants only (folded at export) */
    XF_GNN_N_IS_OUTPUT,              /* produces a graph output */
    XF_GNN_NODE_DIM
};

/* Edge feature layout. An edge is one use of a value by a node; a graph
 * input or constant (not a node) gives a self-loop on its consumer flagged
 * "outside". */
enum {
    XF_GNN_E_LOG_NUMEL = 0, /* log1p(elements of the value) */
    XF_GNN_E_RANK,
    XF_GNN_E_WEIGHT_ONLY, /* the value is a constant or computed from constants only */
    XF_GNN_E_OUTSIDE,     /* the value is a graph input or a constant (sender = receiver) */
    XF_GNN_E_GRAPH_INPUT, /* the value is a graph input */
    XF_GNN_EDGE_DIM
};

/* Global feature layout. */
enum {
    XF_GNN_G_LOG_COST = 0, /* log1p(total cost in ms) */
    XF_GNN_G_LOG_NODES,    /* log1p(nodes) */
    XF_GNN_G_LOG_EDGES,    /* log1p(edges) */
    XF_GNN_GLOBAL_DIM
};

/* A batch of graphs. Node and edge rows of graph k are
 * [node_start[k], node_start[k+1]) and [edge_start[k], edge_start[k+1]);
 * sender/receiver are batch-wide node rows. Graph k's nodes keep the order of
 * its g->nodes. */
typedef struct xf_gnn_batch {
    int n_graphs, n_nodes, n_edges;
    float *node_x;                /* n_nodes x XF_GNN_NODE_DIM */
    float *edge_x;                /* n_edges x XF_GNN_EDGE_DIM */
    float *global_x;              /* n_graphs x XF_GNN_GLOBAL_DIM */
    int *sender, *receiver;       /* n_edges */
    int *node_graph, *edge_graph; /* graph of each node / edge row */
    int *node_start, *edge_start; /* n_graphs + 1 */
    int cap_nodes, cap_edges, cap_graphs;
} xf_gnn_batch;

void xf_gnn_batch_init(xf_gnn_batch *b);
void xf_gnn_batch_free(xf_gnn_batch *b);
/* Empties the batch, keeping its memory for the next graphs. */
void xf_gnn_batch_clear(xf_gnn_batch *b);
/* Appends graph g. ix is g's index (NULL: built and freed here); node_ms
 * has g->n_nodes per-node costs in ms (e.g. xf_cost_graph's per_node) or is
 * NULL for none. A graph without nodes is XF_ERR_INVALID. On failure the
 * batch is unchanged. */
xf_status xf_gnn_batch_add(xf_gnn_batch *b, const xf_graph *g, const xf_graph_index *ix,
                           const double *node_ms, xf_error *err);

/* ------------------------------------------------------------------ encoder */

typedef struct xf_gnn_config {
    int hidden;      /* width of the edge, node and global states (default 64) */
    int latent;      /* size of z (default 64) */
    int rounds;      /* message-passing rounds K of the shared block (default 3) */
    int mlp_layers;  /* linear layers per MLP (default 2) */
    xf_nn_act act;   /* activation between an MLP's layers (default ReLU) */
    int global_mean; /* 1: φu reads the mean of the graph's edge and node states
                        instead of their sum, which stays at unit scale on graphs of
                        hundreds of nodes (default 0: sum) */
} xf_gnn_config;

xf_gnn_config xf_gnn_config_default(void);

/* An MLP followed by a layer norm: every update function of the encoder. */
typedef struct xf_gnn_block {
    xf_nn_mlp mlp;
    xf_nn_layernorm ln;
} xf_gnn_block;

/* The encoder's layers; their tensors live in an xf_nn_params store. */
typedef struct xf_gnn {
    xf_gnn_config cfg;
    xf_gnn_block enc_edge, enc_node, enc_global; /* features -> states */
    xf_gnn_block edge, node, global;             /* φe, φv, φu of each round */
    xf_nn_linear out;                            /* global state -> z */
} xf_gnn;

/* Adds the encoder's tensors to p under "<name>/..." (name "gnn" for the
 * agent: "gnn/edge.l0.w", "gnn/node.ln.gamma", "gnn/out.w", ...), initialised
 * from rng. cfg NULL: defaults. XF_ERR_INVALID for a size < 1, more MLP
 * layers than agent/nn allows or an unknown activation (nothing added). */
xf_status xf_gnn_add(xf_gnn *m, xf_nn_params *p, const char *name, const xf_gnn_config *cfg,
                     xf_rng *rng, xf_error *err);

/* Everything a forward keeps for its backward (one per batch in flight).
 * Grows to the largest batch seen; the pointers below are views into `mem`
 * for the last forward's batch: states per round k = 0..K in [K+1, rows, H]
 * blocks, the update functions' inputs and φe's first-layer outputs per
 * round in [K, rows, width] blocks, layer-norm statistics in [K+1, rows]
 * blocks (index 0: the input encoders). */
typedef struct xf_gnn_cache {
    int n_mlp; /* 3 + 3K MLP caches: encoders, then φe, φv, φu per round */
    xf_nn_mlp_cache *mlp;
    float *mem;
    size_t cap;                     /* floats in mem */
    int n_graphs, n_nodes, n_edges; /* of the last forward */
    float *e, *v, *u;               /* states */
    float *h1;                      /* φe's first layer, activated [E,H] (gnn_edge.c) */
    float *xv, *xu;                 /* inputs of φv [N,3H] and φu [G,3H] */
    float *e_mean, *e_rstd, *v_mean, *v_rstd, *u_mean, *u_rstd;
    float *z;                           /* [G, latent] */
    float *ps, *pr, *pu;                /* φe's node and global products [N,H], [N,H], [G,H] */
    float *de, *dv, *du, *dm, *dh, *dx; /* backward scratch */
} xf_gnn_cache;

void xf_gnn_cache_init(xf_gnn_cache *c);
void xf_gnn_cache_free(xf_gnn_cache *c);

/* Encodes every graph of b: *z (may be NULL) points at [b->n_graphs,
 * latent] floats held by the cache until its next forward. Fails only for
 * an empty batch (XF_ERR_INVALID) or when out of memory. */
xf_status xf_gnn_forward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                         xf_gnn_cache *c, const float **z, xf_error *err);
/* Backward of the cache's last forward (same b): accumulates into p's
 * gradients given dz [b->n_graphs, latent]. */
void xf_gnn_backward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b, xf_gnn_cache *c,
                     const float *dz);

/* Internal to gnn*.c — φe of round k without its concatenated input
 * (gnn_edge.c). Forward reads states k and writes h1 of round k, returning
 * the MLP's output (before the layer norm); output gives that pointer again
 * for the backward; backward takes the gradient at the MLP's output in dy
 * (overwritten) and accumulates into the gradients of p, c->de (d e_k),
 * c->dv and c->du. */
/* Weight of each edge (start = b->edge_start) or node (b->node_start) of
 * graph g in φu's aggregate: 1, or 1/count with cfg.global_mean. */
float xf_gnn_global_weight(const xf_gnn *m, const int *start, int g);
xf_status xf_gnn_edge_reserve(const xf_gnn *m, xf_nn_mlp_cache *mc, int rows, xf_error *err);
const float *xf_gnn_edge_forward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                                 xf_gnn_cache *c, int k);
const float *xf_gnn_edge_output(const xf_gnn *m, const xf_gnn_cache *c, int E, int k);
void xf_gnn_edge_backward(const xf_gnn *m, const xf_nn_params *p, const xf_gnn_batch *b,
                          xf_gnn_cache *c, int k, float *dy);

#endif /* XF_AGENT_GNN_H */
