/*
 * bounded_ties_blocks.c — the strict ties' second stage: the axes the first
 * stage (bounded_ties.c) leaves open until every other tie is made.
 *
 * Matmul batch dims. They broadcast, so an operand's batch dim may be 1
 * where the other's is not; but where the operands' dims (those present)
 * are one class, they are equal at every admissible shape, so the result's
 * dim is that class too and the matmul maps batch index b to batch index b
 * (an operand without the dim is used whole at every b). Tied then;
 * otherwise every one of them is mixing, as before.
 *
 * Concat and split axes, in whole blocks. A class is "made of blocks" of a
 * plain class B when its size is c copies of B's at every admissible
 * shape: the axis of a concat whose operands' axes are made of blocks of
 * one B (c the sum of theirs), of a split into k equal parts (the
 * enumerator's parts, re-derived at every shape) of such an axis when k
 * divides c (each part c/k blocks); a plain class is one block of itself.
 * A plain class cut by such a split into k equal parts is k blocks of the
 * parts' class, which becomes the base (the split's input and its parts are
 * then in whole-block form as above): the validity domain makes the axis
 * divisible by k wherever the rule applies, and the verifier, the matcher
 * (a source split matches k equal parts only, a target split is cut into k
 * equal parts) and the enumerator re-derive the parts as d/k, so the
 * class is k copies of the parts' size at every admissible shape.
 * Classes of equal form are equal at every shape and are joined, one block
 * of B is B. A dst split whose outputs are all rule outputs takes its sizes
 * from the source outputs (bounded_shapes.c), and a source split that cuts
 * freely (ir's xf_rule_split_cuts_freely, the matcher's own test) is cut by
 * the matcher as the model's split is (so never taken for an equal cut:
 * its sizes are its outputs'); any other source split is an equal cut as
 * above, whatever reads its parts. Either
 * is whole blocks when those are blocks of the input's B that sum to its
 * c. Anything else (operands of
 * different classes, a split that cuts a block, a class of two forms) keeps
 * the axis mixing.
 *
 * Why whole blocks are an index no operator mixes (bounded_domain.c): an
 * index along such an axis is (block q, offset t), t in 0..n-1 for B's
 * size n; a concat puts its operands' blocks one after another, an aligned
 * split takes consecutive whole blocks, so both map (q, t) to (q', t) with
 * q' fixed by the structure, never by n, and every other operator along
 * the axis maps index to index. Renaming the offsets by one permutation of
 * 0..n-1 in every block of every value of B's family therefore commutes
 * with both sides, and an element depends only on inputs at its own
 * offsets: the argument for indices carries over with offsets for
 * indices, the most offsets of the family in one value for k. A sum over
 * such an axis in a polynomial rule sums over blocks and offsets; each
 * monomial holds an input entry at its summation offset, so the argument
 * for summed classes carries over with supports counted in offsets.
 * Two classes with forms c blocks of B1 and c blocks of B2 tied together
 * say c n1 = c n2: B1 and B2 are joined.
 *
 * Layouts: a concat's axis of operands of different plain classes (the
 * axis of `concat(a, b)`, a and b's sizes free of each other) is, at every
 * admissible shape, the parts' sizes one after another: its index is
 * (part q, offset t), t within part q's class. Its layout is the list of
 * the parts' plain classes (an operand made of c blocks of B gives c parts
 * B, an operand that is a layout its parts). Every class tied to the axis
 * must have that one layout (a class given two, `concat(a, b)` tied to
 * `concat(b, a)`, or a layout tied to a class of blocks, stays mixing), and
 * the axis is not split: a concat keeps (q, t) of its operands' indices and
 * every other operator along the axis maps index to index, so renaming the
 * offsets of one class by a permutation, in every value of it and in every
 * part of it of every layout, commutes with both sides
 * (bounded_domain.c says when that is an argument: "a concat of classes").
 * Not in a case of the batch dims (the cases' shapes are checked by the
 * forms of blocks alone).
 *
 * Within a case of the batch dims of two classes (bounded_cases.c) its
 * facts come first: classes equal are joined, a class that is 1 is fixed,
 * and an operand's batch dim of such a class broadcasts (used whole at
 * every batch index, as a missing dim is), so the matmul is
 * index-preserving in the other operand's class.
 */
#include "bounded_internal.h"

#include <string.h>

/* The forms of one pass: per root, the base slot (-1 plain) and blocks. */
typedef struct forms {
    int *base, *c;
    unsigned char *conflict;
} forms;

typedef struct stage {
    const xf_rule *r;
    xfb_ties *t;
    forms cur, next;
    int same_a, same_b; /* two bases of one class with equal counts: equal, to join */
} stage;


static int slot_of(const stage *s, int k, int v, int d)
{
    const xf_graph *g = vf_rule_side(s->r, k);
    int rank = g->values[v].shape.rank, i = d < 0 ? d + rank : d;
    return i >= 0 && i < rank ? s->t->base[k][v] + i : -1;
}

/* B (a root) and c of the class of slot a under forms f. */
static void form_of(const stage *s, const forms *f, int a, int *b, int *c)
{
    int root = vf_bounded_ties_find(s->t, a);
    if (f->base[root] >= 0 && !f->conflict[root]) {
        *b = vf_bounded_ties_find(s->t, f->base[root]);
        *c = f->c[root];
    } else {
        *b = root;
        *c = 1;
    }
}

/* Records that slot a's class is c blocks of b in f. */
static void assign(stage *s, forms *f, int a, int b, int c)
{
    int root = vf_bounded_ties_find(s->t, a);
    if (root == b) {
        if (c != 1) f->conflict[root] = 1; /* n = c n: no shape */
        return;
    }
    if (f->base[root] < 0) {
        f->base[root] = b;
        f->c[root] = c;
    } else if (vf_bounded_ties_find(s->t, f->base[root]) != b || f->c[root] != c) {
        f->conflict[root] = 1;
        if (f->c[root] == c) /* c n_1 = c n_2: the bases are equal */
            s->same_a = vf_bounded_ties_find(s->t, f->base[root]), s->same_b = b;
    }
}

/* A target split whose outputs are all rule outputs (sized from the
 * source's), or a source split that cuts freely (xf_rule_split_cuts_freely:
 * cut anywhere by the matcher): either way its sizes are its outputs'. */
static int sized_by_outputs(const stage *s, int k, const xf_node *nd)
{
    const xf_graph *g = vf_rule_side(s->r, k);
    if (!k) return xf_rule_split_cuts_freely(s->r, (int)(nd - g->nodes));
    for (int o = 0; o < nd->n_outputs; o++)
        if (!xf_graph_is_output(g, nd->outputs[o])) return 0;
    return 1;
}

/* The axis of a concat or split node, -1 when not one (or ranks differ). */
static int block_axis(const stage *s, int k, const xf_node *nd)
{
    if ((nd->op != XF_OP_CONCAT && nd->op != XF_OP_SPLIT) || nd->n_inputs < 1 ||
        nd->inputs[0] < 0)
        return -1;
    const xf_graph *g = vf_rule_side(s->r, k);
    int rank = g->values[nd->inputs[0]].shape.rank;
    for (int i = 0; i < nd->n_inputs + nd->n_outputs; i++) {
        int v = i < nd->n_inputs ? nd->inputs[i] : nd->outputs[i - nd->n_inputs];
        if (v < 0 || g->values[v].shape.rank != rank) return -1;
    }
    return xf_norm_axis(nd->params.axis, rank);
}

/* Whether nd keeps whole blocks under forms f; assigns its outputs' forms
 * into `into` when given. */
static int node_blocks(stage *s, int k, const xf_node *nd, const forms *f, forms *into)
{
    int a = block_axis(s, k, nd);
    if (a < 0) return 0;
    const xf_graph *g = vf_rule_side(s->r, k);
    int b, c;
    form_of(s, f, slot_of(s, k, nd->inputs[0], a), &b, &c);
    if (nd->op == XF_OP_CONCAT) {
        for (int i = 1; i < nd->n_inputs; i++) {
            int bi, ci;
            form_of(s, f, slot_of(s, k, nd->inputs[i], a), &bi, &ci);
            if (bi != b) return 0;
            c += ci;
        }
        if (into) assign(s, into, slot_of(s, k, nd->outputs[0], a), b, c);
        int bo, co;
        form_of(s, f, slot_of(s, k, nd->outputs[0], a), &bo, &co);
        return bo == b && co == c;
    }
    if (sized_by_outputs(s, k, nd)) {
        int sum = 0;
        for (int o = 0; o < nd->n_outputs; o++) {
            int bo, co;
            form_of(s, f, slot_of(s, k, nd->outputs[o], a), &bo, &co);
            if (bo != b) return 0;
            sum += co;
        }
        return sum == c;
    }
    int parts = vf_bounded_split_parts(nd, &g->values[nd->inputs[0]].shape);
    if (!parts || parts != nd->n_outputs) return 0;
    if (c % parts) { /* a plain class cut: its parts are one class, as the next pass sees */
        int b0, c0;
        form_of(s, f, slot_of(s, k, nd->outputs[0], a), &b0, &c0);
        for (int o = 1; into && c == 1 && o < nd->n_outputs; o++)
            assign(s, into, slot_of(s, k, nd->outputs[o], a), b0, c0);
        return 0;
    }
    int ok = 1;
    for (int o = 0; o < nd->n_outputs; o++) {
        int slot = slot_of(s, k, nd->outputs[o], a), bo, co;
        if (into) assign(s, into, slot, b, c / parts);
        form_of(s, f, slot, &bo, &co);
        ok &= bo == b && co == c / parts;
    }
    return ok;
}

/* The input of an equal split is `parts` copies of its first part: said
 * only of a class nothing else of the pass gave a form, so that a plain
 * class cut becomes blocks of its parts while a concat of four blocks
 * split in halves keeps the concat's form (both are true, and one class
 * holds one form). */
static void equal_split_input(stage *s, int k, const xf_node *nd, const forms *f, forms *into)
{
    int a = block_axis(s, k, nd);
    if (a < 0 || nd->op != XF_OP_SPLIT || sized_by_outputs(s, k, nd)) return;
    const xf_graph *g = vf_rule_side(s->r, k);
    int parts = vf_bounded_split_parts(nd, &g->values[nd->inputs[0]].shape);
    if (!parts || parts != nd->n_outputs) return;
    int x = slot_of(s, k, nd->inputs[0], a), root = vf_bounded_ties_find(s->t, x), b0, c0;
    form_of(s, f, slot_of(s, k, nd->outputs[0], a), &b0, &c0);
    if (into->base[root] < 0 && !into->conflict[root]) assign(s, into, x, b0, parts * c0);
}

static void forms_clear(forms *f, int n)
{
    for (int i = 0; i < n; i++) f->base[i] = -1, f->c[i] = 1, f->conflict[i] = 0;
}

/* Forms to a fixed point from scratch under the current ties; 0 when they
 * do not settle (then nothing is made of blocks). */
static int settle(stage *s)
{
    int n = s->t->n;
    forms_clear(&s->cur, n);
    for (int round = 0; round < 2 * n + 4; round++) {
        forms_clear(&s->next, n);
        for (int k = 0; k < 2; k++) {
            const xf_graph *g = vf_rule_side(s->r, k);
            for (int i = 0; i < g->n_nodes; i++) node_blocks(s, k, &g->nodes[i], &s->cur, &s->next);
        }
        for (int k = 0; k < 2; k++) {
            const xf_graph *g = vf_rule_side(s->r, k);
            for (int i = 0; i < g->n_nodes; i++) equal_split_input(s, k, &g->nodes[i], &s->cur, &s->next);
        }
        int same = 1;
        for (int i = 0; i < n && same; i++)
            same = s->cur.base[i] == s->next.base[i] && s->cur.c[i] == s->next.c[i] &&
                   s->cur.conflict[i] == s->next.conflict[i];
        forms tmp = s->cur;
        s->cur = s->next;
        s->next = tmp;
        if (same) break;
        if (round == 2 * n + 3) return 0;
    }
    for (int i = 0; i < n; i++) { /* a base made of blocks itself: a cycle */
        if (s->cur.base[i] < 0) continue;
        int b = vf_bounded_ties_find(s->t, s->cur.base[i]);
        if (s->cur.base[b] >= 0) s->cur.conflict[i] = 1;
    }
    return 1;
}

/* Joins a matmul's batch dims that are one class; 1 when it joined. An
 * operand's dim whose class the case sets to 1 broadcasts: it is used
 * whole at every batch index, as a missing dim is; so does one of a class
 * the rule fixes at 1. With mix, marks the
 * dims of two classes mixing and records the first such pair. */
static int tie_batches(stage *s, int k, const xf_node *nd, int mix)
{
    if (nd->op != XF_OP_MATMUL) return 0;
    const xf_graph *g = vf_rule_side(s->r, k);
    int y = nd->outputs[0], ry = g->values[y].shape.rank, joined = 0;
    for (int i = 0; i < 2; i++)
        if (g->values[nd->inputs[i]].shape.rank < 2) return 0; /* mixed whole by the first stage */
    for (int d = 0; d < ry - 2; d++) {
        int root = -1, one = 1, unit = -1, at[2] = {-1, -1}, ys = slot_of(s, k, y, d);
        for (int i = 0; i < 2; i++) {
            int v = nd->inputs[i], dv = d - ry + g->values[v].shape.rank;
            if (dv < 0) continue;
            int a = vf_bounded_ties_find(s->t, slot_of(s, k, v, dv));
            if (s->t->one[a] || (s->t->fixed[a] && g->values[v].shape.dims[dv] == 1)) {
                unit = a;
                continue;
            }
            at[i] = slot_of(s, k, v, dv);
            one &= root < 0 || root == a;
            root = a;
        }
        if (root < 0) root = unit; /* every operand's dim is 1: so is the result's */
        if (root < 0) continue;
        if (one && !mix) {
            if (vf_bounded_ties_find(s->t, ys) != root) vf_bounded_ties_join(s->t, ys, root), joined = 1;
        } else if (mix && (!one || vf_bounded_ties_find(s->t, ys) != root)) {
            s->t->mixing[ys] |= vf_bounded_mix_bit(XF_OP_MATMUL);
            for (int i = 0; i < 2; i++) {
                int v = nd->inputs[i], dv = d - ry + g->values[v].shape.rank;
                if (dv >= 0) s->t->mixing[slot_of(s, k, v, dv)] |= vf_bounded_mix_bit(XF_OP_MATMUL);
            }
            if (!one && s->t->n_pairs++ == 0) s->t->pair[0] = at[0], s->t->pair[1] = at[1];
        }
    }
    return joined;
}

/* Joins classes of equal form (one block of B is B); 1 when it joined. */
static int join_equal_forms(stage *s)
{
    int n = s->t->n, joined = 0;
    for (int i = 0; i < n; i++) {
        if (s->cur.base[i] < 0 || s->cur.conflict[i] || vf_bounded_ties_find(s->t, i) != i) continue;
        int b = vf_bounded_ties_find(s->t, s->cur.base[i]);
        if (s->cur.c[i] == 1 && b != i) {
            vf_bounded_ties_join(s->t, b, i);
            return 1;
        }
        for (int j = i + 1; j < n; j++)
            if (s->cur.base[j] >= 0 && !s->cur.conflict[j] && vf_bounded_ties_find(s->t, j) == j &&
                vf_bounded_ties_find(s->t, s->cur.base[j]) == b && s->cur.c[j] == s->cur.c[i]) {
                vf_bounded_ties_join(s->t, i, j);
                joined = 1;
            }
        if (joined) return 1;
    }
    return 0;
}

/* The plain classes slot a's class is made of, in order, into p (at most
 * XFB_LAYOUT_PARTS); -1 when more. */
static int parts_of(const stage *s, int a, int *p)
{
    const xfb_ties *t = s->t;
    int root = vf_bounded_ties_find(s->t, a), n = 0;
    if (t->n_parts[root]) {
        for (int q = 0; q < t->n_parts[root]; q++)
            p[n++] = vf_bounded_ties_find(s->t, t->parts[root * XFB_LAYOUT_PARTS + q]);
        return n;
    }
    int b, c;
    form_of(s, &s->cur, a, &b, &c);
    if (c > XFB_LAYOUT_PARTS) return -1;
    for (int q = 0; q < c; q++) p[n++] = b;
    return n;
}

/* The layout concat nd gives its axis, into p; its count, 0 when none
 * (fewer than two different classes, too many parts, or a part that is a
 * layout or a class of blocks itself). */
static int concat_layout(const stage *s, int k, const xf_node *nd, int *p)
{
    int a = block_axis(s, k, nd), n = 0, mixed = 0;
    if (a < 0 || nd->op != XF_OP_CONCAT) return 0;
    for (int i = 0; i < nd->n_inputs; i++) {
        int q[XFB_LAYOUT_PARTS], m = parts_of(s, slot_of(s, k, nd->inputs[i], a), q);
        if (m < 0 || n + m > XFB_LAYOUT_PARTS) return 0;
        for (int j = 0; j < m; j++) p[n++] = q[j];
    }
    for (int q = 0; q < n; q++) {
        mixed |= p[q] != p[0];
        if (s->cur.base[p[q]] >= 0 || s->cur.conflict[p[q]]) return 0;
    }
    return mixed ? n : 0;
}

/* Whether concat nd gives its axis the layout its class holds. */
static int keeps_layout(const stage *s, int k, const xf_node *nd)
{
    int p[XFB_LAYOUT_PARTS], m = concat_layout(s, k, nd, p);
    if (!m) return 0;
    int root = vf_bounded_ties_find(s->t, slot_of(s, k, nd->outputs[0], block_axis(s, k, nd)));
    if (s->t->n_parts[root] != m) return 0;
    for (int q = 0; q < m; q++)
        if (vf_bounded_ties_find(s->t, s->t->parts[root * XFB_LAYOUT_PARTS + q]) != p[q]) return 0;
    return 1;
}

/* Gives each concat's axis of several classes its layout (t->n_parts,
 * t->parts), to a fixed point over nested concats; a class given two
 * layouts, one tied to a class of blocks, or one that is its own part gets
 * none. Fails only when out of memory. */
static xf_status layouts(stage *s, xf_error *err)
{
    xfb_ties *t = s->t;
    size_t n = (size_t)t->n + 1;
    unsigned char *bad = xf_calloc(n, 1);
    t->n_parts = xf_calloc(n, 1);
    t->parts = xf_malloc(n * XFB_LAYOUT_PARTS * sizeof *t->parts);
    if (!bad || !t->n_parts || !t->parts) {
        xf_free(bad);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
    }
    int total = s->r->src.n_nodes + s->r->dst.n_nodes;
    for (int round = 0, changed = 1; changed && round <= total; round++) {
        changed = 0;
        for (int k = 0; k < 2; k++) {
            const xf_graph *g = vf_rule_side(s->r, k);
            for (int i = 0; i < g->n_nodes; i++) {
                const xf_node *nd = &g->nodes[i];
                int p[XFB_LAYOUT_PARTS], m = concat_layout(s, k, nd, p);
                if (!m) continue;
                int root = vf_bounded_ties_find(t, slot_of(s, k, nd->outputs[0], block_axis(s, k, nd)));
                int *have = t->parts + (size_t)root * XFB_LAYOUT_PARTS, same = t->n_parts[root] == m;
                for (int q = 0; q < m && same; q++) same = vf_bounded_ties_find(t, have[q]) == p[q];
                if (same || bad[root]) continue;
                if (t->n_parts[root]) bad[root] = 1; /* two layouts */
                t->n_parts[root] = (unsigned char)m;
                memcpy(have, p, sizeof *p * (size_t)m);
                changed = 1;
            }
        }
    }
    for (int root = 0; root < t->n; root++) {
        if (!t->n_parts[root]) continue;
        int ok = !bad[root] && s->cur.base[root] < 0 && !s->cur.conflict[root];
        for (int q = 0; ok && q < t->n_parts[root]; q++) {
            int p = vf_bounded_ties_find(t, t->parts[root * XFB_LAYOUT_PARTS + q]);
            ok = p != root && !t->n_parts[p];
        }
        if (!ok) bad[root] = 1;
    }
    for (int root = 0; root < t->n; root++)
        if (bad[root]) t->n_parts[root] = 0;
    xf_free(bad);
    return XF_OK;
}

/* The axes that stay mixing at the end: matmul batch dims of two classes,
 * concats and splits that do not keep whole blocks, classes of two forms. */
static void mix_rest(stage *s, int settled)
{
    xfb_ties *t = s->t;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(s->r, k);
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[i];
            tie_batches(s, k, nd, 1);
            if (nd->op != XF_OP_CONCAT && nd->op != XF_OP_SPLIT) continue;
            int a = xf_norm_axis(nd->params.axis, g->values[nd->inputs[0]].shape.rank);
            if (settled && node_blocks(s, k, nd, &s->cur, NULL)) continue;
            if (settled && t->n_parts && keeps_layout(s, k, nd)) continue;
            for (int j = 0; j < nd->n_inputs + nd->n_outputs; j++) {
                int v = j < nd->n_inputs ? nd->inputs[j] : nd->outputs[j - nd->n_inputs];
                int slot = a >= 0 && v >= 0 ? slot_of(s, k, v, a) : -1;
                if (slot >= 0) t->mixing[slot] |= vf_bounded_mix_bit(nd->op);
            }
        }
    }
    for (int i = 0; i < t->n; i++) {
        int root = vf_bounded_ties_find(t, i);
        if (settled && s->cur.conflict[root]) t->mixing[i] |= XFB_MIX_FORMS;
    }
    for (int i = 0; i < t->n; i++) {
        int root = vf_bounded_ties_find(t, i);
        if (i != root || !settled || s->cur.base[root] < 0 || s->cur.conflict[root]) continue;
        t->block_of[root] = vf_bounded_ties_find(t, s->cur.base[root]);
        t->blocks[root] = s->cur.c[root];
        t->has_blocks[t->block_of[root]] = 1;
    }
}

xf_status vf_bounded_ties_blocks(const xf_rule *r, xfb_ties *t, xf_error *err)
{
    size_t n = (size_t)t->n + 1;
    stage s = {r, t, {0}, {0}, -1, -1};
    s.cur.base = xf_malloc(sizeof(int) * n);
    s.cur.c = xf_malloc(sizeof(int) * n);
    s.cur.conflict = xf_malloc(n);
    s.next.base = xf_malloc(sizeof(int) * n);
    s.next.c = xf_malloc(sizeof(int) * n);
    s.next.conflict = xf_malloc(n);
    t->block_of = xf_malloc(sizeof(int) * n);
    t->blocks = xf_malloc(sizeof(int) * n);
    t->has_blocks = xf_calloc(n, 1);
    xf_status st = XF_OK;
    if (!s.cur.base || !s.cur.c || !s.cur.conflict || !s.next.base || !s.next.c ||
        !s.next.conflict || !t->block_of || !t->blocks || !t->has_blocks) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory tying a rule's dims");
        goto done;
    }
    for (int i = 0; i < t->n; i++) t->block_of[i] = -1, t->blocks[i] = 1;
    for (int i = 0; t->cas && i < t->cas->n; i++) { /* the case's facts */
        int a = t->cas->d[i].a, b = t->cas->d[i].b;
        if (b >= 0) {
            vf_bounded_ties_join(t, a, b);
        } else {
            int root = vf_bounded_ties_find(t, a);
            t->one[root] = t->fixed[root] = 1;
        }
    }
    int settled = 1;
    for (int changed = 1, guard = 0; changed && guard <= t->n; guard++) {
        changed = 0;
        for (int k = 0; k < 2; k++) {
            const xf_graph *g = vf_rule_side(r, k);
            for (int i = 0; i < g->n_nodes; i++) changed |= tie_batches(&s, k, &g->nodes[i], 0);
        }
        s.same_a = -1;
        settled = settle(&s);
        if (settled && s.same_a >= 0) {
            vf_bounded_ties_join(t, s.same_a, s.same_b);
            changed = 1;
        }
        if (settled && !changed) changed = join_equal_forms(&s);
    }
    if (settled) settled = settle(&s);
    if (settled && !t->cas) st = layouts(&s, err);
    if (st == XF_OK) mix_rest(&s, settled);
done:
    xf_free(s.cur.base);
    xf_free(s.cur.c);
    xf_free(s.cur.conflict);
    xf_free(s.next.base);
    xf_free(s.next.c);
    xf_free(s.next.conflict);
    return st;
}
