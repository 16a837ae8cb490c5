/*
 * test_pages.c — the pages of what an optimisation did (pages/), as a user
 * looks at them. A model of two matmuls reading one input [256,1024]
 * (weights [1024,1] each) is optimised with the fixture's rules (the
 * matmul merge, proved): its page shows the memory worked out by hand,
 * the rule applied as a proved rule with its picture, the layer-norm and
 * other hand passes only when they ran, the progress chart and no arbiter
 * table without the target; a comparison page over a greedy and a TASO
 * run has the latency and memory table, the heatmap with the rule's
 * column and the progress charts. Both pages open in headless Chromium
 * with no console message and the script's ready marker, and a screenshot
 * is a real PNG; without chromium that case skips (XF_SKIP: it is its
 * own TCase, "browser", which tests/CMakeLists.txt runs as the CTest test
 * test_pages_browser, reported skipped), without graphviz the pictures'
 * checks. A --report directory that cannot be made
 * is refused before anything runs. Twenty optimisations in one process
 * share one cost cache file (each call forgets the files it protected).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "pages/pages.h"
#include "testutil.h"

static char db_path[4096], model_path[4096], dir[4096], cmp_dir[4096];
static char *output;

/* Hand-worked memory of the model (float32). Before: a (1 MiB) alive
 * through both matmuls, each output [256,1] (1 KiB) kept to the end: peak
 * 1048576 + 2048 at the second matmul; weights 2 x 4 KiB. After the merge:
 * matmul(a, [1024,2] weight) (2 KiB) then its split into the two outputs:
 * 1048576 + 2048 at the matmul (a freed after it), then 2048 + 2048;
 * weights the one concatenated [1024,2] (8 KiB). */
#define PEAK_BEFORE "1050624"
#define WEIGHTS_BEFORE "8192"
#define PEAK_AFTER "1050624"
#define WEIGHTS_AFTER "8192"

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules.db"));
    snprintf(model_path, sizeof model_path, "%s", xf_test_tmp("model.onnx"));
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("page"));
    snprintf(cmp_dir, sizeof cmp_dir, "%s", xf_test_tmp("compare"));
    xf_fx_write_rules_db(db_path, XF_RULE_PROVED);
    xf_error err;
    xf_graph g;
    xf_graph_init(&g);
    int a = xf_fx_input(&g, "a", xf_fx_shape(2, 256, 1024, 0, 0));
    for (int j = 0; j < 2; j++) {
        int w = xf_fx_weight(&g, j ? "m2" : "m1", xf_fx_shape(2, 1024, 1, 0, 0), (uint64_t)(20 + j));
        xf_fx_output(&g, xf_fx_op(&g, XF_OP_MATMUL, NULL, a, w));
    }
    ck_assert_msg(xf_onnx_save(&g, model_path, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

static void read_file(const char *path)
{
    free(output);
    output = xf_test_read_file(path, NULL);
    ck_assert_msg(output != NULL, "%s not written", path);
}

static void optimize(const xf_optimize_options *o, const char *name, xf_optimize_report *r)
{
    char out[4200];
    snprintf(out, sizeof out, "%s", xf_test_tmp(name));
    xf_error err = {0};
    xf_optimize_report_init(r);
    ck_assert_msg(xf_optimize_file(model_path, out, o, r, &err) == XF_OK, "%s", err.msg);
}

static void page_of(const char *d)
{
    char page[4200];
    snprintf(page, sizeof page, "%s/index.html", d);
    read_file(page);
}

/* The optimisation's page of a greedy run into dir. */
static void write_page(xf_optimize_report *r)
{
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    optimize(&o, "greedy.onnx", r);
    xf_test_system("rm -rf '%s'", dir);
    xf_pages_run run = {model_path, NULL, NULL, "greedy.onnx", &o, r};
    xf_error err = {0};
    ck_assert_msg(xf_pages_optimize(dir, &run, &err) == XF_OK, "%s", err.msg);
    page_of(dir);
}

START_TEST(memory_worked_by_hand)
{
    xf_optimize_report r;
    write_page(&r);
    ck_assert_int_eq(r.n_applied, 1); /* the merge */
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_uint_eq(r.memory_before.peak_activation_bytes, strtoull(PEAK_BEFORE, NULL, 10));
    ck_assert_uint_eq(r.memory_before.weight_bytes, strtoull(WEIGHTS_BEFORE, NULL, 10));
    ck_assert_uint_eq(r.memory_after.peak_activation_bytes, strtoull(PEAK_AFTER, NULL, 10));
    ck_assert_uint_eq(r.memory_after.weight_bytes, strtoull(WEIGHTS_AFTER, NULL, 10));
    /* the page's memory table: peak activations, then weights, before and after */
    const char *t = strstr(output, "<table class=\"t\" id=\"memory\">");
    ck_assert_ptr_nonnull(t);
    const char *want[4] = {"data-bytes=\"" PEAK_BEFORE "\">1.0 MiB",
                           "data-bytes=\"" PEAK_AFTER "\">1.0 MiB",
                           "data-bytes=\"" WEIGHTS_BEFORE "\">8.0 KiB",
                           "data-bytes=\"" WEIGHTS_AFTER "\">8.0 KiB"};
    for (int i = 0; i < 4; i++) {
        const char *p = strstr(t, want[i]);
        ck_assert_msg(p != NULL, "memory table lacks %s", want[i]);
        t = p + 1; /* in this order */
    }
    xf_optimize_report_free(&r);
}
END_TEST

START_TEST(rewrites_progress_and_sources)
{
    xf_optimize_report r;
    write_page(&r);
    ck_assert_int_eq(r.n_distinct, 1);
    ck_assert_int_eq(r.applied[0].rule_id, 2);
    /* the progress: the start and the end of the search at least */
    ck_assert_int_ge(r.n_trace, 2);
    ck_assert(r.trace[0].steps == 0 && r.trace[0].seconds == 0);
    ck_assert(r.trace[r.n_trace - 1].best_ms < r.trace[0].best_ms);
    /* where: both matmuls of the input are gone, named */
    ck_assert_int_eq(r.n_replaced, 2);
    xf_test_expect_contains(output, "<tr class=\"rule\" data-rule=\"2\">");
    xf_test_expect_contains(output, "matmul(m0, m1)");
    xf_test_expect_contains(output, "<svg class=\"chart\"");
    xf_test_expect_contains(output, "2 nodes of the input (by name) are not in the model written");
    /* no hand pass ran on this model, no target: neither is shown */
    ck_assert_ptr_null(strstr(output, "badge pass"));
    ck_assert_ptr_null(strstr(output, "id=\"arbiter\""));
    char svg[4300];
    snprintf(svg, sizeof svg, "%s/img/rule-2.svg", dir);
    if (!xf_test_have_program("dot")) {
        xf_test_expect_contains(output, "graphviz's dot was not found");
        xf_test_skip_part("graphviz's dot not found: rule pictures not checked");
    } else {
        xf_test_expect_contains(output, "<span class=\"badge proved\">proved</span> rule 2");
        xf_test_expect_contains(output, "<img class=\"rule\" src=\"img/rule-2.svg\"");
        read_file(svg);
        xf_test_expect_contains(output, "<svg");
    }
    xf_optimize_report_free(&r);
}
END_TEST

/* Two runs, greedy and TASO, compared. */
static void write_compare(void)
{
    xf_optimize_options o[2] = {xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY), xf_fx_quiet_options(db_path, XF_SEARCH_TASO)};
    xf_optimize_report r[2];
    optimize(&o[0], "c0.onnx", &r[0]);
    optimize(&o[1], "c1.onnx", &r[1]);
    xf_pages_run runs[2] = {{model_path, "two-matmuls", NULL, NULL, &o[0], &r[0]},
                            {model_path, "two-matmuls", NULL, NULL, &o[1], &r[1]}};
    xf_test_system("rm -rf '%s'", cmp_dir);
    xf_error err = {0};
    ck_assert_msg(xf_pages_compare(cmp_dir, runs, 2, &err) == XF_OK, "%s", err.msg);
    xf_optimize_report_free(&r[0]);
    xf_optimize_report_free(&r[1]);
    page_of(cmp_dir);
}

START_TEST(compare_page_heatmap)
{
    write_compare();
    /* a row per method; the rule's column with one merge per method */
    xf_test_expect_contains(output, "<td>two-matmuls</td><td>greedy</td>");
    xf_test_expect_contains(output, "<td>two-matmuls</td><td>taso</td>");
    xf_test_expect_contains(output, "\">rule 2</th>");
    const char *h = strstr(output, "id=\"heatmap\"");
    ck_assert_ptr_nonnull(h);
    int cells = 0;
    for (const char *p = h; (p = strstr(p, "<td class=\"heat\" style=")); p++) cells++;
    ck_assert_int_eq(cells, 2);
    xf_test_expect_contains(output, "data-bytes=\"" PEAK_BEFORE "\"");
}
END_TEST

/* A process optimising again and again with one cost cache file (a
 * comparison, a binding): each call forgets the files it kept from being
 * overwritten when it returns, so the next may open that cache. */
START_TEST(repeated_calls_share_a_cache)
{
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    char cache[4200];
    snprintf(cache, sizeof cache, "%s", xf_test_tmp("costs.db"));
    unlink(cache);
    o.cache = cache;
    int mark = xf_outfile_protect_mark();
    for (int i = 0; i < 20; i++) { /* more than the 16 files one process may protect */
        xf_optimize_report r;
        optimize(&o, "again.onnx", &r);
        xf_optimize_report_free(&r);
        ck_assert_int_eq(xf_outfile_protect_mark(), mark);
    }
}
END_TEST

START_TEST(report_dir_refused)
{
    xf_error err = {0};
    char file[4200];
    snprintf(file, sizeof file, "%s", xf_test_tmp("a-file"));
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(xf_pages_probe(file, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "a file of that name exists");
    /* the tool says so and stops before optimising */
    char log[4200];
    snprintf(log, sizeof log, "%s", xf_test_tmp("agent.log"));
    int rc = xf_test_system("'%s' --rules '%s' '%s' -o '%s' --search greedy --report '%s' -q "
                            "> '%s' 2>&1",
                            xf_test_tool("rlflow-agent"), db_path, model_path,
                            xf_test_tmp("never.onnx"), file, log);
    ck_assert_int_eq(rc, 2);
    read_file(log);
    xf_test_expect_contains(output, "--report: cannot create directory");
    ck_assert_int_ne(access(xf_test_tmp("never.onnx"), F_OK), 0);
}
END_TEST

/* Opens DIR/index.html in headless Chromium: no console message, the
 * script's ready marker with `charts` charts, no error marker. */
static void chromium_check(const char *d, int charts)
{
    char url[4400], want[128];
    snprintf(url, sizeof url, "file://%s/index.html", d);
    free(output);
    output = xf_test_chromium_dom(url);
    ck_assert_msg(!strstr(output, "id=\"rlflow-error\""), "script error in the page");
    snprintf(want, sizeof want, "<div id=\"rlflow-ready\" hidden=\"\" data-charts=\"%d\">", charts);
    xf_test_expect_contains(output, want);
}

START_TEST(pages_open_in_chromium)
{
    if (!xf_test_have_program("chromium")) XF_SKIP("chromium not found: no browser checks");
    xf_optimize_report r;
    write_page(&r);
    xf_optimize_report_free(&r);
    chromium_check(dir, 2); /* best cost against seconds and against steps */
    write_compare();
    chromium_check(cmp_dir, 2); /* one model: its two charts */
    char url[4400];
    snprintf(url, sizeof url, "file://%s/index.html", dir);
    xf_test_chromium_screenshot(url, 1000, 800, 20000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pages");
    TCase *t = tcase_create("pages");
    tcase_add_unchecked_fixture(t, setup, NULL);
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, memory_worked_by_hand);
    tcase_add_test(t, rewrites_progress_and_sources);
    tcase_add_test(t, compare_page_heatmap);
    tcase_add_test(t, repeated_calls_share_a_cache);
    tcase_add_test(t, report_dir_refused);
    suite_add_tcase(s, t);
    /* its own CTest test (test_pages_browser), skipped without chromium */
    TCase *b = tcase_create("browser");
    tcase_add_unchecked_fixture(b, setup, NULL);
    tcase_add_checked_fixture(b, NULL, teardown);
    tcase_set_timeout(b, 240);
    tcase_add_test(b, pages_open_in_chromium);
    suite_add_tcase(s, b);
    return xf_test_run(s);
}
