/*
 * agent_runner.h — what bench_optimize, bench_agents and bench_dynamic
 * share: a scratch directory, a verified rules database made once, and one
 * optimisation (the library call rlflow-agent makes, in-process) whose
 * report's figures are kept for a table.
 */
#ifndef XF_BENCH_AGENT_RUNNER_H
#define XF_BENCH_AGENT_RUNNER_H

#include <stddef.h>

#include "optimize/optimize.h"
#include "target/target.h"

/* $TMPDIR/<name> (created); the path is kept in a static buffer. */
const char *bench_scratch(const char *name);

/* <scratch>/rules.db: `xfergen --vocab taso --max-ops 3` verified with
 * xferverify, made on first use (about 2 minutes on 2 cores; written under
 * another name and renamed when complete). Exits on failure. */
void bench_make_rules(const char *scratch, const char *xfergen, const char *xferverify,
                      char *path, size_t n);
/* The same with `xfergen --vocab VOCAB --max-ops 3` into <scratch>/<file>. */
void bench_make_rules_vocab(const char *scratch, const char *xfergen, const char *xferverify,
                            const char *vocab, const char *file, char *path, size_t n);

/* The figures of one optimisation a table needs (empty when absent). */
typedef struct bench_row {
    char model[160], applicable[96], cost[128], latency[256], noise[96], err[96], search[128];
    char agent[192], world[384];
    int ok;
} bench_row;

/* xf_optimize_file(model, <scratch>/out.onnx, o) in-process; its warnings
 * and a failure are echoed on stderr. keep (NULL: not wanted) gets the
 * report of a run that succeeded (row.ok), the caller to free it. */
bench_row bench_optimize_model(const xf_optimize_options *o, const char *model,
                               const char *scratch, xf_optimize_report *keep);

/* When `line` starts with `key`: the rest of it, leading spaces and the
 * newline dropped, into dst. */
void bench_field(const char *line, const char *key, char *dst, size_t n);

/* Parses a comma-separated list of thread counts ("1,2") into out (at most
 * max, each 1..256); returns how many, 0 when the list is malformed. */
int bench_thread_list(const char *s, int *out, int max);

/* The default rules database as rlflow-agent in tools_dir finds it (made in
 * the user cache when missing) into path; exits naming the cause on failure. */
void bench_default_rules(const char *tools_dir, char *path, size_t n);

/* The 1-minute load average (/proc/loadavg; -1 when unreadable), printed
 * beside timings taken on a shared machine. */
double bench_load_average(void);

/* An environment on a model with the analytic cost backend at a fixed
 * roofline (100 GFLOP/s, 10 GB/s, 2 us a kernel: the same figures on any
 * machine and under any load) and the rules of `rules` that can match the
 * prepared model, derived ones included; episodes of max_steps steps (0:
 * the environment's default). Exits naming the cause on failure.
 * bench_env_free frees what it made (not the model). */
typedef struct bench_env {
    xf_graph prep;
    xf_ruleset *rs;
    xf_cost_model *cm;
    xf_env *e;
    int max_locations; /* the environment's */
} bench_env;
void bench_analytic_env(const xf_graph *model, const char *rules, int max_steps, bench_env *out);
void bench_env_free(bench_env *b);

/* A direct race: files[0] (the input) and files[1 .. n) (models written
 * for it) loaded as written and timed alternately in one process
 * (xf_target_compare, `rounds` rounds, a self check of files[0]) with
 * `threads` intra-op threads (0: every core). Two optimisations' own
 * arbiters each read a ratio against the input from their own noisy
 * rounds; here every model is timed over the same rounds, so their ratios
 * can be set side by side. res[i] is files[i]'s (res[0] the input's);
 * *self the self check's; identity (may be NULL) the target's words. A file
 * that does not load is reported and its res[i].runs left 0. `load` (NULL:
 * defaults) gives the sizes of symbolic dims the inputs are made at.
 * Returns 0, or
 * 1 after printing why no race ran (the line starts with `name`). */
#define BENCH_RACE_MAX 16
int bench_race_files(const char *name, const char *const *files, int n, int threads, int rounds,
                     const xf_onnx_options *load, xf_target_timing *res, xf_target_timing *self,
                     char *identity, size_t identity_n);

/* Prints a row under a "name method" heading, one report line per field. */
void bench_print_row(const char *name, const char *method, const bench_row *r);

#endif /* XF_BENCH_AGENT_RUNNER_H */
