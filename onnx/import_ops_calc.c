/*
 * import_ops_calc.c — the shape arithmetic exporters write: Range, Mod,
 * ScatterND, and ConstantOfShape of a shape known only at run time.
 *
 * PyTorch writes position ids as Range(0, Shape(x)[1], 1), a token-type
 * tensor as ConstantOfShape(Shape(x)), Swin's paddings to a multiple of the
 * window with Mod, and Swin's shifted-window mask with ScatterND, all
 * computed from shapes at run time so that one export serves every batch
 * and sequence length. rlflow's shapes are static, so these values are known
 * at import: such a node is computed there (ir/opaque_calc.c) and its
 * outputs become constants, deferred like the operators of the table
 * (import_emit.c) when they come from a run-time input's shape; if they are
 * used as data, the node enters the graph as an opaque node with that
 * kernel, so the written model still computes them at run time, at any size.
 * A node whose inputs are only known at run time (computed from data) is
 * kept opaque with its kernel; when its output's size follows those values
 * (Range, ConstantOfShape), import fails naming the node and the input.
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <stdio.h>
#include <string.h>

/* Folded results larger than this stay nodes (as in import_emit.c). */
#define CALC_FOLD_MAX ((int64_t)1 << 26)

static xf_opaque_kernel calc_kernel(const char *op_type)
{
    if (strcmp(op_type, "Range") == 0) return XF_OPAQUE_RANGE;
    if (strcmp(op_type, "ConstantOfShape") == 0) return XF_OPAQUE_CONSTANT_OF_SHAPE;
    if (strcmp(op_type, "Mod") == 0) return XF_OPAQUE_MOD;
    if (strcmp(op_type, "ScatterND") == 0) return XF_OPAQUE_SCATTER_ND;
    if (strcmp(op_type, "QuantizeLinear") == 0) return XF_OPAQUE_QUANTIZE;
    if (strcmp(op_type, "DequantizeLinear") == 0) return XF_OPAQUE_DEQUANTIZE;
    return XF_OPAQUE_NO_KERNEL;
}

/* ConstantOfShape's `value` attribute (one element; default float 0). */
static xf_status cos_value(imp_state *st, xf_opaque_calc *c, xf_error *err)
{
    c->value_dtype = XF_F32;
    c->value = 0;
    const Onnx__AttributeProto *a = ox_attr(st->node, "value");
    if (!a) return XF_OK;
    if (!a->t) return ox_node_fail(st, err, XF_ERR_PARSE, "attribute 'value' holds no tensor");
    xf_tensor t;
    char what[512];
    snprintf(what, sizeof what, "%s: node %d: attribute 'value'", st->file, st->node_index);
    xf_status rc = ox_tensor_decode(a->t, what, st->base_dir, &t, err);
    if (rc != XF_OK) return rc;
    if (xf_shape_numel(&t.shape) != 1) {
        xf_tensor_free(&t);
        return ox_node_fail(st, err, XF_ERR_SHAPE, "attribute 'value' must be one element");
    }
    c->value_dtype = (int32_t)t.dtype;
    c->value = ox_scalar_value(&t);
    xf_tensor_free(&t);
    return XF_OK;
}

xf_status ox_calc_attrs(imp_state *st, xf_opaque *o, xf_error *err)
{
    xf_opaque_kernel k = calc_kernel(ox_str(st->node->op_type));
    if (k == XF_OPAQUE_NO_KERNEL) return XF_OK;
    memset(&o->calc, 0, sizeof o->calc);
    xf_status rc = XF_OK;
    if (k == XF_OPAQUE_MOD) {
        rc = ox_attr_i32(st, "fmod", 0, &o->calc.fmod, err);
    } else if (k == XF_OPAQUE_SCATTER_ND) {
        static const char *const how[] = {"none", "add", "mul", "max", "min"};
        const char *r;
        rc = ox_attr_string(st, "reduction", "none", &r, err);
        int i = 0;
        while (rc == XF_OK && i < 5 && strcmp(r, how[i]) != 0) i++;
        if (rc == XF_OK && i == 5)
            return ox_no_kernel(st, o, "a reduction rlflow's kernel lacks", err);
        o->calc.reduction = i;
    } else if (k == XF_OPAQUE_CONSTANT_OF_SHAPE) {
        rc = cos_value(st, &o->calc, err);
    } else if (k == XF_OPAQUE_QUANTIZE || k == XF_OPAQUE_DEQUANTIZE) {
        int64_t block, to;
        rc = ox_attr_i32(st, "axis", 1, &o->calc.axis, err);
        if (rc == XF_OK) rc = ox_attr_int(st, "block_size", 0, &block, err);
        if (rc == XF_OK) rc = ox_attr_int(st, "output_dtype", 0, &to, err);
        if (rc == XF_OK && block != 0)
            return ox_no_kernel(st, o, "blocked quantisation (block_size)", err);
        o->calc.to = to > 0 && to < 64 ? (int32_t)xf_onnx_dtype_of_code((int)to) : 0;
        if (rc == XF_OK && to != 0 && o->calc.to != XF_I8 && o->calc.to != XF_U8)
            return ox_no_kernel(st, o, "an output_dtype other than int8 and uint8", err);
    }
    if (rc == XF_OK) o->kernel = k;
    return rc;
}

/* The current node's given inputs as tensors when every one is known at
 * import (in[i] NULL for an omitted one); *known 0 otherwise, *deferred
 * when one of them comes from a run-time input's shape. */
static xf_status known_inputs(imp_state *st, const xf_tensor **in, int n, int *known,
                              int *deferred, xf_error *err)
{
    *known = 1;
    *deferred = 0;
    for (int i = 0; i < n; i++) {
        in[i] = NULL;
        int s = ox_in_sym(st, i);
        if (s < 0) continue;
        if (!ox_sym_is_const(st, s)) {
            *known = 0;
            return XF_OK;
        }
        if (st->syms[s].deferred >= 0) *deferred = 1;
        xf_status rc = ox_sym_decode(st, s, err);
        if (rc != XF_OK) return rc;
        in[i] = &st->syms[s].t;
    }
    return XF_OK;
}

int ox_calc_out_type(imp_state *st, const xf_opaque *o, int k, xf_dtype *dt, xf_shape *sh,
                      xf_error *err)
{
    if (!xf_opaque_calc_kernel(o->kernel) || k != 0) return 0;
    const xf_tensor *in[8];
    int n = (int)st->node->n_input, known, deferred;
    if (n > 8) return 0;
    if (known_inputs(st, in, n, &known, &deferred, err) != XF_OK) return -1;
    if (!known) return 0;
    if (xf_opaque_calc_infer(o, n, in, dt, sh, err) != XF_OK) {
        ox_node_prefix(st, err, err->code);
        return -1;
    }
    return 1;
}

/* Range, Mod, ScatterND, and ConstantOfShape when its shape is not a plain
 * constant: computed at import when the inputs are known, else kept. */
static xf_status map_calc(imp_state *st, xf_op op, xf_error *err)
{
    (void)op;
    xf_opaque o;
    memset(&o, 0, sizeof o);
    int n = (int)st->node->n_input, known = 0, deferred = 0;
    const xf_tensor *in[8];
    xf_status rc = ox_calc_attrs(st, &o, err);
    xf_free(o.no_kernel);
    if (rc != XF_OK) return rc;
    if (o.kernel == XF_OPAQUE_NO_KERNEL || n > 8 || st->node->n_output != 1 ||
        !st->opts.fold_constants)
        return ox_emit_opaque(st, NULL, err);
    if ((rc = known_inputs(st, in, n, &known, &deferred, err)) != XF_OK) return rc;
    if (!known) return ox_emit_opaque(st, NULL, err);
    xf_dtype dt;
    xf_shape sh;
    if (xf_opaque_calc_infer(&o, n, in, &dt, &sh, err) != XF_OK)
        return ox_node_prefix(st, err, err->code);
    if (xf_shape_numel(&sh) > CALC_FOLD_MAX) return ox_emit_opaque(st, NULL, err);
    xf_tensor t;
    rc = xf_tensor_alloc(&t, dt, &sh, err);
    if (rc == XF_OK && (rc = xf_opaque_calc_run(&o, n, in, &t, err)) != XF_OK)
        xf_tensor_free(&t);
    if (rc != XF_OK) return ox_node_prefix(st, err, rc);
    const char *out = ox_out_name(st, 0);
    if (!out[0]) {
        xf_tensor_free(&t);
        return XF_OK;
    }
    if ((rc = ox_set_const(st, out, &t, err)) != XF_OK) return rc;
    return deferred ? ox_defer_opaque(st, err) : XF_OK;
}

xf_status ox_calc_constant_of_shape(imp_state *st, xf_error *err)
{
    return map_calc(st, XF_OP_OPAQUE, err);
}

xf_status ox_calc_unknown_size(imp_state *st, const char *name, xf_error *err)
{
    int n = (int)st->node->n_input;
    for (int i = 0; i < n; i++) {
        int s = ox_in_sym(st, i);
        xf_dtype dt;
        xf_shape sh;
        if (s < 0 || ox_sym_is_const(st, s) || ox_sym_info(st, s, &dt, &sh, err) != XF_OK)
            continue;
        if (dt != XF_I64 && dt != XF_I32) continue;
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "the size of output '%s' depends on the values of input %d '%s', "
                             "which are computed from data at run time (not from shapes and "
                             "constants alone); rlflow needs every size at import: record output "
                             "'%s' with fixed dims in the model's value_info, or export the "
                             "model so that this size comes from an input's shape",
                             name, i, ox_in_name(st, i), name);
    }
    return XF_OK;
}

static const imp_op_entry table[] = {
    {"Range", map_calc, XF_OP_OPAQUE},
    {"Mod", map_calc, XF_OP_OPAQUE},
    {"ScatterND", map_calc, XF_OP_OPAQUE},
};

const imp_op_entry *ox_ops_calc_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}
