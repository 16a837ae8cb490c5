/*
 * bench_optimize — what the search baselines achieve on real models, and how
 * fast the optimisation environment steps.
 *
 *   bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick]
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
#include "onnx/onnx.h"

static char scratch[1024];

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

static void make_rules(char *path, size_t n)
{
    snprintf(path, n, "%s/rules.db", scratch);
    struct stat st;
    if (stat(path, &st) == 0) return;
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' --vocab taso --max-ops 3 -o '%s' > /dev/null && '%s' -j 2 '%s' > /dev/null",
             XF_BENCH_XFERGEN, path, XF_BENCH_XFERVERIFY, path);
    fprintf(stderr, "bench_optimize: generating and verifying rules (about 2 minutes)\n");
    if (system(cmd) != 0) {
        remove(path);
        die("making the rules", cmd);
    }
}

/* One rlflow-agent run; the report lines we tabulate. */
typedef struct row {
    char nodes[64], applicable[64], cost[96], latency[96], err[64], search[96];
    int ok;
} row;

static void field(const char *line, const char *key, char *dst, size_t n)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0) return;
    const char *v = line + k;
    while (*v == ' ') v++;
    snprintf(dst, n, "%s", v);
    dst[strcspn(dst, "\n")] = '\0';
}

static row run_agent(const char *model, const char *search, const char *rules, int budget,
                     double time_limit)
{
    row r;
    memset(&r, 0, sizeof r);
    char cmd[8192], out[1100];
    snprintf(out, sizeof out, "%s/out.onnx", scratch);
    snprintf(cmd, sizeof cmd,
             "'%s' --rules '%s' '%s' -o '%s' --search %s --budget %d --time-limit %g "
             "--backend onednn --cache '%s/costs.db' -q 2>&1",
             XF_BENCH_AGENT, rules, model, out, search, budget, time_limit, scratch);
    FILE *p = popen(cmd, "r");
    if (!p) return r;
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        field(line, "model:", r.nodes, sizeof r.nodes);
        field(line, "applicable:", r.applicable, sizeof r.applicable);
        field(line, "cost:", r.cost, sizeof r.cost);
        field(line, "latency:", r.latency, sizeof r.latency);
        field(line, "max output err:", r.err, sizeof r.err);
        field(line, "search:", r.search, sizeof r.search);
        if (strncmp(line, "rlflow-agent:", 13) == 0) fprintf(stderr, "  %s", line);
    }
    r.ok = pclose(p) == 0;
    return r;
}

static void print_row(const char *name, const char *search, const row *r)
{
    printf("%-22s %-6s %s\n", name, search, r->ok ? "" : "FAILED (see above)");
    if (!r->ok) return;
    printf("    model      %s\n    applicable %s\n    cost       %s\n    latency    %s\n"
           "    error      %s\n    search     %s\n",
           r->nodes, r->applicable, r->cost, r->latency, r->err, r->search);
    fflush(stdout);
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
        else {
            printf("usage: bench_optimize [--rules DB] [--budget N] [--time-limit S] [--quick]\n"
                   "Greedy and TASO search on ../shared/models and modelzoo models through\n"
                   "rlflow-agent (oneDNN costs, 1 thread), then the environment step time on a\n"
                   "BERT-base-sized graph. --quick: shared models only, smaller budget.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (quick) budget = budget < 200 ? budget : 200;
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof scratch, "%s/bench_optimize", tmp && *tmp ? tmp : "/tmp");
    mkdir(scratch, 0755);
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else make_rules(rules, sizeof rules);
    printf("rules: %s; budget %d, time limit %g s per search\n", rules, budget, time_limit);

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
        for (int s = 0; s < 2; s++) {
            row r = run_agent(path, searches[s], rules, budget, time_limit);
            print_row(names[m], searches[s], &r);
        }
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
        for (int s = 0; s < 2; s++) {
            row r = run_agent(path, searches[s], rules, budget, time_limit);
            print_row(zoo[m][0], searches[s], &r);
        }
    }
    step_time(rules, bert_base);
    return 0;
}
