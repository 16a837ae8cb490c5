/*
 * eval.c — evaluating enumerated graphs in Z_p: the per-worker context
 * (input data of one evaluation, one buffer per node output), running one
 * node or a whole graph, and the class key of a graph: a hash of the sorted
 * multiset of its output hashes and of the set of inputs it reads, so an
 * output set {a, b} matches {b, a} and graphs over different inputs never
 * share a class.
 */
#include "enumerate_internal.h"

#include <stdlib.h>
#include <string.h>

xf_status en_make_inputs(const xf_enum_config *cfg, int which, evalue *inputs, xf_error *err)
{
    memset(inputs, 0, sizeof(evalue) * XF_ENUM_MAX_INPUTS);
    for (int i = 0; i < cfg->n_inputs; i++) {
        evalue *v = &inputs[i];
        v->shape = cfg->inputs[i].shape;
        int64_t n = xf_shape_numel(&v->shape);
        v->d = xf_malloc(sizeof(uint64_t) * (size_t)n);
        if (!v->d) {
            for (int j = 0; j < i; j++) {
                xf_free(inputs[j].d);
                inputs[j].d = NULL; /* the caller's teardown frees them again */
            }
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for input %s",
                           cfg->inputs[i].name);
        }
        en_fp_input_fill(cfg->seed, which, i, v->d, n);
        fp_tensor t = {v->shape, v->d};
        v->hash = en_fp_tensor_hash(&t);
    }
    return XF_OK;
}

xf_status en_evalctx_init(evalctx *ctx, const xf_enum_config *cfg, const evalue *inputs, int which,
                       xf_error *err)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->cfg = cfg;
    en_fp_keys_make(&ctx->keys, cfg->seed, which);
    memcpy(ctx->in, inputs, sizeof ctx->in);
    size_t per = (size_t)cfg->max_numel;
    ctx->pool = xf_malloc(sizeof(uint64_t) * per * XF_ENUM_MAX_OPS * NODE_OUTS);
    if (!ctx->pool)
        return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for evaluation buffers");
    for (int j = 0; j < XF_ENUM_MAX_OPS; j++)
        for (int k = 0; k < NODE_OUTS; k++)
            ctx->node[j][k].d = ctx->pool + per * (size_t)(NODE_OUTS * j + k);
    return XF_OK;
}

void en_evalctx_free(evalctx *ctx)
{
    xf_free(ctx->pool);
    ctx->pool = NULL;
}

const evalue *en_evalctx_ref(const evalctx *ctx, int ref)
{
    if (REF_IS_INPUT(ref)) return &ctx->in[ref];
    return &ctx->node[REF_NODE_OF(ref)][REF_OUT_OF(ref)];
}

void en_evalctx_run_node(evalctx *ctx, const egraph *g, int j, const xf_params *params,
                      const xf_shape *out_shapes)
{
    const enode *n = &g->nodes[j];
    const xf_enum_opvar *v = &ctx->cfg->ops[n->var];
    fp_tensor ins[MAX_NODE_INPUTS], outs[NODE_OUTS];
    const fp_tensor *inp[MAX_NODE_INPUTS];
    for (int i = 0; i < n->n_in; i++) {
        const evalue *e = en_evalctx_ref(ctx, n->in[i]);
        ins[i].shape = e->shape;
        ins[i].d = e->d;
        inp[i] = &ins[i];
    }
    for (int k = 0; k < n->n_out; k++) {
        ctx->node[j][k].shape = out_shapes[k];
        outs[k].shape = out_shapes[k];
        outs[k].d = ctx->node[j][k].d;
    }
    en_fp_op_run(&ctx->keys, v->op, params, n->n_in, inp, n->n_out, outs);
    for (int k = 0; k < n->n_out; k++) ctx->node[j][k].hash = en_fp_tensor_hash(&outs[k]);
}

int en_evalctx_eval_node(evalctx *ctx, const egraph *g, int j)
{
    const enode *n = &g->nodes[j];
    xf_shape in_sh[MAX_NODE_INPUTS], out_sh[NODE_OUTS];
    for (int i = 0; i < n->n_in; i++) in_sh[i] = en_evalctx_ref(ctx, n->in[i])->shape;
    xf_params p;
    int n_out;
    if (!en_instantiate(ctx->cfg, &ctx->cfg->ops[n->var], n->n_in, in_sh, &p, &n_out, out_sh))
        return 0;
    en_evalctx_run_node(ctx, g, j, &p, out_sh);
    return 1;
}

uint64_t en_class_key(const uint64_t *out_hashes, int n, uint32_t in_mask)
{
    uint64_t h[MAX_GRAPH_OUTPUTS + 2];
    for (int i = 0; i < n; i++) {
        uint64_t v = out_hashes[i];
        int k = i;
        while (k > 0 && h[k - 1] > v) h[k] = h[k - 1], k--;
        h[k] = v;
    }
    uint64_t key = en_fp_mix(en_fp_mix(0xC1A55u, in_mask), (uint64_t)n);
    for (int i = 0; i < n; i++) key = en_fp_mix(key, h[i]);
    return key ? key : 1;
}

int en_egraph_same_prefix(const egraph *a, const egraph *b)
{
    int n = 0;
    while (n < a->n_nodes && n < b->n_nodes && a->nodes[n].var == b->nodes[n].var &&
           a->nodes[n].n_in == b->nodes[n].n_in &&
           memcmp(a->nodes[n].in, b->nodes[n].in, a->nodes[n].n_in) == 0)
        n++;
    return n;
}

int en_evalctx_run_graph(evalctx *ctx, egraph *held, const egraph *g, uint8_t *outs, uint32_t *in_mask,
                      uint64_t *fp)
{
    int from = en_egraph_same_prefix(held, g);
    *held = *g;
    for (int j = held->n_nodes = from; j < g->n_nodes; j++, held->n_nodes = j)
        if (!en_evalctx_eval_node(ctx, g, j)) return -1;
    uint32_t mask = en_egraph_input_mask(g);
    int n = en_egraph_outputs(g, outs);
    uint64_t h[MAX_GRAPH_OUTPUTS];
    for (int i = 0; i < n; i++) h[i] = en_evalctx_ref(ctx, outs[i])->hash;
    /* sort outputs by hash: aligned outputs of equal graphs */
    for (int i = 1; i < n; i++) {
        uint64_t hv = h[i];
        uint8_t ov = outs[i];
        int k = i;
        while (k > 0 && h[k - 1] > hv) h[k] = h[k - 1], outs[k] = outs[k - 1], k--;
        h[k] = hv, outs[k] = ov;
    }
    *in_mask = mask;
    *fp = en_class_key(h, n, mask);
    return n;
}
