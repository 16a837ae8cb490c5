/*
 * bounded_shapes.c — the input shapes at which the bounded check runs a
 * rule, and the rule rebuilt at one of them (xf_verify_rule_at_shapes).
 *
 * Admissible: every rule input keeps its rank (scalars stay scalars) and
 * takes dims in 1..max_dim, and both sides pass shape inference (the
 * operator table's xf_op_infer) with equal output shapes. Parameters the
 * enumerator derives from the input shapes (enumerate/instantiate.c) are
 * re-derived the same way: a split whose sizes are k equal parts of its
 * axis (d/k each) splits the new axis into k equal parts and, as in the
 * enumerator, needs it divisible by k, except a target split whose every
 * output is a rule output: as the matcher instantiates it, its sizes are
 * those of the source outputs they replace; and a source split that cuts
 * freely (ir's xf_rule_split_cuts_freely, the matcher's own test): the
 * matcher cuts it as the model's split is cut, so away from the own input
 * shapes it is cut unequally first, then into equal parts (cut_unequally).
 * Every other source split is k equal parts, as the matcher matches it; a
 * convolution whose group (> 1) equals its input channels
 * is depthwise and keeps group = channels. Every other parameter — kernel
 * sizes, strides, pads, axes, permutations, other split sizes, generator
 * shapes — is the rule's and stays fixed (conv's inference ties the
 * weight's spatial dims to its kernel parameter). Element-wise binary
 * operators whose operands have equal shapes in the rule keep them equal,
 * as the enumerator's non-broadcasting variants do. A rule whose validity
 * domain is known (ir/domain.c; the worker sets it before the check) is
 * checked only where the domain holds: a verdict says where it holds.
 *
 * Search. The operators tie dims together (bounded_ties.c: ewadd's operands,
 * matmul's inner dims, conv channels, the non-concatenated axes of a
 * concat, the two sides' shared inputs and their outputs...): the ties,
 * built once per rule, group the input dims into classes, and a class tied
 * to a constant (a kernel size, a generator's shape) keeps the rule's
 * value. The free classes take values 1..max_dim: every
 * combination when there are at most XFB_SHAPE_TRIES, else the uniform ones
 * plus a fixed pseudo-random sample of that many. The ties only make the
 * search small; each candidate is decided by running shape inference over
 * both sides (no graph is built), so a tie missed here costs time, never
 * correctness. Sizes that are sums or halves (concat, split) stay
 * unconstrained classes and inference filters them.
 *
 * Choice (deterministic). The admissible assignments are sorted by total
 * input elements, then by dims. Checked are: the rule's own shapes; then
 * small ones — those with at most a quarter of the own input elements (or
 * XFB_SMALL_MIN), which is where degenerate and mixed dims (1s, 1x2 against
 * 2x1) live — all of them, or max_shapes - 2 picked evenly along that
 * order; last the largest assignment (the most input elements, dims of 4).
 * Assignments between small and largest are not checked: the cost of the
 * check grows steeply with the elements (a nested 3x3 conv at 4x4 images
 * costs ten times the same rule at 3x3), and measured on the taso 3-op
 * rules every refutation at other shapes showed at small ones. A rule whose
 * own shapes needed the solver (normal forms differ: max-pool against
 * relu, nested relus) gets the exact check (bounded.c, vf_bounded_shape_plan_trim)
 * at its own shapes and a few small ones no larger than the own, not at
 * the largest, where every output element is a solver query of its own;
 * the float probe still runs at every planned shape.
 */
#include "bounded_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XFB_SHAPE_TRIES 4096
#define XFB_SMALL_MIN 64 /* input elements an assignment may have and count as small */
#define XFB_DOMAIN_MAX_INPUTS 64 /* rule inputs a domain is checked over */

/* ------------------------------------------------------ re-derived params */

/* A reshape at other input shapes does what it does at the rule's own
 * (xf_view_classify), as the enumerator made it (enumerate/instantiate.c):
 * a flatten merges the same leading axes, an unflatten and a split of the
 * last axis keep their sizes but the last one they make, which takes the
 * rest; any other reshape keeps its target. 0 when it does not apply. */
static int view_at(const xf_graph *g, const xf_node *nd, const xf_shape *own0, const xf_shape *in,
                   xf_params *p)
{
    const xf_shape *own_out = &g->values[nd->outputs[0]].shape;
    int k, r = in->rank, n = 0;
    xf_view_kind kind = xf_view_classify(own0, own_out, &k);
    int64_t d[XF_MAX_DIMS], rest;
    switch (kind) {
    case XF_VIEW_FLATTEN:
        d[n] = 1;
        for (int i = 0; i < k; i++) d[n] *= in->dims[i];
        n++;
        for (int i = k; i < r; i++) d[n++] = in->dims[i];
        break;
    case XF_VIEW_UNFLATTEN:
        rest = in->dims[0];
        for (int i = 0; i < k - 1; i++) {
            d[n] = own_out->dims[i];
            if (rest % d[n]) return 0;
            rest /= d[n++];
        }
        d[n++] = rest;
        for (int i = 1; i < r; i++) d[n++] = in->dims[i];
        break;
    case XF_VIEW_SPLIT_LAST:
        for (int i = 0; i < r - 1; i++) d[n++] = in->dims[i];
        d[n] = own_out->dims[own_out->rank - 2];
        if (in->dims[r - 1] % d[n]) return 0;
        d[n + 1] = in->dims[r - 1] / d[n];
        n += 2;
        break;
    case XF_VIEW_MERGE_LAST:
        for (int i = 0; i < r - 2; i++) d[n++] = in->dims[i];
        d[n++] = in->dims[r - 2] * in->dims[r - 1];
        break;
    default:
        return 1;
    }
    p->n_shape = n;
    memset(p->shape, 0, sizeof p->shape);
    for (int i = 0; i < n; i++) p->shape[i] = d[i];
    return 1;
}

/* The graph output that value v is, -1 when none. */
static int output_index(const xf_graph *g, int v)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == v) return o;
    return -1;
}

/* A split of the target whose every output is a rule output takes its
 * sizes from the source outputs they replace, as the matcher does
 * (agent/rewrite/instantiate.c); 1 when it did (0: not such a split). */
static int split_from_outputs(const xf_graph *g, const xf_node *nd, const xf_shape *src_out,
                              int rank, xf_params *p)
{
    if (!src_out || nd->op != XF_OP_SPLIT || nd->n_outputs > XF_MAX_SPLIT) return 0;
    int a = xf_norm_axis(p->axis, rank);
    if (a < 0) return 0;
    for (int k = 0; k < nd->n_outputs; k++)
        if (output_index(g, nd->outputs[k]) < 0) return 0;
    for (int k = 0; k < nd->n_outputs; k++) {
        const xf_shape *s = &src_out[output_index(g, nd->outputs[k])];
        p->split[k] = s->rank == rank ? s->dims[a] : -1;
    }
    return 1;
}

/* A source split that cuts freely (xf_rule_split_cuts_freely) cut unequally: (1, ..., 1, d - k + 1) of its input's d along the axis;
 * 0 when d has fewer than k elements. */
static int unequal_cut(const xf_node *nd, const xf_shape *in, xf_params *p)
{
    int a = xf_norm_axis(p->axis, in->rank), k = nd->n_outputs;
    if (a < 0 || k > XF_MAX_SPLIT) return 0;
    int64_t d = in->dims[a];
    if (d < k) return 0;
    p->n_split = k;
    for (int o = 0; o < k; o++) p->split[o] = o < k - 1 ? 1 : d - k + 1;
    return 1;
}

/* ------------------------------------------------------------ generators */

int vf_bounded_generator(xf_op op)
{
    return op == XF_OP_CONST_IDENTITY_CONV || op == XF_OP_CONST_IDENTITY_MATRIX ||
           op == XF_OP_CONST_ONES || op == XF_OP_CONST_POOL;
}

/* The shapes the values of one side have so far: sh[v], or none (NULL)
 * for the output of a generator not sized yet. */
typedef struct sizing {
    const xf_shape *sh;
    const uint8_t *unsized; /* per value */
} sizing;

static const xf_shape *shape_now(const sizing *z, int v)
{
    return v < 0 || z->unsized[v] ? NULL : &z->sh[v];
}

/* The parameters of generator gn of side graph g, read first by node
 * `user` at input `slot`, sized by the one rule the matcher applies
 * (xf_rule_generator_shape): from its consumer's operands' shapes now
 * where, at the rule's own shapes (g's, with the same generators not sized
 * yet), the consumer gives it its own shape; else the rule's shape. The
 * bounded check sizes them so on both sides, so a rule with a generator is
 * checked at the sizes it is applied at. Until 2026-12-01 the consumer
 * sized it at every shape but the own ones, so a pool the conv input's
 * channels resize at the own shapes was checked at a size the matcher never
 * binds, and a rule no such size fits was proved near the ends at none
 * (review 44a, F1). */
static xf_params generator_from_user(const xf_graph *g, const xf_node *gn, const xf_node *user,
                                     int slot, const sizing *z)
{
    const xf_shape *own[2] = {NULL, NULL}, *now[2] = {NULL, NULL};
    for (int i = 0; i < 2 && i < user->n_inputs; i++) {
        int v = user->inputs[i];
        now[i] = shape_now(z, v);
        own[i] = now[i] ? &g->values[v].shape : NULL;
    }
    xf_params p;
    xf_rule_generator_shape(gn->op, &gn->params, user->op, user->n_inputs, slot, own, now, &p);
    return p;
}

/* The parameters of node nd (of graph g, at the rule's own shapes) when its
 * inputs have shapes `in`; 0 when the node does not apply there. src_out:
 * for the target side, the source outputs' shapes (NULL for the source).
 * unequal: nd is a source split that cuts freely, to be cut unequally
 * (unequal_cut); else nd is sized as any other node. */
static int params_at(const xf_graph *g, const xf_node *nd, const xf_shape *in,
                     const xf_shape *src_out, int unequal, xf_params *p)
{
    *p = nd->params;
    if (nd->n_inputs < 1 || nd->inputs[0] < 0) return 1;
    const xf_shape *own0 = &g->values[nd->inputs[0]].shape;
    if (vf_bounded_ew_binary(nd->op) && nd->n_inputs == 2 &&
        xf_shape_equal(own0, &g->values[nd->inputs[1]].shape) && !xf_shape_equal(&in[0], &in[1]))
        return 0;
    if (split_from_outputs(g, nd, src_out, in[0].rank, p)) return 1;
    if (unequal) return unequal_cut(nd, &in[0], p);
    int parts = vf_bounded_split_parts(nd, own0);
    if (parts) {
        int a = xf_norm_axis(p->axis, in[0].rank);
        int64_t d = in[0].dims[a];
        if (d < parts || d % parts) return 0;
        for (int o = 0; o < parts; o++) p->split[o] = d / parts;
    }
    if (vf_bounded_depthwise(nd, own0)) p->group = (int32_t)in[0].dims[1];
    if (nd->op == XF_OP_RESHAPE) return view_at(g, nd, own0, &in[0], p);
    return 1;
}

/* ----------------------------------------------------------------- search */

/* The search state of one rule. */
typedef struct search {
    const xf_rule *r;
    int max_dim, n_in;
    int k;            /* free classes */
    int *cls;         /* per input dim (flattened, rule input order): class, -1 fixed */
    int n_dims;
    int *order[2];    /* topological node order per side */
    xf_shape *sh[2];  /* scratch: a shape per value, per side */
    xf_shape *in_sh;  /* scratch: one node's input shapes */
    xf_shape *src_out; /* the source outputs' shapes, once the source is inferred */
    uint8_t *unsized[2]; /* per value of a side: a generator's output not sized yet */
    xf_dtype *in_dt;
    int max_node_in;
} search;

static void search_free(search *s)
{
    xf_free(s->cls);
    for (int k = 0; k < 2; k++) xf_free(s->order[k]), xf_free(s->sh[k]), xf_free(s->unsized[k]);
    xf_free(s->in_sh);
    xf_free(s->in_dt);
    xf_free(s->src_out);
}


/* The classes of the rule's input dims (bounded_ties.c); fills s->cls and s->k. */
static xf_status build_classes(search *s, xf_error *err)
{
    const xf_rule *r = s->r;
    xfb_ties t;
    xf_status st = vf_bounded_ties_build(r, 0, &t, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < s->n_in; i++) s->n_dims += r->src.values[r->src.inputs[i]].shape.rank;
    s->cls = xf_malloc(sizeof(int) * ((size_t)s->n_dims + 1));
    int *root_cls = xf_malloc(sizeof(int) * ((size_t)t.n + 1));
    if (!s->cls || !root_cls) {
        xf_free(root_cls);
        vf_bounded_ties_free(&t);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
    }
    for (int i = 0; i < t.n; i++) root_cls[i] = -1;
    s->k = 0;
    for (int i = 0, j = 0; i < s->n_in; i++) {
        int a = r->src.inputs[i];
        for (int d = 0; d < r->src.values[a].shape.rank; d++, j++) {
            int root = vf_bounded_ties_find(&t, vf_bounded_ties_slot(&t, 0, a, d));
            if (t.fixed[root]) {
                s->cls[j] = -1;
                continue;
            }
            if (root_cls[root] < 0) root_cls[root] = s->k++;
            s->cls[j] = root_cls[root];
        }
    }
    xf_free(root_cls);
    vf_bounded_ties_free(&t);
    return XF_OK;
}

static xf_status search_init(search *s, const xf_rule *r, int max_dim, xf_error *err)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->max_dim = max_dim;
    s->n_in = r->src.n_inputs;
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = vf_rule_side(r, k);
        s->order[k] = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
        s->sh[k] = xf_malloc(sizeof(xf_shape) * ((size_t)g->n_values + 1));
        s->unsized[k] = xf_malloc((size_t)g->n_values + 1);
        if (!s->order[k] || !s->sh[k] || !s->unsized[k])
            return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
        xf_status st = xf_graph_topo_order(g, s->order[k], err);
        if (st != XF_OK) return st;
        for (int i = 0; i < g->n_nodes; i++) {
            const xf_node *nd = &g->nodes[i];
            if (nd->op == XF_OP_OPAQUE)
                return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: rule has an opaque node");
            if (nd->n_inputs > s->max_node_in) s->max_node_in = nd->n_inputs;
        }
    }
    s->in_sh = xf_malloc(sizeof(xf_shape) * ((size_t)s->max_node_in + 1));
    s->in_dt = xf_malloc(sizeof(xf_dtype) * ((size_t)s->max_node_in + 1));
    s->src_out = xf_malloc(sizeof(xf_shape) * ((size_t)r->src.n_outputs + 1));
    if (!s->in_sh || !s->in_dt || !s->src_out)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
    return build_classes(s, err);
}

/* Input shapes for class values `val` (fixed dims keep the rule's). */
static void compose(const search *s, const int *val, xf_shape *in)
{
    for (int i = 0, j = 0; i < s->n_in; i++) {
        in[i] = s->r->src.values[s->r->src.inputs[i]].shape;
        for (int d = 0; d < in[i].rank; d++, j++)
            if (s->cls[j] >= 0) in[i].dims[d] = val[s->cls[j]];
    }
}

/* Shape inference over one side with the inputs at `in`; 1 when every node
 * applies (s->sh[k] then holds every value's shape). */
static int infer_side(search *s, int k, const xf_shape *in, int unequal)
{
    const xf_graph *g = vf_rule_side(s->r, k);
    xf_shape *sh = s->sh[k];
    if (k == 1) /* the target's splits follow the source outputs (params_at) */
        for (int o = 0; o < s->r->src.n_outputs; o++) s->src_out[o] = s->sh[0][s->r->src.outputs[o]];
    for (int v = 0; v < g->n_values; v++) sh[v] = g->values[v].shape;
    for (int i = 0; i < g->n_inputs; i++) sh[g->inputs[i]] = in[i];
    uint8_t *unsized = s->unsized[k];
    memset(unsized, 0, (size_t)g->n_values + 1);
    for (int i = 0; i < g->n_nodes; i++)
        if (vf_bounded_generator(g->nodes[i].op)) unsized[g->nodes[i].outputs[0]] = 1;
    sizing z = {sh, unsized};
    xf_shape out_sh[XF_MAX_SPLIT];
    xf_dtype out_dt[XF_MAX_SPLIT];
    for (int i = 0; i <= g->n_nodes; i++) {
        if (i == g->n_nodes) { /* generators no operator reads: the rule's size, */
            for (int o = 0; k == 1 && o < g->n_outputs; o++) /* or the output they replace */
                if (unsized[g->outputs[o]]) sh[g->outputs[o]] = s->src_out[o];
            for (int v = 0; v < g->n_values; v++) unsized[v] = 0;
            break;
        }
        const xf_node *nd = &g->nodes[s->order[k][i]];
        if (nd->n_outputs > XF_MAX_SPLIT) return 0;
        if (vf_bounded_generator(nd->op)) continue; /* sized at its first consumer */
        for (int j = 0; j < nd->n_inputs; j++) { /* size the generators nd reads first */
            int v = nd->inputs[j];
            if (v < 0 || !unsized[v]) continue;
            const xf_node *gn = &g->nodes[g->values[v].producer];
            xf_params gp = generator_from_user(g, gn, nd, j, &z);
            xf_dtype gdt;
            if (xf_op_infer(gn->op, &gp, 0, NULL, NULL, 1, &gdt, &sh[v], NULL) != XF_OK) return 0;
            unsized[v] = 0;
        }
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            s->in_dt[j] = v < 0 ? XF_DTYPE_INVALID : g->values[v].dtype;
            if (v >= 0) s->in_sh[j] = sh[v];
            else memset(&s->in_sh[j], 0, sizeof s->in_sh[j]);
        }
        xf_params p;
        int cut = unequal && !k && xf_rule_split_cuts_freely(s->r, s->order[k][i]);
        if (!params_at(g, nd, s->in_sh, k ? s->src_out : NULL, cut, &p)) return 0;
        if (xf_op_infer(nd->op, &p, nd->n_inputs, s->in_dt, s->in_sh, nd->n_outputs, out_dt,
                        out_sh, NULL) != XF_OK)
            return 0;
        for (int j = 0; j < nd->n_outputs; j++) sh[nd->outputs[j]] = out_sh[j];
    }
    return 1;
}

/* Whether to try the unequal cut of the rule's source splits that cut
 * freely first at inputs `in` (then the equal one): the matcher cuts such
 * a split as the model is cut, and the target split that replaces it part
 * for part follows the cut (sized by the outputs). A check at any one cut
 * that covers the axis covers every other (xf_rule_split_cuts_freely says
 * why); the unequal one also exists where k does not divide the axis, which
 * the validity domain admits (ir/domain_infer.c). At the own inputs the
 * rule is its own. */
static int cut_unequally(const xf_rule *r, const xf_shape *in)
{
    int own = 1, has_free = 0;
    for (int i = 0; i < r->src.n_inputs && own; i++)
        own = xf_shape_equal(&in[i], &r->src.values[r->src.inputs[i]].shape);
    for (int i = 0; i < r->src.n_nodes && !own && !has_free; i++)
        has_free = xf_rule_split_cuts_freely(r, i);
    return has_free;
}

static int admissible(search *s, const xf_shape *in)
{
    const xf_domain *dom = &s->r->domain;
    if (dom->known && dom->n > 0) { /* checked where it is claimed to hold */
        const xf_shape *p[XFB_DOMAIN_MAX_INPUTS];
        if (s->n_in > XFB_DOMAIN_MAX_INPUTS) return 0;
        for (int i = 0; i < s->n_in; i++) p[i] = &in[i];
        if (!xf_domain_holds(dom, p, s->n_in)) return 0;
    }
    for (int unequal = cut_unequally(s->r, in); unequal >= 0; unequal--) {
        if (!infer_side(s, 0, in, unequal) || !infer_side(s, 1, in, unequal)) continue;
        int same = 1;
        for (int o = 0; o < s->r->src.n_outputs && same; o++)
            same = xf_shape_equal(&s->sh[0][s->r->src.outputs[o]], &s->sh[1][s->r->dst.outputs[o]]);
        if (same) return 1;
    }
    return 0;
}

/* One admissible assignment: total input elements and the k class values. */
typedef struct cand {
    int64_t numel;
    int k;
    int *val;
} cand;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    if (a->numel != b->numel) return a->numel < b->numel ? -1 : 1;
    for (int i = 0; i < a->k; i++)
        if (a->val[i] != b->val[i]) return a->val[i] < b->val[i] ? -1 : 1;
    return 0;
}

/* Next candidate of the exhaustive walk (mixed radix over 1..max_dim);
 * 0 after the last. */
static int next_all(int *val, int k, int max_dim)
{
    for (int i = k - 1; i >= 0; i--) {
        if (val[i] < max_dim) {
            val[i]++;
            return 1;
        }
        val[i] = 1;
    }
    return 0;
}

static int64_t total_numel(const xf_shape *sh, int n)
{
    int64_t t = 0;
    for (int i = 0; i < n; i++) t += xf_shape_numel(&sh[i]);
    return t;
}

xf_status vf_bounded_shape_plan_trim(xfb_shape_plan *p, int keep, xf_error *err)
{
    if (keep < 2 || p->n <= keep || p->n_exact <= keep) return XF_OK;
    size_t w = (size_t)p->n_inputs;
    int64_t own = total_numel(p->shapes, p->n_inputs);
    int n_small = 0; /* small ones no larger than the own shapes (they come sorted) */
    while (n_small < p->n - 2 &&
           total_numel(p->shapes + (size_t)(n_small + 1) * w, p->n_inputs) <= own)
        n_small++;
    int take = keep - 1 < n_small ? keep - 1 : n_small;
    xf_shape *order = xf_malloc((size_t)p->n * w * sizeof *order);
    uint8_t *chosen = xf_calloc((size_t)p->n, 1);
    if (!order || !chosen) {
        xf_free(order);
        xf_free(chosen);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory planning shapes");
    }
    chosen[0] = 1;
    for (int i = 0; i < take; i++)
        chosen[1 + (take < 2 ? i : (int)((int64_t)i * (n_small - 1) / (take - 1)))] = 1;
    int k = 0;
    for (int pass = 1; pass >= 0; pass--) /* the chosen first, then the rest */
        for (int i = 0; i < p->n; i++)
            if (chosen[i] == pass) memcpy(order + (size_t)k++ * w, p->shapes + (size_t)i * w,
                                          sizeof *order * w);
    xf_free(p->shapes);
    xf_free(chosen);
    p->shapes = order;
    p->n_exact = 1 + take;
    return XF_OK;
}

void vf_bounded_shape_plan_free(xfb_shape_plan *p)
{
    xf_free(p->shapes);
    memset(p, 0, sizeof *p);
}

/* Collects the admissible assignments other than the rule's own into
 * *cands (values in one block *vals). */
static xf_status collect(search *s, const xf_shape *own, cand **cands, int *n_cands, int **vals,
                         xf_error *err)
{
    int k = s->k, tries = 1, exhaustive = 1;
    for (int i = 0; i < k && exhaustive; i++) {
        if (tries > XFB_SHAPE_TRIES / s->max_dim) exhaustive = 0;
        tries *= s->max_dim;
    }
    if (!exhaustive) tries = XFB_SHAPE_TRIES;
    *cands = xf_malloc(sizeof **cands * (size_t)tries + 1);
    *vals = xf_malloc(sizeof **vals * ((size_t)tries * (size_t)k + 1));
    int *val = xf_malloc(sizeof *val * ((size_t)k + 1));
    xf_shape *in = xf_malloc(sizeof *in * ((size_t)s->n_in + 1));
    if (!*cands || !*vals || !val || !in) {
        xf_free(val);
        xf_free(in);
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory choosing shapes");
    }
    xf_rng rng;
    xf_rng_seed(&rng, 1);
    *n_cands = 0;
    for (int i = 0; i < k; i++) val[i] = 1;
    for (int t = 0; t < tries; t++) {
        if (!exhaustive) { /* uniform assignments first, then a fixed sample */
            for (int i = 0; i < k; i++)
                val[i] = t < s->max_dim ? t + 1 : 1 + (int)(xf_rng_next(&rng) % (uint64_t)s->max_dim);
        } else if (t > 0 && !next_all(val, k, s->max_dim)) {
            break;
        }
        compose(s, val, in);
        int same = 1;
        for (int i = 0; i < s->n_in && same; i++) same = xf_shape_equal(&in[i], &own[i]);
        if (same || !admissible(s, in)) continue;
        cand *c = &(*cands)[(*n_cands)++];
        c->k = k;
        c->val = *vals + (size_t)(*n_cands - 1) * (size_t)k;
        memcpy(c->val, val, sizeof *val * (size_t)k);
        c->numel = 0;
        for (int i = 0; i < s->n_in; i++) c->numel += xf_shape_numel(&in[i]);
    }
    xf_free(val);
    xf_free(in);
    return XF_OK;
}


/* The plan from the sorted admissible assignments: own shapes, then up to
 * max_shapes - 2 small ones evenly spaced in ascending order, then the
 * largest. */
static xf_status choose(const search *s, const xf_shape *own, const cand *cands, int n_cands,
                        int max_shapes, xfb_shape_plan *p, xf_error *err)
{
    int64_t own_numel = total_numel(own, s->n_in);
    int64_t small_max = own_numel / 4 > XFB_SMALL_MIN ? own_numel / 4 : XFB_SMALL_MIN;
    int n_small = 0; /* candidates before the largest that count as small */
    while (n_small < n_cands - 1 && cands[n_small].numel <= small_max) n_small++;
    int largest = n_cands > 0 && max_shapes > 1;
    int take = max_shapes - 1 - largest < n_small ? max_shapes - 1 - largest : n_small;
    if (take < 0) take = 0;
    p->n = 1 + take + largest;
    p->cap = max_shapes;
    p->shapes = xf_malloc(sizeof *p->shapes * (size_t)p->n * (size_t)p->n_inputs + 1);
    if (!p->shapes) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    memcpy(p->shapes, own, sizeof *own * (size_t)p->n_inputs);
    for (int i = 0; i < take; i++) {
        int c = take < 2 ? i : (int)((int64_t)i * (n_small - 1) / (take - 1));
        compose(s, cands[c].val, p->shapes + (size_t)(i + 1) * (size_t)p->n_inputs);
    }
    if (largest)
        compose(s, cands[n_cands - 1].val, p->shapes + (size_t)(p->n - 1) * (size_t)p->n_inputs);
    return XF_OK;
}

xf_status vf_bounded_shape_plan_make(const xf_rule *r, int max_dim, int max_shapes, xfb_shape_plan *p,
                              xf_error *err)
{
    memset(p, 0, sizeof *p);
    p->n_inputs = r->src.n_inputs;
    search s;
    cand *cands = NULL;
    int *vals = NULL, n_cands = 0;
    xf_status st = search_init(&s, r, max_dim, err);
    xf_shape *own = xf_malloc(sizeof *own * ((size_t)p->n_inputs + 1));
    if (st == XF_OK && !own) st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int i = 0; st == XF_OK && i < p->n_inputs; i++) own[i] = r->src.values[r->src.inputs[i]].shape;
    if (st == XF_OK && max_shapes > 1) st = collect(&s, own, &cands, &n_cands, &vals, err);
    if (st == XF_OK) {
        if (n_cands > 1) qsort(cands, (size_t)n_cands, sizeof *cands, cand_cmp);
        int u = 0; /* the sample may repeat an assignment */
        for (int i = 0; i < n_cands; i++)
            if (u == 0 || cand_cmp(&cands[u - 1], &cands[i]) != 0) cands[u++] = cands[i];
        n_cands = u;
        p->n_admissible = 1 + n_cands;
        st = choose(&s, own, cands, n_cands, max_shapes, p, err);
        p->n_exact = p->n;
    }
    if (st != XF_OK) vf_bounded_shape_plan_free(p);
    xf_free(own);
    xf_free(cands);
    xf_free(vals);
    search_free(&s);
    return st;
}

/* The own shapes with every input dim of edge class c set to val[c] (its
 * blocks of it). */
static void compose_edges(const xf_rule *r, const xfb_domain *dom, const int *val, xf_shape *in)
{
    for (int i = 0, j = 0; i < r->src.n_inputs; i++) {
        in[i] = r->src.values[r->src.inputs[i]].shape;
        for (int d = 0; d < in[i].rank; d++, j++)
            if (j < XFB_EDGE_DIMS && dom->edge_class[j] >= 0)
                in[i].dims[d] = (int64_t)dom->edge_blocks[j] * val[dom->edge_class[j]];
    }
}

/* Index of grid point val (sizes 1..top per class) in row-major order. */
static int grid_index(const xfb_domain *dom, const int *val)
{
    int at = 0;
    for (int c = 0; c < dom->n_edge_classes; c++) at = at * dom->edge_top[c] + val[c] - 1;
    return at;
}

xf_status vf_bounded_shape_plan_edges(const xf_rule *r, const xfb_domain *dom, xfb_shape_plan *p,
                                      int *upward, xf_error *err)
{
    memset(p, 0, sizeof *p);
    *upward = 1;
    int n_in = r->src.n_inputs, n_pts = 1, val[XFB_EDGE_CLASSES];
    for (int c = 0; c < dom->n_edge_classes; c++) n_pts *= dom->edge_top[c];
    if (dom->n_edge_classes < 1 || n_pts > XFB_EDGE_POINTS)
        return XF_FAIL(err, XF_ERR_INVALID, "bounded check: %d size combinations near the ends "
                       "(at most %d)", n_pts, XFB_EDGE_POINTS);
    search s;
    xf_status st = search_init(&s, r, 4, err);
    uint8_t *ok = xf_calloc((size_t)n_pts, 1);
    p->n_inputs = n_in;
    p->shapes = xf_malloc(sizeof *p->shapes * ((size_t)n_pts + 1) * (size_t)n_in + 1);
    if (st == XF_OK && (!ok || !p->shapes))
        st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory planning shapes");
    if (st == XF_OK) {
        for (int i = 0; i < n_in; i++) p->shapes[i] = r->src.values[r->src.inputs[i]].shape;
        p->n = 1;
        p->n_admissible = 1;
        xf_shape *at = p->shapes + (size_t)n_in; /* the next free row */
        for (int c = 0; c < dom->n_edge_classes; c++) val[c] = 1;
        for (int i = 0; i < n_pts; i++) {
            compose_edges(r, dom, val, at);
            int same = 1; /* the own shapes are row 0 already */
            for (int j = 0; j < n_in && same; j++) same = xf_shape_equal(&at[j], &p->shapes[j]);
            ok[i] = (uint8_t)admissible(&s, at);
            if (ok[i] && !same) {
                p->n++, p->n_admissible++;
                at += n_in;
            }
            for (int c = dom->n_edge_classes - 1; c >= 0; c--) { /* the next combination */
                if (++val[c] <= dom->edge_top[c]) break;
                val[c] = 1;
            }
        }
        for (int i = 0; i < n_pts && *upward; i++) { /* raising one class keeps it admissible */
            if (!ok[i]) continue;
            for (int c = dom->n_edge_classes - 1, rest = i; c >= 0; c--) {
                val[c] = rest % dom->edge_top[c] + 1;
                rest /= dom->edge_top[c];
            }
            for (int c = 0; c < dom->n_edge_classes && *upward; c++) {
                int keep = val[c];
                val[c] = dom->edge_top[c];
                *upward = ok[grid_index(dom, val)];
                /* an averaged class: every size up to its top (its
                 * argument needs them all) */
                for (val[c] = 1; dom->edge_mean[c] && val[c] <= dom->edge_top[c] && *upward; val[c]++)
                    *upward = ok[grid_index(dom, val)];
                val[c] = keep;
            }
        }
        p->n_exact = p->n;
        p->cap = p->n;
    }
    if (st != XF_OK) vf_bounded_shape_plan_free(p);
    xf_free(ok);
    search_free(&s);
    return st;
}

/* --------------------------------------------------------- rebuilt rule */

/* Adds generator gn with parameters p to out (its output mapped). */
static xf_status add_generator(xf_graph *out, const xf_node *gn, const xf_params *p, int *map,
                               xf_error *err)
{
    int n = xf_graph_add_node(out, gn->op, p, NULL, 0, gn->n_outputs, gn->name, err);
    if (n < 0) return err ? err->code : XF_ERR_SHAPE;
    map[gn->outputs[0]] = out->nodes[n].outputs[0];
    return XF_OK;
}

/* Side k of r rebuilt at input shapes `inputs` into out; src: the rebuilt
 * source (for the target side, NULL for the source); unequal: as
 * params_at, for the source splits that cut freely. */
static xf_status rebuild_side(const xf_rule *r, int k, const xf_shape *inputs, const xf_graph *src,
                              int unequal, xf_graph *out, xf_error *err)
{
    const xf_graph *g = vf_rule_side(r, k);
    xf_shape src_out[XF_MAX_SPLIT + 64]; /* the source outputs' shapes (target side) */
    if (src && src->n_outputs > (int)(sizeof src_out / sizeof *src_out))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: %d rule outputs", src->n_outputs);
    for (int o = 0; src && o < src->n_outputs; o++) src_out[o] = src->values[src->outputs[o]].shape;
    xf_status st = XF_OK;
    int *map = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    int max_in = 1;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].n_inputs > max_in) max_in = g->nodes[i].n_inputs;
    int *ins = xf_malloc(sizeof(int) * (size_t)max_in);
    xf_shape *in_sh = xf_malloc(sizeof(xf_shape) * (size_t)max_in);
    xf_shape *sh = xf_malloc(sizeof(xf_shape) * ((size_t)g->n_values + 1));
    uint8_t *unsized = xf_malloc((size_t)g->n_values + 1);
    if (!map || !order || !ins || !in_sh || !sh || !unsized) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory rebuilding a rule");
        goto out;
    }
    for (int v = 0; v < g->n_values; v++) map[v] = -1;
    for (int i = 0; i < g->n_inputs && st == XF_OK; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        map[g->inputs[i]] = xf_graph_add_input(out, v->name, v->dtype, &inputs[i], err);
        if (map[g->inputs[i]] < 0) st = err ? err->code : XF_ERR_GRAPH;
    }
    for (int v = 0; v < g->n_values && st == XF_OK; v++) {
        const xf_value *c = &g->values[v];
        if (c->kind != XF_VALUE_CONST) continue;
        map[v] = xf_graph_add_const(out, c->name, c->dtype, &c->shape, c->data, err);
        if (map[v] < 0) st = err ? err->code : XF_ERR_GRAPH;
    }
    if (st == XF_OK) st = xf_graph_topo_order(g, order, err);
    for (int v = 0; v < g->n_values; v++) {
        unsized[v] = 0;
        sh[v] = map[v] >= 0 ? out->values[map[v]].shape : g->values[v].shape;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if (vf_bounded_generator(g->nodes[i].op)) unsized[g->nodes[i].outputs[0]] = 1;
    sizing z = {sh, unsized};
    for (int i = 0; i <= g->n_nodes && st == XF_OK; i++) {
        if (i == g->n_nodes) { /* generators no operator reads (infer_side says why) */
            for (int o = 0; o < g->n_outputs && st == XF_OK; o++) {
                int v = g->outputs[o];
                if (!unsized[v]) continue;
                const xf_node *gn = &g->nodes[g->values[v].producer];
                xf_params gp = gn->params;
                if (src) xf_params_set_shape(&gp, &src_out[o]);
                st = add_generator(out, gn, &gp, map, err);
            }
            break;
        }
        const xf_node *nd = &g->nodes[order[i]];
        if (nd->op == XF_OP_OPAQUE) {
            st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: rule has an opaque node");
            break;
        }
        if (vf_bounded_generator(nd->op)) continue; /* at its first consumer */
        for (int j = 0; j < nd->n_inputs && st == XF_OK; j++) {
            int v = nd->inputs[j];
            if (v < 0 || !unsized[v]) continue;
            const xf_node *gn = &g->nodes[g->values[v].producer];
            xf_params gp = generator_from_user(g, gn, nd, j, &z);
            st = add_generator(out, gn, &gp, map, err);
            if (st == XF_OK) sh[v] = out->values[map[v]].shape, unsized[v] = 0;
        }
        if (st != XF_OK) break;
        for (int j = 0; j < nd->n_inputs; j++) {
            ins[j] = nd->inputs[j] < 0 ? -1 : map[nd->inputs[j]];
            if (ins[j] >= 0) in_sh[j] = out->values[ins[j]].shape;
        }
        xf_params p;
        char d[128];
        int cut = unequal && !k && xf_rule_split_cuts_freely(r, order[i]);
        if (!params_at(g, nd, in_sh, src ? src_out : NULL, cut, &p)) {
            st = XF_FAIL(err, XF_ERR_SHAPE,
                         "%s does not apply at these shapes (split of an axis into equal parts "
                         "it does not divide, or element-wise operands of different shapes)",
                         xf_node_describe(g, order[i], d, sizeof d));
            break;
        }
        int n = xf_graph_add_node(out, nd->op, &p, ins, nd->n_inputs, nd->n_outputs, nd->name, err);
        if (n < 0) {
            st = err ? err->code : XF_ERR_SHAPE;
            break;
        }
        for (int j = 0; j < nd->n_outputs; j++) {
            map[nd->outputs[j]] = out->nodes[n].outputs[j];
            sh[nd->outputs[j]] = out->values[map[nd->outputs[j]]].shape;
        }
    }
    for (int o = 0; o < g->n_outputs && st == XF_OK; o++)
        st = xf_graph_mark_output(out, map[g->outputs[o]], err);
out:
    xf_free(map);
    xf_free(order);
    xf_free(ins);
    xf_free(in_sh);
    xf_free(sh);
    xf_free(unsized);
    return st;
}

xf_status xf_verify_rule_at_shapes(const xf_rule *r, const xf_shape *inputs, xf_rule *out,
                                   xf_error *err)
{
    xf_rule_init(out);
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_shape *own = &r->src.values[r->src.inputs[i]].shape;
        if (inputs[i].rank != own->rank) {
            char a[96], b[96];
            return XF_FAIL(err, XF_ERR_SHAPE, "rule input %d is %s; %s has another rank", i,
                           xf_shape_str(own, a, sizeof a), xf_shape_str(&inputs[i], b, sizeof b));
        }
    }
    xf_status st = XF_OK;
    for (int unequal = cut_unequally(r, inputs); unequal >= 0; unequal--) { /* as admissible */
        xf_rule_init(out);
        st = rebuild_side(r, 0, inputs, NULL, unequal, &out->src, err);
        if (st == XF_OK) st = rebuild_side(r, 1, inputs, &out->src, unequal, &out->dst, err);
        if (st == XF_OK) st = xf_rule_validate(out, err);
        if (st == XF_OK || !unequal) break;
        xf_rule_free(out);
    }
    out->fingerprint = r->fingerprint;
    return st;
}

/* ------------------------------------------------------- a case's shapes */

xf_status vf_bounded_shapes_fit(const xf_rule *r, const xf_shape *in, xfb_ties *t,
                                const int64_t *base, int *fit, xf_error *err)
{
    search s;
    *fit = 0;
    xf_status st = search_init(&s, r, 4, err);
    if (st == XF_OK && admissible(&s, in)) {
        *fit = 1;
        for (int k = 0; k < 2 && *fit; k++) {
            const xf_graph *g = vf_rule_side(r, k);
            for (int v = 0; v < g->n_values && *fit; v++)
                for (int d = 0; d < s.sh[k][v].rank && *fit; d++) {
                    int root = vf_bounded_ties_find(t, vf_bounded_ties_slot(t, k, v, d));
                    int f = t->block_of[root] >= 0 ? t->block_of[root] : root;
                    *fit = s.sh[k][v].dims[d] == (int64_t)t->blocks[root] * base[f];
                }
        }
    }
    search_free(&s);
    return st;
}
