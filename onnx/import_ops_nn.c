/*
 * import_ops_nn.c — mapping the ONNX neural-network operators: Conv,
 * MaxPool, AveragePool, GlobalAveragePool, BatchNormalization,
 * LayerNormalization, ConvTranspose, ReduceMean/ReduceSum/ReduceMax and
 * Softmax. BatchNormalization's history (opsets 7 to 15): `spatial` (7/8;
 * 0 stays opaque), `momentum` (ignored: inference), `training_mode` (14;
 * training stays opaque), the running-statistics outputs (opaque when
 * used).
 *
 * Convolution and windowed pooling are 2-D (NCHW) in rlflow; 1-D Conv
 * becomes a 2-D one (import_conv1d.c); other ranks stay opaque (GlobalAveragePool takes any rank from 3). auto_pad is
 * resolved here into explicit pads from the static input shape. Outputs that only exist in training (MaxPool indices,
 * BatchNormalization running statistics, LayerNormalization mean/inv-std)
 * keep the node opaque when the model uses them. Softmax before opset 13
 * normalises the input flattened to 2-D at `axis`: it maps directly when
 * every dim after the axis is 1, and otherwise becomes Reshape to 2-D,
 * softmax over the last axis, Reshape back.
 */
#include "import_internal.h"

#include <stdio.h>
#include <string.h>

/* Reads a 2-entry spatial attribute (strides, dilations, kernel_shape);
 * absent gives `def` for both. */
static xf_status attr_pair(imp_state *st, const char *name, int32_t def, int32_t *out,
                           int *given, xf_error *err)
{
    int64_t v[XF_MAX_DIMS];
    int n;
    xf_status rc = ox_attr_ints(st, name, v, XF_MAX_DIMS, &n, err);
    if (rc != XF_OK) return rc;
    if (given) *given = n >= 0;
    if (n < 0) {
        out[0] = out[1] = def;
        return XF_OK;
    }
    if (n != 2)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "attribute '%s' has %d values; a 2-D operator needs 2", name, n);
    for (int i = 0; i < 2; i++) {
        if (v[i] < 1 || v[i] > INT32_MAX)
            return ox_node_fail(st, err, XF_ERR_SHAPE,
                                 "attribute '%s' value %lld must be positive", name,
                                 (long long)v[i]);
        out[i] = (int32_t)v[i];
    }
    return XF_OK;
}

/* pads (top,left,bottom,right) from `pads` and `auto_pad` for a 2-D window
 * of `kernel` (before dilation) over the H,W dims of x. */
static xf_status spatial_pads(imp_state *st, const xf_shape *x, const int32_t *kernel,
                              const int32_t *stride, const int32_t *dilation, int32_t *pads,
                              xf_error *err)
{
    const char *mode;
    xf_status rc = ox_attr_string(st, "auto_pad", "NOTSET", &mode, err);
    if (rc != XF_OK) return rc;
    memset(pads, 0, 4 * sizeof *pads);
    if (strcmp(mode, "NOTSET") == 0) {
        int64_t v[XF_MAX_DIMS];
        int n;
        if ((rc = ox_attr_ints(st, "pads", v, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
        if (n < 0) return XF_OK;
        if (n != 4)
            return ox_node_fail(st, err, XF_ERR_SHAPE,
                                 "attribute 'pads' has %d values; a 2-D operator needs 4", n);
        for (int i = 0; i < 4; i++) {
            if (v[i] < 0 || v[i] > INT32_MAX)
                return ox_node_fail(st, err, XF_ERR_SHAPE, "pad %lld is out of range",
                                     (long long)v[i]);
            pads[i] = (int32_t)v[i];
        }
        return XF_OK;
    }
    if (strcmp(mode, "VALID") == 0) return XF_OK;
    int upper = strcmp(mode, "SAME_UPPER") == 0;
    if (!upper && strcmp(mode, "SAME_LOWER") != 0)
        return ox_node_fail(st, err, XF_ERR_PARSE, "unknown auto_pad '%s'", mode);
    for (int i = 0; i < 2; i++) {
        int64_t in = x->dims[2 + i], s = stride[i];
        int64_t span = ((int64_t)kernel[i] - 1) * dilation[i] + 1;
        int64_t out = (in + s - 1) / s;
        int64_t total = (out - 1) * s + span - in;
        if (total < 0) total = 0;
        if (total > INT32_MAX)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "auto_pad needs an implausible pad");
        int64_t small = total / 2, big = total - small;
        pads[i] = (int32_t)(upper ? small : big);
        pads[2 + i] = (int32_t)(upper ? big : small);
    }
    return XF_OK;
}

/* Input 0 must be a float32 NCHW tensor; *ok = 0 after making the node
 * opaque otherwise. */
static xf_status nchw_input(imp_state *st, xf_shape *x, int *ok, xf_error *err)
{
    xf_dtype dt;
    *ok = 0;
    xf_status rc = ox_in_info(st, 0, &dt, x, err);
    if (rc != XF_OK) return rc;
    if (x->rank != 4) {
        char why[96];
        snprintf(why, sizeof why, "rlflow supports the 2-D form only (4-D input), not rank %d",
                 x->rank);
        return ox_emit_opaque(st, why, err);
    }
    if (dt != XF_F32) return ox_emit_opaque(st, "input is not float32", err);
    *ok = 1;
    return XF_OK;
}

static int given_inputs(const imp_state *st, int max)
{
    int n = max < (int)st->node->n_input ? max : (int)st->node->n_input;
    while (n > 0 && ox_in_sym(st, n - 1) < 0) n--;
    return n;
}

/* Conv and ConvTranspose: float32 X [N,C,H,W] in *x and a float32 weight
 * in *w (optional float32 bias); *ok = 0 after keeping the node opaque. */
static xf_status conv_inputs(imp_state *st, xf_shape *x, xf_shape *w, int *ok, xf_error *err)
{
    xf_dtype wdt;
    xf_status rc = ox_need_inputs(st, 2, 3, err);
    if (rc == XF_OK) rc = nchw_input(st, x, ok, err);
    if (rc != XF_OK || !*ok) return rc;
    if ((rc = ox_in_info(st, 1, &wdt, w, err)) != XF_OK) return rc;
    if ((rc = ox_all_float(st, 3, ok, err)) != XF_OK) return rc;
    if (!*ok) return ox_emit_opaque(st, "weight or bias is not float32", err);
    return XF_OK;
}

/* ---------------------------------------------------------------- conv */

static xf_status map_conv(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_shape x, w;
    xf_dtype dt;
    int ok, given;
    if (ox_in_sym(st, 0) >= 0 && ox_in_info(st, 0, &dt, &x, err) == XF_OK && x.rank == 3)
        return ox_conv1d(st, err);
    xf_status rc = conv_inputs(st, &x, &w, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    if (w.rank != 4)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "weight has rank %d; a 2-D conv needs 4",
                             w.rank);
    int32_t ks[2];
    if ((rc = attr_pair(st, "kernel_shape", 1, ks, &given, err)) != XF_OK) return rc;
    if (given && (ks[0] != w.dims[2] || ks[1] != w.dims[3]))
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "kernel_shape %dx%d does not match the weight's %lldx%lld", ks[0],
                             ks[1], (long long)w.dims[2], (long long)w.dims[3]);
    if (w.dims[2] > INT32_MAX || w.dims[3] > INT32_MAX)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "kernel is implausibly large");
    p.kernel[0] = (int32_t)w.dims[2];
    p.kernel[1] = (int32_t)w.dims[3];
    if ((rc = attr_pair(st, "strides", 1, p.stride, NULL, err)) != XF_OK ||
        (rc = attr_pair(st, "dilations", 1, p.dilation, NULL, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "group", 1, &p.group, err)) != XF_OK ||
        (rc = spatial_pads(st, &x, p.kernel, p.stride, p.dilation, p.pads, err)) != XF_OK)
        return rc;
    if (p.group < 1)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "group %d must be positive", p.group);
    int s[3] = {ox_in_sym(st, 0), ox_in_sym(st, 1), ox_in_sym(st, 2)};
    return ox_emit_node(st, op, &p, s, given_inputs(st, 3), 1, err);
}

/* --------------------------------------------------------------- pooling */

static xf_status map_pool(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_shape x;
    int ok, given;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = nchw_input(st, &x, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    if ((rc = attr_pair(st, "kernel_shape", 1, p.kernel, &given, err)) != XF_OK) return rc;
    if (!given) return ox_node_fail(st, err, XF_ERR_PARSE, "attribute 'kernel_shape' is missing");
    int32_t unit[2] = {1, 1};
    if ((rc = attr_pair(st, "strides", 1, p.stride, NULL, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "ceil_mode", 0, &p.ceil_mode, err)) != XF_OK)
        return rc;
    if (op == XF_OP_MAXPOOL) {
        if ((rc = attr_pair(st, "dilations", 1, p.dilation, NULL, err)) != XF_OK) return rc;
    } else {
        if ((rc = ox_attr_i32(st, "count_include_pad", 0, &p.count_include_pad, err)) != XF_OK)
            return rc;
        if (ox_attr(st->node, "dilations"))
            return ox_emit_opaque(st, "AveragePool with dilations", err);
    }
    if ((rc = spatial_pads(st, &x, p.kernel, p.stride, op == XF_OP_MAXPOOL ? p.dilation : unit,
                           p.pads, err)) != XF_OK)
        return rc;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* Any [N,C,D1,...] input: the mean over all spatial dims. */
static xf_status map_global_pool(imp_state *st, xf_op op, xf_error *err)
{
    xf_shape x;
    xf_dtype dt;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc != XF_OK) return rc;
    if (dt != XF_F32 || x.rank < 3)
        return ox_emit_opaque(st, "input is not a float32 [N,C,D1,...] tensor", err);
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, NULL, &s, 1, 1, err);
}

/* --------------------------------------------------------- normalisation */

static xf_status map_batchnorm(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int ok;
    int32_t training;
    xf_status rc = ox_need_inputs(st, 5, 5, err);
    if (rc == XF_OK) rc = ox_all_float(st, 5, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "an input is not float32", err);
    if ((rc = ox_attr_float(st, "epsilon", 1e-5f, &p.epsilon, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "training_mode", 0, &training, err)) != XF_OK)
        return rc;
    if (training) return ox_emit_opaque(st, "training mode", err);
    int32_t spatial;
    if ((rc = ox_attr_i32(st, "spatial", 1, &spatial, err)) != XF_OK) return rc;
    if (st->opset < 9 && !spatial)
        return ox_emit_opaque(st, "per-element statistics (spatial = 0, opset 7/8)", err);
    int s[5];
    for (int i = 0; i < 5; i++) s[i] = ox_in_sym(st, i);
    return ox_emit_node(st, op, &p, s, 5, 1, err);
}

static xf_status map_layernorm(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int ok;
    xf_status rc = ox_need_inputs(st, 2, 3, err);
    if (rc == XF_OK) rc = ox_all_float(st, 3, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "an input is not float32", err);
    if ((rc = ox_attr_i32(st, "axis", -1, &p.axis, err)) != XF_OK ||
        (rc = ox_attr_float(st, "epsilon", 1e-5f, &p.epsilon, err)) != XF_OK)
        return rc;
    int s[3] = {ox_in_sym(st, 0), ox_in_sym(st, 1), ox_in_sym(st, 2)};
    return ox_emit_node(st, op, &p, s, given_inputs(st, 3), 1, err);
}

/* ReduceMean/ReduceMax (axes an input from opset 18) and ReduceSum (from
 * opset 13). noop_with_empty_axes (opset 13/18) with no axes is an
 * identity. */
static xf_status map_reduce(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int ok, n, dynamic;
    int64_t since = op == XF_OP_REDUCE_SUM ? 13 : 18, noop;
    xf_status rc = ox_need_inputs(st, 1, st->opset < since ? 1 : 2, err);
    if (rc == XF_OK) rc = ox_all_float(st, 1, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "input is not float32", err);
    if ((rc = ox_attr_i32(st, "keepdims", 1, &p.keepdims, err)) != XF_OK ||
        (rc = ox_attr_int(st, "noop_with_empty_axes", 0, &noop, err)) != XF_OK)
        return rc;
    rc = ox_list_param(st, since, "axes", 1, p.axes, XF_MAX_DIMS, &n, &dynamic, err);
    if (rc != XF_OK || dynamic) return rc;
    p.n_axes = n < 0 ? 0 : n;
    int s = ox_in_sym(st, 0);
    if (p.n_axes == 0 && noop) return ox_emit_node(st, XF_OP_IDENTITY, NULL, &s, 1, 1, err);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* ---------------------------------------------------------- conv transpose */

/* ConvTranspose, 2-D: pads and the output shape resolved from pads,
 * output_padding, output_shape and auto_pad (ONNX's formulas). */
static xf_status map_conv_transpose(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_shape x, w;
    int ok, n_op, n_os;
    int64_t outpad[XF_MAX_DIMS] = {0}, oshape[XF_MAX_DIMS];
    const char *mode;
    xf_status rc = conv_inputs(st, &x, &w, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    if (w.rank != 4 || w.dims[2] > INT32_MAX || w.dims[3] > INT32_MAX)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "weight must be [C, M/group, kh, kw]");
    p.kernel[0] = (int32_t)w.dims[2];
    p.kernel[1] = (int32_t)w.dims[3];
    if ((rc = attr_pair(st, "strides", 1, p.stride, NULL, err)) != XF_OK ||
        (rc = attr_pair(st, "dilations", 1, p.dilation, NULL, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "group", 1, &p.group, err)) != XF_OK ||
        (rc = ox_attr_string(st, "auto_pad", "NOTSET", &mode, err)) != XF_OK ||
        (rc = ox_attr_ints(st, "output_padding", outpad, XF_MAX_DIMS, &n_op, err)) != XF_OK ||
        (rc = ox_attr_ints(st, "output_shape", oshape, XF_MAX_DIMS, &n_os, err)) != XF_OK)
        return rc;
    if ((n_op >= 0 && n_op != 2) || (n_os >= 0 && n_os != 2 && n_os != 4))
        return ox_node_fail(st, err, XF_ERR_SHAPE, "output_padding/output_shape need 2 values");
    if (n_os == 4) {
        oshape[0] = oshape[2];
        oshape[1] = oshape[3];
    }
    if (p.group < 1 || w.dims[0] != x.dims[1])
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "weight's first dim %lld must be the input's channels %lld",
                             (long long)w.dims[0], (long long)x.dims[1]);
    int same = strncmp(mode, "SAME_", 5) == 0;
    if (!same && strcmp(mode, "NOTSET") != 0 && strcmp(mode, "VALID") != 0)
        return ox_node_fail(st, err, XF_ERR_PARSE, "unknown auto_pad '%s'", mode);
    if (strcmp(mode, "NOTSET") == 0 && n_os < 0) {
        int32_t unit[2] = {1, 1};
        if ((rc = spatial_pads(st, &x, unit, unit, unit, p.pads, err)) != XF_OK) return rc;
    }
    p.n_shape = 4;
    p.shape[0] = x.dims[0];
    p.shape[1] = w.dims[1] * p.group;
    for (int i = 0; i < 2; i++) {
        int64_t s = p.stride[i], span = ((int64_t)p.kernel[i] - 1) * p.dilation[i] + 1;
        int64_t full = s * (x.dims[2 + i] - 1) + outpad[i] + span;
        if (n_os < 0 && !same) {
            p.shape[2 + i] = full - p.pads[i] - p.pads[2 + i];
            continue;
        }
        int64_t out = n_os >= 0 ? oshape[i] : x.dims[2 + i] * s;
        int64_t total = full - out;
        if (total < 0) total = 0; /* larger: zeros at the end, as output padding */
        if (total > INT32_MAX)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "implausible output_shape");
        int upper = strcmp(mode, "SAME_UPPER") == 0;
        p.pads[i] = (int32_t)(upper ? total / 2 : total - total / 2);
        p.pads[2 + i] = (int32_t)(total - p.pads[i]);
        p.shape[2 + i] = out;
    }
    int s[3] = {ox_in_sym(st, 0), ox_in_sym(st, 1), ox_in_sym(st, 2)};
    return ox_emit_node(st, op, &p, s, given_inputs(st, 3), 1, err);
}

/* ---------------------------------------------------------------- softmax */

/* Softmax-1/11 over [outer, inner] flattened at axis a, as Reshape, softmax
 * over the last axis, Reshape back. */
static xf_status softmax_flattened(imp_state *st, const xf_shape *x, int a, xf_error *err)
{
    const char *out = ox_out_name(st, 0);
    const char *base = out[0] ? out : "softmax";
    const char *nm = ox_str(st->node->name);
    const char *flat = ox_fresh_name(st, base, "/flat", err);
    const char *soft = flat ? ox_fresh_name(st, base, "/softmax2d", err) : NULL;
    if (!soft) return err->code;
    char *names[3] = {NULL, NULL, NULL};
    static const char *const suffix[3] = {"/flatten", "/softmax", "/unflatten"};
    for (int k = 0; k < 3 && nm[0]; k++) {
        size_t len = strlen(nm) + 16;
        names[k] = xf_arena_alloc(&st->arena, len);
        if (!names[k]) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        snprintf(names[k], len, "%s%s", nm, suffix[k]);
    }
    xf_params r = xf_params_default();
    r.n_shape = 2;
    r.shape[0] = r.shape[1] = 1;
    for (int i = 0; i < x->rank; i++) r.shape[i < a ? 0 : 1] *= x->dims[i];
    int s = ox_in_sym(st, 0);
    xf_status rc = ox_emit(st, XF_OP_RESHAPE, &r, &s, 1, &flat, 1, names[0], err);
    if (rc != XF_OK) return rc;
    xf_params sm = xf_params_default();
    sm.axis = 1;
    s = ox_sym_find(st, flat);
    if ((rc = ox_emit(st, XF_OP_SOFTMAX, &sm, &s, 1, &soft, 1, names[1], err)) != XF_OK)
        return rc;
    xf_params back = xf_params_default();
    back.n_shape = x->rank;
    for (int i = 0; i < x->rank; i++) back.shape[i] = x->dims[i];
    s = ox_sym_find(st, soft);
    return ox_emit(st, XF_OP_RESHAPE, &back, &s, 1, &out, 1, names[2], err);
}

static xf_status map_softmax(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_shape x;
    xf_dtype dt;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_i32(st, "axis", st->opset >= 13 ? -1 : 1, &p.axis, err);
    if (rc != XF_OK) return rc;
    if (dt != XF_F32) return ox_emit_opaque(st, "input is not float32", err);
    int a = p.axis < 0 ? p.axis + x.rank : p.axis;
    if (a < 0 || a >= x.rank)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "axis %d is out of range for rank %d", p.axis,
                             x.rank);
    int trailing_ones = 1;
    for (int i = a + 1; i < x.rank; i++) trailing_ones &= x.dims[i] == 1;
    if (st->opset < 13 && !trailing_ones) {
        for (size_t k = 1; k < st->node->n_output; k++)
            if (ox_out_name(st, (int)k)[0]) return ox_emit_opaque(st, "extra outputs", err);
        return softmax_flattened(st, &x, a, err);
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static const imp_op_entry table[] = {
    {"Conv", map_conv, XF_OP_CONV},
    {"MaxPool", map_pool, XF_OP_MAXPOOL},
    {"AveragePool", map_pool, XF_OP_AVGPOOL},
    {"GlobalAveragePool", map_global_pool, XF_OP_GLOBAL_AVGPOOL},
    {"BatchNormalization", map_batchnorm, XF_OP_BATCHNORM},
    {"LayerNormalization", map_layernorm, XF_OP_LAYERNORM},
    {"ReduceMean", map_reduce, XF_OP_REDUCE_MEAN},
    {"ReduceSum", map_reduce, XF_OP_REDUCE_SUM},
    {"ReduceMax", map_reduce, XF_OP_REDUCE_MAX},
    {"ConvTranspose", map_conv_transpose, XF_OP_CONV_TRANSPOSE},
    {"Softmax", map_softmax, XF_OP_SOFTMAX},
};

const imp_op_entry *ox_ops_nn_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}
