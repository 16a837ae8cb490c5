/*
 * test_agent_layernorm.c — the layer-norm fusion of xf_agent_prepare
 * (agent/fuse_layernorm.c): a decomposed LayerNorm (ReduceMean, Sub, Pow or
 * Mul(d, d), ReduceMean, Add eps, Sqrt, Div, Mul gamma, Add beta over the
 * last axis) becomes one layernorm node with the chain's eps, gamma and
 * beta, taking over the chain's last value (name, graph-output position),
 * computing the same function; without gamma/beta a ones scale is made.
 * Chains that are not exactly a layer norm stay as they are: an
 * intermediate that is a graph output or has another reader, a reduction
 * over another axis, an exponent other than 2, a non-constant gamma; and
 * nothing fuses with the option off. A
 * modelzoo BERT (decomposed layer norms, 2·layers + 1 of them) is fused
 * throughout, computes the same outputs, and the finished graph exports as
 * ONNX LayerNormalization (opset 17) and re-imports equal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "testutil.h"

enum { C = 6 };

typedef struct ln_opts {
    int mul_square;  /* Mul(d, d) instead of Pow(d, 2) */
    int affine;      /* 0: ends at the Div; 1: Mul gamma; 2: Mul gamma, Add beta */
    int axis;        /* reduction axis of both ReduceMeans */
    float exponent;  /* of the Pow */
    int gamma_input; /* gamma a graph input instead of a constant */
    int leak_mean;   /* the mean is also a graph output */
    int extra_reader; /* the centred value is also read by a relu (a graph output) */
} ln_opts;

static ln_opts plain(void)
{
    return (ln_opts){0, 2, -1, 2.0f, 0, 0, 0};
}

static int node1(xf_graph *g, xf_op op, const xf_params *p, const int *in, int n, const char *name)
{
    xf_error err;
    int idx = xf_graph_add_node(g, op, p, in, n, 1, name, &err);
    ck_assert_msg(idx >= 0, "%s: %s", name, err.msg);
    return g->nodes[idx].outputs[0];
}


/* x [2,3,C] -> decomposed layer norm -> "y" (graph output). */
static void build(xf_graph *g, const ln_opts *o)
{
    xf_graph_init(g);
    xf_error err;
    int64_t xd[3] = {2, 3, C}, cd[1] = {C};
    xf_shape xs = xf_shape_make(3, xd), cs = xf_shape_make(1, cd);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    xf_params mean = xf_params_default();
    mean.n_axes = 1;
    mean.axes[0] = o->axis;
    mean.keepdims = 1;
    int mu = node1(g, XF_OP_REDUCE_MEAN, &mean, &x, 1, "ln.mean");
    int in[2] = {x, mu};
    int d = node1(g, XF_OP_SUB, NULL, in, 2, "ln.sub");
    int sq;
    if (o->mul_square) {
        int dd[2] = {d, d};
        sq = node1(g, XF_OP_MUL, NULL, dd, 2, "ln.square");
    } else {
        int pw[2] = {d, xf_test_scalar(g, "ln.two", o->exponent)};
        sq = node1(g, XF_OP_POW, NULL, pw, 2, "ln.pow");
    }
    int var = node1(g, XF_OP_REDUCE_MEAN, &mean, &sq, 1, "ln.variance");
    int ve[2] = {xf_test_scalar(g, "ln.eps", 1e-5f), var}; /* eps first: either order works */
    int vareps = node1(g, XF_OP_ADD, NULL, ve, 2, "ln.add_eps");
    int sd = node1(g, XF_OP_SQRT, NULL, &vareps, 1, "ln.sqrt");
    int dv[2] = {d, sd};
    int y = node1(g, XF_OP_DIV, NULL, dv, 2, "ln.div");
    if (o->affine >= 1) {
        int gamma = o->gamma_input ? xf_graph_add_input(g, "gamma", XF_F32, &cs, &err)
                                   : xf_test_weight(g, "ln.weight", 1, cd, 3);
        int mg[2] = {gamma, y};
        y = node1(g, XF_OP_MUL, NULL, mg, 2, "ln.mul");
    }
    if (o->affine >= 2) {
        int ab[2] = {y, xf_test_weight(g, "ln.bias", 1, cd, 4)};
        y = node1(g, XF_OP_ADD, NULL, ab, 2, "ln.add");
    }
    ck_assert_ptr_nonnull(g->values[y].name);
    ck_assert_int_eq(xf_graph_mark_output(g, y, &err), XF_OK);
    if (o->leak_mean) ck_assert_int_eq(xf_graph_mark_output(g, mu, &err), XF_OK);
    if (o->extra_reader)
        ck_assert_int_eq(xf_graph_mark_output(g, node1(g, XF_OP_RELU, NULL, &d, 1, "relu"), &err),
                         XF_OK);
}


/* Prepares the model of o; returns how many layer norms were fused, after
 * checking the prepared graph is valid and computes the same function. */
static int prepare_fused(const ln_opts *o, xf_graph *work)
{
    xf_graph model;
    xf_error err;
    build(&model, o);
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&model, NULL, work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(work, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.fused_layernorms, xf_test_count_op(work, XF_OP_LAYERNORM));
    ck_assert_int_eq(work->n_outputs, model.n_outputs);
    xf_test_expect_same_function(&model, work, 5, 1e-5);
    xf_graph_free(&model);
    return ps.fused_layernorms;
}

START_TEST(decomposed_chain_becomes_one_layernorm)
{
    ln_opts o = plain();
    xf_graph work;
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    /* the layer norm, and its bias added after it (the two-input layer
     * norm of the rules; finishing fuses the bias back) */
    ck_assert_int_eq(work.n_nodes, 2);
    int li = work.nodes[0].op == XF_OP_LAYERNORM ? 0 : 1;
    const xf_node *n = &work.nodes[li], *add = &work.nodes[1 - li];
    ck_assert_int_eq(n->op, XF_OP_LAYERNORM);
    ck_assert_int_eq(n->n_inputs, 2);
    ck_assert_float_eq(n->params.epsilon, 1e-5f);
    ck_assert_str_eq(work.values[n->inputs[1]].name, "ln.weight");
    ck_assert_int_eq(add->op, XF_OP_ADD);
    ck_assert_str_eq(work.values[add->inputs[1]].name, "ln.bias");
    /* the chain's last value, name and output position kept */
    ck_assert_int_eq(work.outputs[0], add->outputs[0]);
    ck_assert_str_eq(work.values[work.outputs[0]].name, "ln.add");
    xf_graph fin;
    xf_error err;
    ck_assert_msg(xf_agent_finish(&work, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(fin.n_nodes, 1);
    ck_assert_int_eq(fin.nodes[0].op, XF_OP_LAYERNORM);
    ck_assert_int_eq(fin.nodes[0].n_inputs, 3);
    ck_assert_str_eq(fin.values[fin.nodes[0].inputs[2]].name, "ln.bias");
    ck_assert_str_eq(fin.values[fin.outputs[0]].name, "ln.add");
    xf_graph_free(&fin);
    xf_graph_free(&work);
}
END_TEST

START_TEST(variants_fuse)
{
    xf_graph work;
    ln_opts o = plain();
    o.mul_square = 1;
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    ck_assert_int_eq(work.n_nodes, 2); /* and its bias add */
    xf_graph_free(&work);
    o = plain();
    o.affine = 1; /* gamma, no beta */
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    ck_assert_int_eq(work.nodes[0].n_inputs, 2);
    xf_graph_free(&work);
    o = plain();
    o.affine = 0; /* neither: a ones scale is made */
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    ck_assert_int_eq(work.n_nodes, 1);
    const xf_value *scale = &work.values[work.nodes[0].inputs[1]];
    ck_assert_int_eq(scale->kind, XF_VALUE_CONST);
    for (int i = 0; i < C; i++) ck_assert_float_eq(((const float *)scale->data)[i], 1.0f);
    ck_assert_str_eq(work.values[work.outputs[0]].name, "ln.div");
    xf_graph_free(&work);
    o = plain();
    o.axis = 2; /* the last axis, counted from the front */
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    xf_graph_free(&work);
}
END_TEST

START_TEST(near_misses_stay)
{
    xf_graph work;
    ln_opts o = plain();
    { /* the fusion turned off */
        xf_graph model;
        xf_error err;
        build(&model, &o);
        xf_prepare_options po = xf_prepare_options_default();
        po.fuse_layernorm = 0;
        ck_assert_msg(xf_agent_prepare(&model, &po, &work, NULL, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_test_count_op(&work, XF_OP_LAYERNORM), 0);
        ck_assert_int_eq(work.n_nodes, model.n_nodes);
        xf_graph_free(&work);
        xf_graph_free(&model);
    }
    o.axis = 1; /* not the last axis */
    ck_assert_int_eq(prepare_fused(&o, &work), 0);
    xf_graph_free(&work);
    o = plain();
    o.exponent = 3.0f;
    ck_assert_int_eq(prepare_fused(&o, &work), 0);
    xf_graph_free(&work);
    o = plain();
    o.gamma_input = 1; /* gamma not a constant: fused up to the div only */
    ck_assert_int_eq(prepare_fused(&o, &work), 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_MUL), 1);
    xf_graph_free(&work);
    o = plain();
    o.leak_mean = 1;
    ck_assert_int_eq(prepare_fused(&o, &work), 0);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_REDUCE_MEAN), 2);
    xf_graph_free(&work);
    o = plain();
    o.extra_reader = 1;
    ck_assert_int_eq(prepare_fused(&o, &work), 0);
    xf_graph_free(&work);
}
END_TEST

START_TEST(modelzoo_bert_fuses_every_layernorm)
{
    xf_graph model, work, fin;
    xf_error err;
    xf_test_modelzoo("bert", "--layers 2 --hidden 32 --heads 2 --seq 8", "ln_bert", &model);
    ck_assert_int_eq(xf_test_count_op(&model, XF_OP_LAYERNORM), 0);
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.fused_layernorms, 2 * 2 + 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_LAYERNORM), 5);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_SQRT), 0);
    ck_assert_int_eq(ps.fused_gelus, 2); /* and the FFNs' GELUs, 5 nodes to 1 each */
    ck_assert_int_eq(work.n_nodes, model.n_nodes - 5 * 8 + 5 - 2 * 4); /* each with its bias add */
    xf_test_expect_same_function(&model, &work, 3, 1e-4);
    xf_finish_stats fs;
    ck_assert_msg(xf_agent_finish(&work, &fin, &fs, &err) == XF_OK, "%s", err.msg);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(xf_onnx_save_buffer(&fin, &buf, &len, &err) == XF_OK, "%s", err.msg);
    xf_graph back;
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "fused", NULL, NULL, &back, &err) == XF_OK, "%s",
                  err.msg);
    free(buf);
    ck_assert_int_eq(back.opset, 17);
    ck_assert_int_eq(xf_test_count_op(&back, XF_OP_LAYERNORM), 5);
    xf_test_expect_same_function(&model, &back, 3, 1e-4);
    xf_graph_free(&back);
    xf_graph_free(&fin);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_layernorm");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, decomposed_chain_becomes_one_layernorm);
    tcase_add_test(t, variants_fuse);
    tcase_add_test(t, near_misses_stay);
    tcase_add_test(t, modelzoo_bert_fuses_every_layernorm);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
