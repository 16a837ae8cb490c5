/*
 * index.c — the per-graph lookup tables of the matcher, built once per graph
 * and shared by every rule: each node's matching key and root signatures
 * in a hash table (so a rule's first operator finds exactly the nodes with
 * its op, parameters and input producers), the distinct consumers of each value (CSR arrays), graph-output
 * and weight-only flags per value, and each node's position in a
 * topological order (the cycle check prunes with it).
 *
 * Weight-only: constants are, graph inputs are not; a node's outputs are
 * when it is not opaque and all its inputs are (a node without inputs, a
 * constant generator, always is). Everything is O(nodes + edges).
 *
 * Computing a node's key is most of the build (its parameters in relative
 * form, hashed), so an index for a graph one rewrite away from another
 * takes the keys of unchanged nodes over from the other's index
 * (xf_graph_index_build_from).
 */
#include <stdlib.h>
#include <string.h>

#include "match/match_internal.h"

/* Topological positions from xf_graph_topo_order (node order itself when
 * every input is produced by an earlier node: graphs built with the
 * builders). */
static xf_status topo_positions(const xf_graph *g, xf_graph_index *ix, xf_error *err)
{
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
    xf_status st = xf_graph_topo_order(g, order, err);
    if (st == XF_OK)
        for (int k = 0; k < g->n_nodes; k++) ix->topo_pos[order[k]] = k;
    xf_free(order);
    return st;
}

/* Distinct consumers per value; nodes are visited in index order, so a node
 * reading a value twice is the last entry when it comes again. */
static void fill_users(const xf_graph *g, xf_graph_index *ix, int *fill)
{
    for (int v = 0; v < g->n_values; v++) fill[v] = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int s = 0; s < n->n_inputs; s++) {
            int v = n->inputs[s];
            if (v < 0) continue;
            int at = ix->users_start[v] + fill[v];
            if (fill[v] > 0 && ix->users[at - 1] == i) continue;
            ix->users[at] = i;
            fill[v]++;
        }
    }
}

static xf_status build_users(const xf_graph *g, xf_graph_index *ix, xf_error *err)
{
    /* count with the same dedup rule: a repeated input right after itself
     * in the same node is counted once */
    int *last = xf_calloc((size_t)g->n_values + 1, sizeof *last);
    if (!last) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int s = 0; s < n->n_inputs; s++) {
            int v = n->inputs[s];
            if (v < 0) continue;
            if (v >= g->n_values) {
                xf_free(last);
                char d[256];
                return XF_FAIL(err, XF_ERR_GRAPH, "graph index: %s reads value %d, which does not exist",
                               xf_node_describe(g, i, d, sizeof d), v);
            }
            if (last[v] == i + 1) continue;
            last[v] = i + 1;
            ix->users_start[v + 1]++;
        }
    }
    for (int v = 0; v < g->n_values; v++) ix->users_start[v + 1] += ix->users_start[v];
    ix->users = xf_malloc(sizeof *ix->users * ((size_t)ix->users_start[g->n_values] + 1));
    if (ix->users) fill_users(g, ix, last);
    xf_free(last);
    return ix->users ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
}

static uint64_t producer_tag(const xf_graph *g, const xf_node *n, int slot)
{
    if (slot >= n->n_inputs || n->inputs[slot] < 0) return 0;
    const xf_value *v = &g->values[n->inputs[slot]];
    if (v->kind != XF_VALUE_NODE) return 0;
    return xf_producer_tag(g->nodes[v->producer].op, v->producer_output);
}

/* The root signatures of node i, whose key is `key`, into sig (at most
 * XF_MATCH_NODE_SIGS); returns how many. */
static int node_sigs(const xf_graph *g, uint64_t key, int i, uint64_t *sig)
{
    const xf_node *n = &g->nodes[i];
    uint64_t p0 = producer_tag(g, n, 0), p1 = producer_tag(g, n, 1);
    /* a commutative operator is also found with its operands swapped
     * (match.c binds it either way round) */
    int ways = match_commutes(n->op, n->n_inputs) && p0 != p1 ? 2 : 1, k = 0;
    for (int w = 0; w < ways; w++)
        for (int v = w; v < XF_ROOT_VARIANTS; v++)
            sig[k++] = w ? xf_root_sig(key, v, p1, p0) : xf_root_sig(key, v, p0, p1);
    return k;
}

/* Keys of the nodes (from prev where from says a node is a copy) and the
 * root signature table. */
static xf_status build_roots(const xf_graph *g, const xf_graph_index *prev, const int *from,
                             xf_graph_index *ix, xf_error *err)
{
    size_t entries = (size_t)g->n_nodes * XF_MATCH_NODE_SIGS, buckets = 16;
    while (buckets < 2 * entries) buckets *= 2;
    ix->sig = xf_malloc(sizeof *ix->sig * (entries + 1));
    ix->sig_node = xf_malloc(sizeof *ix->sig_node * (entries + 1));
    ix->sig_next = xf_malloc(sizeof *ix->sig_next * (entries + 1));
    ix->sig_head = xf_malloc(sizeof *ix->sig_head * buckets);
    if (!ix->sig || !ix->sig_node || !ix->sig_next || !ix->sig_head)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
    ix->sig_mask = buckets - 1;
    memset(ix->sig_head, 0xFF, sizeof *ix->sig_head * buckets); /* -1 */
    int e = 0;
    /* descending node order, each entry pushed in front: chains ascend */
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        const xf_node *n = &g->nodes[i];
        if (from && from[i] >= 0) {
            ix->key[i] = prev->key[from[i]];
            ix->form_zero[i] = prev->form_zero[from[i]];
            if (!ix->key[i]) continue;
        } else {
            xf_params rel;
            const xf_shape *in0 =
                n->n_inputs > 0 && n->inputs[0] >= 0 ? &g->values[n->inputs[0]].shape : NULL;
            if (n->op == XF_OP_OPAQUE || !match_form(n->op, &n->params, n->n_inputs,
                                                        n->n_outputs, in0, &rel, &ix->key[i])) {
                ix->key[i] = 0;
                continue;
            }
            ix->form_zero[i] = (uint8_t)match_form_zero(&rel);
        }
        int k = node_sigs(g, ix->key[i], i, ix->sig + e);
        for (int s = 0; s < k; s++, e++) {
            ix->sig_node[e] = i;
            size_t b = (size_t)(ix->sig[e] & ix->sig_mask);
            ix->sig_next[e] = ix->sig_head[b];
            ix->sig_head[b] = e;
        }
    }
    ix->n_sig = e;
    return XF_OK;
}

int match_node_sigs(const xf_graph *g, const xf_graph_index *ix, int node, uint64_t *sig)
{
    return ix->key[node] ? node_sigs(g, ix->key[node], node, sig) : 0;
}

static void weight_only(const xf_graph *g, xf_graph_index *ix, const int *order)
{
    for (int v = 0; v < g->n_values; v++) ix->weight_only[v] = g->values[v].kind == XF_VALUE_CONST;
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[order[k]];
        int w = n->op != XF_OP_OPAQUE;
        for (int s = 0; s < n->n_inputs && w; s++)
            if (n->inputs[s] >= 0) w = ix->weight_only[n->inputs[s]];
        for (int o = 0; o < n->n_outputs; o++) ix->weight_only[n->outputs[o]] = (uint8_t)w;
    }
}

xf_status xf_graph_index_build(const xf_graph *g, xf_graph_index **out, xf_error *err)
{
    return xf_graph_index_build_from(g, NULL, NULL, out, err);
}

xf_status xf_graph_index_build_from(const xf_graph *g, const xf_graph_index *prev, const int *from,
                                    xf_graph_index **out, xf_error *err)
{
    *out = NULL;
    xf_graph_index *ix = xf_calloc(1, sizeof *ix);
    if (!ix) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
    size_t nn = (size_t)g->n_nodes + 1, nv = (size_t)g->n_values + 1;
    ix->n_nodes = g->n_nodes;
    ix->n_values = g->n_values;
    ix->key = xf_malloc(sizeof *ix->key * nn);
    ix->form_zero = xf_calloc(nn, 1);
    ix->users_start = xf_calloc(nv + 1, sizeof *ix->users_start);
    ix->is_output = xf_calloc(nv, 1);
    ix->weight_only = xf_calloc(nv, 1);
    ix->topo_pos = xf_malloc(sizeof *ix->topo_pos * nn);
    int *order = xf_malloc(sizeof *order * nn);
    xf_status st = XF_OK;
    if (!ix->key || !ix->form_zero || !ix->users_start || !ix->is_output ||
        !ix->weight_only || !ix->topo_pos || !order) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory indexing graph");
        goto out;
    }
    for (int i = 0; i < g->n_outputs; i++) {
        int v = g->outputs[i];
        if (v < 0 || v >= g->n_values) {
            st = XF_FAIL(err, XF_ERR_GRAPH, "graph index: output %d refers to value %d, which does not exist",
                         i, v);
            goto out;
        }
        ix->is_output[v] = 1;
    }
    st = build_users(g, ix, err);
    if (st == XF_OK) st = build_roots(g, prev, from, ix, err);
    if (st == XF_OK) st = topo_positions(g, ix, err);
    if (st != XF_OK) goto out;
    for (int i = 0; i < g->n_nodes; i++) order[ix->topo_pos[i]] = i;
    weight_only(g, ix, order);
out:
    xf_free(order);
    if (st != XF_OK) {
        xf_graph_index_free(ix);
        ix = NULL;
    }
    *out = ix;
    return st;
}

void xf_graph_index_free(xf_graph_index *ix)
{
    if (!ix) return;
    xf_free(ix->key);
    xf_free(ix->form_zero);
    xf_free(ix->sig);
    xf_free(ix->sig_node);
    xf_free(ix->sig_next);
    xf_free(ix->sig_head);
    xf_free(ix->users_start);
    xf_free(ix->users);
    xf_free(ix->is_output);
    xf_free(ix->weight_only);
    xf_free(ix->topo_pos);
    xf_free(ix);
}

int xf_graph_index_weight_only(const xf_graph_index *ix, int value)
{
    return ix && value >= 0 && value < ix->n_values ? ix->weight_only[value] : 0;
}

const int *xf_graph_index_users(const xf_graph_index *ix, int value, int *n)
{
    *n = ix->users_start[value + 1] - ix->users_start[value];
    return ix->users + ix->users_start[value];
}
