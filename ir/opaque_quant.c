/*
 * opaque_quant.c — ONNX QuantizeLinear and DequantizeLinear, the two
 * operators of QDQ models (ONNX Runtime's quantiser writes them around
 * every MatMul and Conv; ORT fuses DQ -> op -> Q into integer kernels).
 * They stay opaque nodes, so rules see the float32 region between a
 * DequantizeLinear and the next QuantizeLinear and never the quantised
 * tensors; these kernels let the interpreter run the whole model, so the
 * numerical checks cover QDQ models.
 *
 *   quantize:   y = saturate(round_half_even(x / scale) + zero_point)
 *   dequantize: y = (x - zero_point) * scale
 *
 * with a scale (and zero point) of one element, or 1-D along calc.axis
 * (per channel). x / scale is divided in float, as ONNX Runtime does, so
 * both round the same. Blocked quantisation (opset 21's block_size) has no
 * kernel: the importer leaves such a node without one.
 */
#include "op_internal.h"

#include <math.h>

static int int_q(xf_dtype t)
{
    return t == XF_I8 || t == XF_U8 || t == XF_I32;
}

static int float_q(xf_dtype t)
{
    return t == XF_F32 || t == XF_F16;
}

static const char *name_of(const xf_opaque *o)
{
    return o->kernel == XF_OPAQUE_QUANTIZE ? "quantize_linear" : "dequantize_linear";
}

/* The scale's (and zero point's) layout: one element, or dims[axis] along
 * the axis. *inner: elements after the axis. */
static xf_status layout(const xf_opaque *o, const xf_tensor *x, const xf_tensor *scale,
                        const xf_tensor *zp, int64_t *channels, int64_t *inner, xf_error *err)
{
    int64_t ns = xf_shape_numel(&scale->shape);
    *channels = 1;
    *inner = 1;
    if (zp && xf_shape_numel(&zp->shape) != ns)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: the zero point has %lld elements, the scale %lld",
                       name_of(o), (long long)xf_shape_numel(&zp->shape), (long long)ns);
    if (ns == 1 && scale->shape.rank <= 1) return XF_OK;
    int axis = xf_norm_axis(o->calc.axis, x->shape.rank);
    if (scale->shape.rank != 1 || axis < 0 || x->shape.dims[axis] != ns)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: a scale of %lld elements along axis %d of a rank-%d input (per "
                       "tensor or per axis only)",
                       name_of(o), (long long)ns, (int)o->calc.axis, x->shape.rank);
    *channels = ns;
    for (int d = axis + 1; d < x->shape.rank; d++) *inner *= x->shape.dims[d];
    return XF_OK;
}

xf_status ir_quant_infer(const xf_opaque *o, int n_in, const xf_tensor *const *in, xf_dtype *dt,
                         xf_shape *sh, xf_error *err)
{
    const xf_tensor *x = in[0], *scale = in[1], *zp = n_in > 2 ? in[2] : NULL;
    int64_t channels, inner;
    xf_status st = layout(o, x, scale, zp, &channels, &inner, err);
    if (st) return st;
    *sh = x->shape;
    if (o->kernel == XF_OPAQUE_QUANTIZE) {
        *dt = zp ? zp->dtype : o->calc.to ? (xf_dtype)o->calc.to : XF_U8;
        if (!float_q(x->dtype) || scale->dtype != x->dtype || (*dt != XF_I8 && *dt != XF_U8))
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "quantize_linear: %s to %s with a %s scale (float32 or float16 to "
                           "int8 or uint8 only)",
                           xf_dtype_name(x->dtype), xf_dtype_name(*dt), xf_dtype_name(scale->dtype));
        return XF_OK;
    }
    *dt = scale->dtype;
    if (!int_q(x->dtype) || !float_q(scale->dtype) || (zp && zp->dtype != x->dtype))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "dequantize_linear: %s with a %s scale and a %s zero point (int8, uint8 "
                       "or int32 to float32 or float16 only)",
                       xf_dtype_name(x->dtype), xf_dtype_name(scale->dtype),
                       zp ? xf_dtype_name(zp->dtype) : "no");
    return XF_OK;
}

static void put(xf_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case XF_F32: ((float *)t->data)[i] = (float)v; break;
    case XF_F16: ((uint16_t *)t->data)[i] = xf_f32_to_f16((float)v); break;
    case XF_I8: ((int8_t *)t->data)[i] = (int8_t)v; break;
    default: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    }
}

xf_status ir_quant_run(const xf_opaque *o, int n_in, const xf_tensor *const *in, xf_tensor *out,
                       xf_error *err)
{
    const xf_tensor *x = in[0], *scale = in[1], *zp = n_in > 2 ? in[2] : NULL;
    int64_t channels, inner;
    xf_status st = layout(o, x, scale, zp, &channels, &inner, err);
    if (st) return st;
    int64_t n = xf_shape_numel(&x->shape);
    double lo = out->dtype == XF_I8 ? -128 : 0, hi = out->dtype == XF_I8 ? 127 : 255;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = channels > 1 ? (i / inner) % channels : 0;
        float s = (float)ir_tensor_elem_f64(scale, c);
        double z = zp ? ir_tensor_elem_f64(zp, c) : 0;
        double xv = ir_tensor_elem_f64(x, i);
        if (o->kernel == XF_OPAQUE_DEQUANTIZE) {
            put(out, i, (double)((float)(xv - z) * s));
            continue;
        }
        double q = (double)nearbyintf((float)xv / s) + z;
        put(out, i, isnan(q) ? 0 : q < lo ? lo : q > hi ? hi : q);
    }
    return XF_OK;
}
