/*
 * costmodel.h — how long operators and whole graphs take, on a chosen backend.
 *
 * The optimiser compares graphs by cost. Following TASO, the cost of a graph
 * is the sum of the costs of its operators, and the cost of one operator
 * configuration (op, parameters, input dtypes and shapes) is measured once on
 * a backend and cached in SQLite, keyed by a canonical description of the
 * configuration plus the backend's identity (CPU model or GPU name, library
 * versions, thread count), so a cache written on another machine misses
 * instead of being silently reused.
 *
 * Backends:
 *   analytic  flops and bytes against a roofline (peak GFLOP/s and GB/s
 *             measured once per machine and stored in the cache, or fixed
 *             through the options); deterministic, the default for tests.
 *   onednn    real oneDNN CPU kernels, warm-up then timed repetitions, median.
 *   cudnn     cuDNN/cuBLAS kernels on a GPU (cudaEvent timing); only when the
 *             build found CUDA and a device is present, else a clear error.
 * Operators a measured backend has no kernel for are timed with the float32
 * reference kernel; opaque (XF_OP_OPAQUE) nodes, which cannot run, get the
 * analytic estimate; constant generators cost 0.
 *
 * The executor runs a whole graph on the same backend (buffers allocated
 * once, nodes in topological order) for end-to-end latency and for checking
 * that two graphs compute the same outputs.
 *
 * Nothing here prints to stdout or exits; fallible functions return an
 * xf_status and fill an optional xf_error.
 */
#ifndef XF_COSTMODEL_H
#define XF_COSTMODEL_H

#include "ir/ir.h"

/* ----------------------------------------------------------------- backends */

typedef enum xf_cost_backend {
    XF_COST_ANALYTIC = 0,
    XF_COST_ONEDNN = 1,
    XF_COST_CUDNN = 2,
    XF_COST_BACKEND_COUNT
} xf_cost_backend;

/* "analytic", "onednn", "cudnn". */
const char *xf_cost_backend_name(xf_cost_backend b);
/* Parses a backend name; XF_ERR_INVALID listing the valid names otherwise. */
xf_status xf_cost_backend_parse(const char *name, xf_cost_backend *out, xf_error *err);
/* XF_OK when the backend can be opened on this machine. Otherwise
 * XF_ERR_UNSUPPORTED with the reason ("rlflow was built without CUDA",
 * "no CUDA device: ..."). Never crashes, never aborts. */
xf_status xf_cost_backend_available(xf_cost_backend b, xf_error *err);

/* ------------------------------------------------------------------ options */

/* Whose running tasks a measurement is checked against (xf_cost_shared). */
typedef enum xf_cost_neighbours {
    /* any task running on the machine besides the measurement's own threads
     * (the default): on a core beside the measured one it shares the caches
     * and the memory bandwidth */
    XF_COST_NEIGHBOURS_MACHINE = 0,
    /* only this process's other threads: for tests, whose cached costs must
     * not depend on what else the machine runs */
    XF_COST_NEIGHBOURS_PROCESS = 1
} xf_cost_neighbours;

typedef struct xf_cost_options {
    xf_cost_backend backend;
    int threads;            /* CPU threads for measured kernels (>= 1; default 1) */
    const char *cache_path; /* SQLite cost cache; NULL: in memory, nothing kept */
    int warmup;             /* untimed runs before timing (default 3) */
    int reps;               /* timed runs; the median is reported (default 10) */
    /* analytic backend: a value > 0 fixes that side of the roofline and skips
     * its measurement (deterministic tests); 0 means measure once per machine
     * and store it in the cache. */
    double peak_gflops;
    double bandwidth_gbps;
    double kernel_overhead_us; /* added per kernel launch (default 2.0 us) */
    /* whose running tasks make a measured backend's timing one not to keep
     * in the cache (xf_cost_shared); default XF_COST_NEIGHBOURS_MACHINE */
    xf_cost_neighbours neighbours;
} xf_cost_options;

xf_cost_options xf_cost_options_default(void);

/* The cost cache a tool opens (xf_cost_options.cache_path), one rule for
 * all: `given` as it is; the keyword "none" (XF_COST_CACHE_NONE): NULL,
 * nothing kept; NULL: the user's cache, $XDG_CACHE_HOME/rlflow/costs.db or
 * ~/.cache/rlflow/costs.db, its directories created, written into buf (n
 * bytes), or NULL when neither variable is set or it cannot be made. */
#define XF_COST_CACHE_NONE "none"
const char *xf_cost_cache_path(const char *given, char *buf, size_t n);
/* The user's rlflow directory, $XDG_CACHE_HOME/rlflow or else ~/.cache/rlflow,
 * created when missing; NULL with neither variable set or when it cannot be
 * made. The cost cache lives there, and the default rules database. */
const char *xf_cost_user_dir(char *buf, size_t n);

/* Measured backends time a kernel up to this many times when the runs were
 * disturbed (xf_cost_runs_median) and keep the lowest median. */
#define XF_COST_MEASURE_ATTEMPTS 4

/* Summarises n >= 1 timed runs of one kernel (ms; sorts runs in place): the
 * median, and *disturbed = 1 when the median lies more than 4 times and more
 * than 0.05 ms above the fastest run. Then most runs waited for a core (a
 * descheduled thread of a parallel kernel costs a scheduler time slice,
 * milliseconds, where the kernel takes microseconds) and the median tells
 * the machine's load, not the kernel's cost: on a busy 2-core machine the
 * 2-thread medians of microsecond kernels read 16 ms, and a cached cost is
 * kept for good. */
double xf_cost_runs_median(double *runs, int n, int *disturbed);

/* What one attempt of timed runs of a kernel says about the time it read. */
typedef enum xf_cost_runs_verdict {
    XF_COST_RUNS_CLEAN = 0, /* the kernel's own time: kept in the cost cache */
    /* most runs waited for a core another process held, or their median is
     * xf_cost_runs_median's disturbed one: the machine's load was timed */
    XF_COST_RUNS_PREEMPTED = 1,
    /* the runs had their core, but most of them ran while other tasks ran
     * beside them, sharing the caches and the memory bandwidth: a kernel
     * timed so reads slower by an amount no spread of the runs shows */
    XF_COST_RUNS_SHARED = 2
} xf_cost_runs_verdict;

/* Summarises one attempt of n >= 1 timed runs (ms; reorders runs), each
 * marked in preempted[] when the process's threads waited for a core
 * another process held during it, and in shared[] when other tasks were
 * running beside it (xf_cost_neighbours). XF_COST_RUNS_PREEMPTED, with *ms
 * the fastest run (load only ever slows a run), when more than half the
 * runs were preempted or those that were not are disturbed in
 * xf_cost_runs_median's sense; otherwise *ms is the median of the runs not
 * preempted, and the verdict XF_COST_RUNS_SHARED when more than half of
 * those ran shared, else XF_COST_RUNS_CLEAN. Only a clean measurement is
 * kept in the cost cache: on a 2-core machine shared with other processes
 * the 2-thread kernels were all slowed alike (a [128,768] x [768,3072]
 * matmul read 29.5 ms where a quiet 1-thread run takes 2.77), which the
 * spread of the runs cannot show; and a cache filled at load 8-22 with
 * preempted runs already left out made zoo GPT's search at batch 4 take 5
 * rewrites where a quiet cache takes 47 (docs/costmodel.md). */
xf_cost_runs_verdict xf_cost_runs_summary(double *runs, const unsigned char *preempted,
                                          const unsigned char *shared, int n, double *ms);

/* ---------------------------------------------------------------- the model */

typedef struct xf_cost_model xf_cost_model;

/* Opens the backend (XF_ERR_UNSUPPORTED as xf_cost_backend_available when it
 * cannot run here) and the cache. A cache file that is not an rlflow cost
 * cache, is corrupt, or has a newer schema fails with XF_ERR_IO/XF_ERR_PARSE
 * naming the file. *out is NULL on failure. */
xf_status xf_cost_open(const xf_cost_options *opt, xf_cost_model **out, xf_error *err);
void xf_cost_close(xf_cost_model *cm); /* NULL is a no-op */

/* The identity string the cache is keyed by, e.g.
 * "onednn|AMD EPYC 7B13|dnnl 2.6.0|threads=1". */
const char *xf_cost_identity(const xf_cost_model *cm);
/* For tests of the oneDNN backend: *native = 1 when node `node` of g is
 * built with oneDNN primitives from what the executor gives it (plain
 * layouts, constant data), 0 when the backend falls back to its reference
 * call. XF_ERR_INVALID when cm's backend is not oneDNN. */
xf_status xf_cost_onednn_native(xf_cost_model *cm, const xf_graph *g, int node, int *native,
                                xf_error *err);
/* Roofline the analytic estimates use (measured, loaded or fixed). */
void xf_cost_roofline(const xf_cost_model *cm, double *peak_gflops, double *bandwidth_gbps);

/* Cost of one operator configuration. */
typedef struct xf_op_cost {
    double ms;      /* estimated or measured time, milliseconds */
    double flops;   /* floating-point operations (a multiply-add is 2) */
    double bytes;   /* memory accessed: every input read once + outputs written */
    int kernels;    /* kernel launches / primitive executions */
    int from_cache; /* 1 when the value came from the cache, not a measurement */
} xf_op_cost;

/* Cost of `op` with params and input dtypes/shapes (dtype XF_DTYPE_INVALID
 * for an omitted optional input). Runs shape inference (XF_ERR_SHAPE with
 * its message when the configuration is invalid), then looks the
 * configuration up in the cache and measures it only on a miss. */
xf_status xf_cost_op(xf_cost_model *cm, xf_op op, const xf_params *params, int n_inputs,
                     const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                     xf_error *err);
/* Cost of node `node` of g (an opaque If: its costlier branch; other opaque
 * nodes: analytic estimate of their bytes and, for LSTM, flops). */
xf_status xf_cost_node(xf_cost_model *cm, const xf_graph *g, int node, xf_op_cost *out,
                       xf_error *err);
/* Graph cost = sum over nodes. `per_node` (g->n_nodes entries, or NULL)
 * receives each node's cost; *total holds the sums (from_cache = 1 when no
 * node needed a new measurement). Errors are prefixed with the node description. */
xf_status xf_cost_graph(xf_cost_model *cm, const xf_graph *g, xf_op_cost *total,
                        xf_op_cost *per_node, xf_error *err);

/* Costs measured outside the cost model (fused regions timed in the target
 * runtime, agent/search's fusion-aware cost), kept in the same cache file so
 * they survive the run: `identity` names what measured them (the runtime,
 * its version and threads), `key` what was measured. *found = 0 on a miss. */
xf_status xf_cost_stored_get(xf_cost_model *cm, const char *identity, const char *key,
                             double *ms, int *found, xf_error *err);
xf_status xf_cost_stored_put(xf_cost_model *cm, const char *identity, const char *key,
                             double ms, xf_error *err);

/* Real measurements (cache misses timed on the backend) since open. */
int64_t xf_cost_measurements(const xf_cost_model *cm);
/* Of those, the ones no attempt of which ran clear of other processes
 * (XF_COST_RUNS_PREEMPTED in every attempt): used for this model's
 * lifetime, not kept in the cache, so a run on a quieter machine measures
 * them again. */
int64_t xf_cost_disturbed(const xf_cost_model *cm);
/* Of the measurements, the ones whose runs had their core but ran beside other
 * running tasks (XF_COST_RUNS_SHARED; whose, xf_cost_options.neighbours):
 * used for this model's lifetime, not kept in the cache either. */
int64_t xf_cost_shared(const xf_cost_model *cm);

/* Canonical description of an operator configuration, the cache key minus
 * the backend identity: "conv2d|kernel=3,3;stride=1,1;...|f32[1,64,56,56],f32[64,64,3,3]".
 * Only parameters that differ from xf_params_default() appear. Returns
 * XF_ERR_INVALID when buf is too small. */
xf_status xf_cost_describe(xf_op op, const xf_params *params, int n_inputs,
                           const xf_dtype *in_dtypes, const xf_shape *in_shapes, char *buf,
                           size_t n, xf_error *err);

/* Flops and bytes of an operator configuration whose output dtypes/shapes
 * are known (as xf_op_infer gives them). Pure arithmetic, never fails;
 * opaque ops count 0 flops and their input+output bytes. */
void xf_cost_flops_bytes(xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, int n_outputs,
                         const xf_dtype *out_dtypes, const xf_shape *out_shapes, double *flops,
                         double *bytes);

/* ----------------------------------------------------------------- executor */

typedef struct xf_exec xf_exec;

/* Prepares g to run on cm's backend: validates it, plans the node order,
 * allocates every buffer and creates every kernel once. Fails with
 * XF_ERR_UNSUPPORTED naming the node when the graph holds an opaque node
 * (but If and LSTM on the analytic backend, whose executor is the
 * reference interpreter).
 * cm and g must outlive the executor. */
xf_status xf_exec_prepare(xf_cost_model *cm, const xf_graph *g, xf_exec **out, xf_error *err);
/* Runs the graph once; `inputs` follows g->inputs order, dtypes and shapes
 * must match (XF_ERR_INVALID naming the input otherwise). */
xf_status xf_exec_run(xf_exec *e, const xf_tensor *inputs, int n_inputs, xf_error *err);
/* Copies the outputs of the last run into `outputs` (g->n_outputs tensors,
 * allocated here, owned by the caller: xf_tensor_free each). */
xf_status xf_exec_outputs(xf_exec *e, xf_tensor *outputs, xf_error *err);
/* Median wall time of one end-to-end run over `reps` timed runs after
 * `warmup` untimed ones (reps >= 1). */
xf_status xf_exec_latency(xf_exec *e, const xf_tensor *inputs, int n_inputs, int warmup,
                          int reps, double *median_ms, xf_error *err);
void xf_exec_free(xf_exec *e); /* NULL is a no-op */

/* Runs a and b (same inputs: equal count, dtypes and shapes) on cm's
 * backend with deterministic random inputs from `seed` and reports the
 * largest absolute and relative output difference over all outputs
 * (xf_tensor_compare semantics). XF_ERR_MISMATCH when the interfaces differ. */
xf_status xf_exec_compare(xf_cost_model *cm, const xf_graph *a, const xf_graph *b,
                          uint64_t seed, double *max_abs, double *max_rel, xf_error *err);

#endif /* XF_COSTMODEL_H */
