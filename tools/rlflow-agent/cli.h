/*
 * cli.h — (private to rlflow-agent) the parsed command line and the steps of
 * the tool: argument parsing, running a learning agent and the report.
 */
#ifndef XF_RLFLOW_AGENT_CLI_H
#define XF_RLFLOW_AGENT_CLI_H

#include <stdint.h>

#include "agent/search/search.h"
#include "costmodel/costmodel.h"
#include "ir/ir.h"
#include "tools/cli/cli.h"


/* What rewrites the model: the proved rules only, the hand-written passes
 * (narrowing, the split layout, the unbatched layout variant; "expert"),
 * or both. */
typedef enum cli_passes { CLI_PASSES_RULES = 0, CLI_PASSES_EXPERT = 1, CLI_PASSES_BOTH = 2 } cli_passes;

/* Who optimises: a search baseline or a learning agent. */
typedef enum cli_agent { CLI_AGENT_SEARCH = 0, CLI_AGENT_PPO = 1, CLI_AGENT_WM = 2 } cli_agent;

typedef struct cli_options {
    const char *model, *rules, *output, *cache;
    const char *external_data; /* --external-data: weights' file next to the output */
    char output_buf[4096];
    cli_agent agent;
    xf_search_kind search; /* when agent == CLI_AGENT_SEARCH */
    const char *save, *load; /* learning agents' checkpoints */
    double tau;              /* world-model dream temperature */
    xf_cost_backend backend;
    int threads, threads_given;
    int target;     /* --target ort: 1 */
    int fused_cost; /* --cost fused: 1 (needs the target) */
    int candidates; /* --candidates: models the arbiter times besides the input */
    int target_every; /* --target-every: sparse target reward of the learning agents */
    double target_budget; /* --target-budget: seconds the arbiter may take (0: no limit) */
    int racing;       /* --racing: candidates timed at once (0: the arbiter's default) */
    double alpha, time_limit;
    int budget; /* graphs expanded / steps; 0: the agent's default */
    int locations, max_rule_size;
    uint64_t seed;
    int rule_status; /* xf_ruleset_options.status */
    int derived_rules; /* --derived-rules: xf_ruleset_options.derived */
    int all_actions; /* --all-actions: keep actions irrelevant to the model */
    xf_prepare_options prepare; /* --no-layernorm-fusion, --scalings, --no-narrow */
    int scalings_both; /* --scalings both (default): with the target, search both ways */
    cli_passes passes; /* --passes */
    int lookahead;     /* searches: the view moves' closure after view actions (--no-lookahead: 0) */
    int check, quiet, verbose;
    int latency; /* 0: --no-latency, 1: default (not with the target), 2: --latency */
    double rtol, atol;
    xf_cli_dims dims; /* --dim */
    const char *data; /* --data: a test_data_set giving the symbolic dims' sizes */
    const char *mem_limit; /* --mem-limit, applied by cli_parse */
} cli_options;

/* 0: parsed; 2: bad usage (message printed); -1: --help printed (exit 0). */
int cli_parse(int argc, char **argv, cli_options *o);

/* What went wrong with a checkpoint in cli_learn. */
typedef struct cli_learn_outcome {
    int load_failed; /* o->load could not be read (bad input: exit 2) */
    int save_failed; /* o->save could not be written: save_err says why; the
                        model is still written, the exit status is 1 */
    xf_error save_err;
} cli_learn_outcome;

/* Runs the chosen learning agent (ppo or wm) on env: trains it within the
 * budget (or loads it from o->load and runs it greedily), saves it to
 * o->save, fills res like a search, prints its training figures. A save
 * that fails is not an error here (out->save_failed): what was learned
 * still optimises the model. */
xf_status cli_learn(const cli_options *o, xf_env *env, xf_cost_model *cm, xf_search_result *res,
                    cli_learn_outcome *out, xf_error *err);

/* Prints the rules applied, grouped with counts, most frequent first. */
void cli_print_applied(const xf_model_search *ms, const xf_search_result *res);
/* Prints which rewrites of the written model the proved rules made (those
 * with a reshape or a slice counted apart) and which the hand passes made
 * (narrowing, the split layout, the unbatched layout variant). applied:
 * the written candidate's rules (NULL: the input was written). */
void cli_print_made_by(const cli_options *o, const xf_model_search *ms,
                       const xf_search_result *applied, const xf_prepare_stats *ps, int unbatched);

#endif /* XF_RLFLOW_AGENT_CLI_H */
