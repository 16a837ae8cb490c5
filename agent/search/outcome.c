/*
 * outcome.c — xf_agent_outcome_model: the model a search's best working
 * graph becomes, with the one policy on it: never hand out a model that
 * does not cost less, as written, than the input.
 */
#include <string.h>

#include "agent/search/search_internal.h"

xf_status xf_agent_model_cost(xf_cost_model *cm, const xf_graph *g, double *ms, xf_error *err)
{
    xf_graph_index *ix = NULL;
    xf_op_cost c;
    xf_status st = xf_graph_index_build(g, &ix, err);
    if (!st) st = xf_agent_graph_cost(cm, g, ix, &c, err);
    xf_graph_index_free(ix);
    *ms = st ? 0 : c.ms;
    return st;
}

xf_status xf_agent_outcome_model(xf_cost_model *cm, const xf_graph *model, const xf_graph *best,
                                 xf_graph *out, xf_agent_outcome *oc, xf_error *err)
{
    memset(oc, 0, sizeof *oc);
    xf_graph_init(out);
    xf_status st = xf_agent_finish(best, out, &oc->finish, err);
    if (st) {
        xf_error_prefix(err, "folding the optimised graph failed");
        return st;
    }
    st = xf_agent_model_cost(cm, model, &oc->cost_before, err);
    if (!st) st = xf_agent_model_cost(cm, out, &oc->cost_after, err);
    if (st) {
        xf_error_prefix(err, "costing the models failed");
        xf_graph_free(out);
        return st;
    }
    if (!(oc->cost_after < oc->cost_before)) {
        /* The search's working graph can look cheaper while the model as
         * written is not (e.g. a bias add moved away from its conv cannot be
         * fused back): never hand out a slower model. */
        xf_graph_free(out);
        st = xf_graph_clone_shared(model, out, err);
        if (st) return st;
        oc->kept_original = 1;
        oc->cost_after = oc->cost_before;
        memset(&oc->finish, 0, sizeof oc->finish);
    }
    return XF_OK;
}
