/*
 * bench/dynamic — the models rlflow-agent writes from the models with
 * symbolic dims in ../shared/models (the real ones published by others and
 * bert_small_dynamic), run in ONNX Runtime at sizes other than the one they
 * were optimised at: the written model against the original, both as files
 * (ONNX Runtime reads them as written), same random inputs.
 *
 *   bench_dynamic [--rules DB] [--budget N] [--rounds N] [--target] [--model NAME]
 *
 * The models are ../shared/models/real's and the shared PyTorch exports
 * with symbolic batch and sequence (bert_small_dynamic) and computed
 * paddings (swin_micro). For each model: the optimisation rlflow-agent runs
 * (xf_optimize_file, in-process) with TASO search (--target: with the
 * target, 1 thread, the arbiter choosing; --budget
 * graphs, default 100;
 * Silero, whose If the interpreter cannot run, without the check: ONNX
 * Runtime is its check here) at the test data's sizes, then at 1/2, 1, 2 and
 * 3 times those sizes of every symbolic dim (where the original does not
 * import with all of them so, each dim moved alone where it does; a size
 * the original admits at none is said): max |written - original| over the
 * largest |original| of any output, and the latency ratio written/original
 * with its 95% interval (xf_target_compare, the two sessions alternating).
 * Needs ONNX Runtime (RLFLOW_ORT_LIB); without it, says so and exits 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_runner.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "target/target.h"

typedef struct real_model {
    const char *dir; /* under ../shared/models */
    /* the symbolic dims and the size it is optimised at (the test data's) */
    const char *names[3];
    int64_t values[3];
    int no_check; /* written without the numerical check */
} real_model;

static const real_model models[] = {
    {"real/ppocr_mobile_cls",
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"},
     {1, 48, 192}, 0},
    {"real/ppocr_v4_det",
     {"p2o.DynamicDimension.0", "p2o.DynamicDimension.1", "p2o.DynamicDimension.2"},
     {1, 160, 160}, 0},
    {"real/openwakeword_hello", {NULL}, {0}, 0},
    {"real/silero_vad_legacy", {"batch", "sequence", NULL}, {1, 512, 0}, 1},
    {"bert_small_dynamic", {"batch", "sequence", NULL}, {2, 64, 0}, 0},
    /* torchvision's Swin: paddings computed from the input's shape (issue 29) */
    {"swin_micro", {NULL}, {0}, 0},
};

/* Largest |b - a| over the largest |a| (and in *abs_err the largest
 * |b - a|), over the outputs of one run of each file in the target
 * (INFINITY when shapes differ, -1 when one does not run). */
static double run_diff(xf_target *t, const char *fa, const xf_graph *a, const char *fb,
                       const xf_graph *b, double *abs_err, xf_error *err)
{
    *abs_err = 0;
    xf_target_model *ma = NULL, *mb = NULL;
    xf_tensor *oa = xf_tensor_array_alloc(a->n_outputs), *ob = xf_tensor_array_alloc(a->n_outputs);
    double worst = -1;
    if (oa && ob && xf_target_model_load_file(t, fa, a, 1, &ma, err) == XF_OK &&
        xf_target_model_load_file(t, fb, b, 1, &mb, err) == XF_OK &&
        xf_target_model_run(ma, err) == XF_OK && xf_target_model_run(mb, err) == XF_OK &&
        xf_target_model_outputs(ma, oa, err) == XF_OK &&
        xf_target_model_outputs(mb, ob, err) == XF_OK) {
        worst = 0;
        for (int i = 0; i < a->n_outputs; i++) {
            double ma_abs, mr, peak = 0;
            if (xf_tensor_compare(&ob[i], &oa[i], &ma_abs, &mr, err) != XF_OK) return INFINITY;
            if (oa[i].dtype == XF_F32)
                for (int64_t k = 0; k < xf_shape_numel(&oa[i].shape); k++)
                    peak = fmax(peak, fabs((double)((const float *)oa[i].data)[k]));
            double rel = peak > 0 ? ma_abs / peak : ma_abs;
            if (ma_abs > *abs_err) *abs_err = ma_abs;
            if (rel > worst) worst = rel;
        }
    }
    xf_target_model_free(ma);
    xf_target_model_free(mb);
    xf_tensor_array_free(oa, a->n_outputs);
    xf_tensor_array_free(ob, a->n_outputs);
    return worst;
}

/* The written model against the original at the sizes of o ("at" names
 * them): one line of error and latency ratio. */
static void bench_sizes(xf_target *t, const char *orig, const char *written,
                        const xf_onnx_options *o, const char *at, int rounds)
{
    xf_graph a, b;
    xf_error err;
    if (xf_onnx_load(orig, o, &a, &err) != XF_OK) {
        printf("  %-48s %s\n", at, err.msg);
        return;
    }
    if (xf_onnx_load(written, o, &b, &err) != XF_OK) {
        printf("  %-48s written model: %s\n", at, err.msg);
        xf_graph_free(&a);
        return;
    }
    double abs_err;
    double diff = run_diff(t, orig, &a, written, &b, &abs_err, &err);
    const xf_graph *g[2] = {&a, &b};
    const char *files[2] = {orig, written};
    xf_target_timing_options to = {.seed = 1, .rounds = rounds, .files = files};
    xf_target_timing res[2];
    if (diff < 0) {
        printf("  %-48s does not run: %s\n", at, err.msg);
    } else if (xf_target_compare(t, g, 2, &to, res, NULL, &err) != XF_OK) {
        printf("  %-48s max err %.3g, not timed: %s\n", at, diff, err.msg);
    } else {
        printf("  %-48s err %9.3g (%9.3g abs)   %9.3f ms -> %9.3f ms   x%.3f [%.3f, %.3f]\n", at,
               diff, abs_err, res[0].median_ms, res[1].median_ms, res[1].ratio, res[1].lo,
               res[1].hi);
    }
    xf_graph_free(&a);
    xf_graph_free(&b);
}

/* Whether the original imports at the sizes of o. */
static int admits(const char *orig, const xf_onnx_options *o)
{
    xf_graph g;
    xf_error err;
    if (xf_onnx_load(orig, o, &g, &err) != XF_OK) return 0;
    xf_graph_free(&g);
    return 1;
}

/* One model at 1/2, 1, 2 and 3 times the sizes it was optimised at: all
 * dims moved together, else each alone where the original admits it. */
static void bench_model(xf_target *t, const real_model *m, const char *orig, const char *written,
                        int rounds)
{
    int n = 0;
    while (n < 3 && m->names[n]) n++;
    if (n == 0) {
        xf_onnx_options o = xf_onnx_default_options();
        bench_sizes(t, orig, written, &o, "(fixed shapes)", rounds);
        return;
    }
    static const int halves[4] = {1, 2, 4, 6};
    static const char *const scale[4] = {"1/2x", "1x", "2x", "3x"};
    for (int k = 0; k < 4; k++) {
        int any = 0;
        for (int alone = -1; alone < n; alone++) {
            int64_t v[3];
            char at[512];
            int len = snprintf(at, sizeof at, "%s ", scale[k]);
            for (int i = 0; i < n; i++) {
                v[i] = alone < 0 || i == alone ? m->values[i] * halves[k] / 2 : m->values[i];
                if (v[i] < 1) v[i] = 1;
                len += snprintf(at + len, sizeof at - (size_t)len, "%s%s=%lld", i ? ", " : "",
                                m->names[i], (long long)v[i]);
            }
            if (alone >= 0 && v[alone] == m->values[alone]) continue; /* batch 1 at 1/2 */
            xf_onnx_options o = xf_onnx_default_options();
            o.n_dim_overrides = n;
            o.dim_names = m->names;
            o.dim_values = v;
            if (!admits(orig, &o)) continue;
            bench_sizes(t, orig, written, &o, at, rounds);
            any = 1;
            if (alone < 0) break;
        }
        if (!any) printf("  %-48s the original imports at none of these sizes\n", scale[k]);
    }
}

int main(int argc, char **argv)
{
    const char *rules_arg = NULL;
    int budget = 100, rounds = 11, target = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules_arg = argv[++i];
        else if (!strcmp(argv[i], "--model") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--target")) target = 1;
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
        else {
            printf("usage: bench_dynamic [--rules DB] [--budget N] [--rounds N] [--target]\n"
                   "                     [--model NAME]\n"
                   "xf_optimize_file, TASO (--target: with the target) on the models\n"
                   "with symbolic dims of ../shared/models, then the written models against\n"
                   "the originals in ONNX Runtime at 1/2, 1, 2 and 3 times the sizes optimised\n"
                   "at: max error and latency ratio.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    xf_target *t = NULL;
    xf_error err;
    if (xf_target_open(NULL, &t, &err) != XF_OK) {
        printf("bench_dynamic: ONNX Runtime not available (%s): nothing measured\n", err.msg);
        return 0;
    }
    const char *scratch = bench_scratch("bench_dynamic");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    printf("target: %s\nrules: %s; TASO search, %d graphs\n", xf_target_identity(t), rules,
           budget);
    printf("err: largest |written - original| over the largest |original| (and the largest "
           "|written - original|), ONNX Runtime both; ratio: written / original latency, 95%% "
           "interval\n");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const real_model *m = &models[i];
        char orig[4096], written[4096], out[4096];
        const char *base = strrchr(m->dir, '/') ? strrchr(m->dir, '/') + 1 : m->dir;
        if (only && strcmp(only, base) != 0) continue;
        snprintf(orig, sizeof orig, "%s/%s/model.onnx", XF_BENCH_MODELS_DIR, m->dir);
        snprintf(written, sizeof written, "%s/%s.opt.onnx", scratch, base);
        snprintf(out, sizeof out, "%s/out.onnx", scratch);
        xf_optimize_options o = xf_optimize_options_default();
        o.rules = rules;
        o.agent = XF_OPTIMIZE_SEARCH;
        o.search = XF_SEARCH_TASO;
        o.budget = budget;
        o.cache = XF_COST_CACHE_NONE;
        o.latency = 0;
        o.check = !m->no_check;
        while (o.n_dims < 3 && m->names[o.n_dims]) o.n_dims++;
        o.dim_names = m->names;
        o.dim_values = m->values;
        if (target) o.target = 1, o.threads = 1;
        bench_row r = bench_optimize_model(&o, orig, scratch, NULL);
        printf("%s: cost %s; %s\n", base, r.cost[0] ? r.cost : "(no report)", r.err);
        if (!r.ok || rename(out, written) != 0) {
            printf("  the optimisation wrote nothing\n");
            continue;
        }
        bench_model(t, m, orig, written, rounds);
    }
    xf_target_close(t);
    return 0;
}
