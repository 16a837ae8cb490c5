/*
 * test_default_rules.c — the default rules database (optimize.h): made in
 * the user cache ($XDG_CACHE_HOME/rlflow) when found nowhere, with
 * progress, and holding proved rules; found there the second time; found
 * first in a directory given (the build's, a package's), a killed
 * maker's temporary files removed when it is made there; not made with
 * make 0, the error naming where it looked; a file of another key (another
 * operator count) never used; two processes asking at once make it once
 * (the second waits on the lock and uses the first's); a cache that cannot
 * be created named in the error. The databases are made at one operator
 * (max_ops 1, seconds) instead of XF_DEFAULT_RULES_OPS: the same code path
 * with a smaller enumeration. rlflow-agent without --rules is tested in
 * test_rlflow_agent.c, the Python package in tests/python.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "optimize/optimize.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

static char cache[4096];

static int lines;
static char last_line[512];

static void on_progress(void *user, const char *line)
{
    (void)user;
    if (*line) {
        lines++;
        snprintf(last_line, sizeof last_line, "%s", line);
    }
}

/* A fresh cache directory as XDG_CACHE_HOME; *o at one operator. */
static void fresh(const char *name, xf_default_rules_options *o)
{
    snprintf(cache, sizeof cache, "%s", xf_test_tmp(name));
    xf_test_system("rm -rf '%s'", cache);
    ck_assert_int_eq(mkdir(cache, 0755), 0);
    setenv("XDG_CACHE_HOME", cache, 1);
    xf_default_rules_options_init(o);
    o->max_ops = 1;
    o->jobs = 2;
    o->progress = on_progress;
    lines = 0;
}

static int64_t proved_in(const char *path)
{
    return xf_test_sql_int(path, "SELECT COUNT(*) FROM rules WHERE status IN ('proved', 'derived')");
}

START_TEST(test_made_then_cached)
{
    xf_default_rules_options o;
    fresh("made", &o);
    char path[4096], name[256], want[4400];
    xf_default_rules_origin origin;
    xf_error err = {0};
    ck_assert_int_eq(xf_default_rules_name(&o, name, sizeof name, &err), XF_OK);
    ck_assert_msg(strncmp(name, "rules-default-", 14) == 0 && strstr(name, "-1ops-"), "%s", name);
    ck_assert_int_eq(xf_default_rules_find(&o, path, sizeof path, &origin, &err), XF_OK);
    ck_assert_int_eq(origin, XF_DEFAULT_RULES_MADE);
    snprintf(want, sizeof want, "%s/rlflow/%s", cache, name);
    ck_assert_str_eq(path, want);
    ck_assert_int_gt(lines, 0);
    xf_test_expect_contains(last_line, "default rules: ");
    ck_assert_int_gt(proved_in(path), 0);
    /* no temporary file left beside it */
    ck_assert_int_eq(xf_test_system("ls '%s/rlflow' | grep -q tmp-", cache) == 0, 0);
    lines = 0;
    ck_assert_int_eq(xf_default_rules_find(&o, path, sizeof path, &origin, &err), XF_OK);
    ck_assert_int_eq(origin, XF_DEFAULT_RULES_CACHED);
    ck_assert_str_eq(path, want);
    ck_assert_int_eq(lines, 0);
    /* the 3-operator database has another name: not this one */
    xf_default_rules_options three;
    xf_default_rules_options_init(&three);
    three.make = 0;
    ck_assert_int_eq(xf_default_rules_find(&three, path, sizeof path, &origin, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "no default rules database rules-default-");
    snprintf(want, sizeof want, "nor in %s/rlflow", cache);
    xf_test_expect_contains(err.msg, want);
    xf_test_expect_contains(err.msg, "rlflow-agent --make-rules");
}
END_TEST

START_TEST(test_found_in_dir_first)
{
    xf_default_rules_options o;
    fresh("dirs", &o);
    char dir[4096], path[4096], made_path[4096], want[4400];
    snprintf(dir, sizeof dir, "%s/pkg", cache);
    int made = 0;
    xf_error err = {0};
    /* a killed maker's temporary files are removed when it is made */
    char name[256];
    ck_assert_int_eq(xf_default_rules_name(&o, name, sizeof name, &err), XF_OK);
    ck_assert_int_eq(xf_test_system("mkdir -p '%s' && touch '%s/%s.tmp-99999' "
                                    "'%s/%s.tmp-99999-wal'", dir, dir, name, dir, name), 0);
    ck_assert_int_eq(xf_default_rules_make_in(dir, &o, made_path, sizeof made_path, &made, &err),
                     XF_OK);
    ck_assert_int_eq(made, 1);
    ck_assert_int_eq(xf_test_system("ls '%s' | grep -q tmp-", dir) == 0, 0);
    ck_assert_int_eq(xf_default_rules_make_in(dir, &o, path, sizeof path, &made, &err), XF_OK);
    ck_assert_int_eq(made, 0);
    ck_assert_str_eq(path, made_path);
    const char *dirs[] = {NULL, "/nonexistent-rlflow-dir", dir};
    o.dirs = dirs;
    o.n_dirs = 3;
    o.make = 0;
    xf_default_rules_origin origin;
    ck_assert_int_eq(xf_default_rules_find(&o, path, sizeof path, &origin, &err), XF_OK);
    ck_assert_int_eq(origin, XF_DEFAULT_RULES_FOUND);
    ck_assert_str_eq(path, made_path);
    /* nothing was made in the cache */
    snprintf(want, sizeof want, "%s/rlflow", cache);
    ck_assert_int_eq(xf_test_system("ls '%s' 2>/dev/null | grep -q rules-default-", want) == 0, 0);
}
END_TEST

START_TEST(test_two_processes_make_once)
{
    xf_default_rules_options o;
    fresh("lock", &o);
    o.progress = NULL;
    pid_t kids[2];
    char results[2][4200];
    for (int i = 0; i < 2; i++) {
        snprintf(results[i], sizeof results[i], "%s/origin%d", cache, i);
        kids[i] = fork();
        ck_assert_int_ge(kids[i], 0);
        if (kids[i] == 0) {
            char path[4096];
            xf_default_rules_origin origin;
            xf_error err = {0};
            xf_status st = xf_default_rules_find(&o, path, sizeof path, &origin, &err);
            FILE *f = fopen(results[i], "w");
            if (f) {
                fprintf(f, "%d %d", (int)st, (int)origin);
                fclose(f);
            }
            _exit(st == XF_OK ? 0 : 1);
        }
    }
    int made = 0, cached = 0;
    for (int i = 0; i < 2; i++) {
        int status;
        ck_assert_int_eq(waitpid(kids[i], &status, 0), kids[i]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed", i);
        char *text = xf_test_read_file(results[i], NULL);
        int st, origin;
        ck_assert_int_eq(sscanf(text, "%d %d", &st, &origin), 2);
        free(text);
        made += origin == XF_DEFAULT_RULES_MADE;
        cached += origin == XF_DEFAULT_RULES_CACHED;
    }
    ck_assert_int_eq(made, 1);
    ck_assert_int_eq(cached, 1);
}
END_TEST

START_TEST(test_cache_unusable)
{
    xf_default_rules_options o;
    fresh("unusable", &o);
    /* XDG_CACHE_HOME is a file: the rlflow directory cannot be made */
    char file[4200];
    snprintf(file, sizeof file, "%s/file", cache);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    setenv("XDG_CACHE_HOME", file, 1);
    char path[4096];
    xf_default_rules_origin origin;
    xf_error err = {0};
    ck_assert_int_eq(xf_default_rules_find(&o, path, sizeof path, &origin, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, "no user cache directory to make it in");
    /* a directory that cannot be created is named */
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/sub", file);
    int made = 0;
    ck_assert_int_eq(xf_default_rules_make_in(dir, &o, path, sizeof path, &made, &err), XF_ERR_IO);
    xf_test_expect_contains(err.msg, dir);
}
END_TEST

/* The build's database (the rules-default target, next to the tools) holds
 * the unbatched heads' 4-operator rules besides the default vocabulary's
 * 3-operator ones: GPT's query/value and key transposes to heads in the
 * layout ONNX Runtime folds into its FusedMatMul, proved, in both
 * directions the verifier writes them. Skipped where the build made none
 * (-DXF_RULES_DEFAULT=OFF, the sanitizer build). */
START_TEST(test_build_database_holds_unbatched_heads)
{
    const char *bin = getenv("XF_BIN_DIR");
    xf_default_rules_options d;
    xf_default_rules_options_init(&d);
    char path[4400], name[256];
    xf_error err = {0};
    ck_assert_int_eq(xf_default_rules_name(&d, name, sizeof name, &err), XF_OK);
    ck_assert_msg(strstr(name, "-3ops-"), "%s", name);
    snprintf(path, sizeof path, "%s/%s", bin ? bin : ".", name);
    if (!bin || access(path, R_OK) != 0)
        XF_SKIP("the build made no default rules database %s next to the tools (%s)", name,
                bin ? bin : "XF_BIN_DIR unset");
    char list[4400];
    snprintf(list, sizeof list, "%s/list.txt", xf_test_tmp("unbatched"));
    xf_test_system("mkdir -p '%s'", xf_test_tmp("unbatched"));
    ck_assert_int_eq(xf_test_system("%s list '%s' --status proved >'%s' 2>&1", xf_test_tool("xferdb"),
                                    path, list),
                     0);
    char *text = xf_test_read_file(list, NULL);
    ck_assert_ptr_nonnull(text);
    const char *heads[2] = {
        "transpose[perm=1,2,0,3](reshape[shape=4x1x2x2](unsqueeze[axes=1](squeeze[axes=0](u0))))"
        "  =>  transpose[perm=0,2,1,3](reshape[shape=1x4x2x2](u0))",
        "transpose[perm=1,2,3,0](reshape[shape=4x1x2x2](unsqueeze[axes=1](squeeze[axes=0](u0))))"
        "  =>  transpose[perm=0,2,3,1](reshape[shape=1x4x2x2](u0))",
    };
    for (int k = 0; k < 2; k++) ck_assert_msg(strstr(text, heads[k]), "not proved in %s: %s", path, heads[k]);
    /* the default vocabulary's rules are there too, at up to 3 operators a side */
    ck_assert_int_gt(xf_test_sql_int(path, "SELECT COUNT(*) FROM rules WHERE status = 'proved' "
                                           "AND src_ops <= 3 AND dst_ops <= 3"),
                     1000);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT COUNT(*) FROM rules WHERE src_ops > 4 OR dst_ops > 4"), 0);
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("default_rules");
    TCase *tc = tcase_create("default_rules");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_made_then_cached);
    tcase_add_test(tc, test_found_in_dir_first);
    tcase_add_test(tc, test_two_processes_make_once);
    tcase_add_test(tc, test_cache_unusable);
    tcase_add_test(tc, test_build_database_holds_unbatched_heads);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
