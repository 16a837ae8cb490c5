/*
 * test_onnx_export.c — the ONNX exporter. Small graphs built with the IR
 * API (one per operator family, every rule-only op, opaque nodes with
 * hand-encoded attributes) are exported and then
 *  (1) passed through onnx.checker (full_check) with /usr/bin/python3 when
 *      its onnx module is present (a skipped part of the case otherwise),
 *      which also checks the opset, IR version, unique value names and
 *      value_info for every node output;
 *  (2) re-imported: interpreter outputs must match the original graph's on
 *      random inputs (bit-identical for mapped ops, 1e-5 for lowered ones)
 *      and, without rule-only ops, the canonical hash must be unchanged;
 *  (3) failure cases: unwritable destinations give XF_ERR_IO and leave
 *      neither the file nor a temporary behind; invalid graphs write nothing.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

/* ------------------------------------------------------------ helpers */

static xf_shape shp(int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    return xf_shape_make(rank, dims);
}

static int input(xf_graph *g, const char *name, xf_shape s)
{
    xf_error err;
    int v = xf_graph_add_input(g, name, XF_F32, &s, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

/* A float constant with values in [lo, lo + 1). */
static int cst(xf_graph *g, const char *name, xf_shape s, uint64_t seed, float lo)
{
    xf_error err;
    xf_tensor t;
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_OK);
    xf_test_fill(&t, seed, 0);
    float *f = t.data;
    for (int64_t i = 0; i < xf_shape_numel(&s); i++) f[i] = lo + 0.5f * (f[i] + 1.0f);
    int v = xf_graph_add_const(g, name, XF_F32, &s, t.data, &err);
    xf_tensor_free(&t);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int cst_i64(xf_graph *g, const char *name, int n, const int64_t *vals)
{
    xf_error err;
    int64_t d = n;
    xf_shape s = xf_shape_make(1, &d);
    int v = xf_graph_add_const(g, name, XF_I64, &s, vals, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int op(xf_graph *g, xf_op o, const xf_params *p, int n, const int *in)
{
    xf_error err;
    int v = xf_graph_op(g, o, p, in, n, &err);
    ck_assert_msg(v >= 0, "%s: %s", xf_op_get(o)->name, err.msg);
    return v;
}

static int op1(xf_graph *g, xf_op o, const xf_params *p, int a)
{
    return op(g, o, p, 1, &a);
}

static int op2(xf_graph *g, xf_op o, const xf_params *p, int a, int b)
{
    int in[2] = {a, b};
    return op(g, o, p, 2, in);
}

/* Whether python3 has onnx; a skipped part of the running case when not. */
static int python_onnx(void)
{
    static int have = -1;
    if (have < 0) have = xf_test_have_python("onnx");
    if (!have) xf_test_skip_part("python3's onnx module not found: onnx.checker not run");
    return have;
}

/* Checker plus structural assertions on the written model. */
static const char *const check_py =
    "import sys, onnx\n"
    "m = onnx.load(sys.argv[1])\n"
    "onnx.checker.check_model(m, full_check=True)\n"
    "ops = {o.domain: o.version for o in m.opset_import}\n"
    "assert ops.get('') == int(sys.argv[2]), ops\n"
    "assert m.ir_version == int(sys.argv[3]), m.ir_version\n"
    "assert m.producer_name == 'rlflow'\n"
    "for extra in sys.argv[4:]:\n"
    "    d, v = extra.split(':')\n"
    "    assert ops.get(d) == int(v), (d, ops)\n"
    "g = m.graph\n"
    "defined = [i.name for i in g.input] + [t.name for t in g.initializer] + \\\n"
    "          [o for n in g.node for o in n.output]\n"
    "assert len(defined) == len(set(defined)), 'duplicate value names'\n"
    "typed = set(v.name for v in g.value_info) | set(o.name for o in g.output)\n"
    "for n in g.node:\n"
    "    for o in n.output:\n"
    "        assert o in typed, 'no value_info for ' + o\n";

static void python_check(const char *path, int opset, int ir, const char *extra)
{
    if (!python_onnx()) return;
    char script[4096];
    snprintf(script, sizeof script, "%s", xf_test_tmp("export_check.py"));
    FILE *f = fopen(script, "w");
    ck_assert_ptr_nonnull(f);
    fputs(check_py, f);
    fclose(f);
    int rc = xf_test_system("/usr/bin/python3 %s %s %d %d %s", script, path, opset, ir,
                            extra ? extra : "");
    ck_assert_msg(rc == 0, "onnx.checker / structure check failed for %s (rc %d)", path, rc);
}

static void free_tensors(xf_tensor *t, int n)
{
    for (int i = 0; i < n; i++) xf_tensor_free(&t[i]);
    free(t);
}

/* Runs a and b on the same random inputs; outputs must agree within atol. */
static void compare_outputs(const xf_graph *a, const xf_graph *b, double atol, const char *label)
{
    xf_error err;
    ck_assert_int_eq(a->n_inputs, b->n_inputs);
    ck_assert_int_eq(a->n_outputs, b->n_outputs);
    xf_tensor *in = calloc((size_t)a->n_inputs + 1, sizeof *in);
    xf_tensor *oa = calloc((size_t)a->n_outputs + 1, sizeof *oa);
    xf_tensor *ob = calloc((size_t)a->n_outputs + 1, sizeof *ob);
    ck_assert_int_eq(xf_graph_random_inputs(a, 11, in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(a, in, a->n_inputs, oa, &err) == XF_OK, "%s: %s", label, err.msg);
    ck_assert_msg(xf_interp_run(b, in, b->n_inputs, ob, &err) == XF_OK, "%s re-imported: %s",
                  label, err.msg);
    for (int i = 0; i < a->n_outputs; i++) {
        double max_abs = 0, max_rel = 0;
        ck_assert_msg(xf_tensor_compare(&ob[i], &oa[i], &max_abs, &max_rel, &err) == XF_OK,
                      "%s: output %d: %s", label, i, err.msg);
        ck_assert_msg(max_abs <= atol, "%s: output %d differs by %g after export", label, i,
                      max_abs);
    }
    free_tensors(in, a->n_inputs);
    free_tensors(oa, a->n_outputs);
    free_tensors(ob, a->n_outputs);
}

/* Export g, check the file, re-import into *back (freed here if NULL). */
static void round_trip(const xf_graph *g, const char *label, int opset, int ir, int same_hash,
                       double atol, xf_graph *back)
{
    xf_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s.onnx", xf_test_tmp(label));
    remove(path);
    ck_assert_msg(xf_onnx_save(g, path, &err) == XF_OK, "%s: export: %s", label, err.msg);
    python_check(path, opset, ir, NULL);
    xf_graph b;
    ck_assert_msg(xf_onnx_load(path, NULL, &b, &err) == XF_OK, "%s: re-import: %s", label, err.msg);
    if (same_hash)
        ck_assert_msg(xf_graph_hash(g) == xf_graph_hash(&b), "%s: canonical hash changed", label);
    compare_outputs(g, &b, atol, label);
    if (back) *back = b;
    else xf_graph_free(&b);
}

/* ------------------------------------------------- operator families */

/* The operators added for models from the wild export at opset 14
 * (HardSwish's), pass onnx.checker and come back as the same graph. */
START_TEST(wild_ops)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 13;
    int x = input(&g, "x", shp(4, 1, 2, 3, 4));
    xf_params clip = xf_params_default();
    clip.alpha = 0.0f;
    clip.beta = INFINITY;
    xf_params hs = xf_params_default();
    hs.alpha = 1.0f / 6;
    hs.beta = 0.5f;
    xf_params lr = xf_params_default();
    lr.alpha = 0.01f;
    int a = op1(&g, XF_OP_LEAKYRELU, &lr,
                op1(&g, XF_OP_HARDSIGMOID, &hs, op1(&g, XF_OP_CLIP, &clip, x)));
    int b = op1(&g, XF_OP_HARDSWISH, NULL, x);
    int slope = cst(&g, "slope", shp(3, 2, 1, 1, 0), 3, -1.0f);
    int m = op2(&g, XF_OP_MAX, NULL, op2(&g, XF_OP_MIN, NULL, a, b),
                op2(&g, XF_OP_PRELU, NULL, x, slope));
    xf_params rs = xf_params_default();
    rs.n_axes = 1;
    rs.axes[0] = 1;
    rs.keepdims = 1;
    int sum = op1(&g, XF_OP_REDUCE_SUM, &rs, m);
    rs.axes[0] = -1;
    xf_test_out(&g, op1(&g, XF_OP_REDUCE_MAX, &rs, sum));
    xf_params rz = xf_params_default();
    rz.n_shape = 4;
    rz.shape[0] = 1;
    rz.shape[1] = 2;
    rz.shape[2] = 6;
    rz.shape[3] = 8;
    rz.kernel[0] = XF_RESIZE_LINEAR;
    rz.kernel[1] = XF_RESIZE_HALF_PIXEL;
    int up = op1(&g, XF_OP_RESIZE, &rz, m);
    xf_params ct = xf_params_default();
    ct.kernel[0] = ct.kernel[1] = 2;
    ct.stride[0] = ct.stride[1] = 2;
    ct.dilation[0] = ct.dilation[1] = 1;
    ct.group = 1;
    ct.n_shape = 4;
    ct.shape[0] = 1;
    ct.shape[1] = 3;
    ct.shape[2] = 13; /* 12 + an output padding of 1 */
    ct.shape[3] = 16;
    int w = cst(&g, "w", shp(4, 2, 3, 2, 2), 4, -0.5f);
    xf_test_out(&g, op2(&g, XF_OP_CONV_TRANSPOSE, &ct, up, w));
    xf_params tile = xf_params_default();
    tile.n_shape = 4;
    tile.shape[0] = tile.shape[1] = 1;
    tile.shape[2] = 2;
    tile.shape[3] = 3;
    xf_test_out(&g, op1(&g, XF_OP_TILE, &tile, up));
    round_trip(&g, "export_wild_ops", 14, 7, 1, 1e-5, NULL);
    xf_graph_free(&g);
}
END_TEST

START_TEST(elementwise_ops)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 13;
    int x = input(&g, "x", shp(3, 2, 3, 4, 0)), y = input(&g, "y", shp(3, 2, 3, 4, 0));
    int c = cst(&g, "c", shp(2, 3, 4, 0, 0), 1, -0.5f);
    int one = cst(&g, "one", shp(1, 1, 0, 0, 0), 2, 1.0f);
    int a = op2(&g, XF_OP_ADD, NULL, x, c);
    int s = op2(&g, XF_OP_SUB, NULL, a, y);
    int m = op2(&g, XF_OP_MUL, NULL, s, x);
    int pos = op2(&g, XF_OP_ADD, NULL, op1(&g, XF_OP_ABS, NULL, y), one);
    int d = op2(&g, XF_OP_DIV, NULL, m, pos);
    int t = op1(&g, XF_OP_TANH, NULL, op1(&g, XF_OP_SIGMOID, NULL, op1(&g, XF_OP_RELU, NULL, d)));
    int e = op1(&g, XF_OP_EXP, NULL, op1(&g, XF_OP_NEG, NULL, op1(&g, XF_OP_ERF, NULL, t)));
    int l = op1(&g, XF_OP_LOG, NULL, pos);
    int r = op1(&g, XF_OP_RECIPROCAL, NULL, op1(&g, XF_OP_SQRT, NULL, pos));
    int pw = op2(&g, XF_OP_POW, NULL, pos, c);
    xf_test_out(&g, op1(&g, XF_OP_IDENTITY, NULL, e));
    xf_test_out(&g, op2(&g, XF_OP_ADD, NULL, l, r));
    xf_test_out(&g, pw);
    xf_test_out(&g, d);
    round_trip(&g, "export_elementwise", 13, 7, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

START_TEST(linalg_ops)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 12;
    int x = input(&g, "x", shp(3, 2, 3, 4, 0)), a = input(&g, "a", shp(2, 4, 3, 0, 0));
    int w = cst(&g, "w", shp(2, 4, 5, 0, 0), 3, -0.5f);
    xf_test_out(&g, op2(&g, XF_OP_MATMUL, NULL, x, w));
    xf_params p = xf_params_default();
    p.alpha = 0.5f;
    p.beta = 2.0f;
    p.trans_a = 1;
    p.trans_b = 1;
    int b = cst(&g, "b", shp(2, 5, 4, 0, 0), 4, -0.5f), bias = cst(&g, "bias", shp(1, 5, 0, 0, 0), 5, 0);
    int in3[3] = {a, b, bias};
    xf_test_out(&g, op(&g, XF_OP_GEMM, &p, 3, in3));
    p.trans_a = 0;
    p.trans_b = 0;
    p.beta = 0;
    int w2 = cst(&g, "w2", shp(2, 3, 2, 0, 0), 6, -0.5f);
    xf_test_out(&g, op2(&g, XF_OP_GEMM, &p, a, w2));
    round_trip(&g, "export_linalg", 12, 7, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

START_TEST(conv_pool_ops)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 11;
    int x = input(&g, "x", shp(4, 1, 4, 9, 8));
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    p.group = 1;
    p.activation = XF_ACT_RELU;
    int w = cst(&g, "w", shp(4, 6, 4, 3, 3), 7, -0.5f), b = cst(&g, "b", shp(1, 6, 0, 0, 0), 8, 0);
    int in3[3] = {x, w, b};
    int c1 = op(&g, XF_OP_CONV, &p, 3, in3);
    /* grouped, strided, dilated, asymmetric pads, fused sigmoid, no bias */
    p.group = 2;
    p.stride[0] = 2;
    p.dilation[1] = 2;
    p.pads[0] = 0;
    p.pads[1] = 2;
    p.pads[2] = 2;
    p.pads[3] = 1;
    p.activation = XF_ACT_SIGMOID;
    int w2 = cst(&g, "w2", shp(4, 4, 3, 3, 3), 9, -0.5f);
    int c2 = op2(&g, XF_OP_CONV, &p, c1, w2);
    p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 1;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.group = 1;
    p.activation = XF_ACT_TANH;
    int w3 = cst(&g, "w3", shp(4, 4, 6, 1, 1), 10, -0.5f);
    xf_test_out(&g, op2(&g, XF_OP_CONV, &p, c1, w3));
    xf_params mp = xf_params_default();
    mp.kernel[0] = mp.kernel[1] = 3;
    mp.stride[0] = mp.stride[1] = 2;
    mp.pads[0] = mp.pads[1] = mp.pads[2] = mp.pads[3] = 1;
    mp.dilation[0] = mp.dilation[1] = 1;
    mp.ceil_mode = 1;
    xf_test_out(&g, op1(&g, XF_OP_MAXPOOL, &mp, c1));
    mp.dilation[0] = 2;
    mp.ceil_mode = 0;
    mp.pads[0] = mp.pads[2] = 2;
    xf_test_out(&g, op1(&g, XF_OP_MAXPOOL, &mp, c1));
    xf_params ap = xf_params_default();
    ap.kernel[0] = ap.kernel[1] = 2;
    ap.stride[0] = ap.stride[1] = 2;
    ap.pads[0] = ap.pads[1] = 1;
    ap.count_include_pad = 1;
    xf_test_out(&g, op1(&g, XF_OP_AVGPOOL, &ap, c2));
    ap.count_include_pad = 0;
    xf_test_out(&g, op1(&g, XF_OP_AVGPOOL, &ap, c2));
    xf_test_out(&g, op1(&g, XF_OP_GLOBAL_AVGPOOL, NULL, c2));
    xf_params bp = xf_params_default();
    bp.epsilon = 1e-3f;
    int bn[5] = {c1, cst(&g, "scale", shp(1, 6, 0, 0, 0), 11, 0.5f),
                 cst(&g, "shift", shp(1, 6, 0, 0, 0), 12, -0.5f),
                 cst(&g, "mean", shp(1, 6, 0, 0, 0), 13, -0.5f),
                 cst(&g, "var", shp(1, 6, 0, 0, 0), 14, 0.5f)};
    xf_test_out(&g, op(&g, XF_OP_BATCHNORM, &bp, 5, bn));
    round_trip(&g, "export_conv", 11, 6, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

START_TEST(norm_ops_raise_opset)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 13; /* LayerNormalization needs 17 */
    int x = input(&g, "x", shp(3, 2, 3, 8, 0));
    xf_params p = xf_params_default();
    p.axis = -1;
    p.epsilon = 1e-5f;
    int in3[3] = {x, cst(&g, "gamma", shp(1, 8, 0, 0, 0), 15, 0.5f),
                  cst(&g, "beta", shp(1, 8, 0, 0, 0), 16, -0.5f)};
    int ln = op(&g, XF_OP_LAYERNORM, &p, 3, in3);
    xf_params last = xf_params_default();
    last.axis = -1;
    xf_test_out(&g, op1(&g, XF_OP_SOFTMAX, &last, ln));
    xf_params sm = xf_params_default();
    sm.axis = 1;
    xf_test_out(&g, op1(&g, XF_OP_SOFTMAX, &sm, ln));
    xf_params rm = xf_params_default();
    rm.n_axes = 1;
    rm.axes[0] = 1;
    rm.keepdims = 1;
    xf_test_out(&g, op1(&g, XF_OP_REDUCE_MEAN, &rm, ln));
    rm.axes[0] = -1;
    rm.keepdims = 0;
    xf_test_out(&g, op1(&g, XF_OP_REDUCE_MEAN, &rm, x));
    round_trip(&g, "export_norm", 17, 8, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

/* Data movement at opset 11 (list parameters as attributes) and 13 (as
 * int64 inputs). */
static void build_movement(xf_graph *g, int64_t opset)
{
    xf_error err;
    xf_graph_init(g);
    g->opset = opset;
    int x = input(g, "x", shp(4, 2, 3, 4, 5));
    xf_params p = xf_params_default();
    p.n_axes = 4;
    p.axes[0] = 0, p.axes[1] = 2, p.axes[2] = 3, p.axes[3] = 1;
    int tr = op1(g, XF_OP_TRANSPOSE, &p, x); /* [2,4,5,3] */
    p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 8, p.shape[1] = 15;
    xf_test_out(g, op1(g, XF_OP_RESHAPE, &p, tr));
    p = xf_params_default();
    p.axis = 2;
    xf_test_out(g, op1(g, XF_OP_FLATTEN, &p, x));
    p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = 0;
    int us = op1(g, XF_OP_UNSQUEEZE, &p, x); /* [1,2,3,4,5] */
    xf_test_out(g, op1(g, XF_OP_SQUEEZE, &p, us));
    p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1, p.axes[1] = -1;
    p.starts[0] = 0, p.starts[1] = 1;
    p.ends[0] = 2, p.ends[1] = 5;
    p.steps[0] = 1, p.steps[1] = 2;
    xf_test_out(g, op1(g, XF_OP_SLICE, &p, x));
    p = xf_params_default();
    p.axis = 1;
    p.n_split = 2;
    p.split[0] = 1, p.split[1] = 2;
    int sp = xf_graph_add_node(g, XF_OP_SPLIT, &p, &x, 1, 2, "split", &err);
    ck_assert_msg(sp >= 0, "%s", err.msg);
    p = xf_params_default();
    p.axis = 1;
    int cin[3] = {g->nodes[sp].outputs[1], g->nodes[sp].outputs[0], x};
    xf_test_out(g, op(g, XF_OP_CONCAT, &p, 3, cin));
    int64_t idx[2] = {2, 0};
    p = xf_params_default();
    p.axis = 1;
    xf_test_out(g, op2(g, XF_OP_GATHER, &p, x, cst_i64(g, "idx", 2, idx)));
    p = xf_params_default();
    p.starts[2] = 1, p.ends[1] = 1, p.ends[3] = 2;
    p.pad_mode = XF_PAD_CONSTANT;
    p.value = 0.5;
    xf_test_out(g, op1(g, XF_OP_PAD, &p, x));
    p = xf_params_default();
    p.starts[2] = 1, p.starts[3] = 2, p.ends[2] = 2, p.ends[3] = 1;
    p.pad_mode = XF_PAD_REFLECT;
    xf_test_out(g, op1(g, XF_OP_PAD, &p, x));
    p.pad_mode = XF_PAD_EDGE;
    xf_test_out(g, op1(g, XF_OP_PAD, &p, x));
    int small = input(g, "small", shp(2, 3, 1, 0, 0));
    p = xf_params_default();
    p.n_shape = 3;
    p.shape[0] = 2, p.shape[1] = 3, p.shape[2] = 4;
    xf_test_out(g, op1(g, XF_OP_EXPAND, &p, small));
    int sh = op1(g, XF_OP_SHAPE, NULL, x);
    p = xf_params_default();
    p.to = XF_F32;
    xf_test_out(g, op1(g, XF_OP_CAST, &p, sh));
    int eq = op2(g, XF_OP_EQUAL, NULL, op1(g, XF_OP_RELU, NULL, x), x);
    int win[3] = {eq, x, op1(g, XF_OP_NEG, NULL, x)};
    xf_test_out(g, op(g, XF_OP_WHERE, NULL, 3, win));
    xf_test_out(g, op1(g, XF_OP_DROPOUT, NULL, tr));
}

START_TEST(movement_ops_opset11)
{
    xf_graph g;
    build_movement(&g, 11);
    round_trip(&g, "export_movement11", 11, 6, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

START_TEST(movement_ops_opset13)
{
    xf_graph g;
    build_movement(&g, 13);
    round_trip(&g, "export_movement13", 13, 7, 1, 0.0, NULL);
    xf_graph_free(&g);
}
END_TEST

/* Before opset 13 Softmax flattens at its axis: the last axis (or one with
 * only 1s after it) maps directly, any other is moved last and back. */
START_TEST(softmax_before_opset13)
{
    xf_graph g;
    xf_graph_init(&g);
    g.opset = 11;
    int x = input(&g, "x", shp(3, 2, 3, 4, 0)), y = input(&g, "y", shp(3, 2, 3, 1, 0));
    xf_params p = xf_params_default();
    p.axis = -1;
    xf_test_out(&g, op1(&g, XF_OP_SOFTMAX, &p, x));
    p.axis = 1;
    xf_test_out(&g, op1(&g, XF_OP_SOFTMAX, &p, y));
    round_trip(&g, "export_softmax_direct", 11, 6, 1, 0.0, NULL);
    xf_test_out(&g, op1(&g, XF_OP_SOFTMAX, &p, x)); /* axis 1 of [2,3,4] */
    xf_graph b;
    round_trip(&g, "export_softmax_moved", 11, 6, 0, 1e-6, &b);
    int hist[XF_OP_COUNT];
    xf_graph_op_histogram(&b, hist);
    ck_assert_int_eq(hist[XF_OP_SOFTMAX], 3);
    ck_assert_int_eq(hist[XF_OP_TRANSPOSE], 2);
    xf_graph_free(&b);
    xf_graph_free(&g);
}
END_TEST

/* --------------------------------------------------------- rule-only ops */

START_TEST(rule_only_ops_lowered)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = input(&g, "x", shp(4, 1, 4, 5, 5));
    xf_error err;
    float two = 2.5f;
    xf_shape s0 = xf_shape_make(0, NULL);
    int s = xf_graph_add_const(&g, "s", XF_F32, &s0, &two, &err);
    int sm = op2(&g, XF_OP_SCALAR_MUL, NULL, x, s);
    int ge = op1(&g, XF_OP_GELU, NULL, sm);
    xf_test_out(&g, ge);
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    int w = cst(&g, "w", shp(4, 4, 4, 1, 1), 17, -0.5f);
    int big = op1(&g, XF_OP_ENLARGE, &p, w); /* [4,4,3,3] */
    xf_params cp = xf_params_default();
    cp.kernel[0] = cp.kernel[1] = 3;
    cp.stride[0] = cp.stride[1] = 1;
    cp.dilation[0] = cp.dilation[1] = 1;
    cp.pads[0] = cp.pads[1] = cp.pads[2] = cp.pads[3] = 1;
    cp.group = 1;
    xf_test_out(&g, op2(&g, XF_OP_CONV, &cp, x, big));
    xf_params k = xf_params_default();
    k.n_shape = 4;
    k.shape[0] = 4, k.shape[1] = 4, k.shape[2] = 3, k.shape[3] = 3;
    int iconv = op(&g, XF_OP_CONST_IDENTITY_CONV, &k, 0, NULL);
    xf_test_out(&g, op2(&g, XF_OP_CONV, &cp, ge, iconv));
    k.shape[1] = 1;
    int pool = op(&g, XF_OP_CONST_POOL, &k, 0, NULL);
    cp.group = 4;
    xf_test_out(&g, op2(&g, XF_OP_CONV, &cp, x, pool));
    xf_params im = xf_params_default();
    im.n_shape = 2;
    im.shape[0] = im.shape[1] = 5;
    xf_test_out(&g,
                op2(&g, XF_OP_MATMUL, NULL, x, op(&g, XF_OP_CONST_IDENTITY_MATRIX, &im, 0, NULL)));
    xf_params on = xf_params_default();
    on.n_shape = 2;
    on.shape[0] = 1, on.shape[1] = 5;
    xf_test_out(&g, op2(&g, XF_OP_ADD, NULL, x, op(&g, XF_OP_CONST_ONES, &on, 0, NULL)));
    xf_params cs = xf_params_default();
    cs.n_shape = 2;
    cs.shape[0] = 2, cs.shape[1] = 3;
    cs.to = XF_F32;
    cs.value = -1.5;
    /* an output that is an initializer */
    xf_test_out(&g, op(&g, XF_OP_CONSTANT_OF_SHAPE, &cs, 0, NULL));
    round_trip(&g, "export_rule_only", 13, 7, 0, 1e-5, NULL);

    char path[4096];
    snprintf(path, sizeof path, "%s.onnx", xf_test_tmp("export_rule_only"));
    xf_graph b;
    xf_onnx_options keep = xf_onnx_default_options();
    keep.fold_constants = 0; /* see the lowered forms, not their folded values */
    ck_assert_msg(xf_onnx_load(path, &keep, &b, &err) == XF_OK, "%s", err.msg);
    int hist[XF_OP_COUNT];
    xf_graph_op_histogram(&b, hist);
    for (int op_id = 0; op_id < XF_OP_COUNT; op_id++)
        if (hist[op_id]) ck_assert_msg(xf_op_get((xf_op)op_id)->onnx_name != NULL,
                                       "rule-only op %s survived export", xf_op_get((xf_op)op_id)->name);
    ck_assert_int_eq(hist[XF_OP_ERF], 1); /* gelu became Div/Erf/Add/Mul/Mul */
    ck_assert_int_eq(hist[XF_OP_PAD], 1); /* enlarge */
    ck_assert_int_eq(hist[XF_OP_CONV], 3);
    xf_graph_free(&b);
    xf_graph_free(&g);
}
END_TEST

/* --------------------------------------------------------------- opaque */

typedef struct pbuf {
    uint8_t b[256];
    size_t n;
} pbuf;

static void put_varint(pbuf *p, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7f);
        v >>= 7;
        p->b[p->n++] = (uint8_t)(byte | (v ? 0x80 : 0));
    } while (v);
}

static void put_string(pbuf *p, int field, const char *s)
{
    put_varint(p, (uint64_t)field << 3 | 2);
    put_varint(p, strlen(s));
    memcpy(p->b + p->n, s, strlen(s));
    p->n += strlen(s);
}

/* AttributeProto fields in field-number order, as protobuf-c writes them:
 * name(1) f(2) i(3) s(4) ints(8) type(20). */
static void attr_float(pbuf *p, const char *name, float f)
{
    put_string(p, 1, name);
    put_varint(p, 2 << 3 | 5);
    memcpy(p->b + p->n, &f, 4); /* little-endian host */
    p->n += 4;
    put_varint(p, 20 << 3);
    put_varint(p, 1); /* FLOAT */
}

static void attr_ints(pbuf *p, const char *name, const int64_t *v, int n)
{
    put_string(p, 1, name);
    for (int i = 0; i < n; i++) {
        put_varint(p, 8 << 3);
        put_varint(p, (uint64_t)v[i]);
    }
    put_varint(p, 20 << 3);
    put_varint(p, 7); /* INTS */
}

static void attr_string(pbuf *p, const char *name, const char *s)
{
    put_string(p, 1, name);
    put_string(p, 4, s);
    put_varint(p, 20 << 3);
    put_varint(p, 3); /* STRING */
}

static xf_opaque *make_opaque(const char *op_type, const char *domain, int64_t version, int n,
                              const pbuf *attrs)
{
    xf_opaque *o = calloc(1, sizeof *o);
    o->op_type = strdup(op_type);
    o->domain = strdup(domain);
    o->domain_version = version;
    o->n_attrs = n;
    o->attr_bytes = calloc((size_t)n + 1, sizeof *o->attr_bytes);
    o->attr_len = calloc((size_t)n + 1, sizeof *o->attr_len);
    for (int i = 0; i < n; i++) {
        o->attr_bytes[i] = malloc(attrs[i].n);
        memcpy(o->attr_bytes[i], attrs[i].b, attrs[i].n);
        o->attr_len[i] = attrs[i].n;
    }
    return o;
}

static const xf_node *find_opaque(const xf_graph *g, const char *op_type)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_OPAQUE && strcmp(g->nodes[i].opaque->op_type, op_type) == 0)
            return &g->nodes[i];
    return NULL;
}

START_TEST(opaque_nodes_round_trip)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    g.opset = 13;
    int x = input(&g, "x", shp(2, 2, 3, 0, 0));
    pbuf leaky = {{0}, 0};
    attr_float(&leaky, "alpha", 0.125f);
    xf_dtype f32 = XF_F32;
    xf_shape s23 = shp(2, 2, 3, 0, 0);
    int n1 = xf_graph_add_opaque(&g, make_opaque("Elu", "", 13, 1, &leaky), &x, 1, &f32,
                                 &s23, 1, "leaky", &err);
    ck_assert_msg(n1 >= 0, "%s", err.msg);
    pbuf frob[2] = {{{0}, 0}, {{0}, 0}};
    int64_t sizes[3] = {1, 2, 300};
    attr_ints(&frob[0], "sizes", sizes, 3);
    attr_string(&frob[1], "mode", "fast");
    xf_dtype dts[2] = {XF_F32, XF_I64};
    xf_shape shs[2] = {shp(1, 6, 0, 0, 0), shp(0, 0, 0, 0, 0)};
    int in2[2] = {g.nodes[n1].outputs[0], x};
    int n2 = xf_graph_add_opaque(&g, make_opaque("Frob", "com.example", 2, 2, frob), in2, 2, dts,
                                 shs, 2, "frob", &err);
    ck_assert_msg(n2 >= 0, "%s", err.msg);
    xf_test_out(&g, g.nodes[n2].outputs[0]);
    xf_test_out(&g, g.nodes[n2].outputs[1]);
    xf_test_out(&g, op1(&g, XF_OP_RELU, NULL, g.nodes[n1].outputs[0]));
    ck_assert_str_eq(xf_onnx_op_type(&g.nodes[n2]), "Frob");

    char path[4096];
    snprintf(path, sizeof path, "%s.onnx", xf_test_tmp("export_opaque"));
    ck_assert_msg(xf_onnx_save(&g, path, &err) == XF_OK, "%s", err.msg);
    python_check(path, 13, 7, "com.example:2");
    xf_graph b;
    ck_assert_msg(xf_onnx_load(path, NULL, &b, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_hash(&g) == xf_graph_hash(&b), "opaque round trip changed the hash");
    const xf_node *lb = find_opaque(&b, "Elu"), *fb = find_opaque(&b, "Frob");
    ck_assert_ptr_nonnull(lb);
    ck_assert_ptr_nonnull(fb);
    ck_assert_str_eq(fb->opaque->domain, "com.example");
    ck_assert_int_eq(fb->opaque->domain_version, 2);
    ck_assert_int_eq(fb->opaque->n_attrs, 2);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(fb->opaque->attr_len[i], frob[i].n);
        ck_assert_mem_eq(fb->opaque->attr_bytes[i], frob[i].b, frob[i].n);
    }
    ck_assert_int_eq(lb->opaque->n_attrs, 1);
    ck_assert_mem_eq(lb->opaque->attr_bytes[0], leaky.b, leaky.n);
    const xf_value *fo = &b.values[fb->outputs[1]];
    ck_assert_int_eq(fo->dtype, XF_I64);
    ck_assert_int_eq(fo->shape.rank, 0);
    xf_graph_free(&b);
    remove(path);
    xf_graph_free(&g);
}
END_TEST

START_TEST(opaque_attribute_garbage_is_parse_error)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    int x = input(&g, "x", shp(1, 4, 0, 0, 0));
    pbuf bad = {{0x0A, 0x7F, 'a'}, 3}; /* name claims 127 bytes, has 1 */
    xf_dtype f32 = XF_F32;
    xf_shape s = shp(1, 4, 0, 0, 0);
    int n = xf_graph_add_opaque(&g, make_opaque("Foo", "", 13, 1, &bad), &x, 1, &f32, &s, 1,
                                "foo", &err);
    ck_assert_int_ge(n, 0);
    xf_test_out(&g, g.nodes[n].outputs[0]);
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_int_eq(xf_onnx_save_buffer(&g, &buf, &len, &err), XF_ERR_PARSE);
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(err.msg, "foo") != NULL, "message does not name the node: %s", err.msg);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------- names and constants */

static const xf_value *find_value(const xf_graph *g, const char *name)
{
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].name && strcmp(g->values[i].name, name) == 0) return &g->values[i];
    return NULL;
}

START_TEST(names_unique_and_constants_kept)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    g.opset = 13;
    int x = input(&g, "x", shp(1, 4, 0, 0, 0));
    float unused[3] = {1.5f, -2.0f, 3.25f};
    xf_shape s3 = shp(1, 3, 0, 0, 0);
    ck_assert_int_ge(xf_graph_add_const(&g, "unused", XF_F32, &s3, unused, &err), 0);
    int a = xf_graph_add_node(&g, XF_OP_RELU, NULL, &x, 1, 1, "dup", &err);
    int a_out = g.nodes[a].outputs[0];
    int b = xf_graph_add_node(&g, XF_OP_NEG, NULL, &a_out, 1, 1, "dup", &err);
    int c = op1(&g, XF_OP_TANH, NULL, g.nodes[b].outputs[0]); /* unnamed */
    /* a value named like a generated name: must not collide */
    int d = xf_graph_add_node(&g, XF_OP_SIGMOID, NULL, &c, 1, 1, "dup_1", &err);
    xf_test_out(&g, g.nodes[d].outputs[0]);
    xf_test_out(&g, c);
    xf_graph back;
    round_trip(&g, "export_names", 13, 7, 1, 0.0, &back);
    ck_assert_uint_eq(xf_graph_param_bytes(&back), sizeof unused);
    const xf_value *u = find_value(&back, "unused");
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(u->kind, XF_VALUE_CONST);
    ck_assert_mem_eq(u->data, unused, sizeof unused);
    ck_assert_str_eq(back.values[back.inputs[0]].name, "x");
    ck_assert_str_eq(back.values[back.outputs[0]].name, "dup_1");
    for (int i = 0; i < back.n_values; i++)
        for (int j = i + 1; j < back.n_values; j++)
            if (back.values[i].name && back.values[j].name)
                ck_assert_str_ne(back.values[i].name, back.values[j].name);
    xf_graph_free(&back);
    xf_graph_free(&g);
}
END_TEST

START_TEST(opset_and_ir_version)
{
    static const int64_t cases[][3] = {{0, 13, 7}, {9, 13, 7},  {11, 11, 6}, {12, 12, 7},
                                       {14, 14, 7}, {15, 15, 8}, {17, 17, 8}, {18, 17, 8}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        xf_graph g;
        xf_graph_init(&g);
        g.opset = cases[k][0];
        int x = input(&g, "x", shp(2, 2, 2, 0, 0));
        xf_test_out(&g, op1(&g, XF_OP_RELU, NULL, x));
        char label[64];
        snprintf(label, sizeof label, "export_opset_%d", (int)cases[k][0]);
        round_trip(&g, label, (int)cases[k][1], (int)cases[k][2], 1, 0.0, NULL);
        xf_graph_free(&g);
    }
}
END_TEST

START_TEST(op_type_names)
{
    xf_node n;
    memset(&n, 0, sizeof n);
    n.op = XF_OP_CONV;
    ck_assert_str_eq(xf_onnx_op_type(&n), "Conv");
    n.op = XF_OP_BATCHNORM;
    ck_assert_str_eq(xf_onnx_op_type(&n), "BatchNormalization");
    n.op = XF_OP_GELU;
    ck_assert_str_eq(xf_onnx_op_type(&n), "Mul");
    n.op = XF_OP_SCALAR_MUL;
    ck_assert_str_eq(xf_onnx_op_type(&n), "Mul");
    n.op = XF_OP_ENLARGE;
    ck_assert_str_eq(xf_onnx_op_type(&n), "Pad");
    n.op = XF_OP_CONST_POOL;
    ck_assert_str_eq(xf_onnx_op_type(&n), "Constant");
}
END_TEST

/* -------------------------------------------- determinism and buffers */

START_TEST(buffer_matches_file_and_is_deterministic)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    int x = input(&g, "x", shp(2, 3, 4, 0, 0));
    int w = cst(&g, "w", shp(2, 4, 2, 0, 0), 21, -0.5f);
    xf_test_out(&g, op1(&g, XF_OP_GELU, NULL, op2(&g, XF_OP_MATMUL, NULL, x, w)));
    uint8_t *b1, *b2;
    size_t n1, n2;
    ck_assert_int_eq(xf_onnx_save_buffer(&g, &b1, &n1, &err), XF_OK);
    ck_assert_int_eq(xf_onnx_save_buffer(&g, &b2, &n2, &err), XF_OK);
    ck_assert_uint_eq(n1, n2);
    ck_assert_mem_eq(b1, b2, n1);
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("export_det.onnx"));
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_OK);
    size_t nf;
    uint8_t *bf = (uint8_t *)xf_test_read_file(path, &nf);
    ck_assert_uint_eq(nf, n1);
    ck_assert_mem_eq(bf, b1, n1);
    xf_graph back;
    ck_assert_msg(xf_onnx_load_buffer(b1, n1, "buffer", NULL, NULL, &back, &err) == XF_OK, "%s",
                  err.msg);
    compare_outputs(&g, &back, 1e-5, "buffer");
    xf_graph_free(&back);
    free(b1);
    free(b2);
    free(bf);
    remove(path);
    xf_graph_free(&g);
}
END_TEST

/* ----------------------------------------------------------- tensors */

START_TEST(tensor_files)
{
    xf_error err;
    xf_shape s = shp(3, 2, 1, 3, 0);
    xf_tensor t, i64, back;
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_OK);
    xf_test_fill(&t, 31, 0);
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("export_tensor.pb"));
    ck_assert_int_eq(xf_onnx_save_tensor(path, &t, "input_0", &err), XF_OK);
    char *name = NULL;
    ck_assert_msg(xf_onnx_load_tensor(path, &back, &name, &err) == XF_OK, "%s", err.msg);
    ck_assert_str_eq(name, "input_0");
    ck_assert_int_eq(back.dtype, XF_F32);
    ck_assert(xf_shape_equal(&back.shape, &s));
    ck_assert_mem_eq(back.data, t.data, xf_tensor_bytes(&t));
    free(name);
    xf_tensor_free(&back);
    if (python_onnx()) {
        float *f = t.data;
        ck_assert_int_eq(
            xf_test_system("/usr/bin/python3 -c \"import onnx, onnx.numpy_helper as h, "
                           "sys; a = h.to_array(onnx.load_tensor(sys.argv[1])); "
                           "assert a.shape == (2, 1, 3) and a.dtype == 'float32'; "
                           "assert abs(float(a[1, 0, 2]) - %.9g) < 1e-7\" %s",
                           (double)f[5], path),
            0);
    }
    int64_t d = 4;
    xf_shape s4 = xf_shape_make(1, &d);
    ck_assert_int_eq(xf_tensor_alloc(&i64, XF_I64, &s4, &err), XF_OK);
    int64_t vals[4] = {-3, 0, 1LL << 40, 7};
    memcpy(i64.data, vals, sizeof vals);
    ck_assert_int_eq(xf_onnx_save_tensor(path, &i64, NULL, &err), XF_OK);
    ck_assert_msg(xf_onnx_load_tensor(path, &back, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(back.dtype, XF_I64);
    ck_assert_mem_eq(back.data, vals, sizeof vals);
    xf_tensor_free(&back);
    xf_tensor_free(&i64);
    xf_tensor_free(&t);
    remove(path);
}
END_TEST

/* ------------------------------------------------------------ failures */

static void build_tiny(xf_graph *g)
{
    xf_graph_init(g);
    int x = input(g, "x", shp(1, 4, 0, 0, 0));
    xf_test_out(g, op1(g, XF_OP_RELU, NULL, x));
}

/* No "<base>.tmp.*" left in dir. */
static void assert_no_temp(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s.tmp.", base);
    struct dirent *e;
    while ((e = readdir(d)))
        ck_assert_msg(strncmp(e->d_name, prefix, strlen(prefix)) != 0, "temporary %s left behind",
                      e->d_name);
    closedir(d);
}

START_TEST(unwritable_destinations)
{
    xf_graph g;
    build_tiny(&g);
    xf_error err;
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("export_fail"));
    mkdir(dir, 0755);

    /* missing directory */
    snprintf(path, sizeof path, "%s/no/such/dir/m.onnx", dir);
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "No such file"), "%s", err.msg);
    ck_assert_int_ne(access(path, F_OK), 0);

    /* a regular file used as a directory */
    char file[4096];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/m.onnx", file);
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_ERR_IO);
    ck_assert_int_ne(access(path, F_OK), 0);

    /* destination is a directory: rename fails after the temp was written */
    snprintf(path, sizeof path, "%s/adir", dir);
    mkdir(path, 0755);
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "adir") != NULL, "%s", err.msg);
    assert_no_temp(dir, "adir");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    rmdir(path);

    /* tensors go through the same path */
    xf_shape s = shp(1, 2, 0, 0, 0);
    xf_tensor t;
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_OK);
    memset(t.data, 0, xf_tensor_bytes(&t));
    snprintf(path, sizeof path, "%s/no/such/t.pb", dir);
    ck_assert_int_eq(xf_onnx_save_tensor(path, &t, "t", &err), XF_ERR_IO);
    xf_tensor_free(&t);
    remove(file);
    rmdir(dir);
    xf_graph_free(&g);
}
END_TEST

START_TEST(invalid_graph_writes_nothing)
{
    xf_graph g;
    build_tiny(&g);
    xf_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("export_invalid.onnx"));
    remove(path);
    g.nodes[0].inputs[0] = 99; /* dangling */
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_ERR_GRAPH);
    ck_assert_msg(strstr(err.msg, path) != NULL, "message does not name the file: %s", err.msg);
    ck_assert_int_ne(access(path, F_OK), 0);
    g.nodes[0].inputs[0] = 0;
    /* an existing file is left as it was when export fails */
    FILE *f = fopen(path, "w");
    fputs("old", f);
    fclose(f);
    g.values[g.outputs[0]].shape.dims[0] = 5; /* recorded shape drift */
    ck_assert_int_eq(xf_onnx_save(&g, path, &err), XF_ERR_SHAPE);
    size_t n;
    uint8_t *b = (uint8_t *)xf_test_read_file(path, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert_mem_eq(b, "old", 3);
    free(b);
    remove(path);
    xf_graph_free(&g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("onnx_export");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 120);
    tcase_add_test(ops, elementwise_ops);
    tcase_add_test(ops, wild_ops);
    tcase_add_test(ops, linalg_ops);
    tcase_add_test(ops, conv_pool_ops);
    tcase_add_test(ops, norm_ops_raise_opset);
    tcase_add_test(ops, movement_ops_opset11);
    tcase_add_test(ops, movement_ops_opset13);
    tcase_add_test(ops, softmax_before_opset13);
    tcase_add_test(ops, rule_only_ops_lowered);
    tcase_add_test(ops, opaque_nodes_round_trip);
    tcase_add_test(ops, opaque_attribute_garbage_is_parse_error);
    suite_add_tcase(s, ops);
    TCase *model = tcase_create("model");
    tcase_set_timeout(model, 120);
    tcase_add_test(model, names_unique_and_constants_kept);
    tcase_add_test(model, opset_and_ir_version);
    tcase_add_test(model, op_type_names);
    tcase_add_test(model, buffer_matches_file_and_is_deterministic);
    tcase_add_test(model, tensor_files);
    tcase_add_test(model, unwritable_destinations);
    tcase_add_test(model, invalid_graph_writes_nothing);
    suite_add_tcase(s, model);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
