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
 *   xfonnx time A [B ...] [--threads N]    latency of each model in ONNX Runtime
 *                                          (CPU), timed alternately; ratio to A
 *                                          and its noise bound (target/target.h)
 *
 * Exit status: 0 success, 1 a numerical or structural check failed,
 * 2 bad usage or a model that cannot be read (one-line error on stderr;
 * nothing is written).
 */
#include <float.h>
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
    const char *more[MAX_TIMED - 1]; /* time: models B, C, ... */
    int n_more;
    int64_t threads, rounds, reps;
    xf_target_opt_level opt;
} options;

static void usage(FILE *f)
{
    fprintf(f,
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
            "  time A [B ...]          median latency of each model (up to 16) in ONNX Runtime\n"
            "                          on CPU, run as written; the models take turns, so the\n"
            "                          ratio to A and its 95%% noise bound hold under load;\n"
            "                          a second session of A gives the self-check line; faster\n"
            "                          (slower) beyond the noise: the interval lies below (above)\n"
            "                          1 and the self check's interval\n"
            "\n"
            "options:\n"
            "  -o, --output FILE       output model (roundtrip)\n"
            "  --external-data FILE    roundtrip: write the weights (tensors of 1 KiB and more)\n"
            "                          to FILE, a path relative to OUT's directory, in ONNX's\n"
            "                          external-data layout; without it a model over 2 GiB\n"
            "                          goes to OUT.data automatically\n"
            "  --data DIR              ONNX test_data_set directory (run)\n"
            "  --dim NAME=N            size of a symbolic input dimension (default 1)\n"
            "  --mem-limit SIZE        most bytes of tensors a run may take, e.g. 512M, 8G\n"
            "                          (default: $RLFLOW_MEM_LIMIT, else half of the memory)\n"
            "  --rtol X, --atol X      tolerance of output checks (default 1e-4, 1e-5)\n"
            "  --seed N                seed of the random inputs (default 1)\n"
            "  --threads N             intra-op threads of ONNX Runtime (time; default: all cores;\n"
            "                          at most 4 x the online CPUs)\n"
            "  --opt LEVEL             its graph optimisations: all (default), extended, basic,\n"
            "                          disabled (time)\n"
            "  --rounds N, --reps N    alternation rounds (default 21) and runs of each model\n"
            "                          per round (default: about 25 ms worth) (time)\n"
            "  -h, --help              this help\n"
            "\n"
            "exit status: 0 ok, 1 a check failed, 2 bad usage or unreadable model\n");
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->rtol = 1e-4;
    o->atol = 1e-5;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--output") || !strcmp(a, "--external-data")) &&
                   next && !*next) {
            fprintf(stderr, "xfonnx: %s needs a file name, got ''\n", a);
            return 2;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next) goto missing;
            o->out = argv[++i];
        } else if (!strcmp(a, "--data")) {
            if (!next) goto missing;
            o->data = argv[++i];
        } else if (!strcmp(a, "--external-data")) {
            if (!next) goto missing;
            o->external_data = argv[++i];
        } else if (!strcmp(a, "--rtol") || !strcmp(a, "--atol")) {
            if (!next) goto missing;
            double v;
            if (xf_cli_parse_f64(next, 0, DBL_MAX, &v) != 0) {
                fprintf(stderr, "xfonnx: %s needs a finite number >= 0, got '%s'\n", a, next);
                return 2;
            }
            *(a[2] == 'r' ? &o->rtol : &o->atol) = v;
            i++;
        } else if (!strcmp(a, "--seed")) {
            if (!next) goto missing;
            if (xf_cli_parse_u64(next, &o->seed) != 0) {
                fprintf(stderr, "xfonnx: --seed needs an integer from 0 to 2^64-1, got '%s'\n",
                        next);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--threads")) {
            char msg[256];
            int t = 0;
            if (xf_cli_parse_threads(a, next, 0, &t, msg, sizeof msg) != 0) {
                fprintf(stderr, "xfonnx: %s\n", msg);
                return 2;
            }
            o->threads = t;
            i++;
        } else if (!strcmp(a, "--rounds") || !strcmp(a, "--reps")) {
            int64_t *dst = a[4] == 'u' ? &o->rounds : &o->reps;
            if (!next || xf_cli_parse_i64(next, 1, 100000, dst) != 0) {
                fprintf(stderr, "xfonnx: %s needs an integer (1 up to 100000), got '%s'\n", a,
                        next ? next : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--opt")) {
            static const char *const levels[] = {"all", "disabled", "basic", "extended"};
            int k = 0;
            while (next && k < 4 && strcmp(next, levels[k])) k++;
            if (!next || k == 4) {
                fprintf(stderr, "xfonnx: --opt needs all, extended, basic or disabled\n");
                return 2;
            }
            o->opt = (xf_target_opt_level)k;
            i++;
        } else if (!strcmp(a, "--dim")) {
            if (!next) goto missing;
            char msg[256];
            if (xf_cli_dims_add(&o->dims, next, msg, sizeof msg) != 0) {
                fprintf(stderr, "xfonnx: --dim %s\n", msg);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--mem-limit")) {
            if (!next) goto missing;
            o->mem_limit = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "xfonnx: unknown option '%s' (see xfonnx --help)\n", a);
            return 2;
        } else if (!o->cmd) {
            o->cmd = a;
        } else if (!o->model) {
            o->model = a;
        } else if (!strcmp(o->cmd, "time") && o->n_more < MAX_TIMED - 1) {
            o->more[o->n_more++] = a;
        } else {
            fprintf(stderr, "xfonnx: unexpected argument '%s'\n", a);
            return 2;
        }
        continue;
    missing:
        fprintf(stderr, "xfonnx: option %s needs a value\n", a);
        return 2;
    }
    if (!o->cmd || !o->model) {
        usage(stderr);
        return 2;
    }
    char msg[256];
    if (xf_cli_mem_limit(o->mem_limit, msg, sizeof msg) != 0) {
        fprintf(stderr, "xfonnx: %s\n", msg);
        return 2;
    }
    return 0;
}

static xf_onnx_options import_options(const options *o)
{
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = o->dims.n;
    io.dim_names = o->dims.names;
    io.dim_values = o->dims.values;
    return io;
}

static int load(const options *o, const char *path, xf_graph *g)
{
    xf_onnx_options io = import_options(o);
    xf_error err;
    xf_error_clear(&err);
    if (xf_onnx_load(path, &io, g, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        return 2;
    }
    return 0;
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

/* Runs the original (a at point 0, else read at point p) and the exported
 * model (w's bytes read back at point p) on the same random inputs; 1 when
 * they differ or one does not run, 2 when a model cannot be read. */
static int check_point(const options *o, const xf_onnx_dynamic *d, int p, const xf_graph *a0,
                       const xf_graph *b0, xf_onnx_writer *w)
{
    xf_graph ap, bp;
    xf_graph_init(&ap);
    xf_graph_init(&bp);
    xf_error err;
    xf_error_clear(&err);
    xf_onnx_options io = xf_onnx_dynamic_options(d, p);
    if (p > 0 && (xf_onnx_load(o->model, &io, &ap, &err) != XF_OK ||
                  xf_onnx_writer_read_back(w, &io, &bp, &err) != XF_OK)) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        xf_graph_free(&ap);
        return 1;
    }
    const xf_graph *a = p ? &ap : a0, *b = p ? &bp : b0;
    xf_tensor *in = xf_tensor_array_alloc(a->n_inputs);
    xf_tensor *out_a = xf_tensor_array_alloc(a->n_outputs);
    xf_tensor *out_b = xf_tensor_array_alloc(a->n_outputs);
    int rc = 0;
    char at[512];
    xf_onnx_dynamic_describe(d, p, at, sizeof at);
    if (!in || !out_a || !out_b) {
        fprintf(stderr, "xfonnx: out of memory\n");
        rc = 2;
    } else if (xf_graph_random_inputs(a, o->seed, in, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    } else if (xf_interp_run(a, in, a->n_inputs, out_a, &err) != XF_OK ||
               xf_interp_run(b, in, b->n_inputs, out_b, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s%s%s\n", at[0] ? "at " : "", at[0] ? at : "", err.msg);
        rc = 1;
    } else {
        if (at[0]) printf("at %s:\n", at);
        rc = compare_outputs(a, out_b, out_a, o->rtol, o->atol);
    }
    xf_tensor_array_free(in, a->n_inputs);
    xf_tensor_array_free(out_a, a->n_outputs);
    xf_tensor_array_free(out_b, a->n_outputs);
    xf_graph_free(&ap);
    xf_graph_free(&bp);
    return rc;
}

/* The model is exported to memory, read back and checked there (external
 * weights are read back in place, not copied); OUT (and its external data
 * file) is written only when every check passed, so a failed round trip
 * leaves nothing (and never removes what OUT names). Symbolic input dims
 * are kept (xf_onnx_dynamic) and the outputs compared at three sizes of
 * each, every one read back from the bytes that are written. */
static int cmd_roundtrip(const options *o)
{
    if (!o->out) {
        fprintf(stderr, "xfonnx: roundtrip needs -o OUT\n");
        return 2;
    }
    xf_graph a, b;
    xf_graph_init(&b);
    int rc = load(o, o->model, &a);
    if (rc) return rc;
    xf_error err;
    xf_onnx_options io = import_options(o);
    xf_onnx_writer *w = NULL;
    xf_onnx_dynamic *d = NULL;
    double t0 = xf_clock_now();
    if (xf_onnx_dynamic_open_file(o->model, &io, &d, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    double t_sizes = xf_clock_now() - t0;
    xf_onnx_save_options so = xf_onnx_default_save_options();
    so.external_data = o->external_data;
    so.dynamic = d;
    t0 = xf_clock_now();
    if (xf_onnx_writer_open(&a, o->out, &so, &w, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
        goto done;
    }
    double t_export = xf_clock_now() - t0;
    if (xf_onnx_writer_read_back(w, &io, &b, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 1; /* our own export did not re-import: a check failure */
        goto done;
    }
    uint64_t ha = xf_graph_hash(&a), hb = xf_graph_hash(&b);
    printf("serialised %s in %.3f s: %d nodes, canonical hash %016llx -> %016llx %s\n", o->out,
           t_export, a.n_nodes, (unsigned long long)ha, (unsigned long long)hb,
           ha == hb ? "(equal)" : "(DIFFERENT)");
    size_t model_bytes;
    uint64_t data_bytes;
    const char *location;
    xf_onnx_writer_sizes(w, &model_bytes, &data_bytes, &location);
    if (location)
        printf("external data: %s, %llu bytes (model file %zu bytes)\n", location,
               (unsigned long long)data_bytes, model_bytes);
    if (ha != hb) rc = 1;
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
    int opaque = 0;
    for (int i = 0; i < a.n_nodes; i++)
        opaque += a.nodes[i].op == XF_OP_OPAQUE &&
                  (!a.nodes[i].opaque || a.nodes[i].opaque->kernel == XF_OPAQUE_NO_KERNEL);
    if (opaque) {
        printf("numerical check skipped: the model has %d opaque node(s) the interpreter cannot run\n",
               opaque);
    } else {
        int points = xf_onnx_dynamic_points(d);
        for (int p = 0; p < points && rc != 2; p++) {
            int r = check_point(o, d, p, &a, &b, w);
            if (r > rc) rc = r;
        }
        printf("%s\n", rc ? "round trip FAILED"
                          : points > 1 ? "round trip ok: same graph, same outputs at three sizes"
                                       : "round trip ok: same graph, same outputs");
    }
    t0 = xf_clock_now();
    if (rc == 0 && xf_onnx_writer_commit(w, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    } else if (rc == 0) {
        printf("wrote %s%s in %.3f s\n", o->out, location ? " and its external data" : "",
               xf_clock_now() - t0);
    }
done:
    xf_graph_free(&b); /* before a: its external weights are a's */
    xf_onnx_writer_free(w);
    xf_onnx_dynamic_free(d);
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
    for (; loaded < n && !rc; loaded++) {
        rc = load(o, files[loaded], &g[loaded]);
        gp[loaded] = &g[loaded];
    }
    if (rc) loaded--; /* the failed load left nothing to free */
    xf_target_options to = xf_target_default_options();
    to.threads = (int)o->threads;
    to.opt_level = o->opt;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    if (!rc && xf_target_open(&to, &t, &err) != XF_OK) {
        fprintf(stderr, "xfonnx: %s\n", err.msg);
        rc = 2;
    }
    xf_target_timing res[MAX_TIMED], self;
    xf_target_timing_options tim = {.seed = o->seed, .rounds = (int)o->rounds,
                                    .reps = (int)o->reps, .self_check = 1, .files = files};
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
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) return rc;
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
    fprintf(stderr, "xfonnx: unknown command '%s' (info, run, roundtrip, time)\n", o.cmd);
    return 2;
}
