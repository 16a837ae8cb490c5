/*
 * import_ops_resize.c — mapping Resize (opsets 10 to 21) and the older
 * Upsample (opsets 7 to 9) onto rlflow's resize, whose parameter is the
 * output shape (see ir/ops_resize.c).
 *
 * Resize-10 and Upsample have no coordinate mode: they scale with
 * asymmetric coordinates and take the floor in nearest mode (what ONNX
 * Runtime does when upsampling). From opset 11 the coordinate mode and the
 * nearest rounding are attributes, the target is either scales or sizes
 * (constant inputs), and opset 18 adds `axes`. Whatever rlflow's kernel
 * cannot reproduce exactly stays opaque with the reason logged: cubic mode,
 * tf_crop_and_resize or half_pixel_symmetric coordinates, antialiasing,
 * an aspect-ratio policy, scales that do not give whole output sizes,
 * Resize-10/Upsample that downsample, and targets computed at run time.
 */
#include "import_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

/* Output dims from per-dim scales: every dim*scale must be whole. */
static xf_status dims_from_scales(imp_state *st, const xf_shape *x, const double *scales,
                                  xf_params *p, int *ok, xf_error *err)
{
    *ok = 1;
    for (int i = 0; i < x->rank; i++) {
        double v = (double)x->dims[i] * scales[i];
        if (!(scales[i] > 0) || v != floor(v) || v > 1e15) {
            *ok = 0;
            char why[128];
            snprintf(why, sizeof why, "scale %g of dim %d (size %lld) does not give a whole size",
                     scales[i], i, (long long)x->dims[i]);
            return ox_emit_opaque(st, why, err);
        }
        p->shape[i] = (int64_t)v;
    }
    p->n_shape = x->rank;
    return XF_OK;
}

/* The target of input `i` (scales when !sizes): *n = -1 when omitted or
 * empty; *ok = 0 after keeping the node opaque (computed at run time). */
static xf_status target_input(imp_state *st, int i, int sizes, double *dv, int64_t *iv, int *n,
                              int *ok, xf_error *err)
{
    *ok = 1;
    *n = -1;
    if (ox_in_sym(st, i) < 0) return XF_OK;
    if (ox_in_dynamic(st, i)) {
        *ok = 0;
        return ox_emit_opaque(st, "its target is computed at run time", err);
    }
    xf_status rc = sizes ? ox_in_ints(st, i, iv, XF_MAX_DIMS, n, err)
                         : ox_in_floats(st, i, dv, XF_MAX_DIMS, n, err);
    if (rc == XF_OK && *n == 0) *n = -1;
    return rc;
}

/* Resize-10 and Upsample-7/9: scales (attribute before 9), mode. */
static xf_status map_upsample(imp_state *st, xf_op op, xf_error *err)
{
    xf_params p = xf_params_default();
    xf_dtype dt;
    xf_shape x;
    const char *mode;
    double scales[XF_MAX_DIMS];
    int n = -1, ok = 1;
    int attr_scales = strcmp(ox_str(st->node->op_type), "Upsample") == 0 && st->opset < 9;
    xf_status rc = ox_need_inputs(st, attr_scales ? 1 : 2, attr_scales ? 1 : 2, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_string(st, "mode", "nearest", &mode, err);
    if (rc != XF_OK) return rc;
    if (dt != XF_F32) return ox_emit_opaque(st, "input is not float32", err);
    if (attr_scales) {
        const Onnx__AttributeProto *a = ox_attr(st->node, "scales");
        if (!a || a->n_floats > XF_MAX_DIMS)
            return ox_node_fail(st, err, XF_ERR_PARSE, "attribute 'scales' is missing or too long");
        n = (int)a->n_floats;
        for (int i = 0; i < n; i++) scales[i] = a->floats[i];
    } else if ((rc = target_input(st, 1, 0, scales, NULL, &n, &ok, err)) != XF_OK || !ok) {
        return rc;
    }
    if (n != x.rank)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "%d scales for an input of rank %d", n,
                             x.rank);
    static const char *const modes[] = {"nearest", "linear"};
    int m = lookup(mode, modes, 2);
    if (m < 0) return ox_emit_opaque(st, "a mode other than nearest and linear", err);
    for (int i = 0; i < n; i++)
        if (scales[i] < 1) return ox_emit_opaque(st, "downsampling with the opset-10 rules", err);
    if ((rc = dims_from_scales(st, &x, scales, &p, &ok, err)) != XF_OK || !ok) return rc;
    p.kernel[0] = m;
    p.kernel[1] = XF_RESIZE_ASYMMETRIC;
    p.group = XF_RESIZE_FLOOR;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

/* Resize-11 and later. */
static xf_status map_resize(imp_state *st, xf_op op, xf_error *err)
{
    if (st->opset < 11) return map_upsample(st, op, err);
    xf_params p = xf_params_default();
    xf_dtype dt;
    xf_shape x;
    const char *mode, *coord, *nearest, *policy;
    int64_t antialias, exclude, axes[XF_MAX_DIMS], sizes[XF_MAX_DIMS];
    double scales[XF_MAX_DIMS];
    int n_axes, n_scales, n_sizes, ok;
    xf_status rc = ox_need_inputs(st, 1, 4, err);
    if (rc == XF_OK) rc = ox_in_info(st, 0, &dt, &x, err);
    if (rc == XF_OK) rc = ox_attr_string(st, "mode", "nearest", &mode, err);
    if (rc == XF_OK)
        rc = ox_attr_string(st, "coordinate_transformation_mode", "half_pixel", &coord, err);
    if (rc == XF_OK) rc = ox_attr_string(st, "nearest_mode", "round_prefer_floor", &nearest, err);
    if (rc == XF_OK) rc = ox_attr_string(st, "keep_aspect_ratio_policy", "stretch", &policy, err);
    if (rc == XF_OK) rc = ox_attr_int(st, "antialias", 0, &antialias, err);
    if (rc == XF_OK) rc = ox_attr_int(st, "exclude_outside", 0, &exclude, err);
    if (rc == XF_OK) rc = ox_attr_ints(st, "axes", axes, XF_MAX_DIMS, &n_axes, err);
    if (rc != XF_OK) return rc;
    if (dt != XF_F32) return ox_emit_opaque(st, "input is not float32", err);
    static const char *const modes[] = {"nearest", "linear"};
    static const char *const coords[] = {"half_pixel", "asymmetric", "align_corners",
                                         "pytorch_half_pixel", "tf_half_pixel_for_nn"};
    static const char *const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                            "ceil"};
    int m = lookup(mode, modes, 2), c = lookup(coord, coords, 5), r = lookup(nearest, roundings, 4);
    if (m < 0 || c < 0 || r < 0 || antialias || exclude || strcmp(policy, "stretch") != 0) {
        char why[256];
        snprintf(why, sizeof why,
                 "mode '%s', coordinates '%s', nearest_mode '%s', antialias %lld, "
                 "exclude_outside %lld, keep_aspect_ratio_policy '%s' (rlflow's resize has "
                 "nearest/linear without antialiasing)",
                 mode, coord, nearest, (long long)antialias, (long long)exclude, policy);
        return ox_emit_opaque(st, why, err);
    }
    if ((rc = target_input(st, 2, 0, scales, NULL, &n_scales, &ok, err)) != XF_OK || !ok)
        return rc;
    if ((rc = target_input(st, 3, 1, NULL, sizes, &n_sizes, &ok, err)) != XF_OK || !ok)
        return rc;
    if ((n_scales < 0) == (n_sizes < 0))
        return ox_node_fail(st, err, XF_ERR_PARSE, "needs exactly one of scales and sizes");
    if (n_axes < 0) {
        n_axes = x.rank;
        for (int i = 0; i < x.rank; i++) axes[i] = i;
    }
    int n_given = n_scales >= 0 ? n_scales : n_sizes;
    if (n_given != n_axes)
        return ox_node_fail(st, err, XF_ERR_SHAPE, "%d %s for %d axes of an input of rank %d",
                             n_given, n_scales >= 0 ? "scales" : "sizes", n_axes, x.rank);
    double full[XF_MAX_DIMS];
    for (int i = 0; i < x.rank; i++) {
        full[i] = 1.0;
        p.shape[i] = x.dims[i];
    }
    p.n_shape = x.rank;
    for (int i = 0; i < n_axes; i++) {
        int a = (int)(axes[i] < 0 ? axes[i] + x.rank : axes[i]);
        if (a < 0 || a >= x.rank)
            return ox_node_fail(st, err, XF_ERR_SHAPE, "axis %lld is out of range for rank %d",
                                 (long long)axes[i], x.rank);
        if (n_scales >= 0) full[a] = scales[i];
        else p.shape[a] = sizes[i];
    }
    if (n_scales >= 0 && ((rc = dims_from_scales(st, &x, full, &p, &ok, err)) != XF_OK || !ok))
        return rc;
    p.kernel[0] = m;
    p.kernel[1] = c;
    p.group = r;
    int s = ox_in_sym(st, 0);
    return ox_emit_node(st, op, &p, &s, 1, 1, err);
}

static const imp_op_entry table[] = {
    {"Resize", map_resize, XF_OP_RESIZE},
    {"Upsample", map_upsample, XF_OP_RESIZE},
};

const imp_op_entry *ox_ops_resize_find(const char *op_type)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op_type, op_type) == 0) return &table[i];
    return NULL;
}
