/*
 * test_agent_match.c — rule sets, the graph index, matching, instantiation
 * of agent/ (ruleset.c, pattern.c, index.c, match.c, instantiate.c) and
 * the identity-mode structural hash the searches use (xf_graph_hash_mode).
 *
 * Rules are built by hand with the graph builders at the enumerator's
 * shapes (4x4 matrices, 2x4x4x4 activations, 4x4x3x3 kernels) and matched
 * on hand-built graphs at other shapes. Checked: exactly the expected
 * locations (nodes, bound inputs, matched outputs) for two matmuls sharing
 * an input (both assignments), element-wise commutativity (not on int64
 * values), conv + relu fusion (not on a conv with bias, not when the conv
 * output is used elsewhere or is a graph output), a mapped output the
 * target replaces by a bare input that is a graph output, transpose pairs
 * at another rank (relative permutations); a multi-output match that would
 * create a cycle is rejected; a rule's split into three equal parts matches
 * a model's three equal parts at other sizes and neither three unequal
 * parts nor two equal ones; one whose parts are rule outputs cuts as the
 * rule's when the source reads them too (halves, never 5/3) and any way
 * when it does not and the target replaces it part for part by a split
 * nothing reads (split(relu(relu(x))) => split(relu(x)) at 5/3), not when
 * the target reads a part or swaps them (never 3/1, 3/5), and
 * split(concat(a, b)) => a, b at halves only. A source generator binds at
 * the size its first consumer gives it, not where the consumer's other
 * operand is a generator it reads first too (ewmul(P, Q), ewmul(P, P),
 * ewmul(P + P, R + R): own size only). Instantiation: split sizes re-derived for
 * unequal widths (16 and 32), relative axes on 3-D activations with 2-D
 * weights, identity conv / identity matrix / pooling kernel shapes and the
 * depthwise group re-derived, weight-only flags, and the returned params
 * rebuild the target with xf_graph_add_node. Rule sets from a small rules
 * database (status filter, reverses with negative ids, a reverse without
 * operator skipped, a reverse equal to another rule dropped, limit).
 * Duplicates: the same rule at other shapes, with renamed inputs or with a
 * negative axis is one action (lowest id kept, the others counted), the
 * same pattern at another relative axis is not, and every dropped rule on
 * its own finds exactly the kept action's locations. xf_match_all lists
 * each rule's locations in the set's order, skipping rules whose root the
 * graph lacks, flat (no per-rule offsets) or not. The
 * hash: equal for two node orders and names, different after a change, blind
 * to constant contents but not to constant identity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"
#include "verify/verify.h"

/* ---------------------------------------------------------------- builders */

static int in(xf_graph *g, const char *name, xf_dtype dt, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    xf_error err;
    int v = xf_graph_add_input(g, name, dt, &s, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int cst(xf_graph *g, const char *name, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    float *d = calloc((size_t)xf_shape_numel(&s), sizeof *d);
    for (int64_t i = 0; i < xf_shape_numel(&s); i++) d[i] = (float)(i % 7) * 0.25f;
    xf_error err;
    int v = xf_graph_add_const_owned(g, name, XF_F32, &s, d, &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int op(xf_graph *g, xf_op o, const xf_params *p, int a, int b)
{
    int ins[2] = {a, b};
    xf_error err;
    xf_params def = xf_params_default();
    int v = xf_graph_op(g, o, p ? p : &def, ins, a < 0 ? 0 : (b < 0 ? 1 : 2), &err);
    ck_assert_msg(v >= 0, "%s", err.msg);
    return v;
}

static int node_of(const xf_graph *g, int value)
{
    return g->values[value].producer;
}

static const int64_t M44[2] = {4, 4}, X4[4] = {2, 4, 4, 4}, W33[4] = {4, 4, 3, 3};

static xf_params conv3x3(void)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 1;
    for (int i = 0; i < 4; i++) p.pads[i] = 1;
    return p;
}

static xf_params gen_shape(int rank, const int64_t *dims)
{
    xf_params p = xf_params_default();
    p.n_shape = rank;
    for (int i = 0; i < rank; i++) p.shape[i] = dims[i];
    return p;
}

/* ------------------------------------------------------------------- rules */

/* matmul(m0, m1), matmul(m0, m2) => split(matmul(m0, concat(m1, m2))) */
static void rule_merge(xf_rule *r)
{
    xf_rule_init(r);
    int s[3], d[3];
    const char *nm[3] = {"m0", "m1", "m2"};
    for (int i = 0; i < 3; i++) {
        s[i] = in(&r->src, nm[i], XF_F32, 2, M44);
        d[i] = in(&r->dst, nm[i], XF_F32, 2, M44);
    }
    xf_test_out(&r->src, op(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]));
    xf_test_out(&r->src, op(&r->src, XF_OP_MATMUL, NULL, s[0], s[2]));
    xf_params cat = xf_params_default();
    cat.axis = 1;
    int m = op(&r->dst, XF_OP_MATMUL, NULL, d[0], op(&r->dst, XF_OP_CONCAT, &cat, d[1], d[2]));
    xf_params sp = xf_params_default();
    sp.axis = 1;
    sp.n_split = 2;
    sp.split[0] = sp.split[1] = 4;
    xf_error err;
    int n = xf_graph_add_node(&r->dst, XF_OP_SPLIT, &sp, &m, 1, 2, NULL, &err);
    ck_assert_msg(n >= 0, "%s", err.msg);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[0]);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[1]);
}

/* binary(x0, x1) => binary(x1, x0) */
static void rule_comm(xf_rule *r, xf_op o)
{
    xf_rule_init(r);
    int s0 = in(&r->src, "x0", XF_F32, 4, X4), s1 = in(&r->src, "x1", XF_F32, 4, X4);
    int d0 = in(&r->dst, "x0", XF_F32, 4, X4), d1 = in(&r->dst, "x1", XF_F32, 4, X4);
    xf_test_out(&r->src, op(&r->src, o, NULL, s0, s1));
    xf_test_out(&r->dst, op(&r->dst, o, NULL, d1, d0));
}

/* relu(conv2d(x0, w0)) => conv2d[relu](x0, w0) */
static void rule_conv_relu(xf_rule *r)
{
    xf_rule_init(r);
    int sx = in(&r->src, "x0", XF_F32, 4, X4), sw = in(&r->src, "w0", XF_F32, 4, W33);
    int dx = in(&r->dst, "x0", XF_F32, 4, X4), dw = in(&r->dst, "w0", XF_F32, 4, W33);
    xf_params p = conv3x3();
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, op(&r->src, XF_OP_CONV, &p, sx, sw), -1));
    p.activation = XF_ACT_RELU;
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONV, &p, dx, dw));
}

/* transpose(transpose(m0)) => m0 */
static void rule_tt(xf_rule *r)
{
    xf_rule_init(r);
    int s = in(&r->src, "m0", XF_F32, 2, M44);
    int d = in(&r->dst, "m0", XF_F32, 2, M44);
    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    xf_test_out(&r->src,
                op(&r->src, XF_OP_TRANSPOSE, &p, op(&r->src, XF_OP_TRANSPOSE, &p, s, -1), -1));
    xf_test_out(&r->dst, d);
}

/* relu(x0) => conv2d[relu](x0, const_iconv[4x4x3x3]) */
static void rule_iconv(xf_rule *r)
{
    xf_rule_init(r);
    int s = in(&r->src, "x0", XF_F32, 4, X4), d = in(&r->dst, "x0", XF_F32, 4, X4);
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, s, -1));
    xf_params gp = gen_shape(4, W33);
    int k = op(&r->dst, XF_OP_CONST_IDENTITY_CONV, &gp, -1, -1);
    xf_params p = conv3x3();
    p.activation = XF_ACT_RELU;
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONV, &p, d, k));
}

/* relu(m0) => relu(matmul(m0, imatrix)) or relu(matmul(imatrix, m0)) */
static void rule_imatrix(xf_rule *r, int left)
{
    xf_rule_init(r);
    int s = in(&r->src, "m0", XF_F32, 2, M44), d = in(&r->dst, "m0", XF_F32, 2, M44);
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, s, -1));
    xf_params gp = gen_shape(2, M44);
    int e = op(&r->dst, XF_OP_CONST_IDENTITY_MATRIX, &gp, -1, -1);
    int m = left ? op(&r->dst, XF_OP_MATMUL, NULL, e, d) : op(&r->dst, XF_OP_MATMUL, NULL, d, e);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_RELU, NULL, m, -1));
}

static xf_params avgpool3x3(void)
{
    xf_params p = conv3x3();
    p.count_include_pad = 1;
    return p;
}

/* avgpool[3x3,s1,same,count_pad](x0) => conv2d[g4](x0, const_pool[4x1x3x3]) */
static void rule_pool(xf_rule *r)
{
    xf_rule_init(r);
    int s = in(&r->src, "x0", XF_F32, 4, X4), d = in(&r->dst, "x0", XF_F32, 4, X4);
    xf_params ap = avgpool3x3();
    xf_test_out(&r->src, op(&r->src, XF_OP_AVGPOOL, &ap, s, -1));
    const int64_t pd[4] = {4, 1, 3, 3};
    xf_params gp = gen_shape(4, pd);
    int k = op(&r->dst, XF_OP_CONST_POOL, &gp, -1, -1);
    xf_params p = conv3x3();
    p.group = 4;
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONV, &p, d, k));
}

/* relu(m0) => m0 (false; stored as refuted) */
static void rule_relu_id(xf_rule *r)
{
    xf_rule_init(r);
    int s = in(&r->src, "m0", XF_F32, 2, M44), d = in(&r->dst, "m0", XF_F32, 2, M44);
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, s, -1));
    xf_test_out(&r->dst, d);
}

/* A split of value x along its last axis into n parts of the given sizes;
 * its outputs into outs. */
static void split_last(xf_graph *g, int x, int n, const int64_t *sizes, int *outs)
{
    xf_params sp = xf_params_default();
    sp.axis = -1;
    sp.n_split = n;
    for (int i = 0; i < n; i++) sp.split[i] = sizes[i];
    xf_error err;
    int node = xf_graph_add_node(g, XF_OP_SPLIT, &sp, &x, 1, n, NULL, &err);
    ck_assert_msg(node >= 0, "%s", err.msg);
    for (int i = 0; i < n; i++) outs[i] = g->nodes[node].outputs[i];
}

/* relu of each of the three equal parts of m0 (a split along the last
 * axis, 2x12 -> 3 x 2x4) => the parts of relu(m0): the source split's
 * outputs are internal, so the match compares how it cuts its axis. */
static void rule_relu_split3(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[2] = {2, 12}, four[3] = {4, 4, 4};
    int s = in(&r->src, "m0", XF_F32, 2, d), t = in(&r->dst, "m0", XF_F32, 2, d);
    int parts[3];
    split_last(&r->src, s, 3, four, parts);
    for (int i = 0; i < 3; i++) xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, parts[i], -1));
    split_last(&r->dst, op(&r->dst, XF_OP_RELU, NULL, t, -1), 3, four, parts);
    for (int i = 0; i < 3; i++) xf_test_out(&r->dst, parts[i]);
}

/* A rule set over n rules (freed here), one direction unless `both`. */
static xf_ruleset *set_of(xf_rule *rules, int n, int both)
{
    xf_ruleset_options o = xf_ruleset_options_default();
    o.both_directions = both;
    o.commutative = 0; /* these cases count bindings as written (test_agent_views: both ways) */
    xf_ruleset *rs = NULL;
    xf_error err;
    xf_status st = xf_ruleset_from_rules(rules, NULL, n, &o, &rs, &err);
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    for (int i = 0; i < n; i++) xf_rule_free(&rules[i]);
    return rs;
}

static xf_ruleset *set1(void (*make)(xf_rule *))
{
    xf_rule r;
    make(&r);
    return set_of(&r, 1, 0);
}

/* All locations of rule 0 in g (at most 16). */
static int find(const xf_ruleset *rs, int rule, const xf_graph *g, xf_match *m)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    int n = -1;
    ck_assert_msg(xf_match_rule(rs, rule, g, ix, m, 16, &n, &err) == XF_OK, "%s", err.msg);
    xf_graph_index_free(ix);
    return n;
}

static void instantiate(const xf_ruleset *rs, const xf_graph *g, const xf_match *m,
                        xf_match_target *t)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_match_instantiate(rs, g, ix, m, t, &err) == XF_OK, "%s", err.msg);
    xf_graph_index_free(ix);
}

static void expect_shape(const xf_shape *s, int rank, const int64_t *dims)
{
    char a[96], b[96];
    xf_shape want = xf_shape_make(rank, dims);
    ck_assert_msg(xf_shape_equal(s, &want), "shape %s, expected %s", xf_shape_str(s, a, sizeof a),
                  xf_shape_str(&want, b, sizeof b));
}

/* ---------------------------------------------------------- matmul merge */

START_TEST(test_merge_two_matmuls)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t xd[2] = {8, 16}, w1d[2] = {16, 16}, w2d[2] = {16, 32};
    int x = in(&g, "x", XF_F32, 2, xd), w1 = cst(&g, "w1", 2, w1d), w2 = cst(&g, "w2", 2, w2d);
    int y1 = op(&g, XF_OP_MATMUL, NULL, x, w1), y2 = op(&g, XF_OP_MATMUL, NULL, x, w2);
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, y1, -1));
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, y2, -1));
    xf_ruleset *rs = set1(rule_merge);
    ck_assert_int_eq(xf_ruleset_count(rs), 1);
    xf_match m[16];
    ck_assert_int_eq(find(rs, 0, &g, m), 2);
    /* both assignments of the two source matmuls, sorted by node */
    ck_assert_int_eq(m[0].n_nodes, 2);
    ck_assert_int_eq(m[0].nodes[0], node_of(&g, y1));
    ck_assert_int_eq(m[0].nodes[1], node_of(&g, y2));
    ck_assert_int_eq(m[0].n_inputs, 3);
    ck_assert_int_eq(m[0].inputs[0], x);
    ck_assert_int_eq(m[0].inputs[1], w1);
    ck_assert_int_eq(m[0].inputs[2], w2);
    ck_assert_int_eq(m[0].n_outputs, 2);
    ck_assert_int_eq(m[0].outputs[0], y1);
    ck_assert_int_eq(m[0].outputs[1], y2);
    ck_assert_int_eq(m[1].nodes[0], node_of(&g, y2));
    ck_assert_int_eq(m[1].inputs[1], w2);
    ck_assert_int_eq(m[1].inputs[2], w1);

    xf_match_target t;
    instantiate(rs, &g, &m[0], &t);
    ck_assert_int_eq(t.n_nodes, 3); /* dst topological order: concat, matmul, split */
    ck_assert_int_eq(t.op[0], XF_OP_CONCAT);
    ck_assert_int_eq(t.op[1], XF_OP_MATMUL);
    ck_assert_int_eq(t.op[2], XF_OP_SPLIT);
    ck_assert_int_eq(t.params[0].axis, 1);
    ck_assert_int_eq(t.params[2].axis, 1);
    ck_assert_int_eq(t.params[2].n_split, 2);
    ck_assert_int_eq(t.params[2].split[0], 16); /* from the matched outputs, not halves */
    ck_assert_int_eq(t.params[2].split[1], 32);
    const int64_t cat[2] = {16, 48};
    expect_shape(&t.in_shape[1][1], 2, cat);
    ck_assert_int_eq(t.weight_only[0], 1); /* concat of two constants */
    ck_assert_int_eq(t.weight_only[1], 0);
    ck_assert_int_eq(t.weight_only[2], 0);

    /* the params rebuild the target with the graph builders */
    xf_error err;
    int c = xf_graph_op(&g, t.op[0], &t.params[0], (int[]){w1, w2}, 2, &err);
    ck_assert_msg(c >= 0, "%s", err.msg);
    int mm = xf_graph_op(&g, t.op[1], &t.params[1], (int[]){x, c}, 2, &err);
    ck_assert_msg(mm >= 0, "%s", err.msg);
    int sn = xf_graph_add_node(&g, t.op[2], &t.params[2], &mm, 1, 0, NULL, &err);
    ck_assert_msg(sn >= 0, "%s", err.msg);
    ck_assert(memcmp(&g.nodes[sn].params, &t.params[2], sizeof t.params[2]) == 0);
    ck_assert(xf_shape_equal(&g.values[g.nodes[sn].outputs[0]].shape, &g.values[y1].shape));
    ck_assert(xf_shape_equal(&g.values[g.nodes[sn].outputs[1]].shape, &g.values[y2].shape));
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

START_TEST(test_merge_3d_activation_2d_weights)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t xd[3] = {2, 8, 16}, w1d[2] = {16, 16}, w2d[2] = {16, 32};
    int x = in(&g, "x", XF_F32, 3, xd), w1 = cst(&g, "w1", 2, w1d), w2 = cst(&g, "w2", 2, w2d);
    int y1 = op(&g, XF_OP_MATMUL, NULL, x, w1), y2 = op(&g, XF_OP_MATMUL, NULL, x, w2);
    xf_test_out(&g, y1);
    xf_test_out(&g, y2);
    xf_ruleset *rs = set1(rule_merge);
    xf_match m[16];
    ck_assert_int_eq(find(rs, 0, &g, m), 2);
    xf_match_target t;
    instantiate(rs, &g, &m[0], &t);
    ck_assert_int_eq(t.params[0].axis, 1); /* concat of 2-D weights: last axis */
    ck_assert_int_eq(t.params[2].axis, 2); /* split of the 3-D product: last axis */
    ck_assert_int_eq(t.params[2].split[0], 16);
    ck_assert_int_eq(t.params[2].split[1], 32);
    const int64_t mmd[3] = {2, 8, 16};
    expect_shape(&t.in_shape[1][0], 3, mmd);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

START_TEST(test_multi_output_cycle_rejected)
{
    /* y2 = matmul(x, relu(y1)): merging the two matmuls would make the
     * merged matmul read its own output */
    xf_graph g;
    xf_graph_init(&g);
    int x = in(&g, "x", XF_F32, 2, M44), w1 = cst(&g, "w1", 2, M44);
    int y1 = op(&g, XF_OP_MATMUL, NULL, x, w1);
    int r = op(&g, XF_OP_RELU, NULL, y1, -1);
    int y2 = op(&g, XF_OP_MATMUL, NULL, x, r);
    xf_test_out(&g, y2);
    xf_ruleset *rs = set1(rule_merge);
    xf_match m[16];
    ck_assert_int_eq(find(rs, 0, &g, m), 0);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

/* --------------------------------------------------- split part sizes */

/* Locations of rule_relu_split3 in a graph where x (4 x width) is split
 * along its last axis into n parts of the given sizes, each read by a relu. */
static int split3_locations(int64_t width, int n, const int64_t *sizes, xf_match_target *t)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[2] = {4, width};
    int x = in(&g, "x", XF_F32, 2, d), parts[4];
    split_last(&g, x, n, sizes, parts);
    for (int i = 0; i < n; i++) xf_test_out(&g, op(&g, XF_OP_RELU, NULL, parts[i], -1));
    xf_ruleset *rs = set1(rule_relu_split3);
    xf_match m[16];
    int found = find(rs, 0, &g, m);
    if (found == 1 && t) instantiate(rs, &g, &m[0], t);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
    return found;
}

START_TEST(test_split_part_sizes)
{
    /* the rule's three equal parts of 4 stand for three equal parts of any
     * size (a GPT's Q/K/V split of 384 into 128s) ... */
    const int64_t equal[3] = {128, 128, 128}, uneven[3] = {128, 64, 192}, two[2] = {192, 192};
    xf_match_target t;
    ck_assert_int_eq(split3_locations(384, 3, equal, &t), 1);
    ck_assert_int_eq(t.n_nodes, 2); /* relu, then the split sized from the matched parts */
    ck_assert_int_eq(t.op[1], XF_OP_SPLIT);
    ck_assert_int_eq(t.params[1].n_split, 3);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(t.params[1].split[i], 128);
    /* ... but not three unequal parts, nor two equal ones */
    ck_assert_int_eq(split3_locations(384, 3, uneven, NULL), 0);
    ck_assert_int_eq(split3_locations(384, 2, two, NULL), 0);
    /* and unequal parts only at the rule's own sizes */
    const int64_t own[3] = {4, 4, 4};
    ck_assert_int_eq(split3_locations(12, 3, own, NULL), 1);
}
END_TEST

/* A reduction's parameters: the last axis, kept. */
static xf_params last_axis_kept(void)
{
    xf_params p = xf_params_default();
    p.n_axes = 1, p.axes[0] = -1, p.keepdims = 1;
    return p;
}

/* reduce_sum(a) - reduce_sum(b) over the last axis, kept (rank 1: [1]) */
static int sum_diff(xf_graph *g, int a, int b)
{
    xf_params rs = last_axis_kept();
    return op(g, XF_OP_SUB, NULL, op(g, XF_OP_REDUCE_SUM, &rs, a, -1),
              op(g, XF_OP_REDUCE_SUM, &rs, b, -1));
}

/* (y0, y1) = split(x) in halves, z = sum(y0) - sum(y1), outputs y0, y1, z
 * => the halves of x (sized by the outputs) and z of another split of x in
 * halves: every output of the source split is a rule output, and the
 * source reads them too. True at halves, false at 5/3 (review 39c). */
static void rule_split_read_inside(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {8}, half[2] = {4, 4};
    int s = in(&r->src, "x", XF_F32, 1, d), t = in(&r->dst, "x", XF_F32, 1, d), y[2], u[2], v[2];
    split_last(&r->src, s, 2, half, y);
    int z = sum_diff(&r->src, y[0], y[1]);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    xf_test_out(&r->src, z);
    split_last(&r->dst, t, 2, half, u);
    split_last(&r->dst, t, 2, half, v);
    xf_test_out(&r->dst, u[0]);
    xf_test_out(&r->dst, u[1]);
    xf_test_out(&r->dst, sum_diff(&r->dst, v[0], v[1]));
}

/* split(relu(relu(x))) in halves => split(relu(x)), sized by the outputs:
 * the source split's outputs are rule outputs that nothing in the source
 * reads. */
static void rule_split_of_relu(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {8}, half[2] = {4, 4};
    int s = in(&r->src, "x", XF_F32, 1, d), t = in(&r->dst, "x", XF_F32, 1, d), y[2];
    int rr = op(&r->src, XF_OP_RELU, NULL, op(&r->src, XF_OP_RELU, NULL, s, -1), -1);
    split_last(&r->src, rr, 2, half, y);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    split_last(&r->dst, op(&r->dst, XF_OP_RELU, NULL, t, -1), 2, half, y);
    xf_test_out(&r->dst, y[0]);
    xf_test_out(&r->dst, y[1]);
}

/* How many locations the rule `make` builds has in g (at most 16); frees g. */
static int locations_freeing(void (*make)(xf_rule *), xf_graph *g)
{
    xf_ruleset *rs = set1(make);
    xf_match m[16];
    int found = find(rs, 0, g, m);
    xf_ruleset_free(rs);
    xf_graph_free(g);
    return found;
}

/* Locations of rule_split_read_inside where x is split into parts of
 * sizes p0, p1, both parts graph outputs and read by sum_diff. */
static int split_read_inside_locations(int64_t p0, int64_t p1)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {p0 + p1}, sizes[2] = {p0, p1};
    int x = in(&g, "x", XF_F32, 1, d), y[2];
    split_last(&g, x, 2, sizes, y);
    int z = sum_diff(&g, y[0], y[1]);
    xf_test_out(&g, y[0]);
    xf_test_out(&g, y[1]);
    xf_test_out(&g, z);
    return locations_freeing(rule_split_read_inside, &g);
}

/* Locations of rule_split_of_relu where relu(relu(x)) is split into parts
 * of sizes p0, p1, both graph outputs. */
static int split_of_relu_locations(int64_t p0, int64_t p1)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {p0 + p1}, sizes[2] = {p0, p1};
    int x = in(&g, "x", XF_F32, 1, d), y[2];
    int rr = op(&g, XF_OP_RELU, NULL, op(&g, XF_OP_RELU, NULL, x, -1), -1);
    split_last(&g, rr, 2, sizes, y);
    xf_test_out(&g, y[0]);
    xf_test_out(&g, y[1]);
    return locations_freeing(rule_split_of_relu, &g);
}

START_TEST(test_split_mapped_and_read_inside)
{
    /* a source split whose parts are rule outputs and read inside cuts as
     * the rule's: halves at any size, never 5/3 ... */
    ck_assert_int_eq(split_read_inside_locations(4, 4), 1);
    ck_assert_int_eq(split_read_inside_locations(6, 6), 1);
    ck_assert_int_eq(split_read_inside_locations(5, 3), 0);
    /* ... while one whose parts only leave the rule takes any sizes */
    ck_assert_int_eq(split_of_relu_locations(4, 4), 1);
    ck_assert_int_eq(split_of_relu_locations(5, 3), 1);
}
END_TEST

/* relu(m0) => concat(split(relu(m0)) at 1/3): a target split that is not
 * sized by the outputs and whose own sizes are unequal. */
static void rule_relu_uneven_parts(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[2] = {2, 4}, sizes[2] = {1, 3};
    int s = in(&r->src, "m0", XF_F32, 2, d), t = in(&r->dst, "m0", XF_F32, 2, d), parts[2];
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, s, -1));
    split_last(&r->dst, op(&r->dst, XF_OP_RELU, NULL, t, -1), 2, sizes, parts);
    xf_params cat = xf_params_default();
    cat.axis = -1;
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONCAT, &cat, parts[0], parts[1]));
}

/* Locations of rule_relu_uneven_parts on relu of a 2 x width input; the
 * target split's sizes into sizes[2] where there is one. */
static int uneven_parts_at(int64_t width, int64_t *sizes)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[2] = {2, width};
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, in(&g, "x", XF_F32, 2, d), -1));
    xf_ruleset *rs = set1(rule_relu_uneven_parts);
    xf_match m[16];
    int found = find(rs, 0, &g, m);
    if (found == 1) {
        xf_match_target t;
        instantiate(rs, &g, &m[0], &t);
        for (int k = 0; k < t.n_nodes; k++)
            if (t.op[k] == XF_OP_SPLIT) sizes[0] = t.params[k].split[0], sizes[1] = t.params[k].split[1];
    }
    xf_ruleset_free(rs);
    xf_graph_free(&g);
    return found;
}

START_TEST(test_target_split_keeps_unequal_sizes)
{
    /* the verifier checks such a split at its own sizes only
     * (verify/bounded_shapes.c): kept, never cut into halves, and no
     * location where they do not add up to the axis */
    int64_t sizes[2] = {0, 0};
    ck_assert_int_eq(uneven_parts_at(4, sizes), 1);
    ck_assert_int_eq(sizes[0], 1);
    ck_assert_int_eq(sizes[1], 3);
    ck_assert_int_eq(uneven_parts_at(8, sizes), 0);
}
END_TEST

/* The rule's validity domain, as the rules database stores it. */
static void with_domain(xf_rule *r)
{
    xf_error err;
    ck_assert_msg(xf_domain_of_rule(r, &r->domain, &err) == XF_OK, "%s", err.msg);
}

static xf_params slice0(int64_t start, int64_t end)
{
    xf_params sl = xf_params_default();
    sl.n_axes = 1, sl.axes[0] = 0, sl.starts[0] = start, sl.ends[0] = end, sl.steps[0] = 1;
    return sl;
}

/* (y0, y1) = split(slice(x, [0, 4))) in halves, x[2], x[1] => the split of
 * slice(x, [0, 4)) sized by the outputs (p0, p1), p1[0], p0[1] (review
 * 40c HIGH-2): true at halves; at 3/1, p1[0] is x[3], not x[2]. */
static void rule_cut_read_in_target(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {5}, half[2] = {2, 2};
    int s = in(&r->src, "x", XF_F32, 1, d), t = in(&r->dst, "x", XF_F32, 1, d), y[2], p[2];
    xf_params head = slice0(0, 4), at2 = slice0(2, 3), at1 = slice0(1, 2), first = slice0(0, 1);
    split_last(&r->src, op(&r->src, XF_OP_SLICE, &head, s, -1), 2, half, y);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    xf_test_out(&r->src, op(&r->src, XF_OP_SLICE, &at2, s, -1));
    xf_test_out(&r->src, op(&r->src, XF_OP_SLICE, &at1, s, -1));
    split_last(&r->dst, op(&r->dst, XF_OP_SLICE, &head, t, -1), 2, half, p);
    xf_test_out(&r->dst, p[0]);
    xf_test_out(&r->dst, p[1]);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_SLICE, &first, p[1], -1));
    xf_test_out(&r->dst, op(&r->dst, XF_OP_SLICE, &at1, p[0], -1));
    with_domain(r);
}

/* Locations of rule_cut_read_in_target in the model of its source with
 * the split cutting slice(x, [0, 4)) at p0/4-p0. */
static int cut_read_in_target_locations(int64_t p0)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {5}, sizes[2] = {p0, 4 - p0};
    int x = in(&g, "x", XF_F32, 1, d), y[2];
    xf_params head = slice0(0, 4), at2 = slice0(2, 3), at1 = slice0(1, 2);
    split_last(&g, op(&g, XF_OP_SLICE, &head, x, -1), 2, sizes, y);
    xf_test_out(&g, y[0]);
    xf_test_out(&g, y[1]);
    xf_test_out(&g, op(&g, XF_OP_SLICE, &at2, x, -1));
    xf_test_out(&g, op(&g, XF_OP_SLICE, &at1, x, -1));
    return locations_freeing(rule_cut_read_in_target, &g);
}

/* (y0, y1) = split(x[8]) in halves => (p1, p0) of split(concat(x[4:8],
 * x[0:4])) sized by the outputs: the target's parts swapped, true at
 * halves (the axioms prove it); at 3/5, p1 is x[1:4], not x[0:3]. */
static void rule_swapped_parts(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {8}, half[2] = {4, 4};
    int s = in(&r->src, "x", XF_F32, 1, d), t = in(&r->dst, "x", XF_F32, 1, d), y[2], p[2];
    xf_params lo = slice0(0, 4), hi = slice0(4, 8), cat = xf_params_default();
    split_last(&r->src, s, 2, half, y);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    int rot = op(&r->dst, XF_OP_CONCAT, &cat, op(&r->dst, XF_OP_SLICE, &hi, t, -1),
                 op(&r->dst, XF_OP_SLICE, &lo, t, -1));
    split_last(&r->dst, rot, 2, half, p);
    xf_test_out(&r->dst, p[1]);
    xf_test_out(&r->dst, p[0]);
    with_domain(r);
}

/* Locations of rule_swapped_parts in split(x[8]) at p0/8-p0. */
static int swapped_parts_locations(int64_t p0)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[1] = {8}, sizes[2] = {p0, 8 - p0};
    int x = in(&g, "x", XF_F32, 1, d), y[2];
    split_last(&g, x, 2, sizes, y);
    xf_test_out(&g, y[0]);
    xf_test_out(&g, y[1]);
    return locations_freeing(rule_swapped_parts, &g);
}

START_TEST(test_split_cut_read_in_target)
{
    ck_assert_int_eq(cut_read_in_target_locations(2), 1);
    ck_assert_int_eq(cut_read_in_target_locations(3), 0);
    ck_assert_int_eq(cut_read_in_target_locations(1), 0);
    ck_assert_int_eq(swapped_parts_locations(4), 1);
    ck_assert_int_eq(swapped_parts_locations(3), 0);
}
END_TEST

/* split(concat(a, b)) in halves => a, b. */
static void rule_split_of_concat(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {4}, half[2] = {4, 4};
    int a = in(&r->src, "a", XF_F32, 1, d), b = in(&r->src, "b", XF_F32, 1, d), y[2];
    int ta = in(&r->dst, "a", XF_F32, 1, d), tb = in(&r->dst, "b", XF_F32, 1, d);
    xf_params cat = xf_params_default();
    split_last(&r->src, op(&r->src, XF_OP_CONCAT, &cat, a, b), 2, half, y);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    xf_test_out(&r->dst, ta);
    xf_test_out(&r->dst, tb);
    with_domain(r);
}

/* Locations of rule_split_of_concat in split(concat(a, b)) cut at |a|/|b|. */
static int split_of_concat_locations(int64_t na, int64_t nb)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t da[1] = {na}, db[1] = {nb}, sizes[2] = {na, nb};
    int a = in(&g, "a", XF_F32, 1, da), b = in(&g, "b", XF_F32, 1, db), y[2];
    xf_params cat = xf_params_default();
    split_last(&g, op(&g, XF_OP_CONCAT, &cat, a, b), 2, sizes, y);
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, y[0], -1));
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, y[1], -1));
    return locations_freeing(rule_split_of_concat, &g);
}

START_TEST(test_split_of_concat_cuts)
{
    /* halves at any size; unequal parts never: the validity domain ties
     * |a| = |b| (the source's halves are the outputs a and b), and the
     * split, which the target replaces by no split, cuts as the rule's */
    ck_assert_int_eq(split_of_concat_locations(4, 4), 1);
    ck_assert_int_eq(split_of_concat_locations(6, 6), 1);
    ck_assert_int_eq(split_of_concat_locations(3, 1), 0);
    ck_assert_int_eq(split_of_concat_locations(5, 3), 0);
}
END_TEST

/* r's source with split node `node` cut at 1, ..., 1, d - k + 1 of its
 * axis (every other operator as in the rule) into out. */
static void source_cut_unequally(const xf_rule *r, int node, xf_graph *out)
{
    xf_graph_init(out);
    const xf_graph *g = &r->src;
    int map[64], ins[8];
    xf_error err;
    ck_assert_int_le(g->n_values, 64);
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        map[g->inputs[i]] = in(out, v->name, v->dtype, v->shape.rank, v->shape.dims);
    }
    for (int n = 0; n < g->n_nodes; n++) { /* the rules below are built in order */
        const xf_node *nd = &g->nodes[n];
        xf_params p = nd->params;
        for (int j = 0; j < nd->n_inputs; j++) ins[j] = map[nd->inputs[j]];
        if (n == node) {
            const xf_shape *x = &g->values[nd->inputs[0]].shape;
            int64_t d = x->dims[xf_norm_axis(p.axis, x->rank)];
            for (int o = 0; o < p.n_split; o++) p.split[o] = o < p.n_split - 1 ? 1 : d - p.n_split + 1;
        }
        int k = xf_graph_add_node(out, nd->op, &p, ins, nd->n_inputs, nd->n_outputs, NULL, &err);
        ck_assert_msg(k >= 0, "%s", err.msg);
        for (int o = 0; o < nd->n_outputs; o++) map[nd->outputs[o]] = out->nodes[k].outputs[o];
    }
    for (int o = 0; o < g->n_outputs; o++) xf_test_out(out, map[g->outputs[o]]);
}

/* Whether the verifier rebuilds r (xf_verify_rule_at_shapes) with a
 * source split cut into unequal parts, its inputs 2 longer on every axis
 * (not the rule's own shapes, where it is its own); -1 where the rule
 * does not apply there. */
static int verifier_cuts_unequally(const xf_rule *r)
{
    xf_shape at[4];
    ck_assert_int_le(r->src.n_inputs, 4);
    for (int i = 0; i < r->src.n_inputs; i++) {
        at[i] = r->src.values[r->src.inputs[i]].shape;
        for (int d = 0; d < at[i].rank; d++) at[i].dims[d] += 2;
    }
    xf_rule ra;
    xf_error err;
    xf_status st = xf_verify_rule_at_shapes(r, at, &ra, &err);
    if (st == XF_ERR_SHAPE) {
        xf_rule_free(&ra);
        return -1;
    }
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    int unequal = 0;
    for (int n = 0; n < ra.src.n_nodes; n++) {
        const xf_params *p = &ra.src.nodes[n].params;
        for (int o = 1; ra.src.nodes[n].op == XF_OP_SPLIT && o < p->n_split; o++)
            unequal |= p->split[o] != p->split[0];
    }
    xf_rule_free(&ra);
    return unequal;
}

/* (y0, y1) = split(x) in halves, outputs y0, y1, relu(y1) => the split of
 * x sized by the outputs, its parts and relu(p1): both sides read the
 * parts, so the split cuts as the rule's. */
static void rule_split_read_both(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[1] = {8}, half[2] = {4, 4};
    int s = in(&r->src, "x", XF_F32, 1, d), t = in(&r->dst, "x", XF_F32, 1, d), y[2], p[2];
    split_last(&r->src, s, 2, half, y);
    xf_test_out(&r->src, y[0]);
    xf_test_out(&r->src, y[1]);
    xf_test_out(&r->src, op(&r->src, XF_OP_RELU, NULL, y[1], -1));
    split_last(&r->dst, t, 2, half, p);
    xf_test_out(&r->dst, p[0]);
    xf_test_out(&r->dst, p[1]);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_RELU, NULL, p[1], -1));
}

START_TEST(test_matcher_and_verifier_agree_on_free_splits)
{
    /* one predicate (ir's xf_rule_split_cuts_freely) for both: the matcher
     * matches a model whose split is cut 1/(d-1) exactly where the bounded
     * check also rebuilds the rule with an unequal cut; branch i40c's
     * verifier took every split whose parts are rule outputs as free */
    void (*const rules[])(xf_rule *) = {rule_split_of_relu, rule_split_read_inside,
                                        rule_cut_read_in_target, rule_swapped_parts,
                                        rule_split_of_concat, rule_split_read_both};
    const int expect_free[] = {1, 0, 0, 0, 0, 0};
    const int applies_wider[] = {1, 1, 1, 0, 1, 1}; /* the swap's slices fix x at 8 */
    for (int i = 0; i < (int)(sizeof rules / sizeof *rules); i++) {
        xf_rule r;
        rules[i](&r);
        int splits = 0;
        for (int n = 0; n < r.src.n_nodes; n++) {
            if (r.src.nodes[n].op != XF_OP_SPLIT) continue;
            splits++;
            int cut_free = xf_rule_split_cuts_freely(&r, n);
            ck_assert_int_eq(cut_free, expect_free[i]);
            xf_graph g;
            source_cut_unequally(&r, n, &g);
            ck_assert_msg(locations_freeing(rules[i], &g) == cut_free, "rule %d", i);
            ck_assert_msg(verifier_cuts_unequally(&r) == (applies_wider[i] ? cut_free : -1), "rule %d", i);
        }
        ck_assert_int_eq(splits, 1);
        xf_rule_free(&r);
    }
    /* the validity domain (ir/domain_infer.c) leaves free only the sizes
     * of a split that cuts freely: x of 9 for the split of relu(relu(x)),
     * not for the halves both sides read (there only the source split's
     * equal parts need x even) */
    const int64_t d9[1] = {9};
    xf_shape x9 = xf_shape_make(1, d9);
    const xf_shape *at[1] = {&x9};
    for (int i = 0; i < 6; i += 5) {
        xf_rule r;
        rules[i](&r);
        with_domain(&r);
        ck_assert_int_eq(xf_domain_holds(&r.domain, at, 1), expect_free[i]);
        xf_rule_free(&r);
    }
}
END_TEST

/* ------------------------------------------------------- commutativity */

/* slice[0:1](concat0(a, b)) => slice[0:1](concat0(a, relu(b))), a and b
 * of 2x3 (review 41d, finding 2): proved (a's first row, as a has at least
 * one: every size in a proof is), domain a[-1] == b[-1] and a0 + b0 >= 1,
 * which admits a of 0x3, where the source is b's first row and the target
 * its relu. */
static void rule_head_of_concat(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d[2] = {2, 3};
    int a = in(&r->src, "a", XF_F32, 2, d), b = in(&r->src, "b", XF_F32, 2, d);
    int ta = in(&r->dst, "a", XF_F32, 2, d), tb = in(&r->dst, "b", XF_F32, 2, d);
    xf_params cat = xf_params_default(), head = slice0(0, 1);
    cat.axis = 0;
    xf_test_out(&r->src, op(&r->src, XF_OP_SLICE, &head, op(&r->src, XF_OP_CONCAT, &cat, a, b), -1));
    int t = op(&r->dst, XF_OP_CONCAT, &cat, ta, op(&r->dst, XF_OP_RELU, NULL, tb, -1));
    xf_test_out(&r->dst, op(&r->dst, XF_OP_SLICE, &head, t, -1));
    with_domain(r);
}

/* Locations of rule_head_of_concat in its source with a of na x 3. */
static int head_of_concat_locations(int64_t na)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t da[2] = {na, 3}, db[2] = {2, 3};
    int a = in(&g, "a", XF_F32, 2, da), b = in(&g, "b", XF_F32, 2, db);
    xf_params cat = xf_params_default(), head = slice0(0, 1);
    cat.axis = 0;
    xf_test_out(&g, op(&g, XF_OP_SLICE, &head, op(&g, XF_OP_CONCAT, &cat, a, b), -1));
    return locations_freeing(rule_head_of_concat, &g);
}

START_TEST(test_zero_size_value_is_no_match)
{
    ck_assert_int_eq(head_of_concat_locations(2), 1);
    ck_assert_int_eq(head_of_concat_locations(1), 1);
    ck_assert_int_eq(head_of_concat_locations(0), 0);
}
END_TEST

START_TEST(test_commutativity)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d[2] = {3, 5}, di[1] = {3};
    int a = in(&g, "a", XF_F32, 2, d), b = in(&g, "b", XF_F32, 2, d), c = in(&g, "c", XF_F32, 2, d);
    int i = in(&g, "i", XF_I64, 1, di), j = in(&g, "j", XF_I64, 1, di);
    int s1 = op(&g, XF_OP_ADD, NULL, a, b);
    int s2 = op(&g, XF_OP_ADD, NULL, s1, c);
    int s3 = op(&g, XF_OP_ADD, NULL, i, j); /* int64: the rule's inputs are float */
    int p = op(&g, XF_OP_MUL, NULL, s2, a);
    xf_test_out(&g, p);
    xf_test_out(&g, s3);
    xf_rule r;
    rule_comm(&r, XF_OP_ADD);
    xf_ruleset *rs = set_of(&r, 1, 0);
    xf_match m[16];
    ck_assert_int_eq(find(rs, 0, &g, m), 2);
    ck_assert_int_eq(m[0].nodes[0], node_of(&g, s1));
    ck_assert_int_eq(m[0].inputs[0], a);
    ck_assert_int_eq(m[0].inputs[1], b);
    ck_assert_int_eq(m[0].outputs[0], s1);
    ck_assert_int_eq(m[1].nodes[0], node_of(&g, s2));
    ck_assert_int_eq(m[1].inputs[0], s1);
    ck_assert_int_eq(m[1].inputs[1], c);
    xf_match_target t;
    instantiate(rs, &g, &m[1], &t);
    ck_assert_int_eq(t.n_nodes, 1);
    expect_shape(&t.in_shape[0][0], 2, d);
    ck_assert_int_eq(t.weight_only[0], 0);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------ conv + relu */

START_TEST(test_conv_relu_fusion)
{
    xf_graph g;
    xf_graph_init(&g);
    const int64_t xd[4] = {1, 8, 10, 10}, wd[4] = {8, 8, 3, 3}, bd[1] = {8};
    int x = in(&g, "x", XF_F32, 4, xd), w = cst(&g, "w", 4, wd), b = cst(&g, "b", 1, bd);
    xf_params cp = conv3x3();
    cp.group = 1;          /* spelled out, as the ONNX importer writes it */
    cp.dilation[0] = cp.dilation[1] = 1;
    int c1 = op(&g, XF_OP_CONV, &cp, x, w);
    int r1 = op(&g, XF_OP_RELU, NULL, c1, -1);           /* fusable */
    int c2 = xf_test_op3(&g, XF_OP_CONV, &cp, r1, w, b);         /* conv with bias: 3 inputs */
    int r2 = op(&g, XF_OP_RELU, NULL, c2, -1);
    int c3 = op(&g, XF_OP_CONV, &cp, r2, w);
    int r3 = op(&g, XF_OP_RELU, NULL, c3, -1);
    int a3 = op(&g, XF_OP_ADD, NULL, c3, r3);            /* c3 used outside the match */
    int c4 = op(&g, XF_OP_CONV, &cp, a3, w);
    int r4 = op(&g, XF_OP_RELU, NULL, c4, -1);
    xf_test_out(&g, r4);
    xf_test_out(&g, c4);                                         /* c4 is a graph output */
    xf_ruleset *rs = set1(rule_conv_relu);
    xf_match m[16];
    ck_assert_int_eq(find(rs, 0, &g, m), 1);
    ck_assert_int_eq(m[0].nodes[0], node_of(&g, c1)); /* source order: conv, relu */
    ck_assert_int_eq(m[0].nodes[1], node_of(&g, r1));
    ck_assert_int_eq(m[0].inputs[0], x);
    ck_assert_int_eq(m[0].inputs[1], w);
    ck_assert_int_eq(m[0].outputs[0], r1);
    xf_match_target t;
    instantiate(rs, &g, &m[0], &t);
    ck_assert_int_eq(t.n_nodes, 1);
    ck_assert_int_eq(t.op[0], XF_OP_CONV);
    ck_assert_int_eq(t.params[0].activation, XF_ACT_RELU);
    ck_assert_int_eq(t.n_in[0], 2);
    expect_shape(&t.in_shape[0][1], 4, wd);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------- bare outputs, relative axes */

START_TEST(test_bare_output_and_relative_perm)
{
    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    xf_ruleset *rs = set1(rule_tt);
    xf_match m[16];
    const int64_t d[2] = {3, 5};
    for (int used = 0; used < 2; used++) {
        xf_graph g;
        xf_graph_init(&g);
        int x = in(&g, "x", XF_F32, 2, d);
        int t2 = op(&g, XF_OP_TRANSPOSE, &p, op(&g, XF_OP_TRANSPOSE, &p, x, -1), -1);
        /* t2 a graph output: it cannot become the bare input x */
        xf_test_out(&g, used ? op(&g, XF_OP_RELU, NULL, t2, -1) : t2);
        ck_assert_int_eq(find(rs, 0, &g, m), used);
        xf_graph_free(&g);
    }
    /* rank 3: perm [0,2,1] is the rule's [1,0] on the last two axes;
     * [1,0,2] is not */
    const int64_t d3[3] = {2, 3, 5};
    for (int lead = 0; lead < 2; lead++) {
        xf_params q = xf_params_default();
        q.n_axes = 3;
        int64_t perm[2][3] = {{0, 2, 1}, {1, 0, 2}};
        for (int k = 0; k < 3; k++) q.axes[k] = perm[lead][k];
        xf_graph g;
        xf_graph_init(&g);
        int x = in(&g, "x", XF_F32, 3, d3);
        int t2 = op(&g, XF_OP_TRANSPOSE, &q, op(&g, XF_OP_TRANSPOSE, &q, x, -1), -1);
        xf_test_out(&g, op(&g, XF_OP_RELU, NULL, t2, -1));
        ck_assert_int_eq(find(rs, 0, &g, m), lead ? 0 : 1);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
}
END_TEST

/* ------------------------------------------------------------ generators */

START_TEST(test_generator_shapes)
{
    const int64_t xd[4] = {1, 8, 10, 10};
    xf_match m[16];
    xf_match_target t;
    { /* identity conv [C,C,3,3] from the conv input's channels */
        xf_graph g;
        xf_graph_init(&g);
        int x = in(&g, "x", XF_F32, 4, xd);
        xf_test_out(&g, op(&g, XF_OP_RELU, NULL, x, -1));
        xf_ruleset *rs = set1(rule_iconv);
        ck_assert_int_eq(find(rs, 0, &g, m), 1);
        instantiate(rs, &g, &m[0], &t);
        ck_assert_int_eq(t.op[0], XF_OP_CONST_IDENTITY_CONV);
        ck_assert_int_eq(t.params[0].n_shape, 4);
        const int64_t kd[4] = {8, 8, 3, 3};
        for (int i = 0; i < 4; i++) ck_assert_int_eq(t.params[0].shape[i], kd[i]);
        expect_shape(&t.in_shape[1][1], 4, kd);
        ck_assert_int_eq(t.weight_only[0], 1);
        ck_assert_int_eq(t.weight_only[1], 0);
        xf_ruleset_free(rs);
        xf_graph_free(&g);
    }
    for (int left = 0; left < 2; left++) { /* identity matrix from the other operand */
        xf_graph g;
        xf_graph_init(&g);
        const int64_t md[2] = {5, 12};
        int x = in(&g, "x", XF_F32, 2, md);
        xf_test_out(&g, op(&g, XF_OP_RELU, NULL, x, -1));
        xf_rule r;
        rule_imatrix(&r, left);
        xf_ruleset *rs = set_of(&r, 1, 0);
        ck_assert_int_eq(find(rs, 0, &g, m), 1);
        instantiate(rs, &g, &m[0], &t);
        ck_assert_int_eq(t.op[0], XF_OP_CONST_IDENTITY_MATRIX);
        int64_t n = left ? 5 : 12;
        ck_assert_int_eq(t.params[0].shape[0], n);
        ck_assert_int_eq(t.params[0].shape[1], n);
        xf_ruleset_free(rs);
        xf_graph_free(&g);
    }
    { /* pooling kernel [C,1,3,3] and the depthwise group */
        xf_graph g;
        xf_graph_init(&g);
        int x = in(&g, "x", XF_F32, 4, xd);
        xf_params ap = avgpool3x3();
        xf_test_out(&g, op(&g, XF_OP_AVGPOOL, &ap, x, -1));
        xf_ruleset *rs = set1(rule_pool);
        ck_assert_int_eq(find(rs, 0, &g, m), 1);
        instantiate(rs, &g, &m[0], &t);
        ck_assert_int_eq(t.op[0], XF_OP_CONST_POOL);
        const int64_t pd[4] = {8, 1, 3, 3};
        for (int i = 0; i < 4; i++) ck_assert_int_eq(t.params[0].shape[i], pd[i]);
        ck_assert_int_eq(t.op[1], XF_OP_CONV);
        ck_assert_int_eq(t.params[1].group, 8);
        xf_ruleset_free(rs);
        xf_graph_free(&g);
    }
}
END_TEST

/* slice[axis1=0:1]: the first channel */
static xf_params first_channel(void)
{
    xf_params sl = xf_params_default();
    sl.n_axes = 1, sl.axes[0] = 1, sl.starts[0] = 0, sl.ends[0] = 1, sl.steps[0] = 1;
    return sl;
}

/* A = conv2d(slice[axis1=0:1](w1), const_pool[k x1x3x3]): k channels, each
 * the 3x3 average pool of w1's first channel. */
static int pooled_copies(xf_graph *g, int w1, int64_t k)
{
    const int64_t pd[4] = {k, 1, 3, 3};
    xf_params sl = first_channel(), gp = gen_shape(4, pd), cp = conv3x3();
    return op(g, XF_OP_CONV, &cp, op(g, XF_OP_SLICE, &sl, w1, -1),
              op(g, XF_OP_CONST_POOL, &gp, -1, -1));
}

/* conv2d[relu](A, A) with A = pooled_copies(w1, 4) => conv2d[relu](S, S)
 * with S = slice[axis1=0:1](avgpool[3x3,count_pad](w1 + w1)): rule 172448
 * of the 4-op database (derived), at its shapes (w1 4x4x3x3). The source
 * sums the 4 channels of A, 4 a*a, as the target's (2a)*(2a) does: true at
 * 4 copies only (a the pooled first channel). */
static void rule_pooled_copies(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t wd[4] = {4, 4, 3, 3};
    xf_params cr = conv3x3(), ap = avgpool3x3(), sl = first_channel();
    cr.activation = XF_ACT_RELU;
    int s = in(&r->src, "w1", XF_F32, 4, wd), d = in(&r->dst, "w1", XF_F32, 4, wd);
    int a = pooled_copies(&r->src, s, 4);
    xf_test_out(&r->src, op(&r->src, XF_OP_CONV, &cr, a, a));
    int t = op(&r->dst, XF_OP_SLICE, &sl,
               op(&r->dst, XF_OP_AVGPOOL, &ap, op(&r->dst, XF_OP_ADD, NULL, d, d), -1), -1);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONV, &cr, t, t));
    with_domain(r);
}

/* Locations of action 0 of rs in g (freed here, rs too); with one, the
 * largest change of g's output its rewrite makes into *changed. */
static int rewritten(xf_ruleset *rs, xf_graph *g, double *changed)
{
    xf_match m[16];
    int n = find(rs, 0, g, m);
    *changed = 0;
    if (n == 1) {
        xf_graph_index *ix = NULL;
        xf_graph res;
        xf_check_result diff;
        xf_error err;
        ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_match_apply(rs, g, ix, &m[0], &res, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_interp_check(g, &res, 7, 1e-4, 1e-4, &diff, &err) == XF_OK, "%s",
                      err.msg);
        *changed = diff.bad_output < 0 ? 0 : diff.bad_abs;
        xf_graph_free(&res);
        xf_graph_index_free(ix);
    }
    xf_ruleset_free(rs);
    xf_graph_free(g);
    return n;
}

/* Locations of rule_pooled_copies in relu(conv2d(A, A)) with A of k
 * copies (w1 5x2x3x3, inside the rule's domain); with one, the largest
 * change of the output it makes into *changed. */
static int pooled_copies_rewritten(int64_t k, double *changed)
{
    const int64_t wd[4] = {5, 2, 3, 3};
    xf_graph g;
    xf_graph_init(&g);
    int w1 = in(&g, "w1", XF_F32, 4, wd);
    int a = pooled_copies(&g, w1, k);
    xf_params cr = conv3x3();
    cr.activation = XF_ACT_RELU;
    xf_test_out(&g, op(&g, XF_OP_CONV, &cr, a, a));
    return rewritten(set1(rule_pooled_copies), &g, changed);
}

/* A source generator binds only the generator the rule was proved with
 * (match.c): the const_pool's size is no input dim, so the output shape
 * and the domain cannot tell 4 copies from 8, and at 8 the rewrite halved
 * the model's output (rule 172448, found by bench_domain_probe). */
START_TEST(test_source_generator_as_proved)
{
    double changed;
    ck_assert_int_eq(pooled_copies_rewritten(4, &changed), 1);
    ck_assert_msg(changed == 0, "at 4 copies the rewrite changed the output by %g", changed);
    int n = pooled_copies_rewritten(8, &changed);
    ck_assert_msg(n == 0, "%d location(s) at 8 copies; the rewrite changed the output by %g", n,
                  changed);
    { /* a pooling kernel sized from its conv, as the target's are, binds at any channels */
        xf_rule r;
        rule_pool(&r);
        xf_ruleset *rs = set_of(&r, 1, 1); /* backward: conv2d[g4](x0, const_pool) => avgpool */
        xf_graph g;
        xf_graph_init(&g);
        const int64_t xd[4] = {1, 8, 10, 10}, pd[4] = {8, 1, 3, 3};
        xf_params gp = gen_shape(4, pd), cp = conv3x3();
        cp.group = 8;
        int x = in(&g, "x", XF_F32, 4, xd);
        xf_test_out(&g, op(&g, XF_OP_CONV, &cp, x, op(&g, XF_OP_CONST_POOL, &gp, -1, -1)));
        xf_match m[16];
        int found = 0;
        for (int j = 0; j < xf_ruleset_count(rs); j++) found += find(rs, j, &g, m);
        ck_assert_int_eq(found, 1);
        xf_ruleset_free(rs);
        xf_graph_free(&g);
    }
}
END_TEST

/* ewmul(m0, ones[4x4]) => m0, m0 of 4x4 (rule 321 of the default
 * database, by its shape). */
static void rule_times_ones(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t d44[2] = {4, 4};
    xf_params gp = gen_shape(2, d44);
    int s = in(&r->src, "m0", XF_F32, 2, d44);
    xf_test_out(&r->src, op(&r->src, XF_OP_MUL, NULL, s, op(&r->src, XF_OP_CONST_ONES, &gp, -1, -1)));
    xf_test_out(&r->dst, in(&r->dst, "m0", XF_F32, 2, d44));
    with_domain(r);
}

/* Locations of rule_times_ones in relu(m0[2,4,4] * ones), the ones of
 * rank `rank` and dims `od` (the relu reads the product: a graph output
 * is never rewritten to a bare input). */
static int times_ones_found(int rank, const int64_t *od)
{
    const int64_t md[3] = {2, 4, 4};
    xf_graph g;
    xf_graph_init(&g);
    xf_params gp = gen_shape(rank, od);
    int m0 = in(&g, "m0", XF_F32, 3, md);
    int prod = op(&g, XF_OP_MUL, NULL, m0, op(&g, XF_OP_CONST_ONES, &gp, -1, -1));
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, prod, -1));
    xf_ruleset *rs = set1(rule_times_ones);
    xf_match m[16];
    int n = find(rs, 0, &g, m);
    xf_ruleset_free(rs);
    xf_graph_free(&g);
    return n;
}

/* A source generator at the rule's rank broadcast over a batched operand
 * is the rule's own broadcast, batched as its inputs are (review 42d, L1):
 * m0[2,4,4] * ones[4,4] binds, as m0[2,4,4] * ones[2,4,4] does; ones[4,1]
 * or [1,4] (a broadcast within the rule's axes) and ones[1,4,4] (not the
 * rule's rank) do not. */
START_TEST(test_source_generator_over_a_batch)
{
    const int64_t o44[2] = {4, 4}, o244[3] = {2, 4, 4}, o41[2] = {4, 1}, o14[2] = {1, 4},
                  o144[3] = {1, 4, 4};
    ck_assert_int_eq(times_ones_found(2, o44), 1);
    ck_assert_int_eq(times_ones_found(3, o244), 1);
    ck_assert_int_eq(times_ones_found(2, o41), 0);
    ck_assert_int_eq(times_ones_found(2, o14), 0);
    ck_assert_int_eq(times_ones_found(3, o144), 0);
}
END_TEST

/* ----------------------------------- generators sized by generators */

/* const_pool[pd] in g. */
static int pool_kernel(xf_graph *g, const int64_t *pd)
{
    xf_params gp = gen_shape(4, pd);
    return op(g, XF_OP_CONST_POOL, &gp, -1, -1);
}

/* ewmul(P, Q) for two const_pool[pd], or ewmul(P, P) for one when `self`. */
static int pool_product(xf_graph *g, const int64_t *pd, int self)
{
    int p = pool_kernel(g, pd);
    return op(g, XF_OP_MUL, NULL, p, self ? p : pool_kernel(g, pd));
}

/* matmul(mean[-1,keepdims](ewmul(P, Q)), w2) with P and Q const_pool[pd]. */
static int pooled_product(xf_graph *g, int w2, const int64_t *pd, int self)
{
    xf_params mp = last_axis_kept();
    return op(g, XF_OP_MATMUL, NULL,
              op(g, XF_OP_REDUCE_MEAN, &mp, pool_product(g, pd, self), -1), w2);
}

static const int64_t POOL4[4] = {4, 1, 3, 3}, W2[4] = {4, 4, 1, 1};

/* pooled_product(w2) with P, Q of 4x1x3x3 => mean[-1,keepdims](avgpool(
 * enlarge[3x3](avgpool(w2)))), w2 4x4x1x1 (rule 171411 of the 4-op
 * database when !self, proved by the exact check at the own shapes, with
 * its domain): both sides are w/81 at each of 3 rows. */
static void rule_pooled_product(xf_rule *r, int self)
{
    xf_rule_init(r);
    int s = in(&r->src, "w2", XF_F32, 4, W2), d = in(&r->dst, "w2", XF_F32, 4, W2);
    xf_test_out(&r->src, pooled_product(&r->src, s, POOL4, self));
    xf_params ap = avgpool3x3(), mp = last_axis_kept(), ep = xf_params_default();
    ep.kernel[0] = ep.kernel[1] = 3;
    int e = op(&r->dst, XF_OP_ENLARGE, &ep, op(&r->dst, XF_OP_AVGPOOL, &ap, d, -1), -1);
    int pooled = op(&r->dst, XF_OP_AVGPOOL, &ap, e, -1);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_REDUCE_MEAN, &mp, pooled, -1));
    xf_error err;
    ck_assert_msg(xf_domain_of_rule_pinned(r, &r->domain, &err) == XF_OK, "%s", err.msg);
}

static void rule_pooled_product_pair(xf_rule *r) { rule_pooled_product(r, 0); }
static void rule_pooled_product_self(xf_rule *r) { rule_pooled_product(r, 1); }

/* Locations of the pooled-product rule in pooled_product(w2) with the
 * pools of pd (w2 4x4x1x1, inside the domain); the change into *changed. */
static int pooled_product_rewritten(const int64_t *pd, int self, double *changed)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_test_out(&g, pooled_product(&g, in(&g, "w2", XF_F32, 4, W2), pd, self));
    return rewritten(set1(self ? rule_pooled_product_self : rule_pooled_product_pair), &g,
                     changed);
}

/* A generator whose partner is a generator its first consumer reads first
 * is sized by nothing, so it binds at the rule's own shape only (match.c,
 * sized_by): each pool of ewmul(P, Q) was held only to the other's size
 * and P of ewmul(P, P) to nothing, and at pools of 3x5 the mean and the
 * matmul hide the kernel from the output: w/225 where the target gives
 * w/81 (review 43e, F1). */
START_TEST(test_generator_sized_by_a_generator)
{
    static const int64_t wider[2][4] = {{4, 1, 3, 5}, {1, 1, 3, 5}};
    for (int self = 0; self < 2; self++) {
        double changed;
        ck_assert_int_eq(pooled_product_rewritten(POOL4, self, &changed), 1);
        ck_assert_msg(changed == 0, "at its own pools the rewrite changed the output by %g",
                      changed);
        for (int i = 0; i < 2; i++) {
            int n = pooled_product_rewritten(wider[i], self, &changed);
            ck_assert_msg(n == 0,
                          "%s: %d location(s) at pools %lldx1x%lldx%lld; the rewrite changed "
                          "the output by %g",
                          self ? "ewmul(P, P)" : "ewmul(P, Q)", n, (long long)wider[i][0],
                          (long long)wider[i][2], (long long)wider[i][3], changed);
        }
    }
}
END_TEST


/* matmul(mean[-1,keepdims](ewmul(P + P, R + R)), w2) with P and R
 * const_pool[pd]. */
static int pooled_sums_product(xf_graph *g, int w2, const int64_t *pd)
{
    xf_params mp = last_axis_kept();
    int p = pool_kernel(g, pd), q = pool_kernel(g, pd);
    int prod = op(g, XF_OP_MUL, NULL, op(g, XF_OP_ADD, NULL, p, p), op(g, XF_OP_ADD, NULL, q, q));
    return op(g, XF_OP_MATMUL, NULL, op(g, XF_OP_REDUCE_MEAN, &mp, prod, -1), w2);
}

/* pooled_sums_product(w2) with pools of 4x1x3x3 => mean[-1,keepdims](
 * avgpool(enlarge[3x3](avgpool(4 w2)))), w2 4x4x1x1: both sides 4w/81. */
static void rule_pooled_sums_product(xf_rule *r)
{
    xf_rule_init(r);
    int s = in(&r->src, "w2", XF_F32, 4, W2), d = in(&r->dst, "w2", XF_F32, 4, W2);
    xf_test_out(&r->src, pooled_sums_product(&r->src, s, POOL4));
    xf_params ap = avgpool3x3(), mp = last_axis_kept(), ep = xf_params_default();
    ep.kernel[0] = ep.kernel[1] = 3;
    int d2 = op(&r->dst, XF_OP_ADD, NULL, d, d);
    int d4 = op(&r->dst, XF_OP_ADD, NULL, d2, d2);
    int e = op(&r->dst, XF_OP_ENLARGE, &ep, op(&r->dst, XF_OP_AVGPOOL, &ap, d4, -1), -1);
    int pooled = op(&r->dst, XF_OP_AVGPOOL, &ap, e, -1);
    xf_test_out(&r->dst, op(&r->dst, XF_OP_REDUCE_MEAN, &mp, pooled, -1));
    with_domain(r);
}

/* Through a chain: P + P and R + R each size nothing, so the product that
 * reads them sizes neither pair (a pair sized by its reader's other operand
 * would be sized by the other pair, so by nothing again) and both bind at
 * 4x1x3x3 only: at 4x1x3x5 the rewrite would move the output (review 43e,
 * F4). */
START_TEST(test_generator_pairs_sized_by_each_other)
{
    static const int64_t pd5[4] = {4, 1, 3, 5};
    const int64_t *pds[2] = {POOL4, pd5};
    for (int i = 0; i < 2; i++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, pooled_sums_product(&g, in(&g, "w2", XF_F32, 4, W2), pds[i]));
        double changed;
        int n = rewritten(set1(rule_pooled_sums_product), &g, &changed);
        ck_assert_msg(n == (i == 0), "pools of 4x1x3x%lld: %d location(s), the rewrite changed "
                      "the output by %g", (long long)pds[i][3], n, changed);
        ck_assert_msg(changed == 0, "the rewrite changed the output by %g", changed);
    }
}
END_TEST

/* ------------------------------------------------ index and match_all */

START_TEST(test_weight_only_and_match_all)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = in(&g, "x", XF_F32, 2, M44), w = cst(&g, "w", 2, M44);
    xf_params gp = gen_shape(2, M44);
    int ones = op(&g, XF_OP_CONST_ONES, &gp, -1, -1);
    int wa = op(&g, XF_OP_ADD, NULL, w, ones);
    int y = op(&g, XF_OP_MATMUL, NULL, x, wa);
    int z = op(&g, XF_OP_MATMUL, NULL, x, w);
    xf_opaque *o = calloc(1, sizeof *o);
    o->op_type = strdup("Mystery");
    o->domain = strdup("");
    xf_dtype odt = XF_F32;
    xf_shape os = xf_shape_make(2, M44);
    xf_error err;
    int on = xf_graph_add_opaque(&g, o, &w, 1, &odt, &os, 1, "mystery", &err);
    ck_assert_msg(on >= 0, "%s", err.msg);
    int ov = g.nodes[on].outputs[0];
    int s = op(&g, XF_OP_ADD, NULL, y, op(&g, XF_OP_ADD, NULL, z, ov));
    xf_test_out(&g, s);
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, w), 1);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, ones), 1);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, wa), 1);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, x), 0);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, y), 0);
    ck_assert_int_eq(xf_graph_index_weight_only(ix, ov), 0); /* opaque */

    xf_rule rules[2];
    rule_comm(&rules[0], XF_OP_ADD);
    rule_merge(&rules[1]);
    xf_ruleset *rs = set_of(rules, 2, 0);
    xf_match_list l;
    xf_match_list_init(&l);
    ck_assert_int_eq(xf_match_all(rs, &g, ix, 0, &l, &err), XF_OK);
    ck_assert_int_eq(l.n_rules, 2);
    ck_assert_int_eq(l.found[0], 3); /* the three adds */
    ck_assert_int_eq(l.found[1], 2); /* y and z share x, both orders */
    ck_assert_int_eq(l.start[1] - l.start[0], 3);
    ck_assert_int_eq(l.start[2], 5);
    ck_assert_int_eq(l.m[l.start[1]].rule, 1);
    ck_assert_int_eq(xf_match_all(rs, &g, ix, 1, &l, &err), XF_OK); /* capped */
    ck_assert_int_eq(l.found[0], 3);
    ck_assert_int_eq(l.start[1], 1);
    ck_assert_int_eq(l.n, 2);
    xf_match one[16];
    int n = 0;
    ck_assert_int_eq(xf_match_rule(rs, 0, &g, ix, one, 16, &n, &err), XF_OK);
    ck_assert_int_eq(n, 3);
    ck_assert(memcmp(&one[0], &l.m[0], sizeof one[0]) == 0);
    ck_assert_int_eq(xf_match_rule(rs, 7, &g, ix, one, 16, &n, &err), XF_ERR_INVALID);
    ck_assert(strstr(err.msg, "rule 7") != NULL);
    xf_match_list_free(&l);
    xf_ruleset_free(rs);
    xf_graph_index_free(ix);
    xf_graph_free(&g);
}
END_TEST

/* xf_match_all visits only the rules whose root signature occurs in the
 * graph, in the set's order: its list is each rule's xf_match_rule list,
 * one rule after the other, whatever rules with other roots lie between;
 * a flat list holds the same matches without the per-rule offsets. */
START_TEST(test_match_all_present_roots_in_order)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = in(&g, "x", XF_F32, 2, M44), w = cst(&g, "w", 2, M44), v = cst(&g, "v", 2, M44);
    int y = op(&g, XF_OP_MATMUL, NULL, x, w), z = op(&g, XF_OP_MATMUL, NULL, x, v);
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, op(&g, XF_OP_ADD, NULL, y, z), -1));
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, &err), XF_OK);
    /* roots: matmul, conv, relu, transpose, add, avgpool, relu, relu */
    xf_rule rules[8];
    rule_merge(&rules[0]);
    rule_conv_relu(&rules[1]);
    rule_imatrix(&rules[2], 1);
    rule_tt(&rules[3]);
    rule_comm(&rules[4], XF_OP_ADD);
    rule_pool(&rules[5]);
    rule_imatrix(&rules[6], 0);
    rule_relu_id(&rules[7]);
    xf_ruleset *rs = set_of(rules, 8, 1);
    xf_match_list l, flat;
    xf_match_list_init(&l);
    xf_match_list_init(&flat);
    flat.flat = 1;
    ck_assert_int_eq(xf_match_all(rs, &g, ix, 0, &l, &err), XF_OK);
    ck_assert_int_eq(xf_match_all(rs, &g, ix, 0, &flat, &err), XF_OK);
    ck_assert_ptr_null(flat.start);
    ck_assert_ptr_null(flat.found);
    int n = 0, rules_matched = 0, gap = 0; /* gap: a rule without match between two with */
    xf_match one[16];
    for (int r = 0; r < xf_ruleset_count(rs); r++) {
        int k = 0;
        ck_assert_int_eq(xf_match_rule(rs, r, &g, ix, one, 16, &k, &err), XF_OK);
        ck_assert_int_eq(l.found[r], k);
        ck_assert_int_eq(l.start[r], n);
        for (int i = 0; i < k; i++) {
            ck_assert(memcmp(&one[i], &l.m[n + i], sizeof one[i]) == 0);
            ck_assert(memcmp(&one[i], &flat.m[n + i], sizeof one[i]) == 0);
        }
        gap |= k == 0 && rules_matched > 0 && r + 1 < xf_ruleset_count(rs);
        rules_matched += k > 0;
        n += k;
    }
    ck_assert_int_eq(l.n, n);
    ck_assert_int_eq(flat.n, n);
    ck_assert_int_ge(rules_matched, 3); /* the merge, the commutation, the relus */
    ck_assert(gap);
    xf_match_list_free(&l);
    xf_match_list_free(&flat);
    xf_ruleset_free(rs);
    xf_graph_index_free(ix);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------- rule databases */

START_TEST(test_ruleset_from_db)
{
    const char *path = xf_test_tmp("rules.db");
    remove(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    int64_t id[6];
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
    xf_rulesdb_rule_meta refuted = {XF_RULE_REFUTED, 0, NULL, 0};
    xf_rulesdb_rule_meta cand = {XF_RULE_CANDIDATE, 0, NULL, 0};
    const xf_rulesdb_rule_meta *meta[6] = {&proved, &proved, &proved, &refuted, &cand, &proved};
    for (int k = 0; k < 6; k++) {
        switch (k) {
        case 0: rule_comm(&r, XF_OP_ADD); break;   /* A */
        case 1: rule_conv_relu(&r); break;          /* B */
        case 2: rule_tt(&r); break;                 /* C: reverse has no operator */
        case 3: rule_relu_id(&r); break;            /* D: refuted */
        case 4: rule_comm(&r, XF_OP_MUL); break;    /* E: candidate */
        default: /* F: the reverse of A */
            rule_comm(&r, XF_OP_ADD);
            {
                xf_graph tmp = r.src;
                r.src = r.dst;
                r.dst = tmp;
            }
        }
        ck_assert_msg(xf_rulesdb_add_rule(db, &r, meta[k], &id[k], NULL, &err) == XF_OK, "%s",
                      err.msg);
        xf_rule_free(&r);
    }
    xf_rulesdb_close(db);

    xf_ruleset *rs = NULL;
    xf_ruleset_options o = xf_ruleset_options_default();
    ck_assert_msg(xf_ruleset_load(path, &o, &rs, &err) == XF_OK, "%s", err.msg);
    /* A, B, -B, C: A's and F's reverses equal F and A; C's has no operator;
     * F is A with its inputs renamed, a duplicate */
    ck_assert_int_eq(xf_ruleset_count(rs), 4);
    const int64_t want[4] = {id[0], id[1], -id[1], id[2]};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(xf_ruleset_rule_id(rs, i), want[i]);
    ck_assert_int_eq(xf_ruleset_duplicates(rs), 1);
    const char *why = NULL;
    ck_assert_int_eq(xf_ruleset_skipped(rs, &why), 1);
    ck_assert_msg(why && strstr(why, "no operator"), "%s", why ? why : "(null)");
    ck_assert_str_eq(xf_ruleset_text(rs, 0), "ewadd(x0, x1) => ewadd(x1, x0)");
    ck_assert_str_eq(xf_ruleset_text(rs, 2), "conv2d[3x3,s1,same,relu](x0, w0) => relu(conv2d[3x3,s1,same](x0, w0))");
    ck_assert_int_eq(xf_ruleset_rule(rs, 2)->src.nodes[0].op, XF_OP_CONV);
    ck_assert_ptr_null(xf_ruleset_rule(rs, 4));
    xf_ruleset_free(rs);

    o.both_directions = 0;
    ck_assert_int_eq(xf_ruleset_load(path, &o, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 3); /* A, B, C (F = A) */
    ck_assert_int_eq(xf_ruleset_duplicates(rs), 1);
    xf_ruleset_free(rs);

    o.both_directions = 1;
    o.status = -1; /* + the candidate E, not the refuted D; E's reverse is E */
    ck_assert_int_eq(xf_ruleset_load(path, &o, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 5);
    ck_assert_int_eq(xf_ruleset_rule_id(rs, 4), id[4]); /* in id order: A B -B C E */
    ck_assert_int_eq(xf_ruleset_duplicates(rs), 2);      /* -E, F */
    xf_ruleset_free(rs);

    o.status = 1;
    o.limit = 1; /* A alone: its reverse is added (F is not loaded), then found equal */
    ck_assert_int_eq(xf_ruleset_load(path, &o, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 1);
    ck_assert_int_eq(xf_ruleset_rule_id(rs, 0), id[0]);
    ck_assert_int_eq(xf_ruleset_duplicates(rs), 1);
    xf_ruleset_free(rs);

    o.limit = 0;
    o.max_size = 1; /* B has two operators on its source side */
    ck_assert_int_eq(xf_ruleset_load(path, &o, &rs, &err), XF_OK);
    ck_assert_int_eq(xf_ruleset_count(rs), 1); /* A (F = A) */
    xf_ruleset_free(rs);

    const char *missing = xf_test_tmp("missing.db");
    remove(missing);
    ck_assert_int_ne(xf_ruleset_load(missing, NULL, &rs, &err), XF_OK);
    ck_assert_ptr_null(rs);
    ck_assert(strstr(err.msg, "missing.db") != NULL);
}
END_TEST

/* ------------------------------------------------------------ duplicates */

/* ewadd(x0, x1) => ewadd(x1, x0) at the given shape; swapped: written as
 * ewadd(x1, x0) => ewadd(x0, x1), the same rule with its inputs renamed. */
static void rule_add_at(xf_rule *r, int rank, const int64_t *dims, int swapped)
{
    xf_rule_init(r);
    int s0 = in(&r->src, "x0", XF_F32, rank, dims), s1 = in(&r->src, "x1", XF_F32, rank, dims);
    int d0 = in(&r->dst, "x0", XF_F32, rank, dims), d1 = in(&r->dst, "x1", XF_F32, rank, dims);
    if (swapped) {
        xf_test_out(&r->src, op(&r->src, XF_OP_ADD, NULL, s1, s0));
        xf_test_out(&r->dst, op(&r->dst, XF_OP_ADD, NULL, d0, d1));
    } else {
        xf_test_out(&r->src, op(&r->src, XF_OP_ADD, NULL, s0, s1));
        xf_test_out(&r->dst, op(&r->dst, XF_OP_ADD, NULL, d1, d0));
    }
}

/* relu(concat[axis](x0, x1)) => concat[axis](relu(x0), relu(x1)) */
static void rule_relu_concat(xf_rule *r, int rank, const int64_t *dims, int axis)
{
    xf_rule_init(r);
    xf_params cat = xf_params_default();
    cat.axis = axis;
    int s0 = in(&r->src, "x0", XF_F32, rank, dims), s1 = in(&r->src, "x1", XF_F32, rank, dims);
    int d0 = in(&r->dst, "x0", XF_F32, rank, dims), d1 = in(&r->dst, "x1", XF_F32, rank, dims);
    xf_test_out(&r->src,
                op(&r->src, XF_OP_RELU, NULL, op(&r->src, XF_OP_CONCAT, &cat, s0, s1), -1));
    xf_test_out(&r->dst, op(&r->dst, XF_OP_CONCAT, &cat, op(&r->dst, XF_OP_RELU, NULL, d0, -1),
                    op(&r->dst, XF_OP_RELU, NULL, d1, -1)));
}

static void make_dup_rule(xf_rule *r, int k)
{
    switch (k) {
    case 0: rule_add_at(r, 4, X4, 0); break;
    case 1: rule_add_at(r, 2, M44, 0); break;
    case 2: rule_add_at(r, 4, W33, 1); break;
    case 3: rule_relu_concat(r, 4, X4, 1); break;
    case 4: rule_relu_concat(r, 2, M44, 1); break;
    default: rule_relu_concat(r, 4, X4, -3); break;
    }
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Locations of action a of rs and of rule 0 of alone are the same nodes and
 * outputs with the same inputs (in any order), and applying them gives
 * graphs with equal hashes. Returns the number of locations. */
static int same_locations(const xf_ruleset *rs, int a, const xf_ruleset *alone,
                          const xf_graph *g)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_msg(xf_graph_index_build(g, &ix, &err) == XF_OK, "%s", err.msg);
    xf_match m1[16], m2[16];
    int n1 = 0, n2 = 0;
    ck_assert_int_eq(xf_match_rule(rs, a, g, ix, m1, 16, &n1, &err), XF_OK);
    ck_assert_int_eq(xf_match_rule(alone, 0, g, ix, m2, 16, &n2, &err), XF_OK);
    ck_assert_int_eq(n1, n2);
    for (int i = 0; i < n1; i++) {
        ck_assert(memcmp(m1[i].nodes, m2[i].nodes, sizeof m1[i].nodes) == 0);
        ck_assert(memcmp(m1[i].outputs, m2[i].outputs, sizeof m1[i].outputs) == 0);
        ck_assert_int_eq(m1[i].n_inputs, m2[i].n_inputs);
        qsort(m1[i].inputs, (size_t)m1[i].n_inputs, sizeof(int), cmp_int);
        int sorted[XF_MATCH_MAX_INPUTS];
        memcpy(sorted, m2[i].inputs, sizeof sorted);
        qsort(sorted, (size_t)m2[i].n_inputs, sizeof(int), cmp_int);
        ck_assert(memcmp(m1[i].inputs, sorted, sizeof(int) * (size_t)m1[i].n_inputs) == 0);
    }
    /* the rewrites (matches re-fetched: the inputs above were sorted) */
    xf_match_rule(rs, a, g, ix, m1, 16, &n1, &err);
    for (int i = 0; i < n1; i++) {
        xf_graph r1, r2;
        ck_assert_msg(xf_match_apply(rs, g, ix, &m1[i], &r1, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_match_apply(alone, g, ix, &m2[i], &r2, &err) == XF_OK, "%s", err.msg);
        ck_assert(xf_graph_hash_mode(&r1, XF_HASH_IDENTITY) == xf_graph_hash_mode(&r2, XF_HASH_IDENTITY));
        xf_graph_free(&r1);
        xf_graph_free(&r2);
    }
    xf_graph_index_free(ix);
    return n1;
}

START_TEST(test_ruleset_duplicates)
{
    xf_rule rules[6];
    for (int k = 0; k < 6; k++) make_dup_rule(&rules[k], k);
    xf_ruleset *rs = set_of(rules, 6, 1);
    /* ids 1..6, each followed by its reverse: ewadd at three shapes (and
     * each reverse, the rule itself with renamed inputs) is one action,
     * the one on matrices (id 2), whose validity domain says nothing of
     * the batch dims the 4-D ones tie; relu-concat at axis -3 (4-D axis 1
     * or -3) and at axis -1 (2-D) are two patterns, each with its reverse */
    ck_assert_int_eq(xf_ruleset_count(rs), 5);
    const int64_t want[5] = {2, 4, -4, 5, -5};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(xf_ruleset_rule_id(rs, i), want[i]);
    ck_assert_int_eq(xf_ruleset_duplicates(rs), 7);
    ck_assert_int_eq(xf_ruleset_skipped(rs, NULL), 0);

    /* a graph at other shapes: adds of 2-D and 3-D values, relu of a concat
     * and a concat of relus along the last axis of 2-D values and along
     * the first of 3-D ones */
    xf_graph g;
    xf_graph_init(&g);
    const int64_t d2[2] = {3, 8}, d3[3] = {2, 3, 8};
    int a = in(&g, "a", XF_F32, 2, d2), b = in(&g, "b", XF_F32, 2, d2);
    int c = in(&g, "c", XF_F32, 3, d3), e = in(&g, "e", XF_F32, 3, d3);
    xf_params cat = xf_params_default();
    xf_test_out(&g, op(&g, XF_OP_ADD, NULL, a, b));
    xf_test_out(&g, op(&g, XF_OP_ADD, NULL, c, e));
    cat.axis = 1;
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, op(&g, XF_OP_CONCAT, &cat, a, b), -1));
    xf_test_out(&g, op(&g, XF_OP_CONCAT, &cat, op(&g, XF_OP_RELU, NULL, a, -1),
               op(&g, XF_OP_RELU, NULL, b, -1)));
    cat.axis = 0;
    xf_test_out(&g, op(&g, XF_OP_RELU, NULL, op(&g, XF_OP_CONCAT, &cat, c, e), -1));
    xf_test_out(&g, op(&g, XF_OP_CONCAT, &cat, op(&g, XF_OP_RELU, NULL, c, -1),
               op(&g, XF_OP_RELU, NULL, e, -1)));

    /* every rule (and reverse) on its own finds what its kept action finds */
    const int kept_of[6] = {0, 0, 0, 1, 3, 1};
    const int want_n[6] = {2, 2, 2, 1, 1, 1};
    for (int k = 0; k < 6; k++)
        for (int rev = 0; rev < 2; rev++) {
            xf_rule r;
            make_dup_rule(&r, k);
            if (rev) {
                xf_graph tmp = r.src;
                r.src = r.dst;
                r.dst = tmp;
            }
            xf_ruleset *alone = set_of(&r, 1, 0);
            int n = same_locations(rs, kept_of[k] + (k >= 3 ? rev : 0), alone, &g);
            ck_assert_msg(n == want_n[k], "rule %d%s: %d locations", k + 1, rev ? " reversed" : "",
                          n);
            xf_ruleset_free(alone);
        }
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------------------ hash */

/* relu(x) + act(x) with the two branches built in either order. */
static void branches(xf_graph *g, int swap, xf_op act)
{
    xf_graph_init(g);
    int x = in(g, swap ? "input" : "x", XF_F32, 2, M44);
    int w = cst(g, "w", 2, M44);
    int a, b;
    if (swap) {
        b = op(g, act, NULL, x, -1);
        a = op(g, XF_OP_RELU, NULL, op(g, XF_OP_MATMUL, NULL, x, w), -1);
    } else {
        a = op(g, XF_OP_RELU, NULL, op(g, XF_OP_MATMUL, NULL, x, w), -1);
        b = op(g, act, NULL, x, -1);
    }
    xf_test_out(g, op(g, XF_OP_ADD, NULL, a, b));
}

START_TEST(test_graph_hash)
{
    xf_graph g1, g2, g3, s1, s2, deep;
    xf_error err;
    branches(&g1, 0, XF_OP_SIGMOID);
    branches(&g2, 1, XF_OP_SIGMOID);
    branches(&g3, 0, XF_OP_TANH);
    /* constants are identified by their data: share g1's, then g2's */
    ck_assert_int_eq(xf_graph_clone_shared(&g1, &s1, &err), XF_OK);
    ck_assert_int_eq(xf_graph_clone_shared(&g2, &s2, &err), XF_OK);
    int w2 = 1; /* the constant's value id in both orders */
    ck_assert_int_eq(s2.values[w2].kind, XF_VALUE_CONST);
    s2.values[w2].data = s1.values[w2].data;
    uint64_t h1 = xf_graph_hash_mode(&s1, XF_HASH_IDENTITY);
    ck_assert_uint_ne(h1, 0);
    ck_assert_uint_eq(xf_graph_hash_mode(&g1, XF_HASH_IDENTITY), h1);
    ck_assert_uint_eq(xf_graph_hash_mode(&s2, XF_HASH_IDENTITY), h1); /* node order and names */
    ck_assert_uint_ne(xf_graph_hash_mode(&g2, XF_HASH_IDENTITY), h1); /* its own w: another constant */
    ck_assert_uint_ne(xf_graph_hash_mode(&g3, XF_HASH_IDENTITY), xf_graph_hash_mode(&g1, XF_HASH_IDENTITY)); /* tanh */
    /* contents are not hashed, identity is */
    ((float *)g1.values[w2].data)[3] += 1.0f;
    ck_assert_uint_eq(xf_graph_hash_mode(&g1, XF_HASH_IDENTITY), h1);
    ck_assert_int_eq(xf_graph_clone(&g1, &deep, &err), XF_OK);
    ck_assert_uint_ne(xf_graph_hash_mode(&deep, XF_HASH_IDENTITY), h1);
    /* output order matters */
    xf_test_out(&s1, 0);
    uint64_t h2 = xf_graph_hash_mode(&s1, XF_HASH_IDENTITY);
    ck_assert_uint_ne(h2, h1);
    s2.values[w2].data = NULL; /* borrowed: not freed either way */
    xf_graph_free(&s1);
    xf_graph_free(&s2);
    xf_graph_free(&deep);
    xf_graph_free(&g1);
    xf_graph_free(&g2);
    xf_graph_free(&g3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_match");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_merge_two_matmuls);
    tcase_add_test(t, test_merge_3d_activation_2d_weights);
    tcase_add_test(t, test_multi_output_cycle_rejected);
    tcase_add_test(t, test_split_part_sizes);
    tcase_add_test(t, test_split_mapped_and_read_inside);
    tcase_add_test(t, test_target_split_keeps_unequal_sizes);
    tcase_add_test(t, test_split_cut_read_in_target);
    tcase_add_test(t, test_split_of_concat_cuts);
    tcase_add_test(t, test_matcher_and_verifier_agree_on_free_splits);
    tcase_add_test(t, test_zero_size_value_is_no_match);
    tcase_add_test(t, test_commutativity);
    tcase_add_test(t, test_conv_relu_fusion);
    tcase_add_test(t, test_bare_output_and_relative_perm);
    tcase_add_test(t, test_generator_shapes);
    tcase_add_test(t, test_source_generator_as_proved);
    tcase_add_test(t, test_source_generator_over_a_batch);
    tcase_add_test(t, test_generator_sized_by_a_generator);
    tcase_add_test(t, test_generator_pairs_sized_by_each_other);
    tcase_add_test(t, test_weight_only_and_match_all);
    tcase_add_test(t, test_match_all_present_roots_in_order);
    tcase_add_test(t, test_ruleset_from_db);
    tcase_add_test(t, test_ruleset_duplicates);
    tcase_add_test(t, test_graph_hash);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
