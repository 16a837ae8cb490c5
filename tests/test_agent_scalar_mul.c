/*
 * test_agent_scalar_mul.c — the scalar canonicalisation of xf_agent_prepare
 * (agent/scalar_mul.c): Mul(x, c), Mul(c, x) and Div(x, c) with c a float32
 * rank-0 constant become scalar_mul(x, c) (by a new constant 1/c for the
 * divide), keeping the output value and the function; a divide by 0, a
 * multiply by a non-scalar constant or by a computed scalar stays; prepare
 * options turn the canonicalisation (and the layer-norm fusion) off; the
 * prepared graph exports (scalar_mul as Mul) and re-imports equal.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "testutil.h"

static int node1(xf_graph *g, xf_op op, int a, int b, const char *name)
{
    xf_error err;
    int in[2] = {a, b};
    int idx = xf_graph_add_node(g, op, NULL, in, 2, 1, name, &err);
    ck_assert_msg(idx >= 0, "%s: %s", name, err.msg);
    return g->nodes[idx].outputs[0];
}



/* x[2,5] -> mul by 0.5 -> 3 * (the constant first) -> div by 4 -> div by 0
 * -> mul by a [5] constant -> mul by k, a rank-0 graph input (a scalar,
 * but not a constant) -> output. */
static void build(xf_graph *g)
{
    xf_graph_init(g);
    xf_error err;
    int64_t xd[2] = {2, 5}, vd[1] = {5};
    xf_shape xs = xf_shape_make(2, xd), s0 = xf_shape_make(0, NULL);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    int k = xf_graph_add_input(g, "k", XF_F32, &s0, &err);
    int y = node1(g, XF_OP_MUL, x, xf_test_scalar(g, "half", 0.5f), "mul_half");
    y = node1(g, XF_OP_MUL, xf_test_scalar(g, "three", 3.0f), y, "mul_three");
    y = node1(g, XF_OP_DIV, y, xf_test_scalar(g, "four", 4.0f), "div_four");
    y = node1(g, XF_OP_DIV, y, xf_test_scalar(g, "zero", 0.0f), "div_zero");
    y = node1(g, XF_OP_MUL, y, xf_test_weight(g, "vec", 1, vd, 5), "mul_vec");
    y = node1(g, XF_OP_MUL, y, k, "mul_input");
    ck_assert_int_eq(xf_graph_mark_output(g, y, &err), XF_OK);
}

/* The node named `name` in g. */
static const xf_node *named(const xf_graph *g, const char *name)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].name && !strcmp(g->nodes[i].name, name)) return &g->nodes[i];
    ck_abort_msg("no node '%s'", name);
    return NULL;
}

START_TEST(scalings_become_scalar_mul)
{
    xf_graph model, work;
    xf_error err;
    build(&model);
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&work, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.scalar_muls, 3);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_SCALAR_MUL), 3);
    ck_assert_int_eq(named(&work, "div_zero")->op, XF_OP_DIV);
    ck_assert_int_eq(named(&work, "mul_vec")->op, XF_OP_MUL);
    ck_assert_int_eq(named(&work, "mul_input")->op, XF_OP_MUL);
    /* the scalar second, the activation first, whichever side it was on */
    const xf_node *three = named(&work, "mul_three");
    ck_assert_int_eq(three->op, XF_OP_SCALAR_MUL);
    ck_assert_str_eq(work.values[three->inputs[1]].name, "three");
    ck_assert_int_eq(work.values[three->inputs[0]].shape.rank, 2);
    /* a divide by 4 multiplies by 0.25 */
    const xf_node *four = named(&work, "div_four");
    ck_assert_int_eq(four->op, XF_OP_SCALAR_MUL);
    ck_assert_float_eq(*(const float *)work.values[four->inputs[1]].data, 0.25f);
    ck_assert_str_eq(work.values[work.outputs[0]].name, model.values[model.outputs[0]].name);
    xf_test_expect_same_function(&model, &work, 3, 1e-6);
    /* exported (scalar_mul as Mul) and re-imported, the same function */
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(xf_onnx_save_buffer(&work, &buf, &len, &err) == XF_OK, "%s", err.msg);
    xf_graph back;
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "scaled", NULL, NULL, &back, &err) == XF_OK, "%s",
                  err.msg);
    free(buf);
    ck_assert_int_eq(xf_test_count_op(&back, XF_OP_SCALAR_MUL), 0);
    xf_test_expect_same_function(&model, &back, 3, 1e-6);
    xf_graph_free(&back);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(options_turn_it_off)
{
    xf_graph model, work;
    xf_error err;
    build(&model);
    xf_prepare_options po = xf_prepare_options_default();
    ck_assert_int_eq(po.scalar_mul, 1);
    ck_assert_int_eq(po.fuse_layernorm, 1);
    po.scalar_mul = 0;
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&model, &po, &work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.scalar_muls, 0);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_SCALAR_MUL), 0);
    ck_assert_int_eq(work.n_nodes, model.n_nodes);
    ck_assert_uint_eq(xf_graph_hash(&work), xf_graph_hash(&model));
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_scalar_mul");
    TCase *t = tcase_create("core");
    tcase_add_test(t, scalings_become_scalar_mul);
    tcase_add_test(t, options_turn_it_off);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
