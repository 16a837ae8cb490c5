/*
 * opaque_run.c — the interpreter's path for opaque nodes that have a
 * kernel: If runs the branch its condition picks (the branch is a graph of
 * its own whose inputs are the outer-scope values it reads, found among
 * the node's captured inputs by name), LSTM runs ops_lstm.c, the shape
 * arithmetic (Range, ConstantOfShape, Mod, ScatterND) opaque_calc.c. Rules never
 * match through these nodes; running them lets the numerical checks and
 * `xfonnx run` cover models that contain them.
 */
#include "op_internal.h"

#include <string.h>

xf_status xf_opaque_if_branch(const xf_tensor *cond, int *branch, xf_error *err)
{
    *branch = 0;
    if (!cond || !cond->data || xf_shape_numel(&cond->shape) != 1)
        return XF_FAIL(err, XF_ERR_INVALID, "if: the condition must hold one element");
    int truth;
    switch (cond->dtype) {
    case XF_BOOL: truth = *(const uint8_t *)cond->data != 0; break;
    case XF_I64: truth = *(const int64_t *)cond->data != 0; break;
    case XF_I32: truth = *(const int32_t *)cond->data != 0; break;
    case XF_F32: truth = *(const float *)cond->data != 0.0f; break;
    default: return XF_FAIL(err, XF_ERR_INVALID, "if: the condition has no valid dtype");
    }
    *branch = truth ? 0 : 1;
    return XF_OK;
}

/* The branch's graph inputs, each the captured input of the same name. */
static xf_status bind_branch(const xf_node *n, const xf_graph *br, const xf_tensor *const *in,
                             xf_tensor *args, xf_error *err)
{
    const xf_opaque *o = n->opaque;
    int first = n->n_inputs - o->n_captured;
    for (int i = 0; i < br->n_inputs; i++) {
        const char *nm = br->values[br->inputs[i]].name;
        int j = 0;
        while (j < o->n_captured && !(nm && o->captured[j] && strcmp(nm, o->captured[j]) == 0))
            j++;
        if (j == o->n_captured || !in[first + j])
            return XF_FAIL(err, XF_ERR_GRAPH,
                           "if: the branch reads outer value '%s', which the node does not "
                           "capture",
                           nm ? nm : "");
        args[i] = *in[first + j];
    }
    return XF_OK;
}

static xf_status run_if(const xf_graph *g, int node, const xf_tensor *const *in, xf_tensor *out,
                        xf_error *err)
{
    const xf_node *n = &g->nodes[node];
    const xf_opaque *o = n->opaque;
    int b;
    xf_status st = xf_opaque_if_branch(in[0], &b, err);
    if (st) return st;
    if (b >= o->n_branches)
        return XF_FAIL(err, XF_ERR_GRAPH, "if: branch %d was not imported", b);
    const xf_graph *br = &o->branches[b];
    if (br->n_outputs != n->n_outputs)
        return XF_FAIL(err, XF_ERR_GRAPH, "if: the %s branch has %d outputs, the node %d",
                       b ? "else" : "then", br->n_outputs, n->n_outputs);
    xf_tensor *args = xf_calloc((size_t)br->n_inputs + 1, sizeof *args);
    xf_tensor *res = xf_tensor_array_alloc(br->n_outputs);
    if (!args || !res) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "if: out of memory");
        goto out;
    }
    st = bind_branch(n, br, in, args, err);
    if (st == XF_OK) st = xf_interp_run(br, args, br->n_inputs, res, err);
    if (st) {
        xf_error_prefix(err, "in the %s branch", b ? "else" : "then");
        goto out;
    }
    for (int k = 0; k < n->n_outputs; k++) {
        if (res[k].dtype != out[k].dtype || !xf_shape_equal(&res[k].shape, &out[k].shape)) {
            char a[96], c[96];
            st = XF_FAIL(err, XF_ERR_SHAPE,
                         "if: the %s branch's output %d is %s %s; the node declares %s %s",
                         b ? "else" : "then", k, xf_dtype_name(res[k].dtype),
                         xf_shape_str(&res[k].shape, a, sizeof a), xf_dtype_name(out[k].dtype),
                         xf_shape_str(&out[k].shape, c, sizeof c));
            goto out;
        }
        memcpy(out[k].data, res[k].data, xf_tensor_bytes(&res[k]));
    }
out:
    xf_free(args);
    xf_tensor_array_free(res, br->n_outputs);
    return st;
}

xf_status ir_opaque_run(const xf_graph *g, int node, const xf_tensor *const *in, xf_tensor *out,
                        xf_error *err)
{
    const xf_node *n = &g->nodes[node];
    const xf_opaque *o = n->opaque;
    char d[256];
    if (!o || o->kernel == XF_OPAQUE_NO_KERNEL)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has no reference kernel (opaque op)",
                       xf_node_describe(g, node, d, sizeof d));
    if (o->kernel == XF_OPAQUE_IF) return run_if(g, node, in, out, err);
    if (xf_opaque_calc_kernel(o->kernel)) {
        xf_status st = xf_opaque_calc_run(o, n->n_inputs, in, out, err);
        if (st) xf_error_prefix(err, "%s", xf_node_describe(g, node, d, sizeof d));
        return st;
    }
    return ir_lstm_run(&o->lstm, n->n_inputs, in, n->n_outputs, out, err);
}
