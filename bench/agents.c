/*
 * bench_agents — the optimisation methods side by side, judged by the target.
 *
 *   bench_agents [--rules DB] [--seconds S] [--seeds N] [--target ort|none]
 *                [--cost fused|ops] [--target-budget S] [--tau-model NAME]
 *                [--pretrained ppo|wm:CKPT] [--reference] [--quick] [--no-tau]
 *                [--report DIR]
 *
 * For bert_small, vit_tiny and resnet18 of ../shared/models, a published
 * model of ../shared/models/real and modelzoo BERT, ViT and GPT small
 * configurations, the optimisation rlflow-agent runs (xf_optimize_file,
 * in-process; 1 thread; oneDNN costs cached in the scratch directory) with
 * random search, greedy, TASO's search, the hand passes alone (`--passes
 * expert`: no rule), the model-free PPO agent, the world-model agent and
 * the pre-trained agent (a checkpoint given with --pretrained, run with no
 * training; without one the row says it is not available). Every method but
 * `expert` uses the proved rules alone (`--passes rules`), so a gain is the
 * rules' or the agent's; `expert`'s is the hand passes'. By default the
 * target decides (`--target ort`):
 * the searches and agents minimise the fusion-aware cost (`--cost fused`,
 * regions timed in ONNX Runtime), the agents' reward gains the sparse
 * real-latency term, and the arbiter times what each hands over.
 *
 * With the target, TASO and the agents that train here (not the
 * pre-trained one) also work on the model prepared with its scalings kept
 * (`--scalings both`, each for the same time as on the first), and the
 * arbiter times both's candidates; the search cost columns are the first
 * preparation's, the second's is printed per run ("kept").
 * Per run it prints cost before/after (cost model, the models as written),
 * the target latency of the model written against the input (the arbiter's
 * confirmed ratio, 1 when the input is kept) and the best ratio any
 * candidate reached, wall time, environment steps, and for the learning
 * agents the steps at which their best cost came within 50% and 90% of the
 * run's final improvement and the steps at which it reached TASO's cost,
 * and the sample-efficiency curve: the real-environment steps at which
 * their best cost first reached 25, 50, 75, 90 and 100% of TASO's
 * improvement (the agents report every new best graph, so the steps are
 * exact), summarised per model as min/median/max over the seeds with how
 * many seeds got there. The learning agents' training ends with a greedy
 * polish of their best graph (search, not learning): the "agent alone %"
 * column and each run's "polish" line give their search cost before it.
 * Randomised methods (random, ppo, wm) and TASO (whose arbiter's pick is
 * a noisy draw) run with seeds 1..N (default 3); greedy, the reference
 * and the hand passes once. Then per model a summary table
 * (min/median/max over seeds) and the verdict "best learning agent vs
 * TASO on the target"; then, with a target, the direct race: every model
 * the runs wrote (each seed's) timed against the input in one process over
 * the same rounds, with a self check, and the verdict read off it (the
 * table's target column is each run's own arbiter's ratio, from its own
 * noisy rounds: two methods' figures there differ by two runs' noise). Then the τ sweep (0.5, 1, 1.5, 2) of the
 * world-model agent on one model (--tau-model, default bert-L2-H128),
 * seeds 1..N each. Load averages are printed beside every run: timings on
 * a shared machine are the load's.
 *
 * --reference: also TASO with 10x the budget and 5x the time (the
 * reference a better graph is looked for with). --report DIR: also the
 * page comparing every run (pages/pages.h).
 * Rules: DB, or the build's default rules (the default vocabulary's 3-op
 * rules and the unbatched heads' 4-op ones, proved: rules-default-*.db next
 * to the tools, made by the build).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_runner.h"
#include "pages/pages.h"

/* One method of the table. */
typedef struct method {
    const char *name;
    xf_optimize_agent agent;
    xf_search_kind search;
    int expert;   /* --passes expert (the hand passes) */
    int seeded;   /* run with every seed */
    int pretrained;
    int reference; /* TASO with the larger budget */
} method;

static const method methods[] = {
    {"random", XF_OPTIMIZE_SEARCH, XF_SEARCH_RANDOM, 0, 1, 0, 0},
    {"greedy", XF_OPTIMIZE_SEARCH, XF_SEARCH_GREEDY, 0, 0, 0, 0},
    /* TASO per seed too: its search is deterministic, but which of its
     * near-equal candidates the arbiter confirms is a noisy draw (the same
     * search on modelzoo ViT L2/H96 wrote graphs racing x0.666 and x0.712) */
    {"taso", XF_OPTIMIZE_SEARCH, XF_SEARCH_TASO, 0, 1, 0, 0},
    {"taso-ref", XF_OPTIMIZE_SEARCH, XF_SEARCH_TASO, 0, 0, 0, 1},
    {"expert", XF_OPTIMIZE_SEARCH, XF_SEARCH_TASO, 1, 0, 0, 0},
    {"ppo", XF_OPTIMIZE_PPO, XF_SEARCH_TASO, 0, 1, 0, 0},
    {"wm", XF_OPTIMIZE_WM, XF_SEARCH_TASO, 0, 1, 0, 0},
    {"pre-trained", XF_OPTIMIZE_WM, XF_SEARCH_TASO, 0, 0, 1, 0},
};
#define N_METHODS ((int)(sizeof methods / sizeof methods[0]))

static const char *const zoo[][2] = {
    {"bert-L2-H128", "bert --layers 2 --hidden 128 --heads 2 --seq 32"},
    {"vit-L2-H96", "vit --layers 2 --hidden 96 --heads 3 --image 32 --patch 8"},
    {"gpt-L2-H128", "gpt --layers 2 --hidden 128 --heads 2 --seq 32"},
};

/* The bench's settings. */
static struct settings {
    const char *rules, *scratch, *pretrained;
    xf_optimize_agent pretrained_agent;
    double seconds, target_budget;
    int seeds, target, fused, reference;
} cfg;

/* Names given with --model or --method (none: every one the run covers). */
#define MAX_PICKS 16
typedef struct picks {
    const char *name[MAX_PICKS];
    int n;
} picks;
static picks pick_models, pick_methods;

static int picked(const picks *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->name[i], name)) return 1;
    return p->n == 0;
}

static int add_pick(picks *p, const char *name)
{
    if (p->n == MAX_PICKS) return 0;
    p->name[p->n++] = name;
    return 1;
}

/* The figures of one run. */
typedef struct run_figs {
    int ok;
    double cost_pct;    /* cost change of the model written, % */
    double target;      /* written model's latency over the input's in the target (1: kept) */
    double best_timed;  /* smallest ratio any timed candidate reached */
    double search_ms;   /* the search's best cost (its own cost: fused or operators) */
    double alone_ms;    /* a learning agent's best before its final polish (0: none ran) */
    double initial_ms;
    double seconds, wall;
    long long steps;
    long long to50, to90, to_taso; /* steps; -1: never */
    long long curve[5]; /* steps to curve_levels[i] of TASO's improvement; -1: never */
    char written[1024]; /* the model it wrote, kept for the direct race ("": none) */
} run_figs;

static const double curve_levels[5] = {0.25, 0.5, 0.75, 0.9, 1.0};

/* The runs kept for --report. */
#define MAX_KEPT 512
static struct kept {
    char name[64], path[2048], method[64];
    xf_optimize_options o;
    xf_optimize_report r;
} *kept;
static int n_kept;

/* Steps at which the trace's best cost first came within `frac` of the
 * final improvement (frac 0: the first point at or below `level`); -1
 * when never or there was no improvement. */
static long long steps_to(const xf_optimize_report *r, double frac, double level)
{
    if (r->n_trace < 2) return -1;
    double init = r->trace[0].best_ms, fin = r->trace[r->n_trace - 1].best_ms;
    double want = frac > 0 ? init - frac * (init - fin) : level;
    if (frac > 0 && fin >= init) return -1;
    for (int i = 0; i < r->n_trace; i++)
        if (r->trace[i].search == 0 && r->trace[i].best_ms <= want + 1e-12 * init)
            return (long long)r->trace[i].steps;
    return -1;
}

/* The written model's ratio in the target (1 when the input is kept) and
 * the smallest ratio a timed candidate reached. */
static void target_ratios(const xf_optimize_report *r, double *written, double *best)
{
    *written = *best = 1.0;
    const xf_arbiter_result *a = &r->arb;
    for (int i = 1; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        if (e->t.runs > 0 && e->t.ratio < *best && e->verdict != XF_ARBITER_WRONG &&
            e->verdict != XF_ARBITER_TARGET_WRONG)
            *best = e->t.ratio;
    }
    if (a->chosen > 0) {
        const xf_arbiter_entry *e = &a->e[a->chosen];
        *written = e->confirm.runs > 0 ? e->confirm.ratio : e->t.ratio;
    }
}

/* The sizes a model's symbolic dims take (into o, the defaults' otherwise):
 * Silero's at its README's (imported with 1 its reflect Pad cannot run);
 * 1 when the model has such sizes. */
static int model_dims(const char *name, xf_onnx_options *o)
{
    static const char *const silero_dims[] = {"batch", "sequence"};
    static const int64_t silero_sizes[] = {1, 512};
    *o = xf_onnx_default_options();
    if (strcmp(name, "real/silero_vad_legacy") != 0) return 0;
    o->n_dim_overrides = 2;
    o->dim_names = silero_dims;
    o->dim_values = silero_sizes;
    return 1;
}

/* <scratch>/out.onnx, what the last run wrote, kept as
 * <scratch>/race.<model>.<method>.s<seed>.onnx for the model's direct race
 * (a '/' of the model's name made '_'); "" when it cannot be kept. */
static void keep_written(const char *name, const char *label, uint64_t seed, char *out, size_t n)
{
    char from[4096], model[64];
    snprintf(model, sizeof model, "%s", name);
    for (char *c = model; *c; c++)
        if (*c == '/' || *c == ' ' || *c == '=') *c = '_';
    char meth[64];
    snprintf(meth, sizeof meth, "%s", label);
    for (char *c = meth; *c; c++)
        if (*c == ' ' || *c == '=') *c = '_';
    snprintf(from, sizeof from, "%s/out.onnx", cfg.scratch);
    snprintf(out, n, "%s/race.%s.%s.s%llu.onnx", cfg.scratch, model, meth,
             (unsigned long long)seed);
    if (rename(from, out) != 0) out[0] = '\0';
}

static run_figs run(const char *name, const char *path, const method *m, uint64_t seed,
                    double tau, double taso_ms)
{
    run_figs f;
    memset(&f, 0, sizeof f);
    f.to50 = f.to90 = f.to_taso = -1;
    for (int i = 0; i < 5; i++) f.curve[i] = -1;
    char cache[4096], label[64];
    snprintf(cache, sizeof cache, "%s/costs.db", cfg.scratch);
    if (tau != 1.0) snprintf(label, sizeof label, "%s t=%.1f", m->name, tau);
    else snprintf(label, sizeof label, "%s", m->name);
    if (m->pretrained && !cfg.pretrained) {
        printf("%-14s %-12s pre-trained: not available in this build (no checkpoint: "
               "--pretrained ppo|wm:CKPT)\n",
               name, label);
        return f;
    }
    xf_optimize_options o = xf_optimize_options_default();
    o.rules = cfg.rules;
    o.agent = m->pretrained ? cfg.pretrained_agent : m->agent;
    o.search = m->search;
    o.load = m->pretrained ? cfg.pretrained : NULL;
    o.passes = m->expert ? XF_OPTIMIZE_EXPERT : XF_OPTIMIZE_RULES;
    o.time_limit = m->reference ? 5 * cfg.seconds : cfg.seconds;
    if (m->reference) o.budget = 10000;
    o.seed = seed;
    o.tau = tau;
    o.backend = XF_COST_ONEDNN;
    o.cache = cache;
    o.threads = 1;
    o.target = cfg.target;
    o.fused_cost = cfg.target && cfg.fused;
    o.target_budget = cfg.target_budget;
    xf_onnx_options dims;
    if (model_dims(name, &dims)) { /* the interpreter cannot run Silero's If: ONNX
                                      Runtime (the arbiter) compares the outputs, as
                                      bench_dynamic runs it */
        o.n_dims = dims.n_dim_overrides;
        o.dim_names = dims.dim_names;
        o.dim_values = dims.dim_values;
        o.check = 0;
    }
    struct kept *k = kept && n_kept < MAX_KEPT ? &kept[n_kept] : NULL;
    xf_optimize_report rep;
    double l0 = bench_load_average();
    bench_row row = bench_optimize_model(&o, path, cfg.scratch, &rep);
    double l1 = bench_load_average();
    printf("%-14s %-12s seed %llu  load %.1f/%.1f\n", name, label, (unsigned long long)seed, l0,
           l1);
    if (!row.ok) {
        printf("    FAILED (see above)\n");
        fflush(stdout);
        return f;
    }
    f.ok = 1;
    keep_written(name, label, seed, f.written, sizeof f.written);
    const xf_optimize_search_figures *sf = &rep.search[0];
    f.cost_pct = rep.cost_before > 0 ? 100.0 * (rep.cost_after - rep.cost_before) / rep.cost_before
                                     : 0;
    target_ratios(&rep, &f.target, &f.best_timed);
    f.initial_ms = sf->initial_ms;
    f.search_ms = sf->best_ms;
    f.alone_ms = sf->unpolished_ms;
    f.seconds = rep.search_seconds;
    f.wall = rep.seconds;
    f.steps = (long long)sf->expanded;
    if (o.agent != XF_OPTIMIZE_SEARCH) {
        f.to50 = steps_to(&rep, 0.5, 0);
        f.to90 = steps_to(&rep, 0.9, 0);
        if (taso_ms > 0) f.to_taso = steps_to(&rep, 0, taso_ms);
        double gain = sf->initial_ms - taso_ms;
        for (int i = 0; i < 5 && taso_ms > 0 && gain > 0; i++)
            f.curve[i] = steps_to(&rep, 0, sf->initial_ms - curve_levels[i] * gain);
    }
    printf("    cost       %s\n", row.cost);
    printf("    search     %.4f -> %.4f ms (%+.2f%%, its own cost%s)\n", sf->initial_ms,
           sf->best_ms, sf->initial_ms > 0 ? 100 * (sf->best_ms - sf->initial_ms) / sf->initial_ms : 0,
           o.fused_cost ? ": fused regions" : ": operators");
    if (sf->unpolished_ms > 0 && sf->initial_ms > 0)
        printf("    polish     the agent's own best %.4f ms (%+.2f%%), then %d greedy rewrites "
               "in %.2f s\n",
               sf->unpolished_ms, 100 * (sf->unpolished_ms - sf->initial_ms) / sf->initial_ms,
               sf->polish_steps, sf->polish_seconds);
    if (rep.n_searches > 1) { /* the model prepared the other way (--scalings both) */
        const xf_optimize_search_figures *s2 = &rep.search[1];
        printf("    kept       %.4f -> %.4f ms (%+.2f%%, scalings kept: searched or trained "
               "again, its candidates timed too), %lld steps\n",
               s2->initial_ms, s2->best_ms,
               s2->initial_ms > 0 ? 100 * (s2->best_ms - s2->initial_ms) / s2->initial_ms : 0,
               (long long)s2->expanded);
    }
    if (rep.target)
        printf("    target     written x%.3f, best candidate timed x%.3f, %d timed, %.1f s "
               "arbitrating\n",
               f.target, f.best_timed, rep.arb.n - 1, rep.arb.seconds);
    else
        printf("    target     none (%s)\n", rep.target_refused[0] ? rep.target_refused : "off");
    printf("    error      %s\n    run        %s; whole call %.1f s\n", row.err, row.search,
           rep.seconds);
    if (row.agent[0]) printf("    agent      %s\n", row.agent);
    if (row.world[0]) printf("    world      %s\n", row.world);
    if (o.agent != XF_OPTIMIZE_SEARCH)
        printf("    samples    steps to 50%% of its improvement %lld, to 90%% %lld, to TASO's "
               "cost %lld (-1: never); %lld graphs timed in the target (%.1f s)\n",
               f.to50, f.to90, f.to_taso, (long long)rep.target_runs, rep.target_seconds);
    if (o.agent != XF_OPTIMIZE_SEARCH && taso_ms > 0)
        printf("    curve      steps to 25/50/75/90/100%% of TASO's improvement: %lld/%lld/%lld/"
               "%lld/%lld (-1: never)\n",
               f.curve[0], f.curve[1], f.curve[2], f.curve[3], f.curve[4]);
    fflush(stdout);
    if (k) {
        snprintf(k->name, sizeof k->name, "%s", name);
        snprintf(k->path, sizeof k->path, "%s", path);
        snprintf(k->method, sizeof k->method, "%s s%llu", label, (unsigned long long)seed);
        k->o = o;
        k->o.cache = NULL; /* this call's buffer */
        k->r = rep;
        n_kept++;
    } else {
        xf_optimize_report_free(&rep);
    }
    return f;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "min/median/max" of the n values (one value alone when n is 1). */
static void spread(const double *v, int n, const char *fmt, char *buf, size_t len)
{
    double s[16];
    int k = 0;
    for (int i = 0; i < n && k < 16; i++) s[k++] = v[i];
    if (k == 0) {
        snprintf(buf, len, "-");
        return;
    }
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    char a[32], b[32], c[32];
    snprintf(a, sizeof a, fmt, s[0]);
    snprintf(b, sizeof b, fmt, s[k / 2]);
    snprintf(c, sizeof c, fmt, s[k - 1]);
    if (k == 1) snprintf(buf, len, "%s", b);
    else snprintf(buf, len, "%s/%s/%s", a, b, c);
}

static double median(const double *v, int n)
{
    double s[16];
    int k = n < 16 ? n : 16;
    memcpy(s, v, (size_t)k * sizeof *s);
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    return k ? s[k / 2] : 0;
}

/* The learning agents' sample-efficiency curves on one model: real steps
 * to each level of TASO's improvement, min/median/max over the seeds that
 * reached it, and how many did. */
static void print_curves(const char *name, run_figs all[N_METHODS][16], const int *n)
{
    printf("-- %s: real-environment steps to 25/50/75/90/100%% of TASO's improvement "
           "(min/median/max over the seeds that got there, (k/n))\n%-12s", name, "method");
    for (int i = 0; i < 5; i++) printf(" %-22.0f", 100 * curve_levels[i]);
    printf("\n");
    for (int mi = 0; mi < N_METHODS; mi++) {
        if (!n[mi] || methods[mi].agent == XF_OPTIMIZE_SEARCH) continue;
        printf("%-12s", methods[mi].name);
        for (int i = 0; i < 5; i++) {
            double v[16];
            int k = 0;
            for (int j = 0; j < n[mi]; j++)
                if (all[mi][j].curve[i] >= 0) v[k++] = (double)all[mi][j].curve[i];
            char cell[64], sp[48];
            spread(v, k, "%.0f", sp, sizeof sp);
            snprintf(cell, sizeof cell, "%s (%d/%d)", k ? sp : "never", k, n[mi]);
            printf(" %-22s", cell);
        }
        printf("\n");
    }
}

/* Every written model of this model's runs (seeds included) raced against
 * the input in one process (bench_race_files, 1 thread as the runs, 41
 * rounds, a self check): the table's "target" column is each run's own
 * arbiter's ratio, read from its own noisy rounds (and the smallest of
 * several draws for the method that handed most candidates), so two
 * methods' columns differ by the noise of two runs; here they share the
 * rounds. The verdict sets the best learning agent's median against TASO
 * and says when the difference is inside the self check's noise. */
static void direct_race(const char *name, const char *path, run_figs all[N_METHODS][16],
                        const int *n)
{
    const char *files[BENCH_RACE_MAX] = {path};
    int of_method[BENCH_RACE_MAX], nf = 1, left = 0;
    for (int mi = 0; mi < N_METHODS; mi++)
        for (int i = 0; i < n[mi]; i++) {
            if (!all[mi][i].written[0]) continue;
            if (nf == BENCH_RACE_MAX) {
                left++;
                continue;
            }
            of_method[nf] = mi;
            files[nf++] = all[mi][i].written;
        }
    if (nf < 2) return;
    xf_target_timing res[BENCH_RACE_MAX], self;
    char identity[256];
    const int rounds = 41;
    xf_onnx_options dims;
    model_dims(name, &dims);
    if (bench_race_files(name, files, nf, 1, rounds, &dims, res, &self, identity,
                         sizeof identity))
        return;
    printf("-- %s: direct race of the written models (%s, %d rounds, one process; self check "
           "x%.3f +-%.3f; load average %.1f)%s\n",
           name, identity, rounds, self.ratio, self.noise, bench_load_average(),
           left ? " (some seeds left out: at most 15 models race)" : "");
    printf("%-12s %-24s %s\n", "method", "race x (min/median/max)", "per run [95% interval]");
    double taso = 0, best = 0;
    const char *best_name = NULL;
    for (int mi = 0; mi < N_METHODS; mi++) {
        double v[16];
        int k = 0;
        char runs[512] = "";
        for (int j = 1; j < nf; j++) {
            if (of_method[j] != mi || res[j].runs == 0) continue;
            v[k++] = res[j].ratio;
            size_t u = strlen(runs);
            snprintf(runs + u, sizeof runs - u, "%sx%.3f [%.3f, %.3f]", u ? "  " : "",
                     res[j].ratio, res[j].lo, res[j].hi);
        }
        if (!k) continue;
        char sp[64];
        spread(v, k, "%.3f", sp, sizeof sp);
        printf("%-12s %-24s %s\n", methods[mi].name, sp, runs);
        double med = median(v, k);
        if (!strcmp(methods[mi].name, "taso")) taso = med;
        int agent = methods[mi].agent != XF_OPTIMIZE_SEARCH || methods[mi].pretrained;
        if (agent && (!best_name || med < best)) best = med, best_name = methods[mi].name;
    }
    if (taso > 0 && best_name) {
        double rel = best / taso;
        const char *words = rel <= 1.0                    ? "at least as good"
                            : rel - 1.0 <= self.noise ? "behind by less than the self check's noise"
                                                      : "below TASO beyond the noise";
        printf("verdict %s (direct race): best learning agent %s x%.3f (median of its seeds) vs "
               "TASO x%.3f: agent/TASO %.3f, %s (+-%.3f)\n",
               name, best_name, best, taso, rel, words, self.noise);
    }
}

/* Every method on one model, then its table. */
static void bench_model(const char *name, const char *path)
{
    run_figs all[N_METHODS][16];
    int n[N_METHODS];
    double taso_ms = 0;
    memset(n, 0, sizeof n);
    for (int mi = 0; mi < N_METHODS; mi++) {
        const method *m = &methods[mi];
        if (m->reference && !cfg.reference) continue;
        if (!picked(&pick_methods, m->name)) continue;
        int seeds = m->seeded ? cfg.seeds : 1;
        for (int s = 1; s <= seeds && s <= 16; s++) {
            run_figs f = run(name, path, m, (uint64_t)s, 1.0, taso_ms);
            if (!f.ok) continue;
            all[mi][n[mi]++] = f;
            if (!strcmp(m->name, "taso")) taso_ms = f.search_ms;
        }
    }
    printf("\n-- %s: %d seeds for random/taso/ppo/wm (min/median/max), target %s, cost %s, "
           "%g s each\n",
           name, cfg.seeds, cfg.target ? "ort" : "none", cfg.target && cfg.fused ? "fused" : "ops",
           cfg.seconds);
    printf("%-12s %-24s %-24s %-24s %-24s %-24s %-9s %-10s %-16s %-16s\n", "method",
           "search cost %", "agent alone %", "cost % (written)", "target (written x)",
           "best timed x", "search s", "steps", "to 50%/90%", "to TASO cost");
    double best_agent = 2, taso_t = 0, best_sc = 1e9, taso_sc = 1e9;
    const char *best_name = "-", *best_sc_name = "-";
    for (int mi = 0; mi < N_METHODS; mi++) {
        if (!n[mi]) {
            if (methods[mi].pretrained)
                printf("%-12s pre-trained: not available in this build\n", "pre-trained");
            continue;
        }
        double c[16], t[16], b[16], sec[16], st[16], t50[16], t90[16], tt[16], sc[16], al[16];
        int n50 = 0, n90 = 0, ntt = 0, nal = 0;
        for (int i = 0; i < n[mi]; i++) {
            const run_figs *f = &all[mi][i];
            c[i] = f->cost_pct, t[i] = f->target, b[i] = f->best_timed;
            sc[i] = f->initial_ms > 0 ? 100 * (f->search_ms - f->initial_ms) / f->initial_ms : 0;
            if (f->alone_ms > 0 && f->initial_ms > 0) /* before the polish */
                al[nal++] = 100 * (f->alone_ms - f->initial_ms) / f->initial_ms;
            sec[i] = f->seconds, st[i] = (double)f->steps;
            if (f->to50 >= 0) t50[n50++] = (double)f->to50;
            if (f->to90 >= 0) t90[n90++] = (double)f->to90;
            if (f->to_taso >= 0) tt[ntt++] = (double)f->to_taso;
        }
        char cs[64], ts[64], bs[64], ss[64], ps[64], s50[64], s90[64], sts[64], to[96], scs[64],
            als[64];
        spread(c, n[mi], "%+.2f", cs, sizeof cs);
        spread(al, nal, "%+.2f", als, sizeof als);
        spread(sc, n[mi], "%+.2f", scs, sizeof scs);
        spread(t, n[mi], "%.3f", ts, sizeof ts);
        spread(b, n[mi], "%.3f", bs, sizeof bs);
        snprintf(ss, sizeof ss, "%.1f", median(sec, n[mi]));
        snprintf(ps, sizeof ps, "%.0f", median(st, n[mi]));
        spread(t50, n50, "%.0f", s50, sizeof s50);
        spread(t90, n90, "%.0f", s90, sizeof s90);
        snprintf(to, sizeof to, "%s / %s", s50, s90);
        if (ntt) {
            spread(tt, ntt, "%.0f", sts, sizeof sts);
            snprintf(sts + strlen(sts), sizeof sts - strlen(sts), " (%d/%d)", ntt, n[mi]);
        } else {
            snprintf(sts, sizeof sts, methods[mi].agent != XF_OPTIMIZE_SEARCH ? "never" : "");
        }
        int agent = methods[mi].agent != XF_OPTIMIZE_SEARCH || methods[mi].pretrained;
        printf("%-12s %-24s %-24s %-24s %-24s %-24s %-9s %-10s %-16s %-16s\n", methods[mi].name,
               scs, nal ? als : "", cs, ts, bs, ss, ps, agent ? to : "", sts);
        if (agent && median(t, n[mi]) < best_agent)
            best_agent = median(t, n[mi]), best_name = methods[mi].name;
        if (!strcmp(methods[mi].name, "taso")) taso_t = median(t, n[mi]), taso_sc = sc[0];
        if (agent && median(sc, n[mi]) < best_sc)
            best_sc = median(sc, n[mi]), best_sc_name = methods[mi].name;
    }
    if (taso_t > 0 && best_agent < 2)
        printf("verdict %s: best learning agent %s x%.3f (median written) vs TASO x%.3f in the "
               "target: %s\n",
               name, best_name, best_agent, taso_t,
               best_agent <= taso_t ? "at least as good" : "below TASO");
    if (taso_sc < 1e9 && best_sc < 1e9)
        printf("verdict %s: best learning agent %s %+.2f%% (median search cost) vs TASO %+.2f%%: "
               "%s\n",
               name, best_sc_name, best_sc, taso_sc,
               best_sc <= taso_sc + 1e-9 ? "at least as good" : "above TASO's cost");
    print_curves(name, all, n);
    if (cfg.target) direct_race(name, path, all, n);
    printf("load average now %.1f\n\n", bench_load_average());
    fflush(stdout);
}

/* The τ sweep of the world-model agent on one model. */
static void tau_sweep(const char *name, const char *path)
{
    printf("\n== tau sweep, world-model agent on %s (%d seeds, %g s each)\n", name, cfg.seeds,
           cfg.seconds);
    const double taus[] = {0.5, 1.0, 1.5, 2.0};
    double c[4][16], t[4][16], t90[4][16], steps[4][16];
    int n[4] = {0}, n90[4] = {0};
    const method *wm = NULL;
    for (int mi = 0; mi < N_METHODS; mi++)
        if (!strcmp(methods[mi].name, "wm")) wm = &methods[mi];
    for (int ti = 0; ti < 4; ti++)
        for (int s = 1; s <= cfg.seeds && s <= 16; s++) {
            run_figs f = run(name, path, wm, (uint64_t)s, taus[ti], 0);
            if (!f.ok) continue;
            c[ti][n[ti]] = f.cost_pct, t[ti][n[ti]] = f.target;
            steps[ti][n[ti]++] = (double)f.steps;
            if (f.to90 >= 0) t90[ti][n90[ti]++] = (double)f.to90;
        }
    printf("\n-- tau sweep on %s (min/median/max over seeds)\n%-6s %-24s %-24s %-16s %s\n", name,
           "tau", "cost %", "target (written x)", "real steps", "steps to 90%");
    for (int ti = 0; ti < 4; ti++) {
        char cs[64], ts[64], ss[64], s9[64];
        spread(c[ti], n[ti], "%+.2f", cs, sizeof cs);
        spread(t[ti], n[ti], "%.3f", ts, sizeof ts);
        spread(steps[ti], n[ti], "%.0f", ss, sizeof ss);
        spread(t90[ti], n90[ti], "%.0f", s9, sizeof s9);
        printf("%-6.1f %-24s %-24s %-16s %s\n", taus[ti], cs, ts, ss, s9);
    }
    printf("load average now %.1f\n", bench_load_average());
    fflush(stdout);
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

static int usage(const char *arg)
{
    printf(
        "usage: bench_agents [--rules DB] [--seconds S] [--seeds N] [--target ort|none]\n"
        "                    [--cost fused|ops] [--target-budget S] [--tau-model NAME]\n"
        "                    [--pretrained ppo|wm:CKPT] [--reference] [--quick] [--no-tau]\n"
        "                    [--report DIR] [--model NAME]... [--method NAME]...\n"
        "random, greedy, TASO, the hand passes alone (--passes expert), PPO, the\n"
        "world-model agent and a pre-trained agent on shared, real and modelzoo models,\n"
        "judged in the target (default ort, the fused cost); S seconds each (default 60),\n"
        "seeds 1..N (default 3) for the randomised methods and TASO (its arbiter's\n"
        "pick is a noisy draw); per model, with a target,\n"
        "a direct race of every written model against the input in one process (41\n"
        "rounds, 1 thread, a self check) and its verdict; then a tau sweep of the\n"
        "world-model agent on NAME (default bert-L2-H128). Rules: DB, else the build's\n"
        "default rules (rules-default-*.db next to the tools).\n"
        "--quick: bert_small, vit_tiny and modelzoo BERT only.\n"
        "--model NAME: only that model (repeatable; any of the full run's: bert_small,\n"
        "  vit_tiny, resnet18, real/silero_vad_legacy, bert-L2-H128, vit-L2-H96,\n"
        "  gpt-L2-H128). --method NAME: only that method (repeatable: random, greedy,\n"
        "  taso, taso-ref, expert, ppo, wm, pre-trained); the agents' 'to TASO cost'\n"
        "  needs taso among them.\n"
        "--reference: also TASO with 10x the budget and 5x the time.\n"
        "--report DIR: also a page comparing the runs in DIR/index.html.\n");
    return arg && strcmp(arg, "--help") && strcmp(arg, "-h") ? 2 : 0;
}

int main(int argc, char **argv)
{
    const char *report = NULL, *tau_model = "bert-L2-H128";
    cfg.seconds = 60;
    cfg.seeds = 3;
    cfg.target = 1;
    cfg.fused = 1;
    cfg.target_budget = 30;
    int quick = 0, tau = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--rules") && v) cfg.rules = v, i++;
        else if (!strcmp(a, "--seconds") && v) cfg.seconds = atof(v), i++;
        else if (!strcmp(a, "--seeds") && v) cfg.seeds = atoi(v), i++;
        else if (!strcmp(a, "--target") && v) cfg.target = !strcmp(v, "ort"), i++;
        else if (!strcmp(a, "--cost") && v) cfg.fused = !strcmp(v, "fused"), i++;
        else if (!strcmp(a, "--target-budget") && v) cfg.target_budget = atof(v), i++;
        else if (!strcmp(a, "--tau-model") && v) tau_model = v, i++;
        else if (!strcmp(a, "--pretrained") && v) cfg.pretrained = v, i++;
        else if (!strcmp(a, "--reference")) cfg.reference = 1;
        else if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--no-tau")) tau = 0;
        else if (!strcmp(a, "--report") && v) report = v, i++;
        else if (!strcmp(a, "--model") && v && add_pick(&pick_models, v)) i++;
        else if (!strcmp(a, "--method") && v && add_pick(&pick_methods, v)) i++;
        else return usage(a);
    }
    if (cfg.seeds < 1 || cfg.seeds > 16 || cfg.seconds <= 0) {
        fprintf(stderr, "bench_agents: --seeds takes 1..16, --seconds a positive number\n");
        return 2;
    }
    if (cfg.pretrained) {
        const char *colon = strchr(cfg.pretrained, ':');
        if (!colon || (strncmp(cfg.pretrained, "ppo:", 4) && strncmp(cfg.pretrained, "wm:", 3))) {
            fprintf(stderr, "bench_agents: --pretrained takes ppo:CKPT or wm:CKPT\n");
            return 2;
        }
        cfg.pretrained_agent = cfg.pretrained[0] == 'p' ? XF_OPTIMIZE_PPO : XF_OPTIMIZE_WM;
        cfg.pretrained = colon + 1;
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
    cfg.scratch = bench_scratch("bench_agents");
    static char rules[2048];
    if (cfg.rules) {
        snprintf(rules, sizeof rules, "%s", cfg.rules);
    } else { /* the build's default rules */
        bench_default_rules(XF_BENCH_TOOLS_DIR, rules, sizeof rules);
    }
    cfg.rules = rules;
    printf("rules: %s; %g s per method, seeds 1..%d, target %s, cost %s, arbiter budget %g s, "
           "1 thread; load average %.1f\n",
           rules, cfg.seconds, cfg.seeds, cfg.target ? "ort" : "none",
           cfg.target && cfg.fused ? "fused" : "ops", cfg.target_budget, bench_load_average());
    if (!cfg.pretrained)
        printf("pre-trained: not available in this build (no checkpoint given)\n");

    const char *shared[] = {"bert_small", "vit_tiny", "resnet18", "real/silero_vad_legacy"};
    for (int i = 0; i < pick_models.n; i++) {
        int known = 0;
        for (int m = 0; m < 4; m++) known |= !strcmp(shared[m], pick_models.name[i]);
        for (int m = 0; m < (int)(sizeof zoo / sizeof zoo[0]); m++)
            known |= !strcmp(zoo[m][0], pick_models.name[i]);
        if (!known) {
            fprintf(stderr, "bench_agents: --model %s: no such model (see --help)\n",
                    pick_models.name[i]);
            return 2;
        }
    }
    for (int i = 0; i < pick_methods.n; i++) {
        int known = 0;
        for (int m = 0; m < N_METHODS; m++) known |= !strcmp(methods[m].name, pick_methods.name[i]);
        if (!known) {
            fprintf(stderr, "bench_agents: --method %s: no such method (see --help)\n",
                    pick_methods.name[i]);
            return 2;
        }
    }
    /* --model picks among every model of the full run */
    int n_shared = quick && !pick_models.n ? 2 : 4;
    char tau_path[2048] = "";
    printf("\n== ../shared/models\n");
    for (int m = 0; m < n_shared; m++) {
        if (!picked(&pick_models, shared[m])) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s/model.onnx", XF_BENCH_MODELS_DIR, shared[m]);
        struct stat st;
        if (stat(path, &st) != 0) {
            printf("%-22s skipped: %s not found\n", shared[m], path);
            continue;
        }
        if (!strcmp(shared[m], tau_model)) snprintf(tau_path, sizeof tau_path, "%s", path);
        bench_model(shared[m], path);
    }
    printf("\n== modelzoo\n");
    int n_zoo = quick && !pick_models.n ? 1 : (int)(sizeof zoo / sizeof zoo[0]);
    for (int m = 0; m < (int)(sizeof zoo / sizeof zoo[0]); m++) {
        char path[2048], cmd[4096];
        int is_tau = !strcmp(zoo[m][0], tau_model);
        int bench = m < n_zoo && picked(&pick_models, zoo[m][0]);
        if (!bench && !(is_tau && tau)) continue;
        snprintf(path, sizeof path, "%s/%s.onnx", cfg.scratch, zoo[m][0]);
        snprintf(cmd, sizeof cmd, "'%s' %s -o '%s' > /dev/null", XF_BENCH_MODELZOO, zoo[m][1],
                 path);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_agents: modelzoo failed: %s\n", cmd);
            continue;
        }
        if (is_tau) snprintf(tau_path, sizeof tau_path, "%s", path);
        if (bench) bench_model(zoo[m][0], path);
    }
    if (tau && tau_path[0]) tau_sweep(tau_model, tau_path);
    else if (tau) printf("\ntau sweep: model %s not found\n", tau_model);
    return report ? write_report(report) : 0;
}
