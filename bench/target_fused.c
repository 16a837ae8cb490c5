/*
 * target_fused.c — bench_target's third section: the TASO search run again
 * on the fusion-aware cost (the graph's fused regions timed in ONNX Runtime
 * one by one, xf_fused_cost), then the final arbiter over its candidates,
 * as `rlflow-agent --target ort --cost fused` does. One row per model: the
 * search's time and how many regions it timed, its cost before and after
 * on the fused cost, and what the arbiter writes with the ratio to the
 * input in ONNX Runtime. What the fused cost adds to a run is the search
 * time here against section 1's. Like section 1 (and rlflow-agent), a model
 * with scalings to move is searched twice, moved and kept in place, and
 * the arbiter weighs both searches' candidates; the fused cost shown is
 * the first search's.
 */
#include <stdio.h>
#include <string.h>

#include "target_bench.h"

void tb_fused_model(xf_target *t, xf_cost_model *cm, tb_model *m, int budget, double time_limit,
                    const xf_target_timing_options *to)
{
    xf_error err = {0};
    xf_fused_cost *fc = NULL;
    xf_env *env[2] = {NULL, NULL};
    xf_search_result res[2];
    xf_search_result_init(&res[0]);
    xf_search_result_init(&res[1]);
    xf_arbiter_result a;
    memset(&a, 0, sizeof a);
    xf_graph out;
    xf_graph_init(&out);
    xf_status st = xf_fused_cost_create(t, cm, NULL, &fc, &err);
    xf_search_options so = xf_search_options_default();
    so.budget = budget;
    so.max_seconds = time_limit;
    so.candidates = 19; /* rlflow-agent keeps 3 * 6 + 1 */
    double t0 = xf_clock_now();
    for (int i = 0; i < m->n_searches; i++) { /* each preparation section 1 searched */
        xf_env_options eo = xf_env_options_default();
        eo.fused = fc;
        eo.prepare = m->ms[i].prepare;
        if (!st) st = xf_env_create(m->ms[i].rs, cm, &m->model, &eo, &env[i], &err);
        if (!st) st = xf_search_run(env[i], XF_SEARCH_TASO, &so, &res[i], &err);
    }
    double search_s = xf_clock_now() - t0;
    xf_arbiter_options ao = xf_arbiter_options_default();
    ao.timing = *to;
    const xf_search_result *srs[2] = {&res[0], &res[1]};
    if (!st) st = xf_agent_arbitrate(t, cm, &m->model, srs, m->n_searches, &ao, &out, &a, &err);
    if (st) {
        printf("%-18s %3d  failed: %s\n", m->name, xf_target_threads(t), err.msg);
    } else {
        xf_fused_cost_stats fs;
        xf_fused_cost_get_stats(fc, &fs);
        const xf_arbiter_entry *ch = &a.e[a.chosen];
        char verdict[32];
        if (a.chosen == 0) snprintf(verdict, sizeof verdict, "input kept");
        else xf_arbiter_entry_name(ch, verdict, sizeof verdict);
        printf("%-18s %3d %8.1f %8lld %6.1f %8.4f %8.4f %+7.2f%%  %-13s %.3f [%.3f,%.3f] %6.3f "
               "%7.1f\n",
               m->name, xf_target_threads(t), search_s, (long long)fs.measured, fs.measure_s,
               res[0].initial_ms, res[0].best_ms, 100.0 * (res[0].best_ms / res[0].initial_ms - 1),
               verdict, ch->t.ratio, ch->t.lo, ch->t.hi, a.self.noise, a.seconds);
    }
    fflush(stdout);
    xf_graph_free(&out);
    xf_arbiter_result_free(&a);
    for (int i = 0; i < m->n_searches; i++) {
        xf_search_result_free(&res[i]);
        xf_env_free(env[i]);
    }
    xf_fused_cost_free(fc);
}
