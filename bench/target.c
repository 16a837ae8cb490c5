/*
 * bench_target — rlflow against ONNX Runtime, per model: what the TASO
 * search's rewrites are worth where the model runs, and whether the cost
 * model ranks graphs the way the runtime does.
 *
 *   bench_target [--quick] [--budget N] [--models LIST] [--threads LIST]
 *                [--candidates K] [--rules DB] [--time-limit S] [--sections LIST]
 *
 * 1. Rules: DB, else $RLFLOW_BENCH_RULES, else the proved rules of
 *    `xfergen --vocab taso --max-ops 3` verified with xferverify (made once
 *    under $TMPDIR/bench_target, as bench_optimize does).
 * 2. Every model (../shared/models and modelzoo configurations) is searched
 *    once with TASO search on the oneDNN cost model (1 thread), keeping its
 *    cheapest distinct graphs. Then for each ONNX Runtime thread count: the
 *    arbiter (xf_agent_arbitrate) times the candidates against the input in
 *    ONNX Runtime and picks what would be written; one row per model with
 *    the cost model's view, the target's, and the oneDNN executor's.
 * 3. Rank correlation of the cost model, and of the fusion-aware cost (the
 *    graph's fused regions timed in ONNX Runtime), with ONNX Runtime latency (and
 *    with the oneDNN executor) over the graphs the search visited.
 * 4. The TASO search again on the fusion-aware cost, then the arbiter
 *    (target_fused.c): what `rlflow-agent --target ort --cost fused` writes.
 * Prints only; never asserts. Without ONNX Runtime it says so and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_runner.h"
#include "onnx/onnx.h"
#include "target_bench.h"

typedef struct model_spec {
    const char *name;
    const char *zoo; /* modelzoo arguments; NULL: ../shared/models/<name>/model.onnx */
    int quick;       /* part of --quick */
} model_spec;

static const model_spec specs[] = {
    {"bert_small", NULL, 1},
    {"vit_tiny", NULL, 0},
    {"resnet18", NULL, 0},
    {"squeezenet1_1", NULL, 1},
    {"zoo:bert", "bert", 1},
    {"zoo:vit", "vit", 0},
    {"zoo:resnet18", "resnet18", 0},
    {"zoo:bert-L4-H256", "bert --layers 4 --hidden 256 --heads 4 --seq 64", 0},
    {"zoo:gpt", "gpt", 0},
};
enum { N_SPECS = sizeof specs / sizeof specs[0], MAX_THREADS = 8 };

typedef struct options {
    int quick, budget, k, n_threads;
    int threads[MAX_THREADS];
    double time_limit;
    const char *models, *rules;
    int section[4]; /* sections 1..3 printed */
} options;

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_target: %s: %s\n", what, msg);
    exit(1);
}

static int usage(int rc)
{
    printf("usage: bench_target [--quick] [--budget N] [--models LIST] [--threads LIST]\n"
           "                    [--candidates K] [--rules DB] [--time-limit S] [--sections LIST]\n"
           "TASO search (proved 3-op TASO-vocabulary rules, oneDNN cost model) on each model,\n"
           "then ONNX Runtime (CPU) as the final arbiter, per thread count: latency of the input\n"
           "and of what would be written, the ratio with its 95%% interval, the noise; and the\n"
           "rank correlation of the cost model with ONNX Runtime latency over the graphs the\n"
           "search visited.\n"
           "  --quick          bert_small, squeezenet1_1, zoo:bert; K = 8; shorter timing\n"
           "  --budget N       TASO search budget, graphs expanded (default 200)\n"
           "  --models LIST    comma-separated names (default all):");
    for (int i = 0; i < N_SPECS; i++) printf("%s%s", i ? "," : " ", specs[i].name);
    printf("\n  --threads LIST   ONNX Runtime intra-op threads (default 1,2)\n"
           "  --candidates K   graphs kept for the rank correlation (default 24)\n"
           "  --rules DB       proved rules (default $RLFLOW_BENCH_RULES, else made here)\n"
           "  --time-limit S   wall-clock cap per search (default 120)\n"
           "  --sections LIST  which of sections 1 (arbiter), 2 (rank correlation) and 3\n"
           "                   (fusion-aware search) to run, e.g. 1,3 (default 1,2,3)\n"
           "ONNX Runtime: $RLFLOW_ORT_LIB, else where tools/setup.sh installs it.\n");
    return rc;
}

static int parse_threads(const char *s, options *o)
{
    o->n_threads = bench_thread_list(s, o->threads, MAX_THREADS);
    return o->n_threads > 0;
}

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->budget = 200;
    o->k = 24;
    o->time_limit = 120;
    o->rules = getenv("RLFLOW_BENCH_RULES");
    parse_threads("1,2", o);
    o->section[1] = o->section[2] = o->section[3] = 1;
    int k_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(0) - 1;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (!v) return usage(2);
        i++;
        if (!strcmp(a, "--budget")) o->budget = atoi(v);
        else if (!strcmp(a, "--models")) o->models = v;
        else if (!strcmp(a, "--rules")) o->rules = v;
        else if (!strcmp(a, "--time-limit")) o->time_limit = atof(v);
        else if (!strcmp(a, "--candidates")) {
            o->k = atoi(v);
            k_given = 1;
        } else if (!strcmp(a, "--threads")) {
            if (!parse_threads(v, o)) return usage(2);
        } else if (!strcmp(a, "--sections")) {
            o->section[1] = o->section[2] = o->section[3] = 0;
            for (const char *c = v; *c; c++) {
                if (*c >= '1' && *c <= '3') o->section[*c - '0'] = 1;
                else if (*c != ',') return usage(2);
            }
        } else return usage(2);
    }
    if (o->budget < 1 || o->k < 1) return usage(2);
    if (o->quick && !k_given) o->k = 8;
    return 0;
}

static int wanted(const options *o, const model_spec *s)
{
    if (!o->models) return !o->quick || s->quick;
    size_t n = strlen(s->name);
    for (const char *p = o->models; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && !strncmp(p, s->name, n)) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static int64_t param_bytes(const xf_graph *g)
{
    int64_t b = 0;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].kind == XF_VALUE_CONST)
            b += xf_shape_numel(&g->values[v].shape) * (int64_t)xf_dtype_size(g->values[v].dtype);
    return b;
}

/* The model's path: the shared file, or modelzoo's output in scratch.
 * 0 when the model is absent (a line says so). */
static int model_path(const model_spec *s, const char *scratch, char *path, size_t n)
{
    struct stat st;
    if (!s->zoo) {
        snprintf(path, n, "%s/%s/model.onnx", XF_BENCH_MODELS_DIR, s->name);
        if (stat(path, &st) == 0) return 1;
        printf("%-18s skipped: %s not found\n", s->name, path);
        return 0;
    }
    char cmd[4096];
    snprintf(path, n, "%s/%s.onnx", scratch, s->name + 4);
    snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO, s->zoo, path);
    if (system(cmd) != 0) die("modelzoo", cmd);
    return 1;
}

static void model_free(tb_model *m)
{
    for (int i = 0; i < 2; i++) xf_model_search_free(&m->ms[i]);
    xf_graph_free(&m->outcome);
    xf_graph_free(&m->model);
}

/* Loads one model and searches it (twice when it has scalings to move:
 * moved and kept, as rlflow-agent --target ort does); 0 (a line says why)
 * on failure. */
static int search_model(const model_spec *s, const char *path, const char *rules,
                        xf_cost_model *cm, const options *o, tb_model *m)
{
    xf_error err = {0};
    snprintf(m->name, sizeof m->name, "%s", s->name);
    xf_status st = xf_onnx_load(path, NULL, &m->model, &err);
    if (!st) st = xf_model_search_prepare(&m->ms[0], &m->model, NULL, &err);
    if (!st) st = xf_model_search_rules(&m->ms[0], rules, NULL, 1, &err);
    xf_prepare_options alt;
    m->n_searches = 1;
    if (!st && xf_prepare_alternative(&m->ms[0].prepare, &m->ms[0].prep, &alt)) {
        st = xf_model_search_prepare(&m->ms[1], &m->model, &alt, &err);
        if (!st) st = xf_model_search_rules(&m->ms[1], rules, NULL, 1, &err);
        m->n_searches = 2;
    }
    xf_search_options so = xf_search_options_default();
    so.budget = o->budget;
    so.max_seconds = o->time_limit;
    so.candidates = o->k > 19 ? o->k : 19; /* rlflow-agent keeps 3 * 6 + 1 */
    double t0 = xf_clock_now();
    for (int i = 0; i < m->n_searches && !st; i++) {
        st = xf_model_search_env(&m->ms[i], cm, NULL, &err);
        if (!st) st = xf_search_run(m->ms[i].env, XF_SEARCH_TASO, &so, &m->ms[i].res, &err);
    }
    m->search_s = xf_clock_now() - t0;
    const xf_search_result *r = &m->ms[0].res;
    if (!st) st = xf_agent_outcome_model(cm, &m->model, &r->best, &m->outcome, &m->oc, &err);
    m->param_bytes = param_bytes(&m->model);
    if (st) printf("%-18s failed: %s\n", s->name, err.msg);
    else
        printf("%-18s %6d nodes, %7.1f MB parameters; search %5.1f s%s, %lld expanded, %d "
               "candidates; cost %.4f -> %.4f ms (%+.2f%%, as written)\n",
               s->name, m->model.n_nodes, (double)m->param_bytes / 1e6, m->search_s,
               m->n_searches > 1 ? " (both ways)" : "", (long long)r->expanded,
               r->n_candidates, m->oc.cost_before, m->oc.cost_after,
               100.0 * (m->oc.cost_after / m->oc.cost_before - 1));
    fflush(stdout);
    return st == XF_OK;
}

/* xf_target_outputs_diff of a and b; -1 when it could not run. */
static double target_rel_diff(xf_target *t, const xf_graph *a, const xf_graph *b)
{
    double rel = 0;
    return xf_target_outputs_diff(t, a, b, 1, &rel, NULL) ? -1 : rel;
}

/* One row of the per-model table for a thread count. */
static void table_row(xf_target *t, xf_cost_model *cm, xf_cost_model *exec_cm, tb_model *m,
                      const xf_target_timing_options *to)
{
    xf_error err = {0};
    xf_arbiter_options ao = xf_arbiter_options_default();
    ao.timing = *to;
    xf_arbiter_result a;
    xf_graph out;
    xf_graph_init(&out);
    const xf_search_result *srs[2] = {&m->ms[0].res, &m->ms[1].res};
    if (xf_agent_arbitrate(t, cm, &m->model, srs, m->n_searches, &ao, &out, &a, &err)) {
        printf("%-18s %3d  arbiter failed: %s\n", m->name, xf_target_threads(t), err.msg);
        return;
    }
    const xf_arbiter_entry *in = &a.e[0], *ch = &a.e[a.chosen];
    /* the cheapest timed candidate on the cost model: what the search would write */
    const xf_arbiter_entry *cheap = NULL;
    for (int i = 1; i < a.n; i++)
        if (a.e[i].t.runs > 0 && (!cheap || a.e[i].cost_ms < cheap->cost_ms)) cheap = &a.e[i];
    char verdict[32], eq[24], cheap_s[16] = "-", dnn[40], confirm[16] = "-";
    if (a.chosen == 0) snprintf(verdict, sizeof verdict, "input kept");
    else xf_arbiter_entry_name(ch, verdict, sizeof verdict);
    if (a.chosen) snprintf(eq, sizeof eq, "%.1e", a.max_rel);
    else snprintf(eq, sizeof eq, "%.1e*", target_rel_diff(t, &m->model, &m->outcome));
    if (cheap) snprintf(cheap_s, sizeof cheap_s, "%.3f", cheap->t.ratio);
    if (a.chosen) snprintf(confirm, sizeof confirm, "%.3f", ch->confirm.ratio);
    double d0 = 0, d1 = 0, spread = 0;
    if (xf_agent_latency_pair(exec_cm, &m->model, &m->outcome, &d0, &d1, &spread, &err))
        snprintf(dnn, sizeof dnn, "failed");
    else
        snprintf(dnn, sizeof dnn, "%.3f +-%.3f%s", d1 / d0, spread,
                 m->oc.kept_original ? " =in" : "");
    printf("%-18s %3d %6d %8.1f %8.4f %8.4f  %-13s %8.3f %8.3f  %.3f [%.3f,%.3f] %7s %6.3f %6s "
           "%9s %-18s %7.1f %7.1f\n",
           m->name, xf_target_threads(t), m->model.n_nodes, (double)m->param_bytes / 1e6,
           in->cost_ms, m->oc.cost_after, verdict, ch->input_ms, ch->t.median_ms, ch->t.ratio,
           ch->t.lo, ch->t.hi, confirm, a.self.noise, cheap_s, eq, dnn, m->search_s, a.seconds);
    for (int i = 1; i < a.n; i++) { /* the closer look, when the run of all could not tell */
        char name[32];
        xf_arbiter_entry_name(&a.e[i], name, sizeof name);
        if (a.e[i].closer.runs > 0)
            printf("%-18s %3d  closer look at %s: %.3f [%.3f,%.3f]%s\n", "",
                   xf_target_threads(t), name, a.e[i].closer.ratio, a.e[i].closer.lo,
                   a.e[i].closer.hi, i == a.chosen ? ", written" : ", not faster beyond the noise");
    }
    fflush(stdout);
    xf_graph_free(&out);
    xf_arbiter_result_free(&a);
}

static xf_target *open_target(int threads)
{
    xf_error err = {0};
    xf_target_options to = xf_target_default_options();
    to.threads = threads;
    xf_target *t = NULL;
    if (xf_target_open(&to, &t, &err)) die("ONNX Runtime", err.msg);
    return t;
}

static xf_cost_model *open_cost(int threads, const char *cache)
{
    xf_error err = {0};
    xf_cost_options co = xf_cost_options_default();
    co.backend = XF_COST_ONEDNN;
    co.threads = threads;
    co.cache_path = cache;
    xf_cost_model *cm = NULL;
    if (xf_cost_open(&co, &cm, &err)) die("cost model", err.msg);
    return cm;
}

static void print_legend(void)
{
    printf("  thr: ONNX Runtime intra-op threads (the oneDNN executor uses as many); cost: the\n"
           "  cost model (sum of 1-thread oneDNN kernels), input and search's best as written;\n"
           "  verdict: what the arbiter writes (cand N: candidate N of the search, in its\n"
           "  unbatched layout with 2-D; cand 1:N: of the search with the scalings kept);\n"
           "  ORT in/out: median ms of the input and of that;\n"
           "  ratio out/in [95%% interval]; confirm: the written model's ratio in its confirming\n"
           "  run against the input alone; noise: the input against a second session of\n"
           "  itself; cheap: ORT ratio of the cheapest candidate timed; max_rel: outputs of the\n"
           "  written model vs the input in ORT (* = the search's best, when the input is kept);\n"
           "  oneDNN: executor latency ratio of the search's best (+- run spread, =in: the best\n"
           "  was not cheaper as written, the input); search s / arbiter s: the time the target\n"
           "  adds is the arbiter's. A 'closer look' line follows a row when the run of all\n"
           "  could not tell the fastest undecided candidate from the input: its ratio in a run\n"
           "  of its own against the input with four times the rounds; the row's ratio is then\n"
           "  the run of all's (pairwise: the candidate's own run's).\n");
    printf("%-18s %3s %6s %8s %8s %8s  %-13s %8s %8s  %-19s %7s %6s %6s %9s %-18s %7s %7s\n",
           "model", "thr", "nodes", "param MB", "cost in", "cost out", "verdict", "ORT in",
           "ORT out", "ratio [95% int]", "confirm", "noise", "cheap", "max_rel", "oneDNN", "search",
           "arbiter");
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    xf_error err = {0};
    xf_target_options probe = xf_target_default_options();
    probe.threads = o.threads[0];
    xf_target *t = NULL;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (xf_target_open(&probe, &t, &err)) {
        printf("bench_target: ONNX Runtime is not available: %s\n", err.msg);
        printf("bench_target: nothing to measure without the target; run tools/setup.sh\n");
        return 0;
    }
    printf("machine: %ld cores (shared: figures at 2 threads are noisy while others compile)\n",
           cores);
    printf("target:  %s\n", xf_target_identity(t));
    xf_target_close(t);

    const char *scratch = bench_scratch("bench_target");
    char rules[2048], cache[2100];
    if (o.rules) snprintf(rules, sizeof rules, "%s", o.rules);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    snprintf(cache, sizeof cache, "%s/costs.db", scratch);
    xf_cost_model *cm = open_cost(1, cache);
    printf("costs:   %s\nrules:   %s; TASO search, budget %d, at most %g s; K = %d%s\n",
           xf_cost_identity(cm), rules, o.budget, o.time_limit, o.k, o.quick ? "; --quick" : "");

    printf("\n== search (once per model; oneDNN cost model, 1 thread)\n");
    tb_model *m = xf_calloc(N_SPECS, sizeof *m);
    if (!m) die("models", "out of memory");
    int n = 0;
    for (int i = 0; i < N_SPECS; i++) {
        char path[2048];
        if (!wanted(&o, &specs[i]) || !model_path(&specs[i], scratch, path, sizeof path)) continue;
        xf_graph_init(&m[n].model);
        xf_graph_init(&m[n].outcome);
        for (int k = 0; k < 2; k++) xf_model_search_init(&m[n].ms[k]);
        if (search_model(&specs[i], path, rules, cm, &o, &m[n])) n++;
        else model_free(&m[n]);
    }
    xf_target_timing_options to;
    memset(&to, 0, sizeof to);
    if (o.quick) {
        to.rounds = 10;
        to.round_ms = 25;
    }

    if (o.section[1]) {
        printf("\n== 1. per model: the arbiter in ONNX Runtime (what would be written)\n");
        print_legend();
    }
    for (int ti = 0; ti < o.n_threads && o.section[1]; ti++) {
        t = open_target(o.threads[ti]);
        xf_cost_model *exec_cm = open_cost(o.threads[ti], NULL);
        for (int i = 0; i < n; i++) table_row(t, cm, exec_cm, &m[i], &to);
        xf_cost_close(exec_cm);
        xf_target_close(t);
    }

    if (o.section[2])
        printf("\n== 2. rank correlation: cost model (as written) vs latency, over the graphs the "
           "search visited\n"
           "  n: distinct finished models (input, start graph, cheapest K); cost/ORT: ranges "
           "relative to the input;\n  rho, tau: the operator cost model's; f.rho, f.tau: the "
           "fusion-aware cost's (fused regions\n  timed in ONNX Runtime), f.s: seconds it took; "
           "ORT s: timing time; nan: undefined (one side\n  constant); oneDNN: the operator "
           "cost's correlation with the 1-thread oneDNN executor's latency (n)\n");
    xf_cost_model *exec1 = open_cost(1, NULL);
    for (int ti = 0; ti < o.n_threads && o.section[2]; ti++) {
        t = open_target(o.threads[ti]);
        printf("-- ONNX Runtime, %d thread%s\n", o.threads[ti], o.threads[ti] > 1 ? "s" : "");
        printf("%-18s %6s %7s %7s  %7s %7s %6s  %-11s  %-11s %6s   %s\n", "model", "n", "rho",
               "tau", "f.rho", "f.tau", "f.s", "cost", "ORT ratio", "ORT s", "oneDNN rho, tau");
        xf_fused_cost *fc = NULL;
        if (xf_fused_cost_create(t, cm, NULL, &fc, &err)) die("fusion-aware cost", err.msg);
        for (int i = 0; i < n; i++) tb_rank_model(t, cm, fc, exec1, &m[i], o.k, &to);
        xf_fused_cost_free(fc);
        xf_target_close(t);
    }
    xf_cost_close(exec1);

    if (o.section[3])
        printf("\n== 3. the search on the fusion-aware cost (fused regions timed in ONNX Runtime), "
           "then the arbiter\n"
           "  search s: TASO search, budget %d (section 1's search on the operator cost: its "
           "'search' column);\n  timed: regions timed in ONNX Runtime (timing s); fused cost "
           "before -> after (the prepared graph);\n  verdict and ratio [95%% interval] as in "
           "section 1; noise: the input against itself; arbiter s\n",
           o.budget);
    if (o.section[3])
        printf("%-18s %3s %8s %8s %6s %8s %8s %8s  %-13s %-19s %6s %7s\n", "model", "thr",
               "search s", "timed", "s", "fused in", "fused out", "change", "verdict",
               "ratio [95% int]", "noise", "arbiter");
    for (int ti = 0; ti < o.n_threads && o.section[3]; ti++) {
        t = open_target(o.threads[ti]);
        for (int i = 0; i < n; i++) tb_fused_model(t, cm, &m[i], o.budget, o.time_limit, &to);
        xf_target_close(t);
    }
    for (int i = 0; i < n; i++) model_free(&m[i]);
    xf_free(m);
    xf_cost_close(cm);
    return 0;
}
