/*
 * run_owner.c — telling a dead run from a live one. A run is recorded with
 * the process that runs it: pid, host name and the process's start time
 * (field 22 of /proc/PID/stat, clock ticks since boot), so a pid reused by
 * another process is not mistaken for the run. A process killed outright
 * (SIGKILL, a crash, the machine going down) leaves its run `running`;
 * when a writer opens the database, such runs of this host whose process is
 * gone are marked interrupted (they stay resumable; `ended` stays empty, the
 * time of death being unknown). Runs of other hosts
 * and runs written before schema version 2 (no owner) are never touched:
 * there is no telling whether they are alive.
 */
#include "db_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* Start time of process pid in clock ticks since boot, -1 when unknown. */
static int64_t proc_start(int64_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name (field 2) may hold spaces and ')': count after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p) return -1;
    p++;
    for (int field = 2; field < 22 && p; field++) p = strchr(p + 1, ' ');
    if (!p) return -1;
    char *end;
    long long v = strtoll(p + 1, &end, 10);
    return end == p + 1 ? -1 : v;
}

void db_run_owner_self(run_owner *o)
{
    o->pid = (int64_t)getpid();
    if (gethostname(o->host, sizeof o->host) != 0) o->host[0] = '\0';
    o->host[sizeof o->host - 1] = '\0';
    o->start = proc_start(o->pid);
}

int db_run_owner_gone(const char *host, int64_t pid, int64_t start)
{
    run_owner self;
    db_run_owner_self(&self);
    if (!host || pid <= 0 || strcmp(host, self.host) != 0) return 0;
    if (pid == self.pid) return start >= 0 && self.start >= 0 && start != self.start;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 1;
    int64_t now = proc_start(pid);
    return start >= 0 && now >= 0 && now != start;
}

xf_status db_runs_mark_dead(xf_rulesdb *db, xf_error *err)
{
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_LIVE, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    int64_t dead[64]; /* more are marked by the next writer's open */
    int n = 0, rc = SQLITE_DONE;
    while (n < 64 && (rc = sqlite3_step(s)) == SQLITE_ROW)
        if (db_run_owner_gone((const char *)sqlite3_column_text(s, 1), sqlite3_column_int64(s, 2),
                           sqlite3_column_type(s, 3) == SQLITE_NULL ? -1
                                                                    : sqlite3_column_int64(s, 3)))
            dead[n++] = sqlite3_column_int64(s, 0);
    sqlite3_reset(s);
    if (n < 64 && rc != SQLITE_DONE) return db_fail(db, err, "looking for runs left running");
    if (n == 0) return XF_OK; /* nothing to write: no write lock taken */
    xf_status st = db_op_begin(db, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < n && st == XF_OK; i++) {
        s = db_stmt(db, STMT_RUN_MARK_DEAD, err);
        if (!s) {
            st = err ? err->code : XF_ERR_IO;
            break;
        }
        sqlite3_bind_int64(s, 1, dead[i]);
        st = db_step_done(db, s, "marking a dead run interrupted", err);
    }
    return db_op_end(db, st, err);
}
