/*
 * cli.h — (private to rlflow-agent) the parsed command line: the library
 * call's options (optimize/optimize.h) and what only the tool decides.
 */
#ifndef XF_RLFLOW_AGENT_CLI_H
#define XF_RLFLOW_AGENT_CLI_H

#include "pages/pages.h"
#include "tools/cli/cli.h"

typedef struct cli_options {
    const char *model, *output;
    char output_buf[4096];
    xf_optimize_options opt;
    int quiet, verbose;
    int scalings;          /* --scalings: 0 moved, 1 kept, 2 both */
    xf_cli_dims dims;      /* --dim */
    const char *mem_limit; /* --mem-limit, applied by cli_parse */
    double target_budget, target_budget_max; /* --target-budget(-max) (-1: not given),
                                                applied by cli_parse */
    const char *make_rules; /* --make-rules DIR: make the default rules there and exit */
    char rules_buf[4096];  /* the default rules' path when no --rules is given */
    const char *report;    /* --report DIR (NULL: no page) */
} cli_options;

/* 0: parsed; 2: bad usage (message printed); -1: --help printed (exit 0). */
int cli_parse(int argc, char **argv, cli_options *o);

/* The default rules database into o->opt.rules (found, or made with
 * progress), saying which on stderr; with o->make_rules, made there. 0, or
 * the exit status (message printed). */
int find_default_rules(cli_options *o);
/* `rlflow-agent train ...` (argv[0] is "train"): the exit status. */
int train_main(int argc, char **argv);

#endif /* XF_RLFLOW_AGENT_CLI_H */
