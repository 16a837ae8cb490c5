/*
 * export_onnx.c — one rule side as a graph ready for the ONNX exporter
 * (onnx/onnx.h lowers the rule-only operators). The rule's inputs become
 * the model's graph inputs, in order and with their names; outputs are
 * named out0, out1, ... on both sides so the two models of a rule have the
 * same interface and can be compared output by output. ONNX needs output
 * names that are unique and are not graph inputs, so an output that is a
 * graph input (a target like "w0") or repeats an earlier output is routed
 * through an Identity node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_impl.h"

static int needs_identity(const xf_graph *g, int o)
{
    int v = g->outputs[o];
    if (g->values[v].kind != XF_VALUE_NODE) return 1;
    for (int i = 0; i < o; i++)
        if (g->outputs[i] == v) return 1;
    return 0;
}

static xf_status rename_value(xf_graph *g, int v, const char *name, xf_error *err)
{
    char *copy = xf_strdup(name);
    if (!copy) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory naming rule outputs");
    xf_graph_release(g, g->values[v].name);
    g->values[v].name = copy;
    return XF_OK;
}

xf_status xf_audit_onnx_side(const xf_graph *side, const char *name, xf_graph *out, xf_error *err)
{
    xf_status st = xf_graph_clone(side, out, err);
    if (st != XF_OK) return st;
    xf_free(out->name);
    out->name = xf_strdup(name);
    if (!out->name) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory naming graph '%s'", name);
    /* node outputs keep no names of their own: "v<id>" in the model */
    for (int v = 0; v < out->n_values && st == XF_OK; v++) {
        if (out->values[v].kind != XF_VALUE_NODE) continue;
        xf_graph_release(out, out->values[v].name);
        out->values[v].name = NULL;
    }
    for (int o = 0; o < out->n_outputs && st == XF_OK; o++) {
        if (needs_identity(out, o)) {
            int in = out->outputs[o];
            int v = xf_graph_op(out, XF_OP_IDENTITY, NULL, &in, 1, err);
            if (v < 0) {
                st = err ? err->code : XF_ERR_INTERNAL;
                break;
            }
            out->outputs[o] = v;
        }
        char nm[32];
        snprintf(nm, sizeof nm, "out%d", o);
        st = rename_value(out, out->outputs[o], nm, err);
    }
    if (st != XF_OK) xf_graph_free(out);
    return st;
}
