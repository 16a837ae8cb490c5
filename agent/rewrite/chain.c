/*
 * chain.c — the driver the preparation's fusions share (chain_internal.h):
 * every chain is recognised on the graph as it stands, then each is replaced
 * by its fused node and the replaced nodes and values are compacted away in
 * one pass, so a fusion costs one index build whatever its count.
 */
#include "agent/rewrite/chain_internal.h"

int rw_sole_reader(const xf_graph_index *ix, const int *uses, int v)
{
    int n;
    const int *users = xf_graph_index_users(ix, v, &n);
    if (uses[v] != 1 || n != 1) return -1;
    return users[0];
}

int rw_other_operand(const xf_graph *g, int node, int v)
{
    const int *in = g->nodes[node].inputs;
    if (in[0] == v) return in[1];
    if (in[1] == v) return in[0];
    return -1;
}

xf_status rw_fuse_chains(xf_graph *g, const char *what, size_t chain_size, int min_nodes,
                         int new_values, rw_chain_match match, rw_chain_fuse fuse,
                         int *n_fused, xf_error *err)
{
    *n_fused = 0;
    int n0 = g->n_nodes;
    xf_graph_index *ix = NULL;
    int *uses = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    if (!uses) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory fusing %s", what);
    xf_edit_use_counts(g, uses);
    xf_status st = xf_graph_index_build(g, &ix, err);
    char *chains = NULL;
    int n_chains = 0;
    if (!st) {
        chains = xf_malloc(chain_size * ((size_t)n0 / (size_t)min_nodes + 1));
        if (!chains) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory fusing %s", what);
    }
    for (int i = 0; i < n0 && !st; i++)
        if (match(g, ix, uses, i, chains + chain_size * (size_t)n_chains)) n_chains++;
    xf_graph_index_free(ix);
    xf_free(uses);
    if (st || n_chains == 0) {
        xf_free(chains);
        return st;
    }
    /* the fused nodes and their new values are appended, so size the
     * dead-marks for what the graph will hold */
    size_t nv = (size_t)g->n_values + (size_t)new_values * (size_t)n_chains;
    size_t nn = (size_t)n0 + (size_t)n_chains;
    uint8_t *value_dead = xf_calloc(nv, 1), *node_dead = xf_calloc(nn, 1);
    if (!value_dead || !node_dead) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory fusing %s", what);
    for (int k = 0; k < n_chains && !st; k++)
        st = fuse(g, chains + chain_size * (size_t)k, node_dead, value_dead, err);
    if (!st) st = xf_edit_compact(g, node_dead, value_dead, err);
    if (!st) *n_fused = n_chains;
    xf_free(value_dead);
    xf_free(node_dead);
    xf_free(chains);
    return st;
}
