/*
 * bounded_domain.c — when the exact element-wise check at a rule's own
 * input shapes is a proof of the rule at every shape it applies to.
 *
 * A rule is meant for every admissible assignment of its input dims
 * (docs/verify.md, "Which input shapes"); the exact check runs at a few of
 * them. Two kinds of input dim make the own shapes stand for all:
 *
 *   fixed    — tied (bounded_ties.c, strict) to a size set by the rule's
 *              parameters or constants: a kernel's spatial dims, an identity
 *              kernel's or a generator's shape, a mean's kept axis, and every
 *              dim an operator forces equal to one of these. It has that
 *              size wherever the rule applies.
 *   indexed  — in a class no operator on either side mixes (no sum, window,
 *              softmax, layer norm, concat or split along it; element-wise
 *              operands equal; only index-preserving ties such as a conv's
 *              batch axis to its result's, its weight's output channels to
 *              the result's channels, transposes), whose own size is at
 *              least the number k of axes of the class in any one value
 *              (a kernel convolved with itself as an image holds it twice:
 *              y[i][j] pairs the kernel's slices i and j).
 *
 * Argument. Take the indexed classes one at a time, the others' sizes
 * held. No operator sums or mixes along the class, so an element of any
 * value, at indices i_1..i_k along the class's axes, depends only on the
 * inputs' elements whose indices along the class are among i_1..i_k (and
 * on nothing that depends on other indices), and every operator treats
 * all indices alike: renaming the indices (a permutation) commutes with
 * both sides, and no parameter is derived from the class's size (split
 * halves and depthwise groups mix their axes, so they are not indexed).
 * So an output element at size m, with d <= k distinct indices, is the
 * output element at size n whose indices are renamed to 0..d-1, applied to
 * the inputs' elements renamed alike; d <= k <= n makes that an element of
 * the check at the own size, where the two sides are equal for all inputs.
 * Fixed dims never change. With every input dim fixed or indexed, the
 * exact check valid at the own shapes is valid at every admissible shape,
 * any size, not only 1..4.
 *
 * The exact check itself is over the reals with abstract functions for
 * exp, sqrt, gelu... (valid for any functions with the stated facts, so
 * for the real ones), the same semantics the axioms prove in: a valid
 * check on a closed domain is a proof in the axioms' sense.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <string.h>

xf_status xfb_domain_of(const xf_rule *r, xfb_domain *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    xfb_ties t;
    xf_status st = xfb_ties_build(r, 1, &t, err);
    if (st != XF_OK) return st;
    unsigned char *mixed = xf_calloc((size_t)t.n + 1, 1); /* per root */
    unsigned char *seen = xf_calloc((size_t)t.n + 1, 1);  /* per root: an indexed class counted */
    int *axes = xf_calloc((size_t)t.n + 1, sizeof *axes); /* per root: most axes in one value */
    int *here = xf_calloc((size_t)t.n + 1, sizeof *here); /* per root: axes in the value at hand */
    if (!mixed || !seen || !axes || !here) {
        xf_free(mixed);
        xf_free(seen);
        xf_free(axes);
        xf_free(here);
        xfb_ties_free(&t);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    }
    for (int i = 0; i < t.n; i++)
        if (t.mixing[i]) mixed[xfb_ties_find(&t, i)] = 1;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int v = 0; v < g->n_values; v++) {
            int rank = g->values[v].shape.rank;
            for (int d = 0; d < rank; d++) {
                int a = xfb_ties_find(&t, xfb_ties_slot(&t, k, v, d));
                if (++here[a] > axes[a]) axes[a] = here[a];
            }
            for (int d = 0; d < rank; d++) here[xfb_ties_find(&t, xfb_ties_slot(&t, k, v, d))] = 0;
        }
    }
    out->closed = 1;
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_value *in = &r->src.values[r->src.inputs[i]];
        for (int d = 0; d < in->shape.rank; d++) {
            int root = xfb_ties_find(&t, xfb_ties_slot(&t, 0, r->src.inputs[i], d));
            if (t.fixed[root]) {
                out->n_fixed++;
            } else if (!mixed[root] && in->shape.dims[d] >= axes[root]) {
                out->n_indexed++;
                out->n_classes += !seen[root];
                seen[root] = 1;
            } else if (out->closed) {
                out->closed = 0;
                if (mixed[root])
                    snprintf(out->why, sizeof out->why,
                             "dim %d of input %s takes other sizes where an operator mixes "
                             "along it",
                             d, in->name ? in->name : "?");
                else
                    snprintf(out->why, sizeof out->why,
                             "dim %d of input %s has size %lld, fewer than the %d axes one value "
                             "holds of it",
                             d, in->name ? in->name : "?", (long long)in->shape.dims[d],
                             axes[root]);
            }
        }
    }
    xf_free(mixed);
    xf_free(seen);
    xf_free(axes);
    xf_free(here);
    xfb_ties_free(&t);
    return XF_OK;
}
