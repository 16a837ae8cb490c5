/*
 * test_agent_finish.c — xf_agent_prepare and xf_agent_finish (agent/):
 * conv biases are split off into [C,1,1] adds that borrow the model's data
 * and fused back at finish; weight-only subgraphs (a concat of two weights,
 * a chain through a constant generator) are evaluated into one initializer;
 * unused constants are dropped; opaque nodes, names and outputs survive; the
 * finished graph owns only the constants it made and borrows every other
 * from the working graph (no copy of the weights), exports to ONNX,
 * re-imports and computes the same function. The
 * shared resnet18 model (XF_SHARED_DIR) makes the round trip when present.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

static int add_node1(xf_graph *g, xf_op op, const xf_params *p, const int *in, int n,
                     const char *name)
{
    xf_error err;
    int idx = xf_graph_add_node(g, op, p, in, n, 1, name, &err);
    ck_assert_msg(idx >= 0, "%s", err.msg);
    return g->nodes[idx].outputs[0];
}

static xf_params conv_params(int k, int pad, int act)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = k;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = pad;
    p.group = 1;
    p.activation = act;
    return p;
}


static int count_consts(const xf_graph *g)
{
    int n = 0;
    for (int v = 0; v < g->n_values; v++) n += g->values[v].kind == XF_VALUE_CONST;
    return n;
}

/* Every constant of fin is one it made (owned) or one of work's very
 * buffers (borrowed, not copied); *n_borrowed counts the latter. */
static void expect_no_copies(const xf_graph *fin, const xf_graph *work, int *n_borrowed)
{
    *n_borrowed = 0;
    for (int v = 0; v < fin->n_values; v++) {
        const xf_value *c = &fin->values[v];
        if (c->kind != XF_VALUE_CONST || !c->borrowed) continue;
        int found = 0;
        for (int u = 0; u < work->n_values && !found; u++)
            found = work->values[u].kind == XF_VALUE_CONST && work->values[u].data == c->data;
        ck_assert_msg(found, "constant '%s' borrows a buffer the working graph does not hold",
                      c->name ? c->name : "?");
        (*n_borrowed)++;
    }
}

/* Exports g, re-imports it and checks the re-imported model computes what g does. */
static void expect_export_roundtrip(const xf_graph *g, double tol)
{
    xf_error err;
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(xf_onnx_save_buffer(g, &buf, &len, &err) == XF_OK, "%s", err.msg);
    xf_graph back;
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "finished", NULL, NULL, &back, &err) == XF_OK,
                  "%s", err.msg);
    free(buf);
    xf_test_expect_same_function(g, &back, 7, tol);
    xf_graph_free(&back);
}

/* x[1,3,8,8] -> conv3x3+bias -> relu -> conv1x1+bias (fused relu) -> "y";
 * the first conv's output is also graph output "feat". */
static void build_conv_model(xf_graph *g)
{
    xf_graph_init(g);
    int64_t xd[4] = {1, 3, 8, 8}, w1d[4] = {4, 3, 3, 3}, b1d[1] = {4}, w2d[4] = {2, 4, 1, 1},
            b2d[1] = {2};
    xf_shape xs = xf_shape_make(4, xd);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, NULL);
    int w1 = xf_test_weight(g, "w1", 4, w1d, 1), b1 = xf_test_weight(g, "b1", 1, b1d, 2);
    int w2 = xf_test_weight(g, "w2", 4, w2d, 3), b2 = xf_test_weight(g, "b2", 1, b2d, 4);
    xf_params p1 = conv_params(3, 1, XF_ACT_NONE), p2 = conv_params(1, 0, XF_ACT_RELU);
    int in1[3] = {x, w1, b1};
    int c1 = add_node1(g, XF_OP_CONV, &p1, in1, 3, "feat");
    int r = add_node1(g, XF_OP_RELU, NULL, &c1, 1, "relu");
    int in2[3] = {r, w2, b2};
    int c2 = add_node1(g, XF_OP_CONV, &p2, in2, 3, "y");
    ck_assert_int_eq(xf_graph_mark_output(g, c2, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(g, c1, NULL), XF_OK);
}

/* ------------------------------------------------------------------ tests */

START_TEST(prepare_splits_conv_bias)
{
    xf_graph model, work;
    xf_error err;
    build_conv_model(&model);
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&work, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_CONV), 2);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_ADD), 2);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_RELU), 2); /* the fused relu became a node */
    for (int i = 0; i < work.n_nodes; i++)
        if (work.nodes[i].op == XF_OP_CONV) {
            ck_assert_int_eq(work.nodes[i].n_inputs, 2);
            ck_assert_int_eq(work.nodes[i].params.activation, XF_ACT_NONE);
        }
    /* every add reads a [C,1,1] constant borrowing the model's bias data */
    int seen = 0;
    for (int i = 0; i < work.n_nodes; i++) {
        const xf_node *n = &work.nodes[i];
        if (n->op != XF_OP_ADD) continue;
        const xf_value *k = &work.values[n->inputs[1]];
        ck_assert_int_eq(k->kind, XF_VALUE_CONST);
        ck_assert_int_eq(k->borrowed, 1);
        ck_assert_int_eq(k->shape.rank, 3);
        ck_assert_int_eq(k->shape.dims[1], 1);
        ck_assert_int_eq(k->shape.dims[2], 1);
        int found = 0;
        for (int v = 0; v < model.n_values; v++)
            found |= model.values[v].kind == XF_VALUE_CONST && model.values[v].data == k->data &&
                     model.values[v].shape.rank == 1 &&
                     model.values[v].shape.dims[0] == k->shape.dims[0];
        ck_assert_msg(found, "bias [C,1,1] does not share the model's bias data");
        seen++;
    }
    ck_assert_int_eq(seen, 2);
    /* graph outputs keep their names */
    ck_assert_str_eq(work.values[work.outputs[0]].name, "y");
    ck_assert_str_eq(work.values[work.outputs[1]].name, "feat");
    xf_test_expect_same_function(&model, &work, 7, 1e-5);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(finish_fuses_bias_back_and_owns_data)
{
    xf_graph model, work, fin;
    xf_error err;
    xf_finish_stats st;
    build_conv_model(&model);
    ck_assert_int_eq(xf_agent_prepare(&model, NULL, &work, NULL, &err), XF_OK);
    ck_assert_msg(xf_agent_finish(&work, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.fused_bias, 2);
    ck_assert_int_eq(st.folded_nodes, 0);
    ck_assert_int_eq(st.removed_values, 4); /* two 1-D biases and two [C,1,1] views */
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_ADD), 0);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_CONV), 2);
    for (int i = 0; i < fin.n_nodes; i++)
        if (fin.nodes[i].op == XF_OP_CONV) {
            ck_assert_int_eq(fin.nodes[i].n_inputs, 3);
            const xf_value *b = &fin.values[fin.nodes[i].inputs[2]];
            ck_assert_int_eq(b->shape.rank, 1);
            ck_assert(strcmp(b->name, "b1") == 0 || strcmp(b->name, "b2") == 0);
        }
    ck_assert_int_eq(count_consts(&fin), 4);
    ck_assert_str_eq(fin.values[fin.outputs[0]].name, "y");
    ck_assert_str_eq(fin.values[fin.outputs[1]].name, "feat");
    int borrowed = 0;
    expect_no_copies(&fin, &work, &borrowed);
    ck_assert_int_eq(borrowed, 2); /* the two kernels; the biases are made again, 1-D */
    xf_test_expect_same_function(&model, &fin, 7, 1e-5);
    expect_export_roundtrip(&fin, 1e-5);
    xf_graph_free(&fin);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(finish_folds_weight_subgraphs)
{
    /* y = x @ (concat(w1, w2, axis 1) * ones[4,8]) + x @ w3: the concat and
     * the mul through the ones generator fold into one initializer */
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[2] = {2, 4}, w1d[2] = {4, 3}, w2d[2] = {4, 5}, w3d[2] = {4, 8};
    xf_shape xs = xf_shape_make(2, xd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    int w1 = xf_test_weight(&g, "w1", 2, w1d, 11), w2 = xf_test_weight(&g, "w2", 2, w2d, 12);
    int w3 = xf_test_weight(&g, "w3", 2, w3d, 13);
    xf_params pc = xf_params_default();
    pc.axis = 1;
    int cin[2] = {w1, w2};
    int cat = add_node1(&g, XF_OP_CONCAT, &pc, cin, 2, "cat");
    xf_params po = xf_params_default();
    po.n_shape = 2;
    po.shape[0] = 4;
    po.shape[1] = 8;
    int ones = add_node1(&g, XF_OP_CONST_ONES, &po, NULL, 0, "ones");
    int min[2] = {cat, ones};
    int w = add_node1(&g, XF_OP_MUL, NULL, min, 2, "wfold");
    int m1in[2] = {x, w}, m2in[2] = {x, w3};
    int y1 = add_node1(&g, XF_OP_MATMUL, NULL, m1in, 2, "mm1");
    int y2 = add_node1(&g, XF_OP_MATMUL, NULL, m2in, 2, "mm2");
    int ain[2] = {y1, y2};
    int y = add_node1(&g, XF_OP_ADD, NULL, ain, 2, "y");
    ck_assert_int_eq(xf_graph_mark_output(&g, y, NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.folded_nodes, 3);
    ck_assert_int_eq(st.fused_bias, 0);
    ck_assert_int_eq(st.removed_values, 4); /* w1, w2, the concat and the ones */
    ck_assert_int_eq(fin.n_nodes, 3);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_CONCAT), 0);
    ck_assert_int_eq(count_consts(&fin), 2);
    /* the folded initializer is named after its node and holds concat(w1, w2) */
    int found = 0;
    for (int v = 0; v < fin.n_values; v++) {
        const xf_value *val = &fin.values[v];
        if (val->kind != XF_VALUE_CONST || strcmp(val->name, "wfold") != 0) continue;
        found = 1;
        ck_assert_int_eq(val->shape.dims[0], 4);
        ck_assert_int_eq(val->shape.dims[1], 8);
        const float *f = val->data, *a = g.values[w1].data, *b = g.values[w2].data;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 8; c++)
                ck_assert_float_eq(f[r * 8 + c], c < 3 ? a[r * 3 + c] : b[r * 5 + c - 3]);
    }
    ck_assert_msg(found, "no initializer named 'wfold'");
    int borrowed = 0;
    expect_no_copies(&fin, &g, &borrowed);
    ck_assert_int_eq(borrowed, 1); /* w3; the folded one is new */
    xf_test_expect_same_function(&g, &fin, 7, 1e-5);
    expect_export_roundtrip(&fin, 1e-5);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

START_TEST(finish_keeps_what_it_must)
{
    /* conv + per-channel add where the conv output has a second use, an add
     * of a [C] constant (broadcasts over W, not per channel), and an opaque
     * node on constants: nothing fuses, nothing folds */
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[4] = {1, 4, 4, 4}, wd[4] = {4, 4, 1, 1}, kd[3] = {4, 1, 1}, vd[1] = {4};
    xf_shape xs = xf_shape_make(4, xd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    int w = xf_test_weight(&g, "w", 4, wd, 21), k = xf_test_weight(&g, "k", 3, kd, 22);
    int v4 = xf_test_weight(&g, "v", 1, vd, 23);
    xf_params pc = conv_params(1, 0, XF_ACT_NONE);
    int cin[2] = {x, w};
    int c = add_node1(&g, XF_OP_CONV, &pc, cin, 2, "c");
    int ain[2] = {c, k};
    int a = add_node1(&g, XF_OP_ADD, NULL, ain, 2, "a");
    int c2 = add_node1(&g, XF_OP_CONV, &pc, cin, 2, "c2");
    int bin[2] = {c2, v4};
    int b = add_node1(&g, XF_OP_ADD, NULL, bin, 2, "b");
    xf_opaque *op = calloc(1, sizeof *op);
    op->op_type = strdup("MyWeightOp");
    op->domain = strdup("custom");
    op->domain_version = 1;
    xf_dtype odt = XF_F32;
    xf_shape osh = g.values[v4].shape;
    int oq = xf_graph_add_opaque(&g, op, &v4, 1, &odt, &osh, 1, "opq", &err);
    ck_assert_int_ge(oq, 0);
    ck_assert_int_eq(xf_graph_mark_output(&g, a, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, c, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, b, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, g.nodes[oq].outputs[0], NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.fused_bias, 0);
    ck_assert_int_eq(st.folded_nodes, 0);
    ck_assert_int_eq(st.removed_values, 0);
    ck_assert_int_eq(fin.n_nodes, g.n_nodes);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_OPAQUE), 1);
    for (int i = 0; i < fin.n_nodes; i++)
        if (fin.nodes[i].op == XF_OP_OPAQUE) {
            ck_assert_str_eq(fin.nodes[i].opaque->op_type, "MyWeightOp");
            ck_assert_str_eq(fin.nodes[i].name, "opq");
        }
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    int borrowed = 0;
    expect_no_copies(&fin, &g, &borrowed);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

/* A class token's broadcast over the batch, Expand(C [1,1,4]) to [3,1,4]
 * concatenated before the tokens, stays a node, and so does one that copies
 * its input (at batch 1): a model written with a symbolic batch needs the
 * node to follow the batch (issue 28, modelzoo ViT); the importer leaves an
 * Expand of a constant only where its target is read from run-time shapes. */
START_TEST(finish_keeps_an_expand_of_a_constant)
{
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[3] = {3, 2, 4}, cd[3] = {1, 1, 4}, kd[2] = {1, 4};
    xf_shape xs = xf_shape_make(3, xd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    int c = xf_test_weight(&g, "C", 3, cd, 31), k = xf_test_weight(&g, "k", 2, kd, 32);
    xf_params pe = xf_params_default();
    pe.n_shape = 3;
    pe.shape[0] = 3, pe.shape[1] = 1, pe.shape[2] = 4;
    int cls = add_node1(&g, XF_OP_EXPAND, &pe, &c, 1, "cls");
    xf_params pk = xf_params_default();
    pk.n_shape = 3;
    pk.shape[0] = 1, pk.shape[1] = 1, pk.shape[2] = 4;
    int same = add_node1(&g, XF_OP_EXPAND, &pk, &k, 1, "same");
    xf_params pc = xf_params_default();
    pc.axis = 1;
    int cin[2] = {cls, x};
    int t = add_node1(&g, XF_OP_CONCAT, &pc, cin, 2, "tokens");
    int ain[2] = {t, same};
    int y = add_node1(&g, XF_OP_ADD, NULL, ain, 2, "y");
    ck_assert_int_eq(xf_graph_mark_output(&g, y, NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.folded_nodes, 0);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_EXPAND), 2);
    xf_test_expect_same_function(&g, &fin, 7, 1e-6);
    expect_export_roundtrip(&fin, 1e-6);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

/* A squeeze or unsqueeze next to another view becomes a reshape, and the
 * run one reshape (the proved unbatched-heads rule's [1,S,H] -> [S,H] ->
 * [S,1,H] -> [S,1,h,d]); one alone stays what it is; the function is the
 * same. */
START_TEST(finish_writes_view_runs_as_reshapes)
{
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[3] = {1, 4, 8}, yd[2] = {1, 4};
    xf_shape xs = xf_shape_make(3, xd), ys = xf_shape_make(2, yd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    int y = xf_graph_add_input(&g, "y", XF_F32, &ys, NULL);
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = 0;
    int sq = add_node1(&g, XF_OP_SQUEEZE, &p, &x, 1, "sq");    /* [4,8] */
    p.axes[0] = 1;
    int us = add_node1(&g, XF_OP_UNSQUEEZE, &p, &sq, 1, "us"); /* [4,1,8] */
    int64_t hd[4] = {4, 1, 2, 4};
    int heads = xf_test_reshape(&g, us, xf_shape_make(4, hd));
    p.axes[0] = 0;
    int alone = add_node1(&g, XF_OP_SQUEEZE, &p, &y, 1, "alone"); /* [4] */
    int r = add_node1(&g, XF_OP_RELU, NULL, &alone, 1, "r");
    ck_assert_int_eq(xf_graph_mark_output(&g, heads, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, r, NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.views_as_reshapes, 2);
    ck_assert_int_eq(st.merged_views, 2);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_RESHAPE), 1);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_UNSQUEEZE), 0);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_SQUEEZE), 1);
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&g, &fin, 5, 0);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

/* A run of views is written as one reshape of the run's input (ONNX
 * Runtime 1.30 runs each Reshape of a run when the batch is symbolic: the
 * 2-D layout's [-1,S,H] -> [0,S,h,d] pairs on modelzoo BERT); a view that
 * something else also reads, or a graph output, stays. */
START_TEST(finish_merges_view_runs)
{
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[2] = {8, 8};
    xf_shape xs = xf_shape_make(2, xd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    int64_t bd[3] = {2, 4, 8}, hd[4] = {2, 4, 2, 4}, fd[2] = {8, 8};
    int b = xf_test_reshape(&g, x, xf_shape_make(3, bd));     /* merged into h */
    int h = xf_test_reshape(&g, b, xf_shape_make(4, hd));
    xf_params perm = xf_params_default();
    perm.n_axes = 4;
    int64_t pv[4] = {0, 2, 1, 3};
    for (int i = 0; i < 4; i++) perm.axes[i] = pv[i];
    int t = add_node1(&g, XF_OP_TRANSPOSE, &perm, &h, 1, "t"); /* [2,2,4,4] */
    int b2 = xf_test_reshape(&g, t, xf_shape_make(3, bd));    /* read twice: stays */
    int f2 = xf_test_reshape(&g, b2, xf_shape_make(2, fd));
    int r = add_node1(&g, XF_OP_RELU, NULL, &b2, 1, "r");
    int f3 = xf_test_reshape(&g, f2, xf_shape_make(3, bd));   /* f2 is an output: stays */
    ck_assert_int_eq(xf_graph_mark_output(&g, f2, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, r, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, f3, NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.merged_views, 1);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_RESHAPE), 4);
    ck_assert_int_eq(fin.n_nodes, g.n_nodes - 1);
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&g, &fin, 3, 0);
    expect_export_roundtrip(&fin, 1e-6);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

/* Reshape(Slice(x, [i, i+1) on an axis)) dropping that axis is written as
 * Gather(x, i, axis) (what narrowing made of a one-position Gather, where no
 * slice rule moved it: BERT's pooler); a slice read twice, a reshape that
 * does not just drop the axis, and a two-position slice stay. */
START_TEST(finish_writes_one_position_slices_as_gathers)
{
    xf_graph g, fin;
    xf_error err;
    xf_finish_stats st;
    xf_graph_init(&g);
    int64_t xd[3] = {2, 5, 4};
    xf_shape xs = xf_shape_make(3, xd);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, NULL);
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = 1;
    p.starts[0] = -2; /* position 3 */
    p.ends[0] = 4;
    p.steps[0] = 1;
    int s1 = add_node1(&g, XF_OP_SLICE, &p, &x, 1, "s1"); /* [2,1,4] */
    int64_t od[2] = {2, 4}, kd[3] = {2, 4, 1};
    int gathered = xf_test_reshape(&g, s1, xf_shape_make(2, od));
    p.starts[0] = 0, p.ends[0] = 1;
    int s2 = add_node1(&g, XF_OP_SLICE, &p, &x, 1, "s2"); /* read twice: stays */
    int twice = xf_test_reshape(&g, s2, xf_shape_make(2, od));
    int r2 = add_node1(&g, XF_OP_RELU, NULL, &s2, 1, "r2");
    p.starts[0] = 2, p.ends[0] = 3;
    int s3 = add_node1(&g, XF_OP_SLICE, &p, &x, 1, "s3");
    int kept = xf_test_reshape(&g, s3, xf_shape_make(3, kd)); /* not a drop of axis 1 */
    p.starts[0] = 1, p.ends[0] = 2;
    p.axes[0] = 0;
    int s4 = add_node1(&g, XF_OP_SLICE, &p, &x, 1, "s4"); /* [1,5,4] */
    int64_t fd[2] = {5, 4};
    int first = xf_test_reshape(&g, s4, xf_shape_make(2, fd));
    p.axes[0] = 2, p.starts[0] = 0, p.ends[0] = 2;
    int s5 = add_node1(&g, XF_OP_SLICE, &p, &x, 1, "s5"); /* two positions */
    int64_t td[2] = {2, 10};
    int two = xf_test_reshape(&g, s5, xf_shape_make(2, td));
    int outs[7] = {gathered, twice, r2, kept, first, two, -1};
    for (int i = 0; outs[i] >= 0; i++)
        ck_assert_int_eq(xf_graph_mark_output(&g, outs[i], NULL), XF_OK);

    ck_assert_msg(xf_agent_finish(&g, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.gathers, 2);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_GATHER), 2);
    ck_assert_int_eq(xf_test_count_op(&fin, XF_OP_SLICE), 3);
    ck_assert_int_eq(fin.n_nodes, g.n_nodes - 2);
    for (int i = 0; i < fin.n_nodes; i++)
        if (fin.nodes[i].op == XF_OP_GATHER) {
            const xf_value *ix = &fin.values[fin.nodes[i].inputs[1]];
            ck_assert_int_eq(ix->shape.rank, 0);
            int64_t at = *(const int64_t *)ix->data;
            ck_assert(at == (fin.nodes[i].params.axis == 1 ? 3 : 1));
        }
    ck_assert_msg(xf_graph_validate(&fin, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&g, &fin, 7, 0);
    expect_export_roundtrip(&fin, 1e-6);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

START_TEST(resnet18_prepare_finish_roundtrip)
{
    const char *dir = xf_test_models_dir();
    char path[4096];
    if (!dir) XF_SKIP("shared models not found (XF_SHARED_DIR)");
    snprintf(path, sizeof path, "%s/resnet18/model.onnx", dir);
    FILE *f = fopen(path, "rb");
    if (!f) XF_SKIP("%s not found", path);
    fclose(f);
    xf_graph model, work, fin;
    xf_error err;
    xf_finish_stats st;
    ck_assert_msg(xf_onnx_load(path, NULL, &model, &err) == XF_OK, "%s", err.msg);
    int bias_convs = 0;
    for (int i = 0; i < model.n_nodes; i++)
        bias_convs += model.nodes[i].op == XF_OP_CONV && model.nodes[i].n_inputs == 3;
    ck_assert_int_gt(bias_convs, 10);
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_ADD),
                     xf_test_count_op(&model, XF_OP_ADD) + bias_convs);
    ck_assert_msg(xf_agent_finish(&work, &fin, &st, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(st.fused_bias, bias_convs);
    ck_assert_int_eq(fin.n_nodes, model.n_nodes);
    ck_assert_int_eq(count_consts(&fin), count_consts(&model));
    ck_assert_uint_eq(xf_graph_hash(&fin), xf_graph_hash(&model));
    ck_assert_uint_eq(xf_graph_param_bytes(&fin), xf_graph_param_bytes(&model));
    int borrowed = 0;
    expect_no_copies(&fin, &work, &borrowed);
    ck_assert_int_gt(borrowed, 0);
    xf_test_expect_same_function(&model, &fin, 7, 1e-4);
    xf_graph_free(&fin);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_finish");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, prepare_splits_conv_bias);
    tcase_add_test(t, finish_fuses_bias_back_and_owns_data);
    tcase_add_test(t, finish_folds_weight_subgraphs);
    tcase_add_test(t, finish_keeps_what_it_must);
    tcase_add_test(t, finish_keeps_an_expand_of_a_constant);
    tcase_add_test(t, finish_writes_view_runs_as_reshapes);
    tcase_add_test(t, finish_merges_view_runs);
    tcase_add_test(t, finish_writes_one_position_slices_as_gathers);
    tcase_add_test(t, resnet18_prepare_finish_roundtrip);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
