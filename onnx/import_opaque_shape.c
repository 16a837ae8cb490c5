/*
 * import_opaque_shape.c — output shapes of opaque nodes whose model gives
 * no value_info for them, by the shape rules of the standard ONNX
 * operators: element-wise ops rlflow keeps opaque (same shape as input 0,
 * or the broadcast of two inputs; bool for comparisons and IsNaN/IsInf),
 * (also the arithmetic ones, which are opaque on float16 and float64 data),
 * the recurrent layers (RNN, GRU, LSTM: Y, Y_h, Y_c from X's sequence and
 * batch dims, hidden_size and direction, both layouts) and If whose two
 * branches declare the same static output shape, QuantizeLinear and
 * DequantizeLinear (input 0's shape; the zero point's dtype, else uint8 or
 * output_dtype, for Quantize; the scale's for Dequantize). Anything else (a custom
 * domain, Loop, Scan, an unlisted op) has no rule: the importer then asks
 * the user for value_info (import_emit.c).
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <string.h>

static const char *const same_shape[] = {
    "Clip", "Elu", "Selu", "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Mish", "Shrink",
    "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh",
    "Cosh", "Asinh", "Acosh", "Atanh", "LRN", "InstanceNormalization", "LpNormalization",
    "MeanVarianceNormalization", "Hardmax", "LogSoftmax", "Softmax", "CumSum", "Identity",
    "Dropout", "HardSigmoid", "HardSwish", "LeakyRelu", "Relu", "Sigmoid", "Tanh", "Exp",
    "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Erf", "Not", "IsNaN", "IsInf", "ScatterND",
    "ScatterElements", "LayerNormalization", "Gelu", "BatchNormalization", NULL};

/* with two inputs (Max, Min and Sum take any number: only two have a rule);
 * the arithmetic ones are opaque on float16, float64 and integer data */
static const char *const broadcast2[] = {"Greater", "Less", "GreaterOrEqual", "LessOrEqual",
                                         "And", "Or", "Xor", "Mod", "BitShift", "PRelu", "Add",
                                         "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum",
                                         "Equal", NULL};

static int listed(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(op, list[i]) == 0) return 1;
    return 0;
}

static int returns_bool(const char *op)
{
    static const char *const b[] = {"Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And",
                                    "Or", "Xor", "IsNaN", "IsInf", "Not", "Equal", NULL};
    return listed(op, b);
}

/* RNN/GRU/LSTM output k: Y [seq, dirs, batch, hidden] (layout 1: [batch,
 * seq, dirs, hidden]), Y_h and Y_c [dirs, batch, hidden] (layout 1:
 * [batch, dirs, hidden]). */
static int recurrent(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_shape x;
    int64_t hidden, layout;
    const char *dir;
    if (ox_in_info(st, 0, dt, &x, err) != XF_OK ||
        ox_attr_int(st, "hidden_size", -1, &hidden, err) != XF_OK ||
        ox_attr_int(st, "layout", 0, &layout, err) != XF_OK ||
        ox_attr_string(st, "direction", "forward", &dir, err) != XF_OK)
        return -1;
    if (x.rank != 3 || hidden < 1 || k > 2) return 0;
    int64_t dirs = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
    int64_t seq = x.dims[layout ? 1 : 0], batch = x.dims[layout ? 0 : 1];
    if (k == 0) {
        int64_t d[4] = {seq, dirs, batch, hidden};
        int64_t d1[4] = {batch, seq, dirs, hidden};
        *sh = xf_shape_make(4, layout ? d1 : d);
    } else {
        int64_t d[3] = {dirs, batch, hidden};
        int64_t d1[3] = {batch, dirs, hidden};
        *sh = xf_shape_make(3, layout ? d1 : d);
    }
    return 1;
}

/* If: output k of both branches, when each declares one static shape. */
static int if_branches(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    const Onnx__AttributeProto *a[2] = {ox_attr(st->node, "then_branch"),
                                        ox_attr(st->node, "else_branch")};
    xf_dtype bdt[2];
    xf_shape bsh[2];
    for (int b = 0; b < 2; b++) {
        if (!a[b] || !a[b]->g || (size_t)k >= a[b]->g->n_output) return 0;
        if (ox_value_type(st, a[b]->g->output[k], 0, "branch output", &bdt[b], &bsh[b], err) !=
            XF_OK)
            return 0; /* symbolic or undeclared: no rule */
    }
    if (bdt[0] != bdt[1] || !xf_shape_equal(&bsh[0], &bsh[1])) return 0;
    *dt = bdt[0];
    *sh = bsh[0];
    return 1;
}

/* Where: the broadcast of its three inputs, input 1's dtype. */
static int where(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_shape s[3], t;
    xf_dtype d[3];
    for (int i = 0; i < 3; i++) {
        if (k != 0 || ox_in_sym(st, i) < 0) return 0;
        if (ox_in_info(st, i, &d[i], &s[i], err) != XF_OK) return -1;
    }
    if (xf_shape_broadcast(&s[0], &s[1], &t, NULL) != XF_OK ||
        xf_shape_broadcast(&t, &s[2], sh, NULL) != XF_OK)
        return 0;
    *dt = d[1];
    return 1;
}

/* QuantizeLinear (quantize 1) and DequantizeLinear output 0. */
static int quant(imp_state *st, int k, int quantize, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_dtype t;
    xf_shape s;
    if (k != 0 || ox_in_sym(st, 0) < 0 || ox_in_sym(st, 1) < 0) return 0;
    if (ox_in_info(st, 0, dt, sh, err) != XF_OK) return -1;
    if (!quantize) return ox_in_info(st, 1, dt, &s, err) == XF_OK ? 1 : -1;
    if (ox_in_sym(st, 2) >= 0) return ox_in_info(st, 2, dt, &s, err) == XF_OK ? 1 : -1;
    int64_t to;
    if (ox_attr_int(st, "output_dtype", 0, &to, err) != XF_OK) return -1;
    t = to > 0 && to < 64 ? xf_onnx_dtype_of_code((int)to) : XF_U8;
    if (t == XF_DTYPE_INVALID) return 0;
    *dt = t;
    return 1;
}

int ox_opaque_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    const char *domain = ox_str(st->node->domain), *op = ox_str(st->node->op_type);
    int ms = ox_ms_infer(st, k, dt, sh, err);
    if (ms != 0) return ms;
    if (domain[0] && strcmp(domain, "ai.onnx") != 0) return 0;
    if (strcmp(op, "RNN") == 0 || strcmp(op, "GRU") == 0 || strcmp(op, "LSTM") == 0)
        return recurrent(st, k, dt, sh, err);
    if (strcmp(op, "If") == 0) return if_branches(st, k, dt, sh, err);
    if (strcmp(op, "QuantizeLinear") == 0 || strcmp(op, "DequantizeLinear") == 0)
        return quant(st, k, strcmp(op, "QuantizeLinear") == 0, dt, sh, err);
    if (strcmp(op, "Where") == 0) return where(st, k, dt, sh, err);
    int nn = ox_nn_infer(st, k, dt, sh, err);
    if (nn != 0) return nn;
    int unary = listed(op, same_shape), binary = listed(op, broadcast2);
    if ((!unary && !binary) || k != 0 || ox_in_sym(st, 0) < 0) return 0;
    if (binary && st->node->n_input != 2) return 0;
    if (ox_in_info(st, 0, dt, sh, err) != XF_OK) return -1;
    if (binary) {
        xf_dtype dt1;
        xf_shape s1, out;
        if (ox_in_sym(st, 1) < 0) return 0;
        if (ox_in_info(st, 1, &dt1, &s1, err) != XF_OK) return -1;
        if (xf_shape_broadcast(sh, &s1, &out, err) != XF_OK) {
            ox_node_prefix(st, err, err ? err->code : XF_ERR_SHAPE);
            return -1;
        }
        *sh = out;
    }
    if (returns_bool(op)) *dt = XF_BOOL;
    return 1;
}
