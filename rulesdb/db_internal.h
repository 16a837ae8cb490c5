/*
 * db_internal.h — what the rulesdb files share behind rulesdb.h: the handle,
 * the cache of prepared statements, SQLite error translation, the
 * transaction helpers, the schema migrations and the parameter codec.
 */
#ifndef XF_RULESDB_DB_INTERNAL_H
#define XF_RULESDB_DB_INTERNAL_H

#include <sqlite3.h>

#include "rulesdb.h"

/* Statements prepared once per handle (SQL text in db_sql.c). */
typedef enum stmt_id {
    STMT_GRAPH_BY_HASH,
    STMT_GRAPH_INSERT,
    STMT_GRAPH_LOAD,
    STMT_RULE_BY_PAIR,
    STMT_RULE_INSERT,
    STMT_RULE_OP_INSERT,
    STMT_RULE_LOAD,
    STMT_RULE_LOAD_V3, /* the same on a file older than schema 4 (no domain) */
    STMT_RULE_SET_STATUS,
    STMT_RULE_SET_VERDICT,
    STMT_RUN_INSERT,
    STMT_RUN_STAGE,
    STMT_RUN_CHECKPOINT,
    STMT_RUN_STATE,
    STMT_RUN_RESUMABLE,
    STMT_RUN_GET,
    STMT_RUN_GET_V1, /* the same on a schema version 1 file (no run owner) */
    STMT_RUN_STAGES,
    STMT_RUN_RECENT,
    STMT_RUN_LIVE,
    STMT_RUN_MARK_DEAD,
    STMT_DERIV_DELETE,
    STMT_DERIV_INSERT,
    STMT_DERIV_LOAD,
    STMT_COUNT
} stmt_id;

struct xf_rulesdb {
    sqlite3 *h;
    char *path;
    int readonly;
    int create;  /* XF_RULESDB_CREATE: an empty file may be initialised */
    int version; /* the file's schema version (older only when read-only) */
    int in_batch;
    int64_t batch_writes;
    sqlite3_stmt *stmts[STMT_COUNT];
};

/* XF_ERR_IO "<path>: <what>: <sqlite message>" (XF_ERR_NOMEM when SQLite
 * ran out of memory); evaluates to the status. */
xf_status db_fail(xf_rulesdb *db, xf_error *err, const char *what);
/* The prepared statement `id`, reset and with bindings cleared; NULL with
 * *err set when it cannot be prepared. */
sqlite3_stmt *db_stmt(xf_rulesdb *db, stmt_id id, xf_error *err);
/* Runs SQL without results (several statements allowed). */
xf_status db_exec(xf_rulesdb *db, const char *sql, xf_error *err);
/* Steps a statement expecting SQLITE_DONE. */
xf_status db_step_done(xf_rulesdb *db, sqlite3_stmt *s, const char *what, xf_error *err);
/* Finalizes every cached statement. */
void db_stmts_free(xf_rulesdb *db);

/* Every public write runs between db_op_begin and db_op_end: a savepoint, which
 * opens a transaction of its own outside a batch. db_op_end releases it when
 * st is XF_OK, else rolls it back; it returns st (or its own failure). */
xf_status db_op_begin(xf_rulesdb *db, xf_error *err);
xf_status db_op_end(xf_rulesdb *db, xf_status st, xf_error *err);

/* Brings a freshly opened database to XF_RULESDB_SCHEMA_VERSION (or
 * refuses it); see schema.c. */
xf_status db_schema_check_and_migrate(xf_rulesdb *db, xf_error *err);

/* Who runs a run (run_owner.c): this process, recorded with each run. */
typedef struct run_owner {
    int64_t pid;
    char host[256];
    int64_t start; /* the process's start time (clock ticks since boot), -1: unknown */
} run_owner;

void db_run_owner_self(run_owner *o);
/* 1 when the process that owned a run is certainly gone: same host, and no
 * such pid, or a pid reused by a process that started at another time.
 * 0 for another host or a run without an owner (written before version 2). */
int db_run_owner_gone(const char *host, int64_t pid, int64_t start);
/* Marks interrupted every run left `running` whose process is gone (a
 * writer's open does this; live concurrent runs are left alone). */
xf_status db_runs_mark_dead(xf_rulesdb *db, xf_error *err);

/* Binds a possibly-NULL string / blob. Binds are SQLITE_STATIC (no copy):
 * the data must stay until the statement has been stepped, which every
 * write here does before returning. A copy could fail for want of memory,
 * and an unchecked failed bind would store NULL instead. */
int db_bind_text_or_null(sqlite3_stmt *s, int col, const char *text);
/* xf_malloc'd copy of a text column, NULL for SQL NULL; *oom set on failure. */
char *db_column_strdup(sqlite3_stmt *s, int col, int *oom);
/* xf_malloc'd copy of a blob column, NULL for SQL NULL or empty. */
uint8_t *db_column_blobdup(sqlite3_stmt *s, int col, size_t *len, int *oom);

/* ----------------------------------------------------------- byte codec */

typedef struct bytebuf {
    uint8_t *data;
    size_t len, cap;
    int oom;
} bytebuf;

void db_put_byte(bytebuf *b, uint8_t v);
void db_put_bytes(bytebuf *b, const void *p, size_t n);
void db_put_uvarint(bytebuf *b, uint64_t v);
void db_put_svarint(bytebuf *b, int64_t v);

typedef struct bytereader {
    const uint8_t *p;
    size_t len, pos;
    int bad; /* ran past the end or a varint was malformed */
} bytereader;

uint8_t db_get_byte(bytereader *r);
void db_get_bytes(bytereader *r, void *out, size_t n);
uint64_t db_get_uvarint(bytereader *r);
int64_t db_get_svarint(bytereader *r);

/* Writes the non-zero fields of `p` (all fields default to zero). */
void db_params_encode(bytebuf *b, const xf_params *p);
/* Reads what db_params_encode wrote into a default xf_params. */
xf_status db_params_decode(bytereader *r, xf_params *p, xf_error *err);

#endif
