/*
 * search.h — the optimisation environment and the searches of the agent
 * (agent/search/): a gym-style C API over the rewrite engine
 * (agent/rewrite/rewrite.h) that costs every graph on a cost model, and the
 * search baselines that run on it (random, greedy, TASO's cost-bounded
 * backtracking search).
 *
 * Pieces:
 *  - cost of a working graph: the sum of its operators' costs on a cost
 *    model, where weight-only nodes cost nothing (they are folded at
 *    export), and a memo of operator costs over a whole run;
 *  - the environment: reset, step, peek, masks; the learning agents
 *    (agent/rl/rl.h) run on it too;
 *  - the searches, and the set of graph hashes they (and the agents) keep;
 *  - a model prepared one way, its rules, environment and search, kept
 *    together (xf_model_search), and the other preparation a target should
 *    also weigh (xf_prepare_alternative);
 *  - the outcome: the model a search's best graph becomes, never slower
 *    than the input as written, and its end-to-end latency;
 *  - the final arbiter: the cheapest candidates of one or several searches
 *    timed against the input in the target runtime (target/target.h), the
 *    fastest beyond the noise written, else the input.
 *
 * Ownership: every create/load has one matching free; graphs handed out by
 * the environment are owned by it and valid until its next step/reset.
 * Nothing here prints to stdout or exits; fallible functions return an
 * xf_status and fill an optional xf_error.
 */
#ifndef XF_AGENT_SEARCH_H
#define XF_AGENT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "agent/rewrite/rewrite.h"
#include "match/match.h"
#include "costmodel/costmodel.h"
#include "ir/ir.h"
#include "target/target.h"

/* ------------------------------------------------------------- graph costs */

/* Cost of a working graph: the sum over its nodes of xf_cost_node, except
 * weight-only nodes (folded at export), which cost nothing. `total` gets
 * ms, flops, bytes and kernels summed. */
xf_status xf_agent_graph_cost(xf_cost_model *cm, const xf_graph *g, const xf_graph_index *ix,
                              xf_op_cost *total, xf_error *err);

/* An in-memory memo of operator costs in front of the cost model, for the
 * environment, the searches and the agents. The cost model answers every
 * query from its SQLite cache (after one measurement), but a query still
 * builds a text key and runs a statement: microseconds per node, too slow
 * to re-cost a 1,000-node graph on every step. The memo keys a
 * configuration (op, parameters, input dtypes and shapes) by a 64-bit hash
 * of its bytes, confirms a hit by comparing the bytes, and asks the cost
 * model only on a miss. Opaque nodes and operators with more inputs than
 * the memo stores go to the cost model directly. */
typedef struct xf_costmemo xf_costmemo;

xf_status xf_costmemo_create(xf_cost_model *cm, xf_costmemo **out, xf_error *err);
void xf_costmemo_free(xf_costmemo *m); /* NULL is a no-op */

/* ONNX Runtime's layout costs, which the operator sum does not see and
 * which decide whether a model's [B, S, H] activations are cheaper as
 * [B*S, H] (ONNX Runtime 1.30, CPU, measured on the 2-core machine):
 *  - a reshape between two other operators costs a node: 32 of them between
 *    33 relus of [128, 256] added 0.19 us each (consecutive reshapes it
 *    merges into one);
 *  - a matmul of a 3-D input by a 2-D weight, which its MatMul+Add fusion
 *    wraps in a Reshape before and after and which keeps it from fusing
 *    what follows, costs as if its input and output were copied at 5 GB/s:
 *    modelzoo BERT (12 such matmuls) flattened to [B*S, H] ran 75 us faster
 *    at batch 1 (0.244 -> 0.169 ms, 32 KB in and out per matmul) and 271 us
 *    at batch 4 (0.889 -> 0.618 ms, 128 KB). */
#define XF_ORT_VIEW_MS 0.00019
#define XF_ORT_LAYOUT_GBPS 5.0
/* A reshape whose output is a graph output is a copy in ONNX Runtime (it
 * aliases its input only inside the graph): modelzoo GPT's LM head
 * flattened, the Reshape back to its [B, 32, 1000] output took 7 us at
 * batch 1 and 18 us at batch 4 (2 threads), others 3-4 us: its output's
 * bytes at about 32 GB/s beside the node. */
#define XF_ORT_OUTPUT_COPY_GBPS 32.0
/* Adds those costs to every cost the memo gives: view_ms per reshape,
 * flatten, squeeze and unsqueeze, and (in + out bytes) at gbps per matmul
 * of a 3-D or larger input by a 2-D weight. 0, 0 (the default): none.
 * The graph costs (xf_costmemo_graph) take the matmul's back where no add
 * alone reads its output (ONNX Runtime runs it unwrapped then) and add the
 * copy of a view that is a graph output (XF_ORT_OUTPUT_COPY_GBPS). With
 * them on, the kernel under those costs is the one ORT runs: a matmul of a
 * [.., M, K] input by a 2-D weight is priced as its [rows, K] form and an
 * element-wise operator without the leading unit dims of its highest-rank
 * operands, so [1, S, H] and [S, H] differ by the layout costs alone. */
void xf_costmemo_set_layout(xf_costmemo *m, double view_ms, double gbps);

/* 1 when the layout costs are on and (op, n_inputs, in_shapes) is a matmul
 * of a 3-D or larger input by a 2-D weight, whose layout cost depends on
 * its readers: a rewrite that makes one, or changes what reads one, is
 * priced on the graph after it (xf_env_peek). */
int xf_costmemo_wrapped_matmul(const xf_costmemo *m, xf_op op, int n_inputs,
                               const xf_shape *in_shapes);

/* 1 when a transpose of rank r >= 3 and parameters p has a permutation
 * ONNX Runtime 1.30 folds into the FusedMatMul that reads it: its
 * transBatch form (the first axis moved before the last, [1, .., r-2, 0,
 * r-1], e.g. [S,1,h,d] -> [1,h,S,d]) or that with the last two swapped as
 * well ([1, .., r-2, r-1, 0]: transBatch and transB). */
int xf_ort_folds_transpose(const xf_params *p, int r);

/* 1 when the look-ahead of the searches and the learning agents applies
 * rule as a view move (match/closure.c's xf_rule_is_view_move) after an
 * action: a view move that takes no transpose ONNX Runtime folds apart. */
int xf_rule_is_lookahead_move(const xf_rule *rule);

/* 1 when the ORT layout costs are on and a transpose (op, p, input rank)
 * has a permutation ONNX Runtime folds into a FusedMatMul reading it
 * (transBatch, with or without transB): its cost then depends on its
 * readers, so a graph holding one is costed whole (xf_costmemo_graph makes
 * it free where every reader is a MatMul of rank >= 3 operands). */
int xf_costmemo_may_fold(const xf_costmemo *m, xf_op op, const xf_params *p, int rank);

/* With the ORT layout costs on, marks in zone[g->n_nodes] (1 or 0) the
 * nodes where a rewrite may make or break a tanh GELU that
 * xf_costmemo_graph prices as one fused kernel: a whole chain's nodes and
 * their readers; around a tanh whose chain is not whole, every node within
 * 4 edges of it. Such a rewrite's cost
 * is not the sum of its nodes' (xf_env_peek costs the graph after it
 * whole). queue: g->n_nodes ints of scratch. Returns how many are marked
 * (0: none, or the layout costs are off). */
int xf_costmemo_gelu_zone(const xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                          uint8_t *zone, int *queue);

/* Cost of one configuration (xf_cost_op semantics). */
xf_status xf_costmemo_op(xf_costmemo *m, xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                         xf_error *err);
/* xf_agent_graph_cost through the memo; per_node (g->n_nodes entries, or
 * NULL) gets each node's cost, zero for weight-only nodes. */
xf_status xf_costmemo_graph(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                            xf_op_cost *per_node, xf_op_cost *total, xf_error *err);

/* xf_costmemo_graph for a graph made by xf_match_apply_from from pg (index
 * pix, per-node costs prev_cost): a node copied from pg's node from[i] that
 * was not weight-only there and is not now takes its cost over (the same
 * configuration costs the same); the others are costed. The total is
 * summed in node order as xf_costmemo_graph does, so both give the same
 * bits. */
xf_status xf_costmemo_graph_from(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                                 const xf_graph *pg, const xf_graph_index *pix,
                                 const xf_op_cost *prev_cost, const int *from,
                                 xf_op_cost *per_node, xf_op_cost *total, xf_error *err);

/* The fusion-aware cost of a working graph: the sum of its fused regions
 * (an anchor operator, MatMul/Gemm/Conv/pooling/Gather, with the
 * element-wise, normalisation and layout operators that follow it through
 * their first data input), each timed as a model of its own in the target
 * runtime with the runtime's graph optimisations on, so that what the
 * runtime fuses is costed fused (fused_cost.c). Opaque nodes take the
 * operator model's cost; weight-only nodes cost nothing. Regions are timed
 * once, remembered for the run and kept in the cost model's cache. */
typedef struct xf_fused_cost xf_fused_cost;

/* The fused regions of a working graph: an anchor operator (MatMul, Gemm,
 * Conv, pooling, Gather) and the element-wise, normalisation and layout
 * operators that hang off it through their first data input (bias add,
 * GELU, the residual add and the layer norm after it, ...); a non-anchor
 * node whose first data input is a graph input, or comes from a full
 * region, starts one of its own. The partition follows data, not node
 * numbering. Weight-only nodes belong to no region (they are folded into
 * initializers when the graph is written); opaque nodes are costed alone. */
/* region_of[node] for a node in no region: weight-only, folded at export. */
#define XF_REGION_FOLDED (-1)
/* ... for an opaque node: costed by the operator model, not measured. */
#define XF_REGION_OPAQUE (-2)

/* The partition of g: region_of (g->n_nodes entries) gets each node's region
 * in [0, *n_regions) or one of the marks above; `order` (g->n_nodes) gets a
 * topological order, in which every region's nodes are listed in order.
 * Regions hold at most max_nodes nodes (>= 1). */
xf_status xf_regions_partition(const xf_graph *g, const xf_graph_index *ix, int max_nodes,
                               int *region_of, int *order, int *n_regions, xf_error *err);

/* Region r of g as a graph of its own, ready to export: its external data
 * inputs become graph inputs (same dtypes and shapes), initializers it
 * reads are shared with g (borrowed, not copied), the weight-only nodes
 * that feed it are copied in (ONNX Runtime folds them, as the writer
 * would), and its outputs are the values used outside it or by g's
 * outputs. `escapes` (g->n_values) marks those values (xf_regions_escapes).
 * *out must be empty (xf_graph_init); it is left empty on failure. */
xf_status xf_regions_extract(const xf_graph *g, const xf_graph_index *ix, const int *region_of,
                             const int *order, const uint8_t *escapes, int r, xf_graph *out,
                             xf_error *err);

/* escapes[v] = 1 for every value produced in one region and read outside
 * it (by another region, an opaque node) or a graph output. */
void xf_regions_escapes(const xf_graph *g, const int *region_of, uint8_t *escapes);


typedef struct xf_fused_cost_options {
    int max_region_nodes; /* nodes per region at most (default 24) */
    int rounds;           /* timing rounds per region (default 7) */
    double round_ms;      /* a region's share of a round, ms (default 3); the
                             warm-up lasts 5 rounds' time */
    uint64_t seed;        /* inputs (default 1) */
} xf_fused_cost_options;

typedef struct xf_fused_cost_stats {
    int64_t lookups;    /* regions costed */
    int64_t measured;   /* of which timed in the target */
    int64_t from_cache; /* found in the cost model's cache */
    int64_t fallbacks;  /* the target could not run alone: operator model */
    double measure_s;   /* seconds spent timing */
    double overhead_ms; /* the per-run overhead subtracted from each region */
    char last_fallback[256]; /* why the last fallback happened ("" when none) */
} xf_fused_cost_stats;

xf_fused_cost_options xf_fused_cost_options_default(void);
/* t and cm must outlive the cost; o NULL: the defaults. Times a one-node
 * model once for the overhead. */
xf_status xf_fused_cost_create(xf_target *t, xf_cost_model *cm, const xf_fused_cost_options *o,
                               xf_fused_cost **out, xf_error *err);
void xf_fused_cost_free(xf_fused_cost *fc); /* NULL is a no-op */
/* *ms: the fusion-aware cost of g (ix: its index). */
xf_status xf_fused_cost_graph(xf_fused_cost *fc, const xf_graph *g, const xf_graph_index *ix,
                              double *ms, xf_error *err);
void xf_fused_cost_get_stats(const xf_fused_cost *fc, xf_fused_cost_stats *out);
/* From now on the memo's graph totals (xf_costmemo_graph, _graph_from) take
 * their ms from fc (not owned; NULL: back to the operator sum); per-node
 * costs stay the operator model's. */
void xf_costmemo_use_fused(xf_costmemo *m, xf_fused_cost *fc);

/* ------------------------------------------------------------- environment */

typedef struct xf_env xf_env;

typedef struct xf_env_options {
    int max_locations;     /* locations per rule in the masks (default 200) */
    int max_steps;         /* episode length before done (default 200) */
    double reward_runtime; /* α: weight of the relative cost decrease (default 1) */
    double reward_memory;  /* β: weight of the relative memory-access decrease (default 0) */
    double invalid_penalty; /* reward of an invalid action (default -1) */
    xf_prepare_options prepare; /* how the model is prepared (defaults) */
    /* Sparse reward from the target runtime (X-RLflow's scheme): every
     * target_every valid steps the current graph, finished as it would be
     * written, is timed in `target` (not owned; NULL: never), and the step's
     * reward gains reward_target·(last_ms − new_ms)/initial_ms·100, where
     * initial_ms is the prepared model's latency there and last_ms the
     * previous measurement of the episode. */
    xf_target *target;
    int target_every;      /* default 0: never */
    double reward_target;  /* default 1 */
    /* The fusion-aware cost (not owned; NULL: the operator sum): graph
     * costs, rewards and the searches' comparisons use it. */
    xf_fused_cost *fused;
    /* ONNX Runtime's layout costs (xf_costmemo_set_layout; default 0, 0:
     * none; rlflow-agent sets XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS with
     * --target ort). */
    double layout_view_ms, layout_gbps;
} xf_env_options;

xf_env_options xf_env_options_default(void);

/* Creates an environment over `model` (prepared with xf_agent_prepare
 * inside). rs, cm and model must outlive the environment. The initial graph
 * is costed and matched here. */
xf_status xf_env_create(const xf_ruleset *rs, xf_cost_model *cm, const xf_graph *model,
                        const xf_env_options *opt, xf_env **out, xf_error *err);
/* xf_env_create over a model already prepared with xf_agent_prepare (with
 * opt->prepare), e.g. the graph a rule set was restricted to: the
 * environment takes *prepared over (it is left empty, on success and on
 * failure) instead of preparing the model again. stats: what preparing
 * changed, as xf_env_prepare_stats reports it (NULL: nothing). The model
 * it was prepared from must outlive the environment (constants are shared). */
xf_status xf_env_create_prepared(const xf_ruleset *rs, xf_cost_model *cm, xf_graph *prepared,
                                 const xf_prepare_stats *stats, const xf_env_options *opt,
                                 xf_env **out, xf_error *err);
void xf_env_free(xf_env *e); /* NULL is a no-op */

/* Cost of any graph g as the environment costs its own graphs (the cost
 * memo, the layout term, the fusion-aware cost when set). */
xf_status xf_env_cost_graph(xf_env *e, const xf_graph *g, double *ms, xf_error *err);

/* Back to the prepared model (step count 0). */
xf_status xf_env_reset(xf_env *e, xf_error *err);
/* Replaces the current graph by a copy of g (a graph this environment
 * produced earlier, e.g. from a search's queue); recomputes cost and masks.
 * The step count is left as it is. */
xf_status xf_env_set_graph(xf_env *e, const xf_graph *g, xf_error *err);

typedef struct xf_env_step_result {
    double reward;
    int done;         /* no-op chosen, step limit reached, or no valid action left */
    int valid;        /* 0: the action was not in the masks (penalty, graph unchanged) */
    double cost_ms;   /* cost of the graph after the step */
    double bytes;     /* memory accesses of the graph after the step */
    uint64_t hash;    /* xf_graph_hash_mode(XF_HASH_IDENTITY) after the step */
    double target_ms; /* latency in the target measured after this step; 0: not measured */
} xf_env_step_result;

/* Applies (xfer, location); xfer == xf_env_num_xfers(e) is the no-op that
 * ends the episode. An invalid action (out of range or masked off) returns
 * XF_OK with valid = 0 and the penalty as reward: never a crash.
 * The reward of a valid step is in percent of the prepared model's cost:
 *   α·(prev_ms − new_ms)/initial_ms·100 + β·(prev_bytes − new_bytes)/initial_bytes·100
 * (α = reward_runtime, β = reward_memory); the no-op's is 0. A rewrite that
 * fails to apply is invalid too. Every call counts towards max_steps, valid
 * or not; steps after done still work (reset starts a new episode). Only
 * out-of-memory or a cost-cache I/O failure returns an error, and then the
 * environment keeps its previous state. */
xf_status xf_env_step(xf_env *e, int xfer, int location, xf_env_step_result *r, xf_error *err);

/* 1 when a failed peek, rewrite or step only means "this action does not
 * work here" (a search or an agent skips it), not that the machine is in
 * trouble (out of memory, I/O, a broken invariant). */
int xf_action_skippable(xf_status st);

/* Cost of the graph that (xfer, location) would produce, from the target's
 * instantiation alone (no graph built; where the rewrite's cost depends on
 * the nodes around it, a transpose ONNX Runtime may fold or a node near a
 * tanh GELU, the graph after it is built and costed whole). XF_ERR_INVALID
 * for a masked action.
 * = current cost + the target operators' costs (weight-only ones free) −
 * the matched source operators' costs; the no-op gives the current cost. */
xf_status xf_env_peek(xf_env *e, int xfer, int location, double *cost_ms, double *bytes,
                      xf_error *err);

int xf_env_num_xfers(const xf_env *e); /* N; the no-op is N */
/* N + 1 entries: 1 where the rule has at least one location (no-op: 1). */
const uint8_t *xf_env_xfer_mask(const xf_env *e);
/* Locations offered for xfer (<= max_locations; 0 for the no-op, which
 * takes any location). */
int xf_env_num_locations(const xf_env *e, int xfer);
const xf_match *xf_env_location(const xf_env *e, int xfer, int location);

const xf_graph *xf_env_graph(const xf_env *e);
/* What preparing the model (xf_agent_prepare) changed. */
const xf_prepare_stats *xf_env_prepare_stats(const xf_env *e);
const xf_graph_index *xf_env_index(const xf_env *e);
/* Cost of each node of the current graph (xf_env_graph(e)->n_nodes
 * entries; weight-only nodes cost 0), the terms xf_env_cost sums. */
const xf_op_cost *xf_env_node_costs(const xf_env *e);
/* The cost model the environment was created with. */
xf_cost_model *xf_env_cost_model(const xf_env *e);
double xf_env_cost(const xf_env *e);         /* current cost, ms */
double xf_env_initial_cost(const xf_env *e); /* cost of the prepared model, ms */
/* Latency of the prepared model in the options' target (0 without one). */
double xf_env_target_initial_ms(const xf_env *e);
int xf_env_steps(const xf_env *e);           /* steps taken this episode */

/* The rule set the environment was created with. */
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
    double target;          /* seconds timing graphs in the target (sparse reward) */
    int64_t target_runs;    /* graphs timed there, the prepared model included */
} xf_env_profile;
void xf_env_profile_get(const xf_env *e, xf_env_profile *p);

/* ------------------------------------------------------------- look-ahead */

/* The look-ahead through chains of view moves (lookahead.c), one for the
 * searches (xf_search_options.lookahead) and the learning agents (agent/rl:
 * their steps and the guided search's prices): an action whose rule has a
 * reshape or a slice is valued by the graph it leads to once the rule
 * set's view moves (xf_rule_is_lookahead_move) have been applied by the
 * closure (match.h) until none is left; an action whose rule makes a
 * transpose ONNX Runtime folds into its FusedMatMul (the unbatched heads)
 * by the graph it makes alone where that costs less (the moves may take
 * the views away from where the runtime folds the transpose). */
typedef struct xf_lookahead {
    /* per action: 0 no view; 1 its successor gets the closure; 2 the
     * closure, or the action alone where cheaper. NULL: no rule has a view
     * (nothing to look ahead through) */
    uint8_t *viewy;
    xf_closure_plan *plan; /* the closure's, made once from the moves */
} xf_lookahead;

/* Classifies the actions of rs (viewy and plan both NULL when no rule has
 * a view); xf_lookahead_free frees it (also after a failure). */
xf_status xf_lookahead_init(xf_lookahead *la, const xf_ruleset *rs, xf_error *err);
void xf_lookahead_free(xf_lookahead *la); /* back to empty; twice is a no-op */
/* 1 when action r's successor gets the closure. */
int xf_lookahead_applies(const xf_lookahead *la, int r);
/* Graph `one`, what action r (xf_lookahead_applies) made of e's current
 * graph, with its cost one_ms (< 0: not costed yet), taken on through the
 * closure: *out (initialised here; constants shared) the graph after the
 * moves and *ms its cost, log the moves made. When the closure changed
 * nothing, or r makes a folded transpose and `one` costs less than the
 * closure's graph, `one` stands: *out is left empty, *ms is one's cost and
 * log->n and log->merged are 0. */
xf_status xf_lookahead_close(const xf_lookahead *la, xf_env *e, int r, const xf_graph *one,
                             double one_ms, xf_graph *out, double *ms, xf_closure_log *log,
                             xf_error *err);
/* The price of action (r, l) on e's current graph with the look-ahead: for
 * an action the look-ahead applies to, the graph after it and the closure
 * (xf_lookahead_close; into *out when not NULL, constants shared, else
 * freed) and its cost; for any other, its cost by xf_env_peek (*out left
 * empty: the graph is not built). log (NULL: not wanted) gets the moves. */
xf_status xf_lookahead_price(const xf_lookahead *la, xf_env *e, int r, int l, xf_graph *out,
                             double *ms, xf_closure_log *log, xf_error *err);

/* ------------------------------------------------------------------ search */

typedef enum xf_search_kind {
    XF_SEARCH_RANDOM = 0, /* uniformly random valid actions, best graph kept */
    XF_SEARCH_GREEDY = 1, /* best immediate improvement until none */
    XF_SEARCH_TASO = 2,   /* TASO's cost-bounded backtracking search */
    XF_SEARCH_EXHAUSTIVE = 3, /* breadth-first over every rule application: every
                                 distinct graph within the bounds (the optimum
                                 under the rules when it completes) */
    XF_SEARCH_KIND_COUNT
} xf_search_kind;

const char *xf_search_kind_name(xf_search_kind k); /* "random", "greedy", "taso",
                                                      "exhaustive" */
xf_status xf_search_kind_parse(const char *name, xf_search_kind *out, xf_error *err);

typedef struct xf_search_options {
    double alpha;        /* TASO: keep graphs with cost < alpha * best (default 1.05) */
    int budget;          /* TASO, exhaustive: graphs expanded; random: steps over all
                            episodes; greedy: steps (default 1000) */
    double max_seconds;  /* wall-clock cap, 0: none (default 0) */
    double size_cap;     /* TASO, exhaustive: drop graphs with more than size_cap *
                            initial nodes (2.0) */
    int max_depth;       /* exhaustive: rule applications from the start at most
                            (default 0: no limit) */
    double cost_bound;   /* exhaustive: keep only graphs costing less than this, ms
                            (default 0: no bound); alpha x the start's cost gives
                            every graph a TASO search of that alpha could ever
                            queue, whatever its budget */
    int merge_swapped;   /* exhaustive: graphs equal up to the operand order of add,
                            mul, min and max (XF_HASH_IDENTITY_UNORDERED) are one
                            graph (default 0: the structural hash alone). Exact for
                            the optimum: the matcher binds those operators either way
                            round (xf_ruleset_options.commutative), so two such graphs
                            offer the same rewrites, with results again equal up to
                            operand order, and a cost model that prices an operator
                            by its operands' sizes prices them alike (the analytic
                            one; measured kernels may differ by noise). A rule set
                            with commutative 0 must not set it */
    uint64_t seed;       /* random search (default 1) */
    int max_locations;   /* locations per rule considered (default 200) */
    int candidates;      /* keep this many cheapest distinct graphs seen, the start
                            graph among them, for a final arbiter (default 0: none) */
    int lookahead;       /* taso, greedy: after an action whose rule has a reshape or
                            a slice, apply the rule set's view moves until none is
                            left (xf_closure_run) and cost that graph (default 1) */
    void (*progress)(void *user, int expanded, double best_ms, double initial_ms);
    void *progress_user; /* progress called about once a second when set */
} xf_search_options;

/* One of the cheapest distinct graphs a search saw (xf_search_options.
 * candidates), with the rules on the path to it. */
typedef struct xf_search_candidate {
    xf_graph g;     /* working graph; shares constants with the model */
    double ms;      /* its cost */
    int n_applied;  /* rules applied from the start graph, in order */
    int *applied;   /* action indices into the rule set */
} xf_search_candidate;

xf_search_options xf_search_options_default(void);

typedef struct xf_search_result {
    xf_graph best;       /* best working graph found (owned: xf_search_result_free) */
    double initial_ms, best_ms;
    int n_applied;       /* rules applied on the path to best, in order */
    int *applied;        /* action indices into the rule set */
    int64_t expanded;    /* graphs expanded (greedy: steps) */
    int64_t best_step;   /* expanded (the agents: real steps) when best was found */
    int64_t seen;        /* distinct graphs (hashes) seen */
    double seconds;      /* search wall time */
    int complete;        /* exhaustive: 1 when every graph within the bounds
                            (size_cap, cost_bound, max_depth) was expanded before
                            the budget or the time ran out: best is then the
                            cheapest graph the rules reach within them */
    int depth;           /* exhaustive: deepest level expanded */
    double unpolished_ms; /* the learning agents: best cost before their final greedy
                            polish (0: none ran; agent/rl's xf_agent_run_polish) */
    int polish_steps;    /* the polish's steps (its rewrites, besides the look-ahead's
                            moves after them) */
    double polish_seconds;
    int n_candidates;    /* the cheapest distinct graphs seen, cheapest first; */
    xf_search_candidate *candidates; /* the start graph is always one of them */
} xf_search_result;

void xf_search_result_init(xf_search_result *r);
void xf_search_result_free(xf_search_result *r);

/* Runs a search on the environment e, starting from its reset state. res
 * must have been initialised (xf_search_result_init); what it held is freed.
 * On return the environment holds the best graph (best_ms is its cost);
 * res->best and res->candidates share constants with the model and with
 * the environment's prepared graph: both must outlive them. */
xf_status xf_search_run(xf_env *e, xf_search_kind kind, const xf_search_options *opt,
                        xf_search_result *res, xf_error *err);

/* ------------------------------------------------- one preparation, searched */

/* A model prepared one way (xf_agent_prepare), the rules that can match it,
 * the environment over it and the result of a search on it, kept together:
 * the result's graphs borrow constants the environment's prepared graph
 * owns. A target runtime may run a model prepared another way faster (ONNX
 * Runtime fuses GELU's x0.5 and attention's 1/sqrt(d) only where the
 * exporter put them), so the arbiter can weigh the candidates of several. */
typedef struct xf_model_search {
    xf_prepare_options prepare; /* how the model was prepared */
    xf_prepare_stats prep;      /* what preparing changed */
    xf_graph prepared;          /* the prepared model, until the environment takes it */
    xf_ruleset *rs;             /* the rules (restricted to what can match it) */
    xf_env *env;
    xf_search_result res;       /* xf_search_run(env, ...) fills it */
    /* after xf_model_search_release_rules: each action's rule id, text and
     * whether it has a reshape or a slice */
    int n_actions;
    int64_t *action_id;
    char **action_text;
    unsigned char *action_view;
} xf_model_search;

void xf_model_search_init(xf_model_search *s);
void xf_model_search_free(xf_model_search *s); /* back to init's state */

/* Prepares model with *prepare (NULL: the defaults) into s->prepared
 * (s initialised, nothing loaded yet; on failure it is freed). */
xf_status xf_model_search_prepare(xf_model_search *s, const xf_graph *model,
                                  const xf_prepare_options *prepare, xf_error *err);

/* Loads the rules of the database at rules_db with *ro (NULL: the
 * defaults) into s->rs; restrict_rules: only the actions that can match the
 * prepared model (ro->restrict_to is set to it). rules_db NULL: an empty
 * rule set (a search then hands back the prepared model). On failure s is
 * freed. */
xf_status xf_model_search_rules(xf_model_search *s, const char *rules_db,
                                const xf_ruleset_options *ro, int restrict_rules, xf_error *err);

/* The environment over s's prepared model (taken over) on cm with *eo
 * (NULL: the defaults). model must outlive s (constants are shared). */
xf_status xf_model_search_env(xf_model_search *s, xf_cost_model *cm, const xf_env_options *eo,
                              xf_error *err);

/* Frees the rules once the search is over (a thousand compiled rules are
 * 80 MB, as much as a fifth of a BERT-base's weights, held while the target
 * times the candidates), keeping each action's rule id and text for the
 * report (xf_model_search_rule_id, _rule_text, _rule_has_view). The environment and the
 * result stay. */
xf_status xf_model_search_release_rules(xf_model_search *s, xf_error *err);
/* Action i's rule id and readable form, from the rules or what was kept. */
int64_t xf_model_search_rule_id(const xf_model_search *s, int i);
const char *xf_model_search_rule_text(const xf_model_search *s, int i);
/* Whether action i's rule has a reshape or a slice (xf_rule_has_view_op). */
int xf_model_search_rule_has_view(const xf_model_search *s, int i);

/* The other preparation a target should also see: when preparing with
 * *prepare made scalings scalar_mul (stats->scalar_muls > 0), *alt is
 * *prepare with them kept in place, and 1 is returned; else 0. Moving a
 * scaling into a weight saves a kernel but can defeat a runtime's GELU and
 * attention fusions; which pays differs per model and thread count
 * (docs/target.md), so it is for the target to measure. */
int xf_prepare_alternative(const xf_prepare_options *prepare, const xf_prepare_stats *stats,
                           xf_prepare_options *alt);

/* ---------------------------------------------------------------- outcome */

/* Cost of a whole model as written (xf_agent_graph_cost on its own index:
 * weight-only nodes free, as in the search). */
xf_status xf_agent_model_cost(xf_cost_model *cm, const xf_graph *g, double *ms, xf_error *err);

/* The model to hand out after a search, and what it costs. */
typedef struct xf_agent_outcome {
    double cost_before, cost_after; /* the models as written, on the cost model (ms) */
    int kept_original;              /* no cheaper model found: *out is the input */
    xf_finish_stats finish;         /* what finishing did (zero when kept_original) */
} xf_agent_outcome;

/* The search's best working graph `best` finished for export
 * (xf_agent_finish) into *out, unless the finished model does not cost less
 * than `model` as written (both costed like xf_agent_graph_cost): then *out
 * is `model` (its weights borrowed), because a slower model is never handed
 * out (the working graph can look cheaper while the model as written is
 * not, e.g. a bias add moved away from its conv cannot be fused back). *out
 * borrows weights from `best` and `model`: it must not outlive them. On
 * failure *out is empty and err's message starts with the step that
 * failed. */
xf_status xf_agent_outcome_model(xf_cost_model *cm, const xf_graph *model, const xf_graph *best,
                                 xf_graph *out, xf_agent_outcome *oc, xf_error *err);

/* End-to-end latency of models a and b on cm's backend (executor), timed
 * in alternation: the smallest of several 10-run medians of each. *spread
 * is the run-to-run noise seen: the larger of the two models' (largest
 * median - smallest) / smallest, as a fraction. */
xf_status xf_agent_latency_pair(xf_cost_model *cm, const xf_graph *a, const xf_graph *b,
                                double *ms_a, double *ms_b, double *spread, xf_error *err);

/* ---------------------------------------------------------------- arbiter */

/* The final arbiter in the target runtime (target/target.h): among the
 * candidates a search kept (xf_search_options.candidates), the model that
 * is fastest where it will run, or the input unchanged when none is faster
 * beyond the measured noise. */
typedef struct xf_arbiter_options {
    int max_models;    /* finished candidates timed besides the input, per search
                          (default 6); with unbatch each may bring its unbatched
                          variant too */
    uint64_t seed;     /* inputs of the numerical checks and of the timing (default 1) */
    double rtol, atol; /* interpreter check of each candidate (default 1e-3, 1e-4) */
    double target_rtol; /* outputs of the chosen model against the input's, both
                           run in the target (default 1e-4, relative to max |ref|) */
    xf_target_timing_options timing; /* zeroed: the target's defaults */
    int unbatch;       /* also time each candidate's unbatched layout (xf_agent_unbatch)
                          where it differs (default 1) */
    int close_rounds;  /* when no candidate beats the input in the run of all, the
                          fastest of those it could not tell from the input is timed
                          against the input alone with this many rounds, and its
                          confirming run too; a confirming run of the default length
                          that cannot tell is run again with this many (default 84,
                          four times the target's 21: an interval about half as wide;
                          0: neither) */
    int pairwise;      /* one candidate at a time against the input and its self
                          check (racing 1): -1 (default) when the target runs more
                          than one thread (at two threads on two cores long rounds
                          of many models disagree), 0 never, 1 always */
    int racing;        /* candidates timed at once besides the input and its self
                          check when not pairwise (default 1: a candidate's session
                          holds its own folded constants twice, a quarter of a
                          BERT-base's weights each time; 2 times more candidates
                          within a budget): the sessions alive are this plus two,
                          however many candidates there are */
    int finalists;     /* when the race finds two or more candidates faster, the
                          fastest this many by race ratio are timed again together
                          against the input (its file with input_file) and its self
                          check for close_rounds rounds (a final, shortened to fit the
                          budget and the memory limit): one whose interval lies wholly
                          above another finalist's leaves; of those left that are
                          faster beyond the noise, the cheapest by the cost model
                          among the fastest and those the final cannot tell from it
                          (xf_arbiter_pick) is written. The final is their confirming
                          run. Default 3 (0: the default; at most
                          XF_ARBITER_FINALISTS_MAX); 1: no final, the race's fastest is confirmed
                          alone (one of many noisy draws: the written model changed
                          from run to run) */
    int min_rounds;    /* rounds before a candidate's interval may decide (default 7);
                          it is timed until faster or slower beyond the noise, at most
                          timing.rounds (default 21) */
    double budget_s;   /* seconds the arbiter may take, weights shared, candidates
                          finished, raced and confirmed (0: no limit); candidates left
                          when it runs out are not timed (n_untimed), a closer look or
                          confirming run is shortened or skipped, and it is reported */
    double budget_max_s; /* when above budget_s (> 0): the budget grows to what
                          budget_models models take at the input's latency, at most
                          this (xf_arbiter_budget: at a BERT-base's 0.3 s a run, 90 s
                          raced 3 models and left its winner no confirming run);
                          0 (default): budget_s, fixed */
    int budget_models; /* models the grown budget races, each for timing.rounds, before
                          a confirming run and one of close_rounds (default 4: the start
                          graph and the search's cheapest, each in both layouts) */
    size_t mem_limit;  /* bytes the target's sessions may take besides rlflow's own
                          (0: xf_mem_limit()): fewer candidates are timed at once, one
                          whose session would not fit is not timed, and when the
                          input's two sessions do not fit the arbiter refuses */
    const char *input_file; /* the model file the input was read from, when it is what
                          is written if the input is kept (NULL: none): closer looks and
                          confirming runs time the winner against that file instead of
                          the input as exported, which onnxruntime may run at another
                          speed (an export whose reshape targets are constants lets it
                          fuse Add+LayerNormalization into its slower
                          SkipLayerNormalization), when the model's weights are at most
                          XF_ARBITER_FILE_MAX_BYTES (the file's two sessions do not share
                          the input's weights) */
} xf_arbiter_options;

/* The most finalists (xf_arbiter_options.finalists). */
#define XF_ARBITER_FINALISTS_MAX 8

/* Weights up to which the winner is confirmed against the input file. */
#define XF_ARBITER_FILE_MAX_BYTES ((uint64_t)64 << 20)

xf_arbiter_options xf_arbiter_options_default(void);

typedef enum xf_arbiter_verdict {
    XF_ARBITER_INPUT = 0,   /* the input model (entry 0) */
    XF_ARBITER_TIMED,       /* timed, not faster beyond the noise */
    XF_ARBITER_CHOSEN,      /* timed, fastest beyond the noise: written */
    XF_ARBITER_DUPLICATE,   /* finishes to a model already in the list, up to swapped
                               operands of add, mul, min and max (XF_HASH_UNORDERED) */
    XF_ARBITER_WRONG,       /* the interpreter check failed, or the target could not
                               run it: not timed */
    XF_ARBITER_TARGET_WRONG, /* runs in the target, but its outputs there differ from
                               the input's beyond target_rtol: not timed */
    XF_ARBITER_UNCONFIRMED, /* fastest, but not faster in the confirming run */
    XF_ARBITER_NOT_BUILT,   /* a layout variant that could not be made: not timed */
    XF_ARBITER_NOT_TIMED,   /* its session would not fit the memory limit: not timed */
    XF_ARBITER_NOT_WRITABLE, /* the target keeps symbolic dims (xf_target_keep_dims) and
                               the model cannot be written with them (a parameter that
                               cannot follow a symbol): not timed, never written */
    XF_ARBITER_RUNNER_UP    /* a finalist faster than the input in the final, not
                               written: another was faster beyond the noise, or as fast
                               within it and cheaper by the cost model */
} xf_arbiter_verdict;

typedef struct xf_arbiter_entry {
    int search;             /* which of the searches handed to the arbiter (0 for the input) */
    int candidate;          /* index into that search's candidates (a search that kept
                               none: 0 is its best graph); -1: the input */
    double cost_ms;         /* cost model, the model as written */
    int n_nodes;            /* nodes as written */
    xf_target_timing t;     /* in the target, against the input (when timed) */
    xf_target_timing confirm; /* the confirming run against the input alone, or the
                               final's timing of a finalist (CHOSEN, RUNNER_UP and
                               UNCONFIRMED entries; `final` says which) */
    int final;              /* 1: a finalist (confirm is from the final); 2: a finalist
                               that left the final, slower than another beyond the
                               noise (confirm over the rounds it ran) */
    xf_target_timing closer; /* the closer look against the input alone (runs 0:
                               none; see close_rounds) */
    xf_target_timing self;  /* the input's self check t was judged against: the run
                               of all's, or its own run's (pairwise) */
    double input_ms;        /* the input's median ms in the run that gave t */
    xf_arbiter_verdict verdict;
    int unbatched;          /* the candidate in its unbatched layout (xf_agent_unbatch) */
    int like;               /* a repeat: the entry of the first model offered with the same
                               nodes and cost as written (the same rewrites in other places
                               or orders), raced only after every distinct one and while a
                               full confirmation still fits; 0: none */
    int raced;              /* the order it joined the race in (1: first); 0: not raced */
    char why[256];          /* a dropped entry (WRONG, NOT_WRITABLE): which check
                               dropped it and what differs, with the figures (the
                               target's max |d| over the largest |output| against its
                               tolerance, or the interpreter's first differing output
                               and its max |d|), or the target's error ("" otherwise) */
} xf_arbiter_entry;

typedef struct xf_arbiter_result {
    int n;                  /* entries; entry 0 is the input */
    xf_arbiter_entry *e;
    int chosen;             /* entry written (0: the input, unchanged) */
    xf_target_timing self;  /* a second session of the input against the first (pairwise:
                               the widest of the candidates' runs) */
    double max_rel;         /* chosen vs input outputs in the target (0 when the input
                               is kept) */
    double seconds;         /* time the arbiter took */
    int pairwise;           /* one candidate was timed at a time */
    int racing;             /* candidates timed at once (sessions alive: this + 2) */
    int rounds;             /* rounds the input ran in the race */
    int n_untimed;          /* candidates not timed: the budget ran out (repeats included) */
    int budget_hit;         /* the budget cut racing, a closer look or a confirming run */
    double budget_s;        /* the budget (0: none): budget_max_s's growth included */
    double budget_given_s;  /* o->budget_s (budget_s differs when it grew) */
    double budget_share_ms; /* the input's share of a race round (its runs in one) the
                               budget was planned on (0: not planned, budget_s is
                               o->budget_s) */
    uint64_t shared_bytes;  /* the input's weights the sessions shared */
    double mem_estimate;    /* bytes the target's sessions were estimated to take at most */
    int against_file;       /* closer looks and confirming runs were against input_file */
    int finalists;          /* candidates in the final (0: none was run) */
    int final_rounds;       /* rounds the final ran */
    char refused[512];      /* why no candidate was timed at all ("" when some were) */
} xf_arbiter_result;

void xf_arbiter_result_free(xf_arbiter_result *r); /* zeroes it; NULL is a no-op */

/* The entry's name in reports: "input", "cand N" (candidate N of the first
 * search), "cand S:N" (of search S > 0), with " 2-D" for the unbatched
 * layout. */
void xf_arbiter_entry_name(const xf_arbiter_entry *e, char *buf, size_t n);

/* The choice among n models timed in one run against the same reference
 * (the arbiter's final): t[i] model i's timing, self[i] the self check
 * over its rounds, cost[i] its cost-model ms, eligible[i] 0 for a model
 * that may not be chosen (NULL: all may). Of the eligible models faster
 * beyond the noise (xf_target_verdict < 0), the one with the smallest
 * ratio and every one whose interval reaches down to its interval (the run
 * cannot tell them apart) are tied; the cheapest of those by cost is
 * chosen (equal costs: the smaller ratio, then the lower index), so that
 * which of near-equal models is written does not follow the noise. -1:
 * none is faster. */
int xf_arbiter_pick(const xf_target_timing *t, const xf_target_timing *self, const double *cost,
                    const int *eligible, int n);

/* The arbiter's budget, seconds, for a model whose input takes share_ms of
 * a race round (its runs in one round, measured: one run of a BERT-base,
 * about round_ms of runs of a small model) and whose sessions take load_s
 * to load and warm up,
 * spent_s already spent (sharing the weights, loading the input's two
 * sessions): o->budget_s when o->budget_max_s is not above it (or
 * budget_s is 0: no limit); else what the plan takes, within
 * [budget_s, budget_max_s]. The plan: budget_models models raced one at a
 * time, each joining then running timing.rounds rounds beside the input
 * and its self check, then a confirming run of the winner against the
 * input alone of timing.rounds and one of close_rounds (a run that cannot
 * tell is repeated longer; a closer look is as long), a round costing each
 * model share_ms (at least the target's round_ms). Small models keep
 * budget_s (their plan is under 30 s); a BERT-base at 0.3 s a run plans
 * about 200 s. */
double xf_arbiter_budget(const xf_arbiter_options *o, double share_ms, double load_s,
                         double spent_s);

/* Seconds the race keeps for after it before another candidate joins, for
 * a model whose input takes share_ms of a race round and whose sessions
 * take load_s to load, with n_faster candidates found faster so far: a
 * confirming run of timing.rounds (one more per candidate found faster,
 * up to two), or a final of timing.rounds when the next would make one.
 * With `full`, the confirmation in full: a run of timing.rounds and one
 * of close_rounds (or a final of close_rounds); the arbiter keeps that for
 * a repeat (xf_arbiter_entry.like) and for any model after the budget's
 * plan (budget_models raced). Why: at a BERT-base's size on a slower
 * machine, repeats of one model took the race's time and the winner's
 * confirming run was cut to what was left (2026-11-30, 21:07). */
double xf_arbiter_reserve(const xf_arbiter_options *o, double share_ms, double load_s,
                          int n_faster, int full);

/* Finishes the candidates of each of the n_searches searches of `model`
 * (srs[s]; per search cheapest first, at most o->max_models distinct models
 * whose outputs in the target equal the input's; a model another search
 * already brought is a duplicate; the start graph and the cheapest first,
 * then their unbatched variants; repeats, see xf_arbiter_entry.like, after
 * every distinct model) one at a time as they are needed, races
 * them against the input a few at a time in the target (the input's
 * weights shared by every session, xf_target_share_weights), and puts the
 * chosen model into *out: the one with the smallest latency ratio that is
 * faster beyond the noise (xf_target_verdict against the input's self
 * check over the same rounds; when none is, the fastest undecided one in a
 * longer run of it against the input alone, see close_rounds), that passes
 * the interpreter check, and is faster again in a second run against the
 * input alone (confirm; a longer one when that cannot tell, see
 * close_rounds); when two or more are faster, the leading ones run a final
 * together instead (see finalists) and xf_arbiter_pick chooses among
 * them; else model itself. Within o->budget_s and o->mem_limit
 * (see there; res says what they cut).
 * *out borrows its weights from model and the searches' candidates (it must
 * not outlive them). cm (may be NULL) fills cost_ms and tells repeats
 * (without it, none is a repeat). On failure *out
 * and *res are empty. */
xf_status xf_agent_arbitrate(xf_target *t, xf_cost_model *cm, const xf_graph *model,
                             const xf_search_result *const *srs, int n_searches,
                             const xf_arbiter_options *o, xf_graph *out, xf_arbiter_result *res,
                             xf_error *err);

/* ---------------------------------- shared by the searches and the agents */

/* Improvements smaller than this fraction of the initial cost are rounding
 * noise (a rewrite and its reverse cost the same), not progress: the
 * searches and the agents keep a new best graph only beyond it. */
#define XF_SEARCH_EPS 1e-9

#endif /* XF_AGENT_SEARCH_H */
