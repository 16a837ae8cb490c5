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
#define SC_FAST_IDS 64
#define SC_VAR_WORDS_MAX (XF_ENUM_MAX_VOCAB / 64)
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
    /* For ids below SC_FAST_IDS, the variants of one and two inputs that
     * apply, as bitmasks over variants: one_masks[id0], two_masks[id0][id1]
     * (SC_VAR_WORDS words each), known once *_known is set. The inner loop
     * asks which variants apply to each pair of its parent's shapes. */
    uint64_t *one_masks, *two_masks;
    uint8_t *one_known, *two_known;
    uint64_t scratch[SC_VAR_WORDS_MAX]; /* the answer for larger ids */
} shapecache;

xf_status en_shapecache_init(shapecache *sc, const xf_enum_config *cfg, xf_error *err);
void en_shapecache_free(shapecache *sc);
/* Id of a shape; -1 when the table is full. */
int en_sc_intern(shapecache *sc, const xf_shape *s);
/* 1 when variant `var` applies to inputs with shape ids in_ids; then the
 * output shape ids are in out_ids. */
int en_sc_apply(shapecache *sc, int var, int n_in, const int *in_ids, int *n_out, int *out_ids);
/* Words of a variant mask: (cfg->n_ops + 63) / 64. */
int en_sc_var_words(const shapecache *sc);
/* Bitmask (en_sc_var_words words; bit v of word v / 64) of the variants of
 * n_in (1 or 2) inputs that apply to inputs with shape ids in_ids: those
 * for which en_sc_apply is 1. Valid until the next call. */
const uint64_t *en_sc_var_mask(shapecache *sc, int n_in, const int *in_ids);

#endif /* XF_ENUMERATE_SHAPECACHE_INTERNAL_H */
