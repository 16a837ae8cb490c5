/*
 * test_agent_outcome.c — what the agent hands out after a search, as
 * library calls (rlflow-agent only prints them):
 *  - xf_interp_check: identical models agree exactly; a model that computes
 *    something else is reported at its first differing output with the
 *    size of the difference; models with other numbers of outputs fail
 *    with XF_ERR_MISMATCH and a message;
 *  - xf_agent_outcome_model: a cheaper best graph is finished and handed
 *    out with both costs; a best graph that is not cheaper as written
 *    (here: an already fused model itself) gives back a copy of the input,
 *    never a slower model.
 */
#include <math.h>
#include <string.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "testutil.h"

/* relu(conv(x, w)) over 4 channels of 8x8, or the fused conv[act=relu]
 * (same weights: same seed), or conv followed by `act` (sigmoid: another
 * function). */
static void build(xf_graph *g, int fused, xf_op act)
{
    xf_graph_init(g);
    int x = xf_fx_input(g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(g, "w", xf_fx_shape(4, 4, 4, 3, 3), 7);
    xf_params p = xf_fx_conv3x3(fused ? XF_ACT_RELU : XF_ACT_NONE);
    int y = xf_fx_op(g, XF_OP_CONV, &p, x, w);
    if (!fused) y = xf_fx_op(g, act, NULL, y, -1);
    xf_fx_output(g, y);
}

START_TEST(check_compares_every_output)
{
    xf_graph a, b, c;
    build(&a, 0, XF_OP_RELU);
    build(&b, 1, XF_OP_RELU);
    build(&c, 0, XF_OP_SIGMOID);
    xf_error err = {0};
    xf_check_result r;
    ck_assert_msg(xf_interp_check(&a, &b, 1, 1e-5, 1e-6, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.bad_output, -1);
    ck_assert(r.max_abs <= 1e-6);
    ck_assert_msg(xf_interp_check(&a, &c, 1, 1e-5, 1e-6, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.bad_output, 0);
    ck_assert(r.bad_abs > 1e-3 && r.bad_abs <= r.max_abs);
    /* another output count is an error, not a difference */
    xf_fx_output(&c, c.nodes[0].outputs[0]); /* the conv's output too */
    ck_assert_int_eq(xf_interp_check(&a, &c, 1, 1e-5, 1e-6, &r, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "2 outputs") != NULL, "%s", err.msg);
    xf_graph_free(&a);
    xf_graph_free(&b);
    xf_graph_free(&c);
}
END_TEST

START_TEST(outcome_hands_out_a_cheaper_model)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_graph model, best, out;
    build(&model, 0, XF_OP_RELU);
    build(&best, 1, XF_OP_RELU);
    xf_error err = {0};
    xf_agent_outcome oc;
    ck_assert_msg(xf_agent_outcome_model(cm, &model, &best, &out, &oc, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(oc.kept_original, 0);
    ck_assert(oc.cost_after < oc.cost_before);
    ck_assert_int_eq(out.n_nodes, 1);
    xf_graph_free(&out);
    /* the fused model given its own graph as the best: not cheaper as
     * written, so the input comes back */
    xf_graph_free(&model);
    build(&model, 1, XF_OP_RELU);
    ck_assert_msg(xf_agent_outcome_model(cm, &model, &model, &out, &oc, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(oc.kept_original, 1);
    ck_assert(oc.cost_after == oc.cost_before);
    ck_assert_int_eq(oc.finish.folded_nodes + oc.finish.fused_bias, 0);
    ck_assert_int_eq(out.n_nodes, model.n_nodes);
    xf_check_result r;
    ck_assert_msg(xf_interp_check(&model, &out, 1, 0, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.bad_output, -1);
    xf_graph_free(&out);
    xf_graph_free(&best);
    xf_graph_free(&model);
    xf_cost_close(cm);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_outcome");
    TCase *t = tcase_create("core");
    tcase_add_test(t, check_compares_every_output);
    tcase_add_test(t, outcome_hands_out_a_cheaper_model);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
