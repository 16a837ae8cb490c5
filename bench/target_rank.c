/*
 * target_rank.c — bench_target's second section: does the cost model rank
 * the graphs a search visits the way the target runtime does? Each
 * candidate graph is finished as it would be written, costed on the cost
 * model (the sum over its nodes, as the search sees it) and timed in ONNX
 * Runtime against the input; Spearman's rho and Kendall's tau-b of cost
 * against latency, for the operator cost model and for the fusion-aware
 * cost (the graph's fused regions timed in ONNX Runtime one by one), and
 * the operator cost against the oneDNN executor's end-to-end latency for
 * reference.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "target_bench.h"

/* Ranks of v[0..n) from 1, ties averaged. */
static void ranks(const double *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        int less = 0, equal = 0;
        for (int j = 0; j < n; j++) {
            if (v[j] < v[i]) less++;
            else if (v[j] == v[i]) equal++;
        }
        r[i] = less + (equal + 1) / 2.0;
    }
}

void tb_rank_corr(const double *x, const double *y, int n, double *rho, double *tau)
{
    *rho = *tau = NAN;
    if (n < 2) return;
    double *rx = xf_malloc(2 * (size_t)n * sizeof *rx);
    if (!rx) return;
    double *ry = rx + n;
    ranks(x, n, rx);
    ranks(y, n, ry);
    double mx = (n + 1) / 2.0, sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - mx);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - mx) * (ry[i] - mx);
    }
    if (sxx > 0 && syy > 0) *rho = sxy / sqrt(sxx * syy);
    double conc = 0, tx = 0, ty = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double a = x[i] - x[j], b = y[i] - y[j];
            if (a != 0 && b != 0) conc += (a > 0) == (b > 0) ? 1 : -1;
            if (a != 0) tx++;
            if (b != 0) ty++;
        }
    if (tx > 0 && ty > 0) *tau = conc / sqrt(tx * ty);
    xf_free(rx);
}

/* The finished models: fin[0] is the input (not owned). */
typedef struct finished {
    int n, cap;
    xf_graph *fin;
    const xf_graph **g;
    double *cost, *ratio, *exec_ms, *fused;
} finished;

static void finished_free(finished *f)
{
    for (int i = 1; i < f->n; i++) xf_graph_free(&f->fin[i]);
    xf_free(f->fin);
    xf_free(f->g);
    xf_free(f->cost); /* ratio, exec_ms and fused live in the same block */
    memset(f, 0, sizeof *f);
}

/* Adds candidate c finished, unless it finishes to a model already there. */
static xf_status add_candidate(finished *f, uint64_t *hash, const xf_graph *work, xf_error *err)
{
    xf_graph fin;
    xf_status st = xf_agent_finish(work, &fin, NULL, err);
    if (st) return st;
    uint64_t h = 0;
    st = xf_graph_hash_checked(&fin, XF_HASH_CONTENT, &h, err);
    for (int i = 0; i < f->n && !st; i++)
        if (hash[i] == h) {
            xf_graph_free(&fin);
            return XF_OK;
        }
    if (st) {
        xf_graph_free(&fin);
        return st;
    }
    hash[f->n] = h;
    f->fin[f->n] = fin;
    f->g[f->n] = &f->fin[f->n];
    f->n++;
    return XF_OK;
}

static xf_status gather(const tb_model *m, int k, finished *f, xf_error *err)
{
    const xf_search_result *sr = &m->ms[0].res;
    f->cap = (k < sr->n_candidates ? k : sr->n_candidates) + 2;
    f->fin = xf_calloc((size_t)f->cap, sizeof *f->fin);
    f->g = xf_calloc((size_t)f->cap, sizeof *f->g);
    f->cost = xf_calloc(4 * (size_t)f->cap, sizeof *f->cost);
    uint64_t *hash = xf_calloc((size_t)f->cap, sizeof *hash);
    if (!f->fin || !f->g || !f->cost || !hash) {
        xf_free(hash);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    }
    f->ratio = f->cost + f->cap;
    f->exec_ms = f->ratio + f->cap;
    f->fused = f->exec_ms + f->cap;
    f->g[0] = &m->model;
    f->n = 1;
    xf_status st = xf_graph_hash_checked(&m->model, XF_HASH_CONTENT, &hash[0], err);
    int start_in = 0;
    for (int c = 0; c < sr->n_candidates && c < k && !st; c++) {
        start_in |= sr->candidates[c].n_applied == 0;
        st = add_candidate(f, hash, &sr->candidates[c].g, err);
    }
    for (int c = k; c < sr->n_candidates && !start_in && !st; c++)
        if (sr->candidates[c].n_applied == 0) {
            st = add_candidate(f, hash, &sr->candidates[c].g, err);
            start_in = 1;
        }
    xf_free(hash);
    return st;
}

/* The oneDNN executor's latency of each model: the smaller of two passes'
 * medians of 10 runs (passes over all models in turn, so drift spreads). */
static xf_status exec_latencies(xf_cost_model *cm, finished *f, xf_error *err)
{
    xf_status st = XF_OK;
    for (int pass = 0; pass < 2 && !st; pass++)
        for (int i = 0; i < f->n && !st; i++) {
            const xf_graph *g = f->g[i];
            xf_exec *e = NULL;
            xf_tensor *in = xf_tensor_array_alloc(g->n_inputs);
            double ms = 0;
            st = in ? xf_graph_random_inputs(g, 1, in, err)
                    : XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
            if (!st) st = xf_exec_prepare(cm, g, &e, err);
            if (!st) st = xf_exec_latency(e, in, g->n_inputs, 3, 10, &ms, err);
            if (!st && (pass == 0 || ms < f->exec_ms[i])) f->exec_ms[i] = ms;
            xf_exec_free(e);
            xf_tensor_array_free(in, g->n_inputs);
        }
    return st;
}

/* The fusion-aware cost of each model as written. */
static xf_status fused_costs(xf_fused_cost *fc, finished *f, xf_error *err)
{
    xf_status st = XF_OK;
    for (int i = 0; i < f->n && !st; i++) {
        xf_graph_index *ix = NULL;
        st = xf_graph_index_build(f->g[i], &ix, err);
        if (!st) st = xf_fused_cost_graph(fc, f->g[i], ix, &f->fused[i], err);
        xf_graph_index_free(ix);
    }
    return st;
}

void tb_rank_model(xf_target *t, xf_cost_model *cm, xf_fused_cost *fc, xf_cost_model *exec_cm,
                   tb_model *m, int k, const xf_target_timing_options *to)
{
    xf_error err = {0};
    finished f;
    memset(&f, 0, sizeof f);
    xf_target_timing *tm = NULL, self;
    xf_status st = gather(m, k, &f, &err);
    if (!st) {
        tm = xf_calloc((size_t)f.n, sizeof *tm);
        if (!tm) st = XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < f.n && !st; i++) st = xf_agent_model_cost(cm, f.g[i], &f.cost[i], &err);
    double t_fused = xf_clock_now();
    if (!st) st = fused_costs(fc, &f, &err);
    t_fused = xf_clock_now() - t_fused;
    double t0 = xf_clock_now();
    if (!st) st = xf_target_compare(t, f.g, f.n, to, tm, &self, &err);
    double t_target = xf_clock_now() - t0;
    for (int i = 0; i < f.n && !st; i++) f.ratio[i] = tm[i].ratio;
    if (!st && exec_cm && !m->exec_done) {
        st = exec_latencies(exec_cm, &f, &err);
        if (!st) {
            tb_rank_corr(f.cost, f.exec_ms, f.n, &m->exec_rho, &m->exec_tau);
            m->exec_n = f.n;
            m->exec_done = 1;
        }
    }
    if (st) {
        printf("%-18s failed: %s\n", m->name, err.msg);
    } else {
        double rho, tau, frho, ftau, lo = 1e300, hi = 0, clo = 1e300, chi = 0;
        tb_rank_corr(f.cost, f.ratio, f.n, &rho, &tau);
        tb_rank_corr(f.fused, f.ratio, f.n, &frho, &ftau);
        for (int i = 0; i < f.n; i++) {
            lo = fmin(lo, f.ratio[i]);
            hi = fmax(hi, f.ratio[i]);
            clo = fmin(clo, f.cost[i] / f.cost[0]);
            chi = fmax(chi, f.cost[i] / f.cost[0]);
        }
        printf("%-18s %6d %+7.3f %+7.3f  %+7.3f %+7.3f %6.1f  %5.3f-%5.3f  %5.3f-%5.3f %6.1f",
               m->name, f.n, rho, tau, frho, ftau, t_fused, clo, chi, lo, hi, t_target);
        if (m->exec_done)
            printf("   %+7.3f %+7.3f (%d)\n", m->exec_rho, m->exec_tau, m->exec_n);
        else
            printf("   %7s\n", "-");
    }
    fflush(stdout);
    xf_free(tm);
    finished_free(&f);
}
