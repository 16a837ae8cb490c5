/*
 * agent_common.c — what the two learning agents (agent_ppo.c, agent_wm.c)
 * share around their networks: the GNN's input for the current graph (with per-node costs from a memo in
 * front of the cost model), and the bookkeeping of a run on the real
 * environment: the graphs seen, the rules applied in the current episode,
 * the cheapest graph so far with the path that led to it, the budget and
 * the figures left in the result.
 *
 * As for the search baselines, a run starts at the environment's reset
 * state and leaves the environment holding the best graph, so best_ms is
 * that graph's cost as the environment computes it.
 */
#include "agent/rl/ppo.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ features */

void xf_node_costs_free(xf_node_costs *nc)
{
    xf_costmemo_free(nc->memo);
    xf_free(nc->per_node);
    xf_free(nc->node_ms);
    memset(nc, 0, sizeof *nc);
}

xf_status xf_agent_features(xf_node_costs *nc, const xf_env *e, xf_gnn_batch *b, xf_error *err)
{
    const xf_graph *g = xf_env_graph(e);
    const xf_graph_index *ix = xf_env_index(e);
    if (!nc->memo) return xf_gnn_batch_add(b, g, ix, NULL, err);
    if (g->n_nodes > nc->cap) {
        int cap = g->n_nodes;
        xf_op_cost *pc = xf_realloc(nc->per_node, (size_t)cap * sizeof *pc);
        if (pc) nc->per_node = pc;
        double *nm = pc ? xf_realloc(nc->node_ms, (size_t)cap * sizeof *nm) : NULL;
        if (nm) nc->node_ms = nm;
        if (!pc || !nm) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing graph nodes");
        nc->cap = cap;
    }
    const xf_op_cost *pc = nc->per_node;
    if (nc->cm == xf_env_cost_model(e)) {
        pc = xf_env_node_costs(e);
    } else {
        xf_op_cost total;
        xf_status st = xf_costmemo_graph(nc->memo, g, ix, nc->per_node, &total, err);
        if (st != XF_OK) return st;
    }
    for (int i = 0; i < g->n_nodes; i++) nc->node_ms[i] = pc[i].ms;
    return xf_gnn_batch_add(b, g, ix, nc->node_ms, err);
}

/* ------------------------------------------------------------------ runs */

/* The environment's current graph, reached by the run's path, becomes the
 * best. */
static xf_status keep_best(xf_agent_run *r, xf_error *err)
{
    xf_graph copy;
    xf_status st = xf_graph_clone_shared(xf_env_graph(r->e), &copy, err);
    if (st != XF_OK) return st;
    int *path = NULL;
    if (r->path_n > 0) {
        path = xf_malloc((size_t)r->path_n * sizeof *path);
        if (!path) {
            xf_graph_free(&copy);
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the best graph");
        }
        memcpy(path, r->path, (size_t)r->path_n * sizeof *path);
    }
    xf_graph_free(&r->res->best);
    xf_free(r->res->applied);
    r->res->best = copy;
    r->res->applied = path;
    r->res->n_applied = r->path_n;
    r->res->best_ms = xf_env_cost(r->e);
    return XF_OK;
}

xf_status xf_agent_run_begin(xf_agent_run *r, xf_env *e, xf_search_result *res, xf_actions *act,
                             xf_error *err)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->res = res;
    r->t0 = r->last_progress = xf_clock_now();
    xf_htab_init(&r->seen);
    xf_search_result_free(res);
    xf_status st = act ? xf_actions_bind(act, xf_env_ruleset(e), err) : XF_OK;
    if (!st) st = xf_env_reset(e, err);
    int added;
    if (!st) st = xf_htab_put(&r->seen, xf_htab_key(xf_env_hash(e)), NULL, &added, err);
    if (st != XF_OK) return st;
    res->initial_ms = xf_env_cost(e);
    return keep_best(r, err);
}

int xf_agent_run_over(const xf_agent_run *r, int64_t steps, int64_t max_env_steps,
                      double max_seconds)
{
    if (max_env_steps > 0 && steps >= max_env_steps) return 1;
    return max_seconds > 0 && xf_clock_now() - r->t0 >= max_seconds;
}

xf_status xf_agent_run_step(xf_agent_run *r, int rule, const xf_env_step_result *sr,
                            xf_error *err)
{
    r->steps++;
    if (!sr->valid || rule == xf_env_num_xfers(r->e)) return XF_OK;
    if (r->path_n == r->path_cap) {
        int cap = r->path_cap ? 2 * r->path_cap : 64;
        int *np = xf_realloc(r->path, (size_t)cap * sizeof *np);
        if (!np) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording an episode");
        r->path = np;
        r->path_cap = cap;
    }
    r->path[r->path_n++] = rule;
    int added;
    xf_status st = xf_htab_put(&r->seen, xf_htab_key(sr->hash), NULL, &added, err);
    if (st != XF_OK) return st;
    if (sr->cost_ms < r->res->best_ms - XF_SEARCH_EPS * r->res->initial_ms) {
        r->res->best_step = r->steps;
        return keep_best(r, err);
    }
    return XF_OK;
}

xf_status xf_agent_run_end(xf_agent_run *r, xf_status st, xf_error *err)
{
    if (!st) st = xf_env_set_graph(r->e, &r->res->best, err);
    if (!st) r->res->best_ms = xf_env_cost(r->e);
    r->res->seen = (int64_t)r->seen.n;
    r->res->seconds = xf_clock_now() - r->t0;
    xf_htab_free(&r->seen);
    xf_free(r->path);
    r->path = NULL;
    return st;
}
