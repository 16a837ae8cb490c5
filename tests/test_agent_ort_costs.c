/*
 * test_agent_ort_costs.c — the search's cost with ONNX Runtime's layout
 * costs on (xf_costmemo_set_layout) prices what ORT 1.30's graph fusions do
 * around a matmul: a scale by a one-element constant next to a matmul that
 * stays a MatMul is folded into its FusedMatMul's alpha and costs nothing
 * (MatMulScaleFusion), where a scale that a view, a second reader or a
 * Gemm's bias add stands between costs a kernel; only a bias shaped as Gemm
 * broadcasts it makes a matmul a Gemm (MatMulAddFusion), so a residual add
 * does not; a matmul that makes a graph output is never wrapped; and a
 * [1, S, K] linear layer's kernels are priced as their [S, K] form's, ORT
 * running one GEMM and one element-wise loop for both.
 */
#include "agent/search/search.h"
#include "agent_fixture.h"
#include "testutil.h"

/* A one-element float constant: rank 0 (scalar_mul's) or rank 1. */
static int scale_const(xf_graph *g, int rank)
{
    xf_error err;
    const int64_t one = 1;
    xf_shape s = xf_shape_make(rank, &one);
    float v = 0.125f;
    int c = xf_graph_add_const(g, "scale", XF_F32, &s, &v, &err);
    ck_assert_msg(c >= 0, "%s", err.msg);
    return c;
}

enum scale_case {
    TRAILING,          /* scalar_mul(matmul(q, k), s): fused */
    LEADING,           /* matmul(scalar_mul(q, s), k): fused */
    DIV_TRAILING,      /* div(matmul(q, k), s) with a [1] constant: fused */
    BEHIND_A_VIEW,     /* matmul(reshape(scalar_mul(q, s)), k): a kernel */
    MATMUL_READ_TWICE, /* scalar_mul(matmul(q, k), s) and relu(matmul): a kernel */
    INTO_BIAS_GEMM,    /* matmul(scalar_mul(x, s), w) + b[N]: a Gemm's, a kernel */
    INTO_RESIDUAL,     /* matmul(scalar_mul(x, s), w) + x: a MatMul's, fused */
    N_CASES
};

/* The case's graph; *scale_node is the scaling's node. Attention's shapes:
 * q, k [2, 4, 8, 8]; a linear layer's: x [2, 8, 8] by w [8, 8]. */
static void scale_graph(xf_graph *g, enum scale_case c, int *scale_node)
{
    xf_graph_init(g);
    const int64_t qd[4] = {2, 4, 8, 8}, wd[2] = {8, 8}, bd[1] = {8};
    if (c == INTO_BIAS_GEMM || c == INTO_RESIDUAL) {
        int x = xf_test_input(g, "x", 3, qd + 1);
        int sx = xf_test_op2(g, XF_OP_SCALAR_MUL, NULL, x, scale_const(g, 0));
        *scale_node = g->n_nodes - 1;
        int y = xf_test_op2(g, XF_OP_MATMUL, NULL, sx, xf_test_weight(g, "w", 2, wd, 1));
        int other = c == INTO_RESIDUAL ? x : xf_test_weight(g, "b", 1, bd, 2);
        xf_test_out(g, xf_test_op2(g, XF_OP_ADD, NULL, y, other));
        return;
    }
    int q = xf_test_input(g, "q", 4, qd), k = xf_test_input(g, "k", 4, qd);
    if (c == LEADING || c == BEHIND_A_VIEW) {
        q = xf_test_op2(g, XF_OP_SCALAR_MUL, NULL, q, scale_const(g, 0));
        *scale_node = g->n_nodes - 1;
        if (c == BEHIND_A_VIEW) q = xf_test_reshape(g, q, xf_shape_make(4, qd));
        xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, q, k));
        return;
    }
    int s = xf_test_op2(g, XF_OP_MATMUL, NULL, q, k);
    xf_op op = c == DIV_TRAILING ? XF_OP_DIV : XF_OP_SCALAR_MUL;
    int y = xf_test_op2(g, op, NULL, s, scale_const(g, c == DIV_TRAILING ? 1 : 0));
    *scale_node = g->n_nodes - 1;
    xf_test_out(g, xf_test_op2(g, XF_OP_RELU, NULL, y, -1));
    if (c == MATMUL_READ_TWICE) xf_test_out(g, xf_test_op2(g, XF_OP_RELU, NULL, s, -1));
}

/* With the layout costs the scale costs nothing exactly where ORT fuses it;
 * without them every scale costs its kernel. */
START_TEST(ort_fuses_a_scale_next_to_a_matmul)
{
    static const int fused[N_CASES] = {1, 1, 1, 0, 0, 0, 1};
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    for (int c = 0; c < N_CASES; c++) {
        xf_costmemo *m = NULL;
        ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
        xf_graph g;
        int node = -1;
        scale_graph(&g, (enum scale_case)c, &node);
        ck_assert_int_ge(node, 0);
        xf_op_cost per[16];
        double plain = xf_fx_graph_costs(m, &g, per, 16);
        ck_assert_double_gt(per[node].ms, 0);
        xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
        double ort = xf_fx_graph_costs(m, &g, per, 16);
        if (fused[c]) {
            ck_assert_msg(per[node].ms == 0, "case %d: scale costs %g ms", c, per[node].ms);
            if (c != INTO_RESIDUAL) ck_assert_double_lt(ort, plain);
        } else {
            ck_assert_msg(per[node].ms > 0, "case %d: scale costs nothing", c);
        }
        xf_graph_free(&g);
        xf_costmemo_free(m);
    }
    xf_cost_close(cm);
}
END_TEST

/* A 3-D matmul by a 2-D weight that is a graph output and also read by a
 * bias add: ORT's MatMulAddFusion leaves a matmul that makes a graph output
 * alone, so it pays no wrapping Reshapes; the same matmul read by the add
 * alone does. */
START_TEST(ort_never_wraps_a_matmul_into_an_output)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    xf_costmemo *m = NULL;
    ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
    const int64_t xd[3] = {4, 16, 8}, wd[2] = {8, 8}, bd[1] = {8};
    xf_graph g[2];
    for (int out = 0; out < 2; out++) {
        xf_graph_init(&g[out]);
        int x = xf_test_input(&g[out], "x", 3, xd);
        int y = xf_test_op2(&g[out], XF_OP_MATMUL, NULL, x, xf_test_weight(&g[out], "w", 2, wd, 1));
        xf_test_out(&g[out], xf_test_op2(&g[out], XF_OP_ADD, NULL, y,
                                         xf_test_weight(&g[out], "b", 1, bd, 2)));
        if (out) xf_test_out(&g[out], y);
    }
    xf_op_cost per[16];
    xf_fx_graph_costs(m, &g[0], per, 16);
    double plain = per[0].ms;
    xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
    xf_fx_graph_costs(m, &g[0], per, 16);
    ck_assert_double_gt(per[0].ms, plain + 1e-6); /* a Gemm in Reshapes */
    xf_fx_graph_costs(m, &g[1], per, 16);
    ck_assert_double_eq_tol(per[0].ms, plain, 1e-12); /* a MatMul as it stands */
    for (int i = 0; i < 2; i++) xf_graph_free(&g[i]);
    xf_costmemo_free(m);
    xf_cost_close(cm);
}
END_TEST

/* A linear layer with a bias and a tanh on x [1, 16, 8] by w [8, 4] and
 * on x [16, 8]: with the layout costs on, the 3-D form's matmul, add and
 * tanh are priced by the 2-D form's kernels (nothing new is measured once
 * the 2-D graph is costed) and the matmul adds its wrapping Reshapes'
 * copy, so the 2-D form is the cheaper; without them the 3-D kernels are
 * configurations of their own. */
START_TEST(ort_prices_a_3d_kernel_as_its_2d_form)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    const int64_t xd[3] = {1, 16, 8}, wd[2] = {8, 4}, bd[1] = {4};
    xf_graph g[2]; /* [0]: x [16, 8]; [1]: x [1, 16, 8] */
    for (int r = 0; r < 2; r++) {
        xf_graph_init(&g[r]);
        int x = xf_test_input(&g[r], "x", 2 + r, xd + 1 - r);
        int y = xf_test_op2(&g[r], XF_OP_MATMUL, NULL, x, xf_test_weight(&g[r], "w", 2, wd, 1));
        y = xf_test_op2(&g[r], XF_OP_ADD, NULL, y, xf_test_weight(&g[r], "b", 1, bd, 2));
        xf_test_out(&g[r], xf_test_op2(&g[r], XF_OP_TANH, NULL, y, -1));
    }
    for (int ort = 1; ort >= 0; ort--) {
        xf_costmemo *m = NULL;
        ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
        if (ort) xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
        xf_op_cost per[2][8];
        double total[2];
        total[0] = xf_fx_graph_costs(m, &g[0], per[0], 8);
        int64_t measured = xf_cost_measurements(cm);
        total[1] = xf_fx_graph_costs(m, &g[1], per[1], 8);
        if (ort) {
            ck_assert_int_eq(xf_cost_measurements(cm), measured);
            double wrap = 4.0 * (16 * 8 + 16 * 4) / (XF_ORT_LAYOUT_GBPS * 1e6);
            ck_assert_double_eq_tol(per[1][0].ms, per[0][0].ms + wrap, 1e-12);
            for (int i = 1; i < 3; i++) ck_assert_double_eq_tol(per[1][i].ms, per[0][i].ms, 1e-12);
            ck_assert_double_lt(total[0], total[1]);
        } else {
            ck_assert_int_gt(xf_cost_measurements(cm), measured);
        }
        xf_costmemo_free(m);
    }
    for (int r = 0; r < 2; r++) xf_graph_free(&g[r]);
    xf_cost_close(cm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_ort_costs");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ort_fuses_a_scale_next_to_a_matmul);
    tcase_add_test(tc, ort_never_wraps_a_matmul_into_an_output);
    tcase_add_test(tc, ort_prices_a_3d_kernel_as_its_2d_form);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
