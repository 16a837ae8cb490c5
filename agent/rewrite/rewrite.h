/*
 * rewrite.h — the agent's hand-written passes over a real model's graph
 * (agent/rewrite/): a model is prepared for rewriting with the proved rules
 * (conv bias split into a separate add so conv rules can match, decomposed
 * layer norms fused, scalings made scalar_mul, positions nobody reads not
 * computed, an even split's layout moved before it) and finished for
 * export (weight-only subgraphs a rule created are evaluated once and
 * become new initializers; conv + bias add fused back); a batch-1 layout
 * variant (unbatch) and one copy of a tied embedding.
 * The rules themselves are compiled, matched and applied by the rewriter
 * (match/match.h), which the deriver shares.
 *
 * The environment and searches (agent/search/search.h) and the learning
 * agents (agent/rl/rl.h) build on this room; it depends on match/, ir/ and
 * nothing else.
 *
 * Ownership: every create/load has one matching free. Nothing here prints
 * to stdout or exits; fallible functions return an xf_status and fill an
 * optional xf_error.
 */
#ifndef XF_AGENT_REWRITE_H
#define XF_AGENT_REWRITE_H

#include <stdint.h>

#include "ir/ir.h"

/* ---------------------------------------------------- preparation, finishing */

/* One copy of a tied embedding: a constant of at least 2^20 elements read
 * only as Gather tables along axis 0, whose transpose is also a constant
 * of g (GPT-2's token embedding and its LM head, folded by the importer),
 * is read through that transpose (Gather along axis 1, then a Transpose of
 * the rows gathered) and dropped, its memory freed. *n_dropped: constants
 * dropped. The function g computes is unchanged. */
xf_status xf_gather_tied(xf_graph *g, int *n_dropped, xf_error *err);

/* What xf_agent_prepare does beyond the conv-bias split (always done). */
typedef struct xf_prepare_options {
    int fuse_layernorm; /* decomposed layer norms -> layernorm (default 1) */
    int fuse_gelu;      /* x * 0.5 * (1 + erf(x / sqrt 2)) -> gelu (default 1) */
    int scalar_mul;     /* mul/div by a scalar constant -> scalar_mul (default 1) */
    int narrow;         /* positions nobody reads not computed (default 1) */
    int slice_selections; /* without narrow: a Gather of one position becomes
                             Reshape(Slice), the form the proved slice rules
                             move (default 0) */
    int split_layout;   /* parts of an even split taken to one layout before it (default 1) */
} xf_prepare_options;

xf_prepare_options xf_prepare_options_default(void);

/* What xf_agent_prepare changed. */
typedef struct xf_prepare_stats {
    int split_convs;      /* conv biases (and fused activations) split off */
    int fused_layernorms; /* decomposed layer norms made one layernorm node */
    int fused_gelus;      /* erf-form GELUs made one gelu node */
    int scalar_muls;      /* mul/div by a scalar constant made scalar_mul */
    int narrowed_selections; /* Gathers of one position moved up as slices */
    int narrowed_ops;        /* operators that now compute only the selected positions */
    int merged_split_layouts; /* splits whose parts' reshape + transpose now come before */
} xf_prepare_stats;

/* Copies `model` into a working graph for rewriting: conv nodes with a bias
 * become conv + add of the bias reshaped to [C,1,1] (so two-input conv rules
 * match); layer norms written out operator by operator (ReduceMean, Sub,
 * Pow, ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta over the last
 * axis) become one layernorm node, which the model written keeps (ONNX
 * LayerNormalization, opset 17); a mul or div by a float32 rank-0
 * constant becomes scalar_mul (by the reciprocal for a div), the form the
 * scalar rules are written for; last, a Gather of one position by a
 * constant index (a ViT's class token) becomes a slice that moves above
 * the row-wise operators feeding it (element-wise ops, matmul, layernorm,
 * softmax, transpose, reshape) while nothing else reads their outputs, so
 * the positions nobody reads are not computed (narrow.c); last, a split into
 * equal parts that are each reshaped and transposed alike (a GPT's merged
 * Q/K/V taken to heads) becomes one reshape and transpose of the merged
 * value and a split along a unit dim of the result (split_layout.c).
 * Everything else as is. Constants are shared with model. opt NULL: defaults; stats may be
 * NULL. */
xf_status xf_agent_prepare(const xf_graph *model, const xf_prepare_options *opt, xf_graph *out,
                           xf_prepare_stats *stats, xf_error *err);

typedef struct xf_finish_stats {
    int folded_nodes;   /* weight-only nodes evaluated into initializers */
    int fused_bias;     /* conv + bias add pairs fused back into conv */
    int removed_values; /* constants no longer used, dropped */
    int views_as_reshapes; /* squeezes/unsqueezes next to a view written as reshapes */
    int merged_views;   /* views merged into the view reading them (one reshape per run) */
    int gathers;        /* reshape(one-position slice) pairs written as one gather */
} xf_finish_stats;

/* Turns a working graph into an exportable model: every weight-only node
 * is evaluated once with the reference interpreter and replaced by a new
 * initializer (owned by *out), conv + constant bias add becomes a conv with
 * bias again, a squeeze or unsqueeze of static shape next to another view
 * becomes a reshape, a run of views becomes one reshape, a reshape that
 * drops the axis of a one-position slice becomes a gather, unused constants
 * are dropped. Opaque nodes pass through
 * untouched. Every other constant is borrowed from `work` (no copy of the
 * weights): *out must not outlive `work` nor what `work` borrows from.
 * stats may be NULL. */
xf_status xf_agent_finish(const xf_graph *work, xf_graph *out, xf_finish_stats *stats,
                          xf_error *err);

/* The same model with its batch-1 activations computed without their
 * leading unit dimension, where that saves Reshapes in a runtime that runs
 * matmuls on 2-D inputs (ONNX Runtime turns MatMul + Add on [1,S,H] into
 * Reshape, Gemm, Reshape): a layout variant for the arbiter to time, not a
 * rewrite every target gains from (agent/rewrite/unbatch.c). *out borrows
 * model's constants and may hold weight-only Reshapes of constants
 * (xf_agent_finish folds them); graph inputs and outputs keep their names
 * and shapes. *n_dropped: values that lost the dim (0: *out is model). */
xf_status xf_agent_unbatch(const xf_graph *model, xf_graph *out, int *n_dropped, xf_error *err);

#endif /* XF_AGENT_REWRITE_H */
