/*
 * train.c — `rlflow-agent train`: one learning agent trained over many
 * models and saved, for `rlflow-agent --load CKPT MODEL` to optimise models
 * it never saw without training. Parses its options, calls the library
 * (optimize/optimize.h, xf_train_agent) and prints progress (stderr) and
 * what was learnt on each model (stdout).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAX_MODELS 256

typedef struct train_cli {
    xf_train_options opt;
    const char *models[MAX_MODELS];
    int n_models;
    const char *positional[MAX_MODELS];
    int quiet;
    int target;          /* --target ort */
    cli_options rules;   /* the default rules' lookup */
} train_cli;

static int parse_models(void *base, const char *name, const char *value, char *msg, size_t n)
{
    train_cli *t = base;
    if (!value || !*value) return xf_cli_needs(msg, n, name, "a model file or directory", value);
    if (t->n_models == MAX_MODELS) {
        snprintf(msg, n, "rlflow-agent train: at most %d --models", MAX_MODELS);
        return -1;
    }
    t->models[t->n_models++] = value;
    return 0;
}

static int parse_agent(void *base, const char *name, const char *value, char *msg, size_t n)
{
    train_cli *t = base;
    if (value && !strcmp(value, "ppo")) t->opt.agent = XF_OPTIMIZE_PPO;
    else if (value && !strcmp(value, "wm")) t->opt.agent = XF_OPTIMIZE_WM;
    else return xf_cli_needs(msg, n, name, "ppo or wm", value);
    return 0;
}

static int parse_backend(void *base, const char *name, const char *value, char *msg, size_t n)
{
    train_cli *t = base;
    if (value && xf_cost_backend_parse(value, &t->opt.backend, NULL) == XF_OK) return 0;
    return xf_cli_needs(msg, n, name, "onednn, analytic or cudnn", value);
}

static const char *const targets[] = {"none", "ort", NULL};
static const int target_values[] = {0, 1};

static const xf_cli_opt opts[] = {
    {.name = "--models", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_models,
     .label = "--models PATH",
     .help = "a model to train on, or a directory: every *.onnx under it\n"
     "(three levels down; *.opt.onnx left out); repeat it, or name\n"
     "models after the options"},
    {.name = "--save", .type = XF_CLI_STR, .off = offsetof(train_cli, opt.save),
     .what = "a file name", .label = "--save CKPT", .help = "the checkpoint to write (required)"},
    {.name = "--rules", .type = XF_CLI_STR, .off = offsetof(train_cli, opt.rules),
     .what = "a rules database", .label = "--rules RULES.db",
     .help = "the rules (default: the default rules database, as rlflow-agent)"},
    {.name = "--agent", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_agent,
     .label = "--agent A", .help = "ppo (model-free PPO, default) or wm (world model)"},
    {.name = "--seconds", .type = XF_CLI_F64, .off = offsetof(train_cli, opt.seconds), .lo = 0,
     .label = "--seconds S", .help = "training time (default 600; 0: until --steps)"},
    {.name = "--steps", .type = XF_CLI_I64, .off = offsetof(train_cli, opt.steps), .lo = 0,
     .label = "--steps N", .help = "real environment steps over all models (default: no bound)"},
    {.name = "--slice", .type = XF_CLI_I64, .off = offsetof(train_cli, opt.slice_steps), .lo = 0,
     .label = "--slice N",
     .help = "ppo: steps on one model before the next (default 600: one\n"
     "update and a greedy episode); wm: one round per model"},
    {.name = "--warmup", .type = XF_CLI_INT, .off = offsetof(train_cli, opt.warmup_steps),
     .lo = 0, .hi = 1000000, .label = "--warmup N",
     .help = "random steps per model finding the rules it offers (200)"},
    {.name = "--max-actions", .type = XF_CLI_INT, .off = offsetof(train_cli, opt.max_actions),
     .lo = 0, .hi = 1 << 20, .label = "--max-actions N",
     .help = "cap of the agent's action set, the most offered rules (512)"},
    {.name = "--locations", .type = XF_CLI_INT, .off = offsetof(train_cli, opt.locations),
     .lo = 1, .hi = 65535, .label = "--locations N",
     .help = "locations per rule (200; --load must use the same)"},
    {.name = "--target", .type = XF_CLI_CHOICE, .off = offsetof(train_cli, target),
     .choices = targets, .values = target_values, .label = "--target none|ort",
     .help = "ort: cost layouts as ONNX Runtime runs them, as\n"
     "rlflow-agent --target ort does (nothing is timed in it)"},
    {.name = "--seed", .type = XF_CLI_U64, .off = offsetof(train_cli, opt.seed),
     .label = "--seed N", .help = "the agent's initialisation and the order of models (1)"},
    {.name = "--backend", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_backend,
     .label = "--backend B", .help = "cost model: onednn (default), analytic or cudnn"},
    {.name = "--cache", .type = XF_CLI_STR, .off = offsetof(train_cli, opt.cache),
     .what = "a file name or 'none'", .label = "--cache FILE",
     .help = "operator cost cache (as rlflow-agent)"},
    {.name = "--quiet", .alias = "-q", .type = XF_CLI_FLAG, .off = offsetof(train_cli, quiet),
     .set = 1, .label = "-q, --quiet", .help = "no progress line"},
};

static const char head[] =
    "usage: rlflow-agent train --save CKPT [--models PATH]... [MODEL|DIR]... [options]\n\n"
    "Trains one learning agent over many models (episodes drawn across them)\n"
    "and saves it; 'rlflow-agent --load CKPT MODEL.onnx' then optimises a model\n"
    "it never saw, without training. The agent's actions are the rules offered\n"
    "on any training model (by rule id); on another model, a rule it cannot\n"
    "match is unavailable, and a rule the agent never saw is not used.\n\n";
static const char tail[] =
    "\nexit status: 0 trained and saved; 1 training or saving failed; 2 bad usage,\n"
    "a model, directory or rules database that cannot be read\n";

static void progress(void *user, const xf_rl_train_progress *p)
{
    (void)user;
    fprintf(stderr,
            "\rtrain %-6s pass %lld  model %d/%d %s  steps %lld  %6.0f s  ETA %5.0f s  "
            "mean best %+.2f%%\033[K",
            p->phase, (long long)p->passes, p->model_index + 1, p->n_models, p->model,
            (long long)p->steps, p->seconds,
            p->eta_seconds < 0 ? 0 : p->eta_seconds, p->mean_gain);
    fflush(stderr);
}

static void note(void *user, xf_optimize_note_kind kind, const char *text)
{
    const train_cli *t = user;
    if (kind == XF_OPTIMIZE_STATUS && t->quiet) return;
    fprintf(stderr, "rlflow-agent train: %s\n", text);
}

static void print_report(const train_cli *t, const xf_train_report *r)
{
    const xf_rl_train_stats *s = &r->stats;
    printf("trained:   %s agent, %d models, %lld real steps in %.1f s (%lld passes, %lld "
           "slices; loading %.1f s)\n",
           t->opt.agent == XF_OPTIMIZE_WM ? "world-model" : "ppo", r->n_models,
           (long long)s->steps, s->seconds, (long long)s->passes, (long long)s->slices,
           r->load_seconds);
    printf("cost model: %s\n", r->cost_identity);
    printf("actions:   %d rules (the union of those offered on the models, by rule id)\n",
           s->act.M);
    for (int i = 0; i < r->n_models; i++) {
        double g = s->initial_ms[i] > 0
                       ? 100.0 * (s->best_ms[i] - s->initial_ms[i]) / s->initial_ms[i]
                       : 0;
        printf("model:     %s: %d nodes, %d rules, best %.4f -> %.4f ms (%+.2f%%), %d of the "
               "agent's actions unavailable\n",
               r->models[i], r->nodes[i], r->rules[i], s->initial_ms[i], s->best_ms[i], g,
               s->unavailable[i]);
    }
    printf("saved:     %s\n", t->opt.save);
}

int train_main(int argc, char **argv)
{
    static train_cli t;
    memset(&t, 0, sizeof t);
    t.opt = xf_train_options_default();
    xf_cli_spec spec = {
        .tool = "rlflow-agent train",
        .head = head,
        .tail = tail,
        .opts = opts,
        .n_opts = (int)(sizeof opts / sizeof opts[0]),
        .positional = t.positional,
        .n_positional = MAX_MODELS,
        .base = &t,
    };
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc < 0) return 0;
    if (rc) return rc;
    for (int i = 0; i < MAX_MODELS && t.positional[i]; i++) {
        if (t.n_models == MAX_MODELS) {
            fprintf(stderr, "rlflow-agent train: at most %d models\n", MAX_MODELS);
            return 2;
        }
        t.models[t.n_models++] = t.positional[i];
    }
    if (!t.opt.save || t.n_models == 0) {
        fprintf(stderr, "rlflow-agent train: %s\n",
                !t.opt.save ? "--save CKPT is required" : "no model given (--models PATH)");
        xf_cli_usage(&spec, stderr);
        return 2;
    }
    if (t.opt.seconds <= 0 && t.opt.steps <= 0) {
        fprintf(stderr, "rlflow-agent train: --seconds 0 needs --steps N\n");
        return 2;
    }
    if (!t.opt.rules) {
        t.rules.quiet = t.quiet;
        rc = find_default_rules(&t.rules);
        if (rc) return rc;
        t.opt.rules = t.rules.opt.rules;
    }
    t.opt.models = t.models;
    t.opt.n_models = t.n_models;
    t.opt.target_layout = t.target;
    t.opt.progress = t.quiet ? NULL : progress;
    t.opt.note = note;
    t.opt.user = &t;
    xf_train_report r;
    xf_train_report_init(&r);
    xf_error err = {0};
    rc = 0;
    if (xf_train_agent(&t.opt, &r, &err) != XF_OK) {
        if (!t.quiet) fprintf(stderr, "\n");
        fprintf(stderr, "rlflow-agent train: %s\n", err.msg);
        rc = err.code == XF_ERR_IO || err.code == XF_ERR_PARSE ? 2 : 1;
    } else {
        if (!t.quiet) fprintf(stderr, "\n");
        print_report(&t, &r);
    }
    xf_train_report_free(&r);
    return rc;
}
