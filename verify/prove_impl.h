/*
 * prove_impl.h — private to the axiomatic prover: graph encoding shared by
 * prove.c, prove_encode.c and prove_zero.c.
 */
#ifndef XF_PROVE_IMPL_H
#define XF_PROVE_IMPL_H

#include "verify/verify_impl.h"

/* Encodes g's outputs (g->n_outputs terms into outs). XF_ERR_UNSUPPORTED
 * names the node whose operator or parameters the axioms do not model.
 * Shape facts about g's values that the axioms cannot see (a tensor whose
 * last two axes have size 1 is its own transpose) are conjoined to *facts. */
xf_status xf_prove_encode(xf_verifier *v, const xf_graph *g, Z3_ast *outs, Z3_ast *facts,
                          xf_error *err);

/* 1 when every output of node ni of g is the zero tensor whatever the
 * inputs, given which of g's values are (zero[value]); prove_zero.c. */
int xf_prove_zero_output(const xf_graph *g, int ni, const unsigned char *zero);
/* 1 when `value` is a layer-norm without bias (or with a zero one) over
 * axis -1 alone with a one-element scale: its mean over axis -1 is 0. */
int xf_prove_centred_layernorm(const xf_graph *g, int value, const unsigned char *zero);

#endif /* XF_PROVE_IMPL_H */
