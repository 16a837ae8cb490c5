/*
 * test_agent_narrow.c — the row narrowing of xf_agent_prepare
 * (agent/rewrite/narrow.c): a Gather of one position by a constant index
 * becomes a slice that moves up through the operators that feed only it,
 * so they compute that position alone.
 *
 * On the fixture's one-block transformer with a class-token head: the
 * slice moves through the final layer norm, the MLP, the residual adds,
 * the attention output projection, the attention rows and the query
 * projection (21 operators), and stops at the first layer norm, whose keys
 * and values need every position; the function is unchanged (also after
 * ONNX export and import, and after finishing). A residual stream that is
 * also a graph output stops it earlier; the last position (index -1)
 * works the same; with the option off, with an index that is not a
 * constant, or when the gathered tensor has another reader, the graph is
 * left as it was; a Gather of a graph input that finds the slice an earlier
 * move made of it stays a Gather and leaves that slice to its reader.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "testutil.h"

/* Operators of g whose output has exactly this shape. */
static int count_shaped(const xf_graph *g, xf_op op, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == op && xf_shape_equal(&g->values[g->nodes[i].outputs[0]].shape, &s))
            n++;
    return n;
}

static void prepare(const xf_graph *model, int narrow, xf_graph *work, xf_prepare_stats *ps)
{
    xf_error err;
    xf_prepare_options po = xf_prepare_options_default();
    po.narrow = narrow;
    ck_assert_msg(xf_agent_prepare(model, &po, work, ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(work, &err) == XF_OK, "%s", err.msg);
}

START_TEST(class_token_computes_one_position)
{
    xf_graph model, work;
    xf_fx_class_token_graph(&model, 0, 0);
    xf_prepare_stats ps;
    prepare(&model, 1, &work, &ps);
    ck_assert_int_eq(ps.narrowed_selections, 1);
    ck_assert_int_eq(ps.narrowed_ops, 23); /* the layer norms' bias adds are two of them */
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_GATHER), 0);
    /* the MLP, the output projection and the query on one position... */
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 1, 16}), 1);
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 1, 8}), 3);
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 4, (const int64_t[]){1, 2, 1, 5}), 1);
    /* ...keys and values on all five */
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 5, 8}), 2);
    ck_assert_int_eq(count_shaped(&work, XF_OP_LAYERNORM, 3, (const int64_t[]){1, 5, 8}), 1);
    ck_assert_int_eq(count_shaped(&work, XF_OP_LAYERNORM, 3, (const int64_t[]){1, 1, 8}), 2);
    ck_assert(xf_shape_equal(&work.values[work.outputs[0]].shape,
                             &model.values[model.outputs[0]].shape));
    xf_test_expect_same_function(&model, &work, 3, 1e-5);
    xf_fx_expect_written_same(&model, &work, 4);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(other_readers_stop_it)
{
    xf_graph model, work;
    xf_fx_class_token_graph(&model, 0, 1);
    xf_prepare_stats ps;
    prepare(&model, 1, &work, &ps);
    /* final layer norm, residual add, MLP (bias, matmul, gelu, bias,
     * matmul) and its layer norm: the stream they read is an output */
    ck_assert_int_eq(ps.narrowed_selections, 1);
    ck_assert_int_eq(ps.narrowed_ops, 10); /* with the layer norms' bias adds */
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 1, 16}), 1);
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 5, 8}), 4);
    xf_test_expect_same_function(&model, &work, 3, 1e-5);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(last_position)
{
    const int64_t pos[2] = {-1, 4};
    for (int i = 0; i < 2; i++) {
        xf_graph model, work;
        xf_fx_class_token_graph(&model, pos[i], 0);
        xf_prepare_stats ps;
        prepare(&model, 1, &work, &ps);
        ck_assert_int_eq(ps.narrowed_ops, 23); /* the layer norms' bias adds are two of them */
        xf_test_expect_same_function(&model, &work, 7, 1e-5);
        xf_graph_free(&work);
        xf_graph_free(&model);
    }
}
END_TEST

/* x [1,5,8] -> relu -> Gather(axis 1, index) -> output; with `also` the
 * relu's output is read by a second relu, a second output. */
static void gather_graph(xf_graph *g, int index_is_input, int also)
{
    xf_graph_init(g);
    xf_error err;
    int x = xf_fx_input(g, "x", xf_fx_shape(3, 1, 5, 8, 0));
    int r = xf_fx_op(g, XF_OP_RELU, NULL, x, -1);
    xf_shape s0 = xf_shape_make(0, NULL);
    int64_t at = 2;
    int idx = index_is_input ? xf_graph_add_input(g, "at", XF_I64, &s0, &err)
                             : xf_graph_add_const(g, "at", XF_I64, &s0, &at, &err);
    ck_assert_msg(idx >= 0, "%s", err.msg);
    xf_params p = xf_params_default();
    p.axis = 1;
    xf_fx_output(g, xf_fx_op(g, XF_OP_GATHER, &p, r, idx));
    if (also) xf_fx_output(g, xf_fx_op(g, XF_OP_RELU, NULL, r, -1));
}

START_TEST(left_alone)
{
    xf_graph model, work;
    xf_prepare_stats ps;
    xf_fx_class_token_graph(&model, 0, 0);
    prepare(&model, 0, &work, &ps);
    ck_assert_int_eq(ps.narrowed_selections, 0);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_GATHER), 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_SLICE), 0);
    xf_graph_free(&work);
    xf_graph_free(&model);
    for (int k = 0; k < 3; k++) {
        gather_graph(&model, k == 1, k == 2);
        prepare(&model, 1, &work, &ps);
        if (k == 0) { /* the control: the relu computes one position */
            ck_assert_int_eq(ps.narrowed_ops, 1);
            ck_assert_int_eq(xf_test_count_op(&work, XF_OP_GATHER), 0);
        } else {
            ck_assert_int_eq(ps.narrowed_selections, 0);
            ck_assert_int_eq(ps.narrowed_ops, 0);
            ck_assert_int_eq(work.n_nodes, model.n_nodes);
            ck_assert_uint_eq(xf_graph_hash(&work), xf_graph_hash(&model));
        }
        xf_test_expect_same_function(&model, &work, 3, 0);
        xf_graph_free(&work);
        xf_graph_free(&model);
    }
}
END_TEST

/* x [1,5,8] -> matmul by a [8,3] weight -> Gather(axis 1, 0) -> output, and
 * Gather(x, axis 1, 0) -> a second output. Narrowing the first makes a slice
 * of x (the matmul's rows); the second Gather finds that same slice, cannot
 * move it above the graph input, and must leave it to the matmul. */
START_TEST(slice_shared_with_an_input_gather)
{
    xf_graph model, work;
    xf_graph_init(&model);
    xf_error err;
    xf_shape s0 = xf_shape_make(0, NULL);
    int64_t at = 0;
    int x = xf_fx_input(&model, "x", xf_fx_shape(3, 1, 5, 8, 0));
    int y = xf_fx_op(&model, XF_OP_MATMUL, NULL, x,
                     xf_fx_weight(&model, "w", xf_fx_shape(2, 8, 3, 0, 0), 1));
    int idx = xf_graph_add_const(&model, "at", XF_I64, &s0, &at, &err);
    ck_assert_msg(idx >= 0, "%s", err.msg);
    xf_params p = xf_params_default();
    p.axis = 1;
    xf_fx_output(&model, xf_fx_op(&model, XF_OP_GATHER, &p, y, idx));
    xf_fx_output(&model, xf_fx_op(&model, XF_OP_GATHER, &p, x, idx));
    xf_prepare_stats ps;
    prepare(&model, 1, &work, &ps);
    /* the matmul computes one row; the input's Gather stays */
    ck_assert_int_eq(ps.narrowed_selections, 1);
    ck_assert_int_eq(count_shaped(&work, XF_OP_MATMUL, 3, (const int64_t[]){1, 1, 3}), 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_GATHER), 1);
    xf_test_expect_same_function(&model, &work, 3, 1e-5);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_narrow");
    TCase *t = tcase_create("core");
    tcase_add_test(t, class_token_computes_one_position);
    tcase_add_test(t, other_readers_stop_it);
    tcase_add_test(t, last_position);
    tcase_add_test(t, left_alone);
    tcase_add_test(t, slice_shared_with_an_input_gather);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
