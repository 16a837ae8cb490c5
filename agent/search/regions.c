/*
 * regions.c — the fused regions of a working graph (search.h): the
 * partition, the values that leave a region, and a region as a graph of its
 * own for the target runtime to time.
 *
 * The partition follows data, not node order, so the regions of a graph do
 * not change when a rewrite elsewhere renumbers its nodes: each node joins
 * the region of the producer of its first data input (not an initializer,
 * not weight-only), unless it is an anchor or that region is full.
 */
#include "agent/search/search.h"

#include <stdio.h>
#include <string.h>

/* Operators ONNX Runtime runs as a kernel of their own, with element-wise
 * work after them fused in (bias, activation, residual) but none before. */
static int is_anchor(xf_op op)
{
    switch (op) {
    case XF_OP_MATMUL:
    case XF_OP_GEMM:
    case XF_OP_CONV:
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL:
    case XF_OP_GLOBAL_AVGPOOL:
    case XF_OP_GATHER:
        return 1;
    default:
        return 0;
    }
}

/* 1 when value v is data at run time: not an initializer, not weight-only. */
static int is_data(const xf_graph *g, const xf_graph_index *ix, int v)
{
    return v >= 0 && g->values[v].kind != XF_VALUE_CONST && !xf_graph_index_weight_only(ix, v);
}

xf_status xf_regions_partition(const xf_graph *g, const xf_graph_index *ix, int max_nodes,
                               int *region_of, int *order, int *n_regions, xf_error *err)
{
    *n_regions = 0;
    if (max_nodes < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "fused regions: max_nodes %d must be >= 1",
                       max_nodes);
    xf_status st = xf_graph_topo_order(g, order, err);
    if (st) return st;
    int *size = xf_calloc((size_t)g->n_nodes + 1, sizeof *size);
    if (!size) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory partitioning a graph");
    int n = 0;
    for (int k = 0; k < g->n_nodes; k++) {
        int i = order[k];
        const xf_node *nd = &g->nodes[i];
        if (nd->op == XF_OP_OPAQUE) {
            region_of[i] = XF_REGION_OPAQUE;
            continue;
        }
        if (nd->n_outputs > 0 && xf_graph_index_weight_only(ix, nd->outputs[0])) {
            region_of[i] = XF_REGION_FOLDED;
            continue;
        }
        int r = -1;
        if (!is_anchor(nd->op)) {
            for (int j = 0; j < nd->n_inputs; j++) {
                int v = nd->inputs[j];
                if (!is_data(g, ix, v)) continue;
                int p = g->values[v].producer;
                if (p >= 0 && region_of[p] >= 0 && size[region_of[p]] < max_nodes)
                    r = region_of[p];
                break; /* the first data input decides */
            }
        }
        if (r < 0) r = n++;
        region_of[i] = r;
        size[r]++;
    }
    xf_free(size);
    *n_regions = n;
    return XF_OK;
}

void xf_regions_escapes(const xf_graph *g, const int *region_of, uint8_t *escapes)
{
    memset(escapes, 0, (size_t)g->n_values);
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            if (v < 0) continue;
            int p = g->values[v].producer;
            if (p >= 0 && region_of[p] >= 0 && region_of[p] != region_of[i]) escapes[v] = 1;
        }
    }
    for (int o = 0; o < g->n_outputs; o++) {
        int v = g->outputs[o];
        int p = g->values[v].producer;
        if (p >= 0 && region_of[p] >= 0) escapes[v] = 1;
    }
}

typedef struct extractor {
    const xf_graph *g;
    const xf_graph_index *ix;
    xf_graph *out;
    int *map; /* g value -> out value, -1 */
    int n_in, n_const;
} extractor;

static xf_status add_node(extractor *x, int node, xf_error *err);

/* out's value for g's value v, made on first use. */
static xf_status map_value(extractor *x, int v, xf_error *err)
{
    if (x->map[v] >= 0) return XF_OK;
    const xf_value *val = &x->g->values[v];
    char name[32];
    int id;
    if (val->kind == XF_VALUE_CONST) {
        snprintf(name, sizeof name, "w%d", x->n_const++);
        id = xf_graph_add_const_owned(x->out, name, val->dtype, &val->shape, NULL, err);
        if (id >= 0) {
            x->out->values[id].data = val->data;
            x->out->values[id].borrowed = 1;
        }
    } else if (val->kind == XF_VALUE_NODE && xf_graph_index_weight_only(x->ix, v)) {
        xf_status st = add_node(x, val->producer, err);
        if (st) return st;
        return x->map[v] >= 0 ? XF_OK
                              : XF_FAIL(err, XF_ERR_INTERNAL, "fused regions: value %d unmapped", v);
    } else {
        snprintf(name, sizeof name, "x%d", x->n_in++);
        id = xf_graph_add_input(x->out, name, val->dtype, &val->shape, err);
    }
    if (id < 0) return err ? err->code : XF_ERR_NOMEM;
    x->map[v] = id;
    return XF_OK;
}

/* Copies node `node` of g into out, its inputs mapped first. */
static xf_status add_node(extractor *x, int node, xf_error *err)
{
    const xf_node *nd = &x->g->nodes[node];
    int *in = xf_malloc(((size_t)nd->n_inputs + 1) * sizeof *in);
    if (!in) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory extracting a fused region");
    xf_status st = XF_OK;
    for (int j = 0; j < nd->n_inputs && !st; j++) {
        int v = nd->inputs[j];
        in[j] = -1;
        if (v < 0) continue;
        st = map_value(x, v, err);
        in[j] = x->map[v];
    }
    char name[32];
    snprintf(name, sizeof name, "n%d", x->out->n_nodes);
    int id = st ? -1
                : xf_graph_add_node(x->out, nd->op, &nd->params, in, nd->n_inputs,
                                    nd->n_outputs, name, err);
    xf_free(in);
    if (st) return st;
    if (id < 0) return err ? err->code : XF_ERR_NOMEM;
    for (int o = 0; o < nd->n_outputs; o++) x->map[nd->outputs[o]] = x->out->nodes[id].outputs[o];
    return XF_OK;
}

xf_status xf_regions_extract(const xf_graph *g, const xf_graph_index *ix, const int *region_of,
                             const int *order, const uint8_t *escapes, int r, xf_graph *out,
                             xf_error *err)
{
    extractor x = {g, ix, out, NULL, 0, 0};
    x.map = xf_malloc(((size_t)g->n_values + 1) * sizeof *x.map);
    if (!x.map) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory extracting a fused region");
    for (int v = 0; v < g->n_values; v++) x.map[v] = -1;
    xf_status st = XF_OK;
    int last = -1;
    for (int k = 0; k < g->n_nodes && !st; k++) {
        int i = order[k];
        if (region_of[i] != r) continue;
        st = add_node(&x, i, err);
        last = i;
    }
    int marked = 0;
    for (int k = 0; k < g->n_nodes && !st; k++) {
        int i = order[k];
        if (region_of[i] != r) continue;
        for (int o = 0; o < g->nodes[i].n_outputs && !st; o++) {
            int v = g->nodes[i].outputs[o];
            if (!escapes[v]) continue;
            st = xf_graph_mark_output(out, x.map[v], err);
            marked++;
        }
    }
    if (!st && !marked && last >= 0)
        st = xf_graph_mark_output(out, x.map[g->nodes[last].outputs[0]], err);
    if (!st && last < 0) st = XF_FAIL(err, XF_ERR_INVALID, "fused regions: region %d is empty", r);
    xf_free(x.map);
    if (st) {
        xf_graph_free(out);
        xf_graph_init(out);
    }
    return st;
}
