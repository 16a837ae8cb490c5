/*
 * util.c — small helpers every backend needs: the median of repeated
 * timings and whether a busy machine disturbed them, the timing loop of
 * the CPU backends, the CPU model for backend identities, deterministic
 * input data that is valid for a given operator, and timing of the float32
 * reference kernel for operators a measured backend has no kernel for.
 */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double xf_costmodel_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double xf_cost_runs_median(double *runs, int n, int *disturbed)
{
    double med = xf_costmodel_median(runs, n);
    *disturbed = med > 4.0 * runs[0] && med - runs[0] > 0.05;
    return med;
}

xf_status xf_costmodel_time_runs(xf_status (*run)(void *user, xf_error *err), void *user,
                                 int warmup, int reps, double *times, double *ms, xf_error *err)
{
    *ms = 0;
    xf_status st = XF_OK;
    for (int w = 0; w < warmup && !st; w++) st = run(user, err);
    for (int a = 0, disturbed = 1; a < XF_COST_MEASURE_ATTEMPTS && disturbed && !st; a++) {
        for (int r = 0; r < reps && !st; r++) {
            double t0 = xf_clock_now_ms();
            st = run(user, err);
            times[r] = xf_clock_now_ms() - t0;
        }
        double m = st ? 0 : xf_cost_runs_median(times, reps, &disturbed);
        if (!st && (a == 0 || m < *ms)) *ms = m;
    }
    return st;
}

void xf_costmodel_cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown-cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *v = strchr(line, ':');
        if (!v) break;
        v++;
        while (*v == ' ' || *v == '\t') v++;
        size_t len = strcspn(v, "\n");
        /* '|' separates identity fields */
        snprintf(buf, n, "%.*s", (int)len, v);
        for (char *c = buf; *c; c++)
            if (*c == '|') *c = '/';
        break;
    }
    fclose(f);
}

/* Range of float data for input `idx` of op: positive where the op needs it. */
static void float_range(xf_op op, int idx, float *lo, float *hi)
{
    *lo = -1.0f, *hi = 1.0f;
    if ((op == XF_OP_SQRT || op == XF_OP_LOG || op == XF_OP_POW) && idx == 0) *lo = 0.5f, *hi = 1.5f;
    if ((op == XF_OP_DIV && idx == 1) || op == XF_OP_RECIPROCAL) *lo = 0.5f, *hi = 1.5f;
    if (op == XF_OP_BATCHNORM && idx == 4) *lo = 0.5f, *hi = 1.5f;
}

/* Integer data for input `idx` of op: indices within the gathered dim. */
static int64_t int_bound(xf_op op, const xf_backend_op *cfg, int idx)
{
    if (op == XF_OP_GATHER && idx == 1 && cfg && cfg->n_inputs > 0) {
        const xf_shape *d = &cfg->in_shapes[0];
        int ax = cfg->params ? cfg->params->axis : 0;
        if (ax < 0) ax += d->rank;
        if (ax >= 0 && ax < d->rank && d->dims[ax] > 0) return d->dims[ax];
        return 1;
    }
    if (op == XF_OP_POW && idx == 1) return 3;
    return 2;
}

void xf_costmodel_fill_random(xf_tensor *t, xf_op op, const xf_backend_op *cfg,
                              int input_index, uint64_t seed)
{
    xf_rng r;
    xf_rng_seed(&r, seed * 1000003u + (uint64_t)input_index);
    int64_t n = xf_shape_numel(&t->shape);
    if (t->dtype == XF_F32) {
        float lo, hi;
        float_range(op, input_index, &lo, &hi);
        float *d = t->data;
        for (int64_t i = 0; i < n; i++) d[i] = xf_rng_uniform(&r, lo, hi);
        return;
    }
    uint64_t bound = (uint64_t)int_bound(op, cfg, input_index);
    for (int64_t i = 0; i < n; i++) {
        uint64_t v = xf_rng_next(&r) % bound;
        switch (t->dtype) {
        case XF_I64: ((int64_t *)t->data)[i] = (int64_t)v; break;
        case XF_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
        case XF_BOOL: ((uint8_t *)t->data)[i] = (uint8_t)(v & 1u); break;
        default: break;
        }
    }
}

/* One run of the reference kernel, for xf_costmodel_time_runs. */
typedef struct reference_run {
    const xf_backend_op *op;
    int n_in;
    const xf_tensor **in;
    int n_out;
    xf_tensor *out;
} reference_run;

static xf_status run_reference(void *user, xf_error *err)
{
    const reference_run *r = user;
    return xf_op_run(r->op->op, r->op->params, r->n_in, r->in, r->n_out, r->out, err);
}

xf_status xf_costmodel_time_reference(const xf_backend_config *bc, const xf_backend_op *op,
                                      double *ms, xf_error *err)
{
    *ms = 0;
    xf_status st = XF_OK;
    int n_in = op->n_inputs, n_out = op->n_outputs;
    xf_tensor *in = xf_calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *in);
    const xf_tensor **inp = xf_calloc((size_t)(n_in > 0 ? n_in : 1), sizeof *inp);
    xf_tensor *out = xf_calloc((size_t)(n_out > 0 ? n_out : 1), sizeof *out);
    double *times = xf_calloc((size_t)bc->reps, sizeof *times);
    if (!in || !inp || !out || !times) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing the reference %s kernel",
                     xf_op_get(op->op)->name);
        goto out;
    }
    for (int i = 0; i < n_in; i++) {
        if (op->in_dtypes[i] == XF_DTYPE_INVALID) continue;
        st = xf_tensor_alloc(&in[i], op->in_dtypes[i], &op->in_shapes[i], err);
        if (st) goto out;
        xf_costmodel_fill_random(&in[i], op->op, op, i, 1);
        inp[i] = &in[i];
    }
    for (int i = 0; i < n_out; i++) {
        st = xf_tensor_alloc(&out[i], op->out_dtypes[i], &op->out_shapes[i], err);
        if (st) goto out;
    }
    reference_run rr = {op, n_in, inp, n_out, out};
    st = xf_costmodel_time_runs(run_reference, &rr, bc->warmup, bc->reps, times, ms, err);
out:
    if (in)
        for (int i = 0; i < n_in; i++) xf_tensor_free(&in[i]);
    if (out)
        for (int i = 0; i < n_out; i++) xf_tensor_free(&out[i]);
    xf_free(in);
    xf_free(inp);
    xf_free(out);
    xf_free(times);
    return st;
}
