/*
 * target_bench.h — what the two halves of bench_target share: a model the
 * TASO search has run on (kept for both sections), and the rank
 * correlation of the cost model with the target over the graphs that
 * search visited (target_rank.c).
 */
#ifndef XF_BENCH_TARGET_BENCH_H
#define XF_BENCH_TARGET_BENCH_H

#include <stdint.h>

#include "agent/search/search.h"

/* One model of the table, searched once (the search does not depend on the
 * target's threads). */
typedef struct tb_model {
    char name[64];
    xf_graph model;          /* as loaded */
    xf_graph outcome;        /* the search's best, as rlflow-agent without --target writes it */
    xf_agent_outcome oc;     /* its cost before/after on the cost model */
    /* TASO searches with candidates kept: ms[0] of the model prepared with
     * the defaults, ms[1] (n_searches 2) with its scalings kept in place
     * (xf_prepare_alternative), as rlflow-agent --target ort searches it */
    xf_model_search ms[2];
    int n_searches;
    double search_s;         /* search wall time, both searches */
    int64_t param_bytes;     /* initializer bytes */
    int exec_done;           /* oneDNN executor correlation computed (once, 1 thread) */
    double exec_rho, exec_tau;
    int exec_n;
} tb_model;

/* Spearman's rho (ties take their average rank) and Kendall's tau-b of
 * x[0..n) against y[0..n); NaN (printed "nan": undefined) when n < 2 or
 * one side is constant. */
void tb_rank_corr(const double *x, const double *y, int n, double *rho, double *tau);

/* Finishes the search's cheapest k distinct candidates and the start
 * graph, drops finished duplicates, costs each as written on cm and on the
 * fusion-aware cost fc (over t), times them all against the input in the
 * target in alternation, and (once per model, exec_cm not NULL) on the
 * oneDNN executor; prints one table row. */
void tb_rank_model(xf_target *t, xf_cost_model *cm, xf_fused_cost *fc, xf_cost_model *exec_cm,
                   tb_model *m, int k, const xf_target_timing_options *to);

/* Searches m again on the fusion-aware cost over t (TASO, budget graphs,
 * time_limit s), arbitrates its candidates in t and prints one row. */
void tb_fused_model(xf_target *t, xf_cost_model *cm, tb_model *m, int budget, double time_limit,
                    const xf_target_timing_options *to);

#endif /* XF_BENCH_TARGET_BENCH_H */
