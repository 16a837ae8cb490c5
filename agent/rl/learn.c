/*
 * learn.c — the learning agents run as one step of an optimisation: the
 * model-free PPO agent or the world-model agent (ppo.h, wm.h) trained on
 * an environment within a budget, or loaded from a checkpoint and run
 * greedily; saved on request. A save that fails is not an error of the
 * run (what was learned still optimises the model): out->save_failed says
 * it. Moved here from rlflow-agent's learn.c so that the library call that
 * optimises a model (optimize/) runs them; the tool prints the figures.
 */
#include "rl.h"

#include <string.h>

static void ppo_opts(const xf_rl_learn_options *o, xf_ppo_agent_options *opt)
{
    *opt = xf_ppo_agent_options_default();
    opt->transfer = o->load != NULL;
    opt->cm = o->cm;
    opt->max_locations = o->max_locations;
    opt->seed = o->seed;
    opt->max_seconds = o->max_seconds;
    if (o->max_env_steps > 0) opt->max_env_steps = o->max_env_steps;
    opt->lookahead = !o->no_lookahead;
    opt->polish = !o->no_polish;
    opt->self_imitation = !o->no_self_imitation;
    opt->novelty = o->novelty;
    opt->progress = o->ppo_progress;
    opt->progress_user = o->progress_user;
}

/* A loaded agent on env without training: with o->guide (PPO) a search
 * the policy guides, then one greedy episode and o->samples sampled ones;
 * the best graph of all is kept (res), env holds it. What the agent cannot
 * use here goes to out. */
static xf_status play(xf_ppo_agent *ppo, xf_wm_agent *wm, xf_env *env,
                      const xf_rl_learn_options *o, xf_search_result *res, xf_rl_learned *out,
                      xf_error *err)
{
    xf_search_result one;
    xf_search_result_init(&one);
    int64_t expanded = 0, seen = 0;
    double seconds = 0;
    xf_status st = XF_OK;
    int guided = ppo && o->guide > 0;
    out->guided = guided;
    for (int k = -guided; !st && k <= o->samples; k++) {
        /* the guided search and the greedy episode always run; the time
         * budget bounds the sampled ones */
        if (k > 0 && xf_clock_now() - out->t0 >= o->max_seconds) break;
        xf_search_result *into = k == -guided ? res : &one;
        st = k < 0    ? xf_ppo_agent_guide(ppo, env, o->guide, into, err)
             : ppo    ? xf_ppo_agent_run(ppo, env, k == 0, into, err)
                      : xf_wm_agent_run(wm, env, k == 0, into, err);
        if (st) break;
        out->episodes++;
        expanded += into->expanded;
        seen += into->seen;
        seconds += into->seconds;
        if (k > -guided && one.best_ms < res->best_ms) {
            xf_search_result t = *res;
            *res = one;
            one = t;
        }
        xf_search_result_free(&one);
    }
    xf_search_result_free(&one);
    if (st) return st;
    res->expanded = expanded;
    res->seen = seen;
    res->seconds = seconds;
    const xf_actions *act = ppo ? xf_ppo_agent_actions(ppo) : &wm->act;
    out->unavailable = act->unbound;
    st = xf_env_reset(env, err);
    if (!st) out->outside = xf_actions_outside(act, env);
    if (!st) st = xf_env_set_graph(env, &res->best, err);
    return st;
}

static xf_status run_ppo(xf_env *env, const xf_rl_learn_options *o, xf_search_result *res,
                         xf_rl_learned *out, xf_error *err)
{
    xf_ppo_agent_options opt;
    ppo_opts(o, &opt);
    xf_ppo_agent *a = NULL;
    xf_status st = xf_ppo_agent_create(&opt, &a, err);
    if (!st && o->load) out->load_failed = (st = xf_ppo_agent_load(a, o->load, env, err)) != 0;
    if (!st) st = o->load ? play(a, NULL, env, o, res, out, err) : xf_ppo_agent_train(a, env, res, err);
    if (!st && o->save) out->save_failed = xf_ppo_agent_save(a, o->save, &out->save_err) != 0;
    if (a) out->actions = xf_ppo_agent_actions(a)->M;
    xf_ppo_agent_free(a);
    return st;
}

static xf_status run_wm(xf_env *env, const xf_rl_learn_options *o, xf_search_result *res,
                        xf_rl_learned *out, xf_error *err)
{
    xf_wm_agent_options opt = xf_wm_agent_options_default();
    opt.cm = o->cm;
    opt.max_locations = o->max_locations;
    opt.seed = o->seed;
    opt.tau = o->tau;
    opt.transfer = o->load != NULL;
    opt.max_seconds = o->max_seconds;
    if (o->max_env_steps > 0) opt.max_env_steps = o->max_env_steps;
    opt.lookahead = !o->no_lookahead;
    opt.polish = !o->no_polish;
    opt.self_imitation = !o->no_self_imitation;
    opt.progress = o->wm_progress;
    opt.progress_user = o->progress_user;
    xf_wm_agent *a = NULL;
    xf_status st = xf_wm_agent_create(&opt, &a, err);
    if (!st && o->load) out->load_failed = (st = xf_wm_agent_load(a, o->load, env, err)) != 0;
    if (!st)
        st = o->load ? play(NULL, a, env, o, res, out, err)
                     : xf_wm_agent_train(a, env, res, &out->wm, err);
    if (!st && o->save) out->save_failed = xf_wm_agent_save(a, o->save, &out->save_err) != 0;
    if (a) out->actions = a->act.M;
    xf_wm_agent_free(a);
    return st;
}

xf_status xf_rl_learn(xf_env *env, const xf_rl_learn_options *o, xf_search_result *res,
                      xf_rl_learned *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    out->loaded = o->load != NULL;
    out->t0 = xf_clock_now();
    return o->wm ? run_wm(env, o, res, out, err) : run_ppo(env, o, res, out, err);
}
