/*
 * domain_impl.h — (private to ir/) what the validity domain's language
 * (domain.c) shares with the symbolic shape rules of the operators
 * (domain_infer.c).
 */
#ifndef XF_IR_DOMAIN_IMPL_H
#define XF_IR_DOMAIN_IMPL_H

#include "ir.h"
#include "op_impl.h"

/* Sort key of a dim: by input, then axis (the lowest names a class). */
int64_t xfd_dim_key(xf_dim_ref r);
/* One condition in normal form: 1 trivially true, -1 never true, 0
 * otherwise, -2 on overflow (domain.c). */
int xfd_normalise_atom(xf_dom_atom *a);

#endif /* XF_IR_DOMAIN_IMPL_H */
