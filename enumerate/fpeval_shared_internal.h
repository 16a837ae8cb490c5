/*
 * fpeval_shared_internal.h — private to fpeval*.c: helpers shared by the element-wise
 * and the spatial halves of the Z_p operator semantics.
 */
#ifndef XF_ENUMERATE_FPEVAL_SHARED_INTERNAL_H
#define XF_ENUMERATE_FPEVAL_SHARED_INTERNAL_H

#include "fpeval_internal.h"

/* Applies a fused conv activation (xf_activation) in place, with the same
 * keys as the stand-alone operators, so conv+relu equals relu(conv). */
void en_fp_activation(const fp_keys *k, int act, uint64_t *d, int64_t n);
/* Strides of `in` broadcast to `out` (0 on broadcast dims). */
void en_fp_bcast_strides(const xf_shape *in, const xf_shape *out, int64_t *st);
/* y = x broadcast to y's shape. */
void en_fp_broadcast_copy(const fp_tensor *x, fp_tensor *y);
/* conv, pooling, enlarge, constants and data movement (fpeval_spatial.c). */
void en_fp_run_spatial(const fp_keys *k, xf_op op, const xf_params *p, int n_in,
                    const fp_tensor *const *in, int n_out, fp_tensor *out);

#endif /* XF_ENUMERATE_FPEVAL_SHARED_INTERNAL_H */
