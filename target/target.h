/*
 * target.h — the target runtime: ONNX Runtime on CPU, loaded at run time
 * through its C API, to run rlflow graphs as users run them and to time
 * them against each other.
 *
 * xf_target_open loads libonnxruntime.so.1 (the caller's path, else
 * $RLFLOW_ORT_LIB, else where tools/setup.sh installs it) and fixes the
 * session settings: intra-op threads, graph optimisation level, sequential
 * execution with one inter-op thread. When the library is absent it fails
 * with XF_ERR_UNSUPPORTED and a message that names the path and the
 * set-up command; callers then keep their behaviour without a target.
 *
 * A model is a session over the ONNX serialisation of an xf_graph, with
 * inputs made once by xf_graph_random_inputs (the inputs the rest of
 * rlflow uses for a seed). Timing runs the models in alternation (see
 * xf_target_compare and docs/target.md for the noise bound).
 */
#ifndef XF_TARGET_H
#define XF_TARGET_H

#include <stdint.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

typedef enum xf_target_opt_level {
    XF_TARGET_OPT_ALL = 0, /* ONNX Runtime's default and what users run */
    XF_TARGET_OPT_DISABLED,
    XF_TARGET_OPT_BASIC,
    XF_TARGET_OPT_EXTENDED
} xf_target_opt_level;

typedef struct xf_target_options {
    const char *library;           /* NULL: $RLFLOW_ORT_LIB, else the set-up path */
    int threads;                   /* intra-op threads; 0: the machine's cores */
    xf_target_opt_level opt_level; /* default XF_TARGET_OPT_ALL */
} xf_target_options;

typedef struct xf_target xf_target;
typedef struct xf_target_model xf_target_model;

/* Zeroed options: default library, every core, all optimisations. */
xf_target_options xf_target_default_options(void);
/* o NULL: the defaults. */
xf_status xf_target_open(const xf_target_options *o, xf_target **out, xf_error *err);
/* "onnxruntime 1.30.0 CPU, 2 threads, optimisations all" (valid until close). */
const char *xf_target_identity(const xf_target *t);
/* The number of intra-op threads sessions use. */
int xf_target_threads(const xf_target *t);
void xf_target_close(xf_target *t); /* NULL is a no-op */

/* Graphs are handed to onnxruntime from now on exported keeping the
 * symbolic dims d describes (xf_onnx_save_buffer_dynamic; d NULL: as
 * their shapes are, the default): a candidate of a model with a symbolic
 * batch is timed as the file rlflow-agent writes, its dims bound at run
 * time to the sizes of the inputs (point 0 of d), not as a fixed-size
 * export that onnxruntime may optimise otherwise (docs/target.md,
 * "Timed as written"). d must outlive its use; a graph whose parameters
 * cannot follow a symbol fails to load (XF_ERR_UNSUPPORTED naming the
 * node). */
void xf_target_keep_dims(xf_target *t, const xf_onnx_dynamic *d);
/* What xf_target_keep_dims set (NULL: none). */
const xf_onnx_dynamic *xf_target_kept_dims(const xf_target *t);
/* 1 when the last model load failed in exporting the graph for
 * onnxruntime (with kept dims: a parameter cannot follow a symbol), before
 * onnxruntime saw it; 0 otherwise. */
int xf_target_export_failed(const xf_target *t);

/* Shares g's weights with every session the target opens from now on:
 * its constants of 1 KiB and more are written once into a data file in a
 * scratch directory ($TMPDIR, else /tmp, removed at close), and a model
 * whose constants are those very buffers (a candidate borrowing the input's
 * weights, xf_graph_clone_shared) is handed to onnxruntime referencing that
 * file, with rlflow's buffers as its initializers (not copied) and their
 * prepacked forms made once for all sessions (share.c). g's constants must
 * stay alive and unchanged until xf_target_unshare or xf_target_close.
 * Sharing again replaces what was shared. */
xf_status xf_target_share_weights(xf_target *t, const xf_graph *g, xf_error *err);
/* Ends the sharing: the prepacked weights are freed and the data file
 * removed. Free every model loaded while sharing first (their sessions use
 * the prepacked weights). */
void xf_target_unshare(xf_target *t);
/* Bytes of the weights shared now (0: none). */
uint64_t xf_target_shared_bytes(const xf_target *t);

/* ONNX Runtime's offline optimisation: reads the ONNX file `in`, applies
 * the target's optimisation level (extended: the fusions that hold on any
 * CPU, with com.microsoft operators; all adds layout changes for this
 * machine) and writes the optimised model to `out`. */
xf_status xf_target_write_optimized(xf_target *t, const char *in, const char *out,
                                    xf_error *err);

/* A session over g with inputs from xf_graph_random_inputs(g, seed). g is
 * not kept (but the buffers of its shared weights are, see above). A graph
 * whose weights are over 1 GiB is handed over as a file with external data,
 * so any size loads. ONNX Runtime's errors read "<step>: onnxruntime:
 * <message>". */
xf_status xf_target_model_load(xf_target *t, const xf_graph *g, uint64_t seed,
                               xf_target_model **out, xf_error *err);
/* The same with ONNX Runtime reading the ONNX file at `path` as written
 * (external data beside it included); g, the graph imported from that
 * file, gives the inputs and their names. path NULL: xf_target_model_load. */
xf_status xf_target_model_load_file(xf_target *t, const char *path, const xf_graph *g,
                                    uint64_t seed, xf_target_model **out, xf_error *err);
/* One run on the model's inputs; its outputs are kept until the next. */
xf_status xf_target_model_run(xf_target_model *m, xf_error *err);
/* Copies the last run's outputs into outs[0 .. g->n_outputs), in the order
 * of the graph's outputs, allocating each (xf_tensor_free them; nothing is
 * left allocated on failure). XF_ERR_INVALID before the first run. */
xf_status xf_target_model_outputs(xf_target_model *m, xf_tensor *outs, xf_error *err);
void xf_target_model_free(xf_target_model *m); /* NULL is a no-op */

/* Runs a and b (same inputs) in the target on xf_graph_random_inputs(seed)
 * and puts into *max_rel the largest |b - a| over the largest |a| of each
 * float output, the largest over outputs; an integer or boolean output that
 * differs, a shape that differs or a NaN gives INFINITY. */
xf_status xf_target_outputs_diff(xf_target *t, const xf_graph *a, const xf_graph *b,
                                 uint64_t seed, double *max_rel, xf_error *err);
/* The same for two ONNX files as written, with the inputs of g (the graph
 * imported from path_a; path_b must take the same inputs, by name). */
xf_status xf_target_files_diff(xf_target *t, const char *path_a, const char *path_b,
                               const xf_graph *g, uint64_t seed, double *max_rel, xf_error *err);

/* How xf_target_compare times. Zeroed fields take the defaults. */
typedef struct xf_target_timing_options {
    uint64_t seed;       /* inputs (default 1) */
    int rounds;          /* alternation rounds (default 21) */
    int reps;            /* runs of each model per round (0: enough for round_ms) */
    double round_ms;     /* a model's share of a round when reps is 0 (default 25) */
    double warmup_ms;    /* untimed runs of each model first (default 100, at least 2 runs) */
    int self_check;      /* 1: time a second session of model 0 as well (see below) */
    const char *const *files; /* NULL, or files[i] the ONNX file g[i] was imported from,
                                 which is then run as written (xf_target_model_load_file) */
    int fastest;         /* xf_target_latency: *median_ms is the smallest round median
                            instead (other load only ever slows a run: for short models
                            timed once, e.g. fused regions, the least disturbed figure) */
} xf_target_timing_options;

typedef struct xf_target_timing {
    double median_ms;    /* median of all timed runs */
    double ratio;        /* median over rounds of (round median / model 0's), 1 for model 0 */
    double lo, hi;       /* 95% interval of that median (order statistics of the rounds) */
    double noise;        /* max(hi - ratio, ratio - lo): the ratio's noise bound */
    int runs;            /* timed runs */
} xf_target_timing;

/* Loads g[0 .. n) (same inputs: equal count, dtypes and shapes), warms
 * each up, then runs them in alternation: `rounds` rounds, each running
 * every model `reps` times in a row, the starting model rotating from round
 * to round. res[i] (n entries) describes model i against model 0. With
 * o->self_check, a second session of g[0] takes part like any model and is
 * reported in *self: its ratio to model 0 should be 1 within its noise, and
 * its noise is the smallest difference the run can tell apart. */
xf_status xf_target_compare(xf_target *t, const xf_graph *const *g, int n,
                            const xf_target_timing_options *o, xf_target_timing *res,
                            xf_target_timing *self, xf_error *err);
/* A race: model 0 (the reference) and, with_self, a second session of it
 * (the self check) stay loaded while candidates join and leave, so that a
 * fixed small number of sessions is alive however many candidates are
 * weighed (the arbiter's racing, agent/search). A model is loaded and
 * warmed up when it joins (from `path` as written when given, else from
 * its graph, which must read the inputs model 0 reads); each round runs
 * every loaded model o->reps times (0: about o->round_ms of runs) in
 * rotating order. A candidate's timing is its ratio to model 0 over the
 * rounds it took part in, and the self check's over the same rounds
 * (xf_target_race_timing). xf_target_compare is a race with every model
 * loaded for o->rounds rounds. */
typedef struct xf_target_race xf_target_race;
xf_status xf_target_race_open(xf_target *t, const xf_graph *ref, const char *path, int with_self,
                              const xf_target_timing_options *o, xf_target_race **out,
                              xf_error *err);
/* Loads g into a slot (*slot; 0 and 1 are model 0 and its self check). */
xf_status xf_target_race_add(xf_target_race *r, const char *path, const xf_graph *g, int *slot,
                             xf_error *err);
/* The same, calling written(ctx) once g has been written for onnxruntime
 * and before its session is created (when it goes through the scratch
 * directory, see xf_target_share_weights): the caller may then free the
 * data of g's constants that are not shared (onnxruntime reads them from
 * the files), so they are not in memory twice while the session prepacks
 * them; g's structure must stay until the call returns. */
xf_status xf_target_race_add_then(xf_target_race *r, const char *path, const xf_graph *g,
                                  void (*written)(void *), void *ctx, int *slot, xf_error *err);
/* One round of every loaded model. */
xf_status xf_target_race_round(xf_target_race *r, xf_error *err);
/* Rounds the model in `slot` took part in (0: none, or no model there). */
int xf_target_race_rounds(const xf_target_race *r, int slot);
/* Its ratio to model 0 (res), the self check's over the same rounds
 * (self, may be NULL; zeroed without a self check) and model 0's median ms
 * over them (ref_ms, may be NULL). */
xf_status xf_target_race_timing(const xf_target_race *r, int slot, xf_target_timing *res,
                                xf_target_timing *self, double *ref_ms, xf_error *err);
/* The outputs of the model in `slot` against model 0's, as
 * xf_target_outputs_diff compares them (both ran on the same inputs when
 * they were warmed up): no extra run. *worst (may be NULL): the output
 * that differs most. */
xf_status xf_target_race_diff(xf_target_race *r, int slot, double *max_rel, int *worst,
                              xf_error *err);
/* The last round's length, ms (what one more round costs). */
double xf_target_race_round_ms(const xf_target_race *r);
/* Frees the model in slot (> 0, not the self check): its session ends. */
void xf_target_race_drop(xf_target_race *r, int slot);
void xf_target_race_free(xf_target_race *r); /* NULL is a no-op */

/* -1 when r's model is faster than model 0 beyond the noise, 1 when it is
 * slower, 0 when the run cannot tell: its interval must lie wholly below
 * (above) 1 and, when `self` (the self check, may be NULL) is given, below
 * (above) the self check's interval too, so that it differs from model 0
 * more than model 0 differs from itself. */
int xf_target_verdict(const xf_target_timing *r, const xf_target_timing *self);
/* One model: its median ms and relative noise (the larger side of the 95%
 * interval of the median of its round medians, over that median). */
xf_status xf_target_latency(xf_target *t, const xf_graph *g, const xf_target_timing_options *o,
                            double *median_ms, double *noise, xf_error *err);

#endif /* XF_TARGET_H */
