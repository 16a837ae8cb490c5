/*
 * gnn_features.c — turns working graphs into the input tensors of the GNN
 * encoder (gnn.h): one feature row per operator node, one edge per value
 * use, one global row per graph, packed for a whole batch of graphs.
 *
 * Graph inputs and constants are not nodes (a model has hundreds of weight
 * tensors that carry no computation): each use of one becomes a self-loop
 * on the consuming node with the "from outside" flag set, so its size and
 * kind still reach the encoder through the edge features. A value used by
 * several nodes, or twice by one node, gives one edge per use.
 *
 * Node costs are optional (NULL: 0); weight-only nodes count as free, as in
 * xf_agent_graph_cost, because they are folded away at export. Everything is
 * O(nodes + edges) per graph, and the arrays grow geometrically so a batch
 * reused across steps stops allocating.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/rl/gnn.h"

void xf_gnn_batch_init(xf_gnn_batch *b)
{
    memset(b, 0, sizeof *b);
}

void xf_gnn_batch_free(xf_gnn_batch *b)
{
    xf_free(b->node_x);
    xf_free(b->edge_x);
    xf_free(b->global_x);
    xf_free(b->sender);
    xf_free(b->receiver);
    xf_free(b->node_graph);
    xf_free(b->edge_graph);
    xf_free(b->node_start);
    xf_free(b->edge_start);
    xf_gnn_batch_init(b);
}

void xf_gnn_batch_clear(xf_gnn_batch *b)
{
    b->n_graphs = b->n_nodes = b->n_edges = 0;
}

static int next_cap(int cap, int need)
{
    int c = cap > 0 ? cap : 16;
    while (c < need) c *= 2;
    return c;
}

static int resize_f(float **p, size_t n)
{
    float *q = xf_realloc(*p, n * sizeof *q);
    if (q) *p = q;
    return q != NULL;
}

static int resize_i(int **p, size_t n)
{
    int *q = xf_realloc(*p, n * sizeof *q);
    if (q) *p = q;
    return q != NULL;
}

/* Makes room for one more graph with `nodes` nodes and `edges` edges. The
 * arrays of one kind share a capacity, raised only once all of them grew. */
static int reserve(xf_gnn_batch *b, int nodes, int edges)
{
    if (b->n_nodes + nodes > b->cap_nodes) {
        int c = next_cap(b->cap_nodes, b->n_nodes + nodes);
        if (!resize_f(&b->node_x, (size_t)c * XF_GNN_NODE_DIM) ||
            !resize_i(&b->node_graph, (size_t)c))
            return 0;
        b->cap_nodes = c;
    }
    if (b->n_edges + edges > b->cap_edges) {
        int c = next_cap(b->cap_edges, b->n_edges + edges);
        if (!resize_f(&b->edge_x, (size_t)c * XF_GNN_EDGE_DIM) ||
            !resize_i(&b->sender, (size_t)c) || !resize_i(&b->receiver, (size_t)c) ||
            !resize_i(&b->edge_graph, (size_t)c))
            return 0;
        b->cap_edges = c;
    }
    if (b->n_graphs + 2 > b->cap_graphs) { /* offsets hold n_graphs + 1 entries */
        int c = next_cap(b->cap_graphs, b->n_graphs + 2);
        if (!resize_f(&b->global_x, (size_t)c * XF_GNN_GLOBAL_DIM) ||
            !resize_i(&b->node_start, (size_t)c) || !resize_i(&b->edge_start, (size_t)c))
            return 0;
        b->cap_graphs = c;
    }
    return 1;
}

static float log1pf_pos(double x)
{
    return (float)log1p(x > 0 ? x : 0);
}

/* Edge features of one use of value v. */
static void edge_features(const xf_graph *g, const xf_graph_index *ix, int v, float *f)
{
    const xf_value *val = &g->values[v];
    memset(f, 0, sizeof(float) * XF_GNN_EDGE_DIM);
    f[XF_GNN_E_LOG_NUMEL] = log1pf_pos((double)xf_shape_numel(&val->shape));
    f[XF_GNN_E_RANK] = (float)val->shape.rank;
    f[XF_GNN_E_WEIGHT_ONLY] = (float)xf_graph_index_weight_only(ix, v);
    f[XF_GNN_E_OUTSIDE] = val->kind != XF_VALUE_NODE;
    f[XF_GNN_E_GRAPH_INPUT] = val->kind == XF_VALUE_INPUT;
}

static xf_status add_graph(xf_gnn_batch *b, const xf_graph *g, const xf_graph_index *ix,
                           const double *node_ms, xf_error *err)
{
    int edges = 0;
    for (int i = 0; i < g->n_nodes; i++)
        for (int s = 0; s < g->nodes[i].n_inputs; s++) {
            int v = g->nodes[i].inputs[s];
            if (v >= g->n_values) {
                char d[256];
                return XF_FAIL(err, XF_ERR_GRAPH,
                               "GNN features: %s reads value %d, which does not exist",
                               xf_node_describe(g, i, d, sizeof d), v);
            }
            edges += v >= 0;
        }
    if (!reserve(b, g->n_nodes, edges))
        return XF_FAIL(err, XF_ERR_NOMEM,
                       "out of memory building GNN features (%d nodes, %d edges)", g->n_nodes,
                       edges);
    int gid = b->n_graphs, n0 = b->n_nodes, e0 = b->n_edges;
    b->node_start[gid] = n0;
    b->edge_start[gid] = e0;
    double total_ms = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        float *f = b->node_x + (size_t)(n0 + i) * XF_GNN_NODE_DIM;
        memset(f, 0, sizeof(float) * XF_GNN_NODE_DIM);
        f[XF_GNN_N_OP + (int)n->op] = 1;
        int weight_only = n->n_outputs > 0 && xf_graph_index_weight_only(ix, n->outputs[0]);
        double ms = node_ms && !weight_only ? node_ms[i] : 0;
        total_ms += ms;
        f[XF_GNN_N_LOG_COST] = log1pf_pos(ms * 1000.0);
        int64_t numel = 0;
        for (int o = 0; o < n->n_outputs; o++)
            numel += xf_shape_numel(&g->values[n->outputs[o]].shape);
        f[XF_GNN_N_LOG_NUMEL] = log1pf_pos((double)numel);
        f[XF_GNN_N_RANK] = n->n_outputs > 0 ? (float)g->values[n->outputs[0]].shape.rank : 0;
        f[XF_GNN_N_WEIGHT_ONLY] = (float)weight_only;
        b->node_graph[n0 + i] = gid;
        int n_in = 0;
        for (int s = 0; s < n->n_inputs; s++) {
            int v = n->inputs[s];
            if (v < 0) continue;
            n_in++;
            const xf_value *val = &g->values[v];
            int e = b->n_edges++;
            int from = val->kind == XF_VALUE_NODE ? val->producer : i;
            b->sender[e] = n0 + from;
            b->receiver[e] = n0 + i;
            b->edge_graph[e] = gid;
            edge_features(g, ix, v, b->edge_x + (size_t)e * XF_GNN_EDGE_DIM);
        }
        f[XF_GNN_N_INPUTS] = (float)n_in;
    }
    /* consumers = value uses of the node's outputs = node-to-node edges leaving it */
    for (int e = e0; e < b->n_edges; e++)
        if (b->edge_x[(size_t)e * XF_GNN_EDGE_DIM + XF_GNN_E_OUTSIDE] == 0)
            b->node_x[(size_t)b->sender[e] * XF_GNN_NODE_DIM + XF_GNN_N_CONSUMERS] += 1;
    for (int o = 0; o < g->n_outputs; o++) {
        int v = g->outputs[o];
        if (v >= 0 && v < g->n_values && g->values[v].kind == XF_VALUE_NODE)
            b->node_x[(size_t)(n0 + g->values[v].producer) * XF_GNN_NODE_DIM + XF_GNN_N_IS_OUTPUT] =
                1;
    }
    b->n_nodes += g->n_nodes;
    float *u = b->global_x + (size_t)gid * XF_GNN_GLOBAL_DIM;
    u[XF_GNN_G_LOG_COST] = log1pf_pos(total_ms);
    u[XF_GNN_G_LOG_NODES] = log1pf_pos((double)g->n_nodes);
    u[XF_GNN_G_LOG_EDGES] = log1pf_pos((double)edges);
    b->n_graphs++;
    b->node_start[b->n_graphs] = b->n_nodes;
    b->edge_start[b->n_graphs] = b->n_edges;
    return XF_OK;
}

xf_status xf_gnn_batch_add(xf_gnn_batch *b, const xf_graph *g, const xf_graph_index *ix,
                           const double *node_ms, xf_error *err)
{
    if (!b || !g) return XF_FAIL(err, XF_ERR_INVALID, "GNN features: batch and graph are required");
    if (g->n_nodes == 0)
        return XF_FAIL(err, XF_ERR_INVALID, "GNN features: graph '%s' has no operator to encode",
                       g->name ? g->name : "");
    xf_graph_index *own = NULL;
    if (!ix) {
        xf_status st = xf_graph_index_build(g, &own, err);
        if (st != XF_OK) return st;
        ix = own;
    }
    xf_status st = add_graph(b, g, ix, node_ms, err); /* fails before changing b */
    xf_graph_index_free(own);
    return st;
}
