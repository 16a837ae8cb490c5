/*
 * outputs.c — xf_target_outputs_diff: how far apart two models' outputs
 * are when both run in the target on the same inputs. The arbiter checks a
 * chosen model with it, the benches print it, and the tools compare with
 * it the models the interpreter cannot run (fp16, com.microsoft nodes); the scale is each output's
 * largest |value| because elementwise relative error is meaningless at
 * values near zero (a softmax's tail, a ReLU's zeros).
 */
#include <math.h>

#include "target/model_internal.h"

static int float_type(xf_dtype t)
{
    return t == XF_F32 || t == XF_F16 || t == XF_F64;
}

/* Element j of a float32, float16 or float64 tensor. */
static double elem(const xf_tensor *t, int64_t j)
{
    if (t->dtype == XF_F16) return xf_f16_to_f32(((const uint16_t *)t->data)[j]);
    if (t->dtype == XF_F64) return ((const double *)t->data)[j];
    return ((const float *)t->data)[j];
}

/* Largest |x - ref| over the largest |ref|: NaN where ref has NaN is equal
 * (as in xf_tensor_close), NaN anywhere else counts as infinitely far. */
static double float_diff(const xf_tensor *x, const xf_tensor *ref)
{
    int64_t n = xf_shape_numel(&ref->shape);
    if (x->dtype != ref->dtype || xf_shape_numel(&x->shape) != n) return INFINITY;
    double scale = 0, worst = 0;
    for (int64_t j = 0; j < n; j++) {
        double r = elem(ref, j), v = elem(x, j);
        if (isnan(v) && isnan(r)) continue;
        double d = fabs(v - r);
        if (fabs(r) > scale) scale = fabs(r);
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return scale > 0 ? worst / scale : worst;
}

xf_status target_models_diff(xf_target_model *a, xf_target_model *b, double *max_rel,
                             int *worst, xf_error *err)
{
    *max_rel = 0;
    if (worst) *worst = 0;
    if (a->n_out != b->n_out)
        return XF_FAIL(err, XF_ERR_MISMATCH, "the models have %d and %d outputs", a->n_out,
                       b->n_out);
    xf_tensor *out[2] = {xf_tensor_array_alloc(a->n_out), xf_tensor_array_alloc(b->n_out)};
    xf_status st = XF_OK;
    if (!out[0] || !out[1])
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the outputs in the target");
    if (!st) st = xf_target_model_outputs(a, out[0], err);
    if (!st) {
        st = xf_target_model_outputs(b, out[1], err);
        if (st) xf_tensor_array_free(out[0], a->n_out), out[0] = NULL;
    }
    for (int i = 0; i < a->n_out && !st; i++) {
        const xf_tensor *ref = &out[0][i], *x = &out[1][i];
        double rel = float_type(ref->dtype) ? float_diff(x, ref)
                     : xf_tensor_close(x, ref, 0, 0) ? 0.0
                                                     : INFINITY;
        if (!(rel <= *max_rel)) {
            *max_rel = rel;
            if (worst) *worst = i;
        }
    }
    if (out[0]) xf_tensor_array_free(out[0], a->n_out);
    if (out[1]) xf_tensor_array_free(out[1], b->n_out);
    return st;
}

xf_status xf_target_outputs_diff(xf_target *t, const xf_graph *a, const xf_graph *b,
                                 uint64_t seed, double *max_rel, xf_error *err)
{
    *max_rel = 0;
    if (a->n_outputs != b->n_outputs)
        return XF_FAIL(err, XF_ERR_MISMATCH, "the models have %d and %d outputs", a->n_outputs,
                       b->n_outputs);
    const xf_graph *g[2] = {a, b};
    xf_target_model *m[2] = {NULL, NULL};
    xf_status st = XF_OK;
    for (int k = 0; k < 2 && !st; k++) {
        st = xf_target_model_load(t, g[k], seed, &m[k], err);
        if (!st) st = xf_target_model_run(m[k], err);
    }
    if (!st) st = target_models_diff(m[0], m[1], max_rel, NULL, err);
    for (int k = 0; k < 2; k++) xf_target_model_free(m[k]);
    return st;
}

xf_status xf_target_files_diff(xf_target *t, const char *path_a, const char *path_b,
                               const xf_graph *g, uint64_t seed, double *max_rel, xf_error *err)
{
    *max_rel = 0;
    const char *path[2] = {path_a, path_b};
    xf_target_model *m[2] = {NULL, NULL};
    xf_status st = XF_OK;
    for (int k = 0; k < 2 && !st; k++) {
        st = xf_target_model_load_file(t, path[k], g, seed, &m[k], err);
        if (!st) st = xf_target_model_run(m[k], err);
        if (st) xf_error_prefix(err, "%s", path[k]);
    }
    if (!st) st = target_models_diff(m[0], m[1], max_rel, NULL, err);
    for (int k = 0; k < 2; k++) xf_target_model_free(m[k]);
    return st;
}
