/*
 * parallel.c — pruning's use of the -j threads and its progress.
 *
 * pr_parallel splits a range of rules into chunks that up to `threads`
 * threads (the calling one among them) take in turn; the stages call it on
 * one block of rules at a time for the work that reads only what earlier
 * blocks decided, and apply the results in index order on the calling
 * thread, so the verdicts do not depend on the thread count. Every thread
 * is joined before it returns, also after a failure, and the failure
 * reported is the one of the lowest chunk (the same message whatever the
 * timing).
 *
 * pr_progress_* call the caller's progress callback (xf_prune_options) with
 * the rate and the ETA of the current step, from the calling thread only.
 */
#include "prune/prune_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Rules a thread takes at a time: at most this, and small enough that
 * every thread gets a few chunks of a small range. */
#define MAX_CHUNK 512

typedef struct job {
    pr_range_fn fn;
    void *ctx;
    size_t lo, hi, chunk;
    atomic_size_t next; /* next chunk to hand out */
    atomic_int failed;
    pthread_mutex_t mu;
    size_t failed_chunk; /* lowest failed chunk, under mu */
    xf_status st;
    xf_error err;
} job;

typedef struct worker {
    job *j;
    int id;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    job *j = w->j;
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
    return NULL;
}

xf_status pr_parallel(int threads, size_t lo, size_t hi, pr_range_fn fn, void *ctx, xf_error *err)
{
    if (hi <= lo) return XF_OK;
    if (threads > PR_MAX_THREADS) threads = PR_MAX_THREADS;
    if ((size_t)threads > hi - lo) threads = (int)(hi - lo);
    if (threads <= 1) return fn(ctx, 0, lo, hi, err);
    size_t chunk = (hi - lo + 4 * (size_t)threads - 1) / (4 * (size_t)threads);
    if (chunk > MAX_CHUNK) chunk = MAX_CHUNK;
    job j = {.fn = fn, .ctx = ctx, .lo = lo, .hi = hi, .chunk = chunk, .st = XF_OK};
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    xf_error_clear(&j.err);
    pthread_mutex_init(&j.mu, NULL);
    worker w[PR_MAX_THREADS];
    pthread_t tid[PR_MAX_THREADS];
    int started = 0; /* helpers 1..started run */
    for (int t = 0; t < threads; t++) w[t] = (worker){&j, t};
    for (int t = 1; t < threads && pthread_create(&tid[t], NULL, work, &w[t]) == 0; t++)
        started = t;
    work(&w[0]);
    for (int t = 1; t <= started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.mu);
    if (j.st != XF_OK && err) *err = j.err;
    return j.st;
}

size_t pr_block_size(size_t n, size_t min, size_t max)
{
    size_t b = n / 16;
    return b < min ? min : b > max ? max : b;
}

void pr_progress_init(pr_progress *p, const xf_prune_options *o)
{
    memset(p, 0, sizeof *p);
    p->o = o;
    p->t0 = xf_clock_now();
}

static void report(pr_progress *p, size_t done, double now)
{
    p->last = now;
    double el = now - p->step_t0;
    xf_prune_progress r = {p->step, done, p->total, 0, -1, now - p->t0};
    if (el > 0 && done > 0) {
        r.per_s = (double)done / el;
        r.eta_s = (double)(p->total - done) / r.per_s;
    }
    p->o->on_progress(p->o->progress_user, &r);
}

void pr_progress_step(pr_progress *p, const char *step, size_t total)
{
    if (!p->o->on_progress) return;
    p->step = step;
    p->total = total;
    p->step_t0 = xf_clock_now();
    report(p, 0, p->step_t0);
}

void pr_progress_tick(pr_progress *p, size_t done)
{
    if (!p->o->on_progress) return;
    double now = xf_clock_now();
    if (now - p->last >= p->o->progress_every_s) report(p, done, now);
}
