/*
 * graph_hash.c — canonical structural hash of a graph. A value's hash
 * depends only on how it is computed (op, params, hashes of its inputs,
 * which output it is), on its graph-input position, or on a constant's
 * contents; never on names or node order. The graph hash combines the
 * sorted multiset of node hashes (so unused nodes count) with the ordered
 * output hashes. Two graphs that differ only by renaming or reordering
 * nodes hash equal; this is what round-trip tests compare.
 *
 * Two modes. XF_HASH_CONTENT (xf_graph_hash) reads constants' contents and
 * hashes every byte of the parameters and the sorted node hashes: its value
 * is stored in the rules database and never changes. XF_HASH_IDENTITY is
 * the fast mode for the searches' seen-sets, which hash every step: a
 * constant is its data pointer, dtype and shape (rewrites share constants
 * with the model they started from), parameters count by their nonzero
 * words, node outputs by node and index only (their shapes follow) and
 * node hashes are summed, so it is O(nodes + edges) with a small
 * constant however large the weights. Its values are never stored.
 * XF_HASH_UNORDERED and XF_HASH_IDENTITY_UNORDERED are content and
 * identity mode with the operands of the commutative binary operators
 * taken in sorted order, for telling apart graphs that compute differently
 * from ones that only swap operands (the search's candidates, the
 * arbiter's duplicates); their values are never stored either.
 *
 * The same node hashes give the canonical node order (a topological order
 * taking the ready node with the smallest hash first) in which the rules
 * database serializes a rule side.
 */
#include "op_internal.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(xf_params) == 2 * 4 + 4 * 6 * 8 + 21 * 4 + 3 * 4 + 8 + 6 * 8 + XF_MAX_SPLIT * 8,
               "xf_params must have no padding: it is hashed byte by byte");

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t hash_value_base(const xf_value *v, uint64_t h)
{
    h = xf_hash_u64(h, (uint64_t)v->dtype);
    h = xf_hash_u64(h, (uint64_t)v->shape.rank);
    for (int i = 0; i < v->shape.rank; i++) h = xf_hash_u64(h, (uint64_t)v->shape.dims[i]);
    return h;
}

/* Identity mode's parameter hash: the nonzero words of canonical
 * parameters (unused fields are zero), each with its offset, and split
 * sizes only for split: a few mixes instead of the whole struct. */
static uint64_t hash_params_sparse(uint64_t h, xf_op op, const xf_params *p)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t n = op == XF_OP_SPLIT ? sizeof *p : offsetof(xf_params, split);
    for (size_t off = 0; off + 8 <= n; off += 8) {
        uint64_t w;
        memcpy(&w, b + off, 8);
        if (w) h = xf_hash_u64(h, w ^ ((uint64_t)off << 52));
    }
    return h;
}

static uint64_t hash_opaque(const xf_opaque *o, uint64_t h)
{
    if (!o) return h;
    h = xf_hash_bytes(h, o->op_type, strlen(o->op_type));
    h = xf_hash_bytes(h, o->domain ? o->domain : "", o->domain ? strlen(o->domain) : 0);
    for (int i = 0; i < o->n_attrs; i++) h = xf_hash_bytes(h, o->attr_bytes[i], o->attr_len[i]);
    return h;
}

/* Commutative binary operators: their operands count in either order in
 * the unordered modes. */
static int identity_mode(xf_hash_mode m)
{
    return m == XF_HASH_IDENTITY || m == XF_HASH_IDENTITY_UNORDERED;
}

static int unordered_mode(xf_hash_mode m)
{
    return m == XF_HASH_UNORDERED || m == XF_HASH_IDENTITY_UNORDERED;
}

/* The hash of operand v (< 0: an omitted optional input). */
static uint64_t operand_hash(const uint64_t *vh, int v)
{
    return v < 0 ? 0x0917u : vh[v];
}

/* Fills vh (n_values) with value hashes and nh (n_nodes) with node hashes;
 * order (n_nodes) receives a topological order. */
static xf_status node_hashes(const xf_graph *g, xf_hash_mode mode, uint64_t *vh, uint64_t *nh,
                             int *order, xf_error *err)
{
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        if (v->kind != XF_VALUE_CONST) continue;
        if (identity_mode(mode)) {
            vh[i] = hash_value_base(v, xf_hash_u64(0xC0115747ull, (uint64_t)(uintptr_t)v->data));
        } else {
            size_t bytes = (size_t)xf_shape_numel(&v->shape) * xf_dtype_size(v->dtype);
            vh[i] = xf_hash_bytes(hash_value_base(v, 0xC0115747ull), v->data, bytes);
        }
    }
    for (int i = 0; i < g->n_inputs; i++)
        vh[g->inputs[i]] = hash_value_base(&g->values[g->inputs[i]], xf_hash_u64(0x1A9u, (uint64_t)i));
    xf_status st = xf_graph_topo_order(g, order, err);
    if (st != XF_OK) return st;
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[order[k]];
        uint64_t h = xf_hash_u64(0x0D3u, (uint64_t)n->op);
        h = identity_mode(mode) ? hash_params_sparse(h, n->op, &n->params)
                                : xf_hash_bytes(h, &n->params, sizeof n->params);
        h = hash_opaque(n->opaque, h);
        h = xf_hash_u64(h, (uint64_t)n->n_inputs);
        if (unordered_mode(mode) && n->n_inputs == 2 && xf_op_is(n->op, XF_OPC_COMMUTATIVE)) {
            uint64_t a = operand_hash(vh, n->inputs[0]), b = operand_hash(vh, n->inputs[1]);
            h = xf_hash_u64(xf_hash_u64(h, a < b ? a : b), a < b ? b : a);
        } else {
            for (int j = 0; j < n->n_inputs; j++) h = xf_hash_u64(h, operand_hash(vh, n->inputs[j]));
        }
        h = xf_hash_u64(h, (uint64_t)n->n_outputs);
        nh[order[k]] = h;
        /* identity mode leaves out output shapes: inference derives them
         * from what the node hash already holds */
        for (int j = 0; j < n->n_outputs; j++)
            vh[n->outputs[j]] = identity_mode(mode)
                                    ? xf_hash_u64(h, (uint64_t)j)
                                    : hash_value_base(&g->values[n->outputs[j]],
                                                      xf_hash_u64(h, (uint64_t)j));
    }
    return XF_OK;
}

xf_status xf_graph_hash_checked(const xf_graph *g, xf_hash_mode mode, uint64_t *hash,
                                xf_error *err)
{
    *hash = 0;
    uint64_t *vh = xf_calloc((size_t)g->n_values + 1, sizeof *vh);
    uint64_t *nh = xf_calloc((size_t)g->n_nodes + 1, sizeof *nh);
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    xf_status st = XF_OK;
    if (!vh || !nh || !order) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory hashing a graph of %d nodes", g->n_nodes);
        goto out;
    }
    st = node_hashes(g, mode, vh, nh, order, err);
    if (st != XF_OK) goto out;
    uint64_t h = xf_hash_u64(0x6A4u, (uint64_t)g->n_nodes);
    if (identity_mode(mode)) {
        uint64_t sum = 0;
        for (int i = 0; i < g->n_nodes; i++) sum += nh[i];
        h = xf_hash_u64(h, sum);
    } else {
        qsort(nh, (size_t)g->n_nodes, sizeof *nh, cmp_u64);
        for (int i = 0; i < g->n_nodes; i++) h = xf_hash_u64(h, nh[i]);
    }
    h = xf_hash_u64(h, (uint64_t)g->n_inputs);
    h = xf_hash_u64(h, (uint64_t)g->n_outputs);
    for (int i = 0; i < g->n_outputs; i++) h = xf_hash_u64(h, vh[g->outputs[i]]);
    *hash = h ? h : 1;
out:
    xf_free(vh);
    xf_free(nh);
    xf_free(order);
    return st;
}

uint64_t xf_graph_hash_mode(const xf_graph *g, xf_hash_mode mode)
{
    uint64_t h;
    xf_graph_hash_checked(g, mode, &h, NULL); /* 0 marks "could not hash" */
    return h;
}

uint64_t xf_graph_hash(const xf_graph *g)
{
    return xf_graph_hash_mode(g, XF_HASH_CONTENT);
}

xf_status xf_graph_canonical_order(const xf_graph *g, int *order, xf_error *err)
{
    xf_status st = XF_OK;
    uint64_t *vh = xf_calloc((size_t)g->n_values + 1, sizeof *vh);
    uint64_t *nh = xf_calloc((size_t)g->n_nodes + 1, sizeof *nh);
    int *topo_order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    char *done = xf_calloc((size_t)g->n_nodes + 1, 1);
    if (!vh || !nh || !topo_order || !done) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory ordering a graph");
        goto out;
    }
    st = node_hashes(g, XF_HASH_CONTENT, vh, nh, topo_order, err);
    if (st != XF_OK) goto out;
    for (int k = 0; k < g->n_nodes; k++) {
        int best = -1;
        for (int m = 0; m < g->n_nodes; m++) {
            if (done[m]) continue;
            const xf_node *n = &g->nodes[m];
            int ready = 1;
            for (int j = 0; j < n->n_inputs && ready; j++) {
                int v = n->inputs[j];
                if (v >= 0 && g->values[v].kind == XF_VALUE_NODE && !done[g->values[v].producer])
                    ready = 0;
            }
            if (ready && (best < 0 || nh[m] < nh[best])) best = m;
        }
        /* the graph has a topological order, so some node is always ready */
        done[best] = 1;
        order[k] = best;
    }
out:
    xf_free(vh);
    xf_free(nh);
    xf_free(topo_order);
    xf_free(done);
    return st;
}
