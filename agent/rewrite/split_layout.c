/*
 * split_layout.c — part of xf_agent_prepare: a merged projection is
 * reshaped and transposed once, before it is split into its parts, instead
 * of each part after the split.
 *
 * Why: GPT-2-style decoders compute Q, K and V with one matmul (c_attn,
 * H -> 3H), split the result three ways, and take each part to heads with
 * Reshape [B, S, h, d] and Transpose: one Split, three Reshapes and three
 * Transposes per layer. The same values come out of one Reshape of the
 * merged result to [S, 3, h, d], one Transpose that puts the "which part"
 * axis where the parts have a unit dim ([3, h, S, d]) and one Split along
 * it, plus a Transpose for a part whose own permutation differs (K, taken
 * to [h, d, S]). Every runtime runs fewer kernels over the same bytes; in
 * ONNX Runtime the K transpose then folds into its FusedMatMul (modelzoo
 * GPT as ONNX Runtime runs it: 50 nodes unbatched, 40 after; measured in
 * docs/target.md).
 *
 * When: a split into k >= 2 equal parts along axis a of x, each part read
 * only by a Reshape to the same shape Q, each Reshape read only by a
 * Transpose, and the first part's transposed shape having a dim of 1 (the
 * batch of a batch-1 model; with no such dim the parts would need a
 * squeeze, which would give back the nodes saved, so nothing is done).
 * Q must keep the dims of x before a as its own leading dims up to their
 * product (row-major order then puts part i of x at index i of a new axis
 * inserted there: x = [P, k*m, R] read as [P, k, m*R]).
 *
 * The new values take the names of the Transposes' outputs, so everything
 * downstream reads the same names; the old Split, Reshapes and Transposes
 * are removed.
 */
#include "agent/rewrite/split_layout_internal.h"

#include <stdio.h>
#include <string.h>


/* One split that qualifies, and what replaces it. */
typedef struct merge_plan {
    int split;                     /* the Split node */
    int k;                         /* parts */
    int reshape[XF_MAX_SPLIT];     /* per part: its Reshape node */
    int transpose[XF_MAX_SPLIT];   /* per part: its Transpose node */
    int perm[XF_MAX_SPLIT][XF_MAX_DIMS]; /* per part: its permutation */
    xf_shape merged;               /* Q with the unit dim dropped and k inserted */
    int merged_perm[XF_MAX_DIMS];  /* Transpose of the merged value */
    int unit;                      /* axis of the transposed part that holds k */
} merge_plan;

static int perm_of(const xf_node *n, int rank, int *perm)
{
    const xf_params *p = &n->params;
    if (p->n_axes == 0) {
        for (int i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return 1;
    }
    if (p->n_axes != rank) return 0;
    for (int i = 0; i < rank; i++) {
        perm[i] = xf_norm_axis((int)p->axes[i], rank);
        if (perm[i] < 0) return 0;
    }
    return 1;
}

/* The only reader of value v when it has exactly one and is no graph
 * output, else -1. readers[v] holds it where uses[v] == 1. */
static int sole_reader(const int *uses, const int *readers, int v)
{
    return uses[v] == 1 ? readers[v] : -1;
}

/* Fills plan for Split node si when the pattern holds. */
static int plan_merge(const xf_graph *g, int si, const int *uses, const int *readers,
                      merge_plan *plan)
{
    const xf_node *s = &g->nodes[si];
    if (s->op != XF_OP_SPLIT || s->n_outputs < 2 || s->n_outputs > XF_MAX_SPLIT) return 0;
    const xf_shape *xs = &g->values[s->inputs[0]].shape;
    int a = xf_norm_axis(s->params.axis, xs->rank);
    if (a < 0) return 0;
    int k = s->n_outputs;
    for (int i = 1; i < k; i++)
        if (s->params.split[i] != s->params.split[0]) return 0;
    memset(plan, 0, sizeof *plan);
    plan->split = si;
    plan->k = k;
    const xf_shape *q = NULL;
    for (int i = 0; i < k; i++) {
        int r = sole_reader(uses, readers, s->outputs[i]);
        if (r < 0 || g->nodes[r].op != XF_OP_RESHAPE) return 0;
        int t = sole_reader(uses, readers, g->nodes[r].outputs[0]);
        if (t < 0 || g->nodes[t].op != XF_OP_TRANSPOSE) return 0;
        const xf_shape *qi = &g->values[g->nodes[r].outputs[0]].shape;
        if (q && !xf_shape_equal(q, qi)) return 0;
        q = qi;
        if (!perm_of(&g->nodes[t], q->rank, plan->perm[i])) return 0;
        plan->reshape[i] = r;
        plan->transpose[i] = t;
    }
    /* Q's leading dims must hold x's dims before the split axis: their
     * products meet at some prefix length p. */
    int64_t lead = 1, acc = 1;
    for (int d = 0; d < a; d++) lead *= xs->dims[d];
    int p = 0;
    while (p < q->rank && acc < lead) acc *= q->dims[p++];
    if (acc != lead) return 0;
    /* The unit dim of the first part's transposed shape takes the k axis. */
    int u = -1;
    for (int j = 0; j < q->rank && u < 0; j++)
        if (q->dims[plan->perm[0][j]] == 1) u = j;
    if (u < 0) return 0;
    int qu = plan->perm[0][u]; /* that unit dim's index in Q */
    /* Q -> merged: drop dim qu, insert k at p (counted after the drop). */
    int pk = qu < p ? p - 1 : p;
    int64_t dims[XF_MAX_DIMS];
    int map[XF_MAX_DIMS], n = 0;
    for (int d = 0; d < q->rank; d++) {
        if (d == qu) {
            map[d] = -1;
            continue;
        }
        if (n == pk) dims[n++] = k;
        map[d] = n;
        dims[n++] = q->dims[d];
    }
    if (n == pk) dims[n++] = k;
    plan->merged = xf_shape_make(n, dims);
    for (int j = 0; j < q->rank; j++)
        plan->merged_perm[j] = j == u ? pk : map[plan->perm[0][j]];
    plan->unit = u;
    return 1;
}

/* Adds the merged nodes for plan; final[i] receives the value that now
 * carries part i's transposed result. */
static xf_status build(xf_graph *g, const merge_plan *plan, int *final, xf_error *err)
{
    int x = g->nodes[plan->split].inputs[0];
    char base[384], name[512];
    snprintf(base, sizeof base, "%s", g->nodes[plan->split].name ? g->nodes[plan->split].name
                                                                   : "split");
    xf_params rp = xf_params_default();
    rp.n_shape = plan->merged.rank;
    for (int d = 0; d < plan->merged.rank; d++) rp.shape[d] = plan->merged.dims[d];
    snprintf(name, sizeof name, "%s_merged_reshape", base);
    int rn = xf_graph_add_node(g, XF_OP_RESHAPE, &rp, &x, 1, 1, name, err);
    if (rn < 0) return err ? err->code : XF_ERR_SHAPE;
    int r = g->nodes[rn].outputs[0];
    xf_params tp = xf_params_default();
    tp.n_axes = plan->merged.rank;
    for (int d = 0; d < plan->merged.rank; d++) tp.axes[d] = plan->merged_perm[d];
    snprintf(name, sizeof name, "%s_merged_transpose", base);
    int tn = xf_graph_add_node(g, XF_OP_TRANSPOSE, &tp, &r, 1, 1, name, err);
    if (tn < 0) return err ? err->code : XF_ERR_SHAPE;
    int t = g->nodes[tn].outputs[0];
    xf_params sp = xf_params_default();
    sp.axis = plan->unit;
    sp.n_split = plan->k;
    for (int i = 0; i < plan->k; i++) sp.split[i] = 1;
    snprintf(name, sizeof name, "%s_merged", base);
    int sn = xf_graph_add_node(g, XF_OP_SPLIT, &sp, &t, 1, plan->k, name, err);
    if (sn < 0) return err ? err->code : XF_ERR_SHAPE;
    int rank = plan->merged.rank;
    for (int i = 0; i < plan->k; i++) {
        int part = g->nodes[sn].outputs[i];
        /* part i = perm[0](Q); it needs perm[i](Q): sigma[j] = the position
         * in perm[0] of perm[i][j]. */
        int sigma[XF_MAX_DIMS], identity = 1;
        for (int j = 0; j < rank; j++)
            for (int m = 0; m < rank; m++)
                if (plan->perm[0][m] == plan->perm[i][j]) sigma[j] = m;
        for (int j = 0; j < rank; j++) identity &= sigma[j] == j;
        if (!identity) {
            xf_params pp = xf_params_default();
            pp.n_axes = rank;
            for (int j = 0; j < rank; j++) pp.axes[j] = sigma[j];
            snprintf(name, sizeof name, "%s_merged_part%d", base, i);
            int pn = xf_graph_add_node(g, XF_OP_TRANSPOSE, &pp, &part, 1, 1, name, err);
            if (pn < 0) return err ? err->code : XF_ERR_SHAPE;
            part = g->nodes[pn].outputs[0];
        }
        const xf_value *old = &g->values[g->nodes[plan->transpose[i]].outputs[0]];
        if (!xf_shape_equal(&g->values[part].shape, &old->shape))
            return XF_FAIL(err, XF_ERR_INTERNAL,
                           "merging the layout of split '%s': part %d came out in another shape",
                           base, i);
        final[i] = part;
    }
    return XF_OK;
}

/* The new value takes the old one's name, or none when it had none (the
 * old value is deleted). */
static void take_name(xf_graph *g, int old_v, int new_v)
{
    xf_graph_release(g, g->values[new_v].name);
    g->values[new_v].name = g->values[old_v].name;
    g->values[old_v].name = NULL;
}

xf_status rw_split_layout_merge(xf_graph *g, int *n_merged, xf_error *err)
{
    *n_merged = 0;
    int n_nodes = g->n_nodes, n_values = g->n_values;
    int *uses = xf_calloc((size_t)n_values + 1, sizeof *uses);
    int *readers = xf_malloc(((size_t)n_values + 1) * sizeof *readers);
    int *target = xf_malloc(((size_t)n_values + 1) * sizeof *target);
    merge_plan *plan = xf_malloc(sizeof *plan);
    if (!uses || !readers || !target || !plan) {
        xf_free(uses);
        xf_free(readers);
        xf_free(target);
        xf_free(plan);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory merging split layouts");
    }
    xf_edit_use_counts(g, uses);
    for (int v = 0; v < n_values; v++) {
        readers[v] = -1;
        target[v] = v;
    }
    for (int i = 0; i < n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++)
            if (g->nodes[i].inputs[j] >= 0) readers[g->nodes[i].inputs[j]] = i;
    uint8_t *node_dead = NULL, *value_dead = NULL;
    xf_status st = XF_OK;
    for (int i = 0; i < n_nodes && st == XF_OK; i++) {
        if (!plan_merge(g, i, uses, readers, plan)) continue;
        if (!node_dead) {
            node_dead = xf_calloc((size_t)n_nodes + 1, 1);
            value_dead = xf_calloc((size_t)n_values + 1, 1);
            if (!node_dead || !value_dead) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory merging split layouts");
                break;
            }
        }
        int final[XF_MAX_SPLIT];
        st = build(g, plan, final, err);
        for (int p = 0; p < plan->k && st == XF_OK; p++) {
            int nodes[3] = {plan->split, plan->reshape[p], plan->transpose[p]};
            for (int m = 0; m < 3; m++) {
                node_dead[nodes[m]] = 1;
                for (int o = 0; o < g->nodes[nodes[m]].n_outputs; o++)
                    value_dead[g->nodes[nodes[m]].outputs[o]] = 1;
            }
            int old = g->nodes[plan->transpose[p]].outputs[0];
            target[old] = final[p];
            take_name(g, old, final[p]);
        }
        if (st == XF_OK) (*n_merged)++;
    }
    if (st == XF_OK && *n_merged > 0) {
        for (int i = 0; i < g->n_nodes; i++)
            for (int j = 0; j < g->nodes[i].n_inputs; j++)
                if (g->nodes[i].inputs[j] >= 0 && g->nodes[i].inputs[j] < n_values)
                    g->nodes[i].inputs[j] = target[g->nodes[i].inputs[j]];
        for (int o = 0; o < g->n_outputs; o++) g->outputs[o] = target[g->outputs[o]];
        /* node_dead / value_dead cover only the nodes and values that were
         * there before; the new ones all live. */
        uint8_t *nd = xf_realloc(node_dead, (size_t)g->n_nodes + 1);
        if (nd) {
            node_dead = nd;
            memset(node_dead + n_nodes, 0, (size_t)(g->n_nodes - n_nodes));
        }
        uint8_t *vd = nd ? xf_realloc(value_dead, (size_t)g->n_values + 1) : NULL;
        if (vd) {
            value_dead = vd;
            memset(value_dead + n_values, 0, (size_t)(g->n_values - n_values));
        }
        st = nd && vd ? xf_edit_compact(g, node_dead, value_dead, err)
                      : XF_FAIL(err, XF_ERR_NOMEM, "out of memory merging split layouts");
    }
    xf_free(node_dead);
    xf_free(value_dead);
    xf_free(uses);
    xf_free(readers);
    xf_free(target);
    xf_free(plan);
    return st;
}
