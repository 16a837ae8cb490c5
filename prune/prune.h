/*
 * prune.h — removes redundant candidate substitutions found by the
 * enumerator, so that the rules database holds each idea once.
 *
 * Input is an array of xf_rule (ir.h) whose graph inputs carry the names of
 * the enumerator's symbolic tensors (the same name means the same tensor
 * across rules). Four stages run in order, each on what the previous ones
 * kept, and each records for every rule it removes which rule (kept at that
 * point) makes it redundant and why:
 *
 *  1. renaming — a rule equal to an earlier one up to a renaming of its
 *     inputs (only between inputs of the same dtype and shape), a swap of
 *     source and target, or a reordering of its outputs.
 *  2. common subgraph (TASO) — source and target both contain the same
 *     operator (op and parameters) applied to the same graph inputs in the
 *     same order, or the same constant generator; that operator could be
 *     replaced by a fresh input, leaving a smaller rule.
 *  3. common supergraph (TASO) — some output is computed on both sides by
 *     the same operator whose arguments agree in all but at most one
 *     position, so the rule is that smaller rule (the differing arguments)
 *     with one more operator put on top.
 *  4. generality — the rule is an instance of a more general rule kept in
 *     this stage: substituting that rule's inputs by subexpressions (or
 *     merging two of them) gives this rule, up to swapping sides and
 *     reordering outputs. Most general rules (fewer operators, then more
 *     distinct inputs) are considered first.
 *
 * Before the stages, every rule is given a canonical input order (unless
 * turned off): inputs in order of first use (source outputs first, then
 * target; unused ones last), and within each group of same-typed inputs the
 * group's names handed out in that order (so x0 is used before x1).
 *
 * Stages 2 and 3 follow TASO's generator (a heuristic: like TASO they do not
 * check that the smaller rule holds); when the smaller rule is itself in the
 * input set, its index is recorded. Graphs are compared as expression trees
 * (a shared subexpression and two copies of it are the same).
 *
 * Output is deterministic: verdicts follow the input order, and the same
 * input gives the same verdicts and the same canonicalised rules.
 */
#ifndef XF_PRUNE_H
#define XF_PRUNE_H

#include <stddef.h>

#include "ir/ir.h"

typedef enum xf_prune_stage {
    XF_PRUNE_KEPT = 0,              /* survived every stage that ran */
    XF_PRUNE_RENAMING = 1,          /* duplicate up to input renaming */
    XF_PRUNE_COMMON_SUBGRAPH = 2,   /* both sides share an operator on the same inputs */
    XF_PRUNE_COMMON_SUPERGRAPH = 3, /* both sides end in the same operator */
    XF_PRUNE_GENERALITY = 4,        /* instance of a more general kept rule */
    XF_PRUNE_STAGE_COUNT
} xf_prune_stage;

/* "kept", "renaming", "common-subgraph", "common-supergraph", "generality". */
const char *xf_prune_stage_name(xf_prune_stage s);

/* What happened to one rule. */
typedef struct xf_prune_verdict {
    xf_prune_stage stage; /* XF_PRUNE_KEPT, or the stage that removed it */
    /* Index (into the input array) of the rule that makes this one
     * redundant, -1 when there is none in the set (stages 2 and 3 when the
     * smaller rule was not enumerated). The rule was kept when this one was
     * removed; a later stage may still remove it (follow the chain). */
    long by;
    /* One readable line, names as in the rules (owned: xf_prune_verdicts_free);
     * NULL when kept, or when the options turned reasons off. */
    char *why;
} xf_prune_verdict;

/* Frees the reasons of verdicts[0..n) (the array itself is the caller's). */
void xf_prune_verdicts_free(xf_prune_verdict *verdicts, size_t n);

struct xf_prune_progress;

typedef struct xf_prune_options {
    /* Bit (1u << stage) for each stage to run; default all four. */
    unsigned stages;
    /* Put every rule into canonical input order and rename its same-typed
     * inputs in order of first use (default 1). */
    int canonical_inputs;
    /* Write the reason of each removal into its verdict (default 1). Off, a
     * verdict is 24 bytes and nothing is formatted: what a caller that only
     * counts (xfergen without --keep-pruned, 2.5 M verdicts at four
     * operators) wants. */
    int reasons;
    /* Threads for the parallel parts of pruning (default 1): the canonical
     * forms, the TASO stages' checks and generality's search among the
     * rules kept before the current batch; the verdicts and stats do not
     * depend on it. The rules are fed to prune's view of them on a helper
     * thread whatever this is. */
    int threads;
    /* Called on the calling thread at the start of each step of pruning
     * (done 0) and then about every progress_every_s seconds (default 1);
     * NULL: none. */
    void (*on_progress)(void *user, const struct xf_prune_progress *p);
    void *progress_user;
    double progress_every_s;
} xf_prune_options;

/* What the progress callback sees. */
typedef struct xf_prune_progress {
    /* "terms" (the rules' term views), "canonical forms", "common subgraph",
     * "common supergraph", "generality" */
    const char *step;
    size_t done, total; /* rules of this step */
    double per_s;       /* rules per second in this step so far (0: unknown) */
    double eta_s;       /* of this step; < 0 when unknown */
    double elapsed_s;   /* since pruning started */
} xf_prune_progress;

xf_prune_options xf_prune_options_default(void);

#define XF_PRUNE_ALL_STAGES                                                              \
    ((1u << XF_PRUNE_RENAMING) | (1u << XF_PRUNE_COMMON_SUBGRAPH) |                      \
     (1u << XF_PRUNE_COMMON_SUPERGRAPH) | (1u << XF_PRUNE_GENERALITY))

typedef struct xf_prune_stats {
    size_t in;                               /* rules given */
    size_t removed[XF_PRUNE_STAGE_COUNT];    /* per stage; [XF_PRUNE_KEPT] unused (0) */
    size_t left[XF_PRUNE_STAGE_COUNT];       /* rules left after each stage ([0]: in) */
    double seconds[XF_PRUNE_STAGE_COUNT];    /* wall time per stage ([0]: preparation) */
    size_t kept;                             /* rules left at the end */
} xf_prune_stats;

/* Runs the selected stages over rules[0..n). verdicts (n entries) is filled
 * for every rule (free with xf_prune_verdicts_free, also on failure); stats
 * (may be NULL) gets the counts. With
 * canonical_inputs, rules are modified in place (input order and names;
 * nodes and values are untouched otherwise). Every rule must pass
 * xf_rule_validate (XF_ERR_INVALID naming the first that does not).
 * opt NULL: defaults. */
xf_status xf_prune_run(xf_rule *rules, size_t n, const xf_prune_options *opt,
                       xf_prune_verdict *verdicts, xf_prune_stats *stats, xf_error *err);

/* For rule sets too large to hold as xf_rule values (an xf_rule of a few
 * operators takes kilobytes; prune's own view of it about a hundred bytes):
 * `get` feeds rule i, its source to `src` and its target to `dst` (ir.h,
 * xf_graph_sink; xf_graph_feed feeds an xf_graph, and a serialized graph
 * is fed without building one: xf_rulesdb_graph_decode). Prune infers the
 * output types, checks that the sides agree as xf_rule_validate does, and
 * takes the input names from the source. Rules are fetched a batch ahead
 * of building prune's view of them: with one thread
 * (xf_prune_options.threads), `get` is called from a helper thread of
 * prune's, one call at a time, in index order; with more, from several
 * threads at once (the calling one among them), each rule once, so it must
 * be thread-safe and not depend on the calling thread. With
 * canonical_inputs, prune puts its view in canonical input order; apply
 * xf_prune_canonical_inputs to the rules you store. Same verdicts and
 * stats as xf_prune_run on the same rules. */
typedef xf_status (*xf_prune_get_fn)(void *user, size_t i, const xf_graph_sink *src,
                                      const xf_graph_sink *dst, xf_error *err);
xf_status xf_prune_run_from(size_t n, xf_prune_get_fn get, void *user,
                            const xf_prune_options *opt, xf_prune_verdict *verdicts,
                            xf_prune_stats *stats, xf_error *err);

/* Puts one rule into canonical input order with canonical names (the
 * preparation described above); deterministic, idempotent. */
xf_status xf_prune_canonical_inputs(xf_rule *r, xf_error *err);

#endif /* XF_PRUNE_H */
