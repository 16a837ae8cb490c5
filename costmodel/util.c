/*
 * util.c — small helpers every backend needs: the median of repeated
 * timings and whether the machine disturbed them (runs whose threads
 * waited for a core another process held, read from the scheduler's
 * per-thread statistics; runs other running tasks shared the machine
 * with, read from the machine's count of running tasks), the timing loop
 * of the CPU backends, the CPU model for backend identities, deterministic
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
#include <sys/sysinfo.h>
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

xf_cost_runs_verdict xf_cost_runs_summary(double *runs, const unsigned char *preempted,
                                          const unsigned char *shared, int n, double *ms)
{
    double fastest = runs[0];
    int clean = 0, beside = 0;
    for (int r = 0; r < n; r++) {
        if (runs[r] < fastest) fastest = runs[r];
        if (preempted[r]) continue;
        beside += shared[r] != 0;
        runs[clean++] = runs[r];
    }
    int disturbed = 1;
    if (2 * clean >= n) *ms = xf_cost_runs_median(runs, clean, &disturbed);
    if (disturbed) {
        *ms = fastest;
        return XF_COST_RUNS_PREEMPTED;
    }
    return 2 * beside > clean ? XF_COST_RUNS_SHARED : XF_COST_RUNS_CLEAN;
}

/* What is read around each timed run. Per thread of the process (those
 * alive after the warm-up: the kernel's thread pool exists by then), how
 * long it waited for a core (/proc/self/task/TID/schedstat, second field,
 * ns: a oneDNN worker woken while another process holds the other core
 * waits there, as does a thread another process preempted) and whether it
 * is running (.../stat, the state after the name). For the machine, how
 * many tasks are running (/proc/loadavg, "running/total"), the process's
 * own among them. Without /proc the involuntary context switches of the
 * whole process stand in for the waits (getrusage), the last minute's load
 * average (sysinfo) for the running tasks, and the process's threads are
 * not told apart. */
enum { WATCH_MAX_THREADS = 64 };
typedef struct watch {
    int n, sched_fd[WATCH_MAX_THREADS], stat_fd[WATCH_MAX_THREADS];
    int loadavg_fd;      /* -1 when /proc/loadavg cannot be read */
    double cores_beside; /* the machine's cores the measurement's threads leave (>= 1) */
} watch;

static void watch_open(watch *w, const xf_backend_config *cfg)
{
    w->n = 0;
    w->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    w->cores_beside = cores > cfg->threads ? (double)(cores - cfg->threads) : 1.0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL && w->n < WATCH_MAX_THREADS;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        w->sched_fd[w->n] = fd;
        w->stat_fd[w->n] = open(path, O_RDONLY | O_CLOEXEC);
        w->n++;
    }
    closedir(d);
}

static void watch_close(watch *w)
{
    for (int i = 0; i < w->n; i++) {
        close(w->sched_fd[i]);
        if (w->stat_fd[i] >= 0) close(w->stat_fd[i]);
    }
    if (w->loadavg_fd >= 0) close(w->loadavg_fd);
    w->n = 0;
}

/* The start of a /proc file read again through fd, or 0 bytes. */
static ssize_t read_again(int fd, char *buf, size_t n)
{
    ssize_t k = fd >= 0 ? pread(fd, buf, n - 1, 0) : -1;
    buf[k > 0 ? k : 0] = 0;
    return k;
}

/* Milliseconds the threads have waited so far (a thread that has exited
 * reads nothing and counts 0). */
static double waits_ms(const watch *w)
{
    if (w->n == 0) {
        struct rusage ru;
        /* a preemption costs a scheduler time slice: count each as 1 ms */
        return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_nivcsw : 0;
    }
    double ns = 0;
    for (int i = 0; i < w->n; i++) {
        char buf[96];
        if (read_again(w->sched_fd[i], buf, sizeof buf) <= 0) continue;
        char *end;
        strtoull(buf, &end, 10); /* time on the cpu */
        ns += (double)strtoull(end, NULL, 10);
    }
    return ns * 1e-6;
}

/* How many of the process's threads are running or waiting to run; -1
 * when no thread's state can be read. The name in parentheses may hold
 * anything: the state follows its last ')'. */
static int own_running(const watch *w)
{
    int running = -1;
    for (int i = 0; i < w->n; i++) {
        char buf[96];
        if (read_again(w->stat_fd[i], buf, sizeof buf) <= 0) continue;
        const char *p = strrchr(buf, ')');
        if (!p || p[1] != ' ') continue;
        running = (running < 0 ? 0 : running) + (p[2] == 'R');
    }
    return running;
}

/* Tasks running or waiting to run besides the measurement's own threads
 * (the calling thread and, up to cfg->threads in all, the process's other
 * running ones: a kernel's workers), of the whole machine or, with
 * XF_COST_NEIGHBOURS_PROCESS, of this process only. */
static double others_running(const watch *w, const xf_backend_config *cfg)
{
    int one_thread = cfg->threads == 1 && cfg->neighbours == XF_COST_NEIGHBOURS_MACHINE;
    int own = one_thread ? 1 : own_running(w); /* the calling thread is one */
    int mine = own < 1 || own > cfg->threads ? cfg->threads : own;
    if (cfg->neighbours == XF_COST_NEIGHBOURS_PROCESS) return own > mine ? own - mine : 0;
    char buf[128];
    int all;
    if (read_again(w->loadavg_fd, buf, sizeof buf) > 0 &&
        sscanf(buf, "%*s %*s %*s %d/", &all) == 1) /* "0.20 0.18 0.12 1/80 11206" */
        return all > mine ? all - mine : 0;
    struct sysinfo si;
    if (sysinfo(&si) != 0) return 0;
    double load = (double)si.loads[0] / (double)(1 << SI_LOAD_SHIFT);
    return load > cfg->threads ? load - cfg->threads : 0;
}

/* Other tasks ran beside the measurement on at least half the cores its
 * threads leave (on 2 cores at one thread: any other task). One task on a
 * many-core machine takes little of the caches and memory bandwidth a
 * kernel uses; on 2 cores it is the sibling of the measured core. */
static int ran_shared(const watch *w, const xf_backend_config *cfg)
{
    double others = others_running(w, cfg);
    return others >= 1 && 2 * others >= w->cores_beside;
}

/* A run was disturbed when its threads waited for a core for a quarter of
 * its time and more than 5 us (waking a worker on an idle core takes a
 * few microseconds; a busy core makes it wait a time slice, milliseconds). */
static int run_waited(double wait_ms, double run_ms)
{
    return wait_ms > 0.25 * run_ms && wait_ms > 0.005;
}

xf_status cm_time_runs(xf_status (*run)(void *user, xf_error *err), void *user,
                       const xf_backend_config *cfg, double *times, double *ms,
                       xf_cost_runs_verdict *verdict, xf_error *err)
{
    *ms = 0;
    *verdict = XF_COST_RUNS_PREEMPTED;
    int reps = cfg->reps;
    unsigned char *pre = xf_calloc((size_t)reps, 2), *shared = pre ? pre + reps : NULL;
    if (!pre) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing a kernel");
    xf_status st = XF_OK;
    for (int w = 0; w < cfg->warmup && !st; w++) st = run(user, err);
    watch w;
    watch_open(&w, cfg);
    for (int a = 0; a < XF_COST_MEASURE_ATTEMPTS && *verdict == XF_COST_RUNS_PREEMPTED && !st;
         a++) {
        /* the tasks beside a run: those seen just before or just after it */
        int beside = ran_shared(&w, cfg);
        for (int r = 0; r < reps && !st; r++) {
            double w0 = waits_ms(&w), t0 = xf_clock_now_ms();
            st = run(user, err);
            times[r] = xf_clock_now_ms() - t0;
            pre[r] = (unsigned char)run_waited(waits_ms(&w) - w0, times[r]);
            int after = ran_shared(&w, cfg);
            shared[r] = (unsigned char)(beside || after);
            beside = after;
        }
        double m = 0;
        if (st) break;
        *verdict = xf_cost_runs_summary(times, pre, shared, reps, &m);
        /* a median not preempted; else the fastest run of any attempt
         * (other load only ever slows a run) */
        if (a == 0 || *verdict != XF_COST_RUNS_PREEMPTED || m < *ms) *ms = m;
    }
    watch_close(&w);
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
                            double *ms, xf_cost_runs_verdict *verdict, xf_error *err)
{
    *ms = 0;
    *verdict = XF_COST_RUNS_CLEAN;
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
    st = cm_time_runs(run_reference, &rr, bc, times, ms, verdict, err);
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
