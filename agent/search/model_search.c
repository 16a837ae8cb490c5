/*
 * model_search.c — xf_model_search: a model prepared one way, the rules
 * that can match it and the environment over it, kept together with the
 * search's result; and xf_prepare_alternative, the other preparation a
 * target runtime should also weigh.
 *
 * Why: rlflow-agent and the benches search a model, then hand the search's
 * candidates to the arbiter, which finishes them long after the search: the
 * candidates borrow the prepared graph's constants, so the rule set, the
 * environment and the result must live and die together. With a target,
 * the same model is searched prepared twice (scalings moved into weights,
 * and kept where the exporter put them: ONNX Runtime's GELU and attention
 * fusions look for them there), and the arbiter times both searches'
 * candidates: one struct, two instances.
 */
#include <string.h>

#include "agent/search/search_internal.h"

void xf_model_search_init(xf_model_search *s)
{
    memset(s, 0, sizeof *s);
    s->prepare = xf_prepare_options_default();
    xf_graph_init(&s->prepared);
    xf_search_result_init(&s->res);
}

static void free_actions(xf_model_search *s)
{
    for (int i = 0; s->action_text && i < s->n_actions; i++) xf_free(s->action_text[i]);
    xf_free(s->action_text);
    xf_free(s->action_id);
    xf_free(s->action_view);
    s->action_text = NULL;
    s->action_id = NULL;
    s->action_view = NULL;
    s->n_actions = 0;
}

void xf_model_search_free(xf_model_search *s)
{
    if (!s) return;
    free_actions(s);
    xf_search_result_free(&s->res);
    xf_env_free(s->env);
    xf_ruleset_free(s->rs);
    xf_graph_free(&s->prepared);
    xf_model_search_init(s);
}

xf_status xf_model_search_prepare(xf_model_search *s, const xf_graph *model,
                                  const xf_prepare_options *prepare, xf_error *err)
{
    s->prepare = prepare ? *prepare : xf_prepare_options_default();
    xf_status st = xf_agent_prepare(model, &s->prepare, &s->prepared, &s->prep, err);
    if (st) xf_model_search_free(s);
    return st;
}

xf_status xf_model_search_rules(xf_model_search *s, const char *rules_db,
                                const xf_ruleset_options *ro, int restrict_rules, xf_error *err)
{
    xf_ruleset_options o = ro ? *ro : xf_ruleset_options_default();
    o.restrict_to = restrict_rules ? &s->prepared : NULL;
    o.keep_scalings = !s->prepare.scalar_mul;
    xf_status st = rules_db ? xf_ruleset_load(rules_db, &o, &s->rs, err)
                            : xf_ruleset_from_rules(NULL, NULL, 0, &o, &s->rs, err);
    if (st) xf_model_search_free(s);
    return st;
}

xf_status xf_model_search_env(xf_model_search *s, xf_cost_model *cm, const xf_env_options *eo,
                              xf_error *err)
{
    xf_env_options o = eo ? *eo : xf_env_options_default();
    o.prepare = s->prepare;
    return xf_env_create_prepared(s->rs, cm, &s->prepared, &s->prep, &o, &s->env, err);
}

xf_status xf_model_search_release_rules(xf_model_search *s, xf_error *err)
{
    if (!s->rs) return XF_OK;
    int n = xf_ruleset_count(s->rs);
    s->action_id = xf_calloc((size_t)n + 1, sizeof *s->action_id);
    s->action_text = xf_calloc((size_t)n + 1, sizeof *s->action_text);
    s->action_view = xf_calloc((size_t)n + 1, sizeof *s->action_view);
    xf_status st = s->action_id && s->action_text && s->action_view ? XF_OK
                                                  : XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    for (int i = 0; !st && i < n; i++) {
        s->action_id[i] = xf_ruleset_rule_id(s->rs, i);
        s->action_view[i] = (unsigned char)xf_rule_has_view_op(xf_ruleset_rule(s->rs, i));
        s->action_text[i] = xf_strdup(xf_ruleset_text(s->rs, i));
        if (!s->action_text[i]) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        s->n_actions = i + 1;
    }
    if (st) {
        free_actions(s);
        return st;
    }
    xf_ruleset_free(s->rs);
    s->rs = NULL;
    return XF_OK;
}

int64_t xf_model_search_rule_id(const xf_model_search *s, int i)
{
    return s->rs ? xf_ruleset_rule_id(s->rs, i) : i >= 0 && i < s->n_actions ? s->action_id[i] : 0;
}

const char *xf_model_search_rule_text(const xf_model_search *s, int i)
{
    return s->rs ? xf_ruleset_text(s->rs, i)
                 : i >= 0 && i < s->n_actions ? s->action_text[i] : "?";
}

int xf_model_search_rule_has_view(const xf_model_search *s, int i)
{
    if (s->rs) return i >= 0 && i < xf_ruleset_count(s->rs) && xf_rule_has_view_op(xf_ruleset_rule(s->rs, i));
    return i >= 0 && i < s->n_actions && s->action_view[i];
}

int xf_prepare_alternative(const xf_prepare_options *prepare, const xf_prepare_stats *stats,
                           xf_prepare_options *alt)
{
    if (!prepare->scalar_mul || stats->scalar_muls == 0) return 0;
    *alt = *prepare;
    alt->scalar_mul = 0;
    return 1;
}
