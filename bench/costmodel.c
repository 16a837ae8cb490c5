/*
 * bench_costmodel — how well the cost model predicts real latency.
 *
 *   bench_costmodel [--threads N] [--models DIR] [--quick]
 *
 * 1. For every DIR/<name>/model.onnx (default ../shared/models): the oneDNN
 *    estimate (sum of per-operator medians, TASO's model), the analytic
 *    estimate, and the measured end-to-end latency of the oneDNN executor,
 *    with the ratio estimate / measured.
 * 2. The same over graph variants written by modelzoo (ResNet, SqueezeNet,
 *    BERT and ViT at several sizes) plus Spearman's rank correlation between
 *    estimates and measured latencies: what the optimiser needs is the right
 *    order of graphs, not exact times.
 * 3. resnet18: the reference interpreter vs the oneDNN executor (speed-up).
 * Costs are measured fresh (in-memory cache). Figures go to stdout.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "costmodel/costmodel.h"
#include "ir/ir.h"
#include "onnx/onnx.h"

#define MAX_MODELS 64

typedef struct result {
    char name[96];
    int nodes;
    double onednn_est, analytic_est, measured;
} result;

static int threads = 1;

static void die(const char *what, const xf_error *err)
{
    fprintf(stderr, "bench_costmodel: %s: %s\n", what, err->msg);
    exit(1);
}

static xf_cost_model *open_model(xf_cost_backend b)
{
    xf_cost_options o = xf_cost_options_default();
    o.backend = b;
    o.threads = threads;
    xf_cost_model *cm = NULL;
    xf_error err = {0};
    if (xf_cost_open(&o, &cm, &err)) die("opening the cost model", &err);
    return cm;
}

static double median3(double *v)
{
    double a = v[0], b = v[1], c = v[2];
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    return c < a ? a : (c > b ? b : c);
}

/* Estimates and measured latency of one model file; 0 when it cannot run. */
static int measure(const char *path, const char *name, xf_cost_model *dnn, xf_cost_model *ana,
                   result *r)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err = {0};
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    if (xf_onnx_load(path, NULL, &g, &err)) die(path, &err);
    r->nodes = g.n_nodes;
    xf_op_cost c;
    if (xf_cost_graph(dnn, &g, &c, NULL, &err)) die(name, &err);
    r->onednn_est = c.ms;
    if (xf_cost_graph(ana, &g, &c, NULL, &err)) die(name, &err);
    r->analytic_est = c.ms;
    xf_exec *e = NULL;
    xf_tensor *in = xf_calloc((size_t)g.n_inputs + 1, sizeof *in);
    int ok = 0;
    if (xf_exec_prepare(dnn, &g, &e, &err) == XF_OK &&
        xf_graph_random_inputs(&g, 1, in, &err) == XF_OK &&
        xf_exec_latency(e, in, g.n_inputs, 3, 10, &r->measured, &err) == XF_OK)
        ok = 1;
    else
        fprintf(stderr, "bench_costmodel: %s: end-to-end skipped: %s\n", name, err.msg);
    for (int i = 0; i < g.n_inputs; i++) xf_tensor_free(&in[i]);
    xf_free(in);
    xf_exec_free(e);
    xf_graph_free(&g);
    return ok;
}

static void print_row(const result *r)
{
    printf("%-28s %6d %12.3f %12.3f %12.3f %8.3f %8.3f\n", r->name, r->nodes, r->onednn_est,
           r->analytic_est, r->measured, r->onednn_est / r->measured,
           r->analytic_est / r->measured);
}

static void print_header(void)
{
    printf("%-28s %6s %12s %12s %12s %8s %8s\n", "model", "nodes", "onednn_est", "analytic_est",
           "measured_ms", "ratio", "ana_ratio");
}

/* Average ranks (ties share their mean rank). */
static void ranks(const double *v, int n, double *r)
{
    for (int i = 0; i < n; i++) {
        int less = 0, equal = 0;
        for (int j = 0; j < n; j++) {
            less += v[j] < v[i];
            equal += v[j] == v[i];
        }
        r[i] = less + (equal + 1) / 2.0;
    }
}

static double spearman(const double *x, const double *y, int n)
{
    double rx[MAX_MODELS], ry[MAX_MODELS], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
    ranks(x, n, rx);
    ranks(y, n, ry);
    for (int i = 0; i < n; i++) mx += rx[i] / n, my += ry[i] / n;
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 0;
}

static void interp_vs_onednn(const char *path, xf_cost_model *dnn)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err = {0};
    if (xf_onnx_load(path, NULL, &g, &err)) die(path, &err);
    xf_tensor *in = xf_calloc((size_t)g.n_inputs + 1, sizeof *in);
    xf_tensor *out = xf_calloc((size_t)g.n_outputs + 1, sizeof *out);
    if (xf_graph_random_inputs(&g, 1, in, &err)) die(path, &err);
    double t[3];
    for (int r = 0; r < 3; r++) {
        double t0 = xf_clock_now_ms();
        if (xf_interp_run(&g, in, g.n_inputs, out, &err)) die("interpreter", &err);
        t[r] = xf_clock_now_ms() - t0;
        for (int i = 0; i < g.n_outputs; i++) xf_tensor_free(&out[i]);
    }
    double interp = median3(t), dnn_ms = 0;
    xf_exec *e = NULL;
    if (xf_exec_prepare(dnn, &g, &e, &err) ||
        xf_exec_latency(e, in, g.n_inputs, 3, 10, &dnn_ms, &err))
        die("oneDNN executor", &err);
    printf("resnet18: reference interpreter %.2f ms, oneDNN executor %.2f ms (%d thread%s): "
           "%.1fx faster\n",
           interp, dnn_ms, threads, threads == 1 ? "" : "s", interp / dnn_ms);
    xf_exec_free(e);
    for (int i = 0; i < g.n_inputs; i++) xf_tensor_free(&in[i]);
    xf_free(in);
    xf_free(out);
    xf_graph_free(&g);
}

/* modelzoo variants: name, arguments */
static const char *const variants[][2] = {
    {"resnet18 image 64", "resnet18 --image 64"},
    {"resnet18 image 96", "resnet18 --image 96"},
    {"resnet18 image 128", "resnet18 --image 128"},
    {"resnet18 image 224", "resnet18 --image 224"},
    {"resnet18 w32 image 128", "resnet18 --width 32 --image 128"},
    {"resnet34 image 128", "resnet34 --image 128"},
    {"resnet50 image 128", "resnet50 --image 128"},
    {"squeezenet image 128", "squeezenet --image 128"},
    {"squeezenet image 224", "squeezenet --image 224"},
    {"bert l2 h128 s32", "bert --layers 2 --hidden 128 --seq 32"},
    {"bert l2 h128 s128", "bert --layers 2 --hidden 128 --seq 128"},
    {"bert l4 h256 s64", "bert --layers 4 --hidden 256 --heads 4 --seq 64"},
    {"bert l4 h256 s128", "bert --layers 4 --hidden 256 --heads 4 --seq 128"},
    {"vit l2 image 96", "vit --layers 2 --image 96"},
    {"vit l4 image 224", "vit --layers 4 --image 224"},
};

int main(int argc, char **argv)
{
    const char *models = XF_BENCH_MODELS_DIR;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) models = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: bench_costmodel [--threads N] [--models DIR] [--quick]\n"
                   "Estimated cost (oneDNN and analytic) vs measured end-to-end latency per\n"
                   "model, rank correlation over modelzoo variants, executor vs interpreter.\n"
                   "--quick measures fewer variants.\n");
            return 0;
        } else {
            fprintf(stderr, "usage: bench_costmodel [--threads N] [--models DIR] [--quick]\n");
            return 2;
        }
    }
    if (threads < 1) threads = 1;
    xf_cost_model *dnn = open_model(XF_COST_ONEDNN), *ana = open_model(XF_COST_ANALYTIC);
    double peak, bw;
    xf_cost_roofline(ana, &peak, &bw);
    printf("backend: %s\nanalytic roofline: %.1f GFLOP/s, %.1f GB/s\n\n", xf_cost_identity(dnn),
           peak, bw);

    static const char *const names[] = {"squeezenet1_1", "resnet18", "bert_small", "vit_tiny"};
    printf("== reference models (%s)\n", models);
    print_header();
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s/model.onnx", models, names[i]);
        if (access(path, R_OK) != 0) continue;
        result r;
        if (measure(path, names[i], dnn, ana, &r)) print_row(&r);
    }

    char dir[] = "/tmp/bench_costmodel.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_costmodel: mkdtemp");
        return 1;
    }
    printf("\n== modelzoo variants\n");
    print_header();
    result res[MAX_MODELS];
    int n = 0;
    size_t n_var = quick ? 5 : sizeof variants / sizeof variants[0];
    for (size_t i = 0; i < n_var; i++) {
        char cmd[2048];
        snprintf(path, sizeof path, "%s/v%zu.onnx", dir, i);
        snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO, variants[i][1],
                 path);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_costmodel: modelzoo failed: %s\n", cmd);
            continue;
        }
        if (measure(path, variants[i][0], dnn, ana, &res[n])) print_row(&res[n++]);
        remove(path);
    }
    rmdir(dir);
    double est[MAX_MODELS], ana_est[MAX_MODELS], meas[MAX_MODELS];
    for (int i = 0; i < n; i++)
        est[i] = res[i].onednn_est, ana_est[i] = res[i].analytic_est, meas[i] = res[i].measured;
    printf("Spearman rank correlation over %d variants: oneDNN estimate %.3f, analytic %.3f\n\n",
           n, spearman(est, meas, n), spearman(ana_est, meas, n));

    snprintf(path, sizeof path, "%s/resnet18/model.onnx", models);
    if (access(path, R_OK) == 0) interp_vs_onednn(path, dnn);
    xf_cost_close(dnn);
    xf_cost_close(ana);
    return 0;
}
