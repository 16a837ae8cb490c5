/*
 * test_xferverify_mpi.c — xferverify under MPI and Z3's resource limit.
 *
 * MPI (skipped, visibly, in a build without MPI or where mpirun is not
 * installed): `mpirun --oversubscribe -n 3 xferverify` on a small database
 * xfergen makes gives the same verdicts, word for word, as `-j 2` on a copy
 * (rank 0 records, ranks 1 and 2 decide from a dynamic queue); a rerun
 * decides nothing; and a program that calls xf_verify_db twice in one MPI
 * run (this test binary itself, started by mpirun: the worker ranks serve
 * both calls until rank 0 stops them) decides every rule once.
 *
 * rlimit: with a resource limit too small for any proof query, rules are
 * unknown with the reason "rlimit", in the same words on a second run
 * (deterministic, unlike a timeout), and the default limit decides them; a
 * 1 ms timeout is reported as such with advice; bad --rlimit values are
 * refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"
#include "verify/verify.h"
#ifdef XF_HAVE_MPI
#include "cluster/cluster.h"
#endif

/* Rules every test here decides: the first ones of the taso vocabulary at
 * two operators (a mix of proved and refuted, seconds in all). */
#define N_RULES 24

/* xfergen's TASO rules of up to max_ops operators with only n candidates
 * left (the others marked pruned): the first n by id, or the n largest
 * when `largest` (the ones most likely to need the solver). */
static void make_db_of(const char *path, int max_ops, int n, int largest)
{
    xf_test_remove_db(path);
    ck_assert_int_eq(xf_test_system("'%s' --vocab taso --max-ops %d -o '%s' --quiet",
                                    xf_test_tool("xfergen"), max_ops, path),
                     0);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE rules SET status = 'pruned' WHERE status = 'candidate' AND id NOT IN "
             "(SELECT id FROM rules WHERE status = 'candidate' ORDER BY %s LIMIT %d)",
             largest ? "size DESC, id" : "id", n);
    xf_test_sql_exec(path, sql);
}

static void make_db(const char *path)
{
    make_db_of(path, 2, N_RULES, 0);
}

/* "id status axioms detail" of every decided rule, one a line (xf_free). */
static char *verdicts(const char *path)
{
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    ck_assert_int_eq(xf_rulesdb_iter_begin(db, &f, &it, &err), XF_OK);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    size_t cap = 1 << 16, len = 0;
    char *out = xf_malloc(cap);
    ck_assert_ptr_nonnull(out);
    out[0] = 0;
    int has = 1;
    while (xf_rulesdb_iter_next(it, &info, &has, &err) == XF_OK && has) {
        if (info.status == XF_RULE_PRUNED || info.status == XF_RULE_CANDIDATE) continue;
        size_t need = len + 64 + (info.axioms ? strlen(info.axioms) : 0) +
                      (info.detail ? strlen(info.detail) : 0);
        if (need > cap) {
            cap = 2 * need;
            out = xf_realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
        len += (size_t)snprintf(out + len, cap - len, "%lld %s %s %s\n", (long long)info.id,
                                xf_rulesdb_status_name(info.status),
                                info.axioms ? info.axioms : "-", info.detail ? info.detail : "-");
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    return out;
}

START_TEST(mpi_gives_the_verdicts_of_one_process)
{
    const char *why = NULL, *launcher = xf_test_mpirun(&why);
    if (!launcher) XF_SKIP("%s", why);
    char a[4096], b[4096];
    snprintf(a, sizeof a, "%s", xf_test_tmp("mpi.db"));
    snprintf(b, sizeof b, "%s", xf_test_tmp("local.db"));
    make_db(a);
    make_db(b);
    ck_assert_int_eq(xf_test_system("%s -n 3 '%s' '%s' 2>'%s.err' >/dev/null", launcher,
                                    xf_test_tool("xferverify"), a, a),
                     0);
    ck_assert_int_eq(xf_test_system("'%s' '%s' -j 2 2>/dev/null >/dev/null",
                                    xf_test_tool("xferverify"), b),
                     0);
    char *va = verdicts(a), *vb = verdicts(b);
    int lines = 0;
    for (const char *p = va; *p; p++) lines += *p == '\n';
    ck_assert_int_eq(lines, N_RULES);
    ck_assert_str_eq(va, vb);
    xf_free(va);
    xf_free(vb);
    /* At least one recorded run per size the solver decided (xferverify
     * derives and decides size by size, in rounds), each under MPI with the
     * default of one worker per rank. */
    int64_t sizes = xf_test_sql_int(a, "SELECT count(DISTINCT size) FROM rules WHERE status IN "
                                       "('proved', 'refuted', 'unknown')");
    ck_assert_int_gt(sizes, 0);
    ck_assert_int_ge(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE tool = 'xferverify' "
                                        "AND options LIKE 'mpi, -j per rank 1 %'"),
                     sizes);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE tool = 'xferverify' "
                                        "AND options NOT LIKE 'mpi, -j per rank 1 %'"),
                     0);
    /* Resumes: nothing is left to decide. */
    ck_assert_int_eq(xf_test_system("%s -n 3 '%s' '%s' 2>'%s.err' >/dev/null", launcher,
                                    xf_test_tool("xferverify"), a, a),
                     0);
    char path[4200];
    snprintf(path, sizeof path, "%s.err", a);
    char *err = xf_test_read_file(path, NULL);
    xf_test_expect_contains(err, "[0/0]");
    free(err);
}
END_TEST

/* Started by mpirun (main below): rank 0 decides the first 5 rules, then
 * the rest, in two xf_verify_db calls; the other ranks serve both. Exit 0
 * when the tallies are 5 and N_RULES - 5. */
#ifdef XF_HAVE_MPI
static int twice(const char *path)
{
    int rank = 0, size = 1;
    xf_error err;
    if (xf_cluster_init(NULL, NULL, &rank, &size, &err) != XF_OK) return 10;
    int rc = 0;
    if (rank != 0) {
        rc = xf_verify_mpi_serve(&err) == XF_OK ? 0 : 11;
    } else {
        xf_rulesdb *db = NULL;
        xf_verify_db_options o;
        xf_verify_db_options_init(&o);
        o.mpi = 1;
        o.version = "test";
        xf_verify_tally t1, t2;
        o.limit = 5;
        if (xf_rulesdb_open(path, 0, &db, &err) != XF_OK) rc = 12;
        if (!rc && xf_verify_db(db, path, &o, &t1, &err) != XF_OK) rc = 13;
        o.limit = 0;
        if (!rc && xf_verify_db(db, path, &o, &t2, &err) != XF_OK) rc = 14;
        if (!rc && (t1.done != 5 || t2.done != N_RULES - 5)) rc = 15;
        if (rc) fprintf(stderr, "twice: %d: %s\n", rc, err.msg);
        xf_rulesdb_close(db);
    }
    xf_cluster_finish();
    return rc;
}
#endif

START_TEST(worker_ranks_serve_several_calls)
{
    const char *why = NULL, *launcher = xf_test_mpirun(&why);
    if (!launcher) XF_SKIP("%s", why);
    char a[4096], self[4096];
    snprintf(a, sizeof a, "%s", xf_test_tmp("twice.db"));
    make_db(a);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = 0;
    ck_assert_int_eq(xf_test_system("%s -n 3 -x XF_TEST_TWICE='%s' '%s' >/dev/null", launcher, a,
                                    self),
                     0);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'candidate'"),
                     0);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE verified_at IS NOT NULL"),
                     N_RULES);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE tool = 'xferverify'"), 2);
}
END_TEST

/* With a resource limit of 1 unit, no proof query can finish: the rules
 * that need one are unknown for the reason "rlimit", word for word the same
 * on a rerun (a timeout would depend on the machine); random floats still
 * refute what they refute, and equal normal forms (no query) still prove
 * the rules whose own shapes stand for all of theirs. Every candidate goes
 * to the solver (--no-derive): a first run derives rules from those proofs
 * that --recheck, deciding rules that have a verdict, sends to the solver. */
START_TEST(rlimit_unknowns_are_reproducible)
{
    char a[4096];
    snprintf(a, sizeof a, "%s", xf_test_tmp("rlimit.db"));
    make_db(a);
    const char *tool = xf_test_tool("xferverify");
    ck_assert_int_eq(xf_test_system("'%s' '%s' -j 2 --rlimit 1 --no-derive 2>'%s.err' >/dev/null",
                                    tool, a, a),
                     0);
    char *first = verdicts(a);
    int64_t n_rl = xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'unknown' AND "
                                      "verdict_detail LIKE 'unknown: axioms rlimit,%'");
    int64_t n_shapes = xf_test_sql_int(
        a, "SELECT count(*) FROM rules WHERE status = 'proved' AND verdict_detail LIKE "
           "'proved by the exact check at the own shapes;%(normal forms), which stand for%'");
    ck_assert_int_gt(n_shapes, 0);
    ck_assert_int_gt(n_rl, 0);
    ck_assert_int_gt(n_rl + n_shapes, N_RULES / 2);
    char path[4200];
    snprintf(path, sizeof path, "%s.err", a);
    char *err = xf_test_read_file(path, NULL);
    char want[64];
    snprintf(want, sizeof want, "unknown by reason: rlimit %lld", (long long)n_rl);
    xf_test_expect_contains(err, want);
    xf_test_expect_contains(err, "0 hard kill(s); workers' CPU time ");
    free(err);
    ck_assert_int_eq(
        xf_test_system("'%s' '%s' -j 1 --rlimit 1 --no-derive --recheck 2>/dev/null >/dev/null",
                       tool, a),
        0);
    char *second = verdicts(a);
    ck_assert_str_eq(first, second);
    xf_free(first);
    xf_free(second);
    /* The limit is recorded with each run (one per size and solver round). */
    int64_t sizes = xf_test_sql_int(a, "SELECT count(DISTINCT size) FROM rules WHERE status != "
                                       "'pruned'");
    ck_assert_int_gt(sizes, 0);
    ck_assert_int_ge(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE options LIKE "
                                        "'%--rlimit 1 %'"),
                     2 * sizes);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE tool = 'xferverify' AND "
                                        "options NOT LIKE '%--rlimit 1 %'"),
                     0);
    /* The default limit decides what 1 unit could not. */
    ck_assert_int_eq(xf_test_system("'%s' '%s' -j 2 --recheck 2>/dev/null >/dev/null", tool, a), 0);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE verdict_detail LIKE "
                                        "'%rlimit%'"),
                     0);
    ck_assert_int_gt(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'proved'"),
                     n_rl / 2);
    /* --proof-rlimit limits the proof queries alone: with 1 unit the proofs
     * that need work stop at it, the bounded checks keep their budget. */
    ck_assert_int_eq(
        xf_test_system("'%s' '%s' -j 2 --recheck --proof-rlimit 1 2>/dev/null >/dev/null", tool, a),
        0);
    ck_assert_int_gt(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE verdict_detail LIKE "
                                        "'unknown: axioms rlimit, bounded valid;%'"),
                     0);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE verdict_detail LIKE "
                                        "'%bounded rlimit%'"),
                     0);
    ck_assert_int_gt(xf_test_sql_int(a, "SELECT count(*) FROM runs WHERE options LIKE "
                                        "'%--proof-rlimit 1 %'"),
                     0);
    /* A 1 ms timeout without an rlimit: the summary says which rules the
     * clock stopped and what to do about it. The 2-operator rules above
     * take well under a millisecond each, so this uses the six largest
     * 3-operator rules, which need the solver. */
    make_db_of(a, 3, 6, 1);
    tool = xf_test_tool("xferverify"); /* its buffer held xfergen's path meanwhile */
    ck_assert_int_eq(xf_test_system("'%s' '%s' --timeout 1ms --rlimit 0 --cross-shapes 64 "
                                    "2>'%s.err' >/dev/null",
                                    tool, a, a),
                     0);
    /* The clock stops rules somewhere: a bounded check that needs the
     * solver (exact at every planned shape of a proved rule, --cross-shapes
     * 64) spends its 1 ms before its last input shape, and a proof is
     * stopped ("timeout", or "canceled" when the clock fires inside Z3)
     * where equal normal forms decide the rule without it. How many of the
     * six finish inside 1 ms depends on the machine (a rule with 4 input
     * shapes can, on a fast one), so the test asks for at least one
     * stopped, none refuted, every other one proved, and the
     * summary line checked against what was stored. */
    int64_t n_stopped = xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status != 'pruned' "
                                           "AND (verdict_detail LIKE '%timeout%' OR verdict_detail "
                                           "LIKE '%time budget spent%' OR verdict_detail LIKE "
                                           "'%(canceled)%')");
    ck_assert_int_ge(n_stopped, 1);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'refuted'"), 0);
    ck_assert_int_eq(xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'proved' "
                                        "AND verdict_detail NOT LIKE '%timeout%' AND verdict_detail "
                                        "NOT LIKE '%time budget spent%' AND verdict_detail NOT "
                                        "LIKE '%(canceled)%'"),
                     6 - n_stopped);
    int64_t n_to = xf_test_sql_int(a, "SELECT count(*) FROM rules WHERE status = 'unknown' AND "
                                      "verdict_detail LIKE 'unknown: %timeout%'");
    err = xf_test_read_file(path, NULL);
    char line[160];
    snprintf(line, sizeof line,
             "%lld rule(s) stopped at the wall-clock timeout, which depends on the machine and "
             "its load",
             (long long)n_to);
    if (n_to > 0)
        xf_test_expect_contains(err, line);
    else
        ck_assert_msg(!strstr(err, "stopped at the wall-clock timeout"), "%s", err);
    free(err);
    /* Bad values are refused. */
    ck_assert_int_eq(xf_test_system("'%s' '%s' --rlimit -1 2>/dev/null", tool, a), 2);
    ck_assert_int_eq(xf_test_system("'%s' '%s' --rlimit lots 2>/dev/null", tool, a), 2);
    ck_assert_int_eq(xf_test_system("'%s' '%s' --rlimit 4294967296 2>/dev/null", tool, a), 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xferverify_mpi");
    TCase *tc = tcase_create("mpi");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, mpi_gives_the_verdicts_of_one_process);
    tcase_add_test(tc, worker_ranks_serve_several_calls);
    tcase_add_test(tc, rlimit_unknowns_are_reproducible);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
#ifdef XF_HAVE_MPI
    const char *twice_db = getenv("XF_TEST_TWICE");
    if (twice_db && xf_cluster_launched()) return twice(twice_db);
#endif
    return xf_test_run(suite());
}
