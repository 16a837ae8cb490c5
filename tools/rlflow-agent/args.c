/*
 * args.c — rlflow-agent's command line: options, defaults and --help.
 */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rlflow-agent --rules RULES.db MODEL.onnx [options]\n"
            "\n"
            "Optimises MODEL with the proved rewrite rules of RULES.db: searches for a cheaper\n"
            "graph under the cost model, folds the weights the rules created, checks that the\n"
            "optimised model computes the same outputs as MODEL on random inputs, writes it as\n"
            "ONNX and reports cost, measured latency, output error and the rules applied.\n"
            "\n"
            "options:\n"
            "  --rules FILE       rules database (xfergen + xferverify); required\n"
            "  -o, --output FILE  where to write the optimised model (default MODEL.opt.onnx)\n"
            "  --external-data F  write its weights (tensors of 1 KiB and more) to F, a path\n"
            "                     relative to the output's directory (ONNX external data);\n"
            "                     a model over 2 GiB goes to OUTPUT.data without it\n"
            "  --agent A          wm (world-model agent, default), ppo (model-free PPO), or a\n"
            "                     search: taso (cost-bounded backtracking), greedy, random\n"
            "  --search S         the same as --agent S for taso, greedy or random\n"
            "  --save FILE        wm/ppo: save the trained agent (checkpoint)\n"
            "  --load FILE        wm/ppo: load a trained agent and run it greedily, no training\n"
            "  --tau T            wm: temperature of the dream's mixture sampling (default 1.0)\n"
            "  --backend B        cost model: onednn (measured CPU kernels, default), analytic\n"
            "                     (roofline) or cudnn (GPU)\n"
            "  --cache FILE       operator cost cache (default $XDG_CACHE_HOME/rlflow/costs.db or\n"
            "                     ~/.cache/rlflow/costs.db; 'none' keeps nothing)\n"
            "  --threads N        CPU threads for measured kernels and latency, and ONNX Runtime's\n"
            "                     intra-op threads with --target ort (default 1; with --target\n"
            "                     ort: the machine's cores; at most 4 x them)\n"
            "  --target T         where the model will run: none (default: the cost model decides)\n"
            "                     or ort (ONNX Runtime on CPU, all graph optimisations on: the\n"
            "                     search's cheapest candidates are timed there against MODEL in\n"
            "                     alternation and the fastest is written only when it beats MODEL\n"
            "                     beyond the measured noise, twice (when none does, the fastest\n"
            "                     of those it cannot tell from MODEL gets a run of its own\n"
            "                     against MODEL, four times as long); else MODEL is written\n"
            "                     unchanged)\n"
            "  --cost C           what the search minimises: ops (default: the sum of operator\n"
            "                     costs on --backend) or fused (with --target ort: the graph's\n"
            "                     fused regions, each timed once in ONNX Runtime and kept in\n"
            "                     the cache, so rewrites are costed as the runtime fuses them)\n"
            "  --candidates N     --target ort: distinct models timed besides MODEL per search,\n"
            "                     each also in its unbatched layout where it differs (default 6)\n"
            "  --target-budget S  --target ort: seconds the target may take to weigh them\n"
            "                     (sharing the weights, racing, confirming; default 90; 0: no\n"
            "                     limit): candidates left when it runs out are not timed, and\n"
            "                     the report says how many\n"
            "  --racing N         --target ort: candidates timed at once against MODEL and a\n"
            "                     second session of it (default 1): N + 2 sessions are alive,\n"
            "                     sharing MODEL's weights; 2 times more candidates within the\n"
            "                     budget and holds a second candidate's folded weights\n"
            "  --target-every K   --target ort, wm/ppo: every K valid environment steps the graph\n"
            "                     is timed in the target and the reward gains its latency change\n"
            "                     (sparse real reward between the cost model's; default 50)\n"
            "  --alpha A          taso: keep graphs costing less than A x best (default 1.05)\n"
            "  --budget N|Ts      N: taso graphs expanded, greedy/random/ppo/wm environment steps\n"
            "                     (defaults 1000 / 20000); Ts (e.g. 120s): a time budget\n"
            "  --time-limit S     stop after S seconds (default: none for searches, 120 for wm/ppo\n"
            "                     and for searches on --cost fused)\n"
            "  --locations N      locations per rule considered (default 200)\n"
            "  --max-rule-size N  use rules with at most N operators per side (default: all)\n"
            "  --no-derived-rules use only the proved rules, not the derived ones (xferverify:\n"
            "                     chains of proved rules, used as single actions, macro-actions,\n"
            "                     where their validity domain holds; the default uses them: the\n"
            "                     rules that bring a flatten in around a matmul are derived)\n"
            "  --all-rules        also use rules that are not proved (candidate/unknown): unsafe,\n"
            "                     only with the numerical check\n"
            "  --all-actions      keep the actions that can never match this model (by default\n"
            "                     they are dropped, except with --save/--load)\n"
            "  --seed N           random inputs, random search, agents' initialisation (default 1)\n"
            "  --rtol R --atol A  numerical check tolerance |d| <= A + R*|ref| (1e-3, 1e-4)\n"
            "  --no-check         write the model even if the numerical check fails or cannot run\n"
            "  --no-latency       skip the end-to-end latency measurement on --backend (with\n"
            "                     --target ort it is skipped unless --latency asks for it: the\n"
            "                     target's latency is measured, and the backend's executor\n"
            "                     would hold every activation of both models at once)\n"
            "  --latency          measure it with --target ort too\n"
            "  --no-layernorm-fusion  keep layer norms written out operator by operator\n"
            "  --scalings S       Mul/Div by scalar constants: moved (made scalar_mul, which the\n"
            "                     rules move into weights), kept (as exported: ONNX Runtime fuses\n"
            "                     GELU's x0.5 and attention's 1/sqrt(d) itself, and moving them\n"
            "                     can defeat those fusions) or both (default: with --target ort\n"
            "                     and a search, the model is searched both ways and the target\n"
            "                     times both searches' candidates; otherwise moved)\n"
            "  --passes P         what rewrites the model: rules (only the proved rules; a\n"
            "                     Gather of one position becomes a slice they can move),\n"
            "                     expert (the hand-written passes as well: narrowing, the\n"
            "                     split layout, the unbatched layout the target times) or\n"
            "                     both (default: both)\n"
            "  --no-lookahead     searches value an action with a reshape or a slice by the\n"
            "                     graph it makes, not after the view moves it enables\n"
            "  --no-narrow        compute every position even where the model reads only one\n"
            "                     (by default a Gather of one position, e.g. a ViT's class\n"
            "                     token, moves up so the others are not computed)\n"
            "  --no-split-layout  keep each part of a split reshaped and transposed on its own\n"
            "                     (by default a merged Q/K/V is taken to heads once, before\n"
            "                     it is split)\n"
            "  --dim NAME=N       size of a symbolic input dimension (default: from --data,\n"
            "                     else 1 where the model imports with it, else the smallest\n"
            "                     power of two at which it does; the sizes chosen are said)\n"
            "  --data DIR         an ONNX test_data_set (DIR/input_K.pb): the sizes of the\n"
            "                     symbolic dims not given by --dim are taken from its inputs\n"
            "  --mem-limit SIZE   most bytes of tensors a run or a measurement may take, e.g.\n"
            "                     512M, 8G (default: $RLFLOW_MEM_LIMIT, else half of the memory);\n"
            "                     with --target ort also what the target's sessions may take\n"
            "                     (fewer candidates at once, or none timed, and it says so)\n"
            "  -q, --quiet        no progress line\n"
            "  -v, --verbose      list the applicable rules of the model before searching\n"
            "  -h, --help         this help\n"
            "\n"
            "exit status: 0 written, 1 optimisation, check or write failed (nothing written),\n"
            "             2 bad usage, unreadable model or rules, unavailable backend\n");
}

static int bad(const char *opt, const char *what, const char *v)
{
    fprintf(stderr, "rlflow-agent: %s needs %s, got '%s'\n", opt, what, v ? v : "(nothing)");
    return 2;
}

static int parse_int(const char *opt, const char *v, long min, long max, int *out)
{
    int64_t x;
    if (xf_cli_parse_i64(v, min, max, &x) != 0) return bad(opt, "an integer in range", v);
    *out = (int)x;
    return 0;
}

static int parse_double(const char *opt, const char *v, double min, double *out)
{
    if (xf_cli_parse_f64(v, min, DBL_MAX, out) == 0) return 0;
    char what[64];
    snprintf(what, sizeof what, "a finite number >= %g", min);
    return bad(opt, what, v);
}

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
    xf_optimize_options *p = &o->opt;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0, takes = 1;
        xf_error err = {0};
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        } else if (!strcmp(a, "--rules")) {
            if (!next || !*next) return bad(a, "a file name", next);
            p->rules = next;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next || !*next) return bad(a, "a file name", next);
            o->output = next;
        } else if (!strcmp(a, "--external-data")) {
            if (!next || !*next) return bad(a, "a file name", next);
            p->external_data = next;
        } else if (!strcmp(a, "--search") || !strcmp(a, "--agent")) {
            int is_agent = !strcmp(a, "--agent");
            if (is_agent && next && !strcmp(next, "wm")) {
                p->agent = XF_OPTIMIZE_WM;
            } else if (is_agent && next && !strcmp(next, "ppo")) {
                p->agent = XF_OPTIMIZE_PPO;
            } else if (next && xf_search_kind_parse(next, &p->search, &err) == XF_OK) {
                p->agent = XF_OPTIMIZE_SEARCH;
            } else {
                fprintf(stderr, "rlflow-agent: %s needs %s, got '%s'\n", a,
                        is_agent ? "wm, ppo, taso, greedy or random" : "taso, greedy or random",
                        next ? next : "(nothing)");
                return 2;
            }
        } else if (!strcmp(a, "--save") || !strcmp(a, "--load")) {
            if (!next || !*next) return bad(a, "a file name", next);
            if (a[2] == 's') p->save = next;
            else p->load = next;
        } else if (!strcmp(a, "--tau")) {
            rc = parse_double(a, next, 0.0, &p->tau);
        } else if (!strcmp(a, "--backend")) {
            if (!next || xf_cost_backend_parse(next, &p->backend, &err)) {
                fprintf(stderr, "rlflow-agent: %s\n", next ? err.msg : "--backend needs a value");
                return 2;
            }
        } else if (!strcmp(a, "--cache")) {
            if (!next) return bad(a, "a file name or 'none'", next);
            p->cache = next;
        } else if (!strcmp(a, "--threads")) {
            char msg[256];
            if (xf_cli_parse_threads(a, next, 1, &p->threads, msg, sizeof msg) != 0) {
                fprintf(stderr, "rlflow-agent: %s\n", msg);
                return 2;
            }
        } else if (!strcmp(a, "--target")) {
            if (next && !strcmp(next, "ort")) p->target = 1;
            else if (next && !strcmp(next, "none")) p->target = 0;
            else return bad(a, "ort or none", next);
        } else if (!strcmp(a, "--cost")) {
            if (next && !strcmp(next, "fused")) p->fused_cost = 1;
            else if (next && !strcmp(next, "ops")) p->fused_cost = 0;
            else return bad(a, "ops or fused", next);
        } else if (!strcmp(a, "--scalings")) {
            int both = next && !strcmp(next, "both"), moved = next && !strcmp(next, "moved");
            if (!both && !moved && !(next && !strcmp(next, "kept")))
                return bad(a, "moved, kept or both", next);
            p->scalings_both = both;
            p->prepare.scalar_mul = both || moved;
        } else if (!strcmp(a, "--passes")) {
            if (next && !strcmp(next, "rules")) p->passes = XF_OPTIMIZE_RULES;
            else if (next && !strcmp(next, "expert")) p->passes = XF_OPTIMIZE_EXPERT;
            else if (next && !strcmp(next, "both")) p->passes = XF_OPTIMIZE_BOTH;
            else return bad(a, "rules, expert or both", next);
        } else if (!strcmp(a, "--candidates")) {
            rc = parse_int(a, next, 1, 1000, &p->candidates);
        } else if (!strcmp(a, "--target-budget")) {
            rc = parse_double(a, next, 0, &p->target_budget);
        } else if (!strcmp(a, "--racing")) {
            rc = parse_int(a, next, 1, 64, &p->racing);
        } else if (!strcmp(a, "--target-every")) {
            rc = parse_int(a, next, 1, 100000000, &p->target_every);
        } else if (!strcmp(a, "--alpha")) {
            rc = parse_double(a, next, 1.0, &p->alpha);
        } else if (!strcmp(a, "--budget")) {
            size_t n = next ? strlen(next) : 0;
            if (n > 1 && next[n - 1] == 's') {
                char num[64];
                if (n >= sizeof num) return bad(a, "a count or a time such as 120s", next);
                memcpy(num, next, n - 1);
                num[n - 1] = '\0';
                if (xf_cli_parse_f64(num, 0.001, DBL_MAX, &p->time_limit) != 0)
                    return bad(a, "a count or a time such as 120s", next);
            } else {
                rc = parse_int(a, next, 1, 100000000, &p->budget);
            }
        } else if (!strcmp(a, "--time-limit")) {
            rc = parse_double(a, next, 0.0, &p->time_limit);
        } else if (!strcmp(a, "--locations")) {
            rc = parse_int(a, next, 1, 1000000, &p->locations);
        } else if (!strcmp(a, "--max-rule-size")) {
            rc = parse_int(a, next, 1, 1000, &p->max_rule_size);
        } else if (!strcmp(a, "--seed")) {
            int s = 0;
            rc = parse_int(a, next, 0, 2147483647, &s);
            p->seed = (uint64_t)s;
        } else if (!strcmp(a, "--rtol")) {
            rc = parse_double(a, next, 0.0, &p->rtol);
        } else if (!strcmp(a, "--atol")) {
            rc = parse_double(a, next, 0.0, &p->atol);
        } else if (!strcmp(a, "--dim")) {
            char msg[256];
            if (xf_cli_dims_add(&o->dims, next, msg, sizeof msg) != 0) {
                fprintf(stderr, "rlflow-agent: --dim %s\n", msg);
                return 2;
            }
        } else if (!strcmp(a, "--mem-limit")) {
            if (!next) return bad(a, "a size", next);
            o->mem_limit = next;
        } else if (!strcmp(a, "--data")) {
            if (!next) return bad(a, "a directory", next);
            p->data = next;
        } else {
            takes = 0;
            if (!strcmp(a, "--all-rules")) {
                p->rule_status = -1;
            } else if (!strcmp(a, "--derived-rules")) { /* the default; kept for scripts */
                p->derived_rules = 1;
            } else if (!strcmp(a, "--no-derived-rules")) {
                p->derived_rules = 0;
            } else if (!strcmp(a, "--all-actions")) {
                p->all_actions = 1;
            } else if (!strcmp(a, "--no-check")) {
                p->check = 0;
            } else if (!strcmp(a, "--no-latency")) {
                p->latency = 0;
            } else if (!strcmp(a, "--latency")) {
                p->latency = 2;
            } else if (!strcmp(a, "--no-layernorm-fusion")) {
                p->prepare.fuse_layernorm = 0;
            } else if (!strcmp(a, "--no-lookahead")) {
                p->lookahead = 0;
            } else if (!strcmp(a, "--no-narrow")) {
                p->prepare.narrow = 0;
            } else if (!strcmp(a, "--no-split-layout")) {
                p->prepare.split_layout = 0;
            } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
                o->quiet = 1;
            } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
                o->verbose = 1;
            } else if (a[0] == '-') {
                fprintf(stderr, "rlflow-agent: unknown option '%s' (see rlflow-agent --help)\n", a);
                return 2;
            } else if (!o->model) {
                o->model = a;
            } else {
                fprintf(stderr, "rlflow-agent: unexpected argument '%s'\n", a);
                return 2;
            }
        }
        if (rc) return rc;
        i += takes;
    }
    if (!o->model || !p->rules) {
        fprintf(stderr, "rlflow-agent: %s\n",
                !o->model ? "no model given" : "no rules database given (--rules FILE)");
        usage(stderr);
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
