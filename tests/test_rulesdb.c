/*
 * test_rulesdb.c — the rules database (rulesdb/) and the infix formatter
 * (ir/graph_format.c). Rules are built by hand with the graph builders:
 * matmul associativity, matmul distributing over ewadd, two matmuls sharing
 * an input merged through concat/split, conv+relu fusion and ewadd
 * commutativity. Checked: the infix text of each; the graph serialization
 * (exact bytes of a tiny graph, round trip with equal canonical hash and
 * identical bytes, decoding into a sink as the loaded graph feeds one,
 * independence of node order, corrupt blobs and stored shapes whose
 * element count overflows rejected);
 * schema set-up (application_id, user_version, WAL); deduplication of
 * graphs and rules; the bulk insert (all or nothing); status and verdict
 * updates; filters and counts; rules loaded back as valid xf_rules; clear
 * errors for a newer or negative schema version (file kept), a foreign
 * SQLite file, a text file and an empty file (refused unless creating); an uncommitted batch (closed, or its process killed) leaves
 * nothing behind; run bookkeeping and the resume checkpoint.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"

/* ---------------------------------------------------------------- builders */

static const int64_t M44[2] = {4, 4};

/* Three [4,4] inputs named a, b, c on both sides. */
static void inputs3(xf_rule *r, const char *a, const char *b, const char *c, int *s, int *d)
{
    const char *names[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        s[i] = xf_test_input(&r->src, names[i], 2, M44);
        d[i] = xf_test_input(&r->dst, names[i], 2, M44);
    }
}

/* matmul(matmul(x, y), z) => matmul(x, matmul(y, z)) */
static void rule_assoc(xf_rule *r)
{
    xf_rule_init(r);
    int s[3], d[3];
    inputs3(r, "x", "y", "z", s, d);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL,
                                     xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]), s[2]));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[0],
                                     xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[1], d[2])));
    r->fingerprint = 0x1111;
}

/* ewadd(matmul(x, w0), matmul(x, w1)) => matmul(x, ewadd(w0, w1)); with
 * `swapped` the two source matmuls are built in the other order. */
static void rule_distrib(xf_rule *r, int swapped)
{
    xf_rule_init(r);
    int s[3], d[3];
    inputs3(r, "x", "w0", "w1", s, d);
    int m0, m1;
    if (swapped) {
        m1 = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[2]);
        m0 = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]);
    } else {
        m0 = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]);
        m1 = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[2]);
    }
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_ADD, NULL, m0, m1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[0],
                                     xf_test_op2(&r->dst, XF_OP_ADD, NULL, d[1], d[2])));
    r->fingerprint = 0x2222;
}

/* matmul(x0, w0), matmul(x0, w1) => split(matmul(x0, concat(w0, w1))) */
static void rule_merge(xf_rule *r)
{
    xf_rule_init(r);
    int s[3], d[3];
    inputs3(r, "x0", "w0", "w1", s, d);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]));
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[2]));
    xf_params cat = xf_params_default();
    cat.axis = 1;
    int c = xf_test_op2(&r->dst, XF_OP_CONCAT, &cat, d[1], d[2]);
    int m = xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[0], c);
    xf_params sp = xf_params_default();
    sp.axis = 1;
    sp.n_split = 2;
    sp.split[0] = sp.split[1] = 4;
    xf_error err;
    int n = xf_graph_add_node(&r->dst, XF_OP_SPLIT, &sp, &m, 1, 2, NULL, &err);
    ck_assert_msg(n >= 0, "%s", err.msg);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[0]);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[1]);
    r->fingerprint = 0x3333;
}

/* relu(conv2d[3x3,s1,same](x, w)) => conv2d[3x3,s1,same,relu](x, w) */
static void rule_conv_relu(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {2, 2, 3, 3};
    int sx = xf_test_input(&r->src, "x", 4, xd), sw = xf_test_input(&r->src, "w", 4, wd);
    int dx = xf_test_input(&r->dst, "x", 4, xd), dw = xf_test_input(&r->dst, "w", 4, wd);
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = 1;
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_RELU, NULL,
                                     xf_test_op2(&r->src, XF_OP_CONV, &p, sx, sw), -1));
    p.activation = XF_ACT_RELU;
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_CONV, &p, dx, dw));
    r->fingerprint = 0x4444;
}

/* ewadd(x, y) => ewadd(y, x) */
static void rule_comm(xf_rule *r)
{
    xf_rule_init(r);
    int sx = xf_test_input(&r->src, "x", 2, M44), sy = xf_test_input(&r->src, "y", 2, M44);
    int dx = xf_test_input(&r->dst, "x", 2, M44), dy = xf_test_input(&r->dst, "y", 2, M44);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_ADD, NULL, sx, sy));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, dy, dx));
    r->fingerprint = 0x5555;
}

/* An invalid rule: relu(x) => relu(x), the target's x [4,4], the source's [2,2]. */
static void rule_mismatched(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d2[2] = {2, 2};
    xf_test_out(&r->src,
                xf_test_op2(&r->src, XF_OP_RELU, NULL, xf_test_input(&r->src, "x", 2, d2), -1));
    xf_test_out(&r->dst,
                xf_test_op2(&r->dst, XF_OP_RELU, NULL, xf_test_input(&r->dst, "x", 2, M44), -1));
}

static void expect_format(const xf_graph *g, const char *want)
{
    char buf[512];
    xf_error err;
    ck_assert_msg(xf_graph_format(g, buf, sizeof buf, &err) == XF_OK, "%s", err.msg);
    ck_assert_str_eq(buf, want);
}

/* A fresh database path (old files and their WAL removed). */
static const char *fresh_db(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp(name));
    xf_test_remove_db(path);
    return path;
}

static xf_rulesdb *open_db(const char *path, int flags)
{
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, flags, &db, &err) == XF_OK, "%s", err.msg);
    return db;
}

static int64_t add(xf_rulesdb *db, const xf_rule *r, const xf_rulesdb_rule_meta *meta, int *inserted)
{
    int64_t id = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_add_rule(db, r, meta, &id, inserted, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_gt(id, 0);
    return id;
}

static int64_t count_rules(xf_rulesdb *db, const xf_rulesdb_filter *f)
{
    int64_t n = -1;
    xf_error err;
    ck_assert_msg(xf_rulesdb_count_rules(db, f, &n, &err) == XF_OK, "%s", err.msg);
    return n;
}

static int64_t count_graphs(xf_rulesdb *db)
{
    int64_t n = -1;
    ck_assert_int_eq(xf_rulesdb_count_graphs(db, &n, NULL), XF_OK);
    return n;
}

/* ------------------------------------------------------------------ format */

START_TEST(test_format_rules)
{
    xf_rule r;
    rule_assoc(&r);
    expect_format(&r.src, "matmul(matmul(x, y), z)");
    expect_format(&r.dst, "matmul(x, matmul(y, z))");
    xf_rule_free(&r);
    rule_distrib(&r, 0);
    expect_format(&r.src, "ewadd(matmul(x, w0), matmul(x, w1))");
    expect_format(&r.dst, "matmul(x, ewadd(w0, w1))");
    xf_rule_free(&r);
    rule_merge(&r);
    expect_format(&r.src, "matmul(x0, w0), matmul(x0, w1)");
    expect_format(&r.dst, "split0[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1))), "
                          "split1[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1)))");
    xf_rule_free(&r);
    rule_conv_relu(&r);
    expect_format(&r.src, "relu(conv2d[3x3,s1,same](x, w))");
    expect_format(&r.dst, "conv2d[3x3,s1,same,relu](x, w)");
    xf_rule_free(&r);
}
END_TEST

START_TEST(test_format_params_and_limits)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[4] = {1, 2, 4, 4};
    xf_shape s = xf_shape_make(4, d);
    int x = xf_graph_add_input(&g, NULL, XF_F32, &s, NULL); /* unnamed: in0 */
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 2;
    p.stride[0] = p.stride[1] = 2;
    int pool = xf_test_op2(&g, XF_OP_AVGPOOL, &p, x, -1);
    xf_params t = xf_params_default();
    t.n_axes = 4;
    t.axes[0] = 0, t.axes[1] = 1, t.axes[2] = 3, t.axes[3] = 2;
    int tr = xf_test_op2(&g, XF_OP_TRANSPOSE, &t, pool, -1);
    xf_params sm = xf_params_default();
    sm.axis = -1;
    xf_test_out(&g, xf_test_op2(&g, XF_OP_SOFTMAX, &sm, tr, -1));
    xf_params c = xf_params_default();
    c.n_shape = 2;
    c.shape[0] = c.shape[1] = 3;
    xf_test_out(&g, xf_graph_op(&g, XF_OP_CONST_IDENTITY_MATRIX, &c, NULL, 0, NULL));
    expect_format(&g, "softmax[axis=-1](transpose[perm=0,1,3,2](avgpool[2x2,s2,valid](in0))), "
                      "const_imatrix[3x3]()");
    char small[16];
    xf_error err;
    ck_assert_int_eq(xf_graph_format(&g, small, sizeof small, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not fit in 16 bytes"));
    ck_assert_uint_eq(strlen(small), 15); /* truncated, terminated */
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------------ serialization */

START_TEST(test_serialize_exact_bytes)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {2};
    xf_test_out(&g, xf_test_op2(&g, XF_OP_RELU, NULL, xf_test_input(&g, "x", 1, d), -1));
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_graph_serialize(&g, &buf, &len, &err) == XF_OK, "%s", err.msg);
    /* magic, version, 1 input (f32, rank 1, dim 2 zig-zagged), 1 node "relu"
     * with no params, input ref value 0 (+1), 1 output; 1 graph output: value 1 */
    const uint8_t want[] = {'X', 'G', 1, 1, XF_F32, 1, 4, 1, 4, 'r', 'e', 'l', 'u', 0, 1, 1, 1, 1, 1};
    ck_assert_uint_eq(len, sizeof want);
    ck_assert_int_eq(memcmp(buf, want, len), 0);
    free(buf);
    xf_graph_free(&g);
}
END_TEST

/* A sink folding every call into a hash: what a graph is handed over as,
 * in order. */
static xf_status trace_input(void *user, const char *name, xf_dtype dtype, const xf_shape *shape,
                             xf_error *err)
{
    (void)err;
    uint64_t *h = user;
    *h = xf_hash_bytes(xf_hash_u64(*h, 1), name ? name : "-", name ? strlen(name) : 1);
    *h = xf_hash_u64(*h, (uint64_t)dtype);
    *h = xf_hash_bytes(*h, shape->dims, sizeof shape->dims[0] * (size_t)shape->rank);
    return XF_OK;
}

static xf_status trace_node(void *user, xf_op op, const xf_params *params, const int *inputs,
                            int n_inputs, int n_outputs, xf_error *err)
{
    (void)err;
    uint64_t *h = user;
    xf_params p = *params;
    xf_params_canonical(op, &p);
    *h = xf_hash_bytes(xf_hash_u64(xf_hash_u64(*h, 2), (uint64_t)op), &p, sizeof p);
    *h = xf_hash_bytes(*h, inputs, sizeof *inputs * (size_t)n_inputs);
    *h = xf_hash_u64(*h, (uint64_t)n_outputs);
    return XF_OK;
}

static xf_status trace_output(void *user, int value, xf_error *err)
{
    (void)err;
    uint64_t *h = user;
    *h = xf_hash_u64(xf_hash_u64(*h, 3), (uint64_t)value);
    return XF_OK;
}

static void roundtrip(const xf_graph *g)
{
    uint8_t *a = NULL, *b = NULL;
    size_t la = 0, lb = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_graph_serialize(g, &a, &la, &err) == XF_OK, "%s", err.msg);
    xf_graph back;
    const char *names[] = {"p", NULL};
    ck_assert_msg(xf_rulesdb_graph_deserialize(a, la, names, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_graph_hash(&back), xf_graph_hash(g));
    ck_assert_int_eq(back.n_nodes, g->n_nodes);
    ck_assert_str_eq(back.values[back.inputs[0]].name, "p");
    if (back.n_inputs > 1) ck_assert_str_eq(back.values[back.inputs[1]].name, "in1");
    ck_assert_int_eq(xf_rulesdb_graph_serialize(&back, &b, &lb, &err), XF_OK);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(a, b, la), 0);
    /* decoding hands a sink what feeding the loaded graph does (inputs
     * past the names are "in<i>" in the loaded graph) */
    const char *all[] = {"p", "in1", "in2", "in3", "in4", "in5", "in6", "in7", NULL};
    ck_assert_int_le(back.n_inputs, 8);
    uint64_t decoded = 0, fed = 0;
    xf_graph_sink to_decoded = {&decoded, trace_input, trace_node, trace_output};
    xf_graph_sink to_fed = {&fed, trace_input, trace_node, trace_output};
    ck_assert_msg(xf_rulesdb_graph_decode(a, la, all, &to_decoded, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_feed(&back, &to_fed, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(decoded, fed);
    ck_assert_uint_ne(decoded, 0);
    free(a);
    free(b);
    xf_graph_free(&back);
}

START_TEST(test_serialize_roundtrip)
{
    xf_rule r;
    void (*builders[])(xf_rule *) = {rule_assoc, rule_merge, rule_conv_relu, rule_comm};
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++) {
        builders[i](&r);
        roundtrip(&r.src);
        roundtrip(&r.dst);
        xf_rule_free(&r);
    }
    /* float, negative and multi-entry parameters survive bit for bit */
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[3] = {2, 3, 4}, wd[1] = {4};
    int x = xf_test_input(&g, "x", 3, d), w = xf_test_input(&g, "w", 1, wd);
    xf_params ln = xf_params_default();
    ln.axis = -1;
    ln.epsilon = 1e-5f;
    int y = xf_test_op2(&g, XF_OP_LAYERNORM, &ln, x, w);
    xf_params rm = xf_params_default();
    rm.n_axes = 1;
    rm.axes[0] = -2;
    rm.keepdims = 1;
    xf_test_out(&g, xf_test_op2(&g, XF_OP_REDUCE_MEAN, &rm, y, -1));
    roundtrip(&g);
    xf_graph_free(&g);
}
END_TEST

START_TEST(test_serialize_node_order_independent)
{
    xf_rule a, b;
    rule_distrib(&a, 0);
    rule_distrib(&b, 1);
    ck_assert_uint_eq(xf_graph_hash(&a.src), xf_graph_hash(&b.src));
    uint8_t *ba = NULL, *bb = NULL;
    size_t la = 0, lb = 0;
    ck_assert_int_eq(xf_rulesdb_graph_serialize(&a.src, &ba, &la, NULL), XF_OK);
    ck_assert_int_eq(xf_rulesdb_graph_serialize(&b.src, &bb, &lb, NULL), XF_OK);
    ck_assert_uint_eq(la, lb);
    ck_assert_int_eq(memcmp(ba, bb, la), 0);
    free(ba);
    free(bb);
    xf_rule_free(&a);
    xf_rule_free(&b);
}
END_TEST

static void expect_bad_blob(const uint8_t *buf, size_t len, xf_status code, const char *needle)
{
    xf_graph g;
    xf_error err;
    xf_error_clear(&err);
    ck_assert_int_eq(xf_rulesdb_graph_deserialize(buf, len, NULL, &g, &err), code);
    ck_assert_msg(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    ck_assert_int_eq(g.n_nodes, 0); /* left empty */
}

START_TEST(test_serialize_rejects)
{
    const uint8_t good[] = {'X', 'G', 1, 1, XF_F32, 1, 4, 1, 4, 'r', 'e', 'l', 'u', 0, 1, 1, 1, 1, 1};
    uint8_t b[sizeof good];
    expect_bad_blob(good, sizeof good - 2, XF_ERR_PARSE, "truncated");
    memcpy(b, good, sizeof b);
    b[0] = 'Y';
    expect_bad_blob(b, sizeof b, XF_ERR_PARSE, "bad magic");
    memcpy(b, good, sizeof b);
    b[2] = 2;
    expect_bad_blob(b, sizeof b, XF_ERR_UNSUPPORTED, "graph format version 2");
    memcpy(b, good, sizeof b);
    b[9] = 'x'; /* "xelu" */
    expect_bad_blob(b, sizeof b, XF_ERR_PARSE, "unknown operator 'xelu'");
    memcpy(b, good, sizeof b);
    b[15] = 5; /* input ref to a value not defined yet */
    expect_bad_blob(b, sizeof b, XF_ERR_PARSE, "refers to value 4");
    uint8_t longer[sizeof good + 1];
    memcpy(longer, good, sizeof good);
    longer[sizeof good] = 0;
    expect_bad_blob(longer, sizeof longer, XF_ERR_PARSE, "stray bytes");

    /* rule graphs hold no initializers */
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {2};
    const float data[2] = {1, 2};
    xf_shape s = xf_shape_make(1, d);
    int c = xf_graph_add_const(&g, "k", XF_F32, &s, data, NULL);
    xf_test_out(&g, xf_test_op2(&g, XF_OP_RELU, NULL, c, -1));
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_graph_serialize(&g, &buf, &len, &err), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "constant initializer"));
    ck_assert_ptr_null(buf);
    xf_graph_free(&g);
}
END_TEST

/* Issue 17: a stored input shape whose element count overflows, or wraps to
 * 0 (2^32 x 2^32), is refused by the decoder, naming the input. */
static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7) p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

static void expect_bad_dims(int64_t d0, int64_t d1, const char *needle)
{
    uint8_t b[64] = {'X', 'G', 1, 1, XF_F32, 2};
    size_t n = 6;
    n += put_varint(b + n, (uint64_t)d0 << 1); /* zig-zag of a non-negative dim */
    n += put_varint(b + n, (uint64_t)d1 << 1);
    const uint8_t rest[] = {1, 4, 'r', 'e', 'l', 'u', 0, 1, 1, 1, 1, 1};
    memcpy(b + n, rest, sizeof rest);
    expect_bad_blob(b, n + sizeof rest, XF_ERR_SHAPE, needle);
}

START_TEST(test_deserialize_rejects_overflowing_shapes)
{
    expect_bad_dims(((int64_t)1 << 62) + 1, 4,
                    "input 'in0': shape [4611686018427387905,4] has more than 2^62 elements");
    expect_bad_dims((int64_t)1 << 32, (int64_t)1 << 32,
                    "input 'in0': shape [4294967296,4294967296] has more than 2^62 elements");
}
END_TEST

/* ------------------------------------------------------------------ schema */

START_TEST(test_create_sets_up_schema)
{
    const char *path = fresh_db("create.db");
    xf_rulesdb *db = open_db(path, XF_RULESDB_CREATE);
    ck_assert_str_eq(xf_rulesdb_path(db), path);
    ck_assert_int_eq(count_rules(db, NULL), 0);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), XF_RULESDB_SCHEMA_VERSION);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA application_id"), XF_RULESDB_APPLICATION_ID);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE name IN "
                                   "('graphs','rules','runs','run_stages','rule_ops')"),
                     5);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    /* reopening (read-only too) works and changes nothing */
    db = open_db(path, XF_RULESDB_READONLY);
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "read-only"));
    xf_rulesdb_close(db);
    db = open_db(path, 0);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), XF_RULESDB_SCHEMA_VERSION);
}
END_TEST

static void expect_open_fails(const char *path, int flags, xf_status code, const char *needle)
{
    xf_rulesdb *db = (xf_rulesdb *)1;
    xf_error err;
    xf_error_clear(&err);
    ck_assert_int_eq(xf_rulesdb_open(path, flags, &db, &err), code);
    ck_assert_ptr_null(db);
    ck_assert_msg(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    ck_assert_msg(strstr(err.msg, path), "message '%s' does not name the file", err.msg);
}

START_TEST(test_schema_errors)
{
    const char *p = fresh_db("newer.db");
    char newer[4096];
    snprintf(newer, sizeof newer, "%s", p);
    xf_rulesdb_close(open_db(newer, XF_RULESDB_CREATE));
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", XF_RULESDB_SCHEMA_VERSION + 1);
    xf_test_sql_exec(newer, sql);
    char want[64];
    snprintf(want, sizeof want, "has schema version %d, this build knows 1..%d",
             XF_RULESDB_SCHEMA_VERSION + 1, XF_RULESDB_SCHEMA_VERSION);
    expect_open_fails(newer, 0, XF_ERR_UNSUPPORTED, want);
    expect_open_fails(newer, XF_RULESDB_READONLY, XF_ERR_UNSUPPORTED, "newer rlflow");
    /* negative: no migration may index its table with it; the file is kept */
    xf_test_sql_exec(newer, "PRAGMA user_version = -1");
    snprintf(want, sizeof want, "has schema version -1, this build knows 1..%d",
             XF_RULESDB_SCHEMA_VERSION);
    expect_open_fails(newer, 0, XF_ERR_UNSUPPORTED, want);
    expect_open_fails(newer, XF_RULESDB_CREATE, XF_ERR_UNSUPPORTED, want);
    expect_open_fails(newer, XF_RULESDB_READONLY, XF_ERR_UNSUPPORTED, want);
    ck_assert_int_eq(xf_test_sql_int(newer, "PRAGMA user_version"), -1);
    ck_assert_int_eq(xf_test_sql_int(newer, "SELECT count(*) FROM sqlite_schema WHERE name ="
                                            " 'graphs'"),
                     1);

    p = fresh_db("foreign.db");
    char foreign[4096];
    snprintf(foreign, sizeof foreign, "%s", p);
    xf_test_sql_exec(foreign, "CREATE TABLE t (a INTEGER)");
    expect_open_fails(foreign, XF_RULESDB_CREATE, XF_ERR_PARSE, "not an rlflow rules database");
    xf_test_sql_exec(foreign, "PRAGMA application_id = 1234");
    expect_open_fails(foreign, 0, XF_ERR_PARSE, "application_id 0x000004d2");

    p = fresh_db("text.db");
    char text[4096];
    snprintf(text, sizeof text, "%s", p);
    FILE *f = fopen(text, "w");
    ck_assert_ptr_nonnull(f);
    fputs("this is a plain text file, long enough to have a header of its own..........\n"
          "and a second line to be sure it is more than one hundred bytes in length.\n", f);
    fclose(f);
    expect_open_fails(text, XF_RULESDB_CREATE, XF_ERR_PARSE, "is not an SQLite database");
    expect_open_fails(text, XF_RULESDB_READONLY, XF_ERR_PARSE, "is not an SQLite database");

    p = fresh_db("empty.db");
    char empty[4096];
    snprintf(empty, sizeof empty, "%s", p);
    f = fopen(empty, "w");
    fclose(f);
    expect_open_fails(empty, XF_RULESDB_READONLY, XF_ERR_PARSE, "is empty");
    /* Only a creating open (xfergen) initialises it; xferverify's must not. */
    expect_open_fails(empty, 0, XF_ERR_PARSE,
                      "is empty, not an rlflow rules database (xfergen creates one)");
    struct stat sb;
    ck_assert_int_eq(stat(empty, &sb), 0);
    ck_assert_int_eq(sb.st_size, 0);

    p = fresh_db("missing.db");
    char missing[4096];
    snprintf(missing, sizeof missing, "%s", p);
    expect_open_fails(missing, 0, XF_ERR_IO, "cannot open");
    expect_open_fails(missing, XF_RULESDB_READONLY, XF_ERR_IO, "No such file");
}
END_TEST

/* ---------------------------------------------------------- rules and dedupe */

START_TEST(test_dedupe)
{
    xf_rulesdb *db = open_db(fresh_db("dedupe.db"), XF_RULESDB_CREATE);
    xf_rule a, b, rev;
    rule_distrib(&a, 0);
    rule_distrib(&b, 1); /* same rule, other node order */
    int ins = -1;
    int64_t id = add(db, &a, NULL, &ins);
    ck_assert_int_eq(ins, 1);
    ck_assert_int_eq(add(db, &b, NULL, &ins), id);
    ck_assert_int_eq(ins, 0);
    ck_assert_int_eq(add(db, &a, NULL, &ins), id);
    ck_assert_int_eq(ins, 0);
    /* the id and the inserted flag are both optional */
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &a, NULL, NULL, &ins, NULL), XF_OK);
    ck_assert_int_eq(ins, 0);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &a, NULL, NULL, NULL, NULL), XF_OK);
    ck_assert_int_eq(count_rules(db, NULL), 1);
    ck_assert_int_eq(count_graphs(db), 2);
    /* the reverse rule shares both graphs: a new rule, no new graph */
    xf_rule_init(&rev);
    ck_assert_int_eq(xf_graph_clone(&a.dst, &rev.src, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_clone(&a.src, &rev.dst, NULL), XF_OK);
    int64_t rid = add(db, &rev, NULL, &ins);
    ck_assert_int_eq(ins, 1);
    ck_assert_int_ne(rid, id);
    ck_assert_int_eq(count_rules(db, NULL), 2);
    ck_assert_int_eq(count_graphs(db), 2);
    /* a graph on its own */
    int64_t gid = 0;
    ck_assert_int_eq(xf_rulesdb_add_graph(db, &b.src, &gid, &ins, NULL), XF_OK);
    ck_assert_int_eq(ins, 0);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, id, &info, NULL), XF_OK);
    ck_assert_int_eq(info.src_graph, gid);
    ck_assert_str_eq(info.src_text, "ewadd(matmul(x, w0), matmul(x, w1))");
    ck_assert_str_eq(info.dst_text, "matmul(x, ewadd(w0, w1))");
    ck_assert_str_eq(info.input_names, "x,w0,w1");
    ck_assert_int_eq(info.src_ops, 3);
    ck_assert_int_eq(info.dst_ops, 2);
    ck_assert_int_eq(info.size, 3);
    ck_assert_int_eq(info.n_outputs, 1);
    ck_assert_uint_eq(info.fingerprint, 0x2222);
    ck_assert_int_eq(info.status, XF_RULE_CANDIDATE);
    ck_assert_int_eq(info.has_verdict, 0);
    ck_assert_ptr_null(info.why);
    xf_rulesdb_rule_info_free(&info);
    xf_rule_free(&a);
    xf_rule_free(&b);
    xf_rule_free(&rev);
    xf_rulesdb_close(db);
}
END_TEST

/* A rule prepared apart from the database (as xfergen's threads do) is
 * stored as xf_rulesdb_add_rule stores it: same rows, the same row when
 * added again either way; a prepared value is reused, and a rule that fails
 * validation leaves it empty. */
START_TEST(test_add_prepared)
{
    xf_rulesdb *db = open_db(fresh_db("prepared.db"), XF_RULESDB_CREATE);
    xf_rule a, b;
    rule_distrib(&a, 0);
    rule_conv_relu(&b);
    xf_rulesdb_prepared p;
    xf_rulesdb_prepared_init(&p);
    xf_error err;
    ck_assert_msg(xf_rulesdb_rule_prepare(&a, &p, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(p.fingerprint, 0x2222);
    ck_assert_str_eq(p.input_names, "x,w0,w1");
    ck_assert_str_eq(p.src.infix, "ewadd(matmul(x, w0), matmul(x, w1))");
    ck_assert_int_eq(p.src.n_ops, 3);
    ck_assert_int_eq(p.ops[XF_OP_MATMUL] + p.ops[XF_OP_ADD] + p.ops[XF_OP_RELU], 2);
    xf_rulesdb_rule_meta meta = {XF_RULE_PRUNED, 0, "renaming: x", 0};
    int64_t id = 0;
    int ins = -1;
    ck_assert_msg(xf_rulesdb_add_prepared(db, &p, &meta, &id, &ins, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(ins, 1);
    ck_assert_int_eq(add(db, &a, NULL, &ins), id);
    ck_assert_int_eq(ins, 0);
    ck_assert_msg(xf_rulesdb_rule_prepare(&b, &p, &err) == XF_OK, "%s", err.msg); /* reused */
    int64_t bid = add(db, &b, NULL, &ins);
    ck_assert_int_eq(xf_rulesdb_add_prepared(db, &p, NULL, &id, &ins, NULL), XF_OK);
    ck_assert_int_eq(id, bid);
    ck_assert_int_eq(ins, 0);
    ck_assert_int_eq(count_rules(db, NULL), 2);
    ck_assert_int_eq(count_graphs(db), 4);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, 1, &info, NULL), XF_OK);
    ck_assert_str_eq(info.dst_text, "matmul(x, ewadd(w0, w1))");
    ck_assert_str_eq(info.input_names, "x,w0,w1");
    ck_assert_int_eq(info.size, 3);
    ck_assert_int_eq(info.status, XF_RULE_PRUNED);
    ck_assert_str_eq(info.why, "renaming: x");
    xf_rulesdb_rule_info_free(&info);
    /* the target reads another shape: the rule is invalid, p left empty */
    xf_rule bad;
    rule_mismatched(&bad);
    ck_assert_int_eq(xf_rulesdb_rule_prepare(&bad, &p, NULL), XF_ERR_GRAPH);
    ck_assert_ptr_null(p.src.data);
    ck_assert_ptr_null(p.input_names);
    xf_rulesdb_prepared_free(&p);
    xf_rulesdb_prepared_free(&p); /* twice: nothing left to free */
    xf_rule_free(&a);
    xf_rule_free(&b);
    xf_rule_free(&bad);
    xf_rulesdb_close(db);
}
END_TEST

START_TEST(test_invalid_rule_and_bulk)
{
    xf_rulesdb *db = open_db(fresh_db("bulk.db"), XF_RULESDB_CREATE);
    xf_rule rules[3];
    rule_assoc(&rules[0]);
    rule_conv_relu(&rules[1]);
    rule_comm(&rules[2]);
    /* a broken third rule */
    xf_rule bad;
    rule_mismatched(&bad);
    xf_rule mixed[3] = {rules[0], rules[1], bad};
    int64_t ids[3] = {0};
    int n_ins = -1;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_add_rules(db, mixed, 3, NULL, ids, &n_ins, &err), XF_ERR_GRAPH);
    ck_assert_ptr_nonnull(strstr(err.msg, "rule 2 of 3"));
    ck_assert_ptr_nonnull(strstr(err.msg, "input 0"));
    ck_assert_int_eq(count_rules(db, NULL), 0); /* all or nothing */
    ck_assert_int_eq(count_graphs(db), 0);
    int64_t id = 7;
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &bad, NULL, &id, NULL, NULL), XF_ERR_GRAPH);
    ck_assert_int_eq(id, 0);

    xf_rulesdb_rule_meta meta = {XF_RULE_PROVED, 0, NULL, 0};
    ck_assert_msg(xf_rulesdb_add_rules(db, rules, 3, &meta, ids, &n_ins, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(n_ins, 3);
    ck_assert_int_eq(ids[0], 1);
    ck_assert_int_eq(ids[2], 3);
    ck_assert_int_eq(xf_rulesdb_add_rules(db, rules, 3, NULL, ids, &n_ins, NULL), XF_OK);
    ck_assert_int_eq(n_ins, 0);
    xf_rulesdb_filter f = {0};
    f.status = XF_RULE_PROVED;
    ck_assert_int_eq(count_rules(db, &f), 3);
    for (int i = 0; i < 3; i++) xf_rule_free(&rules[i]);
    xf_rule_free(&bad);
    xf_rulesdb_close(db);
}
END_TEST

START_TEST(test_status_and_verdict)
{
    xf_rulesdb *db = open_db(fresh_db("status.db"), XF_RULESDB_CREATE);
    xf_rule a, c;
    rule_assoc(&a);
    rule_comm(&c);
    int64_t ia = add(db, &a, NULL, NULL), ic = add(db, &c, NULL, NULL);
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_set_status(db, ic, XF_RULE_PRUNED, "instance of a more general rule",
                                           ia, &err),
                     XF_OK);
    const uint8_t cex[5] = {1, 2, 3, 4, 5};
    xf_rulesdb_verdict v = {XF_RULE_REFUTED, 12.5, "matmul_assoc,ewadd_comm", "z3 sat", cex, 5, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, ia, &v, &err), XF_OK);

    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, ic, &info, &err), XF_OK);
    ck_assert_int_eq(info.status, XF_RULE_PRUNED);
    ck_assert_str_eq(info.why, "instance of a more general rule");
    ck_assert_int_eq(info.subsumed_by, ia);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, ia, &info, &err), XF_OK);
    ck_assert_int_eq(info.status, XF_RULE_REFUTED);
    ck_assert_int_eq(info.has_verdict, 1);
    ck_assert(info.time_ms == 12.5);
    ck_assert_str_eq(info.axioms, "matmul_assoc,ewadd_comm");
    ck_assert_str_eq(info.detail, "z3 sat");
    ck_assert_uint_eq(info.counterexample_len, 5);
    ck_assert_int_eq(memcmp(info.counterexample, cex, 5), 0);
    xf_rulesdb_rule_info_free(&info);

    ck_assert_int_eq(xf_rulesdb_set_status(db, 99, XF_RULE_PROVED, NULL, 0, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no rule with id 99"));
    ck_assert_int_eq(xf_rulesdb_get_rule(db, 99, &info, &err), XF_ERR_INVALID);
    ck_assert_int_eq(xf_rulesdb_set_status(db, ia, XF_RULE_STATUS_COUNT, NULL, 0, &err),
                     XF_ERR_INVALID);
    xf_rule_status s;
    ck_assert_int_eq(xf_rulesdb_status_parse("refuted", &s, NULL), XF_OK);
    ck_assert_int_eq(s, XF_RULE_REFUTED);
    ck_assert_int_eq(xf_rulesdb_status_parse("maybe", &s, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "candidate, proved, refuted, unknown, pruned or derived"));
    xf_rule_free(&a);
    xf_rule_free(&c);
    xf_rulesdb_close(db);
}
END_TEST

/* Five rules with known statuses and sizes (for filters and counts). */
static void fill_five(xf_rulesdb *db, int64_t *ids)
{
    void (*builders[5])(xf_rule *) = {rule_assoc, rule_merge, rule_conv_relu, rule_comm, NULL};
    xf_rule_status st[5] = {XF_RULE_PROVED, XF_RULE_PROVED, XF_RULE_CANDIDATE, XF_RULE_PRUNED,
                            XF_RULE_REFUTED};
    for (int i = 0; i < 5; i++) {
        xf_rule r;
        if (builders[i])
            builders[i](&r);
        else
            rule_distrib(&r, 0);
        xf_rulesdb_rule_meta m = {st[i], 0, NULL, 0};
        ids[i] = add(db, &r, &m, NULL);
        xf_rule_free(&r);
    }
}

static void expect_ids(xf_rulesdb *db, const xf_rulesdb_filter *f, const int64_t *want, int n)
{
    xf_rulesdb_iter *it = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_iter_begin(db, f, &it, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int k = 0, has = 1;
    for (;;) {
        ck_assert_int_eq(xf_rulesdb_iter_next(it, &info, &has, &err), XF_OK);
        if (!has) break;
        ck_assert_int_lt(k, n);
        ck_assert_int_eq(info.id, want[k]);
        k++;
    }
    ck_assert_int_eq(k, n);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
}

START_TEST(test_filters_and_counts)
{
    xf_rulesdb *db = open_db(fresh_db("filters.db"), XF_RULESDB_CREATE);
    int64_t id[5];
    fill_five(db, id); /* assoc 2/2, merge 2/3, conv 2/1, comm 1/1, distrib 3/2 */
    xf_rulesdb_filter f = {0};
    f.any_status = 1;
    expect_ids(db, &f, id, 5);
    expect_ids(db, NULL, id, 5);
    f.limit = 2;
    expect_ids(db, &f, id, 2);
    f.limit = 0;
    f.max_size = 2;
    const int64_t small[3] = {id[0], id[2], id[3]};
    expect_ids(db, &f, small, 3);
    ck_assert_int_eq(count_rules(db, &f), 3);
    f.max_size = 0;
    const char *mc[2] = {"matmul", "concat"};
    f.ops = mc;
    f.n_ops = 2;
    expect_ids(db, &f, &id[1], 1);
    f.n_ops = 1; /* matmul alone */
    const int64_t mm[3] = {id[0], id[1], id[4]};
    expect_ids(db, &f, mm, 3);
    f.any_status = 0;
    f.status = XF_RULE_PROVED;
    expect_ids(db, &f, id, 2);
    f.max_size = 2;
    expect_ids(db, &f, id, 1);
    const char *bogus[1] = {"frobnicate"};
    f.ops = bogus;
    xf_rulesdb_iter *it = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_iter_begin(db, &f, &it, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown operator 'frobnicate'"));
    ck_assert_ptr_null(it);

    xf_rulesdb_count *rows = NULL;
    int n = 0;
    ck_assert_int_eq(xf_rulesdb_count_by(db, XF_RULESDB_BY_STATUS, &rows, &n, &err), XF_OK);
    ck_assert_int_eq(n, XF_RULE_STATUS_COUNT);
    const int64_t by_status[XF_RULE_STATUS_COUNT] = {1, 2, 1, 0, 1, 0};
    for (int i = 0; i < n; i++) {
        ck_assert_str_eq(rows[i].key, xf_rulesdb_status_name((xf_rule_status)i));
        ck_assert_int_eq(rows[i].n, by_status[i]);
    }
    free(rows);
    ck_assert_int_eq(xf_rulesdb_count_by(db, XF_RULESDB_BY_SIZE, &rows, &n, &err), XF_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(rows[0].key, "1");
    ck_assert_int_eq(rows[0].n, 1);
    ck_assert_str_eq(rows[1].key, "2");
    ck_assert_int_eq(rows[1].n, 2);
    ck_assert_str_eq(rows[2].key, "3");
    ck_assert_int_eq(rows[2].n, 2);
    free(rows);
    ck_assert_int_eq(xf_rulesdb_count_by(db, XF_RULESDB_BY_OP, &rows, &n, &err), XF_OK);
    /* matmul 3, ewadd 2, then concat, conv2d, relu, split with 1 each (by name) */
    const char *ops[6] = {"matmul", "ewadd", "concat", "conv2d", "relu", "split"};
    const int64_t cnt[6] = {3, 2, 1, 1, 1, 1};
    ck_assert_int_eq(n, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_str_eq(rows[i].key, ops[i]);
        ck_assert_int_eq(rows[i].n, cnt[i]);
    }
    free(rows);
    xf_rulesdb_close(db);
}
END_TEST

START_TEST(test_load_rule)
{
    const char *path = fresh_db("load.db");
    xf_rulesdb *db = open_db(path, XF_RULESDB_CREATE);
    xf_rule orig;
    rule_merge(&orig);
    int64_t id = add(db, &orig, NULL, NULL);
    xf_rulesdb_close(db);
    db = open_db(path, XF_RULESDB_READONLY);
    xf_rule back;
    xf_error err;
    ck_assert_msg(xf_rulesdb_load_rule(db, id, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_rule_validate(&back, NULL), XF_OK);
    ck_assert_uint_eq(xf_graph_hash(&back.src), xf_graph_hash(&orig.src));
    ck_assert_uint_eq(xf_graph_hash(&back.dst), xf_graph_hash(&orig.dst));
    ck_assert_uint_eq(back.fingerprint, 0x3333);
    ck_assert_str_eq(back.dst.values[back.dst.inputs[2]].name, "w1");
    expect_format(&back.dst, "split0[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1))), "
                             "split1[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1)))");
    xf_rule_free(&back);
    ck_assert_int_eq(xf_rulesdb_load_rule(db, id + 5, &back, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no rule with id"));
    xf_rule_free(&orig);
    xf_rulesdb_close(db);
}
END_TEST

/* ------------------------------------------------------------- consistency */

START_TEST(test_uncommitted_batch_is_dropped)
{
    const char *p = fresh_db("batch.db");
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    xf_rule a, c;
    rule_assoc(&a);
    rule_comm(&c);
    xf_rulesdb *db = open_db(path, XF_RULESDB_CREATE);
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_ERR_INVALID); /* no nesting */
    add(db, &a, NULL, NULL);
    ck_assert_int_eq(xf_rulesdb_in_batch(db), 1);
    ck_assert_int_eq(xf_rulesdb_batch_writes(db), 3); /* two graphs, one rule */
    ck_assert_int_eq(xf_rulesdb_commit(db, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_batch_writes(db), 0);
    /* second batch, closed without commit */
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_OK);
    add(db, &c, NULL, NULL);
    ck_assert_int_eq(count_rules(db, NULL), 2); /* visible inside the batch */
    xf_rulesdb_close(db);
    db = open_db(path, 0);
    ck_assert_int_eq(count_rules(db, NULL), 1);
    ck_assert_int_eq(count_graphs(db), 2);
    /* an explicit rollback also drops the batch */
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_OK);
    add(db, &c, NULL, NULL);
    ck_assert_int_eq(xf_rulesdb_rollback(db, &err), XF_OK);
    ck_assert_int_eq(count_rules(db, NULL), 1);
    ck_assert_int_eq(xf_rulesdb_commit(db, &err), XF_ERR_INVALID);
    xf_rulesdb_close(db);

    /* a process killed in the middle of a batch (no close, no commit) */
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        xf_rulesdb *cdb = NULL;
        if (xf_rulesdb_open(path, 0, &cdb, NULL) != XF_OK) _exit(3);
        int64_t run = 0, id = 0;
        xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 2", NULL, NULL, 1};
        if (xf_rulesdb_begin(cdb, NULL) != XF_OK) _exit(4);
        if (xf_rulesdb_run_start(cdb, &d, &run, NULL) != XF_OK) _exit(5);
        if (xf_rulesdb_add_rule(cdb, &c, NULL, &id, NULL, NULL) != XF_OK) _exit(6);
        _exit(0); /* like SIGKILL: SQLite gets no chance to clean up */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    db = open_db(path, 0);
    ck_assert_int_eq(count_rules(db, NULL), 1);
    ck_assert_int_eq(count_graphs(db), 2);
    int64_t ids[4];
    int n = -1;
    ck_assert_int_eq(xf_rulesdb_run_recent(db, ids, 4, &n, NULL), XF_OK);
    ck_assert_int_eq(n, 0);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT integrity_check = 'ok' FROM pragma_integrity_check"), 1);
    xf_rule_free(&a);
    xf_rule_free(&c);
}
END_TEST

/* -------------------------------------------------------------------- runs */

START_TEST(test_runs_and_resume)
{
    const char *p = fresh_db("runs.db");
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    xf_rulesdb *db = open_db(path, XF_RULESDB_CREATE);
    xf_error err;
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 3 --vocab taso", "4x4 matrices",
                             "taso", 42};
    int64_t r1 = 0, r2 = 0, found = -1;
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &r1, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, r1, XF_RUN_DONE, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xfergen", NULL, &found, &err), XF_OK);
    ck_assert_int_eq(found, 0);

    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &r2, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_stage(db, r2, "enumerate", 1.5, 1000, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_stage(db, r2, "fingerprint", 0.25, 900, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_stage(db, r2, "enumerate", 2.5, 2000, &err), XF_OK);
    const uint8_t ck1[4] = {9, 8, 7, 6};
    ck_assert_int_eq(xf_rulesdb_run_checkpoint(db, r2, ck1, sizeof ck1, &err), XF_OK);
    /* a checkpoint saved in a batch that is rolled back does not count */
    const uint8_t ck2[2] = {1, 1};
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_checkpoint(db, r2, ck2, sizeof ck2, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_rollback(db, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, r2, XF_RUN_INTERRUPTED, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_stage(db, 77, "x", 0, 0, &err), XF_ERR_IO); /* no such run */
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, 77, XF_RUN_DONE, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no run with id 77"));
    xf_rulesdb_close(db);

    db = open_db(path, 0);
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xfergen", "--max-ops 3 --vocab taso",
                                                   &found, &err),
                     XF_OK);
    ck_assert_int_eq(found, r2);
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xfergen", "--max-ops 4", &found, &err), XF_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xferverify", NULL, &found, &err), XF_OK);
    ck_assert_int_eq(found, 0);
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_run_get(db, r2, &info, &err), XF_OK);
    ck_assert_str_eq(info.tool, "xfergen");
    ck_assert_str_eq(info.tool_version, "0.1.0");
    ck_assert_str_eq(info.input_set, "4x4 matrices");
    ck_assert_str_eq(info.vocab, "taso");
    ck_assert_uint_eq(info.seed, 42);
    ck_assert_int_eq(info.state, XF_RUN_INTERRUPTED);
    ck_assert_ptr_nonnull(info.started);
    ck_assert_ptr_nonnull(info.ended);
    ck_assert_uint_eq(info.checkpoint_len, 4);
    ck_assert_int_eq(memcmp(info.checkpoint, ck1, 4), 0);
    ck_assert_int_eq(info.n_stages, 2);
    ck_assert_str_eq(info.stages[0].name, "enumerate"); /* first-recorded order, updated */
    ck_assert(info.stages[0].seconds == 2.5);
    ck_assert_int_eq(info.stages[0].count, 2000);
    ck_assert_str_eq(info.stages[1].name, "fingerprint");
    /* resuming: running again clears the end time; finishing makes it non-resumable */
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, r2, XF_RUN_RUNNING, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_get(db, r2, &info, &err), XF_OK);
    ck_assert_ptr_null(info.ended);
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, r2, XF_RUN_DONE, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xfergen", NULL, &found, &err), XF_OK);
    ck_assert_int_eq(found, 0);
    int64_t ids[8];
    int n = 0;
    ck_assert_int_eq(xf_rulesdb_run_recent(db, ids, 8, &n, &err), XF_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(ids[0], r2);
    ck_assert_int_eq(ids[1], r1);
    ck_assert_int_eq(xf_rulesdb_run_get(db, 55, &info, &err), XF_ERR_INVALID);
    xf_rulesdb_run_info_free(&info);
    xf_rulesdb_close(db);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rulesdb");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_format_rules);
    tcase_add_test(t, test_format_params_and_limits);
    tcase_add_test(t, test_serialize_exact_bytes);
    tcase_add_test(t, test_serialize_roundtrip);
    tcase_add_test(t, test_serialize_node_order_independent);
    tcase_add_test(t, test_serialize_rejects);
    tcase_add_test(t, test_deserialize_rejects_overflowing_shapes);
    tcase_add_test(t, test_create_sets_up_schema);
    tcase_add_test(t, test_schema_errors);
    tcase_add_test(t, test_dedupe);
    tcase_add_test(t, test_add_prepared);
    tcase_add_test(t, test_invalid_rule_and_bulk);
    tcase_add_test(t, test_status_and_verdict);
    tcase_add_test(t, test_filters_and_counts);
    tcase_add_test(t, test_load_rule);
    tcase_add_test(t, test_uncommitted_batch_is_dropped);
    tcase_add_test(t, test_runs_and_resume);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
