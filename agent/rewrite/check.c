/*
 * check.c — xf_agent_check: the numerical check of a rewritten model. The
 * original and the optimised model are run by the reference interpreter on
 * the same random inputs and every output is compared with the ir's one
 * comparison (xf_tensor_close, as xfonnx uses it): NaN where the original
 * has NaN is equal, NaN anywhere else is a difference; so a model is
 * written only when it computes what the original does. Inputs and outputs
 * are matched by name, and must come in the original's order: a caller
 * that feeds or fetches them by name (ONNX Runtime, a serving stack) sees
 * the same model.
 */
#include <string.h>

#include "agent/rewrite/rewrite.h"

static const char *name_of(const xf_graph *g, int v)
{
    return g->values[v].name ? g->values[v].name : "";
}

/* The i-th inputs (outputs: `outputs` 1) of both models have one name. */
static xf_status same_names(const xf_graph *model, const xf_graph *opt, int outputs, xf_error *err)
{
    int n = outputs ? model->n_outputs : model->n_inputs;
    const int *a = outputs ? model->outputs : model->inputs, *b = outputs ? opt->outputs : opt->inputs;
    for (int i = 0; i < n; i++)
        if (strcmp(name_of(model, a[i]), name_of(opt, b[i])) != 0)
            return XF_FAIL(err, XF_ERR_MISMATCH,
                           "optimised model's %s %d is named '%s', the original's '%s' (names and "
                           "order of inputs and outputs are kept)",
                           outputs ? "output" : "input", i, name_of(opt, b[i]),
                           name_of(model, a[i]));
    return XF_OK;
}

xf_status xf_agent_check(const xf_graph *model, const xf_graph *opt, uint64_t seed, double rtol,
                         double atol, xf_check_result *out, xf_error *err)
{
    out->max_abs = out->max_rel = 0;
    out->bad_output = -1;
    out->bad_abs = 0;
    if (model->n_inputs != opt->n_inputs || model->n_outputs != opt->n_outputs)
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "optimised model has %d inputs / %d outputs, the original %d / %d",
                       opt->n_inputs, opt->n_outputs, model->n_inputs, model->n_outputs);
    xf_status named = same_names(model, opt, 0, err);
    if (named == XF_OK) named = same_names(model, opt, 1, err);
    if (named != XF_OK) return named;
    xf_tensor *in = xf_tensor_array_alloc(model->n_inputs);
    xf_tensor *ref = xf_tensor_array_alloc(model->n_outputs);
    xf_tensor *got = xf_tensor_array_alloc(model->n_outputs);
    xf_status st = XF_OK;
    if (!in || !ref || !got) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the numerical check");
        goto out;
    }
    st = xf_graph_random_inputs(model, seed, in, err);
    if (!st) {
        st = xf_interp_run(model, in, model->n_inputs, ref, err);
        if (st) xf_error_prefix(err, "running the original model");
    }
    if (!st) {
        st = xf_interp_run(opt, in, opt->n_inputs, got, err);
        if (st) xf_error_prefix(err, "running the optimised model");
    }
    for (int i = 0; !st && i < model->n_outputs; i++) {
        double ma = 0, mr = 0;
        st = xf_tensor_compare(&got[i], &ref[i], &ma, &mr, err);
        if (st) {
            xf_error_prefix(err, "output %d '%s'", i,
                            model->values[model->outputs[i]].name ? model->values[model->outputs[i]].name : "?");
            break;
        }
        if (ma > out->max_abs) out->max_abs = ma;
        if (mr > out->max_rel) out->max_rel = mr;
        if (!xf_tensor_close(&got[i], &ref[i], rtol, atol) && out->bad_output < 0) {
            out->bad_output = i;
            out->bad_abs = ma;
        }
    }
out:
    xf_tensor_array_free(in, model->n_inputs);
    xf_tensor_array_free(ref, model->n_outputs);
    xf_tensor_array_free(got, model->n_outputs);
    return st;
}
