/*
 * test_agent_scalar_mul.c — the scalar canonicalisation of xf_agent_prepare
 * (agent/scalar_mul.c): Mul(x, c), Mul(c, x) and Div(x, c) with c a float32
 * rank-0 constant become scalar_mul(x, c) (by a new constant 1/c for the
 * divide), keeping the output value and the function; a divide by 0, a
 * multiply by a non-scalar constant or by a computed scalar stays; prepare
 * options turn the canonicalisation (and the layer-norm fusion) off; the
 * prepared graph exports (scalar_mul as Mul) and re-imports equal. The
 * other preparation a target weighs (xf_prepare_alternative): scalings
 * kept, offered only when some were moved; xf_model_search prepares the
 * model either way with its rules and environment, and a rules database
 * that cannot be opened is an error naming it that leaves nothing behind.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "rulesdb/rulesdb.h"
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

/* A rules database holding the fixture's conv+relu rule, proved. */
static const char *rules_db(void)
{
    const char *path = xf_test_tmp("scalar_mul_rules.db");
    unlink(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    xf_fx_rule_conv_relu(&r);
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t id;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &proved, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
    return path;
}

START_TEST(the_target_also_sees_the_scalings_kept)
{
    xf_graph model;
    xf_error err;
    build(&model);
    const char *db = rules_db();
    xf_cost_model *cm = xf_fx_cost_model();
    xf_model_search ms[2];
    xf_model_search_init(&ms[0]);
    ck_assert_msg(xf_model_search_prepare(&ms[0], &model, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_model_search_rules(&ms[0], db, NULL, 1, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ms[0].prep.scalar_muls, 3);
    xf_prepare_options alt;
    ck_assert_int_eq(xf_prepare_alternative(&ms[0].prepare, &ms[0].prep, &alt), 1);
    ck_assert_int_eq(alt.scalar_mul, 0);
    ck_assert_int_eq(alt.fuse_layernorm, ms[0].prepare.fuse_layernorm);
    xf_model_search_init(&ms[1]);
    ck_assert_msg(xf_model_search_prepare(&ms[1], &model, &alt, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_model_search_rules(&ms[1], db, NULL, 1, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ms[1].prep.scalar_muls, 0);
    for (int i = 0; i < 2; i++) {
        /* the rule and its reverse, irrelevant to a model without a conv */
        ck_assert_int_eq(xf_ruleset_count(ms[i].rs), 0);
        ck_assert_int_eq(xf_ruleset_irrelevant(ms[i].rs), 2);
        ck_assert_msg(xf_model_search_env(&ms[i], cm, NULL, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_test_count_op(xf_env_graph(ms[i].env), XF_OP_SCALAR_MUL),
                         i == 0 ? 3 : 0);
        xf_test_expect_same_function(&model, xf_env_graph(ms[i].env), 3, 1e-6);
    }
    /* with the scalings kept already there is no other preparation */
    ck_assert_int_eq(xf_prepare_alternative(&alt, &ms[1].prep, &alt), 0);
    xf_model_search_free(&ms[1]);
    ck_assert_ptr_null(ms[1].rs);
    ck_assert_ptr_null(ms[1].env);
    /* nothing to move, nothing else to see */
    xf_prepare_stats none = {0};
    ck_assert_int_eq(xf_prepare_alternative(&ms[0].prepare, &none, &alt), 0);
    xf_model_search_free(&ms[0]);
    /* a database that cannot be opened: named, and nothing left behind */
    xf_model_search_init(&ms[0]);
    const char *missing = xf_test_tmp("no_such_dir/rules.db");
    ck_assert_int_eq(xf_model_search_prepare(&ms[0], &model, NULL, &err), XF_OK);
    ck_assert_int_ne(xf_model_search_rules(&ms[0], missing, NULL, 1, &err), XF_OK);
    xf_test_expect_contains(err.msg, "no_such_dir/rules.db");
    ck_assert_ptr_null(ms[0].rs);
    ck_assert_int_eq(ms[0].prepared.n_nodes, 0);
    xf_cost_close(cm);
    xf_graph_free(&model);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_scalar_mul");
    TCase *t = tcase_create("core");
    tcase_add_test(t, scalings_become_scalar_mul);
    tcase_add_test(t, options_turn_it_off);
    tcase_add_test(t, the_target_also_sees_the_scalings_kept);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
