/*
 * env_internal.h — (private to agent/search/) what the search baselines
 * need from the environment beyond the public API: handing it a graph
 * without a copy.
 */
#ifndef XF_AGENT_SEARCH_ENV_INTERNAL_H
#define XF_AGENT_SEARCH_ENV_INTERNAL_H

#include "agent/search/search.h"

/* xf_env_set_graph that takes g over instead of copying it: *g is left
 * empty (xf_graph_init) on success and on failure. hash: g's
 * xf_graph_hash_mode(XF_HASH_IDENTITY) when the caller already has it (NULL: computed). */
xf_status search_env_adopt_graph(xf_env *e, xf_graph *g, const uint64_t *hash, xf_error *err);

#endif /* XF_AGENT_SEARCH_ENV_INTERNAL_H */
