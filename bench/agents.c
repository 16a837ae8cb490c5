/*
 * bench_agents — the optimisation methods side by side on real models.
 *
 *   bench_agents [--rules DB] [--seconds S] [--quick] [--no-tau]
 *
 * For every ../shared/models/<name>/model.onnx and modelzoo BERT, ResNet and
 * ViT configurations, the optimisation rlflow-agent runs (xf_optimize_file,
 * in-process) with random, greedy and TASO search, the
 * model-free PPO agent and the world-model agent (oneDNN costs cached in the
 * scratch directory, 1 thread), each with S seconds (default 60) and prints
 * per method: cost and measured latency before/after, output error, wall
 * time and environment steps, and for the world-model agent its step time in
 * the dream against the real environment's. Then a τ sweep (0.5, 1, 1.5, 2)
 * of the world-model agent on BERT, as in the RLFlow paper's Table 3.
 * Rules: DB, or the proved taso 3-op rules made once (agent_runner.c).
 * --report DIR: also the page comparing every run (pages/pages.h): a
 * latency and memory table, the heatmap of the rules and hand passes each
 * method used, the progress curves per model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_runner.h"
#include "pages/pages.h"

static const char *const methods[] = {"random", "greedy", "taso", "ppo", "wm"};

static const char *const zoo[][2] = {
    {"bert-L2-H128", "bert --layers 2 --hidden 128 --heads 2 --seq 32"},
    {"resnet18-64", "resnet18 --image 64"},
    {"vit-L2-H96", "vit --layers 2 --hidden 96 --heads 3 --image 32 --patch 8"},
};

/* The runs kept for --report. */
#define MAX_KEPT 256
static struct kept {
    char name[64], path[2048], method[64];
    xf_optimize_options o;
    xf_optimize_report r;
} *kept;
static int n_kept;

static void run(const char *name, const char *path, const char *method, const char *rules,
                const char *scratch, double seconds, double tau)
{
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/costs.db", scratch);
    xf_optimize_options o = xf_optimize_options_default();
    o.rules = rules;
    o.agent = !strcmp(method, "ppo") ? XF_OPTIMIZE_PPO
              : !strcmp(method, "wm") ? XF_OPTIMIZE_WM
                                      : XF_OPTIMIZE_SEARCH;
    if (o.agent == XF_OPTIMIZE_SEARCH && xf_search_kind_parse(method, &o.search, NULL)) {
        fprintf(stderr, "bench_agents: no method '%s'\n", method);
        exit(2);
    }
    o.time_limit = seconds;
    o.tau = tau;
    o.backend = XF_COST_ONEDNN;
    o.cache = cache;
    struct kept *k = kept && n_kept < MAX_KEPT ? &kept[n_kept] : NULL;
    bench_row r = bench_optimize_model(&o, path, scratch, k ? &k->r : NULL);
    char label[64];
    if (tau != 1.0) snprintf(label, sizeof label, "%s t=%.1f", method, tau);
    else snprintf(label, sizeof label, "%s", method);
    bench_print_row(name, label, &r);
    if (k && r.ok) {
        snprintf(k->name, sizeof k->name, "%s", name);
        snprintf(k->path, sizeof k->path, "%s", path);
        snprintf(k->method, sizeof k->method, "%s", label);
        k->o = o;
        k->o.cache = NULL; /* this call's buffer */
        n_kept++;
    }
}

/* The page over the kept runs; 1 when it was not written. */
static int write_report(const char *dir)
{
    xf_pages_run *runs = calloc((size_t)n_kept + 1, sizeof *runs);
    int rc = 0;
    xf_error err = {0};
    for (int i = 0; runs && i < n_kept; i++)
        runs[i] = (xf_pages_run){kept[i].path, kept[i].name, kept[i].method, NULL, &kept[i].o,
                                 &kept[i].r};
    if (!runs || xf_pages_compare(dir, runs, n_kept, &err) != XF_OK) {
        fprintf(stderr, "bench_agents: the page was not written: %s\n",
                runs ? err.msg : "out of memory");
        rc = 1;
    } else {
        printf("\nreport: %s/index.html (%d runs)\n", dir, n_kept);
    }
    for (int i = 0; i < n_kept; i++) xf_optimize_report_free(&kept[i].r);
    free(runs);
    free(kept);
    return rc;
}

int main(int argc, char **argv)
{
    const char *rules_arg = NULL, *report = NULL;
    double seconds = 60;
    int quick = 0, tau_sweep = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules_arg = argv[++i];
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--no-tau")) tau_sweep = 0;
        else if (!strcmp(argv[i], "--report") && i + 1 < argc) report = argv[++i];
        else {
            printf("usage: bench_agents [--rules DB] [--seconds S] [--quick] [--no-tau] "
                   "[--report DIR]\n"
                   "random, greedy, TASO, PPO and world-model agents on ../shared/models and\n"
                   "modelzoo models (S seconds each, default 60), then a tau sweep on BERT.\n"
                   "--quick: bert_small and resnet18 only.\n"
                   "--report DIR: also a page comparing the runs in DIR/index.html (latency\n"
                   "and memory table, rule-use heatmap, progress curves).\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    xf_error err = {0};
    if (report && xf_pages_probe(report, &err) != XF_OK) {
        fprintf(stderr, "bench_agents: --report: %s\n", err.msg);
        return 2;
    }
    if (report && !(kept = calloc(MAX_KEPT, sizeof *kept))) {
        fprintf(stderr, "bench_agents: out of memory\n");
        return 1;
    }
    const char *scratch = bench_scratch("bench_agents");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    printf("rules: %s; %g s per method\n", rules, seconds);

    const char *shared[] = {"bert_small", "resnet18", "squeezenet1_1", "vit_tiny"};
    int n_shared = quick ? 2 : 4;
    char bert[2048] = "";
    printf("\n== ../shared/models\n");
    for (int m = 0; m < n_shared; m++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/model.onnx", XF_BENCH_MODELS_DIR, shared[m]);
        struct stat st;
        if (stat(path, &st) != 0) {
            printf("%-22s skipped: %s not found\n", shared[m], path);
            continue;
        }
        if (m == 0) snprintf(bert, sizeof bert, "%s", path);
        for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
            run(shared[m], path, methods[k], rules, scratch, seconds, 1.0);
    }
    if (!quick) {
        printf("\n== modelzoo\n");
        for (size_t m = 0; m < sizeof zoo / sizeof zoo[0]; m++) {
            char path[2048], cmd[4096];
            snprintf(path, sizeof path, "%s/%s.onnx", scratch, zoo[m][0]);
            snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO,
                     zoo[m][1], path);
            if (system(cmd) != 0) {
                fprintf(stderr, "bench_agents: modelzoo failed: %s\n", cmd);
                continue;
            }
            if (!bert[0] && !strncmp(zoo[m][0], "bert", 4))
                snprintf(bert, sizeof bert, "%s", path);
            for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++)
                run(zoo[m][0], path, methods[k], rules, scratch, seconds, 1.0);
        }
    }
    if (tau_sweep && bert[0]) {
        printf("\n== tau sweep, world-model agent on %s\n", bert);
        const double taus[] = {0.5, 1.0, 1.5, 2.0};
        for (int t = 0; t < 4; t++) run("bert", bert, "wm", rules, scratch, seconds, taus[t]);
    }
    return report ? write_report(report) : 0;
}
