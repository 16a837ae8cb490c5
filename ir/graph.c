/*
 * graph.c — the graph DAG: values (inputs, constants, node outputs) and
 * nodes, with builders that run shape inference as nodes are added, so a
 * graph under construction is always shape-consistent and every value's
 * shape passes xf_shape_check (no element or byte count overflows).
 */
#include "op_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xf_params xf_params_default(void)
{
    xf_params p;
    memset(&p, 0, sizeof p);
    return p;
}

void xf_params_set_shape(xf_params *p, const xf_shape *s)
{
    memset(p->shape, 0, sizeof p->shape);
    p->n_shape = s->rank;
    for (int i = 0; i < s->rank; i++) p->shape[i] = s->dims[i];
}

int xf_params_same_shape(const xf_params *a, const xf_params *b)
{
    return a->n_shape == b->n_shape &&
           memcmp(a->shape, b->shape, sizeof a->shape[0] * (size_t)a->n_shape) == 0;
}

void xf_graph_init(xf_graph *g)
{
    memset(g, 0, sizeof *g);
}

void xf_opaque_free(xf_opaque *o)
{
    if (!o) return;
    xf_free(o->op_type);
    xf_free(o->domain);
    for (int i = 0; i < o->n_attrs; i++) xf_free(o->attr_bytes[i]);
    xf_free(o->attr_bytes);
    xf_free(o->attr_len);
    for (int i = 0; i < o->n_branches; i++) xf_graph_free(&o->branches[i]);
    xf_free(o->branches);
    for (int i = 0; i < o->n_captured; i++) xf_free(o->captured[i]);
    xf_free(o->captured);
    xf_free(o->no_kernel);
    xf_free(o);
}

int xf_graph_is_output(const xf_graph *g, int v)
{
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) return 1;
    return 0;
}

int xf_graph_in_block(const xf_graph *g, const void *p)
{
    const char *c = p;
    return g->block && c >= g->block && c < g->block + g->block_bytes;
}

void xf_graph_release(const xf_graph *g, void *p)
{
    if (!xf_graph_in_block(g, p)) xf_free(p);
}

static void node_free(const xf_graph *g, xf_node *n)
{
    xf_graph_release(g, n->name);
    xf_graph_release(g, n->inputs);
    xf_graph_release(g, n->outputs);
    xf_opaque_free(n->opaque);
}

void xf_graph_free(xf_graph *g)
{
    if (!g) return;
    for (int i = 0; i < g->n_values; i++) {
        xf_graph_release(g, g->values[i].name);
        if (!g->values[i].borrowed) xf_free(g->values[i].data);
    }
    for (int i = 0; i < g->n_nodes; i++) node_free(g, &g->nodes[i]);
    xf_free(g->values);
    xf_free(g->nodes);
    xf_free(g->inputs);
    xf_free(g->outputs);
    xf_free(g->name);
    xf_free(g->block);
    xf_graph_init(g);
}

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = xf_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int new_value(xf_graph *g, const char *name, xf_value_kind kind, xf_dtype dtype,
                     const xf_shape *shape, xf_error *err)
{
    if (!xf_grow((void **)&g->values, &g->cap_values, g->n_values + 1, sizeof(xf_value))) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding a value");
        return -1;
    }
    xf_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = dup_str(name);
    if (name && !v->name) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding a value");
        return -1;
    }
    v->kind = kind;
    v->dtype = dtype;
    v->shape = *shape;
    v->producer = -1;
    return g->n_values++;
}

static int push_id(int **arr, int *n, int *cap, int id)
{
    if (!xf_grow((void **)arr, cap, *n + 1, sizeof(int))) return 0;
    (*arr)[(*n)++] = id;
    return 1;
}

/* Every value of a graph has a shape that xf_shape_check accepts. */
static int value_shape_ok(const char *what, const char *name, const xf_shape *shape,
                          xf_dtype dtype, size_t *bytes, xf_error *err)
{
    if (xf_shape_check(shape, dtype, NULL, bytes, err) == XF_OK) return 1;
    xf_error_prefix(err, "%s '%s'", what, name ? name : "");
    return 0;
}

int xf_graph_add_input(xf_graph *g, const char *name, xf_dtype dtype, const xf_shape *shape,
                       xf_error *err)
{
    if (!value_shape_ok("input", name, shape, dtype, NULL, err)) return -1;
    int id = new_value(g, name, XF_VALUE_INPUT, dtype, shape, err);
    if (id < 0) return -1;
    if (!push_id(&g->inputs, &g->n_inputs, &g->cap_inputs, id)) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding an input");
        return -1;
    }
    return id;
}

int xf_graph_add_const_owned(xf_graph *g, const char *name, xf_dtype dtype,
                             const xf_shape *shape, void *data, xf_error *err)
{
    if (!value_shape_ok("constant", name, shape, dtype, NULL, err)) {
        xf_free(data);
        return -1;
    }
    int id = new_value(g, name, XF_VALUE_CONST, dtype, shape, err);
    if (id < 0) {
        xf_free(data);
        return -1;
    }
    g->values[id].data = data;
    return id;
}

int xf_graph_add_const(xf_graph *g, const char *name, xf_dtype dtype, const xf_shape *shape,
                       const void *data, xf_error *err)
{
    size_t bytes;
    if (!value_shape_ok("constant", name, shape, dtype, &bytes, err)) return -1;
    void *copy = xf_malloc(bytes ? bytes : 1);
    if (!copy) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying constant '%s'", name ? name : "");
        return -1;
    }
    if (bytes) memcpy(copy, data, bytes);
    return xf_graph_add_const_owned(g, name, dtype, shape, copy, err);
}

xf_status xf_op_infer(xf_op op, const xf_params *params, int n_inputs, const xf_dtype *in_dtypes,
                      const xf_shape *in_shapes, int n_outputs, xf_dtype *out_dtypes,
                      xf_shape *out_shapes, xf_error *err)
{
    const xf_op_def *d = ir_op_def_get(op);
    if (!d || !d->infer)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "operator %d has no shape inference", (int)op);
    if (n_inputs < d->info.min_inputs || n_inputs > d->info.max_inputs)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s takes %d..%d inputs, got %d", d->info.name,
                       d->info.min_inputs, d->info.max_inputs, n_inputs);
    if (n_outputs < d->info.min_outputs ||
        (d->info.max_outputs >= 0 && n_outputs > d->info.max_outputs))
        return XF_FAIL(err, XF_ERR_SHAPE, "%s cannot have %d outputs", d->info.name, n_outputs);
    for (int i = 0; i < d->info.min_inputs && i < n_inputs; i++)
        if (in_dtypes[i] == XF_DTYPE_INVALID)
            return XF_FAIL(err, XF_ERR_SHAPE, "%s: required input %d is missing", d->info.name, i);
    for (int i = 0; i < n_outputs; i++) {
        out_dtypes[i] = XF_DTYPE_INVALID;
        memset(&out_shapes[i], 0, sizeof out_shapes[i]);
    }
    xf_status st = d->infer(params, n_inputs, in_dtypes, in_shapes, n_outputs, out_dtypes,
                            out_shapes, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < n_outputs; i++) {
        for (int k = 0; k < out_shapes[i].rank; k++)
            if (out_shapes[i].dims[k] < 0)
                return XF_FAIL(err, XF_ERR_SHAPE, "%s: output %d would have a negative dimension",
                               d->info.name, i);
        if (xf_shape_check(&out_shapes[i], out_dtypes[i], NULL, NULL, err) != XF_OK) {
            xf_error_prefix(err, "%s: output %d", d->info.name, i);
            return err->code;
        }
    }
    return XF_OK;
}

xf_status xf_op_run(xf_op op, const xf_params *params, int n_inputs, const xf_tensor *const *in,
                    int n_outputs, xf_tensor *out, xf_error *err)
{
    const xf_op_def *d = ir_op_def_get(op);
    if (!d || !d->run)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "operator %s has no kernel",
                       d ? d->info.name : "?");
    /* Outputs without elements leave nothing to compute, and a kernel's
     * scratch may be sized by one of their other dims (a [0,1,1,2^32] pool
     * output has 2^32 columns): such a node is not run. */
    int empty = n_outputs > 0;
    for (int i = 0; i < n_outputs && empty; i++) {
        int zero = 0;
        for (int k = 0; k < out[i].shape.rank; k++) zero |= out[i].shape.dims[k] == 0;
        empty = zero;
    }
    if (empty) return XF_OK;
    return d->run(params, n_inputs, in, n_outputs, out, err);
}

/* Collect dtypes/shapes of a node's inputs; -1 ids give XF_DTYPE_INVALID. */
static xf_status gather_input_info(const xf_graph *g, const int *inputs, int n_inputs,
                                   xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    for (int i = 0; i < n_inputs; i++) {
        memset(&sh[i], 0, sizeof sh[i]);
        dt[i] = XF_DTYPE_INVALID;
        if (inputs[i] < 0) continue;
        if (inputs[i] >= g->n_values)
            return XF_FAIL(err, XF_ERR_GRAPH, "input %d refers to value %d which does not exist", i,
                           inputs[i]);
        dt[i] = g->values[inputs[i]].dtype;
        sh[i] = g->values[inputs[i]].shape;
    }
    return XF_OK;
}

static int append_node(xf_graph *g, xf_op op, const xf_params *params, const int *inputs,
                       int n_inputs, const xf_dtype *out_dt, const xf_shape *out_sh,
                       int n_outputs, const char *name, xf_opaque *opaque, xf_error *err)
{
    if (!xf_grow((void **)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof(xf_node))) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding a node");
        return -1;
    }
    int idx = g->n_nodes;
    xf_node *n = &g->nodes[idx];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->params = params ? *params : xf_params_default();
    n->name = dup_str(name);
    n->inputs = xf_malloc(sizeof(int) * (size_t)(n_inputs ? n_inputs : 1));
    n->outputs = xf_malloc(sizeof(int) * (size_t)(n_outputs ? n_outputs : 1));
    if (!n->inputs || !n->outputs || (name && !n->name)) {
        node_free(g, n);
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding a node");
        return -1;
    }
    n->n_inputs = n_inputs;
    if (n_inputs) memcpy(n->inputs, inputs, sizeof(int) * (size_t)n_inputs);
    g->n_nodes++;
    for (int i = 0; i < n_outputs; i++) {
        char vname[512];
        const char *vn = NULL;
        if (name) {
            snprintf(vname, sizeof vname, n_outputs == 1 ? "%s" : "%s:%d", name, i);
            vn = vname;
        }
        int v = new_value(g, vn, XF_VALUE_NODE, out_dt[i], &out_sh[i], err);
        if (v < 0) return -1; /* node stays with fewer outputs; graph freed by caller */
        g->values[v].producer = idx;
        g->values[v].producer_output = i;
        g->nodes[idx].outputs[i] = v;
        g->nodes[idx].n_outputs = i + 1;
    }
    g->nodes[idx].opaque = opaque;
    return idx;
}

int xf_graph_add_node(xf_graph *g, xf_op op, const xf_params *params, const int *inputs,
                      int n_inputs, int n_outputs, const char *name, xf_error *err)
{
    xf_params p = params ? *params : xf_params_default();
    if (op == XF_OP_OPAQUE || ir_op_def_get(op) == NULL) {
        XF_FAIL(err, XF_ERR_INVALID, "xf_graph_add_node: use xf_graph_add_opaque for opaque ops");
        return -1;
    }
    if (n_outputs <= 0) n_outputs = xf_op_default_outputs(op, &p);
    if (n_inputs < 0 || n_inputs > 4096 || n_outputs > 4096) {
        XF_FAIL(err, XF_ERR_INVALID, "node '%s': unreasonable arity", name ? name : "");
        return -1;
    }
    xf_dtype *dt = xf_calloc((size_t)(n_inputs + n_outputs + 1), sizeof *dt);
    xf_shape *sh = xf_calloc((size_t)(n_inputs + n_outputs + 1), sizeof *sh);
    int idx = -1;
    if (!dt || !sh) {
        XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding node");
        goto out;
    }
    if (gather_input_info(g, inputs, n_inputs, dt, sh, err) != XF_OK) goto out;
    if (xf_op_infer(op, &p, n_inputs, dt, sh, n_outputs, dt + n_inputs, sh + n_inputs, err) !=
        XF_OK)
        goto out;
    xf_params_canonical(op, &p); /* after inference: invalid fields are reported, not dropped */
    idx = append_node(g, op, &p, inputs, n_inputs, dt + n_inputs, sh + n_inputs, n_outputs, name,
                      NULL, err);
out:
    xf_free(dt);
    xf_free(sh);
    return idx;
}

int xf_graph_op(xf_graph *g, xf_op op, const xf_params *params, const int *inputs, int n_inputs,
                xf_error *err)
{
    int idx = xf_graph_add_node(g, op, params, inputs, n_inputs, 1, NULL, err);
    return idx < 0 ? -1 : g->nodes[idx].outputs[0];
}

int xf_graph_add_opaque(xf_graph *g, xf_opaque *opaque, const int *inputs, int n_inputs,
                        const xf_dtype *out_dtypes, const xf_shape *out_shapes, int n_outputs,
                        const char *name, xf_error *err)
{
    for (int i = 0; i < n_outputs; i++)
        if (xf_shape_check(&out_shapes[i], out_dtypes[i], NULL, NULL, err) != XF_OK) {
            xf_opaque_free(opaque);
            xf_error_prefix(err, "opaque node '%s': output %d", name ? name : "", i);
            return -1;
        }
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i] >= g->n_values) {
            xf_opaque_free(opaque);
            XF_FAIL(err, XF_ERR_GRAPH, "opaque node '%s': input %d does not exist",
                    name ? name : "", i);
            return -1;
        }
    int idx = append_node(g, XF_OP_OPAQUE, NULL, inputs, n_inputs, out_dtypes, out_shapes,
                          n_outputs, name, opaque, err);
    if (idx < 0) xf_opaque_free(opaque);
    return idx;
}

xf_status xf_graph_mark_output(xf_graph *g, int value, xf_error *err)
{
    if (value < 0 || value >= g->n_values)
        return XF_FAIL(err, XF_ERR_GRAPH, "graph output refers to value %d which does not exist",
                       value);
    if (!push_id(&g->outputs, &g->n_outputs, &g->cap_outputs, value))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory marking an output");
    return XF_OK;
}

const char *xf_node_describe(const xf_graph *g, int node, char *buf, size_t n)
{
    const xf_node *nd = &g->nodes[node];
    const char *opname = nd->op == XF_OP_OPAQUE && nd->opaque ? nd->opaque->op_type
                                                              : xf_op_get(nd->op)->name;
    if (nd->name && nd->name[0])
        snprintf(buf, n, "node %d '%s' (%s)", node, nd->name, opname);
    else
        snprintf(buf, n, "node %d (%s)", node, opname);
    return buf;
}

void xf_graph_op_histogram(const xf_graph *g, int *counts)
{
    memset(counts, 0, sizeof(int) * XF_OP_COUNT);
    for (int i = 0; i < g->n_nodes; i++) counts[g->nodes[i].op]++;
}

size_t xf_graph_param_bytes(const xf_graph *g)
{
    size_t b = 0;
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].kind == XF_VALUE_CONST)
            b += (size_t)xf_shape_numel(&g->values[i].shape) * xf_dtype_size(g->values[i].dtype);
    return b;
}
