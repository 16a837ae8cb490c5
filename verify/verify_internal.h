/*
 * verify_internal.h — private to verify/: the verifier's state shared by the
 * axiomatic prover (prove*.c, axioms*.c) and the bounded checker
 * (bounded*.c). One Z3 context per verifier; errors raised by Z3 are
 * recorded by the context's error handler (never exit) and read back with
 * vf_verifier_z3_error.
 */
#ifndef XF_VERIFY_VERIFY_INTERNAL_H
#define XF_VERIFY_VERIFY_INTERNAL_H

#include <z3.h>

#include "verify/verify.h"
#include "verify/patterns_internal.h"

/* The resource limit of one proof query under o: the smaller of rlimit and
 * proof_rlimit where both are set, else the one set; 0: none. */
unsigned vf_proof_rlimit(const xf_verify_options *o);
/* The options the verifier was created with. */
const xf_verify_options *vf_verifier_options(const xf_verifier *v);

/* The uninterpreted operator functions of the axiomatic encoding; their
 * SMT-LIB names and signatures are in axioms_load.c, their meaning in
 * docs/verify.md. Int parameters come first, tensors last. */
typedef enum xf_ax_fn {
    XF_AX_EWADD, XF_AX_EWMUL, XF_AX_SMUL, XF_AX_MATMUL,
    XF_AX_RELU, XF_AX_SIGMOID, XF_AX_TANH, XF_AX_GELU, XF_AX_ERF, XF_AX_EXP,
    XF_AX_TRANS, XF_AX_CONV, XF_AX_AVGPOOL, XF_AX_MAXPOOL,
    XF_AX_CONCAT, XF_AX_SLICE, XF_AX_ENLARGE,
    XF_AX_ICONV, XF_AX_IMAT, XF_AX_ONES, XF_AX_POOL, XF_AX_ZEROS,
    XF_AX_SOFTMAX, XF_AX_LAYERNORM, XF_AX_MEAN,
    XF_AX_LNORM, /* layer-norm with unit scale and no bias: (lnorm axis x) */
    XF_AX_ZT,  /* the zero tensor of a shape: (zt rank d0 .. d5), prove_zero.c */
    XF_AX_PSCALE, /* the scalar 1/(kh*kw) of a kh x kw average pooling: (pscale kh kw) */
    XF_AX_HW1, /* predicate: the tensor's last two axes have size 1 (a 1x1 kernel) */
    XF_AX_SCALAR, /* predicate: the tensor is a scalar (rank 0) */
    /* reshapes (prove_encode.c; sizes are ids of the rule's symbolic dims) */
    XF_AX_FLAT,   /* (flat x): the first two axes merged */
    XF_AX_UNFLAT, /* (unflat l x): the first axis made [l, rest] */
    XF_AX_HSPLIT, /* (hsplit h x): the last axis made [h, rest] */
    XF_AX_HMERGE, /* (hmerge x): the last two axes merged */
    XF_AX_VIEW,   /* (view s x): x's elements in row-major order as shape s */
    XF_AX_SHP,    /* (shp x): Int, the id of x's shape */
    XF_AX_RNK,    /* (rnk x): Int, x's rank */
    XF_AX_LASTD,  /* (lastd s): Int, the id of the last dim of shape s */
    XF_AX_POW,    /* (pow x e): an element-wise function of x and the scalar e */
    XF_AX_TSWAP,  /* (tswap k x): axes k and k+1 swapped, k <= -3 (a head transpose
                   * [B,S,h,d] -> [B,h,S,d] is k = -3; the last two are trans) */
    XF_AX_HNUM,   /* (hnum h): Int, head count id h's size at the rule's own shapes */
    XF_AX_FN_COUNT
} xf_ax_fn;

/* Parameter codes shared by the encoder and the axioms. */
enum { XF_AX_PAD_SAME = 0, XF_AX_PAD_VALID = 1, XF_AX_DEPTHWISE = -1 };

struct xf_verifier {
    xf_verify_options opt;
    Z3_context ctx;
    Z3_params params;      /* timeout, memory and seed for every solver */
    /* axiomatic encoding (prove*.c) */
    Z3_sort tensor;        /* the uninterpreted sort "T" */
    Z3_func_decl fns[XF_AX_FN_COUNT]; /* operator functions (axioms_load.c) */
    Z3_ast *axioms;        /* xf_verify_axiom_count() parsed formulas */
    Z3_ast *lits;          /* their assumption literals */
    unsigned char *enabled;
    Z3_solver prover;      /* holds `lit_i => axiom_i` for all i; queries push/pop */
    Z3_context bounded_ctx; /* a bounded check's context made ahead (bounded.c); NULL: none */
    int exiting;            /* a forked worker that exits after its rule (worker.c): a
                               bounded check leaves its context to the exit, as deleting
                               it was 6% of the workers' CPU */
    vf_patterns *patterns;  /* the bounded check's operator patterns: what the workers
                               forked from this verifier read (kept by vf_run_forks), and
                               in such a worker what it reads itself (bounded.c) */
};

/* Makes v's bounded-check context ahead (xf_verifier_prepare), for the
 * next bounded check of this process (or of each process forked after). */
xf_status vf_bounded_context_ahead(xf_verifier *v, xf_error *err);

/* Declares the sort and functions and parses every axiom (axioms_load.c). */
xf_status vf_axioms_load(xf_verifier *v, xf_error *err);

/* Solver with the verifier's params applied (reference taken: Z3_solver_dec_ref). */
Z3_solver vf_verifier_solver(xf_verifier *v);
/* 1 when the last Z3 call raised an error (the context's handler records
 * it instead of exiting); *err filled with `what` and Z3's message. */
int vf_verifier_z3_error(xf_verifier *v, const char *what, xf_error *err);

/* The class of a Z3 reason_unknown string ("max. resource limit exceeded",
 * "timeout", "canceled", "(incomplete quantifiers)"...); NULL: incomplete.
 * Z3 says "canceled" both for its timeout and for its resource limit, so
 * the caller tells whether the query spent its whole rlimit. */
xf_verify_why vf_why_of_reason(const char *reason, int rlimit_spent);
/* Z3's resource counter of context c (cumulative since the context was
 * made; read through solver s's statistics). 0 when unavailable. */
uint64_t vf_rlimit_count(Z3_context c, Z3_solver s);

#endif /* XF_VERIFY_VERIFY_INTERNAL_H */
