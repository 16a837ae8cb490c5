/*
 * optimize.h — one call that optimises an ONNX model (optimize/): the
 * model and the proved rules in, the optimised model written (or handed
 * back as bytes) and a report of what happened out. It is what
 * `rlflow-agent` runs and what a test, a bench or a binding calls.
 *
 * The steps, each a call into the modules below (onnx, costmodel, target,
 * agent): the sizes of the model's symbolic dims chosen (given, from a
 * test_data_set, or searched), the model imported and its tied embedding
 * held once; the model prepared and the rules that can match it loaded;
 * the cost model (and the target runtime, and the fusion-aware cost) opened;
 * a search or a learning agent run (with the target deciding, also on the
 * model prepared the other way); the arbiter in the target, or "never
 * write a slower model" on the cost model, picks what is written; the
 * numerical check against the input; the model exported keeping its
 * symbolic dims, read back and checked at three sizes of each, and written
 * only then, else the input written instead (onnx's checked writer); the
 * end-to-end latency of both models.
 *
 * Nothing here prints: what the tool prints is in the report, handed over
 * when it is complete (and at two stages before, for a tool to print the
 * head of its report while the search runs), and short notes go to a
 * callback. Every allocation goes through the ir hook; failures return an
 * xf_status and fill err with a message naming the file, rule or step.
 */
#ifndef XF_OPTIMIZE_H
#define XF_OPTIMIZE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/rl/rl.h"
#include "agent/search/search.h"
#include "costmodel/costmodel.h"
#include "ir/ir.h"
#include "onnx/onnx.h"

/* Who optimises: a search baseline or a learning agent. */
typedef enum xf_optimize_agent {
    XF_OPTIMIZE_SEARCH = 0, /* xf_optimize_options.search */
    XF_OPTIMIZE_PPO = 1,    /* the model-free PPO agent */
    XF_OPTIMIZE_WM = 2      /* the world-model agent (default) */
} xf_optimize_agent;

/* What rewrites the model: the proved rules only; the hand-written passes
 * only (narrowing, the split layout, the unbatched layout variant: the
 * expert baseline, no rule applied and no rules database read); or both. */
typedef enum xf_optimize_passes {
    XF_OPTIMIZE_RULES = 0,
    XF_OPTIMIZE_EXPERT = 1,
    XF_OPTIMIZE_BOTH = 2 /* default */
} xf_optimize_passes;

/* A short note while the call runs (xf_optimize_options.note). */
typedef enum xf_optimize_note_kind {
    XF_OPTIMIZE_WARN = 0,     /* something the user must know (sizes chosen, a model not
                                 written, a checkpoint not saved) */
    XF_OPTIMIZE_INFO = 1,     /* what was done on the way (a tied embedding held once) */
    XF_OPTIMIZE_STATUS = 2,   /* what is being done now ("cost: timing ...") */
    XF_OPTIMIZE_PROGRESS_END = 3 /* a progress line (search or agent) is over; text "" */
} xf_optimize_note_kind;

/* When the stage callback is called. */
typedef enum xf_optimize_stage {
    XF_OPTIMIZE_STAGE_SEARCH = 0,  /* inputs loaded, environments made: the head of the
                                      report (model, rules, cost model, target,
                                      applicable rules) is filled; the search starts */
    XF_OPTIMIZE_STAGE_SEARCHED = 1 /* the search or the agent is over: its figures are
                                      filled; the arbiter, check and writing follow */
} xf_optimize_stage;

typedef struct xf_optimize_report xf_optimize_report;

/* Sampled episodes of a loaded agent after its greedy one (docs/agent-search.md,
 * "Transfer", says why this many). */
#define XF_OPTIMIZE_SAMPLES 8
#define XF_OPTIMIZE_GUIDE 16

typedef struct xf_optimize_options {
    const char *rules;         /* rules database (xfergen + xferverify); required */
    const char *external_data; /* the weights' file, relative to the output's directory
                                  (NULL: none unless over 2 GiB, onnx's writer) */
    xf_optimize_agent agent;   /* default XF_OPTIMIZE_WM */
    xf_search_kind search;     /* with XF_OPTIMIZE_SEARCH (default taso) */
    const char *save, *load;   /* the learning agents' checkpoints (NULL: none); a
                                  checkpoint loaded decides the agent (wm or ppo) */
    int samples;               /* load: sampled episodes after the greedy one, the best
                                  graph of all kept (XF_OPTIMIZE_SAMPLES) */
    int guide;                 /* load, ppo: first a search the policy guides over its
                                  `guide` most likely rules a step (XF_OPTIMIZE_GUIDE;
                                  0: none) */
    double tau;                /* wm: dream temperature (default 1.0) */
    xf_cost_backend backend;   /* default oneDNN */
    const char *cache;         /* cost cache (xf_cost_cache_path: NULL the user's,
                                  "none" nothing kept) */
    int threads;               /* CPU threads; 0 (default): 1, the machine's cores with
                                  the target */
    double peak_gflops, bandwidth_gbps; /* analytic backend: the roofline fixed (0, the
                                  default: measured once per machine and cached) */
    int target;                /* 1: ONNX Runtime decides what is written (default 0) */
    int fused_cost;            /* 1: the search costs fused regions timed in the target */
    int candidates;            /* target: models timed besides the input per search (6) */
    int target_every;          /* target, wm/ppo: sparse target reward every K steps (50) */
    double target_budget;      /* target: seconds the arbiter may take (90; 0: no limit) */
    double target_budget_max;  /* target: the most that budget may grow to, to race 4
                                  models and confirm one at the input's measured
                                  latency (300; not above target_budget: fixed) */
    int racing;                /* target: candidates timed at once (0: the arbiter's) */
    int finalists;             /* target: candidates in the final (0: the arbiter's) */
    double alpha;              /* taso: keep graphs costing < alpha x best (1.05) */
    double time_limit;         /* seconds (0: none for searches; 120 for wm/ppo and for
                                  searches on the fused cost) */
    int budget;                /* graphs expanded / steps (0: the agent's default) */
    int locations;             /* locations per rule (200) */
    int max_rule_size;         /* operators per side at most (0: all) */
    uint64_t seed;             /* random inputs, searches, agents (1) */
    int rule_status;           /* xf_ruleset_options.status (-1: not only proved ones) */
    int derived_rules;         /* use the derived rules too (1) */
    int all_actions;           /* keep actions that can never match the model (0) */
    xf_prepare_options prepare; /* how the model is prepared (xf_prepare_options_default) */
    int scalings_both;         /* with the target and a search, search both ways (1) */
    xf_optimize_passes passes; /* default XF_OPTIMIZE_BOTH; RULES turns narrowing and the
                                  split layout off and Gathers of one position into slices;
                                  EXPERT reads no rules (rules may be NULL) */
    int lookahead;             /* searches and learning agents: the view moves' closure (1) */
    int polish;                /* learning agents in training: end with the greedy polish
                                  of the best graph (agent/rl's xf_agent_run_polish; 1) */
    int check;                 /* refuse to write a model that fails the check (1) */
    int latency;               /* end-to-end latency on the backend: 0 never, 1 without
                                  the target (default), 2 always */
    double rtol, atol;         /* numerical check |d| <= atol + rtol*|ref| (1e-3, 1e-4) */
    int n_dims;                /* sizes of symbolic input dims: names[i] = values[i] */
    const char *const *dim_names;
    const int64_t *dim_values;
    const char *data;          /* a test_data_set giving the other dims' sizes (NULL) */
    int list_applicable;       /* fill report.peeks (every applicable rule, its best
                                  one-step change) before searching (0) */
    /* Callbacks (NULL: none), all with `user`: */
    void (*search_progress)(void *user, int expanded, double best_ms, double initial_ms);
    void (*ppo_progress)(void *user, const xf_ppo_progress *p);
    void (*wm_progress)(void *user, const xf_wm_progress *p);
    void (*note)(void *user, xf_optimize_note_kind kind, const char *text);
    void (*stage)(void *user, xf_optimize_stage stage, const xf_optimize_report *r);
    void *user;
} xf_optimize_options;

xf_optimize_options xf_optimize_options_default(void);

/* One rule applied on the path to the model written, with its count. */
typedef struct xf_optimize_applied {
    int count;
    int64_t rule_id;
    int backward; /* applied right to left, at a value */
    char *text;   /* readable form (owned) */
} xf_optimize_applied;

/* One applicable rule before the search (list_applicable). */
typedef struct xf_optimize_peek {
    int64_t rule_id;
    int locations;
    double best_delta_ms; /* the best cost change one application makes */
    char *text;           /* owned */
} xf_optimize_peek;

/* One symbolic input dim of the model and how it was written. */
typedef struct xf_optimize_dim {
    char *name;        /* owned */
    char *fixed;       /* why it was written fixed at size[0] (owned; NULL: kept) */
    int64_t size[3];   /* the sizes it was checked at (size[0]: imported at) */
} xf_optimize_dim;

/* One search's figures (or the learning agent's, in expanded/seconds). */
typedef struct xf_optimize_search_figures {
    int64_t expanded, seen;
    double seconds, initial_ms, best_ms;
    double unpolished_ms;  /* a learning agent's best before its final polish (0: none) */
    int polish_steps;
    double polish_seconds;
} xf_optimize_search_figures;

/* One point of the search's progress (about one a second, and its start
 * and end): the best cost found so far against steps and seconds. */
typedef struct xf_optimize_trace_point {
    int search;       /* which search (0, or 1: prepared the other way) */
    double seconds;   /* since the search (or the agent) started */
    int64_t steps;    /* graphs expanded, or the agent's environment steps */
    double best_ms;   /* the cost model's, on the prepared working graph */
} xf_optimize_trace_point;

/* A node of the input that the model written does not have (by name). */
typedef struct xf_optimize_node_ref {
    char *name; /* owned */
    char *op;   /* the operator (owned): rlflow's name, or an opaque node's ONNX type */
} xf_optimize_node_ref;

/* Input nodes listed at most in xf_optimize_report.replaced. */
#define XF_OPTIMIZE_MAX_LISTED 400

struct xf_optimize_report {
    /* --- loading */
    int input_error;           /* on failure: 1 when an input could not be read or used
                                  (model, rules, checkpoint, backend, an output path),
                                  0 when the optimisation, check or write failed */
    int tied;                  /* tied embeddings held once */
    char target_refused[1024]; /* the target asked for did not load: why ("" else) */
    int fused_refused;         /* the fused cost asked for, without a target */
    /* --- the head (stage SEARCH) */
    int nodes_before, nodes_prepared; /* the model imported, and prepared */
    xf_prepare_stats prep;
    int actions, skipped, duplicates, irrelevant; /* the rule set's actions */
    char cost_identity[256];
    int fused;                 /* the fused cost is used */
    double fused_overhead_ms;
    int target;                /* the target runtime loaded: it decides what is written */
    char target_identity[256]; /* "" without the target */
    int applicable, locations; /* rules with a location in the model, and locations */
    int n_searches;            /* 2: also searched prepared the other way */
    int alt_actions, alt_applicable, alt_locations;
    int n_peeks;
    xf_optimize_peek *peeks;   /* list_applicable */
    /* --- the search (stage SEARCHED) */
    int agent_untrained;       /* wm/ppo: no action can match, a greedy search ran */
    xf_optimize_agent agent;   /* who optimised (a checkpoint loaded decides it) */
    xf_rl_learned learned;     /* the learning agent's figures */
    int64_t target_runs;       /* learning agents with the target: graphs timed there */
    double target_seconds, target_initial_ms;
    xf_optimize_search_figures search[2];
    double search_seconds;     /* the search or training, wall time */
    /* --- the outcome */
    double cost_before, cost_after; /* the models as written, cost model (ms) */
    int kept_original;         /* the input is written */
    xf_finish_stats finish;
    int nodes_after;
    xf_fused_cost_stats fused_stats;
    xf_check_result check;     /* max_abs -1: not checked */
    char check_by[512];        /* "": the interpreter; else why ONNX Runtime compared
                                  them (a node the interpreter cannot run): then
                                  check.max_rel is the largest |d| over the largest |ref| */
    int latency_state;         /* 0 not asked, 1 measured, -1 failed (latency_error) */
    double latency_before, latency_after, latency_spread;
    char latency_identity[256];
    char latency_error[1024];
    xf_arbiter_result arb;     /* with the target (n 0 else) */
    int chosen_search;         /* the search whose candidate is written */
    int search_rewrites;       /* its rewrites (those that did not pay off when kept) */
    int n_applied;             /* rules applied on the path to the model written */
    int n_views;               /* of which with a reshape or a slice */
    int n_distinct;
    xf_optimize_applied *applied; /* grouped, most frequent first */
    int unbatched;             /* the unbatched layout was chosen */
    xf_prepare_stats written_prep; /* what preparing did in the search written from */
    int n_dims;
    xf_optimize_dim *dims;
    xf_onnx_checked written;   /* what was written, checked at the sizes */
    double seconds;            /* the whole call */
    int64_t cost_measurements; /* kernels the cost model timed (cache misses) */
    int64_t cost_disturbed;    /* of them, disturbed by other processes in every attempt:
                                  used but not cached (xf_cost_disturbed) */
    int64_t cost_shared;       /* of them, timed while other tasks ran beside them:
                                  used but not cached (xf_cost_shared) */
    uint64_t weight_bytes;     /* the model's weights as imported */
    /* --- what a page shows besides (xf_audit_optimize_page) */
    xf_graph_memory memory_before, memory_after; /* the input and the model written, run
                                  in the order the exporter writes (xf_graph_memory_use) */
    int n_trace;
    xf_optimize_trace_point *trace; /* the search's progress, in time order */
    int n_replaced;            /* the input's named nodes the model written lacks */
    int n_new;                 /* the written model's nodes without an input's name */
    int n_replaced_listed;     /* of n_replaced, listed (XF_OPTIMIZE_MAX_LISTED at most) */
    xf_optimize_node_ref *replaced;
};

void xf_optimize_report_init(xf_optimize_report *r);
void xf_optimize_report_free(xf_optimize_report *r); /* back to init's state */

/* Optimises the model file `model` with *o (NULL: the defaults, which
 * need o->rules: XF_ERR_INVALID) and writes it to `output` (its external
 * data file next to it), or the input when nothing better passes the
 * checks; *r (initialised) gets the report. No output may be a file the
 * run reads. Fails when nothing was written; r->input_error says whether
 * an input was at fault. A checkpoint that could not be saved is not a
 * failure: r->learned.save_failed. */
xf_status xf_optimize_file(const char *model, const char *output, const xf_optimize_options *o,
                           xf_optimize_report *r, xf_error *err);

/* The same from bytes to bytes: the model (holding all of its data) in
 * buf; *out (xf_malloc'd, *out_len bytes) gets the model written and, when
 * its weights went to an external data file, *data (xf_malloc'd,
 * *data_len; NULL and 0 otherwise) gets that file, which the model names
 * as o->external_data (or "model.onnx.data"). The checked writer reads the
 * input again at each size and writes files, so the call works in a
 * private directory under $TMPDIR (else /tmp), removed before it returns. */
xf_status xf_optimize_bytes(const void *buf, size_t len, const xf_optimize_options *o,
                            uint8_t **out, size_t *out_len, uint8_t **data, size_t *data_len,
                            xf_optimize_report *r, xf_error *err);

/* The name of an arbiter verdict in reports ("fastest: written", ...). */
const char *xf_optimize_verdict_name(xf_arbiter_verdict v);

/* ---------------------------------------------------- the default rules */


/* ---------------------------------------------- one agent over many models
 *
 * Trains one learning agent over many models and saves it (train.c;
 * `rlflow-agent train`): every model named (a file, or every *.onnx under
 * a directory, three levels down, *.opt.onnx left out) loaded, sized and
 * prepared as xf_optimize_file does, with the rules that can match it; the
 * agent's actions the union of the rules offered on them (by rule id);
 * training in slices over the models (agent/rl/rl.h, xf_rl_train_many)
 * within the budget; the checkpoint written. xf_optimize_file with
 * options.load then optimises a model the agent never saw, without
 * training. Errors name the model, directory or checkpoint that failed. */
typedef struct xf_train_options {
    const char *rules;         /* rules database; required */
    const char *save;          /* the checkpoint; required */
    int n_models;
    const char *const *models; /* files or directories */
    xf_optimize_agent agent;   /* XF_OPTIMIZE_PPO (default) or XF_OPTIMIZE_WM */
    double seconds;            /* wall-clock budget of the training (600; <= 0: none) */
    int64_t steps;             /* real environment steps over all models (0: none) */
    uint64_t seed;             /* (1) */
    float tau;                 /* wm: dream temperature (1.0) */
    int locations;             /* locations per rule (200) */
    int64_t slice_steps;       /* PPO: steps on one model at a time (0: 600) */
    int warmup_steps;          /* random steps per model choosing the actions (0: 200) */
    int max_actions;           /* cap of the action set (0: 512) */
    int target_layout;         /* 1: the environments cost layouts as ONNX Runtime runs
                                  them (as xf_optimize_file does with the target; no
                                  model is timed in it) (0) */
    xf_cost_backend backend;   /* default oneDNN */
    const char *cache;         /* cost cache (as xf_optimize_options.cache) */
    int threads;               /* the cost model's (1) */
    double peak_gflops, bandwidth_gbps; /* analytic backend's roofline (0: measured) */
    int rule_status, derived_rules, max_rule_size; /* as xf_optimize_options */
    xf_prepare_options prepare;
    void (*progress)(void *user, const xf_rl_train_progress *p); /* about once a second */
    void (*note)(void *user, xf_optimize_note_kind kind, const char *text);
    void *user;
} xf_train_options;

xf_train_options xf_train_options_default(void);

typedef struct xf_train_report {
    int n_models;
    char **models;             /* the model files, in the order given (owned) */
    int *nodes, *rules;        /* [n_models] nodes imported; actions of its rule set */
    char cost_identity[256];
    double load_seconds;       /* loading and preparing every model */
    xf_rl_train_stats stats;   /* the action set, steps, per-model costs */
} xf_train_report;

void xf_train_report_init(xf_train_report *r);
void xf_train_report_free(xf_train_report *r); /* back to init's state */
xf_status xf_train_agent(const xf_train_options *o, xf_train_report *r, xf_error *err);

/* The rules database used when none is given: the default vocabulary's
 * candidates up to XF_DEFAULT_RULES_OPS operators per side (xfergen),
 * derived and proved (xferverify), in a file named
 * rules-default-<version>-<key>.db, where the key hashes what makes the
 * rules (rlflow's version, the vocabulary and inputs, the operator count,
 * the database schema, the verifier's axioms): a file made by another
 * build has another name and is never used. The build makes one next to
 * the tools (`rlflow-agent --make-rules DIR`, CMake's rules-default
 * target), the Python package carries one; else it is made once, with
 * progress, in the user's cache ($XDG_CACHE_HOME/rlflow, else
 * ~/.cache/rlflow), under a lock so that two processes do not both make
 * it (the second waits and uses the first's). docs/optimize.md. */
#define XF_DEFAULT_RULES_OPS 3
/* ... and, at that size, the "unbatched" preset's candidates up to this
 * many operators (GPT's heads in the layout ONNX Runtime folds into its
 * FusedMatMul: 4 => 2-operator rules, a few seconds; docs/optimize.md). */
#define XF_DEFAULT_RULES_UNBATCHED_OPS 4

/* Where the database came from. */
typedef enum xf_default_rules_origin {
    XF_DEFAULT_RULES_FOUND = 0,  /* in one of the directories given */
    XF_DEFAULT_RULES_CACHED = 1, /* in the user's cache, made before */
    XF_DEFAULT_RULES_MADE = 2    /* made now */
} xf_default_rules_origin;

typedef struct xf_default_rules_options {
    const char *const *dirs; /* looked in first, in order (the tool's directory, a
                                package's); NULL entries are skipped */
    int n_dirs;
    int make;                /* 1 (default): make it in the user's cache when found
                                nowhere; 0: XF_ERR_IO naming where it looked */
    int jobs;                /* workers making it (0, the default: the online CPUs) */
    int max_ops;             /* 0 (default): XF_DEFAULT_RULES_OPS; tests make smaller */
    /* While making (NULL: quiet): a progress line (stage, counts, ETA) at
     * most every two seconds, and "" when the progress is over. */
    void (*progress)(void *user, const char *line);
    void *user;
} xf_default_rules_options;

void xf_default_rules_options_init(xf_default_rules_options *o);

/* The database's file name (no directory) for o->max_ops. */
xf_status xf_default_rules_name(const xf_default_rules_options *o, char *buf, size_t n,
                                xf_error *err);

/* The default database's path in *path: the first of o->dirs holding it,
 * else the user's cache, else (o->make) made there now; *origin says which.
 * Errors name the directory or the step (generating, proving) that failed. */
xf_status xf_default_rules_find(const xf_default_rules_options *o, char *path, size_t n,
                                xf_default_rules_origin *origin, xf_error *err);

/* Makes the database in `dir` unless it is there already (*made 0), its
 * path in *path; `dir` is created when missing. Made in a temporary file
 * renamed at the end, under a lock file in `dir`. */
xf_status xf_default_rules_make_in(const char *dir, const xf_default_rules_options *o, char *path,
                                   size_t n, int *made, xf_error *err);

#endif /* XF_OPTIMIZE_H */
