/*
 * env_internal.h — (private to agent/) what the search baselines need from
 * the environment beyond the public API: handing it a graph without a copy,
 * its rule set and the hash of its current graph; and, for benchmarks, the
 * time spent in each part of a step.
 */
#ifndef XF_AGENT_ENV_INTERNAL_H
#define XF_AGENT_ENV_INTERNAL_H

#include "agent/agent.h"

/* xf_env_set_graph that takes g over instead of copying it: *g is left
 * empty (xf_graph_init) on success and on failure. hash: g's
 * xf_graph_hash_mode(XF_HASH_IDENTITY) when the caller already has it (NULL: computed). */
xf_status xf_env_adopt_graph(xf_env *e, xf_graph *g, const uint64_t *hash, xf_error *err);
const xf_ruleset *xf_env_ruleset(const xf_env *e);
/* xf_graph_hash_mode(XF_HASH_IDENTITY) of the current graph. */
uint64_t xf_env_hash(const xf_env *e);

/* Seconds spent in each part of building states (create, reset, set_graph
 * and steps) since the environment was created, for benchmarks: applying
 * the rewrite, freeing the state before the previous one, indexing,
 * costing, matching and hashing the new graph. */
typedef struct xf_env_profile {
    double apply, release, index, cost, match, hash;
    int64_t loads; /* states built */
} xf_env_profile;
void xf_env_profile_get(const xf_env *e, xf_env_profile *p);

#endif /* XF_AGENT_ENV_INTERNAL_H */
