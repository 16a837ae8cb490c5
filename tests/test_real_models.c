/*
 * test_real_models.c — the models published by others in
 * ../shared/models/real (see its README): PaddleOCR's opset-9 text-direction
 * classifier and opset-11 v4 detector (Clip, HardSigmoid, Resize,
 * ConvTranspose), openWakeWord's classifier (opset 13) and Silero VAD (If
 * with LSTM subgraphs, opset 16), through the xfonnx tool as a user runs
 * it: the interpreter's outputs equal ONNX Runtime's reference outputs
 * (1e-4 relative to max |output|), the round trip keeps the graph and its
 * outputs and writes a model onnx.checker accepts, and Silero's If, which
 * the interpreter cannot run, is reported by name. The round trip and
 * rlflow-agent --search taso (with proved rules) keep every symbolic input
 * dim, and their outputs agree at three sizes of each. Without ../shared
 * the cases skip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"

typedef struct real_model {
    const char *dir;
    const char *dims; /* --dim options for the test data's sizes */
    int runs;         /* the interpreter runs every node */
    const char *syms[4]; /* its symbolic input dims */
} real_model;

static const real_model models[] = {
    {"ppocr_mobile_cls",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 "
     "--dim p2o.DynamicDimension.2=192",
     1,
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2", NULL}},
    {"ppocr_v4_det",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=160 "
     "--dim p2o.DynamicDimension.2=160",
     1,
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2", NULL}},
    {"openwakeword_hello", "", 1, {NULL}},
    {"silero_vad_legacy", "--dim batch=1 --dim sequence=512", 0, {"batch", "sequence", NULL}},
};
#define N_MODELS ((int)(sizeof models / sizeof models[0]))

/* Path of the model's directory (static buffer), or NULL when absent. */
static const char *model_dir(const real_model *m)
{
    static char buf[4096];
    const char *root = xf_test_models_dir();
    if (!root) return NULL;
    snprintf(buf, sizeof buf, "%s/real/%s", root, m->dir);
    struct stat st;
    return stat(buf, &st) == 0 ? buf : NULL;
}

/* Runs `xfonnx ARGS` with stdout and stderr into a file; returns its exit
 * status and the output (caller frees). */
static int xfonnx(char **text, const char *label, const char *fmt, const char *a, const char *b,
                  const char *c)
{
    char args[8192], log[4096];
    snprintf(args, sizeof args, fmt, a, b, c);
    snprintf(log, sizeof log, "%s", xf_test_tmp(label));
    int rc = xf_test_system("%s %s > %s 2>&1", xf_test_tool("xfonnx"), args, log);
    size_t len;
    *text = xf_test_read_file(log, &len);
    return rc;
}

START_TEST(run_matches_onnxruntime)
{
    const real_model *m = &models[_i];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char *out, label[128];
    snprintf(label, sizeof label, "run_%s.log", m->dir);
    int rc = xfonnx(&out, label, "run %s/model.onnx --data %s/test_data_set_0 %s", dir, dir,
                    m->dims);
    if (m->runs) {
        ck_assert_msg(rc == 0, "xfonnx run %s: exit %d\n%s", m->dir, rc, out);
        xf_test_expect_contains(out, "outputs match the expected data");
    } else {
        /* the opaque If cannot run: exit 1 with the node named */
        ck_assert_msg(rc == 1, "xfonnx run %s: exit %d\n%s", m->dir, rc, out);
        xf_test_expect_contains(out, "'If_25' (If)");
        xf_test_expect_contains(out, "opaque");
    }
    free(out);
}
END_TEST

/* Every symbolic dim named in the tool's report (fmt: its line for one
 * dim) and declared by the written model: xfonnx info on it, sizing
 * nothing, warns about each. */
static void expect_dims_kept(const real_model *m, const char *report, const char *fmt,
                             const char *written)
{
    char *info;
    xfonnx(&info, "info_written.log", "info %s%s%s", written, "", "");
    for (int i = 0; m->syms[i]; i++) {
        char want[256];
        snprintf(want, sizeof want, fmt, m->syms[i]);
        xf_test_expect_contains(report, want);
        snprintf(want, sizeof want, "symbolic dimension '%s'", m->syms[i]);
        xf_test_expect_contains(info, want);
    }
    free(info);
}

START_TEST(round_trip_keeps_graph_and_outputs)
{
    const real_model *m = &models[_i];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char *out, label[128], written[4096];
    snprintf(label, sizeof label, "rt_%s.onnx", m->dir);
    snprintf(written, sizeof written, "%s", xf_test_tmp(label));
    snprintf(label, sizeof label, "rt_%s.log", m->dir);
    int rc = xfonnx(&out, label, "roundtrip %s/model.onnx -o %s %s", dir, written, m->dims);
    ck_assert_msg(rc == 0, "xfonnx roundtrip %s: exit %d\n%s", m->dir, rc, out);
    xf_test_expect_contains(out, "(equal)");
    expect_dims_kept(m, out, "symbolic dim %-24s kept", written);
    if (m->runs) {
        xf_test_expect_contains(out, m->syms[0] ? "same graph, same outputs at three sizes"
                                                : "round trip ok: same graph, same outputs");
        /* Silero is left out: onnx 1.12's checker rejects the published
         * file itself (outer-scope initializers used in If branches) */
        xf_test_onnx_checker(written);
    } else {
        xf_test_expect_contains(out, "numerical check skipped");
    }
    free(out);
}
END_TEST

/* Proved rules for the agent: xfergen's 2-operator TASO rules, the first
 * 40 proved by xferverify (made once per run of the suite). */
static const char *rules_db(void)
{
    static char db[4096];
    if (db[0]) return db;
    snprintf(db, sizeof db, "%s", xf_test_tmp("real_rules.db"));
    xf_test_remove_db(db);
    ck_assert_int_eq(xf_test_system("%s --max-ops 2 --vocab taso -j 1 -o %s --quiet",
                                    xf_test_tool("xfergen"), db),
                     0);
    ck_assert_int_eq(xf_test_system("%s %s --limit 40 -j 2 > /dev/null 2>&1",
                                    xf_test_tool("xferverify"), db),
                     0);
    return db;
}

/* rlflow-agent --search taso writes a model that keeps the original's
 * symbolic dims and passes the check at three sizes of each (Silero's If
 * cannot run in the interpreter: left to the round trip). */
START_TEST(agent_keeps_symbolic_dims)
{
    const real_model *m = &models[_i];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    if (!m->runs) XF_SKIP("real/%s has nodes the interpreter cannot run", m->dir);
    char label[128], written[4096], log[4096];
    snprintf(label, sizeof label, "agent_%s.onnx", m->dir);
    snprintf(written, sizeof written, "%s", xf_test_tmp(label));
    snprintf(label, sizeof label, "agent_%s.log", m->dir);
    snprintf(log, sizeof log, "%s", xf_test_tmp(label));
    int rc = xf_test_system("%s --rules %s %s/model.onnx -o %s --search taso --budget 20 %s "
                            "--backend analytic --cache none --no-latency -q > %s 2>&1",
                            xf_test_tool("rlflow-agent"), rules_db(), dir, written, m->dims, log);
    char *out = xf_test_read_file(log, NULL);
    ck_assert_msg(rc == 0, "rlflow-agent %s: exit %d\n%s", m->dir, rc, out);
    expect_dims_kept(m, out, "symbolic dim:    %s kept, checked at", written);
    if (m->syms[0]) xf_test_expect_contains(out, "sizes check:     max output err");
    ck_assert_msg(!strstr(out, "instead"), "%s: the input was written:\n%s", m->dir, out);
    xf_test_onnx_checker(written);
    free(out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("real_models");
    TCase *t = tcase_create("models");
    tcase_set_timeout(t, 600);
    tcase_add_loop_test(t, run_matches_onnxruntime, 0, N_MODELS);
    tcase_add_loop_test(t, round_trip_keeps_graph_and_outputs, 0, N_MODELS);
    tcase_add_loop_test(t, agent_keeps_symbolic_dims, 0, N_MODELS);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
