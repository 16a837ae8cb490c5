/*
 * test_op_classes.c — the operator classes of ir's operator table
 * (XF_OPC_*, xf_op_is, xf_op_activation): every operator has exactly one
 * kind, the refinements sit inside their kinds, and each place that kept a
 * list of its own before the table (the cost model, the rewriter, the
 * verifier, the enumerator, the symbolic shape rules, import and finish) gets, from the query it
 * asks now, the same answer for every operator as from its old list. The
 * old lists are written out below as they stood, so a row changed in the
 * table fails here naming the operator and the place.
 */
#include <stdarg.h>

#include "costmodel/costmodel.h"
#include "testutil.h"

/* A set of operators, from a list ended by XF_OP_COUNT. */
typedef struct {
    unsigned char in[XF_OP_COUNT];
} opset;

static opset set_of(xf_op first, ...)
{
    opset s = {{0}};
    va_list ap;
    va_start(ap, first);
    for (int op = (int)first; op != XF_OP_COUNT; op = va_arg(ap, int)) s.in[op] = 1;
    va_end(ap);
    return s;
}

/* The old list `old` of `place` against the query `now` for every op. */
static void expect_same(const char *place, const opset *old, int (*now)(xf_op))
{
    for (int op = 0; op < XF_OP_COUNT; op++)
        ck_assert_msg(!!now((xf_op)op) == old->in[op], "%s: %s is %s the old list", place,
                      xf_op_get((xf_op)op)->name, old->in[op] ? "in" : "not in");
}

static const xf_op_info *info(xf_op op) { return xf_op_get(op); }
static int ew(xf_op op) { return xf_op_is(op, XF_OPC_ELEMENTWISE); }
static int ew_rules(xf_op op) { return ew(op) && !xf_op_is(op, XF_OPC_IMPORTED); }

/* agent/rewrite/elementwise.c (narrow.c, unbatch.c). */
START_TEST(rewriter_elementwise_list)
{
    opset old = set_of(XF_OP_RELU, XF_OP_SIGMOID, XF_OP_TANH, XF_OP_ERF, XF_OP_GELU, XF_OP_SQRT,
                       XF_OP_EXP, XF_OP_LOG, XF_OP_NEG, XF_OP_ABS, XF_OP_RECIPROCAL,
                       XF_OP_IDENTITY, XF_OP_DROPOUT, XF_OP_CAST, XF_OP_CLIP, XF_OP_HARDSIGMOID,
                       XF_OP_HARDSWISH, XF_OP_LEAKYRELU, XF_OP_NOT, XF_OP_ADD, XF_OP_SUB,
                       XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_EQUAL, XF_OP_WHERE,
                       XF_OP_SCALAR_MUL, XF_OP_PRELU, XF_OP_MIN, XF_OP_MAX, XF_OP_COUNT);
    expect_same("rewrite/elementwise.c", &old, ew);
}
END_TEST

/* agent/rewrite/instantiate.c: a generator takes its partner's shape. */
static int arith(xf_op op) { return xf_op_is(op, XF_OPC_ARITHMETIC); }
START_TEST(instantiate_binary_list)
{
    opset old = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_COUNT);
    expect_same("rewrite/instantiate.c", &old, arith);
}
END_TEST

/* costmodel/flops.c: flops per output element of the element-wise
 * operators, and the operators that move no bytes, through the public
 * xf_cost_flops_bytes (the old unary list, binary list and pow). */
START_TEST(cost_model_flops_and_views)
{
    double per[XF_OP_COUNT] = {0};
    xf_op one[] = {XF_OP_RELU, XF_OP_NEG, XF_OP_ABS, XF_OP_SQRT, XF_OP_RECIPROCAL,
                   XF_OP_LEAKYRELU, XF_OP_PRELU, XF_OP_MIN, XF_OP_MAX, XF_OP_NOT, XF_OP_ADD,
                   XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_EQUAL, XF_OP_WHERE, XF_OP_SCALAR_MUL};
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) per[one[i]] = 1;
    per[XF_OP_CLIP] = 2;
    per[XF_OP_HARDSIGMOID] = 4;
    per[XF_OP_HARDSWISH] = 5;
    per[XF_OP_EXP] = per[XF_OP_LOG] = 4;
    per[XF_OP_SIGMOID] = per[XF_OP_TANH] = 6;
    per[XF_OP_ERF] = 8;
    per[XF_OP_GELU] = 10;
    per[XF_OP_POW] = 8;
    opset no_bytes = set_of(XF_OP_RESHAPE, XF_OP_FLATTEN, XF_OP_SQUEEZE, XF_OP_UNSQUEEZE,
                            XF_OP_IDENTITY, XF_OP_DROPOUT, XF_OP_SHAPE, XF_OP_SIZE, XF_OP_COUNT);
    xf_shape sh = {2, {3, 5}};
    xf_dtype dt[3] = {XF_F32, XF_F32, XF_F32};
    xf_shape in[3] = {sh, sh, sh};
    for (int op = 0; op < XF_OP_COUNT; op++) {
        if (!ew((xf_op)op) && !no_bytes.in[op]) continue;
        double flops, bytes;
        int n_in = info((xf_op)op)->min_inputs;
        xf_cost_flops_bytes((xf_op)op, NULL, n_in, dt, in, 1, dt, &sh, &flops, &bytes);
        if (ew((xf_op)op))
            ck_assert_msg(flops == 15.0 * per[op], "flops.c: %s: %g flops, the old list %g",
                          info((xf_op)op)->name, flops, 15.0 * per[op]);
        ck_assert_msg((bytes == 0) == no_bytes.in[op], "flops.c: %s: %g bytes",
                      info((xf_op)op)->name, bytes);
    }
}
END_TEST

/* costmodel/onednn_dispatch.c: the views oneDNN builds as reorders. */
static int view(xf_op op) { return xf_op_is(op, XF_OPC_VIEW); }
START_TEST(onednn_view_list)
{
    opset old = set_of(XF_OP_RESHAPE, XF_OP_FLATTEN, XF_OP_SQUEEZE, XF_OP_UNSQUEEZE,
                       XF_OP_IDENTITY, XF_OP_DROPOUT, XF_OP_COUNT);
    expect_same("onednn_dispatch.c views", &old, view);
}
END_TEST

/* costmodel/onednn_dispatch.c: the element-wise operators go to the eltwise
 * builder (one input) or the binary builder, which take these and refuse
 * the rest, as the dispatch's lists did (erf and pow have builders of their
 * own, identity and dropout are views). */
static int onednn_unary(xf_op op)
{
    return ew(op) && info(op)->min_inputs == 1 && !view(op) && op != XF_OP_ERF;
}
static int onednn_binary(xf_op op) { return ew(op) && info(op)->min_inputs > 1 && op != XF_OP_POW; }
START_TEST(onednn_elementwise_lists)
{
    opset unary = set_of(XF_OP_RELU, XF_OP_SIGMOID, XF_OP_TANH, XF_OP_GELU, XF_OP_SQRT, XF_OP_EXP,
                         XF_OP_LOG, XF_OP_NEG, XF_OP_ABS, XF_OP_RECIPROCAL, XF_OP_CAST,
                         XF_OP_CLIP, XF_OP_HARDSIGMOID, XF_OP_HARDSWISH, XF_OP_LEAKYRELU,
                         XF_OP_NOT, XF_OP_COUNT);
    opset binary = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_SCALAR_MUL,
                          XF_OP_EQUAL, XF_OP_WHERE, XF_OP_PRELU, XF_OP_MIN, XF_OP_MAX,
                          XF_OP_COUNT);
    expect_same("onednn_dispatch.c to the eltwise builder", &unary, onednn_unary);
    expect_same("onednn_dispatch.c to the binary builder", &binary, onednn_binary);
}
END_TEST

/* verify/bounded_ties.c: the operators whose output dims are their input's
 * (tie_all), those that may broadcast, and vf_bounded_ew_binary. */
static int ties_unary(xf_op op)
{
    return ew_rules(op) && (info(op)->min_inputs == 1 || op == XF_OP_SCALAR_MUL);
}
static int ties_broadcast(xf_op op)
{
    return ew_rules(op) && info(op)->min_inputs > 1 && op != XF_OP_SCALAR_MUL;
}
static int ties_ew_binary(xf_op op) { return ties_broadcast(op) && info(op)->max_inputs == 2; }
START_TEST(verifier_ties_lists)
{
    opset unary = set_of(XF_OP_RELU, XF_OP_SIGMOID, XF_OP_TANH, XF_OP_ERF, XF_OP_GELU, XF_OP_SQRT,
                         XF_OP_EXP, XF_OP_LOG, XF_OP_NEG, XF_OP_ABS, XF_OP_RECIPROCAL,
                         XF_OP_IDENTITY, XF_OP_DROPOUT, XF_OP_CAST, XF_OP_SCALAR_MUL,
                         XF_OP_COUNT);
    opset broadcast = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_EQUAL,
                             XF_OP_WHERE, XF_OP_COUNT);
    opset binary = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_EQUAL,
                          XF_OP_COUNT);
    expect_same("bounded_ties.c tie_all", &unary, ties_unary);
    expect_same("bounded_ties.c broadcasting", &broadcast, ties_broadcast);
    expect_same("bounded_ties.c vf_bounded_ew_binary", &binary, ties_ew_binary);
}
END_TEST

/* enumerate/fpeval.c: the element-wise operators with a Z_p model, and the
 * views evaluated as a copy. */
static int fp_elementwise(xf_op op)
{
    return ew_rules(op) && op != XF_OP_DROPOUT && op != XF_OP_CAST && op != XF_OP_EQUAL &&
           op != XF_OP_WHERE;
}
static int fp_copy(xf_op op) { return view(op) && op != XF_OP_DROPOUT; }
START_TEST(fingerprint_lists)
{
    opset ew_old = set_of(XF_OP_RELU, XF_OP_SIGMOID, XF_OP_TANH, XF_OP_ERF, XF_OP_GELU,
                          XF_OP_SQRT, XF_OP_EXP, XF_OP_LOG, XF_OP_NEG, XF_OP_ABS,
                          XF_OP_RECIPROCAL, XF_OP_IDENTITY, XF_OP_ADD, XF_OP_SUB, XF_OP_MUL,
                          XF_OP_DIV, XF_OP_SCALAR_MUL, XF_OP_POW, XF_OP_COUNT);
    opset copy_old = set_of(XF_OP_IDENTITY, XF_OP_RESHAPE, XF_OP_FLATTEN, XF_OP_SQUEEZE,
                            XF_OP_UNSQUEEZE, XF_OP_COUNT);
    expect_same("fpeval.c en_fp_op_supported", &ew_old, fp_elementwise);
    expect_same("fpeval.c copies", &copy_old, fp_copy);
}
END_TEST

/* ir/rule_dims.c and ir/domain_infer.c: the symbolic shape rules of
 * rules and validity domains (the same-shape operators, the broadcasting
 * ones). */
static int keeps_shape(xf_op op)
{
    return (ew(op) && info(op)->min_inputs == 1 && op != XF_OP_NOT) || op == XF_OP_SOFTMAX;
}
static int dims_binary(xf_op op)
{
    return ew(op) && info(op)->max_inputs == 2 && op != XF_OP_SCALAR_MUL;
}
static int domain_broadcast(xf_op op)
{
    return ew(op) && info(op)->min_inputs > 1 && op != XF_OP_SCALAR_MUL && op != XF_OP_PRELU;
}
START_TEST(shape_rule_lists)
{
    opset same = set_of(XF_OP_RELU, XF_OP_SIGMOID, XF_OP_TANH, XF_OP_ERF, XF_OP_GELU, XF_OP_SQRT,
                        XF_OP_EXP, XF_OP_LOG, XF_OP_NEG, XF_OP_ABS, XF_OP_RECIPROCAL,
                        XF_OP_IDENTITY, XF_OP_DROPOUT, XF_OP_CAST, XF_OP_SOFTMAX, XF_OP_CLIP,
                        XF_OP_HARDSIGMOID, XF_OP_HARDSWISH, XF_OP_LEAKYRELU, XF_OP_COUNT);
    opset binary = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_EQUAL,
                          XF_OP_MIN, XF_OP_MAX, XF_OP_PRELU, XF_OP_COUNT);
    opset broadcast = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_EQUAL,
                             XF_OP_WHERE, XF_OP_MIN, XF_OP_MAX, XF_OP_COUNT);
    expect_same("rule_dims.c and domain_infer.c same shape", &same, keeps_shape);
    expect_same("rule_dims.c is_binary", &binary, dims_binary);
    expect_same("domain_infer.c broadcasting", &broadcast, domain_broadcast);
}
END_TEST

/* ir/graph_hash.c (unordered hashes) and agent/rewrite/pattern.c (matching
 * either operand order): the commutative operators; enumerate/instantiate.c:
 * the two-operand variants that need equal shapes unless they broadcast. */
static int commutes(xf_op op) { return xf_op_is(op, XF_OPC_COMMUTATIVE); }
static int enum_binary(xf_op op) { return arith(op) || op == XF_OP_POW; }
START_TEST(commutative_and_enumerator_lists)
{
    opset comm = set_of(XF_OP_ADD, XF_OP_MUL, XF_OP_MIN, XF_OP_MAX, XF_OP_COUNT);
    opset binary = set_of(XF_OP_ADD, XF_OP_SUB, XF_OP_MUL, XF_OP_DIV, XF_OP_POW, XF_OP_COUNT);
    expect_same("graph_hash.c and pattern.c commutative", &comm, commutes);
    expect_same("enumerate/instantiate.c is_elementwise_binary", &binary, enum_binary);
}
END_TEST

/* agent/rewrite/finish.c and onnx/import_ops.c (activation_of), and
 * agent/rewrite/prepare.c (its inverse). */
START_TEST(activation_table)
{
    for (int op = 0; op < XF_OP_COUNT; op++) {
        xf_activation want = op == XF_OP_RELU      ? XF_ACT_RELU
                             : op == XF_OP_SIGMOID ? XF_ACT_SIGMOID
                             : op == XF_OP_TANH    ? XF_ACT_TANH
                                                   : XF_ACT_NONE;
        ck_assert_msg(xf_op_activation((xf_op)op) == want, "activation of %s",
                      info((xf_op)op)->name);
    }
    ck_assert_int_eq(xf_activation_op(XF_ACT_RELU), XF_OP_RELU);
    ck_assert_int_eq(xf_activation_op(XF_ACT_SIGMOID), XF_OP_SIGMOID);
    ck_assert_int_eq(xf_activation_op(XF_ACT_TANH), XF_OP_TANH);
    ck_assert_int_eq(xf_activation_op(XF_ACT_NONE), XF_OP_COUNT);
    ck_assert_int_eq(xf_op_activation(XF_OP_COUNT), XF_ACT_NONE);
}
END_TEST

/* Every operator but opaque has exactly one kind; views are movement or
 * element-wise, arithmetic is element-wise, generators are the operators
 * without inputs, and no imported-only operator is enumerable. */
START_TEST(every_operator_has_one_kind)
{
    const unsigned kinds = XF_OPC_ELEMENTWISE | XF_OPC_CONTRACTION | XF_OPC_NORMALIZATION |
                           XF_OPC_REDUCTION | XF_OPC_MOVEMENT | XF_OPC_SHAPE | XF_OPC_GENERATOR;
    ck_assert_uint_eq(info(XF_OP_OPAQUE)->classes, 0);
    for (int op = 1; op < XF_OP_COUNT; op++) {
        const xf_op_info *o = info((xf_op)op);
        unsigned k = o->classes & kinds;
        ck_assert_msg(k != 0 && (k & (k - 1)) == 0, "%s has %s kind", o->name,
                      k ? "more than one" : "no");
        if (o->classes & XF_OPC_VIEW)
            ck_assert_msg(k & (XF_OPC_MOVEMENT | XF_OPC_ELEMENTWISE), "view %s", o->name);
        if (o->classes & (XF_OPC_ARITHMETIC | XF_OPC_COMMUTATIVE))
            ck_assert_msg(k == XF_OPC_ELEMENTWISE && o->min_inputs == 2 && o->max_inputs == 2,
                          "arithmetic or commutative %s", o->name);
        ck_assert_msg((k == XF_OPC_GENERATOR) == (o->max_inputs == 0), "generator %s", o->name);
        if (o->classes & XF_OPC_IMPORTED) ck_assert_msg(!o->enumerable, "imported %s", o->name);
    }
    ck_assert(!xf_op_is(XF_OP_COUNT, XF_OPC_ELEMENTWISE));
    ck_assert(xf_op_is(XF_OP_ADD, XF_OPC_ELEMENTWISE | XF_OPC_ARITHMETIC));
    ck_assert(!xf_op_is(XF_OP_POW, XF_OPC_ELEMENTWISE | XF_OPC_ARITHMETIC));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("op_classes");
    TCase *t = tcase_create("core");
    tcase_add_test(t, rewriter_elementwise_list);
    tcase_add_test(t, instantiate_binary_list);
    tcase_add_test(t, cost_model_flops_and_views);
    tcase_add_test(t, onednn_view_list);
    tcase_add_test(t, onednn_elementwise_lists);
    tcase_add_test(t, verifier_ties_lists);
    tcase_add_test(t, fingerprint_lists);
    tcase_add_test(t, shape_rule_lists);
    tcase_add_test(t, commutative_and_enumerator_lists);
    tcase_add_test(t, activation_table);
    tcase_add_test(t, every_operator_has_one_kind);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
