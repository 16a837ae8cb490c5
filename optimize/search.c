/*
 * search.c — the middle step of xf_optimize_file: the environments over
 * the prepared model (and, with the target deciding a search or an agent
 * that trains here, over the model prepared the other way, whose
 * candidates the arbiter times with the first's), the head of the report
 * handed to the stage callback, then the search or the learning agent on
 * each. The agents get both preparations, each for the time a search gets
 * on each, as TASO does: with the first alone they were judged on half
 * the graphs TASO's arbiter sees.
 */
#include "optimize_internal.h"

/* Default time budget of a search on the fusion-aware cost, and of the
 * learning agents. */
#define FUSED_SEARCH_SECONDS 120.0
#define AGENT_SECONDS 120.0

static const char *agent_name(xf_optimize_agent a)
{
    return a == XF_OPTIMIZE_PPO ? "ppo" : "wm";
}

static xf_status make_envs(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_env_options eo = xf_env_options_default();
    eo.max_locations = o->locations;
    eo.fused = s->fused;
    if (s->target) { /* the search sees the layouts ONNX Runtime runs faster */
        eo.layout_view_ms = XF_ORT_VIEW_MS;
        eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    }
    /* the learning agents' sparse reward, while training: a loaded agent
     * does not learn, and timing its graphs took most of its time */
    if (s->target && o->agent != XF_OPTIMIZE_SEARCH && !o->load) {
        eo.target = s->target;
        eo.target_every = o->target_every;
    }
    xf_prepare_options alt;
    xf_status st;
    /* a learning agent that trains here learns on both as well, each for the
     * time a search gets on each (a loaded or saved agent is one agent: the
     * model as asked) */
    int both = o->agent == XF_OPTIMIZE_SEARCH || (!o->load && !o->save);
    if (s->target && both && o->scalings_both &&
        xf_prepare_alternative(&o->prepare, &s->ms[0].prep, &alt)) {
        if ((st = opt_load_rules(s, 1, &alt, err))) {
            xf_error_prefix(err, "the search with scalings kept");
            return st;
        }
        s->n_searches = 2;
    }
    for (int i = 0; i < s->n_searches; i++)
        if ((st = xf_model_search_env(&s->ms[i], s->cm, &eo, err))) return st;
    /* an agent has nothing to learn where no action can match: the first
     * environment's candidates are timed alone */
    if (o->agent != XF_OPTIMIZE_SEARCH && s->n_searches > 1 &&
        xf_env_num_xfers(s->ms[1].env) == 0)
        s->n_searches = 1;
    return XF_OK;
}

static void search_figures(opt_run *s)
{
    for (int i = 0; i < s->n_searches; i++) {
        const xf_search_result *ri = &s->ms[i].res;
        s->r->search[i] = (xf_optimize_search_figures){
            ri->expanded,      ri->seen,         ri->seconds,         ri->initial_ms,
            ri->best_ms,       ri->unpolished_ms, ri->polish_steps, ri->polish_seconds};
    }
}

/* The agent trained (or loaded) on search i's environment; the report's
 * figures of what was learned and of the target's sparse reward are the
 * first environment's. */
static xf_status learn_one(opt_run *s, int i, xf_error *err)
{
    xf_env *env = s->ms[i].env;
    const xf_optimize_options *o = &s->o;
    xf_rl_learn_options lo = {0};
    lo.wm = o->agent == XF_OPTIMIZE_WM;
    lo.cm = s->cm;
    lo.max_locations = o->locations;
    lo.seed = o->seed;
    lo.tau = (float)o->tau;
    lo.max_seconds = o->time_limit > 0 ? o->time_limit : AGENT_SECONDS;
    lo.max_env_steps = o->budget;
    lo.no_lookahead = !o->lookahead; /* --no-lookahead: the agents' too */
    lo.no_polish = !o->polish;
    lo.load = o->load;
    lo.samples = o->samples;
    lo.guide = o->guide;
    lo.save = o->save;
    lo.ppo_progress = opt_trace_ppo;
    lo.wm_progress = opt_trace_wm;
    lo.progress_user = s;
    opt_trace_begin(s, i);
    s->r->agent = o->agent;
    double t0 = xf_clock_now();
    xf_rl_learned other;
    xf_rl_learned *learned = i == 0 ? &s->r->learned : &other;
    xf_status st = xf_rl_learn(env, &lo, &s->ms[i].res, learned, err);
    if (!st) st = opt_trace_end(s, &s->ms[i].res, xf_clock_now() - t0, err);
    if (o->ppo_progress || o->wm_progress) opt_note(s, XF_OPTIMIZE_PROGRESS_END, "%s", "");
    if (st) {
        xf_error_prefix(err, "%s agent failed%s", agent_name(o->agent),
                        i ? " with scalings kept" : "");
        if (learned->load_failed) s->r->input_error = 1; /* an unreadable checkpoint */
        return st;
    }
    if (learned->save_failed) /* the model is still written; the report says it */
        opt_note(s, XF_OPTIMIZE_WARN, "checkpoint not written: %s", learned->save_err.msg);
    if (s->target && i == 0) {
        xf_env_profile p;
        xf_env_profile_get(env, &p);
        s->r->target_runs = p.target_runs;
        s->r->target_seconds = p.target;
        s->r->target_initial_ms = xf_env_target_initial_ms(env);
    }
    return XF_OK;
}

/* The agent on each environment. */
static xf_status learn(opt_run *s, xf_error *err)
{
    xf_status st = XF_OK;
    for (int i = 0; !st && i < s->n_searches; i++) st = learn_one(s, i, err);
    return st;
}

static xf_status run_search(opt_run *s, xf_search_kind kind, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_search_options so = xf_search_options_default();
    so.alpha = o->alpha;
    if (o->budget > 0) so.budget = o->budget;
    /* On the fused cost every new region is timed in the target: a search
     * that keeps finding new ones is bounded by time unless told otherwise. */
    so.max_seconds = o->time_limit > 0 ? o->time_limit : s->fused ? FUSED_SEARCH_SECONDS : 0;
    so.seed = o->seed;
    so.max_locations = o->locations;
    so.lookahead = o->lookahead;
    if (s->target) so.candidates = 3 * o->candidates + 1; /* finishing merges some */
    so.progress = opt_trace_search;
    so.progress_user = s;
    for (int i = 0; i < s->n_searches; i++) {
        opt_trace_begin(s, i);
        xf_status st = xf_search_run(s->ms[i].env, kind, &so, &s->ms[i].res, err);
        if (!st) st = opt_trace_end(s, &s->ms[i].res, s->ms[i].res.seconds, err);
        /* with the target to come, the rules are not needed any more: freed
         * (their ids and texts kept for the report), with the search's
         * frontier, before the sessions take their memory */
        if (!st && s->target) st = xf_model_search_release_rules(&s->ms[i], err);
        xf_heap_trim();
        if (o->search_progress) opt_note(s, XF_OPTIMIZE_PROGRESS_END, "%s", "");
        if (st) {
            xf_error_prefix(err, "%s search%s failed", xf_search_kind_name(kind),
                            i ? " with scalings kept" : "");
            return st;
        }
    }
    return XF_OK;
}

xf_status opt_search(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_status st;
    double t0 = xf_clock_now(); /* the search's time counts the environments' making */
    if ((st = make_envs(s, err)) || (st = opt_report_head(s, err))) return st;
    xf_env *env = s->ms[0].env;
    xf_search_kind kind = o->search;
    if (o->agent != XF_OPTIMIZE_SEARCH && xf_env_num_xfers(env) == 0) {
        /* Every action was irrelevant to the model: nothing to learn; an
         * empty greedy search hands back the model as it is. */
        s->r->agent_untrained = 1;
        kind = XF_SEARCH_GREEDY;
    }
    if (o->stage) o->stage(o->user, XF_OPTIMIZE_STAGE_SEARCH, s->r);
    if (o->agent != XF_OPTIMIZE_SEARCH && !s->r->agent_untrained)
        st = learn(s, err);
    else
        st = run_search(s, kind, err);
    s->r->search_seconds = xf_clock_now() - t0;
    if (st) return st;
    search_figures(s);
    if (o->stage) o->stage(o->user, XF_OPTIMIZE_STAGE_SEARCHED, s->r);
    return XF_OK;
}
