/*
 * bench_transfer — a pre-trained agent on models it never saw, against TASO
 * search (issue 35, "Transfer": target latency within 1% of TASO search's
 * at <= 1/10 of its optimisation time).
 *
 *   bench_transfer [--rules DB] [--ckpt FILE] [--retrain] [--train-seconds S]
 *                  [--agent ppo|wm] [--samples N] [--guide K] [--seed N] [--no-target]
 *                  [--target-budget S] [--race-threads N]... [--race-only]
 *                  [--train PATH]... [--held PATH]...
 *
 * 1. Rules: DB, else the default rules database next to rlflow-agent (as
 *    rlflow-agent finds it).
 * 2. Training set (unless --train): modelzoo BERT, ViT and GPT variants of
 *    several sizes and batches (written once under $TMPDIR/bench_transfer),
 *    ../shared/models' resnet18 and squeezenet1_1, and the published
 *    models of ../shared/models/real. One agent is trained over all of them
 *    (xf_train_agent, as `rlflow-agent train`) for --train-seconds (default
 *    300) unless the checkpoint (--ckpt, default
 *    $TMPDIR/bench_transfer/agent.ckpt) is there and --retrain is not given.
 * 3. Held out (unless --held): ../shared/models' bert_small and vit_tiny, and
 *    modelzoo BERT and ViT at sizes not trained on. Each is optimised twice
 *    in-process (xf_optimize_file, as rlflow-agent): TASO search, and the
 *    pre-trained agent loaded (no training; PPO: a search its policy guides
 *    over its --guide most likely rules a step (default XF_OPTIMIZE_GUIDE),
 *    then one greedy and --samples sampled episodes), and with --guide > 0
 *    the policy alone (--guide 0), all with ONNX Runtime deciding what is
 *    written (--target ort; --no-target: the cost model).
 * 4. A table, one row per held-out model and method: the search cost change
 *    (prepared graph), the cost change of the model written, ONNX Runtime's
 *    latency ratio written/input (the arbiter's; 1 when the input was
 *    written), the optimisation's wall time (the search or the agent's
 *    episodes) and the whole call's; then per model whether the agent's
 *    ratio is within 1% of TASO's and its optimisation time <= 1/10 of
 *    TASO's; then the rules TASO applied more often than the agent and the
 *    other way round (why their models differ), and with the target each
 *    method's arbiter entries (which candidate was written, what each
 *    measured against the input); then the input and the models each
 *    method wrote (kept as <scratch>/held<i>.<method>.onnx) timed
 *    alternately in one process, and the verdict "within 1%" from that
 *    race (the arbiters' ratios come from separate noisy runs, and TASO's
 *    is the least of many draws), at 1 thread and at every core
 *    (--race-threads N, repeatable; 0: every core): one other busy process
 *    on a 2-core machine slows a 2-thread run far more than a 1-thread one.
 *    The verdict says when the race's own noise (its self check) is over
 *    1%. Timings on a shared machine are noisy: the load average is
 *    printed with the table and with each race.
 * 5. --race-only: no training or optimising; the models an earlier run
 *    wrote for the same --held list raced again, in a fresh process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_runner.h"
#include "target/target.h"

#define MAX_PATHS 64
#define MAX_RACES 4 /* --race-threads given */

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_transfer: %s: %s\n", what, msg);
    exit(1);
}

static const char *const zoo_train[][2] = {
    {"bert_l2_h128_s32", "bert --layers 2 --hidden 128 --heads 2 --seq 32"},
    {"bert_l2_h128_s64_b2", "bert --layers 2 --hidden 128 --heads 2 --seq 64 --batch 2"},
    {"bert_l4_h256_s32", "bert --layers 4 --hidden 256 --heads 4 --seq 32"},
    {"vit_l2_h96_i64", "vit --layers 2 --hidden 96 --heads 3 --image 64 --patch 16"},
    {"vit_l4_h192_i112_b2", "vit --layers 4 --hidden 192 --heads 3 --image 112 --patch 16 --batch 2"},
    {"gpt_l2_h128", "gpt --layers 2 --hidden 128 --heads 2 --seq 32"},
};
static const char *const zoo_held[][2] = {
    {"bert_l3_h192_s48", "bert --layers 3 --hidden 192 --heads 3 --seq 48"},
    {"vit_l3_h144_i96", "vit --layers 3 --hidden 144 --heads 3 --image 96 --patch 16"},
};

/* <scratch>/<name>.onnx written by modelzoo once; its path into out. */
static const char *zoo_model(const char *scratch, const char *name, const char *args,
                             char *out, size_t n)
{
    snprintf(out, n, "%s/%s.onnx", scratch, name);
    struct stat sb;
    if (stat(out, &sb) == 0) return out;
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' >/dev/null", XF_BENCH_MODELZOO, args, out);
    if (system(cmd) != 0) die("modelzoo", cmd);
    return out;
}

#define MAX_RULES 256

typedef struct figures {
    int ok, kept_original, n_applied, n_rules;
    double search_pct, cost_pct, ratio, opt_s, call_s;
    int64_t rule_id[MAX_RULES]; /* rules on the path to the model written */
    int count[MAX_RULES];
    char text[MAX_RULES][96];
    char arbiter[4096]; /* the arbiter's entries, a line each (what it wrote, and why) */
} figures;

/* The arbiter's entries of report r into buf: name, cost, nodes, ratio
 * against the input with its interval, verdict (as rlflow-agent prints
 * them), so the reader sees which candidate was written and what the
 * less rewritten ones (the start graph, its 2-D variant) measured. */
static void arbiter_lines(const xf_optimize_report *r, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->arb.n && used < n; i++) {
        const xf_arbiter_entry *e = &r->arb.e[i];
        char name[48], ratio[64] = "-";
        xf_arbiter_entry_name(e, name, sizeof name);
        if (e->t.runs > 0)
            snprintf(ratio, sizeof ratio, "x%.3f [%.3f, %.3f]", e->t.ratio, e->t.lo, e->t.hi);
        int w = snprintf(buf + used, n - used, "      %-12s %9.4f ms %5d nodes %-24s %s\n", name,
                         e->cost_ms, e->n_nodes, ratio, xf_optimize_verdict_name(e->verdict));
        if (w < 0) break;
        used += (size_t)w;
    }
}

static figures run(const xf_optimize_options *o, const char *model, const char *scratch)
{
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    bench_row row = bench_optimize_model(o, model, scratch, &r);
    figures f;
    memset(&f, 0, sizeof f);
    f.ratio = 1.0;
    if (!row.ok) return f;
    f.ok = 1;
    const xf_optimize_search_figures *s = &r.search[r.chosen_search];
    f.search_pct = s->initial_ms > 0 ? 100.0 * (s->best_ms - s->initial_ms) / s->initial_ms : 0;
    f.cost_pct =
        r.cost_before > 0 ? 100.0 * (r.cost_after - r.cost_before) / r.cost_before : 0;
    f.kept_original = r.kept_original;
    if (r.target && !r.kept_original && r.arb.n > 0) f.ratio = r.arb.e[r.arb.chosen].t.ratio;
    f.opt_s = r.search_seconds;
    f.call_s = r.seconds;
    f.n_applied = r.n_applied;
    if (r.target) arbiter_lines(&r, f.arbiter, sizeof f.arbiter);
    for (int i = 0; i < r.n_distinct && f.n_rules < MAX_RULES; i++, f.n_rules++) {
        f.rule_id[f.n_rules] = r.applied[i].rule_id * 2 + r.applied[i].backward;
        f.count[f.n_rules] = r.applied[i].count;
        snprintf(f.text[f.n_rules], sizeof f.text[0], "%s%s", r.applied[i].backward ? "<= " : "",
                 r.applied[i].text ? r.applied[i].text : "?");
    }
    xf_optimize_report_free(&r);
    return f;
}

/* <scratch>/out.onnx, the model the last run wrote, kept as
 * <scratch>/held<i>.<method>.onnx (its path into out) for the direct race. */
static void keep_written(const char *scratch, int i, const char *method, const figures *f,
                         char *out, size_t n)
{
    char from[4096];
    snprintf(from, sizeof from, "%s/out.onnx", scratch);
    snprintf(out, n, "%s/held%d.%s.onnx", scratch, i, method);
    if (!f->ok || rename(from, out) != 0) out[0] = '\0';
}

/* The input and the models the methods wrote for it, timed alternately in
 * one process (bench_race_files, a self check): the acceptance figure. Two
 * arbiter runs each read a ratio against the input from their own noisy
 * rounds, and TASO's arbiter keeps the smallest of up to 14 such draws (of
 * which most are the same model): its ratio is biased low. Here every
 * model is timed over the same rounds. */
static void direct_race(const char *name, const char *input, char written[3][4096], int threads)
{
    static const char *const method[3] = {"taso", "agent", "policy"};
    const char *files[4] = {input};
    const char *label[4] = {"input"};
    int n = 1;
    for (int k = 0; k < 3; k++) {
        if (!written[k][0]) continue;
        files[n] = written[k];
        label[n++] = method[k];
    }
    xf_target_timing res[4], self;
    char identity[256];
    const int rounds = 41;
    if (bench_race_files(name, files, n, threads, rounds, NULL, res, &self, identity,
                         sizeof identity))
        return;
    printf("%-22s direct race (%s, %d rounds, one process; self check x%.3f +-%.3f; "
           "load average %.1f):\n",
           name, identity, rounds, self.ratio, self.noise, bench_load_average());
    int ti = -1, ai = -1;
    for (int k = 0; k < n; k++) {
        if (k > 0 && res[k].runs == 0) continue; /* did not load: said above */
        printf("      %-7s %8.3f ms  x%.3f [%.3f, %.3f]  %s\n", label[k], res[k].median_ms,
               res[k].ratio, res[k].lo, res[k].hi, files[k]);
        if (!strcmp(label[k], "taso")) ti = k;
        if (!strcmp(label[k], "agent")) ai = k;
    }
    if (ti > 0 && ai > 0)
        printf("%-22s direct verdict (%s): agent x%.3f vs taso x%.3f: agent/taso "
               "%.3f, %s 1%%%s\n",
               name, identity, res[ai].ratio, res[ti].ratio,
               res[ai].ratio / res[ti].ratio,
               res[ai].ratio <= res[ti].ratio * 1.01 ? "within" : "NOT within",
               self.noise > 0.01 ? " (the self check's noise is over 1%: not resolved)" : "");
}

/* The name a held-out model goes by in the table: its file's, or its
 * directory's for a .../NAME/model.onnx. */
static void held_name(const char *p, char *name, size_t n)
{
    const char *end = strrchr(p, '/');
    const char *base = end ? end + 1 : p;
    if (!strcmp(base, "model.onnx") && end > p) {
        const char *s = end - 1;
        while (s > p && s[-1] != '/') s--;
        snprintf(name, n, "%.*s", (int)(end - s), s);
    } else {
        snprintf(name, n, "%s", base);
    }
}

static void print_row(const char *model, const char *method, const figures *f)
{
    if (!f->ok) {
        printf("%-22s %-7s failed (see stderr)\n", model, method);
        return;
    }
    printf("%-22s %-7s %+8.2f%% %+8.2f%%   x%.3f%s %9.2f s %8.1f s\n", model, method,
           f->search_pct, f->cost_pct, f->ratio, f->kept_original ? " (input)" : "        ",
           f->opt_s, f->call_s);
}

static int count_of(const figures *f, int64_t id)
{
    for (int i = 0; i < f->n_rules; i++)
        if (f->rule_id[i] == id) return f->count[i];
    return 0;
}

/* The rules `one` applied more often than `other` (at most 12). */
static void print_more_often(const figures *one, const figures *other)
{
    int shown = 0;
    for (int i = 0; i < one->n_rules && shown < 12; i++) {
        int n = count_of(other, one->rule_id[i]);
        if (one->count[i] <= n) continue;
        printf("    %3d vs %3d  %s\n", one->count[i], n, one->text[i]);
        shown++;
    }
    if (!shown) printf("    (none)\n");
}

/* Why the agent's model differs from TASO's: the rules each applied more
 * often than the other, by count (the measurement behind the gap). */
static void print_rule_gap(const char *model, const figures *taso, const figures *agent)
{
    printf("%-22s rules applied: taso %d (%d distinct), agent %d (%d distinct); taso more often:\n",
           model, taso->n_applied, taso->n_rules, agent->n_applied, agent->n_rules);
    print_more_often(taso, agent);
    printf("%-22s agent more often:\n", model);
    print_more_often(agent, taso);
}

static void train(const char *rules, const char *ckpt, const char *const *paths, int n,
                  double seconds, xf_optimize_agent agent, uint64_t seed, int target,
                  const char *cache)
{
    xf_train_options t = xf_train_options_default();
    t.rules = rules;
    t.save = ckpt;
    t.models = paths;
    t.n_models = n;
    t.seconds = seconds;
    t.agent = agent;
    t.seed = seed;
    t.target_layout = target;
    t.cache = cache;
    xf_train_report r;
    xf_train_report_init(&r);
    xf_error err = {0};
    fprintf(stderr, "bench_transfer: training over %d models for %.0f s...\n", n, seconds);
    if (xf_train_agent(&t, &r, &err) != XF_OK) die("training", err.msg);
    const xf_rl_train_stats *s = &r.stats;
    printf("trained: %d models, %d actions, %lld real steps, %.1f s (%lld passes)\n", r.n_models,
           s->act.M, (long long)s->steps, s->seconds, (long long)s->passes);
    for (int i = 0; i < r.n_models; i++)
        printf("  train %-60s %4d nodes  best %+.2f%%  %d actions unavailable\n", r.models[i],
               r.nodes[i],
               s->initial_ms[i] > 0 ? 100.0 * (s->best_ms[i] - s->initial_ms[i]) / s->initial_ms[i]
                                    : 0,
               s->unavailable[i]);
    xf_train_report_free(&r);
}

int main(int argc, char **argv)
{
    const char *rules = NULL, *ckpt = NULL;
    const char *train_paths[MAX_PATHS], *held_paths[MAX_PATHS];
    int n_train = 0, n_held = 0, retrain = 0, target = 1, samples = XF_OPTIMIZE_SAMPLES;
    int guide = XF_OPTIMIZE_GUIDE, race_only = 0, n_race_threads = 0;
    int race_threads[MAX_RACES];
    double train_seconds = 300, target_budget = 60;
    uint64_t seed = 1;
    xf_optimize_agent agent = XF_OPTIMIZE_PPO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--rules") && v) rules = argv[++i];
        else if (!strcmp(a, "--ckpt") && v) ckpt = argv[++i];
        else if (!strcmp(a, "--retrain")) retrain = 1;
        else if (!strcmp(a, "--no-target")) target = 0;
        else if (!strcmp(a, "--race-only")) race_only = 1;
        else if (!strcmp(a, "--race-threads") && v) {
            int t = atoi(argv[++i]);
            if (t < 1 || n_race_threads >= MAX_RACES)
                die("--race-threads", "a count of 1 or more, given at most 4 times");
            race_threads[n_race_threads++] = t;
        }
        else if (!strcmp(a, "--train-seconds") && v) train_seconds = atof(argv[++i]);
        else if (!strcmp(a, "--target-budget") && v) target_budget = atof(argv[++i]);
        else if (!strcmp(a, "--samples") && v) samples = atoi(argv[++i]);
        else if (!strcmp(a, "--guide") && v) guide = atoi(argv[++i]);
        else if (!strcmp(a, "--seed") && v) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--agent") && v) {
            v = argv[++i];
            if (strcmp(v, "ppo") && strcmp(v, "wm")) die("--agent", "ppo or wm");
            agent = !strcmp(v, "wm") ? XF_OPTIMIZE_WM : XF_OPTIMIZE_PPO;
        } else if (!strcmp(a, "--train") && v && n_train < MAX_PATHS) train_paths[n_train++] = argv[++i];
        else if (!strcmp(a, "--held") && v && n_held < MAX_PATHS) held_paths[n_held++] = argv[++i];
        else {
            fprintf(stderr,
                    "usage: bench_transfer [--rules DB] [--ckpt FILE] [--retrain] "
                    "[--train-seconds S] [--agent ppo|wm] [--samples N] [--guide K] [--seed N] "
                    "[--no-target] [--target-budget S] [--race-threads N]... [--race-only] "
                    "[--train PATH]... [--held PATH]...\n");
            return 2;
        }
    }
    const char *scratch = bench_scratch("bench_transfer");
    char cache[4096], ckpt_buf[4096], rules_buf[4096];
    snprintf(cache, sizeof cache, "%s/costs.db", scratch);
    if (!ckpt) {
        snprintf(ckpt_buf, sizeof ckpt_buf, "%s/agent.ckpt", scratch);
        ckpt = ckpt_buf;
    }
    if (!rules) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", XF_BENCH_AGENT);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        bench_default_rules(dir, rules_buf, sizeof rules_buf);
        rules = rules_buf;
    }
    static char zoo_paths[16][4096];
    int nz = 0;
    if (n_train == 0) {
        for (size_t k = 0; k < sizeof zoo_train / sizeof zoo_train[0]; k++, nz++)
            train_paths[n_train++] =
                zoo_model(scratch, zoo_train[k][0], zoo_train[k][1], zoo_paths[nz], 4096);
        static const char *const shared[] = {XF_BENCH_MODELS_DIR "/resnet18/model.onnx",
                                             XF_BENCH_MODELS_DIR "/squeezenet1_1/model.onnx",
                                             XF_BENCH_MODELS_DIR "/real"};
        for (size_t k = 0; k < 3; k++)
            if (access(shared[k], R_OK) == 0) train_paths[n_train++] = shared[k];
    }
    if (n_held == 0) {
        static const char *const shared[] = {XF_BENCH_MODELS_DIR "/bert_small/model.onnx",
                                             XF_BENCH_MODELS_DIR "/vit_tiny/model.onnx"};
        for (size_t k = 0; k < 2; k++)
            if (access(shared[k], R_OK) == 0) held_paths[n_held++] = shared[k];
        for (size_t k = 0; k < sizeof zoo_held / sizeof zoo_held[0]; k++, nz++)
            held_paths[n_held++] =
                zoo_model(scratch, zoo_held[k][0], zoo_held[k][1], zoo_paths[nz], 4096);
    }
    if (n_race_threads == 0) { /* one thread, then every core */
        race_threads[n_race_threads++] = 1;
        race_threads[n_race_threads++] = 0;
    }
    static char written[MAX_PATHS][3][4096]; /* taso's, the agent's, the policy's */
    if (race_only) { /* the models an earlier run wrote, raced again */
        static const char *const method[3] = {"taso", "agent", "policy"};
        printf("direct races of the models written before; load average %.1f\n",
               bench_load_average());
        for (int i = 0; i < n_held; i++) {
            char name[64];
            held_name(held_paths[i], name, sizeof name);
            for (int k = 0; k < 3; k++) {
                snprintf(written[i][k], sizeof written[i][k], "%s/held%d.%s.onnx", scratch, i,
                         method[k]);
                if (access(written[i][k], R_OK) != 0) written[i][k][0] = '\0';
            }
            for (int k = 0; k < n_race_threads; k++)
                direct_race(name, held_paths[i], written[i], race_threads[k]);
        }
        return 0;
    }
    struct stat sb;
    if (retrain || stat(ckpt, &sb) != 0)
        train(rules, ckpt, train_paths, n_train, train_seconds, agent, seed, target, cache);
    else
        printf("checkpoint: %s (there already; --retrain to train again)\n", ckpt);

    static figures taso[MAX_PATHS], pre[MAX_PATHS], policy[MAX_PATHS];
    for (int i = 0; i < n_held; i++) {
        xf_optimize_options o = xf_optimize_options_default();
        o.rules = rules;
        o.cache = cache;
        o.seed = seed;
        o.target = target;
        o.target_budget = target_budget;
        o.latency = 0;
        o.agent = XF_OPTIMIZE_SEARCH;
        o.search = XF_SEARCH_TASO;
        fprintf(stderr, "bench_transfer: %s: taso search...\n", held_paths[i]);
        taso[i] = run(&o, held_paths[i], scratch);
        keep_written(scratch, i, "taso", &taso[i], written[i][0], sizeof written[i][0]);
        o.agent = agent;
        o.load = ckpt;
        o.samples = samples;
        o.guide = guide;
        fprintf(stderr, "bench_transfer: %s: the pre-trained agent...\n", held_paths[i]);
        pre[i] = run(&o, held_paths[i], scratch);
        keep_written(scratch, i, "agent", &pre[i], written[i][1], sizeof written[i][1]);
        if (guide > 0 && agent == XF_OPTIMIZE_PPO) { /* what the policy does alone */
            o.guide = 0;
            fprintf(stderr, "bench_transfer: %s: the policy alone...\n", held_paths[i]);
            policy[i] = run(&o, held_paths[i], scratch);
            keep_written(scratch, i, "policy", &policy[i], written[i][2], sizeof written[i][2]);
        }
    }
    printf("\nheld-out models (never trained on); %s decides; load average %.1f\n",
           target ? "ONNX Runtime (--target ort)" : "the cost model", bench_load_average());
    printf("%-22s %-7s %9s %9s %16s %11s %10s\n", "model", "method", "search", "written",
           target ? "ort latency" : "(no target)", "optimise", "whole call");
    for (int i = 0; i < n_held; i++) {
        char name[64];
        held_name(held_paths[i], name, sizeof name);
        print_row(name, "taso", &taso[i]);
        print_row(name, "agent", &pre[i]);
        if (guide > 0 && agent == XF_OPTIMIZE_PPO) print_row(name, "policy", &policy[i]);
        if (taso[i].ok && pre[i].ok)
            printf("%-22s verdict: latency x%.3f vs x%.3f: %s 1%%; time %.2f s vs %.2f s: "
                   "%.3f of TASO's (%s 1/10)\n",
                   name, pre[i].ratio, taso[i].ratio,
                   pre[i].ratio <= taso[i].ratio * 1.01 ? "within" : "NOT within", pre[i].opt_s,
                   taso[i].opt_s, taso[i].opt_s > 0 ? pre[i].opt_s / taso[i].opt_s : 0,
                   pre[i].opt_s <= taso[i].opt_s / 10 ? "<=" : "NOT <=");
        if (taso[i].ok && pre[i].ok) print_rule_gap(name, &taso[i], &pre[i]);
        const figures *by[3] = {&taso[i], &pre[i], &policy[i]};
        const char *const method[3] = {"taso", "agent", "policy"};
        for (int k = 0; k < 3; k++)
            if (by[k]->ok && by[k]->arbiter[0])
                printf("%-22s arbiter (%s), cheapest first:\n%s", name, method[k],
                       by[k]->arbiter);
        if (target)
            for (int k = 0; k < n_race_threads; k++)
                direct_race(name, held_paths[i], written[i], race_threads[k]);
    }
    return 0;
}
