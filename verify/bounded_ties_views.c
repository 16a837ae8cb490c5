/*
 * bounded_ties_views.c — reshapes in the strict ties (docs/verify.md,
 * "Proof by the own shapes", "an index through a reshape"). A reshape of a
 * kind the matcher applies by kind (xf_view_classify: flatten or unflatten
 * leading axes, split or merge the last one) keeps the axes it does not
 * touch, and its merged axis is the row-major product of the axes merged:
 * an index j of it is the tuple of their indices, and the element at that
 * tuple is the element at those indices. So the merged axis's class is a
 * *whole* made of its *parts*' classes, and renaming the indices of each
 * part by a permutation commutes with the reshape as it does with an
 * element-wise operator: the argument for indices holds with the parts for
 * the whole. The build ties the kept axes and records each merge here
 * (vf_bounded_ties_view); once every other tie is made,
 * vf_bounded_ties_views_settle keeps a whole only where that argument is
 * safe — every record of it names the same parts, no part is the whole, a
 * whole itself or twice in one, nothing else mixes, sums, slides a window
 * or makes blocks along the whole or its parts, and a whole the rule fixes
 * has every part fixed — and marks the others mixing, as every reshape was
 * before. A fixed whole with a part that is not fixed is also recorded
 * (free_split), kept or not, in a case too: a fixed product says nothing of
 * its factors, the matcher splits it as the model does while the own
 * shapes check the rule's split only, so bounded_domain.c proves nothing
 * by the own shapes then. Records are never kept within a case of matmul
 * batch dims; GENERAL reshapes and those of a rule whose reshapes' sizes
 * do not follow its dims (xf_rule_dims ok 0: the matcher then takes them
 * at their own target shapes, whatever they merge) are not recorded: they
 * mix, as before.
 */
#include "bounded_internal.h"

xf_status vf_bounded_views_follow(const xf_rule *r, int *follow, xf_error *err)
{
    xf_rule_dims *d = xf_malloc(sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    xf_status st = xf_rule_dims_infer(r, d, err);
    *follow = st == XF_OK && d->ok;
    if (st == XF_OK) xf_rule_dims_free(d);
    xf_free(d);
    return st;
}

static int slot_of(const xfb_ties *t, int k, int v, int d) { return t->base[k][v] + d; }

/* Records the merge of `n` axes of value `pv` from `first` into axis `at`
 * of value `wv`; the other axes of the two, in order, are one each. */
static void record(xfb_ties *t, int k, const xf_graph *g, int wv, int at, int pv, int first, int n)
{
    xfb_view *w = &t->views[t->n_views++];
    w->whole = slot_of(t, k, wv, at);
    w->n = n;
    for (int i = 0; i < n; i++) {
        w->part[i] = slot_of(t, k, pv, first + i);
        w->own[i] = g->values[pv].shape.dims[first + i];
    }
    int rw = g->values[wv].shape.rank;
    for (int d = 0, e = 0; d < rw; d++, e++) {
        if (d == at) {
            e += n - 1;
            continue;
        }
        vf_bounded_ties_join(t, slot_of(t, k, wv, d), slot_of(t, k, pv, e));
    }
}

int vf_bounded_ties_view(xfb_ties *t, const xf_graph *g, int k, const xf_node *nd)
{
    if (!t->strict || !t->views || nd->op != XF_OP_RESHAPE || nd->n_inputs < 1 ||
        nd->inputs[0] < 0)
        return 0;
    int x = nd->inputs[0], y = nd->outputs[0], n = 0;
    const xf_shape *in = &g->values[x].shape, *out = &g->values[y].shape;
    switch (xf_view_classify(in, out, &n)) {
    case XF_VIEW_FLATTEN: record(t, k, g, y, 0, x, 0, n); return 1;
    case XF_VIEW_UNFLATTEN: record(t, k, g, x, 0, y, 0, n); return 1;
    case XF_VIEW_SPLIT_LAST: record(t, k, g, x, in->rank - 1, y, in->rank - 1, 2); return 1;
    case XF_VIEW_MERGE_LAST: record(t, k, g, y, out->rank - 1, x, out->rank - 1, 2); return 1;
    default: return 0;
    }
}

/* Is record w's class safe as a whole (the header's conditions)? busy:
 * per root, an operator mixes, sums or reads near the ends along it. */
static int keeps(xfb_ties *t, const xfb_view *w, const unsigned char *busy)
{
    int root = vf_bounded_ties_find(t, w->whole), fixed_parts = 1;
    if (busy[root] || t->block_of[root] >= 0 || t->has_blocks[root]) return 0;
    for (int i = 0; i < w->n; i++) {
        int p = vf_bounded_ties_find(t, w->part[i]);
        if (p == root || busy[p] || t->block_of[p] >= 0 || t->has_blocks[p]) return 0;
        for (int j = 0; j < i; j++)
            if (vf_bounded_ties_find(t, w->part[j]) == p) return 0;
        for (int o = 0; o < t->n_views; o++) /* a part that is a whole itself */
            if (vf_bounded_ties_find(t, t->views[o].whole) == p) return 0;
        fixed_parts &= t->fixed[p];
    }
    if (t->fixed[root] && !fixed_parts) return 0;
    for (int o = 0; o < t->n_views; o++) { /* every record of the class names these parts */
        const xfb_view *u = &t->views[o];
        if (vf_bounded_ties_find(t, u->whole) != root) continue;
        if (u->n != w->n) return 0;
        for (int i = 0; i < w->n; i++)
            if (vf_bounded_ties_find(t, u->part[i]) != vf_bounded_ties_find(t, w->part[i]))
                return 0;
    }
    return 1;
}

xf_status vf_bounded_ties_views_settle(xfb_ties *t, xf_error *err)
{
    size_t n = (size_t)t->n + 1;
    t->view_of = xf_malloc(sizeof(int) * n);
    unsigned char *busy = xf_calloc(n, 1);
    if (!t->view_of || !busy) {
        xf_free(busy);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    }
    for (int i = 0; i < t->n; i++) t->view_of[i] = -1;
    t->free_split = -1;
    /* per root: an operator mixes, sums or reads near the ends along it */
    for (int i = 0; i < t->n; i++)
        busy[vf_bounded_ties_find(t, i)] |= t->mixing[i] || t->summed[i] || t->edge[i];
    for (int o = 0; o < t->n_views; o++) {
        const xfb_view *w = &t->views[o];
        int root = vf_bounded_ties_find(t, w->whole), fixed_parts = 1;
        for (int i = 0; i < w->n; i++) fixed_parts &= t->fixed[vf_bounded_ties_find(t, w->part[i])];
        if (t->fixed[root] && !fixed_parts && t->free_split < 0) t->free_split = w->whole;
        if (!t->cas && keeps(t, w, busy)) {
            t->view_of[root] = o;
            continue;
        }
        uint64_t mask = vf_bounded_mix_bit(XF_OP_RESHAPE); /* and what mixes them */
        for (int i = 0; i < t->n; i++) {
            int c = vf_bounded_ties_find(t, i), in = c == root;
            for (int j = 0; j < w->n; j++) in |= c == vf_bounded_ties_find(t, w->part[j]);
            if (in) mask |= t->mixing[i];
        }
        t->mixing[w->whole] |= mask;
        for (int i = 0; i < w->n; i++) t->mixing[w->part[i]] |= mask;
    }
    /* a whole one record rejected is mixing now: none of its records stays */
    for (int o = 0; o < t->n_views; o++) {
        int root = vf_bounded_ties_find(t, t->views[o].whole);
        int mixed = 0;
        for (int i = 0; i < t->n; i++)
            if (vf_bounded_ties_find(t, i) == root) mixed |= t->mixing[i] != 0;
        if (mixed) t->view_of[root] = -1;
    }
    for (int o = 0; o < t->n_views; o++) { /* every part fixed: so is the whole */
        int root = vf_bounded_ties_find(t, t->views[o].whole);
        if (t->view_of[root] != o) continue;
        int all = 1;
        for (int i = 0; i < t->views[o].n; i++) all &= t->fixed[vf_bounded_ties_find(t, t->views[o].part[i])];
        if (all) t->fixed[root] = 1;
    }
    xf_free(busy);
    return XF_OK;
}
