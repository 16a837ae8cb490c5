/*
 * shapecache_internal.h — private: per-worker memo of "does variant v apply to
 * inputs of these shapes, and what comes out". Shapes are interned to small
 * ids; the memo is keyed by (variant, input shape ids). Shape inference
 * through the operator table formats messages and is far too slow for the
 * inner loop, where the same question is asked millions of times.
 */
#ifndef XF_ENUMERATE_SHAPECACHE_INTERNAL_H
#define XF_ENUMERATE_SHAPECACHE_INTERNAL_H

#include "enumerate_internal.h"

#define SC_MAX_SHAPES 4096
#define SC_MEMO_MAX (1u << 15) /* answers kept before the memo is cleared */

typedef struct shapecache {
    const xf_enum_config *cfg;
    xf_shape shapes[SC_MAX_SHAPES];
    uint64_t shape_hash[SC_MAX_SHAPES];
    int n_shapes;
    xf_htab index; /* shape hash -> shape id */
    xf_htab memo;  /* (variant, input ids) hash -> valid | n_out << 8 | out ids << 16, 32 */
    /* In front of memo, for input ids below SC_FAST_IDS: a direct table
     * [variant][id0][id1] of known | valid << 1 | n_out << 2 | out ids (12 bits) << 4, 16
     * (0: not asked yet), because the inner loop asks millions of times. */
    uint32_t *fast;
} shapecache;

#define SC_FAST_IDS 64

xf_status en_shapecache_init(shapecache *sc, const xf_enum_config *cfg, xf_error *err);
void en_shapecache_free(shapecache *sc);
/* Id of a shape; -1 when the table is full. */
int en_sc_intern(shapecache *sc, const xf_shape *s);
/* 1 when variant `var` applies to inputs with shape ids in_ids; then the
 * output shape ids are in out_ids. */
int en_sc_apply(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out, int *out_ids);

#endif /* XF_ENUMERATE_SHAPECACHE_INTERNAL_H */
