/*
 * confirm.c — turning a fingerprint collision into a candidate rule. The
 * colliding graph (src) and its class representative (dst) are evaluated
 * again in Z_p on independent inputs with independent PRF keys, output by
 * output in the alignment the first evaluation gave; then both are built as
 * xf_graphs (axes stored negative, as rules keep them) and run by the
 * float32 reference interpreter on random inputs. Only a pair that agrees
 * both times becomes a candidate.
 */
#include "enumerate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int uses_axis(xf_op op)
{
    return op == XF_OP_CONCAT || op == XF_OP_SPLIT || op == XF_OP_SOFTMAX || op == XF_OP_LAYERNORM;
}

xf_status en_egraph_to_xf(const xf_enum_config *cfg, const egraph *g, uint32_t in_mask,
                       const uint8_t *outs, int n_outs, xf_graph *out, xf_error *err)
{
    int vid[N_REFS];
    xf_graph_init(out);
    xf_status st = XF_OK;
    for (int i = 0; i < cfg->n_inputs && st == XF_OK; i++) {
        if (!(in_mask & (1u << i))) continue;
        vid[i] = xf_graph_add_input(out, cfg->inputs[i].name, XF_F32, &cfg->inputs[i].shape, err);
        if (vid[i] < 0) st = err ? err->code : XF_ERR_INTERNAL;
    }
    for (int j = 0; j < g->n_nodes && st == XF_OK; j++) {
        const enode *n = &g->nodes[j];
        const xf_enum_opvar *v = &cfg->ops[n->var];
        int ins[MAX_NODE_INPUTS];
        xf_shape in_sh[MAX_NODE_INPUTS], out_sh[NODE_OUTS];
        for (int i = 0; i < n->n_in; i++) {
            ins[i] = vid[n->in[i]];
            in_sh[i] = out->values[ins[i]].shape;
        }
        xf_params p;
        int n_out;
        if (!en_instantiate(cfg, v, n->n_in, in_sh, &p, &n_out, out_sh)) {
            st = XF_FAIL(err, XF_ERR_INTERNAL, "enumerate: variant %s no longer applies", v->name);
            break;
        }
        int rank = in_sh[0].rank;
        if (uses_axis(v->op) && p.axis >= 0) p.axis -= rank;
        if (v->op == XF_OP_REDUCE_MEAN)
            for (int a = 0; a < p.n_axes; a++)
                if (p.axes[a] >= 0) p.axes[a] -= rank;
        int node = xf_graph_add_node(out, v->op, &p, ins, n->n_in, n_out, NULL, err);
        if (node < 0) {
            st = err ? err->code : XF_ERR_INTERNAL;
            break;
        }
        for (int k = 0; k < n_out; k++) vid[REF_NODE(j, k)] = out->nodes[node].outputs[k];
    }
    for (int k = 0; k < n_outs && st == XF_OK; k++) st = xf_graph_mark_output(out, vid[outs[k]], err);
    if (st != XF_OK) xf_graph_free(out);
    return st;
}

/* Largest |a - b| over all outputs, or -1 when an output differs beyond tolerance. */
static double float_check(const xf_rule *r, uint64_t seed, xf_error *err, xf_status *st)
{
    int ni = r->src.n_inputs, no = r->src.n_outputs;
    xf_tensor *in = xf_calloc((size_t)ni + 1, sizeof *in);
    xf_tensor *oa = xf_calloc((size_t)no, sizeof *oa), *ob = xf_calloc((size_t)no, sizeof *ob);
    double worst = 0;
    *st = XF_OK;
    if (!in || !oa || !ob) {
        *st = XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for the float32 check");
        goto out;
    }
    *st = xf_graph_random_inputs(&r->src, seed, in, err);
    if (*st == XF_OK) *st = xf_interp_run(&r->src, in, ni, oa, err);
    if (*st == XF_OK) *st = xf_interp_run(&r->dst, in, ni, ob, err);
    for (int k = 0; *st == XF_OK && k < no && worst >= 0; k++) {
        const float *a = oa[k].data, *b = ob[k].data;
        int64_t n = xf_shape_numel(&ob[k].shape);
        double scale = 1, diff = 0;
        for (int64_t i = 0; i < n; i++) {
            if (isnan(a[i]) && isnan(b[i])) continue; /* both undefined there (a power of a
                                                         negative base): agreement */
            if (fabs(b[i]) > scale) scale = fabs(b[i]);
            double d = fabs((double)a[i] - (double)b[i]);
            if (!(d <= diff)) diff = d; /* NaN on one side counts as a difference */
        }
        /* XF_TOL_RULE relative to the output's largest magnitude (at least 1):
         * the largest difference agrees with none within that bound */
        xf_tolerance tol = {0, XF_TOL_RULE.rtol * scale};
        if (!xf_value_agree(diff, 0, tol)) worst = -1;
        else if (diff > worst) worst = diff;
    }
out:
    for (int i = 0; in && i < ni; i++) xf_tensor_free(&in[i]);
    for (int k = 0; oa && ob && k < no; k++) {
        xf_tensor_free(&oa[k]);
        xf_tensor_free(&ob[k]);
    }
    xf_free(in);
    xf_free(oa);
    xf_free(ob);
    return worst;
}

xf_status en_confirmer_init(confirmer *c, const xf_enum_config *cfg, const evalue *in0,
                         const evalue *in1, xf_error *err)
{
    memset(c, 0, sizeof *c);
    xf_status st = XF_OK;
    for (int w = 0; w < 2 && st == XF_OK; w++)
        for (int side = 0; side < 2 && st == XF_OK; side++)
            st = en_evalctx_init(&c->ev[w][side], cfg, w == 0 ? in0 : in1, w, err);
    return st;
}

void en_confirmer_free(confirmer *c)
{
    for (int w = 0; w < 2; w++)
        for (int side = 0; side < 2; side++) en_evalctx_free(&c->ev[w][side]);
}

confirm_result en_confirm(const xf_enum_config *cfg, confirmer *c, const egraph *src,
                            const egraph *dst, uint64_t fp, xf_enum_candidate *cand,
                            xf_error *err)
{
    uint8_t so[MAX_GRAPH_OUTPUTS], dout[MAX_GRAPH_OUTPUTS], tmp[MAX_GRAPH_OUTPUTS];
    uint32_t m1;
    uint64_t fp1;
    /* output count and inputs read are part of the class key both share:
     * structural, no evaluation needed */
    int ns = en_egraph_outputs(src, so), nd = en_egraph_outputs(dst, dout);
    uint32_t sm = en_egraph_input_mask(src), dm = en_egraph_input_mask(dst);
    if (ns != nd || sm != dm) return CONFIRM_SECOND;
    if (ns > 1) { /* the first evaluation again, for the alignment of the outputs */
        uint64_t sfp, dfp;
        ns = en_evalctx_run_graph(&c->ev[0][0], &c->held[0][0], src, so, &sm, &sfp);
        nd = en_evalctx_run_graph(&c->ev[0][1], &c->held[0][1], dst, dout, &dm, &dfp);
        if (ns < 0 || nd < 0) {
            XF_FAIL(err, XF_ERR_INTERNAL, "enumerate: a collision's graphs do not evaluate");
            return CONFIRM_ERROR;
        }
        if (ns != nd || sm != dm || sfp != dfp || sfp != fp) return CONFIRM_SECOND;
    }
    evalctx *s1 = &c->ev[1][0], *d1 = &c->ev[1][1];
    if (en_evalctx_run_graph(s1, &c->held[1][0], src, tmp, &m1, &fp1) < 0) return CONFIRM_SECOND;
    if (en_evalctx_run_graph(d1, &c->held[1][1], dst, tmp, &m1, &fp1) < 0) return CONFIRM_SECOND;
    for (int k = 0; k < ns; k++)
        if (en_evalctx_ref(d1, dout[k])->hash != en_evalctx_ref(s1, so[k])->hash) return CONFIRM_SECOND;

    xf_rule_init(&cand->rule);
    xf_status st = en_egraph_to_xf(cfg, src, sm, so, ns, &cand->rule.src, err);
    if (st == XF_OK) st = en_egraph_to_xf(cfg, dst, dm, dout, nd, &cand->rule.dst, err);
    double worst = 0;
    if (st == XF_OK) worst = float_check(&cand->rule, cfg->seed, err, &st);
    if (st != XF_OK || worst < 0) {
        xf_rule_free(&cand->rule);
        return st != XF_OK ? CONFIRM_ERROR : CONFIRM_FLOAT;
    }
    cand->rule.fingerprint = fp;
    cand->src_ops = src->n_nodes;
    cand->dst_ops = dst->n_nodes;
    cand->float_max_abs = worst;
    return CONFIRM_OK;
}
