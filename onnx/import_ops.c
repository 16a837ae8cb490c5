/*
 * import_ops.c — from an ONNX node to operators of the table: the dispatch
 * on op_type (default domain only; any other domain, any op_type without a
 * mapping and any attribute combination rlflow cannot represent exactly
 * becomes an opaque node, never an error; only a node without an op_type
 * is refused), the helpers every mapping uses,
 * and the element-wise and linear-algebra mappings. Convolution, pooling
 * and normalisation live in import_ops_nn.c; data movement, shapes and
 * constants in import_ops_shape.c.
 *
 * A Relu/Sigmoid/Tanh whose input is a convolution's output used nowhere
 * else is fused into the convolution (params.activation), the form rules
 * match and the form the exporter writes back as Conv + activation.
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

const char *ox_out_name(const imp_state *st, int k)
{
    if (k < 0 || (size_t)k >= st->node->n_output) return "";
    return ox_str(st->node->output[k]);
}

xf_status ox_need_inputs(imp_state *st, int lo, int hi, xf_error *err)
{
    int n = (int)st->node->n_input;
    while (n > 0 && !ox_in_name(st, n - 1)[0]) n--;
    if (n > hi)
        return ox_node_fail(st, err, XF_ERR_GRAPH, "has %d inputs; this operator takes at most %d",
                             n, hi);
    for (int i = 0; i < lo; i++)
        if (!ox_in_name(st, i)[0])
            return ox_node_fail(st, err, XF_ERR_GRAPH,
                                 "input %d is missing; this operator needs at least %d inputs", i,
                                 lo);
    return XF_OK;
}

xf_status ox_in_info(imp_state *st, int i, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    int s = ox_in_sym(st, i);
    if (s < 0) return ox_node_fail(st, err, XF_ERR_GRAPH, "input %d is missing", i);
    xf_status rc = ox_sym_info(st, s, dt, sh, err);
    return rc == XF_OK ? XF_OK : ox_node_prefix(st, err, rc);
}

int ox_in_dynamic(const imp_state *st, int i)
{
    int s = ox_in_sym(st, i);
    return s >= 0 && !ox_sym_is_const(st, s);
}

xf_status ox_attr_i32(imp_state *st, const char *name, int64_t def, int32_t *out, xf_error *err)
{
    int64_t v;
    *out = 0;
    xf_status rc = ox_attr_int(st, name, def, &v, err);
    if (rc != XF_OK) return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED, "attribute '%s' = %lld is out of range",
                             name, (long long)v);
    *out = (int32_t)v;
    return XF_OK;
}

xf_status ox_emit_node(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                        int n_out, xf_error *err)
{
    return ox_emit_node_as(st, op, p, in_syms, n_in, n_out, 0, err);
}

xf_status ox_emit_node_as(imp_state *st, xf_op op, const xf_params *p, const int *in_syms,
                          int n_in, int n_out, int params_deferred, xf_error *err)
{
    for (int k = n_out; (size_t)k < st->node->n_output; k++)
        if (ox_out_name(st, k)[0]) {
            char why[128];
            snprintf(why, sizeof why, "its output %d has no equivalent in rlflow's %s", k,
                     xf_op_get(op)->name);
            return ox_emit_opaque(st, why, err);
        }
    const char *names[XF_MAX_SPLIT];
    if (n_out > XF_MAX_SPLIT)
        return ox_emit_opaque(st, "too many outputs", err);
    for (int k = 0; k < n_out; k++) names[k] = ox_out_name(st, k);
    return ox_emit_as(st, op, p, in_syms, n_in, names, n_out, st->node->name, params_deferred,
                      err);
}

/* Symbols of inputs 0..n-1 (-1 for omitted ones). */
static void input_syms(const imp_state *st, int *syms, int n)
{
    for (int i = 0; i < n; i++) syms[i] = ox_in_sym(st, i);
}

/* Number of inputs up to the last one given. */
static int n_given(const imp_state *st)
{
    int n = (int)st->node->n_input;
    while (n > 0 && !ox_in_name(st, n - 1)[0]) n--;
    return n;
}

static int numeric(xf_dtype t)
{
    return t == XF_F32 || t == XF_I64 || t == XF_I32;
}

/* The dtypes rlflow's kernels compute on (float16, double, int8 and uint8
 * are carried only: docs/onnx.md). */
static int computed(xf_dtype t)
{
    return numeric(t) || t == XF_BOOL;
}

/* Opaque node because input `i` has a dtype the operator's kernel lacks. */
static xf_status dtype_opaque(imp_state *st, int i, xf_dtype t, xf_error *err)
{
    char why[128];
    snprintf(why, sizeof why, "input %d is %s, which rlflow's kernel does not take", i,
             xf_dtype_name(t));
    return ox_emit_opaque(st, why, err);
}

xf_status ox_all_float(imp_state *st, int n, int *ok, xf_error *err)
{
    *ok = 1;
    for (int i = 0; i < n && *ok; i++) {
        if (ox_in_sym(st, i) < 0) continue;
        xf_dtype dt;
        xf_shape sh;
        xf_status rc = ox_in_info(st, i, &dt, &sh, err);
        if (rc != XF_OK) return rc;
        *ok = dt == XF_F32;
    }
    return XF_OK;
}

/* ------------------------------------------------------------ element-wise */

/* Fuses the activation into the convolution producing input 0 when nothing
 * else consumes that value; *fused says whether it did. */
static xf_status try_fuse(imp_state *st, xf_activation act, int *fused, xf_error *err)
{
    *fused = 0;
    int s = ox_in_sym(st, 0);
    const char *out = ox_out_name(st, 0);
    if (act == XF_ACT_NONE || s < 0 || !out[0] || st->node->n_output > 1) return XF_OK;
    const imp_sym *sy = &st->syms[s];
    if (sy->uses != 1 || sy->value < 0) return XF_OK;
    const xf_value *v = &st->g->values[sy->value];
    if (v->kind != XF_VALUE_NODE || v->producer_output != 0) return XF_OK;
    xf_node *conv = &st->g->nodes[v->producer];
    if (conv->op != XF_OP_CONV || conv->params.activation != XF_ACT_NONE) return XF_OK;
    conv->params.activation = act;
    *fused = 1;
    return ox_bind_output(st, sy->value, out, err);
}

static xf_status map_unary(imp_state *st, xf_op op, xf_error *err)
{
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    int ok, fused, s = ox_in_sym(st, 0);
    if (rc == XF_OK) rc = ox_all_float(st, 1, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "input is not float32", err);
    if ((rc = try_fuse(st, xf_op_activation(op), &fused, err)) != XF_OK || fused) return rc;
    return ox_emit_node(st, op, NULL, &s, 1, 1, err);
}

/* Add, Sub, Mul, Div, Pow, Equal. */
static xf_status map_binary(imp_state *st, xf_op op, xf_error *err)
{
    xf_dtype a, b;
    xf_shape sa, sb;
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &a, &sa, err);
    if (rc == XF_OK) rc = ox_in_info(st, 1, &b, &sb, err);
    if (rc != XF_OK) return rc;
    if (op == XF_OP_POW) {
        if (!numeric(a)) return dtype_opaque(st, 0, a, err);
        if (!numeric(b)) return dtype_opaque(st, 1, b, err);
    } else if (a != b) {
        return ox_node_fail(st, err, XF_ERR_SHAPE, "inputs have different dtypes, %s and %s",
                             xf_dtype_name(a), xf_dtype_name(b));
    } else if ((op != XF_OP_EQUAL || !computed(a)) && !numeric(a)) {
        return dtype_opaque(st, 0, a, err); /* Equal: float16... data too */
    }
    int s[2];
    input_syms(st, s, 2);
    return ox_emit_node(st, op, NULL, s, 2, 1, err);
}

static xf_status map_where(imp_state *st, xf_op op, xf_error *err)
{
    xf_dtype c, a, b;
    xf_shape sc, sa, sb;
    xf_status rc = ox_need_inputs(st, 3, 3, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &c, &sc, err);
    if (rc == XF_OK) rc = ox_in_info(st, 1, &a, &sa, err);
    if (rc == XF_OK) rc = ox_in_info(st, 2, &b, &sb, err);
    if (rc != XF_OK) return rc;
    if (c != XF_BOOL || a != b)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "needs a bool condition and two inputs of one dtype, got %s, %s, %s",
                             xf_dtype_name(c), xf_dtype_name(a), xf_dtype_name(b));
    if (!computed(a)) return dtype_opaque(st, 1, a, err); /* float16, double, int8, uint8 */
    int s[3];
    input_syms(st, s, 3);
    return ox_emit_node(st, op, NULL, s, 3, 1, err);
}

static xf_status map_identity(imp_state *st, xf_op op, xf_error *err)
{
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    int s = ox_in_sym(st, 0);
    return rc != XF_OK ? rc : ox_emit_node(st, op, NULL, &s, 1, 1, err);
}

/* Whether Dropout's ratio input is a constant 0 (torchvision's Swin calls
 * dropout with p = 0 and training = True: an identity either way). */
static int zero_ratio(imp_state *st)
{
    int s = ox_in_sym(st, 1);
    if (s < 0 || !ox_sym_is_const(st, s) || ox_sym_decode(st, s, NULL) != XF_OK) return 0;
    const xf_tensor *t = &st->syms[s].t;
    return xf_shape_numel(&t->shape) == 1 && ox_scalar_value(t) == 0.0;
}

/* Inference only: the data passes through; the optional mask is all true.
 * A training_mode input that is not a constant false keeps it opaque,
 * unless the ratio is a constant 0 (nothing is dropped in training either). */
static xf_status map_dropout(imp_state *st, xf_op op, xf_error *err)
{
    xf_status rc = ox_need_inputs(st, 1, 3, err);
    if (rc != XF_OK) return rc;
    if (ox_in_sym(st, 2) >= 0) {
        if (ox_in_dynamic(st, 2))
            return ox_emit_opaque(st, "training_mode is not a constant", err);
        const xf_tensor *t = ox_in_const(st, 2, err);
        if (!t) return err->code;
        if (t->dtype != XF_BOOL || xf_shape_numel(&t->shape) != 1)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "training_mode must be one bool");
        if (((const uint8_t *)t->data)[0] && !zero_ratio(st))
            return ox_emit_opaque(st, "training mode", err);
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, NULL, &s, 1, ox_out_name(st, 1)[0] ? 2 : 1, err);
}

static xf_status map_cast(imp_state *st, xf_op op, xf_error *err)
{
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    int64_t to;
    if (rc == XF_OK) rc = ox_attr_int(st, "to", -1, &to, err);
    if (rc != XF_OK) return rc;
    if (to < 0) return ox_node_fail(st, err, XF_ERR_PARSE, "attribute 'to' is missing");
    xf_dtype dt = to > INT32_MAX ? XF_DTYPE_INVALID : xf_onnx_dtype_of_code((int)to);
    if (dt == XF_DTYPE_INVALID) {
        char why[96];
        snprintf(why, sizeof why, "cast to %s", ox_dtype_name(to > 64 ? -1 : (int)to));
        return ox_emit_opaque(st, why, err);
    }
    xf_params p = xf_params_default();
    p.to = (int32_t)dt;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* ----------------------------------------------------------- linear algebra */

static xf_status map_matmul(imp_state *st, xf_op op, xf_error *err)
{
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    int ok, s[2];
    if (rc == XF_OK) rc = ox_all_float(st, 2, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "an input is not float32", err);
    input_syms(st, s, 2);
    return ox_emit_node(st, op, NULL, s, 2, 1, err);
}

static xf_status map_gemm(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_status rc = ox_need_inputs(st, 2, 3, err);
    int ok, s[3];
    if (rc == XF_OK) rc = ox_all_float(st, 3, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "an input is not float32", err);
    if ((rc = ox_attr_float(st, "alpha", 1.0f, &p.alpha, err)) != XF_OK ||
        (rc = ox_attr_float(st, "beta", 1.0f, &p.beta, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "transA", 0, &p.trans_a, err)) != XF_OK ||
        (rc = ox_attr_i32(st, "transB", 0, &p.trans_b, err)) != XF_OK)
        return rc;
    if ((p.trans_a != 0 && p.trans_a != 1) || (p.trans_b != 0 && p.trans_b != 1))
        return ox_node_fail(st, err, XF_ERR_PARSE, "transA/transB must be 0 or 1");
    input_syms(st, s, 3);
    return ox_emit_node(st, op, &p, s, n_given(st), 1, err);
}

/* ----------------------------------------------------------------- dispatch */

static const imp_op_entry table[] = {
    {"Relu", map_unary, XF_OP_RELU},
    {"Sigmoid", map_unary, XF_OP_SIGMOID},
    {"Tanh", map_unary, XF_OP_TANH},
    {"Erf", map_unary, XF_OP_ERF},
    {"Sqrt", map_unary, XF_OP_SQRT},
    {"Exp", map_unary, XF_OP_EXP},
    {"Log", map_unary, XF_OP_LOG},
    {"Neg", map_unary, XF_OP_NEG},
    {"Abs", map_unary, XF_OP_ABS},
    {"Reciprocal", map_unary, XF_OP_RECIPROCAL},
    {"Add", map_binary, XF_OP_ADD},
    {"Sub", map_binary, XF_OP_SUB},
    {"Mul", map_binary, XF_OP_MUL},
    {"Div", map_binary, XF_OP_DIV},
    {"Pow", map_binary, XF_OP_POW},
    {"Equal", map_binary, XF_OP_EQUAL},
    {"Where", map_where, XF_OP_WHERE},
    {"Identity", map_identity, XF_OP_IDENTITY},
    {"Dropout", map_dropout, XF_OP_DROPOUT},
    {"Cast", map_cast, XF_OP_CAST},
    {"MatMul", map_matmul, XF_OP_MATMUL},
    {"Gemm", map_gemm, XF_OP_GEMM},
};

static const imp_op_entry *find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}

xf_status ox_map_node(imp_state *st, xf_error *err)
{
    /* ONNX requires op_type; an opaque node without one could not be
     * written back, so the model is refused here rather than at export */
    if (!ox_str(st->node->op_type)[0])
        return ox_node_fail(st, err, XF_ERR_PARSE, "empty op_type (every ONNX node needs one)");
    const char *domain = ox_str(st->node->domain);
    if (domain[0] && strcmp(domain, "ai.onnx") != 0)
        return ox_emit_opaque(st, "operator of a custom domain", err);
    const char *op_type = ox_str(st->node->op_type);
    const imp_op_entry *e = find(op_type);
    if (!e) e = ox_ops_nn_find(op_type);
    if (!e) e = ox_ops_shape_find(op_type);
    if (!e) e = ox_ops_act_find(op_type);
    if (!e) e = ox_ops_resize_find(op_type);
    if (!e) e = ox_ops_calc_find(op_type);
    if (!e) return ox_emit_opaque(st, "no rlflow operator for this op_type", err);
    return e->map(st, e->op, err);
}
