/*
 * test_real_models.c — the models published by others in
 * ../shared/models/real (see its README): PaddleOCR's opset-9 text-direction
 * classifier and opset-11 v4 detector (Clip, HardSigmoid, Resize,
 * ConvTranspose), openWakeWord's classifier (opset 13) and Silero VAD (If
 * with LSTM subgraphs, opset 16), through the xfonnx tool as a user runs
 * it: the interpreter's outputs equal ONNX Runtime's reference outputs
 * (1e-4 relative to max |output|), the round trip keeps the graph and its
 * outputs and writes a model onnx.checker accepts, and Silero's If, which
 * the interpreter cannot run, is reported by name. Without ../shared the
 * cases skip.
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
} real_model;

static const real_model models[] = {
    {"ppocr_mobile_cls",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=48 "
     "--dim p2o.DynamicDimension.2=192",
     1},
    {"ppocr_v4_det",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=160 "
     "--dim p2o.DynamicDimension.2=160",
     1},
    {"openwakeword_hello", "", 1},
    {"silero_vad_legacy", "--dim batch=1 --dim sequence=512", 0},
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
    if (m->runs) {
        xf_test_expect_contains(out, "round trip ok: same graph, same outputs");
        /* Silero is left out: onnx 1.12's checker rejects the published
         * file itself (outer-scope initializers used in If branches) */
        xf_test_onnx_checker(written);
    } else {
        xf_test_expect_contains(out, "numerical check skipped");
    }
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
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
