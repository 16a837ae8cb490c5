/*
 * broadcast_internal.h — private iterator over a numpy-broadcast output shape, shared
 * by the element-wise kernels (ops_binary.c) and the reductions (ops_norm.c).
 *
 * Each operand is aligned to the output from the right; a dimension where the
 * operand has size 1 gets stride 0. Size-1 output dims are dropped and
 * neighbouring dims whose strides chain for every operand are merged, so the
 * innermost dimension is as long as possible. A kernel then walks `rows`
 * rows of `inner` contiguous output elements; within a row operand k moves
 * by inner_stride[k] (0 or its real stride), and ir_bcast_next advances every
 * operand's row offset without any division.
 */
#ifndef XF_IR_BROADCAST_INTERNAL_H
#define XF_IR_BROADCAST_INTERNAL_H

#include "ir.h"

#define XF_BCAST_MAX_OPS 4

typedef struct xf_bcast {
    int rank; /* merged rank, >= 1 */
    int n_ops;
    int64_t dims[XF_MAX_DIMS];
    int64_t strides[XF_BCAST_MAX_OPS][XF_MAX_DIMS]; /* in elements; 0 where broadcast */
    int64_t inner;                                  /* dims[rank-1] */
    int64_t rows;                                   /* product of the other dims */
    int64_t inner_stride[XF_BCAST_MAX_OPS];         /* strides[k][rank-1] */
} xf_bcast;

typedef struct xf_bcast_iter {
    int64_t idx[XF_MAX_DIMS];
    int64_t off[XF_BCAST_MAX_OPS]; /* element offset of the current row per operand */
} xf_bcast_iter;

/* Plan iteration over `out` for n_ops operands whose shapes broadcast to it
 * (the caller has checked that, e.g. with xf_shape_broadcast). */
void ir_bcast_init(xf_bcast *b, const xf_shape *out, int n_ops, const xf_shape *ops);
/* Position the iterator on row 0. */
void ir_bcast_begin(const xf_bcast *b, xf_bcast_iter *it);
/* Advance to the next row. */
void ir_bcast_next(const xf_bcast *b, xf_bcast_iter *it);

#endif /* XF_IR_BROADCAST_INTERNAL_H */
