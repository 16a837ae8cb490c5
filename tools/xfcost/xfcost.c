/*
 * xfcost — what an ONNX model costs on a backend, operator by operator, and
 * how long it really takes end to end.
 *
 *   xfcost MODEL [--backend analytic|onednn|cudnn] [--cache FILE] [--threads N]
 *                [--reps N] [--warmup N] [--dim NAME=N] [--no-run]
 *
 * Prints one line per operator (op, input and output shapes, parameters,
 * time, flops, bytes, kernels) in topological order, the estimated model cost
 * (the sum, TASO's model), then runs the whole model on the same backend and
 * prints the measured latency next to the estimate.
 *
 * Exit status: 0 success, 1 a measurement or the end-to-end run failed,
 * 2 bad usage, an unreadable model or an unavailable backend (one line on
 * stderr).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/costmodel.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "tools/cli/cli.h"


typedef struct options {
    const char *model, *cache, *mem_limit;
    xf_cost_backend backend;
    int threads, reps, warmup, run;
    xf_cli_dims dims;
} options;

static int parse_backend(void *user, const char *name, const char *v, char *msg, size_t n)
{
    xf_error err = {0};
    if (v && xf_cost_backend_parse(v, &((options *)user)->backend, &err) == XF_OK) return 0;
    snprintf(msg, n, "%s", v ? err.msg : "--backend needs a value");
    (void)name;
    return -1;
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    xf_cost_options d = xf_cost_options_default();
    o->backend = XF_COST_ANALYTIC;
    o->threads = d.threads;
    o->reps = d.reps;
    o->warmup = d.warmup;
    o->run = 1;
    const xf_cli_opt opts[] = {
        {.name = "--backend", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_backend,
         .label = "--backend B",
         .help = "analytic (roofline, default), onednn (CPU kernels) or cudnn (GPU)"},
        {.name = "--cache", .type = XF_CLI_STR, .off = offsetof(options, cache), .what = "a file name",
         .label = "--cache FILE",
         .help = "operator cost cache to read and extend (default\n"
                 "$XDG_CACHE_HOME/rlflow/costs.db or ~/.cache/rlflow/costs.db, as\n"
                 "rlflow-agent; 'none' keeps nothing)"},
        {.name = "--threads", .type = XF_CLI_THREADS, .off = offsetof(options, threads), .lo = 1,
         .label = "--threads N",
         .help = "CPU threads for measured kernels (default 1; at most 4 x the\n"
                 "online CPUs)"},
        {.name = "--reps", .type = XF_CLI_INT, .off = offsetof(options, reps), .lo = 1, .hi = 1000000,
         .what = "an integer >= 1", .label = "--reps N",
         .help = "timed repetitions per measurement, median reported (default 10)"},
        {.name = "--warmup", .type = XF_CLI_INT, .off = offsetof(options, warmup), .lo = 0, .hi = 1000000,
         .what = "an integer >= 0", .label = "--warmup N",
         .help = "untimed runs before timing (default 3)"},
        {.name = "--dim", .type = XF_CLI_DIM, .off = offsetof(options, dims), .label = "--dim NAME=N",
         .help = "size of a symbolic input dimension (default 1)"},
        {.name = "--mem-limit", .type = XF_CLI_STR, .off = offsetof(options, mem_limit), .what = "a size",
         .allow_empty = 1, .label = "--mem-limit SIZE",
         .help = "most bytes of tensors a measurement or the end-to-end run may\n"
                 "take, e.g. 512M, 8G (default: $RLFLOW_MEM_LIMIT, else half of\n"
                 "the memory)"},
        {.name = "--no-run", .type = XF_CLI_FLAG, .off = offsetof(options, run), .set = 0, .label = "--no-run",
         .help = "print the estimate only, skip the end-to-end run"},
    };
    xf_cli_spec spec = {
        .tool = "xfcost",
        .head = "usage: xfcost MODEL.onnx [options]\n"
                "\n"
                "Per-operator cost table (op, shapes, parameters, ms, flops, bytes, kernels), the\n"
                "model's estimated cost (sum of operators), then the measured end-to-end latency\n"
                "of the whole model on the same backend.\n"
                "\n"
                "options:\n",
        .tail = "  -h, --help         this help\n"
                "\n"
                "exit status: 0 ok, 1 a measurement or the end-to-end run failed,\n"
                "             2 bad usage, unreadable model or unavailable backend\n",
        .opts = opts,
        .n_opts = (int)(sizeof opts / sizeof opts[0]),
        .positional = &o->model,
        .n_positional = 1,
        .base = o,
    };
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc < 0) exit(0);
    if (rc) return rc;
    if (!o->model) {
        xf_cli_usage(&spec, stderr);
        return 2;
    }
    char msg[256];
    if (xf_cli_mem_limit(o->mem_limit, msg, sizeof msg) != 0) {
        fprintf(stderr, "xfcost: %s\n", msg);
        return 2;
    }
    return 0;
}

/* "f32[1,3,224,224],f32[64,3,7,7] -> f32[1,64,112,112]" */
static void node_shapes(const xf_graph *g, const xf_node *nd, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < nd->n_inputs + nd->n_outputs && len < n; k++) {
        int out = k >= nd->n_inputs;
        int v = out ? nd->outputs[k - nd->n_inputs] : nd->inputs[k];
        const char *sep = k == 0 ? "" : (k == nd->n_inputs ? " -> " : ",");
        char s[160];
        if (v < 0)
            len += (size_t)snprintf(buf + len, n - len, "%s-", sep);
        else
            len += (size_t)snprintf(buf + len, n - len, "%s%s%s", sep,
                                    xf_dtype_name(g->values[v].dtype),
                                    xf_shape_str(&g->values[v].shape, s, sizeof s));
    }
}

/* The parameter field of the canonical description ("-" when none). */
static void node_params(const xf_graph *g, const xf_node *nd, char *buf, size_t n)
{
    if (nd->op == XF_OP_OPAQUE) {
        snprintf(buf, n, "opaque %s", nd->opaque->op_type);
        return;
    }
    char desc[4096];
    xf_dtype dt[1] = {XF_F32};
    xf_shape sh[1] = {{0, {0}}};
    (void)g;
    snprintf(buf, n, "-");
    if (xf_cost_describe(nd->op, &nd->params, 0, dt, sh, desc, sizeof desc, NULL) != XF_OK) return;
    char *p = strchr(desc, '|'), *q = p ? strchr(p + 1, '|') : NULL;
    if (!p || !q || q == p + 1) return;
    *q = '\0';
    snprintf(buf, n, "%s", p + 1);
}

static int print_table(xf_cost_model *cm, const xf_graph *g, xf_op_cost *total)
{
    xf_error err = {0};
    xf_op_cost *per = xf_calloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1), sizeof *per);
    int *order = xf_calloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1), sizeof *order);
    if (!per || !order) {
        fprintf(stderr, "xfcost: out of memory\n");
        xf_free(per);
        xf_free(order);
        return 1;
    }
    int rc = 0;
    if (xf_graph_topo_order(g, order, &err) || xf_cost_graph(cm, g, total, per, &err)) {
        fprintf(stderr, "xfcost: %s\n", err.msg);
        rc = 1;
        goto out;
    }
    printf("%5s  %-16s %10s %10s %10s %3s  %-s  [%s]\n", "node", "op", "ms", "MFLOP", "MB", "k",
           "shapes", "params");
    for (int k = 0; k < g->n_nodes; k++) {
        int i = order[k];
        const xf_node *nd = &g->nodes[i];
        char shapes[1024], params[1024];
        node_shapes(g, nd, shapes, sizeof shapes);
        node_params(g, nd, params, sizeof params);
        const char *name = nd->op == XF_OP_OPAQUE ? nd->opaque->op_type : xf_op_get(nd->op)->name;
        printf("%5d  %-16s %10.4f %10.3f %10.3f %3d  %s  [%s]\n", i, name, per[i].ms,
               per[i].flops / 1e6, per[i].bytes / 1e6, per[i].kernels, shapes, params);
    }
out:
    xf_free(per);
    xf_free(order);
    return rc;
}

static int run_end_to_end(xf_cost_model *cm, const xf_graph *g, const options *o,
                          double estimate)
{
    xf_error err = {0};
    xf_exec *e = NULL;
    xf_tensor *in = xf_calloc((size_t)(g->n_inputs > 0 ? g->n_inputs : 1), sizeof *in);
    if (!in) {
        fprintf(stderr, "xfcost: out of memory\n");
        return 1;
    }
    int rc = 0;
    double ms = 0;
    xf_status st = xf_exec_prepare(cm, g, &e, &err);
    if (st == XF_ERR_UNSUPPORTED) {
        printf("end-to-end: not run: %s\n", err.msg);
        goto out;
    }
    if (!st) st = xf_graph_random_inputs(g, 1, in, &err);
    if (!st) st = xf_exec_latency(e, in, g->n_inputs, o->warmup, o->reps, &ms, &err);
    if (st) {
        fprintf(stderr, "xfcost: end-to-end run on %s failed: %s\n",
                xf_cost_backend_name(o->backend), err.msg);
        rc = 1;
        goto out;
    }
    printf("measured end-to-end: %.4f ms (median of %d runs after %d warm-up)\n", ms, o->reps,
           o->warmup);
    printf("estimate / measured: %.3f\n", ms > 0 ? estimate / ms : 0.0);
out:
    for (int i = 0; i < g->n_inputs; i++) xf_tensor_free(&in[i]);
    xf_free(in);
    xf_exec_free(e);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;

    xf_graph g;
    xf_graph_init(&g);
    xf_error err = {0};
    if (xf_outfile_protect(o.model, "the input model", &err) != XF_OK) { /* the cache is written */
        fprintf(stderr, "xfcost: %s\n", err.msg);
        return 2;
    }
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = o.dims.n;
    io.dim_names = o.dims.names;
    io.dim_values = o.dims.values;
    if (xf_onnx_load(o.model, &io, &g, &err)) {
        fprintf(stderr, "xfcost: %s\n", err.msg);
        xf_graph_free(&g);
        return 2;
    }
    xf_cost_options co = xf_cost_options_default();
    co.backend = o.backend;
    char cache[4096];
    co.cache_path = xf_cost_cache_path(o.cache, cache, sizeof cache);
    co.threads = o.threads;
    co.reps = o.reps;
    co.warmup = o.warmup;
    xf_cost_model *cm = NULL;
    if (xf_cost_open(&co, &cm, &err)) {
        fprintf(stderr, "xfcost: %s\n", err.msg);
        xf_graph_free(&g);
        return 2;
    }
    printf("model: %s (%d nodes)\nbackend: %s\n", o.model, g.n_nodes, xf_cost_identity(cm));
    xf_op_cost total;
    rc = print_table(cm, &g, &total);
    if (!rc) {
        printf("estimated cost: %.4f ms (sum of %d operators, %d kernels, %.3f GFLOP, %.3f MB)\n",
               total.ms, g.n_nodes, total.kernels, total.flops / 1e9, total.bytes / 1e6);
        int64_t measured = xf_cost_measurements(cm), disturbed = xf_cost_disturbed(cm),
                shared = xf_cost_shared(cm);
        printf("measurements: %lld new (%lld disturbed by other processes in every attempt, "
               "%lld timed while other tasks ran beside them: not cached), the rest from the "
               "cache\n",
               (long long)measured, (long long)disturbed, (long long)shared);
        if (2 * (disturbed + shared) > measured)
            printf("hint: most kernels were timed on a busy machine; run again on a quiet one "
                   "for costs the cache keeps\n");
        if (o.run) rc = run_end_to_end(cm, &g, &o, total.ms);
    }
    xf_cost_close(cm);
    xf_graph_free(&g);
    return rc;
}
