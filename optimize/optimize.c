/*
 * optimize.c — xf_optimize_file: the options in effect (defaults, what
 * --passes rules and expert imply, the thread count with the target), the three
 * steps (load.c, search.c, finish.c) and what is freed after; the options'
 * defaults, which rlflow-agent's parser and any other caller start from;
 * the notes; the names of the arbiter's verdicts.
 */
#include "optimize_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

xf_optimize_options xf_optimize_options_default(void)
{
    xf_optimize_options o;
    memset(&o, 0, sizeof o);
    xf_search_options so = xf_search_options_default();
    o.agent = XF_OPTIMIZE_WM;
    o.search = XF_SEARCH_TASO;
    o.tau = 1.0;
    o.samples = XF_OPTIMIZE_SAMPLES;
    o.guide = XF_OPTIMIZE_GUIDE;
    o.backend = XF_COST_ONEDNN;
    o.candidates = xf_arbiter_options_default().max_models;
    o.target_every = 50;
    o.target_budget = 90;
    o.target_budget_max = 300;
    o.alpha = so.alpha;
    o.locations = so.max_locations;
    o.seed = 1;
    o.rule_status = xf_ruleset_options_default().status;
    o.derived_rules = 1;
    o.prepare = xf_prepare_options_default();
    o.scalings_both = 1;
    o.passes = XF_OPTIMIZE_BOTH;
    o.lookahead = 1;
    o.polish = 1;
    o.check = 1;
    o.latency = 1;
    o.rtol = XF_TOL_MODEL.rtol;
    o.atol = XF_TOL_MODEL.atol;
    return o;
}

void opt_note(const opt_run *s, xf_optimize_note_kind kind, const char *fmt, ...)
{
    if (!s->o.note) return;
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    s->o.note(s->o.user, kind, text);
}

const char *xf_optimize_verdict_name(xf_arbiter_verdict v)
{
    switch (v) {
    case XF_ARBITER_INPUT: return "the input";
    case XF_ARBITER_TIMED: return "not faster beyond the noise";
    case XF_ARBITER_CHOSEN: return "fastest: written";
    case XF_ARBITER_DUPLICATE: return "same model as one above";
    case XF_ARBITER_WRONG: return "computes something else or does not run: dropped";
    case XF_ARBITER_UNCONFIRMED: return "fastest, not faster again in the confirming run";
    case XF_ARBITER_NOT_BUILT: return "this layout could not be made: not timed";
    case XF_ARBITER_NOT_TIMED: return "not timed: over the memory limit, or out of budget";
    case XF_ARBITER_NOT_WRITABLE: return "cannot be written keeping the symbolic dims: dropped";
    case XF_ARBITER_RUNNER_UP: return "faster in the final, another written";
    default: return "its outputs in the target differ from the input's: dropped";
    }
}

/* The options in effect: what the passes imply, the thread count. */
static xf_status effective(opt_run *s, const xf_optimize_options *given, xf_error *err)
{
    s->o = given ? *given : xf_optimize_options_default();
    xf_optimize_options *o = &s->o;
    if (o->passes == XF_OPTIMIZE_EXPERT) /* the hand passes alone: an empty rule set */
        o->rules = NULL;
    else if (!o->rules || !*o->rules)
        return XF_FAIL(err, XF_ERR_INVALID, "no rules database given");
    if (o->agent == XF_OPTIMIZE_SEARCH && (o->save || o->load))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "--save/--load need a learning agent (--agent wm or ppo)");
    if (o->fused_cost && !o->target)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "--cost fused times regions in the target: give --target ort");
    if (o->passes == XF_OPTIMIZE_RULES) { /* no hand-written pass moves anything */
        o->prepare.narrow = 0;
        o->prepare.split_layout = 0;
        o->prepare.slice_selections = 1;
    }
    if (o->threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads = !o->target ? 1 : n < 1 ? 1 : n > 1 << 30 ? 1 << 30 : (int)n;
    }
    return XF_OK;
}

static void run_free(opt_run *s)
{
    for (int i = 0; i < 2; i++) xf_model_search_free(&s->ms[i]);
    xf_fused_cost_free(s->fused);
    xf_target_close(s->target);
    if (s->lat_cm != s->cm) xf_cost_close(s->lat_cm);
    xf_cost_close(s->cm);
    xf_graph_free(&s->finished);
    xf_graph_free(&s->input);
    xf_onnx_dynamic_free(s->dyn);
    xf_onnx_sizes_free(s->sizes);
}

xf_status xf_optimize_file(const char *model, const char *output, const xf_optimize_options *o,
                           xf_optimize_report *r, xf_error *err)
{
    xf_optimize_report_free(r);
    double t_start = xf_clock_now();
    int protected_mark = xf_outfile_protect_mark(); /* the files this call keeps safe */
    opt_run *s = xf_calloc(1, sizeof *s);
    if (!s) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory starting the optimisation");
    s->r = r;
    s->model = model;
    s->output = output;
    xf_graph_init(&s->input);
    xf_graph_init(&s->finished);
    for (int i = 0; i < 2; i++) xf_model_search_init(&s->ms[i]);
    xf_status st = XF_OK;
    if (!model || !*model || !output || !*output)
        st = XF_FAIL(err, XF_ERR_INVALID, "%s", !model || !*model ? "no model given" : "no output given");
    if (st || (st = effective(s, o, err))) r->input_error = 1;
    if (!st) st = opt_load(s, err);
    if (!st) st = opt_search(s, err);
    if (!st) st = opt_finish(s, err);
    r->seconds = xf_clock_now() - t_start;
    if (s->cm) {
        r->cost_measurements = xf_cost_measurements(s->cm);
        r->cost_disturbed = xf_cost_disturbed(s->cm);
        r->cost_shared = xf_cost_shared(s->cm);
    }
    run_free(s);
    xf_free(s);
    xf_outfile_protect_release(protected_mark); /* the next call registers its own */
    return st;
}
