/*
 * agent_fixture.c — the fixture shared by the agent suites (see
 * agent_fixture.h): the target runtime at one thread and two model files
 * compared in it, an analytic cost model and independent op costs,
 * graph-building shorthands that assert on failure, two hand-built rules
 * with their reverses, and an environment over them.
 */
#include "agent_fixture.h"

#include <stdlib.h>

#include "testutil.h"

xf_target *xf_fx_target(void)
{
    xf_target_options o = xf_target_default_options();
    o.threads = 1;
    xf_target *t = NULL;
    xf_error err;
    xf_status st = xf_target_open(&o, &t, &err);
    if (st == XF_ERR_UNSUPPORTED) return NULL;
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    return t;
}

xf_cost_model *xf_fx_cost_model(void)
{
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_ANALYTIC;
    o.cache_path = NULL;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.kernel_overhead_us = 2;
    xf_cost_model *cm = NULL;
    xf_error err;
    ck_assert_msg(xf_cost_open(&o, &cm, &err) == XF_OK, "%s", err.msg);
    return cm;
}

xf_op_cost xf_fx_cost_of(xf_cost_model *cm, xf_op op, const xf_params *p, int n,
                         const xf_shape *sh)
{
    xf_dtype dt[4] = {XF_F32, XF_F32, XF_F32, XF_F32};
    xf_op_cost c;
    xf_error err;
    xf_params def = xf_params_default();
    ck_assert_msg(xf_cost_op(cm, op, p ? p : &def, n, dt, sh, &c, &err) == XF_OK, "%s",
                  err.msg);
    return c;
}

xf_shape xf_fx_shape(int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    return xf_shape_make(rank, dims);
}

xf_params xf_fx_conv3x3(int act)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = 1;
    p.group = 1;
    p.activation = act;
    return p;
}

int xf_fx_op(xf_graph *g, xf_op op, const xf_params *p, int a, int b)
{
    xf_error err;
    int in[2] = {a, b};
    xf_params def = xf_params_default();
    int v = xf_graph_op(g, op, p ? p : &def, in, b < 0 ? 1 : 2, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

int xf_fx_input(xf_graph *g, const char *name, xf_shape s)
{
    xf_error err;
    int v = xf_graph_add_input(g, name, XF_F32, &s, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

int xf_fx_weight(xf_graph *g, const char *name, xf_shape s, uint64_t seed)
{
    xf_error err;
    int64_t n = xf_shape_numel(&s);
    float *d = malloc((size_t)n * sizeof *d);
    xf_rng rng;
    xf_rng_seed(&rng, seed);
    for (int64_t i = 0; i < n; i++) d[i] = xf_rng_uniform(&rng, -1, 1);
    int v = xf_graph_add_const_owned(g, name, XF_F32, &s, d, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

void xf_fx_output(xf_graph *g, int v)
{
    xf_error err;
    ck_assert_msg(xf_graph_mark_output(g, v, &err) == XF_OK, "%s", err.msg);
}

xf_params xf_fx_swap_last_two(void)
{
    xf_params p = xf_params_default();
    p.n_axes = 4;
    p.axes[0] = 0;
    p.axes[1] = 1;
    p.axes[2] = 3;
    p.axes[3] = 2;
    return p;
}

int xf_fx_unfused_conv_relu(xf_graph *g)
{
    int x = xf_fx_input(g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(g, "w", xf_fx_shape(4, 4, 4, 3, 3), 11);
    xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
    int c = xf_fx_op(g, XF_OP_CONV, &p, x, w);
    xf_params t = xf_fx_swap_last_two();
    c = xf_fx_op(g, XF_OP_TRANSPOSE, &t, xf_fx_op(g, XF_OP_TRANSPOSE, &t, c, -1), -1);
    return xf_fx_op(g, XF_OP_RELU, NULL, c, -1);
}

void xf_fx_conv_relu_and_two_matmuls(xf_graph *g, int64_t rows, int64_t cols)
{
    xf_fx_output(g, xf_fx_unfused_conv_relu(g));
    int a = xf_fx_input(g, "a", xf_fx_shape(2, rows, cols, 0, 0));
    for (int j = 0; j < 2; j++) {
        int m = xf_fx_weight(g, j ? "m2" : "m1", xf_fx_shape(2, cols, 1, 0, 0), (uint64_t)(20 + j));
        xf_fx_output(g, xf_fx_op(g, XF_OP_MATMUL, NULL, a, m));
    }
}

/* relu(conv(x0, w0)) => conv[act=relu](x0, w0) */
void xf_fx_two_adds(xf_graph *g)
{
    xf_graph_init(g);
    int a = xf_fx_input(g, "a", xf_fx_shape(2, 4, 4, 0, 0));
    int b = xf_fx_input(g, "b", xf_fx_shape(2, 4, 4, 0, 0));
    int c = xf_fx_input(g, "c", xf_fx_shape(2, 4, 4, 0, 0));
    xf_fx_output(g, xf_fx_op(g, XF_OP_ADD, NULL, xf_fx_op(g, XF_OP_ADD, NULL, a, b), c));
}

void xf_fx_rule_conv_relu(xf_rule *r)
{
    xf_rule_init(r);
    xf_graph *side[2] = {&r->src, &r->dst};
    for (int s = 0; s < 2; s++) {
        int x = xf_fx_input(side[s], "x0", xf_fx_shape(4, 2, 4, 4, 4));
        int w = xf_fx_input(side[s], "w0", xf_fx_shape(4, 4, 4, 3, 3));
        xf_params p = xf_fx_conv3x3(s == 0 ? XF_ACT_NONE : XF_ACT_RELU);
        int c = xf_fx_op(side[s], XF_OP_CONV, &p, x, w);
        xf_fx_output(side[s], s == 0 ? xf_fx_op(side[s], XF_OP_RELU, NULL, c, -1) : c);
    }
}

/* matmul(m0, m1), matmul(m0, m2) => split(matmul(m0, concat[axis=1](m1, m2))) */
void xf_fx_rule_matmul_merge(xf_rule *r)
{
    xf_rule_init(r);
    xf_graph *side[2] = {&r->src, &r->dst};
    for (int s = 0; s < 2; s++) {
        int m[3];
        const char *names[3] = {"m0", "m1", "m2"};
        for (int i = 0; i < 3; i++)
            m[i] = xf_fx_input(side[s], names[i], xf_fx_shape(2, 4, 4, 0, 0));
        if (s == 0) {
            xf_fx_output(side[s], xf_fx_op(side[s], XF_OP_MATMUL, NULL, m[0], m[1]));
            xf_fx_output(side[s], xf_fx_op(side[s], XF_OP_MATMUL, NULL, m[0], m[2]));
            continue;
        }
        xf_params cat = xf_params_default();
        cat.axis = 1;
        int in[2] = {m[1], m[2]};
        xf_error err;
        int c = xf_graph_op(side[s], XF_OP_CONCAT, &cat, in, 2, &err);
        ck_assert_msg(c >= 0, "%s", err.msg);
        int mm = xf_fx_op(side[s], XF_OP_MATMUL, NULL, m[0], c);
        xf_params sp = xf_params_default();
        sp.axis = 1;
        sp.n_split = 2;
        sp.split[0] = sp.split[1] = 4;
        int node = xf_graph_add_node(side[s], XF_OP_SPLIT, &sp, &mm, 1, 2, NULL, &err);
        ck_assert_msg(node >= 0, "%s", err.msg);
        xf_fx_output(side[s], side[s]->nodes[node].outputs[0]);
        xf_fx_output(side[s], side[s]->nodes[node].outputs[1]);
    }
}

void xf_fx_write_rules_db(const char *path, xf_rule_status status)
{
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r[2];
    xf_fx_rule_conv_relu(&r[0]);
    xf_fx_rule_matmul_merge(&r[1]);
    xf_rulesdb_rule_meta m = {status, 0, NULL, 0};
    ck_assert_msg(xf_rulesdb_add_rules(db, r, 2, &m, NULL, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r[0]);
    xf_rule_free(&r[1]);
    xf_rulesdb_close(db);
}

xf_optimize_options xf_fx_quiet_options(const char *db, xf_search_kind kind)
{
    xf_optimize_options o = xf_optimize_options_default();
    o.rules = db;
    o.agent = XF_OPTIMIZE_SEARCH;
    o.search = kind;
    o.backend = XF_COST_ANALYTIC;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.cache = XF_COST_CACHE_NONE;
    o.latency = 0;
    return o;
}

xf_ruleset *xf_fx_rules(void)
{
    xf_rule r[2];
    xf_fx_rule_conv_relu(&r[0]);
    xf_fx_rule_matmul_merge(&r[1]);
    xf_error err;
    ck_assert_msg(xf_rule_validate(&r[0], &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_rule_validate(&r[1], &err) == XF_OK, "%s", err.msg);
    int64_t ids[2] = {1, 2};
    xf_ruleset_options o = xf_ruleset_options_default();
    xf_ruleset *rs = NULL;
    ck_assert_msg(xf_ruleset_from_rules(r, ids, 2, &o, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r[0]);
    xf_rule_free(&r[1]);
    return rs;
}

void xf_fx_env_open(xf_fx_env *f, void (*build)(xf_graph *g), const xf_env_options *opt)
{
    f->cm = xf_fx_cost_model();
    f->rs = xf_fx_rules();
    build(&f->g);
    xf_error err;
    ck_assert_msg(xf_env_create(f->rs, f->cm, &f->g, opt, &f->e, &err) == XF_OK, "%s", err.msg);
}

void xf_fx_env_close(xf_fx_env *f)
{
    xf_env_free(f->e);
    xf_graph_free(&f->g);
    xf_ruleset_free(f->rs);
    xf_cost_close(f->cm);
}

static int fx_layernorm(xf_graph *g, int x, uint64_t seed)
{
    xf_params p = xf_params_default();
    p.axis = -1;
    p.epsilon = 1e-5f;
    int in[3] = {x, xf_fx_weight(g, "gamma", xf_fx_shape(1, 8, 0, 0, 0), seed),
                 xf_fx_weight(g, "beta", xf_fx_shape(1, 8, 0, 0, 0), seed + 1)};
    xf_error err;
    int v = xf_graph_op(g, XF_OP_LAYERNORM, &p, in, 3, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

/* matmul by a [k,n] weight plus an [n] bias. */
static int fx_linear(xf_graph *g, int x, int64_t k, int64_t n, uint64_t seed)
{
    int y = xf_fx_op(g, XF_OP_MATMUL, NULL, x,
                     xf_fx_weight(g, "w", xf_fx_shape(2, k, n, 0, 0), seed));
    return xf_fx_op(g, XF_OP_ADD, NULL, y, xf_fx_weight(g, "b", xf_fx_shape(1, n, 0, 0, 0), seed + 1));
}

static int fx_reshape(xf_graph *g, int x, int rank, const int64_t *dims)
{
    xf_params p = xf_params_default();
    p.n_shape = rank;
    for (int i = 0; i < rank; i++) p.shape[i] = dims[i];
    return xf_fx_op(g, XF_OP_RESHAPE, &p, x, -1);
}

static int fx_transpose(xf_graph *g, int x, int a, int b, int c, int d)
{
    xf_params p = xf_params_default();
    p.n_axes = 4;
    p.axes[0] = a, p.axes[1] = b, p.axes[2] = c, p.axes[3] = d;
    return xf_fx_op(g, XF_OP_TRANSPOSE, &p, x, -1);
}

void xf_fx_class_token_graph(xf_graph *g, int64_t position, int stream_output)
{
    xf_graph_init(g);
    xf_error err;
    const int64_t heads[4] = {1, 5, 2, 4}, seq[3] = {1, 5, 8};
    int x = xf_fx_input(g, "x", xf_fx_shape(3, 1, 5, 8, 0));
    int ln1 = fx_layernorm(g, x, 1);
    int q = fx_transpose(g, fx_reshape(g, fx_linear(g, ln1, 8, 8, 3), 4, heads), 0, 2, 1, 3);
    int k = fx_transpose(g, fx_reshape(g, fx_linear(g, ln1, 8, 8, 5), 4, heads), 0, 2, 3, 1);
    int v = fx_transpose(g, fx_reshape(g, fx_linear(g, ln1, 8, 8, 7), 4, heads), 0, 2, 1, 3);
    xf_shape s0 = xf_shape_make(0, NULL);
    float scale = 0.5f;
    int c = xf_graph_add_const(g, "scale", XF_F32, &s0, &scale, &err);
    ck_assert_msg(c >= 0, "%s", err.msg);
    int scores = xf_fx_op(g, XF_OP_MUL, NULL, xf_fx_op(g, XF_OP_MATMUL, NULL, q, k), c);
    xf_params sm = xf_params_default();
    sm.axis = -1;
    int probs = xf_fx_op(g, XF_OP_SOFTMAX, &sm, scores, -1);
    int ctx = fx_transpose(g, xf_fx_op(g, XF_OP_MATMUL, NULL, probs, v), 0, 2, 1, 3);
    int attn = fx_linear(g, fx_reshape(g, ctx, 3, seq), 8, 8, 9);
    int h = xf_fx_op(g, XF_OP_ADD, NULL, x, attn);
    int mlp = fx_linear(g, fx_layernorm(g, h, 11), 8, 16, 13);
    mlp = fx_linear(g, xf_fx_op(g, XF_OP_GELU, NULL, mlp, -1), 16, 8, 15);
    int out = fx_layernorm(g, xf_fx_op(g, XF_OP_ADD, NULL, h, mlp), 17);
    int idx = xf_graph_add_const(g, "position", XF_I64, &s0, &position, &err);
    ck_assert_msg(idx >= 0, "%s", err.msg);
    xf_params ga = xf_params_default();
    ga.axis = 1;
    int cls = xf_fx_op(g, XF_OP_GATHER, &ga, out, idx);
    xf_fx_output(g, xf_fx_op(g, XF_OP_MATMUL, NULL, cls,
                             xf_fx_weight(g, "head", xf_fx_shape(2, 8, 3, 0, 0), 19)));
    if (stream_output) xf_fx_output(g, h);
}

/* The search graph: x -> [conv -> relu] x 3, and matmul(a, m1), matmul(a, m2),
 * matmul(b, m3), matmul(b, m4) with a: [64,256], m: [256,16] (big enough
 * that merging saves memory traffic on the analytic roofline). */
void xf_fx_search_graph(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_fx_input(g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    for (int i = 0; i < 3; i++) {
        int w = xf_fx_weight(g, "w", xf_fx_shape(4, 4, 4, 3, 3), (uint64_t)(10 + i));
        xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
        x = xf_fx_op(g, XF_OP_RELU, NULL, xf_fx_op(g, XF_OP_CONV, &p, x, w), -1);
    }
    xf_fx_output(g, x);
    for (int k = 0; k < 2; k++) {
        int a = xf_fx_input(g, k ? "b" : "a", xf_fx_shape(2, 64, 256, 0, 0));
        for (int j = 0; j < 2; j++) {
            int m = xf_fx_weight(g, "m", xf_fx_shape(2, 256, 16, 0, 0), (uint64_t)(20 + 2 * k + j));
            xf_fx_output(g, xf_fx_op(g, XF_OP_MATMUL, NULL, a, m));
        }
    }
}

void xf_fx_expect_written_same(const xf_graph *model, const xf_graph *work, uint64_t seed)
{
    xf_error err;
    uint8_t *buf = NULL;
    size_t len = 0;
    ck_assert_msg(xf_onnx_save_buffer(work, &buf, &len, &err) == XF_OK, "%s", err.msg);
    xf_graph back;
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "written", NULL, NULL, &back, &err) == XF_OK,
                  "%s", err.msg);
    free(buf);
    xf_test_expect_same_function(model, &back, seed, 1e-5);
    xf_graph fin;
    ck_assert_msg(xf_agent_finish(work, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(model, &fin, seed + 1, 1e-5);
    xf_graph_free(&fin);
    xf_graph_free(&back);
}

void xf_fx_expect_same_in_target(xf_target *t, const char *orig, const char *written,
                                 const xf_onnx_options *o, double rtol, double atol,
                                 const char *at)
{
    xf_graph a, b;
    xf_error err;
    ck_assert_msg(xf_onnx_load(orig, o, &a, &err) == XF_OK, "%s: %s", at, err.msg);
    ck_assert_msg(xf_onnx_load(written, o, &b, &err) == XF_OK, "%s: written: %s", at, err.msg);
    xf_target_model *ma = NULL, *mb = NULL;
    xf_tensor *oa = xf_tensor_array_alloc(a.n_outputs), *ob = xf_tensor_array_alloc(a.n_outputs);
    ck_assert_msg(xf_target_model_load_file(t, orig, &a, 3, &ma, &err) == XF_OK &&
                      xf_target_model_run(ma, &err) == XF_OK &&
                      xf_target_model_outputs(ma, oa, &err) == XF_OK,
                  "%s: the original in ONNX Runtime: %s", at, err.msg);
    ck_assert_msg(xf_target_model_load_file(t, written, &a, 3, &mb, &err) == XF_OK &&
                      xf_target_model_run(mb, &err) == XF_OK &&
                      xf_target_model_outputs(mb, ob, &err) == XF_OK,
                  "%s: the written model in ONNX Runtime: %s", at, err.msg);
    for (int i = 0; i < a.n_outputs; i++) {
        double max_abs, max_rel;
        ck_assert_msg(xf_tensor_compare(&ob[i], &oa[i], &max_abs, &max_rel, &err) == XF_OK,
                      "%s: output %d: %s", at, i, err.msg);
        ck_assert_msg(xf_tensor_close(&ob[i], &oa[i], rtol, atol),
                      "%s: output %d differs by %g (tolerance %g + %g*|ref|)", at, i, max_abs,
                      atol, rtol);
    }
    xf_target_model_free(ma);
    xf_target_model_free(mb);
    xf_tensor_array_free(oa, a.n_outputs);
    xf_tensor_array_free(ob, a.n_outputs);
    xf_graph_free(&a);
    xf_graph_free(&b);
}

/* See agent_fixture.h. */
void xf_fx_tied_graph(xf_graph *g, int other, int *e, int *et)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 3, (int64_t[]){2, 3, XF_FX_TIED_H});
    *e = xf_test_weight(g, "wte", 2, (int64_t[]){XF_FX_TIED_V, XF_FX_TIED_H}, 7);
    const float *ed = g->values[*e].data;
    float *t = xf_malloc(sizeof(float) * XF_FX_TIED_V * XF_FX_TIED_H);
    ck_assert_ptr_nonnull(t);
    for (size_t i = 0; i < XF_FX_TIED_V; i++)
        for (size_t j = 0; j < XF_FX_TIED_H; j++)
            t[j * XF_FX_TIED_V + i] = ed[i * XF_FX_TIED_H + j];
    xf_shape st = xf_shape_make(2, (int64_t[]){XF_FX_TIED_H, XF_FX_TIED_V});
    *et = xf_graph_add_const_owned(g, "wte_t", XF_F32, &st, t, NULL);
    ck_assert_int_ge(*et, 0);
    int64_t ids[6] = {0, 5, 17, XF_FX_TIED_V - 1, 2, 9};
    xf_shape si = xf_shape_make(2, (int64_t[]){2, 3});
    int idv = xf_graph_add_const(g, "ids", XF_I64, &si, ids, NULL);
    ck_assert_int_ge(idv, 0);
    xf_params p = xf_params_default();
    p.axis = 0;
    int rows = xf_graph_op(g, XF_OP_GATHER, &p, (int[]){*e, idv}, 2, NULL);
    ck_assert_int_ge(rows, 0);
    int h = xf_test_op2(g, XF_OP_ADD, NULL, x, rows);
    xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, h, *et));
    if (other) xf_test_out(g, xf_test_op2(g, XF_OP_ADD, NULL, *e, *e));
}

double xf_fx_graph_costs(xf_costmemo *m, const xf_graph *g, xf_op_cost *per, int cap)
{
    xf_error err;
    xf_graph_index *ix = NULL;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    xf_op_cost total;
    ck_assert_int_le(g->n_nodes, cap);
    ck_assert_msg(xf_costmemo_graph(m, g, ix, per, &total, &err) == XF_OK, "%s", err.msg);
    xf_graph_index_free(ix);
    return total.ms;
}

xf_ruleset *xf_fx_one_rule_set(xf_rule *r)
{
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 1, &o, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(r);
    return rs;
}

int xf_fx_locations(const xf_ruleset *rs, const xf_graph *g, xf_match *m, int cap)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    int n = -1;
    ck_assert_msg(xf_match_rule(rs, 0, g, ix, m, cap, &n, &err) == XF_OK, "%s", err.msg);
    xf_graph_index_free(ix);
    return n;
}
