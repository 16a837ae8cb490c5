/*
 * cudnn_internal.h — private contract between the files of the cuDNN/cuBLAS
 * backend (cudnn_backend.c, cudnn_kernels*.c, cudnn_exec.c). Built only when
 * CMake found CUDA, cuDNN and cuBLAS (XF_HAVE_CUDNN). Not part of the API.
 *
 * The unit of work is a cx_kernel: one operator configuration with its cuDNN
 * descriptors, chosen convolution algorithm and workspace need, created once
 * and run many times on float32 device buffers. Creation returns
 * XF_ERR_UNSUPPORTED when cuDNN/cuBLAS has no kernel for the configuration
 * (asymmetric padding, ceil-mode pooling, general broadcasting, non-float
 * data, ops outside the list below); callers then use the reference kernel.
 *
 * GPU kernels: conv2d (+bias, +fused activation), matmul (batched, one side
 * may broadcast), gemm, ewadd/ewsub/ewmul/scalar_mul (cudnnOpTensor, one
 * side may broadcast), relu/sigmoid/tanh (cudnnActivation), sqrt, max/avg
 * pooling (symmetric pads), global_avgpool, softmax, batchnorm (inference),
 * transpose and concat (cudnnTransformTensor), and device copies for
 * identity, dropout, reshape, flatten, squeeze, unsqueeze.
 */
#ifndef XF_COSTMODEL_CUDNN_INTERNAL_H
#define XF_COSTMODEL_CUDNN_INTERNAL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include "backend_internal.h"

/* The CUDA libraries are opened with dlopen when the backend is first
 * initialised (cm_cudnn_load, cudnn_load.c), never linked: a linked cuBLAS loads
 * cuBLASLt, whose start-up keeps about 60 MB of it resident in every
 * rlflow process, with a GPU or without. Every CUDA, cuBLAS and cuDNN
 * function the backend calls is listed here (library, name) and called as
 * CX(name)(...) through cm_cudnn_fn. */
#define CX_FUNCS(X) \
    X(cublas, cublasCreate) \
    X(cublas, cublasDestroy) \
    X(cublas, cublasGetStatusString) \
    X(cublas, cublasGetVersion) \
    X(cublas, cublasSgemm) \
    X(cublas, cublasSgemmStridedBatched) \
    X(cudart, cudaDeviceSynchronize) \
    X(cudart, cudaEventCreate) \
    X(cudart, cudaEventDestroy) \
    X(cudart, cudaEventElapsedTime) \
    X(cudart, cudaEventRecord) \
    X(cudart, cudaEventSynchronize) \
    X(cudart, cudaFree) \
    X(cudart, cudaGetDeviceCount) \
    X(cudart, cudaGetDeviceProperties) \
    X(cudart, cudaGetErrorString) \
    X(cudart, cudaMalloc) \
    X(cudart, cudaMemcpy) \
    X(cudart, cudaMemcpyAsync) \
    X(cudart, cudaRuntimeGetVersion) \
    X(cudart, cudaSetDevice) \
    X(cudnn, cudnnActivationForward) \
    X(cudnn, cudnnAddTensor) \
    X(cudnn, cudnnBatchNormalizationForwardInference) \
    X(cudnn, cudnnConvolutionForward) \
    X(cudnn, cudnnCreate) \
    X(cudnn, cudnnCreateActivationDescriptor) \
    X(cudnn, cudnnCreateConvolutionDescriptor) \
    X(cudnn, cudnnCreateFilterDescriptor) \
    X(cudnn, cudnnCreateOpTensorDescriptor) \
    X(cudnn, cudnnCreatePoolingDescriptor) \
    X(cudnn, cudnnCreateTensorDescriptor) \
    X(cudnn, cudnnDestroy) \
    X(cudnn, cudnnDestroyActivationDescriptor) \
    X(cudnn, cudnnDestroyConvolutionDescriptor) \
    X(cudnn, cudnnDestroyFilterDescriptor) \
    X(cudnn, cudnnDestroyOpTensorDescriptor) \
    X(cudnn, cudnnDestroyPoolingDescriptor) \
    X(cudnn, cudnnDestroyTensorDescriptor) \
    X(cudnn, cudnnFindConvolutionForwardAlgorithm) \
    X(cudnn, cudnnGetErrorString) \
    X(cudnn, cudnnGetVersion) \
    X(cudnn, cudnnOpTensor) \
    X(cudnn, cudnnPoolingForward) \
    X(cudnn, cudnnSetActivationDescriptor) \
    X(cudnn, cudnnSetConvolution2dDescriptor) \
    X(cudnn, cudnnSetConvolutionGroupCount) \
    X(cudnn, cudnnSetConvolutionMathType) \
    X(cudnn, cudnnSetFilterNdDescriptor) \
    X(cudnn, cudnnSetOpTensorDescriptor) \
    X(cudnn, cudnnSetPoolingNdDescriptor) \
    X(cudnn, cudnnSetTensorNdDescriptor) \
    X(cudnn, cudnnSoftmaxForward) \
    X(cudnn, cudnnTransformTensor)

typedef struct cx_api {
#define CX_MEMBER(lib, f) __typeof__(f) *f;
    CX_FUNCS(CX_MEMBER)
#undef CX_MEMBER
} cx_api;

extern cx_api cm_cudnn_fn;
#define CX(f) (cm_cudnn_fn.f)

/* Opens the libraries and fills cm_cudnn_fn (once; later calls return at once).
 * XF_ERR_UNSUPPORTED naming the library and the loader's reason when one
 * cannot be opened or lacks a function. */
xf_status cm_cudnn_load(xf_error *err);

typedef struct cx_state {
    int device;
    cudnnHandle_t cudnn;
    cublasHandle_t cublas;
    cudaEvent_t start, stop;
    void *workspace; /* shared by all kernels, grown to the largest need */
    size_t workspace_bytes;
    int warmup, reps;
} cx_state;

/* Error translation at the module boundary: XF_OK on success, otherwise
 * XF_ERR_INTERNAL (XF_ERR_NOMEM for allocation failures) with "what: the
 * library's message". */
xf_status cm_cudnn_cuda(cudaError_t e, xf_error *err, const char *what);
xf_status cm_cudnn_cudnn(cudnnStatus_t s, xf_error *err, const char *what);
xf_status cm_cudnn_cublas(cublasStatus_t s, xf_error *err, const char *what);

/* Makes the shared workspace at least `bytes` large. */
xf_status cm_cudnn_workspace(cx_state *st, size_t bytes, xf_error *err);

typedef struct cx_kernel cx_kernel;
typedef xf_status (*cx_run_fn)(cx_state *st, const cx_kernel *k, const void *const *in,
                               void *const *out, xf_error *err);

#define CX_MAX_DESC 8

/* Everything one configuration needs; fields a family does not use stay 0. */
struct cx_kernel {
    xf_op op;
    cx_run_fn run;
    int launches;
    int n_desc;
    cudnnTensorDescriptor_t desc[CX_MAX_DESC]; /* owned, in creation order */
    cudnnFilterDescriptor_t filter;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pool;
    cudnnOpTensorDescriptor_t optensor;
    cudnnConvolutionFwdAlgo_t algo;
    size_t workspace;
    /* cuBLAS column-major view of a row-major product (see cudnn_kernel.c) */
    cublasOperation_t op_a, op_b;
    int m, n, k, lda, ldb, ldc, batch;
    long long stride_a, stride_b, stride_c;
    float alpha, beta, alpha1, alpha2;
    double epsilon; /* batchnorm */
    int swap;       /* two-input ops: operands exchanged (the broadcast one second) */
    int has_bias;   /* conv bias / gemm C */
    int copy_c;     /* gemm: C already [M,N], copied instead of broadcast */
    int n_parts;    /* concat: one (src, dst) descriptor pair per input */
    cudnnTensorDescriptor_t *parts;
    size_t *offsets; /* concat: element offset of each input in the output */
    size_t bytes;    /* copies */
};

/* Creates a tensor descriptor owned by k for a float tensor of `rank` dims
 * (leading 1s added up to 4 dims); strides NULL means dense row-major.
 * XF_ERR_UNSUPPORTED when a dim or stride does not fit cuDNN's int. */
xf_status cm_cudnn_desc(cx_kernel *k, int rank, const int64_t *dims, const int64_t *strides,
                  cudnnTensorDescriptor_t *out, xf_error *err);
/* 1 when every real input and output of op is float32. */
int cm_cudnn_all_f32(const xf_backend_op *op);

/* Builds the kernel for one configuration (chooses the convolution
 * algorithm by measurement, sizes the workspace). */
xf_status cm_cudnn_kernel_create(cx_state *st, const xf_backend_op *op, cx_kernel **out,
                           xf_error *err);
/* Enqueues the kernel on the default stream. in[i] is NULL for an omitted
 * optional input; pointers are device memory of the configuration's shapes. */
xf_status cm_cudnn_kernel_run(cx_state *st, const cx_kernel *k, const void *const *in,
                        void *const *out, xf_error *err);
/* Launches (library calls) one run makes. */
int cm_cudnn_kernel_launches(const cx_kernel *k);
void cm_cudnn_kernel_free(cx_kernel *k); /* NULL is a no-op */

/* Creators per family; each fills a zeroed k (run, launches, descriptors)
 * or returns XF_ERR_UNSUPPORTED when the configuration cannot run on the
 * GPU (conv, matmul and gemm: cudnn_kernel.c's own). cudnn_kernel_misc.c: */
xf_status cm_cudnn_create_binary(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);
xf_status cm_cudnn_create_unary(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);
xf_status cm_cudnn_create_copy(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);
xf_status cm_cudnn_create_pool(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);
xf_status cm_cudnn_create_softmax(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);
xf_status cm_cudnn_create_batchnorm(cx_state *st, const xf_backend_op *op, cx_kernel *k,
                              xf_error *err);
xf_status cm_cudnn_create_transpose(cx_state *st, const xf_backend_op *op, cx_kernel *k,
                              xf_error *err);
xf_status cm_cudnn_create_concat(cx_state *st, const xf_backend_op *op, cx_kernel *k, xf_error *err);

/* Whole-graph executor hooks (cudnn_exec.c). */
xf_status cm_cudnn_exec_prepare(void *state, const xf_graph *g, void **exec, xf_error *err);
xf_status cm_cudnn_exec_run(void *exec, const xf_tensor *inputs, int n_inputs, xf_error *err);
xf_status cm_cudnn_exec_output(void *exec, int i, xf_tensor *out, xf_error *err);
void cm_cudnn_exec_free(void *exec);

#endif /* XF_COSTMODEL_CUDNN_INTERNAL_H */
