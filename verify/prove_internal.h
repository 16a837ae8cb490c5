/*
 * prove_internal.h — private to the axiomatic prover: graph encoding shared by
 * prove.c, prove_encode.c and prove_zero.c.
 */
#ifndef XF_VERIFY_PROVE_INTERNAL_H
#define XF_VERIFY_PROVE_INTERNAL_H

#include "verify/verify_internal.h"

/* The sizes of a rule's reshapes as Int ids shared by both sides: each
 * distinct monomial of the rule's symbolic dims (xf_rule_dims) is one id,
 * each distinct shape (a tuple of monomials) another, so sizes that are
 * equal wherever the rule applies have one id, and an opaque dim an id of
 * its own. Ids are numerals, so different ids never make a guard true. */
#define XF_PROVE_MAX_IDS 256
typedef struct xf_prove_dims {
    const xf_rule_dims *dims; /* NULL: the rule has no reshape */
    int side;                 /* 0 source, 1 target: which side is being encoded */
    int n_mono, n_shape, n_fresh;
    xf_dimx mono[XF_PROVE_MAX_IDS];
    int shape_rank[XF_PROVE_MAX_IDS];
    int shape_mono[XF_PROVE_MAX_IDS][XF_MAX_DIMS];
} xf_prove_dims;

/* A fact true at the own size of some dims (a value whose last two axes
 * are 1x1 is its own transpose) stated under an assumption literal of its
 * own: the proof holds its dims only when an unsat core uses it. */
#define VF_MAX_GUARDS 64
typedef struct vf_guard {
    Z3_ast lit;
    int n;
    xf_rule_dim_size dim[2];
} vf_guard;

/* Where the encoding records the dims it reads at the rule's own size
 * (xf_proof.held): the proof holds only where they have it. */
typedef struct vf_held {
    xf_proof *proof; /* NULL: nothing recorded */
    int side;        /* 0 source, 1 target: the side being encoded */
    int n_guards;
    vf_guard guard[VF_MAX_GUARDS];
} vf_held;

/* The rule's dims as Int terms (xf_rule_forms): the encoding gives a
 * concat's, split's and slice's sizes, the zero tensors' shapes and the head
 * counts as these, not as their numbers at the rule's own shapes, so a proof
 * covers every size the rule's domain admits (the query assumes the domain's
 * conditions over them): slice[2:4](concat(a, b)) => b, true where a is 2
 * wide, is not proved for an `a` 3 wide that the domain admits. */
typedef struct vf_sizes {
    const xf_rule_forms *forms;
    Z3_ast *var; /* one Int constant per variable */
    int side;    /* 0 source, 1 target: the side being encoded */
} vf_sizes;

/* Form f as an Int term over the variables var (prove.c). */
Z3_ast vf_form_term(xf_verifier *v, Z3_ast const *var, const xf_dim_form *f);

/* Records dim `axis` of value `value` of g (h's side) at its size in g;
 * once, and past XF_VERIFY_MAX_HELD as held_all. prove.c. */
void vf_prove_hold(vf_held *h, const xf_graph *g, int value, int axis);
/* `fact`, true where dims axes[0..n) (n <= 2) of value `value` of g keep
 * their size, as "lit => fact" with a fresh literal the query assumes and
 * whose use in an unsat core holds those dims; past VF_MAX_GUARDS the fact
 * itself, its dims held at once. prove.c. */
Z3_ast vf_prove_guarded(xf_verifier *v, vf_held *h, const xf_graph *g, int value, const int *axes,
                        int n, Z3_ast fact);

/* Encodes g's outputs (g->n_outputs terms into outs). XF_ERR_UNSUPPORTED
 * names the node whose operator or parameters the axioms do not model.
 * Shape facts about g's values that the axioms cannot see (a tensor whose
 * last two axes have size 1 is its own transpose; every value's rank, and
 * with pd->dims its shape id and its shape's last dim) are conjoined to
 * *facts. pd (NULL: no reshapes) carries the ids across both sides; sizes
 * gives the dims' terms. */
xf_status vf_prove_encode(xf_verifier *v, const xf_graph *g, xf_prove_dims *pd, vf_held *held,
                          const vf_sizes *sizes, Z3_ast *outs, Z3_ast *facts, xf_error *err);

/* 1 when every output of node ni of g is the zero tensor whatever the
 * inputs, given which of g's values are (zero[value]); prove_zero.c. The
 * sizes it reads (normalised axes of one element, a one-element scale) go
 * to held. */
int vf_prove_zero_output(const xf_graph *g, int ni, const unsigned char *zero, vf_held *held);
/* 1 when `value` is a layer-norm without bias (or with a zero one) over
 * axis -1 alone with a one-element scale: its mean over axis -1 is 0. */
int vf_prove_centred_layernorm(const xf_graph *g, int value, const unsigned char *zero,
                               vf_held *held);

#endif /* XF_VERIFY_PROVE_INTERNAL_H */
