/*
 * timing.c — alternating timing of models in the target: the race
 * (xf_target_race_*), and xf_target_compare and xf_target_latency on top
 * of it.
 *
 * A race holds a reference model (model 0), optionally a second session of
 * it (the self check), and candidates that join and leave. Every model is
 * warmed up when it joins; then the models take turns: in each round every
 * loaded model runs `reps` times in a row (each run timed on its own), and
 * the model that starts a round rotates so none always follows the same
 * neighbour. Slow drift of the machine (the other core busy, frequency
 * changes) then touches all models alike within a round. A fixed small
 * number of sessions is alive at a time however many candidates are
 * weighed: the arbiter races them a few at a time (agent/search).
 *
 * A model's ratio to the reference is the median over the rounds it took
 * part in of the ratio of the two models' per-round medians: pairing within
 * a round cancels the drift, the per-round median drops single slow runs
 * (preemption), and the median over rounds drops a disturbed round. Its
 * noise bound is the distribution-free 95% interval of a median from order
 * statistics: with n rounds, [x(k), x(n+1-k)] where k is the largest with
 * P(Binomial(n, 1/2) < k) <= 2.5% (n = 21: the 6th smallest and the 6th
 * largest ratio). It needs no model of the timing noise (which is skewed: a
 * busy neighbour only ever slows a run), no resampling, and it widens by
 * itself when rounds disagree. The self check's ratio over the very same
 * rounds is the interval of a difference that does not exist, measured
 * under the same conditions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "target/model_internal.h"

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

/* ------------------------------------------------------------------ race */

#define WARM_KEPT 31 /* the last warm-up runs whose median sizes a round */
#define RACE_MAX 256 /* models loaded at once */

typedef struct race_model {
    xf_target_model *m; /* NULL: the slot is free */
    int first;          /* the race's round it joined before */
    int n;              /* rounds it took part in */
    int reps;           /* runs per round */
    int cap;            /* rounds room in runs and med */
    double *runs;       /* n * reps run times, ms */
    double *med;        /* n round medians */
} race_model;

struct xf_target_race {
    xf_target *t;
    xf_target_timing_options o;
    race_model *m;  /* slot 0: the reference; 1: its self check (with_self) */
    int n, cap;     /* slots used, room */
    int with_self;
    int rounds;     /* rounds run so far */
    const xf_graph *ref;
};

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

static xf_status same_inputs(const xf_graph *a, const xf_graph *b, xf_error *err)
{
    int ok = a->n_inputs == b->n_inputs;
    for (int k = 0; ok && k < a->n_inputs; k++) {
        const xf_value *x = &a->values[a->inputs[k]], *y = &b->values[b->inputs[k]];
        ok = x->dtype == y->dtype && xf_shape_equal(&x->shape, &y->shape);
    }
    return ok ? XF_OK
              : XF_FAIL(err, XF_ERR_MISMATCH, "does not read the same inputs as model 0 "
                        "(count, dtypes and shapes must be equal)");
}

static void slot_free(race_model *rm)
{
    xf_target_model_free(rm->m);
    xf_free(rm->runs);
    xf_free(rm->med);
    memset(rm, 0, sizeof *rm);
}

/* Runs the model for o->warmup_ms (at least 2 runs) and sizes its share of
 * a round from the median of its last warm-up runs (the first runs of a
 * session and a preempted run would size it wrongly). */
static xf_status warm_up(xf_target_race *r, race_model *rm, xf_error *err)
{
    double t0 = xf_clock_now_ms(), kept[WARM_KEPT];
    int k = 0;
    for (; k < 2 || xf_clock_now_ms() - t0 < r->o.warmup_ms; k++) {
        double s = xf_clock_now_ms();
        xf_status st = xf_target_model_run(rm->m, err);
        if (st != XF_OK) return st;
        kept[k % WARM_KEPT] = xf_clock_now_ms() - s;
    }
    double run_ms = median(kept, k < WARM_KEPT ? k : WARM_KEPT);
    int reps = r->o.reps;
    if (reps <= 0) {
        double q = r->o.round_ms / (run_ms > 1e-3 ? run_ms : 1e-3);
        reps = q < 1 ? 1 : q > 100000 ? 100000 : (int)q;
    }
    rm->reps = reps;
    return XF_OK;
}

/* Loads g (from `path` when given) into a free slot and warms it up. */
static xf_status race_load(xf_target_race *r, const char *path, const xf_graph *g,
                           void (*written)(void *), void *ctx, int *slot, xf_error *err)
{
    int s = 0;
    while (s < r->n && r->m[s].m) s++;
    if (s >= RACE_MAX)
        return XF_FAIL(err, XF_ERR_INVALID, "race: more than %d models at once", RACE_MAX);
    if (s == r->cap) {
        int nc = r->cap ? 2 * r->cap : 4;
        race_model *p = xf_realloc(r->m, sizeof *p * (size_t)nc);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing models");
        memset(p + r->cap, 0, sizeof *p * (size_t)(nc - r->cap));
        r->m = p;
        r->cap = nc;
    }
    race_model *rm = &r->m[s];
    memset(rm, 0, sizeof *rm);
    xf_status st = target_model_load_then(r->t, path, g, r->o.seed, written, ctx, &rm->m, err);
    if (st == XF_OK) st = warm_up(r, rm, err);
    if (st != XF_OK) {
        slot_free(rm);
        return st;
    }
    rm->first = r->rounds;
    if (s == r->n) r->n++;
    *slot = s;
    return XF_OK;
}

xf_status xf_target_race_open(xf_target *t, const xf_graph *ref, const char *path, int with_self,
                              const xf_target_timing_options *o, xf_target_race **out,
                              xf_error *err)
{
    *out = NULL;
    xf_target_race *r = xf_calloc(1, sizeof *r);
    if (!r) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing models");
    r->t = t;
    r->o = with_defaults(o);
    r->ref = ref;
    r->with_self = with_self != 0;
    int slot;
    xf_status st = race_load(r, path, ref, NULL, NULL, &slot, err);
    if (st == XF_OK && r->with_self) st = race_load(r, path, ref, NULL, NULL, &slot, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "model 0");
        xf_target_race_free(r);
        return st;
    }
    *out = r;
    return XF_OK;
}

xf_status xf_target_race_add(xf_target_race *r, const char *path, const xf_graph *g, int *slot,
                             xf_error *err)
{
    return xf_target_race_add_then(r, path, g, NULL, NULL, slot, err);
}

xf_status xf_target_race_add_then(xf_target_race *r, const char *path, const xf_graph *g,
                                  void (*written)(void *), void *ctx, int *slot, xf_error *err)
{
    xf_status st = same_inputs(r->ref, g, err);
    return st == XF_OK ? race_load(r, path, g, written, ctx, slot, err) : st;
}

/* Room for one more round of rm's runs. */
static xf_status grow(race_model *rm, xf_error *err)
{
    if (rm->n < rm->cap) return XF_OK;
    int nc = rm->cap ? 2 * rm->cap : 32;
    double *runs = xf_realloc(rm->runs, sizeof *runs * (size_t)nc * (size_t)rm->reps);
    if (runs) rm->runs = runs;
    double *med = runs ? xf_realloc(rm->med, sizeof *med * (size_t)nc) : NULL;
    if (med) rm->med = med;
    if (!runs || !med) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for run times");
    rm->cap = nc;
    return XF_OK;
}

xf_status xf_target_race_round(xf_target_race *r, xf_error *err)
{
    int live[RACE_MAX], n_live = 0;
    for (int s = 0; s < r->n; s++)
        if (r->m[s].m) live[n_live++] = s;
    for (int k = 0; k < n_live; k++) {
        xf_status st = grow(&r->m[live[k]], err);
        if (st != XF_OK) return st;
    }
    for (int k = 0; k < n_live; k++) {
        race_model *rm = &r->m[live[(r->rounds + k) % n_live]];
        double *t = rm->runs + (size_t)rm->n * (size_t)rm->reps;
        for (int j = 0; j < rm->reps; j++) {
            double s = xf_clock_now_ms();
            xf_status st = xf_target_model_run(rm->m, err);
            if (st != XF_OK) return st;
            t[j] = xf_clock_now_ms() - s;
        }
    }
    for (int k = 0; k < n_live; k++) {
        race_model *rm = &r->m[live[k]];
        double sorted[WARM_KEPT * 4], *v = rm->reps <= WARM_KEPT * 4 ? sorted : NULL;
        double *t = rm->runs + (size_t)rm->n * (size_t)rm->reps;
        if (!v && !(v = xf_malloc(sizeof *v * (size_t)rm->reps)))
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for run times");
        memcpy(v, t, sizeof *v * (size_t)rm->reps);
        rm->med[rm->n++] = median(v, rm->reps);
        if (v != sorted) xf_free(v);
    }
    r->rounds++;
    return XF_OK;
}

int xf_target_race_rounds(const xf_target_race *r, int slot)
{
    return slot >= 0 && slot < r->n && r->m[slot].m ? r->m[slot].n : 0;
}


/* The ratio of slot s to the reference over the rounds of slot `over`
 * (its median and interval) into res; runs and median_ms from s; *ref_ms
 * (may be NULL) the median of the reference's round medians over those
 * rounds. */
static xf_status summarise(const xf_target_race *r, int s, int over, xf_target_timing *res,
                           double *ref_ms, xf_error *err)
{
    const race_model *rm = &r->m[s], *om = &r->m[over], *ref = &r->m[0];
    memset(res, 0, sizeof *res);
    int n = om->n;
    size_t most = (size_t)rm->n * (size_t)rm->reps;
    double *v = xf_malloc(sizeof *v * ((most > (size_t)n ? most : (size_t)n) + 1));
    if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory summarising timings");
    res->runs = rm->n * rm->reps;
    if (most) memcpy(v, rm->runs, sizeof *v * most); /* no rounds yet: no runs array */
    res->median_ms = most ? median(v, (int)most) : 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        int g = om->first + i, a = g - rm->first, b = g - ref->first;
        if (a < 0 || a >= rm->n || b < 0 || b >= ref->n) continue;
        v[k++] = rm->med[a] / ref->med[b];
    }
    if (k > 0) {
        res->ratio = median_interval(v, k, &res->lo, &res->hi);
        double up = res->hi - res->ratio, down = res->ratio - res->lo;
        res->noise = up > down ? up : down;
    }
    if (ref_ms) {
        k = 0;
        for (int i = 0; i < n; i++) {
            int b = om->first + i - ref->first;
            if (b >= 0 && b < ref->n) v[k++] = ref->med[b];
        }
        *ref_ms = k ? median(v, k) : 0;
    }
    xf_free(v);
    return XF_OK;
}

xf_status xf_target_race_timing(const xf_target_race *r, int slot, xf_target_timing *res,
                                xf_target_timing *self, double *ref_ms, xf_error *err)
{
    if (slot < 0 || slot >= r->n || !r->m[slot].m)
        return XF_FAIL(err, XF_ERR_INVALID, "race: slot %d holds no model", slot);
    xf_status st = summarise(r, slot, slot, res, ref_ms, err);
    if (st == XF_OK && self) {
        memset(self, 0, sizeof *self);
        if (r->with_self) st = summarise(r, 1, slot, self, NULL, err);
    }
    return st;
}

xf_status xf_target_race_diff(xf_target_race *r, int slot, double *max_rel, int *worst,
                              xf_error *err)
{
    if (slot <= 0 || slot >= r->n || !r->m[slot].m)
        return XF_FAIL(err, XF_ERR_INVALID, "race: slot %d holds no candidate", slot);
    return target_models_diff(r->m[0].m, r->m[slot].m, max_rel, worst, err);
}

void xf_target_race_drop(xf_target_race *r, int slot)
{
    if (slot > 0 && slot < r->n && (slot > 1 || !r->with_self)) slot_free(&r->m[slot]);
}

double xf_target_race_round_ms(const xf_target_race *r)
{
    double ms = 0;
    for (int s = 0; s < r->n; s++) {
        const race_model *rm = &r->m[s];
        if (rm->m && rm->n > 0) ms += rm->reps * rm->med[rm->n - 1];
    }
    return ms;
}

void xf_target_race_free(xf_target_race *r)
{
    if (!r) return;
    for (int s = 0; s < r->n; s++) slot_free(&r->m[s]);
    xf_free(r->m);
    xf_free(r);
}

/* -------------------------------------------------- compare and latency */

xf_status xf_target_compare(xf_target *t, const xf_graph *const *g, int n,
                            const xf_target_timing_options *opts, xf_target_timing *res,
                            xf_target_timing *self, xf_error *err)
{
    if (n < 1) return XF_FAIL(err, XF_ERR_INVALID, "compare needs at least one model");
    xf_target_timing_options o = with_defaults(opts);
    xf_target_race *r = NULL;
    int with_self = self && o.self_check;
    xf_status st = xf_target_race_open(t, g[0], o.files ? o.files[0] : NULL, with_self, &o, &r,
                                       err);
    int *slot = xf_calloc((size_t)n + 1, sizeof *slot);
    if (st == XF_OK && !slot) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing %d models", n);
    for (int i = 1; st == XF_OK && i < n; i++) {
        st = xf_target_race_add(r, o.files ? o.files[i] : NULL, g[i], &slot[i], err);
        if (st == XF_ERR_MISMATCH) {
            char msg[sizeof err->msg];
            snprintf(msg, sizeof msg, "%s", err->msg);
            XF_FAIL(err, st, "model %d %s", i, msg);
        } else if (st != XF_OK) {
            xf_error_prefix(err, "model %d", i);
        }
    }
    for (int k = 0; st == XF_OK && k < o.rounds; k++) st = xf_target_race_round(r, err);
    for (int i = 0; st == XF_OK && i < n; i++) st = summarise(r, slot[i], slot[i], &res[i], NULL, err);
    if (st == XF_OK && with_self) st = summarise(r, 1, 1, self, NULL, err);
    xf_free(slot);
    xf_target_race_free(r);
    return st;
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
    xf_target_race *r = NULL;
    xf_status st = xf_target_race_open(t, g, o.files ? o.files[0] : NULL, 0, &o, &r, err);
    for (int k = 0; st == XF_OK && k < o.rounds; k++) st = xf_target_race_round(r, err);
    if (st == XF_OK) {
        xf_target_timing res;
        st = summarise(r, 0, 0, &res, NULL, err);
        const race_model *rm = &r->m[0];
        double *v = st == XF_OK ? xf_malloc(sizeof *v * (size_t)rm->n) : NULL;
        if (st == XF_OK && !v) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory summarising timings");
        if (st == XF_OK) {
            if (rm->n) memcpy(v, rm->med, sizeof *v * (size_t)rm->n);
            double lo, hi, mid = median_interval(v, rm->n, &lo, &hi);
            /* v is sorted now: v[0] is the fastest round */
            *median_ms = o.fastest ? v[0] : res.median_ms;
            *noise = mid > 0 ? (hi - mid > mid - lo ? hi - mid : mid - lo) / mid : 0;
        }
        xf_free(v);
    }
    xf_target_race_free(r);
    return st;
}
