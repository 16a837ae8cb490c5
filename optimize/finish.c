/*
 * finish.c — the last step of xf_optimize_file: what is written is chosen
 * (with the target, the arbiter times the searches' cheapest candidates
 * against the input there; without it, the search's best graph finished
 * unless it is not cheaper than the input as written), checked
 * numerically against the input (refused unless o->check is 0), exported
 * keeping the symbolic dims, read back and checked at three sizes of each
 * in memory (external weights read back in place, not copied) and written
 * only then, the input instead when the optimised model fails at some size
 * (onnx's xf_onnx_write_checked; nothing is removed afterwards: the output
 * may be a device or a FIFO); last the end-to-end latency of both models.
 */
#include "optimize_internal.h"

#include <string.h>

static xf_status arbitrate(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_optimize_report *r = s->r;
    xf_arbiter_options ao = xf_arbiter_options_default();
    ao.max_models = o->candidates;
    ao.seed = o->seed;
    ao.rtol = o->rtol;
    ao.atol = o->atol;
    /* a kept symbolic dim may be the leading one: the unbatched layout
     * would write it fixed at its import size */
    ao.unbatch = xf_onnx_dynamic_points(s->dyn) == 1 && o->passes != XF_OPTIMIZE_RULES;
    ao.budget_s = o->target_budget;
    ao.budget_max_s = o->target_budget_max;
    if (o->racing) ao.racing = o->racing, ao.pairwise = 0;
    if (o->finalists) ao.finalists = o->finalists;
    /* the winner is confirmed against the file written if the input is kept */
    xf_onnx_check_options co = xf_onnx_default_check_options();
    co.model = s->model;
    co.external_data = o->external_data;
    int copyable = 0;
    xf_status st = xf_onnx_input_copyable(&co, XF_ARBITER_FILE_MAX_BYTES, &copyable, err);
    if (st) return st;
    if (copyable) ao.input_file = s->model;
    opt_note(s, XF_OPTIMIZE_STATUS,
             "target: timing up to %d candidates per search against the input (budget %s)...",
             o->candidates, o->target_budget > 0 ? "set" : "none");
    const xf_search_result *srs[2] = {&s->ms[0].res, &s->ms[1].res};
    /* what is written keeps the symbolic dims: so do the models timed */
    xf_target_keep_dims(s->target, s->dyn);
    st = xf_agent_arbitrate(s->target, s->cm, &s->input, srs, s->n_searches, &ao, &s->finished,
                            &r->arb, err);
    xf_target_keep_dims(s->target, NULL);
    if (st) return st;
    xf_heap_trim(); /* the sessions' memory, freed: before the check and the writing */
    memset(&s->oc, 0, sizeof s->oc);
    s->oc.cost_before = r->arb.e[0].cost_ms;
    s->oc.cost_after = r->arb.e[r->arb.chosen].cost_ms;
    s->oc.kept_original = r->arb.chosen == 0;
    return XF_OK;
}

/* The check in ONNX Runtime of a model the interpreter cannot run (an
 * fp16 or com.microsoft node): both models on the same random inputs, the
 * largest |d| over the largest |ref| of each output within rtol. */
static xf_status check_in_target(opt_run *s, const xf_error *why, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_check_result *chk = &s->r->check;
    xf_target *t = s->target;
    xf_status st = XF_OK;
    if (!t) {
        xf_target_options to = xf_target_default_options();
        to.threads = 1;
        st = xf_target_open(&to, &t, err);
    }
    double rel = 0;
    if (!st) st = xf_target_outputs_diff(t, &s->input, &s->finished, o->seed, &rel, err);
    if (t != s->target) xf_target_close(t);
    if (st) {
        xf_error_prefix(err, "the interpreter cannot run the model (%s) and ONNX Runtime could "
                        "not compare it", why->msg);
        return st;
    }
    snprintf(s->r->check_by, sizeof s->r->check_by, "ONNX Runtime (the interpreter cannot run the model: %s)",
             why->msg);
    chk->max_abs = chk->max_rel = rel;
    chk->bad_output = rel <= o->rtol ? -1 : 0;
    chk->bad_abs = rel;
    opt_note(s, XF_OPTIMIZE_STATUS, "numerical check in ONNX Runtime: %s; largest |d| / |ref| %.3g",
             why->msg, rel);
    return XF_OK;
}

/* The numerical check of the model to write against the input. */
static xf_status check(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_check_result *chk = &s->r->check;
    xf_error cerr = {0};
    xf_status st = xf_interp_check(&s->input, &s->finished, o->seed, o->rtol, o->atol, chk, &cerr);
    if (st == XF_ERR_UNSUPPORTED && o->check) { /* --no-check: no check anywhere */
        xf_error why = cerr;
        st = check_in_target(s, &why, &cerr);
    }
    if (st) {
        opt_note(s, XF_OPTIMIZE_WARN, "numerical check could not run: %s", cerr.msg);
        if (o->check)
            return XF_FAIL(err, st, "nothing written (use --no-check to write anyway)");
        chk->max_abs = chk->max_rel = -1;
    } else if (chk->bad_output >= 0) {
        int v = s->input.outputs[chk->bad_output];
        opt_note(s, XF_OPTIMIZE_WARN,
                 "optimised model differs at output %d '%s': max |d| = %.3g (tolerance %.3g + "
                 "%.3g*|ref|)",
                 chk->bad_output, s->input.values[v].name ? s->input.values[v].name : "?",
                 chk->bad_abs, o->atol, o->rtol);
        if (o->check)
            return XF_FAIL(err, XF_ERR_MISMATCH,
                           "nothing written (use --no-check to write anyway)");
    }
    return XF_OK;
}

static xf_status write_checked(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = s->model;
    wo.output = s->output;
    wo.external_data = o->external_data;
    /* no check: read back only; a model only ONNX Runtime runs was compared
     * there (check()), and the read-back still checks the graph */
    wo.numeric = o->check && !s->r->check_by[0];
    wo.fall_back = 1;
    wo.seed = o->seed;
    wo.rtol = o->rtol;
    wo.atol = o->atol;
    /* nothing better found: the input itself, which the writer copies byte
     * for byte when it can (the model as the user had it) */
    const xf_graph *written = s->oc.kept_original ? &s->input : &s->finished;
    xf_onnx_checked *w = &s->r->written;
    xf_status st = xf_onnx_write_checked(&wo, s->dyn, &s->input, written, w, err);
    if (st) return st;
    if (w->why[0])
        opt_note(s, XF_OPTIMIZE_WARN,
                 "the optimised model is not written: %s; writing the input %s instead", w->why,
                 w->wrote == XF_ONNX_WROTE_INPUT ? "model" : "file unchanged");
    return XF_OK;
}

/* The end-to-end latency of both models on the backend's executor; with
 * the target, its latency is the one measured unless asked (latency 2). */
static void latency(opt_run *s)
{
    const xf_optimize_options *o = &s->o;
    xf_optimize_report *r = s->r;
    if (!(o->latency == 2 || (o->latency == 1 && !s->target))) return;
    xf_error lerr = {0};
    snprintf(r->latency_identity, sizeof r->latency_identity, "%s", xf_cost_identity(s->lat_cm));
    if (xf_agent_latency_pair(s->lat_cm, &s->input, &s->finished, &r->latency_before,
                              &r->latency_after, &r->latency_spread, &lerr)) {
        r->latency_state = -1;
        snprintf(r->latency_error, sizeof r->latency_error, "%s", lerr.msg);
    } else {
        r->latency_state = 1;
    }
}

/* The search whose candidate is written, and the rules it applied. */
static xf_status applied(opt_run *s, xf_error *err)
{
    xf_optimize_report *r = s->r;
    r->chosen_search = s->target ? r->arb.e[r->arb.chosen].search : 0;
    const xf_model_search *ms = &s->ms[r->chosen_search];
    const xf_search_result *res = &ms->res;
    r->search_rewrites = res->n_applied;
    r->written_prep = *xf_env_prepare_stats(ms->env);
    if (s->oc.kept_original) return opt_report_applied(s, ms, NULL, err);
    if (s->target && res->n_candidates > 0) {
        const xf_search_candidate *c = &res->candidates[r->arb.e[r->arb.chosen].candidate];
        xf_search_result view = *res;
        view.n_applied = c->n_applied;
        view.applied = c->applied;
        r->unbatched = r->arb.e[r->arb.chosen].unbatched;
        return opt_report_applied(s, ms, &view, err);
    }
    return opt_report_applied(s, ms, res, err);
}

xf_status opt_finish(opt_run *s, xf_error *err)
{
    xf_optimize_report *r = s->r;
    xf_status st;
    if (s->target) st = arbitrate(s, err);
    else
        st = xf_agent_outcome_model(s->cm, &s->input, &s->ms[0].res.best, &s->finished, &s->oc,
                                    err);
    if (st) return st;
    r->cost_before = s->oc.cost_before;
    r->cost_after = s->oc.cost_after;
    r->kept_original = s->oc.kept_original;
    r->finish = s->oc.finish;
    r->nodes_after = s->finished.n_nodes;
    if ((st = check(s, err)) || (st = write_checked(s, err))) return st;
    if (s->fused) xf_fused_cost_get_stats(s->fused, &r->fused_stats);
    latency(s);
    if ((st = applied(s, err)) || (st = opt_report_dims(s, err))) return st;
    return opt_report_changes(s, r->kept_original ? &s->input : &s->finished, err);
}
