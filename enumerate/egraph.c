/*
 * egraph.c — a stored graph's structure: rebuilding it from the parent
 * chain, its output values, and the canonical keys that make enumeration
 * visit each DAG once. A node's key depends only on its variant and the keys
 * of its inputs (an input's key is its index), never on append order, so
 * two append orders of one DAG give the same keys; the structural hash of a
 * set of nodes is the hash of their sorted keys.
 */
#include "enumerate_internal.h"

#include <string.h>

void en_egraph_from_store(const xf_enum_config *cfg, const glevel *levels, int level, uint32_t idx,
                       egraph *g)
{
    memset(g, 0, sizeof *g);
    const grec *r = &levels[level].v[idx];
    if (level == 0) {
        if (r->flags & GREC_LEAF) {
            g->n_leaf = r->n_in;
            memcpy(g->leaf, r->in, r->n_in);
        }
        return;
    }
    g->n_nodes = level;
    for (int l = level; l >= 1; l--) {
        r = &levels[l].v[idx];
        enode *n = &g->nodes[l - 1];
        n->var = r->var;
        n->n_in = r->n_in;
        n->n_out = (uint8_t)en_var_outputs(&cfg->ops[r->var]);
        memcpy(n->in, r->in, MAX_NODE_INPUTS);
        idx = r->parent;
    }
}

uint64_t en_ref_key(const uint64_t *node_keys, int ref)
{
    if (REF_IS_INPUT(ref)) return en_fp_mix(0x1A9u, (uint64_t)ref);
    return en_fp_mix(node_keys[REF_NODE_OF(ref)], (uint64_t)REF_OUT_OF(ref) + 0x0C7u);
}

uint64_t en_node_key(uint16_t var, int n_in, const uint8_t *in, const uint64_t *node_keys)
{
    uint64_t h = en_fp_mix(0x0D3u, var);
    for (int i = 0; i < n_in; i++) h = en_fp_mix(h, en_ref_key(node_keys, in[i]));
    return h;
}

void en_egraph_node_keys(const egraph *g, uint64_t *keys)
{
    for (int j = 0; j < g->n_nodes; j++)
        keys[j] = en_node_key(g->nodes[j].var, g->nodes[j].n_in, g->nodes[j].in, keys);
}

uint64_t en_struct_hash(const uint64_t *node_keys, uint32_t mask)
{
    uint64_t k[XF_ENUM_MAX_OPS];
    int n = 0;
    for (int j = 0; j < XF_ENUM_MAX_OPS; j++)
        if (mask & (1u << j)) {
            uint64_t v = node_keys[j];
            int i = n++;
            while (i > 0 && k[i - 1] > v) k[i] = k[i - 1], i--;
            k[i] = v;
        }
    uint64_t h = en_fp_mix(0x57C7u, (uint64_t)n);
    for (int i = 0; i < n; i++) h = en_fp_mix(h, k[i]);
    return h;
}

uint64_t en_leaf_hash(uint32_t in_mask)
{
    return en_fp_mix(0x1EAFu, in_mask);
}

uint64_t en_egraph_struct_hash(const egraph *g)
{
    if (g->n_nodes == 0) {
        uint32_t m = 0;
        for (int i = 0; i < g->n_leaf; i++) m |= 1u << g->leaf[i];
        return en_leaf_hash(m);
    }
    uint64_t keys[XF_ENUM_MAX_OPS];
    en_egraph_node_keys(g, keys);
    return en_struct_hash(keys, (1u << g->n_nodes) - 1);
}

int en_egraph_outputs(const egraph *g, uint8_t *outs)
{
    if (g->n_nodes == 0) {
        memcpy(outs, g->leaf, (size_t)g->n_leaf);
        return g->n_leaf;
    }
    uint8_t used[N_REFS] = {0};
    for (int j = 0; j < g->n_nodes; j++)
        for (int i = 0; i < g->nodes[j].n_in; i++) used[g->nodes[j].in[i]] = 1;
    int n = 0;
    for (int j = 0; j < g->n_nodes; j++) {
        for (int k = 0; k < g->nodes[j].n_out; k++) {
            int r = REF_NODE(j, k);
            if (!used[r]) outs[n++] = (uint8_t)r;
        }
    }
    return n;
}

uint32_t en_egraph_input_mask(const egraph *g)
{
    uint32_t mask = 0;
    for (int j = 0; j < g->n_nodes; j++)
        for (int i = 0; i < g->nodes[j].n_in; i++)
            if (REF_IS_INPUT(g->nodes[j].in[i])) mask |= 1u << g->nodes[j].in[i];
    for (int i = 0; i < g->n_leaf; i++) mask |= 1u << g->leaf[i];
    return mask;
}
