/*
 * prepare.c — xf_agent_prepare: a model becomes a working graph for
 * rewriting. Rules are enumerated over two-input convolutions, so every conv
 * whose bias is a constant is split into conv(x, w) followed by an add of
 * the bias seen as [C,1,1] (broadcast over N, H, W); a fused activation
 * moves to its own node after the add. The [C,1,1] bias is a new constant
 * that borrows the model's bias data (same elements, new shape), so
 * preparing costs no weight copy. xf_agent_finish fuses the pairs back.
 * Then decomposed layer norms become layernorm nodes (fuse_layernorm.c);
 * those stay fused in the model written. The erf form of GELU becomes a
 * gelu node (fuse_gelu.c), written back in the form ONNX Runtime fuses. Last, multiplications and
 * divisions by a scalar constant become scalar_mul (scalar_mul.c), and a
 * Gather of one position moves up as a slice so that the positions nobody
 * reads are not computed (narrow.c), and the parts of an even split that are
 * each reshaped and transposed alike are taken to that layout once, before
 * the split (split_layout.c).
 *
 * Layer norms with a constant bias are split the same way (layernorm(x, g)
 * then an add of the bias: the layer norms of the rules take two inputs).
 *
 * Names: the final value of a split conv keeps the conv's output name (graph
 * outputs keep theirs); the bare conv output becomes "<name>_nobias".
 */
#include "agent/rewrite/rewrite.h"
#include "agent/rewrite/fuse_gelu_internal.h"
#include "agent/rewrite/fuse_layernorm_internal.h"
#include "agent/rewrite/narrow_internal.h"
#include "agent/rewrite/scalar_mul_internal.h"
#include "agent/rewrite/split_layout_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The conv nodes prepare splits: constant bias, known activation. */
static int splittable(const xf_graph *g, const xf_node *n)
{
    if (n->op != XF_OP_CONV || n->n_inputs < 3 || n->inputs[2] < 0) return 0;
    const xf_value *b = &g->values[n->inputs[2]];
    if (b->kind != XF_VALUE_CONST || b->dtype != XF_F32 || b->shape.rank != 1) return 0;
    return n->params.activation == XF_ACT_NONE ||
           xf_activation_op((xf_activation)n->params.activation) != XF_OP_COUNT;
}

/* Gives the split's last value the conv output's name and the conv output
 * "<name>_nobias" (names are optional: unnamed stays unnamed). */
static xf_status swap_names(xf_graph *g, int conv_out, int last, xf_error *err)
{
    char *orig = g->values[conv_out].name;
    if (!orig) return XF_OK;
    size_t n = strlen(orig) + sizeof "_nobias";
    char *renamed = xf_malloc(n);
    if (!renamed) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing '%s'", orig);
    snprintf(renamed, n, "%s_nobias", orig);
    xf_graph_release(g, g->values[last].name);
    g->values[last].name = orig;
    g->values[conv_out].name = renamed;
    return XF_OK;
}

/* Splits conv node ci; *last receives the value that now carries its result. */
static xf_status split_conv(xf_graph *g, int ci, int *last, xf_error *err)
{
    xf_node *n = &g->nodes[ci];
    int conv_out = n->outputs[0];
    const xf_value *b = &g->values[n->inputs[2]];
    int64_t dims[3] = {b->shape.dims[0], 1, 1};
    xf_shape s3 = xf_shape_make(3, dims);
    char name[512];
    snprintf(name, sizeof name, "%s_c11", b->name ? b->name : "bias");
    void *data = b->data;
    int bias3 = xf_graph_add_const_owned(g, name, XF_F32, &s3, NULL, err);
    if (bias3 < 0) return err ? err->code : XF_ERR_NOMEM;
    g->values[bias3].data = data;
    g->values[bias3].borrowed = 1;
    int act = n->params.activation;
    n->n_inputs = 2;
    n->params.activation = XF_ACT_NONE;
    const char *base = n->name ? n->name : "conv";
    snprintf(name, sizeof name, "%s_bias", base);
    int ins[2] = {conv_out, bias3};
    int add = xf_graph_add_node(g, XF_OP_ADD, NULL, ins, 2, 1, name, err);
    if (add < 0) return err ? err->code : XF_ERR_SHAPE;
    *last = g->nodes[add].outputs[0];
    if (act != XF_ACT_NONE) {
        snprintf(name, sizeof name, "%s_act", base);
        int a = xf_graph_add_node(g, xf_activation_op((xf_activation)act), NULL, last, 1, 1, name,
                                  err);
        if (a < 0) return err ? err->code : XF_ERR_SHAPE;
        *last = g->nodes[a].outputs[0];
    }
    return swap_names(g, conv_out, *last, err);
}

/* A layer norm with a bias becomes the layer norm without it followed by
 * an add of the bias (rules are enumerated over two-input layer norms, as
 * over two-input convolutions); xf_agent_finish fuses the pair back. The
 * add's output takes the layer norm's value name. */
static xf_status split_layernorm_biases(xf_graph *g, int *n_split, xf_error *err)
{
    int n0 = g->n_nodes;
    for (int i = 0; i < n0; i++) {
        xf_node *n = &g->nodes[i];
        if (n->op != XF_OP_LAYERNORM || n->n_inputs != 3 || n->inputs[2] < 0) continue;
        const xf_value *b = &g->values[n->inputs[2]];
        if (b->kind != XF_VALUE_CONST || b->dtype != XF_F32 || b->shape.rank != 1) continue;
        int out = n->outputs[0], bias = n->inputs[2];
        n->n_inputs = 2;
        char name[512];
        snprintf(name, sizeof name, "%s_bias", n->name ? n->name : "layernorm");
        int ins[2] = {out, bias};
        int add = xf_graph_add_node(g, XF_OP_ADD, NULL, ins, 2, 1, name, err);
        if (add < 0) return err ? err->code : XF_ERR_SHAPE;
        int last = g->nodes[add].outputs[0];
        for (int k = 0; k < g->n_nodes; k++) { /* readers of the layer norm read the add */
            if (k == add) continue;
            for (int j = 0; j < g->nodes[k].n_inputs; j++)
                if (g->nodes[k].inputs[j] == out) g->nodes[k].inputs[j] = last;
        }
        for (int o = 0; o < g->n_outputs; o++)
            if (g->outputs[o] == out) g->outputs[o] = last;
        xf_status st = swap_names(g, out, last, err);
        if (st != XF_OK) return st;
        (*n_split)++;
    }
    return XF_OK;
}

xf_status xf_agent_prepare(const xf_graph *model, const xf_prepare_options *opt, xf_graph *out,
                           xf_prepare_stats *stats, xf_error *err)
{
    xf_prepare_options po = opt ? *opt : xf_prepare_options_default();
    if (stats) memset(stats, 0, sizeof *stats);
    xf_status st = xf_graph_clone_shared(model, out, err);
    if (st != XF_OK) return st;
    int n_old_nodes = out->n_nodes, n_old_values = out->n_values;
    int *target = xf_malloc(sizeof(int) * ((size_t)n_old_values + 1)); /* value -> replacement */
    if (!target) {
        xf_graph_free(out);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing '%s'",
                       model->name ? model->name : "model");
    }
    int n_split = 0;
    for (int v = 0; v < n_old_values; v++) target[v] = v;
    for (int i = 0; i < n_old_nodes && st == XF_OK; i++) {
        if (!splittable(out, &out->nodes[i])) continue;
        int last = -1;
        st = split_conv(out, i, &last, err);
        if (st == XF_OK) target[out->nodes[i].outputs[0]] = last;
        n_split++;
    }
    if (st == XF_OK && n_split > 0) {
        for (int i = 0; i < n_old_nodes; i++) {
            xf_node *n = &out->nodes[i];
            for (int k = 0; k < n->n_inputs; k++)
                if (n->inputs[k] >= 0) n->inputs[k] = target[n->inputs[k]];
        }
        for (int i = 0; i < out->n_outputs; i++) out->outputs[i] = target[out->outputs[i]];
    }
    xf_free(target);
    int n_ln = 0, n_gelu = 0, n_scalar = 0, n_sel = 0, n_narrowed = 0, n_layout = 0;
    if (st == XF_OK && po.fuse_layernorm) st = rw_fuse_layernorms(out, &n_ln, err);
    int n_ln_bias = 0;
    if (st == XF_OK) st = split_layernorm_biases(out, &n_ln_bias, err);
    if (st == XF_OK && po.fuse_gelu) st = rw_fuse_gelus(out, &n_gelu, err);
    if (st == XF_OK && po.scalar_mul) st = rw_scalar_mul_canonicalise(out, &n_scalar, err);
    if (st == XF_OK && (po.narrow || po.slice_selections))
        st = rw_narrow_selections(out, po.narrow, &n_sel, &n_narrowed, err);
    if (st == XF_OK && po.split_layout) st = rw_split_layout_merge(out, &n_layout, err);
    if (stats) {
        stats->split_convs = n_split;
        stats->fused_layernorms = n_ln;
        stats->fused_gelus = n_gelu;
        stats->scalar_muls = n_scalar;
        stats->narrowed_selections = n_sel;
        stats->narrowed_ops = n_narrowed;
        stats->merged_split_layouts = n_layout;
    }
    if (st != XF_OK) {
        xf_error_prefix(err, "preparing '%s'", model->name ? model->name : "model");
        xf_graph_free(out);
    }
    return st;
}
