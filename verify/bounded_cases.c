/*
 * bounded_cases.c — matmul batch dims of two classes, decided by cases.
 *
 * A matmul's batch dims broadcast: where its operands' dims are of two
 * classes X and Y (strict ties, bounded_ties_blocks.c), every admissible
 * shape has x = y, x = 1 or y = 1 (shape inference admits nothing else).
 * Each of the three is a fact that closes the pair: X and Y joined (the
 * matmul maps batch index b to b), or X fixed at 1 (that operand is used
 * whole at every b, as a missing dim is, and the result's dim is Y's; Y's
 * likewise). The cases are walked depth first: in a case, the ties are
 * rebuilt with its facts (bounded_ties_build_case) and the first pair left
 * of two classes is split into its three cases again, until none is left
 * (at most XFB_CASE_DEPTH facts, XFB_CASES cases per rule). The cases of
 * a rule cover every admissible shape.
 *
 * Each case is closed at one shape of it: every class at the size the
 * case forces (1, or a size the rule fixes), the others at the largest
 * own size of a dim of the class (classes joined by the case take the
 * larger). The shape must be admissible and must have every value's dims
 * as the case's ties say (vf_bounded_shapes_fit), and the domain argument
 * of the own shapes (bounded_domain.c) must hold within the case at that
 * shape: every input dim fixed, an index or summed, none mixing. Then the
 * exact check valid at that shape is valid at every shape of the case.
 * A case whose facts contradict a size the rule fixes (a 1 where the rule
 * fixes 4, two fixed sizes made equal) or set a class of c >= 2 whole
 * blocks (bounded_ties_blocks.c: c copies of a size >= 1 at every
 * admissible shape) to 1 has no admissible shape and needs no check. So the exact check valid at the own shapes and at each case's
 * shape proves the rule at every admissible shape (docs/verify.md, "Proof
 * by the own shapes", batch dims by cases).
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <string.h>

#define XFB_CASES 27 /* the most cases one rule is split into */

typedef struct walk {
    const xf_rule *r;
    xfb_ties plain;   /* strict ties without a case: which classes the rule fixes */
    xfb_shape_plan *p;
    int n_cases;
    int closes;
    char *why;
    size_t why_size;
    int64_t *pre, *most, *size; /* per family root of a case */
} walk;


static int family(xfb_ties *t, int root) { return t->block_of[root] >= 0 ? t->block_of[root] : root; }

/* The size of one block of each family in case t: into w->size; 0 when
 * the case has no admissible shape, -1 when it cannot be said. */
static int case_sizes(walk *w, xfb_ties *t)
{
    for (int i = 0; i <= t->n; i++) w->pre[i] = -1, w->most[i] = 0, w->size[i] = 0;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(w->r, k);
        for (int v = 0; v < g->n_values; v++)
            for (int d = 0; d < g->values[v].shape.rank; d++) {
                int slot = vf_bounded_ties_slot(t, k, v, d), root = vf_bounded_ties_find(t, slot);
                int f = family(t, root), c = t->blocks[root];
                int64_t own = g->values[v].shape.dims[d];
                if (t->one[root] && c > 1) return 0; /* c whole blocks are never 1 */
                if (own % c || (t->one[root] && root != f)) return -1;
                int64_t b = own / c;
                if (w->plain.fixed[vf_bounded_ties_find(&w->plain, slot)]) {
                    if (w->pre[f] >= 0 && w->pre[f] != b) return 0; /* two fixed sizes equal */
                    w->pre[f] = b;
                }
                if (b > w->most[f]) w->most[f] = b;
            }
    }
    for (int f = 0; f < t->n; f++) {
        if (!w->most[f]) continue;
        if (t->one[f] && w->pre[f] > 1) return 0; /* 1 where the rule fixes more */
        w->size[f] = t->one[f] ? 1 : w->pre[f] >= 0 ? w->pre[f] : w->most[f];
    }
    return 1;
}

static void not_closed(walk *w, const char *why)
{
    if (w->closes) snprintf(w->why, w->why_size, "%s", why);
    w->closes = 0;
}

/* A case with no pair left: its shape, checked to fit and to close. */
static xf_status leaf(walk *w, const xfb_case *cas, xfb_ties *t, xf_error *err)
{
    if (++w->n_cases > XFB_CASES) {
        not_closed(w, "its matmul batch dims of two classes need more cases than allowed");
        return XF_OK;
    }
    int sized = case_sizes(w, t);
    if (sized <= 0) {
        if (sized < 0) not_closed(w, "a case of its matmul batch dims has no shape to check");
        return XF_OK;
    }
    const xf_rule *r = w->r;
    xfb_shape_plan *p = w->p;
    xf_shape *at = p->shapes + (size_t)p->n * (size_t)p->n_inputs;
    for (int i = 0; i < r->src.n_inputs; i++) {
        at[i] = r->src.values[r->src.inputs[i]].shape;
        for (int d = 0; d < at[i].rank; d++) {
            int root = vf_bounded_ties_find(t, vf_bounded_ties_slot(t, 0, r->src.inputs[i], d));
            at[i].dims[d] = (int64_t)t->blocks[root] * w->size[family(t, root)];
        }
    }
    xfb_domain dom;
    xf_status st = vf_bounded_domain_in_case(r, cas, at, &dom, err);
    if (st != XF_OK) return st;
    if (!dom.closed || dom.abstract) { /* the cases' shapes get no check with ReLUs abstract */
        char why[200];
        snprintf(why, sizeof why, "in a case of its matmul batch dims, %s",
                 dom.by_edges   ? "some are read near their ends"
                 : dom.abstract ? "some are summed before a non-polynomial operator"
                                : dom.why);
        not_closed(w, why);
        return XF_OK;
    }
    int fit;
    st = vf_bounded_shapes_fit(r, at, t, w->size, &fit, err);
    if (st != XF_OK) return st;
    if (!fit) {
        not_closed(w, "a case of its matmul batch dims is not admissible at the sizes it forces");
        return XF_OK;
    }
    for (int row = 0; row < p->n; row++) { /* a shape already checked */
        int same = 1;
        for (int i = 0; i < p->n_inputs && same; i++)
            same = xf_shape_equal(&at[i], &p->shapes[(size_t)row * (size_t)p->n_inputs + i]);
        if (same) return XF_OK;
    }
    p->n++, p->n_admissible++;
    return XF_OK;
}

/* The cases under `cas`: its ties, then a leaf or the first pair's three. */
static xf_status visit(walk *w, xfb_case *cas, xf_error *err)
{
    xfb_ties t;
    xf_status st = vf_bounded_ties_build_case(w->r, cas, &t, err);
    if (st != XF_OK) return st;
    if (!t.n_pairs) {
        st = leaf(w, cas, &t, err);
    } else if (cas->n + 1 > XFB_CASE_DEPTH) {
        not_closed(w, "its matmul batch dims of two classes need more cases than allowed");
    } else {
        int a = t.pair[0], b = t.pair[1];
        int facts[3][2] = {{a, b}, {a, -1}, {b, -1}}; /* equal, a's 1, b's 1 */
        for (int i = 0; i < 3 && st == XF_OK && w->closes; i++) {
            cas->d[cas->n].a = facts[i][0];
            cas->d[cas->n].b = facts[i][1];
            cas->n++;
            st = visit(w, cas, err);
            cas->n--;
        }
    }
    vf_bounded_ties_free(&t);
    return st;
}

xf_status vf_bounded_shape_plan_cases(const xf_rule *r, xfb_shape_plan *p, int *closes,
                                      int *n_cases, char *why, size_t why_size, xf_error *err)
{
    memset(p, 0, sizeof *p);
    *closes = 0;
    *n_cases = 0;
    if (why_size) why[0] = 0;
    walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.p = p;
    w.closes = 1;
    w.why = why;
    w.why_size = why_size;
    xf_status st = vf_bounded_ties_build(r, 1, &w.plain, err);
    if (st != XF_OK) return st;
    int n_in = r->src.n_inputs;
    size_t n = (size_t)w.plain.n + 1;
    w.pre = xf_malloc(sizeof *w.pre * n);
    w.most = xf_malloc(sizeof *w.most * n);
    w.size = xf_malloc(sizeof *w.size * n);
    p->n_inputs = n_in;
    p->shapes = xf_malloc(sizeof *p->shapes * (((size_t)XFB_CASES + 2) * (size_t)n_in + 1));
    if (!w.pre || !w.most || !w.size || !p->shapes) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory splitting a rule into cases");
    } else if (w.plain.n_pairs) {
        for (int i = 0; i < n_in; i++) p->shapes[i] = r->src.values[r->src.inputs[i]].shape;
        p->n = p->n_admissible = 1;
        xfb_case cas;
        memset(&cas, 0, sizeof cas);
        st = visit(&w, &cas, err);
        *closes = st == XF_OK && w.closes;
        *n_cases = w.n_cases;
        p->n_exact = p->cap = p->n;
    }
    xf_free(w.pre);
    xf_free(w.most);
    xf_free(w.size);
    vf_bounded_ties_free(&w.plain);
    if (st != XF_OK) vf_bounded_shape_plan_free(p);
    return st;
}
