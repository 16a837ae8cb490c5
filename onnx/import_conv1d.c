/*
 * import_conv1d.c — 1-D Conv (X [N,C,L], W [O,C/group,k]) on rlflow's 2-D
 * convolution: Unsqueeze X and W at axis 2 (a height of 1; W's folds into
 * a constant), conv with a 1 x k window, Squeeze axis 2 back. Audio models
 * (Silero VAD, wake-word detectors) are built from these. strides,
 * dilations, pads and auto_pad are read in their 1-D form.
 */
#include "import_internal.h"

#include <stdio.h>
#include <string.h>

/* The one value of a 1-D window attribute (def when absent). */
static xf_status attr_one(imp_state *st, const char *name, int32_t def, int32_t *out,
                          xf_error *err)
{
    int64_t v[XF_MAX_DIMS];
    int n;
    xf_status rc = ox_attr_ints(st, name, v, XF_MAX_DIMS, &n, err);
    if (rc != XF_OK) return rc;
    *out = def;
    if (n < 0) return XF_OK;
    if (n != 1 || v[0] < 1 || v[0] > INT32_MAX)
        return ox_node_fail(st, err, XF_ERR_SHAPE,
                             "attribute '%s' of a 1-D conv needs one positive value", name);
    *out = (int32_t)v[0];
    return XF_OK;
}

/* pads[1] (begin) and pads[3] (end) of the 2-D form. */
static xf_status pads_1d(imp_state *st, int64_t len, xf_params *p, xf_error *err)
{
    const char *mode;
    xf_status rc = ox_attr_string(st, "auto_pad", "NOTSET", &mode, err);
    if (rc != XF_OK) return rc;
    if (strcmp(mode, "NOTSET") == 0) {
        int64_t v[XF_MAX_DIMS];
        int n;
        if ((rc = ox_attr_ints(st, "pads", v, XF_MAX_DIMS, &n, err)) != XF_OK) return rc;
        if (n < 0) return XF_OK;
        if (n != 2 || v[0] < 0 || v[1] < 0 || v[0] > INT32_MAX || v[1] > INT32_MAX)
            return ox_node_fail(st, err, XF_ERR_SHAPE,
                                 "attribute 'pads' of a 1-D conv needs 2 values >= 0");
        p->pads[1] = (int32_t)v[0];
        p->pads[3] = (int32_t)v[1];
        return XF_OK;
    }
    if (strcmp(mode, "VALID") == 0) return XF_OK;
    int upper = strcmp(mode, "SAME_UPPER") == 0;
    if (!upper && strcmp(mode, "SAME_LOWER") != 0)
        return ox_node_fail(st, err, XF_ERR_PARSE, "unknown auto_pad '%s'", mode);
    int64_t s = p->stride[1], span = ((int64_t)p->kernel[1] - 1) * p->dilation[1] + 1;
    int64_t total = ((len + s - 1) / s - 1) * s + span - len;
    if (total < 0) total = 0;
    if (total > INT32_MAX) return ox_node_fail(st, err, XF_ERR_SHAPE, "auto_pad is implausible");
    int64_t small = total / 2, big = total - small;
    p->pads[1] = (int32_t)(upper ? small : big);
    p->pads[3] = (int32_t)(upper ? big : small);
    return XF_OK;
}

/* Emits op on in_sym into a fresh value "<base><suffix>"; returns its symbol. */
static int emit_step(imp_state *st, xf_op op, const xf_params *p, const int *in, int n_in,
                     const char *base, const char *suffix, xf_error *err)
{
    const char *nm = ox_fresh_name(st, base, suffix, err);
    if (!nm || ox_emit(st, op, p, in, n_in, &nm, 1, NULL, err) != XF_OK) return -1;
    return ox_sym_find(st, nm);
}

xf_status ox_conv1d(imp_state *st, xf_error *err)
{
    xf_shape x, w;
    xf_dtype xdt, wdt;
    int ok;
    xf_status rc = ox_need_inputs(st, 2, 3, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &xdt, &x, err);
    if (rc == XF_OK) rc = ox_in_info(st, 1, &wdt, &w, err);
    if (rc == XF_OK) rc = ox_all_float(st, 3, &ok, err);
    if (rc != XF_OK) return rc;
    if (!ok) return ox_emit_opaque(st, "input, weight or bias is not float32", err);
    if (w.rank != 3)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "weight has rank %d; a 1-D conv needs 3",
                             w.rank);
    if (w.dims[2] > INT32_MAX) return ox_node_fail(st, err, XF_ERR_SHAPE, "kernel is too large");
    xf_params p = xf_params_default();
    int32_t ks;
    p.kernel[0] = p.stride[0] = p.dilation[0] = 1;
    p.kernel[1] = (int32_t)w.dims[2];
    if ((rc = attr_one(st, "kernel_shape", p.kernel[1], &ks, err)) != XF_OK ||
        (rc = attr_one(st, "strides", 1, &p.stride[1], err)) != XF_OK ||
        (rc = attr_one(st, "dilations", 1, &p.dilation[1], err)) != XF_OK ||
        (rc = ox_attr_i32(st, "group", 1, &p.group, err)) != XF_OK ||
        (rc = pads_1d(st, x.dims[2], &p, err)) != XF_OK)
        return rc;
    if (ks != p.kernel[1])
        return ox_node_fail(st, err, XF_ERR_SHAPE, "kernel_shape %d does not match the weight's %lld",
                             ks, (long long)w.dims[2]);
    if (p.group < 1) return ox_node_fail(st, err, XF_ERR_SHAPE, "group %d must be positive", p.group);
    const char *out = ox_out_name(st, 0);
    const char *base = out[0] ? out : "conv1d";
    xf_params axis2 = xf_params_default();
    axis2.n_axes = 1;
    axis2.axes[0] = 2;
    int s[3] = {ox_in_sym(st, 0), ox_in_sym(st, 1), ox_in_sym(st, 2)};
    int n_in = s[2] >= 0 ? 3 : 2;
    s[0] = emit_step(st, XF_OP_UNSQUEEZE, &axis2, &s[0], 1, base, "/x2d", err);
    if (s[0] >= 0) s[1] = emit_step(st, XF_OP_UNSQUEEZE, &axis2, &s[1], 1, base, "/w2d", err);
    int c = s[0] >= 0 && s[1] >= 0 ? emit_step(st, XF_OP_CONV, &p, s, n_in, base, "/conv2d", err)
                                   : -1;
    if (c < 0) return err->code;
    const char *nm = ox_str(st->node->name);
    return ox_emit(st, XF_OP_SQUEEZE, &axis2, &c, 1, &out, 1, nm[0] ? nm : NULL, err);
}
