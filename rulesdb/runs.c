/*
 * runs.c — provenance of generator and verifier runs: what a run was asked
 * to do, when it started and ended, its per-stage timings and counts, its
 * state, the process that runs it (run_owner.c), and the checkpoint that
 * lets an interrupted run resume.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {"running", "interrupted", "done"};

const char *xf_rulesdb_run_state_name(xf_run_state s)
{
    return (int)s >= 0 && s <= XF_RUN_DONE ? state_names[s] : "invalid";
}

/* Runs a bound write statement as one atomic op; XF_ERR_INVALID if it
 * changed no row (unknown run id). */
static xf_status run_write(xf_rulesdb *db, sqlite3_stmt *s, int64_t run_id, const char *what,
                           xf_error *err)
{
    xf_status st = db_op_begin(db, err);
    if (st == XF_OK) {
        st = db_step_done(db, s, what, err);
        if (st == XF_OK && sqlite3_changes(db->h) == 0)
            st = XF_FAIL(err, XF_ERR_INVALID, "%s: no run with id %lld", db->path,
                         (long long)run_id);
        if (st == XF_OK) db->batch_writes++;
        st = db_op_end(db, st, err);
    }
    sqlite3_clear_bindings(s);
    return st;
}

/* Binds owner o (this process, kept by the caller until the step): pid,
 * host, start time at col.. */
static void bind_owner(sqlite3_stmt *s, int col, const run_owner *o)
{
    sqlite3_bind_int64(s, col, o->pid);
    sqlite3_bind_text(s, col + 1, o->host, -1, SQLITE_STATIC);
    if (o->start >= 0) sqlite3_bind_int64(s, col + 2, o->start);
}

xf_status xf_rulesdb_run_start(xf_rulesdb *db, const xf_rulesdb_run_desc *d, int64_t *run_id,
                               xf_error *err)
{
    *run_id = 0;
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_INSERT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_text(s, 1, d->tool ? d->tool : "", -1, SQLITE_STATIC);
    db_bind_text_or_null(s, 2, d->tool_version);
    db_bind_text_or_null(s, 3, d->options);
    db_bind_text_or_null(s, 4, d->input_set);
    db_bind_text_or_null(s, 5, d->vocab);
    sqlite3_bind_int64(s, 6, (sqlite3_int64)d->seed);
    run_owner o;
    db_run_owner_self(&o);
    bind_owner(s, 7, &o);
    xf_status st = run_write(db, s, 0, "recording a run", err);
    if (st == XF_OK) *run_id = sqlite3_last_insert_rowid(db->h);
    return st;
}

xf_status xf_rulesdb_run_stage(xf_rulesdb *db, int64_t run_id, const char *stage, double seconds,
                               int64_t count, xf_error *err)
{
    if (!stage || !*stage) return XF_FAIL(err, XF_ERR_INVALID, "run stage needs a name");
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_STAGE, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, stage, -1, SQLITE_STATIC);
    sqlite3_bind_double(s, 3, seconds);
    sqlite3_bind_int64(s, 4, count);
    /* A stage of an unknown run violates the foreign key: the step fails. */
    return run_write(db, s, run_id, "recording a run stage", err);
}

xf_status xf_rulesdb_run_checkpoint(xf_rulesdb *db, int64_t run_id, const void *blob, size_t len,
                                    xf_error *err)
{
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_CHECKPOINT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, run_id);
    if (blob && len) sqlite3_bind_blob64(s, 2, blob, len, SQLITE_STATIC);
    return run_write(db, s, run_id, "saving a checkpoint", err);
}

xf_status xf_rulesdb_run_set_state(xf_rulesdb *db, int64_t run_id, xf_run_state state,
                                   xf_error *err)
{
    if ((int)state < 0 || state > XF_RUN_DONE)
        return XF_FAIL(err, XF_ERR_INVALID, "run state %d is out of range", (int)state);
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_STATE, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, run_id);
    sqlite3_bind_text(s, 2, state_names[state], -1, SQLITE_STATIC);
    run_owner o;
    db_run_owner_self(&o);
    bind_owner(s, 3, &o); /* used when the run is resumed: this process runs it now */
    return run_write(db, s, run_id, "updating a run", err);
}

xf_status xf_rulesdb_run_find_resumable(xf_rulesdb *db, const char *tool, const char *options,
                                        int64_t *run_id, xf_error *err)
{
    *run_id = 0;
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_RESUMABLE, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_text(s, 1, tool ? tool : "", -1, SQLITE_STATIC);
    db_bind_text_or_null(s, 2, options);
    int rc = sqlite3_step(s);
    xf_status st = XF_OK;
    if (rc == SQLITE_ROW)
        *run_id = sqlite3_column_int64(s, 0);
    else if (rc != SQLITE_DONE)
        st = db_fail(db, err, "looking for a resumable run");
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return st;
}

void xf_rulesdb_run_info_init(xf_rulesdb_run_info *info)
{
    memset(info, 0, sizeof *info);
}

void xf_rulesdb_run_info_free(xf_rulesdb_run_info *info)
{
    xf_free(info->tool);
    xf_free(info->tool_version);
    xf_free(info->options);
    xf_free(info->input_set);
    xf_free(info->vocab);
    xf_free(info->started);
    xf_free(info->ended);
    xf_free(info->host);
    for (int i = 0; i < info->n_stages; i++) xf_free(info->stages[i].name);
    xf_free(info->stages);
    xf_free(info->checkpoint);
    xf_rulesdb_run_info_init(info);
}

static xf_status read_stages(xf_rulesdb *db, int64_t run_id, xf_rulesdb_run_info *info,
                             xf_error *err)
{
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_STAGES, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, run_id);
    int cap = 0, rc, oom = 0;
    xf_status st = XF_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (info->n_stages == cap) {
            cap = cap ? cap * 2 : 8;
            xf_rulesdb_stage *v = xf_realloc(info->stages, sizeof *v * (size_t)cap);
            if (!v) {
                oom = 1;
                break;
            }
            info->stages = v;
        }
        xf_rulesdb_stage *g = &info->stages[info->n_stages];
        g->name = db_column_strdup(s, 0, &oom);
        if (oom) break;
        g->seconds = sqlite3_column_double(s, 1);
        g->count = sqlite3_column_int64(s, 2);
        info->n_stages++;
    }
    if (oom)
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading run %lld", (long long)run_id);
    else if (rc != SQLITE_DONE)
        st = db_fail(db, err, "reading run stages");
    sqlite3_reset(s);
    return st;
}

xf_status xf_rulesdb_run_get(xf_rulesdb *db, int64_t run_id, xf_rulesdb_run_info *info,
                             xf_error *err)
{
    xf_rulesdb_run_info_free(info);
    sqlite3_stmt *s = db_stmt(db, db->version >= 2 ? STMT_RUN_GET : STMT_RUN_GET_V1, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, run_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_reset(s);
        if (rc == SQLITE_DONE)
            return XF_FAIL(err, XF_ERR_INVALID, "%s: no run with id %lld", db->path,
                           (long long)run_id);
        return db_fail(db, err, "reading a run");
    }
    int oom = 0;
    info->id = run_id;
    info->tool = db_column_strdup(s, 0, &oom);
    info->tool_version = db_column_strdup(s, 1, &oom);
    info->options = db_column_strdup(s, 2, &oom);
    info->input_set = db_column_strdup(s, 3, &oom);
    info->vocab = db_column_strdup(s, 4, &oom);
    info->seed = (uint64_t)sqlite3_column_int64(s, 5);
    info->started = db_column_strdup(s, 6, &oom);
    info->ended = db_column_strdup(s, 7, &oom);
    const char *state = (const char *)sqlite3_column_text(s, 8);
    for (int i = 0; i <= XF_RUN_DONE; i++)
        if (state && strcmp(state, state_names[i]) == 0) info->state = (xf_run_state)i;
    info->checkpoint = db_column_blobdup(s, 9, &info->checkpoint_len, &oom);
    info->pid = sqlite3_column_int64(s, 10);
    info->host = db_column_strdup(s, 11, &oom);
    info->gone = info->state == XF_RUN_RUNNING &&
                 db_run_owner_gone(info->host, info->pid,
                                sqlite3_column_type(s, 12) == SQLITE_NULL
                                    ? -1
                                    : sqlite3_column_int64(s, 12));    sqlite3_reset(s);
    xf_status st = oom ? XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading run %lld",
                                 (long long)run_id)
                       : read_stages(db, run_id, info, err);
    if (st != XF_OK) xf_rulesdb_run_info_free(info);
    return st;
}

xf_status xf_rulesdb_run_recent(xf_rulesdb *db, int64_t *ids, int max, int *n, xf_error *err)
{
    *n = 0;
    sqlite3_stmt *s = db_stmt(db, STMT_RUN_RECENT, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int(s, 1, max);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && *n < max) ids[(*n)++] = sqlite3_column_int64(s, 0);
    xf_status st = rc == SQLITE_DONE || rc == SQLITE_ROW ? XF_OK : db_fail(db, err, "listing runs");
    sqlite3_reset(s);
    return st;
}
