/*
 * test_xferdb_diff.c — `xferdb diff A.db B.db` on two databases built here
 * with the rulesdb API. A: ewadd(x, y) => ewadd(y, x), matmul
 * associativity, relu(relu(x)) => relu(x). B: the first rule renamed and
 * with its inputs in the other order (ewadd(b, a) => ewadd(a, b), inputs
 * a, b: the same rule), proved; associativity the other way round; and
 * ewadd commutativity at another shape ([3,3]: another rule). Checks the
 * exact listing, the summary counts and the exit status (1 different, 0
 * same, 2 unreadable).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"

static char a_path[4096], b_path[4096], out_path[4096];
static char *output;

static void add(xf_rulesdb *db, const xf_rule *r)
{
    int64_t id = 0;
    xf_error err;
    ck_assert_msg(xf_rulesdb_add_rule(db, r, NULL, &id, NULL, &err) == XF_OK, "%s", err.msg);
}

static int in(xf_graph *g, const char *name, int64_t n)
{
    const int64_t d[2] = {n, n};
    xf_shape s = xf_shape_make(2, d);
    int v = xf_graph_add_input(g, name, XF_F32, &s, NULL);
    ck_assert_int_ge(v, 0);
    return v;
}

static int op(xf_graph *g, xf_op o, int a, int b)
{
    int args[2] = {a, b};
    int v = xf_graph_op(g, o, NULL, args, b < 0 ? 1 : 2, NULL);
    ck_assert_int_ge(v, 0);
    return v;
}

/* ewadd(p, q) => ewadd(q, p) over inputs named n0, n1 of size n x n, where
 * p is input `first` and q the other. */
static void add_comm(xf_rulesdb *db, const char *n0, const char *n1, int first, int64_t n)
{
    xf_rule r;
    xf_rule_init(&r);
    int s[2] = {in(&r.src, n0, n), in(&r.src, n1, n)}, d[2] = {in(&r.dst, n0, n), in(&r.dst, n1, n)};
    xf_graph_mark_output(&r.src, op(&r.src, XF_OP_ADD, s[first], s[1 - first]), NULL);
    xf_graph_mark_output(&r.dst, op(&r.dst, XF_OP_ADD, d[1 - first], d[first]), NULL);
    add(db, &r);
    xf_rule_free(&r);
}

/* (xy)z => x(yz), or reversed. */
static void add_assoc(xf_rulesdb *db, int reversed)
{
    xf_rule r;
    xf_rule_init(&r);
    const char *nm[3] = {"x", "y", "z"};
    int s[3], d[3];
    for (int i = 0; i < 3; i++) s[i] = in(&r.src, nm[i], 4), d[i] = in(&r.dst, nm[i], 4);
    xf_graph *left = reversed ? &r.dst : &r.src, *right = reversed ? &r.src : &r.dst;
    const int *l = reversed ? d : s, *rt = reversed ? s : d;
    xf_graph_mark_output(left, op(left, XF_OP_MATMUL, op(left, XF_OP_MATMUL, l[0], l[1]), l[2]), NULL);
    xf_graph_mark_output(right, op(right, XF_OP_MATMUL, rt[0], op(right, XF_OP_MATMUL, rt[1], rt[2])),
                         NULL);
    add(db, &r);
    xf_rule_free(&r);
}

static void add_relu(xf_rulesdb *db)
{
    xf_rule r;
    xf_rule_init(&r);
    int s = in(&r.src, "x", 2), d = in(&r.dst, "x", 2);
    xf_graph_mark_output(&r.src, op(&r.src, XF_OP_RELU, op(&r.src, XF_OP_RELU, s, -1), -1), NULL);
    xf_graph_mark_output(&r.dst, op(&r.dst, XF_OP_RELU, d, -1), NULL);
    add(db, &r);
    xf_rule_free(&r);
}

static xf_rulesdb *create(char *path, size_t n, const char *name)
{
    snprintf(path, n, "%s", xf_test_tmp(name));
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    ck_assert_int_eq(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, NULL), XF_OK);
    return db;
}

static void setup(void)
{
    snprintf(out_path, sizeof out_path, "%s", xf_test_tmp("diff.out"));
    xf_rulesdb *a = create(a_path, sizeof a_path, "a.db");
    add_comm(a, "x", "y", 0, 2);
    add_assoc(a, 0);
    add_relu(a);
    xf_rulesdb_close(a);
    xf_rulesdb *b = create(b_path, sizeof b_path, "b.db");
    add_comm(b, "a", "b", 1, 2);
    add_assoc(b, 1);
    add_comm(b, "x", "y", 0, 3);
    xf_rulesdb_verdict v = {XF_RULE_PROVED, 1.0, "ewadd-comm", NULL, NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(b, 1, &v, NULL), XF_OK);
    xf_rulesdb_close(b);
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

static int diff(const char *x, const char *y)
{
    int rc =
        xf_test_system("'%s' diff '%s' '%s' > '%s' 2>&1", xf_test_tool("xferdb"), x, y, out_path);
    char *text = xf_test_read_file(out_path, NULL);
    free(output);
    output = text;
    return rc;
}

START_TEST(test_diff_listing)
{
    ck_assert_int_eq(diff(a_path, b_path), 1);
    char want[16384];
    snprintf(want, sizeof want,
             "only in %s:\n"
             "<      2  candidate  matmul(matmul(x, y), z)  =>  matmul(x, matmul(y, z))  "
             "[reversed in %s: rule 2]\n"
             "<      3  candidate  relu(relu(x))  =>  relu(x)\n"
             "only in %s:\n"
             ">      2  candidate  matmul(x, matmul(y, z))  =>  matmul(matmul(x, y), z)  "
             "[reversed in %s: rule 2]\n"
             ">      3  candidate  ewadd(x, y)  =>  ewadd(y, x)\n"
             "in both, status differs (%s id, %s id):\n"
             "!      1 candidate ->      1 proved     ewadd(b, a)  =>  ewadd(a, b)\n"
             "diff: %s has 3 rules, %s has 3: 2 only in %s (1 reversed in the other), 2 only in "
             "%s (1 reversed in the other), 1 pairs in both (1 with another status, 0 with another validity domain)\n",
             a_path, b_path, b_path, a_path, a_path, b_path, a_path, b_path, a_path, b_path);
    ck_assert_str_eq(output, want);
}
END_TEST

START_TEST(test_diff_same_and_errors)
{
    ck_assert_int_eq(diff(a_path, a_path), 0);
    xf_test_expect_contains(output, "has 3 rules");
    xf_test_expect_contains(output, ": 0 only in");
    xf_test_expect_contains(output, "3 pairs in both (0 with another status, 0 with another validity domain)\n");
    char missing[4200];
    snprintf(missing, sizeof missing, "%s.missing", a_path);
    ck_assert_int_eq(diff(a_path, missing), 2);
    xf_test_expect_contains(output, ".missing: cannot open");
    ck_assert_int_eq(
        xf_test_system("'%s' diff '%s' > /dev/null 2>&1", xf_test_tool("xferdb"), a_path), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xferdb_diff");
    TCase *t = tcase_create("diff");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_diff_listing);
    tcase_add_test(t, test_diff_same_and_errors);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
