/*
 * describe.c — the canonical text of an operator configuration, used as the
 * cost-cache key (together with the backend identity).
 *
 * Format: "<op>|<params>|<inputs>", e.g.
 *   "conv2d|kernel=3,3;pads=1,1,1,1;activation=1|f32[1,64,56,56],f32[64,64,3,3],-"
 * Only parameters that differ from xf_params_default() are written, in the
 * field order of xf_params, so two equal configurations always produce the
 * same text and adding a parameter later keeps old keys valid; stride,
 * dilation and group count 0 and 1 as the same (both mean 1). Array fields
 * are written up to their used length (n_axes, n_shape, n_split, fixed size
 * otherwise). An omitted optional input is "-".
 */
#include "costmodel.h"

#include <stdio.h>
#include <string.h>

static void field_sep(xf_strbuf *b, int *first)
{
    if (!*first) xf_strbuf_printf(b, ";");
    *first = 0;
}

static void put_i64s(xf_strbuf *b, int *first, const char *name, const int64_t *v, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++) any |= v[i] != 0;
    if (!any) return;
    field_sep(b, first);
    xf_strbuf_printf(b, "%s=", name);
    for (int i = 0; i < n; i++) xf_strbuf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
}

static void put_i32s(xf_strbuf *b, int *first, const char *name, const int32_t *v, int n)
{
    int64_t w[4];
    for (int i = 0; i < n; i++) w[i] = v[i];
    put_i64s(b, first, name, w, n);
}

/* stride, dilation and group: 0 and 1 both mean 1 (ir's convention), so
 * only values above 1 are written. */
static void put_ones(xf_strbuf *b, int *first, const char *name, const int32_t *v, int n)
{
    int32_t w[2];
    for (int i = 0; i < n; i++) w[i] = v[i] == 1 ? 0 : v[i];
    put_i32s(b, first, name, w, n);
}

static void put_f(xf_strbuf *b, int *first, const char *name, double v)
{
    if (v == 0.0) return;
    field_sep(b, first);
    xf_strbuf_printf(b, "%s=%.9g", name, v);
}

static void put_params(xf_strbuf *b, const xf_params *p)
{
    int first = 1;
    int na = p->n_axes < 0 ? 0 : (p->n_axes > XF_MAX_DIMS ? XF_MAX_DIMS : p->n_axes);
    int ns = p->n_shape < 0 ? 0 : (p->n_shape > XF_MAX_DIMS ? XF_MAX_DIMS : p->n_shape);
    int nsp = p->n_split < 0 ? 0 : (p->n_split > XF_MAX_SPLIT ? XF_MAX_SPLIT : p->n_split);
    put_i32s(b, &first, "axis", &p->axis, 1);
    put_i32s(b, &first, "n_axes", &p->n_axes, 1);
    /* slice/pad/transpose arrays may be used beyond n_axes (pad uses one
     * entry per input dim), so write them at full width when non-zero. */
    put_i64s(b, &first, "axes", p->axes, na > 0 ? na : XF_MAX_DIMS);
    put_i64s(b, &first, "starts", p->starts, XF_MAX_DIMS);
    put_i64s(b, &first, "ends", p->ends, XF_MAX_DIMS);
    put_i64s(b, &first, "steps", p->steps, XF_MAX_DIMS);
    put_i32s(b, &first, "kernel", p->kernel, 2);
    put_ones(b, &first, "stride", p->stride, 2);
    put_i32s(b, &first, "pads", p->pads, 4);
    put_ones(b, &first, "dilation", p->dilation, 2);
    put_ones(b, &first, "group", &p->group, 1);
    put_i32s(b, &first, "activation", &p->activation, 1);
    put_i32s(b, &first, "keepdims", &p->keepdims, 1);
    put_i32s(b, &first, "trans_a", &p->trans_a, 1);
    put_i32s(b, &first, "trans_b", &p->trans_b, 1);
    put_i32s(b, &first, "count_include_pad", &p->count_include_pad, 1);
    put_i32s(b, &first, "ceil_mode", &p->ceil_mode, 1);
    put_i32s(b, &first, "to", &p->to, 1);
    put_i32s(b, &first, "pad_mode", &p->pad_mode, 1);
    put_i32s(b, &first, "n_shape", &p->n_shape, 1);
    put_i32s(b, &first, "n_split", &p->n_split, 1);
    put_f(b, &first, "alpha", p->alpha);
    put_f(b, &first, "beta", p->beta);
    put_f(b, &first, "epsilon", p->epsilon);
    put_f(b, &first, "value", p->value);
    put_i64s(b, &first, "shape", p->shape, ns > 0 ? ns : XF_MAX_DIMS);
    put_i64s(b, &first, "split", p->split, nsp > 0 ? nsp : XF_MAX_SPLIT);
}

static const char *dtype_tag(xf_dtype t)
{
    switch (t) {
    case XF_F32: return "f32";
    case XF_I64: return "i64";
    case XF_I32: return "i32";
    case XF_BOOL: return "bool";
    default: return "?";
    }
}

xf_status xf_cost_describe(xf_op op, const xf_params *params, int n_inputs,
                           const xf_dtype *in_dtypes, const xf_shape *in_shapes, char *buf,
                           size_t n, xf_error *err)
{
    if (!buf || n == 0) return XF_FAIL(err, XF_ERR_INVALID, "describe: no output buffer");
    buf[0] = '\0';
    const xf_op_info *info = xf_op_get(op);
    if (!info) return XF_FAIL(err, XF_ERR_INVALID, "describe: unknown op %d", (int)op);
    xf_strbuf b = {buf, n, 0, 0};
    xf_strbuf_printf(&b, "%s|", info->name);
    xf_params def = xf_params_default();
    put_params(&b, params ? params : &def);
    xf_strbuf_printf(&b, "|");
    for (int i = 0; i < n_inputs; i++) {
        if (i) xf_strbuf_printf(&b, ",");
        if (in_dtypes[i] == XF_DTYPE_INVALID) {
            xf_strbuf_printf(&b, "-");
            continue;
        }
        char sh[160];
        xf_strbuf_printf(&b, "%s%s", dtype_tag(in_dtypes[i]), xf_shape_str(&in_shapes[i], sh, sizeof sh));
    }
    if (b.overflow)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "describe: the description of this %s configuration needs more than %zu "
                       "bytes",
                       info->name, n);
    return XF_OK;
}
