/*
 * args.c — rlflow-agent's command line: one table of options (tools/cli's
 * table-driven parser prints --help from it too) over the library call's
 * options, whose defaults (xf_optimize_options_default) are set first.
 */
#include <float.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *const targets[] = {"ort", "none", NULL};
static const int target_values[] = {1, 0};
static const char *const costs[] = {"ops", "fused", NULL};
static const char *const scalings[] = {"moved", "kept", "both", NULL};
static const char *const passes[] = {"rules", "expert", "both", NULL};

/* --agent wm|ppo|taso|greedy|random|exhaustive, --search taso|greedy|random|exhaustive */
static int parse_agent(void *user, const char *name, const char *v, char *msg, size_t n)
{
    xf_optimize_options *p = &((cli_options *)user)->opt;
    int is_agent = !strcmp(name, "--agent");
    if (is_agent && v && !strcmp(v, "wm")) p->agent = XF_OPTIMIZE_WM;
    else if (is_agent && v && !strcmp(v, "ppo")) p->agent = XF_OPTIMIZE_PPO;
    else if (v && xf_search_kind_parse(v, &p->search, NULL) == XF_OK) p->agent = XF_OPTIMIZE_SEARCH;
    else
        return xf_cli_needs(msg, n, name,
                            is_agent ? "wm, ppo, taso, greedy, random or exhaustive"
                                     : "taso, greedy, random or exhaustive",
                            v);
    return 0;
}

static int parse_backend(void *user, const char *name, const char *v, char *msg, size_t n)
{
    xf_error err = {0};
    if (v && xf_cost_backend_parse(v, &((cli_options *)user)->opt.backend, &err) == XF_OK) return 0;
    snprintf(msg, n, "%s", v ? err.msg : "--backend needs a value");
    (void)name;
    return -1;
}

/* --budget N (graphs or steps) or Ts (seconds) */
static int parse_budget(void *user, const char *name, const char *v, char *msg, size_t n)
{
    xf_optimize_options *p = &((cli_options *)user)->opt;
    size_t len = v ? strlen(v) : 0;
    int64_t count;
    if (len > 1 && v[len - 1] == 's') {
        char num[64];
        if (len >= sizeof num) return xf_cli_needs(msg, n, name, "a count or a time such as 120s", v);
        memcpy(num, v, len - 1);
        num[len - 1] = '\0';
        if (xf_cli_parse_f64(num, 0.001, DBL_MAX, &p->time_limit) != 0)
            return xf_cli_needs(msg, n, name, "a count or a time such as 120s", v);
        return 0;
    }
    if (xf_cli_parse_i64(v, 1, 100000000, &count) != 0)
        return xf_cli_needs(msg, n, name, "an integer in range", v);
    p->budget = (int)count;
    return 0;
}

static int parse_seed(void *user, const char *name, const char *v, char *msg, size_t n)
{
    int64_t s;
    if (xf_cli_parse_i64(v, 0, 2147483647, &s) != 0)
        return xf_cli_needs(msg, n, name, "an integer in range", v);
    ((cli_options *)user)->opt.seed = (uint64_t)s;
    return 0;
}

static const char usage_head[] = "usage: rlflow-agent [--rules RULES.db] MODEL.onnx [options]\n"
    "       rlflow-agent --make-rules DIR\n"
    "       rlflow-agent train --save CKPT --models PATH... (one agent over many models:\n"
    "                          rlflow-agent train --help)\n"
    "\n"
    "Optimises MODEL with the proved rewrite rules of RULES.db (default: the default\n"
    "rules database, see --rules): searches for a cheaper\n"
    "graph under the cost model, folds the weights the rules created, checks that the\n"
    "optimised model computes the same outputs as MODEL on random inputs, writes it as\n"
    "ONNX and reports cost, measured latency, output error and the rules applied.\n"
    "\n"
    "options:\n";
static const char usage_tail[] = "  -h, --help         this help\n"
    "\n"
    "exit status: 0 written, 1 optimisation, check or write failed (nothing written),\n"
    "             2 bad usage, unreadable model or rules, unavailable backend\n";

static const xf_cli_opt opts[] = {
    {.name = "--rules", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.rules), .what = "a file name",
     .label = "--rules FILE",
     .help = "rules database (xfergen + xferverify); default: the default\n"
     "vocabulary's proved rules up to 3 operators and GPT's unbatched\n"
     "heads at 4 (xfergen --vocab unbatched), next to this program\n"
     "(the build's rules-default target) or in the user cache\n"
     "($XDG_CACHE_HOME/rlflow, ~/.cache/rlflow), made there once on first\n"
     "use (about 2 minutes on 2 cores, with progress)"},
    {.name = "--make-rules", .type = XF_CLI_STR, .off = offsetof(cli_options, make_rules), .what = "a directory",
     .label = "--make-rules DIR",
     .help = "make the default rules database in DIR (unless it is there\n"
     "already), print its path and exit; no model is read"},
    {.name = "--output", .alias = "-o", .type = XF_CLI_STR, .off = offsetof(cli_options, output), .what = "a file name",
     .label = "-o, --output FILE",
     .help = "where to write the optimised model (default MODEL.opt.onnx)"},
    {.name = "--external-data", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.external_data), .what = "a file name",
     .label = "--external-data F",
     .help = "write its weights (tensors of 1 KiB and more) to F, a path\n"
     "relative to the output's directory (ONNX external data);\n"
     "a model over 2 GiB goes to OUTPUT.data without it"},
    {.name = "--agent", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_agent,
     .label = "--agent A",
     .help = "wm (world-model agent, default), ppo (model-free PPO), or a\n"
     "search: taso (cost-bounded backtracking), greedy, random, exhaustive\n"
     "(every rewrite breadth-first: the optimum of a small graph)"},
    {.name = "--search", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_agent,
     .label = "--search S",
     .help = "the same as --agent S for taso, greedy, random or exhaustive"},
    {.name = "--save", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.save), .what = "a file name",
     .label = "--save FILE",
     .help = "wm/ppo: save the trained agent (checkpoint)"},
    {.name = "--load", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.load), .what = "a file name",
     .label = "--load FILE",
     .help = "load a trained agent (its checkpoint says wm or ppo; one trained\n"
     "over many models: rlflow-agent train) and run it without training:\n"
     "one greedy episode and --samples sampled ones, the best kept"},
    {.name = "--samples", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.samples), .lo = 0,
     .hi = 100000, .label = "--samples N",
     .help = "--load: sampled episodes after the greedy one (default 8)"},
    {.name = "--guide", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.guide), .lo = 0,
     .hi = 64, .label = "--guide K",
     .help = "--load, ppo: first a search the policy guides: each step prices\n"
     "every location of its K most likely rules and takes the cheapest\n"
     "when it lowers the cost, else the policy's own action (default 16;\n"
     "0: the policy's episodes alone)"},
    {.name = "--tau", .type = XF_CLI_F64, .off = offsetof(cli_options, opt.tau), .lo = 0,
     .label = "--tau T",
     .help = "wm: temperature of the dream's mixture sampling (default 1.0)"},
    {.name = "--backend", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_backend,
     .label = "--backend B",
     .help = "cost model: onednn (measured CPU kernels, default), analytic\n"
     "(roofline) or cudnn (GPU)"},
    {.name = "--cache", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.cache), .what = "a file name or 'none'", .allow_empty = 1,
     .label = "--cache FILE",
     .help = "operator cost cache (default $XDG_CACHE_HOME/rlflow/costs.db or\n"
     "~/.cache/rlflow/costs.db; 'none' keeps nothing)"},
    {.name = "--threads", .type = XF_CLI_THREADS, .off = offsetof(cli_options, opt.threads), .lo = 1,
     .label = "--threads N",
     .help = "CPU threads for measured kernels and latency, and ONNX Runtime's\n"
     "intra-op threads with --target ort (default 1; with --target\n"
     "ort: the machine's cores; at most 4 x them)"},
    {.name = "--target", .type = XF_CLI_CHOICE, .off = offsetof(cli_options, opt.target), .choices = targets, .values = target_values,
     .label = "--target T",
     .help = "where the model will run: none (default: the cost model decides)\n"
     "or ort (ONNX Runtime on CPU, all graph optimisations on: the\n"
     "search's cheapest candidates are timed there against MODEL in\n"
     "alternation and the fastest is written only when it beats MODEL\n"
     "beyond the measured noise, twice (when none does, the fastest\n"
     "of those it cannot tell from MODEL gets a run of its own\n"
     "against MODEL, four times as long); else MODEL is written\n"
     "unchanged)"},
    {.name = "--cost", .type = XF_CLI_CHOICE, .off = offsetof(cli_options, opt.fused_cost), .choices = costs,
     .label = "--cost C",
     .help = "what the search minimises: ops (default: the sum of operator\n"
     "costs on --backend) or fused (with --target ort: the graph's\n"
     "fused regions, each timed once in ONNX Runtime and kept in\n"
     "the cache, so rewrites are costed as the runtime fuses them)"},
    {.name = "--candidates", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.candidates), .lo = 1, .hi = 1000,
     .label = "--candidates N",
     .help = "--target ort: distinct models timed besides MODEL per search,\n"
     "each also in its unbatched layout where it differs (default 6)"},
    {.name = "--target-budget", .type = XF_CLI_F64, .off = offsetof(cli_options, target_budget), .lo = 0,
     .label = "--target-budget S",
     .help = "--target ort: seconds the target may take to weigh them\n"
     "(sharing the weights, racing, confirming; 0: no limit; given,\n"
     "it is kept unless --target-budget-max is given too; default\n"
     "90, grown for a large model, see below): candidates left when\n"
     "it runs out are not timed, and the report says how many"},
    {.name = "--target-budget-max", .type = XF_CLI_F64, .off = offsetof(cli_options, target_budget_max), .lo = 0,
     .label = "--target-budget-max S",
     .help = "--target ort: the most the budget grows to (default 300): to\n"
     "what racing 4 models (the start graph and the search's\n"
     "cheapest, both layouts) and confirming one take at MODEL's\n"
     "latency, measured first; a small model keeps 90 s, a\n"
     "BERT-base gets about 200 s (0: the budget is fixed)"},
    {.name = "--racing", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.racing), .lo = 1, .hi = 64,
     .label = "--racing N",
     .help = "--target ort: candidates timed at once against MODEL and a\n"
     "second session of it (default 1): N + 2 sessions are alive,\n"
     "sharing MODEL's weights; 2 times more candidates within the\n"
     "budget and holds a second candidate's folded weights"},
    {.name = "--finalists", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.finalists), .lo = 1, .hi = XF_ARBITER_FINALISTS_MAX,
     .label = "--finalists N",
     .help = "--target ort: when two or more candidates are faster than\n"
     "MODEL, the N fastest are timed again together against it\n"
     "(default 3; 1: none, the fastest is confirmed alone): of those\n"
     "the final cannot tell from the fastest, the cheapest by the\n"
     "cost model is written, so the choice does not follow the noise"},
    {.name = "--target-every", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.target_every), .lo = 1, .hi = 100000000,
     .label = "--target-every K",
     .help = "--target ort, wm/ppo: every K valid environment steps the graph\n"
     "is timed in the target and the reward gains its latency change\n"
     "(sparse real reward between the cost model's; default 50)"},
    {.name = "--alpha", .type = XF_CLI_F64, .off = offsetof(cli_options, opt.alpha), .lo = 1,
     .label = "--alpha A",
     .help = "taso: keep graphs costing less than A x best (default 1.05)"},
    {.name = "--budget", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_budget,
     .label = "--budget N|Ts",
     .help = "N: taso graphs expanded, greedy/random/ppo/wm environment steps\n"
     "(defaults 1000 / 20000); Ts (e.g. 120s): a time budget"},
    {.name = "--time-limit", .type = XF_CLI_F64, .off = offsetof(cli_options, opt.time_limit), .lo = 0,
     .label = "--time-limit S",
     .help = "stop after S seconds (default: none for searches, 120 for wm/ppo\n"
     "and for searches on --cost fused)"},
    {.name = "--locations", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.locations), .lo = 1, .hi = 1000000,
     .label = "--locations N",
     .help = "locations per rule considered (default 200)"},
    {.name = "--max-rule-size", .type = XF_CLI_INT, .off = offsetof(cli_options, opt.max_rule_size), .lo = 1, .hi = 1000,
     .label = "--max-rule-size N",
     .help = "use rules with at most N operators per side (default: all)"},
    {.name = "--no-derived-rules", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.derived_rules), .set = 0,
     .label = "--no-derived-rules",
     .help = "use only the proved rules, not the derived ones (xferverify:\n"
     "chains of proved rules, used as single actions, macro-actions,\n"
     "where their validity domain holds; the default uses them: the\n"
     "rules that bring a flatten in around a matmul are derived)"},
    {.name = "--derived-rules", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.derived_rules), .set = 1}, /* the default; kept for scripts */
    {.name = "--all-rules", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.rule_status), .set = -1,
     .label = "--all-rules",
     .help = "also use rules that are not proved (candidate/unknown): unsafe,\n"
     "only with the numerical check"},
    {.name = "--all-actions", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.all_actions), .set = 1,
     .label = "--all-actions",
     .help = "keep the actions that can never match this model (by default\n"
     "they are dropped, except with --save/--load)"},
    {.name = "--seed", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_seed,
     .label = "--seed N",
     .help = "random inputs, random search, agents' initialisation (default 1)"},
    {.name = "--rtol", .type = XF_CLI_F64, .off = offsetof(cli_options, opt.rtol), .lo = 0,
     .label = "--rtol R --atol A",
     .help = "numerical check tolerance |d| <= A + R*|ref| (1e-3, 1e-4)"},
    {.name = "--atol", .type = XF_CLI_F64, .off = offsetof(cli_options, opt.atol), .lo = 0},
    {.name = "--no-check", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.check), .set = 0,
     .label = "--no-check",
     .help = "write the model even if the numerical check fails or cannot run"},
    {.name = "--no-latency", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.latency), .set = 0,
     .label = "--no-latency",
     .help = "skip the end-to-end latency measurement on --backend (with\n"
     "--target ort it is skipped unless --latency asks for it: the\n"
     "target's latency is measured, and the backend's executor\n"
     "would hold every activation of both models at once)"},
    {.name = "--latency", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.latency), .set = 2,
     .label = "--latency",
     .help = "measure it with --target ort too"},
    {.name = "--no-layernorm-fusion", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.prepare.fuse_layernorm), .set = 0,
     .label = "--no-layernorm-fusion",
     .help = "keep layer norms written out operator by operator"},
    {.name = "--no-gelu-fusion", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.prepare.fuse_gelu), .set = 0,
     .label = "--no-gelu-fusion",
     .help = "keep the erf form of GELU written out operator by operator"},
    {.name = "--scalings", .type = XF_CLI_CHOICE, .off = offsetof(cli_options, scalings), .choices = scalings,
     .label = "--scalings S",
     .help = "Mul/Div by scalar constants: moved (made scalar_mul, which the\n"
     "rules move into weights), kept (as exported: ONNX Runtime fuses\n"
     "GELU's x0.5 and attention's 1/sqrt(d) itself, and moving them\n"
     "can defeat those fusions) or both (default: with --target ort\n"
     "and a search, the model is searched both ways and the target\n"
     "times both searches' candidates; otherwise moved)"},
    {.name = "--passes", .type = XF_CLI_CHOICE, .off = offsetof(cli_options, opt.passes), .choices = passes,
     .label = "--passes P",
     .help = "what rewrites the model: rules (only the proved rules; a\n"
     "Gather of one position becomes a slice they can move),\n"
     "expert (the hand-written passes alone: narrowing, the split\n"
     "layout, the unbatched layout the target times; no rule, no\n"
     "rules database) or both (the passes and the proved rules;\n"
     "the default)"},
    {.name = "--no-lookahead", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.lookahead), .set = 0,
     .label = "--no-lookahead",
     .help = "searches value an action with a reshape or a slice by the\n"
     "graph it makes, not after the view moves it enables; the\n"
     "learning agents' steps are not followed by those moves"},
    {.name = "--no-polish", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.polish), .set = 0,
     .label = "--no-polish",
     .help = "wm/ppo: training does not end with the greedy polish of the\n"
     "agent's best graph (by default, once the budget is spent, the\n"
     "cheapest priced rewrite is taken while it lowers the cost; the\n"
     "report gives the agent's own cost beside it)"},
    {.name = "--no-narrow", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.prepare.narrow), .set = 0,
     .label = "--no-narrow",
     .help = "compute every position even where the model reads only one\n"
     "(by default a Gather of one position, e.g. a ViT's class\n"
     "token, moves up so the others are not computed)"},
    {.name = "--no-split-layout", .type = XF_CLI_FLAG, .off = offsetof(cli_options, opt.prepare.split_layout), .set = 0,
     .label = "--no-split-layout",
     .help = "keep each part of a split reshaped and transposed on its own\n"
     "(by default a merged Q/K/V is taken to heads once, before\n"
     "it is split)"},
    {.name = "--dim", .type = XF_CLI_DIM, .off = offsetof(cli_options, dims),
     .label = "--dim NAME=N",
     .help = "size of a symbolic input dimension (default: from --data,\n"
     "else 1 where the model imports with it, else the smallest\n"
     "power of two at which it does; the sizes chosen are said)"},
    {.name = "--data", .type = XF_CLI_STR, .off = offsetof(cli_options, opt.data), .what = "a directory", .allow_empty = 1,
     .label = "--data DIR",
     .help = "an ONNX test_data_set (DIR/input_K.pb): the sizes of the\n"
     "symbolic dims not given by --dim are taken from its inputs"},
    {.name = "--mem-limit", .type = XF_CLI_STR, .off = offsetof(cli_options, mem_limit), .what = "a size", .allow_empty = 1,
     .label = "--mem-limit SIZE",
     .help = "most bytes of tensors a run or a measurement may take, e.g.\n"
     "512M, 8G (default: $RLFLOW_MEM_LIMIT, else half of the memory);\n"
     "with --target ort also what the target's sessions may take\n"
     "(fewer candidates at once, or none timed, and it says so)"},
    {.name = "--quiet", .alias = "-q", .type = XF_CLI_FLAG, .off = offsetof(cli_options, quiet), .set = 1,
     .label = "-q, --quiet",
     .help = "no progress line"},
    {.name = "--report", .type = XF_CLI_STR, .off = offsetof(cli_options, report), .what = "a directory",
     .label = "--report DIR",
     .help = "also write a page of what the optimisation did to DIR/index.html\n"
     "(latency and memory before and after, each rewrite with its\n"
     "source and picture, the search's progress, the arbiter's table;\n"
     "static HTML, opens from file://)"},
    {.name = "--verbose", .alias = "-v", .type = XF_CLI_FLAG, .off = offsetof(cli_options, verbose), .set = 1,
     .label = "-v, --verbose",
     .help = "list the applicable rules of the model before searching"},
};

static int default_output(cli_options *o)
{
    const char *m = o->model;
    size_t n = strlen(m);
    if (n > 5 && strcmp(m + n - 5, ".onnx") == 0) n -= 5;
    if (n + 10 > sizeof o->output_buf) {
        fprintf(stderr, "rlflow-agent: model path too long; give -o\n");
        return 2;
    }
    memcpy(o->output_buf, m, n);
    memcpy(o->output_buf + n, ".opt.onnx", 10);
    o->output = o->output_buf;
    return 0;
}

int cli_parse(int argc, char **argv, cli_options *o)
{
    memset(o, 0, sizeof *o);
    o->opt = xf_optimize_options_default();
    o->scalings = 2; /* both */
    o->target_budget = o->target_budget_max = -1;
    xf_optimize_options *p = &o->opt;
    xf_cli_spec spec = {
        .tool = "rlflow-agent",
        .head = usage_head,
        .tail = usage_tail,
        .opts = opts,
        .n_opts = (int)(sizeof opts / sizeof opts[0]),
        .positional = &o->model,
        .n_positional = 1,
        .base = o,
    };
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc) return rc;
    p->scalings_both = o->scalings == 2;
    /* a budget given is kept, unless a most is given too */
    if (o->target_budget >= 0) p->target_budget = p->target_budget_max = o->target_budget;
    if (o->target_budget_max >= 0) p->target_budget_max = o->target_budget_max;
    p->prepare.scalar_mul = o->scalings != 1;
    if (o->make_rules) {
        if (!o->model) return 0;
        fprintf(stderr, "rlflow-agent: --make-rules reads no model\n");
        return 2;
    }
    if (!o->model) {
        fprintf(stderr, "rlflow-agent: no model given\n");
        xf_cli_usage(&spec, stderr);
        return 2;
    }
    char msg[256];
    if (xf_cli_mem_limit(o->mem_limit, msg, sizeof msg) != 0) {
        fprintf(stderr, "rlflow-agent: %s\n", msg);
        return 2;
    }
    p->n_dims = o->dims.n;
    p->dim_names = o->dims.names;
    p->dim_values = o->dims.values;
    if (!o->output) return default_output(o);
    return 0;
}
