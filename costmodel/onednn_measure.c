/*
 * onednn_measure.c — times one operator configuration on oneDNN.
 *
 * The kernel is built as the executor would build it, except that every
 * input arrives in the layout its primitive prefers (a convolution between
 * two convolutions reads and writes blocked data, and its weights were
 * reordered once, ahead of time) and there is no constant data (a pow
 * exponent is taken as 2). Inputs are filled with the front end's random
 * data (valid per op: positive variances, in-range indices); inputs in a
 * blocked layout get uniform values in [-1, 1). Then warm-up runs and
 * timed runs; the median is reported, with the number of primitives one
 * run executes (cm_time_runs: runs another process preempted
 * are timed again; without an attempt clear of them the fastest run is
 * reported as preempted, and a median timed beside other running tasks as
 * shared; the front end caches neither). View ops that move no data cost
 * 0 ms and 0 kernels.
 * Configurations oneDNN has no kernel for return XF_ERR_UNSUPPORTED, and
 * the front end times the reference kernel instead.
 */
#include <stdlib.h>
#include <string.h>

#include "onednn_internal.h"

/* 64-byte aligned, at least 64 bytes. */
static void *buffer(size_t bytes)
{
    void *p = NULL;
    size_t n = (bytes + 63) / 64 * 64;
    p = xf_aligned_alloc(64, n ? n : 64);
    if (!p) return NULL;
    return p;
}

static void fill_input(const ox_kernel *k, const xf_backend_op *op, int i, void *buf,
                       size_t bytes)
{
    xf_tensor t = {k->in[i].dtype, k->in[i].shape, buf};
    if (k->in[i].dtype != XF_F32 || cm_onednn_md_is_plain(&k->in_md[i])) {
        cm_fill_random(&t, op->op, op, i, 0x5eedULL + (uint64_t)i);
        return;
    }
    xf_rng r;
    xf_rng_seed(&r, 0x5eedULL + (uint64_t)i);
    float *f = buf;
    for (size_t e = 0; e < bytes / sizeof(float); e++) f[e] = xf_rng_uniform(&r, -1.0f, 1.0f);
}

static size_t value_bytes(xf_dtype dt, const xf_shape *s, int has_md,
                          const dnnl_memory_desc_t *md)
{
    if (dt == XF_F32 && has_md) return cm_onednn_md_bytes(md);
    size_t n = (size_t)xf_shape_numel(s) * xf_dtype_size(dt);
    return n ? n : 1;
}

/* One run of k, for cm_time_runs. */
static xf_status run_kernel(void *k, xf_error *err)
{
    return cm_onednn_kernel_run(k, err);
}

static xf_status time_kernel(ox_kernel *k, const xf_backend_op *op, double *ms,
                             xf_cost_runs_verdict *verdict, xf_error *err)
{
    const ox_state *st = k->st;
    void **in = xf_calloc((size_t)(k->n_in ? k->n_in : 1), sizeof *in);
    void **out = xf_calloc((size_t)(k->n_out ? k->n_out : 1), sizeof *out);
    double *t = xf_calloc((size_t)st->cfg.reps, sizeof *t);
    xf_status s = XF_OK;
    if (!in || !out || !t) {
        s = XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory timing %s",
                    xf_op_get(k->op)->name);
        goto out;
    }
    for (int i = 0; i < k->n_in && s == XF_OK; i++) {
        if (k->in[i].dtype == XF_DTYPE_INVALID) continue;
        size_t b = value_bytes(k->in[i].dtype, &k->in[i].shape, k->in_has_md[i], &k->in_md[i]);
        in[i] = buffer(b);
        if (!in[i]) s = XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory for %zu bytes", b);
        else fill_input(k, op, i, in[i], b);
    }
    for (int j = 0; j < k->n_out && s == XF_OK; j++) {
        size_t b = value_bytes(k->out_dt[j], &k->out_sh[j], 1, &k->out_md[j]);
        out[j] = buffer(b);
        if (!out[j]) s = XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory for %zu bytes", b);
        else memset(out[j], 0, b);
    }
    if (s == XF_OK) s = cm_onednn_kernel_bind(k, in, out, err);
    if (s == XF_OK)
        s = cm_time_runs(run_kernel, k, &st->cfg, t, ms, verdict, err);
out:
    for (int i = 0; in && i < k->n_in; i++) xf_aligned_free(in[i]);
    for (int j = 0; out && j < k->n_out; j++) xf_aligned_free(out[j]);
    xf_free(in);
    xf_free(out);
    xf_free(t);
    return s;
}

xf_status cm_onednn_measure(void *state, const xf_backend_op *op, double *ms, int *kernels,
                            xf_cost_runs_verdict *verdict, xf_error *err)
{
    const ox_state *st = state;
    *ms = 0;
    *kernels = 0;
    *verdict = XF_COST_RUNS_CLEAN;
    cm_onednn_set_threads(st);
    ox_io *in = xf_calloc((size_t)(op->n_inputs ? op->n_inputs : 1), sizeof *in);
    if (!in) return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory");
    for (int i = 0; i < op->n_inputs; i++)
        in[i] = (ox_io){op->in_dtypes[i], op->in_shapes[i], NULL, NULL};
    ox_kernel k;
    xf_status s = cm_onednn_kernel_init(&k, st, op->op, op->params, op->n_inputs, in, op->n_outputs,
                                 op->out_dtypes, op->out_shapes, 1, err);
    xf_free(in);
    if (s != XF_OK) return s;
    s = cm_onednn_kernel_build_native(&k, err);
    if (s == XF_OK && !k.alias) {
        s = time_kernel(&k, op, ms, verdict, err);
        if (s == XF_OK) *kernels = cm_onednn_kernel_count(&k);
    }
    cm_onednn_kernel_free(&k);
    return s;
}
