/*
 * bench_optimize — what the search baselines achieve on real models, and how
 * fast the optimisation environment steps.
 *
 *   bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick] [--backend B]
 *                  [--no-derived-rules]
 *
 * 1. Rules: DB, or the proved rules of `xfergen --vocab taso --max-ops 3`
 *    verified with xferverify (made once under $TMPDIR/bench_optimize).
 * 2. For every ../shared/models/<name>/model.onnx and modelzoo ResNet/BERT
 *    configurations, the optimisation rlflow-agent runs (xf_optimize_file,
 *    in-process) with greedy and TASO search (oneDNN cost model, 1 thread),
 *    and this prints per model and search from its report: nodes, rules
 *    applicable, locations, cost before/after, measured latency before/after,
 *    max output error and search time. The derived rules are actions too
 *    (macro-actions) unless --no-derived-rules, to compare the two rule-set
 *    shapes (docs/derive.md).
 * 3. Environment step time on a BERT-base-sized graph (12 layers, hidden
 *    768, sequence 128) and ResNet-50 with the same rules: bench_env_step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_runner.h"

static const char *scratch;
static const char *backend = "onednn";
static int derived = 1;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_optimize: %s: %s\n", what, msg);
    exit(1);
}

static void run_and_print(const char *name, const char *path, const char *search,
                          const char *rules, int budget, double time_limit)
{
    char cache[4096];
    snprintf(cache, sizeof cache, "%s/costs.db", scratch);
    xf_optimize_options o = xf_optimize_options_default();
    xf_error err;
    o.rules = rules;
    o.agent = XF_OPTIMIZE_SEARCH;
    if (xf_search_kind_parse(search, &o.search, &err)) die("search", err.msg);
    o.budget = budget;
    o.time_limit = time_limit;
    if (xf_cost_backend_parse(backend, &o.backend, &err)) die("--backend", err.msg);
    o.cache = cache;
    o.derived_rules = derived;
    bench_row r = bench_optimize_model(&o, path, scratch, NULL);
    bench_print_row(name, search, &r);
}

static const char *const zoo[][2] = {
    {"resnet18", "resnet18"},
    {"resnet50", "resnet50"},
    {"bert-L2-H256", "bert --layers 2 --hidden 256 --heads 4 --seq 64"},
    {"bert-base", "bert --layers 12 --hidden 768 --heads 12 --seq 128"},
};

/* The environment's step time on BERT-base: bench_env_step measures it
 * (median, p10, p90 and per part), with the same rules. */
static void step_time(const char *rules)
{
    char cmd[4096];
    printf("\n== environment step time (bench_env_step)\n");
    fflush(stdout);
    snprintf(cmd, sizeof cmd, "'%s' --rules '%s'", XF_BENCH_ENV_STEP, rules);
    if (system(cmd) != 0) fprintf(stderr, "bench_optimize: bench_env_step failed: %s\n", cmd);
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
        else if (!strcmp(argv[i], "--derived-rules")) derived = 1; /* the default */
        else if (!strcmp(argv[i], "--no-derived-rules")) derived = 0;
        else {
            printf("usage: bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick]\n"
                   "                      [--backend onednn|analytic] [--no-derived-rules]\n"
                   "Greedy and TASO search on ../shared/models and modelzoo models through\n"
                   "xf_optimize_file (oneDNN costs, 1 thread), then the environment step time on a\n"
                   "BERT-base-sized graph. --quick: shared models only, smaller budget.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (quick) budget = budget < 200 ? budget : 200;
    scratch = bench_scratch("bench_optimize");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    printf("rules: %s%s; budget %d, time limit %g s per search; %s costs\n", rules,
           derived ? " (proved and derived)" : " (proved)", budget, time_limit, backend);

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
    printf("\n== modelzoo\n");
    for (size_t m = 0; m < sizeof zoo / sizeof zoo[0]; m++) {
        char path[2048], cmd[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", scratch, zoo[m][0]);
        snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO, zoo[m][1],
                 path);
        if (system(cmd) != 0) die("modelzoo", cmd);
        if (quick) continue;
        for (int s = 0; s < 2; s++)
            run_and_print(zoo[m][0], path, searches[s], rules, budget, time_limit);
    }
    step_time(rules);
    return 0;
}
