/*
 * agent_wm.c — the world-model agent (RLFlow's method): learn an MDN-RNN
 * model of the optimisation environment from real rollouts, train a PPO
 * controller entirely inside the model's dream, and use the controller on
 * the real environment, keeping the best real graph seen.
 *
 * One round:
 *  1. collect: `random_episodes` episodes of uniformly random offered
 *     actions on the real environment (never the no-op), each graph encoded
 *     by the GNN into z, recorded as (z, action, reward, done, locations
 *     offered next);
 *  2. model: `wm_passes` passes of truncated BPTT over every episode
 *     recorded so far (wm_train.c);
 *  3. dream: `dream_updates` PPO updates of the controller, each on
 *     `dream_episodes` episodes of the dream started from the real initial
 *     graph's z and masks (state [z, h], temperature τ); with
 *     self-imitation, each update also learns from the recorded real
 *     episode that reached the best graph so far (below);
 *  4. eval: `eval_episodes` episodes of the controller on the real
 *     environment (the first greedy, the others sampled), its state [z, h]
 *     with h the world model's LSTM run along the real trajectory; these
 *     episodes are recorded too, so the next model also learns the states
 *     the controller reaches (World Models' iterative training).
 * Every real step counts for the best graph (with the rules on its path
 * from the start; that bookkeeping and the GNN's input with per-node costs
 * are shared with the model-free agent, agent_common.c). Rounds go on until `rounds`, the real-step budget or the
 * wall-clock budget ends.
 *
 * The GNN encoder is initialised randomly from the seed and then held fixed.
 * The world model's mixture head is trained to predict z_{t+1}; if the
 * encoder were trained through that likelihood it could shrink every z
 * towards a constant and make the prediction trivially good (representation
 * collapse), and every encoder update would move the targets of all the
 * episodes recorded before it. A fixed random graph-nets encoder is a
 * deterministic, structure-aware embedding of the graph (distinct graphs
 * get distinct z almost surely), which is what the model needs. Its
 * outputs are standardised per dimension with the mean and deviation of the
 * first round's latents (frozen afterwards and saved in checkpoints, so a
 * loaded agent sees the same inputs) and clipped to ±XF_WM_Z_CLIP, so the
 * mixture models unit-scale targets. Rewards (percent of the initial cost,
 * easily ±25 for one good rewrite) are likewise divided by the root mean
 * square of the first round's (at least 1), so the reward head's squared error does not
 * drown the other losses; the dream's rewards are in these units (PPO
 * standardises its advantages anyway) and progress reports them in
 * percent again.
 *
 * The agent's actions are a compact set (ppo_actions.c). Before the first
 * round, a warm-up of `warmup_steps` uniformly random real steps, in
 * random episodes recorded over every rule of the rule set, counts the
 * rules offered in each state seen; the most offered (at most
 * `max_actions`) are the actions of the world model (xfer embedding, mask
 * and location heads) and the controller, and the warm-up's episodes,
 * mapped to them, are the first recorded data. A rule of the compact set
 * costs the dream two head outputs per step; with every rule of a taso
 * rule set (~4,300) a dream step was ~550 µs, with the few dozen a model
 * offers it is a fraction of that.
 *
 * Self-imitation (as the model-free agent's, agent_ppo.c): on the
 * look-ahead cases (bench_lookahead) the world model's runs found the
 * optimum in every seed, but its trained controller never carried the
 * chain: in the dream the chain's first step is dearer and the no-op is
 * worth 0, so the controller learnt the no-op (0 of 6 greedy episodes).
 * The real episode whose prefix reached the best graph so far is in the
 * recorded data; each dream update appends that prefix to the rollout as
 * its own episode, the states [z, h] with h the world model's LSTM run
 * along the recorded latents (as the controller sees a real episode), the
 * recorded rewards, and advantages of at least +1. Unlike the model-free
 * agent's replay it takes no real step: the sample efficiency the world
 * model is for is kept.
 *
 * Deterministic for a given seed: every random choice draws from the
 * agent's generator (or generators seeded from it).
 */
#include "agent/rl/wm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XF_WM_Z_CLIP 10.0f
#define XF_WM_STD_FLOOR 1e-3

xf_wm_agent_options xf_wm_agent_options_default(void)
{
    xf_wm_agent_options o;
    XF_AGENT_OPTIONS_DEFAULT(o);
    o.wm_hidden = 256;
    o.n_mix = 8;
    o.wm_embed = 16;
    o.tau = 1.0f;
    o.random_episodes = 8;
    o.episode_steps = 50;
    o.wm_batch = 16;
    o.wm_chunk = 32;
    o.wm_passes = 2;
    o.wm_lr = 1e-3f;
    o.wm_clip = 1.0f;
    o.dream_updates = 10;
    o.dream_episodes = 8;
    o.eval_episodes = 2;
    o.rounds = 0;
    return o;
}

void xf_wm_agent_free(xf_wm_agent *a)
{
    if (!a) return;
    xf_node_costs_free(&a->costs);
    xf_nn_params_free(&a->gnn_p);
    xf_nn_params_free(&a->wm_p);
    xf_nn_params_free(&a->ctl_p);
    xf_free(a->z_mean);
    xf_free(a->z_std);
    xf_gnn_batch_free(&a->batch);
    xf_gnn_cache_free(&a->gcache);
    xf_wm_data_free(&a->data);
    xf_wm_trainer_free(&a->tr);
    xf_ppo_work_free(&a->work);
    xf_ppo_buffer_free(&a->buf);
    xf_nn_lstm_cache_free(&a->lcache);
    xf_free(a->z);
    xf_free(a->state);
    xf_free(a->c);
    xf_free(a->h_new);
    xf_free(a->c_new);
    xf_free(a->x);
    xf_free(a->locs);
    xf_free(a->n_loc);
    xf_free(a->mask);
    xf_actions_free(&a->act);
    xf_free(a);
}

static xf_status check_options(const xf_wm_agent_options *o, xf_error *err)
{
    struct {
        const char *name;
        double v;
    } pos[] = {{"gnn.latent", o->gnn.latent},   {"max_locations", o->max_locations},
               {"wm_hidden", o->wm_hidden},
               {"n_mix", o->n_mix},             {"wm_embed", o->wm_embed},
               {"random_episodes", o->random_episodes}, {"episode_steps", o->episode_steps},
               {"wm_batch", o->wm_batch},       {"wm_chunk", o->wm_chunk},
               {"wm_passes", o->wm_passes},     {"wm_lr", o->wm_lr},
               {"dream_updates", o->dream_updates}, {"dream_episodes", o->dream_episodes},
               {"hp.minibatch", o->hp.minibatch}, {"max_actions", o->max_actions}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (!(pos[i].v > 0))
            return XF_FAIL(err, XF_ERR_INVALID, "world-model agent: %s (%g) must be > 0",
                           pos[i].name, pos[i].v);
    if (o->eval_episodes < 0 || o->warmup_steps < 0)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "world-model agent: eval_episodes (%d) and warmup_steps (%d) must be >= 0",
                       o->eval_episodes, o->warmup_steps);
    return XF_OK;
}

xf_status xf_wm_agent_create(const xf_wm_agent_options *opt, xf_wm_agent **out, xf_error *err)
{
    *out = NULL;
    xf_wm_agent_options o = opt ? *opt : xf_wm_agent_options_default();
    xf_status st = check_options(&o, err);
    if (st) return st;
    xf_wm_agent *a = xf_calloc(1, sizeof *a);
    if (!a) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the world-model agent");
    a->opt = o;
    a->max_locations = o.max_locations;
    xf_actions_init(&a->act);
    xf_nn_params_init(&a->gnn_p);
    xf_nn_params_init(&a->wm_p);
    xf_nn_params_init(&a->ctl_p);
    xf_gnn_batch_init(&a->batch);
    xf_gnn_cache_init(&a->gcache);
    xf_ppo_work_init(&a->work);
    xf_nn_lstm_cache_init(&a->lcache);
    int D = o.gnn.latent, H = o.wm_hidden;
    xf_wm_data_init(&a->data, D, 0);
    xf_ppo_buffer_init(&a->buf, D + H, 1);
    xf_rng_seed(&a->rng, o.seed);
    st = xf_gnn_add(&a->gnn, &a->gnn_p, "gnn", &o.gnn, &a->rng, err);
    a->costs.cm = o.cm;
    if (!st && o.cm) st = xf_costmemo_create(o.cm, &a->costs.memo, err);
    if (!st) st = xf_nn_lstm_cache_reserve(&a->lcache, 1, H, err);
    if (st) {
        xf_wm_agent_free(a);
        return st;
    }
    a->wm_adam = xf_nn_adam_default(o.wm_lr);
    a->ctl_adam = xf_nn_adam_default(o.hp.lr);
    size_t d = (size_t)D, h = (size_t)H;
    a->z_mean = xf_calloc(d, sizeof *a->z_mean);
    a->z_std = xf_malloc(d * sizeof *a->z_std);
    a->z = xf_calloc(d, sizeof *a->z);
    a->state = xf_calloc(d + h, sizeof *a->state);
    a->c = xf_calloc(h, sizeof *a->c);
    a->h_new = xf_calloc(h, sizeof *a->h_new);
    a->c_new = xf_calloc(h, sizeof *a->c_new);
    a->x = xf_calloc(d + (size_t)o.wm_embed + 1, sizeof *a->x);
    if (!a->z_mean || !a->z_std || !a->z || !a->state || !a->c || !a->h_new || !a->c_new ||
        !a->x) {
        xf_wm_agent_free(a);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the world-model agent");
    }
    xf_nn_init_const(a->z_std, d, 1.0f);
    a->reward_scale = 1.0f;
    *out = a;
    return XF_OK;
}

xf_status xf_wm_agent_nets(const xf_wm_agent *a, int M, xf_rng *rng, xf_nn_params *wm_p,
                           xf_wm *wm, xf_nn_params *ctl_p, xf_ppo_net *ctl, xf_error *err)
{
    const xf_wm_agent_options *o = &a->opt;
    int D = o->gnn.latent, H = o->wm_hidden;
    xf_wm_config wc = xf_wm_config_default(D, M);
    wc.max_locations = a->max_locations;
    wc.hidden = H;
    wc.n_mix = o->n_mix;
    wc.embed = o->wm_embed;
    xf_nn_params_init(wm_p);
    xf_nn_params_init(ctl_p);
    xf_status st = xf_wm_add(wm, wm_p, &wc, rng, err);
    if (!st) st = xf_ppo_net_add(ctl, ctl_p, D + H, M, a->max_locations, &o->hp, rng, err);
    if (st) {
        xf_nn_params_free(wm_p);
        xf_nn_params_free(ctl_p);
    }
    return st;
}

xf_status xf_wm_agent_install(xf_wm_agent *a, xf_actions *act, xf_nn_params *wm_p,
                              const xf_wm *wm, xf_nn_params *ctl_p, const xf_ppo_net *ctl,
                              xf_error *err)
{
    const xf_wm_agent_options *o = &a->opt;
    xf_nn_params_free(&a->wm_p);
    xf_nn_params_free(&a->ctl_p);
    xf_actions_free(&a->act);
    a->wm_p = *wm_p;
    a->wm = *wm;
    a->ctl_p = *ctl_p;
    a->ctl = *ctl;
    a->act = *act;
    xf_actions_init(act);
    int D = o->gnn.latent, H = o->wm_hidden, M = a->act.M;
    xf_wm_data_free(&a->data);
    xf_wm_data_init(&a->data, D, M);
    xf_wm_trainer_free(&a->tr);
    xf_ppo_work_free(&a->work);
    xf_ppo_buffer_free(&a->buf);
    xf_ppo_buffer_init(&a->buf, D + H, M + 1);
    a->wm_adam = xf_nn_adam_default(o->wm_lr);
    a->ctl_adam = xf_nn_adam_default(o->hp.lr);
    a->built = 0;
    xf_status st = xf_wm_trainer_init(&a->tr, &a->wm, o->wm_batch, o->wm_chunk, err);
    if (!st) st = xf_ppo_work_reserve(&a->work, &a->ctl, o->hp.minibatch, err);
    if (st) return st;
    size_t m = (size_t)M;
    uint16_t *locs = xf_realloc(a->locs, (m > 0 ? m : 1) * sizeof *locs);
    if (locs) a->locs = locs;
    int *n_loc = locs ? xf_realloc(a->n_loc, (m + 1) * sizeof *n_loc) : NULL;
    if (n_loc) a->n_loc = n_loc;
    uint8_t *mask = n_loc ? xf_realloc(a->mask, m + 1) : NULL;
    if (mask) a->mask = mask;
    if (!mask)
        return XF_FAIL(err, XF_ERR_NOMEM,
                       "out of memory building the world-model agent for %d actions", M);
    a->built = 1;
    return XF_OK;
}

xf_status xf_wm_agent_build(xf_wm_agent *a, const xf_actions *ids, xf_error *err)
{
    xf_actions act;
    xf_status st = xf_actions_copy_ids(&act, ids, err);
    xf_nn_params wm_p, ctl_p;
    xf_wm wm;
    xf_ppo_net ctl;
    int made = 0;
    if (!st) {
        st = xf_wm_agent_nets(a, act.M, &a->rng, &wm_p, &wm, &ctl_p, &ctl, err);
        made = !st;
    }
    if (!st) {
        made = 0;
        st = xf_wm_agent_install(a, &act, &wm_p, &wm, &ctl_p, &ctl, err);
    }
    if (made) {
        xf_nn_params_free(&wm_p);
        xf_nn_params_free(&ctl_p);
    }
    xf_actions_free(&act);
    return st;
}

const xf_wm *xf_wm_agent_model(const xf_wm_agent *a) { return &a->wm; }
const xf_nn_params *xf_wm_agent_model_params(const xf_wm_agent *a) { return &a->wm_p; }

/* ------------------------------------------------------------ a run */

typedef struct run_ctx {
    xf_wm_agent *a;
    xf_agent_run run; /* e, res, graphs seen, this episode's path, clock */
    xf_wm_agent_stats st;
    double real_s, encode_s;
    int64_t encodes;
    xf_dream *dream;
    float *z0;        /* standardised latent of the initial graph */
    uint16_t *locs0;  /* its locations per rule */
    xf_wm_progress prog;
    int trained_n;    /* episodes of a->data the model has trained on */
    double ctl_ret;   /* this round's controller episodes on the real environment: */
    int ctl_n;        /* summed return (percent) and count */
    /* self-imitation: the recorded episode (a->data's; during the warm-up
     * the unmapped record's) whose first best_T steps reached the best
     * graph so far; -1: none */
    int best_ep, best_T;
} run_ctx;

static int out_of_budget(const run_ctx *c)
{
    const xf_wm_agent_options *o = &c->a->opt;
    return xf_agent_run_over(&c->run, c->st.real_steps, o->max_env_steps, o->max_seconds);
}

static void tick(run_ctx *c, const char *phase, int force)
{
    const xf_wm_agent_options *o = &c->a->opt;
    if (!o->progress) return;
    if (!xf_agent_run_progress_due(&c->run) && !force) return;
    double now = xf_clock_now();
    c->run.last_progress = now;
    c->prog.phase = phase;
    c->prog.round = c->st.rounds;
    c->prog.episodes = c->st.real_episodes;
    c->prog.real_steps = c->st.real_steps;
    c->prog.dream_steps = c->st.dream_steps;
    c->prog.wm_loss = c->st.wm_loss_last;
    c->prog.dream_reward = c->st.dream_reward;
    c->prog.best_ms = c->run.res->best_ms;
    c->prog.initial_ms = c->run.res->initial_ms;
    c->prog.seconds = now - c->run.t0;
    o->progress(o->progress_user, &c->prog);
}

/* z of the environment's current graph, standardised once the statistics
 * are known, into a->z. */
static xf_status encode(run_ctx *c, xf_error *err)
{
    xf_wm_agent *a = c->a;
    double t0 = xf_clock_now();
    xf_gnn_batch_clear(&a->batch);
    xf_status st = xf_agent_features(&a->costs, c->run.e, &a->batch, err);
    const float *z = NULL;
    if (!st) st = xf_gnn_forward(&a->gnn, &a->gnn_p, &a->batch, &a->gcache, &z, err);
    if (st) return st;
    for (int d = 0; d < a->opt.gnn.latent; d++) {
        float v = a->normalised ? (z[d] - a->z_mean[d]) / a->z_std[d] : z[d];
        a->z[d] = a->normalised ? fmaxf(-XF_WM_Z_CLIP, fminf(XF_WM_Z_CLIP, v)) : v;
    }
    c->encode_s += xf_clock_now() - t0;
    c->encodes++;
    return XF_OK;
}

/* The environment's masks for the agent's actions into a->locs (capped),
 * a->n_loc and a->mask. */
static void read_masks(xf_wm_agent *a, const xf_env *e)
{
    xf_actions_mask(&a->act, e, a->mask, a->n_loc);
    for (int j = 0; j < a->act.M; j++) {
        if (a->n_loc[j] > a->max_locations) a->n_loc[j] = a->max_locations;
        a->locs[j] = (uint16_t)a->n_loc[j];
    }
}

/* Uniformly random offered (agent action, location); 0 when nothing is
 * offered. */
static int random_action(xf_wm_agent *a, int *rule, int *loc)
{
    int64_t total = 0;
    for (int j = 0; j < a->act.M; j++) total += a->n_loc[j];
    if (total == 0) return 0;
    int64_t k = (int64_t)(xf_rng_next(&a->rng) % (uint64_t)total);
    int j = 0;
    while (k >= a->n_loc[j]) k -= a->n_loc[j++];
    *rule = j;
    *loc = (int)k;
    return 1;
}

/* Environment action (rule, loc) on the real environment, timed, its
 * graph encoded into a->z and counted for the best. */
static xf_status real_step(run_ctx *c, int rule, int loc, xf_env_step_result *sr, xf_error *err)
{
    double t0 = xf_clock_now();
    xf_status st = xf_agent_env_step(&c->run, rule, loc, sr, err);
    c->real_s += xf_clock_now() - t0;
    if (st) return st;
    c->st.real_steps++;
    c->run.res->expanded++;
    st = encode(c, err);
    return st ? st : xf_agent_run_step(&c->run, rule, sr, err);
}

/* After step t of recorded episode ep, which took the cost from `before`
 * to the run's best: that episode's prefix is the one to imitate. */
static void note_best(run_ctx *c, double before, int ep, int t)
{
    if (c->run.res->best_ms < before) {
        c->best_ep = ep;
        c->best_T = t + 1;
    }
}

enum { MODE_RANDOM, MODE_GREEDY, MODE_SAMPLED };

/* The world model's LSTM one step along a real trajectory: from graph z
 * (standardised) the agent action (rule, loc) was taken; h (a->state's
 * tail) and a->c move on, as the controller's state of the next graph. */
static void track(xf_wm_agent *a, const float *z, int rule, int loc)
{
    const xf_wm *wm = &a->wm;
    int D = a->opt.gnn.latent, H = a->opt.wm_hidden;
    xf_wm_input(wm, &a->wm_p, a->x, z, rule, loc);
    xf_nn_lstm_forward(a->h_new, a->c_new, &a->lcache, a->x, a->state + D, a->c,
                       xf_nn_params_value(&a->wm_p, wm->lstm.wx),
                       xf_nn_params_value(&a->wm_p, wm->lstm.wh),
                       xf_nn_params_value(&a->wm_p, wm->lstm.b), 1, wm->in_dim, H);
    memcpy(a->state + D, a->h_new, (size_t)H * sizeof *a->h_new);
    memcpy(a->c, a->c_new, (size_t)H * sizeof *a->c_new);
}

/* One real episode from the reset state: random actions or the controller
 * (state [z, h], h from the world model's LSTM along the trajectory).
 * Recorded into the agent's data when `record`. */
static xf_status real_episode(run_ctx *c, int mode, int record, xf_error *err)
{
    xf_wm_agent *a = c->a;
    xf_env *e = c->run.e;
    int D = a->opt.gnn.latent, H = a->opt.wm_hidden, N = a->act.M;
    xf_status st = xf_env_reset(e, err);
    if (!st) st = encode(c, err);
    int idx;
    if (!st && record) st = xf_wm_data_begin(&a->data, a->z, &idx, err);
    if (st) return st;
    memset(a->state + D, 0, (size_t)H * sizeof *a->state);
    memset(a->c, 0, (size_t)H * sizeof *a->c);
    c->run.path_n = 0;
    read_masks(a, e);
    for (int t = 0; t < a->opt.episode_steps && !out_of_budget(c); t++) {
        int rule = N, loc = 0;
        if (mode == MODE_RANDOM) {
            if (!random_action(a, &rule, &loc)) break;
        } else {
            float logp, value;
            memcpy(a->state, a->z, (size_t)D * sizeof *a->z);
            st = xf_ppo_act(&a->ctl, &a->ctl_p, &a->work, a->state, a->mask, a->n_loc,
                            mode == MODE_GREEDY, &a->rng, &rule, &loc, &logp, &value, err);
            if (st) return st;
            track(a, a->z, rule, loc);
        }
        xf_env_step_result sr;
        int env_rule = rule < N ? a->act.env[rule] : xf_env_num_xfers(e);
        double before = c->run.res->best_ms;
        st = real_step(c, env_rule, loc, &sr, err);
        if (st) return st;
        if (record) note_best(c, before, idx, t);
        if (mode != MODE_RANDOM) c->ctl_ret += sr.reward;
        read_masks(a, e);
        if (record)
            st = xf_wm_data_step(&a->data, rule, loc, (float)sr.reward / a->reward_scale, sr.done,
                                 a->z, a->locs, err);
        if (st) return st;
        tick(c, mode == MODE_RANDOM ? "collect" : "eval", 0);
        if (sr.done) break;
    }
    c->st.real_episodes++;
    c->ctl_n += mode != MODE_RANDOM;
    return XF_OK;
}

/* The warm-up (see the top): random episodes of at most episode_steps
 * steps, warmup_steps steps in all, recorded over every rule of e's rule
 * set while counting the rules offered in each state seen; then the action
 * set, the networks for it, and the episodes mapped to it as the first
 * recorded data. */
static xf_status warm_up(run_ctx *c, xf_error *err)
{
    xf_wm_agent *a = c->a;
    xf_env *e = c->run.e;
    int n = xf_env_num_xfers(e), L = a->max_locations;
    size_t n1 = (size_t)(n > 0 ? n : 1);
    int64_t *count = xf_calloc(n1, sizeof *count);
    uint16_t *locs = xf_malloc(n1 * sizeof *locs);
    xf_wm_data raw;
    xf_wm_data_init(&raw, a->opt.gnn.latent, n);
    xf_status st = count && locs ? XF_OK
                                 : XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the warm-up");
    int left = xf_actions_warmup(a->opt.warmup_steps, a->opt.max_env_steps);
    for (int moved = 1; !st && left > 0 && moved && !out_of_budget(c) &&
                        !xf_agent_run_warmup_over(&c->run, a->opt.max_seconds);) {
        int idx;
        st = xf_env_reset(e, err);
        if (!st) st = encode(c, err);
        if (!st) st = xf_wm_data_begin(&raw, a->z, &idx, err);
        if (st) break;
        xf_actions_count(e, count);
        c->run.path_n = 0;
        moved = 0;
        for (int t = 0, rule, loc; t < a->opt.episode_steps && left > 0 && !out_of_budget(c) &&
                                   !xf_agent_run_warmup_over(&c->run, a->opt.max_seconds);
             t++) {
            if (!xf_actions_random(e, &a->rng, &rule, &loc)) break;
            xf_env_step_result sr;
            double before = c->run.res->best_ms;
            st = real_step(c, rule, loc, &sr, err);
            if (st) break;
            note_best(c, before, idx, t);
            xf_actions_count(e, count);
            for (int j = 0; j < n; j++) {
                int k = xf_env_num_locations(e, j);
                locs[j] = (uint16_t)(k < L ? k : L);
            }
            st = xf_wm_data_step(&raw, rule, loc, (float)sr.reward, sr.done, a->z, locs, err);
            left--;
            moved = 1;
            tick(c, "warmup", 0);
            if (st || sr.done) break;
        }
        if (moved) c->st.real_episodes++;
    }
    xf_actions act;
    xf_actions_init(&act);
    xf_nn_params wm_p, ctl_p;
    xf_wm wm;
    xf_ppo_net ctl;
    if (!st) st = xf_actions_choose(&act, xf_env_ruleset(e), count, a->opt.max_actions, err);
    if (!st) st = xf_wm_agent_nets(a, act.M, &a->rng, &wm_p, &wm, &ctl_p, &ctl, err);
    if (!st) st = xf_wm_agent_install(a, &act, &wm_p, &wm, &ctl_p, &ctl, err);
    if (!st) st = xf_wm_data_add_mapped(&a->data, &raw, &a->act, err);
    /* mapped in order; an episode ends before a rule outside the set */
    if (!st && c->best_ep >= 0 && a->data.ep[c->best_ep].T < c->best_T) c->best_ep = -1;
    xf_actions_free(&act);
    xf_wm_data_free(&raw);
    xf_free(count);
    xf_free(locs);
    return st;
}

/* Per-dimension mean and deviation of every recorded z and the root mean
 * square of the rewards; the recorded z and rewards are standardised in
 * place and the statistics frozen. */
static void standardise(xf_wm_agent *a)
{
    int D = a->opt.gnn.latent;
    xf_wm_data *d = &a->data;
    double *sum = xf_calloc((size_t)D * 2, sizeof *sum);
    if (!sum) return; /* stays unnormalised: the next round tries again */
    double n = 0, r2 = 0;
    for (int i = 0; i < d->n; i++)
        for (int t = 0; t < d->ep[i].T; t++) r2 += (double)d->ep[i].reward[t] * d->ep[i].reward[t];
    /* Never below 1 (one percent of the initial cost): a first round with
     * only tiny rewards must not blow up later ones. */
    a->reward_scale = d->steps > 0 ? (float)fmax(sqrt(r2 / (double)d->steps), 1.0) : 1.0f;
    for (int i = 0; i < d->n; i++) {
        for (int t = 0; t < d->ep[i].T; t++) d->ep[i].reward[t] /= a->reward_scale;
        for (int t = 0; t <= d->ep[i].T; t++, n++)
            for (int k = 0; k < D; k++) {
                double v = d->ep[i].z[(size_t)t * (size_t)D + (size_t)k];
                sum[k] += v;
                sum[D + k] += v * v;
            }
    }
    for (int k = 0; k < D && n > 0; k++) {
        double m = sum[k] / n, var = sum[D + k] / n - m * m;
        a->z_mean[k] = (float)m;
        a->z_std[k] = (float)fmax(sqrt(var > 0 ? var : 0), XF_WM_STD_FLOOR);
    }
    xf_free(sum);
    for (int i = 0; i < d->n; i++)
        for (int t = 0; t <= d->ep[i].T; t++)
            for (int k = 0; k < D; k++) {
                float *v = &d->ep[i].z[(size_t)t * (size_t)D + (size_t)k];
                *v = fmaxf(-XF_WM_Z_CLIP, fminf(XF_WM_Z_CLIP, (*v - a->z_mean[k]) / a->z_std[k]));
            }
    a->normalised = 1;
}

/* Training passes of the world model over every recorded episode; first
 * its loss on the episodes it has not trained on yet (held out). */
static xf_status train_model(run_ctx *c, xf_error *err)
{
    xf_wm_agent *a = c->a;
    int n = a->data.n;
    int *order = xf_malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory training the world model");
    xf_status st = XF_OK;
    if (n > c->trained_n) {
        for (int i = c->trained_n; i < n; i++) order[i - c->trained_n] = i;
        xf_wm_loss l;
        xf_wm_eval(&a->tr, &a->wm_p, &a->data, order, n - c->trained_n, &l);
        if (l.count > 0) {
            c->st.heldout_nll = l.nll;
            c->st.heldout_reward_rmse = sqrt(l.reward) * a->reward_scale;
        }
        c->trained_n = n;
    }
    c->st.reward_rms = a->reward_scale;
    for (int pass = 0; pass < a->opt.wm_passes && !out_of_budget(c); pass++) {
        for (int i = 0; i < n; i++) order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(xf_rng_next(&a->rng) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        xf_wm_loss l;
        st = xf_wm_train_pass(&a->tr, &a->wm_p, &a->wm_adam, &a->data, order, n,
                              a->opt.wm_clip, &l, err);
        if (st) break;
        if (c->st.wm_loss_first == 0) c->st.wm_loss_first = l.total;
        c->st.wm_loss_last = l.total;
        tick(c, "model", 0);
    }
    xf_free(order);
    return st;
}

/* Self-imitation (see the top): the recorded prefix that reached the best
 * graph appended to the rollout as one episode, its states [z, h] with h
 * the world model's LSTM along the recorded latents and actions, its masks
 * the recorded locations (the initial graph's first). Stops where the
 * controller cannot take a recorded step. Rows from *from on are it. */
static xf_status imitate(run_ctx *c, int *from, xf_error *err)
{
    xf_wm_agent *a = c->a;
    int D = a->opt.gnn.latent, H = a->opt.wm_hidden, N = a->act.M;
    *from = a->buf.n;
    if (!a->opt.self_imitation || c->best_ep < 0) return XF_OK;
    const xf_wm_episode *ep = &a->data.ep[c->best_ep];
    memset(a->state + D, 0, (size_t)H * sizeof *a->state);
    memset(a->c, 0, (size_t)H * sizeof *a->c);
    xf_status st = XF_OK;
    for (int t = 0; !st && t < c->best_T; t++) {
        const uint16_t *locs = t == 0 ? c->locs0 : ep->locs + (size_t)(t - 1) * (size_t)N;
        for (int j = 0; j < N; j++) {
            a->n_loc[j] = locs[j];
            a->mask[j] = locs[j] > 0;
        }
        a->n_loc[N] = 0;
        a->mask[N] = 1;
        int rule = ep->xfer[t], loc = ep->loc[t];
        if (rule < 0 || rule > N || !a->mask[rule] || (rule < N && loc >= a->n_loc[rule])) break;
        const float *z = ep->z + (size_t)t * (size_t)D;
        memcpy(a->state, z, (size_t)D * sizeof *z);
        float logp, value;
        st = xf_ppo_eval(&a->ctl, &a->ctl_p, &a->work, a->state, a->mask, a->n_loc, rule, loc,
                         &logp, &value, err);
        int done = t == c->best_T - 1 || ep->done[t];
        if (!st)
            st = xf_ppo_buffer_add(&a->buf, a->state, a->mask, a->n_loc[rule], rule, loc, logp,
                                   value, ep->reward[t], done, err);
        if (st || done) break;
        track(a, z, rule, loc);
    }
    if (!st && a->buf.n > *from) a->buf.done[a->buf.n - 1] = 1;
    return st;
}

/* PPO updates of the controller on dream episodes. */
static xf_status train_controller(run_ctx *c, xf_error *err)
{
    xf_wm_agent *a = c->a;
    xf_dream *d = c->dream;
    int N = a->act.M, S = a->opt.gnn.latent + a->opt.wm_hidden;
    xf_status st = XF_OK;
    for (int u = 0; u < a->opt.dream_updates && !out_of_budget(c); u++) {
        xf_ppo_buffer_clear(&a->buf);
        double ret = 0;
        for (int ep = 0; ep < a->opt.dream_episodes; ep++) {
            xf_dream_reset(d);
            for (int done = 0; !done;) {
                memcpy(a->state, xf_dream_state(d), (size_t)S * sizeof *a->state);
                memcpy(a->mask, xf_dream_xfer_mask(d), (size_t)N + 1);
                for (int j = 0; j < N; j++) a->n_loc[j] = xf_dream_num_locations(d, j);
                a->n_loc[N] = 0;
                int rule, loc;
                float logp, value;
                st = xf_ppo_act(&a->ctl, &a->ctl_p, &a->work, a->state, a->mask, a->n_loc, 0,
                                &a->rng, &rule, &loc, &logp, &value, err);
                if (st) return st;
                xf_dream_step_result r;
                xf_dream_step(d, rule, loc, &r);
                c->st.dream_steps++;
                ret += r.reward;
                done = r.done;
                st = xf_ppo_buffer_add(&a->buf, a->state, a->mask, a->n_loc[rule], rule, loc, logp,
                                       value, r.reward, r.done, err);
                if (st) return st;
            }
            c->st.dream_episodes++;
        }
        c->st.dream_reward = ret * a->reward_scale / a->opt.dream_episodes;
        int sil_from;
        st = imitate(c, &sil_from, err);
        if (st) return st;
        xf_ppo_buffer_finish(&a->buf, 0.0f, &a->opt.hp);
        xf_ppo_buffer_imitate_from(&a->buf, sil_from);
        st = xf_ppo_update(&a->ctl, &a->ctl_p, &a->ctl_adam, &a->work, &a->buf, &a->opt.hp, NULL,
                           &a->rng, NULL, err);
        if (st) return st;
        tick(c, "dream", 0);
    }
    return st;
}

static xf_status run_begin(run_ctx *c, xf_wm_agent *a, xf_env *e, xf_search_result *res,
                           xf_error *err)
{
    memset(c, 0, sizeof *c);
    c->a = a;
    c->best_ep = -1;
    xf_status st = xf_agent_run_begin(&c->run, e, res, a->built ? &a->act : NULL, err);
    return !st && a->opt.lookahead ? xf_agent_run_lookahead(&c->run, err) : st;
}

/* Leaves the best graph in e and fills the figures; frees the context. */
static xf_status run_end(run_ctx *c, xf_status st, xf_wm_agent_stats *stats, xf_error *err)
{
    xf_search_result *res = c->run.res;
    st = xf_agent_run_end(&c->run, st, err);
    c->st.seconds = res->seconds;
    if (c->st.real_steps > 0) c->st.real_step_us = c->real_s / (double)c->st.real_steps * 1e6;
    if (c->encodes > 0) c->st.encode_us = c->encode_s / (double)c->encodes * 1e6;
    if (c->dream) {
        int64_t n;
        double s;
        xf_dream_timing(c->dream, &n, &s);
        if (n > 0) c->st.wm_step_us = s / (double)n * 1e6;
    }
    if (!st) tick(c, "done", 1);
    if (stats) *stats = c->st;
    xf_dream_free(c->dream);
    xf_free(c->z0);
    xf_free(c->locs0);
    if (st) {
        xf_error_prefix(err, "world-model agent");
        xf_search_result_free(res);
    }
    return st;
}

/* The dream over the agent's model, started at the initial graph. */
static xf_status make_dream(run_ctx *c, xf_error *err)
{
    xf_wm_agent *a = c->a;
    int D = a->opt.gnn.latent, N = a->act.M;
    c->z0 = xf_malloc((size_t)D * sizeof *c->z0);
    c->locs0 = xf_malloc((size_t)(N > 0 ? N : 1) * sizeof *c->locs0);
    if (!c->z0 || !c->locs0) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the dream");
    xf_status st = xf_env_reset(c->run.e, err);
    if (!st) st = encode(c, err);
    if (st) return st;
    read_masks(a, c->run.e);
    memcpy(c->z0, a->z, (size_t)D * sizeof *a->z);
    memcpy(c->locs0, a->locs, (size_t)N * sizeof *a->locs);
    xf_dream_options o = xf_dream_options_default();
    o.tau = a->opt.tau;
    o.max_steps = a->opt.episode_steps;
    o.seed = xf_rng_next(&a->rng);
    return xf_dream_create(&a->wm, &a->wm_p, c->z0, c->locs0, &o, &c->dream, err);
}

xf_status xf_wm_agent_train(xf_wm_agent *a, xf_env *e, xf_search_result *res,
                            xf_wm_agent_stats *stats, xf_error *err)
{
    run_ctx c;
    xf_status st = run_begin(&c, a, e, res, err);
    const xf_wm_agent_options *o = &a->opt;
    if (!st && !a->built) st = warm_up(&c, err);
    /* With no action found there is nothing to learn: the no-op only. */
    while (!st && a->act.M > 0 && !out_of_budget(&c) &&
           (o->rounds <= 0 || c.st.rounds < o->rounds)) {
        for (int i = 0; !st && i < o->random_episodes && !out_of_budget(&c); i++)
            st = real_episode(&c, MODE_RANDOM, 1, err);
        if (st) break;
        if (!a->normalised) standardise(a);
        if (!c.dream && a->normalised) st = make_dream(&c, err);
        if (!st) st = train_model(&c, err);
        if (!st && c.dream) st = train_controller(&c, err);
        c.ctl_ret = 0;
        c.ctl_n = 0;
        for (int i = 0; !st && i < o->eval_episodes && !out_of_budget(&c); i++)
            st = real_episode(&c, i == 0 ? MODE_GREEDY : MODE_SAMPLED, 1, err);
        if (c.ctl_n > 0) c.st.real_return = c.ctl_ret / c.ctl_n;
        if (!st) c.st.rounds++;
    }
    if (!st && o->polish) st = xf_agent_run_polish(&c.run, o->max_seconds, err);
    return run_end(&c, st, stats, err);
}

xf_status xf_wm_agent_run(xf_wm_agent *a, xf_env *e, int greedy, xf_search_result *res,
                          xf_error *err)
{
    if (!a->built)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "world-model agent: the agent has no actions yet: train or load it first");
    run_ctx c;
    xf_status st = run_begin(&c, a, e, res, err);
    if (!st) st = real_episode(&c, greedy ? MODE_GREEDY : MODE_SAMPLED, 0, err);
    return run_end(&c, st, NULL, err);
}

xf_status xf_wm_optimise(xf_env *e, const xf_wm_agent_options *opt, xf_search_result *res,
                         xf_wm_agent_stats *stats, xf_error *err)
{
    xf_wm_agent *a = NULL;
    xf_status st = xf_wm_agent_create(opt, &a, err);
    if (!st) st = xf_wm_agent_train(a, e, res, stats, err);
    xf_wm_agent_free(a);
    return st;
}
