/*
 * broadcast.c — see broadcast_internal.h: plans a row-wise walk over a broadcast
 * output shape with merged dimensions and per-operand strides.
 */
#include "broadcast_internal.h"

#include <string.h>

void ir_bcast_init(xf_bcast *b, const xf_shape *out, int n_ops, const xf_shape *ops)
{
    memset(b, 0, sizeof *b);
    b->n_ops = n_ops;
    /* Aligned strides of every operand over the full output rank. */
    int64_t st[XF_BCAST_MAX_OPS][XF_MAX_DIMS];
    for (int k = 0; k < n_ops; k++) {
        int64_t s = 1;
        for (int i = out->rank - 1; i >= 0; i--) {
            int j = ops[k].rank - out->rank + i;
            int64_t d = j >= 0 ? ops[k].dims[j] : 1;
            st[k][i] = d == 1 ? 0 : s;
            s *= d;
        }
    }
    /* Keep dims of size != 1, merging a dim into the previous kept one when
     * every operand's strides chain across the boundary. */
    int r = 0;
    for (int i = 0; i < out->rank; i++) {
        int64_t d = out->dims[i];
        if (d == 1) continue;
        int merge = r > 0;
        for (int k = 0; k < n_ops && merge; k++)
            merge = b->strides[k][r - 1] == st[k][i] * d;
        if (merge) {
            b->dims[r - 1] *= d;
            for (int k = 0; k < n_ops; k++) b->strides[k][r - 1] = st[k][i];
        } else {
            b->dims[r] = d;
            for (int k = 0; k < n_ops; k++) b->strides[k][r] = st[k][i];
            r++;
        }
    }
    if (r == 0) { /* scalar output */
        b->dims[0] = 1;
        r = 1;
    }
    b->rank = r;
    b->inner = b->dims[r - 1];
    b->rows = 1;
    for (int i = 0; i < r - 1; i++) b->rows *= b->dims[i];
    for (int k = 0; k < n_ops; k++) b->inner_stride[k] = b->strides[k][r - 1];
}

void ir_bcast_begin(const xf_bcast *b, xf_bcast_iter *it)
{
    (void)b;
    memset(it, 0, sizeof *it);
}

void ir_bcast_next(const xf_bcast *b, xf_bcast_iter *it)
{
    for (int i = b->rank - 2; i >= 0; i--) {
        if (++it->idx[i] < b->dims[i]) {
            for (int k = 0; k < b->n_ops; k++) it->off[k] += b->strides[k][i];
            return;
        }
        it->idx[i] = 0;
        for (int k = 0; k < b->n_ops; k++) it->off[k] -= b->strides[k][i] * (b->dims[i] - 1);
    }
}
