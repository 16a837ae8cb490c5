/*
 * ghash.c — structural hash of a working graph for the search's "seen" set.
 *
 * Like xf_graph_hash it ignores node order and names, but it never reads
 * constant data: a constant is identified by its data pointer, shape and
 * dtype. Rewrites share constants with the model they started from
 * (xf_graph_clone_shared), so the same weight has the same pointer on every
 * path, and hashing stays O(nodes + edges) however large the weights.
 *
 * Each value gets a hash: graph inputs from their position, dtype and
 * shape; constants from pointer, dtype and shape; node outputs from the
 * node's hash (op, parameters, opaque attributes, input hashes in order)
 * and the output index. Nodes are visited in a topological order (node
 * order itself when it is one, which is checked in O(edges), else Kahn's
 * algorithm). The graph hash combines the order-independent sum of all node
 * hashes with the output hashes in order.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agent/match_impl.h"

static uint64_t hash_shape(uint64_t h, xf_dtype dt, const xf_shape *s)
{
    h = xf_mix64(h, (uint64_t)dt);
    h = xf_mix64(h, (uint64_t)s->rank);
    for (int i = 0; i < s->rank; i++) h = xf_mix64(h, (uint64_t)s->dims[i]);
    return h;
}

static uint64_t hash_words(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = xf_mix64(h, w);
    }
    uint64_t w = 0;
    if (n > i) memcpy(&w, b + i, n - i);
    return xf_mix64(h, w ^ (uint64_t)n);
}

static uint64_t hash_params(uint64_t h, xf_op op, const xf_params *p)
{
    /* canonical parameters: unused fields are zero; only split reads split[] */
    h = xf_mix_sparse(h, p, offsetof(xf_params, split));
    if (op == XF_OP_SPLIT && p->n_split > 0 && p->n_split <= XF_MAX_SPLIT)
        h = hash_words(h, p->split, sizeof p->split[0] * (size_t)p->n_split);
    return h;
}

static uint64_t hash_opaque(uint64_t h, const xf_opaque *o)
{
    if (!o) return h;
    if (o->op_type) h = hash_words(h, o->op_type, strlen(o->op_type));
    if (o->domain) h = hash_words(h, o->domain, strlen(o->domain));
    h = xf_mix64(h, (uint64_t)o->domain_version);
    for (int i = 0; i < o->n_attrs; i++) h = hash_words(h, o->attr_bytes[i], o->attr_len[i]);
    return h;
}

/* Node indices in a topological order into order; 0 when there is none or
 * memory ran out. */
static int topo(const xf_graph *g, int *order)
{
    int ordered = 1;
    for (int i = 0; i < g->n_nodes && ordered; i++) {
        const xf_node *n = &g->nodes[i];
        for (int s = 0; s < n->n_inputs; s++) {
            int v = n->inputs[s];
            if (v >= 0 && g->values[v].kind == XF_VALUE_NODE && g->values[v].producer >= i) {
                ordered = 0;
                break;
            }
        }
    }
    if (ordered) {
        for (int i = 0; i < g->n_nodes; i++) order[i] = i;
        return 1;
    }
    return xf_graph_topo_order(g, order, NULL) == XF_OK;
}

uint64_t xf_agent_graph_hash(const xf_graph *g)
{
    uint64_t *vh = xf_malloc(sizeof *vh * ((size_t)g->n_values + 1));
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    uint64_t result = 0;
    if (!vh || !order || !topo(g, order)) goto out; /* 0: could not hash */
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        vh[i] = v->kind == XF_VALUE_CONST
                    ? hash_shape(xf_mix64(0xC0, (uint64_t)(uintptr_t)v->data), v->dtype, &v->shape)
                    : 0x0DEADull;
    }
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        vh[g->inputs[i]] = hash_shape(xf_mix64(0x1A9, (uint64_t)i), v->dtype, &v->shape);
    }
    uint64_t sum = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[order[k]];
        uint64_t h = xf_mix64(0x0D3, (uint64_t)n->op);
        h = hash_params(h, n->op, &n->params);
        h = hash_opaque(h, n->opaque);
        h = xf_mix64(h, (uint64_t)n->n_inputs);
        for (int s = 0; s < n->n_inputs; s++) h = xf_mix64(h, n->inputs[s] < 0 ? 0x0917 : vh[n->inputs[s]]);
        h = xf_mix64(h, (uint64_t)n->n_outputs);
        sum += h;
        for (int o = 0; o < n->n_outputs; o++) {
            const xf_value *v = &g->values[n->outputs[o]];
            vh[n->outputs[o]] = hash_shape(xf_mix64(h, (uint64_t)o), v->dtype, &v->shape);
        }
    }
    uint64_t h = xf_mix64(0x6A4, (uint64_t)g->n_nodes);
    h = xf_mix64(h, sum);
    h = xf_mix64(h, (uint64_t)g->n_inputs);
    h = xf_mix64(h, (uint64_t)g->n_outputs);
    for (int i = 0; i < g->n_outputs; i++) h = xf_mix64(h, vh[g->outputs[i]]);
    result = h ? h : 1;
out:
    xf_free(vh);
    xf_free(order);
    return result;
}
