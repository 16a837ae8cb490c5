/*
 * test_agent_views.c — rules with reshapes in the matcher (issue 28): rules
 * found at 2x4x4 (an unflatten to lead dims 2x4, a split of the last axis
 * into 2 heads) apply at a model's sizes, their sizes bound at the match;
 * a chain of them computes a 3-D MLP on 2-D values (what ONNX Runtime runs
 * as Gemms) with the same outputs, moving the unflatten past a value read
 * twice one reader at a time and past an add whose operands are the other
 * way round from the rule's; a rule whose target reshape nothing binds
 * matches only its own sizes; with scalings kept, only view moves touch a
 * product by a scalar; a slice moving above attention's head merge or
 * split is a view move and its reverse is not; the closure makes its moves
 * in the order one-by-one look-ups would, matching per move only near what
 * the last move changed (its work per move does not grow with the graph);
 * a learning agent's step looks
 * ahead through the same moves; the look-ahead keeps an action that
 * unbatches a head alone where the moves after it cost more, for the
 * searches and the agents alike.
 */
#include <stdio.h>
#include <string.h>

#include "agent/rl/rl.h"
#include "agent_fixture.h"
#include "testutil.h"

static xf_shape shp(int rank, int64_t a, int64_t b, int64_t c)
{
    int64_t d[3] = {a, b, c};
    return xf_shape_make(rank, d);
}

typedef struct sides {
    int s[3], d[3];
} sides;

static sides rule_inputs(xf_rule *r, int n, const xf_shape *sh)
{
    sides io;
    xf_error err;
    const char *names[3] = {"a", "b", "c"};
    xf_rule_init(r);
    for (int i = 0; i < n; i++) {
        io.s[i] = xf_graph_add_input(&r->src, names[i], XF_F32, &sh[i], &err);
        io.d[i] = xf_graph_add_input(&r->dst, names[i], XF_F32, &sh[i], &err);
    }
    return io;
}

static void rule_outputs(xf_rule *r, int s, int d)
{
    xf_error err;
    ck_assert_int_eq(xf_graph_mark_output(&r->src, s, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&r->dst, d, &err), XF_OK);
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

/* 1: matmul(x, w) => unflatten(matmul(flatten(x), w)) */
static void rule_intro(xf_rule *r)
{
    xf_shape sh[2] = {shp(3, 2, 4, 4), shp(2, 4, 4, 0)};
    sides io = rule_inputs(r, 2, sh);
    int s = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, io.s[0], io.s[1]);
    int f = xf_test_reshape(&r->dst, io.d[0], shp(2, 8, 4, 0));
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, f, io.d[1]), shp(3, 2, 4, 4));
    rule_outputs(r, s, d);
}

/* 2: ewadd(unflatten(a), b) => unflatten(ewadd(a, b)), b a bias [4] */
static void rule_bias(xf_rule *r)
{
    xf_shape sh[2] = {shp(2, 8, 4, 0), shp(1, 4, 0, 0)};
    sides io = rule_inputs(r, 2, sh);
    int s = xf_test_op2(&r->src, XF_OP_ADD, NULL, xf_test_reshape(&r->src, io.s[0], shp(3, 2, 4, 4)), io.s[1]);
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, io.d[0], io.d[1]), shp(3, 2, 4, 4));
    rule_outputs(r, s, d);
}

/* 3: relu(unflatten(a)) => unflatten(relu(a)) */
static void rule_relu(xf_rule *r)
{
    xf_shape sh[1] = {shp(2, 8, 4, 0)};
    sides io = rule_inputs(r, 1, sh);
    int s = xf_test_op2(&r->src, XF_OP_RELU, NULL, xf_test_reshape(&r->src, io.s[0], shp(3, 2, 4, 4)), -1);
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_RELU, NULL, io.d[0], -1), shp(3, 2, 4, 4));
    rule_outputs(r, s, d);
}

/* 4: matmul(unflatten(a), w) => unflatten(matmul(a, w)) */
static void rule_matmul(xf_rule *r)
{
    xf_shape sh[2] = {shp(2, 8, 4, 0), shp(2, 4, 4, 0)};
    sides io = rule_inputs(r, 2, sh);
    int s = xf_test_op2(&r->src, XF_OP_MATMUL, NULL, xf_test_reshape(&r->src, io.s[0], shp(3, 2, 4, 4)), io.s[1]);
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, io.d[0], io.d[1]), shp(3, 2, 4, 4));
    rule_outputs(r, s, d);
}

/* The model: y = relu(x W1 + b1); outputs y W2 + b2 and y itself (y read
 * twice), x [4, 16, 8]. */
static void mlp(xf_graph *g, uint64_t seed)
{
    xf_error err;
    xf_graph_init(g);
    xf_shape xs = shp(3, 4, 16, 8);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8}, bd[1] = {8};
    int w1 = xf_test_weight(g, "w1", 2, wd, seed), w2 = xf_test_weight(g, "w2", 2, wd, seed + 1);
    int b1 = xf_test_weight(g, "b1", 1, bd, seed + 2), b2 = xf_test_weight(g, "b2", 1, bd, seed + 3);
    /* the first bias is added first, as exporters write it: the bias rule
     * (written with the bias second) binds the add's operands either way */
    int y = xf_test_op2(g, XF_OP_RELU, NULL, xf_test_op2(g, XF_OP_ADD, NULL, b1, xf_test_op2(g, XF_OP_MATMUL, NULL, x, w1)), -1);
    xf_test_out(g, xf_test_op2(g, XF_OP_ADD, NULL, xf_test_op2(g, XF_OP_MATMUL, NULL, y, w2), b2));
    xf_test_out(g, y);
}

static xf_ruleset *view_rules(void)
{
    xf_rule r[4];
    rule_intro(&r[0]);
    rule_bias(&r[1]);
    rule_relu(&r[2]);
    rule_matmul(&r[3]);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 4, &o, &rs, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_ruleset_count(rs), 4);
    for (int i = 0; i < 4; i++) xf_rule_free(&r[i]);
    return rs;
}

/* Applies the first location of action `rule` in *g; 0 when there is none. */
static int step(const xf_ruleset *rs, int rule, xf_graph *g)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_int_eq(xf_graph_index_build(g, &ix, &err), XF_OK);
    xf_match m[8];
    int n = 0;
    ck_assert_int_eq(xf_match_rule(rs, rule, g, ix, m, 8, &n, &err), XF_OK);
    if (n > 0) { /* the result borrows g's constants: keep a copy of its own */
        xf_graph next, own;
        ck_assert_msg(xf_match_apply(rs, g, ix, &m[0], &next, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_graph_clone(&next, &own, &err), XF_OK);
        xf_graph_free(&next);
        xf_graph_free(g);
        *g = own;
    }
    xf_graph_index_free(ix);
    return n > 0;
}

static int count_rank(const xf_graph *g, xf_op o, int rank)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == o && g->values[g->nodes[i].inputs[0]].shape.rank == rank) n++;
    return n;
}

START_TEST(chain_makes_2d_layout)
{
    xf_ruleset *rs = view_rules();
    xf_graph model, g;
    mlp(&model, 7);
    xf_error err;
    ck_assert_int_eq(xf_graph_clone(&model, &g, &err), XF_OK);
    /* the intro rule binds at [4,16,8] and unflattens to [4,16,8] */
    ck_assert(step(rs, 0, &g));
    ck_assert_int_eq(count_rank(&g, XF_OP_MATMUL, 2), 1);
    ck_assert(step(rs, 1, &g)); /* past the bias */
    ck_assert(step(rs, 2, &g)); /* past relu */
    /* relu's result is read by the second matmul and is a graph output: the
     * unflatten stays for the output while the matmul takes the 2-D value */
    ck_assert(step(rs, 3, &g));
    ck_assert(step(rs, 1, &g));
    ck_assert_int_eq(count_rank(&g, XF_OP_MATMUL, 2), 2);
    ck_assert_int_eq(count_rank(&g, XF_OP_MATMUL, 3), 0);
    ck_assert_int_eq(count_rank(&g, XF_OP_ADD, 2), 2);
    ck_assert_msg(xf_graph_validate(&g, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&model, &g, 3, 1e-5);
    /* nothing moves any more except the intro, which finds no 3-D matmul */
    ck_assert(!step(rs, 0, &g));
    ck_assert(!step(rs, 3, &g));
    xf_graph_free(&g);
    xf_graph_free(&model);
    xf_ruleset_free(rs);
}
END_TEST

/* An unflatten whose lead dims disagree with the value it is added to is
 * not the bias rule's location; a reshape of another kind is not either. */
START_TEST(sizes_must_agree)
{
    xf_ruleset *rs = view_rules();
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    xf_shape as = shp(2, 12, 8, 0);
    int a = xf_graph_add_input(&g, "a", XF_F32, &as, &err);
    const int64_t bd[1] = {8};
    int b = xf_test_weight(&g, "b", 1, bd, 1);
    int u = xf_test_reshape(&g, a, shp(3, 3, 4, 8));
    xf_test_out(&g, xf_test_op2(&g, XF_OP_ADD, NULL, u, b));
    int g2 = xf_test_reshape(&g, a, shp(3, 12, 2, 4)); /* splits the last axis: not an unflatten */
    xf_test_out(&g, xf_test_op2(&g, XF_OP_RELU, NULL, g2, -1));
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    xf_match m[4];
    int n = 0;
    ck_assert_int_eq(xf_match_rule(rs, 1, &g, ix, m, 4, &n, &err), XF_OK);
    ck_assert_int_eq(n, 1); /* lead dims 3x4, bound at the match */
    xf_match_target t;
    ck_assert_int_eq(xf_match_instantiate(rs, &g, ix, &m[0], &t, &err), XF_OK);
    ck_assert_int_eq(t.op[1], XF_OP_RESHAPE);
    ck_assert_int_eq(t.params[1].n_shape, 3);
    ck_assert_int_eq(t.params[1].shape[0], 3);
    ck_assert_int_eq(t.params[1].shape[1], 4);
    ck_assert_int_eq(t.params[1].shape[2], 8);
    ck_assert_int_eq(xf_match_rule(rs, 2, &g, ix, m, 4, &n, &err), XF_OK);
    ck_assert_int_eq(n, 0); /* relu of a split of the last axis */
    xf_graph_index_free(ix);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* relu(x) => merge_last(split_last(relu(x))): nothing binds the target's
 * head count, so the rule is not size-polymorphic: its reshapes keep the
 * targets they were enumerated with ([2,4,2,2] and back), so it applies at
 * its own sizes only. Its reverse binds the head count from the source's
 * split: merging back what a split made is the identity at any size. */
static xf_ruleset *unbound_rules(void)
{
    xf_rule r;
    xf_shape sh[1] = {shp(3, 2, 4, 4)};
    sides io = rule_inputs(&r, 1, sh);
    int s = xf_test_op2(&r.src, XF_OP_RELU, NULL, io.s[0], -1);
    int sp = xf_test_reshape(&r.dst, xf_test_op2(&r.dst, XF_OP_RELU, NULL, io.d[0], -1), xf_shape_make(4, (int64_t[]){2, 4, 2, 2}));
    rule_outputs(&r, s, xf_test_reshape(&r.dst, sp, shp(3, 2, 4, 4)));
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 1;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(&r, NULL, 1, &o, &rs, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_ruleset_count(rs), 2);
    xf_rule_free(&r);
    return rs;
}

/* Locations of action a in a graph of relu over [lead, 4, last], whose relu
 * is then split into `heads` heads and merged back (heads 0: plain relu). */
static int locations(const xf_ruleset *rs, int a, int64_t lead, int64_t last, int64_t heads)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    xf_shape xs = shp(3, lead, 4, last);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
    int y = xf_test_op2(&g, XF_OP_RELU, NULL, x, -1);
    if (heads) y = xf_test_reshape(&g, xf_test_reshape(&g, y, xf_shape_make(4, (int64_t[]){lead, 4, heads, last / heads})), xs);
    xf_test_out(&g, y);
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    xf_match m[4];
    int n = 0;
    ck_assert_int_eq(xf_match_rule(rs, a, &g, ix, m, 4, &n, &err), XF_OK);
    if (n > 0) {
        xf_graph out;
        ck_assert_msg(xf_match_apply(rs, &g, ix, &m[0], &out, &err) == XF_OK, "%s", err.msg);
        xf_test_expect_same_function(&g, &out, 1, 0);
        xf_graph_free(&out);
    }
    xf_graph_index_free(ix);
    xf_graph_free(&g);
    return n;
}

START_TEST(unbound_size_matches_exactly)
{
    xf_ruleset *rs = unbound_rules();
    int fwd = xf_ruleset_rule_id(rs, 0) > 0 ? 0 : 1, rev = 1 - fwd;
    ck_assert_int_eq(locations(rs, fwd, 2, 4, 0), 1); /* the rule's own [2, 4, 4] */
    ck_assert_int_eq(locations(rs, fwd, 3, 4, 0), 0); /* its targets do not fit [3, 4, 4] */
    ck_assert_int_eq(locations(rs, rev, 2, 4, 2), 1);
    ck_assert_int_eq(locations(rs, rev, 2, 8, 4), 1); /* 4 heads, bound at the match */
    ck_assert_int_eq(locations(rs, rev, 3, 4, 2), 1);
    xf_ruleset_free(rs);
}
END_TEST

/* 5: unflatten(flatten(x)) => x */
static void rule_cancel(xf_rule *r)
{
    xf_shape sh[1] = {shp(3, 2, 4, 4)};
    sides io = rule_inputs(r, 1, sh);
    int s = xf_test_reshape(&r->src, xf_test_reshape(&r->src, io.s[0], shp(2, 8, 4, 0)), shp(3, 2, 4, 4));
    rule_outputs(r, s, io.d[0]);
}

/* 6: ewadd(unflatten(a), unflatten(b)) => unflatten(ewadd(a, b)) */
static void rule_sum(xf_rule *r)
{
    xf_shape sh[2] = {shp(2, 8, 4, 0), shp(2, 8, 4, 0)};
    sides io = rule_inputs(r, 2, sh);
    int s = xf_test_op2(&r->src, XF_OP_ADD, NULL, xf_test_reshape(&r->src, io.s[0], shp(3, 2, 4, 4)),
                        xf_test_reshape(&r->src, io.s[1], shp(3, 2, 4, 4)));
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, io.d[0], io.d[1]), shp(3, 2, 4, 4));
    rule_outputs(r, s, d);
}

/* The look-ahead's closure (closure.c): after the first matmul's flatten
 * and unflatten are brought in, the view moves alone take the whole block
 * to 2-D, through the residual add of the block's 3-D input (written
 * unflatten(flatten(x)) by the cancellation rule read backwards). */
START_TEST(closure_finishes_the_chain)
{
    xf_rule r[6];
    rule_intro(&r[0]);
    rule_bias(&r[1]);
    rule_relu(&r[2]);
    rule_matmul(&r[3]);
    rule_cancel(&r[4]);
    rule_sum(&r[5]);
    ck_assert(!xf_rule_is_view_move(&r[0])); /* brings views in */
    for (int i = 1; i < 6; i++) ck_assert_msg(xf_rule_is_view_move(&r[i]), "rule %d", i + 1);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 6, &o, &rs, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < 6; i++) xf_rule_free(&r[i]);
    uint8_t moves[6];
    for (int i = 0; i < 6; i++) moves[i] = (uint8_t)xf_rule_is_view_move(xf_ruleset_rule(rs, i));
    /* y = relu(x W1 + b1) W2 + b2 + x */
    xf_graph model, g, done;
    xf_graph_init(&model);
    xf_shape xs = shp(3, 4, 16, 8);
    int x = xf_graph_add_input(&model, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8}, bd[1] = {8};
    int w1 = xf_test_weight(&model, "w1", 2, wd, 1), w2 = xf_test_weight(&model, "w2", 2, wd, 2);
    int b1 = xf_test_weight(&model, "b1", 1, bd, 3), b2 = xf_test_weight(&model, "b2", 1, bd, 4);
    int h = xf_test_op2(&model, XF_OP_RELU, NULL,
                        xf_test_op2(&model, XF_OP_ADD, NULL, xf_test_op2(&model, XF_OP_MATMUL, NULL, x, w1), b1), -1);
    int y = xf_test_op2(&model, XF_OP_ADD, NULL, xf_test_op2(&model, XF_OP_MATMUL, NULL, h, w2), b2);
    xf_test_out(&model, xf_test_op2(&model, XF_OP_ADD, NULL, y, x));
    ck_assert_int_eq(xf_graph_clone(&model, &g, &err), XF_OK);
    ck_assert(step(rs, 0, &g));
    xf_closure_log log;
    ck_assert_msg(xf_closure_run(rs, moves, &g, 100, &done, &log, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(count_rank(&done, XF_OP_MATMUL, 3), 0);
    ck_assert_int_eq(count_rank(&done, XF_OP_ADD, 3), 0);
    int back = 0;
    for (int i = 0; i < log.n; i++) back += log.rule[i] == XF_ACTION_BACKWARD(4);
    ck_assert_int_eq(back, 1);
    xf_test_expect_same_function(&model, &done, 3, 1e-5);
    xf_graph_free(&done);
    xf_graph_free(&g);
    xf_graph_free(&model);
    xf_ruleset_free(rs);
}
END_TEST

/* The six chain rules (intro, bias, relu, matmul, cancel, sum) and the
 * block y = relu(x W1 + b1) W2 + b2 + x over x [4, 64, 32], in an
 * environment with ONNX Runtime's layout cost. */
typedef struct layout_case {
    xf_ruleset *rs;
    xf_graph model;
    xf_cost_model *cm;
    xf_env *e;
} layout_case;

static void layout_open(layout_case *c)
{
    xf_rule r[6];
    rule_intro(&r[0]);
    rule_bias(&r[1]);
    rule_relu(&r[2]);
    rule_matmul(&r[3]);
    rule_cancel(&r[4]);
    rule_sum(&r[5]);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_error err;
    c->rs = NULL;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 6, &o, &c->rs, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < 6; i++) xf_rule_free(&r[i]);
    xf_graph *m = &c->model;
    xf_graph_init(m);
    xf_shape xs = shp(3, 4, 64, 32);
    int x = xf_graph_add_input(m, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {32, 32}, bd[1] = {32};
    int w1 = xf_test_weight(m, "w1", 2, wd, 1), w2 = xf_test_weight(m, "w2", 2, wd, 2);
    int b1 = xf_test_weight(m, "b1", 1, bd, 3), b2 = xf_test_weight(m, "b2", 1, bd, 4);
    int h = xf_test_op2(m, XF_OP_RELU, NULL,
                        xf_test_op2(m, XF_OP_ADD, NULL, xf_test_op2(m, XF_OP_MATMUL, NULL, x, w1), b1), -1);
    int y = xf_test_op2(m, XF_OP_ADD, NULL, xf_test_op2(m, XF_OP_MATMUL, NULL, h, w2), b2);
    xf_test_out(m, xf_test_op2(m, XF_OP_ADD, NULL, y, x));
    c->cm = xf_fx_cost_model();
    xf_env_options eo = xf_env_options_default();
    eo.layout_view_ms = XF_ORT_VIEW_MS;
    eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    c->e = NULL;
    ck_assert_msg(xf_env_create(c->rs, c->cm, m, &eo, &c->e, &err) == XF_OK, "%s", err.msg);
}

/* g, a working graph of the case's environment, finished, computes the
 * block's function. */
static void layout_expect_same(layout_case *c, const xf_graph *g)
{
    xf_graph fin;
    xf_error err;
    ck_assert_msg(xf_agent_finish(g, &fin, NULL, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&c->model, &fin, 2, 1e-4);
    xf_graph_free(&fin);
}

static void layout_close(layout_case *c)
{
    xf_env_free(c->e);
    xf_cost_close(c->cm);
    xf_graph_free(&c->model);
    xf_ruleset_free(c->rs);
}

/* The same block through the environment and the TASO search with ONNX
 * Runtime's layout cost: with the look-ahead, the best graph runs every
 * matmul on 2-D values, and the rules applied on the path to it include the
 * cancellation read backwards. */
START_TEST(search_finds_the_layout)
{
    layout_case lc;
    layout_open(&lc);
    xf_env *e = lc.e;
    xf_error err;
    xf_search_options so = xf_search_options_default();
    so.budget = 20;
    xf_search_result res;
    xf_search_result_init(&res);
    ck_assert_msg(xf_search_run(e, XF_SEARCH_TASO, &so, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_lt(res.best_ms, res.initial_ms);
    ck_assert_int_eq(count_rank(&res.best, XF_OP_MATMUL, 3), 0);
    int back = 0;
    for (int i = 0; i < res.n_applied; i++) back += res.applied[i] == XF_ACTION_BACKWARD(4);
    ck_assert_int_eq(back, 1);
    layout_expect_same(&lc, &res.best);
    xf_search_result_free(&res);
    layout_close(&lc);
}
END_TEST

/* A learning agent's step (xf_agent_env_step, agent/rl) with the look-ahead:
 * the rule that brings a flatten and an unflatten in around the first
 * matmul is followed by the view moves' closure, so the environment holds
 * the block on 2-D values, the step's reward is the whole change, and the
 * run's path records the rule and then every move (the cancellation read
 * backwards among them); without it the step leaves one matmul 3-D. */
START_TEST(an_agent_step_looks_ahead_through_the_view_moves)
{
    layout_case lc;
    layout_open(&lc);
    xf_env *e = lc.e;
    xf_error err;
    for (int la = 0; la < 2; la++) {
        xf_search_result res;
        xf_search_result_init(&res);
        xf_agent_run run;
        ck_assert_msg(xf_agent_run_begin(&run, e, &res, NULL, &err) == XF_OK, "%s", err.msg);
        if (la) {
            ck_assert_msg(xf_agent_run_lookahead(&run, &err) == XF_OK, "%s", err.msg);
            ck_assert_ptr_nonnull(run.la.plan);
        }
        ck_assert(xf_env_xfer_mask(e)[0]);
        double init = xf_env_cost(e);
        xf_env_step_result sr;
        ck_assert_msg(xf_agent_env_step(&run, 0, 0, &sr, &err) == XF_OK, "%s", err.msg);
        ck_assert(sr.valid);
        ck_assert_double_eq_tol(sr.cost_ms, xf_env_cost(e), 1e-15);
        ck_assert_double_eq_tol(sr.reward, (init - sr.cost_ms) / init * 100.0, 1e-9);
        ck_assert_uint_eq(sr.hash, xf_env_hash(e));
        ck_assert_int_eq(count_rank(xf_env_graph(e), XF_OP_MATMUL, 3), la ? 0 : 1);
        int moves = run.moves.n;
        ck_assert_int_eq(moves > 0, la);
        ck_assert_msg(xf_agent_run_step(&run, 0, &sr, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(run.path_n, 1 + moves);
        ck_assert_int_eq(run.path[0], 0);
        int back = 0;
        for (int i = 1; i < run.path_n; i++) back += run.path[i] == XF_ACTION_BACKWARD(4);
        ck_assert_int_eq(back, la);
        if (la) { /* the 2-D block is the run's best, with every move on its path */
            ck_assert_double_lt(sr.cost_ms, init);
            ck_assert_int_eq(run.closures, 1);
            ck_assert_int_eq(run.moves_made, moves);
        }
        ck_assert_msg(xf_agent_run_end(&run, XF_OK, &err) == XF_OK, "%s", err.msg);
        if (la) {
            ck_assert_int_eq(res.n_applied, 1 + moves);
            ck_assert_int_eq(count_rank(&res.best, XF_OP_MATMUL, 3), 0);
            layout_expect_same(&lc, &res.best);
        }
        xf_search_result_free(&res);
    }
    layout_close(&lc);
}
END_TEST

/* GPT's scores as the proved unbatched-heads rule leaves them: q and k,
 * [1,S,H] parts, taken to heads by squeeze, unsqueeze and reshape to
 * [S,1,h,d] and transposes 1,2,0,3 and 1,2,3,0 (folded == 1), or by a
 * reshape to [1,S,h,d] and 0,2,1,3 and 0,2,3,1 as exported (folded == 0);
 * `relu` puts a relu between q's transpose and the matmul. */
static void heads_graph(xf_graph *g, int folded, int relu)
{
    xf_error err;
    xf_graph_init(g);
    xf_shape xs = shp(3, 1, 32, 128);
    int parts[2];
    for (int k = 0; k < 2; k++) {
        int x = xf_graph_add_input(g, k ? "k" : "q", XF_F32, &xs, &err);
        xf_params p = xf_params_default();
        p.n_axes = 4;
        if (folded) {
            xf_params sq = xf_params_default();
            sq.n_axes = 1;
            sq.axes[0] = 0;
            x = xf_test_op2(g, XF_OP_SQUEEZE, &sq, x, -1);
            sq.axes[0] = 1;
            x = xf_test_op2(g, XF_OP_UNSQUEEZE, &sq, x, -1);
            int64_t d[4] = {32, 1, 2, 64};
            x = xf_test_reshape(g, x, xf_shape_make(4, d));
            int64_t pq[4] = {1, 2, 0, 3}, pk[4] = {1, 2, 3, 0};
            memcpy(p.axes, k ? pk : pq, sizeof pq);
        } else {
            int64_t d[4] = {1, 32, 2, 64};
            x = xf_test_reshape(g, x, xf_shape_make(4, d));
            int64_t pq[4] = {0, 2, 1, 3}, pk[4] = {0, 2, 3, 1};
            memcpy(p.axes, k ? pk : pq, sizeof pq);
        }
        parts[k] = xf_test_op2(g, XF_OP_TRANSPOSE, &p, x, -1);
    }
    if (relu) parts[0] = xf_test_op2(g, XF_OP_RELU, NULL, parts[0], -1);
    xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, parts[0], parts[1]));
}

static double heads_cost(xf_costmemo *m, const xf_graph *g, int *free_transposes)
{
    xf_op_cost per[32];
    double total = xf_fx_graph_costs(m, g, per, 32);
    *free_transposes = 0;
    for (int i = 0; i < g->n_nodes; i++)
        *free_transposes += g->nodes[i].op == XF_OP_TRANSPOSE && per[i].ms == 0;
    return total;
}

/* With ONNX Runtime's layout costs the transposes it folds into its
 * FusedMatMul (perm 1,2,0,3 and 1,2,3,0 read by a matmul) cost nothing and
 * a view after a view costs no node (it merges them into one Reshape): the
 * unbatched heads cost less than the exported ones. Read by a relu, the
 * transpose costs what it did; without the layout costs nothing is free. */
START_TEST(ort_folds_unbatched_heads)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    xf_costmemo *m = NULL;
    ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
    xf_graph exported, folded, relu;
    heads_graph(&exported, 0, 0);
    heads_graph(&folded, 1, 0);
    heads_graph(&relu, 1, 1);
    int n_free = 0;
    heads_cost(m, &folded, &n_free);
    ck_assert_int_eq(n_free, 0);
    xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
    double c_exported = heads_cost(m, &exported, &n_free);
    ck_assert_int_eq(n_free, 0);
    double c_folded = heads_cost(m, &folded, &n_free);
    ck_assert_int_eq(n_free, 2);
    ck_assert_double_lt(c_folded, c_exported);
    heads_cost(m, &relu, &n_free);
    ck_assert_int_eq(n_free, 1); /* k's, still read by the matmul */
    xf_params p = xf_params_default();
    p.n_axes = 4;
    p.axes[0] = 1, p.axes[1] = 2, p.axes[2] = 0, p.axes[3] = 3;
    ck_assert(xf_ort_folds_transpose(&p, 4));
    ck_assert(xf_costmemo_may_fold(m, XF_OP_TRANSPOSE, &p, 4));
    p.axes[0] = 0, p.axes[1] = 2, p.axes[2] = 1, p.axes[3] = 3;
    ck_assert(!xf_ort_folds_transpose(&p, 4));
    xf_graph_free(&exported);
    xf_graph_free(&folded);
    xf_graph_free(&relu);
    xf_costmemo_free(m);
    xf_cost_close(cm);
}
END_TEST

/* The key's unbatched-head rule of docs/tools/unbatched.vocab read
 * backwards: transpose[1,2,3,0](reshape[4x1x2x2](unsqueeze[1](squeeze[0](u))))
 * => transpose[0,2,3,1](reshape[1x4x2x2](u)), u [1,4,4]. */
static void rule_heads_back(xf_rule *r)
{
    xf_shape u = shp(3, 1, 4, 4);
    sides io = rule_inputs(r, 1, &u);
    xf_params sq = xf_params_default(), t = xf_params_default();
    sq.n_axes = 1, sq.axes[0] = 0;
    int x = xf_test_op2(&r->src, XF_OP_SQUEEZE, &sq, io.s[0], -1);
    sq.axes[0] = 1;
    x = xf_test_op2(&r->src, XF_OP_UNSQUEEZE, &sq, x, -1);
    int64_t folded[4] = {4, 1, 2, 2}, exported[4] = {1, 4, 2, 2};
    x = xf_test_reshape(&r->src, x, xf_shape_make(4, folded));
    t.n_axes = 4, t.axes[0] = 1, t.axes[1] = 2, t.axes[2] = 3, t.axes[3] = 0;
    int s = xf_test_op2(&r->src, XF_OP_TRANSPOSE, &t, x, -1);
    t.axes[0] = 0, t.axes[1] = 2, t.axes[2] = 3, t.axes[3] = 1;
    int d = xf_test_op2(&r->dst, XF_OP_TRANSPOSE, &t,
                        xf_test_reshape(&r->dst, io.d[0], xf_shape_make(4, exported)), -1);
    rule_outputs(r, s, d);
}

/* The unbatched heads read backwards drop an unsqueeze, so by the
 * closure's measure they are a view move; the look-ahead must not make
 * them one: its closure runs over the whole graph after every action, and
 * would undo each head an earlier action unbatched, one move (and one
 * graph index) per head per look-ahead (BERT-base with these rules: 4.5x
 * the search time, and every view action valued with the heads undone). */
START_TEST(lookahead_keeps_unbatched_heads)
{
    xf_rule r;
    rule_heads_back(&r);
    ck_assert(xf_rule_is_view_move(&r));
    ck_assert(!xf_rule_is_lookahead_move(&r));
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    xf_error err;
    ck_assert(!xf_rule_is_lookahead_move(xf_ruleset_rule(rs, 0)));
    xf_graph g, done;
    heads_graph(&g, 1, 0); /* both heads unbatched, as an earlier action left them */
    xf_closure_log log;
    uint8_t moves[1] = {(uint8_t)xf_rule_is_view_move(xf_ruleset_rule(rs, 0))};
    ck_assert_msg(xf_closure_run(rs, moves, &g, 100, &done, &log, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_ge(log.n, 1); /* the measure's move alone undoes the key's head */
    xf_graph_free(&done);
    moves[0] = (uint8_t)xf_rule_is_lookahead_move(xf_ruleset_rule(rs, 0));
    ck_assert_msg(xf_closure_run(rs, moves, &g, 100, &done, &log, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(log.n, 0);
    ck_assert_int_eq(done.n_nodes, g.n_nodes);
    xf_graph_free(&done);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* squeeze[0](relu(x)) => relu(squeeze[0](x)), x [1,4,4]: a view move (the
 * squeeze toward the inputs). */
static void rule_squeeze_up(xf_rule *r)
{
    xf_shape x = shp(3, 1, 4, 4);
    sides io = rule_inputs(r, 1, &x);
    xf_params sq = xf_params_default();
    sq.n_axes = 1, sq.axes[0] = 0;
    int s = xf_test_op2(&r->src, XF_OP_SQUEEZE, &sq,
                        xf_test_op2(&r->src, XF_OP_RELU, NULL, io.s[0], -1), -1);
    int d = xf_test_op2(&r->dst, XF_OP_RELU, NULL,
                        xf_test_op2(&r->dst, XF_OP_SQUEEZE, &sq, io.d[0], -1), -1);
    rule_outputs(r, s, d);
}

/* The key's head unbatched (rule_heads_back read forwards), then a view
 * move that takes the squeeze it made up past the relu before it, away
 * from the views ONNX Runtime merges: the closure costs a view node more
 * than the action alone. The look-ahead (xf_lookahead) prices the action
 * alone, and a learning agent's step (xf_agent_env_step) keeps it alone,
 * as the searches do: before they shared it, the guided agent priced the
 * unbatched heads with the closure after them and never took them. */
START_TEST(lookahead_keeps_a_folded_head_alone)
{
    xf_rule r[2];
    rule_heads_back(&r[0]);
    xf_graph t = r[0].src; /* forwards: exported => folded */
    r[0].src = r[0].dst;
    r[0].dst = t;
    xf_error err;
    ck_assert_msg(xf_rule_validate(&r[0], &err) == XF_OK, "%s", err.msg);
    rule_squeeze_up(&r[1]);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_ruleset *rs = NULL;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 2, &o, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r[0]);
    xf_rule_free(&r[1]);
    ck_assert(xf_rule_is_lookahead_move(xf_ruleset_rule(rs, 1)));

    /* q, k [1,4,4]: matmul(transpose[0,2,1,3](reshape(q)),
     * transpose[0,2,3,1](reshape(relu(exp(k))))), 2 heads */
    xf_graph m;
    xf_graph_init(&m);
    int64_t d3[3] = {1, 4, 4}, d4[4] = {1, 4, 2, 2};
    int q = xf_test_input(&m, "q", 3, d3), k = xf_test_input(&m, "k", 3, d3);
    k = xf_test_op2(&m, XF_OP_RELU, NULL, xf_test_op2(&m, XF_OP_EXP, NULL, k, -1), -1);
    xf_params tq = xf_params_default(), tk = xf_params_default();
    tq.n_axes = tk.n_axes = 4;
    memcpy(tq.axes, (int64_t[]){0, 2, 1, 3}, 4 * sizeof(int64_t));
    memcpy(tk.axes, (int64_t[]){0, 2, 3, 1}, 4 * sizeof(int64_t));
    q = xf_test_op2(&m, XF_OP_TRANSPOSE, &tq, xf_test_reshape(&m, q, xf_shape_make(4, d4)), -1);
    k = xf_test_op2(&m, XF_OP_TRANSPOSE, &tk, xf_test_reshape(&m, k, xf_shape_make(4, d4)), -1);
    xf_test_out(&m, xf_test_op2(&m, XF_OP_MATMUL, NULL, q, k));
    xf_cost_model *cm = xf_fx_cost_model();
    xf_env_options eo = xf_env_options_default();
    eo.layout_view_ms = XF_ORT_VIEW_MS;
    eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    xf_env *e = NULL;
    ck_assert_msg(xf_env_create(rs, cm, &m, &eo, &e, &err) == XF_OK, "%s", err.msg);

    xf_lookahead la;
    ck_assert_msg(xf_lookahead_init(&la, rs, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_lookahead_applies(&la, 0));
    ck_assert_int_eq(la.viewy[0], 2); /* its target makes a transpose the runtime folds */
    ck_assert_int_eq(xf_env_num_locations(e, 0), 1);
    /* the case: the closure after the action costs more than the action */
    xf_graph one, ahead;
    xf_closure_log log;
    double one_ms, ahead_ms;
    ck_assert_msg(xf_match_apply(rs, xf_env_graph(e), xf_env_index(e), xf_env_location(e, 0, 0),
                                 &one, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_closure_run_plan(la.plan, &one, 100, &ahead, &log, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(log.n, 1);
    ck_assert_msg(xf_env_cost_graph(e, &one, &one_ms, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_env_cost_graph(e, &ahead, &ahead_ms, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_lt(one_ms, ahead_ms);
    /* priced alone */
    xf_graph priced;
    double ms = 0;
    ck_assert_msg(xf_lookahead_price(&la, e, 0, 0, &priced, &ms, &log, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_double_eq_tol(ms, one_ms, 1e-12);
    ck_assert_int_eq(log.n, 0);
    ck_assert_int_eq(priced.n_nodes, one.n_nodes);
    ck_assert_int_eq(count_rank(&priced, XF_OP_RELU, 3), 1);
    xf_graph_free(&priced);
    ck_assert_msg(xf_lookahead_price(&la, e, 0, 0, NULL, &ms, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_eq_tol(ms, one_ms, 1e-12);
    /* and stepped alone by an agent */
    xf_search_result res;
    xf_search_result_init(&res);
    xf_agent_run run;
    ck_assert_msg(xf_agent_run_begin(&run, e, &res, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_agent_run_lookahead(&run, &err) == XF_OK, "%s", err.msg);
    xf_env_step_result sr;
    ck_assert_msg(xf_agent_env_step(&run, 0, 0, &sr, &err) == XF_OK, "%s", err.msg);
    ck_assert(sr.valid);
    ck_assert_int_eq(run.moves.n, 0);
    ck_assert_int_eq(run.closures, 0);
    ck_assert_double_eq_tol(sr.cost_ms, one_ms, 1e-12);
    ck_assert_int_eq(xf_env_graph(e)->n_nodes, one.n_nodes);
    ck_assert_int_eq(count_rank(xf_env_graph(e), XF_OP_RELU, 3), 1);
    ck_assert_msg(xf_agent_run_step(&run, 0, &sr, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_agent_run_end(&run, XF_OK, &err) == XF_OK, "%s", err.msg);
    xf_search_result_free(&res);
    xf_graph_free(&one);
    xf_graph_free(&ahead);
    xf_lookahead_free(&la);
    xf_lookahead_free(&la); /* twice: a no-op */
    xf_env_free(e);
    xf_cost_close(cm);
    xf_graph_free(&m);
    xf_ruleset_free(rs);
}
END_TEST

/* GPT's tanh GELU, x * 0.5 * (1 + tanh(0.7978845 * (x + 0.044715 * x^3))),
 * on [32, 64]; without its x 0.5 (moved into a weight by a scalar rule)
 * when half is 0; with x + 0.044715 * x^3 a graph output as well when
 * leak is 1 (ORT then fuses nothing); with relus > 0, x a relu of the
 * input and the output `relus` relus of the GELU's, one after the other. */
static void tanh_gelu_graph(xf_graph *g, int half, int leak, int relus)
{
    xf_graph_init(g);
    int64_t d[2] = {32, 64};
    int x = xf_test_input(g, "x", 2, d);
    if (relus) x = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    int cube = xf_test_op2(g, XF_OP_POW, NULL, x, xf_test_scalar(g, "three", 3.0f));
    int m1 = xf_test_op2(g, XF_OP_SCALAR_MUL, NULL, cube, xf_test_scalar(g, "k", 0.044715f));
    int a = xf_test_op2(g, XF_OP_ADD, NULL, x, m1);
    int m2 = xf_test_op2(g, XF_OP_SCALAR_MUL, NULL, a, xf_test_scalar(g, "c", 0.7978845f));
    int t = xf_test_op2(g, XF_OP_TANH, NULL, m2, -1);
    int u = xf_test_op2(g, XF_OP_ADD, NULL, t, xf_test_scalar(g, "one", 1.0f));
    int h = half ? xf_test_op2(g, XF_OP_SCALAR_MUL, NULL, x, xf_test_scalar(g, "half", 0.5f)) : x;
    int y = xf_test_op2(g, XF_OP_MUL, NULL, h, u);
    for (int i = 0; i < relus; i++) y = xf_test_op2(g, XF_OP_RELU, NULL, y, -1);
    xf_test_out(g, y);
    if (leak) xf_test_out(g, a);
}

static double graph_ms(xf_costmemo *m, const xf_graph *g, double *tanh_ms)
{
    xf_op_cost per[32];
    double total = xf_fx_graph_costs(m, g, per, 32);
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_TANH) *tanh_ms = per[i].ms;
    return total;
}

/* With ONNX Runtime's layout costs a whole tanh GELU costs its tanh alone
 * (ORT runs it as one FastGelu kernel); without its x 0.5 it is unfused
 * and costs every node, so taking the 0.5 into the next weight no longer
 * looks cheaper. Without the layout costs each node costs. */
START_TEST(ort_fuses_whole_tanh_gelu)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    xf_costmemo *m = NULL;
    ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
    xf_graph whole, moved, leaked;
    tanh_gelu_graph(&whole, 1, 0, 0);
    tanh_gelu_graph(&moved, 0, 0, 0);
    tanh_gelu_graph(&leaked, 1, 1, 0);
    double t_whole = 0, t_moved = 0, t_leaked = 0;
    ck_assert_double_gt(graph_ms(m, &whole, &t_whole), graph_ms(m, &moved, &t_moved));
    xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
    double c_whole = graph_ms(m, &whole, &t_whole), c_moved = graph_ms(m, &moved, &t_moved);
    ck_assert_double_gt(t_whole, 0);
    ck_assert_double_eq_tol(c_whole, t_whole, 1e-12);
    ck_assert_double_lt(c_whole, c_moved);
    /* an inner value read elsewhere: no fusion, every node costs */
    double c_leaked = graph_ms(m, &leaked, &t_leaked);
    ck_assert_double_gt(t_leaked, 0);
    ck_assert_double_gt(c_leaked, 2 * t_leaked);
    xf_graph_free(&whole);
    xf_graph_free(&moved);
    xf_graph_free(&leaked);
    xf_costmemo_free(m);
    xf_cost_close(cm);
}
END_TEST

/* An environment of rs on g with ONNX Runtime's layout costs. */
static xf_env *ort_env(const xf_ruleset *rs, xf_cost_model *cm, const xf_graph *g)
{
    xf_env_options eo = xf_env_options_default();
    eo.layout_view_ms = XF_ORT_VIEW_MS;
    eo.layout_gbps = XF_ORT_LAYOUT_GBPS;
    xf_env *e = NULL;
    xf_error err;
    ck_assert_msg(xf_env_create(rs, cm, g, &eo, &e, &err) == XF_OK, "%s", err.msg);
    return e;
}

/* Peeks at the one location of action 0, takes it, and checks that the
 * peek said what the step costs. */
static void peek_then_step(xf_env *e)
{
    xf_error err;
    ck_assert_int_eq(xf_env_num_locations(e, 0), 1);
    double peek_ms = 0, peek_bytes = 0;
    ck_assert_msg(xf_env_peek(e, 0, 0, &peek_ms, &peek_bytes, &err) == XF_OK, "%s", err.msg);
    xf_env_step_result sr;
    ck_assert_msg(xf_env_step(e, 0, 0, &sr, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_eq_tol(peek_ms, xf_env_cost(e), 1e-9);
}

/* ewmul(scalar_mul(a, s), b) => ewmul(a, scalar_mul(b, s)): on the tanh
 * GELU it moves the x 0.5 onto 1 + tanh(..) and breaks ORT's fusion. The
 * environment's peek (one rewrite priced by its nodes) must say what the
 * step then costs: the chain unfused, every node (xf_costmemo_gelu_zone). */
START_TEST(peek_prices_a_broken_gelu_as_the_step)
{
    xf_rule r;
    xf_shape sh[3] = {shp(2, 8, 4, 0), shp(0, 0, 0, 0), shp(2, 8, 4, 0)};
    sides io = rule_inputs(&r, 3, sh);
    int s = xf_test_op2(&r.src, XF_OP_MUL, NULL,
                        xf_test_op2(&r.src, XF_OP_SCALAR_MUL, NULL, io.s[0], io.s[1]), io.s[2]);
    int d = xf_test_op2(&r.dst, XF_OP_MUL, NULL, io.d[0],
                        xf_test_op2(&r.dst, XF_OP_SCALAR_MUL, NULL, io.d[2], io.d[1]));
    rule_outputs(&r, s, d);
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    xf_graph g;
    tanh_gelu_graph(&g, 1, 0, 0);
    xf_cost_model *cm = xf_fx_cost_model();
    xf_env *e = ort_env(rs, cm, &g);
    double before = xf_env_cost(e);
    peek_then_step(e);
    ck_assert_double_gt(xf_env_cost(e), before); /* the fusion is gone */
    xf_env_free(e);
    xf_cost_close(cm);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* The zone where a rewrite may make or break a fused GELU: a whole chain's
 * nodes and their readers (the relu after it), not the relu that makes x
 * (rewriting it leaves the chain whole) nor the relu after that reader (the
 * readers' readers: in node order the zone must not spread down the graph),
 * so rewrites near GPT-2-small's 12 GELUs are not all costed on the whole
 * graph; around a chain that is not whole (its x 0.5 moved away), every
 * node within 4 edges of the tanh (a rewrite there may make it whole). */
START_TEST(gelu_zone_is_the_chain_and_its_readers)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    xf_costmemo *m = NULL;
    ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
    xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
    for (int half = 0; half < 2; half++) {
        xf_graph g;
        tanh_gelu_graph(&g, half, 0, 2);
        xf_graph_index *ix = NULL;
        ck_assert_msg(xf_graph_index_build(&g, &ix, &err) == XF_OK, "%s", err.msg);
        uint8_t zone[32];
        int queue[32];
        ck_assert_int_le(g.n_nodes, 32);
        int marked = xf_costmemo_gelu_zone(m, &g, ix, zone, queue);
        int relu[3], n_relu = 0;
        for (int i = 0; i < g.n_nodes; i++)
            if (g.nodes[i].op == XF_OP_RELU) relu[n_relu++] = i;
        ck_assert_int_eq(n_relu, 3); /* x's, the chain's reader, its reader */
        ck_assert_int_eq(zone[relu[0]], !half);
        ck_assert_int_eq(zone[relu[1]], 1);
        ck_assert_int_eq(zone[relu[2]], !half); /* 4 edges from the tanh */
        ck_assert_int_eq(marked, g.n_nodes - 2 * half);
        xf_graph_index_free(ix);
        xf_graph_free(&g);
    }
    xf_costmemo_free(m);
    xf_cost_close(cm);
}
END_TEST

/* A language-model head: x [4, 16, 8] by w [8, 8] as the graph's output,
 * with a bias added when `bias`. */
static void head_graph(xf_graph *g, int bias)
{
    xf_error err;
    xf_graph_init(g);
    xf_shape xs = shp(3, 4, 16, 8);
    int x = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8}, bd[1] = {8};
    int y = xf_test_op2(g, XF_OP_MATMUL, NULL, x, xf_test_weight(g, "w", 2, wd, 1));
    if (bias) y = xf_test_op2(g, XF_OP_ADD, NULL, y, xf_test_weight(g, "b", 1, bd, 2));
    xf_test_out(g, y);
}

/* With ONNX Runtime's layout costs a matmul of a 3-D input by a 2-D weight
 * pays its wrapping Reshapes only when an add reads it (ORT's MatMul+Add
 * fusion wraps it then; GPT's LM head runs unwrapped), and a view that is
 * a graph output costs a copy (ORT's Reshape copies into the caller's
 * output). The peek prices flattening the head as the step does. */
START_TEST(ort_runs_an_unread_matmul_unwrapped)
{
    xf_error err;
    xf_cost_model *cm = xf_fx_cost_model();
    xf_costmemo *m = NULL;
    ck_assert_msg(xf_costmemo_create(cm, &m, &err) == XF_OK, "%s", err.msg);
    xf_graph head, biased;
    head_graph(&head, 0);
    head_graph(&biased, 1);
    xf_op_cost per[32];
    double plain = xf_fx_graph_costs(m, &head, per, 32), plain_mm = 0;
    xf_fx_graph_costs(m, &biased, per, 32);
    plain_mm = per[0].ms;
    xf_costmemo_set_layout(m, XF_ORT_VIEW_MS, XF_ORT_LAYOUT_GBPS);
    ck_assert_double_eq_tol(xf_fx_graph_costs(m, &head, per, 32), plain, 1e-12);
    xf_fx_graph_costs(m, &biased, per, 32);
    ck_assert_double_gt(per[0].ms, plain_mm + 1e-6); /* wrapped: read by its add */
    xf_costmemo_free(m);

    xf_rule r;
    rule_intro(&r);
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    xf_env *e = ort_env(rs, cm, &head);
    double before = xf_env_cost(e);
    peek_then_step(e);
    /* flattened: two views, the last one copied into the output */
    double copy = 4.0 * 4 * 16 * 8 / (XF_ORT_OUTPUT_COPY_GBPS * 1e6);
    ck_assert_double_gt(xf_env_cost(e), before - 1e-3 * before + copy);
    xf_env_free(e);
    xf_ruleset_free(rs);
    xf_graph_free(&head);
    xf_graph_free(&biased);
    xf_cost_close(cm);
}
END_TEST

/* The head flattened, x [64, 8] by w [8, 8] viewed as [4, 16, 8] for the
 * graph's output, and rule 4 both ways: read backwards it takes the
 * matmul out of the 2-D layout, which the view moves (rule 4) would undo.
 * With ONNX Runtime's layout costs the head unwrapped costs no copy into
 * the output, so the search's look-ahead values that action by the graph
 * it makes alone and the best graph has the 3-D matmul. */
START_TEST(search_takes_the_head_out_of_the_2d_layout)
{
    xf_rule r;
    rule_matmul(&r);
    xf_ruleset_options o = xf_ruleset_options_default();
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(&r, NULL, 1, &o, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_graph g;
    xf_graph_init(&g);
    xf_shape xs = shp(2, 64, 8, 0);
    int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8};
    int y = xf_test_op2(&g, XF_OP_MATMUL, NULL, x, xf_test_weight(&g, "w", 2, wd, 1));
    xf_test_out(&g, xf_test_reshape(&g, y, shp(3, 4, 16, 8)));
    xf_cost_model *cm = xf_fx_cost_model();
    xf_env *e = ort_env(rs, cm, &g);
    xf_search_options so = xf_search_options_default();
    so.budget = 10;
    xf_search_result res;
    xf_search_result_init(&res);
    ck_assert_msg(xf_search_run(e, XF_SEARCH_TASO, &so, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_double_lt(res.best_ms, res.initial_ms);
    ck_assert_int_eq(count_rank(&res.best, XF_OP_MATMUL, 3), 1);
    xf_test_expect_same_function(&g, &res.best, 2, 1e-4);
    xf_search_result_free(&res);
    xf_env_free(e);
    xf_cost_close(cm);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* Scalings kept as exported (xf_ruleset_options.keep_scalings): the view
 * move past a product by a scalar stays, though the enumerator writes its
 * target with scalar_mul (ewmul(unflatten(a), s) => unflatten(scalar_mul(a,
 * s))); the rule that takes the scalar into a matmul's weight goes. */
/* slice(view(x)) => view(slice(x)), one position [0, 1) along axis 1, or
 * the reverse: x of shape `in` viewed as `to`, its slice as `to_sliced`. */
static void rule_slice_view(xf_rule *r, xf_shape in, xf_shape to, xf_shape to_sliced, int reverse)
{
    sides io = rule_inputs(r, 1, &in);
    xf_params p = xf_params_default();
    p.n_axes = 1, p.axes[0] = 1, p.starts[0] = 0, p.ends[0] = 1, p.steps[0] = 1;
    int s = xf_test_op2(&r->src, XF_OP_SLICE, &p, xf_test_reshape(&r->src, io.s[0], to), -1);
    int d = xf_test_reshape(&r->dst, xf_test_op2(&r->dst, XF_OP_SLICE, &p, io.d[0], -1), to_sliced);
    if (reverse) {
        xf_graph t = r->src;
        r->src = r->dst;
        r->dst = t;
        int k = s;
        s = d;
        d = k;
    }
    rule_outputs(r, s, d);
}

/* Index of the first action of `order` (n of them) with a location in g,
 * -1 when none: what the closure's next move is, looked up one action at a
 * time with xf_match_rule. */
static int first_with_location(const xf_ruleset *rs, const int *order, int n, const xf_graph *g)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_int_eq(xf_graph_index_build(g, &ix, &err), XF_OK);
    int found = -1;
    for (int i = 0; i < n && found < 0; i++) {
        xf_match m[1];
        int k = 0;
        ck_assert_int_eq(xf_match_rule(rs, order[i], g, ix, m, 1, &k, &err), XF_OK);
        if (k > 0) found = order[i];
    }
    xf_graph_index_free(ix);
    return found;
}

/* The closure applies, at each step, the first location of the first view
 * move that has one, slices' first and then in action order (closure.c
 * looks them up in one context, skipping actions whose root operator is
 * absent): after k steps its graph and log are those of k such steps made
 * one by one with xf_match_rule, on a block whose moves interleave (two
 * matmuls, bias adds, a relu, a residual sum) among actions that never
 * match (moves of slices and of reshapes of other kinds). */
START_TEST(closure_moves_in_order)
{
    int64_t q[4] = {2, 4, 2, 2}, q1[4] = {2, 1, 2, 2};
    xf_shape merged = shp(3, 2, 4, 4), merged1 = shp(3, 2, 1, 4);
    xf_shape heads = xf_shape_make(4, q), heads1 = xf_shape_make(4, q1);
    xf_rule r[9];
    rule_slice_view(&r[0], heads, merged, merged1, 1); /* not a move */
    rule_intro(&r[1]);
    rule_sum(&r[2]);
    rule_bias(&r[3]);
    rule_slice_view(&r[4], heads, merged, merged1, 0); /* a slice move, absent here */
    rule_relu(&r[5]);
    rule_matmul(&r[6]);
    rule_slice_view(&r[7], merged, heads, heads1, 0);
    rule_cancel(&r[8]);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = 0;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, 9, &o, &rs, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < 9; i++) xf_rule_free(&r[i]);
    int n = xf_ruleset_count(rs), order[9], n_order = 0;
    uint8_t moves[9];
    for (int i = 0; i < n; i++) moves[i] = (uint8_t)xf_rule_is_view_move(xf_ruleset_rule(rs, i));
    ck_assert(!moves[0] && !moves[1] && moves[4] && moves[7]);
    for (int pass = 0; pass < 2; pass++) /* slices' first: actions 4 and 7 */
        for (int i = 0; i < n; i++)
            if (moves[i] && (i == 4 || i == 7) == (pass == 0)) order[n_order++] = i;
    /* y = relu(x W1 + b1) W2 + b2 + relu(x W1 + b1) W3, x [4, 16, 8] */
    xf_graph model;
    xf_graph_init(&model);
    xf_shape xs = shp(3, 4, 16, 8);
    int x = xf_graph_add_input(&model, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8}, bd[1] = {8};
    int w1 = xf_test_weight(&model, "w1", 2, wd, 1), w2 = xf_test_weight(&model, "w2", 2, wd, 2);
    int w3 = xf_test_weight(&model, "w3", 2, wd, 5);
    int b1 = xf_test_weight(&model, "b1", 1, bd, 3), b2 = xf_test_weight(&model, "b2", 1, bd, 4);
    int h = xf_test_op2(&model, XF_OP_RELU, NULL,
                        xf_test_op2(&model, XF_OP_ADD, NULL, xf_test_op2(&model, XF_OP_MATMUL, NULL, x, w1), b1), -1);
    int y = xf_test_op2(&model, XF_OP_ADD, NULL, xf_test_op2(&model, XF_OP_MATMUL, NULL, h, w2), b2);
    xf_test_out(&model, xf_test_op2(&model, XF_OP_ADD, NULL, y, xf_test_op2(&model, XF_OP_MATMUL, NULL, h, w3)));
    /* and the first position of x in heads, a slice the first move takes
     * above the head split */
    int64_t hd[4] = {4, 16, 2, 4};
    xf_params sl = xf_params_default();
    sl.n_axes = 1, sl.axes[0] = 1, sl.starts[0] = 0, sl.ends[0] = 1, sl.steps[0] = 1;
    xf_test_out(&model, xf_test_op2(&model, XF_OP_SLICE, &sl, xf_test_reshape(&model, x, xf_shape_make(4, hd)), -1));
    xf_graph start, ref;
    ck_assert_int_eq(xf_graph_clone(&model, &start, &err), XF_OK);
    ck_assert(step(rs, 1, &start));
    ck_assert_int_eq(xf_graph_clone(&start, &ref, &err), XF_OK);
    int made = 0;
    for (int k = 1; k <= 12; k++) {
        int next = first_with_location(rs, order, n_order, &ref);
        if (next < 0) break;
        ck_assert(step(rs, next, &ref));
        xf_graph done;
        xf_closure_log log;
        ck_assert_msg(xf_closure_run(rs, moves, &start, k, &done, &log, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(log.n, k);
        ck_assert_int_eq(log.rule[k - 1], next);
        if (k == 1) ck_assert_int_eq(next, 7); /* the slice's move, though action 2 matches */
        uint64_t a = 0, b = 0;
        ck_assert_int_eq(xf_graph_hash_checked(&done, XF_HASH_CONTENT, &a, &err), XF_OK);
        ck_assert_int_eq(xf_graph_hash_checked(&ref, XF_HASH_CONTENT, &b, &err), XF_OK);
        ck_assert_msg(a == b, "step %d: the closure's graph is not the one made step by step", k);
        xf_graph_free(&done);
        made = k;
    }
    ck_assert_int_ge(made, 5); /* the slice's, bias, relu, both matmuls' moves at least */
    xf_graph_free(&ref);
    xf_graph_free(&start);
    xf_graph_free(&model);
    xf_ruleset_free(rs);
}
END_TEST

/* n layers h <- relu(h W + b) on x [4, 16, 8]; each layer's input is also
 * reshaped to [4, 8, 16] (a reshape no move takes) and multiplied by a
 * weight of its own into a graph output: a matmul reading a reshape, which
 * the matmul move's root signature finds in every layer. */
static void layers(xf_graph *g, int n)
{
    xf_error err;
    xf_graph_init(g);
    xf_shape xs = shp(3, 4, 16, 8);
    int h = xf_graph_add_input(g, "x", XF_F32, &xs, &err);
    const int64_t wd[2] = {8, 8}, bd[1] = {8}, vd[2] = {16, 8};
    for (int k = 0; k < n; k++) {
        char w[16], b[16], v[16];
        snprintf(w, sizeof w, "w%d", k);
        snprintf(b, sizeof b, "b%d", k);
        snprintf(v, sizeof v, "v%d", k);
        int mm = xf_test_op2(g, XF_OP_MATMUL, NULL, h, xf_test_weight(g, w, 2, wd, 3 * (uint64_t)k + 1));
        int next = xf_test_op2(g, XF_OP_RELU, NULL,
                               xf_test_op2(g, XF_OP_ADD, NULL, mm, xf_test_weight(g, b, 1, bd, 3 * (uint64_t)k + 2)), -1);
        int side = xf_test_reshape(g, h, shp(3, 4, 8, 16));
        xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, side, xf_test_weight(g, v, 2, vd, 3 * (uint64_t)k + 3)));
        h = next;
    }
    xf_test_out(g, h);
}

/* The closure of the unflatten the first matmul's rewrite brings in, on n
 * layers: it is carried down through every layer (its matmul, bias add and
 * relu), and the closure's moves and graph are those of the moves made one
 * by one with xf_match_rule. *roots_per_step: the nodes its matching tried
 * as a move's first operator, per move. */
static void closure_through_layers(int n, double *roots_per_step)
{
    xf_ruleset *rs = view_rules();
    xf_error err;
    uint8_t moves[4] = {0, 1, 1, 1};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(xf_rule_is_view_move(xf_ruleset_rule(rs, i)), moves[i]);
    const int order[3] = {1, 2, 3};
    xf_graph model, start, ref, done;
    layers(&model, n);
    ck_assert_int_eq(xf_graph_clone(&model, &start, &err), XF_OK);
    ck_assert(step(rs, 0, &start));
    ck_assert_int_eq(xf_graph_clone(&start, &ref, &err), XF_OK);
    int made[XF_CLOSURE_LOG], n_made = 0;
    for (int next; n_made < XF_CLOSURE_LOG && (next = first_with_location(rs, order, 3, &ref)) >= 0;) {
        ck_assert(step(rs, next, &ref));
        made[n_made++] = next;
    }
    ck_assert_int_ge(n_made, 3 * n - 1); /* bias and relu of every layer, each next matmul */
    xf_closure_log log;
    ck_assert_msg(xf_closure_run(rs, moves, &start, XF_CLOSURE_LOG, &done, &log, &err) == XF_OK,
                  "%s", err.msg);
    ck_assert_int_eq(log.n, n_made);
    for (int k = 0; k < n_made; k++) ck_assert_int_eq(log.rule[k], made[k]);
    uint64_t a = 0, b = 0;
    ck_assert_int_eq(xf_graph_hash_checked(&done, XF_HASH_CONTENT, &a, &err), XF_OK);
    ck_assert_int_eq(xf_graph_hash_checked(&ref, XF_HASH_CONTENT, &b, &err), XF_OK);
    ck_assert_msg(a == b, "%d layers: the closure's graph is not the one made step by step", n);
    ck_assert_int_eq(count_rank(&done, XF_OP_MATMUL, 3), n); /* the side matmuls alone */
    xf_test_expect_same_function(&model, &done, 3, 1e-5);
    ck_assert_int_eq(log.copied, start.n_nodes); /* the input's copy, no copy per move */
    *roots_per_step = (double)log.roots / log.n;
    xf_graph_free(&done);
    xf_graph_free(&ref);
    xf_graph_free(&start);
    xf_graph_free(&model);
    xf_ruleset_free(rs);
}

/* A closure's work per move does not grow with the graph (issue 38): after
 * a move, the moves are matched only from the nodes near the ones it
 * changed and from where they had a location before, not from every
 * matmul reading a reshape in 24 layers; the moves and the graph stay those
 * of matching the whole graph at each step. */
START_TEST(closure_work_per_move_is_local)
{
    double few, many;
    closure_through_layers(3, &few);
    closure_through_layers(24, &many);
    /* matching every layer's side matmul at each move: 8x the roots a move */
    ck_assert_msg(many < 1.5 * few, "roots per move: %.1f on 3 layers, %.1f on 24", few, many);
}
END_TEST

/* A class token's slice moves up through attention's head merge and split
 * (issue 28): a slice taken before a reshape instead of after it is a view
 * move (the views above slices become fewer, all else equal); the reverse
 * is not, so the closure cannot undo it. */
START_TEST(slice_moves_above_head_reshapes)
{
    int64_t q[4] = {2, 4, 2, 2}, q1[4] = {2, 1, 2, 2};
    xf_shape merged = shp(3, 2, 4, 4), merged1 = shp(3, 2, 1, 4);
    xf_shape heads = xf_shape_make(4, q), heads1 = xf_shape_make(4, q1);
    for (int reverse = 0; reverse < 2; reverse++) {
        xf_rule merge, split;
        rule_slice_view(&merge, heads, merged, merged1, reverse);
        rule_slice_view(&split, merged, heads, heads1, reverse);
        ck_assert_int_eq(xf_rule_is_view_move(&merge), !reverse);
        ck_assert_int_eq(xf_rule_is_view_move(&split), !reverse);
        xf_rule_free(&merge);
        xf_rule_free(&split);
    }
}
END_TEST

START_TEST(kept_scalings_only_let_views_past)
{
    xf_rule r[2];
    xf_shape sh[2] = {shp(2, 8, 4, 0), shp(0, 0, 0, 0)};
    sides io = rule_inputs(&r[0], 2, sh);
    int s = xf_test_op2(&r[0].src, XF_OP_MUL, NULL, xf_test_reshape(&r[0].src, io.s[0], shp(3, 2, 4, 4)),
                        io.s[1]);
    int d = xf_test_reshape(&r[0].dst, xf_test_op2(&r[0].dst, XF_OP_SCALAR_MUL, NULL, io.d[0], io.d[1]),
                            shp(3, 2, 4, 4));
    rule_outputs(&r[0], s, d);
    /* matmul(ewmul(a, s), w) => matmul(a, scalar_mul(w, s)) */
    xf_shape sm[3] = {shp(2, 8, 4, 0), shp(0, 0, 0, 0), shp(2, 4, 4, 0)};
    io = rule_inputs(&r[1], 3, sm);
    s = xf_test_op2(&r[1].src, XF_OP_MATMUL, NULL, xf_test_op2(&r[1].src, XF_OP_MUL, NULL, io.s[0], io.s[1]),
                    io.s[2]);
    d = xf_test_op2(&r[1].dst, XF_OP_MATMUL, NULL, io.d[0],
                    xf_test_op2(&r[1].dst, XF_OP_SCALAR_MUL, NULL, io.d[2], io.d[1]));
    rule_outputs(&r[1], s, d);
    ck_assert(xf_rule_is_view_move(&r[0]));
    ck_assert(!xf_rule_is_view_move(&r[1]));
    for (int keep = 0; keep < 2; keep++) {
        xf_ruleset_options o = xf_ruleset_options_default();
        o.both_directions = 0;
        o.keep_scalings = keep;
        xf_ruleset *rs = NULL;
        xf_error err;
        ck_assert_msg(xf_ruleset_from_rules(r, NULL, 2, &o, &rs, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_ruleset_count(rs), keep ? 1 : 2);
        if (keep) ck_assert(xf_rule_is_view_move(xf_ruleset_rule(rs, 0)));
        xf_ruleset_free(rs);
    }
    for (int i = 0; i < 2; i++) xf_rule_free(&r[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_views");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, chain_makes_2d_layout);
    tcase_add_test(tc, sizes_must_agree);
    tcase_add_test(tc, unbound_size_matches_exactly);
    tcase_add_test(tc, closure_finishes_the_chain);
    tcase_add_test(tc, closure_moves_in_order);
    tcase_add_test(tc, closure_work_per_move_is_local);
    tcase_add_test(tc, search_finds_the_layout);
    tcase_add_test(tc, an_agent_step_looks_ahead_through_the_view_moves);
    tcase_add_test(tc, ort_folds_unbatched_heads);
    tcase_add_test(tc, ort_fuses_whole_tanh_gelu);
    tcase_add_test(tc, peek_prices_a_broken_gelu_as_the_step);
    tcase_add_test(tc, gelu_zone_is_the_chain_and_its_readers);
    tcase_add_test(tc, ort_runs_an_unread_matmul_unwrapped);
    tcase_add_test(tc, search_takes_the_head_out_of_the_2d_layout);
    tcase_add_test(tc, lookahead_keeps_unbatched_heads);
    tcase_add_test(tc, lookahead_keeps_a_folded_head_alone);
    tcase_add_test(tc, kept_scalings_only_let_views_past);
    tcase_add_test(tc, slice_moves_above_head_reshapes);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
