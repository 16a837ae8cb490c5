/*
 * test_bench_rebatch.c — bench/rebatch.py, which makes the batch-4 and
 * symbolic-batch models of issue 28's acceptance table from models exported
 * at one batch (bench_passes runs it):
 *   - bert_small (../shared, batch 1) at batch 4 and with a symbolic batch
 *     computes, row by row, what the batch-1 model computes: the shared test
 *     data repeated four times, run by the reference interpreter;
 *   - a modelzoo ViT at batch 2 (its class token an Expand to [2, 1, H]) with
 *     its batch symbolic computes what the batch-2 model does, in ONNX
 *     Runtime, and its first input's batch is a dim_param;
 *   - bad arguments and a model without a numeric batch are refused.
 * Skipped, visibly, without /usr/bin/python3's onnx, ../shared or ONNX
 * Runtime (each case says which).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "target/target.h"
#include "testutil.h"

static const char *script(void)
{
    static char path[4096];
    const char *src = getenv("XF_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/bench/rebatch.py", src ? src : ".");
    return path;
}

static int rebatch(const char *in, const char *out, const char *batch)
{
    return xf_test_system("/usr/bin/python3 '%s' '%s' '%s' %s > /dev/null 2>&1", script(), in,
                          out, batch);
}

/* The shared test data of bert_small repeated `times` along the batch. */
static const char *repeated_data(const char *from, int times)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("data_b4"));
    ck_assert_int_eq(
        xf_test_system(
            "/usr/bin/python3 -c \"import onnx, os, sys, glob, numpy as np; "
            "from onnx import numpy_helper as h; os.makedirs(sys.argv[2], exist_ok=True); "
            "[open(os.path.join(sys.argv[2], os.path.basename(p)), 'wb').write(h.from_array("
            "np.repeat(h.to_array(onnx.load_tensor(p)), int(sys.argv[3]), axis=0), "
            "onnx.load_tensor(p).name).SerializeToString()) "
            "for p in glob.glob(os.path.join(sys.argv[1], '*.pb'))]\" '%s' '%s' %d",
            from, dir, times),
        0);
    return dir;
}

START_TEST(bert_small_batch4_and_symbolic)
{
    if (!xf_test_have_python("onnx")) XF_SKIP("/usr/bin/python3 has no onnx module");
    const char *models = xf_test_models_dir();
    if (!models) XF_SKIP("no ../shared/models");
    char in[4096], data[4096], b4[4096], sym[4096];
    snprintf(in, sizeof in, "%s/bert_small/model.onnx", models);
    snprintf(data, sizeof data, "%s/bert_small/test_data_set_0", models);
    snprintf(b4, sizeof b4, "%s", xf_test_tmp("bert_small_b4.onnx"));
    snprintf(sym, sizeof sym, "%s", xf_test_tmp("bert_small_sym.onnx"));
    ck_assert_int_eq(rebatch(in, b4, "4"), 0);
    ck_assert_int_eq(rebatch(in, sym, "sym"), 0);
    const char *data4 = repeated_data(data, 4);
    /* xfonnx run compares with the repeated outputs (exit 1 when they differ) */
    ck_assert_int_eq(xf_test_system("'%s' run '%s' --data '%s' > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), b4, data4),
                     0);
    ck_assert_int_eq(xf_test_system("'%s' run '%s' --data '%s' > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), sym, data4),
                     0);
    /* the batch-1 file does not take the batch-4 data: the check can fail */
    ck_assert_int_ne(xf_test_system("'%s' run '%s' --data '%s' > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), in, data4),
                     0);
    ck_assert_int_eq(xf_test_system("'%s' info '%s' | grep -q 'batch'", xf_test_tool("xfonnx"),
                                    sym),
                     0);
}
END_TEST

START_TEST(vit_class_token_symbolic)
{
    if (!xf_test_have_python("onnx")) XF_SKIP("/usr/bin/python3 has no onnx module");
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("no ONNX Runtime");
    xf_target_close(t);
    char b2[4096], sym[4096];
    snprintf(b2, sizeof b2, "%s", xf_test_tmp("vit_b2.onnx"));
    snprintf(sym, sizeof sym, "%s", xf_test_tmp("vit_sym.onnx"));
    ck_assert_int_eq(xf_test_system("'%s' vit --batch 2 --layers 1 --hidden 32 --heads 2 "
                                    "--image 32 --patch 16 -o '%s' > /dev/null 2>&1",
                                    xf_test_tool("modelzoo"), b2),
                     0);
    ck_assert_int_eq(rebatch(b2, sym, "sym"), 0);
    ck_assert_int_eq(xf_test_system("'%s' info '%s' | grep -q 'batch'", xf_test_tool("xfonnx"),
                                    sym),
                     0);
    /* the symbolic file at batch 2 computes what the batch-2 file does,
     * and at batch 3 it runs at all (the class token follows the input) */
    ck_assert_int_eq(xf_test_system("'%s' compare '%s' '%s' --dim batch=2 > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), sym, b2),
                     0);
    ck_assert_int_eq(xf_test_system("'%s' time '%s' --dim batch=3 --rounds 2 --reps 2 > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), sym),
                     0);
}
END_TEST

START_TEST(refusals)
{
    if (!xf_test_have_python("onnx")) XF_SKIP("/usr/bin/python3 has no onnx module");
    const char *out = xf_test_tmp("refused.onnx");
    ck_assert_int_eq(rebatch("/nonexistent.onnx", out, "x"), 2);
    ck_assert_int_eq(rebatch("/nonexistent.onnx", out, "0"), 2);
    /* a symbolic batch has no number to rewrite */
    char sym[4096];
    snprintf(sym, sizeof sym, "%s", xf_test_tmp("vit_b2_again.onnx"));
    ck_assert_int_eq(xf_test_system("'%s' vit --batch 2 --layers 1 --hidden 32 --heads 2 "
                                    "--image 32 --patch 16 -o '%s' > /dev/null 2>&1",
                                    xf_test_tool("modelzoo"), sym),
                     0);
    char sym2[4096];
    snprintf(sym2, sizeof sym2, "%s", xf_test_tmp("vit_sym2.onnx"));
    ck_assert_int_eq(rebatch(sym, sym2, "sym"), 0);
    ck_assert_int_eq(rebatch(sym2, out, "4"), 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bench_rebatch");
    TCase *t = tcase_create("rebatch");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, bert_small_batch4_and_symbolic);
    tcase_add_test(t, vit_class_token_symbolic);
    tcase_add_test(t, refusals);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
