/*
 * target_fused.c — bench_target's third section: the TASO search run again
 * on the fusion-aware cost (the graph's fused regions timed in ONNX Runtime
 * one by one, xf_fused_cost), then the final arbiter over its candidates,
 * as `rlflow-agent --target ort --cost fused` does. One row per model: the
 * search's time and how many regions it timed, its cost before and after
 * on the fused cost, and what the arbiter writes with the ratio to the
 * input in ONNX Runtime. What the fused cost adds to a run is the search
 * time here against section 1's.
 */
#include <stdio.h>
#include <string.h>

#include "target_bench.h"

void tb_fused_model(xf_target *t, xf_cost_model *cm, tb_model *m, int budget, double time_limit,
                    const xf_target_timing_options *to)
{
    xf_error err = {0};
    xf_fused_cost *fc = NULL;
    xf_env *env = NULL;
    xf_search_result res;
    xf_search_result_init(&res);
    xf_arbiter_result a;
    memset(&a, 0, sizeof a);
    xf_graph out;
    xf_graph_init(&out);
    xf_status st = xf_fused_cost_create(t, cm, NULL, &fc, &err);
    xf_env_options eo = xf_env_options_default();
    eo.fused = fc;
    if (!st) st = xf_env_create(m->rs, cm, &m->model, &eo, &env, &err);
    xf_search_options so = xf_search_options_default();
    so.budget = budget;
    so.max_seconds = time_limit;
    so.candidates = 19; /* rlflow-agent keeps 3 * 6 + 1 */
    double t0 = xf_clock_now();
    if (!st) st = xf_search_run(env, XF_SEARCH_TASO, &so, &res, &err);
    double search_s = xf_clock_now() - t0;
    xf_arbiter_options ao = xf_arbiter_options_default();
    ao.timing = *to;
    if (!st) st = xf_agent_arbitrate(t, cm, &m->model, &res, &ao, &out, &a, &err);
    if (st) {
        printf("%-18s %3d  failed: %s\n", m->name, xf_target_threads(t), err.msg);
    } else {
        xf_fused_cost_stats fs;
        xf_fused_cost_get_stats(fc, &fs);
        const xf_arbiter_entry *ch = &a.e[a.chosen];
        char verdict[32];
        if (a.chosen == 0) snprintf(verdict, sizeof verdict, "input kept");
        else snprintf(verdict, sizeof verdict, "cand %d%s", ch->candidate, ch->unbatched ? " 2-D" : "");
        printf("%-18s %3d %8.1f %8lld %6.1f %8.4f %8.4f %+7.2f%%  %-10s %.3f [%.3f,%.3f] %6.3f "
               "%7.1f\n",
               m->name, xf_target_threads(t), search_s, (long long)fs.measured, fs.measure_s,
               res.initial_ms, res.best_ms, 100.0 * (res.best_ms / res.initial_ms - 1), verdict,
               ch->t.ratio, ch->t.lo, ch->t.hi, a.self.noise, a.seconds);
    }
    fflush(stdout);
    xf_graph_free(&out);
    xf_arbiter_result_free(&a);
    xf_search_result_free(&res);
    xf_env_free(env);
    xf_fused_cost_free(fc);
}
