/*
 * graph_edit.c — use counts and compaction with renumbering (declared in
 * ir.h: in-place surgery). Both are single linear passes, so a rewrite step on a
 * large model stays proportional to the graph's size with small constants.
 */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

void xf_edit_use_counts(const xf_graph *g, int *uses)
{
    memset(uses, 0, sizeof(int) * (size_t)g->n_values);
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) uses[n->inputs[k]]++;
    }
    for (int i = 0; i < g->n_outputs; i++) uses[g->outputs[i]]++;
}

static void release_node(const xf_graph *g, xf_node *n)
{
    xf_graph_release(g, n->name);
    xf_graph_release(g, n->inputs);
    xf_graph_release(g, n->outputs);
    xf_opaque_free(n->opaque);
}

static void release_value(const xf_graph *g, xf_value *v)
{
    xf_graph_release(g, v->name);
    if (!v->borrowed) xf_free(v->data);
}

/* Renumbers every reference in g after nodes/values moved (maps give the
 * new id of each old one; -1 for deleted ones nothing refers to). */
static void renumber(xf_graph *g, const int *vmap, const int *nmap)
{
    for (int i = 0; i < g->n_nodes; i++) {
        xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) n->inputs[k] = vmap[n->inputs[k]];
        for (int k = 0; k < n->n_outputs; k++) n->outputs[k] = vmap[n->outputs[k]];
    }
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].producer >= 0) g->values[v].producer = nmap[g->values[v].producer];
    for (int i = 0; i < g->n_inputs; i++) g->inputs[i] = vmap[g->inputs[i]];
    for (int i = 0; i < g->n_outputs; i++) g->outputs[i] = vmap[g->outputs[i]];
}

static xf_status alloc_maps(const xf_graph *g, int **vmap, int **nmap, xf_error *err)
{
    *vmap = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    *nmap = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (*vmap && *nmap) return XF_OK;
    xf_free(*vmap);
    xf_free(*nmap);
    return XF_FAIL(err, XF_ERR_NOMEM, "out of memory rewriting graph '%s'", g->name ? g->name : "");
}

xf_status xf_edit_compact(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                          xf_error *err)
{
    int *vmap, *nmap;
    xf_status st = alloc_maps(g, &vmap, &nmap, err);
    if (st != XF_OK) return st;
    int nv = 0;
    for (int v = 0; v < g->n_values; v++) {
        if (value_dead && value_dead[v]) {
            release_value(g, &g->values[v]);
            vmap[v] = -1;
            continue;
        }
        vmap[v] = nv;
        if (nv != v) g->values[nv] = g->values[v];
        nv++;
    }
    g->n_values = nv;
    int nn = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (node_dead && node_dead[i]) {
            release_node(g, &g->nodes[i]);
            nmap[i] = -1;
            continue;
        }
        nmap[i] = nn;
        if (nn != i) g->nodes[nn] = g->nodes[i];
        nn++;
    }
    g->n_nodes = nn;
    renumber(g, vmap, nmap);
    xf_free(vmap);
    xf_free(nmap);
    return XF_OK;
}

/* Fills the holes of array `base` (n elements of `size` bytes, dead[i]
 * marks holes) from the tail; map[i] receives each element's new index.
 * Returns the new length. Holes must already be released. */
static int fill_holes(char *base, size_t size, int n, const uint8_t *dead, int *map)
{
    for (int i = 0; i < n; i++) map[i] = dead && dead[i] ? -1 : i;
    if (!dead) return n;
    int lo = 0, hi = n - 1;
    for (;;) {
        while (lo <= hi && !dead[lo]) lo++;
        while (hi >= lo && dead[hi]) hi--;
        if (lo >= hi) break;
        memcpy(base + (size_t)lo * size, base + (size_t)hi * size, size);
        map[hi] = lo;
        lo++;
        hi--;
    }
    return lo; /* the loop ends with lo > hi: [0, lo) is live */
}

xf_status xf_edit_compact_fill(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                               int *node_map, xf_error *err)
{
    int *vmap, *nmap;
    xf_status st = alloc_maps(g, &vmap, &nmap, err);
    if (st != XF_OK) return st;
    for (int v = 0; v < g->n_values; v++)
        if (value_dead && value_dead[v]) release_value(g, &g->values[v]);
    for (int i = 0; i < g->n_nodes; i++)
        if (node_dead && node_dead[i]) release_node(g, &g->nodes[i]);
    g->n_values = fill_holes((char *)g->values, sizeof(xf_value), g->n_values, value_dead, vmap);
    int n_before = g->n_nodes;
    g->n_nodes = fill_holes((char *)g->nodes, sizeof(xf_node), g->n_nodes, node_dead, nmap);
    if (node_map) memcpy(node_map, nmap, sizeof(int) * (size_t)n_before);
    renumber(g, vmap, nmap);
    xf_free(vmap);
    xf_free(nmap);
    return XF_OK;
}
