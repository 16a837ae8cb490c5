/*
 * scalar_mul.c — part of xf_agent_prepare: exported models scale by a
 * constant with Mul(x, c) or Div(x, c), c a rank-0 initializer (GELU's
 * x·0.5, attention's scores / √d). The rules state linearity for TASO's
 * scalar_mul (e.g. matmul(scalar_mul(a, s), b) = scalar_mul(matmul(a, b), s),
 * scalar_mul(matmul(a, b), s) = matmul(a, scalar_mul(b, s))), so such nodes
 * become scalar_mul(x, c), a division by c becoming scalar_mul by 1/c (a new
 * constant; skipped when c is 0 or not finite). A search can then move a
 * scaling onto a smaller tensor or into a weight, where finishing folds it.
 * The model written has Mul nodes again (export writes scalar_mul as Mul).
 */
#include "agent/rewrite/scalar_mul_internal.h"

#include <math.h>
#include <stdio.h>

/* Is value v a float32 rank-0 constant? */
static int scalar_const(const xf_graph *g, int v)
{
    const xf_value *c = &g->values[v];
    return v >= 0 && c->kind == XF_VALUE_CONST && c->dtype == XF_F32 && c->shape.rank == 0;
}

/* The reciprocal of constant v as a new constant; -1 when it has none or
 * on failure (err set only then). */
static int reciprocal(xf_graph *g, int v, xf_error *err, int *failed)
{
    float c = *(const float *)g->values[v].data;
    float r = 1.0f / c;
    if (c == 0.0f || !isfinite(c) || !isfinite(r)) return -1;
    char name[512];
    snprintf(name, sizeof name, "%s_reciprocal", g->values[v].name ? g->values[v].name : "scale");
    xf_shape s = xf_shape_make(0, NULL);
    int id = xf_graph_add_const(g, name, XF_F32, &s, &r, err);
    if (id < 0) *failed = 1;
    return id;
}

xf_status rw_scalar_mul_canonicalise(xf_graph *g, int *n_rewritten, xf_error *err)
{
    *n_rewritten = 0;
    int n0 = g->n_nodes;
    for (int i = 0; i < n0; i++) {
        xf_node *n = &g->nodes[i];
        if ((n->op != XF_OP_MUL && n->op != XF_OP_DIV) || n->n_inputs != 2) continue;
        int a = n->inputs[0], b = n->inputs[1];
        if (a < 0 || b < 0) continue;
        int x, s;
        if (n->op == XF_OP_MUL && scalar_const(g, b) && g->values[a].dtype == XF_F32) {
            x = a;
            s = b;
        } else if (n->op == XF_OP_MUL && scalar_const(g, a) && g->values[b].dtype == XF_F32) {
            x = b;
            s = a;
        } else if (n->op == XF_OP_DIV && scalar_const(g, b) && g->values[a].dtype == XF_F32) {
            int failed = 0;
            x = a;
            s = reciprocal(g, b, err, &failed);
            if (failed) return err ? err->code : XF_ERR_NOMEM;
            if (s < 0) continue;
            n = &g->nodes[i];
        } else {
            continue;
        }
        /* x * s keeps x's shape: the node's output is unchanged */
        n->op = XF_OP_SCALAR_MUL;
        n->params = xf_params_default();
        n->inputs[0] = x;
        n->inputs[1] = s;
        (*n_rewritten)++;
    }
    return XF_OK;
}
