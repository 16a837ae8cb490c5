/*
 * test_graph.c — the graph core of ir/: builders with shape inference,
 * validation errors (arity, dangling value, cycle, recorded shape drift),
 * shapes whose element or byte count overflows (xf_shape_check, refused by
 * every builder and by xf_tensor_alloc), the memory limit (a tensor, a
 * graph's inputs, an interpreter run and conv's scratch refused over it),
 * nodes with only empty outputs not run (no scratch sized by their dims),
 * deterministic topological order, the liveness pass's peak activation
 * memory against a graph worked by hand, the canonical hash (invariant under node
 * order and names, sensitive to structure, params, constants, outputs),
 * deep copy (names and node arrays in the clone's one block), the
 * interpreter driver, arena, error prefixing and the RNG.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static xf_shape sh2(int64_t a, int64_t b)
{
    int64_t d[2] = {a, b};
    return xf_shape_make(2, d);
}

/* y = relu(x @ w + b), w and b constants; optionally built in another node
 * order and with other names, to check the hash ignores both. */
static void build_mlp(xf_graph *g, int variant)
{
    xf_error err;
    xf_graph_init(g);
    xf_shape sx = sh2(2, 3), sw = sh2(3, 4), sb = sh2(1, 4);
    float w[12], b[4];
    for (int i = 0; i < 12; i++) w[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (int i = 0; i < 4; i++) b[i] = (float)i * 0.1f;
    int x = xf_graph_add_input(g, variant ? "input" : "x", XF_F32, &sx, &err);
    int cw, cb;
    if (variant) { /* constants created in the other order */
        cb = xf_graph_add_const(g, "bias", XF_F32, &sb, b, &err);
        cw = xf_graph_add_const(g, "weight", XF_F32, &sw, w, &err);
    } else {
        cw = xf_graph_add_const(g, "w", XF_F32, &sw, w, &err);
        cb = xf_graph_add_const(g, "b", XF_F32, &sb, b, &err);
    }
    int in1[2] = {x, cw};
    int mm = xf_graph_op(g, XF_OP_MATMUL, NULL, in1, 2, &err);
    ck_assert_int_ge(mm, 0);
    int in2[2] = {mm, cb};
    int add = xf_graph_op(g, XF_OP_ADD, NULL, in2, 2, &err);
    ck_assert_int_ge(add, 0);
    int r = xf_graph_op(g, XF_OP_RELU, NULL, &add, 1, &err);
    ck_assert_int_ge(r, 0);
    ck_assert_int_eq(xf_graph_mark_output(g, r, &err), XF_OK);
}

START_TEST(builder_infers_shapes)
{
    xf_graph g;
    build_mlp(&g, 0);
    ck_assert_int_eq(g.n_nodes, 3);
    const xf_value *out = &g.values[g.outputs[0]];
    ck_assert_int_eq(out->shape.rank, 2);
    ck_assert_int_eq(out->shape.dims[0], 2);
    ck_assert_int_eq(out->shape.dims[1], 4);
    ck_assert_int_eq(out->dtype, XF_F32);
    xf_error err;
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
    int hist[XF_OP_COUNT];
    xf_graph_op_histogram(&g, hist);
    ck_assert_int_eq(hist[XF_OP_MATMUL], 1);
    ck_assert_int_eq(hist[XF_OP_RELU], 1);
    ck_assert_uint_eq(xf_graph_param_bytes(&g), (12 + 4) * 4);
    xf_graph_free(&g);
}
END_TEST

START_TEST(builder_rejects_bad_shapes)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    xf_shape a = sh2(2, 3), b = sh2(4, 5);
    int x = xf_graph_add_input(&g, "a", XF_F32, &a, &err);
    int y = xf_graph_add_input(&g, "b", XF_F32, &b, &err);
    int in[2] = {x, y};
    int n = xf_graph_add_node(&g, XF_OP_MATMUL, NULL, in, 2, 1, "mm", &err);
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(err.code, XF_ERR_SHAPE);
    ck_assert_int_eq(g.n_nodes, 0);
    /* wrong arity */
    n = xf_graph_add_node(&g, XF_OP_RELU, NULL, in, 2, 1, "r", &err);
    ck_assert_int_eq(n, -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "relu"));
    /* reference to a value that does not exist */
    int bad[1] = {99};
    n = xf_graph_add_node(&g, XF_OP_RELU, NULL, bad, 1, 1, "r", &err);
    ck_assert_int_eq(n, -1);
    ck_assert_int_eq(err.code, XF_ERR_GRAPH);
    xf_graph_free(&g);
}
END_TEST

START_TEST(validate_finds_cycle_and_drift)
{
    xf_graph g;
    xf_error err;
    xf_graph_init(&g);
    xf_shape s = sh2(2, 2);
    int x = xf_graph_add_input(&g, "x", XF_F32, &s, &err);
    int a = xf_graph_op(&g, XF_OP_RELU, NULL, &x, 1, &err);
    int b = xf_graph_op(&g, XF_OP_TANH, NULL, &a, 1, &err);
    xf_graph_mark_output(&g, b, &err);
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
    /* make relu read tanh's output: relu -> tanh -> relu */
    g.nodes[0].inputs[0] = b;
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_ERR_GRAPH);
    ck_assert_ptr_nonnull(strstr(err.msg, "cycle"));
    int order[2];
    ck_assert_int_eq(xf_graph_topo_order(&g, order, &err), XF_ERR_GRAPH);
    g.nodes[0].inputs[0] = x;
    /* recorded shape no longer what inference says */
    g.values[b].shape.dims[1] = 3;
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(err.msg, "tanh"));
    xf_graph_free(&g);
}
END_TEST

START_TEST(topo_order_is_deterministic)
{
    xf_graph g;
    xf_error err;
    xf_graph_init(&g);
    xf_shape s = sh2(2, 2);
    int x = xf_graph_add_input(&g, "x", XF_F32, &s, &err);
    int a = xf_graph_op(&g, XF_OP_RELU, NULL, &x, 1, &err);  /* node 0 */
    int b = xf_graph_op(&g, XF_OP_TANH, NULL, &x, 1, &err);  /* node 1 */
    int in[2] = {a, b};
    int c = xf_graph_op(&g, XF_OP_ADD, NULL, in, 2, &err);   /* node 2 */
    int d = xf_graph_op(&g, XF_OP_SIGMOID, NULL, &x, 1, &err); /* node 3 */
    (void)c;
    (void)d;
    /* rewire node 0 to read node 3's output: order must be 1,3,0,2 */
    g.nodes[0].inputs[0] = d;
    int order[4];
    ck_assert_int_eq(xf_graph_topo_order(&g, order, &err), XF_OK);
    ck_assert_int_eq(order[0], 1);
    ck_assert_int_eq(order[1], 3);
    ck_assert_int_eq(order[2], 0);
    ck_assert_int_eq(order[3], 2);
    xf_graph_free(&g);
}
END_TEST

START_TEST(hash_ignores_names_and_order)
{
    xf_graph a, b;
    build_mlp(&a, 0);
    build_mlp(&b, 1);
    uint64_t ha = xf_graph_hash(&a), hb = xf_graph_hash(&b);
    ck_assert_uint_ne(ha, 0);
    ck_assert_uint_eq(ha, hb);
    /* a changed constant changes the hash */
    ((float *)b.values[1].data)[0] += 1.0f;
    ck_assert_uint_ne(xf_graph_hash(&b), ha);
    ((float *)b.values[1].data)[0] -= 1.0f;
    ck_assert_uint_eq(xf_graph_hash(&b), ha);
    /* a changed parameter changes it */
    b.nodes[2].params.axis = 1;
    ck_assert_uint_ne(xf_graph_hash(&b), ha);
    b.nodes[2].params.axis = 0;
    /* an extra dead node changes it */
    xf_error err;
    int r = xf_graph_op(&b, XF_OP_TANH, NULL, &b.inputs[0], 1, &err);
    ck_assert_int_ge(r, 0);
    ck_assert_uint_ne(xf_graph_hash(&b), ha);
    xf_graph_free(&a);
    xf_graph_free(&b);
}
END_TEST

START_TEST(hash_identity_mode_reads_pointers_not_contents)
{
    xf_graph a, b, c;
    xf_error err;
    build_mlp(&a, 0);
    build_mlp(&b, 1);
    ck_assert_int_eq(xf_graph_clone_shared(&a, &c, &err), XF_OK);
    uint64_t ia = xf_graph_hash_mode(&a, XF_HASH_IDENTITY);
    ck_assert_uint_ne(ia, 0);
    /* a shared clone has the same weights by pointer; equal contents elsewhere do not count */
    ck_assert_uint_eq(xf_graph_hash_mode(&c, XF_HASH_IDENTITY), ia);
    ck_assert_uint_ne(xf_graph_hash_mode(&b, XF_HASH_IDENTITY), ia);
    ck_assert_uint_eq(xf_graph_hash_mode(&b, XF_HASH_CONTENT), xf_graph_hash(&a));
    /* changed contents behind the same pointer: identity mode does not see it */
    ((float *)a.values[1].data)[0] += 1.0f;
    ck_assert_uint_eq(xf_graph_hash_mode(&a, XF_HASH_IDENTITY), ia);
    ck_assert_uint_ne(xf_graph_hash(&a), xf_graph_hash(&b));
    /* structure still counts */
    a.nodes[2].params.axis = 1;
    ck_assert_uint_ne(xf_graph_hash_mode(&a, XF_HASH_IDENTITY), ia);
    xf_graph_free(&c);
    xf_graph_free(&a);
    xf_graph_free(&b);
}
END_TEST

START_TEST(canonical_order_ignores_node_order)
{
    /* relu(x) and tanh(x) added in either order: the same sequence of ops */
    xf_error err;
    xf_graph g[2];
    xf_shape s = sh2(2, 2);
    xf_op seq[2][3];
    for (int k = 0; k < 2; k++) {
        xf_graph_init(&g[k]);
        int x = xf_graph_add_input(&g[k], "x", XF_F32, &s, &err);
        int r = xf_graph_op(&g[k], k ? XF_OP_TANH : XF_OP_RELU, NULL, &x, 1, &err);
        int t = xf_graph_op(&g[k], k ? XF_OP_RELU : XF_OP_TANH, NULL, &x, 1, &err);
        int in[2] = {k ? t : r, k ? r : t};
        int o = xf_graph_op(&g[k], XF_OP_SUB, NULL, in, 2, &err);
        ck_assert_int_eq(xf_graph_mark_output(&g[k], o, &err), XF_OK);
        int order[3];
        ck_assert_int_eq(xf_graph_canonical_order(&g[k], order, &err), XF_OK);
        for (int i = 0; i < 3; i++) seq[k][i] = g[k].nodes[order[i]].op;
        ck_assert_int_eq(seq[k][2], XF_OP_SUB);
    }
    ck_assert_int_eq(seq[0][0], seq[1][0]);
    ck_assert_int_eq(seq[0][1], seq[1][1]);
    ck_assert_int_ne(seq[0][0], seq[0][1]);
    xf_graph_free(&g[0]);
    xf_graph_free(&g[1]);
}
END_TEST

/* Graph inputs x (2x3), w (3x3), named as given. */
static void text_inputs(xf_graph *g, const char *x, const char *w)
{
    xf_error err;
    xf_shape sx = sh2(2, 3), sw = sh2(3, 3);
    xf_graph_init(g);
    ck_assert_int_ge(xf_graph_add_input(g, x, XF_F32, &sx, &err), 0);
    ck_assert_int_ge(xf_graph_add_input(g, w, XF_F32, &sw, &err), 0);
}

START_TEST(text_format_parses_back)
{
    /* tanh(matmul(x, w)) - relu(x @ w), and relu(x) as a second output */
    xf_graph a, b;
    xf_error err;
    text_inputs(&a, "x", "w");
    int in[2] = {a.inputs[0], a.inputs[1]};
    int mm = xf_graph_op(&a, XF_OP_MATMUL, NULL, in, 2, &err);
    int t = xf_graph_op(&a, XF_OP_TANH, NULL, &mm, 1, &err);
    int r = xf_graph_op(&a, XF_OP_RELU, NULL, &mm, 1, &err);
    int s[2] = {t, r};
    int d = xf_graph_op(&a, XF_OP_SUB, NULL, s, 2, &err);
    int r2 = xf_graph_op(&a, XF_OP_RELU, NULL, &a.inputs[0], 1, &err);
    xf_test_out(&a, d);
    xf_test_out(&a, r2);
    char text[512];
    ck_assert_int_eq(xf_graph_format(&a, text, sizeof text, &err), XF_OK);
    /* the printer repeats the shared matmul; the parser builds it twice */
    text_inputs(&b, "x", "w");
    ck_assert_msg(xf_graph_parse(&b, text, NULL, NULL, &err) == XF_OK, "%s: %s", text, err.msg);
    ck_assert_int_eq(b.n_outputs, 2);
    ck_assert_int_eq(b.n_nodes, a.n_nodes + 1);
    char again[512];
    ck_assert_int_eq(xf_graph_format(&b, again, sizeof again, &err), XF_OK);
    ck_assert_str_eq(again, text);
    xf_test_expect_same_function(&a, &b, 7, 0.0);
    xf_graph_free(&b);
    /* unnamed inputs print and parse as in<i> */
    text_inputs(&b, NULL, NULL);
    ck_assert_int_eq(xf_graph_parse(&b, "ewsub(in0, relu(in0))", NULL, NULL, &err), XF_OK);
    ck_assert_int_eq(xf_graph_format(&b, again, sizeof again, &err), XF_OK);
    ck_assert_str_eq(again, "ewsub(in0, relu(in0))");
    xf_graph_free(&b);
    xf_graph_free(&a);
}
END_TEST

START_TEST(text_format_parse_errors_say_where)
{
    static const struct {
        const char *text, *msg;
        xf_status code;
    } bad[] = {
        {"relu(y)", "'y' is not a graph input", XF_ERR_PARSE},
        {"frobnicate(x)", "'frobnicate' is not an operator", XF_ERR_PARSE},
        {"concat[axis=1](x, x)", "parameters are not read by default", XF_ERR_UNSUPPORTED},
        {"relu(x", "column 7", XF_ERR_PARSE},
        {"relu(x) relu(x)", "between outputs", XF_ERR_PARSE},
        {"", "expected a name", XF_ERR_PARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        xf_graph g;
        xf_error err = {0};
        text_inputs(&g, "x", "w");
        ck_assert_int_eq(xf_graph_parse(&g, bad[i].text, NULL, NULL, &err), bad[i].code);
        xf_test_expect_contains(err.msg, bad[i].msg);
        xf_graph_free(&g);
    }
}
END_TEST

START_TEST(hash_distinguishes_operand_order)
{
    /* op(x, y) and op(y, x) differ in content and identity mode, for sub
     * and for the commutative ops alike; the unordered modes take the
     * operands of add, mul, min and max in either order, and of sub still
     * in order */
    const xf_op ops[5] = {XF_OP_SUB, XF_OP_ADD, XF_OP_MUL, XF_OP_MIN, XF_OP_MAX};
    for (int i = 0; i < 5; i++) {
        xf_error err;
        xf_graph g1, g2;
        xf_shape s = sh2(2, 2), row = sh2(1, 2);
        xf_graph *gs[2] = {&g1, &g2};
        for (int k = 0; k < 2; k++) {
            xf_graph_init(gs[k]);
            int x = xf_graph_add_input(gs[k], "x", XF_F32, &s, &err);
            int y = xf_graph_add_input(gs[k], "y", XF_F32, &row, &err); /* broadcast */
            int in[2] = {k ? y : x, k ? x : y};
            int o = xf_graph_op(gs[k], ops[i], NULL, in, 2, &err);
            ck_assert_msg(o >= 0, "%s", err.msg);
            xf_graph_mark_output(gs[k], o, &err);
        }
        ck_assert_uint_ne(xf_graph_hash(&g1), xf_graph_hash(&g2));
        ck_assert_uint_ne(xf_graph_hash_mode(&g1, XF_HASH_IDENTITY),
                          xf_graph_hash_mode(&g2, XF_HASH_IDENTITY));
        const xf_hash_mode unordered[2] = {XF_HASH_UNORDERED, XF_HASH_IDENTITY_UNORDERED};
        for (int m = 0; m < 2; m++) {
            uint64_t u1 = xf_graph_hash_mode(&g1, unordered[m]),
                     u2 = xf_graph_hash_mode(&g2, unordered[m]);
            if (ops[i] == XF_OP_SUB) ck_assert_uint_ne(u1, u2);
            else ck_assert_uint_eq(u1, u2);
            ck_assert_uint_ne(u1, 0);
        }
        xf_graph_free(&g1);
        xf_graph_free(&g2);
    }
}
END_TEST

START_TEST(params_canonical_on_add)
{
    /* a field the op ignores (epsilon on softmax) is dropped, so the hash and
     * the stored bytes equal those of a clean node; a field it reads (axis)
     * still tells nodes apart; invalid fields are reported before dropping */
    xf_error err;
    xf_graph g1, g2, g3;
    xf_shape s = sh2(2, 3);
    xf_graph *gs[3] = {&g1, &g2, &g3};
    for (int k = 0; k < 3; k++) {
        xf_graph_init(gs[k]);
        int x = xf_graph_add_input(gs[k], "x", XF_F32, &s, &err);
        xf_params p = xf_params_default();
        p.axis = k == 2 ? 0 : -1;
        if (k == 1) p.epsilon = 1e-5f, p.kernel[0] = 3, p.n_shape = 2;
        int o = xf_graph_op(gs[k], XF_OP_SOFTMAX, &p, &x, 1, &err);
        ck_assert_int_ge(o, 0);
        xf_graph_mark_output(gs[k], o, &err);
    }
    ck_assert_uint_eq(xf_graph_hash(&g1), xf_graph_hash(&g2));
    ck_assert_int_eq(memcmp(&g1.nodes[0].params, &g2.nodes[0].params, sizeof(xf_params)), 0);
    ck_assert_float_eq(g2.nodes[0].params.epsilon, 0.0f);
    ck_assert_uint_ne(xf_graph_hash(&g1), xf_graph_hash(&g3));

    int64_t d4[4] = {1, 1, 4, 4};
    xf_shape s4 = xf_shape_make(4, d4);
    int x4 = xf_graph_add_input(&g1, "x4", XF_F32, &s4, &err);
    xf_params mp = xf_params_default();
    mp.kernel[0] = mp.kernel[1] = 2;
    mp.stride[0] = mp.stride[1] = 2;
    mp.count_include_pad = 1; /* meaningless for max-pool: rejected, not dropped */
    ck_assert_int_lt(xf_graph_op(&g1, XF_OP_MAXPOOL, &mp, &x4, 1, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "count_include_pad"));
    for (int k = 0; k < 3; k++) xf_graph_free(gs[k]);
}
END_TEST

START_TEST(clone_is_deep_and_equal)
{
    xf_graph a, c;
    xf_error err;
    build_mlp(&a, 0);
    ck_assert_int_eq(xf_graph_clone(&a, &c, &err), XF_OK);
    ck_assert_uint_eq(xf_graph_hash(&a), xf_graph_hash(&c));
    ck_assert_ptr_ne(a.values[1].data, c.values[1].data);
    ck_assert_str_eq(c.values[0].name, "x");
    xf_graph_free(&a); /* the clone must stay usable */
    ck_assert_int_eq(xf_graph_validate(&c, &err), XF_OK);
    xf_graph_free(&c);
}
END_TEST

/* A clone's names and node arrays live in its block: replacing them through
 * xf_graph_release, adding nodes (own allocations) and cloning the clone
 * all work, and freeing releases everything (the sanitizer build checks
 * there is neither a leak nor a bad free). */
START_TEST(clone_block_holds_names_and_node_arrays)
{
    xf_graph a, c, cc;
    xf_error err;
    build_mlp(&a, 0);
    ck_assert_int_eq(xf_graph_clone_shared(&a, &c, &err), XF_OK);
    ck_assert(xf_graph_in_block(&c, c.values[0].name));
    ck_assert(xf_graph_in_block(&c, c.nodes[0].inputs));
    ck_assert(xf_graph_in_block(&c, c.nodes[c.n_nodes - 1].outputs));
    ck_assert(!xf_graph_in_block(&c, c.values[1].data)); /* borrowed from a */
    ck_assert(!xf_graph_in_block(&a, a.values[0].name)); /* built, not cloned */
    ck_assert_str_eq(c.values[0].name, "x");
    xf_graph_release(&c, c.values[0].name);
    c.values[0].name = strdup("renamed");
    int *ins = malloc(sizeof(int) * 2);
    memcpy(ins, c.nodes[0].inputs, sizeof(int) * 2);
    xf_graph_release(&c, c.nodes[0].inputs);
    c.nodes[0].inputs = ins;
    int y = c.outputs[0];
    int r = xf_graph_op(&c, XF_OP_RELU, NULL, &y, 1, &err);
    ck_assert_int_ge(r, 0);
    ck_assert(!xf_graph_in_block(&c, c.nodes[c.n_nodes - 1].inputs));
    ck_assert_int_eq(xf_graph_validate(&c, &err), XF_OK);
    ck_assert_int_eq(xf_graph_clone(&c, &cc, &err), XF_OK);
    ck_assert_str_eq(cc.values[0].name, "renamed");
    ck_assert(xf_graph_in_block(&cc, cc.values[0].name));
    ck_assert_uint_eq(xf_graph_hash(&c), xf_graph_hash(&cc));
    xf_graph_free(&c);
    ck_assert_int_eq(xf_graph_validate(&cc, &err), XF_OK);
    xf_graph_free(&cc);
    xf_graph_free(&a);
}
END_TEST

/* A packed graph (the search queue's form) is much smaller and comes back
 * byte for byte: same hash, the same node and value arrays, its names and
 * node arrays where they were (in the clone block or allocated after); a
 * packed graph is freed without being unpacked (ASan checks nothing
 * leaks), and one whose constants it owns frees them too. */
START_TEST(packed_graph_comes_back_byte_for_byte)
{
    xf_graph a, c, back;
    xf_error err;
    build_mlp(&a, 0);
    ck_assert_int_eq(xf_graph_clone_shared(&a, &c, &err), XF_OK);
    int y = c.outputs[0];
    ck_assert_int_ge(xf_graph_op(&c, XF_OP_RELU, NULL, &y, 1, &err), 0); /* arrays off the block */
    uint64_t h = xf_graph_hash(&c);
    size_t nb = (size_t)c.n_nodes * sizeof *c.nodes, vb = (size_t)c.n_values * sizeof *c.values;
    xf_node *nodes = malloc(nb);
    xf_value *values = malloc(vb);
    memcpy(nodes, c.nodes, nb);
    memcpy(values, c.values, vb);
    xf_graph_packed p;
    ck_assert_int_eq(xf_graph_pack(&c, &p, &err), XF_OK);
    ck_assert_int_eq(c.n_nodes, 0); /* taken over */
    ck_assert_uint_lt(xf_graph_packed_bytes(&p), (nb + vb) / 4);
    ck_assert_int_eq(xf_graph_unpack(&p, &back, &err), XF_OK);
    ck_assert_ptr_null(p.bytes);
    ck_assert_int_eq(memcmp(nodes, back.nodes, nb), 0);
    ck_assert_int_eq(memcmp(values, back.values, vb), 0);
    ck_assert_uint_eq(xf_graph_hash(&back), h);
    ck_assert_int_ge(back.cap_nodes, back.n_nodes + 1);
    ck_assert_int_eq(xf_graph_validate(&back, &err), XF_OK);
    ck_assert_int_eq(xf_graph_pack(&back, &p, &err), XF_OK);
    xf_graph_packed_free(&p);
    xf_graph_packed_free(&p); /* empty: a no-op */
    xf_graph owned;
    ck_assert_int_eq(xf_graph_clone(&a, &owned, &err), XF_OK);
    ck_assert_int_eq(xf_graph_pack(&owned, &p, &err), XF_OK);
    xf_graph_packed_free(&p);
    free(nodes);
    free(values);
    xf_graph_free(&a);
}
END_TEST

START_TEST(interpreter_runs_mlp)
{
    xf_graph g;
    xf_error err;
    build_mlp(&g, 0);
    xf_tensor in, out;
    xf_shape s = sh2(2, 3);
    ck_assert_int_eq(xf_tensor_alloc(&in, XF_F32, &s, &err), XF_OK);
    float xv[6] = {1, -2, 3, 0.5f, 0.25f, -1};
    memcpy(in.data, xv, sizeof xv);
    ck_assert_int_eq(xf_interp_run(&g, &in, 1, &out, &err), XF_OK);
    const float *w = g.values[1].data, *b = g.values[2].data, *y = out.data;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            double acc = b[j];
            for (int k = 0; k < 3; k++) acc += xv[i * 3 + k] * w[k * 4 + j];
            ck_assert_double_eq_tol(y[i * 4 + j], acc > 0 ? acc : 0, 1e-6);
        }
    xf_tensor_free(&out);
    /* wrong input shape is refused with a message naming the input */
    xf_shape s2 = sh2(3, 3);
    in.shape = s2;
    ck_assert_int_eq(xf_interp_run(&g, &in, 1, &out, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "'x'"));
    xf_tensor_free(&in);
    xf_graph_free(&g);
}
END_TEST

START_TEST(interpreter_refuses_opaque)
{
    xf_graph g;
    xf_error err;
    xf_graph_init(&g);
    xf_shape s = sh2(2, 2);
    int x = xf_graph_add_input(&g, "x", XF_F32, &s, &err);
    xf_opaque *o = calloc(1, sizeof *o);
    o->op_type = strdup("MyCustomOp");
    o->domain = strdup("com.example");
    xf_dtype dt = XF_F32;
    int n = xf_graph_add_opaque(&g, o, &x, 1, &dt, &s, 1, "custom", &err);
    ck_assert_int_eq(n, 0);
    xf_graph_mark_output(&g, g.nodes[n].outputs[0], &err);
    ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
    xf_tensor in, out;
    xf_tensor_alloc(&in, XF_F32, &s, &err);
    ck_assert_int_eq(xf_interp_run(&g, &in, 1, &out, &err), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err.msg, "MyCustomOp"));
    xf_tensor_free(&in);
    xf_graph_free(&g);
}
END_TEST

START_TEST(shape_check_bounds_elements_and_bytes)
{
    const int64_t big = ((int64_t)1 << 62) + 1;
    xf_error err;
    int64_t n = -1;
    size_t bytes = 0;
    xf_shape s = sh2(3, 4);
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, &n, &bytes, &err), XF_OK);
    ck_assert_int_eq(n, 12);
    ck_assert_uint_eq(bytes, 48);
    s = sh2(0, 5);
    ck_assert_int_eq(xf_shape_check(&s, XF_I64, &n, &bytes, &err), XF_OK);
    ck_assert_int_eq(n, 0);
    ck_assert_uint_eq(bytes, 0);
    s = sh2((int64_t)1 << 31, (int64_t)1 << 31); /* exactly 2^62 one-byte elements */
    ck_assert_int_eq(xf_shape_check(&s, XF_BOOL, &n, NULL, &err), XF_OK);
    ck_assert_int_eq(n, XF_SHAPE_MAX_ELEMS);
    /* ... but 2^64 bytes as float32 */
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, NULL, NULL, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg,
                            "shape [2147483648,2147483648] of float32 takes more than 2^62 bytes");
    s = sh2(big, 4);
    ck_assert_int_eq(xf_shape_check(&s, XF_BOOL, NULL, NULL, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "shape [4611686018427387905,4] has more than 2^62 elements");
    /* 2^64 + 4 would wrap to 4; a zero dim does not hide the other dims' product */
    int64_t wrap[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 4}, zero[3] = {0, big, 2};
    s = xf_shape_make(3, wrap);
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, NULL, NULL, &err), XF_ERR_SHAPE);
    s = xf_shape_make(3, zero);
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, NULL, NULL, &err), XF_ERR_SHAPE);
    s = sh2(2, -3);
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, NULL, NULL, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "shape [2,-3] has a negative dimension (dim 1)");
    s.rank = XF_MAX_DIMS + 1;
    ck_assert_int_eq(xf_shape_check(&s, XF_F32, NULL, NULL, &err), XF_ERR_SHAPE);

    /* tensors */
    xf_tensor t;
    s = sh2(big, 4);
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_ERR_SHAPE);
    ck_assert_ptr_null(t.data);
    xf_test_expect_contains(err.msg, "tensor: shape [4611686018427387905,4]");
}
END_TEST

START_TEST(builders_refuse_overflowing_shapes)
{
    const int64_t big = ((int64_t)1 << 62) + 1;
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    xf_shape huge = sh2(big, 4), neg = sh2(-1, 4), ok = sh2(2, 2);
    ck_assert_int_eq(xf_graph_add_input(&g, "x", XF_F32, &huge, &err), -1);
    ck_assert_int_eq(err.code, XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "input 'x': shape [4611686018427387905,4] has more than 2^62");
    ck_assert_int_eq(xf_graph_add_input(&g, "n", XF_F32, &neg, &err), -1);
    xf_test_expect_contains(err.msg, "input 'n': shape [-1,4] has a negative dimension");
    float one = 1;
    ck_assert_int_eq(xf_graph_add_const(&g, "c", XF_F32, &huge, &one, &err), -1);
    xf_test_expect_contains(err.msg, "constant 'c': shape [4611686018427387905,4]");
    float *owned = malloc(sizeof *owned);
    ck_assert_int_eq(xf_graph_add_const_owned(&g, "d", XF_F32, &neg, owned, &err), -1);
    xf_test_expect_contains(err.msg, "constant 'd'");
    ck_assert_int_eq(g.n_values, 0);

    /* valid inputs whose broadcast (2^31 x 2^32) or concatenation overflows */
    xf_shape col = sh2((int64_t)1 << 31, 1), row = sh2(1, (int64_t)1 << 32);
    int in[2] = {xf_graph_add_input(&g, "col", XF_F32, &col, &err),
                 xf_graph_add_input(&g, "row", XF_F32, &row, &err)};
    ck_assert_int_eq(xf_graph_add_node(&g, XF_OP_ADD, NULL, in, 2, 1, "add", &err), -1);
    ck_assert_int_eq(err.code, XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "output 0: shape [2147483648,4294967296] has more than 2^62");
    xf_shape half = sh2((int64_t)1 << 61, 2);
    int h = xf_graph_add_input(&g, "h", XF_BOOL, &half, &err);
    ck_assert_int_ge(h, 0);
    int cat[2] = {h, h};
    xf_params p = xf_params_default();
    ck_assert_int_eq(xf_graph_add_node(&g, XF_OP_CONCAT, &p, cat, 2, 1, "cat", &err), -1);
    xf_test_expect_contains(err.msg, "has more than 2^62 elements");
    ck_assert_int_eq(g.n_nodes, 0);

    /* an opaque node's declared outputs are checked too (ownership taken) */
    int x = xf_graph_add_input(&g, "ok", XF_F32, &ok, &err);
    xf_opaque *o = calloc(1, sizeof *o);
    o->op_type = strdup("MyCustomOp");
    xf_dtype dt = XF_F32;
    ck_assert_int_eq(xf_graph_add_opaque(&g, o, &x, 1, &dt, &huge, 1, "custom", &err), -1);
    xf_test_expect_contains(err.msg,
                            "opaque node 'custom': output 0: shape [4611686018427387905,4]");
    ck_assert_int_eq(g.n_nodes, 0);
    xf_graph_free(&g);
}
END_TEST

/* Issue 17: work whose tensors exceed the memory limit is refused before
 * anything is allocated, naming the tensor (or the largest one and the node
 * that makes it) and the limit: one tensor, a graph's inputs, an interpreter
 * run, and a convolution whose im2col scratch alone is over it. */
START_TEST(memory_limit_refuses_before_allocating)
{
    size_t def = xf_mem_limit();
    ck_assert_uint_gt(def, (size_t)1 << 20);
    xf_mem_limit_set((size_t)1 << 20);
    ck_assert_uint_eq(xf_mem_limit(), (size_t)1 << 20);
    xf_error err;
    xf_tensor t;
    xf_shape s = sh2(1024, 512);
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_ERR_NOMEM);
    ck_assert_ptr_null(t.data);
    xf_test_expect_contains(err.msg, "tensor [1024,512] of float32 needs 2.0 MiB, over the "
                                     "memory limit of 1.0 MiB (set it with --mem-limit");
    s = sh2(1024, 256); /* exactly the limit */
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_OK);
    xf_tensor_free(&t);

    /* [2,1] + [1,131072]: small inputs, a 1 MiB sum */
    xf_graph g;
    xf_graph_init(&g);
    xf_shape sa = sh2(2, 1), sb = sh2(1, 131072);
    int in[2] = {xf_graph_add_input(&g, "a", XF_F32, &sa, &err),
                 xf_graph_add_input(&g, "b", XF_F32, &sb, &err)};
    int y = xf_graph_op(&g, XF_OP_ADD, NULL, in, 2, &err);
    ck_assert_int_ge(y, 0);
    ck_assert_int_eq(xf_graph_mark_output(&g, y, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mem_check(&g, &err), XF_ERR_NOMEM);
    xf_test_expect_contains(err.msg, "the graph's tensors need 1.5 MiB, over the memory limit of "
                                     "1.0 MiB");
    xf_test_expect_contains(err.msg, "the largest is output 0 of node 0 (ewadd), [2,131072] "
                                     "float32, 1.0 MiB");
    xf_tensor ins[2] = {{0}, {0}}, out = {0};
    ck_assert_int_eq(xf_graph_random_inputs(&g, 1, ins, &err), XF_ERR_NOMEM);
    ck_assert_ptr_null(ins[0].data);
    xf_test_expect_contains(err.msg, "over the memory limit");
    ck_assert_int_eq(xf_tensor_alloc(&ins[0], XF_F32, &sa, &err), XF_OK);
    ck_assert_int_eq(xf_tensor_alloc(&ins[1], XF_F32, &sb, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&g, ins, 2, &out, &err), XF_ERR_NOMEM);
    ck_assert_ptr_null(out.data);
    xf_test_expect_contains(err.msg, "node 0 (ewadd)");
    xf_mem_limit_set((size_t)2 << 20);
    ck_assert_int_eq(xf_interp_run(&g, ins, 2, &out, &err), XF_OK);
    xf_tensor_free(&out);
    xf_tensor_free(&ins[0]);
    xf_tensor_free(&ins[1]);
    xf_graph_free(&g);

    /* a 16x16 kernel over a 64x64 image: 21 KiB of tensors, but im2col
     * needs 256 x 49*49 floats (2.3 MiB) */
    xf_mem_limit_set((size_t)1 << 20);
    xf_graph_init(&g);
    int64_t xd[4] = {1, 1, 64, 64}, wd[4] = {1, 1, 16, 16};
    xf_shape sx = xf_shape_make(4, xd), sw = xf_shape_make(4, wd);
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 16;
    int cin[2] = {xf_graph_add_input(&g, "x", XF_F32, &sx, &err),
                  xf_graph_add_input(&g, "w", XF_F32, &sw, &err)};
    y = xf_graph_op(&g, XF_OP_CONV, &p, cin, 2, &err);
    ck_assert_msg(y >= 0, "%s", err.msg);
    ck_assert_int_eq(xf_graph_mark_output(&g, y, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mem_check(&g, &err), XF_OK);
    ck_assert_int_eq(xf_graph_random_inputs(&g, 1, ins, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&g, ins, 2, &out, &err), XF_ERR_NOMEM);
    xf_test_expect_contains(err.msg, "conv: the im2col scratch needs 2.3 MiB, over the memory "
                                     "limit of 1.0 MiB");
    xf_mem_limit_set(0);
    ck_assert_uint_eq(xf_mem_limit(), def);
    ck_assert_int_eq(xf_interp_run(&g, ins, 2, &out, &err), XF_OK);
    xf_tensor_free(&out);
    xf_tensor_free(&ins[0]);
    xf_tensor_free(&ins[1]);
    xf_graph_free(&g);
}
END_TEST

/* Found by the import fuzzer: a maxpool whose output [0,1,1,2^32-1] has no
 * elements allocated a 96 GiB column plan for its 2^32 columns. Nodes whose
 * outputs are all empty are not run; the run succeeds within a 1 MiB limit. */
START_TEST(empty_outputs_are_not_computed)
{
    xf_mem_limit_set((size_t)1 << 20);
    xf_graph g;
    xf_error err;
    xf_graph_init(&g);
    int64_t xd[4] = {0, 1, 1, (int64_t)1 << 32};
    xf_shape sx = xf_shape_make(4, xd);
    xf_params p = xf_params_default();
    p.kernel[0] = 1;
    p.kernel[1] = 2;
    int x = xf_graph_add_input(&g, "x", XF_F32, &sx, &err);
    int y = xf_graph_op(&g, XF_OP_MAXPOOL, &p, &x, 1, &err);
    ck_assert_msg(y >= 0, "%s", err.msg);
    ck_assert_int_eq(g.values[y].shape.dims[3], ((int64_t)1 << 32) - 1);
    ck_assert_int_eq(xf_graph_mark_output(&g, y, &err), XF_OK);
    xf_tensor in = {0}, out = {0};
    ck_assert_int_eq(xf_graph_random_inputs(&g, 1, &in, &err), XF_OK);
    ck_assert_msg(xf_interp_run(&g, &in, 1, &out, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_shape_numel(&out.shape), 0);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
    xf_graph_free(&g);
    xf_mem_limit_set(0);
}
END_TEST

START_TEST(tensor_compare_reports_errors)
{
    xf_error err;
    xf_shape s = sh2(1, 3);
    xf_tensor a, b;
    xf_tensor_alloc(&a, XF_F32, &s, &err);
    xf_tensor_alloc(&b, XF_F32, &s, &err);
    float av[3] = {1, 2, 3}, bv[3] = {1, 2.5f, 3};
    memcpy(a.data, av, sizeof av);
    memcpy(b.data, bv, sizeof bv);
    double ma, mr;
    ck_assert_int_eq(xf_tensor_compare(&a, &b, &ma, &mr, &err), XF_OK);
    ck_assert_double_eq_tol(ma, 0.5, 1e-9);
    ck_assert_double_eq_tol(mr, 0.2, 1e-9);
    ck_assert(!xf_tensor_close(&a, &b, 1e-4, 1e-5));
    ck_assert(xf_tensor_close(&a, &b, 0.25, 0));
    ((float *)a.data)[1] = NAN;
    ck_assert(!xf_tensor_close(&a, &b, 1, 1));
    xf_tensor_free(&a);
    xf_tensor_free(&b);
}
END_TEST

START_TEST(shape_broadcast_rules)
{
    xf_error err;
    int64_t da[3] = {2, 1, 3}, db[2] = {4, 1}, dc[2] = {4, 2};
    xf_shape a = xf_shape_make(3, da), b = xf_shape_make(2, db), c = xf_shape_make(2, dc), r;
    ck_assert_int_eq(xf_shape_broadcast(&a, &b, &r, &err), XF_OK);
    ck_assert_int_eq(r.rank, 3);
    ck_assert_int_eq(r.dims[0], 2);
    ck_assert_int_eq(r.dims[1], 4);
    ck_assert_int_eq(r.dims[2], 3);
    ck_assert_int_eq(xf_shape_broadcast(&a, &c, &r, &err), XF_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(err.msg, "[2,1,3]"));
    char buf[64];
    ck_assert_str_eq(xf_shape_str(&a, buf, sizeof buf), "[2,1,3]");
    int64_t st[3];
    xf_shape_strides(&a, st);
    ck_assert_int_eq(st[0], 3);
    ck_assert_int_eq(st[2], 1);
}
END_TEST

START_TEST(arena_and_errors)
{
    xf_arena a;
    xf_arena_init(&a, 64);
    char *p = xf_arena_alloc(&a, 10);
    char *q = xf_arena_alloc(&a, 1000); /* larger than a block */
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_int_eq(((uintptr_t)q) % 16, 0);
    ck_assert_str_eq(xf_arena_strdup(&a, "conv"), "conv");
    ck_assert_uint_ge(a.bytes_used, 1010);
    xf_arena_free(&a);
    ck_assert_uint_eq(a.bytes_used, 0);

    xf_error err;
    ck_assert_int_eq(XF_FAIL(&err, XF_ERR_IO, "cannot open %s", "m.onnx"), XF_ERR_IO);
    xf_error_prefix(&err, "xfonnx");
    ck_assert_str_eq(err.msg, "xfonnx: cannot open m.onnx");
    ck_assert_int_eq(XF_FAIL(NULL, XF_ERR_IO, "ignored"), XF_ERR_IO);
    ck_assert_str_eq(xf_op_get(XF_OP_CONV)->onnx_name, "Conv");
    ck_assert_int_eq(xf_op_from_name("matmul"), XF_OP_MATMUL);
    ck_assert_int_eq(xf_op_from_name("nope"), XF_OP_COUNT);
}
END_TEST

START_TEST(rng_is_reproducible)
{
    xf_rng a, b;
    xf_rng_seed(&a, 42);
    xf_rng_seed(&b, 42);
    double sum = 0, sq = 0;
    for (int i = 0; i < 10000; i++) {
        ck_assert_uint_eq(xf_rng_next(&a), xf_rng_next(&b));
        float z = xf_rng_normal(&a);
        xf_rng_normal(&b);
        sum += z;
        sq += (double)z * z;
    }
    ck_assert_double_lt(fabs(sum / 10000), 0.05);
    ck_assert_double_lt(fabs(sq / 10000 - 1.0), 0.05);
    for (int i = 0; i < 1000; i++) {
        float u = xf_rng_uniform(&a, -2, 3);
        ck_assert(u >= -2 && u < 3);
    }
}
END_TEST

/* The liveness pass on a graph worked by hand: x [4,8] (128 B), w [8,16]
 * (512 B, a weight); a = x@w, b = relu(a), c = tanh(x), d = sigmoid(b)
 * (output), e = relu(c) (output); a and b and d 256 B, c and e 128 B.
 * Live after each step: x+a 384, x+a+b 640 (a freed: 384), x+b+c 512 (x
 * freed: 384), b+c+d 640 (b freed: 384), c+d+e 512. Peak 640, first at
 * relu(a); run in another node order (d before c) the same. */
START_TEST(memory_use_by_hand)
{
    xf_graph g;
    xf_error err;
    xf_graph_init(&g);
    xf_shape sx = sh2(4, 8), sw = sh2(8, 16);
    float w[128] = {0};
    int x = xf_graph_add_input(&g, "x", XF_F32, &sx, &err);
    int cw = xf_graph_add_const(&g, "w", XF_F32, &sw, w, &err);
    int in[2] = {x, cw};
    int a = xf_graph_op(&g, XF_OP_MATMUL, NULL, in, 2, &err);
    int b = xf_graph_op(&g, XF_OP_RELU, NULL, &a, 1, &err);
    int c = xf_graph_op(&g, XF_OP_TANH, NULL, &x, 1, &err);
    int d = xf_graph_op(&g, XF_OP_SIGMOID, NULL, &b, 1, &err);
    int e = xf_graph_op(&g, XF_OP_RELU, NULL, &c, 1, &err);
    ck_assert_int_ge(e, 0);
    ck_assert_int_eq(xf_graph_mark_output(&g, d, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&g, e, &err), XF_OK);
    xf_graph_memory m;
    ck_assert_int_eq(xf_graph_memory_use(&g, &m, &err), XF_OK);
    ck_assert_uint_eq(m.weight_bytes, 512);
    ck_assert_uint_eq(m.peak_activation_bytes, 640);
    ck_assert_int_eq(m.peak_node, 1);
    /* the graph's inputs alone when there is no node */
    xf_graph h;
    xf_graph_init(&h);
    int y = xf_graph_add_input(&h, "y", XF_F32, &sw, &err);
    ck_assert_int_eq(xf_graph_mark_output(&h, y, &err), XF_OK);
    ck_assert_int_eq(xf_graph_memory_use(&h, &m, &err), XF_OK);
    ck_assert_uint_eq(m.peak_activation_bytes, 512);
    ck_assert_uint_eq(m.weight_bytes, 0);
    ck_assert_int_eq(m.peak_node, -1);
    /* a graph output read by a later node stays alive to the end: x@w as
     * an output too keeps a's 256 B: 384, 640, 768, 896, 768 */
    ck_assert_int_eq(xf_graph_mark_output(&g, a, &err), XF_OK);
    ck_assert_int_eq(xf_graph_memory_use(&g, &m, &err), XF_OK);
    ck_assert_uint_eq(m.peak_activation_bytes, 896);
    ck_assert_int_eq(m.peak_node, 3);
    xf_graph_free(&h);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("graph");
    TCase *t = tcase_create("core");
    tcase_add_test(t, builder_infers_shapes);
    tcase_add_test(t, builder_rejects_bad_shapes);
    tcase_add_test(t, shape_check_bounds_elements_and_bytes);
    tcase_add_test(t, builders_refuse_overflowing_shapes);
    tcase_add_test(t, memory_limit_refuses_before_allocating);
    tcase_add_test(t, empty_outputs_are_not_computed);
    tcase_add_test(t, validate_finds_cycle_and_drift);
    tcase_add_test(t, topo_order_is_deterministic);
    tcase_add_test(t, memory_use_by_hand);
    tcase_add_test(t, hash_ignores_names_and_order);
    tcase_add_test(t, hash_distinguishes_operand_order);
    tcase_add_test(t, hash_identity_mode_reads_pointers_not_contents);
    tcase_add_test(t, canonical_order_ignores_node_order);
    tcase_add_test(t, text_format_parses_back);
    tcase_add_test(t, text_format_parse_errors_say_where);
    tcase_add_test(t, params_canonical_on_add);
    tcase_add_test(t, clone_is_deep_and_equal);
    tcase_add_test(t, clone_block_holds_names_and_node_arrays);
    tcase_add_test(t, packed_graph_comes_back_byte_for_byte);
    tcase_add_test(t, interpreter_runs_mlp);
    tcase_add_test(t, interpreter_refuses_opaque);
    tcase_add_test(t, tensor_compare_reports_errors);
    tcase_add_test(t, shape_broadcast_rules);
    tcase_add_test(t, arena_and_errors);
    tcase_add_test(t, rng_is_reproducible);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
