/*
 * cudnn_exec.c — whole-graph executor on the GPU. prepare allocates one
 * device buffer per value (constants uploaded once) and creates one
 * cx_kernel per node; nodes without a GPU kernel run the float32 reference
 * kernel on host mirrors of their inputs and outputs (copied down and back
 * up around the call), so every graph without opaque nodes runs. run copies
 * the inputs up, enqueues the nodes in topological order and waits for the
 * device, so its wall time is the end-to-end latency.
 */
#include "cudnn_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct cx_exec {
    cx_state *st;
    const xf_graph *g;
    int *order;        /* topological node order */
    void **dev;        /* per value: device buffer (NULL for unused) */
    size_t *bytes;     /* per value */
    cx_kernel **kern;  /* per node: GPU kernel or NULL (host fallback) */
    xf_tensor *host;   /* per value: host mirror for host-run nodes (data NULL if none) */
    const void **in;   /* scratch argument arrays, sized for the widest node */
    void **out;
    const xf_tensor **hin;
    xf_tensor *hout;
} cx_exec;

void cm_cudnn_exec_free(void *exec)
{
    cx_exec *e = exec;
    if (!e) return;
    for (int v = 0; e->dev && v < e->g->n_values; v++)
        if (e->dev[v]) CX(cudaFree)(e->dev[v]);
    for (int n = 0; e->kern && n < e->g->n_nodes; n++) cm_cudnn_kernel_free(e->kern[n]);
    for (int v = 0; e->host && v < e->g->n_values; v++) xf_tensor_free(&e->host[v]);
    xf_free(e->order);
    xf_free(e->dev);
    xf_free(e->bytes);
    xf_free(e->kern);
    xf_free(e->host);
    xf_free(e->in);
    xf_free(e->out);
    xf_free(e->hin);
    xf_free(e->hout);
    xf_free(e);
}

static xf_status host_mirror(cx_exec *e, int v, xf_error *err)
{
    if (e->host[v].data) return XF_OK;
    const xf_value *val = &e->g->values[v];
    return xf_tensor_alloc(&e->host[v], val->dtype, &val->shape, err);
}

/* Configuration of node n as the kernels see it. */
static void node_config(const xf_graph *g, const xf_node *nd, xf_dtype *in_dt, xf_shape *in_sh,
                        xf_dtype *out_dt, xf_shape *out_sh, xf_backend_op *op)
{
    for (int i = 0; i < nd->n_inputs; i++) {
        in_dt[i] = nd->inputs[i] >= 0 ? g->values[nd->inputs[i]].dtype : XF_DTYPE_INVALID;
        if (nd->inputs[i] >= 0) in_sh[i] = g->values[nd->inputs[i]].shape;
    }
    for (int i = 0; i < nd->n_outputs; i++) {
        out_dt[i] = g->values[nd->outputs[i]].dtype;
        out_sh[i] = g->values[nd->outputs[i]].shape;
    }
    *op = (xf_backend_op){nd->op,   &nd->params, nd->n_inputs, in_dt, in_sh,
                          nd->n_outputs, out_dt, out_sh, 0, 0};
}

static xf_status prepare_node(cx_exec *e, int n, xf_error *err)
{
    const xf_graph *g = e->g;
    const xf_node *nd = &g->nodes[n];
    int ni = nd->n_inputs > 0 ? nd->n_inputs : 1, no = nd->n_outputs > 0 ? nd->n_outputs : 1;
    xf_dtype *in_dt = xf_calloc((size_t)ni, sizeof *in_dt), *out_dt = xf_calloc((size_t)no, sizeof *out_dt);
    xf_shape *in_sh = xf_calloc((size_t)ni, sizeof *in_sh), *out_sh = xf_calloc((size_t)no, sizeof *out_sh);
    xf_status s = XF_OK;
    if (!in_dt || !out_dt || !in_sh || !out_sh) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing the GPU executor");
        goto out;
    }
    xf_backend_op op;
    node_config(g, nd, in_dt, in_sh, out_dt, out_sh, &op);
    s = cm_cudnn_kernel_create(e->st, &op, &e->kern[n], err);
    if (s == XF_ERR_UNSUPPORTED) { /* host fallback: mirrors for its values */
        xf_error_clear(err);
        s = XF_OK;
        for (int i = 0; i < nd->n_inputs && !s; i++)
            if (nd->inputs[i] >= 0) s = host_mirror(e, nd->inputs[i], err);
        for (int i = 0; i < nd->n_outputs && !s; i++) s = host_mirror(e, nd->outputs[i], err);
    }
    if (s) {
        char d[256];
        xf_error_prefix(err, "%s", xf_node_describe(g, n, d, sizeof d));
    }
out:
    xf_free(in_dt);
    xf_free(out_dt);
    xf_free(in_sh);
    xf_free(out_sh);
    return s;
}

xf_status cm_cudnn_exec_prepare(void *state, const xf_graph *g, void **exec, xf_error *err)
{
    *exec = NULL;
    cx_exec *e = xf_calloc(1, sizeof *e);
    if (!e) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing the GPU executor");
    e->st = state;
    e->g = g;
    int widest = 1;
    for (int n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].n_inputs > widest) widest = g->nodes[n].n_inputs;
        if (g->nodes[n].n_outputs > widest) widest = g->nodes[n].n_outputs;
    }
    size_t nv = (size_t)(g->n_values > 0 ? g->n_values : 1);
    size_t nn = (size_t)(g->n_nodes > 0 ? g->n_nodes : 1);
    e->order = xf_calloc(nn, sizeof *e->order);
    e->dev = xf_calloc(nv, sizeof *e->dev);
    e->bytes = xf_calloc(nv, sizeof *e->bytes);
    e->kern = xf_calloc(nn, sizeof *e->kern);
    e->host = xf_calloc(nv, sizeof *e->host);
    e->in = xf_calloc((size_t)widest, sizeof *e->in);
    e->out = xf_calloc((size_t)widest, sizeof *e->out);
    e->hin = xf_calloc((size_t)widest, sizeof *e->hin);
    e->hout = xf_calloc((size_t)widest, sizeof *e->hout);
    xf_status s = XF_OK;
    if (!e->order || !e->dev || !e->bytes || !e->kern || !e->host || !e->in || !e->out ||
        !e->hin || !e->hout) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing the GPU executor");
        goto out;
    }
    s = xf_graph_topo_order(g, e->order, err);
    for (int v = 0; v < g->n_values && !s; v++) {
        const xf_value *val = &g->values[v];
        e->bytes[v] = (size_t)xf_shape_numel(&val->shape) * xf_dtype_size(val->dtype);
        s = cm_cudnn_cuda(CX(cudaMalloc)(&e->dev[v], e->bytes[v] ? e->bytes[v] : 4), err,
                    "allocating GPU buffers for the graph");
        if (!s && val->kind == XF_VALUE_CONST)
            s = cm_cudnn_cuda(CX(cudaMemcpy)(e->dev[v], val->data, e->bytes[v], cudaMemcpyHostToDevice),
                        err, "uploading constants");
    }
    for (int n = 0; n < g->n_nodes && !s; n++) s = prepare_node(e, n, err);
out:
    if (s) {
        cm_cudnn_exec_free(e);
        return s;
    }
    *exec = e;
    return XF_OK;
}

/* A node without a GPU kernel: inputs down, reference kernel, outputs up. */
static xf_status run_on_host(cx_exec *e, const xf_node *nd, xf_error *err)
{
    xf_status s = XF_OK;
    for (int i = 0; i < nd->n_inputs && !s; i++) {
        int v = nd->inputs[i];
        e->hin[i] = v >= 0 ? &e->host[v] : NULL;
        if (v >= 0)
            s = cm_cudnn_cuda(CX(cudaMemcpy)(e->host[v].data, e->dev[v], e->bytes[v], cudaMemcpyDeviceToHost),
                        err, "copying a node's input to the host");
    }
    for (int i = 0; i < nd->n_outputs; i++) e->hout[i] = e->host[nd->outputs[i]];
    if (!s) s = xf_op_run(nd->op, &nd->params, nd->n_inputs, e->hin, nd->n_outputs, e->hout, err);
    for (int i = 0; i < nd->n_outputs && !s; i++) {
        int v = nd->outputs[i];
        s = cm_cudnn_cuda(CX(cudaMemcpy)(e->dev[v], e->host[v].data, e->bytes[v], cudaMemcpyHostToDevice),
                    err, "copying a node's output to the GPU");
    }
    return s;
}

xf_status cm_cudnn_exec_run(void *exec, const xf_tensor *inputs, int n_inputs, xf_error *err)
{
    cx_exec *e = exec;
    const xf_graph *g = e->g;
    xf_status s = XF_OK;
    for (int i = 0; i < n_inputs && !s; i++) {
        int v = g->inputs[i];
        s = cm_cudnn_cuda(CX(cudaMemcpy)(e->dev[v], inputs[i].data, e->bytes[v], cudaMemcpyHostToDevice),
                    err, "copying an input to the GPU");
    }
    for (int k = 0; k < g->n_nodes && !s; k++) {
        int n = e->order[k];
        const xf_node *nd = &g->nodes[n];
        if (!e->kern[n]) {
            s = run_on_host(e, nd, err);
        } else {
            for (int i = 0; i < nd->n_inputs; i++)
                e->in[i] = nd->inputs[i] >= 0 ? e->dev[nd->inputs[i]] : NULL;
            for (int i = 0; i < nd->n_outputs; i++) e->out[i] = e->dev[nd->outputs[i]];
            s = cm_cudnn_kernel_run(e->st, e->kern[n], e->in, e->out, err);
        }
        if (s) {
            char d[256];
            xf_error_prefix(err, "%s", xf_node_describe(g, n, d, sizeof d));
        }
    }
    if (!s) s = cm_cudnn_cuda(CX(cudaDeviceSynchronize)(), err, "waiting for the GPU");
    return s;
}

xf_status cm_cudnn_exec_output(void *exec, int i, xf_tensor *out, xf_error *err)
{
    cx_exec *e = exec;
    int v = e->g->outputs[i];
    const xf_value *val = &e->g->values[v];
    xf_status s = xf_tensor_alloc(out, val->dtype, &val->shape, err);
    if (!s)
        s = cm_cudnn_cuda(CX(cudaMemcpy)(out->data, e->dev[v], e->bytes[v], cudaMemcpyDeviceToHost), err,
                    "copying an output to the host");
    if (s) xf_tensor_free(out);
    return s;
}
