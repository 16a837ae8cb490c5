/*
 * util.c — small helpers every backend needs: the median of repeated
 * timings and whether a busy machine disturbed them (runs whose threads
 * waited for a core another process held, read from the scheduler's
 * per-thread statistics), the timing loop of
 * the CPU backends, the CPU model for backend identities, deterministic
 * input data that is valid for a given operator, and timing of the float32
 * reference kernel for operators a measured backend has no kernel for.
 */
#include "backend_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cm_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double xf_cost_runs_median(double *runs, int n, int *disturbed)
{
    double med = cm_median(runs, n);
    *disturbed = med > 4.0 * runs[0] && med - runs[0] > 0.05;
    return med;
}

int xf_cost_runs_summary(double *runs, const unsigned char *preempted, int n, double *ms)
{
    double fastest = runs[0];
    int clean = 0;
    for (int r = 0; r < n; r++) {
        if (runs[r] < fastest) fastest = runs[r];
        if (!preempted[r]) runs[clean++] = runs[r];
    }
    int disturbed = 1;
    if (2 * clean >= n) *ms = xf_cost_runs_median(runs, clean, &disturbed);
    if (disturbed) *ms = fastest;
    return !disturbed;
}

/* How long the process's threads waited for a core: the sum over its
 * threads of the run-queue delay the kernel keeps per thread
 * (/proc/self/task/TID/schedstat, second field, ns). A oneDNN worker woken
 * while another process holds the other core waits there, as does a thread
 * another process preempted. The threads are those alive after the warm-up
 * (the kernel's thread pool exists by then); without /proc the involuntary
 * context switches of the whole process stand in (getrusage). */
enum { WAIT_MAX_THREADS = 64 };
typedef struct waits {
    int n, fd[WAIT_MAX_THREADS];
} waits;

static void waits_open(waits *w)
{
    w->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL && w->n < WAIT_MAX_THREADS;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) w->fd[w->n++] = fd;
    }
    closedir(d);
}

static void waits_close(waits *w)
{
    for (int i = 0; i < w->n; i++) close(w->fd[i]);
    w->n = 0;
}

/* Milliseconds the threads have waited so far (a thread that has exited
 * reads nothing and counts 0). */
static double waits_ms(const waits *w)
{
    if (w->n == 0) {
        struct rusage ru;
        /* a preemption costs a scheduler time slice: count each as 1 ms */
        return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_nivcsw : 0;
    }
    double ns = 0;
    for (int i = 0; i < w->n; i++) {
        char buf[96];
        ssize_t k = pread(w->fd[i], buf, sizeof buf - 1, 0);
        if (k <= 0) continue;
        buf[k] = 0;
        char *end;
        strtoull(buf, &end, 10); /* time on the cpu */
        ns += (double)strtoull(end, NULL, 10);
    }
    return ns * 1e-6;
}

/* A run was disturbed when its threads waited for a core for a quarter of
 * its time and more than 5 us (waking a worker on an idle core takes a
 * few microseconds; a busy core makes it wait a time slice, milliseconds). */
static int run_waited(double wait_ms, double run_ms)
{
    return wait_ms > 0.25 * run_ms && wait_ms > 0.005;
}

xf_status cm_time_runs(xf_status (*run)(void *user, xf_error *err), void *user,
                                 int warmup, int reps, double *times, double *ms, int *disturbed,
                                 xf_error *err)
{
    *ms = 0;
    *disturbed = 1;
    unsigned char *pre = xf_calloc((size_t)reps, 1);
    if (!pre) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing a kernel");
    xf_status st = XF_OK;
    for (int w = 0; w < warmup && !st; w++) st = run(user, err);
    waits w;
    waits_open(&w);
    for (int a = 0; a < XF_COST_MEASURE_ATTEMPTS && *disturbed && !st; a++) {
        for (int r = 0; r < reps && !st; r++) {
            double w0 = waits_ms(&w), t0 = xf_clock_now_ms();
            st = run(user, err);
            times[r] = xf_clock_now_ms() - t0;
            pre[r] = (unsigned char)run_waited(waits_ms(&w) - w0, times[r]);
        }
        double m = 0;
        if (st) break;
        *disturbed = !xf_cost_runs_summary(times, pre, reps, &m);
        /* a clean attempt's median; else the fastest run of any attempt
         * (other load only ever slows a run) */
        if (a == 0 || !*disturbed || m < *ms) *ms = m;
    }
    waits_close(&w);
    xf_free(pre);
    return st;
}

void cm_cpu_model(char *buf, size_t n)
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

void cm_fill_random(xf_tensor *t, xf_op op, const xf_backend_op *cfg,
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
        /* carried dtypes: movement ops and casts time the same on any values */
        case XF_F16: ((uint16_t *)t->data)[i] = xf_f32_to_f16((float)v); break;
        case XF_F64: ((double *)t->data)[i] = (double)v; break;
        case XF_I8: ((int8_t *)t->data)[i] = (int8_t)(v & 0x7fu); break;
        case XF_U8: ((uint8_t *)t->data)[i] = (uint8_t)(v & 0xffu); break;
        default: break;
        }
    }
}

/* One run of the reference kernel, for cm_time_runs. */
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

xf_status cm_time_reference(const xf_backend_config *bc, const xf_backend_op *op,
                                      double *ms, int *disturbed, xf_error *err)
{
    *ms = 0;
    *disturbed = 0;
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
        cm_fill_random(&in[i], op->op, op, i, 1);
        inp[i] = &in[i];
    }
    for (int i = 0; i < n_out; i++) {
        st = xf_tensor_alloc(&out[i], op->out_dtypes[i], &op->out_shapes[i], err);
        if (st) goto out;
    }
    reference_run rr = {op, n_in, inp, n_out, out};
    st = cm_time_runs(run_reference, &rr, bc->warmup, bc->reps, times, ms, disturbed,
                                err);
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
