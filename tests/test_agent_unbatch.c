/*
 * test_agent_unbatch.c — xf_agent_unbatch (agent/rewrite/unbatch.c): a
 * batch-1 model's activations computed without their leading unit dim
 * where that saves Reshapes, the layout variant the arbiter times.
 *
 * On the fixture's one-block transformer: the residual stream, the layer
 * norms and the six linear layers run on [5, 8] (their matmuls 2-D), the
 * attention's 4-D internals keep their layout (no 2-D matmul in them: no
 * gain), two adapters are added (after the graph input, before the
 * Gather), graph inputs and outputs keep their names and shapes, and the
 * function is unchanged, also after finishing and after ONNX export and
 * import, and on the narrowed model. A conv net (no matmul) and a 2-D
 * model are left as they are. The modelzoo GPT (merged Q/K/V split, causal
 * mask, embeddings by Gather) keeps its function; in ONNX Runtime, when
 * installed, too.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "testutil.h"

static void unbatch(const xf_graph *model, xf_graph *out, int *n_dropped)
{
    xf_error err;
    ck_assert_msg(xf_agent_unbatch(model, out, n_dropped, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(out, &err) == XF_OK, "%s", err.msg);
}

/* matmuls of g whose first operand has rank `rank` and second rank 2 */
static int linears(const xf_graph *g, int rank)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *m = &g->nodes[i];
        if (m->op == XF_OP_MATMUL && g->values[m->inputs[0]].shape.rank == rank &&
            g->values[m->inputs[1]].shape.rank == 2)
            n++;
    }
    return n;
}

static void expect_same_io(const xf_graph *a, const xf_graph *b)
{
    ck_assert_int_eq(a->n_inputs, b->n_inputs);
    ck_assert_int_eq(a->n_outputs, b->n_outputs);
    for (int i = 0; i < a->n_inputs; i++)
        ck_assert(xf_shape_equal(&a->values[a->inputs[i]].shape, &b->values[b->inputs[i]].shape));
    for (int i = 0; i < a->n_outputs; i++) {
        const xf_value *va = &a->values[a->outputs[i]], *vb = &b->values[b->outputs[i]];
        ck_assert(xf_shape_equal(&va->shape, &vb->shape));
        if (va->name) ck_assert_str_eq(va->name, vb->name);
    }
}

START_TEST(transformer_stream_runs_2d)
{
    xf_graph model, ub;
    xf_fx_class_token_graph(&model, 0, 1);
    int n = 0;
    unbatch(&model, &ub, &n);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(linears(&model, 3), 6);
    ck_assert_int_eq(linears(&ub, 3), 0);
    ck_assert_int_eq(linears(&ub, 2), 7); /* the six and the head */
    /* attention internals keep their 4-D layout */
    ck_assert_int_eq(xf_test_count_op(&ub, XF_OP_TRANSPOSE), 4);
    for (int i = 0; i < ub.n_nodes; i++)
        if (ub.nodes[i].op == XF_OP_TRANSPOSE) ck_assert_int_eq(ub.nodes[i].params.n_axes, 4);
    /* adapters: after x, before the Gather, before the stream output */
    ck_assert_int_eq(xf_test_count_op(&ub, XF_OP_RESHAPE),
                     xf_test_count_op(&model, XF_OP_RESHAPE) + 3);
    expect_same_io(&model, &ub);
    xf_test_expect_same_function(&model, &ub, 3, 1e-5);

    xf_error err;
    xf_graph fin, back;
    ck_assert_msg(xf_agent_finish(&ub, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&model, &fin, 4, 1e-5);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(xf_onnx_save_buffer(&fin, &buf, &len, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "unbatched", NULL, NULL, &back, &err) == XF_OK,
                  "%s", err.msg);
    free(buf);
    expect_same_io(&model, &back);
    xf_test_expect_same_function(&model, &back, 5, 1e-5);
    xf_graph_free(&back);
    xf_graph_free(&fin);
    xf_graph_free(&ub);
    xf_graph_free(&model);
}
END_TEST

START_TEST(narrowed_model_too)
{
    xf_graph model, work, ub;
    xf_error err;
    xf_fx_class_token_graph(&model, 0, 0);
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, NULL, &err) == XF_OK, "%s", err.msg);
    int n = 0;
    unbatch(&work, &ub, &n);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(linears(&ub, 3), 0);
    xf_test_expect_same_function(&model, &ub, 3, 1e-5);
    xf_graph_free(&ub);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(nothing_to_gain_left_alone)
{
    xf_graph g, ub;
    int n = -1;
    xf_fx_search_graph(&g); /* convs on [1,4,8,8]; matmuls on 2-D inputs */
    unbatch(&g, &ub, &n);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(ub.n_nodes, g.n_nodes);
    ck_assert_uint_eq(xf_graph_hash(&ub), xf_graph_hash(&g));
    xf_graph_free(&ub);
    xf_graph_free(&g);
}
END_TEST

START_TEST(gpt_same_function)
{
    xf_graph model, ub, fin;
    xf_error err;
    xf_test_modelzoo_build("gpt", "--layers 1 --hidden 16 --heads 2 --seq 6 --vocab 50", &model);
    int n = 0;
    unbatch(&model, &ub, &n);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(linears(&ub, 3), 0);
    expect_same_io(&model, &ub);
    xf_test_expect_same_function(&model, &ub, 3, 1e-5);
    ck_assert_msg(xf_agent_finish(&ub, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    xf_target *t = xf_fx_target();
    if (t) {
        double rel = 1;
        ck_assert_msg(xf_target_outputs_diff(t, &model, &fin, 1, &rel, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_double_le(rel, 1e-5);
        xf_target_close(t);
    }
    xf_graph_free(&fin);
    xf_graph_free(&ub);
    xf_graph_free(&model);
    if (!t) XF_SKIP("ONNX Runtime is not installed: the GPT was checked in the interpreter only");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_unbatch");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, transformer_stream_runs_2d);
    tcase_add_test(t, narrowed_model_too);
    tcase_add_test(t, nothing_to_gain_left_alone);
    tcase_add_test(t, gpt_same_function);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
