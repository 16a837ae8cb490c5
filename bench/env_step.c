/*
 * bench_env_step — how fast the optimisation environment steps, and where
 * the time of a step goes.
 *
 *   bench_env_step [--rules DB] [--steps N] [--seed S]
 *
 * Rules: DB, or the proved rules of `xfergen --vocab taso --max-ops 3`
 * verified with xferverify (made once under $TMPDIR/bench_env_step, about
 * two minutes). Models: modelzoo's BERT-base (12 layers, hidden 768, 12
 * heads, sequence 128) and ResNet-50, written there too. For each model it
 * prints the rule set (proved rules in the database, actions, rules skipped
 * and deduplicated at load), the graph's size, the environment's creation
 * time, and the time of N random valid steps (uniform over offered rules,
 * then over their locations; reset when an episode ends): median, p10 and
 * p90, and the median of each part of a step as the environment measures it
 * (apply the rewrite, free the state before the previous one, index, cost,
 * match and hash the new graph); also the median thread CPU time of a step,
 * which other processes on a busy machine disturb less than wall time. Costs are
 * analytic (the step's own work, not kernel timing). One thread; the
 * figures are wall-clock and vary with the machine. The parts come from the
 * environment's own profile (xf_env_profile_get in agent/search/search.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/search/search.h"
#include "agent_runner.h"
#include "onnx/onnx.h"
#include "rulesdb/rulesdb.h"

static const char *scratch;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_env_step: %s: %s\n", what, msg);
    exit(1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v and returns its q-quantile (0 for none). */
static double quantile(double *v, int n, double q)
{
    if (n == 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)(q * n);
    return v[i < n ? i : n - 1];
}

static void print_rules(const char *rules, const xf_ruleset *rs)
{
    xf_error err = {0};
    xf_rulesdb *db = NULL;
    int64_t proved = -1;
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_PROVED;
    if (xf_rulesdb_open(rules, XF_RULESDB_READONLY, &db, &err) ||
        xf_rulesdb_count_rules(db, &f, &proved, &err))
        die("counting rules", err.msg);
    xf_rulesdb_close(db);
    const char *why = NULL;
    int skipped = xf_ruleset_skipped(rs, &why);
    printf("rules: %s: %lld proved; %d actions (both directions), %d skipped, %d "
           "deduplicated\n",
           rules, (long long)proved, xf_ruleset_count(rs), skipped, xf_ruleset_duplicates(rs));
    if (why) printf("  first skip: %s\n", why);
}

enum { PARTS = 6 };
static const char *const part_name[PARTS] = {"apply", "free", "index", "cost", "match", "hash"};

static void profile_parts(const xf_env *env, double *t)
{
    xf_env_profile p;
    xf_env_profile_get(env, &p);
    t[0] = p.apply;
    t[1] = p.release;
    t[2] = p.index;
    t[3] = p.cost;
    t[4] = p.match;
    t[5] = p.hash;
}

/* Random valid steps on an environment over `model_path`. */
static void bench_model(const char *label, const char *model_path, const xf_ruleset *rs,
                        int steps, uint64_t seed)
{
    xf_error err = {0};
    xf_graph g;
    xf_graph_init(&g);
    if (xf_onnx_load(model_path, NULL, &g, &err)) die(model_path, err.msg);
    xf_cost_options co = xf_cost_options_default();
    co.backend = XF_COST_ANALYTIC;
    co.cache_path = NULL;
    co.peak_gflops = 100;
    co.bandwidth_gbps = 20;
    xf_cost_model *cm = NULL;
    if (xf_cost_open(&co, &cm, &err)) die("cost model", err.msg);
    xf_env_options eo = xf_env_options_default();
    xf_env *env = NULL;
    double t0 = xf_clock_now();
    if (xf_env_create(rs, cm, &g, &eo, &env, &err)) die("environment", err.msg);
    double t_create = xf_clock_now() - t0;
    int n_x = xf_env_num_xfers(env), offered = 0, locations = 0;
    for (int x = 0; x < n_x; x++) {
        offered += xf_env_xfer_mask(env)[x];
        locations += xf_env_num_locations(env, x);
    }
    printf("\n== %s: %d nodes (working graph %d), %d rules offered, %d locations\n", label,
           g.n_nodes, xf_env_graph(env)->n_nodes, offered, locations);
    printf("env create (prepare, cost, first matching): %.1f ms\n", t_create * 1e3);

    double *us = xf_malloc(sizeof *us * (size_t)(steps + 1));
    double *cpu = xf_malloc(sizeof *cpu * (size_t)(steps + 1));
    double *part = xf_malloc(sizeof *part * (size_t)(steps + 1) * PARTS);
    if (!us || !cpu || !part) die("bench", "out of memory");
    int n = 0, resets = 0;
    xf_rng rng;
    xf_rng_seed(&rng, seed);
    while (n < steps) {
        const uint8_t *mask = xf_env_xfer_mask(env);
        int valid = 0;
        for (int x = 0; x < n_x; x++) valid += mask[x];
        if (valid == 0) break;
        int pick = (int)(xf_rng_next(&rng) % (uint64_t)valid), x = 0;
        for (; x < n_x; x++)
            if (mask[x] && pick-- == 0) break;
        int loc = (int)(xf_rng_next(&rng) % (uint64_t)xf_env_num_locations(env, x));
        double before[PARTS], after[PARTS];
        profile_parts(env, before);
        xf_env_step_result r;
        double t = xf_clock_now(), c = xf_clock_thread_cpu();
        if (xf_env_step(env, x, loc, &r, &err)) die("step", err.msg);
        double dt = xf_clock_now() - t, dc = xf_clock_thread_cpu() - c;
        profile_parts(env, after);
        if (r.valid) {
            us[n] = dt * 1e6;
            cpu[n] = dc * 1e6;
            for (int k = 0; k < PARTS; k++)
                part[(size_t)k * (size_t)steps + (size_t)n] = (after[k] - before[k]) * 1e6;
            n++;
        }
        if (r.done) {
            if (xf_env_reset(env, &err)) die("reset", err.msg);
            resets++;
        }
    }
    printf("step: median %.1f us, p10 %.1f us, p90 %.1f us over %d random valid steps "
           "(%d resets), final graph %d nodes\n",
           quantile(us, n, 0.5), quantile(us, n, 0.1), quantile(us, n, 0.9), n, resets,
           xf_env_graph(env)->n_nodes);
    printf("step thread CPU time: median %.1f us, p10 %.1f us, p90 %.1f us\n",
           quantile(cpu, n, 0.5), quantile(cpu, n, 0.1), quantile(cpu, n, 0.9));
    printf("parts (median us):");
    for (int k = 0; k < PARTS; k++)
        printf(" %s %.1f", part_name[k], quantile(part + (size_t)k * (size_t)steps, n, 0.5));
    printf("\n");
    fflush(stdout);
    xf_free(us);
    xf_free(cpu);
    xf_free(part);
    xf_env_free(env);
    xf_cost_close(cm);
    xf_graph_free(&g);
}

static const char *const zoo[][2] = {
    {"bert-base", "bert --layers 12 --hidden 768 --heads 12 --seq 128"},
    {"resnet50", "resnet50"},
};

int main(int argc, char **argv)
{
    const char *rules_arg = NULL;
    int steps = 500;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules_arg = argv[++i];
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else {
            printf("usage: bench_env_step [--rules DB] [--steps N] [--seed S]\n"
                   "Environment step time (median, p10, p90, per part) over N random valid\n"
                   "steps on modelzoo BERT-base and ResNet-50. Without --rules, the proved\n"
                   "rules of xfergen --vocab taso --max-ops 3 are made under $TMPDIR.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    if (steps < 1) die("--steps", "must be at least 1");
    scratch = bench_scratch("bench_env_step");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);

    xf_error err = {0};
    xf_ruleset *rs = NULL;
    xf_ruleset_options ro = xf_ruleset_options_default();
    double t0 = xf_clock_now();
    if (xf_ruleset_load(rules, &ro, &rs, &err)) die("loading rules", err.msg);
    print_rules(rules, rs);
    printf("rule set load and compile: %.1f ms\n", (xf_clock_now() - t0) * 1e3);
    for (size_t m = 0; m < sizeof zoo / sizeof zoo[0]; m++) {
        char path[2048], cmd[4096];
        snprintf(path, sizeof path, "%s/%s.onnx", scratch, zoo[m][0]);
        struct stat st;
        if (stat(path, &st) != 0) {
            snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO,
                     zoo[m][1], path);
            if (system(cmd) != 0) die("modelzoo", cmd);
        }
        bench_model(zoo[m][0], path, rs, steps, seed);
    }
    xf_ruleset_free(rs);
    return 0;
}
