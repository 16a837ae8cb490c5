/*
 * finish.c — xf_agent_finish: a working graph becomes a model to export.
 * Passes over a shared clone:
 *  1. weight folding (fold.c): constant-only nodes become initializers;
 *  2. bias fusion: conv(x, w) whose only use is an add of a constant shaped
 *     [C,1,1] or [1,C,1,1] becomes conv(x, w, bias[C]) writing the add's
 *     output value (so its name and graph-output position survive) — the
 *     inverse of xf_agent_prepare; then a relu/sigmoid/tanh alone reading
 *     a conv's output becomes its fused activation (the form ONNX import
 *     produces, which prepare had split off); a two-input layer norm whose
 *     only use is an add of a constant [H] takes it as its bias again;
 *  3. a squeeze or unsqueeze next to another view becomes a reshape (ONNX
 *     Runtime merges runs of Reshapes, not of Squeezes);
 *  4. a run of views becomes one reshape (ONNX Runtime runs each Reshape
 *     of a run when the batch is symbolic);
 *  5. a reshape dropping the axis of a one-position slice becomes a gather
 *     (the form narrowing starts from, where nothing moved the slice);
 *  6. constants nobody uses are dropped.
 * Constants the working graph borrows stay borrowed (so do its own: the
 * result borrows them): a finished candidate costs its new, folded
 * constants, not a copy of the model's weights (the arbiter finishes a
 * dozen candidates of a 440 MB BERT; copying made it 2.1x the weights on
 * the 2.7 GB model), and the target sees the very buffers it shares
 * between its sessions (target/share.c). The result must therefore not
 * outlive the working graph nor what that borrows from.
 */
#include "agent/rewrite/rewrite.h"
#include "agent/rewrite/fold_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static xf_status nomem(xf_error *err)
{
    return XF_FAIL(err, XF_ERR_NOMEM, "out of memory finishing the graph");
}

/* The conv whose output add node `a` adds a per-channel constant to, with
 * that constant's input position; -1 when `a` is not such an add. */
static int bias_conv(const xf_graph *g, const xf_node *a, const int *uses, int *const_pos)
{
    if (a->op != XF_OP_ADD || a->n_inputs != 2) return -1;
    for (int side = 0; side < 2; side++) {
        int o = a->inputs[side], k = a->inputs[1 - side];
        if (o < 0 || k < 0 || uses[o] != 1) continue;
        const xf_value *ov = &g->values[o], *kv = &g->values[k];
        if (ov->kind != XF_VALUE_NODE || kv->kind != XF_VALUE_CONST || kv->dtype != XF_F32 ||
            ov->shape.rank != 4)
            continue;
        const xf_node *c = &g->nodes[ov->producer];
        if (c->op != XF_OP_CONV || c->params.activation != XF_ACT_NONE ||
            (c->n_inputs >= 3 && c->inputs[2] >= 0))
            continue;
        int64_t ch = ov->shape.dims[1];
        const xf_shape *ks = &kv->shape;
        int per_channel = (ks->rank == 3 && ks->dims[0] == ch && ks->dims[1] == 1 &&
                           ks->dims[2] == 1) ||
                          (ks->rank == 4 && ks->dims[0] == 1 && ks->dims[1] == ch &&
                           ks->dims[2] == 1 && ks->dims[3] == 1);
        if (!per_channel) continue;
        *const_pos = 1 - side;
        return ov->producer;
    }
    return -1;
}

/* "<name>" without a trailing "_c11" (the suffix xf_agent_prepare adds). */
static char *bias_name(const char *name)
{
    const char *base = name ? name : "bias";
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, "_c11") == 0) n -= 4;
    char *s = xf_malloc(n + 1);
    if (s) {
        memcpy(s, base, n);
        s[n] = '\0';
    }
    return s;
}

/* The conv whose output activation node `a` alone reads; -1 otherwise. */
static int activation_conv(const xf_graph *g, const xf_node *a, const int *uses)
{
    if (xf_op_activation(a->op) == XF_ACT_NONE || a->inputs[0] < 0 || uses[a->inputs[0]] != 1)
        return -1;
    const xf_value *ov = &g->values[a->inputs[0]];
    if (ov->kind != XF_VALUE_NODE) return -1;
    const xf_node *c = &g->nodes[ov->producer];
    if (c->op != XF_OP_CONV || c->params.activation != XF_ACT_NONE) return -1;
    return ov->producer;
}

/* Moves the output of node ai over to conv c (c now writes it), with ai and
 * c's old output marked dead. */
static void take_output(xf_graph *g, int c, int ai, uint8_t *node_dead, uint8_t *value_dead)
{
    xf_node *cn = &g->nodes[c];
    int new_out = g->nodes[ai].outputs[0];
    value_dead[cn->outputs[0]] = 1;
    node_dead[ai] = 1;
    cn->outputs[0] = new_out;
    g->values[new_out].producer = c;
    g->values[new_out].producer_output = 0;
}

/* Fuses conv c with add node ai whose constant input is at position kpos. */
static xf_status fuse_bias(xf_graph *g, int c, int ai, int kpos, uint8_t *node_dead,
                           uint8_t *value_dead, xf_error *err)
{
    const xf_value *kv = &g->values[g->nodes[ai].inputs[kpos]];
    int64_t ch = g->values[g->nodes[c].outputs[0]].shape.dims[1];
    xf_shape s1 = xf_shape_make(1, &ch);
    char *name = bias_name(kv->name);
    if (!name) return nomem(err);
    int b = xf_graph_add_const(g, name, XF_F32, &s1, kv->data, err);
    xf_free(name);
    if (b < 0) return err ? err->code : XF_ERR_NOMEM;
    xf_node *cn = &g->nodes[c];
    int *ins = xf_malloc(sizeof(int) * 3);
    if (!ins) return nomem(err);
    memcpy(ins, cn->inputs, sizeof(int) * 2);
    xf_graph_release(g, cn->inputs);
    cn->inputs = ins;
    cn->inputs[2] = b;
    cn->n_inputs = 3;
    take_output(g, c, ai, node_dead, value_dead);
    return XF_OK;
}

/* The two-input layer norm (last axis) whose output add node `a` adds a
 * constant [H] to, with that constant's input position; -1 otherwise. */
static int bias_layernorm(const xf_graph *g, const xf_node *a, const int *uses, int *const_pos)
{
    if (a->op != XF_OP_ADD || a->n_inputs != 2) return -1;
    for (int side = 0; side < 2; side++) {
        int o = a->inputs[side], k = a->inputs[1 - side];
        if (o < 0 || k < 0 || uses[o] != 1) continue;
        const xf_value *ov = &g->values[o], *kv = &g->values[k];
        if (ov->kind != XF_VALUE_NODE || kv->kind != XF_VALUE_CONST || kv->dtype != XF_F32 ||
            kv->shape.rank != 1 || ov->shape.rank < 1 ||
            kv->shape.dims[0] != ov->shape.dims[ov->shape.rank - 1])
            continue;
        const xf_node *ln = &g->nodes[ov->producer];
        if (ln->op != XF_OP_LAYERNORM || ln->n_inputs != 2 ||
            xf_norm_axis(ln->params.axis, ov->shape.rank) != ov->shape.rank - 1)
            continue;
        *const_pos = 1 - side;
        return ov->producer;
    }
    return -1;
}

/* The layer norm c takes add ai's constant (at position kpos) as its bias. */
static xf_status fuse_layernorm_bias(xf_graph *g, int c, int ai, int kpos, uint8_t *node_dead,
                                     uint8_t *value_dead, xf_error *err)
{
    xf_node *ln = &g->nodes[c];
    int *ins = xf_malloc(sizeof(int) * 3);
    if (!ins) return nomem(err);
    memcpy(ins, ln->inputs, sizeof(int) * 2);
    ins[2] = g->nodes[ai].inputs[kpos];
    xf_graph_release(g, ln->inputs);
    ln->inputs = ins;
    ln->n_inputs = 3;
    take_output(g, c, ai, node_dead, value_dead);
    return XF_OK;
}

enum { FUSE_BIAS, FUSE_ACTIVATION, FUSE_LAYERNORM_BIAS };

/* One pass of fusions: per-channel constant adds become a convolution's
 * bias (FUSE_BIAS), activations its fused activation (FUSE_ACTIVATION), or
 * constant adds after a two-input layer norm its bias (FUSE_LAYERNORM_BIAS,
 * the inverse of xf_agent_prepare's split); *n_fused counts them. */
static xf_status fuse_pass(xf_graph *g, int what, int *n_fused, xf_error *err)
{
    *n_fused = 0;
    int n_nodes = g->n_nodes, n_values = g->n_values;
    int *uses = xf_malloc(sizeof(int) * ((size_t)n_values + 1));
    /* room for the new bias constants, at most one per node */
    uint8_t *value_dead = xf_calloc((size_t)(n_values + n_nodes) + 1, 1);
    uint8_t *node_dead = xf_calloc((size_t)n_nodes + 1, 1);
    xf_status st = XF_OK;
    if (!uses || !value_dead || !node_dead) {
        st = nomem(err);
        goto out;
    }
    xf_edit_use_counts(g, uses);
    for (int i = 0; i < n_nodes && st == XF_OK; i++) {
        int kpos = -1;
        if (what == FUSE_ACTIVATION) {
            int c = activation_conv(g, &g->nodes[i], uses);
            if (c < 0) continue;
            g->nodes[c].params.activation = xf_op_activation(g->nodes[i].op);
            take_output(g, c, i, node_dead, value_dead);
        } else if (what == FUSE_LAYERNORM_BIAS) {
            int c = bias_layernorm(g, &g->nodes[i], uses, &kpos);
            if (c < 0) continue;
            st = fuse_layernorm_bias(g, c, i, kpos, node_dead, value_dead, err);
        } else {
            int c = bias_conv(g, &g->nodes[i], uses, &kpos);
            if (c < 0) continue;
            st = fuse_bias(g, c, i, kpos, node_dead, value_dead, err);
        }
        if (st == XF_OK) (*n_fused)++;
    }
    if (st == XF_OK) st = xf_edit_compact(g, node_dead, value_dead, err);
out:
    xf_free(uses);
    xf_free(value_dead);
    xf_free(node_dead);
    return st;
}

static xf_status drop_unused_constants(xf_graph *g, int *n_dropped, xf_error *err)
{
    *n_dropped = 0;
    int *uses = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    uint8_t *dead = xf_calloc((size_t)g->n_values + 1, 1);
    xf_status st = XF_OK;
    if (!uses || !dead) {
        st = nomem(err);
        goto out;
    }
    xf_edit_use_counts(g, uses);
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].kind == XF_VALUE_CONST && uses[v] == 0) {
            dead[v] = 1;
            (*n_dropped)++;
        }
    st = xf_edit_compact(g, NULL, dead, err);
out:
    xf_free(uses);
    xf_free(dead);
    return st;
}

/* A squeeze or unsqueeze of static shape next to another view (its input
 * made by one, or its output read by one) becomes the reshape to its
 * output shape, the same element order: ONNX Runtime merges a run of
 * Reshapes into one node and keeps every Squeeze and Unsqueeze as a node of
 * its own (a proved rule's unbatched heads [1,S,H] -> [S,H] -> [S,1,H] ->
 * [S,1,h,d] are one Reshape there). */
static xf_status views_as_reshapes(xf_graph *g, int *n_views, xf_error *err)
{
    int *reads_view = xf_calloc((size_t)g->n_values + 1, sizeof *reads_view);
    if (!reads_view) return nomem(err);
    for (int i = 0; i < g->n_nodes; i++)
        if (xf_op_reshapes(g->nodes[i].op) && g->nodes[i].n_inputs > 0 && g->nodes[i].inputs[0] >= 0)
            reads_view[g->nodes[i].inputs[0]] = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        xf_node *nd = &g->nodes[i];
        if ((nd->op != XF_OP_SQUEEZE && nd->op != XF_OP_UNSQUEEZE) || nd->n_inputs != 1 ||
            nd->inputs[0] < 0 || nd->n_outputs != 1)
            continue;
        const xf_value *in = &g->values[nd->inputs[0]];
        const xf_shape *s = &g->values[nd->outputs[0]].shape;
        int after_view = in->kind == XF_VALUE_NODE && in->producer >= 0 && xf_op_reshapes(g->nodes[in->producer].op);
        int fixed = s->rank > 0;
        for (int d = 0; d < s->rank; d++) fixed &= s->dims[d] > 0;
        if (!fixed || (!after_view && !reads_view[nd->outputs[0]])) continue;
        xf_params p = xf_params_default();
        p.n_shape = s->rank;
        for (int d = 0; d < s->rank; d++) p.shape[d] = s->dims[d];
        nd->op = XF_OP_RESHAPE;
        nd->params = p;
        ++*n_views;
    }
    xf_free(reads_view);
    return XF_OK;
}

/* A view of static output shape whose input another view makes, that view
 * read by nothing else, becomes one reshape of the first view's input to
 * its own output shape (the same element order): ONNX Runtime 1.30 runs
 * every Reshape of a run when the batch is symbolic (it does not merge
 * [-1,S,H] -> [0,S,h,d]), 2.3-2.6 us each on modelzoo BERT at batch 4
 * (ORT's profile of the candidate the 2-D layout's rules write, 21
 * Reshapes for the input's 8: node medians 854 -> 812 us with its 8 runs
 * merged). The search's cost already counts a run as one node. */
/* Merges view node i into the view making its input when it is the only
 * reader of that input and its output shape is static; 1 when it did. */
static int merge_view(xf_graph *g, int i, const int *uses, uint8_t *node_dead,
                      uint8_t *value_dead)
{
    xf_node *nd = &g->nodes[i];
    if (node_dead[i] || !xf_op_reshapes(nd->op) || nd->n_inputs != 1 || nd->inputs[0] < 0 ||
        nd->n_outputs != 1)
        return 0;
    const xf_value *in = &g->values[nd->inputs[0]];
    if (in->kind != XF_VALUE_NODE || in->producer < 0 || uses[nd->inputs[0]] != 1) return 0;
    const xf_node *pn = &g->nodes[in->producer];
    if (!xf_op_reshapes(pn->op) || pn->n_inputs != 1 || pn->inputs[0] < 0 || pn->n_outputs != 1)
        return 0;
    const xf_shape *s = &g->values[nd->outputs[0]].shape;
    int fixed = s->rank > 0 && s->rank <= XF_MAX_DIMS;
    for (int d = 0; fixed && d < s->rank; d++) fixed = s->dims[d] > 0;
    if (!fixed) return 0;
    node_dead[in->producer] = 1;
    value_dead[nd->inputs[0]] = 1;
    nd->inputs[0] = pn->inputs[0]; /* pn's input loses pn and gains nd: its uses stay */
    xf_params p = xf_params_default();
    p.n_shape = s->rank;
    for (int d = 0; d < s->rank; d++) p.shape[d] = s->dims[d];
    nd->op = XF_OP_RESHAPE;
    nd->params = p;
    return 1;
}

static xf_status merge_view_runs(xf_graph *g, int *n_merged, xf_error *err)
{
    int *uses = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    uint8_t *node_dead = xf_calloc((size_t)g->n_nodes + 1, 1);
    uint8_t *value_dead = xf_calloc((size_t)g->n_values + 1, 1);
    xf_status st = XF_OK;
    if (!uses || !node_dead || !value_dead) {
        st = nomem(err);
        goto out;
    }
    xf_edit_use_counts(g, uses);
    /* nodes need not be in topological order: passes until nothing merges */
    for (int merged = 1; merged;) {
        merged = 0;
        for (int i = 0; i < g->n_nodes; i++)
            if (merge_view(g, i, uses, node_dead, value_dead)) {
                ++*n_merged;
                merged = 1;
            }
    }
    if (*n_merged) st = xf_edit_compact(g, node_dead, value_dead, err);
out:
    xf_free(uses);
    xf_free(node_dead);
    xf_free(value_dead);
    return st;
}

/* The position `slice` node sl takes along its one axis when it takes one
 * position (step 1) of a value; -1 otherwise. *axis: that axis. */
static int64_t one_position(const xf_graph *g, const xf_node *sl, int *axis)
{
    if (sl->op != XF_OP_SLICE || sl->n_inputs != 1 || sl->inputs[0] < 0 || sl->n_outputs != 1 ||
        sl->params.n_axes != 1 || sl->params.steps[0] != 1)
        return -1;
    const xf_shape *in = &g->values[sl->inputs[0]].shape;
    const xf_shape *o = &g->values[sl->outputs[0]].shape;
    int a = xf_norm_axis(sl->params.axes[0], in->rank);
    if (a < 0 || o->rank != in->rank || o->dims[a] != 1 || in->dims[a] <= 1) return -1;
    int64_t at = sl->params.starts[0];
    if (at < 0) at += in->dims[a];
    if (at < 0 || at >= in->dims[a]) return -1;
    *axis = a;
    return at;
}

/* Reshape(Slice(x, [i, i+1) on axis a)) dropping axis a, the slice read by
 * nothing else, becomes Gather(x, i, axis=a): one node for two, the form
 * exporters write. Narrowing makes the pair of each one-position Gather so
 * that slice rules can move it (agent/rewrite/narrow.c); where none moved
 * it, the pair is what would be written: on modelzoo BERT with a symbolic
 * batch, BERT's pooler as Slice + Reshape cost 7.5 + 2.8 us of kernels
 * against the Gather's 3 (ONNX Runtime 1.30's profile, batch 4), and the
 * written model 0.627 against 0.637 ms with the pair (xfonnx time). */
static xf_status slices_as_gathers(xf_graph *g, int *n_gathers, xf_error *err)
{
    int *uses = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    uint8_t *node_dead = xf_calloc((size_t)g->n_nodes + 1, 1);
    uint8_t *value_dead = xf_calloc((size_t)g->n_values + g->n_nodes + 1, 1);
    xf_status st = XF_OK;
    if (!uses || !node_dead || !value_dead) {
        st = nomem(err);
        goto out;
    }
    xf_edit_use_counts(g, uses);
    for (int i = 0, n_nodes = g->n_nodes; i < n_nodes && st == XF_OK; i++) {
        const xf_node *r = &g->nodes[i];
        if (r->op != XF_OP_RESHAPE || r->n_inputs != 1 || r->inputs[0] < 0 ||
            uses[r->inputs[0]] != 1)
            continue;
        const xf_value *sv = &g->values[r->inputs[0]];
        if (sv->kind != XF_VALUE_NODE || sv->producer < 0) continue;
        int s = sv->producer, axis = -1;
        int64_t at = one_position(g, &g->nodes[s], &axis);
        if (at < 0) continue;
        /* the reshape drops that axis and nothing else */
        const xf_shape *in = &g->values[g->nodes[s].inputs[0]].shape;
        const xf_shape *o = &g->values[r->outputs[0]].shape;
        int drops = o->rank == in->rank - 1;
        for (int d = 0; drops && d < o->rank; d++)
            drops = o->dims[d] == in->dims[d < axis ? d : d + 1];
        if (!drops) continue;
        char name[512];
        const char *base = g->values[r->outputs[0]].name;
        snprintf(name, sizeof name, "%s_index", base ? base : "gather");
        xf_shape scalar = xf_shape_make(0, NULL);
        int ix = xf_graph_add_const(g, name, XF_I64, &scalar, &at, err);
        if (ix < 0) {
            st = err ? err->code : XF_ERR_NOMEM;
            break;
        }
        int *ins = xf_malloc(sizeof(int) * 2);
        if (!ins) {
            st = nomem(err);
            break;
        }
        xf_node *rn = &g->nodes[i];
        ins[0] = g->nodes[s].inputs[0];
        ins[1] = ix;
        node_dead[s] = 1;
        value_dead[rn->inputs[0]] = 1;
        xf_graph_release(g, rn->inputs);
        rn->inputs = ins;
        rn->n_inputs = 2;
        rn->op = XF_OP_GATHER;
        rn->params = xf_params_default();
        rn->params.axis = axis;
        xf_params_canonical(XF_OP_GATHER, &rn->params);
        ++*n_gathers;
    }
    if (st == XF_OK && *n_gathers) st = xf_edit_compact(g, node_dead, value_dead, err);
out:
    xf_free(uses);
    xf_free(node_dead);
    xf_free(value_dead);
    return st;
}

xf_status xf_agent_finish(const xf_graph *work, xf_graph *out, xf_finish_stats *stats,
                          xf_error *err)
{
    xf_finish_stats s = {0, 0, 0, 0, 0, 0};
    if (stats) *stats = s;
    xf_status st = xf_graph_clone_shared(work, out, err);
    if (st != XF_OK) return st;
    uint8_t *node_dead = xf_calloc((size_t)out->n_nodes + 1, 1);
    if (!node_dead) st = nomem(err);
    if (st == XF_OK) st = rw_fold_weights(out, node_dead, &s.folded_nodes, err);
    if (st == XF_OK) st = xf_edit_compact(out, node_dead, NULL, err);
    xf_free(node_dead);
    int n_act = 0;
    int n_ln = 0;
    if (st == XF_OK) st = fuse_pass(out, FUSE_BIAS, &s.fused_bias, err);
    if (st == XF_OK) st = fuse_pass(out, FUSE_ACTIVATION, &n_act, err);
    if (st == XF_OK) st = fuse_pass(out, FUSE_LAYERNORM_BIAS, &n_ln, err);
    if (st == XF_OK) st = views_as_reshapes(out, &s.views_as_reshapes, err);
    if (st == XF_OK) st = merge_view_runs(out, &s.merged_views, err);
    if (st == XF_OK) st = slices_as_gathers(out, &s.gathers, err);
    if (st == XF_OK) st = drop_unused_constants(out, &s.removed_values, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "finishing '%s'", work->name ? work->name : "graph");
        xf_graph_free(out);
        return st;
    }
    if (stats) *stats = s;
    return XF_OK;
}
