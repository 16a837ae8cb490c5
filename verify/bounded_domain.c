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
 *              Also a class concats and equal splits move in whole blocks
 *              of one class B (bounded_ties_blocks.c): its index is
 *              (block, offset) and the argument below holds with B's
 *              offsets for indices, k counting the axes of every class of
 *              B's family in one value, n B's own size; so does the summed
 *              argument below, sums over the family counted as sums over B.
 *
 * Argument. Take the indexed classes one at a time, the others' sizes
 * held. No operator sums or mixes along the class, so an element of any
 * value, at indices i_1..i_k along the class's axes, depends only on the
 * inputs' elements whose indices along the class are among i_1..i_k (and
 * on nothing that depends on other indices), and every operator treats
 * all indices alike: renaming the indices (a permutation) commutes with
 * both sides, and no parameter is derived from the class's size (split
 * parts and depthwise groups mix their axes, so they are not indexed).
 * So an output element at size m, with d <= k distinct indices, is the
 * output element at size n whose indices are renamed to 0..d-1, applied to
 * the inputs' elements renamed alike; d <= k <= n makes that an element of
 * the check at the own size, where the two sides are equal for all inputs.
 * Fixed dims never change.
 *
 *   summed   — a class that products sum over (a matmul's inner dim, a
 *              convolution's input channels) and that nothing mixes
 *              otherwise, in a polynomial rule (sums, products, scalings,
 *              linear data movement and pooling: no ReLU, no division,
 *              no abstract function), whose own size n is at least k + s
 *              for every output: k the output's axes of the class, s the
 *              most sums over it in one product (a product of two sums
 *              counts both).
 *
 * Argument. Each output element is then a polynomial; every monomial of
 * it holds, for each summation index and each of the element's own
 * indices along the class, an input entry at that index (products keep
 * every factor's entries, sums over other axes and data movement keep the
 * indices, and nothing adds a constant to a value holding the class: an
 * element-wise operand of the same shape holds it too). So the monomials'
 * supports (their indices along the class) are exactly the element's
 * indices and the summation indices, at most k + s distinct ones; monomials
 * of different supports cannot cancel, and the part of an output element
 * with support S is, indices renamed, the part with a support of |S|
 * indices at any size >= |S|, the operators treating all indices alike.
 * The check at the own size n >= k + s found every such part equal on
 * both sides, so the polynomials are equal at every size, smaller or
 * larger. The classes extend one at a time, the others' sizes held.
 *
 * With every input dim fixed, indexed or summed, the exact check valid at
 * the own shapes is valid at every admissible shape, any size, not only
 * 1..4.
 *
 * The exact check itself is over the reals with abstract functions for
 * exp, sqrt, gelu... (valid for any functions with the stated facts, so
 * for the real ones), the same semantics the axioms prove in: a valid
 * check on a closed domain is a proof in the axioms' sense.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <string.h>

/* Is every node of g a polynomial map of its inputs (in the exact check's
 * elaboration: bounded_ops.c)? */
static int polynomial(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        switch (nd->op) {
        case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_SCALAR_MUL: case XF_OP_NEG:
        case XF_OP_IDENTITY: case XF_OP_DROPOUT: case XF_OP_MATMUL: case XF_OP_CONCAT:
        case XF_OP_SPLIT: case XF_OP_TRANSPOSE: case XF_OP_ENLARGE: case XF_OP_AVGPOOL:
        case XF_OP_GLOBAL_AVGPOOL: case XF_OP_REDUCE_MEAN: case XF_OP_CONSTANT_OF_SHAPE:
        case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
        case XF_OP_CONST_POOL:
            break;
        case XF_OP_CONV:
            if (nd->params.activation != XF_ACT_NONE) return 0;
            break;
        default:
            return 0;
        }
    }
    return 1;
}

/* The family of slot i: the plain class its class is made of blocks of. */
static int family(xfb_ties *t, int i)
{
    int root = vf_bounded_ties_find(t, i);
    return t->block_of[root] >= 0 ? t->block_of[root] : root;
}

/* Per class root that products sum over (summed[root]), the most distinct
 * indices along it in one monomial of an output element of side k: the
 * output's axes of the class plus the most sums over it in one product
 * (need[root], raised). s: scratch per value. */
static xf_status count_sums(xfb_ties *t, const unsigned char *summed, const xf_graph *g, int k,
                            int *need, int *s, xf_error *err)
{
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    xf_status st = xf_graph_topo_order(g, order, err);
    for (int root = 0; st == XF_OK && root < t->n; root++) {
        if (!summed[root]) continue;
        for (int v = 0; v < g->n_values; v++) s[v] = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[order[i]];
            int most = 0, all = 0;
            for (int j = 0; j < nd->n_inputs; j++) {
                int v = nd->inputs[j];
                if (v < 0) continue;
                most = s[v] > most ? s[v] : most;
                all += s[v];
            }
            int here = most;
            if (nd->op == XF_OP_MUL || nd->op == XF_OP_SCALAR_MUL) here = all;
            if (nd->op == XF_OP_MATMUL || nd->op == XF_OP_CONV) {
                int x = nd->inputs[0], d = nd->op == XF_OP_CONV ? 1 : g->values[x].shape.rank - 1;
                int a = d >= 0 ? vf_bounded_ties_slot(t, k, x, d) : -1;
                here = all + (a >= 0 && t->summed[a] && family(t, a) == root);
            }
            for (int o = 0; o < nd->n_outputs; o++) s[nd->outputs[o]] = here;
        }
        for (int o = 0; o < g->n_outputs; o++) {
            int v = g->outputs[o], n = s[v];
            for (int d = 0; d < g->values[v].shape.rank; d++)
                n += family(t, vf_bounded_ties_slot(t, k, v, d)) == root;
            need[root] = n > need[root] ? n : need[root];
        }
    }
    xf_free(order);
    return st;
}

/* What each class (by its root slot) is, for the classification below.
 * A class made of whole blocks of a plain class B (bounded_ties_blocks.c)
 * counts as B's family: its facts are B's. */
typedef struct classes {
    unsigned char *mixed;  /* an operator mixes along it, not as a sum */
    unsigned char *summed; /* a product sums over it */
    unsigned char *fixed;  /* it, or a class of its family, keeps the rule's size */
    unsigned char *seen;   /* counted in n_classes */
    int *axes;             /* most axes of it in one value */
    int *here;             /* scratch: axes of it in the value at hand */
    int *need;             /* summed: indices its own size must cover */
    int *scratch;          /* per value of a side (count_sums) */
} classes;

static void classes_free(classes *c)
{
    xf_free(c->mixed);
    xf_free(c->summed);
    xf_free(c->fixed);
    xf_free(c->seen);
    xf_free(c->axes);
    xf_free(c->here);
    xf_free(c->need);
    xf_free(c->scratch);
}

/* Fills c from the strict ties t of r; poly: r is polynomial. */
static xf_status classes_make(xfb_ties *t, const xf_rule *r, int poly, classes *c, xf_error *err)
{
    size_t n = (size_t)t->n + 1;
    int n_val = r->src.n_values > r->dst.n_values ? r->src.n_values : r->dst.n_values;
    c->mixed = xf_calloc(n, 1);
    c->summed = xf_calloc(n, 1);
    c->fixed = xf_calloc(n, 1);
    c->seen = xf_calloc(n, 1);
    c->axes = xf_calloc(n, sizeof *c->axes);
    c->here = xf_calloc(n, sizeof *c->here);
    c->need = xf_calloc(n, sizeof *c->need);
    c->scratch = xf_calloc((size_t)n_val + 1, sizeof *c->scratch);
    if (!c->mixed || !c->summed || !c->fixed || !c->seen || !c->axes || !c->here || !c->need ||
        !c->scratch)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    for (int i = 0; i < t->n; i++) {
        int root = vf_bounded_ties_find(t, i), f = family(t, i);
        c->mixed[f] |= t->mixing[i];
        c->summed[f] |= t->summed[i];
        c->fixed[f] |= t->fixed[root];
    }
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int v = 0; v < g->n_values; v++) {
            int rank = g->values[v].shape.rank;
            for (int d = 0; d < rank; d++) {
                int a = family(t, vf_bounded_ties_slot(t, k, v, d));
                if (++c->here[a] > c->axes[a]) c->axes[a] = c->here[a];
            }
            for (int d = 0; d < rank; d++) c->here[family(t, vf_bounded_ties_slot(t, k, v, d))] = 0;
        }
    }
    xf_status st = XF_OK;
    for (int k = 0; poly && st == XF_OK && k < 2; k++)
        st = count_sums(t, c->summed, k ? &r->dst : &r->src, k, c->need, c->scratch, err);
    return st;
}

/* Classifies input dim d of rule input `in` (class root) into out. */
static void classify(xfb_ties *t, classes *c, int poly, const xf_value *in, int d, int root,
                     xfb_domain *out)
{
    int f = t->block_of[root] >= 0 ? t->block_of[root] : root;
    int summed = c->summed[f];
    int64_t need = summed ? c->need[f] : c->axes[f];
    int64_t own = in->shape.dims[d] / t->blocks[root]; /* the size of one block */
    if (c->fixed[f]) {
        out->n_fixed++;
        return;
    }
    if (!c->mixed[f] && (!summed || poly) && own >= need) {
        if (summed) out->n_summed++;
        else out->n_indexed++;
        out->n_blocked += t->has_blocks[f];
        out->n_classes += !c->seen[f];
        c->seen[f] = 1;
        return;
    }
    if (!out->closed) return; /* the first dim that blocks it is named */
    out->closed = 0;
    const char *name = in->name ? in->name : "?";
    if (c->mixed[f])
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s takes other sizes where an operator mixes along it", d, name);
    else if (summed && !poly)
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s takes other sizes and is summed over in a rule that is not "
                 "polynomial",
                 d, name);
    else
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s has size %lld, fewer than the %lld its axes and sums in one "
                 "value need",
                 d, name, (long long)own, (long long)need);
}

xf_status vf_bounded_domain_of(const xf_rule *r, xfb_domain *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    xfb_ties t;
    xf_status st = vf_bounded_ties_build(r, 1, &t, err);
    if (st != XF_OK) return st;
    int poly = polynomial(&r->src) && polynomial(&r->dst);
    classes c;
    memset(&c, 0, sizeof c);
    st = classes_make(&t, r, poly, &c, err);
    out->closed = 1;
    for (int i = 0; st == XF_OK && i < r->src.n_inputs; i++) {
        const xf_value *in = &r->src.values[r->src.inputs[i]];
        for (int d = 0; d < in->shape.rank; d++)
            classify(&t, &c, poly, in, d, vf_bounded_ties_find(&t, vf_bounded_ties_slot(&t, 0, r->src.inputs[i], d)),
                     out);
    }
    if (st != XF_OK) out->closed = 0;
    classes_free(&c);
    vf_bounded_ties_free(&t);
    return st;
}
