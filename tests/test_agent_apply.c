/*
 * test_agent_apply.c — xf_match_apply (agent/): hand-written rules applied
 * to hand-built graphs. Two matmuls sharing an input merge into
 * matmul + concat + split with split sizes re-derived at the bound shapes;
 * relu(conv) fuses into a conv with a fused relu; transpose(transpose(x))
 * collapses to its bare input (uses and graph outputs redirected to a graph
 * input). Each result validates, keeps unrelated dead code, names its new
 * nodes uniquely, shares (never copies or frees) the original's constants
 * and computes what the original computes. Applying the reverse rule at the
 * corresponding location (the merged split's halves) restores xf_graph_hash_mode(XF_HASH_IDENTITY) of the original. A
 * bad match, or one whose rewrite would close a cycle, fails with a message
 * and leaves the output empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "testutil.h"

/* ---------------------------------------------------------------- helpers */

static int op1(xf_graph *g, xf_op op, const xf_params *p, const int *in, int n, const char *name)
{
    xf_error err;
    int idx = xf_graph_add_node(g, op, p, in, n, 1, name, &err);
    ck_assert_msg(idx >= 0, "%s", err.msg);
    return g->nodes[idx].outputs[0];
}

static xf_params conv3(int act)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 1;
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    p.group = 1;
    p.activation = act;
    return p;
}

static xf_params axis_p(int axis)
{
    xf_params p = xf_params_default();
    p.axis = axis;
    return p;
}

static xf_params perm10(void)
{
    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    p.axes[1] = 0;
    return p;
}


/* Every constant of b that a also has shares a's data pointer and is borrowed. */
static void expect_shared_constants(const xf_graph *a, const xf_graph *b)
{
    for (int v = 0; v < b->n_values; v++) {
        const xf_value *bv = &b->values[v];
        if (bv->kind != XF_VALUE_CONST) continue;
        int found = 0;
        for (int u = 0; u < a->n_values; u++)
            found |= a->values[u].kind == XF_VALUE_CONST && a->values[u].data == bv->data;
        ck_assert_msg(found, "constant '%s' was copied", bv->name ? bv->name : "?");
        ck_assert_int_eq(bv->borrowed, 1);
    }
}

static void expect_unique_names(const xf_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < i; j++)
            if (g->nodes[i].name && g->nodes[j].name)
                ck_assert_msg(strcmp(g->nodes[i].name, g->nodes[j].name) != 0,
                              "two nodes named '%s'", g->nodes[i].name);
}

/* The first location of rule r in g (a symmetric rule may match twice). */
static xf_match first_match(const xf_ruleset *rs, int r, const xf_graph *g, xf_graph_index *ix)
{
    xf_match m[4];
    int n = 0;
    xf_error err;
    ck_assert_msg(xf_match_rule(rs, r, g, ix, m, 4, &n, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_ge(n, 1);
    return m[0];
}

/* Applies the first location of rule r to g into *res, validated. */
static void apply_first(const xf_ruleset *rs, int r, const xf_graph *g, xf_graph *res)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_int_eq(xf_graph_index_build(g, &ix, &err), XF_OK);
    xf_match m = first_match(rs, r, g, ix);
    ck_assert_msg(xf_match_apply(rs, g, ix, &m, res, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(res, &err) == XF_OK, "%s", err.msg);
    xf_graph_index_free(ix);
}

/* Index of the rule with database id `id` in rs. */
static int rule_with_id(const xf_ruleset *rs, int64_t id)
{
    for (int i = 0; i < xf_ruleset_count(rs); i++)
        if (xf_ruleset_rule_id(rs, i) == id) return i;
    ck_abort_msg("no rule with id %lld", (long long)id);
    return -1;
}

/* ------------------------------------------------------------------ rules */

/* matmul(x0, m0), matmul(x0, m1) => split(matmul(x0, concat(m0, m1))) */
static void rule_merge_matmul(xf_rule *r)
{
    xf_rule_init(r);
    int64_t d[2] = {4, 4};
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        int x = xf_test_input(g, "x0", 2, d), a = xf_test_input(g, "m0", 2, d),
            b = xf_test_input(g, "m1", 2, d);
        if (!side) {
            int i1[2] = {x, a}, i2[2] = {x, b};
            xf_test_out(g, op1(g, XF_OP_MATMUL, NULL, i1, 2, NULL));
            xf_test_out(g, op1(g, XF_OP_MATMUL, NULL, i2, 2, NULL));
        } else {
            xf_params pc = axis_p(1);
            int ci[2] = {a, b};
            int c = op1(g, XF_OP_CONCAT, &pc, ci, 2, NULL);
            int mi[2] = {x, c};
            int mm = op1(g, XF_OP_MATMUL, NULL, mi, 2, NULL);
            xf_params ps = axis_p(1);
            ps.n_split = 2;
            ps.split[0] = ps.split[1] = 4;
            xf_error err;
            int s = xf_graph_add_node(g, XF_OP_SPLIT, &ps, &mm, 1, 2, NULL, &err);
            ck_assert_msg(s >= 0, "%s", err.msg);
            xf_test_out(g, g->nodes[s].outputs[0]);
            xf_test_out(g, g->nodes[s].outputs[1]);
        }
    }
}

/* relu(conv2d(x0, w0)) => conv2d[relu](x0, w0) */
static void rule_conv_relu(xf_rule *r)
{
    xf_rule_init(r);
    int64_t xd[4] = {2, 4, 4, 4}, wd[4] = {4, 4, 3, 3};
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        int x = xf_test_input(g, "x0", 4, xd), w = xf_test_input(g, "w0", 4, wd);
        int ci[2] = {x, w};
        if (!side) {
            xf_params p = conv3(XF_ACT_NONE);
            int c = op1(g, XF_OP_CONV, &p, ci, 2, NULL);
            xf_test_out(g, op1(g, XF_OP_RELU, NULL, &c, 1, NULL));
        } else {
            xf_params p = conv3(XF_ACT_RELU);
            xf_test_out(g, op1(g, XF_OP_CONV, &p, ci, 2, NULL));
        }
    }
}

/* transpose(transpose(m0)) => m0 */
static void rule_double_transpose(xf_rule *r)
{
    xf_rule_init(r);
    int64_t d[2] = {4, 4};
    int x = xf_test_input(&r->src, "m0", 2, d);
    xf_params p = perm10();
    int t1 = op1(&r->src, XF_OP_TRANSPOSE, &p, &x, 1, NULL);
    xf_test_out(&r->src, op1(&r->src, XF_OP_TRANSPOSE, &p, &t1, 1, NULL));
    xf_test_out(&r->dst, xf_test_input(&r->dst, "m0", 2, d));
}

/* A rule set over the three rules (ids 1, 2, 3), with reverses (-1, -2). */
static xf_ruleset *make_rules(void)
{
    xf_rule rules[3];
    rule_merge_matmul(&rules[0]);
    rule_conv_relu(&rules[1]);
    rule_double_transpose(&rules[2]);
    int64_t ids[3] = {1, 2, 3};
    xf_ruleset_options opt = xf_ruleset_options_default();
    opt.both_directions = 1;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(rules, ids, 3, &opt, &rs, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < 3; i++) xf_rule_free(&rules[i]);
    return rs;
}

/* ------------------------------------------------------------------ graphs */

/* x[8,16] @ w1[16,32] -> relu -> out0, x @ w2[16,w2_cols] -> out1, plus an
 * unrelated dead sigmoid(x). */
static void graph_matmuls_of_widths(xf_graph *g, int64_t w2_cols)
{
    xf_graph_init(g);
    int64_t xd[2] = {8, 16}, w1d[2] = {16, 32}, w2d[2] = {16, w2_cols};
    int x = xf_test_input(g, "x", 2, xd);
    int w1 = xf_test_weight(g, "w1", 2, w1d, 1), w2 = xf_test_weight(g, "w2", 2, w2d, 2);
    int i1[2] = {x, w1}, i2[2] = {x, w2};
    int y1 = op1(g, XF_OP_MATMUL, NULL, i1, 2, "mm1");
    int y2 = op1(g, XF_OP_MATMUL, NULL, i2, 2, "mm2");
    op1(g, XF_OP_SIGMOID, NULL, &x, 1, "dead");
    xf_test_out(g, op1(g, XF_OP_RELU, NULL, &y1, 1, "act"));
    xf_test_out(g, y2);
}

/* w2[16,24]: the merged split cuts 32/24 */
static void graph_two_matmuls(xf_graph *g) { graph_matmuls_of_widths(g, 24); }

/* The same with w2[16,32]: the merged split's halves, where its reverse
 * matches (its target replaces the split by two matmuls, so it cuts as the
 * rule's: match/pattern.c, mark_free_cuts). */
static void graph_two_equal_matmuls(xf_graph *g) { graph_matmuls_of_widths(g, 32); }

/* relu(conv(x[1,4,8,8], w[8,4,3,3])) -> tanh -> out */
static void graph_conv_relu(xf_graph *g)
{
    xf_graph_init(g);
    int64_t xd[4] = {1, 4, 8, 8}, wd[4] = {8, 4, 3, 3};
    int x = xf_test_input(g, "x", 4, xd);
    int w = xf_test_weight(g, "w", 4, wd, 3);
    xf_params p = conv3(XF_ACT_NONE);
    int ci[2] = {x, w};
    int c = op1(g, XF_OP_CONV, &p, ci, 2, "conv");
    int r = op1(g, XF_OP_RELU, NULL, &c, 1, "relu");
    xf_test_out(g, op1(g, XF_OP_TANH, NULL, &r, 1, "tanh"));
}

/* x[3,5] -> t -> t -> relu -> out0, and the double transpose -> tanh -> out1
 * (the matcher refuses to turn a graph output into a bare input) */
static void graph_double_transpose(xf_graph *g)
{
    xf_graph_init(g);
    int64_t xd[2] = {3, 5};
    int x = xf_test_input(g, "x", 2, xd);
    xf_params p = perm10();
    int t1 = op1(g, XF_OP_TRANSPOSE, &p, &x, 1, "t1");
    int t2 = op1(g, XF_OP_TRANSPOSE, &p, &t1, 1, "t2");
    xf_test_out(g, op1(g, XF_OP_RELU, NULL, &t2, 1, "relu"));
    xf_test_out(g, op1(g, XF_OP_TANH, NULL, &t2, 1, "tanh"));
}

/* ------------------------------------------------------------------ tests */

START_TEST(merge_matmuls)
{
    xf_ruleset *rs = make_rules();
    xf_graph g, res;
    graph_two_matmuls(&g);
    apply_first(rs, rule_with_id(rs, 1), &g, &res);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_MATMUL), 1);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_CONCAT), 1);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_SPLIT), 1);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_SIGMOID), 1); /* unrelated dead code stays */
    ck_assert_int_eq(res.n_nodes, 5);
    for (int i = 0; i < res.n_nodes; i++)
        if (res.nodes[i].op == XF_OP_SPLIT) { /* sizes follow the bound shapes */
            ck_assert_int_eq(res.nodes[i].params.n_split, 2);
            ck_assert_int_eq(res.nodes[i].params.split[0], 32);
            ck_assert_int_eq(res.nodes[i].params.split[1], 24);
            ck_assert_ptr_nonnull(strstr(res.nodes[i].name, "rule1_"));
        }
    expect_unique_names(&res);
    expect_shared_constants(&g, &res);
    xf_test_expect_same_function(&g, &res, 5, 1e-5);
    xf_graph_free(&res);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

START_TEST(fuse_conv_relu)
{
    xf_ruleset *rs = make_rules();
    xf_graph g, res;
    graph_conv_relu(&g);
    apply_first(rs, rule_with_id(rs, 2), &g, &res);
    ck_assert_int_eq(res.n_nodes, 2);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_RELU), 0);
    for (int i = 0; i < res.n_nodes; i++)
        if (res.nodes[i].op == XF_OP_CONV)
            ck_assert_int_eq(res.nodes[i].params.activation, XF_ACT_RELU);
    expect_shared_constants(&g, &res);
    xf_test_expect_same_function(&g, &res, 5, 1e-5);
    xf_graph_free(&res);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* Names of g's outputs, in order, are want[0..n). */
static void expect_output_names(const xf_graph *g, const char *const *want, int n)
{
    ck_assert_int_eq(g->n_outputs, n);
    for (int i = 0; i < n; i++) {
        const char *got = g->values[g->outputs[i]].name;
        ck_assert_msg(got && strcmp(got, want[i]) == 0, "output %d is named '%s', not '%s'", i,
                      got ? got : "(none)", want[i]);
    }
}

/* A rewrite of the nodes that compute the graph outputs keeps their names
 * and order: both merged matmuls are outputs (y1, y2), the fused relu is
 * one (y); a rule whose target gives two outputs one value keeps both
 * names (an identity carries the second). */
START_TEST(output_names_survive_rewrites)
{
    xf_ruleset *rs = make_rules();
    xf_graph g, res, back;
    xf_graph_init(&g);
    int64_t xd[2] = {8, 16}, w1d[2] = {16, 32}, w2d[2] = {16, 32}; /* halves, to come back */
    int x = xf_test_input(&g, "x", 2, xd);
    int w1 = xf_test_weight(&g, "w1", 2, w1d, 1), w2 = xf_test_weight(&g, "w2", 2, w2d, 2);
    int i1[2] = {x, w1}, i2[2] = {x, w2};
    int y2 = op1(&g, XF_OP_MATMUL, NULL, i2, 2, "y2");
    int y1 = op1(&g, XF_OP_MATMUL, NULL, i1, 2, "y1");
    xf_test_out(&g, y2); /* in the other order than the rule's outputs */
    xf_test_out(&g, y1);
    const char *want[2] = {"y2:0", "y1:0"};
    for (int i = 0; i < 2; i++) want[i] = g.values[g.outputs[i]].name;
    apply_first(rs, rule_with_id(rs, 1), &g, &res);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_SPLIT), 1);
    expect_output_names(&res, want, 2);
    expect_unique_names(&res);
    xf_test_expect_same_function(&g, &res, 5, 1e-5);
    apply_first(rs, rule_with_id(rs, -1), &res, &back); /* and back */
    expect_output_names(&back, want, 2);
    xf_test_expect_same_function(&g, &back, 5, 1e-5);
    xf_graph_free(&back);
    xf_graph_free(&res);
    xf_graph_free(&g);

    xf_graph_init(&g);
    int64_t cd[4] = {1, 4, 8, 8}, wd[4] = {8, 4, 3, 3};
    x = xf_test_input(&g, "x", 4, cd);
    int w = xf_test_weight(&g, "w", 4, wd, 3);
    xf_params p = conv3(XF_ACT_NONE);
    int ci[2] = {x, w};
    int c = op1(&g, XF_OP_CONV, &p, ci, 2, "conv");
    xf_test_out(&g, op1(&g, XF_OP_RELU, NULL, &c, 1, "y")); /* the last node */
    const char *one[1] = {g.values[g.outputs[0]].name};
    apply_first(rs, rule_with_id(rs, 2), &g, &res);
    ck_assert_int_eq(res.n_nodes, 1);
    expect_output_names(&res, one, 1);
    xf_graph_free(&res);
    xf_graph_free(&g);
    xf_ruleset_free(rs);

    /* ewadd(a, b), ewadd(b, a) => ewadd(a, b), ewadd(a, b): one value for
     * two outputs */
    xf_rule r;
    xf_rule_init(&r);
    int64_t d[2] = {2, 3};
    for (int side = 0; side < 2; side++) {
        xf_graph *s = side ? &r.dst : &r.src;
        int a = xf_test_input(s, "a", 2, d), b = xf_test_input(s, "b", 2, d);
        int ab = xf_test_op2(s, XF_OP_ADD, NULL, a, b);
        xf_test_out(s, ab);
        xf_test_out(s, side ? ab : xf_test_op2(s, XF_OP_ADD, NULL, b, a));
    }
    int64_t id = 9;
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(&r, &id, 1, &o, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_graph_init(&g);
    int a = xf_test_input(&g, "a", 2, d), b = xf_test_input(&g, "b", 2, d);
    xf_test_out(&g, op1(&g, XF_OP_ADD, NULL, (int[]){a, b}, 2, "p"));
    xf_test_out(&g, op1(&g, XF_OP_ADD, NULL, (int[]){b, a}, 2, "q"));
    const char *two[2] = {g.values[g.outputs[0]].name, g.values[g.outputs[1]].name};
    apply_first(rs, 0, &g, &res);
    expect_output_names(&res, two, 2);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_IDENTITY), 1);
    xf_test_expect_same_function(&g, &res, 5, 0);
    xf_graph_free(&res);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

START_TEST(bare_input_target)
{
    xf_ruleset *rs = make_rules();
    xf_graph g, res;
    graph_double_transpose(&g);
    apply_first(rs, rule_with_id(rs, 3), &g, &res);
    ck_assert_int_eq(res.n_nodes, 2);
    ck_assert_int_eq(xf_test_count_op(&res, XF_OP_TRANSPOSE), 0);
    for (int i = 0; i < 2; i++) /* both users now read the graph input itself */
        ck_assert_int_eq(res.nodes[i].inputs[0], res.inputs[0]);
    ck_assert_int_eq(res.n_values, 3);
    xf_test_expect_same_function(&g, &res, 5, 0);
    xf_graph_free(&res);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

START_TEST(reverse_restores_hash)
{
    xf_ruleset *rs = make_rules();
    void (*build[2])(xf_graph *) = {graph_two_equal_matmuls, graph_conv_relu};
    int64_t id[2] = {1, 2};
    for (int k = 0; k < 2; k++) {
        xf_graph g, fwd, back;
        build[k](&g);
        uint64_t h0 = xf_graph_hash_mode(&g, XF_HASH_IDENTITY);
        apply_first(rs, rule_with_id(rs, id[k]), &g, &fwd);
        ck_assert_uint_ne(xf_graph_hash_mode(&fwd, XF_HASH_IDENTITY), h0);
        apply_first(rs, rule_with_id(rs, -id[k]), &fwd, &back);
        ck_assert_uint_eq(xf_graph_hash_mode(&back, XF_HASH_IDENTITY), h0);
        ck_assert_int_eq(back.n_nodes, g.n_nodes);
        expect_unique_names(&back);
        expect_shared_constants(&g, &back);
        xf_test_expect_same_function(&g, &back, 5, 1e-5);
        /* forward again: one of its locations gives the first result back,
         * and names stay unique along the sequence */
        xf_graph_index *ix = NULL;
        xf_match m[4];
        int n = 0, same = 0;
        xf_error err;
        ck_assert_int_eq(xf_graph_index_build(&back, &ix, &err), XF_OK);
        int r = rule_with_id(rs, id[k]);
        ck_assert_int_eq(xf_match_rule(rs, r, &back, ix, m, 4, &n, &err), XF_OK);
        for (int i = 0; i < n && i < 4; i++) {
            xf_graph again;
            ck_assert_msg(xf_match_apply(rs, &back, ix, &m[i], &again, &err) == XF_OK, "%s",
                          err.msg);
            expect_unique_names(&again);
            same |= xf_graph_hash_mode(&again, XF_HASH_IDENTITY) == xf_graph_hash_mode(&fwd, XF_HASH_IDENTITY);
            xf_graph_free(&again);
        }
        ck_assert_msg(same, "no location of rule %lld reproduces the first rewrite",
                      (long long)id[k]);
        xf_graph_index_free(ix);
        xf_graph_free(&back);
        xf_graph_free(&fwd);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
}
END_TEST

START_TEST(bad_match_fails_cleanly)
{
    xf_ruleset *rs = make_rules();
    xf_graph g, res;
    xf_error err;
    graph_conv_relu(&g);
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    int r = rule_with_id(rs, 2);
    xf_match m = first_match(rs, r, &g, ix);
    xf_match bad = m;
    bad.rule = xf_ruleset_count(rs) + 3;
    ck_assert_int_eq(xf_match_apply(rs, &g, ix, &bad, &res, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "rule"));
    ck_assert_int_eq(res.n_nodes, 0);
    ck_assert_ptr_null(res.values);
    bad = m;
    bad.nodes[0] = g.n_nodes + 10;
    ck_assert_int_eq(xf_match_apply(rs, &g, ix, &bad, &res, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "does not exist"));
    ck_assert_int_eq(res.n_nodes, 0);
    /* g is untouched and the good match still applies */
    ck_assert_int_eq(g.n_nodes, 3);
    ck_assert_int_eq(xf_match_apply(rs, &g, ix, &m, &res, &err), XF_OK);
    ck_assert_int_eq(res.n_nodes, 2);
    xf_graph_free(&res);
    xf_graph_index_free(ix);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

START_TEST(cycle_is_refused)
{
    /* mm1 = x @ w1, z = relu(mm1), mm2 = x @ z: merging the two matmuls
     * would make concat(w1, z) depend on its own split. The matcher never
     * offers this location; apply, given it by hand, refuses it. */
    xf_ruleset *rs = make_rules();
    xf_graph g, res;
    xf_error err;
    xf_graph_init(&g);
    int64_t d[2] = {4, 4};
    int x = xf_test_input(&g, "x", 2, d);
    int w1 = xf_test_weight(&g, "w1", 2, d, 9);
    int i1[2] = {x, w1};
    int mm1 = op1(&g, XF_OP_MATMUL, NULL, i1, 2, "mm1");
    int z = op1(&g, XF_OP_RELU, NULL, &mm1, 1, "z");
    int i2[2] = {x, z};
    int mm2 = op1(&g, XF_OP_MATMUL, NULL, i2, 2, "mm2");
    xf_test_out(&g, mm2);
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    int r = rule_with_id(rs, 1);
    xf_match found[4];
    int n = -1;
    ck_assert_int_eq(xf_match_rule(rs, r, &g, ix, found, 4, &n, &err), XF_OK);
    ck_assert_int_eq(n, 0);
    xf_match m;
    memset(&m, 0, sizeof m);
    m.rule = r;
    m.n_nodes = 2;
    m.nodes[0] = g.values[mm1].producer;
    m.nodes[1] = g.values[mm2].producer;
    m.n_inputs = 3;
    m.inputs[0] = x;
    m.inputs[1] = w1;
    m.inputs[2] = z;
    m.n_outputs = 2;
    m.outputs[0] = mm1;
    m.outputs[1] = mm2;
    ck_assert_int_eq(xf_match_apply(rs, &g, ix, &m, &res, &err), XF_ERR_GRAPH);
    ck_assert_ptr_nonnull(strstr(err.msg, "cycle"));
    ck_assert_int_eq(res.n_nodes, 0);
    ck_assert_int_eq(g.n_nodes, 3);
    xf_graph_index_free(ix);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_apply");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, merge_matmuls);
    tcase_add_test(t, fuse_conv_relu);
    tcase_add_test(t, bare_input_target);
    tcase_add_test(t, reverse_restores_hash);
    tcase_add_test(t, output_names_survive_rewrites);
    tcase_add_test(t, bad_match_fails_cleanly);
    tcase_add_test(t, cycle_is_refused);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
