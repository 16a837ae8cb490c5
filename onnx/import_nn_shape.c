/*
 * import_nn_shape.c — output shapes of the standard ONNX layers that stay
 * opaque on float16 and float64 data (rlflow computes float32 only), for
 * models without value_info for them: Conv, ConvInteger and QLinearConv (any number of
 * spatial dims; pads, strides, dilations, auto_pad), MaxPool and
 * AveragePool (ceil_mode), the global pools, Flatten, and the reductions
 * ReduceMean/ReduceSum/ReduceMax/ReduceMin (axes as an attribute or a
 * constant input, keepdims). With these, float16 CNNs and transformers
 * import as they come from a float16 converter; anything else without
 * value_info gets the importer's error naming the node.
 */
#include "import_internal.h"

#include <string.h>

/* Conv (weights on input `conv`: 1, QLinearConv's 3) or a pool (conv 0:
 * kernel_shape): N, C or M, spatial. */
static int window(imp_state *st, int conv, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_shape x, w;
    xf_dtype wdt;
    int64_t k[XF_MAX_DIMS], s[XF_MAX_DIMS], d[XF_MAX_DIMS], p[2 * XF_MAX_DIMS], ceil_mode;
    int nk = -1, ns, nd, np;
    const char *pad;
    if (ox_in_info(st, 0, dt, &x, err) != XF_OK) return -1;
    int sp = x.rank - 2;
    if (sp < 1) return 0;
    if (conv) {
        if (ox_in_sym(st, conv) < 0) return 0;
        if (ox_in_info(st, conv, &wdt, &w, err) != XF_OK) return -1;
        if (w.rank != x.rank) return 0;
        for (int i = 0; i < sp; i++) k[i] = w.dims[2 + i];
        nk = sp;
    } else if (ox_attr_ints(st, "kernel_shape", k, XF_MAX_DIMS, &nk, err) != XF_OK) {
        return -1;
    }
    if (ox_attr_ints(st, "strides", s, XF_MAX_DIMS, &ns, err) != XF_OK ||
        ox_attr_ints(st, "dilations", d, XF_MAX_DIMS, &nd, err) != XF_OK ||
        ox_attr_ints(st, "pads", p, 2 * XF_MAX_DIMS, &np, err) != XF_OK ||
        ox_attr_string(st, "auto_pad", "NOTSET", &pad, err) != XF_OK ||
        ox_attr_int(st, "ceil_mode", 0, &ceil_mode, err) != XF_OK)
        return -1;
    if (nk != sp || (ns >= 0 && ns != sp) || (nd >= 0 && nd != sp) || (np >= 0 && np != 2 * sp))
        return 0;
    *sh = x;
    if (conv) sh->dims[1] = w.dims[0];
    for (int i = 0; i < sp; i++) {
        int64_t in = x.dims[2 + i], st_ = ns > 0 ? s[i] : 1, di = nd > 0 ? d[i] : 1;
        int64_t span = di * (k[i] - 1) + 1, o;
        if (st_ < 1 || span < 1) return 0;
        if (strcmp(pad, "SAME_UPPER") == 0 || strcmp(pad, "SAME_LOWER") == 0) {
            o = (in + st_ - 1) / st_;
        } else {
            int64_t tot = in - span + (strcmp(pad, "VALID") == 0 || np < 0 ? 0 : p[i] + p[sp + i]);
            if (tot < 0) return 0;
            o = (ceil_mode ? (tot + st_ - 1) / st_ : tot / st_) + 1;
        }
        sh->dims[2 + i] = o;
    }
    return 1;
}

static int reduce(imp_state *st, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    int64_t axes[XF_MAX_DIMS], keep, noop;
    int n = -1;
    if (ox_in_info(st, 0, dt, sh, err) != XF_OK ||
        ox_attr_int(st, "keepdims", 1, &keep, err) != XF_OK ||
        ox_attr_int(st, "noop_with_empty_axes", 0, &noop, err) != XF_OK ||
        ox_attr_ints(st, "axes", axes, XF_MAX_DIMS, &n, err) != XF_OK)
        return -1;
    if (n < 0 && ox_in_sym(st, 1) >= 0) {
        if (!ox_sym_is_const(st, ox_in_sym(st, 1))) return 0;
        if (ox_in_ints(st, 1, axes, XF_MAX_DIMS, &n, err) != XF_OK) return -1;
    }
    if (n <= 0 && noop) return 1;
    int drop[XF_MAX_DIMS] = {0};
    for (int i = 0; i < sh->rank; i++) drop[i] = n <= 0;
    for (int i = 0; i < n; i++) {
        int a = xf_norm_axis(axes[i], sh->rank);
        if (a < 0) return 0;
        drop[a] = 1;
    }
    xf_shape o = *sh;
    o.rank = 0;
    for (int i = 0; i < sh->rank; i++)
        if (!drop[i])
            o.dims[o.rank++] = sh->dims[i];
        else if (keep)
            o.dims[o.rank++] = 1;
    *sh = o;
    return 1;
}

int ox_nn_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    const char *op = ox_str(st->node->op_type);
    if (k != 0 || ox_in_sym(st, 0) < 0) return 0;
    if (strcmp(op, "Conv") == 0 || strcmp(op, "ConvInteger") == 0) {
        int r = window(st, 1, dt, sh, err);
        if (r > 0 && op[4] == 'I') *dt = XF_I32;
        return r;
    }
    if (strcmp(op, "QLinearConv") == 0) { /* x, x_scale, x_zp, w, ..., y_zp (7) */
        xf_shape z;
        int r = window(st, 3, dt, sh, err);
        if (r <= 0 || ox_in_sym(st, 7) < 0) return r < 0 ? -1 : 0;
        return ox_in_info(st, 7, dt, &z, err) == XF_OK ? 1 : -1;
    }
    if (strcmp(op, "MaxPool") == 0 || strcmp(op, "AveragePool") == 0)
        return window(st, 0, dt, sh, err);
    if (strcmp(op, "GlobalAveragePool") == 0 || strcmp(op, "GlobalMaxPool") == 0) {
        if (ox_in_info(st, 0, dt, sh, err) != XF_OK) return -1;
        for (int i = 2; i < sh->rank; i++) sh->dims[i] = 1;
        return 1;
    }
    if (strcmp(op, "Flatten") == 0) {
        int64_t axis;
        if (ox_in_info(st, 0, dt, sh, err) != XF_OK ||
            ox_attr_int(st, "axis", 1, &axis, err) != XF_OK)
            return -1;
        int a = axis == sh->rank ? sh->rank : xf_norm_axis(axis, sh->rank);
        if (a < 0) return 0;
        int64_t d[2] = {1, 1};
        for (int i = 0; i < sh->rank; i++) d[i < a ? 0 : 1] *= sh->dims[i];
        *sh = xf_shape_make(2, d);
        return 1;
    }
    static const char *const reductions[] = {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin",
                                             NULL};
    for (int i = 0; reductions[i]; i++)
        if (strcmp(op, reductions[i]) == 0) return reduce(st, dt, sh, err);
    return 0;
}
