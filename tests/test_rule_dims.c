/*
 * test_rule_dims.c — reshapes in rules (ir/view.c, ir/rule_dims.c): the kind
 * of a reshape, and the symbolic dims that let a rule found at 2x4x4 apply
 * at a model's sizes: a target unflatten takes the lead dims of the value
 * it restores or of the source's unflatten, a split of the last axis its
 * head count; bindings that disagree are refused; a target reshape whose
 * size nothing binds makes the rule not ok.
 */
#include <string.h>

#include "testutil.h"

static xf_shape shp(int rank, int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t dims[4] = {a, b, c, d};
    return xf_shape_make(rank, dims);
}

START_TEST(classify_kinds)
{
    int k;
    xf_shape a = shp(3, 2, 4, 6, 0), b = shp(2, 8, 6, 0, 0), c = shp(4, 2, 4, 2, 3),
             d = shp(2, 4, 12, 0, 0), u = shp(3, 1, 8, 6, 0);
    ck_assert_int_eq(xf_view_classify(&a, &b, &k), XF_VIEW_FLATTEN);
    ck_assert_int_eq(k, 2);
    ck_assert_int_eq(xf_view_classify(&b, &a, &k), XF_VIEW_UNFLATTEN);
    ck_assert_int_eq(k, 2);
    ck_assert_int_eq(xf_view_classify(&a, &c, &k), XF_VIEW_SPLIT_LAST);
    ck_assert_int_eq(xf_view_classify(&c, &a, &k), XF_VIEW_MERGE_LAST);
    ck_assert_int_eq(xf_view_classify(&a, &d, &k), XF_VIEW_GENERAL);
    /* a unit lead: flatten first */
    ck_assert_int_eq(xf_view_classify(&u, &b, &k), XF_VIEW_FLATTEN);
    ck_assert_str_eq(xf_view_kind_name(XF_VIEW_SPLIT_LAST), "split_last");
}
END_TEST

static void inputs(xf_rule *r, const xf_shape *s, int n, int *src, int *dst)
{
    xf_error err;
    char name[8];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "in%d", i);
        src[i] = xf_graph_add_input(&r->src, name, XF_F32, &s[i], &err);
        dst[i] = xf_graph_add_input(&r->dst, name, XF_F32, &s[i], &err);
    }
}

static void outputs(xf_rule *r, int a, int b)
{
    xf_error err;
    ck_assert_int_eq(xf_graph_mark_output(&r->src, a, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&r->dst, b, &err), XF_OK);
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

/* Binds the source at the given input shapes (the source's other values
 * recomputed by building the source again at those shapes). */
static int bind_at(const xf_rule_dims *d, const xf_graph *src_at, int64_t *symval)
{
    xf_shape sh[64];
    for (int v = 0; v < src_at->n_values && v < 64; v++) sh[v] = src_at->values[v].shape;
    return xf_rule_dims_bind(d, sh, symval);
}

/* layernorm(x, g) => unflatten(layernorm(flatten(x), g)): the target's
 * unflatten restores x's lead dims, whatever they are. */
START_TEST(target_unflatten_from_input)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[2] = {shp(3, 2, 4, 4, 0), shp(1, 4, 0, 0, 0)};
    int a[2], b[2];
    inputs(&r, s, 2, a, b);
    int lo = xf_test_op2(&r.src, XF_OP_LAYERNORM, NULL, a[0], a[1]);
    r.src.nodes[0].params.axis = -1;
    int f = xf_test_reshape(&r.dst, b[0], shp(2, 8, 4, 0, 0));
    int ln = xf_test_op2(&r.dst, XF_OP_LAYERNORM, NULL, f, b[1]);
    int u = xf_test_reshape(&r.dst, ln, shp(3, 2, 4, 4, 0));
    outputs(&r, lo, u);
    ck_assert(xf_rule_has_views(&r));
    xf_rule_dims d;
    xf_error err;
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    ck_assert_msg(d.ok, "%s", d.why ? d.why : "");
    /* the same source at [3, 5, 7] */
    xf_graph at;
    xf_graph_init(&at);
    xf_shape s2[2] = {shp(3, 3, 5, 7, 0), shp(1, 7, 0, 0, 0)};
    int x = xf_graph_add_input(&at, "in0", XF_F32, &s2[0], &err);
    int g = xf_graph_add_input(&at, "in1", XF_F32, &s2[1], &err);
    xf_test_op2(&at, XF_OP_LAYERNORM, NULL, x, g);
    int64_t sym[XF_RULE_DIMS_MAX_SYMS];
    ck_assert(bind_at(&d, &at, sym));
    xf_shape fs = {2, {0}}, us = {3, {0}};
    ck_assert(xf_rule_dims_shape(&d, 1, f, sym, &fs));
    ck_assert(xf_rule_dims_shape(&d, 1, u, sym, &us));
    ck_assert_int_eq(fs.dims[0], 15);
    ck_assert_int_eq(fs.dims[1], 7);
    ck_assert_int_eq(us.dims[0], 3);
    ck_assert_int_eq(us.dims[1], 5);
    ck_assert_int_eq(us.dims[2], 7);
    /* a scale of another size disagrees with the tie to x's last dim */
    xf_graph_free(&at);
    xf_graph_init(&at);
    s2[1] = shp(1, 6, 0, 0, 0);
    x = xf_graph_add_input(&at, "in0", XF_F32, &s2[0], &err);
    xf_graph_add_input(&at, "in1", XF_F32, &s2[1], &err);
    xf_shape sh[8];
    for (int v = 0; v < r.src.n_values; v++) sh[v] = r.src.values[v].shape;
    sh[a[0]] = s2[0];
    sh[a[1]] = s2[1];
    sh[lo].rank = -1;
    ck_assert(!xf_rule_dims_bind(&d, sh, sym));
    xf_graph_free(&at);
    xf_rule_dims_free(&d);
    xf_rule_free(&r);
}
END_TEST

/* ewadd(unflatten(a), unflatten(b)) => unflatten(ewadd(a, b)): the target's
 * unflatten takes the source's lead dims, bound at the match; two source
 * unflattens with different lead dims do not bind. */
START_TEST(target_unflatten_from_source_variable)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[2] = {shp(2, 8, 4, 0, 0), shp(2, 8, 4, 0, 0)};
    int a[2], b[2];
    inputs(&r, s, 2, a, b);
    int ua = xf_test_reshape(&r.src, a[0], shp(3, 2, 4, 4, 0));
    int ub = xf_test_reshape(&r.src, a[1], shp(3, 2, 4, 4, 0));
    int sum = xf_test_op2(&r.src, XF_OP_ADD, NULL, ua, ub);
    int t = xf_test_op2(&r.dst, XF_OP_ADD, NULL, b[0], b[1]);
    int u = xf_test_reshape(&r.dst, t, shp(3, 2, 4, 4, 0));
    outputs(&r, sum, u);
    xf_rule_dims d;
    xf_error err;
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    ck_assert_msg(d.ok, "%s", d.why ? d.why : "");
    xf_shape sh[8];
    sh[a[0]] = shp(2, 512, 768, 0, 0);
    sh[a[1]] = shp(2, 512, 768, 0, 0);
    sh[ua] = shp(3, 4, 128, 768, 0);
    sh[ub] = shp(3, 4, 128, 768, 0);
    sh[sum] = shp(3, 4, 128, 768, 0);
    int64_t sym[XF_RULE_DIMS_MAX_SYMS];
    ck_assert(xf_rule_dims_bind(&d, sh, sym));
    xf_shape us = {3, {0}};
    ck_assert(xf_rule_dims_shape(&d, 1, u, sym, &us));
    ck_assert_int_eq(us.dims[0], 4);
    ck_assert_int_eq(us.dims[1], 128);
    ck_assert_int_eq(us.dims[2], 768);
    sh[ub] = shp(3, 2, 256, 768, 0); /* another lead: not the rule */
    ck_assert(!xf_rule_dims_bind(&d, sh, sym));
    xf_rule_dims_free(&d);
    xf_rule_free(&r);
}
END_TEST

/* A split of the last axis: the head count is a variable of the source;
 * merge(split(x)) => x binds it, and the target of the reverse rule
 * (x => merge(split(x)) has no source reshape) is not ok. */
START_TEST(head_count_variable)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[1] = {shp(3, 2, 4, 4, 0)};
    int a[1], b[1];
    inputs(&r, s, 1, a, b);
    int h = xf_test_reshape(&r.src, a[0], shp(4, 2, 4, 2, 2));
    int rl = xf_test_op2(&r.src, XF_OP_RELU, NULL, h, -1);
    int rb = xf_test_op2(&r.dst, XF_OP_RELU, NULL, b[0], -1);
    int h2 = xf_test_reshape(&r.dst, rb, shp(4, 2, 4, 2, 2));
    outputs(&r, rl, h2);
    xf_rule_dims d;
    xf_error err;
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    ck_assert_msg(d.ok, "%s", d.why ? d.why : "");
    xf_shape sh[8];
    sh[a[0]] = shp(3, 1, 128, 768, 0);
    sh[h] = shp(4, 1, 128, 12, 64);
    sh[rl] = shp(4, 1, 128, 12, 64);
    int64_t sym[XF_RULE_DIMS_MAX_SYMS];
    ck_assert(xf_rule_dims_bind(&d, sh, sym));
    xf_shape hs = {4, {0}};
    ck_assert(xf_rule_dims_shape(&d, 1, h2, sym, &hs));
    ck_assert_int_eq(hs.dims[2], 12);
    ck_assert_int_eq(hs.dims[3], 64);
    char buf[64];
    ck_assert_str_eq(xf_dimx_str(&d.val[1][h2][3], buf, sizeof buf), "in0.2/v0");
    xf_rule_dims_free(&d);
    xf_rule_free(&r);

    /* relu(x) => unflatten(flatten(relu(x)))'s lead is bound; a target
     * split whose heads nothing fixes is not */
    xf_rule_init(&r);
    inputs(&r, s, 1, a, b);
    int x = xf_test_op2(&r.src, XF_OP_RELU, NULL, a[0], -1);
    int y = xf_test_op2(&r.dst, XF_OP_RELU, NULL, b[0], -1);
    int sp = xf_test_reshape(&r.dst, y, shp(4, 2, 4, 2, 2));
    int mg = xf_test_reshape(&r.dst, sp, shp(3, 2, 4, 4, 0));
    outputs(&r, x, mg);
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    ck_assert(!d.ok);
    xf_test_expect_contains(d.why, "nothing in the source binds");
    xf_rule_dims_free(&d);
    xf_rule_free(&r);
}
END_TEST

/* A slice's end equal to its axis's own size is a constant, not the
 * whole axis: flatten(relu(x[:, 0:4])) => relu(flatten(x[:, 0:4])) at x
 * 2x4 binds a model's x of 2x6 (the slice takes 4 columns of 6, and the
 * validity domain, x[-1] >= 4, reads it so), the target's flatten at 8;
 * only "to the end" is x's last dim (review 42d, L4: the monomial was x's,
 * and the binding at 6 was refused). */
START_TEST(slice_end_at_the_own_size_is_a_constant)
{
    for (int to_end = 0; to_end < 2; to_end++) {
        xf_rule r;
        xf_rule_init(&r);
        xf_shape s[1] = {shp(2, 2, 4, 0, 0)};
        int a[1], b[1];
        inputs(&r, s, 1, a, b);
        xf_params sl = xf_params_default();
        sl.n_axes = 1, sl.axes[0] = -1, sl.starts[0] = 0, sl.steps[0] = 1;
        sl.ends[0] = to_end ? XF_SLICE_TO_THE_END : 4;
        int cut = xf_test_op2(&r.src, XF_OP_SLICE, &sl, a[0], -1);
        int rl = xf_test_op2(&r.src, XF_OP_RELU, NULL, cut, -1);
        int fl = xf_test_reshape(&r.src, rl, shp(1, 8, 0, 0, 0));
        int f2 = xf_test_reshape(&r.dst, xf_test_op2(&r.dst, XF_OP_SLICE, &sl, b[0], -1),
                                 shp(1, 8, 0, 0, 0));
        outputs(&r, fl, xf_test_op2(&r.dst, XF_OP_RELU, NULL, f2, -1));
        xf_domain dom;
        xf_domain_init(&dom);
        xf_error err;
        ck_assert_int_eq(xf_domain_of_rule(&r, &dom, &err), XF_OK);
        const char *names[1] = {"x"};
        char text[128];
        ck_assert_int_eq(xf_domain_format(&dom, names, 1, text, sizeof text, &err), XF_OK);
        ck_assert_str_eq(text, to_end ? "" : "x[-1] >= 4");
        xf_domain_free(&dom);
        xf_rule_dims d;
        ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
        ck_assert_msg(d.ok, "%s", d.why ? d.why : "");
        char buf[64];
        ck_assert_str_eq(xf_dimx_str(&d.val[0][cut][1], buf, sizeof buf), to_end ? "in0.1" : "4");
        xf_shape sh[8];
        sh[a[0]] = shp(2, 2, 6, 0, 0);
        sh[cut] = shp(2, 2, to_end ? 6 : 4, 0, 0);
        sh[rl] = sh[cut];
        sh[fl] = shp(1, to_end ? 12 : 8, 0, 0, 0);
        int64_t sym[XF_RULE_DIMS_MAX_SYMS];
        ck_assert(xf_rule_dims_bind(&d, sh, sym));
        xf_shape fs = {1, {0}};
        ck_assert(xf_rule_dims_shape(&d, 1, f2, sym, &fs));
        ck_assert_int_eq(fs.dims[0], to_end ? 12 : 8);
        xf_rule_dims_free(&d);
        xf_rule_free(&r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rule_dims");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, classify_kinds);
    tcase_add_test(tc, target_unflatten_from_input);
    tcase_add_test(tc, target_unflatten_from_source_variable);
    tcase_add_test(tc, head_count_variable);
    tcase_add_test(tc, slice_end_at_the_own_size_is_a_constant);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
