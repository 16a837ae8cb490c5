/*
 * test_rule_dims.c — reshapes in rules (ir/view.c, ir/rule_dims.c): the kind
 * of a reshape, and the symbolic dims that let a rule found at 2x4x4 apply
 * at a model's sizes: a target unflatten takes the lead dims of the value
 * it restores or of the source's unflatten, a split of the last axis its
 * head count; bindings that disagree are refused; a target reshape whose
 * size nothing binds makes the rule not ok. The dims follow ir's shapes
 * operator by operator; the matcher refuses a source value of another rank
 * (a squeeze of no axes dropping a kept dim that is 1 in the model) and a
 * stepped slice's input away from its own size.
 */
#include <string.h>

#include "agent_fixture.h"
#include "match/match.h"
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

/* ------------------------------------------- the dims against ir's shapes */

/* One operator over inputs of shapes `in` into g (a where's condition bool);
 * its node, or -1 when ir's shape inference refuses them. */
static int build_op(xf_graph *g, xf_op op, const xf_params *p, const xf_shape *in, int n_in,
                    int n_out)
{
    xf_error err;
    int v[5];
    char name[8];
    xf_graph_init(g);
    for (int i = 0; i < n_in; i++) {
        snprintf(name, sizeof name, "in%d", i);
        v[i] = xf_graph_add_input(g, name, op == XF_OP_WHERE && i == 0 ? XF_BOOL : XF_F32, &in[i],
                                  &err);
        ck_assert_msg(v[i] >= 0, "%s", err.msg);
    }
    int n = xf_graph_add_node(g, op, p, v, n_in, n_out, NULL, &err);
    if (n < 0) return -1;
    for (int o = 0; o < g->nodes[n].n_outputs; o++)
        ck_assert_int_eq(xf_graph_mark_output(g, g->nodes[n].outputs[o], &err), XF_OK);
    return n;
}

/* The rule op(in..) => op(in..) into *r at the input shapes own[0 ..
 * n_in); its source node. */
static int op_rule(xf_rule *r, xf_op op, const xf_params *p, const xf_shape *own, int n_in,
                   int n_out)
{
    xf_rule_init(r);
    xf_graph_free(&r->src);
    xf_graph_free(&r->dst);
    int n = build_op(&r->src, op, p, own, n_in, n_out);
    ck_assert_msg(n >= 0 && build_op(&r->dst, op, p, own, n_in, n_out) >= 0,
                  "%s: ir refuses the own shapes", xf_op_get(op)->name);
    return n;
}

/* The rule op(in..) => op(in..) at the own input shapes own[0 .. n_in):
 * its symbolic dims bind at each of the n_at other input shapes at[k *
 * n_in ..] as the matcher binds them (every source value's shape, ir's
 * shape inference there: the operator with parameters p_at[k], or p where
 * p_at is NULL), and every dim of both sides that is not opaque is the
 * size ir infers there; `followed`: no output dim is opaque. */
static void expect_dims_at(const char *what, xf_op op, const xf_params *p, const xf_params *p_at,
                           int n_in, int n_out, const xf_shape *own, const xf_shape *at, int n_at,
                           int followed)
{
    xf_rule r;
    int ns = op_rule(&r, op, p, own, n_in, n_out);
    xf_rule_dims d;
    xf_error err;
    char b[64], c[64];
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    ck_assert_msg(d.ok, "%s: %s", what, d.why ? d.why : "");
    const xf_node *nd = &r.src.nodes[ns];
    for (int o = 0; followed && o < nd->n_outputs; o++)
        for (int i = 0; i < r.src.values[nd->outputs[o]].shape.rank; i++)
            ck_assert_msg(d.val[0][nd->outputs[o]][i].den != 0, "%s: output %d dim %d is opaque",
                          what, o, i);
    for (int k = -1; k < n_at; k++) {
        const xf_shape *in = k < 0 ? own : at + k * n_in;
        xf_graph g;
        ck_assert_msg(build_op(&g, op, k < 0 || !p_at ? p : &p_at[k], in, n_in, n_out) >= 0,
                      "%s: ir refuses sizes %d", what, k);
        xf_shape sh[8];
        ck_assert_int_le(g.n_values, 8);
        for (int v = 0; v < g.n_values; v++) sh[v] = g.values[v].shape;
        int64_t sym[XF_RULE_DIMS_MAX_SYMS];
        ck_assert_msg(xf_rule_dims_bind(&d, sh, sym), "%s: not bound at sizes %d (input %s)", what,
                      k, xf_shape_str(&in[0], b, sizeof b));
        for (int side = 0; side < 2; side++)
            for (int v = 0; v < g.n_values; v++)
                ck_assert_msg(g.values[v].shape.rank == r.src.values[v].shape.rank &&
                                  xf_rule_dims_agree(&d, side, v, sym, &sh[v]),
                              "%s: value %d is %s at sizes %d, its dim 0 %s", what, v,
                              xf_shape_str(&sh[v], b, sizeof b), k,
                              xf_dimx_str(&d.val[side][v][0], c, sizeof c));
        xf_graph_free(&g);
    }
    xf_rule_dims_free(&d);
    xf_rule_free(&r);
}

static void expect_dims(const char *what, xf_op op, const xf_params *p, int n_in, int n_out,
                        const xf_shape *own, const xf_shape *at, int n_at, int followed)
{
    expect_dims_at(what, op, p, NULL, n_in, n_out, own, at, n_at, followed);
}

static xf_params axes_of(int n, int64_t a0, int64_t a1, int64_t a2, int64_t a3)
{
    xf_params p = xf_params_default();
    int64_t a[4] = {a0, a1, a2, a3};
    p.n_axes = n;
    for (int i = 0; i < n; i++) p.axes[i] = a[i];
    return p;
}

/* A reduce with no axes reduces every axis (ONNX's ReduceMean and its kin
 * with noop_with_empty_axes 0; ir's kernels, shape inference and validity
 * domain: xf_reduce_axes): its output is all 1s (keepdims) or a scalar,
 * not its input's dims. */
START_TEST(reduce_dims_follow_the_operator)
{
    xf_shape own[1] = {shp(3, 2, 3, 4, 0)};
    xf_shape at[2] = {shp(3, 5, 3, 7, 0), shp(3, 1, 6, 2, 0)};
    xf_op ops[3] = {XF_OP_REDUCE_MEAN, XF_OP_REDUCE_SUM, XF_OP_REDUCE_MAX};
    for (int o = 0; o < 3; o++)
        for (int keep = 0; keep < 2; keep++) {
            xf_params none = axes_of(0, 0, 0, 0, 0), last = axes_of(1, -1, 0, 0, 0),
                      two = axes_of(2, 0, 2, 0, 0);
            none.keepdims = last.keepdims = two.keepdims = keep;
            expect_dims("reduce, no axes", ops[o], &none, 1, 1, own, at, 2, 1);
            expect_dims("reduce, the last axis", ops[o], &last, 1, 1, own, at, 2, 1);
            expect_dims("reduce, axes 0 and 2", ops[o], &two, 1, 1, own, at, 2, 1);
        }
}
END_TEST

#define S1(a) shp(1, a, 0, 0, 0)
#define S2(a, b) shp(2, a, b, 0, 0)
#define S3(a, b, c) shp(3, a, b, c, 0)
#define S4(a, b, c, d) shp(4, a, b, c, d)

/* Every other operator rule_dims follows, against ir's shape inference at
 * sizes like the rule's (the same dims of 1, equal parts equal). */
START_TEST(dims_agree_with_ir_shapes)
{
    xf_params none = xf_params_default(), p = none;
    {   /* broadcasting: right-aligned, a 1 against a dim stays 1 */
        xf_shape own[2] = {S3(2, 3, 4), S2(3, 4)}, at[4] = {S3(5, 3, 4), S2(3, 4), S3(2, 6, 7), S2(6, 7)};
        expect_dims("add", XF_OP_ADD, &none, 2, 1, own, at, 2, 1);
        xf_shape own1[2] = {S3(2, 1, 4), S2(3, 1)}, at1[2] = {S3(5, 1, 7), S2(6, 1)};
        expect_dims("mul with 1s", XF_OP_MUL, &none, 2, 1, own1, at1, 1, 1);
        xf_shape own2[2] = {S3(2, 3, 4), S1(4)}, at2[2] = {S3(5, 6, 7), S1(7)};
        expect_dims("prelu", XF_OP_PRELU, &none, 2, 1, own2, at2, 1, 1);
        xf_shape own3[2] = {S2(2, 3), shp(0, 0, 0, 0, 0)}, at3[2] = {S2(5, 7), shp(0, 0, 0, 0, 0)};
        expect_dims("scalar_mul", XF_OP_SCALAR_MUL, &none, 2, 1, own3, at3, 1, 1);
    }
    {   /* where: the branches broadcast first; the condition may be the
         * operand with the rows */
        xf_shape own[3] = {S2(2, 3), S2(1, 3), S2(1, 3)}, at[3] = {S2(4, 5), S2(1, 5), S2(1, 5)};
        expect_dims("where, rows from the condition", XF_OP_WHERE, &none, 3, 1, own, at, 1, 1);
        xf_shape own1[3] = {S2(1, 3), S2(2, 1), S2(2, 3)}, at1[3] = {S2(1, 5), S2(4, 1), S2(4, 5)};
        expect_dims("where, mixed", XF_OP_WHERE, &none, 3, 1, own1, at1, 1, 1);
    }
    {   /* matmul: inner dims tied, batch dims broadcast */
        xf_shape own[2] = {S2(2, 3), S2(3, 4)}, at[2] = {S2(5, 6), S2(6, 7)};
        expect_dims("matmul 2-D", XF_OP_MATMUL, &none, 2, 1, own, at, 1, 1);
        xf_shape own1[2] = {S3(2, 3, 4), S2(4, 5)}, at1[2] = {S3(6, 7, 8), S2(8, 3)};
        expect_dims("matmul 3-D by 2-D", XF_OP_MATMUL, &none, 2, 1, own1, at1, 1, 1);
        xf_shape own2[2] = {S4(2, 1, 3, 4), S3(5, 4, 6)}, at2[2] = {S4(3, 1, 5, 2), S3(4, 2, 7)};
        expect_dims("matmul, batches broadcast", XF_OP_MATMUL, &none, 2, 1, own2, at2, 1, 1);
    }
    {   /* normalisations keep the shape */
        p = none, p.axis = -1, p.epsilon = 1e-5f;
        xf_shape own[2] = {S3(2, 3, 4), S1(4)}, at[2] = {S3(5, 6, 7), S1(7)};
        expect_dims("layernorm", XF_OP_LAYERNORM, &p, 2, 1, own, at, 1, 1);
        p = none, p.axis = -1;
        expect_dims("softmax", XF_OP_SOFTMAX, &p, 1, 1, own, at, 1, 1);
        p = none, p.epsilon = 1e-5f;
        xf_shape own1[5] = {S4(2, 3, 4, 4), S1(3), S1(3), S1(3), S1(3)},
                 at1[5] = {S4(5, 6, 7, 8), S1(6), S1(6), S1(6), S1(6)};
        expect_dims("batchnorm", XF_OP_BATCHNORM, &p, 5, 1, own1, at1, 1, 1);
    }
    {   /* concat: parts of equal monomials make n times theirs; others opaque */
        p = none, p.axis = 1;
        xf_shape own[2] = {S2(2, 3), S2(2, 3)}, at[2] = {S2(5, 7), S2(5, 7)};
        expect_dims("concat", XF_OP_CONCAT, &p, 2, 1, own, at, 1, 0);
        xf_shape own1[2] = {S2(2, 3), S2(2, 4)}, at1[2] = {S2(5, 3), S2(5, 6)};
        expect_dims("concat, unequal parts", XF_OP_CONCAT, &p, 2, 1, own1, at1, 1, 0);
    }
    {   /* split into equal parts: the matcher's sizes are the model's */
        xf_params at_p[1];
        p = none, p.axis = 1, p.n_split = 2, p.split[0] = p.split[1] = 3;
        at_p[0] = p, at_p[0].split[0] = at_p[0].split[1] = 4;
        xf_shape own[1] = {S2(2, 6)}, at[1] = {S2(5, 8)};
        expect_dims_at("split", XF_OP_SPLIT, &p, at_p, 1, 2, own, at, 1, 1);
    }
    {   /* slices: the whole axis to the end, else the own size */
        p = none, p.n_axes = 1, p.axes[0] = 1, p.steps[0] = 1, p.ends[0] = XF_SLICE_TO_THE_END;
        xf_shape own[1] = {S2(2, 6)}, at[1] = {S2(5, 7)};
        expect_dims("slice to the end", XF_OP_SLICE, &p, 1, 1, own, at, 1, 1);
        p.ends[0] = 4;
        expect_dims("slice to 4", XF_OP_SLICE, &p, 1, 1, own, at, 1, 1);
    }
    {   /* transposes: a permutation (entries from the end too) or reversed */
        xf_shape own[1] = {S3(2, 3, 4)}, at[1] = {S3(5, 6, 7)};
        p = axes_of(3, 1, 0, 2, 0);
        expect_dims("transpose", XF_OP_TRANSPOSE, &p, 1, 1, own, at, 1, 1);
        expect_dims("transpose, reversed", XF_OP_TRANSPOSE, &none, 1, 1, own, at, 1, 1);
        p = axes_of(3, -1, 0, 1, 0);
        expect_dims("transpose, from the end", XF_OP_TRANSPOSE, &p, 1, 1, own, at, 1, 1);
    }
    {   /* reshapes by kind, their targets the model's */
        xf_shape own[1] = {S3(2, 3, 4)}, at[1] = {S3(5, 6, 7)};
        xf_params at_p[1];
        p = none, p.n_shape = 2, p.shape[0] = 6, p.shape[1] = 4;
        at_p[0] = p, at_p[0].shape[0] = 30, at_p[0].shape[1] = 7;
        expect_dims_at("reshape, flatten", XF_OP_RESHAPE, &p, at_p, 1, 1, own, at, 1, 1);
        p = none, p.n_shape = 4, p.shape[0] = 2, p.shape[1] = 3, p.shape[2] = 2, p.shape[3] = 2;
        at_p[0] = p, at_p[0].shape[0] = 5, at_p[0].shape[1] = 6, at_p[0].shape[2] = 7,
        at_p[0].shape[3] = 1;
        expect_dims_at("reshape, split the last", XF_OP_RESHAPE, &p, at_p, 1, 1, own, at, 1, 1);
        p = none, p.n_shape = 2, p.shape[0] = 2, p.shape[1] = 12;
        at_p[0] = p, at_p[0].shape[0] = 5, at_p[0].shape[1] = 42;
        expect_dims_at("reshape, merge the last", XF_OP_RESHAPE, &p, at_p, 1, 1, own, at, 1, 1);
    }
    {   /* flatten at every axis */
        xf_shape own[1] = {S3(2, 3, 4)}, at[1] = {S3(5, 6, 7)};
        int64_t axes[5] = {0, 1, -1, 3, -3};
        for (int i = 0; i < 5; i++) {
            p = none, p.axis = (int32_t)axes[i];
            expect_dims("flatten", XF_OP_FLATTEN, &p, 1, 1, own, at, 1, 1);
        }
    }
    {   /* squeeze and unsqueeze; a squeeze of no axes drops the 1s */
        xf_shape own[1] = {S3(2, 1, 3)}, at[1] = {S3(5, 1, 7)};
        p = axes_of(1, 1, 0, 0, 0);
        expect_dims("squeeze", XF_OP_SQUEEZE, &p, 1, 1, own, at, 1, 1);
        expect_dims("squeeze, no axes", XF_OP_SQUEEZE, &none, 1, 1, own, at, 1, 1);
        p = axes_of(2, 0, -1, 0, 0);
        expect_dims("unsqueeze", XF_OP_UNSQUEEZE, &p, 1, 1, own, at, 1, 1);
    }
    {   /* sizes no monomial follows: opaque, never wrong */
        xf_shape own[2] = {S4(1, 2, 5, 5), S4(3, 2, 3, 3)}, at[2] = {S4(2, 2, 7, 7), S4(3, 2, 3, 3)};
        p = none, p.kernel[0] = p.kernel[1] = 3, p.stride[0] = p.stride[1] = 1;
        p.dilation[0] = p.dilation[1] = 1, p.group = 1;
        expect_dims("conv", XF_OP_CONV, &p, 2, 1, own, at, 1, 0);
        expect_dims("maxpool", XF_OP_MAXPOOL, &p, 1, 1, own, at, 1, 0);
        expect_dims("global_avgpool", XF_OP_GLOBAL_AVGPOOL, &none, 1, 1, own, at, 1, 0);
    }
}
END_TEST

/* A slice by a step longer than 1 takes a constant of the own axis, not
 * the axis (slice[0::2] of 1 takes 1, of 6 takes 3); the validity domain
 * pins its input. */
START_TEST(slice_by_a_step_is_a_constant)
{
    xf_params p = xf_params_default();
    p.n_axes = 1, p.axes[0] = 1, p.steps[0] = 2, p.ends[0] = XF_SLICE_TO_THE_END;
    xf_shape own[1] = {S2(2, 1)}, at[1] = {S2(5, 1)};
    expect_dims("slice by 2", XF_OP_SLICE, &p, 1, 1, own, at, 1, 1);
    xf_rule r;
    int n = op_rule(&r, XF_OP_SLICE, &p, own, 1, 1);
    xf_rule_dims d;
    xf_error err;
    ck_assert_int_eq(xf_rule_dims_infer(&r, &d, &err), XF_OK);
    char buf[64];
    ck_assert_str_eq(xf_dimx_str(&d.val[0][r.src.nodes[n].outputs[0]][1], buf, sizeof buf), "1");
    xf_rule_dims_free(&d);
    xf_rule_free(&r);
}
END_TEST

/* The matches of the set's one rule in g (0, or 1 applied: the rewritten
 * graph must compute what g does). */
static int applies_at(const xf_ruleset *rs, const xf_graph *g)
{
    xf_error err;
    xf_graph_index *ix = NULL;
    ck_assert_int_eq(xf_graph_index_build(g, &ix, &err), XF_OK);
    xf_match m[2];
    int n = 0;
    ck_assert_int_eq(xf_match_rule(rs, 0, g, ix, m, 2, &n, &err), XF_OK);
    if (n > 0) {
        xf_graph out;
        ck_assert_msg(xf_match_apply(rs, g, ix, &m[0], &out, &err) == XF_OK, "%s", err.msg);
        xf_test_expect_same_function(g, &out, 1, 1e-4);
        xf_graph_free(&out);
    }
    xf_graph_index_free(ix);
    return n;
}

/* reduce_sum(flatten(x)) => flatten(reduce_sum(x)), both over every axis
 * keeping dims (x [2,3,4]; a [1,1] either way): true at any x, so the
 * matcher applies it at the rule's own x and at [5,3,4]. With the no axes
 * read as none, the reduce's dims were its input's and no source bound: the
 * rule was refused everywhere, its own shapes too. */
START_TEST(reduce_over_every_axis_applies)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[1] = {shp(3, 2, 3, 4, 0)};
    int a[1], b[1];
    inputs(&r, s, 1, a, b);
    xf_params all = xf_params_default();
    all.keepdims = 1;
    int f = xf_test_reshape(&r.src, a[0], shp(2, 6, 4, 0, 0));
    int y = xf_test_op2(&r.src, XF_OP_REDUCE_SUM, &all, f, -1);
    int t = xf_test_op2(&r.dst, XF_OP_REDUCE_SUM, &all, b[0], -1);
    outputs(&r, y, xf_test_reshape(&r.dst, t, shp(2, 1, 1, 0, 0)));
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    int64_t lead[2] = {2, 5};
    for (int k = 0; k < 2; k++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_shape xs = shp(3, lead[k], 3, 4, 0);
        xf_error err;
        int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
        xf_test_out(&g, xf_test_op2(&g, XF_OP_REDUCE_SUM, &all,
                                    xf_test_reshape(&g, x, shp(2, lead[k] * 3, 4, 0, 0)), -1));
        ck_assert_msg(applies_at(rs, &g) == 1, "x [%lld,3,4]: no match", (long long)lead[k]);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
}
END_TEST

/* softmax[-1](squeeze(U(x))) => squeeze(softmax[-1](U(x))), U: x [12] ->
 * [3,1,2,2], the squeeze of no axes (the review's rule C2; the prover
 * proves it at its own shapes, where the squeeze drops only the 1). At x
 * [6] -> [2,1,3,1] the model's squeeze drops the last dim too: the source's
 * softmax runs over 3, the target's over 1. That source value has rank 2,
 * the rule's 3, and agreed on its first two dims: the matcher must refuse
 * it, and apply the rule where the kept dims stay above 1 ([3,1,4,3]). */
START_TEST(squeeze_of_no_axes_keeps_the_rank)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[1] = {shp(1, 12, 0, 0, 0)};
    int a[1], b[1];
    inputs(&r, s, 1, a, b);
    xf_params none = xf_params_default(), sm = xf_params_default();
    sm.axis = -1;
    xf_shape u = shp(4, 3, 1, 2, 2);
    int y = xf_test_op2(&r.src, XF_OP_SOFTMAX, &sm,
                        xf_test_op2(&r.src, XF_OP_SQUEEZE, &none,
                                    xf_test_reshape(&r.src, a[0], u), -1), -1);
    int t = xf_test_op2(&r.dst, XF_OP_SQUEEZE, &none,
                        xf_test_op2(&r.dst, XF_OP_SOFTMAX, &sm,
                                    xf_test_reshape(&r.dst, b[0], u), -1), -1);
    outputs(&r, y, t);
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    int64_t xn[3] = {6, 36, 12};
    xf_shape at[3] = {shp(4, 2, 1, 3, 1), shp(4, 3, 1, 4, 3), u};
    for (int k = 0; k < 3; k++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_shape xs = shp(1, xn[k], 0, 0, 0);
        xf_error err;
        int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
        xf_test_out(&g, xf_test_op2(&g, XF_OP_SOFTMAX, &sm,
                                    xf_test_op2(&g, XF_OP_SQUEEZE, &none,
                                                xf_test_reshape(&g, x, at[k]), -1), -1));
        ck_assert_msg(applies_at(rs, &g) == (k > 0), "x [%lld]: wrong number of matches",
                      (long long)xn[k]);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
}
END_TEST

/* slice[0::2](flatten(x)) => reduce_mean[0, keep](flatten(x)), x [1,1] (the
 * review's rule B): the same at the own size 1 only. The slice's output
 * is the constant 1, and its input is held at 1 too: at x [1,2] the slice
 * takes 1 of 2, the mean is another value, and the matcher refuses it. */
START_TEST(stepped_slice_holds_its_input)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_shape s[1] = {shp(2, 1, 1, 0, 0)};
    int a[1], b[1];
    inputs(&r, s, 1, a, b);
    xf_params sl = xf_params_default(), mean = xf_params_default();
    sl.n_axes = 1, sl.steps[0] = 2, sl.ends[0] = XF_SLICE_TO_THE_END;
    mean.n_axes = 1, mean.keepdims = 1;
    xf_shape flat = shp(1, 1, 0, 0, 0);
    int y = xf_test_op2(&r.src, XF_OP_SLICE, &sl, xf_test_reshape(&r.src, a[0], flat), -1);
    int t = xf_test_op2(&r.dst, XF_OP_REDUCE_MEAN, &mean, xf_test_reshape(&r.dst, b[0], flat), -1);
    outputs(&r, y, t);
    xf_ruleset *rs = xf_fx_one_rule_set(&r);
    for (int64_t w = 1; w <= 2; w++) {
        xf_graph g;
        xf_graph_init(&g);
        xf_shape xs = shp(2, 1, w, 0, 0);
        xf_error err;
        int x = xf_graph_add_input(&g, "x", XF_F32, &xs, &err);
        xf_test_out(&g, xf_test_op2(&g, XF_OP_SLICE, &sl,
                                    xf_test_reshape(&g, x, shp(1, w, 0, 0, 0)), -1));
        ck_assert_msg(applies_at(rs, &g) == (w == 1), "x [1,%lld]: wrong number of matches",
                      (long long)w);
        xf_graph_free(&g);
    }
    xf_ruleset_free(rs);
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
    tcase_add_test(tc, reduce_dims_follow_the_operator);
    tcase_add_test(tc, reduce_over_every_axis_applies);
    tcase_add_test(tc, dims_agree_with_ir_shapes);
    tcase_add_test(tc, slice_by_a_step_is_a_constant);
    tcase_add_test(tc, squeeze_of_no_axes_keeps_the_rank);
    tcase_add_test(tc, stepped_slice_holds_its_input);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
