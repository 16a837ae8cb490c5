/*
 * test_agent_env.c — the optimisation environment on a hand-built graph
 * (conv + relu, two matmuls sharing their left operand) with two hand-built
 * rules and their reverses: relu(conv(x, w)) => conv[act=relu](x, w) and
 * matmul(x, w1), matmul(x, w2) => split(matmul(x, concat(w1, w2))).
 * Checked: graph costs against sums of xf_cost_op computed here (weight-only
 * nodes free); masks and locations exactly as expected; a step changes the
 * cost by exactly the peeked amount and the reward is the documented
 * percentage (runtime and memory weights); invalid actions (masked, out of
 * range) get the penalty and leave the graph; the no-op and max_steps end
 * the episode, as does a graph with nothing to rewrite; reset restores the
 * initial cost and hash; set_graph restores a graph seen before; a graph
 * of 1,500 distinct configurations costs the same through the environment's
 * memo as on the cost model; 300 random steps (whose states take keys and
 * costs over from the state before) give exactly the masks, locations,
 * costs and hashes of states computed afresh; an environment over a model
 * prepared beforehand (xf_env_create_prepared) is the one xf_env_create
 * builds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "testutil.h"

/* ------------------------------------------------------------ fixtures */

/* Action index of database id `id` (negative: the reverse). */
static int action(const xf_ruleset *rs, int64_t id)
{
    for (int i = 0; i < xf_ruleset_count(rs); i++)
        if (xf_ruleset_rule_id(rs, i) == id) return i;
    ck_abort_msg("rule id %lld is not in the rule set", (long long)id);
    return -1;
}

/* The environment's graph: relu(conv(x, w)) and matmul(a, m1), matmul(a, m2). */
typedef struct env_graph {
    xf_graph g;
    int conv_node, relu_node, mm1_node, mm2_node;
} env_graph;

static void build_env_graph(env_graph *t)
{
    xf_graph *g = &t->g;
    xf_graph_init(g);
    int x = xf_fx_input(g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(g, "w", xf_fx_shape(4, 4, 4, 3, 3), 1);
    xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
    int c = xf_fx_op(g, XF_OP_CONV, &p, x, w);
    int r = xf_fx_op(g, XF_OP_RELU, NULL, c, -1);
    xf_fx_output(g, r);
    int a = xf_fx_input(g, "a", xf_fx_shape(2, 8, 4, 0, 0));
    int m1 = xf_fx_weight(g, "m1", xf_fx_shape(2, 4, 4, 0, 0), 2);
    int m2 = xf_fx_weight(g, "m2", xf_fx_shape(2, 4, 4, 0, 0), 3);
    int p1 = xf_fx_op(g, XF_OP_MATMUL, NULL, a, m1);
    int p2 = xf_fx_op(g, XF_OP_MATMUL, NULL, a, m2);
    xf_fx_output(g, p1);
    xf_fx_output(g, p2);
    t->conv_node = g->values[c].producer;
    t->relu_node = g->values[r].producer;
    t->mm1_node = g->values[p1].producer;
    t->mm2_node = g->values[p2].producer;
}

typedef struct costs {
    xf_op_cost conv, relu, conv_relu, mm, mm_wide, split;
} costs;

static costs expected_costs(xf_cost_model *cm)
{
    costs k;
    xf_shape cin[2] = {xf_fx_shape(4, 1, 4, 8, 8), xf_fx_shape(4, 4, 4, 3, 3)};
    xf_params p0 = xf_fx_conv3x3(XF_ACT_NONE), p1 = xf_fx_conv3x3(XF_ACT_RELU);
    k.conv = xf_fx_cost_of(cm, XF_OP_CONV, &p0, 2, cin);
    k.conv_relu = xf_fx_cost_of(cm, XF_OP_CONV, &p1, 2, cin);
    k.relu = xf_fx_cost_of(cm, XF_OP_RELU, NULL, 1, cin);
    xf_shape m[2] = {xf_fx_shape(2, 8, 4, 0, 0), xf_fx_shape(2, 4, 4, 0, 0)};
    k.mm = xf_fx_cost_of(cm, XF_OP_MATMUL, NULL, 2, m);
    xf_shape mw[2] = {xf_fx_shape(2, 8, 4, 0, 0), xf_fx_shape(2, 4, 8, 0, 0)};
    k.mm_wide = xf_fx_cost_of(cm, XF_OP_MATMUL, NULL, 2, mw);
    xf_params sp = xf_params_default();
    sp.axis = 1;
    sp.n_split = 2;
    sp.split[0] = sp.split[1] = 4;
    xf_shape s8 = xf_fx_shape(2, 8, 8, 0, 0);
    k.split = xf_fx_cost_of(cm, XF_OP_SPLIT, &sp, 1, &s8);
    return k;
}

static void assert_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)), "%s: got %.17g, want %.17g",
                  what, got, want);
}

typedef struct fixture {
    xf_cost_model *cm;
    xf_ruleset *rs;
    env_graph t;
    xf_env *e;
    int fwd1, rev1, fwd2, rev2, n;
} fixture;

static void setup(fixture *f, const xf_env_options *opt)
{
    f->cm = xf_fx_cost_model();
    f->rs = xf_fx_rules();
    build_env_graph(&f->t);
    xf_error err;
    ck_assert_msg(xf_env_create(f->rs, f->cm, &f->t.g, opt, &f->e, &err) == XF_OK, "%s",
                  err.msg);
    f->n = xf_env_num_xfers(f->e);
    ck_assert_int_eq(f->n, 4);
    f->fwd1 = action(f->rs, 1);
    f->rev1 = action(f->rs, -1);
    f->fwd2 = action(f->rs, 2);
    f->rev2 = action(f->rs, -2);
}

static void teardown(fixture *f)
{
    xf_env_free(f->e);
    xf_ruleset_free(f->rs);
    xf_graph_free(&f->t.g);
    xf_cost_close(f->cm);
}

static void expect_mask(const fixture *f, int fwd1, int rev1, int fwd2, int rev2)
{
    const uint8_t *m = xf_env_xfer_mask(f->e);
    ck_assert_int_eq(m[f->fwd1], fwd1);
    ck_assert_int_eq(m[f->rev1], rev1);
    ck_assert_int_eq(m[f->fwd2], fwd2);
    ck_assert_int_eq(m[f->rev2], rev2);
    ck_assert_int_eq(m[f->n], 1);
    ck_assert_int_eq(xf_env_num_locations(f->e, f->fwd1) > 0, fwd1);
    ck_assert_int_eq(xf_env_num_locations(f->e, f->rev1) > 0, rev1);
    ck_assert_int_eq(xf_env_num_locations(f->e, f->fwd2) > 0, fwd2);
    ck_assert_int_eq(xf_env_num_locations(f->e, f->rev2) > 0, rev2);
}

/* ---------------------------------------------------------------- tests */

START_TEST(graph_cost_sums_nodes_and_skips_weight_only)
{
    xf_cost_model *cm = xf_fx_cost_model();
    costs k = expected_costs(cm);
    env_graph t;
    build_env_graph(&t);
    xf_error err;
    xf_graph_index *ix = NULL;
    ck_assert_msg(xf_graph_index_build(&t.g, &ix, &err) == XF_OK, "%s", err.msg);
    xf_op_cost total;
    ck_assert_msg(xf_agent_graph_cost(cm, &t.g, ix, &total, &err) == XF_OK, "%s", err.msg);
    assert_close(total.ms, k.conv.ms + k.relu.ms + 2 * k.mm.ms, "graph ms");
    assert_close(total.bytes, k.conv.bytes + k.relu.bytes + 2 * k.mm.bytes, "graph bytes");
    ck_assert_int_eq(total.kernels, 4);
    xf_graph_index_free(ix);

    /* a transpose of a weight feeding the matmul is weight-only: free */
    xf_params tp = xf_params_default();
    tp.n_axes = 2;
    tp.axes[0] = 1;
    tp.axes[1] = 0;
    int m1 = t.g.nodes[t.mm1_node].inputs[1];
    int mt = xf_fx_op(&t.g, XF_OP_TRANSPOSE, &tp, m1, -1);
    int a = t.g.nodes[t.mm1_node].inputs[0];
    xf_fx_output(&t.g, xf_fx_op(&t.g, XF_OP_MATMUL, NULL, a, mt));
    ck_assert_msg(xf_graph_index_build(&t.g, &ix, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_graph_index_weight_only(ix, mt));
    ck_assert_msg(xf_agent_graph_cost(cm, &t.g, ix, &total, &err) == XF_OK, "%s", err.msg);
    assert_close(total.ms, k.conv.ms + k.relu.ms + 3 * k.mm.ms, "graph ms with folded transpose");
    ck_assert_int_eq(total.kernels, 5);
    xf_graph_index_free(ix);
    xf_graph_free(&t.g);
    xf_cost_close(cm);
}
END_TEST

START_TEST(masks_locations_and_initial_cost)
{
    fixture f;
    setup(&f, NULL);
    costs k = expected_costs(f.cm);
    double initial = k.conv.ms + k.relu.ms + 2 * k.mm.ms;
    assert_close(xf_env_initial_cost(f.e), initial, "initial cost");
    assert_close(xf_env_cost(f.e), initial, "current cost");
    ck_assert_int_eq(xf_env_steps(f.e), 0);
    expect_mask(&f, 1, 0, 1, 0);

    ck_assert_int_eq(xf_env_num_locations(f.e, f.fwd1), 1);
    const xf_match *m = xf_env_location(f.e, f.fwd1, 0);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->rule, f.fwd1);
    ck_assert_int_eq(m->n_nodes, 2);
    ck_assert_int_eq(m->nodes[0], f.t.conv_node); /* source order: conv, relu */
    ck_assert_int_eq(m->nodes[1], f.t.relu_node);

    /* both matmuls, once in each order of the two source matmuls (sorted by node) */
    ck_assert_int_eq(xf_env_num_locations(f.e, f.fwd2), 2);
    int lo = f.t.mm1_node < f.t.mm2_node ? f.t.mm1_node : f.t.mm2_node;
    int hi = f.t.mm1_node + f.t.mm2_node - lo;
    for (int l = 0; l < 2; l++) {
        m = xf_env_location(f.e, f.fwd2, l);
        ck_assert_int_eq(m->n_nodes, 2);
        ck_assert_int_eq(m->nodes[0], l ? hi : lo);
        ck_assert_int_eq(m->nodes[1], l ? lo : hi);
    }
    ck_assert_ptr_null(xf_env_location(f.e, f.fwd1, 1));
    ck_assert_ptr_null(xf_env_location(f.e, f.rev1, 0));
    ck_assert_ptr_null(xf_env_location(f.e, -1, 0));
    ck_assert_ptr_null(xf_env_location(f.e, f.n, 0));
    ck_assert_int_eq(xf_env_num_locations(f.e, f.n), 0);
    ck_assert_int_eq(xf_env_num_locations(f.e, -3), 0);
    teardown(&f);
}
END_TEST

START_TEST(step_changes_cost_by_the_peeked_amount)
{
    fixture f;
    setup(&f, NULL);
    costs k = expected_costs(f.cm);
    xf_error err;
    double initial = xf_env_initial_cost(f.e);

    double pk_ms, pk_bytes;
    ck_assert_msg(xf_env_peek(f.e, f.fwd1, 0, &pk_ms, &pk_bytes, &err) == XF_OK, "%s", err.msg);
    assert_close(pk_ms, initial - k.conv.ms - k.relu.ms + k.conv_relu.ms, "peek conv+relu");
    xf_env_step_result r;
    ck_assert_msg(xf_env_step(f.e, f.fwd1, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 1);
    ck_assert_int_eq(r.done, 0);
    assert_close(r.cost_ms, pk_ms, "step cost = peeked cost");
    assert_close(r.bytes, pk_bytes, "step bytes = peeked bytes");
    assert_close(xf_env_cost(f.e), pk_ms, "env cost");
    assert_close(r.reward, (initial - pk_ms) / initial * 100.0, "reward");
    ck_assert(r.reward > 0);
    ck_assert_uint_eq(r.hash, xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY));
    ck_assert_int_eq(xf_env_steps(f.e), 1);
    expect_mask(&f, 0, 1, 1, 0);

    /* the matmul merge: the weight concat is weight-only and free */
    double before = xf_env_cost(f.e);
    ck_assert_msg(xf_env_peek(f.e, f.fwd2, 0, &pk_ms, &pk_bytes, &err) == XF_OK, "%s", err.msg);
    assert_close(pk_ms, before - 2 * k.mm.ms + k.mm_wide.ms + k.split.ms, "peek matmul merge");
    ck_assert_msg(xf_env_step(f.e, f.fwd2, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 1);
    assert_close(r.cost_ms, pk_ms, "step cost = peeked cost (merge)");
    assert_close(r.bytes, pk_bytes, "step bytes = peeked bytes (merge)");
    assert_close(r.reward, (before - pk_ms) / initial * 100.0, "reward (merge)");
    const xf_graph *g = xf_env_graph(f.e);
    int concats = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_CONCAT) {
            concats++;
            ck_assert(xf_graph_index_weight_only(xf_env_index(f.e), g->nodes[i].outputs[0]));
        }
    ck_assert_int_eq(concats, 1);
    expect_mask(&f, 0, 1, 0, 1);

    /* the graph's cost recomputed from scratch agrees */
    xf_op_cost total;
    ck_assert_msg(xf_agent_graph_cost(f.cm, g, xf_env_index(f.e), &total, &err) == XF_OK, "%s",
                  err.msg);
    assert_close(total.ms, xf_env_cost(f.e), "from-scratch cost");

    /* and the reverse restores the original cost */
    ck_assert_msg(xf_env_step(f.e, f.rev2, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 1);
    assert_close(r.cost_ms, before, "cost after the reverse rule");
    teardown(&f);
}
END_TEST

START_TEST(memory_reward)
{
    xf_env_options o = xf_env_options_default();
    o.reward_runtime = 0;
    o.reward_memory = 2;
    fixture f;
    setup(&f, &o);
    xf_error err;
    double pk_ms, pk_bytes;
    ck_assert_msg(xf_env_peek(f.e, f.fwd1, 0, &pk_ms, &pk_bytes, &err) == XF_OK, "%s", err.msg);
    /* the same graph costed once more gives the initial bytes */
    xf_graph_index *ix = NULL;
    xf_graph prepared;
    ck_assert_msg(xf_agent_prepare(&f.t.g, NULL, &prepared, NULL, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_index_build(&prepared, &ix, &err) == XF_OK, "%s", err.msg);
    xf_op_cost init;
    ck_assert_msg(xf_agent_graph_cost(f.cm, &prepared, ix, &init, &err) == XF_OK, "%s", err.msg);
    xf_env_step_result r;
    ck_assert_msg(xf_env_step(f.e, f.fwd1, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert(pk_bytes < init.bytes);
    assert_close(r.reward, 2 * (init.bytes - pk_bytes) / init.bytes * 100.0, "memory reward");
    xf_graph_index_free(ix);
    xf_graph_free(&prepared);
    teardown(&f);
}
END_TEST

START_TEST(invalid_actions_are_penalised_and_change_nothing)
{
    xf_env_options o = xf_env_options_default();
    o.invalid_penalty = -3.5;
    fixture f;
    setup(&f, &o);
    xf_error err;
    uint64_t h0 = xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY);
    double c0 = xf_env_cost(f.e);
    int n_nodes = xf_env_graph(f.e)->n_nodes;
    int bad[][2] = {{f.rev1, 0}, {f.rev2, 0}, {f.fwd1, 1}, {f.fwd1, -1}, {-1, 0},
                    {f.n + 1, 0}, {1 << 30, 0}, {f.fwd2, 1000}};
    int n_bad = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < n_bad; i++) {
        xf_env_step_result r;
        ck_assert_msg(xf_env_step(f.e, bad[i][0], bad[i][1], &r, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(r.valid == 0, "action (%d, %d) accepted", bad[i][0], bad[i][1]);
        ck_assert(r.reward == -3.5);
        ck_assert_int_eq(r.done, 0);
        ck_assert_uint_eq(r.hash, h0);
        ck_assert(r.cost_ms == c0);
        ck_assert_uint_eq(xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY), h0);
        ck_assert_int_eq(xf_env_graph(f.e)->n_nodes, n_nodes);
        double ms, bytes;
        ck_assert_int_eq(xf_env_peek(f.e, bad[i][0], bad[i][1], &ms, &bytes, &err),
                         XF_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "not offered"));
    }
    ck_assert_int_eq(xf_env_steps(f.e), n_bad); /* invalid steps count */
    expect_mask(&f, 1, 0, 1, 0);
    teardown(&f);
}
END_TEST

START_TEST(noop_and_step_limit_end_the_episode)
{
    xf_env_options o = xf_env_options_default();
    o.max_steps = 2;
    fixture f;
    setup(&f, &o);
    xf_error err;
    xf_env_step_result r;
    uint64_t h0 = xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY);
    double ms, bytes;
    ck_assert_msg(xf_env_peek(f.e, f.n, 0, &ms, &bytes, &err) == XF_OK, "%s", err.msg);
    ck_assert(ms == xf_env_cost(f.e));
    ck_assert_msg(xf_env_step(f.e, f.n, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 1);
    ck_assert_int_eq(r.done, 1);
    ck_assert(r.reward == 0);
    ck_assert_uint_eq(r.hash, h0);

    ck_assert_msg(xf_env_reset(f.e, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_env_step(f.e, f.fwd1, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.done, 0);
    ck_assert_msg(xf_env_step(f.e, f.fwd2, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 1);
    ck_assert_int_eq(r.done, 1); /* second of max_steps = 2 */
    teardown(&f);
}
END_TEST

START_TEST(nothing_to_rewrite_is_done)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_ruleset *rs = xf_fx_rules();
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(2, 3, 5, 0, 0));
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_SIGMOID, NULL, x, -1));
    xf_env *e = NULL;
    xf_error err;
    ck_assert_msg(xf_env_create(rs, cm, &g, NULL, &e, &err) == XF_OK, "%s", err.msg);
    const uint8_t *m = xf_env_xfer_mask(e);
    for (int i = 0; i < xf_env_num_xfers(e); i++) ck_assert_int_eq(m[i], 0);
    ck_assert_int_eq(m[xf_env_num_xfers(e)], 1);
    xf_env_step_result r;
    ck_assert_msg(xf_env_step(e, 0, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.valid, 0);
    ck_assert_int_eq(r.done, 1);
    xf_env_free(e);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
    xf_cost_close(cm);
}
END_TEST

START_TEST(reset_and_set_graph_restore_states)
{
    fixture f;
    setup(&f, NULL);
    xf_error err;
    uint64_t h0 = xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY);
    double c0 = xf_env_cost(f.e);
    xf_env_step_result r;
    ck_assert_msg(xf_env_step(f.e, f.fwd1, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_env_step(f.e, f.fwd2, 0, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_ne(r.hash, h0);
    xf_graph keep;
    ck_assert_msg(xf_graph_clone_shared(xf_env_graph(f.e), &keep, &err) == XF_OK, "%s", err.msg);
    double c2 = xf_env_cost(f.e);
    uint64_t h2 = r.hash;

    ck_assert_msg(xf_env_reset(f.e, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_env_cost(f.e) == c0);
    ck_assert(xf_env_cost(f.e) == xf_env_initial_cost(f.e));
    ck_assert_uint_eq(xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY), h0);
    ck_assert_int_eq(xf_env_steps(f.e), 0);
    expect_mask(&f, 1, 0, 1, 0);

    ck_assert_msg(xf_env_set_graph(f.e, &keep, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_env_cost(f.e) == c2);
    ck_assert_uint_eq(xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY), h2);
    expect_mask(&f, 0, 1, 0, 1);
    xf_graph_free(&keep);
    teardown(&f);
}
END_TEST

START_TEST(many_configurations_cost_the_same_through_the_memo)
{
    /* 1,500 distinct relu shapes: the environment's memo grows twice and must
     * still agree with costing every node on the cost model */
    xf_cost_model *cm = xf_fx_cost_model();
    xf_ruleset *rs = xf_fx_rules();
    xf_graph g;
    xf_graph_init(&g);
    for (int k = 1; k <= 1500; k++) {
        int x = xf_fx_input(&g, NULL, xf_fx_shape(2, 3, k, 0, 0));
        xf_fx_output(&g, xf_fx_op(&g, XF_OP_RELU, NULL, x, -1));
    }
    xf_error err;
    xf_env *e = NULL;
    ck_assert_msg(xf_env_create(rs, cm, &g, NULL, &e, &err) == XF_OK, "%s", err.msg);
    xf_op_cost total;
    ck_assert_msg(xf_agent_graph_cost(cm, xf_env_graph(e), xf_env_index(e), &total, &err) == XF_OK,
                  "%s", err.msg);
    ck_assert(total.from_cache); /* the environment asked for each configuration already */
    assert_close(xf_env_initial_cost(e), total.ms, "memo vs cost model");
    ck_assert_msg(xf_env_reset(e, &err) == XF_OK, "%s", err.msg); /* all memo hits now */
    assert_close(xf_env_cost(e), total.ms, "memo hits vs cost model");
    xf_env_free(e);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
    xf_cost_close(cm);
}
END_TEST

/* Two environments: one steps at random (its states take keys and costs
 * over from the state before), the other is set to each resulting graph
 * (everything computed afresh). Masks, locations, costs and hashes agree
 * exactly after every step. The graph: a chain of conv + relu blocks and
 * matmul pairs sharing their left operand, one feeding the next. */
START_TEST(steps_equal_a_fresh_state)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_ruleset *rs = xf_fx_rules();
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
        int w = xf_fx_weight(&g, name, xf_fx_shape(4, 4, 4, 3, 3), 10 + (uint64_t)i);
        x = xf_fx_op(&g, XF_OP_RELU, NULL, xf_fx_op(&g, XF_OP_CONV, &p, x, w), -1);
    }
    xf_fx_output(&g, x);
    int a = xf_fx_input(&g, "a", xf_fx_shape(2, 8, 4, 0, 0));
    for (int i = 0; i < 3; i++) {
        char n1[16], n2[16];
        snprintf(n1, sizeof n1, "m%d", 2 * i);
        snprintf(n2, sizeof n2, "m%d", 2 * i + 1);
        int p1 = xf_fx_op(&g, XF_OP_MATMUL, NULL, a,
                          xf_fx_weight(&g, n1, xf_fx_shape(2, 4, 4, 0, 0), 20 + (uint64_t)i));
        int p2 = xf_fx_op(&g, XF_OP_MATMUL, NULL, a,
                          xf_fx_weight(&g, n2, xf_fx_shape(2, 4, 4, 0, 0), 30 + (uint64_t)i));
        xf_fx_output(&g, p2);
        a = p1;
    }
    xf_fx_output(&g, a);
    xf_env_options o = xf_env_options_default();
    o.max_steps = 20;
    xf_env *e1 = NULL, *e2 = NULL;
    xf_error err;
    ck_assert_msg(xf_env_create(rs, cm, &g, &o, &e1, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_env_create(rs, cm, &g, &o, &e2, &err) == XF_OK, "%s", err.msg);
    int n = xf_env_num_xfers(e1);
    xf_rng rng;
    xf_rng_seed(&rng, 7);
    int valid_steps = 0;
    for (int step = 0; step < 300; step++) {
        const uint8_t *mask = xf_env_xfer_mask(e1);
        int offered = 0;
        for (int r = 0; r < n; r++) offered += mask[r];
        ck_assert_int_gt(offered, 0);
        int pick = (int)(xf_rng_next(&rng) % (uint64_t)offered), r = 0;
        for (; r < n; r++)
            if (mask[r] && pick-- == 0) break;
        int loc = (int)(xf_rng_next(&rng) % (uint64_t)xf_env_num_locations(e1, r));
        xf_env_step_result res;
        ck_assert_msg(xf_env_step(e1, r, loc, &res, &err) == XF_OK, "%s", err.msg);
        valid_steps += res.valid;
        ck_assert_msg(xf_env_set_graph(e2, xf_env_graph(e1), &err) == XF_OK, "%s", err.msg);
        ck_assert(xf_env_cost(e1) == xf_env_cost(e2));
        ck_assert(res.hash == xf_graph_hash_mode(xf_env_graph(e2), XF_HASH_IDENTITY));
        ck_assert(memcmp(xf_env_xfer_mask(e1), xf_env_xfer_mask(e2), (size_t)n + 1) == 0);
        for (int k = 0; k < n; k++) {
            ck_assert_int_eq(xf_env_num_locations(e1, k), xf_env_num_locations(e2, k));
            for (int l = 0; l < xf_env_num_locations(e1, k); l++)
                ck_assert(memcmp(xf_env_location(e1, k, l), xf_env_location(e2, k, l),
                                 sizeof(xf_match)) == 0);
        }
        if (res.done) ck_assert_msg(xf_env_reset(e1, &err) == XF_OK, "%s", err.msg);
    }
    ck_assert_int_gt(valid_steps, 250);
    xf_env_free(e1);
    xf_env_free(e2);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
    xf_cost_close(cm);
}
END_TEST

START_TEST(bad_arguments)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_ruleset *rs = xf_fx_rules();
    env_graph t;
    build_env_graph(&t);
    xf_env_options o = xf_env_options_default();
    o.max_locations = 0;
    xf_env *e = (xf_env *)&o;
    xf_error err;
    ck_assert_int_eq(xf_env_create(rs, cm, &t.g, &o, &e, &err), XF_ERR_INVALID);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(err.msg, "max_locations"));
    ck_assert_int_eq(xf_env_create(NULL, cm, &t.g, NULL, &e, &err), XF_ERR_INVALID);
    xf_env_free(NULL);
    xf_ruleset_free(rs);
    xf_graph_free(&t.g);
    xf_cost_close(cm);
}
END_TEST

START_TEST(a_prepared_model_gives_the_same_environment)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_ruleset *rs = xf_fx_rules();
    env_graph t;
    build_env_graph(&t);
    xf_error err = {0};
    xf_env *a = NULL, *b = NULL;
    ck_assert_msg(xf_env_create(rs, cm, &t.g, NULL, &a, &err) == XF_OK, "%s", err.msg);
    xf_graph prepared;
    xf_prepare_stats ps;
    ck_assert_int_eq(xf_agent_prepare(&t.g, NULL, &prepared, &ps, &err), XF_OK);
    ck_assert_msg(xf_env_create_prepared(rs, cm, &prepared, &ps, NULL, &b, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(prepared.n_nodes, 0); /* taken over */
    ck_assert(xf_env_initial_cost(a) == xf_env_initial_cost(b));
    ck_assert(xf_env_hash(a) == xf_env_hash(b));
    ck_assert_int_eq(memcmp(xf_env_prepare_stats(a), xf_env_prepare_stats(b), sizeof ps), 0);
    for (int r = 0; r <= xf_env_num_xfers(a); r++) {
        ck_assert_int_eq(xf_env_xfer_mask(a)[r], xf_env_xfer_mask(b)[r]);
        ck_assert_int_eq(xf_env_num_locations(a, r), xf_env_num_locations(b, r));
    }
    xf_env_free(b);
    /* a bad option still leaves the prepared graph empty (freed) */
    ck_assert_int_eq(xf_agent_prepare(&t.g, NULL, &prepared, NULL, &err), XF_OK);
    xf_env_options o = xf_env_options_default();
    o.max_steps = 0;
    ck_assert_int_eq(xf_env_create_prepared(rs, cm, &prepared, NULL, &o, &b, &err),
                     XF_ERR_INVALID);
    ck_assert_ptr_null(b);
    ck_assert_int_eq(prepared.n_nodes, 0);
    xf_env_free(a);
    xf_ruleset_free(rs);
    xf_graph_free(&t.g);
    xf_cost_close(cm);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_env");
    TCase *tc = tcase_create("env");
    tcase_add_test(tc, graph_cost_sums_nodes_and_skips_weight_only);
    tcase_add_test(tc, masks_locations_and_initial_cost);
    tcase_add_test(tc, step_changes_cost_by_the_peeked_amount);
    tcase_add_test(tc, memory_reward);
    tcase_add_test(tc, invalid_actions_are_penalised_and_change_nothing);
    tcase_add_test(tc, noop_and_step_limit_end_the_episode);
    tcase_add_test(tc, nothing_to_rewrite_is_done);
    tcase_add_test(tc, reset_and_set_graph_restore_states);
    tcase_add_test(tc, many_configurations_cost_the_same_through_the_memo);
    tcase_add_test(tc, steps_equal_a_fresh_state);
    tcase_add_test(tc, bad_arguments);
    tcase_add_test(tc, a_prepared_model_gives_the_same_environment);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
