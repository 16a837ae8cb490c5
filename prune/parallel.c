/*
 * parallel.c — pruning's use of the -j threads and its progress.
 *
 * pr_parallel splits a range of rules into chunks that up to `threads`
 * threads (the calling one among them) take in turn (pr_parallel_start
 * and _finish let the calling thread do other work first: fetching rules
 * ahead, terms.c); the stages call it on
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

static void *work(void *arg)
{
    pr_worker *w = arg;
    pr_job *j = w->j;
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

void pr_parallel_start(pr_job *j, int helpers, size_t lo, size_t hi, pr_range_fn fn, void *ctx)
{
    if (helpers > PR_MAX_THREADS - 1) helpers = PR_MAX_THREADS - 1;
    if (helpers < 0) helpers = 0;
    size_t parts = 4 * ((size_t)helpers + 1);
    size_t chunk = hi > lo ? (hi - lo + parts - 1) / parts : 1;
    if (chunk > MAX_CHUNK) chunk = MAX_CHUNK;
    j->fn = fn;
    j->ctx = ctx;
    j->lo = lo;
    j->hi = hi > lo ? hi : lo;
    j->chunk = chunk;
    atomic_init(&j->next, 0);
    atomic_init(&j->failed, 0);
    pthread_mutex_init(&j->mu, NULL);
    j->failed_chunk = 0;
    j->st = XF_OK;
    xf_error_clear(&j->err);
    j->started = 0;
    size_t n_chunks = (j->hi - j->lo + chunk - 1) / chunk;
    for (int t = 1; t <= helpers && (size_t)t <= n_chunks; t++) {
        j->w[t] = (pr_worker){j, t};
        if (pthread_create(&j->tid[t], NULL, work, &j->w[t]) != 0) break;
        j->started = t;
    }
}

xf_status pr_parallel_finish(pr_job *j, int help, xf_error *err)
{
    j->w[0] = (pr_worker){j, 0};
    if (help || j->started == 0) work(&j->w[0]);
    for (int t = 1; t <= j->started; t++) pthread_join(j->tid[t], NULL);
    pthread_mutex_destroy(&j->mu);
    if (j->st != XF_OK && err) *err = j->err;
    return j->st;
}

xf_status pr_parallel(int threads, size_t lo, size_t hi, pr_range_fn fn, void *ctx, xf_error *err)
{
    if (hi <= lo) return XF_OK;
    if ((size_t)threads > hi - lo) threads = (int)(hi - lo);
    if (threads <= 1) return fn(ctx, 0, lo, hi, err);
    pr_job *j = xf_malloc(sizeof *j);
    if (!j) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (threads)");
    pr_parallel_start(j, threads - 1, lo, hi, fn, ctx);
    xf_status st = pr_parallel_finish(j, 1, err);
    xf_free(j);
    return st;
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
