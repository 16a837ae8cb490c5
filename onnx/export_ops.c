/*
 * export_ops.c — the ONNX form of each rlflow operator at the target opset.
 *
 * Ops the table maps to ONNX become one node whose parameters are written as
 * attributes or, where the opset takes them as inputs (Reshape, Slice, Pad,
 * Expand, Split/Squeeze/Unsqueeze from opset 13), as int64 initializers. A
 * conv's fused activation becomes a following Relu/Sigmoid/Tanh node.
 * Rule-only ops are lowered to standard ONNX: scalar_mul to Mul, gelu to
 * x*0.5*(1+Erf(x/sqrt(2))), enlarge to a zero Pad of the kernel dims; the
 * constant generators are evaluated and written as initializers. Opaque
 * nodes are written back with their own op_type, domain and attributes.
 */
#include "export_internal.h"

#include <stdio.h>
#include <string.h>

#include "onnx_dtype_internal.h"

#define MAX_EXTRA 4 /* parameter inputs appended to a node (Slice: 4) */

int ox_export_is_generator(xf_op op)
{
    const xf_op_info *i = xf_op_get(op);
    return op != XF_OP_OPAQUE && i && i->max_inputs == 0;
}

const char *xf_onnx_op_type(const xf_node *n)
{
    if (n->op == XF_OP_OPAQUE) return n->opaque && n->opaque->op_type ? n->opaque->op_type : "";
    if (n->op == XF_OP_SCALAR_MUL || n->op == XF_OP_GELU) return "Mul"; /* the final node */
    if (n->op == XF_OP_ENLARGE) return "Pad";
    if (ox_export_is_generator(n->op)) return "Constant"; /* written as an initializer */
    const xf_op_info *i = xf_op_get(n->op);
    return i && i->onnx_name ? i->onnx_name : "";
}

static const xf_node *node_at(const xf_export *x, int node)
{
    return &x->g->nodes[node];
}

static const xf_value *input_value(const xf_export *x, int node, int k)
{
    return &x->g->values[node_at(x, node)->inputs[k]];
}

static const xf_value *output_value(const xf_export *x, int node, int k)
{
    return &x->g->values[node_at(x, node)->outputs[k]];
}

static xf_status fail_node(xf_export *x, int node, xf_status code, const char *why)
{
    char d[256];
    xf_node_describe(x->g, node, d, sizeof d);
    x->st = XF_FAIL(x->err, code, "%s: %s", d, why);
    return x->st;
}

/* One NodeProto for `node`: its inputs (n_in of them) followed by `extra`,
 * its outputs unless `out` overrides the single output's name. */
Onnx__NodeProto *ox_export_emit_main(xf_export *x, int node, const char *op_type, int n_in,
                                  const char *const *extra, int n_extra, const char *out)
{
    const xf_node *n = node_at(x, node);
    const char *in[XF_MAX_SPLIT + MAX_EXTRA + 8];
    const char **outs = ox_export_alloc(x, sizeof(char *) * ((size_t)n->n_outputs + 1));
    if (!outs) return NULL;
    if (n_in + n_extra > (int)(sizeof in / sizeof in[0])) {
        fail_node(x, node, XF_ERR_UNSUPPORTED, "too many inputs to export");
        return NULL;
    }
    for (int i = 0; i < n_in; i++) in[i] = ox_export_vname(x, n->inputs[i]);
    for (int i = 0; i < n_extra; i++) {
        if (!extra[i]) return NULL; /* a parameter initializer failed */
        in[n_in + i] = extra[i];
    }
    for (int i = 0; i < n->n_outputs; i++) outs[i] = ox_export_vname(x, n->outputs[i]);
    if (out) outs[0] = out;
    return ox_export_node(x, node, NULL, op_type, n_in + n_extra, in, n->n_outputs, outs);
}

static int64_t at_least_1(int32_t v)
{
    return v > 0 ? v : 1;
}

static xf_status attr_pair(xf_export *x, Onnx__NodeProto *nd, const char *name, const int32_t *v)
{
    int64_t a[2] = {at_least_1(v[0]), at_least_1(v[1])};
    return ox_export_attr_ints(x, nd, name, a, 2);
}

/* xf pads [top,left,bottom,right] are ONNX's [x1_begin,x2_begin,x1_end,x2_end]. */
static xf_status attr_pads(xf_export *x, Onnx__NodeProto *nd, const int32_t *p)
{
    int64_t a[4] = {p[0], p[1], p[2], p[3]};
    return ox_export_attr_ints(x, nd, "pads", a, 4);
}

/* -------------------------------------------------------------- conv */

static const char *activation_op(int32_t act)
{
    switch (act) {
    case XF_ACT_RELU: return "Relu";
    case XF_ACT_SIGMOID: return "Sigmoid";
    case XF_ACT_TANH: return "Tanh";
    default: return NULL;
    }
}

static xf_status emit_conv(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_params *p = &n->params;
    const xf_value *w = input_value(x, node, 1), *y = output_value(x, node, 0);
    const char *act = activation_op(p->activation);
    if (p->activation != XF_ACT_NONE && !act)
        return fail_node(x, node, XF_ERR_UNSUPPORTED, "unknown fused activation");
    const char *conv_out = NULL;
    if (act) {
        conv_out = ox_export_temp(x, node, "conv", y->dtype, &y->shape);
        if (!conv_out) return x->st;
    }
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, "Conv", n->n_inputs, NULL, 0, conv_out);
    if (!nd) return x->st;
    int64_t kernel[2] = {w->shape.dims[2], w->shape.dims[3]};
    if (ox_export_attr_ints(x, nd, "kernel_shape", kernel, 2) != XF_OK ||
        attr_pair(x, nd, "strides", p->stride) != XF_OK || attr_pads(x, nd, p->pads) != XF_OK ||
        attr_pair(x, nd, "dilations", p->dilation) != XF_OK ||
        ox_export_attr_int(x, nd, "group", at_least_1(p->group)) != XF_OK)
        return x->st;
    if (!act) return XF_OK;
    const char *yname = ox_export_vname(x, n->outputs[0]);
    return ox_export_node(x, node, act, act, 1, &conv_out, 1, &yname) ? XF_OK : x->st;
}

static xf_status emit_pool(xf_export *x, int node, int is_max)
{
    const xf_params *p = &node_at(x, node)->params;
    Onnx__NodeProto *nd =
        ox_export_emit_main(x, node, is_max ? "MaxPool" : "AveragePool", 1, NULL, 0, NULL);
    if (!nd) return x->st;
    if (attr_pair(x, nd, "kernel_shape", p->kernel) != XF_OK ||
        attr_pair(x, nd, "strides", p->stride) != XF_OK || attr_pads(x, nd, p->pads) != XF_OK ||
        ox_export_attr_int(x, nd, "ceil_mode", p->ceil_mode) != XF_OK)
        return x->st;
    if (!is_max) return ox_export_attr_int(x, nd, "count_include_pad", p->count_include_pad);
    if (at_least_1(p->dilation[0]) != 1 || at_least_1(p->dilation[1]) != 1)
        return attr_pair(x, nd, "dilations", p->dilation);
    return XF_OK;
}

/* ----------------------------------------------------------- softmax */

/* From opset 13 Softmax normalises along one axis. Before, it flattens the
 * input to 2-D at `axis`, which is the same only when every dim after the
 * axis is 1; otherwise the axis is moved last, softmaxed and moved back. */
static xf_status emit_softmax(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_value *in = input_value(x, node, 0);
    int rank = in->shape.rank;
    int axis = n->params.axis < 0 ? n->params.axis + rank : n->params.axis;
    int trailing_ones = 1;
    for (int i = axis + 1; i < rank; i++)
        if (in->shape.dims[i] != 1) trailing_ones = 0;
    if (x->opset >= 13 || trailing_ones) {
        Onnx__NodeProto *nd = ox_export_emit_main(x, node, "Softmax", 1, NULL, 0, NULL);
        return nd ? ox_export_attr_int(x, nd, "axis", n->params.axis) : x->st;
    }
    int64_t perm[XF_MAX_DIMS], inv[XF_MAX_DIMS];
    xf_shape moved = in->shape;
    for (int i = 0, k = 0; i < rank; i++)
        if (i != axis) perm[k++] = i;
    perm[rank - 1] = axis;
    for (int i = 0; i < rank; i++) {
        inv[perm[i]] = i;
        moved.dims[i] = in->shape.dims[perm[i]];
    }
    const char *xin = ox_export_vname(x, n->inputs[0]);
    const char *t1 = ox_export_temp(x, node, "to_last", in->dtype, &moved);
    const char *t2 = ox_export_temp(x, node, "softmax", in->dtype, &moved);
    if (!t1 || !t2) return x->st;
    Onnx__NodeProto *a = ox_export_node(x, node, "to_last", "Transpose", 1, &xin, 1, &t1);
    if (!a || ox_export_attr_ints(x, a, "perm", perm, rank) != XF_OK) return x->st;
    Onnx__NodeProto *b = ox_export_node(x, node, "softmax", "Softmax", 1, &t1, 1, &t2);
    if (!b || ox_export_attr_int(x, b, "axis", rank - 1) != XF_OK) return x->st;
    Onnx__NodeProto *c = ox_export_emit_main(x, node, "Transpose", 0, &t2, 1, NULL);
    return c ? ox_export_attr_ints(x, c, "perm", inv, rank) : x->st;
}

/* --------------------------------------------------- data movement */

/* Reshape or Expand (op_type) whose target takes dims from run-time shapes:
 * Gather(Concat(Shape(x) where a dim of x is used, Shape(graph inputs
 * used)..., fixed), idx), idx[i] the position of src[i]'s dim there, or of
 * target[i] (a fixed dim, 0 or -1) among the fixed ones (export_internal.h:
 * src codes). */
static xf_status emit_target_gathered(xf_export *x, int node, const char *op_type,
                                      const int64_t *target, const int *src)
{
    const xf_value *in = input_value(x, node, 0);
    int r = node_at(x, node)->params.n_shape, nf = 0, ns = 0, total = 0;
    int64_t fixed[XF_MAX_DIMS], idx[XF_MAX_DIMS];
    int shape_of[XF_MAX_DIMS + 1], at[XF_MAX_DIMS + 1]; /* -1: x; else a graph input */
    for (int i = 0; i < r && ns == 0; i++)
        if (src[i] >= 0 && src[i] < XF_EXPORT_SRC_GRAPH)
            shape_of[0] = -1, at[0] = 0, ns = 1, total = in->shape.rank;
    for (int i = 0; i < r; i++) {
        if (src[i] < XF_EXPORT_SRC_GRAPH) continue;
        int gi = (src[i] - XF_EXPORT_SRC_GRAPH) / XF_MAX_DIMS, s = 0;
        while (s < ns && shape_of[s] != gi) s++;
        if (s == ns) {
            shape_of[ns] = gi, at[ns++] = total;
            total += x->g->values[x->g->inputs[gi]].shape.rank;
        }
    }
    for (int i = 0; i < r; i++) {
        if (src[i] >= XF_EXPORT_SRC_GRAPH) {
            int c = src[i] - XF_EXPORT_SRC_GRAPH, s = 0;
            while (shape_of[s] != c / XF_MAX_DIMS) s++;
            idx[i] = at[s] + c % XF_MAX_DIMS;
        } else if (src[i] >= 0) {
            idx[i] = src[i];
        } else {
            idx[i] = total + nf;
            fixed[nf++] = target[i];
        }
    }
    int64_t d_ext = total + nf, d_tgt = r;
    xf_shape s_ext = xf_shape_make(1, &d_ext), s_tgt = xf_shape_make(1, &d_tgt);
    const char *cat_in[XF_MAX_DIMS + 2];
    for (int s = 0; s < ns; s++) {
        int v = shape_of[s] < 0 ? node_at(x, node)->inputs[0] : x->g->inputs[shape_of[s]];
        int64_t d_shape = x->g->values[v].shape.rank;
        xf_shape s_shape = xf_shape_make(1, &d_shape);
        char label[32];
        if (shape_of[s] < 0) snprintf(label, sizeof label, "shape");
        else snprintf(label, sizeof label, "shape%d", s + (shape_of[0] >= 0 ? 0 : 1));
        const char *vin = ox_export_vname(x, v);
        cat_in[s] = ox_export_temp(x, node, label, XF_I64, &s_shape);
        if (!cat_in[s] || !ox_export_node(x, node, label, "Shape", 1, &vin, 1, &cat_in[s]))
            return x->st;
    }
    const char *ext = ox_export_temp(x, node, "dims", XF_I64, &s_ext);
    const char *tgt = ox_export_temp(x, node, "target", XF_I64, &s_tgt);
    const char *fx = nf ? ox_export_const_i64(x, node, "fixed", fixed, nf) : NULL;
    const char *ix = ox_export_const_i64(x, node, "index", idx, r);
    if (!ext || !tgt || (nf && !fx) || !ix) return x->st;
    if (nf) cat_in[ns] = fx;
    const char *gat_in[2] = {ext, ix};
    Onnx__NodeProto *b = ox_export_node(x, node, "dims", "Concat", ns + (nf ? 1 : 0), cat_in, 1, &ext);
    Onnx__NodeProto *c = ox_export_node(x, node, "target", "Gather", 2, gat_in, 1, &tgt);
    if (!b || !c || ox_export_attr_int(x, b, "axis", 0) != XF_OK ||
        ox_export_attr_int(x, c, "axis", 0) != XF_OK)
        return x->st;
    return ox_export_emit_main(x, node, op_type, 1, &tgt, 1, NULL) ? XF_OK : x->st;
}

static xf_status emit_reshape(xf_export *x, int node)
{
    const xf_params *p = &node_at(x, node)->params;
    int64_t target[XF_MAX_DIMS];
    int relative = 0, src[XF_MAX_DIMS], gather = 0;
    memcpy(target, p->shape, sizeof(int64_t) * (size_t)p->n_shape);
    if (x->n_probe && ox_export_dyn_reshape(x, node, target, src, &relative) != XF_OK)
        return x->st;
    for (int i = 0; relative && i < p->n_shape; i++) gather |= src[i] >= 0;
    if (gather) return emit_target_gathered(x, node, "Reshape", target, src);
    int has_zero = 0;
    for (int i = 0; i < p->n_shape; i++)
        if (target[i] == 0 && !relative) has_zero = 1;
    if (has_zero && x->opset < 14)
        return fail_node(x, node, XF_ERR_UNSUPPORTED,
                         "a zero-sized target dim needs Reshape's allowzero (opset 14)");
    const char *shape = ox_export_const_i64(x, node, "shape", target, p->n_shape);
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, "Reshape", 1, &shape, 1, NULL);
    if (!nd) return x->st;
    return has_zero ? ox_export_attr_int(x, nd, "allowzero", 1) : XF_OK;
}

static xf_status emit_slice(xf_export *x, int node)
{
    const xf_params *p = &node_at(x, node)->params;
    int64_t steps[XF_MAX_DIMS];
    for (int i = 0; i < p->n_axes; i++) steps[i] = p->steps[i] ? p->steps[i] : 1;
    int64_t ends[XF_MAX_DIMS];
    memcpy(ends, p->ends, sizeof(int64_t) * (size_t)p->n_axes);
    if (x->n_probe) ox_export_dyn_slice_ends(x, node, ends);
    const char *extra[4] = {
        ox_export_const_i64(x, node, "starts", p->starts, p->n_axes),
        ox_export_const_i64(x, node, "ends", ends, p->n_axes),
        ox_export_const_i64(x, node, "axes", p->axes, p->n_axes),
        ox_export_const_i64(x, node, "steps", steps, p->n_axes),
    };
    return ox_export_emit_main(x, node, "Slice", 1, extra, 4, NULL) ? XF_OK : x->st;
}

static const char *pad_mode_name(int32_t mode)
{
    switch (mode) {
    case XF_PAD_CONSTANT: return "constant";
    case XF_PAD_REFLECT: return "reflect";
    case XF_PAD_EDGE: return "edge";
    default: return NULL;
    }
}

static xf_status emit_pad(xf_export *x, int node)
{
    const xf_params *p = &node_at(x, node)->params;
    const xf_value *in = input_value(x, node, 0);
    const char *mode = pad_mode_name(p->pad_mode);
    if (!mode) return fail_node(x, node, XF_ERR_UNSUPPORTED, "unknown pad mode");
    int64_t pads[2 * XF_MAX_DIMS];
    int rank = in->shape.rank;
    for (int i = 0; i < rank; i++) {
        pads[i] = p->starts[i];
        pads[rank + i] = p->ends[i];
    }
    const char *extra[2] = {ox_export_const_i64(x, node, "pads", pads, 2 * rank), NULL};
    int n_extra = 1;
    if (p->pad_mode == XF_PAD_CONSTANT)
        extra[n_extra++] = ox_export_const_scalar(x, node, "value", in->dtype, p->value);
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, "Pad", 1, extra, n_extra, NULL);
    return nd ? ox_export_attr_string(x, nd, "mode", mode) : x->st;
}

/* enlarge: zero-pad the kernel dims of [O,I,kh,kw] to params.kernel, the
 * extra rows and columns split evenly with the odd one at the end. */
static xf_status emit_enlarge(xf_export *x, int node)
{
    const xf_value *w = input_value(x, node, 0), *y = output_value(x, node, 0);
    int64_t pads[8] = {0};
    for (int i = 0; i < 2; i++) {
        int64_t extra = y->shape.dims[2 + i] - w->shape.dims[2 + i];
        pads[2 + i] = extra / 2;
        pads[6 + i] = extra - extra / 2;
    }
    const char *extra[2] = {
        ox_export_const_i64(x, node, "pads", pads, 8),
        ox_export_const_scalar(x, node, "value", w->dtype, 0.0),
    };
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, "Pad", 1, extra, 2, NULL);
    return nd ? ox_export_attr_string(x, nd, "mode", "constant") : x->st;
}

/* Split sizes, Squeeze/Unsqueeze axes: an attribute before opset 13, an
 * int64 input from 13 on. */
static xf_status emit_list_param(xf_export *x, int node, const char *op_type,
                                 const char *list_name, const int64_t *v, int count)
{
    Onnx__NodeProto *nd;
    if (x->opset >= 13) {
        const char *list = count ? ox_export_const_i64(x, node, list_name, v, count) : NULL;
        nd = ox_export_emit_main(x, node, op_type, 1, &list, count ? 1 : 0, NULL);
    } else {
        nd = ox_export_emit_main(x, node, op_type, 1, NULL, 0, NULL);
        if (nd && count && ox_export_attr_ints(x, nd, list_name, v, count) != XF_OK) return x->st;
    }
    if (!nd) return x->st;
    if (strcmp(op_type, "Split") == 0)
        return ox_export_attr_int(x, nd, "axis", node_at(x, node)->params.axis);
    return XF_OK;
}

/* ----------------------------------------------------------- lowering */

static xf_status emit_gelu(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_value *y = output_value(x, node, 0);
    const char *in = ox_export_vname(x, n->inputs[0]);
    const char *sqrt2 = ox_export_shared_scalar(x, &x->gelu_const[0], "gelu_sqrt2", 1.41421356f);
    const char *one = ox_export_shared_scalar(x, &x->gelu_const[1], "gelu_one", 1.0f);
    const char *half = ox_export_shared_scalar(x, &x->gelu_const[2], "gelu_half", 0.5f);
    const char *t[4] = {
        ox_export_temp(x, node, "div", y->dtype, &y->shape),
        ox_export_temp(x, node, "erf", y->dtype, &y->shape),
        ox_export_temp(x, node, "add", y->dtype, &y->shape),
        ox_export_temp(x, node, "mul", y->dtype, &y->shape),
    };
    if (!sqrt2 || !one || !half || !t[0] || !t[1] || !t[2] || !t[3]) return x->st;
    const char *div_in[2] = {in, sqrt2}, *add_in[2] = {t[1], one}, *mul_in[2] = {in, t[2]};
    if (!ox_export_node(x, node, "div", "Div", 2, div_in, 1, &t[0]) ||
        !ox_export_node(x, node, "erf", "Erf", 1, &t[0], 1, &t[1]) ||
        !ox_export_node(x, node, "add", "Add", 2, add_in, 1, &t[2]) ||
        !ox_export_node(x, node, "mul", "Mul", 2, mul_in, 1, &t[3]))
        return x->st;
    const char *half_in[2] = {t[3], half};
    return ox_export_emit_main(x, node, "Mul", 0, half_in, 2, NULL) ? XF_OK : x->st;
}

static xf_status emit_generator(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_value *v = output_value(x, node, 0);
    xf_tensor t = {v->dtype, v->shape, NULL};
    size_t bytes = xf_tensor_bytes(&t);
    char d[256];
    /* the tensor is written out: it must fit the memory limit, as every
     * tensor the interpreter would make does (ir/memlimit.c) */
    if (xf_mem_limit_check(bytes, xf_node_describe(x->g, node, d, sizeof d), x->err) != XF_OK)
        return x->st = XF_ERR_NOMEM;
    t.data = ox_export_alloc(x, bytes ? bytes : 1);
    if (!t.data) return x->st;
    xf_status st = xf_op_run(n->op, &n->params, 0, NULL, 1, &t, x->err);
    if (st != XF_OK) {
        xf_error_prefix(x->err, "%s", xf_node_describe(x->g, node, d, sizeof d));
        return x->st = st;
    }
    return ox_export_initializer(x, ox_export_vname(x, n->outputs[0]), v->dtype, &v->shape,
                                 t.data, 0);
}

/* --------------------------------------------------------------- opaque */

/* protobuf-c's allocator over the model arena; `failed` tells an
 * out-of-memory decode from a malformed attribute (unpack returns NULL for
 * both). */
typedef struct arena_pb {
    xf_arena *arena;
    int failed;
} arena_pb;

static void *arena_pb_alloc(void *data, size_t size)
{
    arena_pb *a = data;
    void *p = xf_arena_alloc(a->arena, size);
    if (!p) a->failed = 1;
    return p;
}

static void arena_pb_free(void *data, void *ptr)
{
    (void)data; /* released with the arena */
    (void)ptr;
}

static xf_status emit_opaque(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_opaque *o = n->opaque;
    if (!o || !o->op_type || !o->op_type[0])
        return fail_node(x, node, XF_ERR_GRAPH, "opaque node has no op_type");
    int n_onnx = n->n_inputs - o->n_captured; /* the rest: what the branches read by name */
    for (int k = 0; k < o->n_captured; k++) {
        const char *have = ox_export_vname(x, n->inputs[n_onnx + k]);
        if (strcmp(have, o->captured[k]) == 0) continue;
        const char *want = ox_export_claim(x, o->captured[k]);
        if (!want) {
            char why[512];
            snprintf(why, sizeof why,
                     "its branches read '%s', but another value of the graph now has that name",
                     o->captured[k]);
            return fail_node(x, node, XF_ERR_UNSUPPORTED, why);
        }
        if (!ox_export_node(x, node, o->captured[k], "Identity", 1, &have, 1, &want)) return x->st;
    }
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, o->op_type, n_onnx, NULL, 0, NULL);
    if (!nd) return x->st;
    if (o->domain && o->domain[0]) {
        nd->domain = ox_export_alloc(x, strlen(o->domain) + 1);
        if (!nd->domain) return x->st;
        memcpy(nd->domain, o->domain, strlen(o->domain) + 1);
    }
    arena_pb pb = {&x->arena, 0};
    ProtobufCAllocator alloc = {arena_pb_alloc, arena_pb_free, &pb};
    for (int i = 0; i < o->n_attrs; i++) {
        Onnx__AttributeProto *a = onnx__attribute_proto__unpack(&alloc, o->attr_len[i],
                                                                o->attr_bytes[i]);
        if (!a && pb.failed) return fail_node(x, node, XF_ERR_NOMEM, "out of memory");
        if (!a) {
            char why[96];
            snprintf(why, sizeof why, "stored attribute %d is not a valid AttributeProto", i);
            return fail_node(x, node, XF_ERR_PARSE, why);
        }
        if (ox_export_attr_raw(x, nd, a) != XF_OK) return x->st;
    }
    return XF_OK;
}

/* ------------------------------------------------------- mapped ops */

/* Ops that map to one ONNX node with (at most) attributes. */
static xf_status emit_mapped(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_params *p = &n->params;
    const char *op_type = xf_op_get(n->op)->onnx_name;
    int n_in = n->n_inputs;
    if (n->op == XF_OP_DROPOUT && x->opset < 12) n_in = 1; /* ratio was an attribute */
    Onnx__NodeProto *nd = ox_export_emit_main(x, node, op_type, n_in, NULL, 0, NULL);
    if (!nd) return x->st;
    switch (n->op) {
    case XF_OP_CAST: return ox_export_attr_int(x, nd, "to", xf_onnx_dtype_code((xf_dtype)p->to));
    case XF_OP_GEMM:
        if (ox_export_attr_float(x, nd, "alpha", p->alpha) != XF_OK ||
            ox_export_attr_float(x, nd, "beta", p->beta) != XF_OK ||
            ox_export_attr_int(x, nd, "transA", p->trans_a) != XF_OK)
            return x->st;
        return ox_export_attr_int(x, nd, "transB", p->trans_b);
    case XF_OP_BATCHNORM: return ox_export_attr_float(x, nd, "epsilon", p->epsilon);
    case XF_OP_LAYERNORM:
        if (ox_export_attr_int(x, nd, "axis", p->axis) != XF_OK) return x->st;
        return ox_export_attr_float(x, nd, "epsilon", p->epsilon);
    case XF_OP_REDUCE_MEAN:
        if (p->n_axes && ox_export_attr_ints(x, nd, "axes", p->axes, p->n_axes) != XF_OK)
            return x->st;
        return ox_export_attr_int(x, nd, "keepdims", p->keepdims);
    case XF_OP_TRANSPOSE:
        return p->n_axes ? ox_export_attr_ints(x, nd, "perm", p->axes, p->n_axes) : XF_OK;
    case XF_OP_CONCAT:
    case XF_OP_GATHER:
    case XF_OP_FLATTEN: return ox_export_attr_int(x, nd, "axis", p->axis);
    default: return XF_OK;
    }
}

xf_status ox_export_emit(xf_export *x, int node)
{
    const xf_node *n = node_at(x, node);
    const xf_params *p = &n->params;
    if (ox_export_is_generator(n->op)) return emit_generator(x, node);
    switch (n->op) {
    case XF_OP_OPAQUE: return emit_opaque(x, node);
    case XF_OP_SCALAR_MUL: return ox_export_emit_main(x, node, "Mul", 2, NULL, 0, NULL) ? XF_OK : x->st;
    case XF_OP_GELU: return emit_gelu(x, node);
    case XF_OP_ENLARGE: return emit_enlarge(x, node);
    case XF_OP_CONV: return emit_conv(x, node);
    case XF_OP_MAXPOOL: return emit_pool(x, node, 1);
    case XF_OP_AVGPOOL: return emit_pool(x, node, 0);
    case XF_OP_SOFTMAX: return emit_softmax(x, node);
    case XF_OP_RESHAPE: return emit_reshape(x, node);
    case XF_OP_SLICE: return emit_slice(x, node);
    case XF_OP_PAD: return emit_pad(x, node);
    case XF_OP_SPLIT: return emit_list_param(x, node, "Split", "split", p->split, p->n_split);
    case XF_OP_SQUEEZE: return emit_list_param(x, node, "Squeeze", "axes", p->axes, p->n_axes);
    case XF_OP_UNSQUEEZE:
        return emit_list_param(x, node, "Unsqueeze", "axes", p->axes, p->n_axes);
    case XF_OP_CLIP:
    case XF_OP_HARDSIGMOID:
    case XF_OP_LEAKYRELU:
    case XF_OP_REDUCE_SUM:
    case XF_OP_REDUCE_MAX:
    case XF_OP_RESIZE:
    case XF_OP_CONV_TRANSPOSE:
    case XF_OP_TILE: return ox_export_emit_act(x, node);
    case XF_OP_EXPAND: {
        int64_t target[XF_MAX_DIMS];
        int src[XF_MAX_DIMS], gather = 0;
        memcpy(target, p->shape, sizeof(int64_t) * (size_t)p->n_shape);
        if (x->n_probe && ox_export_dyn_expand(x, node, target, src) != XF_OK) return x->st;
        for (int i = 0; x->n_probe && i < p->n_shape; i++) gather |= src[i] >= 0;
        if (gather) return emit_target_gathered(x, node, "Expand", target, src);
        const char *shape = ox_export_const_i64(x, node, "shape", target, p->n_shape);
        return ox_export_emit_main(x, node, "Expand", 1, &shape, 1, NULL) ? XF_OK : x->st;
    }
    default: break;
    }
    if (!xf_op_get(n->op) || !xf_op_get(n->op)->onnx_name)
        return fail_node(x, node, XF_ERR_UNSUPPORTED, "operator has no ONNX form");
    return emit_mapped(x, node);
}
