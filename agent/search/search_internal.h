/*
 * search_internal.h — (private to agent/search/) pieces the search baselines
 * share: the trail of applied rules (parent links, so the path to the best
 * graph can be read back), the wall clock with the progress callback, and
 * the best graph kept so far.
 */
#ifndef XF_AGENT_SEARCH_SEARCH_INTERNAL_H
#define XF_AGENT_SEARCH_SEARCH_INTERNAL_H

#include "agent/search/env_internal.h"

/* Trail entries: entry i was reached from entry parent[i] by rule[i]; entry
 * 0 is the start (parent -1). */
typedef struct xf_search_trail {
    int n, cap;
    int *parent, *rule;
} xf_search_trail;

void search_trail_init(xf_search_trail *t);
void search_trail_free(xf_search_trail *t);
/* Appends an entry; returns its index in *idx. */
xf_status search_trail_add(xf_search_trail *t, int parent, int rule, int *idx,
                              xf_error *err);

/* What every search run carries: the environment, the options, the result
 * being filled, the clock and the best graph's trail entry. */
typedef struct xf_search_ctx {
    xf_env *env;
    xf_search_options opt;
    xf_search_result *res;
    xf_search_trail trail;
    xf_htab seen; /* graph hashes (xf_htab_key) seen */
    int best_entry; /* trail entry of res->best */
    int *cand_entry; /* trail entry of each of res->candidates */
    uint64_t *cand_hash; /* and its XF_HASH_IDENTITY_UNORDERED hash */
    double t0, last_progress;
    /* the look-ahead (search.h); empty when opt.lookahead is off or no
     * rule has a view */
    xf_lookahead la;
} xf_search_ctx;

/* Trail entries from `parent`: r, then each move of log (NULL: none); the
 * last one in *entry. */
xf_status search_trail_add_moves(xf_search_ctx *c, int parent, int r, const xf_closure_log *log,
                                    int *entry, xf_error *err);

/* 1 when max_seconds has passed. */
int search_out_of_time(const xf_search_ctx *c);
/* Calls the progress callback when a second has passed since the last call. */
void search_tick(xf_search_ctx *c);
/* Makes a shared copy of g the best graph (cost ms, reached by trail entry). */
xf_status search_keep_best(xf_search_ctx *c, const xf_graph *g, double ms, int entry,
                              xf_error *err);

/* The key of graph g (identity: its XF_HASH_IDENTITY hash) in the seen
 * set: that hash, or with opt.merge_swapped its XF_HASH_IDENTITY_UNORDERED
 * one. */
xf_status search_seen_key(const xf_search_ctx *c, const xf_graph *g, uint64_t identity,
                          uint64_t *key, xf_error *err);
/* Offers a graph the search has just seen for the first time (cost ms,
 * trail entry) to the candidates kept for the arbiter (opt.candidates
 * cheapest distinct up to swapped operands, the start graph pinned);
 * copies it when kept. */
xf_status search_offer(xf_search_ctx *c, const xf_graph *g, double ms, int entry,
                          xf_error *err);
/* A successor s (cost ms) of trail entry `parent` by action r (and the
 * view moves of `moved`, NULL: none) that TASO's and the exhaustive search
 * found: when it has at most max_nodes nodes and its structural hash
 * (*hash) is new, *added = 1, it goes on the trail (*entry), becomes the
 * best graph when cheaper and is offered to the candidates. */
xf_status search_admit(xf_search_ctx *c, const xf_graph *s, double ms, double max_nodes, int parent,
                       int r, const xf_closure_log *moved, int *added, int *entry, uint64_t *hash,
                       xf_error *err);
/* The expansion step TASO's and the exhaustive search share: the successor
 * of the environment's current graph (trail entry `parent`) by action
 * (r, l), after the view moves it enables when `look` and r looks ahead
 * (xf_lookahead_applies), else by the rule alone (priced by xf_env_peek
 * before it is built). When it costs less than `bound` (*ms) and
 * search_admit takes it (*added = 1), it is in *s (the caller's), on the
 * trail (*entry) with its hash in *hash; otherwise *added = 0 and nothing
 * is left to free. An action that does not work here is skipped (XF_OK,
 * *added = 0); only errors that are not xf_action_skippable are returned. */
xf_status search_child(xf_search_ctx *c, int r, int l, int look, double bound, double max_nodes,
                       int parent, xf_graph *s, double *ms, int *entry, uint64_t *hash,
                       int *added, xf_error *err);
/* Gives each kept candidate the rules on its path; frees the bookkeeping. */
xf_status search_candidates_finish(xf_search_ctx *c, xf_error *err);
void search_candidates_free(xf_search_result *res);

/* The rules from the start to trail entry `entry`, in order, into a new
 * array (*applied, *n; NULL and 0 for the start). */
xf_status search_trail_path(const xf_search_trail *t, int entry, int **applied, int *n,
                               xf_error *err);

/* Locations of rule r the search considers (at most opt.max_locations). */
int search_locations(const xf_search_ctx *c, int r);

xf_status search_random(xf_search_ctx *c, xf_error *err);
xf_status search_greedy(xf_search_ctx *c, xf_error *err);
xf_status search_taso(xf_search_ctx *c, xf_error *err);
xf_status search_exhaustive(xf_search_ctx *c, xf_error *err);

#endif /* XF_AGENT_SEARCH_SEARCH_INTERNAL_H */
