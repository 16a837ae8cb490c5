/*
 * test_costmodel.c — the cost-model front end with the analytic backend:
 * flops and bytes of conv, matmul and gemm computed by hand; analytic times
 * from a fixed roofline (compute- and memory-bound cases, views free);
 * canonical configuration keys (timings a busy machine disturbed are in
 * test_cost_noise.c); the SQLite cache (a second query is served
 * from the cache without re-measuring, a stored value is returned as
 * stored, reopening keeps it, a changed backend identity misses; corrupt,
 * foreign and newer-schema files are refused with a clear message); the
 * cudnn backend failing cleanly where it cannot run (skipped on a machine
 * with a GPU); backend names parsed; graph cost as the sum of node costs
 * with generators free and opaque nodes estimated; and the executor
 * (outputs equal the interpreter's, graph comparison, opaque nodes
 * refused); a graph touching every cuDNN kernel family runs on the oneDNN
 * executor and, on a machine with a GPU, on the cudnn executor (skipped
 * elsewhere), and must match the interpreter. oneDNN kernels one by one
 * are in test_onednn.c.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "costmodel/costmodel.h"
#include "testutil.h"

/* peak 100 GFLOP/s = 1e8 flops per ms; 10 GB/s = 1e7 bytes per ms; 2 us */
static xf_cost_options fixed_options(const char *cache)
{
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_ANALYTIC;
    o.cache_path = cache;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.kernel_overhead_us = 2;
    return o;
}

static xf_cost_model *open_fixed(const char *cache)
{
    xf_cost_options o = fixed_options(cache);
    xf_cost_model *cm = NULL;
    xf_error err = {0};
    ck_assert_msg(xf_cost_open(&o, &cm, &err) == XF_OK, "open: %s", err.msg);
    return cm;
}

static xf_shape sh(int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    return xf_shape_make(rank, dims);
}

static void flops_of(xf_op op, const xf_params *p, int n, const xf_dtype *dt, const xf_shape *s,
                     double *flops, double *bytes)
{
    xf_dtype odt[1];
    xf_shape osh[1];
    xf_error err = {0};
    ck_assert_msg(xf_op_infer(op, p, n, dt, s, 1, odt, osh, &err) == XF_OK, "%s", err.msg);
    xf_cost_flops_bytes(op, p, n, dt, s, 1, odt, osh, flops, bytes);
}

START_TEST(flops_conv_by_hand)
{
    /* X [2,6,10,10], W [8,3,3,3] group 2, stride 2, pads 1 -> Y [2,8,5,5] */
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 2;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    p.group = 2;
    xf_dtype dt[3] = {XF_F32, XF_F32, XF_F32};
    xf_shape s[3] = {sh(4, 2, 6, 10, 10), sh(4, 8, 3, 3, 3), sh(1, 8, 0, 0, 0)};
    double f, b;
    flops_of(XF_OP_CONV, &p, 2, dt, s, &f, &b);
    double out = 2.0 * 8 * 5 * 5;
    ck_assert_double_eq(f, 2.0 * out * 3 * 3 * 3);
    ck_assert_double_eq(b, 4.0 * (2 * 6 * 10 * 10 + 8 * 3 * 3 * 3 + out));
    /* bias and fused relu add one flop per output each */
    p.activation = XF_ACT_RELU;
    flops_of(XF_OP_CONV, &p, 3, dt, s, &f, &b);
    ck_assert_double_eq(f, 2.0 * out * 27 + 2 * out);
    ck_assert_double_eq(b, 4.0 * (1200 + 216 + 8 + out));
}
END_TEST

START_TEST(flops_matmul_gemm_by_hand)
{
    /* [3,1,4,5] x [2,5,6] -> [3,2,4,6]: 2*M*N*K per batch */
    int64_t da[4] = {3, 1, 4, 5}, db[3] = {2, 5, 6};
    xf_shape s[2] = {xf_shape_make(4, da), xf_shape_make(3, db)};
    xf_dtype dt[3] = {XF_F32, XF_F32, XF_F32};
    xf_params p = xf_params_default();
    double f, b;
    flops_of(XF_OP_MATMUL, &p, 2, dt, s, &f, &b);
    ck_assert_double_eq(f, 2.0 * 3 * 2 * 4 * 6 * 5);
    ck_assert_double_eq(b, 4.0 * (60 + 60 + 144));
    /* gemm, A stored [K,M] = [7,3], B [7,2] transposed to [2,7]... B [2,7] with trans_b */
    xf_shape g[3] = {sh(2, 7, 3, 0, 0), sh(2, 2, 7, 0, 0), sh(1, 2, 0, 0, 0)};
    p.trans_a = 1;
    p.trans_b = 1;
    p.alpha = 1;
    p.beta = 1;
    flops_of(XF_OP_GEMM, &p, 3, dt, g, &f, &b);
    ck_assert_double_eq(f, 2.0 * 3 * 2 * 7 + 2.0 * 3 * 2);
    ck_assert_double_eq(b, 4.0 * (21 + 14 + 2 + 6));
    /* views move nothing */
    p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 6;
    p.shape[1] = 10;
    flops_of(XF_OP_RESHAPE, &p, 1, dt, s, &f, &b);
    ck_assert_double_eq(f, 0);
    ck_assert_double_eq(b, 0);
}
END_TEST

START_TEST(analytic_is_deterministic)
{
    xf_cost_model *a = open_fixed(NULL), *b = open_fixed(NULL);
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape s[2] = {sh(2, 256, 256, 0, 0), sh(2, 256, 256, 0, 0)};
    xf_op_cost ca, cb;
    xf_error err = {0};
    ck_assert_int_eq(xf_cost_op(a, XF_OP_MATMUL, NULL, 2, dt, s, &ca, &err), XF_OK);
    ck_assert_int_eq(xf_cost_op(b, XF_OP_MATMUL, NULL, 2, dt, s, &cb, &err), XF_OK);
    /* compute-bound: 2*256^3 flops / 1e8 per ms, plus 2 us */
    ck_assert_double_eq_tol(ca.ms, 2.0 * 256 * 256 * 256 / 1e8 + 0.002, 1e-12);
    ck_assert_double_eq(ca.ms, cb.ms);
    ck_assert_int_eq(ca.kernels, 1);
    /* memory-bound: relu on 2^20 floats reads and writes 8 MiB at 1e7 B/ms */
    xf_shape r = sh(1, 1 << 20, 0, 0, 0);
    ck_assert_int_eq(xf_cost_op(a, XF_OP_RELU, NULL, 1, dt, &r, &ca, &err), XF_OK);
    ck_assert_double_eq_tol(ca.ms, 8.0 * (1 << 20) / 1e7 + 0.002, 1e-12);
    double peak, bw;
    xf_cost_roofline(a, &peak, &bw);
    ck_assert_double_eq(peak, 100);
    ck_assert_double_eq(bw, 10);
    ck_assert_ptr_nonnull(strstr(xf_cost_identity(a), "analytic|"));
    ck_assert_ptr_nonnull(strstr(xf_cost_identity(a), "threads=1"));
    /* an invalid configuration is a shape error, not a cost */
    xf_shape bad[2] = {sh(2, 2, 3, 0, 0), sh(2, 4, 5, 0, 0)};
    ck_assert_int_eq(xf_cost_op(a, XF_OP_MATMUL, NULL, 2, dt, bad, &ca, &err), XF_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(err.msg, "matmul"));
    xf_cost_close(a);
    xf_cost_close(b);
}
END_TEST

START_TEST(describe_is_canonical)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    p.activation = XF_ACT_RELU;
    xf_dtype dt[3] = {XF_F32, XF_F32, XF_DTYPE_INVALID};
    xf_shape s[3] = {sh(4, 1, 64, 56, 56), sh(4, 64, 64, 3, 3), sh(0, 0, 0, 0, 0)};
    char buf[512];
    xf_error err = {0};
    ck_assert_int_eq(xf_cost_describe(XF_OP_CONV, &p, 3, dt, s, buf, sizeof buf, &err), XF_OK);
    ck_assert_str_eq(buf,
                     "conv2d|kernel=3,3;pads=1,1,1,1;activation=1|f32[1,64,56,56],f32[64,64,3,3],-");
    ck_assert_int_eq(xf_cost_describe(XF_OP_CONV, &p, 3, dt, s, buf, 20, &err), XF_ERR_INVALID);
}
END_TEST

START_TEST(cache_hit_without_remeasuring)
{
    const char *path = xf_test_tmp("hit.db");
    remove(path);
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape s[2] = {sh(2, 64, 32, 0, 0), sh(2, 32, 16, 0, 0)};
    xf_op_cost c1, c2;
    xf_error err = {0};
    xf_cost_model *cm = open_fixed(path);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &c1, &err), XF_OK);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    ck_assert_int_eq(c1.from_cache, 0);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &c2, &err), XF_OK);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    ck_assert_int_eq(c2.from_cache, 1);
    ck_assert_double_eq(c1.ms, c2.ms);
    ck_assert_double_eq(c1.flops, c2.flops);
    xf_cost_close(cm);

    /* the value comes from the file as stored: overwrite it behind our back */
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "UPDATE op_cost SET ms = 42.5", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    cm = open_fixed(path);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_MATMUL, NULL, 2, dt, s, &c2, &err), XF_OK);
    ck_assert_double_eq(c2.ms, 42.5);
    ck_assert_int_eq(c2.from_cache, 1);
    ck_assert_int_eq(xf_cost_measurements(cm), 0);
    xf_cost_close(cm);
}
END_TEST

/* add(a, b) and add(b, a) are one configuration: measured once, equal cost,
 * so an operand swap is never a speed-up; sub keeps its operand order. */
START_TEST(commutative_operands_share_a_measurement)
{
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape ab[2] = {sh(3, 1, 128, 768, 0), sh(1, 768, 0, 0, 0)};
    xf_shape ba[2] = {ab[1], ab[0]};
    xf_op_cost c1, c2;
    xf_error err = {0};
    xf_cost_model *cm = open_fixed(NULL);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_ADD, NULL, 2, dt, ab, &c1, &err), XF_OK);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_ADD, NULL, 2, dt, ba, &c2, &err), XF_OK);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    ck_assert_int_eq(c2.from_cache, 1);
    ck_assert_double_eq(c1.ms, c2.ms);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_SUB, NULL, 2, dt, ab, &c1, &err), XF_OK);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_SUB, NULL, 2, dt, ba, &c2, &err), XF_OK);
    ck_assert_int_eq(xf_cost_measurements(cm), 3);
    xf_cost_close(cm);
}
END_TEST

START_TEST(changed_identity_misses)
{
    const char *path = xf_test_tmp("identity.db");
    remove(path);
    xf_dtype dt[1] = {XF_F32};
    xf_shape s = sh(2, 100, 100, 0, 0);
    xf_op_cost c;
    xf_error err = {0};
    xf_cost_model *cm = open_fixed(path);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_TANH, NULL, 1, dt, &s, &c, &err), XF_OK);
    char ident[1024];
    snprintf(ident, sizeof ident, "%s", xf_cost_identity(cm));
    xf_cost_close(cm);

    /* another thread count is another identity */
    xf_cost_options o = fixed_options(path);
    o.threads = 2;
    ck_assert_int_eq(xf_cost_open(&o, &cm, &err), XF_OK);
    ck_assert_str_ne(xf_cost_identity(cm), ident);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_TANH, NULL, 1, dt, &s, &c, &err), XF_OK);
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_int_eq(xf_cost_measurements(cm), 1);
    xf_cost_close(cm);

    /* so is another roofline (a different machine for the analytic model) */
    o = fixed_options(path);
    o.bandwidth_gbps = 20;
    ck_assert_int_eq(xf_cost_open(&o, &cm, &err), XF_OK);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_TANH, NULL, 1, dt, &s, &c, &err), XF_OK);
    ck_assert_int_eq(c.from_cache, 0);
    ck_assert_double_eq_tol(c.ms, 8.0e4 / 2e7 + 0.002, 1e-12);
    xf_cost_close(cm);

    /* and the original identity still hits */
    cm = open_fixed(path);
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_TANH, NULL, 1, dt, &s, &c, &err), XF_OK);
    ck_assert_int_eq(c.from_cache, 1);
    xf_cost_close(cm);
}
END_TEST

static void expect_open_fails(const char *path, xf_status code, const char *needle)
{
    xf_cost_options o = fixed_options(path);
    xf_cost_model *cm = (xf_cost_model *)&o; /* must be reset to NULL */
    xf_error err = {0};
    ck_assert_int_eq(xf_cost_open(&o, &cm, &err), code);
    ck_assert_ptr_null(cm);
    ck_assert_msg(strstr(err.msg, needle) && strstr(err.msg, path), "message: %s", err.msg);
}

START_TEST(bad_cache_files_are_refused)
{
    const char *junk = xf_test_tmp("junk.db");
    FILE *f = fopen(junk, "wb");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 4096; i++) fputc("not sqlite"[i % 10], f);
    fclose(f);
    expect_open_fails(junk, XF_ERR_PARSE, "not a valid SQLite database");

    const char *foreign = xf_test_tmp("foreign.db");
    remove(foreign);
    sqlite3 *db;
    ck_assert_int_eq(sqlite3_open(foreign, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE rules(id INTEGER); PRAGMA user_version=3",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    expect_open_fails(foreign, XF_ERR_PARSE, "not an rlflow cost cache");

    const char *newer = xf_test_tmp("newer.db");
    remove(newer);
    xf_cost_close(open_fixed(newer));
    ck_assert_int_eq(sqlite3_open(newer, &db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(db, "PRAGMA user_version=99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_open_fails(newer, XF_ERR_UNSUPPORTED, "newer");
}
END_TEST

START_TEST(cudnn_unavailable_is_clean)
{
    xf_error err = {0};
    xf_status st = xf_cost_backend_available(XF_COST_CUDNN, &err);
    if (st == XF_OK) XF_SKIP("cuDNN is available here: its unavailable path cannot be checked");
    ck_assert_int_eq(st, XF_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(err.msg, "CUDA"), "message: %s", err.msg);
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_CUDNN;
    xf_cost_model *cm = NULL;
    xf_error err2 = {0};
    ck_assert_int_eq(xf_cost_open(&o, &cm, &err2), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_null(cm);
    ck_assert_str_eq(err2.msg, err.msg);
}
END_TEST

START_TEST(backend_names_parse)
{
    xf_error err = {0};
    xf_cost_backend b;
    ck_assert_int_eq(xf_cost_backend_parse("cudnn", &b, &err), XF_OK);
    ck_assert_int_eq(b, XF_COST_CUDNN);
    ck_assert_int_eq(xf_cost_backend_parse("tpu", &b, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "analytic, onednn or cudnn"));
    ck_assert_int_eq(xf_cost_backend_available(XF_COST_ANALYTIC, &err), XF_OK);
}
END_TEST

/* x[1,4,8,8] -> conv(w) -> relu -> reshape [1,256] -> matmul(ones [256,10]) ;
 * plus an opaque node reading x and producing a graph output. */
static void build_graph(xf_graph *g, int with_opaque)
{
    xf_error err = {0};
    xf_graph_init(g);
    xf_shape xs = sh(4, 1, 4, 8, 8), ws = sh(4, 4, 4, 3, 3);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    float *w = calloc(144, sizeof *w);
    for (int i = 0; i < 144; i++) w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    int wv = xf_graph_add_const_owned(g, "w", XF_F32, &ws, w, &err);
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    int in2[2] = {x, wv};
    int c = xf_graph_op(g, XF_OP_CONV, &p, in2, 2, &err);
    int r = xf_graph_op(g, XF_OP_RELU, NULL, &c, 1, &err);
    p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 1;
    p.shape[1] = 256;
    int rs = xf_graph_op(g, XF_OP_RESHAPE, &p, &r, 1, &err);
    p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 256;
    p.shape[1] = 10;
    int ones = xf_graph_op(g, XF_OP_CONST_ONES, &p, NULL, 0, &err);
    int mm_in[2] = {rs, ones};
    int mm = xf_graph_op(g, XF_OP_MATMUL, NULL, mm_in, 2, &err);
    ck_assert_msg(mm >= 0, "%s", err.msg);
    ck_assert_int_eq(xf_graph_mark_output(g, mm, &err), XF_OK);
    if (with_opaque) {
        xf_opaque *o = calloc(1, sizeof *o);
        o->op_type = strdup("Mystery");
        o->domain = strdup("");
        xf_dtype odt = XF_F32;
        int n = xf_graph_add_opaque(g, o, &x, 1, &odt, &xs, 1, "mystery", &err);
        ck_assert_msg(n >= 0, "%s", err.msg);
        ck_assert_int_eq(xf_graph_mark_output(g, g->nodes[n].outputs[0], &err), XF_OK);
    }
}

START_TEST(graph_cost_is_sum_of_nodes)
{
    xf_graph g;
    build_graph(&g, 1);
    xf_cost_model *cm = open_fixed(NULL);
    xf_op_cost total, per[8];
    xf_error err = {0};
    ck_assert_msg(xf_cost_graph(cm, &g, &total, per, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(g.n_nodes, 6);
    double sum = 0, flops = 0;
    int kernels = 0;
    for (int i = 0; i < g.n_nodes; i++) {
        sum += per[i].ms;
        flops += per[i].flops;
        kernels += per[i].kernels;
        xf_op_cost one;
        ck_assert_int_eq(xf_cost_node(cm, &g, i, &one, &err), XF_OK);
        ck_assert_double_eq(one.ms, per[i].ms);
    }
    ck_assert_double_eq_tol(total.ms, sum, 1e-12);
    ck_assert_double_eq(total.flops, flops);
    ck_assert_int_eq(total.kernels, kernels);
    ck_assert_int_eq(total.from_cache, 0);
    /* conv, relu, matmul take a kernel; reshape (view) and const_ones don't */
    ck_assert_int_eq(kernels, 4);
    ck_assert_double_eq(per[2].ms, 0);    /* reshape */
    ck_assert_double_eq(per[3].ms, 0);    /* const_ones: folded into weights */
    ck_assert_double_eq(per[4].flops, 2.0 * 256 * 10); /* matmul [1,256]x[256,10] */
    /* the opaque node: bytes in + out over bandwidth, plus one launch */
    ck_assert_double_eq(per[5].bytes, 2.0 * 256 * 4);
    ck_assert_double_eq_tol(per[5].ms, 2048.0 / 1e7 + 0.002, 1e-12);
    /* the conv's cost is that of its configuration */
    xf_dtype dt[2] = {XF_F32, XF_F32};
    xf_shape s[2] = {sh(4, 1, 4, 8, 8), sh(4, 4, 4, 3, 3)};
    xf_op_cost conv;
    ck_assert_int_eq(xf_cost_op(cm, XF_OP_CONV, &g.nodes[0].params, 2, dt, s, &conv, &err), XF_OK);
    ck_assert_double_eq(conv.ms, per[0].ms);
    ck_assert_int_eq(conv.from_cache, 1);
    /* everything measurable is cached now */
    ck_assert_int_eq(xf_cost_graph(cm, &g, &total, NULL, &err), XF_OK);
    ck_assert_int_eq(total.from_cache, 1);
    ck_assert_double_eq_tol(total.ms, sum, 1e-12);
    xf_cost_close(cm);
    xf_graph_free(&g);
}
END_TEST

START_TEST(executor_matches_interpreter)
{
    xf_graph g;
    build_graph(&g, 0);
    xf_cost_model *cm = open_fixed(NULL);
    xf_error err = {0};
    xf_tensor in, ref, out;
    ck_assert_int_eq(xf_graph_random_inputs(&g, 5, &in, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&g, &in, 1, &ref, &err), XF_OK);
    xf_exec *e = NULL;
    ck_assert_msg(xf_exec_prepare(cm, &g, &e, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_exec_outputs(e, &out, &err), XF_ERR_INVALID); /* not run yet */
    ck_assert_int_eq(xf_exec_run(e, &in, 1, &err), XF_OK);
    ck_assert_int_eq(xf_exec_outputs(e, &out, &err), XF_OK);
    ck_assert(xf_tensor_close(&out, &ref, 0, 0));
    double ms = -1;
    ck_assert_int_eq(xf_exec_latency(e, &in, 1, 1, 3, &ms, &err), XF_OK);
    ck_assert(ms >= 0);
    /* a wrong input shape names the input */
    xf_tensor bad = in;
    bad.shape = sh(4, 1, 4, 8, 9);
    ck_assert_int_eq(xf_exec_run(e, &bad, 1, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "'x'"));
    xf_exec_free(e);
    xf_tensor_free(&out);
    xf_tensor_free(&ref);
    xf_tensor_free(&in);
    xf_cost_close(cm);
    xf_graph_free(&g);
}
END_TEST

START_TEST(executor_compares_graphs)
{
    xf_graph a, b, c;
    build_graph(&a, 0);
    build_graph(&b, 0);
    ck_assert_int_eq(xf_graph_clone(&a, &c, NULL), XF_OK);
    /* c: negate the last output -> differs */
    xf_error err = {0};
    int last = c.outputs[0];
    int neg = xf_graph_op(&c, XF_OP_NEG, NULL, &last, 1, &err);
    c.outputs[0] = neg;
    xf_cost_model *cm = open_fixed(NULL);
    double ab = -1, rel = -1;
    ck_assert_msg(xf_exec_compare(cm, &a, &b, 3, &ab, &rel, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_eq(ab, 0);
    ck_assert_double_eq(rel, 0);
    ck_assert_int_eq(xf_exec_compare(cm, &a, &c, 3, &ab, &rel, &err), XF_OK);
    ck_assert(ab > 0);
    ck_assert_double_eq_tol(rel, 2.0, 1e-6); /* |y - (-y)| / |y| */
    /* an opaque node cannot run: the message names it */
    xf_graph o;
    build_graph(&o, 1);
    xf_exec *e = (xf_exec *)&o;
    ck_assert_int_eq(xf_exec_prepare(cm, &o, &e, &err), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(err.msg, "Mystery"));
    ck_assert_int_eq(xf_exec_compare(cm, &a, &o, 3, &ab, &rel, &err), XF_ERR_MISMATCH);
    xf_cost_close(cm);
    xf_graph_free(&a);
    xf_graph_free(&b);
    xf_graph_free(&c);
    xf_graph_free(&o);
}
END_TEST

/* ---------------------------------------------- cudnn on a GPU machine */

static int cst(xf_graph *g, int rank, const int64_t *dims, float lo, float hi, uint64_t seed)
{
    xf_shape s = xf_shape_make(rank, dims);
    int64_t n = xf_shape_numel(&s);
    float *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    xf_rng r;
    xf_rng_seed(&r, seed);
    for (int64_t i = 0; i < n; i++) d[i] = xf_rng_uniform(&r, lo, hi);
    xf_error err = {0};
    int v = xf_graph_add_const_owned(g, NULL, XF_F32, &s, d, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int op1(xf_graph *g, xf_op op, const xf_params *p, int a)
{
    xf_error err = {0};
    int v = xf_graph_op(g, op, p, &a, 1, &err);
    ck_assert_msg(v >= 0, "%s: %s", xf_op_get(op)->name, err.msg);
    return v;
}

static int opn(xf_graph *g, xf_op op, const xf_params *p, const int *in, int n)
{
    xf_error err = {0};
    int v = xf_graph_op(g, op, p, in, n, &err);
    ck_assert_msg(v >= 0, "%s: %s", xf_op_get(op)->name, err.msg);
    return v;
}

/* One graph touching every GPU kernel family and both broadcast orders. */
static void build_gpu_graph(xf_graph *g)
{
    xf_error err = {0};
    xf_graph_init(g);
    xf_shape xs = sh(4, 2, 4, 8, 8);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    int64_t wd[4] = {8, 2, 3, 3}, c8[1] = {8}, wm[2] = {16, 5}, c5[1] = {5}, c15[4] = {1, 4, 1, 5};
    int64_t wg[2] = {20, 3}, wg2[2] = {3, 20}, c3[1] = {3}, c83[2] = {8, 3};
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    p.group = 2;
    p.activation = XF_ACT_RELU;
    int conv_in[3] = {x, cst(g, 4, wd, -0.5f, 0.5f, 1), cst(g, 1, c8, -0.1f, 0.1f, 2)};
    int c = opn(g, XF_OP_CONV, &p, conv_in, 3);
    p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 2;
    p.stride[0] = p.stride[1] = 2;
    int mp = op1(g, XF_OP_MAXPOOL, &p, c);
    p.kernel[0] = p.kernel[1] = 3;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    int ap = op1(g, XF_OP_AVGPOOL, &p, c);
    p = xf_params_default();
    p.epsilon = 1e-5f;
    int bn_in[5] = {mp, cst(g, 1, c8, 0.5f, 1.5f, 3), cst(g, 1, c8, -0.5f, 0.5f, 4),
                    cst(g, 1, c8, -0.5f, 0.5f, 5), cst(g, 1, c8, 0.5f, 1.5f, 6)};
    int bn = opn(g, XF_OP_BATCHNORM, &p, bn_in, 5);
    p = xf_params_default();
    p.axis = 1;
    int cat_in[2] = {bn, ap};
    int cat = opn(g, XF_OP_CONCAT, &p, cat_in, 2);
    int gap = op1(g, XF_OP_GLOBAL_AVGPOOL, NULL, cat);
    p = xf_params_default();
    p.n_axes = 4;
    p.axes[0] = 0, p.axes[1] = 2, p.axes[2] = 3, p.axes[3] = 1;
    int t = op1(g, XF_OP_TRANSPOSE, &p, cat);
    int mm_in[2] = {t, cst(g, 2, wm, -0.5f, 0.5f, 7)};
    int m = opn(g, XF_OP_MATMUL, NULL, mm_in, 2);
    p = xf_params_default();
    p.axis = 1;
    int sm = op1(g, XF_OP_SOFTMAX, &p, m);
    int add_in[2] = {cst(g, 1, c5, -0.5f, 0.5f, 8), sm}; /* broadcast operand first */
    int ad = opn(g, XF_OP_ADD, NULL, add_in, 2);
    int sub_in[2] = {cst(g, 4, c15, -0.5f, 0.5f, 9), ad};
    int sb = opn(g, XF_OP_SUB, NULL, sub_in, 2);
    int sq = op1(g, XF_OP_SQRT, NULL, op1(g, XF_OP_SIGMOID, NULL, sb));
    int th = op1(g, XF_OP_TANH, NULL, sq);
    int sc_in[2] = {th, cst(g, 0, NULL, 1.5f, 1.5f, 10)};
    int sc = opn(g, XF_OP_SCALAR_MUL, NULL, sc_in, 2);
    int mu_in[2] = {sc, sc};
    int mu = opn(g, XF_OP_MUL, NULL, mu_in, 2);
    p = xf_params_default();
    p.n_shape = 2;
    p.shape[0] = 8;
    p.shape[1] = 20;
    int r = op1(g, XF_OP_RESHAPE, &p, mu);
    p = xf_params_default();
    p.alpha = 1;
    p.beta = 0.5f;
    int g1_in[3] = {r, cst(g, 2, wg, -0.5f, 0.5f, 11), cst(g, 1, c3, -0.5f, 0.5f, 12)};
    int g1 = opn(g, XF_OP_GEMM, &p, g1_in, 3);
    p.trans_b = 1;
    int g2_in[3] = {r, cst(g, 2, wg2, -0.5f, 0.5f, 13), cst(g, 2, c83, -0.5f, 0.5f, 14)};
    int g2 = opn(g, XF_OP_GEMM, &p, g2_in, 3);
    ck_assert_int_eq(xf_graph_mark_output(g, g1, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(g, g2, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(g, gap, &err), XF_OK);
}

/* Outputs of g on cm's executor vs the reference interpreter. */
static void expect_matches_interpreter(xf_cost_model *cm, const xf_graph *g)
{
    xf_error err = {0};
    xf_tensor in, ref[3], out[3];
    ck_assert_int_eq(xf_graph_random_inputs(g, 9, &in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(g, &in, 1, ref, &err) == XF_OK, "%s", err.msg);
    xf_exec *e = NULL;
    ck_assert_msg(xf_exec_prepare(cm, g, &e, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_exec_run(e, &in, 1, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_exec_outputs(e, out, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < g->n_outputs; i++) {
        double ab, rel;
        ck_assert_int_eq(xf_tensor_compare(&out[i], &ref[i], &ab, &rel, &err), XF_OK);
        ck_assert_msg(xf_tensor_close(&out[i], &ref[i], 1e-4, 1e-5),
                      "%s output %d: max abs %g, max rel %g", xf_cost_identity(cm), i, ab, rel);
        xf_tensor_free(&out[i]);
        xf_tensor_free(&ref[i]);
    }
    xf_exec_free(e);
    xf_tensor_free(&in);
}

START_TEST(gpu_graph_matches_interpreter_on_cpu)
{
    xf_graph g;
    build_gpu_graph(&g);
    /* the graph itself is checked everywhere (analytic = interpreter) */
    xf_cost_model *cm = open_fixed(NULL);
    expect_matches_interpreter(cm, &g);
    xf_cost_close(cm);
    xf_cost_options od = xf_cost_options_default();
    od.backend = XF_COST_ONEDNN;
    xf_error e1 = {0};
    ck_assert_msg(xf_cost_open(&od, &cm, &e1) == XF_OK, "%s", e1.msg);
    expect_matches_interpreter(cm, &g);
    xf_cost_close(cm);
    xf_graph_free(&g);
}
END_TEST

START_TEST(cudnn_matches_interpreter)
{
    xf_error err = {0};
    if (xf_cost_backend_available(XF_COST_CUDNN, &err) != XF_OK) XF_SKIP("%s", err.msg);
    xf_graph g;
    build_gpu_graph(&g);
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_CUDNN;
    o.reps = 3;
    o.warmup = 1;
    xf_cost_model *cm = NULL;
    ck_assert_msg(xf_cost_open(&o, &cm, &err) == XF_OK, "%s", err.msg);
    expect_matches_interpreter(cm, &g);
    xf_op_cost total;
    ck_assert_msg(xf_cost_graph(cm, &g, &total, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert(total.ms > 0);
    ck_assert_int_eq(xf_cost_measurements(cm) > 0, 1);
    xf_cost_close(cm);
    xf_graph_free(&g);
}
END_TEST

/* One rule for the cache every tool opens: a path as given, "none" nothing,
 * no path the user's cache under XDG_CACHE_HOME (else HOME/.cache), its
 * directories made; neither variable: nothing. */
START_TEST(cache_path_rule)
{
    char buf[4096], want[4096], base[4096];
    ck_assert_str_eq(xf_cost_cache_path("my.db", buf, sizeof buf), "my.db");
    ck_assert_ptr_null(xf_cost_cache_path(XF_COST_CACHE_NONE, buf, sizeof buf));
    char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    snprintf(base, sizeof base, "%s", xf_test_tmp("xdg"));
    xf_test_system("rm -rf '%s'", base);
    setenv("XDG_CACHE_HOME", base, 1);
    snprintf(want, sizeof want, "%s/rlflow/costs.db", base);
    ck_assert_str_eq(xf_cost_cache_path(NULL, buf, sizeof buf), want);
    snprintf(want, sizeof want, "%s/rlflow", base);
    struct stat sb;
    ck_assert_msg(stat(want, &sb) == 0 && S_ISDIR(sb.st_mode), "%s not made", want);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", base, 1);
    snprintf(want, sizeof want, "%s/.cache/rlflow/costs.db", base);
    ck_assert_str_eq(xf_cost_cache_path(NULL, buf, sizeof buf), want);
    ck_assert_ptr_null(xf_cost_cache_path(NULL, buf, 8)); /* no room: nothing kept */
    unsetenv("HOME");
    ck_assert_ptr_null(xf_cost_cache_path(NULL, buf, sizeof buf));
    if (xdg) setenv("XDG_CACHE_HOME", xdg, 1);
    if (home) setenv("HOME", home, 1);
    free(xdg);
    free(home);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("costmodel");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, cache_path_rule);
    tcase_add_test(tc, flops_conv_by_hand);
    tcase_add_test(tc, flops_matmul_gemm_by_hand);
    tcase_add_test(tc, analytic_is_deterministic);
    tcase_add_test(tc, describe_is_canonical);
    tcase_add_test(tc, cache_hit_without_remeasuring);
    tcase_add_test(tc, commutative_operands_share_a_measurement);
    tcase_add_test(tc, changed_identity_misses);
    tcase_add_test(tc, bad_cache_files_are_refused);
    tcase_add_test(tc, cudnn_unavailable_is_clean);
    tcase_add_test(tc, backend_names_parse);
    tcase_add_test(tc, graph_cost_is_sum_of_nodes);
    tcase_add_test(tc, executor_matches_interpreter);
    tcase_add_test(tc, executor_compares_graphs);
    tcase_add_test(tc, gpu_graph_matches_interpreter_on_cpu);
    tcase_add_test(tc, cudnn_matches_interpreter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
