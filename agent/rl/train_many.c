/*
 * train_many.c — one learning agent trained over many models
 * (agent/rl/rl.h, xf_rl_train_many), so that it can optimise a model it
 * never saw without training (transfer, as the GO paper claims for its
 * agent and X-RLflow measures across batch sizes).
 *
 * Why it is built this way:
 *  - The action set has to mean the same on every model. Each model's rule
 *    set is restricted to the rules that can match it, so action numbers
 *    differ between models; rule database ids do not. The warm-up counts the
 *    rules offered on each model by id (xf_actions_tally), and the set is
 *    their union, partial: on a model whose rule set lacks one of its rules,
 *    that action is simply never offered (xf_actions_mask).
 *  - The features transfer: the GNN's node and global features are logs of
 *    costs and sizes, flags and op one-hots (gnn_features.c), nothing that
 *    names a model; the world model's latent standardisation is taken on
 *    the first model's first round and kept.
 *  - Training is the agents' own loop (xf_ppo_agent_train,
 *    xf_wm_agent_train) run in slices, one model per slice: a PPO slice is
 *    an update's rollouts and a greedy episode, a world-model slice one
 *    round (random episodes, model training, dream, evaluation). Adam's
 *    state, the world model's recorded rollouts and the controller carry
 *    over from slice to slice; each pass visits every model once, in an
 *    order drawn from the seed.
 */
#include "rl.h"

#include <stdlib.h>
#include <string.h>

#define SLICE_STEPS 600   /* PPO: 512 rollout rows, an update and a greedy episode */
#define WARMUP_STEPS 200  /* per model */

typedef struct ctx {
    const xf_rl_train_options *o;
    const char *const *names;
    int n, cur;
    int64_t steps_before, passes; /* real steps before the current slice */
    double t0, last;
    const double *initial_ms, *best_ms;
    const char *phase;
} ctx;

static double mean_gain(const ctx *c)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (c->initial_ms[i] > 0) {
            sum += 100.0 * (c->best_ms[i] - c->initial_ms[i]) / c->initial_ms[i];
            k++;
        }
    return k ? sum / k : 0.0;
}

static void report(ctx *c, int64_t slice_steps, int force)
{
    const xf_rl_train_options *o = c->o;
    double now = xf_clock_now();
    if (!o->progress || (!force && now - c->last < 1.0)) return;
    c->last = now;
    xf_rl_train_progress p;
    memset(&p, 0, sizeof p);
    p.phase = c->phase;
    p.model = c->names[c->cur];
    p.model_index = c->cur;
    p.n_models = c->n;
    p.passes = c->passes;
    p.steps = c->steps_before + slice_steps;
    p.seconds = now - c->t0;
    p.eta_seconds = -1;
    if (o->max_seconds > 0) p.eta_seconds = o->max_seconds - p.seconds;
    if (o->max_env_steps > 0 && p.steps > 0) {
        double by_steps = p.seconds * (double)(o->max_env_steps - p.steps) / (double)p.steps;
        if (p.eta_seconds < 0 || by_steps < p.eta_seconds) p.eta_seconds = by_steps;
    }
    if (p.eta_seconds < 0 && o->max_seconds > 0) p.eta_seconds = 0;
    p.mean_gain = mean_gain(c);
    o->progress(o->progress_user, &p);
}

static void on_ppo(void *user, const xf_ppo_progress *p)
{
    report(user, p->steps, 0);
}

static void on_wm(void *user, const xf_wm_progress *p)
{
    report(user, p->real_steps, 0);
}

/* The budget left (seconds, steps; <= 0: none), and whether it is spent. */
static int spent(const ctx *c, double *secs, int64_t *steps)
{
    const xf_rl_train_options *o = c->o;
    *secs = o->max_seconds > 0 ? o->max_seconds - (xf_clock_now() - c->t0) : 0;
    *steps = o->max_env_steps > 0 ? o->max_env_steps - c->steps_before : 0;
    return (o->max_seconds > 0 && *secs <= 0) || (o->max_env_steps > 0 && *steps <= 0);
}

/* Random episodes on e for `steps` steps, counting the rules offered in
 * each state seen into the tally. */
static xf_status warm_up(ctx *c, xf_env *e, int steps, xf_rng *rng, xf_actions_tally *t,
                         xf_error *err)
{
    int n = xf_env_num_xfers(e);
    int64_t *count = xf_calloc((size_t)(n > 0 ? n : 1), sizeof *count);
    if (!count) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the warm-up");
    xf_status st = XF_OK;
    int left = steps;
    for (int moved = 1; !st && left > 0 && moved;) {
        st = xf_env_reset(e, err);
        if (!st) xf_actions_count(e, count);
        moved = 0;
        for (int done = 0, rule, loc; !st && !done && left > 0;) {
            if (!xf_actions_random(e, rng, &rule, &loc)) break;
            xf_env_step_result sr;
            st = xf_env_step(e, rule, loc, &sr, err);
            if (!st) xf_actions_count(e, count);
            done = !st && sr.done;
            left--;
            c->steps_before++;
            moved = 1;
            report(c, 0, 0);
        }
    }
    if (!st) st = xf_actions_tally_add(t, xf_env_ruleset(e), count, err);
    xf_free(count);
    return st;
}

void xf_rl_train_stats_free(xf_rl_train_stats *s)
{
    xf_actions_free(&s->act);
    xf_free(s->initial_ms);
    xf_free(s->best_ms);
    xf_free(s->unavailable);
    memset(s, 0, sizeof *s);
    xf_actions_init(&s->act);
}

/* The agents behind one interface. */
typedef struct agent {
    xf_ppo_agent *ppo;
    xf_wm_agent *wm;
} agent;

static xf_status agent_create(agent *g, ctx *c, xf_error *err)
{
    const xf_rl_train_options *o = c->o;
    memset(g, 0, sizeof *g);
    if (o->wm) {
        xf_wm_agent_options w = xf_wm_agent_options_default();
        w.cm = o->cm;
        w.max_locations = o->max_locations;
        w.seed = o->seed;
        w.tau = o->tau;
        w.transfer = 1;
        w.progress = on_wm;
        w.progress_user = c;
        return xf_wm_agent_create(&w, &g->wm, err);
    }
    xf_ppo_agent_options p = xf_ppo_agent_options_default();
    p.cm = o->cm;
    p.max_locations = o->max_locations;
    p.seed = o->seed;
    p.transfer = 1;
    p.progress = on_ppo;
    p.progress_user = c;
    return xf_ppo_agent_create(&p, &g->ppo, err);
}

static const xf_actions *agent_actions(const agent *g)
{
    return g->wm ? &g->wm->act : xf_ppo_agent_actions(g->ppo);
}

/* One slice on e within the budget left; res gets its figures. */
static xf_status agent_slice(agent *g, const ctx *c, xf_env *e, double secs, int64_t steps,
                             xf_search_result *res, xf_error *err)
{
    const xf_rl_train_options *o = c->o;
    if (g->wm) {
        g->wm->opt.rounds = 1;
        g->wm->opt.max_seconds = secs;
        g->wm->opt.max_env_steps = steps;
        return xf_wm_agent_train(g->wm, e, res, NULL, err);
    }
    int64_t slice = o->slice_steps > 0 ? o->slice_steps : SLICE_STEPS;
    xf_ppo_agent_set_budget(g->ppo, steps > 0 && steps < slice ? steps : slice, secs);
    return xf_ppo_agent_train(g->ppo, e, res, err);
}

static void agent_free(agent *g)
{
    xf_ppo_agent_free(g->ppo);
    xf_wm_agent_free(g->wm);
}

/* A permutation of 0..n-1 drawn from rng. */
static void shuffle(int *order, int n, xf_rng *rng)
{
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(xf_rng_next(rng) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

static xf_status train(agent *g, ctx *c, xf_env *const *envs, xf_rl_train_stats *out,
                       xf_rng *rng, int *order, xf_error *err)
{
    const xf_rl_train_options *o = c->o;
    xf_status st = XF_OK;
    c->phase = "train";
    for (int done = 0; !st && !done;) {
        shuffle(order, c->n, rng);
        c->passes++;
        out->passes++;
        for (int k = 0; !st && k < c->n && !done; k++) {
            double secs;
            int64_t steps;
            if ((done = spent(c, &secs, &steps))) break;
            c->cur = order[k];
            xf_search_result res;
            xf_search_result_init(&res);
            st = agent_slice(g, c, envs[c->cur], o->max_seconds > 0 ? secs : 0, steps, &res,
                             err);
            if (st) {
                xf_error_prefix(err, "training on %s", c->names[c->cur]);
                break;
            }
            c->steps_before += res.expanded;
            out->slices++;
            if (res.best_ms < out->best_ms[c->cur]) out->best_ms[c->cur] = res.best_ms;
            out->unavailable[c->cur] = agent_actions(g)->unbound;
            /* a slice that could not step (nothing offered) must not spin */
            if (res.expanded == 0 && o->max_seconds <= 0) done = 1;
            xf_search_result_free(&res);
            report(c, 0, 0);
        }
    }
    return st;
}

xf_status xf_rl_train_many(xf_env *const *envs, const char *const *names, int n,
                           const xf_rl_train_options *o, xf_rl_train_stats *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    xf_actions_init(&out->act);
    if (n < 1 || !o->save || (o->max_seconds <= 0 && o->max_env_steps <= 0))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "training over models needs at least one model (%d given), a checkpoint "
                       "to save and a budget (seconds or steps)",
                       n);
    ctx c = {o, names, n, 0, 0, 0, xf_clock_now(), 0, NULL, NULL, "warmup"};
    c.last = c.t0;
    out->initial_ms = xf_malloc((size_t)n * sizeof *out->initial_ms);
    out->best_ms = xf_malloc((size_t)n * sizeof *out->best_ms);
    out->unavailable = xf_calloc((size_t)n, sizeof *out->unavailable);
    int *order = xf_malloc((size_t)n * sizeof *order);
    xf_actions_tally t;
    xf_actions_tally_init(&t);
    agent g;
    memset(&g, 0, sizeof g);
    xf_status st = out->initial_ms && out->best_ms && out->unavailable && order
                       ? XF_OK
                       : XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %d models", n);
    for (int i = 0; !st && i < n; i++) {
        st = xf_env_reset(envs[i], err);
        if (!st) out->initial_ms[i] = out->best_ms[i] = xf_env_cost(envs[i]);
    }
    c.initial_ms = out->initial_ms;
    c.best_ms = out->best_ms;
    xf_rng rng;
    xf_rng_seed(&rng, o->seed);
    int warm = o->warmup_steps > 0 ? o->warmup_steps : WARMUP_STEPS;
    if (o->max_env_steps > 0 && (int64_t)warm * n > o->max_env_steps / 10)
        warm = (int)(o->max_env_steps / 10 / n > 0 ? o->max_env_steps / 10 / n : 1);
    for (int i = 0; !st && i < n; i++) {
        c.cur = i;
        st = warm_up(&c, envs[i], warm, &rng, &t, err);
        if (st) xf_error_prefix(err, "warm-up on %s", names[i]);
    }
    if (!st) st = xf_actions_tally_choose(&t, o->max_actions > 0 ? o->max_actions : XF_ACTIONS_CAP,
                                          &out->act, err);
    if (!st) st = agent_create(&g, &c, err);
    if (!st) st = g.wm ? xf_wm_agent_build(g.wm, &out->act, err)
                       : xf_ppo_agent_build(g.ppo, &out->act, err);
    if (!st && out->act.M == 0)
        st = XF_FAIL(err, XF_ERR_INVALID,
                     "no rule of the rules database was offered on any of the %d models in %d "
                     "random steps each: nothing to learn",
                     n, warm);
    if (!st) st = train(&g, &c, envs, out, &rng, order, err);
    if (!st) st = g.wm ? xf_wm_agent_save(g.wm, o->save, err)
                       : xf_ppo_agent_save(g.ppo, o->save, err);
    out->steps = c.steps_before;
    out->seconds = xf_clock_now() - c.t0;
    if (!st) report(&c, 0, 1);
    agent_free(&g);
    xf_actions_tally_free(&t);
    xf_free(order);
    return st;
}
