/*
 * test_rulesdb_open.c — opening a rules database that is not in the state a
 * writer of this build leaves it in (schema versions outside 1..K and empty
 * files are in test_rulesdb.c): a schema version 1 file read as it is read-only and migrated
 * when opened for writing; a WAL database in a read-only directory read
 * through the immutable fallback, and refused when its -wal holds changes
 * the fallback would miss; runs left `running` by a process that is gone
 * reported gone by a reader and marked interrupted by a writer's open,
 * while a live run and another host's run are left alone.
 *
 * The read-only directory: chmod does not stop root, so as root the reading
 * child drops to an unprivileged uid (nobody, 65534) first; as another user
 * the chmod alone is enough. Either way the -shm file cannot be created,
 * which is the condition the fallback exists for.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "testutil.h"

static const int64_t D22[2] = {2, 2};

/* ewadd(a, b) => ewadd(b, a), one rule. */
static void rule_comm(xf_rule *r)
{
    xf_rule_init(r);
    int a = xf_test_input(&r->src, "a", 2, D22), b = xf_test_input(&r->src, "b", 2, D22);
    int c = xf_test_input(&r->dst, "a", 2, D22), d = xf_test_input(&r->dst, "b", 2, D22);
    xf_test_out(&r->src, xf_test_op2(&r->src, XF_OP_ADD, NULL, a, b));
    xf_test_out(&r->dst, xf_test_op2(&r->dst, XF_OP_ADD, NULL, d, c));
}

/* A fresh database at path holding one proved rule. */
static void make_db(const char *path)
{
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r;
    rule_comm(&r);
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t id;
    ck_assert_msg(xf_rulesdb_add_rule(db, &r, &proved, &id, NULL, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
}

/* A schema version 1 file: version 2 only added the run owner columns,
 * version 3 the derivations (the status CHECK admitting 'derived' too is
 * left: a version 1 file never holds one). */
static void make_v1(const char *path)
{
    make_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(path, 0, &db, &err), XF_OK);
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 1", NULL, NULL, 7};
    int64_t run;
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &run, &err), XF_OK);
    xf_rulesdb_close(db);
    xf_test_sql_exec(path, "ALTER TABLE runs DROP COLUMN pid; ALTER TABLE runs DROP COLUMN host;"
                   " ALTER TABLE runs DROP COLUMN proc_start; DROP TRIGGER rules_underived;"
                   " DROP TABLE derivations; PRAGMA user_version = 1");
}

START_TEST(schema_v1_read_and_migrated)
{
    const char *path = xf_test_tmp("v1.db");
    make_v1(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_rulesdb_schema_version(db), 1);
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    ck_assert_msg(xf_rulesdb_run_get(db, 1, &info, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(info.state, XF_RUN_RUNNING);
    ck_assert_int_eq(info.pid, 0);
    ck_assert_ptr_null(info.host);
    ck_assert_int_eq(info.gone, 0); /* no owner: no telling */
    xf_rulesdb_run_info_free(&info);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), 1);

    ck_assert_msg(xf_rulesdb_open(path, 0, &db, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_rulesdb_schema_version(db), XF_RULESDB_SCHEMA_VERSION);
    xf_rulesdb_close(db);
    ck_assert_int_eq(xf_test_sql_int(path, "PRAGMA user_version"), XF_RULESDB_SCHEMA_VERSION);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM runs WHERE state = 'running'"
                                   " AND pid IS NULL"),
                     1);
}
END_TEST

/* ------------------------------------------------------ read-only directory */

/* In a child that cannot write dir: root drops to nobody (chmod does not
 * stop root). Opens path read-only and exits 0 when it holds `rules` rules,
 * 3 when the open fails with `needle` in the message (needle NULL: never),
 * 2 when privileges cannot be dropped, 4 when the unprivileged child cannot
 * reach the file, 1 otherwise. */
static int read_in_child(const char *path, int64_t rules, const char *needle)
{
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
        if (access(path, R_OK) != 0) _exit(4); /* e.g. a checkout under /root */
        xf_rulesdb *db = NULL;
        xf_error err;
        if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
            fprintf(stderr, "read_in_child: %s\n", err.msg);
            _exit(needle && strstr(err.msg, needle) ? 3 : 1);
        }
        int64_t n = -1;
        xf_status st = xf_rulesdb_count_rules(db, NULL, &n, &err);
        if (st != XF_OK) fprintf(stderr, "read_in_child: %s\n", err.msg);
        xf_rulesdb_rule_info info;
        xf_rulesdb_rule_info_init(&info);
        if (st == XF_OK) st = xf_rulesdb_get_rule(db, 1, &info, &err);
        int ok = st == XF_OK && n == rules && info.status == XF_RULE_PROVED;
        xf_rulesdb_rule_info_free(&info);
        xf_rulesdb_close(db);
        _exit(ok ? 0 : 1);
    }
    int ws = 0;
    ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
    ck_assert(WIFEXITED(ws));
    return WEXITSTATUS(ws);
}

START_TEST(readonly_directory)
{
    char dir[4096], path[4200], shm[4300], wal[4300];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("rodir"));
    snprintf(path, sizeof path, "%s/rules.db", dir);
    snprintf(shm, sizeof shm, "%s-shm", path);
    snprintf(wal, sizeof wal, "%s-wal", path);
    mkdir(dir, 0755);
    chmod(dir, 0755);
    make_db(path);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"), 1);
    ck_assert_int_ne(access(shm, F_OK), 0); /* closed cleanly: no -shm, no -wal */
    /* Readable by the unprivileged child, directory and file read-only. */
    ck_assert_int_eq(chmod(path, 0444), 0);
    ck_assert_int_eq(chmod(dir, 0555), 0);
    int rc = read_in_child(path, 1, NULL);
    chmod(dir, 0755);
    if (rc == 2) XF_SKIP("running as root and cannot drop to uid 65534");
    if (rc == 4) XF_SKIP("uid 65534 cannot reach %s (a parent directory is closed to it)", path);
    ck_assert_msg(rc == 0, "a read-only WAL database in a read-only directory was not read");
    ck_assert_int_ne(access(shm, F_OK), 0); /* nothing created */

    /* Changes in the -wal that the main file lacks: refused, not ignored. */
    chmod(path, 0644);
    sqlite3 *h = NULL;
    ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "PRAGMA wal_autocheckpoint = 0;"
                                     " UPDATE rules SET why = 'x' WHERE id = 1",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* Simulate a writer killed with its WAL in place: copy the files away
     * while the connection is open, without the -shm. */
    char copy_dir[4096], copy[4200];
    snprintf(copy_dir, sizeof copy_dir, "%s", xf_test_tmp("rodir-wal"));
    snprintf(copy, sizeof copy, "%s/rules.db", copy_dir);
    mkdir(copy_dir, 0755);
    chmod(copy_dir, 0755);
    ck_assert_int_eq(xf_test_system("rm -f '%s' '%s-wal' '%s-shm'", copy, copy, copy), 0);
    ck_assert_int_eq(xf_test_system("cp '%s' '%s' && cp '%s' '%s-wal' && chmod 444 '%s' '%s-wal'"
                                    " && chmod 555 '%s'",
                                    path, copy, wal, copy, copy, copy, copy_dir),
                     0);
    sqlite3_close(h);
    rc = read_in_child(copy, 1, "holds changes not yet in the main file");
    ck_assert_int_ne(rc, 4);
    chmod(copy_dir, 0755);
    ck_assert_msg(rc == 3, "a read-only directory with WAL content was not refused (%d)", rc);
}
END_TEST

/* ----------------------------------------------------------------- dead runs */

START_TEST(dead_runs_marked_interrupted)
{
    const char *path = xf_test_tmp("runs.db");
    make_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(path, 0, &db, &err), XF_OK);
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 1", NULL, NULL, 1};
    int64_t live, dead, other, done;
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &live, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &dead, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &other, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &done, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_run_set_state(db, done, XF_RUN_DONE, &err), XF_OK);
    xf_rulesdb_close(db);
    /* `dead`: a process that has exited (its pid is free); `other`: the
     * same pid on another host; `live`: this process. */
    int child = xf_test_dead_pid();
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE runs SET pid = %d WHERE id IN (%lld, %lld);"
             " UPDATE runs SET host = 'elsewhere.invalid' WHERE id = %lld",
             (int)child, (long long)dead, (long long)other, (long long)other);
    xf_test_sql_exec(path, sql);

    /* A reader sees it gone but writes nothing. */
    ck_assert_int_eq(xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err), XF_OK);
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    ck_assert_int_eq(xf_rulesdb_run_get(db, dead, &info, &err), XF_OK);
    ck_assert_int_eq(info.gone, 1);
    ck_assert_int_eq(info.pid, child);
    ck_assert_int_eq(xf_rulesdb_run_get(db, live, &info, &err), XF_OK);
    ck_assert_int_eq(info.gone, 0);
    ck_assert_int_eq(info.pid, getpid());
    ck_assert_int_eq(xf_rulesdb_run_get(db, other, &info, &err), XF_OK);
    ck_assert_int_eq(info.gone, 0);
    xf_rulesdb_close(db);
    snprintf(sql, sizeof sql, "SELECT state = 'running' FROM runs WHERE id = %lld",
             (long long)dead);
    ck_assert_int_eq(xf_test_sql_int(path, sql), 1);

    /* A writer's open marks it interrupted (resumable), and only it. */
    ck_assert_int_eq(xf_rulesdb_open(path, 0, &db, &err), XF_OK);
    int64_t states[4][2] = {{live, XF_RUN_RUNNING},
                            {dead, XF_RUN_INTERRUPTED},
                            {other, XF_RUN_RUNNING},
                            {done, XF_RUN_DONE}};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(xf_rulesdb_run_get(db, states[i][0], &info, &err), XF_OK);
        ck_assert_msg(info.state == (xf_run_state)states[i][1], "run %lld is %s",
                      (long long)states[i][0], xf_rulesdb_run_state_name(info.state));
        ck_assert_int_eq(info.gone, 0);
    }
    ck_assert_int_eq(xf_rulesdb_run_get(db, dead, &info, &err), XF_OK);
    ck_assert_ptr_null(info.ended); /* the time of death is unknown */
    xf_rulesdb_run_info_free(&info);
    int64_t resumable = 0;
    ck_assert_int_eq(xf_rulesdb_run_find_resumable(db, "xfergen", NULL, &resumable, &err), XF_OK);
    ck_assert_int_eq(resumable, other); /* the newest not finished */
    xf_rulesdb_close(db);
}
END_TEST

/* A file with an rlflow rules database's header but not its tables (an
 * "empty schema") is refused at open, read-only or not, naming what is
 * missing: it failed at the first query, with status 1 in some tools and 2
 * in others. */
START_TEST(header_without_tables_is_refused)
{
    const char *path = xf_test_tmp("no_tables.db");
    xf_test_remove_db(path);
    char sql[160];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d; CREATE TABLE x(a)",
             XF_RULESDB_APPLICATION_ID, XF_RULESDB_SCHEMA_VERSION);
    xf_test_sql_exec(path, sql);
    xf_rulesdb *db = NULL;
    xf_error err;
    for (int ro = 0; ro < 2; ro++) {
        ck_assert_int_eq(xf_rulesdb_open(path, ro ? XF_RULESDB_READONLY : 0, &db, &err),
                         XF_ERR_PARSE);
        ck_assert_ptr_null(db);
        xf_test_expect_contains(err.msg, "but 0 of its 6 tables");
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rulesdb_open");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, schema_v1_read_and_migrated);
    tcase_add_test(t, header_without_tables_is_refused);
    tcase_add_test(t, readonly_directory);
    tcase_add_test(t, dead_runs_marked_interrupted);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
