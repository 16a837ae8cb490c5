/*
 * test_bench_attention_form.c — bench/attention_form.py, which writes a
 * transformer with a symbolic batch so that ONNX Runtime runs each attention
 * as one com.microsoft Attention kernel (the measurement of
 * docs/log/target.md, 2026-11-30, "what ONNX Runtime's CPU attention would
 * give"):
 *   - a modelzoo BERT (symbolic batch) in the `fused` form is standard ONNX at
 *     opset 12 that ONNX Runtime's own optimiser turns into one Attention per
 *     layer, with no SkipLayerNormalization; the `control` form fuses no
 *     Attention; both compute the input's outputs at batch 2 and 3;
 *   - the `contrib` form of a modelzoo GPT (causal) computes its outputs;
 *   - a GPT in the BERT-only forms, and bad arguments, are refused.
 * Skipped, visibly, without /usr/bin/python3's onnx or ONNX Runtime.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "target/target.h"
#include "testutil.h"

static int attention_form(const char *in, const char *out, const char *form)
{
    const char *src = getenv("XF_SOURCE_DIR");
    return xf_test_system("/usr/bin/python3 '%s/bench/attention_form.py' '%s' '%s' %s > /dev/null 2>&1",
                          src ? src : ".", in, out, form);
}

/* A modelzoo model of `name` (one layer pair, small) with its batch symbolic. */
static const char *symbolic_zoo(const char *name)
{
    static char sym[4096];
    char b2[4096];
    snprintf(b2, sizeof b2, "%s", xf_test_tmp(name));
    strncat(b2, "_b2.onnx", sizeof b2 - strlen(b2) - 1);
    snprintf(sym, sizeof sym, "%s", xf_test_tmp(name));
    strncat(sym, "_sym.onnx", sizeof sym - strlen(sym) - 1);
    ck_assert_int_eq(xf_test_system("'%s' %s --batch 2 --layers 2 --hidden 32 --heads 2 --seq 8 "
                                    "--vocab 50 -o '%s' > /dev/null 2>&1",
                                    xf_test_tool("modelzoo"), name, b2),
                     0);
    const char *src = getenv("XF_SOURCE_DIR");
    ck_assert_int_eq(xf_test_system("/usr/bin/python3 '%s/bench/rebatch.py' '%s' '%s' sym > /dev/null 2>&1",
                                    src ? src : ".", b2, sym),
                     0);
    return sym;
}

/* How many nodes of `op_type` ONNX Runtime's optimised graph of `model` has. */
static int ort_count(const char *model, const char *op_type)
{
    char ort[4096];
    snprintf(ort, sizeof ort, "%s.ort.onnx", model);
    ck_assert_int_eq(xf_test_system("'%s' ort-optimize '%s' -o '%s' --opt all --threads 1 > /dev/null 2>&1",
                                    xf_test_tool("xfonnx"), model, ort),
                     0);
    char counted[4096];
    snprintf(counted, sizeof counted, "%s.count", model);
    ck_assert_int_eq(
        xf_test_system("/usr/bin/python3 -c \"import onnx, sys; "
                       "print(sum(n.op_type == sys.argv[2] for n in onnx.load(sys.argv[1]).graph.node))\" "
                       "'%s' %s > '%s'",
                       ort, op_type, counted),
        0);
    FILE *f = fopen(counted, "r");
    ck_assert_ptr_nonnull(f);
    int n = -1;
    ck_assert_int_eq(fscanf(f, "%d", &n), 1);
    fclose(f);
    return n;
}

static int same_outputs(const char *a, const char *b, int batch)
{
    return xf_test_system("'%s' compare '%s' '%s' --dim batch=%d > /dev/null 2>&1",
                          xf_test_tool("xfonnx"), a, b, batch);
}

static void require_tools(void)
{
    if (!xf_test_have_python("onnx")) XF_SKIP("/usr/bin/python3 has no onnx module");
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("no ONNX Runtime");
    xf_target_close(t);
}

START_TEST(bert_fused_is_one_attention_per_layer)
{
    require_tools();
    const char *sym = symbolic_zoo("bert");
    char fused[4096], control[4096];
    snprintf(fused, sizeof fused, "%s", xf_test_tmp("bert_fused.onnx"));
    snprintf(control, sizeof control, "%s", xf_test_tmp("bert_control.onnx"));
    ck_assert_int_eq(attention_form(sym, fused, "fused"), 0);
    ck_assert_int_eq(attention_form(sym, control, "control"), 0);
    /* the input itself gets no Attention from ONNX Runtime */
    ck_assert_int_eq(ort_count(sym, "Attention"), 0);
    ck_assert_int_eq(ort_count(fused, "Attention"), 2);
    ck_assert_int_eq(ort_count(fused, "SkipLayerNormalization"), 0);
    ck_assert_int_eq(ort_count(control, "Attention"), 0);
    ck_assert_int_eq(ort_count(control, "SkipLayerNormalization"), 0);
    for (int batch = 2; batch <= 3; batch++) {
        ck_assert_int_eq(same_outputs(sym, fused, batch), 0);
        ck_assert_int_eq(same_outputs(sym, control, batch), 0);
    }
}
END_TEST

START_TEST(gpt_contrib_is_causal_attention)
{
    require_tools();
    const char *sym = symbolic_zoo("gpt");
    char contrib[4096];
    snprintf(contrib, sizeof contrib, "%s", xf_test_tmp("gpt_contrib.onnx"));
    ck_assert_int_eq(attention_form(sym, contrib, "contrib"), 0);
    ck_assert_int_eq(ort_count(contrib, "Attention"), 2);
    ck_assert_int_eq(same_outputs(sym, contrib, 3), 0);
}
END_TEST

START_TEST(refusals)
{
    if (!xf_test_have_python("onnx")) XF_SKIP("/usr/bin/python3 has no onnx module");
    const char *out = xf_test_tmp("refused.onnx");
    ck_assert_int_eq(attention_form("/nonexistent.onnx", out, "other"), 2);
    /* GPT's merged Q/K/V and causal Where are not the BERT layout */
    const char *gpt = symbolic_zoo("gpt");
    ck_assert_int_eq(attention_form(gpt, out, "fused"), 1);
    ck_assert_int_eq(attention_form(gpt, out, "control"), 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("bench_attention_form");
    TCase *t = tcase_create("attention_form");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, bert_fused_is_one_attention_per_layer);
    tcase_add_test(t, gpt_contrib_is_causal_attention);
    tcase_add_test(t, refusals);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
