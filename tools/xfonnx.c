/*
 * xfonnx — inspect, run and round-trip ONNX models with rlflow's importer,
 * exporter and reference interpreter.
 *
 *   xfonnx info MODEL                      operator histogram, I/O, params, opaque ops
 *   xfonnx run MODEL [--data DIR]          run the interpreter; with DIR (ONNX
 *                                          test_data_set layout) compare outputs
 *   xfonnx roundtrip MODEL -o OUT          import -> export -> import, compare
 *     [--external-data FILE]               canonical hash and outputs (at three
 *                                          sizes of each symbolic input dim,
 *                                          which the written model keeps);
 *                                          weights in FILE (automatic over 2 GiB)
 *   xfonnx compare A B                     outputs of A and B in ONNX Runtime on
 *                                          the same random inputs (rtol of the
 *                                          largest |output|)
 *   xfonnx ort-optimize MODEL -o OUT       ONNX Runtime's offline optimisation
 *     [--opt extended|basic|all]           (default extended): com.microsoft
 *                                          fused operators, which rlflow reads
 *   xfonnx time A [B ...] [--threads N]    latency of each model in ONNX Runtime
 *                                          (CPU), timed alternately; ratio to A
 *                                          and its noise bound (target/target.h)
 *
 * Symbolic input dims not given with --dim are sized from --data (run), else
 * by onnx's size search (xf_onnx_sizes), and the sizes chosen are said.
 *
 * Exit status: 0 success, 1 a numerical or structural check failed,
 * 2 bad usage or a model that cannot be read (one-line error on stderr;
 * nothing is written).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx/onnx.h"
#include "target/target.h"
#include "tools/cli/cli.h"

#define MAX_TIMED 16


typedef struct options {
    const char *cmd, *model, *out, *data, *mem_limit, *external_data;
    double rtol, atol;
    uint64_t seed;
    xf_cli_dims dims;
    const char *pos[1 + MAX_TIMED]; /* COMMAND, then the models (time: up to MAX_TIMED) */
    const char **more;              /* time: models B, C, ... */
    int n_more;
    int threads, rounds, reps, opt, opt_given;
} options;

#define OFF(f) offsetof(options, f)
static const char *const opt_levels[] = {"all", "extended", "basic", "disabled", NULL};
static const int opt_values[] = {XF_TARGET_OPT_ALL, XF_TARGET_OPT_EXTENDED, XF_TARGET_OPT_BASIC,
                                 XF_TARGET_OPT_DISABLED};
static const xf_cli_opt opts[] = {
    {.name = "--output", .alias = "-o", .type = XF_CLI_STR, .off = OFF(out), .what = "a file name",
     .label = "-o, --output FILE", .help = "output model (roundtrip)"},
    {.name = "--external-data", .type = XF_CLI_STR, .off = OFF(external_data),
     .what = "a file name", .label = "--external-data FILE",
     .help = "roundtrip: write the weights (tensors of 1 KiB and more)\n"
             "to FILE, a path relative to OUT's directory, in ONNX's\n"
             "external-data layout; without it a model over 2 GiB\n"
             "goes to OUT.data automatically"},
    {.name = "--data", .type = XF_CLI_STR, .off = OFF(data), .what = "a directory",
     .label = "--data DIR",
     .help = "ONNX test_data_set directory (run): inputs, expected outputs\n"
             "and the sizes of the symbolic dims not given by --dim"},
    {.name = "--dim", .type = XF_CLI_DIM, .off = OFF(dims), .label = "--dim NAME=N",
     .help = "size of a symbolic input dimension (default: from --data,\n"
             "else 1 where the model imports with it, else the smallest\n"
             "power of two at which it does; the sizes chosen are said)"},
    {.name = "--mem-limit", .type = XF_CLI_STR, .off = OFF(mem_limit), .what = "a size",
     .label = "--mem-limit SIZE",
     .help = "most bytes of tensors a run may take, e.g. 512M, 8G\n"
             "(default: $RLFLOW_MEM_LIMIT, else half of the memory)"},
    {.name = "--rtol", .type = XF_CLI_F64, .off = OFF(rtol), .label = "--rtol X, --atol X",
     .help = "tolerance of output checks (default 1e-4, 1e-5)"},
    {.name = "--atol", .type = XF_CLI_F64, .off = OFF(atol)},
    {.name = "--seed", .type = XF_CLI_U64, .off = OFF(seed), .label = "--seed N",
     .help = "seed of the random inputs (default 1)"},
    {.name = "--threads", .type = XF_CLI_THREADS, .off = OFF(threads), .label = "--threads N",
     .help = "intra-op threads of ONNX Runtime (time; default: all cores;\n"
             "at most 4 x the online CPUs)"},
    {.name = "--opt", .type = XF_CLI_CHOICE, .off = OFF(opt), .choices = opt_levels,
     .values = opt_values, .label = "--opt LEVEL",
     .help = "its graph optimisations: all (default), extended, basic,\ndisabled (time, compare; ort-optimize: default extended)"},
    {.name = "--rounds", .type = XF_CLI_INT, .off = OFF(rounds), .lo = 1, .hi = 100000,
     .what = "an integer (1 up to 100000)", .label = "--rounds N, --reps N",
     .help = "alternation rounds (default 21) and runs of each model\n"
             "per round (default: about 25 ms worth) (time)"},
    {.name = "--reps", .type = XF_CLI_INT, .off = OFF(reps), .lo = 1, .hi = 100000,
     .what = "an integer (1 up to 100000)"},
};

static const char help_head[] =
    "usage: xfonnx COMMAND MODEL [options]\n"
    "\n"
    "commands:\n"
    "  info MODEL              operator histogram, inputs/outputs, parameter bytes, opaque ops\n"
    "  run MODEL [--data DIR]  run the reference interpreter on random inputs, or on\n"
    "                          DIR/input_*.pb and compare with DIR/output_*.pb\n"
    "  roundtrip MODEL -o OUT  import, export to OUT, re-import; check the canonical\n"
    "                          graph hash and that both compute the same outputs;\n"
    "                          symbolic input dims stay symbolic in OUT and the\n"
    "                          outputs are compared at three sizes of each\n"
    "  compare A B             A's and B's outputs in ONNX Runtime on the same random\n"
    "                          inputs: largest |d| over the largest |output| of A,\n"
    "                          within --rtol (exit 1 beyond)\n"
    "  ort-optimize MODEL -o OUT  ONNX Runtime's offline optimisation of MODEL\n"
    "                          (--opt, default extended) written to OUT, with its\n"
    "                          com.microsoft fused operators\n"
    "  time A [B ...]          median latency of each model (up to 16) in ONNX Runtime\n"
    "                          on CPU, run as written; the models take turns, so the\n"
    "                          ratio to A and its 95% noise bound hold under load;\n"
    "                          a second session of A gives the self-check line; faster\n"
    "                          (slower) beyond the noise: the interval lies below (above)\n"
    "                          1 and the self check's interval\n"
    "\n"
    "options:\n";
static const char help_tail[] =
    "  -h, --help         this help\n"
    "\n"
    "exit status: 0 ok, 1 a check failed, 2 bad usage or unreadable model\n";

/* 0 parsed; else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, options *o, int *done)
{
    memset(o, 0, sizeof *o);
    o->rtol = 1e-4;
    o->atol = 1e-5;
    o->seed = 1;
    o->opt = -1; /* not given: each command's default */
    xf_cli_spec spec = {"xfonnx", help_head, help_tail, opts, (int)(sizeof opts / sizeof opts[0]),
                        o->pos, 1 + MAX_TIMED, o, NULL};
    int rc = xf_cli_parse(&spec, argc, argv);
    *done = rc != 0;
    if (rc) return rc < 0 ? 0 : rc;
    o->opt_given = o->opt >= 0;
    if (!o->opt_given) o->opt = XF_TARGET_OPT_ALL;
    o->cmd = o->pos[0];
    o->model = o->pos[1];
    o->more = &o->pos[2];
    while (o->n_more < MAX_TIMED - 1 && o->more[o->n_more]) o->n_more++;
    if (o->n_more && strcmp(o->cmd, "time") != 0 && (strcmp(o->cmd, "compare") != 0 || o->n_more > 1)) {
        fprintf(stderr, "xfonnx: unexpected argument '%s'\n", o->more[0]);
        return 2;
    }
    if (!o->cmd || !o->model) {
        xf_cli_usage(&spec, stderr);
        return 2;
    }
    char msg[256];
    if (xf_cli_mem_limit(o->mem_limit, msg, sizeof msg) != 0) {
        fprintf(stderr, "xfonnx: %s\n", msg);
        return 2;
    }
    return 0;
}

/* The sizes of path's symbolic dims: --dim, else from --data (run), else
 * chosen by the size search, said on stderr. */
static int choose_sizes(const options *o, const char *path, xf_onnx_sizes **sizes)
{
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = o->dims.n;
    io.dim_names = o->dims.names;
    io.dim_values = o->dims.values;
    xf_error err;
    xf_error_clear(&err);
    if (xf_onnx_sizes_choose(path, &io, !strcmp(o->cmd, "run") ? o->data : NULL, sizes, &err) !=
        XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        return 2;
    }
    if (xf_onnx_sizes_said(*sizes)[0]) fprintf(stderr, "xfonnx: %s\n", xf_onnx_sizes_said(*sizes));
    return 0;
}

/* Reads path at the sizes chosen for it (*sizes, when not NULL, is set to
 * them; the caller frees it). */
static int load_sized(const options *o, const char *path, xf_graph *g, xf_onnx_sizes **sizes)
{
    xf_onnx_sizes *sz = NULL;
    int rc = choose_sizes(o, path, &sz);
    if (rc) return rc;
    xf_onnx_options io = xf_onnx_sizes_options(sz);
    xf_error err;
    xf_error_clear(&err);
    if (xf_onnx_load(path, &io, g, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    }
    if (sizes && !rc) *sizes = sz;
    else xf_onnx_sizes_free(sz);
    return rc;
}

static int load(const options *o, const char *path, xf_graph *g)
{
    return load_sized(o, path, g, NULL);
}

static void print_value(const xf_graph *g, int v)
{
    char s[128];
    const xf_value *val = &g->values[v];
    printf("  %-32s %-8s %s\n", val->name ? val->name : "(unnamed)", xf_dtype_name(val->dtype),
           xf_shape_str(&val->shape, s, sizeof s));
}

static int cmd_info(const options *o)
{
    xf_graph g;
    int rc = load(o, o->model, &g);
    if (rc) return rc;
    int hist[XF_OP_COUNT];
    xf_graph_op_histogram(&g, hist);
    size_t params = 0;
    int n_const = 0;
    for (int i = 0; i < g.n_values; i++)
        if (g.values[i].kind == XF_VALUE_CONST) {
            params += (size_t)xf_shape_numel(&g.values[i].shape);
            n_const++;
        }
    printf("model: %s\nopset: %lld\nnodes: %d (after folding constant subgraphs)\n", o->model,
           (long long)g.opset, g.n_nodes);
    printf("parameters: %zu values in %d initializers, %.2f MB\n", params, n_const,
           (double)xf_graph_param_bytes(&g) / 1e6);
    printf("inputs:\n");
    for (int i = 0; i < g.n_inputs; i++) print_value(&g, g.inputs[i]);
    printf("outputs:\n");
    for (int i = 0; i < g.n_outputs; i++) print_value(&g, g.outputs[i]);
    printf("operators:\n");
    for (int op = 1; op < XF_OP_COUNT; op++)
        if (hist[op])
            printf("  %-20s %-20s %5d\n", xf_op_get((xf_op)op)->name,
                   xf_op_get((xf_op)op)->onnx_name ? xf_op_get((xf_op)op)->onnx_name : "-",
                   hist[op]);
    printf("opaque operators: %d\n", hist[XF_OP_OPAQUE]);
    for (int i = 0; i < g.n_nodes; i++) {
        const xf_node *n = &g.nodes[i];
        if (n->op != XF_OP_OPAQUE) continue;
        const xf_opaque *op = n->opaque;
        char d[256];
        printf("  %s domain '%s'", xf_node_describe(&g, i, d, sizeof d),
               op->domain ? op->domain : "");
        if (op->kernel == XF_OPAQUE_IF && op->n_branches == 2)
            printf(": runs its branches (then %d nodes, else %d nodes, %d outer values read)",
                   op->branches[0].n_nodes, op->branches[1].n_nodes, op->n_captured);
        else if (op->kernel == XF_OPAQUE_LSTM)
            printf(": runs (hidden_size %lld)", (long long)op->lstm.hidden_size);
        else if (op->kernel == XF_OPAQUE_QUANTIZE || op->kernel == XF_OPAQUE_DEQUANTIZE)
            printf(": runs (quantisation, axis %d)", (int)op->calc.axis);
        else if (xf_opaque_calc_kernel(op->kernel))
            printf(": runs (shape arithmetic, computed at run time)");
        else
            printf(": the interpreter cannot run it%s%s", op->no_kernel ? ": " : "",
                   op->no_kernel ? op->no_kernel : "");
        printf("\n");
    }
    xf_graph_free(&g);
    return 0;
}

/* Reads DIR/input_K.pb for every graph input. */
static int load_data(const char *dir, const char *prefix, int n, xf_tensor *t)
{
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, i);
        xf_error err;
        if (xf_onnx_load_tensor(path, &t[i], NULL, &err) != XF_OK) {
            fprintf(stderr, "xfonnx: %s\n", err.msg);
            for (int j = 0; j < i; j++) xf_tensor_free(&t[j]);
            return 2;
        }
    }
    return 0;
}

/* Compares output lists; prints one line per output; returns 1 on mismatch. */
static int compare_outputs(const xf_graph *g, const xf_tensor *got, const xf_tensor *want,
                           double rtol, double atol)
{
    int bad = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        double ma, mr;
        xf_error err;
        const char *name = g->values[g->outputs[i]].name;
        if (xf_tensor_compare(&got[i], &want[i], &ma, &mr, &err) != XF_OK) {
            printf("  output %d %s: %s\n", i, name ? name : "", err.msg);
            bad = 1;
            continue;
        }
        int ok = xf_tensor_close(&got[i], &want[i], rtol, atol);
        printf("  output %d %-24s max abs err %.3g  max rel err %.3g  %s\n", i, name ? name : "",
               ma, mr, ok ? "ok" : "MISMATCH");
        if (!ok) bad = 1;
    }
    return bad;
}

static int cmd_run(const options *o)
{
    xf_graph g;
    int rc = load(o, o->model, &g);
    if (rc) return rc;
    xf_tensor *in = xf_tensor_array_alloc(g.n_inputs);
    xf_tensor *out = xf_tensor_array_alloc(g.n_outputs);
    xf_tensor *want = NULL;
    xf_error err;
    if (!in || !out) {
        fprintf(stderr, "xfonnx: out of memory\n");
        rc = 2;
        goto done;
    }
    if (o->data) {
        rc = load_data(o->data, "input", g.n_inputs, in);
        if (rc) goto done;
    } else if (xf_graph_random_inputs(&g, o->seed, in, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    double t0 = xf_clock_now();
    if (xf_interp_run(&g, in, g.n_inputs, out, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s: %s\n", o->model, err.msg);
        rc = 1;
        goto done;
    }
    printf("ran %s in %.3f s\n", o->model, xf_clock_now() - t0);
    if (o->data) {
        want = xf_tensor_array_alloc(g.n_outputs);
        if (!want || load_data(o->data, "output", g.n_outputs, want)) {
            xf_free(want);
            want = NULL;
            rc = 2;
            goto done;
        }
        rc = compare_outputs(&g, out, want, o->rtol, o->atol);
        printf("%s\n", rc ? "outputs differ from the expected data" : "outputs match the expected data");
    } else {
        for (int i = 0; i < g.n_outputs; i++) print_value(&g, g.outputs[i]);
    }
done:
    xf_tensor_array_free(in, g.n_inputs);
    xf_tensor_array_free(out, g.n_outputs);
    xf_tensor_array_free(want, g.n_outputs);
    xf_graph_free(&g);
    return rc;
}

/* The model is exported, read back and checked in memory (external
 * weights are read back in place, not copied) by onnx's checked writer:
 * the same canonical graph, and the same outputs as the original at every
 * size it is checked at; OUT (and its external data file) is written only
 * when every check passed, so a failed round trip leaves nothing (and never
 * removes what OUT names). Symbolic input dims are kept (xf_onnx_dynamic),
 * checked at three sizes of each, far apart; one whose parameters cannot
 * follow it is written fixed, and said so. */
/* The model the interpreter cannot run (n opaque nodes without a kernel):
 * the file written against the input in ONNX Runtime, at the sizes a was
 * imported at. 0 when equal within rtol of the largest |output|, or when
 * ONNX Runtime is not there (said); 1 when they differ or cannot run. */
static int ort_check(const options *o, const xf_graph *a, int n)
{
    xf_target_options to = xf_target_default_options();
    to.threads = 1;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    double rel = 0;
    if (xf_target_open(&to, &t, &err) != XF_OK) {
        printf("numerical check skipped: the model has %d opaque node(s) the interpreter cannot "
               "run, and ONNX Runtime is not available: %s\n", n, err.msg);
        return 0;
    }
    int rc = 0;
    if (xf_target_files_diff(t, o->model, o->out, a, o->seed, &rel, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 1;
    } else {
        printf("numerical check in ONNX Runtime (%d opaque node(s) the interpreter cannot run): "
               "largest |d| %.3g of the largest |output| (tolerance %.3g)%s\n",
               n, rel, o->rtol, rel <= o->rtol ? "  ok" : "  DIFFERENT");
        rc = rel <= o->rtol ? 0 : 1;
    }
    xf_target_close(t);
    return rc;
}

static int cmd_roundtrip(const options *o)
{
    if (!o->out) {
        fprintf(stderr, "xfonnx: roundtrip needs -o OUT\n");
        return 2;
    }
    xf_graph a;
    xf_onnx_sizes *sizes = NULL;
    int rc = load_sized(o, o->model, &a, &sizes);
    if (rc) return rc;
    xf_error err;
    xf_error_clear(&err);
    xf_onnx_options io = xf_onnx_sizes_options(sizes);
    xf_onnx_dynamic *d = NULL;
    double t0 = xf_clock_now();
    if (xf_onnx_dynamic_open_file(o->model, &io, &d, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    double t_sizes = xf_clock_now() - t0;
    int opaque = 0;
    for (int i = 0; i < a.n_nodes; i++)
        opaque += a.nodes[i].op == XF_OP_OPAQUE &&
                  (!a.nodes[i].opaque || a.nodes[i].opaque->kernel == XF_OPAQUE_NO_KERNEL);
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = o->model;
    wo.output = o->out;
    wo.external_data = o->external_data;
    wo.numeric = !opaque;
    wo.same_graph = 1;
    wo.seed = o->seed;
    wo.rtol = o->rtol;
    wo.atol = o->atol;
    xf_onnx_checked res;
    t0 = xf_clock_now();
    xf_status st = xf_onnx_write_checked(&wo, d, &a, &a, &res, &err);
    double t_check = xf_clock_now() - t0;
    int n_sym = xf_onnx_dynamic_count(d);
    for (int s = 0; s < n_sym; s++)
        if (xf_onnx_dynamic_fixed(d, s))
            printf("symbolic dim %-24s written FIXED at %lld: %s\n", xf_onnx_dynamic_name(d, s),
                   (long long)xf_onnx_dynamic_size(d, s, 0), xf_onnx_dynamic_fixed(d, s));
        else
            printf("symbolic dim %-24s kept; sizes %lld (imported), %lld, %lld\n",
                   xf_onnx_dynamic_name(d, s), (long long)xf_onnx_dynamic_size(d, s, 0),
                   (long long)xf_onnx_dynamic_size(d, s, 1),
                   (long long)xf_onnx_dynamic_size(d, s, 2));
    if (n_sym) printf("(other sizes found in %.3f s)\n", t_sizes);
    if (st != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        printf("round trip FAILED\n");
        rc = st == XF_ERR_NOMEM || st == XF_ERR_IO || st == XF_ERR_INVALID ? 2 : 1;
        goto done;
    }
    printf("serialised %s: %d nodes, canonical hash %016llx -> %016llx (equal)\n", o->out,
           a.n_nodes, (unsigned long long)xf_graph_hash(&a), (unsigned long long)res.hash_back);
    if (res.data_location[0])
        printf("external data: %s, %llu bytes (model file %zu bytes)\n", res.data_location,
               (unsigned long long)res.data_bytes, res.model_bytes);
    if (opaque && ort_check(o, &a, opaque) != 0) {
        printf("round trip FAILED (%s is written: look at it)\n", o->out);
        rc = 1;
        goto done;
    }
    for (int p = 0; p < res.n_points && !opaque; p++) {
        char at[512];
        xf_onnx_dynamic_describe(d, p, at, sizeof at);
        printf("%s%s%smax abs err %.3g  max rel err %.3g  ok\n", at[0] ? "at " : "", at,
               at[0] ? ": " : "", res.at[p].max_abs, res.at[p].max_rel);
    }
    printf("round trip ok: same graph%s\n",
           opaque ? "" : res.n_points > 1 ? ", same outputs at three sizes" : ", same outputs");
    printf("wrote %s%s (export, read-back and checks in %.3f s)\n", o->out,
           res.data_location[0] ? " and its external data" : "", t_check);
done:
    xf_onnx_dynamic_free(d);
    xf_onnx_sizes_free(sizes);
    xf_graph_free(&a);
    return rc;
}

static void print_timing(const char *tag, const char *name, const xf_target_timing *r,
                         const xf_target_timing *self, int base)
{
    static const char *const verdicts[] = {"faster beyond the noise", "no difference beyond the noise",
                                           "slower beyond the noise"};
    if (base) {
        printf("%-3s %-36s %10.3f %8.3f  %-16s %-7s %d\n", tag, name, r->median_ms, 1.0, "", "",
               r->runs);
        return;
    }
    printf("%-3s %-36s %10.3f %8.3f  [%6.3f, %6.3f] +-%.3f  %d, %s\n", tag, name, r->median_ms,
           r->ratio, r->lo, r->hi, r->noise, r->runs, verdicts[1 + xf_target_verdict(r, self)]);
}

static int cmd_time(const options *o)
{
    int n = 1 + o->n_more, rc = 0;
    const char *files[MAX_TIMED];
    xf_graph g[MAX_TIMED];
    const xf_graph *gp[MAX_TIMED];
    int loaded = 0;
    files[0] = o->model;
    for (int i = 1; i < n; i++) files[i] = o->more[i - 1];
    /* every model at the sizes chosen for A, so that they take the same inputs */
    xf_onnx_sizes *sizes = NULL;
    rc = load_sized(o, files[0], &g[0], &sizes);
    gp[0] = &g[0];
    loaded = rc ? 0 : 1;
    xf_onnx_options io = rc ? xf_onnx_default_options() : xf_onnx_sizes_options(sizes);
    for (; loaded < n && !rc; loaded++) {
        xf_error lerr;
        xf_error_clear(&lerr);
        if (xf_onnx_load(files[loaded], &io, &g[loaded], &lerr) != XF_OK) {
            fprintf(stderr, "xfonnx: %s\n", lerr.msg);
            rc = 2;
            break; /* the failed load left nothing to free */
        }
        gp[loaded] = &g[loaded];
    }
    xf_target_options to = xf_target_default_options();
    to.threads = o->threads;
    to.opt_level = (xf_target_opt_level)o->opt;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    if (!rc && xf_target_open(&to, &t, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    }
    xf_target_timing res[MAX_TIMED], self;
    xf_target_timing_options tim = {.seed = o->seed, .rounds = o->rounds,
                                    .reps = o->reps, .self_check = 1, .files = files};
    if (!rc) {
        printf("target: %s\n", xf_target_identity(t));
        double t0 = xf_clock_now();
        if (xf_target_compare(t, gp, n, &tim, res, &self, &err) != XF_OK) {
            fprintf(stderr, "xfonnx: %s\n", err.msg);
            rc = err.code == XF_ERR_MISMATCH ? 2 : 1;
        } else {
            printf("%-3s %-36s %10s %8s  %-16s %-7s %s\n", "", "model", "median ms", "ratio",
                   "95% interval", "noise", "runs");
            for (int i = 0; i < n; i++) {
                char tag[8];
                snprintf(tag, sizeof tag, "%c", 'A' + i);
                print_timing(tag, files[i], &res[i], &self, i == 0);
            }
            print_timing("A'", "(A again: self check)", &self, NULL, 0);
            printf("timed alternately in %.1f s: ratio = median over rounds of (round median / "
                   "A's); 95%% interval from the rounds' order statistics\n", xf_clock_now() - t0);
        }
    }
    xf_target_close(t);
    for (int i = 0; i < loaded; i++) xf_graph_free(&g[i]);
    xf_onnx_sizes_free(sizes);
    return rc;
}

static int cmd_compare(const options *o)
{
    if (o->n_more != 1) {
        fprintf(stderr, "xfonnx: compare needs two models: A B\n");
        return 2;
    }
    xf_graph a;
    xf_onnx_sizes *sizes = NULL;
    int rc = load_sized(o, o->model, &a, &sizes);
    if (rc) return rc;
    xf_target_options to = xf_target_default_options();
    to.threads = o->threads;
    to.opt_level = (xf_target_opt_level)o->opt;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    double rel = 0;
    if (xf_target_open(&to, &t, &err) != XF_OK ||
        xf_target_files_diff(t, o->model, o->more[0], &a, o->seed, &rel, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    } else {
        printf("target: %s\nlargest |B - A| over the largest |A| per output: %.3g (tolerance "
               "%.3g): %s\n",
               xf_target_identity(t), rel, o->rtol, rel <= o->rtol ? "equal" : "DIFFERENT");
        rc = rel <= o->rtol ? 0 : 1;
    }
    xf_target_close(t);
    xf_graph_free(&a);
    xf_onnx_sizes_free(sizes);
    return rc;
}

static int cmd_ort_optimize(const options *o)
{
    if (!o->out) {
        fprintf(stderr, "xfonnx: ort-optimize needs -o OUT\n");
        return 2;
    }
    xf_target_options to = xf_target_default_options();
    to.threads = o->threads;
    to.opt_level = o->opt_given ? (xf_target_opt_level)o->opt : XF_TARGET_OPT_EXTENDED;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    int rc = 0;
    if (xf_target_open(&to, &t, &err) != XF_OK ||
        xf_target_write_optimized(t, o->model, o->out, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    } else {
        printf("target: %s\nwrote %s (ONNX Runtime's optimised model)\n", xf_target_identity(t),
               o->out);
    }
    xf_target_close(t);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int done;
    int rc = parse_args(argc, argv, &o, &done);
    if (rc || done) return rc;
    xf_error err; /* no output may be the model read */
    if (xf_outfile_protect(o.model, "the input model", &err) != XF_OK ||
        (o.out && xf_outfile_check(o.out, &err) != XF_OK)) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        return 2;
    }
    if (!strcmp(o.cmd, "info")) return cmd_info(&o);
    if (!strcmp(o.cmd, "run")) return cmd_run(&o);
    if (!strcmp(o.cmd, "roundtrip")) return cmd_roundtrip(&o);
    if (!strcmp(o.cmd, "time")) return cmd_time(&o);
    if (!strcmp(o.cmd, "ort-optimize")) return cmd_ort_optimize(&o);
    if (!strcmp(o.cmd, "compare")) return cmd_compare(&o);
    fprintf(stderr, "xfonnx: unknown command '%s' (info, run, roundtrip, time, compare, ort-optimize)\n", o.cmd);
    return 2;
}
