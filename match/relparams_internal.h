/*
 * relparams_internal.h — (private to match/) operator parameters in a rank-relative
 * form, so a rule found on small tensors applies to larger or batched ones.
 *
 * Rules are enumerated at fixed ranks (2-D matrices, 4-D NCHW tensors). An
 * axis parameter means "the k-th dimension from the end" when the rule is
 * applied to tensors with more leading dimensions. The relative form makes
 * that explicit: axis and axes become negative (counted from the end, axes
 * sorted), a transpose permutation keeps only the trailing part it moves.
 * Two parameter sets match when their relative forms are byte-equal.
 *
 * Ops whose parameters describe whole shapes (reshape, expand, flatten,
 * slice, pad, constant_of_shape) are not rank-polymorphic: they match only at
 * the rank they were written for, with equal parameters. Constant generators
 * (const_iconv, const_imatrix, const_ones, const_pool) have no shape in the
 * relative form: the target's get theirs from the tensors they combine with
 * (instantiate.c), and a source generator's is checked against the one the
 * rule was proved with once the whole match is bound (match.c).
 */
#ifndef XF_MATCH_RELPARAMS_INTERNAL_H
#define XF_MATCH_RELPARAMS_INTERNAL_H

#include "ir/ir.h"

/* 1 when op may be applied at a rank other than the rule's. */
int match_relparams_rank_polymorphic(xf_op op);
/* 1 for the constant generator ops whose shape the matcher re-derives. */
int match_relparams_is_generator(xf_op op);
/* The rank an op's axis parameters refer to, given its first input's rank
 * (unsqueeze: the output rank). */
int match_relparams_axis_rank(xf_op op, const xf_params *p, int first_input_rank);
/* Relative form of p for op at axis rank `rank` (see match_relparams_axis_rank);
 * generators get their shape cleared. Returns 0 when an axis is out of range. */
int match_relparams_to_relative(xf_op op, const xf_params *p, int rank, xf_params *rel);
/* Absolute parameters at axis rank `rank` from a relative form; 0 when the
 * relative form needs more dimensions than rank has. */
int match_relparams_to_absolute(xf_op op, const xf_params *rel, int rank, xf_params *abs);

#endif /* XF_MATCH_RELPARAMS_INTERNAL_H */
