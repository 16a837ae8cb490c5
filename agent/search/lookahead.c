/*
 * lookahead.c — the look-ahead through chains of view moves (issue 28), one
 * for the searches and the learning agents (search.h's xf_lookahead): an
 * action whose rule has a reshape or a slice is valued by the graph it
 * leads to once the rule set's view moves (match/closure.c) have been
 * applied until none is left; an action whose rule makes a transpose ONNX
 * Runtime folds into its FusedMatMul (the unbatched heads), or takes a
 * matmul of a 3-D input by a 2-D weight out of the 2-D layout, by the graph
 * it makes alone where that costs less (the moves take the views away from
 * where the runtime folds the transpose, or flatten the matmul again). The
 * graph is built and costed in full; the searches' trail records the action
 * and then every move kept, so the report and the candidates' rule lists
 * name each proved rule applied. TASO's and greedy's expansions, the
 * agents' steps (agent/rl/agent_lookahead.c) and the guided search's prices
 * all go through xf_lookahead_price or xf_lookahead_close.
 */
#include "agent/search/search_internal.h"

#include <string.h>

/* Moves the closure may make after one action: enough for every reshape of
 * a large model to travel its length. */
#define LOOKAHEAD_MAX_STEPS XF_CLOSURE_LOG

/* 1 when g, one side of a rule, has a transpose ONNX Runtime folds into a
 * FusedMatMul (xf_ort_folds_transpose): the unbatched heads. */
static int side_folds(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        if (nd->op == XF_OP_TRANSPOSE && nd->n_inputs > 0 && nd->inputs[0] >= 0 &&
            xf_ort_folds_transpose(&nd->params, g->values[nd->inputs[0]].shape.rank))
            return 1;
    }
    return 0;
}

/* How many matmuls of a 3-D or larger input by a 2-D weight g, one side of
 * a rule, has. A rule with more of them on its target side takes a matmul
 * out of the 2-D layout, which the view moves would flatten again (where no
 * add reads it, ONNX Runtime runs it unwrapped and the flattened one costs a
 * Reshape more: GPT's LM head). Rules with as many on both sides keep the
 * layout as it was, and are not costed twice. */
static int unflattened_matmuls(const xf_graph *g)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        n += nd->op == XF_OP_MATMUL && nd->n_inputs == 2 && nd->inputs[0] >= 0 &&
             nd->inputs[1] >= 0 && g->values[nd->inputs[0]].shape.rank >= 3 &&
             g->values[nd->inputs[1]].shape.rank == 2;
    }
    return n;
}

int xf_rule_is_lookahead_move(const xf_rule *rule)
{
    /* a rule that takes a folded transpose apart (the unbatched heads read
     * backwards: one unsqueeze fewer, so a view move by the closure's
     * measure) is no move: the closure runs to the end over the whole
     * graph, so in every look-ahead it would undo each head an earlier
     * action unbatched, at a graph index per head (BERT-base with the
     * unbatched-head rules: 4.5x the search time, docs/log/target.md) */
    return xf_rule_has_view_op(rule) && !side_folds(&rule->src) && xf_rule_is_view_move(rule);
}

xf_status xf_lookahead_init(xf_lookahead *la, const xf_ruleset *rs, xf_error *err)
{
    la->viewy = NULL;
    la->plan = NULL;
    int n = xf_ruleset_count(rs), any = 0;
    uint8_t *moves = xf_calloc((size_t)n + 1, 1);
    la->viewy = xf_calloc((size_t)n + 1, 1);
    if (!moves || !la->viewy) {
        xf_free(moves);
        xf_lookahead_free(la);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory classifying %d rules", n);
    }
    for (int r = 0; r < n; r++) {
        const xf_rule *rule = xf_ruleset_rule(rs, r);
        la->viewy[r] = (uint8_t)xf_rule_has_view_op(rule);
        if (la->viewy[r] && (side_folds(&rule->dst) || unflattened_matmuls(&rule->dst) >
                                                            unflattened_matmuls(&rule->src)))
            la->viewy[r] = 2;
        moves[r] = (uint8_t)xf_rule_is_lookahead_move(rule);
        any |= la->viewy[r];
    }
    xf_status st = any ? xf_closure_plan_make(rs, moves, &la->plan, err) : XF_OK;
    xf_free(moves);
    if (st != XF_OK || !la->plan) xf_lookahead_free(la); /* nothing to look ahead through */
    return st;
}

void xf_lookahead_free(xf_lookahead *la)
{
    xf_closure_plan_free(la->plan);
    xf_free(la->viewy);
    la->plan = NULL;
    la->viewy = NULL;
}

int xf_lookahead_applies(const xf_lookahead *la, int r)
{
    return la->plan && r >= 0 && la->viewy[r];
}

xf_status xf_lookahead_close(const xf_lookahead *la, xf_env *e, int r, const xf_graph *one,
                             double one_ms, xf_graph *out, double *ms, xf_closure_log *log,
                             xf_error *err)
{
    xf_status st = xf_closure_run_plan(la->plan, one, LOOKAHEAD_MAX_STEPS, out, log, err);
    int changed = !st && (log->n > 0 || log->merged > 0);
    if (!st && !changed) xf_graph_free(out); /* the moves made nothing: one stands */
    if (!st && changed) st = xf_env_cost_graph(e, out, ms, err);
    if (!st && one_ms < 0 && (!changed || la->viewy[r] == 2))
        st = xf_env_cost_graph(e, one, &one_ms, err);
    if (!st && changed && la->viewy[r] == 2 && one_ms < *ms) {
        /* the moves cost more than they save (they may take a view away
         * from where the runtime folds it: the unbatched heads' transposes
         * ONNX Runtime folds into its FusedMatMul; or flatten a matmul the
         * runtime runs unwrapped): the action alone */
        xf_graph_free(out);
        changed = 0;
    }
    if (st) {
        xf_graph_free(out);
        return st;
    }
    if (!changed) {
        xf_graph_init(out);
        *ms = one_ms;
        log->n = 0;
        log->merged = 0;
    }
    return XF_OK;
}

xf_status xf_lookahead_price(const xf_lookahead *la, xf_env *e, int r, int l, xf_graph *out,
                             double *ms, xf_closure_log *log, xf_error *err)
{
    xf_graph one, ahead;
    xf_closure_log own;
    if (!log) log = &own;
    log->n = 0;
    log->merged = 0;
    if (out) xf_graph_init(out);
    if (!xf_lookahead_applies(la, r)) {
        double bytes;
        return xf_env_peek(e, r, l, ms, &bytes, err);
    }
    xf_status st = xf_match_apply(xf_env_ruleset(e), xf_env_graph(e), xf_env_index(e),
                                  xf_env_location(e, r, l), &one, err);
    if (st != XF_OK) return st;
    st = xf_lookahead_close(la, e, r, &one, -1, &ahead, ms, log, err);
    int alone = !st && log->n == 0 && log->merged == 0;
    if (!st && out) { /* the graph the action leads to, handed over */
        *out = alone ? one : ahead;
        if (alone) xf_graph_init(&one);
        else xf_graph_init(&ahead);
    }
    xf_graph_free(&one);
    xf_graph_free(&ahead);
    return st;
}

xf_status search_trail_add_moves(xf_search_ctx *c, int parent, int r, const xf_closure_log *log,
                                    int *entry, xf_error *err)
{
    xf_status st = search_trail_add(&c->trail, parent, r, entry, err);
    for (int k = 0; !st && log && k < log->n && k < XF_CLOSURE_LOG; k++)
        st = search_trail_add(&c->trail, *entry, log->rule[k], entry, err);
    return st;
}
