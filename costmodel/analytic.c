/*
 * analytic.c — the analytic backend: time = max(flops / peak, bytes /
 * bandwidth) + kernels * per-kernel overhead, against a machine roofline.
 *
 * The roofline is measured once per machine (cm_measure_roofline:
 * the reference sgemm through the matmul kernel for peak compute, a large
 * memcpy for bandwidth) and stored in the cost cache by the front end, so
 * every later estimate on that machine is deterministic; tests fix it
 * through xf_cost_options instead. Views (bytes and flops both 0) take no
 * kernel and no time.
 *
 * Its executor is the float32 reference interpreter (xf_interp_run), so
 * `xfcost --backend analytic` can still report an end-to-end latency.
 */
#include "backend_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct analytic_state {
    xf_backend_config cfg;
} analytic_state;

static xf_status analytic_init(const xf_backend_config *cfg, void **state, xf_error *err)
{
    *state = NULL;
    if (!(cfg->peak_gflops > 0) || !(cfg->bandwidth_gbps > 0))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "analytic backend: roofline must be positive (peak %g GFLOP/s, "
                       "bandwidth %g GB/s)",
                       cfg->peak_gflops, cfg->bandwidth_gbps);
    analytic_state *s = xf_calloc(1, sizeof *s);
    if (!s) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the analytic backend");
    s->cfg = *cfg;
    *state = s;
    return XF_OK;
}

static void analytic_free(void *state)
{
    xf_free(state);
}

static void analytic_identity(void *state, char *buf, size_t n)
{
    const analytic_state *s = state;
    char cpu[256];
    cm_cpu_model(cpu, sizeof cpu);
    snprintf(buf, n, "%s|peak=%.6g GFLOP/s|bw=%.6g GB/s|overhead=%.6g us", cpu, s->cfg.peak_gflops,
             s->cfg.bandwidth_gbps, s->cfg.kernel_overhead_us);
}

static xf_status analytic_measure(void *state, const xf_backend_op *op, double *ms, int *kernels,
                                  xf_cost_runs_verdict *verdict, xf_error *err)
{
    (void)err;
    *verdict = XF_COST_RUNS_CLEAN;
    const analytic_state *s = state;
    *kernels = (op->flops > 0 || op->bytes > 0) ? 1 : 0;
    /* GFLOP/s = 1e6 flops per ms; GB/s = 1e6 bytes per ms */
    double compute = op->flops / (s->cfg.peak_gflops * 1e6);
    double memory = op->bytes / (s->cfg.bandwidth_gbps * 1e6);
    *ms = (compute > memory ? compute : memory) + *kernels * s->cfg.kernel_overhead_us * 1e-3;
    return XF_OK;
}

/* --------------------------------------------- executor: the interpreter */

typedef struct analytic_exec {
    const xf_graph *g;
    xf_tensor *outputs; /* of the last run; g->n_outputs */
    int have_outputs;
} analytic_exec;

static void analytic_exec_free(void *exec)
{
    analytic_exec *e = exec;
    if (!e) return;
    for (int i = 0; e->outputs && i < e->g->n_outputs; i++) xf_tensor_free(&e->outputs[i]);
    xf_free(e->outputs);
    xf_free(e);
}

static xf_status analytic_exec_prepare(void *state, const xf_graph *g, void **exec, xf_error *err)
{
    (void)state;
    *exec = NULL;
    for (int i = 0; i < g->n_nodes; i++) { /* the interpreter runs If and LSTM */
        const xf_node *n = &g->nodes[i];
        if (n->op != XF_OP_OPAQUE || (n->opaque && n->opaque->kernel != XF_OPAQUE_NO_KERNEL))
            continue;
        char d[256];
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s is an opaque operator (%s) and cannot be executed",
                       xf_node_describe(g, i, d, sizeof d), n->opaque->op_type);
    }
    analytic_exec *e = xf_calloc(1, sizeof *e);
    if (e) e->outputs = xf_calloc((size_t)(g->n_outputs > 0 ? g->n_outputs : 1), sizeof *e->outputs);
    if (!e || !e->outputs) {
        xf_free(e);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing the executor");
    }
    e->g = g;
    *exec = e;
    return XF_OK;
}

static xf_status analytic_exec_run(void *exec, const xf_tensor *inputs, int n_inputs,
                                   xf_error *err)
{
    analytic_exec *e = exec;
    for (int i = 0; i < e->g->n_outputs; i++) xf_tensor_free(&e->outputs[i]);
    e->have_outputs = 0;
    xf_status st = xf_interp_run(e->g, inputs, n_inputs, e->outputs, err);
    if (!st) e->have_outputs = 1;
    return st;
}

static xf_status analytic_exec_output(void *exec, int i, xf_tensor *out, xf_error *err)
{
    analytic_exec *e = exec;
    const xf_tensor *src = &e->outputs[i];
    xf_status st = xf_tensor_alloc(out, src->dtype, &src->shape, err);
    if (st) return st;
    memcpy(out->data, src->data, xf_tensor_bytes(src));
    return XF_OK;
}

const xf_backend cm_backend_analytic = {
    .name = "analytic",
    .init = analytic_init,
    .free = analytic_free,
    .identity = analytic_identity,
    .measure = analytic_measure,
    .exec_prepare = analytic_exec_prepare,
    .exec_run = analytic_exec_run,
    .exec_output = analytic_exec_output,
    .exec_free = analytic_exec_free,
};

/* ------------------------------------------------------------ the roofline */

/* Best GFLOP/s of the reference matmul kernel on 256x256x256. */
static xf_status measure_peak(double *gflops, xf_error *err)
{
    enum { N = 256, RUNS = 5 };
    int64_t dims[2] = {N, N};
    xf_shape sh = xf_shape_make(2, dims);
    xf_tensor a = {0}, b = {0}, c = {0};
    xf_status st = xf_tensor_alloc(&a, XF_F32, &sh, err);
    if (!st) st = xf_tensor_alloc(&b, XF_F32, &sh, err);
    if (!st) st = xf_tensor_alloc(&c, XF_F32, &sh, err);
    double best = 1e30;
    if (!st) {
        xf_backend_op cfg = {0};
        cm_fill_random(&a, XF_OP_MATMUL, &cfg, 0, 7);
        cm_fill_random(&b, XF_OP_MATMUL, &cfg, 1, 7);
        const xf_tensor *in[2] = {&a, &b};
        xf_params p = xf_params_default();
        for (int r = 0; r < RUNS && !st; r++) {
            double t0 = xf_clock_now_ms();
            st = xf_op_run(XF_OP_MATMUL, &p, 2, in, 1, &c, err);
            double t = xf_clock_now_ms() - t0;
            if (t < best) best = t;
        }
    }
    xf_tensor_free(&a);
    xf_tensor_free(&b);
    xf_tensor_free(&c);
    if (st) return st;
    if (best < 1e-6) best = 1e-6;
    *gflops = 2.0 * N * N * N / (best * 1e6);
    return XF_OK;
}

/* Best GB/s of a 64 MiB memcpy (bytes read plus bytes written). */
static xf_status measure_bandwidth(double *gbps, xf_error *err)
{
    enum { RUNS = 5 };
    size_t n = (size_t)64 << 20;
    char *src = xf_malloc(n), *dst = xf_malloc(n);
    if (!src || !dst) {
        xf_free(src);
        xf_free(dst);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory measuring memory bandwidth");
    }
    memset(src, 1, n);
    memset(dst, 0, n);
    double best = 1e30;
    for (int r = 0; r < RUNS; r++) {
        double t0 = xf_clock_now_ms();
        memcpy(dst, src, n);
        double t = xf_clock_now_ms() - t0;
        if (t < best) best = t;
        src[r] = dst[n - 1 - (size_t)r]; /* keep the copies observable */
    }
    xf_free(src);
    xf_free(dst);
    if (best < 1e-6) best = 1e-6;
    *gbps = 2.0 * (double)n / (best * 1e6);
    return XF_OK;
}

xf_status cm_measure_roofline(double *peak_gflops, double *bandwidth_gbps,
                                        xf_error *err)
{
    xf_status st = XF_OK;
    if (!(*peak_gflops > 0)) st = measure_peak(peak_gflops, err);
    if (!st && !(*bandwidth_gbps > 0)) st = measure_bandwidth(bandwidth_gbps, err);
    return st;
}
