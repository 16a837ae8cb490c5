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
 *
 * With a target runtime in the environment (--target ort: the sparse real
 * reward), the cheapest graph by the cost model is not necessarily the
 * fastest where the model runs (ONNX Runtime's fusions): the run also keeps
 * its XF_AGENT_CANDIDATES cheapest distinct graphs and the graph the target
 * measured fastest, and hands the start graph and those to the final
 * arbiter as candidates, as the searches hand their cheapest few
 * (candidates.c in agent/search/), so that the best graph is judged by the
 * target too. Handing the cheapest graph alone put the agents below TASO
 * in the target on bert_small and modelzoo BERT though their costs were
 * within 0.3% of TASO's: the arbiter picks the fastest of a search's 6
 * cheapest, which are seldom its cheapest (docs/log/agent.md).
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

/* A copy of the environment's current graph (constants shared) and of the
 * run's path to it. */
static xf_status copy_current(xf_agent_run *r, xf_search_candidate *c, xf_error *err)
{
    memset(c, 0, sizeof *c);
    xf_status st = xf_graph_clone_shared(xf_env_graph(r->e), &c->g, err);
    if (st != XF_OK) return st;
    if (r->path_n > 0) {
        c->applied = xf_malloc((size_t)r->path_n * sizeof *c->applied);
        if (!c->applied) {
            xf_graph_free(&c->g);
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the best graph");
        }
        memcpy(c->applied, r->path, (size_t)r->path_n * sizeof *c->applied);
    }
    c->n_applied = r->path_n;
    c->ms = xf_env_cost(r->e);
    return XF_OK;
}

static void candidate_free(xf_search_candidate *c)
{
    xf_graph_free(&c->g);
    xf_free(c->applied);
    memset(c, 0, sizeof *c);
}

/* The environment's current graph, reached by the run's path, becomes the
 * best. */
static xf_status keep_best(xf_agent_run *r, xf_error *err)
{
    xf_search_candidate c;
    xf_status st = copy_current(r, &c, err);
    if (st != XF_OK) return st;
    xf_graph_free(&r->res->best);
    xf_free(r->res->applied);
    r->res->best = c.g;
    r->res->applied = c.applied;
    r->res->n_applied = c.n_applied;
    r->res->best_ms = c.ms;
    r->best_hash = xf_env_hash(r->e);
    return XF_OK;
}

/* The environment's current graph, measured at target_ms in the target,
 * becomes the fastest measured. */
static xf_status keep_fast(xf_agent_run *r, double target_ms, xf_error *err)
{
    xf_search_candidate c;
    xf_status st = copy_current(r, &c, err);
    if (st != XF_OK) return st;
    candidate_free(&r->fast);
    r->fast = c;
    r->fast_set = 1;
    r->fast_target_ms = target_ms;
    r->fast_cost_ms = c.ms;
    r->fast_hash = xf_env_hash(r->e);
    return XF_OK;
}

/* The environment's current graph, of cost ms, among the run's kept
 * candidates when it is one of the r->keep cheapest distinct graphs (up to
 * swapped operands: XF_HASH_IDENTITY_UNORDERED, as the searches'); the
 * graph is hashed and copied only when it would be kept. */
static xf_status offer(xf_agent_run *r, double ms, xf_error *err)
{
    if (r->keep <= 0 || (r->n_kept == r->keep && r->kept[r->n_kept - 1].ms <= ms)) return XF_OK;
    uint64_t h = 0;
    xf_status st = xf_graph_hash_checked(xf_env_graph(r->e), XF_HASH_IDENTITY_UNORDERED, &h, err);
    if (st != XF_OK) return st;
    if (h == r->start_hash) return XF_OK;
    for (int i = 0; i < r->n_kept; i++)
        if (r->kept_hash[i] == h) return XF_OK;
    xf_search_candidate c;
    if ((st = copy_current(r, &c, err)) != XF_OK) return st;
    c.ms = ms;
    if (r->n_kept == r->keep) candidate_free(&r->kept[--r->n_kept]);
    int at = r->n_kept;
    for (; at > 0 && r->kept[at - 1].ms > ms; at--) {
        r->kept[at] = r->kept[at - 1];
        r->kept_hash[at] = r->kept_hash[at - 1];
    }
    r->kept[at] = c;
    r->kept_hash[at] = h;
    r->n_kept++;
    return XF_OK;
}

/* With a target in the environment: room for the candidates, and the
 * start graph (the environment's reset state) copied. */
static xf_status keep_begin(xf_agent_run *r, xf_error *err)
{
    if (xf_env_target_initial_ms(r->e) <= 0) return XF_OK;
    r->kept = xf_calloc(XF_AGENT_CANDIDATES, sizeof *r->kept);
    r->kept_hash = xf_calloc(XF_AGENT_CANDIDATES, sizeof *r->kept_hash);
    if (!r->kept || !r->kept_hash)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the agent's candidates");
    r->keep = XF_AGENT_CANDIDATES;
    xf_status st = xf_graph_hash_checked(xf_env_graph(r->e), XF_HASH_IDENTITY_UNORDERED,
                                         &r->start_hash, err);
    return st ? st : copy_current(r, &r->start, err);
}

static void keep_free(xf_agent_run *r)
{
    for (int i = 0; i < r->n_kept; i++) candidate_free(&r->kept[i]);
    xf_free(r->kept);
    xf_free(r->kept_hash);
    candidate_free(&r->start);
    r->kept = NULL;
    r->kept_hash = NULL;
    r->n_kept = r->keep = 0;
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
    res->initial_ms = r->reported_ms = xf_env_cost(e);
    if ((st = keep_begin(r, err)) != XF_OK) return st;
    return keep_best(r, err);
}

int xf_agent_run_over(const xf_agent_run *r, int64_t steps, int64_t max_env_steps,
                      double max_seconds)
{
    if (max_env_steps > 0 && steps >= max_env_steps) return 1;
    return max_seconds > 0 && xf_clock_now() - r->t0 >= max_seconds;
}

int xf_agent_run_progress_due(xf_agent_run *r)
{
    double now = xf_clock_now();
    if (now - r->last_progress < 1.0 && r->res->best_ms >= r->reported_ms) return 0;
    r->last_progress = now;
    r->reported_ms = r->res->best_ms;
    return 1;
}

int xf_agent_run_warmup_over(const xf_agent_run *r, double max_seconds)
{
    return max_seconds > 0 && xf_clock_now() - r->t0 >= 0.1 * max_seconds;
}

xf_status xf_agent_run_step(xf_agent_run *r, int rule, const xf_env_step_result *sr,
                            xf_error *err)
{
    r->steps++;
    if (!sr->valid || rule == xf_env_num_xfers(r->e)) return XF_OK;
    xf_status st;
    if (r->path_n == r->path_cap) {
        int cap = r->path_cap ? 2 * r->path_cap : 64;
        int *np = xf_realloc(r->path, (size_t)cap * sizeof *np);
        if (!np) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording an episode");
        r->path = np;
        r->path_cap = cap;
    }
    r->path[r->path_n++] = rule;
    /* the look-ahead's moves after it (agent_lookahead.c) */
    int n_moves = r->moves.n < XF_CLOSURE_LOG ? r->moves.n : XF_CLOSURE_LOG;
    if (n_moves > 0 && r->path_n + n_moves > r->path_cap) {
        int cap = 2 * (r->path_n + n_moves);
        int *np = xf_realloc(r->path, (size_t)cap * sizeof *np);
        if (!np) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording an episode");
        r->path = np;
        r->path_cap = cap;
    }
    for (int k = 0; k < n_moves; k++) r->path[r->path_n++] = r->moves.rule[k];
    r->moves.n = 0;
    int added;
    if ((st = xf_htab_put(&r->seen, xf_htab_key(sr->hash), NULL, &added, err)) != XF_OK)
        return st;
    if (sr->cost_ms < r->res->best_ms - XF_SEARCH_EPS * r->res->initial_ms) {
        r->res->best_step = r->steps;
        if ((st = keep_best(r, err)) != XF_OK) return st;
    }
    if ((st = offer(r, sr->cost_ms, err)) != XF_OK) return st;
    /* a measurement of this graph in the target: the fastest so far, and
     * faster than the start there, is kept for the arbiter */
    double start_ms = xf_env_target_initial_ms(r->e);
    if (sr->target_ms > 0 && sr->target_ms < start_ms &&
        (!r->fast_set || sr->target_ms < r->fast_target_ms))
        return keep_fast(r, sr->target_ms, err);
    return XF_OK;
}

/* res->candidates: the start graph, the kept cheapest ones and the fastest
 * measured (when it is none of those), cheapest first; moved out of the
 * run. */
static xf_status hand_candidates(xf_agent_run *r, xf_error *err)
{
    xf_search_result *res = r->res;
    xf_search_candidate *c = xf_calloc((size_t)r->n_kept + 2, sizeof *c);
    if (!c) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the agent's candidates");
    int n = 0;
    c[n++] = r->start;
    memset(&r->start, 0, sizeof r->start);
    int fast_kept = !r->fast_set;
    uint64_t fast_h = 0;
    xf_status st = r->fast_set ? xf_graph_hash_checked(&r->fast.g, XF_HASH_IDENTITY_UNORDERED,
                                                       &fast_h, err)
                               : XF_OK;
    if (st) {
        candidate_free(&c[0]);
        xf_free(c);
        return st;
    }
    fast_kept |= fast_h == r->start_hash;
    for (int i = 0; i < r->n_kept; i++) {
        fast_kept |= r->kept_hash[i] == fast_h;
        c[n++] = r->kept[i]; /* moved */
    }
    r->n_kept = 0;
    if (!fast_kept) {
        c[n++] = r->fast; /* moved */
        memset(&r->fast, 0, sizeof r->fast);
    }
    for (int i = 1; i < n; i++) /* cheapest first (the kept ones are sorted) */
        for (int j = i; j > 0 && c[j].ms < c[j - 1].ms; j--) {
            xf_search_candidate t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    res->candidates = c;
    res->n_candidates = n;
    return XF_OK;
}

xf_status xf_agent_run_end(xf_agent_run *r, xf_status st, xf_error *err)
{
    if (!st && r->keep > 0) st = hand_candidates(r, err);
    candidate_free(&r->fast);
    keep_free(r);
    xf_agent_run_lookahead_free(r);
    if (!st) st = xf_env_set_graph(r->e, &r->res->best, err);
    if (!st) r->res->best_ms = xf_env_cost(r->e);
    r->res->seen = (int64_t)r->seen.n;
    r->res->seconds = xf_clock_now() - r->t0;
    xf_htab_free(&r->seen);
    xf_free(r->path);
    r->path = NULL;
    return st;
}
