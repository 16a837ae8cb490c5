/*
 * test_real_models.c — the models published by others in
 * ../shared/models/real (see its README): PaddleOCR's opset-9 text-direction
 * classifier and opset-11 v4 detector (Clip, HardSigmoid, Resize,
 * ConvTranspose), openWakeWord's classifier (opset 13) and Silero VAD (If
 * with LSTM subgraphs, 1-D convolutions, opset 16), through the tools as a
 * user runs them: the interpreter's outputs equal ONNX Runtime's reference
 * outputs (1e-4 relative to max |output|), the round trip keeps the graph
 * and its outputs and writes a model onnx.checker accepts, and
 * rlflow-agent --search taso on Silero writes a model that passes its
 * numerical check and still reproduces the reference outputs, with a rule
 * that would match inside the If's branches (conv then relu) matching
 * nowhere: rules never see through opaque nodes; xfcost prices the If by
 * its costlier branch and times it on the interpreter. The round trip and
 * rlflow-agent --search taso (with proved rules) keep every symbolic input
 * dim, and their outputs agree at three sizes of each, also with the
 * weights in an external data file (--external-data); the models written
 * compute what the originals compute in ONNX Runtime at 1/2, 1, 2 and 3
 * times the test data's sizes (where the original admits them). xfonnx run
 * --data takes the sizes from the data, and rlflow-agent with no --dim
 * sizes the classifier by its size search and says so. Without ../shared
 * the cases skip.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "onnx/onnx.h"
#include "rulesdb/rulesdb.h"
#include "target/target.h"
#include "testutil.h"

typedef struct real_model {
    const char *dir;
    /* --dim options the round trip and the agent import it at: small sizes
     * the model admits (the checks run at up to three times them, also
     * under the sanitizers), not the test data's */
    const char *dims;
    const char *syms[4]; /* its symbolic input dims */
    int64_t sizes[4];    /* their sizes in dims */
    int64_t data[4];     /* their sizes in the test data */
} real_model;

static const real_model models[] = {
    {"ppocr_mobile_cls",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=64 "
     "--dim p2o.DynamicDimension.2=32",
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2", NULL},
     {1, 64, 32}, {1, 48, 192}},
    {"ppocr_v4_det",
     "--dim p2o.DynamicDimension.0=1 --dim p2o.DynamicDimension.1=64 "
     "--dim p2o.DynamicDimension.2=64",
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2", NULL},
     {1, 64, 64}, {1, 160, 160}},
    {"openwakeword_hello", "", {NULL}, {0}, {0}},
    {"silero_vad_legacy", "--dim batch=1 --dim sequence=512", {"batch", "sequence", NULL},
     {1, 512}, {1, 512}},
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

/* Every symbolic dim named in the tool's report (fmt: its line for one
 * dim) and declared by the written model: xfonnx info on it, sizing
 * nothing, says the size it chose for each. */
static void expect_dims_kept(const real_model *m, const char *report, const char *fmt,
                             const char *written)
{
    char *info;
    xfonnx(&info, "info_written.log", "info %s%s%s", written, "", "");
    for (int i = 0; m->syms[i]; i++) {
        char want[256];
        snprintf(want, sizeof want, fmt, m->syms[i]);
        xf_test_expect_contains(report, want);
        snprintf(want, sizeof want, "%s=", m->syms[i]);
        xf_test_expect_contains(info, want);
        xf_test_expect_contains(info, "xfonnx: sizes of the symbolic dims: ");
    }
    free(info);
}

/* The model written at `path` reproduces m's reference outputs (at the
 * data's sizes, whatever it was written at). */
static void expect_reference_outputs(const real_model *m, const char *dir, const char *path)
{
    char *out;
    int rc = xfonnx(&out, "run_written.log", "run %s --data %s/test_data_set_0%s", path, dir,
                    "");
    ck_assert_msg(rc == 0, "xfonnx run on the written model %s (%s): exit %d\n%s", path, m->dir,
                  rc, out);
    xf_test_expect_contains(out, "outputs match the expected data");
    free(out);
}

START_TEST(run_matches_onnxruntime)
{
    const real_model *m = &models[_i];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char *out, label[128];
    snprintf(label, sizeof label, "run_%s.log", m->dir);
    int rc = xfonnx(&out, label, "run %s/model.onnx --data %s/test_data_set_0%s", dir, dir,
                    "");
    ck_assert_msg(rc == 0, "xfonnx run %s: exit %d\n%s", m->dir, rc, out);
    xf_test_expect_contains(out, "outputs match the expected data");
    for (int i = 0; m->syms[i]; i++) { /* no --dim: the sizes are the data's */
        char want[256];
        snprintf(want, sizeof want, "%s=%lld", m->syms[i], (long long)m->data[i]);
        xf_test_expect_contains(out, want);
        xf_test_expect_contains(out, "/test_data_set_0); --dim NAME=N sets one");
    }
    free(out);
}
END_TEST

/* The model written at `written` against the original in ONNX Runtime
 * (both run as files, same inputs; 1e-5 + 1e-4*|original's|, xfonnx's
 * tolerance) at 1/2, 1, 2 and 3 times the sizes it was written at of
 * every symbolic dim (batch 1 is 1, 2 and 3), and where the original does
 * not import with all of them so (the classifier's last pool gets one row
 * at height 32), at each size moved alone where it does. Sizes 1 and 2 must be admitted
 * with all dims moved, so the check cannot pass by skipping. */
static void expect_same_in_ort_at_scales(const real_model *m, const char *dir,
                                         const char *written)
{
    if (!m->syms[0]) return;
    xf_target *t = xf_fx_target();
    if (!t) {
        xf_test_skip_part("ONNX Runtime not installed (tools/setup.sh or RLFLOW_ORT_LIB)");
        return;
    }
    char orig[4096];
    snprintf(orig, sizeof orig, "%s/model.onnx", dir);
    int n = 0;
    while (n < 4 && m->syms[n]) n++;
    static const int halves[4] = {1, 2, 4, 6}; /* 1/2, 1, 2, 3 times */
    for (int k = 0; k < 4; k++) {
        for (int alone = -1; alone < n; alone++) {
            int64_t v[4];
            char at[512] = "";
            for (int i = 0; i < n; i++) {
                v[i] = i == alone || alone < 0 ? m->sizes[i] * halves[k] / 2 : m->sizes[i];
                if (v[i] < 1) v[i] = 1;
                size_t len = strlen(at);
                snprintf(at + len, sizeof at - len, "%s%s=%lld", i ? ", " : "", m->syms[i],
                         (long long)v[i]);
            }
            if (alone >= 0 && v[alone] == m->sizes[alone]) continue; /* batch 1 at 1/2 */
            xf_onnx_options o = xf_onnx_default_options();
            o.n_dim_overrides = n;
            o.dim_names = m->syms;
            o.dim_values = v;
            xf_graph g;
            xf_error err;
            int admitted = xf_onnx_load(orig, &o, &g, &err) == XF_OK;
            if (admitted) xf_graph_free(&g);
            ck_assert_msg(admitted || alone >= 0 || (halves[k] != 2 && halves[k] != 4),
                          "%s: the original does not import at %s: %s", m->dir, at, err.msg);
            if (!admitted) {
                fprintf(stderr, "%s: at %s the original does not import (%s)\n", m->dir, at,
                        err.msg);
                continue;
            }
            xf_fx_expect_same_in_target(t, orig, written, &o, 1e-4, 1e-5, at);
            if (alone < 0) break; /* all moved together: no need to move them alone */
        }
    }
    xf_target_close(t);
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
    xf_test_expect_contains(out, m->syms[0] ? "same graph, same outputs at three sizes"
                                            : "round trip ok: same graph, same outputs");
    xf_test_onnx_checker(written);
    expect_same_in_ort_at_scales(m, dir, written);
    free(out);
}
END_TEST

/* Proved rules for the agent: xfergen's 2-operator TASO rules, the first
 * 60 decided by xferverify (made once per run of the suite). 60, not 40:
 * since a scalar of a rule binds only scalars, two fewer rules are derived
 * before the solver's turn, and the first 40 stopped short of rule 71
 * (conv2d(x, scalar_mul(w, s)) => conv2d(scalar_mul(x, s), w)), the one
 * the classifier's search applies. */
static const char *rules_db(void)
{
    static char db[4096];
    if (db[0]) return db;
    snprintf(db, sizeof db, "%s", xf_test_tmp("real_rules.db"));
    xf_test_remove_db(db);
    ck_assert_int_eq(xf_test_system("%s --max-ops 2 --vocab taso -j 1 -o %s --quiet",
                                    xf_test_tool("xfergen"), db),
                     0);
    ck_assert_int_eq(xf_test_system("%s %s --limit 60 -j 2 > /dev/null 2>&1",
                                    xf_test_tool("xferverify"), db),
                     0);
    return db;
}

/* rlflow-agent --search taso writes a model that keeps the original's
 * symbolic dims and passes the check at three sizes of each. */
START_TEST(agent_keeps_symbolic_dims)
{
    const real_model *m = &models[_i];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
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
    /* where the search found nothing better the input file is copied */
    int copied = strstr(out, "the input model is written unchanged") != NULL;
    expect_dims_kept(m, out,
                     copied ? "symbolic dim:    %s kept (the input file as it is)"
                            : "symbolic dim:    %s kept, checked at",
                     written);
    if (m->syms[0])
        xf_test_expect_contains(out, copied ? "sizes check:     none needed: the input file is "
                                              "written as it is"
                                            : "sizes check:     max output err");
    ck_assert_msg(!strstr(out, "writing the input"), "%s: the input was written:\n%s", m->dir,
                  out);
    if (copied) {
        char model[4096];
        snprintf(model, sizeof model, "%s/model.onnx", dir);
        xf_test_expect_same_file(model, written);
    }
    xf_test_onnx_checker(written);
    expect_same_in_ort_at_scales(m, dir, written);
    free(out);
}
END_TEST

/* rlflow-agent on the classifier with no --dim: its symbolic dims (batch,
 * height, width) are sized by the size search, which says what it chose
 * in one line, and the model written keeps them all. */
START_TEST(agent_sizes_dims_not_given)
{
    const real_model *m = &models[0];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char written[4096], log[4096];
    snprintf(written, sizeof written, "%s", xf_test_tmp("agent_nodim.onnx"));
    snprintf(log, sizeof log, "%s", xf_test_tmp("agent_nodim.log"));
    int rc = xf_test_system("%s --rules %s %s/model.onnx -o %s --search taso --budget 20 "
                            "--backend analytic --cache none --no-latency -q > %s 2>&1",
                            xf_test_tool("rlflow-agent"), rules_db(), dir, written, log);
    char *out = xf_test_read_file(log, NULL);
    ck_assert_msg(rc == 0, "rlflow-agent %s: exit %d\n%s", m->dir, rc, out);
    xf_test_expect_contains(out, "rlflow-agent: sizes of the symbolic dims: "
                                 "p2o.DynamicDimension.0=1, p2o.DynamicDimension.1=");
    xf_test_expect_contains(out, "(not given: the smallest powers of two at which the model "
                                 "imports); --dim NAME=N sets one");
    expect_dims_kept(m, out, "symbolic dim:    %s kept, checked at", written);
    ck_assert_msg(!strstr(out, "writing the input"), "the input was written:\n%s", out);
    free(out);
    expect_reference_outputs(m, dir, written);
}
END_TEST

/* --external-data with symbolic dims, on the classifier: xfonnx roundtrip
 * and rlflow-agent each write a model that keeps every symbolic dim, with
 * its weights in the data file, after the check at three sizes; the model
 * reads back through that file (it reproduces the reference outputs) and
 * does not read without it. */
START_TEST(external_data_keeps_symbolic_dims)
{
    const real_model *m = &models[0];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    for (int k = 0; k < 2; k++) {
        char written[4096], data[4096], log[4096], *out;
        snprintf(written, sizeof written, "%s", xf_test_tmp(k ? "ext_agent.onnx" : "ext_rt.onnx"));
        snprintf(data, sizeof data, "%s.weights", written);
        const char *base = strrchr(written, '/') + 1;
        unlink(data);
        int rc;
        if (k == 0) {
            char opts[1024];
            snprintf(opts, sizeof opts, "--external-data %s.weights %s", base, m->dims);
            rc = xfonnx(&out, "ext_rt.log", "roundtrip %s/model.onnx -o %s %s", dir, written,
                        opts);
        } else {
            snprintf(log, sizeof log, "%s", xf_test_tmp("ext_agent.log"));
            rc = xf_test_system("%s --rules %s %s/model.onnx -o %s --search taso --budget 20 %s "
                                "--backend analytic --cache none --no-latency -q "
                                "--external-data %s.weights > %s 2>&1",
                                xf_test_tool("rlflow-agent"), rules_db(), dir, written, m->dims,
                                base, log);
            out = xf_test_read_file(log, NULL);
        }
        ck_assert_msg(rc == 0, "exit %d\n%s", rc, out);
        char want[512];
        snprintf(want, sizeof want, k ? "external data:   %s.weights (" : "external data: %s.weights, ",
                 base);
        xf_test_expect_contains(out, want);
        expect_dims_kept(m, out, k ? "symbolic dim:    %s kept, checked at" : "symbolic dim %-24s kept",
                         written);
        xf_test_expect_contains(out, k ? "sizes check:     max output err"
                                       : "same graph, same outputs at three sizes");
        ck_assert_msg(!strstr(out, "writing the input"), "the input was written:\n%s", out);
        ck_assert_int_eq(access(data, R_OK), 0);
        free(out);
        expect_reference_outputs(m, dir, written);
        ck_assert_int_eq(unlink(data), 0);
        rc = xfonnx(&out, "ext_run.log", "info %s%s%s", written, "", "");
        ck_assert_int_ne(rc, 0);
        xf_test_expect_contains(out, ".weights");
        free(out);
    }
}
END_TEST

/* At the default size of 1 for every symbolic dim, Silero's 256-tap
 * frame convolution cannot run: the refusal names the If and says why. */
START_TEST(silero_too_short_says_why)
{
    const real_model *m = &models[3];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char *out;
    int rc = xfonnx(&out, "silero_short.log", "run %s/model.onnx%s%s", dir, "", "");
    ck_assert_msg(rc == 1, "xfonnx run: exit %d\n%s", rc, out);
    xf_test_expect_contains(out, "'If_25' (If) has no reference kernel (opaque op): ");
    xf_test_expect_contains(out, "then_branch of node 1 'If_25' (If): node 13 'Conv_73' (Conv)");
    xf_test_expect_contains(out, "smaller than the dilated kernel 1x256");
    free(out);
}
END_TEST

/* xfcost prices Silero's If by its costlier branch, and the analytic
 * backend's executor (the interpreter) runs it end to end. */
START_TEST(xfcost_prices_and_runs_silero)
{
    const real_model *m = &models[3];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char log[4096];
    snprintf(log, sizeof log, "%s", xf_test_tmp("silero_xfcost.log"));
    int rc = xf_test_system("%s %s/model.onnx --backend analytic --cache none %s > %s 2>&1",
                            xf_test_tool("xfcost"), dir, m->dims, log);
    size_t len;
    char *out = xf_test_read_file(log, &len);
    ck_assert_msg(rc == 0, "xfcost on %s: exit %d\n%s", m->dir, rc, out);
    /* the costlier branch's 82 kernels and the Equal's one; the LSTM
     * states' ConstantOfShape, whose shape follows the batch, is computed
     * at run time (a kernel of its own) since issue 29 */
    xf_test_expect_contains(out, "(sum of 2 operators, 83 kernels, ");
    xf_test_expect_contains(out, "measured end-to-end: ");
    free(out);
}
END_TEST

/* A rules database holding relu(conv(x, w)) => conv[act=relu](x, w) (and
 * its reverse), which matches inside every Silero branch. */
static void write_conv_relu_db(const char *path)
{
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    xf_fx_rule_conv_relu(&r);
    xf_rulesdb_rule_meta meta = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t id = 0;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &meta, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
}

START_TEST(agent_optimises_around_silero_if)
{
    const real_model *m = &models[3];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    char db[4096], opt[4096], log[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("conv_relu.db"));
    snprintf(opt, sizeof opt, "%s", xf_test_tmp("silero.opt.onnx"));
    snprintf(log, sizeof log, "%s", xf_test_tmp("silero_agent.log"));
    write_conv_relu_db(db);
    unlink(opt);
    int rc = xf_test_system("%s --rules %s %s/model.onnx -o %s --search taso --budget 50 "
                            "--backend analytic --cache none --no-latency -q %s > %s 2>&1",
                            xf_test_tool("rlflow-agent"), db, dir, opt, m->dims, log);
    size_t len;
    char *out = xf_test_read_file(log, &len);
    ck_assert_msg(rc == 0, "rlflow-agent on %s: exit %d\n%s", m->dir, rc, out);
    /* the conv+relu pairs are all inside the If: nothing matches through it */
    xf_test_expect_contains(out, "applicable:      0 rules at 0 locations");
    xf_test_expect_contains(out, "max output err:  ");
    xf_test_expect_contains(out, "written:         ");
    free(out);
    expect_reference_outputs(m, dir, opt);
    xf_test_onnx_checker(opt);
}
END_TEST

/* Silero at three (batch, sequence) sizes on random inputs (sr 0 or 1:
 * the 8 kHz branch; the test data above runs the 16 kHz one): the
 * interpreter's outputs equal ONNX Runtime's on the published file. */
START_TEST(silero_matches_onnxruntime_at_three_sizes)
{
    const real_model *m = &models[3];
    const char *dir = model_dir(m);
    if (!dir) XF_SKIP("shared model real/%s not found (XF_SHARED_DIR)", m->dir);
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime not installed (tools/setup.sh or RLFLOW_ORT_LIB)");
    char path[4096];
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    static const int64_t sizes[3][2] = {{1, 512}, {2, 1024}, {3, 320}};
    for (int k = 0; k < 3; k++) {
        const char *names[2] = {"batch", "sequence"};
        xf_onnx_options o = xf_onnx_default_options();
        o.n_dim_overrides = 2;
        o.dim_names = names;
        o.dim_values = sizes[k];
        xf_graph g;
        xf_error err;
        ck_assert_msg(xf_onnx_load(path, &o, &g, &err) == XF_OK, "%s", err.msg);
        xf_tensor in[4], ours[3], theirs[3];
        ck_assert_msg(xf_graph_random_inputs(&g, 7, in, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_interp_run(&g, in, g.n_inputs, ours, &err) == XF_OK, "%s", err.msg);
        xf_target_model *tm = NULL;
        ck_assert_msg(xf_target_model_load_file(t, path, &g, 7, &tm, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_msg(xf_target_model_run(tm, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_target_model_outputs(tm, theirs, &err) == XF_OK, "%s", err.msg);
        for (int i = 0; i < g.n_outputs; i++) {
            double max_abs, max_rel, peak = 0;
            ck_assert_msg(xf_tensor_compare(&ours[i], &theirs[i], &max_abs, &max_rel, &err) ==
                              XF_OK,
                          "%s", err.msg);
            for (int64_t j = 0; j < xf_shape_numel(&theirs[i].shape); j++) {
                double v = fabs(((const float *)theirs[i].data)[j]);
                if (v > peak) peak = v;
            }
            ck_assert_msg(max_abs <= 1e-4 * peak, "batch %lld, sequence %lld, output %d: |d| %g "
                          "over max |output| %g", (long long)sizes[k][0], (long long)sizes[k][1],
                          i, max_abs, peak);
            xf_tensor_free(&ours[i]);
            xf_tensor_free(&theirs[i]);
        }
        xf_target_model_free(tm);
        for (int i = 0; i < g.n_inputs; i++) xf_tensor_free(&in[i]);
        xf_graph_free(&g);
    }
    xf_target_close(t);
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
    tcase_add_test(t, agent_sizes_dims_not_given);
    tcase_add_test(t, agent_optimises_around_silero_if);
    tcase_add_test(t, external_data_keeps_symbolic_dims);
    tcase_add_test(t, silero_too_short_says_why);
    tcase_add_test(t, xfcost_prices_and_runs_silero);
    tcase_add_test(t, silero_matches_onnxruntime_at_three_sizes);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
