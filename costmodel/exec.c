/*
 * exec.c — the whole-graph executor front end: checks the graph and the
 * inputs (and that its tensors fit the memory limit), then hands the work
 * to the backend's executor hooks (buffers and kernels created once in
 * prepare, nodes run in topological order). Also
 * end-to-end latency (median of timed runs) and the numerical comparison of
 * two graphs' outputs used to check that an optimised model is equivalent.
 */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

struct xf_exec {
    xf_cost_model *cm;
    const xf_graph *g;
    void *impl; /* the backend's */
    int ran;
};

xf_status xf_exec_prepare(xf_cost_model *cm, const xf_graph *g, xf_exec **out, xf_error *err)
{
    *out = NULL;
    xf_status st = xf_graph_validate(g, err);
    if (st) return st;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        if (n->op != XF_OP_OPAQUE) continue;
        char d[256];
        if (!n->opaque || n->opaque->kernel == XF_OPAQUE_NO_KERNEL)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "%s is an operator rlflow does not model, so the graph cannot be "
                           "executed",
                           xf_node_describe(g, i, d, sizeof d));
        if (cm->be != &cm_backend_analytic) /* its executor is the reference interpreter */
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "%s is an opaque operator only the reference interpreter runs (the "
                           "analytic backend's executor), not the %s executor",
                           xf_node_describe(g, i, d, sizeof d), cm->be->name);
    }
    st = xf_graph_mem_check(g, err); /* prepare allocates every value's buffer */
    if (st) return st;
    xf_exec *e = xf_calloc(1, sizeof *e);
    if (!e) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory preparing the executor");
    e->cm = cm;
    e->g = g;
    st = cm->be->exec_prepare(cm->state, g, &e->impl, err);
    if (st) {
        xf_error_prefix(err, "preparing the graph on %s", cm->be->name);
        xf_free(e);
        return st;
    }
    *out = e;
    return XF_OK;
}

static xf_status check_inputs(const xf_graph *g, const xf_tensor *inputs, int n_inputs,
                              xf_error *err)
{
    if (n_inputs != g->n_inputs)
        return XF_FAIL(err, XF_ERR_INVALID, "the graph has %d inputs but %d were given",
                       g->n_inputs, n_inputs);
    for (int i = 0; i < n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        if (inputs[i].dtype == v->dtype && xf_shape_equal(&inputs[i].shape, &v->shape) &&
            inputs[i].data)
            continue;
        char want[160], got[160];
        return XF_FAIL(err, XF_ERR_INVALID, "input %d '%s' must be %s%s, got %s%s%s", i,
                       v->name ? v->name : "", xf_dtype_name(v->dtype),
                       xf_shape_str(&v->shape, want, sizeof want), xf_dtype_name(inputs[i].dtype),
                       xf_shape_str(&inputs[i].shape, got, sizeof got),
                       inputs[i].data ? "" : " without data");
    }
    return XF_OK;
}

xf_status xf_exec_run(xf_exec *e, const xf_tensor *inputs, int n_inputs, xf_error *err)
{
    xf_status st = check_inputs(e->g, inputs, n_inputs, err);
    if (st) return st;
    e->ran = 0;
    st = e->cm->be->exec_run(e->impl, inputs, n_inputs, err);
    if (!st) e->ran = 1;
    return st;
}

xf_status xf_exec_outputs(xf_exec *e, xf_tensor *outputs, xf_error *err)
{
    for (int i = 0; i < e->g->n_outputs; i++) memset(&outputs[i], 0, sizeof outputs[i]);
    if (!e->ran)
        return XF_FAIL(err, XF_ERR_INVALID, "no outputs: the graph has not run successfully");
    for (int i = 0; i < e->g->n_outputs; i++) {
        xf_status st = e->cm->be->exec_output(e->impl, i, &outputs[i], err);
        if (st) {
            for (int k = 0; k <= i; k++) xf_tensor_free(&outputs[k]);
            return st;
        }
    }
    return XF_OK;
}

xf_status xf_exec_latency(xf_exec *e, const xf_tensor *inputs, int n_inputs, int warmup,
                          int reps, double *median_ms, xf_error *err)
{
    *median_ms = 0;
    if (reps < 1 || warmup < 0)
        return XF_FAIL(err, XF_ERR_INVALID, "latency: reps (%d) must be >= 1, warmup (%d) >= 0",
                       reps, warmup);
    double *t = xf_calloc((size_t)reps, sizeof *t);
    if (!t) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory timing the graph");
    xf_status st = XF_OK;
    for (int r = 0; r < warmup + reps && !st; r++) {
        double t0 = xf_clock_now_ms();
        st = xf_exec_run(e, inputs, n_inputs, err);
        if (r >= warmup) t[r - warmup] = xf_clock_now_ms() - t0;
    }
    if (!st) *median_ms = cm_median(t, reps);
    xf_free(t);
    return st;
}

void xf_exec_free(xf_exec *e)
{
    if (!e) return;
    if (e->impl) e->cm->be->exec_free(e->impl);
    xf_free(e);
}

static xf_status same_interface(const xf_graph *a, const xf_graph *b, xf_error *err)
{
    if (a->n_inputs != b->n_inputs || a->n_outputs != b->n_outputs)
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "graphs differ in interface: %d inputs/%d outputs vs %d inputs/%d outputs",
                       a->n_inputs, a->n_outputs, b->n_inputs, b->n_outputs);
    for (int i = 0; i < a->n_inputs; i++) {
        const xf_value *va = &a->values[a->inputs[i]], *vb = &b->values[b->inputs[i]];
        if (va->dtype != vb->dtype || !xf_shape_equal(&va->shape, &vb->shape)) {
            char sa[160], sb[160];
            return XF_FAIL(err, XF_ERR_MISMATCH, "input %d differs: %s%s vs %s%s", i,
                           xf_dtype_name(va->dtype), xf_shape_str(&va->shape, sa, sizeof sa),
                           xf_dtype_name(vb->dtype), xf_shape_str(&vb->shape, sb, sizeof sb));
        }
    }
    return XF_OK;
}

/* Runs g on inputs and returns its outputs (allocated; caller xf_frees). */
static xf_status run_once(xf_cost_model *cm, const xf_graph *g, const xf_tensor *inputs,
                          xf_tensor *outputs, xf_error *err)
{
    xf_exec *e = NULL;
    xf_status st = xf_exec_prepare(cm, g, &e, err);
    if (!st) st = xf_exec_run(e, inputs, g->n_inputs, err);
    if (!st) st = xf_exec_outputs(e, outputs, err);
    xf_exec_free(e);
    return st;
}

xf_status xf_exec_compare(xf_cost_model *cm, const xf_graph *a, const xf_graph *b,
                          uint64_t seed, double *max_abs, double *max_rel, xf_error *err)
{
    *max_abs = *max_rel = 0;
    xf_status st = same_interface(a, b, err);
    if (st) return st;
    int ni = a->n_inputs, no = a->n_outputs;
    xf_tensor *in = xf_calloc((size_t)(ni > 0 ? ni : 1), sizeof *in);
    xf_tensor *oa = xf_calloc((size_t)(no > 0 ? no : 1), sizeof *oa);
    xf_tensor *ob = xf_calloc((size_t)(no > 0 ? no : 1), sizeof *ob);
    if (!in || !oa || !ob) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory comparing graphs");
        goto out;
    }
    st = xf_graph_random_inputs(a, seed, in, err);
    if (!st) {
        st = run_once(cm, a, in, oa, err);
        if (st) xf_error_prefix(err, "first graph");
    }
    if (!st) {
        st = run_once(cm, b, in, ob, err);
        if (st) xf_error_prefix(err, "second graph");
    }
    for (int i = 0; !st && i < no; i++) {
        double ab, rel;
        st = xf_tensor_compare(&oa[i], &ob[i], &ab, &rel, err);
        if (st) {
            xf_error_prefix(err, "output %d", i);
            break;
        }
        if (ab > *max_abs) *max_abs = ab;
        if (rel > *max_rel) *max_rel = rel;
    }
out:
    for (int i = 0; in && i < ni; i++) xf_tensor_free(&in[i]);
    for (int i = 0; oa && i < no; i++) xf_tensor_free(&oa[i]);
    for (int i = 0; ob && i < no; i++) xf_tensor_free(&ob[i]);
    xf_free(in);
    xf_free(oa);
    xf_free(ob);
    return st;
}
