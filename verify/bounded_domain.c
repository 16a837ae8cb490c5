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
 *              operands equal, or one of rank 0, a scalar used whole at
 *              every index; only index-preserving ties such as a conv's
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
 *              Also a class joined with others by a concat ("a concat of
 *              classes": the axis of concat(a, b), a layout of parts in
 *              bounded_ties_blocks.c): the axis itself and every part are
 *              indexed (or a part fixed) and each part's class is held by
 *              an input; k of a part counts, in one value, its own axes
 *              and the axes of every layout it is a part of. The axis is
 *              then no class of its own: its index is (part q, offset t)
 *              with t an index of part q's class, so renaming one class's
 *              indices renames the offsets of its parts alike, and the
 *              argument below holds class by class with offsets for
 *              indices. A sum over the axis is a sum over each part that
 *              is not fixed (the part-q terms hold an entry at offset t of
 *              part q, the others none of its class), so the summed
 *              argument below holds for a part with s counting such a sum
 *              as one over it, and a non-polynomial operator reading a
 *              value holding the axis as reading each part. A layout whose
 *              parts are all fixed is fixed. It combines with a reshape's
 *              merged axis (bounded_ties_views.c) only where no class of
 *              the layout is a kept reshape's whole or part
 *              (layout_meets_view).
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
 * element-wise operand of the same shape holds it too, and a rank-0 one
 * multiplied keeps the other's entry; a convolution's bias adds one along
 * its batch axis and a rank-0 operand added or subtracted along every
 * axis of the value, so a class so held is not summed this way: biased,
 * also where it is a part of a layout so held, and the sum of m copies of
 * it is m times it). So the monomials'
 * supports (their indices along the class) are exactly the element's
 * indices and the summation indices, at most k + s distinct ones; monomials
 * of different supports cannot cancel, and the part of an output element
 * with support S is, indices renamed, the part with a support of |S|
 * indices at any size >= |S|, the operators treating all indices alike.
 * The check at the own size n >= k + s found every such part equal on
 * both sides, so the polynomials are equal at every size, smaller or
 * larger. The classes extend one at a time, the others' sizes held.
 *
 *   summed before non-polynomial operators ("after their sums") — a
 *              class summed as above (nothing else mixes it, own size
 *              n >= k + s, s counting the sums inside the arguments of
 *              non-polynomial operators too) in a rule that is not
 *              polynomial, where no non-polynomial operator reads a value
 *              holding the class (relu(a b) over a's rows and b's columns:
 *              it reads whole sums over the inner dim). Either
 *              (a) none reads a value computed from an input holding the
 *              class (a softmax, or a layer norm with eps > 0, over axes
 *              of one element each of fixed classes does not read its
 *              data input: it is ones, or its bias, at every size;
 *              constant_norm): the exact check at the own shapes
 *              suffices; or
 *              (b) some does, every non-polynomial operator is an
 *              element-wise function (relu, a convolution's activation,
 *              sigmoid, tanh, erf, gelu, exp, log, sqrt: NP_ABSTRACT), and
 *              the exact check at the own shapes is valid once more with
 *              every ReLU an abstract function (abstract: bounded.c,
 *              check_abstract).
 *
 * Argument, (a). The non-polynomial nodes' values are then functions of
 * the inputs without the class, the same at every size of it. With those
 * inputs (and the abstract functions) fixed, each output element is a
 * polynomial in the entries of the inputs holding the class, with those
 * values as coefficients: the argument for summed classes holds as it
 * stands (its parts by support are what zeroing the entries at other
 * indices leaves, and zeroing leaves the coefficients alone).
 *
 * Argument, (b). Valid for every function in place of each abstract one
 * means the two sides are one term up to the ring laws and "equal
 * arguments, equal values" (take the inputs and the functions' values at
 * distinct arguments algebraically independent): their normal forms, each
 * non-polynomial node an atom f(argument), are identical. Write an output
 * element at size m as a polynomial in the input entries and the atoms.
 * The atoms read values without the class, so there is one per node and
 * element at every size, and two are one atom exactly when their functions
 * and arguments' forms are. The arguments hold the class only through whole
 * sums; by this argument one level down (induction on the nesting of
 * non-polynomial nodes), arguments of one form at size n, each needing at
 * most s <= n distinct indices, have one form at every size m. So, the
 * atoms named as at size n, the rule cut at the non-polynomial nodes (their
 * results become inputs without the class: a polynomial rule) carries the
 * identity from n to m by the argument for summed classes; naming them as
 * at size m only makes more atoms one, which keeps an identity. The two
 * sides then have one form at every size: equal for every function, the
 * real ReLU among them. The ReLU as an ite is not enough:
 * relu((sum_j a_j b_j)^2 - 2 sum_j a_j^2 b_j^2) is 0 while j takes two
 * values (Cauchy-Schwarz) and not at three, though n = 2 = k + s.
 * A non-polynomial operator that reads a value holding the class sees its
 * terms one by one (sum_j relu(a_j b_j) is relu(sum_j a_j b_j) at one j):
 * the class blocks, as it does beside softmax, a norm, max-pool or pow in
 * case (b), whose checks use more than "any function" (abstract_only).
 * The arguments carry "valid for every function in place of each
 * abstract one" from size to size as they carry "valid": the one for
 * indices, with or without blocks, renames indices, which commutes with
 * any element-wise function, and the one above does too; the classes
 * extend one at a time, each step keeping it. So (b) combines with fixed
 * dims, indices and whole blocks (a summed class of blocks counted as
 * sums over B, as above), which need no shape but the own ones, where
 * the check with abstract ReLUs ran. It does not combine with the sizes
 * near the ends or the cases of batch dims (bounded_cases.c): their
 * shapes are checked with real ReLUs only, and extending the summed class
 * there would need the check with abstract ones at each of them.
 * A slice of constant positions moves data (NP_NONE); along a summed
 * class it reads the class near its start and blocks it.
 *
 *   near the ends — a plain class X (no block form, not summed, mixed by
 *              nothing else) that only stride-1, dilation-1 windows whose
 *              pads add up to the
 *              kernel less one (conv, average and max pool: output j reads
 *              input j - lo .. j + hi, padding outside) and slices of
 *              constant positions [s, e), 0 <= s < e, read at other
 *              positions (bounded_ties.c; the validity domain says X >= e,
 *              so a slice's output has e - s elements). R: the most the
 *              windows of one side reach (the sum of max(lo, hi) over its
 *              windows along X, the larger side); L: the largest slice end
 *              (0 without). With R > 0, X is held on at most one axis of
 *              any value. Checked at every admissible size 1..N of X:
 *              N = L + k when R = 0 (k the most axes of X in one value),
 *              else 2R + 1 without slices, L + 3R + 2 with.
 *
 * Argument, R = 0. Every operator keeps the indices along X but the
 * slices, which read the constant positions below L; renaming the
 * positions L..m-1 by one permutation in every value therefore commutes
 * with both sides, and an element at indices i_1..i_k along X at size
 * m >= N is, the ones >= L (at most k) renamed to L..L+k-1, an element at
 * size N of the inputs renamed alike (the argument for indices, with the
 * positions below L kept). X may be a family of whole blocks of B
 * (bounded_ties_blocks.c) here: N, L and k count in B's offsets (a slice
 * reads offsets below L of block 0 once B has L), concats and aligned
 * splits keep offsets, and the renaming acts on the offsets L..n-1 of
 * every block; the grid sets B's size, each dim to its blocks of it.
 *
 * Argument, R > 0. An output element at position j along X (when its value holds
 * X) reads input elements at positions within R of j and, through the
 * slices, at positions [s - R, e - 1 + R] from the start; which of the
 * positions involved lie inside 0..m-1 is all that the size m decides.
 * For m > N, map the positions an element reads at size m onto size N.
 * Without slices: j's neighbourhood moves to j' with the same distance to
 * each end clipped at R (j' = j when j < R, N - (m - j) when m - 1 - j < R,
 * else R; both ends within R of j means m <= 2R < N). With slices: the
 * positions below L + R stay where they are; if j <= L + 2R, j stays too
 * (everything read is below L + 3R < N <= m, so inside at both sizes);
 * otherwise j's neighbourhood moves to j' = N - (m - j) when m - 1 - j < R,
 * else L + 2R + 1 (both farther than L + 2R from the start, so the two
 * groups of positions stay apart and the start out of reach). The map is
 * one-to-one on the positions read, keeps which are inside, the windows'
 * offsets and the slices' constant positions, so the element at size m is
 * the element at size N of the inputs renamed alike, where the check found
 * the two sides equal for all inputs. A size above N is admissible exactly
 * when N is (the only conditions on X are the slices' ends, all <= L < N;
 * the plan checks that raising a class to N keeps every admissible
 * combination admissible, bounded_shapes.c, and proves nothing otherwise).
 * Several such classes: every combination of their sizes 1..N, the other
 * dims at their own sizes; they extend first, one at a time, then the
 * other classes as below, whose arguments hold at any size of these.
 * A rule that is valid at its own shapes only because a window sees both
 * ends there (row 1 of a 3x3 pool of a two-row image is its row 0) is
 * refuted at a size between (3 rows).
 *
 *   averaged — a class C that only keepdims means mix (each reduced axis
 *              of C, or of whole blocks of C, is a sum over it times one
 *              over the axis's size: ties mark it summed as well as
 *              mixing), otherwise indexed or summed as above, that no
 *              window or slice reads (a layout or a part of one that a
 *              mean reads mixes: check_layout; a mean over concat(a, b)
 *              divides by a sum of two sizes), in a rule with no reshape
 *              and no mean that drops its axes (its sum is no tie, so the
 *              counts below would miss it), outside the cases of matmul
 *              batch dims (bounded_cases.c checks one shape per case),
 *              where no non-polynomial operator reads a value computed
 *              from an input holding C, nor a value holding C (a
 *              polynomial rule, or case (a) above). K = the most indices
 *              along C in one product of an output element (its axes
 *              plus its sums, a mean's included: need), A = the most
 *              means over C in one product (need_mean), at least 1 (a
 *              class no mean over which reaches an output is not
 *              averaged). Checked at every size 1..K + A of C (each must
 *              be admissible where one is), the others held.
 *
 * Argument. At size m, with the other classes held (and, in case (a), the
 * values of the non-polynomial nodes, which read nothing of C, held as
 * coefficients), expand an output element at its indices along C (k <= K
 * of them) into products: a constant times input entries, summed over
 * s <= K - k indices along C (matmul and convolution sums and the means'),
 * times 1/m per mean over C (1/(c m) over c blocks), e <= A of them.
 * Every operator treats the indices along C alike, so renaming them
 * commutes with both sides and the coefficient of a monomial depends only
 * on its type: the output's indices and the monomial's entries along C up
 * to renaming, with D distinct indices in all. A summation index either
 * appears in the product's entries (its value is then one of the
 * monomial's) or not (free: a constant along C, such as a convolution's
 * bias along its batch axis, summed over all m values). So a product with
 * f free sums adds to a type's coefficient a count fixed by the type
 * times m^f m^-e; its D indices are the output's and the s - f others',
 * so D <= k + s - f <= K - f, and the exponent f - e lies in [-A, K - D].
 * For D >= 1 the two sides' difference at a type is m^-A times a
 * polynomial of degree <= K + A - D in m, found 0 at the K + A - D + 1
 * sizes D..K + A, so 0 at every m >= D, and below D the type does not
 * occur. For D = 0 every sum is free and every mean one of them
 * (f = s >= e), so the exponent lies in [0, K]: a polynomial of degree
 * <= K, found 0 at the K + A >= K + 1 sizes 1..K + A (why A >= 1). So
 * the sides are equal at every size of C. `mean(a) mean(a) = mean(a a)`
 * along C holds at one element and not at two (K = 2, A = 2: sizes 1..4
 * refute it); `matmul(x, y) = mean(x y^T)` holds at m = 1 (K = 1, A = 1:
 * size 2 refutes it). The 1/m is what a mean's coefficient depends on,
 * and a class a softmax, layer norm, window or element-wise broadcast
 * reads (whose terms hold 1/m and m otherwise: the mean of a layer norm
 * cancels by m (1/m) = 1) is not averaged: it mixes. A matmul operand
 * whose batch dim is a class fixed at 1 (a mean's kept axis) broadcast
 * along C is used whole at every index, as a missing dim is
 * (bounded_ties_blocks.c), so C stays averaged there. The classes
 * extend one at a time as the classes near the ends do (one grid of
 * their sizes, bounded_shapes.c); in case (a) the held coefficients are
 * the same at every size of C.
 *
 * With every input dim fixed, indexed or summed, the exact check valid at
 * the own shapes is valid at every admissible shape, any size, not only
 * 1..4; with some near the ends or averaged, so is the check valid at
 * their sizes 1..N (bounded.c, check_edges).
 *
 * The exact check itself is over the reals with abstract functions for
 * exp, sqrt, gelu... (valid for any functions with the stated facts, so
 * for the real ones), the same semantics the axioms prove in: a valid
 * check on a closed domain is a proof in the axioms' sense.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <string.h>

/* How node nd maps its inputs in the exact check's elaboration
 * (bounded_ops.c): NP_NONE a polynomial map (sums, products, scalings,
 * data movement, slices, pooling, means, a convolution without activation);
 * NP_ABSTRACT a polynomial map followed by a function applied
 * element by element that the check may take as abstract (relu, a
 * convolution's activation, sigmoid, tanh, erf, gelu, exp, log, sqrt);
 * NP_OTHER anything else (softmax, layer norm, batch norm, max-pool,
 * pow...). */
enum { NP_NONE, NP_ABSTRACT, NP_OTHER };

static int nonpolynomial(const xf_node *nd)
{
    switch (nd->op) {
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_SCALAR_MUL: case XF_OP_NEG:
    case XF_OP_IDENTITY: case XF_OP_DROPOUT: case XF_OP_MATMUL: case XF_OP_CONCAT:
    case XF_OP_SPLIT: case XF_OP_SLICE: case XF_OP_TRANSPOSE: case XF_OP_ENLARGE:
    case XF_OP_AVGPOOL: case XF_OP_GLOBAL_AVGPOOL: case XF_OP_REDUCE_MEAN:
    case XF_OP_CONSTANT_OF_SHAPE: case XF_OP_CONST_IDENTITY_CONV:
    case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES: case XF_OP_CONST_POOL:
        return NP_NONE;
    case XF_OP_CONV:
        return nd->params.activation == XF_ACT_NONE ? NP_NONE : NP_ABSTRACT;
    case XF_OP_RELU: case XF_OP_SIGMOID: case XF_OP_TANH: case XF_OP_ERF: case XF_OP_GELU:
    case XF_OP_EXP: case XF_OP_LOG: case XF_OP_SQRT:
        return NP_ABSTRACT;
    default:
        return NP_OTHER;
    }
}

/* Is every node of g a polynomial map of its inputs? */
static int polynomial(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (nonpolynomial(&g->nodes[i]) != NP_NONE) return 0;
    return 1;
}

/* The family of slot i: the plain class its class is made of blocks of. */
static int family(xfb_ties *t, int i)
{
    int root = vf_bounded_ties_find(t, i);
    return t->block_of[root] >= 0 ? t->block_of[root] : root;
}

/* The parts of a layout (bounded_ties_blocks.c) at root a: how many (0:
 * none), the q-th's family, and whether the q-th is the first of its class. */
static int parts_in(const xfb_ties *t, int a) { return t->n_parts ? t->n_parts[a] : 0; }

static int part(xfb_ties *t, int a, int q)
{
    return family(t, t->parts[a * XFB_LAYOUT_PARTS + q]);
}

static int first_part(xfb_ties *t, int a, int q)
{
    for (int j = 0; j < q; j++)
        if (part(t, a, j) == part(t, a, q)) return 0;
    return 1;
}

/* Whether an index of family f is one of class `root`: f is root, or a
 * layout with a part of root (an index there is one offset of one part). */
static int holds(xfb_ties *t, int f, int root)
{
    if (f == root) return 1;
    for (int q = 0; q < parts_in(t, f); q++)
        if (part(t, f, q) == root) return 1;
    return 0;
}

/* The view record that makes slot i's class a reshape's merged axis, -1. */
static int view_of(xfb_ties *t, int i)
{
    return t->view_of ? t->view_of[vf_bounded_ties_find(t, i)] : -1;
}

/* Class `root` is a kept reshape's merged axis or one of its parts
 * (bounded_ties_views.c). */
static int viewed(xfb_ties *t, int root)
{
    for (int i = 0; t->view_of && i < t->n; i++) {
        if (vf_bounded_ties_find(t, i) != i || t->view_of[i] < 0) continue;
        const xfb_view *w = &t->views[t->view_of[i]];
        if (i == root) return 1;
        for (int p = 0; p < w->n; p++)
            if (vf_bounded_ties_find(t, w->part[p]) == root) return 1;
    }
    return 0;
}

/* Some layout (a concat's axis of several classes) has a class, its own or
 * a part's, that a kept reshape merges or makes: the two index arguments
 * would nest there (a part's offsets inside a tuple, or a tuple's
 * component inside offsets), which neither argues nor counts. Apart, each
 * renaming of one class's indices is one argument's alone: a concat acts
 * along a layout, which no kept reshape merges or makes, and a kept
 * reshape keeps a layout's axis as an element-wise operator does. */
static int layout_meets_view(xfb_ties *t)
{
    for (int a = 0; a < t->n; a++) {
        if (!parts_in(t, a)) continue;
        if (viewed(t, a)) return 1;
        for (int q = 0; q < parts_in(t, a); q++)
            if (viewed(t, part(t, a, q))) return 1;
    }
    return 0;
}

/* How many of the axes mean node nd of side k reduces hold class root
 * (each a sum over it scaled by one over its size). */
static int mean_sums(xfb_ties *t, const xf_graph *g, int k, const xf_node *nd, int root)
{
    int x = nd->inputs[0], rank = g->values[x].shape.rank, n = 0;
    for (int d = 0; d < rank; d++) {
        int a = vf_bounded_ties_slot(t, k, x, d);
        n += vf_bounded_mean_reduces(nd, rank, d) && t->summed[a] && holds(t, family(t, a), root);
    }
    return n;
}

/* Per class root that products sum over (summed[root]), the most distinct
 * indices along it in one monomial of an output element of side k: the
 * output's axes of the class plus the most sums over it in one product, a
 * keepdims mean's included (need[root], raised). means_only: instead the
 * most such means in one product, the power of one over the class's size
 * in a monomial's coefficient ("averaged" in the header). s: scratch per
 * value. */
static xf_status count_sums(xfb_ties *t, const unsigned char *summed, const xf_graph *g, int k,
                            int means_only, int *need, int *s, xf_error *err)
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
                here = all + (!means_only && a >= 0 && t->summed[a] && holds(t, family(t, a), root));
            }
            if (nd->op == XF_OP_REDUCE_MEAN && nd->params.keepdims)
                here = most + mean_sums(t, g, k, nd, root);
            for (int o = 0; o < nd->n_outputs; o++) s[nd->outputs[o]] = here;
        }
        for (int o = 0; o < g->n_outputs; o++) {
            int v = g->outputs[o], n = s[v];
            for (int d = 0; !means_only && d < g->values[v].shape.rank; d++)
                n += holds(t, family(t, vf_bounded_ties_slot(t, k, v, d)), root);
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
    uint64_t *mixed;       /* the operators that mix along it, not as a sum
                              (an xfb_ties mixing mask) */
    unsigned char *summed; /* a product sums over it */
    unsigned char *fixed;  /* it, or a class of its family, keeps the rule's size */
    unsigned char *seen;   /* counted in n_classes */
    unsigned char *edge;   /* read near its ends only (windows, constant slices) */
    int *reach[2];         /* per side: the windows' reaches along it, summed */
    int *end;              /* the largest end of a constant slice along it */
    int *edge_id;          /* its index among the domain's edge classes, -1 */
    int *axes;             /* most axes of it in one value */
    int *here;             /* scratch: axes of it in the value at hand */
    int *need;             /* summed: indices its own size must cover */
    int *scratch;          /* per value of a side (count_sums, after_sums) */
    /* a rule that is not polynomial, per summed class: */
    unsigned char *np_sees;  /* a non-polynomial operator reads a value holding it */
    unsigned char *np_after; /* one reads a value computed from an input holding it */
    int abstract_only;       /* every non-polynomial operator is NP_ABSTRACT */
    unsigned char *held;     /* a rule input holds it */
    unsigned char *joined;   /* a concat of classes joins it, or it is one (a layout) */
    int layout_open;         /* a layout failed whose part no input dim blocks */
    int *need_mean;          /* summed: the most keepdims means over it in one product */
    unsigned char *biased;   /* a constant is added along it (a convolution's bias along
                                its batch axis, a rank-0 operand added or subtracted;
                                xfb_ties.bias), or along a layout it is a part of: a sum
                                over it has terms without its index */
    int means_ok;            /* the rule has no reshape and no mean that drops its axes,
                                and the ties are not a case's (bounded_cases.c) */
} classes;

static void classes_free(classes *c)
{
    xf_free(c->mixed);
    xf_free(c->summed);
    xf_free(c->fixed);
    xf_free(c->seen);
    xf_free(c->edge);
    xf_free(c->reach[0]);
    xf_free(c->reach[1]);
    xf_free(c->end);
    xf_free(c->edge_id);
    xf_free(c->axes);
    xf_free(c->here);
    xf_free(c->need);
    xf_free(c->scratch);
    xf_free(c->np_sees);
    xf_free(c->np_after);
    xf_free(c->held);
    xf_free(c->joined);
    xf_free(c->need_mean);
    xf_free(c->biased);
}

/* The values whose elements node nd's non-polynomial part reads: a
 * convolution's activation reads its result, any other its operands (and
 * writes its results, of the same classes where element-wise). */
static int np_reads(const xf_node *nd, int i, int *v)
{
    int act = nd->op == XF_OP_CONV;
    int n = act ? nd->n_outputs : nd->n_inputs + nd->n_outputs;
    if (i >= n) return 0;
    *v = act ? nd->outputs[i] : i < nd->n_inputs ? nd->inputs[i] : nd->outputs[i - nd->n_inputs];
    return 1;
}

/* Whether nd (of side k) is a softmax, or a layer norm with eps > 0, over
 * axes of one element each whose classes are fixed (a keepdims mean's
 * reduced axis): its result is then ones (exp(x) / exp(x)), or its bias
 * (x - mean(x) = 0 over one element), wherever the rule applies, whatever
 * its data input (input 0) is, which it therefore does not read. */
static int constant_norm(xfb_ties *t, const xf_graph *g, int k, const xf_node *nd)
{
    if (nd->op != XF_OP_SOFTMAX && !(nd->op == XF_OP_LAYERNORM && nd->params.epsilon > 0))
        return 0;
    int x = nd->inputs[0], rank = g->values[x].shape.rank, a = xf_norm_axis(nd->params.axis, rank);
    if (a < 0) return 0;
    for (int d = a; d < (nd->op == XF_OP_SOFTMAX ? a + 1 : rank); d++)
        if (g->values[x].shape.dims[d] != 1 ||
            !t->fixed[vf_bounded_ties_find(t, vf_bounded_ties_slot(t, k, x, d))])
            return 0;
    return 1;
}

/* For the non-polynomial nodes of side k (bounded_domain.c's header, "after
 * their sums"): the summed classes a value they read holds (np_sees), the
 * summed classes whose inputs reach a value they read (np_after; a
 * constant_norm's data input counts as not read), and whether each is
 * NP_ABSTRACT (abstract_only, cleared otherwise). */
static xf_status after_sums(xfb_ties *t, const xf_graph *g, int k, classes *c, xf_error *err)
{
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    xf_status st = xf_graph_topo_order(g, order, err);
    for (int i = 0; st == XF_OK && i < g->n_nodes; i++) {
        const xf_node *nd = &g->nodes[i];
        int kind = nonpolynomial(nd), v;
        if (kind == NP_NONE) continue;
        if (kind == NP_OTHER) c->abstract_only = 0;
        for (int j = 0; np_reads(nd, j, &v); j++)
            for (int d = 0; v >= 0 && d < g->values[v].shape.rank; d++) {
                int f = family(t, vf_bounded_ties_slot(t, k, v, d));
                c->np_sees[f] = 1;
                for (int q = 0; q < parts_in(t, f); q++) c->np_sees[part(t, f, q)] = 1;
            }
    }
    int *tainted = c->scratch; /* per value: computed from an input holding the class */
    for (int root = 0; st == XF_OK && root < t->n; root++) {
        if (!c->summed[root] || c->np_after[root]) continue;
        for (int v = 0; v < g->n_values; v++) tainted[v] = 0;
        for (int i = 0; i < g->n_inputs; i++) {
            int v = g->inputs[i];
            for (int d = 0; d < g->values[v].shape.rank; d++)
                tainted[v] |= holds(t, family(t, vf_bounded_ties_slot(t, k, v, d)), root);
        }
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[order[i]];
            int any = 0, v, constant = constant_norm(t, g, k, nd);
            for (int j = constant; j < nd->n_inputs; j++)
                any |= nd->inputs[j] >= 0 && tainted[nd->inputs[j]];
            for (int o = 0; o < nd->n_outputs; o++) tainted[nd->outputs[o]] = any;
            for (int j = constant; nonpolynomial(nd) != NP_NONE && np_reads(nd, j, &v); j++)
                c->np_after[root] |= v >= 0 && tainted[v];
        }
    }
    xf_free(order);
    return st;
}

/* A concat of classes, layout root a: an argument ("a concat of classes"
 * in the header) while nothing but the concats and sums mixes along it and
 * each part is held by an input and fixed, or mixed by nothing else (its
 * input dims then carry the size check); a sum over the layout is a sum
 * over each part that is not fixed. Otherwise the layout and its parts
 * mix, and a part no input holds keeps the rule open. All parts fixed: the
 * layout is. A fixed part no input holds would be a generator's size that
 * no input dim ties, which the stored domain cannot keep (the matcher
 * takes a source generator at any size): it keeps the rule open. */
static void check_layout(xfb_ties *t, classes *c, int a)
{
    int all_fixed = 1, all_held = 1, ok = !c->mixed[a] && !c->edge[a] && !c->fixed[a];
    for (int q = 0; q < parts_in(t, a); q++) {
        int p = part(t, a, q);
        all_fixed &= c->fixed[p];
        all_held &= c->held[p];
        ok &= c->held[p] && (c->fixed[p] || (!c->mixed[p] && !c->edge[p]));
    }
    if (all_fixed && all_held) {
        c->fixed[a] = 1;
        return;
    }
    if (ok) c->joined[a] = 1;
    for (int q = 0; q < parts_in(t, a); q++) {
        int p = part(t, a, q);
        if (ok) {
            c->joined[p] = 1;
            if (!c->fixed[p] && c->summed[a]) c->summed[p] = 1;
            c->biased[p] |= c->biased[a]; /* a constant along the layout is one along its parts */
        } else if (!c->held[p]) {
            c->layout_open = 1;
        } else if (!c->fixed[p]) {
            c->mixed[p] = 1;
        }
    }
    if (!ok) c->mixed[a] = 1;
}

/* Fills c from the strict ties t of r; poly: r is polynomial. */
static xf_status classes_make(xfb_ties *t, const xf_rule *r, int poly, classes *c, xf_error *err)
{
    size_t n = (size_t)t->n + 1;
    int n_val = r->src.n_values > r->dst.n_values ? r->src.n_values : r->dst.n_values;
    c->mixed = xf_calloc(n, sizeof *c->mixed);
    c->summed = xf_calloc(n, 1);
    c->fixed = xf_calloc(n, 1);
    c->seen = xf_calloc(n, 1);
    c->axes = xf_calloc(n, sizeof *c->axes);
    c->here = xf_calloc(n, sizeof *c->here);
    c->need = xf_calloc(n, sizeof *c->need);
    c->scratch = xf_calloc((size_t)n_val + 1, sizeof *c->scratch);
    c->edge = xf_calloc(n, 1);
    c->reach[0] = xf_calloc(n, sizeof *c->reach[0]);
    c->reach[1] = xf_calloc(n, sizeof *c->reach[1]);
    c->end = xf_calloc(n, sizeof *c->end);
    c->edge_id = xf_malloc(n * sizeof *c->edge_id);
    c->np_sees = xf_calloc(n, 1);
    c->np_after = xf_calloc(n, 1);
    c->held = xf_calloc(n, 1);
    c->joined = xf_calloc(n, 1);
    c->need_mean = xf_calloc(n, sizeof *c->need_mean);
    c->biased = xf_calloc(n, 1);
    if (!c->mixed || !c->summed || !c->fixed || !c->seen || !c->axes || !c->here || !c->need ||
        !c->scratch || !c->edge || !c->reach[0] || !c->reach[1] || !c->end || !c->edge_id ||
        !c->np_sees || !c->np_after || !c->held || !c->joined || !c->need_mean || !c->biased)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    c->means_ok = !xf_rule_has_views(r) && !t->cas; /* a case's shape gets one check */
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(r, k);
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[i];
            if (nd->op == XF_OP_REDUCE_MEAN && !nd->params.keepdims) c->means_ok = 0;
        }
    }
    int first_dst = r->dst.n_values ? vf_bounded_ties_slot(t, 1, 0, 0) : t->n;
    for (int i = 0; i < t->n; i++) {
        int root = vf_bounded_ties_find(t, i), f = family(t, i);
        c->mixed[f] |= t->mixing[i];
        c->summed[f] |= t->summed[i];
        c->fixed[f] |= t->fixed[root];
        c->biased[f] |= t->bias[i];
        c->edge[f] |= t->edge[i];
        c->reach[i >= first_dst][f] += t->reach[i];
        if (t->slice_end[i] > c->end[f]) c->end[f] = t->slice_end[i];
        c->edge_id[i] = -1;
    }
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int v = 0; v < g->n_values; v++) {
            int rank = g->values[v].shape.rank;
            for (int d = 0; d < rank; d++) { /* a reshape's merged axis holds each part */
                int s = vf_bounded_ties_slot(t, k, v, d), w = view_of(t, s);
                for (int i = -1; i < (w >= 0 ? t->views[w].n : 0); i++) {
                    int a = family(t, i < 0 ? s : t->views[w].part[i]);
                    if (++c->here[a] > c->axes[a]) c->axes[a] = c->here[a];
                    for (int q = 0; q < parts_in(t, a); q++) { /* one offset of one of its parts */
                        int p = part(t, a, q);
                        if (!first_part(t, a, q)) continue;
                        if (++c->here[p] > c->axes[p]) c->axes[p] = c->here[p];
                    }
                }
            }
            for (int d = 0; d < rank; d++) {
                int s = vf_bounded_ties_slot(t, k, v, d), w = view_of(t, s);
                for (int i = -1; i < (w >= 0 ? t->views[w].n : 0); i++) {
                    int a = family(t, i < 0 ? s : t->views[w].part[i]);
                    c->here[a] = 0;
                    for (int q = 0; q < parts_in(t, a); q++) c->here[part(t, a, q)] = 0;
                }
            }
        }
    }
    for (int i = 0; i < r->src.n_inputs; i++) {
        int v = r->src.inputs[i];
        for (int d = 0; d < r->src.values[v].shape.rank; d++)
            c->held[family(t, vf_bounded_ties_slot(t, 0, v, d))] = 1;
    }
    for (int a = 0; a < t->n; a++)
        if (parts_in(t, a)) check_layout(t, c, a);
    xf_status st = XF_OK;
    for (int k = 0; st == XF_OK && k < 2; k++)
        st = count_sums(t, c->summed, vf_rule_side(r, k), k, 0, c->need, c->scratch, err);
    for (int k = 0; st == XF_OK && k < 2; k++)
        st = count_sums(t, c->summed, vf_rule_side(r, k), k, 1, c->need_mean, c->scratch, err);
    c->abstract_only = 1;
    for (int k = 0; !poly && st == XF_OK && k < 2; k++)
        st = after_sums(t, vf_rule_side(r, k), k, c, err);
    return st;
}

/* The windows' reach along class f: the larger side's sum. */
static int64_t edge_reach(const classes *c, int f)
{
    return c->reach[0][f] > c->reach[1][f] ? c->reach[0][f] : c->reach[1][f];
}

/* The largest size to check of a class read near its ends only (the
 * argument in the header): L + k without a window's reach, else 2R + 1
 * with windows alone, L + 3R + 2 with slices ending at most at L; 0 when
 * beyond XFB_EDGE_TOP. */
static int edge_top(const classes *c, int f)
{
    int64_t reach = edge_reach(c, f);
    int64_t top = !reach ? c->end[f] + c->axes[f] : c->end[f] ? c->end[f] + 3 * reach + 2 : 2 * reach + 1;
    return top <= XFB_EDGE_TOP ? (int)top : 0;
}

/* The largest size to check of an averaged class (the header,
 * "averaged"): K + A, K = need (its axes and sums, means included, in one
 * product of an output), A >= 1 the most means over it in one product; 0
 * when no mean over it reaches an output (A = 0: a term without an index
 * along it would need K + 1 sizes) or beyond XFB_EDGE_TOP. */
static int mean_top(const classes *c, int f)
{
    int64_t top = (int64_t)c->need[f] + c->need_mean[f];
    return c->need_mean[f] >= 1 && top <= XFB_EDGE_TOP ? (int)top : 0;
}

/* Input dim `flat` (rule input order, dim by dim), `blocks` blocks of
 * class f read near its ends only (averaged: averaged instead), joins
 * out's edge classes; 0 when that is not possible. */
static int edge_join(classes *c, int f, int flat, int blocks, int averaged, xfb_domain *out)
{
    if (flat >= XFB_EDGE_DIMS) return 0;
    if (c->edge_id[f] < 0) {
        int top = averaged ? mean_top(c, f) : edge_top(c, f);
        if (!top || out->n_edge_classes == XFB_EDGE_CLASSES) return 0;
        c->edge_id[f] = out->n_edge_classes;
        out->edge_mean[out->n_edge_classes] = (unsigned char)averaged;
        out->edge_top[out->n_edge_classes++] = top;
    }
    out->edge_class[flat] = (signed char)c->edge_id[f];
    out->edge_blocks[flat] = blocks;
    if (averaged) out->n_averaged++;
    else out->n_edge++;
    return 1;
}

/* The reason a dim that an operator mixes blocks the proof, naming the
 * operators of its class's mask (none: read near its ends beyond what
 * the sizes near the ends cover), so that what blocks a family of rules
 * can be counted from their details. */
static void mixes_why(char *why, size_t cap, int d, const char *name, uint64_t mask)
{
    int n = snprintf(why, cap, "dim %d of input %s takes other sizes where an operator mixes along it",
                     d, name);
    const char *sep = " (";
    for (int bit = 0; bit < 64 && n > 0 && (size_t)n < cap; bit++) {
        if (!(mask & (UINT64_C(1) << bit))) continue;
        const char *what = bit == 63 ? "blocks of two forms"
                           : bit == XFB_MIX_OTHER ? "another operator"
                                                  : xf_op_get((xf_op)bit)->name;
        n += snprintf(why + n, cap - (size_t)n, "%s%s", sep, what);
        sep = ", ";
    }
    if (*sep == ',' && n > 0 && (size_t)n < cap) snprintf(why + n, cap - (size_t)n, ")");
}

/* Classifies input dim d of rule input `in` (class root; `flat` its index
 * among the rule's input dims) into out. */
static void classify(xfb_ties *t, classes *c, int poly, const xf_value *in, int64_t size, int d,
                     int flat, int root, xfb_domain *out)
{
    if (t->view_of && t->view_of[root] >= 0) { /* a merged axis: its parts decide */
        const xfb_view *w = &t->views[t->view_of[root]];
        for (int i = 0; i < w->n; i++)
            classify(t, c, poly, in, w->own[i], d, flat, vf_bounded_ties_find(t, w->part[i]), out);
        return;
    }
    int f = t->block_of[root] >= 0 ? t->block_of[root] : root;
    int summed = c->summed[f];
    int64_t need = summed ? c->need[f] : c->axes[f];
    int64_t own = size / t->blocks[root]; /* the size of one block */
    if (c->fixed[f]) {
        out->n_fixed++;
        return;
    }
    /* read near its ends only: no sum, nothing else mixing it; where a
     * window reaches along it, a plain class on one axis of every value */
    int plain = c->axes[f] <= 1 && t->block_of[root] < 0 && !t->has_blocks[f];
    if (c->edge[f] && !c->mixed[f] && !summed && (plain || !edge_reach(c, f)) &&
        edge_join(c, f, flat, t->blocks[root], 0, out))
        return;
    /* averaged: keepdims means alone mix it (summed: they mark their axes;
     * a layout a mean reads, or a part of one, check_layout mixes), no
     * window or slice reads it, and no non-polynomial operator reads a
     * value computed from it or holding it */
    if (c->mixed[f] == vf_bounded_mix_bit(XF_OP_REDUCE_MEAN) && summed && c->means_ok &&
        !c->edge[f] && (poly || (!c->np_after[f] && !c->np_sees[f])) &&
        edge_join(c, f, flat, t->blocks[root], 1, out))
        return;
    /* summed in a rule that is not polynomial: no non-polynomial operator
     * may read a value holding the class, and where one reads its sums,
     * each must be one the check can take as abstract ("after their sums") */
    int np_blocks = summed && !poly && (c->np_sees[f] || (c->np_after[f] && !c->abstract_only));
    /* summed where a bias (a convolution's, a scalar added) adds a constant along it: a sum
     * over it has terms without its index, whose count is the size itself
     * (the argument for summed classes needs every term to hold it; the
     * averaged one counts them) */
    int bias_blocks = summed && c->biased[f];
    /* a dim read near its ends that could not join (a window over a class
     * on two axes or over blocks, a summed one, beyond XFB_EDGE_TOP or the
     * class and dim caps) is checked at its own size only: it blocks */
    if (!c->mixed[f] && !c->edge[f] && !np_blocks && !bias_blocks && own >= need) {
        if (summed) out->n_summed++;
        else out->n_indexed++;
        if (summed && !poly && c->np_after[f]) out->n_after++, out->abstract = 1;
        out->n_blocked += t->has_blocks[f];
        if (summed) out->n_joined_summed += c->joined[f];
        else out->n_joined += c->joined[f];
        out->n_classes += !c->seen[f];
        c->seen[f] = 1;
        return;
    }
    if (!out->closed) return; /* the first dim that blocks it is named */
    out->closed = 0;
    const char *name = in->name ? in->name : "?";
    if (c->mixed[f] || c->edge[f])
        mixes_why(out->why, sizeof out->why, d, name, c->mixed[f]);
    else if (np_blocks && c->np_sees[f])
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s takes other sizes, summed over and read by a "
                 "non-polynomial operator",
                 d, name);
    else if (np_blocks)
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s takes other sizes, summed over before a softmax, norm, "
                 "max-pool or pow",
                 d, name);
    else if (bias_blocks)
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s takes other sizes, summed over where a bias (a "
                 "convolution's, or a scalar added) adds a constant along it",
                 d, name);
    else
        snprintf(out->why, sizeof out->why,
                 "dim %d of input %s has size %lld, fewer than the %lld its axes and sums in one "
                 "value need",
                 d, name, (long long)own, (long long)need);
}

/* The domain within case cas (NULL: none) at input shapes `at` (NULL: the
 * own ones). */
static xf_status domain(const xf_rule *r, const xfb_case *cas, const xf_shape *at, xfb_domain *out,
                        xf_error *err)
{
    memset(out, 0, sizeof *out);
    xfb_ties t;
    xf_status st = vf_bounded_ties_build_case(r, cas, &t, err);
    if (st != XF_OK) return st;
    int poly = polynomial(&r->src) && polynomial(&r->dst);
    out->polynomial = poly;
    classes c;
    memset(&c, 0, sizeof c);
    st = classes_make(&t, r, poly, &c, err);
    out->closed = 1;
    memset(out->edge_class, -1, sizeof out->edge_class);
    for (int i = 0, flat = 0; st == XF_OK && i < r->src.n_inputs; i++) {
        const xf_value *in = &r->src.values[r->src.inputs[i]];
        for (int d = 0; d < in->shape.rank; d++, flat++) {
            int root = vf_bounded_ties_find(&t, vf_bounded_ties_slot(&t, 0, r->src.inputs[i], d));
            int pieces = t.view_of && t.view_of[root] >= 0 ? t.views[t.view_of[root]].n : 1;
            int fixed_before = out->n_fixed;
            classify(&t, &c, poly, in, at ? at[i].dims[d] : in->shape.dims[d], d, flat, root, out);
            if (out->n_fixed - fixed_before == pieces) { /* read at its own size only */
                if (flat < XFB_EDGE_DIMS) out->fixed_dim[flat] = 1;
                else out->fixed_past = 1;
            }
        }
    }
    if (st != XF_OK) out->closed = 0;
    if (out->closed && c.layout_open) {
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "a concat joins a class no input holds with others");
    }
    if (st == XF_OK && t.views && t.free_split >= 0 && out->closed) { /* bounded_ties_views.c */
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "a reshape splits an axis of a size the rule fixes into sizes the matcher "
                 "takes from the model, of which the own shapes check one");
    }
    if (st == XF_OK && t.views && t.loose_split >= 0 && out->closed) { /* bounded_ties_views.c */
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "a reshape splits an axis into sizes the matcher takes from the model, neither "
                 "held nor an index");
    }
    for (int i = 0; st == XF_OK && t.view_of && i < t.n; i++)
        out->n_viewed += vf_bounded_ties_find(&t, i) == i && t.view_of[i] >= 0;
    if (out->closed && out->n_viewed && out->n_edge_classes) { /* not argued together */
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "its dims read near their ends are not argued together with a reshape's merged "
                 "axes");
    }
    if (st == XF_OK && out->closed && out->n_viewed && layout_meets_view(&t)) { /* nested */
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "a concat's axis of several classes is not argued together with a reshape's "
                 "merged axis it shares a class with");
    }
    if (out->closed && out->abstract && out->n_edge_classes) { /* not argued together */
        out->closed = 0;
        snprintf(out->why, sizeof out->why,
                 "its dims read near their ends are not checked with its ReLUs abstract, which "
                 "its sums read by non-polynomial operators need");
    }
    if (out->closed && out->n_edge_classes) { /* closed once the sizes near the ends are checked */
        int points = 1;
        for (int i = 0; i < out->n_edge_classes; i++) points *= out->edge_top[i];
        out->closed = 0;
        out->by_edges = points <= XFB_EDGE_POINTS;
        if (!out->by_edges)
            snprintf(out->why, sizeof out->why,
                     "its dims read near their ends need %d size combinations checked, more "
                     "than %d",
                     points, XFB_EDGE_POINTS);
    }
    classes_free(&c);
    vf_bounded_ties_free(&t);
    return st;
}

xf_status vf_bounded_domain_of(const xf_rule *r, xfb_domain *out, xf_error *err)
{
    return domain(r, NULL, NULL, out, err);
}

xf_status vf_bounded_domain_in_case(const xf_rule *r, const xfb_case *c, const xf_shape *at,
                                    xfb_domain *out, xf_error *err)
{
    return domain(r, c, at, out, err);
}
