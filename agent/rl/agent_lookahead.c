/*
 * agent_lookahead.c — the look-ahead of the searches (agent/search's
 * lookahead.c) given to the learning agents: a real step whose rule has a
 * reshape or a slice is followed by the closure of the rule set's view
 * moves (match/closure.c), and the agent sees the graph it leads to as the
 * step's outcome, its reward the cost change of the whole.
 *
 * Why: with the layout and indexing rules the good rewrites are chains of
 * a hundred moves, each costing a reshape more until the view reaches the
 * end (docs/log/agent.md: modelzoo BERT's 2-D layout). An agent choosing
 * one rule at a time meets a long run of small penalties before any gain
 * and, within its budget, never crosses it (PPO and the world model read
 * 1.06-1.09 of the input where TASO with the look-ahead wrote 0.70). The
 * moves are proved rules applied in a fixed order, so they add no choice
 * for the agent: a macro-action, as the search's look-ahead is.
 *
 * The closure's cost change is added to the step's reward as the dense
 * term with the environment's default weight (α = 1; the agents'
 * environments use it). A sparse target measurement made at the step was
 * of the graph before the moves: the step reports none (target_ms 0), so
 * the fastest-measured candidate is always the graph that was measured.
 */
#include "agent/rl/ppo.h"

#include <string.h>

xf_status xf_agent_run_lookahead(xf_agent_run *r, xf_error *err)
{
    return xf_lookahead_init(&r->la, xf_env_ruleset(r->e), err);
}

void xf_agent_run_lookahead_free(xf_agent_run *r)
{
    xf_lookahead_free(&r->la);
    r->moves.n = 0;
}

xf_status xf_agent_env_step(xf_agent_run *r, int xfer, int location, xf_env_step_result *sr,
                            xf_error *err)
{
    r->moves.n = 0;
    r->moves.merged = 0;
    xf_status st = xf_env_step(r->e, xfer, location, sr, err);
    if (st != XF_OK || !sr->valid || xfer >= xf_env_num_xfers(r->e) ||
        !xf_lookahead_applies(&r->la, xfer))
        return st;
    xf_graph out;
    double ms;
    st = xf_lookahead_close(&r->la, r->e, xfer, xf_env_graph(r->e), sr->cost_ms, &out, &ms,
                            &r->moves, err);
    if (st != XF_OK) return st;
    if (r->moves.n == 0 && r->moves.merged == 0) return XF_OK; /* the step alone stands */
    double before = sr->cost_ms;
    st = xf_env_set_graph(r->e, &out, err);
    xf_graph_free(&out);
    if (st != XF_OK) {
        r->moves.n = 0;
        return st;
    }
    r->closures++;
    r->moves_made += r->moves.n;
    sr->cost_ms = xf_env_cost(r->e);
    sr->reward += (before - sr->cost_ms) / xf_env_initial_cost(r->e) * 100.0;
    sr->hash = xf_env_hash(r->e);
    sr->target_ms = 0;
    if (!sr->done) { /* done too when the moves left no rule a location */
        const uint8_t *mask = xf_env_xfer_mask(r->e);
        int any = 0;
        for (int i = 0; i < xf_env_num_xfers(r->e) && !any; i++) any = mask[i];
        sr->done = !any;
    }
    return XF_OK;
}
