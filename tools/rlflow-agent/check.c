/*
 * check.c — the two measurements rlflow-agent makes on the models themselves:
 * the numerical check (original and optimised model run by the reference
 * interpreter on the same random inputs, every output compared) and the
 * end-to-end latency on a cost-model backend's executor.
 */
#include <math.h>
#include <stdlib.h>

#include "cli.h"

static void free_tensors(xf_tensor *t, int n)
{
    if (!t) return;
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
    free(t);
}

static xf_tensor *alloc_tensors(int n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(xf_tensor));
}

/* Largest |opt - ref| of one float output, and whether every element is
 * within atol + rtol*|ref|. */
static int output_close(const xf_tensor *opt, const xf_tensor *ref, double rtol, double atol,
                        double *max_abs)
{
    *max_abs = 0;
    if (opt->dtype != XF_F32) return xf_tensor_close(opt, ref, rtol, atol);
    const float *a = opt->data, *b = ref->data;
    int64_t n = xf_shape_numel(&ref->shape);
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= atol + rtol * fabs((double)b[i]))) ok = 0; /* NaN fails too */
        if (d > *max_abs || d != d) *max_abs = d;
    }
    return ok;
}

xf_status cli_numeric_check(const xf_graph *model, const xf_graph *opt, uint64_t seed, double rtol,
                            double atol, cli_check *out, xf_error *err)
{
    out->max_abs = out->max_rel = 0;
    out->bad_output = -1;
    out->bad_abs = 0;
    if (model->n_inputs != opt->n_inputs || model->n_outputs != opt->n_outputs)
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "optimised model has %d inputs / %d outputs, the original %d / %d",
                       opt->n_inputs, opt->n_outputs, model->n_inputs, model->n_outputs);
    xf_tensor *in = alloc_tensors(model->n_inputs);
    xf_tensor *ref = alloc_tensors(model->n_outputs);
    xf_tensor *got = alloc_tensors(model->n_outputs);
    xf_status st = XF_OK;
    if (!in || !ref || !got) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the numerical check");
        goto out;
    }
    st = xf_graph_random_inputs(model, seed, in, err);
    if (!st) {
        st = xf_interp_run(model, in, model->n_inputs, ref, err);
        if (st) xf_error_prefix(err, "running the original model: ");
    }
    if (!st) {
        st = xf_interp_run(opt, in, opt->n_inputs, got, err);
        if (st) xf_error_prefix(err, "running the optimised model: ");
    }
    for (int i = 0; !st && i < model->n_outputs; i++) {
        double ma = 0, mr = 0, worst = 0;
        st = xf_tensor_compare(&got[i], &ref[i], &ma, &mr, err);
        if (st) {
            xf_error_prefix(err, "output %d '%s': ", i,
                            model->values[model->outputs[i]].name ? model->values[model->outputs[i]].name : "?");
            break;
        }
        if (ma > out->max_abs) out->max_abs = ma;
        if (mr > out->max_rel) out->max_rel = mr;
        if (!output_close(&got[i], &ref[i], rtol, atol, &worst) && out->bad_output < 0) {
            out->bad_output = i;
            out->bad_abs = worst;
        }
    }
out:
    free_tensors(in, model->n_inputs);
    free_tensors(ref, model->n_outputs);
    free_tensors(got, model->n_outputs);
    return st;
}

/* Both models are prepared once and timed in alternation, LATENCY_ROUNDS
 * rounds of a 10-run median each; the smallest median of each model is
 * reported. Alternating and taking the minimum keeps a burst of load from
 * other processes from landing on one model only; the spread of each
 * model's medians says how far apart two timings of one model can be. */
#define LATENCY_ROUNDS 5

xf_status cli_latency_pair(xf_cost_model *cm, const xf_graph *a, const xf_graph *b,
                           double *ms_a, double *ms_b, double *spread, xf_error *err)
{
    const xf_graph *g[2] = {a, b};
    xf_exec *e[2] = {NULL, NULL};
    xf_tensor *in[2] = {alloc_tensors(a->n_inputs), alloc_tensors(b->n_inputs)};
    double best[2] = {0, 0}, worst[2] = {0, 0};
    xf_status st = XF_OK;
    if (!in[0] || !in[1]) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the latency run");
    for (int k = 0; k < 2 && !st; k++) {
        st = xf_exec_prepare(cm, g[k], &e[k], err);
        if (!st) st = xf_graph_random_inputs(g[k], 1, in[k], err);
    }
    for (int r = 0; r < LATENCY_ROUNDS && !st; r++)
        for (int k = 0; k < 2 && !st; k++) {
            double ms = 0;
            st = xf_exec_latency(e[k], in[k], g[k]->n_inputs, r == 0 ? 3 : 1, 10, &ms, err);
            if (!st && (r == 0 || ms < best[k])) best[k] = ms;
            if (!st && (r == 0 || ms > worst[k])) worst[k] = ms;
        }
    for (int k = 0; k < 2; k++) {
        free_tensors(in[k], g[k]->n_inputs);
        xf_exec_free(e[k]);
    }
    *ms_a = best[0];
    *ms_b = best[1];
    *spread = 0;
    for (int k = 0; k < 2; k++)
        if (best[k] > 0 && (worst[k] - best[k]) / best[k] > *spread)
            *spread = (worst[k] - best[k]) / best[k];
    return st;
}
