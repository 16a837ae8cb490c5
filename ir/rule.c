/*
 * rule.c — the xf_rule value type shared by the rule pipeline (enumerate,
 * prune, rulesdb, verify, agent): lifetime and the interface agreement
 * between a rule's two sides (same inputs, same number of outputs), and
 * which source splits cut freely (the one definition the matcher, the
 * verifier and the domain inference share), and what size a generator
 * has where a rule is checked or applied (the one sizing rule the bounded
 * check and the matcher share). A rule owns its validity domain
 * (domain.c).
 */
#include "ir.h"

#include <string.h>

void xf_rule_init(xf_rule *r)
{
    xf_graph_init(&r->src);
    xf_graph_init(&r->dst);
    r->fingerprint = 0;
    xf_domain_init(&r->domain);
}

void xf_rule_free(xf_rule *r)
{
    xf_graph_free(&r->src);
    xf_graph_free(&r->dst);
    xf_domain_free(&r->domain);
    xf_rule_init(r);
}

xf_status xf_rule_validate(const xf_rule *r, xf_error *err)
{
    xf_status st = xf_graph_validate(&r->src, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "rule source");
        return st;
    }
    st = xf_graph_validate(&r->dst, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "rule target");
        return st;
    }
    if (r->src.n_inputs != r->dst.n_inputs)
        return XF_FAIL(err, XF_ERR_GRAPH, "rule: source has %d inputs, target %d",
                       r->src.n_inputs, r->dst.n_inputs);
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_value *a = &r->src.values[r->src.inputs[i]];
        const xf_value *b = &r->dst.values[r->dst.inputs[i]];
        if (a->dtype != b->dtype || !xf_shape_equal(&a->shape, &b->shape)) {
            char sa[96], sb[96];
            return XF_FAIL(err, XF_ERR_GRAPH,
                           "rule: input %d is %s %s in the source but %s %s in the target", i,
                           xf_dtype_name(a->dtype), xf_shape_str(&a->shape, sa, sizeof sa),
                           xf_dtype_name(b->dtype), xf_shape_str(&b->shape, sb, sizeof sb));
        }
    }
    if (r->src.n_outputs != r->dst.n_outputs || r->src.n_outputs == 0)
        return XF_FAIL(err, XF_ERR_GRAPH, "rule: source has %d outputs, target %d (need equal, > 0)",
                       r->src.n_outputs, r->dst.n_outputs);
    for (int i = 0; i < r->src.n_outputs; i++) {
        const xf_value *a = &r->src.values[r->src.outputs[i]];
        const xf_value *b = &r->dst.values[r->dst.outputs[i]];
        if (a->dtype != b->dtype || !xf_shape_equal(&a->shape, &b->shape)) {
            char sa[96], sb[96];
            return XF_FAIL(err, XF_ERR_GRAPH, "rule: output %d is %s in the source but %s in the target",
                           i, xf_shape_str(&a->shape, sa, sizeof sa),
                           xf_shape_str(&b->shape, sb, sizeof sb));
        }
    }
    return XF_OK;
}

/* The only index i with g's output i equal to value v; -1 when none or two. */
static int sole_output(const xf_graph *g, int v)
{
    int at = -1;
    for (int i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == v) {
            if (at >= 0) return -1;
            at = i;
        }
    return at;
}

/* Whether an operator of g reads value v. */
static int graph_reads(const xf_graph *g, int v)
{
    for (int n = 0; n < g->n_nodes; n++)
        for (int s = 0; s < g->nodes[n].n_inputs; s++)
            if (g->nodes[n].inputs[s] == v) return 1;
    return 0;
}

int xf_rule_split_cuts_freely(const xf_rule *r, int node)
{
    if (node < 0 || node >= r->src.n_nodes) return 0;
    const xf_node *sn = &r->src.nodes[node];
    if (sn->op != XF_OP_SPLIT || sn->n_outputs < 1) return 0;
    const xf_node *tn = NULL;
    for (int o = 0; o < sn->n_outputs; o++) {
        int i = sole_output(&r->src, sn->outputs[o]);
        if (i < 0 || graph_reads(&r->src, sn->outputs[o]) || i >= r->dst.n_outputs) return 0;
        const xf_value *t = &r->dst.values[r->dst.outputs[i]];
        if (t->kind != XF_VALUE_NODE || t->producer_output != o) return 0;
        if (!tn) tn = &r->dst.nodes[t->producer];
        if (&r->dst.nodes[t->producer] != tn || tn->op != XF_OP_SPLIT ||
            tn->n_outputs != sn->n_outputs || sole_output(&r->dst, r->dst.outputs[i]) != i ||
            graph_reads(&r->dst, r->dst.outputs[i]))
            return 0;
    }
    return 1;
}

/* The shape generator `gop` takes from a consumer `user_op` of n_in
 * operands reading it at input `slot`, whose first two operands have
 * shapes in[0..1] (NULL: not known),
 * into p's shape; 0 when that consumer does not size it (p unchanged).
 * *from and *axes (NULL: not wanted) get the operand it reads and the
 * dims of it that give the size (bit d: dim d). */
static int consumer_shape(xf_op gop, xf_op user_op, int n_in, int slot, const xf_shape *const *in,
                          xf_params *p, int *from, uint32_t *axes)
{
    const xf_shape *a;
    int f = 0;
    uint32_t ax = 0;
    if (user_op == XF_OP_CONV && slot == 1) {
        if (n_in < 1 || !(a = in[0]) || a->rank != 4) return 0;
        if (gop == XF_OP_CONST_IDENTITY_CONV) p->shape[0] = p->shape[1] = a->dims[1];
        else if (gop == XF_OP_CONST_POOL) p->shape[0] = a->dims[1];
        else return 0;
        ax = 1u << 1;
    } else {
        if (n_in != 2 || slot < 0 || slot > 1 || !(a = in[1 - slot])) return 0;
        f = 1 - slot;
        if (user_op == XF_OP_MATMUL && gop == XF_OP_CONST_IDENTITY_MATRIX) {
            if (a->rank < 2) return 0;
            int d = slot == 1 ? a->rank - 1 : a->rank - 2;
            p->shape[0] = p->shape[1] = a->dims[d];
            ax = 1u << d;
        } else if (xf_op_is(user_op, XF_OPC_ARITHMETIC)) {
            xf_params_set_shape(p, a);
            ax = (1u << a->rank) - 1; /* rank <= XF_MAX_DIMS */
        } else {
            return 0;
        }
    }
    if (from) *from = f;
    if (axes) *axes = ax;
    return 1;
}

int xf_rule_generator_held(xf_op gop, const xf_params *rule_p, xf_op user_op, int n_in, int slot,
                           const xf_shape *const *own, int *from, uint32_t *axes)
{
    xf_params at_own = *rule_p;
    return !consumer_shape(gop, user_op, n_in, slot, own, &at_own, from, axes) ||
           !xf_params_same_shape(&at_own, rule_p);
}

int xf_rule_generator_shape(xf_op gop, const xf_params *rule_p, xf_op user_op, int n_in, int slot,
                            const xf_shape *const *own, const xf_shape *const *in, xf_params *p)
{
    *p = *rule_p;
    if (xf_rule_generator_held(gop, rule_p, user_op, n_in, slot, own, NULL, NULL))
        return 0; /* its consumer does not give it its own shape: it keeps it */
    if (consumer_shape(gop, user_op, n_in, slot, in, p, NULL, NULL)) return 1;
    *p = *rule_p;
    return 0;
}
