/*
 * main.c — the `modelzoo` command: writes one of the zoo's models (built
 * by the modelzoo module, modelzoo/modelzoo.h) as an ONNX file with
 * deterministic random weights, for tests, benchmarks and the agent when no
 * trained model is at hand.
 *
 *   modelzoo LIST                      the models, their options, defaults
 *   modelzoo --help
 *   modelzoo MODEL [--OPTION N]... [--seed N] [--external-data DATA] -o FILE
 *
 * Exit status: 0 written; 1 the model could not be built or written;
 * 2 usage error (unknown model or option, bad value, sizes that do not
 * fit the architecture).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx/onnx.h"
#include "modelzoo/modelzoo.h"
#include "tools/cli/cli.h"

#define EXIT_USAGE 2

static void print_model(FILE *f, const xf_zoo_model *m)
{
    fprintf(f, "%-12s %s\n", m->name, m->summary);
    fprintf(f, "%-12s", "");
    for (int o = 0; o < XF_ZOO_OPT_COUNT; o++)
        if (m->defaults[o])
            fprintf(f, " %s %lld", xf_modelzoo_option((xf_zoo_opt)o)->flag,
                    (long long)m->defaults[o]);
    fprintf(f, "\n");
}

static void list_models(void)
{
    for (int i = 0; i < xf_modelzoo_model_count(); i++)
        print_model(stdout, xf_modelzoo_model_at(i));
    printf("every model also takes --seed N (default 0) and -o FILE\n");
}

/* The command line after MODEL: the model's sizes, the seed, where to write. */
typedef struct args {
    xf_zoo_config c;
    xf_onnx_save_options so;
    const char *path;
} args;

#define N_FIXED 3
#define N_OPTS (XF_ZOO_OPT_COUNT + N_FIXED)

static const char help_head[] =
    "usage: modelzoo LIST\n"
    "       modelzoo MODEL [--OPTION N]... [--seed N] [--external-data DATA] -o FILE\n"
    "       modelzoo --help\n"
    "\n"
    "Writes MODEL as an ONNX file with random weights drawn from --seed\n"
    "(the same arguments always give the same bytes).\n"
    "\n"
    "options (which ones a model takes, and their defaults: modelzoo LIST):\n";
static const char help_tail[] =
    "\nexit status: 0 written, 1 could not build or write, 2 usage error\n";

/* The table: every size option of the zoo (modelzoo.h), then the seed, the
 * output and its external data. labels: buffers for the size options'
 * labels and what their values must be. */
static void make_spec(args *a, xf_cli_opt *opts, char (*labels)[2][48], unsigned char *seen,
                      xf_cli_spec *spec)
{
    for (int o = 0; o < XF_ZOO_OPT_COUNT; o++) {
        const xf_zoo_option *zo = xf_modelzoo_option((xf_zoo_opt)o);
        snprintf(labels[o][0], 48, "%s N", zo->flag);
        snprintf(labels[o][1], 48, "an integer from 1 to %lld", (long long)zo->max);
        opts[o] = (xf_cli_opt){.name = zo->flag, .type = XF_CLI_I64,
                               .off = offsetof(args, c.v) + (size_t)o * sizeof(int64_t),
                               .lo = 1, .hi = (double)zo->max, .what = labels[o][1], .label = labels[o][0],
                               .help = zo->help};
    }
    opts[XF_ZOO_OPT_COUNT] = (xf_cli_opt){
        .name = "--seed", .type = XF_CLI_U64, .off = offsetof(args, c.seed),
        .what = "a non-negative integer", .label = "--seed N",
        .help = "seed of the random weights (default 0)"};
    opts[XF_ZOO_OPT_COUNT + 1] = (xf_cli_opt){
        .name = "--output", .alias = "-o", .type = XF_CLI_STR, .off = offsetof(args, path),
        .what = "a file name", .label = "-o FILE", .help = "where to write the model"};
    opts[XF_ZOO_OPT_COUNT + 2] = (xf_cli_opt){
        .name = "--external-data", .type = XF_CLI_STR, .off = offsetof(args, so.external_data),
        .what = "a file name", .label = "--external-data DATA",
        .help = "write the weights (tensors of 1 KiB and more) to DATA, a path\n"
                "relative to FILE's directory (ONNX external data); a model\n"
                "over 2 GiB goes to FILE.data without it"};
    *spec = (xf_cli_spec){"modelzoo", help_head, help_tail, opts, N_OPTS, NULL, 0, a, seen};
}

/* Fills a from argv[1..] (argv[0] is the model name); the exit status of a
 * usage error, or 0. */
static int parse_args(const xf_zoo_model *m, int argc, char **argv, args *a)
{
    xf_modelzoo_config_init(&a->c, m);
    a->so = xf_onnx_default_save_options();
    a->path = NULL;
    xf_cli_opt opts[N_OPTS];
    char labels[XF_ZOO_OPT_COUNT][2][48];
    unsigned char seen[N_OPTS] = {0};
    xf_cli_spec spec;
    make_spec(a, opts, labels, seen, &spec);
    int rc = xf_cli_parse(&spec, argc, argv); /* argv[0]: the model name */
    if (rc) return rc < 0 ? -1 : rc;
    for (int o = 0; o < XF_ZOO_OPT_COUNT; o++)
        if (seen[o] && m->defaults[o] == 0) {
            fprintf(stderr, "modelzoo: %s does not take the option '%s' (see 'modelzoo LIST')\n",
                    m->name, opts[o].name);
            return EXIT_USAGE;
        }
    if (!a->path) {
        fprintf(stderr, "modelzoo: no output file (-o FILE)\n");
        return EXIT_USAGE;
    }
    return 0;
}

static int write_model(const xf_zoo_model *m, const xf_zoo_config *c, const char *path,
                       const xf_onnx_save_options *so)
{
    xf_graph g;
    xf_error err;
    xf_status st = xf_modelzoo_build(m, c, &g, &err);
    if (st != XF_OK) {
        int usage_error = st == XF_ERR_INVALID || st == XF_ERR_SHAPE;
        fprintf(stderr, "modelzoo: %s: %s%s\n", m->name,
                usage_error ? "these sizes do not fit the architecture: " : "", err.msg);
        return usage_error ? EXIT_USAGE : 1;
    }
    xf_onnx_writer *w = NULL;
    st = xf_onnx_writer_open(&g, path, so, &w, &err);
    if (st == XF_OK) st = xf_onnx_writer_commit(w, &err);
    if (st != XF_OK) {
        fprintf(stderr, "modelzoo: %s\n", err.msg);
        xf_onnx_writer_free(w);
        xf_graph_free(&g);
        return 1;
    }
    struct stat sb;
    printf("wrote %s: %s, %d nodes, %lld parameters", path, m->name, g.n_nodes,
           xf_modelzoo_param_count(&g));
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) printf(", %lld bytes", (long long)sb.st_size);
    uint64_t data_bytes;
    const char *location;
    xf_onnx_writer_sizes(w, NULL, &data_bytes, &location);
    if (location)
        printf(", weights in external data '%s' (%llu bytes)", location,
               (unsigned long long)data_bytes);
    printf("\n");
    xf_onnx_writer_free(w);
    xf_graph_free(&g);
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    xf_cli_opt opts[N_OPTS];
    char labels[XF_ZOO_OPT_COUNT][2][48];
    xf_cli_spec spec;
    make_spec(&a, opts, labels, NULL, &spec);
    if (argc < 2) {
        xf_cli_usage(&spec, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        xf_cli_usage(&spec, stdout);
        return 0;
    }
    if (strcmp(argv[1], "LIST") == 0) {
        if (argc > 2) {
            fprintf(stderr, "modelzoo: LIST takes no arguments\n");
            return EXIT_USAGE;
        }
        list_models();
        return 0;
    }
    const xf_zoo_model *m = xf_modelzoo_model_find(argv[1]);
    if (!m) {
        fprintf(stderr, "modelzoo: unknown model '%s'; models:", argv[1]);
        for (int i = 0; i < xf_modelzoo_model_count(); i++)
            fprintf(stderr, " %s", xf_modelzoo_model_at(i)->name);
        fprintf(stderr, " (modelzoo --help for usage)\n");
        return EXIT_USAGE;
    }
    int rc = parse_args(m, argc - 1, argv + 1, &a);
    if (rc) return rc < 0 ? 0 : rc;
    return write_model(m, &a.c, a.path, &a.so);
}
