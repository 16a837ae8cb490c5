/*
 * test_domain.c — rule validity domains (ir/domain.c, ir/domain_infer.c)
 * and where they are used: the text form round-trips and normalises (dims
 * named by the lowest of their class, an unsatisfiable domain is "0 == 1"),
 * holds() promotes ranks (an axis a tensor lacks is 1); what a rule's
 * operators demand (a concat boundary, a kernel's size, a split into
 * halves, a target split sized from the outputs, two or three equal parts
 * against parts sized from the outputs, a generator); the block
 * matmul rule of the issue, matmul(concat(m0, m1), concat(m2, m0)) =>
 * matmul(concat(m1, m0), concat(m0, m2)), false at m0 1x1, m1 1x2, m2
 * 2x1: derived by its chain of two proved rules, its stored domain says
 * m0[-1] == m2[-2], excludes that shape and holds at the own one, every
 * chain the pass stores replays with that domain, the matcher never
 * applies the rule where its domain fails and applies it where it holds
 * (the rewrite computes the same function); a derived rule without a
 * domain (schema 3) is skipped by the rule set, and a schema 3 file's
 * derived rules become candidates when migrated. A rule derived by a step
 * whose scalar input binds a 1x1 matrix keeps that matrix one element in
 * its domain (transpose(m0 + s0) => transpose(m0) + s0 was applied at 3x3),
 * and one derived by a step that holds its generator at the step's own
 * shape keeps the dims that size that generator in the graph at their own
 * sizes (relu(x + I[1x1]) => relu(x + ones[1x1]) was applied at 3x3), also
 * where a step makes it unsized and a later step sizes it
 * (neg(tr(x)) => neg(tr(x * I[1x1])) was applied at 3x3).
 */
#include <stdio.h>
#include <string.h>

#include "match/match.h"
#include "derive/derive.h"
#include "testutil.h"
#include "verify/verify.h"

static const char *const NAMES[3] = {"m0", "m1", "m2"};

/* ------------------------------------------------------------- language */

static void expect_text(const xf_domain *d, const char *want)
{
    char buf[512];
    xf_error err;
    ck_assert_msg(xf_domain_format(d, NAMES, 3, buf, sizeof buf, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(strcmp(buf, want) == 0, "domain '%s', expected '%s'", buf, want);
}

static void parse(const char *text, xf_domain *d)
{
    xf_error err;
    ck_assert_msg(xf_domain_parse(text, NAMES, 3, d, &err) == XF_OK, "%s: %s", text, err.msg);
}

START_TEST(text_round_trips_and_normalises)
{
    xf_domain d;
    xf_domain_init(&d);
    ck_assert_int_eq(d.known, 0);
    parse("", &d);
    ck_assert_int_eq(d.known, 1);
    ck_assert_int_eq(d.n, 0);
    /* equalities become classes named by their lowest dim; the rest is
     * rewritten in their terms */
    parse("m2[-2] == m0[-1]; m1[-1] == 3; m2[-1] + m1[-2] == m2[-2] + 1; m2[-1] >= 2; "
          "(m0[-2] + m1[-1]) % 2 == 1",
          &d);
    xf_error err;
    ck_assert_int_eq(xf_domain_normalize(&d, &err), XF_OK);
    expect_text(&d, "m1[-1] == 3; m0[-1] == m2[-2]; m0[-1] + 1 == m1[-2] + m2[-1]; "
                    "m2[-1] >= 2; (m0[-2]) % 2 == 0");
    xf_domain e;
    xf_domain_init(&e);
    char buf[512];
    ck_assert_int_eq(xf_domain_format(&d, NAMES, 3, buf, sizeof buf, &err), XF_OK);
    parse(buf, &e);
    ck_assert_int_eq(xf_domain_normalize(&e, &err), XF_OK);
    ck_assert(xf_domain_equal(&d, &e));
    int yes = 0;
    ck_assert_int_eq(xf_domain_implies(&d, &e, &yes, &err), XF_OK);
    ck_assert_int_eq(yes, 1);
    parse("m0[-1] == 2", &e);
    ck_assert_int_eq(xf_domain_implies(&d, &e, &yes, &err), XF_OK);
    ck_assert_int_eq(yes, 0);

    /* holds: the own axes, a missing axis is 1 */
    const int64_t a[2] = {4, 5}, b[2] = {7, 3}, c[2] = {5, 6}, one[1] = {6};
    xf_shape s0 = xf_shape_make(2, a), s1 = xf_shape_make(2, b), s2 = xf_shape_make(2, c);
    const xf_shape *in[3] = {&s0, &s1, &s2};
    parse("m2[-2] == m0[-1]; m1[-1] == 3; m1[-2] + m2[-1] == m0[-1] + 8", &d);
    ck_assert_int_eq(xf_domain_holds(&d, in, 3), 1);
    s2.dims[0] = 4;
    ck_assert_int_eq(xf_domain_holds(&d, in, 3), 0);
    ck_assert_int_eq(xf_domain_holds(&d, in, 2), 0);       /* names input 2 */
    in[2] = NULL;
    ck_assert_int_eq(xf_domain_holds(&d, in, 3), 0);       /* unbound */
    parse("m0[-3] == 1; m0[-1] == m1[-2]", &d);
    xf_shape r1 = xf_shape_make(1, one);
    in[0] = &r1;
    in[1] = &s2; /* [4,6]: its [-2] is 4, m0 has no [-3] (1) and [-1] 6 */
    ck_assert_int_eq(xf_domain_holds(&d, in, 2), 0);
    s2.dims[0] = 6;
    ck_assert_int_eq(xf_domain_holds(&d, in, 2), 1);

    /* contradictions */
    parse("m0[-1] == 2; m0[-1] == m1[-1]; m1[-1] == 3", &d);
    ck_assert_int_eq(xf_domain_normalize(&d, &err), XF_OK);
    expect_text(&d, "0 == 1");
    parse("2*m0[-1] == 3", &d);
    ck_assert_int_eq(xf_domain_normalize(&d, &err), XF_OK);
    expect_text(&d, "0 == 1");

    /* bad text */
    const char *bad[] = {"m0[1] == 2", "m9[-1] == 1", "m0[-1] = 1", "(m0[-1]) % 1 == 0",
                         "m0[-1] == 1 m1[-1] == 2", "m0[-99] == 1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_int_eq(xf_domain_parse(bad[i], NAMES, 3, &e, &err), XF_ERR_PARSE);
        ck_assert_msg(strstr(err.msg, "validity domain"), "%s", err.msg);
    }
    xf_domain_free(&d);
    xf_domain_free(&e);
}
END_TEST

/* ---------------------------------------------------------- inference */

/* "catc" concat along the last axis, "catr" along the one before. */
static int ops(xf_graph *g, const char *name, const int *args, int n)
{
    xf_params p = xf_params_default();
    xf_op op = xf_op_from_name(name);
    if (!strcmp(name, "catc") || !strcmp(name, "catr")) {
        op = XF_OP_CONCAT;
        p.axis = name[3] == 'c' ? -1 : -2;
    } else if (!strcmp(name, "tr")) { /* a matrix's transpose */
        op = XF_OP_TRANSPOSE;
        p.n_axes = 2;
        p.axes[0] = 1, p.axes[1] = 0;
    }
    ck_assert_msg(op != XF_OP_COUNT, "%s", name);
    int v = xf_graph_op(g, op, &p, args, n, NULL);
    ck_assert_int_ge(v, 0);
    return v;
}

static void make_rule(xf_rule *r, const char *src, const char *dst, const int64_t (*dims)[2])
{
    xf_rule_init(r);
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        for (int i = 0; i < 3; i++) xf_test_input(g, NAMES[i], 2, dims[i]);
        xf_test_parse_infix(g, side ? dst : src, ops);
    }
    xf_error err;
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

static const int64_t OWN[3][2] = {{4, 4}, {4, 4}, {4, 4}};
static const char BLOCK_SRC[] = "matmul(catc(m0, m1), catr(m2, m0))";
static const char BLOCK_DST[] = "matmul(catc(m1, m0), catr(m0, m2))";
/* the chain: a block product is a sum of products, and back */
static const char STEP1_SRC[] = "matmul(catc(m0, m1), catr(m2, m0))";
static const char STEP1_DST[] = "ewadd(matmul(m0, m2), matmul(m1, m0))";
static const char STEP2_SRC[] = "ewadd(matmul(m0, m2), matmul(m1, m0))";
static const char STEP2_DST[] = "matmul(catc(m1, m0), catr(m0, m2))";

START_TEST(operators_say_what_they_demand)
{
    xf_rule r;
    xf_domain d;
    xf_domain_init(&d);
    xf_error err;
    /* the block rule: the inner dims of its products add up alike; the
     * boundary is not tied, so its operators admit the shapes it is false at */
    make_rule(&r, BLOCK_SRC, BLOCK_DST, OWN);
    ck_assert_msg(xf_domain_of_rule(&r, &d, &err) == XF_OK, "%s", err.msg);
    expect_text(&d, "m0[-2] == m1[-2]; m0[-1] == m2[-1]; m0[-2] + m2[-2] == m0[-1] + m1[-1]");
    const int64_t a[2] = {1, 1}, b[2] = {1, 2}, c[2] = {2, 1};
    xf_shape s0 = xf_shape_make(2, a), s1 = xf_shape_make(2, b), s2 = xf_shape_make(2, c);
    const xf_shape *bad[3] = {&s0, &s1, &s2};
    ck_assert_int_eq(xf_domain_holds(&d, bad, 3), 1);
    xf_rule_free(&r);
    /* its first step: the products need their own inner dims equal */
    make_rule(&r, STEP1_SRC, STEP1_DST, OWN);
    ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
    expect_text(&d, "m0[-2] == m1[-2]; m0[-2] == m1[-1]; m0[-1] == m2[-2]; m0[-1] == m2[-1]");
    ck_assert_int_eq(xf_domain_holds(&d, bad, 3), 0);
    xf_rule_free(&r);
    xf_domain_free(&d);
}
END_TEST

/* A conv with a fixed kernel, a split into halves, a target split sized by
 * its outputs and a generator sized by its consumer. */
START_TEST(kernels_splits_and_generators)
{
    xf_error err;
    xf_domain d;
    xf_domain_init(&d);
    const char *names[3] = {"x", "w", "v"};
    char buf[512];
    /* relu(conv(x, w)) => conv[relu](x, w): w's window is the kernel, the
     * channels agree, an image may have any size the window fits */
    {
        xf_rule r;
        xf_rule_init(&r);
        const int64_t xd[4] = {2, 4, 4, 4}, wd[4] = {4, 4, 3, 3};
        xf_params c = xf_params_default();
        c.kernel[0] = c.kernel[1] = 3;
        c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
        for (int side = 0; side < 2; side++) {
            xf_graph *g = side ? &r.dst : &r.src;
            int x = xf_test_input(g, "x", 4, xd), w = xf_test_input(g, "w", 4, wd);
            c.activation = side ? XF_ACT_RELU : XF_ACT_NONE;
            int y = xf_test_op2(g, XF_OP_CONV, &c, x, w);
            xf_params p = xf_params_default();
            if (!side) y = xf_graph_op(g, XF_OP_RELU, &p, &y, 1, NULL);
            xf_test_out(g, y);
        }
        ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
        ck_assert_int_eq(xf_domain_format(&d, names, 2, buf, sizeof buf, &err), XF_OK);
        ck_assert_str_eq(buf, "x[-3] == w[-3]; w[-2] == 3; w[-1] == 3");
        xf_rule_free(&r);
    }
    /* matmul(x, w), matmul(x, v) => split(matmul(x, concat(w, v))): the
     * split's sizes follow the outputs, so w and v may differ in width */
    {
        xf_rule r;
        xf_rule_init(&r);
        const int64_t d4[2] = {4, 4};
        for (int side = 0; side < 2; side++) {
            xf_graph *g = side ? &r.dst : &r.src;
            int x = xf_test_input(g, "x", 2, d4), w = xf_test_input(g, "w", 2, d4),
                v = xf_test_input(g, "v", 2, d4);
            if (!side) {
                xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, x, w));
                xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, x, v));
                continue;
            }
            xf_params cat = xf_params_default(), sp = xf_params_default();
            cat.axis = sp.axis = -1;
            sp.n_split = 2;
            sp.split[0] = sp.split[1] = 4;
            int m = xf_test_op2(g, XF_OP_MATMUL, NULL, x, xf_test_op2(g, XF_OP_CONCAT, &cat, w, v));
            int n = xf_graph_add_node(g, XF_OP_SPLIT, &sp, &m, 1, 2, NULL, &err);
            ck_assert_int_ge(n, 0);
            xf_test_out(g, g->nodes[n].outputs[0]);
            xf_test_out(g, g->nodes[n].outputs[1]);
        }
        ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
        ck_assert_int_eq(xf_domain_format(&d, names, 3, buf, sizeof buf, &err), XF_OK);
        ck_assert_str_eq(buf, "x[-1] == w[-2]; x[-1] == v[-2]");
        /* read backwards, the split is the source: the same domain */
        xf_graph t = r.src;
        r.src = r.dst;
        r.dst = t;
        ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
        ck_assert_int_eq(xf_domain_format(&d, names, 3, buf, sizeof buf, &err), XF_OK);
        ck_assert_msg(strstr(buf, "x[-1] == w[-2]; x[-1] == v[-2]") == buf, "%s", buf);
        xf_rule_free(&r);
    }
    /* relu of each of k equal parts of x => the parts of relu(x), the
     * target's split sized from the outputs: k parts tie k * part = x's
     * axis, which elimination scales through (it had pinned x to its own
     * width; the equality it used stays as a modulus: the eliminated size
     * is whole); three unequal parts stay at their own sizes */
    for (int k = 2; k <= 4; k++) {
        xf_rule r;
        xf_rule_init(&r);
        const int64_t dx[2] = {2, k == 4 ? 12 : 4 * k};
        xf_params rp = xf_params_default(), sp = xf_params_default();
        sp.axis = -1;
        sp.n_split = k == 4 ? 3 : k;
        for (int i = 0; i < sp.n_split; i++) sp.split[i] = k == 4 ? 2 + 2 * i : 4;
        for (int side = 0; side < 2; side++) {
            xf_graph *g = side ? &r.dst : &r.src;
            int x = xf_test_input(g, "x", 2, dx);
            if (side) x = xf_graph_op(g, XF_OP_RELU, &rp, &x, 1, NULL);
            int n = xf_graph_add_node(g, XF_OP_SPLIT, &sp, &x, 1, sp.n_split, NULL, &err);
            ck_assert_int_ge(n, 0);
            for (int i = 0; i < sp.n_split; i++) {
                int y = g->nodes[n].outputs[i];
                if (!side) y = xf_graph_op(g, XF_OP_RELU, &rp, &y, 1, NULL);
                xf_test_out(g, y);
            }
        }
        ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
        ck_assert_int_eq(xf_domain_format(&d, names, 1, buf, sizeof buf, &err), XF_OK);
        /* three parts: the target's sizes are whole where 3 divides 2 x,
         * which the source's condition implies (kept, never wrong) */
        ck_assert_str_eq(buf, k == 2   ? "x[-1] >= 2; (x[-1]) % 2 == 0"
                              : k == 3 ? "x[-1] >= 3; (x[-1]) % 3 == 0; (2*x[-1]) % 3 == 0"
                                       : "x[-1] == 12");
        xf_rule_free(&r);
    }
    /* matmul(x, imatrix) => x: the identity is sized from x; pinned when
     * the proof covers the own size only */
    {
        xf_rule r;
        xf_rule_init(&r);
        const int64_t d4[2] = {4, 4};
        int x = xf_test_input(&r.src, "x", 2, d4);
        xf_params ip = xf_params_default();
        ip.n_shape = 2;
        ip.shape[0] = ip.shape[1] = 4;
        int id = xf_graph_op(&r.src, XF_OP_CONST_IDENTITY_MATRIX, &ip, NULL, 0, NULL);
        ck_assert_int_ge(id, 0);
        xf_test_out(&r.src, xf_test_op2(&r.src, XF_OP_MATMUL, NULL, x, id));
        xf_test_out(&r.dst, xf_test_input(&r.dst, "x", 2, d4));
        ck_assert_int_eq(xf_domain_of_rule(&r, &d, &err), XF_OK);
        ck_assert_int_eq(d.n, 0);
        ck_assert_int_eq(xf_domain_of_rule_pinned(&r, &d, &err), XF_OK);
        ck_assert_int_eq(xf_domain_format(&d, names, 1, buf, sizeof buf, &err), XF_OK);
        ck_assert_str_eq(buf, "x[-1] == 4");
        xf_rule_free(&r);
    }
    xf_domain_free(&d);
}
END_TEST

/* ------------------------------------------------- a derived block rule */

static int64_t add(xf_rulesdb *db, const char *src, const char *dst, xf_rule_status status)
{
    xf_rule r;
    make_rule(&r, src, dst, OWN);
    xf_rulesdb_rule_meta meta = {status, 0, NULL, 0};
    int64_t id = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &meta, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    return id;
}

/* A graph computing the block rule's source at shapes a, b, c. */
static void block_graph(xf_graph *g, const int64_t *a, const int64_t *b, const int64_t *c)
{
    xf_graph_init(g);
    xf_test_input(g, "m0", 2, a);
    xf_test_input(g, "m1", 2, b);
    xf_test_input(g, "m2", 2, c);
    xf_test_parse_infix(g, BLOCK_SRC, ops);
}

/* slice[0:e](x) => x where x's axis is e at its own shape: the slice is the
 * whole axis there and a constant [0, e) at any other size (the
 * interpreter clamps e), so the domain asks the axis to be e; only an end
 * past any size ("to the end") is the whole axis everywhere. */
START_TEST(slice_to_the_own_size_is_not_the_whole_axis)
{
    static const int64_t own[2] = {2, 1}, wide[2] = {2, 3};
    const char *names[1] = {"x"};
    const int64_t ends[2] = {1, INT64_MAX};
    const char *want[2] = {"x[-1] == 1", ""};
    for (int k = 0; k < 2; k++) {
        xf_rule r;
        xf_rule_init(&r);
        xf_error err;
        xf_params sp = xf_params_default();
        sp.n_axes = 1;
        sp.axes[0] = -1, sp.starts[0] = 0, sp.ends[0] = ends[k], sp.steps[0] = 1;
        int x = xf_test_input(&r.src, "x", 2, own);
        int y = xf_graph_op(&r.src, XF_OP_SLICE, &sp, &x, 1, &err);
        ck_assert_msg(y >= 0, "%s", err.msg);
        xf_test_out(&r.src, y);
        xf_test_out(&r.dst, xf_test_input(&r.dst, "x", 2, own));
        ck_assert_msg(xf_rule_validate(&r, &err) == XF_OK, "%s", err.msg);
        xf_domain d;
        xf_domain_init(&d);
        char buf[128];
        ck_assert_msg(xf_domain_of_rule(&r, &d, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_domain_format(&d, names, 1, buf, sizeof buf, &err), XF_OK);
        ck_assert_msg(strcmp(buf, want[k]) == 0, "end %lld: domain '%s'", (long long)ends[k], buf);
        /* at [2,3] the sides' outputs are [2,1] and [2,3] for the end 1:
         * the rule cannot even be built there */
        xf_shape w = xf_shape_make(2, wide);
        const xf_shape *at[1] = {&w};
        ck_assert_int_eq(xf_domain_holds(&d, at, 1), k == 1);
        xf_rule ra;
        ck_assert_int_eq(xf_verify_rule_at_shapes(&r, &w, &ra, &err) == XF_OK, k == 1);
        xf_rule_free(&ra); /* also after an error */
        xf_domain_free(&d);
        xf_rule_free(&r);
    }
}
END_TEST

/* Locations of action `action` of rs in g. */
static int locations(const xf_ruleset *rs, int action, const xf_graph *g)
{
    xf_graph_index *ix = NULL;
    xf_error err;
    ck_assert_int_eq(xf_graph_index_build(g, &ix, &err), XF_OK);
    int n = 0;
    xf_match m[8];
    ck_assert_int_eq(xf_match_rule(rs, action, g, ix, m, 8, &n, &err), XF_OK);
    if (n > 0) { /* where it applies, it computes the same function */
        xf_graph out;
        ck_assert_msg(xf_match_apply(rs, g, ix, &m[0], &out, &err) == XF_OK, "%s", err.msg);
        xf_test_expect_same_function(g, &out, 3, 1e-4);
        xf_graph_free(&out);
    }
    xf_graph_index_free(ix);
    return n;
}

/* ewadd(x, slice[0:1](x)) => ewadd(x, x) at x of 2x1 (the slice is x there):
 * at x of 2x3 both sides are built with equal output shapes (the slice's one
 * column broadcast) and differ. Its domain asks x[-1] == 1, so the matcher
 * does not apply it to a 2x3 model; with the slice taken as the whole axis
 * the domain was "" and the rewrite changed what the model computes. */
START_TEST(slice_rule_not_applied_past_its_own_size)
{
    static const int64_t own[2] = {2, 1}, wide[2] = {2, 3};
    xf_error err;
    xf_params sp = xf_params_default(), pd = xf_params_default();
    sp.n_axes = 1;
    sp.axes[0] = -1, sp.starts[0] = 0, sp.ends[0] = 1, sp.steps[0] = 1;
    xf_graph g[3]; /* source, target at 2x1; the model at 2x3 */
    for (int k = 0; k < 3; k++) {
        xf_graph_init(&g[k]);
        int x = xf_test_input(&g[k], "x", 2, k == 2 ? wide : own);
        int y = k == 1 ? x : xf_graph_op(&g[k], XF_OP_SLICE, &sp, &x, 1, &err);
        ck_assert_msg(y >= 0, "%s", err.msg);
        int in[2] = {x, y};
        int z = xf_graph_op(&g[k], XF_OP_ADD, &pd, in, 2, &err);
        ck_assert_msg(z >= 0, "%s", err.msg);
        xf_test_out(&g[k], z);
    }
    xf_rule r;
    xf_rule_init(&r);
    r.src = g[0], r.dst = g[1];
    ck_assert_msg(xf_domain_of_rule(&r, &r.domain, &err) == XF_OK, "%s", err.msg);
    const char *names[1] = {"x"};
    char buf[64];
    ck_assert_int_eq(xf_domain_format(&r.domain, names, 1, buf, sizeof buf, &err), XF_OK);
    ck_assert_msg(strcmp(buf, "x[-1] == 1") == 0, "domain '%s'", buf);
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.both_directions = 0;
    xf_ruleset *rs = NULL;
    int64_t id = 1;
    ck_assert_msg(xf_ruleset_from_rules(&r, &id, 1, &ro, &rs, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_ruleset_count(rs), 1);
    ck_assert_int_eq(locations(rs, 0, &g[0]), 1); /* at its own shape */
    ck_assert_int_eq(locations(rs, 0, &g[2]), 0);
    xf_ruleset_free(rs);
    xf_rule_free(&r);
    xf_graph_free(&g[2]);
}
END_TEST

/* The agent's rule set of the database at path with its derived rules,
 * one direction, into *rs; the action of rule `id` in it. */
static int derived_action(const char *path, int64_t id, xf_ruleset **rs)
{
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.derived = 1;
    ro.both_directions = 0;
    xf_error err;
    ck_assert_msg(xf_ruleset_load(path, &ro, rs, &err) == XF_OK, "%s", err.msg);
    int action = -1;
    for (int i = 0; i < xf_ruleset_count(*rs); i++)
        if (xf_ruleset_rule_id(*rs, i) == id) action = i;
    ck_assert_int_ge(action, 0);
    return action;
}

START_TEST(derived_block_rule_holds_where_its_chain_does)
{
    const char *path = xf_test_tmp("domain_block.db");
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    int64_t s1 = add(db, STEP1_SRC, STEP1_DST, XF_RULE_PROVED);
    int64_t s2 = add(db, STEP2_SRC, STEP2_DST, XF_RULE_PROVED);
    int64_t block = add(db, BLOCK_SRC, BLOCK_DST, XF_RULE_CANDIDATE);
    ck_assert(s1 > 0 && s2 > 0);
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = 3;
    o.same_size = 1;
    xf_derive_tally t;
    ck_assert_msg(xf_derive_db(db, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.derived, 1);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, block, &info, &err), XF_OK);
    ck_assert_int_eq(info.status, XF_RULE_DERIVED);
    ck_assert_ptr_nonnull(info.domain);
    ck_assert_str_eq(info.domain, "m0[-2] == m1[-2]; m0[-2] == m1[-1]; m0[-1] == m2[-2]; "
                                  "m0[-1] == m2[-1]");
    /* the chain replays, and composes the same domain */
    xf_rule r;
    ck_assert_int_eq(xf_rulesdb_load_rule(db, block, &r, &err), XF_OK);
    xf_rulesdb_step *steps = NULL;
    int k = 0;
    ck_assert_int_eq(xf_rulesdb_get_derivation(db, block, &steps, &k, &err), XF_OK);
    xf_domain d;
    xf_domain_init(&d);
    ck_assert_msg(xf_derive_domain(db, block, &r, steps, k, &d, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_domain_equal(&d, &r.domain));
    const int64_t a[2] = {1, 1}, b[2] = {1, 2}, c[2] = {2, 1};
    xf_shape s0 = xf_shape_make(2, a), s1s = xf_shape_make(2, b), s2s = xf_shape_make(2, c);
    const xf_shape *refuting[3] = {&s0, &s1s, &s2s};
    ck_assert_int_eq(xf_domain_holds(&r.domain, refuting, 3), 0);
    /* and the rule is false there: both sides rebuilt at those shapes
     * (the verifier's counterexample shapes) differ in floats */
    xf_shape at[3] = {s0, s1s, s2s};
    xf_rule there;
    ck_assert_int_eq(xf_verify_rule_at_shapes(&r, at, &there, &err), XF_OK);
    xf_tensor in[3], ys, yd;
    ck_assert_int_eq(xf_graph_random_inputs(&there.src, 1, in, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&there.src, in, 3, &ys, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&there.dst, in, 3, &yd, &err), XF_OK);
    ck_assert(!xf_tensor_close(&ys, &yd, 1e-3, 1e-3));
    xf_tensor_free(&ys);
    xf_tensor_free(&yd);
    for (int i = 0; i < 3; i++) xf_tensor_free(&in[i]);
    xf_rule_free(&there);
    const xf_shape *own[3] = {&r.src.values[r.src.inputs[0]].shape,
                              &r.src.values[r.src.inputs[1]].shape,
                              &r.src.values[r.src.inputs[2]].shape};
    ck_assert_int_eq(xf_domain_holds(&r.domain, own, 3), 1);
    xf_free(steps);
    xf_domain_free(&d);
    xf_rule_free(&r);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_close(db);

    /* the agent's rule set with derived rules: the block rule is applied
     * where its domain holds (m0 2x3, m1 2x2, m2 3x3: the boundaries
     * align), never where it does not (the refuting shapes, and m0 2x3,
     * m1 2x1, m2 2x3, whose concats fit but whose blocks do not) */
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.derived = 1;
    ro.both_directions = 0;
    xf_ruleset *rs = NULL;
    int action = derived_action(path, block, &rs);
    xf_graph g;
    block_graph(&g, a, b, c);
    ck_assert_int_eq(locations(rs, action, &g), 0);
    xf_graph_free(&g);
    const int64_t p0[2] = {2, 3}, p1[2] = {2, 1}, p2[2] = {2, 3};
    block_graph(&g, p0, p1, p2);
    ck_assert_int_eq(locations(rs, action, &g), 0);
    xf_graph_free(&g);
    const int64_t q0[2] = {2, 3}, q1[2] = {2, 2}, q2[2] = {3, 3};
    block_graph(&g, q0, q1, q2);
    ck_assert_int_eq(locations(rs, action, &g), 1);
    xf_graph_free(&g);
    xf_ruleset_free(rs);

    /* a derived rule whose domain was never recorded (a schema 3 file
     * read as it is) holds nowhere: the rule set skips it */
    xf_test_sql_exec(path, "UPDATE rules SET domain = NULL WHERE status = 'derived'");
    ck_assert_int_eq(xf_ruleset_load(path, &ro, &rs, &err), XF_OK);
    for (int i = 0; i < xf_ruleset_count(rs); i++) ck_assert(xf_ruleset_rule_id(rs, i) != block);
    const char *why = NULL;
    ck_assert_int_eq(xf_ruleset_skipped(rs, &why), 1);
    ck_assert_msg(why && strstr(why, "validity domain"), "%s", why ? why : "(null)");
    xf_ruleset_free(rs);
}
END_TEST

/* A rule over m0 (2-D, at a) and s0 (of rank rb at b), parsed. */
static void rule_of_m0_s0(xf_rule *r, const int64_t *a, int rb, const int64_t *b, const char *src,
                          const char *dst)
{
    xf_rule_init(r);
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        xf_test_input(g, "m0", 2, a);
        xf_test_input(g, "s0", rb, b);
        xf_test_parse_infix(g, side ? dst : src, ops);
    }
    xf_error err;
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

/* steps[0..n_steps) stored proved and `cand` a candidate (all freed here)
 * in a fresh database at path, and the derive pass of `size` run with the
 * proved rules of that size as steps too: cand must be derived, with the
 * stored domain `domain`. Returns cand's id. */
static int64_t derived_from(const char *path, xf_rule *steps, int n_steps, xf_rule *cand,
                            int size, const char *domain)
{
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0}, cand_meta = {XF_RULE_CANDIDATE, 0, NULL, 0};
    int64_t sid, rule;
    for (int i = 0; i < n_steps; i++) {
        ck_assert_msg(xf_rulesdb_add_rule(db, &steps[i], &proved, &sid, NULL, &err) == XF_OK,
                      "%s", err.msg);
        xf_rule_free(&steps[i]);
    }
    ck_assert_msg(xf_rulesdb_add_rule(db, cand, &cand_meta, &rule, NULL, &err) == XF_OK, "%s",
                  err.msg);
    xf_rule_free(cand);
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = size;
    o.same_size = 1;
    xf_derive_tally t;
    ck_assert_msg(xf_derive_db(db, &o, &t, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, rule, &info, &err), XF_OK);
    ck_assert_int_eq(info.status, XF_RULE_DERIVED);
    ck_assert_ptr_nonnull(info.domain);
    ck_assert_str_eq(info.domain, domain);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_close(db);
    return rule;
}

/* transpose(m0 + s0) => transpose(m0) + s0 is true for a scalar s0, and
 * a scalar of a rule binds a one-element value of any rank (match.c). The
 * same rule with s0 a 1x1 matrix and m0 1x1 is derived from it in one step
 * (review 40f, finding 4); but its operators tie s0 to m0 only (equal or
 * broadcast), so unless the step's need (s0 one element) is in the
 * derived domain, it admits m0 and s0 of 3x3, where the target adds s0
 * untransposed: the matcher then applied it to a 3x3 model. */
START_TEST(derived_rule_keeps_a_scalar_steps_one_element)
{
    const char *path = xf_test_tmp("domain_scalar.db");
    static const char SRC[] = "tr(ewadd(m0, s0))", DST[] = "ewadd(tr(m0), s0)";
    static const int64_t m44[2] = {4, 4}, m11[2] = {1, 1}, m33[2] = {3, 3};
    xf_rule step, r;
    rule_of_m0_s0(&step, m44, 0, NULL, SRC, DST);
    rule_of_m0_s0(&r, m11, 2, m11, SRC, DST);
    int64_t rule = derived_from(path, &step, 1, &r, 2,
                                "m0[-2] == 1; m0[-2] == m0[-1]; m0[-2] == s0[-2]; m0[-2] == s0[-1]");
    xf_ruleset *rs = NULL;
    int action = derived_action(path, rule, &rs);
    for (int k = 0; k < 2; k++) { /* 3x3 never, 1x1 (its own) yes */
        xf_graph g;
        xf_graph_init(&g);
        xf_test_input(&g, "m0", 2, k ? m11 : m33);
        xf_test_input(&g, "s0", 2, k ? m11 : m33);
        xf_test_parse_infix(&g, SRC, ops);
        ck_assert_int_eq(locations(rs, action, &g) > 0, k);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
    xf_test_remove_db(path);
}
END_TEST

/* relu(x + I) (relu: 1) or x + I in g, x of dims d, I a 1x1 generator
 * `gen` (const_imatrix, const_ones). */
static int plus_generator(xf_graph *g, const int64_t *d, xf_op gen, int64_t n, int relu)
{
    xf_params gp = xf_params_default();
    gp.n_shape = 2;
    gp.shape[0] = gp.shape[1] = n;
    int y = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_input(g, "x", 2, d),
                        xf_test_op2(g, gen, &gp, -1, -1));
    return relu ? xf_test_op2(g, XF_OP_RELU, NULL, y, -1) : y;
}

/* [relu](x + I[1x1]) => [relu](x + ones[1x1]) at x of d. */
static void rule_identity_to_ones(xf_rule *r, const int64_t *d, int relu)
{
    xf_rule_init(r);
    xf_test_out(&r->src, plus_generator(&r->src, d, XF_OP_CONST_IDENTITY_MATRIX, 1, relu));
    xf_test_out(&r->dst, plus_generator(&r->dst, d, XF_OP_CONST_ONES, 1, relu));
    xf_error err;
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

/* x + I[1x1] => x + ones[1x1], proved at x 3x3, holds where I is 1x1:
 * its consumer, the sum with a 3x3 x, does not give I its own shape, so
 * the matcher binds I of 1x1 only (xf_rule_generator_held). The rule
 * relu(x + I) => relu(x + ones) at x 1x1 follows from it in one step; but
 * there x gives I its own 1x1, so the derived rule binds I of x's shape,
 * and at 3x3 it turned relu(x + I[3x3]) into relu(x + 1) (review 44a, F3).
 * The chain's domain keeps x, which sizes the step's generator, at 1x1. */
START_TEST(derived_rule_keeps_its_steps_generator_size)
{
    const char *path = xf_test_tmp("domain_generator.db");
    static const int64_t m11[2] = {1, 1}, m33[2] = {3, 3};
    xf_rule step, r;
    rule_identity_to_ones(&step, m33, 0);
    rule_identity_to_ones(&r, m11, 1);
    int64_t rule = derived_from(path, &step, 1, &r, 3, "x[-2] == 1; x[-2] == x[-1]");
    xf_ruleset *rs = NULL;
    int action = derived_action(path, rule, &rs);
    for (int k = 0; k < 2; k++) { /* x and I of 3x3 never, 1x1 (its own) yes */
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, plus_generator(&g, k ? m11 : m33, XF_OP_CONST_IDENTITY_MATRIX, k ? 1 : 3,
                                       1));
        ck_assert_int_eq(locations(rs, action, &g) > 0, k);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
    xf_test_remove_db(path);
}
END_TEST

/* relu(x), times I[1x1] with `times`, negated with `neg`, x of d. */
static int relu_times_i(xf_graph *g, const int64_t *d, int times, int neg)
{
    xf_params gp = xf_params_default();
    gp.n_shape = 2;
    gp.shape[0] = gp.shape[1] = 1;
    int y = xf_test_op2(g, XF_OP_RELU, NULL, xf_test_input(g, "x", 2, d), -1);
    if (times)
        y = xf_test_op2(g, XF_OP_MUL, NULL, y,
                        xf_test_op2(g, XF_OP_CONST_IDENTITY_MATRIX, &gp, -1, -1));
    return neg ? xf_test_op2(g, XF_OP_NEG, NULL, y, -1) : y;
}

/* The matcher applies derived rule `rule` of the database at path (then
 * removed) to the model build(g, x, 0, 1) never at x 3x3 and at its own
 * 1x1. */
static void applied_at_1x1_only(const char *path, int64_t rule,
                                int (*build)(xf_graph *, const int64_t *, int, int))
{
    static const int64_t m11[2] = {1, 1}, m33[2] = {3, 3};
    xf_ruleset *rs = NULL;
    int action = derived_action(path, rule, &rs);
    for (int k = 0; k < 2; k++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_test_out(&g, build(&g, k ? m11 : m33, 0, 1));
        ck_assert_int_eq(locations(rs, action, &g) > 0, k);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
    xf_test_remove_db(path);
}

/* The same for a generator a step makes: relu(x) * I[1x1] => relu(x) at
 * x 3x3 holds I at 1x1, and read backward it makes one; neg(relu(x)) =>
 * neg(relu(x) * I[1x1]) at x 1x1 is derived so, and there relu(x) gives
 * the target's I its own shape, so the rule built I of x's size: at 3x3
 * the rewrite multiplied by the 3x3 identity (0.80 off; 2026-12-02). */
START_TEST(derived_rule_keeps_its_steps_made_generator_size)
{
    const char *path = xf_test_tmp("domain_made_generator.db");
    static const int64_t m11[2] = {1, 1}, m33[2] = {3, 3};
    xf_rule step, r;
    xf_rule_init(&step);
    xf_test_out(&step.src, relu_times_i(&step.src, m33, 1, 0));
    xf_test_out(&step.dst, relu_times_i(&step.dst, m33, 0, 0));
    xf_rule_init(&r);
    xf_test_out(&r.src, relu_times_i(&r.src, m11, 0, 1));
    xf_test_out(&r.dst, relu_times_i(&r.dst, m11, 1, 1));
    int64_t rule = derived_from(path, &step, 1, &r, 4, "x[-2] == 1; x[-2] == x[-1]");
    applied_at_1x1_only(path, rule, relu_times_i);
}
END_TEST

/* tr(x) (form 0), tr(x) * tr(I[1x1]) (form 1) or tr(x * I[1x1]) (form 2),
 * negated with `neg`, x of d. */
static int tr_times_i(xf_graph *g, const int64_t *d, int form, int neg)
{
    xf_params gp = xf_params_default();
    gp.n_shape = 2;
    gp.shape[0] = gp.shape[1] = 1;
    int x = xf_test_input(g, "x", 2, d);
    int i = form ? xf_test_op2(g, XF_OP_CONST_IDENTITY_MATRIX, &gp, -1, -1) : -1;
    if (form == 2) x = xf_test_op2(g, XF_OP_MUL, NULL, x, i);
    int y = ops(g, "tr", &x, 1);
    if (form == 1) y = xf_test_op2(g, XF_OP_MUL, NULL, y, ops(g, "tr", &i, 1));
    return neg ? xf_test_op2(g, XF_OP_NEG, NULL, y, -1) : y;
}

/* A generator a step makes that no reader sizes right after it, sized by
 * a later step's rewiring: tr(x) => tr(x) * tr(I[1x1]) at x 3x3 holds I at
 * 1x1 (its reader, a transpose, does not size it), and nothing reads I but
 * that transpose in the graph it makes; tr(a) * tr(b) => tr(a * b) then
 * makes x the operand I is multiplied by. neg(tr(x)) => neg(tr(x * I[1x1]))
 * at x 1x1 is derived so, and there x gives the target's I its own shape:
 * with no domain on x the matcher applied it at 3x3, multiplying by the 3x3
 * identity. The chain's domain keeps x at 1x1 (2026-12-02). */
START_TEST(derived_rule_keeps_a_generator_an_earlier_step_unread)
{
    const char *path = xf_test_tmp("domain_unread_generator.db");
    static const int64_t m11[2] = {1, 1}, m33[2] = {3, 3};
    xf_rule steps[2], r;
    xf_rule_init(&steps[0]);
    xf_test_out(&steps[0].src, tr_times_i(&steps[0].src, m33, 0, 0));
    xf_test_out(&steps[0].dst, tr_times_i(&steps[0].dst, m33, 1, 0));
    xf_rule_init(&steps[1]);
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &steps[1].dst : &steps[1].src;
        int a = xf_test_input(g, "a", 2, m33), b = xf_test_input(g, "b", 2, m33);
        if (side) {
            int ab = xf_test_op2(g, XF_OP_MUL, NULL, a, b);
            xf_test_out(g, ops(g, "tr", &ab, 1));
        } else {
            xf_test_out(g, xf_test_op2(g, XF_OP_MUL, NULL, ops(g, "tr", &a, 1),
                                       ops(g, "tr", &b, 1)));
        }
    }
    xf_rule_init(&r);
    xf_test_out(&r.src, tr_times_i(&r.src, m11, 0, 1));
    xf_test_out(&r.dst, tr_times_i(&r.dst, m11, 2, 1));
    int64_t rule = derived_from(path, steps, 2, &r, 4, "x[-2] == 1; x[-2] == x[-1]");
    applied_at_1x1_only(path, rule, tr_times_i);
}
END_TEST

START_TEST(migration_to_v4_derives_again)
{
    const char *path = xf_test_tmp("domain_v3.db");
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err), XF_OK);
    add(db, STEP1_SRC, STEP1_DST, XF_RULE_PROVED);
    add(db, STEP2_SRC, STEP2_DST, XF_RULE_PROVED);
    int64_t block = add(db, BLOCK_SRC, BLOCK_DST, XF_RULE_CANDIDATE);
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = 3;
    o.same_size = 1;
    xf_derive_tally t;
    ck_assert_int_eq(xf_derive_db(db, &o, &t, &err), XF_OK);
    xf_rulesdb_close(db);
    /* back to version 3: no domain column */
    xf_test_sql_exec(path, "ALTER TABLE rules DROP COLUMN domain; PRAGMA user_version = 3");
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM derivations"), 2);
    /* read-only: as it is; a derived rule loads without a domain */
    ck_assert_int_eq(xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err), XF_OK);
    xf_rule r;
    ck_assert_int_eq(xf_rulesdb_load_rule(db, block, &r, &err), XF_OK);
    ck_assert_int_eq(r.domain.known, 0);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
    /* a writer migrates: derived rules are candidates again, chains gone */
    ck_assert_int_eq(xf_rulesdb_open(path, 0, &db, &err), XF_OK);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), XF_RULESDB_SCHEMA_VERSION);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM rules WHERE status = 'derived'"),
                     0);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM derivations"), 0);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM rules WHERE status = 'proved'"
                                           " AND domain IS NULL"),
                     2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("domain");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, text_round_trips_and_normalises);
    tcase_add_test(t, operators_say_what_they_demand);
    tcase_add_test(t, kernels_splits_and_generators);
    tcase_add_test(t, slice_to_the_own_size_is_not_the_whole_axis);
    tcase_add_test(t, slice_rule_not_applied_past_its_own_size);
    tcase_add_test(t, derived_block_rule_holds_where_its_chain_does);
    tcase_add_test(t, derived_rule_keeps_a_scalar_steps_one_element);
    tcase_add_test(t, derived_rule_keeps_its_steps_generator_size);
    tcase_add_test(t, derived_rule_keeps_its_steps_made_generator_size);
    tcase_add_test(t, derived_rule_keeps_a_generator_an_earlier_step_unread);
    tcase_add_test(t, migration_to_v4_derives_again);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
