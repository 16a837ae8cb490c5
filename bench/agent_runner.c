/*
 * agent_runner.c — what bench_optimize, bench_agents and bench_dynamic
 * share (see agent_runner.h): the optimisation is the library call
 * (xf_optimize_file), in-process, and its report's figures become a row.
 */
#include "agent_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char scratch_buf[1024];

const char *bench_scratch(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_buf, sizeof scratch_buf, "%s/%s", tmp && *tmp ? tmp : "/tmp", name);
    mkdir(scratch_buf, 0755);
    return scratch_buf;
}

void bench_make_rules(const char *scratch, const char *xfergen, const char *xferverify,
                      char *path, size_t n)
{
    bench_make_rules_vocab(scratch, xfergen, xferverify, "taso", "rules.db", path, n);
}

void bench_make_rules_vocab(const char *scratch, const char *xfergen, const char *xferverify,
                            const char *vocab, const char *file, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", scratch, file);
    /* kept from an earlier run only when made by these very tools: a
     * rebuilt xfergen or xferverify (other vocabulary, other axioms) makes
     * it again rather than benching stale rules */
    struct stat st, gen, ver;
    if (stat(path, &st) == 0) {
        int fresh = stat(xfergen, &gen) == 0 && stat(xferverify, &ver) == 0 &&
                    st.st_mtime >= gen.st_mtime && st.st_mtime >= ver.st_mtime;
        if (fresh) {
            fprintf(stderr, "bench: the %s rules of an earlier run: %s\n", vocab, path);
            return;
        }
        fprintf(stderr, "bench: %s is older than %s or %s: made again\n", path, xfergen,
                xferverify);
    }
    /* made under another name and renamed when verified, so an interrupted
     * run never leaves a half-verified rules.db behind */
    char part[1100], cmd[4096];
    snprintf(part, sizeof part, "%s.part", path);
    remove(part);
    snprintf(cmd, sizeof cmd,
             "'%s' --vocab %s --max-ops 3 -o '%s' > /dev/null && '%s' -j 2 '%s' > /dev/null",
             xfergen, vocab, part, xferverify, part);
    fprintf(stderr, "bench: generating and verifying the %s rules (a few minutes)\n", vocab);
    if (system(cmd) != 0 || rename(part, path) != 0) {
        remove(part);
        fprintf(stderr, "bench: making the rules failed: %s\n", cmd);
        exit(1);
    }
}

void bench_field(const char *line, const char *key, char *dst, size_t n)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0) return;
    const char *v = line + k;
    while (*v == ' ') v++;
    snprintf(dst, n, "%s", v);
    dst[strcspn(dst, "\n")] = '\0';
}

static void bench_note(void *user, xf_optimize_note_kind kind, const char *text)
{
    (void)user;
    if (kind == XF_OPTIMIZE_WARN) fprintf(stderr, "  optimize: %s\n", text);
}

/* The row's texts from the report. */
static void fill_row(const xf_optimize_options *o, const xf_optimize_report *r, bench_row *row)
{
    snprintf(row->model, sizeof row->model,
             "%d nodes, %d after preparation (%d layer norms fused, %d scalings as scalar_mul)",
             r->nodes_before, r->nodes_prepared, r->prep.fused_layernorms, r->prep.scalar_muls);
    snprintf(row->applicable, sizeof row->applicable, "%d rules at %d locations", r->applicable,
             r->locations);
    double b = r->cost_before, a = r->cost_after;
    snprintf(row->cost, sizeof row->cost, "%.4f ms -> %.4f ms (%+.2f%%, the models as written)", b,
             a, b > 0 ? 100.0 * (a - b) / b : 0.0);
    if (r->latency_state > 0) {
        double lb = r->latency_before, la = r->latency_after;
        snprintf(row->latency, sizeof row->latency, "%.4f ms -> %.4f ms (%+.2f%%, %s)", lb, la,
                 lb > 0 ? 100.0 * (la - lb) / lb : 0.0, r->latency_identity);
        snprintf(row->noise, sizeof row->noise, "medians of one model %.1f%% apart",
                 100.0 * r->latency_spread);
    } else if (r->latency_state < 0) {
        snprintf(row->latency, sizeof row->latency, "not measured: %s", r->latency_error);
    }
    if (r->check.max_abs >= 0)
        snprintf(row->err, sizeof row->err, "%.3g abs, %.3g rel", r->check.max_abs,
                 r->check.max_rel);
    else
        snprintf(row->err, sizeof row->err, "not checked");
    const xf_optimize_search_figures *f = &r->search[0];
    if (o->agent == XF_OPTIMIZE_SEARCH)
        snprintf(row->search, sizeof row->search,
                 "%s, %lld graphs expanded, %lld distinct seen, %.2f s",
                 xf_search_kind_name(o->search), (long long)f->expanded, (long long)f->seen,
                 r->search_seconds);
    else
        snprintf(row->search, sizeof row->search, "%s, %lld environment steps, %.2f s",
                 o->agent == XF_OPTIMIZE_PPO ? "ppo" : "wm", (long long)f->expanded,
                 r->search_seconds);
    if (o->agent == XF_OPTIMIZE_SEARCH) return;
    const xf_rl_learned *l = &r->learned;
    if (r->agent_untrained) {
        snprintf(row->agent, sizeof row->agent, "not trained: no action can match this model");
    } else if (o->agent == XF_OPTIMIZE_PPO) {
        snprintf(row->agent, sizeof row->agent, "ppo, %lld steps (%.2f ms each), %d actions of %d",
                 (long long)f->expanded,
                 f->expanded > 0 ? 1e3 * f->seconds / (double)f->expanded : 0.0, l->actions,
                 r->actions);
    } else {
        snprintf(row->agent, sizeof row->agent,
                 "wm, %d rounds, %lld real steps, %lld dream steps, tau %.2f, %d actions of %d",
                 l->wm.rounds, (long long)l->wm.real_steps, (long long)l->wm.dream_steps, o->tau,
                 l->actions, r->actions);
        snprintf(row->world, sizeof row->world,
                 "loss %.3f -> %.3f; held out: z NLL/dim %.3f, reward RMSE %.2f%% (RMS %.2f%%); "
                 "return %+.2f%% in the dream vs %+.2f%% real; step %.1f us in the dream vs "
                 "%.1f us real (+%.1f us encoding)",
                 l->wm.wm_loss_first, l->wm.wm_loss_last, l->wm.heldout_nll,
                 l->wm.heldout_reward_rmse, l->wm.reward_rms, l->wm.dream_reward,
                 l->wm.real_return, l->wm.wm_step_us, l->wm.real_step_us, l->wm.encode_us);
    }
}

bench_row bench_optimize_model(const xf_optimize_options *opt, const char *model,
                               const char *scratch, xf_optimize_report *keep)
{
    bench_row row;
    memset(&row, 0, sizeof row);
    xf_optimize_options o = *opt;
    o.note = bench_note;
    char out[4096];
    snprintf(out, sizeof out, "%s/out.onnx", scratch);
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    if (xf_optimize_file(model, out, &o, &r, &err) != XF_OK) {
        fprintf(stderr, "  optimize: %s\n", err.msg);
    } else {
        fill_row(&o, &r, &row);
        row.ok = 1;
        if (keep) { /* the caller's now */
            *keep = r;
            return row;
        }
    }
    xf_optimize_report_free(&r);
    return row;
}

void bench_print_row(const char *name, const char *method, const bench_row *r)
{
    printf("%-22s %-8s %s\n", name, method, r->ok ? "" : "FAILED (see above)");
    if (r->ok) {
        printf("    model      %s\n    applicable %s\n    cost       %s\n", r->model,
               r->applicable, r->cost);
        if (r->latency[0]) printf("    latency    %s\n", r->latency);
        if (r->noise[0]) printf("    noise      %s\n", r->noise);
        printf("    error      %s\n    run        %s\n", r->err, r->search);
        if (r->agent[0]) printf("    agent      %s\n", r->agent);
        if (r->world[0]) printf("    world      %s\n", r->world);
    }
    fflush(stdout);
}

int bench_thread_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 256 || (*end && *end != ',')) return 0;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? 0 : n;
}

void bench_default_rules(const char *tools_dir, char *path, size_t n)
{
    const char *dirs[1] = {tools_dir};
    xf_default_rules_options d;
    xf_default_rules_options_init(&d);
    d.dirs = dirs;
    d.n_dirs = 1;
    xf_default_rules_origin origin;
    xf_error err = {0};
    if (xf_default_rules_find(&d, path, n, &origin, &err)) {
        fprintf(stderr, "bench: the default rules: %s\n", err.msg);
        exit(1);
    }
}

double bench_load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static void env_die(const char *what, const xf_error *err)
{
    fprintf(stderr, "bench: %s: %s\n", what, err->msg);
    exit(1);
}

void bench_analytic_env(const xf_graph *model, const char *rules, int max_steps, bench_env *out)
{
    xf_error err;
    memset(out, 0, sizeof *out);
    xf_prepare_options po = xf_prepare_options_default();
    if (xf_agent_prepare(model, &po, &out->prep, NULL, &err)) env_die("prepare", &err);
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.derived = 1;
    ro.restrict_to = &out->prep;
    if (xf_ruleset_load(rules, &ro, &out->rs, &err)) env_die(rules, &err);
    xf_cost_options co = xf_cost_options_default();
    co.backend = XF_COST_ANALYTIC;
    co.cache_path = NULL;
    co.peak_gflops = 100;
    co.bandwidth_gbps = 10;
    co.kernel_overhead_us = 2;
    if (xf_cost_open(&co, &out->cm, &err)) env_die("cost model", &err);
    xf_env_options eo = xf_env_options_default();
    eo.prepare = po;
    if (max_steps > 0) eo.max_steps = max_steps;
    out->max_locations = eo.max_locations;
    if (xf_env_create(out->rs, out->cm, model, &eo, &out->e, &err)) env_die("environment", &err);
}

void bench_env_free(bench_env *b)
{
    xf_env_free(b->e);
    xf_cost_close(b->cm);
    xf_ruleset_free(b->rs);
    xf_graph_free(&b->prep);
    memset(b, 0, sizeof *b);
}

int bench_race_files(const char *name, const char *const *files, int n, int threads, int rounds,
                     const xf_onnx_options *load, xf_target_timing *res, xf_target_timing *self,
                     char *identity, size_t identity_n)
{
    xf_graph g[BENCH_RACE_MAX];
    const xf_graph *gp[BENCH_RACE_MAX];
    const char *fp[BENCH_RACE_MAX];
    int slot[BENCH_RACE_MAX]; /* files[i]'s place among the loaded, -1: not loaded */
    int m = 0, rc = 1;
    xf_error err = {0};
    if (n < 2 || n > BENCH_RACE_MAX) {
        printf("%-22s direct race: %d models given (2..%d)\n", name, n, BENCH_RACE_MAX);
        return 1;
    }
    memset(res, 0, (size_t)n * sizeof *res);
    for (int i = 0; i < n; i++) {
        slot[i] = -1;
        xf_graph_init(&g[m]);
        if (xf_onnx_load(files[i], load, &g[m], &err) != XF_OK) {
            printf("%-22s direct race: %s: %s\n", name, files[i], err.msg);
            xf_graph_free(&g[m]);
            if (i == 0) return 1; /* no reference: no race */
            continue;
        }
        fp[m] = files[i];
        gp[m] = &g[m];
        slot[i] = m++;
    }
    xf_target_timing got[BENCH_RACE_MAX];
    xf_target *t = NULL;
    xf_target_timing_options o;
    memset(&o, 0, sizeof o);
    o.seed = 1;
    o.rounds = rounds;
    o.self_check = 1;
    o.files = fp;
    xf_target_options to = xf_target_default_options();
    to.threads = threads;
    xf_status st = xf_target_open(&to, &t, &err);
    if (!st && m > 1) st = xf_target_compare(t, gp, m, &o, got, self, &err);
    if (st) {
        printf("%-22s direct race: %s\n", name, err.msg);
    } else if (m > 1) {
        for (int i = 0; i < n; i++)
            if (slot[i] >= 0) res[i] = got[slot[i]];
        if (identity) snprintf(identity, identity_n, "%s", xf_target_identity(t));
        rc = 0;
    }
    xf_target_close(t);
    for (int k = 0; k < m; k++) xf_graph_free(&g[k]);
    return rc;
}
