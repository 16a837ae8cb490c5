/*
 * cudnn_backend.c — the cudnn backend: CUDA device, cuDNN and cuBLAS
 * handles, error translation, the shared workspace, and per-operator timing
 * with cudaEvents (warm-up runs, then timed runs, median).
 *
 * Without a CUDA device (or driver) init fails with XF_ERR_UNSUPPORTED and
 * "no CUDA device: <CUDA's reason>", never a crash. The workspace is grown
 * to what the chosen algorithms need, never pre-allocated.
 */
#include "cudnn_internal.h"

#include <stdio.h>
#include <stdlib.h>

xf_status cm_cudnn_cuda(cudaError_t e, xf_error *err, const char *what)
{
    if (e == cudaSuccess) return XF_OK;
    return XF_FAIL(err, e == cudaErrorMemoryAllocation ? XF_ERR_NOMEM : XF_ERR_INTERNAL,
                   "%s: CUDA: %s", what, CX(cudaGetErrorString)(e));
}

xf_status cm_cudnn_cudnn(cudnnStatus_t s, xf_error *err, const char *what)
{
    if (s == CUDNN_STATUS_SUCCESS) return XF_OK;
    if (s == CUDNN_STATUS_NOT_SUPPORTED)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: cuDNN: %s", what, CX(cudnnGetErrorString)(s));
    return XF_FAIL(err, s == CUDNN_STATUS_ALLOC_FAILED ? XF_ERR_NOMEM : XF_ERR_INTERNAL,
                   "%s: cuDNN: %s", what, CX(cudnnGetErrorString)(s));
}

xf_status cm_cudnn_cublas(cublasStatus_t s, xf_error *err, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS) return XF_OK;
    return XF_FAIL(err, s == CUBLAS_STATUS_ALLOC_FAILED ? XF_ERR_NOMEM : XF_ERR_INTERNAL,
                   "%s: cuBLAS: %s", what, CX(cublasGetStatusString)(s));
}

xf_status cm_cudnn_workspace(cx_state *st, size_t bytes, xf_error *err)
{
    if (bytes <= st->workspace_bytes) return XF_OK;
    if (st->workspace) CX(cudaFree)(st->workspace);
    st->workspace = NULL;
    st->workspace_bytes = 0;
    xf_status s = cm_cudnn_cuda(CX(cudaMalloc)(&st->workspace, bytes), err, "allocating cuDNN workspace");
    if (!s) st->workspace_bytes = bytes;
    return s;
}

static void cudnn_free(void *state)
{
    cx_state *st = state;
    if (!st) return;
    if (st->workspace) CX(cudaFree)(st->workspace);
    if (st->start) CX(cudaEventDestroy)(st->start);
    if (st->stop) CX(cudaEventDestroy)(st->stop);
    if (st->cublas) CX(cublasDestroy)(st->cublas);
    if (st->cudnn) CX(cudnnDestroy)(st->cudnn);
    xf_free(st);
}

static xf_status cudnn_init(const xf_backend_config *cfg, void **state, xf_error *err)
{
    *state = NULL;
    xf_status ls = cm_cudnn_load(err);
    if (ls) return ls;
    int count = 0;
    cudaError_t e = CX(cudaGetDeviceCount)(&count);
    if (e != cudaSuccess || count == 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "no CUDA device: %s",
                       e != cudaSuccess ? CX(cudaGetErrorString)(e) : "the driver reports 0 devices");
    cx_state *st = xf_calloc(1, sizeof *st);
    if (!st) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the cudnn backend");
    st->warmup = cfg->warmup;
    st->reps = cfg->reps;
    xf_status s = cm_cudnn_cuda(CX(cudaSetDevice)(0), err, "selecting CUDA device 0");
    if (!s) s = cm_cudnn_cudnn(CX(cudnnCreate)(&st->cudnn), err, "creating the cuDNN handle");
    if (!s) s = cm_cudnn_cublas(CX(cublasCreate)(&st->cublas), err, "creating the cuBLAS handle");
    if (!s) s = cm_cudnn_cuda(CX(cudaEventCreate)(&st->start), err, "creating a CUDA event");
    if (!s) s = cm_cudnn_cuda(CX(cudaEventCreate)(&st->stop), err, "creating a CUDA event");
    if (s) {
        cudnn_free(st);
        return s;
    }
    *state = st;
    return XF_OK;
}

static void cudnn_identity(void *state, char *buf, size_t n)
{
    cx_state *st = state;
    struct cudaDeviceProp prop;
    const char *gpu = "unknown-gpu";
    if (CX(cudaGetDeviceProperties)(&prop, st->device) == cudaSuccess) gpu = prop.name;
    int rt = 0, blas = 0;
    CX(cudaRuntimeGetVersion)(&rt);
    CX(cublasGetVersion)(st->cublas, &blas);
    size_t dnn = CX(cudnnGetVersion)();
    snprintf(buf, n, "%s|cuda %d.%d|cudnn %zu|cublas %d", gpu, rt / 1000, (rt % 1000) / 10, dnn,
             blas);
}

/* Device buffer of a configuration's input or output, filled with the same
 * deterministic data the reference timing uses. */
static xf_status upload_random(const xf_backend_op *op, int i, void **dev, xf_error *err)
{
    xf_tensor t = {0};
    xf_status s = xf_tensor_alloc(&t, op->in_dtypes[i], &op->in_shapes[i], err);
    if (s) return s;
    cm_fill_random(&t, op->op, op, i, 1);
    size_t bytes = xf_tensor_bytes(&t);
    s = cm_cudnn_cuda(CX(cudaMalloc)(dev, bytes ? bytes : 4), err, "allocating a GPU input");
    if (!s) s = cm_cudnn_cuda(CX(cudaMemcpy)(*dev, t.data, bytes, cudaMemcpyHostToDevice), err,
                        "copying an input to the GPU");
    xf_tensor_free(&t);
    return s;
}

static xf_status cudnn_measure(void *state, const xf_backend_op *op, double *ms, int *kernels,
                               xf_cost_runs_verdict *verdict, xf_error *err)
{
    cx_state *st = state;
    /* events time the device: a preempted host thread does not enter them */
    *verdict = XF_COST_RUNS_CLEAN;
    *ms = 0;
    *kernels = 0;
    cx_kernel *k = NULL;
    xf_status s = cm_cudnn_kernel_create(st, op, &k, err);
    if (s) return s; /* XF_ERR_UNSUPPORTED: the front end times the reference */
    void **in = xf_calloc((size_t)op->n_inputs + 1, sizeof *in);
    void **out = xf_calloc((size_t)op->n_outputs + 1, sizeof *out);
    double *t = xf_calloc((size_t)st->reps, sizeof *t);
    if (!in || !out || !t) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing %s on the GPU",
                    xf_op_get(op->op)->name);
        goto out;
    }
    for (int i = 0; i < op->n_inputs && !s; i++)
        if (op->in_dtypes[i] != XF_DTYPE_INVALID) s = upload_random(op, i, &in[i], err);
    for (int i = 0; i < op->n_outputs && !s; i++) {
        size_t bytes = (size_t)xf_shape_numel(&op->out_shapes[i]) * xf_dtype_size(op->out_dtypes[i]);
        s = cm_cudnn_cuda(CX(cudaMalloc)(&out[i], bytes ? bytes : 4), err, "allocating a GPU output");
    }
    for (int r = 0; r < st->warmup && !s; r++)
        s = cm_cudnn_kernel_run(st, k, (const void *const *)in, out, err);
    for (int r = 0; r < st->reps && !s; r++) {
        float elapsed = 0;
        s = cm_cudnn_cuda(CX(cudaEventRecord)(st->start, 0), err, "recording a CUDA event");
        if (!s) s = cm_cudnn_kernel_run(st, k, (const void *const *)in, out, err);
        if (!s) s = cm_cudnn_cuda(CX(cudaEventRecord)(st->stop, 0), err, "recording a CUDA event");
        if (!s) s = cm_cudnn_cuda(CX(cudaEventSynchronize)(st->stop), err, "waiting for the GPU");
        if (!s) s = cm_cudnn_cuda(CX(cudaEventElapsedTime)(&elapsed, st->start, st->stop), err,
                            "reading a CUDA event");
        t[r] = elapsed;
    }
    if (!s) {
        *ms = cm_median(t, st->reps);
        *kernels = cm_cudnn_kernel_launches(k);
    }
out:
    for (int i = 0; in && i < op->n_inputs; i++)
        if (in[i]) CX(cudaFree)(in[i]);
    for (int i = 0; out && i < op->n_outputs; i++)
        if (out[i]) CX(cudaFree)(out[i]);
    xf_free(in);
    xf_free(out);
    xf_free(t);
    cm_cudnn_kernel_free(k);
    return s;
}

const xf_backend cm_backend_cudnn = {
    .name = "cudnn",
    .init = cudnn_init,
    .free = cudnn_free,
    .identity = cudnn_identity,
    .measure = cudnn_measure,
    .exec_prepare = cm_cudnn_exec_prepare,
    .exec_run = cm_cudnn_exec_run,
    .exec_output = cm_cudnn_exec_output,
    .exec_free = cm_cudnn_exec_free,
};
