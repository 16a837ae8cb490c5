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

void en_egraph_node_keys(const egraph *g, uint64_t *keys)
{
    for (int j = 0; j < g->n_nodes; j++)
        keys[j] = en_node_key(g->nodes[j].var, g->nodes[j].n_in, g->nodes[j].in, keys);
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
