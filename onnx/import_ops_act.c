/*
 * import_ops_act.c — mapping the activations and element-wise ops mobile
 * CNNs use around their convolutions: Clip (ReLU6), HardSigmoid,
 * HardSwish, LeakyRelu, PRelu, the n-ary Min, Max and Sum, and Not.
 *
 * Clip took min/max as attributes before opset 11 and takes them as
 * optional inputs from opset 11; both become params.alpha/beta (absent:
 * -inf/+inf). Bounds computed at run time, or a non-float32 input, keep
 * the node opaque. Min/Max/Sum of one input is an identity, of more a chain
 * of two-input ops (ewmin, ewmax, ewadd) in input order, ONNX's own order.
 */
#include "import_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Input 0 must be float32; *ok = 0 after keeping the node opaque. */
static xf_status float_input(imp_state *st, int n, int *ok, xf_error *err)
{
    xf_status rc = ox_all_float(st, n, ok, err);
    if (rc == XF_OK && !*ok) return ox_emit_opaque(st, "an input is not float32", err);
    return rc;
}

/* Clip's bound on input i (opset >= 11): *v unchanged when omitted; *ok = 0
 * after keeping the node opaque when it is computed at run time. */
static xf_status clip_bound(imp_state *st, int i, float *v, int *ok, xf_error *err)
{
    *ok = 1;
    if (ox_in_sym(st, i) < 0) return XF_OK;
    if (ox_in_dynamic(st, i)) {
        *ok = 0;
        return ox_emit_opaque(st, "a bound computed at run time", err);
    }
    const xf_tensor *t = ox_in_const(st, i, err);
    if (!t) return err->code;
    if (t->dtype != XF_F32 || xf_shape_numel(&t->shape) != 1)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "input %d must be one float32 value", i);
    *v = (float)ox_scalar_value(t);
    return XF_OK;
}

static xf_status map_clip(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int ok;
    p.alpha = -INFINITY;
    p.beta = INFINITY;
    xf_status rc = ox_need_inputs(st, 1, st->opset < 11 ? 1 : 3, err);
    if (rc == XF_OK) rc = float_input(st, 1, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    if (st->opset < 11) {
        if ((rc = ox_attr_float(st, "min", -INFINITY, &p.alpha, err)) != XF_OK ||
            (rc = ox_attr_float(st, "max", INFINITY, &p.beta, err)) != XF_OK)
            return rc;
    } else {
        if ((rc = clip_bound(st, 1, &p.alpha, &ok, err)) != XF_OK || !ok) return rc;
        if ((rc = clip_bound(st, 2, &p.beta, &ok, err)) != XF_OK || !ok) return rc;
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* HardSigmoid (alpha 0.2, beta 0.5), LeakyRelu (alpha 0.01), HardSwish. */
static xf_status map_hard(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    int ok;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = float_input(st, 1, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    if (op == XF_OP_HARDSIGMOID) {
        if ((rc = ox_attr_float(st, "alpha", 0.2f, &p.alpha, err)) != XF_OK ||
            (rc = ox_attr_float(st, "beta", 0.5f, &p.beta, err)) != XF_OK)
            return rc;
    } else if (op == XF_OP_LEAKYRELU) {
        if ((rc = ox_attr_float(st, "alpha", 0.01f, &p.alpha, err)) != XF_OK) return rc;
    }
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static xf_status map_prelu(imp_state *st, xf_op op, xf_error *err)
{
    int ok;
    xf_status rc = ox_need_inputs(st, 2, 2, err);
    if (rc == XF_OK) rc = float_input(st, 2, &ok, err);
    if (rc != XF_OK || !ok) return rc;
    int s[2] = {ox_in_sym(st, 0), ox_in_sym(st, 1)};
    return ox_emit_node(st, op, NULL, s, 2, 1, err);
}

/* Min/Max/Sum of n inputs: identity for one, else a left-to-right chain. */
static xf_status map_minmax(imp_state *st, xf_op op, xf_error *err)
{
    int n = (int)st->node->n_input;
    xf_status rc = ox_need_inputs(st, 1, n, err);
    if (rc != XF_OK) return rc;
    xf_dtype dt0 = XF_DTYPE_INVALID;
    for (int i = 0; i < n; i++) {
        xf_dtype dt;
        xf_shape sh;
        if ((rc = ox_in_info(st, i, &dt, &sh, err)) != XF_OK) return rc;
        if (dt != XF_F32 && dt != XF_I64 && dt != XF_I32)
            return ox_emit_opaque(st, "an input is not float32, int64 or int32", err);
        if (i == 0) dt0 = dt;
        if (dt != dt0)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "inputs have different dtypes, %s and %s",
                                 xf_dtype_name(dt0), xf_dtype_name(dt));
    }
    int acc = ox_in_sym(st, 0);
    if (n == 1) return ox_emit_node(st, XF_OP_IDENTITY, NULL, &acc, 1, 1, err);
    const char *out = ox_out_name(st, 0);
    for (int i = 1; i < n; i++) {
        const char *name = out;
        if (i < n - 1 && !(name = ox_fresh_name(st, out[0] ? out : "minmax", "/part", err)))
            return err->code;
        int s[2] = {acc, ox_in_sym(st, i)};
        rc = ox_emit(st, op, NULL, s, 2, &name, 1, i == n - 1 ? st->node->name : NULL, err);
        if (rc != XF_OK) return rc;
        if (i < n - 1) acc = ox_sym_find(st, name);
    }
    return XF_OK;
}

static xf_status map_not(imp_state *st, xf_op op, xf_error *err)
{
    xf_dtype dt;
    xf_shape sh;
    xf_status rc = ox_need_inputs(st, 1, 1, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &sh, err);
    if (rc != XF_OK) return rc;
    if (dt != XF_BOOL) return ox_node_fail(st, err, XF_ERR_SHAPE, "input must be bool");
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, NULL, &s, 1, 1, err);
}

static const imp_op_entry table[] = {
    {"Clip", map_clip, XF_OP_CLIP},
    {"HardSigmoid", map_hard, XF_OP_HARDSIGMOID},
    {"HardSwish", map_hard, XF_OP_HARDSWISH},
    {"LeakyRelu", map_hard, XF_OP_LEAKYRELU},
    {"PRelu", map_prelu, XF_OP_PRELU},
    {"Min", map_minmax, XF_OP_MIN},
    {"Max", map_minmax, XF_OP_MAX},
    {"Sum", map_minmax, XF_OP_ADD},
    {"Not", map_not, XF_OP_NOT},
};

const imp_op_entry *ox_ops_act_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}
