/*
 * export_dyn.c — exporting with symbolic dims kept: follows every symbol of
 * an xf_onnx_dynamic through the graph and decides how each size-bearing
 * parameter is written so that it follows the symbols.
 *
 * The graph has concrete shapes (point 0). For each probe (one symbol moved
 * to another size the model admits; dynamic_internal.h) every node's output
 * shapes are inferred again with xf_op_infer from its inputs' shapes at the
 * probe, its parameters adapted: a Reshape takes the target the original
 * model computes at that probe (looked up by its output's name), else its
 * dims copied from the input where they match, then the dim that is the
 * moved symbol's size moved with it when that accounts for the elements,
 * else one dim absorbing the rest; an Expand takes the original's output
 * shape there (a class token's broadcast to the batch), else follows its
 * input where the target equals the input's dim; a Slice to the end of a
 * moving axis stays at the end; a Resize keeps its ratio; a ConvTranspose
 * keeps its output padding. Opaque nodes take
 * the original's shapes at the probe. A named value whose shape differs
 * from the original's at a probe means a size was baked in (a folded shape
 * constant): the export fails, naming the node, rather than write a model
 * that is wrong at other sizes.
 *
 * A graph output's dim keeps the dim_param the original declared there; any
 * other dim that moves with the probes is written as the symbol's name when
 * it is that symbol on a graph output or an opaque node's output, else as a
 * dim with neither value nor name, so that ONNX Runtime knows no more of
 * the symbols inside the graph than the original told it
 * (hidden_from_fusions). The parameters are then written relative to the
 * input (Reshape 0/-1, a copied dim inferred where nothing else is, or a
 * shape subgraph, Expand 1 or a graph input's dim read by a shape subgraph,
 * Slice INT64_MAX, Resize scales) and
 * checked against every probe before they are used; a Reshape dim that is
 * another input dim (x [N,M,4] -> [M,N,4]) is taken from the input's
 * run-time shape (Shape -> Concat with the fixed dims -> Gather), and when
 * two dims would need a -1, all but one from a graph input's run-time shape
 * (an unflatten [B*S,H] -> [B,S,h,d] takes B and S from input_ids [B,S]).
 */
#include "dynamic_internal.h"
#include "export_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const xf_shape *pshape(const xf_export *x, int k, int v)
{
    return &x->pshape[(size_t)k * (size_t)x->g->n_values + (size_t)v];
}

static xf_shape *pshape_mut(xf_export *x, int k, int v)
{
    return &x->pshape[(size_t)k * (size_t)x->g->n_values + (size_t)v];
}

/* "symbol 'N' at 2" for messages. */
static void probe_desc(const xf_export *x, int k, char *buf, size_t n)
{
    int s = k / 2;
    snprintf(buf, n, "symbolic dim '%s' at %lld instead of %lld", x->dyn->names[s],
             (long long)ox_dyn_probe_size(x->dyn, s, k),
             (long long)xf_onnx_dynamic_size(x->dyn, s, 0));
}

/* Fails at probe k (-1: no probe shows it; then the first probe). */
static xf_status fail_at(xf_export *x, int node, int k, const char *fmt, const char *detail)
{
    char d[256], pd[256], msg[512];
    if (k < 0) k = 0;
    x->fail_sym = k / 2;
    xf_node_describe(x->g, node, d, sizeof d);
    probe_desc(x, k, pd, sizeof pd);
    snprintf(msg, sizeof msg, fmt, detail);
    x->st = XF_FAIL(x->err, XF_ERR_UNSUPPORTED,
                    "%s cannot be written with symbolic dims (%s): %s",
                    d, pd, msg);
    return x->st;
}

/* The last probe at which dim `axis` of value v moves (-1: none; axis -1:
 * any dim). */
static int moving_probe(const xf_export *x, int v, int axis)
{
    const xf_shape *s0 = &x->g->values[v].shape;
    for (int k = x->n_probe - 1; k >= 0; k--)
        for (int a = axis < 0 ? 0 : axis; a < (axis < 0 ? s0->rank : axis + 1); a++)
            if (pshape(x, k, v)->dims[a] != s0->dims[a]) return k;
    return -1;
}

static int dyn_varies(const xf_export *x, int v, int axis)
{
    return moving_probe(x, v, axis) >= 0;
}

/* ------------------------------------------------ parameters at a probe */

/* Output dims of a Reshape at probe k: what the original computes there,
 * else the input's dims where they match at point 0 and moved, one other
 * dim absorbing the remaining elements. */
static void reshape_at(const xf_export *x, int node, int k, const xf_shape *xin, xf_params *pp)
{
    const xf_node *n = &x->g->nodes[node];
    const xf_shape *x0 = &x->g->values[n->inputs[0]].shape;
    const xf_shape *y0 = &x->g->values[n->outputs[0]].shape;
    const xf_shape *truth =
        ox_dyn_probe_shape(x->dyn, k, x->g->values[n->outputs[0]].name, y0);
    if (truth && truth->rank == y0->rank && xf_shape_numel(truth) == xf_shape_numel(xin)) {
        memcpy(pp->shape, truth->dims, sizeof(int64_t) * (size_t)truth->rank);
        return;
    }
    int copied[XF_MAX_DIMS] = {0};
    int64_t known = 1;
    for (int i = 0; i < y0->rank; i++) {
        copied[i] = i < x0->rank && x0->dims[i] == y0->dims[i] && xin->dims[i] != x0->dims[i];
        pp->shape[i] = copied[i] ? xin->dims[i] : y0->dims[i];
        known *= pp->shape[i];
    }
    int64_t total = xf_shape_numel(xin);
    if (known == total) return;
    /* the dim that is the moved symbol itself (an unflatten [B*S,H] ->
     * [B,S,H] with S moved gives [B,S',H], not [B*S'/S,S,H]) */
    int s = k / 2;
    int64_t s0 = xf_onnx_dynamic_size(x->dyn, s, 0), s1 = ox_dyn_probe_size(x->dyn, s, k);
    for (int i = 0; s0 > 0 && i < y0->rank; i++) {
        if (copied[i] || pp->shape[i] != s0 || known % s0 != 0) continue;
        if ((known / s0) * s1 == total) {
            pp->shape[i] = s1;
            return;
        }
    }
    for (int i = 0; i < y0->rank; i++) {
        if (copied[i] || pp->shape[i] == 0) continue;
        int64_t rest = known / pp->shape[i];
        if (rest > 0 && total % rest == 0) {
            pp->shape[i] = total / rest;
            return;
        }
    }
}

/* Parameters of `node` at probe k, its inputs' shapes there being `in`. */
static void params_at(const xf_export *x, int node, int k, const xf_shape *in, xf_params *pp)
{
    const xf_node *n = &x->g->nodes[node];
    *pp = n->params;
    const xf_shape *x0 = n->n_inputs > 0 && n->inputs[0] >= 0
                             ? &x->g->values[n->inputs[0]].shape
                             : NULL;
    switch (n->op) {
    case XF_OP_RESHAPE: reshape_at(x, node, k, &in[0], pp); break;
    case XF_OP_EXPAND: {
        const xf_shape *y0 = &x->g->values[n->outputs[0]].shape;
        const xf_shape *truth =
            ox_dyn_probe_shape(x->dyn, k, x->g->values[n->outputs[0]].name, y0);
        for (int i = 0; i < pp->n_shape; i++) {
            int a = i - (pp->n_shape - x0->rank), j = i + (y0->rank - pp->n_shape);
            if (truth && truth->rank == y0->rank && j >= 0)
                pp->shape[i] = truth->dims[j]; /* what the original computes there */
            else if (a >= 0 && x0->dims[a] == n->params.shape[i])
                pp->shape[i] = in[0].dims[a];
        }
        break;
    }
    case XF_OP_SLICE:
        for (int i = 0; i < pp->n_axes; i++) {
            int a = (int)pp->axes[i];
            if (a < 0) a += x0->rank;
            if (a < 0 || a >= x0->rank || in[0].dims[a] == x0->dims[a]) continue;
            if ((pp->steps[i] == 0 || pp->steps[i] > 0) && pp->ends[i] == x0->dims[a])
                pp->ends[i] = in[0].dims[a];
        }
        break;
    case XF_OP_RESIZE: {
        const xf_shape *y0 = &x->g->values[n->outputs[0]].shape;
        const xf_shape *truth =
            ox_dyn_probe_shape(x->dyn, k, x->g->values[n->outputs[0]].name, y0);
        for (int i = 0; i < y0->rank && i < in[0].rank; i++) {
            if (truth && truth->rank == y0->rank) pp->shape[i] = truth->dims[i];
            else if (x0->dims[i] > 0 && y0->dims[i] % x0->dims[i] == 0)
                pp->shape[i] = in[0].dims[i] * (y0->dims[i] / x0->dims[i]);
            else if (y0->dims[i] > 0 && x0->dims[i] % y0->dims[i] == 0)
                pp->shape[i] = in[0].dims[i] / (x0->dims[i] / y0->dims[i]);
        }
        break;
    }
    case XF_OP_CONV_TRANSPOSE:
        pp->shape[0] = in[0].dims[0];
        for (int i = 0; i < 2; i++) {
            int64_t s = pp->stride[i], d = pp->dilation[i];
            int64_t b0 = s * (x0->dims[2 + i] - 1) + (pp->kernel[i] - 1) * d + 1 -
                         pp->pads[i] - pp->pads[2 + i];
            int64_t bp = s * (in[0].dims[2 + i] - 1) + (pp->kernel[i] - 1) * d + 1 -
                         pp->pads[i] - pp->pads[2 + i];
            pp->shape[2 + i] = n->params.shape[2 + i] - b0 + bp;
        }
        break;
    default: break;
    }
}

/* Output shapes of `node` at probe k. */
static xf_status follow_node(xf_export *x, int node, int k)
{
    const xf_node *n = &x->g->nodes[node];
    xf_dtype dt[XF_MAX_SPLIT + 8], odt[XF_MAX_SPLIT + 8];
    xf_shape sh[XF_MAX_SPLIT + 8], osh[XF_MAX_SPLIT + 8];
    if (n->n_inputs > XF_MAX_SPLIT + 8 || n->n_outputs > XF_MAX_SPLIT + 8)
        return fail_at(x, node, k, "%s", "too many inputs or outputs");
    if (n->op == XF_OP_OPAQUE) {
        for (int o = 0; o < n->n_outputs; o++) {
            int v = n->outputs[o];
            const xf_shape *t = ox_dyn_probe_shape(x->dyn, k, x->g->values[v].name,
                                                         &x->g->values[v].shape);
            *pshape_mut(x, k, v) = t && t->rank == x->g->values[v].shape.rank
                                       ? *t
                                       : x->g->values[v].shape;
        }
        return XF_OK;
    }
    for (int i = 0; i < n->n_inputs; i++) {
        int v = n->inputs[i];
        dt[i] = v < 0 ? XF_DTYPE_INVALID : x->g->values[v].dtype;
        if (v < 0) memset(&sh[i], 0, sizeof sh[i]);
        else sh[i] = *pshape(x, k, v);
    }
    xf_params pp;
    params_at(x, node, k, sh, &pp);
    xf_error e;
    xf_error_clear(&e);
    if (xf_op_infer(n->op, &pp, n->n_inputs, dt, sh, n->n_outputs, odt, osh, &e) != XF_OK)
        return fail_at(x, node, k, "%s", e.msg);
    for (int o = 0; o < n->n_outputs; o++) {
        int v = n->outputs[o];
        const xf_shape *y0 = &x->g->values[v].shape;
        if (osh[o].rank != y0->rank) return fail_at(x, node, k, "%s", "its output changes rank");
        const xf_shape *t = ox_dyn_probe_shape(x->dyn, k, x->g->values[v].name, y0);
        if (t && !xf_shape_equal(t, &osh[o])) {
            char s1[96], s2[96], msg[256];
            snprintf(msg, sizeof msg, "output '%s' would be %s where the original computes %s",
                     x->g->values[v].name, xf_shape_str(&osh[o], s1, sizeof s1),
                     xf_shape_str(t, s2, sizeof s2));
            return fail_at(x, node, k, "%s", msg);
        }
        *pshape_mut(x, k, v) = osh[o];
    }
    return XF_OK;
}

/* Input shapes at probe k: the symbolic dims at the probe's sizes. */
static void inputs_at(xf_export *x, int k)
{
    const xf_graph *g = x->g;
    for (int i = 0; i < g->n_inputs; i++) {
        int v = g->inputs[i];
        xf_shape *s = pshape_mut(x, k, v);
        for (int a = 0; a < x->dyn->n_inputs; a++) {
            const dyn_at *at = &x->dyn->inputs[a];
            if (g->values[v].name && strcmp(at->value, g->values[v].name) == 0 &&
                at->axis < s->rank)
                s->dims[at->axis] = ox_dyn_probe_size(x->dyn, at->sym, k);
        }
    }
}

xf_status ox_export_dyn_follow(xf_export *x)
{
    const xf_graph *g = x->g;
    x->n_probe = 2 * x->dyn->n_sym;
    size_t n = (size_t)x->n_probe * (size_t)g->n_values + 1;
    x->pshape = xf_malloc(sizeof *x->pshape * n);
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    xf_status st = XF_OK;
    if (!x->pshape || !order) {
        st = ox_export_fail_nomem(x);
        goto out;
    }
    for (int k = 0; k < x->n_probe; k++)
        for (int v = 0; v < g->n_values; v++) *pshape_mut(x, k, v) = g->values[v].shape;
    if ((st = xf_graph_topo_order(g, order, x->err)) != XF_OK) goto out;
    for (int k = 0; k < x->n_probe && st == XF_OK; k++) {
        inputs_at(x, k);
        for (int i = 0; i < g->n_nodes && st == XF_OK; i++) st = follow_node(x, order[i], k);
    }
out:
    xf_free(order);
    return st;
}

/* ---------------------------------------------------- names of the dims */

/* 1 when value v's symbolic dims are written unnamed: a value inside the
 * graph (no graph input or output) that an opaque node does not make (the
 * importer reads an opaque node's output shapes from value_info). ONNX
 * Runtime 1.30 fuses Add + LayerNormalization into SkipLayerNormalization
 * only where both of the add's operands are 3-D with the same dims, a
 * symbolic leading dim by the same name
 * (onnxruntime/core/optimizer/skip_layer_norm_fusion.cc), and on its CPU
 * provider that kernel runs 5-7.5x slower than the two it replaces
 * (docs/target.md). A model exported with a symbolic batch computes its
 * reshape targets from shapes or writes -1, so ONNX Runtime does not know
 * the batch past its first reshape and fuses none; written with the symbol
 * named on every value (and 0 copying it through reshapes) modelzoo BERT
 * written unchanged got 4 of them and ran 1.6x slower than its file
 * (docs/log/target.md, 2026-11-30, i39a). Unnamed here and inferred (-1)
 * through reshapes, the written model tells ONNX Runtime no more than the
 * original did. */
static int hidden_from_fusions(const xf_export *x, int v)
{
    const xf_graph *g = x->g;
    const xf_value *val = &g->values[v];
    return val->kind == XF_VALUE_NODE && val->producer >= 0 && !xf_graph_is_output(g, v) &&
           g->nodes[val->producer].op != XF_OP_OPAQUE;
}

const char *ox_export_dyn_dim_name(const xf_export *x, int v, int axis)
{
    const xf_graph *g = x->g;
    const xf_onnx_dynamic *d = x->dyn;
    const char *vname = g->values[v].name;
    int is_output = 0;
    for (int i = 0; i < g->n_outputs; i++) is_output |= g->outputs[i] == v;
    const char *declared = NULL;
    for (int i = 0; is_output && vname && i < d->n_outputs; i++)
        if (d->outputs[i].axis == axis && strcmp(d->outputs[i].value, vname) == 0)
            declared = d->outputs[i].name;
    if (declared || !dyn_varies(x, v, axis)) return declared; /* outputs keep theirs */
    if (hidden_from_fusions(x, v)) return "";
    for (int s = 0; s < d->n_sym; s++) {
        int same = g->values[v].shape.dims[axis] == xf_onnx_dynamic_size(d, s, 0);
        for (int k = 0; same && k < x->n_probe; k++)
            same = pshape(x, k, v)->dims[axis] == ox_dyn_probe_size(d, s, k);
        if (same) return d->names[s];
    }
    return "";
}

/* ------------------------------------------- parameters as they are written */

/* Input dim j equal to output dim i of the Reshape at point 0 and at
 * every probe, or -1 (the copy in place, j == i, first). */
static int same_dim(const xf_export *x, int vin, int vout, int i)
{
    const xf_shape *x0 = &x->g->values[vin].shape, *y0 = &x->g->values[vout].shape;
    for (int t = -1; t < x0->rank; t++) {
        int j = t < 0 ? i : t; /* i first, then the others in order */
        if ((t >= 0 && j == i) || j >= x0->rank || x0->dims[j] != y0->dims[i]) continue;
        int same = 1;
        for (int k = 0; same && k < x->n_probe; k++)
            same = pshape(x, k, vin)->dims[j] == pshape(x, k, vout)->dims[i];
        if (same) return j;
    }
    return -1;
}

/* A graph input's dim equal to dim i of value vout at point 0 and at every
 * probe, as a src code (XF_EXPORT_SRC_GRAPH + input * XF_MAX_DIMS + axis),
 * or -1. */
static int graph_input_dim(const xf_export *x, int vout, int i)
{
    const xf_graph *g = x->g;
    int64_t want = g->values[vout].shape.dims[i];
    for (int a = 0; a < g->n_inputs; a++) {
        int v = g->inputs[a];
        const xf_shape *s0 = &g->values[v].shape;
        for (int b = 0; b < s0->rank; b++) {
            if (s0->dims[b] != want || !dyn_varies(x, v, b)) continue;
            int same = 1;
            for (int k = 0; same && k < x->n_probe; k++)
                same = pshape(x, k, v)->dims[b] == pshape(x, k, vout)->dims[i];
            if (same) return XF_EXPORT_SRC_GRAPH + a * XF_MAX_DIMS + b;
        }
    }
    return -1;
}

/* Dim i at probe k as the written target gives it (src, 0 or fixed). */
static int64_t written_dim(const xf_export *x, int k, int vin, const int64_t *target,
                           const int *src, int i)
{
    const xf_shape *xk = pshape(x, k, vin);
    if (src[i] >= XF_EXPORT_SRC_GRAPH) {
        int c = src[i] - XF_EXPORT_SRC_GRAPH;
        return pshape(x, k, x->g->inputs[c / XF_MAX_DIMS])->dims[c % XF_MAX_DIMS];
    }
    if (src[i] >= 0) return xk->dims[src[i]];
    return target[i] == 0 ? xk->dims[i] : target[i];
}

xf_status ox_export_dyn_reshape(xf_export *x, int node, int64_t *target, int *src, int *relative)
{
    const xf_node *n = &x->g->nodes[node];
    int vin = n->inputs[0], vout = n->outputs[0];
    const xf_shape *y0 = &x->g->values[vout].shape;
    *relative = 0;
    memcpy(target, y0->dims, sizeof(int64_t) * (size_t)y0->rank);
    int any = 0, n_infer = 0;
    for (int i = 0; i < y0->rank; i++) {
        src[i] = -1;
        any |= dyn_varies(x, vout, i);
    }
    if (!any) return XF_OK;
    for (int i = 0; i < y0->rank; i++) {
        if (!dyn_varies(x, vout, i)) {
            if (y0->dims[i] == 0)
                return fail_at(x, node, moving_probe(x, vout, -1), "%s",
                               "its target has a zero dim");
            continue;
        }
        int j = same_dim(x, vin, vout, i);
        if (j == i) target[i] = 0;       /* Reshape copies it */
        else if (j >= 0) src[i] = j;     /* taken from the input's run-time shape */
        else target[i] = -1, n_infer++;  /* the rest */
    }
    /* more than one dim to infer: all but the last from the graph inputs'
     * run-time shapes where a graph input holds them */
    for (int i = 0; n_infer > 1 && i < y0->rank; i++) {
        if (target[i] != -1 || src[i] >= 0) continue;
        int c = graph_input_dim(x, vout, i);
        if (c >= 0) src[i] = c, target[i] = y0->dims[i], n_infer--;
    }
    /* nothing to infer: the first copied dim is inferred instead, so that
     * ONNX Runtime's shape inference does not carry the symbol through it
     * (hidden_from_fusions) */
    for (int i = 0; n_infer == 0 && i < y0->rank; i++)
        if (target[i] == 0 && src[i] < 0) target[i] = -1, n_infer = 1;
    int infer_probe = -1; /* written fixed, the symbol of the last one frees a -1 */
    for (int i = 0; i < y0->rank; i++)
        if (target[i] == -1 && src[i] < 0 && moving_probe(x, vout, i) > infer_probe)
            infer_probe = moving_probe(x, vout, i);
    if (n_infer > 1)
        return fail_at(x, node, infer_probe, "%s",
                       "two target dims depend on the symbols and are no input dim "
                       "(one -1 cannot express them)");
    /* the written target must give every probe's shape */
    for (int k = 0; k < x->n_probe; k++) {
        const xf_shape *xk = pshape(x, k, vin), *yk = pshape(x, k, vout);
        int64_t known = 1;
        int inf = -1;
        for (int i = 0; i < y0->rank; i++) {
            int64_t dk = written_dim(x, k, vin, target, src, i);
            if (target[i] == -1 && src[i] < 0) inf = i;
            else known *= dk;
            if (inf != i && dk != yk->dims[i])
                return fail_at(x, node, k, "%s", "its relative target gives another shape");
        }
        if (inf >= 0 && (known == 0 || xf_shape_numel(xk) / known != yk->dims[inf]))
            return fail_at(x, node, k, "%s", "its relative target gives another shape");
    }
    *relative = 1;
    return XF_OK;
}

xf_status ox_export_dyn_expand(xf_export *x, int node, int64_t *target, int *src)
{
    const xf_node *n = &x->g->nodes[node];
    int vin = n->inputs[0], vout = n->outputs[0];
    const xf_shape *x0 = &x->g->values[vin].shape, *y0 = &x->g->values[vout].shape;
    int r = n->params.n_shape;
    memcpy(target, n->params.shape, sizeof(int64_t) * (size_t)r);
    for (int i = 0; i < r; i++) {
        src[i] = -1;
        int j = i + (y0->rank - r); /* the output's dim */
        if (!dyn_varies(x, vout, j)) continue;
        int a = i - (r - x0->rank);
        if (a >= 0 && dyn_varies(x, vin, a) && x0->dims[a] == target[i]) {
            target[i] = 1; /* broadcasting keeps the input's dim */
            continue;
        }
        /* a broadcast to a graph input's dim (the batch): read at run time */
        if ((a < 0 || x0->dims[a] == 1) && (src[i] = graph_input_dim(x, vout, j)) >= 0)
            continue;
        return fail_at(x, node, moving_probe(x, vout, j), "%s",
                       "it expands to a size that depends on the symbols from a fixed dim "
                       "that no graph input's dim gives");
    }
    /* the written target must give every probe's shape */
    for (int k = 0; k < x->n_probe; k++) {
        const xf_shape *xk = pshape(x, k, vin), *yk = pshape(x, k, vout);
        for (int i = 0; i < r; i++) {
            int a = i - (r - x0->rank), j = i + (y0->rank - r);
            int64_t dk = written_dim(x, k, vin, target, src, i);
            if (dk == 1 && a >= 0) dk = xk->dims[a]; /* broadcasting */
            if (dk != yk->dims[j])
                return fail_at(x, node, k, "%s", "its relative target gives another shape");
        }
    }
    return XF_OK;
}

void ox_export_dyn_slice_ends(const xf_export *x, int node, int64_t *ends)
{
    const xf_node *n = &x->g->nodes[node];
    const xf_params *p = &n->params;
    int vin = n->inputs[0];
    const xf_shape *x0 = &x->g->values[vin].shape;
    for (int i = 0; i < p->n_axes; i++) {
        ends[i] = p->ends[i];
        int a = (int)p->axes[i];
        if (a < 0) a += x0->rank;
        if (a >= 0 && a < x0->rank && (p->steps[i] >= 0) && p->ends[i] == x0->dims[a] &&
            dyn_varies(x, vin, a))
            ends[i] = INT64_MAX;
    }
}

xf_status ox_export_dyn_resize(xf_export *x, int node, float *scales, int *use_scales)
{
    const xf_node *n = &x->g->nodes[node];
    int vin = n->inputs[0], vout = n->outputs[0];
    const xf_shape *x0 = &x->g->values[vin].shape, *y0 = &x->g->values[vout].shape;
    *use_scales = 0;
    for (int i = 0; i < y0->rank; i++) *use_scales |= dyn_varies(x, vout, i);
    if (!*use_scales) return XF_OK;
    for (int i = 0; i < y0->rank; i++) {
        if (x0->dims[i] == 0)
            return fail_at(x, node, moving_probe(x, vout, -1), "%s", "its input has a zero dim");
        scales[i] = (float)((double)y0->dims[i] / (double)x0->dims[i]);
        for (int k = 0; k < x->n_probe; k++) {
            double got = (double)pshape(x, k, vin)->dims[i] * (double)scales[i];
            if ((int64_t)got != pshape(x, k, vout)->dims[i] || got != (double)(int64_t)got)
                return fail_at(x, node, k, "%s",
                               "its output size is not a whole multiple of the input's");
        }
    }
    return XF_OK;
}
