/*
 * search_walk.c — the two baselines that walk the environment one step at a
 * time.
 *
 * random: episodes of uniformly random valid actions (every offered
 * (rule, location) pair equally likely; the no-op is never drawn), each
 * episode ending when the environment says done (max_steps or nothing left
 * to apply), then reset. The budget counts steps over all episodes; the
 * cheapest graph seen is kept. Deterministic for a given seed.
 *
 * greedy: at every step peek at every offered (rule, location) pair and take
 * the one that lowers the cost most (the first in rule, location order on a
 * tie); stop when no pair improves by more than rounding noise or after
 * `budget` steps. The cost never goes up.
 */
#include "agent/search/search_internal.h"

static int64_t offered(const xf_search_ctx *c)
{
    int64_t total = 0;
    for (int r = 0; r < xf_env_num_xfers(c->env); r++) total += search_locations(c, r);
    return total;
}

/* The k-th offered pair, counting rule by rule. */
static void pick(const xf_search_ctx *c, int64_t k, int *rule, int *loc)
{
    int r = 0;
    for (;; r++) {
        int n = search_locations(c, r);
        if (k < n) break;
        k -= n;
    }
    *rule = r;
    *loc = (int)k;
}

xf_status search_random(xf_search_ctx *c, xf_error *err)
{
    xf_env *e = c->env;
    xf_search_result *res = c->res;
    double eps = XF_SEARCH_EPS * res->initial_ms;
    xf_rng rng;
    xf_rng_seed(&rng, c->opt.seed);
    int entry = 0; /* trail entry of the current graph */
    xf_status st = XF_OK;
    while (res->expanded < c->opt.budget && !search_out_of_time(c)) {
        int64_t total = offered(c);
        if (total == 0) {
            if (xf_env_steps(e) == 0) break; /* the start offers nothing */
            st = xf_env_reset(e, err);
            if (st) return st;
            entry = 0;
            continue;
        }
        int rule, loc;
        pick(c, (int64_t)(xf_rng_next(&rng) % (uint64_t)total), &rule, &loc);
        xf_env_step_result sr;
        st = xf_env_step(e, rule, loc, &sr, err);
        if (st) return st;
        res->expanded++;
        if (sr.valid) {
            int added;
            st = search_trail_add(&c->trail, entry, rule, &entry, err);
            if (!st) st = xf_htab_put(&c->seen, xf_htab_key(sr.hash), NULL, &added, err);
            if (!st && sr.cost_ms < res->best_ms - eps)
                st = search_keep_best(c, xf_env_graph(e), sr.cost_ms, entry, err);
            if (!st && added)
                st = search_offer(c, xf_env_graph(e), sr.cost_ms, entry, err);
            if (st) return st;
        }
        search_tick(c);
        if (sr.done) {
            st = xf_env_reset(e, err);
            if (st) return st;
            entry = 0;
        }
    }
    return XF_OK;
}

xf_status search_greedy(xf_search_ctx *c, xf_error *err)
{
    xf_env *e = c->env;
    xf_search_result *res = c->res;
    double eps = XF_SEARCH_EPS * res->initial_ms;
    int entry = 0;
    while (res->expanded < c->opt.budget && !search_out_of_time(c)) {
        double cur = xf_env_cost(e), best = cur - eps;
        int best_rule = -1, best_loc = -1;
        xf_graph ahead; /* the best successor when it came from a look-ahead */
        xf_closure_log log, best_log;
        xf_graph_init(&ahead);
        for (int r = 0; r < xf_env_num_xfers(e); r++) {
            int n = search_locations(c, r);
            for (int l = 0; l < n; l++) {
                double ms, bytes;
                xf_graph s;
                xf_error aerr;
                int look = xf_lookahead_applies(&c->la, r);
                xf_status st = look ? xf_lookahead_price(&c->la, e, r, l, &s, &ms, &log, &aerr)
                                    : xf_env_peek(e, r, l, &ms, &bytes, &aerr);
                if (st && !xf_action_skippable(st)) {
                    if (err) *err = aerr;
                    xf_graph_free(&ahead);
                    return st;
                }
                if (st || !(ms < best)) {
                    if (!st && look) xf_graph_free(&s);
                    continue;
                }
                xf_graph_free(&ahead);
                if (look) {
                    ahead = s;
                    best_log = log;
                }
                best = ms;
                best_rule = r;
                best_loc = l;
            }
        }
        if (best_rule < 0) break;
        xf_env_step_result sr;
        xf_status st;
        int looked = ahead.n_nodes > 0 || ahead.n_values > 0;
        if (looked) {
            st = search_env_adopt_graph(e, &ahead, NULL, err);
            sr.valid = 1;
            sr.cost_ms = xf_env_cost(e);
            sr.hash = xf_env_hash(e);
        } else {
            st = xf_env_step(e, best_rule, best_loc, &sr, err);
        }
        if (st) return st;
        res->expanded++;
        if (!sr.valid || !(sr.cost_ms < cur - eps)) break; /* best stays the last graph */
        int added;
        st = search_trail_add_moves(c, entry, best_rule, looked ? &best_log : NULL, &entry, err);
        if (!st) st = xf_htab_put(&c->seen, xf_htab_key(sr.hash), NULL, &added, err);
        if (!st) st = search_keep_best(c, xf_env_graph(e), sr.cost_ms, entry, err);
        if (!st && added)
            st = search_offer(c, xf_env_graph(e), sr.cost_ms, entry, err);
        if (st) return st;
        search_tick(c);
    }
    return XF_OK;
}
