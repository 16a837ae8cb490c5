/*
 * env_internal.h — (private to agent/) what the search baselines need from
 * the environment beyond the public API: handing it a graph without a copy,
 * its rule set and the hash of its current graph.
 */
#ifndef XF_AGENT_ENV_INTERNAL_H
#define XF_AGENT_ENV_INTERNAL_H

#include "agent/agent.h"

/* xf_env_set_graph that takes g over instead of copying it: *g is left
 * empty (xf_graph_init) on success and on failure. */
xf_status xf_env_adopt_graph(xf_env *e, xf_graph *g, xf_error *err);
const xf_ruleset *xf_env_ruleset(const xf_env *e);
/* xf_agent_graph_hash of the current graph. */
uint64_t xf_env_hash(const xf_env *e);

#endif /* XF_AGENT_ENV_INTERNAL_H */
