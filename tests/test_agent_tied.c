/*
 * test_agent_tied.c — xf_gather_tied: a tied embedding (a table read by a
 * Gather and, transposed, by the head) is held once and the graph computes
 * what it did; a table anything else reads is left alone.
 */
#include <string.h>

#include "agent/rewrite/rewrite.h"
#include "agent_fixture.h"
#include "testutil.h"

START_TEST(a_tied_embedding_is_held_once)
{
    xf_graph g, before;
    int e, et;
    xf_fx_tied_graph(&g, 0, &e, &et);
    xf_error err;
    ck_assert_int_eq(xf_graph_clone(&g, &before, &err), XF_OK);
    int n = -1;
    ck_assert_msg(xf_gather_tied(&g, &n, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(g.n_values, before.n_values); /* the table gone, a Transpose's output added */
    int tables = 0, transposes = 0;
    for (int v = 0; v < g.n_values; v++)
        tables += g.values[v].kind == XF_VALUE_CONST && g.values[v].dtype == XF_F32;
    for (int i = 0; i < g.n_nodes; i++) {
        transposes += g.nodes[i].op == XF_OP_TRANSPOSE;
        if (g.nodes[i].op == XF_OP_GATHER) ck_assert_int_eq(g.nodes[i].params.axis, 1);
    }
    ck_assert_int_eq(tables, 1);
    ck_assert_int_eq(transposes, 1);
    ck_assert_msg(xf_graph_validate(&g, &err) == XF_OK, "%s", err.msg);
    xf_check_result chk;
    ck_assert_msg(xf_interp_check(&before, &g, 1, 1e-6, 1e-6, &chk, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(chk.max_abs == 0, "outputs differ by %g", chk.max_abs);
    xf_graph_free(&before);
    xf_graph_free(&g);
}
END_TEST

START_TEST(a_table_read_otherwise_stays)
{
    xf_graph g;
    int e, et;
    xf_fx_tied_graph(&g, 1, &e, &et);
    int n_values = g.n_values, n = -1;
    xf_error err;
    ck_assert_msg(xf_gather_tied(&g, &n, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(g.n_values, n_values);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_tied");
    TCase *tc = tcase_create("tied");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_tied_embedding_is_held_once);
    tcase_add_test(tc, a_table_read_otherwise_stays);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
