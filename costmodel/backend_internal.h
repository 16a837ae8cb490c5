/*
 * backend_internal.h — private contract between the cost-model front end
 * (costmodel.c: cache, graph sums, executor wrapper) and each backend
 * (analytic.c, onednn*.c, cudnn*.c). Not part of the public API.
 *
 * A backend is a table of functions (xf_backend). The front end owns the
 * cache, flops/bytes and the fallbacks; a backend only measures and runs:
 *
 *  - measure: time ONE operator configuration with the backend's own kernels
 *    (its own scratch tensors, filled with cm_fill_random), warm-up
 *    then cfg->reps timed runs, report the median in ms and how many kernels
 *    one run launches. An op the backend has no kernel for returns
 *    XF_ERR_UNSUPPORTED (the front end then times the reference kernel with
 *    cm_time_reference and counts one kernel).
 *    Any other error is real and reported to the user.
 *  - exec_*: run a whole graph. prepare allocates all buffers and creates all
 *    kernels once (constants copied in), run executes nodes in topological
 *    order, output copies graph output i into a tensor it allocates (caller
 *    frees), exec_free releases everything. Ops without a backend kernel run
 *    the reference kernel (xf_op_run) on host memory. Opaque nodes fail in
 *    prepare with XF_ERR_UNSUPPORTED naming the node (xf_node_describe).
 *
 * Every function may assume its arguments are valid (shapes inferred,
 * graph validated by the front end).
 */
#ifndef XF_COSTMODEL_BACKEND_INTERNAL_H
#define XF_COSTMODEL_BACKEND_INTERNAL_H

#include "costmodel.h"

/* What a backend is opened with (resolved from xf_cost_options). */
typedef struct xf_backend_config {
    int threads; /* >= 1 */
    int warmup;  /* >= 0 */
    int reps;    /* >= 1 */
    xf_cost_neighbours neighbours; /* whose running tasks make a timing shared */
    /* analytic only: the roofline to use, always > 0 by the time init runs */
    double peak_gflops, bandwidth_gbps, kernel_overhead_us;
} xf_backend_config;

/* One operator configuration, inferred: outputs known. Omitted optional
 * inputs have dtype XF_DTYPE_INVALID. */
typedef struct xf_backend_op {
    xf_op op;
    const xf_params *params;
    int n_inputs;
    const xf_dtype *in_dtypes;
    const xf_shape *in_shapes;
    int n_outputs;
    const xf_dtype *out_dtypes;
    const xf_shape *out_shapes;
    double flops, bytes; /* from xf_cost_flops_bytes, for analytic estimates */
} xf_backend_op;

typedef struct xf_backend {
    const char *name; /* "onednn" */
    /* Creates the backend state (engine, stream, handles). XF_ERR_UNSUPPORTED
     * with a clear reason when the backend cannot run on this machine. */
    xf_status (*init)(const xf_backend_config *cfg, void **state, xf_error *err);
    void (*free)(void *state); /* NULL state is a no-op */
    /* Writes the identity without the thread count (the front end appends
     * it): device (CPU model from /proc/cpuinfo or GPU name) and library
     * versions, e.g. "AMD EPYC 7B13|dnnl 2.6.0". */
    void (*identity)(void *state, char *buf, size_t n);
    /* *verdict as cm_time_runs gives it (XF_COST_RUNS_CLEAN for a backend
     * whose timing other processes cannot disturb); a measurement not clean
     * is used for this model's lifetime but not kept in the cost cache. */
    xf_status (*measure)(void *state, const xf_backend_op *op, double *ms, int *kernels,
                         xf_cost_runs_verdict *verdict, xf_error *err);
    xf_status (*exec_prepare)(void *state, const xf_graph *g, void **exec, xf_error *err);
    xf_status (*exec_run)(void *exec, const xf_tensor *inputs, int n_inputs, xf_error *err);
    xf_status (*exec_output)(void *exec, int i, xf_tensor *out, xf_error *err);
    void (*exec_free)(void *exec); /* NULL exec is a no-op */
} xf_backend;

/* The backends (each defined in its own file). */
extern const xf_backend cm_backend_analytic;
extern const xf_backend cm_backend_onednn;
#ifdef XF_HAVE_CUDNN
extern const xf_backend cm_backend_cudnn;
#endif

/* ------------------------------------------------ helpers shared by backends */

/* Median of v[0..n) (sorts v in place); n >= 1. */
double cm_median(double *v, int n);
/* "model name" of the first CPU in /proc/cpuinfo, or "unknown-cpu". */
void cm_cpu_model(char *buf, size_t n);
/* Fills t with deterministic data valid for use as input `input_index` of
 * op: floats uniform in [-1, 1) (positive for sqrt/log/pow bases and
 * batch-norm variances), integers within the indexed dimension (gather), bools
 * 0/1. */
void cm_fill_random(xf_tensor *t, xf_op op, const xf_backend_op *cfg,
                              int input_index, uint64_t seed);
/* Times run(user), one run of a kernel, as the measured CPU backends do:
 * cfg->warmup untimed runs, then attempts of cfg->reps timed ones into
 * times[0 .. reps). Around each run it reads whether the process's threads
 * waited for a core during it for a quarter of its time and over 5 us (the
 * scheduler's run-queue delay per thread, /proc/self/task/TID/schedstat;
 * another process held the core): preempted; and whether other tasks were
 * running beside it (cfg->neighbours; the machine's running tasks in
 * /proc/loadavg, less the measurement's own threads, up to cfg->threads of
 * the process's running ones): shared. xf_cost_runs_summary judges each
 * attempt; attempts go on while they are XF_COST_RUNS_PREEMPTED, at most
 * XF_COST_MEASURE_ATTEMPTS. The first attempt not preempted gives *ms (its
 * median) and *verdict (clean or shared); when every attempt was
 * preempted, *ms is the fastest run of all. The first error of run is
 * returned. */
xf_status cm_time_runs(xf_status (*run)(void *user, xf_error *err), void *user,
                       const xf_backend_config *cfg, double *times, double *ms,
                       xf_cost_runs_verdict *verdict, xf_error *err);

/* Times the float32 reference kernel (xf_op_run) on one configuration:
 * allocates and fills inputs and outputs, cfg->warmup untimed and cfg->reps
 * timed runs, median ms (*verdict as cm_time_runs). Used for
 * ops a measured backend lacks. */
xf_status cm_time_reference(const xf_backend_config *bc, const xf_backend_op *op,
                            double *ms, xf_cost_runs_verdict *verdict, xf_error *err);

/* Measures whichever side of the roofline is not already > 0: peak compute
 * (reference sgemm through the matmul kernel) and memory bandwidth (memcpy). */
xf_status cm_measure_roofline(double *peak_gflops, double *bandwidth_gbps,
                                        xf_error *err);

#endif /* XF_COSTMODEL_BACKEND_INTERNAL_H */
