/*
 * ppo.h — (part of agent/rl/rl.h) proximal policy optimisation for the learning
 * agents: a two-level policy over the environment's actions (a rule, then a
 * location of that rule), a rollout buffer with GAE(γ, λ) advantages, the
 * clipped PPO update, the model-free agent that trains the policy and
 * the GNN encoder end to end on the real environment, and what it shares
 * with the world-model agent (its controller is this policy): the compact
 * action set, checkpoint I/O, the GNN's input and a run's bookkeeping.
 *
 * The policy network over a state vector s (dim S; the GNN's z for the real
 * agent, the world model's [z, h] for the controller):
 *   t      = trunk(s)                       MLP S → H → … → H (tanh)
 *   rule   ~ softmax(rule_head(t) | xfer mask)          N+1 actions (N: no-op)
 *   e      = embed[rule]                    learned table [N+1, E]
 *   loc    ~ softmax(loc_head([t, e]) | loc < n_loc(rule))   L = max_locations
 *   V(s)   = value(s)                       MLP S → H → H → 1 of its own (tanh)
 *   log π(rule, loc) = log π(rule) + log π(loc | rule); a rule with at most
 *   one location (the no-op has none) contributes no location term.
 * Every weight lives in an xf_nn_params store under "ppo/..." names, so
 * xf_nn_params_save/load checkpoint it. N here is the agent's compact
 * action set (xf_actions below), not the whole rule set.
 *
 * The PPO loss of a minibatch of B rows (means over the rows):
 *   L = −min(ρA, clip(ρ, 1−ε, 1+ε)A) + c_v (V − R)² − c_e (H_rule + H_loc)
 * with ρ = exp(log π − log π_old), A the advantage and R the return.
 */
#ifndef XF_AGENT_PPO_H
#define XF_AGENT_PPO_H

#include <string.h>

#include "agent/search/search.h"
#include "agent/rl/gnn.h"
#include "agent/nn/nn.h"

/* ------------------------------------------------------- hyper-parameters */

typedef struct xf_ppo_hparams {
    float gamma;         /* discount (0.99, RLFlow) */
    float lambda;        /* GAE λ (0.95) */
    float clip;          /* surrogate clip ε (0.2) */
    float value_coef;    /* c_v (0.5) */
    float entropy_coef;  /* c_e (0.01) */
    float lr;            /* Adam learning rate (3e-4) */
    float max_grad_norm; /* global gradient-norm clip (0.5); <= 0: none */
    int epochs;          /* passes over a rollout per update (4) */
    int minibatch;       /* rows per minibatch (64) */
    int normalize_adv;   /* advantages to zero mean, unit std per rollout (1) */
    int hidden;          /* H: trunk and location-head width (64) */
    int trunk_layers;    /* linear layers in the trunk (2) */
    int embed;           /* E: rule-embedding width (16) */
} xf_ppo_hparams;

xf_ppo_hparams xf_ppo_hparams_default(void);

/* ---------------------------------------------------------------- network */

typedef struct xf_ppo_net {
    int S;              /* state dim */
    int A;              /* rule actions N + 1 (the last is the no-op) */
    int L;              /* locations (max_locations) */
    int H, E;
    xf_nn_mlp trunk;    /* "ppo/trunk": S → H (tanh after every layer) */
    xf_nn_linear rule;  /* "ppo/rule": H → A */
    int embed;          /* "ppo/rule_embed" [A, E] */
    xf_nn_mlp loc;      /* "ppo/loc": H+E → H → L (tanh hidden, raw out) */
    xf_nn_mlp value;    /* "ppo/value": S → H → H → 1 (tanh hidden, raw out) */
} xf_ppo_net;

/* Adds the network's tensors to p (initialised from rng: Xavier, the
 * policy heads' last layers scaled by 0.01 so the first policy is nearly
 * uniform over what the masks allow). n_rules = N (A = N + 1). */
xf_status xf_ppo_net_add(xf_ppo_net *net, xf_nn_params *p, int state_dim, int n_rules,
                         int max_locations, const xf_ppo_hparams *hp, xf_rng *rng,
                         xf_error *err);

/* A batch of rows for the network: what acting and the loss read. */
typedef struct xf_ppo_rows {
    int B;
    const float *s;         /* [B, S] */
    const uint8_t *mask;    /* [B, A] xfer mask (1 = allowed; NULL: all) */
    const int *n_loc;       /* [B] locations of the row's chosen rule (0 for the no-op) */
    const int *rule;        /* [B] chosen rule */
    const int *loc;         /* [B] chosen location (ignored when n_loc <= 1) */
    const float *old_logp;  /* [B] log π_old(rule, loc) */
    const float *adv;       /* [B] advantages */
    const float *ret;       /* [B] returns */
} xf_ppo_rows;

/* Scratch and caches of one forward/backward over up to `cap` rows. */
typedef struct xf_ppo_work {
    int cap;
    xf_nn_mlp_cache trunk_c, loc_c, value_c;
    const float *t;                 /* [cap, H] trunk output (in trunk_c) */
    float *rule_logits, *rule_logp; /* [cap, A] */
    float *loc_in;                  /* [cap, H+E]: [t, embed[rule]] */
    float *loc_logp;                /* [cap, L] */
    uint8_t *loc_mask;              /* [cap, L] */
    const float *value;             /* [cap] (in value_c) */
    float *logp, *ent;              /* [cap] joint log-prob and entropy */
    float *d_logp, *d_ent;          /* [cap] */
    float *d_rule_logp, *d_rule_logits; /* [cap, A] */
    float *d_loc_logp, *d_loc_logits;   /* [cap, L] */
    float *d_loc_in;                /* [cap, H+E] */
    float *d_t;                     /* [cap, H] */
    float *d_value;                 /* [cap] */
} xf_ppo_work;

void xf_ppo_work_init(xf_ppo_work *w);
xf_status xf_ppo_work_reserve(xf_ppo_work *w, const xf_ppo_net *net, int rows, xf_error *err);
void xf_ppo_work_free(xf_ppo_work *w);

/* Losses of one minibatch (means over its rows). */
typedef struct xf_ppo_loss {
    double total, policy, value, entropy; /* entropy: mean H (before its coefficient) */
    double approx_kl;                     /* mean (log π_old − log π) */
    double clip_frac;                     /* rows with |ρ − 1| > ε */
} xf_ppo_loss;

/* One action for one state s[S] given its xfer mask [A] and the number of
 * locations of every rule n_loc_per_rule[A] (the no-op's is 0). greedy:
 * the most likely rule, then its most likely location; else sampled from
 * rng. Fills rule, loc (0 when the rule has no location to choose), the
 * joint log-prob and the value estimate. XF_ERR_INVALID when the mask
 * allows nothing. */
xf_status xf_ppo_act(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                     const float *s, const uint8_t *mask, const int *n_loc_per_rule, int greedy,
                     xf_rng *rng, int *rule, int *loc, float *logp, float *value, xf_error *err);

/* The joint log-prob and the value of a given action (rule, loc) in state
 * s, as xf_ppo_act would have reported them had it picked that action
 * (self-imitation replays a recorded episode with it). XF_ERR_INVALID when
 * the mask does not offer the rule or loc is not one of its locations. */
xf_status xf_ppo_eval(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                      const float *s, const uint8_t *mask, const int *n_loc_per_rule, int rule,
                      int loc, float *logp, float *value, xf_error *err);
/* The policy's ranking of the actions of one state s[S] with xfer mask
 * [A], for a search the policy guides (xf_ppo_agent_guide): *rule_logp
 * points at the A rule log-probs (masked ones -inf), valid until the next
 * call on w. */
xf_status xf_ppo_rank(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                      const float *s, const uint8_t *mask, const float **rule_logp, xf_error *err);

/* Forward of the loss on rows r (r->B <= the work's rows); fills *out
 * and leaves in w what the backward needs. */
void xf_ppo_loss_forward(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                         const xf_ppo_rows *r, const xf_ppo_hparams *hp, xf_ppo_loss *out);
/* Backward of the last loss forward on the same rows: accumulates the
 * gradients of the total loss into p's gradients and into ds[B, S] (may be
 * NULL: no gradient for the states). */
void xf_ppo_loss_backward(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                          const xf_ppo_rows *r, const xf_ppo_hparams *hp, float *ds);

/* --------------------------------------------------------- rollout buffer */

/* GAE over T steps in order: done[t] = 1 when the episode ended after step
 * t (no bootstrap through it); last_value bootstraps the step after T-1
 * when done[T-1] is 0.
 *   δ_t = r_t + γ V_{t+1} (1 − done_t) − V_t,
 *   A_t = δ_t + γλ (1 − done_t) A_{t+1},   R_t = A_t + V_t. */
void xf_ppo_gae(const float *reward, const float *value, const uint8_t *done, int T,
                float last_value, float gamma, float lambda, float *adv, float *ret);

typedef struct xf_ppo_buffer {
    int S, A;
    int n, cap;
    float *s;         /* [cap, S] */
    uint8_t *mask;    /* [cap, A] */
    int *n_loc, *rule, *loc;
    float *logp, *value, *reward;
    uint8_t *done;
    float *adv, *ret; /* filled by xf_ppo_buffer_finish */
} xf_ppo_buffer;

void xf_ppo_buffer_init(xf_ppo_buffer *b, int state_dim, int n_actions);
void xf_ppo_buffer_free(xf_ppo_buffer *b);
void xf_ppo_buffer_clear(xf_ppo_buffer *b); /* n = 0, memory kept */
/* Appends one step (grows as needed). mask may be NULL (all allowed). */
xf_status xf_ppo_buffer_add(xf_ppo_buffer *b, const float *s, const uint8_t *mask, int n_loc,
                            int rule, int loc, float logp, float value, float reward, int done,
                            xf_error *err);
/* GAE advantages and returns for all steps; when hp->normalize_adv the
 * advantages are then standardised over the buffer. */
void xf_ppo_buffer_finish(xf_ppo_buffer *b, float last_value, const xf_ppo_hparams *hp);
/* Self-imitation's rows (from `from` on, after xf_ppo_buffer_finish):
 * their advantages raised to at least +1, one standard deviation of the
 * normalised advantages, so the update always moves towards them. */
void xf_ppo_buffer_imitate_from(xf_ppo_buffer *b, int from);

/* ---------------------------------------------------------------- update */

/* Optional end-to-end hook: the states are recomputed from the rows'
 * observations (e.g. graphs through the GNN) at every minibatch, with the
 * current parameters, and the states' gradients flow back. forward writes
 * s[B, S] for buffer rows rows[0..B); backward gets ds[B, S] for the same
 * rows and accumulates into the store's gradients. Without a hook the
 * buffer's stored states are used as constants. */
typedef struct xf_ppo_state_hook {
    xf_status (*forward)(void *user, const int *rows, int B, float *s, xf_error *err);
    xf_status (*backward)(void *user, const int *rows, int B, const float *ds, xf_error *err);
    void *user;
} xf_ppo_state_hook;

typedef struct xf_ppo_update_stats {
    xf_ppo_loss last;    /* mean over the update's minibatches */
    float grad_norm;     /* mean norm before clipping */
    int minibatches;
} xf_ppo_update_stats;

/* hp->epochs passes over the finished buffer in minibatches of
 * hp->minibatch rows shuffled from rng: zero the store's gradients, loss
 * forward/backward (through the hook when given), clip to
 * hp->max_grad_norm, one Adam step over the whole store p — so p must hold
 * only what this update trains (the PPO net, plus the encoder when a hook
 * trains it end to end). stats may be NULL. */
xf_status xf_ppo_update(const xf_ppo_net *net, xf_nn_params *p, xf_nn_adam *opt,
                        xf_ppo_work *w, const xf_ppo_buffer *b, const xf_ppo_hparams *hp,
                        const xf_ppo_state_hook *hook, xf_rng *rng, xf_ppo_update_stats *stats,
                        xf_error *err);

/* ----------------------------------------------------- compact actions */

/* The actions a learning agent uses: the rules the environment offered
 * (mask 1) in at least one state the agent observed on it during a random
 * warm-up, at most a cap of them (the most often offered), and the no-op.
 * Agent action j < M is environment action env[j]; M is the no-op. A rule
 * the environment offers later that is not in the set is not available to
 * the agent. The set is identified by rule database ids, so a checkpoint
 * maps back through any rule set loaded from the same database. */
typedef struct xf_actions {
    int M;          /* rule actions; M is the no-op */
    int64_t *ids;   /* [M] xf_ruleset_rule_id of each, in the agent's order */
    int n_env;      /* actions N of the bound rule set (its no-op) */
    int *env;       /* [M] environment action of each agent action */
    int *agent;     /* [n_env + 1] agent action of each environment action, -1: none;
                       agent[n_env] = M (the no-ops) */
    int partial;    /* binding leaves an id the rule set lacks unavailable (env -1)
                       instead of failing: an agent trained over several models, or
                       loaded on a model it never saw, whose rule set is restricted to
                       the rules that can match that model */
    int unbound;    /* ids the bound rule set lacks (partial only) */
} xf_actions;

#define XF_ACTIONS_WARMUP 300 /* default warm-up steps */
#define XF_ACTIONS_CAP 512    /* default cap of the set */

/* The warm-up's length: warmup_steps, but at most a tenth of a step
 * budget (max_env_steps > 0; at least 1 step when warmup_steps > 0), so
 * a small budget leaves steps to learn with. */
int xf_actions_warmup(int warmup_steps, int64_t max_env_steps);

void xf_actions_init(xf_actions *s);
void xf_actions_free(xf_actions *s); /* back to empty (M 0) */
/* Locations of environment rule i the agents may take in e's state:
 * xf_env_num_locations, but none for a rule that only swaps operands
 * (xf_ruleset_swaps_only). */
int xf_actions_locations(const xf_env *e, int i);
/* count[i] += 1 for every rule i that e offers now (xf_env_num_xfers
 * counts), except a rule that only swaps operands (xf_ruleset_swaps_only:
 * the agents never take one, so it never enters their action set). */
void xf_actions_count(const xf_env *e, int64_t *count);
/* A uniformly random offered (rule, location) of e, over all locations of
 * all rules but those that only swap operands (never the no-op); 0 when
 * nothing else is offered. */
int xf_actions_random(const xf_env *e, xf_rng *rng, int *rule, int *loc);
/* s (what it held dropped) = the rules of rs with count > 0: the `cap`
 * most counted (ties: the lower index; a rule whose id repeats a chosen
 * one's is left out), in rule-set order, bound to rs. XF_ERR_INVALID for
 * cap < 1. */
xf_status xf_actions_choose(xf_actions *s, const xf_ruleset *rs, const int64_t *count, int cap,
                            xf_error *err);
/* Maps s's ids through rs (env, agent, n_env, unbound): each id names the
 * first action of rs with that id. XF_ERR_MISMATCH naming the first id rs
 * lacks, unless s->partial (then that action is unavailable: env -1, never
 * in the mask); s's previous mapping is kept on failure. */
xf_status xf_actions_bind(xf_actions *s, const xf_ruleset *rs, xf_error *err);
/* The agent's mask [M + 1] and locations per action n_loc [M + 1] in e's
 * current state (the no-op: 1 and 0; an unbound action, or one that only
 * swaps operands, kept by a checkpoint trained before the agents left
 * them out: 0 and 0). s must be bound to e's rule set. */
void xf_actions_mask(const xf_actions *s, const xf_env *e, uint8_t *mask, int *n_loc);
/* Rules e offers now (mask 1) that are not among s's actions (s bound to
 * e's rule set): what a transferred agent cannot use on e. */
int xf_actions_outside(const xf_actions *s, const xf_env *e);
/* dst (initialised here) = a copy of ids' ids and partial flag, unbound. */
xf_status xf_actions_copy_ids(xf_actions *dst, const xf_actions *ids, xf_error *err);

/* Offer counts by rule id over several rule sets (an agent trained over
 * several models): a model's counts (xf_actions_count over its rule set rs)
 * are added by id, and the set chosen from all of them is the `cap` most
 * offered ids (ties: the lower id), in id order, partial. */
typedef struct xf_actions_tally {
    int n, cap;
    int64_t *id, *count; /* [n] sorted by id */
} xf_actions_tally;

void xf_actions_tally_init(xf_actions_tally *t);
void xf_actions_tally_free(xf_actions_tally *t);
xf_status xf_actions_tally_add(xf_actions_tally *t, const xf_ruleset *rs, const int64_t *count,
                               xf_error *err);
/* s (what it held dropped) = the chosen ids, unbound, partial.
 * XF_ERR_INVALID for cap < 1. */
xf_status xf_actions_tally_choose(const xf_actions_tally *t, int cap, xf_actions *s,
                                  xf_error *err);
/* Checkpoint section: u32 M | M × i64 ids (little-endian). write returns
 * 0 on an I/O error; read fills s's ids (s unbound, previous contents
 * dropped), XF_ERR_PARSE naming path when truncated. */
int xf_actions_write(FILE *f, const xf_actions *s);
xf_status xf_actions_read(FILE *f, const char *path, xf_actions *s, xf_error *err);

/* ----------------------------------------------------- model-free agent */

typedef struct xf_ppo_progress {
    const char *phase;   /* "train" (sampled rollouts) or "eval" (greedy episodes) */
    int64_t episodes;    /* finished */
    int64_t steps;       /* environment steps so far */
    double mean_reward;  /* mean return of the episodes since the last update */
    double best_ms, initial_ms;
    double seconds;
} xf_ppo_progress;

typedef struct xf_ppo_agent_options {
    xf_ppo_hparams hp;
    xf_gnn_config gnn;       /* encoder sizes (hidden 32, latent 32 as RLFlow, 2 rounds) */
    xf_cost_model *cm;       /* per-node costs as node features (NULL: none); the
                                environment's cost model, must outlive the agent */
    int max_locations;       /* L, the location head's width: the environment's
                                max_locations (200) */
    int warmup_steps;        /* random steps that find the action set before the
                                networks are built (XF_ACTIONS_WARMUP; at most a
                                tenth of max_env_steps, xf_actions_warmup, and of
                                max_seconds, xf_agent_run_warmup_over) */
    int max_actions;         /* cap of the action set (XF_ACTIONS_CAP) */
    int transfer;            /* 1: loading keeps a checkpoint's action whose rule the
                                rule set lacks as unavailable instead of failing
                                (xf_actions.partial; a model it never saw) (0) */
    int lookahead;           /* a step of a rule with a view is followed by the view
                                moves' closure (xf_agent_env_step; 1) */
    int polish;              /* 1: training ends with the greedy polish of the best
                                graph (xf_agent_run_polish; 1) */
    int self_imitation;      /* 1: every update also replays the episode that reached
                                the best graph so far, its actions' advantages at least
                                +1 (agent_ppo.c; 1) */
    float novelty;           /* reward bonus (percent, as the rewards) of a step to a
                                graph the run has not seen before; the rollout's only,
                                not the reported reward (0: none; agent_ppo.c) */
    int episodes_per_update; /* K (4) */
    int max_rows;            /* rollout rows before an update regardless of K (512) */
    int64_t max_env_steps;   /* step budget over all episodes (20000); <= 0: none */
    double max_seconds;      /* wall-clock budget (60); <= 0: none */
    uint64_t seed;           /* (1) */
    void (*progress)(void *user, const xf_ppo_progress *p);
    void *progress_user;     /* progress called about once a second and at every new
                                best graph, when set */
} xf_ppo_agent_options;

xf_ppo_agent_options xf_ppo_agent_options_default(void);

typedef struct xf_ppo_agent xf_ppo_agent;

/* An untrained agent: the GNN encoder; the policy is built when the
 * action set is known (training's warm-up or a checkpoint). opt NULL:
 * defaults. */
xf_status xf_ppo_agent_create(const xf_ppo_agent_options *opt, xf_ppo_agent **out,
                              xf_error *err);
void xf_ppo_agent_free(xf_ppo_agent *a); /* NULL is a no-op */

/* Trains on e within the budgets (episodes from e's reset state; every
 * real graph seen counts for the best). An agent without actions first
 * runs xf_actions_warmup uniformly random steps (random episodes, counted in
 * the budget) and takes the rules offered in any state it saw as its
 * action set (xf_actions_choose, cap max_actions), then builds the policy;
 * a trained or loaded agent keeps its set, mapped through e's rule set
 * (XF_ERR_MISMATCH naming a rule id e's rule set lacks). res (initialised)
 * gets the best graph, its cost, the path of applied rules (environment
 * actions), environment steps used (expanded), distinct graphs (seen) and
 * seconds. With opt.polish the run ends with xf_agent_run_polish (res says
 * what it did). On return e holds the best graph. */
xf_status xf_ppo_agent_train(xf_ppo_agent *a, xf_env *e, xf_search_result *res, xf_error *err);
/* One episode from e's reset state with the current policy (greedy or
 * sampled from the agent's rng); res as above (best graph of the episode).
 * XF_ERR_INVALID for an agent without actions (neither trained nor
 * loaded). */
xf_status xf_ppo_agent_run(xf_ppo_agent *a, xf_env *e, int greedy, xf_search_result *res,
                           xf_error *err);

/* A search the loaded policy guides, one episode from e's reset state
 * (the transfer path: rlflow-agent --load): at each step the policy ranks
 * the rules offered; every location of its `width` most likely rules is
 * priced as the step would leave the graph (xf_env_peek; a rule with a
 * view is applied and followed by the look-ahead's view moves), and the cheapest
 * is taken when it lowers the cost; when none does, the policy's own
 * greedy action is taken (it may climb: the chains the policy learned go
 * through dearer graphs). Steps go through the look-ahead
 * (xf_agent_env_step) as the agent's own. The episode ends at the
 * environment's done, or after XF_PPO_GUIDE_PATIENCE steps in a row that
 * found no graph cheaper than the best so far. What is learned: which rules
 * and locations are looked at, and every step where nothing in them
 * improves; what is search: pricing those rules' locations. res as
 * xf_ppo_agent_run's. */
#define XF_PPO_GUIDE_MAX 64     /* the widest guided search */
#define XF_PPO_GUIDE_PATIENCE 8 /* it stops after this many steps without a new best */
xf_status xf_ppo_agent_guide(xf_ppo_agent *a, xf_env *e, int width, xf_search_result *res,
                             xf_error *err);

/* Checkpoint: the sizes max_locations, gnn hidden, latent, rounds,
 * mlp_layers, ppo hidden, trunk_layers and embed, the action set as rule
 * ids, the Adam step, then the store with Adam moments (xf_ppo_ckpt_save).
 * Loading needs an agent created with the same sizes (XF_ERR_MISMATCH
 * naming the size otherwise) and maps the ids through e's rule set
 * (XF_ERR_MISMATCH naming a missing id, unless opt.transfer: then that
 * action is unavailable); it replaces the agent's action set
 * and policy, and leaves the agent as it was when it fails. The greedy
 * actions are then those of the saved agent. Saving an agent without
 * actions is XF_ERR_INVALID. */
xf_status xf_ppo_agent_save(const xf_ppo_agent *a, const char *path, xf_error *err);
xf_status xf_ppo_agent_load(xf_ppo_agent *a, const char *path, const xf_env *e, xf_error *err);
/* Builds the policy for the action set with ids (copied, bound at the next
 * run; ids->partial kept), replacing what the agent had: what a training
 * over several models (xf_rl_train_many) does instead of the warm-up. */
xf_status xf_ppo_agent_build(xf_ppo_agent *a, const xf_actions *ids, xf_error *err);
/* The budgets of the next train call (steps <= 0, seconds <= 0: none). */
void xf_ppo_agent_set_budget(xf_ppo_agent *a, int64_t max_env_steps, double max_seconds);
/* The agent's parameter store ("gnn/..." and, once built, "ppo/..."). */
xf_nn_params *xf_ppo_agent_params(xf_ppo_agent *a);
/* The agent's action set (M 0 before it is trained or loaded). */
const xf_actions *xf_ppo_agent_actions(const xf_ppo_agent *a);

/* ----------------------------------------------- shared by the PPO agents */

/* The defaults the two agents' options share, set on o (an
 * xf_ppo_agent_options or an xf_wm_agent_options, zeroed first: fields of
 * the same names). */
#define XF_AGENT_OPTIONS_DEFAULT(o)                                  \
    do {                                                             \
        memset(&(o), 0, sizeof(o));                                  \
        (o).hp = xf_ppo_hparams_default();                           \
        (o).gnn = xf_gnn_config_default();                           \
        (o).gnn.hidden = 32;                                         \
        (o).gnn.latent = 32;                                         \
        (o).gnn.rounds = 2;                                          \
        (o).max_locations = xf_env_options_default().max_locations;  \
        (o).warmup_steps = XF_ACTIONS_WARMUP;                        \
        (o).max_actions = XF_ACTIONS_CAP;                            \
        (o).lookahead = 1;                                           \
        (o).polish = 1;                                              \
        (o).self_imitation = 1;                                      \
        (o).max_env_steps = 20000;                                   \
        (o).max_seconds = 60;                                        \
        (o).seed = 1;                                                \
    } while (0)

/* Per-node costs for the GNN's node features (agent_common.c): the memo in
 * front of the agent's cost model cm (NULL: no costs) and buffers grown
 * to the largest graph seen. When cm is the environment's own cost model,
 * the environment's per-node costs (xf_env_node_costs, the same figures
 * from the same model) are used and the memo is not asked. All zero is
 * empty. */
typedef struct xf_node_costs {
    xf_cost_model *cm;
    xf_costmemo *memo;
    xf_op_cost *per_node;
    double *node_ms;
    int cap;
} xf_node_costs;

void xf_node_costs_free(xf_node_costs *nc); /* back to empty */
/* Appends e's current graph to b, with each node's cost when nc has a
 * memo. */
xf_status xf_agent_features(xf_node_costs *nc, const xf_env *e, xf_gnn_batch *b, xf_error *err);

/* A learning agent's run on the real environment (agent_common.c): the
 * result being filled, the graphs seen, the environment actions applied in
 * the current episode (the path a new best graph records) and the clock. */
/* The cheapest distinct graphs a learning agent's run hands the final
 * arbiter besides the start graph and the fastest measured one: as many as
 * a search keeps for it at the default --candidates 6 (3 x 6 + 1: the
 * arbiter times 6 of them, finishing merges some). */
#define XF_AGENT_CANDIDATES 19

typedef struct xf_agent_run {
    xf_env *e;
    xf_search_result *res;
    xf_htab seen;
    int *path, path_n, path_cap;
    int64_t steps; /* real steps counted by xf_agent_run_step */
    double t0, last_progress;
    double reported_ms;  /* the best cost the last progress call reported */
    uint64_t best_hash;  /* the best graph's (XF_HASH_IDENTITY) */
    /* With a target runtime in the environment (the sparse reward): the
     * graph the target measured fastest in the run, when faster than the
     * prepared model there, for the arbiter beside the cheapest one. */
    int fast_set;
    double fast_target_ms, fast_cost_ms;
    uint64_t fast_hash;
    xf_search_candidate fast;
    /* With a target runtime in the environment: the start graph and the
     * run's XF_AGENT_CANDIDATES cheapest distinct graphs (up to swapped
     * operands, as the searches' candidates), cheapest first, each with its
     * path, for the arbiter. keep: their room (0: none kept). */
    int keep, n_kept;
    xf_search_candidate start, *kept;
    uint64_t start_hash, *kept_hash;
    /* The look-ahead (agent_lookahead.c; the searches', search.h; empty:
     * none), the moves the last step's closure made (the path takes them
     * after the step's rule) and the totals. */
    xf_lookahead la;
    xf_closure_log moves;
    int64_t closures, moves_made;
} xf_agent_run;

/* Starts a run on e: res (its contents freed) gets e's reset state as the
 * initial and the best graph, which counts as seen; act (a built agent's;
 * NULL: none) is first bound to e's rule set. */
xf_status xf_agent_run_begin(xf_agent_run *r, xf_env *e, xf_search_result *res, xf_actions *act,
                             xf_error *err);
/* 1 when `steps` reached max_env_steps or max_seconds have passed since
 * the start (<= 0: no such budget). */
int xf_agent_run_over(const xf_agent_run *r, int64_t steps, int64_t max_env_steps,
                      double max_seconds);
/* 1 when the warm-up has had its share of a time budget: a tenth of
 * max_seconds (<= 0: no time budget, 0). The step budget's share is
 * xf_actions_warmup's; with a time budget and slow real steps (the fused
 * cost: 25-60 ms a step under load) 300 warm-up steps took the whole of a
 * 15 s budget and the agents never trained. */
int xf_agent_run_warmup_over(const xf_agent_run *r, double max_seconds);
/* 1 (and the clock and best cost noted) when a progress call is due: a
 * second since the last, or a new best graph since it, so that a trace of
 * the progress calls (bench_agents' steps to a level of improvement) has
 * every improvement at the step it was made. */
int xf_agent_run_progress_due(xf_agent_run *r);
/* Counts a real step that took environment action `rule` with result sr:
 * a valid rewrite (not the no-op) extends the path, counts as seen, and
 * becomes the best graph when cheaper (res->best_step: this step's count),
 * one of the kept candidates when among the run's cheapest distinct ones
 * (with a target), and the fastest measured when the target timed it (sr->target_ms) faster
 * than the start and than any graph before. */
xf_status xf_agent_run_step(xf_agent_run *r, int rule, const xf_env_step_result *sr,
                            xf_error *err);
/* Look-ahead for the run's steps (after xf_agent_run_begin; freed by
 * xf_agent_run_end): a step taken with xf_agent_env_step whose rule has a
 * reshape or a slice is followed by the closure of the rule set's view
 * moves, as in the searches (xf_search_options.lookahead). Nothing to do
 * when the rule set has no view move. */
xf_status xf_agent_run_lookahead(xf_agent_run *r, xf_error *err);
void xf_agent_run_lookahead_free(xf_agent_run *r);
/* xf_env_step, then (with the look-ahead, a valid step of a rule with a
 * view) the closure, kept as xf_lookahead_close keeps it (a rule making a
 * transpose ONNX Runtime folds stays alone where the moves cost more): the
 * environment gets the graph after the moves and
 * sr its cost, hash and done, the reward the closure's cost change too
 * (dense term, α = 1), target_ms 0 when moves were made (the measurement
 * was of the graph before them); r->moves lists the moves for
 * xf_agent_run_step. */
xf_status xf_agent_env_step(xf_agent_run *r, int xfer, int location, xf_env_step_result *sr,
                            xf_error *err);
/* The cheapest location of environment rule `rule` in e's current graph,
 * each priced as the step would leave the graph (xf_lookahead_price with
 * the run's look-ahead, as the searches price): *best (and *best_rule,
 * *best_loc) lowered to any cheaper; none for a rule the agents never take
 * (xf_actions_locations). */
xf_status xf_agent_run_price_rule(xf_agent_run *r, int rule, double *best, int *best_rule,
                                  int *best_loc, xf_error *err);
/* The greedy polish that ends a learning agent's training (agent_polish.c):
 * from the best graph of the run, every location of every rule the agents
 * may take is priced (xf_agent_run_price_rule) and the cheapest taken
 * (xf_agent_env_step, counted by xf_agent_run_step: the path, the best
 * graph, the kept candidates) while it lowers the cost by more than
 * XF_SEARCH_EPS of the initial cost, at most XF_AGENT_POLISH_STEPS steps
 * and, with a time budget max_seconds > 0 (the agent's, which is spent
 * when it starts), no new sweep after XF_AGENT_POLISH_SHARE of it; a step
 * the environment does not apply ends it.
 * res->unpolished_ms gets the best cost before it, res->polish_steps and
 * res->polish_seconds what it took. The environment holds the best graph
 * afterwards. */
#define XF_AGENT_POLISH_STEPS 256
#define XF_AGENT_POLISH_SHARE 0.25
xf_status xf_agent_run_polish(xf_agent_run *r, double max_seconds, xf_error *err);
/* Ends a run: after success (st XF_OK) e gets the best graph and res its
 * cost; res gets the distinct graphs seen and the seconds; the run's
 * memory is freed. Returns st, or the failure of setting e's graph.
 * When the environment has a target runtime (its sparse reward), the best
 * graph is judged there too: res->candidates gets the start graph, the
 * run's XF_AGENT_CANDIDATES cheapest distinct graphs (the best among them)
 * and the graph the target measured fastest (when it measured one faster
 * than the start and it is none of those), cheapest first, for the final
 * arbiter, as a search hands its cheapest few; without a target
 * res->candidates stays empty (the arbiter times res->best). */
xf_status xf_agent_run_end(xf_agent_run *r, xf_status st, xf_error *err);

/* Little-endian fields of the agents' checkpoints (ppo_ckpt.c): 1 when the
 * field was written or read whole, 0 on an I/O error or end of file. */
int xf_ckpt_put_u32(FILE *f, uint32_t v);
int xf_ckpt_get_u32(FILE *f, uint32_t *v);
int xf_ckpt_put_i64(FILE *f, int64_t v);
int xf_ckpt_get_i64(FILE *f, int64_t *v);

/* Checkpoint file: "XFPPOAGT" | u32 XF_PPO_CKPT_VERSION | u32 n |
 * n × u32 sizes | action ids (xf_actions_write) | u64 Adam step |
 * xf_nn_params stream with moments. xf_ppo_ckpt_open checks every size
 * against sizes[] (names[i] names size i in the XF_ERR_MISMATCH message),
 * reads the ids into act (unbound) and the Adam step, and leaves *f (to be
 * closed by the caller) at the store. */
#define XF_PPO_CKPT_VERSION 2u
xf_status xf_ppo_ckpt_save(const char *path, const int *sizes, int n, const xf_actions *act,
                           int64_t adam_step, const xf_nn_params *p, xf_error *err);
xf_status xf_ppo_ckpt_open(const char *path, const char *const *names, const int *sizes, int n,
                           xf_actions *act, int64_t *adam_step, FILE **f, xf_error *err);

/* dst (previous contents dropped) gets graphs[0..n) of src, in that order,
 * as a batch of its own (for encoding a minibatch of stored observations). */
xf_status xf_ppo_obs_gather(xf_gnn_batch *dst, const xf_gnn_batch *src, const int *graphs, int n,
                            xf_error *err);

#endif /* XF_AGENT_PPO_H */
