/*
 * db_open.c — opening and closing a rules database: SQLite connection
 * settings (WAL journal, foreign keys, busy timeout), recognition and
 * migration of the schema (schema.c), and closing with an open batch rolled
 * back so nothing of an uncommitted batch survives.
 */
#include "db_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How long a writer waits for another process's lock before failing. */
#define BUSY_TIMEOUT_MS 10000

static xf_status configure(xf_rulesdb *db, xf_error *err)
{
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
    xf_status st = schema_check_and_migrate(db, err);
    if (st != XF_OK) return st;
    if (db->readonly) return db_exec(db, "PRAGMA foreign_keys = ON", err);
    /* journal_mode answers with a row; sqlite3_exec discards it. WAL keeps
     * readers (xferdb) working while a generator writes. */
    return db_exec(db,
                   "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                   " PRAGMA foreign_keys = ON",
                   err);
}

xf_status xf_rulesdb_open(const char *path, int flags, xf_rulesdb **out, xf_error *err)
{
    *out = NULL;
    if (!path || !*path) return XF_FAIL(err, XF_ERR_INVALID, "rules database: empty path");
    int readonly = (flags & XF_RULESDB_READONLY) != 0;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT || readonly || !(flags & XF_RULESDB_CREATE))
            return XF_FAIL(err, XF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        return XF_FAIL(err, XF_ERR_IO, "%s: not a regular file", path);
    }
    xf_rulesdb *db = xf_calloc(1, sizeof *db);
    if (!db) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory opening", path);
    db->readonly = readonly;
    db->path = xf_malloc(strlen(path) + 1);
    if (!db->path) {
        xf_free(db);
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory opening", path);
    }
    strcpy(db->path, path);
    int oflags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    xf_status st;
    if (sqlite3_open_v2(path, &db->h, oflags, NULL) != SQLITE_OK)
        st = db_fail(db, err, "cannot open");
    else
        st = configure(db, err);
    if (st != XF_OK) {
        xf_rulesdb_close(db);
        return st;
    }
    *out = db;
    return XF_OK;
}

void xf_rulesdb_close(xf_rulesdb *db)
{
    if (!db) return;
    if (db->in_batch) sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    db_stmts_free(db);
    sqlite3_close_v2(db->h); /* deferred until unfinished iterators are freed */
    xf_free(db->path);
    xf_free(db);
}

const char *xf_rulesdb_path(const xf_rulesdb *db)
{
    return db->path;
}
