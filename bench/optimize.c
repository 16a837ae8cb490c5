/*
 * bench_optimize — what the search baselines achieve on real models, and how
 * fast the optimisation environment steps.
 *
 *   bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick] [--backend B]
 *
 * 1. Rules: DB, or the proved rules of `xfergen --vocab taso --max-ops 3`
 *    verified with xferverify (made once under $TMPDIR/bench_optimize).
 * 2. For every ../shared/models/<name>/model.onnx and modelzoo ResNet/BERT
 *    configurations, rlflow-agent runs greedy and TASO search (oneDNN cost
 *    model, 1 thread) and this prints per model and search: nodes, rules
 *    applicable, locations, cost before/after, measured latency before/after,
 *    max output error and search time, as rlflow-agent reported them.
 * 3. Environment step time: median µs of random valid steps on a
 *    BERT-base-sized graph (12 layers, hidden 768, sequence 128) with the
 *    same rules, analytic costs (the step's own work, not kernel timing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/agent.h"
#include "agent_runner.h"
#include "onnx/onnx.h"

static const char *scratch;
static const char *backend = "onednn";

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_optimize: %s: %s\n", what, msg);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void run_and_print(const char *name, const char *path, const char *search,
                          const char *rules, int budget, double time_limit)
{
    char extra[512];
    snprintf(extra, sizeof extra,
             "--search %s --budget %d --time-limit %g --backend %s --cache '%s/costs.db'",
             search, budget, time_limit, backend, scratch);
    bench_row r = bench_run_agent(XF_BENCH_AGENT, rules, path, scratch, extra);
    bench_print_row(name, search, &r);
}

static const char *const zoo[][2] = {
    {"resnet18", "resnet18"},
    {"resnet50", "resnet50"},
    {"bert-L2-H256", "bert --layers 2 --hidden 256 --heads 4 --seq 64"},
    {"bert-base", "bert --layers 12 --hidden 768 --heads 12 --seq 128"},
};

/* Median µs of random valid steps on the environment over model g. */
static void step_time(const char *rules, const char *model_path)
{
    xf_error err = {0};
    xf_graph g;
    xf_graph_init(&g);
    if (xf_onnx_load(model_path, NULL, &g, &err)) die("loading bert-base", err.msg);
    xf_ruleset *rs = NULL;
    xf_ruleset_options ro = xf_ruleset_options_default();
    if (xf_ruleset_load(rules, &ro, &rs, &err)) die("loading rules", err.msg);
    xf_cost_options co = xf_cost_options_default();
    co.backend = XF_COST_ANALYTIC;
    co.peak_gflops = 100;
    co.bandwidth_gbps = 20;
    xf_cost_model *cm = NULL;
    if (xf_cost_open(&co, &cm, &err)) die("cost model", err.msg);
    xf_env_options eo = xf_env_options_default();
    xf_env *env = NULL;
    double t0 = now_s();
    if (xf_env_create(rs, cm, &g, &eo, &env, &err)) die("environment", err.msg);
    double t_create = now_s() - t0;
    enum { STEPS = 200 };
    double us[STEPS];
    int n = 0;
    xf_rng rng;
    xf_rng_seed(&rng, 1);
    int n_x = xf_env_num_xfers(env);
    while (n < STEPS) {
        const uint8_t *mask = xf_env_xfer_mask(env);
        int valid = 0;
        for (int x = 0; x < n_x; x++) valid += mask[x];
        if (valid == 0) break;
        int pick = (int)(xf_rng_next(&rng) % (uint64_t)valid), x = 0;
        for (; x < n_x; x++)
            if (mask[x] && pick-- == 0) break;
        int loc = (int)(xf_rng_next(&rng) % (uint64_t)xf_env_num_locations(env, x));
        xf_env_step_result r;
        double t = now_s();
        if (xf_env_step(env, x, loc, &r, &err)) die("step", err.msg);
        us[n++] = (now_s() - t) * 1e6;
        if (r.done && xf_env_reset(env, &err)) die("reset", err.msg);
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && us[j] < us[j - 1]; j--) {
            double tmp = us[j];
            us[j] = us[j - 1];
            us[j - 1] = tmp;
        }
    printf("\n== environment step time (bert-base: %d nodes, %d actions)\n", g.n_nodes, n_x);
    printf("env create (prepare, cost, first matching): %.1f ms\n", t_create * 1e3);
    if (n > 0)
        printf("step: median %.1f us, p10 %.1f us, p90 %.1f us over %d random valid steps\n",
               us[n / 2], us[n / 10], us[n * 9 / 10], n);
    xf_env_free(env);
    xf_cost_close(cm);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}

int main(int argc, char **argv)
{
    const char *rules_arg = NULL;
    int budget = 1000, quick = 0;
    double time_limit = 60;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules_arg = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc) budget = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc) time_limit = atof(argv[++i]);
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
        else {
            printf("usage: bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick]\n"
                   "                      [--backend onednn|analytic]\n"
                   "Greedy and TASO search on ../shared/models and modelzoo models through\n"
                   "rlflow-agent (oneDNN costs, 1 thread), then the environment step time on a\n"
                   "BERT-base-sized graph. --quick: shared models only, smaller budget.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (quick) budget = budget < 200 ? budget : 200;
    scratch = bench_scratch("bench_optimize");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    printf("rules: %s; budget %d, time limit %g s per search; %s costs\n", rules, budget,
           time_limit, backend);

    static const char *const searches[] = {"greedy", "taso"};
    const char *names[] = {"bert_small", "resnet18", "squeezenet1_1", "vit_tiny"};
    printf("\n== ../shared/models\n");
    for (size_t m = 0; m < sizeof names / sizeof names[0]; m++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/model.onnx", XF_BENCH_MODELS_DIR, names[m]);
        struct stat st;
        if (stat(path, &st) != 0) {
            printf("%-22s skipped: %s not found\n", names[m], path);
            continue;
        }
        for (int s = 0; s < 2; s++)
            run_and_print(names[m], path, searches[s], rules, budget, time_limit);
    }
    char bert_base[2048] = "";
    printf("\n== modelzoo\n");
    for (size_t m = 0; m < sizeof zoo / sizeof zoo[0]; m++) {
        char path[2048], cmd[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", scratch, zoo[m][0]);
        snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO, zoo[m][1],
                 path);
        if (system(cmd) != 0) die("modelzoo", cmd);
        if (!strcmp(zoo[m][0], "bert-base")) snprintf(bert_base, sizeof bert_base, "%s", path);
        if (quick) continue;
        for (int s = 0; s < 2; s++)
            run_and_print(zoo[m][0], path, searches[s], rules, budget, time_limit);
    }
    step_time(rules, bert_base);
    return 0;
}
