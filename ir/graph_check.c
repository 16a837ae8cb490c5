/*
 * graph_check.c — structural checks on a graph: topological order (with a
 * cycle report naming a node on the cycle), full validation (arity, value
 * references, single producer, shape re-inference), and deep copy.
 */
#include "op_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether every node input is a graph input, a constant or the output of
 * an earlier node. */
static int in_node_order(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v >= 0 && (v >= g->n_values ||
                           (g->values[v].kind == XF_VALUE_NODE && g->values[v].producer >= i)))
                return 0;
        }
    }
    return 1;
}

xf_status xf_graph_topo_order(const xf_graph *g, int *order, xf_error *err)
{
    /* Kahn's algorithm over nodes; a min-index ready list keeps it stable
     * and returns node order itself when it is topological, which is
     * checked first in O(edges) (graphs built with the builders are). */
    if (in_node_order(g)) {
        for (int i = 0; i < g->n_nodes; i++) order[i] = i;
        return XF_OK;
    }
    xf_status st = XF_OK;
    int *indeg = xf_calloc((size_t)g->n_nodes + 1, sizeof(int));
    int *users_start = xf_calloc((size_t)g->n_nodes + 2, sizeof(int));
    int *ready = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    int *users = NULL;
    size_t n_edges = 0;
    if (!indeg || !users_start || !ready) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory ordering graph");
        goto out;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0) continue;
            if (v >= g->n_values) {
                char d[256];
                st = XF_FAIL(err, XF_ERR_GRAPH, "%s: input %d refers to a value that does not exist",
                             xf_node_describe(g, i, d, sizeof d), k);
                goto out;
            }
            int p = g->values[v].producer;
            if (g->values[v].kind == XF_VALUE_NODE && p >= 0) {
                indeg[i]++;
                users_start[p + 1]++;
                n_edges++;
            }
        }
    }
    for (int i = 0; i < g->n_nodes; i++) users_start[i + 1] += users_start[i];
    users = xf_malloc(sizeof(int) * (n_edges + 1));
    int *fill = xf_calloc((size_t)g->n_nodes + 1, sizeof(int));
    if (!users || !fill) {
        xf_free(fill);
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory ordering graph");
        goto out;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || g->values[v].kind != XF_VALUE_NODE || g->values[v].producer < 0) continue;
            int p = g->values[v].producer;
            users[users_start[p] + fill[p]++] = i;
        }
    }
    xf_free(fill);
    int n_done = xf_topo_kahn(g->n_nodes, users_start, users, indeg, order, ready);
    if (n_done != g->n_nodes) {
        int culprit = 0;
        for (int i = 0; i < g->n_nodes; i++)
            if (indeg[i] > 0) {
                culprit = i;
                break;
            }
        char d[256];
        st = XF_FAIL(err, XF_ERR_GRAPH, "graph has a cycle through %s",
                     xf_node_describe(g, culprit, d, sizeof d));
    }
out:
    xf_free(indeg);
    xf_free(users_start);
    xf_free(ready);
    xf_free(users);
    return st;
}

/* The node's description is formatted only for a message: validation runs
 * on every graph decoded or stored, millions of times in an xfergen run. */
static xf_status check_node(const xf_graph *g, int i, xf_error *err)
{
    const xf_node *n = &g->nodes[i];
    char d[256];
    for (int k = 0; k < n->n_outputs; k++) {
        int v = n->outputs[k];
        if (v < 0 || v >= g->n_values || g->values[v].producer != i ||
            g->values[v].producer_output != k)
            return XF_FAIL(err, XF_ERR_GRAPH, "%s: output %d is not recorded as produced by it",
                           xf_node_describe(g, i, d, sizeof d), k);
    }
    if (n->op == XF_OP_OPAQUE) return XF_OK;
    xf_dtype dt[2 * XF_MAX_SPLIT + 8];
    xf_shape sh[2 * XF_MAX_SPLIT + 8];
    if (n->n_inputs + n->n_outputs > (int)(sizeof dt / sizeof dt[0]))
        return XF_FAIL(err, XF_ERR_GRAPH, "%s: too many inputs and outputs",
                       xf_node_describe(g, i, d, sizeof d));
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        dt[k] = v >= 0 ? g->values[v].dtype : XF_DTYPE_INVALID;
        if (v >= 0) sh[k] = g->values[v].shape;
        else memset(&sh[k], 0, sizeof sh[k]);
    }
    xf_status st = xf_op_infer(n->op, &n->params, n->n_inputs, dt, sh, n->n_outputs,
                               dt + n->n_inputs, sh + n->n_inputs, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "%s", xf_node_describe(g, i, d, sizeof d));
        return st;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        const xf_value *v = &g->values[n->outputs[k]];
        if (!xf_shape_equal(&v->shape, &sh[n->n_inputs + k]) || v->dtype != dt[n->n_inputs + k]) {
            char a[96], b[96];
            return XF_FAIL(err, XF_ERR_SHAPE, "%s: output %d recorded as %s %s but infers %s %s",
                           xf_node_describe(g, i, d, sizeof d), k, xf_dtype_name(v->dtype),
                           xf_shape_str(&v->shape, a, sizeof a),
                           xf_dtype_name(dt[n->n_inputs + k]),
                           xf_shape_str(&sh[n->n_inputs + k], b, sizeof b));
        }
    }
    return XF_OK;
}

xf_status xf_graph_validate(const xf_graph *g, xf_error *err)
{
    for (int v = 0; v < g->n_values; v++) {
        const xf_value *val = &g->values[v];
        if (val->kind == XF_VALUE_CONST && !val->data)
            return XF_FAIL(err, XF_ERR_GRAPH, "constant '%s' has no data",
                           val->name ? val->name : "?");
        if (val->kind == XF_VALUE_NODE && (val->producer < 0 || val->producer >= g->n_nodes))
            return XF_FAIL(err, XF_ERR_GRAPH, "value '%s' has no producing node",
                           val->name ? val->name : "?");
        if (val->shape.rank < 0 || val->shape.rank > XF_MAX_DIMS)
            return XF_FAIL(err, XF_ERR_GRAPH, "value '%s' has rank %d", val->name ? val->name : "?",
                           val->shape.rank);
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] < 0 || g->inputs[i] >= g->n_values ||
            g->values[g->inputs[i]].kind != XF_VALUE_INPUT)
            return XF_FAIL(err, XF_ERR_GRAPH, "graph input %d is not an input value", i);
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] < 0 || g->outputs[i] >= g->n_values)
            return XF_FAIL(err, XF_ERR_GRAPH, "graph output %d refers to a missing value", i);
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory validating graph");
    xf_status st = xf_graph_topo_order(g, order, err);
    xf_free(order);
    if (st != XF_OK) return st;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        const xf_op_info *info = xf_op_get(n->op);
        if (!info) return XF_FAIL(err, XF_ERR_GRAPH, "node %d has an unknown operator", i);
        st = check_node(g, i, err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

static char *dup_or_null(const char *s, int *ok)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = xf_malloc(n);
    if (!d) *ok = 0;
    else memcpy(d, s, n);
    return d;
}

static xf_status clone_graph(const xf_graph *src, xf_graph *dst, int share_data, xf_error *err);

/* An If's branches and captured names (share_data: the branches' weights
 * are borrowed like the outer graph's). */
static void clone_branches(const xf_opaque *o, xf_opaque *c, int share_data, int *ok)
{
    if (o->n_branches) {
        c->branches = xf_calloc((size_t)o->n_branches, sizeof *c->branches);
        if (!c->branches) {
            *ok = 0;
            return;
        }
        for (; c->n_branches < o->n_branches; c->n_branches++)
            if (clone_graph(&o->branches[c->n_branches], &c->branches[c->n_branches], share_data,
                            NULL) != XF_OK) {
                *ok = 0;
                return;
            }
    }
    if (o->n_captured) {
        c->captured = xf_calloc((size_t)o->n_captured, sizeof *c->captured);
        if (!c->captured) {
            *ok = 0;
            return;
        }
        for (; c->n_captured < o->n_captured; c->n_captured++)
            c->captured[c->n_captured] = dup_or_null(o->captured[c->n_captured], ok);
    }
}

static xf_opaque *clone_opaque(const xf_opaque *o, int share_data, int *ok)
{
    xf_opaque *c = xf_calloc(1, sizeof *c);
    if (!c) {
        *ok = 0;
        return NULL;
    }
    c->op_type = dup_or_null(o->op_type, ok);
    c->domain = dup_or_null(o->domain, ok);
    c->domain_version = o->domain_version;
    c->kernel = o->kernel;
    c->lstm = o->lstm;
    c->calc = o->calc;
    c->no_kernel = o->no_kernel ? dup_or_null(o->no_kernel, ok) : NULL;
    clone_branches(o, c, share_data, ok);
    c->n_attrs = o->n_attrs;
    c->attr_bytes = xf_calloc((size_t)o->n_attrs + 1, sizeof *c->attr_bytes);
    c->attr_len = xf_calloc((size_t)o->n_attrs + 1, sizeof *c->attr_len);
    if (!c->attr_bytes || !c->attr_len) {
        *ok = 0;
        c->n_attrs = 0;
        return c;
    }
    for (int i = 0; i < o->n_attrs; i++) {
        c->attr_len[i] = o->attr_len[i];
        c->attr_bytes[i] = xf_malloc(o->attr_len[i] ? o->attr_len[i] : 1);
        if (!c->attr_bytes[i]) *ok = 0;
        else if (o->attr_len[i]) memcpy(c->attr_bytes[i], o->attr_bytes[i], o->attr_len[i]);
    }
    return c;
}

/* Spare capacity of a clone's node and value arrays: rule application adds
 * a handful of nodes to a clone, which then needs no reallocation. */
#define CLONE_SPARE 16

/* Bytes of src's value and node names and node input/output arrays, each
 * rounded up to int alignment: the size of the clone's block. */
static size_t block_size(const xf_graph *src)
{
    size_t a = sizeof(int), n = 0;
    for (int i = 0; i < src->n_values; i++)
        if (src->values[i].name) n += (strlen(src->values[i].name) + a) / a * a;
    for (int i = 0; i < src->n_nodes; i++) {
        const xf_node *s = &src->nodes[i];
        if (s->name) n += (strlen(s->name) + a) / a * a;
        n += sizeof(int) * ((size_t)s->n_inputs + 1 + (size_t)s->n_outputs + 1);
    }
    return n;
}

/* Carves n bytes (rounded up to int alignment) off the block at *at. */
static void *carve(char **at, size_t n)
{
    void *p = *at;
    *at += (n + sizeof(int) - 1) / sizeof(int) * sizeof(int);
    return p;
}

static char *carve_str(char **at, const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = carve(at, n);
    memcpy(d, s, n);
    return d;
}

static int *carve_ints(char **at, const int *src, int n)
{
    int *d = carve(at, sizeof(int) * ((size_t)n + 1));
    if (n) memcpy(d, src, sizeof(int) * (size_t)n);
    return d;
}

/* The arrays are copied whole (one memcpy each, no zeroing); names and
 * node input/output arrays are carved from one block (dst->block), so a
 * clone costs a handful of allocations whatever the graph's size; opaque
 * attributes and unshared constant data are copied one by one. n_values /
 * n_nodes count the elements fixed so far, so xf_graph_free never frees
 * src's pointers. */
static xf_status clone_graph(const xf_graph *src, xf_graph *dst, int share_data, xf_error *err)
{
    xf_graph_init(dst);
    int ok = 1;
    dst->opset = src->opset;
    dst->name = dup_or_null(src->name, &ok);
    size_t bytes = block_size(src);
    dst->block = xf_malloc(bytes ? bytes : 1);
    dst->block_bytes = bytes;
    char *at = dst->block;
    dst->values = xf_malloc(sizeof(xf_value) * ((size_t)src->n_values + CLONE_SPARE));
    dst->nodes = xf_malloc(sizeof(xf_node) * ((size_t)src->n_nodes + CLONE_SPARE));
    dst->inputs = xf_malloc(sizeof(int) * ((size_t)src->n_inputs + 1));
    dst->outputs = xf_malloc(sizeof(int) * ((size_t)src->n_outputs + 1));
    if (!dst->block || !dst->values || !dst->nodes || !dst->inputs || !dst->outputs) goto nomem;
    dst->cap_values = src->n_values + CLONE_SPARE;
    dst->cap_nodes = src->n_nodes + CLONE_SPARE;
    dst->cap_inputs = src->n_inputs + 1;
    dst->cap_outputs = src->n_outputs + 1;
    if (src->n_values) memcpy(dst->values, src->values, sizeof(xf_value) * (size_t)src->n_values);
    for (int i = 0; i < src->n_values; i++) {
        const xf_value *s = &src->values[i];
        xf_value *d = &dst->values[i];
        d->name = carve_str(&at, s->name);
        d->data = NULL;
        d->borrowed = 0;
        dst->n_values = i + 1;
        if (s->data && share_data) {
            d->data = s->data;
            d->borrowed = 1;
        } else if (s->data) {
            size_t nb = (size_t)xf_shape_numel(&s->shape) * xf_dtype_size(s->dtype);
            d->data = xf_malloc(nb ? nb : 1);
            if (!d->data) goto nomem;
            if (nb) memcpy(d->data, s->data, nb);
        }
    }
    if (src->n_nodes) memcpy(dst->nodes, src->nodes, sizeof(xf_node) * (size_t)src->n_nodes);
    for (int i = 0; i < src->n_nodes; i++) {
        const xf_node *s = &src->nodes[i];
        xf_node *d = &dst->nodes[i];
        d->name = carve_str(&at, s->name);
        d->inputs = carve_ints(&at, s->inputs, s->n_inputs);
        d->outputs = carve_ints(&at, s->outputs, s->n_outputs);
        d->opaque = s->opaque ? clone_opaque(s->opaque, share_data, &ok) : NULL;
        dst->n_nodes = i + 1;
    }
    dst->n_inputs = src->n_inputs;
    if (src->n_inputs) memcpy(dst->inputs, src->inputs, sizeof(int) * (size_t)src->n_inputs);
    dst->n_outputs = src->n_outputs;
    if (src->n_outputs) memcpy(dst->outputs, src->outputs, sizeof(int) * (size_t)src->n_outputs);
    if (!ok) goto nomem;
    return XF_OK;
nomem:
    xf_graph_free(dst);
    return XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying graph");
}

xf_status xf_graph_clone(const xf_graph *src, xf_graph *dst, xf_error *err)
{
    return clone_graph(src, dst, 0, err);
}

xf_status xf_graph_clone_shared(const xf_graph *src, xf_graph *dst, xf_error *err)
{
    return clone_graph(src, dst, 1, err);
}
