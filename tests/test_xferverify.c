/*
 * test_xferverify.c — the xferverify tool end to end on a rules database
 * built here with the rulesdb API: ewadd commutativity (true) and
 * relu(a+b) = relu(a)+relu(b) (false) and trans(x) + x = x + x on a 1x1 x
 * (true at its own shape only). Checks the stored statuses (the false rule
 * refuted with a counterexample blob that decodes to inputs separating the
 * sides, the true rule never refuted, the shape-specific rule refuted at
 * another shape by the float probe before any proof attempt, with
 * --axioms-first proved by the axioms first and counted as shape-specific,
 * never a disagreement, and proved with --max-shapes 1),
 * that a rerun decides nothing, that --recheck decides all again, and the
 * exit status of bad usage (2) and --help (0). The library call behind the
 * tool (xf_verify_db) is also run in-process: its tally and callbacks.
 * Operator patterns: a worker takes those an earlier worker read (the
 * tally counts them) and stores the same verdict, detail and Z3 work as
 * when it reads them itself.
 * Hostile states: rules that cannot be loaded (a corrupt blob, a missing
 * graph row) keep their proved/refuted verdict under --recheck and are
 * reported; a 0-byte file is refused and left as it is; another writer gets
 * its write in while xferverify runs on a database xfergen made; a rule
 * stored at a huge shape is refused at once, never proved by the bounded
 * check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"
#include "verify/verify.h"

static char db_path[4096];
static int64_t id_true, id_false, id_shape;

/* a + b => b + a, or relu(a + b) => relu(a) + relu(b) (relu), a, b : s. */
static void rule_pair_at(xf_rule *r, int relu, xf_shape s)
{
    xf_rule_init(r);
    xf_params p = xf_params_default();
    int a = xf_graph_add_input(&r->src, "a", XF_F32, &s, NULL);
    int b = xf_graph_add_input(&r->src, "b", XF_F32, &s, NULL);
    int c = xf_graph_add_input(&r->dst, "a", XF_F32, &s, NULL);
    int d = xf_graph_add_input(&r->dst, "b", XF_F32, &s, NULL);
    int in[2] = {a, b};
    int x = xf_graph_op(&r->src, XF_OP_ADD, &p, in, 2, NULL);
    if (relu) x = xf_graph_op(&r->src, XF_OP_RELU, &p, &x, 1, NULL);
    int y;
    if (relu) {
        int rc = xf_graph_op(&r->dst, XF_OP_RELU, &p, &c, 1, NULL);
        int rd = xf_graph_op(&r->dst, XF_OP_RELU, &p, &d, 1, NULL);
        int in2[2] = {rc, rd};
        y = xf_graph_op(&r->dst, XF_OP_ADD, &p, in2, 2, NULL);
    } else {
        int in2[2] = {d, c};
        y = xf_graph_op(&r->dst, XF_OP_ADD, &p, in2, 2, NULL);
    }
    ck_assert_int_ge(x, 0);
    ck_assert_int_ge(y, 0);
    ck_assert_int_eq(xf_graph_mark_output(&r->src, x, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&r->dst, y, NULL), XF_OK);
}

static void rule_pair(xf_rule *r, int relu)
{
    const int64_t dims[2] = {2, 2};
    rule_pair_at(r, relu, xf_shape_make(2, dims));
}

/* ewadd(trans(x), x) => ewadd(x, x), x : 1x1. */
static void rule_unit_transpose(xf_rule *r)
{
    const int64_t dims[2] = {1, 1};
    xf_shape s = xf_shape_make(2, dims);
    xf_rule_init(r);
    xf_params p = xf_params_default(), tp = xf_params_default();
    tp.n_axes = 2;
    tp.axes[0] = 1;
    tp.axes[1] = 0;
    int a = xf_graph_add_input(&r->src, "x", XF_F32, &s, NULL);
    int c = xf_graph_add_input(&r->dst, "x", XF_F32, &s, NULL);
    int t = xf_graph_op(&r->src, XF_OP_TRANSPOSE, &tp, &a, 1, NULL);
    int in[2] = {t, a}, in2[2] = {c, c};
    int x = xf_graph_op(&r->src, XF_OP_ADD, &p, in, 2, NULL);
    int y = xf_graph_op(&r->dst, XF_OP_ADD, &p, in2, 2, NULL);
    ck_assert_int_ge(x, 0);
    ck_assert_int_ge(y, 0);
    ck_assert_int_eq(xf_graph_mark_output(&r->src, x, NULL), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(&r->dst, y, NULL), XF_OK);
}

/* Two rules over a, b : 2x2. RULE_RELU_TWICE: relu(relu(a + b)) =>
 * relu(a + b), whose sides' normal forms differ, so the exact check asks
 * the solver (Z3 work in its detail). RULE_ADD_AS_SUB: a + b => a - (-b),
 * whose ewadd is on one side only, so any other pattern for it than the
 * kernel's (another element, another coefficient, a term missing) gives
 * the sides other normal forms. */
enum { RULE_RELU_TWICE, RULE_ADD_AS_SUB };

static void rule_over_ab(xf_rule *r, int which)
{
    const int64_t dims[2] = {2, 2};
    xf_shape s = xf_shape_make(2, dims);
    xf_rule_init(r);
    xf_params p = xf_params_default();
    for (int k = 0; k < 2; k++) {
        xf_graph *g = k ? &r->dst : &r->src;
        int in[2] = {xf_graph_add_input(g, "a", XF_F32, &s, NULL),
                     xf_graph_add_input(g, "b", XF_F32, &s, NULL)};
        int x;
        if (which == RULE_ADD_AS_SUB && k) {
            in[1] = xf_graph_op(g, XF_OP_NEG, &p, &in[1], 1, NULL);
            x = xf_graph_op(g, XF_OP_SUB, &p, in, 2, NULL);
        } else {
            x = xf_graph_op(g, XF_OP_ADD, &p, in, 2, NULL);
        }
        if (which == RULE_RELU_TWICE) {
            x = xf_graph_op(g, XF_OP_RELU, &p, &x, 1, NULL);
            if (!k) x = xf_graph_op(g, XF_OP_RELU, &p, &x, 1, NULL);
        }
        ck_assert_int_ge(x, 0);
        ck_assert_int_eq(xf_graph_mark_output(g, x, NULL), XF_OK);
    }
}

/* Decides rule_over_ab's rule `which` in a fresh database `name`, after a + b => b + a
 * (the same ewadd at the same shapes) when `after`, one worker at a time;
 * its status and stored detail (xf_strdup'd) into *status and *detail.
 * Returns the tally's patterns taken from earlier workers. */
static int64_t decide(int which, const char *name, int after,
                      xf_rule_status *status, char **detail)
{
    const char *path = xf_test_tmp(name);
    xf_test_remove_db(path);
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    int64_t id;
    if (after) {
        rule_pair(&r, 0);
        ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id, NULL, &err), XF_OK);
        xf_rule_free(&r);
    }
    rule_over_ab(&r, which);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id, NULL, &err), XF_OK);
    xf_rule_free(&r);
    xf_verify_db_options o;
    xf_verify_db_options_init(&o);
    o.jobs = 1;
    o.vo.timeout_ms = 120000; /* the resource limit decides, whatever the load */
    o.version = "test";
    xf_verify_tally t;
    ck_assert_msg(xf_verify_db(db, path, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.done, after ? 2 : 1);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, id, &info, NULL), XF_OK);
    *status = info.status;
    *detail = xf_strdup(info.detail);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_close(db);
    return t.patterns_reused;
}

/* The ewadd's pattern read by the first worker is taken by the second,
 * which builds the same terms from it: the same status and detail as when
 * the rule is decided alone, Z3 work units included (RULE_RELU_TWICE: the
 * exact check asks the solver), and a proof that needs the ewadd's pattern
 * to be the kernel's (RULE_ADD_AS_SUB: a wrong one handed back refutes it
 * or leaves it unknown). */
START_TEST(later_workers_take_earlier_workers_patterns)
{
    for (int k = RULE_RELU_TWICE; k <= RULE_ADD_AS_SUB; k++) {
        xf_rule_status alone_status, after_status;
        char *alone, *after;
        ck_assert_int_eq(decide(k, "patterns_alone.db", 0, &alone_status, &alone), 0);
        ck_assert_int_ge(decide(k, "patterns_after.db", 1, &after_status, &after), 1);
        ck_assert_int_eq(alone_status, XF_RULE_PROVED);
        ck_assert_msg(after_status == alone_status && strcmp(after, alone) == 0,
                      "rule %d: decided after another, %d: %s; alone, %d: %s", k,
                      (int)after_status, after, (int)alone_status, alone);
        if (k == RULE_RELU_TWICE) xf_test_expect_contains(alone, "work ");
        xf_free(alone);
        xf_free(after);
    }
}
END_TEST

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("verify.db"));
    remove(db_path);
    xf_rulesdb *db;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    rule_pair(&r, 0);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id_true, NULL, &err), XF_OK);
    xf_rule_free(&r);
    rule_pair(&r, 1);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id_false, NULL, &err), XF_OK);
    xf_rule_free(&r);
    rule_unit_transpose(&r);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id_shape, NULL, &err), XF_OK);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
}

static int run(const char *args)
{
    return xf_test_system("%s %s >/dev/null 2>%s.err", xf_test_tool("xferverify"), args, db_path);
}

static xf_rule_status status_of(int64_t id, xf_rulesdb_rule_info *info)
{
    xf_rulesdb *db;
    ck_assert_int_eq(xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, NULL), XF_OK);
    ck_assert_int_eq(xf_rulesdb_get_rule(db, id, info, NULL), XF_OK);
    xf_rulesdb_close(db);
    return info->status;
}

START_TEST(decides_stores_and_resumes)
{
    char args[4200];
    snprintf(args, sizeof args, "%s -j 2 --timeout 5s", db_path);
    ck_assert_int_eq(run(args), 0);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    ck_assert_int_ne(status_of(id_true, &info), XF_RULE_CANDIDATE);
    ck_assert_int_ne(info.status, XF_RULE_REFUTED);
    ck_assert_msg(info.detail && strstr(info.detail, "bounded: valid"), "%s", info.detail);

    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);
    ck_assert_ptr_nonnull(info.counterexample);
    xf_tensor *in;
    int n;
    ck_assert_int_eq(xf_verify_cex_decode(info.counterexample, info.counterexample_len, &in, &n,
                                          NULL),
                     XF_OK);
    ck_assert_int_eq(n, 2);
    /* the axioms did not prove it: the float probe at every shape comes
     * first, so the counterexample may be at other shapes than the rule's
     * own; the rule rebuilt there separates the sides */
    xf_rule r, ra;
    rule_pair(&r, 1);
    xf_shape at[2] = {in[0].shape, in[1].shape};
    ck_assert_int_eq(xf_verify_rule_at_shapes(&r, at, &ra, NULL), XF_OK);
    xf_tensor ys, yd;
    ck_assert_int_eq(xf_interp_run(&ra.src, in, n, &ys, NULL), XF_OK);
    ck_assert_int_eq(xf_interp_run(&ra.dst, in, n, &yd, NULL), XF_OK);
    ck_assert(!xf_tensor_close(&ys, &yd, 1e-4, 1e-4));
    xf_tensor_free(&ys);
    xf_tensor_free(&yd);
    for (int i = 0; i < n; i++) xf_tensor_free(&in[i]);
    free(in);
    xf_rule_free(&ra);
    xf_rule_free(&r);

    /* True at 1x1 (a unit transpose is the identity), false at a larger
     * square: the float probe, which runs first, refutes it there and the
     * axioms are not tried; stored refuted, exit status still 0. */
    ck_assert_int_eq(status_of(id_shape, &info), XF_RULE_REFUTED);
    ck_assert_msg(strstr(info.detail, "axioms: unknown (not tried") &&
                      strstr(info.detail, "not the rule's own"),
                  "%s", info.detail);
    ck_assert_int_eq(xf_verify_cex_decode(info.counterexample, info.counterexample_len, &in, &n,
                                          NULL),
                     XF_OK);
    ck_assert_int_eq(n, 1);
    ck_assert_int_gt(in[0].shape.dims[0], 1);
    xf_tensor_free(&in[0]);
    free(in);
    char path[4200];
    snprintf(path, sizeof path, "%s.err", db_path);
    char text[4096];
    FILE *ef = fopen(path, "r");
    ck_assert_ptr_nonnull(ef);
    size_t got = fread(text, 1, sizeof text - 1, ef);
    fclose(ef);
    text[got] = 0;
    ck_assert_msg(!strstr(text, "hold at their own shapes") && !strstr(text, "DISAGREE"), "%s",
                  text);

    /* --axioms-first: the axioms prove it (at its own shapes), the probe
     * refutes it at another: the same verdict, counted as shape-specific,
     * and the run records the option. */
    snprintf(args, sizeof args, "%s --recheck --axioms-first --timeout 5s", db_path);
    ck_assert_int_eq(run(args), 0);
    ck_assert_int_eq(status_of(id_shape, &info), XF_RULE_REFUTED);
    ck_assert_msg(strstr(info.detail, "axioms: proved") && strstr(info.detail, "not the rule's own"),
                  "%s", info.detail);
    char *shape_text = xf_test_read_file(path, NULL);
    ck_assert_ptr_nonnull(shape_text);
    ck_assert_msg(strstr(shape_text, "1 rule(s) hold at their own shapes") &&
                      !strstr(shape_text, "DISAGREE"),
                  "%s", shape_text);
    free(shape_text);
    ck_assert_int_eq(xf_test_sql_int(db_path, "SELECT options LIKE '% --axioms-first%' FROM runs "
                                              "WHERE id = (SELECT max(id) FROM runs)"),
                     1);
    ck_assert_int_eq(status_of(id_true, &info), XF_RULE_PROVED);
    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);

    /* Rerun: nothing left to decide. --recheck: all again. */
    snprintf(args, sizeof args, "%s -j 2 --timeout 5s", db_path);
    ck_assert_int_eq(run(args), 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, "[0/0]") != NULL, "%s", line);
    snprintf(args, sizeof args, "%s --recheck --timeout 5s", db_path);
    ck_assert_int_eq(run(args), 0);
    /* one summary line per size decided, then the total */
    char *all = xf_test_read_file(path, NULL);
    ck_assert_ptr_nonnull(all);
    ck_assert_msg(strstr(all, "\n[3/3]") != NULL && strstr(all, "size 1: ") == all, "%s", all);
    free(all);
    /* without -j, one worker per online CPU (the run records its options) */
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT options LIKE '-j %ld %%' FROM runs WHERE id = (SELECT max(id) FROM runs "
             "WHERE tool = 'xferverify')",
             sysconf(_SC_NPROCESSORS_ONLN));
    ck_assert_int_eq(xf_test_sql_int(db_path, sql), 1);
    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);
    /* Own shapes only: the shape-specific rule is proved. */
    snprintf(args, sizeof args, "%s --recheck --max-shapes 1", db_path);
    ck_assert_int_eq(run(args), 0);
    ck_assert_int_eq(status_of(id_shape, &info), XF_RULE_PROVED);
    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);
    xf_rulesdb_rule_info_free(&info);
}
END_TEST

typedef struct seen {
    int progress, disagreements;
    int64_t last_done;
} seen;

static void count_progress(void *user, const xf_verify_tally *t)
{
    seen *s = user;
    s->progress++;
    ck_assert_int_eq(t->done, s->last_done + 1);
    s->last_done = t->done;
}

static void count_disagreement(void *user, int64_t id, const char *core)
{
    (void)id;
    (void)core;
    ((seen *)user)->disagreements++;
}

START_TEST(library_tally_and_callbacks)
{
    xf_rulesdb *db;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(db_path, 0, &db, &err), XF_OK);
    xf_verify_db_options o;
    xf_verify_db_options_init(&o);
    o.jobs = 2;
    o.vo.timeout_ms = 5000;
    o.version = "test";
    seen s = {0, 0, 0};
    o.user = &s;
    o.on_progress = count_progress;
    o.on_disagreement = count_disagreement;
    xf_verify_tally t;
    ck_assert_msg(xf_verify_db(db, db_path, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(t.total, 3);
    ck_assert_int_eq(t.done, 3);
    ck_assert_int_eq(t.proved + t.refuted + t.unknown, 3);
    ck_assert_int_ge(t.refuted, 2); /* the false rule, the shape-specific one */
    ck_assert_int_eq(t.shape_specific, 0); /* the probe refuted it before any proof */
    ck_assert_int_eq(t.disagree, 0);
    ck_assert_int_eq(s.progress, 3);
    ck_assert_int_eq(s.disagreements, 0);
    /* the axioms first: they prove the shape-specific rule, which is counted */
    o.vo.probe_first = 0;
    o.recheck = 1;
    s = (seen){0, 0, 0};
    ck_assert_msg(xf_verify_db(db, db_path, &o, &t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_ge(t.refuted, 2);
    ck_assert_int_eq(t.shape_specific, 1);
    ck_assert_int_eq(t.disagree, 0);
    o.recheck = 0;
    /* Nothing is left to decide; a bad job count is refused. */
    ck_assert_int_eq(xf_verify_db(db, db_path, &o, &t, &err), XF_OK);
    ck_assert_int_eq(t.total, 0);
    o.jobs = 0;
    ck_assert_int_eq(xf_verify_db(db, db_path, &o, &t, &err), XF_ERR_INVALID);
    xf_rulesdb_close(db);
}
END_TEST

START_TEST(bad_usage)
{
    char args[4200];
    ck_assert_int_eq(run(""), 2);
    snprintf(args, sizeof args, "%s -j 0", db_path);
    ck_assert_int_eq(run(args), 2);
    snprintf(args, sizeof args, "%s --timeout soon", db_path);
    ck_assert_int_eq(run(args), 2);
    snprintf(args, sizeof args, "%s --max-shapes 0", db_path);
    ck_assert_int_eq(run(args), 2);
    snprintf(args, sizeof args, "%s --frobnicate", db_path);
    ck_assert_int_eq(run(args), 2);
    ck_assert_int_eq(run("/nonexistent/dir/x.db"), 2);
    ck_assert_int_eq(run("--help"), 0);
}
END_TEST

/* The stderr of the last run(). */
static char *run_stderr(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.err", db_path);
    return xf_test_read_file(path, NULL);
}

/* A proof is never lost to a decode error, nor a refutation to a missing
 * graph row: --recheck reports the rule (id, what is wrong), writes nothing
 * for it and exits 1; the rule that loads is decided again. */
START_TEST(unloadable_rules_keep_their_verdict)
{
    char args[4200];
    snprintf(args, sizeof args, "%s --timeout 5s", db_path);
    ck_assert_int_eq(run(args), 0);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_rule_status st_true = status_of(id_true, &info);
    ck_assert_int_eq(st_true, XF_RULE_PROVED);
    char *detail = xf_strdup(info.detail);
    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);
    char sql[512];
    snprintf(sql, sizeof sql,
             "PRAGMA foreign_keys = OFF;"
             " UPDATE graphs SET data = x'5847010203' WHERE id = (SELECT src_graph FROM rules"
             " WHERE id = %lld);"
             " DELETE FROM graphs WHERE id = (SELECT dst_graph FROM rules WHERE id = %lld)",
             (long long)id_true, (long long)id_false);
    xf_test_sql_exec(db_path, sql);

    snprintf(args, sizeof args, "%s --timeout 5s --recheck", db_path);
    ck_assert_int_eq(run(args), 1);
    char *err = run_stderr();
    char want[128];
    snprintf(want, sizeof want, "rule %lld cannot be loaded; its status (proved) is kept: ",
             (long long)id_true);
    xf_test_expect_contains(err, want);
    xf_test_expect_contains(err, "serialized graph is truncated");
    snprintf(want, sizeof want, "rule %lld cannot be loaded; its status (refuted) is kept: ",
             (long long)id_false);
    xf_test_expect_contains(err, want);
    xf_test_expect_contains(err, "no graph with id");
    xf_test_expect_contains(err, "2 rule(s) cannot be loaded");
    free(err);
    ck_assert_int_eq(status_of(id_true, &info), XF_RULE_PROVED);
    ck_assert_str_eq(info.detail, detail);
    /* rule id_false's own graph row is gone: get_rule still finds it */
    ck_assert_int_eq(status_of(id_false, &info), XF_RULE_REFUTED);
    ck_assert_int_eq(info.broken, 1);
    ck_assert_int_eq(status_of(id_shape, &info), XF_RULE_REFUTED); /* decided again */
    xf_rulesdb_rule_info_free(&info);
    xf_free(detail);
}
END_TEST

/* Only xfergen creates a rules database: a 0-byte file stays one. */
START_TEST(refuses_a_file_that_is_not_a_rules_db)
{
    const char *path = xf_test_tmp("zero.db");
    xf_test_remove_db(path);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(run(path), 2);
    char *err = run_stderr();
    xf_test_expect_contains(err, "is empty, not an rlflow rules database (xfergen creates one)");
    free(err);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_size, 0);
}
END_TEST

/* Another writer (here a second connection with the usual busy timeout)
 * gets its write in while xferverify is still deciding rules. */
START_TEST(other_writers_get_in)
{
    const char *path = xf_test_tmp("busy.db");
    char db[4096];
    snprintf(db, sizeof db, "%s", path);
    xf_test_remove_db(db);
    ck_assert_int_eq(xf_test_system("'%s' --vocab taso --max-ops 2 -o '%s' --quiet",
                                    xf_test_tool("xfergen"), db),
                     0);
    int64_t total = xf_test_sql_int(db, "SELECT count(*) FROM rules WHERE status = 'candidate'");
    ck_assert_int_gt(total, 100);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(127);
        execl(xf_test_tool("xferverify"), "xferverify", db, "-j", "1", "--timeout", "5s",
              "--limit", "100", (char *)NULL);
        _exit(127);
    }
    /* Wait for the first verdicts to be written: xferverify is under way. */
    double t0 = xf_clock_now();
    while (xf_test_sql_int(db, "SELECT count(*) FROM rules WHERE verified_at IS NOT NULL") == 0) {
        ck_assert_msg(xf_clock_now() - t0 < 120, "xferverify wrote no verdict in 120 s");
        ck_assert_int_eq(waitpid(pid, NULL, WNOHANG), 0);
        poll(NULL, 0, 20);
    }
    xf_rulesdb *h = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db, 0, &h, &err) == XF_OK, "%s", err.msg);
    double t1 = xf_clock_now();
    xf_status st = xf_rulesdb_run_stage(h, 1, "probe", 0.0, 1, &err);
    double waited = xf_clock_now() - t1;
    xf_rulesdb_close(h);
    int still_running = waitpid(pid, NULL, WNOHANG) == 0;
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert_msg(st == XF_OK, "the other writer was kept out (%.1f s): %s", waited, err.msg);
    ck_assert_msg(still_running, "xferverify ended before the other write: nothing was tested");
    ck_assert(WIFEXITED(ws));
    ck_assert_int_eq(WEXITSTATUS(ws), 0);
    /* --limit counts what the solver decides; derived rules come on top */
    ck_assert_int_eq(xf_test_sql_int(db, "SELECT count(*) FROM rules WHERE verified_at IS NOT NULL "
                                         "AND status != 'derived'"),
                     100);
}
END_TEST

/* Issue 17: a rule stored at [2^26,4,4,4] cost 73 s (16 GiB of random
 * inputs for the float probe) and came out unknown. Its own shapes are
 * beyond the bounded check's 4 per axis: refused at once, before anything
 * is allocated, as unsupported; the false rule is never proved, the true
 * one only by the axioms. */
START_TEST(rule_beyond_the_bound_is_refused_at_once)
{
    const int64_t dims[4] = {(int64_t)1 << 26, 4, 4, 4};
    xf_rulesdb *db;
    xf_error err;
    xf_test_remove_db(db_path);
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    int64_t id[2];
    for (int relu = 0; relu < 2; relu++) {
        xf_rule r;
        rule_pair_at(&r, relu, xf_shape_make(4, dims));
        ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, NULL, &id[relu], NULL, &err), XF_OK);
        xf_rule_free(&r);
    }
    xf_rulesdb_close(db);
    ck_assert_int_eq(run(db_path), 0);
    for (int relu = 0; relu < 2; relu++) {
        xf_rulesdb_rule_info info;
        xf_rulesdb_rule_info_init(&info);
        xf_rule_status st = status_of(id[relu], &info);
        ck_assert_int_ne(st, XF_RULE_REFUTED);
        if (relu) ck_assert_int_eq(st, XF_RULE_UNKNOWN);
        if (st == XF_RULE_PROVED) xf_test_expect_contains(info.detail, "axioms: proved");
        xf_test_expect_contains(info.detail, "bounded: unsupported (bounded check: input 0 is "
                                             "[67108864,4,4,4], beyond the bound 4 per axis (16 "
                                             "on an axis of an input of at most 256 elements))");
        xf_rulesdb_rule_info_free(&info);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xferverify");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, decides_stores_and_resumes);
    tcase_add_test(tc, bad_usage);
    tcase_add_test(tc, rule_beyond_the_bound_is_refused_at_once);
    tcase_add_test(tc, library_tally_and_callbacks);
    tcase_add_test(tc, later_workers_take_earlier_workers_patterns);
    tcase_add_test(tc, unloadable_rules_keep_their_verdict);
    tcase_add_test(tc, refuses_a_file_that_is_not_a_rules_db);
    tcase_add_test(tc, other_writers_get_in);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return xf_test_run(suite()); }
