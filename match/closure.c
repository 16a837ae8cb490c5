/*
 * closure.c — moves of reshapes and slices applied until none is left: the
 * look-ahead that lets a search see the end of a chain of rewrites whose
 * intermediate graphs cost more (issue 28).
 *
 * A transformer runs fastest in ONNX Runtime when its [B, S, H] activations
 * are [B*S, H] between the first operator and the last (2-D MatMul + Add is
 * a Gemm). Proved rules get there one step at a time: a rule that brings in
 * a flatten and an unflatten around one matmul, then rules that move the
 * unflatten past the next operator (a bias add, GELU, a layer norm, the next
 * matmul), cancel it against a flatten or merge it into a reshape; every
 * step but the last costs a reshape more. A cost-bounded search rarely
 * walks such a chain. Here the moves are a direction, not a choice: a
 * *view move* is a proved rule that keeps the rule's other operators and
 *  - moves a reshape that adds axes (unflatten, split of the last axis,
 *    unsqueeze) toward the outputs, one that removes axes (flatten, merge
 *    of the last two, squeeze) or a slice toward the inputs, or
 *  - cancels or merges reshapes,
 * measured by the sum over views of their direction times the operators
 * above them, which never grows, and which falls, or the reshapes that add
 * axes become fewer, or (the others equal) the views above slices do: a
 * slice moving above a reshape.
 * xf_closure_run applies view moves (slices first, they remove work) and
 * merges identical reshapes reading one value (a rewrite that moves one
 * reader's flatten up leaves copies for the others) until none applies;
 * then, where an element-wise add or mul reads an unflattened value and a
 * 3-D value of its shape (a residual add), it writes the latter
 * unflatten(flatten(y)): the proved cancellation rule read backwards at y,
 * which no matcher can find (its source has no operator), and which lets
 * the moves take the add to 2-D. Every step is a proved rule at a located
 * place; the merge of two identical pure nodes is structural. A search applies the closure after
 * each action whose rule involves views (search_taso.c), so an action that
 * brings a flatten/unflatten pair in is valued with all the moves it
 * enables.
 *
 * A step costs what it changes, not the graph (issue 38: on BERT-base a
 * look-ahead may carry one unflatten through every later layer, some 200
 * steps over 400 nodes, and a search walks that for every view action it
 * prices): the graph is edited in place (match_apply_in_place, no copy per
 * move), the next move is matched only near the nodes the last one changed
 * and where moves had locations before (closure_walk.c), and the merge of
 * twins scans the graph only where a view the move changed has a twin, or
 * after a merge (one pass can leave twins behind it). The moves, their
 * order and the graph are the same as looking every move up over the whole
 * graph at every step.
 */
#include "ir/ir.h"
#include "match/match_internal.h"

#include <string.h>

/* +1: moves toward the inputs, -1: toward the outputs, 0: neither (a
 * reshape of another kind); 2: not a view. */
static int view_dir(const xf_graph *g, const xf_node *n)
{
    int k;
    switch (n->op) {
    case XF_OP_SLICE:
    case XF_OP_SQUEEZE:
    case XF_OP_FLATTEN: return 1;
    case XF_OP_UNSQUEEZE: return -1;
    case XF_OP_RESHAPE:
        switch (xf_view_classify(&g->values[n->inputs[0]].shape, &g->values[n->outputs[0]].shape, &k)) {
        case XF_VIEW_FLATTEN:
        case XF_VIEW_MERGE_LAST: return 1;
        case XF_VIEW_UNFLATTEN:
        case XF_VIEW_SPLIT_LAST: return -1;
        default: return 0;
        }
    default: return 2;
    }
}

/* A product by a scalar counts as one operator whichever way it is
 * written: ewmul with a rank-0 operand is scalar_mul (the enumerator keeps
 * one of the two, so a view move past a kept scaling may write it the
 * other way). */
static xf_op scaling_op(const xf_graph *g, const xf_node *n)
{
    if (n->op != XF_OP_MUL) return n->op;
    for (int s = 0; s < n->n_inputs; s++)
        if (n->inputs[s] >= 0 && g->values[n->inputs[s]].shape.rank == 0) return XF_OP_SCALAR_MUL;
    return n->op;
}

typedef struct side_key {
    int views, downs, phi;
    int slice_views; /* views above each slice, summed */
    int ops[XF_OP_COUNT]; /* non-view operators */
} side_key;

/* The key of one rule side: its views, those that add axes, the sum of
 * direction times non-view operators above each view, and the views above
 * each slice. */
static void side_of(const xf_graph *g, side_key *k)
{
    memset(k, 0, sizeof *k);
    int anc[XF_MATCH_MAX_NODES * 2], anc_views[XF_MATCH_MAX_NODES * 2];
    int n = g->n_nodes < XF_MATCH_MAX_NODES * 2 ? g->n_nodes : XF_MATCH_MAX_NODES * 2;
    int order[XF_MATCH_MAX_NODES * 2];
    if (xf_graph_topo_order(g, order, NULL) != XF_OK) return;
    for (int t = 0; t < n; t++) {
        int i = order[t];
        const xf_node *nd = &g->nodes[i];
        int above = 0, views_above = 0; /* non-view operators and views this node depends on */
        uint32_t seen = 0;
        for (int s = 0; s < nd->n_inputs; s++) {
            int v = nd->inputs[s];
            if (v < 0 || g->values[v].kind != XF_VALUE_NODE) continue;
            int p = g->values[v].producer;
            if (seen & (1u << p)) continue;
            seen |= 1u << p;
            above += anc[p] + (view_dir(g, &g->nodes[p]) == 2);
            views_above += anc_views[p] + (view_dir(g, &g->nodes[p]) != 2);
        }
        anc[i] = above;
        anc_views[i] = views_above;
        int d = view_dir(g, nd);
        if (d == 2) {
            k->ops[scaling_op(g, nd)]++;
            continue;
        }
        if (nd->op == XF_OP_SLICE) k->slice_views += views_above;
        k->views++;
        if (d < 0) k->downs++;
        k->phi += d * above;
    }
}

int xf_rule_is_view_move(const xf_rule *r)
{
    if (r->src.n_nodes > XF_MATCH_MAX_NODES * 2 || r->dst.n_nodes > XF_MATCH_MAX_NODES * 2) return 0;
    side_key s, d;
    side_of(&r->src, &s);
    side_of(&r->dst, &d);
    if (s.views == 0 || memcmp(s.ops, d.ops, sizeof s.ops) != 0) return 0;
    /* no view moves against its direction (an unflatten that goes back up
     * through a matmul to cancel a flatten undoes the layout), and one
     * moves with it, a view that adds axes goes, or a slice moves above a
     * reshape (a class token's slice through attention's head merge and
     * split) */
    if (d.phi > s.phi) return 0;
    return d.downs < s.downs || d.phi < s.phi ||
           (d.downs == s.downs && d.slice_views < s.slice_views);
}

int xf_rule_has_view_op(const xf_rule *r)
{
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int i = 0; i < g->n_nodes; i++)
            if (view_dir(g, &g->nodes[i]) != 2) return 1;
    }
    return 0;
}

/* Merges reshapes (and other views) that read one value with equal
 * parameters into the first of them; *merged counts them. A view whose
 * output is a graph output is kept (its name is the model's). */
static xf_status merge_twins(xf_graph *g, int *merged, xf_error *err)
{
    uint8_t *dead = xf_calloc((size_t)g->n_nodes + 1, 1);
    uint8_t *vdead = xf_calloc((size_t)g->n_values + 1, 1);
    if (!dead || !vdead) {
        xf_free(dead);
        xf_free(vdead);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory merging reshapes");
    }
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *a = &g->nodes[i];
        if (dead[i] || view_dir(g, a) == 2 || a->n_inputs != 1 || a->n_outputs != 1) continue;
        for (int j = i + 1; j < g->n_nodes; j++) {
            const xf_node *b = &g->nodes[j];
            if (dead[j] || b->op != a->op || b->n_inputs != 1 || b->n_outputs != 1 ||
                b->inputs[0] != a->inputs[0] || memcmp(&a->params, &b->params, sizeof a->params))
                continue;
            int from = b->outputs[0], to = a->outputs[0], out = 0;
            for (int o = 0; o < g->n_outputs; o++) out |= g->outputs[o] == from;
            if (out) continue;
            for (int k = 0; k < g->n_nodes; k++)
                for (int s = 0; s < g->nodes[k].n_inputs; s++)
                    if (g->nodes[k].inputs[s] == from) g->nodes[k].inputs[s] = to;
            dead[j] = 1;
            vdead[from] = 1;
            n++;
        }
    }
    xf_status st = n ? xf_edit_compact(g, dead, vdead, err) : XF_OK;
    xf_free(dead);
    xf_free(vdead);
    *merged += n;
    return st;
}

static int has_op(const xf_rule *r, xf_op op)
{
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == op) return 1;
    }
    return 0;
}

/* The action that cancels an unflatten of a flatten, unflatten(flatten(x))
 * => x (a proved rule of the set), or -1. */
static int cancel_action(const xf_ruleset *rs)
{
    for (int r = 0; r < xf_ruleset_count(rs); r++) {
        const xf_rule *rule = xf_ruleset_rule(rs, r);
        const xf_graph *s = &rule->src, *d = &rule->dst;
        if (s->n_nodes != 2 || d->n_nodes != 0 || s->n_outputs != 1 || d->n_outputs != 1) continue;
        const xf_value *o = &s->values[s->outputs[0]];
        if (o->kind != XF_VALUE_NODE || s->nodes[o->producer].op != XF_OP_RESHAPE) continue;
        const xf_node *outer = &s->nodes[o->producer];
        const xf_value *mid = &s->values[outer->inputs[0]];
        if (mid->kind != XF_VALUE_NODE || s->nodes[mid->producer].op != XF_OP_RESHAPE) continue;
        const xf_node *inner = &s->nodes[mid->producer];
        const xf_value *x = &s->values[inner->inputs[0]];
        int k1, k2;
        if (x->kind != XF_VALUE_INPUT || x->shape.rank != 3 ||
            xf_view_classify(&x->shape, &mid->shape, &k1) != XF_VIEW_FLATTEN || k1 != 2 ||
            xf_view_classify(&mid->shape, &o->shape, &k2) != XF_VIEW_UNFLATTEN || k2 != 2)
            continue;
        if (d->values[d->outputs[0]].kind == XF_VALUE_INPUT) return r;
    }
    return -1;
}

xf_status xf_closure_plan_make(const xf_ruleset *rs, const uint8_t *moves, xf_closure_plan **out,
                               xf_error *err)
{
    int n_rules = xf_ruleset_count(rs), n = 0;
    for (int r = 0; r < n_rules; r++) n += moves[r] != 0;
    xf_closure_plan *p = xf_calloc(1, sizeof *p);
    if (p) {
        p->first = xf_malloc(sizeof *p->first * ((size_t)n + 1));
        p->plain = xf_malloc(sizeof *p->plain * ((size_t)n + 1));
        p->reach = xf_malloc(sizeof *p->reach * ((size_t)n + 1));
        p->siblings = xf_calloc((size_t)n + 1, 1);
    }
    if (!p || !p->first || !p->plain || !p->reach || !p->siblings) {
        xf_closure_plan_free(p);
        *out = NULL;
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing %d view moves", n);
    }
    p->rs = rs;
    p->n = n;
    int k = 0, i = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int r = 0; r < n_rules; r++) {
            if (!moves[r]) continue;
            if (pass == 0) p->plain[i++] = r;
            if (has_op(xf_ruleset_rule(rs, r), XF_OP_SLICE) == (pass == 0)) p->first[k++] = r;
        }
    p->max_reach[0] = p->max_reach[1] = -1;
    for (int q = 0; q < n; q++) {
        const xf_pattern *pat = &rs->r[p->first[q]].pat;
        p->reach[q] = pat->n_nodes - 1;
        for (int t = 0; t < pat->n_nodes; t++)
            if (pat->steps[t].anchor == XF_ANCHOR_INPUT_USER) p->siblings[q] = 1;
        int *most = &p->max_reach[p->siblings[q]];
        if (p->reach[q] > *most) *most = p->reach[q];
    }
    p->cancel = cancel_action(rs);
    *out = p;
    return XF_OK;
}

void xf_closure_plan_free(xf_closure_plan *p)
{
    if (!p) return;
    xf_free(p->first);
    xf_free(p->plain);
    xf_free(p->reach);
    xf_free(p->siblings);
    xf_free(p);
}

static int is_view_output(const xf_graph *g, int v)
{
    return g->values[v].kind == XF_VALUE_NODE &&
           view_dir(g, &g->nodes[g->values[v].producer]) != 2;
}

/* The element-wise add or mul number `skip` (counting from 0) of an
 * unflattened value u and a 3-D value y of u's shape that no view makes:
 * y is written unflatten(flatten(y)) (the cancellation rule read
 * backwards, at y), so the view moves can take the operation to 2-D. The
 * node's index, or -1 when there is no such place (-2: out of memory). */
static int wrap_one(xf_graph *g, int skip, xf_error *err)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        if ((n->op != XF_OP_ADD && n->op != XF_OP_MUL) || n->n_inputs != 2) continue;
        for (int s = 0; s < 2; s++) {
            int u = n->inputs[s], y = n->inputs[1 - s], k;
            if (u < 0 || y < 0 || u == y || !is_view_output(g, u) || is_view_output(g, y)) continue;
            const xf_node *un = &g->nodes[g->values[u].producer];
            const xf_shape *ys = &g->values[y].shape, *us = &g->values[u].shape;
            if (un->op != XF_OP_RESHAPE || ys->rank != 3 || !xf_shape_equal(ys, us) ||
                g->values[y].kind == XF_VALUE_CONST ||
                xf_view_classify(&g->values[un->inputs[0]].shape, us, &k) != XF_VIEW_UNFLATTEN ||
                k != 2 || skip-- > 0)
                continue;
            xf_params f = xf_params_default(), back = xf_params_default();
            f.n_shape = 2;
            f.shape[0] = ys->dims[0] * ys->dims[1];
            f.shape[1] = ys->dims[2];
            back.n_shape = 3;
            for (int d = 0; d < 3; d++) back.shape[d] = ys->dims[d];
            int fv = xf_graph_op(g, XF_OP_RESHAPE, &f, &y, 1, err);
            int uv = fv < 0 ? -1 : xf_graph_op(g, XF_OP_RESHAPE, &back, &fv, 1, err);
            if (uv < 0) return -2;
            g->nodes[i].inputs[1 - s] = uv;
            return i;
        }
    }
    return -1;
}

/* A view move whose location includes node `node` of g (among the first
 * 16 locations of its rule), into m (m->rule -1: none). */
static xf_status move_at(const xf_closure_plan *p, const xf_graph *g, const xf_graph_index *ix,
                         int node, xf_match *m, xf_error *err)
{
    int which;
    m->rule = -1;
    xf_status st = match_first(p->rs, p->plain, p->n, g, ix, node, 16, m, &which, err);
    if (!st && which < 0) m->rule = -1;
    return st;
}

/* Writes the next wrappable place of *out (from number *skip on) as
 * unflatten(flatten(y)) and applies the view move that takes its operation
 * to 2-D, in one step; places where no move follows are skipped for good.
 * 1 when done, 0 when no place is left. */
static int wrap_and_move(const xf_closure_plan *p, xf_graph *out, int *skip, int *rule,
                         int64_t *copied, xf_error *err)
{
    for (;;) {
        xf_graph w;
        if (xf_graph_clone_shared(out, &w, err) != XF_OK) return -1;
        *copied += out->n_nodes;
        int node = wrap_one(&w, *skip, err);
        if (node < 0) {
            xf_graph_free(&w);
            return node == -1 ? 0 : -1;
        }
        xf_graph_index *ix = NULL;
        xf_match m;
        xf_status st = xf_graph_index_build(&w, &ix, err);
        if (!st) st = move_at(p, &w, ix, node, &m, err);
        xf_graph next;
        if (!st && m.rule >= 0) st = xf_match_apply(p->rs, &w, ix, &m, &next, err);
        if (!st && m.rule >= 0) *copied += w.n_nodes;
        xf_graph_index_free(ix);
        if (st) {
            xf_graph_free(&w);
            return -1;
        }
        if (m.rule < 0) { /* nothing takes it further: leave this place */
            xf_graph_free(&w);
            (*skip)++;
            continue;
        }
        xf_graph_free(&w);
        xf_graph_free(out);
        *out = next;
        *rule = m.rule;
        return 1;
    }
}

xf_status xf_closure_run(const xf_ruleset *rs, const uint8_t *moves, const xf_graph *g,
                         int max_steps, xf_graph *out, xf_closure_log *log, xf_error *err)
{
    xf_closure_plan *p = NULL;
    xf_status st = xf_closure_plan_make(rs, moves, &p, err);
    if (st) {
        if (log) memset(log, 0, sizeof *log);
        xf_graph_init(out);
        return st;
    }
    st = xf_closure_run_plan(p, g, max_steps, out, log, err);
    xf_closure_plan_free(p);
    return st;
}

/* 1 when a view the last move changed has a twin (the same operator and
 * parameters reading the same value): the only places where merge_twins
 * can find something new. */
static int twin_near(const xf_graph *g, const xf_graph_index *ix, const int *changed, int n)
{
    for (int i = 0; i < n; i++) {
        const xf_node *a = &g->nodes[changed[i]];
        if (view_dir(g, a) == 2 || a->n_inputs != 1 || a->n_outputs != 1 || a->inputs[0] < 0)
            continue;
        int k;
        const int *u = xf_graph_index_users(ix, a->inputs[0], &k);
        for (int j = 0; j < k; j++) {
            const xf_node *b = &g->nodes[u[j]];
            if (u[j] != changed[i] && b->op == a->op && b->n_inputs == 1 && b->n_outputs == 1 &&
                memcmp(&a->params, &b->params, sizeof a->params) == 0)
                return 1;
        }
    }
    return 0;
}

xf_status xf_closure_run_plan(const xf_closure_plan *p, const xf_graph *g, int max_steps,
                              xf_graph *out, xf_closure_log *log, xf_error *err)
{
    if (log) memset(log, 0, sizeof *log);
    xf_graph_init(out);
    match_walk *walk = NULL;
    xf_status st = match_walk_new(p, &walk, err);
    if (!st) st = xf_graph_clone_shared(g, out, err);
    int64_t copied = g->n_nodes;
    int steps = 0, merged = 0, skip = 0, cancel = p->cancel;
    int merging = 1; /* the last merge_twins merged: twins may be left behind it */
    /* the index of the graph before the last move, and which of its nodes
     * each node of *out copies (match_apply_in_place): the next index takes
     * their matching keys over instead of recomputing them */
    xf_graph_index *prev = NULL, *ix = NULL;
    int *from = NULL, from_cap = 0;

    while (st == XF_OK && steps < max_steps) {
        st = xf_graph_index_build_from(out, prev, prev ? from : NULL, &ix, err);
        xf_graph_index_free(prev);
        prev = NULL;
        /* merge_twins over the whole graph where it may merge something:
         * after a restart, after it merged, or at a view the move changed
         * (elsewhere it found nothing before) */
        int n_changed;
        const int *changed = match_walk_changed(walk, &n_changed);
        if (!st && (merging || !changed || twin_near(out, ix, changed, n_changed))) {
            int merged_before = merged;
            st = merge_twins(out, &merged, err);
            merging = merged > merged_before;
            if (!st && merging) { /* a merge renumbers the nodes */
                xf_graph_index_free(ix);
                ix = NULL;
                match_walk_restart(walk);
                st = xf_graph_index_build(out, &ix, err);
            }
        }
        xf_match m;
        m.rule = -1;
        if (!st) st = match_walk_next(walk, p, out, ix, &m, err);
        if (!st && m.rule < 0 && cancel >= 0) { /* no move left: one more place to take 2-D */
            xf_graph_index_free(ix);
            ix = NULL;
            int moved = -1, w = wrap_and_move(p, out, &skip, &moved, &copied, err);
            if (w < 0) st = err ? err->code : XF_ERR_NOMEM;
            if (w > 0) {
                if (log && log->n + 1 < XF_CLOSURE_LOG) {
                    log->rule[log->n] = XF_ACTION_BACKWARD(cancel);
                    log->rule[log->n + 1] = moved;
                }
                if (log) log->n += 2;
                steps += 2;
                match_walk_restart(walk);
                continue;
            }
        }
        if (!st && m.rule >= 0 && from_cap < out->n_nodes + XF_MATCH_MAX_NODES) {
            int cap = out->n_nodes + out->n_nodes / 2 + XF_MATCH_MAX_NODES;
            int *f = xf_realloc(from, sizeof *f * (size_t)cap);
            if (!f) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory applying a view move");
            else {
                from = f;
                from_cap = cap;
            }
        }
        if (st || m.rule < 0) break;
        match_walk_mark(walk, out, ix, &m);
        int n_old = out->n_nodes;
        st = match_apply_in_place(p->rs, out, ix, &m, from, err);
        if (!st) st = match_walk_moved(walk, out, n_old, from, err);
        prev = ix;
        ix = NULL;
        if (st) break;
        if (log && log->n < XF_CLOSURE_LOG) log->rule[log->n] = m.rule;
        if (log) log->n++;
        steps++;
    }
    if (log) {
        log->merged = merged;
        log->roots = walk ? match_walk_roots(walk) : 0;
        log->copied = copied;
    }
    if (st) xf_graph_free(out);
    xf_graph_index_free(prev);
    xf_graph_index_free(ix);
    xf_free(from);
    match_walk_free(walk);
    return st;
}
