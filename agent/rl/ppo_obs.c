/*
 * ppo_obs.c — minibatches of observations for the end-to-end update of the
 * model-free agent: the graphs of a rollout are kept as one GNN feature
 * batch (a graph per buffer row), and each PPO minibatch copies its rows'
 * graphs out of it into a batch of their own, renumbering node rows and
 * graph ids, instead of recomputing the features of every graph at every
 * epoch.
 *
 * The destination's arrays grow with realloc and record their sizes in the
 * batch's cap fields, which is the allocation xf_gnn_batch_free releases.
 */
#include "agent/rl/ppo.h"

#include <stdlib.h>
#include <string.h>

static int fit(void **p, int *cap, int need, size_t elem, int *grown)
{
    if (need <= *cap) return 1;
    void *q = xf_realloc(*p, (size_t)need * elem);
    if (!q) return 0;
    *p = q;
    *grown = 1;
    return 1;
}

/* Room for `nodes`, `edges` and `graphs` rows in all of b's arrays. */
static int reserve(xf_gnn_batch *b, int nodes, int edges, int graphs)
{
    int g1 = graphs + 1, grown = 0, c;
    c = b->cap_nodes;
    if (!fit((void **)&b->node_x, &c, nodes, sizeof(float) * XF_GNN_NODE_DIM, &grown) ||
        !fit((void **)&b->node_graph, &c, nodes, sizeof(int), &grown))
        return 0;
    if (grown) b->cap_nodes = nodes;
    grown = 0;
    c = b->cap_edges;
    if (!fit((void **)&b->edge_x, &c, edges, sizeof(float) * XF_GNN_EDGE_DIM, &grown) ||
        !fit((void **)&b->sender, &c, edges, sizeof(int), &grown) ||
        !fit((void **)&b->receiver, &c, edges, sizeof(int), &grown) ||
        !fit((void **)&b->edge_graph, &c, edges, sizeof(int), &grown))
        return 0;
    if (grown) b->cap_edges = edges;
    grown = 0;
    c = b->cap_graphs;
    if (!fit((void **)&b->global_x, &c, g1, sizeof(float) * XF_GNN_GLOBAL_DIM, &grown) ||
        !fit((void **)&b->node_start, &c, g1, sizeof(int), &grown) ||
        !fit((void **)&b->edge_start, &c, g1, sizeof(int), &grown))
        return 0;
    if (grown) b->cap_graphs = g1;
    return 1;
}

xf_status xf_ppo_obs_gather(xf_gnn_batch *dst, const xf_gnn_batch *src, const int *graphs, int n,
                            xf_error *err)
{
    int nodes = 0, edges = 0;
    for (int k = 0; k < n; k++) {
        int g = graphs[k];
        nodes += src->node_start[g + 1] - src->node_start[g];
        edges += src->edge_start[g + 1] - src->edge_start[g];
    }
    xf_gnn_batch_clear(dst);
    if (!reserve(dst, nodes > 0 ? nodes : 1, edges > 0 ? edges : 1, n))
        return XF_FAIL(err, XF_ERR_NOMEM,
                       "out of memory gathering %d graphs (%d nodes) for a PPO minibatch", n,
                       nodes);
    int vn = 0, ve = 0;
    dst->node_start[0] = dst->edge_start[0] = 0;
    for (int k = 0; k < n; k++) {
        int g = graphs[k];
        int n0 = src->node_start[g], nn = src->node_start[g + 1] - n0;
        int e0 = src->edge_start[g], ne = src->edge_start[g + 1] - e0;
        memcpy(dst->node_x + (size_t)vn * XF_GNN_NODE_DIM, src->node_x + (size_t)n0 * XF_GNN_NODE_DIM,
               (size_t)nn * XF_GNN_NODE_DIM * sizeof(float));
        memcpy(dst->edge_x + (size_t)ve * XF_GNN_EDGE_DIM, src->edge_x + (size_t)e0 * XF_GNN_EDGE_DIM,
               (size_t)ne * XF_GNN_EDGE_DIM * sizeof(float));
        memcpy(dst->global_x + (size_t)k * XF_GNN_GLOBAL_DIM,
               src->global_x + (size_t)g * XF_GNN_GLOBAL_DIM, XF_GNN_GLOBAL_DIM * sizeof(float));
        for (int i = 0; i < nn; i++) dst->node_graph[vn + i] = k;
        for (int i = 0; i < ne; i++) {
            dst->sender[ve + i] = src->sender[e0 + i] - n0 + vn;
            dst->receiver[ve + i] = src->receiver[e0 + i] - n0 + vn;
            dst->edge_graph[ve + i] = k;
        }
        vn += nn;
        ve += ne;
        dst->node_start[k + 1] = vn;
        dst->edge_start[k + 1] = ve;
    }
    dst->n_graphs = n;
    dst->n_nodes = vn;
    dst->n_edges = ve;
    return XF_OK;
}
