/*
 * test_agent_gelu.c — the GELU fusion of xf_agent_prepare
 * (agent/rewrite/fuse_gelu.c): the erf form x * 0.5 * (1 + erf(x / √2)) an
 * exporter writes, with the divide or a multiply by 1/√2 and the 0.5 beside
 * x or after the product, becomes one gelu node keeping the function; a chain whose intermediate value is read elsewhere, or with
 * another constant, stays. Finished and written, the model has the form ONNX
 * Runtime fuses: its optimiser leaves no Erf (the same model prepared without
 * the fusion, its scalings made scalar_mul, keeps Erf unfused: what the
 * fusion is for). Skips the ONNX Runtime half when the library is absent.
 */
#include <stdio.h>

#include "agent/rewrite/rewrite.h"
#include "onnx/onnx.h"
#include "target/target.h"
#include "testutil.h"

/* x * 0.5 * (1 + erf(x * s)) written with `div` (x / √2) or a multiply by
 * 1/√2, and with the 0.5 first ((x * 0.5) * a) or last ((x * a) * 0.5). */
static int gelu_chain(xf_graph *g, int x, int div, int half_first, float sqrt2, const char *tag)
{
    char n[64];
    snprintf(n, sizeof n, "%s_s", tag);
    int d = div ? xf_test_op2(g, XF_OP_DIV, NULL, x, xf_test_scalar(g, n, sqrt2))
                : xf_test_op2(g, XF_OP_MUL, NULL, xf_test_scalar(g, n, 1.0f / sqrt2), x);
    snprintf(n, sizeof n, "%s_one", tag);
    int a = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_scalar(g, n, 1.0f),
                        xf_test_op2(g, XF_OP_ERF, NULL, d, -1));
    snprintf(n, sizeof n, "%s_half", tag);
    int h = xf_test_scalar(g, n, 0.5f);
    if (half_first) return xf_test_op2(g, XF_OP_MUL, NULL, xf_test_op2(g, XF_OP_MUL, NULL, h, x), a);
    return xf_test_op2(g, XF_OP_MUL, NULL, xf_test_op2(g, XF_OP_MUL, NULL, x, a), h);
}

/* x[2,3,8] @ w1 + b -> GELU (divide, 0.5 last) -> @ w2 -> GELU (multiply by
 * 1/√2, 0.5 first) -> @ w3: the FFN of a transformer twice over. */
static void build(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 3, (int64_t[]){2, 3, 8});
    int y = xf_test_op2(g, XF_OP_MATMUL, NULL, x, xf_test_weight(g, "w1", 2, (int64_t[]){8, 16}, 1));
    y = xf_test_op2(g, XF_OP_ADD, NULL, y, xf_test_weight(g, "b1", 1, (int64_t[]){16}, 2));
    y = gelu_chain(g, y, 1, 0, 1.41421356f, "g1");
    y = xf_test_op2(g, XF_OP_MATMUL, NULL, y, xf_test_weight(g, "w2", 2, (int64_t[]){16, 16}, 3));
    y = gelu_chain(g, y, 0, 1, 1.41421356f, "g2");
    y = xf_test_op2(g, XF_OP_MATMUL, NULL, y, xf_test_weight(g, "w3", 2, (int64_t[]){16, 8}, 4));
    xf_test_out(g, y);
}

START_TEST(erf_gelus_become_one_node)
{
    xf_graph model, work;
    xf_error err;
    build(&model);
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&model, NULL, &work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(&work, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.fused_gelus, 2);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_GELU), 2);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_ERF), 0);
    /* nothing of the chains is left for the scalings to move */
    ck_assert_int_eq(ps.scalar_muls, 0);
    ck_assert_int_eq(work.n_nodes, 6); /* 3 matmuls, the bias add, 2 gelus */
    xf_test_expect_same_function(&model, &work, 5, 1e-5);
    /* off: the chains stay (and their scalings become scalar_mul) */
    xf_graph plain;
    xf_prepare_options po = xf_prepare_options_default();
    ck_assert_int_eq(po.fuse_gelu, 1);
    po.fuse_gelu = 0;
    ck_assert_msg(xf_agent_prepare(&model, &po, &plain, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.fused_gelus, 0);
    ck_assert_int_eq(xf_test_count_op(&plain, XF_OP_ERF), 2);
    ck_assert_int_eq(ps.scalar_muls, 4);
    xf_graph_free(&plain);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(near_misses_stay)
{
    xf_graph g, work;
    xf_error err;
    xf_graph_init(&g);
    int x = xf_test_input(&g, "x", 2, (int64_t[]){4, 8});
    /* not √2: another function */
    int y = gelu_chain(&g, x, 1, 0, 1.5f, "off");
    /* an intermediate read twice (erf's input also an output) */
    int d = xf_test_op2(&g, XF_OP_DIV, NULL, y, xf_test_scalar(&g, "s", 1.41421356f));
    int a = xf_test_op2(&g, XF_OP_ADD, NULL, xf_test_op2(&g, XF_OP_ERF, NULL, d, -1),
                        xf_test_scalar(&g, "one", 1.0f));
    int m = xf_test_op2(&g, XF_OP_MUL, NULL, y, a);
    xf_test_out(&g, xf_test_op2(&g, XF_OP_MUL, NULL, m, xf_test_scalar(&g, "half", 0.5f)));
    xf_test_out(&g, d);
    xf_prepare_options po = xf_prepare_options_default();
    po.scalar_mul = 0;
    xf_prepare_stats ps;
    ck_assert_msg(xf_agent_prepare(&g, &po, &work, &ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ps.fused_gelus, 0);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_ERF), 2);
    ck_assert_uint_eq(xf_graph_hash(&work), xf_graph_hash(&g));
    xf_graph_free(&work);
    xf_graph_free(&g);
}
END_TEST

/* Prepares model with po, finishes it, writes it and has ONNX Runtime
 * optimise it; the number of Erf nodes left in ONNX Runtime's graph. */
static int erfs_after_ort(xf_target *t, const xf_graph *model, const xf_prepare_options *po,
                          const char *name)
{
    xf_graph work, fin, opt;
    xf_error err;
    ck_assert_msg(xf_agent_prepare(model, po, &work, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_agent_finish(&work, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(model, &fin, 7, 1e-5);
    char in[256], out[256];
    snprintf(in, sizeof in, "%s", xf_test_tmp(name));
    snprintf(out, sizeof out, "%s.opt.onnx", in);
    ck_assert_msg(xf_onnx_save(&fin, in, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_target_write_optimized(t, in, out, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_load(out, NULL, &opt, &err) == XF_OK, "%s", err.msg);
    int n = xf_test_count_op(&opt, XF_OP_ERF);
    xf_graph_free(&opt);
    xf_graph_free(&fin);
    xf_graph_free(&work);
    return n;
}

START_TEST(written_in_the_form_onnx_runtime_fuses)
{
    xf_target_options o = xf_target_default_options();
    o.threads = 1;
    xf_target *t = NULL;
    xf_error err;
    xf_status s = xf_target_open(&o, &t, &err);
    if (s == XF_ERR_UNSUPPORTED) XF_SKIP("onnxruntime not installed (tools/setup.sh): %s", err.msg);
    ck_assert_msg(s == XF_OK, "%s", err.msg);
    xf_graph model;
    build(&model);
    xf_prepare_options po = xf_prepare_options_default();
    ck_assert_int_eq(erfs_after_ort(t, &model, &po, "gelu_fused.onnx"), 0);
    po.fuse_gelu = 0;
    ck_assert_int_eq(erfs_after_ort(t, &model, &po, "gelu_scaled.onnx"), 2);
    xf_graph_free(&model);
    xf_target_close(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_gelu");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, erf_gelus_become_one_node);
    tcase_add_test(t, near_misses_stay);
    tcase_add_test(t, written_in_the_form_onnx_runtime_fuses);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
