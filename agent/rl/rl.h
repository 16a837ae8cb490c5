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

#endif /* XF_AGENT_RL_H */
