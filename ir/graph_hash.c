/*
 * graph_hash.c — canonical structural hash of a graph. A value's hash
 * depends only on how it is computed (op, params, hashes of its inputs,
 * which output it is), on its graph-input position, or on a constant's
 * contents; never on names or node order. The graph hash combines the
 * sorted multiset of node hashes (so unused nodes count) with the ordered
 * output hashes. Two graphs that differ only by renaming or reordering
 * nodes hash equal; this is what round-trip tests compare.
 */
#include "op_impl.h"

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

static uint64_t hash_opaque(const xf_opaque *o, uint64_t h)
{
    if (!o) return h;
    h = xf_hash_bytes(h, o->op_type, strlen(o->op_type));
    h = xf_hash_bytes(h, o->domain ? o->domain : "", o->domain ? strlen(o->domain) : 0);
    for (int i = 0; i < o->n_attrs; i++) h = xf_hash_bytes(h, o->attr_bytes[i], o->attr_len[i]);
    return h;
}

xf_status xf_graph_hash_checked(const xf_graph *g, uint64_t *hash, xf_error *err)
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
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        if (v->kind == XF_VALUE_CONST) {
            size_t bytes = (size_t)xf_shape_numel(&v->shape) * xf_dtype_size(v->dtype);
            vh[i] = xf_hash_bytes(hash_value_base(v, 0xC0115747ull), v->data, bytes);
        }
    }
    for (int i = 0; i < g->n_inputs; i++)
        vh[g->inputs[i]] = hash_value_base(&g->values[g->inputs[i]], xf_hash_u64(0x1A9u, (uint64_t)i));
    st = xf_graph_topo_order(g, order, err);
    if (st != XF_OK) goto out;
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[order[k]];
        uint64_t h = xf_hash_u64(0x0D3u, (uint64_t)n->op);
        h = xf_hash_bytes(h, &n->params, sizeof n->params);
        h = hash_opaque(n->opaque, h);
        h = xf_hash_u64(h, (uint64_t)n->n_inputs);
        for (int j = 0; j < n->n_inputs; j++)
            h = xf_hash_u64(h, n->inputs[j] < 0 ? 0x0917u : vh[n->inputs[j]]);
        h = xf_hash_u64(h, (uint64_t)n->n_outputs);
        nh[order[k]] = h;
        for (int j = 0; j < n->n_outputs; j++)
            vh[n->outputs[j]] = hash_value_base(&g->values[n->outputs[j]], xf_hash_u64(h, (uint64_t)j));
    }
    qsort(nh, (size_t)g->n_nodes, sizeof *nh, cmp_u64);
    uint64_t h = xf_hash_u64(0x6A4u, (uint64_t)g->n_nodes);
    for (int i = 0; i < g->n_nodes; i++) h = xf_hash_u64(h, nh[i]);
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

uint64_t xf_graph_hash(const xf_graph *g)
{
    uint64_t h;
    xf_graph_hash_checked(g, &h, NULL);
    return h;
}
