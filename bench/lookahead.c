/*
 * bench_lookahead — the look-ahead cases of issue 35: small graphs
 * (modelzoo's lookahead-transpose at 2 and 3 products) whose cheapest
 * form under the proved rules is reached only through graphs dearer than
 * the input, so that greedy
 * (never up) and TASO's search with alpha 1.05 (never queues a graph 5%
 * above its best) miss it by construction. For each case:
 *
 *  - the optimum: exhaustive breadth-first search over every rule
 *    application (XF_SEARCH_EXHAUSTIVE, visited set by structural hash),
 *    complete within the size cap and depth, and the rules on a shortest
 *    path to it;
 *  - the bound: the smallest alpha (to 0.1%) for which some path from the
 *    input to the optimum stays below alpha x the input's cost, found by
 *    bisection over exhaustive searches bounded by that cost; any search
 *    that never keeps a graph that dear, TASO's with a smaller alpha
 *    whatever its budget included, cannot reach the optimum;
 *  - what random, greedy, TASO (alpha 1.05 and a larger one), the searches'
 *    look-ahead (taso and greedy with lookahead on), PPO and the world-model
 *    agent reach: best cost, how many of the seeds reach the optimum, the
 *    step (TASO: expansion) at which each first saw it, steps used, wall
 *    time (mean and range over seeds); and each trained agent's policy
 *    alone (saved, loaded, one greedy episode without training): whether
 *    the policy carries the chain, not only the run's exploration. PPO
 *    runs with self-imitation (SIL, its default), without it, and with
 *    SIL and a novelty bonus (--novelty, percent per step to a graph the
 *    run has not seen); the world model without SIL (at the first dream
 *    temperature) and with it (its default) at each dream temperature of
 *    --tau (the sweep where the temperature can matter: a chain whose
 *    first steps cost more), with its model's error on held-out
 *    transitions and its dream return against its real one.
 *
 *   bench_lookahead [--rules DB] [--layers N] [--seeds N] [--steps N]
 *                   [--agents ppo,ppo-nosil,ppo-novelty,wm,wm-nosil] [--tau LIST]
 *                   [--novelty B] [--seconds S] [--episode N] [--hidden N] [--width N]
 *
 * Costs: the analytic backend at a fixed roofline (100 GFLOP/s, 10 GB/s,
 * 2 us a kernel), the same on every machine. Rules: the default rules
 * database (the build's, next to rlflow-agent, else the user cache's,
 * made when missing) or --rules. Prints only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_runner.h"
#include "agent/rl/rl.h"
#include "agent/search/search.h"
#include "modelzoo/modelzoo.h"
#include "optimize/optimize.h"

#define MAX_SEEDS 16
#define MAX_TAUS 8

static void usage(void)
{
    printf("usage: bench_lookahead [--rules DB] [--layers N] [--seeds N] [--steps N] [--agents LIST]\n"
           "                       [--tau LIST] [--novelty B] [--seconds S] [--episode N]\n"
           "                       [--hidden N] [--width N]\n"
           "the look-ahead cases (modelzoo lookahead-transpose --layers 2 and 3): the optimum\n"
           "under the rules by exhaustive search, the smallest alpha that reaches it, and what\n"
           "random, greedy, TASO, the search look-ahead, PPO and the world model reach\n"
           "  --rules DB     rules database (default: the default rules, as rlflow-agent)\n"
           "  --layers N     one case of N products, 2..8 (default: 2 and 3)\n"
           "  --seeds N      seeds of random, PPO and the world model (default 3)\n"
           "  --agents LIST  of ppo (self-imitation on), ppo-nosil (off), ppo-novelty (on, and\n"
           "                 the novelty bonus), wm (self-imitation on, at each --tau), wm-nosil\n"
           "                 (off, at the first --tau) (default: all)\n"
           "  --tau LIST     the world model's dream temperatures, e.g. 0.5,1,2 (default 1)\n"
           "  --novelty B    ppo-novelty's bonus, percent per step to an unseen graph (default 20)\n"
           "  --steps N      real-environment steps of random and each agent (default 3000)\n"
           "  --seconds S    wall-clock cap of each agent run (default 120)\n"
           "  --episode N    episode length of the agents' environment (default 8)\n"
           "  --hidden N, --width N   the case's sizes (default the zoo's: 256, 4)\n");
}

static void fail(const char *what, const xf_error *err)
{
    fprintf(stderr, "bench_lookahead: %s: %s\n", what, err->msg);
    exit(1);
}

typedef struct runstat {
    double best[MAX_SEEDS], steps[MAX_SEEDS], secs[MAX_SEEDS], at[MAX_SEEDS];
    int n, found;
} runstat;

static void add_run(runstat *s, const xf_search_result *r, double opt, double tol)
{
    s->best[s->n] = r->best_ms;
    s->steps[s->n] = (double)r->expanded;
    s->secs[s->n] = r->seconds;
    if (r->best_ms <= opt + tol) s->at[s->found++] = (double)r->best_step;
    s->n++;
}

static void range(const double *v, int n, double *mean, double *lo, double *hi)
{
    *mean = 0;
    *lo = *hi = v[0];
    for (int i = 0; i < n; i++) {
        *mean += v[i] / n;
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

static void print_row(const char *method, const runstat *s, double c0)
{
    double bm, bl, bh, sm, sl, sh, tm, tl, th, am = 0, al = 0, ah = 0;
    range(s->best, s->n, &bm, &bl, &bh);
    range(s->steps, s->n, &sm, &sl, &sh);
    range(s->secs, s->n, &tm, &tl, &th);
    char best[64], steps[64], secs[64], at[64] = "-";
    if (s->found > 0) {
        range(s->at, s->found, &am, &al, &ah);
        if (s->found == 1) snprintf(at, sizeof at, "%.0f", am);
        else snprintf(at, sizeof at, "%.0f [%.0f-%.0f]", am, al, ah);
    }
    if (s->n == 1) {
        snprintf(best, sizeof best, "%.4f (%+.1f%%)", bm, 100 * (bm - c0) / c0);
        snprintf(steps, sizeof steps, "%.0f", sm);
        snprintf(secs, sizeof secs, "%.2f", tm);
    } else {
        snprintf(best, sizeof best, "%.4f (%+.1f%%) [%.4f-%.4f]", bm, 100 * (bm - c0) / c0, bl, bh);
        snprintf(steps, sizeof steps, "%.0f [%.0f-%.0f]", sm, sl, sh);
        snprintf(secs, sizeof secs, "%.2f [%.2f-%.2f]", tm, tl, th);
    }
    printf("  %-24s %3d/%-3d %-36s %-18s %-18s %s\n", method, s->found, s->n, best, at, steps, secs);
}

/* Exhaustive search from the env's input, bounded by cost (0: none). */
static void exhaustive(xf_env *e, double bound, int depth, xf_search_result *r)
{
    xf_error err;
    xf_search_options so = xf_search_options_default();
    so.budget = 1000000;
    so.max_depth = depth;
    so.cost_bound = bound;
    so.max_seconds = 600;
    if (xf_search_run(e, XF_SEARCH_EXHAUSTIVE, &so, r, &err)) fail("exhaustive search", &err);
}

typedef struct bench_opts {
    const char *rules;
    int seeds, episode, depth, ppo, ppo_nosil, ppo_novelty, wm, wm_nosil, n_tau;
    double tau[MAX_TAUS];
    int64_t steps, hidden, width, layers;
    double seconds, novelty;
} bench_opts;

static void run_case(const char *name, int64_t layers, const bench_opts *bo, const char *rules)
{
    xf_error err;
    const xf_zoo_model *m = xf_modelzoo_model_find(name);
    if (!m) {
        fprintf(stderr, "bench_lookahead: no zoo model %s\n", name);
        exit(1);
    }
    xf_zoo_config zc;
    xf_modelzoo_config_init(&zc, m);
    if (bo->hidden > 0) zc.v[XF_ZOO_HIDDEN] = bo->hidden;
    if (bo->width > 0) zc.v[XF_ZOO_WIDTH] = bo->width;
    zc.v[XF_ZOO_LAYERS] = layers;
    xf_graph model;
    if (xf_modelzoo_build(m, &zc, &model, &err)) fail(name, &err);
    bench_env be;
    bench_analytic_env(&model, rules, bo->episode, &be);
    xf_env *e = be.e;
    xf_ruleset *rs = be.rs;
    xf_cost_model *cm = be.cm;
    const xf_graph *prep = &be.prep;

    char text[1024];
    if (xf_graph_format(xf_env_graph(e), text, sizeof text, &err)) snprintf(text, sizeof text, "?");
    printf("\n== %s --layers %lld --hidden %lld --width %lld: %s\n", name, (long long)layers,
           (long long)zc.v[XF_ZOO_HIDDEN], (long long)zc.v[XF_ZOO_WIDTH], text);
    printf("   %d nodes prepared, %d actions (rules and reverses, derived included) of %s\n",
           xf_env_graph(e)->n_nodes, xf_env_num_xfers(e), rules);

    /* the optimum */
    xf_search_result opt;
    xf_search_result_init(&opt);
    exhaustive(e, 0, bo->depth, &opt);
    double c0 = opt.initial_ms, copt = opt.best_ms, tol = 1e-9 * c0;
    if (xf_graph_format(&opt.best, text, sizeof text, &err)) snprintf(text, sizeof text, "?");
    printf("   input %.4f ms; optimum %.4f ms (%+.1f%%): %s\n", c0, copt, 100 * (copt - c0) / c0, text);
    printf("   exhaustive: %lld distinct graphs, %lld expanded, depth %d, %s, %.2f s; a shortest path:\n",
           (long long)opt.seen, (long long)opt.expanded, opt.depth,
           opt.complete ? "complete (no graph within 2x the nodes is cheaper)"
                        : "NOT complete (depth or budget reached)",
           opt.seconds);
    for (int i = 0; i < opt.n_applied; i++)
        printf("     %d. %s\n", i + 1, xf_ruleset_text(rs, opt.applied[i]));
    xf_check_result chk;
    if (xf_interp_check(prep, &opt.best, 1, 1e-4, 1e-5, &chk, &err)) fail("interpreter check", &err);
    printf("   the optimum against the input in the interpreter: max |d| %.3g, %s\n", chk.max_abs,
           chk.bad_output < 0 ? "same function" : "DIFFERENT FUNCTION (a rule applied where it is false)");

    /* the bound: smallest alpha whose cost-bounded reach holds the optimum */
    double lo = 1.0, hi = 4.0;
    xf_search_result b;
    xf_search_result_init(&b);
    exhaustive(e, 1.05 * c0, bo->depth, &b);
    double reach105 = b.best_ms;
    int complete105 = b.complete;
    exhaustive(e, hi * c0, bo->depth, &b);
    if (b.best_ms > copt + tol) {
        printf("   bound: the optimum is not reached below %.1fx the input\n", hi);
    } else {
        while (hi - lo > 0.001) {
            double mid = 0.5 * (lo + hi);
            exhaustive(e, mid * c0, bo->depth, &b);
            if (b.best_ms <= copt + tol) hi = mid;
            else lo = mid;
        }
        printf("   bound: every path to the optimum passes a graph >= %.3fx the input (%+.1f%%);\n"
               "          below 1.05x the rules reach %.4f ms at best (%s): TASO alpha 1.05 and "
               "greedy miss the optimum by construction\n",
               lo, 100 * (lo - 1), reach105, complete105 ? "complete" : "NOT complete");
    }
    double alpha_big = hi * 1.05 > 1.5 ? hi * 1.05 : 1.5;
    xf_search_result_free(&b);

    printf("  %-24s %-7s %-36s %-18s %-18s %s\n", "method", "optimum", "best ms (vs input) [range]",
           "steps to optimum", "steps used", "wall s");
    struct {
        const char *label;
        xf_search_kind kind;
        double alpha;
        int lookahead;
    } searches[] = {
        {"greedy", XF_SEARCH_GREEDY, 1.05, 0},
        {"taso alpha 1.05", XF_SEARCH_TASO, 1.05, 0},
        {"taso alpha big", XF_SEARCH_TASO, alpha_big, 0},
        {"greedy + look-ahead", XF_SEARCH_GREEDY, 1.05, 1},
        {"taso 1.05 + look-ahead", XF_SEARCH_TASO, 1.05, 1},
    };
    for (size_t i = 0; i < sizeof searches / sizeof *searches; i++) {
        xf_search_options so = xf_search_options_default();
        so.alpha = searches[i].alpha;
        so.lookahead = searches[i].lookahead;
        so.budget = 1000;
        xf_search_result r;
        xf_search_result_init(&r);
        if (xf_search_run(e, searches[i].kind, &so, &r, &err)) fail(searches[i].label, &err);
        runstat s = {0};
        add_run(&s, &r, copt, tol);
        char label[64];
        if (searches[i].alpha != 1.05)
            snprintf(label, sizeof label, "taso alpha %.2f", searches[i].alpha);
        else
            snprintf(label, sizeof label, "%s", searches[i].label);
        print_row(label, &s, c0);
        xf_search_result_free(&r);
    }
    /* the learning agents: ppo, ppo without self-imitation, ppo with the
     * novelty bonus, wm without self-imitation (at the first tau), wm at
     * each tau */
    enum { V_PPO, V_PPO_NOSIL, V_PPO_NOVELTY, V_WM_NOSIL, N_FIXED, N_VARIANTS = N_FIXED + MAX_TAUS };
    runstat rnd = {0}, agent[N_VARIANTS], policy[N_VARIANTS];
    memset(agent, 0, sizeof agent);
    memset(policy, 0, sizeof policy);
    double diag[N_VARIANTS][5]; /* wm: sums over seeds of the training figures below */
    memset(diag, 0, sizeof diag);
    int on[N_VARIANTS] = {bo->ppo, bo->ppo_nosil, bo->ppo_novelty, bo->wm_nosil};
    for (int t = 0; t < bo->n_tau; t++) on[N_FIXED + t] = bo->wm;
    char ckpt[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(ckpt, sizeof ckpt, "%s/bench_lookahead_%d.ckpt", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    for (int sd = 0; sd < bo->seeds; sd++) {
        xf_search_options so = xf_search_options_default();
        so.budget = (int)bo->steps;
        so.seed = (uint64_t)sd + 1;
        xf_search_result r;
        xf_search_result_init(&r);
        if (xf_search_run(e, XF_SEARCH_RANDOM, &so, &r, &err)) fail("random", &err);
        add_run(&rnd, &r, copt, tol);
        for (int v = 0; v < N_FIXED + bo->n_tau; v++) {
            if (!on[v]) continue;
            int w = v >= V_WM_NOSIL;
            xf_rl_learn_options lr = {0};
            lr.wm = w;
            lr.no_self_imitation = v == V_PPO_NOSIL || v == V_WM_NOSIL;
            lr.no_polish = 1; /* what the agents find and carry, not a descent after them */
            lr.novelty = v == V_PPO_NOVELTY ? (float)bo->novelty : 0.0f;
            lr.cm = cm;
            lr.max_locations = be.max_locations;
            lr.seed = (uint64_t)sd + 1;
            lr.tau = !w ? 1.0f : (float)bo->tau[v == V_WM_NOSIL ? 0 : v - N_FIXED];
            lr.max_seconds = bo->seconds;
            lr.max_env_steps = bo->steps;
            lr.save = ckpt;
            xf_rl_learned learned;
            memset(&learned, 0, sizeof learned);
            if (xf_rl_learn(e, &lr, &r, &learned, &err)) fail(w ? "world model" : "ppo", &err);
            if (learned.save_failed) fail(ckpt, &learned.save_err);
            add_run(&agent[v], &r, copt, tol);
            const xf_wm_agent_stats *ws = &learned.wm;
            double d5[5] = {ws->heldout_nll, ws->heldout_reward_rmse, ws->reward_rms,
                            ws->dream_reward, ws->real_return};
            for (int k = 0; w && k < 5; k++) diag[v][k] += d5[k] / bo->seeds;
            /* the trained policy alone: one greedy episode, no training */
            lr.save = NULL;
            lr.load = ckpt;
            if (xf_rl_learn(e, &lr, &r, &learned, &err)) fail(ckpt, &err);
            add_run(&policy[v], &r, copt, tol);
            remove(ckpt);
        }
        xf_search_result_free(&r);
    }
    if (bo->seeds > 0) print_row("random", &rnd, c0);
    for (int pass = 0; pass < 2 && bo->seeds > 0; pass++)
        for (int v = 0; v < N_FIXED + bo->n_tau; v++) {
            if (!on[v]) continue;
            char label[64];
            const char *what = pass ? ": policy" : "";
            if (v == V_PPO) snprintf(label, sizeof label, "ppo%s", what);
            else if (v == V_PPO_NOSIL) snprintf(label, sizeof label, "ppo, no SIL%s", what);
            else if (v == V_PPO_NOVELTY)
                snprintf(label, sizeof label, "ppo, novelty %g%s", bo->novelty, what);
            else if (v == V_WM_NOSIL) snprintf(label, sizeof label, "wm, no SIL%s", what);
            else if (bo->n_tau == 1 && bo->tau[0] == 1.0) snprintf(label, sizeof label, "wm%s", what);
            else snprintf(label, sizeof label, "wm tau %.2g%s", bo->tau[v - N_FIXED], what);
            print_row(label, pass ? &policy[v] : &agent[v], c0);
        }
    for (int v = V_WM_NOSIL; v < N_FIXED + bo->n_tau && bo->seeds > 0; v++)
        if (on[v])
            printf("  wm%s tau %.2g, last round (mean of seeds): the model on held-out "
                   "transitions: z NLL/dim %.3f, reward RMSE %.2f%% (reward RMS %.2f%%); return "
                   "in the dream %+.2f%%, of the controller on the real environment %+.2f%%\n",
                   v == V_WM_NOSIL ? ", no SIL," : "", bo->tau[v == V_WM_NOSIL ? 0 : v - N_FIXED],
                   diag[v][0],
                   diag[v][1], diag[v][2], diag[v][3], diag[v][4]);
    xf_search_result_free(&opt);
    bench_env_free(&be);
    xf_graph_free(&model);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows as they come, also into a file */
    bench_opts bo = {NULL, 3, 8, 12, 1, 1, 1, 1, 1, 1, {1.0}, 3000, 0, 0, 0, 120, 20};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage();
            return 0;
        }
        if (!v) {
            usage();
            return 2;
        }
        i++;
        if (!strcmp(a, "--rules")) bo.rules = v;
        else if (!strcmp(a, "--layers")) bo.layers = atoll(v);
        else if (!strcmp(a, "--agents")) {
            bo.ppo = bo.ppo_nosil = bo.ppo_novelty = bo.wm = bo.wm_nosil = 0;
            char list[256];
            snprintf(list, sizeof list, "%s", v);
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                if (!strcmp(t, "ppo")) bo.ppo = 1;
                else if (!strcmp(t, "ppo-nosil")) bo.ppo_nosil = 1;
                else if (!strcmp(t, "ppo-novelty")) bo.ppo_novelty = 1;
                else if (!strcmp(t, "wm")) bo.wm = 1;
                else if (!strcmp(t, "wm-nosil")) bo.wm_nosil = 1;
                else {
                    fprintf(stderr, "bench_lookahead: --agents: unknown agent '%s' (ppo, "
                            "ppo-nosil, ppo-novelty, wm, wm-nosil)\n", t);
                    return 2;
                }
            }
        }
        else if (!strcmp(a, "--tau")) {
            bo.n_tau = 0;
            char list[256];
            snprintf(list, sizeof list, "%s", v);
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                double tau = atof(t);
                if (bo.n_tau == MAX_TAUS || tau <= 0) {
                    fprintf(stderr, "bench_lookahead: --tau: at most %d values, each > 0\n",
                            MAX_TAUS);
                    return 2;
                }
                bo.tau[bo.n_tau++] = tau;
            }
        }
        else if (!strcmp(a, "--seeds")) bo.seeds = atoi(v);
        else if (!strcmp(a, "--steps")) bo.steps = atoll(v);
        else if (!strcmp(a, "--seconds")) bo.seconds = atof(v);
        else if (!strcmp(a, "--novelty")) bo.novelty = atof(v);
        else if (!strcmp(a, "--episode")) bo.episode = atoi(v);
        else if (!strcmp(a, "--hidden")) bo.hidden = atoll(v);
        else if (!strcmp(a, "--width")) bo.width = atoll(v);
        else {
            usage();
            return 2;
        }
    }
    if (bo.seeds < 0 || bo.seeds > MAX_SEEDS || bo.steps < 1 || bo.seconds <= 0 || bo.episode < 1 ||
        bo.novelty < 0 ||
        bo.layers < 0 || bo.layers == 1 || bo.layers > 8) {
        fprintf(stderr, "bench_lookahead: --seeds 0..%d, --steps >= 1, --seconds > 0, --episode >= 1,"
                " --novelty >= 0, --layers 2..8\n", MAX_SEEDS);
        return 2;
    }
    char rules[4096];
    if (bo.rules) {
        snprintf(rules, sizeof rules, "%s", bo.rules);
    } else {
        bench_default_rules(XF_BENCH_TOOLS_DIR, rules, sizeof rules);
    }
    printf("bench_lookahead: rules %s; analytic costs (100 GFLOP/s, 10 GB/s, 2 us a kernel);\n"
           "agents and random: %d seeds, %lld real steps or %.0f s each, episodes of %d steps;\n"
           "\"X: policy\": agent X's trained policy alone (saved, loaded, one greedy episode);\n"
           "SIL: the agents' self-imitation of their best episode (PPO: replayed on the real\n"
           "environment; the world model: its recorded steps in each dream update)\n",
           rules, bo.seeds, (long long)bo.steps, bo.seconds, bo.episode);
    /* the chain grows with the products: 3 and 5 rule applications (at 4
     * products, 7, the exhaustive search stops at depth 12 after ~74,000
     * graphs and minutes, not complete) */
    if (bo.layers) run_case("lookahead-transpose", bo.layers, &bo, rules);
    else
        for (int64_t layers = 2; layers <= 3; layers++) run_case("lookahead-transpose", layers, &bo, rules);
    return 0;
}
