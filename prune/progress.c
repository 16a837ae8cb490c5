/*
 * progress.c — how pruning cuts its rules into blocks for the -j threads,
 * and its progress.
 *
 * The stages run one block of rules at a time on the threads (xf_parallel,
 * ir.h) for the work that reads only what earlier blocks decided, and apply
 * the results in index order on the calling thread, so the verdicts do not
 * depend on the thread count; pr_block_size says how large a block is.
 *
 * pr_progress_* call the caller's progress callback (xf_prune_options) with
 * the rate and the ETA of the current step, from the calling thread only.
 */
#include "prune/prune_internal.h"

#include <string.h>

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
