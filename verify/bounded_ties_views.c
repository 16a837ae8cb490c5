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
 * or makes blocks along the whole or its parts, no part is fixed where the
 * matcher does not hold it, and a whole the rule fixes has every part so
 * held — and marks the others mixing, as every reshape was before; a
 * record it rejects mixes its whole and parts, which rejects every record
 * sharing one of their classes, so it settles again until none is (review
 * 41f, finding 2; R8 in docs/verify.md).
 *
 * Fixed where the rule applies. The sizes of a split's parts are the
 * matcher's: bind_dims binds an unflatten's lead dims and a split's head
 * count from the model. A part's class fixed (bounded_ties.c: a
 * generator's shape, a rule constant, a kernel...) keeps its own size
 * where the rule applies only when the part's own size is what the matcher
 * checks there (t->size): its symbolic dim (xf_rule_dims), which bind_dims
 * checks at a source value and the target's instantiation at a target
 * operator's output (a generator's is neither: sized from its consumer),
 * is a constant, its own size, or a product of dims of source inputs the
 * source reads, each in a fixed class that is no whole, so that the stored
 * domain holds each at its own size (bounded_domain.c, "fixed"). A tie of
 * the part's class to such a dim is not enough: one made at an
 * element-wise operator whose other operand's size the matcher does not
 * check (a global pool's, a convolution's, a source generator's) may
 * broadcast at the model (review 42f, finding 2). A generator is
 * sized from the model (its consumer), and an unflatten's or split's made
 * sizes are free variables of the validity domain, so a pin on them says
 * nothing of the input (review 41f, finding 1). A part fixed otherwise
 * rejects its record (its whole mixes, and a fixed whole blocks below);
 * a fixed whole with a part not so held is recorded (free_split), kept or
 * not, in a case too, its whole fixed as bounded_domain.c classifies it
 * (through its family of whole blocks too: review 42f, finding 1): a
 * fixed product says nothing of its factors, the matcher splits it as the
 * model does while the own shapes check the rule's split only, so
 * bounded_domain.c proves nothing by the own shapes then. A split
 * (unflatten, split of the last axis) that settling rejects, with a part
 * not so held, is recorded too (loose_split): its whole may be fixed only
 * through another reshape's product, which no class records (review 42h,
 * R7), and its parts are then held by nothing. Records are
 * never kept within a case of matmul batch dims; GENERAL reshapes and
 * those of a rule whose reshapes' sizes do not follow its dims
 * (xf_rule_dims ok 0: the matcher then takes them at their own target
 * shapes, whatever they merge) are not recorded: they mix, as before.
 */
#include "bounded_internal.h"

#include <string.h>

/* 1 when the source reads its input value v (bind_dims binds its dims
 * from the model there). */
static int read_input(const xf_graph *g, int v)
{
    for (int n = 0; n < g->n_nodes; n++)
        for (int j = 0; j < g->nodes[n].n_inputs; j++)
            if (g->nodes[n].inputs[j] == v) return 1;
    return 0;
}

/* x, a normalised symbolic size whose own size is `own`, is one the
 * matcher holds at `own` once the input dims in it keep their own size: a
 * constant, or a product of read source input dims (positive powers), own
 * at the own shapes. The bound keeps the product in range. */
static int own_monomial(const xf_rule *r, const xf_dimx *x, int64_t own, const int *input_slot)
{
    if (x->den <= 0 || x->num <= 0) return 0;
    int64_t value = x->num;
    for (int f = 0; f < x->n; f++) {
        int s = x->sym[f];
        if (s < 0 || s >= XF_RULE_DIMS_INPUT_SYMS || input_slot[s] < 0 || x->exp[f] <= 0) return 0;
        const xf_shape *in = &r->src.values[r->src.inputs[s / XF_MAX_DIMS]].shape;
        for (int e = 0; e < x->exp[f]; e++) {
            value *= in->dims[s % XF_MAX_DIMS];
            if (value <= 0 || value > (INT64_C(1) << 40)) return 0;
        }
    }
    return value == own * x->den;
}

/* Fills t->input_slot and t->size from the rule's symbolic dims d (a
 * generator's output dims are opaque there: xf_rule_dims sizes no value
 * without inputs, and a tie to an opaque dim binds nothing). */
static void mark_sizes(const xf_rule *r, const xf_rule_dims *d, xfb_ties *t)
{
    for (int s = 0; s < XF_RULE_DIMS_INPUT_SYMS; s++) t->input_slot[s] = -1;
    for (int i = 0; i < r->src.n_inputs && i < XF_RULE_DIMS_MAX_INPUTS; i++) {
        int v = r->src.inputs[i];
        for (int a = 0; read_input(&r->src, v) && a < r->src.values[v].shape.rank; a++)
            t->input_slot[i * XF_MAX_DIMS + a] = t->base[0][v] + a;
    }
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(r, k);
        for (int v = 0; v < g->n_values; v++)
            for (int a = 0; a < g->values[v].shape.rank; a++) {
                xf_dimx *x = &t->size[t->base[k][v] + a];
                if (v < d->n_values[k]) *x = d->val[k][v][a];
                if (v >= d->n_values[k] ||
                    !own_monomial(r, x, g->values[v].shape.dims[a], t->input_slot))
                    x->den = 0;
            }
    }
}

xf_status vf_bounded_ties_views_init(const xf_rule *r, xfb_ties *t, xf_error *err)
{
    xf_rule_dims *d = xf_malloc(sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    xf_status st = xf_rule_dims_infer(r, d, err);
    if (st == XF_OK && d->ok) {
        t->views = xf_malloc(sizeof *t->views * ((size_t)r->src.n_nodes + (size_t)r->dst.n_nodes + 1));
        t->size = xf_calloc((size_t)t->n + 1, sizeof *t->size);
        t->input_slot = xf_malloc(sizeof *t->input_slot * XF_RULE_DIMS_INPUT_SYMS);
        if (!t->views || !t->size || !t->input_slot)
            st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
        else
            mark_sizes(r, d, t);
    }
    xf_rule_dims_free(d);
    xf_free(d);
    return st;
}

static int slot_of(const xfb_ties *t, int k, int v, int d) { return t->base[k][v] + d; }

/* Records the merge of `n` axes of value `pv` from `first` into axis `at`
 * of value `wv`; the other axes of the two, in order, are one each. */
static void record(xfb_ties *t, int k, const xf_graph *g, int wv, int at, int pv, int first, int n,
                   int split)
{
    xfb_view *w = &t->views[t->n_views++];
    w->whole = slot_of(t, k, wv, at);
    w->split = split;
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
    case XF_VIEW_FLATTEN: record(t, k, g, y, 0, x, 0, n, 0); return 1;
    case XF_VIEW_UNFLATTEN: record(t, k, g, x, 0, y, 0, n, 1); return 1;
    case XF_VIEW_SPLIT_LAST: record(t, k, g, x, in->rank - 1, y, in->rank - 1, 2, 1); return 1;
    case XF_VIEW_MERGE_LAST: record(t, k, g, y, out->rank - 1, x, out->rank - 1, 2, 0); return 1;
    default: return 0;
    }
}

/* Class `root` is the whole of some record. */
static int a_whole(xfb_ties *t, int root)
{
    for (int o = 0; o < t->n_views; o++)
        if (vf_bounded_ties_find(t, t->views[o].whole) == root) return 1;
    return 0;
}

/* Part slot `slot` keeps its own size where the rule applies: the size the
 * matcher checks (a source value) or builds (a target reshape's) there is
 * its own (t->size: a constant, or a product of read source input dims
 * each in a fixed class that is no whole, which the stored domain holds at
 * its own size: bounded_domain.c, "fixed"). A tie of the class alone says
 * nothing: one made at an element-wise operator whose other operand's size
 * the matcher does not check (a global pool's, a source generator's) may
 * broadcast at the model (review 42f, finding 2). */
static int slot_enforced(xfb_ties *t, int slot)
{
    const xf_dimx *x = &t->size[slot];
    if (x->den == 0) return 0;
    for (int f = 0; f < x->n; f++) {
        int root = vf_bounded_ties_find(t, t->input_slot[x->sym[f]]);
        if (!t->fixed[root] || a_whole(t, root)) return 0;
    }
    return 1;
}

/* Every part of w fixed, each where the rule applies. */
static int parts_enforced(xfb_ties *t, const xfb_view *w)
{
    for (int i = 0; i < w->n; i++)
        if (!t->fixed[vf_bounded_ties_find(t, w->part[i])] || !slot_enforced(t, w->part[i]))
            return 0;
    return 1;
}

/* Slot i's class fixed as bounded_domain.c classifies it: some class of
 * its family (its block base and the classes made of its blocks) fixed,
 * so a whole fixed through whole blocks counts (review 42f, finding 1). */
static int family_fixed(xfb_ties *t, int i)
{
    int root = vf_bounded_ties_find(t, i);
    int f = t->block_of[root] >= 0 ? t->block_of[root] : root;
    for (int j = 0; j < t->n; j++) {
        int r = vf_bounded_ties_find(t, j);
        if ((r == f || t->block_of[r] == f) && t->fixed[r]) return 1;
    }
    return 0;
}

/* Is record w's class safe as a whole (the header's conditions)? busy:
 * per root, an operator mixes, sums or reads near the ends along it. */
static int keeps(xfb_ties *t, const xfb_view *w, const unsigned char *busy)
{
    int root = vf_bounded_ties_find(t, w->whole);
    if (busy[root] || t->block_of[root] >= 0 || t->has_blocks[root]) return 0;
    for (int i = 0; i < w->n; i++) {
        int p = vf_bounded_ties_find(t, w->part[i]);
        if (p == root || busy[p] || t->block_of[p] >= 0 || t->has_blocks[p]) return 0;
        if (t->fixed[p] && !slot_enforced(t, w->part[i])) return 0; /* fixed where the matcher does not look */
        for (int j = 0; j < i; j++)
            if (vf_bounded_ties_find(t, w->part[j]) == p) return 0;
        if (a_whole(t, p)) return 0; /* a part that is a whole itself */
    }
    if (t->fixed[root] && !parts_enforced(t, w)) return 0;
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

/* Record w rejected: its whole's and parts' slots mix, with the reshape,
 * by whatever mixes any of their classes. */
static void reject(xfb_ties *t, const xfb_view *w)
{
    int root = vf_bounded_ties_find(t, w->whole);
    uint64_t mask = vf_bounded_mix_bit(XF_OP_RESHAPE);
    for (int i = 0; i < t->n; i++) {
        int c = vf_bounded_ties_find(t, i), in = c == root;
        for (int j = 0; j < w->n; j++) in |= c == vf_bounded_ties_find(t, w->part[j]);
        if (in) mask |= t->mixing[i];
    }
    t->mixing[w->whole] |= mask;
    for (int i = 0; i < w->n; i++) t->mixing[w->part[i]] |= mask;
}

xf_status vf_bounded_ties_views_settle(xfb_ties *t, xf_error *err)
{
    size_t n = (size_t)t->n + 1;
    t->view_of = xf_malloc(sizeof(int) * n);
    unsigned char *busy = xf_malloc(n);
    unsigned char *out = xf_calloc((size_t)t->n_views + 1, 1); /* per record: rejected */
    if (!t->view_of || !busy || !out) {
        xf_free(busy), xf_free(out);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    }
    for (int i = 0; i < t->n; i++) t->view_of[i] = -1;
    t->free_split = -1;
    for (int o = 0; o < t->n_views; o++) {
        const xfb_view *w = &t->views[o];
        if (t->free_split < 0 && family_fixed(t, w->whole) && !parts_enforced(t, w))
            t->free_split = w->whole;
    }
    /* a rejected record mixes its whole and parts, which may make another
     * record's busy: until no record is rejected. Once is not enough: a
     * record kept beside a rejected one that shares a class with it would
     * have its whole classified by its parts alone, past the mixing on the
     * whole (R8: x's rows unflattened and also merged by a flatten whose
     * element 1 a slice reads; renaming the rows' indices does not commute
     * with that, and the flatten's rejection says so on the rows only) */
    for (int changed = 1; changed;) {
        changed = 0;
        memset(busy, 0, n);
        for (int i = 0; i < t->n; i++) /* per root: an operator mixes, sums or reads near the ends */
            busy[vf_bounded_ties_find(t, i)] |= t->mixing[i] || t->summed[i] || t->edge[i];
        for (int o = 0; o < t->n_views; o++) {
            if (out[o] || (!t->cas && keeps(t, &t->views[o], busy))) continue;
            reject(t, &t->views[o]);
            out[o] = 1, changed = 1;
        }
    }
    t->loose_split = -1;
    for (int o = 0; o < t->n_views; o++) {
        int root = vf_bounded_ties_find(t, t->views[o].whole);
        if (out[o] && t->views[o].split && t->loose_split < 0 && !parts_enforced(t, &t->views[o]))
            t->loose_split = t->views[o].whole;
        if (out[o]) continue;
        t->view_of[root] = o;
        if (parts_enforced(t, &t->views[o])) t->fixed[root] = 1; /* so is the whole */
    }
    xf_free(busy), xf_free(out);
    return XF_OK;
}
