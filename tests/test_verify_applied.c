/*
 * test_verify_applied.c — a rule the verifier proves is applied by the
 * matcher only where it holds: each rule below goes through xf_verify_db
 * (a fresh rules database, the verdict and domain the worker stores), is
 * loaded as the agent loads rules (xf_ruleset_load, proved ones, one
 * direction) and applied at every location the matcher finds in a model
 * graph at a shape where the rule, read one way or another, is false; every
 * rewrite must compute what the model computes (in floats). Where the rule
 * is true at the model's shapes, it must still be applied (the fix keeps
 * correct rules). Each case is a finding of a read-only review, reproduced:
 *  - an unequal target split whose parts the target reads (review 41d F3):
 *    concat0(x[1:4], x[0:1]) => concat0(s1, s0), (s0, s1) = split0{1,3}(x);
 *  - a slice "to the end" (end INT32_MAX) in the source (review 41d F4):
 *    mean[-1](x[:, 0:end]) => mean[-1](x), on a model's x[:, 0:4] of 6;
 *  - a source generator tied to an input only by a broadcast (review 41d
 *    F5): transpose(x + I) => transpose(x) + I, on a model's I of 1x1;
 *    and broadcast over a batch as the rule's inputs are (review 42d L1):
 *    transpose(x + I) => transpose(x) + transpose(I) on x of 2x4x4, I 4x4,
 *    where it holds and is applied;
 *  - a derived rule whose step's slice "to the end" bound the rule's slice
 *    of its own size (review 42d M1): neg(mean[-1](x[:, 0:4])) =>
 *    neg(mean[-1](x)), derived from the rule above, on x[:, 0:4] of 6;
 *    and the other way round, a step's x[:, 0:4] bound to the rule's
 *    slice to the end, on the whole of x of 6;
 *  - source generators sized only by each other (review 43e F1, F4):
 *    rule 171411 of the 4-op database, and the same with two pools, on
 *    pools of 3x5; m0 * (I J) => m0 * I and m0 * (I (J K)) => m0 * I on
 *    identities of 1x1;
 *  - a source pool its conv's input does not size at the rule's own shapes
 *    (review 44a F1): maxpool(maxpool(conv(q0, const_pool[4x1x3x3]))) =>
 *    four copies of maxpool(avgpool(q0)), q0 of 1x1x2x2, on q0 of 3x3 and
 *    4x4; the same with one maxpool less on each side stays proved;
 *  - a target generator its consumer does not size at the rule's own
 *    shapes (review 44a F2): transpose(x + I[1x1]) => transpose(x) +
 *    I[1x1], x of 4x4, on x of 4x4 and 3x3;
 *  - a derived rule whose step holds its generator at the step's own shape
 *    (review 44a F3): relu(x + I[1x1]) => relu(x + ones[1x1]), x of 1x1,
 *    derived from x + I[1x1] => x + ones[1x1] at x 3x3, on x and I of 3x3.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "derive/derive.h"
#include "match/match.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"
#include "verify/verify.h"

static xf_params slice_of(int axis, int64_t start, int64_t end)
{
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = axis, p.starts[0] = start, p.ends[0] = end, p.steps[0] = 1;
    return p;
}

static int concat_of(xf_graph *g, int axis, int a, int b)
{
    xf_params p = xf_params_default();
    p.axis = axis;
    return xf_test_op2(g, XF_OP_CONCAT, &p, a, b);
}

static xf_params mean_last(void)
{
    xf_params p = xf_params_default();
    p.n_axes = 1;
    p.axes[0] = -1;
    p.keepdims = 1;
    return p;
}

/* r verified through xf_verify_db in a fresh database; 1 when proved.
 * Frees r. */
static int verified(xf_rule *r, const char *path)
{
    xf_test_remove_db(path);
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    int64_t id;
    ck_assert_msg(xf_rulesdb_add_rule(db, r, NULL, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(r);
    xf_verify_db_options o;
    xf_verify_db_options_init(&o);
    o.jobs = 1;
    o.vo.timeout_ms = 20000;
    o.version = "test";
    xf_verify_tally t;
    ck_assert_msg(xf_verify_db(db, path, &o, &t, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_close(db);
    return t.proved == 1;
}

/* Every location of the database's proved rules (and derived ones with
 * `derived`, as the agent loads them with derived rules on) in g applied,
 * one at a time: each rewrite computes g's function. Returns the
 * locations. */
static int applied_soundly_with(const char *path, const xf_graph *g, int derived)
{
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.both_directions = 0;
    ro.derived = derived;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_load(path, &ro, &rs, &err) == XF_OK, "%s", err.msg);
    xf_graph_index *ix = NULL;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    int total = 0;
    for (int a = 0; a < xf_ruleset_count(rs); a++) {
        xf_match m[8];
        int n = 0;
        ck_assert_msg(xf_match_rule(rs, a, g, ix, m, 8, &n, &err) == XF_OK, "%s", err.msg);
        for (int i = 0; i < n && i < 8; i++) {
            xf_graph out;
            ck_assert_msg(xf_match_apply(rs, g, ix, &m[i], &out, &err) == XF_OK, "%s", err.msg);
            xf_test_expect_same_function(g, &out, 7, 1e-4);
            xf_graph_free(&out);
            total++;
        }
    }
    xf_graph_index_free(ix);
    xf_ruleset_free(rs);
    return total;
}

static int applied_soundly(const char *path, const xf_graph *g)
{
    return applied_soundly_with(path, g, 0);
}

/* ---------------------------------------------- an unequal target split */

/* x rotated by one along axis 0: concat0(x[1:n], x[0:1]) for x of n x 3. */
static int rotated(xf_graph *g, int x, int64_t n)
{
    xf_params tail = slice_of(0, 1, n), head = slice_of(0, 0, 1);
    return concat_of(g, 0, xf_test_op2(g, XF_OP_SLICE, &tail, x, -1),
                     xf_test_op2(g, XF_OP_SLICE, &head, x, -1));
}

/* concat0(x[1:4], x[0:1]) => concat0(s1, s0), (s0, s1) = split0{1,3}(x),
 * x of 4x3 (review 41d, finding 3): the target reads both parts, so the
 * matcher cannot size them from the matched outputs; the proof and the
 * domain use the rule's own 1/3. */
static void rule_rotation_by_split(xf_rule *r)
{
    static const int64_t d43[2] = {4, 3};
    xf_rule_init(r);
    int s = xf_test_input(&r->src, "x", 2, d43), t = xf_test_input(&r->dst, "x", 2, d43);
    xf_test_out(&r->src, rotated(&r->src, s, 4));
    xf_params sp = xf_params_default();
    sp.axis = 0;
    sp.n_split = 2;
    sp.split[0] = 1, sp.split[1] = 3;
    int n = xf_graph_add_node(&r->dst, XF_OP_SPLIT, &sp, &t, 1, 2, NULL, NULL);
    ck_assert_int_ge(n, 0);
    xf_test_out(&r->dst, concat_of(&r->dst, 0, r->dst.nodes[n].outputs[1], r->dst.nodes[n].outputs[0]));
}

/* The model x of rows x 3 rotated by one as the rule's source is. */
static void rotation_model(xf_graph *g, int64_t rows)
{
    const int64_t d[2] = {rows, 3};
    xf_graph_init(g);
    xf_test_out(g, rotated(g, xf_test_input(g, "x", 2, d), rows));
}

START_TEST(unequal_target_split_read_by_the_target)
{
    const char *path = xf_test_tmp("applied_split.db");
    xf_rule r;
    rule_rotation_by_split(&r);
    ck_assert(verified(&r, path));
    xf_graph g;
    for (int64_t rows = 2; rows <= 8; rows++) {
        rotation_model(&g, rows);
        int n = applied_soundly(path, &g);
        if (rows == 4) ck_assert_int_eq(n, 1); /* its own rows: applied */
        xf_graph_free(&g);
    }
    xf_test_remove_db(path);
}
END_TEST

/* ------------------------------------------------- a slice to the end */

/* An empty rule r with input x of 2x4 on both sides: *s in the source,
 * *t in the target. */
static void rule_of_x(xf_rule *r, int *s, int *t)
{
    static const int64_t d24[2] = {2, 4};
    xf_rule_init(r);
    *s = xf_test_input(&r->src, "x", 2, d24);
    *t = xf_test_input(&r->dst, "x", 2, d24);
}

/* mean[-1](x[:, 0:end]) in g. */
static int mean_of_slice(xf_graph *g, int x, int64_t end)
{
    xf_params sl = slice_of(-1, 0, end), mp = mean_last();
    return xf_test_op2(g, XF_OP_REDUCE_MEAN, &mp, xf_test_op2(g, XF_OP_SLICE, &sl, x, -1), -1);
}

/* mean[-1](x[:, 0:end]) => mean[-1](x), x of 2x4, end INT32_MAX (review
 * 41d, finding 4): true where the slice reaches the end of the axis. */
static void rule_mean_of_slice_to_the_end(xf_rule *r)
{
    int s, t;
    rule_of_x(r, &s, &t);
    xf_params mp = mean_last();
    xf_test_out(&r->src, mean_of_slice(&r->src, s, INT32_MAX));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_REDUCE_MEAN, &mp, t, -1));
}

/* The model mean[-1](x[:, 0:end]) for x of 2 x width. */
static void mean_of_slice_model(xf_graph *g, int64_t width, int64_t end)
{
    const int64_t d[2] = {2, width};
    xf_graph_init(g);
    xf_test_out(g, mean_of_slice(g, xf_test_input(g, "x", 2, d), end));
}

START_TEST(slice_to_the_end_matches_only_to_the_end)
{
    const char *path = xf_test_tmp("applied_slice.db");
    xf_rule r;
    rule_mean_of_slice_to_the_end(&r);
    ck_assert(verified(&r, path));
    xf_graph g;
    mean_of_slice_model(&g, 6, 4); /* 4 of 6: not to the end */
    applied_soundly(path, &g);
    xf_graph_free(&g);
    mean_of_slice_model(&g, 6, 6); /* to the end, written as the width */
    ck_assert_int_eq(applied_soundly(path, &g), 1);
    xf_graph_free(&g);
    mean_of_slice_model(&g, 6, INT32_MAX); /* to the end */
    ck_assert_int_eq(applied_soundly(path, &g), 1);
    xf_graph_free(&g);
    xf_test_remove_db(path);
}
END_TEST

/* ------------------------------ a derived rule's step slicing to the end */

/* neg(mean[-1](x[:, 0:4])) => neg(mean[-1](x)), x of 2x4 (review 42d,
 * M1): true where x has 4 columns. It follows in one step from the rule
 * above, whose slice to the end binds this x[:, 0:4] (at x's own 4
 * columns that slice reaches the end); the step says nothing of 4 columns
 * out of 6. */
static void rule_neg_mean_of_four(xf_rule *r)
{
    int s, t;
    rule_of_x(r, &s, &t);
    xf_params mp = mean_last();
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_NEG, NULL, mean_of_slice(&r->src, s, 4), -1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_NEG, NULL,
                                     xf_test_op2(&r->dst, XF_OP_REDUCE_MEAN, &mp, t, -1), -1));
}

/* The model neg(mean[-1](x[:, 0:4])) for x of 2 x width. */
static void neg_mean_of_four_model(xf_graph *g, int64_t width)
{
    const int64_t d[2] = {2, width};
    xf_graph_init(g);
    xf_test_out(g, xf_test_op2(g, XF_OP_NEG, NULL, mean_of_slice(g, xf_test_input(g, "x", 2, d), 4),
                               -1));
}

/* The rules of `make` (a step, then a rule that follows from it in one
 * step) decided as xferverify decides a database (xf_derive_verify_db:
 * size by size, deriving before the solver) in a fresh database at path:
 * the step must be proved and the rule derived from it; the rule's stored
 * validity domain must be `domain` (NULL: not compared). With
 * step_proved the step is stored proved (a fact the solver need not find)
 * and only the rule is decided. */
static void derived_with_domain(const char *path, void (*const make[2])(xf_rule *),
                                const char *domain, int step_proved)
{
    xf_test_remove_db(path);
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    int64_t id[2];
    for (int k = 0; k < 2; k++) {
        xf_rule r;
        make[k](&r);
        xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
        ck_assert_msg(xf_rulesdb_add_rule(db, &r, k == 0 && step_proved ? &proved : NULL, &id[k],
                                          NULL, &err) == XF_OK,
                      "%s", err.msg);
        xf_rule_free(&r);
    }
    xf_derive_verify_options o;
    xf_derive_verify_options_init(&o);
    o.vopt.jobs = 1;
    o.vopt.vo.timeout_ms = 20000;
    o.vopt.version = "test";
    xf_verify_tally t;
    int64_t derived = 0;
    ck_assert_msg(xf_derive_verify_db(db, path, &o, &t, &derived, &err) == XF_OK, "%s", err.msg);
    for (int k = 0; k < 2; k++) {
        xf_rulesdb_rule_info info;
        xf_rulesdb_rule_info_init(&info);
        ck_assert_int_eq(xf_rulesdb_get_rule(db, id[k], &info, &err), XF_OK);
        ck_assert_int_eq(info.status, k ? XF_RULE_DERIVED : XF_RULE_PROVED);
        if (k && domain) {
            ck_assert_ptr_nonnull(info.domain);
            ck_assert_str_eq(info.domain, domain);
        }
        xf_rulesdb_rule_info_free(&info);
    }
    xf_rulesdb_close(db);
}

/* The step and the rule above: the rule derived and stored where its chain
 * holds, x's own 4 columns; loaded as the agent loads derived rules, it is
 * applied at 2x4, never to the 4 columns of 6 (it was, with "x[-1] >= 4",
 * and the mean changed). */
START_TEST(derived_rule_keeps_its_steps_slice_to_the_end)
{
    const char *path = xf_test_tmp("applied_derived_slice.db");
    void (*const make[2])(xf_rule *) = {rule_mean_of_slice_to_the_end, rule_neg_mean_of_four};
    derived_with_domain(path, make, "x[-1] == 4", 0);
    xf_graph g;
    neg_mean_of_four_model(&g, 6); /* 4 of 6 columns: neither rule holds */
    ck_assert_int_eq(applied_soundly_with(path, &g, 1), 0);
    xf_graph_free(&g);
    neg_mean_of_four_model(&g, 4); /* its own: the step and the derived rule */
    ck_assert_int_eq(applied_soundly_with(path, &g, 1), 2);
    xf_graph_free(&g);
    xf_test_remove_db(path);
}
END_TEST

/* relu(x[:, 0:4]) => relu(x)[:, 0:4], x of 2x4: true where x has 4
 * columns or more. */
static void rule_relu_of_four(xf_rule *r)
{
    int s, t;
    rule_of_x(r, &s, &t);
    xf_params sl = slice_of(-1, 0, 4);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_RELU, NULL,
                                     xf_test_op2(&r->src, XF_OP_SLICE, &sl, s, -1), -1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_SLICE, &sl,
                                     xf_test_op2(&r->dst, XF_OP_RELU, NULL, t, -1), -1));
}

/* mean[-1](relu(x[:, 0:end])) in g. */
static int mean_of_relu_of_slice(xf_graph *g, int x, int64_t end)
{
    xf_params sl = slice_of(-1, 0, end), mp = mean_last();
    int cut = xf_test_op2(g, XF_OP_SLICE, &sl, x, -1);
    return xf_test_op2(g, XF_OP_REDUCE_MEAN, &mp, xf_test_op2(g, XF_OP_RELU, NULL, cut, -1), -1);
}

/* mean[-1](relu(x[:, 0:end])) => mean[-1](relu(x)[:, 0:4]), x of 2x4, end
 * INT32_MAX: true where x has 4 columns. It follows in one step from the
 * rule above, whose slice [0:4] binds this slice to the end (x's own 4
 * columns); the step says nothing of the whole of 6 columns. */
static void rule_mean_of_relu_to_the_end(xf_rule *r)
{
    int s, t;
    rule_of_x(r, &s, &t);
    xf_params sl = slice_of(-1, 0, 4), mp = mean_last();
    xf_test_out(&r->src, mean_of_relu_of_slice(&r->src, s, INT32_MAX));
    int cut = xf_test_op2(&r->dst, XF_OP_SLICE, &sl, xf_test_op2(&r->dst, XF_OP_RELU, NULL, t, -1), -1);
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_REDUCE_MEAN, &mp, cut, -1));
}

/* The same the other way round: a step's slice of a finite end bound to
 * the rule's slice to the end, the rule stored at x's own 4 columns,
 * applied there and never to a model's x of 6 (it was, with "x[-1] >= 4",
 * the target's mean of 4 columns against the source's of 6). */
START_TEST(derived_rule_keeps_its_steps_slice_end)
{
    const char *path = xf_test_tmp("applied_derived_end.db");
    void (*const make[2])(xf_rule *) = {rule_relu_of_four, rule_mean_of_relu_to_the_end};
    derived_with_domain(path, make, "x[-1] == 4", 0);
    for (int64_t width = 4; width <= 6; width += 2) { /* its own: the step and the rule */
        const int64_t d[2] = {2, width};
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, mean_of_relu_of_slice(&g, xf_test_input(&g, "x", 2, d), INT32_MAX));
        ck_assert_int_eq(applied_soundly_with(path, &g, 1), width == 4 ? 2 : 0);
        xf_graph_free(&g);
    }
    xf_test_remove_db(path);
}
END_TEST

/* ------------------------------------ a source generator that broadcasts */

/* The identity matrix of n x n, a generator of g. */
static int identity(xf_graph *g, int64_t n)
{
    xf_params ip = xf_params_default();
    ip.n_shape = 2;
    ip.shape[0] = ip.shape[1] = n;
    return xf_test_op2(g, XF_OP_CONST_IDENTITY_MATRIX, &ip, -1, -1);
}

static xf_params transposed(void)
{
    xf_params tp = xf_params_default();
    tp.n_axes = 2;
    tp.axes[0] = 1, tp.axes[1] = 0;
    return tp;
}

/* transpose(x + I) => transpose(x) + I, x and I of 4x4 (review 41d, F5):
 * true where I is x's size; the sum's broadcast ties I to x only softly
 * (equal or 1). */
static void rule_transpose_plus_identity(xf_rule *r)
{
    static const int64_t d44[2] = {4, 4};
    xf_rule_init(r);
    int s = xf_test_input(&r->src, "x", 2, d44), t = xf_test_input(&r->dst, "x", 2, d44);
    xf_params tp = transposed();
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_TRANSPOSE, &tp,
                            xf_test_op2(&r->src, XF_OP_ADD, NULL, s, identity(&r->src, 4)), -1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL,
                                     xf_test_op2(&r->dst, XF_OP_TRANSPOSE, &tp, t, -1),
                                     identity(&r->dst, 4)));
}

START_TEST(source_generator_that_broadcasts)
{
    const char *path = xf_test_tmp("applied_generator.db");
    xf_rule r;
    rule_transpose_plus_identity(&r);
    ck_assert(verified(&r, path));
    static const int64_t d44[2] = {4, 4};
    for (int64_t n = 1; n <= 4; n *= 4) { /* I of 1x1 (broadcast: all ones), of 4x4 */
        xf_graph g;
        xf_graph_init(&g);
        xf_params tp = transposed();
        int x = xf_test_input(&g, "x", 2, d44);
        int sum = xf_test_op2(&g, XF_OP_ADD, NULL, x, identity(&g, n));
        xf_test_out(&g, xf_test_op2(&g, XF_OP_TRANSPOSE, &tp, sum, -1));
        ck_assert_int_eq(applied_soundly(path, &g), n == 4); /* 1x1: never */
        xf_graph_free(&g);
    }
    xf_test_remove_db(path);
}
END_TEST

/* transpose(x + I) => transpose(x) + transpose(I), x and I of 4x4: the
 * target's I is the rule's own (a transpose does not size it). */
static void rule_transpose_plus_identity_each(xf_rule *r)
{
    static const int64_t d44[2] = {4, 4};
    xf_rule_init(r);
    int s = xf_test_input(&r->src, "x", 2, d44), t = xf_test_input(&r->dst, "x", 2, d44);
    xf_params tp = transposed();
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_TRANSPOSE, &tp,
                            xf_test_op2(&r->src, XF_OP_ADD, NULL, s, identity(&r->src, 4)), -1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL,
                                     xf_test_op2(&r->dst, XF_OP_TRANSPOSE, &tp, t, -1),
                                     xf_test_op2(&r->dst, XF_OP_TRANSPOSE, &tp,
                                                 identity(&r->dst, 4), -1)));
}

/* The rule above at a batch of two x (2x4x4) plus the identity of n x n,
 * its last two axes transposed. */
static void batched_transpose_plus_identity(xf_graph *g, int64_t n)
{
    static const int64_t d244[3] = {2, 4, 4};
    xf_params tp = xf_params_default();
    tp.n_axes = 3;
    tp.axes[0] = 0, tp.axes[1] = 2, tp.axes[2] = 1;
    xf_graph_init(g);
    int sum = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_input(g, "x", 3, d244), identity(g, n));
    xf_test_out(g, xf_test_op2(g, XF_OP_TRANSPOSE, &tp, sum, -1));
}

/* A source generator at the rule's rank against a batched operand (review
 * 42d, L1): the identity of 4x4 added to each 4x4 of x[2,4,4] is the
 * rule's own broadcast, batched as the rule's inputs are, and true there:
 * applied (the matcher refused it on main, the model's I not of x's
 * shape). An I of 1x1 broadcasts as ones within the rule's axes: never. */
START_TEST(source_generator_broadcast_over_a_batch)
{
    const char *path = xf_test_tmp("applied_batched_generator.db");
    xf_rule r;
    rule_transpose_plus_identity_each(&r);
    ck_assert(verified(&r, path));
    xf_graph g;
    batched_transpose_plus_identity(&g, 4);
    ck_assert_int_eq(applied_soundly(path, &g), 1);
    xf_graph_free(&g);
    batched_transpose_plus_identity(&g, 1);
    ck_assert_int_eq(applied_soundly(path, &g), 0);
    xf_graph_free(&g);
    xf_test_remove_db(path);
}
END_TEST

/* --------------------------------- generators sized by each other only */

/* matmul(mean[-1,keepdims](ewmul(P, Q)), w2) for two const_pool[4x1x3 x
 * kw], or ewmul(P, P) for one when `self`. */
static int mean_of_pool_product(xf_graph *g, int w2, int64_t kw, int self)
{
    xf_params pp = xf_params_default(), mp = mean_last();
    pp.n_shape = 4;
    pp.shape[0] = 4, pp.shape[1] = 1, pp.shape[2] = 3, pp.shape[3] = kw;
    int p = xf_test_op2(g, XF_OP_CONST_POOL, &pp, -1, -1);
    int pq = xf_test_op2(g, XF_OP_MUL, NULL, p,
                         self ? p : xf_test_op2(g, XF_OP_CONST_POOL, &pp, -1, -1));
    return xf_test_op2(g, XF_OP_MATMUL, NULL, xf_test_op2(g, XF_OP_REDUCE_MEAN, &mp, pq, -1), w2);
}

/* mean_of_pool_product(w2, 3) => mean[-1,keepdims](avgpool(enlarge[3x3](
 * avgpool(w2)))), avgpool 3x3 same with the padding counted, w2 4x4x1x1:
 * rule 171411 of the 4-op database when `self` (review 43e, F1), w/81 on
 * both sides where the pools are 3x3. */
static void rule_mean_of_pool_product(xf_rule *r, int self)
{
    static const int64_t w2d[4] = {4, 4, 1, 1};
    xf_rule_init(r);
    int s = xf_test_input(&r->src, "w2", 4, w2d), t = xf_test_input(&r->dst, "w2", 4, w2d);
    xf_test_out(&r->src, mean_of_pool_product(&r->src, s, 3, self));
    xf_params ap = xf_params_default(), ep = xf_params_default(), mp = mean_last();
    ap.kernel[0] = ap.kernel[1] = ep.kernel[0] = ep.kernel[1] = 3;
    ap.stride[0] = ap.stride[1] = 1;
    for (int i = 0; i < 4; i++) ap.pads[i] = 1;
    ap.count_include_pad = 1;
    int e = xf_test_op2(&r->dst, XF_OP_ENLARGE, &ep,
                        xf_test_op2(&r->dst, XF_OP_AVGPOOL, &ap, t, -1), -1);
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_REDUCE_MEAN, &mp,
                                     xf_test_op2(&r->dst, XF_OP_AVGPOOL, &ap, e, -1), -1));
}

/* Proved by the exact check at the own shapes, with its domain (w2[-4] ==
 * 4; w2[-2] == 1; w2[-1] == 1); nothing there holds the pools' kernel, and
 * until 2026-12-01 each pool was held only to the other's size (P of
 * ewmul(P, P) to its own): at 3x5 the source is w/225, the target w/81. */
START_TEST(generators_sized_only_by_each_other)
{
    static const int64_t w2d[4] = {4, 4, 1, 1};
    for (int self = 0; self < 2; self++) {
        const char *path = xf_test_tmp("applied_pools.db");
        xf_rule r;
        rule_mean_of_pool_product(&r, self);
        ck_assert(verified(&r, path));
        for (int64_t kw = 3; kw <= 5; kw += 2) {
            xf_graph g;
            xf_graph_init(&g);
            xf_test_out(&g, mean_of_pool_product(&g, xf_test_input(&g, "w2", 4, w2d), kw, self));
            int found = applied_soundly(path, &g);
            if (kw == 3) ck_assert_int_gt(found, 0); /* P and Q either way round */
            else ck_assert_int_eq(found, 0);
            xf_graph_free(&g);
        }
        xf_test_remove_db(path);
    }
}
END_TEST

/* m0 * matmul(I, J) for identities I and J of n x n, or m0 * matmul(I,
 * matmul(J, K)) when `chain`. */
static int times_identity_product(xf_graph *g, int m0, int64_t n, int chain)
{
    int right = identity(g, n);
    if (chain) right = xf_test_op2(g, XF_OP_MATMUL, NULL, right, identity(g, n));
    return xf_test_op2(g, XF_OP_MUL, NULL, m0,
                       xf_test_op2(g, XF_OP_MATMUL, NULL, identity(g, n), right));
}

/* times_identity_product(m0) => m0 * I, all of 4x4 (review 43e, F1): the
 * product of identities is I, and the target's I is sized from m0. */
static void rule_identity_product(xf_rule *r, int chain)
{
    static const int64_t d44[2] = {4, 4};
    xf_rule_init(r);
    int s = xf_test_input(&r->src, "m0", 2, d44), t = xf_test_input(&r->dst, "m0", 2, d44);
    xf_test_out(&r->src, times_identity_product(&r->src, s, 4, chain));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_MUL, NULL, t, identity(&r->dst, 4)));
}

/* The identities of matmul(I, J) sized only by each other, and those of
 * matmul(I, matmul(J, K)): J and K so, I by their product (review 43e, F4).
 * Until 2026-12-01 a model's identities of 1x1 were bound, where the
 * source is m0 (broadcast) and the target diag(m0). */
START_TEST(identities_sized_only_by_each_other)
{
    static const int64_t d44[2] = {4, 4};
    for (int chain = 0; chain < 2; chain++) {
        const char *path = xf_test_tmp("applied_identities.db");
        xf_rule r;
        rule_identity_product(&r, chain);
        ck_assert(verified(&r, path));
        for (int64_t n = 1; n <= 4; n *= 4) {
            xf_graph g;
            xf_graph_init(&g);
            xf_test_out(&g, times_identity_product(&g, xf_test_input(&g, "m0", 2, d44), n, chain));
            int found = applied_soundly(path, &g);
            ck_assert_msg(found == (n == 4), "%s, identities of %lldx%lld: %d location(s)",
                          chain ? "I (J K)" : "I J", (long long)n, (long long)n, found);
            xf_graph_free(&g);
        }
        xf_test_remove_db(path);
    }
}
END_TEST

/* --------------------------- generators their consumer does not size */

/* A generator op of shape d[0..rank) in g. */
static int generator(xf_graph *g, xf_op op, int rank, const int64_t *d)
{
    xf_params p = xf_params_default();
    p.n_shape = rank;
    for (int i = 0; i < rank; i++) p.shape[i] = d[i];
    return xf_test_op2(g, op, &p, -1, -1);
}

/* A 3x3 window, stride 1, 'same' (padding 1), its padding counted for an
 * average when count_pad. */
static xf_params window3(int count_pad)
{
    xf_params ap = xf_params_default();
    ap.kernel[0] = ap.kernel[1] = 3;
    ap.stride[0] = ap.stride[1] = 1;
    for (int i = 0; i < 4; i++) ap.pads[i] = 1;
    ap.count_include_pad = count_pad;
    return ap;
}

/* maxpool^n(conv(q0, const_pool[4x1x3x3])), 3x3 windows 'same' (n of 1
 * or 2). */
static int pooled_conv(xf_graph *g, int q0, int n)
{
    static const int64_t pd[4] = {4, 1, 3, 3};
    xf_params cp = window3(0), mp = window3(0);
    cp.group = 1;
    int y = xf_test_op2(g, XF_OP_CONV, &cp, q0, generator(g, XF_OP_CONST_POOL, 4, pd));
    for (int i = 0; i < n; i++) y = xf_test_op2(g, XF_OP_MAXPOOL, &mp, y, -1);
    return y;
}

/* Four copies along the channels of maxpool^n(avgpool(q0)), the average
 * counting the padding: what pooled_conv(q0, n) computes for q0 of one
 * channel. */
static int four_pooled(xf_graph *g, int q0, int n)
{
    xf_params ap = window3(1), mp = window3(0), cc = xf_params_default();
    cc.axis = 1;
    int m = xf_test_op2(g, XF_OP_AVGPOOL, &ap, q0, -1);
    for (int i = 0; i < n; i++) m = xf_test_op2(g, XF_OP_MAXPOOL, &mp, m, -1);
    int mm = xf_test_op2(g, XF_OP_CONCAT, &cc, m, m);
    return xf_test_op2(g, XF_OP_CONCAT, &cc, mm, mm);
}

/* pooled_conv(q0, n) => four_pooled(q0, 1), q0 of 1x1x2x2 (review 44a,
 * F1). With n = 2, true at 2x2 (one 3x3 max already is the global max)
 * and false from 3x3; the conv's input, of one channel, gives the pool one
 * channel, not its own four, so until 2026-12-01 the bounded check sized it
 * so at every other shape, found none admissible near the ends and proved
 * the rule, which the matcher applied at 3x3 with the stored pool (0.137
 * off). With n = 1 it is true at every size and stays proved. */
START_TEST(pool_not_sized_by_its_conv)
{
    static const int64_t qd[4] = {1, 1, 2, 2};
    for (int n = 1; n <= 2; n++) {
        const char *path = xf_test_tmp("applied_pool_conv.db");
        xf_rule r;
        xf_rule_init(&r);
        xf_test_out(&r.src, pooled_conv(&r.src, xf_test_input(&r.src, "q0", 4, qd), n));
        xf_test_out(&r.dst, four_pooled(&r.dst, xf_test_input(&r.dst, "q0", 4, qd), 1));
        int proved = verified(&r, path);
        ck_assert_msg(proved == (n == 1), "%d maxpool(s): proved %d", n, proved);
        for (int64_t hw = 2; hw <= 4; hw++) {
            const int64_t md[4] = {1, 1, hw, hw};
            xf_graph g;
            xf_graph_init(&g);
            xf_test_out(&g, pooled_conv(&g, xf_test_input(&g, "q0", 4, md), n));
            int found = applied_soundly(path, &g);
            if (n == 1) ck_assert_int_eq(found, 1); /* true at every size: applied */
            xf_graph_free(&g);
        }
        xf_test_remove_db(path);
    }
}
END_TEST

/* transpose(x + I[1x1]) for x of n x n. */
static int transposed_plus_one(xf_graph *g, int64_t n)
{
    static const int64_t d11[2] = {1, 1};
    const int64_t dx[2] = {n, n};
    xf_params tp = transposed();
    int sum = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_input(g, "x", 2, dx),
                          generator(g, XF_OP_CONST_IDENTITY_MATRIX, 2, d11));
    return xf_test_op2(g, XF_OP_TRANSPOSE, &tp, sum, -1);
}

/* transpose(x + I[1x1]) => transpose(x) + I[1x1], x of 4x4 (review 44a,
 * F2): true as stored (both sides add 1), proved by the axioms. The
 * target's identity, read by the sum with transpose(x), was sized to x's
 * 4x4 until 2026-12-01, though at the rule's own shapes that is not its
 * own 1x1: the rewrite added the identity, 1 off at 4x4 and at 3x3. */
START_TEST(target_generator_not_sized_by_its_consumer)
{
    static const int64_t d44[2] = {4, 4}, d11[2] = {1, 1};
    const char *path = xf_test_tmp("applied_target_generator.db");
    xf_rule r;
    xf_rule_init(&r);
    xf_params tp = transposed();
    xf_test_out(&r.src, transposed_plus_one(&r.src, 4));
    int t = xf_test_input(&r.dst, "x", 2, d44);
    xf_test_out(&r.dst, xf_test_op2(&r.dst, XF_OP_ADD, NULL,
                                    xf_test_op2(&r.dst, XF_OP_TRANSPOSE, &tp, t, -1),
                                    generator(&r.dst, XF_OP_CONST_IDENTITY_MATRIX, 2, d11)));
    ck_assert(verified(&r, path));
    for (int64_t n = 3; n <= 4; n++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, transposed_plus_one(&g, n));
        ck_assert_int_eq(applied_soundly(path, &g), 1); /* true at both: applied, soundly */
        xf_graph_free(&g);
    }
    xf_test_remove_db(path);
}
END_TEST

/* [relu](x + I[1x1]) for x of n x n, I const_imatrix or const_ones (op)
 * of m x m. */
static int plus_generator(xf_graph *g, int64_t n, xf_op op, int64_t m, int relu)
{
    const int64_t dx[2] = {n, n}, dg[2] = {m, m};
    int y = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_input(g, "x", 2, dx), generator(g, op, 2, dg));
    return relu ? xf_test_op2(g, XF_OP_RELU, NULL, y, -1) : y;
}

/* x + I[1x1] => x + ones[1x1], x of 3x3: true (both add 1), and the sum
 * with a 3x3 x does not give I its own 1x1, so it holds I at 1x1. The
 * solver leaves it unknown (2026-12-02), so the test stores it proved. */
static void rule_identity_plus(xf_rule *r)
{
    xf_rule_init(r);
    xf_test_out(&r->src, plus_generator(&r->src, 3, XF_OP_CONST_IDENTITY_MATRIX, 1, 0));
    xf_test_out(&r->dst, plus_generator(&r->dst, 3, XF_OP_CONST_ONES, 1, 0));
}

/* relu(x + I[1x1]) => relu(x + ones[1x1]), x of 1x1: derived from the
 * rule above in one step. At x 1x1 the sum gives I its own shape, so the
 * matcher sizes the rule's I from x. */
static void rule_relu_identity_plus(xf_rule *r)
{
    xf_rule_init(r);
    xf_test_out(&r->src, plus_generator(&r->src, 1, XF_OP_CONST_IDENTITY_MATRIX, 1, 1));
    xf_test_out(&r->dst, plus_generator(&r->dst, 1, XF_OP_CONST_ONES, 1, 1));
}

/* The rule above stored as derived where its chain holds: x of 1x1, the
 * size the step's identity is held at (review 44a, F3). Until 2026-12-02
 * its domain said nothing of x, and loaded as the agent loads derived
 * rules it turned relu(x + I[3x3]) into relu(x + ones[3x3]), which adds 1
 * off the diagonal too (floats compared at every location). The step
 * alone still applies to x + I[1x1] at 3x3, soundly. */
START_TEST(derived_rule_keeps_its_steps_generator_size)
{
    const char *path = xf_test_tmp("applied_derived_generator.db");
    void (*const make[2])(xf_rule *) = {rule_identity_plus, rule_relu_identity_plus};
    derived_with_domain(path, make, NULL, 1);
    static const int64_t sizes[3][3] = {{3, 3, 0}, {1, 1, 2}, {3, 1, 1}}; /* x, I, locations */
    for (int k = 0; k < 3; k++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, plus_generator(&g, sizes[k][0], XF_OP_CONST_IDENTITY_MATRIX, sizes[k][1], 1));
        ck_assert_int_eq(applied_soundly_with(path, &g, 1), sizes[k][2]);
        xf_graph_free(&g);
    }
    xf_test_remove_db(path);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("verify_applied");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, unequal_target_split_read_by_the_target);
    tcase_add_test(tc, slice_to_the_end_matches_only_to_the_end);
    tcase_add_test(tc, derived_rule_keeps_its_steps_slice_to_the_end);
    tcase_add_test(tc, derived_rule_keeps_its_steps_slice_end);
    tcase_add_test(tc, derived_rule_keeps_its_steps_generator_size);
    tcase_add_test(tc, source_generator_that_broadcasts);
    tcase_add_test(tc, source_generator_broadcast_over_a_batch);
    tcase_add_test(tc, generators_sized_only_by_each_other);
    tcase_add_test(tc, identities_sized_only_by_each_other);
    tcase_add_test(tc, pool_not_sized_by_its_conv);
    tcase_add_test(tc, target_generator_not_sized_by_its_consumer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return xf_test_run(suite()); }
