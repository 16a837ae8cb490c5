/*
 * trace.c — the search's progress kept for the report (a page draws it):
 * the progress callbacks of the searches and the learning agents pass
 * through here, where each call (about one a second) becomes a point of
 * best cost against steps and seconds before the caller's own callback
 * sees it; each search's start and end are added when it is over, so even
 * a search shorter than a second has its two points. Past MAX_POINTS the
 * points are thinned (every other one kept). A point the callbacks could
 * not keep (out of memory; they cannot fail) fails the search when it
 * ends, as every other allocation failure does.
 */
#include <string.h>

#include "optimize_internal.h"

#define MAX_POINTS 4096

/* Every other point kept (the even indices). */
static void thin(opt_run *s)
{
    xf_optimize_report *r = s->r;
    int k = 0;
    for (int i = 0; i < r->n_trace; i += 2) r->trace[k++] = r->trace[i];
    r->n_trace = k;
    s->trace_first = (s->trace_first + 1) / 2; /* the kept points before it */
}

/* Appends a point; 0 when out of memory (the caller decides what that means). */
static int add(opt_run *s, double seconds, int64_t steps, double best_ms)
{
    xf_optimize_report *r = s->r;
    if (r->n_trace >= MAX_POINTS) thin(s);
    if (r->n_trace == s->trace_cap) {
        int cap = s->trace_cap ? 2 * s->trace_cap : 64;
        xf_optimize_trace_point *p = xf_realloc(r->trace, (size_t)cap * sizeof *p);
        if (!p) return 0;
        r->trace = p;
        s->trace_cap = cap;
    }
    r->trace[r->n_trace++] =
        (xf_optimize_trace_point){s->trace_search, seconds, steps, best_ms};
    return 1;
}

void opt_trace_begin(opt_run *s, int search)
{
    s->trace_search = search;
    s->trace_lost = 0;
    s->trace_first = s->r->n_trace;
    s->trace_t0 = xf_clock_now();
}

xf_status opt_trace_end(opt_run *s, const xf_search_result *res, double seconds, xf_error *err)
{
    xf_optimize_report *r = s->r;
    if (r->n_trace >= MAX_POINTS - 2) thin(s); /* both points stay */
    if (s->trace_lost || !add(s, 0, 0, res->initial_ms) ||
        !add(s, seconds, res->expanded, res->best_ms))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording the search's progress");
    /* the start point goes before the points the callbacks added */
    xf_optimize_trace_point start = r->trace[r->n_trace - 2];
    int first = s->trace_first, n = r->n_trace - 2 - first;
    memmove(&r->trace[first + 1], &r->trace[first], (size_t)n * sizeof *r->trace);
    r->trace[first] = start;
    return XF_OK;
}

void opt_trace_search(void *user, int expanded, double best_ms, double initial_ms)
{
    opt_run *s = user;
    if (!add(s, xf_clock_now() - s->trace_t0, expanded, best_ms)) s->trace_lost = 1;
    if (s->o.search_progress) s->o.search_progress(s->o.user, expanded, best_ms, initial_ms);
}

void opt_trace_ppo(void *user, const xf_ppo_progress *p)
{
    opt_run *s = user;
    if (!add(s, p->seconds, p->steps, p->best_ms)) s->trace_lost = 1;
    if (s->o.ppo_progress) s->o.ppo_progress(s->o.user, p);
}

void opt_trace_wm(void *user, const xf_wm_progress *p)
{
    opt_run *s = user;
    if (!add(s, p->seconds, p->real_steps, p->best_ms)) s->trace_lost = 1;
    if (s->o.wm_progress) s->o.wm_progress(s->o.user, p);
}
