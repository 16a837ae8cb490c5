/*
 * train.c — one learning agent trained over many models and saved
 * (optimize.h, xf_train_agent; `rlflow-agent train`): the models named
 * (files, or directories searched for *.onnx), each loaded as
 * xf_optimize_file loads it (symbolic dims sized the same way, a tied
 * embedding held once, prepared with the same defaults, the rules that can
 * match it), one environment per model on one cost model, and the training
 * loop of agent/rl (xf_rl_train_many) over them. A pre-trained agent then
 * optimises a model it never saw with `--load` (xf_optimize_file), in
 * seconds and without training.
 *
 * Every model is held at once (an environment per model); the training set
 * is meant to be many small and mid-sized models, not several BERT-bases.
 * Errors name the model file (or directory) that failed.
 */
#include "optimize_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

xf_train_options xf_train_options_default(void)
{
    xf_train_options o;
    memset(&o, 0, sizeof o);
    o.agent = XF_OPTIMIZE_PPO;
    o.seconds = 600;
    o.seed = 1;
    o.tau = 1.0f;
    o.locations = xf_env_options_default().max_locations;
    o.backend = XF_COST_ONEDNN;
    o.threads = 1;
    o.rule_status = xf_ruleset_options_default().status;
    o.derived_rules = 1;
    o.prepare = xf_prepare_options_default();
    return o;
}

void xf_train_report_init(xf_train_report *r)
{
    memset(r, 0, sizeof *r);
    xf_actions_init(&r->stats.act);
}

void xf_train_report_free(xf_train_report *r)
{
    for (int i = 0; i < r->n_models; i++) xf_free(r->models[i]);
    xf_free(r->models);
    xf_free(r->nodes);
    xf_free(r->rules);
    xf_rl_train_stats_free(&r->stats);
    xf_train_report_init(r);
}

/* ----------------------------------------------------------- model files */

static xf_status add_path(xf_train_report *r, int *cap, const char *path, xf_error *err)
{
    if (r->n_models == *cap) {
        int nc = *cap ? 2 * *cap : 16;
        char **m = xf_realloc(r->models, (size_t)nc * sizeof *m);
        if (!m) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing models");
        r->models = m;
        *cap = nc;
    }
    r->models[r->n_models] = xf_strdup(path);
    if (!r->models[r->n_models])
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing models");
    r->n_models++;
    return XF_OK;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.onnx under dir (models written by rlflow, *.opt.onnx, left
 * out), depth-first; `depth` bounds the descent. */
static xf_status scan(xf_train_report *r, int *cap, const char *dir, int depth, xf_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return XF_FAIL(err, XF_ERR_IO, "cannot read the model directory '%s': %s", dir,
                       strerror(errno));
    xf_status st = XF_OK;
    struct dirent *e;
    char path[4096];
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode) && depth > 0) st = scan(r, cap, path, depth - 1, err);
        else if (S_ISREG(sb.st_mode) && ends_with(e->d_name, ".onnx") &&
                 !ends_with(e->d_name, ".opt.onnx"))
            st = add_path(r, cap, path, err);
    }
    closedir(d);
    return st;
}

static xf_status list_models(const xf_train_options *o, xf_train_report *r, xf_error *err)
{
    int cap = 0;
    for (int i = 0; i < o->n_models; i++) {
        struct stat sb;
        if (stat(o->models[i], &sb) != 0)
            return XF_FAIL(err, XF_ERR_IO, "cannot read '%s': %s", o->models[i], strerror(errno));
        int before = r->n_models;
        xf_status st = S_ISDIR(sb.st_mode) ? scan(r, &cap, o->models[i], 3, err)
                                           : add_path(r, &cap, o->models[i], err);
        if (st) return st;
        if (r->n_models == before)
            return XF_FAIL(err, XF_ERR_IO, "no ONNX model (*.onnx) under '%s'", o->models[i]);
        qsort(r->models + before, (size_t)(r->n_models - before), sizeof *r->models, by_name);
    }
    return XF_OK;
}

/* --------------------------------------------------------------- loading */

/* One model as xf_optimize_file loads it: graph, its search (prepared,
 * rules, environment). */
typedef struct one_model {
    xf_graph input;
    xf_model_search ms;
} one_model;

static xf_status load_one(const xf_train_options *o, const char *path, xf_cost_model *cm,
                          one_model *m, int *nodes, int *rules, xf_error *err)
{
    xf_onnx_options io = xf_onnx_default_options();
    xf_onnx_sizes *sizes = NULL;
    xf_status st = xf_onnx_sizes_choose(path, &io, NULL, &sizes, err);
    if (!st) {
        io = xf_onnx_sizes_options(sizes);
        st = xf_onnx_load(path, &io, &m->input, err);
    }
    xf_onnx_sizes_free(sizes);
    int tied = 0;
    if (!st) st = xf_gather_tied(&m->input, &tied, err);
    if (!st) st = xf_model_search_prepare(&m->ms, &m->input, &o->prepare, err);
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.status = o->rule_status;
    ro.derived = o->derived_rules;
    ro.max_size = o->max_rule_size;
    if (!st) st = xf_model_search_rules(&m->ms, o->rules, &ro, 1, err);
    xf_env_options eo = xf_env_options_default();
    eo.max_locations = o->locations;
    if (o->target_layout) {
        eo.layout_view_ms = XF_ORT_VIEW_MS;
        eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    }
    if (!st) {
        *rules = xf_ruleset_count(m->ms.rs);
        *nodes = m->input.n_nodes;
        st = xf_model_search_env(&m->ms, cm, &eo, err);
    }
    if (st) xf_error_prefix(err, "%s", path);
    return st;
}

static xf_status open_cost(const xf_train_options *o, char *cache_buf, size_t n,
                           xf_cost_model **cm, xf_error *err)
{
    xf_cost_options co = xf_cost_options_default();
    co.backend = o->backend;
    co.threads = o->threads;
    co.peak_gflops = o->peak_gflops;
    co.bandwidth_gbps = o->bandwidth_gbps;
    co.cache_path = xf_cost_cache_path(o->cache, cache_buf, n);
    return xf_cost_open(&co, cm, err);
}

xf_status xf_train_agent(const xf_train_options *o, xf_train_report *r, xf_error *err)
{
    xf_train_report_free(r);
    if (!o->rules || !*o->rules || !o->save || !*o->save || o->n_models < 1)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "training needs a rules database, a checkpoint to save (--save) and at "
                       "least one model (--models)");
    if (o->agent == XF_OPTIMIZE_SEARCH)
        return XF_FAIL(err, XF_ERR_INVALID, "training needs a learning agent (--agent ppo or wm)");
    int mark = xf_outfile_protect_mark();
    xf_status st = xf_outfile_probe(o->save, err);
    if (!st) st = xf_outfile_protect(o->rules, "the rules database", err);
    if (!st) st = list_models(o, r, err);
    for (int i = 0; !st && i < r->n_models; i++)
        st = xf_outfile_protect(r->models[i], "a model trained on", err);
    one_model *m = NULL;
    xf_env **envs = NULL;
    xf_cost_model *cm = NULL;
    char cache_buf[4096];
    if (!st) {
        m = xf_calloc((size_t)r->n_models, sizeof *m);
        envs = xf_calloc((size_t)r->n_models, sizeof *envs);
        r->nodes = xf_calloc((size_t)r->n_models, sizeof *r->nodes);
        r->rules = xf_calloc((size_t)r->n_models, sizeof *r->rules);
        if (!m || !envs || !r->nodes || !r->rules)
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %d models", r->n_models);
    }
    for (int i = 0; m && i < r->n_models; i++) {
        xf_graph_init(&m[i].input);
        xf_model_search_init(&m[i].ms);
    }
    if (!st) st = open_cost(o, cache_buf, sizeof cache_buf, &cm, err);
    if (!st) snprintf(r->cost_identity, sizeof r->cost_identity, "%s", xf_cost_identity(cm));
    double t0 = xf_clock_now();
    for (int i = 0; !st && i < r->n_models; i++) {
        if (o->note) {
            char line[4200];
            snprintf(line, sizeof line, "loading %d/%d: %s", i + 1, r->n_models, r->models[i]);
            o->note(o->user, XF_OPTIMIZE_STATUS, line);
        }
        st = load_one(o, r->models[i], cm, &m[i], &r->nodes[i], &r->rules[i], err);
        if (!st) envs[i] = m[i].ms.env;
    }
    r->load_seconds = xf_clock_now() - t0;
    if (!st) {
        xf_rl_train_options to;
        memset(&to, 0, sizeof to);
        to.wm = o->agent == XF_OPTIMIZE_WM;
        to.cm = cm;
        to.max_locations = o->locations;
        to.seed = o->seed;
        to.tau = o->tau;
        to.max_seconds = o->seconds;
        to.max_env_steps = o->steps;
        to.slice_steps = o->slice_steps;
        to.warmup_steps = o->warmup_steps;
        to.max_actions = o->max_actions;
        to.save = o->save;
        to.progress = o->progress;
        to.progress_user = o->user;
        st = xf_rl_train_many(envs, (const char *const *)r->models, r->n_models, &to, &r->stats,
                              err);
        if (st) xf_error_prefix(err, "training the agent");
    }
    for (int i = 0; m && i < r->n_models; i++) {
        xf_model_search_free(&m[i].ms);
        xf_graph_free(&m[i].input);
    }
    xf_free(m);
    xf_free(envs);
    xf_cost_close(cm);
    xf_outfile_protect_release(mark);
    return st;
}
