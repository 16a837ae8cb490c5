/*
 * agent_ppo.c — the model-free learning agent (agent/rl/ppo.h): PPO on the
 * real environment with the GNN encoder trained end to end (X-RLflow's
 * setting; RLFlow's world-model agent reuses the policy but not this loop).
 *
 * Training alternates rollouts and updates: episodes from the environment's
 * reset state, the state of each step the GNN's z of the current graph
 * (with per-node costs from the cost model when one is given), actions
 * sampled from the masked rule and location heads; after K episodes (or a
 * full rollout buffer, which ends the episode with a bootstrapped value)
 * the policy and the encoder are updated together, the encoder's features
 * of each minibatch recomputed through a state hook; then one greedy
 * episode shows what the policy has learnt. Every valid real graph counts:
 * the cheapest one seen and the rules that led to it are the result, as
 * for the search baselines (that bookkeeping and the GNN's input with
 * per-node costs are shared with the world-model agent, agent_common.c).
 * Budgets: environment steps and wall time.
 * Everything random comes from one rng seeded from the options, so a run
 * is deterministic.
 *
 * The policy's actions are a compact set (ppo_actions.c): before the first
 * training, `warmup_steps` uniformly random steps (counted in the budget,
 * their graphs counted for the best) find the rules the environment
 * offers on this model; the networks are built for those (at most
 * `max_actions`) plus the no-op, instead of for every rule of the rule
 * set. The warm-up's steps are not PPO data: their actions do not come
 * from the policy.
 *
 * Self-imitation (Oh et al., 2018, in its simplest form): the episode
 * whose prefix reached the best graph so far (the warm-up's included) is
 * kept as (action, location) pairs; each update replays it from the reset
 * state on the real environment (its steps count in the budget) and adds
 * its rows to the rollout with advantages of at least +1 (one standard
 * deviation of the normalised advantages). Why: the look-ahead cases
 * (bench_lookahead) need a chain whose first steps cost more; exploration
 * finds it, but on-policy PPO sees it once, under a value that does not yet
 * expect it, and the policy drifts away from the dearer first step, so
 * the trained policy alone never reproduced the chain (0 of 6 runs). The
 * replay makes the policy carry what its own exploration found.
 */
#include "agent/rl/ppo.h"

#include <stdlib.h>
#include <string.h>

struct xf_ppo_agent {
    xf_ppo_agent_options opt;
    int max_locations;
    xf_actions act;   /* M 0 and no policy until trained or loaded */
    int built;        /* the store holds the GNN and the policy for act */
    xf_nn_params p;
    xf_gnn gnn;
    xf_ppo_net net;
    xf_nn_adam adam;
    xf_rng rng;
    xf_ppo_work work;
    xf_gnn_cache gc;
    xf_gnn_batch obs; /* graph i = buffer row i */
    xf_gnn_batch cur, mb;
    xf_ppo_buffer buf;
    xf_node_costs costs;
    int *n_loc;     /* [M + 1] locations per agent action in the current graph */
    uint8_t *mask;  /* [M + 1] agent actions offered in the current graph */
    float *z;       /* [latent] state of the current graph */
};

xf_ppo_agent_options xf_ppo_agent_options_default(void)
{
    xf_ppo_agent_options o;
    XF_AGENT_OPTIONS_DEFAULT(o);
    o.episodes_per_update = 4;
    o.max_rows = 512;
    return o;
}

void xf_ppo_agent_free(xf_ppo_agent *a)
{
    if (!a) return;
    xf_nn_params_free(&a->p);
    xf_ppo_work_free(&a->work);
    xf_gnn_cache_free(&a->gc);
    xf_gnn_batch_free(&a->obs);
    xf_gnn_batch_free(&a->cur);
    xf_gnn_batch_free(&a->mb);
    xf_ppo_buffer_free(&a->buf);
    xf_node_costs_free(&a->costs);
    xf_free(a->n_loc);
    xf_free(a->mask);
    xf_free(a->z);
    xf_actions_free(&a->act);
    xf_free(a);
}

xf_status xf_ppo_agent_create(const xf_ppo_agent_options *opt, xf_ppo_agent **out,
                              xf_error *err)
{
    *out = NULL;
    xf_ppo_agent_options o = opt ? *opt : xf_ppo_agent_options_default();
    if (o.episodes_per_update < 1 || o.max_rows < 1 || o.hp.epochs < 1 || o.hp.minibatch < 1 ||
        o.max_actions < 1 || o.warmup_steps < 0)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "ppo agent: episodes per update (%d), rollout rows (%d), epochs (%d), "
                       "minibatch (%d) and the action cap (%d) must be >= 1, warm-up steps (%d) "
                       ">= 0",
                       o.episodes_per_update, o.max_rows, o.hp.epochs, o.hp.minibatch,
                       o.max_actions, o.warmup_steps);
    xf_ppo_agent *a = xf_calloc(1, sizeof *a);
    if (!a) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the ppo agent");
    a->opt = o;
    a->max_locations = o.max_locations;
    xf_actions_init(&a->act);
    xf_nn_params_init(&a->p);
    xf_ppo_work_init(&a->work);
    xf_gnn_cache_init(&a->gc);
    xf_gnn_batch_init(&a->obs);
    xf_gnn_batch_init(&a->cur);
    xf_gnn_batch_init(&a->mb);
    xf_ppo_buffer_init(&a->buf, o.gnn.latent, 1);
    xf_rng_seed(&a->rng, o.seed);
    a->adam = xf_nn_adam_default(o.hp.lr);
    xf_status st = XF_OK;
    a->costs.cm = o.cm;
    if (o.cm) st = xf_costmemo_create(o.cm, &a->costs.memo, err);
    if (!st) {
        a->z = xf_calloc((size_t)(o.gnn.latent > 0 ? o.gnn.latent : 1), sizeof *a->z);
        if (!a->z) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the ppo agent");
    }
    if (st) {
        xf_error_prefix(err, "ppo agent");
        xf_ppo_agent_free(a);
        return st;
    }
    *out = a;
    return XF_OK;
}

/* A store with the GNN encoder and a policy over M actions + the no-op,
 * initialised from rng, into *p, *gnn, *net. */
static xf_status make_store(const xf_ppo_agent *a, int M, xf_rng *rng, xf_nn_params *p,
                            xf_gnn *gnn, xf_ppo_net *net, xf_error *err)
{
    const xf_ppo_agent_options *o = &a->opt;
    xf_nn_params_init(p);
    xf_status st = xf_gnn_add(gnn, p, "gnn", &o->gnn, rng, err);
    if (!st) st = xf_ppo_net_add(net, p, o->gnn.latent, M, o->max_locations, &o->hp, rng, err);
    if (st) xf_nn_params_free(p);
    return st;
}

/* Makes the agent act with action set *act (taken over) and the networks
 * in *p, *gnn, *net (taken over): the previous ones, the work buffers and
 * the rollout are dropped, Adam starts afresh. On failure (out of memory)
 * the agent is left without actions. */
static xf_status install(xf_ppo_agent *a, xf_actions *act, xf_nn_params *p, const xf_gnn *gnn,
                         const xf_ppo_net *net, xf_error *err)
{
    xf_nn_params_free(&a->p);
    xf_actions_free(&a->act);
    a->p = *p;
    a->gnn = *gnn;
    a->net = *net;
    a->act = *act;
    xf_actions_init(act);
    xf_ppo_work_free(&a->work);
    xf_ppo_buffer_free(&a->buf);
    xf_ppo_buffer_init(&a->buf, a->opt.gnn.latent, a->act.M + 1);
    xf_gnn_batch_clear(&a->obs);
    a->adam = xf_nn_adam_default(a->opt.hp.lr);
    size_t n = (size_t)a->act.M + 1;
    int *nl = xf_realloc(a->n_loc, n * sizeof *nl);
    if (nl) a->n_loc = nl;
    uint8_t *mk = nl ? xf_realloc(a->mask, n) : NULL;
    if (mk) a->mask = mk;
    a->built = mk != NULL;
    return a->built ? XF_OK
                    : XF_FAIL(err, XF_ERR_NOMEM, "out of memory building the policy for %d actions",
                              a->act.M);
}

xf_status xf_ppo_agent_build(xf_ppo_agent *a, const xf_actions *ids, xf_error *err)
{
    xf_actions act;
    xf_status st = xf_actions_copy_ids(&act, ids, err);
    xf_nn_params p;
    xf_gnn gnn;
    xf_ppo_net net;
    if (!st) st = make_store(a, act.M, &a->rng, &p, &gnn, &net, err);
    if (!st) st = install(a, &act, &p, &gnn, &net, err);
    xf_actions_free(&act);
    return st;
}

void xf_ppo_agent_set_budget(xf_ppo_agent *a, int64_t max_env_steps, double max_seconds)
{
    a->opt.max_env_steps = max_env_steps;
    a->opt.max_seconds = max_seconds;
}

xf_nn_params *xf_ppo_agent_params(xf_ppo_agent *a) { return &a->p; }
const xf_actions *xf_ppo_agent_actions(const xf_ppo_agent *a) { return &a->act; }

/* ---------------------------------------------------------- observations */

/* z of the current graph into a->z; with `keep` its features also go to
 * the rollout's observations (as the next buffer row). Fills a->mask and
 * a->n_loc for the agent's actions. */
static xf_status observe(xf_ppo_agent *a, const xf_env *e, int keep, xf_error *err)
{
    xf_status st;
    if (keep) {
        st = xf_agent_features(&a->costs, e, &a->obs, err);
        int last = a->obs.n_graphs - 1;
        if (!st) st = xf_ppo_obs_gather(&a->cur, &a->obs, &last, 1, err);
    } else {
        xf_gnn_batch_clear(&a->cur);
        st = xf_agent_features(&a->costs, e, &a->cur, err);
    }
    if (st != XF_OK) return st;
    const float *z;
    st = xf_gnn_forward(&a->gnn, &a->p, &a->cur, &a->gc, &z, err);
    if (st != XF_OK) return st;
    memcpy(a->z, z, (size_t)a->opt.gnn.latent * sizeof *a->z);
    xf_actions_mask(&a->act, e, a->mask, a->n_loc);
    return XF_OK;
}

static xf_status hook_forward(void *user, const int *rows, int B, float *s, xf_error *err)
{
    xf_ppo_agent *a = user;
    xf_status st = xf_ppo_obs_gather(&a->mb, &a->obs, rows, B, err);
    if (st != XF_OK) return st;
    const float *z;
    st = xf_gnn_forward(&a->gnn, &a->p, &a->mb, &a->gc, &z, err);
    if (st != XF_OK) return st;
    memcpy(s, z, (size_t)B * (size_t)a->opt.gnn.latent * sizeof *s);
    return XF_OK;
}

static xf_status hook_backward(void *user, const int *rows, int B, const float *ds, xf_error *err)
{
    xf_ppo_agent *a = user;
    (void)rows;
    (void)B;
    (void)err;
    xf_gnn_backward(&a->gnn, &a->p, &a->mb, &a->gc, ds);
    return XF_OK;
}

/* ------------------------------------------------------------- episodes */

/* Environment actions and locations of an episode's steps. */
typedef struct trail {
    int *act, *loc, n, cap;
} trail;

static xf_status trail_push(trail *t, int act, int loc, xf_error *err)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        int *na = xf_realloc(t->act, (size_t)cap * sizeof *na);
        if (na) t->act = na;
        int *nl = na ? xf_realloc(t->loc, (size_t)cap * sizeof *nl) : NULL;
        if (!nl) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording an episode");
        t->loc = nl;
        t->cap = cap;
    }
    t->act[t->n] = act;
    t->loc[t->n++] = loc;
    return XF_OK;
}

static void trail_free(trail *t)
{
    xf_free(t->act);
    xf_free(t->loc);
    memset(t, 0, sizeof *t);
}

typedef struct run {
    xf_ppo_agent *a;
    xf_agent_run run; /* e, res, graphs seen, this episode's path, clock */
    trail ep, best;   /* this episode's steps; the prefix of one that reached the best graph */
    int sil_from;     /* buffer rows from here on are the replayed best episode */
    int64_t steps, episodes;
    double ep_return, ret_sum;
    int ret_n;
    const char *phase;
} run;

static int out_of_budget(const run *r)
{
    const xf_ppo_agent_options *o = &r->a->opt;
    return xf_agent_run_over(&r->run, r->steps, o->max_env_steps, o->max_seconds);
}

static void tick(run *r)
{
    const xf_ppo_agent_options *o = &r->a->opt;
    if (!o->progress || !xf_agent_run_progress_due(&r->run)) return;
    double now = r->run.last_progress;
    xf_ppo_progress p = {r->phase, r->episodes, r->steps,
                         r->ret_n ? r->ret_sum / r->ret_n : 0.0, r->run.res->best_ms,
                         r->run.res->initial_ms, now - r->run.t0};
    o->progress(o->progress_user, &p);
}

static xf_status start_episode(run *r, xf_error *err)
{
    r->run.path_n = 0;
    r->ep.n = 0;
    r->ep_return = 0.0;
    return xf_env_reset(r->run.e, err);
}

/* Bookkeeping of a real step that took environment action `rule` at
 * `loc`: steps, return, the episode's path, the graphs seen and the best
 * graph (and the steps that reached it, for self-imitation). */
static xf_status after_step(run *r, int rule, int loc, const xf_env_step_result *sr,
                            xf_error *err)
{
    r->steps++;
    r->ep_return += sr->reward;
    double best = r->run.res->best_ms;
    xf_status st = trail_push(&r->ep, rule, loc, err);
    if (!st) st = xf_agent_run_step(&r->run, rule, sr, err);
    if (!st && r->run.res->best_ms < best) {
        r->best.n = 0;
        for (int k = 0; !st && k < r->ep.n; k++)
            st = trail_push(&r->best, r->ep.act[k], r->ep.loc[k], err);
    }
    return st;
}

/* One step with the current policy; training steps go to the buffer. */
static xf_status step(run *r, int greedy, int train, int *done, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_status st = observe(a, r->run.e, train, err);
    if (st != XF_OK) return st;
    int rule, loc;
    float logp, value;
    st = xf_ppo_act(&a->net, &a->p, &a->work, a->z, a->mask, a->n_loc, greedy, &a->rng, &rule,
                    &loc, &logp, &value, err);
    if (st != XF_OK) return st;
    int env_rule = rule == a->act.M ? xf_env_num_xfers(r->run.e) : a->act.env[rule];
    xf_env_step_result sr;
    st = xf_agent_env_step(&r->run, env_rule, loc, &sr, err);
    if (st != XF_OK) return st;
    *done = sr.done;
    if (train) {
        float bonus = a->opt.novelty > 0 && sr.valid && env_rule != xf_env_num_xfers(r->run.e) &&
                              !xf_htab_get(&r->run.seen, xf_htab_key(sr.hash))
                          ? a->opt.novelty
                          : 0.0f;
        st = xf_ppo_buffer_add(&a->buf, a->z, a->mask, a->n_loc[rule], rule, loc, logp, value,
                               (float)sr.reward + bonus, sr.done, err);
        if (st != XF_OK) return st;
    }
    return after_step(r, env_rule, loc, &sr, err);
}

/* A whole episode from the reset state (the budget may cut it short). */
static xf_status episode(run *r, int greedy, xf_error *err)
{
    xf_status st = start_episode(r, err);
    int done = 0;
    while (!st && !done && !out_of_budget(r)) {
        st = step(r, greedy, 0, &done, err);
        tick(r);
    }
    return st;
}

/* Binds a built agent's actions to e's rule set; the figures of the run
 * start at e's reset state. */
static xf_status run_begin(run *r, xf_ppo_agent *a, xf_env *e, xf_search_result *res,
                           xf_error *err)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->phase = "train";
    xf_status st = xf_agent_run_begin(&r->run, e, res, a->built ? &a->act : NULL, err);
    return !st && a->opt.lookahead ? xf_agent_run_lookahead(&r->run, err) : st;
}

static xf_status run_end(run *r, xf_status st, xf_error *err)
{
    trail_free(&r->ep);
    trail_free(&r->best);
    r->run.res->expanded = r->steps;
    st = xf_agent_run_end(&r->run, st, err);
    if (st) {
        xf_error_prefix(err, "ppo agent");
        xf_search_result_free(r->run.res);
    }
    return st;
}

/* The warm-up: uniformly random episodes for opt.warmup_steps steps,
 * counting the rules offered in every state seen; then the action set and
 * the networks for it. */
static xf_status warm_up(run *r, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_env *e = r->run.e;
    int n = xf_env_num_xfers(e);
    int64_t *count = xf_calloc((size_t)(n > 0 ? n : 1), sizeof *count);
    if (!count) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the warm-up");
    r->phase = "warmup";
    xf_status st = XF_OK;
    int left = xf_actions_warmup(a->opt.warmup_steps, a->opt.max_env_steps);
    for (int moved = 1; !st && left > 0 && moved && !out_of_budget(r) &&
                        !xf_agent_run_warmup_over(&r->run, a->opt.max_seconds);) {
        st = start_episode(r, err);
        if (!st) xf_actions_count(e, count);
        moved = 0;
        for (int done = 0, rule, loc; !st && !done && left > 0 && !out_of_budget(r) &&
                                      !xf_agent_run_warmup_over(&r->run, a->opt.max_seconds);) {
            if (!xf_actions_random(e, &a->rng, &rule, &loc)) break;
            xf_env_step_result sr;
            st = xf_agent_env_step(&r->run, rule, loc, &sr, err);
            if (!st) st = after_step(r, rule, loc, &sr, err);
            if (!st) xf_actions_count(e, count);
            done = !st && sr.done;
            left--;
            moved = 1;
            tick(r);
        }
        if (!st && moved) r->episodes++;
    }
    xf_actions act;
    xf_actions_init(&act);
    xf_nn_params p;
    xf_gnn gnn;
    xf_ppo_net net;
    if (!st) st = xf_actions_choose(&act, xf_env_ruleset(e), count, a->opt.max_actions, err);
    xf_free(count);
    if (!st) st = make_store(a, act.M, &a->rng, &p, &gnn, &net, err);
    if (!st) st = install(a, &act, &p, &gnn, &net, err);
    xf_actions_free(&act);
    return st;
}

/* Value of the current state, to bootstrap a rollout cut mid-episode. */
static xf_status bootstrap(run *r, float *value, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_status st = observe(a, r->run.e, 0, err);
    if (st != XF_OK) return st;
    int rule, loc;
    float logp;
    return xf_ppo_act(&a->net, &a->p, &a->work, a->z, a->mask, a->n_loc, 1, &a->rng, &rule, &loc,
                      &logp, value, err);
}

/* Self-imitation: the best episode's steps replayed from the reset state
 * into the rollout (after whole episodes only: a cut one's bootstrap is
 * the buffer's last row). Stops early where the agent cannot take a
 * recorded step (a rule outside its action set); the last row added ends
 * the replayed episode. */
static xf_status imitate(run *r, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_env *e = r->run.e;
    r->sil_from = a->buf.n;
    if (r->best.n == 0) return XF_OK;
    trail best = r->best; /* start_episode and after_step leave r->best alone */
    xf_status st = start_episode(r, err);
    int n_env = xf_env_num_xfers(e), done = 0;
    for (int k = 0; !st && !done && k < best.n; k++) {
        int env_rule = best.act[k], loc = best.loc[k];
        int j = env_rule >= 0 && env_rule <= n_env ? a->act.agent[env_rule] : -1;
        if (j < 0) break;
        xf_actions_mask(&a->act, e, a->mask, a->n_loc);
        /* the network scores at most L locations (xf_ppo_eval rejects the rest) */
        int n_loc = a->n_loc[j] < a->net.L ? a->n_loc[j] : a->net.L;
        if (!a->mask[j] || (n_loc >= 2 && loc >= n_loc)) break;
        st = observe(a, e, 1, err);
        float logp, value;
        if (!st)
            st = xf_ppo_eval(&a->net, &a->p, &a->work, a->z, a->mask, a->n_loc, j, loc, &logp,
                             &value, err);
        xf_env_step_result sr;
        if (!st) st = xf_agent_env_step(&r->run, env_rule, loc, &sr, err);
        if (st) break;
        done = sr.done || k == best.n - 1;
        st = xf_ppo_buffer_add(&a->buf, a->z, a->mask, a->n_loc[j], j, loc, logp, value,
                               (float)sr.reward, done, err);
        if (!st) st = after_step(r, env_rule, loc, &sr, err);
        if (r->best.act != best.act || r->best.n != best.n) break; /* a new best: next time */
    }
    if (!st && a->buf.n > r->sil_from) a->buf.done[a->buf.n - 1] = 1;
    return st;
}

static xf_status update(run *r, float last_value, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_ppo_buffer_finish(&a->buf, last_value, &a->opt.hp);
    xf_ppo_buffer_imitate_from(&a->buf, r->sil_from);
    xf_ppo_state_hook hook = {hook_forward, hook_backward, a};
    xf_status st = xf_ppo_update(&a->net, &a->p, &a->adam, &a->work, &a->buf, &a->opt.hp, &hook,
                                 &a->rng, NULL, err);
    xf_ppo_buffer_clear(&a->buf);
    xf_gnn_batch_clear(&a->obs);
    r->ret_sum = 0.0;
    r->ret_n = 0;
    return st;
}

xf_status xf_ppo_agent_train(xf_ppo_agent *a, xf_env *e, xf_search_result *res, xf_error *err)
{
    run r;
    xf_status st = run_begin(&r, a, e, res, err);
    if (!st && !a->built) st = warm_up(&r, err);
    xf_ppo_buffer_clear(&a->buf);
    xf_gnn_batch_clear(&a->obs);
    /* With no action found there is nothing to learn: the no-op only. */
    while (!st && a->act.M > 0 && !out_of_budget(&r)) {
        int eps = 0, done = 0;
        r.phase = "train";
        while (!st && eps < a->opt.episodes_per_update && a->buf.n < a->opt.max_rows &&
               !out_of_budget(&r)) {
            st = start_episode(&r, err);
            done = 0;
            while (!st && !done && a->buf.n < a->opt.max_rows && !out_of_budget(&r)) {
                st = step(&r, 0, 1, &done, err);
                tick(&r);
            }
            if (!st && done) {
                eps++;
                r.episodes++;
                r.ret_sum += r.ep_return;
                r.ret_n++;
            }
        }
        if (st || out_of_budget(&r)) break;
        float last_value = 0.0f;
        r.sil_from = a->buf.n;
        if (!done) st = bootstrap(&r, &last_value, err);
        else if (a->opt.self_imitation) st = imitate(&r, err);
        if (!st) st = update(&r, last_value, err);
        r.phase = "eval";
        if (!st) st = episode(&r, 1, err);
    }
    if (!st && a->opt.polish) st = xf_agent_run_polish(&r.run, a->opt.max_seconds, err);
    return run_end(&r, st, err);
}

xf_status xf_ppo_agent_run(xf_ppo_agent *a, xf_env *e, int greedy, xf_search_result *res,
                           xf_error *err)
{
    if (!a->built)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "ppo agent: the agent has no actions yet: train or load it first");
    run r;
    xf_status st = run_begin(&r, a, e, res, err);
    r.phase = "eval";
    if (!st) st = episode(&r, greedy, err);
    return run_end(&r, st, err);
}

/* ----------------------------------------------------------- guided run */

/* One step of the guided search (xf_ppo_agent_guide): the policy's `width`
 * most likely rules, each at every location, and every rule the model
 * offers that the agent has no action for (its training models never
 * offered it: the policy cannot rank it, so it is always priced), priced
 * as the step would leave the graph (xf_agent_run_price_rule); the cheapest
 * taken when it lowers the cost, else the policy's greedy action. */
static xf_status guided_step(run *r, int width, int *done, xf_error *err)
{
    xf_ppo_agent *a = r->a;
    xf_env *e = r->run.e;
    xf_status st = observe(a, e, 0, err);
    const float *lp = NULL;
    if (!st) st = xf_ppo_rank(&a->net, &a->p, &a->work, a->z, a->mask, &lp, err);
    if (st != XF_OK) return st;
    int M = a->act.M, best_rule = -1, best_loc = 0;
    double cur = xf_env_cost(e), best = cur - XF_SEARCH_EPS * xf_env_initial_cost(e);
    int chosen[XF_PPO_GUIDE_MAX];
    int n_chosen = 0;
    if (width > XF_PPO_GUIDE_MAX) width = XF_PPO_GUIDE_MAX;
    for (int k = 0; k < width && !st; k++) { /* the k-th most likely rule not chosen yet */
        int top = -1;
        for (int i = 0; i < M; i++) {
            if (!a->mask[i] || a->act.env[i] < 0) continue;
            int taken = 0;
            for (int j = 0; j < n_chosen && !taken; j++) taken = chosen[j] == i;
            if (!taken && (top < 0 || lp[i] > lp[top])) top = i;
        }
        if (top < 0) break;
        chosen[n_chosen++] = top;
        st = xf_agent_run_price_rule(&r->run, a->act.env[top], &best, &best_rule, &best_loc, err);
    }
    const uint8_t *offered = xf_env_xfer_mask(e);
    for (int x = 0; x < xf_env_num_xfers(e) && !st; x++)
        if (offered[x] && a->act.agent[x] < 0)
            st = xf_agent_run_price_rule(&r->run, x, &best, &best_rule, &best_loc, err);
    if (st != XF_OK) return st;
    if (best_rule < 0) { /* nothing priced lowers the cost: the policy's own step */
        int rule, loc;
        float logp, value;
        st = xf_ppo_act(&a->net, &a->p, &a->work, a->z, a->mask, a->n_loc, 1, &a->rng, &rule,
                        &loc, &logp, &value, err);
        if (st != XF_OK) return st;
        best_rule = rule == M ? xf_env_num_xfers(e) : a->act.env[rule];
        best_loc = loc;
    }
    xf_env_step_result sr;
    st = xf_agent_env_step(&r->run, best_rule, best_loc, &sr, err);
    if (st != XF_OK) return st;
    *done = sr.done;
    return after_step(r, best_rule, best_loc, &sr, err);
}

xf_status xf_ppo_agent_guide(xf_ppo_agent *a, xf_env *e, int width, xf_search_result *res,
                             xf_error *err)
{
    if (!a->built)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "ppo agent: the agent has no actions yet: train or load it first");
    if (width < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "ppo agent: the guided search's width %d must be >= 1",
                       width);
    run r;
    xf_status st = run_begin(&r, a, e, res, err);
    r.phase = "guided";
    if (!st) st = start_episode(&r, err);
    double best = xf_env_cost(e);
    for (int done = 0, idle = 0; !st && !done && idle < XF_PPO_GUIDE_PATIENCE && !out_of_budget(&r);) {
        st = guided_step(&r, width, &done, err);
        double now = xf_env_cost(e);
        idle = now < best - XF_SEARCH_EPS * xf_env_initial_cost(e) ? 0 : idle + 1;
        if (now < best) best = now;
        tick(&r);
    }
    return run_end(&r, st, err);
}

/* ------------------------------------------------------------ checkpoints */

#define N_SIZES 8

static void sizes_of(const xf_ppo_agent *a, int *s)
{
    s[0] = a->max_locations;
    s[1] = a->opt.gnn.hidden;
    s[2] = a->opt.gnn.latent;
    s[3] = a->opt.gnn.rounds;
    s[4] = a->opt.gnn.mlp_layers;
    s[5] = a->opt.hp.hidden;
    s[6] = a->opt.hp.trunk_layers;
    s[7] = a->opt.hp.embed;
}

xf_status xf_ppo_agent_save(const xf_ppo_agent *a, const char *path, xf_error *err)
{
    if (!a->built)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "ppo agent: nothing to save to '%s': the agent has no actions yet (train "
                       "or load it first)",
                       path);
    int s[N_SIZES];
    sizes_of(a, s);
    return xf_ppo_ckpt_save(path, s, N_SIZES, &a->act, a->adam.step, &a->p, err);
}

xf_status xf_ppo_agent_load(xf_ppo_agent *a, const char *path, const xf_env *e, xf_error *err)
{
    static const char *const names[N_SIZES] = {
        "max locations", "GNN hidden width", "GNN latent",       "GNN rounds",
        "GNN MLP layers", "PPO hidden",      "PPO trunk layers", "PPO rule embedding"};
    int s[N_SIZES];
    sizes_of(a, s);
    xf_actions act;
    xf_actions_init(&act);
    int64_t step = 0;
    FILE *f = NULL;
    xf_status st = xf_ppo_ckpt_open(path, names, s, N_SIZES, &act, &step, &f, err);
    act.partial = a->opt.transfer;
    if (!st) {
        st = xf_actions_bind(&act, xf_env_ruleset(e), err);
        if (st) xf_error_prefix(err, "checkpoint '%s'", path);
    }
    /* The networks' initial values are overwritten: a generator of its own
     * leaves the agent's random stream as it was. */
    xf_rng rng;
    xf_rng_seed(&rng, a->opt.seed);
    xf_nn_params p;
    xf_gnn gnn;
    xf_ppo_net net;
    int made = 0;
    if (!st) {
        st = make_store(a, act.M, &rng, &p, &gnn, &net, err);
        made = !st;
    }
    if (!st) st = xf_nn_params_load(&p, f, path, err);
    if (f) fclose(f);
    if (!st) {
        made = 0;
        st = install(a, &act, &p, &gnn, &net, err);
        if (!st) a->adam.step = step;
    }
    if (made) xf_nn_params_free(&p);
    xf_actions_free(&act);
    return st;
}
