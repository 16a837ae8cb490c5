/*
 * schema.c — the rules database schema and its migrations. PRAGMA
 * user_version holds the schema version; migrations[k] brings a database
 * from version k to k+1 inside one transaction, so adding a schema version
 * means appending one entry (and documenting it in docs/rulesdb.md). A file
 * is recognised as ours by PRAGMA application_id; an empty database (new
 * file) is initialised when the caller asked to create one (xfergen), and
 * refused otherwise; anything else foreign, and a version outside 1..K
 * (negative, or newer than this build), is refused before any migration
 * indexes the table with it. Versions only add (columns, tables, a status
 * value), so a read-only handle reads an older file as it is (db->version
 * says which statements fit it) rather than refusing a file it cannot
 * migrate.
 */
#include "db_internal.h"

#include <stdio.h>

/* The rules table's columns, with the statuses its CHECK admits: version 1
 * creates it, version 3 rebuilds it admitting one more. */
#define RULES_COLUMNS(statuses)                                                                    \
    " id INTEGER PRIMARY KEY,"                                                                     \
    " src_graph INTEGER NOT NULL REFERENCES graphs (id),"                                          \
    " dst_graph INTEGER NOT NULL REFERENCES graphs (id),"                                          \
    " input_names TEXT NOT NULL,"                                                                  \
    " n_outputs INTEGER NOT NULL,"                                                                 \
    " src_ops INTEGER NOT NULL,"                                                                   \
    " dst_ops INTEGER NOT NULL,"                                                                   \
    " size INTEGER NOT NULL,"                                                                      \
    " fingerprint INTEGER NOT NULL,"                                                               \
    " status TEXT NOT NULL CHECK (status IN (" statuses ")),"                                      \
    " why TEXT,"                                                                                   \
    " subsumed_by INTEGER REFERENCES rules (id),"                                                  \
    " run_id INTEGER REFERENCES runs (id),"                                                        \
    " verify_ms REAL,"                                                                             \
    " axioms TEXT,"                                                                                \
    " verdict_detail TEXT,"                                                                        \
    " counterexample BLOB,"                                                                        \
    " verified_at TEXT,"                                                                           \
    " UNIQUE (src_graph, dst_graph));"
#define RULES_INDEXES                                                                              \
    "CREATE INDEX rules_status ON rules (status);"                                                 \
    "CREATE INDEX rules_size ON rules (size);"

/* Version 0 -> 1: the initial schema (see docs/rulesdb.md). */
static const char schema_v1[] =
    "CREATE TABLE graphs ("
    " id INTEGER PRIMARY KEY,"
    " hash INTEGER NOT NULL UNIQUE,"
    " n_ops INTEGER NOT NULL,"
    " n_inputs INTEGER NOT NULL,"
    " n_outputs INTEGER NOT NULL,"
    " format INTEGER NOT NULL,"
    " data BLOB NOT NULL,"
    " infix TEXT NOT NULL);"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " tool TEXT NOT NULL,"
    " tool_version TEXT,"
    " options TEXT,"
    " input_set TEXT,"
    " vocab TEXT,"
    " seed INTEGER NOT NULL DEFAULT 0,"
    " started TEXT NOT NULL,"
    " ended TEXT,"
    " state TEXT NOT NULL CHECK (state IN ('running', 'interrupted', 'done')),"
    " checkpoint BLOB);"
    "CREATE TABLE run_stages ("
    " run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " stage TEXT NOT NULL,"
    " seconds REAL NOT NULL,"
    " count INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, stage));"
    "CREATE TABLE rules (" RULES_COLUMNS("'candidate', 'proved', 'refuted', 'unknown', 'pruned'")
    RULES_INDEXES
    "CREATE TABLE rule_ops ("
    " rule_id INTEGER NOT NULL REFERENCES rules (id) ON DELETE CASCADE,"
    " op TEXT NOT NULL,"
    " PRIMARY KEY (rule_id, op)) WITHOUT ROWID;"
    "CREATE INDEX rule_ops_op ON rule_ops (op, rule_id);";

/* Version 1 -> 2: who runs a run (process id, host, the process's start
 * time), so that a run whose process is gone can be told from a live one. */
static const char schema_v2[] = "ALTER TABLE runs ADD COLUMN pid INTEGER;"
                                "ALTER TABLE runs ADD COLUMN host TEXT;"
                                "ALTER TABLE runs ADD COLUMN proc_start INTEGER;";

/* Version 2 -> 3: rules may be `derived` (joined by rewriting with smaller
 * proved rules, derive/), and a derivation table holds each derived rule's
 * chain. SQLite cannot alter a CHECK constraint, so the rules table is
 * rebuilt the way SQLite documents (new table, copy, drop, rename) with
 * every column, id and index kept. Migrations run before the handle turns
 * foreign keys on (db_open.c), so dropping the old table neither cascades
 * into rule_ops nor trips the references to it; rule_ops and the rules'
 * own subsumed_by name the table "rules", which the rename restores. A
 * rule whose status changes from derived (xferverify --recheck gives it a
 * verdict) loses its derivation by trigger. */
static const char schema_v3[] =
    "CREATE TABLE rules_v3 ("
    RULES_COLUMNS("'candidate', 'proved', 'refuted', 'unknown', 'pruned', 'derived'")
    "INSERT INTO rules_v3 SELECT id, src_graph, dst_graph, input_names, n_outputs, src_ops,"
    " dst_ops, size, fingerprint, status, why, subsumed_by, run_id, verify_ms, axioms,"
    " verdict_detail, counterexample, verified_at FROM rules;"
    "DROP TABLE rules;"
    "ALTER TABLE rules_v3 RENAME TO rules;" RULES_INDEXES
    "CREATE TABLE derivations ("
    " rule_id INTEGER NOT NULL REFERENCES rules (id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL,"
    " by_rule INTEGER NOT NULL REFERENCES rules (id),"
    " direction TEXT NOT NULL CHECK (direction IN ('forward', 'backward')),"
    " location TEXT NOT NULL,"
    " side TEXT NOT NULL DEFAULT 'source' CHECK (side IN ('source', 'target')),"
    " PRIMARY KEY (rule_id, step)) WITHOUT ROWID;"
    "CREATE INDEX derivations_by_rule ON derivations (by_rule);"
    "CREATE TRIGGER rules_underived AFTER UPDATE OF status ON rules"
    " WHEN NEW.status <> 'derived' BEGIN"
    " DELETE FROM derivations WHERE rule_id = NEW.id; END;";

/* Version 3 -> 4: validity domains. A rule records where it holds
 * (`domain`: conditions on its input dims, ir/domain.c; NULL: not
 * recorded). Rules derived under version 3 were accepted without the
 * conditions of their chains (a chain that holds only at the rule's own
 * shapes made a rule that was applied everywhere): they become candidates
 * again, their chains dropped by the rules_underived trigger, and
 * xferverify derives or decides them anew. */
static const char schema_v4[] =
    "ALTER TABLE rules ADD COLUMN domain TEXT;"
    "UPDATE rules SET status = 'candidate', verify_ms = NULL, axioms = NULL,"
    " verdict_detail = NULL, counterexample = NULL, verified_at = NULL"
    " WHERE status = 'derived';";

static const char *const migrations[XF_RULESDB_SCHEMA_VERSION] = {schema_v1, schema_v2,
                                                                  schema_v3, schema_v4};

static xf_status pragma_int(xf_rulesdb *db, const char *pragma, int64_t *out, xf_error *err)
{
    sqlite3_stmt *s = NULL;
    char sql[96];
    snprintf(sql, sizeof sql, "PRAGMA %s", pragma);
    *out = 0;
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        int code = sqlite3_errcode(db->h);
        xf_status st;
        if (code == SQLITE_NOTADB)
            st = XF_FAIL(err, XF_ERR_PARSE, "%s is not an SQLite database (%s)", db->path,
                         sqlite3_errmsg(db->h));
        else
            st = db_fail(db, err, "reading the database header");
        sqlite3_finalize(s);
        return st;
    }
    *out = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return XF_OK;
}

static xf_status version_unknown(xf_rulesdb *db, int64_t version, xf_error *err)
{
    return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                   "rules database %s has schema version %lld, this build knows 1..%d%s", db->path,
                   (long long)version, XF_RULESDB_SCHEMA_VERSION,
                   version > XF_RULESDB_SCHEMA_VERSION ? " (written by a newer rlflow?)" : "");
}

/* Runs the migrations from `from` up to the current version, one
 * transaction each; re-reads the version under the write lock so two
 * processes creating the same file do not both migrate it. */
static xf_status migrate(xf_rulesdb *db, xf_error *err)
{
    for (;;) {
        xf_status st = db_exec(db, "BEGIN IMMEDIATE", err);
        if (st != XF_OK) return st;
        int64_t v = 0;
        st = pragma_int(db, "user_version", &v, err);
        if (st == XF_OK && v >= XF_RULESDB_SCHEMA_VERSION) return db_exec(db, "COMMIT", err);
        if (st == XF_OK && v < 0) st = version_unknown(db, v, err); /* changed under us */
        char sql[96];
        if (st == XF_OK) st = db_exec(db, migrations[v], err);
        if (st == XF_OK && v == 0) {
            snprintf(sql, sizeof sql, "PRAGMA application_id = %d", XF_RULESDB_APPLICATION_ID);
            st = db_exec(db, sql, err);
        }
        if (st == XF_OK) {
            snprintf(sql, sizeof sql, "PRAGMA user_version = %lld", (long long)(v + 1));
            st = db_exec(db, sql, err);
        }
        if (st == XF_OK) st = db_exec(db, "COMMIT", err);
        if (st != XF_OK) {
            sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
            xf_error_prefix(err, "migrating the schema from version %lld", (long long)v);
            return st;
        }
    }
}

/* The tables a file of `version` has (an rlflow header over other tables,
 * or a file whose tables were dropped, is refused at open rather than
 * failing at the first query). */
static xf_status tables_present(xf_rulesdb *db, int64_t version, xf_error *err)
{
    sqlite3_stmt *s = NULL;
    const char *sql = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN"
                      " ('graphs', 'rules', 'rule_ops', 'runs', 'run_stages', 'derivations')";
    if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK || sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return db_fail(db, err, "reading the schema");
    }
    int64_t n = sqlite3_column_int64(s, 0), want = version >= 3 ? 6 : 5;
    sqlite3_finalize(s);
    if (n == want) return XF_OK;
    return XF_FAIL(err, XF_ERR_PARSE,
                   "%s has an rlflow rules database's header (schema version %lld) but %lld of "
                   "its %lld tables: it is damaged, or was not written by xfergen",
                   db->path, (long long)version, (long long)n, (long long)want);
}

xf_status db_schema_check_and_migrate(xf_rulesdb *db, xf_error *err)
{
    int64_t app_id = 0, version = 0, n_objects = 0;
    xf_status st = pragma_int(db, "application_id", &app_id, err);
    if (st == XF_OK) st = pragma_int(db, "user_version", &version, err);
    if (st != XF_OK) return st;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_schema", -1, &s, NULL) != SQLITE_OK ||
        sqlite3_step(s) != SQLITE_ROW) {
        sqlite3_finalize(s);
        return db_fail(db, err, "reading the schema");
    }
    n_objects = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);

    int empty = app_id == 0 && version == 0 && n_objects == 0;
    if (!empty && app_id != XF_RULESDB_APPLICATION_ID)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s is an SQLite database but not an rlflow rules database "
                       "(application_id 0x%08llx, expected 0x%08x)",
                       db->path, (unsigned long long)(uint32_t)app_id, XF_RULESDB_APPLICATION_ID);
    if (version < 0 || version > XF_RULESDB_SCHEMA_VERSION || (version == 0 && !empty))
        return version_unknown(db, version, err);
    if (!empty) {
        st = tables_present(db, version, err);
        if (st != XF_OK) return st;
    }
    db->version = (int)version;
    if (version == XF_RULESDB_SCHEMA_VERSION) return XF_OK;
    if (empty && (db->readonly || !db->create))
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s is empty, not an rlflow rules database (xfergen creates one)", db->path);
    /* Read-only, an older version is read as it is: versions only add. */
    if (db->readonly) return XF_OK;
    db->version = XF_RULESDB_SCHEMA_VERSION;
    return migrate(db, err);
}
