/*
 * test_verify_axioms.c — the axiomatic prover on hand-made rules whose truth
 * is known: true rules (matmul associativity, distributivity, concat of
 * matmuls, conv+relu fusion, transpose involution, split of a concat,
 * pooling as a conv) are proved with the axioms one expects in the core and
 * stay proved when every axiom outside the core is switched off (each rule
 * of the table); a prepared verifier gives the same answers; false rules
 * (relu(a+b) = relu(a)+relu(b), matmul commutativity) are never proved; the
 * per-query timeout is respected; an operator the axioms do not model is
 * reported as unsupported naming the node; the axiom table is well formed;
 * every axiom instance (verify/axiom_instances.c) is valid under the bounded
 * check while deliberately wrong instances are refuted. Proof times are
 * printed per rule.
 *
 * Rules are infix text over x0, x1 : [2,4,4,4], w0, w1 : [4,4,3,3],
 * m0, m1, m2 : [4,4] and s0 (scalar); concat0/concat1 join along axis 0/1,
 * lsplit/rsplit are the halves along axis 1, conv is a 'same' 3x3 conv,
 * convrelu the same with fused relu, trans swaps the last two axes.
 */
#include "testutil.h"

#include "verify/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_IN 8
static const char *in_names[N_IN] = {"x0", "x1", "w0", "w1", "m0", "m1", "m2", "s0"};

/* The node for the infix operator `name` on args; returns its value id. */
static int apply_op(xf_graph *g, const char *name, const int *args, int na)
{
    xf_error err;
    xf_params prm = xf_params_default();
    if (strcmp(name, "lsplit") == 0 || strcmp(name, "rsplit") == 0) {
        prm.axis = 1;
        prm.n_split = 2;
        prm.split[0] = prm.split[1] = g->values[args[0]].shape.dims[1] / 2;
        int node = xf_graph_add_node(g, XF_OP_SPLIT, &prm, args, 1, 2, NULL, &err);
        ck_assert_msg(node >= 0, "%s", err.msg);
        return g->nodes[node].outputs[name[0] == 'r'];
    }
    xf_op op;
    if (strcmp(name, "concat0") == 0 || strcmp(name, "concat1") == 0) {
        op = XF_OP_CONCAT;
        prm.axis = name[6] - '0';
    } else if (strcmp(name, "conv") == 0 || strcmp(name, "convrelu") == 0) {
        op = XF_OP_CONV;
        prm.pads[0] = prm.pads[1] = prm.pads[2] = prm.pads[3] = 1;
        prm.kernel[0] = prm.kernel[1] = 3;
        if (name[4]) prm.activation = XF_ACT_RELU;
    } else if (strcmp(name, "avgpool") == 0) {
        op = XF_OP_AVGPOOL;
        prm.kernel[0] = prm.kernel[1] = 3;
        prm.pads[0] = prm.pads[1] = prm.pads[2] = prm.pads[3] = 1;
        prm.count_include_pad = 1;
    } else if (strcmp(name, "pool") == 0) {
        op = XF_OP_CONST_POOL;
        prm.n_shape = 4;
        prm.shape[0] = 4, prm.shape[1] = 1, prm.shape[2] = 3, prm.shape[3] = 3;
    } else if (strcmp(name, "dwconv") == 0) {
        op = XF_OP_CONV;
        prm.pads[0] = prm.pads[1] = prm.pads[2] = prm.pads[3] = 1;
        prm.kernel[0] = prm.kernel[1] = 3;
        prm.group = 4;
    } else if (strcmp(name, "trans") == 0) {
        op = XF_OP_TRANSPOSE;
        prm.n_axes = 2;
        prm.axes[0] = 1, prm.axes[1] = 0;
    } else {
        op = xf_op_from_name(name);
        ck_assert_msg(op != XF_OP_COUNT, "unknown op %s", name);
    }
    int v = xf_graph_op(g, op, &prm, args, na, &err);
    ck_assert_msg(v >= 0, "%s: %s", name, err.msg);
    return v;
}

static void build_side(xf_graph *g, const char *text)
{
    static const int64_t x[4] = {2, 4, 4, 4}, w[4] = {4, 4, 3, 3}, m[2] = {4, 4};
    xf_shape sx = xf_shape_make(4, x), sw = xf_shape_make(4, w), sm = xf_shape_make(2, m),
             ss = xf_shape_make(0, NULL);
    const xf_shape *shapes[N_IN] = {&sx, &sx, &sw, &sw, &sm, &sm, &sm, &ss};
    xf_error err;
    int inputs[N_IN];
    for (int i = 0; i < N_IN; i++) {
        inputs[i] = xf_graph_add_input(g, in_names[i], XF_F32, shapes[i], &err);
        ck_assert_msg(inputs[i] >= 0, "%s", err.msg);
    }
    xf_test_parse_infix(g, text, apply_op);
}

static void build_rule(xf_rule *r, const char *src, const char *dst)
{
    xf_rule_init(r);
    build_side(&r->src, src);
    build_side(&r->dst, dst);
    xf_error err;
    ck_assert_msg(xf_rule_validate(r, &err) == XF_OK, "%s", err.msg);
}

static xf_verifier *verifier(unsigned timeout_ms)
{
    xf_verify_options o;
    xf_verify_options_init(&o);
    o.timeout_ms = timeout_ms;
    xf_verifier *v = NULL;
    xf_error err;
    ck_assert_msg(xf_verifier_new(&o, &v, &err) == XF_OK, "%s", err.msg);
    return v;
}

static xf_proof prove(xf_verifier *v, const char *src, const char *dst)
{
    xf_rule r;
    build_rule(&r, src, dst);
    xf_proof pf;
    xf_error err;
    ck_assert_msg(xf_verify_prove(v, &r, &pf, &err) == XF_OK, "%s", err.msg);
    fprintf(stderr, "  %-8s %7.1f ms  %s => %s  [%s]%s%s\n", xf_proof_result_name(pf.result),
            pf.time_ms, src, dst, pf.core_names, pf.detail[0] ? "  " : "", pf.detail);
    xf_rule_free(&r);
    return pf;
}

static int core_has(const xf_proof *pf, const char *name)
{
    int i = xf_verify_axiom_find(name);
    ck_assert_msg(i >= 0, "no axiom %s", name);
    for (int k = 0; k < pf->n_core; k++)
        if (pf->core[k] == i) return 1;
    return 0;
}

static const struct {
    const char *src, *dst;
    const char *core[3]; /* axioms the proof must use */
} true_rules[] = {
    {"matmul(matmul(m0, m1), m2)", "matmul(m0, matmul(m1, m2))", {"matmul-assoc"}},
    {"matmul(m0, ewadd(m1, m2))", "ewadd(matmul(m0, m1), matmul(m0, m2))", {"matmul-linear-right"}},
    {"ewmul(ewadd(m0, m1), m2)", "ewadd(ewmul(m2, m0), ewmul(m1, m2))", {"ewmul-ewadd-distrib", "ewmul-comm"}},
    {"concat1(matmul(m0, m1), matmul(m0, m2))", "matmul(m0, concat1(m1, m2))", {"matmul-concat-right"}},
    {"relu(conv(x0, w0))", "convrelu(x0, w0)", {"conv-relu-fusion"}},
    {"trans(trans(m0))", "m0", {"trans-involution"}},
    {"trans(matmul(m0, m1))", "matmul(trans(m1), trans(m0))", {"matmul-trans"}},
    {"lsplit(concat1(m0, m1)); rsplit(concat1(m0, m1))", "m0; m1", {"slice-concat-left", "slice-concat-right"}},
    {"conv(x0, ewadd(w0, w1))", "ewadd(conv(x0, w0), conv(x0, w1))", {"conv-linear-kernel"}},
    {"avgpool(x0)", "dwconv(x0, pool())", {"avgpool-as-conv"}},
    {"scalar_mul(matmul(m0, m1), s0)", "matmul(m0, scalar_mul(m1, s0))", {"matmul-smul-right"}},
    {"convrelu(x0, scalar_mul(w0, s0))", "convrelu(scalar_mul(x0, s0), w0)",
     {"conv-relu-fusion", "conv-smul-kernel", "conv-smul-input"}},
    {"concat0(concat1(m0, m1), concat1(m2, m0))", "concat1(concat0(m0, m2), concat0(m1, m0))",
     {"concat-interchange"}},
};

START_TEST(test_true_rules_proved_with_core)
{
    xf_verifier *v = verifier(10000);
    int n = (int)(sizeof true_rules / sizeof true_rules[0]);
    for (int i = 0; i < n; i++) {
        xf_proof pf = prove(v, true_rules[i].src, true_rules[i].dst);
        ck_assert_msg(pf.result == XF_PROOF_PROVED, "%s => %s: %s (%s)", true_rules[i].src,
                      true_rules[i].dst, xf_proof_result_name(pf.result), pf.detail);
        for (int k = 0; k < 3 && true_rules[i].core[k]; k++)
            ck_assert_msg(core_has(&pf, true_rules[i].core[k]), "%s: core [%s] lacks %s",
                          true_rules[i].src, pf.core_names, true_rules[i].core[k]);
        ck_assert(pf.time_ms > 0);
    }
    xf_verifier_free(v);
}
END_TEST

/* A proof needs nothing beyond its core: with every other axiom off it
 * still goes through, and with a core axiom off as well it does not. */
START_TEST(test_core_suffices)
{
    xf_verifier *v = verifier(10000);
    const char *src = "concat1(matmul(m0, m1), matmul(m0, m2))", *dst = "matmul(m0, concat1(m1, m2))";
    xf_proof full = prove(v, src, dst);
    ck_assert_int_eq(full.result, XF_PROOF_PROVED);
    ck_assert_int_ge(full.n_core, 1);
    xf_error err;
    for (int i = 0; i < xf_verify_axiom_count(); i++)
        ck_assert_int_eq(xf_verifier_set_axiom(v, i, 0, &err), XF_OK);
    for (int k = 0; k < full.n_core; k++)
        ck_assert_int_eq(xf_verifier_set_axiom(v, full.core[k], 1, &err), XF_OK);
    xf_proof only = prove(v, src, dst);
    ck_assert_int_eq(only.result, XF_PROOF_PROVED);
    ck_assert_str_eq(only.core_names, full.core_names);
    ck_assert_int_eq(xf_verifier_set_axiom(v, full.core[0], 0, &err), XF_OK);
    ck_assert_int_ne(prove(v, src, dst).result, XF_PROOF_PROVED);
    ck_assert_int_eq(xf_verifier_set_axiom(v, xf_verify_axiom_count(), 1, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no axiom number"));
    xf_verifier_free(v);
}
END_TEST

/* The same for every true rule of the table: with only its core switched
 * on, each is proved again with the same core. */
START_TEST(test_every_core_suffices)
{
    xf_verifier *v = verifier(10000);
    xf_error err;
    int n = (int)(sizeof true_rules / sizeof true_rules[0]);
    for (int i = 0; i < n; i++) {
        for (int a = 0; a < xf_verify_axiom_count(); a++)
            ck_assert_int_eq(xf_verifier_set_axiom(v, a, 1, &err), XF_OK);
        xf_proof full = prove(v, true_rules[i].src, true_rules[i].dst);
        ck_assert_int_eq(full.result, XF_PROOF_PROVED);
        for (int a = 0; a < xf_verify_axiom_count(); a++)
            ck_assert_int_eq(xf_verifier_set_axiom(v, a, 0, &err), XF_OK);
        for (int k = 0; k < full.n_core; k++)
            ck_assert_int_eq(xf_verifier_set_axiom(v, full.core[k], 1, &err), XF_OK);
        xf_proof only = prove(v, true_rules[i].src, true_rules[i].dst);
        ck_assert_msg(only.result == XF_PROOF_PROVED, "%s => %s: %s with only [%s]",
                      true_rules[i].src, true_rules[i].dst, xf_proof_result_name(only.result),
                      full.core_names);
        ck_assert_str_eq(only.core_names, full.core_names);
    }
    xf_verifier_free(v);
}
END_TEST

/* Preparing a verifier (xferverify does it once before forking workers)
 * changes no answer. */
START_TEST(test_prepare_keeps_answers)
{
    xf_verifier *v = verifier(10000);
    xf_error err;
    ck_assert_msg(xf_verifier_prepare(v, &err) == XF_OK, "%s", err.msg);
    xf_proof pf = prove(v, true_rules[0].src, true_rules[0].dst);
    ck_assert_int_eq(pf.result, XF_PROOF_PROVED);
    ck_assert(core_has(&pf, "matmul-assoc"));
    ck_assert_int_ne(prove(v, "matmul(m0, m1)", "matmul(m1, m0)").result, XF_PROOF_PROVED);
    xf_verifier_free(v);
}
END_TEST

START_TEST(test_false_rules_not_proved)
{
    xf_verifier *v = verifier(2000);
    static const char *f[][2] = {
        {"relu(ewadd(m0, m1))", "ewadd(relu(m0), relu(m1))"},
        {"matmul(m0, m1)", "matmul(m1, m0)"},
        {"concat1(m0, m1)", "concat1(m1, m0)"},
        {"relu(scalar_mul(m0, s0))", "scalar_mul(relu(m0), s0)"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        xf_proof pf = prove(v, f[i][0], f[i][1]);
        ck_assert_msg(pf.result == XF_PROOF_FAILED || pf.result == XF_PROOF_UNKNOWN, "%s => %s: %s",
                      f[i][0], f[i][1], xf_proof_result_name(pf.result));
        ck_assert_int_eq(pf.n_core, 0);
        ck_assert_str_eq(pf.core_names, "");
        ck_assert_int_eq(pf.output, 0);
        ck_assert_ptr_nonnull(strstr(pf.detail, "output 0"));
    }
    xf_verifier_free(v);
}
END_TEST

/* A query the solver cannot settle stops at the timeout (generous slack:
 * the check is that it stops, not how fast). */
START_TEST(test_timeout_respected)
{
    xf_verifier *v = verifier(300);
    xf_proof pf = prove(v, "matmul(ewadd(m0, m1), ewadd(m1, m2))", "matmul(ewadd(m1, m2), ewadd(m0, m1))");
    ck_assert_int_ne(pf.result, XF_PROOF_PROVED);
    ck_assert_msg(pf.time_ms < 5000, "took %.0f ms with a 300 ms timeout", pf.time_ms);
    xf_verifier_free(v);
}
END_TEST

START_TEST(test_unsupported_op)
{
    xf_verifier *v = verifier(1000);
    xf_proof pf = prove(v, "ewsub(m0, m1)", "ewsub(m0, m1)");
    ck_assert_int_eq(pf.result, XF_PROOF_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(pf.detail, "(ewsub)"));
    ck_assert_ptr_nonnull(strstr(pf.detail, "no axiomatic encoding"));
    xf_verifier_free(v);
}
END_TEST

START_TEST(test_axiom_table)
{
    int n = xf_verify_axiom_count();
    ck_assert_int_ge(n, 43);
    for (int i = 0; i < n; i++) {
        const xf_axiom_info *a = xf_verify_axiom(i);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_gt((int)strlen(a->description), 10);
        ck_assert_int_eq(xf_verify_axiom_find(a->name), i);
    }
    ck_assert_ptr_null(xf_verify_axiom(n));
    ck_assert_int_eq(xf_verify_axiom_find("no-such-axiom"), -1);
    /* relu-idempotent is not needed once... it is independent: the others
     * cannot derive it; ewadd-comm cannot be derived either. */
    xf_verifier *v = verifier(1000);
    xf_proof pf;
    xf_error err;
    ck_assert_int_eq(xf_verify_axiom_redundant(v, xf_verify_axiom_find("ewadd-comm"), &pf, &err), XF_OK);
    ck_assert_int_ne(pf.result, XF_PROOF_PROVED);
    ck_assert_int_eq(xf_verify_axiom_redundant(v, n, &pf, &err), XF_ERR_INVALID);
    xf_verifier_free(v);
}
END_TEST

static xf_bounded check_instance(xf_verifier *v, const xf_axiom_instance *in)
{
    xf_rule r;
    xf_error err;
    xf_bounded b;
    xf_bounded_init(&b);
    ck_assert_msg(xf_verify_axiom_instance_rule(in, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_verify_bounded(v, &r, &b, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    return b;
}

/* What xferverify --check-axioms does: every instance names an axiom and is
 * valid under the bounded check, and every axiom has an instance. */
START_TEST(test_axiom_instances_valid)
{
    xf_verifier *v = verifier(10000);
    int n = xf_verify_axiom_count(), *covered = calloc((size_t)n, sizeof *covered);
    ck_assert_ptr_nonnull(covered);
    ck_assert_ptr_null(xf_verify_axiom_instance(xf_verify_axiom_instance_count()));
    for (int k = 0; k < xf_verify_axiom_instance_count(); k++) {
        const xf_axiom_instance *in = xf_verify_axiom_instance(k);
        int i = xf_verify_axiom_find(in->axiom);
        ck_assert_msg(i >= 0, "instance %d names no axiom (%s)", k, in->axiom);
        covered[i] = 1;
        xf_bounded b = check_instance(v, in);
        ck_assert_msg(b.result == XF_BOUNDED_VALID, "%s: %s => %s is %s (%s)", in->axiom, in->src,
                      in->dst, xf_bounded_result_name(b.result), b.detail);
        xf_bounded_free(&b);
    }
    for (int i = 0; i < n; i++)
        ck_assert_msg(covered[i], "axiom %s has no instance", xf_verify_axiom(i)->name);
    free(covered);
    xf_verifier_free(v);
}
END_TEST

/* The self-check as one call: a row per axiom, in table order, every one
 * valid on its instances; the redundant ones name the axioms they follow
 * from; no problem reported. */
typedef struct check_seen {
    int rows, problems, redundant_named;
} check_seen;

static void seen_row(void *user, const xf_axiom_check *c)
{
    check_seen *s = user;
    ck_assert_str_eq(c->name, xf_verify_axiom(s->rows)->name);
    ck_assert_str_eq(c->bounded, "valid");
    ck_assert_int_ge(c->instances, 1);
    ck_assert_msg(!strcmp(c->redundancy, "redundant") || !strcmp(c->redundancy, "independent") ||
                      !strcmp(c->redundancy, "not derived"),
                  "%s: %s", c->name, c->redundancy);
    if (!strcmp(c->redundancy, "redundant")) {
        ck_assert_msg(c->derived_from[0] != '\0', "%s: redundant, derived from nothing", c->name);
        s->redundant_named++;
    } else {
        ck_assert_str_eq(c->derived_from, "");
    }
    s->rows++;
}

static void seen_problem(void *user, const char *msg)
{
    ((check_seen *)user)->problems++;
    fprintf(stderr, "problem: %s\n", msg);
}

START_TEST(test_check_axioms_call)
{
    check_seen seen = {0, 0, 0};
    xf_axiom_check_options o;
    memset(&o, 0, sizeof o);
    xf_verify_options_init(&o.vo);
    o.row = seen_row;
    o.problem = seen_problem;
    o.user = &seen;
    xf_axiom_check_summary s;
    xf_error err;
    ck_assert_msg(xf_verify_check_axioms(&o, &s, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(s.axioms, xf_verify_axiom_count());
    ck_assert_int_eq(seen.rows, s.axioms);
    ck_assert_int_eq(s.with_instances, s.axioms);
    ck_assert_int_eq(s.valid, s.axioms);
    ck_assert_int_eq(s.refuted, 0);
    ck_assert_int_eq(s.errors, 0);
    ck_assert_int_eq(seen.problems, 0);
    ck_assert_int_eq(seen.redundant_named, s.redundant);
    ck_assert_int_ge(s.redundant, 1);
}
END_TEST

/* Wrong "axioms" (test-only instances) are refuted with a counterexample
 * whose float evaluation separates the sides; a malformed instance is a
 * parse error naming it. */
START_TEST(test_wrong_axiom_instance_refuted)
{
    static const xf_axiom_instance wrong[] = {
        {"relu-additive", "x:2x2 y:2x2", "relu(ewadd(x,y))", "ewadd(relu(x),relu(y))"},
        {"avgpool-as-summing-conv", "x:1x2x3x3", "avgpool[k=3,p=same](x)",
         "conv[p=same,g=2](x,ones[shape=2x1x3x3]())"},
        {"conv-trans-kernel-kept", "x:1x1x3x3 w:1x1x3x3", "conv[p=same](trans(x),w)",
         "trans(conv[p=same](x,w))"},
    };
    xf_verifier *v = verifier(10000);
    for (size_t k = 0; k < sizeof wrong / sizeof wrong[0]; k++) {
        xf_bounded b = check_instance(v, &wrong[k]);
        ck_assert_msg(b.result == XF_BOUNDED_REFUTED, "%s: %s", wrong[k].axiom,
                      xf_bounded_result_name(b.result));
        ck_assert_int_ge(b.n_inputs, 1);
        xf_bounded_free(&b);
    }
    xf_verifier_free(v);
    xf_axiom_instance bad = {"bad-input", "x:2x2", "ewadd(x,q)", "x"};
    xf_rule r;
    xf_error err;
    ck_assert_int_eq(xf_verify_axiom_instance_rule(&bad, &r, &err), XF_ERR_PARSE);
    xf_rule_free(&r);
    ck_assert_ptr_nonnull(strstr(err.msg, "bad-input"));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown input"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_axioms");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_true_rules_proved_with_core);
    tcase_add_test(tc, test_core_suffices);
    tcase_add_test(tc, test_every_core_suffices);
    tcase_add_test(tc, test_prepare_keeps_answers);
    tcase_add_test(tc, test_false_rules_not_proved);
    tcase_add_test(tc, test_timeout_respected);
    tcase_add_test(tc, test_unsupported_op);
    tcase_add_test(tc, test_axiom_table);
    tcase_add_test(tc, test_axiom_instances_valid);
    tcase_add_test(tc, test_check_axioms_call);
    tcase_add_test(tc, test_wrong_axiom_instance_refuted);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
