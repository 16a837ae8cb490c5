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
    const char *load, *save; /* checkpoints (NULL: none) */
    void (*ppo_progress)(void *user, const xf_ppo_progress *p);
    void (*wm_progress)(void *user, const xf_wm_progress *p);
    void *progress_user;
} xf_rl_learn_options;

typedef struct xf_rl_learned {
    int loaded;          /* o->load was run, not trained */
    int actions;         /* the agent's action set (M) */
    xf_wm_agent_stats wm; /* the world-model agent's training figures */
    int load_failed;     /* o->load could not be read: the error is the input's */
    int save_failed;     /* o->save could not be written (save_err says why); the
                            call itself succeeded */
    xf_error save_err;
} xf_rl_learned;

xf_status xf_rl_learn(xf_env *env, const xf_rl_learn_options *o, xf_search_result *res,
                      xf_rl_learned *out, xf_error *err);

#endif /* XF_AGENT_RL_H */
