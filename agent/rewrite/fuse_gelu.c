/*
 * fuse_gelu.c — part of xf_agent_prepare: exporters write the exact GELU as
 * five nodes, d = x / √2 (or x · (1/√2)), e = erf(d), a = e + 1, then
 * (x · 0.5) · a or (x · a) · 0.5, operands in either order. ONNX Runtime
 * (1.30) fuses that form into its Gelu kernel only with the Div by √2 (not a
 * Mul by 1/√2) and the 0.5 in place. Left as five nodes, the preparation made
 * the scalings scalar_mul and the rules moved the ×0.5 into the next weight,
 * so the model written ran Erf, Add and two Muls unfused (modelzoo BERT).
 * Fused, the chain is one gelu node: an operator of the vocabulary (its rules
 * move reshapes and slices through it), costed as one kernel as ONNX Runtime
 * runs it, and written back by the exporter in the form ONNX Runtime fuses.
 * Only chains whose intermediate values have one reader each and are not
 * graph outputs are fused; the fused node takes the last value (its name
 * and graph-output position stay).
 */
#include "agent/rewrite/fuse_gelu_internal.h"
#include "agent/rewrite/chain_internal.h"

#include <math.h>
#include <stdio.h>

#define SQRT2 1.41421356f
#define SQRT1_2 0.70710678f

typedef struct gelu_chain {
    int x, final;
    int nodes[5];
} gelu_chain;

static int is_binary(const xf_graph *g, int node, xf_op op)
{
    return node >= 0 && g->nodes[node].op == op && g->nodes[node].n_inputs == 2 &&
           g->nodes[node].inputs[0] >= 0 && g->nodes[node].inputs[1] >= 0;
}

/* Is v a float32 constant of one element equal to want (to 1e-6 relative)? */
static int const_near(const xf_graph *g, int v, float want)
{
    const xf_value *c = &g->values[v];
    if (c->kind != XF_VALUE_CONST || c->dtype != XF_F32 || !c->data ||
        xf_shape_numel(&c->shape) != 1)
        return 0;
    float f = *(const float *)c->data;
    return fabsf(f - want) <= 1e-6f * fabsf(want);
}

/* Is node x · 0.5 (either order)? */
static int half_of(const xf_graph *g, int node, int x)
{
    if (!is_binary(g, node, XF_OP_MUL)) return 0;
    int k = rw_other_operand(g, node, x);
    return k >= 0 && k != x && const_near(g, k, 0.5f);
}

/* Recognises the chain whose first node is the scaling `s` of x by 1/√2. */
static int match_chain(const xf_graph *g, const xf_graph_index *ix, const int *uses, int s,
                       void *chain)
{
    gelu_chain *ch = chain;
    int x;
    if (is_binary(g, s, XF_OP_DIV) && const_near(g, g->nodes[s].inputs[1], SQRT2))
        x = g->nodes[s].inputs[0];
    else if (is_binary(g, s, XF_OP_MUL) && const_near(g, g->nodes[s].inputs[1], SQRT1_2))
        x = g->nodes[s].inputs[0];
    else if (is_binary(g, s, XF_OP_MUL) && const_near(g, g->nodes[s].inputs[0], SQRT1_2))
        x = g->nodes[s].inputs[1];
    else
        return 0;
    const xf_value *xv = &g->values[x];
    if (xv->dtype != XF_F32 || xv->kind == XF_VALUE_CONST) return 0;
    int e = rw_sole_reader(ix, uses, g->nodes[s].outputs[0]);
    if (e < 0 || g->nodes[e].op != XF_OP_ERF || g->nodes[e].n_inputs != 1) return 0;
    int a = rw_sole_reader(ix, uses, g->nodes[e].outputs[0]);
    if (!is_binary(g, a, XF_OP_ADD)) return 0;
    int one = rw_other_operand(g, a, g->nodes[e].outputs[0]);
    if (one < 0 || !const_near(g, one, 1.0f)) return 0;
    int m = rw_sole_reader(ix, uses, g->nodes[a].outputs[0]);
    if (!is_binary(g, m, XF_OP_MUL)) return 0;
    int other = rw_other_operand(g, m, g->nodes[a].outputs[0]);
    int last;
    ch->nodes[0] = s, ch->nodes[1] = e, ch->nodes[2] = a, ch->nodes[3] = m;
    if (other == x) { /* (x · a) · 0.5 */
        last = rw_sole_reader(ix, uses, g->nodes[m].outputs[0]);
        if (!half_of(g, last, g->nodes[m].outputs[0])) return 0;
        ch->nodes[4] = last;
    } else { /* (x · 0.5) · a */
        int h = other >= 0 ? g->values[other].producer : -1;
        if (h < 0 || !half_of(g, h, x) || rw_sole_reader(ix, uses, other) != m) return 0;
        ch->nodes[4] = h;
        last = m;
    }
    ch->x = x;
    ch->final = g->nodes[last].outputs[0];
    return xf_shape_equal(&g->values[ch->final].shape, &xv->shape) &&
           g->values[ch->final].dtype == XF_F32;
}

/* Adds the gelu node for ch and makes it produce ch->final. */
static xf_status fuse(xf_graph *g, const void *chain, uint8_t *node_dead, uint8_t *value_dead,
                      xf_error *err)
{
    const gelu_chain *ch = chain;
    const char *fname = g->nodes[g->values[ch->final].producer].name;
    char name[512];
    snprintf(name, sizeof name, "%s_gelu", fname ? fname : "gelu");
    xf_params p = xf_params_default();
    int in[1] = {ch->x};
    int node = xf_graph_add_node(g, XF_OP_GELU, &p, in, 1, 1, name, err);
    if (node < 0) return err ? err->code : XF_ERR_SHAPE;
    value_dead[g->nodes[node].outputs[0]] = 1;
    g->nodes[node].outputs[0] = ch->final;
    g->values[ch->final].producer = node;
    g->values[ch->final].producer_output = 0;
    for (int k = 0; k < 5; k++) {
        int n = ch->nodes[k];
        node_dead[n] = 1;
        if (g->nodes[n].outputs[0] != ch->final) value_dead[g->nodes[n].outputs[0]] = 1;
    }
    return XF_OK;
}

xf_status rw_fuse_gelus(xf_graph *g, int *n_fused, xf_error *err)
{
    return rw_fuse_chains(g, "GELUs", sizeof(gelu_chain), 5, 1, match_chain, fuse, n_fused, err);
}
