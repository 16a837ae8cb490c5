/*
 * import_ops_shape.c — mapping the ONNX data-movement, shape and constant
 * operators: Concat, Split, Slice, Gather, Reshape, Flatten, Transpose,
 * Squeeze, Unsqueeze, Pad, Expand, Shape, Size, Tile, ConstantOfShape and
 * Constant. Older forms are converted on import: Slice before opset 10 and
 * Pad before opset 11 (attributes), Pad's axes (18), Split's uneven last
 * part (18).
 *
 * rlflow keeps list parameters (Reshape's target, Slice's bounds, Pad's
 * pads, Split's sizes, Squeeze/Unsqueeze axes from opset 13) as operator
 * parameters, so those inputs must be known at import time: initializers,
 * Constant nodes, or values folded from them and from static shapes. A
 * node whose parameter input is computed at run time stays opaque.
 * Parameters are normalised so that equal operators compare equal: Reshape
 * targets are fully resolved (no 0 or -1), Slice bounds are clamped to
 * [-dim-1, dim] (INT64_MAX "to the end" becomes the dim).
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <stdio.h>
#include <string.h>

static xf_status static_param(imp_state *st, int i, int *dynamic, xf_error *err);

xf_status ox_list_param(imp_state *st, int64_t since, const char *name, int input,
                         int64_t *out, int max, int *n, int *dynamic, xf_error *err)
{
    *dynamic = 0;
    if (st->opset < since) return ox_attr_ints(st, name, out, max, n, err);
    *n = -1;
    xf_status rc = static_param(st, input, dynamic, err);
    if (rc != XF_OK || *dynamic) return rc;
    return ox_in_ints(st, input, out, max, n, err);
}

/* Keeps the node opaque when parameter input i is only known at run time;
 * *dynamic says whether it did. */
static xf_status static_param(imp_state *st, int i, int *dynamic, xf_error *err)
{
    *dynamic = ox_in_dynamic(st, i);
    if (!*dynamic) return XF_OK;
    char why[160];
    snprintf(why, sizeof why, "parameter input %d '%s' is computed at run time", i,
             ox_in_name(st, i));
    return ox_emit_opaque(st, why, err);
}

/* A list parameter: attribute `name` before opset 13, input `input` from
 * opset 13 on (*n = -1 when absent). *dynamic as for static_param. */
static xf_status list_param(imp_state *st, const char *name, int input, int64_t *out, int max,
                            int *n, int *dynamic, xf_error *err)
{
    *dynamic = 0;
    if (st->opset < 13) return ox_attr_ints(st, name, out, max, n, err);
    *n = -1;
    xf_status rc = static_param(st, input, dynamic, err);
    if (rc != XF_OK || *dynamic) return rc;
    return ox_in_ints(st, input, out, max, n, err);
}

/* --------------------------------------------------------- concat, split */

static xf_status map_concat(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n = (int)st->node->n_input;
    xf_status rc = ox_need_inputs(st, 1, n, err);
    if (rc != XF_OK) return rc;
    if (!ox_attr(st->node, "axis"))
        return ox_node_fail(st, err, XF_ERR_PARSE, "attribute 'axis' is missing");
    if ((rc = ox_attr_i32(st, "axis", 0, &p.axis, err)) != XF_OK) return rc;
    int local[16];
    int *s = n <= 16 ? local : xf_arena_alloc(&st->arena, sizeof(int) * (size_t)n);
    if (!s) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        s[i] = ox_in_sym(st, i);
        if (s[i] < 0) return ox_node_fail(st, err, XF_ERR_GRAPH, "input %d is missing", i);
    }
    return ox_emit_node(st, op, &p, s, n, 1, err);
}

static xf_status map_split(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n_out = (int)st->node->n_output, n, dynamic;
    xf_status rc = ox_need_inputs(st, 1, st->opset < 13 ? 1 : 2, err);
    if (rc == XF_OK) rc = ox_attr_i32(st, "axis", 0, &p.axis, err);
    if (rc != XF_OK) return rc;
    if (n_out < 1) return ox_node_fail(st, err, XF_ERR_GRAPH, "has no outputs");
    if (n_out > XF_MAX_SPLIT)
        return ox_emit_opaque(st, "more outputs than rlflow's split has", err);
    rc = list_param(st, "split", 1, p.split, XF_MAX_SPLIT, &n, &dynamic, err);
    if (rc != XF_OK || dynamic) return rc;
    if (n >= 0 && n != n_out)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "%d split sizes for %d outputs", n, n_out);
    if (n < 0) {
        xf_dtype dt;
        xf_shape x;
        if ((rc = ox_in_info(st, 0, &dt, &x, err)) != XF_OK) return rc;
        int a = p.axis < 0 ? p.axis + x.rank : p.axis;
        if (a < 0 || a >= x.rank)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "axis %d is out of range for rank %d",
                                 p.axis, x.rank);
        int64_t chunk = (x.dims[a] + n_out - 1) / n_out; /* opset 18: the last is smaller */
        if (x.dims[a] % n_out != 0 && (st->opset < 18 || chunk * (n_out - 1) >= x.dims[a]))
            return ox_node_fail(st, err, XF_ERR_SHAPE,
                                 "dim %d (%lld) cannot be split evenly into %d outputs", a,
                                 (long long)x.dims[a], n_out);
        for (int k = 0; k < n_out; k++)
            p.split[k] = k < n_out - 1 ? chunk : x.dims[a] - chunk * (n_out - 1);
    }
    p.n_split = n_out;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, n_out, err);
}

/* ---------------------------------------------------------- slice, gather */

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static xf_status map_slice(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_dtype dt;
    xf_shape x;
    int n[5] = {0, -1, -1, -1, -1}, dynamic;
    int old = st->opset < 10; /* Slice-1: starts, ends, axes attributes; no steps */
    xf_status rc = old ? ox_need_inputs(st, 1, 1, err) : ox_need_inputs(st, 3, 5, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    for (int i = 1; i < 5 && rc == XF_OK && !old; i++) {
        rc = static_param(st, i, &dynamic, err);
        if (dynamic) return rc;
    }
    if (old) {
        if (rc == XF_OK) rc = ox_attr_ints(st, "starts", p.starts, XF_MAX_DIMS, &n[1], err);
        if (rc == XF_OK) rc = ox_attr_ints(st, "ends", p.ends, XF_MAX_DIMS, &n[2], err);
        if (rc == XF_OK) rc = ox_attr_ints(st, "axes", p.axes, XF_MAX_DIMS, &n[3], err);
        if (rc == XF_OK && (n[1] < 0 || n[2] < 0))
            return ox_node_fail(st, err, XF_ERR_PARSE, "attributes 'starts'/'ends' are missing");
    } else {
        if (rc == XF_OK) rc = ox_in_ints(st, 1, p.starts, XF_MAX_DIMS, &n[1], err);
        if (rc == XF_OK) rc = ox_in_ints(st, 2, p.ends, XF_MAX_DIMS, &n[2], err);
        if (rc == XF_OK) rc = ox_in_ints(st, 3, p.axes, XF_MAX_DIMS, &n[3], err);
        if (rc == XF_OK) rc = ox_in_ints(st, 4, p.steps, XF_MAX_DIMS, &n[4], err);
    }
    if (rc != XF_OK) return rc;
    if (n[1] != n[2] || (n[3] >= 0 && n[3] != n[1]) || (n[4] >= 0 && n[4] != n[1]))
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "starts, ends, axes and steps have different lengths (%d, %d, %d, %d)",
                             n[1], n[2], n[3], n[4]);
    p.n_axes = n[1];
    for (int i = 0; i < p.n_axes; i++) {
        if (n[3] < 0) p.axes[i] = i;
        if (n[4] < 0) p.steps[i] = 1;
        int64_t a = p.axes[i] < 0 ? p.axes[i] + x.rank : p.axes[i];
        if (a < 0 || a >= x.rank) continue; /* shape inference names the bad axis */
        int64_t dim = x.dims[a];
        p.starts[i] = clamp64(p.starts[i], -dim - 1, dim);
        p.ends[i] = clamp64(p.ends[i], -dim - 1, dim);
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static xf_status map_gather(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    if (rc == XF_OK) rc = ox_attr_i32(st, "axis", 0, &p.axis, err);
    if (rc != XF_OK) return rc;
    int s[2] = {ox_in_sym(st, 0), ox_in_sym(st, 1)};
    return ox_emit_node(st, op, &p, s, 2, 1, err);
}

/* ------------------------------------------------------- reshape family */

/* Resolves 0 (copy the input dim, unless allowzero) and -1 (whatever is
 * left) in a Reshape target. */
static xf_status resolve_target(imp_state *st, const xf_shape *x, int allowzero, xf_params *p,
                                xf_error *err)
{
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < p->n_shape; i++) {
        int64_t v = p->shape[i];
        if (v == 0 && !allowzero) {
            if (i >= x->rank)
                return ox_node_fail(st, err, XF_ERR_SHAPE,
                                     "target dim %d is 0 (copy) but the input has rank %d", i,
                                     x->rank);
            p->shape[i] = v = x->dims[i];
        }
        if (v == -1) {
            if (infer >= 0)
                return ox_node_fail(st, err, XF_ERR_SHAPE, "the target has more than one -1");
            infer = i;
            continue;
        }
        if (v < 0)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "target dim %d is %lld", i, (long long)v);
        if (v > 0 && known > INT64_MAX / v)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "the target is implausibly large");
        known *= v;
    }
    if (infer < 0) return XF_OK;
    int64_t numel = xf_shape_numel(x);
    if (known == 0 || numel % known != 0)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "cannot infer the -1 dim: %lld elements do not divide into %lld",
                             (long long)numel, (long long)known);
    p->shape[infer] = numel / known;
    return XF_OK;
}

static xf_status map_reshape(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_dtype dt;
    xf_shape x;
    int n, dynamic;
    int32_t allowzero;
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_i32(st, "allowzero", 0, &allowzero, err);
    if (rc == XF_OK) rc = static_param(st, 1, &dynamic, err);
    if (rc != XF_OK || dynamic) return rc;
    if ((rc = ox_in_ints(st, 1, p.shape, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
    p.n_shape = n;
    if ((rc = resolve_target(st, &x, allowzero, &p, err)) != XF_OK) return rc;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static xf_status map_flatten(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_attr_i32(st, "axis", 1, &p.axis, err);
    if (rc != XF_OK) return rc;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static xf_status map_transpose(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_attr_ints(st, "perm", p.axes, XF_MAX_DIMS, &n, err);
    if (rc != XF_OK) return rc;
    p.n_axes = n < 0 ? 0 : n;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* Squeeze (axes optional) and Unsqueeze (axes required). */
static xf_status map_squeeze(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n, dynamic, required = op == XF_OP_UNSQUEEZE && st->opset >= 13;
    xf_status rc = ox_need_inputs(st, 1 + required, st->opset < 13 ? 1 : 2, err);
    if (rc != XF_OK) return rc;
    rc = list_param(st, "axes", 1, p.axes, XF_MAX_DIMS, &n, &dynamic, err);
    if (rc != XF_OK || dynamic) return rc;
    if (n < 0 && op == XF_OP_UNSQUEEZE)
        return ox_node_fail(st, err, XF_ERR_PARSE, "the axes to insert are missing");
    p.n_axes = n < 0 ? 0 : n;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* ----------------------------------------------------------- pad, expand */

static xf_status map_pad(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_dtype dt;
    xf_shape x;
    int n, dynamic;
    const char *mode;
    int64_t pads[2 * XF_MAX_DIMS], axes[XF_MAX_DIMS];
    int old = st->opset < 11; /* Pad-2: pads and value are attributes */
    xf_status rc = old ? ox_need_inputs(st, 1, 1, err) : ox_need_inputs(st, 2, 4, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_string(st, "mode", "constant", &mode, err);
    if (rc != XF_OK) return rc;
    if (strcmp(mode, "constant") == 0)
        p.pad_mode = XF_PAD_CONSTANT;
    else if (strcmp(mode, "reflect") == 0)
        p.pad_mode = XF_PAD_REFLECT;
    else if (strcmp(mode, "edge") == 0)
        p.pad_mode = XF_PAD_EDGE;
    else
        return ox_emit_opaque(st, "pad mode rlflow lacks", err);
    for (int i = 1; i < 4 && !old; i++) {
        rc = static_param(st, i, &dynamic, err);
        if (rc != XF_OK || dynamic) return rc;
    }
    int n_axes = -1;
    if (old) {
        float value;
        if ((rc = ox_attr_ints(st, "pads", pads, 2 * XF_MAX_DIMS, &n, err)) != XF_OK ||
            (rc = ox_attr_float(st, "value", 0.0f, &value, err)) != XF_OK)
            return rc;
        if (p.pad_mode == XF_PAD_CONSTANT) p.value = value;
    } else if ((rc = ox_in_ints(st, 1, pads, 2 * XF_MAX_DIMS, &n, err)) != XF_OK ||
               (rc = ox_in_ints(st, 3, axes, XF_MAX_DIMS, &n_axes, err)) != XF_OK) {
        return rc;
    }
    if (n_axes < 0) {
        n_axes = x.rank;
        for (int i = 0; i < x.rank; i++) axes[i] = i;
    }
    if (n != 2 * n_axes)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "%d pads given for %d axes (input rank %d)", n,
                             n_axes, x.rank);
    for (int i = 0; i < n_axes; i++) {
        int a = (int)(axes[i] < 0 ? axes[i] + x.rank : axes[i]);
        if (a < 0 || a >= x.rank)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "pad axis %lld is out of range",
                                 (long long)axes[i]);
        p.starts[a] = pads[i];
        p.ends[a] = pads[n_axes + i];
    }
    if (!old && ox_in_sym(st, 2) >= 0 && p.pad_mode == XF_PAD_CONSTANT) {
        const xf_tensor *v = ox_in_const(st, 2, err);
        if (!v) return err->code;
        if (xf_shape_numel(&v->shape) != 1)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "constant_value must be one element");
        p.value = ox_scalar_value(v);
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static xf_status map_expand(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n, dynamic;
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    if (rc == XF_OK) rc = static_param(st, 1, &dynamic, err);
    if (rc != XF_OK || dynamic) return rc;
    if ((rc = ox_in_ints(st, 1, p.shape, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
    p.n_shape = n;
    /* a target read from run-time shapes (the batch of a class token's
     * broadcast) keeps the Expand a node where its output is a tensor, even
     * of a constant: written with symbolic dims it follows them */
    int s = ox_in_sym(st, 0), shape = ox_in_sym(st, 1);
    return ox_emit_node_as(st, op, &p, &s, 1, 1, st->syms[shape].deferred >= 0, err);
}

/* -------------------------------------------------------------- shape */

/* Shape, with start/end (opset 15) as a slice of the full shape. Shapes
 * are static, so the result is always known (see ox_emit). */
static xf_status map_shape(imp_state *st, xf_op op, xf_error *err)
{
    xf_dtype dt;
    xf_shape x;
    int64_t start, end;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_int(st, "start", 0, &start, err);
    if (rc == XF_OK) rc = ox_attr_int(st, "end", INT64_MAX, &end, err);
    if (rc != XF_OK) return rc;
    int s = ox_in_sym(st, 0);
    start = clamp64(start, -(int64_t)x.rank - 1, x.rank);
    end = clamp64(end, -(int64_t)x.rank - 1, x.rank);
    if (start == 0 && end == x.rank) return ox_emit_node(st, op, NULL, &s, 1, 1, err);
    for (size_t k = 1; k < st->node->n_output; k++)
        if (ox_out_name(st, (int)k)[0]) return ox_emit_opaque(st, "extra outputs", err);
    const char *out = ox_out_name(st, 0);
    const char *full = ox_fresh_name(st, out[0] ? out : "shape", "/full", err);
    if (!full) return err->code;
    if ((rc = ox_emit(st, op, NULL, &s, 1, &full, 1, st->node->name, err)) != XF_OK) return rc;
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.starts[0] = start;
    p.ends[0] = end;
    p.steps[0] = 1;
    s = ox_sym_find(st, full);
    return ox_emit(st, XF_OP_SLICE, &p, &s, 1, &out, 1, NULL, err);
}

/* Size (always known, like Shape) and Tile (constant repeats). */
static xf_status map_size_tile(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n, dynamic, tile = op == XF_OP_TILE;
    xf_status rc = ox_need_inputs(st, 1 + tile, 1 + tile, err);
    if (rc == XF_OK && tile) rc = static_param(st, 1, &dynamic, err);
    if (rc != XF_OK || (tile && dynamic)) return rc;
    if (tile && (rc = ox_in_ints(st, 1, p.shape, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
    if (tile) p.n_shape = n;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* ---------------------------------------------------------- constants */

/* Decodes the TENSOR attribute `a` of the current node. */
static xf_status attr_tensor(imp_state *st, const Onnx__AttributeProto *a, xf_tensor *t,
                             xf_error *err)
{
    if (!a->t) {
        memset(t, 0, sizeof *t);
        return ox_node_fail(st, err, XF_ERR_PARSE, "attribute '%s' holds no tensor",
                             ox_str(a->name));
    }
    char what[768];
    snprintf(what, sizeof what, "%s: node %d '%s' (%s): attribute '%s'", st->file,
             st->node_index, ox_str(st->node->name), ox_str(st->node->op_type),
             ox_str(a->name));
    return ox_tensor_decode(a->t, what, st->base_dir, t, err);
}

static xf_status map_constant_of_shape(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int n;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc != XF_OK) return rc;
    /* a shape computed at run time (from an input's shape, or from data):
     * the node stays, so that the model written computes it at any size */
    int s0 = ox_in_sym(st, 0);
    if (!ox_sym_is_const(st, s0) || st->syms[s0].deferred >= 0)
        return ox_calc_constant_of_shape(st, err);
    if ((rc = ox_in_ints(st, 0, p.shape, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
    p.n_shape = n;
    for (int i = 0; i < n; i++)
        if (p.shape[i] < 0)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "dim %d is negative (%lld)", i,
                                 (long long)p.shape[i]);
    p.to = XF_F32;
    const Onnx__AttributeProto *a = ox_attr(st->node, "value");
    if (a) {
        xf_tensor t;
        if ((rc = attr_tensor(st, a, &t, err)) != XF_OK) return rc;
        if (xf_shape_numel(&t.shape) != 1) {
            xf_tensor_free(&t);
            return ox_node_fail(st, err, XF_ERR_SHAPE, "attribute 'value' must be one element");
        }
        p.to = (int32_t)t.dtype;
        p.value = ox_scalar_value(&t);
        xf_tensor_free(&t);
    }
    return ox_emit_node(st, op, &p, NULL, 0, 1, err);
}

/* A rank-0 (one value) or 1-D tensor from attribute values. */
static xf_status list_tensor(xf_dtype dt, int rank, size_t n, const void *vals, xf_tensor *t,
                             xf_error *err)
{
    int64_t d = (int64_t)n;
    xf_shape sh = xf_shape_make(rank, &d);
    xf_status rc = xf_tensor_alloc(t, dt, &sh, err);
    if (rc == XF_OK && n) memcpy(t->data, vals, n * xf_dtype_size(dt));
    return rc;
}

static xf_status map_constant(imp_state *st, xf_op op, xf_error *err)
{
    (void)op;
    const Onnx__NodeProto *nd = st->node;
    xf_status rc = ox_need_inputs(st, 0, 0, err);
    if (rc != XF_OK) return rc;
    if (nd->n_attribute != 1)
        return ox_node_fail(st, err, XF_ERR_PARSE, "needs exactly one value attribute, has %zu",
                             nd->n_attribute);
    const Onnx__AttributeProto *a = nd->attribute[0];
    const char *name = ox_str(a->name);
    xf_tensor t;
    memset(&t, 0, sizeof t);
    if (strcmp(name, "value") == 0) {
        rc = attr_tensor(st, a, &t, err);
    } else if (strcmp(name, "value_float") == 0) {
        float f;
        rc = ox_attr_float(st, name, 0.0f, &f, err);
        if (rc == XF_OK) rc = list_tensor(XF_F32, 0, 1, &f, &t, err);
    } else if (strcmp(name, "value_floats") == 0) {
        rc = list_tensor(XF_F32, 1, a->n_floats, a->floats, &t, err);
    } else if (strcmp(name, "value_int") == 0) {
        int64_t i;
        rc = ox_attr_int(st, name, 0, &i, err);
        if (rc == XF_OK) rc = list_tensor(XF_I64, 0, 1, &i, &t, err);
    } else if (strcmp(name, "value_ints") == 0) {
        rc = list_tensor(XF_I64, 1, a->n_ints, a->ints, &t, err);
    } else {
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "a constant given by '%s' (rlflow supports value, value_float(s) and "
                             "value_int(s))",
                             name);
    }
    if (rc != XF_OK) return rc;
    const char *out = ox_out_name(st, 0);
    if (!out[0]) {
        xf_tensor_free(&t);
        return XF_OK;
    }
    return ox_set_const(st, out, &t, err);
}

static const imp_op_entry table[] = {
    {"Concat", map_concat, XF_OP_CONCAT},
    {"Split", map_split, XF_OP_SPLIT},
    {"Slice", map_slice, XF_OP_SLICE},
    {"Gather", map_gather, XF_OP_GATHER},
    {"Reshape", map_reshape, XF_OP_RESHAPE},
    {"Flatten", map_flatten, XF_OP_FLATTEN},
    {"Transpose", map_transpose, XF_OP_TRANSPOSE},
    {"Squeeze", map_squeeze, XF_OP_SQUEEZE},
    {"Unsqueeze", map_squeeze, XF_OP_UNSQUEEZE},
    {"Pad", map_pad, XF_OP_PAD},
    {"Expand", map_expand, XF_OP_EXPAND},
    {"Shape", map_shape, XF_OP_SHAPE},
    {"Size", map_size_tile, XF_OP_SIZE},
    {"Tile", map_size_tile, XF_OP_TILE},
    {"ConstantOfShape", map_constant_of_shape, XF_OP_CONSTANT_OF_SHAPE},
    {"Constant", map_constant, XF_OP_OPAQUE},
};

const imp_op_entry *ox_ops_shape_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}
