/*
 * db_sql.c — the SQLite plumbing of the rules database: the statements it
 * prepares once per handle, translation of SQLite errors into xf_error
 * messages naming the file, savepoint-based atomic writes and the public
 * batch (transaction) API.
 */
#include "db_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const stmt_sql[STMT_COUNT] = {
    [STMT_GRAPH_BY_HASH] = "SELECT id FROM graphs WHERE hash = ?1",
    [STMT_GRAPH_INSERT] = "INSERT INTO graphs (hash, n_ops, n_inputs, n_outputs, format, data, infix)"
                          " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [STMT_GRAPH_LOAD] = "SELECT format, data FROM graphs WHERE id = ?1",
    [STMT_RULE_BY_PAIR] = "SELECT id FROM rules WHERE src_graph = ?1 AND dst_graph = ?2",
    [STMT_RULE_INSERT] =
        "INSERT INTO rules (src_graph, dst_graph, input_names, n_outputs, src_ops, dst_ops, size,"
        " fingerprint, status, why, subsumed_by, run_id)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    [STMT_RULE_OP_INSERT] = "INSERT OR IGNORE INTO rule_ops (rule_id, op) VALUES (?1, ?2)",
    [STMT_RULE_LOAD] = "SELECT src_graph, dst_graph, input_names, fingerprint, status, domain"
                       " FROM rules WHERE id = ?1",
    [STMT_RULE_LOAD_V3] = "SELECT src_graph, dst_graph, input_names, fingerprint, status, NULL"
                          " FROM rules WHERE id = ?1",
    [STMT_RULE_SET_STATUS] = "UPDATE rules SET status = ?2, why = ?3, subsumed_by = ?4 WHERE id = ?1",
    [STMT_RULE_SET_VERDICT] =
        "UPDATE rules SET status = ?2, verify_ms = ?3, axioms = ?4, verdict_detail = ?5,"
        " counterexample = ?6, domain = ?7,"
        " verified_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1",
    [STMT_RUN_INSERT] =
        "INSERT INTO runs (tool, tool_version, options, input_set, vocab, seed, started, state,"
        " pid, host, proc_start)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'running',"
        " ?7, ?8, ?9)",
    [STMT_RUN_STAGE] =
        "INSERT INTO run_stages (run_id, seq, stage, seconds, count)"
        " VALUES (?1, (SELECT count(*) FROM run_stages WHERE run_id = ?1), ?2, ?3, ?4)"
        " ON CONFLICT (run_id, stage) DO UPDATE SET seconds = excluded.seconds,"
        " count = excluded.count",
    [STMT_RUN_CHECKPOINT] = "UPDATE runs SET checkpoint = ?2 WHERE id = ?1",
    [STMT_RUN_STATE] =
        "UPDATE runs SET state = ?2, ended = CASE WHEN ?2 = 'running' THEN NULL"
        " ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END,"
        " pid = CASE WHEN ?2 = 'running' THEN ?3 ELSE pid END,"
        " host = CASE WHEN ?2 = 'running' THEN ?4 ELSE host END,"
        " proc_start = CASE WHEN ?2 = 'running' THEN ?5 ELSE proc_start END WHERE id = ?1",
    [STMT_RUN_RESUMABLE] =
        "SELECT id FROM runs WHERE tool = ?1 AND state IN ('running', 'interrupted')"
        " AND (?2 IS NULL OR options = ?2) ORDER BY id DESC LIMIT 1",
    [STMT_RUN_GET] = "SELECT tool, tool_version, options, input_set, vocab, seed, started, ended,"
                     " state, checkpoint, pid, host, proc_start FROM runs WHERE id = ?1",
    [STMT_RUN_GET_V1] = "SELECT tool, tool_version, options, input_set, vocab, seed, started,"
                        " ended, state, checkpoint, NULL, NULL, NULL FROM runs WHERE id = ?1",
    [STMT_RUN_STAGES] =
        "SELECT stage, seconds, count FROM run_stages WHERE run_id = ?1 ORDER BY seq",
    [STMT_RUN_RECENT] = "SELECT id FROM runs ORDER BY id DESC LIMIT ?1",
    [STMT_RUN_LIVE] = "SELECT id, host, pid, proc_start FROM runs WHERE state = 'running'",
    [STMT_RUN_MARK_DEAD] = "UPDATE runs SET state = 'interrupted' WHERE id = ?1 AND state = 'running'",
    [STMT_DERIV_DELETE] = "DELETE FROM derivations WHERE rule_id = ?1",
    [STMT_DERIV_INSERT] =
        "INSERT INTO derivations (rule_id, step, by_rule, direction, location, side)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [STMT_DERIV_LOAD] = "SELECT by_rule, direction, location, side FROM derivations"
                        " WHERE rule_id = ?1 ORDER BY step",
};

/* SQLite out of memory is ours too: XF_ERR_NOMEM, like any allocation. */
static xf_status code_of(int sqlite_rc)
{
    return (sqlite_rc & 0xff) == SQLITE_NOMEM ? XF_ERR_NOMEM : XF_ERR_IO;
}

xf_status db_fail(xf_rulesdb *db, xf_error *err, const char *what)
{
    return XF_FAIL(err, code_of(sqlite3_errcode(db->h)), "%s: %s: %s", db->path, what,
                   sqlite3_errmsg(db->h));
}

sqlite3_stmt *db_stmt(xf_rulesdb *db, stmt_id id, xf_error *err)
{
    sqlite3_stmt *s = db->stmts[id];
    if (!s) {
        if (sqlite3_prepare_v3(db->h, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) !=
            SQLITE_OK) {
            db_fail(db, err, "preparing a statement");
            return NULL;
        }
        db->stmts[id] = s;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return s;
}

void db_stmts_free(xf_rulesdb *db)
{
    for (int i = 0; i < STMT_COUNT; i++) {
        sqlite3_finalize(db->stmts[i]);
        db->stmts[i] = NULL;
    }
}

xf_status db_exec(xf_rulesdb *db, const char *sql, xf_error *err)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db->h, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) {
        xf_status st =
            XF_FAIL(err, code_of(rc), "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return st;
    }
    return XF_OK;
}

xf_status db_step_done(xf_rulesdb *db, sqlite3_stmt *s, const char *what, xf_error *err)
{
    int rc = sqlite3_step(s);
    xf_status st = rc == SQLITE_DONE ? XF_OK : db_fail(db, err, what);
    sqlite3_reset(s);
    return st;
}

int db_bind_text_or_null(sqlite3_stmt *s, int col, const char *text)
{
    return text ? sqlite3_bind_text(s, col, text, -1, SQLITE_STATIC) : sqlite3_bind_null(s, col);
}

char *db_column_strdup(sqlite3_stmt *s, int col, int *oom)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    if (!t) return NULL;
    size_t n = (size_t)sqlite3_column_bytes(s, col);
    char *c = xf_malloc(n + 1);
    if (!c) {
        *oom = 1;
        return NULL;
    }
    memcpy(c, t, n);
    c[n] = '\0';
    return c;
}

uint8_t *db_column_blobdup(sqlite3_stmt *s, int col, size_t *len, int *oom)
{
    *len = 0;
    const void *b = sqlite3_column_blob(s, col);
    int n = sqlite3_column_bytes(s, col);
    if (!b || n <= 0) return NULL;
    uint8_t *c = xf_malloc((size_t)n);
    if (!c) {
        *oom = 1;
        return NULL;
    }
    memcpy(c, b, (size_t)n);
    *len = (size_t)n;
    return c;
}

/* ------------------------------------------------------ atomic operations */

xf_status db_op_begin(xf_rulesdb *db, xf_error *err)
{
    if (db->readonly)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: opened read-only, cannot write", db->path);
    return db_exec(db, "SAVEPOINT xf_op", err);
}

xf_status db_op_end(xf_rulesdb *db, xf_status st, xf_error *err)
{
    if (st == XF_OK) return db_exec(db, "RELEASE xf_op", err);
    /* Keep the first error; the rollback's own failure would only hide it. */
    sqlite3_exec(db->h, "ROLLBACK TO xf_op; RELEASE xf_op", NULL, NULL, NULL);
    return st;
}

/* ---------------------------------------------------------------- batches */

xf_status xf_rulesdb_begin(xf_rulesdb *db, xf_error *err)
{
    if (db->readonly)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: opened read-only, cannot write", db->path);
    if (db->in_batch)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: a batch is already open (commit it first)",
                       db->path);
    xf_status st = db_exec(db, "BEGIN IMMEDIATE", err);
    if (st != XF_OK) return st;
    db->in_batch = 1;
    db->batch_writes = 0;
    return XF_OK;
}

xf_status xf_rulesdb_commit(xf_rulesdb *db, xf_error *err)
{
    if (!db->in_batch)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: commit without an open batch", db->path);
    xf_status st = db_exec(db, "COMMIT", err);
    if (st != XF_OK) return st;
    db->in_batch = 0;
    db->batch_writes = 0;
    return XF_OK;
}

xf_status xf_rulesdb_rollback(xf_rulesdb *db, xf_error *err)
{
    if (!db->in_batch)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: rollback without an open batch", db->path);
    db->in_batch = 0;
    db->batch_writes = 0;
    return db_exec(db, "ROLLBACK", err);
}

int xf_rulesdb_in_batch(const xf_rulesdb *db)
{
    return db->in_batch;
}

int64_t xf_rulesdb_batch_writes(const xf_rulesdb *db)
{
    return db->in_batch ? db->batch_writes : 0;
}
