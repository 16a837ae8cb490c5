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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx/onnx.h"
#include "modelzoo/modelzoo.h"

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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: modelzoo LIST\n"
            "       modelzoo MODEL [--OPTION N]... [--seed N] [--external-data DATA] -o FILE\n"
            "       modelzoo --help\n"
            "\n"
            "Writes MODEL as an ONNX file with random weights drawn from --seed\n"
            "(the same arguments always give the same bytes).\n"
            "\n"
            "options (which ones a model takes, and their defaults: modelzoo LIST):\n");
    for (int o = 0; o < XF_ZOO_OPT_COUNT; o++) {
        const xf_zoo_option *opt = xf_modelzoo_option((xf_zoo_opt)o);
        fprintf(f, "  %-10s N  %s\n", opt->flag, opt->help);
    }
    fprintf(f, "  %-10s N  %s\n", "--seed", "seed of the random weights (default 0)");
    fprintf(f, "  %-13s %s\n", "-o FILE", "where to write the model");
    fprintf(f, "  --external-data DATA\n"
               "                write the weights (tensors of 1 KiB and more) to DATA, a path\n"
               "                relative to FILE's directory (ONNX external data); a model\n"
               "                over 2 GiB goes to FILE.data without it\n");
    fprintf(f, "\nexit status: 0 written, 1 could not build or write, 2 usage error\n");
}

/* Parses all of `s` as a decimal integer in [lo, hi]. */
static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_seed(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (s[0] == '-') return 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') return 0;
    *out = v;
    return 1;
}

/* Fills *c and *path from the arguments after the model name; prints the
 * problem and returns 0 on a usage error. */
static int parse_args(const xf_zoo_model *m, int argc, char **argv, xf_zoo_config *c,
                      const char **path, xf_onnx_save_options *so)
{
    xf_modelzoo_config_init(c, m);
    *path = NULL;
    *so = xf_onnx_default_save_options();
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-') {
            fprintf(stderr, "modelzoo: unexpected argument '%s'\n", arg);
            return 0;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "modelzoo: %s needs a value\n", arg);
            return 0;
        }
        const char *val = argv[++i];
        if (!*val && (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0 ||
                      strcmp(arg, "--external-data") == 0)) {
            fprintf(stderr, "modelzoo: %s needs a file name, got ''\n", arg);
            return 0;
        }
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            *path = val;
            continue;
        }
        if (strcmp(arg, "--external-data") == 0) {
            so->external_data = val;
            continue;
        }
        if (strcmp(arg, "--seed") == 0) {
            if (parse_seed(val, &c->seed)) continue;
            fprintf(stderr, "modelzoo: --seed '%s' is not a non-negative integer\n", val);
            return 0;
        }
        xf_zoo_opt o = xf_modelzoo_option_find(arg);
        if (o == XF_ZOO_OPT_COUNT || m->defaults[o] == 0) {
            fprintf(stderr, "modelzoo: %s does not take the option '%s' (see 'modelzoo LIST')\n",
                    m->name, arg);
            return 0;
        }
        long long v;
        const xf_zoo_option *opt = xf_modelzoo_option(o);
        if (!parse_int(val, 1, opt->max, &v)) {
            fprintf(stderr, "modelzoo: %s '%s' must be an integer from 1 to %lld\n", arg, val,
                    (long long)opt->max);
            return 0;
        }
        c->v[o] = v;
    }
    if (!*path) {
        fprintf(stderr, "modelzoo: no output file (-o FILE)\n");
        return 0;
    }
    return 1;
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
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
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
    xf_zoo_config c;
    const char *path;
    xf_onnx_save_options so;
    if (!parse_args(m, argc - 2, argv + 2, &c, &path, &so)) return EXIT_USAGE;
    return write_model(m, &c, path, &so);
}
