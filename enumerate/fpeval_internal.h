/*
 * fpeval_internal.h — private: operator semantics in the fingerprint field Z_p.
 * A field tensor is a shape plus uint64 elements in [0, p). Kernels assume
 * the shapes and parameters passed xf_op_infer (the caller infers first and
 * allocates the outputs); they never fail and never allocate.
 */
#ifndef XF_ENUMERATE_FPEVAL_INTERNAL_H
#define XF_ENUMERATE_FPEVAL_INTERNAL_H

#include "field_internal.h"

/* Keys of the pseudo-random functions, one per non-linear operator kind. */
typedef enum fp_key_kind {
    FPK_RELU, FPK_SIGMOID, FPK_TANH, FPK_ERF, FPK_GELU, FPK_EXP, FPK_SQRT, FPK_LOG, FPK_ABS,
    FPK_RSQRT, FPK_MAXPOOL, FPK_POW, FPK_COUNT
} fp_key_kind;

typedef struct fp_keys {
    uint64_t k[FPK_COUNT];
} fp_keys;

/* Keys of evaluation `which` (0: fingerprint, 1: confirmation) under `seed`. */
void en_fp_keys_make(fp_keys *k, uint64_t seed, int which);
/* Element i of graph input `input` in evaluation `which` under `seed`. */
void en_fp_input_fill(uint64_t seed, int which, int input, uint64_t *d, int64_t n);

typedef struct fp_tensor {
    xf_shape shape;
    uint64_t *d;
} fp_tensor;

/* Whether `op` has field semantics here. */
int en_fp_op_supported(xf_op op);
/* Largest pooling window (kh*kw) the kernels accept. */
#define FP_MAX_WINDOW 64
/* Largest tensor the kernels accept (config.max_numel at most). */
#define FP_MAX_NUMEL 4096
void en_fp_op_run(const fp_keys *k, xf_op op, const xf_params *p, int n_in, const fp_tensor *const *in,
               int n_out, fp_tensor *out);

/* 64-bit hash of a field tensor (shape and elements). */
uint64_t en_fp_tensor_hash(const fp_tensor *t);

#endif /* XF_ENUMERATE_FPEVAL_INTERNAL_H */
