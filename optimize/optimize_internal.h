/*
 * optimize_internal.h — (private to optimize/) the state of one
 * xf_optimize_file call and its steps: loading (load.c), searching
 * (search.c), choosing, checking and writing (finish.c), the parts of the
 * report made from the run's objects (report.c) and the search's progress
 * kept for it (trace.c).
 */
#ifndef XF_OPTIMIZE_OPTIMIZE_INTERNAL_H
#define XF_OPTIMIZE_OPTIMIZE_INTERNAL_H

#include "optimize.h"
#include "target/target.h"

typedef struct opt_run {
    xf_optimize_options o; /* the options in effect (passes applied, threads set) */
    const char *model, *output;
    char data_path[4096];  /* the external data file, next to the output ("": none) */
    xf_optimize_report *r;
    xf_graph input, finished;
    /* ms[0]: the model prepared as asked, its rules, environment and search;
     * ms[1]: prepared the other way (xf_prepare_alternative), searched too
     * when the target decides (scalings_both) */
    xf_model_search ms[2];
    int n_searches;
    xf_cost_model *cm, *lat_cm;
    xf_target *target;
    xf_fused_cost *fused;
    xf_onnx_sizes *sizes;
    xf_onnx_dynamic *dyn;
    xf_agent_outcome oc;
    char cache_buf[4096];
    /* the progress trace (trace.c) */
    int trace_cap, trace_search, trace_first; /* trace_first: the search's first point */
    int trace_lost; /* a progress point could not be kept (out of memory) */
    double trace_t0;
} opt_run;

/* The note callback with a formatted text. */
void opt_note(const opt_run *s, xf_optimize_note_kind kind, const char *fmt, ...) XF_PRINTF(3, 4);

/* Protects the inputs, probes the outputs, loads the model, the rules, the
 * cost model, the target: a failure here sets r->input_error (except the
 * tied-embedding pass). */
xf_status opt_load(opt_run *s, xf_error *err);
/* Makes the environments, fills the head of the report, runs the search or
 * the learning agent. */
xf_status opt_search(opt_run *s, xf_error *err);
/* Arbiter or outcome, numerical check, checked write, latency. */
xf_status opt_finish(opt_run *s, xf_error *err);

/* The checkpoint of options.load: its agent becomes o.agent, and every
 * rule it acts with must be in the rules database (checkpoint.c). */
xf_status opt_check_checkpoint(opt_run *s, xf_error *err);
/* Prepares ms[i] from the input with *prepare and loads its rules. */
xf_status opt_load_rules(opt_run *s, int i, const xf_prepare_options *prepare, xf_error *err);
/* The head of the report from the environments (stage SEARCH). */
xf_status opt_report_head(opt_run *s, xf_error *err);
/* The rules applied to the model written, grouped (applied: NULL when the
 * input was written). */
xf_status opt_report_applied(opt_run *s, const xf_model_search *ms,
                             const xf_search_result *applied, xf_error *err);
/* The symbolic dims as written. */
xf_status opt_report_dims(opt_run *s, xf_error *err);
/* The memory of the input and of the model written, and the input's nodes
 * the model written lacks (by name). */
xf_status opt_report_changes(opt_run *s, const xf_graph *written, xf_error *err);

/* The progress trace (trace.c): a search `search` starts; it is over (its
 * start and end points added); the progress callbacks that record a point
 * and call the caller's (user: the opt_run). */
void opt_trace_begin(opt_run *s, int search);
xf_status opt_trace_end(opt_run *s, const xf_search_result *res, double seconds, xf_error *err);
void opt_trace_search(void *user, int expanded, double best_ms, double initial_ms);
void opt_trace_ppo(void *user, const xf_ppo_progress *p);
void opt_trace_wm(void *user, const xf_wm_progress *p);

#endif /* XF_OPTIMIZE_OPTIMIZE_INTERNAL_H */
