/*
 * timing.c — alternating timing of models in the target.
 *
 * Every model is loaded and warmed up, then the models take turns: in each
 * of `rounds` rounds every model runs `reps` times in a row (each run timed
 * on its own), and the model that starts a round rotates so none always
 * follows the same neighbour. Slow drift of the machine (the other core
 * busy, frequency changes) then touches all models alike within a round.
 *
 * A model's ratio to model 0 is the median over rounds of the ratio of the
 * two models' per-round medians: pairing within a round cancels the drift,
 * the per-round median drops single slow runs (preemption), and the median
 * over rounds drops a disturbed round. Its noise bound is the distribution-
 * free 95% interval of a median from order statistics: with n rounds,
 * [x(k), x(n+1-k)] where k is the largest with P(Binomial(n, 1/2) < k) <=
 * 2.5% (n = 21: the 6th smallest and the 6th largest ratio). It needs no
 * model of the timing noise (which is skewed: a busy neighbour only ever
 * slows a run), no resampling, and it widens by itself when rounds
 * disagree. The self check times a second session of model 0 in the same
 * rotation, so the interval of a difference that does not exist is
 * measured under the very same conditions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "target/model.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0 .. n), sorting v in place. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The largest k (1-based) with P(Binomial(n, 1/2) < k) <= 2.5%: then
 * [x(k), x(n+1-k)] of n sorted independent draws holds their median with
 * probability >= 95%, whatever their distribution. 1 (the range) when n is
 * too small for that; the normal approximation past 60 draws. */
static int order_k(int n)
{
    if (n > 60) {
        int k = (int)floor(0.5 * n - 0.98 * sqrt((double)n));
        return k < 1 ? 1 : k;
    }
    double p = ldexp(1.0, -n), cdf = 0; /* P(B = i), from i = 0 */
    int k = 0;
    for (int i = 0; i < n; i++) {
        cdf += p;
        if (cdf > 0.025) break;
        k = i + 1;
        p = p * (n - i) / (i + 1);
    }
    return k < 1 ? 1 : k;
}

/* Median of v[0 .. n) and its 95% interval (sorts v). */
static double median_interval(double *v, int n, double *lo, double *hi)
{
    double m = median(v, n);
    int k = order_k(n);
    *lo = v[k - 1];
    *hi = v[n - k];
    return m;
}

typedef struct timer {
    xf_target_model **m;
    int n;          /* models, the self check's copy of model 0 included */
    int rounds;
    int *reps;      /* per model */
    double **runs;  /* per model: rounds * reps[i] run times, ms */
    double *round_med; /* n * rounds */
} timer;

#define WARM_KEPT 31 /* the last warm-up runs whose median sizes a round */

/* Runs every model for o->warmup_ms (at least 2 runs) and sizes its share
 * of a round from the median of its last warm-up runs (the first runs of a
 * session and a preempted run would size it wrongly). */
static xf_status warm_up(timer *tm, const xf_target_timing_options *o, xf_error *err)
{
    for (int i = 0; i < tm->n; i++) {
        double t0 = xf_clock_now_ms(), kept[WARM_KEPT];
        int k = 0;
        for (; k < 2 || xf_clock_now_ms() - t0 < o->warmup_ms; k++) {
            double s = xf_clock_now_ms();
            xf_status st = xf_target_model_run(tm->m[i], err);
            if (st != XF_OK) return st;
            kept[k % WARM_KEPT] = xf_clock_now_ms() - s;
        }
        double run_ms = median(kept, k < WARM_KEPT ? k : WARM_KEPT);
        int reps = o->reps;
        if (reps <= 0) {
            double r = o->round_ms / (run_ms > 1e-3 ? run_ms : 1e-3);
            reps = r < 1 ? 1 : r > 100000 ? 100000 : (int)r;
        }
        tm->reps[i] = reps;
        tm->runs[i] = xf_malloc((size_t)reps * (size_t)tm->rounds * sizeof(double));
        if (!tm->runs[i]) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for run times");
    }
    return XF_OK;
}

static xf_status alternate(timer *tm, xf_error *err)
{
    for (int r = 0; r < tm->rounds; r++) {
        for (int k = 0; k < tm->n; k++) {
            int i = (r + k) % tm->n;
            double *t = tm->runs[i] + (size_t)r * (size_t)tm->reps[i];
            for (int j = 0; j < tm->reps[i]; j++) {
                double s = xf_clock_now_ms();
                xf_status st = xf_target_model_run(tm->m[i], err);
                if (st != XF_OK) return st;
                t[j] = xf_clock_now_ms() - s;
            }
        }
    }
    return XF_OK;
}

/* Fills res for model i against model 0 (round medians already made);
 * scratch holds the most timed runs of any model. */
static void summarise(timer *tm, int i, double *scratch, xf_target_timing *res)
{
    int R = tm->rounds;
    memset(res, 0, sizeof *res);
    res->runs = R * tm->reps[i];
    memcpy(scratch, tm->runs[i], (size_t)res->runs * sizeof *scratch);
    res->median_ms = median(scratch, res->runs);
    for (int r = 0; r < R; r++) scratch[r] = tm->round_med[i * R + r] / tm->round_med[r];
    res->ratio = median_interval(scratch, R, &res->lo, &res->hi);
    double up = res->hi - res->ratio, down = res->ratio - res->lo;
    res->noise = up > down ? up : down;
}

static void round_medians(timer *tm)
{
    for (int i = 0; i < tm->n; i++)
        for (int r = 0; r < tm->rounds; r++) {
            double *t = tm->runs[i] + (size_t)r * (size_t)tm->reps[i];
            tm->round_med[i * tm->rounds + r] = median(t, tm->reps[i]);
        }
}

static xf_target_timing_options with_defaults(const xf_target_timing_options *o)
{
    xf_target_timing_options d;
    memset(&d, 0, sizeof d);
    if (o) d = *o;
    if (!d.seed) d.seed = 1;
    if (d.rounds <= 0) d.rounds = 21;
    if (d.round_ms <= 0) d.round_ms = 25;
    if (d.warmup_ms <= 0) d.warmup_ms = 100;
    return d;
}

static xf_status same_inputs(const xf_graph *a, const xf_graph *b, int i, xf_error *err)
{
    int ok = a->n_inputs == b->n_inputs;
    for (int k = 0; ok && k < a->n_inputs; k++) {
        const xf_value *x = &a->values[a->inputs[k]], *y = &b->values[b->inputs[k]];
        ok = x->dtype == y->dtype && xf_shape_equal(&x->shape, &y->shape);
    }
    return ok ? XF_OK
              : XF_FAIL(err, XF_ERR_MISMATCH, "model %d does not read the same inputs as model 0 "
                        "(count, dtypes and shapes must be equal)", i);
}

static void timer_free(timer *tm)
{
    for (int i = 0; i < tm->n; i++) {
        if (tm->m) xf_target_model_free(tm->m[i]);
        if (tm->runs) xf_free(tm->runs[i]);
    }
    xf_free(tm->m);
    xf_free(tm->runs);
    xf_free(tm->reps);
    xf_free(tm->round_med);
}

/* Loads, warms up and times the models (model n-1 is g[0] again with the
 * self check). */
static xf_status run_all(xf_target *t, const xf_graph *const *g, int n, int with_self,
                         const xf_target_timing_options *o, timer *tm, xf_error *err)
{
    memset(tm, 0, sizeof *tm);
    tm->n = n + with_self;
    tm->rounds = o->rounds;
    tm->m = xf_calloc((size_t)tm->n, sizeof *tm->m);
    tm->runs = xf_calloc((size_t)tm->n, sizeof *tm->runs);
    tm->reps = xf_calloc((size_t)tm->n, sizeof *tm->reps);
    tm->round_med = xf_calloc((size_t)tm->n * (size_t)tm->rounds, sizeof *tm->round_med);
    if (!tm->m || !tm->runs || !tm->reps || !tm->round_med)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing %d models", n);
    for (int i = 0; i < tm->n; i++) {
        int src = i < n ? i : 0;
        xf_status s = i < n && i ? same_inputs(g[0], g[i], i, err) : XF_OK;
        if (s == XF_OK)
            s = xf_target_model_load_file(t, o->files ? o->files[src] : NULL, g[src], o->seed,
                                          &tm->m[i], err);
        if (s != XF_OK) {
            xf_error_prefix(err, "model %d", src);
            return s;
        }
    }
    xf_status s = warm_up(tm, o, err);
    if (s == XF_OK) s = alternate(tm, err);
    if (s != XF_OK) return s;
    round_medians(tm);
    return XF_OK;
}

/* Scratch for summarise: the most timed runs of any model (>= rounds). */
static double *scratch_for(const timer *tm)
{
    size_t most = 0;
    for (int i = 0; i < tm->n; i++)
        if ((size_t)tm->reps[i] * (size_t)tm->rounds > most)
            most = (size_t)tm->reps[i] * (size_t)tm->rounds;
    return xf_malloc(most * sizeof(double));
}

xf_status xf_target_compare(xf_target *t, const xf_graph *const *g, int n,
                            const xf_target_timing_options *opts, xf_target_timing *res,
                            xf_target_timing *self, xf_error *err)
{
    if (n < 1) return XF_FAIL(err, XF_ERR_INVALID, "compare needs at least one model");
    xf_target_timing_options o = with_defaults(opts);
    timer tm;
    double *scratch = NULL;
    xf_status s = run_all(t, g, n, self && o.self_check, &o, &tm, err);
    if (s == XF_OK && !(scratch = scratch_for(&tm)))
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory summarising timings");
    for (int i = 0; s == XF_OK && i < tm.n; i++)
        summarise(&tm, i, scratch, i < n ? &res[i] : self);
    xf_free(scratch);
    timer_free(&tm);
    return s;
}

int xf_target_verdict(const xf_target_timing *r, const xf_target_timing *self)
{
    double below = self && self->lo < 1 ? self->lo : 1;
    double above = self && self->hi > 1 ? self->hi : 1;
    return r->hi < below ? -1 : r->lo > above ? 1 : 0;
}

xf_status xf_target_latency(xf_target *t, const xf_graph *g, const xf_target_timing_options *opts,
                            double *median_ms, double *noise, xf_error *err)
{
    *median_ms = *noise = 0;
    xf_target_timing_options o = with_defaults(opts);
    timer tm;
    double *scratch = NULL;
    xf_status s = run_all(t, &g, 1, 0, &o, &tm, err);
    if (s == XF_OK && !(scratch = scratch_for(&tm)))
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory summarising timings");
    if (s == XF_OK) {
        xf_target_timing res;
        summarise(&tm, 0, scratch, &res);
        double lo, hi, mid = median_interval(tm.round_med, tm.rounds, &lo, &hi);
        /* round_med[0 .. rounds) is sorted now: [0] is the fastest round */
        *median_ms = o.fastest ? tm.round_med[0] : res.median_ms;
        *noise = mid > 0 ? (hi - mid > mid - lo ? hi - mid : mid - lo) / mid : 0;
    }
    xf_free(scratch);
    timer_free(&tm);
    return s;
}
