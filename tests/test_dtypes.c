/*
 * test_dtypes.c — models of other dtypes and other domains (issue 33):
 * float16, float64 and QDQ int8 models, and com.microsoft operators as
 * ONNX Runtime's optimiser writes them. Each model is made by
 * tests/models/make_dtype_models.py (python3-onnx) from a small MLP it
 * builds, or from a shared model (skipped, visibly, when ../shared or
 * Python's onnx is absent), then:
 *   - `xfonnx roundtrip` writes it with the same graph; its outputs are
 *     compared in the interpreter where it runs them (QDQ: its
 *     QuantizeLinear/DequantizeLinear kernels), else in ONNX Runtime, and
 *     the report says which;
 *   - `rlflow-agent` optimises it with a proved 2-operator database and
 *     the written model equals the input in ONNX Runtime;
 *   - the interpreter's QuantizeLinear/DequantizeLinear kernels agree with
 *     ONNX Runtime on a QDQ model;
 *   - ONNX's integer operators (QLinearMatMul, MatMulInteger, QLinearConv)
 *     are kept opaque with their shapes and compared in ONNX Runtime;
 *   - a custom-domain node without shape information is refused with an
 *     error naming the node.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "target/target.h"
#include "testutil.h"

static char db_path[4096], log_path[4096];
static char *output;

static const char *script(void)
{
    static char path[4096];
    const char *src = getenv("XF_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/models/make_dtype_models.py", src ? src : ".");
    return path;
}

/* Runs a tool with output captured into `output`; its exit status. */
static int tool(const char *name, const char *fmt, ...) XF_PRINTF(2, 3);
static int tool(const char *name, const char *fmt, ...)
{
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    free(output);
    output = NULL;
    int rc = xf_test_system("'%s' %s > '%s' 2>&1", xf_test_tool(name), args, log_path);
    output = xf_test_read_file(log_path, NULL);
    return rc;
}

/* Makes scratch model `name` with the script ("mlp OUT", "fp16 IN OUT"...). */
static const char *make(const char *name, const char *how, const char *from)
{
    static char out[4][4096];
    static int k;
    char *path = out[k++ % 4];
    snprintf(path, 4096, "%s", xf_test_tmp(name));
    int rc = from ? xf_test_system("/usr/bin/python3 '%s' %s '%s' '%s'", script(), how, from, path)
                  : xf_test_system("/usr/bin/python3 '%s' %s '%s'", script(), how, path);
    ck_assert_msg(rc == 0, "make_dtype_models.py %s %s failed", how, name);
    return path;
}

static void build_db(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules2.db"));
    snprintf(log_path, sizeof log_path, "%s", xf_test_tmp("tool.out"));
    xf_test_remove_db(db_path);
    ck_assert_int_eq(xf_test_system("'%s' --max-ops 2 -o '%s' --quiet > /dev/null 2>&1",
                                    xf_test_tool("xfergen"), db_path),
                     0);
    ck_assert_int_eq(xf_test_system("'%s' -j 2 '%s' > /dev/null 2>&1", xf_test_tool("xferverify"),
                                    db_path),
                     0);
}

static int have_python_onnx(void)
{
    return xf_test_have_python("onnx") && xf_test_have_python("numpy");
}

/* Round trip, optimisation, and the written model equal in ONNX Runtime;
 * `by_ort` 1: the interpreter cannot run it, and the reports say that ONNX
 * Runtime compared them; 2: the same, and the input is a model ONNX
 * Runtime wrote, which onnx.checker refuses (ORT puts its
 * SimplifiedLayerNormalization in the ONNX domain), so the output is not
 * given to it either. */
static void expect_roundtrip_and_optimise(const char *model, const char *tag, int by_ort)
{
    char rt[4096], opt[4096];
    snprintf(rt, sizeof rt, "%s", xf_test_tmp(tag));
    snprintf(opt, sizeof opt, "%s.opt.onnx", rt);
    strncat(rt, ".rt.onnx", sizeof rt - strlen(rt) - 1);
    ck_assert_msg(tool("xfonnx", "roundtrip '%s' -o '%s'", model, rt) == 0, "%s", output);
    xf_test_expect_contains(output, "round trip ok: same graph");
    if (by_ort)
        xf_test_expect_contains(output, "numerical check in ONNX Runtime");
    else
        xf_test_expect_contains(output, "same outputs");
    /* the analytic cost model: nothing timed, no cost cache written */
    ck_assert_msg(tool("rlflow-agent",
                       "--rules '%s' '%s' -o '%s' --search greedy --backend analytic "
                       "--cache none --no-latency -q",
                       db_path, model, opt) == 0,
                  "%s", output);
    xf_test_expect_contains(output, "written:");
    if (by_ort) xf_test_expect_contains(output, "in ONNX Runtime (the interpreter cannot run");
    ck_assert_msg(tool("xfonnx", "compare '%s' '%s' --threads 1", model, opt) == 0, "%s", output);
    xf_test_expect_contains(output, ": equal");
    if (by_ort < 2) xf_test_onnx_checker(opt);
}

/* The interpreter's outputs on model equal ONNX Runtime's (same inputs). */
static void expect_interp_as_ort(const char *path, double tol)
{
    xf_target *t = xf_fx_target();
    if (!t) {
        xf_test_skip_part("ONNX Runtime is not available");
        return;
    }
    xf_graph g;
    xf_error err;
    xf_onnx_options io = xf_onnx_default_options();
    ck_assert_msg(xf_onnx_load(path, &io, &g, &err) == XF_OK, "%s", err.msg);
    xf_tensor *in = xf_tensor_array_alloc(g.n_inputs), *ours = xf_tensor_array_alloc(g.n_outputs),
              *theirs = xf_tensor_array_alloc(g.n_outputs);
    ck_assert_msg(xf_graph_random_inputs(&g, 1, in, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(&g, in, g.n_inputs, ours, &err) == XF_OK, "%s", err.msg);
    xf_target_model *m = NULL;
    ck_assert_msg(xf_target_model_load_file(t, path, &g, 1, &m, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_target_model_run(m, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_target_model_outputs(m, theirs, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < g.n_outputs; i++) {
        double ma = 0, mr = 0;
        ck_assert_msg(xf_tensor_compare(&ours[i], &theirs[i], &ma, &mr, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_msg(xf_tensor_close(&ours[i], &theirs[i], tol, tol),
                      "%s: output %d: interpreter and ONNX Runtime differ by %g", path, i, ma);
    }
    xf_target_model_free(m);
    xf_tensor_array_free(in, g.n_inputs);
    xf_tensor_array_free(ours, g.n_outputs);
    xf_tensor_array_free(theirs, g.n_outputs);
    xf_graph_free(&g);
    xf_target_close(t);
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

/* float16 and float64 through the half conversions: exact on what fits. */
START_TEST(half_conversions)
{
    const float v[] = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.1f};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        float back = xf_f16_to_f32(xf_f32_to_f16(v[i]));
        if (i == 7)
            ck_assert_msg(back == 0.0999755859375f, "0.1 rounds to %.10g", (double)back);
        else
            ck_assert_msg(back == v[i], "%g comes back as %g", (double)v[i], (double)back);
    }
    ck_assert_uint_eq(xf_f32_to_f16(1e6f), 0x7c00u);         /* overflow: infinity */
    ck_assert_uint_eq(xf_f32_to_f16(1.0009765625f), 0x3c01u); /* 1 + 2^-10 exactly */
    ck_assert_uint_eq(xf_f32_to_f16(1.00048828125f), 0x3c00u); /* a tie: to even */
    ck_assert_uint_eq(xf_dtype_size(XF_F16), 2);
    ck_assert_uint_eq(xf_dtype_size(XF_F64), 8);
    ck_assert_str_eq(xf_dtype_name(XF_U8), "uint8");
}
END_TEST

START_TEST(mlp_double)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *mlp = make("mlp.onnx", "mlp", NULL);
    expect_roundtrip_and_optimise(make("mlp64.onnx", "double", mlp), "mlp64", 1);
}
END_TEST

START_TEST(mlp_fp16)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *mlp = make("mlp.onnx", "mlp", NULL);
    const char *m16 = make("mlp16.onnx", "fp16", mlp);
    expect_roundtrip_and_optimise(m16, "mlp16", 1);
}
END_TEST

/* QDQ: the interpreter runs QuantizeLinear/DequantizeLinear (so the usual
 * check runs, and agrees with ONNX Runtime), rules apply between them. */
START_TEST(mlp_qdq)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *mlp = make("mlp.onnx", "mlp", NULL);
    const char *q = make("mlpq.onnx", "qdq", mlp);
    expect_roundtrip_and_optimise(q, "mlpq", 0);
    expect_interp_as_ort(q, 1e-5);
}
END_TEST

/* ONNX's integer operators (QLinearMatMul, MatMulInteger, QLinearConv)
 * stay opaque with shapes by rule; ONNX Runtime compares them. */
START_TEST(qlinear_ops)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *q = make("qlinear.onnx", "qlinear", NULL);
    ck_assert_msg(tool("xfonnx", "info '%s'", q) == 0, "%s", output);
    xf_test_expect_contains(output, "node 0 'q' (QuantizeLinear) domain '': runs (quantisation");
    xf_test_expect_contains(output, "'qlinear_conv' (QLinearConv) domain '': the interpreter cannot");
    expect_roundtrip_and_optimise(q, "qlinear", 1);
}
END_TEST

/* com.microsoft nodes without value_info: shapes by rule, written back with
 * their domain and its opset_import, equal in ONNX Runtime. */
START_TEST(ms_domain)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *ms = make("ms.onnx", "ms", NULL);
    expect_roundtrip_and_optimise(ms, "ms", 1);
    char rt[4096];
    snprintf(rt, sizeof rt, "%s", xf_test_tmp("ms.rt.onnx"));
    ck_assert_int_eq(xf_test_system("/usr/bin/python3 -c \"import onnx, sys; m = onnx.load('%s'); "
                                    "d = {o.domain: o.version for o in m.opset_import}; "
                                    "n = [x.op_type for x in m.graph.node if x.domain == "
                                    "'com.microsoft']; sys.exit(0 if d.get('com.microsoft') == 1 "
                                    "and sorted(n) == ['FusedMatMul', 'Gelu'] else 1)\"",
                                    rt),
                     0);
}
END_TEST

START_TEST(custom_domain_without_shapes)
{
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    const char *c = make("custom.onnx", "custom", NULL);
    ck_assert_int_eq(tool("xfonnx", "info '%s'", c), 2);
    xf_test_expect_contains(output, "node 1 'mystery' (Mystery): cannot infer the output shape");
    xf_test_expect_contains(output, "domain 'example.custom'");
}
END_TEST

/* Shared models: bert_small in float16, vit_tiny in QDQ int8 and both
 * after ONNX Runtime's offline optimisation (com.microsoft operators). */
START_TEST(shared_models)
{
    const char *dir = xf_test_models_dir();
    if (!dir) XF_SKIP("../shared/models is absent");
    if (!have_python_onnx()) XF_SKIP("/usr/bin/python3 has no onnx or numpy module");
    char bert[4096], vit[4096];
    snprintf(bert, sizeof bert, "%s/bert_small/model.onnx", dir);
    snprintf(vit, sizeof vit, "%s/vit_tiny/model.onnx", dir);
    expect_roundtrip_and_optimise(make("bert16.onnx", "fp16", bert), "bert16", 1);
    const char *vq = make("vitq.onnx", "qdq", vit);
    expect_roundtrip_and_optimise(vq, "vitq", 0);
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not available");
    xf_target_close(t);
    const char *names[2] = {bert, vit}, *tags[2] = {"bert_ort", "vit_ort"};
    for (int i = 0; i < 2; i++) {
        char ort[4096];
        snprintf(ort, sizeof ort, "%s", xf_test_tmp(tags[i]));
        strncat(ort, ".onnx", sizeof ort - strlen(ort) - 1);
        ck_assert_msg(tool("xfonnx", "ort-optimize '%s' -o '%s' --threads 1", names[i], ort) == 0,
                      "%s", output);
        expect_roundtrip_and_optimise(ort, tags[i], 2);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dtypes");
    TCase *t = tcase_create("dtypes");
    tcase_set_timeout(t, 600);
    tcase_add_unchecked_fixture(t, build_db, NULL); /* once, in the parent */
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_add_test(t, half_conversions);
    tcase_add_test(t, mlp_double);
    tcase_add_test(t, mlp_fp16);
    tcase_add_test(t, mlp_qdq);
    tcase_add_test(t, qlinear_ops);
    tcase_add_test(t, ms_domain);
    tcase_add_test(t, custom_domain_without_shapes);
    tcase_add_test(t, shared_models);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
