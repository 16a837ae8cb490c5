/*
 * import_attr.c — reading a node's attributes (typed, with defaults) and its
 * parameter inputs: inputs such as Reshape's shape or Slice's starts that
 * rlflow stores as operator parameters and therefore must be constants when
 * the node is imported (initializers, Constant nodes or folded subgraphs).
 */
#include "import_internal.h"

#include <string.h>

const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name)
{
    for (size_t i = 0; i < n->n_attribute; i++)
        if (strcmp(ox_str(n->attribute[i]->name), name) == 0) return n->attribute[i];
    return NULL;
}

static xf_status wrong_type(imp_state *st, const char *name, const char *want, xf_error *err)
{
    return ox_node_fail(st, err, XF_ERR_PARSE, "attribute '%s' should be of type %s", name, want);
}

/* Attribute type, falling back on which field is set for old writers that
 * leave `type` out. */
static Onnx__AttributeProto__AttributeType attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type) return a->type;
    if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

xf_status ox_attr_int(imp_state *st, const char *name, int64_t def, int64_t *out, xf_error *err)
{
    const Onnx__AttributeProto *a = ox_attr(st->node, name);
    *out = def;
    if (!a) return XF_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return wrong_type(st, name, "INT", err);
    *out = a->i;
    return XF_OK;
}

xf_status ox_attr_float(imp_state *st, const char *name, float def, float *out, xf_error *err)
{
    const Onnx__AttributeProto *a = ox_attr(st->node, name);
    *out = def;
    if (!a) return XF_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
        return wrong_type(st, name, "FLOAT", err);
    *out = a->f;
    return XF_OK;
}

xf_status ox_attr_ints(imp_state *st, const char *name, int64_t *out, int max, int *n,
                        xf_error *err)
{
    const Onnx__AttributeProto *a = ox_attr(st->node, name);
    *n = -1;
    if (!a) return XF_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return wrong_type(st, name, "INTS", err);
    if (a->n_ints > (size_t)max)
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "attribute '%s' has %zu values; rlflow supports at most %d", name,
                             a->n_ints, max);
    for (size_t i = 0; i < a->n_ints; i++) out[i] = a->ints[i];
    *n = (int)a->n_ints;
    return XF_OK;
}

xf_status ox_attr_string(imp_state *st, const char *name, const char *def, const char **out,
                          xf_error *err)
{
    const Onnx__AttributeProto *a = ox_attr(st->node, name);
    *out = def;
    if (!a) return XF_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
        return wrong_type(st, name, "STRING", err);
    char *s = xf_arena_alloc(&st->arena, a->s.len + 1);
    if (!s) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    if (a->s.len) memcpy(s, a->s.data, a->s.len);
    *out = s;
    return XF_OK;
}

const char *ox_in_name(const imp_state *st, int i)
{
    if (i < 0 || (size_t)i >= st->node->n_input) return "";
    return ox_str(st->node->input[i]);
}

int ox_in_sym(const imp_state *st, int i)
{
    const char *nm = ox_in_name(st, i);
    return nm[0] ? ox_sym_find(st, nm) : -1;
}

const xf_tensor *ox_in_const(imp_state *st, int i, xf_error *err)
{
    int s = ox_in_sym(st, i);
    if (s < 0) {
        ox_node_fail(st, err, XF_ERR_GRAPH, "required input %d is missing", i);
        return NULL;
    }
    if (!ox_sym_is_const(st, s)) {
        ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                      "dynamic shape input '%s' (input %d): rlflow needs it to be a constant "
                      "(an initializer, or computed from constants only)",
                      ox_in_name(st, i), i);
        return NULL;
    }
    if (ox_sym_decode(st, s, err) != XF_OK) return NULL;
    return &st->syms[s].t;
}

xf_status ox_in_ints(imp_state *st, int i, int64_t *out, int max, int *n, xf_error *err)
{
    *n = -1;
    if (ox_in_sym(st, i) < 0) return XF_OK;
    const xf_tensor *t = ox_in_const(st, i, err);
    if (!t) return err ? err->code : XF_ERR_UNSUPPORTED;
    if ((t->dtype != XF_I64 && t->dtype != XF_I32) || t->shape.rank > 1)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "input %d '%s' should be a 1-D int64 tensor, got %s of rank %d", i,
                             ox_in_name(st, i), xf_dtype_name(t->dtype), t->shape.rank);
    int64_t cnt = xf_shape_numel(&t->shape);
    if (cnt > max)
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "input %d '%s' has %lld values; rlflow supports at most %d", i,
                             ox_in_name(st, i), (long long)cnt, max);
    for (int64_t k = 0; k < cnt; k++)
        out[k] = t->dtype == XF_I64 ? ((const int64_t *)t->data)[k]
                                    : ((const int32_t *)t->data)[k];
    *n = (int)cnt;
    return XF_OK;
}

double ox_scalar_value(const xf_tensor *t)
{
    switch (t->dtype) {
    case XF_F32: return ((const float *)t->data)[0];
    case XF_I64: return (double)((const int64_t *)t->data)[0];
    case XF_I32: return ((const int32_t *)t->data)[0];
    case XF_BOOL: return ((const uint8_t *)t->data)[0];
    case XF_F16: return xf_f16_to_f32(((const uint16_t *)t->data)[0]);
    case XF_F64: return ((const double *)t->data)[0];
    case XF_I8: return ((const int8_t *)t->data)[0];
    case XF_U8: return ((const uint8_t *)t->data)[0];
    default: return 0.0;
    }
}

xf_status ox_in_floats(imp_state *st, int i, double *out, int max, int *n, xf_error *err)
{
    *n = -1;
    if (ox_in_sym(st, i) < 0) return XF_OK;
    const xf_tensor *t = ox_in_const(st, i, err);
    if (!t) return err ? err->code : XF_ERR_UNSUPPORTED;
    int64_t cnt = xf_shape_numel(&t->shape);
    if (t->dtype != XF_F32 || t->shape.rank > 1 || cnt > max)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "input %d '%s' should be a 1-D float tensor of at most %d values, "
                             "got %s of rank %d",
                             i, ox_in_name(st, i), max, xf_dtype_name(t->dtype), t->shape.rank);
    for (int64_t k = 0; k < cnt; k++) out[k] = ((const float *)t->data)[k];
    *n = (int)cnt;
    return XF_OK;
}
