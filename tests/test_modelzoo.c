/*
 * test_modelzoo.c — the modelzoo module (modelzoo/modelzoo.h) and the
 * `modelzoo` command (tools/modelzoo).
 * The command: runs the built binary ($XF_BIN_DIR/modelzoo) for LIST,
 * --help and every kind of usage error (exit 2, message naming the problem)
 * and write error (exit 1, nothing left behind), and checks that the file it
 * writes is the library's model byte for byte.
 * The library, in-process: builds each model at small sizes, writes it and
 * loads it back with the ONNX importer (no constant folding, so the graph
 * is exactly what was written), checking the operator histogram counted by
 * hand from the architecture, graph inputs and output shapes, positive
 * BatchNormalization variances, and that the interpreter gives finite,
 * non-constant outputs on random inputs. The same seed gives byte-identical
 * files and another seed other weights. Parameter counts of the default
 * models are checked against torchvision's published figures (ResNet,
 * SqueezeNet) and a closed-form count (BERT, ViT). When /usr/bin/python3
 * has the onnx package, onnx.checker (full_check) accepts every file (a
 * skipped part of the case otherwise).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modelzoo/modelzoo.h"
#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

/* Runs modelzoo with `args`, stdout and stderr into `log` (may be NULL). */
static int zoo(const char *args, char *log, size_t log_size)
{
    char log_path[4096];
    snprintf(log_path, sizeof log_path, "%s", xf_test_tmp("modelzoo_test.log"));
    int rc = xf_test_system("%s %s > %s 2>&1", xf_test_tool("modelzoo"), args, log_path);
    if (log) {
        log[0] = '\0';
        FILE *f = fopen(log_path, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(log, 1, log_size - 1, f);
        log[n] = '\0';
        fclose(f);
    }
    remove(log_path);
    return rc;
}

static void tmp_model(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s", xf_test_tmp(name));
}

/* Builds model `args` ("resnet18 --image 32") in-process and writes it to path. */
static void write_model(const char *args, const char *path)
{
    char model[64];
    int used = 0;
    ck_assert(sscanf(args, "%63s%n", model, &used) == 1);
    xf_graph g;
    xf_test_modelzoo_build(model, args + used, &g);
    xf_error err;
    ck_assert_msg(xf_onnx_save(&g, path, &err) == XF_OK, "%s: %s", path, err.msg);
    xf_graph_free(&g);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void load_unfolded(const char *path, xf_graph *g)
{
    xf_onnx_options o = xf_onnx_default_options();
    o.fold_constants = 0;
    xf_error err;
    ck_assert_msg(xf_onnx_load(path, &o, g, &err) == XF_OK, "%s: %s", path, err.msg);
    ck_assert_msg(xf_graph_validate(g, &err) == XF_OK, "%s: %s", path, err.msg);
}

static const xf_value *value_named(const xf_graph *g, const char *name)
{
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].name && strcmp(g->values[i].name, name) == 0) return &g->values[i];
    return NULL;
}

/* ------------------------------------------------------------------- CLI */

START_TEST(list_and_help)
{
    char log[8192];
    ck_assert_int_eq(zoo("LIST", log, sizeof log), 0);
    static const char *const expect[] = {"resnet18", "resnet34", "resnet50", "squeezenet",
                                         "bert",     "vit",      "--width 64", "--vocab 1000",
                                         "--patch 16", "--seed"};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        ck_assert_msg(strstr(log, expect[i]) != NULL, "LIST lacks '%s':\n%s", expect[i], log);
    ck_assert_int_eq(zoo("--help", log, sizeof log), 0);
    ck_assert_ptr_nonnull(strstr(log, "usage: modelzoo"));
    ck_assert_ptr_nonnull(strstr(log, "--classes"));
    ck_assert_int_eq(zoo("", log, sizeof log), 2);
    ck_assert_ptr_nonnull(strstr(log, "usage: modelzoo"));
}
END_TEST

/* Usage errors: exit 2, a message naming the culprit, no file written. */
START_TEST(usage_errors)
{
    char out[4096], args[8192], log[8192];
    tmp_model(out, sizeof out, "zoo_usage.onnx");
    remove(out);
    static const char *const cases[][2] = {
        {"alexnet", "unknown model 'alexnet'"},
        {"resnet18 --depth 3", "'--depth'"},
        {"resnet18 --vocab 10", "'--vocab'"},
        {"bert --image 32", "'--image'"},
        {"resnet18 --image abc", "--image needs an integer from 1 to 1000000, got 'abc'"},
        {"resnet18 --image 0", "--image needs an integer from 1 to 1000000, got '0'"},
        {"resnet18 --batch -1", "got '-1'"},
        {"bert --layers 1001", "--layers needs an integer from 1 to 1000, got '1001'"},
        {"vit --seed x", "--seed needs a non-negative integer, got 'x'"},
        {"bert --hidden 30 --heads 4", "--hidden 30 is not a multiple of --heads 4"},
        {"vit --image 40 --patch 16", "--image 40 is not a multiple of --patch 16"},
        {"squeezenet --image 8", "features."},
        {"bert --vocab 1000000 --hidden 100000 --heads 8", "parameters would exceed"},
        {"resnet18 stray", "unexpected argument 'stray'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "%s -o %s", cases[i][0], out);
        ck_assert_msg(zoo(args, log, sizeof log) == 2, "'%s' did not exit 2:\n%s", args, log);
        ck_assert_msg(strstr(log, cases[i][1]) != NULL, "'%s': message lacks \"%s\":\n%s", args,
                      cases[i][1], log);
        ck_assert_msg(!file_exists(out), "'%s' left %s behind", args, out);
    }
    ck_assert_int_eq(zoo("resnet18", log, sizeof log), 2);
    ck_assert_ptr_nonnull(strstr(log, "no output file"));
    ck_assert_int_eq(zoo("resnet18 -o", log, sizeof log), 2);
    ck_assert_ptr_nonnull(strstr(log, "-o needs a file name"));
    ck_assert_int_eq(zoo("LIST extra", log, sizeof log), 2);
}
END_TEST

/* The command writes exactly what the library builds, and says so. */
START_TEST(cli_writes_the_library_model)
{
    char cli[4096], lib[4096], args[8192], log[8192];
    const char *model = "vit --layers 1 --hidden 32 --heads 2 --patch 8 --image 32 --seed 4";
    tmp_model(cli, sizeof cli, "zoo_cli.onnx");
    tmp_model(lib, sizeof lib, "zoo_lib.onnx");
    snprintf(args, sizeof args, "%s -o %s", model, cli);
    ck_assert_msg(zoo(args, log, sizeof log) == 0, "modelzoo %s failed:\n%s", args, log);
    ck_assert_msg(strstr(log, "wrote ") != NULL, "%s", log);
    write_model(model, lib);
    size_t nc, nl;
    char *fc = xf_test_read_file(cli, &nc);
    char *fl = xf_test_read_file(lib, &nl);
    ck_assert_msg(nc == nl && memcmp(fc, fl, nc) == 0,
                  "the command's file differs from the library's");
    free(fc);
    free(fl);
    remove(cli);
    remove(lib);
}
END_TEST

START_TEST(write_error_exits_1)
{
    char dir[4096], args[8192], log[8192];
    tmp_model(dir, sizeof dir, "zoo_no_such_dir");
    rmdir(dir);
    snprintf(args, sizeof args, "squeezenet --image 64 -o %s/model.onnx", dir);
    ck_assert_int_eq(zoo(args, log, sizeof log), 1);
    ck_assert_msg(strstr(log, "cannot write") && strstr(log, "model.onnx"), "%s", log);
    ck_assert(!file_exists(dir));
}
END_TEST

/* ------------------------------------------------------------ the models */

typedef struct op_count {
    xf_op op;
    int n;
} op_count;

#define MAX_COUNTS 20

typedef struct zoo_case {
    const char *model, *args;
    int n_nodes; /* -1: not checked (the importer fuses conv+relu) */
    op_count counts[MAX_COUNTS];
    int fused_relu; /* relu nodes + convs with a fused relu */
    int n_outputs;
    int out_rank[2];
    int64_t out_dims[2][4];
} zoo_case;

/* Histograms counted from the architectures (see the comment of each). */
static const zoo_case cases[] = {
    /* stem conv + 8 blocks x 2 convs + 3 downsamples, each with a BN; relu:
     * stem + 2 per block; one add per block. */
    {"resnet18", "--image 32 --classes 10", 69,
     {{XF_OP_CONV, 20}, {XF_OP_BATCHNORM, 20}, {XF_OP_RELU, 17}, {XF_OP_ADD, 8},
      {XF_OP_MAXPOOL, 1}, {XF_OP_GLOBAL_AVGPOOL, 1}, {XF_OP_FLATTEN, 1}, {XF_OP_GEMM, 1}},
     0, 1, {2}, {{1, 10}}},
    /* 16 basic blocks, 3 downsamples. */
    {"resnet34", "--image 32 --width 8 --classes 10", 125,
     {{XF_OP_CONV, 36}, {XF_OP_BATCHNORM, 36}, {XF_OP_RELU, 33}, {XF_OP_ADD, 16},
      {XF_OP_MAXPOOL, 1}, {XF_OP_GLOBAL_AVGPOOL, 1}, {XF_OP_FLATTEN, 1}, {XF_OP_GEMM, 1}},
     0, 1, {2}, {{1, 10}}},
    /* 16 bottlenecks x 3 convs + 4 downsamples (layer1 widens 8 -> 32). */
    {"resnet50", "--image 32 --width 8 --batch 2", 175,
     {{XF_OP_CONV, 53}, {XF_OP_BATCHNORM, 53}, {XF_OP_RELU, 49}, {XF_OP_ADD, 16},
      {XF_OP_MAXPOOL, 1}, {XF_OP_GLOBAL_AVGPOOL, 1}, {XF_OP_FLATTEN, 1}, {XF_OP_GEMM, 1}},
     0, 1, {2}, {{2, 1000}}},
    /* stem conv + 8 fires x 3 convs + classifier conv, each followed by relu. */
    {"squeezenet", "--image 64 --classes 10", -1,
     {{XF_OP_CONV, 26}, {XF_OP_CONCAT, 8}, {XF_OP_MAXPOOL, 3}, {XF_OP_DROPOUT, 1},
      {XF_OP_GLOBAL_AVGPOOL, 1}, {XF_OP_FLATTEN, 1}, {XF_OP_GEMM, 0}},
     26, 1, {2}, {{1, 10}}},
    /* 3 decomposed LayerNorms (9 nodes each), mask 5 nodes, per layer
     * 6 linear (MatMul+Add) + 2 attention MatMuls, 3 Reshape/Transpose to
     * heads + 1 back, Div, mask Add, Softmax, 2 residual Adds, GELU 5 nodes;
     * 3 embedding Gathers + 2 Adds; pooler Gather, Gemm, Tanh. */
    {"bert", "--layers 1 --hidden 32 --heads 2 --seq 8 --vocab 50 --batch 2", 72,
     {{XF_OP_GATHER, 4}, {XF_OP_MATMUL, 8}, {XF_OP_ADD, 18}, {XF_OP_MUL, 6}, {XF_OP_DIV, 5},
      {XF_OP_SUB, 4}, {XF_OP_POW, 3}, {XF_OP_SQRT, 3}, {XF_OP_REDUCE_MEAN, 6},
      {XF_OP_RESHAPE, 4}, {XF_OP_TRANSPOSE, 4}, {XF_OP_SOFTMAX, 1}, {XF_OP_ERF, 1},
      {XF_OP_UNSQUEEZE, 2}, {XF_OP_CAST, 1}, {XF_OP_GEMM, 1}, {XF_OP_TANH, 1},
      {XF_OP_LAYERNORM, 0}},
     0, 2, {3, 2}, {{2, 8, 32}, {2, 32}}},
    /* patch conv, Reshape, Transpose, Expand, Concat, pos Add; per block 2
     * LayerNorm, 4 linear + 2 attention MatMuls, 3+1 Reshape/Transpose,
     * Div, Softmax, 2 residual Adds, GELU (exported as Div Erf Add Mul Mul);
     * final LayerNorm, Gather, Gemm. */
    {"vit", "--layers 2 --hidden 32 --heads 2 --patch 8 --image 32 --classes 10", 75,
     {{XF_OP_CONV, 1}, {XF_OP_LAYERNORM, 5}, {XF_OP_MATMUL, 16}, {XF_OP_SOFTMAX, 2},
      {XF_OP_RESHAPE, 9}, {XF_OP_TRANSPOSE, 9}, {XF_OP_EXPAND, 1}, {XF_OP_CONCAT, 1},
      {XF_OP_GATHER, 1}, {XF_OP_GEMM, 1}, {XF_OP_REDUCE_MEAN, 0}},
     0, 1, {2}, {{1, 10}}},
    /* 3 decomposed LayerNorms (9 nodes each); 2 embedding Gathers + Add;
     * per layer a merged Q/K/V linear split three ways, 3 Reshape/Transpose
     * to heads + 1 back, 2 attention MatMuls, Div, the causal mask as Cast
     * and Where, Softmax, 3 more linear (MatMul+Add), 2 residual Adds, tanh
     * GELU 8 nodes (4 Mul, Pow, Add, Tanh, Add); the LM head MatMul. */
    {"gpt", "--layers 1 --hidden 32 --heads 2 --seq 8 --vocab 50 --batch 2", 64,
     {{XF_OP_GATHER, 2}, {XF_OP_MATMUL, 7}, {XF_OP_ADD, 15}, {XF_OP_MUL, 7}, {XF_OP_DIV, 4},
      {XF_OP_SUB, 3}, {XF_OP_POW, 4}, {XF_OP_SQRT, 3}, {XF_OP_REDUCE_MEAN, 6},
      {XF_OP_RESHAPE, 4}, {XF_OP_TRANSPOSE, 4}, {XF_OP_SPLIT, 1}, {XF_OP_SOFTMAX, 1},
      {XF_OP_CAST, 1}, {XF_OP_WHERE, 1}, {XF_OP_TANH, 1}, {XF_OP_ERF, 0}},
     0, 1, {3}, {{2, 8, 50}}},
};

static int fused_relus(const xf_graph *g)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_RELU ||
            (g->nodes[i].op == XF_OP_CONV && g->nodes[i].params.activation == XF_ACT_RELU))
            n++;
    return n;
}

static void check_structure(const zoo_case *c, const xf_graph *g)
{
    int hist[XF_OP_COUNT];
    xf_graph_op_histogram(g, hist);
    ck_assert_msg(hist[XF_OP_OPAQUE] == 0, "%s: %d opaque nodes", c->model, hist[XF_OP_OPAQUE]);
    if (c->n_nodes >= 0)
        ck_assert_msg(g->n_nodes == c->n_nodes, "%s: %d nodes, expected %d", c->model, g->n_nodes,
                      c->n_nodes);
    for (int i = 0; i < MAX_COUNTS && (c->counts[i].op != XF_OP_OPAQUE); i++)
        ck_assert_msg(hist[c->counts[i].op] == c->counts[i].n, "%s: %d %s nodes, expected %d",
                      c->model, hist[c->counts[i].op], xf_op_get(c->counts[i].op)->name,
                      c->counts[i].n);
    if (c->fused_relu)
        ck_assert_msg(fused_relus(g) == c->fused_relu, "%s: %d relus, expected %d", c->model,
                      fused_relus(g), c->fused_relu);
    ck_assert_int_eq(g->n_outputs, c->n_outputs);
    for (int k = 0; k < c->n_outputs; k++) {
        xf_shape want = xf_shape_make(c->out_rank[k], c->out_dims[k]);
        char a[96], b[96];
        const xf_shape *got = &g->values[g->outputs[k]].shape;
        ck_assert_msg(xf_shape_equal(got, &want), "%s output %d is %s, expected %s", c->model, k,
                      xf_shape_str(got, a, sizeof a), xf_shape_str(&want, b, sizeof b));
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != XF_OP_BATCHNORM) continue;
        const xf_value *var = &g->values[g->nodes[i].inputs[4]];
        ck_assert_int_eq(var->kind, XF_VALUE_CONST);
        const float *v = var->data;
        for (int64_t j = 0; j < xf_shape_numel(&var->shape); j++)
            ck_assert_msg(v[j] > 0.0f, "%s: batchnorm %d variance %g", c->model, i, v[j]);
    }
}

/* Finite everywhere and not one repeated value. */
static void check_outputs(const zoo_case *c, const xf_graph *g)
{
    xf_error err;
    xf_tensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    xf_tensor *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    ck_assert_int_eq(xf_graph_random_inputs(g, 11, in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(g, in, g->n_inputs, out, &err) == XF_OK, "%s: %s", c->model,
                  err.msg);
    for (int k = 0; k < g->n_outputs; k++) {
        ck_assert_int_eq(out[k].dtype, XF_F32);
        const float *y = out[k].data;
        int64_t n = xf_shape_numel(&out[k].shape), distinct = 0;
        for (int64_t j = 0; j < n; j++) {
            ck_assert_msg(isfinite(y[j]), "%s output %d[%lld] = %g", c->model, k, (long long)j,
                          y[j]);
            if (y[j] != y[0]) distinct++;
        }
        ck_assert_msg(distinct > 0, "%s output %d is constant %g", c->model, k, y[0]);
    }
    for (int i = 0; i < g->n_inputs; i++) xf_tensor_free(&in[i]);
    for (int k = 0; k < g->n_outputs; k++) xf_tensor_free(&out[k]);
    free(in);
    free(out);
}

START_TEST(models_load_and_run)
{
    const zoo_case *c = &cases[_i];
    char path[4096], args[8192];
    snprintf(path, sizeof path, "%s.zoo.onnx", xf_test_tmp(c->model));
    snprintf(args, sizeof args, "%s %s", c->model, c->args);
    write_model(args, path);
    xf_graph g;
    load_unfolded(path, &g);
    check_structure(c, &g);
    check_outputs(c, &g);
    if (strcmp(c->model, "bert") == 0) {
        const xf_value *ids = &g.values[g.inputs[0]], *mask = &g.values[g.inputs[1]];
        ck_assert_str_eq(ids->name, "input_ids");
        ck_assert_str_eq(mask->name, "attention_mask");
        ck_assert_int_eq(ids->dtype, XF_I64);
        ck_assert_int_eq(mask->dtype, XF_I64);
    } else if (strcmp(c->model, "gpt") == 0) {
        ck_assert_int_eq(g.n_inputs, 1);
        ck_assert_str_eq(g.values[g.inputs[0]].name, "input_ids");
        ck_assert_int_eq(g.values[g.inputs[0]].dtype, XF_I64);
    } else {
        ck_assert_int_eq(g.n_inputs, 1);
        ck_assert_str_eq(g.values[g.inputs[0]].name, "input");
    }
    xf_test_onnx_checker(path);
    xf_graph_free(&g);
    remove(path);
}
END_TEST

/* The decoder is causal: changing the last token leaves the logits of
 * every earlier position unchanged, and changes the last position's. */
START_TEST(gpt_is_causal)
{
    char path[4096];
    tmp_model(path, sizeof path, "zoo_gpt_causal.onnx");
    write_model("gpt --layers 2 --hidden 32 --heads 2 --seq 6 --vocab 40", path);
    xf_graph g;
    load_unfolded(path, &g);
    xf_error err;
    xf_tensor in[2], out[2];
    memset(in, 0, sizeof in);
    memset(out, 0, sizeof out);
    const xf_shape *s = &g.values[g.inputs[0]].shape;
    for (int r = 0; r < 2; r++) {
        ck_assert_int_eq(xf_tensor_alloc(&in[r], XF_I64, s, &err), XF_OK);
        int64_t *ids = in[r].data;
        for (int j = 0; j < 6; j++) ids[j] = (7 * j + 3) % 40;
        if (r == 1) ids[5] = (ids[5] + 11) % 40;
        ck_assert_msg(xf_interp_run(&g, &in[r], 1, &out[r], &err) == XF_OK, "%s", err.msg);
    }
    const float *a = out[0].data, *b = out[1].data;
    double early = 0, last = 0;
    for (int64_t j = 0; j < 6 * 40; j++) {
        double d = fabs((double)a[j] - (double)b[j]);
        if (j < 5 * 40) early = d > early ? d : early;
        else last = d > last ? d : last;
    }
    ck_assert_msg(early == 0.0, "an earlier position saw the last token (diff %g)", early);
    ck_assert_msg(last > 1e-6, "the last position ignored its own token (diff %g)", last);
    for (int r = 0; r < 2; r++) {
        xf_tensor_free(&in[r]);
        xf_tensor_free(&out[r]);
    }
    xf_graph_free(&g);
    remove(path);
}
END_TEST

START_TEST(seed_determines_weights)
{
    char a[4096], b[4096], d[4096], args[8192];
    const char *model = "resnet18 --image 32 --width 8 --classes 10";
    tmp_model(a, sizeof a, "zoo_seed_a.onnx");
    tmp_model(b, sizeof b, "zoo_seed_b.onnx");
    tmp_model(d, sizeof d, "zoo_seed_d.onnx");
    snprintf(args, sizeof args, "%s --seed 5", model);
    write_model(args, a);
    write_model(args, b);
    snprintf(args, sizeof args, "%s --seed 6", model);
    write_model(args, d);
    size_t na, nb, nd;
    char *fa = xf_test_read_file(a, &na);
    char *fb = xf_test_read_file(b, &nb);
    char *fd = xf_test_read_file(d, &nd);
    ck_assert_msg(na == nb && memcmp(fa, fb, na) == 0, "same seed, different files");
    ck_assert_msg(na == nd, "another seed changed the file size (%zu vs %zu)", na, nd);
    ck_assert_msg(memcmp(fa, fd, na) != 0, "another seed gave the same file");

    /* Same structure, different values in every parameter tensor. */
    xf_graph ga, gd;
    load_unfolded(a, &ga);
    load_unfolded(d, &gd);
    int ha[XF_OP_COUNT], hd[XF_OP_COUNT];
    xf_graph_op_histogram(&ga, ha);
    xf_graph_op_histogram(&gd, hd);
    ck_assert(memcmp(ha, hd, sizeof ha) == 0);
    static const char *const params[] = {"conv1.weight", "layer1.0.bn1.running_var",
                                         "layer2.0.downsample.0.weight", "fc.weight", "fc.bias"};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        const xf_value *va = value_named(&ga, params[i]), *vd = value_named(&gd, params[i]);
        ck_assert_msg(va && vd, "parameter %s missing", params[i]);
        ck_assert(xf_shape_equal(&va->shape, &vd->shape));
        size_t bytes = (size_t)xf_shape_numel(&va->shape) * sizeof(float);
        ck_assert_msg(memcmp(va->data, vd->data, bytes) != 0, "%s equal across seeds", params[i]);
    }
    xf_graph_free(&ga);
    xf_graph_free(&gd);
    free(fa);
    free(fb);
    free(fd);
    remove(a);
    remove(b);
    remove(d);
}
END_TEST

/* ------------------------------------------------------ default models */

/* BERT: embeddings (vocab, 512 positions, 2 types) + LN; per layer q,k,v,o
 * H x H, FFN H x 4H and back, 2 LNs; pooler H x H. Float scalars: two per
 * LN, two for the mask, per layer sqrt(d) and three for GELU. */
static long long bert_params(long long L, long long H, long long V)
{
    long long emb = (V + 512 + 2) * H + 2 * H;
    long long layer = 4 * (H * H + H) + (H * 4 * H + 4 * H) + (4 * H * H + H) + 2 * 2 * H;
    long long scalars = 2 * (1 + 2 * L) + 2 + 4 * L;
    return emb + L * layer + H * H + H + scalars;
}

/* ViT: patch conv, class token, positions, per block 2 LN + q,k,v,o + MLP
 * (+ one sqrt(d) scalar), final LN, head. */
static long long vit_params(long long L, long long H, long long P, long long I, long long C)
{
    long long tokens = (I / P) * (I / P) + 1;
    long long layer = 2 * 2 * H + 4 * (H * H + H) + (H * 4 * H + 4 * H) + (4 * H * H + H) + 1;
    return 3 * P * P * H + H + H + tokens * H + L * layer + 2 * H + H * C + C;
}

START_TEST(default_parameter_counts)
{
    static const struct {
        const char *model;
        long long params;
    } defaults[] = {
        /* torchvision: 11,689,512 / 21,797,672 / 25,557,032 trainable, plus
         * BN running mean and var (2 x 4,800 / 2 x 8,512 / 2 x 26,560). */
        {"resnet18", 11689512LL + 9600},
        {"resnet34", 21797672LL + 17024},
        {"resnet50", 25557032LL + 53120},
        {"squeezenet", 1235496LL},
        {"bert", 0},
        {"vit", 0},
    };
    long long want_bert = bert_params(2, 128, 1000);
    long long want_vit = vit_params(4, 192, 16, 224, 1000);
    /* The shared vit_tiny export has the same weights but no sqrt(d) scalars. */
    ck_assert_int_eq(want_vit - 4, 2158504LL);
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
        long long n = defaults[i].params;
        if (strcmp(defaults[i].model, "bert") == 0) n = want_bert;
        if (strcmp(defaults[i].model, "vit") == 0) n = want_vit;
        xf_graph g;
        xf_test_modelzoo_build(defaults[i].model, "", &g);
        long long got = xf_modelzoo_param_count(&g);
        ck_assert_msg(got == n, "%s: %lld parameters, expected %lld", defaults[i].model, got, n);
        fprintf(stderr, "%s: %d nodes, %lld parameters\n", defaults[i].model, g.n_nodes, got);
        xf_graph_free(&g);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("modelzoo");
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 120);
    tcase_add_test(cli, list_and_help);
    tcase_add_test(cli, usage_errors);
    tcase_add_test(cli, cli_writes_the_library_model);
    tcase_add_test(cli, write_error_exits_1);
    suite_add_tcase(s, cli);
    TCase *models = tcase_create("models");
    tcase_set_timeout(models, 600);
    tcase_add_loop_test(models, models_load_and_run, 0, (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(models, seed_determines_weights);
    tcase_add_test(models, gpt_is_causal);
    tcase_add_test(models, default_parameter_counts);
    suite_add_tcase(s, models);
    return xf_test_run(s);
}
