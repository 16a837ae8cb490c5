/*
 * rlflow-agent — optimise an ONNX model with proved rewrite rules.
 *
 *   rlflow-agent --rules RULES.db MODEL.onnx [-o OUT.onnx] [--agent wm|ppo|taso|greedy|random]
 *
 * Steps: load the model and the proved rules, open the cost model (oneDNN
 * timings cached in SQLite by default), build the optimisation environment,
 * run the chosen search or learning agent on it, fold the weights the rules created into new
 * initializers, check numerically that the optimised model computes what the
 * original does (refusing to write otherwise unless --no-check), export it
 * keeping the model's symbolic dims, read it back and check it at three
 * sizes of each (onnx's xf_onnx_write_checked: the input is written instead
 * when it fails, a symbol that cannot follow is written fixed), write it,
 * measure both models end to end and print the report. Symbolic dims not
 * given by --dim are sized from --data or by onnx's size search
 * (xf_onnx_sizes), and the tool says which sizes it chose.
 * Every step is a library call (agent/rewrite, agent/search, onnx); this
 * file parses, calls and prints.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/search/search.h"
#include "cli.h"
#include "onnx/onnx.h"

static char cache_buf[4096];


/* $XDG_CACHE_HOME/rlflow/costs.db (or ~/.cache/...), directories created;
 * NULL (in-memory cache) when neither variable is set or for 'none'. */
static const char *cache_path(const cli_options *o)
{
    if (o->cache) return strcmp(o->cache, "none") == 0 ? NULL : o->cache;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char dir[4000];
    if (xdg && *xdg) snprintf(dir, sizeof dir, "%s", xdg);
    else if (home && *home) snprintf(dir, sizeof dir, "%s/.cache", home);
    else return NULL;
    mkdir(dir, 0755);
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/rlflow");
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return NULL;
    snprintf(cache_buf, sizeof cache_buf, "%s/costs.db", dir);
    return cache_buf;
}

static void progress(void *user, int expanded, double best_ms, double initial_ms)
{
    (void)user;
    fprintf(stderr, "\rsearch: %d graphs expanded, best %.4f ms (%+.2f%%)   ", expanded, best_ms,
            initial_ms > 0 ? 100.0 * (best_ms - initial_ms) / initial_ms : 0.0);
    fflush(stderr);
}

/* Default --time-limit of a search on the fusion-aware cost. */
#define FUSED_SEARCH_SECONDS 120.0

typedef struct run_state {
    xf_graph model, finished;
    /* ms[0]: the model prepared as asked, its rules, environment and search;
     * ms[1]: prepared the other way (xf_prepare_alternative), searched too
     * when the target decides (--scalings both) */
    xf_model_search ms[2];
    int n_searches;
    xf_cost_model *cm, *lat_cm;
    xf_agent_outcome oc; /* costs of the models as written; kept_original */
    xf_target *target;   /* --target ort, when ONNX Runtime loads */
    xf_fused_cost *fused; /* --cost fused, when the target loads */
    xf_arbiter_result arb;
    xf_onnx_sizes *sizes; /* the sizes the model is imported at */
    xf_onnx_dynamic *dyn; /* the model's symbolic dims and their three sizes */
    double t_start;       /* when the run began */
    xf_onnx_checked written; /* what was written, checked at those sizes */
    cli_learn_outcome learned; /* a learning agent's checkpoint troubles */
} run_state;

static void run_free(run_state *s)
{
    xf_arbiter_result_free(&s->arb);
    for (int i = 0; i < 2; i++) xf_model_search_free(&s->ms[i]);
    xf_fused_cost_free(s->fused);
    xf_target_close(s->target);
    if (s->lat_cm != s->cm) xf_cost_close(s->lat_cm);
    xf_cost_close(s->cm);
    xf_graph_free(&s->finished);
    xf_graph_free(&s->model);
    xf_onnx_dynamic_free(s->dyn);
    xf_onnx_sizes_free(s->sizes);
}

/* The model is prepared (the graph the search starts from) and the rule
 * set restricted to the actions that can match it unless --all-actions
 * (into ms[i]; the environment takes the prepared graph over). Checkpoints
 * name their actions by rule database id, so they need no fixed action
 * numbering. */
static xf_status load_rules(const cli_options *o, run_state *s, int i,
                            const xf_prepare_options *prepare, xf_error *err)
{
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.status = o->rule_status;
    ro.derived = o->derived_rules;
    ro.max_size = o->max_rule_size;
    xf_status st = xf_model_search_prepare(&s->ms[i], &s->model, prepare, err);
    if (st) {
        xf_error_prefix(err, "%s", o->model);
        return st;
    }
    return xf_model_search_rules(&s->ms[i], o->rules, &ro, !o->all_actions, err);
}

/* Loading: model, rules, cost model. Failures here are exit status 2. */
static int load_inputs(const cli_options *o, run_state *s)
{
    xf_error err = {0};
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = o->dims.n;
    io.dim_names = o->dims.names;
    io.dim_values = o->dims.values;
    if (xf_onnx_sizes_choose(o->model, &io, o->data, &s->sizes, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 2;
    }
    if (xf_onnx_sizes_said(s->sizes)[0])
        fprintf(stderr, "rlflow-agent: %s\n", xf_onnx_sizes_said(s->sizes));
    io = xf_onnx_sizes_options(s->sizes);
    /* the symbols first: its imports are over before the model is held */
    if (xf_onnx_dynamic_open_file(o->model, &io, &s->dyn, &err) ||
        xf_onnx_load(o->model, &io, &s->model, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 2;
    }
    int tied = 0;
    if (xf_gather_tied(&s->model, &tied, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 1;
    }
    if (tied && !o->quiet)
        fprintf(stderr, "rlflow-agent: %d tied embedding%s read through the transposed copy the "
                        "head uses (one copy held)\n",
                tied, tied == 1 ? "" : "s");
    if (o->load && access(o->load, R_OK) != 0) {
        fprintf(stderr, "rlflow-agent: cannot read checkpoint '%s': %s\n", o->load,
                strerror(errno));
        return 2;
    }
    s->n_searches = 1;
    if (load_rules(o, s, 0, &o->prepare, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 2;
    }
    const xf_ruleset *rs = s->ms[0].rs;
    if (xf_ruleset_count(rs) + xf_ruleset_irrelevant(rs) == 0) {
        const char *why = NULL;
        int skipped = xf_ruleset_skipped(rs, &why);
        fprintf(stderr,
                "rlflow-agent: %s has no %s rules the matcher can use (%d skipped%s%s); "
                "run 'xferverify %s' first\n",
                o->rules, o->rule_status == -1 ? "usable" : "proved", skipped, why ? ": " : "",
                why ? why : "", o->rules);
        return 2;
    }
    xf_cost_options co = xf_cost_options_default();
    co.backend = o->backend;
    co.threads = o->threads;
    co.cache_path = cache_path(o);
    /* the cache is checked against the inputs as it opens, then kept from
     * being written over itself */
    if (xf_cost_open(&co, &s->cm, &err) ||
        xf_outfile_protect(co.cache_path, "the cost cache", &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 2;
    }
    if (o->target) {
        xf_target_options to = xf_target_default_options();
        to.threads = o->threads;
        if (xf_target_open(&to, &s->target, &err)) {
            printf("target:          none: %s; the cost model decides, as without --target\n",
                   err.msg);
            s->target = NULL;
        }
    }
    if (s->target && o->fused_cost) {
        if (!o->quiet) fprintf(stderr, "cost: timing ONNX Runtime's per-run overhead...\n");
        if (xf_fused_cost_create(s->target, s->cm, NULL, &s->fused, &err)) {
            fprintf(stderr, "rlflow-agent: %s\n", err.msg);
            return 2;
        }
    } else if (o->fused_cost) {
        printf("cost:            ops: the fused cost needs the target, which did not load\n");
    }
    s->lat_cm = s->cm;
    if (o->latency && o->backend == XF_COST_ANALYTIC) {
        co.backend = XF_COST_ONEDNN;
        co.cache_path = NULL;
        if (xf_cost_open(&co, &s->lat_cm, &err)) {
            fprintf(stderr, "rlflow-agent: latency backend: %s\n", err.msg);
            s->lat_cm = s->cm;
            return 2;
        }
    }
    return 0;
}

/* -v: every applicable rule with its location count and the best cost
 * change one application of it would make (peeked, no graph built). */
static void print_applicable(xf_env *env, const xf_ruleset *rs)
{
    int n = xf_env_num_xfers(env);
    const uint8_t *mask = xf_env_xfer_mask(env);
    double base = xf_env_cost(env);
    for (int r = 0; r < n; r++) {
        if (!mask[r]) continue;
        double best = 0;
        int nl = xf_env_num_locations(env, r);
        for (int l = 0; l < nl; l++) {
            double ms = 0, bytes = 0;
            if (xf_env_peek(env, r, l, &ms, &bytes, NULL) == XF_OK && (l == 0 || ms - base < best))
                best = ms - base;
        }
        printf("  rule %-7lld %4d locations, best %+.4f ms  %s\n",
               (long long)xf_ruleset_rule_id(rs, r), nl, best, xf_ruleset_text(rs, r));
    }
}

/* Rules with a location in env's graph, and their locations. */
static void count_applicable(xf_env *env, int *applicable, int *locations)
{
    int n = xf_env_num_xfers(env);
    const uint8_t *mask = xf_env_xfer_mask(env);
    *applicable = *locations = 0;
    for (int r = 0; r < n; r++) {
        if (!mask[r]) continue;
        (*applicable)++;
        *locations += xf_env_num_locations(env, r);
    }
}

static void print_header(const cli_options *o, run_state *s)
{
    const xf_ruleset *rs = s->ms[0].rs;
    int skipped = xf_ruleset_skipped(rs, NULL);
    int n = xf_env_num_xfers(s->ms[0].env), applicable = 0, locations = 0;
    count_applicable(s->ms[0].env, &applicable, &locations);
    const xf_prepare_stats *ps = xf_env_prepare_stats(s->ms[0].env);
    printf("model:           %s (%d nodes, %d after preparation", o->model, s->model.n_nodes,
           xf_env_graph(s->ms[0].env)->n_nodes);
    const char *sep = ": ";
    if (ps->fused_layernorms > 0) {
        printf("%s%d decomposed layer norms fused", sep, ps->fused_layernorms);
        sep = ", ";
    }
    if (ps->scalar_muls > 0) {
        printf("%s%d scalings as scalar_mul", sep, ps->scalar_muls);
        sep = ", ";
    }
    if (ps->narrowed_selections > 0) {
        printf("%s%d one-position selection%s moved up through %d operators", sep,
               ps->narrowed_selections, ps->narrowed_selections == 1 ? "" : "s",
               ps->narrowed_ops);
        sep = ", ";
    }
    if (ps->merged_split_layouts > 0)
        printf("%s%d split%s reshaped and transposed before splitting", sep,
               ps->merged_split_layouts, ps->merged_split_layouts == 1 ? "" : "s");
    printf(")\n");
    printf("rules:           %d actions from %s (%d skipped, %d duplicates, ", n, o->rules,
           skipped, xf_ruleset_duplicates(rs));
    if (o->all_actions)
        printf("irrelevant ones kept: --all-actions)\n");
    else
        printf("%d irrelevant to this model)\n", xf_ruleset_irrelevant(rs));
    printf("cost model:      %s\n", xf_cost_identity(s->cm));
    if (s->fused) {
        xf_fused_cost_stats fs;
        xf_fused_cost_get_stats(s->fused, &fs);
        printf("fused cost:      regions timed in the target (per-run overhead %.4f ms "
               "subtracted)\n",
               fs.overhead_ms);
    }
    if (s->target) printf("target:          %s\n", xf_target_identity(s->target));
    printf("applicable:      %d rules at %d locations\n", applicable, locations);
    if (s->n_searches > 1) {
        count_applicable(s->ms[1].env, &applicable, &locations);
        printf("also searched:   with the %d scalings kept in place (the target times both "
               "searches' candidates): %d actions, %d rules at %d locations\n",
               ps->scalar_muls, xf_env_num_xfers(s->ms[1].env), applicable, locations);
    }
    if (o->verbose) print_applicable(s->ms[0].env, rs);
}

static int search(const cli_options *o, run_state *s)
{
    xf_error err = {0};
    xf_env_options eo = xf_env_options_default();
    eo.max_locations = o->locations;
    eo.fused = s->fused;
    if (s->target) { /* the search sees the layouts ONNX Runtime runs faster */
        eo.layout_view_ms = XF_ORT_VIEW_MS;
        eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    }
    if (s->target && o->agent != CLI_AGENT_SEARCH) { /* the learning agents' sparse reward */
        eo.target = s->target;
        eo.target_every = o->target_every;
    }
    /* With the target deciding, a search of the model prepared the other
     * way too: its candidates are timed with the first search's. */
    xf_prepare_options alt;
    if (s->target && o->agent == CLI_AGENT_SEARCH && o->scalings_both &&
        xf_prepare_alternative(&o->prepare, &s->ms[0].prep, &alt)) {
        if (load_rules(o, s, 1, &alt, &err)) {
            fprintf(stderr, "rlflow-agent: the search with scalings kept: %s\n", err.msg);
            return 1;
        }
        s->n_searches = 2;
    }
    for (int i = 0; i < s->n_searches; i++)
        if (xf_model_search_env(&s->ms[i], s->cm, &eo, &err)) {
            fprintf(stderr, "rlflow-agent: %s\n", err.msg);
            return 1;
        }
    print_header(o, s);
    fflush(stdout);
    xf_env *env = s->ms[0].env;
    xf_search_kind kind = o->search;
    if (o->agent != CLI_AGENT_SEARCH && xf_env_num_xfers(env) == 0) {
        /* Every action was irrelevant to the model: nothing to learn; an
         * empty greedy search hands back the model as it is. */
        printf("agent:           %s, not trained: no action can match this model\n",
               o->agent == CLI_AGENT_PPO ? "ppo" : "wm");
        kind = XF_SEARCH_GREEDY;
    } else if (o->agent != CLI_AGENT_SEARCH) {
        if (cli_learn(o, env, s->cm, &s->ms[0].res, &s->learned, &err)) {
            fprintf(stderr, "rlflow-agent: %s agent failed: %s\n",
                    o->agent == CLI_AGENT_PPO ? "ppo" : "wm", err.msg);
            return s->learned.load_failed ? 2 : 1; /* an unreadable --load: bad input */
        }
        if (s->learned.save_failed) /* the model is still written; the status says it */
            fprintf(stderr, "rlflow-agent: checkpoint not written: %s\n",
                    s->learned.save_err.msg);
        if (s->target) {
            xf_env_profile p;
            xf_env_profile_get(env, &p);
            printf("target reward:   every %d valid steps: %lld graphs timed in the target, "
                   "%.1f s; the prepared model %.4f ms there\n",
                   o->target_every, (long long)p.target_runs, p.target,
                   xf_env_target_initial_ms(env));
        }
        return 0;
    }
    xf_search_options so = xf_search_options_default();
    so.alpha = o->alpha;
    if (o->budget > 0) so.budget = o->budget;
    /* On the fused cost every new region is timed in the target: a search
     * that keeps finding new ones is bounded by time unless told otherwise. */
    so.max_seconds = o->time_limit > 0 ? o->time_limit : s->fused ? FUSED_SEARCH_SECONDS : 0;
    so.seed = o->seed;
    so.max_locations = o->locations;
    so.lookahead = o->lookahead;
    if (s->target) so.candidates = 3 * o->candidates + 1; /* finishing merges some */
    if (!o->quiet) so.progress = progress;
    for (int i = 0; i < s->n_searches; i++) {
        xf_status st = xf_search_run(s->ms[i].env, kind, &so, &s->ms[i].res, &err);
        /* with the target to come, the rules are not needed any more: freed
         * (their ids and texts kept for the report), with the search's
         * frontier, before the sessions take their memory */
        if (!st && s->target) st = xf_model_search_release_rules(&s->ms[i], &err);
        xf_heap_trim();
        if (!o->quiet) fprintf(stderr, "\n");
        if (st) {
            fprintf(stderr, "rlflow-agent: %s search%s failed: %s\n", xf_search_kind_name(kind),
                    i ? " with scalings kept" : "", err.msg);
            return 1;
        }
    }
    return 0;
}

/* Fold, check, read back, write. */
static int finish_and_write(const cli_options *o, run_state *s, xf_check_result *chk)
{
    xf_error err = {0};
    if (s->target) {
        xf_arbiter_options ao = xf_arbiter_options_default();
        ao.max_models = o->candidates;
        ao.seed = o->seed;
        ao.rtol = o->rtol;
        ao.atol = o->atol;
        /* a kept symbolic dim may be the leading one: the unbatched layout
         * would write it fixed at its import size */
        ao.unbatch = xf_onnx_dynamic_points(s->dyn) == 1 && o->passes != CLI_PASSES_RULES;
        ao.budget_s = o->target_budget;
        if (o->racing) ao.racing = o->racing, ao.pairwise = 0;
        /* the winner is confirmed against the file written if the input is kept */
        xf_onnx_check_options co = xf_onnx_default_check_options();
        co.model = o->model;
        co.external_data = o->external_data;
        int copyable = 0;
        if (xf_onnx_input_copyable(&co, XF_ARBITER_FILE_MAX_BYTES, &copyable, &err)) {
            fprintf(stderr, "rlflow-agent: %s\n", err.msg);
            return 1;
        }
        if (copyable) ao.input_file = o->model;
        if (!o->quiet)
            fprintf(stderr, "target: timing up to %d candidates per search against the input "
                            "(budget %s)...\n",
                    o->candidates, o->target_budget > 0 ? "set" : "none");
        const xf_search_result *srs[2] = {&s->ms[0].res, &s->ms[1].res};
        if (xf_agent_arbitrate(s->target, s->cm, &s->model, srs, s->n_searches, &ao, &s->finished,
                               &s->arb, &err)) {
            fprintf(stderr, "rlflow-agent: %s\n", err.msg);
            return 1;
        }
        xf_heap_trim(); /* the sessions' memory, freed: before the check and the writing */
        memset(&s->oc, 0, sizeof s->oc);
        s->oc.cost_before = s->arb.e[0].cost_ms;
        s->oc.cost_after = s->arb.e[s->arb.chosen].cost_ms;
        s->oc.kept_original = s->arb.chosen == 0;
    } else if (xf_agent_outcome_model(s->cm, &s->model, &s->ms[0].res.best, &s->finished,
                                      &s->oc, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 1;
    }
    xf_status st = xf_interp_check(&s->model, &s->finished, o->seed, o->rtol, o->atol, chk, &err);
    if (st) {
        fprintf(stderr, "rlflow-agent: numerical check could not run: %s\n", err.msg);
        if (o->check) {
            fprintf(stderr, "rlflow-agent: nothing written (use --no-check to write anyway)\n");
            return 1;
        }
        chk->max_abs = chk->max_rel = -1;
    } else if (chk->bad_output >= 0) {
        int v = s->model.outputs[chk->bad_output];
        fprintf(stderr,
                "rlflow-agent: optimised model differs at output %d '%s': max |d| = %.3g "
                "(tolerance %.3g + %.3g*|ref|)\n",
                chk->bad_output, s->model.values[v].name ? s->model.values[v].name : "?",
                chk->bad_abs, o->atol, o->rtol);
        if (o->check) {
            fprintf(stderr, "rlflow-agent: nothing written (use --no-check to write anyway)\n");
            return 1;
        }
    }
    /* Exported keeping the symbolic dims, read back and checked at three
     * sizes in memory first (external weights read back in place, not copied):
     * the file, with its external data file if any, is written only then
     * (the input instead when the optimised model fails at some size), and
     * nothing is ever removed afterwards (-o may name a device or a FIFO). */
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = o->model;
    wo.output = o->output;
    wo.external_data = o->external_data;
    wo.numeric = o->check; /* --no-check: read back only */
    wo.fall_back = 1;
    wo.seed = o->seed;
    wo.rtol = o->rtol;
    wo.atol = o->atol;
    /* nothing better found: the input itself, which the writer copies byte
     * for byte when it can (the model as the user had it) */
    const xf_graph *written = s->oc.kept_original ? &s->model : &s->finished;
    if (xf_onnx_write_checked(&wo, s->dyn, &s->model, written, &s->written, &err)) {
        fprintf(stderr, "rlflow-agent: %s\n", err.msg);
        return 1;
    }
    if (s->written.why[0])
        fprintf(stderr, "rlflow-agent: the optimised model is not written: %s; writing the input "
                        "%s instead\n",
                s->written.why,
                s->written.wrote == XF_ONNX_WROTE_INPUT ? "model" : "file unchanged");
    return 0;
}

static const char *verdict_name(xf_arbiter_verdict v)
{
    switch (v) {
    case XF_ARBITER_INPUT: return "the input";
    case XF_ARBITER_TIMED: return "not faster beyond the noise";
    case XF_ARBITER_CHOSEN: return "fastest: written";
    case XF_ARBITER_DUPLICATE: return "same model as one above";
    case XF_ARBITER_WRONG: return "computes something else (target or interpreter): dropped";
    case XF_ARBITER_UNCONFIRMED: return "fastest, not faster again in the confirming run";
    case XF_ARBITER_NOT_BUILT: return "this layout could not be made: not timed";
    case XF_ARBITER_NOT_TIMED: return "not timed: over the memory limit, or out of budget";
    default: return "fastest, but its outputs differ in the target: dropped";
    }
}

/* The arbiter's table and the latency in the target before and after. */
static void print_target(run_state *s)
{
    const xf_arbiter_result *a = &s->arb;
    const xf_target_timing *out = &a->e[a->chosen].t;
    printf("target latency:  %.4f ms -> %.4f ms (x%.3f, 95%% interval [%.3f, %.3f]), %s\n",
           a->e[a->chosen].input_ms, out->median_ms, out->ratio, out->lo, out->hi,
           xf_target_identity(s->target));
    printf("target noise:    a second session of the input: x%.3f +- %.3f over %d rounds\n",
           a->self.ratio, a->self.noise, a->rounds);
    char shared[32], est[32];
    printf("target memory:   the input's weights (%s) shared by every session; %d candidate%s "
           "at a time beside the input and its self check (%d sessions), estimated at most %s\n",
           xf_bytes_str((double)a->shared_bytes, shared, sizeof shared), a->racing,
           a->racing == 1 ? "" : "s", a->racing + 2,
           xf_bytes_str(a->mem_estimate, est, sizeof est));
    if (a->refused[0]) printf("target refused:  %s\n", a->refused);
    char name_buf[32];
    printf("arbiter:         %d models looked at in %.1f s", a->n, a->seconds);
    if (a->budget_s > 0)
        printf(" (budget %.0f s%s)", a->budget_s,
               a->budget_hit ? ", reached: it cut the timing" : "");
    printf(", cheapest first on the cost model%s:\n",
           s->n_searches > 1 ? " (cand 1:N: candidate N of the search with scalings kept)" : "");
    if (a->n_untimed > 0)
        printf("budget:          %d candidate%s not looked at: the budget ran out "
               "(--target-budget)\n",
               a->n_untimed, a->n_untimed == 1 ? "" : "s");
    printf("  %-13s %10s %6s %7s %17s  %s\n", "model", "cost ms", "nodes", "ratio", "95% interval",
           "verdict");
    for (int i = 0; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        char name[32], ratio[16] = "-", iv[32] = "-";
        xf_arbiter_entry_name(e, name, sizeof name);
        if (e->t.runs > 0) {
            snprintf(ratio, sizeof ratio, "%.3f", e->t.ratio);
            snprintf(iv, sizeof iv, "[%.3f, %.3f]", e->t.lo, e->t.hi);
        }
        int slower = e->verdict == XF_ARBITER_TIMED && xf_target_verdict(&e->t, &e->self) > 0;
        printf("  %-13s %10.4f %6d %7s %17s  %s\n", name, e->cost_ms, e->n_nodes, ratio, iv,
               slower ? "slower beyond the noise" : verdict_name(e->verdict));
    }
    for (int i = 1; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        char name[32];
        xf_arbiter_entry_name(e, name, sizeof name);
        if (e->closer.runs > 0)
            printf("closer look:     %s, none faster in the run of all: x%.3f [%.3f, %.3f] "
                   "in a longer run against the input %s alone%s\n",
                   name, e->closer.ratio, e->closer.lo, e->closer.hi,
                   a->against_file ? "file" : "model",
                   i == a->chosen ? "" : ", not faster beyond the noise");
    }
    if (a->chosen > 0)
        printf("confirmed:       a second run against the input %s alone: x%.3f [%.3f, %.3f]\n",
               a->against_file ? "file" : "model", a->e[a->chosen].confirm.ratio,
               a->e[a->chosen].confirm.lo, a->e[a->chosen].confirm.hi);
    for (int i = 1; i < a->n; i++)
        if (a->e[i].verdict == XF_ARBITER_UNCONFIRMED && a->against_file)
            printf("not confirmed:   %s against the input file: x%.3f [%.3f, %.3f] (the input "
                   "as exported is what the race timed)\n",
                   (xf_arbiter_entry_name(&a->e[i], name_buf, sizeof name_buf), name_buf),
                   a->e[i].confirm.ratio, a->e[i].confirm.lo, a->e[i].confirm.hi);
    if (a->chosen == 0)
        printf("result:          no candidate is faster than the input in the target beyond the "
               "noise; the input model is written unchanged\n");
    else
        printf("target outputs:  max |d| %.3g of the largest |output| (chosen vs input, both in "
               "the target)\n",
               a->max_rel);
}

static void print_report(const cli_options *o, run_state *s, const xf_check_result *chk,
                         double t_search)
{
    /* the search whose candidate is written (the first without the target) */
    const xf_model_search *ms = &s->ms[s->target ? s->arb.e[s->arb.chosen].search : 0];
    const xf_search_result *r = &ms->res;
    const xf_finish_stats *fs = &s->oc.finish;
    double before = s->oc.cost_before, after = s->oc.cost_after;
    for (int i = 0; i < s->n_searches; i++) {
        const xf_search_result *ri = &s->ms[i].res;
        /* which preparation, when there were two */
        const char *prep = s->n_searches == 1 ? "" : i == 0 ? "scalings moved" : "scalings kept",
                   *lpar = *prep ? " (" : "", *rpar = *prep ? ")" : "";
        if (o->agent == CLI_AGENT_SEARCH)
            printf("search:          %s%s%s%s, %lld graphs expanded, %lld distinct seen, %.2f s\n",
                   xf_search_kind_name(o->search), lpar, prep, rpar, (long long)ri->expanded,
                   (long long)ri->seen, s->n_searches == 1 ? t_search : ri->seconds);
        else
            printf("optimisation:    %s, %lld environment steps, %.2f s\n",
                   o->agent == CLI_AGENT_PPO ? "ppo" : "wm", (long long)ri->expanded, t_search);
        printf("search cost:     %.4f ms -> %.4f ms (%+.2f%%, the prepared working graph%s%s)\n",
               ri->initial_ms, ri->best_ms,
               ri->initial_ms > 0 ? 100.0 * (ri->best_ms - ri->initial_ms) / ri->initial_ms : 0.0,
               *prep ? ", " : "", prep);
    }
    printf("cost:            %.4f ms -> %.4f ms (%+.2f%%, the models as written)\n", before, after,
           before > 0 ? 100.0 * (after - before) / before : 0.0);
    if (s->fused) {
        xf_fused_cost_stats fst;
        xf_fused_cost_get_stats(s->fused, &fst);
        printf("fused regions:   %lld costed: %lld timed in the target (%.1f s), %lld from the "
               "cache, %lld by the operator model%s%s\n",
               (long long)fst.lookups, (long long)fst.measured, fst.measure_s,
               (long long)fst.from_cache, (long long)fst.fallbacks, fst.fallbacks ? ": " : "",
               fst.last_fallback);
    }
    if (s->oc.kept_original && !s->target)
        printf("result:          no cheaper model found; the input model is written unchanged\n");
    printf("nodes:           %d -> %d (folded %d weight-only nodes, %d conv biases re-fused)\n",
           s->model.n_nodes, s->finished.n_nodes, fs->folded_nodes, fs->fused_bias);
    if (chk->max_abs >= 0)
        printf("max output err:  %.3g abs, %.3g rel (tolerance %.3g + %.3g*|ref|)\n", chk->max_abs,
               chk->max_rel, o->atol, o->rtol);
    else
        printf("max output err:  not checked\n");
    /* with the target, its latency is the one measured (--latency asks for both) */
    if (o->latency == 2 || (o->latency == 1 && !s->target)) {
        xf_error err = {0};
        double lat_before = 0, lat_after = 0, spread = 0;
        if (xf_agent_latency_pair(s->lat_cm, &s->model, &s->finished, &lat_before, &lat_after,
                                  &spread, &err))
            printf("latency:         not measured: %s\n", err.msg);
        else {
            double change = lat_before > 0 ? (lat_after - lat_before) / lat_before : 0.0;
            printf("latency:         %.4f ms -> %.4f ms (%+.2f%%, %s, best of 5 alternating "
                   "10-run medians)\n",
                   lat_before, lat_after, 100.0 * change, xf_cost_identity(s->lat_cm));
            printf("latency noise:   medians of one model %.1f%% apart%s\n", 100.0 * spread,
                   fabs(change) <= spread ? ": the change is within the noise" : "");
        }
    }
    if (s->target) print_target(s);
    const xf_prepare_stats *ps = xf_env_prepare_stats(ms->env);
    if (s->oc.kept_original) {
        printf("rules applied:   0 (the search's %d rewrites did not pay off as written%s)\n",
               r->n_applied, s->target ? " in the target" : "");
        cli_print_made_by(o, ms, NULL, ps, 0);
    } else if (s->target && r->n_candidates > 0) {
        const xf_search_candidate *c = &r->candidates[s->arb.e[s->arb.chosen].candidate];
        xf_search_result view = *r;
        view.n_applied = c->n_applied;
        view.applied = c->applied;
        cli_print_applied(ms, &view);
        cli_print_made_by(o, ms, &view, ps, s->arb.e[s->arb.chosen].unbatched);
    } else {
        cli_print_applied(ms, r);
        cli_print_made_by(o, ms, r, ps, 0);
    }
    int n_sym = xf_onnx_dynamic_count(s->dyn);
    for (int i = 0; i < n_sym; i++)
        if (s->written.wrote == XF_ONNX_WROTE_INPUT_FILE)
            printf("symbolic dim:    %s kept (the input file as it is)\n",
                   xf_onnx_dynamic_name(s->dyn, i));
        else if (xf_onnx_dynamic_fixed(s->dyn, i))
            printf("symbolic dim:    %s written FIXED at %lld: %s\n",
                   xf_onnx_dynamic_name(s->dyn, i), (long long)xf_onnx_dynamic_size(s->dyn, i, 0),
                   xf_onnx_dynamic_fixed(s->dyn, i));
        else
            printf("symbolic dim:    %s kept, checked at %lld, %lld, %lld\n",
                   xf_onnx_dynamic_name(s->dyn, i), (long long)xf_onnx_dynamic_size(s->dyn, i, 0),
                   (long long)xf_onnx_dynamic_size(s->dyn, i, 1),
                   (long long)xf_onnx_dynamic_size(s->dyn, i, 2));
    if (s->written.why[0])
        printf("result:          the optimised model fails a check (%s): the input %s is written "
               "instead\n",
               s->written.why,
               s->written.wrote == XF_ONNX_WROTE_INPUT ? "model" : "file, unchanged,");
    if (s->written.n_points > 1 && s->written.worst.max_abs >= 0)
        printf("sizes check:     max output err %.3g abs, %.3g rel over the three sizes\n",
               s->written.worst.max_abs, s->written.worst.max_rel);
    else if (s->written.n_points > 1)
        printf("sizes check:     read back at the three sizes (outputs not compared: --no-check)\n");
    else if (s->written.wrote == XF_ONNX_WROTE_INPUT_FILE && n_sym > 0)
        printf("sizes check:     none needed: the input file is written as it is\n");
    printf("written:         %s\n", o->output);
    struct rusage ru;
    char peak[32], w[32];
    double weights = (double)xf_graph_param_bytes(&s->model);
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("resources:       %.1f s, peak memory %s (%.2fx the model's weights, %s)\n",
               xf_clock_now() - s->t_start,
               xf_bytes_str((double)ru.ru_maxrss * 1024.0, peak, sizeof peak),
               weights > 0 ? (double)ru.ru_maxrss * 1024.0 / weights : 0.0,
               xf_bytes_str(weights, w, sizeof w));
    if (xf_cost_disturbed(s->cm) > 0)
        printf("cost noise:      %lld of %lld kernel measurements disturbed by other processes "
               "in every attempt (not cached; at threads > 1 capped by one thread's time)\n",
               (long long)xf_cost_disturbed(s->cm), (long long)xf_cost_measurements(s->cm));
    if (s->written.data_location[0])
        printf("external data:   %s (%llu bytes, next to the model)\n", s->written.data_location,
               (unsigned long long)s->written.data_bytes);
}

int main(int argc, char **argv)
{
    cli_options o;
    int rc = cli_parse(argc, argv, &o);
    if (rc < 0) return 0;
    if (rc) return rc;
    /* no output may be one of the files this run reads (the cost cache is
     * added as it opens) */
    xf_error perr;
    if (xf_outfile_protect(o.model, "the input model", &perr) != XF_OK ||
        xf_outfile_protect(o.rules, "the rules database", &perr) != XF_OK ||
        xf_outfile_protect(o.load, "the checkpoint loaded", &perr) != XF_OK) {
        fprintf(stderr, "rlflow-agent: %s\n", perr.msg);
        return 2;
    }
    char data[4096] = ""; /* the external data file, next to the output */
    if (o.external_data && o.output) {
        const char *slash = strrchr(o.output, '/');
        snprintf(data, sizeof data, "%.*s%s", slash ? (int)(slash - o.output + 1) : 0, o.output,
                 o.external_data);
    }
    /* the outputs can be written: checked now, not after the search or the
     * training (a checkpoint path in a missing directory failed only then) */
    if ((o.output && xf_outfile_probe(o.output, &perr) != XF_OK) ||
        (data[0] && xf_outfile_check(data, &perr) != XF_OK) ||
        (o.save && xf_outfile_probe(o.save, &perr) != XF_OK)) {
        fprintf(stderr, "rlflow-agent: %s\n", perr.msg);
        return 2;
    }
    run_state s;
    memset(&s, 0, sizeof s);
    xf_graph_init(&s.model);
    xf_graph_init(&s.finished);
    for (int i = 0; i < 2; i++) xf_model_search_init(&s.ms[i]);
    s.t_start = xf_clock_now();
    rc = load_inputs(&o, &s);
    double t0 = xf_clock_now();
    if (!rc) rc = search(&o, &s);
    double t_search = xf_clock_now() - t0;
    xf_check_result chk = {0};
    if (!rc) rc = finish_and_write(&o, &s, &chk);
    if (!rc) print_report(&o, &s, &chk, t_search);
    if (!rc && s.learned.save_failed) rc = 1; /* the model is written, the checkpoint is not */
    run_free(&s);
    return rc;
}
