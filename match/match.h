/*
 * match.h — the rewriter (match/): proved rewrite rules compiled into
 * patterns, matched in a graph and applied. The one rule engine of rlflow:
 * the offline deriver (derive/) joins a candidate's sides with it and the
 * online searches (agent/search/) walk a model with it, so it sits below
 * both.
 *
 * Pieces, bottom up:
 *  - rule sets: the rules of a rules database (proved ones by default)
 *    compiled into match patterns;
 *  - matching: every location where a rule's source pattern occurs in a
 *    graph (op types, parameters with axes taken relative to the last
 *    dimensions, consistent input binding, no outside use of an internal
 *    value, no cycle after the rewrite, a target that passes shape
 *    inference at the bound shapes and yields the matched output shapes);
 *  - application: a (rule, location) pair turned into a new graph whose
 *    constants are shared with the old one (xf_graph_clone_shared), and a
 *    structural hash that identifies constants by identity, so a search can
 *    remember every graph it has seen cheaply;
 *  - view moves and their closure: the rules that only move a reshape or a
 *    slice, applied until none applies.
 * Preparing a model for rewriting and finishing it for export are the
 * agent's (agent/rewrite/rewrite.h); the numerical check of a rewritten
 * model against the original is the ir's (xf_interp_check).
 *
 * Depends on ir/ and rulesdb/ only.
 *
 * Ownership: every create/load has one matching free. Nothing here prints
 * to stdout or exits; fallible functions return an xf_status and fill an
 * optional xf_error.
 */
#ifndef XF_MATCH_H
#define XF_MATCH_H

#include <stdint.h>

#include "ir/ir.h"

/* Largest rule side the matcher handles (operators / rule inputs). */
#define XF_MATCH_MAX_NODES 8
#define XF_MATCH_MAX_INPUTS 16
#define XF_MATCH_MAX_OUTPUTS 4
#define XF_MATCH_MAX_ARITY 6 /* inputs of one operator (batch-norm has 5) */

/* ---------------------------------------------------------------- rule sets */

typedef struct xf_ruleset xf_ruleset;

typedef struct xf_ruleset_options {
    int status;          /* xf_rule_status code to load (default 1 = proved); -1: every
                            rule that is not refuted or pruned */
    int max_size;        /* skip rules with more operators on either side; 0: no bound */
    int64_t limit;       /* at most this many rules; 0: all */
    int both_directions; /* also add each rule's reverse (dst => src); default 1 */
    int derived;         /* with status proved: also the derived rules (each one chain
                            of proved rules, as one action: a macro-action); default 0 */
    int commutative;     /* match add, mul, min and max with their operands either way
                            round (default 1; the deriver, whose stored chains name
                            locations by their nodes alone, sets 0) */
    /* Keep only the actions that can ever match a graph reachable from this
     * one (NULL: no restriction, the default). Pass the graph that is
     * searched, i.e. the model after xf_agent_prepare. See
     * xf_ruleset_irrelevant. */
    const xf_graph *restrict_to;
    /* Scalings kept as exported (xf_prepare_options.scalar_mul 0): drop the
     * actions whose source multiplies by a scalar (scalar_mul, or an ewmul
     * with a rank-0 operand) unless they are view moves
     * (xf_rule_is_view_move, which counts the two as one operator), which
     * keep the product and only take a reshape or a slice past it. ONNX
     * Runtime fuses GELU's x0.5 where the exporter put it; a rule that
     * moves it into a weight defeats the fusion. Default 0. */
    int keep_scalings;
} xf_ruleset_options;

xf_ruleset_options xf_ruleset_options_default(void);

/* Loads rules from a rules database (rulesdb/) and compiles them. Rules the
 * matcher cannot use (a side larger than XF_MATCH_MAX_*, a source side with
 * no operator) are skipped and counted (xf_ruleset_skipped). An empty set is
 * not an error. */
xf_status xf_ruleset_load(const char *db_path, const xf_ruleset_options *opt, xf_ruleset **out,
                          xf_error *err);
/* Compiles rules given in memory (copied; ids[i] names rule i, ids may be
 * NULL for 1..n). opt->both_directions, max_size and restrict_to apply;
 * status/limit are ignored. */
xf_status xf_ruleset_from_rules(const xf_rule *rules, const int64_t *ids, int n,
                                const xf_ruleset_options *opt, xf_ruleset **out, xf_error *err);
void xf_ruleset_free(xf_ruleset *rs); /* NULL is a no-op */

/* Number of usable rules N (actions 0..N-1; N is the environment's no-op). */
int xf_ruleset_count(const xf_ruleset *rs);
/* Rules skipped at load, with the reason of the first one in *why (may be NULL). */
int xf_ruleset_skipped(const xf_ruleset *rs, const char **why);
/* Rules (or reverses) dropped at load because an earlier action compiles to
 * the same source pattern and target template: the same rule written at
 * other tensor shapes, e.g. ewadd(x0, x1) => ewadd(x1, x0) on 4-D
 * activations, on weights and on matrices. Not counted in the skipped ones. */
int xf_ruleset_duplicates(const xf_ruleset *rs);
/* The hash of rule r's compiled form (what xf_ruleset_duplicates compares,
 * hashed as the rule set does before comparing): equal for the same rule
 * written at other tensor shapes, so a rules database's shape variants of
 * one rule can be grouped before any is decided (derive/pipeline.c).
 * *usable 0 (and *h 0) when the matcher cannot use r; errors are running
 * out of memory only. Distinct forms may share a hash. */
xf_status xf_rule_form_hash(const xf_rule *r, uint64_t *h, int *usable, xf_error *err);
/* Actions dropped at load because they can never match a graph reachable
 * from opt->restrict_to (0 without a restriction). The set of reachable ops
 * starts as the ops of that graph; every action whose source ops all lie
 * in the set adds its target's ops, until nothing changes; actions whose
 * source uses an op outside the final set are dropped. This is exact in
 * the sense that no action that could match is removed: by induction, every
 * graph reachable by applying actions has only ops of the final set (an
 * applied action's source ops occur in the graph, so they are in the set,
 * and then so are its target's ops, the only new ops a rewrite brings),
 * and an operator of a pattern matches only a node of the same op. It is
 * not minimal: ops say nothing of parameters, arity or rank. Counted after
 * the duplicates, not among the skipped ones. */
int xf_ruleset_irrelevant(const xf_ruleset *rs);
/* The rule behind action i: its database id (negative for the reverse of
 * rule -id), the rule itself, and "src => dst" in infix form. */
int64_t xf_ruleset_rule_id(const xf_ruleset *rs, int i);
const xf_rule *xf_ruleset_rule(const xf_ruleset *rs, int i);
const char *xf_ruleset_text(const xf_ruleset *rs, int i);
/* 1 when action i only swaps operands of add, mul, min or max (its two
 * sides hash equal up to that order, XF_HASH_UNORDERED) and the set binds
 * those operators either way round (xf_ruleset_options.commutative): then
 * it lets no action match where none matched before and changes the cost
 * of nothing; all it changes is the operand order, which ONNX Runtime's
 * bias and SkipLayerNorm fusions read (docs/log/agent.md). 0 in a set
 * that matches operands in order, where a swap can enable a match. */
int xf_ruleset_swaps_only(const xf_ruleset *rs, int i);

/* ----------------------------------------------------------------- matching */

/* One location of a rule in a graph. */
typedef struct xf_match {
    int rule;                             /* action index in the rule set */
    int n_nodes;                          /* = source operators of the rule */
    int nodes[XF_MATCH_MAX_NODES];        /* graph node for each source node, in the
                                             rule's source node order */
    int n_inputs;                         /* = inputs of the rule */
    int inputs[XF_MATCH_MAX_INPUTS];      /* graph value bound to each rule input */
    int n_outputs;                        /* = outputs of the rule */
    int outputs[XF_MATCH_MAX_OUTPUTS];    /* graph value matched by each source output */
} xf_match;

/* Per-graph lookup tables (nodes by op, consumers of each value, which
 * values are graph outputs, which values are weight-only). Build once per
 * graph, use for every rule. */
typedef struct xf_graph_index xf_graph_index;
xf_status xf_graph_index_build(const xf_graph *g, xf_graph_index **out, xf_error *err);
void xf_graph_index_free(xf_graph_index *ix); /* NULL is a no-op */
/* 1 when value v is computed from constants only (initializers and
 * constant generators, no graph input, no opaque node on the way). */
int xf_graph_index_weight_only(const xf_graph_index *ix, int value);
/* The distinct nodes that read value v, ascending: *n of them at the
 * pointer returned (owned by ix). */
const int *xf_graph_index_users(const xf_graph_index *ix, int value, int *n);

/* Every valid location of rule `rule` in g, in a deterministic order (by the
 * graph node matched to the first source node, then the others). At most
 * `max` are written to out; *n_found is the full count (may exceed max). */
xf_status xf_match_rule(const xf_ruleset *rs, int rule, const xf_graph *g,
                        const xf_graph_index *ix, xf_match *out, int max, int *n_found,
                        xf_error *err);

/* All locations of all rules, capped per rule. */
typedef struct xf_match_list {
    int n_rules;
    int *start;    /* n_rules + 1 offsets into m: rule r's matches are m[start[r]..start[r+1]) */
    int *found;    /* n_rules: locations found before the cap */
    xf_match *m;
    int n, cap;
    /* Set after xf_match_list_init by a caller that only walks m[0..n) in
     * order (each names its rule): start and found are then not kept, and
     * xf_match_all costs nothing for the rules whose root operator the
     * graph lacks, however many the set has (the deriver's). */
    int flat;
} xf_match_list;

void xf_match_list_init(xf_match_list *l);
void xf_match_list_free(xf_match_list *l);
/* Fills l (previous contents replaced) with up to max_per_rule locations of
 * every rule (max_per_rule <= 0: no cap), rule by rule in the set's order. */
xf_status xf_match_all(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                       int max_per_rule, xf_match_list *l, xf_error *err);
/* xf_match_all with the rules whose target has more than max_growth
 * operators beyond their source left out before they are matched (no
 * location, found 0). A rewrite removes at most the operators it matched
 * (xf_match_apply), so each of theirs would make a graph of more than
 * g's operators plus max_growth: for a search that keeps graphs up to a
 * size (the deriver's), they are work for nothing. */
xf_status xf_match_all_within(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                              int max_per_rule, int max_growth, xf_match_list *l, xf_error *err);

/* -------------------------------------------------------------- application */

/* The target side of m's rule instantiated at the match: its operators with
 * parameters adapted to the bound shapes (split sizes, generator shapes,
 * depthwise groups), their inferred output shapes, and which of them are
 * weight-only. Used for costing a move without building the graph. */
typedef struct xf_match_target {
    int n_nodes;
    xf_op op[XF_MATCH_MAX_NODES];
    xf_params params[XF_MATCH_MAX_NODES];
    int n_in[XF_MATCH_MAX_NODES];
    xf_dtype in_dtype[XF_MATCH_MAX_NODES][XF_MATCH_MAX_ARITY];
    xf_shape in_shape[XF_MATCH_MAX_NODES][XF_MATCH_MAX_ARITY];
    int weight_only[XF_MATCH_MAX_NODES];
} xf_match_target;

/* Instantiates the rule's target at match m in g (fails with XF_ERR_SHAPE
 * when the target does not fit the bound shapes; xf_match_rule only returns
 * locations where it fits). */
xf_status xf_match_instantiate(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                               const xf_match *m, xf_match_target *t, xf_error *err);

/* Applies m to g: *out (initialised here) is g with the matched source
 * operators replaced by the instantiated target, uses of each matched output
 * redirected to the target's output, nodes no longer used removed, and
 * constants shared with g (g's data must outlive *out). The result is
 * validated (acyclic, shapes inferred); on failure *out is empty and g is
 * untouched. */
xf_status xf_match_apply(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                         const xf_match *m, xf_graph *out, xf_error *err);

/* xf_match_apply that also fills node_from (at least g->n_nodes +
 * XF_MATCH_MAX_NODES entries, NULL: not wanted): for every node of *out,
 * the node of g it is an unchanged copy of (same op, parameters, input
 * dtypes and shapes; its inputs may read a target output now, which has
 * the matched output's dtype and shape), or -1 for a target node. */
xf_status xf_match_apply_from(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                              const xf_match *m, xf_graph *out, int *node_from, xf_error *err);

/* xf_graph_index_build for a graph made by xf_match_apply_from from
 * prev's graph: node i with from[i] >= 0 takes its matching key over from
 * prev's node from[i] instead of recomputing it (keys depend only on op,
 * parameters, arity and the first input's shape). from NULL: build from
 * scratch. */
xf_status xf_graph_index_build_from(const xf_graph *g, const xf_graph_index *prev, const int *from,
                                    xf_graph_index **out, xf_error *err);

/* ------------------------------------------- view moves and their closure */

/* 1 when rule r is a view move (match/closure.c): it keeps its
 * other operators and moves a reshape that adds axes (unflatten, split of
 * the last axis, unsqueeze) toward the outputs, one that removes axes
 * (flatten, merge of the last two, squeeze) or a slice toward the inputs,
 * or cancels or merges reshapes. */
int xf_rule_is_view_move(const xf_rule *r);
/* 1 when either side of r has a reshape, flatten, squeeze, unsqueeze or
 * slice. */
int xf_rule_has_view_op(const xf_rule *r);

/* An action applied right to left where its target (a bare input) has no
 * operator to match: what logs and rule lists record for it (a value below
 * -1: XF_ACTION_BACKWARD(a) is -a - 2, so -1 stays "none"). */
#define XF_ACTION_BACKWARD(a) (-(a) - 2)
#define XF_ACTION_OF_BACKWARD(b) (-(b) - 2)

#define XF_CLOSURE_LOG 512
/* What xf_closure_run did: the actions applied, in order (the first
 * XF_CLOSURE_LOG of n; XF_ACTION_BACKWARD(a) for the cancellation a read
 * backwards), and the identical reshapes merged. */
typedef struct xf_closure_log {
    int n;
    int rule[XF_CLOSURE_LOG];
    int merged;
    /* The work it took: nodes the matcher tried as a move's first operator
     * (the wraps' look-ups not counted), and nodes copied (g's once, each
     * wrap tried twice). */
    int64_t roots, copied;
} xf_closure_log;

/* *out (initialised here; constants shared with g) is g after applying the
 * actions with moves[action] set (view moves), slices' first, one location
 * at a time, and merging reshapes of one value with equal parameters,
 * until none applies or max_steps moves were made. log may be NULL. */
xf_status xf_closure_run(const xf_ruleset *rs, const uint8_t *moves, const xf_graph *g,
                         int max_steps, xf_graph *out, xf_closure_log *log, xf_error *err);
/* The same with what the closure needs of rs and moves worked out once
 * (the view moves in both orders it looks them up in, the cancellation):
 * for a caller that runs many closures over one rule set (the searches'
 * look-ahead). The plan reads rs, which must outlive it. */
typedef struct xf_closure_plan xf_closure_plan;
xf_status xf_closure_plan_make(const xf_ruleset *rs, const uint8_t *moves, xf_closure_plan **out,
                               xf_error *err);
void xf_closure_plan_free(xf_closure_plan *p); /* NULL is a no-op */
xf_status xf_closure_run_plan(const xf_closure_plan *p, const xf_graph *g, int max_steps,
                              xf_graph *out, xf_closure_log *log, xf_error *err);

#endif /* XF_MATCH_H */
