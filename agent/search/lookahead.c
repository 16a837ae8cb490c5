/*
 * lookahead.c — the searches' look-ahead through chains of view moves
 * (issue 28): an action whose rule has a reshape or a slice is valued by
 * the graph it leads to once the rule set's view moves (match/
 * closure.c) have been applied until none is left; an action whose rule
 * makes a transpose ONNX Runtime folds into its FusedMatMul (the unbatched
 * heads), or a matmul of a 3-D input by a 2-D weight, by the graph it makes
 * alone where that costs less (the moves take the views away from where
 * the runtime folds the transpose, or flatten the matmul again). The graph
 * is built and costed in full; the
 * trail records the action and then every move kept, so the report and the
 * candidates' rule lists name each proved rule applied.
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

/* 1 when g, one side of a rule, has a matmul of a 3-D or larger input by a
 * 2-D weight: a matmul taken out of the 2-D layout, which the view moves
 * would flatten again (where no add reads it, ONNX Runtime runs it
 * unwrapped and the flattened one costs a Reshape more: GPT's LM head). */
static int side_unflattens_matmul(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        if (nd->op == XF_OP_MATMUL && nd->n_inputs == 2 && nd->inputs[0] >= 0 &&
            nd->inputs[1] >= 0 && g->values[nd->inputs[0]].shape.rank >= 3 &&
            g->values[nd->inputs[1]].shape.rank == 2)
            return 1;
    }
    return 0;
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

xf_status search_lookahead_init(xf_search_ctx *c, xf_error *err)
{
    c->moves = c->viewy = NULL;
    c->plan = NULL;
    if (!c->opt.lookahead) return XF_OK;
    const xf_ruleset *rs = xf_env_ruleset(c->env);
    int n = xf_ruleset_count(rs), any = 0;
    c->moves = xf_calloc((size_t)n + 1, 1);
    c->viewy = xf_calloc((size_t)n + 1, 1);
    if (!c->moves || !c->viewy) {
        xf_free(c->moves);
        xf_free(c->viewy);
        c->moves = c->viewy = NULL;
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory classifying %d rules", n);
    }
    for (int r = 0; r < n; r++) {
        const xf_rule *rule = xf_ruleset_rule(rs, r);
        c->viewy[r] = (uint8_t)xf_rule_has_view_op(rule);
        if (c->viewy[r] && (side_folds(&rule->dst) || side_unflattens_matmul(&rule->dst)))
            c->viewy[r] = 2;
        c->moves[r] = (uint8_t)xf_rule_is_lookahead_move(rule);
        any |= c->viewy[r];
    }
    if (!any) {
        xf_free(c->moves);
        xf_free(c->viewy);
        c->moves = c->viewy = NULL;
        return XF_OK;
    }
    return xf_closure_plan_make(rs, c->moves, &c->plan, err);
}

int search_looks_ahead(const xf_search_ctx *c, int r)
{
    return c->viewy && r >= 0 && c->viewy[r];
}

xf_status search_lookahead(xf_search_ctx *c, int r, int l, xf_graph *out, double *ms,
                              xf_closure_log *log, xf_error *err)
{
    xf_env *e = c->env;
    const xf_ruleset *rs = xf_env_ruleset(e);
    xf_graph one;
    xf_graph_init(out);
    xf_status st = xf_match_apply(rs, xf_env_graph(e), xf_env_index(e), xf_env_location(e, r, l),
                                  &one, err);
    if (st) return st;
    st = xf_closure_run_plan(c->plan, &one, LOOKAHEAD_MAX_STEPS, out, log, err);
    if (!st) st = xf_env_cost_graph(e, out, ms, err);
    double ms_one = 0;
    int alone = c->viewy[r] == 2 && log->n > 0;
    if (!st && alone) st = xf_env_cost_graph(e, &one, &ms_one, err);
    if (!st && alone && ms_one < *ms) {
        /* the moves cost more than they save (they may take a view away
         * from where the runtime folds it: the unbatched heads' transposes
         * ONNX Runtime folds into its FusedMatMul; or flatten a matmul the
         * runtime runs unwrapped): the action alone */
        xf_graph_free(out);
        *out = one;
        xf_graph_init(&one);
        *ms = ms_one;
        log->n = 0;
    }
    xf_graph_free(&one);
    if (st) xf_graph_free(out);
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
