/*
 * onednn_exec.c — the whole-graph executor on oneDNN.
 *
 * Prepare walks the graph once in topological order and builds one
 * ox_kernel per node: oneDNN primitives where there are any, else the
 * reference kernel. Every value gets one buffer for the executor's
 * lifetime: graph inputs are copied into theirs on each run, constants
 * are read in place from the graph, view ops on plain data alias their
 * input's buffer, and every other node output has its own buffer in the
 * layout its kernel produces it (so convolution chains stay blocked and a
 * consumer that wants another layout reorders). Run executes the kernels
 * in order; output converts a graph output back to plain row-major.
 */
#include <stdlib.h>
#include <string.h>

#include "onednn_internal.h"

typedef struct ox_value {
    void *buf;             /* NULL until produced */
    int owned;             /* buf is the executor's (else the graph's or an alias) */
    int has_md;            /* f32 value with a known layout */
    dnnl_memory_desc_t md;
} ox_value;

typedef struct ox_exec {
    const ox_state *st;
    const xf_graph *g;
    int n_kernels;
    int *order;            /* node index of each kernel */
    ox_kernel *kernels;
    ox_value *vals;
} ox_exec;

static void *alloc_buf(size_t bytes)
{
    void *p = NULL;
    size_t n = (bytes + 63) / 64 * 64;
    p = xf_aligned_alloc(64, n ? n : 64);
    if (!p) return NULL;
    memset(p, 0, n ? n : 64);
    return p;
}

static size_t plain_bytes(const xf_value *v)
{
    size_t n = (size_t)xf_shape_numel(&v->shape) * xf_dtype_size(v->dtype);
    return n ? n : 1;
}

void cm_onednn_exec_free(void *exec)
{
    ox_exec *e = exec;
    if (!e) return;
    for (int i = 0; i < e->n_kernels; i++) cm_onednn_kernel_free(&e->kernels[i]);
    if (e->vals)
        for (int v = 0; v < e->g->n_values; v++)
            if (e->vals[v].owned) xf_aligned_free(e->vals[v].buf);
    xf_free(e->kernels);
    xf_free(e->order);
    xf_free(e->vals);
    xf_free(e);
}

/* Buffers of graph inputs and constants. */
static xf_status place_sources(ox_exec *e, xf_error *err)
{
    const xf_graph *g = e->g;
    for (int v = 0; v < g->n_values; v++) {
        const xf_value *val = &g->values[v];
        ox_value *ov = &e->vals[v];
        if (val->kind == XF_VALUE_NODE) continue;
        if (val->dtype == XF_F32) {
            cm_onednn_md_plain(&ov->md, &val->shape);
            ov->has_md = 1;
        }
        if (val->kind == XF_VALUE_CONST) {
            ov->buf = val->data;
            continue;
        }
        ov->buf = alloc_buf(plain_bytes(val));
        ov->owned = 1;
        if (!ov->buf)
            return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory for graph input '%s'",
                           val->name ? val->name : "?");
    }
    return XF_OK;
}

/* Builds the kernel of node `ni` and the buffers of its outputs. */
static xf_status prepare_node(ox_exec *e, int ni, ox_kernel *k, xf_error *err)
{
    const xf_graph *g = e->g;
    const xf_node *n = &g->nodes[ni];
    ox_io *io = xf_calloc((size_t)(n->n_inputs ? n->n_inputs : 1), sizeof *io);
    void **in = xf_calloc((size_t)(n->n_inputs ? n->n_inputs : 1), sizeof *in);
    void **out = xf_calloc((size_t)(n->n_outputs ? n->n_outputs : 1), sizeof *out);
    xf_dtype *odt = xf_calloc((size_t)(n->n_outputs ? n->n_outputs : 1), sizeof *odt);
    xf_shape *osh = xf_calloc((size_t)(n->n_outputs ? n->n_outputs : 1), sizeof *osh);
    xf_status s = XF_OK;
    if (!io || !in || !out || !odt || !osh) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        int v = n->inputs[i];
        if (v < 0) continue;
        const xf_value *val = &g->values[v];
        io[i] = (ox_io){val->dtype, val->shape, e->vals[v].has_md ? &e->vals[v].md : NULL,
                        val->kind == XF_VALUE_CONST ? val->data : NULL};
        in[i] = e->vals[v].buf;
    }
    for (int j = 0; j < n->n_outputs; j++) {
        odt[j] = g->values[n->outputs[j]].dtype;
        osh[j] = g->values[n->outputs[j]].shape;
    }
    s = cm_onednn_kernel_init(k, e->st, n->op, &n->params, n->n_inputs, io, n->n_outputs, odt, osh, 0,
                       err);
    if (s != XF_OK) goto out;
    s = cm_onednn_kernel_build_native(k, err);
    if (s == XF_ERR_UNSUPPORTED) s = cm_onednn_kernel_build_reference(k, err);
    if (s != XF_OK) goto out;
    for (int j = 0; j < n->n_outputs; j++) {
        const xf_value *val = &g->values[n->outputs[j]];
        ox_value *ov = &e->vals[n->outputs[j]];
        ov->has_md = val->dtype == XF_F32;
        ov->md = k->out_md[j];
        if (k->alias) {
            ov->buf = in[0];
            cm_onednn_md_plain(&ov->md, &val->shape);
        } else {
            ov->buf = alloc_buf(ov->has_md ? cm_onednn_md_bytes(&ov->md) : plain_bytes(val));
            ov->owned = 1;
            if (!ov->buf) {
                s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for output %d", j);
                goto out;
            }
        }
        out[j] = ov->buf;
    }
    if (!k->alias) s = cm_onednn_kernel_bind(k, in, out, err);
out:
    xf_free(io);
    xf_free(in);
    xf_free(out);
    xf_free(odt);
    xf_free(osh);
    return s;
}

xf_status cm_onednn_exec_prepare(void *state, const xf_graph *g, void **exec, xf_error *err)
{
    *exec = NULL;
    ox_exec *e = xf_calloc(1, sizeof *e);
    if (!e) return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory preparing the graph");
    e->st = state;
    e->g = g;
    e->order = xf_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *e->order);
    e->kernels = xf_calloc((size_t)(g->n_nodes ? g->n_nodes : 1), sizeof *e->kernels);
    e->vals = xf_calloc((size_t)(g->n_values ? g->n_values : 1), sizeof *e->vals);
    xf_status s = XF_OK;
    if (!e->order || !e->kernels || !e->vals)
        s = XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory preparing the graph");
    if (s == XF_OK) s = xf_graph_topo_order(g, e->order, err);
    if (s == XF_OK) s = place_sources(e, err);
    cm_onednn_set_threads(e->st);
    for (int i = 0; i < g->n_nodes && s == XF_OK; i++) {
        int ni = e->order[i];
        char desc[256];
        if (g->nodes[ni].op == XF_OP_OPAQUE) {
            s = XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: opaque operators cannot run",
                        xf_node_describe(g, ni, desc, sizeof desc));
            break;
        }
        s = prepare_node(e, ni, &e->kernels[i], err);
        if (s != XF_OK) xf_error_prefix(err, "%s", xf_node_describe(g, ni, desc, sizeof desc));
        else e->n_kernels = i + 1;
    }
    if (s != XF_OK) {
        /* The kernel of the failing node is not counted in n_kernels. */
        if (e->n_kernels < g->n_nodes && e->kernels) cm_onednn_kernel_free(&e->kernels[e->n_kernels]);
        cm_onednn_exec_free(e);
        return s;
    }
    *exec = e;
    return XF_OK;
}

xf_status cm_onednn_exec_run(void *exec, const xf_tensor *inputs, int n_inputs, xf_error *err)
{
    ox_exec *e = exec;
    const xf_graph *g = e->g;
    if (n_inputs != g->n_inputs)
        return XF_FAIL(err, XF_ERR_INVALID, "onednn: the graph takes %d inputs, %d given",
                       g->n_inputs, n_inputs);
    for (int i = 0; i < n_inputs; i++) {
        const xf_value *val = &g->values[g->inputs[i]];
        if (inputs[i].dtype != val->dtype || !xf_shape_equal(&inputs[i].shape, &val->shape)) {
            char a[96], b[96];
            return XF_FAIL(err, XF_ERR_INVALID, "onednn: input %d '%s' is %s %s, the graph wants %s %s",
                           i, val->name ? val->name : "?", xf_dtype_name(inputs[i].dtype),
                           xf_shape_str(&inputs[i].shape, a, sizeof a), xf_dtype_name(val->dtype),
                           xf_shape_str(&val->shape, b, sizeof b));
        }
        memcpy(e->vals[g->inputs[i]].buf, inputs[i].data, xf_tensor_bytes(&inputs[i]));
    }
    cm_onednn_set_threads(e->st);
    for (int i = 0; i < e->n_kernels; i++) {
        if (e->kernels[i].alias) continue;
        xf_status s = cm_onednn_kernel_run(&e->kernels[i], err);
        if (s != XF_OK) {
            char desc[256];
            xf_error_prefix(err, "%s", xf_node_describe(g, e->order[i], desc, sizeof desc));
            return s;
        }
    }
    return XF_OK;
}

xf_status cm_onednn_exec_output(void *exec, int i, xf_tensor *out, xf_error *err)
{
    ox_exec *e = exec;
    const xf_graph *g = e->g;
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= g->n_outputs)
        return XF_FAIL(err, XF_ERR_INVALID, "onednn: output %d of %d", i, g->n_outputs);
    int v = g->outputs[i];
    const xf_value *val = &g->values[v];
    const ox_value *ov = &e->vals[v];
    xf_status s = xf_tensor_alloc(out, val->dtype, &val->shape, err);
    if (s != XF_OK) return s;
    if (!ov->has_md || cm_onednn_md_is_plain(&ov->md)) {
        memcpy(out->data, ov->buf, xf_tensor_bytes(out));
        return XF_OK;
    }
    dnnl_memory_desc_t plain;
    cm_onednn_md_plain(&plain, &val->shape);
    dnnl_memory_t src = NULL, dst = NULL;
    dnnl_status_t ds = dnnl_memory_create(&src, &ov->md, e->st->engine, ov->buf);
    if (ds == dnnl_success) ds = dnnl_memory_create(&dst, &plain, e->st->engine, out->data);
    s = cm_onednn_check(ds, err, "onednn: output memory");
    if (s == XF_OK) s = cm_onednn_reorder_now(e->st, src, dst, err);
    if (src) dnnl_memory_destroy(src);
    if (dst) dnnl_memory_destroy(dst);
    if (s != XF_OK) xf_tensor_free(out);
    return s;
}
