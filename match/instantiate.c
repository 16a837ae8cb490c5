/*
 * instantiate.c — the target side of a rule instantiated at a match: each
 * target operator's parameters adapted to the bound shapes, its input
 * shapes, whether it is weight-only, and the shapes of the target's outputs
 * (the matcher accepts a location only when they equal the matched ones).
 *
 * Target operators are visited in the dst graph's xf_graph_topo_order; that
 * is the order of xf_match_target's arrays, and t->params[k] is exactly what
 * xf_graph_add_node must receive for the k-th of them (canonical, absolute
 * at the bound rank). Parameters are re-derived as follows:
 *  - axis, axes and permutations: relative form at the rule's rank, absolute
 *    at the rank of the operator's bound first input (relparams_internal.h);
 *  - split sizes: along the split axis, from the shapes of the matched
 *    source outputs that the split's outputs replace when every one of them
 *    is a rule output, else equal parts of the input where the rule's are
 *    equal parts, else the rule's own sizes (the verifier checks them
 *    there only, verify/bounded_shapes.c);
 *  - depthwise conv (group == input channels in the rule): group = bound
 *    channels;
 *  - a layer norm's epsilon: the matched source layer norms' (they share
 *    one); a reshape's target: its shape under the rule's symbolic dims
 *    bound at the match (xf_rule_dims);
 *  - generators, from their first consumer where, at the rule's own
 *    shapes, it gives the rule's generator its own shape
 *    (xf_rule_generator_shape, the rule the bounded check shares): as a conv
 *    weight, identity conv [C,C,kh,kw] and pooling kernel [C,1,kh,kw] with
 *    C the conv input's channels; an identity matrix as matmul operand gets
 *    the matching inner dimension of the other operand; as an operand of an
 *    element-wise binary op, the other operand's shape; a generator that is
 *    itself a rule output takes the matched output's shape. Anything else
 *    keeps the rule's shape (and then usually fails the output check).
 * A target value of rank 0 in the rule must be one element at the match
 * (match_scalar_kept; the source's are checked in match.c, complete).
 */
#include <string.h>

#include "match/match_internal.h"
#include "match/relparams_internal.h"

typedef struct inst_state {
    xf_dtype dt[XF_MATCH_MAX_NODES][XF_PAT_MAX_NODE_OUT];
    xf_shape sh[XF_MATCH_MAX_NODES][XF_PAT_MAX_NODE_OUT];
    int done[XF_MATCH_MAX_NODES];
    int64_t symval[XF_RULE_DIMS_MAX_SYMS]; /* the rule's symbols at the match (dims) */
} inst_state;

int match_scalar_kept(const xf_graph *rg, int v, const xf_shape *shape)
{
    return v < 0 || v >= rg->n_values || rg->values[v].shape.rank != 0 ||
           xf_shape_numel(shape) == 1;
}

/* The rule's symbols bound at match m (rr->tgt.dims): rule inputs' dims
 * from the bound values, the source's reshape variables from the matched
 * nodes; every source value must have the rule's rank and agree with its
 * dims. */
static xf_status bind_dims(const xf_rs_rule *rr, const xf_graph *g, const xf_match *m,
                           inst_state *s, xf_error *err)
{
    const xf_graph *src = &rr->rule.src;
    xf_shape sh[XF_MATCH_MAX_INPUTS + XF_MATCH_MAX_NODES * XF_PAT_MAX_NODE_OUT];
    int n = src->n_values;
    if (n > (int)(sizeof sh / sizeof sh[0]))
        return XF_FAIL(err, XF_ERR_SHAPE, "rule %lld has too many values", (long long)rr->id);
    for (int v = 0; v < n; v++) sh[v].rank = -1;
    for (int i = 0; i < src->n_inputs; i++)
        if (rr->pat.in_used[i]) sh[src->inputs[i]] = g->values[m->inputs[i]].shape;
    for (int k = 0; k < src->n_nodes; k++)
        for (int o = 0; o < src->nodes[k].n_outputs; o++)
            sh[src->nodes[k].outputs[o]] = g->values[g->nodes[m->nodes[k]].outputs[o]].shape;
    /* every source value at the rule's rank: the monomials are the rule's
     * values' dims, compared dim by dim, and a squeeze of no axes drops a
     * kept dim that is 1 in the model (x[6] -> [2,1,3,1] for a rule's
     * [3,1,2,2]), which would leave a value of a lower rank that agrees on
     * its first dims */
    for (int v = 0; v < n; v++)
        if (sh[v].rank >= 0 && sh[v].rank != src->values[v].shape.rank)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "rule %lld: a matched value has rank %d, the rule's %d",
                           (long long)rr->id, sh[v].rank, src->values[v].shape.rank);
    if (!xf_rule_dims_bind(rr->tgt.dims, sh, s->symval))
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "rule %lld: the matched shapes do not agree with the rule's dims",
                       (long long)rr->id);
    return XF_OK;
}

/* Value behind a target reference: a bound graph value or a target output
 * computed already; 0 when it is a generator not derived yet. */
static int ref_shape(const xf_graph *g, const xf_match *m, const inst_state *s, xf_pat_ref r,
                     xf_dtype *dt, xf_shape *sh)
{
    if (r.node < 0) {
        const xf_value *v = &g->values[m->inputs[r.idx]];
        *dt = v->dtype;
        *sh = v->shape;
        return 1;
    }
    if (!s->done[r.node]) return 0;
    *dt = s->dt[r.node][r.idx];
    *sh = s->sh[r.node][r.idx];
    return 1;
}

/* Generator shape from its consumer `user` reading it at input `slot`, by
 * the one sizing rule the bounded check shares (xf_rule_generator_shape):
 * the consumer's operands at the match, where at the rule's own target
 * shapes (generators not run yet counting as none, as here) it gives the
 * rule's generator its own shape; else the rule's shape. Until 2026-12-01
 * the consumer sized it always, even at the rule's own shapes: the reverse
 * of a rule whose source pool the conv input's channels do not size, or
 * transpose(x) + const_imatrix[1x1] at x 4x4, got a generator no proof saw
 * (review 44a, F2). */
static void generator_from_user(const xf_rs_rule *rr, const xf_graph *g, const xf_match *m,
                                const inst_state *s, int user, int slot, xf_op gop, xf_params *p)
{
    const xf_tgt_node *u = &rr->tgt.nodes[user];
    const xf_graph *dst = &rr->rule.dst;
    xf_dtype dt;
    xf_shape sh[2];
    const xf_shape *own[2] = {NULL, NULL}, *now[2] = {NULL, NULL};
    for (int k = 0; k < 2 && k < u->n_in; k++) {
        xf_pat_ref r = u->in[k];
        if (!ref_shape(g, m, s, r, &dt, &sh[k])) continue;
        now[k] = &sh[k];
        own[k] = r.node < 0 ? &dst->values[dst->inputs[r.idx]].shape
                            : &dst->values[dst->nodes[rr->tgt.nodes[r.node].dst_node].outputs[r.idx]].shape;
    }
    xf_params rule_p = *p;
    xf_rule_generator_shape(gop, &rule_p, u->op, u->n_in, slot, own, now, p);
}

static xf_status fail_node(const xf_rs_rule *rr, int q, xf_status st, xf_error *err)
{
    xf_error_prefix(err, "rule %lld: target operator %d (%s) does not fit the match",
                    (long long)rr->id, q, xf_op_get(rr->tgt.nodes[q].op)->name);
    return st;
}

static xf_status run_generator(const xf_rs_rule *rr, const xf_graph *g, const xf_match *m,
                               inst_state *s, int q, xf_match_target *t, xf_error *err)
{
    const xf_tgt_node *tn = &rr->tgt.nodes[q];
    xf_params p = rr->rule.dst.nodes[tn->dst_node].params;
    if (tn->gen_user >= 0) {
        generator_from_user(rr, g, m, s, tn->gen_user, tn->gen_slot, tn->op, &p);
    } else if (tn->gen_rule >= 0) {
        xf_params_set_shape(&p, &g->values[m->outputs[tn->gen_rule]].shape);
    }
    xf_params_canonical(tn->op, &p);
    t->params[q] = p;
    xf_status st = xf_op_infer(tn->op, &p, 0, NULL, NULL, tn->n_out, s->dt[q], s->sh[q], err);
    if (st != XF_OK) return fail_node(rr, q, st, err);
    s->done[q] = 1;
    return XF_OK;
}

/* Parameters of non-generator target operator q at the bound shapes. */
static xf_status adapt_params(const xf_rs_rule *rr, const xf_graph *g, const xf_match *m, int q,
                              const xf_shape *in0, const inst_state *s, xf_params *out,
                              xf_error *err)
{
    const xf_tgt_node *tn = &rr->tgt.nodes[q];
    const xf_graph *dst = &rr->rule.dst;
    const xf_node *dn = &dst->nodes[tn->dst_node];
    int rule_rank = dn->n_inputs > 0 ? dst->values[dn->inputs[0]].shape.rank : 0;
    int rank = in0 ? in0->rank : 0;
    xf_params rel;
    if (!match_relparams_to_relative(tn->op, &dn->params,
                                  match_relparams_axis_rank(tn->op, &dn->params, rule_rank), &rel) ||
        !match_relparams_to_absolute(tn->op, &rel, match_relparams_axis_rank(tn->op, &rel, rank), out))
        return fail_node(rr, q,
                         XF_FAIL(err, XF_ERR_SHAPE, "its axes do not exist at rank %d", rank),
                         err);
    if (tn->op == XF_OP_SPLIT && in0) {
        int axis = out->axis < 0 ? out->axis + rank : out->axis;
        int all = 1;
        for (int o = 0; o < tn->n_out; o++) all &= tn->split_rule[o] >= 0;
        memset(out->split, 0, sizeof out->split);
        for (int o = 0; o < tn->n_out && all; o++) {
            const xf_shape *ms = &g->values[m->outputs[tn->split_rule[o]]].shape;
            if (ms->rank != rank)
                return fail_node(rr, q,
                                 XF_FAIL(err, XF_ERR_SHAPE,
                                         "matched output %d has rank %d, the split input %d",
                                         tn->split_rule[o], ms->rank, rank),
                                 err);
            out->split[o] = ms->dims[axis];
        }
        const xf_shape *own = &dst->values[dn->inputs[0]].shape;
        int own_axis = xf_norm_axis(dn->params.axis, own->rank);
        if (!all && own_axis >= 0 && !xf_split_equal_parts(&dn->params, own->dims[own_axis])) {
            int64_t sum = 0; /* unequal own sizes: the rule's, where the verifier checks them */
            for (int o = 0; o < tn->n_out; o++) sum += out->split[o] = dn->params.split[o];
            if (sum != in0->dims[axis])
                return fail_node(rr, q,
                                 XF_FAIL(err, XF_ERR_SHAPE,
                                         "the rule's split sizes add up to %lld, not the %lld "
                                         "of its input",
                                         (long long)sum, (long long)in0->dims[axis]),
                                 err);
        } else if (!all) {
            int64_t d = in0->dims[axis];
            if (tn->n_out <= 0 || d % tn->n_out != 0)
                return fail_node(rr, q,
                                 XF_FAIL(err, XF_ERR_SHAPE,
                                         "dimension %lld cannot be split into %d equal parts",
                                         (long long)d, tn->n_out),
                                 err);
            for (int o = 0; o < tn->n_out; o++) out->split[o] = d / tn->n_out;
        }
    }
    if (tn->depthwise && in0 && in0->rank == 4) out->group = (int32_t)in0->dims[1];
    if (tn->op == XF_OP_LAYERNORM) /* the epsilon of the source's layer norms (match.c) */
        for (int k = 0; k < rr->pat.n_nodes; k++)
            if (rr->pat.nodes[k].op == XF_OP_LAYERNORM) {
                out->epsilon = g->nodes[m->nodes[k]].params.epsilon;
                break;
            }
    if (tn->op == XF_OP_RESHAPE && rr->tgt.dims) {
        int v = dn->outputs[0];
        xf_shape to = {dst->values[v].shape.rank, {0}};
        if (!xf_rule_dims_shape(rr->tgt.dims, 1, v, s->symval, &to))
            return fail_node(rr, q,
                             XF_FAIL(err, XF_ERR_SHAPE, "its target shape has no size at this match"),
                             err);
        out->n_shape = to.rank;
        memset(out->shape, 0, sizeof out->shape);
        for (int i = 0; i < to.rank; i++) out->shape[i] = to.dims[i];
    }
    xf_params_canonical(tn->op, out);
    return XF_OK;
}

xf_status match_instantiate_full(const xf_rs_rule *rr, const xf_graph *g,
                                    const xf_graph_index *ix, const xf_match *m,
                                    xf_match_target *t, xf_dtype *out_dt, xf_shape *out_sh,
                                    xf_error *err)
{
    const xf_target_tmpl *tp = &rr->tgt;
    inst_state s;
    xf_status st;
    memset(s.done, 0, sizeof s.done);
    if (tp->dims && (st = bind_dims(rr, g, m, &s, err)) != XF_OK) return st;
    t->n_nodes = tp->n_nodes;
    for (int q = 0; q < tp->n_nodes; q++) {
        const xf_tgt_node *tn = &tp->nodes[q];
        t->op[q] = tn->op;
        t->n_in[q] = tn->n_in;
        if (match_relparams_is_generator(tn->op)) continue; /* at its first consumer */
        for (int k = 0; k < tn->n_in; k++) {
            xf_pat_ref r = tn->in[k];
            if (r.node >= 0 && !s.done[r.node]) {
                st = run_generator(rr, g, m, &s, r.node, t, err);
                if (st != XF_OK) return st;
            }
            ref_shape(g, m, &s, r, &t->in_dtype[q][k], &t->in_shape[q][k]);
        }
        st = adapt_params(rr, g, m, q, tn->n_in > 0 ? &t->in_shape[q][0] : NULL, &s,
                          &t->params[q], err);
        if (st != XF_OK) return st;
        st = xf_op_infer(tn->op, &t->params[q], tn->n_in, t->in_dtype[q], t->in_shape[q],
                         tn->n_out, s.dt[q], s.sh[q], err);
        if (st != XF_OK) return fail_node(rr, q, st, err);
        for (int o = 0; o < tn->n_out; o++)
            if (!match_scalar_kept(&rr->rule.dst, rr->rule.dst.nodes[tn->dst_node].outputs[o],
                                   &s.sh[q][o]))
                return fail_node(rr, q,
                                 XF_FAIL(err, XF_ERR_SHAPE,
                                         "a scalar of the rule is %lld elements here",
                                         (long long)xf_shape_numel(&s.sh[q][o])),
                                 err);
        for (int o = 0; tp->dims && o < tn->n_out; o++)
            if (!xf_rule_dims_agree(tp->dims, 1, rr->rule.dst.nodes[tn->dst_node].outputs[o],
                                    s.symval, &s.sh[q][o]))
                return fail_node(rr, q,
                                 XF_FAIL(err, XF_ERR_SHAPE,
                                         "its output does not agree with the rule's dims"),
                                 err);
        s.done[q] = 1;
    }
    for (int q = 0; q < tp->n_nodes; q++) {
        if (s.done[q]) continue;
        st = run_generator(rr, g, m, &s, q, t, err);
        if (st != XF_OK) return st;
    }
    for (int q = 0; q < tp->n_nodes; q++) {
        const xf_tgt_node *tn = &tp->nodes[q];
        int w = 1;
        for (int k = 0; k < tn->n_in && w; k++) {
            xf_pat_ref r = tn->in[k];
            w = r.node < 0 ? xf_graph_index_weight_only(ix, m->inputs[r.idx])
                           : t->weight_only[r.node];
        }
        t->weight_only[q] = w;
    }
    for (int i = 0; i < rr->pat.n_outputs; i++) ref_shape(g, m, &s, tp->out[i], &out_dt[i], &out_sh[i]);
    return XF_OK;
}

xf_status xf_match_instantiate(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                               const xf_match *m, xf_match_target *t, xf_error *err)
{
    if (!rs || !m || m->rule < 0 || m->rule >= rs->n)
        return XF_FAIL(err, XF_ERR_INVALID, "instantiate: rule %d is not in the rule set",
                       m ? m->rule : -1);
    const xf_rs_rule *rr = &rs->r[m->rule];
    if (m->n_inputs != rr->pat.n_inputs || m->n_outputs != rr->pat.n_outputs)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "instantiate: the match has %d inputs and %d outputs, rule %lld %d and %d",
                       m->n_inputs, m->n_outputs, (long long)rr->id, rr->pat.n_inputs,
                       rr->pat.n_outputs);
    for (int i = 0; i < m->n_inputs; i++)
        if (rr->pat.in_used[i] && (m->inputs[i] < 0 || m->inputs[i] >= g->n_values))
            return XF_FAIL(err, XF_ERR_INVALID, "instantiate: rule input %d is bound to value %d",
                           i, m->inputs[i]);
    for (int i = 0; i < m->n_outputs; i++)
        if (m->outputs[i] < 0 || m->outputs[i] >= g->n_values)
            return XF_FAIL(err, XF_ERR_INVALID, "instantiate: rule output %d is value %d", i,
                           m->outputs[i]);
    xf_dtype dt[XF_MATCH_MAX_OUTPUTS];
    xf_shape sh[XF_MATCH_MAX_OUTPUTS];
    return match_instantiate_full(rr, g, ix, m, t, dt, sh, err);
}
