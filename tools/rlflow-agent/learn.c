/*
 * learn.c — rlflow-agent's learning agents: the model-free PPO agent and the
 * world-model agent (agent/rl/ppo.h, agent/rl/wm.h). Trains within the budget, or
 * loads a checkpoint and runs the trained controller greedily; saves a
 * checkpoint on request; prints a progress line per second and the
 * training figures after, with the agent's action set (the rules a random
 * warm-up found offered on this model, or the checkpoint's).
 */
#include <stdio.h>
#include <string.h>

#include "agent/rl/rl.h"
#include "cli.h"

#define DEFAULT_AGENT_SECONDS 120.0

static void ppo_progress(void *user, const xf_ppo_progress *p)
{
    (void)user;
    fprintf(stderr,
            "\rppo %-5s %6.1f s  episodes %lld  steps %lld  mean reward %+.3f  best %.4f ms "
            "(%+.2f%%)   ",
            p->phase, p->seconds, (long long)p->episodes, (long long)p->steps, p->mean_reward,
            p->best_ms, p->initial_ms > 0 ? 100.0 * (p->best_ms - p->initial_ms) / p->initial_ms : 0);
    fflush(stderr);
}

static void wm_progress(void *user, const xf_wm_progress *p)
{
    (void)user;
    fprintf(stderr,
            "\rwm %-7s %6.1f s  round %d  episodes %lld  real steps %lld  dream steps %lld  "
            "wm loss %.3f  dream reward %+.3f  best %.4f ms (%+.2f%%)   ",
            p->phase, p->seconds, p->round, (long long)p->episodes, (long long)p->real_steps,
            (long long)p->dream_steps, p->wm_loss, p->dream_reward, p->best_ms,
            p->initial_ms > 0 ? 100.0 * (p->best_ms - p->initial_ms) / p->initial_ms : 0);
    fflush(stderr);
}

static xf_status run_ppo(const cli_options *o, xf_env *env, xf_cost_model *cm,
                         xf_search_result *res, cli_learn_outcome *out, xf_error *err)
{
    xf_ppo_agent_options opt = xf_ppo_agent_options_default();
    opt.cm = cm;
    opt.max_locations = o->locations;
    opt.seed = o->seed;
    opt.max_seconds = o->time_limit > 0 ? o->time_limit : DEFAULT_AGENT_SECONDS;
    if (o->budget > 0) opt.max_env_steps = o->budget;
    if (!o->quiet) opt.progress = ppo_progress;
    xf_ppo_agent *a = NULL;
    xf_status st = xf_ppo_agent_create(&opt, &a, err);
    if (!st && o->load) out->load_failed = (st = xf_ppo_agent_load(a, o->load, env, err)) != 0;
    if (!st) st = o->load ? xf_ppo_agent_run(a, env, 1, res, err) : xf_ppo_agent_train(a, env, res, err);
    if (!o->quiet) fprintf(stderr, "\n");
    if (!st && o->save) out->save_failed = xf_ppo_agent_save(a, o->save, &out->save_err) != 0;
    if (!st)
        printf("agent:           ppo, %s, %lld environment steps (%.2f ms each), %d actions of "
               "%d\n",
               o->load ? "loaded, one greedy episode" : "trained", (long long)res->expanded,
               res->expanded > 0 ? 1e3 * res->seconds / (double)res->expanded : 0.0,
               xf_ppo_agent_actions(a)->M, xf_env_num_xfers(env));
    xf_ppo_agent_free(a);
    return st;
}

static xf_status run_wm(const cli_options *o, xf_env *env, xf_cost_model *cm,
                        xf_search_result *res, cli_learn_outcome *out, xf_error *err)
{
    xf_wm_agent_options opt = xf_wm_agent_options_default();
    opt.cm = cm;
    opt.max_locations = o->locations;
    opt.seed = o->seed;
    opt.tau = (float)o->tau;
    opt.max_seconds = o->time_limit > 0 ? o->time_limit : DEFAULT_AGENT_SECONDS;
    if (o->budget > 0) opt.max_env_steps = o->budget;
    if (!o->quiet) opt.progress = wm_progress;
    xf_wm_agent *a = NULL;
    xf_wm_agent_stats stats = {0};
    xf_status st = xf_wm_agent_create(&opt, &a, err);
    if (!st && o->load) out->load_failed = (st = xf_wm_agent_load(a, o->load, env, err)) != 0;
    if (!st) st = o->load ? xf_wm_agent_run(a, env, 1, res, err)
                          : xf_wm_agent_train(a, env, res, &stats, err);
    if (!o->quiet) fprintf(stderr, "\n");
    if (!st && o->save) out->save_failed = xf_wm_agent_save(a, o->save, &out->save_err) != 0;
    if (!st && o->load)
        printf("agent:           wm, loaded, one greedy episode, %d actions of %d\n", a->act.M,
               xf_env_num_xfers(env));
    else if (!st)
        printf("agent:           wm, %d rounds, %lld real steps (%lld episodes), %lld dream steps "
               "(%lld episodes), tau %.2f, %d actions of %d\n"
               "world model:     loss %.3f -> %.3f, dream reward %+.3f, step %.1f us in the "
               "dream vs %.1f us real (+%.1f us encoding)\n",
               stats.rounds, (long long)stats.real_steps, (long long)stats.real_episodes,
               (long long)stats.dream_steps, (long long)stats.dream_episodes, o->tau, a->act.M,
               xf_env_num_xfers(env),
               stats.wm_loss_first, stats.wm_loss_last, stats.dream_reward, stats.wm_step_us,
               stats.real_step_us, stats.encode_us);
    xf_wm_agent_free(a);
    return st;
}

xf_status cli_learn(const cli_options *o, xf_env *env, xf_cost_model *cm, xf_search_result *res,
                    cli_learn_outcome *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    return o->agent == CLI_AGENT_PPO ? run_ppo(o, env, cm, res, out, err)
                                     : run_wm(o, env, cm, res, out, err);
}
