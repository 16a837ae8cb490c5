/*
 * export_ops_act.c — the ONNX form of the operators added for models from
 * the wild that carry parameters: Clip (bounds as inputs; an infinite bound
 * is omitted), HardSigmoid, LeakyRelu, ReduceSum (axes an input from opset
 * 13) and ReduceMax, Resize (the output shape as `sizes`, with its
 * coordinate mode and rounding), ConvTranspose (explicit pads and the
 * output padding that gives the recorded output shape) and Tile (repeats).
 * The exporter's opsets are 11..17, where each of these has one form.
 */
#include "export_internal.h"

#include <math.h>

static xf_status emit_clip(xf_export *x, int node, const xf_params *p)
{
    const char *extra[2] = {"", ""};
    int n_extra = 0;
    if (!isinf(p->alpha) || !isinf(p->beta)) {
        extra[0] = isinf(p->alpha) ? "" : ox_export_const_scalar(x, node, "min", XF_F32, p->alpha);
        n_extra = 1;
    }
    if (!isinf(p->beta)) {
        extra[1] = ox_export_const_scalar(x, node, "max", XF_F32, p->beta);
        n_extra = 2;
    }
    return ox_export_emit_main(x, node, "Clip", 1, extra, n_extra, NULL) ? XF_OK : x->st;
}

/* axes_input: the opset takes the axes as an input (ReduceSum from 13). */
static xf_status emit_reduce(xf_export *x, int node, const xf_params *p, const char *op_type,
                             int axes_input)
{
    Onnx__NodeProto *nd;
    if (p->n_axes && axes_input) {
        const char *axes = ox_export_const_i64(x, node, "axes", p->axes, p->n_axes);
        nd = ox_export_emit_main(x, node, op_type, 1, &axes, 1, NULL);
    } else {
        nd = ox_export_emit_main(x, node, op_type, 1, NULL, 0, NULL);
        if (nd && p->n_axes && ox_export_attr_ints(x, nd, "axes", p->axes, p->n_axes) != XF_OK)
            return x->st;
    }
    if (!nd) return x->st;
    return ox_export_attr_int(x, nd, "keepdims", p->keepdims);
}

static xf_status emit_resize(xf_export *x, int node, const xf_params *p)
{
    static const char *const modes[] = {"nearest", "linear"};
    static const char *const coords[] = {"half_pixel", "asymmetric", "align_corners",
                                         "pytorch_half_pixel", "tf_half_pixel_for_nn"};
    static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};
    /* Resize-11/12 need roi and scales present: empty float tensors */
    float none = 0.0f, scales[XF_MAX_DIMS];
    int use_scales = 0;
    if (x->n_probe && ox_export_dyn_resize(x, node, scales, &use_scales) != XF_OK) return x->st;
    const char *empty = x->opset < 13 ? ox_export_const_vec(x, node, "empty", XF_F32, &none, 0) : "";
    const char *extra[3] = {empty, empty, NULL};
    if (use_scales) /* sizes that follow the symbols: by scales, the input's rank */
        extra[1] = ox_export_const_vec(x, node, "scales", XF_F32, scales,
                                       x->g->values[x->g->nodes[node].inputs[0]].shape.rank);
    else
        extra[2] = ox_export_const_i64(x, node, "sizes", p->shape, p->n_shape);
    Onnx__NodeProto *nd =
        ox_export_emit_main(x, node, "Resize", 1, extra, use_scales ? 2 : 3, NULL);
    if (!nd || ox_export_attr_string(x, nd, "mode", modes[p->kernel[0] & 1]) != XF_OK ||
        ox_export_attr_string(x, nd, "coordinate_transformation_mode",
                              coords[p->kernel[1] % 5]) != XF_OK)
        return x->st;
    if (p->kernel[0] != XF_RESIZE_NEAREST) return XF_OK;
    return ox_export_attr_string(x, nd, "nearest_mode", roundings[p->group & 3]);
}

static xf_status emit_conv_transpose(xf_export *x, int node, const xf_params *p)
{
    const xf_node *n = &x->g->nodes[node];
    const xf_shape *in = &x->g->values[n->inputs[0]].shape;
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, "ConvTranspose", n->n_inputs, NULL, 0, NULL);
    if (!nd) return x->st;
    int64_t kernel[2], stride[2], dil[2], pads[4], outpad[2];
    for (int i = 0; i < 2; i++) {
        kernel[i] = p->kernel[i];
        stride[i] = p->stride[i];
        dil[i] = p->dilation[i];
        int64_t base = stride[i] * (in->dims[2 + i] - 1) + (kernel[i] - 1) * dil[i] + 1 -
                       p->pads[i] - p->pads[2 + i];
        outpad[i] = p->shape[2 + i] - base;
    }
    for (int i = 0; i < 4; i++) pads[i] = p->pads[i];
    if (ox_export_attr_ints(x, nd, "kernel_shape", kernel, 2) != XF_OK ||
        ox_export_attr_ints(x, nd, "strides", stride, 2) != XF_OK ||
        ox_export_attr_ints(x, nd, "dilations", dil, 2) != XF_OK ||
        ox_export_attr_ints(x, nd, "pads", pads, 4) != XF_OK ||
        ox_export_attr_int(x, nd, "group", p->group) != XF_OK)
        return x->st;
    if (outpad[0] || outpad[1]) return ox_export_attr_ints(x, nd, "output_padding", outpad, 2);
    return XF_OK;
}

xf_status ox_export_emit_act(xf_export *x, int node)
{
    const xf_node *n = &x->g->nodes[node];
    const xf_params *p = &n->params;
    Onnx__NodeProto *nd;
    switch (n->op) {
    case XF_OP_CLIP: return emit_clip(x, node, p);
    case XF_OP_HARDSIGMOID:
    case XF_OP_LEAKYRELU:
        nd = ox_export_emit_main(x, node, xf_op_get(n->op)->onnx_name, 1, NULL, 0, NULL);
        if (!nd || ox_export_attr_float(x, nd, "alpha", p->alpha) != XF_OK) return x->st;
        return n->op == XF_OP_LEAKYRELU ? XF_OK : ox_export_attr_float(x, nd, "beta", p->beta);
    case XF_OP_REDUCE_SUM: return emit_reduce(x, node, p, "ReduceSum", x->opset >= 13);
    case XF_OP_REDUCE_MAX: return emit_reduce(x, node, p, "ReduceMax", 0);
    case XF_OP_RESIZE: return emit_resize(x, node, p);
    case XF_OP_CONV_TRANSPOSE: return emit_conv_transpose(x, node, p);
    case XF_OP_TILE: {
        const char *reps = ox_export_const_i64(x, node, "repeats", p->shape, p->n_shape);
        return ox_export_emit_main(x, node, "Tile", 1, &reps, 1, NULL) ? XF_OK : x->st;
    }
    default: {
        char d[256];
        x->st = XF_FAIL(x->err, XF_ERR_INTERNAL, "%s: not one of export_ops_act.c's operators",
                        xf_node_describe(x->g, node, d, sizeof d));
        return x->st;
    }
    }
}
