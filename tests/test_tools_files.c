/*
 * test_tools_files.c — the tools' output and input files end to end
 * (issue 17's output-file, leftover and small cases), on a rules database
 * and models built here.
 *
 * Outputs (modelzoo, xfonnx roundtrip, xferdb export json/onnx,
 * rlflow-agent): -o onto a full device (a stand-in for /dev/full) fails
 * with "No space left on device" and a non-zero exit, and the device stays
 * a device; -o through a symbolic link writes its target and the link
 * stays; -o onto a FIFO writes through to its reader and the FIFO stays.
 * Inputs: a FIFO given as a model, a test-data tensor or a vocabulary is
 * refused at once (exit 2) instead of blocking. Leftovers: a failed
 * `xferdb report` removes the directory it created and keeps what was in
 * one that existed; `xfergen --resume` on a new path creates nothing.
 * Small cases: a model whose outputs contain NaN is written by
 * rlflow-agent (NaN where the original has NaN is equal, elsewhere a
 * difference); --rtol/--atol refuse inf, nan and negatives.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "match/match.h"
#include "agent_fixture.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

static char db_path[4096], model_path[4096], nan_path[4096], log_path[4096];
static char *output; /* stdout and stderr of the last command */

/* Runs the shell command with stdout and stderr into `output`; its exit status. */
static int run(const char *fmt, ...) XF_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
    char cmd[12000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    free(output);
    int rc = xf_test_system("( %s ) > '%s' 2>&1", cmd, log_path);
    output = xf_test_read_file(log_path, NULL);
    return rc;
}

static const char *tool(const char *name)
{
    static char buf[4][4096];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s", xf_test_tool(name));
    return buf[k];
}

/* One proved rule (relu(conv) => fused conv), as rule 1. */
static void write_db(void)
{
    xf_test_remove_db(db_path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    xf_fx_rule_conv_relu(&r);
    xf_rulesdb_rule_meta m = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t id = 0;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &m, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
}

/* y = op(x) on a [2, 8] input; with Sqrt, random inputs give NaN outputs. */
static void build_unary(xf_graph *g, xf_op op)
{
    xf_graph_init(g);
    int x = xf_fx_input(g, "x", xf_fx_shape(2, 2, 8, 0, 0));
    xf_fx_output(g, xf_fx_op(g, op, NULL, x, -1));
}

static void write_model(const char *path, xf_op op)
{
    xf_graph g;
    build_unary(&g, op);
    xf_error err;
    ck_assert_msg(xf_onnx_save(&g, path, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
}

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules.db"));
    snprintf(model_path, sizeof model_path, "%s", xf_test_tmp("relu.onnx"));
    snprintf(nan_path, sizeof nan_path, "%s", xf_test_tmp("sqrt.onnx"));
    snprintf(log_path, sizeof log_path, "%s", xf_test_tmp("tool.out"));
    write_db();
    write_model(model_path, XF_OP_RELU);
    write_model(nan_path, XF_OP_SQRT);
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

/* The rlflow-agent options of every run: our files, the analytic roofline,
 * no cache, no latency runs, quiet. */
#define AGENT "'%s' --rules '%s' '%s' --backend analytic --cache none --no-latency -q"

/* Each tool's command writing to OUT (printf argument order: tool path,
 * then its inputs, then OUT). */
static void command(int k, const char *out, char *cmd, size_t n)
{
    switch (k) {
    case 0:
        snprintf(cmd, n, "'%s' squeezenet --image 32 --classes 10 -o '%s'", tool("modelzoo"), out);
        break;
    case 1: snprintf(cmd, n, "'%s' roundtrip '%s' -o '%s'", tool("xfonnx"), model_path, out); break;
    case 2:
        snprintf(cmd, n, "'%s' export '%s' 1 --format json -o '%s'", tool("xferdb"), db_path, out);
        break;
    default:
        snprintf(cmd, n, AGENT " -o '%s'", tool("rlflow-agent"), db_path, model_path, out);
        break;
    }
}
#define N_WRITERS 4

START_TEST(output_onto_a_full_device_fails_and_keeps_it)
{
    const char *p = xf_test_full_device("full");
    if (!p) XF_SKIP("cannot make a full-device stand-in (mknod) and running as root");
    char dev[4096], cmd[8192];
    snprintf(dev, sizeof dev, "%s", p);
    for (int k = 0; k < N_WRITERS; k++) {
        command(k, dev, cmd, sizeof cmd);
        int rc = run("%s", cmd);
        ck_assert_msg(rc == 1 || rc == 2, "%s: exit %d\n%s", cmd, rc, output);
        xf_test_expect_contains(output, "No space left on device");
        ck_assert_msg(xf_test_is_char_device(dev), "%s replaced %s", cmd, dev);
    }
    /* export --format onnx writes STEM.src.onnx first */
    char stem[4096], src[4200];
    snprintf(stem, sizeof stem, "%s", xf_test_tmp("fullstem"));
    snprintf(src, sizeof src, "%s.src.onnx", stem);
    p = xf_test_full_device("fullstem.src.onnx");
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(run("'%s' export '%s' 1 --format onnx -o '%s'", tool("xferdb"), db_path, stem),
                     1);
    xf_test_expect_contains(output, "No space left on device");
    ck_assert(xf_test_is_char_device(src));
}
END_TEST

START_TEST(output_through_a_symlink_writes_its_target)
{
    char link[4096], target[4096], cmd[8192];
    snprintf(target, sizeof target, "%s", xf_test_tmp("target.out"));
    snprintf(link, sizeof link, "%s", xf_test_tmp("link.out"));
    for (int k = 0; k < N_WRITERS; k++) {
        unlink(link);
        FILE *f = fopen(target, "w");
        ck_assert_ptr_nonnull(f);
        fputs("old", f);
        fclose(f);
        ck_assert_int_eq(symlink(target, link), 0);
        command(k, link, cmd, sizeof cmd);
        ck_assert_msg(run("%s", cmd) == 0, "%s\n%s", cmd, output);
        struct stat st;
        ck_assert_int_eq(lstat(link, &st), 0);
        ck_assert_msg(S_ISLNK(st.st_mode), "%s replaced the link", cmd);
        ck_assert_int_eq(stat(target, &st), 0);
        ck_assert_msg(st.st_size > 3, "%s did not write the link's target", cmd);
        if (k != 2) { /* the models read back */
            xf_graph g;
            xf_error err;
            ck_assert_msg(xf_onnx_load(target, NULL, &g, &err) == XF_OK, "%s", err.msg);
            xf_graph_free(&g);
        }
    }
}
END_TEST

START_TEST(output_onto_a_fifo_writes_through)
{
    char copy[4096], fifo[4096], cmd[8192];
    snprintf(copy, sizeof copy, "%s", xf_test_tmp("fifo.copy"));
    for (int k = 0; k < 2; k++) { /* modelzoo, xfonnx roundtrip */
        const char *p = xf_test_fifo("out.fifo");
        if (!p) XF_SKIP("cannot make a FIFO");
        snprintf(fifo, sizeof fifo, "%s", p);
        command(k, fifo, cmd, sizeof cmd);
        ck_assert_msg(run("cat '%s' > '%s' & %s; rc=$?; wait; exit $rc", fifo, copy, cmd) == 0,
                      "%s\n%s", cmd, output);
        struct stat st;
        ck_assert_int_eq(lstat(fifo, &st), 0);
        ck_assert_msg(S_ISFIFO(st.st_mode), "%s replaced the FIFO", cmd);
        xf_graph g;
        xf_error err;
        ck_assert_msg(xf_onnx_load(copy, NULL, &g, &err) == XF_OK, "%s: %s", cmd, err.msg);
        xf_graph_free(&g);
    }
}
END_TEST

START_TEST(inputs_must_be_regular_files)
{
    const char *p = xf_test_fifo("in.fifo");
    if (!p) XF_SKIP("cannot make a FIFO");
    char fifo[4096], dir[4096], db[4096];
    snprintf(fifo, sizeof fifo, "%s", p);
    /* timeout: before the fix these blocked forever */
    ck_assert_int_eq(run("timeout 60 '%s' info '%s'", tool("xfonnx"), fifo), 2);
    xf_test_expect_contains(output, "not a regular file (a FIFO)");
    ck_assert_int_eq(run("timeout 60 " AGENT, tool("rlflow-agent"), db_path, fifo), 2);
    xf_test_expect_contains(output, "not a regular file (a FIFO)");
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("data"));
    ck_assert_int_eq(
        xf_test_system("rm -rf '%s' && mkdir '%s' && mkfifo '%s/input_0.pb'", dir, dir, dir), 0);
    ck_assert_int_eq(run("timeout 60 '%s' run '%s' --data '%s'", tool("xfonnx"), model_path, dir), 2);
    xf_test_expect_contains(output, "input_0.pb: not a regular file (a FIFO)");
    snprintf(db, sizeof db, "%s", xf_test_tmp("vocab.db"));
    xf_test_remove_db(db);
    ck_assert_int_eq(
        run("timeout 60 '%s' --max-ops 1 --vocab '%s' -o '%s'", tool("xfergen"), fifo, db), 2);
    xf_test_expect_contains(output, "vocabulary file: ");
    xf_test_expect_contains(output, "not a regular file (a FIFO)");
    ck_assert_int_ne(access(db, F_OK), 0);
}
END_TEST

/* 1 when path is a rules database that reads (xferdb stats exits 0). */
static int rules_db_reads(const char *path)
{
    char *keep = output;
    output = NULL;
    int ok = run("'%s' stats '%s'", tool("xferdb"), path) == 0;
    free(output);
    output = keep;
    return ok;
}

/* No output overwrites a file the run reads: the model, its rules
 * database, its cost cache (issue 30: `xfonnx roundtrip sq.onnx -o out.onnx
 * --external-data sq.onnx` and `rlflow-agent ... -o rules.db` destroyed
 * them with exit 0). Each is refused with status 2 before anything is
 * written, naming the file. */
START_TEST(outputs_never_overwrite_inputs)
{
    char out[4096], base[256];
    snprintf(out, sizeof out, "%s", xf_test_tmp("out.onnx"));
    const char *slash = strrchr(model_path, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : model_path);
    ck_assert_int_eq(run("'%s' roundtrip '%s' -o '%s' --external-data '%s'", tool("xfonnx"),
                         model_path, out, base),
                     2);
    xf_test_expect_contains(output, "is the input model of this run");
    ck_assert_int_eq(run("'%s' roundtrip '%s' -o '%s'", tool("xfonnx"), model_path, model_path),
                     2);
    ck_assert_int_eq(run("'%s' info '%s'", tool("xfonnx"), model_path), 0); /* intact */
    ck_assert_int_eq(run(AGENT " -o '%s'", tool("rlflow-agent"), db_path, model_path, db_path), 2);
    xf_test_expect_contains(output, "is the rules database of this run");
    ck_assert(rules_db_reads(db_path));
    slash = strrchr(db_path, '/');
    ck_assert_int_eq(run(AGENT " -o '%s' --external-data '%s'", tool("rlflow-agent"), db_path,
                         model_path, out, slash ? slash + 1 : db_path),
                     2);
    xf_test_expect_contains(output, "is the rules database of this run");
    ck_assert(rules_db_reads(db_path));
    ck_assert_int_eq(run("'%s' --rules '%s' '%s' --backend analytic --cache '%s' --no-latency -q "
                         "-o '%s'",
                         tool("rlflow-agent"), db_path, model_path, model_path, out),
                     2);
    xf_test_expect_contains(output, "is the input model of this run");
    ck_assert_int_eq(run("'%s' '%s' --cache '%s'", tool("xfcost"), model_path, model_path), 2);
    ck_assert_int_eq(run("'%s' info '%s'", tool("xfonnx"), model_path), 0);
    /* --save where it cannot be written: refused before training */
    ck_assert_int_eq(run(AGENT " -o '%s' --agent ppo --budget 5 --save /nonexistent/dir/a.ckpt",
                         tool("rlflow-agent"), db_path, model_path, out),
                     2);
    xf_test_expect_contains(output, "/nonexistent/dir/a.ckpt: cannot write");
    xf_test_expect_contains(output, "No such file or directory");
}
END_TEST

/* External data goes to a regular file or a new path: a device (the model
 * could no longer be read) and a FIFO (it would block) are refused. A cost
 * cache on a device is refused before SQLite writes to it; a foreign
 * SQLite file given as the cache is refused and left byte for byte as it
 * was (it was switched to WAL first). */
START_TEST(devices_and_foreign_files_are_left_alone)
{
    char out[4096], foreign[4096], cmd[8192];
    snprintf(out, sizeof out, "%s", xf_test_tmp("out.onnx"));
    const char *dev = xf_test_full_device("nuldev");
    if (dev) {
        char d[4096];
        snprintf(d, sizeof d, "%s", dev);
        ck_assert_int_ne(run("'%s' roundtrip '%s' -o '%s' --external-data nuldev",
                             tool("xfonnx"), model_path, out),
                         0);
        xf_test_expect_contains(output, "is a character device");
        ck_assert(xf_test_is_char_device(d));
        ck_assert_int_eq(run("'%s' '%s' --cache '%s'", tool("xfcost"), model_path, d), 2);
        xf_test_expect_contains(output, "is not a regular file (a character device)");
        snprintf(cmd, sizeof cmd, "%s-journal", d);
        ck_assert_int_ne(access(cmd, F_OK), 0);
        ck_assert(xf_test_is_char_device(d));
    } else {
        xf_test_skip_part("devices: cannot make a device (mknod needs root)");
    }
    const char *fifo = xf_test_fifo("data.fifo");
    if (fifo) {
        ck_assert_int_ne(run("timeout 60 '%s' roundtrip '%s' -o '%s' --external-data data.fifo",
                             tool("xfonnx"), model_path, out),
                         0);
        xf_test_expect_contains(output, "is a FIFO");
    }
    snprintf(foreign, sizeof foreign, "%s", xf_test_tmp("foreign.sqlite"));
    unlink(foreign);
    xf_test_sql_exec(foreign, "CREATE TABLE notes(a); INSERT INTO notes VALUES (1)");
    size_t n0 = 0, n1 = 0;
    char *before = xf_test_read_file(foreign, &n0);
    ck_assert_int_eq(run("'%s' '%s' --cache '%s'", tool("xfcost"), model_path, foreign), 2);
    xf_test_expect_contains(output, "not an rlflow cost cache");
    char *after = xf_test_read_file(foreign, &n1);
    ck_assert(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
    free(before);
    free(after);
}
END_TEST

/* Cached costs are checked: an entry edited to a negative, infinite or
 * textual cost (it printed "estimated cost: -39000 ms" with exit 0) is
 * measured again and replaced. `--cache none` keeps nothing in xfcost as
 * in rlflow-agent (it created a file named "none"). */
START_TEST(cached_costs_are_checked)
{
    char cache[4096];
    snprintf(cache, sizeof cache, "%s", xf_test_tmp("costs.db"));
    xf_test_remove_db(cache);
    ck_assert_int_eq(run("'%s' '%s' --cache '%s' --no-run", tool("xfcost"), model_path, cache), 0);
    const char *bad[] = {"-1000", "1e308 * 10", "'text'"};
    for (int i = 0; i < 3; i++) {
        char sql[256];
        snprintf(sql, sizeof sql, "UPDATE op_cost SET ms = %s", bad[i]);
        xf_test_sql_exec(cache, sql);
        ck_assert_int_eq(run("'%s' '%s' --cache '%s' --no-run", tool("xfcost"), model_path, cache),
                         0);
        ck_assert_msg(!strstr(output, "-1000") && !strstr(output, "cost: -") &&
                          !strstr(output, "inf ms"),
                      "%s", output);
        xf_test_expect_contains(output, "measurements: 1 new");
        ck_assert_int_eq(xf_test_sql_int(cache, "SELECT count(*) FROM op_cost WHERE typeof(ms) = "
                                                "'real' AND ms >= 0 AND ms < 1e300"),
                         1);
    }
    char none[4096];
    snprintf(none, sizeof none, "%s", xf_test_tmp("none"));
    unlink(none);
    ck_assert_int_eq(xf_test_system("cd '%s/..' && '%s' '%s' --cache none --no-run > /dev/null",
                                    none, tool("xfcost"), model_path),
                     0);
    ck_assert_int_ne(access(none, F_OK), 0);
}
END_TEST

/* One table of exit statuses (docs/cli.md), the same failure the same
 * everywhere: an empty output path is bad usage (2) in every writer (it was
 * 1 in three of them, after a whole search in rlflow-agent). */
START_TEST(empty_output_path_is_bad_usage)
{
    char cmd[8192];
    for (int k = 0; k < N_WRITERS; k++) {
        command(k, "", cmd, sizeof cmd);
        ck_assert_msg(run("%s", cmd) == 2, "%s: %s", cmd, output);
        xf_test_expect_contains(output, "needs a file name");
    }
    ck_assert_int_eq(run("'%s' report '%s' -o ''", tool("xferdb"), db_path), 2);
}
END_TEST

START_TEST(failed_report_leaves_nothing_behind)
{
    /* a `dot` that fails: the report fails after drawing started */
    char bin[4096], dir[4096];
    snprintf(bin, sizeof bin, "%s", xf_test_tmp("faildot"));
    ck_assert_int_eq(xf_test_system("mkdir -p '%s' && printf '#!/bin/sh\\nexit 1\\n' > '%s/dot' && "
                                    "chmod +x '%s/dot'",
                                    bin, bin, bin),
                     0);
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("report_new"));
    xf_test_system("rm -rf '%s'", dir);
    ck_assert_int_eq(run("PATH='%s':$PATH '%s' report '%s' -o '%s' --pictures 5", bin,
                         tool("xferdb"), db_path, dir),
                     1);
    xf_test_expect_contains(output, "'dot -Tsvg' failed");
    ck_assert_msg(access(dir, F_OK) != 0, "the failed report left %s", dir);
    /* a directory that existed keeps what it had, and gets nothing new */
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("report_old"));
    ck_assert_int_eq(xf_test_system("rm -rf '%s' && mkdir -p '%s/img' && echo mine > '%s/img/mine.svg'"
                                    " && echo old > '%s/index.html'",
                                    dir, dir, dir, dir),
                     0);
    ck_assert_int_eq(run("PATH='%s':$PATH '%s' report '%s' -o '%s' --pictures 5", bin,
                         tool("xferdb"), db_path, dir),
                     1);
    ck_assert_int_eq(run("cd '%s' && find . | sort", dir), 0);
    ck_assert_str_eq(output, ".\n./img\n./img/mine.svg\n./index.html\n");
    char page[4200];
    snprintf(page, sizeof page, "%s/index.html", dir);
    char *text = xf_test_read_file(page, NULL);
    ck_assert_str_eq(text, "old\n");
    free(text);
}
END_TEST

START_TEST(resume_on_a_new_path_creates_nothing)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", xf_test_tmp("resume_new.db"));
    xf_test_remove_db(db);
    ck_assert_int_eq(run("'%s' --max-ops 1 -o '%s' --resume --quiet", tool("xfergen"), db), 2);
    xf_test_expect_contains(output, "nothing to resume: ");
    xf_test_expect_contains(output, "No such file or directory");
    ck_assert_msg(access(db, F_OK) != 0, "--resume created %s", db);
}
END_TEST

START_TEST(nan_outputs_are_compared_by_position)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("sqrt.opt.onnx"));
    unlink(out);
    ck_assert_msg(run(AGENT " -o '%s'", tool("rlflow-agent"), db_path, nan_path, out) == 0, "%s",
                  output);
    xf_test_expect_contains(output, "written:");
    ck_assert_int_eq(access(out, F_OK), 0);
    /* the check itself: NaN where the original has NaN is equal ... */
    xf_graph a, b;
    build_unary(&a, XF_OP_SQRT);
    build_unary(&b, XF_OP_SQRT);
    xf_check_result r;
    xf_error err;
    ck_assert_int_eq(xf_interp_check(&a, &b, 1, 1e-3, 1e-4, &r, &err), XF_OK);
    ck_assert_int_eq(r.bad_output, -1);
    /* ... a number where it has NaN is not */
    xf_graph_free(&b);
    build_unary(&b, XF_OP_ABS);
    ck_assert_int_eq(xf_interp_check(&a, &b, 1, 1e-3, 1e-4, &r, &err), XF_OK);
    ck_assert_int_eq(r.bad_output, 0);
    xf_graph_free(&a);
    xf_graph_free(&b);
}
END_TEST

START_TEST(tolerances_must_be_finite_and_not_negative)
{
    static const char *const bad[] = {"inf", "nan", "-1", "1e400", "0.1x", ""};
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("tol.onnx"));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(
            run("'%s' roundtrip '%s' -o '%s' --rtol '%s'", tool("xfonnx"), model_path, out, bad[i]),
            2);
        xf_test_expect_contains(output, "--rtol needs a finite number >= 0, got '");
        ck_assert_int_eq(run(AGENT " -o '%s' --atol '%s'", tool("rlflow-agent"), db_path,
                             model_path, out, bad[i]),
                         2);
        xf_test_expect_contains(output, "--atol needs a finite number >= 0, got '");
    }
    ck_assert_int_eq(
        run("'%s' roundtrip '%s' -o '%s' --rtol 0.5 --atol 0", tool("xfonnx"), model_path, out), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tools_files");
    TCase *t = tcase_create("files");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, output_onto_a_full_device_fails_and_keeps_it);
    tcase_add_test(t, output_through_a_symlink_writes_its_target);
    tcase_add_test(t, output_onto_a_fifo_writes_through);
    tcase_add_test(t, inputs_must_be_regular_files);
    tcase_add_test(t, failed_report_leaves_nothing_behind);
    tcase_add_test(t, resume_on_a_new_path_creates_nothing);
    tcase_add_test(t, nan_outputs_are_compared_by_position);
    tcase_add_test(t, tolerances_must_be_finite_and_not_negative);
    tcase_add_test(t, outputs_never_overwrite_inputs);
    tcase_add_test(t, devices_and_foreign_files_are_left_alone);
    tcase_add_test(t, cached_costs_are_checked);
    tcase_add_test(t, empty_output_path_is_bad_usage);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
