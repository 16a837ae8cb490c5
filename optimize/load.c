/*
 * load.c — the first step of xf_optimize_file: the run's inputs kept from
 * being written over and its outputs probed before any work (a checkpoint
 * path in a missing directory failed only after the training), then the
 * model (at sizes chosen for its symbolic dims, its tied embedding held
 * once), the rules that can match it, the cost model (its cache protected
 * too), the target runtime and the fusion-aware cost. Every failure here
 * but the tied-embedding pass is the input's (r->input_error).
 */
#include "optimize_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static xf_status bad_input(opt_run *s, xf_status st)
{
    s->r->input_error = 1;
    return st;
}

/* No output may be one of the files this run reads (the cost cache is
 * added as it opens), and the outputs can be written: checked now. */
static xf_status guard_files(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_status st;
    if ((st = xf_outfile_protect(s->model, "the input model", err)) ||
        (st = xf_outfile_protect(o->rules, "the rules database", err)) ||
        (st = xf_outfile_protect(o->load, "the checkpoint loaded", err)))
        return st;
    if (o->external_data) {
        const char *slash = strrchr(s->output, '/');
        snprintf(s->data_path, sizeof s->data_path, "%.*s%s",
                 slash ? (int)(slash - s->output + 1) : 0, s->output, o->external_data);
    }
    if ((st = xf_outfile_probe(s->output, err)) ||
        (s->data_path[0] && (st = xf_outfile_check(s->data_path, err))) ||
        (o->save && (st = xf_outfile_probe(o->save, err))))
        return st;
    return XF_OK;
}

xf_status opt_load_rules(opt_run *s, int i, const xf_prepare_options *prepare, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.status = o->rule_status;
    ro.derived = o->derived_rules;
    ro.max_size = o->max_rule_size;
    xf_status st = xf_model_search_prepare(&s->ms[i], &s->input, prepare, err);
    if (st) {
        xf_error_prefix(err, "%s", s->model);
        return st;
    }
    return xf_model_search_rules(&s->ms[i], o->rules, &ro, !o->all_actions, err);
}

static xf_status load_model(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = o->n_dims;
    io.dim_names = o->dim_names;
    io.dim_values = o->dim_values;
    xf_status st = xf_onnx_sizes_choose(s->model, &io, o->data, &s->sizes, err);
    if (st) return bad_input(s, st);
    if (xf_onnx_sizes_said(s->sizes)[0])
        opt_note(s, XF_OPTIMIZE_WARN, "%s", xf_onnx_sizes_said(s->sizes));
    io = xf_onnx_sizes_options(s->sizes);
    /* the symbols first: its imports are over before the model is held */
    if ((st = xf_onnx_dynamic_open_file(s->model, &io, &s->dyn, err)) ||
        (st = xf_onnx_load(s->model, &io, &s->input, err)))
        return bad_input(s, st);
    if ((st = xf_gather_tied(&s->input, &s->r->tied, err))) return st;
    s->r->nodes_before = s->input.n_nodes;
    s->r->weight_bytes = xf_graph_param_bytes(&s->input);
    if (s->r->tied)
        opt_note(s, XF_OPTIMIZE_INFO,
                 "%d tied embedding%s read through the transposed copy the head uses (one copy "
                 "held)",
                 s->r->tied, s->r->tied == 1 ? "" : "s");
    return XF_OK;
}

static xf_status load_rules(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o; /* o->agent may follow the checkpoint */
    if (o->load && access(o->load, R_OK) != 0)
        return bad_input(s, XF_FAIL(err, XF_ERR_IO, "cannot read checkpoint '%s': %s", o->load,
                                    strerror(errno)));
    xf_status st0 = o->load ? opt_check_checkpoint(s, err) : XF_OK;
    if (st0) return bad_input(s, st0);
    s->n_searches = 1;
    xf_status st = opt_load_rules(s, 0, &o->prepare, err);
    if (st) return bad_input(s, st);
    const xf_ruleset *rs = s->ms[0].rs;
    if (o->rules && xf_ruleset_count(rs) + xf_ruleset_irrelevant(rs) == 0) {
        const char *why = NULL;
        int skipped = xf_ruleset_skipped(rs, &why);
        return bad_input(s, XF_FAIL(err, XF_ERR_INVALID,
                                    "%s has no %s rules the matcher can use (%d skipped%s%s); "
                                    "run 'xferverify %s' first",
                                    o->rules, o->rule_status == -1 ? "usable" : "proved", skipped,
                                    why ? ": " : "", why ? why : "", o->rules));
    }
    return XF_OK;
}

static xf_status load_costs(opt_run *s, xf_error *err)
{
    const xf_optimize_options *o = &s->o;
    xf_cost_options co = xf_cost_options_default();
    co.backend = o->backend;
    co.threads = o->threads;
    co.peak_gflops = o->peak_gflops;
    co.bandwidth_gbps = o->bandwidth_gbps;
    co.cache_path = xf_cost_cache_path(o->cache, s->cache_buf, sizeof s->cache_buf);
    /* the cache is checked against the inputs as it opens, then kept from
     * being written over itself */
    xf_status st;
    if ((st = xf_cost_open(&co, &s->cm, err)) ||
        (st = xf_outfile_protect(co.cache_path, "the cost cache", err)))
        return bad_input(s, st);
    snprintf(s->r->cost_identity, sizeof s->r->cost_identity, "%s", xf_cost_identity(s->cm));
    if (o->target) {
        xf_target_options to = xf_target_default_options();
        to.threads = o->threads;
        xf_error terr = {0};
        if (xf_target_open(&to, &s->target, &terr)) {
            snprintf(s->r->target_refused, sizeof s->r->target_refused, "%s", terr.msg);
            s->target = NULL;
        } else {
            s->r->target = 1;
            snprintf(s->r->target_identity, sizeof s->r->target_identity, "%s",
                     xf_target_identity(s->target));
        }
    }
    if (s->target && o->fused_cost) {
        opt_note(s, XF_OPTIMIZE_STATUS, "cost: timing ONNX Runtime's per-run overhead...");
        if ((st = xf_fused_cost_create(s->target, s->cm, NULL, &s->fused, err)))
            return bad_input(s, st);
        s->r->fused = 1;
        xf_fused_cost_get_stats(s->fused, &s->r->fused_stats);
        s->r->fused_overhead_ms = s->r->fused_stats.overhead_ms;
    } else if (o->fused_cost) {
        s->r->fused_refused = 1;
    }
    s->lat_cm = s->cm;
    if (o->latency && o->backend == XF_COST_ANALYTIC) {
        co.backend = XF_COST_ONEDNN;
        co.cache_path = NULL;
        if ((st = xf_cost_open(&co, &s->lat_cm, err))) {
            xf_error_prefix(err, "latency backend");
            s->lat_cm = s->cm;
            return bad_input(s, st);
        }
    }
    return XF_OK;
}

xf_status opt_load(opt_run *s, xf_error *err)
{
    xf_status st = guard_files(s, err);
    if (st) return bad_input(s, st);
    if ((st = load_model(s, err)) || (st = load_rules(s, err)) || (st = load_costs(s, err)))
        return st;
    return XF_OK;
}
