/*
 * agent_polish.c — how the learning agents price a rule in the current
 * graph (the guided search's step, agent_ppo.c, and the polish), and the
 * greedy polish that ends their training: from the best graph the run
 * found, the cheapest priced rewrite is taken while it lowers the cost.
 *
 * Why the polish: measured on modelzoo BERT L2/H128 (docs/log/agent.md,
 * 2026-11-30), an agent given TASO's 15 s takes 600-800 real steps there,
 * 9-13 episodes, two or three policy updates; at its best graph the policy
 * is still close to uniform (0.03-0.08 on each of the 15-30 rules offered),
 * and single rewrites that lower the cost by 0.1-1.9% are left untaken:
 * the best graph is the cheapest point of a few sampled episodes, not a
 * local optimum, and the agents ended 0.4-1.0 point of cost above TASO on
 * both BERTs. The polish is search, not learning: the result says what it
 * did (res->unpolished_ms, polish_steps, polish_seconds) so that the
 * agent's own figure is reported beside the polished one.
 */
#include "agent/rl/ppo.h"

#include <string.h>

xf_status xf_agent_run_price_rule(xf_agent_run *r, int rule, double *best, int *best_rule,
                                  int *best_loc, xf_error *err)
{
    xf_env *e = r->e;
    int n = xf_actions_locations(e, rule);
    for (int l = 0; l < n; l++) {
        double ms;
        xf_error perr;
        xf_status st = xf_lookahead_price(&r->la, e, rule, l, NULL, &ms, NULL, &perr);
        if (st && !xf_action_skippable(st)) {
            if (err) *err = perr;
            return st;
        }
        if (!st && ms < *best) {
            *best = ms;
            *best_rule = rule;
            *best_loc = l;
        }
    }
    return XF_OK;
}

/* The run's path is the best graph's: the polish's steps extend it. */
static xf_status path_from_best(xf_agent_run *r, xf_error *err)
{
    const xf_search_result *res = r->res;
    if (res->n_applied > r->path_cap) {
        int *np = xf_realloc(r->path, (size_t)res->n_applied * sizeof *np);
        if (!np) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording the polish's path");
        r->path = np;
        r->path_cap = res->n_applied;
    }
    if (res->n_applied > 0)
        memcpy(r->path, res->applied, (size_t)res->n_applied * sizeof *r->path);
    r->path_n = res->n_applied;
    return XF_OK;
}

xf_status xf_agent_run_polish(xf_agent_run *r, double max_seconds, xf_error *err)
{
    xf_search_result *res = r->res;
    xf_env *e = r->e;
    double t0 = xf_clock_now();
    res->unpolished_ms = res->best_ms;
    xf_status st = xf_env_set_graph(e, &res->best, err);
    if (!st) st = path_from_best(r, err);
    double eps = XF_SEARCH_EPS * xf_env_initial_cost(e);
    double cap = max_seconds > 0 ? XF_AGENT_POLISH_SHARE * max_seconds : 0;
    for (int k = 0; !st && k < XF_AGENT_POLISH_STEPS; k++) {
        if (cap > 0 && xf_clock_now() - t0 >= cap) break;
        double best = xf_env_cost(e) - eps;
        int best_rule = -1, best_loc = 0;
        for (int x = 0; !st && x < xf_env_num_xfers(e); x++)
            st = xf_agent_run_price_rule(r, x, &best, &best_rule, &best_loc, err);
        if (st || best_rule < 0) break;
        xf_env_step_result sr;
        st = xf_agent_env_step(r, best_rule, best_loc, &sr, err);
        if (!st && !sr.valid) break; /* priced but not applied: the graph is unchanged */
        if (!st) st = xf_agent_run_step(r, best_rule, &sr, err);
        if (!st) res->polish_steps++;
    }
    res->polish_seconds = xf_clock_now() - t0;
    if (st) xf_error_prefix(err, "the polish of the best graph");
    return st;
}
