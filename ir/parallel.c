/*
 * parallel.c — the one parallel loop over a range of indices (ir.h,
 * "parallel ranges"): chunks of the range that up to `threads` threads,
 * the calling one among them, take in turn. xf_parallel_start and
 * _finish split it in two so that the calling thread can do other work
 * while the helpers start on a range (pruning interns the terms of one
 * batch of rules while the next is fetched; xfergen's write stores one
 * batch of rules while the next is prepared). Every thread is joined
 * before _finish returns, also after a failure, and the failure reported
 * is the one of the lowest failed chunk, so the message does not depend
 * on the timing. A plan sets the chunk (the enumerator's batches want
 * small ones) and asks for each thread's CPU time in the loop (xfergen's
 * cpu-* stage rows).
 */
#include "ir.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Indices a thread takes at a time: at most this, and small enough that
 * every thread gets a few chunks of a small range. */
#define MAX_CHUNK 512

typedef struct worker {
    xf_parallel_job *j;
    int id;
    double cpu; /* CPU seconds in the loop */
} worker;

struct xf_parallel_job {
    xf_range_fn fn;
    void *ctx;
    size_t lo, hi, chunk;
    double *cpu; /* the plan's, NULL: not asked */
    int helpers; /* asked for: cpu has helpers + 1 entries */
    atomic_size_t next; /* next chunk to hand out */
    atomic_int failed;
    pthread_mutex_t mu;
    size_t failed_chunk; /* lowest failed chunk, under mu */
    xf_status st;
    xf_error err;
    int started; /* helpers 1..started run */
    worker w[XF_PARALLEL_MAX_THREADS];
    pthread_t tid[XF_PARALLEL_MAX_THREADS];
};

static void *work(void *arg)
{
    worker *w = arg;
    xf_parallel_job *j = w->j;
    double cpu0 = j->cpu ? xf_clock_thread_cpu() : 0;
    size_t n_chunks = (j->hi - j->lo + j->chunk - 1) / j->chunk;
    for (;;) {
        size_t c = atomic_fetch_add(&j->next, 1);
        if (c >= n_chunks || atomic_load(&j->failed)) break;
        size_t lo = j->lo + c * j->chunk, hi = lo + j->chunk < j->hi ? lo + j->chunk : j->hi;
        xf_error e;
        xf_error_clear(&e);
        xf_status st = j->fn(j->ctx, w->id, lo, hi, &e);
        if (st == XF_OK) continue;
        pthread_mutex_lock(&j->mu);
        if (j->st == XF_OK || c < j->failed_chunk) {
            j->st = st;
            j->err = e;
            j->failed_chunk = c;
        }
        pthread_mutex_unlock(&j->mu);
        atomic_store(&j->failed, 1);
        break;
    }
    if (j->cpu) w->cpu = xf_clock_thread_cpu() - cpu0;
    return NULL;
}

xf_status xf_parallel_start(xf_parallel_job **job, int helpers, size_t lo, size_t hi,
                            const xf_parallel_plan *plan, xf_range_fn fn, void *ctx,
                            xf_error *err)
{
    xf_parallel_job *j = *job = xf_malloc(sizeof *j);
    if (!j) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (threads)");
    if (helpers > XF_PARALLEL_MAX_THREADS - 1) helpers = XF_PARALLEL_MAX_THREADS - 1;
    if (helpers < 0) helpers = 0;
    size_t parts = 4 * ((size_t)helpers + 1);
    size_t chunk = hi > lo ? (hi - lo + parts - 1) / parts : 1;
    if (chunk > MAX_CHUNK) chunk = MAX_CHUNK;
    if (plan && plan->chunk > 0) chunk = plan->chunk;
    j->fn = fn;
    j->ctx = ctx;
    j->lo = lo;
    j->hi = hi > lo ? hi : lo;
    j->chunk = chunk;
    j->cpu = plan ? plan->cpu : NULL;
    j->helpers = helpers;
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, 0);
    pthread_mutex_init(&j->mu, NULL);
    j->failed_chunk = 0;
    j->st = XF_OK;
    xf_error_clear(&j->err);
    j->started = 0;
    for (int t = 0; t <= helpers; t++) j->w[t] = (worker){j, t, 0};
    size_t n_chunks = (j->hi - j->lo + chunk - 1) / chunk;
    for (int t = 1; t <= helpers && (size_t)t <= n_chunks; t++) {
        if (pthread_create(&j->tid[t], NULL, work, &j->w[t]) != 0) break;
        j->started = t;
    }
    return XF_OK;
}

xf_status xf_parallel_finish(xf_parallel_job *j, int help, xf_error *err)
{
    if (!j) return XF_OK;
    if (help || j->started == 0) work(&j->w[0]);
    for (int t = 1; t <= j->started; t++) pthread_join(j->tid[t], NULL);
    for (int t = 0; j->cpu && t <= j->helpers; t++) j->cpu[t] = j->w[t].cpu;
    pthread_mutex_destroy(&j->mu);
    xf_status st = j->st;
    if (st != XF_OK && err) *err = j->err;
    xf_free(j);
    return st;
}

xf_status xf_parallel(int threads, size_t lo, size_t hi, const xf_parallel_plan *plan,
                      xf_range_fn fn, void *ctx, xf_error *err)
{
    if (threads < 1) threads = 1;
    double *cpu = plan ? plan->cpu : NULL;
    if (cpu) memset(cpu, 0, (size_t)threads * sizeof *cpu);
    if (hi <= lo) return XF_OK;
    int n = (size_t)threads > hi - lo ? (int)(hi - lo) : threads;
    if (n <= 1) {
        double cpu0 = cpu ? xf_clock_thread_cpu() : 0;
        xf_status st = fn(ctx, 0, lo, hi, err);
        if (cpu) cpu[0] = xf_clock_thread_cpu() - cpu0;
        return st;
    }
    xf_parallel_job *j;
    xf_status st = xf_parallel_start(&j, n - 1, lo, hi, plan, fn, ctx, err);
    if (st != XF_OK) return st;
    return xf_parallel_finish(j, 1, err);
}
