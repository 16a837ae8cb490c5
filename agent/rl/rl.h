/*
 * rl.h — the learning agents of rlflow (agent/rl/): they learn, on the
 * environment of agent/search/search.h, which rewrite to apply next.
 *
 * The room's interface comes in three parts, each with its own header that
 * only this one includes (files outside agent/rl/ include rl.h):
 *  - gnn.h: the graph encoder, a graph-nets GNN that turns a working graph
 *    into a latent vector (features, forward, backward);
 *  - ppo.h: proximal policy optimisation (policy network, rollout buffer,
 *    GAE, clipped update), the compact action set, and the model-free
 *    agent that trains policy and encoder on the real environment;
 *  - wm.h: the MDN-RNN world model, the dream environment stepped on it,
 *    and the world-model agent whose PPO controller trains in the dream.
 * The agents are built from agent/nn/nn.h's layers and run on
 * agent/search/search.h's environment; nothing below agent/rl/ includes it.
 */
#ifndef XF_AGENT_RL_H
#define XF_AGENT_RL_H

#include "agent/rl/gnn.h"
#include "agent/rl/ppo.h"
#include "agent/rl/wm.h"

/* ------------------------------------------- a learning agent as one step
 *
 * The PPO agent or the world-model agent on env (learn.c): trained within
 * the budget, or loaded from o->load and run greedily (one episode); saved
 * to o->save when given. res (initialised) gets what a search would. */
typedef struct xf_rl_learn_options {
    int wm;              /* 1: the world-model agent; 0: the model-free PPO agent */
    xf_cost_model *cm;   /* the environment's cost model */
    int max_locations;   /* locations per rule (the environment's) */
    uint64_t seed;
    float tau;           /* wm: dream temperature */
    double max_seconds;  /* wall-clock budget (> 0) */
    int64_t max_env_steps; /* environment steps; <= 0: the agent's default */
    int no_lookahead;    /* 1: no view moves' closure after a step (agent_lookahead.c) */
    int no_self_imitation; /* 1: no self-imitation of the best episode (ppo: replayed,
                              agent_ppo.c; wm: its recorded steps in the dream's
                              updates, agent_wm.c) */
    int no_polish;       /* 1: training does not end with the greedy polish of the best
                            graph (xf_agent_run_polish) */
    float novelty;       /* ppo: reward bonus of a step to a graph not seen before (0) */
    const char *load, *save; /* checkpoints (NULL: none) */
    int samples;         /* with load: sampled episodes after the greedy one, the best
                            graph of all kept (0: the greedy episode only) */
    int guide;           /* with load, ppo: first a search the policy guides
                            (xf_ppo_agent_guide) over its `guide` most likely rules
                            at each step (0: none) */
    void (*ppo_progress)(void *user, const xf_ppo_progress *p);
    void (*wm_progress)(void *user, const xf_wm_progress *p);
    void *progress_user;
} xf_rl_learn_options;

typedef struct xf_rl_learned {
    int loaded;          /* o->load was run, not trained */
    int actions;         /* the agent's action set (M) */
    int unavailable;     /* loaded: of them, rules this model's rule set lacks (they
                            cannot match it) */
    int outside;         /* loaded: rules the model offers at its start that are not
                            among the agent's actions (not available to it) */
    int episodes;        /* loaded: episodes run (guided, greedy and sampled) */
    int guided;          /* loaded: the guided search ran (o->guide > 0, ppo) */
    double t0;           /* when the call began (xf_clock_now) */
    xf_wm_agent_stats wm; /* the world-model agent's training figures */
    int load_failed;     /* o->load could not be read: the error is the input's */
    int save_failed;     /* o->save could not be written (save_err says why); the
                            call itself succeeded */
    xf_error save_err;
} xf_rl_learned;

xf_status xf_rl_learn(xf_env *env, const xf_rl_learn_options *o, xf_search_result *res,
                      xf_rl_learned *out, xf_error *err);

/* ------------------------------------------- checkpoints before loading
 *
 * Which agent saved the checkpoint at path (*wm 1: the world-model agent,
 * 0: PPO) and its action set's rule ids into act (unbound; what it held
 * dropped), read from the header both formats share (ckpt_actions.c).
 * XF_ERR_IO / XF_ERR_PARSE naming the file and what is wrong with it. */
xf_status xf_rl_ckpt_actions(const char *path, int *wm, xf_actions *act, xf_error *err);

/* ------------------------------------------- one agent over many models
 *
 * Trains one agent over the environments envs[0..n) (one per model, each
 * with its own rule set restricted to its model) and saves it to o->save
 * (train_many.c): a random warm-up of warmup_steps steps on each model
 * counts the rules offered there by rule database id; the action set is the
 * union (the max_actions most offered ids, in id order, partial: a rule a
 * model's rule set lacks is unavailable on it); then slices of training,
 * each on one model (a pass visits every model once, in an order drawn
 * from the seed), until the budget is spent. The checkpoint loads on any
 * model with the same rules database (xf_rl_learn with load, or
 * rlflow-agent --load). */
typedef struct xf_rl_train_progress {
    const char *phase;   /* "warmup" or "train" */
    const char *model;   /* names[i] of the model trained on now */
    int model_index, n_models;
    int64_t passes;      /* passes over all models begun */
    int64_t steps;       /* real environment steps over all models */
    double seconds;      /* since the call began */
    double eta_seconds;  /* left by the nearer budget (-1: unknown) */
    double mean_gain;    /* mean over the models visited of the best cost change
                            found there (%, negative: cheaper) */
} xf_rl_train_progress;

typedef struct xf_rl_train_options {
    int wm;              /* 1: the world-model agent; 0: PPO (default) */
    xf_cost_model *cm;   /* the environments' cost model (GNN node costs) */
    int max_locations;   /* locations per rule (the environments') */
    uint64_t seed;
    float tau;           /* wm: dream temperature */
    double max_seconds;  /* wall-clock budget (> 0 or max_env_steps > 0) */
    int64_t max_env_steps; /* real steps over all models (<= 0: none) */
    int64_t slice_steps; /* PPO: steps on one model before the next (0: 600, an update and
                            a greedy episode); wm: one round per slice */
    int warmup_steps;    /* random steps per model for the action set (0: 200) */
    int max_actions;     /* cap of the union (0: XF_ACTIONS_CAP) */
    const char *save;    /* required */
    void (*progress)(void *user, const xf_rl_train_progress *p); /* about once a second */
    void *progress_user;
} xf_rl_train_options;

typedef struct xf_rl_train_stats {
    xf_actions act;      /* the agent's action set (ids; xf_actions_free it) */
    int64_t steps, passes, slices;
    double seconds;
    double *initial_ms, *best_ms; /* [n] per model: reset cost and the best seen */
    int *unavailable;    /* [n] per model: actions its rule set lacks */
} xf_rl_train_stats;

void xf_rl_train_stats_free(xf_rl_train_stats *s);
xf_status xf_rl_train_many(xf_env *const *envs, const char *const *names, int n,
                           const xf_rl_train_options *o, xf_rl_train_stats *out, xf_error *err);

#endif /* XF_AGENT_RL_H */
