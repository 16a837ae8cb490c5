/*
 * bounded_internal.h — private contract of the bounded element-wise check
 * (bounded.c drives it, bounded_shapes.c chooses the input shapes,
 * bounded_ties.c ties a rule's dims, bounded_domain.c decides whether the
 * rule's own shapes stand for all of its shapes, bounded_ops.c elaborates
 * operators, with the patterns it reads off their kernels kept by
 * bounded_patterns.c, bounded_poly.c normalises terms, bounded_cex.c encodes
 * counterexamples). Not part of the public API
 * (verify/verify.h).
 *
 * A symbolic tensor is a shape plus one Z3 real term per element (row-major).
 * Terms live as long as the Z3 context (a non-reference-counted context, one
 * per rule), and Z3 hash-conses them, so a subterm used by several elements
 * is stored once.
 */
#ifndef XF_VERIFY_BOUNDED_INTERNAL_H
#define XF_VERIFY_BOUNDED_INTERNAL_H

#include <z3.h>

#include "ir/ir.h"
#include "patterns_internal.h"

typedef struct xfb_tensor {
    xf_shape shape;
    int64_t n;
    Z3_ast *e; /* n terms, xf_malloc'd; NULL while the value is not elaborated */
} xfb_tensor;

typedef struct xfb_ctx {
    Z3_context z;
    Z3_sort real;
    Z3_func_decl uf[XF_OP_COUNT]; /* abstract function per non-polynomial op */
    int uses_uf;                  /* some term applies an abstract function */
    int relu_abstract;            /* relu (a conv's too) is an abstract function, not an
                                     ite: the check then holds for every function in its
                                     place (bounded_domain.c, "after their sums") */
    Z3_ast *side;                 /* facts true of the real functions (exp > 0) */
    int n_side, cap_side;
    vf_patterns *patterns;        /* operator patterns kept (bounded_patterns.c); NULL: every
                                     operator is probed */
} xfb_ctx;

/* Elaborates every node of g in topological order. vals has g->n_values
 * entries; the graph inputs must already be filled. Unsupported operators
 * are XF_ERR_UNSUPPORTED naming the node. */
xf_status vf_bounded_elaborate(xfb_ctx *c, const xf_graph *g, xfb_tensor *vals, xf_error *err);

/* Canonical polynomial forms (bounded_poly.c): one table per check, over
 * the check's context. */
typedef struct xfb_canon xfb_canon;

xfb_canon *vf_bounded_canon_new(Z3_context z, Z3_sort real); /* NULL: out of memory */
void vf_bounded_canon_free(xfb_canon *c);                    /* NULL: no-op */
/* Registers fact (t > 0, one of the check's side facts) so that quotients
 * by t normalise as products (bounded_poly.c); a fact of another form, or
 * whose t is not one atom, is ignored. Facts must be registered before the
 * terms that divide by them are normalised. XF_ERR_NOMEM as below. */
xf_status vf_bounded_canon_fact(xfb_canon *c, Z3_ast fact, xf_error *err);
/* Canonical id of real term t into *id (two terms with the same id are
 * equal for all inputs and all abstract functions); -1 when t is outside
 * the normaliser. XF_ERR_NOMEM (*id -1) when an allocation failed, now or
 * in an earlier call on c: the table is then unusable. */
xf_status vf_bounded_canon_id(xfb_canon *c, Z3_ast t, int32_t *id, xf_error *err);
/* Normal form `id` (from vf_bounded_canon_id, >= 0) rebuilt as a Z3 term into
 * *out; XF_ERR_NOMEM (*out NULL) as for vf_bounded_canon_id. */
xf_status vf_bounded_canon_build(xfb_canon *c, int32_t id, Z3_ast *out, xf_error *err);
/* How many polynomials c gave up as too large (over its monomial limit):
 * a term whose id is -1 while this is nonzero may be one of them. */
int64_t vf_bounded_canon_too_large(const xfb_canon *c);
/* Monomials in normal form id. */
int vf_bounded_canon_size(const xfb_canon *c, int32_t id);

/* The input-shape assignments one bounded check runs (bounded_shapes.c):
 * the rule's own first, then up to max_shapes - 1 other admissible ones. */
typedef struct xfb_shape_plan {
    int n_inputs;
    int n;            /* assignments chosen: own, small ones, largest */
    int n_exact;      /* the first n_exact get the exact check (n unless trimmed) */
    int n_admissible; /* admissible assignments found, the own one included */
    int cap;          /* the most it may hold (max_shapes) */
    xf_shape *shapes; /* n * n_inputs, assignment-major */
} xfb_shape_plan;

xf_status vf_bounded_shape_plan_make(const xf_rule *r, int max_dim, int max_shapes, xfb_shape_plan *p,
                              xf_error *err);
/* Limits the exact check to the own shapes and at most `keep` - 1 of the
 * small ones no larger than the own (evenly spaced): those move to the
 * front and n_exact counts them; the others stay, after them in their
 * order, for the float probe. Nothing changes when the exact check already
 * covers at most `keep` shapes. Fails only when out of memory. */
xf_status vf_bounded_shape_plan_trim(xfb_shape_plan *p, int keep, xf_error *err);
void vf_bounded_shape_plan_free(xfb_shape_plan *p);

/* An xfb_ties mixing mask: bit op for each operator below XFB_MIX_OTHER
 * (the rule language's), XFB_MIX_OTHER for the rest, XFB_MIX_FORMS for a
 * class of two block forms, which no one operator mixes. */
#define XFB_MIX_OTHER 62
#define XFB_MIX_FORMS (UINT64_C(1) << 63)
static inline uint64_t vf_bounded_mix_bit(xf_op op)
{
    return UINT64_C(1) << (op < XFB_MIX_OTHER ? (int)op : XFB_MIX_OTHER);
}

/* A reshape's merged axis (bounded_ties_views.c): slot `whole` is the
 * row-major product of slots part[0..n-1], whose own sizes are own[]. */
typedef struct xfb_view {
    int whole;
    int split; /* 1: an unflatten or a split of the last axis (the matcher sizes its parts) */
    int n;
    int part[XF_MAX_DIMS];
    int64_t own[XF_MAX_DIMS];
} xfb_view;

/* The dims of a rule's values (bounded_ties.c): slots numbered side by
 * side, value by value, dim by dim; a union-find over them. */
/* The most parts a concat's axis of several classes may have (a layout). */
#define XFB_LAYOUT_PARTS 8

typedef struct xfb_ties {
    int strict;             /* only ties that hold at every admissible shape */
    int n;                  /* slots */
    int *parent;            /* union-find; vf_bounded_ties_find gives a class's root */
    unsigned char *fixed;   /* per root: the class keeps the rule's own size */
    uint64_t *mixing;       /* per slot: the operators (bit xf_op) that combine
                               elements at different indices along this dim,
                               not as a sum; XFB_MIX_FORMS: a class of two
                               block forms (bounded_ties_blocks.c) */
    unsigned char *summed;  /* per slot: a product sums over this dim (matmul's
                               inner dim, a convolution's input channels);
                               strict, also a keepdims mean's reduced axis */
    unsigned char *bias;    /* per slot: a constant along this dim is added to
                               the value (a convolution's bias along its batch
                               axis, a rank-0 operand added or subtracted): a
                               sum over it has terms without its index */
    int *base[2];           /* first slot of each value, per side (0 src, 1 dst) */
    /* strict only, per root (bounded_ties_blocks.c): a class whose size is
     * `blocks` whole copies of a plain class `block_of` (a concat of copies
     * of one class along it, an equal split of such a concat), or
     * block_of -1 (plain: its own base, one block). has_blocks per plain
     * root: some class is made of its blocks. */
    int *block_of;
    int *blocks;
    unsigned char *has_blocks;
    /* strict only, per root (bounded_ties_blocks.c, "layouts"): a concat's
     * axis joining classes of two or more different plain classes, its
     * index (part q, offset t): n_parts[root] parts (0: not one), the
     * parts' plain roots in order at parts[root * XFB_LAYOUT_PARTS + q]. */
    unsigned char *n_parts;
    int *parts;
    /* strict only, per slot: an operator reads elements at other indices
     * along this dim only near its ends (bounded_domain.c, "near the
     * ends"): a stride-1 window that keeps the size (reach, at its output:
     * the larger of its two pads) or a slice of constant positions
     * (slice_end, at its input: the slice's end). Not mixing. */
    unsigned char *edge;
    int *reach;
    int *slice_end;
    /* strict only (bounded_ties_views.c): the reshapes of a kind the
     * matcher applies by kind, each a whole axis (slot) made of the axes it
     * merges (parts, with their own sizes), and, per root once settled and
     * outside a case, the record that makes the class a whole, -1 (plain). */
    struct xfb_view *views;
    int n_views;
    int *view_of;
    int free_split; /* a whole slot fixed with a part not fixed where the
                       rule applies (bounded_ties_views.c), -1 */
    int loose_split; /* the whole slot of a rejected split with a part not
                        fixed where the rule applies, -1 */
    /* with views (bounded_ties_views.c): per slot, its symbolic size
     * (xf_rule_dims) where that is its own size as a constant or a monomial
     * of read source input dims, else opaque (den 0); per input-dim symbol,
     * the source slot of that dim where the source reads the input, -1 */
    xf_dimx *size;
    int *input_slot;
    /* strict only: the case at hand (NULL: none; bounded_cases.c) and,
     * per root, a class it sets to 1 (fixed); the first matmul batch pair
     * left of two classes (operand slots, -1 none) and how many. */
    const struct xfb_case *cas;
    unsigned char *one;
    int pair[2];
    int n_pairs;
} xfb_ties;

/* A case of the matmul batch dims of two classes (bounded_cases.c): the
 * decisions made, each "the classes of slots a and b are equal" or "the
 * class of slot a is 1". Facts about the admissible shapes it covers. */
#define XFB_CASE_DEPTH 8
typedef struct xfb_case {
    int n;
    struct {
        int a, b; /* b -1: a's class is 1; else a's and b's are equal */
    } d[XFB_CASE_DEPTH];
} xfb_case;

/* Ties every dim of r. strict: only ties that every admissible shape
 * satisfies (the domain argument); otherwise also ties that merely narrow
 * the search (matmul batch dims, grouped conv channels). XF_ERR_NOMEM. */
xf_status vf_bounded_ties_build(const xf_rule *r, int strict, xfb_ties *t, xf_error *err);
/* Strict ties within case c (bounded_cases.c). */
xf_status vf_bounded_ties_build_case(const xf_rule *r, const xfb_case *c, xfb_ties *t,
                                     xf_error *err);
/* Strict ties: decides the axes the build deferred (matmul batch dims,
 * concat and split axes) once every other tie is made (bounded_ties_blocks.c). */
xf_status vf_bounded_ties_blocks(const xf_rule *r, xfb_ties *t, xf_error *err);
/* Strict ties (bounded_ties_views.c): a reshape of node nd of side k whose
 * kind the matcher applies by kind ties the axes it keeps and is recorded
 * as a whole made of parts; 1 when it was (else the caller mixes it). */
int vf_bounded_ties_view(xfb_ties *t, const xf_graph *g, int k, const xf_node *nd);
/* Where r's reshapes follow its symbolic dims (xf_rule_dims ok), so the
 * matcher applies each by its kind: room for their records (t->views) and
 * the dims the matcher holds (t->matched); else neither. t->n set. Fails
 * only out of memory. */
xf_status vf_bounded_ties_views_init(const xf_rule *r, xfb_ties *t, xf_error *err);
/* Once every other tie is made: keeps the wholes the argument holds for
 * (view_of), marks the others' slots mixing. Fails only out of memory. */
xf_status vf_bounded_ties_views_settle(xfb_ties *t, xf_error *err);
/* Helpers the two files share. */
void vf_bounded_ties_join(xfb_ties *t, int a, int b);
int vf_bounded_ties_find(xfb_ties *t, int slot);
int vf_bounded_ties_slot(const xfb_ties *t, int k, int value, int dim); /* k: 0 src, 1 dst */
void vf_bounded_ties_free(xfb_ties *t);
/* Parameters the enumerator derives from shapes, as the admissible set
 * re-derives them: a two-operand element-wise operator (its operands stay
 * equal when they are at the own shapes), a split into equal parts of its
 * axis (vf_bounded_split_parts: their count, else 0), a depthwise
 * convolution (group = input channels). */
int vf_bounded_ew_binary(xf_op op);
/* A generator (const_iconv, const_imatrix, const_ones, const_pool): sized
 * like the matcher sizes it, from its first consumer (bounded_shapes.c). */
int vf_bounded_generator(xf_op op);
int vf_bounded_split_parts(const xf_node *nd, const xf_shape *own_in);
int vf_bounded_depthwise(const xf_node *nd, const xf_shape *own_in);
/* Whether mean node nd (its input of rank `rank`) reduces axis d. */
int vf_bounded_mean_reduces(const xf_node *nd, int rank, int d);

/* Whether the exact check at the rule's own shapes decides the rule at
 * every shape it applies to (bounded_domain.c): every input dim either
 * keeps its own size wherever the rule applies, or is an index that every
 * operator on both sides maps element by element (no sum, window, softmax,
 * concat or split along it) and whose own size is at least the number of
 * its axes in any one value. */
#define XFB_EDGE_CLASSES 4 /* the most classes read near their ends in one rule */
#define XFB_EDGE_DIMS 64   /* the most input dims of a rule with such classes */
#define XFB_EDGE_POINTS 64 /* the most size combinations checked for them */
#define XFB_EDGE_TOP 16    /* the largest size checked for one */

typedef struct xfb_domain {
    int closed;     /* 1: the own shapes stand for every admissible shape */
    int n_fixed;    /* input dims of a fixed size */
    int n_indexed;  /* input dims in an element-by-element index class */
    int n_summed;   /* input dims in a class a polynomial rule sums over, or a rule
                       whose non-polynomial operators read no value holding it */
    int polynomial; /* every operator of the rule is polynomial */
    int n_after;    /* of n_summed: in a class whose sums some non-polynomial
                       operator reads (bounded_domain.c, "after their sums") */
    int abstract;   /* closed only if the exact check at the own shapes is also
                       valid with every ReLU an abstract function (n_after > 0) */
    int n_blocked;  /* of n_indexed: in a class that concats and equal splits
                       move in whole blocks */
    int n_joined;   /* of n_indexed: in a class a concat joins with other
                       classes, or such a concat's axis (a layout) */
    int n_joined_summed; /* of n_summed: the same */
    int n_viewed;   /* classes that are a reshape's merged axis, each of its
                       parts fixed or an index (bounded_ties_views.c) */
    int n_classes;  /* classes of the indexed ones */
    char why[160];  /* not closed: the first input dim that is neither, for users */
    /* Not closed, but closed once the exact check is valid at a few more
     * sizes: every input dim is fixed, indexed or summed as above, or in a
     * class that only stride-1 'same' windows and constant slices read, near
     * its ends (bounded_domain.c, "near the ends"). by_edges then; per such
     * class c, top[c] the largest size to check (every size 1..top[c],
     * the others held at their own), and per input dim (rule input order,
     * dim by dim) edge_class its class, or -1, and edge_blocks how many
     * blocks of it the dim is (1 but in a family of whole blocks). */
    int by_edges;
    int n_edge;       /* input dims in such classes */
    int n_edge_classes;
    int edge_top[XFB_EDGE_CLASSES];
    /* Also a class that only keepdims means mix, in a rule where nothing
     * non-polynomial reads a value computed from it (bounded_domain.c,
     * "averaged"): edge_mean[c] 1, checked at every size 1..top[c], each
     * of which must be admissible wherever one is (bounded_shapes.c). */
    int n_averaged;   /* input dims in such classes */
    unsigned char edge_mean[XFB_EDGE_CLASSES];
    signed char edge_class[XFB_EDGE_DIMS];
    int edge_blocks[XFB_EDGE_DIMS];
    /* Per input dim (rule input order, dim by dim, the first XFB_EDGE_DIMS):
     * 1 when the argument reads it at its own size only (fixed, or a
     * reshape's merged axis whose parts all are), so that the stored domain
     * must hold it there (bounded.c, held_dims); fixed_past: such a dim
     * past the XFB_EDGE_DIMS-th. */
    unsigned char fixed_dim[XFB_EDGE_DIMS];
    int fixed_past;
} xfb_domain;

xf_status vf_bounded_domain_of(const xf_rule *r, xfb_domain *out, xf_error *err);
/* The same within case c at input shapes `at` (one of the case's), which
 * stand for the case's shapes where the result is closed. */
xf_status vf_bounded_domain_in_case(const xf_rule *r, const xfb_case *c, const xf_shape *at,
                                    xfb_domain *out, xf_error *err);

/* Matmul batch dims of two classes by cases (bounded_cases.c): at every
 * admissible shape two such dims are equal or one of them is 1. The plan's
 * rows after the first (the own shapes) are one shape per case that needs
 * one; *closes 1 when every case is closed at its row (or has no
 * admissible shape), so that the exact check valid at every row proves
 * the rule; else why says which case does not close. */
xf_status vf_bounded_shape_plan_cases(const xf_rule *r, xfb_shape_plan *p, int *closes,
                                      int *n_cases, char *why, size_t why_size, xf_error *err);
/* Whether input shapes `in` are admissible and every dim of every value
 * there has the size the ties t say: blocks[root] * base[family] (base per
 * plain root, bounded_cases.c). */
xf_status vf_bounded_shapes_fit(const xf_rule *r, const xf_shape *in, xfb_ties *t,
                                const int64_t *base, int *fit, xf_error *err);

/* The shapes a domain's classes read near their ends (or averaged) are
 * checked at (bounded_shapes.c): the own shapes first, then every
 * admissible combination of sizes 1..top of those classes, the other dims
 * at their own size. *upward 0 when an admissible combination stops being
 * admissible with one such class raised to its top, or with an averaged
 * class at any other size 1..top (the argument then does not carry to
 * every size: the rule must not be proved that way). */
xf_status vf_bounded_shape_plan_edges(const xf_rule *r, const xfb_domain *dom, xfb_shape_plan *p,
                                      int *upward, xf_error *err);

/* Z3's last error as XF_ERR_INTERNAL ("z3: <message> while <what>"), or XF_OK. */
xf_status vf_bounded_z3_check(xfb_ctx *c, const char *what, xf_error *err);

/* A rule's source (k 0) or target (k 1) graph. */
static inline const xf_graph *vf_rule_side(const xf_rule *r, int k)
{
    return k ? &r->dst : &r->src;
}

#endif
