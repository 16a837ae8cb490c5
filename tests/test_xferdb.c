/*
 * test_xferdb.c — the xferdb command-line tool on a rules database built
 * here with the rulesdb API: matmul associativity (proved, with a verdict
 * and its unsat-core axioms), two matmuls merged through concat/split
 * (candidate), conv+relu fusion (pruned, subsumed by rule 1) and
 * relu(a+b) => relu(a)+relu(b) (refuted, with a hand-made counterexample
 * blob), plus one interrupted run. Checks the exact lines of `list` (all,
 * --status, --ops, --max-size, --limit), the fields `show` prints (axiom
 * descriptions, counterexample inputs, the outputs that differ — also for a
 * counterexample found by the bounded check), the counts `stats` prints, and
 * the exit status of every error case: 1 for a missing rule, 2 for bad usage
 * or an unreadable file; rules that do not load (a corrupt blob, a missing
 * graph row) reported by id and reason by list, stats, show and
 * check-export, with the other rules still listed and exit status 1; and
 * `families` on a second database of layout-operator rules (below).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"
#include "verify/verify.h"

static char db_path[4096];
static char out_path[4096];
static char *output; /* stdout of the last run */

static const int64_t M44[2] = {4, 4};

static void rule_assoc(xf_rule *r)
{
    xf_rule_init(r);
    int s[3], d[3];
    const char *nm[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++)
        s[i] = xf_test_input(&r->src, nm[i], 2, M44), d[i] = xf_test_input(&r->dst, nm[i], 2, M44);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL,
                                     xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]), s[2]));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[0],
                                     xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[1], d[2])));
    r->fingerprint = 0xabcdef;
}

static void rule_merge(xf_rule *r)
{
    xf_rule_init(r);
    int s[3], d[3];
    const char *nm[3] = {"x0", "w0", "w1"};
    for (int i = 0; i < 3; i++)
        s[i] = xf_test_input(&r->src, nm[i], 2, M44), d[i] = xf_test_input(&r->dst, nm[i], 2, M44);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[1]));
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_MATMUL, NULL, s[0], s[2]));
    xf_params cat = xf_params_default();
    cat.axis = 1;
    int m = xf_test_op2(&r->dst, XF_OP_MATMUL, NULL, d[0],
                        xf_test_op2(&r->dst, XF_OP_CONCAT, &cat, d[1], d[2]));
    xf_params sp = xf_params_default();
    sp.axis = 1;
    sp.n_split = 2;
    sp.split[0] = sp.split[1] = 4;
    int n = xf_graph_add_node(&r->dst, XF_OP_SPLIT, &sp, &m, 1, 2, NULL, NULL);
    ck_assert_int_ge(n, 0);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[0]);
    xf_test_out(&r->dst, r->dst.nodes[n].outputs[1]);
}

static void rule_conv_relu(xf_rule *r)
{
    xf_rule_init(r);
    const int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {2, 2, 3, 3};
    int sx = xf_test_input(&r->src, "x", 4, xd), sw = xf_test_input(&r->src, "w", 4, wd);
    int dx = xf_test_input(&r->dst, "x", 4, xd), dw = xf_test_input(&r->dst, "w", 4, wd);
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = 3;
    for (int i = 0; i < 4; i++) p.pads[i] = 1;
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_RELU, NULL,
                                     xf_test_op2(&r->src, XF_OP_CONV, &p, sx, sw), -1));
    p.activation = XF_ACT_RELU;
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_CONV, &p, dx, dw));
}

static const int64_t M22[2] = {2, 2};

/* relu(a + b) => relu(a) + relu(b): false whenever a and b differ in sign. */
static void rule_relu(xf_rule *r)
{
    xf_rule_init(r);
    int sa = xf_test_input(&r->src, "a", 2, M22), sb = xf_test_input(&r->src, "b", 2, M22);
    int da = xf_test_input(&r->dst, "a", 2, M22), db = xf_test_input(&r->dst, "b", 2, M22);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_RELU, NULL,
                                     xf_test_op2(&r->src, XF_OP_ADD, NULL, sa, sb), -1));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL,
                                     xf_test_op2(&r->dst, XF_OP_RELU, NULL, da, -1),
                                     xf_test_op2(&r->dst, XF_OP_RELU, NULL, db, -1)));
}

/* a = [1 -2 3 -1], b = [-3 1 1 -1]: relu(a+b) = [0 0 4 0] but
 * relu(a)+relu(b) = [1 1 4 0]. */
static void hand_made_cex(uint8_t **blob, size_t *len)
{
    static const float va[4] = {1, -2, 3, -1}, vb[4] = {-3, 1, 1, -1};
    xf_tensor t[2];
    xf_shape s = xf_shape_make(2, M22);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(xf_tensor_alloc(&t[i], XF_F32, &s, NULL), XF_OK);
        memcpy(t[i].data, i ? vb : va, sizeof va);
    }
    ck_assert_int_eq(xf_verify_cex_encode(t, 2, blob, len, NULL), XF_OK);
    xf_tensor_free(&t[0]);
    xf_tensor_free(&t[1]);
}

static void build_db(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("xferdb.db"));
    snprintf(out_path, sizeof out_path, "%s", xf_test_tmp("xferdb.out"));
    xf_test_remove_db(db_path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 3", "4x4 matrices", "taso", 7};
    int64_t run = 0;
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &run, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_stage(db, run, "enumerate", 0.5, 1234, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_begin(db, &err), XF_OK);
    void (*builders[4])(xf_rule *) = {rule_assoc, rule_merge, rule_conv_relu, rule_relu};
    for (int i = 0; i < 4; i++) {
        xf_rule r;
        builders[i](&r);
        xf_rulesdb_rule_meta m = {XF_RULE_CANDIDATE, run, NULL, 0};
        int64_t id = 0;
        ck_assert_msg(xf_rulesdb_add_rule(db, &r, &m, &id, NULL, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(id, i + 1);
        xf_rule_free(&r);
    }
    ck_assert_int_eq(xf_rulesdb_commit(db, &err), XF_OK);
    xf_rulesdb_verdict v = {XF_RULE_PROVED, 3.25, "matmul-assoc,ewadd-comm", NULL, NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, 1, &v, &err), XF_OK);
    uint8_t *cex;
    size_t cex_len;
    hand_made_cex(&cex, &cex_len);
    xf_rulesdb_verdict rv = {XF_RULE_REFUTED, 1.5, NULL, "bounded check", cex, cex_len, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, 4, &rv, &err), XF_OK);
    free(cex);
    ck_assert_int_eq(xf_rulesdb_set_status(db, 3, XF_RULE_PRUNED, "common subgraph", 1, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, run, XF_RUN_INTERRUPTED, &err), XF_OK);
    xf_rulesdb_close(db);
}

/* Runs `xferdb ARGS` with stdout captured into `output`; returns the exit status. */
static int xferdb(const char *args)
{
    free(output);
    output = NULL;
    int rc = xf_test_system("'%s' %s > '%s' 2>&1", xf_test_tool("xferdb"), args, out_path);
    output = xf_test_read_file(out_path, NULL);
    return rc;
}

static int lines(void)
{
    int n = 0;
    for (const char *p = output; *p; p++) n += *p == '\n';
    return n;
}

static void setup(void)
{
    build_db();
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

START_TEST(test_list)
{
    char args[4300];
    snprintf(args, sizeof args, "list '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(lines(), 4);
    xf_test_expect_contains(
        output, "     1  proved     2->2  matmul(matmul(x, y), z)  =>  matmul(x, matmul(y, z))\n");
    xf_test_expect_contains(output, "     2  candidate  2->3  matmul(x0, w0), matmul(x0, w1)  =>  "
               "split0[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1))), "
               "split1[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1)))\n");
    xf_test_expect_contains(output, "     3  pruned     2->1  relu(conv2d[3x3,s1,same](x, w))  =>  "
               "conv2d[3x3,s1,same,relu](x, w)\n");
    xf_test_expect_contains(
        output, "     4  refuted    2->3  relu(ewadd(a, b))  =>  ewadd(relu(a), relu(b))\n");

    snprintf(args, sizeof args, "list '%s' --status proved", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(lines(), 1);
    xf_test_expect_contains(output, "     1  proved");
    snprintf(args, sizeof args, "list '%s' --ops matmul,concat", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(lines(), 1);
    xf_test_expect_contains(output, "     2  candidate");
    snprintf(args, sizeof args, "list --max-size 2 '%s' --limit 2", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(lines(), 2);
    xf_test_expect_contains(output, "     1  proved");
    xf_test_expect_contains(output, "     3  pruned");
    snprintf(args, sizeof args, "list '%s' --status unknown", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(lines(), 0);
}
END_TEST

START_TEST(test_show)
{
    char args[4300];
    snprintf(args, sizeof args, "show '%s' 2", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "rule 2\n");
    xf_test_expect_contains(output, "source: matmul(x0, w0), matmul(x0, w1)\n");
    xf_test_expect_contains(
        output, "target: split0[axis=1,sizes=4/4](matmul(x0, concat[axis=1](w0, w1))), ");
    xf_test_expect_contains(
        output,
        "inputs:\n  x0       float32 [4,4]\n  w0       float32 [4,4]\n  w1       float32 [4,4]\n");
    xf_test_expect_contains(output, "outputs: 2 mapped\n");
    xf_test_expect_contains(output, "  source output 1 -> target output 1  float32 [4,4]\n");
    xf_test_expect_contains(output, "operators: 2 -> 3\n");
    xf_test_expect_contains(output, "fingerprint: 0x0000000000000000\n");
    xf_test_expect_contains(output, "status: candidate\n");
    xf_test_expect_contains(output, "found by run: 1\n");
    xf_test_expect_contains(output, "verdict: none (not verified yet)\n");

    snprintf(args, sizeof args, "show '%s' 1", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "fingerprint: 0x0000000000abcdef\n");
    xf_test_expect_contains(output, "verdict: proved in 3.2 ms\n  axioms (unsat core):\n"
               "    matmul-assoc             matrix multiplication is associative\n"
               "    ewadd-comm               element-wise addition is commutative\n");

    snprintf(args, sizeof args, "show '%s' 3", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output,
                            "status: pruned\n  why: common subgraph\n  subsumed by rule 1\n");
    xf_test_expect_contains(output, "  x        float32 [1,2,4,4]\n  w        float32 [2,2,3,3]\n");

    snprintf(args, sizeof args, "show '%s' 4", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "verdict: refuted in 1.5 ms\n  detail: bounded check\n"
               "  counterexample: 2 inputs\n"
               "    a        float32 [2,2]: 1 -2 3 -1\n"
               "    b        float32 [2,2]: -3 1 1 -1\n"
               "  outputs on these inputs (float32 interpreter):\n"
               "    output 0 [2,2]: 2 of 4 elements differ, first at [0,0]: source 0, target 1\n"
               "      source: 0 0 4 0\n"
               "      target: 1 1 4 0\n");
}
END_TEST

/* Rewrites rule 4's verdict in the test database. */
static void set_verdict(const xf_rulesdb_verdict *v)
{
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, 0, &db, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_rulesdb_set_verdict(db, 4, v, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_close(db);
}

/* A counterexample found by the bounded check: its inputs are printed as
 * stored and the differing element shown is one where relu(a+b) and
 * relu(a)+relu(b), computed here, really differ. */
START_TEST(test_show_bounded_cex)
{
    xf_rule r;
    rule_relu(&r);
    xf_verify_options o;
    xf_verify_options_init(&o);
    xf_verifier *ver = NULL;
    xf_error err;
    ck_assert_msg(xf_verifier_new(&o, &ver, &err) == XF_OK, "%s", err.msg);
    xf_bounded b;
    xf_bounded_init(&b);
    ck_assert_msg(xf_verify_bounded(ver, &r, &b, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(b.result, XF_BOUNDED_REFUTED);
    ck_assert_int_eq(b.n_inputs, 2);
    uint8_t *cex;
    size_t len;
    ck_assert_int_eq(xf_verify_cex_encode(b.inputs, 2, &cex, &len, NULL), XF_OK);
    xf_rulesdb_verdict v = {XF_RULE_REFUTED, 2.0, NULL, NULL, cex, len, NULL};
    set_verdict(&v);
    free(cex);

    char args[4300], want[512];
    snprintf(args, sizeof args, "show '%s' 4", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    const float *a = b.inputs[0].data, *bb = b.inputs[1].data;
    snprintf(want, sizeof want, "    a        float32 [2,2]: %.9g %.9g %.9g %.9g\n", (double)a[0],
             (double)a[1], (double)a[2], (double)a[3]);
    xf_test_expect_contains(output, want);
    snprintf(want, sizeof want, "    b        float32 [2,2]: %.9g %.9g %.9g %.9g\n", (double)bb[0],
             (double)bb[1], (double)bb[2], (double)bb[3]);
    xf_test_expect_contains(output, want);
    int first = -1, n_diff = 0;
    float src[4], dst[4];
    for (int e = 0; e < 4; e++) {
        src[e] = fmaxf(a[e] + bb[e], 0.0f);
        dst[e] = fmaxf(a[e], 0.0f) + fmaxf(bb[e], 0.0f);
        /* xferdb's "differs": beyond float rounding (1e-5 relative, at least absolute). */
        double tol = 1e-5 * fmax(1.0, fmax(fabs((double)src[e]), fabs((double)dst[e])));
        if (fabs((double)src[e] - (double)dst[e]) > tol) {
            n_diff++;
            if (first < 0) first = e;
        }
    }
    ck_assert_int_ge(first, 0);
    snprintf(want, sizeof want,
             "    output 0 [2,2]: %d of 4 elements differ, first at [%d,%d]: source %.9g, "
             "target %.9g\n",
             n_diff, first / 2, first % 2, (double)src[first], (double)dst[first]);
    xf_test_expect_contains(output, want);
    xf_bounded_free(&b);
    xf_verifier_free(ver);
    xf_rule_free(&r);
}
END_TEST

/* A counterexample at other input shapes than the rule's own (the bounded
 * check tries every admissible shape): show rebuilds the rule at the
 * counterexample's shapes and replays it there. a = [1 -2], b = [-3 1] as
 * [1,2] tensors: relu(a+b) = [0 0], relu(a)+relu(b) = [1 1]. */
START_TEST(test_show_cex_at_other_shapes)
{
    static const float va[2] = {1, -2}, vb[2] = {-3, 1};
    static const int64_t d12[2] = {1, 2};
    xf_tensor t[2];
    xf_shape s = xf_shape_make(2, d12);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(xf_tensor_alloc(&t[i], XF_F32, &s, NULL), XF_OK);
        memcpy(t[i].data, i ? vb : va, sizeof va);
    }
    uint8_t *cex;
    size_t len;
    ck_assert_int_eq(xf_verify_cex_encode(t, 2, &cex, &len, NULL), XF_OK);
    xf_tensor_free(&t[0]);
    xf_tensor_free(&t[1]);
    xf_rulesdb_verdict v = {XF_RULE_REFUTED, 2.0, NULL, "bounded: other shapes", cex, len, NULL};
    set_verdict(&v);
    free(cex);
    char args[4300];
    snprintf(args, sizeof args, "show '%s' 4", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "    a        float32 [1,2]: 1 -2\n");
    xf_test_expect_contains(output, "rule rebuilt there");
    xf_test_expect_contains(
        output, "    output 0 [1,2]: 2 of 2 elements differ, first at [0,0]: source 0, target 1\n");
}
END_TEST

/* A verdict this build cannot fully explain is still shown, with a note. */
START_TEST(test_show_unreadable_verdict)
{
    const uint8_t junk[8] = {0};
    xf_rulesdb_verdict v = {XF_RULE_REFUTED, 1.0, "no-such-axiom", NULL, junk, sizeof junk, NULL};
    set_verdict(&v);
    char args[4300];
    snprintf(args, sizeof args, "show '%s' 4", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output,
                            "    no-such-axiom            (not in this build's axiom table)\n");
    xf_test_expect_contains(
        output, "  counterexample: 8 bytes, unreadable: counterexample: not an xf-counterexample 1 "
                "blob\n");
}
END_TEST

START_TEST(test_stats)
{
    char args[4300];
    snprintf(args, sizeof args, "stats '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, ": 4 rules over 8 graphs (schema version 4)\n");
    xf_test_expect_contains(
        output, "by status:\n  candidate                 1\n  proved                    1\n"
                "  refuted                   1\n  unknown                   0\n"
                "  pruned                    1\n");
    xf_test_expect_contains(output, "by size (operators, larger side):\n"
               "  2                         2\n  3                         2\n");
    xf_test_expect_contains(output, "  matmul                    2\n");
    xf_test_expect_contains(output, "  split                     1\n");
    xf_test_expect_contains(output, "last runs:\n  run 1: xfergen 0.1.0, interrupted, started ");
    xf_test_expect_contains(output, "      options    --max-ops 3\n");
    xf_test_expect_contains(output, "      vocab      taso\n");
    xf_test_expect_contains(output, "      seed       7\n");
    xf_test_expect_contains(output, "      enumerate                 0.500 s         1234\n");
}
END_TEST

START_TEST(test_errors_and_help)
{
    char args[4300];
    ck_assert_int_eq(xferdb("--help"), 0);
    xf_test_expect_contains(output, "usage: xferdb COMMAND DB");
    ck_assert_int_eq(xferdb(""), 2);
    xf_test_expect_contains(output, "usage: xferdb");
    snprintf(args, sizeof args, "show '%s' 99", db_path);
    ck_assert_int_eq(xferdb(args), 1);
    xf_test_expect_contains(output, "no rule with id 99");
    snprintf(args, sizeof args, "show '%s' abc", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "rule id must be a positive integer");
    snprintf(args, sizeof args, "show '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "show needs a database and a rule id");
    snprintf(args, sizeof args, "frob '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "unknown command 'frob'");
    snprintf(args, sizeof args, "list '%s' --status maybe", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "unknown rule status 'maybe'");
    snprintf(args, sizeof args, "list '%s' --ops matmul,frob", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "unknown operator 'frob'");
    snprintf(args, sizeof args, "list '%s' --limit 0", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "--limit needs a positive integer");
    snprintf(args, sizeof args, "stats '%s' --status proved", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "filters apply to list and check-export only");
    snprintf(args, sizeof args, "list '%s' --bogus", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "unknown option '--bogus'");
    /* unreadable files: missing, and a text file */
    snprintf(args, sizeof args, "stats '%s.missing'", db_path);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, ".missing: cannot open");
    char text[4096];
    snprintf(text, sizeof text, "%s", xf_test_tmp("notes.txt"));
    FILE *f = fopen(text, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 20; i++) fputs("a plain text file, not a database\n", f);
    fclose(f);
    snprintf(args, sizeof args, "stats '%s'", text);
    ck_assert_int_eq(xferdb(args), 2);
    xf_test_expect_contains(output, "is not an SQLite database");
}
END_TEST

/* Rule 2's source blob corrupt, rule 3's target graph row gone (rule 4
 * shares neither): every command reports both, by id and why, and goes on. */
START_TEST(test_broken_rules)
{
    xf_test_sql_exec(db_path,
                     "PRAGMA foreign_keys = OFF;"
                     " UPDATE graphs SET data = x'58470102' WHERE id = (SELECT src_graph FROM rules"
                     " WHERE id = 2);"
                     " DELETE FROM graphs WHERE id = (SELECT dst_graph FROM rules WHERE id = 3)");
    char args[4300];
    snprintf(args, sizeof args, "list '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 1);
    xf_test_expect_contains(output, "xferdb: rule 2: ");
    xf_test_expect_contains(output, "unknown dtype 0");
    xf_test_expect_contains(output, "xferdb: rule 3: ");
    xf_test_expect_contains(output, "no graph with id");
    xf_test_expect_contains(output, "     1  proved");
    xf_test_expect_contains(output, "     4  refuted"); /* listed after the bad ones */

    snprintf(args, sizeof args, "stats '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 1);
    xf_test_expect_contains(output, "broken: 1 rules refer to graph rows that are missing\n");
    xf_test_expect_contains(output, "4 rules over");

    snprintf(args, sizeof args, "show '%s' 3", db_path);
    ck_assert_int_eq(xferdb(args), 1);
    xf_test_expect_contains(output, "rule 3: ");
    xf_test_expect_contains(output, "no graph with id");

    snprintf(args, sizeof args, "check-export '%s' --status pruned", db_path);
    ck_assert_int_eq(xferdb(args), 1);
    xf_test_expect_contains(output, "rule 3 (pruned): failed: ");
    xf_test_expect_contains(output, "check-export: 1 rules, 0 pass");
}
END_TEST

/* ---- `xferdb families`: softmax moved across a reshape (proved:
 * commute-softmax), a reshape of a reshape back to its input (proved:
 * cancel-inverse), a concat of two head reshapes as the head reshape of the
 * concat (unknown: split-concat-heads), a sum of reshapes as the reshape of
 * the sum (candidate: commute-elementwise), a reshape above a sum on both
 * sides (candidate: in no family, nothing moved) and matmul associativity
 * (proved: no layout operator); exact counts and first ids, --status, bad
 * usage. */

static const int64_t B244[3] = {2, 4, 4};

static int reshape_to(xf_graph *g, int x, int rank, const int64_t *dims)
{
    return xf_test_reshape(g, x, xf_shape_make(rank, dims));
}

/* softmax(reshape(x)) => reshape(softmax(x)) */
static void rule_softmax(xf_rule *r)
{
    xf_rule_init(r);
    static const int64_t to[2] = {8, 4};
    xf_params p = xf_params_default();
    p.axis = -1;
    int s = xf_test_input(&r->src, "x", 3, B244), d = xf_test_input(&r->dst, "x", 3, B244);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_SOFTMAX, &p, reshape_to(&r->src, s, 2, to), -1));
    xf_test_out(&r->dst, reshape_to(&r->dst, xf_test_op2(&r->dst, XF_OP_SOFTMAX, &p, d, -1), 2, to));
}

/* reshape(reshape(x)) => x */
static void rule_cancel(xf_rule *r)
{
    xf_rule_init(r);
    static const int64_t to[2] = {8, 4};
    int s = xf_test_input(&r->src, "x", 3, B244), d = xf_test_input(&r->dst, "x", 3, B244);
    xf_test_out(&r->src, reshape_to(&r->src, reshape_to(&r->src, s, 2, to), 3, B244));
    xf_test_out(&r->dst, d);
}

/* concat(heads(a), heads(b)) => heads(concat(a, b)), heads [..,4] -> [..,2,2] */
static void rule_heads(xf_rule *r)
{
    xf_rule_init(r);
    static const int64_t h[4] = {2, 4, 2, 2}, h2[4] = {4, 4, 2, 2};
    xf_params cat = xf_params_default();
    cat.axis = 0;
    int sa = xf_test_input(&r->src, "a", 3, B244), sb = xf_test_input(&r->src, "b", 3, B244);
    int da = xf_test_input(&r->dst, "a", 3, B244), db = xf_test_input(&r->dst, "b", 3, B244);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_CONCAT, &cat, reshape_to(&r->src, sa, 4, h),
                                     reshape_to(&r->src, sb, 4, h)));
    xf_test_out(&r->dst, reshape_to(&r->dst, xf_test_op2(&r->dst, XF_OP_CONCAT, &cat, da, db), 4, h2));
}

/* ewadd(reshape(x), reshape(y)) => reshape(ewadd(x, y)) */
static void rule_ewadd(xf_rule *r)
{
    xf_rule_init(r);
    static const int64_t to[2] = {8, 4};
    int sx = xf_test_input(&r->src, "x", 3, B244), sy = xf_test_input(&r->src, "y", 3, B244);
    int dx = xf_test_input(&r->dst, "x", 3, B244), dy = xf_test_input(&r->dst, "y", 3, B244);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_ADD, NULL, reshape_to(&r->src, sx, 2, to),
                                     reshape_to(&r->src, sy, 2, to)));
    xf_test_out(&r->dst, reshape_to(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, dx, dy), 2, to));
}

/* reshape(ewadd(x, y)) => reshape(ewadd(y, x)): a reshape on both sides,
 * above the sum on both, so nothing moved across anything */
static void rule_unmoved(xf_rule *r)
{
    xf_rule_init(r);
    static const int64_t to[2] = {8, 4};
    int sx = xf_test_input(&r->src, "x", 3, B244), sy = xf_test_input(&r->src, "y", 3, B244);
    int dx = xf_test_input(&r->dst, "x", 3, B244), dy = xf_test_input(&r->dst, "y", 3, B244);
    xf_test_out(&r->src, reshape_to(&r->src, xf_test_op2(&r->src, XF_OP_ADD, NULL, sx, sy), 2, to));
    xf_test_out(&r->dst, reshape_to(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, dy, dx), 2, to));
}

static char families_db[4096];

static void build_families_db(void)
{
    snprintf(families_db, sizeof families_db, "%s", xf_test_tmp("xferdb_families.db"));
    xf_test_remove_db(families_db);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(families_db, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    void (*builders[6])(xf_rule *) = {rule_softmax, rule_cancel, rule_heads, rule_ewadd, rule_unmoved, rule_assoc};
    const xf_rule_status st[6] = {XF_RULE_PROVED, XF_RULE_PROVED, XF_RULE_UNKNOWN,
                                  XF_RULE_CANDIDATE, XF_RULE_CANDIDATE, XF_RULE_PROVED};
    for (int i = 0; i < 6; i++) {
        xf_rule r;
        builders[i](&r);
        xf_rulesdb_rule_meta m = {XF_RULE_CANDIDATE, 0, NULL, 0};
        int64_t id = 0;
        ck_assert_msg(xf_rulesdb_add_rule(db, &r, &m, &id, NULL, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(id, i + 1);
        xf_rule_free(&r);
        if (st[i] == XF_RULE_CANDIDATE) continue;
        xf_rulesdb_verdict v = {st[i], 1.0, NULL, "test", NULL, 0, NULL};
        ck_assert_msg(xf_rulesdb_set_verdict(db, id, &v, &err) == XF_OK, "%s", err.msg);
    }
    xf_rulesdb_close(db);
}

/* Runs one audit view in process into a temporary file; returns its text
 * (free it) and the view's status in *rc. */
static char *view_text(int (*view)(FILE *, xf_rulesdb *, const xf_audit_options *),
                       const xf_audit_options *o, int *rc)
{
    xf_error err;
    xf_rulesdb *db = NULL;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    const char *path = xf_test_tmp("view.txt");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    *rc = view(f, db, o);
    fclose(f);
    xf_rulesdb_close(db);
    return xf_test_read_file(path, NULL);
}

/* The audit views called in process (audit/audit.h) print what the tool
 * prints: list, show, stats, the JSON export and diff, and their statuses. */
START_TEST(test_views_in_process)
{
    xf_audit_options o;
    memset(&o, 0, sizeof o);
    o.filter.any_status = 1;
    int rc;
    char *text = view_text(xf_audit_list, &o, &rc);
    char args[4300];
    snprintf(args, sizeof args, "list '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, output);
    free(text);

    o.id = "1";
    o.format = "json";
    text = view_text(xf_audit_export, &o, &rc);
    snprintf(args, sizeof args, "export '%s' 1 --format json", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, output);
    xf_test_expect_contains(text, "\"rlflow.rule\"");
    free(text);

    text = view_text(xf_audit_show, &o, &rc);
    ck_assert_int_eq(rc, 0);
    xf_test_expect_contains(text, "matmul(matmul(x, y), z)");
    free(text);
    o.id = "99";
    text = view_text(xf_audit_show, &o, &rc);
    ck_assert_int_eq(rc, 1); /* no such rule: the message is on stderr */
    ck_assert_str_eq(text, "");
    free(text);

    text = view_text(xf_audit_stats, &o, &rc);
    snprintf(args, sizeof args, "stats '%s'", db_path);
    ck_assert_int_eq(xferdb(args), 0);
    ck_assert_int_eq(rc, 0);
    ck_assert_str_eq(text, output);
    free(text);

    /* diff opens both databases itself: one database against itself */
    o.db = o.db2 = db_path;
    const char *path = xf_test_tmp("diff.txt");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(xf_audit_diff(f, &o), 0);
    fclose(f);
    text = xf_test_read_file(path, NULL);
    xf_test_expect_contains(text, "0 only in");
    free(text);
}
END_TEST

START_TEST(test_families)
{
    build_families_db();
    char args[4300];
    snprintf(args, sizeof args, "families '%s'", families_db);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "6 rules read");
    /*                     family               proved derived unknown refuted candidate */
    xf_test_expect_contains(output, "commute-elementwise            0         0         0         0         1   0 / 0\n");
    xf_test_expect_contains(output, "commute-softmax                1         0         0         0         0   1 / 0\n");
    xf_test_expect_contains(output, "commute-matmul                 0         0         0         0         0   0 / 0\n");
    xf_test_expect_contains(output, "cancel-inverse                 1         0         0         0         0   2 / 0\n");
    xf_test_expect_contains(output, "split-concat-heads             0         0         1         0         0   0 / 0\n");
    xf_test_expect_contains(output, "any new family                 2         0         1         0         1   1 / 0\n");

    snprintf(args, sizeof args, "families '%s' --status proved", families_db);
    ck_assert_int_eq(xferdb(args), 0);
    xf_test_expect_contains(output, "3 rules read");
    xf_test_expect_contains(output, "any new family                 2         0         0         0         0   1 / 0\n");

    snprintf(args, sizeof args, "families '%s' extra", families_db);
    ck_assert_int_eq(xferdb(args), 2);
    ck_assert_int_eq(xferdb("families /nonexistent/rules.db"), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xferdb");
    TCase *t = tcase_create("cli");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_list);
    tcase_add_test(t, test_show);
    tcase_add_test(t, test_show_bounded_cex);
    tcase_add_test(t, test_show_cex_at_other_shapes);
    tcase_add_test(t, test_show_unreadable_verdict);
    tcase_add_test(t, test_stats);
    tcase_add_test(t, test_errors_and_help);
    tcase_add_test(t, test_broken_rules);
    tcase_add_test(t, test_families);
    tcase_add_test(t, test_views_in_process);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
