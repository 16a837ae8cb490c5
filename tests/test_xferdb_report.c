/*
 * test_xferdb_report.c — `xferdb report` on a database generated here
 * (xfergen --vocab taso --max-ops 2; two rules then marked proved and
 * unknown through the rulesdb API so several statuses show). Checks the
 * files it writes (index.html with the counts and one data row per rule,
 * one SVG per drawn rule, the note when pictures are capped or graphviz is
 * missing), then opens the page in headless Chromium: the page's script
 * must finish (its #xferdb-ready marker is in the dumped DOM, no
 * #xferdb-error element, no console message in Chromium's log), the
 * filters given in the URL fragment must select exactly the rules the
 * rulesdb API counts, and a 1280x900 screenshot must be a real PNG.
 * Without chromium its case is skipped, without graphviz the pictures'
 * checks (XF_SKIP, xf_test_skip_part).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"

#define PICTURES 25

static char db_path[4096], out_path[4096], dir[4096];
static char *output;
static int64_t n_rules, n_pruned, n_matmul, n_matmul2;

static int64_t count(xf_rulesdb *db, int any, xf_rule_status st, const char *op, int max_size)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = any;
    f.status = st;
    const char *ops[1] = {op};
    f.ops = op ? ops : NULL;
    f.n_ops = op ? 1 : 0;
    f.max_size = max_size;
    int64_t n = 0;
    ck_assert_int_eq(xf_rulesdb_count_rules(db, &f, &n, NULL), XF_OK);
    return n;
}

static void build_db(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("report.db"));
    snprintf(out_path, sizeof out_path, "%s", xf_test_tmp("report.out"));
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("report"));
    xf_test_remove_db(db_path);
    ck_assert_int_eq(xf_test_system("'%s' --vocab taso --max-ops 2 --keep-pruned --quiet -o '%s'",
                                    xf_test_tool("xfergen"), db_path), 0);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(db_path, 0, &db, &err) == XF_OK, "%s", err.msg);
    xf_rulesdb_verdict v = {XF_RULE_PROVED, 2.0, "ewadd-comm", NULL, NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, 1, &v, &err), XF_OK);
    xf_rulesdb_verdict u = {XF_RULE_UNKNOWN, 9.0, NULL, "timeout", NULL, 0, NULL};
    ck_assert_int_eq(xf_rulesdb_set_verdict(db, 2, &u, &err), XF_OK);
    n_rules = count(db, 1, 0, NULL, 0);
    n_pruned = count(db, 0, XF_RULE_PRUNED, NULL, 0);
    n_matmul = count(db, 1, 0, "matmul", 0);
    n_matmul2 = count(db, 1, 0, "matmul", 2) - count(db, 1, 0, "matmul", 1);
    ck_assert_int_gt(n_rules, PICTURES);
    ck_assert_int_gt(n_pruned, 0);
    ck_assert_int_gt(n_matmul2, 0);
    xf_rulesdb_close(db);
}

static void read_file(const char *path)
{
    char *text = xf_test_read_file(path, NULL);
    free(output);
    output = text;
}

static int occurrences(const char *needle)
{
    int n = 0;
    for (const char *p = output; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Writes the report into `d` with `env` before the command (e.g. PATH=). */
static int report(const char *env, const char *d, int pictures)
{
    int rc = xf_test_system("rm -rf '%s' && %s '%s' report '%s' -o '%s' --pictures %d > '%s' 2>&1",
                            d, env, xf_test_tool("xferdb"), db_path, d, pictures, out_path);
    read_file(out_path);
    return rc;
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

START_TEST(test_report_files)
{
    ck_assert_int_eq(report("", dir, PICTURES), 0);
    char want[4400], page[4200];
    int dot = xf_test_have_program("dot");
    snprintf(want, sizeof want, "%s/index.html: %lld rules, %d pictures", dir, (long long)n_rules,
             dot ? PICTURES : 0);
    xf_test_expect_contains(output, want);
    snprintf(page, sizeof page, "%s/index.html", dir);
    read_file(page);
    xf_test_expect_contains(output, "<!DOCTYPE html>");
    xf_test_expect_contains(
        output,
        "<tr data-filter=\"status\" data-value=\"proved\"><td>proved</td><td class=\"n\">1</td>");
    xf_test_expect_contains(
        output,
        "<tr data-filter=\"status\" data-value=\"unknown\"><td>unknown</td><td class=\"n\">1</td>");
    snprintf(want, sizeof want, "<td>pruned</td><td class=\"n\">%lld</td>", (long long)n_pruned);
    xf_test_expect_contains(output, want);
    xf_test_expect_contains(output, "<tr data-filter=\"op\" data-value=\"matmul\">");
    xf_test_expect_contains(output, "<tr data-filter=\"size\" data-value=\"2\">");
    /* one data row per rule: [id,"status",... */
    ck_assert_int_eq(occurrences(",\"proved\","), 1);
    ck_assert_int_eq(occurrences(",\"unknown\","), 1);
    ck_assert_int_eq(occurrences(",\"pruned\","), n_pruned);
    xf_test_expect_contains(output,
                            "[1,\"proved\",1,1,1,\"ewadd\",\"ewadd(x0, x1)\",\"ewadd(x1, x0)\",");
    ck_assert_int_eq(occurrences("<script>"), 2);
    if (!dot) {
        xf_test_skip_part("graphviz's dot not found: the pictures are not checked");
        return;
    }
    snprintf(want, sizeof want, "Pictures: the first %d rules (by id) are drawn; the other %lld",
             PICTURES, (long long)(n_rules - PICTURES));
    xf_test_expect_contains(output, want);
    snprintf(want, sizeof want, "test $(ls '%s/img' | wc -l) -eq %d && test -s '%s/img/rule-1.svg' "
             "&& test -s '%s/img/rule-%d.svg' && ! test -e '%s/img/rule-%d.svg'",
             dir, PICTURES, dir, dir, PICTURES, dir, PICTURES + 1);
    ck_assert_int_eq(xf_test_system("%s", want), 0);
    snprintf(want, sizeof want, "%s/img/rule-1.svg", dir);
    read_file(want);
    xf_test_expect_contains(output, "<svg");
    xf_test_expect_contains(output, "rule 1 (proved)");
}
END_TEST

START_TEST(test_report_without_graphviz)
{
    char d[4200];
    snprintf(d, sizeof d, "%s-nodot", dir);
    ck_assert_int_eq(report("PATH=/nonexistent", d, PICTURES), 0);
    xf_test_expect_contains(output, "0 pictures (graphviz's dot not found: text forms only)");
    char page[4300];
    snprintf(page, sizeof page, "%s/index.html", d);
    read_file(page);
    xf_test_expect_contains(output, "graphviz's <code>dot</code> was not found");
    xf_test_expect_contains(
        output, "source:\\n  s0 = ewadd(x0, x1)\\n  outputs: s0\\ntarget:\\n  t0 = ewadd(x1, x0)");
    ck_assert_int_ne(access(d, F_OK), -1);
}
END_TEST

START_TEST(test_report_usage)
{
    ck_assert_int_eq(xf_test_system("'%s' report '%s' > /dev/null 2>&1", xf_test_tool("xferdb"),
                                    db_path), 2);
    ck_assert_int_eq(xf_test_system("'%s' report '%s' -o '%s' --status proved > /dev/null 2>&1",
                                    xf_test_tool("xferdb"), db_path, dir), 2);
    /* -o names an existing file: a message, exit 1 */
    ck_assert_int_eq(xf_test_system("'%s' report '%s' -o '%s' > '%s' 2>&1", xf_test_tool("xferdb"),
                                    db_path, db_path, out_path), 1);
    read_file(out_path);
    xf_test_expect_contains(output, "cannot create directory");
}
END_TEST

/* Dumps the DOM of the report opened at #fragment; checks the log. */
static void chromium_dom(const char *fragment, int64_t want_shown)
{
    char url[4400], want[256];
    snprintf(url, sizeof url, "file://%s/index.html#%s", dir, fragment);
    free(output);
    output = xf_test_chromium_dom(url);
    ck_assert_msg(!strstr(output, "<div id=\"xferdb-error\""), "script error in the page");
    snprintf(want, sizeof want, "<div id=\"xferdb-ready\" hidden=\"\" data-shown=\"%lld\" "
             "data-total=\"%lld\">", (long long)want_shown, (long long)n_rules);
    xf_test_expect_contains(output, want);
}

START_TEST(test_report_chromium)
{
    if (!xf_test_have_program("chromium")) XF_SKIP("chromium not found: no browser checks");
    ck_assert_int_eq(report("", dir, PICTURES), 0);
    chromium_dom("", n_rules);
    chromium_dom("status=pruned", n_pruned);
    chromium_dom("op=matmul&size=2", n_matmul2);
    /* the search: every rule using matmul has it in its text, no other does */
    chromium_dom("q=MatMul", n_matmul);
    chromium_dom("status=proved&open=1", 1);
    xf_test_expect_contains(output, "<tr class=\"detail\">");
    char url[4400];
    snprintf(url, sizeof url, "file://%s/index.html#open=1", dir);
    xf_test_chromium_screenshot(url, 1280, 900, 40000);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xferdb_report");
    TCase *t = tcase_create("report");
    tcase_add_unchecked_fixture(t, build_db, NULL);
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_report_files);
    tcase_add_test(t, test_report_without_graphviz);
    tcase_add_test(t, test_report_usage);
    tcase_add_test(t, test_report_chromium);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
